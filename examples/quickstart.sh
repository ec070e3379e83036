#!/usr/bin/env bash
# The quick start: installs what building the `4dgs` tool needs (and nothing else), builds only
# that tool, and runs it on the bundled showcase scene: its summary, the state at t = 2.5 s
# extracted as a standard 3DGS PLY, and a preview picture of that instant as a PNG.
#   usage: examples/quickstart.sh [FILE.4dgs] [TIME]
# Its build directory is build-quickstart/ (the libraries and the tool only, no tests), so that
# tests/run.sh's build/ keeps its own settings.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$here/build-quickstart"
"$here/.ci/install-deps" --build-only
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFOURDGS_BUILD_TESTS=OFF \
      -DFOURDGS_BUILD_BENCH=OFF -DFOURDGS_BUILD_VIEWER=OFF -DFOURDGS_HTTP=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target 4dgs >/dev/null
file="${1:-$here/examples/data/showcase.4dgs}"
at="${2:-2.5}"
tool="$build/src/cli/4dgs"
"$tool" info "$file"
"$tool" extract "$file" --at "$at" -o "$build/quickstart.ply"
"$tool" preview "$file" --at "$at" -o "$build/quickstart.png"
echo
printf '%-24s %s\n' "the tool:" "$tool" "the PLY at t = $at s:" "$build/quickstart.ply" \
       "its preview (PNG):" "$build/quickstart.png"
