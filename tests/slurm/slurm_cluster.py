#!/usr/bin/env python3
"""A one-node Slurm cluster for tests, started and stopped here (no systemd, nothing of the
system's touched): Debian's munge and slurm-wlm daemons with a munge key and socket, a
slurm.conf, state and spool directories in a temporary directory, on free loopback ports — so
several clusters can run at once on one machine. The node is this machine as `slurmd -C` sees it
(its CPUs and memory). Every daemon runs in the foreground as a child of this process, is told to
die with it (PR_SET_PDEATHSIG), and is stopped by its process id.

    with Cluster() as cluster:           # or: slurm_cluster.py run -- CMD ARGS...
        subprocess.run(["sbatch", ...], env=cluster.env)

Exit status of `run`: the command's, or 77 (ctest's SKIP) when munge or slurm-wlm is not
installed (Debian: apt-get install munge slurm-wlm; .ci/install-deps does).
"""

import getpass
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "http"))
from harness import die_with_parent, free_port  # noqa: E402

SKIP = 77
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel", "sinfo", "srun")


def find(name):
    for candidate in (shutil.which(name), "/usr/sbin/" + name):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def installed():
    return all(find(n) for n in DAEMONS + CLIENTS)


CONFIG = """\
ClusterName=fourdgs-test
SlurmctldHost=localhost
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser={user}
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={tmp}/munge/munge.socket
CredType=cred/munge
StateSaveLocation={tmp}/state
SlurmdSpoolDir={tmp}/spool
SlurmctldPidFile={tmp}/slurmctld.pid
SlurmdPidFile={tmp}/slurmd.pid
SlurmctldLogFile={tmp}/log/slurmctld.log
SlurmdLogFile={tmp}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1024
SchedulerType=sched/builtin
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
DependencyParameters=kill_invalid_depend
{node}
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""


class Cluster:
    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="fourdgs-slurm-")
        self.procs = {}
        self.env = None

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def _spawn(self, name, argv):
        log = open(os.path.join(self.tmp, "log", name + ".out"), "w")
        self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                            env=self.env, preexec_fn=die_with_parent)

    def _wait(self, what, ready, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError("%s exited (%d) while waiting for %s:\n%s"
                                       % (name, p.returncode, what, self.log(name)))
            if ready():
                return
            time.sleep(0.1)
        raise RuntimeError("timed out waiting for %s:\n%s" % (what, self.logs()))

    def start(self):
        tmp = self.tmp
        for d in ("munge", "state", "spool", "log"):
            os.mkdir(os.path.join(tmp, d))
        # munged wants its socket's directory not writable by others, its key not readable.
        os.chmod(tmp, 0o755)
        os.chmod(os.path.join(tmp, "munge"), 0o755)
        key = os.path.join(tmp, "munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        sock = os.path.join(tmp, "munge", "munge.socket")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM")}
        self.env["SLURM_CONF"] = os.path.join(tmp, "slurm.conf")
        self._spawn("munged", [find("munged"), "--foreground", "--socket=" + sock,
                               "--key-file=" + key, "--pid-file=" + sock + ".pid",
                               "--seed-file=" + os.path.join(tmp, "munge", "seed"),
                               "--log-file=" + os.path.join(tmp, "log", "munged.log"),
                               "--num-threads=2"])
        self._wait("munged", lambda: subprocess.run(
            ["munge", "-n", "-S", sock], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL).returncode == 0)
        # The node as slurmd sees this machine: CPUs, sockets, cores, memory.
        probe = subprocess.run([find("slurmd"), "-C"], capture_output=True, text=True, check=True)
        node = probe.stdout.splitlines()[0].split()
        node = ["NodeName=localhost"] + [w for w in node[1:] if not w.startswith("UpTime")]
        for _ in range(5):  # the ports are free when chosen; another process may take one
            conf = CONFIG.format(tmp=tmp, user=getpass.getuser(), node=" ".join(node),
                                 ctld_port=free_port(), slurmd_port=free_port())
            with open(self.env["SLURM_CONF"], "w") as f:
                f.write(conf)
            self._spawn("slurmctld", [find("slurmctld"), "-D", "-i"])
            self._spawn("slurmd", [find("slurmd"), "-D", "-N", "localhost"])
            try:
                self._wait("the node to be idle", lambda: self.node_state() == "idle")
                return
            except RuntimeError:
                for name in ("slurmd", "slurmctld"):
                    self._terminate(name)
        raise RuntimeError("the cluster did not start:\n" + self.logs())

    def node_state(self):
        p = subprocess.run([find("sinfo"), "-h", "-N", "-o", "%T"], capture_output=True,
                           text=True, env=self.env)
        return p.stdout.strip() if p.returncode == 0 else None

    def run(self, argv, **kw):
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, **kw)

    def queue(self):
        """The job ids still queued or running."""
        p = self.run([find("squeue"), "-h", "-o", "%i"])
        return p.stdout.split() if p.returncode == 0 else None

    def job(self, job_id):
        """`scontrol show job` as a dict (the first record: an array's first task)."""
        p = self.run([find("scontrol"), "-o", "show", "job", str(job_id)])
        out = {}
        for line in p.stdout.splitlines()[:1]:
            for word in line.split():
                k, _, v = word.partition("=")
                out[k] = v
        return out

    def jobs(self, job_id):
        """Every record `scontrol show job` gives for an id (an array: one per task)."""
        p = self.run([find("scontrol"), "-o", "show", "job", str(job_id)])
        return [dict(w.partition("=")[::2] for w in line.split())
                for line in p.stdout.splitlines()]

    def log(self, name):
        path = os.path.join(self.tmp, "log", name + ".out")
        return open(path).read()[-3000:] if os.path.exists(path) else ""

    def logs(self):
        return "\n".join("--- %s\n%s" % (n, self.log(n)) for n in self.procs)

    def _terminate(self, name):
        p = self.procs.pop(name, None)
        if p is None or p.poll() is not None:
            return
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

    def stop(self):
        if "slurmctld" in self.procs and self.env:
            # Whatever still runs on this cluster (a test that timed out) is cancelled first.
            self.run([find("scancel"), "--full", "--user", getpass.getuser()], timeout=30)
            deadline = time.time() + 15
            while time.time() < deadline and self.queue():
                time.sleep(0.2)
        for name in ("slurmd", "slurmctld", "munged"):
            self._terminate(name)
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    args = sys.argv[1:]
    if args[:1] != ["run"]:
        print(__doc__)
        return 2
    args = args[2:] if args[1:2] == ["--"] else args[1:]
    if not installed():
        print("SKIP: munge or slurm-wlm is not installed (Debian: apt-get install munge slurm-wlm)")
        return SKIP
    with Cluster() as cluster:
        return subprocess.call(args, env=cluster.env)


if __name__ == "__main__":
    sys.exit(main())
