// A rider's held rotation (rigid_hold.hpp).
#include "rigid_hold.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "rotation_box.hpp"

namespace fourdgs::rigid_hold {
namespace {

Quat conjugate(const Quat& r) { return {-r[0], -r[1], -r[2], r[3]}; }

Quat read_unit(const float* r) { return normalized({r[0], r[1], r[2], r[3]}); }

// Rotations carried into the object frame, each taken on the first's side of the sign: their
// range and their sum, the first's included.
struct Carried {
    Quat ref, lo, hi, sum;
    explicit Carried(const Quat& first) : ref(first), lo(first), hi(first), sum(first) {}
    void add(Quat local) {
        double dot = 0;
        for (int c = 0; c < 4; ++c) dot += local[c] * ref[c];
        for (int c = 0; c < 4; ++c) {
            if (dot < 0) local[c] = -local[c];
            lo[c] = std::min(lo[c], local[c]);
            hi[c] = std::max(hi[c], local[c]);
            sum[c] += local[c];
        }
    }
};

// The rotation held against the normalized input: of the rider's rotations carried into the
// object frame (R_k^-1 ⊗ q_k, on frame k0's side of the sign), the midrange or the mean,
// whichever strays less. Not frame k0's: a rotation rounded to the input's grid (a .splat's u8
// components) would then spend two roundings of the budget; the midrange spends one, and the
// mean of many frames' roundings nearly none beyond the frame's own (the grid's share of the
// rotation tolerance is what the farthest rider leaves, parts_share in grid_plan.hpp). A
// distance is the held rotation's as it is stored (the f32 components the converter gives the
// writer, normalized), carried by the pose, from the frame's rotation.
std::optional<Held> hold_normalized(std::size_t k0, std::size_t k1, const RotationAt& raw,
                                    std::span<const Pose> poses, double tol) {
    auto rotation = [&](std::size_t k) { return read_unit(raw(k)); };
    auto local_at = [&](std::size_t k) { return multiply(conjugate(poses[k].rotation), rotation(k)); };
    Carried carried(local_at(k0));  // frame 0's own rotation where k0 is 0 (its pose is none)
    for (std::size_t k = k0 + 1; k < k1; ++k) carried.add(local_at(k));
    const Quat &lo = carried.lo, &hi = carried.hi, &sum = carried.sum;
    // The largest distance of `rest` over the frames; past `limit` it stops and says +inf.
    auto distance_of = [&](Quat rest, double limit) {
        for (double& c : rest) c = static_cast<float>(c);
        const Quat stored = normalized(rest);
        double distance = 0;
        for (std::size_t k = k0; k < k1; ++k) {
            const double d = quat_distance(multiply(poses[k].rotation, stored), rotation(k));
            if (!(d <= limit)) return std::numeric_limits<double>::infinity();
            distance = std::max(distance, d);
        }
        return distance;
    };
    Held best{normalized({(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2,
                          (lo[3] + hi[3]) / 2}),
              0,
              {}};
    best.distance = distance_of(best.rest, tol);
    const Quat mean = normalized(sum);
    if (const double d = distance_of(mean, std::min(tol, best.distance)); d < best.distance)
        best = {mean, d, {}};
    if (!(best.distance <= tol)) return std::nullopt;
    return best;
}

// hold_in_box's buffers: a window's turns, inputs and boxes, and the candidates around a point.
struct BoxScratch {
    std::vector<Quat> turns;
    std::vector<float> inputs;
    std::vector<rotation_box::LevelsBox> boxes;
    std::vector<std::array<float, 4>> candidates;
    std::vector<rotation_box::LevelsBox::Estimate> estimates;
};

// How far past LevelsBox::estimate's slack the estimate of turn ⊗ a candidate as stored (in
// doubles, not normalized) may lie from the exact distance of turn ⊗ its normalization composed
// in f32, as a reader composes it: both point the same way, so the estimate's slack covers the
// normalization, and the f32 roundings move the normalized point by at most 2^-23.
constexpr double kComposedInF32 = 1e-6;

// The largest box distance (rotation_box::LevelsBox::distance) over the frames of turns[i] ⊗
// held, held the candidate `stored` normalized, composed in f32 as a reader does, from boxes[i],
// where it is at most `limit`; else +infinity. Each frame estimated first (LevelsBox::estimate
// of turns[i] ⊗ stored, kComposedInF32), the frame `worst` first: one surely past the limit ends
// it, and only the frames that may be the farthest are measured exactly (the others lie surely
// below one of them), so the value is the exact one. `worst` becomes the farthest frame, the
// first one the next candidate (a hair away) is tried on.
double farthest_within(const std::array<float, 4>& stored, std::span<const Quat> turns,
                       std::span<const rotation_box::LevelsBox> boxes, double limit,
                       std::size_t& worst, BoxScratch& scratch) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    const std::size_t n = turns.size();
    scratch.estimates.resize(n);
    const Quat as_stored{stored[0], stored[1], stored[2], stored[3]};
    double reached = -kInf;  // a distance some frame surely reaches
    for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = k == 0 ? worst : k == worst ? 0 : k;
        const Quat q = multiply(turns[i], as_stored);
        rotation_box::LevelsBox::Estimate e = boxes[i].estimate(q);
        e.slack += kComposedInF32;
        if (e.distance - e.slack > limit) return kInf;
        reached = std::max(reached, e.distance - e.slack);
        scratch.estimates[i] = e;
    }
    const Quat held = normalized(as_stored);
    double distance = 0;
    std::size_t farthest = worst;
    for (std::size_t i = 0; i < n; ++i) {
        const rotation_box::LevelsBox::Estimate& e = scratch.estimates[i];
        if (e.distance + e.slack < reached) continue;
        const Quat q = multiply(turns[i], held);
        const float composed[4] = {static_cast<float>(q[0]), static_cast<float>(q[1]),
                                   static_cast<float>(q[2]), static_cast<float>(q[3])};
        const double d = boxes[i].distance(composed);
        if (!(d <= limit)) return kInf;
        if (d > distance) distance = d, farthest = i;
    }
    worst = farthest;
    return distance;
}

// Whether no stored value around the unit `mean` (hold_in_box's best_around: the grid points of
// the cube of one bin each way of its rounded bins, or `mean` in f32) can lie within the box of
// every frame: the mean's turns surely lie farther outside some frame's box than any of them
// lies from the mean. Such a point's three kept components lie within 1.5 grid steps of the
// mean's (the sign taken where its largest is positive, at least 1/2), so within 2.6 steps in
// length, their squares sum below 0.83 (a step of at most 1/64) and the omitted one moves by
// |sum of squares moved| / (w + w') <= 2.6 x 1.78 / 0.92 < 5.1 steps: 5.7 in all. A turn keeps
// lengths and a box distance moves no more than the components do; the f32 roundings are far
// inside 1e-6. The programme's run then as before: only the hopeless candidates are skipped.
bool surely_outside(const Quat& mean, std::span<const Quat> turns,
                    std::span<const rotation_box::LevelsBox> boxes, const RotationLevels& levels) {
    if (!(levels.grid_step >= 0 && levels.grid_step <= 1.0 / 64)) return false;
    const double reach = 6 * levels.grid_step + 1e-6;
    for (std::size_t i = 0; i < turns.size(); ++i) {
        const Quat q = multiply(turns[i], mean);
        const rotation_box::LevelsBox::Estimate e = boxes[i].estimate(q);
        if (e.distance - e.slack - kComposedInF32 - reach > levels.half) return true;
    }
    return false;
}

// The rotation held in the input's own levels (RotationLevels): a unit quaternion whose turns
// lie inside every frame's box — the mean of the boxes' centres carried into the object frame,
// else a point of rotation_box::deepest_unit_turned's programme a grid step deep, else its
// deepest — then, where the file's rotation grid is given, the grid point around it (the cube of one bin each way of its rounded bins, §6.4's smallest
// three as a reader decodes them) whose turns stray least: the value the writer stores, so the
// distance is the stored one's. A distance is the largest over the frames of the box distance
// (rotation_box::levels_distance) of pose ⊗ held, composed in f32 as a reader does, from the
// frame's rotation as read.
std::optional<Held> hold_in_box(std::size_t k0, std::size_t k1, const RotationAt& raw,
                                std::span<const Pose> poses, double tol,
                                const RotationLevels& levels, const float* previous) {
    const auto rounding = levels.floor ? rotation_box::Rounding::floor : rotation_box::Rounding::nearest;
    // A search holds millions of riders' windows: their buffers kept per thread, not allocated
    // for each.
    thread_local BoxScratch scratch;
    std::vector<Quat>& turns = scratch.turns;
    std::vector<float>& inputs = scratch.inputs;
    turns.clear();
    inputs.clear();
    for (std::size_t k = k0; k < k1; ++k) {
        turns.push_back(poses[k].rotation);
        const float* r = raw(k);
        inputs.insert(inputs.end(), r, r + 4);
    }
    // Each frame's box once, read by every candidate's distance below.
    std::vector<rotation_box::LevelsBox>& boxes = scratch.boxes;
    boxes.resize(turns.size());
    for (std::size_t i = 0; i < boxes.size(); ++i)
        boxes[i] = rotation_box::LevelsBox::of(&inputs[i * 4], rounding);
    // Each frame's box centre carried into the object frame, on frame k0's side of the sign. A
    // held h within the half-width h_w of every box (every component) is within 2 h_w of each
    // centre in length, the turn keeping lengths, so no component of the carried centres may
    // spread past 4 h_w: where one does, no rotation holds and the programme is not run (most of
    // the gaussians that ride in position but whose rotation does not hold). A byte 255's open
    // side bounds nothing: not so pruned.
    bool open = false;
    auto carried_centre = [&](std::size_t i) {
        for (int c = 0; c < 4; ++c) open = open || rotation_box::byte_of(inputs[i * 4 + c]) == 255;
        return multiply(conjugate(turns[i]), boxes[i].centre);
    };
    Carried carried(carried_centre(0));
    for (std::size_t i = 1; i < turns.size(); ++i) carried.add(carried_centre(i));
    for (int c = 0; c < 4 && !open; ++c)
        if (carried.hi[c] - carried.lo[c] > 4 * levels.half + 1e-9) return std::nullopt;
    const Quat& sum = carried.sum;
    // The frame farthest from the last candidate measured within its limit: the grid points
    // tried around one candidate are a hair apart, so that frame is mostly the one that turns
    // the next away, and measured first (the largest over the frames is the same in any order).
    std::size_t worst = 0;
    auto distance_of = [&](const std::array<float, 4>& stored, double limit) {
        return farthest_within(stored, turns, boxes, limit, worst, scratch);
    };
    // The stored values around `q`: the grid points of the cube of one bin each way, or q in f32.
    auto best_around = [&](const Quat& q, double limit) {
        std::vector<std::array<float, 4>>& candidates = scratch.candidates;
        if (levels.grid_step > 0) {
            Grid grid;
            grid.step_rot = levels.grid_step;
            rotation_box::grid_points_around(q, grid, 1, candidates);
        } else {
            candidates.assign(1, {static_cast<float>(q[0]), static_cast<float>(q[1]),
                                  static_cast<float>(q[2]), static_cast<float>(q[3])});
        }
        std::optional<Held> best;
        for (const std::array<float, 4>& c : candidates) {
            const double d = distance_of(c, limit);
            if (!(d <= limit) || (best && !(d < best->distance))) continue;
            best = Held{{c[0], c[1], c[2], c[3]}, d, {}};
            limit = d;
        }
        return best;
    };
    // First the window before's value, where it holds inside every box (hold_over): within the
    // box itself, as the mean below, so the unbounded recomputation takes the same branch.
    if (previous) {
        const std::array<float, 4> kept{previous[0], previous[1], previous[2], previous[3]};
        const double d = distance_of(kept, levels.half);
        if (d <= levels.half) return Held{{kept[0], kept[1], kept[2], kept[3]}, d, {}};
    }
    // Then the mean of the carried centres (the programme is most of the search's cost; most
    // riders hold there), taken where it holds within the box itself — not `tol`, so that
    // held_window_rotations' unbounded recomputation takes the same branch as the search did.
    if (!surely_outside(normalized(sum), turns, boxes, levels))
        if (auto held = best_around(normalized(sum), levels.half)) return held;
    // Then the programme, stopped once a grid step deep (the grid points around such a point
    // mostly lie inside), and run to the deepest point where none does.
    const double enough = levels.grid_step > 0 ? levels.grid_step : 1e-6;
    const auto deep_enough = rotation_box::deepest_unit_turned(turns, inputs, levels.half,
                                                               normalized(sum), rounding, enough);
    if (!deep_enough) return std::nullopt;
    if (deep_enough->depth >= enough)
        if (auto held = best_around(deep_enough->q, levels.half)) return held;
    const auto deepest =
        rotation_box::deepest_unit_turned(turns, inputs, levels.half, deep_enough->q, rounding);
    if (!deepest) return std::nullopt;
    return best_around(deepest->q, tol);
}

}  // namespace

std::optional<Held> hold_over(std::size_t k0, std::size_t k1, const RotationAt& rotation,
                              std::span<const Pose> poses, double tol,
                              const RotationLevels& levels, const float* previous) {
    if (levels.half > 0) return hold_in_box(k0, k1, rotation, poses, tol, levels, previous);
    return hold_normalized(k0, k1, rotation, poses, tol);
}

std::optional<Held> hold_read(const float* q, std::size_t stride, std::size_t k0, std::size_t k1,
                              std::span<const Pose> poses, double tol,
                              const RotationLevels& levels, const float* previous) {
    return hold_over(
        k0, k1, [&](std::size_t k) { return q + (k - k0) * stride; }, poses, tol, levels,
        previous);
}

std::optional<Held> held_rotation(std::span<const PlyCloud> frames, std::size_t g,
                                  std::span<const Pose> poses, double tol,
                                  const RotationLevels& levels) {
    return hold_over(
        0, frames.size(), [&](std::size_t k) { return frames[k].rotation.data() + g * 4; }, poses,
        tol, levels);
}

std::optional<Held> held_per_window(std::span<const PlyCloud> frames,
                                    std::span<const std::size_t> at, std::size_t g,
                                    std::span<const Pose> poses, double tol, std::size_t length,
                                    const RotationLevels& levels) {
    Held out;
    out.per_window.resize(windows_of(at.back(), length));
    std::size_t filled = 0;
    float previous[4];
    for (std::size_t k0 = 0; k0 < frames.size();) {
        const std::size_t w = at[k0] / length;
        std::size_t k1 = k0 + 1;
        while (k1 < frames.size() && at[k1] / length == w) ++k1;
        const std::optional<Held> h = hold_over(
            k0, k1, [&](std::size_t k) { return frames[k].rotation.data() + g * 4; }, poses, tol,
            levels, filled > 0 ? previous : nullptr);
        if (!h) return std::nullopt;
        for (int c = 0; c < 4; ++c) previous[c] = static_cast<float>(h->rest[c]);
        for (; filled <= w; ++filled) out.per_window[filled] = h->rest;
        out.distance = std::max(out.distance, h->distance);
        k0 = k1;
    }
    for (; filled < out.per_window.size(); ++filled) out.per_window[filled] = out.per_window[filled - 1];
    out.rest = out.per_window.front();
    return out;
}

std::vector<std::size_t> hold_lengths(std::size_t window) {
    std::vector<std::size_t> out;
    for (std::size_t l = window; l >= kShortestHold && out.size() < 3; l /= 2) out.push_back(l);
    if (window > 0 && window < kShortestHold) out.push_back(window);
    return out;
}

}  // namespace fourdgs::rigid_hold
