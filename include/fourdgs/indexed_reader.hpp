// fourdgs/indexed_reader.hpp — footer → summary → only the byte ranges an instant needs (§8).
//
// open() reads the 37-byte tail (§5.2), the summary (bounded by ReaderOptions::max_summary_bytes
// and checked against summary_crc when non-zero), and the front matter before the first chunk,
// framing payload records (attachments, audio data) without reading their payloads. A file whose
// summary_start is 0 has no index and is read sequentially (M016): open() then walks the records
// front to back once, reading only record headers and chunk headers, and builds the same index
// in memory. Records are framed by a RecordStream confined to the range being walked, fetched by
// a RangeFetcher (record_stream.hpp), and assembled by a SceneBuilder (front_matter.hpp).
//
// chunks_for(t) answers from the index alone. decode_chunk() fetches one chunk's record and the
// SH band records up to the configured degree — never a band above it — and decodes them.
// Several threads may call decode_chunk() on one reader at once, each with its own workspace,
// provided the ByteSource's read_at is thread-safe (memory, file and callback sources are).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "fourdgs/decode.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/reconstruct.hpp"
#include "fourdgs/record_stream.hpp"
#include "fourdgs/scene.hpp"

namespace fourdgs {

// The reusable buffers one thread needs to decode chunks: fetched record bytes, bins, scratch,
// and the decoded block. Reusing a workspace makes a steady-state decode allocation-free.
struct DecodeWorkspace {
    std::vector<std::uint8_t> record;
    std::array<std::vector<std::uint8_t>, 3> bands;
    std::vector<ShBandRecord> band_records;  // views `bands`
    ChunkBins bins;
    DecodeScratch scratch;
    GaussianBlock block;
};

class IndexedReader {
public:
    // Opens a random-access source. Refusals: the magic and front-matter refusals of the
    // streaming path; bad-footer (the tail is not magic + a 20-byte Footer); summary-out-of-range;
    // summary-crc-mismatch; index-out-of-range (an entry points outside the file); limit-exceeded.
    static Result<IndexedReader> open(ByteSource& source, ReaderOptions options = {});

    const SceneInfo& scene() const noexcept { return scene_; }
    // The source and options it was opened with (the source outlives the reader).
    ByteSource& source() const noexcept { return fetcher_.source(); }
    const ReaderOptions& options() const noexcept { return options_; }
    // True when the file had no index (summary_start 0) and open() built one by walking it.
    bool index_built_by_scan() const noexcept { return scanned_; }

    // §8: the indices of every Chunk Index entry whose [t0, t1) contains t, in index order.
    std::vector<std::size_t> chunks_for(double t) const;

    // The bytes decode_chunk(index) will fetch: the chunk record plus the wanted bands.
    std::uint64_t fetch_cost(std::size_t index) const;

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
    std::uint64_t bytes_fetched() const noexcept { return fetcher_.bytes_fetched(); }

private:
    IndexedReader(ByteSource& source, ReaderOptions options)
        : options_(options), fetcher_(source, options.max_record_bytes) {}
    Status read_tail_and_summary(std::uint64_t size);
    Status read_summary(std::uint64_t footer_start, SceneBuilder& summary);
    Status scan_without_index(std::uint64_t footer_start, SceneBuilder& summary,
                              std::uint64_t& first_chunk);
    // Content records before the first chunk (`end`), then in the gaps between indexed ranges
    // up to `content_end` (the summary, or the Footer when there is no index); then the summary.
    Status read_front_matter(std::uint64_t end, std::uint64_t content_end, SceneBuilder&& summary);
    // Feeds every record in the stream's region to `builder`, payload records framed without
    // their payloads. `stopped_at` given: the front matter, which ends at the first chunk (its
    // offset is stored there); otherwise a gap between indexed ranges, where a chunk is one the
    // index does not name.
    Status walk(SceneBuilder& builder, RecordStream& stream, std::uint64_t* stopped_at) const;
    int wanted_bands() const;
    // decode_chunk's steps up to the bins: fetch, the index check, the bands, the streams.
    Status decode_chunk_bins(std::size_t index, DecodeWorkspace& ws) const;
    // Whether the index's counts for `indices` may size an output before any record is read:
    // each within the per-chunk limit and together at most one gaussian per byte fetched (or one
    // chunk's limit), so an index that lies about its counts cannot make us over-allocate.
    bool counts_trusted(std::span<const std::size_t> indices) const;

    ReaderOptions options_;
    RangeFetcher fetcher_;
    SceneInfo scene_;
    bool scanned_ = false;
};

}  // namespace fourdgs
