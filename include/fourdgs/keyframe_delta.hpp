// fourdgs/keyframe_delta.hpp — the keyframe-delta temporal model (§11): two front-ends that read
// keyframe-delta files — one indexed (fetches exactly one chain per instant), one streaming
// (mutates the population as deltas arrive in file order) — composed of the model's layers:
//   detail/keyframe_composition.hpp  a Delta Chunk to bins; a population composed from them (§11.3-§11.7)
//   keyframe_timeline.hpp     the seek walk over the Chunk Index (§11.1, §11.8)
// on top of the layers every front-end shares: the record stream and range fetches
// (detail/record_stream.hpp), the scene assembly (front_matter.hpp), the chunk decode (decode.hpp) and
// the index check (detail/index_check.hpp). The front-ends hold no framing, block decoding, band fetching
// or scene assembly of their own: they compose and walk chains. The detail/ pieces are not API:
// this header names them only behind pointers, and includes none.
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
//   missing-keyframe-index-fields   the index cannot drive a seek
// (A file without an index is read by IndexedReader's scan, which builds one from the states.)
// plus the chunk-decode refusals of decode.hpp (stream-element-count-mismatch against the
// group's count, unknown-chunk-compression naming the codec, missing-attribute-stream, ...).
//
// Thread safety: ComposedPopulation and KeyframeDeltaStream are used by one thread at a time.
// KeyframeDeltaReader::state_at may be called from several threads at once with distinct
// workspaces, when the ByteSource's read_at is thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "fourdgs/decode.hpp"
#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/keyframe_delta_stream.hpp"
#include "fourdgs/keyframe_timeline.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/state_timeline.hpp"
#include "fourdgs/streaming_reader.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

namespace detail {
class ComposedRowsSink;
class RangeFetcher;
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Indexed front-end.

// Buffers one thread reuses across state_at and step_forward calls.
struct KeyframeDeltaWorkspace : FetchedChunkBuffers {
    static constexpr std::size_t kNone = ~std::size_t{0};

    KeyframeDeltaWorkspace();
    ~KeyframeDeltaWorkspace();
    KeyframeDeltaWorkspace(KeyframeDeltaWorkspace&&) noexcept;
    KeyframeDeltaWorkspace& operator=(KeyframeDeltaWorkspace&&) noexcept;

    ChunkBins keyframe;
    DecodeScratch scratch;
    // The composed population and a delta's decoded bins (detail/keyframe_composition.hpp: not
    // API), which only the reader touches.
    struct Composition;
    std::unique_ptr<Composition> composition;
    // The state composed last, sorted by id, when `composed_current`: state_bins_at always
    // leaves it here. state_at and step_forward copy it out of `population` only when the
    // population's slots are not in id order (otherwise the population is the sorted state,
    // and a step updates it in place), and keep it current while it is.
    ChunkBins composed;
    bool composed_current = false;
    // Which state `population` (and `composed`) hold: the index entry of its state chunk and
    // that chunk's level, or kNone (nothing yet, or the last call failed part-way).
    std::size_t composed_entry = kNone;
    std::uint32_t composed_level = 0;
};

// What one forward step (KeyframeDeltaReader::step_forward) changed in the state sorted by
// gaussian_id: the rows whose values changed with their new §3 values, or — when gaussians died
// or were born, so rows moved — the whole state. Applying it to the state before the step gives
// exactly the state state_at gives after it.
struct StateStep {
    bool whole = false;                // `values` is the whole state after the step
    std::vector<std::uint32_t> rows;   // !whole: the changed rows of the state, in any order
    // !whole: row k is the new value of rows[k], in the columns made from `attributes` only
    // (the others are empty).
    GaussianBlock values;
    // !whole: the attributes the step changed (by attr id: the update group's streams); only
    // the §3 columns made from them differ (position, scale, rotation, color, motion, mu_t,
    // object_id, source ids: the GOP invariants sigma_t, flags and window never change).
    std::array<bool, attr::kKnownCount> attributes{};

    // Brings `state` (the state before the step, as state_at or earlier steps left it) to the
    // state after it: copies each changed row in place, or swaps the whole state in (`values`
    // then holds the old one). O(rows) for a step that moved no rows.
    void apply_to(GaussianBlock& state);
};

class KeyframeDeltaReader {
public:
    // Opens a random-access keyframe-delta file: the tail, summary and front matter through
    // IndexedReader (with accept_keyframe_delta set), then the timeline checks. Chunks and their
    // SH bands are fetched through a RangeFetcher (detail/record_stream.hpp), as the indexed reader's.
    // A file without an index (summary_start 0, M016), or whose tail cannot be used, is read by
    // IndexedReader's sequential scan, which composes every state once front to back and, for a
    // file without one, builds the index with its six §5.8 fields from the composed states: such
    // a file is then sought as one with its own index (base().index_built_by_scan() says so).
    // Refusals: those of IndexedReader::open; unknown-temporal-model for a file that is not
    // keyframe-delta; and every KeyframeTimeline::build refusal.
    static Result<KeyframeDeltaReader> open(ByteSource& source, ReaderOptions options = {});
    // The same from an IndexedReader already opened on the file (with accept_keyframe_delta set):
    // its tail, summary and front matter are taken over, nothing is read again. Refusals as
    // open(), past IndexedReader::open's.
    static Result<KeyframeDeltaReader> open(IndexedReader&& opened);

    const SceneInfo& scene() const noexcept { return base_.scene(); }
    const KeyframeTimeline& timeline() const noexcept { return timeline_; }
    // One span per state chunk, its chunks the chain (StateTimeline::of_states).
    const StateTimeline& states() const noexcept { return states_; }
    // The indexed reader underneath: read_by_scan(), scan_cause(), index_built_by_scan().
    const IndexedReader& base() const noexcept { return base_; }

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

    // Playing forward through a GOP without recomposing it (§11.4): when the state chunk after
    // the one `ws` holds (composed by state_bins_at / state_at or an earlier step) is a Delta
    // Chunk chained onto it, fetches, checks and decodes that one record and applies it to the
    // composed state in place (ws.population, in bins, §11.3: each update stream's differences
    // added to the rows its ids name, column by column), so the step costs one delta, not the
    // chain from its keyframe, and an update dequantizes only the columns it changed, of the
    // rows it changed; `step` receives what changed in the §3 state
    // (StateStep) and `info` the new state chunk's description. Returns false with nothing
    // done when the next state chunk is a keyframe or a keyframe-referenced delta, when `ws`
    // holds no state, or at the end of the timeline: compose that state with state_at (a seek).
    // Refusals: those state_bins_at gives for that record; on a refusal `ws` holds no state.
    Result<bool> step_forward(KeyframeDeltaWorkspace& ws, StateStep& step,
                              StateInfo* info = nullptr) const;
    // The index entry step_forward(ws) would compose, from the index alone; nullopt when it
    // would return false.
    Result<std::optional<std::size_t>> next_step(const KeyframeDeltaWorkspace& ws) const;

    std::uint64_t bytes_fetched() const noexcept;

    ~KeyframeDeltaReader();
    KeyframeDeltaReader(KeyframeDeltaReader&&) noexcept;
    KeyframeDeltaReader& operator=(KeyframeDeltaReader&&) noexcept;

private:
    KeyframeDeltaReader(IndexedReader base, ByteSource& source, ReaderOptions options,
                        KeyframeTimeline timeline);
    int wanted_bands() const;
    // Fetches, checks and composes index entry `c` onto ws.population (a keyframe replaces it,
    // a delta applies to it; ws.composed_level is the reference's level before and the record's
    // after); `record` receives what the record says of itself, `sink` (optional) a delta's
    // updated rows as they compose, and `updated` (optional) their population slots.
    Status compose_entry(std::size_t c, KeyframeDeltaWorkspace& ws, StateInfo& record,
                         detail::ComposedRowsSink* sink,
                         std::vector<std::uint32_t>* updated = nullptr) const;
    void describe_state(std::size_t c, const KeyframeDeltaWorkspace& ws, const StateInfo& record,
                        StateInfo& info) const;
    // Fetches and composes plan(t)'s chain into ws.population (ws.composed only when the
    // population is out of id order).
    Status compose_chain(double t, KeyframeDeltaWorkspace& ws, StateInfo* info) const;
    // ws.composed made from ws.population (sorted by id) and marked current.
    static void materialize_composed(KeyframeDeltaWorkspace& ws);
    // The composed state's bins sorted by gaussian_id: ws.composed when current, else the
    // population itself (then in id order).
    static const ChunkBins& sorted_state(const KeyframeDeltaWorkspace& ws);

    IndexedReader base_;
    ReaderOptions options_;
    KeyframeTimeline timeline_;
    StateTimeline states_;
    std::unique_ptr<detail::RangeFetcher> fetcher_;
    std::unique_ptr<KeyframeDeltaWorkspace> own_;
};

}  // namespace fourdgs
FOURDGS_PUBLIC_END
