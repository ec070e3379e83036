// Rotations measured in the input's own 8-bit levels (ConvertOptions::rot_levels, issue 39).
//
// A `.splat` stores each component of a unit quaternion as the byte b = round(128 q + 128)
// (splat_formats.hpp), which the importer reads back as v = (b - 128) / 128, not normalized. A
// rotation q is within N levels of that input when, up to sign, every component satisfies
// |128 q_c + 128 - b_c| <= N + 1/2, i.e. |q_c - v_c| <= (N + 1/2) / 128: q lies in the box of
// half-width (N + 1/2) / 128 around v, and N = 0 means "decodes back to the input's bytes". The
// byte 255 is open above (numpy's clip(0, 255) keeps every q_c past 254.5 / 128 - 1 there), so
// its box has no upper side.
//
// A writer that truncates instead (numpy's astype(uint8), make_tracked_frames) stores
// b = floor(128 q + 128), clipped to 0..255: b - N <= 128 q + 128 < b + 1 + N is N levels of it,
// the same box moved up by half a level (Rounding::floor; its centre (b + 1/2 - 128) / 128,
// half-width (N + 1/2) / 128, a byte 255 still open above). Every function here builds or
// measures a box from centre(), so both roundings are one box. Its upper side is half-open (a q
// exactly on it truncates to the next byte); the boxes here are closed, as they are for the
// rounding writer (whose sides, exactly half a level off, are ties either way), because the
// converter never places a rotation on a side: it places each 1e-6 inside the closed box less
// the f32 allowance (kLevelsF32Allowance, convert_parts.hpp), so even as a reader composes it in
// f32 the decoded value stays strictly below the upper side. Only a placement in the declared
// slack of a shallow box (already past N + 1/2) can land on or past it.
//
// normalize(v) is not always inside that box (the rounding can push |v| far enough from 1 that
// dividing by it moves a component past the box's side), so a producer takes the unit quaternion
// deepest inside the box instead — and, for a rotation held over several frames (a still gaussian,
// whose bytes may differ between frames), the one deepest inside every frame's box at once.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "fourdgs/quantize.hpp"

namespace fourdgs::rotation_box {

using Quat = std::array<double, 4>;  // xyzw, as PlyCloud holds a rotation

inline constexpr double kLevel = 1.0 / 128;  // one step of a .splat's rotation byte

// How the .splat's writer made a rotation byte from 128 q + 128: rounded, or truncated.
enum class Rounding { nearest, floor };

// The centre of the box of the byte the component `v_c` (as read) was made from: v_c itself where
// the writer rounded, half a level above it where it truncated.
double centre(float v_c, Rounding rounding);

// Whether every component of `v` (4 floats, as read) is exactly (b - 128) / 128 for a byte b.
bool on_levels(const float* v);

// The byte `v_c` was read from (on_levels(v) holds).
int byte_of(float v_c);

// How far the rotation `q` (4 floats, normalized here first) lies from the input `v` (4 floats, as
// read), up to sign, in quaternion units: the largest |q_c - centre(v_c)| over the components, a
// byte 255's component counting only when q_c is below its centre. q lies in the (closed) box of
// half-width h around v exactly when this is <= h. 0 for a q of zero norm is never returned: it is
// +infinity.
double levels_distance(const float* q, const float* v, Rounding rounding = Rounding::nearest);

// One input rotation's box as levels_distance measures it, read once (its centres and which
// sides are open) for a caller measuring many rotations against the same input.
struct LevelsBox {
    Quat centre{};
    std::array<bool, 4> open{};  // a byte 255's side
    static LevelsBox of(const float* v, Rounding rounding = Rounding::nearest);
    double distance(const float* q) const;  // levels_distance(q, v, rounding)
    // distance(q) to within `slack` either way, measured on q as it is, not normalized (no
    // square root or division): a caller measuring many rotations against a bound decides most
    // by it, and measures exactly only those it leaves open. slack is +infinity where
    // distance(q) is.
    struct Estimate {
        double distance = 0, slack = 0;
    };
    Estimate estimate(const Quat& q) const;
    // The sign-free largest component distance of the point p, as it is, from the centres (an
    // open side bounding nothing): distance() of a normalized q, estimate() of q as it is.
    double from_centres(const Quat& p) const;
};

inline double LevelsBox::from_centres(const Quat& p) const {
    double same = 0, flipped = 0;
    for (int c = 0; c < 4; ++c) {
        const double qc = p[c], vc = centre[c];
        same = std::max(same, open[c] ? std::max(0.0, vc - qc) : std::fabs(qc - vc));
        flipped = std::max(flipped, open[c] ? std::max(0.0, vc - -qc) : std::fabs(-qc - vc));
    }
    return std::min(same, flipped);
}

// Inline: a search estimates tens of millions, a few frames at a time.
inline LevelsBox::Estimate LevelsBox::estimate(const Quat& q) const {
    double n = 0;  // |q|^2, as distance() sums it
    for (int c = 0; c < 4; ++c) n += q[c] * q[c];
    if (!(n > 0) || !std::isfinite(n)) return {0, std::numeric_limits<double>::infinity()};
    // q_c / |q| lies |q_c| |1 - |q|| / |q| <= |1 - |q|| <= |1 - |q|^2| from q_c, and the distance
    // moves by no more than its components do; the roundings of both measures (a few units in
    // the last place of numbers below 4) are far inside the 1e-12 added.
    return {from_centres(q), std::fabs(1 - n) + 1e-12};
}

// An axis-aligned box of quaternions; a side at +/-infinity is open.
struct Box {
    Quat lo{}, hi{};
};

// The box of half-width `half` around the centres of the input `v` (4 floats, as read;
// on_levels), the side above a byte 255 open.
Box box_of(const float* v, double half, Rounding rounding = Rounding::nearest);

// The intersection of two boxes (may be empty: some lo above its hi).
Box intersect(const Box& a, const Box& b);

// The box of the input `v` as seen from the sign of `towards`: the box flipped through the origin
// where its centre . towards < 0, so that the boxes of several frames of one rotation can be
// intersected.
Box box_towards(const float* v, double half, const Quat& towards, Rounding rounding = Rounding::nearest);

struct Deepest {
    Quat q{};            // unit
    double depth = 0;    // how far inside the box q lies, from its nearest closed side
};

// The unit quaternion deepest inside `box` (each finite side moved in by the same depth until the
// moved box only touches the unit sphere), or nullopt where no unit quaternion lies in the box.
// Exact up to a bisection to 1e-12 of the depth.
std::optional<Deepest> deepest_unit(const Box& box);

// deepest_unit(box_of(v, half)) in closed form (the one box a frame gives, every rotation that
// changed: the bisection's cost there).
std::optional<Deepest> deepest_in_box_of(const float* v, double half,
                                         Rounding rounding = Rounding::nearest);

// The unit quaternion h whose turns turn_k ⊗ h (Hamilton product, xyzw) lie deepest inside the
// boxes of half-width `half` around the inputs v_k (`inputs`: 4 floats a frame, as read; each
// box taken on the side of turn_k ⊗ start): a rotation held in a body's frame over the frames it
// stands for, turn_k the body's pose at frame k (a still gaussian: identity turns). Linearized on
// the sphere's tangent space at `start` (3 unknowns and the depth, up to 8 half-spaces a frame)
// and solved exactly as a linear programme (simplex on its dual, Bland's rule), then linearized
// again at the point found, twice. `depth` is measured at the unit point itself: negative where
// no unit quaternion lies in every box (outside the shallowest by that much). With `enough`, it
// stops at the first point found that deep (a caller that needs a point inside by a margin, not
// the deepest). nullopt for no frames or turns and inputs of different counts.
std::optional<Deepest> deepest_unit_turned(std::span<const Quat> turns, std::span<const float> inputs,
                                           double half, const Quat& start,
                                           Rounding rounding = Rounding::nearest,
                                           double enough = std::numeric_limits<double>::infinity());

// A rotation the writer stores on `grid` (§6.4 smallest-three, decoded as a reader decodes it and
// held in f32, so that the writer's own quantization gives back the same bins) inside the box of
// half-width `half` around the input `v` (4 floats, as read). Tried from the unit quaternion
// deepest inside the box: its bins rounded on the sub-lattices of `lattice`, ..., 2 grid steps
// (bins multiples of it: the rotation stream then codes as on a coarser grid), the first that
// lies inside; then on the grid itself, its rounded bins and the cube of bins around them (1, then
// up to 4 bins out), the nearest to v in the smallest cube holding one. nullopt where none lies
// inside (the grid too coarse for this box).
std::optional<std::array<float, 4>> grid_point_in_box(const float* v, double half, const Grid& grid,
                                                      int lattice, Rounding rounding = Rounding::nearest);

// The grid points (§6.4 smallest three on `grid`, decoded as a reader decodes them and held in
// f32, as grid_point_in_box gives them) in the cube of `radius` bins each way around the rounded
// bins of the unit quaternion `q`, the rounded point first; those where the omitted component
// would not stay the largest are left out.
std::vector<std::array<float, 4>> grid_points_around(const Quat& q, const Grid& grid, int radius);
// The same into `out` (cleared first), for a caller that keeps it across many quaternions.
void grid_points_around(const Quat& q, const Grid& grid, int radius,
                        std::vector<std::array<float, 4>>& out);

}  // namespace fourdgs::rotation_box
