#!/usr/bin/env bash
# The npm package's module stays under its size budget (docs/web.md, "Size"): the single-threaded
# fourdgs-core.wasm the package test built, compressed with `gzip -9`, under LIMIT bytes.
#
#   wasm_size_test.sh WASM_BUILD_DIR LIMIT
#
# Exit 77 (ctest's SKIP) only where emcc is not installed (no module was built).
set -euo pipefail
build=$1 limit=$2
module=$(find "$build" -name fourdgs-core.wasm -not -path '*/js/*' | head -n 1)
if [ -z "$module" ]; then
  if ! command -v emcc >/dev/null; then echo "SKIP: emscripten is not installed"; exit 77; fi
  echo "no fourdgs-core.wasm under $build" >&2
  exit 1
fi
raw=$(wc -c < "$module")
gzipped=$(gzip -9 -c "$module" | wc -c)
echo "$module: $raw bytes, $gzipped gzipped (gzip -9); the budget is $limit"
if [ "$gzipped" -ge "$limit" ]; then
  echo "fourdgs-core.wasm is $gzipped bytes gzipped, over the $limit-byte budget" >&2
  exit 1
fi
