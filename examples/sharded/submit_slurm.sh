#!/usr/bin/env bash
# The sharded example on Slurm: plan on the submitting node, a job array of shards
# (slurm_shard.sbatch), and a merge job that runs once every shard has succeeded.
#
# usage: submit_slurm.sh FRAMES_DIR OUTPUT.4dgs [SHARDS]
# Environment as encode_parallel.sh (FOURDGS, FPS, PLAN_ARGS, WORK); FRAMES_DIR and WORK must be
# on a file system the compute nodes share.
set -euo pipefail

frames_dir=$1
output=$2
shards=${3:-16}
tool=${FOURDGS:-4dgs}
work=${WORK:-$output.parts}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"

# shellcheck disable=SC2086
"$tool" -q plan "$frames_dir" --fps "${FPS:-8}" ${PLAN_ARGS:-} -o "$work/grid.json"

array=$(sbatch --parsable --array="0-$((shards - 1))" \
               --export="ALL,FRAMES_DIR=$frames_dir,WORK=$work,FOURDGS=$tool" \
               "$here/slurm_shard.sbatch")
sbatch --dependency="afterok:$array" --job-name=4dgs-merge --output=%x_%j.log \
       --wrap="$tool merge $work/part_*.4dgs -o $output"
echo "submitted shards as job $array; the merge runs after them"
