"""Zero copy (the arrays are the library's memory), lifetimes (arrays outlive the scene and the
State), threads (two threads reading one file)."""
import ctypes
import gc
import threading
import weakref

import numpy as np
import pytest

import fourdgs
from fourdgs import _capi as C
from fourdgs._lend import Lender, LentColumn


def c_block_columns(state: fourdgs.State) -> C.BlockColumns:
    cols = C.BlockColumns()
    C.check(C.lib().fourdgs_block_columns_get(state._lender.handle, ctypes.byref(cols)))
    return cols


STATE_COLUMNS = ["position", "scale", "rotation", "color", "motion", "mu_t", "sigma_t", "win_lo",
                 "win_hi", "flags", "window_index", "object_id", "sh"]


@pytest.mark.parametrize("name", ["birth-extras", "birth-zstd-sh3-balanced"])
def test_state_columns_are_the_library_memory(data_dir, name):
    scene = fourdgs.open(data_dir / f"{name}.4dgs")
    state = scene.read_all()
    cols = c_block_columns(state)
    lent = [n for n in STATE_COLUMNS if getattr(cols, n)]  # what this file's block carries
    assert set(STATE_COLUMNS) - set(lent) <= {"object_id", "sh"}
    for col in lent:
        array = getattr(state, col)
        assert not array.flags.owndata, col
        assert not array.flags.writeable, col  # the library's memory is read-only
        assert isinstance(array.base, LentColumn), col
        assert array.base.lender is state._lender and isinstance(array.base.lender, Lender)
        # The very address the C ABI lends, not a copy of it.
        assert array.__array_interface__["data"][0] == getattr(cols, col), col
    with pytest.raises(ValueError):
        state.position[0, 0] = 1.0
    # Views share the memory too.
    assert np.shares_memory(state.position[:, 0], state.position)


def test_frame_columns_are_the_library_memory(data_dir):
    scene = fourdgs.open(data_dir / "birth-zstd-sh3-balanced.4dgs")
    frame = scene.evaluate(scene.header.duration_sec / 2)
    cols = C.FrameColumns()
    C.check(C.lib().fourdgs_frame_columns_get(frame._lender.handle, ctypes.byref(cols)))
    assert len(frame) > 0 and frame.sh.shape == (len(frame), 3, 15)
    for name in ["center", "scale", "rotation", "color", "object_id", "source", "sh"]:
        array = getattr(frame, name)
        assert not array.flags.owndata and isinstance(array.base, LentColumn), name
        assert array.__array_interface__["data"][0] == getattr(cols, name), name


def test_arrays_outlive_the_scene_and_the_state(data_dir):
    scene = fourdgs.open(data_dir / "birth-deflate.4dgs")
    state = scene.read_all()
    frame = scene.evaluate(1.0)
    expected_position = np.array(state.position)  # private copies to compare with
    expected_center = np.array(frame.center)
    position, center = state.position, frame.center
    lender = weakref.ref(state._lender)
    scene.close()
    del scene, state, frame
    gc.collect()
    assert lender() is not None  # the arrays keep the decoded block alive
    # Churn the allocator: if the block had been freed, this would overwrite it.
    junk = [fourdgs.open(data_dir / "birth-deflate.4dgs").read_all() for _ in range(4)]
    del junk
    gc.collect()
    assert np.array_equal(position, expected_position)
    assert np.array_equal(center, expected_center)
    del position
    gc.collect()
    assert lender() is None  # the last array gone, the block is freed


def test_a_closed_scene_leaves_its_states_readable(data_dir):
    with fourdgs.open(data_dir / "keyframe-delta-churn.4dgs") as scene:
        state = scene.state_at(1.0)
        ids = np.array(state.gaussian_id)
    gc.collect()
    assert np.array_equal(state.gaussian_id, ids)


def test_two_threads_read_one_file(data_dir):
    scene = fourdgs.open(data_dir / "birth-zstd-sh3-balanced.4dgs")
    duration = scene.header.duration_sec
    times = [duration * k / 16 for k in range(16)]
    want = {t: (len(scene.evaluate(t)), np.array(scene.state_at(t).position)) for t in times}
    failures = []
    barrier = threading.Barrier(2)

    def worker(offset):
        barrier.wait()
        for round_ in range(10):
            for t in times[offset::2] + times[1 - offset::2]:
                frame = scene.evaluate(t)
                state = scene.state_at(t)
                if len(frame) != want[t][0] or not np.array_equal(state.position, want[t][1]):
                    failures.append((offset, t))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert failures == []
    # close() waits for calls in flight; afterwards every call refuses.
    scene.close()
    with pytest.raises(fourdgs.Error):
        scene.evaluate(0.0)


def test_two_threads_each_with_its_own_streaming_scene(data_dir):
    path = data_dir / "keyframe-delta-churn.4dgs"
    results = [None, None]

    def worker(k):
        results[k] = [np.array(b.gaussian_id) for b in fourdgs.stream(path).blocks()]

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(results[0]) == len(results[1]) > 0
    assert all(np.array_equal(a, b) for a, b in zip(*results))


def test_decoding_again_into_a_state_reuses_its_memory(data_dir):
    scene = fourdgs.open(data_dir / "birth-zstd-sh3-balanced.4dgs")
    state = scene.state_at(1.0)
    lender = state._lender
    first = np.array(state.position)
    again = scene.state_at(1.0, out=state)
    assert again is state and state._lender is lender
    assert np.array_equal(state.position, first)
    everything = scene.read_all(out=state)
    assert len(everything) == scene.header.gaussian_count
    assert state.position.base.lender is lender
    frame = scene.evaluate(1.0)
    frame_lender = frame._lender
    assert scene.evaluate(2.0, out=frame) is frame and frame._lender is frame_lender
    assert frame.time == 2.0 and len(frame) == len(scene.evaluate(2.0))


def test_decoding_into_a_state_whose_arrays_are_held_is_refused(data_dir):
    scene = fourdgs.open(data_dir / "birth-deflate.4dgs")
    state = scene.read_all()
    held = state.color[:, 3]  # a view keeps the column array referenced
    before = np.array(held)
    with pytest.raises(fourdgs.Error) as e:
        scene.read_all(out=state)
    assert (e.value.kind, e.value.refusal) == ("invalid-argument", "state-in-use")
    assert "color" in e.value.message
    assert np.array_equal(held, before)  # untouched
    del held
    scene.read_all(out=state)
    frame = scene.evaluate(1.0)
    centers = frame.center
    with pytest.raises(fourdgs.Error):
        scene.evaluate(1.0, out=frame)
    del centers
    with pytest.raises(fourdgs.Error) as e:
        scene.read_all(out=frame)
    assert e.value.refusal == "invalid-argument"


def test_a_failed_decode_into_a_state_leaves_it_empty(data_dir):
    scene = fourdgs.open(data_dir / "keyframe-delta-churn.4dgs")
    state = scene.state_at(0.5)
    assert len(state) > 0
    with pytest.raises(fourdgs.Error):
        scene.read_all(out=state)
    assert len(state) == 0 and state.kind == "empty" and state.position.shape == (0, 3)
