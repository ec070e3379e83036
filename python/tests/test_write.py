"""Writing: round trips through both writers, every preset and codec, extras, refusals, validate."""
import math

import numpy as np
import pytest

import fourdgs


def scene_arrays(n=600, windows=4, sh_degree=0, seed=7):
    rng = np.random.default_rng(seed)
    w = np.arange(n) % windows
    cols = {
        "positions": rng.uniform(-2, 2, (n, 3)).astype(np.float32),
        "scales": rng.uniform(0.005, 0.05, (n, 3)).astype(np.float32),
        "rotations": rng.normal(size=(n, 4)).astype(np.float32),
        "colors": rng.uniform(0, 1, (n, 4)).astype(np.float32),
        "motion": rng.uniform(-0.1, 0.1, (n, 3)).astype(np.float32),
        "win_lo": w.astype(np.float64), "win_hi": (w + 1).astype(np.float64),
        "mu_t": (w + 0.5).astype(np.float32),
        "sigma_t": np.where(np.arange(n) % 5 == 0, np.inf, rng.uniform(0.2, 0.6, n)).astype(np.float32),
        "object_ids": (np.arange(n) % 3).astype(np.uint32),
    }
    if sh_degree:
        cols["sh"] = rng.uniform(-1, 1, (n, 3, (sh_degree + 1) ** 2 - 1)).astype(np.float32)
    return cols


def matching(state, cols):
    """For each decoded row, the input row it came from (the nearest rest position; the
    writer reorders gaussians within a chunk)."""
    d = ((state.position[:, None, :] - cols["positions"][None, :, :]) ** 2).sum(axis=2)
    source = d.argmin(axis=1)
    assert len(set(source.tolist())) == len(source), "two decoded gaussians match one input"
    return source


def assert_round_trip(state, cols, report_bounds):
    assert len(state) == len(cols["positions"])
    src = matching(state, cols)
    pos_bound = float(report_bounds["pos"])
    assert np.abs(state.position - cols["positions"][src]).max() <= pos_bound * 1.001 + 1e-6
    q_in = cols["rotations"][src] / np.linalg.norm(cols["rotations"][src], axis=1)[:, None]
    assert np.abs(np.sum(q_in * state.rotation, axis=1)).min() > 0.999
    assert np.abs(state.color[:, :3] - cols["colors"][src, :3]).max() <= \
        float(report_bounds["rgb"]) * 1.001 + 1e-6
    assert np.abs(state.color[:, 3] - cols["colors"][src, 3]).max() <= \
        float(report_bounds["alpha"]) * 1.001 + 1e-6
    assert np.array_equal(state.object_id, cols["object_ids"][src])
    assert np.array_equal(np.isinf(state.sigma_t), np.isinf(cols["sigma_t"][src]))
    assert np.array_equal(state.win_lo, cols["win_lo"][src].astype(np.float32))
    return src


@pytest.mark.parametrize("preset", ["fine", "default", "coarse"])
@pytest.mark.parametrize("codec", ["deflate", "zstd", "lz4"])
def test_one_shot_round_trip_within_the_declared_bounds(tmp_path, preset, codec):
    cols = scene_arrays(sh_degree=1)
    path = tmp_path / f"{preset}-{codec}.4dgs"
    report = fourdgs.write(path, duration=4.0, preset=preset, codec=codec, threads=1, **cols)
    assert report.gaussian_count == 600 and report.bytes_written == path.stat().st_size
    with fourdgs.open(path) as scene:
        assert scene.header.sh_degree == 1  # inferred from sh's shape
        assert scene.windows == [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0), (3.0, 4.0)]
        state = scene.read_all()
        src = assert_round_trip(state, cols, scene.quantization.bounds)
        sh_bound = 4 / 255  # half a byte step of §6.5's map
        assert np.abs(state.sh_coefficients() - cols["sh"][src]).max() <= sh_bound * 1.001
    assert fourdgs.validate(path).valid


def test_same_input_same_bytes_whatever_the_threads():
    cols = scene_arrays()
    with fourdgs.Writer(4.0, threads=1) as a, fourdgs.Writer(4.0, threads=0) as b:
        for w in (a, b):
            w.add_gaussians(**cols)
        assert a.to_bytes() == b.to_bytes()


def test_batches_options_and_chunking(tmp_path):
    cols = scene_arrays(n=1000)
    with fourdgs.Writer(4.0, max_chunk_gaussians=100, chunk_compression="zstd",
                        sh_ladder="none", write_index=False) as w:
        half = {k: v[:500] for k, v in cols.items()}
        rest = {k: v[500:] for k, v in cols.items()}
        assert w.add_gaussians(**half) == 500
        w.add_gaussians(**rest)
        report = w.write(tmp_path / "chunked.4dgs")
    assert report.chunk_count >= 10
    with fourdgs.open(tmp_path / "chunked.4dgs") as scene:
        assert scene.counts["index_built_by_scan"] == 1
        assert len(scene.read_all()) == 1000


def test_extras_round_trip(tmp_path):
    cols = scene_arrays(n=60)
    camera = fourdgs.Camera(50.0, (0, 1, 5), (0, 0, 0),
                            [fourdgs.CameraKeyframe(0.0, (0, 1, 5), (0, 0, 0)),
                             fourdgs.CameraKeyframe(4.0, (1, 1, 5), (0, 0, 0))], "linear", False)
    audio = fourdgs.AudioSource(source_id=4, name="bed", codec="pcm-s16le",
                                channel_layout="stereo", duration_sec=2.0, gain=0.5)
    frame = fourdgs.CoordinateFrame("", 1, "+y", "-z", "metre", 1.0)
    sensor = fourdgs.Sensor("cam0", "rgb", "rig", "brown-conrady", 640, 480, 500, 500, 320, 240,
                            (0.1, -0.01, 0.001, 0.002, 0.0), pose_reference=1)
    rig = fourdgs.RigTrajectory("rig", [fourdgs.PoseSample(0.0, (0, 0, 0, 1), (0, 1, 0)),
                                        fourdgs.PoseSample(4.0, (0, 0, 0, 1), (2, 1, 0))])
    anchor = fourdgs.GeodeticAnchor("", 45.0, 7.5, 300.0, 10.0)
    objects = [fourdgs.ObjectInfo(1, "box", (0, 0, 0), None, (0.5, 0.25)),
               fourdgs.ObjectInfo(2, "ball", (1, 0, 0),
                                  fourdgs.Dynamics((1, 0, 0), (0, 0, 0), (0, 0, 0)), (1.0, 0.0))]
    track = fourdgs.ObjectTrack(1, [fourdgs.PoseSample(0.0, (0, 0, 0, 1), (0, 0, 0)),
                                    fourdgs.PoseSample(4.0, (0, 0, 0, 1), (1, 0, 0))], 1)
    path = tmp_path / "extras.4dgs"
    fourdgs.write(path, duration=4.0, **cols, profile="", attributes={"title": "python"},
                  metadata={"info": {"application": "pytest", "note": "written from Python"}},
                  attachments=[("notes.txt", "text/plain", b"attachment bytes")], camera=camera,
                  audio_sources=[(audio, bytes(range(16)))], coordinate_frames=[frame],
                  sensors=[sensor], rig_trajectories=[rig], geodetic_anchors=[anchor],
                  objects=objects, object_tracks=[track])
    with fourdgs.open(path) as scene:
        assert ("title", "python") in scene.header.attributes
        assert scene.metadata_value("note") == "written from Python"
        assert scene.attachments[0].name == "notes.txt"
        assert scene.attachment_data(0) == b"attachment bytes"
        assert scene.camera.keyframes == camera.keyframes and scene.camera.fov_y_deg == 50.0
        a = scene.audio_sources[0]
        assert (a.source_id, a.name, a.channel_layout, a.gain) == (4, "bed", "stereo", 0.5)
        assert scene.audio_data(0) == bytes(range(16))
        assert scene.audio_state_at(0, 1.0).active
        assert scene.coordinate_frames == [frame]
        assert scene.sensors == [sensor]
        assert scene.rig_trajectories == [rig]
        assert scene.geodetic_anchors == [anchor]
        assert scene.object_embedding_dim == 2 and scene.objects == objects
        assert scene.object_tracks == [track]
    assert fourdgs.validate(path).errors == 0


def test_stream_writer_window_by_window(tmp_path):
    cols = scene_arrays(n=800, windows=4, sh_degree=2)
    w = np.arange(800) % 4
    path = tmp_path / "streamed.4dgs"
    with fourdgs.StreamWriter(path, duration=4.0, sh_degree=2, gaussian_count=800,
                              aabb=fourdgs.bounds(cols["positions"]),
                              windows=[(k, k + 1) for k in range(4)], codec="zstd",
                              metadata={"info": {"application": "pytest stream"}}) as writer:
        for k in range(4):
            m = w == k
            writer.add_window(k, cols["positions"][m], cols["scales"][m], cols["rotations"][m],
                              cols["colors"][m], motion=cols["motion"][m], mu_t=cols["mu_t"][m],
                              sigma_t=cols["sigma_t"][m], sh=cols["sh"][m],
                              object_ids=cols["object_ids"][m])
    assert writer.report.gaussian_count == 800 and writer.report.chunk_count == 4
    with fourdgs.open(path) as scene:
        assert scene.metadata_value("application") == "pytest stream"
        assert_round_trip(scene.read_all(), cols, scene.quantization.bounds)
    assert fourdgs.validate(path).valid


def test_stream_writer_from_a_configured_writer_and_add_chunk(tmp_path):
    cols = scene_arrays(n=100, windows=2)
    with fourdgs.Writer(2.0) as config:
        config.add_metadata("info", [("application", "pytest")])
        stream = config.stream(tmp_path / "s.4dgs", gaussian_count=100,
                               aabb=fourdgs.bounds([cols["positions"][:50], cols["positions"][50:]]),
                               windows=[(0, 1), (1, 2)])
    stream.add_chunk(cols["positions"], cols["scales"], cols["rotations"], cols["colors"],
                     win_lo=cols["win_lo"], win_hi=cols["win_hi"])
    report = stream.finish()
    assert report.gaussian_count == 100
    with pytest.raises(fourdgs.Error) as e:
        stream.finish()
    assert e.value.refusal == "writer-closed"
    assert len(fourdgs.open(tmp_path / "s.4dgs").read_all()) == 100


def test_stream_writer_refuses_what_breaks_its_declaration(tmp_path):
    cols = scene_arrays(n=100, windows=1)
    box = fourdgs.bounds(cols["positions"])
    with pytest.raises(fourdgs.Error) as e:
        with fourdgs.StreamWriter(tmp_path / "short.4dgs", duration=1.0, gaussian_count=101,
                                  aabb=box, windows=[(0, 1)]) as w:
            w.add_window(0, cols["positions"], cols["scales"], cols["rotations"], cols["colors"])
    assert e.value.kind == "invalid-argument" and "101" in e.value.message
    with pytest.raises(fourdgs.Error) as e:
        w = fourdgs.StreamWriter(tmp_path / "x.4dgs", duration=1.0, gaussian_count=100,
                                 aabb=box, windows=[(0, 1)])
        w.add_window(3, cols["positions"], cols["scales"], cols["rotations"], cols["colors"])
    assert e.value.refusal == "window-index-out-of-range"
    w.close()


def test_refusals_name_the_gaussian_and_the_field(tmp_path):
    cols = scene_arrays(n=50)
    bad = dict(cols, scales=cols["scales"].copy())
    bad["scales"][17, 1] = -1.0
    with pytest.raises(fourdgs.Error) as e:
        fourdgs.write(tmp_path / "bad.4dgs", duration=4.0, **bad)
    assert (e.value.kind, e.value.refusal) == ("invalid-argument", "value-out-of-range")
    assert "17" in e.value.message and "scale" in e.value.message
    assert not (tmp_path / "bad.4dgs").exists() or fourdgs.validate(tmp_path / "bad.4dgs")
    with pytest.raises(fourdgs.Error) as e:
        fourdgs.write(tmp_path / "x.4dgs", duration=4.0, **dict(cols, colors=cols["colors"][:, :3]))
    assert e.value.refusal == "input-size-mismatch" and "colors" in e.value.message
    with pytest.raises(fourdgs.Error) as e:
        fourdgs.write(tmp_path / "x.4dgs", duration=4.0, codec="snappy", **cols)
    assert e.value.refusal == "invalid-option"
    with pytest.raises(fourdgs.Error) as e:
        fourdgs.write(tmp_path / "x.4dgs", duration=4.0, preset="finest", **cols)
    assert e.value.refusal == "invalid-option"
    with pytest.raises(fourdgs.Error) as e:
        fourdgs.write(tmp_path / "x.4dgs", duration=4.0, **cols,
                      coordinate_frames=[fourdgs.CoordinateFrame(up_axis="up")])
    assert e.value.refusal == "value-out-of-range"
    with pytest.raises(TypeError):
        fourdgs.write(tmp_path / "x.4dgs", duration=4.0, colour="red", **cols)


def test_validate_reports_findings_not_exceptions(data_dir, tmp_path):
    ok = fourdgs.validate(data_dir / "birth-deflate.4dgs")
    assert ok.valid and ok.errors == 0 and ok.file_size > 0 and ok.chunks > 0
    data = bytearray((data_dir / "birth-deflate.4dgs").read_bytes())
    cut = fourdgs.validate(bytes(data[: len(data) // 2]))
    assert not cut.valid and cut.truncated and cut.errors >= 1
    f = cut.findings[0]
    assert f.severity == "error" and f.rule and f.message
    with pytest.raises(fourdgs.Error) as e:
        fourdgs.validate(tmp_path / "missing.4dgs")
    assert e.value.kind == "io"


def test_defaults_a_whole_clip_never_fading(tmp_path):
    cols = scene_arrays(n=10)
    report = fourdgs.write(tmp_path / "d.4dgs", positions=cols["positions"],
                           scales=cols["scales"], rotations=cols["rotations"],
                           colors=cols["colors"], duration=2.5)
    assert report.gaussian_count == 10
    state = fourdgs.open(tmp_path / "d.4dgs").read_all()
    assert np.all(np.isinf(state.sigma_t)) and np.all(state.win_lo == 0)
    assert np.all(state.win_hi == 2.5) and np.all(state.motion == 0)
    assert math.isclose(float(state.mu_t.max()), 0.0, abs_tol=0.01)
