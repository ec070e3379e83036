// fourdgs/detail/chunk_walk.hpp — a file's records front to back, each state chunk handed out
// with the SH band records that follow it: the walk both streaming front-ends take (the
// gaussian-birth StreamingReader and the keyframe-delta stream), and the indexed reader's scan.
//
// The walk reads records through a RecordStream (detail/record_stream.hpp), feeds every content
// and summary record to a SceneBuilder (front_matter.hpp), checks each Chunk Index entry against
// the chunk it frames as the summary arrives (detail/index_check.hpp), and the Footer and the
// trailing magic at the end. A front-end on top only decodes (or composes) the chunks.
//
// Thread safety: a walk is used by one thread at a time.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "fourdgs/decode.hpp"
#include "fourdgs/detail/chunk_bands.hpp"
#include "fourdgs/detail/index_check.hpp"
#include "fourdgs/detail/record_stream.hpp"
#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/scene.hpp"

FOURDGS_DETAIL_BEGIN
namespace fourdgs::detail {

// Whether the record at `stream`'s position (the first, just after the magic) is a Header that
// declares temporal_model keyframe-delta (§5.1): the one probe open_scene and the indexed reader
// make to choose the keyframe-delta front-end. Anything else (another record, a cut, a record
// over the limit, a Header that does not parse under `options`) is false, and the gaussian-birth
// walk then refuses the file by its own rule; a failing read (io) is passed on.
Result<bool> declares_keyframe_delta(RecordStream& stream, ReaderOptions options);

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
    // missing-keyframe-index-fields as the summary arrives, the Footer's (record_stream.hpp);
    // a truncation or a read failure ends the walk and is kept in truncation() (returned again
    // by every later call).
    Result<bool> next_chunk(RecordView& record);
    // The SH band records after the chunk next_chunk() returned. A truncation while reading them
    // is not an error here: the bands before the cut come back (whole counts them) and
    // truncation() is set. Refusals: a non-truncation read failure, ChunkBands::add's.
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

}  // namespace fourdgs::detail
FOURDGS_DETAIL_END
