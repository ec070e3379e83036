#!/bin/sh
# The shared libraries export their public API and nothing else (issue 13, export.hpp): a
# function declared in a public header is a dynamic symbol; one declared only in src/*/*.hpp (the
# writers' encode steps, the content-record encoders) is not.
# Usage: check.sh LIBFOURDGS_SO LIBFOURDGS_TOOLS_SO INCLUDE_DIR
set -eu
core=$(nm -DC --defined-only "$1")
tools=$(nm -DC --defined-only "$2")
fail=0
expect() {  # expect LABEL SYMBOLS PATTERN: PATTERN must appear
    if ! printf '%s\n' "$2" | grep -q -- "$3"; then echo "missing export in $1: $3"; fail=1; fi
}
refuse() {  # refuse LABEL SYMBOLS PATTERN: PATTERN must not appear
    if printf '%s\n' "$2" | grep -- "$3"; then echo "internal symbol exported by $1: $3"; fail=1; fi
}
expect libfourdgs "$core" 'fourdgs::IndexedReader::open('
expect libfourdgs "$core" 'fourdgs::open_scene('
expect libfourdgs "$core" 'fourdgs::validate('
expect libfourdgs "$core" 'fourdgs::FileSource::open('
refuse libfourdgs "$core" 'fourdgs::encoding::'
refuse libfourdgs "$core" 'fourdgs::content::'
expect libfourdgs-tools "$tools" 'fourdgs::read_ply('
refuse libfourdgs-tools "$tools" 'fourdgs::IndexedReader::open('
# Every public header that declares something wraps it, or its symbols would be hidden too; the
# plumbing under detail/ marks itself as not API with FOURDGS_DETAIL_BEGIN/END instead.
for h in $(find "$3/fourdgs" -name '*.hpp' ! -name export.hpp ! -path '*/detail/*'); do
    if grep -q '^namespace ' "$h" && ! grep -q '^FOURDGS_PUBLIC_BEGIN' "$h"; then
        echo "$h declares a namespace outside FOURDGS_PUBLIC_BEGIN/END"; fail=1
    fi
done
for h in $(find "$3/fourdgs/detail" -name '*.hpp'); do
    if grep -q '^FOURDGS_PUBLIC_BEGIN' "$h"; then
        echo "$h is under detail/ but declares public API (FOURDGS_PUBLIC_BEGIN)"; fail=1
    fi
done
# Plumbing nothing outside the library calls is not exported at all.
refuse libfourdgs "$core" 'fourdgs::detail::StateChains::'
# (TimelineTiling is exported: the tools library's merge tiles the chunks it keeps with it.)
expect libfourdgs "$core" 'fourdgs::detail::TimelineTiling::next('
refuse libfourdgs "$core" 'fourdgs::detail::check_state_interval('
# The public umbrella header brings in the API, not the plumbing (which the public readers'
# headers include for their members).
if grep -q 'fourdgs/detail/' "$3/fourdgs/fourdgs.hpp"; then
    echo "fourdgs.hpp includes a detail/ header"; fail=1
fi
exit $fail
