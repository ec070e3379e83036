#!/usr/bin/env bash
# The quick start's main job: builds the `4dgs` tool and runs it on the bundled example scene —
# its summary, then the state at t = 2.5 s extracted as a standard 3DGS PLY. Installs missing
# Debian packages first.
#   usage: examples/quickstart.sh [FILE.4dgs] [TIME]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$here/build"
"$here/.ci/install-deps"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target 4dgs >/dev/null
file="${1:-$here/examples/data/example.4dgs}"
"$build/src/cli/4dgs" info "$file"
"$build/src/cli/4dgs" extract "$file" --at "${2:-2.5}" -o "$build/quickstart.ply"
