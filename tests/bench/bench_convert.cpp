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

    // The reference of each keyframe-delta delta (KeyframeWriterOptions::cheaper_reference):
    // always chained against the smaller of chained and keyframe-referenced — estimated, one
    // encoding a delta (the default), or both encoded and the smaller kept (exact) — on this
    // sequence, on it with 10 % deforming, and on motion that comes back: the first 4 frames
    // looped, and the first 4 played forward and back (ping-pong), each over 3 × frames frames.
    std::printf("\nkeyframe-delta, a keyframe every second: each delta chained, or the smaller of "
                "chained and keyframe-referenced, estimated or exact\n\n");
    std::printf("| sequence | parts | all chained | estimated | exact | estimated x exact | "
                "keyframe-referenced (estimated / exact) | encode time x chained (estimated / "
                "exact) |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    test::RigidSceneShape deform = shape;
    deform.part_a_share = deform.part_b_share = 0.25;
    const auto deforming_seq = test::rigid_scene(frames, n, fps, 18, deform);
    auto replay = [&](std::initializer_list<std::size_t> pattern) {
        std::vector<PlyCloud> out;
        while (out.size() < 3 * frames)
            for (std::size_t k : pattern)
                if (out.size() < 3 * frames) out.push_back(deforming_seq[k]);
        return out;
    };
    const auto looped = replay({0, 1, 2, 3});
    const auto pingpong = replay({0, 1, 2, 3, 2, 1});
    struct Sequence {
        const char* name;
        const std::vector<PlyCloud>* frames;
    };
    const Sequence sequences[] = {{"static + 2 rigid", &seq},
                                  {"static + 2 rigid + 10 % deforming", &deforming_seq},
                                  {"looped every 4 frames", &looped},
                                  {"ping-pong over 4 frames", &pingpong}};
    for (const Sequence& q : sequences)
        for (bool rigid : {false, true}) {
            // all chained, estimated, exact
            std::uint64_t bytes[3] = {0, 0, 0};
            double sec[3] = {0, 0, 0};
            std::uint32_t keyed[3] = {0, 0, 0}, deltas = 0;
            for (int way = 0; way < 3; ++way) {
                ConvertOptions o;
                o.fps = fps;
                o.shape = ConvertShape::keyframe_delta;
                o.rigid_parts = rigid;
                o.never_larger_than_per_frame = false;
                o.cheaper_reference = way != 0;
                o.reference_choice = way == 2 ? ModeChoice::compress_both : ModeChoice::estimate;
                MemorySink sink;
                ConvertReport rep;
                const auto t0 = Clock::now();
                const Status st = convert_frames(*q.frames, o, sink, &rep);
                sec[way] = std::chrono::duration<double>(Clock::now() - t0).count();
                if (!st.ok()) {
                    std::fprintf(stderr, "%s: %s\n", q.name, st.error().describe().c_str());
                    return 1;
                }
                bytes[way] = rep.output_bytes;
                keyed[way] = rep.keyframe_referenced;
                deltas = rep.deltas;
            }
            std::printf("| %s (%zu frames) | %s | %llu | %llu | %llu | %.4f | %u / %u of %u | "
                        "%.2f / %.2f |\n",
                        q.name, q.frames->size(), rigid ? "objects" : "none",
                        static_cast<unsigned long long>(bytes[0]),
                        static_cast<unsigned long long>(bytes[1]),
                        static_cast<unsigned long long>(bytes[2]),
                        double(bytes[1]) / double(bytes[2]), keyed[1], keyed[2], deltas,
                        sec[1] / sec[0], sec[2] / sec[0]);
        }
    return 0;
}
