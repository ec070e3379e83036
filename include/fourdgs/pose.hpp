// fourdgs/pose.hpp — rigid poses and the one sampling rule every trajectory in the format uses.
//
// Quaternions are xyzw throughout (§3, §6.4, §5.15.3), as std::array<double, 4>. A pose maps
// local coordinates into its target frame: p_target = R(rotation) * p_local + translation.
//
// Rig Trajectories (§5.15.4), Object Tracks (§5.15.7) and moving audio sources (§7.2) share one
// rule: lerp the translation, shortest-arc slerp the rotation (negate the second quaternion when
// the dot product is negative), or hold the earlier sample for `step`; clamp outside the samples.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <span>

#include "fourdgs/export.hpp"
#include "fourdgs/portable.hpp"
#include "fourdgs/records.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

using Quat = std::array<double, 4>;  // x y z w
using Vec3 = std::array<double, 3>;

struct Pose {
    Quat rotation{0, 0, 0, 1};
    Vec3 translation{};
    friend bool operator==(const Pose&, const Pose&) = default;
};

// q / |q|. The file's parsers refuse zero and non-finite norms, so callers see unit results;
// a zero quaternion given here stays the identity rather than becoming NaN.
inline Quat normalized(const Quat& q) {
    const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(n > 0) || !std::isfinite(n)) return {0, 0, 0, 1};
    return {q[0] / n, q[1] / n, q[2] / n, q[3] / n};
}

// a ⊗ b: the rotation that applies b first, then a (§3's R(t) ⊗ rotation).
inline Quat multiply(const Quat& a, const Quat& b) {
    return {a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
            a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
            a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
            a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};
}

// R(q) v for a unit q.
inline Vec3 rotate(const Quat& q, const Vec3& v) {
    // v + 2 w (u × v) + 2 u × (u × v), u = q.xyz
    const double ux = q[0], uy = q[1], uz = q[2], w = q[3];
    const double cx = uy * v[2] - uz * v[1], cy = uz * v[0] - ux * v[2], cz = ux * v[1] - uy * v[0];
    const double ccx = uy * cz - uz * cy, ccy = uz * cx - ux * cz, ccz = ux * cy - uy * cx;
    return {v[0] + 2 * (w * cx + ccx), v[1] + 2 * (w * cy + ccy), v[2] + 2 * (w * cz + ccz)};
}

// pose(p) = R p + T.
inline Vec3 apply(const Pose& pose, const Vec3& p) {
    Vec3 r = rotate(pose.rotation, p);
    return {r[0] + pose.translation[0], r[1] + pose.translation[1], r[2] + pose.translation[2]};
}

// outer ∘ inner: the pose that applies `inner` first (p_scene = outer(inner(p))).
inline Pose compose(const Pose& outer, const Pose& inner) {
    return {normalized(multiply(outer.rotation, inner.rotation)), apply(outer, inner.translation)};
}

// Shortest-arc slerp from unit a to unit b at u in [0, 1], normalized (§5.15.4, §7.2).
inline Quat slerp_shortest(const Quat& a, Quat b, double u) {
    double dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    if (dot < 0) {  // q and -q are one rotation: take the short way round
        for (double& c : b) c = -c;
        dot = -dot;
    }
    double wa, wb;
    if (dot > 0.9995) {  // nearly parallel: lerp is exact to rounding and avoids 0/0
        wa = 1 - u;
        wb = u;
    } else {
        // acos and sin that round alike on every platform (portable.hpp): a pose is the same
        // bytes in a browser as on a server.
        const double theta = correctly_rounded_acos(dot < 1 ? dot : 1);
        const double s = correctly_rounded_sin(theta);
        wa = correctly_rounded_sin((1 - u) * theta) / s;
        wb = correctly_rounded_sin(u * theta) / s;
    }
    return normalized({wa * a[0] + wb * b[0], wa * a[1] + wb * b[1], wa * a[2] + wb * b[2],
                       wa * a[3] + wb * b[3]});
}

inline Vec3 lerp(const Vec3& a, const Vec3& b, double u) {
    return {a[0] + (b[0] - a[0]) * u, a[1] + (b[1] - a[1]) * u, a[2] + (b[2] - a[2]) * u};
}

// Where t falls among strictly increasing `times`: the sample index i with times[i] <= t <
// times[i+1] and the fraction u in [0, 1); clamped to (0, 0) before the first and (n-1, 0) at or
// after the last. `times(i)` returns the i-th time; n >= 1.
struct SampleSpan {
    std::size_t index = 0;
    double u = 0;  // 0 when clamped or exactly on a sample
};

template <class TimeOf>
SampleSpan locate_sample(std::size_t n, double t, TimeOf&& times) {
    if (n == 0 || !(t > times(0))) return {0, 0};
    if (t >= times(n - 1)) return {n - 1, 0};
    std::size_t lo = 0, hi = n - 1;  // times(lo) < t < times(hi)... invariant: times(lo) <= t
    while (hi - lo > 1) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (times(mid) <= t) lo = mid; else hi = mid;
    }
    const double t0 = times(lo), t1 = times(lo + 1);
    return {lo, (t - t0) / (t1 - t0)};
}

// The pose of a Rig Trajectory or an Object Track at scene time t (§5.15.4): `samples` must be
// non-empty (a zero-sample trajectory is absent, M061). Rotations come out normalized.
inline Pose sample_trajectory(std::span<const TrajectorySample> samples,
                              TrajectoryInterpolation interpolation, double t) {
    if (samples.empty()) return {};
    const SampleSpan s =
        locate_sample(samples.size(), t, [&](std::size_t i) { return samples[i].time; });
    const TrajectorySample& a = samples[s.index];
    if (s.u == 0 || interpolation == TrajectoryInterpolation::step)
        return {normalized(a.rotation), a.translation};
    const TrajectorySample& b = samples[s.index + 1];
    return {slerp_shortest(normalized(a.rotation), normalized(b.rotation), s.u),
            lerp(a.translation, b.translation, s.u)};
}

}  // namespace fourdgs
FOURDGS_PUBLIC_END
