"""The pure-numpy PLY code, against the C++ tool, and the docs/python.md examples run as written."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import fourdgs


def frames_on_disk(folder, count=6, n=200, sh_degree=1, seed=3):
    """A tracked PLY sequence written with write_ply: frame i drifts along x."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    base = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    k = (sh_degree + 1) ** 2 - 1
    clouds = []
    for i in range(count):
        cloud = dict(positions=base + np.float32(0.01 * i) * np.array([1, 0, 0], np.float32),
                     scales=rng.uniform(0.005, 0.03, (n, 3)).astype(np.float32),
                     rotations=rng.normal(size=(n, 4)).astype(np.float32),
                     colors=np.concatenate([rng.uniform(-0.1, 1.1, (n, 3)),
                                            rng.uniform(0.05, 0.95, (n, 1))], axis=1).astype(np.float32),
                     sh=rng.uniform(-0.5, 0.5, (n, 3, k)).astype(np.float32))
        fourdgs.write_ply(folder / f"{i:04d}.ply", **cloud)
        clouds.append(cloud)
    return clouds


def test_write_then_read_is_the_same_cloud(tmp_path):
    cloud = frames_on_disk(tmp_path / "f", count=1, sh_degree=3)[0]
    back = fourdgs.read_ply(tmp_path / "f" / "0000.ply")
    assert back.sh_degree == 3 and len(back) == 200
    assert np.array_equal(back.positions, cloud["positions"])
    assert np.allclose(back.scales, cloud["scales"], rtol=1e-6)
    assert np.array_equal(back.rotations, cloud["rotations"])
    assert np.allclose(back.colors, cloud["colors"], atol=1e-6)
    assert np.array_equal(back.sh, cloud["sh"])
    assert np.all(back.normals == 0)


def test_ply_refusals_use_the_cpp_identifiers(tmp_path):
    good = fourdgs.write_ply(None, np.zeros((2, 3)), np.ones((2, 3)), [[0, 0, 0, 1]] * 2,
                             np.full((2, 4), 0.5))
    cases = {
        b"not a ply": ("malformed", "ply-not-ply"),
        good.replace(b"binary_little_endian", b"ascii"): ("malformed", "ply-ascii-format"),
        good.replace(b"binary_little_endian", b"binary_big_endian"): ("malformed", "ply-big-endian"),
        good.replace(b"property float opacity\n", b""): ("malformed", "ply-missing-property"),
        good.replace(b"property float nz\n", b"property float x\n"): ("malformed",
                                                                       "ply-duplicate-property"),
        good.replace(b"property float x\n", b"property double x\n"): ("malformed",
                                                                       "ply-property-type"),
        good.replace(b"property float nz\n", b"property float nz\nproperty float f_rest_0\n"):
            ("malformed", "ply-sh-count"),
        good[:-10]: ("truncated", "ply-truncated-body"),
        good.replace(b"end_header", b"end_hexxxx"): ("malformed", "ply-bad-header"),
    }
    for data, (kind, refusal) in cases.items():
        with pytest.raises(fourdgs.Error) as e:
            fourdgs.read_ply(data)
        assert (e.value.kind, e.value.refusal) == (kind, refusal), e.value
    path = tmp_path / "cut.ply"
    path.write_bytes(good[:-10])
    with pytest.raises(fourdgs.Error) as e:
        fourdgs.read_ply(path)
    assert str(path) in e.value.message
    with pytest.raises(fourdgs.Error) as e:
        fourdgs.read_ply(tmp_path / "missing.ply")
    assert e.value.refusal == "io-error"


def test_cpp_extract_reads_back_as_the_frame(tmp_path, data_dir, cli):
    """The C++ writer's PLY, read by the Python reader, is the frame the C ABI evaluates."""
    src = data_dir / "birth-zstd-sh3-balanced.4dgs"
    out = tmp_path / "t.ply"
    t = 1.25
    subprocess.run([cli, "-q", "extract", str(src), "--at", str(t), "-o", str(out)], check=True)
    cloud = fourdgs.read_ply(out)
    frame = fourdgs.open(src).evaluate(t)
    assert len(cloud) == len(frame) > 0 and cloud.sh_degree == frame.sh_degree
    assert np.array_equal(cloud.positions, frame.center)
    assert np.allclose(cloud.scales, frame.scale, rtol=1e-5)
    assert np.allclose(cloud.colors, frame.color, atol=1e-5)
    assert np.array_equal(cloud.rotations, frame.rotation)
    assert np.allclose(cloud.sh, frame.sh_coefficients(), atol=1e-6)


def test_cpp_convert_reads_the_python_plys(tmp_path, cli):
    """The Python writer's PLYs, converted by the C++ tool, give the gaussians the Python
    conversion gives (both are §12's per-frame import)."""
    frames_on_disk(tmp_path / "frames", count=3)
    cpp = tmp_path / "cpp.4dgs"
    subprocess.run([cli, "-q", "convert", str(tmp_path / "frames"), "-o", str(cpp), "--fps", "2"],
                   check=True)
    clouds = [fourdgs.read_ply(tmp_path / "frames" / f"{i:04d}.ply") for i in range(3)]
    with fourdgs.open(cpp) as scene:
        assert scene.windows == [(0.0, 0.5), (0.5, 1.0), (1.0, 1.5)]
        for i, cloud in enumerate(clouds):
            frame = scene.evaluate(i / 2 + 0.25)
            bound = float(scene.quantization.bounds["pos"])
            got = frame.center[np.lexsort(frame.center.T[::-1])]
            want = cloud.positions[np.lexsort(cloud.positions.T[::-1])]
            assert len(got) == len(want)
            assert np.abs(np.sort(got, axis=0) - np.sort(want, axis=0)).max() <= bound * 1.001


def doc_blocks(root):
    text = (root / "docs" / "python.md").read_text()
    return re.findall(r"<!-- tested: python/tests/test_ply.py runs this block -->\n```python\n(.*?)```",
                      text, re.S)


def test_the_docs_mention_every_tested_block(root):
    blocks = doc_blocks(root)
    assert len(blocks) == 2
    code = [line for line in blocks[0].splitlines() if line.strip() and not line.startswith("import")]
    assert len(code) <= 10  # the ten-line example


@pytest.mark.parametrize("index", [0, 1])
def test_docs_example_runs_as_written(root, tmp_path, index):
    clouds = frames_on_disk(tmp_path / "frames")
    code = doc_blocks(root)[index]
    package = os.path.dirname(os.path.dirname(os.path.abspath(fourdgs.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([package, os.environ.get("PYTHONPATH", "")]))
    if os.sep in fourdgs.library_path():  # the library this run loaded, wherever the cwd is
        env["FOURDGS_C_LIBRARY"] = os.path.abspath(fourdgs.library_path())
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    with fourdgs.open(tmp_path / "scene.4dgs") as scene:
        assert scene.header.gaussian_count == 6 * 200 and len(scene.windows) == 6
        assert scene.header.sh_degree == 1
        # Frame 3's instant is frame 3's gaussians, within the file's declared bounds.
        frame = scene.evaluate(3.5 / 30)
        want = clouds[3]["positions"]
        assert len(frame) == len(want)
        bound = float(scene.quantization.bounds["pos"])
        assert np.abs(np.sort(frame.center, axis=0) - np.sort(want, axis=0)).max() <= bound * 1.001
        assert np.all(frame.color >= 0) and np.all(frame.color <= 1)
    if index == 0:
        shape, mean = run.stdout.split(")")
        assert shape.strip() == "(200, 3"
        assert 0 < float(mean) < 1
