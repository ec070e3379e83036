// fourdgs/indexed_reader.hpp — footer → summary → only the byte ranges an instant needs (§8).
//
// open() reads the 37-byte tail (§5.2), the summary (bounded by ReaderOptions::max_summary_bytes
// and checked against summary_crc when non-zero), and the front matter before the first chunk,
// framing payload records (attachments, audio data) without reading their payloads. Records are
// framed by a RecordStream confined to the range being walked, fetched by a RangeFetcher (both
// detail/record_stream.hpp, held behind a pointer: not API), and assembled by a SceneBuilder
// (front_matter.hpp).
//
// The sequential scan. A file whose summary_start is 0 has no index and is read sequentially
// (M016); so is a file whose tail, Footer, summary or front matter cannot be used as they stand
// (the tail is not magic + Footer, bytes follow the trailing magic, summary_start is out of
// range, the summary fails its CRC or does not parse, an entry lies outside the file...). The
// scan is the streaming path's walk (ChunkWalk, detail/chunk_walk.hpp): every record front to
// back, each chunk and its bands framed, parsed and decoded as the streaming reader does (the
// result dropped; keyframe-delta states are composed by KeyframeDeltaReader::open), the index
// checked against the chunks, the Footer and trailing magic at the end. So a damaged summary loses no intact content
// (§4.5: summary_crc_verified stays false), and a damaged file is refused with the first fault in
// file order, as the streaming path refuses it. The index is the file's when it has one, else
// one built from the chunks (index_built_by_scan). read_by_scan() and scan_cause() say so.
//
// chunks_for(t) answers from the index alone. decode_chunk() fetches one chunk's record and the
// SH band records up to the configured degree — never a band above it — and decodes them.
// Several threads may call decode_chunk() on one reader at once, each with its own workspace,
// provided the ByteSource's read_at is thread-safe (memory, file and callback sources are).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "fourdgs/decode.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/reconstruct.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/state_timeline.hpp"
#include "fourdgs/streaming_reader.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

namespace detail {
class RangeFetcher;
class RecordStream;
struct FooterTail;
}  // namespace detail

// The reusable buffers one thread needs to decode chunks: fetched record bytes, bins, scratch,
// and the decoded block. Reusing a workspace makes a steady-state decode allocation-free.
struct DecodeWorkspace : FetchedChunkBuffers {
    ChunkBins bins;
    DecodeScratch scratch;
    GaussianBlock block;
};

class IndexedReader {
public:
    // Opens a random-access source. Refusals: limit-exceeded (a summary over max_summary_bytes)
    // and read failures as they stand; otherwise, when the tail cannot be used, the streaming
    // path's refusals, met by the sequential scan (above).
    static Result<IndexedReader> open(ByteSource& source, ReaderOptions options = {});
    ~IndexedReader();
    IndexedReader(IndexedReader&&) noexcept;
    IndexedReader& operator=(IndexedReader&&) noexcept;

    const SceneInfo& scene() const noexcept { return scene_; }
    // The source and options it was opened with (the source outlives the reader).
    ByteSource& source() const noexcept;
    const ReaderOptions& options() const noexcept { return options_; }
    // True when the file had no index and open() built one by walking it.
    bool index_built_by_scan() const noexcept { return index_built_; }
    // True when open() read the file by the sequential scan rather than by its tail: a file
    // without an index, or one whose tail could not be used (scan_cause() says why).
    bool read_by_scan() const noexcept { return scanned_; }
    // Why the tail, Footer, summary or front matter read by the tail could not be used (a
    // summary_crc mismatch, bytes after the trailing magic, a repeated Footer...), when open()
    // scanned for that reason; nullopt otherwise.
    const std::optional<Error>& scan_cause() const noexcept { return scan_cause_; }

    // §8: the indices of every Chunk Index entry whose [t0, t1) contains t, in index order
    // (states().at(t).chunks).
    std::vector<std::size_t> chunks_for(double t) const;
    // The file's instants cut into spans over which the chunks covering them do not change
    // (StateTimeline::of_chunks), once at open.
    const StateTimeline& states() const noexcept { return states_; }

    // The bytes decode_chunk(index) will fetch: the chunk record plus the wanted bands.
    std::uint64_t fetch_cost(std::size_t index) const;
    // The ranges decode_chunks(indices) reads (announced to the source's prefetch first).
    std::vector<ByteRange> fetch_ranges(std::span<const std::size_t> indices) const;

    // Fetches and decodes chunk `index` into ws.block. Checks the fetched record against its
    // index entry (index-record-mismatch naming the field). Thread-safe with distinct workspaces.
    Status decode_chunk(std::size_t index, DecodeWorkspace& ws) const;

    // Decodes the given chunks on up to `threads` threads (0 = hardware concurrency) into `out`
    // (replaced), in the order given. `out` is sized once from the Chunk Index counts (each
    // checked against its record as the chunk decodes) and every chunk is dequantized straight
    // into its own rows, so the first call costs what a warm one does plus the output's pages.
    // `pool` holds one workspace per thread and is reused across calls. On a refusal `out` is
    // left empty.
    Status decode_chunks(std::span<const std::size_t> indices, GaussianBlock& out,
                         std::vector<DecodeWorkspace>& pool, unsigned threads = 0) const;

    // Every gaussian whose chunk covers t, decoded (not yet evaluated) into `out`.
    Status read_instant(double t, GaussianBlock& out, std::vector<DecodeWorkspace>& pool,
                        unsigned threads = 0) const;

    // Every gaussian of the file into `out`, chunks in index order.
    Status read_all(GaussianBlock& out, std::vector<DecodeWorkspace>& pool,
                    unsigned threads = 0) const;

    // Reads a payload the scene references by range (an attachment's or audio source's bytes)
    // without touching anything else.
    Result<std::vector<std::uint8_t>> read_payload(const PayloadRef& payload) const;

    // Bytes fetched from the source so far by this reader (open and decodes), for measuring.
    std::uint64_t bytes_fetched() const noexcept;

private:
    IndexedReader(ByteSource& source, ReaderOptions options);
    Status read_tail_and_summary(std::uint64_t size);
    // The tail, the summary and the front matter: false when the Footer says there is no index.
    Result<bool> read_by_tail(std::uint64_t size);
    Status read_summary(const detail::FooterTail& tail, SceneBuilder& summary);
    // The whole file front to back, as the streaming path reads it (M016, and the fallback).
    Status scan();
    Status scan_keyframe_delta();
    // Whether the scan walks the file as keyframe-delta: the reader accepts such files and the
    // first record is a Header that says so.
    bool scans_keyframe_delta() const;
    // Content records before the first chunk (`end`), then in the gaps between indexed ranges
    // up to `content_end` (the summary, or the Footer when there is no index); then the summary.
    Status read_front_matter(std::uint64_t end, std::uint64_t content_end, SceneBuilder&& summary);
    // Feeds every record in the stream's region to `builder`, payload records framed without
    // their payloads. `stopped_at` given: the front matter, which ends at the first chunk (its
    // offset is stored there); otherwise a gap between indexed ranges, where a chunk is one the
    // index does not name.
    Status walk(SceneBuilder& builder, detail::RecordStream& stream,
                std::uint64_t* stopped_at) const;
    int wanted_bands() const;
    // decode_chunk's steps up to the bins: fetch, the index check, the bands, the streams.
    Status decode_chunk_bins(std::size_t index, DecodeWorkspace& ws) const;
    // Whether the index's counts for `indices` may size an output before any record is read:
    // each within the per-chunk limit and together at most one gaussian per byte fetched (or one
    // chunk's limit), so an index that lies about its counts cannot make us over-allocate.
    bool counts_trusted(std::span<const std::size_t> indices) const;

    ReaderOptions options_;
    std::unique_ptr<detail::RangeFetcher> fetcher_;
    SceneInfo scene_;
    bool scanned_ = false, index_built_ = false;
    std::optional<Error> scan_cause_;
    StateTimeline states_;
};

}  // namespace fourdgs
FOURDGS_PUBLIC_END
