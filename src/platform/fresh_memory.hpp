// Growing a decode buffer into memory the process has never touched (internal to the library).
//
// A first decode writes every byte of its output and workspaces into fresh pages. On the
// machines we measured (a paravirtualized VM) faulting those in 4 KB at a time cost three to
// four times the decode itself, so a buffer that grows past its capacity asks for 2 MB pages
// when it is large (transparent huge pages in "madvise" mode) and has its pages populated in
// one call, before resize() writes them. Both are advice: a kernel without them, or another
// system, just faults the pages in as before.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace fourdgs::detail {

inline void advise_fresh(void* data, std::size_t bytes) {
#if defined(__linux__)
    constexpr std::size_t kPopulateBytes = std::size_t{64} << 10;
    // From 2 MB: a column of a million floats (4 MB) then holds one or two aligned 2 MB pages
    // (std::vector's memory is not 2 MB-aligned; the part of it that is takes huge pages).
    constexpr std::size_t kHugeBytes = std::size_t{2} << 20;
    if (bytes < kPopulateBytes) return;
    const std::uintptr_t page = 4096;
    const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(data);
    const std::uintptr_t begin = (at + page - 1) & ~(page - 1);
    const std::uintptr_t end = (at + bytes) & ~(page - 1);
    if (end <= begin) return;
    void* range = reinterpret_cast<void*>(begin);
#if defined(MADV_HUGEPAGE)
    if (bytes >= kHugeBytes) (void)madvise(range, end - begin, MADV_HUGEPAGE);
#endif
#if defined(MADV_POPULATE_WRITE)
    (void)madvise(range, end - begin, MADV_POPULATE_WRITE);
#endif
#else
    (void)data;
    (void)bytes;
#endif
}

// v.reserve(capacity), with fresh capacity advised as above.
template <class T, class Allocator>
void reserve_fresh(std::vector<T, Allocator>& v, std::size_t capacity) {
    if (capacity <= v.capacity()) return;
    v.reserve(capacity);
    advise_fresh(v.data(), capacity * sizeof(T));
}

// v.resize(size), with fresh capacity advised as above. Capacity grows to the size asked for
// (an output sized once is not over-allocated) or by half, whichever is more, so a workspace
// that meets slightly larger chunks does not reallocate for each.
template <class T, class Allocator>
void resize_fresh(std::vector<T, Allocator>& v, std::size_t size) {
    if (size > v.capacity()) {
        const std::size_t capacity = std::max(size, v.capacity() + v.capacity() / 2);
        v.reserve(capacity);
        advise_fresh(v.data(), capacity * sizeof(T));
    }
    v.resize(size);
}

}  // namespace fourdgs::detail
