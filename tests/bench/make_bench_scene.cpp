// Writes the benchmark scene of issue 14 with our writer: N gaussians (default 1,000,000),
// 10 windows over 10 s, SH degree 0, the default preset, random positions, scales, colours and
// rotations, per-stream deflate (or the codec named). Deterministic for a given N and codec.
//   usage: make_bench_scene OUT [gaussians] [deflate|zstd|lz4] [threads]
#include <fourdgs/fourdgs.hpp>
#include <fourdgs/writer.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sys/resource.h>
#include <string>
#include <vector>

namespace {
double cpu_seconds() {  // this process, every thread, user + system
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}
}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr,
                     "usage: make_bench_scene OUT [gaussians] [deflate|zstd|lz4] [threads]\n");
        return 2;
    }
    const std::size_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000000;
    const std::string codec = argc > 3 ? argv[3] : "deflate";
    const unsigned threads = argc > 4 ? static_cast<unsigned>(std::atoi(argv[4])) : 0;
    const int windows = 10;
    const double duration = 10.0;

    std::mt19937_64 rng(14);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    std::normal_distribution<float> normal(0.f, 1.f);
    std::vector<float> pos(n * 3), scale(n * 3), rot(n * 4), color(n * 4), motion(n * 3), mu(n),
        sigma(n);
    std::vector<double> lo(n), hi(n);
    for (std::size_t i = 0; i < n; ++i) {
        for (int c = 0; c < 3; ++c) {
            pos[i * 3 + c] = 4.f * u(rng) - 2.f;
            scale[i * 3 + c] = 0.005f + 0.02f * u(rng);
            motion[i * 3 + c] = 0.2f * u(rng) - 0.1f;
        }
        // A uniformly random unit quaternion: a normalized 4D gaussian sample.
        float q[4], norm = 0;
        for (float& v : q) {
            v = normal(rng);
            norm += v * v;
        }
        norm = std::sqrt(norm);
        for (int c = 0; c < 4; ++c) rot[i * 4 + c] = q[c] / norm;
        for (int c = 0; c < 4; ++c) color[i * 4 + c] = u(rng);
        const int w = static_cast<int>(i % windows);
        lo[i] = w * (duration / windows);
        hi[i] = lo[i] + duration / windows;
        mu[i] = static_cast<float>(lo[i] + (0.1 + 0.8 * u(rng)) * (hi[i] - lo[i]));
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

    fourdgs::WriterOptions opt;
    opt.codec = codec == "zstd" ? fourdgs::codec::zstd
                : codec == "lz4" ? fourdgs::codec::lz4
                                 : fourdgs::codec::deflate;
    opt.level = codec == "zstd" ? 3 : codec == "lz4" ? 0 : 6;
    opt.threads = threads;
    const double c0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    auto file = fourdgs::write_scene(scene, opt);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_seconds() - c0;
    if (!file) {
        std::fprintf(stderr, "write failed: %s\n", file.error().describe().c_str());
        return 1;
    }
    std::FILE* f = std::fopen(argv[1], "wb");
    if (!f || std::fwrite(file->data(), 1, file->size(), f) != file->size() || std::fclose(f)) {
        std::fprintf(stderr, "cannot write %s\n", argv[1]);
        return 1;
    }
    std::printf("%s: %zu gaussians, %s, %zu bytes (%.2f bytes/gaussian), encoded with "
                "verification in %.3f s wall, %.3f s cpu (all threads)\n",
                argv[1], n, codec.c_str(), file->size(), double(file->size()) / double(n), secs,
                cpu);
    return 0;
}
