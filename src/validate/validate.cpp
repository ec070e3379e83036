// validate() (fourdgs/validate.hpp): every problem in a file, not just the first.
//
// The validator is a front-end on the same layers as the readers. A RecordStream
// (detail/record_stream.hpp) frames the records front to back; a record whose content is over the limit
// is one finding and is stepped over, and only a framing failure (a length past the end of the
// data) ends the walk. A SceneBuilder in collect mode (front_matter.hpp) assembles the scene
// with the readers' rules, reporting every rule a record breaks and going on. Chunks are decoded
// with their SH band records as they arrive (decode.hpp; one chunk and its bands in memory at a
// time). The rules that span the file — the index against the chunks (detail/index_check.hpp), the
// summary and the tail, Statistics, the provenance/audio references and the SHOULD-level advice
// — run after the walk over what was kept: small per-record summaries, never record contents.
// What is the validator's own is the advice a reader has no reason to refuse for (§5.3 bound
// spellings and finite steps, M044 length units, M062 empty trajectories, M035 legacy audio,
// reserved and private opcodes, Statistics, the tail) and the bookkeeping of findings.
//
// The Validator's passes live in the files src/validate/validator.hpp lists; this one holds the findings,
// run() (the passes in the order they are taken) and the walk that drives the first of them.
#include "fourdgs/validate.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fourdgs/records/registry.hpp"
#include "fourdgs/detail/record_stream.hpp"
#include "validator.hpp"

namespace fourdgs {

using detail::Findings;
using detail::RecordStream;
using detail::SummaryCrc;
using detail::summary_crc_mismatch;

std::size_t ValidationReport::errors() const {
    return static_cast<std::size_t>(
        std::count_if(findings.begin(), findings.end(),
                      [](const Finding& f) { return f.severity == Severity::error; }));
}
std::size_t ValidationReport::warnings() const {
    return findings.size() - errors();
}

namespace validation {

namespace {

// The section of the record a field ("Camera.position[1]") belongs to, "" for none.
std::string_view section_of_field(std::string_view field) {
    const RecordKind* k = find_record_kind_of_field(field);
    return k ? k->section : std::string_view();
}

}  // namespace

// One finding, until max_findings of them: then the report says it was capped. A fault that two
// passes meet in the same words — a §11 rule the Chunk Index and the records both break, checked
// by the same code for each (detail/keyframe_rules.hpp) — is one finding.
void Validator::add(Severity severity, std::string_view rule, std::string field,
                    std::string value, std::uint64_t offset, std::string message) {
    if (full()) return;
    if (!stated_.emplace(std::string(rule), offset, message).second) return;
    if (report_.findings.size() >= options_.max_findings) {
        report_.findings_capped = true;
        return;
    }
    Finding f;
    f.severity = severity;
    f.rule = std::string(rule);
    const RefusalInfo* info = find_refusal(rule);
    f.field = field.empty() && info ? std::string(info->field) : std::move(field);
    f.section = info ? std::string(info->section) : std::string();
    // Rules any record can break (a short field, a non-finite number, a bad flag byte) take
    // the section of the record the field belongs to.
    if (info && (info->field.empty() || f.section.empty()))
        if (std::string_view s = section_of_field(f.field); !s.empty()) f.section = std::string(s);
    f.value = std::move(value);
    f.offset = offset;
    f.message = std::move(message);
    report_.findings.push_back(std::move(f));
}

// The passes, in order: the walk (each record as it arrives), then the rules that span the file,
// over what the walk kept. The order is the order of the findings.
Result<ValidationReport> Validator::run() {
    size_ = source_.size();
    report_.file_size = size_.value_or(0);
    if (Status m = stream_.read_magic(); !m.ok()) {
        if (m.error().kind == ErrorKind::io) return m.error();
        if (m.error().kind == ErrorKind::truncated) report_.truncated = true;
        report_refusal(m.error(), "magic", 0);
        return std::move(report_);  // not a version-1 .4dgs file: nothing after this is meaningful
    }
    stream_.enable_log(true);  // the summary records, for the Summary Offset groups
    Status io;
    walk(io);
    if (!io.ok()) return std::move(io).error();
    flush_chunk();
    keyframe_delta_ = scene_.has_header && scene_.header.temporal_model == kModelKeyframeDelta;
    if (!builder_.sealed() && !report_.truncated)
        (void)builder_.seal(kNoOffset);  // a file without chunks still needs both
    check_index();              // validate_index.cpp
    check_index_by_tail();      // validate_index.cpp
    check_composition();        // validate_chunks.cpp
    check_statistics();         // validate_chunks.cpp
    check_coordinate_system();  // validate_advice.cpp
    (void)builder_.finish();  // the references between records (extras.hpp), once
    check_advice();             // validate_advice.cpp
    if (options_.progress) options_.progress(report_.file_size, report_.file_size);
    return std::move(report_);
}

// The walk ended on an error while framing or reading a record: the source failed (`io`), or
// the data ends inside a record (a finding).
void Validator::end_at_cut(const Error& e, Status& io) {
    if (e.kind != ErrorKind::truncated) {
        io = e;
        return;
    }
    // Eight bytes of trailing magic with no Footer before them: the record stream names the
    // Footer missing, and the data is all there.
    if (stream_.cut_at_trailing_magic()) {
        report_refusal(e, record_name(op::footer), stream_.position());
        return;
    }
    report_.truncated = true;
    report_refusal(e, "", stream_.position());
}

// Pass 1: every record front to back, each to the check for its kind (validate_records.cpp,
// validate_chunks.cpp, the Footer below), until the tail or a cut ends it.
void Validator::walk(Status& io) {
    while (!full()) {
        progress(stream_.position());
        auto frame = stream_.next_frame();
        if (!frame.ok()) return end_at_cut(frame.error(), io);
        if (!*frame) {
            if (!footer_) {
                report_.truncated = true;
                report_refusal(stream_.ended_without_footer(), record_name(op::footer),
                               stream_.position());
            }
            return;
        }
        ++report_.records;
        if (Status read = stream_.read_content(**frame, held_); !read.ok()) {
            if (read.error().kind != ErrorKind::limit) return end_at_cut(read.error(), io);
            Error over = read.error();
            over.message += "; its content was not checked";
            report_refusal(over, "", (*frame)->offset);
            flush_chunk();
            stream_.skip(**frame);
            continue;
        }
        const RecordView& r = held_.view;
        if (r.opcode != op::sh_band) flush_chunk();
        switch (r.opcode) {
            case op::chunk:
            case op::delta_chunk: begin_chunk(held_); break;
            case op::sh_band: absorb_band(held_); break;
            case op::footer: {
                if (!after_footer(r, io)) return;
                break;
            }
            default: absorb(r); break;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The Footer and the tail (§5.2, §4.5).

// The Footer ends the walk unless bytes other than the trailing magic follow it.
bool Validator::after_footer(const RecordView& r, Status& io) {
    footer_offset_ = r.offset;
    check_footer(r);
    return check_tail(r, io);
}

// §5.2, §4.5: the Footer's own fields, and the summary and Summary Offset they name.
void Validator::check_footer(const RecordView& r) {
    if (r.content_length != kFooterContentSize)
        error(refusal::kBadFooter, "Footer.content_length", std::to_string(r.content_length),
              r.offset,
              "the Footer declares content_length " + std::to_string(r.content_length) +
                  "; the 37-byte tail needs exactly 20 (§5.2)");
    auto f = parse_footer(r);
    if (take(f, r)) {
        footer_ = *f;
        scene_.footer = *f;
        const std::uint64_t content = r.content_offset();
        if (f->summary_start != 0) {
            // The readers' check (RecordStream::finish's first step), its fault a finding.
            SummaryCrc crc = SummaryCrc::not_stated;
            if (Status st = stream_.check_summary(r, *f, true, crc); !st.ok()) {
                report_refusal(st.error(), record_name(op::footer), r.offset);
            } else {
                // The readers read on past a summary that fails its CRC (§4.5); the
                // validator reports it.
                if (crc == SummaryCrc::mismatch)
                    report_refusal(summary_crc_mismatch(*f, stream_.summary_run().crc(), content),
                                   record_name(op::footer), r.offset);
                scene_.summary_crc_verified = crc == SummaryCrc::verified;
            }
        }
        if (f->summary_offset_start != 0) {
            const auto& at = builder_.offsets().summary_offsets;
            if (std::find(at.begin(), at.end(), f->summary_offset_start) == at.end())
                error(refusal::kSummaryOffsetMismatch, "Footer.summary_offset_start",
                      std::to_string(f->summary_offset_start), content + 8,
                      "summary_offset_start " + std::to_string(f->summary_offset_start) +
                          " names no Summary Offset record (§5.2)");
        }
    }
}

// §4, §4.1: the trailing magic, and nothing after it: the readers' step (RecordStream::check_tail),
// its refusal a finding. False when the walk ends here.
bool Validator::check_tail(const RecordView& r, Status& io) {
    const ReportFn footer = about(record_name(op::footer));
    bool cut = false;
    const ReportFn report = [&](Error e) {
        cut = e.kind == ErrorKind::truncated;
        return footer(std::move(e));
    };
    Findings findings(report);
    auto after = stream_.check_tail(findings);
    if (!after.ok()) {
        io = std::move(after).error();
        return false;
    }
    if (cut) report_.truncated = true;
    if (*after == detail::AfterFooter::trailing_bytes) {
        // The readers keep the content and report the count (SceneInfo::trailing_bytes).
        const std::uint64_t at = r.end_offset() + kMagicSize;
        error(refusal::kBytesAfterMagic, "", "", at,
              "bytes follow the trailing magic at byte " + std::to_string(at) +
                  "; the magic must be the last bytes of the file (§4)");
    }
    // A Footer mid-file (or repeated): walk on over what follows.
    return *after == detail::AfterFooter::records;
}

}  // namespace validation

Result<ValidationReport> validate(ByteSource& source, const ValidateOptions& options) {
    validation::Validator v(source, options);
    return v.run();
}

}  // namespace fourdgs
