#!/usr/bin/env bash
# The quick start's main job: builds fourdgs and prints the bundled example scene's summary and
# the gaussians visible at t = 2.5 s. Installs missing Debian packages first.
#   usage: examples/quickstart.sh [FILE.4dgs] [TIME]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$here/build"
"$here/.ci/install-deps"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target fourdgs-inspect >/dev/null
"$build/examples/fourdgs-inspect" "${1:-$here/examples/data/example.4dgs}" --at "${2:-2.5}"
