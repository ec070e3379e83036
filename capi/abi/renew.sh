#!/bin/sh
# Renews the committed ABI baseline (capi/abi/libfourdgs-c.abi) from a build of libfourdgs-c.so:
# after adding functions or appending fields (allowed within an ABI), or with an incompatible
# change that bumps FOURDGS_C_ABI_VERSION and the soname (refused without the bump).
#   usage: capi/abi/renew.sh [build-dir]     (default: build; configures it when needed)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
[ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target fourdgs_c
exec sh "$root/capi/abi/check.sh" "$build/capi/libfourdgs-c.so" "$build/capi/include/fourdgs" --renew
