#!/bin/sh
# The C ABI of libfourdgs-c.so against the committed baseline (capi/abi/libfourdgs-c.abi), with
# libabigail: abidw describes the library's exported functions and the types fourdgs.h defines
# (from the debug information of the C ABI's objects), abidiff compares that with the baseline.
# Allowed within one ABI (fourdgs-c.abignore, docs/c-api.md "Compatibility"): functions added,
# fields appended to a size-tagged struct. Anything else fails: a function removed or its
# signature changed, a struct member inserted before the end, removed or retyped, an enumerator
# of any enum in fourdgs.h removed or renumbered (capi/abi/enumerators).
#
#   check.sh LIBRARY HEADERS_DIR            compare (ctest capi.abi; .ci/run through ctest)
#   check.sh LIBRARY HEADERS_DIR --renew    write the baseline anew (capi/abi/renew.sh runs this)
#
# HEADERS_DIR holds the fourdgs.h the library was built with (the build tree's
# capi/include/fourdgs). The baseline is renewed only (1) to add what is allowed, or (2) with an
# incompatible change together with a bump of FOURDGS_C_ABI_VERSION and the soname; --renew
# refuses an incompatible change without the bump.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
lib=$1
headers=$2
baseline=$here/libfourdgs-c.abi
suppressions=$here/fourdgs-c.abignore
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

abidw --headers-dir "$headers" --drop-private-types --exported-interfaces-only \
      --no-corpus-path --no-show-locs --type-id-style hash --out-file "$tmp/raw.abi" "$lib"
# Where the library was built is not ABI: the baseline is the same from any build directory.
sed "s/ comp-dir-path='[^']*'//" "$tmp/raw.abi" > "$tmp/current.abi"

# The enumerators of fourdgs.h's enums, "NAME VALUE" a line: most enums reach the ABI only as the
# uint32_t fields that carry them, where abidw cannot see them, so their values are compared here.
enumerators() {
    awk '/typedef enum/,/}/' "$1" | grep -oE 'FOURDGS_[A-Z0-9_]+ = [0-9]+' | sed 's/ = / /' | LC_ALL=C sort
}
cat "$headers"/fourdgs*.h | enumerators /dev/stdin | LC_ALL=C sort -u > "$tmp/enumerators"

abi_version() { sed -n 's/^#define FOURDGS_C_ABI_VERSION \([0-9]*\).*/\1/p' "$1"; }
soname() { sed -n "s/.*<abi-corpus [^>]*soname='\([^']*\)'.*/\1/p" "$1" | head -n 1; }

status=0
if [ -f "$baseline" ]; then
    abidiff --suppressions "$suppressions" --no-added-syms --no-show-locs \
            "$baseline" "$tmp/current.abi" > "$tmp/report" || status=$?
else
    echo "no baseline at $baseline" > "$tmp/report"
    status=8
fi

# Every enumerator of the baseline keeps its name and value; new ones may be added.
if [ -f "$here/enumerators" ]; then
    if ! LC_ALL=C comm -23 "$here/enumerators" "$tmp/enumerators" > "$tmp/enumerators-changed"; then
        status=1
    elif [ -s "$tmp/enumerators-changed" ]; then
        { echo "enumerators removed or renumbered (baseline NAME VALUE):"
          cat "$tmp/enumerators-changed"; } >> "$tmp/report"
        status=$((status | 8))
    fi
else
    echo "no enumerator baseline at $here/enumerators" >> "$tmp/report"
    status=$((status | 8))
fi

if [ "${3:-}" = --renew ]; then
    if [ "$status" -ne 0 ] && [ -f "$baseline" ]; then
        old_version=$(cat "$here/abi-version")
        new_version=$(abi_version "$headers/fourdgs.h")
        if [ "$old_version" = "$new_version" ] || [ "$(soname "$baseline")" = "$(soname "$tmp/current.abi")" ]; then
            cat "$tmp/report"
            echo "refused: an incompatible change needs FOURDGS_C_ABI_VERSION ($old_version) and the soname ($(soname "$baseline")) bumped" >&2
            exit 1
        fi
    fi
    cp "$tmp/current.abi" "$baseline"
    cp "$tmp/enumerators" "$here/enumerators"
    abi_version "$headers/fourdgs.h" > "$here/abi-version"
    echo "renewed $baseline (ABI $(cat "$here/abi-version"), $(soname "$baseline"))"
    exit 0
fi

# abidiff's status is a bit mask: 1 error, 2 usage, 4 an ABI change, 8 an incompatible one.
if [ "$status" -ne 0 ]; then
    cat "$tmp/report"
    echo "libfourdgs-c.so's ABI differs from capi/abi/libfourdgs-c.abi (abidiff status $status)." >&2
    echo "Allowed changes pass; for an intended break, bump FOURDGS_C_ABI_VERSION and the soname" >&2
    echo "and renew the baseline: capi/abi/renew.sh (docs/c-api.md, \"Compatibility\")." >&2
    exit 1
fi
echo "C ABI matches the baseline ($(wc -l < "$baseline") lines)"
