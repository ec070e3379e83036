// IndexedReader (fourdgs/indexed_reader.hpp): tail, summary, then only what an instant needs.
#include "fourdgs/indexed_reader.hpp"

#include <algorithm>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "fourdgs/detail/chunk_walk.hpp"
#include "fourdgs/detail/index_check.hpp"
#include "fourdgs/detail/keyframe_composition.hpp"
#include "fourdgs/detail/record_stream.hpp"
#include "fourdgs/keyframe_delta_stream.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "platform/worker_threads.hpp"

namespace fourdgs {

using detail::ChunkBands;
using detail::ChunkWalk;
using detail::DeltaBins;
using detail::FooterTail;
using detail::FramedChunk;
using detail::HeldRecord;
using detail::IndexCheckOptions;
using detail::IndexedChunk;
using detail::RangeFetcher;
using detail::RecordFrame;
using detail::RecordRegion;
using detail::RecordStream;
using detail::StateChunk;
using detail::SummaryCrc;
using detail::decode_state_chunk_bins;
using detail::declares_keyframe_delta;
using detail::fetch_indexed_chunk;
using detail::read_summary_by_tail;
using detail::orphan_sh_band;
using detail::parse_state_chunk;
using detail::read_footer_tail;
using detail::unindexed_chunk;
using detail::unindexed_sh_band;

namespace {

constexpr std::uint64_t kPayloadPrefix = 4096;  // normally holds every field before the payload

// The region a walk between indexed ranges (or before the first chunk) may not cross.
RecordRegion up_to_range(std::uint64_t end, bool front_matter) {
    // Before the first chunk a cut record is a truncation; between indexed ranges it means an
    // index chunk_length or band length does not frame whole records.
    if (front_matter)
        return {end, refusal::kTruncated, "the next indexed range at " + std::to_string(end), ""};
    return {end, refusal::kIndexRecordMismatch,
            "the next indexed range at " + std::to_string(end),
            " (an index chunk_length or band length does not frame whole records)"};
}

}  // namespace

IndexedReader::IndexedReader(ByteSource& source, ReaderOptions options)
    : options_(options),
      fetcher_(std::make_unique<RangeFetcher>(source, options.max_record_bytes)) {}
IndexedReader::~IndexedReader() = default;
IndexedReader::IndexedReader(IndexedReader&&) noexcept = default;
IndexedReader& IndexedReader::operator=(IndexedReader&&) noexcept = default;

ByteSource& IndexedReader::source() const noexcept { return fetcher_->source(); }
std::uint64_t IndexedReader::bytes_fetched() const noexcept { return fetcher_->bytes_fetched(); }

Result<IndexedReader> IndexedReader::open(ByteSource& source, ReaderOptions options) {
    if (!source.random_access() || !source.size())
        return make_error(ErrorKind::invalid_argument, refusal::kNotSeekable,
                          "the indexed reader needs a random-access source of known size; use "
                          "StreamingReader for pipes");
    IndexedReader reader(source, options);
    const std::uint64_t size = *source.size();
    std::vector<std::uint8_t> magic;
    FOURDGS_TRY(reader.fetcher_->fetch(0, std::min<std::uint64_t>(size, kMagicSize), magic));
    FOURDGS_TRY(check_magic(magic, 0));
    FOURDGS_TRY(reader.read_tail_and_summary(size));
    reader.states_ = StateTimeline::of_chunks(reader.scene_.index, reader.scene_.header.duration_sec);
    return reader;
}

Status IndexedReader::read_tail_and_summary(std::uint64_t size) {
    // By the tail when it can be used. A file without an index (M016), or one whose tail,
    // Footer, summary or front matter cannot be used as they stand, is read by the sequential
    // scan instead: the streaming path's walk, so the content is kept when only the summary is
    // damaged (a summary_crc mismatch, bytes after the trailing magic) and otherwise the refusal
    // is the first fault in file order, the one the streaming path names. A read failure or a
    // configured limit is an answer as it stands.
    auto by_tail = read_by_tail(size);
    if (by_tail.ok() && *by_tail) return ok_status();
    if (!by_tail.ok()) {
        const ErrorKind kind = by_tail.error().kind;
        if (kind == ErrorKind::io || kind == ErrorKind::limit) return std::move(by_tail).error();
        scan_cause_ = std::move(by_tail).error();
    }
    return scan();
}

Result<bool> IndexedReader::read_by_tail(std::uint64_t size) {
    FOURDGS_ASSIGN(FooterTail tail, read_footer_tail(*fetcher_, size));
    scene_.footer = tail.footer;
    if (tail.footer.summary_start == 0) return false;  // no index: read sequentially (M016)

    SceneBuilder summary(options_);
    FOURDGS_TRY(read_summary(tail, summary));
    std::uint64_t first_chunk = tail.footer.summary_start;
    for (const ChunkIndex& e : summary.scene().index)
        first_chunk = std::min(first_chunk, e.chunk_offset);
    FOURDGS_TRY(read_front_matter(first_chunk, tail.footer.summary_start, std::move(summary)));
    return true;
}

// The summary, the indexed readers' one walk of it (read_summary_by_tail).
Status IndexedReader::read_summary(const FooterTail& tail, SceneBuilder& summary) {
    SummaryCrc crc = SummaryCrc::not_stated;
    // `summary` is a reader's builder: the walk stops at the first refusal, its own or the
    // builder's.
    Status read = read_summary_by_tail(*fetcher_, tail, options_, summary, crc);
    if (crc != SummaryCrc::mismatch) scene_.summary_crc_verified = crc == SummaryCrc::verified;
    return read;
}

bool IndexedReader::scans_keyframe_delta() const {
    // A reader that accepts keyframe-delta files (open_scene, KeyframeDeltaReader) walks one as
    // such when its first record is a Header that says so; anything else is walked as
    // gaussian-birth, whose walk refuses what is wrong with it.
    if (!options_.accept_keyframe_delta) return false;
    RecordStream stream(fetcher_->source(), options_.max_record_bytes);
    auto says = declares_keyframe_delta(stream, options_);
    fetcher_->count(stream.bytes_read());
    return says.ok() && *says;
}

Status IndexedReader::scan() {
    // The streaming path's walk (ChunkWalk), with each chunk and its SH band records framed,
    // parsed and decoded as the streaming reader does, the result dropped: decode_chunk decodes
    // again when asked. A keyframe-delta file is read by the streaming keyframe-delta front-end
    // itself (its states composed once, so a fault is the one that path meets first), and the
    // index it builds carries the six §5.8 fields, from the states as composed, so the file can
    // be sought like one with its own index. The walk checks what the streaming path checks (the
    // summary against the chunks, the Footer, the trailing magic); the index the reader seeks by
    // is the file's when it has one (each entry checked against its chunk), else the built one.
    scanned_ = true;
    if (scans_keyframe_delta()) return scan_keyframe_delta();
    ChunkWalk walk(fetcher_->source(), options_, ChunkWalk::Model::gaussian_birth);
    std::vector<ChunkIndex> built;
    ChunkBins bins;
    DeltaBins delta_bins;
    DecodeScratch scratch;
    auto chunks = [&]() -> Status {
        FOURDGS_TRY(walk.open());
        RecordView record;
        while (true) {
            FOURDGS_ASSIGN(bool have, walk.next_chunk(record));
            if (!have) return ok_status();
            FOURDGS_ASSIGN(StateChunk parsed, parse_state_chunk(record));
            FramedChunk seen = FramedChunk::of(record, parsed);
            FOURDGS_ASSIGN(ChunkBands bands, walk.read_bands());
            seen.bands = bands.ranges;
            // Decoded as the streaming path decodes it, so faults come in its order: a chunk
            // whose following records were cut is decoded first, with the whole bands that
            // arrived (M100), and only then is the cut the answer.
            ChunkDecodeOptions decode = options_.decode;
            if (walk.truncation()) decode.max_sh_degree = std::min(decode.max_sh_degree, bands.whole);
            FOURDGS_TRY(decode_state_chunk_bins(walk.scene(), parsed, bands.bands, decode, bins,
                                                delta_bins, scratch));
            if (walk.truncation()) return *walk.truncation();
            built.push_back(seen.entry(false));
            walk.remember(std::move(seen));
        }
    };
    const Status walked = chunks();
    fetcher_->count(walk.stream().bytes_read());
    FOURDGS_TRY(walked);
    scene_ = walk.scene();
    if (scene_.index.empty()) {
        scene_.index = std::move(built);
        index_built_ = true;
    }
    return ok_status();
}

Status IndexedReader::scan_keyframe_delta() {
    KeyframeDeltaStream stream(fetcher_->source(), options_);
    auto states = [&]() -> Status {
        FOURDGS_TRY(stream.open());
        ChunkBins bins;
        for (bool more = true; more;) {
            FOURDGS_ASSIGN(more, stream.next_state_bins(bins));
        }
        return ok_status();
    };
    const Status composed = states();
    fetcher_->count(stream.bytes_read());
    FOURDGS_TRY(composed);
    scene_ = stream.scene();
    if (scene_.index.empty()) {
        scene_.index = stream.index_entries();
        index_built_ = true;
    }
    return ok_status();
}

Status IndexedReader::walk(SceneBuilder& builder, RecordStream& stream,
                           std::uint64_t* stopped_at) const {
    HeldRecord held;
    // A gap between indexed ranges starts right after a chunk or one of its bands.
    bool first_in_gap = stopped_at == nullptr;
    while (true) {
        FOURDGS_ASSIGN(std::optional<RecordFrame> frame, stream.next_frame());
        if (!frame) break;
        if (frame->opcode == op::chunk || frame->opcode == op::delta_chunk) {
            if (stopped_at) break;
            return unindexed_chunk(frame->opcode, frame->offset);
        }
        // Every band the index names lies in an indexed range, so a band here is one it does not
        // name: after a chunk, its entry disagrees with the records; elsewhere it is an orphan.
        if (frame->opcode == op::sh_band)
            return first_in_gap ? unindexed_sh_band(frame->offset) : orphan_sh_band(frame->offset);
        first_in_gap = false;
        if (is_payload_opcode(frame->opcode) && !options_.keep_payloads &&
            frame->content_length > kPayloadPrefix) {
            FOURDGS_TRY(stream.read_prefix(*frame, kPayloadPrefix, held));
            FOURDGS_ASSIGN(bool framed, builder.add_unread_payload(held.view));
            if (framed) {
                stream.skip(*frame);
                continue;
            }
            // The fields before the payload run past the prefix: read the record after all.
        }
        FOURDGS_TRY(stream.read_content(*frame, held));
        FOURDGS_TRY(builder.add(held.view));
    }
    if (stopped_at) *stopped_at = stream.position();
    return ok_status();
}

Status IndexedReader::read_front_matter(std::uint64_t end, std::uint64_t content_end,
                                        SceneBuilder&& summary) {
    SceneBuilder builder(options_);
    RecordStream stream(fetcher_->source(), options_.max_record_bytes);
    stream.confine(up_to_range(end, true));
    std::uint64_t first_chunk = end;
    FOURDGS_TRY(walk(builder, stream, &first_chunk));
    FOURDGS_TRY(builder.seal(first_chunk));

    // Content records may also sit between chunks (order is normative only where stated, §4):
    // walk the gaps the index leaves between its ranges so both readers see the same scene.
    struct Range {
        std::uint64_t begin, end;
    };
    std::vector<Range> ranges;
    for (const ChunkIndex& e : summary.scene().index) {
        ranges.push_back({e.chunk_offset, e.chunk_offset + e.chunk_length});
        for (const ChunkIndex::Band& b : e.bands) ranges.push_back({b.offset, b.offset + b.length});
    }
    ranges.push_back({content_end, content_end});
    std::sort(ranges.begin(), ranges.end(),
              [](const Range& a, const Range& b) { return a.begin < b.begin; });
    std::uint64_t cursor = first_chunk;
    for (const Range& r : ranges) {
        if (r.begin > cursor) {
            stream.seek(cursor);
            stream.confine(up_to_range(r.begin, false));
            FOURDGS_TRY(walk(builder, stream, nullptr));
        }
        cursor = std::max(cursor, r.end);
    }
    fetcher_->count(stream.bytes_read());

    // The summary read on its own stands; everything else comes from the content records.
    builder.take_summary(std::move(summary));
    SceneInfo& fm = builder.scene();
    fm.footer = scene_.footer;
    fm.summary_crc_verified = scene_.summary_crc_verified;
    scene_ = std::move(fm);
    return ok_status();
}

int IndexedReader::wanted_bands() const {
    return std::min<int>(scene_.header.sh_degree, std::max(0, options_.decode.max_sh_degree));
}

std::vector<std::size_t> IndexedReader::chunks_for(double t) const {
    return states_.at(t).chunks;
}

std::uint64_t IndexedReader::fetch_cost(std::size_t index) const {
    const ChunkIndex& e = scene_.index.at(index);
    std::uint64_t cost = e.chunk_length;
    for (const ChunkIndex::Band& b : e.bands)
        if (b.band >= 1 && b.band <= wanted_bands()) cost += b.length;
    return cost;
}

std::vector<ByteRange> IndexedReader::fetch_ranges(std::span<const std::size_t> indices) const {
    std::vector<ByteRange> out;
    for (std::size_t i : indices)
        if (i < scene_.index.size())
            RangeFetcher::append_ranges(scene_.index[i], wanted_bands(), out);
    return out;
}

Status IndexedReader::decode_chunk_bins(std::size_t index, DecodeWorkspace& ws) const {
    if (index >= scene_.index.size())
        return make_error(ErrorKind::invalid_argument, refusal::kInvalidArgument,
                          "chunk " + std::to_string(index) + " does not exist (the index has " +
                              std::to_string(scene_.index.size()) + " entries)");
    IndexCheckOptions fetched;
    fetched.ranges = false;  // the record was fetched by the entry's own range
    // Only the bands asked for are fetched (§5.7): a reader capped at degree d never reads d+1.
    const int want = wanted_bands();
    FOURDGS_ASSIGN(IndexedChunk fetched_chunk,
                   fetch_indexed_chunk(*fetcher_, scene_.index[index], op::chunk, fetched, want,
                                       true, ws));
    ChunkDecodeOptions decode = options_.decode;
    decode.max_sh_degree = want;
    return fourdgs::decode_chunk_bins(scene_, *fetched_chunk.chunk, ws.band_records, decode,
                                      ws.bins, ws.scratch);
}

Status IndexedReader::decode_chunk(std::size_t index, DecodeWorkspace& ws) const {
    FOURDGS_TRY(decode_chunk_bins(index, ws));
    ws.block.clear();
    dequantize(scene_, ws.bins, ws.block);
    return ok_status();
}

bool IndexedReader::counts_trusted(std::span<const std::size_t> indices) const {
    const std::uint64_t limit = options_.decode.limits.max_gaussians_per_chunk;
    std::uint64_t gaussians = 0, bytes = 0;
    for (std::size_t k : indices) {
        if (k >= scene_.index.size() || scene_.index[k].gaussian_count > limit) return false;
        gaussians += scene_.index[k].gaussian_count;
        bytes += fetch_cost(k);
    }
    return gaussians <= std::max(limit, bytes);
}

Status IndexedReader::decode_chunks(std::span<const std::size_t> indices, GaussianBlock& out,
                                    std::vector<DecodeWorkspace>& pool, unsigned threads) const {
    threads = std::max(1u,
                       std::min<unsigned>(worker_threads(threads), static_cast<unsigned>(indices.size())));
    if (pool.size() < threads) pool.resize(threads);
    FOURDGS_TRY(fetcher_->prefetch(fetch_ranges(indices)));  // one round trip on a remote source
    if (!counts_trusted(indices)) {
        // Counts the index cannot vouch for (or a bad entry number): one chunk at a time,
        // each appended once its record has confirmed its count.
        out.clear();
        for (std::size_t k : indices) {
            Status st = decode_chunk(k, pool[0]);
            if (!st.ok()) {
                out.clear();
                return st;
            }
            if (out.count == 0) out.sh_degree = wanted_bands();
            out.append(pool[0].block);
        }
        if (out.count == 0) out.sh_degree = wanted_bands();
        return ok_status();
    }

    // Each chunk's first row, from the index counts: `out` is sized once and every chunk is
    // dequantized into its own rows by the thread that decoded it.
    std::vector<std::size_t> first(indices.size() + 1, 0);
    for (std::size_t k = 0; k < indices.size(); ++k)
        first[k + 1] = first[k] + scene_.index[indices[k]].gaussian_count;
    size_rows(out, first.back(), wanted_bands());

    std::vector<Status> status(indices.size());
    std::atomic<std::size_t> next{0};
    std::mutex optional_columns;  // sizes a column only some chunks carry, once
    auto work = [&](DecodeWorkspace& ws) {
        for (std::size_t k; (k = next.fetch_add(1)) < indices.size();) {
            status[k] = decode_chunk_bins(indices[k], ws);
            if (!status[k].ok()) continue;
            // The index check has confirmed the record's count, so the rows are the chunk's.
            const ChunkBins& bins = ws.bins;
            if (bins.has_source_group || bins.has_source_index || bins.has_gaussian_id) {
                std::lock_guard<std::mutex> lock(optional_columns);
                if ((bins.has_source_group || bins.has_source_index) && !out.has_source_ids) {
                    out.has_source_ids = true;
                    out.source_group.resize(out.count);
                    out.source_index.resize(out.count);
                }
                if (bins.has_gaussian_id && out.gaussian_id.empty())
                    out.gaussian_id.resize(out.count);
            }
            dequantize_into(scene_, bins, out, first[k]);
        }
    };
    if (threads <= 1) {
        work(pool[0]);
    } else {
        std::vector<std::thread> workers;
        workers.reserve(threads - 1);
        for (unsigned i = 1; i < threads; ++i) workers.emplace_back(work, std::ref(pool[i]));
        work(pool[0]);
        for (std::thread& w : workers) w.join();
    }
    for (const Status& st : status)
        if (!st.ok()) {
            out.clear();
            return st.error();
        }
    return ok_status();
}

Status IndexedReader::read_instant(double t, GaussianBlock& out, std::vector<DecodeWorkspace>& pool,
                                   unsigned threads) const {
    const std::vector<std::size_t> idx = chunks_for(t);
    return decode_chunks(idx, out, pool, threads);
}

Status IndexedReader::read_all(GaussianBlock& out, std::vector<DecodeWorkspace>& pool,
                               unsigned threads) const {
    std::vector<std::size_t> idx(scene_.index.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    return decode_chunks(idx, out, pool, threads);
}

Result<std::vector<std::uint8_t>> IndexedReader::read_payload(const PayloadRef& payload) const {
    std::vector<std::uint8_t> bytes;
    FOURDGS_TRY(fetcher_->fetch(payload.offset, payload.length, bytes));
    return bytes;
}

}  // namespace fourdgs
