"""Playback: fourdgs.play → Player, a scene played on a clock by the C library's player
(fourdgs_player_*, docs/playback.md), its frames as numpy arrays lent without a copy."""
from __future__ import annotations

import ctypes
import io
import threading
from typing import List, Optional, Tuple, Union

import numpy as np

from . import _capi as C
from ._errors import Error
from ._scene import Frame, Scene, Source, _new_frame, _take_for_reuse, _tuple, open, stream
from ._types import AudioState

PLAYBACK_STATES = C.EnumNames(C.ENUM_PLAYBACK_STATE)  # the library's spellings
LATE_REASONS = C.EnumNames(C.ENUM_LATE_REASON)


class PlayerOptions(C.Sized):
    _fields_ = [("struct_size", C.size_t), ("look_ahead", C.u32), ("start", C.dbl),
                ("rate", C.dbl), ("loop", C.u32), ("playing", C.u32), ("max_sh_degree", C.u32),
                ("apply_object_tracks", C.u32), ("decode_threads", C.u32), ("prefetch", C.u32),
                ("prefetch_step_sec", C.dbl), ("prefetch_horizon", C.u32),
                ("prefetch_bytes", C.u64), ("stall_timeout_sec", C.dbl)]


class PlayerFrameInfo(C.Sized):
    _fields_ = [("struct_size", C.size_t), ("time", C.dbl), ("shown", C.dbl), ("late", C.u32),
                ("reason", C.u32), ("state", C.u32), ("state_t0", C.dbl), ("state_t1", C.dbl),
                ("audio_count", C.size_t), ("changed_rows", ctypes.POINTER(C.u32)),
                ("changed_count", C.size_t), ("all_changed", C.u32)]


class PlayerInfo(C.Sized):
    _fields_ = [("struct_size", C.size_t), ("state", C.u32), ("loop", C.u32), ("rate", C.dbl),
                ("position", C.dbl), ("duration", C.dbl)] + \
        [(n, C.u64) for n in ("frames", "late_frames", "chunks_decoded", "states_composed",
                              "steps", "discarded", "resident_bytes")]


# The player's entry points join the package's table: load() declares them and refuses a library
# that lacks them ("library-too-old").
_P, _H = C.P, C.H
C._SIGNATURES.update({
    "fourdgs_player_options_init_sized": ([_P(PlayerOptions), ctypes.c_size_t], None),
    "fourdgs_player_create": ([_H, _P(PlayerOptions), _P(_H)], C.status_t),
    "fourdgs_player_free": ([_H], None),
    "fourdgs_player_frame": ([_H, C.dbl, C.u32, _H, _P(PlayerFrameInfo)], C.status_t),
    "fourdgs_player_frame_at": ([_H, C.dbl, C.u32, _H, _P(PlayerFrameInfo)], C.status_t),
    "fourdgs_player_audio_state": ([_H, C.size_t, _P(C.AudioState)], C.status_t),
    "fourdgs_player_play": ([_H], C.status_t),
    "fourdgs_player_pause": ([_H], C.status_t),
    "fourdgs_player_seek": ([_H, C.dbl], C.status_t),
    "fourdgs_player_set_rate": ([_H, C.dbl], C.status_t),
    "fourdgs_player_set_loop": ([_H, C.u32], C.status_t),
    "fourdgs_player_info_get": ([_H, _P(PlayerInfo)], C.status_t),
})


class PlayerFrame(Frame):
    """A Frame (the visible gaussians, numpy arrays lent by the library) with what the player
    says about it:

        time     the instant asked for (the clock's, or frame_at's t)
        shown    the instant the frame was evaluated at: `time`, or when late the nearest one
                 the state shown covers (the picture holds)
        late     True when the state for `time` was not resident yet
        reason   "none", "starting" (nothing resident: the frame is empty), "queued",
                 "fetching" or "decoding"
        state    "paused", "playing" or "ended"
        state_interval  (t0, t1) over which the state shown is state_at's
        audio    [AudioState] of each audio source at `time`
        all_changed  True when any row may differ from the player's previous frame (rows came,
                 went or moved: the first frame, a keyframe, a seek, reverse play, a birth or
                 death, a gaussian that became visible or not): upload the whole frame
        changed  numpy uint32 array, ascending: when not all_changed, the rows that may differ
                 from the player's previous frame; every other row is bit for bit the same
                 (same count, same sources). Empty when all_changed.
    """

    def __init__(self, lender, info: PlayerFrameInfo, audio: List[AudioState]):
        super().__init__(lender)
        self.time = float(info.time)
        self.shown = float(info.shown)
        self.late = bool(info.late)
        self.reason: str = LATE_REASONS[info.reason] if info.reason < len(LATE_REASONS) else "?"
        self.state: str = PLAYBACK_STATES[info.state] if info.state < len(PLAYBACK_STATES) else "?"
        self.state_interval: Tuple[float, float] = (float(info.state_t0), float(info.state_t1))
        self.audio = audio
        self.all_changed = bool(info.all_changed)
        n = int(info.changed_count)
        # A copy: the library's list lasts until the player's next frame.
        self.changed = (np.ctypeslib.as_array(info.changed_rows, shape=(n,)).copy() if n
                        else np.empty(0, dtype=np.uint32))

    def __repr__(self) -> str:
        late = f", late ({self.reason}), shown at {self.shown:g}" if self.late else ""
        return (f"<fourdgs.PlayerFrame t={self.time:g}{late}: {self._count} visible, "
                f"SH degree {self.sh_degree}, {self.state}>")


class Player:
    """A scene played in real time (fourdgs.play): a worker thread of the C library decodes the
    states the next instants need; frame(now) evaluates what is resident at the clock's time and
    never waits for the source unless asked to (wait=True). docs/playback.md says more.

    The clock is the caller's: frame(now) reads it at `now` (seconds, any origin: time.monotonic()
    in a loop); play(), pause(), seek(), rate and loop take effect from the last frame shown.
    frame_at(t) shows scene time t instead (scrubbing). Refusals while playing are the readers'
    own (Error with their identifier), raised by the frame that needs the state.

    A player owns the scene it plays (`scene`, for its properties) and holds it in use:
    close() frees the player, then the scene (scene.close() alone waits for the player's close).
    Frames are asked for by one thread at a time; the controls may come from any thread.
    """

    def __init__(self, scene: Scene, options: PlayerOptions):
        self.scene = scene
        self._lock = threading.Lock()
        self._handle: Optional[int] = None
        self._using = scene._use()
        h = self._using.__enter__()  # the reader stays open while the player plays it
        handle = C.vp()
        try:
            C.check(C.lib().fourdgs_player_create(h, ctypes.byref(options), ctypes.byref(handle)))
        except Error:
            self._using.__exit__(None, None, None)
            self._using = None
            raise
        self._handle = handle.value

    def _h(self) -> int:
        if self._handle is None:
            raise Error(C.INVALID_ARGUMENT, "player-closed", "the player has been closed")
        return self._handle

    # -- lifetime ---------------------------------------------------------------------------

    def close(self) -> None:
        """Stops the worker and frees the player, then the scene. Frames already returned stay
        valid."""
        self._free()
        self.scene.close()

    def _free(self) -> None:
        with self._lock:
            handle, self._handle = self._handle, None
            using, self._using = self._using, None
        if handle:
            C.lib().fourdgs_player_free(handle)
        if using is not None:
            using.__exit__(None, None, None)

    def __del__(self):
        if getattr(self, "_lock", None) is not None:
            self._free()

    def __enter__(self) -> "Player":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._handle is None:
            return f"<fourdgs.Player {self.scene.name} (closed)>"
        return (f"<fourdgs.Player {self.scene.name}: {self.state} at {self.position:g} s of "
                f"{self.duration:g}, rate {self.rate:g}{', looping' if self.loop else ''}>")

    # -- frames -----------------------------------------------------------------------------

    def _frame(self, call, wait: bool, out: Optional[Frame]) -> PlayerFrame:
        lib = C.lib()
        frame = _new_frame() if out is None else _take_for_reuse(out, PlayerFrame)
        info = PlayerFrameInfo()
        try:
            C.check(call(self._h(), int(bool(wait)), frame.handle, ctypes.byref(info)))
        except Error:
            if out is not None:
                Frame.__init__(out, frame)  # as it was: a refused frame changes nothing
            raise
        audio = []
        state = C.AudioState()
        for k in range(info.audio_count):
            C.check(lib.fourdgs_player_audio_state(self._h(), k, ctypes.byref(state)))
            audio.append(AudioState(bool(state.active), state.local_time, state.gain,
                                    _tuple(state.position), _tuple(state.rotation)))
        if out is not None:
            out.__init__(frame, info, audio)
            return out
        return PlayerFrame(frame, info, audio)

    def frame(self, now: float, *, wait: bool = False,
              out: Optional[Frame] = None) -> PlayerFrame:
        """The frame at the clock's time for `now`. On time, exactly Scene.evaluate at that
        instant; late (frame.late), the state shown before, evaluated at frame.shown (empty while
        starting). wait=True blocks until the state is resident (at most stall_timeout).
        `out`: a frame to fill again, reusing its memory (its arrays must no longer be
        referenced, as for Scene.evaluate's out)."""
        lib = C.lib()
        return self._frame(lambda h, w, f, i: lib.fourdgs_player_frame(h, float(now), w, f, i),
                           wait, out)

    def frame_at(self, t: float, *, wait: bool = False,
                 out: Optional[Frame] = None) -> PlayerFrame:
        """The frame at scene time t, which becomes the playhead (scrubbing)."""
        lib = C.lib()
        return self._frame(lambda h, w, f, i: lib.fourdgs_player_frame_at(h, float(t), w, f, i),
                           wait, out)

    # -- control ----------------------------------------------------------------------------

    def play(self) -> None:
        C.check(C.lib().fourdgs_player_play(self._h()))

    def pause(self) -> None:
        C.check(C.lib().fourdgs_player_pause(self._h()))

    def seek(self, t: float) -> None:
        """Moves the playhead (clamped, or wrapped when looping); refused states are retried."""
        C.check(C.lib().fourdgs_player_seek(self._h(), float(t)))

    def _info(self) -> PlayerInfo:
        i = PlayerInfo()
        C.check(C.lib().fourdgs_player_info_get(self._h(), ctypes.byref(i)))
        return i

    @property
    def rate(self) -> float:
        """Playback speed; negative plays backward (a stream: forward only)."""
        return float(self._info().rate)

    @rate.setter
    def rate(self, value: float) -> None:
        C.check(C.lib().fourdgs_player_set_rate(self._h(), float(value)))

    @property
    def loop(self) -> bool:
        return bool(self._info().loop)

    @loop.setter
    def loop(self, value: bool) -> None:
        C.check(C.lib().fourdgs_player_set_loop(self._h(), int(bool(value))))

    @property
    def state(self) -> str:
        """"paused", "playing" or "ended"."""
        return PLAYBACK_STATES[self._info().state]

    @property
    def position(self) -> float:
        """The instant the last frame showed."""
        return float(self._info().position)

    @property
    def duration(self) -> float:
        return float(self._info().duration)

    @property
    def stats(self) -> dict:
        """frames, late_frames, chunks_decoded, states_composed (keyframe-delta states composed
        from their keyframe), steps (forward steps, one delta each), discarded, resident_bytes."""
        i = self._info()
        return {n: int(getattr(i, n)) for n in ("frames", "late_frames", "chunks_decoded",
                                                "states_composed", "steps", "discarded",
                                                "resident_bytes")}


def play(source: Union[Source, io.IOBase], *, look_ahead: int = 2, start: float = 0.0,
         rate: float = 1.0, loop: bool = False, playing: bool = False, sh_degree: int = 3,
         object_tracks: bool = True, decode_threads: int = 1, prefetch: bool = True,
         stall_timeout: float = 10.0) -> Player:
    """Opens a scene and plays it: fourdgs.open(source) for a path, a URL or bytes; a binary
    file object (a pipe, sys.stdin.buffer) is read front to back with fourdgs.stream — a
    keyframe-delta file only, played forward.

    Args:
        look_ahead: states prepared ahead of the one shown (>= 1).
        start, rate, loop, playing: the clock's start (paused unless `playing`).
        sh_degree: SH kept in each frame (0..3); object_tracks: compose the scene's Object
            Tracks.
        decode_threads: threads a gaussian-birth chunk decodes on (0: all cores).
        prefetch: keep the next instants' bytes on their way (remote sources).
        stall_timeout: seconds a state may be late before the frame fails ("playback-stalled";
            0: never).

    Raises:
        Error: the scene's refusal, or the player's ("not-seekable" for a gaussian-birth stream,
            "invalid-option").
    """
    scene = stream(source) if isinstance(source, io.IOBase) else open(source)
    o = PlayerOptions()
    C.lib().fourdgs_player_options_init_sized(ctypes.byref(o), ctypes.sizeof(o))
    o.look_ahead, o.start, o.rate, o.loop, o.playing = look_ahead, start, rate, loop, playing
    o.max_sh_degree, o.apply_object_tracks = sh_degree, int(object_tracks)
    o.decode_threads, o.prefetch, o.stall_timeout_sec = decode_threads, int(prefetch), stall_timeout
    try:
        return Player(scene, o)
    except Error:
        scene.close()
        raise
