// A Delta Chunk's update group added into the composed population's bins (§11.7, §11.5), its
// differences read from their decoded columns or from their streams' kept byte planes.
// Internal to src/decode: the keyframe-delta composition (keyframe_composition.cpp) uses it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "fourdgs/scene.hpp"
#include "fourdgs/stream.hpp"

namespace fourdgs::detail {

// The update group's streams that carry bin differences (§11.7), with their columns' widths;
// rotation_index and rotation are restated absolutely instead (§11.5).
struct Difference {
    std::uint8_t id;
    std::vector<std::int32_t> ChunkBins::*col;
    int width;
};
inline constexpr Difference kDifferences[] = {
    {attr::position, &ChunkBins::position, 3},   {attr::scale, &ChunkBins::scale, 3},
    {attr::color, &ChunkBins::color, 3},         {attr::opacity, &ChunkBins::opacity, 1},
    {attr::motion, &ChunkBins::motion, 3},       {attr::mu_t, &ChunkBins::mu_t, 1},
    {attr::source_group, &ChunkBins::source_group, 1},
    {attr::source_index, &ChunkBins::source_index, 1},
    {attr::object_id, &ChunkBins::object_id, 1},
};

// Whether an update's difference streams may stay byte planes: not in the WebAssembly core,
// which is built under a size budget and decodes every stream into its column.
#if defined(__wasm__)
inline constexpr bool kDifferencePlanes = false;
#else
inline constexpr bool kDifferencePlanes = true;
#endif

// An update group (§5.18): its columns (`u`, with its ids), which difference streams it
// carries, and those kept as byte planes (width 0 where the column holds the values).
struct UpdateGroup {
    const ChunkBins& u;
    const std::array<bool, attr::kKnownCount>& present;
    const std::array<StreamPlanes, attr::kKnownCount>& planes;
};

// A composed bin outside i32 (§11.7): the attribute, the column of its row (0 for a width-1
// attribute), the update group's row and the bin, in 64 bits.
struct BinOverflow {
    std::uint8_t id;
    int width, column;
    std::size_t row;
    std::int64_t bin;
};

// Adds the present difference streams of the update group `g` to the rows `slots` of `bins`
// (row i of the group to row slots[i]), for rows [from, to) of the group, copying each composed
// row i to row i - from of `rows` when given (sized by the caller). Stops at the first bin
// outside i32 that a row-by-row composition meets, returning it, with the rows before it
// composed and its own row as it was.
std::optional<BinOverflow> add_differences(ChunkBins& bins, const UpdateGroup& g,
                                           std::span<const std::uint32_t> slots,
                                           std::size_t from, std::size_t to, ChunkBins* rows);

// Restates rotation_index and rotation (§11.5) of rows [from, to) of the update group `g` in
// rows `slots` of `bins`, copying them to row i - from of `rows` when given.
void restate_rotations(ChunkBins& bins, const UpdateGroup& g, std::span<const std::uint32_t> slots,
                       std::size_t from, std::size_t to, ChunkBins* rows);

}  // namespace fourdgs::detail
