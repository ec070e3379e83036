#!/usr/bin/env bash
# Installs the built library into a temporary prefix, then builds tests/consumer against it
# twice: through find_package(fourdgs) (shared and static) and through pkg-config — the C++ API
# (fourdgs.pc), the tools library (fourdgs-tools.pc) and the C API (fourdgs-c.pc).
#   usage: check.sh BUILD_DIR SOURCE_DIR SAMPLE.4dgs
set -euo pipefail
build="$1"; src="$2"; sample="$3"
prefix="$build/consumer-prefix"
rm -rf "$prefix" "$build/consumer-build"
cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S "$src/tests/consumer" -B "$build/consumer-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$build/consumer-build" >/dev/null
LD_LIBRARY_PATH="$prefix/lib:${LD_LIBRARY_PATH:-}" "$build/consumer-build/consumer_shared" "$sample"
"$build/consumer-build/consumer_static" "$sample"
LD_LIBRARY_PATH="$prefix/lib:${LD_LIBRARY_PATH:-}" "$build/consumer-build/consumer_tools_shared" "$sample"
"$build/consumer-build/consumer_tools_static" "$sample"
LD_LIBRARY_PATH="$prefix/lib:${LD_LIBRARY_PATH:-}" "$build/consumer-build/consumer_c_shared" "$sample"
"$build/consumer-build/consumer_c_static" "$sample"
# pkg-config: shared, then fully static with the private requirements.
pc="$prefix/lib/pkgconfig"
[ -d "$pc" ] || pc="$(dirname "$(find "$prefix" -name fourdgs.pc | head -n1)")"
export PKG_CONFIG_PATH="$pc"
libdir="$(pkg-config --variable=libdir fourdgs)"
c++ -std=c++20 "$src/tests/consumer/main.cpp" $(pkg-config --cflags --libs fourdgs) -o "$build/consumer-build/consumer_pc"
LD_LIBRARY_PATH="$libdir" "$build/consumer-build/consumer_pc" "$sample"
c++ -std=c++20 "$src/tests/consumer/main.cpp" $(pkg-config --cflags fourdgs) "$libdir/libfourdgs.a" \
    $(pkg-config --libs-only-l --static fourdgs | sed 's/-lfourdgs//') -o "$build/consumer-build/consumer_pc_static"
"$build/consumer-build/consumer_pc_static" "$sample"
# The tools library: its .pc requires fourdgs, so one name brings both.
c++ -std=c++20 "$src/tests/consumer/tools.cpp" $(pkg-config --cflags --libs fourdgs-tools) -o "$build/consumer-build/consumer_tools_pc"
LD_LIBRARY_PATH="$libdir" "$build/consumer-build/consumer_tools_pc" "$sample"
c++ -std=c++20 "$src/tests/consumer/tools.cpp" $(pkg-config --cflags fourdgs-tools) "$libdir/libfourdgs-tools.a" "$libdir/libfourdgs.a" \
    $(pkg-config --libs-only-l --static fourdgs-tools | sed 's/-lfourdgs-tools//; s/-lfourdgs\b//') -o "$build/consumer-build/consumer_tools_pc_static"
"$build/consumer-build/consumer_tools_pc_static" "$sample"
# The C API: a C compiler, libfourdgs-c.so alone; then static with everything it needs.
cc -std=c99 "$src/tests/consumer/main.c" $(pkg-config --cflags --libs fourdgs-c) -o "$build/consumer-build/consumer_c_pc"
LD_LIBRARY_PATH="$libdir" "$build/consumer-build/consumer_c_pc" "$sample"
cc -std=c99 "$src/tests/consumer/main.c" $(pkg-config --cflags fourdgs-c) "$libdir/libfourdgs-c.a" "$libdir/libfourdgs.a" \
    $(pkg-config --libs-only-l --static fourdgs-c | sed 's/-lfourdgs-c//; s/-lfourdgs\b//') -o "$build/consumer-build/consumer_c_pc_static"
"$build/consumer-build/consumer_c_pc_static" "$sample"
echo "consumer: find_package (C++, tools and C, shared and static) and pkg-config (fourdgs, fourdgs-tools and fourdgs-c, shared and static) all linked and ran"
