// IndexedReader (fourdgs/indexed_reader.hpp): tail, summary, then only what an instant needs.
#include "fourdgs/indexed_reader.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

namespace fourdgs {
namespace {

// Payload records whose payload the indexed reader frames instead of reading.
bool is_payload_record(std::uint8_t opcode) {
    return opcode == op::attachment || opcode == op::audio_data || opcode == op::audio_legacy;
}

constexpr std::uint64_t kPayloadPrefix = 4096;  // normally holds every field before the payload
constexpr std::uint64_t kChunkHeadBytes = 8 + 8 + 4 + 4;  // t0, t1, level, count

Error mismatch(std::string field, std::string message, std::uint64_t offset) {
    return make_error(ErrorKind::malformed, refusal::kIndexRecordMismatch,
                      "Chunk Index field '" + field + "' disagrees with the record: " + message,
                      offset);
}

std::uint64_t read_le64(const std::uint8_t* p) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

}  // namespace

Status IndexedReader::fetch(std::uint64_t offset, std::uint64_t length,
                            std::vector<std::uint8_t>& out) const {
    FOURDGS_TRY(read_range(*source_, offset, length, options_.max_record_bytes, out));
    fetched_->fetch_add(length, std::memory_order_relaxed);
    return ok_status();
}

Result<IndexedReader> IndexedReader::open(ByteSource& source, ReaderOptions options) {
    if (!source.random_access() || !source.size())
        return make_error(ErrorKind::invalid_argument, refusal::kNotSeekable,
                          "the indexed reader needs a random-access source of known size; use "
                          "StreamingReader for pipes");
    IndexedReader reader(source, options);
    const std::uint64_t size = *source.size();
    std::vector<std::uint8_t> magic;
    FOURDGS_TRY(reader.fetch(0, std::min<std::uint64_t>(size, kMagicSize), magic));
    FOURDGS_TRY(check_magic(magic, 0));
    FOURDGS_TRY(reader.read_tail_and_summary(size));
    return reader;
}

Status IndexedReader::read_tail_and_summary(std::uint64_t size) {
    if (size < kMagicSize + kTailSize)
        return make_error(ErrorKind::truncated, refusal::kTruncated,
                          "a " + std::to_string(size) +
                              "-byte file cannot hold the magic and the 37-byte tail",
                          0);
    std::vector<std::uint8_t> tail;
    const std::uint64_t footer_start = size - kTailSize;
    FOURDGS_TRY(fetch(footer_start, kTailSize, tail));
    FOURDGS_TRY(check_magic(std::span(tail).subspan(kRecordHeaderSize + kFooterContentSize),
                            size - kMagicSize));
    if (tail[0] != op::footer || read_le64(&tail[1]) != kFooterContentSize)
        return make_error(ErrorKind::malformed, refusal::kBadFooter,
                          "the 37 bytes before the trailing magic are not a Footer record with "
                          "20 bytes of content (opcode " + std::to_string(tail[0]) +
                              ", content_length " + std::to_string(read_le64(&tail[1])) + ")",
                          footer_start);
    FOURDGS_ASSIGN(RecordView fv, parse_record(std::span(tail).first(kRecordHeaderSize + 20),
                                               footer_start));
    FOURDGS_ASSIGN(Footer footer, parse_footer(fv));
    scene_.footer = footer;

    if (footer.summary_start == 0) return scan_without_index(size);

    if (footer.summary_start < kMagicSize || footer.summary_start > footer_start)
        return make_error(ErrorKind::malformed, refusal::kSummaryOutOfRange,
                          "summary_start " + std::to_string(footer.summary_start) +
                              " is outside [8, " + std::to_string(footer_start) + "]",
                          fv.content_offset());
    const std::uint64_t length = footer_start - footer.summary_start;
    if (length > options_.max_summary_bytes)
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          "the summary is " + std::to_string(length) +
                              " bytes, over the configured limit",
                          footer.summary_start);
    std::vector<std::uint8_t> summary;
    FOURDGS_TRY(fetch(footer.summary_start, length, summary));
    if (footer.summary_crc != 0 && options_.verify_summary_crc) {
        const std::uint32_t crc = crc32(summary);
        if (crc != footer.summary_crc)
            return make_error(ErrorKind::malformed, refusal::kSummaryCrcMismatch,
                              "summary_crc is " + std::to_string(footer.summary_crc) +
                                  " but the summary bytes hash to " + std::to_string(crc),
                              fv.content_offset() + 16);
        scene_.summary_crc_verified = true;
    }
    // The summary is parsed record by record (wire-notes: a group may be overlong).
    SceneBuilder summary_records(options_);
    std::size_t at = 0;
    while (at < summary.size()) {
        FOURDGS_ASSIGN(RecordView r, parse_record(std::span(summary).subspan(at),
                                                  footer.summary_start + at));
        at += static_cast<std::size_t>(r.total_length());
        switch (r.opcode) {
            case op::chunk_index: {
                FOURDGS_ASSIGN(ChunkIndex e, parse_chunk_index(r));
                if (e.chunk_offset < kMagicSize || e.chunk_offset > footer.summary_start ||
                    e.chunk_length > footer.summary_start - e.chunk_offset)
                    return make_error(ErrorKind::malformed, refusal::kIndexOutOfRange,
                                      "Chunk Index entry names [" + std::to_string(e.chunk_offset) +
                                          ", +" + std::to_string(e.chunk_length) +
                                          ") outside the chunks before the summary",
                                      r.offset);
                for (const ChunkIndex::Band& b : e.bands)
                    if (b.offset < kMagicSize || b.offset > footer.summary_start ||
                        b.length > footer.summary_start - b.offset)
                        return make_error(ErrorKind::malformed, refusal::kIndexOutOfRange,
                                          "Chunk Index band " + std::to_string(b.band) +
                                              " range lies outside the file's chunks",
                                          r.offset);
                scene_.index.push_back(std::move(e));
                break;
            }
            case op::statistics: {
                FOURDGS_ASSIGN(Statistics s, parse_statistics(r));
                scene_.statistics = s;
                break;
            }
            case op::summary_offset: {
                FOURDGS_ASSIGN(SummaryOffset s, parse_summary_offset(r));
                scene_.summary_offsets.push_back(s);
                break;
            }
            default:
                if (is_defined_opcode(r.opcode))
                    return make_error(ErrorKind::malformed, refusal::kSummaryNotContiguous,
                                      "a " + opcode_name(r.opcode) + " record at byte " +
                                          std::to_string(r.offset) +
                                          " sits inside the summary (§4.5)",
                                      r.offset);
                scene_.skipped.push_back({r.opcode, r.offset, r.total_length()});
                break;
        }
    }
    std::uint64_t first_chunk = footer.summary_start;
    for (const ChunkIndex& e : scene_.index) first_chunk = std::min(first_chunk, e.chunk_offset);
    return read_front_matter(first_chunk, footer.summary_start);
}

// Feeds every record in [at, end) to `builder`: payload records framed without their payloads,
// everything else read whole. With `stop_at_chunk`, stops at the first Chunk or Delta Chunk and
// reports where; otherwise a chunk here is one the index does not name, which is refused.
Status IndexedReader::walk_records(SceneBuilder& builder, std::uint64_t at, std::uint64_t end,
                                   bool stop_at_chunk, std::uint64_t* stopped_at) const {
    std::vector<std::uint8_t> buf;
    while (at < end) {
        std::uint8_t head[kRecordHeaderSize];
        // Before the first chunk a cut record is a truncation; between indexed ranges it means an
        // index chunk_length or band length does not frame whole records.
        const std::string_view cut = stop_at_chunk ? refusal::kTruncated : refusal::kIndexRecordMismatch;
        const char* why = stop_at_chunk ? "" : " (an index chunk_length or band length does not "
                                               "frame whole records)";
        if (end - at < kRecordHeaderSize)
            return make_error(ErrorKind::malformed, cut,
                              "a record header at byte " + std::to_string(at) +
                                  " runs into the next indexed range at " + std::to_string(end) +
                                  why,
                              at);
        FOURDGS_TRY(source_->read_exact(at, head));
        fetched_->fetch_add(kRecordHeaderSize, std::memory_order_relaxed);
        const std::uint8_t opcode = head[0];
        const std::uint64_t length = read_le64(head + 1);
        if (length > end - at - kRecordHeaderSize)
            return make_error(ErrorKind::malformed, cut,
                              opcode_name(opcode) + " record at byte " + std::to_string(at) +
                                  " declares content_length " + std::to_string(length) +
                                  ", past the next indexed range at " + std::to_string(end) + why,
                              at);
        if (opcode == op::chunk || opcode == op::delta_chunk) {
            if (stop_at_chunk) break;
            return make_error(ErrorKind::malformed, refusal::kIndexRecordMismatch,
                              opcode_name(opcode) + " record at byte " + std::to_string(at) +
                                  " is named by no Chunk Index entry's chunk_offset (§5.8: one "
                                  "entry per chunk)",
                              at);
        }
        const bool frame_only = is_payload_record(opcode) && !options_.keep_payloads &&
                                length > kPayloadPrefix;
        FOURDGS_TRY(fetch(at, kRecordHeaderSize + (frame_only ? kPayloadPrefix : length), buf));
        RecordView r;
        r.opcode = opcode;
        r.offset = at;
        r.content_length = length;
        r.content = std::span(buf).subspan(kRecordHeaderSize);
        if (frame_only) {
            auto framed = builder.add_unread_payload(r);
            if (!framed.ok() && framed.error().refusal == refusal::kRecordTooShort) {
                // Names longer than the prefix: read the whole record after all.
                FOURDGS_TRY(fetch(at, kRecordHeaderSize + length, buf));
                r.content = std::span(buf).subspan(kRecordHeaderSize);
                FOURDGS_TRY(builder.add(r));
            } else if (!framed.ok()) {
                return framed;
            }
        } else {
            FOURDGS_TRY(builder.add(r));
        }
        at += kRecordHeaderSize + length;
    }
    if (stopped_at) *stopped_at = at;
    return ok_status();
}

Status IndexedReader::read_front_matter(std::uint64_t end, std::uint64_t content_end) {
    SceneBuilder builder(options_);
    std::uint64_t first_chunk = end;
    FOURDGS_TRY(walk_records(builder, kMagicSize, end, true, &first_chunk));
    FOURDGS_TRY(builder.seal(first_chunk));

    // Content records may also sit between chunks (order is normative only where stated, §4):
    // walk the gaps the index leaves between its ranges so both readers see the same scene.
    struct Range {
        std::uint64_t begin, end;
    };
    std::vector<Range> ranges;
    for (const ChunkIndex& e : scene_.index) {
        ranges.push_back({e.chunk_offset, e.chunk_offset + e.chunk_length});
        for (const ChunkIndex::Band& b : e.bands) ranges.push_back({b.offset, b.offset + b.length});
    }
    std::sort(ranges.begin(), ranges.end(),
              [](const Range& a, const Range& b) { return a.begin < b.begin; });
    std::uint64_t cursor = first_chunk;
    for (const Range& r : ranges) {
        if (r.begin > cursor) FOURDGS_TRY(walk_records(builder, cursor, r.begin, false, nullptr));
        cursor = std::max(cursor, r.end);
    }
    if (content_end > cursor) FOURDGS_TRY(walk_records(builder, cursor, content_end, false, nullptr));

    // Keep what the summary gave us; take everything else from the content records.
    SceneInfo& fm = builder.scene();
    fm.index = std::move(scene_.index);
    fm.statistics = scene_.statistics;
    fm.summary_offsets = std::move(scene_.summary_offsets);
    fm.footer = scene_.footer;
    fm.summary_crc_verified = scene_.summary_crc_verified;
    fm.skipped.insert(fm.skipped.end(), scene_.skipped.begin(), scene_.skipped.end());
    scene_ = std::move(fm);
    return ok_status();
}

Status IndexedReader::scan_without_index(std::uint64_t size) {
    // M016: no index, so walk the records front to back once, reading headers only.
    scanned_ = true;
    const std::uint64_t footer_start = size - kTailSize;
    std::uint64_t at = kMagicSize, first_chunk = footer_start;
    std::vector<ChunkIndex> index;
    std::optional<Statistics> statistics;
    std::vector<SummaryOffset> summary_offsets;
    std::uint8_t head[kRecordHeaderSize + kChunkHeadBytes];
    while (at < footer_start) {
        if (footer_start - at < kRecordHeaderSize)
            return make_error(ErrorKind::malformed, refusal::kTruncated,
                              "a record header at byte " + std::to_string(at) +
                                  " runs into the Footer",
                              at);
        FOURDGS_TRY(source_->read_exact(at, std::span(head, kRecordHeaderSize)));
        const std::uint64_t length = read_le64(head + 1);
        if (length > footer_start - at - kRecordHeaderSize)
            return make_error(ErrorKind::malformed, refusal::kTruncated,
                              opcode_name(head[0]) + " record at byte " + std::to_string(at) +
                                  " declares content_length " + std::to_string(length) +
                                  ", past the Footer",
                              at);
        if (head[0] == op::chunk) {
            if (length < kChunkHeadBytes)
                return make_error(ErrorKind::malformed, refusal::kRecordTooShort,
                                  "Chunk record at byte " + std::to_string(at) + " is too short",
                                  at);
            FOURDGS_TRY(source_->read_exact(at, head));
            ChunkIndex e;
            std::memcpy(&e.t0, head + 9, 8);
            std::memcpy(&e.t1, head + 17, 8);
            std::memcpy(&e.gaussian_count, head + 29, 4);
            e.chunk_offset = at;
            e.chunk_length = kRecordHeaderSize + length;
            index.push_back(e);
            first_chunk = std::min(first_chunk, at);
        } else if (head[0] == op::sh_band && !index.empty()) {
            std::uint8_t band = 0;
            if (length >= 1) FOURDGS_TRY(source_->read_exact(at + kRecordHeaderSize, std::span(&band, 1)));
            index.back().bands.push_back({band, at, kRecordHeaderSize + length});
        } else if (head[0] == op::statistics || head[0] == op::summary_offset) {
            // Summary records without an index: small, so read them as the streaming reader does.
            std::vector<std::uint8_t> rec;
            FOURDGS_TRY(fetch(at, kRecordHeaderSize + length, rec));
            FOURDGS_ASSIGN(RecordView r, parse_record(rec, at));
            if (head[0] == op::statistics) {
                FOURDGS_ASSIGN(Statistics s, parse_statistics(r));
                statistics = s;
            } else {
                FOURDGS_ASSIGN(SummaryOffset s, parse_summary_offset(r));
                summary_offsets.push_back(s);
            }
        }
        at += kRecordHeaderSize + length;
    }
    scene_.index = std::move(index);
    scene_.statistics = statistics;
    scene_.summary_offsets = std::move(summary_offsets);
    return read_front_matter(first_chunk, footer_start);
}

int IndexedReader::wanted_bands() const {
    return std::min<int>(scene_.header.sh_degree, std::max(0, options_.decode.max_sh_degree));
}

std::vector<std::size_t> IndexedReader::chunks_for(double t) const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < scene_.index.size(); ++i)
        if (scene_.index[i].t0 <= t && t < scene_.index[i].t1) out.push_back(i);
    return out;
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
        if (i < scene_.index.size()) append_fetch_ranges(scene_.index[i], wanted_bands(), out);
    return out;
}

Status IndexedReader::decode_chunk(std::size_t index, DecodeWorkspace& ws) const {
    if (index >= scene_.index.size())
        return make_error(ErrorKind::invalid_argument, refusal::kInvalidArgument,
                          "chunk " + std::to_string(index) + " does not exist (the index has " +
                              std::to_string(scene_.index.size()) + " entries)");
    const ChunkIndex& e = scene_.index[index];
    FOURDGS_TRY(fetch(e.chunk_offset, e.chunk_length, ws.record));
    // The range must frame exactly one record: compare its own length before parsing, so a
    // range that cuts the record is named as the index's fault (§5.8), not as a truncated file.
    if (ws.record.size() >= kRecordHeaderSize &&
        read_le64(&ws.record[1]) != e.chunk_length - kRecordHeaderSize)
        return mismatch("chunk_length", "the index says " + std::to_string(e.chunk_length) +
                                            " bytes, the record at byte " +
                                            std::to_string(e.chunk_offset) + " is " +
                                            std::to_string(kRecordHeaderSize + read_le64(&ws.record[1])),
                        e.chunk_offset);
    FOURDGS_ASSIGN(RecordView r, parse_record(ws.record, e.chunk_offset));
    if (r.opcode != op::chunk)
        return mismatch("chunk_offset", "byte " + std::to_string(e.chunk_offset) + " holds a " +
                                            opcode_name(r.opcode) + " record, not a Chunk",
                        e.chunk_offset);
    if (r.total_length() != e.chunk_length)
        return mismatch("chunk_length", "the index says " + std::to_string(e.chunk_length) +
                                            " bytes, the record is " +
                                            std::to_string(r.total_length()),
                        e.chunk_offset);
    FOURDGS_ASSIGN(ChunkRecord chunk, parse_chunk(r));
    if (chunk.count != e.gaussian_count)
        return mismatch("gaussian_count", "the index says " + std::to_string(e.gaussian_count) +
                                              ", the Chunk holds " + std::to_string(chunk.count),
                        e.chunk_offset);
    if (chunk.t0 != e.t0 || chunk.t1 != e.t1)
        return mismatch("t0/t1", "the index says [" + std::to_string(e.t0) + ", " +
                                     std::to_string(e.t1) + "), the Chunk says [" +
                                     std::to_string(chunk.t0) + ", " + std::to_string(chunk.t1) +
                                     ")",
                        e.chunk_offset);

    // Only the bands asked for are fetched (§5.7): a reader capped at degree d never reads d+1.
    ShBandRecord bands[3];
    const int want = wanted_bands();
    for (int b = 1; b <= want; ++b) {
        const ChunkIndex::Band* entry = nullptr;
        for (const ChunkIndex::Band& x : e.bands)
            if (x.band == b) {
                if (entry)
                    return make_error(ErrorKind::malformed, refusal::kDuplicateShBand,
                                      "the index names two band " + std::to_string(b) +
                                          " records for the chunk at byte " +
                                          std::to_string(e.chunk_offset),
                                      x.offset);
                entry = &x;
            }
        if (!entry)
            return make_error(ErrorKind::malformed, refusal::kMissingShBand,
                              "the Header declares sh_degree " +
                                  std::to_string(scene_.header.sh_degree) +
                                  " but the index names no band " + std::to_string(b) +
                                  " record for the chunk at byte " + std::to_string(e.chunk_offset),
                              e.chunk_offset);
        FOURDGS_TRY(fetch(entry->offset, entry->length, ws.bands[b - 1]));
        if (ws.bands[b - 1].size() >= kRecordHeaderSize &&
            read_le64(&ws.bands[b - 1][1]) != entry->length - kRecordHeaderSize)
            return mismatch("bands", "band " + std::to_string(b) + " range at byte " +
                                         std::to_string(entry->offset) + " is " +
                                         std::to_string(entry->length) +
                                         " bytes, the record there is " +
                                         std::to_string(kRecordHeaderSize +
                                                        read_le64(&ws.bands[b - 1][1])),
                            entry->offset);
        FOURDGS_ASSIGN(RecordView br, parse_record(ws.bands[b - 1], entry->offset));
        if (br.opcode != op::sh_band || br.total_length() != entry->length)
            return mismatch("bands", "band " + std::to_string(b) + " range at byte " +
                                         std::to_string(entry->offset) +
                                         " does not frame an SH Band Stream record",
                            entry->offset);
        FOURDGS_ASSIGN(bands[b - 1], parse_sh_band(br));
        if (bands[b - 1].band != b)
            return mismatch("bands", "the index names band " + std::to_string(b) +
                                         ", the record holds band " +
                                         std::to_string(bands[b - 1].band),
                            entry->offset);
    }
    ChunkDecodeOptions decode = options_.decode;
    decode.max_sh_degree = want;
    FOURDGS_TRY(decode_chunk_bins(scene_, chunk, std::span(bands, static_cast<std::size_t>(want)),
                                  decode, ws.bins, ws.scratch));
    ws.block.clear();
    dequantize(scene_, ws.bins, ws.block);
    return ok_status();
}

Status IndexedReader::decode_chunks(std::span<const std::size_t> indices, GaussianBlock& out,
                                    std::vector<DecodeWorkspace>& pool, unsigned threads) const {
    out.clear();
    if (indices.empty()) {
        out.sh_degree = wanted_bands();
        return ok_status();
    }
    FOURDGS_TRY(source_->prefetch(fetch_ranges(indices)));  // one round trip on a remote source
    if (pool.size() < indices.size()) pool.resize(indices.size());
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    threads = std::min<unsigned>(threads, static_cast<unsigned>(indices.size()));

    std::vector<Status> status(indices.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t k; (k = next.fetch_add(1)) < indices.size();)
            status[k] = decode_chunk(indices[k], pool[k]);
    };
    if (threads <= 1) {
        work();
    } else {
        std::vector<std::thread> workers;
        workers.reserve(threads - 1);
        for (unsigned i = 1; i < threads; ++i) workers.emplace_back(work);
        work();
        for (std::thread& w : workers) w.join();
    }
    for (std::size_t k = 0; k < indices.size(); ++k) {
        if (!status[k].ok()) return status[k].error();
        out.append(pool[k].block);
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
    FOURDGS_TRY(fetch(payload.offset, payload.length, bytes));
    return bytes;
}

}  // namespace fourdgs
