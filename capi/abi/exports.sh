#!/bin/sh
# libfourdgs-c.so exports exactly the functions fourdgs.h declares, each under the version node
# FOURDGS_C_<FOURDGS_C_ABI_VERSION> (capi/fourdgs-c.map): nothing internal leaks, nothing declared
# is missing.   usage: exports.sh LIBRARY FOURDGS_H
set -eu
lib=$1
header=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n 's/^#define FOURDGS_C_ABI_VERSION \([0-9]*\).*/\1/p' "$header")
# Declarations: FOURDGS_CAPI <type> name( or FOURDGS_CAPI void(name)(, possibly over two lines.
# (fourdgs.h and the headers beside it that it includes, fourdgs_*.h)
cat "$header" "$(dirname "$header")"/fourdgs_*.h | tr '\n' ' ' | grep -o 'FOURDGS_CAPI [^;(]*([^;]*' |
    sed -n 's/^FOURDGS_CAPI [^(]*[ *(]\(fourdgs_[a-z0-9_]*\)[ )]*(.*/\1/p' | sort -u > "$tmp/declared"
nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "W" { print $3 }' | sort -u > "$tmp/exported"
sed -n "s/@@FOURDGS_C_$version\$//p" "$tmp/exported" | sort -u > "$tmp/versioned"
fail=0
if ! cmp -s "$tmp/declared" "$tmp/versioned"; then
    echo "declared in fourdgs.h (<) vs exported as name@@FOURDGS_C_$version (>):"
    diff "$tmp/declared" "$tmp/versioned" || true
    fail=1
fi
if grep -v "@@FOURDGS_C_$version\$" "$tmp/exported"; then
    echo "exported outside the version node FOURDGS_C_$version (above)"
    fail=1
fi
[ "$fail" -eq 0 ] && echo "$(wc -l < "$tmp/declared") functions, all exported as FOURDGS_C_$version"
exit $fail
