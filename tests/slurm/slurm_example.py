#!/usr/bin/env python3
"""examples/sharded/submit_slurm.sh, unmodified, on a real one-node Slurm cluster started for the
test (slurm_cluster.py): it plans, submits a job array of shard encodes and a merge that depends
on all of them; the test waits for the queue to drain, with a timeout.

    usage: slurm_example.py PATH/TO/4dgs SOURCE_DIR CASE

    example        resources given the way a user gives them (SHARD_CPUS, SHARD_MEM,
                   SHARD_TIME, MERGE_MEM): the shards run with them, the merge runs after every
                   shard, and its file is byte for byte the single-process encode on the same
                   plan and validates
    failing_shard  the example's defaults; one frame the plan did not sample lies outside it, so
                   the shard holding it fails: Slurm cancels the merge (its dependency can never
                   be met), no output appears, and all of it ends within the timeout

Exit 0 on success, 1 on a failure, 77 (ctest's SKIP) where munge or slurm-wlm is not installed.
"""

import os
import re
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import slurm_cluster  # noqa: E402

TIMEOUT = 180  # seconds for the whole array and the merge; a run takes about 15


class Failure(Exception):
    pass


def check(cond, message):
    if not cond:
        raise Failure(message)


def submit(cluster, example, tool, frames, scene, shards, work, extra_env):
    env = dict(cluster.env, FOURDGS=tool, FPS="8", WORK=work, **extra_env)
    p = subprocess.run(["bash", os.path.join(example, "submit_slurm.sh"), frames, scene,
                        str(shards)], env=env, capture_output=True, text=True,
                       cwd=os.path.dirname(work), timeout=120)
    check(p.returncode == 0, "submit_slurm.sh: exit %d\n%s\n%s" % (p.returncode, p.stdout,
                                                                    p.stderr))
    m = re.search(r"shards: job (\d+) .*merge: job (\d+)", p.stdout)
    check(m, "submit_slurm.sh does not name its jobs: " + p.stdout)
    return m.group(1), m.group(2)


def drain(cluster, started):
    """Waits until no job is queued or running; returns the seconds it took."""
    while time.time() - started < TIMEOUT:
        queued = cluster.queue()
        if queued == []:
            return time.time() - started
        time.sleep(0.25)
    raise Failure("jobs still queued after %d s: %s\n%s" % (TIMEOUT, cluster.queue(),
                                                            cluster.logs()))


def logs(directory):
    out = []
    for name in sorted(os.listdir(directory)):
        if name.endswith(".log"):
            out.append("--- %s\n%s" % (name, open(os.path.join(directory, name)).read()[-1500:]))
    return "\n".join(out)


def make_frames(src, frames, count):
    subprocess.run([sys.executable, os.path.join(src, "examples", "sharded", "make_frames.py"),
                    frames, str(count), "120"], check=True)


def case_example(cluster, tool, src, tmp):
    example = os.path.join(src, "examples", "sharded")
    frames, work, scene = (os.path.join(tmp, n) for n in ("frames", "work", "scene.4dgs"))
    make_frames(src, frames, 24)
    started = time.time()
    array, merge = submit(cluster, example, tool, frames, scene, 4, work, {
        "PLAN_ARGS": "--tracked --segment-frames 4", "SHARD_CPUS": "1", "SHARD_MEM": "300M",
        "SHARD_TIME": "00:10:00", "MERGE_MEM": "200M"})
    took = drain(cluster, started)
    tasks = cluster.jobs(array)
    check(len(tasks) == 4, "four shard tasks: %s" % [t.get("JobId") for t in tasks])
    for t in tasks:
        check(t.get("JobState") == "COMPLETED", "shard task %s: %s\n%s" % (
            t.get("JobId"), t.get("JobState"), logs(tmp)))
        # The resources asked for, not ones the example fixes.
        check(t.get("NumCPUs") == "1" and t.get("MinMemoryNode") == "300M" and
              t.get("TimeLimit") == "00:10:00", "shard task resources: %s" % t)
    m = cluster.job(merge)
    check(m.get("JobState") == "COMPLETED", "merge: %s %s\n%s" % (m.get("JobState"),
                                                                  m.get("Reason"), logs(tmp)))
    check(m.get("MinMemoryNode") == "200M", "merge resources: %s" % m)
    check(os.path.exists(scene), "no merged scene\n" + logs(tmp))
    single = os.path.join(tmp, "single.4dgs")
    subprocess.run([tool, "-q", "convert", frames, "--grid", os.path.join(work, "grid.json"), "-o",
                    single], check=True, capture_output=True)
    check(open(scene, "rb").read() == open(single, "rb").read(),
          "the merged scene differs from the single-process encode on the same plan")
    v = subprocess.run([tool, "validate", scene], capture_output=True, text=True)
    check(v.returncode in (0, 2), "the merged scene does not validate: " + v.stdout)
    print("4 shards and the merge on Slurm in %.1f s; merged = single-process, valid" % took)


def move_gaussian(path, gaussian, x):
    """Rewrites gaussian `gaussian`'s x in a binary PLY frame written by make_frames.py."""
    data = bytearray(open(path, "rb").read())
    end = data.index(b"end_header\n") + len(b"end_header\n")
    names = [line.split()[-1] for line in data[:end].decode().splitlines()
             if line.startswith("property float")]
    at = end + (gaussian * len(names) + names.index("x")) * 4
    data[at:at + 4] = struct.pack("<f", x)
    open(path, "wb").write(data)


def case_failing_shard(cluster, tool, src, tmp):
    example = os.path.join(src, "examples", "sharded")
    frames, work, scene = (os.path.join(tmp, n) for n in ("frames", "work", "scene.4dgs"))
    make_frames(src, frames, 24)
    # The plan samples frames 0, 1 and 23 (--sample 2); frame 13 sends one gaussian far outside
    # what it saw, so the shard holding frame 13 refuses it (outside-plan).
    move_gaussian(os.path.join(frames, "frame_0013.ply"), 5, 50.0)
    started = time.time()
    array, merge = submit(cluster, example, tool, frames, scene, 4, work, {
        "PLAN_ARGS": "--tracked --model keyframe-delta --keyframe-every 4 --sample 2"})
    took = drain(cluster, started)
    states = {t.get("JobId"): t.get("JobState") for t in cluster.jobs(array)}
    check(sorted(states.values()) == ["COMPLETED", "COMPLETED", "COMPLETED", "FAILED"],
          "one shard task fails, the others complete: %s\n%s" % (states, logs(tmp)))
    failed = [name for name in os.listdir(tmp) if name.startswith("4dgs-shard_") and
              "outside-plan" in open(os.path.join(tmp, name)).read()]
    check(len(failed) == 1, "the failing shard's log names outside-plan:\n" + logs(tmp))
    m = cluster.job(merge)
    check(m.get("JobState") == "CANCELLED" and m.get("Reason") == "DependencyNeverSatisfied",
          "the merge is cancelled: %s %s" % (m.get("JobState"), m.get("Reason")))
    check(not os.path.exists(scene), "a cancelled merge writes no scene")
    check(not [n for n in os.listdir(tmp) if n.startswith("4dgs-merge_")], "the merge never ran")
    print("a failing shard cancelled the merge in %.1f s" % took)


def main():
    tool, src, case = sys.argv[1], sys.argv[2], sys.argv[3]
    cases = {"example": case_example, "failing_shard": case_failing_shard}
    if case not in cases:
        print("unknown case " + case)
        return 1
    if not slurm_cluster.installed():
        print("SKIP: munge or slurm-wlm is not installed (Debian: apt-get install munge slurm-wlm)")
        return slurm_cluster.SKIP
    tool = os.path.abspath(tool)
    with tempfile.TemporaryDirectory(prefix="4dgs-slurm-") as tmp:
        os.chmod(tmp, 0o755)
        try:
            with slurm_cluster.Cluster() as cluster:
                cases[case](cluster, tool, os.path.abspath(src), tmp)
        except Failure as e:
            print("FAIL %s: %s" % (case, e))
            return 1
    print("ok " + case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
