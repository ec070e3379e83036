// src/platform/target_clones.hpp — FOURDGS_TARGET_CLONES(...): a function compiled once per named
// target and the baseline, the version picked at load time by the CPU it runs on. Only where the
// toolchain can do that (x86-64 ELF with the target_clones attribute); elsewhere (the
// WebAssembly core, other platforms) it expands to nothing and the function is compiled once.
// Each use says in its own file which target it names and why: whether FMA is allowed depends
// on whether the floats must stay bit-identical to the baseline's.
#pragma once

#if defined(__x86_64__) && defined(__ELF__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define FOURDGS_TARGET_CLONES(...) __attribute__((target_clones(__VA_ARGS__, "default")))
#endif
#endif
#ifndef FOURDGS_TARGET_CLONES
#define FOURDGS_TARGET_CLONES(...)
#endif
