// StreamingReader (fourdgs/streaming_reader.hpp): one pass, front to back.
#include "fourdgs/streaming_reader.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace fourdgs {
namespace {

Error truncated_at(std::uint64_t offset, std::string what) {
    return make_error(ErrorKind::truncated, refusal::kTruncated, std::move(what), offset);
}


}  // namespace

Result<bool> StreamingReader::read_record(Pending& slot) {
    slot.valid = false;
    slot.bytes.clear();
    std::uint8_t head[kRecordHeaderSize];
    FOURDGS_ASSIGN(std::size_t got, source_->read_at(position_, head));
    if (got == 0) return false;
    if (got < kRecordHeaderSize)
        return truncated_at(position_, "the file ends inside a record header (" +
                                           std::to_string(got) + " of 9 bytes)");
    std::uint64_t length;
    std::memcpy(&length, head + 1, 8);
    const std::uint64_t record_at = position_;
    // A length past the end of a source of known size is a cut (or lying) record, whatever the
    // limit: report it as such before judging it against the limit.
    if (auto size = source_->size(); size && length > *size - std::min(*size, record_at + 9))
        return truncated_at(record_at, opcode_name(head[0]) + " record declares content_length " +
                                           std::to_string(length) + " but only " +
                                           std::to_string(*size - record_at - 9) +
                                           " bytes remain in the file");
    if (length > options_.max_record_bytes)
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          opcode_name(head[0]) + " record declares content_length " +
                              std::to_string(length) + ", over the configured limit of " +
                              std::to_string(options_.max_record_bytes),
                          record_at);
    slot.bytes.reserve(static_cast<std::size_t>(kRecordHeaderSize + std::min<std::uint64_t>(length, 16u << 20)));
    slot.bytes.assign(head, head + kRecordHeaderSize);
    FOURDGS_ASSIGN(std::uint64_t body, read_growing(*source_, record_at + 9, length, slot.bytes));
    if (body < length)
        return truncated_at(record_at, opcode_name(head[0]) + " record at byte " +
                                           std::to_string(record_at) + " is cut after " +
                                           std::to_string(body) + " of " +
                                           std::to_string(length) + " content bytes");
    position_ = record_at + 9 + length;
    FOURDGS_ASSIGN(slot.view, parse_record(slot.bytes, record_at));
    slot.valid = true;
    if (log_records_) log_.push_back({slot.view.opcode, record_at, slot.view.total_length()});
    return true;
}

Status StreamingReader::open() {
    if (opened_) return ok_status();
    std::uint8_t magic[kMagicSize];
    FOURDGS_ASSIGN(std::size_t got, source_->read_at(0, magic));
    FOURDGS_TRY(check_magic(std::span(magic, got), 0));
    position_ = kMagicSize;
    opened_ = true;
    // Front matter: everything before the first chunk.
    FOURDGS_ASSIGN(bool have, advance_to_chunk());
    (void)have;
    return ok_status();
}

Status StreamingReader::absorb(const Pending& rec) {
    const RecordView& r = rec.view;
    if (r.opcode == op::footer) return finish_footer(rec);
    if (r.opcode == op::delta_chunk)
        return make_error(ErrorKind::malformed, refusal::kDeltaChunkInGaussianBirth,
                          "a Delta Chunk record in a gaussian-birth file (§5.18)", r.offset);
    if (r.opcode == op::sh_band)
        return make_error(ErrorKind::malformed, refusal::kOrphanShBand,
                          "an SH Band Stream record that does not follow a Chunk (§5.7)", r.offset);
    summary_run_.add(r.opcode, r.offset, rec.bytes);  // §4.5
    FOURDGS_TRY(builder_.add(r));
    if (r.opcode == op::chunk_index) FOURDGS_TRY(check_index_entry(builder_.scene().index.back(), r.offset));
    return ok_status();
}

Status StreamingReader::check_index_entry(const ChunkIndex& e, std::uint64_t entry_offset) const {
    // §5.8 / registry index-record-mismatch: every chunk has passed by the time the index does,
    // so the entry is checked against the record it frames, naming the field.
    auto mismatch = [&](const char* field, std::string message) {
        return make_error(ErrorKind::malformed, refusal::kIndexRecordMismatch,
                          std::string("Chunk Index field '") + field +
                              "' disagrees with the record: " + std::move(message),
                          entry_offset);
    };
    auto it = std::lower_bound(seen_chunks_.begin(), seen_chunks_.end(), e.chunk_offset,
                               [](const SeenChunk& c, std::uint64_t off) { return c.offset < off; });
    if (it == seen_chunks_.end() || it->offset != e.chunk_offset)
        return mismatch("chunk_offset", "no Chunk record starts at byte " +
                                            std::to_string(e.chunk_offset));
    if (it->length != e.chunk_length)
        return mismatch("chunk_length", "the index says " + std::to_string(e.chunk_length) +
                                            " bytes, the record is " + std::to_string(it->length));
    if (it->count != e.gaussian_count)
        return mismatch("gaussian_count", "the index says " + std::to_string(e.gaussian_count) +
                                              ", the Chunk holds " + std::to_string(it->count));
    if (it->t0 != e.t0 || it->t1 != e.t1)
        return mismatch("t0/t1", "the index says [" + std::to_string(e.t0) + ", " +
                                     std::to_string(e.t1) + "), the Chunk says [" +
                                     std::to_string(it->t0) + ", " + std::to_string(it->t1) + ")");
    if (it->bands.size() != e.bands.size())
        return mismatch("band_count", "the index names " + std::to_string(e.bands.size()) +
                                          " band(s), the chunk is followed by " +
                                          std::to_string(it->bands.size()));
    for (const ChunkIndex::Band& b : e.bands) {
        const ChunkIndex::Band* seen = nullptr;
        for (const ChunkIndex::Band& x : it->bands)
            if (x.band == b.band) seen = &x;
        if (!seen || seen->offset != b.offset || seen->length != b.length)
            return mismatch("bands", "the index names band " + std::to_string(b.band) + " at [" +
                                         std::to_string(b.offset) + ", +" +
                                         std::to_string(b.length) + ") but " +
                                         (seen ? "that band's record is at [" +
                                                     std::to_string(seen->offset) + ", +" +
                                                     std::to_string(seen->length) + ")"
                                               : std::string("the chunk has no such band")));
    }
    return ok_status();
}

Status StreamingReader::finish_footer(const Pending& rec) {
    // A file without chunks reaches its Footer unsealed: the same rules hold for it (§5.4's
    // effective window table, the cross-record checks), as they do in the indexed reader.
    FOURDGS_TRY(builder_.seal(rec.view.offset));
    FOURDGS_ASSIGN(Footer f, parse_footer(rec.view));
    SceneInfo& scene = builder_.scene();
    scene.footer = f;
    FOURDGS_TRY(summary_run_.check(f, rec.view.content_offset(), options_.verify_summary_crc,
                                   scene.summary_crc_verified));
    std::uint8_t magic[kMagicSize];
    FOURDGS_ASSIGN(std::size_t got, source_->read_at(position_, magic));
    if (got < kMagicSize)
        return truncated_at(position_, "the file ends inside the trailing magic (" +
                                           std::to_string(got) + " of 8 bytes)");
    FOURDGS_TRY(check_magic(std::span(magic, got), position_));
    position_ += kMagicSize;
    finished_ = true;
    return ok_status();
}

Result<bool> StreamingReader::advance_to_chunk() {
    chunk_slot_.valid = false;
    while (!finished_) {
        Pending& slot = lookahead_;
        if (!slot.valid) {
            auto r = read_record(slot);
            if (!r.ok()) {
                truncation_ = r.error();
                return std::move(r).error();
            }
            if (!*r) {
                truncation_ = truncated_at(position_, "the file ends at byte " +
                                                          std::to_string(position_) +
                                                          " without a Footer");
                return *truncation_;
            }
        }
        if (slot.view.opcode == op::chunk) {
            FOURDGS_TRY(builder_.seal(slot.view.offset));
            summary_run_.end();
            std::swap(chunk_slot_, slot);
            slot.valid = false;
            return true;
        }
        slot.valid = false;
        FOURDGS_TRY(absorb(slot));
    }
    return false;
}

Result<bool> StreamingReader::next_chunk_bins(ChunkBins& bins) {
    if (!opened_) FOURDGS_TRY(open());
    if (truncation_) return *truncation_;
    if (!chunk_slot_.valid) {
        FOURDGS_ASSIGN(bool have, advance_to_chunk());
        if (!have) return false;
    }
    FOURDGS_ASSIGN(chunk_, parse_chunk(chunk_slot_.view));
    chunk_offset_ = chunk_slot_.view.offset;
    // The SH band records follow their chunk directly (§5.7, wire-notes).
    bands_.clear();
    std::optional<Error> cut;
    for (std::size_t i = 0; i < band_slots_.size(); ++i) {
        auto r = read_record(lookahead_);
        if (!r.ok()) {
            if (r.error().kind != ErrorKind::truncated) return std::move(r).error();
            cut = r.error();
            break;
        }
        if (!*r) {
            // The data ends right after this chunk (or after one of its bands): that is a cut
            // like any other, and the bands still to come are missing, not absent.
            cut = truncated_at(position_, "the file ends at byte " + std::to_string(position_) +
                                              " without a Footer");
            break;
        }
        if (lookahead_.view.opcode != op::sh_band) break;
        std::swap(band_slots_[i], lookahead_);
        lookahead_.valid = false;
        FOURDGS_ASSIGN(ShBandRecord b, parse_sh_band(band_slots_[i].view));
        bands_.push_back(b);
    }
    {
        SeenChunk seen{chunk_offset_, chunk_slot_.view.total_length(), chunk_.t0, chunk_.t1,
                       chunk_.count, {}};
        for (std::size_t i = 0; i < bands_.size(); ++i)
            seen.bands.push_back({bands_[i].band, band_slots_[i].view.offset,
                                  band_slots_[i].view.total_length()});
        seen_chunks_.push_back(std::move(seen));
    }
    ChunkDecodeOptions decode = options_.decode;
    if (cut) {
        // Trailing-band recovery: keep the whole bands that arrived, in order (M100).
        int whole = 0;
        while (whole < static_cast<int>(bands_.size()) && bands_[whole].band == whole + 1) ++whole;
        decode.max_sh_degree = std::min(decode.max_sh_degree, whole);
        truncation_ = *cut;
    }
    chunk_slot_.valid = false;
    FOURDGS_TRY(decode_chunk_bins(builder_.scene(), chunk_, bands_, decode, bins, scratch_));
    return true;
}

Result<bool> StreamingReader::next_chunk(GaussianBlock& out) {
    if (truncation_ && !chunk_slot_.valid) return *truncation_;
    FOURDGS_ASSIGN(bool have, next_chunk_bins(bins_));
    if (!have) return false;
    out.clear();
    dequantize(builder_.scene(), bins_, out);
    return true;
}

Result<LoadedScene> read_streaming(ByteSource& source, const ReaderOptions& options) {
    StreamingReader reader(source, options);
    LoadedScene loaded;
    auto opened = reader.open();
    if (!opened.ok() && opened.error().kind != ErrorKind::truncated) return std::move(opened).error();
    GaussianBlock block;
    while (true) {
        auto r = reader.next_chunk(block);
        if (!r.ok()) {
            if (r.error().kind != ErrorKind::truncated) return std::move(r).error();
            loaded.truncation = r.error();
            break;
        }
        if (!*r) break;
        loaded.gaussians.append(block);
    }
    loaded.info = reader.scene();
    return loaded;
}

}  // namespace fourdgs
