// The keyframe-delta composition (fourdgs/detail/keyframe_composition.hpp): a Delta Chunk to bins, and
// the population composed from a keyframe and the deltas after it.
#include "fourdgs/detail/keyframe_composition.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "fourdgs/detail/time_text.hpp"
#include "decode/compact_code.hpp"

namespace fourdgs::detail {
namespace {

Error malformed(std::string_view refusal, std::string message, std::uint64_t offset) {
    return make_error(ErrorKind::malformed, refusal, std::move(message), offset);
}

std::uint32_t id_of(std::int32_t code) { return static_cast<std::uint32_t>(code); }

// Copies `w` values (a row of a column of width w) from `from` to `to`: the widths are 1 and
// 3, written out so a row is a few moves rather than a call.
inline void copy_row(const std::int32_t* from, std::int32_t* to, int w) {
    if (w == 1) {
        to[0] = from[0];
    } else if (w == 3) {
        to[0] = from[0];
        to[1] = from[1];
        to[2] = from[2];
    } else {
        std::copy_n(from, w, to);
    }
}

// The rows a step touches are scattered over columns of a million rows: asking for the row
// some iterations ahead keeps many cache misses in flight instead of one. (64 rows ahead made a
// 1M-gaussian step 15 % cheaper than 16; 128 gained nothing more.)
inline void prefetch_row(const std::int32_t* column, std::span<const std::uint32_t> rows,
                         std::size_t i, int w) {
    constexpr std::size_t kAhead = 64;
    if (i + kAhead < rows.size())
        __builtin_prefetch(column + std::size_t{rows[i + kAhead]} * static_cast<std::size_t>(w));
}

// The attribute columns of a ChunkBins, as members with their widths; SH bands are handled
// separately.
template <class F>
void for_each_column_member(F&& f) {
    f(&ChunkBins::position, 3, attr::position);
    f(&ChunkBins::scale, 3, attr::scale);
    f(&ChunkBins::rotation_index, 1, attr::rotation_index);
    f(&ChunkBins::rotation, 3, attr::rotation);
    f(&ChunkBins::color, 3, attr::color);
    f(&ChunkBins::opacity, 1, attr::opacity);
    f(&ChunkBins::motion, 3, attr::motion);
    f(&ChunkBins::mu_t, 1, attr::mu_t);
    f(&ChunkBins::sigma_t, 1, attr::sigma_t);
    f(&ChunkBins::flags, 1, attr::flags);
    f(&ChunkBins::window_index, 1, attr::window_index);
    f(&ChunkBins::source_group, 1, attr::source_group);
    f(&ChunkBins::source_index, 1, attr::source_index);
    f(&ChunkBins::gaussian_id, 1, attr::gaussian_id);
    f(&ChunkBins::object_id, 1, attr::object_id);
}

template <class Bins, class F>
void for_each_column(Bins& b, F&& f) {
    for_each_column_member([&](auto member, int w, std::uint8_t) { f(b.*member, w); });
}

}  // namespace

FOURDGS_COMPACT_FUNCTION
Status check_delta_level(const ChunkRef& delta, std::uint32_t level,
                         std::uint64_t reference_offset, std::uint32_t reference_level,
                         std::uint64_t at) {
    if (level == reference_level) return ok_status();
    return malformed(refusal::kLevelMismatch,
                     delta.describe() + " has level " + std::to_string(level) +
                         " but its reference at byte " + std::to_string(reference_offset) +
                         " has level " + std::to_string(reference_level) + " (§11.6)",
                     at)
        .about("", std::to_string(level));
}

std::string ChunkRef::describe() const {
    return std::string(record_name(delta ? op::delta_chunk : op::chunk)) + " at byte " +
           std::to_string(offset) + " " + interval_text(t0, t1);
}

// ---------------------------------------------------------------------------------------------
// A Chunk or Delta Chunk record, parsed and decoded.

Result<StateChunk> parse_state_chunk(const RecordView& record) {
    StateChunk out;
    if (record.opcode == op::chunk) {
        FOURDGS_ASSIGN(out.chunk, parse_chunk(record));
    } else {
        FOURDGS_ASSIGN(out.delta, parse_delta_chunk(record));
    }
    return out;
}

Status decode_state_chunk_bins(const SceneInfo& scene, const StateChunk& parsed,
                               std::span<const ShBandRecord> bands,
                               const ChunkDecodeOptions& options, ChunkBins& bins,
                               DeltaBins& delta_bins, DecodeScratch& scratch) {
    if (parsed.chunk) return decode_chunk_bins(scene, *parsed.chunk, bands, options, bins, scratch);
    return decode_delta_bins(scene, *parsed.delta, bands, options, delta_bins, scratch);
}

// ---------------------------------------------------------------------------------------------
// Delta decode.

FOURDGS_COMPACT_FUNCTION
Status decode_delta_bins(const SceneInfo& scene, const DeltaChunk& d,
                         std::span<const ShBandRecord> bands, const ChunkDecodeOptions& options,
                         DeltaBins& out, DecodeScratch& scratch) {
    const std::uint64_t at = d.records_offset;
    const DecodeLimits& limits = options.limits;
    FOURDGS_TRY(check_gaussian_limit(d.update_count, limits, "Delta Chunk update group", at));
    FOURDGS_TRY(check_gaussian_limit(d.birth_count, limits, "Delta Chunk birth group", at));
    FOURDGS_TRY(check_gaussian_limit(d.death_count, limits, "Delta Chunk death group", at));
    FOURDGS_ASSIGN(Bytes block,
                   open_records_block(record_name(op::delta_chunk), d.compression,
                                      d.uncompressed_size, d.records, at, limits, scratch.block));
    // Offsets inside a decompressed block do not exist in the file; name the block instead.
    const bool stored = d.compression.empty();
    FOURDGS_ASSIGN(DeltaGroups g, split_delta_groups(block, at));
    const std::uint64_t uo = stored ? g.updates_offset : at;
    const std::uint64_t bo = stored ? g.births_offset : at;
    const std::uint64_t dof = stored ? g.deaths_offset : at;
    std::array<bool, attr::kKnownCount> seen{};
    const std::string dc = "the Delta Chunk over " + interval_text(d.t0, d.t1);
    // §5.18: every non-empty group identifies its gaussians (`seen` is the last group decoded).
    auto require_ids = [&](const char* group, std::uint32_t count,
                           std::uint64_t group_at) -> Status {
        if (count == 0 || seen[attr::gaussian_id]) return ok_status();
        return malformed(refusal::kMissingGaussianId,
                         std::string("the ") + group + " group of " + dc + " holds " +
                             std::to_string(count) + " " + group +
                             "s but no gaussian_id stream (§5.18)",
                         group_at);
    };

    // Deaths (decoded through the births bins as scratch): exactly one stream, gaussian_id.
    FOURDGS_TRY(decode_stream_block(g.deaths, dof, d.death_count, "the Delta Chunk death group",
                                    options.limits, out.births, seen, scratch.stream));
    for (std::uint8_t id = 0; id < attr::kKnownCount; ++id)
        if (seen[id] && id != attr::gaussian_id)
            return malformed(refusal::kInvalidDeathStream,
                             std::string("the death group carries a '") + attr::kNames[id] +
                                 "' stream; it holds exactly one stream, gaussian_id (§5.18)",
                             dof);
    FOURDGS_TRY(require_ids("death", d.death_count, dof));
    out.deaths.assign(out.births.gaussian_id.begin(),
                      out.births.gaussian_id.begin() + (seen[attr::gaussian_id] ? d.death_count : 0));

    // Updates: bin differences aligned with the id stream; the GOP invariants must be absent.
    FOURDGS_TRY(decode_stream_block(g.updates, uo, d.update_count, "the Delta Chunk update group",
                                    options.limits, out.updates, seen, scratch.stream));
    for (std::uint8_t id : {attr::sigma_t, attr::flags, attr::window_index})
        if (seen[id])
            return malformed(refusal::kInvariantChangedInUpdate,
                             "the update group of " + dc + " carries '" +
                                 attr::kNames[id] +
                                 "', which is GOP-invariant per gaussian (§11.5); change it with "
                                 "a death and a birth, or a keyframe",
                             uo);
    if (seen[attr::rotation_index] && !seen[attr::rotation])
        return malformed(refusal::kInvariantChangedInUpdate,
                         "the update group of " + dc +
                             " carries 'rotation_index' without 'rotation'; rotation_index may "
                             "change only as an absolute restatement together with the three "
                             "rotation bins (§11.5)",
                         uo);
    FOURDGS_TRY(require_ids("update", d.update_count, uo));
    FOURDGS_TRY(check_rows(scene, out.updates, d.update_count, seen[attr::rotation_index], false,
                           "update element", uo));
    out.update_present = seen;
    out.updates.count = d.update_count;

    // Births: the full required attribute set plus gaussian_id, absolute.
    FOURDGS_TRY(decode_stream_block(g.births, bo, d.birth_count, "the Delta Chunk birth group",
                                    options.limits, out.births, seen, scratch.stream));
    out.births.count = d.birth_count;
    FOURDGS_TRY(require_streams(out.births, seen, d.birth_count, "the birth group",
                                "Delta Chunk.births", bo));
    FOURDGS_TRY(require_ids("birth", d.birth_count, bo));
    FOURDGS_TRY(check_rows(scene, out.births, d.birth_count, true, true, "birth element", bo));

    // A born gaussian's SH rides in the band records after the Delta Chunk (§5.18). A delta
    // with no births needs none.
    if (d.birth_count == 0 && bands.empty()) {
        out.births.sh_bands = std::min<int>(scene.header.sh_degree,
                                            std::max(0, options.max_sh_degree));
        for (auto& b : out.births.sh) b.clear();
        return ok_status();
    }
    return decode_sh_bands(bands, d.birth_count, scene.header.sh_degree, options.max_sh_degree,
                           options.limits, out.births, scratch.stream);
}

// ---------------------------------------------------------------------------------------------
// IdSlots.

void IdSlots::clear() noexcept {
    table_.clear();
    sparse_.clear();
    dense_ = true;
    size_ = 0;
    reserved_ = 0;
}

void IdSlots::reserve(std::size_t n) {
    reserved_ = std::max(reserved_, n);
    if (!dense_) sparse_.reserve(n);
}

void IdSlots::set(std::uint32_t id, std::uint32_t slot) {
    if (dense_ && id >= table_.size()) {
        // Dense while ids stay within four times the population (or what was reserved).
        const std::uint64_t bound =
            4 * std::max<std::uint64_t>({size_ + 1, reserved_, std::uint64_t{1} << 16});
        if (id < bound)
            table_.resize(std::max<std::uint64_t>(
                              id + std::uint64_t{1},
                              std::min<std::uint64_t>(bound, 2 * std::uint64_t{table_.size()})),
                          kNone);
        else
            to_sparse();
    }
    if (dense_) {
        size_ += table_[id] == kNone;
        table_[id] = slot;
        return;
    }
    size_ += sparse_.insert_or_assign(id, slot).second;
}

void IdSlots::erase(std::uint32_t id) {
    if (!dense_) {
        size_ -= sparse_.erase(id);
    } else if (id < table_.size() && table_[id] != kNone) {
        table_[id] = kNone;
        --size_;
    }
}

FOURDGS_COMPACT_FUNCTION
void IdSlots::to_sparse() {
    sparse_.reserve(std::max(size_, reserved_));
    for (std::size_t id = 0; id < table_.size(); ++id)
        if (table_[id] != kNone) sparse_.emplace(static_cast<std::uint32_t>(id), table_[id]);
    table_ = {};
    dense_ = false;
}

// ---------------------------------------------------------------------------------------------
// ComposedPopulation.

void ComposedPopulation::reset(int sh_bands) {
    bins_.count = 0;  // the storage stays, for the next keyframe
    for_each_column(bins_, [](std::vector<std::int32_t>& col, int) { col.clear(); });
    for (auto& band : bins_.sh) band.clear();
    bins_.has_source_group = bins_.has_source_index = bins_.has_object_id = false;
    bins_.has_gaussian_id = false;
    bins_.sh_bands = std::clamp(sh_bands, 0, 3);
    slot_.clear();
    dead_.clear();
    in_order_ = true;
    timing_.reset();
}

void ComposedPopulation::reset(int sh_bands, ChunkBins& next_keyframe) {
    // What next_keyframe held (its rows mean nothing) becomes the population's, emptied.
    std::swap(bins_, next_keyframe);
    reset(sh_bands);
}

void ComposedPopulation::note_timing(std::uint32_t from) {
    if (from == 0) {
        timing_.reset();
        if (bins_.count > 0) timing_ = {bins_.sigma_t[0], bins_.flags[0], bins_.window_index[0]};
    }
    for (std::uint32_t r = from; r < bins_.count && timing_; ++r)
        if (bins_.sigma_t[r] != (*timing_)[0] || bins_.flags[r] != (*timing_)[1] ||
            bins_.window_index[r] != (*timing_)[2])
            timing_.reset();
}

std::size_t rows_of_ids(std::span<const std::int32_t> sorted, std::span<const std::int32_t> ids,
                        std::vector<std::uint32_t>& rows) {
    const std::size_t n = sorted.size();
    if (n > 0 && std::size_t{id_of(sorted[n - 1]) - id_of(sorted[0])} == n - 1) {
        // Consecutive ids (a capture whose gaussians have not died): no search at all, and a
        // loop without a branch (it vectorizes); an id outside is looked for only when there
        // is one.
        const std::uint32_t first = id_of(sorted[0]), count = static_cast<std::uint32_t>(n);
        const std::size_t base = rows.size();
        rows.resize(base + ids.size());
        std::uint32_t* out = rows.data() + base;
        std::uint32_t outside = 0;
        FOURDGS_COMPACT_LOOP
        for (std::size_t k = 0; k < ids.size(); ++k) {
            out[k] = id_of(ids[k]) - first;  // wraps below `first`
            outside |= static_cast<std::uint32_t>(out[k] >= count);
        }
        if (outside == 0) return ids.size();
        const std::size_t found = static_cast<std::size_t>(
            std::find_if(out, out + ids.size(), [count](std::uint32_t r) { return r >= count; }) -
            out);
        rows.resize(base + found);
        return found;
    }
    rows.reserve(rows.size() + ids.size());
    auto less = [](std::int32_t a, std::int32_t b) { return id_of(a) < id_of(b); };
    std::size_t from = 0;
    for (std::size_t k = 0; k < ids.size(); ++k) {
        const std::int32_t id = ids[k];
        if (from > 0 && less(id, sorted[from - 1])) from = 0;  // out of order: from the start
        // Gallop to bracket the id, then search the bracket.
        std::size_t hi = from, reach = 1;
        while (hi < n && less(sorted[hi], id)) {
            from = hi + 1;
            hi += reach;
            reach *= 2;
        }
        hi = std::min(hi + 1, n);
        const auto it =
            std::lower_bound(sorted.begin() + static_cast<std::ptrdiff_t>(from),
                             sorted.begin() + static_cast<std::ptrdiff_t>(hi), id, less);
        if (it == sorted.end() || *it != id) return k;
        rows.push_back(static_cast<std::uint32_t>(it - sorted.begin()));
        from = rows.back() + 1;
    }
    return ids.size();
}

std::size_t ComposedPopulation::find_slots(std::span<const std::int32_t> ids,
                                           std::vector<std::uint32_t>& slots) const {
    slots.clear();
    // In id order a slot is a row of the sorted ids: a merge walk finds them.
    if (in_order_) return rows_of_ids({bins_.gaussian_id.data(), bins_.count}, ids, slots);
    slots.reserve(ids.size());
    for (std::size_t k = 0; k < ids.size(); ++k) {
        const std::uint32_t slot = slot_.find(id_of(ids[k]));
        if (slot == IdSlots::kNone) return k;
        slots.push_back(slot);
    }
    return ids.size();
}

void ComposedPopulation::remove_slots_in_order(std::span<const std::uint32_t> dead) {
    // One pass over each column from the first dead row: the rows after it move down over the
    // dead ones, keeping their order; then each moved id learns its new slot.
    const std::uint32_t n = bins_.count, first = dead.front();
    auto compact = [&](auto& col, std::size_t w) {
        std::size_t to = first, k = 0;
        for (std::uint32_t r = first; r < n; ++r) {
            if (k < dead.size() && dead[k] == r) {
                ++k;
                continue;
            }
            std::copy_n(&col[r * w], w, &col[to * w]);
            ++to;
        }
        col.resize(to * w);
    };
    for_each_column(bins_, [&](std::vector<std::int32_t>& col, int w) {
        compact(col, static_cast<std::size_t>(w));
    });
    for (int b = 1; b <= bins_.sh_bands; ++b)
        compact(bins_.sh[b - 1], 3 * static_cast<std::size_t>(sh_band_width(b)));
    bins_.count = n - static_cast<std::uint32_t>(dead.size());
    for (std::uint32_t r = first; r < bins_.count; ++r) slot_.set(id_of(bins_.gaussian_id[r]), r);
}

void ComposedPopulation::append_row(const ChunkBins& src, std::uint32_t row) {
    auto put = [&](std::vector<std::int32_t>& dst, const std::vector<std::int32_t>& from, int w,
                   bool present) {
        for (int c = 0; c < w; ++c)
            dst.push_back(present ? from[std::size_t{row} * w + c] : 0);
    };
    put(bins_.position, src.position, 3, true);
    put(bins_.scale, src.scale, 3, true);
    put(bins_.rotation_index, src.rotation_index, 1, true);
    put(bins_.rotation, src.rotation, 3, true);
    put(bins_.color, src.color, 3, true);
    put(bins_.opacity, src.opacity, 1, true);
    put(bins_.motion, src.motion, 3, true);
    put(bins_.mu_t, src.mu_t, 1, true);
    put(bins_.sigma_t, src.sigma_t, 1, true);
    put(bins_.flags, src.flags, 1, true);
    put(bins_.window_index, src.window_index, 1, true);
    put(bins_.source_group, src.source_group, 1, src.has_source_group);
    put(bins_.source_index, src.source_index, 1, src.has_source_index);
    put(bins_.gaussian_id, src.gaussian_id, 1, true);
    put(bins_.object_id, src.object_id, 1, src.has_object_id);
    bins_.has_source_group |= src.has_source_group;
    bins_.has_source_index |= src.has_source_index;
    bins_.has_object_id |= src.has_object_id;
    for (int b = 1; b <= bins_.sh_bands; ++b) {
        const std::size_t w = 3 * static_cast<std::size_t>(sh_band_width(b));
        const auto* from = &src.sh[b - 1][row * w];
        bins_.sh[b - 1].insert(bins_.sh[b - 1].end(), from, from + w);
    }
    const std::uint32_t id = id_of(src.gaussian_id[row]);
    if (bins_.count > 0 && !(id_of(bins_.gaussian_id[bins_.count - 1]) < id)) in_order_ = false;
    slot_.set(id, bins_.count);
    ++bins_.count;
}

// A source with fewer whole SH bands (a truncated chunk's, M100) lowers the population's degree.
static void lower_bands(ChunkBins& bins, int to) {
    if (to >= bins.sh_bands) return;
    for (int b = std::max(to, 0) + 1; b <= 3; ++b) bins.sh[b - 1].clear();
    bins.sh_bands = std::max(to, 0);
}

static Status keyframe_without_ids(const ChunkBins& kf, const ChunkRef& chunk) {
    return malformed(refusal::kMissingGaussianId,
                     chunk.describe() + " holds " + std::to_string(kf.count) +
                         " gaussians but no gaussian_id stream; every chunk of a keyframe-delta "
                         "file carries it (§11.2)",
                     chunk.offset);
}

static Status keyframe_id_reused(std::uint32_t id, const ChunkRef& chunk) {
    return malformed(refusal::kGaussianIdReused,
                     chunk.describe() + " states gaussian_id " + std::to_string(id) +
                         ", which died earlier; an id is never reused (§11.2)",
                     chunk.offset);
}

Status ComposedPopulation::assign_keyframe(const ChunkBins& kf, const ChunkRef& chunk) {
    if (kf.count > 0 && !kf.has_gaussian_id) return keyframe_without_ids(kf, chunk);
    const int bands = std::min(bins_.sh_bands, kf.sh_bands);
    const std::unordered_set<std::uint32_t> dead = std::move(dead_);
    reset(bands);
    dead_ = std::move(dead);
    slot_.reserve(kf.count);
    for_each_column(bins_, [&](std::vector<std::int32_t>& col, int w) {
        col.reserve(std::size_t{kf.count} * w);
    });
    bins_.has_gaussian_id = true;
    for (std::uint32_t i = 0; i < kf.count; ++i) {
        const std::uint32_t id = id_of(kf.gaussian_id[i]);
        if (slot_.contains(id))
            return malformed(refusal::kDuplicateGaussianId,
                             chunk.describe() + " states gaussian_id " + std::to_string(id) +
                                 " twice; ids are unique within a state (§11.2)",
                             chunk.offset);
        if (dead_.count(id)) return keyframe_id_reused(id, chunk);
        append_row(kf, i);
    }
    note_timing(0);
    return ok_status();
}

Status ComposedPopulation::take_keyframe(ChunkBins& kf, const ChunkRef& chunk) {
    if (kf.count > 0 && !kf.has_gaussian_id) return keyframe_without_ids(kf, chunk);
    const std::uint32_t n = kf.count;
    for (std::uint32_t i = 1; i < n; ++i)
        if (!(id_of(kf.gaussian_id[i - 1]) < id_of(kf.gaussian_id[i])))
            return assign_keyframe(kf, chunk);  // not ascending: copied, duplicates refused there
    for (std::uint32_t i = 0; i < n && !dead_.empty(); ++i)
        if (dead_.count(id_of(kf.gaussian_id[i])))
            return keyframe_id_reused(id_of(kf.gaussian_id[i]), chunk);
    const int bands = std::min(bins_.sh_bands, kf.sh_bands);
    std::swap(bins_, kf);
    kf.count = 0;
    // As append_row writes them: every column holds every row, zeros where the chunk has none.
    auto zeros = [n](std::vector<std::int32_t>& col, bool present) {
        if (!present) col.assign(n, 0);
    };
    zeros(bins_.source_group, bins_.has_source_group);
    zeros(bins_.source_index, bins_.has_source_index);
    zeros(bins_.object_id, bins_.has_object_id);
    bins_.has_gaussian_id = true;
    lower_bands(bins_, bands);
    slot_.clear();
    slot_.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) slot_.set(id_of(bins_.gaussian_id[i]), i);
    in_order_ = true;
    note_timing(0);
    return ok_status();
}

Status ComposedPopulation::succeed(ComposedPopulation&& previous, const ChunkRef& chunk) {
    for (std::uint32_t i = 0; i < bins_.count; ++i) {
        const std::uint32_t id = id_of(bins_.gaussian_id[i]);
        if (previous.dead_.count(id))
            return malformed(refusal::kGaussianIdReused,
                             "the state of " + chunk.describe() + " holds gaussian_id " +
                                 std::to_string(id) +
                                 ", which died earlier; an id is never reused (§11.2)",
                             chunk.offset);
    }
    std::unordered_set<std::uint32_t> dead = std::move(previous.dead_);
    dead.insert(dead_.begin(), dead_.end());
    for (std::uint32_t i = 0; i < previous.bins_.count; ++i) {
        const std::uint32_t id = id_of(previous.bins_.gaussian_id[i]);
        if (!slot_.contains(id)) dead.insert(id);
    }
    dead_ = std::move(dead);
    return ok_status();
}

// True when each group lists its ids strictly ascending (as writers do: the id stream's delta
// coding wants it) and no id is in two groups: what check_group_ids proves, by merging instead
// of hashing.
static bool ascending_and_disjoint(std::span<const std::int32_t> a,
                                   std::span<const std::int32_t> b,
                                   std::span<const std::int32_t> c) {
    for (auto g : {a, b, c}) {
        std::uint32_t out_of_order = 0;  // over every id, without a branch: the loop vectorizes
        FOURDGS_COMPACT_LOOP
        for (std::size_t i = 1; i < g.size(); ++i)
            out_of_order |= static_cast<std::uint32_t>(id_of(g[i - 1]) >= id_of(g[i]));
        if (out_of_order != 0) return false;
    }
    auto disjoint = [](std::span<const std::int32_t> x, std::span<const std::int32_t> y) {
        std::size_t i = 0, j = 0;
        while (i < x.size() && j < y.size()) {
            if (id_of(x[i]) == id_of(y[j])) return false;
            id_of(x[i]) < id_of(y[j]) ? ++i : ++j;
        }
        return true;
    };
    return disjoint(a, b) && disjoint(a, c) && disjoint(b, c);
}

FOURDGS_COMPACT_FUNCTION
Status ComposedPopulation::check_group_ids(const DeltaBins& d, const ChunkRef& chunk) {
    const std::span<const std::int32_t> deaths(d.deaths);
    const auto updates = std::span<const std::int32_t>(d.updates.gaussian_id)
                             .first(d.update_present[attr::gaussian_id] ? d.updates.count : 0);
    const auto births = std::span<const std::int32_t>(d.births.gaussian_id)
                            .first(d.births.has_gaussian_id ? d.births.count : 0);
    if (ascending_and_disjoint(deaths, updates, births)) return ok_status();
    // Otherwise one pass over all three groups names the first id at fault: duplicates within a
    // group, then across groups (§11.3).
    std::unordered_map<std::uint32_t, int> group_of;
    group_of.reserve(d.deaths.size() + d.updates.count + d.births.count);
    static constexpr const char* kGroup[] = {"death", "update", "birth"};
    auto visit = [&](std::span<const std::int32_t> ids, int group) -> Status {
        for (std::int32_t code : ids) {
            const std::uint32_t id = id_of(code);
            auto [it, inserted] = group_of.emplace(id, group);
            if (inserted) continue;
            if (it->second == group)
                return malformed(refusal::kDuplicateGaussianId,
                                 "the " + std::string(kGroup[group]) + " group of " +
                                     chunk.describe() + " names gaussian_id " + std::to_string(id) +
                                     " twice",
                                 chunk.offset);
            return malformed(refusal::kGaussianIdInTwoGroups,
                             "gaussian_id " + std::to_string(id) + " is in both the " +
                                 kGroup[it->second] + " and the " + kGroup[group] +
                                 " group of " + chunk.describe() +
                                 "; the outcome would depend on application order (§11.3)",
                             chunk.offset);
        }
        return ok_status();
    };
    FOURDGS_TRY(visit(deaths, 0));
    FOURDGS_TRY(visit(updates, 1));
    FOURDGS_TRY(visit(births, 2));
    return ok_status();
}

namespace {

// The update group's streams that carry bin differences (§11.7), with their columns' widths;
// rotation_index and rotation are restated absolutely instead (§11.5).
struct Difference {
    std::uint8_t id;
    std::vector<std::int32_t> ChunkBins::*col;
    int width;
};
constexpr Difference kDifferences[] = {
    {attr::position, &ChunkBins::position, 3},   {attr::scale, &ChunkBins::scale, 3},
    {attr::color, &ChunkBins::color, 3},         {attr::opacity, &ChunkBins::opacity, 1},
    {attr::motion, &ChunkBins::motion, 3},       {attr::mu_t, &ChunkBins::mu_t, 1},
    {attr::source_group, &ChunkBins::source_group, 1},
    {attr::source_index, &ChunkBins::source_index, 1},
    {attr::object_id, &ChunkBins::object_id, 1},
};

bool fits_i32(std::int64_t v) {
    return v >= std::numeric_limits<std::int32_t>::min() &&
           v <= std::numeric_limits<std::int32_t>::max();
}

// One present difference stream of an update group, ready to add: its values (row i at
// delta[i * width]), the population's column, and the composed rows' column (or null).
struct Addend {
    const Difference* df;
    const std::int32_t* delta;
    std::int32_t* dst;
    std::int32_t* sums;
};

// Adds row i of `a` (width W) to row `slot` of its column, copying the sum to row `to` of its
// composed rows when kept; false, and nothing written, when a sum leaves i32 (`bad` then holds
// the composed bins of the row, in 64 bits).
template <int W>
inline bool add_row(const Addend& a, std::size_t i, std::size_t slot, std::size_t to_row,
                    std::int64_t (&bad)[3]) {
    std::int32_t* to = a.dst + slot * W;
    bool out = false;
    for (int c = 0; c < W; ++c) {
        bad[c] = std::int64_t{to[c]} + std::int64_t{a.delta[i * W + c]};
        out |= bad[c] < std::numeric_limits<std::int32_t>::min() ||
               bad[c] > std::numeric_limits<std::int32_t>::max();
    }
    if (out) return false;
    for (int c = 0; c < W; ++c) to[c] = static_cast<std::int32_t>(bad[c]);
    if (a.sums)
        for (int c = 0; c < W; ++c) a.sums[to_row * W + c] = to[c];
    return true;
}

// Adds the n differences `delta` to the n bins `to`, copying the sums to `sums` when given,
// and returns whether every sum fits i32. In 32 bits, wrapping, so the loop vectorizes: a sum
// wraps exactly when it differs in sign from both of its addends, and subtract_wrapped undoes
// the add exactly.
bool add_wrapping(std::int32_t* __restrict to, const std::int32_t* __restrict delta,
                  std::int32_t* __restrict sums, std::size_t n) {
    std::uint32_t wrapped = 0;
    auto add = [&](std::size_t k) {
        const auto a = static_cast<std::uint32_t>(to[k]), b = static_cast<std::uint32_t>(delta[k]);
        const std::uint32_t sum = a + b;
        wrapped |= (a ^ sum) & (b ^ sum);
        to[k] = static_cast<std::int32_t>(sum);
    };
    if (sums) {
        FOURDGS_COMPACT_LOOP
        for (std::size_t k = 0; k < n; ++k) {
            add(k);
            sums[k] = to[k];
        }
    } else {
        FOURDGS_COMPACT_LOOP
        for (std::size_t k = 0; k < n; ++k) add(k);
    }
    return (wrapped >> 31) == 0;
}

void subtract_wrapped(std::int32_t* __restrict to, const std::int32_t* __restrict delta,
                      std::size_t n) {
    FOURDGS_COMPACT_LOOP
    for (std::size_t k = 0; k < n; ++k)
        to[k] = static_cast<std::int32_t>(static_cast<std::uint32_t>(to[k]) -
                                          static_cast<std::uint32_t>(delta[k]));
}

// Asks for the lines of row k of an update (k past the rows: nothing) in each of the m
// addends' columns of the population, to be written.
inline void prefetch_slot(const Addend* addends, std::size_t m,
                          std::span<const std::uint32_t> slots, std::size_t k) {
    if (k >= slots.size()) return;
    for (std::size_t j = 0; j < m; ++j)
        __builtin_prefetch(
            addends[j].dst + std::size_t{slots[k]} * static_cast<std::size_t>(addends[j].df->width),
            1);
}

// Adds the present difference streams of the update group `u` to the rows `slots` of `bins`
// (row i of u to row slots[i]), for rows [from, to) of the group, copying each composed row i
// to row i - from of `rows` when given (sized by the caller).
// A run of update rows whose slots follow each other (a tracked capture's moving gaussians,
// written in spatial order, are mostly such runs) is a stretch of each column: each present
// column's stretch is added, and checked, by one straight loop. Other rows go row by row, every
// present column of a row together: they are scattered over columns of a million rows, and one
// pass asks for all of a row's lines at once (each some rows ahead, looking past `to` into the
// rows a next block composes, so many misses are in flight) where a pass per column would wait
// on each column's lines in turn. A composed bin outside i32 is refused (§11.7): the first met
// in a row-by-row composition's order, so a run that does not fit is subtracted back and
// composed row by row to name it.
Status add_differences(ChunkBins& bins, const ChunkBins& u,
                       const std::array<bool, attr::kKnownCount>& present,
                       std::span<const std::uint32_t> slots, std::size_t from, std::size_t to,
                       const ChunkRef& chunk, ChunkBins* rows) {
    Addend addends[std::size(kDifferences)];
    std::size_t m = 0;
    for (const Difference& df : kDifferences) {
        if (!present[df.id]) continue;
        std::int32_t* sums = rows ? (rows->*df.col).data() : nullptr;
        addends[m++] = {&df, (u.*df.col).data(), (bins.*df.col).data(), sums};
    }
    constexpr std::size_t kAhead = 64;  // rows: see prefetch_row
    // A run is at least kRun rows: where few rows are adjacent (a random tenth of a million
    // moving) a row rarely starts one, so the test whether it does is a branch predicted right.
    constexpr std::size_t kRun = 4;
    auto starts_run = [&](std::size_t i) {
        if (i + kRun > to || slots[i + kRun - 1] - slots[i] != kRun - 1) return false;
        for (std::size_t k = i + 1; k < i + kRun; ++k)  // in case the slots do not ascend
            if (slots[k] != slots[k - 1] + 1) return false;
        return true;
    };
    for (std::size_t i = from; i < to && m > 0;) {
        const bool run = starts_run(i);
        std::size_t end = i + 1;  // the run of rows from i, or row i alone
        // Only the rows' slots are read here: a run's lines are asked for by its own straight
        // loops, which the hardware follows; asking for them a row at a time some rows ahead,
        // as for scattered rows, queued a prefetch per row behind the misses and made a step of
        // the converter's capture 10 % slower.
        for (; run && end < to && slots[end] == slots[end - 1] + 1; ++end) {
        }
        if (run) {
            bool fit = true;
            for (std::size_t j = 0; j < m; ++j) {
                const Addend& a = addends[j];
                const auto w = static_cast<std::size_t>(a.df->width);
                fit &= add_wrapping(a.dst + slots[i] * w, a.delta + i * w,
                                    a.sums ? a.sums + (i - from) * w : nullptr, (end - i) * w);
            }
            if (fit) {
                i = end;
                continue;
            }
            for (std::size_t j = 0; j < m; ++j) {  // as it was, to be composed row by row
                const Addend& a = addends[j];
                const auto w = static_cast<std::size_t>(a.df->width);
                subtract_wrapped(a.dst + slots[i] * w, a.delta + i * w, (end - i) * w);
            }
        }
        for (; i < end; ++i) {
            if (!run) prefetch_slot(addends, m, slots, i + kAhead);
            for (std::size_t j = 0; j < m; ++j) {
                const Addend& a = addends[j];
                std::int64_t v[3];
                if (a.df->width == 3 ? add_row<3>(a, i, slots[i], i - from, v)
                                     : add_row<1>(a, i, slots[i], i - from, v))
                    continue;
                const int c = static_cast<int>(std::find_if_not(v, v + a.df->width, fits_i32) - v);
                std::string name = attr::kNames[a.df->id];
                if (a.df->width > 1) {  // appended piece by piece: GCC 12 misreads "[" + string
                    name += '[';
                    name += std::to_string(c);
                    name += ']';
                }
                return malformed(refusal::kComposedBinOutOfRange,
                                 "composing '" + name + "' of gaussian_id " +
                                     std::to_string(id_of(u.gaussian_id[i])) + " in " +
                                     chunk.describe() + " gives bin " + std::to_string(v[c]) +
                                     ", outside the signed 32-bit range (§11.7)",
                                 chunk.offset);
            }
        }
    }
    return ok_status();
}

// Restates rotation_index and rotation (§11.5) of rows [from, to) of the update group `u` in
// rows `slots` of `bins`, copying them to row i - from of `rows` when given.
void restate_rotations(ChunkBins& bins, const DeltaBins& d, std::span<const std::uint32_t> slots,
                       std::size_t from, std::size_t to, ChunkBins* rows) {
    const ChunkBins& u = d.updates;
    if (d.update_present[attr::rotation_index])
        for (std::size_t i = from; i < to; ++i) {
            bins.rotation_index[slots[i]] = u.rotation_index[i];
            if (rows) rows->rotation_index[i - from] = u.rotation_index[i];
        }
    if (d.update_present[attr::rotation])
        for (std::size_t i = from; i < to; ++i) {
            std::copy_n(&u.rotation[i * 3], 3, &bins.rotation[std::size_t{slots[i]} * 3]);
            if (rows) std::copy_n(&u.rotation[i * 3], 3, &rows->rotation[(i - from) * 3]);
        }
}

// Rows composed a block at a time for a ComposedRowsSink: 2,048 rows of every column a step
// reads (at most 16 values a row) stay within a core's L2 while they are dequantized.
constexpr std::size_t kBlockRows = 2048;

}  // namespace

Status ComposedPopulation::compose_updates_in_blocks(
    const DeltaBins& d, std::span<const std::uint32_t> slots,
    const std::array<bool, attr::kKnownCount>& reads, const ChunkRef& chunk,
    ComposedRowsSink& sink) {
    const auto& present = d.update_present;
    std::array<bool, attr::kKnownCount> gathered = reads;  // the update composes its own
    for (std::uint8_t a = 0; a < attr::kKnownCount; ++a) gathered[a] = reads[a] && !present[a];
    for (std::size_t from = 0; from < slots.size(); from += kBlockRows) {
        const std::size_t to = std::min(slots.size(), from + kBlockRows);
        const std::span<const std::uint32_t> block = slots.subspan(from, to - from);
        // The columns the sink reads beyond the update's (timing filled while shared), then the
        // update's own, composed into the block.
        gather(block, block_, &gathered);
        for (const Difference& df : kDifferences)
            if (present[df.id]) (block_.*df.col).resize(block.size() * static_cast<std::size_t>(df.width));
        if (present[attr::rotation_index]) block_.rotation_index.resize(block.size());
        if (present[attr::rotation]) block_.rotation.resize(block.size() * 3);
        FOURDGS_TRY(add_differences(bins_, d.updates, present, slots, from, to, chunk, &block_));
        restate_rotations(bins_, d, slots, from, to, &block_);
        sink.take(block_, from);
    }
    return ok_status();
}

Status ComposedPopulation::apply(const DeltaBins& d, const ChunkRef& chunk,
                                 std::uint64_t max_population,
                                 std::vector<std::uint32_t>* updated, ComposedRowsSink* sink) {
    FOURDGS_TRY(check_group_ids(d, chunk));
    bins_.has_gaussian_id = true;
    // A group naming a gaussian_id it may not: "the <group> group of <chunk> names gaussian_id
    // <id><why>".
    auto bad_id = [&](std::string_view refusal, std::string_view group, std::uint32_t id,
                      std::string_view why) {
        std::string message = "the ";
        message += group;
        message += " group of ";
        message += chunk.describe();
        message += " names gaussian_id ";
        message += std::to_string(id);
        message += why;
        return malformed(refusal, std::move(message), chunk.offset);
    };
    // A death or an update must name a live gaussian.
    auto not_live = [&](std::string_view group, std::uint32_t id) {
        return bad_id(refusal::kUnknownGaussianId, group, id,
                      ", which is not live in the reference state (§11.3)");
    };
    // Deaths. The dead rows are removed together, the rows after them move down: the slots
    // keep their order, so in id order they stay the sorted state (a step then needs no sort,
    // §11.3's result being the same).
    dead_slots_.clear();
    for (std::int32_t code : d.deaths) {
        const std::uint32_t id = id_of(code);
        const std::uint32_t slot = slot_.find(id);
        if (slot == IdSlots::kNone) return not_live("death", id);
        slot_.erase(id);
        dead_.insert(id);
        dead_slots_.push_back(slot);
    }
    if (!dead_slots_.empty()) {
        std::sort(dead_slots_.begin(), dead_slots_.end());
        remove_slots_in_order(dead_slots_);
    }
    // Updates, column by changed column in place: the slot of each id the group names, then
    // each present stream's differences added in 64 bits, refused outside i32 (§11.7), and
    // rotation restated absolutely (§11.5). An absent stream leaves its column as it is.
    const ChunkBins& u = d.updates;
    const auto& present = d.update_present;
    std::vector<std::uint32_t>& slots = updated ? *updated : slots_;
    // The rows before the first id that is not live.
    const std::size_t live = find_slots({u.gaussian_id.data(), u.count}, slots);
    if (present[attr::source_group]) bins_.has_source_group = true;
    if (present[attr::source_index]) bins_.has_source_index = true;
    if (present[attr::object_id]) bins_.has_object_id = true;
    // Refusals name what a row-by-row composition meets first: the rows before an id that is
    // not live compose (or refuse) before that id is refused.
    const std::span<const std::uint32_t> live_slots(slots.data(), live);
    const auto reads = sink ? sink->begin(d, live_slots) : std::nullopt;
    if (reads) {
        FOURDGS_TRY(compose_updates_in_blocks(d, live_slots, *reads, chunk, *sink));
    } else {
        FOURDGS_TRY(add_differences(bins_, u, present, live_slots, 0, live, chunk, nullptr));
        restate_rotations(bins_, d, live_slots, 0, live, nullptr);
    }
    if (live < u.count) return not_live("update", id_of(u.gaussian_id[live]));
    // Births.
    const ChunkBins& b = d.births;
    if (b.count > 0) lower_bands(bins_, b.sh_bands);
    if (bins_.count + std::uint64_t{b.count} > max_population)
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          chunk.describe() + " grows the population to " +
                              std::to_string(bins_.count + std::uint64_t{b.count}) +
                              " gaussians, more than the configured limit of " +
                              std::to_string(max_population),
                          chunk.offset);
    for (std::uint32_t i = 0; i < b.count; ++i) {
        const std::uint32_t id = id_of(b.gaussian_id[i]);
        if (slot_.contains(id))
            return bad_id(refusal::kDuplicateGaussianId, "birth", id,
                          ", which is already live; ids are unique within a state (§11.2)");
        if (dead_.count(id))
            return bad_id(refusal::kGaussianIdReused, "birth", id,
                          ", which died earlier; an id is never reused (§11.2)");
        append_row(b, i);
    }
    note_timing(bins_.count - b.count);
    return ok_status();
}

void ComposedPopulation::materialize(ChunkBins& out) const {
    if (in_order_) {  // already sorted: a copy, into out's storage
        const std::vector<std::int32_t> none;
        out.count = bins_.count;
        out.has_gaussian_id = true;
        out.has_source_group = bins_.has_source_group;
        out.has_source_index = bins_.has_source_index;
        out.has_object_id = bins_.has_object_id;
        for_each_column_member([&](auto member, int, std::uint8_t id) {
            const bool absent = (id == attr::source_group && !out.has_source_group) ||
                                (id == attr::source_index && !out.has_source_index) ||
                                (id == attr::object_id && !out.has_object_id);
            out.*member = absent ? none : bins_.*member;
        });
        out.sh_bands = bins_.sh_bands;
        for (int b = 1; b <= 3; ++b) out.sh[b - 1] = b <= bins_.sh_bands ? bins_.sh[b - 1]
                                                                         : std::vector<std::uint8_t>{};
        return;
    }
    std::vector<std::uint32_t> order(bins_.count);
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return id_of(bins_.gaussian_id[a]) < id_of(bins_.gaussian_id[b]);
    });
    gather(order, out);
}

void ComposedPopulation::gather(std::span<const std::uint32_t> order, ChunkBins& out,
                                const std::array<bool, attr::kKnownCount>* only) const {
    const std::size_t n = order.size();
    out.count = static_cast<std::uint32_t>(n);
    // Every column of the population holds every row (append_row writes 0 where a source lacks
    // an optional one); the optional columns it does not carry are then left empty.
    for_each_column_member([&](auto member, int w, std::uint8_t id) {
        if (only && !(*only)[id]) return;
        const std::vector<std::int32_t>& src = bins_.*member;
        std::vector<std::int32_t>& dst = out.*member;
        const int shared = !timing_                   ? -1
                           : id == attr::sigma_t      ? 0
                           : id == attr::flags        ? 1
                           : id == attr::window_index ? 2
                                                      : -1;
        if (shared >= 0) {  // every row's bin is the same
            dst.assign(n, (*timing_)[static_cast<std::size_t>(shared)]);
            return;
        }
        dst.resize(n * w);
        for (std::size_t i = 0; i < n; ++i) {
            prefetch_row(src.data(), order, i, w);
            copy_row(&src[std::size_t{order[i]} * w], &dst[i * w], w);
        }
    });
    out.has_gaussian_id = true;
    out.has_source_group = bins_.has_source_group;
    out.has_source_index = bins_.has_source_index;
    out.has_object_id = bins_.has_object_id;
    if (!out.has_source_group) out.source_group.clear();
    if (!out.has_source_index) out.source_index.clear();
    if (!out.has_object_id) out.object_id.clear();
    out.sh_bands = bins_.sh_bands;
    for (int b = 1; b <= 3; ++b) {
        std::vector<std::uint8_t>& dst = out.sh[b - 1];
        if (b > bins_.sh_bands || only) {
            dst.clear();
            continue;
        }
        const std::size_t w = 3 * static_cast<std::size_t>(sh_band_width(b));
        dst.resize(n * w);
        for (std::size_t i = 0; i < n; ++i)
            std::copy_n(&bins_.sh[b - 1][order[i] * w], w, &dst[i * w]);
    }
}

void scatter_rows(const ChunkBins& rows, std::span<const std::uint32_t> at, ChunkBins& into,
                  const std::array<bool, attr::kKnownCount>* only) {
    for_each_column_member([&](auto member, int w, std::uint8_t id) {
        std::vector<std::int32_t>& dst = into.*member;
        const std::vector<std::int32_t>& src = rows.*member;
        if (dst.empty() || (only && !(*only)[id])) return;  // not carried, or not changed
        for (std::size_t k = 0; k < at.size(); ++k)
            copy_row(&src[k * w], &dst[std::size_t{at[k]} * w], w);
    });
    if (only) return;  // SH travels with births only (§5.18), never in an update
    for (int b = 1; b <= into.sh_bands; ++b) {
        const std::size_t w = 3 * static_cast<std::size_t>(sh_band_width(b));
        for (std::size_t k = 0; k < at.size(); ++k)
            std::copy_n(&rows.sh[b - 1][k * w], w, &into.sh[b - 1][std::size_t{at[k]} * w]);
    }
}

}  // namespace fourdgs::detail
