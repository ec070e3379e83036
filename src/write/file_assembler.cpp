// FileAssembler (fourdgs/detail/file_assembler.hpp): the magic, the chunks' index entries, the summary,
// its CRC, the Footer and the trailing magic, for both writers.
#include "fourdgs/detail/file_assembler.hpp"

#include <string>

namespace fourdgs::detail {

Status FileAssembler::write(Bytes bytes) {
    FOURDGS_TRY(sink_->write(bytes));
    position_ += bytes.size();
    return ok_status();
}

Status FileAssembler::begin(const Header& header, const Quantization& quantization,
                            const WindowTable& windows) {
    ByteWriter w;
    // Reserved up front: GCC 12 otherwise sees the first insert into the empty buffer as a
    // -Wstringop-overflow (a false positive, but CI builds with -Werror).
    w.buffer().reserve(kMagic.size() + 4096);
    w.raw(Bytes(kMagic));
    fourdgs::write(w, header);
    fourdgs::write(w, quantization);
    fourdgs::write(w, windows);
    return put(w);
}

Status FileAssembler::put(Bytes records) {
    if (finished_)
        return make_error(ErrorKind::invalid_argument, refusal::kWriterFinished,
                          "records put after finish()");
    return write(records);
}

Status FileAssembler::put(ByteWriter& records) {
    FOURDGS_TRY(put(Bytes(records.buffer())));
    records.buffer().clear();
    return ok_status();
}

Status FileAssembler::add_chunk(const ChunkRecords& c) {
    if (finished_)
        return make_error(ErrorKind::invalid_argument, refusal::kWriterFinished,
                          "a chunk added after finish()");
    std::uint64_t framed = c.chunk_length;
    const bool bands_ok = c.bands >= 0 && c.bands <= 3;
    for (int b = 0; bands_ok && b < c.bands; ++b) framed += c.band_length[b];
    if (!bands_ok || framed != c.bytes.size())
        return make_error(ErrorKind::invalid_argument, refusal::kInputSizeMismatch,
                          "a chunk of " + std::to_string(c.bytes.size()) + " bytes is framed as " +
                              std::to_string(framed) + " (chunk record plus " +
                              std::to_string(c.bands) + " SH band records)")
            .about("ChunkRecords.bytes", std::to_string(c.bytes.size()));
    ChunkIndex e;
    e.t0 = c.t0;
    e.t1 = c.t1;
    e.chunk_offset = position_;
    e.chunk_length = c.chunk_length;
    e.gaussian_count = c.gaussian_count;
    std::uint64_t at = position_ + c.chunk_length;
    for (int b = 1; b <= c.bands; ++b) {
        e.bands.push_back({static_cast<std::uint8_t>(b), at, c.band_length[b - 1]});
        at += c.band_length[b - 1];
    }
    e.keyframe = c.keyframe;
    if (e.keyframe && e.keyframe->chunk_kind == 0) e.keyframe->keyframe_offset = position_;
    FOURDGS_TRY(write(c.bytes));
    index_.push_back(std::move(e));
    return ok_status();
}

Status FileAssembler::finish(const SummaryOptions& options, const Statistics& statistics) {
    if (finished_)
        return make_error(ErrorKind::invalid_argument, refusal::kWriterFinished,
                          "finish() called twice");
    finished_ = true;
    const std::uint64_t start = position_;
    ByteWriter summary;
    std::uint64_t group_length = 0;
    if (options.index) {
        for (const ChunkIndex& e : index_) fourdgs::write(summary, e);
        group_length = summary.size();
    }
    if (options.statistics) fourdgs::write(summary, statistics);
    std::uint64_t offset_start = 0;
    if (options.index && options.summary_offset && !index_.empty()) {
        offset_start = start + summary.size();
        fourdgs::write(summary, SummaryOffset{op::chunk_index, start, group_length});
    }
    const std::uint32_t crc = crc32(summary.buffer());
    FOURDGS_TRY(write(summary.buffer()));

    // An empty summary (no chunks to index, no Statistics) is no summary: summary_start 0, as
    // §5.2 spells it, never a start that names no record.
    const bool has_summary = options.index && summary.size() > 0;
    Footer footer;
    footer.summary_start = has_summary ? start : 0;
    footer.summary_offset_start = offset_start;
    footer.summary_crc = has_summary && options.crc ? crc : 0;
    ByteWriter tail;
    tail.buffer().reserve(kTailSize);  // the Footer record and the trailing magic
    fourdgs::write(tail, footer);
    tail.raw(Bytes(kMagic));
    FOURDGS_TRY(write(tail.buffer()));
    return sink_->flush();
}

}  // namespace fourdgs::detail
