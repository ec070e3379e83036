#!/usr/bin/env python3
"""Tracked captures: bytes, errors, encode speed and peak memory of `4dgs convert --tracked`
against splat4d (github adamraudonis/splats4D) on the same .splat frames, at each of splat4d's
four presets (issue 39, item 3; figures in docs/performance.md).

    bench_vs_splat4d.py BUILD_DIR SPLAT4D_BIN SPLAT4D_SRC WORK_DIR [options]

SPLAT4D_BIN is splat4d built by tests/bench/splat4d/build.sh; SPLAT4D_SRC its checkout (for its
frame generator, tools/gen_splat_frames.py; needs numpy: python3-numpy). Options:
  --frames N (40)  --gaussians N (300000)  --generators splat4d,ours  --presets
  fine,default,relaxed,coarse  --models keyframe-delta,gaussian-birth  --threads N (2)
  --check N (6: frames decoded back and measured, the first, the last and around GOP starts)
  --table (only print the table of the results already in WORK_DIR/results.jsonl)

The sequences: `splat4d` — a synthetic Dynamic 3D Gaussians params.npz
(tests/bench/splat4d/make_d3dg_params.py: 70 % static background, six bodies moving rigidly, each
foreground gaussian drifting ~1 cm on its own, colours wobbling a level) made into .splat frames
by splat4d's own generator; `ours` — make_tracked_frames's scene (a static floor 40 %, two rigid
bodies turning while they translate, a sheet 10 % whose gaussians each ripple with their own
phase) written as .splat.

Each preset's bounds (pos mm / colour and opacity levels / rotation steps of 1/128 / scale %)
are splat4d's; `4dgs convert --tracked` gets the same as a tolerance (pos in scene units, rgb and
alpha levels / 255, scale_rel log(1 + %), rot steps / 128) — except where splat4d keeps the
rotation exact (steps 0): ours then gets rot_levels=0 with keyframe-delta (every decoded rotation
within half a level of the input's byte, up to 1/8 level more where the box is too shallow for
the grid: convert.hpp), and 1/256 against the normalized input with gaussian-birth. Each
generator's rounding goes with it: splat4d's rounds its bytes (rot_rounding=nearest), ours
truncates them like numpy's astype(uint8) (rot_rounding=floor; its rot_levels column is then
measured from the middle of the byte, b + 1/2). Both
files are decoded back at the checked frames and the largest error per attribute is reported
beside the bytes (bench_tracked_error: splat4d's frames put back in input order by its
--perm-out, ours paired by every attribute at once; the count of gaussians it could not pair is
reported, 0 for a file within its bounds). Encode rate: MB of input .splat frames per CPU second
(user + sys: per core, robust to the shared machine's load; verification included for both —
splat4d verifies every frame unless told not to, ours decodes back --error-frames frames), and
per wall second; peak RSS from tests/bench/rss_wrap.py. One JSON line per encode is appended to
WORK_DIR/results.jsonl, so a long run can be read as it goes.
"""
import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import time

PRESETS = {  # splat4d's (docs/BENCHMARKS.md): pos mm, colour levels, rot steps, scale %
    "fine": (2, 2, 0, 1),
    "default": (2, 4, 0, 2),
    "relaxed": (5, 4, 1, 2),
    "coarse": (10, 8, 2, 5),
}
HERE = os.path.dirname(os.path.abspath(__file__))


def run(*args, **kw):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SystemExit("failed: %s\n%s%s" % (" ".join(map(str, args)), p.stdout[-2000:],
                                               p.stderr[-2000:]))
    return p.stdout


def measured(real, args, rss_log):
    """Runs `real args` under rss_wrap.py: (wall s, CPU s, peak RSS KiB, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    out = run(sys.executable, os.path.join(HERE, "rss_wrap.py"), *args,
              env=dict(os.environ, REAL_FOURDGS=real, RSS_LOG=rss_log))
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(rss_log) as log:
        rss = json.loads(log.readlines()[-1])["rss_kib"]
    return wall, cpu, rss, out


def generate(kind, args, work):
    frames = os.path.join(work, "frames_%s_%dx%d" % (kind, args.frames, args.gaussians))
    if os.path.isdir(frames):
        return frames
    tmp = frames + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    if kind == "splat4d":
        npz = os.path.join(work, "d3dg_%dx%d.npz" % (args.frames, args.gaussians))
        run(sys.executable, os.path.join(HERE, "splat4d", "make_d3dg_params.py"), npz,
            args.frames, args.gaussians)
        run(sys.executable, os.path.join(args.splat4d_src, "tools", "gen_splat_frames.py"), npz,
            tmp)
        os.remove(npz)
        # splat4d's frames.json carries keys 4dgs convert refuses (count, num_splats): both
        # encoders take the frames at the generator's 20 fps instead.
        os.remove(os.path.join(tmp, "frames.json"))
    else:
        run(os.path.join(args.build, "tests", "make_tracked_frames"), tmp, args.frames,
            args.gaussians, 0.1, 20, "splat")
    os.rename(tmp, frames)
    return frames


def checked_frames(n, gop, count):
    picks = {0, 1, n // 2, n - 1}
    for start in range(gop, n, gop):
        picks |= {start - 1, start}
    picks = sorted(p for p in picks if 0 <= p < n)
    while len(picks) > count:  # keep the ends, thin the middle
        picks.pop(len(picks) // 2)
    return picks


def error_of(args, frames, check, mode, *paths):
    out = run(os.path.join(args.build, "tests", "bench_tracked_error"), frames,
              ",".join(map(str, check)), 20, mode, *paths)
    return json.loads(out)


def encode_splat4d(args, frames, preset, work, check):
    pos, col, rot, scale = PRESETS[preset]
    base = os.path.join(work, "%s.%s" % (os.path.basename(frames), preset))
    out, perm = base + ".splat4d", base + ".perm"
    wall, cpu, rss, _ = measured(args.splat4d, [
        "encode", "-i", frames, "-o", out, "--fps", 20, "--perm-out", perm, "--pos-mm", pos,
        "--color-levels", col, "--rot-steps", rot, "--scale-pct", scale], base + ".rss")
    decoded = base + ".decoded"
    os.makedirs(decoded, exist_ok=True)
    for k in check:
        run(args.splat4d, "decode", out, "--frame", k, "-o",
            os.path.join(decoded, "frame_%04d.splat" % k))
    err = error_of(args, frames, check, "--splat4d", decoded, perm)
    shutil.rmtree(decoded)
    return out, wall, cpu, rss, err


def tolerance(preset):
    """splat4d's preset as 4dgs bounds: pos, rgb, alpha, rot, scale_rel."""
    pos, col, rot, scale = PRESETS[preset]
    return (pos / 1000, col / 255, col / 255, rot / 128 if rot else 1 / 256,
            math.log1p(scale / 100))


# rot_levels' declared bound in levels: half a level, and the 1/8 a shallow box may take.
ROT_LEVELS_BOUND = 0.5 + 1 / 8
# How each generator's .splat writer makes a rotation byte from 128 q + 128: splat4d's
# gen_splat_frames.py rounds; make_tracked_frames (splat_formats.cpp) truncates.
ROUNDING = {"splat4d": "nearest", "ours": "floor"}


def encode_ours(args, frames, kind, preset, model, work, check):
    base = os.path.join(work, "%s.%s.%s" % (os.path.basename(frames), preset, model))
    out = base + ".4dgs"
    pos, rgb, alpha, rot, scale_rel = tolerance(preset)
    in_levels = PRESETS[preset][2] == 0 and model == "keyframe-delta"
    rotation = ("rot_levels=0,rot_rounding=%s" % ROUNDING[kind] if in_levels else
                "rot=%.17g" % rot)
    wall, cpu, rss, report = measured(os.path.join(args.build, "src", "cli", "4dgs"), [
        "-q", "convert", frames, "--tracked", "--model", model, "--fps", 20, "--threads",
        args.threads, "--tolerance",
        "pos=%.17g,rgb=%.17g,alpha=%.17g,%s,scale_rel=%.17g" % (pos, rgb, alpha, rotation,
                                                               scale_rel), "-o", out,
        "--json"], base + ".rss")
    bounds = ",".join("%.17g" % b for b in tolerance(preset))
    if in_levels:
        bounds += ",%.17g,%s" % (ROT_LEVELS_BOUND, ROUNDING[kind])
    err = error_of(args, frames, check, "--4dgs", out, bounds)
    if in_levels:
        err["rot_levels_asked"] = 0
        err["rot_rounding"] = ROUNDING[kind]
    return out, wall, cpu, rss, err


def record(work, row):
    with open(os.path.join(work, "results.jsonl"), "a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)


def fmt_err(e):
    return "%.3f mm / %.3g / %.3g / %.3g / %.2f %% / %s%s" % (
        e["pos"] * 1000, e["rgb_levels"], e["alpha_levels"], e["rot_steps"], e["scale_rel"] * 100,
        ("%.3g" % e["rot_levels"] if "rot_levels" in e else "-") +
        (" (rot_levels=%d%s)" % (e["rot_levels_asked"], ", floor" if e.get("rot_rounding") ==
                                  "floor" else "") if "rot_levels_asked" in e else ""),
        " (%d unpaired)" % e["unmatched"] if e["unmatched"] else "")


def table(work):
    rows = [json.loads(l) for l in open(os.path.join(work, "results.jsonl"))]
    print("Errors: the largest over the checked frames, pos mm / colour levels / opacity levels / "
          "rotation steps of 1/128 / scale % / rotation in the input's levels (max |128 q + 128 - "
          "byte|, 1/2 rounds back to the byte; floor: from byte + 1/2, 1/2 truncates back). Rate: MB of input frames per CPU second (per wall "
          "second). RSS: peak.\n")
    print("| frames | preset | encoder | bytes | x raw .splat | x splat4d | max errors | "
          "MB/CPU-s (MB/s) | peak RSS |")
    print("|---|---|---|---:|---:|---:|---|---|---:|")
    theirs = {(r["frames"], r["preset"]): r["bytes"] for r in rows if r["encoder"] == "splat4d"}
    for r in rows:
        ref = theirs.get((r["frames"], r["preset"]))
        mb = r["raw_bytes"] / 1e6
        print("| %s | %s | %s | %d | %.1f | %s | %s | %.1f (%.1f) | %.0f MB |" % (
            r["frames"], r["preset"], r["encoder"], r["bytes"], r["raw_bytes"] / r["bytes"],
            "%.2f" % (r["bytes"] / ref) if ref else "-", fmt_err(r["error"]), mb / r["cpu_s"],
            mb / r["wall_s"], r["rss_kib"] / 1024))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("splat4d")
    ap.add_argument("splat4d_src")
    ap.add_argument("work")
    ap.add_argument("--frames", type=int, default=40)
    ap.add_argument("--gaussians", type=int, default=300000)
    ap.add_argument("--generators", default="splat4d,ours")
    ap.add_argument("--presets", default="default,fine,relaxed,coarse")
    ap.add_argument("--models", default="keyframe-delta,gaussian-birth")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--check", type=int, default=6)
    ap.add_argument("--table", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    if args.table:
        return table(args.work)
    print("load before:", open("/proc/loadavg").read().strip(), flush=True)
    for kind in args.generators.split(","):
        frames = generate(kind, args, args.work)
        raw = sum(os.path.getsize(os.path.join(frames, f)) for f in os.listdir(frames))
        check = checked_frames(args.frames, 30, args.check)  # splat4d's GOP: 30 frames
        for preset in args.presets.split(","):
            common = {"frames": os.path.basename(frames), "preset": preset, "raw_bytes": raw,
                      "checked": check}
            out, wall, cpu, rss, err = encode_splat4d(args, frames, preset, args.work, check)
            record(args.work, dict(common, encoder="splat4d", bytes=os.path.getsize(out),
                                   wall_s=wall, cpu_s=cpu, rss_kib=rss, error=err))
            for model in [m for m in args.models.split(",") if m]:
                out, wall, cpu, rss, err = encode_ours(args, frames, kind, preset, model,
                                                       args.work, check)
                record(args.work, dict(common, encoder="4dgs " + model,
                                       bytes=os.path.getsize(out), wall_s=wall, cpu_s=cpu,
                                       rss_kib=rss, error=err))
    print("load after:", open("/proc/loadavg").read().strip(), flush=True)
    table(args.work)


if __name__ == "__main__":
    main()
