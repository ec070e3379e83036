// src/write/chunk_plan.hpp — how the writer plans its chunks from the gaussians it is given: the
// runs a group is cut into (at most max_chunk_gaussians each), the gaussians grouped by window,
// a declared window checked, and the rules a batch is validated by.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/writer_types.hpp"
#include "encoding.hpp"

namespace fourdgs::chunk_plan {

// Splits [0, count) into ceil(count / max) near-equal runs; calls fn(first, size).
template <class F>
void split_runs(std::size_t count, std::uint32_t max_chunk, F&& fn) {
    if (count == 0) return;
    const std::size_t parts = (count + max_chunk - 1) / max_chunk;
    for (std::size_t p = 0; p < parts; ++p) {
        const std::size_t first = count * p / parts, last = count * (p + 1) / parts;
        fn(first, last - first);
    }
}

// The rules a batch given to the writer is checked by: windows per gaussian required or
// absent, and the number its first gaussian is named by in messages.
encoding::BatchRules batch_rules(bool need_windows, std::uint64_t name_base);

// A declared window of the Window Table (StreamingWriter::create).
Status check_declared_window(const WindowTable::Window& w, double duration, std::size_t index);

// The distinct windows of `b`, sorted by (lo, hi), and the gaussians grouped by window in input
// order within each (`order`; window w's run starts at first[w], and first ends with n; `id` is
// scratch). A scene
// has few distinct windows, so they are found by lookup and the gaussians placed by counting;
// past kManyWindows distinct ones, by a sort of every gaussian. Both give the same grouping.
void group_by_window(const GaussianBatch& b, std::vector<std::uint32_t>& order,
                     std::vector<std::uint32_t>& id, std::vector<WindowTable::Window>& windows,
                     std::vector<std::size_t>& first);

}  // namespace fourdgs::chunk_plan
