// tests/support/remote_scenes.hpp — the scenes the remote tests and bench_remote serve: laid
// out so that an instant needs ranges in several places of the file, away from its head and
// tail. Deterministic (fixed seeds). Header-only; a failed write returns the writer's error.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/writer.hpp"

namespace fourdgs::test {

// A gaussian-birth scene of 10 s, SH degree 1: a background window [0, 10) and one window per
// second, `per_window` gaussians each, in chunks of at most `chunk` gaussians. The writer orders
// windows by lo, so the file holds [0,1), the background, [1,2), ...: an instant after the first
// second needs two contiguous groups of ranges (the background's chunks and bands, and its own
// second's).
inline Result<std::vector<std::uint8_t>> remote_birth_scene(std::size_t per_window,
                                                            std::uint32_t chunk) {
    const std::size_t windows = 11, n = per_window * windows;
    std::mt19937 rng(16);
    std::uniform_real_distribution<float> u(0, 1);
    GaussianColumns g;
    g.count = n;
    g.sh_degree = 1;
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t w = i / per_window;  // 0: background, k: [k-1, k)
        for (int c = 0; c < 3; ++c) g.position.push_back(u(rng) * 8 - 4);
        for (int c = 0; c < 3; ++c) g.scale.push_back(0.01f + 0.05f * u(rng));
        for (int c = 0; c < 4; ++c) g.rotation.push_back(u(rng) - 0.5f);
        g.rotation.back() += 1;
        for (int c = 0; c < 4; ++c) g.color.push_back(u(rng));
        for (int c = 0; c < 3; ++c) g.motion.push_back(u(rng) * 0.2f - 0.1f);
        const double lo = w == 0 ? 0.0 : static_cast<double>(w - 1);
        const double hi = w == 0 ? 10.0 : static_cast<double>(w);
        g.win_lo.push_back(lo);
        g.win_hi.push_back(hi);
        g.mu_t.push_back(static_cast<float>((lo + hi) / 2));
        g.sigma_t.push_back(w == 0 ? std::numeric_limits<float>::infinity() : 0.3f);
        for (int c = 0; c < 9; ++c) g.sh.push_back(u(rng) - 0.5f);
    }
    SceneInput scene;
    scene.header.duration_sec = 10;
    scene.header.sh_degree = 1;
    scene.gaussians = g.batch();
    WriterOptions o;
    o.max_chunk_gaussians = chunk;
    return write_scene(scene, o);
}

// A keyframe-delta clip: `steps` steps of 1/30 s, `n` never-fading gaussians, 5 % of them moving
// a little at each step, a keyframe every `keyframe_every` steps, chained deltas.
inline Result<std::vector<std::uint8_t>> remote_delta_scene(std::size_t n, std::size_t steps,
                                                            std::uint32_t keyframe_every) {
    std::mt19937 rng(61);
    std::uniform_real_distribution<float> u(0, 1);
    std::vector<std::uint32_t> ids(n);
    std::vector<float> scale(n * 3), rotation(n * 4), color(n * 4),
        sigma(n, std::numeric_limits<float>::infinity());
    for (std::size_t i = 0; i < n; ++i) {
        ids[i] = static_cast<std::uint32_t>(i);
        for (int c = 0; c < 3; ++c) scale[i * 3 + c] = 0.01f + 0.02f * u(rng);
        for (int c = 0; c < 4; ++c) rotation[i * 4 + c] = u(rng) - 0.5f;
        rotation[i * 4 + 3] += 1;
        for (int c = 0; c < 4; ++c) color[i * 4 + c] = u(rng);
    }
    std::vector<std::vector<float>> pos(steps);
    pos[0].resize(n * 3);
    for (float& p : pos[0]) p = u(rng) * 10 - 5;
    for (std::size_t s = 1; s < steps; ++s) {
        pos[s] = pos[s - 1];
        for (std::size_t k = 0; k < n / 20; ++k) {
            const std::size_t i = rng() % n;
            for (int c = 0; c < 3; ++c)
                pos[s][i * 3 + c] =
                    std::clamp(pos[s][i * 3 + c] + (u(rng) - 0.5f) * 0.1f, -5.0f, 5.0f);
        }
    }
    std::vector<KeyframeStep> st(steps);
    for (std::size_t s = 0; s < steps; ++s) {
        st[s].t0 = static_cast<double>(s) / 30.0;
        st[s].ids = ids;
        st[s].gaussians.count = n;
        st[s].gaussians.position = pos[s];
        st[s].gaussians.scale = scale;
        st[s].gaussians.rotation = rotation;
        st[s].gaussians.color = color;
        st[s].gaussians.sigma_t = sigma;
    }
    SceneHeader header;
    header.duration_sec = static_cast<double>(steps) / 30.0;
    KeyframeWriterOptions o;
    o.keyframe_every = keyframe_every;
    return write_keyframe_delta(st, header, o);
}

}  // namespace fourdgs::test
