"""The C ABI (capi/fourdgs.h) through ctypes: finding the library, the structs, the signatures,
and turning a failed call into :class:`fourdgs.Error`.

Nothing here is public; the rest of the package calls :func:`lib` and :func:`check`.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

from ._errors import Error, NO_OFFSET

# Numbers and names of fourdgs.h.
OK, MALFORMED, TRUNCATED, UNSUPPORTED, IO, INVALID_ARGUMENT = 0, 1, 2, 3, 4, 5
NOT_FOUND = 10
ABI_VERSION = 1
LIBRARY_NAMES = ("libfourdgs-c.so.0", "libfourdgs-c.so")

u8, u32, u64, i32, i64 = ctypes.c_uint8, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32, ctypes.c_int64
size_t, dbl, flt, vp = ctypes.c_size_t, ctypes.c_double, ctypes.c_float, ctypes.c_void_p
P = ctypes.POINTER
status_t = ctypes.c_int


class String(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("size", size_t)]

    def text(self) -> str:
        return self.bytes().decode("utf-8", "replace")

    def bytes(self) -> bytes:
        return ctypes.string_at(self.data, self.size) if self.size else b""


def string_in(value: str) -> bytes:
    return value.encode("utf-8")


class Sized(ctypes.Structure):
    """A size-tagged struct: struct_size is what this module was written against."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.struct_size = ctypes.sizeof(self)


class ErrorInfo(Sized):
    _fields_ = [("struct_size", size_t), ("status", status_t), ("refusal", String),
                ("message", String), ("offset", u64)]


class Allocator(ctypes.Structure):
    _fields_ = [("user", vp), ("alloc", vp), ("free", vp)]


class OpenOptions(Sized):
    _fields_ = [("struct_size", size_t), ("max_sh_degree", u32), ("verify_summary_crc", u32),
                ("copy_memory", u32), ("decode_threads", u32), ("max_record_bytes", u64),
                ("max_summary_bytes", u64), ("max_gaussians_per_chunk", u32),
                ("allocator", vp), ("keep_payloads", u32),
                ("http_headers", vp), ("http_header_count", size_t),
                ("http_ca_bundle", ctypes.c_char_p), ("http_connect_timeout_ms", u32),
                ("http_transfer_timeout_ms", u32), ("http_max_attempts", u32),
                ("http_verify_tls", u32)]


class SceneInfo(Sized):
    _fields_ = [("struct_size", size_t), ("profile", String), ("library", String),
                ("temporal_model_name", String), ("temporal_model", u32),
                ("duration_sec", dbl), ("gaussian_count", u64), ("cutoff", dbl),
                ("aabb", dbl * 6), ("sh_degree", u32), ("header_flags", u32),
                ("quantization_scheme", String), ("pos_origin", dbl * 3)] + \
        [(n, dbl) for n in ("step_pos", "step_scale_log", "step_rot", "step_rgb", "step_alpha",
                            "step_motion", "step_time", "step_sigma_log")] + \
        [("step_sh", u32), ("sh_depth_count", u32), ("sh_depths", u8 * 3)] + \
        [(n, u64) for n in ("header_attribute_count", "quantization_bound_count", "window_count",
                            "chunk_count", "metadata_count", "attachment_count",
                            "audio_source_count", "coordinate_frame_count", "sensor_count",
                            "rig_trajectory_count", "geodetic_anchor_count", "object_count",
                            "object_track_count", "skipped_record_count")] + \
        [(n, u32) for n in ("has_camera", "has_object_table", "object_embedding_dim",
                            "index_built_by_scan", "summary_crc_verified")] + \
        [("trailing_bytes", u64), ("read_by_scan", u32), ("scan_cause", String),
         ("window_table_present", u32), ("has_footer", u32), ("summary_start", u64),
         ("summary_offset_start", u64), ("summary_crc", u32), ("summary_offset_count", u64),
         ("has_statistics", u32), ("statistics_gaussian_count", u64),
         ("statistics_chunk_count", u64), ("statistics_duration_sec", dbl),
         ("statistics_aabb", dbl * 6), ("sh_depths_malformed", u32)]


class PlyColumns(Sized):
    _fields_ = [("struct_size", size_t), ("count", u64), ("sh_degree", u32),
                ("sh_per_gaussian", u32), ("position", P(flt)), ("normal", P(flt)),
                ("scale", P(flt)), ("rotation", P(flt)), ("color", P(flt)), ("sh", P(flt))]


class Payload(ctypes.Structure):
    _fields_ = [("offset", u64), ("size", u64)]


class AttachmentInfo(Sized):
    _fields_ = [("struct_size", size_t), ("name", String), ("media_type", String),
                ("payload", Payload)]


class CameraInfo(Sized):
    _fields_ = [("struct_size", size_t), ("fov_y_deg", dbl), ("position", dbl * 3),
                ("target", dbl * 3), ("keyframe_count", u64), ("interpolation", String),
                ("loop", u32)]


class CameraKeyframe(ctypes.Structure):
    _fields_ = [("time", dbl), ("position", dbl * 3), ("target", dbl * 3)]


class AudioSourceInfo(Sized):
    _fields_ = [("struct_size", size_t), ("source_id", u32), ("legacy", u32), ("name", String),
                ("codec", String), ("channel_layout", String), ("interpolation", String),
                ("start_sec", dbl), ("duration_sec", dbl), ("gain", dbl), ("flags", u32),
                ("position", dbl * 3), ("rotation", dbl * 4), ("keyframe_count", u64),
                ("payload", Payload)]


class AudioKeyframe(ctypes.Structure):
    _fields_ = [("time", dbl), ("position", dbl * 3), ("rotation", dbl * 4)]


class AudioState(ctypes.Structure):
    _fields_ = [("active", u32), ("local_time", dbl), ("gain", dbl), ("position", dbl * 3),
                ("rotation", dbl * 4)]


class CoordinateFrame(Sized):
    _fields_ = [("struct_size", size_t), ("name", String), ("handedness", u32),
                ("up_axis", u32), ("forward_axis", u32), ("length_unit", u32),
                ("metres_per_unit", dbl)]


class Sensor(Sized):
    _fields_ = [("struct_size", size_t), ("name", String), ("modality", String),
                ("rig_name", String), ("camera_model", u32), ("width_px", u32),
                ("height_px", u32), ("fx", dbl), ("fy", dbl), ("cx", dbl), ("cy", dbl),
                ("distortion_count", u64), ("distortion", P(dbl)), ("rotation", dbl * 4),
                ("translation", dbl * 3), ("pose_reference", u32)]


class PoseSample(ctypes.Structure):
    _fields_ = [("time", dbl), ("rotation", dbl * 4), ("translation", dbl * 3)]


class GeodeticAnchor(Sized):
    _fields_ = [("struct_size", size_t), ("frame_name", String), ("latitude_deg", dbl),
                ("longitude_deg", dbl), ("altitude_m", dbl), ("heading_deg", dbl)]


class ObjectInfo(Sized):
    _fields_ = [("struct_size", size_t), ("object_id", u32), ("label", String),
                ("anchor", flt * 3), ("has_dynamics", u32), ("velocity", flt * 3),
                ("angular_velocity", flt * 3), ("acceleration", flt * 3),
                ("has_embedding", u32), ("embedding", P(flt))]


class EvaluateOptions(Sized):
    _fields_ = [("struct_size", size_t), ("max_sh_degree", u32), ("apply_object_tracks", u32),
                ("append", u32)]


class ChunkInfo(Sized):
    _fields_ = [("struct_size", size_t), ("t0", dbl), ("t1", dbl), ("offset", u64),
                ("size", u64), ("gaussian_count", u64), ("fetch_bytes", u64), ("kind", u32),
                ("has_keyframe_fields", u32), ("delta_mode", u32), ("depth", u32),
                ("reference_offset", u64), ("keyframe_offset", u64), ("live_count", u64),
                ("band_count", u64)]


class FrameColumns(Sized):
    _fields_ = [("struct_size", size_t), ("time", dbl), ("count", size_t), ("center", vp),
                ("scale", vp), ("rotation", vp), ("color", vp), ("object_id", vp),
                ("source", vp), ("sh_degree", u32), ("sh_per_gaussian", size_t), ("sh", vp),
                ("flags", vp), ("unrepresentable", size_t)]


class BlockInfo(Sized):
    _fields_ = [("struct_size", size_t), ("kind", u32), ("time", dbl), ("offset", u64),
                ("length", u64), ("t0", dbl), ("t1", dbl), ("level", u32),
                ("chunk_kind", u32), ("delta_mode", u32), ("depth", u32),
                ("reference_offset", u64), ("keyframe_offset", u64), ("live_count", u64),
                ("update_count", u32), ("birth_count", u32), ("death_count", u32),
                ("object_id_stream", u32)]


class BlockColumns(Sized):
    _fields_ = [("struct_size", size_t), ("count", size_t)] + \
        [(n, vp) for n in ("position", "scale", "rotation", "color", "motion", "mu_t", "sigma_t",
                           "win_lo", "win_hi", "flags", "window_index", "object_id",
                           "source_group", "source_index", "gaussian_id")] + \
        [("sh_degree", u32), ("sh_per_gaussian", size_t), ("sh", vp)]


class ValidationSummary(Sized):
    _fields_ = [("struct_size", size_t)] + [(n, u64) for n in (
        "finding_count", "errors", "warnings", "file_size", "records", "chunks")] + \
        [(n, u32) for n in ("truncated", "findings_capped", "valid")]


class FindingInfo(Sized):
    _fields_ = [("struct_size", size_t), ("severity", u32), ("rule", String), ("field", String),
                ("value", String), ("section", String), ("message", String), ("offset", u64)]


class WriterOptions(Sized):
    _fields_ = [("struct_size", size_t), ("duration_sec", dbl), ("cutoff", dbl),
                ("sh_degree", u32), ("profile", ctypes.c_char_p), ("profile_size", size_t),
                ("library", ctypes.c_char_p), ("library_size", size_t),
                ("preset", ctypes.c_char_p), ("preset_size", size_t),
                ("sh_ladder", ctypes.c_char_p), ("sh_ladder_size", size_t),
                ("codec", ctypes.c_char_p), ("codec_size", size_t), ("level", i32),
                ("chunk_compression", ctypes.c_char_p), ("chunk_compression_size", size_t),
                ("write_index", u32), ("write_crc", u32), ("write_statistics", u32),
                ("write_summary_offset", u32), ("max_chunk_gaussians", u32),
                ("spatial_order", u32), ("threads", u32), ("allocator", vp)]


class GaussianBatch(Sized):
    _fields_ = [("struct_size", size_t), ("count", size_t)] + \
        [(n, vp) for n in ("position", "scale", "rotation", "color", "motion", "mu_t", "sigma_t",
                           "win_lo", "win_hi", "sh", "object_id")]


class KeyValue(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("key_size", size_t), ("value", ctypes.c_char_p),
                ("value_size", size_t)]


class WriteReport(Sized):
    _fields_ = [("struct_size", size_t), ("gaussian_count", u64), ("chunk_count", u64),
                ("bytes_written", u64), ("aabb", dbl * 6)]


class StreamDeclaration(Sized):
    _fields_ = [("struct_size", size_t), ("gaussian_count", u64), ("aabb", dbl * 6),
                ("windows", P(dbl)), ("window_count", size_t)]


WRITE_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, vp, vp, u64)
STREAM_READ = ctypes.CFUNCTYPE(i64, vp, vp, u64)
STREAM_RELEASE = ctypes.CFUNCTYPE(None, vp)


class StreamCallbacks(ctypes.Structure):
    _fields_ = [("user", vp), ("read", STREAM_READ), ("release", STREAM_RELEASE)]


H = vp  # every handle travels as void*
_SIGNATURES = {
    "fourdgs_version": ([], ctypes.c_char_p),
    "fourdgs_enum_name": ([u32, u32], ctypes.c_char_p),
    "fourdgs_status_name": ([status_t], ctypes.c_char_p),
    "fourdgs_sh_coefficient": ([ctypes.c_uint8], ctypes.c_float),
    "fourdgs_ply_read_memory": ([vp, vp, size_t, P(H)], status_t),
    "fourdgs_ply_read_file": ([vp, ctypes.c_char_p, size_t, P(H)], status_t),
    "fourdgs_ply_columns_get": ([H, vp], status_t),
    "fourdgs_ply_free": ([H], None),
    "fourdgs_ply_write": ([vp, vp, size_t, P(size_t)], status_t),
    "fourdgs_abi_version": ([], u32),
    "fourdgs_last_error": ([P(ErrorInfo)], status_t),
    "fourdgs_open_options_init_sized": ([P(OpenOptions), ctypes.c_size_t], None),
    "fourdgs_reader_open_file": ([ctypes.c_char_p, size_t, P(OpenOptions), P(H)], status_t),
    "fourdgs_reader_open_memory": ([vp, size_t, P(OpenOptions), P(H)], status_t),
    "fourdgs_reader_open_url": ([ctypes.c_char_p, size_t, P(OpenOptions), P(H)], status_t),
    "fourdgs_reader_free": ([H], None),
    "fourdgs_reader_scene_info": ([H, P(SceneInfo)], status_t),
    "fourdgs_reader_header_attribute": ([H, size_t, P(String), P(String)], status_t),
    "fourdgs_reader_quantization_bound": ([H, size_t, P(String), P(String)], status_t),
    "fourdgs_reader_window": ([H, size_t, P(dbl), P(dbl)], status_t),
    "fourdgs_reader_metadata": ([H, size_t, P(String), P(size_t)], status_t),
    "fourdgs_reader_metadata_entry": ([H, size_t, size_t, P(String), P(String)], status_t),
    "fourdgs_reader_attachment": ([H, size_t, P(AttachmentInfo)], status_t),
    "fourdgs_reader_read_payload": ([H, Payload, vp, size_t, P(size_t)], status_t),
    "fourdgs_reader_camera": ([H, P(CameraInfo)], status_t),
    "fourdgs_reader_camera_keyframe": ([H, size_t, P(CameraKeyframe)], status_t),
    "fourdgs_reader_camera_at": ([H, dbl, P(dbl), P(dbl), P(dbl)], status_t),
    "fourdgs_reader_audio_source": ([H, size_t, P(AudioSourceInfo)], status_t),
    "fourdgs_reader_audio_keyframe": ([H, size_t, size_t, P(AudioKeyframe)], status_t),
    "fourdgs_reader_audio_state_at": ([H, size_t, dbl, P(AudioState)], status_t),
    "fourdgs_reader_coordinate_frame": ([H, size_t, P(CoordinateFrame)], status_t),
    "fourdgs_reader_sensor": ([H, size_t, P(Sensor)], status_t),
    "fourdgs_reader_rig_trajectory": ([H, size_t, P(String), P(u32), P(size_t)], status_t),
    "fourdgs_reader_rig_trajectory_sample": ([H, size_t, size_t, P(PoseSample)], status_t),
    "fourdgs_reader_geodetic_anchor": ([H, size_t, P(GeodeticAnchor)], status_t),
    "fourdgs_reader_object": ([H, size_t, P(ObjectInfo)], status_t),
    "fourdgs_reader_object_track": ([H, size_t, P(u32), P(u32), P(size_t)], status_t),
    "fourdgs_reader_object_track_sample": ([H, size_t, size_t, P(PoseSample)], status_t),
    "fourdgs_reader_chunk_info": ([H, size_t, P(ChunkInfo)], status_t),
    "fourdgs_reader_chunk_band": ([H, size_t, size_t, P(u32), P(u64), P(u64)], status_t),
    "fourdgs_reader_summary_offset": ([H, size_t, P(u32), P(u64), P(u64)], status_t),
    "fourdgs_reader_skipped_record": ([H, size_t, P(u32), P(u64), P(u64)], status_t),
    "fourdgs_frame_create": ([vp, P(H)], status_t),
    "fourdgs_frame_free": ([H], None),
    "fourdgs_reader_evaluate": ([H, dbl, P(EvaluateOptions), H], status_t),
    "fourdgs_frame_columns_get": ([H, P(FrameColumns)], status_t),
    "fourdgs_block_create": ([vp, P(H)], status_t),
    "fourdgs_block_free": ([H], None),
    "fourdgs_block_columns_get": ([H, P(BlockColumns)], status_t),
    "fourdgs_block_info_get": ([H, P(BlockInfo)], status_t),
    "fourdgs_reader_read_all": ([H, H], status_t),
    "fourdgs_reader_state_at": ([H, dbl, H], status_t),
    "fourdgs_reader_evaluate_block": ([H, H, dbl, P(EvaluateOptions), H], status_t),
    "fourdgs_stream_open_fd": ([ctypes.c_int, u32, P(OpenOptions), P(H)], status_t),
    "fourdgs_stream_open_callbacks": ([P(StreamCallbacks), P(OpenOptions), P(H)], status_t),
    "fourdgs_stream_open_url": ([ctypes.c_char_p, size_t, P(OpenOptions), P(H)], status_t),
    "fourdgs_stream_free": ([H], None),
    "fourdgs_stream_scene": ([H, P(H)], status_t),
    "fourdgs_stream_next_block": ([H, H, P(u32)], status_t),
    "fourdgs_validate_file": ([ctypes.c_char_p, size_t, P(OpenOptions), P(H)], status_t),
    "fourdgs_validate_memory": ([vp, size_t, P(OpenOptions), P(H)], status_t),
    "fourdgs_validate_url": ([ctypes.c_char_p, size_t, P(OpenOptions), P(H)], status_t),
    "fourdgs_validation_free": ([H], None),
    "fourdgs_validation_summary_get": ([H, P(ValidationSummary)], status_t),
    "fourdgs_validation_finding": ([H, size_t, P(FindingInfo)], status_t),
    "fourdgs_writer_options_init_sized": ([P(WriterOptions), ctypes.c_size_t], None),
    "fourdgs_writer_create": ([P(WriterOptions), P(H)], status_t),
    "fourdgs_writer_free": ([H], None),
    "fourdgs_writer_add_gaussians": ([H, P(GaussianBatch)], status_t),
    "fourdgs_writer_add_header_attribute": ([H, ctypes.c_char_p, size_t, ctypes.c_char_p, size_t],
                                            status_t),
    "fourdgs_writer_add_metadata": ([H, ctypes.c_char_p, size_t, P(KeyValue), size_t], status_t),
    "fourdgs_writer_add_attachment": ([H, ctypes.c_char_p, size_t, ctypes.c_char_p, size_t, vp,
                                       size_t], status_t),
    "fourdgs_writer_set_camera": ([H, dbl, P(dbl), P(dbl), P(CameraKeyframe), size_t,
                                   ctypes.c_char_p, size_t, u32], status_t),
    "fourdgs_writer_add_audio_source": ([H, P(AudioSourceInfo), P(AudioKeyframe), size_t, vp,
                                         size_t], status_t),
    "fourdgs_writer_add_coordinate_frame": ([H, P(CoordinateFrame)], status_t),
    "fourdgs_writer_add_sensor": ([H, P(Sensor)], status_t),
    "fourdgs_writer_add_rig_trajectory": ([H, ctypes.c_char_p, size_t, u32, P(PoseSample), size_t],
                                          status_t),
    "fourdgs_writer_add_geodetic_anchor": ([H, P(GeodeticAnchor)], status_t),
    "fourdgs_writer_add_object": ([H, P(ObjectInfo), u32], status_t),
    "fourdgs_writer_add_object_track": ([H, u32, u32, P(PoseSample), size_t], status_t),
    "fourdgs_writer_finish_file": ([H, ctypes.c_char_p, size_t], status_t),
    "fourdgs_writer_finish_memory": ([H, P(vp), P(size_t)], status_t),
    "fourdgs_writer_report": ([H, P(WriteReport)], status_t),
    "fourdgs_stream_writer_create_file": ([H, P(StreamDeclaration), ctypes.c_char_p, size_t, P(H)],
                                          status_t),
    "fourdgs_stream_writer_add_window": ([H, u32, P(GaussianBatch)], status_t),
    "fourdgs_stream_writer_add_chunk": ([H, P(GaussianBatch)], status_t),
    "fourdgs_stream_writer_finish": ([H], status_t),
    "fourdgs_stream_writer_report": ([H, P(WriteReport)], status_t),
    "fourdgs_stream_writer_free": ([H], None),
}
_lib: Optional[ctypes.CDLL] = None
_lib_path: Optional[str] = None
_lock = threading.Lock()


def _build_dirs() -> Iterator[Path]:
    """Build trees to look in: $FOURDGS_BUILD_DIR, then `build/` of the source checkout this
    package sits in (python/fourdgs inside the repository), then of the checkout it was installed
    from (recorded at install time in _origin.py)."""
    env = os.environ.get("FOURDGS_BUILD_DIR")
    if env:
        yield Path(env)
    roots: List[Path] = [Path(__file__).resolve().parent.parent.parent]
    try:
        from . import _origin  # written by setup.py at install time
        roots.append(Path(_origin.SOURCE_ROOT))
    except ImportError:
        pass
    for root in roots:
        if (root / "capi" / "fourdgs.h").is_file():
            yield root / "build"


def candidates() -> List[str]:
    """Where the library is looked for, in order (the first that loads wins): the build trees,
    the install prefix, then the system loader by name."""
    out: List[str] = []
    for build in _build_dirs():
        out += [str(build / "capi" / name) for name in LIBRARY_NAMES]
    prefixes = [sys.prefix, "/usr/local"]
    for prefix in dict.fromkeys(prefixes):
        for libdir in ("lib", "lib64", f"lib/{_multiarch()}"):
            out += [os.path.join(prefix, libdir, name) for name in LIBRARY_NAMES]
    found = ctypes.util.find_library("fourdgs-c")
    if found:
        out.append(found)
    out.append(LIBRARY_NAMES[0])  # the loader's own search path (LD_LIBRARY_PATH, ld.so.cache)
    return out


def _multiarch() -> str:
    return getattr(sys.implementation, "_multiarch", "") or "x86_64-linux-gnu"


def _declare(library: ctypes.CDLL) -> None:
    for name, (args, res) in _SIGNATURES.items():
        fn = getattr(library, name)
        fn.argtypes = args
        fn.restype = res


def _try_load(path: str) -> Optional[ctypes.CDLL]:
    looks_like_path = os.sep in path
    if looks_like_path and not os.path.exists(path):
        return None
    try:
        return ctypes.CDLL(path)
    except OSError:
        return None


def load(path: Optional[str] = None) -> ctypes.CDLL:
    """Loads libfourdgs-c once: `path`, else $FOURDGS_C_LIBRARY, else the first of candidates().
    Raises Error (refusal "library-not-found" or "library-too-old") when none fits."""
    global _lib, _lib_path
    with _lock:
        if _lib is not None and path is None:
            return _lib
        chosen = path or os.environ.get("FOURDGS_C_LIBRARY")
        tried = [chosen] if chosen else candidates()
        library = None
        for candidate in tried:
            library = _try_load(candidate)
            if library is not None:
                chosen = candidate
                break
        # No library to name these statuses: the two are spelled here (fourdgs_status_name's).
        if library is None:
            raise Error(IO, "library-not-found",
                        "libfourdgs-c was not found (tried " + ", ".join(tried) + "); build it "
                        "(cmake --build build --target fourdgs_c), install it, or set "
                        "FOURDGS_C_LIBRARY to its path", kind="io")
        missing = [n for n in _SIGNATURES if not hasattr(library, n)]
        if missing:
            raise Error(UNSUPPORTED, "library-too-old",
                        f"{chosen} lacks {', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}:"
                        " rebuild libfourdgs-c from this checkout", kind="unsupported")
        _declare(library)
        abi = library.fourdgs_abi_version()
        if abi != ABI_VERSION:
            raise Error(UNSUPPORTED, "library-too-old",
                        f"{chosen} has C ABI version {abi}; this package needs {ABI_VERSION}",
                        kind="unsupported")
        _lib, _lib_path = library, chosen
        return library


def lib() -> ctypes.CDLL:
    return _lib if _lib is not None else load()


def library_path() -> str:
    """The path (or name) the loaded library was found under."""
    lib()
    assert _lib_path is not None
    return _lib_path


def error_from_last(status: int) -> Error:
    e = ErrorInfo()
    lib().fourdgs_last_error(ctypes.byref(e))
    return Error(status, e.refusal.text(), e.message.text(),
                 None if e.offset == NO_OFFSET else int(e.offset))


def check(status: int) -> None:
    """Raises the calling thread's last error when `status` is not FOURDGS_OK."""
    if status != OK:
        raise error_from_last(status)


# fourdgs_enum (fourdgs_binding_support.h): the enums whose spellings the library gives.
ENUM_TEMPORAL_MODEL, ENUM_BLOCK_KIND, ENUM_PLAYBACK_STATE, ENUM_LATE_REASON = 1, 2, 3, 4
ENUM_SEVERITY = 5  # from 1: not an EnumNames (which reads values 0, 1, ... up to the first gap)
ENUM_AXIS, ENUM_LENGTH_UNIT, ENUM_CAMERA_MODEL, ENUM_INTERPOLATION = 6, 7, 8, 9


class EnumNames(Sequence[str]):
    """The library's spellings of the values 0, 1, ... of one C ABI enum (fourdgs_enum_name), a
    read-only sequence indexed by value; asked of the library on first use, so importing the
    package does not load it."""

    def __init__(self, which: int):
        self._which = which
        self._names: Optional[Tuple[str, ...]] = None

    def _all(self) -> Tuple[str, ...]:
        if self._names is None:
            names: List[str] = []
            while True:
                name = lib().fourdgs_enum_name(self._which, len(names))
                if name is None:
                    break
                names.append(name.decode())
            self._names = tuple(names)
        return self._names

    def __getitem__(self, i):  # type: ignore[override]
        return self._all()[i]

    def __len__(self) -> int:
        return len(self._all())

    def __eq__(self, other: object) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, (tuple, list, EnumNames)) else other)

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return repr(self._all())


def status_name(status: int) -> str:
    """The library's name of a fourdgs_status ("malformed", ...; "unknown" for a number it does not
    define), or "unknown" when there is no library to ask."""
    try:
        library = lib()
    except Error:
        return "unknown"
    return library.fourdgs_status_name(status).decode()


def sh_coefficients() -> "Tuple[float, ...]":
    """The SH coefficient each SH byte 0..255 stands for (§6.5), as the library maps it."""
    global _sh_table
    if _sh_table is None:
        _sh_table = tuple(lib().fourdgs_sh_coefficient(b) for b in range(256))
    return _sh_table


_sh_table: "Optional[Tuple[float, ...]]" = None
