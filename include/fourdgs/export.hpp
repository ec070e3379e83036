// What the shared library exports. The library is compiled with hidden visibility, so only the
// declarations of the public headers — each wrapped in FOURDGS_PUBLIC_BEGIN / FOURDGS_PUBLIC_END
// — are visible to a program that links libfourdgs.so; the compiled internals (src/, e.g. the
// encode steps) stay private and may change without breaking the ABI of a release.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define FOURDGS_PUBLIC_BEGIN _Pragma("GCC visibility push(default)")
#define FOURDGS_PUBLIC_END _Pragma("GCC visibility pop")
#else
#define FOURDGS_PUBLIC_BEGIN
#define FOURDGS_PUBLIC_END
#endif

// The plumbing under fourdgs/detail/ (the record stream, the index check, the keyframe-delta
// composition and rules, the file assembler) is exported too — the public readers hold its types
// as members, and the tools library's merge calls it — but it is not API: a release may change
// it. Its headers say so by wrapping their declarations in these instead.
#define FOURDGS_DETAIL_BEGIN FOURDGS_PUBLIC_BEGIN
#define FOURDGS_DETAIL_END FOURDGS_PUBLIC_END
