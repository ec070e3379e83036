// fourdgs/records/chunk.hpp — the gaussian data: Chunk (§5.5), SH Band Stream (§5.7) and Delta
// Chunk (§5.18) with its three groups. The parsers frame the blocks and streams; decoding them is
// decode.hpp's.
//
// Part of records.hpp (the umbrella states the conventions every parser and writer follows).
#pragma once

#include <cstring>
#include <span>

#include "fourdgs/export.hpp"
#include "fourdgs/records/common.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// §5.5 Chunk (0x05). `records` views the (possibly compressed) block; the decode layer checks it
// against compression and uncompressed_size.
struct ChunkRecord {
    double t0 = 0, t1 = 0;
    std::uint32_t level = 0;
    std::uint32_t count = 0;
    std::string compression;
    std::uint64_t uncompressed_size = 0;
    Bytes records;                    // views the RecordView's content
    std::uint64_t records_offset = 0;  // absolute offset of the block's first byte
};

// §5.7 SH Band Stream (0x07). `stream` views exactly the bare §5.6 stream (17-byte header plus
// payload_length bytes), which the stream layer decodes; it carries attribute_id 7 and MUST NOT be
// dispatched on it (M032).
struct ShBandRecord {
    std::uint8_t band = 0;  // 1..3
    Bytes stream;           // views the RecordView's content
    std::uint64_t stream_offset = 0;
};

// §5.18 Delta Chunk (0x10). `records` decompresses to the three groups (split_delta_groups).
struct DeltaChunk {
    double t0 = 0, t1 = 0;
    std::uint32_t level = 0;
    std::uint8_t delta_mode = 0;  // 0 keyframe-referenced, 1 chained
    std::uint64_t reference_offset = 0;
    std::uint64_t keyframe_offset = 0;
    std::uint16_t depth = 0;
    std::uint32_t update_count = 0, birth_count = 0, death_count = 0;
    std::string compression;
    std::uint64_t uncompressed_size = 0;
    Bytes records;                    // views the RecordView's content
    std::uint64_t records_offset = 0;
};

// The three bytes-framed sub-blocks of a decompressed Delta Chunk block (§5.18), each a run of
// bare §5.6 streams. The views point into the span given to split_delta_groups.
struct DeltaGroups {
    Bytes updates, births, deaths;
    std::uint64_t updates_offset = 0, births_offset = 0, deaths_offset = 0;
};

namespace detail {

// §5.6 bare stream header, as far as the SH band parser frames it: five u8, u32 element_count,
// u64 payload_length = 17 bytes (stream.hpp owns the public constant).
inline constexpr std::size_t kBareStreamHeaderSize = 17;
inline constexpr std::size_t kBareStreamPayloadLengthAt = 9;
static_assert(kBareStreamHeaderSize == 5 + 4 + 8);

}  // namespace detail

// Parsers.

// §5.5. Views the records block; compression and uncompressed_size are honoured and checked by
// the decode layer.
inline Result<ChunkRecord> parse_chunk(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::chunk));
    Cursor c(r.content, r.content_offset(), record_name(op::chunk));
    ChunkRecord ch;
    FOURDGS_ASSIGN(ch.t0, c.f64("t0"));
    FOURDGS_ASSIGN(ch.t1, c.f64("t1"));
    FOURDGS_ASSIGN(ch.level, c.u32("level"));
    FOURDGS_ASSIGN(ch.count, c.u32("count"));
    FOURDGS_ASSIGN(ch.compression, c.string("compression"));
    FOURDGS_ASSIGN(ch.uncompressed_size, c.u64("uncompressed_size"));
    FOURDGS_TRY(detail::read_bytes_view(c, "records", ch.records, ch.records_offset));
    return ch;
}

// §5.7. Refuses a band outside 1..3 (invalid-sh-band). Frames the inner stream by its 17-byte
// header's payload_length without decoding it; a stream that runs past the record is
// record-too-short.
inline Result<ShBandRecord> parse_sh_band(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::sh_band));
    Cursor c(r.content, r.content_offset(), record_name(op::sh_band));
    ShBandRecord s;
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(s.band, c.u8("band"));
    if (s.band < 1 || s.band > 3)
        return detail::malformed(refusal::kInvalidShBand, record_name(op::sh_band), "band",
                                 std::to_string(s.band),
                                 "band is " + std::to_string(s.band) + ", must be 1..3", at);
    s.stream_offset = c.offset();
    FOURDGS_TRY(c.need("stream header", detail::kBareStreamHeaderSize));
    const std::uint64_t payload_length =
        read_le64(c.rest().data() + detail::kBareStreamPayloadLengthAt);
    if (payload_length > c.remaining() - detail::kBareStreamHeaderSize)
        return c.short_error("stream payload", detail::kBareStreamHeaderSize + payload_length);
    FOURDGS_ASSIGN(s.stream, c.take("stream", detail::kBareStreamHeaderSize + payload_length));
    return s;
}

// §5.18. Refuses a delta_mode other than 0/1 (invalid-delta-mode). References (backwards only,
// same level, M096/M097) and the codec are checked by the keyframe-delta layer.
inline Result<DeltaChunk> parse_delta_chunk(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::delta_chunk));
    Cursor c(r.content, r.content_offset(), record_name(op::delta_chunk));
    DeltaChunk d;
    FOURDGS_ASSIGN(d.t0, c.f64("t0"));
    FOURDGS_ASSIGN(d.t1, c.f64("t1"));
    FOURDGS_ASSIGN(d.level, c.u32("level"));
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(d.delta_mode, c.u8("delta_mode"));
    if (d.delta_mode > 1)
        return detail::malformed(refusal::kInvalidDeltaMode, record_name(op::delta_chunk),
                                 "delta_mode", std::to_string(d.delta_mode),
                                 "delta_mode is " + std::to_string(d.delta_mode) +
                                     ", must be 0 (keyframe-referenced) or 1 (chained)",
                                 at);
    FOURDGS_ASSIGN(d.reference_offset, c.u64("reference_offset"));
    FOURDGS_ASSIGN(d.keyframe_offset, c.u64("keyframe_offset"));
    FOURDGS_ASSIGN(d.depth, c.u16("depth"));
    FOURDGS_ASSIGN(d.update_count, c.u32("update_count"));
    FOURDGS_ASSIGN(d.birth_count, c.u32("birth_count"));
    FOURDGS_ASSIGN(d.death_count, c.u32("death_count"));
    FOURDGS_ASSIGN(d.compression, c.string("compression"));
    FOURDGS_ASSIGN(d.uncompressed_size, c.u64("uncompressed_size"));
    FOURDGS_TRY(detail::read_bytes_view(c, "records", d.records, d.records_offset));
    return d;
}

// §5.18: splits a decompressed Delta Chunk block into `bytes updates; bytes births; bytes
// deaths`. `base_offset` is reported in errors and offsets: the block's file offset when it is
// stored uncompressed (records_offset), otherwise whatever position the caller wants named. A
// sub-block running past the block is record-too-short; bytes after the deaths block are
// malformed/delta-block-trailing-bytes (the block is exactly three sub-blocks; a stream there
// would belong to no group, M095). Views point into `decompressed`.
inline Result<DeltaGroups> split_delta_groups(Bytes decompressed, std::uint64_t base_offset) {
    Cursor c(decompressed, base_offset, "Delta Chunk records", record_name(op::delta_chunk));
    DeltaGroups g;
    FOURDGS_TRY(detail::read_bytes_view(c, "updates", g.updates, g.updates_offset));
    FOURDGS_TRY(detail::read_bytes_view(c, "births", g.births, g.births_offset));
    FOURDGS_TRY(detail::read_bytes_view(c, "deaths", g.deaths, g.deaths_offset));
    if (!c.at_end())
        return detail::malformed(refusal::kDeltaBlockTrailingBytes, "Delta Chunk records", "",
                                 std::to_string(c.remaining()),
                                 std::to_string(c.remaining()) +
                                     " bytes follow the deaths sub-block; the block holds "
                                     "exactly updates, births and deaths",
                                 c.offset())
            .about("Delta Chunk.records", std::to_string(c.remaining()));
    return g;
}

// Writers.

inline void write(ByteWriter& out, const ChunkRecord& ch) {
    std::size_t at = detail::begin_record(out, op::chunk);
    out.f64(ch.t0);
    out.f64(ch.t1);
    out.u32(ch.level);
    out.u32(ch.count);
    out.string(ch.compression);
    out.u64(ch.uncompressed_size);
    out.bytes(ch.records);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const ShBandRecord& s) {
    std::size_t at = detail::begin_record(out, op::sh_band);
    out.u8(s.band);
    out.raw(s.stream);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const DeltaChunk& d) {
    std::size_t at = detail::begin_record(out, op::delta_chunk);
    out.f64(d.t0);
    out.f64(d.t1);
    out.u32(d.level);
    out.u8(d.delta_mode);
    out.u64(d.reference_offset);
    out.u64(d.keyframe_offset);
    out.u16(d.depth);
    out.u32(d.update_count);
    out.u32(d.birth_count);
    out.u32(d.death_count);
    out.string(d.compression);
    out.u64(d.uncompressed_size);
    out.bytes(d.records);
    detail::end_record(out, at);
}

// Appends the uncompressed Delta Chunk block: the three sub-blocks as §2 bytes fields.
inline void write_delta_groups(ByteWriter& out, Bytes updates, Bytes births, Bytes deaths) {
    out.bytes(updates);
    out.bytes(births);
    out.bytes(deaths);
}


// In-place edits of a whole framed record (header and content) that keep its layout: for a caller
// that copies records as they are and changes one fixed-position field (a merge that renumbers
// references, or splices a stream into a stored block). The positions are written here, beside
// the parsers and writers, and nowhere else.

// §5.18: a Delta Chunk's reference_offset and keyframe_offset, which follow t0, t1, level and
// delta_mode.
inline void patch_delta_references(std::span<std::uint8_t> record, std::uint64_t reference_offset,
                                   std::uint64_t keyframe_offset) {
    constexpr std::size_t at = kRecordHeaderSize + 8 + 8 + 4 + 1;
    std::memcpy(record.data() + at, &reference_offset, 8);
    std::memcpy(record.data() + at + 8, &keyframe_offset, 8);
}

// §4.2, §5.5: a Chunk whose block is stored uncompressed (compression "") and whose record was
// resized: content_length from the record's size, and the block's uncompressed_size and bytes
// length (the two u64 before the block, which starts at byte `block_at` of the record and now
// runs to its end).
inline void patch_stored_chunk_lengths(std::span<std::uint8_t> record, std::size_t block_at) {
    const std::uint64_t content_length = record.size() - kRecordHeaderSize;
    const std::uint64_t block = record.size() - block_at;
    std::memcpy(record.data() + 1, &content_length, 8);
    std::memcpy(record.data() + block_at - 16, &block, 8);  // uncompressed_size
    std::memcpy(record.data() + block_at - 8, &block, 8);   // the records' bytes length
}

}  // namespace fourdgs
FOURDGS_PUBLIC_END
