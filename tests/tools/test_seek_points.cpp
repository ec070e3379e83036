// Issue 39: keyframe-delta's keyframes chosen per sequence (ConvertOptions::keyframe_every 0,
// "Keyframes and seek points" in fourdgs/tools/convert.hpp). A capture where most gaussians stay
// put gets one keyframe and a keyframe-referenced delta each second; one where nearly all move
// (more than 3/4) keeps a keyframe each second. Either way every frame decodes within the tolerance through the indexed
// reader's seeks, its forward steps and the streaming front-end alike, a seek never walks more
// than a second of deltas past its keyframe-referenced one, and both conversion paths write the
// same bytes twice.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "fourdgs/io.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/tools/convert.hpp"
#include "support/convert_streamed.hpp"
#include "support/ply_frames.hpp"
#include "support/rigid_frames.hpp"

using namespace fourdgs;

namespace {

constexpr double kFps = 8;  // frame times k / 8 are exact in f32

// test::tracked_sequence (a third still, a third moving, a third accelerating) with the moving
// third held at frame 0's place: a third of the gaussians move.
std::vector<PlyCloud> mostly_still(std::size_t frames) {
    std::vector<PlyCloud> out = test::tracked_sequence(frames, 90, 1, kFps, 41u);
    for (PlyCloud& f : out)
        for (std::size_t g = 0; g < f.count; ++g)
            if (g % 3 == 1)
                for (int k = 0; k < 3; ++k) f.position[g * 3 + k] = out[0].position[g * 3 + k];
    return out;
}

struct Converted {
    std::vector<std::uint8_t> bytes;
    ConvertReport report;
};

Converted convert(const std::vector<PlyCloud>& frames, bool rigid_parts = true) {
    ConvertOptions o;
    o.fps = kFps;
    o.shape = ConvertShape::keyframe_delta;  // keyframe_every left 0: chosen
    o.rigid_parts = rigid_parts;
    o.never_larger_than_per_frame = false;
    o.error_frames = frames.size();
    MemorySink sink;
    Converted c;
    const Status st = convert_frames(frames, o, sink, &c.report);
    if (!st.ok()) FAIL(st.error().describe());
    c.bytes = sink.take();
    // The same bytes again, and read a frame at a time.
    MemorySink again;
    ConvertReport again_report, streamed_report;
    REQUIRE(convert_frames(frames, o, again, &again_report).ok());
    CHECK(again.bytes() == c.bytes);
    CHECK(test::convert_streamed(frames, o, streamed_report) == c.bytes);
    return c;
}

void check_within_tolerance(const ConvertReport& rep, std::size_t frames) {
    CHECK(rep.error_frames.size() == frames);
    const std::pair<const char*, double> keys[] = {{"pos", rep.tolerance.pos},
                                                   {"scale_rel", rep.tolerance.scale_rel},
                                                   {"rot", rep.tolerance.rot},
                                                   {"rgb", rep.tolerance.rgb},
                                                   {"alpha", rep.tolerance.alpha}};
    for (const auto& [key, tolerance] : keys)
        for (const AttributeError& a : rep.error)
            if (a.name == key) {
                INFO(key << " max " << a.max << " tolerance " << tolerance);
                CHECK(a.max <= tolerance * (1 + 1e-6));
            }
}

void check_same_state(const GaussianBlock& a, const GaussianBlock& b) {
    REQUIRE(a.count == b.count);
    CHECK(a.position == b.position);
    CHECK(a.rotation == b.rotation);
    CHECK(a.color == b.color);
    CHECK(a.scale == b.scale);
    CHECK(a.mu_t == b.mu_t);
}

// Every state three ways: sought from the last frame back (each a chain from its keyframe),
// stepped forward from frame 0 (a seek where step_forward declines), and streamed in file order.
// Returns the longest chain a seek walks.
std::size_t check_readers_agree(const std::vector<std::uint8_t>& bytes, std::size_t frames) {
    MemorySource src(bytes);
    auto kd = KeyframeDeltaReader::open(src);
    REQUIRE(kd.ok());
    std::vector<GaussianBlock> sought(frames);
    std::size_t longest = 0;
    for (std::size_t k = frames; k-- > 0;) {
        const double t = double(k) / kFps;
        REQUIRE(kd->state_at(t, sought[k]).ok());
        auto chain = kd->chain(t);
        REQUIRE(chain.ok());
        longest = std::max(longest, chain->size());
    }
    KeyframeDeltaWorkspace ws;
    GaussianBlock stepped;
    StateStep step;
    REQUIRE(kd->state_at(0, stepped, ws).ok());
    check_same_state(stepped, sought[0]);
    for (std::size_t k = 1; k < frames; ++k) {
        auto moved = kd->step_forward(ws, step);
        REQUIRE(moved.ok());
        if (*moved) step.apply_to(stepped);
        else REQUIRE(kd->state_at(double(k) / kFps, stepped, ws).ok());
        INFO("frame " << k);
        check_same_state(stepped, sought[k]);
    }
    MemorySource again(bytes);
    KeyframeDeltaStream stream(again);
    REQUIRE(stream.open().ok());
    GaussianBlock streamed;
    for (std::size_t k = 0; k < frames; ++k) {
        auto got = stream.next_state(streamed);
        REQUIRE(got.ok());
        REQUIRE(*got);
        INFO("frame " << k);
        check_same_state(streamed, sought[k]);
    }
    auto end = stream.next_state(streamed);
    REQUIRE(end.ok());
    CHECK_FALSE(*end);
    return longest;
}

}  // namespace

TEST_CASE("keyframe-delta of a capture whose gaussians mostly stay put: one keyframe, a "
          "keyframe-referenced delta each second, every frame within the tolerance by every "
          "reader") {
    const std::size_t frames = 36;  // 4.5 s at 8 fps
    const auto still = mostly_still(frames);  // 30 of 90 move
    const Converted c = convert(still);
    CHECK(c.report.chunks == frames);
    CHECK(c.report.deltas == frames - 1);  // one keyframe
    CHECK(c.report.keyframe_referenced >= 4);  // frames 8, 16, 24 and 32, and any cheaper
    check_within_tolerance(c.report, frames);
    // A seek: the keyframe, a keyframe-referenced delta, and at most 7 chained deltas.
    CHECK(check_readers_agree(c.bytes, frames) <= 1 + 1 + 7);

    // Smaller than a keyframe each second (the old default, kept by keyframe_every 8).
    ConvertOptions o;
    o.fps = kFps;
    o.shape = ConvertShape::keyframe_delta;
    o.keyframe_every = 8;
    o.never_larger_than_per_frame = false;
    MemorySink each_second;
    ConvertReport rep;
    REQUIRE(convert_frames(still, o, each_second, &rep).ok());
    CHECK(rep.chunks - rep.deltas == 5);
    CHECK(c.bytes.size() < each_second.bytes().size());
}

TEST_CASE("keyframe-delta of a capture whose gaussians nearly all move keeps a keyframe each "
          "second") {
    const std::size_t frames = 20;
    const auto moving = test::moving_sequence(frames, 90, 1, kFps, 42u);
    const Converted c = convert(moving);
    CHECK(c.report.chunks == frames);
    CHECK(c.report.deltas == frames - 3);  // keyframes at frames 0, 8 and 16
    check_within_tolerance(c.report, frames);
    CHECK(check_readers_agree(c.bytes, frames) <= 8);
}

TEST_CASE("keyframe-delta counts a rigid part's members as still: they are stored still in "
          "their object's frame") {
    // A 5 % static floor, two rigid bodies of 42.5 % each, a rippling sheet of 10 %: 95 % move
    // in the scene, 10 % in the file once the bodies are objects.
    const std::size_t frames = 20;
    test::RigidSceneShape shape;
    shape.static_share = 0.05;
    shape.part_a_share = shape.part_b_share = 0.425;
    const auto scene = test::rigid_scene(frames, 800, kFps, 43u, shape);
    const Converted with_parts = convert(scene);
    REQUIRE(with_parts.report.objects.size() == 2);
    CHECK(with_parts.report.deltas == frames - 1);  // one keyframe
    CHECK(with_parts.report.keyframe_referenced >= 2);  // frames 8 and 16
    check_within_tolerance(with_parts.report, frames);
    CHECK(check_readers_agree(with_parts.bytes, frames) <= 1 + 1 + 7);

    const Converted without = convert(scene, false);
    CHECK(without.report.objects.empty());
    CHECK(without.report.deltas == frames - 3);  // keyframes at frames 0, 8 and 16
    check_within_tolerance(without.report, frames);
}
