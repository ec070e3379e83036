// Tests for fourdgs/reconstruct.hpp: the §3 state at an instant.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "fourdgs/reconstruct.hpp"

using namespace fourdgs;

namespace {

// One never-fading gaussian at (1, 2, 3), moving along y only, alive from 0 for ever.
GaussianBlock one_moving_gaussian(float motion_y) {
    GaussianBlock b;
    b.count = 1;
    b.position = {1.f, 2.f, 3.f};
    b.scale = {0.1f, 0.1f, 0.1f};
    b.rotation = {0.f, 0.f, 0.f, 1.f};
    b.color = {0.5f, 0.5f, 0.5f, 1.f};
    b.motion = {0.f, motion_y, 0.f};
    b.mu_t = {0.25f};
    b.sigma_t = {std::numeric_limits<float>::infinity()};
    b.win_lo = {0.f};
    b.win_hi = {std::numeric_limits<float>::infinity()};
    b.flags = {0};
    b.window_index = {0};
    b.object_id = {0};
    return b;
}

}  // namespace

TEST_CASE("§3: an axis without motion stays at its position at any finite t, even near the f64 maximum") {
    const GaussianBlock b = one_moving_gaussian(0.5f);
    const TrackPoses none({}, 0.0);
    Frame frame;
    for (double t : {2.0, 1e30, 1e300, std::numeric_limits<double>::max()}) {
        INFO("t = " << t);
        const auto s = visible_state(b, 0, t, 0.05, none);
        REQUIRE(s);
        CHECK(s->center[0] == 1.0);  // 0 * (t - mu_t) is exactly 0, never NaN
        CHECK(s->center[2] == 3.0);
        CHECK(std::isfinite(s->center[1]));
        evaluate(b, t, 0.05, frame);
        CHECK(frame.count + frame.unrepresentable == 1);
        if (frame.count == 1) {
            CHECK(frame.center[0] == 1.f);
            CHECK(frame.center[2] == 3.f);
        }
    }
}

TEST_CASE("§3 in f64: a visible gaussian whose center lies beyond f32 at t is counted, not handed "
          "over as inf, and visible_state reports the finite value") {
    const GaussianBlock b = one_moving_gaussian(0.5f);
    const TrackPoses none({}, 0.0);
    Frame frame;
    const double t = 9e307;  // a finite motion for a very long time
    evaluate(b, t, 0.05, frame);
    CHECK(frame.count == 0);
    CHECK(frame.unrepresentable == 1);
    CHECK(visible_count(b, t, 0.05) == 1);
    const auto s = visible_state(b, 0, t, 0.05, none);
    REQUIRE(s);
    CHECK(s->center[1] == 2.0 + 0.5 * (t - 0.25));  // 4.5e307: finite in f64, not in f32
    CHECK(std::isinf(static_cast<float>(s->center[1])));
    CHECK(s->opacity == 1.f);
    // Where f32 holds it, the row is there and equals visible_state's value rounded to f32.
    evaluate(b, 1e38, 0.05, frame);
    REQUIRE(frame.count == 1);
    CHECK(frame.unrepresentable == 0);
    const auto near = visible_state(b, 0, 1e38, 0.05, none);
    REQUIRE(near);
    CHECK(frame.center[1] == static_cast<float>(near->center[1]));
    // Appending keeps counting.
    EvaluateOptions append;
    append.append = true;
    evaluate(b, t, 0.05, frame, append);
    CHECK(frame.count == 1);
    CHECK(frame.unrepresentable == 1);
    frame.clear();
    CHECK(frame.unrepresentable == 0);
}

TEST_CASE("§3: a visible gaussian with a non-finite decoded value gets no row and is counted") {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    GaussianBlock b;
    for (int k = 0; k < 6; ++k) {
        GaussianBlock one = one_moving_gaussian(0.f);
        one.object_id = {static_cast<std::uint32_t>(k)};
        if (k == 1) one.scale[2] = inf;
        if (k == 2) one.rotation[0] = nan;
        if (k == 3) one.color[1] = nan;
        if (k == 4) one.position[0] = -inf;
        b.append(one);
    }
    Frame frame;
    evaluate(b, 1.0, 0.05, frame);
    CHECK(frame.count == 2);  // gaussians 0 and 5, in order, their flags and ids with them
    CHECK(frame.unrepresentable == 4);
    REQUIRE(frame.count == 2);
    CHECK(frame.source[0] == 0);
    CHECK(frame.source[1] == 5);
    CHECK(frame.object_id[1] == 5);
    CHECK(frame.flags[1] == 0);
    for (std::size_t i = 0; i < frame.count * 3; ++i) CHECK(std::isfinite(frame.center[i]));
}

TEST_CASE("§3 in f64: a track that brings a base center beyond f32 back gives the gaussian its "
          "row, computed as visible_state computes it") {
    GaussianBlock b = one_moving_gaussian(1.f);
    b.object_id = {7};
    std::vector<ObjectTrack> tracks(1);
    tracks[0].object_id = 7;
    const double t = 1e39;  // base y = 2 + 1e39: beyond f32
    tracks[0].samples.push_back({0.0, {0, 0, 0, 1}, {0, -1e39, 0}});
    EvaluateOptions options;
    options.tracks = tracks;
    Frame frame;
    evaluate(b, t, 0.05, frame, options);
    REQUIRE(frame.count == 1);
    CHECK(frame.unrepresentable == 0);
    const auto s = visible_state(b, 0, t, 0.05, TrackPoses(tracks, t));
    REQUIRE(s);
    CHECK(std::isfinite(static_cast<float>(s->center[1])));
    CHECK(frame.center[1] == static_cast<float>(s->center[1]));
    // A translation that sends it past f32's range instead: counted.
    tracks[0].samples[0].translation = {0, 1e300, 0};
    evaluate(b, 2.0, 0.05, frame, options);
    CHECK(frame.count == 0);
    CHECK(frame.unrepresentable == 1);
}

TEST_CASE("§3: the displacement is computed in f64 and rounded once") {
    // With f32 arithmetic (dt rounded, the product rounded, the sum rounded) this instant lands
    // one f32 step away from the nearest f32 to the exact centre.
    const GaussianBlock b = one_moving_gaussian(0.3f);
    Frame frame;
    const double t = 12345.678;
    evaluate(b, t, 0.05, frame);
    REQUIRE(frame.count == 1);
    const float exact = static_cast<float>(2.0 + double(0.3f) * (t - 0.25));
    const float in_f32 = 2.f + 0.3f * static_cast<float>(t - 0.25f);
    REQUIRE(exact != in_f32);  // the instant tells the two apart
    CHECK(frame.center[1] == exact);
}
