"""Writing gaussian-birth files from numpy arrays: one shot (write, Writer) or window by window in
bounded memory (StreamWriter). Both run the C++ writer: every attribute of every gaussian is
verified by decoding what was written, and the same input gives the same bytes."""
from __future__ import annotations

import ctypes
import math
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _capi as C
from ._errors import Error
from ._types import (AXES, CAMERA_MODELS, LENGTH_UNITS, AudioSource, Camera, CoordinateFrame,
                     GeodeticAnchor, ObjectInfo, ObjectTrack, RigTrajectory, Sensor, WriteReport,
                     number)

PathLike = Union[str, "os.PathLike[str]"]
Pairs = Union[Mapping[str, str], Iterable[Tuple[str, str]]]

_OPTION_NAMES = ("cutoff", "sh_degree", "preset", "codec", "level", "sh_ladder",
                 "chunk_compression", "profile", "library", "write_index", "write_crc",
                 "write_statistics", "write_summary_offset", "max_chunk_gaussians",
                 "spatial_order", "threads")
_EXTRA_NAMES = ("attributes", "metadata", "attachments", "camera", "audio_sources",
                "coordinate_frames", "sensors", "rig_trajectories", "geodetic_anchors", "objects",
                "object_tracks")


def _invalid(refusal: str, message: str) -> Error:
    return Error(C.INVALID_ARGUMENT, refusal, message)


def _pairs(items: Pairs) -> List[Tuple[str, str]]:
    return list(items.items()) if isinstance(items, Mapping) else [tuple(p) for p in items]


def _column(value: Any, n: Optional[int], width: int, dtype, name: str) -> np.ndarray:
    """`value` as a C-contiguous array of n × width (copied only when its dtype or layout
    differs)."""
    a = np.ascontiguousarray(np.asarray(value, dtype=dtype))
    if n is None:
        n = a.shape[0] if a.ndim else 0
    want = (n, width) if width > 1 else (n,)
    if a.size != n * width or (a.ndim > 1 and a.shape[0] != n):
        raise _invalid("input-size-mismatch",
                       f"{name} has shape {a.shape}; {want} expected for {n} gaussians")
    return a.reshape(want)


def _text(s: str) -> Tuple[bytes, int]:
    b = s.encode("utf-8")
    return b, len(b)


class _Batch:
    """A fourdgs_gaussian_batch over numpy columns (kept alive while the batch is)."""

    def __init__(self, sh_degree: int, positions, scales, rotations, colors, *, motion=None,
                 mu_t=None, sigma_t=None, win_lo=None, win_hi=None, sh=None, object_ids=None,
                 default_mu_t=None):
        pos = _column(positions, None, 3, np.float32, "positions")
        n = pos.shape[0]
        k = 3 * ((sh_degree + 1) ** 2 - 1)
        self.columns: Dict[str, Optional[np.ndarray]] = {
            "position": pos,
            "scale": _column(scales, n, 3, np.float32, "scales"),
            "rotation": _column(rotations, n, 4, np.float32, "rotations"),
            "color": _column(colors, n, 4, np.float32, "colors"),
            "motion": None if motion is None else _column(motion, n, 3, np.float32, "motion"),
            "win_lo": None if win_lo is None else _column(win_lo, n, 1, np.float64, "win_lo"),
            "win_hi": None if win_hi is None else _column(win_hi, n, 1, np.float64, "win_hi"),
            "sigma_t": _column(np.full(n, np.inf, np.float32) if sigma_t is None else sigma_t, n,
                               1, np.float32, "sigma_t"),
            "object_id": None if object_ids is None else _column(object_ids, n, 1, np.uint32,
                                                                  "object_ids"),
        }
        if mu_t is None:
            mu_t = default_mu_t(self.columns) if default_mu_t else np.zeros(n, np.float32)
        self.columns["mu_t"] = _column(mu_t, n, 1, np.float32, "mu_t")
        if k:
            if sh is None:
                raise _invalid("null-argument", f"the scene has SH degree {sh_degree}: sh is required")
            self.columns["sh"] = _column(sh, n, k, np.float32, "sh").reshape(n, k)
        else:
            if sh is not None and np.asarray(sh).size:
                raise _invalid("sh-degree-mismatch", "sh given but the scene's SH degree is 0")
            self.columns["sh"] = None
        self.count = n
        self.c = C.GaussianBatch(count=n)
        for name, array in self.columns.items():
            setattr(self.c, name, array.ctypes.data if array is not None and n else None)


def _mu_from_window(columns) -> np.ndarray:
    return columns["win_lo"].astype(np.float32)


class _Owned:
    """Owns one C handle, freed by close() or at garbage collection."""

    _handle: Optional[int] = None
    _FREE = ""  # the C function that frees the handle

    def _h(self) -> int:
        if not self._handle:
            raise _invalid("writer-closed", "the writer has been closed")
        return self._handle

    def close(self) -> None:
        """Frees the handle. A one-shot writer drops what was not written; a stream writer's
        unfinished file stays as written so far."""
        handle, self._handle = self._handle, None
        if handle:
            getattr(C.lib(), self._FREE)(handle)

    def __del__(self):
        self.close()


class _Config(_Owned):
    """A fourdgs_writer: options and extras (and, for the one-shot writer, gaussians)."""

    _FREE = "fourdgs_writer_free"

    def __init__(self, duration: float, *, cutoff: float = 0.05, sh_degree: int = 0,
                 preset: str = "default", codec: str = "deflate", level: int = 6,
                 sh_ladder: str = "none", chunk_compression: str = "", profile: str = "",
                 library: str = "", write_index: bool = True, write_crc: bool = True,
                 write_statistics: bool = True, write_summary_offset: bool = True,
                 max_chunk_gaussians: int = 65536, spatial_order: bool = True, threads: int = 0):
        lib = C.lib()
        o = C.WriterOptions()
        lib.fourdgs_writer_options_init_sized(ctypes.byref(o), ctypes.sizeof(o))
        o.duration_sec = float(duration)
        o.cutoff = float(cutoff)
        o.sh_degree = int(sh_degree)
        self._strings = []
        for field_name, value in (("profile", profile), ("library", library), ("preset", preset),
                                  ("sh_ladder", sh_ladder), ("codec", codec),
                                  ("chunk_compression", chunk_compression)):
            b, n = _text(value)
            self._strings.append(b)
            setattr(o, field_name, b)
            setattr(o, field_name + "_size", n)
        o.level = int(level)
        o.write_index, o.write_crc = int(write_index), int(write_crc)
        o.write_statistics, o.write_summary_offset = int(write_statistics), int(write_summary_offset)
        o.max_chunk_gaussians = int(max_chunk_gaussians)
        o.spatial_order = int(spatial_order)
        o.threads = int(threads)
        handle = C.vp()
        C.check(lib.fourdgs_writer_create(ctypes.byref(o), ctypes.byref(handle)))
        self._handle: Optional[int] = handle.value
        self.duration = float(duration)
        self.sh_degree = int(sh_degree)
        self._embedding_dim: Optional[int] = None

    # -- extras -----------------------------------------------------------------------------

    def add_attribute(self, key: str, value: str) -> None:
        """A Header attribute (§5.1; written in the order added)."""
        k, kn = _text(key)
        v, vn = _text(value)
        C.check(C.lib().fourdgs_writer_add_header_attribute(self._h(), k, kn, v, vn))

    def add_metadata(self, name: str, entries: Pairs) -> None:
        """A Metadata record (§5.11)."""
        pairs = [(_text(k), _text(v)) for k, v in _pairs(entries)]
        kv = (C.KeyValue * max(1, len(pairs)))()
        for i, ((k, kn), (v, vn)) in enumerate(pairs):
            kv[i] = C.KeyValue(k, kn, v, vn)
        n, nn = _text(name)
        C.check(C.lib().fourdgs_writer_add_metadata(self._h(), n, nn, kv, len(pairs)))

    def add_attachment(self, name: str, media_type: str, data: bytes) -> None:
        """An Attachment (§5.13); the bytes are copied."""
        n, nn = _text(name)
        m, mn = _text(media_type)
        data = bytes(data)
        C.check(C.lib().fourdgs_writer_add_attachment(self._h(), n, nn, m, mn, data, len(data)))

    def set_camera(self, camera: Camera) -> None:
        """The Camera record (§5.10)."""
        keys = (C.CameraKeyframe * max(1, len(camera.keyframes)))()
        for i, k in enumerate(camera.keyframes):
            keys[i] = C.CameraKeyframe(k.time, (C.dbl * 3)(*k.position), (C.dbl * 3)(*k.target))
        interp, interp_n = _text(camera.interpolation)
        C.check(C.lib().fourdgs_writer_set_camera(
            self._h(), float(camera.fov_y_deg), (C.dbl * 3)(*camera.position),
            (C.dbl * 3)(*camera.target), keys, len(camera.keyframes), interp, interp_n,
            int(camera.loop)))

    def add_audio_source(self, source: AudioSource, data: bytes) -> None:
        """An Audio Source and its encoded payload (§5.16). `source.legacy`, `offset` and
        `size` are ignored."""
        keep = [_text(s) for s in (source.name, source.codec, source.channel_layout,
                                   source.interpolation)]
        info = C.AudioSourceInfo(source_id=source.source_id, start_sec=source.start_sec,
                                 duration_sec=source.duration_sec, gain=source.gain,
                                 flags=source.flags, position=(C.dbl * 3)(*source.position),
                                 rotation=(C.dbl * 4)(*source.rotation))
        for field_name, (b, n) in zip(("name", "codec", "channel_layout", "interpolation"), keep):
            setattr(info, field_name, C.String(ctypes.cast(ctypes.c_char_p(b), C.vp), n))
        keys = (C.AudioKeyframe * max(1, len(source.keyframes)))()
        for i, k in enumerate(source.keyframes):
            keys[i] = C.AudioKeyframe(k.time, (C.dbl * 3)(*k.position), (C.dbl * 4)(*k.rotation))
        data = bytes(data)
        C.check(C.lib().fourdgs_writer_add_audio_source(self._h(), ctypes.byref(info), keys,
                                                        len(source.keyframes), data, len(data)))

    def add_coordinate_frame(self, frame: CoordinateFrame) -> None:
        """A Coordinate Frame (§5.15.2); axes and units by name ("+y", "metre") or number."""
        name, n = _text(frame.name)
        f = C.CoordinateFrame(name=C.String(ctypes.cast(ctypes.c_char_p(name), C.vp), n),
                              handedness=int(frame.handedness),
                              up_axis=number(AXES, frame.up_axis, "up_axis"),
                              forward_axis=number(AXES, frame.forward_axis, "forward_axis"),
                              length_unit=number(LENGTH_UNITS, frame.length_unit, "length_unit"),
                              metres_per_unit=float(frame.metres_per_unit))
        C.check(C.lib().fourdgs_writer_add_coordinate_frame(self._h(), ctypes.byref(f)))

    def add_sensor(self, sensor: Sensor) -> None:
        """A Sensor Calibration (§5.15.3); camera_model by name ("pinhole") or number."""
        strings = [_text(s) for s in (sensor.name, sensor.modality, sensor.rig_name)]
        dist = (C.dbl * max(1, len(sensor.distortion)))(*sensor.distortion)
        s = C.Sensor(camera_model=number(CAMERA_MODELS, sensor.camera_model, "camera_model"),
                     width_px=sensor.width_px, height_px=sensor.height_px, fx=sensor.fx,
                     fy=sensor.fy, cx=sensor.cx, cy=sensor.cy,
                     distortion_count=len(sensor.distortion),
                     distortion=ctypes.cast(dist, C.P(C.dbl)),
                     rotation=(C.dbl * 4)(*sensor.rotation),
                     translation=(C.dbl * 3)(*sensor.translation),
                     pose_reference=int(sensor.pose_reference))
        for field_name, (b, n) in zip(("name", "modality", "rig_name"), strings):
            setattr(s, field_name, C.String(ctypes.cast(ctypes.c_char_p(b), C.vp), n))
        C.check(C.lib().fourdgs_writer_add_sensor(self._h(), ctypes.byref(s)))

    @staticmethod
    def _samples(samples) -> Tuple[Any, int]:
        arr = (C.PoseSample * max(1, len(samples)))()
        for i, p in enumerate(samples):
            arr[i] = C.PoseSample(p.time, (C.dbl * 4)(*p.rotation), (C.dbl * 3)(*p.translation))
        return arr, len(samples)

    def add_rig_trajectory(self, trajectory: RigTrajectory) -> None:
        """A Rig Trajectory (§5.15.4)."""
        name, n = _text(trajectory.name)
        arr, count = self._samples(trajectory.samples)
        C.check(C.lib().fourdgs_writer_add_rig_trajectory(self._h(), name, n,
                                                          int(trajectory.interpolation), arr, count))

    def add_geodetic_anchor(self, anchor: GeodeticAnchor) -> None:
        """A Geodetic Anchor (§5.15.5)."""
        name, n = _text(anchor.frame_name)
        g = C.GeodeticAnchor(frame_name=C.String(ctypes.cast(ctypes.c_char_p(name), C.vp), n),
                             latitude_deg=anchor.latitude_deg, longitude_deg=anchor.longitude_deg,
                             altitude_m=anchor.altitude_m, heading_deg=anchor.heading_deg)
        C.check(C.lib().fourdgs_writer_add_geodetic_anchor(self._h(), ctypes.byref(g)))

    def add_object(self, obj: ObjectInfo) -> None:
        """An Object Table entry (§5.15.6). Every entry with an embedding must have the same
        length; the table's embedding dimension is that length (0 when none has one)."""
        label, n = _text(obj.label)
        dim = len(obj.embedding) if obj.embedding is not None else (self._embedding_dim or 0)
        emb = (C.flt * max(1, dim))(*(obj.embedding or ()))
        o = C.ObjectInfo(object_id=obj.object_id,
                         label=C.String(ctypes.cast(ctypes.c_char_p(label), C.vp), n),
                         anchor=(C.flt * 3)(*obj.anchor), has_dynamics=int(obj.dynamics is not None),
                         has_embedding=int(obj.embedding is not None),
                         embedding=ctypes.cast(emb, C.P(C.flt)))
        if obj.dynamics is not None:
            o.velocity = (C.flt * 3)(*obj.dynamics.velocity)
            o.angular_velocity = (C.flt * 3)(*obj.dynamics.angular_velocity)
            o.acceleration = (C.flt * 3)(*obj.dynamics.acceleration)
        C.check(C.lib().fourdgs_writer_add_object(self._h(), ctypes.byref(o), dim))
        self._embedding_dim = dim

    def add_object_track(self, track: ObjectTrack) -> None:
        """An Object Track (§5.15.7)."""
        arr, count = self._samples(track.samples)
        C.check(C.lib().fourdgs_writer_add_object_track(self._h(), int(track.object_id),
                                                        int(track.interpolation), arr, count))

    def add_extras(self, attributes: Optional[Pairs] = None,
                   metadata: Optional[Union[Mapping[str, Pairs], Iterable[Any]]] = None,
                   attachments: Iterable[Tuple[str, str, bytes]] = (),
                   camera: Optional[Camera] = None,
                   audio_sources: Iterable[Tuple[AudioSource, bytes]] = (),
                   coordinate_frames: Iterable[CoordinateFrame] = (),
                   sensors: Iterable[Sensor] = (), rig_trajectories: Iterable[RigTrajectory] = (),
                   geodetic_anchors: Iterable[GeodeticAnchor] = (),
                   objects: Iterable[ObjectInfo] = (),
                   object_tracks: Iterable[ObjectTrack] = ()) -> None:
        """Everything above in one call (the keyword arguments of fourdgs.write)."""
        for k, v in _pairs(attributes or ()):
            self.add_attribute(k, v)
        records = metadata.items() if isinstance(metadata, Mapping) else (metadata or ())
        for record in records:
            name, entries = (record.name, record.entries) if hasattr(record, "entries") else record
            self.add_metadata(name, entries)
        for name, media_type, data in attachments:
            self.add_attachment(name, media_type, data)
        if camera is not None:
            self.set_camera(camera)
        for source, data in audio_sources:
            self.add_audio_source(source, data)
        for f in coordinate_frames:
            self.add_coordinate_frame(f)
        for s in sensors:
            self.add_sensor(s)
        for r in rig_trajectories:
            self.add_rig_trajectory(r)
        for g in geodetic_anchors:
            self.add_geodetic_anchor(g)
        for o in objects:
            self.add_object(o)
        for t in object_tracks:
            self.add_object_track(t)


def _report(r: C.WriteReport) -> WriteReport:
    return WriteReport(int(r.gaussian_count), int(r.chunk_count), int(r.bytes_written),
                       tuple(float(v) for v in r.aabb))


class Writer(_Config):
    """A gaussian-birth file written in one shot: add gaussians (in as many batches as you
    like; they are copied) and extras, then write(path) or to_bytes(). The file's aabb, Window
    Table and Quantization bounds are measured from the gaussians.

    Options (keyword arguments, the C++ writer's): duration (seconds, required), cutoff (0.05),
    sh_degree (0..3), preset ("fine", "default", "coarse"), codec ("deflate", "zstd", "lz4"),
    level (6), sh_ladder ("none", "flat", "balanced", "aggressive"), chunk_compression ("",
    "deflate", "zstd"), profile, library, write_index, write_crc, write_statistics,
    write_summary_offset (all True), max_chunk_gaussians (65536), spatial_order (True),
    threads (0 = all cores; the bytes do not depend on it).
    """

    def add_gaussians(self, positions, scales, rotations, colors, *, win_lo=None, win_hi=None,
                      motion=None, mu_t=None, sigma_t=None, sh=None, object_ids=None) -> int:
        """Adds N gaussians from array-likes: positions (N, 3); scales (N, 3) linear, > 0;
        rotations (N, 4) x y z w, any norm > 0; colors (N, 4) r g b opacity in [0, 1]; win_lo,
        win_hi (N,) the validity window in seconds, 0 <= lo < hi <= duration (default the whole
        duration); motion (N, 3) units per second (default 0); mu_t (N,) the temporal centre
        (default win_lo); sigma_t (N,) seconds, inf = never fades (default inf); sh (N, 3, K) or
        (N, 3K) SH coefficients when sh_degree > 0 (red's K, green's, blue's); object_ids (N,)
        uint32 (default 0, background). Values are checked when the file is written, naming the
        gaussian by its index across all batches. Returns N."""
        n = np.asarray(positions).reshape(-1, 3).shape[0] if np.asarray(positions).size else 0
        if win_lo is None:
            win_lo = np.zeros(n)
        if win_hi is None:
            win_hi = np.full(n, self.duration)
        batch = _Batch(self.sh_degree, positions, scales, rotations, colors, motion=motion,
                       mu_t=mu_t, sigma_t=sigma_t, win_lo=win_lo, win_hi=win_hi, sh=sh,
                       object_ids=object_ids, default_mu_t=_mu_from_window)
        C.check(C.lib().fourdgs_writer_add_gaussians(self._h(), ctypes.byref(batch.c)))
        return batch.count

    def write(self, path: PathLike) -> WriteReport:
        """Encodes, verifies and writes the file. May be called again (same input, same bytes)."""
        p = os.fsencode(path)
        lib = C.lib()
        C.check(lib.fourdgs_writer_finish_file(self._h(), p, len(p)))
        r = C.WriteReport()
        C.check(lib.fourdgs_writer_report(self._h(), ctypes.byref(r)))
        return _report(r)

    def to_bytes(self) -> bytes:
        """The file's bytes."""
        data, size = C.vp(), C.size_t()
        C.check(C.lib().fourdgs_writer_finish_memory(self._h(), ctypes.byref(data),
                                                     ctypes.byref(size)))
        return ctypes.string_at(data.value, size.value) if size.value else b""

    def stream(self, path: PathLike, *, gaussian_count: int, aabb: Sequence[float],
               windows: Sequence[Tuple[float, float]]) -> "StreamWriter":
        """A StreamWriter to `path` with this writer's options and the extras added so far (no
        gaussians may have been added here)."""
        return StreamWriter._from_config(self, path, gaussian_count, aabb, windows)

    def __enter__(self) -> "Writer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class StreamWriter(_Owned):
    """A gaussian-birth file written window by window in bounded memory: each window's
    gaussians are encoded, verified and written to the file before add_window returns.

    The Header precedes the chunks, so the caller declares up front:
        gaussian_count  exactly how many gaussians will be added,
        aabb            (min x, min y, min z, max x, max y, max z) over every rest position,
                        exactly (fourdgs.bounds() computes it),
        windows         the Window Table, [(lo, hi), ...] in seconds;
    finish() checks the count and the aabb. Options and extras are fourdgs.write's keyword
    arguments. Quantization bounds are the grid's analytic worst case (docs/writer.md).

        with fourdgs.StreamWriter("out.4dgs", duration=2.0, gaussian_count=n, aabb=box,
                                  windows=[(0, 1), (1, 2)]) as w:
            w.add_window(0, positions=p0, scales=s0, rotations=r0, colors=c0)
            w.add_window(1, positions=p1, scales=s1, rotations=r1, colors=c1)
        # finished on leaving the block (unless it raised)
    """

    _FREE = "fourdgs_stream_writer_free"

    def __init__(self, path: PathLike, *, duration: float, gaussian_count: int,
                 aabb: Sequence[float], windows: Sequence[Tuple[float, float]], **kwargs):
        options = {k: kwargs.pop(k) for k in list(kwargs) if k in _OPTION_NAMES}
        extras = {k: kwargs.pop(k) for k in list(kwargs) if k in _EXTRA_NAMES}
        if kwargs:
            raise TypeError(f"unknown arguments: {sorted(kwargs)}")
        config = Writer(duration, **options)
        try:
            config.add_extras(**extras)
            self._start(config, path, gaussian_count, aabb, windows)
        finally:
            config.close()

    @classmethod
    def _from_config(cls, config: _Config, path, gaussian_count, aabb, windows) -> "StreamWriter":
        self = cls.__new__(cls)
        self._start(config, path, gaussian_count, aabb, windows)
        return self

    def _start(self, config: _Config, path, gaussian_count, aabb, windows) -> None:
        self._handle: Optional[int] = None
        self.sh_degree = config.sh_degree
        self.windows = [(float(lo), float(hi)) for lo, hi in windows]
        flat = (C.dbl * max(1, 2 * len(self.windows)))(*[v for w in self.windows for v in w])
        aabb = tuple(float(v) for v in aabb)
        if len(aabb) != 6:
            raise _invalid("input-size-mismatch", f"aabb has {len(aabb)} values, 6 expected")
        d = C.StreamDeclaration(gaussian_count=int(gaussian_count), aabb=(C.dbl * 6)(*aabb),
                                windows=ctypes.cast(flat, C.P(C.dbl)),
                                window_count=len(self.windows))
        p = os.fsencode(path)
        handle = C.vp()
        C.check(C.lib().fourdgs_stream_writer_create_file(config._h(), ctypes.byref(d), p, len(p),
                                                          ctypes.byref(handle)))
        self._handle = handle.value
        self.path = os.fsdecode(p)
        self.report: Optional[WriteReport] = None

    def add_window(self, window_index: int, positions, scales, rotations, colors, *,
                   motion=None, mu_t=None, sigma_t=None, sh=None, object_ids=None) -> int:
        """Writes N gaussians living in declared window `window_index` (columns as in
        Writer.add_gaussians; mu_t defaults to the window's start). Returns N."""
        if not 0 <= window_index < len(self.windows):
            raise _invalid("window-index-out-of-range",
                           f"window {window_index} is not one of the {len(self.windows)} declared")
        lo = self.windows[window_index][0]
        batch = _Batch(self.sh_degree, positions, scales, rotations, colors, motion=motion,
                       mu_t=mu_t, sigma_t=sigma_t, sh=sh, object_ids=object_ids,
                       default_mu_t=lambda cols: np.full(cols["position"].shape[0], lo, np.float32))
        C.check(C.lib().fourdgs_stream_writer_add_window(self._h(), int(window_index),
                                                         ctypes.byref(batch.c)))
        return batch.count

    def add_chunk(self, positions, scales, rotations, colors, *, win_lo, win_hi, motion=None,
                  mu_t=None, sigma_t=None, sh=None, object_ids=None) -> int:
        """Writes one chunk whose gaussians carry their own windows (each a declared one)."""
        batch = _Batch(self.sh_degree, positions, scales, rotations, colors, motion=motion,
                       mu_t=mu_t, sigma_t=sigma_t, win_lo=win_lo, win_hi=win_hi, sh=sh,
                       object_ids=object_ids, default_mu_t=_mu_from_window)
        C.check(C.lib().fourdgs_stream_writer_add_chunk(self._h(), ctypes.byref(batch.c)))
        return batch.count

    def finish(self) -> WriteReport:
        """Checks the declaration, writes the summary and Footer, and closes the file."""
        lib = C.lib()
        C.check(lib.fourdgs_stream_writer_finish(self._h()))
        r = C.WriteReport()
        C.check(lib.fourdgs_stream_writer_report(self._h(), ctypes.byref(r)))
        self.report = _report(r)
        self.close()
        return self.report

    def __enter__(self) -> "StreamWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None and self._handle:
            self.finish()
        else:
            self.close()


def bounds(positions: Union[np.ndarray, Iterable[np.ndarray]]) -> Tuple[float, ...]:
    """The exact aabb (min xyz, max xyz) of rest positions — an (N, 3) array or an iterable of
    them — as a StreamWriter declares it."""
    arrays = [positions] if isinstance(positions, np.ndarray) else list(positions)
    arrays = [np.asarray(a, np.float32).reshape(-1, 3) for a in arrays]
    arrays = [a for a in arrays if a.shape[0]]
    if not arrays:
        return (0.0,) * 6
    lo = np.min([a.min(axis=0) for a in arrays], axis=0)
    hi = np.max([a.max(axis=0) for a in arrays], axis=0)
    return tuple(float(v) for v in lo) + tuple(float(v) for v in hi)


def write(path: PathLike, *, positions, scales, rotations, colors, duration: Optional[float] = None,
          win_lo=None, win_hi=None, motion=None, mu_t=None, sigma_t=None, sh=None,
          object_ids=None, **kwargs) -> WriteReport:
    """Writes a gaussian-birth .4dgs file from numpy arrays in one call.

    Gaussian columns as in Writer.add_gaussians. duration defaults to max(win_hi) (required when
    win_hi is not given). Other keyword arguments: the Writer options (preset, codec, level,
    sh_degree — inferred from sh's shape when omitted —, sh_ladder, chunk_compression, cutoff,
    profile, library, write_index, ..., threads) and the extras: attributes ({key: value} or
    pairs), metadata ({name: {key: value}}), attachments [(name, media_type, bytes)], camera
    (Camera), audio_sources [(AudioSource, bytes)], coordinate_frames, sensors,
    rig_trajectories, geodetic_anchors, objects, object_tracks (lists of those records).
    Returns a WriteReport. Raises Error naming the gaussian and the field."""
    options = {k: kwargs.pop(k) for k in list(kwargs) if k in _OPTION_NAMES}
    extras = {k: kwargs.pop(k) for k in list(kwargs) if k in _EXTRA_NAMES}
    if kwargs:
        raise TypeError(f"unknown arguments: {sorted(kwargs)}")
    if duration is None:
        if win_hi is None:
            raise _invalid("null-argument", "give duration, or win_hi to take it from")
        hi = np.asarray(win_hi, np.float64)
        duration = float(hi.max()) if hi.size else 1.0
    if "sh_degree" not in options and sh is not None:
        per = np.asarray(sh).size // max(1, np.asarray(positions).size // 3) // 3
        degree = round(math.sqrt(per + 1)) - 1
        options["sh_degree"] = degree if (degree + 1) ** 2 - 1 == per else 0
    with Writer(duration, **options) as w:
        w.add_extras(**extras)
        w.add_gaussians(positions, scales, rotations, colors, win_lo=win_lo, win_hi=win_hi,
                        motion=motion, mu_t=mu_t, sigma_t=sigma_t, sh=sh, object_ids=object_ids)
        return w.write(path)
