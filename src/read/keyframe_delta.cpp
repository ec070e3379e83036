// The keyframe-delta indexed front-end (fourdgs/keyframe_delta.hpp): KeyframeDeltaReader walks a
// chain of fetched records. The streaming one is keyframe_delta_stream.cpp.
#include "fourdgs/keyframe_delta.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>

#include "fourdgs/detail/index_check.hpp"
#include "fourdgs/detail/keyframe_composition.hpp"
#include "fourdgs/detail/record_stream.hpp"
#include "keyframe_states.hpp"

namespace fourdgs {

using detail::ChunkRef;
using detail::ComposedPopulation;
using detail::ComposedRowsSink;
using detail::DeltaBins;
using detail::IndexCheckOptions;
using detail::IndexedChunk;
using detail::RangeFetcher;
using detail::rows_of_ids;
using detail::check_delta_level;
using detail::check_live_count;
using detail::decode_state_chunk_bins;
using detail::fetch_indexed_chunk;
using detail::scatter_rows;
using detail::describe_delta;
using detail::describe_keyframe;
using detail::keyframe_delta_options;
using detail::wanted_bands_for;


// ---------------------------------------------------------------------------------------------
// KeyframeDeltaWorkspace.

struct KeyframeDeltaWorkspace::Composition {
    DeltaBins delta;
    ComposedPopulation population;
};

KeyframeDeltaWorkspace::KeyframeDeltaWorkspace() : composition(std::make_unique<Composition>()) {}
KeyframeDeltaWorkspace::~KeyframeDeltaWorkspace() = default;
KeyframeDeltaWorkspace::KeyframeDeltaWorkspace(KeyframeDeltaWorkspace&&) noexcept = default;
KeyframeDeltaWorkspace& KeyframeDeltaWorkspace::operator=(KeyframeDeltaWorkspace&&) noexcept =
    default;

// ---------------------------------------------------------------------------------------------
// KeyframeDeltaReader.

KeyframeDeltaReader::KeyframeDeltaReader(IndexedReader base, ByteSource& source,
                                         ReaderOptions options, KeyframeTimeline timeline)
    : base_(std::move(base)), options_(options), timeline_(std::move(timeline)),
      states_(StateTimeline::of_states(timeline_)),
      fetcher_(std::make_unique<RangeFetcher>(source, options.max_record_bytes)),
      own_(std::make_unique<KeyframeDeltaWorkspace>()) {}
KeyframeDeltaReader::~KeyframeDeltaReader() = default;
KeyframeDeltaReader::KeyframeDeltaReader(KeyframeDeltaReader&&) noexcept = default;
KeyframeDeltaReader& KeyframeDeltaReader::operator=(KeyframeDeltaReader&&) noexcept = default;

std::uint64_t KeyframeDeltaReader::bytes_fetched() const noexcept {
    return base_.bytes_fetched() + fetcher_->bytes_fetched();
}

Result<KeyframeDeltaReader> KeyframeDeltaReader::open(ByteSource& source, ReaderOptions options) {
    FOURDGS_ASSIGN(IndexedReader base, IndexedReader::open(source, keyframe_delta_options(options)));
    return open(std::move(base));
}

Result<KeyframeDeltaReader> KeyframeDeltaReader::open(IndexedReader&& base) {
    const SceneInfo& scene = base.scene();
    FOURDGS_TRY(require_keyframe_delta(scene.header, kMagicSize));
    // (A file read by the scan had its states composed there, front to back, so a damaged one is
    // refused with the fault the streaming path meets first; a file without an index got one
    // built from the composed states.)
    FOURDGS_ASSIGN(KeyframeTimeline tl,
                   KeyframeTimeline::build(scene.index, scene.header.duration_sec));
    ByteSource& source = base.source();
    const ReaderOptions options = keyframe_delta_options(base.options());
    return KeyframeDeltaReader(std::move(base), source, options, std::move(tl));
}


int KeyframeDeltaReader::wanted_bands() const { return wanted_bands_for(scene(), options_); }

Result<std::vector<ByteRange>> KeyframeDeltaReader::fetch_ranges(double t) const {
    FOURDGS_ASSIGN(SeekPlan plan, timeline_.plan(t, wanted_bands()));
    std::vector<ByteRange> out;
    for (std::size_t c : plan.chain)
        RangeFetcher::append_ranges(timeline_.entries()[c], wanted_bands(), out);
    return out;
}

Status KeyframeDeltaReader::compose_entry(std::size_t c, KeyframeDeltaWorkspace& ws,
                                          StateInfo& record, detail::ComposedRowsSink* sink,
                                          std::vector<std::uint32_t>* updated) const {
    const SceneInfo& sc = scene();
    const ChunkIndex& e = timeline_.entries()[c];
    const KeyframeIndexFields& k = *e.keyframe;
    ChunkDecodeOptions decode = options_.decode;
    decode.max_sh_degree = wanted_bands();
    IndexCheckOptions fetched;
    fetched.ranges = false;  // each record is fetched by its entry's own range
    fetched.keyframe = IndexCheckOptions::KeyframeFields::required;
    const std::uint8_t expect = k.chunk_kind == kChunkKindKeyframe ? op::chunk : op::delta_chunk;
    FOURDGS_ASSIGN(IndexedChunk fetched_chunk,
                   fetch_indexed_chunk(*fetcher_, e, expect, fetched, wanted_bands(), false, ws,
                                       {"chunk_length", "chunk_kind"}));
    const ChunkRef ref{e.chunk_offset, fetched_chunk.t0(), fetched_chunk.t1(),
                       fetched_chunk.delta.has_value()};
    // §11.6 before the delta is decoded: a delta onto a state of another level is refused first.
    if (fetched_chunk.delta)
        FOURDGS_TRY(check_delta_level(ref, fetched_chunk.delta->level,
                                      fetched_chunk.delta->reference_offset, ws.composed_level,
                                      e.chunk_offset));
    FOURDGS_TRY(decode_state_chunk_bins(sc, fetched_chunk, ws.band_records, decode, ws.keyframe,
                                        ws.composition->delta, ws.scratch));
    if (fetched_chunk.chunk) {
        describe_keyframe(ws.keyframe, record);
        // The population takes the decoded bins' storage (and leaves its own for the next
        // keyframe's decode) rather than copying a keyframe's worth of rows.
        FOURDGS_TRY(ws.composition->population.take_keyframe(ws.keyframe, ref));
        ws.composed_level = fetched_chunk.chunk->level;
    } else {
        const DeltaChunk& d = *fetched_chunk.delta;
        FOURDGS_TRY(ws.composition->population.apply(
            ws.composition->delta, ref, options_.decode.limits.max_gaussians_per_chunk, updated,
            sink));
        ws.composed_level = d.level;
        describe_delta(d, ws.composition->delta, record);
    }
    return check_live_count(e, ws.composition->population.size(), e.chunk_offset);
}

void KeyframeDeltaReader::describe_state(std::size_t c, const KeyframeDeltaWorkspace& ws,
                                         const StateInfo& record, StateInfo& info) const {
    const ChunkIndex& e = timeline_.entries()[c];
    const KeyframeIndexFields& k = *e.keyframe;
    info = StateInfo{e.chunk_offset, e.chunk_length, e.t0, e.t1, ws.composed_level,
                     k.chunk_kind, k.delta_mode, k.depth, k.reference_offset,
                     k.keyframe_offset, ws.composition->population.size(),
                     ws.composition->population.sh_bands(),
                     record.update_count, record.birth_count, record.death_count,
                     record.object_id_stream};
}

Status KeyframeDeltaReader::compose_chain(double t, KeyframeDeltaWorkspace& ws,
                                          StateInfo* info) const {
    ws.composed_entry = KeyframeDeltaWorkspace::kNone;  // until the whole chain has composed
    ws.composed_current = false;
    FOURDGS_ASSIGN(SeekPlan plan, timeline_.plan(t, wanted_bands()));
    FOURDGS_ASSIGN(std::vector<ByteRange> ranges, fetch_ranges(t));
    FOURDGS_TRY(fetcher_->prefetch(ranges));  // the whole chain in one round trip when remote
    ws.composition->population.reset(wanted_bands(), ws.keyframe);
    ws.composed_level = 0;
    StateInfo record;  // the chain's last record is the state chunk's own
    for (std::size_t c : plan.chain) FOURDGS_TRY(compose_entry(c, ws, record, nullptr));
    // A population out of id order is sorted once here; in order it is the sorted state.
    if (!ws.composition->population.in_id_order()) materialize_composed(ws);
    ws.composed_entry = plan.current;
    if (info) describe_state(plan.current, ws, record, *info);
    return ok_status();
}

Status KeyframeDeltaReader::state_bins_at(double t, KeyframeDeltaWorkspace& ws,
                                          StateInfo* info) const {
    FOURDGS_TRY(compose_chain(t, ws, info));
    if (!ws.composed_current) materialize_composed(ws);
    return ok_status();
}

void KeyframeDeltaReader::materialize_composed(KeyframeDeltaWorkspace& ws) {
    ws.composition->population.materialize(ws.composed);
    ws.composed_current = true;
}

const ChunkBins& KeyframeDeltaReader::sorted_state(const KeyframeDeltaWorkspace& ws) {
    return ws.composed_current ? ws.composed : ws.composition->population.slot_bins();
}

Result<std::optional<std::size_t>> KeyframeDeltaReader::next_step(
    const KeyframeDeltaWorkspace& ws) const {
    if (ws.composed_entry == KeyframeDeltaWorkspace::kNone) return std::optional<std::size_t>();
    const std::vector<ChunkIndex>& ix = timeline_.entries();
    const ChunkIndex& from = ix[ws.composed_entry];
    // §11.1: the state chunks tile the timeline, so the next one starts where this one ends.
    if (!(from.t1 < scene().header.duration_sec)) return std::optional<std::size_t>();
    FOURDGS_ASSIGN(std::size_t next, timeline_.current(from.t1));
    const KeyframeIndexFields& k = *ix[next].keyframe;
    if (k.chunk_kind != kChunkKindDelta || k.delta_mode != kDeltaModeChained ||
        k.reference_offset != from.chunk_offset)
        return std::optional<std::size_t>();
    return std::optional<std::size_t>(next);
}

namespace {

// The bins dequantize_columns reads for the attributes `changed` flags: each one's own, and
// those its §6 step needs (the motion and mu_t steps come from sigma_t, flags and window; the
// colour is decoded with the opacity; the quaternion from rotation_index and rotation; the two
// source ids are written together).
std::array<bool, attr::kKnownCount> bins_read_for(std::array<bool, attr::kKnownCount> changed) {
    std::array<bool, attr::kKnownCount> read = changed;
    if (changed[attr::motion] || changed[attr::mu_t])
        read[attr::sigma_t] = read[attr::flags] = read[attr::window_index] = true;
    if (changed[attr::color] || changed[attr::opacity]) read[attr::color] = read[attr::opacity] = true;
    if (changed[attr::rotation] || changed[attr::rotation_index])
        read[attr::rotation] = read[attr::rotation_index] = true;
    if (changed[attr::source_group] || changed[attr::source_index])
        read[attr::source_group] = read[attr::source_index] = true;
    return read;
}

// Sizes the §3 columns made from the attributes `changed` flags to n rows, and empties the
// others: a step's values hold its changed columns only. A kept column keeps its values (the
// step overwrites them all), so a step of the size of the one before writes no zeros first.
void size_changed_columns(GaussianBlock& b, std::size_t n,
                          const std::array<bool, attr::kKnownCount>& changed) {
    auto size = [n](auto& column, std::size_t per, bool kept) {
        if (kept) column.resize(n * per);
        else column.clear();
    };
    for (auto* column : {&b.sigma_t, &b.win_lo, &b.win_hi}) column->clear();
    b.flags.clear();
    b.window_index.clear();
    b.sh.clear();
    b.gaussian_id.clear();
    b.count = n;
    size(b.position, 3, changed[attr::position]);
    size(b.scale, 3, changed[attr::scale]);
    size(b.rotation, 4, changed[attr::rotation] || changed[attr::rotation_index]);
    size(b.color, 4, changed[attr::color] || changed[attr::opacity]);
    size(b.motion, 3, changed[attr::motion]);
    size(b.mu_t, 1, changed[attr::mu_t]);
    size(b.object_id, 1, changed[attr::object_id]);
    b.has_source_ids = changed[attr::source_group] || changed[attr::source_index];
    size(b.source_group, 1, b.has_source_ids);
    size(b.source_index, 1, b.has_source_ids);
}

// The row of each id of `updates` in the state whose ascending ids are `ids` (its rank),
// appended to `rows`; false when one is not there.
bool rows_of(const std::vector<std::int32_t>& ids, const ChunkBins& updates,
             std::vector<std::uint32_t>& rows) {
    return rows_of_ids(ids, {updates.gaussian_id.data(), updates.count}, rows) == updates.count;
}

// What a forward step makes of its update as it composes (ComposedRowsSink): when no row moves,
// each block of composed rows is dequantized into the step's values, and copied over the held
// sorted copy when there is one, while the block is in cache. `whole` until begin() finds that
// no row moves.
class StepRows final : public ComposedRowsSink {
public:
    StepRows(const SceneInfo& scene, KeyframeDeltaWorkspace& ws, const ComposedPopulation& pop,
             StateStep& step)
        : scene_(scene), ws_(ws), pop_(pop), step_(step),
          source_group_(pop.slot_bins().has_source_group),
          source_index_(pop.slot_bins().has_source_index),
          object_id_(pop.slot_bins().has_object_id) {}

    bool whole = true;

    std::optional<std::array<bool, attr::kKnownCount>> begin(
        const DeltaBins& d, std::span<const std::uint32_t> slots) override {
        // Rows move only when gaussians die or are born; a column the state gains moves none
        // but changes the state's shape. Either way the step's result is the whole state.
        const auto& present = d.update_present;
        if (!d.deaths.empty() || d.births.count != 0 ||
            (present[attr::source_group] && !source_group_) ||
            (present[attr::source_index] && !source_index_) ||
            (present[attr::object_id] && !object_id_))
            return std::nullopt;
        if (pop_.in_id_order()) {
            // A slot is its row, and apply() wrote the slots into step_.rows (step_forward asks
            // it to), so there is nothing to copy.
            if (slots.data() != step_.rows.data()) step_.rows.assign(slots.begin(), slots.end());
        } else {
            step_.rows.clear();
            if (!ws_.composed_current || !rows_of(ws_.composed.gaussian_id, d.updates, step_.rows))
                return std::nullopt;
        }
        whole = false;
        // The changed columns of the changed rows only.
        step_.attributes = present;
        step_.attributes[attr::gaussian_id] = false;  // the ids name the rows; they do not change
        size_changed_columns(step_.values, d.updates.count, step_.attributes);
        return bins_read_for(step_.attributes);
    }

    void take(const ChunkBins& rows, std::size_t first) override {
        dequantize_columns(scene_, rows, step_.attributes, false, step_.values, first);
        if (ws_.composed_current)
            scatter_rows(rows, std::span<const std::uint32_t>(step_.rows).subspan(first, rows.count),
                         ws_.composed, &step_.attributes);
    }

private:
    const SceneInfo& scene_;
    KeyframeDeltaWorkspace& ws_;
    const ComposedPopulation& pop_;
    StateStep& step_;
    bool source_group_, source_index_, object_id_;  // the state's optional columns before
};

}  // namespace

Result<bool> KeyframeDeltaReader::step_forward(KeyframeDeltaWorkspace& ws, StateStep& step,
                                               StateInfo* info) const {
    FOURDGS_ASSIGN(std::optional<std::size_t> next, next_step(ws));
    if (!next) return false;
    const std::size_t c = *next;
    std::vector<ByteRange> ranges;
    RangeFetcher::append_ranges(timeline_.entries()[c], wanted_bands(), ranges);
    FOURDGS_TRY(fetcher_->prefetch(ranges));
    ws.composed_entry = KeyframeDeltaWorkspace::kNone;  // until the step has composed
    StateInfo record;
    // The update applied in place, its rows dequantized into `step` as they compose.
    StepRows rows(scene(), ws, ws.composition->population, step);
    // In id order a slot is a row of the step: the population writes its slots there.
    FOURDGS_TRY(compose_entry(c, ws, record, &rows,
                              ws.composition->population.in_id_order() ? &step.rows : nullptr));
    step.whole = rows.whole;
    if (step.whole) {
        step.rows.clear();
        if (!ws.composition->population.in_id_order()) materialize_composed(ws);
        else ws.composed_current = false;
        dequantize_state(scene(), sorted_state(ws), step.values);
    }
    ws.composed_entry = c;
    if (info) describe_state(c, ws, record, *info);
    return true;
}

Status KeyframeDeltaReader::state_at(double t, GaussianBlock& out, KeyframeDeltaWorkspace& ws,
                                     StateInfo* info) const {
    FOURDGS_TRY(compose_chain(t, ws, info));
    dequantize_state(scene(), sorted_state(ws), out);  // once, at the end, from the composed bins
    return ok_status();
}

Status KeyframeDeltaReader::state_at(double t, GaussianBlock& out, StateInfo* info) {
    return state_at(t, out, *own_, info);
}

void StateStep::apply_to(GaussianBlock& state) {
    if (whole) {
        std::swap(state, values);
        return;
    }
    // The changed columns, a row of each copied together in one pass over the rows: the rows
    // are scattered over the state, and one pass asks for all of a row's lines at once, some
    // rows ahead (so many misses are in flight), where a pass per column would wait on each
    // column's lines in turn. Every column here has 4-byte values, 1, 3 or 4 to a row.
    struct Changed {
        std::byte* dst;
        const std::byte* src;
        std::size_t row_bytes;
    };
    Changed columns[9];
    std::size_t m = 0;
    auto changed = [&](auto& dst, const auto& src, std::size_t width) {
        static_assert(sizeof(dst[0]) == 4);
        if (dst.empty() || src.empty()) return;  // a column the state does not carry
        columns[m++] = {reinterpret_cast<std::byte*>(dst.data()),
                        reinterpret_cast<const std::byte*>(src.data()), 4 * width};
    };
    const auto& a = attributes;
    if (a[attr::position]) changed(state.position, values.position, 3);
    if (a[attr::scale]) changed(state.scale, values.scale, 3);
    if (a[attr::rotation]) changed(state.rotation, values.rotation, 4);
    if (a[attr::color] || a[attr::opacity]) changed(state.color, values.color, 4);
    if (a[attr::motion]) changed(state.motion, values.motion, 3);
    if (a[attr::mu_t]) changed(state.mu_t, values.mu_t, 1);
    if (a[attr::object_id]) changed(state.object_id, values.object_id, 1);
    if (a[attr::source_group]) changed(state.source_group, values.source_group, 1);
    if (a[attr::source_index]) changed(state.source_index, values.source_index, 1);
    // A row's bytes in moves of a size known at compile time.
    auto copy = [](std::byte* to, const std::byte* from, std::size_t bytes) {
        if (bytes == 12) std::memcpy(to, from, 12);
        else if (bytes == 4) std::memcpy(to, from, 4);
        else std::memcpy(to, from, 16);
    };
    constexpr std::size_t kAhead = 64;
    for (std::size_t k = 0; k < rows.size() && m > 0; ++k) {
        if (k + kAhead < rows.size())
            for (std::size_t j = 0; j < m; ++j)
                __builtin_prefetch(columns[j].dst + std::size_t{rows[k + kAhead]} * columns[j].row_bytes, 1);
        for (std::size_t j = 0; j < m; ++j) {
            const Changed& c = columns[j];
            copy(c.dst + std::size_t{rows[k]} * c.row_bytes, c.src + k * c.row_bytes, c.row_bytes);
        }
    }
}

}  // namespace fourdgs
