#!/usr/bin/env bash
# Encodes a PLY frame sequence as a .4dgs scene in shards run by GNU parallel, then merges them:
#
#   1. 4dgs plan     decides one grid for the whole sequence (a quick scan of a few frames);
#   2. 4dgs slices   cuts the frames into one slice per shard, on the plan's alignment;
#   3. 4dgs convert  encodes each slice on the plan (--grid, --frames), JOBS at a time;
#   4. 4dgs merge    joins the shards, copying their chunks byte for byte.
#
# usage: encode_parallel.sh FRAMES_DIR OUTPUT.4dgs [SHARDS] [JOBS]
# Environment: FOURDGS (the 4dgs tool, default "4dgs"), FPS (default 8), PLAN_ARGS (more `4dgs
# plan` options, e.g. "--tracked --model keyframe-delta --keyframe-every 8"), WORK (a directory
# for the plan and the shards, default OUTPUT.parts). Over ssh, add parallel's -S host1,host2
# (with the frames and WORK on a shared file system).
set -euo pipefail

frames_dir=$1
output=$2
shards=${3:-4}
jobs=${4:-2}
tool=${FOURDGS:-4dgs}
work=${WORK:-$output.parts}
mkdir -p "$work"

# shellcheck disable=SC2086  # PLAN_ARGS is a list of options
"$tool" -q plan "$frames_dir" --fps "${FPS:-8}" ${PLAN_ARGS:-} -o "$work/grid.json"

"$tool" slices "$work/grid.json" "$shards" |
    parallel --halt now,fail=1 -j "$jobs" \
        "$tool" -q convert "$frames_dir" --grid "$work/grid.json" --frames {} \
        -o "$work/part_{#}.4dgs"

"$tool" merge "$work"/part_*.4dgs --grid "$work/grid.json" -o "$output"
