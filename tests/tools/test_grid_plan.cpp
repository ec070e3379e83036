// Grid plans (fourdgs/tools/grid_plan.hpp): the grid sized to the tolerance, the plan file read
// back exactly and refused by name when malformed, and conversions on a plan: the same grid as a
// single conversion, slices on the plan's alignment, frames outside the plan refused.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/tools/convert.hpp"
#include "fourdgs/tools/grid_plan.hpp"
#include "support/ply_frames.hpp"

using namespace fourdgs;

namespace {

constexpr double kFps = 8;

GridPlan plan_of(const std::vector<PlyCloud>& frames, ConvertShape shape) {
    return test::plan_every_frame(frames, shape, kFps, std::nullopt, ShLadder::balanced);
}

bool same_plan(const GridPlan& a, const GridPlan& b) {
    return a.frames == b.frames && a.fps == b.fps && a.duration_sec == b.duration_sec &&
           a.sh_degree == b.sh_degree && a.gaussians_per_frame == b.gaussians_per_frame &&
           a.aabb == b.aabb && a.shape == b.shape && a.keyframe_every == b.keyframe_every &&
           a.segment_frames == b.segment_frames && a.max_speed == b.max_speed &&
           a.tolerance == b.tolerance && a.grid == b.grid && a.sh_depths == b.sh_depths;
}

// The plan's JSON with one substring replaced (which must be there).
std::string edited(const std::string& json, const std::string& from, const std::string& to) {
    const std::size_t at = json.find(from);
    REQUIRE(at != std::string::npos);
    return json.substr(0, at) + to + json.substr(at + from.size());
}

}  // namespace

TEST_CASE("a grid plan reads back bit for bit, and its text is stable") {
    const auto frames = test::tracked_sequence(6, 50, 1, kFps, 1);
    for (ConvertShape shape :
         {ConvertShape::per_frame, ConvertShape::adaptive, ConvertShape::keyframe_delta}) {
        INFO(to_string(shape));
        const GridPlan p = plan_of(frames, shape);
        const std::string json = grid_plan_json(p);
        auto back = parse_grid_plan(json, "grid.json");
        REQUIRE(back.ok());
        CHECK(same_plan(*back, p));
        CHECK(grid_plan_json(*back) == json);
        // The grid meets its share of the tolerance: declared bounds within it, per attribute.
        const QuantBounds d = declared_bounds(p.grid, p.duration_sec);
        const QuantBounds share = grid_tolerance(p.shape, p.tolerance, 0, 0);
        CHECK(d.pos <= share.pos);
        CHECK(d.scale_rel <= share.scale_rel);
        CHECK(d.rot <= share.rot);
        CHECK(d.rgb <= share.rgb);
        CHECK(d.alpha <= share.alpha);
        CHECK(d.sigma_rel <= share.sigma_rel);
        CHECK(d.time <= p.tolerance.time);
        CHECK(p.sh_depths == std::vector<std::uint8_t>{8});
    }
}

TEST_CASE("a plan file is written and read through a file") {
    namespace fs = std::filesystem;
    const fs::path path =
        fs::temp_directory_path() / ("fourdgs-plan-" + std::to_string(::getpid()) + ".json");
    const GridPlan p = plan_of(test::tracked_sequence(3, 10, 0, kFps, 2), ConvertShape::per_frame);
    REQUIRE(write_grid_plan(p, path.string()).ok());
    auto back = read_grid_plan(path.string());
    REQUIRE(back.ok());
    CHECK(same_plan(*back, p));
    fs::remove(path);
    auto missing = read_grid_plan(path.string());
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().refusal == refusal::kIoError);
}

TEST_CASE("a malformed plan file is refused by name, naming the key") {
    const std::string json =
        grid_plan_json(plan_of(test::tracked_sequence(3, 10, 0, kFps, 3), ConvertShape::per_frame));
    struct Case {
        std::string text, key;
    };
    const std::vector<Case> cases = {
        {"", "byte 0"},
        {"[1, 2]", "the plan"},
        {json.substr(0, json.size() / 2), "byte"},
        {edited(json, "\"fourdgs-grid-plan\"", "\"something-else\""), "format"},
        {edited(json, "\"version\": 2", "\"version\": 1"), "version"},
        {edited(json, "\"frames\": 3", "\"frames\": 4"), "scene.duration_sec"},
        {edited(json, "\"frames\": 3", "\"frames\": 3.5"), "scene.frames"},
        {edited(json, "\"sh_degree\": 0", "\"sh_degree\": \"0\""), "scene.sh_degree"},
        {edited(json, "\"shape\": \"per-frame\"", "\"shape\": \"sideways\""), "encoding.shape"},
        {edited(json, "\"step_pos\"", "\"step_position\""), "grid.step_pos"},
        {edited(json, "\"scheme\": \"uniform-v1\",", "\"scheme\": \"uniform-v1\", \"extra\": 1,"),
         "grid.extra"},
        {edited(json,
                "\"declared_bounds\": {\n    \"pos\": ", "\"declared_bounds\": {\n    \"pos\": 1"),
         "declared_bounds.pos"},
        {edited(json, "\"sh_depths\": []", "\"sh_depths\": [9]"), "grid.sh_depths"},
        {edited(json, "\"reach\": ", "\"reach\": -"), "grid.reach"},
        {json + "{}", "text after"},
    };
    for (const Case& c : cases) {
        INFO(c.key);
        auto p = parse_grid_plan(c.text, "grid.json");
        REQUIRE_FALSE(p.ok());
        CHECK(p.error().refusal == refusal::kMalformedPlan);
        CHECK(p.error().message.rfind("grid.json: ", 0) == 0);
        CHECK(p.error().message.find(c.key) != std::string::npos);
    }
    // A grid coarser than the tolerance it claims to meet is refused too, even when its declared
    // bounds are what the grid declares.
    GridPlan loose = plan_of(test::tracked_sequence(3, 10, 0, kFps, 3), ConvertShape::per_frame);
    loose.grid.bounds.pos *= 2;
    auto p = parse_grid_plan(grid_plan_json(loose), "loose.json");
    REQUIRE_FALSE(p.ok());
    CHECK(p.error().message.find("declared_bounds.pos") != std::string::npos);
}

TEST_CASE("tolerances parse as key=value lists over a base, and bad ones are named") {
    const QuantBounds base = preset_tolerance(Preset::default_, 1);
    auto t = parse_tolerance("pos=1e-3,rot=0.01", base);
    REQUIRE(t.ok());
    CHECK(t->pos == 1e-3);
    CHECK(t->rot == 0.01);
    CHECK(t->rgb == base.rgb);
    CHECK(parse_tolerance("", base)->pos == base.pos);
    for (const char* bad : {"pos", "pos=", "pos=abc", "pos=1e-3x", "foo=1", "pos=inf"}) {
        INFO(bad);
        auto r = parse_tolerance(bad, base);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().refusal == refusal::kInvalidOption);
    }
}

TEST_CASE("presets mean end-to-end tolerances, and their grids keep the preset's steps") {
    const QuantBounds t = preset_tolerance(Preset::default_, 2.0);
    const QuantBounds b = preset_bounds(Preset::default_, 2.0);
    CHECK(t.pos == b.pos);
    CHECK(t.rot > b.rot);  // the whole quaternion, not one stored component
    auto g = grid_for_tolerance(t, {-1, -1, -1, 1, 1, 1}, 10);
    REQUIRE(g.ok());
    CHECK(g->bounds.rot == Approx(b.rot).epsilon(1e-6));
    CHECK(g->bounds.pos <= b.pos);
    CHECK(g->bounds.pos == Approx(b.pos).epsilon(2e-3));  // less the f32 allowance at this reach
}

TEST_CASE("a plan scans the sample it names: first and last frames, successors when tracked") {
    PlanOptions po;
    po.rigid_parts = false;
    po.sample_frames = 4;
    CHECK(plan_sample(100, po) == std::vector<std::uint64_t>{0, 33, 66, 99});
    po.shape = ConvertShape::adaptive;
    CHECK(plan_sample(100, po) == std::vector<std::uint64_t>{0, 1, 33, 34, 66, 67, 99});
    po.sample_frames = 0;
    CHECK(plan_sample(3, po) == std::vector<std::uint64_t>{0, 1, 2});
    // A sampled box is widened by the margin on every face.
    const auto frames = test::tracked_sequence(9, 20, 0, kFps, 4);
    po.shape = ConvertShape::per_frame;
    po.fps = kFps;
    po.sample_frames = 2;
    const auto index = plan_sample(frames.size(), po);
    std::vector<PlyCloud> sample;
    for (auto f : index) sample.push_back(frames[f]);
    auto p = make_grid_plan(frames.size(), sample, index, po);
    REQUIRE(p.ok());
    po.sample_frames = 0;
    auto whole = make_grid_plan(frames.size(), frames, test::every_frame(frames.size()), po);
    REQUIRE(whole.ok());
    CHECK(p->aabb[0] < whole->aabb[0]);
    CHECK(p->aabb[3] > whole->aabb[3]);
}

TEST_CASE(
    "convert sizes its grid as a plan does: a plan of every frame gives a single conversion "
    "the same Quantization record") {
    const auto frames = test::tracked_sequence(5, 40, 1, kFps, 5);
    for (ConvertShape shape : {ConvertShape::per_frame, ConvertShape::keyframe_delta}) {
        INFO(to_string(shape));
        ConvertOptions plain;
        plain.fps = kFps;
        plain.shape = shape;
        plain.keyframe_every = 4;
        plain.writer.sh_ladder = ShLadder::balanced;
        MemorySink a;
        REQUIRE(convert_frames(frames, plain, a).ok());
        ConvertOptions planned;
        planned.plan = plan_of(frames, shape);
        MemorySink b;
        REQUIRE(convert_frames(frames, planned, b).ok());
        ReaderOptions ro;
        ro.accept_keyframe_delta = true;
        MemorySource sa(a.bytes()), sb(b.bytes());
        auto ra = IndexedReader::open(sa, ro);
        auto rb = IndexedReader::open(sb, ro);
        REQUIRE(ra.ok());
        REQUIRE(rb.ok());
        CHECK(ra->scene().quantization == rb->scene().quantization);
    }
}

TEST_CASE(
    "on a plan, a slice must lie on its alignment and its frames inside what it was made for") {
    const auto frames = test::tracked_sequence(10, 30, 0, kFps, 6);
    const GridPlan kd = plan_of(frames, ConvertShape::keyframe_delta);
    MemorySink sink;
    ConvertOptions o;
    o.plan = kd;
    auto slice = [&](std::uint64_t a, std::uint64_t b) {
        o.first_frame = a;
        o.end_frame = b;
        return convert_frames(std::span(frames).subspan(a, b - a), o, sink);
    };
    CHECK(slice(0, 4).ok());
    CHECK(slice(8, 10).ok());  // the last slice ends at the last frame
    CHECK(slice(2, 4).error().refusal == refusal::kInvalidOption);
    CHECK(slice(4, 6).error().refusal == refusal::kInvalidOption);
    o.end_frame = 12;
    CHECK(convert_frames(std::span(frames).subspan(8, 2), o, sink).error().refusal ==
          refusal::kInvalidOption);
    // Without a plan there is no slice.
    ConvertOptions plain;
    plain.fps = kFps;
    plain.first_frame = 2;
    CHECK(convert_frames(frames, plain, sink).error().refusal == refusal::kInvalidOption);

    // Frames the plan was not made for.
    auto far = frames;
    far[5].position[7] = 50;
    o.first_frame = 4;
    o.end_frame = 8;
    auto st = convert_frames(std::span(far).subspan(4, 4), o, sink);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().refusal == refusal::kOutsidePlan);
    CHECK(st.error().message.find("frame 5 gaussian 2") != std::string::npos);
    auto fewer = frames;
    fewer[4] = test::tracked_sequence(1, 29, 0, kFps, 6)[0];
    CHECK(convert_frames(std::span(fewer).subspan(4, 4), o, sink).error().refusal ==
          refusal::kOutsidePlan);
    const GridPlan adaptive = plan_of(frames, ConvertShape::adaptive);
    auto fast = frames;
    for (std::size_t f = 0; f < fast.size(); ++f)
        fast[f].position[0] = 0.25f * float(f);  // 2 units/s
    o.plan = adaptive;
    o.first_frame = 0;
    o.end_frame = 4;
    st = convert_frames(std::span(fast).subspan(0, 4), o, sink);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().refusal == refusal::kOutsidePlan);
    CHECK(st.error().message.find("max_speed") != std::string::npos);
}

TEST_CASE("a plan's slices cover every frame once, on its alignment, as equal as it allows") {
    GridPlan p;
    p.frames = 103;
    p.shape = ConvertShape::keyframe_delta;
    p.keyframe_every = 10;
    for (std::size_t shards : {1u, 2u, 3u, 7u, 11u, 50u}) {
        INFO(shards);
        const auto slices = plan_slices(p, shards);
        CHECK(slices.size() == std::min<std::size_t>(shards, 11));
        std::uint64_t at = 0;
        for (const auto& [first, end] : slices) {
            CHECK(first == at);
            CHECK(first % 10 == 0);
            CHECK((end % 10 == 0 || end == 103));
            CHECK(end > first);
            at = end;
        }
        CHECK(at == 103);
    }
    p.shape = ConvertShape::per_frame;
    const auto even = plan_slices(p, 4);
    REQUIRE(even.size() == 4);
    for (const auto& [first, end] : even) CHECK((end - first == 25 || end - first == 26));
    CHECK(plan_slices(p, 0).empty());
}

TEST_CASE("a plan records a non-default effort, and a plan without one reads as the default") {
    const auto frames = test::tracked_sequence(4, 30, 0, kFps, 9);
    GridPlan p = plan_of(frames, ConvertShape::per_frame);
    const std::string plain = grid_plan_json(p);
    CHECK(plain.find("effort") == std::string::npos);  // the default is not written
    p.effort = Effort::max;
    const std::string with = grid_plan_json(p);
    CHECK(with.find("\"effort\": \"max\"") != std::string::npos);
    auto back = parse_grid_plan(with, "max.json");
    REQUIRE(back.ok());
    CHECK(back->effort == Effort::max);
    CHECK(same_plan(*back, p));
    auto old = parse_grid_plan(plain, "plain.json");
    REQUIRE(old.ok());
    CHECK(old->effort == Effort::default_);
    auto bad = parse_grid_plan(edited(with, "\"max\"", "\"best\""), "bad.json");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().refusal == "malformed-plan");
    CHECK(bad.error().message.find("encoding.effort") != std::string::npos);
    // Convert on the plan writes at its effort: the smallest streams, never larger.
    ConvertOptions o;
    o.plan = p;
    MemorySink at_max;
    REQUIRE(convert_frames(frames, o, at_max).ok());
    o.plan->effort = Effort::default_;
    MemorySink at_default;
    REQUIRE(convert_frames(frames, o, at_default).ok());
    CHECK(at_max.position() <= at_default.position());
    CHECK(at_max.bytes() != at_default.bytes());
}
