#!/usr/bin/env python3
"""End-to-end tests of fourdgs-viewer under Xvfb with Mesa's software OpenGL (llvmpipe).

    viewer_tests.py VIEWER TOOL TEST_NAME [ARGS...]     (TOOL: the 4dgs tool)

Each test starts its own X server (`Xvfb -displayfd`: the server takes a free display number
and says which), runs the viewer on it with LIBGL_ALWAYS_SOFTWARE=1, and stops the server by
its process id. Exit 0 on success, 1 on a failure (what differed is printed), 77 (ctest's SKIP)
when Xvfb is not installed (.ci/install-deps installs it).

The image metric (screenshot_matches_preview), on 8-bit RGB images A (the viewer's) and B
(`4dgs preview`'s) of the same size:
  ink      the pixels where A or B is more than 2 levels from the background in any channel;
  mae      the mean absolute difference per channel over the ink pixels, in 8-bit levels;
  over     the fraction of ink pixels where some channel differs by more than 3 levels.
Tolerance: mae <= 0.25 and over <= 0.1 %. Why these numbers: the viewer evaluates
render_preview's formulas in f32 on the GPU where the preview uses f64, so a channel can round
to the neighbouring level (1 level); a pixel centre on an ellipse's 3σ edge can be in one and
out of the other, where the gaussian's weight is at most e^-4.5 ≈ 1.1 % of its opacity
(3 levels). Anything more is a different picture: a depth order that differs (only possible for
depths within an f32 rounding of each other), or a bug. A picture upside down, or with one
gaussian missing or misplaced, is far over (checked: the flipped screenshot must fail).
"""
import json
import math
import os
import random
import select
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
# The CLI tests' PLY writer/reader, PNG reader and checks; the HTTP harness's process helpers.
sys.path.insert(0, os.path.join(SOURCE, "tests", "cli"))
sys.path.insert(0, os.path.join(SOURCE, "tests", "http"))
import cli_tests as cli  # noqa: E402
from cli_tests import Failure, check  # noqa: E402
from harness import SKIP, die_with_parent, stop_process  # noqa: E402


class Xvfb:
    """An X server on a display number it picks itself, stopped by process id."""

    def __init__(self):
        self.proc = None
        self.display = None

    def __enter__(self):
        read_end, write_end = os.pipe()
        self.proc = subprocess.Popen(
            ["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1024x768x24",
             "-nolisten", "tcp"],
            pass_fds=[write_end], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=die_with_parent)
        os.close(write_end)
        text = b""
        while not text.endswith(b"\n"):
            ready, _, _ = select.select([read_end], [], [], 20)
            chunk = os.read(read_end, 64) if ready else b""
            if not chunk:
                break
            text += chunk
        os.close(read_end)
        if not text.strip().isdigit():
            self.__exit__(None, None, None)
            raise Failure("Xvfb did not start (it gave %r)" % text)
        self.display = ":" + text.strip().decode()
        return self

    def __exit__(self, *exc):
        stop_process(self.proc)

    def env(self):
        return dict(os.environ, DISPLAY=self.display, LIBGL_ALWAYS_SOFTWARE="1")


def run(args, env=None, expect=0):
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    if expect is not None and p.returncode != expect:
        raise Failure("%s: exit %d (wanted %d)\n%s%s" % (" ".join(args), p.returncode, expect,
                                                          p.stdout[-3000:], p.stderr[-3000:]))
    return p


# ---- the image metric ----------------------------------------------------------------------

MAE_LIMIT = 0.25      # 8-bit levels, per channel, over the ink pixels
OVER_LEVELS = 3       # a pixel is "over" when a channel differs by more than this
OVER_LIMIT = 0.001    # fraction of the ink pixels


def image_difference(a, b, background=(0, 0, 0)):
    (wa, ha, pa), (wb, hb, pb) = a, b
    check((wa, ha) == (wb, hb), "image sizes %dx%d and %dx%d" % (wa, ha, wb, hb))
    ink = over = total = worst = 0
    for y in range(ha):
        for x in range(wa):
            u, v = pa(x, y), pb(x, y)
            if max(abs(c - g) for c, g in zip(u, background)) <= 2 and \
               max(abs(c - g) for c, g in zip(v, background)) <= 2:
                continue
            ink += 1
            d = [abs(p - q) for p, q in zip(u, v)]
            total += sum(d)
            worst = max(worst, max(d))
            over += max(d) > OVER_LEVELS
    return {"ink": ink, "mae": total / (3 * ink) if ink else 0.0,
            "over": over / ink if ink else 0.0, "max": worst}


def within_tolerance(m):
    return m["mae"] <= MAE_LIMIT and m["over"] <= OVER_LIMIT


def flipped(image):
    w, h, px = image
    return w, h, lambda x, y: px(x, h - 1 - y)


# ---- scenes ----------------------------------------------------------------------------------

def dense_scene(tool, tmp, degree):
    """400 large, overlapping, rotated, translucent gaussians in a 2-unit box: a picture in
    which depth order, ellipse shape and blending all show."""
    rng = random.Random(25)
    gaussians = []
    for _ in range(400):
        g = cli.random_gaussian(rng, [rng.uniform(-1, 1) for _ in range(3)], degree)
        g["log_s"] = [math.log(rng.uniform(0.02, 0.25)) for _ in range(3)]
        gaussians.append(g)
    ply = os.path.join(tmp, "dense.ply")
    cli.write_ply(ply, gaussians, degree)
    scene = os.path.join(tmp, "dense.4dgs")
    run([tool, "-q", "convert", ply, "-o", scene, "--fps", "1", "--sh-bits", "flat"])
    return scene


# ---- tests -----------------------------------------------------------------------------------

def test_screenshot_matches_preview(viewer, tool, src, tmp, x):
    """The viewer's screenshot of a view equals `4dgs preview` of it within the tolerance."""
    data = os.path.join(src, "examples", "data")
    cases = [
        # The bundled example at t = 2.5 through its own camera path (issue 25's acceptance).
        ("example", os.path.join(data, "example.4dgs"), "2.5", []),
        # Dense overlap, framed by the scene's box; SH off, as the preview draws DC colour only.
        ("dense", dense_scene(tool, tmp, 1), "0.5", ["--sh-degree", "0"]),
        # No file named: the viewer plays the bundled showcase scene (SH off, as above).
        ("showcase", None, "2.5", ["--sh-degree", "0"]),
    ]
    for name, scene, at, extra in cases:
        shot = os.path.join(tmp, name + ".viewer.png")
        ref = os.path.join(tmp, name + ".preview.png")
        run([viewer] + ([scene] if scene else []) + ["--at", at, "--screenshot", shot] + extra,
            env=x.env())
        scene = scene or os.path.join(data, name + ".4dgs")
        run([tool, "-q", "preview", scene, "--at", at, "-o", ref])
        a, b = cli.read_png(shot), cli.read_png(ref)
        m = image_difference(a, b)
        print("%s at t = %s: %d ink pixels, mae %.2g levels, %.2g %% over %d levels, max %d"
              % (name, at, m["ink"], m["mae"], 100 * m["over"], OVER_LEVELS, m["max"]))
        check(m["ink"] >= 200, "%s: only %d pixels show anything" % (name, m["ink"]))
        check(within_tolerance(m), "%s: the viewer differs from 4dgs preview: %s" % (name, m))
        # The metric sees a picture upside down (so it would see one misdrawn).
        mf = image_difference(flipped(a), b)
        check(not within_tolerance(mf), "%s: a flipped picture passes the metric: %s" % (name, mf))
        if os.environ.get("FOURDGS_VIEWER_KEEP"):  # for a person to look at
            for f in (shot, ref):
                os.replace(f, os.path.join(os.environ["FOURDGS_VIEWER_KEEP"], os.path.basename(f)))


SH_C1 = 0.4886025119029199
SH_C2 = [1.0925484305920792, -1.0925484305920792, 0.31539156525252005, -1.0925484305920792,
         0.5462742152960396]
SH_C3 = [-0.5900435899266435, 2.890611442640554, -0.4570457994644658, 0.3731763325901154,
         -0.4570457994644658, 1.445305721320277, -0.5900435899266435]


def sh_basis(x, y, z):
    """3D gaussian splatting's real SH basis for bands 1..3 (its computeColorFromSH)."""
    xx, yy, zz = x * x, y * y, z * z
    return [-SH_C1 * y, SH_C1 * z, -SH_C1 * x,
            SH_C2[0] * x * y, SH_C2[1] * y * z, SH_C2[2] * (2 * zz - xx - yy), SH_C2[3] * x * z,
            SH_C2[4] * (xx - yy),
            SH_C3[0] * y * (3 * xx - yy), SH_C3[1] * x * y * z, SH_C3[2] * y * (4 * zz - xx - yy),
            SH_C3[3] * z * (2 * zz - 3 * xx - 3 * yy), SH_C3[4] * x * (4 * zz - xx - yy),
            SH_C3[5] * z * (xx - yy), SH_C3[6] * x * (xx - 3 * yy)]


def test_sh_view_dependent(viewer, tool, src, tmp, x):
    """A degree-3 gaussian seen from several directions has 3DGS's view-dependent colour."""
    rng = random.Random(3)
    g = {"p": [0, 0, 0], "log_s": [math.log(3.0)] * 3, "q": [1, 0, 0, 0], "rgb": [0.5] * 3,
         "alpha": 0.99, "sh": [rng.uniform(-0.35, 0.35) for _ in range(45)]}
    ply = os.path.join(tmp, "sh.ply")
    cli.write_ply(ply, [g], 3)
    scene = os.path.join(tmp, "sh.4dgs")
    run([tool, "-q", "convert", ply, "-o", scene, "--fps", "1", "--sh-bits", "flat"])
    # What the file decodes to (SH bytes through §6.5's map), as the reader hands it over.
    out = os.path.join(tmp, "sh.out.ply")
    run([tool, "-q", "extract", scene, "--at", "0.5", "-o", out, "--sh-degree", "3"])
    (d,), degree = cli.read_ply(out)
    check(degree == 3, "extracted SH degree %d" % degree)
    colours = []
    for eye in ([0, 0, 2.5], [2.2, 0.4, 0.9], [-0.6, 2.1, -1.1], [1.3, -1.6, -1.4]):
        n = math.sqrt(sum(v * v for v in eye))
        view_dir = [-v / n for v in eye]  # from the eye to the gaussian
        basis = sh_basis(*view_dir)
        for sh_degree in (3, 0):
            expected = []
            for c in range(3):
                v = d["rgb"][c]
                if sh_degree:
                    v += sum(b * d["sh"][c * 15 + k] for k, b in enumerate(basis))
                expected.append(round(255 * d["alpha"] * min(max(v, 0), 1)))
            shot = os.path.join(tmp, "sh.png")
            run([viewer, scene, "--at", "0.5", "--screenshot", shot, "--width", "64", "--height",
                 "48", "--eye", ",".join(map(str, eye)), "--target", "0,0,0", "--sh-degree",
                 str(sh_degree)], env=x.env())
            w, h, px = cli.read_png(shot)
            got = px(w // 2, h // 2)
            print("eye %s, SH degree %d: centre pixel %s, expected %s" % (eye, sh_degree, got,
                                                                          expected))
            # The centre pixel is 0.5 px from the gaussian's centre, where its weight is
            # 1 - 1e-4: within 1 level of alpha · colour, plus 1 for f32 rounding.
            check(all(abs(a - b) <= 2 for a, b in zip(got, expected)),
                  "eye %s, SH degree %d: %s, expected %s" % (eye, sh_degree, got, expected))
            if sh_degree:
                colours.append(expected)
    spread = max(max(abs(a[c] - b[c]) for c in range(3)) for a in colours for b in colours)
    check(spread >= 20, "the views' colours differ by only %d levels: SH not exercised" % spread)


def test_refusal_names_the_rule(viewer, tool, src, tmp, x):
    """Bad input stops the viewer with exit 1 and the reader's refusal identifier: a file cut
    short (refused when opened), and a damaged chunk (refused at the frame that needs it: chunk
    0 of 10, [0, 0.4), reached by playing backwards from 0.5 s)."""
    corpus = os.path.join(src, "conformance", "corpus", "refusals")
    shot = os.path.join(tmp, "r.png")
    cases = [("truncated", ["--at", "0.5", "--screenshot", shot]),
             ("truncated", ["--play-frames", "3"]),
             ("corrupt-compressed-data", ["--at", "0.1", "--screenshot", shot]),
             ("corrupt-compressed-data", ["--at", "0.5", "--rate", "-1", "--play-frames", "30"])]
    for name, mode in cases:
        path = os.path.join(corpus, name + ".4dgs")
        expected = json.load(open(os.path.join(corpus, name + ".expected.json")))["refused"]
        p = run([viewer, path] + mode, env=x.env(), expect=1)
        check("refused: " + expected in p.stderr, "%s %s: %r not in %r"
              % (name, " ".join(mode), expected, p.stderr))
        check(not os.path.exists(shot), "a refused screenshot was written")


def test_play_frames_http(viewer, tool, src, tmp, x, url):
    """120 display frames at 60 Hz of a scene on nginx: no late frame, the clock steps 1/60 s."""
    report = os.path.join(tmp, "stats.json")
    run([viewer, url, "--play-frames", "120", "--report", report], env=x.env())
    stats = json.load(open(report))
    frames = stats["per_frame"]
    print("late %d, past their tick %d; per-frame ms: frame call p99 %.3f, total p50 %.3f p99 "
          "%.3f max %.3f" % (stats["late_frames"], stats["missed_deadlines"],
                             stats["timings_ms"]["frame_call"]["p99"],
                             stats["timings_ms"]["total"]["p50"],
                             stats["timings_ms"]["total"]["p99"],
                             stats["timings_ms"]["total"]["max"]))
    check(stats["frames"] == 120 and len(frames) == 120, "frames %d" % stats["frames"])
    late = [f for f in frames if f["late"]]
    check(stats["late_frames"] == 0 and not late,
          "%d late frames, first %s" % (stats["late_frames"], late[:3]))
    for k, f in enumerate(frames):
        check(abs(f["t"] - k / 60.0) < 1e-9, "frame %d at t = %r, wanted %r" % (k, f["t"], k / 60))
        check(f["gaussians"] > 0, "frame %d has no gaussians" % k)


def main():
    viewer, tool, name = sys.argv[1:4]
    test = globals().get("test_" + name)
    if test is None:
        print("unknown test " + name)
        return 1
    if not any(os.access(os.path.join(d, "Xvfb"), os.X_OK)
               for d in os.environ.get("PATH", "").split(os.pathsep)):
        print("SKIP: Xvfb is not installed (Debian: apt-get install xvfb libgl1-mesa-dri)")
        return SKIP
    try:
        with tempfile.TemporaryDirectory(prefix="4dgs-viewer-") as tmp, Xvfb() as x:
            test(viewer, tool, SOURCE, tmp, x, *sys.argv[4:])
    except Failure as e:
        print("FAIL %s: %s" % (name, e))
        return 1
    print("ok " + name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
