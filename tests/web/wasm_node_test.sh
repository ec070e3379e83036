#!/usr/bin/env bash
# The npm package as a user gets it, over the whole conformance corpus (docs/web.md):
#   1. configure and build the WebAssembly tree (the npm package's module, the canonical-form
#      module) with Debian's emscripten, single-threaded or with threads;
#   2. `npm pack` it (the npm-package target) and `npm install --offline` the tarball into a
#      scratch directory (no registry is asked);
#   3. `node --test` the package's tests (js/test) beside that install, so they import the
#      installed package: canonical output byte-identical to the native runner's on both paths,
#      the package API's values and every refusal id.
#
#   wasm_node_test.sh SOURCE_DIR WASM_BUILD_DIR NATIVE_RUNNER THREADS(0|N)
#
# Exit 77 (ctest's SKIP_RETURN_CODE) only when emcc, node or npm is not installed.
set -euo pipefail
src=$1 build=$2 native=$3 threads=$4

for tool in emcc node npm; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool is not installed (Debian: apt-get install emscripten nodejs npm)"
    exit 77
  fi
done
if [ ! -d "$src/wasm/third_party" ]; then
  echo "the codec sources are missing: run wasm/fetch-codec-sources.sh (.ci/install-deps does)" >&2
  exit 1
fi

wasm_threads=OFF
[ "$threads" -gt 1 ] && wasm_threads=ON
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$src/wasm/toolchain.cmake" \
        -DCMAKE_BUILD_TYPE=Release -DFOURDGS_BUILD_CLI=OFF -DFOURDGS_BUILD_BENCH=OFF \
        -DFOURDGS_BUILD_TESTS=OFF -DFOURDGS_WASM_THREADS=$wasm_threads >/dev/null
fi
cmake --build "$build" -j"${FOURDGS_WASM_JOBS:-2}" --target npm-package fourdgs-canonical

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fourdgs-npm.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tarball=$(ls "$build"/fourdgs-*.tgz)
(cd "$tmp" && npm install --offline --no-audit --no-fund --silent "$tarball")
cp -r "$src/js/test" "$tmp/test"
echo '{"type": "module"}' > "$tmp/test/package.json"  # the tests are ES modules, as in js/

cd "$tmp"
FOURDGS_SOURCE_DIR="$src" FOURDGS_WASM_BUILD="$build" FOURDGS_NATIVE_CONFORMANCE="$native" \
FOURDGS_DECODE_THREADS="$threads" node --no-experimental-fetch --test test/*.test.js
