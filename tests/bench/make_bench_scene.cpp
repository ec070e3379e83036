// Writes the benchmark scene of issue 14 with our writer: N gaussians (default 1,000,000),
// 10 windows over 10 s, SH degree 0 (or the degree given), the default preset, random positions,
// scales, colours and rotations (tests/support/bench_scenes.hpp), per-stream deflate (or the
// codec named), at the effort named. Deterministic for a given N, degree, codec and effort.
// `seconds` (default 10) makes a longer scene of one-second windows (issue 25 plays a 60 s one:
// 6,000,000 gaussians keeps the density of the 10 s scene).
//   usage: make_bench_scene OUT [gaussians] [deflate|zstd|lz4] [threads] [fast|default|max]
//                                [sh_degree] [seconds]
#include <fourdgs/fourdgs.hpp>
#include <fourdgs/writer.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "best_seconds.hpp"
#include "support/bench_scenes.hpp"

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: make_bench_scene OUT [gaussians] [deflate|zstd|lz4] "
                             "[threads] [fast|default|max] [sh_degree] [seconds]\n");
        return 2;
    }
    const std::size_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000000;
    const std::string codec = argc > 3 ? argv[3] : "deflate";
    const unsigned threads = argc > 4 ? static_cast<unsigned>(std::atoi(argv[4])) : 0;
    const std::string effort_name = argc > 5 ? argv[5] : "default";
    const auto effort = fourdgs::parse_effort(effort_name);
    const int sh_degree = argc > 6 ? std::atoi(argv[6]) : 0;
    const int seconds = argc > 7 ? std::max(1, std::atoi(argv[7])) : 10;
    const fourdgs::CodecInfo* info = fourdgs::find_codec(codec);
    if (!effort || !info || sh_degree < 0 || sh_degree > 3) {
        std::fprintf(stderr, "unknown codec, effort or SH degree\n");
        return 2;
    }
    const fourdgs::GaussianColumns g = fourdgs::test::issue14_scene(n, sh_degree, seconds);
    const fourdgs::SceneInput scene = fourdgs::test::scene_of(g, seconds);

    fourdgs::WriterOptions opt;
    opt.codec = info->byte;
    opt.level = codec == "zstd" ? 3 : info->default_level;
    opt.threads = threads;
    opt.effort = *effort;
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
    std::printf("%s: %zu gaussians, SH %d, %s, effort %s, %zu bytes (%.2f bytes/gaussian), "
                "encoded with verification in %.3f s wall, %.3f s cpu (all threads)\n",
                argv[1], n, sh_degree, codec.c_str(), effort_name.c_str(), file->size(),
                double(file->size()) / double(n), secs, cpu);
    return 0;
}
