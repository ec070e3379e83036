// What convert makes of a tracked frame sequence (fourdgs/tools/convert.hpp, issue 18's table):
// FRAMES frames of GAUSSIANS gaussians (tests/support/rigid_frames.hpp: a static floor, a ball
// spinning while it translates, a box turning while it drifts, and optionally a rippling sheet),
// converted in one run per frame, adaptive and keyframe-delta, each with and without rigid parts
// as objects, at the default preset's tolerance. Per row: the file's bytes, its ratio to the
// per-frame file, the declared position bound beside the tolerance, the parts found, and the
// encode time as a ratio to the per-frame encode of the same run.
//
// Usage: bench_convert [frames (10)] [gaussians (20000)] [deforming share (0)]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fourdgs/tools/convert.hpp"
#include "support/rigid_frames.hpp"

using namespace fourdgs;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
    const std::size_t frames = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10;
    const std::size_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20000;
    const double deforming = argc > 3 ? std::strtod(argv[3], nullptr) : 0.0;
    const double fps = 30;
    test::RigidSceneShape shape;
    shape.static_share = 0.4;
    shape.part_a_share = shape.part_b_share = (1 - 0.4 - deforming) / 2;
    const auto seq = test::rigid_scene(frames, n, fps, 18, shape);
    std::printf("%zu frames x %zu gaussians: static 40%%, two rigid parts %.0f%% each, "
                "deforming %.0f%%\n\n",
                frames, n, shape.part_a_share * 100, deforming * 100);
    std::printf("| conversion | bytes | x per-frame | pos tolerance | pos bound declared | "
                "static / objects / other | encode time x per-frame |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    struct Row {
        const char* name;
        ConvertShape shape;
        bool rigid;
    };
    const Row rows[] = {{"per frame", ConvertShape::per_frame, false},
                        {"--tracked --no-rigid-parts (adaptive)", ConvertShape::adaptive, false},
                        {"--tracked (adaptive + rigid objects)", ConvertShape::adaptive, true},
                        {"--tracked --model keyframe-delta --no-rigid-parts",
                         ConvertShape::keyframe_delta, false},
                        {"--tracked --model keyframe-delta", ConvertShape::keyframe_delta, true}};
    double flat_bytes = 0, flat_sec = 0;
    for (const Row& row : rows) {
        ConvertOptions o;
        o.fps = fps;
        o.shape = row.shape;
        o.rigid_parts = row.rigid;
        o.never_larger_than_per_frame = false;  // the shape itself, to compare
        MemorySink sink;
        ConvertReport rep;
        const auto t0 = Clock::now();
        const Status st = convert_frames(seq, o, sink, &rep);
        const double sec = std::chrono::duration<double>(Clock::now() - t0).count();
        if (!st.ok()) {
            std::fprintf(stderr, "%s: %s\n", row.name, st.error().describe().c_str());
            return 1;
        }
        if (row.shape == ConvertShape::per_frame)
            flat_bytes = double(rep.output_bytes), flat_sec = sec;
        std::string parts = "-";
        if (rep.parts_sought) {
            parts = std::to_string(rep.static_part.gaussians) + " / ";
            for (std::size_t j = 0; j < rep.objects.size(); ++j)
                parts += (j ? "+" : "") + std::to_string(rep.objects[j].gaussians);
            if (rep.objects.empty()) parts += "0";
            parts += " / " + std::to_string(rep.other_part.gaussians);
        }
        std::string bound = "?";
        for (const auto& [k, v] : rep.quantization.bounds)
            if (k == "pos") bound = v;
        std::printf("| %s | %.0f KB | %.3f | %.2g | %.2g | %s | %.2f |\n", row.name,
                    double(rep.output_bytes) / 1000, double(rep.output_bytes) / flat_bytes,
                    rep.tolerance.pos, std::strtod(bound.c_str(), nullptr), parts.c_str(),
                    sec / flat_sec);
    }
    return 0;
}
