// Decode benchmark: a synthetic 1,000,000-gaussian gaussian-birth scene (10 windows, SH degree
// 0, default preset) written by our writer, then decoded by the streaming and indexed readers.
// Figures are ratios measured in one run — decode throughput ÷ memcpy of the same output bytes —
// because the machines we run on are shared and noisy.
//   usage: bench_decode [gaussians] [repeats]
#include <fourdgs/fourdgs.hpp>
#include <fourdgs/writer.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "best_seconds.hpp"

namespace {

std::size_t block_bytes(const fourdgs::GaussianBlock& b) {
    auto sz = [](const auto& v) { return v.size() * sizeof(v[0]); };
    return sz(b.position) + sz(b.scale) + sz(b.rotation) + sz(b.color) + sz(b.motion) +
           sz(b.mu_t) + sz(b.sigma_t) + sz(b.win_lo) + sz(b.win_hi) + sz(b.flags) +
           sz(b.window_index) + sz(b.object_id) + sz(b.sh);
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
    const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
    const int windows = 10;
    const double duration = 10.0;

    // A deterministic synthetic scene: positions in a 4-unit cube, one window per second.
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    std::vector<float> pos(n * 3), scale(n * 3), rot(n * 4), color(n * 4), motion(n * 3), mu(n),
        sigma(n);
    std::vector<double> lo(n), hi(n);
    for (std::size_t i = 0; i < n; ++i) {
        for (int c = 0; c < 3; ++c) {
            pos[i * 3 + c] = 4.f * u(rng) - 2.f;
            scale[i * 3 + c] = 0.005f + 0.02f * u(rng);
            motion[i * 3 + c] = 0.2f * u(rng) - 0.1f;
        }
        for (int c = 0; c < 4; ++c) rot[i * 4 + c] = u(rng) - 0.5f;
        for (int c = 0; c < 4; ++c) color[i * 4 + c] = u(rng);
        const int w = static_cast<int>(i % windows);
        lo[i] = w * (duration / windows);
        hi[i] = lo[i] + duration / windows;
        mu[i] = static_cast<float>(lo[i] + 0.5 * (hi[i] - lo[i]));
        sigma[i] = 0.1f + 0.3f * u(rng);
    }
    fourdgs::SceneInput scene;
    scene.header.duration_sec = duration;
    scene.gaussians.count = n;
    scene.gaussians.position = pos;
    scene.gaussians.scale = scale;
    scene.gaussians.rotation = rot;
    scene.gaussians.color = color;
    scene.gaussians.motion = motion;
    scene.gaussians.mu_t = mu;
    scene.gaussians.sigma_t = sigma;
    scene.gaussians.win_lo = lo;
    scene.gaussians.win_hi = hi;

    std::printf("bench_decode: %zu gaussians, %d windows, SH 0, default preset, best of %d\n", n,
                windows, repeats);
    for (std::uint8_t codec : {fourdgs::codec::deflate, fourdgs::codec::zstd, fourdgs::codec::lz4}) {
        fourdgs::WriterOptions opt;
        opt.codec = codec;
        auto file = fourdgs::write_scene(scene, opt);
        if (!file) {
            std::fprintf(stderr, "write failed: %s\n", file.error().describe().c_str());
            return 1;
        }
        fourdgs::MemorySource src(*file);
        auto reader = fourdgs::IndexedReader::open(src);
        if (!reader) {
            std::fprintf(stderr, "open failed: %s\n", reader.error().describe().c_str());
            return 1;
        }
        std::vector<fourdgs::DecodeWorkspace> pool;
        fourdgs::GaussianBlock all;
        // Warm the buffers once: first-touch page faults are not decode work.
        if (auto st = reader->read_all(all, pool, 1); !st) return 1;
        const std::size_t out_bytes = block_bytes(all);
        std::vector<std::uint8_t> a(out_bytes, 1), b(out_bytes);
        const double t_memcpy = best_seconds(repeats, [&] { std::memcpy(b.data(), a.data(), out_bytes); });

        const double t1 = best_seconds(repeats, [&] { (void)reader->read_all(all, pool, 1); });
        const double t2 = best_seconds(repeats, [&] { (void)reader->read_all(all, pool, 2); });
        const double ts = best_seconds(repeats, [&] {
            fourdgs::MemorySource s(*file);
            fourdgs::StreamingReader sr(s);
            fourdgs::GaussianBlock chunk;
            (void)sr.open();
            while (true) {
                auto more = sr.next_chunk(chunk);
                if (!more || !*more) break;
            }
        });
        fourdgs::Frame frame;
        fourdgs::GaussianBlock instant;
        (void)reader->read_instant(5.5, instant, pool, 2);
        const double te = best_seconds(repeats, [&] {
            fourdgs::evaluate(instant, 5.5, reader->scene().header.cutoff, frame);
        });
        std::uint64_t seek = 0;
        for (std::size_t i : reader->chunks_for(5.5)) seek += reader->fetch_cost(i);

        const double mb = out_bytes / 1e6;
        std::printf("\ncodec %-16s file %.1f MB (%.2f bytes/gaussian), decoded columns %.1f MB\n",
                    fourdgs::codec_name(codec).c_str(), file->size() / 1e6,
                    double(file->size()) / n, mb);
        std::printf("  memcpy of the decoded bytes       %8.0f MB/s  (1.000x)\n", mb / t_memcpy);
        std::printf("  indexed read_all, 1 thread        %8.0f MB/s  %.3fx memcpy  %.1f M gaussians/s\n",
                    mb / t1, t_memcpy / t1, n / t1 / 1e6);
        std::printf("  indexed read_all, 2 threads       %8.0f MB/s  %.3fx memcpy  %.1f M gaussians/s\n",
                    mb / t2, t_memcpy / t2, n / t2 / 1e6);
        std::printf("  streaming, chunk by chunk         %8.0f MB/s  %.3fx memcpy\n", mb / ts,
                    t_memcpy / ts);
        std::printf("  evaluate at t=5.5 (%zu of %zu)   %8.1f M gaussians/s\n", frame.count,
                    instant.count, instant.count / te / 1e6);
        std::printf("  seek to t=5.5 reads %llu of %zu bytes (%.1f%% of the file)\n",
                    static_cast<unsigned long long>(seek), file->size(),
                    100.0 * double(seek) / double(file->size()));
    }
    return 0;
}
