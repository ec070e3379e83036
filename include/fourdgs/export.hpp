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
