#!/usr/bin/env python3
"""Bytes at equal errors: a static splat PLY written as SPZ v4 and as SOG by PlayCanvas's
splat-transform, and as .4dgs by `4dgs convert --effort max` at the errors each of those has.

    bench_vs_spz_sog.py BUILD_DIR SPLAT_TRANSFORM WORK_DIR [gaussians=100000] [only=RUNS]

RUNS, when given, is a comma-separated list of input:format runs to make (inputs issue14_sh0,
issue14_sh3, clustered_sh0, exported; formats spz, sog; e.g. issue14_sh3:sog): SOG's SH
clustering without a GPU (-g cpu) takes tens of minutes at SH 3, so it can be run on its own.

SPLAT_TRANSFORM is the splat-transform command (e.g. node_modules/.bin/splat-transform after
`npm install @playcanvas/splat-transform` in a scratch directory). The inputs are static PLYs the
benchmark generates (make_bench_ply: the issue-14 scene at SH 0 and SH 3, the clustered scene) and
one exported from a bench scene (make_bench_scene, then `4dgs extract` at t = 5).

For each input and each format: the format's file, read back to PLY by splat-transform and
measured with `4dgs compare` (the input is A); then `4dgs convert` with a tolerance of those
errors, its file extracted and measured the same way. "At the format's errors" means: for every
attribute our maximum error is at most the format's maximum, except where the format's maximum is
an outlier — more than twice its 99th percentile (SPZ clips SH coefficients outside its range,
SOG's colour palette misses a few colours) — where ours is held to the format's 99th percentile.
SH bit depths are chosen per band the same way, from the coarsest that the §6.5 byte map allows
(a band at depth d is off by at most (2^(8-d)/2 + 1/2) code units of 8/255).
"""
import json
import os
import subprocess
import sys

KEYS = ("pos", "scale_rel", "rot", "rgb", "alpha")


def run(*args, capture=True):
    p = subprocess.run([str(a) for a in args], capture_output=capture, text=True)
    if p.returncode != 0:
        raise SystemExit("failed: %s\n%s%s" % (" ".join(map(str, args)), p.stdout[-2000:], p.stderr[-2000:]))
    return p.stdout


def compare(tool, a, b):
    return json.loads(run(tool, "compare", a, b, "--json"))["attributes"]


# The smallest tolerance asked of convert: a format can hold an attribute exactly (SOG's 256-entry
# scale codebook holds every scale of a PLY exported from a .4dgs, which are on our grid), and
# convert takes only tolerances > 0.
EXACT = 1e-5


def target(errors, key):
    e = errors[key]
    return max(EXACT, e["p99"] if e["max"] > 2 * e["p99"] else e["max"])


def sh_depths(errors, degree):
    depths = []
    for band in range(1, degree + 1):
        t = target(errors, "sh_band%d" % band)
        d = 8
        while d > 3 and ((2 ** (8 - (d - 1))) / 2 + 0.5) * 8 / 255 <= t:
            d -= 1
        depths.append(d)
    return depths


def main():
    build, splat, work = sys.argv[1], sys.argv[2], sys.argv[3]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 100000
    only = set(sys.argv[5].split(",")) if len(sys.argv) > 5 else None
    tool = os.path.join(build, "src", "cli", "4dgs")
    os.makedirs(work, exist_ok=True)
    inputs = []
    for scene, degree in (("issue14", 0), ("issue14", 3), ("clustered", 0)):
        path = os.path.join(work, "%s_sh%d.ply" % (scene, degree))
        run(os.path.join(build, "tests", "make_bench_ply"), path, n, scene, degree)
        inputs.append(("%s scene, SH %d" % (scene, degree), path, degree))
    scene_file = os.path.join(work, "bench.4dgs")
    run(os.path.join(build, "tests", "make_bench_scene"), scene_file, 10 * n)
    exported = os.path.join(work, "exported.ply")
    run(tool, "-q", "extract", scene_file, "--at", "5.05", "-o", exported)
    inputs.append(("exported from the bench scene at t = 5", exported, 0))

    rows = []
    for name, ply, degree in inputs:
        for fmt in ("spz", "sog"):
            base = os.path.splitext(ply)[0]
            if only is not None and "%s:%s" % (os.path.basename(base), fmt) not in only:
                continue
            theirs = base + "." + fmt
            args = [splat, "-w", "-q"] + (["-g", "cpu"] if fmt == "sog" else []) + [ply, theirs]
            run(*args)
            back = base + "_" + fmt + ".ply"
            run(splat, "-w", "-q", theirs, back)
            errors = compare(tool, ply, back)
            tolerance = ",".join("%s=%.17g" % (k, target(errors, k)) for k in KEYS)
            frames = os.path.join(work, "frames_" + os.path.basename(base))
            os.makedirs(frames, exist_ok=True)
            link = os.path.join(frames, "frame0.ply")
            if not os.path.exists(link):
                os.symlink(os.path.abspath(ply), link)
            ours = base + "_at_" + fmt + ".4dgs"
            cmd = [tool, "-q", "convert", frames, "-o", ours, "--fps", "1", "--effort", "max",
                   "--tolerance", tolerance, "--error-frames", "0"]
            if degree:
                cmd += ["--sh-bits", ",".join(map(str, sh_depths(errors, degree)))]
            run(*cmd)
            ours_ply = base + "_at_" + fmt + ".ply"
            run(tool, "-q", "extract", ours, "--at", "0.5", "-o", ours_ply)
            our_errors = compare(tool, ply, ours_ply)
            within = all(our_errors[k]["max"] <= target(errors, k) * (1 + 1e-6) for k in KEYS)
            for band in range(1, degree + 1):
                k = "sh_band%d" % band
                within = within and our_errors[k]["max"] <= target(errors, k) * (1 + 1e-6)
            rows.append((name, fmt, os.path.getsize(theirs), os.path.getsize(ours), within,
                         errors, our_errors, degree))

    print("| input | format | its bytes | .4dgs at its errors | ratio | errors held (max: %s) |"
          % ", ".join(KEYS))
    print("|---|---|---|---|---|---|")
    for name, fmt, theirs, ours, within, errors, our_errors, degree in rows:
        keys = list(KEYS) + ["sh_band%d" % b for b in range(1, degree + 1)]
        held = "; ".join("%s %.3g / %.3g" % (k, our_errors[k]["max"], target(errors, k)) for k in keys)
        print("| %s | %s | %d | %d | **%.3f** | %s%s |" % (name, fmt.upper(), theirs, ours,
                                                      ours / theirs, held,
                                                      "" if within else " (NOT within)"))


if __name__ == "__main__":
    main()
