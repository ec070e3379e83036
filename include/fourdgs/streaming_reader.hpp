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
// The walk itself, shared with the keyframe-delta stream and the indexed reader's scan, is the
// ChunkWalk (detail/chunk_walk.hpp); a StreamingReader holds one and decodes the chunks it hands
// out.
//
// Thread safety: a reader is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "fourdgs/decode.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/record_walk.hpp"
#include "fourdgs/scene.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

namespace detail {
class ChunkWalk;
}

class StreamingReader {
public:
    explicit StreamingReader(ByteSource& source, ReaderOptions options = {});
    ~StreamingReader();
    StreamingReader(StreamingReader&&) noexcept;
    StreamingReader& operator=(StreamingReader&&) noexcept;

    // Reads the magic and every record up to the first Chunk (the front matter). Refusals:
    // magic-mismatch, unsupported-major-version, header-not-first, duplicate-*, the temporal
    // model and scheme gates, any record parser's refusal, truncated.
    Status open();

    // The scene as read so far (front matter after open(); the summary after the end).
    const SceneInfo& scene() const noexcept;

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

    bool finished() const noexcept;
    const std::optional<Error>& truncation() const noexcept;
    // Every record walked so far, in file order (when enabled before the walk).
    void enable_record_log(bool on) noexcept;
    const std::vector<RecordEntry>& record_log() const noexcept;

private:
    ReaderOptions options_;
    std::unique_ptr<detail::ChunkWalk> walk_;  // the records and the scene (detail/chunk_walk.hpp)
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
