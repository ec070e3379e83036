// fourdgs/detail/file_assembler.hpp — the file around already-encoded chunks (§4): the magic and the
// records ahead of the chunks, each chunk's records, then the summary (§4.5: a Chunk Index entry
// per chunk, Statistics, a Summary Offset), its CRC, the Footer (§5.2) and the trailing magic.
//
// Both writers (writer.hpp, keyframe_writer.hpp) encode chunks and hand the bytes to a
// FileAssembler; so can a tool that joins or rewrites files without re-encoding gaussian streams:
// the assembler encodes nothing itself. It counts the bytes it passes to the sink, so it knows
// where each chunk and SH Band record lands, and writes the Chunk Index from that — the caller
// never computes an offset it could get wrong. A keyframe-delta chunk carries the six appended
// index fields (§5.8); the assembler fills in a keyframe's own keyframe_offset, and a delta's
// reference and keyframe offsets are the caller's (position() before add_chunk() is the offset a
// chunk will have).
//
// The layout it writes: [magic, Header, Quantization, Window Table] (begin), whatever records the
// caller puts (content records, extras — whole records, written as given), the chunks in the
// order added, then at finish(): the Chunk Index entries (when SummaryOptions::index) as one
// group, Statistics (when ::statistics), a Summary Offset for the index group (when ::index,
// ::summary_offset and there is at least one chunk), the Footer — summary_start = the first
// summary byte (0 without an index), summary_offset_start, summary_crc = CRC-32 of every summary
// byte (0 without an index or without ::crc) — and the trailing magic. Then the sink is flushed.
// The sink receives the file from its first byte: offsets count from the first byte written.
//
// Thread safety: one assembler is used by one thread at a time.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/wire.hpp"

FOURDGS_DETAIL_BEGIN
namespace fourdgs::detail {

// The optional parts of the summary (§4.5); WriterOptions carries the same four switches.
struct SummaryOptions {
    bool index = true;           // Chunk Index entries; without them summary_start is 0 (M016)
    bool crc = true;             // summary_crc over the summary (only with an index)
    bool statistics = true;      // a Statistics record
    bool summary_offset = true;  // a Summary Offset naming the index group (only with an index)
};

// One chunk's records as they go into the file: the Chunk (or Delta Chunk) record, then the SH
// Band records of bands 1..bands, back to back in `bytes` (borrowed for the add_chunk call).
// chunk_length + band_length[0..bands) must be bytes.size(). t0, t1 and gaussian_count are the
// index entry's (§5.8: for a Delta Chunk, the sum of its three group counts).
struct ChunkRecords {
    Bytes bytes;
    std::uint64_t chunk_length = 0;
    std::array<std::uint64_t, 3> band_length{};
    int bands = 0;  // 0..3
    double t0 = 0, t1 = 0;
    std::uint32_t gaussian_count = 0;
    std::optional<KeyframeIndexFields> keyframe;  // keyframe-delta files only
};

class FileAssembler {
public:
    // `sink` must outlive the assembler.
    explicit FileAssembler(ByteSink& sink) : sink_(&sink) {}

    // Writes the magic, then the Header, Quantization and Window Table records (§4).
    Status begin(const Header& header, const Quantization& quantization,
                 const WindowTable& windows);

    // Writes whole records as given (content records, extras, private records).
    Status put(Bytes records);
    // The same from a ByteWriter, which is cleared afterwards (so it can be reused).
    Status put(ByteWriter& records);

    // Writes one chunk's records and remembers its index entry: chunk_offset = position() before
    // the call, the chunk's length, each band's offset and length, and the keyframe fields (a
    // keyframe's keyframe_offset set to its own offset). Refusal input-size-mismatch
    // (invalid_argument) when the lengths do not add up to bytes.size() or bands is outside 0..3;
    // writer-finished after finish(); the sink's io errors.
    Status add_chunk(const ChunkRecords& chunk);

    // Writes the summary, the Footer and the trailing magic as described above, then flushes.
    // `statistics` is written as given. Refusal writer-finished when called twice.
    Status finish(const SummaryOptions& options, const Statistics& statistics);

    // Bytes written so far: the offset of the next record.
    std::uint64_t position() const noexcept { return position_; }
    std::size_t chunk_count() const noexcept { return index_.size(); }
    // The index entries of the chunks added so far, in file order.
    const std::vector<ChunkIndex>& index() const noexcept { return index_; }

private:
    Status write(Bytes bytes);

    ByteSink* sink_;
    std::uint64_t position_ = 0;
    std::vector<ChunkIndex> index_;
    bool finished_ = false;
};

}  // namespace fourdgs::detail
FOURDGS_DETAIL_END
