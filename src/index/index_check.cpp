// The Chunk Index against the records it frames (fourdgs/detail/index_check.hpp, §5.8).
#include "fourdgs/detail/index_check.hpp"

#include <algorithm>
#include <numeric>
#include <span>
#include <string>

#include "fourdgs/detail/chunk_bands.hpp"
#include "fourdgs/detail/keyframe_composition.hpp"
#include "fourdgs/portable.hpp"
#include "format/record_keying.hpp"

namespace fourdgs::detail {

Error reference_refusal(std::string_view refusal, std::string who, std::string_view says,
                        std::uint64_t reference, std::string_view why, std::uint64_t at) {
    who += says;
    who += std::to_string(reference);
    who += why;
    return make_error(ErrorKind::malformed, refusal, std::move(who), at);
}

namespace {

// §5.8: the index repeats the record's time, so the two are compared as the bytes they are: a NaN
// the writer copied from a chunk into its entry agrees with itself (NaN != NaN as a number).
bool same_time(double a, double b) {
    return fourdgs::bit_cast<std::uint64_t>(a) == fourdgs::bit_cast<std::uint64_t>(b);
}

// A refusal of the record at byte `at`: "<what> at byte <at> <why>", about `field` = `at`.
Error record_at(std::string_view refusal, std::string what, std::string_view why,
                std::string field, std::uint64_t at) {
    what += " at byte ";
    what += std::to_string(at);
    what += ' ';
    what += why;
    return make_error(ErrorKind::malformed, refusal, std::move(what), at)
        .about(std::move(field), std::to_string(at));
}

}  // namespace

FramedChunk FramedChunk::of(const RecordView& record, const ChunkRecord& chunk) {
    // A keyframe heads its own GOP: no mode, no reference, depth 0.
    return {record.offset, record.total_length(), chunk.t0, chunk.t1, chunk.count, false, 0, 0,
            record.offset, 0, {}, {}};
}

FramedChunk FramedChunk::of(const RecordView& record, const DeltaChunk& delta) {
    return {record.offset, record.total_length(), delta.t0, delta.t1,
            delta.update_count + delta.birth_count + delta.death_count, true, delta.delta_mode,
            delta.reference_offset, delta.keyframe_offset, delta.depth, {}, {}};
}

FramedChunk FramedChunk::of(const RecordView& record, const StateChunk& parsed) {
    return parsed.chunk ? of(record, *parsed.chunk) : of(record, *parsed.delta);
}

ChunkIndex FramedChunk::entry(bool keyframe_fields) const {
    ChunkIndex e{t0, t1, offset, length, count, bands, std::nullopt};
    if (keyframe_fields)
        e.keyframe = KeyframeIndexFields{delta ? kChunkKindDelta : kChunkKindKeyframe,
                                         delta_mode,
                                         reference_offset,
                                         keyframe_offset,
                                         depth,
                                         live.value_or(0)};
    return e;
}

const FramedChunk* framed_at(std::span<const FramedChunk> seen, std::uint64_t offset) {
    auto before = [](const FramedChunk& c, std::uint64_t off) { return c.offset < off; };
    auto it = std::lower_bound(seen.begin(), seen.end(), offset, before);
    return it != seen.end() && it->offset == offset ? &*it : nullptr;
}

Error no_chunk_at(const ChunkIndex& e, std::uint64_t at) {
    Error err = index_record_mismatch("chunk_offset",
                                      "no Chunk or Delta Chunk record starts at byte " +
                                          std::to_string(e.chunk_offset),
                                      at);
    err.value = std::to_string(e.chunk_offset);
    return err;
}

Error unindexed_chunk(std::uint8_t opcode, std::uint64_t at) {
    return record_at(refusal::kIndexRecordMismatch, opcode_name(opcode) + " record",
                     "is named by no Chunk Index entry's chunk_offset (§5.8: one entry per chunk)",
                     "Chunk Index.chunk_offset", at);
}

Error orphan_sh_band(std::uint64_t at) {
    return record_at(refusal::kOrphanShBand, "the SH Band Stream record",
                     "does not follow a Chunk or Delta Chunk record (§5.7)",
                     opcode_name(op::sh_band), at);
}

Error delta_chunk_in_model(std::string_view model, std::uint64_t at) {
    return make_error(ErrorKind::malformed, refusal::kDeltaChunkInGaussianBirth,
                      "a Delta Chunk record in a '" + std::string(model) + "' file (§5.18)", at)
        .about("", std::string(model));
}

Error unindexed_sh_band(std::uint64_t at) {
    return record_at(refusal::kIndexRecordMismatch, "the SH Band Stream record",
                     "follows a chunk whose Chunk Index entry does not name it (§5.8)",
                     "Chunk Index.bands", at);
}

Error chunk_indexed_twice(const ChunkIndex& e, std::uint64_t at) {
    Error err = index_record_mismatch("chunk_offset",
                                      "a second entry names the chunk at byte " +
                                          std::to_string(e.chunk_offset) +
                                          " (§5.8: one entry per chunk)",
                                      at);
    err.value = std::to_string(e.chunk_offset);
    return err;
}

Result<const FramedChunk*> ChunksNamed::name(std::span<const FramedChunk> seen,
                                             const ChunkIndex& e, std::uint64_t at) {
    const FramedChunk* c = framed_at(seen, e.chunk_offset);
    if (!c) return no_chunk_at(e, at);
    named_.resize(seen.size(), false);
    const auto k = static_cast<std::size_t>(c - seen.data());
    if (named_[k]) return chunk_indexed_twice(e, at);
    named_[k] = true;
    return c;
}

Status ChunksNamed::check(std::span<const FramedChunk> seen, const ChunkIndex& e,
                          std::uint64_t at, const IndexCheckOptions& options,
                          Findings& findings) {
    auto c = name(seen, e, at);
    if (!c.ok()) {
        (void)findings.take(std::move(c).error());
        return findings.outcome();
    }
    return check_index_entry(e, **c, at, options, findings);
}

Status ChunksNamed::every_chunk_named(std::span<const FramedChunk> seen,
                                     Findings& findings) const {
    for (std::size_t k = 0; k < seen.size(); ++k)
        if (!named(k) &&
            !findings.take(unindexed_chunk(seen[k].delta ? op::delta_chunk : op::chunk,
                                           seen[k].offset)))
            break;
    return findings.outcome();
}

Result<std::vector<std::size_t>> entries_by_chunk_offset(std::span<const ChunkIndex> index,
                                                         std::span<const std::uint64_t> entry_at) {
    std::vector<std::size_t> order(index.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return index[a].chunk_offset < index[b].chunk_offset;
    });
    for (std::size_t k = 1; k < order.size(); ++k)
        if (index[order[k]].chunk_offset == index[order[k - 1]].chunk_offset)
            return chunk_indexed_twice(index[order[k]], entry_at[order[k]]);
    return order;
}

Result<IndexedChunk> fetch_indexed_chunk(const RangeFetcher& fetcher, const ChunkIndex& e,
                                         std::uint8_t opcode, const IndexCheckOptions& check,
                                         int bands, bool require_all_bands,
                                         FetchedChunkBuffers& buffers, RangeOrigin origin,
                                         ChunkTrip* failed) {
    auto fail = [&](ChunkTrip step, Error err) {
        if (failed) *failed = step;
        return err;
    };
    auto record = fetcher.fetch_framed(e.chunk_offset, e.chunk_length, opcode, buffers.record,
                                       origin);
    if (!record.ok()) return fail(ChunkTrip::fetch, std::move(record).error());
    IndexedChunk out;
    out.record = *record;
    auto parsed = parse_state_chunk(out.record);
    if (!parsed.ok()) return fail(ChunkTrip::parse, std::move(parsed).error());
    static_cast<StateChunk&>(out) = std::move(*parsed);
    const FramedChunk framed = FramedChunk::of(out.record, out);
    const Status same = check_index_entry(e, framed, e.chunk_offset, check);
    if (!same.ok()) return fail(ChunkTrip::check, std::move(same).error());
    if (Status st = fetcher.fetch_sh_bands(e, bands, require_all_bands, buffers.bands,
                                           buffers.band_records);
        !st.ok())
        return fail(ChunkTrip::bands, std::move(st).error());
    return out;
}

Status check_live_count(const ChunkIndex& e, std::uint64_t live, std::uint64_t at) {
    if (!e.keyframe || e.keyframe->live_count == live) return ok_status();
    Error err = index_record_mismatch(
        "live_count",
        "the index says " + std::to_string(e.keyframe->live_count) + " gaussians are live over " +
            interval_text(e.t0, e.t1) + ", composition gives " + std::to_string(live),
        at);
    err.value = std::to_string(e.keyframe->live_count);
    return err;
}

namespace {

// check_index_entry's comparisons, in order; each returns when `findings` says stop.
void compare_entry(const ChunkIndex& e, const FramedChunk& c, std::uint64_t at,
                   const IndexCheckOptions& options, Findings& findings) {
    const std::string kind = opcode_name(c.delta ? op::delta_chunk : op::chunk);
    auto report = [&](Error err) { return findings.take(std::move(err)); };
    // One disagreement; false when `findings` says stop.
    auto differs = [&](std::string_view field, std::string value, std::string message) {
        Error err = index_record_mismatch(field, std::move(message), at);
        err.value = std::move(value);
        return report(std::move(err));
    };
    if (options.ranges && e.chunk_length != c.length &&
        !differs("chunk_length", std::to_string(e.chunk_length),
                 "the index says " + std::to_string(e.chunk_length) + " bytes, the record is " +
                     std::to_string(c.length)))
        return;
    if (e.gaussian_count != c.count &&
        !differs("gaussian_count", std::to_string(e.gaussian_count),
                 "the index says " + std::to_string(e.gaussian_count) + ", the " + kind +
                     " holds " + std::to_string(c.count)))
        return;
    const std::string says = "the index says " + interval_text(e.t0, e.t1) + ", the " + kind +
                             " says " + interval_text(c.t0, c.t1);
    if (!same_time(e.t0, c.t0)) {
        Error err = index_record_mismatch("t0/t1", says, at);
        err.field = "Chunk Index.t0";
        err.value = time_text(e.t0);
        if (!report(std::move(err))) return;
    }
    if (!same_time(e.t1, c.t1)) {
        Error err = index_record_mismatch("t0/t1", says, at);
        err.field = "Chunk Index.t1";
        err.value = time_text(e.t1);
        if (!report(std::move(err))) return;
    }
    if (options.ranges) {
        if (e.bands.size() != c.bands.size() &&
            !differs("band_count", std::to_string(e.bands.size()),
                     "the index names " + std::to_string(e.bands.size()) +
                         " band(s), the chunk is followed by " + std::to_string(c.bands.size())))
            return;
        for (const ChunkIndex::Band& b : e.bands) {
            const ChunkIndex::Band* seen = nullptr;
            for (const ChunkIndex::Band& x : c.bands)
                if (x.band == b.band) seen = &x;
            if (seen && seen->offset == b.offset && seen->length == b.length) continue;
            if (!differs("bands", std::to_string(b.offset),
                         "the index names band " + std::to_string(b.band) + " at [" +
                             std::to_string(b.offset) + ", +" + std::to_string(b.length) +
                             ") but " +
                             (seen ? "that band's record is at [" + std::to_string(seen->offset) +
                                         ", +" + std::to_string(seen->length) + ")"
                                   : std::string("the chunk has no such band"))))
                return;
        }
    }
    using KeyframeFields = IndexCheckOptions::KeyframeFields;
    if (options.keyframe == KeyframeFields::ignore) return;
    if (!e.keyframe) {
        if (options.keyframe == KeyframeFields::required)
            report(make_error(ErrorKind::malformed, refusal::kMissingKeyframeIndexFields,
                              "the Chunk Index entry for byte " + std::to_string(e.chunk_offset) +
                                  " lacks the six keyframe-delta fields (§5.8)",
                              at));
        return;
    }
    const KeyframeIndexFields& k = *e.keyframe;
    auto field = [&](std::string_view name, std::uint64_t index_value,
                     std::uint64_t record_value) {
        return index_value == record_value ||
               differs(name, std::to_string(index_value),
                       "the index says " + std::to_string(index_value) + ", the record implies " +
                           std::to_string(record_value));
    };
    if (k.chunk_kind != (c.delta ? kChunkKindDelta : kChunkKindKeyframe) &&
        !differs("chunk_kind", std::to_string(k.chunk_kind),
                 "the index says " + std::to_string(k.chunk_kind) + ", the record is a " + kind))
        return;
    if (!field("delta_mode", k.delta_mode, c.delta_mode) ||
        !field("reference_offset", k.reference_offset, c.reference_offset) ||
        !field("keyframe_offset", k.keyframe_offset, c.keyframe_offset) ||
        !field("depth", k.depth, c.depth))
        return;
    if (c.live)
        if (Status st = check_live_count(e, *c.live, at); !st.ok()) report(st.error());
}

}  // namespace

Status check_index_entry(const ChunkIndex& e, const FramedChunk& c, std::uint64_t at,
                         const IndexCheckOptions& options, Findings& findings) {
    compare_entry(e, c, at, options, findings);
    return findings.outcome();
}

Status check_index_entry(const ChunkIndex& e, const FramedChunk& c, std::uint64_t at,
                         const IndexCheckOptions& options) {
    Findings first;
    return check_index_entry(e, c, at, options, first);
}

Status check_entry_in_file(const ChunkIndex& e, std::uint64_t chunks_end, std::uint64_t at) {
    if (e.chunk_offset < kMagicSize || e.chunk_offset > chunks_end ||
        e.chunk_length > chunks_end - e.chunk_offset)
        return make_error(ErrorKind::malformed, refusal::kIndexOutOfRange,
                          "Chunk Index entry names [" + std::to_string(e.chunk_offset) + ", +" +
                              std::to_string(e.chunk_length) +
                              ") outside the chunks before the summary",
                          at)
            .about("", std::to_string(e.chunk_offset));
    for (const ChunkIndex::Band& b : e.bands)
        if (b.offset < kMagicSize || b.offset > chunks_end || b.length > chunks_end - b.offset)
            return make_error(ErrorKind::malformed, refusal::kIndexOutOfRange,
                              "Chunk Index band " + std::to_string(b.band) +
                                  " range lies outside the file's chunks",
                              at)
                .about("Chunk Index.bands", std::to_string(b.offset));
    return ok_status();
}

Status read_summary_by_tail(const RangeFetcher& fetcher, const FooterTail& tail,
                            const ReaderOptions& options, SceneBuilder& summary, SummaryCrc& crc) {
    // The walk's own rules report where the builder's do: one sink, one "stop or collect".
    Findings& findings = summary.findings();
    const Footer& footer = tail.footer;
    std::vector<std::uint8_t> bytes;
    FOURDGS_TRY(fetch_summary(fetcher, tail, options.max_summary_bytes,
                              options.verify_summary_crc, bytes, crc));
    RecordsInMemory records(bytes, footer.summary_start);
    while (true) {
        FOURDGS_ASSIGN(std::optional<RecordView> r, records.next());
        if (!r) break;
        // §4.5: summary_start names the run's first summary record. A record of no defined
        // opcode may sit inside the run, as the streaming path allows, but cannot start it (the
        // scan then meets what the streaming path meets).
        if (r->offset == footer.summary_start && !is_summary_opcode(r->opcode) &&
            !findings.take(make_error(ErrorKind::malformed, refusal::kSummaryStartMismatch,
                                      "Footer summary_start is " +
                                          std::to_string(footer.summary_start) +
                                          " but the record there is " + opcode_name(r->opcode) +
                                          ", not a summary record (§4.5)",
                                      tail.content_offset())
                               .about("", std::to_string(footer.summary_start))))
            return findings.outcome();
        if (!summary.add_summary(*r).ok()) return findings.outcome();
        if (r->opcode == op::chunk_index && summary.scene().index.size() > 0 &&
            summary.offsets().index.back() == r->offset &&
            !findings.take(check_entry_in_file(summary.scene().index.back(),
                                               footer.summary_start, r->offset)))
            return findings.outcome();
    }
    // §5.8: one entry per chunk (two would have the chunk read twice).
    if (auto order = entries_by_chunk_offset(summary.scene().index, summary.offsets().index);
        !order.ok())
        (void)findings.take(std::move(order).error());
    return findings.outcome();
}

// The SH band fetch and the ranges an entry reads, RangeFetcher's calls that read an index
// entry (fourdgs/detail/record_stream.hpp declares them on the fetcher).

void RangeFetcher::append_ranges(const ChunkIndex& e, int want, std::vector<ByteRange>& out) {
    out.push_back({e.chunk_offset, e.chunk_length});
    for (const ChunkIndex::Band& b : e.bands)
        if (b.band >= 1 && b.band <= std::min(want, 3)) out.push_back({b.offset, b.length});
}

Status RangeFetcher::fetch_sh_bands(const ChunkIndex& e, int want, bool require_all,
                                    std::array<std::vector<std::uint8_t>, 3>& buffers,
                                    std::vector<ShBandRecord>& out) const {
    out.clear();
    for (int b = 1; b <= std::min(want, 3); ++b) {
        FOURDGS_ASSIGN(const ChunkIndex::Band* entry,
                       find_in_chunk<op::sh_band>(
                           std::span<const ChunkIndex::Band>(e.bands),
                           static_cast<std::uint64_t>(b), &ChunkIndex::Band::band,
                           &ChunkIndex::Band::offset, [&e] {
                               return "the index entry for the chunk at byte " +
                                      std::to_string(e.chunk_offset) + " names";
                           }));
        if (!entry) {
            if (!require_all) break;  // the decoder names a band it needs and does not have
            return make_error(ErrorKind::malformed, refusal::kMissingShBand,
                              "the index names no band " + std::to_string(b) +
                                  " record for the chunk at byte " +
                                  std::to_string(e.chunk_offset) + ", below the degree read (" +
                                  std::to_string(want) + ")",
                              e.chunk_offset)
                .about("", std::to_string(b));
        }
        FOURDGS_ASSIGN(RecordView r, fetch_framed(entry->offset, entry->length, op::sh_band,
                                                  buffers[b - 1], {"bands", "bands"}));
        FOURDGS_TRY(ChunkBands::add_to(out, r));
        if (const ShBandRecord& band = out.back(); band.band != b) {
            Error mismatch = index_record_mismatch(
                "bands",
                "the index names band " + std::to_string(b) + " at byte " +
                    std::to_string(entry->offset) + ", the record holds band " +
                    std::to_string(band.band),
                entry->offset);
            mismatch.value = std::to_string(b);
            return mismatch;
        }
    }
    return ok_status();
}

}  // namespace fourdgs::detail
