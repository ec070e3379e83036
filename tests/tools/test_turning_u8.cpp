// Bodies turning every frame, their rotations on a .splat's u8 grid, at splat4d's exact presets
// (issue 39, rot39): rotation within 1/256 (half a step of the input's 1/128), position 2 mm,
// colour and opacity 4 or 2 levels, scale 2 or 1 %. There the input's own rounding spends the
// whole rotation bound: the rounded quaternion, normalized as every comparison takes it, strays
// from the body's true rotation by up to ~0.73 of a 1/128 step, so no one rotation held in a
// body's frame stays within 1/256 of every frame's (docs/performance.md, "Rotations held in a
// body's frame at splat4d's exact presets"). Whatever the converter then chooses per gaussian
// (a part, a rider, or the scene's frame), every frame must come back within every bound.
// Property: over generated sequences (two bodies turning every frame, rigid or drifting, a still
// floor and a rippling sheet; rotations and colours on the u8 levels a .splat holds), every
// frame reconstructs within the tolerance per attribute, and the same bytes come out twice — in
// memory and streamed, with the keyframes the converter chooses and with a keyframe every 4.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "fourdgs/io.hpp"
#include "fourdgs/tools/convert.hpp"
#include "fourdgs/tools/grid_plan.hpp"
#include "support/convert_streamed.hpp"
#include "support/rigid_frames.hpp"
#include "support/validity.hpp"

using namespace fourdgs;

namespace {

constexpr double kFps = 8;

// splat4d's default (colour 4 levels, scale 2 %) or fine (2 levels, 1 %) bounds as a tolerance,
// rotation half the input's step (bench_vs_splat4d.py's mapping of its "exact").
ConvertOptions options(bool fine, std::uint32_t keyframe_every) {
    ConvertOptions o;
    o.fps = kFps;
    o.shape = ConvertShape::keyframe_delta;
    o.keyframe_every = keyframe_every;
    o.rigid_min_members = 32;
    o.error_frames = 12;  // every frame of the sequences below
    const double levels = fine ? 2 : 4;
    QuantBounds& t = *(o.tolerance = preset_tolerance(o.writer.preset, 4));
    std::tie(t.pos, t.rot, t.rgb, t.alpha, t.scale_rel) =
        std::tuple(0.002, 1.0 / 256, levels / 255, levels / 255, std::log1p(fine ? 0.01 : 0.02));
    return o;
}

// A value on the u8 levels of a .splat: colour and opacity round(v × 255) / 255, a rotation
// component (of the unit quaternion) round(q × 128 + 128) clamped to [0, 255], less 128, / 128.
float colour_level(float v) {
    return static_cast<float>(std::round(std::clamp(v, 0.0f, 1.0f) * 255) / 255);
}
float rotation_level(double q) {
    return static_cast<float>((std::clamp(std::round(q * 128 + 128), 0.0, 255.0) - 128) / 128);
}

// `frames` as a .splat sequence holds them: every rotation and colour on its u8 levels.
std::vector<PlyCloud> on_splat_levels(std::vector<PlyCloud> frames) {
    for (PlyCloud& f : frames) {
        for (float& v : f.color) v = colour_level(v);
        for (std::size_t g = 0; g < f.count; ++g) {
            float* q = &f.rotation[g * 4];
            const double len = std::sqrt(double(q[0]) * q[0] + double(q[1]) * q[1] +
                                         double(q[2]) * q[2] + double(q[3]) * q[3]);
            for (int c = 0; c < 4; ++c) q[c] = rotation_level(q[c] / len);
        }
    }
    return frames;
}

// Every frame of `frames` was measured (convert's own decode of the file, each gaussian paired
// with its input gaussian by the id the conversion gave it: nearest-position pairing mismatches
// neighbours closer than the position bound) and is within the tolerance per attribute.
void check_measured_within(const ConvertReport& rep, const std::vector<PlyCloud>& frames) {
    REQUIRE(rep.error_frames.size() == frames.size());
    const QuantBounds& t = rep.tolerance;
    struct Bound {
        const char* name;
        double bound;
        std::size_t components;  // samples a gaussian gives a frame
    };
    const Bound bounds[] = {{"pos", t.pos, 3}, {"rot", t.rot, 1}, {"rgb", t.rgb, 3},
                            {"alpha", t.alpha, 1}, {"scale_rel", t.scale_rel, 3}};
    for (const auto& [name, bound, components] : bounds) {
        const auto e = std::find_if(rep.error.begin(), rep.error.end(),
                                    [&](const AttributeError& a) { return a.name == name; });
        REQUIRE(e != rep.error.end());
        INFO(name << ": " << e->max << " against " << bound);
        // Every gaussian paired, at every frame.
        CHECK(e->samples == frames.size() * frames.front().count * components);
        CHECK(e->max <= bound * (1 + 1e-6));
    }
}

}  // namespace

TEST_CASE("turning bodies on u8 rotations (property): at splat4d's exact presets every frame "
          "reconstructs within the tolerance, deterministically") {
    struct Case {
        unsigned seed;
        double drift;  // the bodies' gaussians' own wander (riders where it is not 0)
        bool fine;
        std::uint32_t keyframe_every;  // 0: the converter chooses (one keyframe and seek points)
    };
    const Case cases[] = {{71, 0, false, 0}, {72, 0.004, false, 0}, {73, 0.004, true, 4},
                          {74, 0.002, true, 0}, {75, 0, true, 4}};
    for (const Case& k : cases) {
        const test::RigidSceneShape shape{0.4, 0.25, 0.25, 0, k.drift};
        const auto frames = on_splat_levels(test::rigid_scene(12, 640, kFps, k.seed, shape));
        const ConvertOptions o = options(k.fine, k.keyframe_every);
        for (bool streamed : {false, true}) {
            INFO("seed " << k.seed << ", drift " << k.drift << (k.fine ? ", fine" : ", default")
                         << ", keyframe every " << k.keyframe_every
                         << (streamed ? ", streamed" : ", in memory"));
            ConvertReport rep, again;
            const auto bytes = test::convert_tracked(frames, o, streamed, rep);
            CHECK(test::convert_tracked(frames, o, streamed, again) == bytes);
            REQUIRE(rep.tolerance == *o.tolerance);
            check_measured_within(rep, frames);
            test::check_valid(bytes, true);
        }
    }
}
