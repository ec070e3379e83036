// Keyframe-delta seek cost (fourdgs/keyframe_writer.hpp, §11.8): a synthetic sequence of
// `gaussians` gaussians over `steps` steps of 1/30 s, `moving` percent of them moving each step
// (a random choice per step, displaced by up to 1 % of the scene), SH degree 0, default preset,
// deflate streams, mu_t derived by the writer. For cadences 1, 10 and 30, chained versus
// keyframe-referenced deltas, it prints the file size and the bytes a seek to the middle of the
// clip reads (KeyframeDeltaReader::plan(duration / 2).total_bytes(), from the index alone), with
// the chain length, the mean and the largest seek cost over every step's t0 (the middle of a
// 300-step clip is a keyframe at all three cadences), and the write time.
// Usage: bench_keyframe_seek [gaussians = 100000] [steps = 300] [moving percent = 10]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/keyframe_writer.hpp"

using namespace fourdgs;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
    const std::size_t ns = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 300;
    const double moving = argc > 3 ? std::strtod(argv[3], nullptr) / 100.0 : 0.10;
    const double dt = 1.0 / 30.0;

    std::mt19937 rng(42);
    std::uniform_real_distribution<float> u(0, 1);
    std::vector<std::uint32_t> ids(n);
    std::vector<float> scale(n * 3), rotation(n * 4), color(n * 4), sigma(n);
    for (std::size_t i = 0; i < n; ++i) {
        ids[i] = static_cast<std::uint32_t>(i);
        for (int c = 0; c < 3; ++c) scale[i * 3 + c] = 0.005f + 0.02f * u(rng);
        for (int c = 0; c < 4; ++c) rotation[i * 4 + c] = u(rng) - 0.5f;
        rotation[i * 4 + 3] += 1;
        for (int c = 0; c < 4; ++c) color[i * 4 + c] = u(rng);
        sigma[i] = std::numeric_limits<float>::infinity();
    }
    std::vector<std::vector<float>> positions(ns);
    positions[0].resize(n * 3);
    for (float& p : positions[0]) p = u(rng) * 10 - 5;
    const std::size_t per_step = static_cast<std::size_t>(moving * static_cast<double>(n));
    for (std::size_t s = 1; s < ns; ++s) {
        positions[s] = positions[s - 1];
        for (std::size_t k = 0; k < per_step; ++k) {
            const std::size_t i = rng() % n;
            for (int c = 0; c < 3; ++c) {
                float& p = positions[s][i * 3 + c];
                p = std::min(5.0f, std::max(-5.0f, p + (u(rng) - 0.5f) * 0.1f));
            }
        }
    }
    std::vector<KeyframeStep> steps(ns);
    for (std::size_t s = 0; s < ns; ++s) {
        KeyframeStep& st = steps[s];
        st.t0 = dt * static_cast<double>(s);
        st.ids = ids;
        GaussianBatch& b = st.gaussians;
        b.count = n;
        b.position = positions[s];
        b.scale = scale;
        b.rotation = rotation;
        b.color = color;
        b.sigma_t = sigma;
    }
    SceneHeader header;
    header.duration_sec = dt * static_cast<double>(ns);

    std::printf("keyframe-delta seek cost: %zu gaussians x %zu steps, %.0f %% moving per step\n",
                n, ns, moving * 100);
    std::printf("%-8s %-21s %12s %11s %12s %6s %12s %12s %8s\n", "cadence", "deltas",
                "file bytes", "bytes/step", "mid seek B", "chain", "mean seek B", "max seek B",
                "write s");
    for (std::uint32_t cadence : {1u, 10u, 30u}) {
        for (bool chained : {true, false}) {
            if (cadence == 1 && !chained) continue;  // no deltas: the same file
            KeyframeWriterOptions opt;
            opt.keyframe_every = cadence;
            opt.chained = chained;
            opt.base.threads = 1;
            MemorySink sink;
            const auto t0 = Clock::now();
            Status st = write_keyframe_delta(steps, header, opt, sink);
            const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
            if (!st.ok()) {
                std::fprintf(stderr, "write failed: %s\n", st.error().describe().c_str());
                return 1;
            }
            std::vector<std::uint8_t> bytes = sink.take();
            MemorySource src(bytes);
            auto reader = KeyframeDeltaReader::open(src);
            if (!reader.ok()) {
                std::fprintf(stderr, "open failed: %s\n", reader.error().describe().c_str());
                return 1;
            }
            auto plan = reader->plan(header.duration_sec / 2);
            if (!plan.ok()) {
                std::fprintf(stderr, "plan failed: %s\n", plan.error().describe().c_str());
                return 1;
            }
            std::uint64_t worst = 0;
            double mean = 0;
            for (const KeyframeStep& st : steps) {
                auto p = reader->plan(st.t0);
                if (!p.ok()) return 1;
                worst = std::max(worst, p->total_bytes());
                mean += static_cast<double>(p->total_bytes()) / static_cast<double>(ns);
            }
            std::printf("%-8u %-21s %12zu %11.0f %12llu %6zu %12.0f %12llu %8.1f\n", cadence,
                        cadence == 1 ? "(none: all keyframes)"
                        : chained    ? "chained"
                                     : "keyframe-referenced",
                        bytes.size(), static_cast<double>(bytes.size()) / static_cast<double>(ns),
                        static_cast<unsigned long long>(plan->total_bytes()), plan->chain.size(),
                        mean, static_cast<unsigned long long>(worst), secs);
            std::fflush(stdout);
        }
    }
    return 0;
}
