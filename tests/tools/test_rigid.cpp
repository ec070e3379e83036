// Rigid parts of tracked frame sequences (fourdgs/tools/rigid.hpp) and their conversion into
// Object Table entries and Object Tracks (convert.hpp, §5.15.6–7, §3): the parts found are the
// generator's, membership is checked at every frame, the file is a fraction of the per-frame one
// and every frame decodes within the recorded tolerance with the tracks composed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/tools/convert.hpp"
#include "fourdgs/tools/rigid.hpp"
#include "fourdgs/validate.hpp"
#include "support/frame_checks.hpp"
#include "support/rigid_frames.hpp"
#include "support/validity.hpp"

using namespace fourdgs;

namespace {

constexpr double kFps = 8;

struct Converted {
    std::vector<std::uint8_t> bytes;
    ConvertReport report;
};

Converted convert(const std::vector<PlyCloud>& frames, ConvertShape shape,
                  bool rigid_parts = true, bool cheaper_reference = true) {
    ConvertOptions o;
    o.fps = kFps;
    o.shape = shape;
    o.keyframe_every = 5;
    o.rigid_parts = rigid_parts;
    o.cheaper_reference = cheaper_reference;
    o.rigid_min_members = 32;
    MemorySink sink;
    Converted c;
    auto st = convert_frames(frames, o, sink, &c.report);
    if (!st.ok()) FAIL(st.error().describe());
    c.bytes = sink.take();
    REQUIRE(c.bytes.size() == c.report.output_bytes);
    return c;
}

void check_every_frame(const Converted& c, const std::vector<PlyCloud>& frames) {
    test::check_every_frame(c.bytes, c.report.tolerance, frames, kFps);
}

void check_valid(const std::vector<std::uint8_t>& bytes) { test::check_valid(bytes, true); }

RigidOptions residuals(double pos, double rot) {
    RigidOptions o;
    o.pos_residual = pos;
    o.rot_residual = rot;
    o.min_members = 32;
    return o;
}

}  // namespace

TEST_CASE("rigid parts: the static part, both rigid bodies and the deforming rest are found") {
    const std::size_t n = 1500;
    const auto frames = test::rigid_scene(10, n, kFps, 1, {0.4, 0.25, 0.25, 0});
    const RigidParts parts = find_rigid_parts(frames, residuals(2e-4, 2e-3));
    REQUIRE(parts.parts.size() == 2);
    CHECK(parts.static_count == 600);
    CHECK(parts.other_count == 150);
    // Each part found is exactly one of the generator's bodies, every member at every frame.
    std::vector<int> body_of_part(2, -1);
    for (std::size_t g = 0; g < n; ++g) {
        const int truth = test::rigid_scene_part(g, n, {0.4, 0.25, 0.25, 0});
        CHECK(bool(parts.is_static[g]) == (truth == 0));
        if (truth == 1 || truth == 2) {
            REQUIRE(parts.part_of[g] != 0);
            int& b = body_of_part[parts.part_of[g] - 1];
            if (b < 0) b = truth;
            CHECK(b == truth);
        } else {
            CHECK(parts.part_of[g] == 0);
        }
    }
    for (const RigidPart& p : parts.parts) {
        CHECK(p.members.size() == 375);
        CHECK(p.poses.front() == Pose{});  // the object frame is frame 0's placement
        for (std::uint32_t g : p.members)
            CHECK(follows_poses(frames, g, p.poses, residuals(2e-4, 2e-3)));
    }
}

TEST_CASE("rigid parts: a gaussian that leaves its body by more than the residual at one frame "
          "is not a member, within it it is") {
    const std::size_t n = 600;
    auto frames = test::rigid_scene(10, n, kFps, 2, {0, 1, 0, 0});
    const double residual = 2e-4;
    frames[6].position[7 * 3 + 1] += static_cast<float>(3 * residual);  // out at frame 6 only
    frames[4].position[9 * 3 + 2] += static_cast<float>(0.3 * residual);  // still within
    const RigidParts parts = find_rigid_parts(frames, residuals(residual, 2e-3));
    REQUIRE(parts.parts.size() == 1);
    CHECK(parts.part_of[7] == 0);
    CHECK(parts.part_of[9] == 1);
    CHECK(parts.parts[0].members.size() == n - 1);
    CHECK(parts.other_count == 1);
}

TEST_CASE("rigid parts: the search is deterministic") {
    const auto frames = test::rigid_scene(6, 900, kFps, 3);
    const RigidParts a = find_rigid_parts(frames, residuals(2e-4, 2e-3));
    const RigidParts b = find_rigid_parts(frames, residuals(2e-4, 2e-3));
    CHECK(a.part_of == b.part_of);
    REQUIRE(a.parts.size() == b.parts.size());
    for (std::size_t j = 0; j < a.parts.size(); ++j) CHECK(a.parts[j].poses == b.parts[j].poses);
}

TEST_CASE("convert --tracked stores rigid parts as objects: at most 0.3x the per-frame file, "
          "every frame within the tolerance, valid") {
    const auto frames = test::rigid_scene(10, 1200, kFps, 4, {0.4, 0.25, 0.25, 0});  // 10 % deforms
    for (ConvertShape shape : {ConvertShape::adaptive, ConvertShape::keyframe_delta}) {
        INFO(to_string(shape));
        const Converted c = convert(frames, shape);
        const Converted flat = convert(frames, ConvertShape::per_frame);
        CHECK(c.report.shape == shape);
        CHECK(c.report.tolerance == flat.report.tolerance);  // equal declared tolerance
        CHECK(c.report.per_frame_bytes == flat.bytes.size());
        CHECK(double(c.bytes.size()) <= 0.3 * double(flat.bytes.size()));
        REQUIRE(c.report.parts_sought);
        CHECK(c.report.static_part.gaussians == 480);
        REQUIRE(c.report.objects.size() == 2);
        CHECK(c.report.objects[0].gaussians + c.report.objects[1].gaussians == 600);
        CHECK(c.report.other_part.gaussians == 120);
        check_every_frame(c, frames);
        check_valid(c.bytes);
        // The file carries one table entry and one step track per part, a sample per frame.
        MemorySource src(c.bytes);
        ReaderOptions ro;
        ro.accept_keyframe_delta = true;
        auto reader = IndexedReader::open(src, ro);
        REQUIRE(reader.ok());
        const SceneInfo& s = reader->scene();
        REQUIRE(s.object_table);
        CHECK(s.object_table->entries.size() == 2);
        REQUIRE(s.object_tracks.size() == 2);
        for (const ObjectTrack& t : s.object_tracks) {
            CHECK(t.interpolation == TrajectoryInterpolation::step);
            CHECK(t.samples.size() == 10);
        }
    }
}

TEST_CASE("the readers compose the Object Tracks: without them a part stays where frame 0 put it") {
    const auto frames = test::rigid_scene(10, 800, kFps, 5, {0, 1, 0, 0});
    const Converted c = convert(frames, ConvertShape::adaptive);
    REQUIRE(c.report.objects.size() == 1);
    MemorySource src(c.bytes);
    ExtractOptions bare;
    bare.object_tracks = false;
    auto at_rest = extract_state(src, 9.5 / kFps, bare);
    auto moved = extract_state(src, 9.5 / kFps);
    REQUIRE(at_rest.ok());
    REQUIRE(moved.ok());
    // Untracked, the ball is still at frame 0's place; tracked, it is at frame 9's.
    auto centroid = [](const PlyCloud& f) {
        std::array<double, 3> m{};
        for (std::size_t i = 0; i < f.count; ++i)
            for (int k = 0; k < 3; ++k) m[k] += f.position[i * 3 + k] / double(f.count);
        return m;
    };
    const auto rest = centroid(at_rest.value()), now = centroid(moved.value());
    const auto f0 = centroid(frames[0]), f9 = centroid(frames[9]);
    for (int k = 0; k < 3; ++k) {
        CHECK(std::fabs(rest[k] - f0[k]) < 1e-3);
        CHECK(std::fabs(now[k] - f9[k]) < 1e-3);
    }
    CHECK(std::fabs(now[2] - rest[2]) > 0.3);  // 9 frames at 0.4 units/s along z
}

TEST_CASE("tracked conversion of fully non-rigid frames is never larger than per frame") {
    // Every gaussian jitters independently every frame: nothing rigid, nothing linear.
    auto frames = test::rigid_scene(8, 600, kFps, 6, {0, 0, 0, 0});
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> jitter(-0.02f, 0.02f);
    for (auto& f : frames)
        for (float& p : f.position) p += jitter(rng);
    const Converted flat = convert(frames, ConvertShape::per_frame);
    for (ConvertShape shape : {ConvertShape::adaptive, ConvertShape::keyframe_delta}) {
        INFO(to_string(shape));
        const Converted c = convert(frames, shape);
        CHECK(c.report.objects.empty());
        CHECK(c.bytes.size() <= flat.bytes.size());
        CHECK(c.report.per_frame_bytes == flat.bytes.size());
        check_every_frame(c, frames);
    }
}

TEST_CASE("rigid-part conversion is deterministic and reports each part's bytes alone") {
    const auto frames = test::rigid_scene(6, 900, kFps, 8, {0.4, 0.25, 0.25, 0});
    ConvertOptions o;
    o.fps = kFps;
    o.shape = ConvertShape::adaptive;
    o.rigid_min_members = 32;
    o.part_bytes = true;
    MemorySink a, b;
    ConvertReport ra, rb;
    REQUIRE(convert_frames(frames, o, a, &ra).ok());
    REQUIRE(convert_frames(frames, o, b, &rb).ok());
    CHECK(a.bytes() == b.bytes());
    REQUIRE(ra.objects.size() == 2);
    CHECK(ra.static_part.bytes > 0);
    CHECK(ra.other_part.bytes > 0);
    std::uint64_t sum = ra.static_part.bytes + ra.other_part.bytes;
    for (const auto& obj : ra.objects) {
        CHECK(obj.bytes > 0);
        sum += obj.bytes;
    }
    // Each part alone repeats the file's fixed records, so the parts sum to more than the file.
    CHECK(sum > ra.output_bytes);
    CHECK(sum < 3 * ra.output_bytes);
}

TEST_CASE("convert --model keyframe-delta picks each delta's reference: never larger than all "
          "chained, smaller on a looped motion, every frame within the tolerance, valid") {
    const auto base = test::rigid_scene(10, 900, kFps, 9, {0.4, 0.25, 0.25, 0});
    std::vector<PlyCloud> looped;  // frames 0..3 again and again: a loop every 4 frames
    for (std::size_t f = 0; f < 10; ++f) looped.push_back(base[f % 4]);
    const std::vector<PlyCloud>* sequences[] = {&base, &looped};
    for (const std::vector<PlyCloud>* frames : sequences)
        for (bool rigid : {false, true}) {
            INFO((frames == &base ? "rigid scene" : "looped") << (rigid ? ", objects" : ""));
            const Converted chained =
                convert(*frames, ConvertShape::keyframe_delta, rigid, false);
            const Converted cheaper = convert(*frames, ConvertShape::keyframe_delta, rigid);
            REQUIRE(cheaper.report.shape == ConvertShape::keyframe_delta);
            CHECK(chained.report.keyframe_referenced == 0);
            CHECK(cheaper.report.deltas == 8);  // keyframes at frames 0 and 5
            CHECK(cheaper.bytes.size() <= chained.bytes.size());
            if (frames == &looped && !rigid) {
                // Frames 4 and 8 are frame 0 again: against the keyframe, nothing changes.
                CHECK(cheaper.report.keyframe_referenced >= 1);
                CHECK(cheaper.bytes.size() < chained.bytes.size());
            }
            check_every_frame(cheaper, *frames);
            check_valid(cheaper.bytes);
            CHECK(convert(*frames, ConvertShape::keyframe_delta, rigid).bytes == cheaper.bytes);
        }
}
