#!/usr/bin/env bash
# The sharded example on Slurm: plan on the submitting node, a job array of shards
# (slurm_shard.sbatch), and a merge job that runs once every shard has succeeded. If a shard
# fails, the merge can never run: Slurm cancels it (DependencyParameters=kill_invalid_depend,
# or it waits with Reason=DependencyNeverSatisfied — cancel it with scancel).
#
# usage: submit_slurm.sh FRAMES_DIR OUTPUT.4dgs [SHARDS]
#
# Environment (defaults in brackets):
#   FOURDGS      the 4dgs tool [4dgs]            FPS        frames per second [8]
#   PLAN_ARGS    more `4dgs plan` options, e.g. "--tracked --model keyframe-delta"   []
#   WORK         the plan and the shards [OUTPUT.parts]
#   SHARD_CPUS   CPUs per shard task; the encoder uses that many threads [1]
#   SHARD_MEM    memory per shard task, sbatch --mem syntax (e.g. 2G) [the cluster's default]
#   SHARD_TIME   time limit per shard task, sbatch --time syntax [the partition's default]
#   MERGE_MEM    memory of the merge job [the cluster's default]
#   MERGE_TIME   time limit of the merge job [the partition's default]
#   SBATCH_ARGS  more sbatch options for every job, e.g. "--partition=cpu --account=vfx" []
# Sizing them: docs/cli.md "Sizing shards". FRAMES_DIR and WORK must be on a file system the
# compute nodes share.
set -euo pipefail

frames_dir=$1
output=$2
shards=${3:-16}
tool=${FOURDGS:-4dgs}
work=${WORK:-$output.parts}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"

# One sbatch option per resource the user gave; none where the cluster's default should hold.
resources() {  # cpus mem time
    [ -n "$1" ] && printf '%s\n' "--cpus-per-task=$1"
    [ -n "$2" ] && printf '%s\n' "--mem=$2"
    [ -n "$3" ] && printf '%s\n' "--time=$3"
    return 0
}
mapfile -t shard_resources < <(resources "${SHARD_CPUS:-1}" "${SHARD_MEM:-}" "${SHARD_TIME:-}")
mapfile -t merge_resources < <(resources 1 "${MERGE_MEM:-}" "${MERGE_TIME:-}")
# shellcheck disable=SC2206  # SBATCH_ARGS is a list of options
extra=(${SBATCH_ARGS:-})

# shellcheck disable=SC2086  # PLAN_ARGS is a list of options
"$tool" -q plan "$frames_dir" --fps "${FPS:-8}" ${PLAN_ARGS:-} -o "$work/grid.json"

array=$(sbatch --parsable --array="0-$((shards - 1))" "${shard_resources[@]}" "${extra[@]}" \
               --export="ALL,FRAMES_DIR=$frames_dir,WORK=$work,FOURDGS=$tool" \
               "$here/slurm_shard.sbatch")
merge=$(sbatch --parsable --dependency="afterok:$array" "${merge_resources[@]}" "${extra[@]}" \
               --job-name=4dgs-merge --output=%x_%j.log \
               --wrap="$tool merge $work/part_*.4dgs --grid $work/grid.json -o $output")
echo "shards: job $array ($shards tasks); merge: job $merge, after every shard succeeded"
