// fourdgs/column.hpp — the vector type of a GaussianBlock column.
//
// A decoded state is about 93 bytes a gaussian, so a million-gaussian output is 93 MB that a
// process touches for the first time on its first decode. Faulting that in 4 KiB pages costs
// more than the decode itself (0.4 GB/s against 9.5 GB/s in 2 MiB pages, on the machines we
// measured), and a std::vector's buffer is not 2 MiB-aligned, so the kernel cannot back most of
// it with huge pages even when asked. Column<T> is a std::vector whose large buffers (2 MiB and
// more) start on a 2 MiB boundary and are advised for transparent huge pages, so the first
// decode costs about what a warm one does. Everything else is std::vector: the same interface,
// the same value-initialization on resize, memory from operator new.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <limits>
#include <new>
#include <vector>

#include "fourdgs/export.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

namespace detail {
// `bytes` of memory for a column, from operator new; from 2 MiB (one huge page) on, aligned to
// 2 MiB inside a slightly larger allocation and advised for huge pages. nullptr when there is
// no memory to give. Free it with free_column_bytes(p, bytes), the same `bytes`. Out of line on
// purpose: the size picks the layout, and the columns' element types need no more than
// operator new's alignment.
void* allocate_column_bytes(std::size_t bytes) noexcept;
void free_column_bytes(void* p, std::size_t bytes) noexcept;
}  // namespace detail

template <class T>
struct ColumnAllocator {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
    using value_type = T;

    ColumnAllocator() noexcept = default;
    template <class U>
    ColumnAllocator(const ColumnAllocator<U>&) noexcept {}

    T* allocate(std::size_t n) {
        void* p = n <= std::numeric_limits<std::size_t>::max() / sizeof(T)
                      ? detail::allocate_column_bytes(n * sizeof(T))
                      : nullptr;
        if (p == nullptr) out_of_memory();
        return static_cast<T*>(p);
    }
    // std::vector deallocates with the very n it allocated, so the size finds the source again.
    void deallocate(T* p, std::size_t n) noexcept { detail::free_column_bytes(p, n * sizeof(T)); }

    friend bool operator==(const ColumnAllocator&, const ColumnAllocator&) noexcept {
        return true;
    }

private:
    // What std::allocator does when memory runs out.
    [[noreturn]] static void out_of_memory() {
#if defined(__cpp_exceptions)
        throw std::bad_alloc();
#else
        std::abort();
#endif
    }
};

template <class T>
using Column = std::vector<T, ColumnAllocator<T>>;

}  // namespace fourdgs
FOURDGS_PUBLIC_END
