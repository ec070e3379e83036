// Writes a tracked PLY frame sequence for the long-capture benchmark (tests/bench/long_capture.sh)
// and for trying plan --tracked by hand: tests/support/rigid_frames.hpp's scene — a static floor
// (40 %), two rigid bodies spinning while they translate, and a rippling sheet (the deforming
// share) — FRAMES binary PLY files of GAUSSIANS gaussians each (SH degree 0: 68 bytes a gaussian),
// one frame in memory at a time, named frame_00000.ply, frame_00001.ply, ... — or, with the
// format `splat`, antimatter15 .splat frames named as splat4d names them (frame_0000.splat, ...;
// for tests/bench/bench_vs_splat4d.py). write_splat sorts by scale and opacity, which no gaussian
// of the scene changes, so every frame keeps one order: the sequence stays tracked.
//
//   usage: make_tracked_frames DIR FRAMES GAUSSIANS [deforming share (0.1)] [fps (30)] [ply|splat]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "fourdgs/io.hpp"
#include "fourdgs/tools/ply.hpp"
#include "fourdgs/tools/splat_formats.hpp"
#include "support/rigid_frames.hpp"

using namespace fourdgs;

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr,
                     "usage: make_tracked_frames DIR FRAMES GAUSSIANS [deforming (0.1)] [fps (30)] "
                     "[ply|splat]\n");
        return 2;
    }
    const std::string dir = argv[1];
    const std::size_t frames = std::strtoull(argv[2], nullptr, 10);
    const std::size_t n = std::strtoull(argv[3], nullptr, 10);
    const double deforming = argc > 4 ? std::strtod(argv[4], nullptr) : 0.1;
    const double fps = argc > 5 ? std::strtod(argv[5], nullptr) : 30;
    const bool splat = argc > 6 && std::string(argv[6]) == "splat";
    test::RigidSceneShape shape;
    shape.static_share = 0.4;
    shape.part_a_share = shape.part_b_share = (1 - 0.4 - deforming) / 2;
    std::filesystem::create_directories(dir);
    const test::RigidScene scene(n, fps, 18, shape);
    std::uint64_t bytes = 0;
    for (std::size_t f = 0; f < frames; ++f) {
        char name[32];
        std::snprintf(name, sizeof name, splat ? "/frame_%04zu.splat" : "/frame_%05zu.ply", f);
        auto sink = FileSink::create(dir + name);
        Status st = !sink.ok() ? Status(std::move(sink).error())
                    : splat    ? sink->write(write_splat(scene.frame(f)))
                               : write_ply(scene.frame(f), *sink);
        if (st.ok()) st = sink->close();
        if (!st.ok()) {
            std::fprintf(stderr, "%s%s: %s\n", dir.c_str(), name, st.error().describe().c_str());
            return 1;
        }
        bytes += sink->position();
    }
    std::printf("%zu frames x %zu gaussians (deforming %.0f%%) at %g fps -> %s (%.2f GB)\n", frames,
                n, deforming * 100, fps, dir.c_str(), double(bytes) / 1e9);
    return 0;
}
