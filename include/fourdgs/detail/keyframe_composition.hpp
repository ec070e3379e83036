// fourdgs/detail/keyframe_composition.hpp — the keyframe-delta model's composition (§11.3-§11.7): a
// Delta Chunk decoded to bins, and a population composed from a keyframe and the deltas after it.
//
// Composition happens in the bin domain, keyed by gaussian_id (§11.3): deaths, then updates (bin
// differences added to the reference's bins in 64-bit arithmetic, refused when a composed bin
// leaves i32, §11.7; rotation_index/rotation restated absolutely, §11.5; an absent stream means
// unchanged), then births (the full attribute set). Dequantization happens once, at the end, by
// materializing the population into a ChunkBins sorted by gaussian_id and handing it to
// decode.hpp's dequantize(): a composed state is exactly the bins a keyframe at that instant would
// carry, so both front-ends (keyframe_delta.hpp), and a writer verifying its own output, agree bin
// for bin. A Delta Chunk's block is opened and its rows checked by decode.hpp's steps, as a
// Chunk's are.
//
// Thread safety: a ComposedPopulation is used by one thread at a time; decode_delta_bins is
// thread-safe given distinct outputs and scratch.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "fourdgs/decode.hpp"
#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"

FOURDGS_DETAIL_BEGIN
namespace fourdgs::detail {

// Names a state chunk in messages: "Delta Chunk at byte 1765 [1, 2)".
struct ChunkRef {
    std::uint64_t offset = 0;
    double t0 = 0, t1 = 0;
    bool delta = false;

    std::string describe() const;
};

// §11.6: a delta composes onto a state of its own level. level-mismatch naming both levels and
// the reference, at `at`.
Status check_delta_level(const ChunkRef& delta, std::uint32_t level,
                         std::uint64_t reference_offset, std::uint32_t reference_level,
                         std::uint64_t at);

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

// A framed Chunk or Delta Chunk record, parsed: exactly one of the two is set. Every front-end
// that meets either kind parses it here, so the opcode decides the parser in one place.
struct StateChunk {
    std::optional<ChunkRecord> chunk;  // the record is a Chunk
    std::optional<DeltaChunk> delta;   // the record is a Delta Chunk
    [[nodiscard]] double t0() const { return chunk ? chunk->t0 : delta->t0; }
    [[nodiscard]] double t1() const { return chunk ? chunk->t1 : delta->t1; }
};

// Parses a Chunk record (opcode op::chunk) or else a Delta Chunk record, with that record's own
// parser's refusals.
Result<StateChunk> parse_state_chunk(const RecordView& record);

// Decodes a parsed state chunk and the SH band records that follow it: a Chunk into `bins`
// (decode_chunk_bins), a Delta Chunk into `delta_bins` (decode_delta_bins). Split from the parse
// because every front-end checks something of its own in between (bands read, framing noted,
// references walked), and the order of those faults is part of the format's contract.
Status decode_state_chunk_bins(const SceneInfo& scene, const StateChunk& parsed,
                               std::span<const ShBandRecord> bands,
                               const ChunkDecodeOptions& options, ChunkBins& bins,
                               DeltaBins& delta_bins, DecodeScratch& scratch);

// Copies row k of `rows` over row at[k] of `into` (which has the same columns and SH bands), for
// every k: a state's changed rows written back in place. With `only`, just the attribute
// columns it flags (by attr id; an update group's streams, which carry no SH).
void scatter_rows(const ChunkBins& rows, std::span<const std::uint32_t> at, ChunkBins& into,
                  const std::array<bool, attr::kKnownCount>* only = nullptr);

// The row of each id in `ids` within `sorted` (strictly ascending gaussian_ids, a state's), in
// order, appended to `rows` as far as the first id `sorted` lacks; returns how many were found.
// A merge walk: ids that ascend (as a group's do) are each searched from the row found before,
// galloping, and where `sorted` holds consecutive ids a row is the id's distance from the first.
std::size_t rows_of_ids(std::span<const std::int32_t> sorted, std::span<const std::int32_t> ids,
                        std::vector<std::uint32_t>& rows);

// What a caller of ComposedPopulation::apply does with the update group's composed rows, a block
// of rows at a time while they are still in cache: a forward step dequantizes them (and copies
// them into a held sorted state) as they compose, instead of gathering every updated row again
// from the population's columns of a million rows after the whole update has composed.
class ComposedRowsSink {
public:
    // Called once, before the update group composes (after the deaths): `slots` is the
    // population slot of each update row that is live, in the group's order. Returns the bins
    // columns take() reads beyond the update group's own (they are gathered from the
    // population for each block, or filled while every live gaussian shares them), or nullopt
    // to receive no rows.
    virtual std::optional<std::array<bool, attr::kKnownCount>> begin(
        const DeltaBins& delta, std::span<const std::uint32_t> slots) = 0;
    // Rows [first, first + rows.count) of the update group, composed: the columns the update
    // group carries hold the rows' bins after the update, the columns begin() asked for the
    // rows' bins; the other columns mean nothing.
    virtual void take(const ChunkBins& rows, std::size_t first) = 0;

protected:
    ~ComposedRowsSink() = default;
};

// gaussian_id → slot in a ComposedPopulation. Writers number gaussians densely from 0, so while
// the ids stay below a bound proportional to the population a table indexed by id answers (one
// load, 4 bytes an id); an id past it moves the map to a hash map.
class IdSlots {
public:
    static constexpr std::uint32_t kNone = 0xFFFFFFFFu;

    void clear() noexcept;
    // Room for n ids (the dense table's bound grows with it).
    void reserve(std::size_t n);
    // The slot of `id`, or kNone.
    std::uint32_t find(std::uint32_t id) const {
        if (dense_) return id < table_.size() ? table_[id] : kNone;
        const auto it = sparse_.find(id);
        return it == sparse_.end() ? kNone : it->second;
    }
    bool contains(std::uint32_t id) const { return find(id) != kNone; }
    void set(std::uint32_t id, std::uint32_t slot);
    void erase(std::uint32_t id);
    std::size_t size() const noexcept { return size_; }

private:
    void to_sparse();

    std::vector<std::uint32_t> table_;  // dense: the slot of each id, kNone when not live
    std::unordered_map<std::uint32_t, std::uint32_t> sparse_;
    bool dense_ = true;
    std::size_t size_ = 0, reserved_ = 0;
};

// A composed state in integer bins, keyed by gaussian_id. Storage is structure-of-arrays (a
// ChunkBins in slot order) plus an id → slot map (IdSlots). While the slots are in gaussian_id
// order (a keyframe whose ids ascend, as writers write them, then updates, deaths — the rows
// after a dead one move down — and births of new highest ids), the population is its own
// sorted state: materialize is a copy and a slot is its state row. Out of that order a death
// swaps the last slot into the freed one.
// Memory: one ChunkBins row per live gaussian (about 100 bytes plus SH) and 4 bytes an id (a
// hash entry when ids are sparse). Copyable (the streaming front-end keeps the GOP keyframe's
// state beside the current one).
class ComposedPopulation {
public:
    // Empties the population and forgets dead ids. `sh_bands` is the SH degree it carries (bands
    // 1..sh_bands of every keyframe and birth; higher bands are dropped).
    void reset(int sh_bands);
    // The same, before a keyframe is decoded into `next_keyframe` and taken (take_keyframe):
    // the population's storage, its columns' sizes kept, becomes `next_keyframe`'s, so the
    // decode overwrites warm pages in place instead of zeroing and faulting in fresh ones (the
    // decode writes every value of each column it sizes, or refuses the chunk). A seek then
    // holds one set of bins, not two.
    void reset(int sh_bands, ChunkBins& next_keyframe);

    // Replaces the live set with a keyframe chunk's bins (§11.1), keeping the dead ids. Refuses
    // missing-gaussian-id (the chunk has gaussians but no id stream), duplicate-gaussian-id
    // (M111/M127) and gaussian-id-reused for an id this population saw die (M112).
    Status assign_keyframe(const ChunkBins& keyframe, const ChunkRef& chunk);
    // The same, taking the keyframe's storage instead of copying it when its ids ascend (the
    // writers' order): `keyframe` is left holding the population's previous storage (its rows
    // mean nothing; its capacity serves the next decode). Other keyframes are copied, as
    // assign_keyframe does. Refusals as assign_keyframe.
    Status take_keyframe(ChunkBins& keyframe, const ChunkRef& chunk);

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
    // only up to the failing group (callers discard it). Updates are applied in place, column
    // by present stream: a step costs the rows and streams its delta carries. `updated`
    // (optional) receives the slot of each gaussian the update group changed, in the group's
    // order (for gather()), and `sink` (optional) those gaussians' composed rows, a block at a
    // time, as they compose (ComposedRowsSink).
    Status apply(const DeltaBins& delta, const ChunkRef& chunk,
                 std::uint64_t max_population = std::uint64_t{1} << 26,
                 std::vector<std::uint32_t>* updated = nullptr,
                 ComposedRowsSink* sink = nullptr);

    std::size_t size() const noexcept { return bins_.count; }
    bool contains(std::uint32_t id) const { return slot_.contains(id); }
    // Whether the slots are in ascending gaussian_id order: slot k is row k of materialize().
    bool in_id_order() const noexcept { return in_order_; }
    int sh_bands() const noexcept { return bins_.sh_bands; }
    // Ids that were live in some state this population went through and are not live now.
    const std::unordered_set<std::uint32_t>& dead_ids() const noexcept { return dead_; }

    // The population as a ChunkBins sorted by gaussian_id (has_gaussian_id set), ready for
    // dequantize(). Deterministic: the same composed state gives the same bytes.
    void materialize(ChunkBins& out) const;
    // The rows of the given slots (as apply's `updated` names them), in that order, as a
    // ChunkBins (replaced) with the population's columns and SH bands; with `only`, just the
    // attribute columns it flags (by attr id; the others and SH are left as they were). Slots
    // are valid until the next change of the population.
    // The timing columns (sigma_t, flags, window_index), which no update changes (§11.3), are
    // filled rather than gathered while every live gaussian shares their bins.
    void gather(std::span<const std::uint32_t> slots, ChunkBins& out,
                const std::array<bool, attr::kKnownCount>* only = nullptr) const;
    // The population itself, in slot order: while in_id_order(), the state sorted by
    // gaussian_id (what materialize() copies), with every column holding every row.
    const ChunkBins& slot_bins() const noexcept { return bins_; }

private:
    Status check_group_ids(const DeltaBins& d, const ChunkRef& chunk);
    // The slot of each id in `ids`, in order, into `slots` (replaced) as far as the first id not
    // live; returns how many were found.
    std::size_t find_slots(std::span<const std::int32_t> ids, std::vector<std::uint32_t>& slots) const;
    // Removes the ascending slots `dead` (ids already erased), keeping the others' order.
    void remove_slots_in_order(std::span<const std::uint32_t> dead);
    void append_row(const ChunkBins& src, std::uint32_t row);
    // Whether rows [from, size()) keep the timing bins all rows shared; sets them from row 0
    // when `from` is 0.
    void note_timing(std::uint32_t from);

    ChunkBins bins_;  // slot order
    IdSlots slot_;
    std::unordered_set<std::uint32_t> dead_;
    bool in_order_ = true;  // slot order is gaussian_id order
    // sigma_t, flags and window_index, when every live gaussian has these bins.
    std::optional<std::array<std::int32_t, 3>> timing_;
    // Composes the update group's rows [0, live) (their slots in `slots`) a block at a time,
    // handing each block to `sink`; refusals as apply.
    Status compose_updates_in_blocks(const DeltaBins& d, std::span<const std::uint32_t> slots,
                                     const std::array<bool, attr::kKnownCount>& reads,
                                     const ChunkRef& chunk, ComposedRowsSink& sink);

    std::vector<std::uint32_t> slots_, dead_slots_;  // apply's scratch, kept for its capacity
    ChunkBins block_;  // a block of composed rows for a ComposedRowsSink, kept for its capacity
};

}  // namespace fourdgs::detail
FOURDGS_DETAIL_END
