// Compiling for size where speed does not matter, in the WebAssembly core: it is built without
// SIMD and under a size budget (docs/web.md, "Size"), and its decode sources are compiled for
// speed (-O3, wasm/dependencies.cmake). Elsewhere both are nothing.
//
// FOURDGS_COMPACT_LOOP, before a loop written to vectorize: compiled as it is written, neither
// vectorized nor unrolled.
// FOURDGS_COMPACT_FUNCTION, before a function that runs once per chunk rather than per row
// (checks, refusals): compiled for size (-Oz).
#pragma once

#if defined(__wasm__) && defined(__clang__)
#define FOURDGS_COMPACT_LOOP \
    _Pragma("clang loop unroll(disable) interleave(disable) vectorize(disable)")
#define FOURDGS_COMPACT_FUNCTION [[clang::minsize]]
#else
#define FOURDGS_COMPACT_LOOP
#define FOURDGS_COMPACT_FUNCTION
#endif
