"""Plain records of a scene: what the readers return and the writers take (§5 of the spec)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple, Union

Vec3 = Tuple[float, float, float]
Quat = Tuple[float, float, float, float]  # x y z w

from ._capi import (ENUM_AXIS, ENUM_CAMERA_MODEL, ENUM_INTERPOLATION, ENUM_LENGTH_UNIT,
                    EnumNames)

# Registry spellings of enumerated fields, by their number in the file: the library's
# (fourdgs_enum_name), read when first used.
AXES = EnumNames(ENUM_AXIS)
LENGTH_UNITS = EnumNames(ENUM_LENGTH_UNIT)
CAMERA_MODELS = EnumNames(ENUM_CAMERA_MODEL)
INTERPOLATIONS = EnumNames(ENUM_INTERPOLATION)  # Rig Trajectory and Object Track byte


def spelling(table: Sequence[str], value: int) -> str:
    return table[value] if 0 <= value < len(table) else str(value)


def number(table: Sequence[str], value: Union[int, str], what: str) -> int:
    """An enumerated field given by name or number, as its number."""
    if isinstance(value, str):
        if value not in table:
            from ._errors import Error
            raise Error(5, "value-out-of-range", f"{what} {value!r} is not one of {list(table)}")
        return table.index(value)
    return int(value)


@dataclass(frozen=True)
class Header:
    """The Header record (§5.1)."""
    profile: str
    library: str
    temporal_model: str  # "gaussian-birth" or "keyframe-delta"
    duration_sec: float
    gaussian_count: int
    cutoff: float
    aabb: Tuple[float, float, float, float, float, float]  # min xyz, max xyz
    sh_degree: int
    flags: int
    attributes: List[Tuple[str, str]]  # in file order; a key may repeat (§2)


@dataclass(frozen=True)
class Quantization:
    """The Quantization record (§5.3): the grid every value was snapped to, and its bounds."""
    scheme: str
    pos_origin: Vec3
    step_pos: float
    step_scale_log: float
    step_rot: float
    step_rgb: float
    step_alpha: float
    step_motion: float
    step_time: float
    step_sigma_log: float
    step_sh: int
    bounds: dict  # key -> value as stored (the §5.3 grammar)
    sh_depths: Tuple[int, ...]  # per band 1..3 when declared, else ()
    sh_depths_malformed: bool = False  # declared but malformed: read as none (M024)


@dataclass(frozen=True)
class ChunkInfo:
    """One Chunk Index entry (§5.8): the chunk record's range and interval."""
    index: int
    t0: float
    t1: float
    offset: int
    size: int
    gaussian_count: int
    fetch_bytes: int  # what decoding fetches: record + wanted SH bands (keyframe-delta: its chain)
    kind: int  # 0 keyframe / Chunk, 1 Delta Chunk
    # The entry's six §5.8 keyframe-delta fields (chunk_kind, delta_mode, reference_offset,
    # keyframe_offset, depth, live_count), None when it has none; its SH band ranges as
    # (band, offset, length).
    keyframe: Optional[dict] = None
    bands: Tuple[Tuple[int, int, int], ...] = ()


@dataclass(frozen=True)
class Metadata:
    """A Metadata record (§5.11)."""
    name: str
    entries: List[Tuple[str, str]]


@dataclass(frozen=True)
class Attachment:
    """An Attachment record (§5.13); read its bytes with Scene.attachment_data(index)."""
    name: str
    media_type: str
    offset: int
    size: int


@dataclass(frozen=True)
class CameraKeyframe:
    time: float
    position: Vec3
    target: Vec3


@dataclass(frozen=True)
class Camera:
    """The Camera record (§5.10): a default view and an optional keyed path."""
    fov_y_deg: float = 60.0
    position: Vec3 = (0.0, 0.0, 5.0)
    target: Vec3 = (0.0, 0.0, 0.0)
    keyframes: List[CameraKeyframe] = field(default_factory=list)
    interpolation: str = "linear"  # or "spline"
    loop: bool = False


@dataclass(frozen=True)
class CameraView:
    position: Vec3
    target: Vec3
    fov_y_deg: float


@dataclass(frozen=True)
class AudioKeyframe:
    time: float
    position: Vec3
    rotation: Quat


@dataclass(frozen=True)
class AudioSource:
    """An Audio Source (§5.16; a legacy Audio record reads as source 0 with legacy True). When
    read, offset and size locate its encoded payload (Scene.audio_data)."""
    source_id: int = 0
    name: str = ""
    codec: str = "pcm-s16le"
    channel_layout: str = "mono"
    interpolation: str = "linear"
    start_sec: float = 0.0
    duration_sec: float = 1.0
    gain: float = 1.0
    flags: int = 0  # bit 0 spatial, bit 1 loop
    position: Vec3 = (0.0, 0.0, 0.0)
    rotation: Quat = (0.0, 0.0, 0.0, 1.0)
    keyframes: List[AudioKeyframe] = field(default_factory=list)
    legacy: bool = False
    offset: int = 0
    size: int = 0


@dataclass(frozen=True)
class AudioState:
    """What a source plays at scene time t (§7.1, §7.2)."""
    active: bool
    local_time: float
    gain: float
    position: Vec3
    rotation: Quat


@dataclass(frozen=True)
class CoordinateFrame:
    """A Coordinate Frame (§5.15.2). Axes and units by their registry spelling."""
    name: str = ""
    handedness: int = 0  # 0 unspecified, 1 right, 2 left
    up_axis: str = "+y"
    forward_axis: str = "-z"
    length_unit: str = "unspecified"
    metres_per_unit: float = 0.0


@dataclass(frozen=True)
class Sensor:
    """A Sensor Calibration (§5.15.3)."""
    name: str = ""
    modality: str = ""
    rig_name: str = ""
    camera_model: str = "none"
    width_px: int = 0
    height_px: int = 0
    fx: float = 0.0
    fy: float = 0.0
    cx: float = 0.0
    cy: float = 0.0
    distortion: Tuple[float, ...] = ()
    rotation: Quat = (0.0, 0.0, 0.0, 1.0)
    translation: Vec3 = (0.0, 0.0, 0.0)
    pose_reference: int = 0  # 0 scene, 1 rig


@dataclass(frozen=True)
class PoseSample:
    time: float
    rotation: Quat
    translation: Vec3


@dataclass(frozen=True)
class RigTrajectory:
    """A Rig Trajectory (§5.15.4); interpolation 0 linear, 1 step."""
    name: str
    samples: List[PoseSample]
    interpolation: int = 0


@dataclass(frozen=True)
class GeodeticAnchor:
    """A Geodetic Anchor (§5.15.5)."""
    frame_name: str = ""
    latitude_deg: float = 0.0
    longitude_deg: float = 0.0
    altitude_m: float = 0.0
    heading_deg: float = 0.0


@dataclass(frozen=True)
class Dynamics:
    velocity: Vec3
    angular_velocity: Vec3
    acceleration: Vec3


@dataclass(frozen=True)
class ObjectInfo:
    """An Object Table entry (§5.15.6)."""
    object_id: int
    label: str = ""
    anchor: Vec3 = (0.0, 0.0, 0.0)
    dynamics: Optional[Dynamics] = None
    embedding: Optional[Tuple[float, ...]] = None


@dataclass(frozen=True)
class ObjectTrack:
    """An Object Track (§5.15.7): the pose of object `object_id` over time; interpolation
    0 linear, 1 step."""
    object_id: int
    samples: List[PoseSample]
    interpolation: int = 0


@dataclass(frozen=True)
class WriteReport:
    """What a write produced."""
    gaussian_count: int
    chunk_count: int
    bytes_written: int
    aabb: Tuple[float, float, float, float, float, float]


@dataclass(frozen=True)
class Finding:
    """One problem the validator found."""
    severity: str  # "error" or "warning"
    rule: str
    field: str
    value: str
    section: str
    message: str
    offset: Optional[int]


@dataclass(frozen=True)
class Validation:
    """The validator's report: every finding, not just the first."""
    valid: bool
    errors: int
    warnings: int
    file_size: int
    records: int
    chunks: int
    truncated: bool
    findings_capped: bool
    findings: List[Finding]
