"""fourdgs.play: the C library's player from Python. Every frame it gives on time is
Scene.evaluate at the same instant (the C++ state_at + evaluate the C++ player is tested against),
array for array, bit for bit: scrubbing, on the clock, from a pipe; refusals are the reader's."""
import io
from types import SimpleNamespace

import numpy as np
import pytest

import fourdgs

FILES = ["many-chunks", "extras-audio-sources", "kd-chained", "kd-churn", "kd-mixed-modes"]
COLUMNS = ("center", "scale", "rotation", "color", "object_id", "source", "sh")


def same_frame(got, want):
    assert got.count == want.count
    assert np.float64(got.time).tobytes() == np.float64(want.time).tobytes()
    if want.count:
        for name in COLUMNS:
            assert getattr(got, name).tobytes() == getattr(want, name).tobytes(), name


def evaluated(scene, t):
    """Scene.evaluate at t, or the Error it raises."""
    try:
        return scene.evaluate(t)
    except fourdgs.Error as e:
        return e


def check_at(player, scene, t):
    want = evaluated(scene, t)
    if isinstance(want, fourdgs.Error):
        with pytest.raises(fourdgs.Error) as got:
            player.frame_at(t, wait=True)
        assert got.value.refusal == want.refusal
        return
    frame = player.frame_at(t, wait=True)
    assert not frame.late and frame.reason == "none"
    assert frame.time == t and frame.shown == t
    same_frame(frame, want)


@pytest.mark.parametrize("name", FILES)
def test_scrubbing_gives_the_frames_evaluate_gives(corpus, name):
    path = str(corpus / "valid" / f"{name}.4dgs")
    with fourdgs.open(path) as scene, fourdgs.play(path) as player:
        d = player.duration
        times = list(np.arange(0, d, 1 / 30)) + list(np.arange(d - 0.01, 0, -0.3))
        times += list(np.random.default_rng(25).uniform(0, d, 20)) + [d + 0.5, -0.25, 1.0]
        for t in times:
            check_at(player, scene, float(t))
        assert player.position == 1.0
        assert player.stats["frames"] == len(times)


@pytest.mark.parametrize("name", FILES)
def test_the_clock_forward_backward_and_looping(corpus, name):
    path = str(corpus / "valid" / f"{name}.4dgs")
    with fourdgs.open(path) as scene, fourdgs.play(path, rate=2, playing=True,
                                                   look_ahead=3) as player:
        now, frame = 500.0, None
        times = []
        for phase in range(3):
            if phase == 1:
                player.rate = -3
            if phase == 2:
                player.loop, player.rate = True, 3
                player.play()
            for _ in range(60):
                frame = player.frame(now, wait=True, out=frame)
                same_frame(frame, scene.evaluate(frame.time))
                for k, a in enumerate(frame.audio):
                    assert a == scene.audio_state_at(k, frame.time)
                assert len(frame.audio) == len(scene.audio_sources)
                times.append(frame.time)
                now += 1 / 60
            if phase == 0:
                assert times[1:60] == sorted(times[1:60]) and times[59] > times[1]
            if phase == 1:
                assert player.state == "ended" and times[-1] == 0.0
        assert player.state == "playing" and player.loop


@pytest.mark.parametrize("name", FILES)
def test_changed_rows_name_every_row_that_differs_from_the_previous_frame(corpus, name):
    """Over play, pause, seek, reverse and loop: a row not in frame.changed is the previous
    frame's, bit for bit, and the frame is Scene.evaluate's at its instant."""
    path = str(corpus / "valid" / f"{name}.4dgs")
    with fourdgs.open(path) as scene, fourdgs.play(path, playing=True) as player:
        now, frame, previous = 700.0, None, None
        partial = 0
        for step in range(120):
            if step == 20:
                player.pause()
            if step == 30:
                player.play()
                player.rate = 2
            if step == 50:
                player.seek(player.duration * 0.4)
            if step == 70:
                player.rate = -1
            if step == 90:
                player.loop, player.rate = True, 3
            frame = player.frame(now, wait=True)
            same_frame(frame, scene.evaluate(frame.time))
            changed = frame.changed
            assert changed.dtype == np.uint32
            assert (np.diff(changed.astype(np.int64)) > 0).all()
            if frame.all_changed:
                assert changed.size == 0
            else:
                assert previous is not None and frame.count == previous.count
                assert frame.source.tobytes() == previous.source.tobytes()
                keep = np.ones(frame.count, dtype=bool)
                keep[changed] = False
                for col in COLUMNS:
                    a, b = getattr(frame, col), getattr(previous, col)
                    if a.size:
                        assert a[keep].tobytes() == b[keep].tobytes(), col
                partial += 1
            previous = SimpleNamespace(count=frame.count,
                                       **{c: getattr(frame, c).copy() for c in COLUMNS})
            now += 1 / 60
        assert partial >= 9  # at least the paused frames


def test_a_keyframe_delta_pipe_plays_forward_and_refuses_to_go_back(corpus):
    path = corpus / "valid" / "kd-churn.4dgs"
    data = path.read_bytes()
    with fourdgs.open(str(path)) as scene, fourdgs.play(io.BytesIO(data)) as player:
        for t in np.arange(0, player.duration, 0.1):
            check_at(player, scene, float(t))
        with pytest.raises(fourdgs.Error) as e:
            player.frame_at(0.05, wait=True)
        assert e.value.refusal == "not-seekable"
        with pytest.raises(fourdgs.Error) as e:
            player.rate = -1
        assert e.value.refusal == "not-seekable"
    with pytest.raises(fourdgs.Error) as e:
        fourdgs.play(io.BytesIO((corpus / "valid" / "many-chunks.4dgs").read_bytes()))
    assert e.value.refusal == "not-seekable"


def test_a_damaged_chunk_is_the_readers_refusal_at_the_frames_that_need_it(corpus):
    data = bytearray((corpus / "valid" / "many-chunks.4dgs").read_bytes())
    with fourdgs.open(bytes(data)) as scene:
        chunk = scene.chunks[len(scene.chunks) // 2]
    middle = chunk.offset + chunk.size // 2
    data[middle:middle + 8] = bytes(b ^ 0x5A for b in data[middle:middle + 8])
    damaged = bytes(data)
    refused = 0
    with fourdgs.open(damaged) as scene, fourdgs.play(damaged) as player:
        for t in np.arange(0, player.duration, 1 / 16):
            want = evaluated(scene, float(t))
            refused += isinstance(want, fourdgs.Error)
            check_at(player, scene, float(t))
    assert 0 < refused < 64


def test_frames_are_lent_and_reused(corpus):
    path = str(corpus / "valid" / "kd-chained.4dgs")
    with fourdgs.play(path) as player:
        frame = player.frame_at(1.5, wait=True)
        center = frame.center
        assert not center.flags.writeable
        with pytest.raises(fourdgs.Error) as e:
            player.frame_at(2.5, wait=True, out=frame)  # its center is still referenced
        assert e.value.refusal == "state-in-use"
        del center
        again = player.frame_at(2.5, wait=True, out=frame)
        assert again is frame and frame.time == 2.5
        kept = player.frame_at(3.5, wait=True)
    assert kept.count > 0 and kept.center.shape == (kept.count, 3)  # outlives the player


def test_options_and_a_closed_player_are_refused(corpus):
    path = str(corpus / "valid" / "many-chunks.4dgs")
    with pytest.raises(fourdgs.Error) as e:
        fourdgs.play(path, look_ahead=0)
    assert e.value.refusal == "invalid-option"
    player = fourdgs.play(path)
    frame = player.frame(0.0)  # not waiting: on time or late, never a refusal
    assert frame.late == (frame.reason != "none")
    player.close()
    with pytest.raises(fourdgs.Error) as e:
        player.frame(0.0)
    assert e.value.refusal == "player-closed"
