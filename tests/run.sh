#!/usr/bin/env bash
# Builds fourdgs (Release, -Wall -Wextra -Werror; the library itself without exceptions and RTTI)
# and runs the whole test suite through ctest. Installs missing Debian packages first.
#   usage: tests/run.sh [build-dir]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
"$here/.ci/install-deps"
# The test programs compile at -Og (FOURDGS_TEST_COMPILE_OPTIONS, after Release's -O3): the
# Catch2 test files are half of this build's CPU and compile in less than half the time (one:
# 23 s -> 10 s of CPU), GCC's flow analysis still runs for the -Werror warnings, and the library,
# the tools and the programs the tests run (4dgs, the conformance runner) keep Release's -O3.
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFOURDGS_WERROR=ON \
      -DFOURDGS_TEST_COMPILE_OPTIONS=-Og >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build"
ctest --output-on-failure -j"$(nproc)"
