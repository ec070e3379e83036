"""fourdgs — .4dgs 4D gaussian-splat files from Python: numpy in, numpy out.

A thin layer over the C ABI of the fourdgs SDK (libfourdgs-c, through ctypes: nothing is
compiled at install time). Every rule of the format, every decode and every write is the C++
library's; this package converts shapes and lends the library's memory to numpy without
copying.

    import fourdgs
    scene = fourdgs.open("scene.4dgs")          # header, windows, extras as properties (or a URL)
    state = scene.state_at(2.5)                 # decoded gaussians: numpy arrays, no copy
    frame = scene.evaluate(2.5)                 # the visible set at t = 2.5 s
    for state in fourdgs.stream(sys.stdin.buffer).blocks():   # front to back, chunk by chunk
        ...
    player = fourdgs.play("scene.4dgs", playing=True)   # a worker decodes ahead
    frame = player.frame(time.monotonic())      # the frame at the clock's time, never waiting
    fourdgs.write("out.4dgs", positions=p, scales=s, rotations=q, colors=c, duration=5.0)
    report = fourdgs.validate("out.4dgs")       # every finding

The shared library is found through $FOURDGS_C_LIBRARY (a path), then a build tree
($FOURDGS_BUILD_DIR, or build/ of the checkout this package sits in or was installed from),
then the install prefix and the system loader (libfourdgs-c.so.0). See docs/python.md.
"""
from ._capi import library_path, load as load_library
from ._errors import Error
from ._ply import PlyCloud, read_ply, write_ply
from ._player import Player, PlayerFrame, play
from ._scene import Frame, Scene, State, Stream, open, sh_coefficients, stream
from ._types import (AXES, CAMERA_MODELS, LENGTH_UNITS, Attachment, AudioKeyframe, AudioSource,
                     AudioState, Camera, CameraKeyframe, CameraView, ChunkInfo, CoordinateFrame,
                     Dynamics, Finding, GeodeticAnchor, Header, Metadata, ObjectInfo, ObjectTrack,
                     PoseSample, Quantization, RigTrajectory, Sensor, Validation, WriteReport)
from ._validate import validate
from ._writer import StreamWriter, Writer, bounds, write

__version__ = "0.1.0"


def version() -> str:
    """The loaded libfourdgs-c's version string."""
    from . import _capi
    return _capi.lib().fourdgs_version().decode()


__all__ = [
    "Error", "open", "stream", "Scene", "Stream", "State", "Frame", "sh_coefficients", "write",
    "play", "Player", "PlayerFrame",
    "Writer", "StreamWriter", "bounds", "validate", "read_ply", "write_ply", "PlyCloud", "version",
    "library_path", "load_library", "Header", "Quantization", "ChunkInfo", "Metadata",
    "Attachment", "Camera", "CameraKeyframe", "CameraView", "AudioSource", "AudioKeyframe",
    "AudioState", "CoordinateFrame", "Sensor", "PoseSample", "RigTrajectory", "GeodeticAnchor",
    "Dynamics", "ObjectInfo", "ObjectTrack", "WriteReport", "Finding", "Validation", "AXES",
    "LENGTH_UNITS", "CAMERA_MODELS",
]
