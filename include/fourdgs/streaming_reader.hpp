// fourdgs/streaming_reader.hpp — front to back, from any byte source.
//
// Works on a pipe, a file or memory, and on a truncated file. It holds at most one chunk (with
// its SH band records and the one record read ahead of it) plus the summary. It verifies
// summary_crc at the Footer (§4.5: the summary is the contiguous run of Chunk Index, Statistics
// and Summary Offset records before the Footer, retained as it passes). On a truncated file it
// returns every complete record before the cut — a chunk whose trailing SH bands were cut comes
// back with the whole bands that survived (M100) — and then reports the truncation; it never
// interprets a partial record (M132).
//
// Thread safety: one reader is used by one thread at a time.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "fourdgs/decode.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/scene.hpp"

namespace fourdgs {

// One record as walked: its opcode, whole-record offset and length (for dumps and validators).
struct RecordEntry {
    std::uint8_t opcode = 0;
    std::uint64_t offset = 0, length = 0;
};

class StreamingReader {
public:
    explicit StreamingReader(ByteSource& source, ReaderOptions options = {})
        : source_(&source), options_(options), builder_(options) {}

    // Reads the magic and every record up to the first Chunk (the front matter). Refusals:
    // magic-mismatch, unsupported-major-version, header-not-first, duplicate-*, the temporal
    // model and scheme gates, any record parser's refusal, truncated.
    Status open();

    // The scene as read so far (front matter after open(); the summary after the end).
    const SceneInfo& scene() const noexcept { return builder_.scene(); }

    // Decodes the next chunk into `out` (replacing its contents). Returns true when a chunk was
    // produced and false at the clean end of the file (after the Footer and trailing magic). On
    // a truncated file, the chunks before the cut come back one by one and then this returns an
    // Error of kind truncated (refusal "truncated") naming the offset; truncation() keeps it.
    Result<bool> next_chunk(GaussianBlock& out);

    // The same, stopping at the integer bins (the keyframe-delta composer's input).
    Result<bool> next_chunk_bins(ChunkBins& bins);

    // The last chunk record read by next_chunk / next_chunk_bins (t0, t1, level, count).
    const ChunkRecord& last_chunk() const noexcept { return chunk_; }
    std::uint64_t last_chunk_offset() const noexcept { return chunk_offset_; }

    bool finished() const noexcept { return finished_; }
    const std::optional<Error>& truncation() const noexcept { return truncation_; }
    // Every record walked so far, in file order (when options ask for it; see record_log()).
    void enable_record_log(bool on) noexcept { log_records_ = on; }
    const std::vector<RecordEntry>& record_log() const noexcept { return log_; }

private:
    struct Pending {
        bool valid = false;
        RecordView view;
        std::vector<std::uint8_t> bytes;  // header + content
    };

    // Reads the next whole record into `slot`. Returns false at the clean end (no bytes left),
    // a truncated error when a record is cut.
    Result<bool> read_record(Pending& slot);
    Status absorb(const Pending& rec);  // a non-chunk record: builder, summary CRC, footer
    Status finish_footer(const Pending& rec);
    Result<bool> advance_to_chunk();     // reads until a Chunk is pending in chunk_slot_

    // A chunk as it passed, for checking the index that follows (index-record-mismatch).
    struct SeenChunk {
        std::uint64_t offset = 0, length = 0;
        double t0 = 0, t1 = 0;
        std::uint32_t count = 0;
        std::vector<ChunkIndex::Band> bands;
    };
    Status check_index_entry(const ChunkIndex& entry, std::uint64_t entry_offset) const;

    ByteSource* source_;
    ReaderOptions options_;
    SceneBuilder builder_;
    std::uint64_t position_ = 0;
    bool opened_ = false, finished_ = false;
    std::optional<Error> truncation_;

    Pending lookahead_;
    Pending chunk_slot_;
    std::array<Pending, 3> band_slots_;
    ChunkRecord chunk_;
    std::uint64_t chunk_offset_ = 0;
    std::vector<ShBandRecord> bands_;
    std::vector<SeenChunk> seen_chunks_;  // in file order, so sorted by offset
    ChunkBins bins_;
    DecodeScratch scratch_;

    SummaryRun summary_run_;  // the trailing summary records, for summary_crc (§4.5)

    bool log_records_ = false;
    std::vector<RecordEntry> log_;
};

// Everything a file holds, read front to back: the scene, every gaussian (chunks in file
// order), and the truncation if the file was cut (the gaussians before the cut are kept).
struct LoadedScene {
    SceneInfo info;
    GaussianBlock gaussians;
    std::optional<Error> truncation;
};

// Reads a whole file through the streaming path. Refusals end the read with an Error; a
// truncation does not (it is reported in LoadedScene::truncation).
Result<LoadedScene> read_streaming(ByteSource& source, const ReaderOptions& options = {});

}  // namespace fourdgs
