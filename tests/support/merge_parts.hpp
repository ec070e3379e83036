// tests/support/merge_parts.hpp — merge_scenes over parts held in memory, for the merge tests.
#pragma once

#include <cstdint>
#include <vector>

#include "fourdgs/io.hpp"
#include "fourdgs/tools/merge.hpp"

namespace fourdgs::test {

// The parts merged into a new byte vector, or merge_scenes' refusal.
inline Result<std::vector<std::uint8_t>> merge_in_memory(
    const std::vector<std::vector<std::uint8_t>>& parts, const MergeOptions& options = {},
    MergeReport* report = nullptr) {
    std::vector<MemorySource> sources;
    sources.reserve(parts.size());
    for (const auto& p : parts) sources.emplace_back(p);
    std::vector<ByteSource*> ptrs;
    for (auto& s : sources) ptrs.push_back(&s);
    MemorySink sink;
    FOURDGS_TRY(merge_scenes(ptrs, options, sink, report));
    return sink.take();
}

}  // namespace fourdgs::test
