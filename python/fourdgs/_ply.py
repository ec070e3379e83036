"""The standard 3D gaussian splat PLY in pure numpy, both directions — the same file and the same
rules as the C++ reader and writer (include/fourdgs/ply.hpp).

`binary_little_endian 1.0`, one `element vertex N` of float32 properties
    x y z [nx ny nz] f_dc_0..2 [f_rest_0..f_rest_{3K-1}] opacity scale_0..2 rot_0..3
with K = (D+1)^2 - 1 per colour component for SH degree D (f_rest channel-major), opacity as a
logit, scale as a natural log, rotation as w x y z, rgb = 0.5 + C0 * f_dc. Other scalar
properties are skipped.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Union

import numpy as np

from ._errors import Error

SH_C0 = 0.28209479177387814
_MAX_HEADER = 1 << 16
_TYPES: Dict[str, str] = {
    "char": "i1", "uchar": "u1", "int8": "i1", "uint8": "u1", "short": "<i2", "ushort": "<u2",
    "int16": "<i2", "uint16": "<u2", "int": "<i4", "uint": "<u4", "int32": "<i4",
    "uint32": "<u4", "float": "<f4", "float32": "<f4", "double": "<f8", "float64": "<f8",
}
MALFORMED, TRUNCATED, INVALID_ARGUMENT, IO = 1, 2, 5, 4


def _refuse(refusal: str, message: str, offset: Optional[int] = None, status: int = MALFORMED):
    return Error(status, refusal, message, offset)


@dataclass
class PlyCloud:
    """Gaussians of one PLY in the writer's terms: positions (N, 3), normals (N, 3), scales
    (N, 3) linear, rotations (N, 4) x y z w as stored, colors (N, 4) r g b opacity in linear
    units (not clamped: a trainer's rgb may leave [0, 1]), sh (N, 3, K) float32."""
    positions: np.ndarray
    normals: np.ndarray
    scales: np.ndarray
    rotations: np.ndarray
    colors: np.ndarray
    sh: np.ndarray
    sh_degree: int

    @property
    def count(self) -> int:
        return int(self.positions.shape[0])

    def __len__(self) -> int:
        return self.count


def read_ply(source: Union[str, "os.PathLike[str]", bytes]) -> PlyCloud:
    """Parses a binary little-endian 3DGS PLY (a path or its bytes).

    Refusals (fourdgs.Error, kind malformed unless noted): ply-not-ply, ply-ascii-format,
    ply-big-endian, ply-bad-header, ply-missing-property, ply-duplicate-property,
    ply-property-type (a splat property that is not float32), ply-sh-count, ply-truncated-body
    (kind truncated); io-error for a path that cannot be read."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, name = bytes(source), None
    else:
        name = os.fsdecode(source)
        try:
            with open(name, "rb") as f:
                data = f.read()
        except OSError as e:
            raise _refuse("io-error", f"{name}: {e.strerror}", status=IO) from None
    try:
        return _parse(data)
    except Error as e:
        if name is None:
            raise
        raise Error(e.status, e.refusal, f"{name}: {e.message}", e.offset) from None


def _parse(data: bytes) -> PlyCloud:
    text = data[:_MAX_HEADER].decode("latin-1")
    if not (text.startswith("ply\n") or text.startswith("ply\r\n")):
        raise _refuse("ply-not-ply", 'the file does not start with the line "ply"', 0)
    end_at = text.find("end_header")
    if end_at < 0:
        raise _refuse("ply-bad-header", f"no end_header line within the first {_MAX_HEADER} bytes")
    body = text.find("\n", end_at)
    if body < 0:
        raise _refuse("ply-bad-header", "the end_header line is not terminated", end_at)
    body += 1

    fields: List[tuple] = []  # (name, dtype) of the vertex element, in order
    vertex_count: Optional[int] = None
    in_vertex = format_seen = False
    at = text.find("\n") + 1
    while at < end_at:
        line_end = text.find("\n", at)
        words = text[at:line_end].replace("\r", " ").split()
        here, at = at, line_end + 1
        if not words or words[0] in ("comment", "obj_info"):
            continue
        if words[0] == "format":
            if len(words) < 3:
                raise _refuse("ply-bad-header", "malformed format line", here)
            if words[1] == "ascii":
                raise _refuse("ply-ascii-format",
                              "ASCII PLY is not read; convert it to binary_little_endian", here)
            if words[1] == "binary_big_endian":
                raise _refuse("ply-big-endian",
                              "big-endian PLY is not read; convert it to binary_little_endian", here)
            if words[1] != "binary_little_endian":
                raise _refuse("ply-bad-header", f'unknown PLY format "{words[1]}"', here)
            format_seen = True
        elif words[0] == "element":
            if len(words) != 3:
                raise _refuse("ply-bad-header", "malformed element line", here)
            if not words[2].isdigit():
                raise _refuse("ply-bad-header", f'element count "{words[2]}" is not a number', here)
            n = int(words[2])
            if words[1] == "vertex":
                if vertex_count is not None:
                    raise _refuse("ply-bad-header", "a second vertex element", here)
                vertex_count, in_vertex = n, True
            else:
                if n != 0:
                    raise _refuse("ply-bad-header", f'element "{words[1]}" with {n} rows is not a '
                                  "gaussian splat file", here)
                in_vertex = False
        elif words[0] == "property":
            if len(words) >= 2 and words[1] == "list":
                raise _refuse("ply-bad-header", "list properties are not splat properties", here)
            if len(words) != 3:
                raise _refuse("ply-bad-header", "malformed property line", here)
            if not in_vertex:
                continue
            if words[1] not in _TYPES:
                raise _refuse("ply-bad-header", f'unknown property type "{words[1]}"', here)
            if any(f[0] == words[2] for f in fields):
                raise _refuse("ply-duplicate-property", f'property "{words[2]}" appears twice', here)
            fields.append((words[2], _TYPES[words[1]]))
        else:
            raise _refuse("ply-bad-header", f'unknown header line "{text[here:line_end]}"', here)
    if not format_seen:
        raise _refuse("ply-bad-header", "no format line", 0)
    if vertex_count is None:
        raise _refuse("ply-bad-header", "no vertex element", 0)

    types = dict(fields)

    def find(name: str) -> bool:
        if name not in types:
            return False
        if types[name] != "<f4":
            raise _refuse("ply-property-type", f'property "{name}" is not float32')
        return True

    def need(name: str) -> None:
        if not find(name):
            raise _refuse("ply-missing-property", f'required property "{name}" is missing')

    for c in range(3):
        need("xyz"[c])
        need(f"f_dc_{c}")
        need(f"scale_{c}")
        find("n" + "xyz"[c])
    for c in range(4):
        need(f"rot_{c}")
    need("opacity")
    rest_count = sum(1 for f in fields if f[0].startswith("f_rest_"))
    for k in range(rest_count):
        if not find(f"f_rest_{k}"):
            raise _refuse("ply-sh-count", f"f_rest properties are not numbered 0..{rest_count - 1}: "
                          f"f_rest_{k} is missing")
    degree = next((d for d in range(4) if rest_count == 3 * ((d + 1) ** 2 - 1)), -1)
    if degree < 0:
        raise _refuse("ply-sh-count", f"{rest_count} f_rest properties is not 3 x ((D+1)^2 - 1) "
                      "for a degree D of 0..3 (0, 9, 24 or 45)")

    dtype = np.dtype(fields)
    have = len(data) - body
    if dtype.itemsize == 0 or vertex_count > have // dtype.itemsize:
        raise _refuse("ply-truncated-body", f"the header declares {vertex_count} vertices of "
                      f"{dtype.itemsize} bytes but the body holds {have} bytes", len(data),
                      status=TRUNCATED)
    v = np.frombuffer(data, dtype=dtype, count=vertex_count, offset=body)

    def stack(names: List[str]) -> np.ndarray:
        return np.stack([v[n].astype(np.float32) for n in names], axis=1) if names else \
            np.zeros((vertex_count, 0), np.float32)

    n = vertex_count
    k = (degree + 1) ** 2 - 1
    positions = stack(["x", "y", "z"])
    normals = stack(["nx", "ny", "nz"]) if "nx" in types else np.zeros((n, 3), np.float32)
    scales = np.exp(stack([f"scale_{c}" for c in range(3)]).astype(np.float64)).astype(np.float32)
    rgb = (0.5 + SH_C0 * stack([f"f_dc_{c}" for c in range(3)]).astype(np.float64)).astype(np.float32)
    opacity = (1.0 / (1.0 + np.exp(-v["opacity"].astype(np.float64)))).astype(np.float32)
    colors = np.concatenate([rgb, opacity[:, None]], axis=1)
    rotations = stack(["rot_1", "rot_2", "rot_3", "rot_0"])  # w x y z → x y z w
    sh = stack([f"f_rest_{j}" for j in range(rest_count)]).reshape(n, 3, k)
    return PlyCloud(positions, normals, scales, rotations, colors, sh, degree)


def ply_property_names(sh_degree: int) -> List[str]:
    """The property names in file order for SH degree `sh_degree` (with normals)."""
    rest = [f"f_rest_{k}" for k in range(3 * ((sh_degree + 1) ** 2 - 1))]
    return (["x", "y", "z", "nx", "ny", "nz", "f_dc_0", "f_dc_1", "f_dc_2"] + rest +
            ["opacity", "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2", "rot_3"])


def write_ply(path: Union[str, "os.PathLike[str]", None], positions, scales, rotations, colors,
              sh=None, normals=None) -> bytes:
    """Serializes gaussians as a 3DGS PLY (the inverse of read_ply: opacity written as
    logit(clamp(a, 1e-7, 1 - 1e-7)), scale as log, colour as (rgb - 0.5) / C0). Columns as in
    PlyCloud; sh (N, 3, K) or None. Writes `path` when given; returns the bytes."""
    pos = np.asarray(positions, np.float32).reshape(-1, 3)
    n = pos.shape[0]
    sh = np.zeros((n, 3, 0), np.float32) if sh is None else np.asarray(sh, np.float32).reshape(n, 3, -1)
    k = sh.shape[2]
    degree = next((d for d in range(4) if (d + 1) ** 2 - 1 == k), -1)
    if degree < 0:
        raise Error(INVALID_ARGUMENT, "input-size-mismatch",
                    f"sh has {k} coefficients per component, not (D+1)^2 - 1 for D in 0..3")
    names = ply_property_names(degree)
    try:
        scl = np.asarray(scales, np.float64).reshape(n, 3)
        rot = np.asarray(rotations, np.float32).reshape(n, 4)
        col = np.asarray(colors, np.float64).reshape(n, 4)
        nrm = np.zeros((n, 3), np.float32) if normals is None else np.asarray(normals, np.float32).reshape(n, 3)
    except ValueError as e:
        raise Error(INVALID_ARGUMENT, "input-size-mismatch", f"a column does not hold {n} gaussians: {e}") from None
    alpha = np.clip(col[:, 3], 1e-7, 1 - 1e-7)
    columns = np.concatenate([
        pos, nrm, ((col[:, :3] - 0.5) / SH_C0).astype(np.float32), sh.reshape(n, 3 * k),
        np.log(alpha / (1 - alpha)).astype(np.float32)[:, None], np.log(scl).astype(np.float32),
        rot[:, 3:4], rot[:, :3]], axis=1).astype("<f4")
    header = ("ply\nformat binary_little_endian 1.0\ncomment written by fourdgs (python)\n"
              f"element vertex {n}\n" + "".join(f"property float {p}\n" for p in names) +
              "end_header\n")
    out = header.encode("ascii") + np.ascontiguousarray(columns).tobytes()
    if path is not None:
        with open(path, "wb") as f:
            f.write(out)
    return out
