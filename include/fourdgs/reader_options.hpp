// fourdgs/reader_options.hpp — what a reader is asked to do and how far it may go: the limits of
// one chunk's decode (decode.hpp) and of a whole read (every front-end, and the SceneBuilder of
// front_matter.hpp, which keeps payloads and admits keyframe-delta files as these say).
//
// Plain options, apart from the decode itself, so scene assembly can hold them without the
// decode layer.
#pragma once

#include <cstdint>

#include "fourdgs/export.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// Resource limits for one chunk. A chunk's `count` cannot be checked against the bytes that
// remain (a constant stream holds any count in a few bytes), so it is checked against these.
struct DecodeLimits {
    std::uint32_t max_gaussians_per_chunk = 1u << 24;          // 16.7 M
    std::uint64_t max_decompressed_bytes = std::uint64_t{1} << 32;  // per block or stream
};

struct ChunkDecodeOptions {
    int max_sh_degree = 3;  // decode SH bands 1..min(this, Header.sh_degree); whole bands only
    DecodeLimits limits;
};

struct ReaderOptions {
    ChunkDecodeOptions decode;               // SH degree cap and per-chunk limits
    bool keep_payloads = false;              // keep attachment and audio payload bytes in memory
    std::uint64_t max_record_bytes = std::uint64_t{1} << 32;  // one record's content
    std::uint64_t max_summary_bytes = std::uint64_t{1} << 30;
    bool verify_summary_crc = true;
    // §5.1 gate: a keyframe-delta file passes the Header check only when this is set. Only the
    // keyframe-delta front-end (keyframe_delta.hpp) sets it; the gaussian-birth readers leave it
    // false and refuse such a file (a gaussian-birth decode of it would be a subset, M015).
    bool accept_keyframe_delta = false;
};

}  // namespace fourdgs
FOURDGS_PUBLIC_END
