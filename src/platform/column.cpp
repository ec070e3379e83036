// Where Column<T>'s buffers come from (fourdgs/column.hpp).
//
// Every buffer comes from operator new, so whatever watches allocations (a test's probe, a
// program's own operator new, a sanitizer) sees the columns too. A large one is placed inside a
// slightly larger allocation so that it starts on a 2 MiB boundary, and that range is advised
// for transparent huge pages. operator new hands out buffers this large as fresh mappings of
// their own (glibc) or from a heap the process already touched; either way the advice applies
// only to the column's own range.
#include "fourdgs/column.hpp"

#include <cstdint>
#include <cstring>
#include <limits>
#include <new>

// Under AddressSanitizer a column is exactly what it asks for, so that reads past its end are
// caught; elsewhere on Linux it is aligned and advised.
#if defined(__SANITIZE_ADDRESS__)
#define FOURDGS_COLUMNS_ALIGNED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FOURDGS_COLUMNS_ALIGNED 0
#endif
#endif
#if !defined(FOURDGS_COLUMNS_ALIGNED) && defined(__linux__)
#define FOURDGS_COLUMNS_ALIGNED 1
#include <sys/mman.h>
#elif !defined(FOURDGS_COLUMNS_ALIGNED)
#define FOURDGS_COLUMNS_ALIGNED 0
#endif

namespace fourdgs::detail {

#if FOURDGS_COLUMNS_ALIGNED

namespace {

// Buffers at least this large are aligned (one huge page).
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kPage = 4096;
// Before the aligned column: the pointer operator new returned, to free.
constexpr std::size_t kHeader = sizeof(void*);

std::size_t round_up(std::size_t bytes, std::size_t to) { return (bytes + to - 1) / to * to; }

// The range advised for huge pages: whole huge pages when that wastes at most an eighth of the
// column (a huge page partly used is still a whole one in memory once touched); otherwise the
// tail past the last whole huge page stays in 4 KiB pages.
std::size_t advised_length(std::size_t bytes) {
    const std::size_t huge = round_up(bytes, kHugePage);
    return huge - bytes <= bytes / 8 ? huge : round_up(bytes, kPage);
}

}  // namespace

void* allocate_column_bytes(std::size_t bytes) noexcept {
    if (bytes < kHugePage) return ::operator new(bytes, std::nothrow);
    if (bytes > std::numeric_limits<std::size_t>::max() / 2) return nullptr;
    const std::size_t length = advised_length(bytes);
    // Room to move the start to the next 2 MiB boundary with the header before it. The slack
    // is address space only: its pages are never touched, but for the header's.
    void* block = ::operator new(length + kHugePage + kHeader, std::nothrow);
    if (block == nullptr) return nullptr;
    const auto at = reinterpret_cast<std::uintptr_t>(block) + kHeader;
    const std::uintptr_t aligned = (at + kHugePage - 1) & ~(std::uintptr_t{kHugePage} - 1);
    auto* column = reinterpret_cast<unsigned char*>(aligned);
    std::memcpy(column - kHeader, &block, kHeader);
#if defined(MADV_HUGEPAGE)
    // Advice: a kernel without transparent huge pages faults the pages in 4 KiB at a time.
    (void)madvise(column, length, MADV_HUGEPAGE);
#endif
    return column;
}

void free_column_bytes(void* p, std::size_t bytes) noexcept {
    if (p == nullptr || bytes < kHugePage) {
        ::operator delete(p);
        return;
    }
    void* block = nullptr;
    std::memcpy(&block, static_cast<unsigned char*>(p) - kHeader, kHeader);
    ::operator delete(block);
}

#else

// No huge pages to advise (WebAssembly, other systems) or a sanitizer watching: the heap as is.
void* allocate_column_bytes(std::size_t bytes) noexcept {
    return ::operator new(bytes, std::nothrow);
}

void free_column_bytes(void* p, std::size_t) noexcept { ::operator delete(p); }

#endif

}  // namespace fourdgs::detail
