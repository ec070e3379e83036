// Records from any byte source, and whole records by indexed ranges (fourdgs/detail/record_stream.hpp).
#include "fourdgs/detail/record_stream.hpp"

#include <algorithm>
#include <string>

namespace fourdgs::detail {
namespace {

Error truncated_at(std::uint64_t offset, std::string message) {
    return make_error(ErrorKind::truncated, refusal::kTruncated, std::move(message), offset);
}

}  // namespace

Error index_record_mismatch(std::string_view field, std::string message, std::uint64_t at) {
    return make_error(ErrorKind::malformed, refusal::kIndexRecordMismatch,
                      "Chunk Index field '" + std::string(field) +
                          "' disagrees with the record: " + std::move(message),
                      at)
        .about("Chunk Index." + std::string(field));
}

// ---------------------------------------------------------------------------------------------
// The summary run (§4.5) and the Footer's offsets (§5.2).

void SummaryRun::add(std::uint8_t opcode, std::uint64_t offset, Bytes bytes) {
    if (is_summary_opcode(opcode)) {
        if (!active_) {
            active_ = true;
            start_ = offset;
            crc_ = 0;
        }
        crc_ = crc32(bytes, crc_);
    } else if (active_ && !is_defined_opcode(opcode)) {
        crc_ = crc32(bytes, crc_);
    } else {
        if (active_) broken_by_ = offset;
        active_ = false;
    }
}

Status SummaryRun::check_start(const Footer& f, std::uint64_t footer_content) const {
    if (f.summary_start == 0) return ok_status();
    const bool matches = active_ && start_ == f.summary_start;
    if (!matches && active_ && f.summary_start < start_ && broken_by_ >= f.summary_start)
        return make_error(ErrorKind::malformed, refusal::kSummaryNotContiguous,
                          "a content record at byte " + std::to_string(broken_by_) +
                              " sits inside the summary that starts at " +
                              std::to_string(f.summary_start) + " (§4.5)",
                          broken_by_)
            .about("", std::to_string(f.summary_start));
    if (!matches)
        return make_error(ErrorKind::malformed, refusal::kSummaryStartMismatch,
                          "Footer summary_start is " + std::to_string(f.summary_start) +
                              " but the summary records before the Footer start at " +
                              (active_ ? std::to_string(start_)
                                       : std::string("no byte (there are none)")),
                          footer_content)
            .about("", std::to_string(f.summary_start));
    return ok_status();
}

SummaryCrc compare_summary_crc(const Footer& f, std::uint32_t crc) noexcept {
    if (f.summary_crc == 0) return SummaryCrc::not_stated;
    return crc == f.summary_crc ? SummaryCrc::verified : SummaryCrc::mismatch;
}

Error summary_crc_mismatch(const Footer& f, std::uint32_t crc, std::uint64_t footer_content) {
    return make_error(ErrorKind::malformed, refusal::kSummaryCrcMismatch,
                      "summary_crc is " + std::to_string(f.summary_crc) +
                          " but the summary bytes hash to " + std::to_string(crc),
                      footer_content + 16)
        .about("", std::to_string(f.summary_crc));
}

Status check_summary_start(const Footer& f, std::uint64_t footer_start,
                           std::uint64_t footer_content) {
    if (f.summary_start == 0 || (f.summary_start >= kMagicSize && f.summary_start <= footer_start))
        return ok_status();
    return make_error(ErrorKind::malformed, refusal::kSummaryOutOfRange,
                      "summary_start " + std::to_string(f.summary_start) + " is outside [8, " +
                          std::to_string(footer_start) + "]",
                      footer_content)
        .about("", std::to_string(f.summary_start));
}

// ---------------------------------------------------------------------------------------------
// RecordStream.

Status RecordStream::read_magic() {
    std::uint8_t magic[kMagicSize];
    FOURDGS_ASSIGN(std::size_t got, source_->read_at(0, magic));
    bytes_read_ += got;
    return check_magic(std::span(magic, got), 0);
}

Error RecordStream::crossing(std::string what, std::uint64_t at) const {
    return make_error(ErrorKind::malformed, region_->refusal,
                      std::move(what) + region_->boundary + region_->why, at);
}

bool RecordStream::cut_at_trailing_magic() const noexcept {
    return cut_frame_size_ == kMagicSize &&
           std::equal(kMagic.begin(), kMagic.end(), cut_frame_.begin());
}

Result<std::optional<RecordFrame>> RecordStream::next_frame() {
    const std::uint64_t at = position_;
    std::uint8_t head[kRecordHeaderSize];
    if (region_) {
        if (at >= region_->end) return std::optional<RecordFrame>{};
        if (region_->end - at < kRecordHeaderSize)
            return crossing("a record header at byte " + std::to_string(at) + " runs into ", at);
        FOURDGS_TRY(source_->read_exact(at, head));
        bytes_read_ += kRecordHeaderSize;
    } else {
        FOURDGS_ASSIGN(std::size_t got, source_->read_at(at, head));
        bytes_read_ += got;
        if (got == 0) return std::optional<RecordFrame>{};
        if (got < kRecordHeaderSize) {
            std::copy(head, head + got, cut_frame_.begin());
            cut_frame_size_ = got;
            // Eight bytes of trailing magic where a record should start: the data is all there
            // but its Footer is not (§5.2). Still a cut for recovery (the records before it are
            // kept), named for what it is, as the validator names it.
            if (cut_at_trailing_magic())
                return make_error(ErrorKind::truncated, refusal::kMissingFooter,
                                  "the trailing magic at byte " + std::to_string(at) +
                                      " follows no Footer record; the Footer must be the last "
                                      "record (§5.2)",
                                  at)
                    .about(opcode_name(op::footer));
            return truncated_at(at, "the file ends inside a record header (" +
                                        std::to_string(got) + " of 9 bytes)")
                .about("", std::to_string(got));
        }
    }
    RecordFrame frame{head[0], at, read_le64(head + 1)};
    const std::string name = opcode_name(frame.opcode);
    if (region_) {
        if (frame.content_length > region_->end - at - kRecordHeaderSize)
            return crossing(name + " record at byte " + std::to_string(at) +
                                " declares content_length " +
                                std::to_string(frame.content_length) + ", past ",
                            at);
    } else if (auto size = source_->size();
               size && frame.content_length > *size - std::min(*size, at + kRecordHeaderSize)) {
        // A length past the end of a source of known size is a cut (or lying) record, whatever
        // the limit: reported as such before it is judged against the limit.
        const std::uint64_t remain = *size - std::min(*size, at + kRecordHeaderSize);
        return truncated_at(at, name + " record declares content_length " +
                                    std::to_string(frame.content_length) + " but only " +
                                    std::to_string(remain) + " bytes remain in the file")
            .about(name + ".content_length", std::to_string(frame.content_length));
    }
    return std::optional<RecordFrame>{frame};
}

Status RecordStream::read_content(const RecordFrame& frame, HeldRecord& out) {
    const std::string name = opcode_name(frame.opcode);
    if (frame.content_length > max_record_bytes_)
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          name + " record at byte " + std::to_string(frame.offset) +
                              " declares content_length " + std::to_string(frame.content_length) +
                              ", over the configured limit of " + std::to_string(max_record_bytes_),
                          frame.offset)
            .about(name + ".content_length", std::to_string(frame.content_length));
    out.bytes.resize(kRecordHeaderSize);
    out.bytes[0] = frame.opcode;
    for (std::size_t i = 0; i < 8; ++i)
        out.bytes[1 + i] = static_cast<std::uint8_t>(frame.content_length >> (8 * i));
    FOURDGS_ASSIGN(std::uint64_t body, read_growing(*source_, frame.content_offset(),
                                                    frame.content_length, out.bytes));
    bytes_read_ += body;
    if (body < frame.content_length)
        return truncated_at(frame.offset, name + " record at byte " + std::to_string(frame.offset) +
                                              " is cut after " + std::to_string(body) + " of " +
                                              std::to_string(frame.content_length) +
                                              " content bytes")
            .about(name + ".content_length", std::to_string(frame.content_length));
    out.view = RecordView{frame.opcode, frame.offset, frame.content_length,
                          Bytes(out.bytes).subspan(kRecordHeaderSize)};
    position_ = frame.end_offset();
    // §4.5: chunks and their bands end a summary run; the Footer closes it; the rest joins it.
    if (frame.opcode == op::chunk || frame.opcode == op::delta_chunk || frame.opcode == op::sh_band)
        run_.end();
    else if (frame.opcode != op::footer)
        run_.add(frame.opcode, frame.offset, out.bytes);
    if (log_records_) log_.push_back({frame.opcode, frame.offset, frame.total_length()});
    return ok_status();
}

Status RecordStream::read_prefix(const RecordFrame& frame, std::uint64_t n, HeldRecord& out) {
    const std::uint64_t take = std::min(n, frame.content_length);
    out.bytes.resize(static_cast<std::size_t>(kRecordHeaderSize + take));
    FOURDGS_TRY(source_->read_exact(frame.offset, out.bytes));
    bytes_read_ += out.bytes.size();
    out.view = RecordView{frame.opcode, frame.offset, frame.content_length,
                          Bytes(out.bytes).subspan(kRecordHeaderSize)};
    return ok_status();
}

Result<bool> RecordStream::next(HeldRecord& out) {
    FOURDGS_ASSIGN(std::optional<RecordFrame> frame, next_frame());
    if (!frame) return false;
    FOURDGS_TRY(read_content(*frame, out));
    return true;
}

Error RecordStream::ended_without_footer() const {
    return truncated_at(position_, "the file ends at byte " + std::to_string(position_) +
                                       " without a Footer")
        .about(opcode_name(op::footer));
}

Status RecordStream::check_trailing_magic(Bytes found, std::uint64_t at) {
    if (found.size() < kMagicSize)
        return truncated_at(at, "the file ends inside the trailing magic (" +
                                    std::to_string(found.size()) + " of 8 bytes)")
            .about("magic", std::to_string(found.size()));
    Status magic = check_magic(found.first(kMagicSize), at);
    if (magic.ok()) return magic;
    Error e = magic.error();
    e.message = "trailing magic: " + e.message;
    return e;
}

Status RecordStream::check_summary(const RecordView& record, const Footer& footer,
                                   bool verify_crc, SummaryCrc& crc) const {
    crc = SummaryCrc::not_stated;
    FOURDGS_TRY(check_summary_start(footer, record.offset, record.content_offset()));
    FOURDGS_TRY(run_.check_start(footer, record.content_offset()));
    if (verify_crc && footer.summary_start != 0) crc = compare_summary_crc(footer, run_.crc());
    return ok_status();
}

Status RecordStream::finish(const RecordView& record, const Footer& footer, bool verify_crc,
                            SummaryCrc& crc) {
    FOURDGS_TRY(check_summary(record, footer, verify_crc, crc));
    Findings first;
    FOURDGS_ASSIGN(AfterFooter after, check_tail(first));
    FOURDGS_TRY(first.outcome());
    if (after != AfterFooter::trailing_bytes) return ok_status();
    // Bytes after the trailing magic: counted without being kept (by the size when it is known,
    // else read to the end in small steps).
    if (auto size = source_->size()) {
        trailing_bytes_ = *size - position_;
        return ok_status();
    }
    std::uint8_t skip[4096];
    trailing_bytes_ = 1;  // the one read with the magic
    for (std::uint64_t at = position_ + 1;;) {
        FOURDGS_ASSIGN(std::size_t n, source_->read_at(at, skip));
        if (n == 0) break;
        at += n;
        trailing_bytes_ += n;
    }
    return ok_status();
}

Result<AfterFooter> RecordStream::check_tail(Findings& findings) {
    std::uint8_t after[kMagicSize + 1];
    FOURDGS_ASSIGN(std::size_t got, source_->read_at(position_, after));
    bytes_read_ += got;
    const Bytes found(after, got);
    const bool magic =
        got >= kMagicSize && std::equal(kMagic.begin(), kMagic.end(), found.begin());
    if (got > kMagicSize && !magic) {
        const bool past = findings.take(make_error(
            ErrorKind::malformed, refusal::kFooterNotLast,
            "the Footer record ending at byte " + std::to_string(position_) +
                " is followed by more data rather than the trailing magic; the Footer must be "
                "the last record (§4)",
            position_));
        return past ? AfterFooter::records : AfterFooter::refused;
    }
    if (Status end = check_trailing_magic(found.first(std::min<std::size_t>(got, kMagicSize)),
                                          position_);
        !end.ok()) {
        (void)findings.take(std::move(end).error());
        return AfterFooter::refused;
    }
    position_ += kMagicSize;
    return got > kMagicSize ? AfterFooter::trailing_bytes : AfterFooter::end;
}

// ---------------------------------------------------------------------------------------------
// RangeFetcher.

Status RangeFetcher::fetch(std::uint64_t offset, std::uint64_t length,
                           std::vector<std::uint8_t>& out) const {
    FOURDGS_TRY(read_range(*source_, offset, length, max_bytes_, out));  // overwrites in place
    count(length);
    return ok_status();
}

Status RangeFetcher::fetch_append(std::uint64_t offset, std::uint64_t length,
                                  std::vector<std::uint8_t>& out) const {
    FOURDGS_TRY(append_range(*source_, offset, length, max_bytes_, out));
    count(length);
    return ok_status();
}

Result<std::uint8_t> RangeFetcher::opcode_at(std::uint64_t offset) const {
    std::vector<std::uint8_t> first;
    FOURDGS_TRY(fetch(offset, 1, first));
    return first[0];
}

Result<RecordView> RangeFetcher::fetch_framed(std::uint64_t offset, std::uint64_t length,
                                              std::uint8_t opcode,
                                              std::vector<std::uint8_t>& buffer,
                                              RangeOrigin origin) const {
    // Read into the first `length` bytes, the buffer keeping its size when it is longer: one
    // reused for records of varying lengths (a keyframe, its deltas, the next keyframe) zeroes
    // only what it grows past its longest record, once, instead of each time it regrows.
    FOURDGS_TRY(check_read_range(*source_, offset, length, max_bytes_));
    const auto n = static_cast<std::size_t>(length);
    if (buffer.size() < n) size_for_range(buffer, n);
    const std::span<std::uint8_t> record = std::span(buffer).first(n);
    FOURDGS_TRY(source_->read_exact(offset, record));
    count(length);
    return framed(record, offset, length, opcode, origin);
}

Result<RecordView> RangeFetcher::fetch_framed_append(std::uint64_t offset, std::uint64_t length,
                                                     std::uint8_t opcode,
                                                     std::vector<std::uint8_t>& buffer,
                                                     RangeOrigin origin) const {
    const std::size_t at = buffer.size();
    FOURDGS_TRY(fetch_append(offset, length, buffer));
    return framed(Bytes(buffer).subspan(at), offset, length, opcode, origin);
}

Result<RecordView> RangeFetcher::framed(Bytes record, std::uint64_t offset, std::uint64_t length,
                                        std::uint8_t opcode, RangeOrigin origin) const {
    if (record.size() >= kRecordHeaderSize) {
        const std::uint64_t own = read_le64(&record[1]);
        const std::uint64_t size = source_->size().value_or(~std::uint64_t{0});
        const std::uint64_t remain = size - std::min(size, offset + kRecordHeaderSize);
        if (own != length - kRecordHeaderSize && own > remain) {
            // The record's own length runs past the end of the file: a cut (or lying) record,
            // whoever names it, as RecordStream reports it.
            const std::string name = opcode_name(record[0]);
            return truncated_at(offset, name + " record declares content_length " +
                                            std::to_string(own) + " but only " +
                                            std::to_string(remain) + " bytes remain in the file")
                .about(name + ".content_length", std::to_string(own));
        }
        if (own != length - kRecordHeaderSize) {
            Error e = index_record_mismatch(
                origin.length_field,
                "the index says " + std::to_string(length) + " bytes, the record at byte " +
                    std::to_string(offset) + " is " + std::to_string(kRecordHeaderSize + own),
                offset);
            e.value = std::to_string(length);
            return e;
        }
    }
    FOURDGS_ASSIGN(RecordView r, parse_record(record, offset));
    if (r.opcode != opcode) {
        Error e = index_record_mismatch(origin.opcode_field,
                                        "byte " + std::to_string(offset) + " holds a " +
                                            opcode_name(r.opcode) + " record, not a " +
                                            opcode_name(opcode),
                                        offset);
        e.value = std::to_string(offset);
        return e;
    }
    return r;
}

// ---------------------------------------------------------------------------------------------
// Records in memory, the tail, the summary.

Result<std::optional<RecordView>> RecordsInMemory::next() {
    if (at_ >= bytes_.size()) return std::optional<RecordView>{};
    FOURDGS_ASSIGN(RecordView r, parse_record(bytes_.subspan(at_), base_ + at_));
    at_ += static_cast<std::size_t>(r.total_length());
    return std::optional<RecordView>(r);
}

Result<FooterTail> read_footer_tail(const RangeFetcher& fetcher, std::uint64_t size) {
    if (size < kMagicSize + kTailSize)
        return make_error(ErrorKind::truncated, refusal::kTruncated,
                          "a " + std::to_string(size) +
                              "-byte file cannot hold the magic and the 37-byte tail",
                          0);
    FooterTail tail;
    tail.footer_start = size - kTailSize;
    std::vector<std::uint8_t> bytes;
    FOURDGS_TRY(fetcher.fetch(tail.footer_start, kTailSize, bytes));
    const Bytes record = Bytes(bytes).first(kRecordHeaderSize + kFooterContentSize);
    FOURDGS_TRY(RecordStream::check_trailing_magic(Bytes(bytes).subspan(record.size()),
                                                   size - kMagicSize));
    const std::uint64_t content_length = read_le64(&record[1]);
    if (record[0] != op::footer || content_length != kFooterContentSize)
        return make_error(ErrorKind::malformed, refusal::kBadFooter,
                          "the 37 bytes before the trailing magic are not a Footer record with "
                          "20 bytes of content (opcode " + std::to_string(record[0]) +
                              ", content_length " + std::to_string(content_length) + ")",
                          tail.footer_start)
            .about("Footer.content_length", std::to_string(content_length));
    FOURDGS_ASSIGN(RecordView view, parse_record(record, tail.footer_start));
    FOURDGS_ASSIGN(tail.footer, parse_footer(view));
    return tail;
}

Status fetch_summary(const RangeFetcher& fetcher, const FooterTail& tail, std::uint64_t max_bytes,
                     bool verify_crc, std::vector<std::uint8_t>& bytes, SummaryCrc& crc) {
    const Footer& footer = tail.footer;
    crc = SummaryCrc::not_stated;
    FOURDGS_TRY(check_summary_start(footer, tail.footer_start, tail.content_offset()));
    const std::uint64_t length = tail.footer_start - footer.summary_start;
    if (length > max_bytes)
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          "the summary is " + std::to_string(length) +
                              " bytes, over the configured limit",
                          footer.summary_start);
    FOURDGS_TRY(fetcher.fetch(footer.summary_start, length, bytes));
    if (!verify_crc) return ok_status();
    const std::uint32_t computed = crc32(bytes);
    crc = compare_summary_crc(footer, computed);
    if (crc == SummaryCrc::mismatch)
        return summary_crc_mismatch(footer, computed, tail.content_offset());
    return ok_status();
}

}  // namespace fourdgs::detail
