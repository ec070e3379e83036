// fourdgs/detail/record_stream.hpp — records, one after another, from any byte source (§4.1, §4.2, §4.5,
// §5.2), and whole records fetched by the ranges an index names (§5.8). Every front-end frames
// records through this layer and no other.
//
// RecordStream reads the record at its position: first its 9-byte frame (opcode, then
// content_length read little-endian), then its content, a prefix of it, or nothing. A record cut
// by the end of the data is reported as truncated and never interpreted (M132); a content_length
// that runs past the end of a source of known size is such a cut whatever the limit, and one over
// max_record_bytes is limit-exceeded before anything is allocated. As whole records pass, the
// stream keeps the trailing run of summary records (§4.5), so a front-end checks summary_start
// and summary_crc at the Footer without buffering the file, and, when asked, a log of every
// record (offset, opcode, length). After the Footer comes the trailing magic.
//
// It reads in two ways. Front to back from byte 8 on any source (the streaming front-ends and
// the validator): the data ends where the source does. Or confined to a region [at, end) of a
// random-access source (the indexed reader's walk of the front matter and of the gaps between
// indexed ranges, and its scan of a file without an index): a record that crosses `end` is
// refused as the region says, and content is read only when asked (whole, or a prefix: the
// fields before a payload, a chunk's header).
//
// RangeFetcher is the indexed front-ends' read: a byte range of a random-access source of known
// size, counted; a whole record by the range an index entry names, checked to frame exactly one
// record of the expected opcode (fetch_framed); and the SH band records of a chunk up to a degree
// (fetch_sh_bands, which reads a Chunk Index entry and so is defined by the index layer,
// src/index/index_check.cpp, as append_ranges is).
//
// Thread safety: a RecordStream is used by one thread at a time. A RangeFetcher may be used from
// several threads at once when its source's read_at is thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fourdgs/detail/findings.hpp"
#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/wire.hpp"

FOURDGS_DETAIL_BEGIN
namespace fourdgs::detail {

// What a record's first 9 bytes say (§4.2).
struct RecordFrame {
    std::uint8_t opcode = 0;
    std::uint64_t offset = 0;          // absolute offset of the opcode byte
    std::uint64_t content_length = 0;

    std::uint64_t content_offset() const noexcept { return offset + kRecordHeaderSize; }
    std::uint64_t end_offset() const noexcept { return content_offset() + content_length; }
    std::uint64_t total_length() const noexcept { return kRecordHeaderSize + content_length; }
};

// A record read from a source: its bytes (the 9-byte frame, then its content or a prefix of it)
// and the view over them. `view.content` views `bytes`, so it lives as long as they do and moves
// with them.
struct HeldRecord {
    std::vector<std::uint8_t> bytes;
    RecordView view;
};

// §4.5, for a reader that goes front to back: the trailing run of summary records, retained as
// it passes so summary_crc can be checked at the Footer without buffering the file. Records the
// format does not define stay inside a run (readers skip them); a defined content record or a
// chunk ends it. RecordStream keeps one; a front-end reads it at the Footer.
class SummaryRun {
public:
    // Every whole record other than a chunk, in file order (`bytes` = header + content).
    void add(std::uint8_t opcode, std::uint64_t offset, Bytes bytes);
    // A chunk (or Delta Chunk, or SH band) arrived: whatever run there was is not the summary.
    void end() noexcept { active_ = false; }
    // At the Footer: summary_start must name the run's first byte (summary-not-contiguous when a
    // content record sits inside it, summary-start-mismatch otherwise). `footer_content` is the
    // Footer's content offset, for messages.
    Status check_start(const Footer& footer, std::uint64_t footer_content) const;
    // The CRC-32 of the run so far (§4.5: the bytes summary_crc covers, once check_start holds).
    std::uint32_t crc() const noexcept { return crc_; }

private:
    bool active_ = false;
    std::uint64_t start_ = 0;
    std::uint32_t crc_ = 0;
    std::uint64_t broken_by_ = 0;  // offset of the content record that last ended a run
};

// §5.2, §4.5: what a Footer's summary_crc says of the summary bytes whose CRC-32 is `crc`. A
// mismatch is not a refusal (§4.5's checksum guards the summary, not the content: the content
// is still read, by the scan an indexed reader falls back to, and summary_crc_verified stays
// false); the validator reports it as summary-crc-mismatch (summary_crc_mismatch below).
enum class SummaryCrc : std::uint8_t { not_stated, verified, mismatch };
SummaryCrc compare_summary_crc(const Footer& footer, std::uint32_t crc) noexcept;
// summary-crc-mismatch at the field, for a Footer at whose content offset is `footer_content`.
Error summary_crc_mismatch(const Footer& footer, std::uint32_t crc, std::uint64_t footer_content);

// §5.2: a non-zero summary_start must lie in [8, footer_start], where the Footer begins;
// summary-out-of-range otherwise, at `footer_content` (the Footer's content offset).
Status check_summary_start(const Footer& footer, std::uint64_t footer_start,
                           std::uint64_t footer_content);

// Where a region of records ends and what crossing that end means: a record whose frame or
// content runs past `end` is refused as `refusal` (kind malformed), the message naming what lies
// at `end` (`boundary`, e.g. "the Footer") and why that is the fault it is (`why`, may be empty).
struct RecordRegion {
    std::uint64_t end = 0;
    std::string_view refusal = refusal::kTruncated;
    std::string boundary;
    std::string why;
};

// What check_tail found after a Footer.
enum class AfterFooter : std::uint8_t {
    end,             // the trailing magic ends the data
    trailing_bytes,  // bytes follow the trailing magic (§4 allows none; readers count them)
    records,         // not the magic: more records follow (footer-not-last, taken and gone past)
    refused,         // a refusal was taken: a cut or a wrong trailing magic, or the sink stopped
};

class RecordStream {
public:
    // Reads `source` from byte `at` (just after the magic by default). Content longer than
    // `max_record_bytes` is refused when it is read. The source must outlive the stream.
    RecordStream(ByteSource& source, std::uint64_t max_record_bytes,
                 std::uint64_t at = kMagicSize)
        : source_(&source), max_record_bytes_(max_record_bytes), position_(at) {}

    // §4.1: the magic at byte 0. Refusals: magic-mismatch, unsupported-major-version, truncated.
    // The stream does not move.
    Status read_magic();

    // Confines the stream to [position(), region.end) of a random-access source. seek() moves
    // within it; a later confine() replaces it.
    void confine(RecordRegion region) { region_ = std::move(region); }
    void seek(std::uint64_t at) noexcept { position_ = at; }
    std::uint64_t position() const noexcept { return position_; }

    // The frame of the record at position(), its content unread; nullopt when the data (or the
    // region) ends exactly there. The stream stays at the record: read_content, read_prefix or
    // skip follows. Refusals, at the record's offset: missing-footer (kind truncated) when the
    // data ends with 8 bytes of magic where a record should start; truncated when fewer than 9
    // bytes remain or
    // content_length runs past the end of a source of known size; in a region, the region's
    // refusal when the record crosses its end.
    Result<std::optional<RecordFrame>> next_frame();

    // Reads the content of `frame` (the one next_frame just gave) into `out` and steps past the
    // record; the record joins the summary run and the log. Refusals: limit-exceeded when
    // content_length exceeds max_record_bytes (nothing is read and the stream stays, so a caller
    // may skip() it), truncated when the data ends inside the content. `out` grows only as bytes
    // arrive, so a lying length on a pipe allocates nothing it does not receive.
    Status read_content(const RecordFrame& frame, HeldRecord& out);
    // Reads the first min(n, content_length) content bytes of `frame` into `out` (its view's
    // content is that prefix, its content_length the record's); the stream does not move.
    // Random-access sources only. Refusal truncated on a short read.
    Status read_prefix(const RecordFrame& frame, std::uint64_t n, HeldRecord& out);
    // Steps past `frame` without reading its content.
    void skip(const RecordFrame& frame) noexcept { position_ = frame.end_offset(); }

    // next_frame then read_content: true with the record in `out`, false at the end of the data.
    Result<bool> next(HeldRecord& out);

    // The truncation of a file whose data ends at position(), before its Footer.
    Error ended_without_footer() const;
    // After next_frame() refused a frame cut by the end of the data: whether the bytes found
    // where the frame should have been are the trailing magic, so that the refusal was
    // missing-footer (the data is all there, its Footer is not) rather than a cut.
    bool cut_at_trailing_magic() const noexcept;

    // §4.5, §5.2, §4.1, after next() read the Footer `record` (parsed as `footer`): summary_start
    // in range (check_summary_start) and against the run of summary records before it
    // (SummaryRun::check_start), and summary_crc
    // when `verify_crc` (the answer in `crc`, never a refusal); then what follows the Footer
    // (check_tail): the stream steps past the trailing magic, and counts the bytes after it,
    // which a reader accepts and reports (trailing_bytes()).
    Status finish(const RecordView& record, const Footer& footer, bool verify_crc,
                  SummaryCrc& crc);
    // finish()'s second step, §4, §4.1, after next() read a Footer: the first up to 9 bytes
    // after it. The trailing magic, alone or with bytes after it, is clean: the stream steps past
    // the magic. Not the magic: footer-not-last when more than 8 bytes follow (the Footer is not
    // the last record: a repeated Footer, or one mid-file), else check_trailing_magic's refusal.
    // A refusal goes to `findings` (a reader's stops there: refused, the refusal in
    // findings.outcome()). A footer-not-last taken by a sink that goes on (the validator's) is
    // records: the stream stays at the Footer's end and the walk reads on. Refusals (returned):
    // the source's.
    Result<AfterFooter> check_tail(Findings& findings);
    // finish()'s first step, for a caller that goes on past a fault (the validator): the Footer
    // `record`'s summary_start in range and against the summary run, then, when `verify_crc`, the
    // answer about summary_crc in `crc` (not_stated until both hold; never a refusal).
    Status check_summary(const RecordView& record, const Footer& footer, bool verify_crc,
                         SummaryCrc& crc) const;

    // §4.1 at the end: `found` are the bytes after the Footer, `at` where they start. Refusals:
    // truncated when fewer than 8 (the file ends inside the trailing magic), check_magic's
    // otherwise ("trailing magic: ..."). Bytes after the 8 are not looked at.
    static Status check_trailing_magic(Bytes found, std::uint64_t at);
    // After finish(): the bytes after the trailing magic (§4 allows none; readers keep the
    // content and report the count, the validator reports bytes-after-magic).
    std::uint64_t trailing_bytes() const noexcept { return trailing_bytes_; }

    const SummaryRun& summary_run() const noexcept { return run_; }
    void enable_log(bool on) noexcept { log_records_ = on; }
    const std::vector<RecordEntry>& log() const noexcept { return log_; }
    // Bytes read from the source so far (frames, contents, prefixes, magic).
    std::uint64_t bytes_read() const noexcept { return bytes_read_; }

private:
    Error crossing(std::string what, std::uint64_t at) const;

    ByteSource* source_;
    std::uint64_t max_record_bytes_;
    std::uint64_t position_;
    std::optional<RecordRegion> region_;
    SummaryRun run_;
    bool log_records_ = false;
    std::vector<RecordEntry> log_;
    std::uint64_t bytes_read_ = 0;
    std::uint64_t trailing_bytes_ = 0;
    std::array<std::uint8_t, kRecordHeaderSize> cut_frame_{};
    std::size_t cut_frame_size_ = 0;
};

// index-record-mismatch about Chunk Index field `field` (e.g. "chunk_length"), at `at`.
Error index_record_mismatch(std::string_view field, std::string message, std::uint64_t at);

// The Chunk Index fields an indexed range came from, named when the range does not frame the
// record it should (§5.8): its length, and what decided the opcode expected there.
struct RangeOrigin {
    std::string_view length_field = "chunk_length";
    std::string_view opcode_field = "chunk_offset";
};

class RangeFetcher {
public:
    // Ranges of `source` (random-access, of known size), none longer than `max_bytes`.
    RangeFetcher(ByteSource& source, std::uint64_t max_bytes)
        : source_(&source), max_bytes_(max_bytes),
          fetched_(std::make_unique<std::atomic<std::uint64_t>>(0)) {}

    ByteSource& source() const noexcept { return *source_; }

    // Reads exactly [offset, offset + length) into `out` (read_range, io.hpp: index-out-of-range,
    // limit-exceeded, truncated) and counts it.
    Status fetch(std::uint64_t offset, std::uint64_t length, std::vector<std::uint8_t>& out) const;
    // The same, appended to `out` after the bytes it holds (append_range).
    Status fetch_append(std::uint64_t offset, std::uint64_t length,
                        std::vector<std::uint8_t>& out) const;

    // §5.8: fetches [offset, offset + length), a range an index entry names, and checks that it
    // frames exactly one whole record of `opcode`: the record's own content_length must make it
    // `length` bytes (index-record-mismatch naming origin.length_field, checked before anything
    // is parsed, so a range that cuts its record is the index's fault and not a truncated file,
    // unless the record's own length runs past the end of the file: truncated, as RecordStream
    // says of it) and its opcode must be `opcode` (index-record-mismatch naming
    // origin.opcode_field). Other refusals: fetch's; truncated when `length` is under 9. The
    // record is read into the first `length` bytes of `buffer`, which keeps its size when it is
    // longer (its bytes past the record mean nothing); the view borrows them.
    Result<RecordView> fetch_framed(std::uint64_t offset, std::uint64_t length,
                                    std::uint8_t opcode, std::vector<std::uint8_t>& buffer,
                                    RangeOrigin origin = {}) const;
    // fetch_framed, the record appended to `buffer` after the bytes it holds (which stay): for a
    // caller that gathers records in one buffer, as a merge gathers a chunk and its SH Band
    // records to copy them whole into another file. The view borrows the appended bytes.
    Result<RecordView> fetch_framed_append(std::uint64_t offset, std::uint64_t length,
                                           std::uint8_t opcode, std::vector<std::uint8_t>& buffer,
                                           RangeOrigin origin = {}) const;

    // §5.7, §5.8: the SH Band Stream records of bands 1..`want` that index entry `entry` names,
    // fetched whole (never a band above `want`) into `buffers` and gathered into `out` as every
    // path gathers them (ChunkBands::add_to, detail/chunk_bands.hpp; band b at out[b - 1]; `out`
    // is cleared first). A band the entry does not name ends the list, or with
    // `require_all` is missing-sh-band. Refusals: duplicate-sh-band (the entry names band b twice),
    // index-record-mismatch naming 'bands' (a range that does not frame an SH Band Stream record
    // of band b), and fetch_framed's. Views in `out` borrow `buffers`.
    Status fetch_sh_bands(const ChunkIndex& entry, int want, bool require_all,
                          std::array<std::vector<std::uint8_t>, 3>& buffers,
                          std::vector<ShBandRecord>& out) const;

    // The opcode of the record at `offset` (one byte fetched): for a caller that frames what an
    // index names by what is there. Refusals: fetch's.
    Result<std::uint8_t> opcode_at(std::uint64_t offset) const;

    // The ranges fetching index entry `entry` reads: its record (fetch_framed), then the SH Band
    // Stream records of bands 1..`want` it names (fetch_sh_bands). Their lengths sum to the
    // entry's fetch cost.
    static void append_ranges(const ChunkIndex& entry, int want, std::vector<ByteRange>& out);

    // Announces `ranges` before they are fetched (ByteSource::prefetch): a remote source gets
    // them together in as few round trips as it can, a local one ignores it. Refusals: the
    // source's (those the fetches would have met too).
    Status prefetch(std::span<const ByteRange> ranges) const { return source_->prefetch(ranges); }

    // Bytes fetched so far, plus those counted with count().
    std::uint64_t bytes_fetched() const noexcept { return fetched_->load(); }
    void count(std::uint64_t bytes) const noexcept {
        fetched_->fetch_add(bytes, std::memory_order_relaxed);
    }

private:
    // fetch_framed's checks of `record`, the bytes fetched from [offset, offset + length).
    Result<RecordView> framed(Bytes record, std::uint64_t offset, std::uint64_t length,
                              std::uint8_t opcode, RangeOrigin origin) const;
    ByteSource* source_;
    std::uint64_t max_bytes_;
    std::unique_ptr<std::atomic<std::uint64_t>> fetched_;
};

// Records held in memory, one after another from absolute offset `base`: a summary fetched
// whole, a chunk with its SH Band Stream records, the content records a writer made. Framed as
// RecordStream frames a source (§4.2), without a copy: each view borrows `bytes`. Refusal:
// truncated, at the record, when its frame or content runs past the bytes.
class RecordsInMemory {
public:
    RecordsInMemory(Bytes bytes, std::uint64_t base) noexcept : bytes_(bytes), base_(base) {}

    // The next record; nullopt after the last.
    Result<std::optional<RecordView>> next();
    // The absolute offset of the next record.
    std::uint64_t position() const noexcept { return base_ + at_; }

private:
    Bytes bytes_;
    std::uint64_t base_;
    std::size_t at_ = 0;
};

// §4.1, §5.2: the last 37 bytes of a random-access file, the Footer record and the trailing magic.
struct FooterTail {
    Footer footer;
    std::uint64_t footer_start = 0;  // the Footer record's offset

    std::uint64_t content_offset() const noexcept { return footer_start + kRecordHeaderSize; }
};

// Reads the tail of a source of `size` bytes. Refusals: truncated (too short for the magic and
// the tail), check_trailing_magic's, bad-footer (the 37 bytes before the trailing magic are not a
// Footer record with 20 bytes of content), parse_footer's, the fetch's.
Result<FooterTail> read_footer_tail(const RangeFetcher& fetcher, std::uint64_t size);

// §4.5, §5.2: the summary [summary_start, footer_start) that `tail` names (summary_start != 0),
// fetched whole into `bytes` after summary_start is checked in range (check_summary_start).
// Refusals: limit-exceeded when it is longer than `max_bytes` (nothing is fetched); with
// `verify_crc`, summary-crc-mismatch (a summary that fails its CRC is not used, §4.5), the answer
// otherwise in `crc`; the fetch's. Its records are then walked with RecordsInMemory.
Status fetch_summary(const RangeFetcher& fetcher, const FooterTail& tail, std::uint64_t max_bytes,
                     bool verify_crc, std::vector<std::uint8_t>& bytes, SummaryCrc& crc);

}  // namespace fourdgs::detail
FOURDGS_DETAIL_END
