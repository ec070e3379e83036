#!/usr/bin/env python3
"""Runs the real 4dgs ($REAL_FOURDGS) with the arguments given and appends one JSON line to
$RSS_LOG: the arguments, the start and end (epoch seconds), the exit status and the peak
resident set of the process (KiB, getrusage's ru_maxrss of the child). The long-capture benchmark
(long_capture.py) hands it to the sharded example as FOURDGS, so every plan, shard and merge the
example runs — on Slurm too — is measured where it runs. Exit status: the command's."""
import json
import os
import resource
import subprocess
import sys
import time

start = time.time()
code = subprocess.call([os.environ["REAL_FOURDGS"]] + sys.argv[1:])
end = time.time()
with open(os.environ["RSS_LOG"], "a") as log:
    log.write(json.dumps({"args": sys.argv[1:], "start": start, "end": end, "exit": code,
                          "rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss})
              + "\n")
sys.exit(code)
