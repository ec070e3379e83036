#!/usr/bin/env bash
# Builds fourdgs (Release, -Wall -Wextra -Werror; the library itself without exceptions and RTTI)
# and runs the whole test suite through ctest. Installs missing Debian packages first.
#   usage: tests/run.sh [build-dir]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
"$here/.ci/install-deps"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFOURDGS_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build"
ctest --output-on-failure -j"$(nproc)"
