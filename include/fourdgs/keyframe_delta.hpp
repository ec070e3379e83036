// fourdgs/keyframe_delta.hpp — the keyframe-delta temporal model (§11): a composed population
// in integer bins, the seek walk over the Chunk Index, and two front-ends that read keyframe-delta
// files — one indexed (fetches exactly one chain per instant), one streaming (mutates the
// population as deltas arrive in file order).
//
// Composition happens in the bin domain, keyed by gaussian_id (§11.3): deaths, then updates (bin
// differences added to the reference's bins in 64-bit arithmetic, refused when a composed bin
// leaves i32, §11.7; rotation_index/rotation restated absolutely, §11.5; an absent stream means
// unchanged), then births (the full attribute set). Dequantization happens once, at the end, by
// materializing the population into a ChunkBins sorted by gaussian_id and handing it to
// decode.hpp's dequantize(): a composed state is exactly the bins a keyframe at that instant would
// carry, so both front-ends, and a writer verifying its own output, agree bin for bin.
//
// Every refusal of §11.9 (and §5.1, §5.8, §5.18) uses the registry's identifier where it has one:
//   non-tiling-chunks, timeline-gap        §11.1 (naming the two intervals)
//   forward-reference, broken-reference    §11.8 (reference_offset >= own offset / names nothing)
//   depth-mismatch, chain-without-keyframe §11.8
//   index-record-mismatch                  §5.8 (naming the field)
//   invariant-changed-in-update            §11.5 (sigma_t, flags, window_index, or rotation_index
//                                          without rotation, in an update group)
//   gaussian-id-reused, missing-gaussian-id §11.2
// and, named in the same style:
//   unknown-gaussian-id        an update or death names an id that is not live
//   duplicate-gaussian-id      a birth names a live id; an id twice in one state or group
//   gaussian-id-in-two-groups  one id in two of a chunk's groups (§11.3)
//   composed-bin-out-of-range  a composed bin outside i32 (§11.7), naming attribute, id, chunk
//   level-mismatch             a delta's level differs from its reference's (§11.6)
//   delta-mode-mismatch        reference_offset is not what delta_mode says it is (§5.18)
//   invalid-death-stream       the deaths group carries a known stream other than gaussian_id
//   missing-keyframe-index-fields / no-chunk-index   the index cannot drive a seek
// plus the chunk-decode refusals of decode.hpp (stream-element-count-mismatch against the
// group's count, unknown-chunk-compression naming the codec, missing-attribute-stream, ...).
//
// Thread safety: ComposedPopulation and KeyframeDeltaStream are used by one thread at a time.
// KeyframeDeltaReader::state_at may be called from several threads at once with distinct
// workspaces, when the ByteSource's read_at is thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "fourdgs/decode.hpp"
#include "fourdgs/error.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"

namespace fourdgs {

inline constexpr std::uint8_t kChunkKindKeyframe = 0, kChunkKindDelta = 1;
inline constexpr std::uint8_t kDeltaModeKeyframe = 0, kDeltaModeChained = 1;

// Names a state chunk in messages: "Delta Chunk at byte 1765 [1, 2)".
struct ChunkRef {
    std::uint64_t offset = 0;
    double t0 = 0, t1 = 0;
    bool delta = false;
};

// One Delta Chunk decoded to bins (§5.18). `updates` holds the update group's columns; only the
// attributes flagged in `update_present` carry data (bin differences, except rotation_index and
// rotation, which are absolute). `births` holds the full attribute set of every born gaussian,
// plus its SH bands. `deaths` holds the dead ids (same-bits i32 view of the u32 id).
struct DeltaBins {
    ChunkBins updates;
    std::array<bool, attr::kKnownCount> update_present{};
    ChunkBins births;
    std::vector<std::int32_t> deaths;
};

// Decodes a Delta Chunk record and the SH band records that follow it (for its births) into
// bins. Honours `compression` or refuses it naming the codec (M093); splits the three groups by
// their sub-block, never by counting (M095); checks each stream's element_count against its
// group's declared count (M129), gaussian_id in every non-empty group (missing-gaussian-id), no
// sigma_t/flags/window_index or lone rotation_index in the update group (M094, M114), the full
// required set in births, and only gaussian_id in deaths. Composition rules need the reference
// state and are ComposedPopulation::apply's.
Status decode_delta_bins(const SceneInfo& scene, const DeltaChunk& delta,
                         std::span<const ShBandRecord> bands, const ChunkDecodeOptions& options,
                         DeltaBins& out, DecodeScratch& scratch);

// A composed state in integer bins, keyed by gaussian_id. Storage is structure-of-arrays (a
// ChunkBins in arbitrary slot order) plus an id → slot map; a death swaps the last slot into the
// freed one. Memory: one ChunkBins row per live gaussian (about 100 bytes plus SH) and a hash
// entry. Copyable (the streaming front-end keeps the GOP keyframe's state beside the current one).
class ComposedPopulation {
public:
    // Empties the population and forgets dead ids. `sh_bands` is the SH degree it carries (bands
    // 1..sh_bands of every keyframe and birth; higher bands are dropped).
    void reset(int sh_bands);

    // Replaces the live set with a keyframe chunk's bins (§11.1), keeping the dead ids. Refuses
    // missing-gaussian-id (the chunk has gaussians but no id stream), duplicate-gaussian-id
    // (M111/M127) and gaussian-id-reused for an id this population saw die (M112).
    Status assign_keyframe(const ChunkBins& keyframe, const ChunkRef& chunk);

    // Makes this population the timeline successor of `previous` (a state composed from some
    // other reference, e.g. a keyframe-referenced delta or a new keyframe): ids live in
    // `previous` and not here count as dead from now on, and a live id here that died before is
    // gaussian-id-reused (M112). `previous` is consumed.
    Status succeed(ComposedPopulation&& previous, const ChunkRef& chunk);

    // Applies one delta (§11.3): deaths, updates, births. Refuses gaussian-id-in-two-groups
    // (M113/M126), duplicate-gaussian-id within a group or for a birth of a live id (M125),
    // unknown-gaussian-id for an update or death of an id not live (M124), gaussian-id-reused for
    // a birth of an id that died (M112), composed-bin-out-of-range (M116/M130), and limit-exceeded
    // when the population would exceed `max_population`. On failure the population is unchanged
    // only up to the failing group (callers discard it).
    Status apply(const DeltaBins& delta, const ChunkRef& chunk,
                 std::uint64_t max_population = std::uint64_t{1} << 26);

    std::size_t size() const noexcept { return bins_.count; }
    bool contains(std::uint32_t id) const { return slot_.count(id) != 0; }
    int sh_bands() const noexcept { return bins_.sh_bands; }
    // Ids that were live in some state this population went through and are not live now.
    const std::unordered_set<std::uint32_t>& dead_ids() const noexcept { return dead_; }

    // The population as a ChunkBins sorted by gaussian_id (has_gaussian_id set), ready for
    // dequantize(). Deterministic: the same composed state gives the same bytes.
    void materialize(ChunkBins& out) const;

private:
    Status check_group_ids(const DeltaBins& d, const ChunkRef& chunk);
    void remove_slot(std::uint32_t slot);
    void append_row(const ChunkBins& src, std::uint32_t row);

    ChunkBins bins_;  // slot order
    std::unordered_map<std::uint32_t, std::uint32_t> slot_;
    std::unordered_set<std::uint32_t> dead_;
};

// ---------------------------------------------------------------------------------------------
// The seek walk (§11.8), from the index alone.

// What one seek costs, computed before any fetch: the chain's records plus the wanted bands.
struct SeekPlan {
    std::size_t current = 0;          // index entry of current(t)
    std::vector<std::size_t> chain;   // index entries, keyframe first, current(t) last
    std::uint64_t chunk_bytes = 0;    // sum of chunk_length over the chain
    std::uint64_t band_bytes = 0;     // the wanted SH bands of every chain entry
    std::uint64_t total_bytes() const noexcept { return chunk_bytes + band_bytes; }
};

// The Chunk Index of a keyframe-delta file, validated once: every entry carries the appended
// fields; entries tile [0, duration) (M110/M118); a keyframe entry's duplicated fields are what a
// Chunk implies (index-record-mismatch); every delta's chain walks backwards (M119), through
// entries that exist (M120), to a keyframe (M122) that is the one its keyframe_offset names, in
// exactly depth + 1 steps (M117/M121); delta_mode agrees with reference_offset.
class KeyframeTimeline {
public:
    static Result<KeyframeTimeline> build(std::vector<ChunkIndex> index, double duration);

    // current(t): the unique entry with t0 <= t < t1; invalid-argument outside [0, duration).
    Result<std::size_t> current(double t) const;
    // chain(t): keyframe first.
    Result<std::vector<std::size_t>> chain(double t) const;
    // The chain of index entry `entry` (keyframe first).
    const std::vector<std::size_t>& chain_of(std::size_t entry) const { return chains_[entry]; }
    // The plan for t: chain and byte cost with bands 1..wanted_bands.
    Result<SeekPlan> plan(double t, int wanted_bands) const;

    const std::vector<ChunkIndex>& entries() const noexcept { return index_; }
    // Entries in time order (index positions).
    const std::vector<std::size_t>& by_time() const noexcept { return by_time_; }

private:
    std::vector<ChunkIndex> index_;  // a copy of the Chunk Index, in file order
    std::vector<std::size_t> by_time_;
    std::vector<std::vector<std::size_t>> chains_;
};

// ---------------------------------------------------------------------------------------------
// Indexed front-end.

// Buffers one thread reuses across state_at calls.
struct KeyframeDeltaWorkspace {
    std::vector<std::uint8_t> record;
    std::array<std::vector<std::uint8_t>, 3> bands;
    ChunkBins keyframe;
    DeltaBins delta;
    DecodeScratch scratch;
    ComposedPopulation population;
    ChunkBins composed;  // the last state_at's bins, sorted by gaussian_id
};

// What state_at composed: the chunk, its kind and depth, and the byte cost it fetched.
struct StateInfo {
    std::uint64_t offset = 0, length = 0;  // the state chunk's record
    double t0 = 0, t1 = 0;
    std::uint32_t level = 0;
    std::uint8_t chunk_kind = 0;  // 0 keyframe, 1 delta
    std::uint8_t delta_mode = 0;
    std::uint16_t depth = 0;
    std::uint64_t reference_offset = 0, keyframe_offset = 0;
    std::uint64_t live_count = 0;  // the composed population's size
    int sh_bands = 0;
};

class KeyframeDeltaReader {
public:
    // Opens a random-access keyframe-delta file: the tail, summary and front matter through
    // IndexedReader (with accept_keyframe_delta set), then the timeline checks. Refusals: those of
    // IndexedReader::open; unknown-temporal-model for a file that is not keyframe-delta;
    // no-chunk-index (summary_start 0: read it with KeyframeDeltaStream, M016); and every
    // KeyframeTimeline::build refusal.
    static Result<KeyframeDeltaReader> open(ByteSource& source, ReaderOptions options = {});

    const SceneInfo& scene() const noexcept { return base_.scene(); }
    const KeyframeTimeline& timeline() const noexcept { return timeline_; }

    // §11.8 from the index alone, before any fetch.
    Result<std::size_t> current(double t) const { return timeline_.current(t); }
    Result<std::vector<std::size_t>> chain(double t) const { return timeline_.chain(t); }
    Result<SeekPlan> plan(double t) const { return timeline_.plan(t, wanted_bands()); }
    // The byte ranges state_at(t) reads (plan(t)'s chain, announced to the source's prefetch
    // first); their lengths sum to plan(t).total_bytes().
    Result<std::vector<ByteRange>> fetch_ranges(double t) const;

    // Fetches exactly plan(t)'s ranges, checks every fetched record against its index entry
    // (index-record-mismatch naming the field, M123; live_count included) and its reference
    // (level-mismatch, M131), composes the chain and leaves the bins in ws.composed. `info`
    // (optional) receives the state chunk's description.
    Status state_bins_at(double t, KeyframeDeltaWorkspace& ws, StateInfo* info = nullptr) const;
    // The same, then dequantized into `out` (cleared first): the §3 state of every gaussian live
    // over current(t), sorted by gaussian_id. Evaluate it at t with reconstruct.hpp.
    Status state_at(double t, GaussianBlock& out, KeyframeDeltaWorkspace& ws,
                    StateInfo* info = nullptr) const;
    // Convenience with an internal workspace (not thread-safe).
    Status state_at(double t, GaussianBlock& out, StateInfo* info = nullptr);

    std::uint64_t bytes_fetched() const noexcept { return base_.bytes_fetched() + fetched_->load(); }

private:
    KeyframeDeltaReader(IndexedReader base, ByteSource& source, ReaderOptions options,
                        KeyframeTimeline timeline)
        : base_(std::move(base)), source_(&source), options_(options),
          timeline_(std::move(timeline)),
          fetched_(std::make_unique<std::atomic<std::uint64_t>>(0)),
          own_(std::make_unique<KeyframeDeltaWorkspace>()) {}
    int wanted_bands() const;
    Status fetch(std::uint64_t offset, std::uint64_t length, std::vector<std::uint8_t>& out) const;
    Status fetch_bands(const ChunkIndex& e, KeyframeDeltaWorkspace& ws,
                       std::vector<ShBandRecord>& bands) const;

    IndexedReader base_;
    ByteSource* source_;
    ReaderOptions options_;
    KeyframeTimeline timeline_;
    std::unique_ptr<std::atomic<std::uint64_t>> fetched_;
    std::unique_ptr<KeyframeDeltaWorkspace> own_;
};

// ---------------------------------------------------------------------------------------------
// Streaming front-end.

// Reads a keyframe-delta file front to back from any byte source (a pipe included). It holds
// the current composed population and, while a GOP is open, a copy of its keyframe's population
// (a keyframe-referenced delta composes onto it, §11.4): two populations, plus one chunk record
// with its band records and one record read ahead, plus the summary. Each state chunk's composed
// state is available as it arrives (next_state). Checks as it goes: tiling in file order (M110),
// references backwards to a state chunk already seen (M119/M120), the GOP keyframe (M122), depth
// (M121), level (M131), every composition rule, and — when the summary arrives — every Chunk
// Index entry against the chunk it frames (M123) and the summary CRC. On a truncated file it
// returns every complete chunk's state (a chunk whose trailing SH bands were cut keeps the whole
// bands that arrived, M100), then an Error of kind truncated; it never interprets a partial
// record (M132, §11.10).
class KeyframeDeltaStream {
public:
    explicit KeyframeDeltaStream(ByteSource& source, ReaderOptions options = {});

    // Magic and front matter up to the first state chunk. Refusals as StreamingReader::open, and
    // unknown-temporal-model for a file that is not keyframe-delta.
    Status open();
    const SceneInfo& scene() const noexcept { return builder_.scene(); }

    // Composes the next state chunk. Returns true with the state's bins (sorted by gaussian_id)
    // in `bins`, false at the clean end of the file; a truncation is an Error of kind truncated
    // after the last complete chunk's state (kept in truncation()).
    Result<bool> next_state_bins(ChunkBins& bins, StateInfo* info = nullptr);
    // The same, dequantized into `out` (cleared first).
    Result<bool> next_state(GaussianBlock& out, StateInfo* info = nullptr);

    // The current composed population (after the last next_state).
    const ComposedPopulation& population() const noexcept { return current_; }
    // Distinct gaussian_id values seen so far (the Header's gaussian_count, §5.1, when complete).
    std::uint64_t distinct_ids() const noexcept {
        return current_.size() + current_.dead_ids().size();
    }
    bool finished() const noexcept { return finished_; }
    const std::optional<Error>& truncation() const noexcept { return truncation_; }

private:
    struct Pending {
        bool valid = false;
        RecordView view;
        std::vector<std::uint8_t> bytes;
    };
    struct SeenState {
        std::uint64_t offset = 0, length = 0;
        double t0 = 0, t1 = 0;
        std::uint8_t kind = 0, delta_mode = 0;
        std::uint16_t depth = 0;
        std::uint64_t reference_offset = 0, keyframe_offset = 0;
        std::uint32_t gaussian_count = 0;
        std::uint64_t live = 0;
        std::vector<ChunkIndex::Band> bands;
    };
    Result<bool> read_record(Pending& slot);
    Result<bool> advance_to_state();
    Status absorb(const Pending& rec);
    Status finish_footer(const Pending& rec);
    Status check_index_entry(const ChunkIndex& e, std::uint64_t at) const;
    Status compose_state(const RecordView& r, std::span<const ShBandRecord> bands,
                         const ChunkDecodeOptions& decode, SeenState& seen);

    ByteSource* source_;
    ReaderOptions options_;
    SceneBuilder builder_;
    std::uint64_t position_ = 0;
    bool opened_ = false, finished_ = false;
    std::optional<Error> truncation_;

    Pending lookahead_, chunk_slot_;
    std::array<Pending, 3> band_slots_;
    std::vector<ShBandRecord> bands_;
    std::vector<SeenState> seen_;  // file order
    ChunkBins bins_;
    DeltaBins delta_;
    DecodeScratch scratch_;
    ComposedPopulation current_, keyframe_;
    bool have_keyframe_ = false;
    std::uint32_t keyframe_level_ = 0, previous_level_ = 0;
    std::uint64_t keyframe_offset_ = 0;
    std::uint16_t previous_depth_ = 0;

    SummaryRun summary_run_;  // the trailing summary records, for summary_crc (§4.5)
};

}  // namespace fourdgs
