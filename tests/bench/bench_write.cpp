// Writer encode throughput (fourdgs/writer.hpp): a synthetic 1,000,000-gaussian scene, 10 windows,
// SH degree 0, default preset, deflate streams — quantized, encoded, verified by decoding, and
// written to memory. Reported as gaussians/s, MB/s of input columns, bytes per gaussian, and as a
// ratio to memcpy of the same input bytes measured in the same run, so the figure means the same
// thing on any machine.
// Usage: bench_write [gaussians] [threads (0 = all cores)] [codec: deflate|zstd|lz4]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fourdgs/writer.hpp"

using namespace fourdgs;
using Clock = std::chrono::steady_clock;

namespace {

template <class F>
double best_seconds(F&& fn, int runs) {
    double best = 1e30;
    for (int r = 0; r < runs; ++r) {
        const auto t0 = Clock::now();
        fn();
        best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
    const unsigned threads = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 0;
    const std::string codec_name = argc > 3 ? argv[3] : "deflate";

    // A capture-like scene: clustered positions, small scales, 10 windows of 1 s, soft fades.
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0, 1);
    std::uniform_real_distribution<float> u(0, 1);
    std::vector<float> position(n * 3), scale(n * 3), rotation(n * 4), color(n * 4), motion(n * 3),
        mu_t(n), sigma_t(n);
    std::vector<double> win_lo(n), win_hi(n);
    std::vector<float> centres(64 * 3);
    for (float& c : centres) c = 4 * nd(rng);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t k = rng() % 64;
        for (int c = 0; c < 3; ++c) {
            position[i * 3 + c] = centres[k * 3 + c] + 0.3f * nd(rng);
            scale[i * 3 + c] = std::exp(-5.0f + 0.7f * nd(rng));
            motion[i * 3 + c] = 0.05f * nd(rng);
        }
        for (int c = 0; c < 4; ++c) rotation[i * 4 + c] = nd(rng);
        for (int c = 0; c < 4; ++c) color[i * 4 + c] = u(rng);
        const int w = static_cast<int>(i * 10 / n);
        win_lo[i] = w;
        win_hi[i] = w + 1;
        mu_t[i] = static_cast<float>(w + u(rng));
        sigma_t[i] = i % 10 == 0 ? INFINITY : 0.05f + 0.3f * u(rng);
    }
    SceneInput scene;
    scene.header.duration_sec = 10;
    GaussianBatch& b = scene.gaussians;
    b.count = n;
    b.position = position;
    b.scale = scale;
    b.rotation = rotation;
    b.color = color;
    b.motion = motion;
    b.mu_t = mu_t;
    b.sigma_t = sigma_t;
    b.win_lo = win_lo;
    b.win_hi = win_hi;
    const std::size_t input_bytes =
        (position.size() + scale.size() + rotation.size() + color.size() + motion.size() +
         mu_t.size() + sigma_t.size()) * sizeof(float) +
        (win_lo.size() + win_hi.size()) * sizeof(double);

    WriterOptions opt;  // default preset, deflate level 6
    opt.threads = threads;
    if (codec_name == "zstd") {
        opt.codec = codec::zstd;
        opt.level = 3;
    } else if (codec_name == "lz4") {
        opt.codec = codec::lz4;
        opt.level = 0;
    }

    std::size_t file_bytes = 0;
    WriteReport report;
    const int runs = n >= 1000000 ? 3 : 5;
    const double write_s = best_seconds(
        [&] {
            auto r = write_scene(scene, opt, &report);
            if (!r.ok()) {
                std::fprintf(stderr, "write failed: %s\n", r.error().describe().c_str());
                std::exit(1);
            }
            file_bytes = r->size();
        },
        runs);

    // memcpy of the same input bytes, same run.
    std::vector<std::uint8_t> src(input_bytes, 1), dst(input_bytes);
    const double memcpy_s = best_seconds(
        [&] {
            std::memcpy(dst.data(), src.data(), input_bytes);
            asm volatile("" ::"r"(dst.data()) : "memory");
        },
        10);

    const unsigned used = threads ? threads : std::thread::hardware_concurrency();
    std::printf("bench_write: %zu gaussians, 10 windows, SH 0, default preset, %s streams, "
                "%u thread(s), %u chunks\n",
                n, codec_name.c_str(), used, report.chunk_count);
    std::printf("  encode+verify+write  %.3f s   %.2f M gaussians/s   %.1f MB/s of input (%zu B)\n",
                write_s, n / write_s / 1e6, input_bytes / write_s / 1e6, input_bytes);
    std::printf("  output               %zu bytes, %.2f bytes/gaussian (input %.0f bytes/gaussian)\n",
                file_bytes, double(file_bytes) / n, double(input_bytes) / n);
    std::printf("  memcpy of the input  %.4f s   %.1f GB/s   writer is %.1fx slower than memcpy\n",
                memcpy_s, input_bytes / memcpy_s / 1e9, write_s / memcpy_s);
    std::printf("  declared bounds:");
    for (const auto& [k, v] : report.quantization.bounds) std::printf(" %s=%s", k.c_str(), v.c_str());
    std::printf("\n");
    return 0;
}
