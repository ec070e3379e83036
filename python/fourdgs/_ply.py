"""The standard 3D gaussian splat PLY, both directions: the library's reader and writer (the
tools library's fourdgs/tools/ply.hpp, the ones `4dgs convert` and `4dgs extract` use, through
the C ABI's fourdgs_ply_*), with the columns as numpy arrays.

`binary_little_endian 1.0`, one `element vertex N` of float32 properties
    x y z [nx ny nz] f_dc_0..2 [f_rest_0..f_rest_{3K-1}] opacity scale_0..2 rot_0..3
with K = (D+1)^2 - 1 per colour component for SH degree D (f_rest channel-major), opacity as a
logit, scale as a natural log, rotation as w x y z, rgb = 0.5 + C0 * f_dc. Other scalar
properties are skipped.
"""
from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import Union

import numpy as np

from . import _capi as C
from ._errors import Error


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
    """Parses a binary little-endian 3DGS PLY (a path or its bytes) with the library's reader.

    Refusals (fourdgs.Error, kind malformed unless noted): ply-not-ply, ply-ascii-format,
    ply-big-endian, ply-bad-header, ply-missing-property, ply-duplicate-property,
    ply-property-type (a splat property that is not float32), ply-sh-count, ply-truncated-body
    (kind truncated); io-error for a path that cannot be read."""
    lib, handle = C.lib(), ctypes.c_void_p()
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        C.check(lib.fourdgs_ply_read_memory(None, data, len(data), ctypes.byref(handle)))
    else:
        name = os.fsencode(source)
        C.check(lib.fourdgs_ply_read_file(None, name, len(name), ctypes.byref(handle)))
    try:
        cols = C.PlyColumns()
        C.check(lib.fourdgs_ply_columns_get(handle, ctypes.byref(cols)))
        n, k = int(cols.count), int(cols.sh_per_gaussian)

        def column(pointer, per: int) -> np.ndarray:
            if n * per == 0:
                return np.zeros((n, per), np.float32)
            return np.ctypeslib.as_array(pointer, shape=(n * per,)).reshape(n, per).copy()

        return PlyCloud(column(cols.position, 3), column(cols.normal, 3), column(cols.scale, 3),
                        column(cols.rotation, 4), column(cols.color, 4),
                        column(cols.sh, k).reshape(n, 3, k // 3), int(cols.sh_degree))
    finally:
        lib.fourdgs_ply_free(handle)


def write_ply(path: Union[str, "os.PathLike[str]", None], positions, scales, rotations, colors,
              sh=None, normals=None) -> bytes:
    """Serializes gaussians as a 3DGS PLY with the library's writer (the inverse of read_ply:
    opacity written as logit(clamp(a, 1e-7, 1 - 1e-7)), scale as log, colour as
    (rgb - 0.5) / C0). Columns as in PlyCloud; sh (N, 3, K) or None. Writes `path` when given;
    returns the bytes."""
    pos = np.ascontiguousarray(np.asarray(positions, np.float32).reshape(-1, 3))
    n = pos.shape[0]
    sh = np.zeros((n, 3, 0), np.float32) if sh is None else np.asarray(sh, np.float32).reshape(n, 3, -1)
    k = sh.shape[2]
    degree = next((d for d in range(4) if (d + 1) ** 2 - 1 == k), -1)
    if degree < 0:
        raise Error(C.INVALID_ARGUMENT, "input-size-mismatch",
                    f"sh has {k} coefficients per component, not (D+1)^2 - 1 for D in 0..3")
    try:
        columns = {
            "scale": np.asarray(scales, np.float32).reshape(n, 3),
            "rotation": np.asarray(rotations, np.float32).reshape(n, 4),
            "color": np.asarray(colors, np.float32).reshape(n, 4),
            "normal": None if normals is None else np.asarray(normals, np.float32).reshape(n, 3),
        }
    except ValueError as e:
        raise Error(C.INVALID_ARGUMENT, "input-size-mismatch", f"a column does not hold {n} gaussians: {e}") from None
    columns["position"], columns["sh"] = pos, sh.reshape(n, 3 * k)
    cols = C.PlyColumns(count=n, sh_degree=degree, sh_per_gaussian=3 * k)
    kept = []  # the contiguous float32 arrays the pointers look into, alive until written
    for name, array in columns.items():
        if array is None or array.size == 0:
            continue
        array = np.ascontiguousarray(array, np.float32)
        kept.append(array)
        setattr(cols, name, array.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
    lib, size = C.lib(), ctypes.c_size_t()
    C.check(lib.fourdgs_ply_write(ctypes.byref(cols), None, 0, ctypes.byref(size)))
    buffer = ctypes.create_string_buffer(size.value)
    C.check(lib.fourdgs_ply_write(ctypes.byref(cols), buffer, size.value, ctypes.byref(size)))
    out = buffer.raw[:size.value]
    if path is not None:
        with open(path, "wb") as f:
            f.write(out)
    return out
