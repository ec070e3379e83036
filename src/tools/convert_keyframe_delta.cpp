// `convert --tracked --model keyframe-delta` (convert.hpp, §11): the tracked frames as states
// with stable gaussian ids, handed to the keyframe-delta writer (keyframe_writer.hpp).
#include "convert_parts.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/quantize.hpp"
#include "rotation_box.hpp"

namespace fourdgs::convert_parts {
namespace {

// The SH bytes the writer stores for gaussian g of `f` (§6.5 at the written depths), which decide
// whether a tracked gaussian stays one incarnation (keyframe_writer.hpp).
void sh_bytes(const PlyCloud& f, std::size_t g, const std::array<std::uint8_t, 3>& depths,
              std::vector<std::uint8_t>& out) {
    const int per = sh_coeffs_per_component(f.sh_degree);
    out.clear();
    for (int c = 0; c < 3; ++c)
        for (int k = 0; k < per; ++k) {
            int band = 1;
            while (sh_band_first(band + 1) <= k) ++band;
            const std::uint8_t b8 =
                sh_byte(f.sh[g * 3 * per + static_cast<std::size_t>(c) * per + k]);
            out.push_back(depths[band - 1] < 8 ? sh_requantize(b8, depths[band - 1]) : b8);
        }
}

std::vector<std::uint32_t> morton_ranks(const PlyCloud& f);

// Ids for a plan's shards: every GOP g gives gaussian i the id g × n + its rank in the Morton order
// of the GOP's first frame (neighbours get near ids, as without a plan), and a gaussian whose SH
// bytes change inside a GOP (a new incarnation for the writer, §11.7) takes the next id of that
// GOP's own range past every GOP's base ids. Depends on nothing outside the GOP, so each shard
// gives the ids a whole-sequence encode gives.
Status plan_ids(std::span<const PlyCloud> frames, const Resolved& r,
                std::vector<std::vector<std::uint32_t>>& ids, std::uint64_t& distinct) {
    const std::uint64_t n = frames.front().count, k = r.keyframe_every;
    const std::uint64_t gops = (r.total + k - 1) / k;
    if (gops * n > std::uint64_t{1} << 32)
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          std::to_string(gops) + " GOPs of " + std::to_string(n) +
                              " gaussians need more than 2^32 gaussian ids; raise keyframe_every");
    std::array<std::uint8_t, 3> depths{8, 8, 8};
    for (std::size_t b = 0; b < r.writer.sh_depths.size() && b < 3; ++b)
        depths[b] = r.writer.sh_depths[b];
    std::vector<std::uint8_t> prev_sh, cur_sh;
    std::vector<std::uint64_t> id(n);
    std::uint64_t fresh = 0;
    distinct = 0;
    ids.assign(frames.size(), {});
    for (std::size_t s = 0; s < frames.size(); ++s) {
        const std::uint64_t f = r.first + s, g = f / k;
        ids[s].resize(n);
        if (f % k == 0) {
            const std::vector<std::uint32_t> rank = morton_ranks(frames[s]);
            for (std::uint64_t i = 0; i < n; ++i) id[i] = g * n + rank[i];
            fresh = gops * n + g * n * (k - 1);
            distinct += n;
        } else if (frames.front().sh_degree > 0) {
            for (std::uint64_t i = 0; i < n; ++i) {
                sh_bytes(frames[s - 1], i, depths, prev_sh);
                sh_bytes(frames[s], i, depths, cur_sh);
                if (prev_sh == cur_sh) continue;
                if (fresh > 0xFFFFFFFFull)
                    return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                                      "frame " + std::to_string(f) +
                                          ": no gaussian id is left for a new incarnation");
                id[i] = fresh++;
                ++distinct;
            }
        }
        for (std::uint64_t i = 0; i < n; ++i) ids[s][i] = static_cast<std::uint32_t>(id[i]);
    }
    return ok_status();
}

// Gaussian g's rank in the Morton order of frame `f`'s positions (ties by index): ids that run
// through space (tracked_ids).
std::vector<std::uint32_t> morton_ranks(const PlyCloud& f) {
    const auto box = frames_aabb(std::span<const PlyCloud>(&f, 1));
    const double side = std::max(largest_side(box), 1e-30);
    std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed(f.count);
    for (std::size_t g = 0; g < f.count; ++g) {
        std::uint64_t code = 0;
        for (int c = 0; c < 3; ++c) {
            const double u = std::clamp((f.position[g * 3 + c] - box[c]) / side, 0.0, 1.0);
            code |= morton_spread3(static_cast<std::uint64_t>(u * 0x1FFFFF)) << c;
        }
        keyed[g] = {code, static_cast<std::uint32_t>(g)};
    }
    std::sort(keyed.begin(), keyed.end());
    std::vector<std::uint32_t> rank(f.count);
    for (std::size_t i = 0; i < keyed.size(); ++i)
        rank[keyed[i].second] = static_cast<std::uint32_t>(i);
    return rank;
}

// Colour held while it stays within the tolerance (splat4d's "deadband"). A tracked gaussian's
// colour often wobbles by a level or two around one value (Dynamic 3D Gaussians' "soft-fixed"
// colours); on a grid whose pitch is twice the tolerance, a wobble across a bin edge is a change,
// and one changed colour puts the colour stream into a delta for every row it updates (§11: one
// update group a delta). So keyframe-delta's colour grid is finer (kHeldColourLattice,
// grid_plan.hpp) and each gaussian keeps one bin of it for the GOP wherever one lies within the
// tolerance of every frame's colour — a bin of the coarse lattice (every kHeldColourLattice-th,
// the bins of a grid of pitch twice the tolerance) where one does, so that still colours cost
// what they did — and otherwise the bin it holds until a frame strays past the tolerance, then
// the nearest. Chosen from the GOP's frames alone (reset at each keyframe), so both writer
// passes, a pass that reads the GOP again and a plan's shards choose the same bins. Off on a grid
// of pitch twice the tolerance (a plan's written before): no bin but the nearest is within it.
class ColourHold {
public:
    // On the grid `grid` (none: off) at the end-to-end tolerance `tolerance`, for `n` gaussians.
    ColourHold(const QuantBounds& tolerance, const std::optional<FixedGrid>& grid, std::size_t n)
        : step_(grid ? 2 * grid->bounds.rgb : 0),
          // A hair inside the tolerance: a reader composes the colour in f32.
          tol_(tolerance.rgb * (1 - 1e-6)),
          lattice_(step_ > 0 ? static_cast<int>(std::lround(2 * tolerance.rgb / step_)) : 0),
          lo_(3 * n), hi_(3 * n), bin_(3 * n) {}

    bool active() const { return step_ > 0 && tol_ > 0 && lattice_ > 1; }

    // A GOP starts: each of its frames is given to widen, then choose.
    void begin_gop() {
        std::fill(lo_.begin(), lo_.end(), kInf);
        std::fill(hi_.begin(), hi_.end(), -kInf);
    }
    // A frame's colours (4 a gaussian), clamped into [0, 1] as the writer takes them; gaussian g
    // of the hold is the frame's keep[g] (keep empty: g).
    void widen(std::span<const float> color, std::span<const std::uint32_t> keep = {}) {
        widen_colour_range(color, keep, lo_, hi_);
    }
    // Every frame of the GOP given at once: their range, widened as widen does.
    void widen_by(std::span<const float> lo, std::span<const float> hi) {
        std::copy(lo.begin(), lo.end(), lo_.begin());
        std::copy(hi.begin(), hi.end(), hi_.begin());
    }
    void choose() {
        for (std::size_t i = 0; i < lo_.size(); ++i) {
            const double mid = (double(lo_[i]) + double(hi_[i])) / 2 / step_;
            // The bins within the tolerance of every frame's colour: [a, b] (none where a > b:
            // then hold moves it on the first frame it misses).
            const double a = std::max(0.0, std::ceil((hi_[i] - tol_) / step_));
            const double b = std::min(top_, std::floor((lo_[i] + tol_) / step_));
            double pick = a <= b ? std::clamp(std::round(mid), a, b) : std::round(mid);
            const double coarse = lattice_ * std::round(mid / lattice_);
            bool on_lattice = false;
            for (double c : {coarse, coarse - lattice_, coarse + lattice_})
                if (a <= c && c <= b &&
                    (!on_lattice || std::fabs(c - mid) < std::fabs(pick - mid))) {
                    pick = c;
                    on_lattice = true;
                }
            bin_[i] = static_cast<std::int32_t>(pick);
        }
    }
    // The bins choose() took, and those bins again (the same GOP's choice, made before).
    const std::vector<std::int32_t>& chosen() const { return bin_; }
    void choose_again(const std::vector<std::int32_t>& bins) { bin_ = bins; }
    // This frame's colours (4 a gaussian) replaced by the held bins' (each moved to the nearest
    // bin where the frame strays past the tolerance).
    void hold(std::vector<float>& color) {
        for (std::size_t i = 0; i < bin_.size(); ++i) {
            float& v = color[i / 3 * 4 + i % 3];
            if (std::fabs(bin_[i] * step_ - v) > tol_)
                bin_[i] = static_cast<std::int32_t>(std::lround(v / step_));
            // Within [0, 1] as the writer takes it; the top bin's colour may lie past 1 (its
            // nearest bin), and 1 stands for it.
            v = std::clamp(static_cast<float>(bin_[i] * step_), 0.0f, 1.0f);
        }
    }

private:
    double step_, tol_;
    int lattice_;
    double top_ = step_ > 0 ? std::round(1 / step_) : 0;  // the bin of colour 1
    std::vector<float> lo_, hi_;
    std::vector<std::int32_t> bin_;
};

// The rotation of a gaussian stored in the scene's frame (no object), snapped to a coarser
// sub-lattice of the rotation grid where the tolerance allows. Riders need a rotation grid much
// finer than the tolerance (their held rotation spends most of it: rigid.hpp), and the grid is
// one for the file (§5.3), so every still gaussian restated by every keyframe paid for bins
// it does not need. Its three stored bins are now multiples of the largest power of two L (8,
// 4, 2) whose decoded quaternion (§6.4, as a reader composes it) is within the tolerance of the
// input and keeps the same omitted component: the low bits of the bins are zero and the
// keyframes' rotation stream entropy-codes as on a grid L times coarser. Per frame and per
// gaussian alone, so both writer passes, both paths and a plan's shards snap alike; gaussians of
// an object are left as they are (the pose turns their grid error, parts_share).
class RotationSnap {
public:
    RotationSnap(const Resolved& r)
        // A hair inside the tolerance: a reader composes the rotation in f32.
        : tol_(r.tolerance.rot - 1e-6),
          strict_(r.rot_levels ? levels_half_width(*r.rot_levels) - 1e-6 : tol_),
          levels_(r.rot_levels.has_value()),
          rounding_(r.rot_levels_floor ? rotation_box::Rounding::floor : rotation_box::Rounding::nearest) {
        const std::optional<FixedGrid>& grid = r.writer.grid;
        if (!grid || !(grid->bounds.rot > 0)) return;
        grid_.step_rot = 2 * grid->bounds.rot;
        // rot_levels with parts: the grid is kLevelsRidersGridShare times finer than the box
        // (riders' held rotations need it), so scene-frame rotations reach as far a lattice.
        const int cap = levels_ ? static_cast<int>(levels_grid_share(r.objects != nullptr)) : 8;
        while (lattice_ < cap && 2 * lattice_ * grid->bounds.rot <= r.tolerance.rot) lattice_ *= 2;
    }

    // rot_levels: every rotation is placed inside its input's box (rotation_box.hpp), the grid's
    // own bins too.
    bool active() const { return lattice_ > 1 || levels_; }

    // `rotation` (4 a gaussian) of frame `frame` into `out`, each gaussian whose `object_of` entry
    // (empty: none) is 0 snapped. rot_levels: rotation-not-levels where the input is not on a
    // .splat's levels or is no rounding of a unit quaternion (invalid-option).
    Status snap(std::span<const float> rotation, std::span<const std::uint32_t> object_of,
                std::vector<float>& out, std::uint64_t frame) const {
        out.assign(rotation.begin(), rotation.end());
        for (std::size_t g = 0; g < rotation.size() / 4; ++g)
            if (object_of.empty() || object_of[g] == 0) FOURDGS_TRY(snap_one(&out[g * 4], frame, g));
        return ok_status();
    }

    // The same, where `out` holds the snap of `last` (the rotations of the step before, with the
    // same object_of): a gaussian whose input rotation has the same bits keeps its snapped one,
    // since a snap depends on nothing else. A tracked sequence's still gaussians are snapped once
    // a pass, not once a frame. `last` becomes `rotation`.
    Status snap_changed(std::span<const float> rotation, std::span<const std::uint32_t> object_of,
                        std::vector<std::uint32_t>& last, std::vector<float>& out,
                        std::uint64_t frame) const {
        if (last.size() != rotation.size() || out.size() != rotation.size()) {
            FOURDGS_TRY(snap(rotation, object_of, out, frame));
        } else {
            for (std::size_t g = 0; g < rotation.size() / 4; ++g) {
                if (std::memcmp(&last[g * 4], &rotation[g * 4], 4 * sizeof(float)) == 0) continue;
                std::copy_n(&rotation[g * 4], 4, &out[g * 4]);
                if (object_of.empty() || object_of[g] == 0)
                    FOURDGS_TRY(snap_one(&out[g * 4], frame, g));
            }
        }
        last.resize(rotation.size());
        std::memcpy(last.data(), rotation.data(), rotation.size() * sizeof(float));
        return ok_status();
    }

private:
    Status snap_one(float* q, std::uint64_t frame, std::size_t g) const {
        if (levels_) return place_in_box(q, frame, g);
        snap_nearest(q);
        return ok_status();
    }

    // rot_levels: the rotation on the grid inside the input's box (grid_point_in_box).
    Status place_in_box(float* q, std::uint64_t frame, std::size_t g) const {
        // Named only when refused: this runs for every rotation that changed.
        const auto who = [&] {
            return "frame " + std::to_string(frame) + " gaussian " + std::to_string(g);
        };
        if (!rotation_box::on_levels(q))
            return bad(refusal::kInvalidOption,
                       who() + ": rotation (" + detail::fmt(q[0]) + ", " + detail::fmt(q[1]) + ", " +
                           detail::fmt(q[2]) + ", " + detail::fmt(q[3]) +
                           ") is not on a .splat's 8-bit levels (b - 128) / 128, which "
                           "tolerance key rot_levels measures in (a PLY sequence has none)");
        // Within N + 1/2 levels; where the box is too shallow for the grid (the unit sphere only
        // grazes its corner), within a little more, up to the slack the tolerance declares.
        for (int widened = 0; widened <= 8; ++widened) {
            const double half = strict_ + widened * (tol_ - strict_) / 8;
            const auto placed = rotation_box::grid_point_in_box(q, half, grid_, lattice_, rounding_);
            if (placed) {
                std::copy_n(placed->data(), 4, q);
                return ok_status();
            }
        }
        return bad(refusal::kInvalidOption,
                   who() + ": rotation (" + detail::fmt(q[0]) + ", " + detail::fmt(q[1]) + ", " +
                       detail::fmt(q[2]) + ", " + detail::fmt(q[3]) + ") is not " + written_by());
    }

    // The refusal's name for how the input's bytes were made, and what else to try.
    std::string written_by() const {
        return rounding_ == rotation_box::Rounding::floor
                   ? "the truncation floor(128 q + 128) of any unit quaternion within tolerance key "
                     "rot_levels (tolerance key rot_rounding=floor)"
                   : "the rounding round(128 q + 128) of any unit quaternion within tolerance key "
                     "rot_levels (for a writer that truncates, numpy's astype(uint8): tolerance key "
                     "rot_rounding=floor)";
    }

    void snap_nearest(float* q) const {
        double x[4], norm = 0;
        for (int c = 0; c < 4; ++c) norm += double(q[c]) * q[c];
        norm = std::sqrt(norm);
        if (!(norm > 0) || !std::isfinite(norm)) return;  // the writer refuses it, as it is
        int m = 0;  // the writer's omitted component (encoding.cpp), made positive
        for (int c = 1; c < 4; ++c)
            if (std::fabs(q[c]) > std::fabs(q[m])) m = c;
        for (int c = 0; c < 4; ++c) x[c] = (q[m] < 0 ? -1 : 1) * q[c] / norm;
        for (int lattice = lattice_; lattice > 1; lattice /= 2) {
            std::int32_t bins[3];
            for (int c = 0, k = 0; c < 4; ++c)
                if (c != m)
                    bins[k++] = lattice * static_cast<std::int32_t>(
                                              std::lround(x[c] / (lattice * grid_.step_rot)));
            const std::array<double, 4> d =
                rotation_from_bins(grid_, static_cast<std::uint32_t>(m), bins);
            float f[4];
            bool omitted_largest = true;
            double off = 0;  // the largest component's difference, as a reader measures it
            for (int c = 0; c < 4; ++c) {
                f[c] = static_cast<float>(d[c]);
                if (c != m) omitted_largest = omitted_largest && std::fabs(d[c]) < d[m] - 1e-6;
                off = std::max(off, std::fabs(double(f[c]) - x[c]));
            }
            if (omitted_largest && off <= tol_) {
                std::copy_n(f, 4, q);
                return;
            }
        }
    }

    Grid grid_;
    double tol_, strict_;
    bool levels_;
    rotation_box::Rounding rounding_;
    int lattice_ = 1;
};

// Step k's state: frame `f` (its colour clamped and held into `color`, its rotations snapped into
// `rotation`) with `ids`, never fading.
KeyframeStep step_of(const PlyCloud& f, std::span<const float> color,
                     std::span<const float> rotation, std::span<const std::uint32_t> ids,
                     std::span<const float> sigma, const Resolved& r, std::uint64_t frame) {
    KeyframeStep s;
    s.t0 = r.time_of(frame);
    s.ids = ids;
    s.gaussians.count = f.count;
    s.gaussians.position = f.position;
    s.gaussians.scale = f.scale;
    s.gaussians.rotation = rotation;
    s.gaussians.color = color;
    s.gaussians.sigma_t = sigma;
    s.gaussians.sh_degree = f.sh_degree;
    s.gaussians.sh = f.sh;
    if (r.objects) s.gaussians.object_id = r.objects->object_of;
    return s;
}

// Each gaussian's object id (none: empty).
std::span<const std::uint32_t> objects_of(const Resolved& r) {
    if (!r.objects) return {};
    return r.objects->object_of;
}

// What the writer's first pass would find in the steps step_of makes of the view's frames (no
// windows, `ids`, the objects' column where there are objects), their positions' extent `box`
// measured by the caller on the same positions: the writer then asks for each frame once, not
// twice, and finds these again as it steps, refusing them where they differ (KeyframeStepFacts).
KeyframeStepFacts step_facts(const std::array<double, 6>& box, std::span<const std::uint32_t> ids,
                             const Resolved& r) {
    KeyframeStepFacts f;
    f.aabb = box;
    f.any_gaussian = f.unwindowed = !ids.empty();
    if (!ids.empty()) f.largest_id = *std::max_element(ids.begin(), ids.end());
    f.object_id = !ids.empty() && !objects_of(r).empty();
    return f;
}

// The frames' clamped colours as the GOPs hold them (ColourHold); frame i is r.first + i.
void hold_colours(std::vector<std::vector<float>>& colors, const Resolved& r) {
    if (colors.empty()) return;
    ColourHold hold(r.tolerance, r.writer.grid, colors.front().size() / 4);
    if (!hold.active()) return;
    for (std::size_t i = 0; i < colors.size(); ++i) {
        if (i == 0 || (r.first + i) % r.keyframe_every == 0) {
            hold.begin_gop();
            for (std::size_t j = i; j < colors.size(); ++j) {
                if (j > i && (r.first + j) % r.keyframe_every == 0) break;
                hold.widen(colors[j]);
            }
            hold.choose();
        }
        hold.hold(colors[i]);
    }
}

KeyframeWriterOptions writer_options(const ConvertOptions& o, const Resolved& r) {
    KeyframeWriterOptions ko;
    ko.base = r.writer;
    ko.keyframe_every = r.keyframe_every;
    // Each seek point's frame is a keyframe-referenced delta (the instant in its middle).
    if (r.seek_every != 0)
        for (std::uint64_t k = r.seek_every; k < r.end; k += r.seek_every)
            if (k % r.keyframe_every != 0)
                ko.keyframe_referenced_at.push_back(r.time_of(k) + 0.5 / r.fps);
    ko.cheaper_reference = o.cheaper_reference;
    // The few gaussians that turn in a delta where the rest only move are reborn there, where
    // that is smaller (a tracked gaussian's identity is its input index, not its file id). Not
    // for a plan's shards: their fresh ids would collide, and the plan fixes every id (plan_ids).
    ko.rebirth_turned = !r.plan;
    // As each stream's raw/delta mode: by estimate, one encoding a delta, except at effort max,
    // which encodes both references and keeps the smaller.
    ko.reference_choice = o.reference_choice.value_or(
        r.writer.effort == Effort::max ? ModeChoice::compress_both : ModeChoice::estimate);
    return ko;
}

// The riders' held rotations of a view's parts a window at a time, where a part's rider_rotation
// keeps fewer windows than its frames span (RigidOptions::every_window false): the view through
// a copy of its parts (riders and poses; no members) whose rider_rotation holds one window, the
// window of each frame stepped, obtained from that window's frames, read ahead, by the search's
// own function (held_window_rotations: the values it validated, bit for bit); the first window's
// is the search's. Memory: per such part, its riders' rotations over one window (16 B a rider a
// frame of it), not the sequence.
class WindowedRiders {
public:
    WindowedRiders(const StreamedFrames& in, const TrackedView& view) : in_(in), view_(view) {
        for (const RigidPart& p : view.parts)
            if (p.hold_window > 0 && !p.riders.empty() &&
                held_windows_kept(p) < (p.poses.size() + p.hold_window - 1) / p.hold_window)
                any_ = true;
        if (!any_) return;
        for (const RigidPart& p : view.parts)
            parts_.push_back({{}, p.riders, p.rider_rotation, p.poses, p.hold_window, p.rot_levels});
        held_.assign(parts_.size(), 0);  // each part's rider_rotation: the search's first window
        rotations_.resize(parts_.size());
        view_.parts = parts_;
    }
    const TrackedView& view() const { return view_; }

    // The rotations of frame k's windows in the view's parts, the frames ahead read into
    // `scratch` (the step's own frame, read after: no second frame held).
    Status reach(std::uint64_t k, PlyCloud& scratch) {
        if (!any_) return ok_status();
        std::vector<std::size_t> due;  // parts whose window at k is another than held
        std::uint64_t lo = k, hi = k;  // the frames to read ahead
        for (std::size_t j = 0; j < parts_.size(); ++j) {
            const RigidPart& p = parts_[j];
            if (p.hold_window == 0 || k / p.hold_window == held_[j]) continue;
            held_[j] = k / p.hold_window;
            if (held_[j] == 0) {
                parts_[j].rider_rotation = search_[j].rider_rotation;
                continue;
            }
            due.push_back(j);
            lo = std::min<std::uint64_t>(lo, held_[j] * p.hold_window);
            hi = std::max<std::uint64_t>(hi, window_end(j));
        }
        for (std::size_t j : due)
            rotations_[j].resize(parts_[j].riders.size() * 4 *
                                 (window_end(j) - held_[j] * parts_[j].hold_window));
        for (std::uint64_t at = lo; at < hi && !due.empty(); ++at) {
            FOURDGS_ASSIGN(const PlyCloud* f, in_.frame(at, scratch));
            if (f->count != in_.first.count || f->rotation.size() < f->count * 4)
                return bad(refusal::kFramesNotTracked,  // read again: changed since the scan
                           "frame " + std::to_string(at) + " holds " + std::to_string(f->count) +
                               " gaussians' rotations but frame 0 holds " +
                               std::to_string(in_.first.count));
            for (std::size_t j : due) {
                const std::uint64_t k0 = held_[j] * parts_[j].hold_window;
                if (at < k0 || at >= window_end(j)) continue;
                const std::vector<std::uint32_t>& riders = parts_[j].riders;
                float* into = rotations_[j].data() + (at - k0) * riders.size() * 4;
                for (std::size_t i = 0; i < riders.size(); ++i)
                    std::copy_n(f->rotation.begin() + riders[i] * std::size_t{4}, 4, into + i * 4);
            }
        }
        for (std::size_t j : due)
            if (!held_window_rotations(parts_[j], held_[j], rotations_[j],
                                       parts_[j].rider_rotation))
                return make_error(ErrorKind::limit, refusal::kBoundViolated,
                                  "the riders' rotations of window " + std::to_string(held_[j]) +
                                      " of part " + std::to_string(j + 1) + " were not obtained");
        // Given back at once: held only while a window's rotations are obtained, not beside
        // the writer's own peak.
        for (std::size_t j : due) std::vector<float>().swap(rotations_[j]);
        return ok_status();
    }

private:
    std::uint64_t window_end(std::size_t j) const {
        return std::min<std::uint64_t>(parts_[j].poses.size(),
                                       (held_[j] + 1) * parts_[j].hold_window);
    }
    const StreamedFrames& in_;
    TrackedView view_;
    std::span<const RigidPart> search_ = view_.parts;  // the search's parts
    bool any_ = false;
    std::vector<RigidPart> parts_;
    std::vector<std::uint64_t> held_;             // per part: the window its rider_rotation holds
    std::vector<std::vector<float>> rotations_;  // per part: its window's riders' rotations
};

void report_written(const KeyframeWriteReport& kr, Resolved& r, ConvertReport& rep) {
    r.incarnations = {kr.first_fresh_id, kr.incarnation_of};
    rep.records = 0;
    for (std::uint64_t c : kr.live_count) rep.records += c;
    rep.chunks = kr.base.chunk_count;
    rep.deltas = kr.deltas;
    rep.keyframe_referenced = kr.keyframe_referenced;
    rep.output_bytes = kr.base.bytes_written;
    rep.quantization = kr.base.quantization;
    rep.tolerance = r.tolerance;
}

}  // namespace

std::vector<std::uint32_t> tracked_ids(const PlyCloud& first) { return morton_ranks(first); }


Status convert_keyframe_delta_streamed(const StreamedFrames& in, const TrackedView& view,
                                       const ConvertOptions& o, Resolved& r, ByteSink& sink,
                                       ConvertReport& rep) {
    if (r.keyframe_every == 0)
        return bad(refusal::kInvalidOption, "keyframe_every is 0, must be >= 1");
    const PlyCloud first = view_of(in.first, in.first, view);
    // The grid on the view's aabb (size_fixed_grid), the whole frames' when the view is them.
    std::array<double, 6> box = in.aabb;
    const bool whole = whole_view(view);
    if (!whole) {
        std::vector<PlyCloud> pair(1);
        PlyCloud whole_frame;  // where the view keeps some gaussians
        bool any = false;
        for (std::uint64_t k = 0; k < in.frames; ++k) {
            if (view.keep.empty()) {  // the positions alone: all the aabb reads, in place
                FOURDGS_ASSIGN(const PlyCloud* f, in.motion(k, pair[0]));
                if (f != &pair[0]) {
                    pair[0].count = f->count;
                    pair[0].position.assign(f->position.begin(), f->position.end());
                }
                if (pair[0].count != in.first.count)  // read again: changed since the scan
                    return bad(refusal::kFramesNotTracked,
                               "frame " + std::to_string(k) + " holds " +
                                   std::to_string(pair[0].count) + " gaussians but frame 0 holds " +
                                   std::to_string(in.first.count));
                place_held(in.first, view, pair[0], k, false);
            } else {
                FOURDGS_ASSIGN(const PlyCloud* f, in.frame(k, whole_frame));
                view_into(*f, in.first, view, pair[0], k);
            }
            const auto b = frames_aabb(pair);
            if (pair[0].count == 0) continue;
            for (int c = 0; c < 3; ++c) {
                box[c] = any ? std::min(box[c], b[c]) : b[c];
                box[3 + c] = any ? std::max(box[3 + c], b[3 + c]) : b[3 + c];
            }
            any = true;
        }
        if (!any) box = {};
    }
    FOURDGS_ASSIGN(r.writer.grid,
                   size_grid(r.shape, r.tolerance, box, r.duration, 0, 0, grid_share(r)));
    const std::vector<std::uint32_t> ids = tracked_ids(first);
    const std::vector<float> sigma(first.count, kInf);
    KeyframeStepSource steps;
    for (std::uint64_t k = 0; k < in.frames; ++k) steps.t0.push_back(r.time_of(k));
    steps.facts = step_facts(box, ids, r);
    // The step's frame and colours, their storage reused from step to step; the whole frames
    // are stepped as read, a view of them through `viewed`.
    PlyCloud raw, viewed;
    std::vector<float> color;
    KeyframeStep step;
    // Each GOP's frames read once more, ahead, for the colours they hold (ColourHold), but where
    // the whole frames are one GOP: the first pass's colour range is theirs.
    ColourHold hold(r.tolerance, r.writer.grid, first.count);
    PlyCloud ahead;
    const RotationSnap snap(r);
    std::vector<float> rotation;
    std::vector<std::uint32_t> snapped_from;  // the bits `rotation` was snapped from
    const std::span<const std::uint32_t> object_of = objects_of(r);
    // The first GOP's choice, kept from the writer's first pass for its second, which starts
    // there: the frames are the same, so are the bins, and that GOP is not read ahead again (the
    // whole sequence where it has one keyframe).
    std::optional<std::vector<std::int32_t>> first_gop;
    const auto hold_gop = [&](std::uint64_t k0) -> Status {
        if (!hold.active()) return ok_status();
        if (k0 == 0 && first_gop) {
            hold.choose_again(*first_gop);
            return ok_status();
        }
        hold.begin_gop();
        // One GOP of the whole frames: every frame's range, as the first pass found it.
        if (k0 == 0 && r.keyframe_every >= in.frames && view.keep.empty() &&
            in.colour_lo.size() == 3 * first.count && in.colour_hi.size() == 3 * first.count) {
            hold.widen_by(in.colour_lo, in.colour_hi);
        } else {
            for (std::uint64_t j = k0; j < std::min(k0 + r.keyframe_every, in.frames); ++j) {
                FOURDGS_ASSIGN(const PlyCloud* frame, in.frame(j, ahead));
                hold.widen(frame->color, view.keep);
            }
        }
        hold.choose();
        if (k0 == 0) first_gop = hold.chosen();
        return ok_status();
    };
    // The riders' rotations of the window stepped (the aabb above reads positions alone).
    WindowedRiders windowed(in, view);
    steps.step = [&](std::size_t k) -> Result<const KeyframeStep*> {
        FOURDGS_TRY(windowed.reach(k, raw));
        FOURDGS_ASSIGN(const PlyCloud* frame, in.frame(k, raw));
        if (!whole && view.keep.empty() && frame == &raw) {
            place_held(in.first, windowed.view(), raw, k);  // the frame read is ours: no copy
        } else if (!whole) {
            view_into(*frame, in.first, windowed.view(), viewed, k);
            frame = &viewed;
        }
        std::uint64_t clamped = 0;  // counted once, by the caller's first pass
        if (k % r.keyframe_every == 0) FOURDGS_TRY(hold_gop(k));
        clamp_colors(*frame, clamped, color);
        if (hold.active()) hold.hold(color);
        if (snap.active())
            FOURDGS_TRY(snap.snap_changed(frame->rotation, object_of, snapped_from, rotation, k));
        step = step_of(*frame, color, snap.active() ? rotation : frame->rotation, ids, sigma, r, k);
        return &step;
    };
    KeyframeWriteReport kr;
    FOURDGS_TRY(write_keyframe_delta(steps, base_header(first.sh_degree, o, r),
                                     writer_options(o, r), sink, &kr));
    tick(o, in.frames, in.frames);
    report_written(kr, r, rep);
    return ok_status();
}

Status convert_keyframe_delta(std::span<const PlyCloud> frames, const ConvertOptions& o,
                              Resolved& r, ByteSink& sink, ConvertReport& rep) {
    FOURDGS_TRY(check_tracked(frames));
    if (r.keyframe_every == 0)
        return bad(refusal::kInvalidOption, "keyframe_every is 0, must be >= 1");
    FOURDGS_TRY(size_fixed_grid(frames, r));

    const std::size_t n = frames.front().count;
    std::vector<std::vector<std::uint32_t>> ids;
    std::uint64_t distinct = n;
    if (r.plan) {
        FOURDGS_TRY(plan_ids(frames, r, ids, distinct));
    } else {
        ids.assign(1, tracked_ids(frames.front()));
    }
    const std::vector<float> sigma(n, kInf);
    std::vector<std::vector<float>> colors(frames.size());
    std::vector<KeyframeStep> steps;
    KeyframeWriterOptions ko = writer_options(o, r);
    // A shard tiles the rest of the clock with empty keyframes (§11.1); merge drops them.
    if (r.first > 0) {
        steps.push_back(KeyframeStep{0, {}, {}});
        ko.keyframe_steps.push_back(1);
    }
    for (std::size_t i = 0; i < frames.size(); ++i)
        colors[i] = clamped_colors(frames[i], rep.clamped_colors);
    hold_colours(colors, r);
    const RotationSnap snap(r);
    std::vector<std::vector<float>> rotations(frames.size());
    const std::span<const std::uint32_t> object_of = objects_of(r);
    for (std::size_t i = 0; i < frames.size(); ++i) {
        const PlyCloud& f = frames[i];
        if (snap.active()) FOURDGS_TRY(snap.snap(f.rotation, object_of, rotations[i], r.first + i));
        steps.push_back(
            step_of(f, colors[i], snap.active() ? rotations[i] : f.rotation, ids[r.plan ? i : 0],
                    sigma, r, r.first + i));
        ko.keyframe_steps.push_back((r.first + i) % r.keyframe_every == 0);
    }
    if (r.end < r.total) {
        steps.push_back(KeyframeStep{r.time_of(r.end), {}, {}});
        ko.keyframe_steps.push_back(1);
    }
    for (KeyframeStep& s : steps) s.gaussians.sh_degree = frames.front().sh_degree;
    if (!r.plan) ko.keyframe_steps.clear();  // keyframe_every places them
    KeyframeWriteReport kr;
    FOURDGS_TRY(write_keyframe_delta(steps, base_header(frames, o, r), ko, sink, &kr));
    // The ids were chosen so that the writer never needs a fresh one; if it did, the shards of
    // this plan would not agree on them.
    if (r.plan && kr.base.gaussian_count != distinct)
        return make_error(ErrorKind::limit, refusal::kBoundViolated,
                          "the writer found " + std::to_string(kr.base.gaussian_count) +
                              " incarnations where the plan's ids make " +
                              std::to_string(distinct));
    tick(o, frames.size(), frames.size());
    report_written(kr, r, rep);
    return ok_status();
}

}  // namespace fourdgs::convert_parts
