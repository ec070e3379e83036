// tests/support/ply_frames.hpp — tracked PLY frame sequences for the tools' plan, convert and
// merge tests, built in code.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "fourdgs/tools/grid_plan.hpp"
#include "fourdgs/tools/ply.hpp"

namespace fourdgs::test {

// `frames` frames at `fps` of the same `n` gaussians in [-1, 1]^3: a third still, a third moving
// at up to 0.05 units/s, a third also accelerating along x at 0.4 units/s². SH degree `sh_degree`;
// from frame `sh_change_at` on (0: never), gaussian 3's first SH coefficient changes, which makes
// it a new incarnation under keyframe-delta.
inline std::vector<PlyCloud> tracked_sequence(std::size_t frames, std::size_t n, int sh_degree,
                                              double fps, unsigned seed,
                                              std::size_t sh_change_at = 0) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0, 1);
    PlyCloud base;
    base.count = n;
    base.sh_degree = sh_degree;
    const int per = 3 * ((sh_degree + 1) * (sh_degree + 1) - 1);
    std::vector<float> vel;
    base.position.reserve(3 * n);
    for (std::size_t i = 0; i < n; ++i) {
        base.position.insert(base.position.end(), {2 * u(rng) - 1, 2 * u(rng) - 1, 2 * u(rng) - 1});
        base.normal.insert(base.normal.end(), {0, 0, 0});
        base.scale.insert(base.scale.end(), {0.01f + 0.02f * u(rng), 0.02f, 0.01f});
        base.rotation.insert(base.rotation.end(), {u(rng) - 0.5f, u(rng) - 0.5f, u(rng) - 0.5f, 1});
        base.color.insert(base.color.end(), {u(rng), u(rng), u(rng), 0.5f + 0.5f * u(rng)});
        for (int k = 0; k < per; ++k) base.sh.push_back(u(rng) - 0.5f);
        for (int k = 0; k < 3; ++k) vel.push_back(i % 3 == 0 ? 0.0f : 0.1f * (u(rng) - 0.5f));
    }
    std::vector<PlyCloud> out;
    for (std::size_t f = 0; f < frames; ++f) {
        PlyCloud c = base;
        const float t = static_cast<float>(double(f) / fps);
        for (std::size_t i = 0; i < n; ++i)
            for (int k = 0; k < 3; ++k)
                c.position[i * 3 + k] +=
                    vel[i * 3 + k] * t + (i % 3 == 2 && k == 0 ? 0.2f * t * t : 0.0f);
        if (sh_change_at > 0 && f >= sh_change_at && n > 3 && per > 0)
            c.sh[3 * static_cast<std::size_t>(per)] = 0.75f;
        out.push_back(std::move(c));
    }
    return out;
}

// tracked_sequence with its still third drifting along y at 0.05 units/s: every gaussian moves.
inline std::vector<PlyCloud> moving_sequence(std::size_t frames, std::size_t n, int sh_degree,
                                             double fps, unsigned seed) {
    std::vector<PlyCloud> out = tracked_sequence(frames, n, sh_degree, fps, seed);
    for (std::size_t f = 0; f < frames; ++f)
        for (std::size_t g = 0; g < n; g += 3)
            out[f].position[g * 3 + 1] += 0.05f * static_cast<float>(double(f) / fps);
    return out;
}

// 0, 1, ..., n - 1: the sample indices of a plan that scans every frame.
inline std::vector<std::uint64_t> every_frame(std::size_t n) {
    std::vector<std::uint64_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = i;
    return v;
}

// A plan of `frames` made under `po` from the frames `sample` names (ascending; every frame when
// empty).
inline GridPlan plan_on_sample(const std::vector<PlyCloud>& frames, const PlanOptions& po,
                               std::vector<std::uint64_t> sample = {}) {
    if (sample.empty()) sample = every_frame(frames.size());
    std::vector<PlyCloud> clouds;
    for (std::uint64_t f : sample) clouds.push_back(frames[f]);
    auto p = make_grid_plan(frames.size(), clouds, sample, po);
    if (!p.ok()) FAIL(p.error().describe());
    return *p;
}

// A plan of every frame of `frames` at `fps` for `shape`, keyframes and segments every 4 frames,
// at `tolerance` (the default preset's when not given) and SH ladder `ladder`.
inline GridPlan plan_every_frame(const std::vector<PlyCloud>& frames, ConvertShape shape,
                                 double fps, std::optional<QuantBounds> tolerance = std::nullopt,
                                 ShLadder ladder = ShLadder::none) {
    PlanOptions po;
    po.fps = fps;
    po.shape = shape;
    po.keyframe_every = 4;
    po.segment_frames = 4;
    po.sample_frames = 0;
    po.tolerance = tolerance;
    po.sh_ladder = ladder;
    return plan_on_sample(frames, po);
}

}  // namespace fourdgs::test
