// The live-bytes probe of tests/support/live_bytes.hpp: a replacement operator new that counts the
// bytes live (by malloc_usable_size, so delete needs no size) and their peak. Linked into the tools
// tests and bench_merge (tests/CMakeLists.txt).
#include "support/live_bytes.hpp"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define FOURDGS_LIVE_PROBE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define FOURDGS_LIVE_PROBE 0
#endif
#endif
#ifndef FOURDGS_LIVE_PROBE
#define FOURDGS_LIVE_PROBE 1
#endif

namespace {
std::atomic<std::size_t> g_live{0}, g_peak{0};
}

namespace fourdgs::test {
bool live_bytes_counting() noexcept { return FOURDGS_LIVE_PROBE != 0; }
std::size_t live_bytes() noexcept { return g_live.load(); }
void reset_peak_live_bytes() noexcept { g_peak.store(g_live.load()); }
std::size_t peak_live_bytes() noexcept { return g_peak.load(); }
}  // namespace fourdgs::test

#if FOURDGS_LIVE_PROBE
void* operator new(std::size_t n) {
    void* p = std::malloc(n ? n : 1);
    if (!p) throw std::bad_alloc();
    const std::size_t now = g_live.fetch_add(malloc_usable_size(p)) + malloc_usable_size(p);
    std::size_t peak = g_peak.load(std::memory_order_relaxed);
    while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    return p;
}
void operator delete(void* p) noexcept {
    if (!p) return;
    g_live.fetch_sub(malloc_usable_size(p));
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
#endif
