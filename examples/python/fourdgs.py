"""fourdgs through its C ABI, with nothing but the standard library (ctypes, array).

    import fourdgs
    with fourdgs.Reader("scene.4dgs") as reader:
        print(reader.info()["gaussian_count"])
        frame = reader.evaluate(1.5)          # the visible gaussians at t = 1.5 s
        print(frame.count, frame.center[:3])  # array.array('f') columns

The shared library is found through $FOURDGS_C_LIBRARY, then the system's library path
(libfourdgs-c.so.0). Errors raise FourdgsError with the status, the refusal identifier, the
message and the byte offset of the C API's last error.
"""
import array
import ctypes
import ctypes.util
import os

__all__ = ["FourdgsError", "Reader", "Frame", "validate", "version", "load_library"]

_u8, _u32, _u64, _i32, _i64 = ctypes.c_uint8, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32, ctypes.c_int64
_size, _dbl, _flt, _vp = ctypes.c_size_t, ctypes.c_double, ctypes.c_float, ctypes.c_void_p

STATUS_NAMES = ["ok", "malformed", "truncated", "unsupported", "io", "invalid-argument", "limit",
                "out-of-memory", "internal", "buffer-too-small", "not-found"]
NO_OFFSET = 2**64 - 1


class _String(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("size", _size)]

    def text(self):
        return ctypes.string_at(self.data, self.size).decode("utf-8", "replace") if self.size else ""


class _Sized(ctypes.Structure):
    """A size-tagged struct: struct_size is set to what this module was written against."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.struct_size = ctypes.sizeof(self)


class _Error(_Sized):
    _fields_ = [("struct_size", _size), ("status", ctypes.c_int), ("refusal", _String),
                ("message", _String), ("offset", _u64)]


class _SceneInfo(_Sized):
    _fields_ = [("struct_size", _size), ("profile", _String), ("library", _String),
                ("temporal_model_name", _String), ("temporal_model", _u32),
                ("duration_sec", _dbl), ("gaussian_count", _u64), ("cutoff", _dbl),
                ("aabb", _dbl * 6), ("sh_degree", _u32), ("header_flags", _u32),
                ("quantization_scheme", _String), ("pos_origin", _dbl * 3)] + \
        [(n, _dbl) for n in ("step_pos", "step_scale_log", "step_rot", "step_rgb", "step_alpha",
                             "step_motion", "step_time", "step_sigma_log")] + \
        [("step_sh", _u32), ("sh_depth_count", _u32), ("sh_depths", _u8 * 3)] + \
        [(n, _u64) for n in ("header_attribute_count", "quantization_bound_count", "window_count",
                             "chunk_count", "metadata_count", "attachment_count",
                             "audio_source_count", "coordinate_frame_count", "sensor_count",
                             "rig_trajectory_count", "geodetic_anchor_count", "object_count",
                             "object_track_count", "skipped_record_count")] + \
        [(n, _u32) for n in ("has_camera", "has_object_table", "object_embedding_dim",
                             "index_built_by_scan", "summary_crc_verified")]


class _EvaluateOptions(_Sized):
    _fields_ = [("struct_size", _size), ("max_sh_degree", _u32), ("apply_object_tracks", _u32),
                ("append", _u32)]


class _FrameBuffers(_Sized):
    _fields_ = [("struct_size", _size), ("capacity", _size),
                ("center", ctypes.POINTER(_flt)), ("scale", ctypes.POINTER(_flt)),
                ("rotation", ctypes.POINTER(_flt)), ("color", ctypes.POINTER(_flt)),
                ("object_id", ctypes.POINTER(_u32)), ("sh_degree", _u32),
                ("sh_bytes", ctypes.POINTER(_u8)), ("sh_floats", ctypes.POINTER(_flt))]


class _ValidationSummary(_Sized):
    _fields_ = [("struct_size", _size)] + [(n, _u64) for n in (
        "finding_count", "errors", "warnings", "file_size", "records", "chunks")] + \
        [(n, _u32) for n in ("truncated", "findings_capped", "valid")]


class _Finding(_Sized):
    _fields_ = [("struct_size", _size), ("severity", _u32), ("rule", _String), ("field", _String),
                ("value", _String), ("section", _String), ("message", _String), ("offset", _u64)]


class FourdgsError(Exception):
    def __init__(self, status, refusal, message, offset):
        self.status = status
        self.status_name = STATUS_NAMES[status] if 0 <= status < len(STATUS_NAMES) else "unknown"
        self.refusal = refusal
        self.message = message
        self.offset = None if offset == NO_OFFSET else offset
        at = "" if self.offset is None else f" (at byte {self.offset})"
        super().__init__(f"{self.status_name}: {refusal}: {message}{at}")


_lib = None


def load_library(path=None):
    """Loads libfourdgs-c once and declares the functions this module uses."""
    global _lib
    if _lib is not None and path is None:
        return _lib
    path = path or os.environ.get("FOURDGS_C_LIBRARY") or ctypes.util.find_library("fourdgs-c") \
        or "libfourdgs-c.so.0"
    lib = ctypes.CDLL(path)
    P = ctypes.POINTER
    sigs = {
        "fourdgs_version": ([], ctypes.c_char_p),
        "fourdgs_abi_version": ([], _u32),
        "fourdgs_last_error": ([P(_Error)], ctypes.c_int),
        "fourdgs_reader_open_file": ([ctypes.c_char_p, _size, _vp, P(_vp)], ctypes.c_int),
        "fourdgs_reader_open_memory": ([ctypes.c_char_p, _size, _vp, P(_vp)], ctypes.c_int),
        "fourdgs_reader_open_url": ([ctypes.c_char_p, _size, _vp, P(_vp)], ctypes.c_int),
        "fourdgs_reader_free": ([_vp], None),
        "fourdgs_reader_scene_info": ([_vp, P(_SceneInfo)], ctypes.c_int),
        "fourdgs_reader_header_attribute": ([_vp, _size, P(_String), P(_String)], ctypes.c_int),
        "fourdgs_reader_metadata": ([_vp, _size, P(_String), P(_size)], ctypes.c_int),
        "fourdgs_reader_metadata_entry": ([_vp, _size, _size, P(_String), P(_String)], ctypes.c_int),
        "fourdgs_frame_create": ([_vp, P(_vp)], ctypes.c_int),
        "fourdgs_frame_free": ([_vp], None),
        "fourdgs_reader_evaluate": ([_vp, _dbl, P(_EvaluateOptions), _vp], ctypes.c_int),
        "fourdgs_frame_count": ([_vp, P(_size)], ctypes.c_int),
        "fourdgs_frame_copy": ([_vp, P(_FrameBuffers), P(_size)], ctypes.c_int),
        "fourdgs_validate_file": ([ctypes.c_char_p, _size, _vp, P(_vp)], ctypes.c_int),
        "fourdgs_validate_url": ([ctypes.c_char_p, _size, _vp, P(_vp)], ctypes.c_int),
        "fourdgs_validation_free": ([_vp], None),
        "fourdgs_validation_summary_get": ([_vp, P(_ValidationSummary)], ctypes.c_int),
        "fourdgs_validation_finding": ([_vp, _size, P(_Finding)], ctypes.c_int),
    }
    for name, (args, res) in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = res
    _lib = lib
    return lib


def _check(status):
    if status != 0:
        e = _Error()
        _lib.fourdgs_last_error(ctypes.byref(e))
        raise FourdgsError(status, e.refusal.text(), e.message.text(), e.offset)


def version():
    return load_library().fourdgs_version().decode()


class Frame:
    """One evaluated instant: the visible gaussians as array.array columns."""

    def __init__(self, time, count, center, scale, rotation, color, object_id, sh_degree, sh):
        self.time, self.count = time, count
        self.center, self.scale, self.rotation, self.color = center, scale, rotation, color
        self.object_id, self.sh_degree, self.sh = object_id, sh_degree, sh


def _floats(n):
    a = array.array("f", bytes(4 * n))
    return a, ctypes.cast(a.buffer_info()[0], ctypes.POINTER(_flt)) if n else None


def _is_url(path):
    return isinstance(path, str) and path[:8].lower().startswith(("http://", "https://"))


class Reader:
    """A .4dgs file opened for random access (from a path, an http(s):// URL, or bytes)."""

    def __init__(self, path=None, data=None):
        load_library()
        self._handle = _vp()
        self._frame = _vp()
        if path is not None:
            p = os.fsencode(path)
            open_fn = _lib.fourdgs_reader_open_url if _is_url(path) else _lib.fourdgs_reader_open_file
            _check(open_fn(p, len(p), None, ctypes.byref(self._handle)))
        else:
            self._data = bytes(data)  # the C reader borrows it for its lifetime
            _check(_lib.fourdgs_reader_open_memory(self._data, len(self._data), None,
                                                   ctypes.byref(self._handle)))
        _check(_lib.fourdgs_frame_create(None, ctypes.byref(self._frame)))

    def close(self):
        if getattr(self, "_frame", None):
            _lib.fourdgs_frame_free(self._frame)
            self._frame = None
        if getattr(self, "_handle", None):
            _lib.fourdgs_reader_free(self._handle)
            self._handle = None

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def info(self):
        i = _SceneInfo()
        _check(_lib.fourdgs_reader_scene_info(self._handle, ctypes.byref(i)))
        out = {}
        for name, _ in _SceneInfo._fields_[1:]:
            v = getattr(i, name)
            if isinstance(v, _String):
                v = v.text()
            elif hasattr(v, "_length_"):
                v = list(v)
            out[name] = v
        out["sh_depths"] = out["sh_depths"][:out["sh_depth_count"]]
        out["header_attributes"] = {}
        for k in range(out["header_attribute_count"]):
            key, value = _String(), _String()
            _check(_lib.fourdgs_reader_header_attribute(self._handle, k, ctypes.byref(key),
                                                        ctypes.byref(value)))
            out["header_attributes"][key.text()] = value.text()
        return out

    def metadata(self):
        """[(record name, {key: value})] in file order."""
        out = []
        info = _SceneInfo()
        _check(_lib.fourdgs_reader_scene_info(self._handle, ctypes.byref(info)))
        for r in range(info.metadata_count):
            name, n = _String(), _size()
            _check(_lib.fourdgs_reader_metadata(self._handle, r, ctypes.byref(name), ctypes.byref(n)))
            entries = {}
            for e in range(n.value):
                key, value = _String(), _String()
                _check(_lib.fourdgs_reader_metadata_entry(self._handle, r, e, ctypes.byref(key),
                                                          ctypes.byref(value)))
                entries[key.text()] = value.text()
            out.append((name.text(), entries))
        return out

    def evaluate(self, t, sh_degree=0, object_tracks=True):
        """The visible gaussians at scene time t, copied into array.array columns (SH as floats
        up to sh_degree)."""
        opts = _EvaluateOptions(max_sh_degree=sh_degree, apply_object_tracks=int(object_tracks))
        _check(_lib.fourdgs_reader_evaluate(self._handle, float(t), ctypes.byref(opts), self._frame))
        n = _size()
        _check(_lib.fourdgs_frame_count(self._frame, ctypes.byref(n)))  # the size query
        count = n.value
        center, center_p = _floats(3 * count)
        scale, scale_p = _floats(3 * count)
        rotation, rotation_p = _floats(4 * count)
        color, color_p = _floats(4 * count)
        ids = array.array("I", bytes(4 * count))
        per = 3 * ((sh_degree + 1) ** 2 - 1)
        sh, sh_p = _floats(per * count)
        b = _FrameBuffers(capacity=count, center=center_p, scale=scale_p, rotation=rotation_p,
                          color=color_p, sh_degree=sh_degree, sh_floats=sh_p)
        if count:
            b.object_id = ctypes.cast(ids.buffer_info()[0], ctypes.POINTER(_u32))
        written = _size()
        _check(_lib.fourdgs_frame_copy(self._frame, ctypes.byref(b), ctypes.byref(written)))
        return Frame(float(t), written.value, center, scale, rotation, color, ids, sh_degree, sh)


def validate(path):
    """Every finding of the validator: a list of dicts (severity, rule, field, value, section,
    message, offset)."""
    load_library()
    p = os.fsencode(path)
    handle = _vp()
    validate_fn = _lib.fourdgs_validate_url if _is_url(path) else _lib.fourdgs_validate_file
    _check(validate_fn(p, len(p), None, ctypes.byref(handle)))
    try:
        s = _ValidationSummary()
        _check(_lib.fourdgs_validation_summary_get(handle, ctypes.byref(s)))
        findings = []
        for i in range(s.finding_count):
            f = _Finding()
            _check(_lib.fourdgs_validation_finding(handle, i, ctypes.byref(f)))
            findings.append({"severity": "error" if f.severity == 1 else "warning",
                             "rule": f.rule.text(), "field": f.field.text(),
                             "value": f.value.text(), "section": f.section.text(),
                             "message": f.message.text(),
                             "offset": None if f.offset == NO_OFFSET else f.offset})
        return findings
    finally:
        _lib.fourdgs_validation_free(handle)
