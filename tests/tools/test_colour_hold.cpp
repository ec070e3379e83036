// Keyframe-delta holds colour and snaps still rotations (convert_keyframe_delta.cpp's ColourHold
// and RotationSnap, issue 39): on a colour grid three times finer than the tolerance, a gaussian
// keeps one bin through a GOP wherever one lies within the tolerance of every frame's colour,
// and otherwise holds a bin until a frame strays past it; a gaussian stored in the scene's frame
// has its rotation bins on a coarser sub-lattice of the rotation grid where the tolerance allows.
// Property: over generated sequences whose colours stay still, wobble within the tolerance,
// drift past it, and sit at 0 and 1 (with and without riders, in memory and streamed), every
// frame reconstructs within the tolerance per attribute, the same bytes come out twice, a colour
// that wobbles within the tolerance decodes to one value through each GOP, and still gaussians'
// rotation bins are even where the rotation grid is at most half the tolerance.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "fourdgs/io.hpp"
#include "fourdgs/tools/convert.hpp"
#include "fourdgs/tools/grid_plan.hpp"
#include "support/convert_streamed.hpp"
#include "support/frame_checks.hpp"
#include "support/rigid_frames.hpp"
#include "support/validity.hpp"

using namespace fourdgs;

namespace {

constexpr double kFps = 8;
constexpr std::uint32_t kGop = 4;

ConvertOptions options() {
    ConvertOptions o;
    o.fps = kFps;
    o.shape = ConvertShape::keyframe_delta;
    o.keyframe_every = kGop;
    o.rigid_min_members = 32;
    // Position 2 mm (the scene's gaussians pair by nearest position), then splat4d's relaxed
    // bounds: rotation a step of 1/128, colour and opacity 4 levels, scale 2 %.
    QuantBounds& t = *(o.tolerance = preset_tolerance(o.writer.preset, 4));
    std::tie(t.pos, t.rot, t.rgb, t.alpha, t.scale_rel) =
        std::tuple(0.002, 1.0 / 128, 4.0 / 255, 4.0 / 255, 0.02);
    return o;
}

// How gaussian g's colour moves: still, a wobble of up to ±2 levels about its base (a range of
// 4, within what a bin of the finer grid covers: 2 × 4 − 8/3 levels), a drift of a level a
// frame (past the tolerance within a GOP), or still at 0 or 1.
enum class Colour { still, wobble, drift, extreme };
Colour colour_of(std::size_t g) { return static_cast<Colour>(g % 4); }

// `frames` with their colours moved as colour_of says, on the 8-bit levels of a .splat.
std::vector<PlyCloud> coloured(std::vector<PlyCloud> frames, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    const std::size_t n = frames.front().count;
    std::vector<double> base(3 * n), phase(3 * n);
    for (std::size_t i = 0; i < 3 * n; ++i) {
        base[i] = std::round(20 + 215 * u(rng));
        phase[i] = u(rng);
    }
    for (std::size_t f = 0; f < frames.size(); ++f)
        for (std::size_t g = 0; g < n; ++g)
            for (int c = 0; c < 3; ++c) {
                const std::size_t i = g * 3 + c;
                double level = base[i];
                switch (colour_of(g)) {
                    case Colour::still: break;
                    case Colour::wobble:
                        level += std::round(2 * std::sin(6.28 * (phase[i] + 0.37 * double(f))));
                        break;
                    case Colour::drift: level += (c == 1 ? -1.0 : 1.0) * double(f); break;
                    case Colour::extreme: level = (g / 4 + c) % 2 ? 255 : 0; break;
                }
                frames[f].color[g * 4 + c] = static_cast<float>(level / 255);
            }
    return frames;
}

// The static gaussians (part 0 of rigid_scene: the same position every frame) whose colour
// wobbles within the tolerance decode to one colour through each GOP.
void check_wobbles_held(const std::vector<std::uint8_t>& bytes,
                        const std::vector<PlyCloud>& frames, const test::RigidSceneShape& shape) {
    MemorySource src(bytes);
    const std::size_t n = frames.front().count;
    std::vector<float> held(3 * n);
    std::size_t checked = 0;
    for (std::size_t f = 0; f < frames.size(); ++f) {
        auto got = extract_state(src, double(f) / kFps);
        REQUIRE(got.ok());
        for (std::size_t g = 0; g < n; ++g) {
            if (test::rigid_scene_part(g, n, shape) != 0 || colour_of(g) != Colour::wobble)
                continue;
            // Its own decoded gaussian: the one at its (static) position.
            std::size_t best = 0;
            double bd = 1e30;
            for (std::size_t j = 0; j < got->count; ++j) {
                double d = 0;
                for (int k = 0; k < 3; ++k)
                    d += std::pow(double(got->position[j * 3 + k]) -
                                      frames[f].position[g * 3 + k],
                                  2);
                if (d < bd) bd = d, best = j;
            }
            for (int c = 0; c < 3; ++c) {
                const float v = got->color[best * 4 + c];
                if (f % kGop != 0) {
                    CHECK(v == held[g * 3 + c]);
                    ++checked;
                }
                held[g * 3 + c] = v;
            }
        }
    }
    CHECK(checked > 0);
}

// Where the rotation grid is at most half the tolerance, the static gaussians' (part 0) stored
// rotation bins at frame 0 are even (RotationSnap: a coarser sub-lattice where the tolerance
// allows, which it does for nearly all).
void check_static_rotations_snapped(const std::vector<std::uint8_t>& bytes, double step_rot,
                                    std::size_t n, const test::RigidSceneShape& shape) {
    MemorySource src(bytes);
    auto got = extract_state(src, 0);
    REQUIRE(got.ok());
    std::size_t decoded = 0, even = 0;
    for (std::size_t j = 0; j < got->count; ++j) {
        const float* q = &got->rotation[j * 4];
        int m = 0;
        for (int c = 1; c < 4; ++c)
            if (std::fabs(q[c]) > std::fabs(q[m])) m = c;
        bool all_even = true;
        for (int c = 0; c < 4; ++c)
            if (c != m)
                all_even = all_even && std::lround((q[m] < 0 ? -q[c] : q[c]) / step_rot) % 2 == 0;
        decoded += 1;
        even += all_even;
    }
    const auto expected = static_cast<std::size_t>(std::lround(shape.static_share * double(n)));
    // Every gaussian decoded, and at least 9/10 of the static ones' count on even bins (the
    // bodies' too, by chance, 1 in 8: measured 355–370 of 640, 256 static; without the snap
    // 71).
    CHECK(decoded == n);
    CHECK(even >= expected * 9 / 10);
}

}  // namespace

TEST_CASE("colour hold (property): keyframe-delta keeps a colour that wobbles within the "
          "tolerance, and every frame reconstructs within the tolerance, deterministically") {
    struct Case {
        unsigned seed;
        double drift;  // the bodies' gaussians' own wander: riders where it is not 0
    };
    const Case cases[] = {{41, 0}, {42, 0.004}, {43, 0.002}};
    const ConvertOptions o = options();
    for (const Case& k : cases) {
        const test::RigidSceneShape shape{0.4, 0.25, 0.25, 0, k.drift};
        const auto frames = coloured(test::rigid_scene(10, 640, kFps, k.seed, shape), k.seed);
        for (bool streamed : {false, true}) {
            INFO("seed " << k.seed << ", drift " << k.drift
                         << (streamed ? ", streamed" : ", in memory"));
            ConvertReport rep, again;
            const auto bytes = test::convert_tracked(frames, o, streamed, rep);
            CHECK(test::convert_tracked(frames, o, streamed, again) == bytes);
            REQUIRE(rep.tolerance == *o.tolerance);
            // The grid: a third of the tolerance for colour.
            const double rgb_bound = rep.quantization.step_rgb / 2;
            CHECK(rgb_bound <= o.tolerance->rgb / kHeldColourLattice);
            CHECK(rgb_bound >= 0.99 * o.tolerance->rgb / kHeldColourLattice);
            test::check_every_frame(bytes, rep.tolerance, frames, kFps);
            test::check_valid(bytes, true);
            check_wobbles_held(bytes, frames, shape);
            if (rep.quantization.step_rot / 2 <= o.tolerance->rot / 2)
                check_static_rotations_snapped(bytes, rep.quantization.step_rot,
                                               frames.front().count, shape);
        }
    }
}

TEST_CASE("colour hold: a colour wobbling within the tolerance costs about what a still one does") {
    const test::RigidSceneShape shape{0.4, 0.25, 0.25, 0, 0};
    const auto base = test::rigid_scene(12, 800, kFps, 47, shape);
    std::vector<PlyCloud> still = base, wobbling = base;
    std::mt19937 rng(47);
    std::uniform_int_distribution<int> level(-2, 2);
    for (std::size_t f = 1; f < base.size(); ++f)
        for (std::size_t g = 0; g < base[f].count; ++g)
            for (int c = 0; c < 3; ++c) {
                // Frame 0's colour on the 8-bit levels, still or moved by up to 2 levels.
                const double at0 =
                    std::round(std::clamp(base[0].color[g * 4 + c], 0.1f, 0.9f) * 255);
                still[0].color[g * 4 + c] = static_cast<float>(at0 / 255);
                still[f].color[g * 4 + c] = still[0].color[g * 4 + c];
                wobbling[f].color[g * 4 + c] = static_cast<float>((at0 + level(rng)) / 255);
                wobbling[0].color[g * 4 + c] = still[0].color[g * 4 + c];
            }
    ConvertReport a, b;
    const auto held = test::convert_tracked(wobbling, options(), false, a);
    const auto kept = test::convert_tracked(still, options(), false, b);
    test::check_every_frame(held, a.tolerance, wobbling, kFps);
    // Without the hold (each frame's nearest bin) a wobble crosses a bin edge in many channels
    // every frame, and every delta restates colour for every row it updates: measured 47,356 B
    // against 40,075 (1.18×) on these frames; with it 40,001 against 38,746 (1.03×).
    INFO("wobbling " << held.size() << " B, still " << kept.size() << " B");
    CHECK(double(held.size()) <= 1.08 * double(kept.size()));
}

TEST_CASE("colour hold and rotation snap read a frame at a time write what the frames in memory write") {
    // The streamed encode snaps only the rotations whose bits changed since the step before,
    // takes a one-GOP sequence's colour range from the first pass instead of reading the GOP
    // ahead, keeps the first GOP's held bins for the writer's second pass, and steps the frame as
    // read with its riders placed in it; the in-memory encode does none of that. A third of the
    // gaussians turn away at frame 3 and back to frame 0's rotation at frame 6 (the step before's
    // bits differ both times), some colours lie outside [0, 1].
    const test::RigidSceneShape shape{0.4, 0.25, 0.25, 0, 0.003};
    auto frames = coloured(test::rigid_scene(10, 640, kFps, 53, shape), 53);
    for (std::size_t f = 3; f < 6; ++f)
        for (std::size_t g = 0; g < frames[f].count; g += 3) frames[f].rotation[g * 4] += 0.25f;
    for (std::size_t g = 0; g < 20; ++g) frames[4].color[g * 4 + 1] = 1.5f;
    // A jump of 6 levels in one frame: the GOP's range, and so its held bin, is that frame's.
    for (std::size_t g = 40; g < 80; ++g)
        frames[5].color[g * 4] = std::min(1.0f, frames[5].color[g * 4] + 6.0f / 255);
    for (std::uint32_t every : {kGop, 0u}) {
        INFO("keyframe_every " << every);
        ConvertOptions o = options();
        o.keyframe_every = every;
        ConvertReport held, streamed;
        const auto bytes = test::convert_tracked(frames, o, false, held);
        CHECK(test::convert_tracked(frames, o, true, streamed) == bytes);
        CHECK(streamed.deltas == held.deltas);
        CHECK(streamed.output_bytes == held.output_bytes);
        // One GOP where the spacing is left to the converter: the first pass's range is used.
        if (every == 0) CHECK(held.deltas + 1 == frames.size());
        CHECK(held.clamped_colors == 20);
        auto within = frames;  // as the writer takes them: clamped into [0, 1]
        for (float& v : within[4].color) v = std::min(v, 1.0f);
        test::check_every_frame(bytes, held.tolerance, within, kFps);
    }
}
