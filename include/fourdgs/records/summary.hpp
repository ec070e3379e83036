// fourdgs/records/summary.hpp — the summary records (§4.5): Chunk Index (§5.8) with its
// keyframe-delta fields, Statistics (§5.12) and Summary Offset (§5.14).
//
// Part of records.hpp (the umbrella states the conventions every parser and writer follows).
#pragma once

#include "fourdgs/export.hpp"
#include "fourdgs/records/common.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// The values of chunk_kind (§5.8) and of delta_mode (§5.8, §5.18).
inline constexpr std::uint8_t kChunkKindKeyframe = 0, kChunkKindDelta = 1;
inline constexpr std::uint8_t kDeltaModeKeyframe = 0, kDeltaModeChained = 1;

// §5.8 the six fields appended for keyframe-delta.
struct KeyframeIndexFields {
    std::uint8_t chunk_kind = 0;  // 0 keyframe (Chunk), 1 delta (Delta Chunk)
    std::uint8_t delta_mode = 0;
    std::uint64_t reference_offset = 0;
    std::uint64_t keyframe_offset = 0;
    std::uint16_t depth = 0;
    std::uint64_t live_count = 0;
    friend bool operator==(const KeyframeIndexFields&, const KeyframeIndexFields&) = default;
};

// §5.8 Chunk Index (0x08). Every offset/length frames a whole record.
struct ChunkIndex {
    struct Band {
        std::uint8_t band = 0;
        std::uint64_t offset = 0, length = 0;
        friend bool operator==(const Band&, const Band&) = default;
    };
    double t0 = 0, t1 = 0;
    std::uint64_t chunk_offset = 0, chunk_length = 0;
    std::uint32_t gaussian_count = 0;
    std::vector<Band> bands;
    std::optional<KeyframeIndexFields> keyframe;  // present only when content remains for it
    friend bool operator==(const ChunkIndex&, const ChunkIndex&) = default;
};

// §5.12 Statistics (0x0C). Advisory (M036).
struct Statistics {
    std::uint64_t gaussian_count = 0;
    std::uint32_t chunk_count = 0;
    double duration_sec = 0;
    std::array<double, 6> aabb{};
    friend bool operator==(const Statistics&, const Statistics&) = default;
};

// §5.14 Summary Offset (0x0F).
struct SummaryOffset {
    std::uint8_t group_opcode = 0;
    std::uint64_t group_start = 0, group_length = 0;
    friend bool operator==(const SummaryOffset&, const SummaryOffset&) = default;
};

// Parsers.

// §5.8. band_count checked before allocating; band bytes outside 1..3 are invalid-sh-band. The
// six keyframe-delta fields are read when any content remains after the bands (all 28 bytes
// must then be there); chunk_kind and delta_mode must be 0 or 1 (invalid-chunk-kind,
// invalid-delta-mode). Agreement with the record it frames is the reader's check (M033).
inline Result<ChunkIndex> parse_chunk_index(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::chunk_index));
    Cursor c(r.content, r.content_offset(), record_name(op::chunk_index));
    ChunkIndex e;
    FOURDGS_ASSIGN(e.t0, c.f64("t0"));
    FOURDGS_ASSIGN(e.t1, c.f64("t1"));
    FOURDGS_ASSIGN(e.chunk_offset, c.u64("chunk_offset"));
    FOURDGS_ASSIGN(e.chunk_length, c.u64("chunk_length"));
    FOURDGS_ASSIGN(e.gaussian_count, c.u32("gaussian_count"));
    FOURDGS_ASSIGN(std::uint32_t band_count, c.u32("band_count"));
    FOURDGS_TRY(c.check_count("band_count", band_count, kIndexBandSize));
    e.bands.resize(band_count);
    for (std::uint32_t i = 0; i < band_count; ++i) {
        auto& b = e.bands[i];
        std::uint64_t at = c.offset();
        b.band = *c.u8("band");
        if (b.band < 1 || b.band > 3)
            return detail::malformed(refusal::kInvalidShBand, record_name(op::chunk_index),
                                     "bands[" + std::to_string(i) + "].band",
                                     std::to_string(b.band),
                                     "bands[" + std::to_string(i) + "].band is " +
                                         std::to_string(b.band) + ", must be 1..3",
                                     at);
        b.offset = *c.u64("offset");
        b.length = *c.u64("length");
    }
    // The six keyframe-delta fields (§5.8) when they are there; fewer bytes than they take are
    // some later appended field this reader does not know, ignored by content_length (M009).
    if (c.remaining() >= kKeyframeIndexFieldsSize) {
        KeyframeIndexFields k;
        std::uint64_t at = c.offset();
        k.chunk_kind = *c.u8("chunk_kind");
        if (k.chunk_kind > 1)
            return detail::malformed(refusal::kInvalidChunkKind, record_name(op::chunk_index),
                                     "chunk_kind", std::to_string(k.chunk_kind),
                                     "chunk_kind is " + std::to_string(k.chunk_kind) +
                                         ", must be 0 (keyframe) or 1 (delta)",
                                     at);
        at = c.offset();
        k.delta_mode = *c.u8("delta_mode");
        if (k.delta_mode > 1)
            return detail::malformed(refusal::kInvalidDeltaMode, record_name(op::chunk_index),
                                     "delta_mode", std::to_string(k.delta_mode),
                                     "delta_mode is " + std::to_string(k.delta_mode) +
                                         ", must be 0 (keyframe-referenced) or 1 (chained)",
                                     at);
        k.reference_offset = *c.u64("reference_offset");
        k.keyframe_offset = *c.u64("keyframe_offset");
        k.depth = *c.u16("depth");
        k.live_count = *c.u64("live_count");
        e.keyframe = k;
    }
    return e;
}

// §5.12. Advisory; nothing is checked against the chunks here.
inline Result<Statistics> parse_statistics(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::statistics));
    Cursor c(r.content, r.content_offset(), record_name(op::statistics));
    Statistics s;
    FOURDGS_ASSIGN(s.gaussian_count, c.u64("gaussian_count"));
    FOURDGS_ASSIGN(s.chunk_count, c.u32("chunk_count"));
    FOURDGS_ASSIGN(s.duration_sec, c.f64("duration_sec"));
    FOURDGS_TRY(detail::read_array(c, {"aabb"}, s.aabb.data(), 6, false));
    return s;
}

// §5.14.
inline Result<SummaryOffset> parse_summary_offset(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::summary_offset));
    Cursor c(r.content, r.content_offset(), record_name(op::summary_offset));
    SummaryOffset s;
    FOURDGS_ASSIGN(s.group_opcode, c.u8("group_opcode"));
    FOURDGS_ASSIGN(s.group_start, c.u64("group_start"));
    FOURDGS_ASSIGN(s.group_length, c.u64("group_length"));
    return s;
}

// Writers.

inline void write(ByteWriter& out, const ChunkIndex& e) {
    std::size_t at = detail::begin_record(out, op::chunk_index);
    out.f64(e.t0);
    out.f64(e.t1);
    out.u64(e.chunk_offset);
    out.u64(e.chunk_length);
    out.u32(e.gaussian_count);
    out.u32(static_cast<std::uint32_t>(e.bands.size()));
    for (const auto& b : e.bands) {
        out.u8(b.band);
        out.u64(b.offset);
        out.u64(b.length);
    }
    if (e.keyframe) {
        const auto& k = *e.keyframe;
        out.u8(k.chunk_kind);
        out.u8(k.delta_mode);
        out.u64(k.reference_offset);
        out.u64(k.keyframe_offset);
        out.u16(k.depth);
        out.u64(k.live_count);
    }
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const Statistics& s) {
    std::size_t at = detail::begin_record(out, op::statistics);
    out.u64(s.gaussian_count);
    out.u32(s.chunk_count);
    out.f64(s.duration_sec);
    detail::put_array(out, s.aabb);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const SummaryOffset& s) {
    std::size_t at = detail::begin_record(out, op::summary_offset);
    out.u8(s.group_opcode);
    out.u64(s.group_start);
    out.u64(s.group_length);
    detail::end_record(out, at);
}

}  // namespace fourdgs
FOURDGS_PUBLIC_END
