// The keyframe-delta temporal model (fourdgs/keyframe_delta.hpp): composition in bins, the seek
// walk, and the indexed and streaming front-ends.
#include "fourdgs/keyframe_delta.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>

namespace fourdgs {
namespace {

Error malformed(std::string_view refusal, std::string message, std::uint64_t offset) {
    return make_error(ErrorKind::malformed, refusal, std::move(message), offset);
}

// Shortest decimal that reads back as the same double.
std::string num(double v) {
    char buf[40];
    for (int p = 1; p <= 17; ++p) {
        std::snprintf(buf, sizeof buf, "%.*g", p, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
}

std::string interval(double t0, double t1) { return "[" + num(t0) + ", " + num(t1) + ")"; }

std::string describe(const ChunkRef& c) {
    return std::string(c.delta ? "Delta Chunk" : "Chunk") + " at byte " + std::to_string(c.offset) +
           " " + interval(c.t0, c.t1);
}

std::uint32_t id_of(std::int32_t code) { return static_cast<std::uint32_t>(code); }

// The attribute columns of a ChunkBins, with their widths; SH bands are handled separately.
template <class Bins, class F>
void for_each_column(Bins& b, F&& f) {
    f(b.position, 3);
    f(b.scale, 3);
    f(b.rotation_index, 1);
    f(b.rotation, 3);
    f(b.color, 3);
    f(b.opacity, 1);
    f(b.motion, 3);
    f(b.mu_t, 1);
    f(b.sigma_t, 1);
    f(b.flags, 1);
    f(b.window_index, 1);
    f(b.source_group, 1);
    f(b.source_index, 1);
    f(b.gaussian_id, 1);
    f(b.object_id, 1);
}

Status check_count(std::uint32_t count, const DecodeLimits& limits, const char* what,
                   std::uint64_t at) {
    if (count > limits.max_gaussians_per_chunk)
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          std::string(what) + " declares " + std::to_string(count) +
                              " gaussians, more than the configured limit of " +
                              std::to_string(limits.max_gaussians_per_chunk),
                          at);
    return ok_status();
}

Status check_rows(const SceneInfo& scene, const ChunkBins& b, std::uint32_t count, bool rotation,
                  bool window, const char* what, std::uint64_t at) {
    for (std::uint32_t i = 0; i < count; ++i) {
        if (rotation && (b.rotation_index[i] < 0 || b.rotation_index[i] > 3))
            return malformed(refusal::kInvalidRotationIndex,
                             std::string(what) + " element " + std::to_string(i) +
                                 " has rotation_index " + std::to_string(b.rotation_index[i]) +
                                 "; only 0..3 name a quaternion component",
                             at);
        if (window && (b.window_index[i] < 0 ||
                       static_cast<std::size_t>(b.window_index[i]) >= scene.windows.size()))
            return malformed(refusal::kWindowIndexOutOfRange,
                             std::string(what) + " element " + std::to_string(i) +
                                 " has window index " + std::to_string(b.window_index[i]) +
                                 " but the Window Table has " +
                                 std::to_string(scene.windows.size()) + " window(s)",
                             at);
    }
    return ok_status();
}

int wanted_bands_for(const SceneInfo& scene, const ReaderOptions& options) {
    return std::min<int>(scene.header.sh_degree, std::max(0, options.decode.max_sh_degree));
}

ReaderOptions keyframe_delta_options(ReaderOptions o) {
    o.accept_keyframe_delta = true;
    return o;
}

Status require_keyframe_delta(const Header& h, std::uint64_t at) {
    if (h.temporal_model == kModelKeyframeDelta) return ok_status();
    return make_error(ErrorKind::unsupported, refusal::kUnknownTemporalModel,
                      "the keyframe-delta front-end reads temporal_model 'keyframe-delta'; this "
                      "file declares '" + h.temporal_model + "' (use the gaussian-birth readers)",
                      at);
}

Error index_mismatch(std::string_view field, std::string message, std::uint64_t at) {
    return malformed(refusal::kIndexRecordMismatch,
                     "Chunk Index field '" + std::string(field) +
                         "' disagrees with the record: " + std::move(message),
                     at);
}

// Decompresses a records block per its compression string (§5.5/§5.18, M030/M093).
Result<Bytes> open_block(const std::string& compression, std::uint64_t uncompressed_size,
                         Bytes records, std::uint64_t at, const DecodeLimits& limits,
                         const char* what, std::vector<std::uint8_t>& scratch) {
    if (compression.empty()) {
        if (uncompressed_size != records.size())
            return malformed(refusal::kDecompressedSizeMismatch,
                             std::string(what) + " stores its records uncompressed but "
                                                 "uncompressed_size is " +
                                 std::to_string(uncompressed_size) + ", the block is " +
                                 std::to_string(records.size()) + " bytes",
                             at);
        return records;
    }
    FOURDGS_ASSIGN(std::uint8_t codec, chunk_compression_codec(compression, at));
    if (uncompressed_size > limits.max_decompressed_bytes)
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          std::string(what) + " uncompressed_size " +
                              std::to_string(uncompressed_size) + " exceeds the configured limit",
                          at);
    FOURDGS_TRY(check_decompressed_size(codec, records, uncompressed_size, at));
    scratch.resize(static_cast<std::size_t>(uncompressed_size));
    FOURDGS_TRY(decompress(codec, records, scratch, at));
    return Bytes(scratch);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Delta decode.

Status decode_delta_bins(const SceneInfo& scene, const DeltaChunk& d,
                         std::span<const ShBandRecord> bands, const ChunkDecodeOptions& options,
                         DeltaBins& out, DecodeScratch& scratch) {
    const std::uint64_t at = d.records_offset;
    FOURDGS_TRY(check_count(d.update_count, options.limits, "Delta Chunk update group", at));
    FOURDGS_TRY(check_count(d.birth_count, options.limits, "Delta Chunk birth group", at));
    FOURDGS_TRY(check_count(d.death_count, options.limits, "Delta Chunk death group", at));
    FOURDGS_ASSIGN(Bytes block, open_block(d.compression, d.uncompressed_size, d.records, at,
                                           options.limits, "Delta Chunk", scratch.block));
    // Offsets inside a decompressed block do not exist in the file; name the block instead.
    const bool stored = d.compression.empty();
    FOURDGS_ASSIGN(DeltaGroups g, split_delta_groups(block, at));
    const std::uint64_t uo = stored ? g.updates_offset : at;
    const std::uint64_t bo = stored ? g.births_offset : at;
    const std::uint64_t dof = stored ? g.deaths_offset : at;
    std::array<bool, attr::kKnownCount> seen{};
    const std::string dc = "the Delta Chunk over " + interval(d.t0, d.t1);

    // Deaths (decoded through the births bins as scratch): exactly one stream, gaussian_id.
    FOURDGS_TRY(decode_stream_block(g.deaths, dof, d.death_count, "the Delta Chunk death group",
                                    options.limits, out.births, seen, scratch.stream));
    for (std::uint8_t id = 0; id < attr::kKnownCount; ++id)
        if (seen[id] && id != attr::gaussian_id)
            return malformed(refusal::kInvalidDeathStream,
                             std::string("the death group carries a '") + attr::kNames[id] +
                                 "' stream; it holds exactly one stream, gaussian_id (§5.18)",
                             dof);
    if (d.death_count > 0 && !seen[attr::gaussian_id])
        return malformed(refusal::kMissingGaussianId,
                         "the death group of " + dc + " holds " +
                             std::to_string(d.death_count) +
                             " deaths but no gaussian_id stream (§5.18)",
                         dof);
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
    if (d.update_count > 0 && !seen[attr::gaussian_id])
        return malformed(refusal::kMissingGaussianId,
                         "the update group of " + dc + " holds " +
                             std::to_string(d.update_count) +
                             " updates but no gaussian_id stream (§5.18)",
                         uo);
    FOURDGS_TRY(check_rows(scene, out.updates, d.update_count, seen[attr::rotation_index], false,
                           "update", uo));
    out.update_present = seen;
    out.updates.count = d.update_count;

    // Births: the full required attribute set plus gaussian_id, absolute.
    FOURDGS_TRY(decode_stream_block(g.births, bo, d.birth_count, "the Delta Chunk birth group",
                                    options.limits, out.births, seen, scratch.stream));
    out.births.count = d.birth_count;
    for (std::uint8_t id = 0; id < attr::kRequiredCount; ++id)
        if (!seen[id]) {
            if (d.birth_count == 0) {
                out.births.column(id)->clear();
                continue;
            }
            return malformed(refusal::kMissingAttributeStream,
                             std::string("the birth group lacks the required '") +
                                 attr::kNames[id] + "' stream (id " + std::to_string(id) + ")",
                             bo);
        }
    if (d.birth_count > 0 && !seen[attr::gaussian_id])
        return malformed(refusal::kMissingGaussianId,
                         "the birth group of " + dc + " holds " +
                             std::to_string(d.birth_count) +
                             " births but no gaussian_id stream (§5.18)",
                         bo);
    if (!out.births.has_source_group) out.births.source_group.clear();
    if (!out.births.has_source_index) out.births.source_index.clear();
    if (!out.births.has_object_id) out.births.object_id.clear();
    if (!out.births.has_gaussian_id) out.births.gaussian_id.clear();
    FOURDGS_TRY(check_rows(scene, out.births, d.birth_count, true, true, "birth", bo));

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
// ComposedPopulation.

void ComposedPopulation::reset(int sh_bands) {
    bins_ = ChunkBins{};
    bins_.sh_bands = std::clamp(sh_bands, 0, 3);
    slot_.clear();
    dead_.clear();
}

void ComposedPopulation::remove_slot(std::uint32_t slot) {
    const std::uint32_t last = bins_.count - 1;
    if (slot != last) {
        for_each_column(bins_, [&](std::vector<std::int32_t>& col, int w) {
            std::copy_n(&col[std::size_t{last} * w], w, &col[std::size_t{slot} * w]);
        });
        for (int b = 1; b <= bins_.sh_bands; ++b) {
            const std::size_t w = 3 * static_cast<std::size_t>(sh_band_width(b));
            std::copy_n(&bins_.sh[b - 1][last * w], w, &bins_.sh[b - 1][slot * w]);
        }
        slot_[id_of(bins_.gaussian_id[slot])] = slot;
    }
    for_each_column(bins_, [&](std::vector<std::int32_t>& col, int w) {
        col.resize(std::size_t{last} * w);
    });
    for (int b = 1; b <= bins_.sh_bands; ++b)
        bins_.sh[b - 1].resize(last * 3 * static_cast<std::size_t>(sh_band_width(b)));
    bins_.count = last;
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
    slot_[id_of(src.gaussian_id[row])] = bins_.count;
    ++bins_.count;
}

// A source with fewer whole SH bands (a truncated chunk's, M100) lowers the population's degree.
static void lower_bands(ChunkBins& bins, int to) {
    if (to >= bins.sh_bands) return;
    for (int b = std::max(to, 0) + 1; b <= 3; ++b) bins.sh[b - 1].clear();
    bins.sh_bands = std::max(to, 0);
}

Status ComposedPopulation::assign_keyframe(const ChunkBins& kf, const ChunkRef& chunk) {
    if (kf.count > 0 && !kf.has_gaussian_id)
        return malformed(refusal::kMissingGaussianId,
                         describe(chunk) + " holds " + std::to_string(kf.count) +
                             " gaussians but no gaussian_id stream; every chunk of a "
                             "keyframe-delta file carries it (§11.2)",
                         chunk.offset);
    const int bands = std::min(bins_.sh_bands, kf.sh_bands);
    bins_ = ChunkBins{};
    bins_.sh_bands = bands;
    slot_.clear();
    slot_.reserve(kf.count);
    for_each_column(bins_, [&](std::vector<std::int32_t>& col, int w) {
        col.reserve(std::size_t{kf.count} * w);
    });
    bins_.has_gaussian_id = true;
    for (std::uint32_t i = 0; i < kf.count; ++i) {
        const std::uint32_t id = id_of(kf.gaussian_id[i]);
        if (slot_.count(id))
            return malformed(refusal::kDuplicateGaussianId,
                             describe(chunk) + " states gaussian_id " + std::to_string(id) +
                                 " twice; ids are unique within a state (§11.2)",
                             chunk.offset);
        if (dead_.count(id))
            return malformed(refusal::kGaussianIdReused,
                             describe(chunk) + " states gaussian_id " + std::to_string(id) +
                                 ", which died earlier; an id is never reused (§11.2)",
                             chunk.offset);
        append_row(kf, i);
    }
    return ok_status();
}

Status ComposedPopulation::succeed(ComposedPopulation&& previous, const ChunkRef& chunk) {
    for (std::uint32_t i = 0; i < bins_.count; ++i) {
        const std::uint32_t id = id_of(bins_.gaussian_id[i]);
        if (previous.dead_.count(id))
            return malformed(refusal::kGaussianIdReused,
                             "the state of " + describe(chunk) + " holds gaussian_id " +
                                 std::to_string(id) +
                                 ", which died earlier; an id is never reused (§11.2)",
                             chunk.offset);
    }
    std::unordered_set<std::uint32_t> dead = std::move(previous.dead_);
    dead.insert(dead_.begin(), dead_.end());
    for (std::uint32_t i = 0; i < previous.bins_.count; ++i) {
        const std::uint32_t id = id_of(previous.bins_.gaussian_id[i]);
        if (!slot_.count(id)) dead.insert(id);
    }
    dead_ = std::move(dead);
    return ok_status();
}

Status ComposedPopulation::check_group_ids(const DeltaBins& d, const ChunkRef& chunk) {
    // One pass over all three groups: duplicates within a group, then across groups (§11.3).
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
                                     describe(chunk) + " names gaussian_id " + std::to_string(id) +
                                     " twice",
                                 chunk.offset);
            return malformed(refusal::kGaussianIdInTwoGroups,
                             "gaussian_id " + std::to_string(id) + " is in both the " +
                                 kGroup[it->second] + " and the " + kGroup[group] +
                                 " group of " + describe(chunk) +
                                 "; the outcome would depend on application order (§11.3)",
                             chunk.offset);
        }
        return ok_status();
    };
    FOURDGS_TRY(visit(d.deaths, 0));
    FOURDGS_TRY(visit(std::span(d.updates.gaussian_id).first(
                          d.update_present[attr::gaussian_id] ? d.updates.count : 0),
                      1));
    FOURDGS_TRY(visit(std::span(d.births.gaussian_id).first(d.births.has_gaussian_id
                                                                ? d.births.count
                                                                : 0),
                      2));
    return ok_status();
}

Status ComposedPopulation::apply(const DeltaBins& d, const ChunkRef& chunk,
                                 std::uint64_t max_population) {
    FOURDGS_TRY(check_group_ids(d, chunk));
    bins_.has_gaussian_id = true;
    // Deaths.
    for (std::int32_t code : d.deaths) {
        const std::uint32_t id = id_of(code);
        auto it = slot_.find(id);
        if (it == slot_.end())
            return malformed(refusal::kUnknownGaussianId,
                             "the death group of " + describe(chunk) + " names gaussian_id " +
                                 std::to_string(id) +
                                 ", which is not live in the reference state (§11.3)",
                             chunk.offset);
        const std::uint32_t slot = it->second;
        slot_.erase(it);
        remove_slot(slot);
        dead_.insert(id);
    }
    // Updates: differences in 64 bits, refused outside i32 (§11.7); rotation absolute (§11.5).
    const ChunkBins& u = d.updates;
    const auto& present = d.update_present;
    struct Diff {
        std::uint8_t id;
        std::vector<std::int32_t> ChunkBins::*col;
        int width;
    };
    static constexpr Diff kDiffs[] = {
        {attr::position, &ChunkBins::position, 3},   {attr::scale, &ChunkBins::scale, 3},
        {attr::color, &ChunkBins::color, 3},         {attr::opacity, &ChunkBins::opacity, 1},
        {attr::motion, &ChunkBins::motion, 3},       {attr::mu_t, &ChunkBins::mu_t, 1},
        {attr::source_group, &ChunkBins::source_group, 1},
        {attr::source_index, &ChunkBins::source_index, 1},
        {attr::object_id, &ChunkBins::object_id, 1},
    };
    if (present[attr::source_group]) bins_.has_source_group = true;
    if (present[attr::source_index]) bins_.has_source_index = true;
    if (present[attr::object_id]) bins_.has_object_id = true;
    for (std::uint32_t i = 0; i < u.count; ++i) {
        const std::uint32_t id = id_of(u.gaussian_id[i]);
        auto it = slot_.find(id);
        if (it == slot_.end())
            return malformed(refusal::kUnknownGaussianId,
                             "the update group of " + describe(chunk) + " names gaussian_id " +
                                 std::to_string(id) +
                                 ", which is not live in the reference state (§11.3)",
                             chunk.offset);
        const std::size_t s = it->second;
        for (const Diff& df : kDiffs) {
            if (!present[df.id]) continue;
            const std::vector<std::int32_t>& delta = u.*df.col;
            std::vector<std::int32_t>& dst = bins_.*df.col;
            for (int c = 0; c < df.width; ++c) {
                const std::int64_t v = std::int64_t{dst[s * df.width + c]} +
                                       std::int64_t{delta[std::size_t{i} * df.width + c]};
                if (v < std::numeric_limits<std::int32_t>::min() ||
                    v > std::numeric_limits<std::int32_t>::max())
                    return malformed(
                        refusal::kComposedBinOutOfRange,
                        std::string("composing '") + attr::kNames[df.id] +
                            (df.width > 1 ? "[" + std::to_string(c) + "]" : std::string()) +
                            "' of gaussian_id " + std::to_string(id) + " in " + describe(chunk) +
                            " gives bin " + std::to_string(v) +
                            ", outside the signed 32-bit range (§11.7)",
                        chunk.offset);
                dst[s * df.width + c] = static_cast<std::int32_t>(v);
            }
        }
        if (present[attr::rotation_index]) bins_.rotation_index[s] = u.rotation_index[i];
        if (present[attr::rotation])
            std::copy_n(&u.rotation[std::size_t{i} * 3], 3, &bins_.rotation[s * 3]);
    }
    // Births.
    const ChunkBins& b = d.births;
    if (b.count > 0) lower_bands(bins_, b.sh_bands);
    if (bins_.count + std::uint64_t{b.count} > max_population)
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          describe(chunk) + " grows the population to " +
                              std::to_string(bins_.count + std::uint64_t{b.count}) +
                              " gaussians, more than the configured limit of " +
                              std::to_string(max_population),
                          chunk.offset);
    for (std::uint32_t i = 0; i < b.count; ++i) {
        const std::uint32_t id = id_of(b.gaussian_id[i]);
        if (slot_.count(id))
            return malformed(refusal::kDuplicateGaussianId,
                             "the birth group of " + describe(chunk) + " names gaussian_id " +
                                 std::to_string(id) +
                                 ", which is already live; ids are unique within a state (§11.2)",
                             chunk.offset);
        if (dead_.count(id))
            return malformed(refusal::kGaussianIdReused,
                             "the birth group of " + describe(chunk) + " names gaussian_id " +
                                 std::to_string(id) +
                                 ", which died earlier; an id is never reused (§11.2)",
                             chunk.offset);
        append_row(b, i);
    }
    return ok_status();
}

void ComposedPopulation::materialize(ChunkBins& out) const {
    const std::uint32_t n = bins_.count;
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return id_of(bins_.gaussian_id[a]) < id_of(bins_.gaussian_id[b]);
    });
    out.count = n;
    auto gather = [&](std::vector<std::int32_t>& dst, const std::vector<std::int32_t>& src,
                      int w) {
        dst.resize(std::size_t{n} * w);
        for (std::uint32_t i = 0; i < n; ++i)
            std::copy_n(&src[std::size_t{order[i]} * w], w, &dst[std::size_t{i} * w]);
    };
    gather(out.position, bins_.position, 3);
    gather(out.scale, bins_.scale, 3);
    gather(out.rotation_index, bins_.rotation_index, 1);
    gather(out.rotation, bins_.rotation, 3);
    gather(out.color, bins_.color, 3);
    gather(out.opacity, bins_.opacity, 1);
    gather(out.motion, bins_.motion, 3);
    gather(out.mu_t, bins_.mu_t, 1);
    gather(out.sigma_t, bins_.sigma_t, 1);
    gather(out.flags, bins_.flags, 1);
    gather(out.window_index, bins_.window_index, 1);
    gather(out.gaussian_id, bins_.gaussian_id, 1);
    out.has_gaussian_id = true;
    out.has_source_group = bins_.has_source_group;
    out.has_source_index = bins_.has_source_index;
    out.has_object_id = bins_.has_object_id;
    if (out.has_source_group) gather(out.source_group, bins_.source_group, 1);
    else out.source_group.clear();
    if (out.has_source_index) gather(out.source_index, bins_.source_index, 1);
    else out.source_index.clear();
    if (out.has_object_id) gather(out.object_id, bins_.object_id, 1);
    else out.object_id.clear();
    out.sh_bands = bins_.sh_bands;
    for (int b = 1; b <= 3; ++b) {
        std::vector<std::uint8_t>& dst = out.sh[b - 1];
        if (b > bins_.sh_bands) {
            dst.clear();
            continue;
        }
        const std::size_t w = 3 * static_cast<std::size_t>(sh_band_width(b));
        dst.resize(n * w);
        for (std::uint32_t i = 0; i < n; ++i)
            std::copy_n(&bins_.sh[b - 1][order[i] * w], w, &dst[i * w]);
    }
}

// ---------------------------------------------------------------------------------------------
// KeyframeTimeline.

Result<KeyframeTimeline> KeyframeTimeline::build(std::vector<ChunkIndex> index, double duration) {
    KeyframeTimeline tl;
    tl.index_ = std::move(index);
    const std::vector<ChunkIndex>& ix = tl.index_;
    const std::size_t n = ix.size();

    for (std::size_t i = 0; i < n; ++i) {
        const ChunkIndex& e = ix[i];
        if (!e.keyframe)
            return malformed(refusal::kMissingKeyframeIndexFields,
                             "Chunk Index entry " + std::to_string(i) + " (chunk at byte " +
                                 std::to_string(e.chunk_offset) +
                                 ") lacks the six keyframe-delta fields (§5.8)",
                             e.chunk_offset);
        if (!(std::isfinite(e.t0) && std::isfinite(e.t1) && e.t0 <= e.t1))
            return malformed(refusal::kNonTilingChunks,
                             "state chunk at byte " + std::to_string(e.chunk_offset) +
                                 " has interval " + interval(e.t0, e.t1) +
                                 ", which is not a finite, ordered interval (§11.1)",
                             e.chunk_offset);
    }
    // §11.1: sorted by t0, the intervals tile [0, duration).
    tl.by_time_.resize(n);
    std::iota(tl.by_time_.begin(), tl.by_time_.end(), std::size_t{0});
    std::stable_sort(tl.by_time_.begin(), tl.by_time_.end(), [&](std::size_t a, std::size_t b) {
        return ix[a].t0 < ix[b].t0 || (ix[a].t0 == ix[b].t0 && ix[a].t1 < ix[b].t1);
    });
    if (n == 0) {
        if (duration > 0)
            return malformed(refusal::kTimelineGap,
                             "no state chunk covers the timeline " + interval(0, duration) +
                                 " (§11.1)",
                             kNoOffset);
    } else {
        const ChunkIndex& first = ix[tl.by_time_.front()];
        if (first.t0 != 0)
            return malformed(first.t0 > 0 ? refusal::kTimelineGap : refusal::kNonTilingChunks,
                             "the timeline starts at 0 but its first state chunk covers " +
                                 interval(first.t0, first.t1) + " (§11.1)",
                             first.chunk_offset);
        for (std::size_t k = 1; k < n; ++k) {
            const ChunkIndex& a = ix[tl.by_time_[k - 1]];
            const ChunkIndex& b = ix[tl.by_time_[k]];
            if (a.t1 > b.t0)
                return malformed(refusal::kNonTilingChunks,
                                 "state chunks " + interval(a.t0, a.t1) + " (byte " +
                                     std::to_string(a.chunk_offset) + ") and " +
                                     interval(b.t0, b.t1) + " (byte " +
                                     std::to_string(b.chunk_offset) + ") overlap (§11.1)",
                                 b.chunk_offset);
            if (a.t1 < b.t0)
                return malformed(refusal::kTimelineGap,
                                 "state chunks " + interval(a.t0, a.t1) + " (byte " +
                                     std::to_string(a.chunk_offset) + ") and " +
                                     interval(b.t0, b.t1) + " (byte " +
                                     std::to_string(b.chunk_offset) + ") leave a gap (§11.1)",
                                 b.chunk_offset);
        }
        const ChunkIndex& last = ix[tl.by_time_.back()];
        if (last.t1 != duration)
            return malformed(last.t1 < duration ? refusal::kTimelineGap : refusal::kNonTilingChunks,
                             "the last state chunk covers " + interval(last.t0, last.t1) +
                                 " but the Header's duration is " + num(duration) +
                                 ", so the timeline " + interval(0, duration) +
                                 (last.t1 < duration ? " is not covered to its end"
                                                     : " is overrun") +
                                 " (§11.1)",
                             last.chunk_offset);
    }

    // Offsets: the entry framing each record, and each entry's predecessor in file order.
    std::unordered_map<std::uint64_t, std::size_t> at;
    at.reserve(n);
    std::vector<std::size_t> by_offset(n);
    std::iota(by_offset.begin(), by_offset.end(), std::size_t{0});
    std::sort(by_offset.begin(), by_offset.end(),
              [&](std::size_t a, std::size_t b) { return ix[a].chunk_offset < ix[b].chunk_offset; });
    std::vector<std::size_t> previous(n, n);
    for (std::size_t k = 0; k < n; ++k) {
        const ChunkIndex& e = ix[by_offset[k]];
        if (!at.emplace(e.chunk_offset, by_offset[k]).second)
            return index_mismatch("chunk_offset",
                                  "two entries name the record at byte " +
                                      std::to_string(e.chunk_offset),
                                  e.chunk_offset);
        if (k > 0) previous[by_offset[k]] = by_offset[k - 1];
    }
    const std::uint64_t first_offset = n ? ix[by_offset.front()].chunk_offset : 0;

    // A keyframe entry's duplicated fields are what a Chunk record implies (§5.8).
    for (const ChunkIndex& e : ix) {
        const KeyframeIndexFields& k = *e.keyframe;
        if (k.chunk_kind != kChunkKindKeyframe) continue;
        const std::string who = "the keyframe entry for byte " + std::to_string(e.chunk_offset);
        if (k.delta_mode != 0)
            return index_mismatch("delta_mode", who + " has delta_mode " +
                                                    std::to_string(k.delta_mode) +
                                                    "; a Chunk has none (0)",
                                  e.chunk_offset);
        if (k.reference_offset != 0)
            return index_mismatch("reference_offset",
                                  who + " has reference_offset " +
                                      std::to_string(k.reference_offset) +
                                      "; a Chunk references nothing (0)",
                                  e.chunk_offset);
        if (k.keyframe_offset != e.chunk_offset)
            return index_mismatch("keyframe_offset",
                                  who + " has keyframe_offset " +
                                      std::to_string(k.keyframe_offset) +
                                      "; a keyframe is its own GOP head",
                                  e.chunk_offset);
        if (k.depth != 0)
            return index_mismatch("depth", who + " has depth " + std::to_string(k.depth) +
                                               "; a keyframe composes no delta (0)",
                                  e.chunk_offset);
    }

    // §11.8: each entry's chain, walked backwards through reference_offset.
    tl.chains_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::vector<std::size_t>& chain = tl.chains_[i];
        chain.push_back(i);
        std::size_t cur = i;
        while (ix[cur].keyframe->chunk_kind == kChunkKindDelta) {
            const ChunkIndex& e = ix[cur];
            const KeyframeIndexFields& k = *e.keyframe;
            if (k.reference_offset >= e.chunk_offset)
                return malformed(refusal::kForwardReference,
                                 "the delta entry for byte " + std::to_string(e.chunk_offset) +
                                     " has reference_offset " +
                                     std::to_string(k.reference_offset) +
                                     ", not before its own offset; references point backwards "
                                     "only (§11.8)",
                                 e.chunk_offset);
            auto it = at.find(k.reference_offset);
            if (it == at.end()) {
                if (k.reference_offset < first_offset)
                    return malformed(refusal::kChainWithoutKeyframe,
                                     "the chain of the entry for byte " +
                                         std::to_string(ix[i].chunk_offset) +
                                         " reaches reference_offset " +
                                         std::to_string(k.reference_offset) +
                                         ", before the file's first state chunk at byte " +
                                         std::to_string(first_offset) +
                                         ", without a keyframe (§11.8)",
                                     e.chunk_offset);
                return malformed(refusal::kBrokenReference,
                                 "the delta entry for byte " + std::to_string(e.chunk_offset) +
                                     " has reference_offset " +
                                     std::to_string(k.reference_offset) +
                                     ", which names no Chunk Index entry (§11.8)",
                                 e.chunk_offset);
            }
            if (k.delta_mode == kDeltaModeKeyframe && k.reference_offset != k.keyframe_offset)
                return malformed(refusal::kDeltaModeMismatch,
                                 "the delta entry for byte " + std::to_string(e.chunk_offset) +
                                     " is keyframe-referenced (delta_mode 0) but its "
                                     "reference_offset " +
                                     std::to_string(k.reference_offset) +
                                     " is not its keyframe_offset " +
                                     std::to_string(k.keyframe_offset) + " (§5.18)",
                                 e.chunk_offset);
            if (k.delta_mode == kDeltaModeChained && it->second != previous[cur])
                return malformed(refusal::kDeltaModeMismatch,
                                 "the delta entry for byte " + std::to_string(e.chunk_offset) +
                                     " is chained (delta_mode 1) but its reference_offset " +
                                     std::to_string(k.reference_offset) +
                                     " is not the state chunk immediately preceding it (§5.18)",
                                 e.chunk_offset);
            cur = it->second;
            chain.push_back(cur);
        }
        std::reverse(chain.begin(), chain.end());
        const ChunkIndex& head = ix[chain.front()];
        for (std::size_t c : chain)
            if (ix[c].keyframe->keyframe_offset != head.chunk_offset)
                return malformed(refusal::kChainWithoutKeyframe,
                                 "the entry for byte " + std::to_string(ix[c].chunk_offset) +
                                     " names keyframe_offset " +
                                     std::to_string(ix[c].keyframe->keyframe_offset) +
                                     " but its chain reaches the keyframe at byte " +
                                     std::to_string(head.chunk_offset) + " (§11.8)",
                                 ix[c].chunk_offset);
        if (chain.size() != std::size_t{ix[i].keyframe->depth} + 1)
            return malformed(refusal::kDepthMismatch,
                             "the entry for byte " + std::to_string(ix[i].chunk_offset) +
                                 " declares depth " + std::to_string(ix[i].keyframe->depth) +
                                 " (a chain of " + std::to_string(ix[i].keyframe->depth + 1) +
                                 " records) but its chain walks " + std::to_string(chain.size()) +
                                 " (§11.8)",
                             ix[i].chunk_offset);
    }
    return tl;
}

Result<std::size_t> KeyframeTimeline::current(double t) const {
    // The first entry in time order whose t1 exceeds t; tiling makes it the unique one.
    auto it = std::upper_bound(by_time_.begin(), by_time_.end(), t,
                               [&](double v, std::size_t e) { return v < index_[e].t1; });
    if (!(t >= 0) || it == by_time_.end() || !(index_[*it].t0 <= t))
        return make_error(ErrorKind::invalid_argument, refusal::kTimeOutOfRange,
                          "t = " + num(t) + " is outside the timeline covered by the state "
                                            "chunks");
    return *it;
}

Result<std::vector<std::size_t>> KeyframeTimeline::chain(double t) const {
    FOURDGS_ASSIGN(std::size_t cur, current(t));
    return chains_[cur];
}

Result<SeekPlan> KeyframeTimeline::plan(double t, int wanted_bands) const {
    SeekPlan p;
    FOURDGS_ASSIGN(p.current, current(t));
    p.chain = chains_[p.current];
    for (std::size_t c : p.chain) {
        p.chunk_bytes += index_[c].chunk_length;
        for (const ChunkIndex::Band& b : index_[c].bands)
            if (b.band >= 1 && b.band <= wanted_bands) p.band_bytes += b.length;
    }
    return p;
}

// ---------------------------------------------------------------------------------------------
// KeyframeDeltaReader.

Result<KeyframeDeltaReader> KeyframeDeltaReader::open(ByteSource& source, ReaderOptions options) {
    options = keyframe_delta_options(options);
    FOURDGS_ASSIGN(IndexedReader base, IndexedReader::open(source, options));
    const SceneInfo& scene = base.scene();
    FOURDGS_TRY(require_keyframe_delta(scene.header, kMagicSize));
    if (base.index_built_by_scan())
        return make_error(ErrorKind::unsupported, refusal::kNoChunkIndex,
                          "the file has no Chunk Index (summary_start is 0), so it cannot be "
                          "seeked; read it front to back with KeyframeDeltaStream (M016)",
                          kNoOffset);
    FOURDGS_ASSIGN(KeyframeTimeline tl,
                   KeyframeTimeline::build(scene.index, scene.header.duration_sec));
    return KeyframeDeltaReader(std::move(base), source, options, std::move(tl));
}

int KeyframeDeltaReader::wanted_bands() const { return wanted_bands_for(scene(), options_); }

Status KeyframeDeltaReader::fetch(std::uint64_t offset, std::uint64_t length,
                                  std::vector<std::uint8_t>& out) const {
    FOURDGS_TRY(read_range(*source_, offset, length, options_.max_record_bytes, out));
    fetched_->fetch_add(length, std::memory_order_relaxed);
    return ok_status();
}

Result<std::vector<ByteRange>> KeyframeDeltaReader::fetch_ranges(double t) const {
    FOURDGS_ASSIGN(SeekPlan plan, timeline_.plan(t, wanted_bands()));
    std::vector<ByteRange> out;
    for (std::size_t c : plan.chain) append_fetch_ranges(timeline_.entries()[c], wanted_bands(), out);
    return out;
}

Status KeyframeDeltaReader::fetch_bands(const ChunkIndex& e, KeyframeDeltaWorkspace& ws,
                                        std::vector<ShBandRecord>& bands) const {
    bands.clear();
    const int want = wanted_bands();
    for (int b = 1; b <= want; ++b) {
        const ChunkIndex::Band* entry = nullptr;
        for (const ChunkIndex::Band& x : e.bands)
            if (x.band == b) entry = &x;
        if (!entry) break;  // the decoder names a band it needs and does not have
        FOURDGS_TRY(fetch(entry->offset, entry->length, ws.bands[b - 1]));
        FOURDGS_ASSIGN(RecordView br, parse_record(ws.bands[b - 1], entry->offset));
        if (br.opcode != op::sh_band || br.total_length() != entry->length)
            return index_mismatch("bands", "band " + std::to_string(b) + " range at byte " +
                                               std::to_string(entry->offset) +
                                               " does not frame an SH Band Stream record",
                                  entry->offset);
        FOURDGS_ASSIGN(ShBandRecord rec, parse_sh_band(br));
        if (rec.band != b)
            return index_mismatch("bands", "the index names band " + std::to_string(b) +
                                               ", the record holds band " +
                                               std::to_string(rec.band),
                                  entry->offset);
        bands.push_back(rec);
    }
    return ok_status();
}

Status KeyframeDeltaReader::state_bins_at(double t, KeyframeDeltaWorkspace& ws,
                                          StateInfo* info) const {
    const SceneInfo& sc = scene();
    FOURDGS_ASSIGN(SeekPlan plan, timeline_.plan(t, wanted_bands()));
    FOURDGS_ASSIGN(std::vector<ByteRange> ranges, fetch_ranges(t));
    FOURDGS_TRY(source_->prefetch(ranges));  // the whole chain in one round trip when remote
    const std::vector<ChunkIndex>& ix = timeline_.entries();
    ChunkDecodeOptions decode = options_.decode;
    decode.max_sh_degree = wanted_bands();
    ws.population.reset(wanted_bands());
    std::vector<ShBandRecord> bands;
    std::uint32_t reference_level = 0;
    for (std::size_t c : plan.chain) {
        const ChunkIndex& e = ix[c];
        const KeyframeIndexFields& k = *e.keyframe;
        FOURDGS_TRY(fetch(e.chunk_offset, e.chunk_length, ws.record));
        FOURDGS_ASSIGN(RecordView r, parse_record(ws.record, e.chunk_offset));
        const std::uint8_t expect = k.chunk_kind == kChunkKindKeyframe ? op::chunk : op::delta_chunk;
        if (r.opcode != expect)
            return index_mismatch("chunk_kind",
                                  "chunk_kind " + std::to_string(k.chunk_kind) + " names a " +
                                      opcode_name(expect) + " but byte " +
                                      std::to_string(e.chunk_offset) + " holds a " +
                                      opcode_name(r.opcode) + " record",
                                  e.chunk_offset);
        if (r.total_length() != e.chunk_length)
            return index_mismatch("chunk_length", "the index says " +
                                                      std::to_string(e.chunk_length) +
                                                      " bytes, the record is " +
                                                      std::to_string(r.total_length()),
                                  e.chunk_offset);
        if (r.opcode == op::chunk) {
            FOURDGS_ASSIGN(ChunkRecord ch, parse_chunk(r));
            if (ch.count != e.gaussian_count)
                return index_mismatch("gaussian_count",
                                      "the index says " + std::to_string(e.gaussian_count) +
                                          ", the Chunk holds " + std::to_string(ch.count),
                                      e.chunk_offset);
            if (ch.t0 != e.t0 || ch.t1 != e.t1)
                return index_mismatch("t0/t1", "the index says " + interval(e.t0, e.t1) +
                                                   ", the Chunk says " + interval(ch.t0, ch.t1),
                                      e.chunk_offset);
            FOURDGS_TRY(fetch_bands(e, ws, bands));
            FOURDGS_TRY(decode_chunk_bins(sc, ch, bands, decode, ws.keyframe, ws.scratch));
            FOURDGS_TRY(ws.population.assign_keyframe(ws.keyframe,
                                                      {e.chunk_offset, ch.t0, ch.t1, false}));
            reference_level = ch.level;
        } else {
            FOURDGS_ASSIGN(DeltaChunk d, parse_delta_chunk(r));
            const ChunkRef ref{e.chunk_offset, d.t0, d.t1, true};
            if (d.t0 != e.t0 || d.t1 != e.t1)
                return index_mismatch("t0/t1", "the index says " + interval(e.t0, e.t1) +
                                                   ", the Delta Chunk says " +
                                                   interval(d.t0, d.t1),
                                      e.chunk_offset);
            const std::uint64_t sum =
                std::uint64_t{d.update_count} + d.birth_count + d.death_count;
            if (sum != e.gaussian_count)
                return index_mismatch("gaussian_count",
                                      "the index says " + std::to_string(e.gaussian_count) +
                                          ", the Delta Chunk's update + birth + death counts are " +
                                          std::to_string(sum),
                                      e.chunk_offset);
            if (d.delta_mode != k.delta_mode)
                return index_mismatch("delta_mode", "the index says " +
                                                        std::to_string(k.delta_mode) +
                                                        ", the Delta Chunk says " +
                                                        std::to_string(d.delta_mode),
                                      e.chunk_offset);
            if (d.reference_offset != k.reference_offset)
                return index_mismatch("reference_offset",
                                      "the index says " + std::to_string(k.reference_offset) +
                                          ", the Delta Chunk says " +
                                          std::to_string(d.reference_offset),
                                      e.chunk_offset);
            if (d.keyframe_offset != k.keyframe_offset)
                return index_mismatch("keyframe_offset",
                                      "the index says " + std::to_string(k.keyframe_offset) +
                                          ", the Delta Chunk says " +
                                          std::to_string(d.keyframe_offset),
                                      e.chunk_offset);
            if (d.depth != k.depth)
                return index_mismatch("depth", "the index says " + std::to_string(k.depth) +
                                                   ", the Delta Chunk says " +
                                                   std::to_string(d.depth),
                                      e.chunk_offset);
            if (d.level != reference_level)
                return malformed(refusal::kLevelMismatch,
                                 describe(ref) + " has level " + std::to_string(d.level) +
                                     " but its reference at byte " +
                                     std::to_string(d.reference_offset) + " has level " +
                                     std::to_string(reference_level) + " (§11.6)",
                                 e.chunk_offset);
            FOURDGS_TRY(fetch_bands(e, ws, bands));
            FOURDGS_TRY(decode_delta_bins(sc, d, bands, decode, ws.delta, ws.scratch));
            FOURDGS_TRY(ws.population.apply(ws.delta, ref, options_.decode.limits.max_gaussians_per_chunk));
            reference_level = d.level;
        }
        if (ws.population.size() != k.live_count)
            return index_mismatch("live_count",
                                  "the index says " + std::to_string(k.live_count) +
                                      " gaussians are live over " + interval(e.t0, e.t1) +
                                      ", composition gives " +
                                      std::to_string(ws.population.size()),
                                  e.chunk_offset);
    }
    ws.population.materialize(ws.composed);
    if (info) {
        const ChunkIndex& e = ix[plan.current];
        const KeyframeIndexFields& k = *e.keyframe;
        *info = StateInfo{e.chunk_offset, e.chunk_length, e.t0, e.t1, reference_level,
                          k.chunk_kind, k.delta_mode, k.depth, k.reference_offset,
                          k.keyframe_offset, ws.population.size(), ws.composed.sh_bands};
    }
    return ok_status();
}

Status KeyframeDeltaReader::state_at(double t, GaussianBlock& out, KeyframeDeltaWorkspace& ws,
                                     StateInfo* info) const {
    FOURDGS_TRY(state_bins_at(t, ws, info));
    out.clear();
    dequantize(scene(), ws.composed, out);
    return ok_status();
}

Status KeyframeDeltaReader::state_at(double t, GaussianBlock& out, StateInfo* info) {
    return state_at(t, out, *own_, info);
}

// ---------------------------------------------------------------------------------------------
// KeyframeDeltaStream.

namespace {

Error truncated_at(std::uint64_t offset, std::string what) {
    return make_error(ErrorKind::truncated, refusal::kTruncated, std::move(what), offset);
}


}  // namespace

KeyframeDeltaStream::KeyframeDeltaStream(ByteSource& source, ReaderOptions options)
    : source_(&source), options_(keyframe_delta_options(options)), builder_(options_) {}

Result<bool> KeyframeDeltaStream::read_record(Pending& slot) {
    slot.valid = false;
    slot.bytes.clear();
    std::uint8_t head[kRecordHeaderSize];
    FOURDGS_ASSIGN(std::size_t got, source_->read_at(position_, head));
    if (got == 0) return false;
    if (got < kRecordHeaderSize)
        return truncated_at(position_, "the file ends inside a record header (" +
                                           std::to_string(got) + " of 9 bytes)");
    std::uint64_t length;
    std::memcpy(&length, head + 1, 8);
    const std::uint64_t record_at = position_;
    if (auto size = source_->size(); size && length > *size - std::min(*size, record_at + 9))
        return truncated_at(record_at, opcode_name(head[0]) + " record declares content_length " +
                                           std::to_string(length) + " but only " +
                                           std::to_string(*size - std::min(*size, record_at + 9)) +
                                           " bytes remain in the file");
    if (length > options_.max_record_bytes)
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          opcode_name(head[0]) + " record declares content_length " +
                              std::to_string(length) + ", over the configured limit of " +
                              std::to_string(options_.max_record_bytes),
                          record_at);
    slot.bytes.assign(head, head + kRecordHeaderSize);
    FOURDGS_ASSIGN(std::uint64_t body, read_growing(*source_, record_at + 9, length, slot.bytes));
    if (body < length)
        return truncated_at(record_at, opcode_name(head[0]) + " record at byte " +
                                           std::to_string(record_at) + " is cut after " +
                                           std::to_string(body) + " of " +
                                           std::to_string(length) + " content bytes");
    position_ = record_at + 9 + length;
    FOURDGS_ASSIGN(slot.view, parse_record(slot.bytes, record_at));
    slot.valid = true;
    return true;
}

Status KeyframeDeltaStream::open() {
    if (opened_) return ok_status();
    std::uint8_t magic[kMagicSize];
    FOURDGS_ASSIGN(std::size_t got, source_->read_at(0, magic));
    FOURDGS_TRY(check_magic(std::span(magic, got), 0));
    position_ = kMagicSize;
    opened_ = true;
    FOURDGS_ASSIGN(bool have, advance_to_state());
    (void)have;
    return ok_status();
}

Status KeyframeDeltaStream::absorb(const Pending& rec) {
    const RecordView& r = rec.view;
    if (r.opcode == op::footer) return finish_footer(rec);
    if (r.opcode == op::sh_band)
        return malformed(refusal::kOrphanShBand,
                         "an SH Band Stream record that does not follow a Chunk or Delta Chunk "
                         "(§5.7)",
                         r.offset);
    summary_run_.add(r.opcode, r.offset, rec.bytes);  // §4.5
    FOURDGS_TRY(builder_.add(r));
    if (r.opcode == op::header)
        FOURDGS_TRY(require_keyframe_delta(builder_.scene().header, r.content_offset()));
    if (r.opcode == op::chunk_index)
        FOURDGS_TRY(check_index_entry(builder_.scene().index.back(), r.offset));
    return ok_status();
}

Status KeyframeDeltaStream::check_index_entry(const ChunkIndex& e, std::uint64_t at) const {
    auto it = std::lower_bound(seen_.begin(), seen_.end(), e.chunk_offset,
                               [](const SeenState& s, std::uint64_t off) { return s.offset < off; });
    if (it == seen_.end() || it->offset != e.chunk_offset)
        return index_mismatch("chunk_offset", "no state chunk starts at byte " +
                                                  std::to_string(e.chunk_offset),
                              at);
    if (it->length != e.chunk_length)
        return index_mismatch("chunk_length", "the index says " + std::to_string(e.chunk_length) +
                                                  " bytes, the record is " +
                                                  std::to_string(it->length),
                              at);
    if (it->gaussian_count != e.gaussian_count)
        return index_mismatch("gaussian_count",
                              "the index says " + std::to_string(e.gaussian_count) +
                                  ", the record's count is " + std::to_string(it->gaussian_count),
                              at);
    if (it->t0 != e.t0 || it->t1 != e.t1)
        return index_mismatch("t0/t1", "the index says " + interval(e.t0, e.t1) +
                                           ", the record says " + interval(it->t0, it->t1),
                              at);
    if (it->bands.size() != e.bands.size())
        return index_mismatch("band_count", "the index names " + std::to_string(e.bands.size()) +
                                                " band(s), the record is followed by " +
                                                std::to_string(it->bands.size()),
                              at);
    for (std::size_t i = 0; i < e.bands.size(); ++i)
        if (it->bands[i] != e.bands[i])
            return index_mismatch("bands", "entry " + std::to_string(i) + " names band " +
                                               std::to_string(e.bands[i].band) + " at [" +
                                               std::to_string(e.bands[i].offset) + ", +" +
                                               std::to_string(e.bands[i].length) +
                                               ") but the record there differs",
                                  at);
    if (!e.keyframe)
        return malformed(refusal::kMissingKeyframeIndexFields,
                         "the Chunk Index entry for byte " + std::to_string(e.chunk_offset) +
                             " lacks the six keyframe-delta fields (§5.8)",
                         at);
    const KeyframeIndexFields& k = *e.keyframe;
    auto field = [&](const char* name, std::uint64_t index_value,
                     std::uint64_t record_value) -> Status {
        if (index_value == record_value) return ok_status();
        return index_mismatch(name, "the index says " + std::to_string(index_value) +
                                        ", the record implies " + std::to_string(record_value),
                              at);
    };
    FOURDGS_TRY(field("chunk_kind", k.chunk_kind, it->kind));
    FOURDGS_TRY(field("delta_mode", k.delta_mode, it->delta_mode));
    FOURDGS_TRY(field("reference_offset", k.reference_offset, it->reference_offset));
    FOURDGS_TRY(field("keyframe_offset", k.keyframe_offset, it->keyframe_offset));
    FOURDGS_TRY(field("depth", k.depth, it->depth));
    FOURDGS_TRY(field("live_count", k.live_count, it->live));
    return ok_status();
}

Status KeyframeDeltaStream::finish_footer(const Pending& rec) {
    // A file without chunks reaches its Footer unsealed: the same rules hold for it (§5.4's
    // effective window table, the cross-record checks), as they do in the indexed reader.
    FOURDGS_TRY(builder_.seal(rec.view.offset));
    FOURDGS_ASSIGN(Footer f, parse_footer(rec.view));
    SceneInfo& scene = builder_.scene();
    scene.footer = f;
    FOURDGS_TRY(summary_run_.check(f, rec.view.content_offset(), options_.verify_summary_crc,
                                   scene.summary_crc_verified));
    std::uint8_t magic[kMagicSize];
    FOURDGS_ASSIGN(std::size_t got, source_->read_at(position_, magic));
    if (got < kMagicSize)
        return truncated_at(position_, "the file ends inside the trailing magic (" +
                                           std::to_string(got) + " of 8 bytes)");
    FOURDGS_TRY(check_magic(std::span(magic, got), position_));
    position_ += kMagicSize;
    finished_ = true;
    return ok_status();
}

Result<bool> KeyframeDeltaStream::advance_to_state() {
    chunk_slot_.valid = false;
    while (!finished_) {
        if (!lookahead_.valid) {
            auto r = read_record(lookahead_);
            if (!r.ok()) {
                truncation_ = r.error();
                return std::move(r).error();
            }
            if (!*r) {
                truncation_ = truncated_at(position_, "the file ends at byte " +
                                                          std::to_string(position_) +
                                                          " without a Footer");
                return *truncation_;
            }
        }
        const std::uint8_t opcode = lookahead_.view.opcode;
        if (opcode == op::chunk || opcode == op::delta_chunk) {
            FOURDGS_TRY(builder_.seal(lookahead_.view.offset));
            summary_run_.end();
            std::swap(chunk_slot_, lookahead_);
            lookahead_.valid = false;
            return true;
        }
        lookahead_.valid = false;
        FOURDGS_TRY(absorb(lookahead_));
    }
    return false;
}

Status KeyframeDeltaStream::compose_state(const RecordView& r, std::span<const ShBandRecord> bands,
                                          const ChunkDecodeOptions& decode, SeenState& seen) {
    const SceneInfo& sc = builder_.scene();
    double t0, t1;
    ChunkRef ref{r.offset, 0, 0, r.opcode == op::delta_chunk};
    std::optional<ChunkRecord> chunk;
    std::optional<DeltaChunk> delta;
    if (r.opcode == op::chunk) {
        FOURDGS_ASSIGN(chunk, parse_chunk(r));
        t0 = chunk->t0;
        t1 = chunk->t1;
    } else {
        FOURDGS_ASSIGN(delta, parse_delta_chunk(r));
        t0 = delta->t0;
        t1 = delta->t1;
    }
    ref.t0 = t0;
    ref.t1 = t1;
    // §11.1 in file order: each state chunk starts where the previous one ended.
    if (!(std::isfinite(t0) && std::isfinite(t1) && t0 <= t1))
        return malformed(refusal::kNonTilingChunks,
                         describe(ref) + " has an interval that is not finite and ordered (§11.1)",
                         r.offset);
    const double prev_t1 = seen_.empty() ? 0.0 : seen_.back().t1;
    if (t0 != prev_t1) {
        const std::string_view which = t0 > prev_t1 ? refusal::kTimelineGap : refusal::kNonTilingChunks;
        if (seen_.empty())
            return malformed(which,
                             "the timeline starts at 0 but its first state chunk (byte " +
                                 std::to_string(r.offset) + ") covers " + interval(t0, t1) +
                                 " (§11.1)",
                             r.offset);
        return malformed(which,
                         "state chunks " + interval(seen_.back().t0, seen_.back().t1) + " and " +
                             interval(t0, t1) + " (byte " + std::to_string(r.offset) + ") " +
                             (t0 > prev_t1 ? "leave a gap" : "overlap") + " (§11.1)",
                         r.offset);
    }
    seen.offset = r.offset;
    seen.length = r.total_length();
    seen.t0 = t0;
    seen.t1 = t1;
    const int want = wanted_bands_for(sc, options_);
    const std::uint64_t max_pop = options_.decode.limits.max_gaussians_per_chunk;

    if (chunk) {
        FOURDGS_TRY(decode_chunk_bins(sc, *chunk, bands, decode, bins_, scratch_));
        ComposedPopulation next;
        next.reset(want);
        FOURDGS_TRY(next.assign_keyframe(bins_, ref));
        FOURDGS_TRY(next.succeed(std::move(current_), ref));
        current_ = std::move(next);
        keyframe_ = current_;
        have_keyframe_ = true;
        keyframe_offset_ = r.offset;
        keyframe_level_ = previous_level_ = chunk->level;
        previous_depth_ = 0;
        seen.kind = kChunkKindKeyframe;
        seen.delta_mode = 0;
        seen.depth = 0;
        seen.reference_offset = 0;
        seen.keyframe_offset = r.offset;
        seen.gaussian_count = chunk->count;
    } else {
        const DeltaChunk& d = *delta;
        if (d.reference_offset >= r.offset)
            return malformed(refusal::kForwardReference,
                             describe(ref) + " has reference_offset " +
                                 std::to_string(d.reference_offset) +
                                 ", not before its own offset; references point backwards only "
                                 "(§5.18)",
                             r.offset);
        auto it = std::lower_bound(
            seen_.begin(), seen_.end(), d.reference_offset,
            [](const SeenState& s, std::uint64_t off) { return s.offset < off; });
        const bool names_state = it != seen_.end() && it->offset == d.reference_offset;
        if (!have_keyframe_ || (!names_state && (seen_.empty() || d.reference_offset < seen_.front().offset)))
            return malformed(refusal::kChainWithoutKeyframe,
                             describe(ref) + " references byte " +
                                 std::to_string(d.reference_offset) +
                                 " but no keyframe precedes it; there is no absolute state to "
                                 "compose onto (§11.8)",
                             r.offset);
        if (!names_state)
            return malformed(refusal::kBrokenReference,
                             describe(ref) + " has reference_offset " +
                                 std::to_string(d.reference_offset) +
                                 ", which names no state chunk before it (§11.8)",
                             r.offset);
        if (d.keyframe_offset != keyframe_offset_)
            return malformed(refusal::kChainWithoutKeyframe,
                             describe(ref) + " names keyframe_offset " +
                                 std::to_string(d.keyframe_offset) +
                                 " but the keyframe at the head of its GOP is at byte " +
                                 std::to_string(keyframe_offset_) + " (§11.8)",
                             r.offset);
        const bool chained = d.delta_mode == kDeltaModeChained;
        const std::uint64_t expected_ref = chained ? seen_.back().offset : keyframe_offset_;
        if (d.reference_offset != expected_ref)
            return malformed(refusal::kDeltaModeMismatch,
                             describe(ref) + " has delta_mode " + std::to_string(d.delta_mode) +
                                 (chained ? " (chained)" : " (keyframe-referenced)") +
                                 ", so its reference is byte " + std::to_string(expected_ref) +
                                 ", but its reference_offset is " +
                                 std::to_string(d.reference_offset) + " (§5.18)",
                             r.offset);
        const std::uint32_t ref_level = chained ? previous_level_ : keyframe_level_;
        if (d.level != ref_level)
            return malformed(refusal::kLevelMismatch,
                             describe(ref) + " has level " + std::to_string(d.level) +
                                 " but its reference at byte " +
                                 std::to_string(d.reference_offset) + " has level " +
                                 std::to_string(ref_level) + " (§11.6)",
                             r.offset);
        const std::uint32_t walked = chained ? previous_depth_ + 1u : 1u;
        if (d.depth != walked)
            return malformed(refusal::kDepthMismatch,
                             describe(ref) + " declares depth " + std::to_string(d.depth) +
                                 " but its chain composes " + std::to_string(walked) +
                                 " Delta Chunk record(s) (§11.8)",
                             r.offset);
        FOURDGS_TRY(decode_delta_bins(sc, d, bands, decode, delta_, scratch_));
        if (chained) {
            FOURDGS_TRY(current_.apply(delta_, ref, max_pop));
        } else {
            ComposedPopulation next = keyframe_;
            FOURDGS_TRY(next.apply(delta_, ref, max_pop));
            FOURDGS_TRY(next.succeed(std::move(current_), ref));
            current_ = std::move(next);
        }
        previous_level_ = d.level;
        previous_depth_ = d.depth;
        seen.kind = kChunkKindDelta;
        seen.delta_mode = d.delta_mode;
        seen.depth = d.depth;
        seen.reference_offset = d.reference_offset;
        seen.keyframe_offset = d.keyframe_offset;
        seen.gaussian_count = d.update_count + d.birth_count + d.death_count;
    }
    seen.live = current_.size();
    return ok_status();
}

Result<bool> KeyframeDeltaStream::next_state_bins(ChunkBins& out, StateInfo* info) {
    if (!opened_) FOURDGS_TRY(open());
    if (truncation_ && !chunk_slot_.valid) return *truncation_;
    if (!chunk_slot_.valid) {
        FOURDGS_ASSIGN(bool have, advance_to_state());
        if (!have) {
            // The clean end: the last state chunk must end at the Header's duration (§11.1).
            const double duration = builder_.scene().header.duration_sec;
            const double end = seen_.empty() ? 0.0 : seen_.back().t1;
            if (end != duration)
                return malformed(end < duration ? refusal::kTimelineGap : refusal::kNonTilingChunks,
                                 (seen_.empty() ? std::string("no state chunk")
                                                : "the last state chunk " +
                                                      interval(seen_.back().t0, seen_.back().t1)) +
                                     " ends the timeline at " + num(end) +
                                     " but the Header's duration is " + num(duration) +
                                     " (§11.1)",
                                 seen_.empty() ? kNoOffset : seen_.back().offset);
            return false;
        }
    }
    // The SH band records follow their chunk directly (§5.7, §5.18).
    bands_.clear();
    std::optional<Error> cut;
    for (std::size_t i = 0; i < band_slots_.size(); ++i) {
        auto r = read_record(lookahead_);
        if (!r.ok()) {
            if (r.error().kind != ErrorKind::truncated) return std::move(r).error();
            cut = r.error();
            break;
        }
        if (!*r) {
            cut = truncated_at(position_, "the file ends at byte " + std::to_string(position_) +
                                              " without a Footer");
            break;
        }
        if (lookahead_.view.opcode != op::sh_band) break;
        std::swap(band_slots_[i], lookahead_);
        lookahead_.valid = false;
        FOURDGS_ASSIGN(ShBandRecord b, parse_sh_band(band_slots_[i].view));
        bands_.push_back(b);
    }
    ChunkDecodeOptions decode = options_.decode;
    decode.max_sh_degree = wanted_bands_for(builder_.scene(), options_);
    if (cut) {
        // Trailing-band recovery (§11.10, M100): keep the whole bands that arrived, in order.
        int whole = 0;
        while (whole < static_cast<int>(bands_.size()) && bands_[whole].band == whole + 1) ++whole;
        decode.max_sh_degree = std::min(decode.max_sh_degree, whole);
        truncation_ = *cut;
    }
    chunk_slot_.valid = false;
    SeenState seen;
    FOURDGS_TRY(compose_state(chunk_slot_.view, bands_, decode, seen));
    for (std::size_t i = 0; i < bands_.size(); ++i)
        seen.bands.push_back({bands_[i].band, band_slots_[i].view.offset,
                              band_slots_[i].view.total_length()});
    current_.materialize(out);
    if (info)
        *info = StateInfo{seen.offset, seen.length, seen.t0, seen.t1, previous_level_, seen.kind,
                          seen.delta_mode, seen.depth, seen.reference_offset,
                          seen.keyframe_offset, seen.live, out.sh_bands};
    seen_.push_back(std::move(seen));
    return true;
}

Result<bool> KeyframeDeltaStream::next_state(GaussianBlock& out, StateInfo* info) {
    FOURDGS_ASSIGN(bool have, next_state_bins(bins_, info));
    if (!have) return false;
    out.clear();
    dequantize(builder_.scene(), bins_, out);
    return true;
}

}  // namespace fourdgs
