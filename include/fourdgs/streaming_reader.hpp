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
// ChunkWalk is that walk, shared by both streaming front-ends (this gaussian-birth reader and the
// keyframe-delta stream): records through a RecordStream (detail/record_stream.hpp), every content and
// summary record into a SceneBuilder (front_matter.hpp), each state chunk handed out with the SH
// band records that follow it, each Chunk Index entry checked against the chunk it frames as the
// summary arrives (detail/index_check.hpp), the Footer and the trailing magic at the end. A front-end
// on top only decodes (or composes) the chunks.
//
// Thread safety: a reader or walk is used by one thread at a time.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "fourdgs/decode.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/detail/index_check.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/detail/record_stream.hpp"
#include "fourdgs/scene.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// The SH Band Stream records that follow a chunk (§5.7), as the walk found them.
struct ChunkBands {
    std::vector<ShBandRecord> bands;            // in file order; views the walk's buffers
    std::vector<ChunkIndex::Band> ranges;       // where each of those records lies
    // Bands 1..whole arrived whole and in order: all of them, unless the data was cut in or just
    // after them (then the walk's truncation() is set, M100).
    int whole = 3;
};

class ChunkWalk {
public:
    // The temporal model the walk reads: gaussian-birth walks Chunk records and refuses a Delta
    // Chunk (§5.18); keyframe-delta walks both as state chunks, refuses any other model right
    // after the Header (§5.1), and requires the index's keyframe-delta fields (§5.8).
    enum class Model : std::uint8_t { gaussian_birth, keyframe_delta };

    ChunkWalk(ByteSource& source, const ReaderOptions& options, Model model)
        : options_(options), model_(model), builder_(options_),
          stream_(source, options.max_record_bytes) {}

    // The magic and every record before the first state chunk (the front matter). Refusals:
    // magic-mismatch, unsupported-major-version, and any the walk meets (see next_chunk).
    Status open();

    // Reads up to the next state chunk, feeding every record before it to the SceneBuilder, and
    // returns it in `record` (views the walk's buffer until the next call): true, or false at
    // the clean end of the file (after the Footer and trailing magic). Refusals: the builder's,
    // delta-chunk-in-gaussian-birth, orphan-sh-band, index-record-mismatch and
    // missing-keyframe-index-fields as the summary arrives, the Footer's (detail/record_stream.hpp); a
    // truncation or a read failure ends the walk and is kept in truncation() (returned again by
    // every later call).
    Result<bool> next_chunk(RecordView& record);
    // The SH band records after the chunk next_chunk() returned. A truncation while reading them
    // is not an error here: the bands before the cut come back (whole counts them) and
    // truncation() is set. Refusals: a non-truncation read failure, parse_sh_band's.
    Result<ChunkBands> read_bands();

    // What the front-end made of the chunk next_chunk() returned (its record's fields, its
    // bands, and, composing, its population), for the index entries that arrive later (§5.8).
    void remember(FramedChunk chunk) { chunks_.push_back(std::move(chunk)); }
    // Every chunk remembered, in file order (so sorted by offset).
    const std::vector<FramedChunk>& chunks() const noexcept { return chunks_; }

    const SceneInfo& scene() const noexcept { return builder_.scene(); }
    bool finished() const noexcept { return finished_; }
    const std::optional<Error>& truncation() const noexcept { return truncation_; }
    RecordStream& stream() noexcept { return stream_; }
    const RecordStream& stream() const noexcept { return stream_; }

private:
    struct Slot {
        bool valid = false;
        HeldRecord held;
    };
    Result<bool> advance();           // reads until a state chunk is held in chunk_
    Status absorb(const RecordView& r);  // a record other than a state chunk
    Status every_chunk_indexed() const;  // at the Footer
    bool is_state_chunk(std::uint8_t opcode) const noexcept;

    ReaderOptions options_;
    Model model_;
    SceneBuilder builder_;
    RecordStream stream_;
    bool opened_ = false, finished_ = false;
    std::optional<Error> truncation_;
    Slot lookahead_, chunk_;
    std::array<HeldRecord, 3> band_slots_;
    std::vector<FramedChunk> chunks_;
    ChunksNamed named_;  // which of chunks_ the index entries name (§5.8: each by exactly one)
};

class StreamingReader {
public:
    explicit StreamingReader(ByteSource& source, ReaderOptions options = {})
        : options_(options), walk_(source, options_, ChunkWalk::Model::gaussian_birth) {}

    // Reads the magic and every record up to the first Chunk (the front matter). Refusals:
    // magic-mismatch, unsupported-major-version, header-not-first, duplicate-*, the temporal
    // model and scheme gates, any record parser's refusal, truncated.
    Status open() { return walk_.open(); }

    // The scene as read so far (front matter after open(); the summary after the end).
    const SceneInfo& scene() const noexcept { return walk_.scene(); }

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
    // Whether the last chunk next_chunk(GaussianBlock&) decoded carried an object_id stream
    // (absent and all-zero decode alike, §6.6, so the block alone cannot say).
    bool last_chunk_object_id_stream() const noexcept { return bins_.has_object_id; }

    bool finished() const noexcept { return walk_.finished(); }
    const std::optional<Error>& truncation() const noexcept { return walk_.truncation(); }
    // Every record walked so far, in file order (when enabled before the walk).
    void enable_record_log(bool on) noexcept { walk_.stream().enable_log(on); }
    const std::vector<RecordEntry>& record_log() const noexcept { return walk_.stream().log(); }

private:
    ReaderOptions options_;
    ChunkWalk walk_;
    ChunkRecord chunk_;
    std::uint64_t chunk_offset_ = 0;
    ChunkBins bins_;
    DecodeScratch scratch_;
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
FOURDGS_PUBLIC_END
