#!/usr/bin/env python3
"""End-to-end tests of the `4dgs` tool: they generate PLY frame sequences, drive the built
binary, and check what it writes against the input.

    usage: cli_tests.py PATH/TO/4dgs SOURCE_DIR TEST_NAME

Each TEST_NAME is one ctest test (src/cli/CMakeLists.txt). Exit 0 on success; a failure prints
what differed and exits 1.
"""
import json
import math
import os
import random
import struct
import subprocess
import sys
import tempfile
import zlib

C0 = 0.28209479177387814
FPS = 8  # frame times k / 8 are exact in f32, so a window edge lands exactly on a frame time
EPS = 2e-6


class Failure(Exception):
    pass


def check(cond, message):
    if not cond:
        raise Failure(message)


# ---- PLY in and out ----------------------------------------------------------------------------

def ply_names(degree, normals=True):
    names = ["x", "y", "z"] + (["nx", "ny", "nz"] if normals else [])
    names += ["f_dc_0", "f_dc_1", "f_dc_2"]
    names += ["f_rest_%d" % k for k in range(3 * ((degree + 1) ** 2 - 1))]
    return names + ["opacity", "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2", "rot_3"]


def gaussian_row(g, degree):
    """A gaussian in user terms (position, log scale, wxyz rotation, rgb, alpha, sh) to PLY
    values in ply_names order."""
    row = list(g["p"]) + [0.0, 0.0, 0.0] + [(c - 0.5) / C0 for c in g["rgb"]]
    row += g["sh"]
    a = min(max(g["alpha"], 1e-6), 1 - 1e-6)
    row += [math.log(a / (1 - a))] + list(g["log_s"]) + list(g["q"])
    return row


def write_ply(path, gaussians, degree, fmt="binary_little_endian", drop=None):
    names = [n for n in ply_names(degree) if n != drop]
    header = "ply\nformat %s 1.0\nelement vertex %d\n" % (fmt, len(gaussians))
    header += "".join("property float %s\n" % n for n in names) + "end_header\n"
    full = ply_names(degree)
    endian = ">" if fmt == "binary_big_endian" else "<"
    with open(path, "wb") as f:
        f.write(header.encode())
        for g in gaussians:
            row = dict(zip(full, gaussian_row(g, degree)))
            vals = [row[n] for n in names]
            if fmt == "ascii":
                f.write((" ".join("%g" % v for v in vals) + "\n").encode())
            else:
                f.write(struct.pack(endian + "%df" % len(vals), *vals))


def read_ply(path):
    data = open(path, "rb").read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    lines = data[:end].decode().splitlines()
    check(lines[1] == "format binary_little_endian 1.0", "extracted PLY format: %s" % lines[1])
    count = int([l for l in lines if l.startswith("element vertex")][0].split()[2])
    names = [l.split()[2] for l in lines if l.startswith("property")]
    for l in lines:
        if l.startswith("property"):
            check(l.split()[1] == "float", "property not float: " + l)
    rest = len([n for n in names if n.startswith("f_rest_")])
    degree = {0: 0, 9: 1, 24: 2, 45: 3}[rest]
    check(names == ply_names(degree), "property order %s" % names)
    out = []
    stride = 4 * len(names)
    check(len(data) - end == count * stride, "PLY body size")
    for i in range(count):
        vals = struct.unpack_from("<%df" % len(names), data, end + i * stride)
        r = dict(zip(names, vals))
        out.append({
            "p": [r["x"], r["y"], r["z"]],
            "rgb": [0.5 + C0 * r["f_dc_%d" % c] for c in range(3)],
            "alpha": 1 / (1 + math.exp(-r["opacity"])),
            "log_s": [r["scale_%d" % c] for c in range(3)],
            "q": [r["rot_%d" % c] for c in range(4)],
            "sh": [r["f_rest_%d" % k] for k in range(rest)],
        })
    return out, degree


# ---- content -----------------------------------------------------------------------------------

def unit_quat(rng):
    q = [rng.gauss(0, 1) for _ in range(4)]
    n = math.sqrt(sum(v * v for v in q))
    return [v / n for v in q]


def random_gaussian(rng, p, degree):
    return {
        "p": p,
        "log_s": [math.log(rng.uniform(0.01, 0.05)) for _ in range(3)],
        "q": unit_quat(rng),
        "rgb": [rng.uniform(0.05, 0.95) for _ in range(3)],
        "alpha": rng.uniform(0.3, 0.95),
        "sh": [rng.uniform(-1, 1) for _ in range(3 * ((degree + 1) ** 2 - 1))],
    }


def lattice(rng, n):
    """n well-separated points (0.1 apart) in a 1-unit box, jittered."""
    side = math.ceil(n ** (1 / 3))
    pts = []
    for i in range(n):
        x, y, z = i % side, (i // side) % side, i // (side * side)
        pts.append([0.1 * x + rng.uniform(-0.01, 0.01), 0.1 * y + rng.uniform(-0.01, 0.01),
                    0.1 * z + rng.uniform(-0.01, 0.01)])
    return pts


def untracked_frames(rng, frames, degree):
    """Independent frames: a different gaussian count and content in each."""
    return [[random_gaussian(rng, p, degree) for p in lattice(rng, 40 + 7 * k)]
            for k in range(frames)]


def tracked_frames(rng, frames, n, degree, accelerating=0):
    """The same gaussians in every frame, moving slowly: constant velocity, except the first
    `accelerating` ones, which accelerate (so adaptive sampling has to split them)."""
    base = [random_gaussian(rng, p, degree) for p in lattice(rng, n)]
    vel = [[rng.uniform(-0.02, 0.02) for _ in range(3)] for _ in range(n)]
    out = []
    for k in range(frames):
        t = k / FPS
        frame = []
        for i, g in enumerate(base):
            h = dict(g)
            acc = 0.4 if i < accelerating else 0.0
            h["p"] = [g["p"][c] + vel[i][c] * t + (acc * t * t if c == 0 else 0) for c in range(3)]
            frame.append(h)
        out.append(frame)
    return out


def turning_body_frames(rng, frames, n):
    """n gaussians of one rigid body turning 0.2 rad a frame about a tilted axis while it moves,
    each one's rotation (w x y z) turned with it."""
    base = [random_gaussian(rng, p, 0) for p in lattice(rng, n)]
    axis = [0.3, 1.0, 0.2]
    norm = math.sqrt(sum(v * v for v in axis))
    out = []
    for k in range(frames):
        half = 0.1 * k
        r = [math.cos(half)] + [math.sin(half) * v / norm for v in axis]  # w x y z
        frame = []
        for g in base:
            h = dict(g)
            h["q"] = quat_mul(r, g["q"])
            rotated = quat_mul(quat_mul(r, [0.0] + [v - 0.25 for v in g["p"]]),
                               [r[0], -r[1], -r[2], -r[3]])
            h["p"] = [rotated[1 + c] + 0.25 + (0.05 * k if c == 0 else 0) for c in range(3)]
            frame.append(h)
        out.append(frame)
    return out


def quat_mul(a, b):
    """The Hamilton product of two w x y z quaternions."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return [aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw]


def write_sequence(directory, frames, degree):
    os.makedirs(directory, exist_ok=True)
    for k, frame in enumerate(frames):
        # Natural order matters: frame_2 must come before frame_10.
        write_ply(os.path.join(directory, "frame_%d.ply" % k), frame, degree)


# ---- running the tool --------------------------------------------------------------------------

def run(tool, *args, expect=0):
    p = subprocess.run([tool] + list(args), capture_output=True, text=True)
    if expect is not None and p.returncode != expect:
        raise Failure("4dgs %s: exit %d (wanted %d)\nstdout: %s\nstderr: %s" %
                      (" ".join(args), p.returncode, expect, p.stdout[-2000:], p.stderr[-2000:]))
    return p


def info_json(tool, path):
    return json.loads(run(tool, "info", path, "--json").stdout)


def tolerances(info):
    meta = [m for m in info["metadata"] if m["name"] == "4dgs-convert"]
    check(len(meta) == 1, "no 4dgs-convert metadata")
    e = meta[0]["entries"]
    return {k: float(e["tolerance." + k]) for k in ("pos", "scale_rel", "rot", "rgb", "alpha")}


def deviations(expected, got):
    """Per-attribute maximum deviation between two matched gaussians."""
    d = {"pos": max(abs(a - b) for a, b in zip(expected["p"], got["p"])),
         "scale_rel": max(abs(a - b) for a, b in zip(expected["log_s"], got["log_s"])),
         "rgb": max(abs(min(max(a, 0), 1) - b) for a, b in zip(expected["rgb"], got["rgb"])),
         "alpha": abs(expected["alpha"] - got["alpha"])}
    qa = expected["q"]
    n = math.sqrt(sum(v * v for v in qa))
    qa = [v / n for v in qa]
    qb = got["q"]
    d["rot"] = min(max(abs(a - b) for a, b in zip(qa, qb)), max(abs(a + b) for a, b in zip(qa, qb)))
    d["sh"] = max([abs(max(min(a, 4), -4) - b) for a, b in zip(expected["sh"], got["sh"])] or [0])
    return d


def match(expected, got, tol):
    """Pairs each expected gaussian with the extracted one nearest to it (positions are 0.1
    apart and bounds are far smaller, so the nearest is the one)."""
    check(len(expected) == len(got), "extracted %d gaussians, expected %d" % (len(got), len(expected)))
    pairs = []
    for e in expected:
        best = min(got, key=lambda g: sum((a - b) ** 2 for a, b in zip(e["p"], g["p"])))
        pairs.append((e, best))
    return pairs


def compare_frames(tool, scene, frames, degree, tmp, limits):
    """Extracts every frame time and checks each attribute against `limits` (per key)."""
    worst = {}
    for k, frame in enumerate(frames):
        out = os.path.join(tmp, "extract_%d.ply" % k)
        run(tool, "-q", "extract", scene, "--at", repr(k / FPS), "-o", out)
        got, got_degree = read_ply(out)
        check(got_degree == degree, "extracted SH degree %d, expected %d" % (got_degree, degree))
        for e, g in match(frame, got, limits):
            for key, v in deviations(e, g).items():
                worst[key] = max(worst.get(key, 0), v)
    for key, v in worst.items():
        check(v <= limits[key], "frame deviation %s = %g exceeds %g" % (key, v, limits[key]))
    return worst


def declared(info):
    return {k: float(v) for k, v in info["quantization"]["bounds"].items()}


# ---- the tests ---------------------------------------------------------------------------------

def test_convert_per_frame(tool, src, tmp):
    rng = random.Random(1)
    degree = 1
    frames = untracked_frames(rng, 5, degree)
    seq = os.path.join(tmp, "seq")
    write_sequence(seq, frames, degree)
    scene = os.path.join(tmp, "per_frame.4dgs")
    rep = json.loads(run(tool, "-q", "convert", seq, "-o", scene, "--fps", str(FPS), "--json").stdout)
    check(rep["frames"] == 5 and rep["shape"] == "per-frame", "report %s" % rep)
    check(rep["records"] == sum(len(f) for f in frames), "one record per gaussian per frame")
    check(rep["output_bytes"] == os.path.getsize(scene), "reported size")
    check(rep["input_bytes"] > 0 and 0 < rep["ratio"] < 1, "size against the PLY input: %s" % rep)
    info = info_json(tool, scene)
    check(info["header"]["temporal_model"] == "gaussian-birth", "model")
    check(len(info["windows"]) == 5, "one window per frame: %s" % info["windows"])
    tol = tolerances(info)
    bounds = declared(info)
    limits = {k: min(tol[k], bounds[k]) + EPS for k in tol}
    limits["sh"] = 4 / 255 + EPS
    compare_frames(tool, scene, frames, degree, tmp, limits)
    # Mid-frame instants hold the same frame (zero velocity, never fading).
    out = os.path.join(tmp, "mid.ply")
    run(tool, "-q", "extract", scene, "--at", repr(2.5 / FPS), "-o", out)
    check(len(read_ply(out)[0]) == len(frames[2]), "mid-frame instant")
    # --sh-degree 0 drops f_rest.
    run(tool, "-q", "extract", scene, "--at", "0", "-o", out, "--sh-degree", "0")
    check(read_ply(out)[1] == 0, "--sh-degree 0")


def test_convert_quiet_prints_nothing(tool, src, tmp):
    """`4dgs -q convert` writes the file and prints nothing (no summary, no per-part or per-shard
    report, not even on a shard of a plan); without -q the report is printed; --json still prints
    the JSON it asks for."""
    rng = random.Random(7)
    frames = untracked_frames(rng, 4, 0)
    seq = os.path.join(tmp, "seq")
    write_sequence(seq, frames, 0)
    scene = os.path.join(tmp, "q.4dgs")
    loud = run(tool, "convert", seq, "-o", scene, "--fps", str(FPS))
    check("frames" in loud.stdout, "without -q, convert reports: %r" % loud.stdout)
    quiet = run(tool, "-q", "convert", seq, "-o", scene, "--fps", str(FPS))
    check(quiet.stdout == "" and quiet.stderr == "",
          "-q convert printed %r / %r" % (quiet.stdout, quiet.stderr))
    check(os.path.getsize(scene) > 0, "-q convert wrote the file")
    grid = os.path.join(tmp, "grid.json")
    run(tool, "-q", "plan", seq, "--fps", str(FPS), "-o", grid)
    part = os.path.join(tmp, "part.4dgs")
    shard = run(tool, "-q", "convert", seq, "--grid", grid, "--frames", "0:2", "-o", part)
    check(shard.stdout == "" and shard.stderr == "",
          "-q convert of a shard printed %r / %r" % (shard.stdout, shard.stderr))
    rep = json.loads(run(tool, "-q", "convert", seq, "-o", scene, "--fps", str(FPS), "--json").stdout)
    check(rep["frames"] == 4, "-q --json still reports: %s" % rep)


def tracked_case(tmp, name, accelerating):
    rng = random.Random(2)
    degree = 1
    frames = tracked_frames(rng, 16, 60, degree, accelerating)
    seq = os.path.join(tmp, name)
    write_sequence(seq, frames, degree)
    return frames, degree, seq


def test_convert_keyframe_delta(tool, src, tmp):
    frames, degree, seq = tracked_case(tmp, "kd", 10)
    scene = os.path.join(tmp, "kd.4dgs")
    rep = json.loads(run(tool, "-q", "convert", seq, "-o", scene, "--fps", str(FPS), "--tracked",
                         "--model", "keyframe-delta", "--keyframe-every", "4", "--json").stdout)
    check(rep["shape"] == "keyframe-delta", "shape")
    info = info_json(tool, scene)
    check(info["header"]["temporal_model"] == "keyframe-delta", "model")
    kinds = [c.get("kind") for c in info["chunks"]]
    check(kinds.count("keyframe") == 4 and kinds.count("delta") == 12, "cadence: %s" % kinds)
    tol = tolerances(info)
    bounds = declared(info)
    limits = {k: min(tol[k], bounds[k]) + EPS for k in tol}
    limits["rgb"] = tol["rgb"] + EPS  # keyframe-delta holds colour within the tolerance
    limits["sh"] = 4 / 255 + EPS
    compare_frames(tool, scene, frames, degree, tmp, limits)
    # Each delta took the smaller reference; every delta chained is never smaller.
    check(rep["deltas"] == 12 and 0 <= rep["keyframe_referenced"] <= 12, "deltas: %s" % rep)
    chained = os.path.join(tmp, "kd-chained.4dgs")
    crep = json.loads(run(tool, "-q", "convert", seq, "-o", chained, "--fps", str(FPS),
                          "--tracked", "--model", "keyframe-delta", "--keyframe-every", "4",
                          "--delta-reference", "chained", "--json").stdout)
    check(crep["keyframe_referenced"] == 0, "--delta-reference chained: %s" % crep)
    check(rep["output_bytes"] <= crep["output_bytes"], "cheaper <= chained")
    run(tool, "-q", "convert", seq, "-o", chained, "--fps", str(FPS), "--tracked", "--model",
        "keyframe-delta", "--delta-reference", "nearest", expect=3)
    # Without --keyframe-every a GOP is one second of frames (at 8 fps: keyframes at 0 and 8),
    # and every frame still decodes within the tolerance.
    second = os.path.join(tmp, "kd-second.4dgs")
    run(tool, "-q", "convert", seq, "-o", second, "--fps", str(FPS), "--tracked", "--model",
        "keyframe-delta")
    skinds = [c.get("kind") for c in info_json(tool, second)["chunks"]]
    check(skinds.count("keyframe") == 2 and skinds.count("delta") == 14, "cadence: %s" % skinds)
    compare_frames(tool, second, frames, degree, tmp, limits)
    # Without --tracked a keyframe-delta conversion is refused (no correspondence to keep).
    run(tool, "-q", "convert", seq, "-o", os.path.join(tmp, "x.4dgs"), "--fps", "8",
        "--model", "keyframe-delta", expect=3)


def test_convert_adaptive(tool, src, tmp):
    frames, degree, seq = tracked_case(tmp, "adaptive", 10)
    per_frame = os.path.join(tmp, "pf.4dgs")
    adaptive = os.path.join(tmp, "adaptive.4dgs")
    run(tool, "-q", "convert", seq, "-o", per_frame, "--fps", str(FPS))
    rep = json.loads(run(tool, "-q", "convert", seq, "-o", adaptive, "--fps", str(FPS), "--tracked",
                         "--json").stdout)
    check(rep["shape"] == "adaptive", "shape")
    n = len(frames[0])
    # Constant-velocity gaussians collapse to one record; accelerating ones split.
    check(n < rep["records"] < n * len(frames), "records %d for %d gaussians" % (rep["records"], n))
    pf, ad = os.path.getsize(per_frame), os.path.getsize(adaptive)
    check(ad < pf, "adaptive file %d bytes is not smaller than per-frame %d" % (ad, pf))
    info = info_json(tool, adaptive)
    tol = tolerances(info)
    limits = {k: tol[k] + EPS for k in tol}
    limits["sh"] = 4 / 255 + EPS
    compare_frames(tool, adaptive, frames, degree, tmp, limits)


def quat_mul(a, b):
    """a ⊗ b for quaternions stored w x y z (the PLY's rot_0..3)."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return [aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw]


def test_convert_rigid_parts(tool, src, tmp):
    """A still part and a body spinning about z while it moves along y: --tracked stores the body
    once as an object moved by its Object Track, reports both parts with their bytes, writes less
    than per frame, and every frame comes back within the recorded tolerance."""
    rng = random.Random(5)
    degree = 0
    still = [random_gaussian(rng, p, degree) for p in lattice(rng, 150)]
    body = [random_gaussian(rng, [p[0] + 2, p[1], p[2]], degree) for p in lattice(rng, 250)]
    frames = []
    for k in range(10):
        t = k / FPS
        a = 0.6 * t
        r = [math.cos(a / 2), 0, 0, math.sin(a / 2)]
        frame = [dict(g) for g in still]
        for g in body:
            h = dict(g)
            x, y = g["p"][0] - 2.5, g["p"][1] - 0.5
            h["p"] = [2.5 + math.cos(a) * x - math.sin(a) * y,
                      0.5 + math.sin(a) * x + math.cos(a) * y + 0.3 * t, g["p"][2]]
            h["q"] = quat_mul(r, g["q"])
            frame.append(h)
        frames.append(frame)
    seq = os.path.join(tmp, "rigid")
    write_sequence(seq, frames, degree)
    scene = os.path.join(tmp, "rigid.4dgs")
    rep = json.loads(run(tool, "-q", "convert", seq, "-o", scene, "--fps", str(FPS), "--tracked",
                         "--report-sizes", "--json").stdout)
    parts = rep["parts"]
    check(parts["static"]["gaussians"] == 150, "static %s" % parts)
    check([o["gaussians"] for o in parts["objects"]] == [250], "objects %s" % parts)
    check(parts["other"]["gaussians"] == 0, "other %s" % parts)
    check(all(p["bytes"] > 0 for p in [parts["static"]] + parts["objects"]), "bytes %s" % parts)
    check(rep["output_bytes"] < 0.3 * rep["per_frame_bytes"],
          "%d bytes against %d per frame" % (rep["output_bytes"], rep["per_frame_bytes"]))
    info = info_json(tool, scene)
    tol = tolerances(info)
    limits = {k: tol[k] + EPS for k in tol}
    limits["sh"] = 4 / 255 + EPS
    compare_frames(tool, scene, frames, degree, tmp, limits)
    text = run(tool, "convert", seq, "-o", scene, "--fps", str(FPS), "--tracked").stdout
    check("rigid object #1" in text and "static" in text, "report: %s" % text)
    # Without --report-sizes no part is encoded alone and the per-frame file is counted only
    # until it is larger than the file: the report says so rather than giving sizes.
    check("alone\n" not in text and "per-frame encoding: larger" in text, "report: %s" % text)
    p = run(tool, "validate", scene, expect=None)
    check(p.returncode in (0, 2) and "valid" in p.stdout, "validate: %s" % p.stdout)


def test_convert_refusals(tool, src, tmp):
    rng = random.Random(3)
    gs = [random_gaussian(rng, p, 0) for p in lattice(rng, 8)]
    cases = {
        "ascii": ("ply-ascii-format", dict(fmt="ascii")),
        "big": ("ply-big-endian", dict(fmt="binary_big_endian")),
        "missing": ("ply-missing-property", dict(drop="opacity")),
    }
    for name, (refusal, kw) in cases.items():
        path = os.path.join(tmp, name + ".ply")
        write_ply(path, gs, 0, **kw)
        out = os.path.join(tmp, name + ".4dgs")
        p = run(tool, "convert", path, "-o", out, "--fps", "8", expect=1)
        check(refusal in p.stderr, "%s: wanted %s in %r" % (name, refusal, p.stderr))
        check(not os.path.exists(out), "%s: a partial output was left" % name)
    good = os.path.join(tmp, "good.ply")
    write_ply(good, gs, 0)
    truncated = os.path.join(tmp, "truncated.ply")
    data = open(good, "rb").read()
    open(truncated, "wb").write(data[:-10])
    out = os.path.join(tmp, "truncated.4dgs")
    # The good frame first: the refusal comes after a frame was read, and still nothing is left.
    p = run(tool, "convert", good, truncated, "-o", out, "--fps", "8", expect=1)
    check("ply-truncated-body" in p.stderr, "truncated: %r" % p.stderr)
    check(not [f for f in os.listdir(tmp) if f.startswith("truncated.4dgs")], "partial output left")
    # A tracked conversion of frames with different counts is refused by name.
    short = os.path.join(tmp, "short.ply")
    write_ply(short, gs[:5], 0)
    p = run(tool, "convert", good, short, "-o", out, "--fps", "8", "--tracked", expect=1)
    check("frames-not-tracked" in p.stderr, "untracked: %r" % p.stderr)


def patch_bound(data, key):
    """Re-spells the value of bounds[key] (same length) so it no longer matches the §5.3 grammar:
    the file still reads, and a validator should warn that the bound declares nothing."""
    k = struct.pack("<I", len(key)) + key.encode()
    i = data.index(k) + len(k)
    (n,) = struct.unpack_from("<I", data, i)
    value = bytearray(data[i + 4:i + 4 + n])
    value[0:1] = b"x"
    return data[:i + 4] + bytes(value) + data[i + 4 + n:]


def test_validate_statuses(tool, src, tmp):
    rng = random.Random(4)
    seq = os.path.join(tmp, "seq")
    write_sequence(seq, untracked_frames(rng, 2, 0), 0)
    scene = os.path.join(tmp, "valid.4dgs")
    run(tool, "-q", "convert", seq, "-o", scene, "--fps", "8",
        "--coordinate-system", "right-handed, y-up")
    p = run(tool, "validate", scene, "--json", expect=None)
    report = json.loads(p.stdout)
    check(p.returncode == 0 and report["valid"] and report["warnings"] == 0,
          "a converted file validates clean: exit %d, %s" % (p.returncode, p.stdout[:2000]))
    # Two files with warnings only: one that records no coordinate system (a SHOULD of §2), and
    # the valid one with a bound re-spelled outside the §5.3 grammar.
    no_frame = os.path.join(tmp, "no-frame.4dgs")
    run(tool, "-q", "convert", seq, "-o", no_frame, "--fps", "8")
    warn = os.path.join(tmp, "warn.4dgs")
    open(warn, "wb").write(patch_bound(open(scene, "rb").read(), "rgb"))
    for path in (no_frame, warn):
        p = run(tool, "validate", path, "--json", expect=None)
        report = json.loads(p.stdout)
        check(p.returncode == 2, "%s: exit %d (wanted 2)\n%s" % (path, p.returncode, p.stdout[:2000]))
        check(report["warnings"] > 0 and report["errors"] == 0, "warnings reported")
        for f in report["findings"]:
            for k in ("severity", "rule", "field", "value", "offset", "section", "message"):
                check(k in f, "finding lacks %s" % k)
        run(tool, "validate", path, expect=2)  # the text form exits the same way
    p = run(tool, "validate", os.path.join(tmp, "does-not-exist.4dgs"), expect=3)
    p = run(tool, "validate", expect=3)  # usage
    bad = os.path.join(tmp, "bad.4dgs")
    open(bad, "wb").write(b"not a 4dgs file at all")
    p = run(tool, "validate", bad, expect=1)


def test_validate_refusal_corpus(tool, src, tmp):
    corpus = os.path.join(src, "conformance", "corpus", "refusals")
    if not os.path.isdir(corpus):
        print("no refusal corpus at %s yet: nothing to check" % corpus)
        return
    names = sorted(f[:-5] for f in os.listdir(corpus) if f.endswith(".4dgs"))
    check(names, "the refusal corpus is empty")
    for name in names:
        expected = json.load(open(os.path.join(corpus, name + ".expected.json")))["refused"]
        p = run(tool, "validate", os.path.join(corpus, name + ".4dgs"), expect=None)
        check(p.returncode == 1, "%s: exit %d (wanted 1)\n%s" % (name, p.returncode, p.stdout[-1000:]))
        check(expected in p.stdout + p.stderr, "%s: %s not in the output" % (name, expected))
    print("%d refusal corpus files" % len(names))


def read_png(path):
    data = open(path, "rb").read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG")
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            check(depth == 8 and ctype in (2, 6), "PNG type")
            bpp = 4 if ctype == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pr) & 255
        rows.append(line)
        prev = line
    return w, h, lambda x, y: tuple(rows[y][x * bpp:x * bpp + 3])


def test_preview_red_gaussian(tool, src, tmp):
    red = {"p": [0, 0, 0], "log_s": [math.log(0.4)] * 3, "q": [1, 0, 0, 0], "rgb": [1, 0, 0],
           "alpha": 0.99, "sh": []}
    # Two faint specks give the scene an extent to frame; they are far too small to show.
    speck = lambda p: {"p": p, "log_s": [math.log(0.001)] * 3, "q": [1, 0, 0, 0],
                       "rgb": [0, 0, 0], "alpha": 0.01, "sh": []}
    frame = [red, speck([-1, -1, -1]), speck([1, 1, 1])]
    ply = os.path.join(tmp, "red.ply")
    write_ply(ply, frame, 0)
    scene = os.path.join(tmp, "red.4dgs")
    run(tool, "-q", "convert", ply, "-o", scene, "--fps", "1")
    png = os.path.join(tmp, "red.png")
    run(tool, "-q", "preview", scene, "--at", "0.5", "-o", png, "--width", "64", "--height", "48")
    w, h, px = read_png(png)
    check((w, h) == (64, 48), "size %dx%d" % (w, h))
    r, g, b = px(w // 2, h // 2)
    check(r > 150 and g < 60 and b < 60, "centre pixel %s is not red" % ((r, g, b),))
    for x, y in ((0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1)):
        check(max(px(x, y)) < 20, "corner %s is %s, not the black background" % ((x, y), px(x, y)))
    tl = os.path.join(tmp, "live.png")
    run(tool, "-q", "timeline", scene, "-o", tl)
    check(read_png(tl)[0] > 0, "timeline PNG")


def test_info_dump_extract(tool, src, tmp):
    example = os.path.join(src, "examples", "data", "example.4dgs")
    p = run(tool, "info", example)
    for word in ("temporal model", "chunks", "seek", "live", "audio sources", "camera"):
        check(word in p.stdout, "info lacks %r" % word)
    info = info_json(tool, example)
    check(info["header"]["duration_sec"] > 0 and info["chunks"], "info --json")
    for c in info["chunks"]:
        check(c["seek_cost"] >= c["length"], "seek cost covers the chunk")
    recs = json.loads(run(tool, "dump", example, "--records", "--json").stdout)["records"]
    check(recs[0]["offset"] == 8 and recs[0]["name"] == "Header", "first record %s" % recs[0])
    for a, b in zip(recs, recs[1:]):
        check(a["offset"] + a["length"] == b["offset"], "records tile the file")
    idx = json.loads(run(tool, "dump", example, "--index", "--json").stdout)["entries"]
    check(len(idx) == len(info["chunks"]), "index entries")
    t = info["header"]["duration_sec"] / 2
    g = json.loads(run(tool, "dump", example, "--gaussians", "--at", repr(t), "--json").stdout)
    out = os.path.join(tmp, "example.ply")
    run(tool, "-q", "extract", example, "--at", repr(t), "-o", out)
    check(len(read_ply(out)[0]) == g["visible"], "extract and dump agree on the visible count")
    allg = json.loads(run(tool, "dump", example, "--gaussians", "--json").stdout)
    check(sum(len(c["gaussians"]) for c in allg["chunks"]) == info["header"]["gaussian_count"],
          "dump --gaussians holds every gaussian")
    run(tool, "dump", example, expect=3)  # none of --records/--index/--gaussians
    # The walk stops at the first damaged frame and says why, through the readers' record stream.
    data = open(example, "rb").read()
    cut = os.path.join(tmp, "cut.4dgs")
    with open(cut, "wb") as f:
        f.write(data[:recs[1]["offset"] + 20])
    d = json.loads(run(tool, "dump", cut, "--records", "--json", expect=None).stdout)
    check(len(d["records"]) == 1 and d["stopped"].startswith("truncated"),
          "a cut file dumps its whole records, then stops: %s" % d.get("stopped"))
    bad_tail = os.path.join(tmp, "bad-tail.4dgs")
    with open(bad_tail, "wb") as f:
        f.write(data[:-1] + b"X")
    d = json.loads(run(tool, "dump", bad_tail, "--records", "--json", expect=None).stdout)
    check(len(d["records"]) == len(recs) and d["stopped"].startswith("magic-mismatch"),
          "a damaged trailing magic is named after every record: %s" % d.get("stopped"))
    run(tool, "info", os.path.join(tmp, "missing.4dgs"), expect=3)
    run(tool, "extract", example, "--at", "1e9", "-o", out, expect=1)


def shard_and_merge(tool, seq, tmp, name, plan_args, shards):
    """Plans `seq`, encodes `shards` slices of it on the plan, merges them, and encodes the whole
    sequence on the plan in one process. Returns (merged, single, merge report)."""
    work = os.path.join(tmp, name)
    os.makedirs(work)
    grid = os.path.join(work, "grid.json")
    run(tool, "-q", "plan", seq, "--fps", str(FPS), "-o", grid, *plan_args)
    slices = run(tool, "slices", grid, str(shards)).stdout.split()
    check(len(slices) == shards, "%d slices for %d shards: %s" % (len(slices), shards, slices))
    parts = []
    for k, s in enumerate(slices):
        part = os.path.join(work, "part_%d.4dgs" % k)
        run(tool, "-q", "convert", seq, "--grid", grid, "--frames", s, "-o", part,
            "--coordinate-system", "right-handed, y-up")
        parts.append(part)
    merged = os.path.join(work, "merged.4dgs")
    rep = json.loads(run(tool, "merge", *reversed(parts), "-o", merged, "--json").stdout)
    single = os.path.join(work, "single.4dgs")
    run(tool, "-q", "convert", seq, "--grid", grid, "-o", single,
        "--coordinate-system", "right-handed, y-up")
    return merged, single, rep


def read_through_python(src, merged, single, degree):
    """The merged file read through the Python package over the C ABI (python/), at every
    frame's middle, gives what the single-process file gives. Only where the test is told the
    shared library's path (not under the sanitizers: capi/CMakeLists.txt says why) and numpy is
    there."""
    if not os.environ.get("FOURDGS_C_LIBRARY"):
        return
    try:
        import numpy
    except ImportError:
        return
    sys.path.insert(0, os.path.join(src, "python"))
    import fourdgs
    with fourdgs.open(merged) as m, fourdgs.open(single) as s:
        mh, sh = m.header, s.header
        check(mh.gaussian_count == sh.gaussian_count and mh.gaussian_count > 0,
              "python: gaussian counts %s, %s" % (mh.gaussian_count, sh.gaussian_count))
        frames = round(mh.duration_sec * FPS)
        check(frames > 0, "python: the merged scene has frames")
        for k in range(frames):
            t = (k + 0.5) / FPS
            a, b = m.evaluate(t, sh_degree=degree), s.evaluate(t, sh_degree=degree)
            check(len(a.center) > 0 and len(a.center) == len(b.center),
                  "python: %d and %d visible at %g" % (len(a.center), len(b.center), t))
            for col in ("center", "scale", "rotation", "color", "sh"):
                check(numpy.array_equal(getattr(a, col), getattr(b, col)),
                      "python: %s differs at %g" % (col, t))


def test_plan_shard_merge(tool, src, tmp):
    rng = random.Random(5)
    degree = 1
    untracked = os.path.join(tmp, "untracked")
    write_sequence(untracked, untracked_frames(rng, 6, degree), degree)
    frames, degree, tracked = tracked_case(tmp, "tracked", 10)
    cases = [("per-frame", untracked, [], 3),
             ("adaptive", tracked, ["--tracked", "--segment-frames", "4"], 4),
             ("keyframe-delta", tracked, ["--tracked", "--model", "keyframe-delta",
                                          "--keyframe-every", "4"], 3)]
    for shape, seq, plan_args, shards in cases:
        merged, single, rep = shard_and_merge(tool, seq, tmp, shape, plan_args, shards)
        check(rep["parts"] == shards and rep["chunks"] > 0, "%s merge report %s" % (shape, rep))
        check(rep["bytes_verbatim"] > rep["bytes_written"] // 2,
              "%s: most bytes are copied as they are: %s" % (shape, rep))
        # The shards of a plan, merged, are what one process writes on that plan.
        check(open(merged, "rb").read() == open(single, "rb").read(),
              "%s: the merged file differs from the single-process one" % shape)
        p = run(tool, "validate", merged, "--json", expect=None)
        v = json.loads(p.stdout)
        check(p.returncode == 0 and v["errors"] == 0 and v["warnings"] == 0,
              "%s: merged file does not validate clean: %s" % (shape, v["findings"]))
        info = info_json(tool, merged)
        check(info["header"]["temporal_model"] ==
              ("keyframe-delta" if shape == "keyframe-delta" else "gaussian-birth"), "model")
        # info shows the tolerance asked for beside each bound the file declares.
        tol = info["quantization"]["tolerance"]
        for k in ("pos", "scale_rel", "rot", "rgb", "alpha"):
            check(float(info["quantization"]["bounds"][k]) <= float(tol[k]),
                  "%s: bound %s over its tolerance" % (shape, k))
        text = run(tool, "info", merged).stdout
        check("tolerance " + tol["pos"] in text, "info text shows the tolerance beside the bound")
        read_through_python(src, merged, single, degree)
    # The merged keyframe-delta scene decodes within its bounds at every frame.
    info = info_json(tool, os.path.join(tmp, "keyframe-delta", "merged.4dgs"))
    tol = tolerances(info)
    bounds = declared(info)
    limits = {k: min(tol[k], bounds[k]) + EPS for k in tol}
    limits["rgb"] = tol["rgb"] + EPS  # keyframe-delta holds colour within the tolerance
    limits["sh"] = 4 / 255 + EPS
    compare_frames(tool, os.path.join(tmp, "keyframe-delta", "merged.4dgs"), frames, degree, tmp,
                   limits)


def test_merge_refusals(tool, src, tmp):
    rng = random.Random(6)
    degree = 0
    seq = os.path.join(tmp, "seq")
    write_sequence(seq, untracked_frames(rng, 4, degree), degree)

    def part(grid, frames, name, *extra):
        out = os.path.join(tmp, name)
        run(tool, "-q", "convert", seq, "--grid", grid, "--frames", frames, "-o", out, *extra)
        return out

    def refused(args, rule):
        p = run(tool, *args, expect=1)
        check("refused: " + rule in p.stderr, "expected %s: %s" % (rule, p.stderr))
        return p.stderr

    fine, coarse = os.path.join(tmp, "fine.json"), os.path.join(tmp, "coarse.json")
    run(tool, "-q", "plan", seq, "--fps", str(FPS), "-o", fine, "--preset", "fine")
    run(tool, "-q", "plan", seq, "--fps", str(FPS), "-o", coarse, "--preset", "coarse")
    a, b = part(fine, "0:2", "a.4dgs"), part(fine, "2:4", "b.4dgs")
    out = os.path.join(tmp, "out.4dgs")
    # Shards of two plans, before their grids are compared.
    err = refused(["merge", a, part(coarse, "2:4", "c.4dgs"), "-o", out], "plan-mismatch")
    check("a.4dgs" in err and "c.4dgs" in err, "plan-mismatch names both parts: " + err)
    # Files converted without a plan on different grids, named by field.
    fine_whole, coarse_whole = os.path.join(tmp, "fw.4dgs"), os.path.join(tmp, "cw.4dgs")
    run(tool, "-q", "convert", seq, "--fps", str(FPS), "--preset", "fine", "-o", fine_whole)
    run(tool, "-q", "convert", seq, "--fps", str(FPS), "--preset", "coarse", "-o", coarse_whole)
    err = refused(["merge", fine_whole, coarse_whole, "-o", out], "grid-mismatch")
    check("Quantization.step_pos" in err, "grid-mismatch names the field: " + err)
    # Overlapping timelines, unless the union is intended.
    whole = part(fine, "0:4", "whole.4dgs")
    refused(["merge", a, whole, "-o", out], "overlapping-parts")
    run(tool, "-q", "merge", a, whole, "-o", out, "--allow-overlap")
    check(info_json(tool, out)["header"]["gaussian_count"] ==
          info_json(tool, a)["header"]["gaussian_count"] + info_json(tool, whole)["header"]["gaussian_count"],
          "--allow-overlap keeps both parts' gaussians")
    # Conflicting extras: lz4 streams owe an `application` Metadata record the other part lacks.
    refused(["merge", a, part(fine, "2:4", "lz4.4dgs", "--codec", "lz4"), "-o", out],
            "conflicting-extras")
    # A part that is not a .4dgs file, and a missing one.
    err = refused(["merge", a, os.path.join(seq, "frame_0.ply"), "-o", out], "invalid-part")
    check("magic-mismatch" in err, "invalid-part names the underlying refusal: " + err)
    run(tool, "merge", a, os.path.join(tmp, "missing.4dgs"), "-o", out, expect=3)
    check(not [f for f in os.listdir(tmp) if ".partial" in f], "a refused merge leaves no file")
    # The good pair merges.
    run(tool, "-q", "merge", b, a, "-o", out)
    # A plan file that is not one is refused by name; --frames needs a plan.
    broken = os.path.join(tmp, "broken.json")
    with open(fine) as f, open(broken, "w") as g:
        g.write(f.read().replace('"step_rot"', '"step_rotation"'))
    err = refused(["convert", seq, "--grid", broken, "-o", out], "malformed-plan")
    check("broken.json" in err and "grid.step_rot" in err, "malformed-plan names file and key: " + err)
    run(tool, "convert", seq, "--fps", "8", "--frames", "0:2", "-o", out, expect=3)
    run(tool, "convert", seq, "--grid", fine, "--preset", "coarse", "-o", out, expect=3)


def test_sharded_refusals(tool, src, tmp):
    """Bad input in a sharded run, each refused by name when the shards are merged: shards of two
    plans, a missing slice, a shard written by an older build, a plan edited by hand (merge
    --grid, and convert --grid), and shards of another plan than the one merge is given."""
    frames, degree, seq = tracked_case(tmp, "seq", 4)
    out = os.path.join(tmp, "out.4dgs")

    def refused(args, rule, *names):
        p = run(tool, *args, expect=1)
        check("refused: " + rule in p.stderr, "expected %s: %s" % (rule, p.stderr))
        for n in names:
            check(n in p.stderr, "%s names %s: %s" % (rule, n, p.stderr))
        check(not os.path.exists(out), "a refused merge writes nothing")
        return p.stderr

    def shards(grid, name):
        paths = []
        for k, s in enumerate(run(tool, "slices", grid, "4").stdout.split()):
            paths.append(os.path.join(tmp, "%s_%d.4dgs" % (name, k)))
            run(tool, "-q", "convert", seq, "--grid", grid, "--frames", s, "-o", paths[-1])
        return paths

    plan, other = os.path.join(tmp, "plan.json"), os.path.join(tmp, "other.json")
    run(tool, "-q", "plan", seq, "--fps", str(FPS), "--tracked", "--segment-frames", "4", "-o", plan)
    run(tool, "-q", "plan", seq, "--fps", str(FPS), "--tracked", "--segment-frames", "4",
        "--preset", "coarse", "-o", other)
    good, alien = shards(plan, "good"), shards(other, "alien")
    # The good shards merge, also when merge is told their plan.
    run(tool, "-q", "merge", *good, "-o", out, "--grid", plan)
    os.remove(out)
    # Shards from two plans.
    refused(["merge", good[0], good[1], alien[2], good[3], "-o", out], "plan-mismatch",
            os.path.basename(alien[2]))
    # Shards of another plan than the one given.
    refused(["merge", *alien, "-o", out, "--grid", plan], "plan-mismatch", os.path.basename(alien[0]))
    # A missing slice, named by its frames.
    refused(["merge", good[0], good[1], good[3], "-o", out], "missing-slice", "frames [8, 12)")
    refused(["merge", *good[1:], "-o", out], "missing-slice", "frames [0, 4)")
    # A shard written by an older build: its 4dgs-shard record has no shard_format. (The key's
    # bytes are renamed in place: the record keeps its length, and the CRC covers the summary.)
    old = os.path.join(tmp, "old.4dgs")
    data = open(good[2], "rb").read()
    check(data.count(b"shard_format") == 1, "one shard_format key in a shard")
    open(old, "wb").write(data.replace(b"shard_format", b"shard_formxt"))
    refused(["merge", good[0], good[1], old, good[3], "-o", out], "shard-version-mismatch",
            "old.4dgs", "older build")
    # A plan edited by hand: a value changed, the file still well formed.
    edited = os.path.join(tmp, "edited.json")
    text = open(plan).read()
    check('"rgb": 0.00392156862745098' in text, "the plan spells its rgb tolerance")
    open(edited, "w").write(text.replace('"rgb": 0.00392156862745098', '"rgb": 0.004', 1))
    refused(["merge", *good, "-o", out, "--grid", edited], "plan-edited", "edited.json")
    refused(["convert", seq, "--grid", edited, "--frames", "0:4", "-o", out], "plan-edited")
    check(not [f for f in os.listdir(tmp) if ".partial" in f], "refusals leave nothing behind")


def test_example_sharded(tool, src, tmp):
    """examples/sharded/: frames from make_frames.py, shards under GNU parallel with 2 workers,
    the merge; the result is what one process writes on the same plan."""
    example = os.path.join(src, "examples", "sharded")
    frames = os.path.join(tmp, "frames")
    subprocess.run([sys.executable, os.path.join(example, "make_frames.py"), frames, "16", "120"],
                   check=True)
    scene = os.path.join(tmp, "scene.4dgs")
    env = dict(os.environ, FOURDGS=tool, FPS=str(FPS), WORK=os.path.join(tmp, "work"),
               PLAN_ARGS="--tracked --segment-frames 4")
    p = subprocess.run(["bash", os.path.join(example, "encode_parallel.sh"), frames, scene, "3", "2"],
                       env=env, capture_output=True, text=True)
    check(p.returncode == 0, "encode_parallel.sh: exit %d\n%s\n%s" % (p.returncode, p.stdout[-2000:],
                                                                     p.stderr[-2000:]))
    parts = sorted(f for f in os.listdir(os.path.join(tmp, "work")) if f.endswith(".4dgs"))
    check(len(parts) == 3, "three shards: %s" % parts)
    single = os.path.join(tmp, "single.4dgs")
    run(tool, "-q", "convert", frames, "--grid", os.path.join(tmp, "work", "grid.json"), "-o", single)
    check(open(scene, "rb").read() == open(single, "rb").read(),
          "the merged scene differs from the single-process one")
    p = run(tool, "validate", scene, expect=None)
    check(p.returncode in (0, 2), "the merged scene does not validate: %s" % p.stdout)


def test_compare_effort(tool, src, tmp):
    """convert --effort max: never larger than the default, its report's measured error within the
    tolerance; `4dgs compare` finds the same error between a frame and the extracted state; a plan
    records its effort and its shards take it."""
    rng = random.Random(7)
    degree = 1
    frames = untracked_frames(rng, 5, degree)
    seq = os.path.join(tmp, "seq")
    write_sequence(seq, frames, degree)
    reports = {}
    for effort in ("default", "max"):
        scene = os.path.join(tmp, effort + ".4dgs")
        reports[effort] = json.loads(run(tool, "-q", "convert", seq, "-o", scene, "--fps", str(FPS),
                                         "--effort", effort, "--error-frames", "5",
                                         "--json").stdout)
    rep = reports["max"]
    check(rep["effort"] == "max", "report names the effort: %s" % rep.get("effort"))
    check(rep["output_bytes"] <= reports["default"]["output_bytes"], "max is not larger")
    check(abs(rep["bytes_per_gaussian"] - rep["output_bytes"] / rep["input_gaussians"]) < 1e-9,
          "bytes per gaussian")
    check(rep["error"]["frames"] == [0, 1, 2, 3, 4], "every frame measured: %s" % rep["error"])
    for key in ("pos", "scale_rel", "rot", "rgb", "alpha"):
        e = rep["error"][key]
        check(0 < e["max"] <= e["tolerance"] + EPS, "%s error %s within %s" % (key, e["max"], e["tolerance"]))
        check(e["rms"] <= e["max"] and e["p99"] <= e["max"], "%s statistics %s" % (key, e))
    # compare: frame 2 against the state extracted at its time, matched by position.
    frame_ply = os.path.join(seq, sorted(os.listdir(seq))[2])
    out = os.path.join(tmp, "frame2.ply")
    run(tool, "-q", "extract", os.path.join(tmp, "max.4dgs"), "--at", repr(2 / FPS), "-o", out)
    cmp = json.loads(run(tool, "compare", frame_ply, out, "--json").stdout)
    check(cmp["match"] == "position" and cmp["matched"] == len(frames[2]), "compare matched %s" % cmp)
    for key in ("pos", "scale_rel", "rot", "rgb", "alpha"):
        check(cmp["attributes"][key]["max"] <= rep["error"][key]["max"] + EPS,
              "compare %s %s beyond the report's" % (key, cmp["attributes"][key]))
    cmp_self = json.loads(run(tool, "compare", frame_ply, frame_ply, "--json").stdout)
    check(cmp_self["match"] == "order" and cmp_self["attributes"]["pos"]["max"] == 0, "self compare")
    run(tool, "compare", frame_ply, out, "--match", "nearest", expect=3)
    # A plan records the effort; convert on the plan takes it and refuses another.
    grid = os.path.join(tmp, "grid.json")
    run(tool, "-q", "plan", seq, "--fps", str(FPS), "--effort", "max", "-o", grid)
    check(json.load(open(grid))["encoding"]["effort"] == "max", "the plan records its effort")
    on_plan = os.path.join(tmp, "on_plan.4dgs")
    rep_plan = json.loads(run(tool, "-q", "convert", seq, "--grid", grid, "-o", on_plan,
                              "--json").stdout)
    check(rep_plan["effort"] == "max", "convert on the plan takes its effort")
    run(tool, "-q", "convert", seq, "--grid", grid, "-o", on_plan, "--effort", "fast", expect=3)
    run(tool, "-q", "convert", seq, "-o", on_plan, "--fps", str(FPS), "--effort", "best", expect=3)


# ---- the web viewers' formats: antimatter15 .splat, splaTV .splatv, glTF out -------------------

def splat_bytes(gaussians):
    """antimatter15/splat convert.py's layout, in the order given (a tracked sequence keeps its
    order): position, linear scale (f32), rgba and w x y z rotation bytes, truncated."""
    out = bytearray()
    byte = lambda v: int(min(max(v, 0), 255))
    for g in gaussians:
        out += struct.pack("<6f", *g["p"], *[math.exp(v) for v in g["log_s"]])
        out += bytes(byte(c * 255) for c in g["rgb"] + [g["alpha"]])
        n = math.sqrt(sum(v * v for v in g["q"]))
        out += bytes(byte(v / n * 128 + 128) for v in g["q"])
    return bytes(out)


def splat_decoded(gaussians):
    """What a reader takes from splat_bytes: the quantized colour, opacity and rotation."""
    out = []
    data = splat_bytes(gaussians)
    for i, g in enumerate(gaussians):
        b = data[32 * i + 24:32 * i + 32]
        h = dict(g)
        h["rgb"] = [b[c] / 255 for c in range(3)]
        h["alpha"] = b[3] / 255
        h["q"] = [(v - 128) / 128 for v in b[4:]]
        h["sh"] = []
        out.append(h)
    return out


def half(v):
    return struct.unpack("<H", struct.pack("<e", v))[0]


def splatv_bytes(gaussians):
    """splaTV hybrid.js's file: magic 0x674b, the JSON's length, the JSON chunk list, then the
    splat chunk's texture of 16 u32 per gaussian (4096 u32 a row, zero padded)."""
    texwidth = 4096
    texheight = (4 * len(gaussians) + texwidth - 1) // texwidth
    tex = bytearray(texwidth * texheight * 16)
    for j, g in enumerate(gaussians):
        h2 = lambda a, b: half(a) | (half(b) << 16)
        words = struct.pack("<3f", *g["p"]) + struct.pack(
            "<4I", h2(g["rot"][0], g["rot"][1]), h2(g["rot"][2], g["rot"][3]),
            h2(g["s"][0], g["s"][1]), h2(g["s"][2], 0))
        words += bytes(int(min(max(c * 255, 0), 255)) for c in g["rgba"])
        m = g["motion"]
        words += struct.pack("<8I", h2(m[0], m[1]), h2(m[2], m[3]), h2(m[4], m[5]), h2(m[6], m[7]),
                             h2(m[8], 0), h2(g["omega"][0], g["omega"][1]),
                             h2(g["omega"][2], g["omega"][3]), h2(g["trbf"][0], g["trbf"][1]))
        tex[64 * j:64 * j + 64] = words
    chunks = json.dumps([{"type": "splat", "size": len(tex), "texwidth": texwidth,
                          "texheight": texheight, "cameras": []}]).encode()
    return struct.pack("<2I", 0x674B, len(chunks)) + chunks + bytes(tex)


def splatv_state(g, tau):
    """The player's state at time tau (its vertex shader), as cli_tests' gaussian dicts."""
    dt = tau - g["trbf"][0]
    m = g["motion"]
    p = [g["p"][k] + m[k] * dt + m[3 + k] * dt ** 2 + m[6 + k] * dt ** 3 for k in range(3)]
    rot = [g["rot"][k] + g["omega"][k] * dt for k in range(4)]
    rgba = [int(min(max(c * 255, 0), 255)) / 255 for c in g["rgba"]]
    return {"p": p, "q": rot, "log_s": [math.log(v) for v in g["s"]], "rgb": rgba[:3],
            "alpha": rgba[3] * math.exp(-(dt / g["trbf"][1]) ** 2), "sh": []}


def halfround(v):
    return struct.unpack("<e", struct.pack("<e", v))[0]


def splatv_gaussians(rng, n):
    out = []
    for p in lattice(rng, n):
        g = {"p": p, "rot": [1.5] + [rng.uniform(-0.5, 0.5) for _ in range(3)],
             "s": [rng.uniform(0.01, 0.03) for _ in range(3)],
             "rgba": [rng.uniform(0.3, 0.9) for _ in range(4)],
             "motion": [rng.uniform(-0.05, 0.05) for _ in range(3)] +
                       [rng.uniform(-0.01, 0.01) for _ in range(6)],
             "omega": [rng.uniform(-0.1, 0.1) for _ in range(4)],
             "trbf": [rng.uniform(0.3, 0.7), rng.uniform(2, 3)]}
        # The file holds halves: the expected state is computed from what it holds.
        for key in ("rot", "s", "motion", "omega", "trbf"):
            g[key] = [halfround(v) for v in g[key]]
        out.append(g)
    return out


def write_splat_frames(seq, frames, name="frame_%d.splat"):
    """Writes each frame of `frames` as a .splat file named `name` % k into the new folder `seq`."""
    os.makedirs(seq)
    for k, frame in enumerate(frames):
        with open(os.path.join(seq, name % k), "wb") as f:
            f.write(splat_bytes(frame))


def test_convert_splat_sequence(tool, src, tmp):
    rng = random.Random(43)
    frames = tracked_frames(rng, 5, 120, 0)
    seq = os.path.join(tmp, "splats")
    write_splat_frames(seq, frames)
    # frames.json gives the clock: no --fps needed.
    with open(os.path.join(seq, "frames.json"), "w") as f:
        json.dump({"timestamps": [k / FPS for k in range(5)]}, f)
    scene = os.path.join(tmp, "s.4dgs")
    rep = json.loads(run(tool, "convert", seq, "-o", scene, "--tracked", "--json").stdout)
    check(rep["frames"] == 5 and rep["input_gaussians"] == 600, "report %s" % rep)
    info = info_json(tool, scene)
    check(abs(info["header"]["duration_sec"] - 5 / FPS) < 1e-6, "duration from frames.json")
    compare_frames(tool, scene, [splat_decoded(f) for f in frames], 0, tmp,
                   dict(tolerances(info), sh=0))
    run(tool, "convert", seq, "-o", scene, "--fps", "30", expect=3)  # disagrees with frames.json
    # splat4d's manifest, as its frame generator writes it, gives the same clock.
    with open(os.path.join(seq, "frames.json"), "w") as f:
        json.dump({"fps": FPS, "count": 5, "num_splats": 120,
                   "frames": [{"file": "frame_%d.splat" % k, "timestamp": round(k / FPS, 6)}
                              for k in range(5)]}, f)
    run(tool, "convert", seq, "-o", scene, "--tracked")
    check(abs(info_json(tool, scene)["header"]["duration_sec"] - 5 / FPS) < 1e-6,
          "duration from splat4d's manifest")


def test_convert_splatv(tool, src, tmp):
    rng = random.Random(44)
    gaussians = splatv_gaussians(rng, 100)
    path = os.path.join(tmp, "model.splatv")
    with open(path, "wb") as f:
        f.write(splatv_bytes(gaussians))
    scene = os.path.join(tmp, "v.4dgs")
    n = 5
    rep = json.loads(run(tool, "convert", path, "-o", scene, "--fps", str(FPS), "--tracked",
                         "--splatv-frames", str(n), "--json").stdout)
    check(rep["frames"] == n and rep["input_gaussians"] == 100 * n, "report %s" % rep)
    frames = [[splatv_state(g, k / (n - 1)) for g in gaussians] for k in range(n)]
    compare_frames(tool, scene, frames, 0, tmp, dict(tolerances(info_json(tool, scene)), sh=0))


def read_glb(path):
    data = open(path, "rb").read()
    magic, version, length = struct.unpack_from("<3I", data, 0)
    check(magic == 0x46546C67 and version == 2 and length == len(data), "GLB header")
    jlen, jtype = struct.unpack_from("<2I", data, 12)
    check(jtype == 0x4E4F534A, "first chunk is JSON")
    doc = json.loads(data[20:20 + jlen])
    blen, btype = struct.unpack_from("<2I", data, 20 + jlen)
    check(btype == 0x004E4942, "second chunk is BIN")
    return doc, data[28 + jlen:28 + jlen + blen]


def glb_column(doc, binary, name):
    prim = doc["meshes"][0]["primitives"][0]
    acc = doc["accessors"][prim["attributes"][name]]
    view = doc["bufferViews"][acc["bufferView"]]
    width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[acc["type"]]
    check(acc["componentType"] == 5126, name + " is float")
    vals = struct.unpack_from("<%df" % (acc["count"] * width), binary,
                              view.get("byteOffset", 0) + acc.get("byteOffset", 0))
    return [vals[i * width:(i + 1) * width] for i in range(acc["count"])]


def test_extract_formats(tool, src, tmp):
    rng = random.Random(45)
    frames = tracked_frames(rng, 3, 80, 1)
    seq = os.path.join(tmp, "seq")
    write_sequence(seq, frames, 1)
    scene = os.path.join(tmp, "e.4dgs")
    run(tool, "-q", "convert", seq, "-o", scene, "--fps", str(FPS), "--tracked")
    t = repr(1.5 / FPS)
    ply, glb, splat = (os.path.join(tmp, "x." + e) for e in ("ply", "glb", "splat"))
    run(tool, "-q", "extract", scene, "--at", t, "-o", ply)
    run(tool, "-q", "extract", scene, "--at", t, "-o", glb, "--format", "glb")
    run(tool, "-q", "extract", scene, "--at", t, "-o", splat, "--format", "splat")
    run(tool, "extract", scene, "--at", t, "-o", splat, "--format", "obj", expect=3)
    want, degree = read_ply(ply)
    check(degree == 1, "PLY export degree")
    # glTF: the extension as its text requires, and every attribute the PLY's, as float32.
    doc, binary = read_glb(glb)
    check(doc["asset"]["version"] == "2.0", "asset version")
    check("KHR_gaussian_splatting" in doc.get("extensionsUsed", []), "extensionsUsed")
    prim = doc["meshes"][0]["primitives"][0]
    check(prim.get("mode") == 0, "mode POINTS")
    ext = prim["extensions"]["KHR_gaussian_splatting"]
    check(ext == {"kernel": "ellipse", "colorSpace": "srgb_rec709_display"}, "extension %s" % ext)
    pos = glb_column(doc, binary, "POSITION")
    scale = glb_column(doc, binary, "KHR_gaussian_splatting:SCALE")
    rot = glb_column(doc, binary, "KHR_gaussian_splatting:ROTATION")
    opacity = glb_column(doc, binary, "KHR_gaussian_splatting:OPACITY")
    dc = glb_column(doc, binary, "KHR_gaussian_splatting:SH_DEGREE_0_COEF_0")
    sh1 = [glb_column(doc, binary, "KHR_gaussian_splatting:SH_DEGREE_1_COEF_%d" % n)
           for n in range(3)]
    check(len(pos) == len(want), "glb count %d, PLY %d" % (len(pos), len(want)))
    f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]
    for i, g in enumerate(want):
        check(list(pos[i]) == [f32(v) for v in g["p"]], "glb position %d" % i)
        check(max(abs(a - math.exp(b)) / math.exp(b) for a, b in zip(scale[i], g["log_s"])) < 1e-6,
              "glb linear scale %d" % i)
        q = [g["q"][1], g["q"][2], g["q"][3], g["q"][0]]  # PLY w x y z; glTF x y z w
        check(max(abs(a - b) for a, b in zip(rot[i], q)) < 1e-6, "glb rotation %d" % i)
        check(abs(opacity[i][0] - g["alpha"]) < 1e-6, "glb opacity %d" % i)
        check(max(abs(0.5 + C0 * a - b) for a, b in zip(dc[i], g["rgb"])) < 1e-6, "glb dc %d" % i)
        for n in range(3):  # PLY f_rest channel-major: red's 3, green's 3, blue's 3
            check(max(abs(sh1[n][i][c] - g["sh"][c * 3 + n]) for c in range(3)) < 1e-6,
                  "glb SH degree 1 coefficient %d of %d" % (n, i))
    # .splat: the PLY's attributes within .splat's own precision (1/255, 1/128), any order.
    data = open(splat, "rb").read()
    check(len(data) == 32 * len(want), ".splat size")
    by_pos = {tuple(f32(v) for v in g["p"]): g for g in want}
    for i in range(len(want)):
        p = struct.unpack_from("<3f", data, 32 * i)
        s = struct.unpack_from("<3f", data, 32 * i + 12)
        c = data[32 * i + 24:32 * i + 28]
        r = data[32 * i + 28:32 * i + 32]
        g = by_pos.get(tuple(p))
        check(g is not None, ".splat position %d is the PLY's" % i)
        check(max(abs(a - math.exp(b)) / math.exp(b) for a, b in zip(s, g["log_s"])) < 1e-6,
              ".splat scale")
        check(max(abs(c[k] / 255 - v) for k, v in enumerate(g["rgb"] + [g["alpha"]])) <= 1 / 255 + 1e-6,
              ".splat colour %d" % i)
        check(max(abs((r[k] - 128) / 128 - g["q"][k]) for k in range(4)) <= 1 / 128 + 1e-6,
              ".splat rotation %d" % i)


def test_splat_refusals(tool, src, tmp):
    rng = random.Random(46)
    seq = os.path.join(tmp, "seq")
    frames = tracked_frames(rng, 2, 20, 0)
    write_splat_frames(seq, frames, "f%d.splat")
    out = os.path.join(tmp, "x.4dgs")

    def refused(args, ident):
        p = run(tool, *args, expect=1)
        check(ident in p.stderr, "wanted %s, got %s" % (ident, p.stderr))
        check(not os.path.exists(out), "nothing left behind")

    with open(os.path.join(seq, "f1.splat"), "ab") as f:
        f.write(b"\0" * 5)
    refused(["convert", seq, "-o", out, "--fps", "8"], "splat-truncated")
    with open(os.path.join(seq, "f1.splat"), "wb") as f:
        f.write(splat_bytes(frames[1][:19]))
    refused(["convert", seq, "-o", out, "--fps", "8", "--tracked"], "frames-not-tracked")
    with open(os.path.join(seq, "frames.json"), "w") as f:
        f.write('{"fps": -1}')
    refused(["convert", seq, "-o", out], "bad-frames-json")
    good = splatv_bytes(splatv_gaussians(rng, 10))
    v = os.path.join(tmp, "m.splatv")
    jlen = struct.unpack_from("<I", good, 4)[0]
    for damaged, ident in ((b"XXXX" + good[4:], "splatv-not-splatv"),
                           (good[:4] + struct.pack("<I", len(good)) + good[8:], "splatv-bad-header"),
                           (good[:-64], "splatv-bad-header"),
                           (good[:8 + jlen + 12] + struct.pack("<I", 0x7C00) + good[8 + jlen + 16:],
                            "splatv-bad-value")):
        with open(v, "wb") as f:
            f.write(damaged)
        refused(["convert", v, "-o", out, "--fps", "8"], ident)


def rotation_bytes_back(tool, scene, frames, out):
    """Each frame of `scene` extracted as .splat (whose writer truncates, as splat_bytes does)
    against `frames`' own bytes, each gaussian paired with the nearest input one: no rotation
    byte more than one off; how many came back exactly, of how many."""
    exact = total = 0
    for k, frame in enumerate(frames):
        run(tool, "-q", "extract", scene, "--at", repr(k / FPS), "-o", out, "--format", "splat")
        got = open(out, "rb").read()
        want = splat_bytes(frame)
        check(len(got) == len(want), "frame %d: %d gaussians back" % (k, len(got) // 32))
        for i in range(len(got) // 32):
            p = struct.unpack_from("<3f", got, 32 * i)
            j = min(range(len(want) // 32), key=lambda j: sum(
                (a - b) ** 2 for a, b in zip(p, struct.unpack_from("<3f", want, 32 * j))))
            g, w = got[32 * i + 28:32 * i + 32], want[32 * j + 28:32 * j + 32]
            if sum((a - 127.5) * (b - 127.5) for a, b in zip(g, w)) < 0:
                g = [255 - b for b in g]  # -q, the same rotation: floor(128 q + 128) of q
            for c in range(4):
                d = abs(g[c] - w[c])
                check(d <= 1, "frame %d gaussian %d: rotation byte %d off by %d" % (k, i, c, d))
                exact += d == 0
                total += 1
    return exact, total


def test_convert_rot_levels(tool, src, tmp):
    """--tolerance rot_levels=0,rot_rounding=floor: frames from a writer that truncates (as
    splat_bytes does) decode back to their own rotation bytes, extracted as .splat again (whose
    writer truncates too); rot_levels=0 alone (the rounding writer's box) refuses them; the keys'
    misuses are usage errors."""
    rng = random.Random(47)
    frames = tracked_frames(rng, 4, 60, 0)
    seq = os.path.join(tmp, "seq")
    write_splat_frames(seq, frames)
    scene = os.path.join(tmp, "s.4dgs")
    base = ["convert", seq, "-o", scene, "--fps", str(FPS), "--tracked", "--model", "keyframe-delta"]
    run(tool, *base, "--tolerance", "pos=0.002,rot_levels=0,rot_rounding=floor")
    out = os.path.join(tmp, "x.splat")
    exact, total = rotation_bytes_back(tool, scene, frames, out)
    # A box the unit sphere only grazes may hold no grid point: placed within 1/8 level past it
    # (docs/cli.md), so a byte may come back one off — about 1 in 3,800 on splat4d's frames.
    check(exact >= 0.99 * total, "%d of %d rotation bytes back exactly" % (exact, total))
    p = run(tool, *base, "--tolerance", "pos=0.002,rot_levels=0", expect=1)
    check("invalid-option" in p.stderr and "floor" in p.stderr, "nearest refused: " + p.stderr)
    run(tool, *base, "--tolerance", "pos=0.002,rot_rounding=floor", expect=3)
    run(tool, *base, "--tolerance", "rot=0.004,rot_levels=0", expect=3)
    run(tool, *base, "--tolerance", "rot_levels=0,rot_rounding=ceil", expect=3)
    # A rigid body turning every frame: its gaussians ride a part, each holding one rotation a
    # window at a time inside every frame's box, and still every rotation byte comes back.
    body = turning_body_frames(random.Random(48), 12, 216)
    seq = os.path.join(tmp, "body")
    write_splat_frames(seq, body)
    p = run(tool, "convert", seq, "-o", scene, "--fps", str(FPS), "--tracked", "--model",
            "keyframe-delta", "--tolerance", "pos=0.002,rot_levels=0,rot_rounding=floor", "--json")
    riding = sum(o["gaussians"] for o in json.loads(p.stdout)["parts"]["objects"])
    check(riding >= 200, "%d of 216 gaussians in parts" % riding)
    exact, total = rotation_bytes_back(tool, scene, body, out)
    check(exact >= 0.99 * total, "body: %d of %d rotation bytes back exactly" % (exact, total))


def main():
    tool, src, name = sys.argv[1], sys.argv[2], sys.argv[3]
    test = globals().get("test_" + name)
    if test is None:
        print("unknown test " + name)
        return 1
    with tempfile.TemporaryDirectory(prefix="4dgs-cli-") as tmp:
        try:
            test(tool, src, tmp)
        except Failure as e:
            print("FAIL %s: %s" % (name, e))
            return 1
    print("ok " + name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
