"""Reading: fourdgs.open → Scene; decoded blocks (State) and evaluated instants (Frame) as numpy
arrays lent by the C library."""
from __future__ import annotations

import ctypes
import io
import os
import sys
import threading
from contextlib import contextmanager
from typing import Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _capi as C
from ._errors import Error
from ._http import apply_http
from ._lend import Lender, lend
from ._types import (AXES, CAMERA_MODELS, LENGTH_UNITS, Attachment, AudioKeyframe, AudioSource,
                     AudioState, Camera, CameraKeyframe, CameraView, ChunkInfo, CoordinateFrame,
                     Dynamics, GeodeticAnchor, Header, Metadata, ObjectInfo, ObjectTrack,
                     PoseSample, Quantization, RigTrajectory, Sensor, spelling)

PathLike = Union[str, "os.PathLike[str]"]
Source = Union[PathLike, bytes, bytearray, memoryview]

BLOCK_KINDS = C.EnumNames(C.ENUM_BLOCK_KIND)  # the library's spellings
TEMPORAL_MODELS = C.EnumNames(C.ENUM_TEMPORAL_MODEL)


def sh_coefficients(sh_bytes: np.ndarray) -> np.ndarray:
    """SH bytes as the float coefficients they stand for (§6.5), float32: the library's map
    (fourdgs_sh_coefficient), looked up per byte."""
    global _sh_lookup
    if _sh_lookup is None:
        _sh_lookup = np.array(C.sh_coefficients(), dtype=np.float32)
    return _sh_lookup[np.asarray(sh_bytes, dtype=np.intp)]


_sh_lookup: Optional[np.ndarray] = None


def _tuple(values) -> tuple:
    return tuple(float(v) for v in values)


def _new_handle(create) -> int:
    handle = C.vp()
    C.check(create(None, ctypes.byref(handle)))
    return handle.value


def _new_block() -> Lender:
    lib = C.lib()
    return Lender(_new_handle(lib.fourdgs_block_create), lib.fourdgs_block_free, "decoded block")


def _new_frame() -> Lender:
    lib = C.lib()
    return Lender(_new_handle(lib.fourdgs_frame_create), lib.fourdgs_frame_free, "frame")


def _take_for_reuse(obj, kind) -> Lender:
    """The lender of `obj` (a State or Frame passed as out=), emptied for a new decode into the
    same memory. Refused when any of its arrays (or a view of one) is still referenced outside
    `obj`: decoding would change, or free, memory someone can still read."""
    if not isinstance(obj, kind):
        raise Error(C.INVALID_ARGUMENT, "invalid-argument",
                    f"out must be a fourdgs.{kind.__name__}, not {type(obj).__name__}")
    # References to an unused column: obj's attribute and getrefcount's argument. (No local
    # holds a column here, so that the traceback of the refusal does not keep one alive.)
    busy = [n for n in obj._COLUMNS if sys.getrefcount(getattr(obj, n)) > 2
            and getattr(obj, n) is not None]
    if busy:
        raise Error(C.INVALID_ARGUMENT, "state-in-use",
                    f"out.{busy[0]} (or a view of it) is still referenced: drop it, or decode "
                    "into a new object (out=None)")
    for name in obj._COLUMNS:
        setattr(obj, name, None)
    return obj._lender


class _Lent:
    """What State and Frame share: `count` rows of lent columns, and SH bytes."""

    _count = 0
    sh: np.ndarray

    def __len__(self) -> int:
        return self._count

    @property
    def count(self) -> int:
        return self._count

    def sh_coefficients(self) -> np.ndarray:
        """The SH coefficients as float32 (N, 3, K): a new array."""
        return sh_coefficients(self.sh)


class State(_Lent):
    """Decoded gaussians: the §3 state of each gaussian before evaluation at a time.

    Every column is a read-only numpy array over the library's memory (no copy), valid for as
    long as the array itself lives — it keeps the decoded block alive, whatever happens to the
    State or the Scene it came from. Shapes (N = len(state)):

        position (N, 3) float32   rest position
        scale    (N, 3) float32   linear
        rotation (N, 4) float32   unit quaternion x y z w
        color    (N, 4) float32   r g b opacity, each in [0, 1]
        motion   (N, 3) float32   units per second
        mu_t, sigma_t, win_lo, win_hi (N,) float32   sigma_t inf = never fades
        flags (N,) uint8; window_index, object_id (N,) uint32
        sh       (N, 3, K) uint8  SH bytes, K = (sh_degree + 1)^2 - 1 per colour component
        source_group, source_index (N,) int32 or None; gaussian_id (N,) uint32 or None
                                  (keyframe-delta identity)

    `kind` says what the block holds: "all" (Scene.read_all), "instant" (Scene.state_at on a
    gaussian-birth file: the chunks covering `time`), "chunk" (one chunk of a Stream),
    "state" (a keyframe-delta composed state; `chunk` describes its state chunk).
    """

    _COLUMNS = ("position", "scale", "rotation", "color", "motion", "mu_t", "sigma_t", "win_lo",
                "win_hi", "flags", "window_index", "object_id", "source_group", "source_index",
                "gaussian_id", "sh")

    def __init__(self, lender: Lender):
        self._lender = lender
        lib = C.lib()
        info = C.BlockInfo()
        C.check(lib.fourdgs_block_info_get(lender.handle, ctypes.byref(info)))
        cols = C.BlockColumns()
        C.check(lib.fourdgs_block_columns_get(lender.handle, ctypes.byref(cols)))
        n = int(cols.count)
        self.kind: str = spelling(BLOCK_KINDS, info.kind)
        self.time: Optional[float] = float(info.time) if info.kind in (2, 4) else None
        self.chunk: Optional[dict] = None
        if info.kind in (3, 4):
            self.chunk = {"offset": int(info.offset), "length": int(info.length),
                          "t0": float(info.t0), "t1": float(info.t1), "level": int(info.level)}
            if info.kind == 4:
                self.chunk.update(chunk_kind=int(info.chunk_kind), delta_mode=int(info.delta_mode),
                                  depth=int(info.depth),
                                  reference_offset=int(info.reference_offset),
                                  keyframe_offset=int(info.keyframe_offset),
                                  live_count=int(info.live_count))
                delta = info.chunk_kind == 1  # a keyframe has no groups to count
                self.chunk.update({k: int(getattr(info, k)) if delta else None
                                   for k in ("update_count", "birth_count", "death_count")})
            self.chunk["object_id_stream"] = bool(info.object_id_stream)
        self.sh_degree: int = int(cols.sh_degree)
        k = int(cols.sh_per_gaussian) // 3
        self.position = lend(lender, cols.position, (n, 3), "<f4")
        self.scale = lend(lender, cols.scale, (n, 3), "<f4")
        self.rotation = lend(lender, cols.rotation, (n, 4), "<f4")
        self.color = lend(lender, cols.color, (n, 4), "<f4")
        self.motion = lend(lender, cols.motion, (n, 3), "<f4")
        self.mu_t = lend(lender, cols.mu_t, (n,), "<f4")
        self.sigma_t = lend(lender, cols.sigma_t, (n,), "<f4")
        self.win_lo = lend(lender, cols.win_lo, (n,), "<f4")
        self.win_hi = lend(lender, cols.win_hi, (n,), "<f4")
        self.flags = lend(lender, cols.flags, (n,), "u1")
        self.window_index = lend(lender, cols.window_index, (n,), "<u4")
        self.object_id = lend(lender, cols.object_id, (n,), "<u4")  # zeros when not carried
        self.source_group = lend(lender, cols.source_group, (n,), "<i4") if cols.source_group else None
        self.source_index = lend(lender, cols.source_index, (n,), "<i4") if cols.source_index else None
        self.gaussian_id = lend(lender, cols.gaussian_id, (n,), "<u4") if cols.gaussian_id else None
        self.sh = lend(lender, cols.sh, (n, 3, k), "u1")
        self._count = n

    def __repr__(self) -> str:
        where = ""
        if self.time is not None:
            where += f" t={self.time:g}"
        if self.chunk is not None:
            where += f", chunk [{self.chunk['t0']:g}, {self.chunk['t1']:g}) at byte {self.chunk['offset']}"
        lines = [f"<fourdgs.State {self.kind}{where}: {self._count} gaussians, SH degree {self.sh_degree}"]
        if self._count:
            def vec(v) -> str:
                return "[" + ", ".join(f"{float(x):.4g}" for x in v) + "]"
            p = self.position
            lines.append(f"  position {p.shape} float32, min {vec(p.min(axis=0))} max {vec(p.max(axis=0))}")
            lines.append(f"  color (r g b opacity) mean {vec(self.color.mean(axis=0))}")
            lines.append(f"  windows {sorted(set(self.window_index.tolist()))[:8]}, "
                         f"objects {sorted(set(self.object_id.tolist()))[:8]}")
        return "\n".join(lines) + ">"


class Frame(_Lent):
    """The visible gaussians at one instant (§3 evaluated: centres moved, opacity × marginal,
    Object Tracks composed), packed. Columns are read-only numpy arrays over the library's frame
    (no copy), valid as long as each array lives:

        center (N, 3), scale (N, 3), rotation (N, 4) x y z w, color (N, 4) r g b opacity-at-t
        (float32); object_id (N,) uint32; source (N,) uint32 (each one's row in its decoded
        block); sh (N, 3, K) uint8 at sh_degree; flags (N,) uint8 (bit 0: never fades).
    unrepresentable counts the visible gaussians that have no row (a value not a finite
    float32).
    """

    _COLUMNS = ("center", "scale", "rotation", "color", "object_id", "source", "sh", "flags")

    def __init__(self, lender: Lender):
        self._lender = lender
        cols = C.FrameColumns()
        C.check(C.lib().fourdgs_frame_columns_get(lender.handle, ctypes.byref(cols)))
        n = int(cols.count)
        self.time: float = float(cols.time)
        self.sh_degree: int = int(cols.sh_degree)
        k = int(cols.sh_per_gaussian) // 3
        self.center = lend(lender, cols.center, (n, 3), "<f4")
        self.scale = lend(lender, cols.scale, (n, 3), "<f4")
        self.rotation = lend(lender, cols.rotation, (n, 4), "<f4")
        self.color = lend(lender, cols.color, (n, 4), "<f4")
        self.object_id = lend(lender, cols.object_id, (n,), "<u4")
        self.source = lend(lender, cols.source, (n,), "<u4")
        self.sh = lend(lender, cols.sh, (n, 3, k), "u1")
        self.flags = lend(lender, cols.flags, (n,), "u1")  # bit 0: never fades
        # Visible gaussians left out of the rows: a value not a finite float32 (a centre beyond
        # float32's range at this t, or a non-finite decoded value).
        self.unrepresentable: int = int(cols.unrepresentable)
        self._count = n

    def __repr__(self) -> str:
        return f"<fourdgs.Frame t={self.time:g}: {self._count} visible, SH degree {self.sh_degree}>"


def _open_options(max_sh_degree: int, verify_summary_crc: bool, decode_threads: int = 1,
                  keep_payloads: bool = False) -> C.OpenOptions:
    o = C.OpenOptions()
    C.lib().fourdgs_open_options_init_sized(ctypes.byref(o), ctypes.sizeof(o))
    o.max_sh_degree = max_sh_degree
    o.decode_threads = decode_threads
    o.verify_summary_crc = int(verify_summary_crc)
    o.keep_payloads = int(keep_payloads)
    return o


def _is_url(source: object) -> bool:
    return isinstance(source, str) and "://" in source and not os.path.exists(source)


def open(source: Source, *, max_sh_degree: int = 3, decode_threads: int = 1,  # noqa: A001
         verify_summary_crc: bool = True, http: Optional[dict] = None) -> "Scene":
    """Opens a .4dgs scene for random access (its index; fourdgs.stream reads front to back).

    Args:
        source: a path, a URL (http:// or https://: read by range requests,
            fourdgs_reader_open_url), or the file's bytes (bytes are borrowed; a bytearray or
            memoryview is copied).
        max_sh_degree: decode SH bands up to this degree (0..3).
        decode_threads: threads a decode uses (0 = all cores).
        verify_summary_crc: check the summary's CRC when the file has one.
        http: for a URL, {"headers": ["Name: value", ...], "ca_bundle": path,
            "connect_timeout_ms", "transfer_timeout_ms", "max_attempts", "verify_tls"}
            (fourdgs._http.apply_http).

    Raises:
        Error: the file's refusal (kind, identifier, message, byte offset), or io for a path or
            URL that cannot be read (for a URL: "http-status", "http-connection",
            "tls-verification-failed", ...).
    """
    options = _open_options(max_sh_degree, verify_summary_crc, decode_threads)
    _kept = apply_http(options, http)  # noqa: F841 (alive until the open call returns)
    lib = C.lib()
    handle = C.vp()
    keep = None
    if isinstance(source, (bytes, bytearray, memoryview)):
        keep = bytes(source) if not isinstance(source, bytes) else source
        C.check(lib.fourdgs_reader_open_memory(keep, len(keep), ctypes.byref(options),
                                               ctypes.byref(handle)))
        name = f"<{len(keep)} bytes>"
    elif _is_url(source):
        url = C.string_in(source)
        C.check(lib.fourdgs_reader_open_url(url, len(url), ctypes.byref(options),
                                            ctypes.byref(handle)))
        name = source
    else:
        path = os.fsencode(source)
        C.check(lib.fourdgs_reader_open_file(path, len(path), ctypes.byref(options),
                                             ctypes.byref(handle)))
        name = os.fsdecode(path)
    return Scene(handle.value, name, keep)


class _Reading:
    """A Python byte source behind fourdgs_stream_open_callbacks: a binary file object (bytes
    are read through io.BytesIO). A failure inside `read` is kept, and raised as the cause of
    the stream's io error."""

    def __init__(self, fileobj):
        self.fileobj = fileobj
        self.error: Optional[BaseException] = None
        self.callbacks = C.StreamCallbacks(None, C.STREAM_READ(self._read), C.STREAM_RELEASE())

    def _read(self, _user, buffer, length):
        try:
            f = self.fileobj
            if hasattr(f, "readinto"):
                n = f.readinto((ctypes.c_char * length).from_address(buffer))
                if n is None:  # a non-blocking source with nothing ready
                    raise BlockingIOError("the stream's file object returned no data")
                return n
            data = f.read(length)
            ctypes.memmove(buffer, data, len(data))
            return len(data)
        except BaseException as e:  # noqa: B902 (it crosses C: kept, then raised by the caller)
            self.error = e
            return -1

    def check(self, status: int) -> None:
        """C.check, with a failure of the Python source as the Error's cause."""
        try:
            C.check(status)
        except Error as e:
            if self.error is not None:
                raise e from self.error
            raise


def stream(source: Union[Source, io.IOBase], *, max_sh_degree: int = 3,
           verify_summary_crc: bool = True, keep_payloads: bool = False,
           http: Optional[dict] = None) -> "Stream":
    """Opens a .4dgs scene to read front to back, one chunk at a time (Stream.blocks()): a file
    without an index, a truncated file (every whole chunk before the cut, then Error
    "truncated"), a pipe, a download, one pass in bounded memory.

    Args:
        source: a path (read with read(2), fourdgs_stream_open_fd), a URL (http:// or https://,
            fourdgs_stream_open_url), the file's bytes, or a binary file object — sys.stdin.buffer,
            a subprocess's stdout, a socket's makefile("rb") — read as its bytes arrive
            (fourdgs_stream_open_callbacks).
        max_sh_degree: decode SH bands up to this degree (0..3).
        verify_summary_crc: check the summary's CRC at the Footer when the file has one.
        keep_payloads: keep attachment and audio payloads in memory as they pass, so that
            attachment_data() and audio_data() can answer (they pass by once otherwise).
        http: for a URL, as fourdgs.open's.

    Raises:
        Error: as fourdgs.open; the front matter is read before this returns.
    """
    options = _open_options(max_sh_degree, verify_summary_crc, keep_payloads=keep_payloads)
    _kept = apply_http(options, http)  # noqa: F841 (alive until the open call returns)
    lib = C.lib()
    handle = C.vp()
    keep = None
    if _is_url(source):
        url = C.string_in(source)
        C.check(lib.fourdgs_stream_open_url(url, len(url), ctypes.byref(options),
                                            ctypes.byref(handle)))
        name = source
    elif isinstance(source, (str, os.PathLike)):
        name = os.fsdecode(source)
        try:
            fd = os.open(source, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError as e:
            raise Error(C.IO, "io-error", f"cannot open '{name}': {e.strerror}") from e
        C.check(lib.fourdgs_stream_open_fd(fd, 1, ctypes.byref(options), ctypes.byref(handle)))
    else:
        if isinstance(source, (bytes, bytearray, memoryview)):
            name = f"<{len(source)} bytes>"
            source = io.BytesIO(source)
        else:
            name = getattr(source, "name", None) or repr(source)
        keep = _Reading(source)
        keep.check(lib.fourdgs_stream_open_callbacks(ctypes.byref(keep.callbacks),
                                                     ctypes.byref(options), ctypes.byref(handle)))
    return Stream(handle.value, str(name), keep)


class Scene:
    """An open .4dgs file. Made by fourdgs.open(); close() (or a with block) frees it.

    Everything about the file — header, quantization, windows, chunks, metadata, attachments,
    camera, audio sources, provenance (coordinate frames, sensors, rig trajectories, geodetic
    anchors), objects and their tracks — is a property; gaussians come as numpy arrays from
    read_all(), state_at(t) and evaluate(t).

    Thread safety: a scene may be used from several threads at once (each call decodes into its
    own block or frame). close() waits for calls in flight on other threads.
    """

    def __init__(self, handle: int, name: str, keep: object = None):
        self._handle: Optional[int] = handle
        self._keep = keep  # what the C handle borrows (bytes, a Python source)
        self.name = name
        self._busy = 0
        self._cond = threading.Condition()

    # -- lifetime ---------------------------------------------------------------------------

    @contextmanager
    def _use(self) -> Iterator[int]:
        with self._cond:
            if self._handle is None:
                raise Error(C.INVALID_ARGUMENT, "scene-closed", f"{self.name} has been closed")
            self._busy += 1
            handle = self._handle
        try:
            yield handle
        finally:
            with self._cond:
                self._busy -= 1
                self._cond.notify_all()

    def _release(self, handle: int) -> None:
        C.lib().fourdgs_reader_free(handle)

    def close(self) -> None:
        """Frees the reader. States and frames already returned stay valid."""
        with self._cond:
            while self._busy:
                self._cond.wait()
            handle, self._handle = self._handle, None
        if handle:
            self._release(handle)
        self._keep = None

    def __del__(self):
        if getattr(self, "_handle", None):
            self._release(self._handle)
            self._handle = None

    def __enter__(self) -> "Scene":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._handle is None:
            return f"<fourdgs.Scene {self.name} (closed)>"
        h = self.header
        return (f"<fourdgs.Scene {self.name}: {h.temporal_model}, {h.gaussian_count} gaussians, "
                f"{h.duration_sec:g} s, SH degree {h.sh_degree}, {len(self.windows)} windows>")

    # -- the file's records -----------------------------------------------------------------

    def _info(self) -> C.SceneInfo:
        i = C.SceneInfo()
        with self._use() as h:
            C.check(C.lib().fourdgs_reader_scene_info(h, ctypes.byref(i)))
        return i

    @property
    def model(self) -> str:
        """"gaussian-birth" or "keyframe-delta": the front-end the Header's temporal_model picks."""
        return TEMPORAL_MODELS[self._info().temporal_model]

    @property
    def summary_crc_verified(self) -> bool:
        """True when the Footer's summary_crc was non-zero and checked against the summary's
        bytes (for a Stream: once the end has been read)."""
        return bool(self._info().summary_crc_verified)

    @property
    def counts(self) -> dict:
        """The scene information's counts and flags (skipped records, index built by scan,
        summary CRC verified, ...) as a dict."""
        i = self._info()
        names = [n for n, _ in C.SceneInfo._fields_ if n.endswith("_count") or n.startswith(
            ("has_", "index_built", "summary_crc", "object_embedding"))]
        return {n: int(getattr(i, n)) for n in names}

    def _pairs(self, fn, count: int) -> List[Tuple[str, str]]:
        out = []
        with self._use() as h:
            for k in range(count):
                key, value = C.String(), C.String()
                C.check(fn(h, k, ctypes.byref(key), ctypes.byref(value)))
                out.append((key.text(), value.text()))
        return out

    @property
    def header(self) -> Header:
        i = self._info()
        return Header(profile=i.profile.text(), library=i.library.text(),
                      temporal_model=i.temporal_model_name.text(),
                      duration_sec=float(i.duration_sec), gaussian_count=int(i.gaussian_count),
                      cutoff=float(i.cutoff), aabb=_tuple(i.aabb), sh_degree=int(i.sh_degree),
                      flags=int(i.header_flags),
                      attributes=self._pairs(C.lib().fourdgs_reader_header_attribute,
                                             i.header_attribute_count))

    @property
    def quantization(self) -> Quantization:
        i = self._info()
        bounds = dict(self._pairs(C.lib().fourdgs_reader_quantization_bound,
                                  i.quantization_bound_count))
        return Quantization(scheme=i.quantization_scheme.text(), pos_origin=_tuple(i.pos_origin),
                            step_pos=i.step_pos, step_scale_log=i.step_scale_log,
                            step_rot=i.step_rot, step_rgb=i.step_rgb, step_alpha=i.step_alpha,
                            step_motion=i.step_motion, step_time=i.step_time,
                            step_sigma_log=i.step_sigma_log, step_sh=int(i.step_sh),
                            bounds=bounds,
                            sh_depths=tuple(int(d) for d in i.sh_depths[:i.sh_depth_count]),
                            sh_depths_malformed=bool(i.sh_depths_malformed))

    @property
    def windows(self) -> List[Tuple[float, float]]:
        """The effective Window Table (§5.4) as (lo, hi) pairs."""
        n = self._info().window_count
        out = []
        with self._use() as h:
            for k in range(n):
                lo, hi = C.dbl(), C.dbl()
                C.check(C.lib().fourdgs_reader_window(h, k, ctypes.byref(lo), ctypes.byref(hi)))
                out.append((lo.value, hi.value))
        return out

    @property
    def chunks(self) -> List[ChunkInfo]:
        """The Chunk Index (§5.8), in file order (for a Stream: once it has arrived)."""
        n = self._info().chunk_count
        out = []
        with self._use() as h:
            for k in range(n):
                c = C.ChunkInfo()
                C.check(C.lib().fourdgs_reader_chunk_info(h, k, ctypes.byref(c)))
                keyframe = None
                if c.has_keyframe_fields:
                    keyframe = {"chunk_kind": int(c.kind), "delta_mode": int(c.delta_mode),
                                "reference_offset": int(c.reference_offset),
                                "keyframe_offset": int(c.keyframe_offset),
                                "depth": int(c.depth), "live_count": int(c.live_count)}
                bands = tuple(self._triple(C.lib().fourdgs_reader_chunk_band, h, k, b)
                              for b in range(int(c.band_count)))
                out.append(ChunkInfo(k, c.t0, c.t1, int(c.offset), int(c.size),
                                     int(c.gaussian_count), int(c.fetch_bytes), int(c.kind),
                                     keyframe, bands))
        return out

    @staticmethod
    def _triple(fn, *args) -> Tuple[int, int, int]:
        code, offset, length = C.u32(), C.u64(), C.u64()
        C.check(fn(*args, ctypes.byref(code), ctypes.byref(offset), ctypes.byref(length)))
        return int(code.value), int(offset.value), int(length.value)

    @property
    def summary(self) -> dict:
        """How the file ends and how it was read: trailing_bytes (after the trailing magic),
        read_by_scan and scan_cause (the refusal id the tail gave the indexed reader, or None),
        window_table_present, the Footer's fields, the Statistics record's, the Summary Offset
        records as (opcode, start, length) and the skipped records as (opcode, offset, length).
        For a Stream: once the end has been read."""
        i = self._info()
        out = {"trailing_bytes": int(i.trailing_bytes), "read_by_scan": bool(i.read_by_scan),
               "scan_cause": i.scan_cause.text() or None,
               "window_table_present": bool(i.window_table_present),
               "footer": {"summary_start": int(i.summary_start),
                          "summary_offset_start": int(i.summary_offset_start),
                          "summary_crc": int(i.summary_crc)} if i.has_footer else None,
               "statistics": {"gaussian_count": int(i.statistics_gaussian_count),
                              "chunk_count": int(i.statistics_chunk_count),
                              "duration_sec": float(i.statistics_duration_sec),
                              "aabb": list(i.statistics_aabb)} if i.has_statistics else None}
        with self._use() as h:
            out["summary_offsets"] = [self._triple(C.lib().fourdgs_reader_summary_offset, h, k)
                                      for k in range(int(i.summary_offset_count))]
            out["skipped_records"] = [self._triple(C.lib().fourdgs_reader_skipped_record, h, k)
                                      for k in range(int(i.skipped_record_count))]
        return out

    @property
    def metadata(self) -> List[Metadata]:
        n = self._info().metadata_count
        lib = C.lib()
        out = []
        with self._use() as h:
            for r in range(n):
                name, count = C.String(), C.size_t()
                C.check(lib.fourdgs_reader_metadata(h, r, ctypes.byref(name), ctypes.byref(count)))
                entries = []
                for e in range(count.value):
                    key, value = C.String(), C.String()
                    C.check(lib.fourdgs_reader_metadata_entry(h, r, e, ctypes.byref(key),
                                                              ctypes.byref(value)))
                    entries.append((key.text(), value.text()))
                out.append(Metadata(name.text(), entries))
        return out

    def metadata_value(self, key: str) -> Optional[str]:
        """The first Metadata entry with this key, in file order, or None."""
        for record in self.metadata:
            for k, v in record.entries:
                if k == key:
                    return v
        return None

    @property
    def attachments(self) -> List[Attachment]:
        n = self._info().attachment_count
        out = []
        with self._use() as h:
            for k in range(n):
                a = C.AttachmentInfo()
                C.check(C.lib().fourdgs_reader_attachment(h, k, ctypes.byref(a)))
                out.append(Attachment(a.name.text(), a.media_type.text(), int(a.payload.offset),
                                      int(a.payload.size)))
        return out

    def _payload(self, offset: int, size: int) -> bytes:
        buf = ctypes.create_string_buffer(size)
        got = C.size_t()
        with self._use() as h:
            C.check(C.lib().fourdgs_reader_read_payload(h, C.Payload(offset, size), buf, size,
                                                        ctypes.byref(got)))
        return buf.raw[:got.value]

    def attachment_data(self, index: int) -> bytes:
        """Attachment `index`'s bytes, read from the file."""
        a = self.attachments[index]
        return self._payload(a.offset, a.size)

    @property
    def camera(self) -> Optional[Camera]:
        """The Camera record (§5.10), or None."""
        i = self._info()
        if not i.has_camera:
            return None
        lib = C.lib()
        c = C.CameraInfo()
        with self._use() as h:
            C.check(lib.fourdgs_reader_camera(h, ctypes.byref(c)))
            keys = []
            for k in range(c.keyframe_count):
                kf = C.CameraKeyframe()
                C.check(lib.fourdgs_reader_camera_keyframe(h, k, ctypes.byref(kf)))
                keys.append(CameraKeyframe(kf.time, _tuple(kf.position), _tuple(kf.target)))
        return Camera(c.fov_y_deg, _tuple(c.position), _tuple(c.target), keys,
                      c.interpolation.text(), bool(c.loop))

    def camera_at(self, t: float) -> CameraView:
        """The camera's view at scene time t (Error not-found when the file has no camera)."""
        pos, target, fov = (C.dbl * 3)(), (C.dbl * 3)(), C.dbl()
        with self._use() as h:
            C.check(C.lib().fourdgs_reader_camera_at(h, float(t), pos, target, ctypes.byref(fov)))
        return CameraView(_tuple(pos), _tuple(target), fov.value)

    @property
    def audio_sources(self) -> List[AudioSource]:
        """Audio sources in file order (§5.16)."""
        n = self._info().audio_source_count
        lib = C.lib()
        out = []
        with self._use() as h:
            for k in range(n):
                a = C.AudioSourceInfo()
                C.check(lib.fourdgs_reader_audio_source(h, k, ctypes.byref(a)))
                keys = []
                for j in range(a.keyframe_count):
                    kf = C.AudioKeyframe()
                    C.check(lib.fourdgs_reader_audio_keyframe(h, k, j, ctypes.byref(kf)))
                    keys.append(AudioKeyframe(kf.time, _tuple(kf.position), _tuple(kf.rotation)))
                out.append(AudioSource(
                    source_id=int(a.source_id), name=a.name.text(), codec=a.codec.text(),
                    channel_layout=a.channel_layout.text(), interpolation=a.interpolation.text(),
                    start_sec=a.start_sec, duration_sec=a.duration_sec, gain=a.gain,
                    flags=int(a.flags), position=_tuple(a.position), rotation=_tuple(a.rotation),
                    keyframes=keys, legacy=bool(a.legacy), offset=int(a.payload.offset),
                    size=int(a.payload.size)))
        return out

    def audio_state_at(self, index: int, t: float) -> AudioState:
        """§7: what audio source `index` (its position in audio_sources) plays at scene time t."""
        s = C.AudioState()
        with self._use() as h:
            C.check(C.lib().fourdgs_reader_audio_state_at(h, index, float(t), ctypes.byref(s)))
        return AudioState(bool(s.active), s.local_time, s.gain, _tuple(s.position),
                          _tuple(s.rotation))

    def audio_data(self, index: int) -> bytes:
        """Audio source `index`'s encoded payload."""
        a = self.audio_sources[index]
        return self._payload(a.offset, a.size)

    @property
    def coordinate_frames(self) -> List[CoordinateFrame]:
        n = self._info().coordinate_frame_count
        out = []
        with self._use() as h:
            for k in range(n):
                f = C.CoordinateFrame()
                C.check(C.lib().fourdgs_reader_coordinate_frame(h, k, ctypes.byref(f)))
                out.append(CoordinateFrame(f.name.text(), int(f.handedness),
                                           spelling(AXES, f.up_axis),
                                           spelling(AXES, f.forward_axis),
                                           spelling(LENGTH_UNITS, f.length_unit),
                                           f.metres_per_unit))
        return out

    @property
    def sensors(self) -> List[Sensor]:
        n = self._info().sensor_count
        out = []
        with self._use() as h:
            for k in range(n):
                s = C.Sensor()
                C.check(C.lib().fourdgs_reader_sensor(h, k, ctypes.byref(s)))
                dist = tuple(s.distortion[j] for j in range(s.distortion_count))
                out.append(Sensor(s.name.text(), s.modality.text(), s.rig_name.text(),
                                  spelling(CAMERA_MODELS, s.camera_model), int(s.width_px),
                                  int(s.height_px), s.fx, s.fy, s.cx, s.cy, dist,
                                  _tuple(s.rotation), _tuple(s.translation),
                                  int(s.pose_reference)))
        return out

    def _samples(self, fn, h: int, index: int, count: int) -> List[PoseSample]:
        out = []
        for j in range(count):
            p = C.PoseSample()
            C.check(fn(h, index, j, ctypes.byref(p)))
            out.append(PoseSample(p.time, _tuple(p.rotation), _tuple(p.translation)))
        return out

    @property
    def rig_trajectories(self) -> List[RigTrajectory]:
        n = self._info().rig_trajectory_count
        lib = C.lib()
        out = []
        with self._use() as h:
            for k in range(n):
                name, interp, count = C.String(), C.u32(), C.size_t()
                C.check(lib.fourdgs_reader_rig_trajectory(h, k, ctypes.byref(name),
                                                          ctypes.byref(interp), ctypes.byref(count)))
                out.append(RigTrajectory(name.text(), self._samples(
                    lib.fourdgs_reader_rig_trajectory_sample, h, k, count.value), int(interp.value)))
        return out

    @property
    def geodetic_anchors(self) -> List[GeodeticAnchor]:
        n = self._info().geodetic_anchor_count
        out = []
        with self._use() as h:
            for k in range(n):
                g = C.GeodeticAnchor()
                C.check(C.lib().fourdgs_reader_geodetic_anchor(h, k, ctypes.byref(g)))
                out.append(GeodeticAnchor(g.frame_name.text(), g.latitude_deg, g.longitude_deg,
                                          g.altitude_m, g.heading_deg))
        return out

    @property
    def object_embedding_dim(self) -> Optional[int]:
        """The Object Table's embedding dimension, or None when the file has no table."""
        i = self._info()
        return int(i.object_embedding_dim) if i.has_object_table else None

    @property
    def objects(self) -> List[ObjectInfo]:
        """Object Table entries (§5.15.6), in file order."""
        i = self._info()
        dim = int(i.object_embedding_dim)
        out = []
        with self._use() as h:
            for k in range(i.object_count):
                o = C.ObjectInfo()
                C.check(C.lib().fourdgs_reader_object(h, k, ctypes.byref(o)))
                dyn = Dynamics(_tuple(o.velocity), _tuple(o.angular_velocity),
                               _tuple(o.acceleration)) if o.has_dynamics else None
                emb = tuple(float(o.embedding[j]) for j in range(dim)) if o.has_embedding else None
                out.append(ObjectInfo(int(o.object_id), o.label.text(), _tuple(o.anchor), dyn, emb))
        return out

    @property
    def object_tracks(self) -> List[ObjectTrack]:
        n = self._info().object_track_count
        lib = C.lib()
        out = []
        with self._use() as h:
            for k in range(n):
                oid, interp, count = C.u32(), C.u32(), C.size_t()
                C.check(lib.fourdgs_reader_object_track(h, k, ctypes.byref(oid),
                                                        ctypes.byref(interp), ctypes.byref(count)))
                out.append(ObjectTrack(int(oid.value), self._samples(
                    lib.fourdgs_reader_object_track_sample, h, k, count.value), int(interp.value)))
        return out

    # -- gaussians --------------------------------------------------------------------------

    def _decode(self, call, out: Optional[State]) -> State:
        block = _new_block() if out is None else _take_for_reuse(out, State)
        with self._use() as h:
            try:
                C.check(call(h, block.handle))
            finally:
                if out is not None:
                    out.__init__(block)  # empty after a failure, like the block
        return State(block) if out is None else out

    def read_all(self, out: Optional[State] = None) -> State:
        """Every gaussian of a gaussian-birth file, decoded (chunks in index order), as a State
        of numpy arrays lent by the library. A keyframe-delta file is a sequence of states:
        Error unsupported "read-all-needs-gaussian-birth" (use state_at).

        out: a State to decode into again, reusing its memory and decode buffers (a playback
        loop: `state = scene.state_at(t, out=state)`); its previous arrays must no longer be
        referenced (Error "state-in-use" otherwise). Returns `out`, refreshed."""
        lib = C.lib()
        return self._decode(lambda h, b: lib.fourdgs_reader_read_all(h, b), out)

    def state_at(self, t: float, out: Optional[State] = None) -> State:
        """The decoded gaussians instant t needs, before §3: for gaussian-birth the chunks whose
        interval holds t, for keyframe-delta the composed state of the state chunk current at t
        (t in [0, duration)). `out` as for read_all."""
        lib = C.lib()
        return self._decode(lambda h, b: lib.fourdgs_reader_state_at(h, float(t), b), out)

    def evaluate(self, t: float, state: Union[State, Sequence[State], None] = None, *,
                 sh_degree: int = 3, object_tracks: bool = True,
                 out: Optional[Frame] = None) -> Frame:
        """The visible gaussians at scene time t (§3) as a Frame of lent numpy arrays.

        Without `state`, decodes what t needs (state_at) and evaluates it. With a State (or a
        sequence of them, gathered in one frame), evaluates those instead — the only way for a
        Stream. `sh_degree` caps the SH kept; `object_tracks` composes the scene's
        Object Tracks. `out`: a Frame to evaluate into again, reusing its memory (as
        read_all's out)."""
        lib = C.lib()
        frame = _new_frame() if out is None else _take_for_reuse(out, Frame)
        opts = C.EvaluateOptions(max_sh_degree=sh_degree, apply_object_tracks=int(object_tracks),
                                 append=0)
        with self._use() as h:
            try:
                if state is None:
                    C.check(lib.fourdgs_reader_evaluate(h, float(t), ctypes.byref(opts),
                                                        frame.handle))
                else:
                    states = [state] if isinstance(state, State) else list(state)
                    for k, s in enumerate(states):
                        opts.append = int(k > 0)
                        C.check(lib.fourdgs_reader_evaluate_block(h, s._lender.handle, float(t),
                                                                  ctypes.byref(opts), frame.handle))
            finally:
                if out is not None:
                    out.__init__(frame)
        return Frame(frame) if out is None else out


class Stream(Scene):
    """A .4dgs file read front to back (fourdgs.stream): blocks() yields its gaussians one chunk
    at a time; every property is the scene as read so far — the front matter from the start, the
    summary (chunks, summary_crc_verified) once blocks() has reached the end. evaluate(t, states)
    evaluates blocks; what needs the index (read_all, state_at, evaluate(t) alone) is refused
    ("needs-random-access"). A stream is used by one thread at a time.
    """

    def __init__(self, stream_handle: int, name: str, keep: object):
        scene = C.vp()
        try:
            C.check(C.lib().fourdgs_stream_scene(stream_handle, ctypes.byref(scene)))
        except Error:
            C.lib().fourdgs_stream_free(stream_handle)
            raise
        self._stream = stream_handle
        super().__init__(scene.value, name, keep)  # the scene is the stream's: never freed

    def _release(self, handle: int) -> None:
        stream, self._stream = self._stream, None
        if stream:
            C.lib().fourdgs_stream_free(stream)

    def blocks(self) -> Iterator[State]:
        """The gaussians, front to back: one State per chunk (gaussian-birth, kind "chunk") or
        per state chunk (keyframe-delta, kind "state": the composed state). Each State is a new
        block, independent of the stream. On a truncated file the whole chunks before the cut
        come, then Error "truncated" (and again on every later call); at the end, nothing more."""
        lib = C.lib()
        check = self._keep.check if isinstance(self._keep, _Reading) else C.check
        while True:
            block = _new_block()
            produced = C.u32()
            with self._use():
                check(lib.fourdgs_stream_next_block(self._stream, block.handle,
                                                    ctypes.byref(produced)))
            if not produced.value:
                return
            yield State(block)
