"""Reading: the fixtures against their JSON, both temporal models, streaming, errors."""
import io
import json
import math
import os
import threading

import numpy as np
import pytest

import fourdgs


def fixture(data_dir, name):
    return data_dir / f"{name}.4dgs", json.loads((data_dir / f"{name}.json").read_text())


@pytest.mark.parametrize("name", ["birth-deflate", "birth-extras", "birth-zstd-sh3-balanced",
                                  "birth-never-fades-no-index"])
def test_gaussian_birth_fixture_matches_its_json(data_dir, name):
    path, want = fixture(data_dir, name)
    with fourdgs.open(path) as scene:
        h = scene.header
        assert scene.model == "gaussian-birth"
        assert h.gaussian_count == want["header"]["gaussian_count"]
        assert h.duration_sec == want["header"]["duration_sec"]
        assert dict(h.attributes) == want["header"]["attributes"]
        everything = scene.read_all()
        assert everything.kind == "all" and len(everything) == h.gaussian_count
        assert everything.sh.shape == (h.gaussian_count, 3, (h.sh_degree + 1) ** 2 - 1)
        for t, count in want["visible_count_at"].items():
            frame = scene.evaluate(float(t))
            assert len(frame) == count, f"visible at {t}"
            # The frame of state_at(t) is the frame of the whole file at t.
            assert len(scene.evaluate(float(t), scene.state_at(float(t)))) == count
            assert len(scene.evaluate(float(t), everything)) == count
            assert np.all((frame.color[:, 3] >= 0) & (frame.color[:, 3] <= 1))
            assert np.allclose(np.linalg.norm(frame.rotation, axis=1), 1, atol=1e-3)


def test_extras_fixture(data_dir):
    path, want = fixture(data_dir, "birth-extras")
    with fourdgs.open(path) as scene:
        sources = scene.audio_sources
        assert sorted(a.source_id for a in sources) == sorted(
            a["source_id"] for a in want["audio_state_at"]["0.25"])
        for t, states in want["audio_state_at"].items():
            for st in states:
                index = next(i for i, a in enumerate(sources) if a.source_id == st["source_id"])
                got = scene.audio_state_at(index, float(t))
                assert got.active == st["active"]
                assert math.isclose(got.gain, st["gain"], rel_tol=1e-6)
                assert np.allclose(got.position, st["position"], atol=1e-5)
                assert np.allclose(got.rotation, st["rotation"], atol=1e-5)
        assert scene.camera is not None and len(scene.camera.keyframes) >= 2
        view = scene.camera_at(0.5)
        assert len(view.position) == 3 and view.fov_y_deg > 0
        assert scene.coordinate_frames and scene.coordinate_frames[0].up_axis in fourdgs.AXES
        assert len(scene.sensors) == 2
        assert all(s.camera_model in fourdgs.CAMERA_MODELS for s in scene.sensors)
        assert scene.rig_trajectories and scene.rig_trajectories[0].samples
        assert scene.geodetic_anchors
        objects = scene.objects
        assert {o.object_id for o in objects} >= {3, 8}
        assert scene.object_embedding_dim and all(
            o.embedding is None or len(o.embedding) == scene.object_embedding_dim for o in objects)
        assert {t.interpolation for t in scene.object_tracks} == {0, 1}
        for i, a in enumerate(sources):
            assert len(scene.audio_data(i)) == a.size
        # Object tracks move their objects: evaluating without them changes the tracked centres.
        t = 1.0
        with_tracks = scene.evaluate(t)
        without = scene.evaluate(t, object_tracks=False)
        tracked = np.isin(with_tracks.object_id, [tr.object_id for tr in scene.object_tracks])
        assert tracked.any()
        assert not np.allclose(with_tracks.center[tracked], without.center[tracked])
        assert np.array_equal(with_tracks.center[~tracked], without.center[~tracked])


def test_keyframe_delta_through_the_same_calls(data_dir):
    path, want = fixture(data_dir, "keyframe-delta-churn")
    with fourdgs.open(path) as scene:
        assert scene.model == "keyframe-delta"
        with pytest.raises(fourdgs.Error) as e:
            scene.read_all()
        assert (e.value.kind, e.value.refusal) == ("unsupported", "read-all-needs-gaussian-birth")
        for st in want["states"]:
            state = scene.state_at(st["t"])
            assert state.kind == "state" and len(state) == st["live"]
            assert state.chunk["t0"] == st["chunk_t0"] and state.chunk["depth"] == st["depth"]
            assert state.chunk["live_count"] == st["live"]
            assert np.all(np.diff(state.gaussian_id.astype(np.int64)) > 0)
            # rows: the visible gaussians at t, [gaussian_id, centre 3, scale 3, rotation 4,
            # colour 4], in gaussian_id order
            frame = scene.evaluate(st["t"])
            rows = np.array(st["rows"])
            assert len(frame) == len(rows)
            ids = state.gaussian_id[frame.source]
            assert np.array_equal(ids, rows[:, 0].astype(np.uint32))
            assert np.allclose(frame.center, rows[:, 1:4], atol=2e-6)
            assert np.allclose(frame.color, rows[:, 11:15], atol=2e-6)
        with pytest.raises(fourdgs.Error) as e:
            scene.state_at(scene.header.duration_sec + 1)
        assert e.value.kind == "invalid-argument"


@pytest.mark.parametrize("name", ["birth-deflate", "keyframe-delta-churn",
                                  "birth-never-fades-no-index"])
def test_streaming_gives_the_same_gaussians_as_the_index(data_dir, name):
    path, _ = fixture(data_dir, name)
    with fourdgs.open(path) as indexed, fourdgs.stream(path) as streamed:
        with pytest.raises(fourdgs.Error) as e:
            streamed.evaluate(0.5)
        assert e.value.refusal == "needs-random-access"
        blocks = list(streamed.blocks())
        assert list(streamed.blocks()) == []  # the end repeats
        if indexed.model == "keyframe-delta":
            assert [b.chunk["t0"] for b in blocks] == sorted(c.t0 for c in indexed.chunks)
            for b in blocks:
                s = indexed.state_at(b.chunk["t0"])
                assert np.array_equal(s.gaussian_id, b.gaussian_id)
                assert np.array_equal(s.position, b.position)
        else:
            everything = indexed.read_all()
            assert sum(len(b) for b in blocks) == len(everything)
            assert np.array_equal(np.concatenate([b.position for b in blocks]), everything.position)
            t = indexed.header.duration_sec / 2
            a, b = indexed.evaluate(t), streamed.evaluate(t, blocks)
            assert np.array_equal(np.sort(a.center, axis=0), np.sort(b.center, axis=0))


def test_a_truncated_file_streams_its_whole_chunks_then_refuses(data_dir):
    data = (data_dir / "birth-deflate.4dgs").read_bytes()
    whole = list(fourdgs.stream(data).blocks())
    cut = fourdgs.stream(data[:-30])
    got = []
    with pytest.raises(fourdgs.Error) as e:
        for b in cut.blocks():
            got.append(b)
    assert (e.value.kind, e.value.refusal) == ("truncated", "truncated")
    assert e.value.offset is not None
    assert [len(b) for b in got] == [len(b) for b in whole]
    with pytest.raises(fourdgs.Error):  # and again
        next(cut.blocks())


def test_a_stream_reads_a_pipe_as_its_bytes_arrive(data_dir):
    data = (data_dir / "keyframe-delta-churn.4dgs").read_bytes()
    want = [np.array(b.gaussian_id) for b in fourdgs.stream(data).blocks()]
    r, w = os.pipe()

    def feed():
        with os.fdopen(w, "wb") as f:
            for k in range(0, len(data), 1000):  # in pieces, as a download arrives
                f.write(data[k:k + 1000])

    writer = threading.Thread(target=feed)
    writer.start()
    with os.fdopen(r, "rb") as f, fourdgs.stream(f) as scene:
        assert isinstance(scene, fourdgs.Stream) and scene.model == "keyframe-delta"
        got = [np.array(b.gaussian_id) for b in scene.blocks()]
    writer.join()
    assert len(got) == len(want) > 0 and all(np.array_equal(a, b) for a, b in zip(got, want))


def feed_pipe(data: bytes, open_writer) -> threading.Thread:
    """Writes `data` in pieces, as a download arrives, to the pipe open_writer() opens."""
    def feed():
        with open_writer() as f:
            for k in range(0, len(data), 1000):
                f.write(data[k:k + 1000])

    writer = threading.Thread(target=feed)
    writer.start()
    return writer


@pytest.mark.parametrize("name", ["birth-deflate", "keyframe-delta-churn"])
def test_a_stream_reads_a_named_pipe_by_its_path(data_dir, tmp_path, name):
    """A FIFO given by path goes through fourdgs_stream_open_fd, read(2) as it fills."""
    data = (data_dir / f"{name}.4dgs").read_bytes()
    want = [np.array(b.gaussian_id) for b in fourdgs.stream(data).blocks()]
    fifo = tmp_path / "scene.fifo"
    os.mkfifo(fifo)
    writer = feed_pipe(data, lambda: open(fifo, "wb"))
    with fourdgs.stream(fifo) as scene:  # opening blocks until the writer has opened its end
        assert scene.name == str(fifo)
        got = [np.array(b.gaussian_id) for b in scene.blocks()]
        assert scene.chunks != []  # the summary, read at the end
    writer.join()
    assert len(got) == len(want) > 0 and all(np.array_equal(a, b) for a, b in zip(got, want))


def cut_in_last_chunk(data_dir, name):
    """The file cut in the middle of its last chunk record (in file order), and the blocks a
    stream of the whole file gives: the cut one must give every block but the last."""
    path = data_dir / f"{name}.4dgs"
    with fourdgs.open(path) as scene:
        last = max(scene.chunks, key=lambda c: c.offset)
    data = path.read_bytes()
    return data[:last.offset + last.size // 2], list(fourdgs.stream(data).blocks())


@pytest.mark.parametrize("route", ["path", "pipe", "bytes"])
@pytest.mark.parametrize("name", ["birth-deflate", "keyframe-delta-churn"])
def test_a_stream_cut_inside_a_chunk_gives_the_blocks_before_it_then_truncated(
        data_dir, tmp_path, name, route):
    cut, whole = cut_in_last_chunk(data_dir, name)
    writer = None
    if route == "path":
        source = tmp_path / "cut.4dgs"
        source.write_bytes(cut)
    elif route == "pipe":
        r, w = os.pipe()
        writer = feed_pipe(cut, lambda: os.fdopen(w, "wb"))
        source = os.fdopen(r, "rb")
    else:
        source = cut
    got = []
    with fourdgs.stream(source) as scene:
        with pytest.raises(fourdgs.Error) as e:
            for b in scene.blocks():
                got.append(b)
        assert (e.value.kind, e.value.refusal) == ("truncated", "truncated")
        assert e.value.offset is not None and e.value.offset <= len(cut)
        with pytest.raises(fourdgs.Error) as again:  # the failure repeats
            next(scene.blocks())
        assert again.value.refusal == "truncated"
        assert scene.chunks == []  # the summary was never reached
    if writer is not None:
        writer.join()
        source.close()
    assert len(got) == len(whole) - 1 > 0
    for g, w in zip(got, whole):
        assert g.kind == w.kind and g.chunk == w.chunk
        assert np.array_equal(g.gaussian_id, w.gaussian_id)
        assert np.array_equal(g.position, w.position)


def test_a_stream_knows_the_scene_and_its_summary_at_the_end(data_dir):
    path = data_dir / "birth-extras.4dgs"
    with fourdgs.open(path) as indexed, fourdgs.stream(path, keep_payloads=True) as streamed:
        assert streamed.header == indexed.header and streamed.windows == indexed.windows
        assert streamed.camera == indexed.camera and streamed.objects == indexed.objects
        assert streamed.chunks == [] and not streamed.summary_crc_verified
        blocks = list(streamed.blocks())
        assert [b.kind for b in blocks] == ["chunk"] * len(indexed.chunks)
        assert [(c.t0, c.t1, c.offset) for c in streamed.chunks] == \
            [(c.t0, c.t1, c.offset) for c in indexed.chunks]
        assert streamed.summary_crc_verified == indexed.summary_crc_verified
        for i in range(len(indexed.audio_sources)):  # kept as they passed
            assert streamed.audio_data(i) == indexed.audio_data(i)
    with fourdgs.stream(path) as streamed:  # without keep_payloads they pass by
        with pytest.raises(fourdgs.Error) as e:
            streamed.audio_data(0)
        assert e.value.refusal == "needs-random-access"


def test_a_failing_python_source_is_the_cause_of_the_io_error(data_dir):
    data = (data_dir / "birth-deflate.4dgs").read_bytes()

    class Broken(io.RawIOBase):
        def __init__(self):
            self.at = 0

        def readinto(self, buffer):
            if self.at > 2000:
                raise OSError("the network went away")
            n = min(len(buffer), 500, len(data) - self.at)
            buffer[:n] = data[self.at:self.at + n]
            self.at += n
            return n

    with pytest.raises(fourdgs.Error) as e:
        for _ in fourdgs.stream(Broken()).blocks():
            pass
    assert e.value.kind == "io" and isinstance(e.value.__cause__, OSError)
    with pytest.raises(fourdgs.Error) as e:
        fourdgs.stream(data_dir / "missing.4dgs")
    assert (e.value.kind, e.value.refusal) == ("io", "io-error")


def test_errors_carry_status_refusal_message_and_offset(data_dir, tmp_path):
    data = (data_dir / "birth-deflate.4dgs").read_bytes()
    bad = bytearray(data)
    bad[1] ^= 0x40
    with pytest.raises(fourdgs.Error) as e:
        fourdgs.open(bytes(bad))
    assert (e.value.status, e.value.kind, e.value.refusal) == (1, "malformed", "magic-mismatch")
    assert e.value.offset == 0 and "magic" in e.value.message
    assert str(e.value).startswith("malformed: magic-mismatch: ")
    with pytest.raises(fourdgs.Error) as e:
        fourdgs.open(tmp_path / "missing.4dgs")
    assert (e.value.kind, e.value.refusal) == ("io", "io-error")
    with fourdgs.open(bytearray(data)) as scene:  # bytes-likes are copied
        with pytest.raises(fourdgs.Error) as e:
            scene.evaluate(float("nan"))
        assert e.value.refusal == "non-finite-input"
        with pytest.raises(fourdgs.Error) as e:
            scene.audio_state_at(5, 0.0)
        assert e.value.kind == "not-found"
    scene.close()
    with pytest.raises(fourdgs.Error) as e:
        scene.header
    assert e.value.refusal == "scene-closed"


def test_version_and_library(data_dir):
    assert fourdgs.version() == fourdgs.__version__
    assert "fourdgs-c" in fourdgs.library_path()


def test_state_repr_names_what_it_holds(root):
    state = fourdgs.open(root / "examples" / "data" / "example.4dgs").state_at(2.5)
    text = repr(state)
    assert text.startswith("<fourdgs.State instant t=2.5: 120 gaussians, SH degree 0")
    assert "position (120, 3) float32" in text


def test_summary_example_prints_a_file(root, data_dir):
    import subprocess
    import sys
    out = subprocess.run([sys.executable, str(root / "examples" / "python" / "summary.py"),
                          str(data_dir / "birth-extras.4dgs"), "0.5"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "120 gaussians" in out.stdout and "visible" in out.stdout
    bad = subprocess.run([sys.executable, str(root / "examples" / "python" / "summary.py"),
                          str(data_dir / "missing.4dgs")], capture_output=True, text=True)
    assert bad.returncode == 1 and "io-error" in bad.stderr
