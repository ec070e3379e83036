// The allocation probe of tests/support/allocation_probe.hpp: a replacement operator new that
// remembers the largest request. No test cases live here.
#include "support/allocation_probe.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define FOURDGS_PROBE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define FOURDGS_PROBE 0
#endif
#endif
#ifndef FOURDGS_PROBE
#define FOURDGS_PROBE 1
#endif

namespace {
std::atomic<std::size_t> g_largest{0};
}

namespace fourdgs::test {
bool allocation_probe_counting() noexcept { return FOURDGS_PROBE != 0; }
void reset_largest_allocation() noexcept { g_largest.store(0); }
std::size_t largest_allocation() noexcept { return g_largest.load(); }
}  // namespace fourdgs::test

#if FOURDGS_PROBE
void* operator new(std::size_t n) {
    std::size_t prev = g_largest.load(std::memory_order_relaxed);
    while (n > prev && !g_largest.compare_exchange_weak(prev, n, std::memory_order_relaxed)) {
    }
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif
