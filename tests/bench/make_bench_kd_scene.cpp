// Writes the keyframe-delta benchmark scene of issue 25 with the keyframe writer: N gaussians
// (default 1,000,000, the size of make_bench_scene's), a state every 1/30 s for `seconds`
// (default 10), a keyframe every 30 states, chained deltas; `moving` percent of the gaussians
// (default 10) move a little at each step, SH degree 0, never fading, the default preset,
// deflate. The motion repeats every `keyframe_every` states (each GOP holds the same moves), so
// the input stays at that many position arrays whatever the length. Deterministic.
//   usage: make_bench_kd_scene OUT [gaussians] [seconds] [moving %] [keyframe_every]
#include <fourdgs/fourdgs.hpp>
#include <fourdgs/keyframe_writer.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    using namespace fourdgs;
    if (argc < 2) {
        std::fprintf(stderr, "usage: make_bench_kd_scene OUT [gaussians] [seconds] [moving %%] "
                             "[keyframe_every]\n");
        return 2;
    }
    const std::size_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000000;
    const double seconds = argc > 3 ? std::strtod(argv[3], nullptr) : 10.0;
    const double moving = argc > 4 ? std::strtod(argv[4], nullptr) / 100.0 : 0.10;
    const std::uint32_t every = argc > 5 ? static_cast<std::uint32_t>(std::atoi(argv[5])) : 30;
    const double dt = 1.0 / 30.0;
    const std::size_t steps = static_cast<std::size_t>(std::llround(seconds * 30));

    std::mt19937_64 rng(25);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    std::normal_distribution<float> normal(0.f, 1.f);
    std::vector<std::uint32_t> ids(n);
    std::vector<float> scale(n * 3), rotation(n * 4), color(n * 4), sigma(n);
    for (std::size_t i = 0; i < n; ++i) {
        ids[i] = static_cast<std::uint32_t>(i);
        for (int c = 0; c < 3; ++c) scale[i * 3 + c] = 0.005f + 0.02f * u(rng);
        float q[4], norm = 0;
        for (float& v : q) norm += (v = normal(rng)) * v;
        norm = std::sqrt(norm);
        for (int c = 0; c < 4; ++c) rotation[i * 4 + c] = q[c] / norm;
        for (int c = 0; c < 4; ++c) color[i * 4 + c] = u(rng);
        sigma[i] = std::numeric_limits<float>::infinity();
    }
    // One position array per state of a GOP; state s uses s % every.
    std::vector<std::vector<float>> positions(std::min<std::size_t>(every, steps));
    positions[0].resize(n * 3);
    for (float& p : positions[0]) p = 4.f * u(rng) - 2.f;
    const std::size_t per_step = static_cast<std::size_t>(moving * static_cast<double>(n));
    for (std::size_t s = 1; s < positions.size(); ++s) {
        positions[s] = positions[s - 1];
        for (std::size_t k = 0; k < per_step; ++k) {
            const std::size_t i = rng() % n;
            for (int c = 0; c < 3; ++c) {
                float& p = positions[s][i * 3 + c];
                p = std::min(2.f, std::max(-2.f, p + (u(rng) - 0.5f) * 0.02f));
            }
        }
    }
    std::vector<KeyframeStep> input(steps);
    for (std::size_t s = 0; s < steps; ++s) {
        KeyframeStep& st = input[s];
        st.t0 = dt * static_cast<double>(s);
        st.ids = ids;
        GaussianBatch& b = st.gaussians;
        b.count = n;
        b.position = positions[s % positions.size()];
        b.scale = scale;
        b.rotation = rotation;
        b.color = color;
        b.sigma_t = sigma;
    }
    SceneHeader header;
    header.duration_sec = dt * static_cast<double>(steps);
    KeyframeWriterOptions opt;
    opt.keyframe_every = every;
    auto sink = FileSink::create(argv[1]);
    if (!sink) {
        std::fprintf(stderr, "%s\n", sink.error().describe().c_str());
        return 1;
    }
    const auto t0 = std::chrono::steady_clock::now();
    KeyframeWriteReport report;
    Status st = write_keyframe_delta(input, header, opt, *sink, &report);
    if (st.ok()) st = sink->close();
    if (!st.ok()) {
        std::fprintf(stderr, "write failed: %s\n", st.error().describe().c_str());
        return 1;
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s: %zu gaussians x %zu states (%u keyframes, %u deltas), %llu bytes, written "
                "in %.1f s\n",
                argv[1], n, steps, report.keyframes, report.deltas,
                static_cast<unsigned long long>(report.base.bytes_written), secs);
    return 0;
}
