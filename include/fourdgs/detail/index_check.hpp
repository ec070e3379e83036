// fourdgs/detail/index_check.hpp — the Chunk Index against the records it frames (§5.8, M033, M123).
//
// Every offset and length of an index entry frames a whole record, and four of its keyframe-delta
// fields repeat what the Delta Chunk states; a reader MUST refuse a file where the two disagree,
// naming the field. Whichever way a front-end meets the two — the streaming readers and the
// validator see the chunks first and the index after, the indexed readers fetch a chunk by its
// entry — it describes the chunk as a FramedChunk and asks check_index_entry, so the rule is
// written once. The refusal is index-record-mismatch, its message "Chunk Index field 'F'
// disagrees with the record: ...", its Error::field "Chunk Index.F".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fourdgs/decode.hpp"
#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/detail/findings.hpp"
#include "fourdgs/detail/keyframe_composition.hpp"
#include "fourdgs/detail/record_stream.hpp"
#include "fourdgs/detail/time_text.hpp"
#include "fourdgs/records.hpp"

FOURDGS_DETAIL_BEGIN
namespace fourdgs::detail {

// A refusal of a Delta Chunk's reference_offset `reference`, whether its record or its index
// entry states it (§11.8, §5.18): malformed, at `at`, "<who><says><reference><why>".
Error reference_refusal(std::string_view refusal, std::string who, std::string_view says,
                        std::uint64_t reference, std::string_view why, std::uint64_t at);

// What a Chunk or Delta Chunk record says about itself, as an index entry would say it.
struct FramedChunk {
    std::uint64_t offset = 0, length = 0;  // the whole record
    double t0 = 0, t1 = 0;
    std::uint32_t count = 0;  // a Chunk's count; update + birth + death for a Delta Chunk
    bool delta = false;
    std::uint8_t delta_mode = 0;                              // 0 for a Chunk
    std::uint64_t reference_offset = 0, keyframe_offset = 0;  // 0 and its own offset for a Chunk
    std::uint16_t depth = 0;                                  // 0 for a Chunk
    std::vector<ChunkIndex::Band> bands;  // the SH band records that followed it, when known
    std::optional<std::uint64_t> live;    // the population composed over it, when known

    static FramedChunk of(const RecordView& record, const ChunkRecord& chunk);
    static FramedChunk of(const RecordView& record, const DeltaChunk& delta);
    // Whichever of the two `parsed` holds (parse_state_chunk, detail/keyframe_composition.hpp).
    static FramedChunk of(const RecordView& record, const StateChunk& parsed);

    // The Chunk Index entry that frames this chunk (§5.8), as a writer writes it: with the six
    // keyframe-delta fields when `keyframe_fields` (live_count from `live`, 0 when unknown).
    ChunkIndex entry(bool keyframe_fields) const;
};

// What to compare besides count and interval.
struct IndexCheckOptions {
    // chunk_length, band_count and the band ranges: off when the record was fetched by the
    // entry's own range (fetch_framed has checked the length, and the bands are fetched apart).
    bool ranges = true;
    // The six keyframe-delta fields: ignored (a gaussian-birth reader), compared when the entry
    // has them, or required (a keyframe-delta reader: missing-keyframe-index-fields without).
    enum class KeyframeFields : std::uint8_t { ignore, when_present, required };
    KeyframeFields keyframe = KeyframeFields::ignore;
};

// Compares entry `e` with the chunk record it frames, `c`, each disagreement to `findings` with
// `at` as its offset: chunk_length, gaussian_count, t0 and t1 (each its own Error, both named
// 't0/t1' in the message; compared by their bits, so a NaN copied into the entry agrees),
// band_count and every band by its number, then per `options.keyframe` chunk_kind, delta_mode,
// reference_offset, keyframe_offset, depth, and live_count when `c.live` is known. Returns
// findings.outcome().
Status check_index_entry(const ChunkIndex& e, const FramedChunk& c, std::uint64_t at,
                         const IndexCheckOptions& options, Findings& findings);
// The first disagreement, as a Status.
Status check_index_entry(const ChunkIndex& e, const FramedChunk& c, std::uint64_t at,
                         const IndexCheckOptions& options);

// The chunk record entry `e` names among `seen` (sorted by offset), or nullptr.
const FramedChunk* framed_at(std::span<const FramedChunk> seen, std::uint64_t offset);
// index-record-mismatch naming 'chunk_offset': no Chunk or Delta Chunk record starts there.
Error no_chunk_at(const ChunkIndex& e, std::uint64_t at);

// index-record-mismatch naming 'chunk_offset' the other way: the `opcode` record at `at` is named
// by no entry (§5.8: one entry per chunk).
Error unindexed_chunk(std::uint8_t opcode, std::uint64_t at);

// orphan-sh-band: the SH Band Stream record at `at` does not follow a Chunk or Delta Chunk record
// or that chunk's other bands (§5.7, §5.18: a chunk's bands follow it directly). Every front-end
// refuses it by this one Error; the validator reports it.
Error orphan_sh_band(std::uint64_t at);
// delta-chunk-in-gaussian-birth: the Delta Chunk record at `at` is in a file whose Header
// declares temporal_model `model`, not keyframe-delta (§5.18). Every front-end refuses it by this
// one Error; the validator reports it.
Error delta_chunk_in_model(std::string_view model, std::uint64_t at);
// index-record-mismatch naming 'bands': the SH Band Stream record at `at` directly follows a
// chunk whose index entry does not name it (§5.8: every band has its own range in the entry).
Error unindexed_sh_band(std::uint64_t at);
// index-record-mismatch naming 'chunk_offset': entry `e`, at `at`, names a chunk an earlier entry
// already named (§5.8: one entry per chunk; two would have an indexed reader read it twice).
Error chunk_indexed_twice(const ChunkIndex& e, std::uint64_t at);

// §5.8, one entry per chunk, decided here for every reader and the validator. An index met after
// its chunks (a walk front to back) is matched entry by entry to the chunk records seen; one read
// before them (an indexed reader's summary) is checked by its offsets alone.
class ChunksNamed {
public:
    // Entry `e` (whose record is at `at`) among `seen`, the chunk records walked so far, sorted by
    // offset: the chunk it names, which the caller checks it against (check_index_entry).
    // Refusals: no_chunk_at, chunk_indexed_twice.
    Result<const FramedChunk*> name(std::span<const FramedChunk> seen, const ChunkIndex& e,
                                    std::uint64_t at);
    // Entry `e` (its record at `at`) named among `seen` (name) and checked against the chunk it
    // names (check_index_entry with `options`), each refusal to `findings`. Returns
    // findings.outcome().
    Status check(std::span<const FramedChunk> seen, const ChunkIndex& e, std::uint64_t at,
                 const IndexCheckOptions& options, Findings& findings);
    // Whether seen[k] has been named.
    bool named(std::size_t k) const noexcept { return k < named_.size() && named_[k]; }
    // unindexed_chunk for each of `seen` no entry named, to `findings`; returns its outcome().
    Status every_chunk_named(std::span<const FramedChunk> seen, Findings& findings) const;

private:
    std::vector<bool> named_;
};
// The entries of `index` by chunk_offset (ties in index order), and chunk_indexed_twice for the
// first that names the chunk an earlier one names (`entry_at[i]`: where entry i's record is).
Result<std::vector<std::size_t>> entries_by_chunk_offset(std::span<const ChunkIndex> index,
                                                         std::span<const std::uint64_t> entry_at);

// A chunk fetched by its index entry: its record, parsed as what it is (the StateChunk it is),
// and its SH band records (in the FetchedChunkBuffers it was fetched into).
struct IndexedChunk : StateChunk {
    RecordView record;
};
// The steps of fetch_indexed_chunk, for a caller that reports some steps' faults and leaves the
// others to another check (the validator leaves a record's own parse to its walk).
enum class ChunkTrip : std::uint8_t { fetch, parse, check, bands };

// §5.8, the one trip of a chunk fetched by index entry `e`, for the indexed front-ends and the
// validator: the entry's range framed as one record of `opcode` (fetch_framed, naming `origin`),
// parsed as a Chunk or a Delta Chunk, checked against the entry (check_index_entry with `check`,
// whose ranges the caller turns off: the range was the entry's own), then the SH Band Stream
// records of bands 1..`bands` fetched (fetch_sh_bands, `require_all_bands`). Views borrow
// `buffers`. On a refusal, `*failed` (when given) says at which step.
Result<IndexedChunk> fetch_indexed_chunk(const RangeFetcher& fetcher, const ChunkIndex& e,
                                         std::uint8_t opcode, const IndexCheckOptions& check,
                                         int bands, bool require_all_bands,
                                         FetchedChunkBuffers& buffers, RangeOrigin origin = {},
                                         ChunkTrip* failed = nullptr);

// §5.8: every range entry `e` (its record at `at`) names lies in [8, `chunks_end`), the chunks
// before the summary. Refusal: index-out-of-range.
Status check_entry_in_file(const ChunkIndex& e, std::uint64_t chunks_end, std::uint64_t at);

// §4.5, §5.8: the summary of a file read by its tail, the one walk of it for the indexed readers
// and the validator: fetched whole (fetch_summary, its CRC checked when
// `options.verify_summary_crc`; `crc` says how that went), its records in order into `summary`
// (SceneBuilder::add_summary; a group may be overlong, wire-notes), each Chunk Index entry's
// ranges inside the file (check_entry_in_file), and no two entries naming one chunk
// (entries_by_chunk_offset). Refusals to the builder's findings (SceneBuilder::findings(), so a
// reader's builder stops the walk at the first and the validator's collects them):
// summary-start-mismatch (summary_start names a record of no summary opcode),
// index-out-of-range, index-record-mismatch; fetch_summary's and a record that does not frame end
// the walk as they stand.
Status read_summary_by_tail(const RangeFetcher& fetcher, const FooterTail& tail,
                            const ReaderOptions& options, SceneBuilder& summary, SummaryCrc& crc);

// §5.8 live_count: the population composed over the entry's interval, `live`, against the entry.
Status check_live_count(const ChunkIndex& e, std::uint64_t live, std::uint64_t at);

}  // namespace fourdgs::detail
FOURDGS_DETAIL_END
