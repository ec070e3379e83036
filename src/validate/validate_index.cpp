// The Validator's index pass (validator.hpp), after the walk: the Chunk Index against the chunks
// the walk framed (§5.8, M033), the keyframe-delta seek structure (§11.1, §11.8) and the Summary
// Offset groups (§5.14); or, when the walk was cut before the Footer, the index that an intact
// tail names, checked as an indexed reader checks it.
#include <algorithm>
#include <string>
#include <vector>

#include "validator.hpp"

#include "fourdgs/detail/index_check.hpp"
#include "fourdgs/detail/record_stream.hpp"

namespace fourdgs::validation {

using detail::ChunkTrip;
using detail::ChunksNamed;
using detail::Findings;
using detail::IndexCheckOptions;
using detail::RangeFetcher;
using detail::SummaryCrc;
using detail::fetch_indexed_chunk;
using detail::read_footer_tail;
using detail::read_summary_by_tail;

// ---------------------------------------------------------------------------------------------
// The index against the chunks it frames (§5.8, M033), the summary groups (§5.14).

// The walk was cut before the Footer (a length that runs past the end, or misframes what
// follows), yet the source can be read at random and its tail is intact: the summary is read by
// the indexed readers' own walk of it (read_summary_by_tail), each rule it breaks a finding, and
// each entry is checked as an indexed reader checks it when it fetches the chunk (§5.8: the
// range must frame a chunk record, which must say what its entry says), so the validator reports
// what that reader refuses. A summary that fails its CRC is not used (an indexed reader does not
// use one either).
void Validator::check_index_by_tail() {
    if (footer_ || full() || !source_.random_access() || !size_ ||
        *size_ < kMagicSize + kTailSize)
        return;
    const RangeFetcher fetch(source_, reader_.max_record_bytes);
    auto tail = read_footer_tail(fetch, *size_);
    if (!tail.ok() || tail->footer.summary_start == 0) return;
    ReaderOptions read = reader_;
    read.verify_summary_crc = true;
    // A collecting builder: the walk's rules and the builder's report through its one sink.
    SceneBuilder summary(read, about(record_name(op::chunk_index)));
    SummaryCrc crc = SummaryCrc::not_stated;
    // What does not fetch or frame ends the walk; the entries before it are still checked.
    (void)read_summary_by_tail(fetch, *tail, read, summary, crc);
    const std::vector<ChunkIndex>& index = summary.scene().index;
    FetchedChunkBuffers buffers;
    for (std::size_t i = 0; i < index.size() && !full(); ++i) {
        const ChunkIndex& e = index[i];
        auto found = fetch.opcode_at(e.chunk_offset);
        if (!found.ok()) continue;
        const std::uint8_t opcode = *found == op::delta_chunk ? op::delta_chunk : op::chunk;
        IndexCheckOptions fetched;
        fetched.ranges = false;
        // The bands are checked only when the Header says how many there are.
        const int bands = scene_.has_header ? std::min<int>(3, scene_.header.sh_degree) : 0;
        ChunkTrip failed = ChunkTrip::fetch;
        auto trip = fetch_indexed_chunk(fetch, e, opcode, fetched, bands, true, buffers, {},
                                        &failed);
        // A record that does not parse: the walk, or the record's own parser, says why.
        if (!trip.ok() && failed != ChunkTrip::parse)
            report_refusal(trip.error(), record_name(op::chunk_index),
                           summary.offsets().index[i]);
    }
}

// The Chunk Index of a file whose walk reached it, in three passes: its entries, the seek
// structure they form, the summary groups. A file without one has only the advice below (the
// summary groups are checked only beside an index).
void Validator::check_index() {
    if (scene_.index.empty()) {
        // Readers scan such a file and build its index (M016), so it is read; but a seek then
        // costs the whole file, which the model exists to avoid (§11.8): a warning.
        if (keyframe_delta_ && !chunks_.empty())
            warning(refusal::kNoChunkIndex, "", "", footer_offset_ ? footer_offset_ : kNoOffset,
                    "a keyframe-delta file without a Chunk Index: readers read it front to back "
                    "(M016), so a seek costs the whole file rather than one chain (§11.8)");
        return;
    }
    check_index_entries();
    check_keyframe_timeline();
    check_summary_groups();
}

// §5.8, M033: each entry against the chunk it names, then each chunk no entry names.
void Validator::check_index_entries() {
    const std::vector<ChunkIndex>& index = scene_.index;
    const std::vector<std::uint64_t>& index_at = builder_.offsets().index;
    IndexCheckOptions check;
    check.keyframe = keyframe_delta_ ? IndexCheckOptions::KeyframeFields::required
                                     : IndexCheckOptions::KeyframeFields::when_present;
    // The streaming readers' steps (ChunkWalk), each disagreement a finding.
    const ReportFn report = about(record_name(op::chunk_index));
    Findings findings(report);
    ChunksNamed named;
    for (std::size_t i = 0; i < index.size() && !full(); ++i)
        (void)named.check(chunks_, index[i], index_at[i], check, findings);
    if (!full()) (void)named.every_chunk_named(chunks_, findings);
}

// §11.1, §11.8: the keyframe-delta seek structure over the whole index, which no one entry shows.
void Validator::check_keyframe_timeline() {
    const std::vector<ChunkIndex>& index = scene_.index;
    if (!keyframe_delta_) return;
    const bool all_fields = std::all_of(index.begin(), index.end(),
                                        [](const ChunkIndex& e) { return e.keyframe.has_value(); });
    if (!all_fields) return;
    auto timeline = KeyframeTimeline::build(index, scene_.header.duration_sec);
    if (!timeline.ok())
        report_refusal(timeline.error(), record_name(op::chunk_index),
                       builder_.offsets().index.front());
}

// §5.14: each Summary Offset against the summary records the walk framed, a group at a time.
void Validator::check_summary_groups() {
    // The summary records as the walk framed them, for the groups below.
    std::vector<RecordEntry> summary_records;
    for (const RecordEntry& rec : stream_.log())
        if (is_summary_opcode(rec.opcode)) summary_records.push_back(rec);
    // §5.14: each Summary Offset frames its group's records, whole. A length that also covers
    // records of another opcode after the group is in circulation (wire-notes): a warning.
    for (std::size_t g = 0; g < scene_.summary_offsets.size(); ++g) {
        const SummaryOffset& s = scene_.summary_offsets[g];
        const std::uint64_t at = builder_.offsets().summary_offsets[g];
        const std::uint64_t end = s.group_start + s.group_length;
        std::string problem;
        bool overlong = false, in_group = true, started = false;
        std::uint64_t expect = s.group_start;
        for (const RecordEntry& rec : summary_records) {
            const bool inside = rec.offset >= s.group_start && rec.offset < end;
            if (!inside) {
                if (rec.opcode == s.group_opcode && problem.empty())
                    problem = "leaves out the " + opcode_name(rec.opcode) + " record at byte " +
                              std::to_string(rec.offset);
                continue;
            }
            if (!started && rec.offset != s.group_start && problem.empty())
                problem = "does not start at a record";
            started = true;
            if (rec.offset != expect && problem.empty()) problem = "does not frame whole records";
            expect = rec.offset + rec.length;
            if (rec.length > end - rec.offset && problem.empty()) problem = "cuts a record";
            if (rec.opcode != s.group_opcode) {
                in_group = false;
                overlong = true;
            } else if (!in_group && problem.empty()) {
                problem = "mixes other records into the group";
            }
        }
        if (!started && problem.empty()) problem = "frames no record";
        else if (expect != end && problem.empty()) problem = "does not end at a record boundary";
        const std::string range = "Summary Offset for " + opcode_name(s.group_opcode) + " names [" +
                                  std::to_string(s.group_start) + ", +" +
                                  std::to_string(s.group_length) + "), which ";
        if (!problem.empty())
            error(refusal::kSummaryOffsetMismatch, "", std::to_string(s.group_start), at,
                  range + problem + " (§5.14)");
        else if (overlong)
            warning(refusal::kSummaryOffsetOverlong, "", std::to_string(s.group_length), at,
                    range + "also covers records of other opcodes after the group; the length "
                            "should be the group's alone (§5.14)");
    }
}

}  // namespace fourdgs::validation
