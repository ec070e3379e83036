// tests/support/bench_scenes.hpp — the benchmark scenes, built in code, for the benches
// (tests/bench/) and for the tests that must hold on them (the writer's raw/delta estimate, the
// effort levels):
//   issue14_scene    the issue-14 scene (make_bench_scene): uniform random positions in a 4-unit
//                    cube, scales 0.005–0.025, uniformly random rotations and colours, 10 windows of
//                    1 s (or `seconds` of them), SH degree 0 — or, with `sh_degree` 3, the same scene with SH coefficients
//                    of a trained scene's shape (centred on 0, smaller in each higher band).
//   clustered_scene  bench_write's capture-like scene: 64 gaussian clusters, log-normal scales,
//                    10 windows, a tenth never fading.
// Deterministic for a given count and degree.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "fourdgs/writer.hpp"

namespace fourdgs::test {

inline SceneInput scene_of(const GaussianColumns& g, double duration) {
    SceneInput in;
    in.header.duration_sec = duration;
    in.header.sh_degree = g.sh_degree;
    in.gaussians = g.batch();
    return in;
}

// The bytes of a scene's input columns (what memcpy of the input copies).
inline std::size_t input_bytes(const GaussianColumns& g) {
    return (g.position.size() + g.scale.size() + g.rotation.size() + g.color.size() +
            g.motion.size() + g.mu_t.size() + g.sigma_t.size() + g.sh.size()) *
               sizeof(float) +
           (g.win_lo.size() + g.win_hi.size()) * sizeof(double);
}

inline GaussianColumns issue14_scene(std::size_t n, int sh_degree = 0, int seconds = 10) {
    const int windows = seconds;  // one-second windows
    const double duration = seconds;
    std::mt19937_64 rng(14);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    std::normal_distribution<float> normal(0.f, 1.f);
    GaussianColumns g;
    g.sh_degree = sh_degree;
    g.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        for (int c = 0; c < 3; ++c) {
            g.position[i * 3 + c] = 4.f * u(rng) - 2.f;
            g.scale[i * 3 + c] = 0.005f + 0.02f * u(rng);
            g.motion[i * 3 + c] = 0.2f * u(rng) - 0.1f;
        }
        // A uniformly random unit quaternion: a normalized 4D gaussian sample.
        float q[4], norm = 0;
        for (float& v : q) {
            v = normal(rng);
            norm += v * v;
        }
        norm = std::sqrt(norm);
        for (int c = 0; c < 4; ++c) g.rotation[i * 4 + c] = q[c] / norm;
        for (int c = 0; c < 4; ++c) g.color[i * 4 + c] = u(rng);
        const int w = static_cast<int>(i % windows);
        g.win_lo[i] = w * (duration / windows);
        g.win_hi[i] = g.win_lo[i] + duration / windows;
        g.mu_t[i] = static_cast<float>(g.win_lo[i] + (0.1 + 0.8 * u(rng)) * (g.win_hi[i] - g.win_lo[i]));
        g.sigma_t[i] = 0.1f + 0.3f * u(rng);
    }
    if (sh_degree > 0) {
        // Drawn after the rest, so the degree-0 columns are the same scene's.
        const int per = (sh_degree + 1) * (sh_degree + 1) - 1;
        for (std::size_t i = 0; i < n; ++i)
            for (int c = 0; c < 3; ++c)
                for (int k = 0; k < per; ++k) {
                    const int band = k < 3 ? 1 : k < 8 ? 2 : 3;
                    g.sh[(i * 3 + c) * per + k] = normal(rng) * (0.35f / static_cast<float>(band));
                }
    }
    return g;
}

inline GaussianColumns clustered_scene(std::size_t n) {
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0, 1);
    std::uniform_real_distribution<float> u(0, 1);
    GaussianColumns g;
    g.resize(n);
    std::vector<float> centres(64 * 3);
    for (float& c : centres) c = 4 * nd(rng);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t k = rng() % 64;
        for (int c = 0; c < 3; ++c) {
            g.position[i * 3 + c] = centres[k * 3 + c] + 0.3f * nd(rng);
            g.scale[i * 3 + c] = std::exp(-5.0f + 0.7f * nd(rng));
            g.motion[i * 3 + c] = 0.05f * nd(rng);
        }
        for (int c = 0; c < 4; ++c) g.rotation[i * 4 + c] = nd(rng);
        for (int c = 0; c < 4; ++c) g.color[i * 4 + c] = u(rng);
        const int w = static_cast<int>(i * 10 / n);
        g.win_lo[i] = w;
        g.win_hi[i] = w + 1;
        g.mu_t[i] = static_cast<float>(w + u(rng));
        g.sigma_t[i] = i % 10 == 0 ? INFINITY : 0.05f + 0.3f * u(rng);
    }
    return g;
}

}  // namespace fourdgs::test
