#!/usr/bin/env python3
"""The long-capture benchmark (issue 29; not a CI test): a tracked sequence of FRAMES frames of
GAUSSIANS gaussians written to disk by make_tracked_frames (600 x 200,000: about 8 GB of PLY),
encoded by examples/sharded/submit_slurm.sh in SHARDS shards on a local one-node Slurm cluster
(tests/slurm/slurm_cluster.py) and in one process, on the same plan. It reports:

  * wall time: the plan, the shard phase (first shard start to last shard end), the merge, the
    whole sharded run, and the single-process encode (--threads = the cores), with their ratios;
  * the peak resident set of every shard and of the merge (rss_wrap.py around every 4dgs the
    example runs), for the first SHORT frames and for all of them: a shard's peak does not grow
    with the frames; and the merge's heap at most (in process, bench_long_capture merge) against
    twice its largest chunk plus the summary;
  * output size: merged = single-process byte for byte; the plan's shards against single-process
    convert --tracked (no plan) on the SHORT frames (all of them do not fit in memory at once),
    and on a FRAMES-frame sequence of GAUSSIANS_SMALL gaussians;
  * a seek over HTTP into the merged file (nginx through tests/http/harness.py).

    long_capture.py [--build build] [--scratch DIR] [--frames 600] [--gaussians 200000]
                    [--short 60] [--small 20000] [--shards 8] [--segment 5] [--keep]

The frames go under --scratch (checked for room first) and are deleted at the end unless --keep.
Results: a markdown table on stdout and SCRATCH/long_capture.json. The machine load (uptime) is
printed before and after: the wall-time ratios are only as good as the machine is quiet.
"""

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "slurm"))
import slurm_cluster  # noqa: E402

FPS = 30
PLY_BYTES_PER_GAUSSIAN = 68  # SH degree 0 with normals: 17 float32


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def run(argv, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SystemExit("%s: exit %d\n%s\n%s" % (" ".join(argv), p.returncode, p.stdout[-3000:],
                                                  p.stderr[-3000:]))
    return p


def timed(argv, **kw):
    t0 = time.time()
    p = run(argv, **kw)
    return p, time.time() - t0


def generate(build, directory, frames, gaussians):
    if os.path.isdir(directory) and len(os.listdir(directory)) == frames:
        log("frames already in %s" % directory)
        return None
    shutil.rmtree(directory, ignore_errors=True)
    log("writing %d frames x %d gaussians to %s" % (frames, gaussians, directory))
    _, took = timed([os.path.join(build, "tests", "make_tracked_frames"), directory, str(frames),
                     str(gaussians), "0.1", str(FPS)])
    return took


def first_frames(source, directory, count):
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    for name in sorted(os.listdir(source))[:count]:
        os.symlink(os.path.join(source, name), os.path.join(directory, name))


def read_log(path):
    return [json.loads(line) for line in open(path)] if os.path.exists(path) else []


def sharded(cluster, tool, frames, name, scratch, a):
    """The example on the cluster; what rss_wrap.py recorded, and the whole run's wall time."""
    work = os.path.join(scratch, name + ".work")
    out = os.path.join(scratch, name + ".4dgs")
    shutil.rmtree(work, ignore_errors=True)
    for f in (out,):
        if os.path.exists(f):
            os.remove(f)
    rss_log = os.path.join(scratch, name + ".rss.jsonl")
    if os.path.exists(rss_log):
        os.remove(rss_log)
    env = dict(cluster.env, FOURDGS=os.path.join(HERE, "rss_wrap.py"), REAL_FOURDGS=tool,
               RSS_LOG=rss_log, FPS=str(FPS), WORK=work,
               PLAN_ARGS="--tracked --segment-frames %d" % a.segment, SHARD_CPUS="1",
               SHARD_MEM="4G", MERGE_MEM="2G")
    log("%s: submitting %d shards" % (name, a.shards))
    t0 = time.time()
    run(["bash", os.path.join(SRC, "examples", "sharded", "submit_slurm.sh"), frames, out,
         str(a.shards)], env=env, cwd=scratch)
    while cluster.queue():
        time.sleep(1)
    total = time.time() - t0
    entries = read_log(rss_log)
    failed = [e for e in entries if e["exit"] != 0]
    if failed or not os.path.exists(out):
        raise SystemExit("%s: the sharded run failed: %s\n%s" % (name, failed, cluster.logs()))
    plan = [e for e in entries if e["args"][1:2] == ["plan"]][0]
    shards = sorted((e for e in entries if e["args"][1:2] == ["convert"]),
                    key=lambda e: e["start"])
    merge = [e for e in entries if e["args"][:1] == ["merge"]][0]
    log("%s: done in %.1f s" % (name, total))
    return {
        "output": out, "work": work, "bytes": os.path.getsize(out), "total_s": total,
        "plan_s": plan["end"] - plan["start"], "plan_rss_kib": plan["rss_kib"],
        "shards_s": max(e["end"] for e in shards) - min(e["start"] for e in shards),
        "shard_rss_kib": [e["rss_kib"] for e in shards],
        "shard_s": [e["end"] - e["start"] for e in shards],
        "merge_s": merge["end"] - merge["start"], "merge_rss_kib": merge["rss_kib"],
        "parts": sorted(os.path.join(work, f) for f in os.listdir(work) if f.endswith(".4dgs")),
    }


def single(tool, frames, plan, out, threads, scratch):
    rss_log = os.path.join(scratch, "single.rss.jsonl")
    if os.path.exists(rss_log):
        os.remove(rss_log)
    env = dict(os.environ, REAL_FOURDGS=tool, RSS_LOG=rss_log)
    run([os.path.join(HERE, "rss_wrap.py"), "-q", "convert", frames, "--grid", plan, "--threads",
         str(threads), "-o", out], env=env)
    e = read_log(rss_log)[-1]
    return {"wall_s": e["end"] - e["start"], "rss_kib": e["rss_kib"],
            "bytes": os.path.getsize(out)}


def tracked(tool, frames, out, scratch):
    """Single-process convert --tracked, no plan: the size the shards are held to."""
    rss_log = os.path.join(scratch, "tracked.rss.jsonl")
    if os.path.exists(rss_log):
        os.remove(rss_log)
    env = dict(os.environ, REAL_FOURDGS=tool, RSS_LOG=rss_log)
    run([os.path.join(HERE, "rss_wrap.py"), "-q", "convert", frames, "--fps", str(FPS),
         "--tracked", "-o", out], env=env)
    e = read_log(rss_log)[-1]
    return {"wall_s": e["end"] - e["start"], "rss_kib": e["rss_kib"],
            "bytes": os.path.getsize(out)}


def local_shards(tool, frames, name, scratch, a):
    """Plan, shards one after another and merge, without Slurm (the bytes do not depend on it)."""
    work = os.path.join(scratch, name + ".work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    plan = os.path.join(work, "grid.json")
    run([tool, "-q", "plan", frames, "--fps", str(FPS), "--tracked", "--segment-frames",
         str(a.segment), "-o", plan])
    parts = []
    for k, s in enumerate(run([tool, "slices", plan, str(a.shards)]).stdout.split()):
        parts.append(os.path.join(work, "part_%d.4dgs" % k))
        run([tool, "-q", "convert", frames, "--grid", plan, "--frames", s, "-o", parts[-1]])
    out = os.path.join(scratch, name + ".4dgs")
    run([tool, "-q", "merge", *parts, "--grid", plan, "-o", out])
    return os.path.getsize(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--scratch", default="/work/scratch29")
    ap.add_argument("--frames", type=int, default=600)
    ap.add_argument("--gaussians", type=int, default=200000)
    ap.add_argument("--short", type=int, default=60)
    ap.add_argument("--small", type=int, default=20000)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--segment", type=int, default=5)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    build, scratch = os.path.abspath(a.build), os.path.abspath(a.scratch)
    tool = os.path.join(build, "src", "cli", "4dgs")
    bench = os.path.join(build, "tests", "bench_long_capture")
    os.makedirs(scratch, exist_ok=True)
    if not slurm_cluster.installed():
        raise SystemExit("munge and slurm-wlm are needed (apt-get install munge slurm-wlm)")

    need = a.frames * a.gaussians * PLY_BYTES_PER_GAUSSIAN * 1.25 + (2 << 30)
    free = shutil.disk_usage(scratch).free
    log("disk: %.1f GB free under %s, %.1f GB needed" % (free / 1e9, scratch, need / 1e9))
    if free < need and not os.path.isdir(os.path.join(scratch, "frames")):
        raise SystemExit("not enough room under %s" % scratch)
    cores = os.cpu_count() or 1
    result = {"load_before": uptime(), "frames": a.frames, "gaussians": a.gaussians, "small": a.small,
              "short": a.short, "shards": a.shards, "segment": a.segment, "cores": cores}
    log(result["load_before"])
    frames = os.path.join(scratch, "frames")
    short = os.path.join(scratch, "frames_short")
    result["generate_s"] = generate(build, frames, a.frames, a.gaussians)
    result["ply_bytes"] = sum(os.path.getsize(os.path.join(frames, f)) for f in os.listdir(frames))
    first_frames(frames, short, a.short)
    try:
        with slurm_cluster.Cluster() as cluster:
            result["short_run"] = sharded(cluster, tool, short, "short", scratch, a)
            result["long_run"] = sharded(cluster, tool, frames, "long", scratch, a)
        for name, seq in (("short", short), ("long", frames)):
            log("%s: single process" % name)
            r = result[name + "_run"]
            out = os.path.join(scratch, name + ".single.4dgs")
            result[name + "_single"] = single(tool, seq, os.path.join(r["work"], "grid.json"),
                                              out, cores, scratch)
            result[name + "_single"]["identical"] = filecmp.cmp(out, r["output"], shallow=False)
            os.remove(out)
        log("merge in process")
        result["merge_heap"] = json.loads(run([bench, "merge", os.path.join(scratch, "m.4dgs"),
                                               *result["long_run"]["parts"]]).stdout)
        os.remove(os.path.join(scratch, "m.4dgs"))
        log("validate")
        v = subprocess.run([tool, "validate", result["long_run"]["output"]], capture_output=True,
                           text=True)
        result["validate"] = {"exit": v.returncode, "last": v.stdout.strip().splitlines()[-1]}
        log("seek over HTTP")
        merged = result["long_run"]["output"]
        duration = a.frames / FPS
        times = ["%g" % (duration * f) for f in (0.05, 0.5, 0.95)]
        p = run([sys.executable, os.path.join(SRC, "tests", "http", "harness.py"), "run", "--",
                 "bash", "-c", 'ln -s "$0" {root}/long.4dgs && "$1" seek {base}/long.4dgs "${@:2}"',
                 merged, bench, *times])
        result["seek"] = json.loads(p.stdout.strip().splitlines()[-1])
        log("convert --tracked on the first %d frames" % a.short)
        result["short_tracked"] = tracked(tool, short, os.path.join(scratch, "t.4dgs"), scratch)
        os.remove(os.path.join(scratch, "t.4dgs"))
        small = os.path.join(scratch, "frames_small")
        generate(build, small, a.frames, a.small)
        log("%d x %d: plan + shards + merge, and convert --tracked" % (a.frames, a.small))
        result["small_sharded_bytes"] = local_shards(tool, small, "small", scratch, a)
        result["small_tracked"] = tracked(tool, small, os.path.join(scratch, "t.4dgs"), scratch)
        os.remove(os.path.join(scratch, "t.4dgs"))
    finally:
        result["load_after"] = uptime()
        log(result["load_after"])
        with open(os.path.join(scratch, "long_capture.json"), "w") as f:
            json.dump(result, f, indent=1)
        if not a.keep:
            for d in ("frames", "frames_short", "frames_small"):
                shutil.rmtree(os.path.join(scratch, d), ignore_errors=True)
    report(result)


def report(r):
    s, l = r["short_run"], r["long_run"]
    ls = r["long_single"]
    mh = r["merge_heap"]
    limit = 2 * mh["largest_chunk"] + mh["summary_bytes"]
    mib = lambda kib: "%.0f MiB" % (kib / 1024)  # noqa: E731
    print("%d frames x %d gaussians (%.2f GB of PLY), %d shards on %d cores, adaptive, segments "
          "of %d frames" % (r["frames"], r["gaussians"], r["ply_bytes"] / 1e9, r["shards"],
                            r["cores"], r["segment"]))
    print("load before: %s\nload after:  %s\n" % (r["load_before"], r["load_after"]))
    print("| | %d frames | %d frames |" % (r["short"], r["frames"]))
    print("|---|---|---|")
    print("| plan (%s) | %.1f s | %.1f s |" % ("sample 8 + part spans", s["plan_s"], l["plan_s"]))
    print("| shards, first start to last end | %.1f s | %.1f s |" % (s["shards_s"], l["shards_s"]))
    print("| merge | %.1f s | %.1f s |" % (s["merge_s"], l["merge_s"]))
    print("| whole sharded run (submit to done) | %.1f s | %.1f s |" % (s["total_s"], l["total_s"]))
    print("| single process, same plan | %.1f s | %.1f s |" % (r["short_single"]["wall_s"],
                                                              ls["wall_s"]))
    for name, run_, one in (("short", s, r["short_single"]), ("long", l, ls)):
        run_["ratio"] = (run_["shards_s"] + run_["merge_s"]) / one["wall_s"]
        run_["merge_share"] = run_["merge_s"] / one["wall_s"]
    print("| (shards + merge) / single | %.2f | %.2f |" % (s["ratio"], l["ratio"]))
    print("| merge / single | %.3f | %.3f |" % (s["merge_share"], l["merge_share"]))
    print("| shard peak RSS, largest (smallest) | %s (%s) | %s (%s) |" % (
        mib(max(s["shard_rss_kib"])), mib(min(s["shard_rss_kib"])),
        mib(max(l["shard_rss_kib"])), mib(min(l["shard_rss_kib"]))))
    print("| merge peak RSS (process) | %s | %s |" % (mib(s["merge_rss_kib"]),
                                                      mib(l["merge_rss_kib"])))
    print("| single process peak RSS | %s | %s |" % (mib(r["short_single"]["rss_kib"]),
                                                      mib(ls["rss_kib"])))
    print("| merged file | %.1f MB | %.1f MB |" % (s["bytes"] / 1e6, l["bytes"] / 1e6))
    print("| merged = single process, byte for byte | %s | %s |" % (
        r["short_single"]["identical"], ls["identical"]))
    print()
    print("shard peak RSS, %d frames over %d: %.2fx" % (
        r["frames"], r["short"], max(l["shard_rss_kib"]) / max(s["shard_rss_kib"])))
    print("merge heap at most %.2f MB; 2 x largest chunk (%.2f MB) + summary (%.2f MB) = %.2f MB"
          % (mh["peak_heap"] / 1e6, mh["largest_chunk"] / 1e6, mh["summary_bytes"] / 1e6,
             limit / 1e6))
    st = r["short_tracked"]
    print("bytes, %d frames: shards merged %d, convert --tracked %d (peak RSS %s): %.3fx" % (
        r["short"], s["bytes"], st["bytes"], mib(st["rss_kib"]), s["bytes"] / st["bytes"]))
    sm = r["small_tracked"]
    print("bytes, %d frames x %d: shards merged %d, convert --tracked %d: %.3fx" % (
        r["frames"], r["small"], r["small_sharded_bytes"], sm["bytes"],
        r["small_sharded_bytes"] / sm["bytes"]))
    sk = r["seek"]
    print("validate: exit %d, %s" % (r["validate"]["exit"], r["validate"]["last"]))
    print("HTTP: open %d requests, %.1f KB, %.0f ms; file %.1f MB" % (
        sk["open"]["requests"], sk["open"]["bytes"] / 1e3, sk["open"]["wall_s"] * 1e3,
        sk["size"] / 1e6))
    for k in sk["seeks"]:
        print("  seek to %g s: %d visible, %d requests, %.1f KB fetched (the index: %.1f KB), "
              "%.0f ms" % (k["t"], k["visible"], k["requests"], k["bytes"] / 1e3,
                           k["index_bytes"] / 1e3, k["wall_s"] * 1e3))


if __name__ == "__main__":
    main()
