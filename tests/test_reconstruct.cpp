// Tests for fourdgs/reconstruct.hpp: the §3 state at an instant.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

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
    Frame frame;
    for (double t : {2.0, 1e30, 1e300, std::numeric_limits<double>::max()}) {
        INFO("t = " << t);
        evaluate(b, t, 0.05, frame);
        REQUIRE(frame.count == 1);
        CHECK(frame.center[0] == 1.f);  // 0 * (t - mu_t) is exactly 0, never NaN
        CHECK(frame.center[2] == 3.f);
        CHECK(!std::isnan(frame.center[1]));
    }
    evaluate(b, std::numeric_limits<double>::max(), 0.05, frame);
    CHECK(frame.center[1] == std::numeric_limits<float>::infinity());  // it did move, far
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
