// tests/support/rigid_frames.hpp — a tracked frame sequence of rigid bodies, built in code, for
// the rigid-part tests and bench_convert: a static part, two rigid parts (one spinning while it
// translates, one turning about another axis while it drifts) and, optionally, a deforming part.
// With `drift`, every gaussian of the two bodies also wanders on its own in its body's frame (as
// splat4d's generator's foreground does, tests/bench/splat4d/make_d3dg_params.py): the bodies are
// then ridden, not rigid (rigid.hpp's riders).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "fourdgs/pose.hpp"
#include "fourdgs/tools/ply.hpp"

namespace fourdgs::test {

struct RigidSceneShape {
    double static_share = 0.4, part_a_share = 0.3, part_b_share = 0.3;  // the rest deforms
    int sh_degree = 0;
    double drift = 0;  // each body gaussian's own wander in its body's frame, per axis, units
};

// Gaussian i's part: 0 static, 1 and 2 the rigid parts, 3 deforming, in blocks of rounded shares.
inline int rigid_scene_part(std::size_t i, std::size_t n, const RigidSceneShape& s) {
    auto count = [n](double share) { return static_cast<std::size_t>(std::lround(share * n)); };
    const std::size_t a = count(s.static_share), b = a + count(s.part_a_share),
                      c = b + count(s.part_b_share);
    return i < a ? 0 : i < b ? 1 : i < c ? 2 : 3;
}

// `n` gaussians at `fps`, one frame at a time: the static part fills [-2, 2] x [-1, -0.5] x
// [-2, 2] (a floor), part 1 is a ball of radius 0.5 around (-1, 0.3, 0) spinning at 1.5 rad/s
// about (0, 1, 0.3) while it moves +0.4 units/s along z, part 2 a box around (1, 0.3, 0) turning
// at 0.8 rad/s about x while it moves -0.3 units/s along x and +0.1 along y, and the deforming
// part a sheet above them rippling by up to 0.05 units. Rotations turn with their part. A long
// sequence is made frame by frame (frame(f)), so that it never needs to be in memory at once.
class RigidScene {
public:
    RigidScene(std::size_t n, double fps, unsigned seed, const RigidSceneShape& shape = {})
        : fps_(fps), drift_(shape.drift), part_(n), phase_(n) {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<double> u(0, 1);
        base_.count = n;
        base_.sh_degree = shape.sh_degree;
        const int per = base_.sh_per_gaussian();
        for (std::size_t i = 0; i < n; ++i) {
            part_[i] = rigid_scene_part(i, n, shape);
            Vec3 p;
            if (part_[i] == 0) {
                p = {4 * u(rng) - 2, -1 + 0.5 * u(rng), 4 * u(rng) - 2};
            } else if (part_[i] == 1) {
                double r2 = 2;
                Vec3 d{};
                while (r2 > 1) {
                    d = {2 * u(rng) - 1, 2 * u(rng) - 1, 2 * u(rng) - 1};
                    r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                }
                p = {-1 + 0.5 * d[0], 0.3 + 0.5 * d[1], 0.5 * d[2]};
            } else if (part_[i] == 2) {
                p = {1 + 0.6 * u(rng) - 0.3, 0.3 + 0.4 * u(rng) - 0.2, 0.8 * u(rng) - 0.4};
            } else {
                p = {4 * u(rng) - 2, 1.2 + 0.02 * u(rng), 4 * u(rng) - 2};
            }
            phase_[i] = 6.283185307179586 * u(rng);
            for (int c = 0; c < 3; ++c) base_.position.push_back(static_cast<float>(p[c]));
            base_.normal.insert(base_.normal.end(), {0, 0, 0});
            for (int c = 0; c < 3; ++c)
                base_.scale.push_back(static_cast<float>(0.005 + 0.02 * u(rng)));
            const Quat q = normalized({u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5, u(rng) + 0.1});
            for (int c = 0; c < 4; ++c) base_.rotation.push_back(static_cast<float>(q[c]));
            for (int c = 0; c < 3; ++c) base_.color.push_back(static_cast<float>(u(rng)));
            base_.color.push_back(static_cast<float>(0.3 + 0.7 * u(rng)));
            for (int k = 0; k < per; ++k) base_.sh.push_back(static_cast<float>(u(rng) - 0.5));
        }
    }

    PlyCloud frame(std::size_t f) const {
        const double t = double(f) / fps_;
        PlyCloud c = base_;
        // Part 1 turns about its centre (-1, 0.3, 0), part 2 about (1, 0.3, 0).
        const Quat ra = axis_angle({0, 1, 0.3}, 1.5 * t), rb = axis_angle({1, 0, 0}, 0.8 * t);
        for (std::size_t i = 0; i < base_.count; ++i) {
            const float* bp = &base_.position[i * 3];
            const float* bq = &base_.rotation[i * 4];
            const Vec3 p{bp[0], bp[1], bp[2]};
            const Quat q{bq[0], bq[1], bq[2], bq[3]};
            Vec3 np = p;
            Quat nq = q;
            if (part_[i] == 1 || part_[i] == 2) {
                const Vec3 centre{part_[i] == 1 ? -1.0 : 1.0, 0.3, 0};
                const Quat& r = part_[i] == 1 ? ra : rb;
                // The wander: a slow sine per axis with the gaussian's own phase, in the body.
                const double ph = phase_[i];
                const Vec3 own{drift_ * std::sin(2 * t + ph), drift_ * std::sin(3 * t + 2 * ph),
                               drift_ * std::cos(2.5 * t + 3 * ph) - drift_ * std::cos(3 * ph)};
                const Vec3 at{p[0] + own[0] - drift_ * std::sin(ph), p[1] + own[1] -
                              drift_ * std::sin(2 * ph), p[2] + own[2]};
                const Vec3 rel =
                    rotate(r, {at[0] - centre[0], at[1] - centre[1], at[2] - centre[2]});
                const Vec3 move = part_[i] == 1 ? Vec3{0, 0, 0.4 * t} : Vec3{-0.3 * t, 0.1 * t, 0};
                for (int k = 0; k < 3; ++k) np[k] = centre[k] + rel[k] + move[k];
                nq = multiply(r, q);
            } else if (part_[i] == 3) {
                np[1] += 0.05 * std::sin(4 * t + phase_[i] + 2 * p[0]);
            }
            for (int k = 0; k < 3; ++k) c.position[i * 3 + k] = static_cast<float>(np[k]);
            for (int k = 0; k < 4; ++k) c.rotation[i * 4 + k] = static_cast<float>(nq[k]);
        }
        return c;
    }

private:
    static Quat axis_angle(Vec3 axis, double angle) {
        const double len = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
        const double s = std::sin(angle / 2) / len;
        return Quat{axis[0] * s, axis[1] * s, axis[2] * s, std::cos(angle / 2)};
    }

    double fps_;
    double drift_;
    PlyCloud base_;
    std::vector<int> part_;
    std::vector<double> phase_;
};

// `frames` frames of RigidScene(n, fps, seed, shape).
inline std::vector<PlyCloud> rigid_scene(std::size_t frames, std::size_t n, double fps,
                                         unsigned seed, const RigidSceneShape& shape = {}) {
    const RigidScene scene(n, fps, seed, shape);
    std::vector<PlyCloud> out;
    for (std::size_t f = 0; f < frames; ++f) out.push_back(scene.frame(f));
    return out;
}

// A rotation component of a unit quaternion on a .splat's u8 levels: round(q × 128 + 128) — or,
// from a writer that truncates (numpy's astype(uint8)), floor(q × 128 + 128) — clamped to
// [0, 255], less 128, / 128.
inline float rotation_level(double q, bool truncate = false) {
    const double x = q * 128 + 128;
    return static_cast<float>((std::clamp(truncate ? std::floor(x) : std::round(x), 0.0, 255.0) - 128) / 128);
}

// Every rotation of `frames`, normalized, on a .splat's u8 levels (rotation_level).
inline std::vector<PlyCloud> rotations_on_levels(std::vector<PlyCloud> frames, bool truncate) {
    for (PlyCloud& f : frames)
        for (std::size_t g = 0; g < f.count; ++g) {
            float* q = &f.rotation[g * 4];
            const double len = std::sqrt(double(q[0]) * q[0] + double(q[1]) * q[1] +
                                         double(q[2]) * q[2] + double(q[3]) * q[3]);
            for (int c = 0; c < 4; ++c) q[c] = rotation_level(q[c] / len, truncate);
        }
    return frames;
}

}  // namespace fourdgs::test
