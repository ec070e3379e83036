// The riders' hold measures tens of millions of candidate rotations against the input's 8-bit
// boxes (issue 39, cpu39h): rotation_box::LevelsBox::estimate decides most of them without a
// square root or a division, and LevelsBox::distance divides once for both signs. Both must
// leave the converter's bytes as they were: the estimate within its slack of the exact distance
// (the bound the hold's early exits rest on), the distance bit for bit the two-division value.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>

#include "../../src/tools/rotation_box.hpp"

namespace rb = fourdgs::rotation_box;

namespace {

// A .splat's rotation bytes as the importer reads them, (b - 128) / 128, one in four a byte 255
// (a box open above on that side).
std::array<float, 4> random_input(std::mt19937& rng) {
    std::uniform_int_distribution<int> byte(0, 255), top(0, 3);
    std::array<float, 4> v;
    for (float& c : v) c = static_cast<float>((top(rng) == 0 ? 255 : byte(rng)) - 128) / 128;
    return v;
}

// The distance as it was measured before it divided once: each sign's components divided by
// the norm in turn.
double two_divisions(const rb::LevelsBox& box, const float* q) {
    double n = 0;
    for (int c = 0; c < 4; ++c) n += static_cast<double>(q[c]) * q[c];
    n = std::sqrt(n);
    if (!(n > 0) || !std::isfinite(n)) return std::numeric_limits<double>::infinity();
    double best = std::numeric_limits<double>::infinity();
    for (const double sign : {1.0, -1.0}) {
        double far = 0;
        for (int c = 0; c < 4; ++c) {
            const double qc = sign * q[c] / n, vc = box.centre[c];
            far = std::max(far, box.open[c] ? std::max(0.0, vc - qc) : std::fabs(qc - vc));
        }
        best = std::min(best, far);
    }
    return best;
}

}  // namespace

TEST_CASE("rotation box estimate (property): a rotation's box distance estimated without "
          "normalizing lies within its slack of the exact one, near the unit sphere and far "
          "from it, on both roundings, and the exact distance divides once, bit for bit as "
          "twice") {
    std::mt19937 rng(39);
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> scale(0.25, 3.0), hair(-1e-6, 1e-6);
    double widest_near_unit = 0;
    for (int i = 0; i < 50000; ++i) {
        const std::array<float, 4> v = random_input(rng);
        const auto rounding = i % 2 ? rb::Rounding::floor : rb::Rounding::nearest;
        const rb::LevelsBox box = rb::LevelsBox::of(v.data(), rounding);
        // Half the rotations a hair from unit length (the candidates the hold measures), half
        // anywhere from a quarter to three times it.
        rb::Quat q;
        double len = 0;
        for (double& c : q) c = normal(rng), len += c * c;
        const double to = i % 4 < 2 ? 1 + hair(rng) : scale(rng);
        std::array<float, 4> f;
        for (int c = 0; c < 4; ++c) f[c] = static_cast<float>(q[c] / std::sqrt(len) * to);
        const rb::Quat as_float{f[0], f[1], f[2], f[3]};
        const double exact = box.distance(f.data());
        REQUIRE(exact == two_divisions(box, f.data()));
        REQUIRE(exact == rb::levels_distance(f.data(), v.data(), rounding));
        const rb::LevelsBox::Estimate e = box.estimate(as_float);
        REQUIRE(std::isfinite(e.slack));
        INFO("input " << v[0] << " " << v[1] << " " << v[2] << " " << v[3] << ", estimate "
                      << e.distance << " +/- " << e.slack << ", exact " << exact);
        REQUIRE(std::fabs(e.distance - exact) <= e.slack);
        if (i % 4 < 2) widest_near_unit = std::max(widest_near_unit, e.slack);
    }
    // Near the unit sphere the slack is a few millionths: tight enough to decide most candidates
    // against a box half a level (0.0039) wide.
    CHECK(widest_near_unit < 1e-5);
    // No direction: the exact distance is +infinity, and so is the slack.
    const rb::LevelsBox box = rb::LevelsBox::of(random_input(rng).data());
    const float zero[4] = {0, 0, 0, 0};
    CHECK(box.distance(zero) == std::numeric_limits<double>::infinity());
    CHECK(box.estimate(rb::Quat{0, 0, 0, 0}).slack == std::numeric_limits<double>::infinity());
    const double inf = std::numeric_limits<double>::infinity();
    CHECK(box.estimate(rb::Quat{inf, 0, 0, 1}).slack == std::numeric_limits<double>::infinity());
}
