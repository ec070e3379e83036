// Grids decided in advance (fourdgs/writer.hpp FixedGrid, grid_for_tolerance, declared_bounds):
// the coarsest grid meeting a tolerance declares bounds within it, files holding different parts
// of one scene on one grid carry one Quantization record, and the keyframe writer keeps an
// explicit keyframe schedule.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/writer.hpp"

using namespace fourdgs;

namespace {

constexpr float kNeverFades = std::numeric_limits<float>::infinity();

// `n` gaussians in frame `frame` of a 1-fps clip: window [frame, frame + 1), never fading, spread
// over a box whose corner moves with the frame (so each frame has its own aabb), `offset` away.
GaussianColumns frame_columns(std::size_t n, int frame, std::uint32_t seed, float offset = 0) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0, 1);
    GaussianColumns c;
    c.count = n;
    for (std::size_t i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) {
            c.position.push_back(offset + float(frame) * 0.5f + 3 * u(rng) - 1.5f);
            c.scale.push_back(0.01f + 0.1f * u(rng));
        }
        c.rotation.insert(c.rotation.end(), {u(rng) - 0.5f, u(rng) - 0.5f, u(rng) - 0.5f, 1.0f});
        c.color.insert(c.color.end(), {u(rng), u(rng), u(rng), u(rng)});
        c.mu_t.push_back(float(frame));
        c.sigma_t.push_back(kNeverFades);
        c.win_lo.push_back(frame);
        c.win_hi.push_back(frame + 1);
    }
    return c;
}

QuantBounds tolerance_for_tests() {
    return {1e-3, 0.01, 0.004, 1.0 / 255, 1.0 / 255, 0, 0.002, 0.01};
}

bool within(const QuantBounds& d, const QuantBounds& t) {
    return d.pos <= t.pos && d.scale_rel <= t.scale_rel && d.rot <= t.rot && d.rgb <= t.rgb &&
           d.alpha <= t.alpha && d.time <= t.time && d.sigma_rel <= t.sigma_rel;
}

}  // namespace

TEST_CASE(
    "grid_for_tolerance: the declared bounds are within the tolerance, and a coarser step "
    "would not be") {
    const std::array<double, 6> aabb{-3, -2, -1, 5, 2, 40};
    for (double pos : {1e-2, 1e-3, 3.7e-4, 1e-5}) {
        QuantBounds t = tolerance_for_tests();
        t.pos = pos;
        auto g = grid_for_tolerance(t, aabb, 12.5);
        REQUIRE(g.ok());
        CHECK(g->origin == std::array<double, 3>{1, 0, 19.5});
        CHECK(g->reach == 40);
        const QuantBounds d = declared_bounds(*g, 12.5);
        CHECK(within(d, t));
        // Coarsest: a step one part in a million larger declares more than the tolerance.
        FixedGrid coarser = *g;
        coarser.bounds.pos *= 1 + 1e-6;
        coarser.bounds.rgb *= 1 + 1e-6;
        coarser.bounds.rot *= 1 + 1e-6;
        const QuantBounds dc = declared_bounds(coarser, 12.5);
        CHECK(dc.pos > t.pos);
        CHECK(dc.rgb > t.rgb);
        CHECK(dc.rot > t.rot);
        // motion 0 means §6.3's displacement guarantee: twice the position bound at class 0.
        CHECK(g->bounds.motion == 2 * g->bounds.pos);
    }
}

TEST_CASE("grid_for_tolerance refuses tolerances no grid meets, naming the attribute") {
    const std::array<double, 6> aabb{0, 0, 0, 1e6, 1, 1};
    QuantBounds t = tolerance_for_tests();
    t.pos = 1e-3;  // f32 positions near 1e6 are only good to about 0.1
    auto g = grid_for_tolerance(t, aabb, 10);
    REQUIRE_FALSE(g.ok());
    CHECK(g.error().refusal == refusal::kInvalidOption);
    CHECK(g.error().message.find("'pos'") != std::string::npos);
    t = tolerance_for_tests();
    t.rgb = 0.6;
    CHECK(grid_for_tolerance(t, {0, 0, 0, 1, 1, 1}, 10).error().refusal == refusal::kInvalidOption);
    t = tolerance_for_tests();
    t.scale_rel = 0;
    CHECK(grid_for_tolerance(t, {0, 0, 0, 1, 1, 1}, 10).error().message.find("'scale_rel'") !=
          std::string::npos);
    t = tolerance_for_tests();
    t.time = std::nan("");
    CHECK_FALSE(grid_for_tolerance(t, {0, 0, 0, 1, 1, 1}, 10).ok());
}

TEST_CASE(
    "files holding different frames on one fixed grid carry one Quantization record, and "
    "declare the grid's bounds") {
    const double duration = 4;
    auto grid = grid_for_tolerance(tolerance_for_tests(), {-2, -2, -2, 4, 4, 4}, duration);
    REQUIRE(grid.ok());
    WriterOptions o;
    o.grid = *grid;
    o.threads = 1;
    std::vector<Quantization> quantizations;
    for (int frame = 0; frame < 4; ++frame) {
        const GaussianColumns cols = frame_columns(200, frame, 7 + frame);
        SceneInput in;
        in.header.duration_sec = duration;
        in.gaussians = cols.batch();
        WriteReport rep;
        auto bytes = write_scene(in, o, &rep);
        REQUIRE(bytes.ok());
        MemorySource src(*bytes);
        auto reader = IndexedReader::open(src);
        REQUIRE(reader.ok());
        quantizations.push_back(reader->scene().quantization);
        CHECK(reader->scene().quantization.pos_origin == grid->origin);
        // The positions decode within the declared bound.
        GaussianBlock all;
        std::vector<DecodeWorkspace> pool;
        REQUIRE(reader->read_all(all, pool).ok());
        REQUIRE(all.count == cols.count);
    }
    for (const Quantization& q : quantizations) CHECK(q == quantizations.front());
    const QuantBounds d = declared_bounds(*grid, duration);
    const Quantization& q = quantizations.front();
    REQUIRE(q.bound("pos"));
    CHECK(*q.bound("pos") == bound_string(d.pos));
    CHECK(*q.bound("rot") == bound_string(d.rot));
    CHECK(*q.bound("motion") == bound_string(d.motion));
    CHECK(*q.bound("time") == bound_string(d.time));
    CHECK(q.step_pos == 2 * grid->bounds.pos);
}

TEST_CASE(
    "a fixed grid whose origin lies too far from a file's positions for its step is "
    "refused, naming the gaussian") {
    QuantBounds t = tolerance_for_tests();
    t.pos = 1.3e-7;  // a step near 2e-8: positions 100 away are 5e9 bins off, past i32
    auto grid = grid_for_tolerance(t, {-1, -1, -1, 1, 1, 1}, 4);
    REQUIRE(grid.ok());
    WriterOptions o;
    o.grid = *grid;
    const GaussianColumns cols = frame_columns(50, 3, 1, 100);
    SceneInput in;
    in.header.duration_sec = 4;
    in.gaussians = cols.batch();
    auto bytes = write_scene(in, o);
    REQUIRE_FALSE(bytes.ok());
    CHECK(bytes.error().refusal == refusal::kBinOutOfRange);
    CHECK(bytes.error().message.find("gaussian") != std::string::npos);
}

TEST_CASE("keyframe writer: an explicit schedule places the keyframes, and a bad one is refused") {
    const std::size_t n = 30;
    std::vector<GaussianColumns> cols;
    std::vector<std::uint32_t> ids(n);
    for (std::uint32_t i = 0; i < n; ++i) ids[i] = i;
    std::vector<KeyframeStep> steps;
    for (int s = 0; s < 6; ++s) {
        GaussianColumns c = frame_columns(n, 0, 3);
        for (std::size_t i = 0; i < n; ++i) c.position[i * 3] += 0.01f * float(s);
        c.mu_t.clear();
        c.win_lo.clear();
        c.win_hi.clear();
        cols.push_back(std::move(c));
    }
    for (int s = 0; s < 6; ++s) steps.push_back({double(s), cols[s].batch(), ids});
    SceneHeader h;
    h.duration_sec = 6;
    KeyframeWriterOptions ko;
    ko.keyframe_steps = {1, 0, 0, 1, 0, 1};
    KeyframeWriteReport rep;
    auto bytes = write_keyframe_delta(steps, h, ko, &rep);
    REQUIRE(bytes.ok());
    CHECK(rep.keyframes == 3);
    MemorySource src(*bytes);
    ReaderOptions ro;
    ro.accept_keyframe_delta = true;
    auto reader = IndexedReader::open(src, ro);
    REQUIRE(reader.ok());
    std::vector<int> kinds;
    for (const ChunkIndex& e : reader->scene().index) kinds.push_back(e.keyframe->chunk_kind);
    CHECK(kinds == std::vector<int>{0, 1, 1, 0, 1, 0});

    ko.keyframe_steps = {0, 1, 0, 1, 0, 1};
    CHECK(write_keyframe_delta(steps, h, ko).error().refusal == refusal::kInvalidOption);
    ko.keyframe_steps = {1, 0};
    CHECK(write_keyframe_delta(steps, h, ko).error().refusal == refusal::kInvalidOption);
}
