// A records block's streams decoded as decode_stream_block does (fourdgs/decode.hpp), some of
// them kept as their inflated byte planes instead. Internal to src/decode: decode.cpp defines
// it, the keyframe-delta composition uses it for a delta's update group.
#pragma once

#include <array>
#include <cstdint>

#include "fourdgs/error.hpp"
#include "fourdgs/reader_options.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/stream.hpp"

namespace fourdgs::detail {

// decode_stream_block, but each raw-mode stream that `keep` flags is only inflated (with
// decode_stream's refusals: a raw stream's symbols cannot be refused), into planes[id], its
// column emptied. Every other entry of `planes` has width 0.
Status decode_stream_block_keeping(Bytes block, std::uint64_t block_offset, std::uint32_t count,
                                   const char* what, const DecodeLimits& limits, ChunkBins& out,
                                   std::array<bool, attr::kKnownCount>& seen,
                                   StreamScratch& scratch,
                                   const std::array<bool, attr::kKnownCount>& keep,
                                   std::array<StreamPlanes, attr::kKnownCount>& planes);

}  // namespace fourdgs::detail
