// Riders under a turned pose, gaussian-birth (issue 39): a rider is stored in its part's frame and
// the adaptive line fit runs there, so every error it carries — the fit's, the grid's, the
// velocity's and mu_t's — reaches the scene rotated by the part's track. A per-axis error e in the
// part's frame is up to (1-norm of the rotation's row) x e per world axis, √3 e at worst. This
// builds the worst case on purpose: a body turned so that one row of its rotation is (1, 1, 1)/√3,
// every gaussian drifting along a line in the body (riders: the fit's velocity carries it) plus a
// bump along ±(1, 1, 1) in the body that the fit's line misses by nearly its whole share, and
// checks every frame of the file against its input, gaussian by gaussian, within the tolerance.
// (Before the fit measured a rider's miss in the scene's frame and parts_share divided its grid,
// velocity and mu_t shares by the poses' gain, the first case came back 2.327 mm from its input
// at a 2 mm tolerance.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "fourdgs/io.hpp"
#include "fourdgs/pose.hpp"
#include "fourdgs/tools/convert.hpp"
#include "fourdgs/tools/grid_plan.hpp"
#include "fourdgs/tools/rigid.hpp"
#include "support/frame_checks.hpp"
#include "support/validity.hpp"

using namespace fourdgs;

namespace {

constexpr double kFps = 8;
constexpr std::size_t kFrames = 9;
constexpr double kTolerance = 0.002;  // position, per axis (splat4d's default)
constexpr double kSpacing = 0.05;     // between the body's gaussians: the nearest is its own

// A rotation by `angle` about (0, 1, -1)/√2: its first row is (cos a, sin a/√2, sin a/√2), whose
// 1-norm is √3 at acos(1/√3) (54.7°, the row (1, 1, 1)/√3) and 1.71 at 45°.
Quat oblique_turn(double angle) {
    const double s = std::sin(angle / 2) / std::sqrt(2.0);
    return {0, s, -s, std::cos(angle / 2)};
}

// A body of 8 x 8 x 8 gaussians, kSpacing apart around (0, 0.5, 0), turning about (0, 1, -1) so
// that it is turned by `peak` at the middle frame, and moving along x. In the body's frame each
// gaussian drifts along a line of its own (0.5..1.5 mm a frame per axis, random signs: the pose
// is the body's) plus a bump of `bump` per axis along ±(1, 1, 1), largest at the middle frame and
// none at the ends: what one record's line from the first frame to the last misses.
std::vector<PlyCloud> turned_riders(double peak, double bump, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    const std::size_t side = 8, n = side * side * side;
    PlyCloud base;
    base.count = n;
    std::vector<Vec3> rate(n);
    std::vector<double> sign(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double at[3] = {double(i % side), double(i / side % side), double(i / side / side)};
        for (int c = 0; c < 3; ++c) {
            base.position.push_back(static_cast<float>((at[c] - 3.5) * kSpacing + (c == 1 ? 0.5 : 0)));
            base.scale.push_back(static_cast<float>(0.005 + 0.01 * u(rng)));
            base.color.push_back(static_cast<float>(u(rng)));
            rate[i][c] = (u(rng) < 0.5 ? -1 : 1) * (0.0005 + 0.001 * u(rng));
        }
        base.color.push_back(1.0f);
        base.normal.insert(base.normal.end(), {0, 0, 0});
        const Quat q = normalized({u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5, u(rng) + 0.1});
        for (int c = 0; c < 4; ++c) base.rotation.push_back(static_cast<float>(q[c]));
        sign[i] = i % 2 ? 1 : -1;
    }
    const Vec3 centre{0, 0.5, 0};
    const double middle = double(kFrames - 1) / 2;
    std::vector<PlyCloud> frames;
    for (std::size_t f = 0; f < kFrames; ++f) {
        PlyCloud c = base;
        const Quat r = oblique_turn(peak * double(f) / middle);
        const double hump = bump * (1 - std::fabs(double(f) - middle) / middle);
        for (std::size_t i = 0; i < n; ++i) {
            Vec3 rel;
            for (int k = 0; k < 3; ++k)
                rel[k] = base.position[i * 3 + k] - centre[k] + rate[i][k] * double(f) +
                         sign[i] * hump;
            const Vec3 turned = rotate(r, rel);
            for (int k = 0; k < 3; ++k)
                c.position[i * 3 + k] =
                    static_cast<float>(centre[k] + turned[k] + (k == 0 ? 0.3 * double(f) / kFps : 0));
            const float* bq = &base.rotation[i * 4];
            const Quat q = multiply(r, {bq[0], bq[1], bq[2], bq[3]});
            for (int k = 0; k < 4; ++k) c.rotation[i * 4 + k] = static_cast<float>(q[k]);
        }
        frames.push_back(std::move(c));
    }
    return frames;
}

ConvertOptions adaptive_options() {
    ConvertOptions o;
    o.fps = kFps;
    o.shape = ConvertShape::adaptive;
    o.rigid_min_members = 32;
    o.tolerance = preset_tolerance(o.writer.preset, 4);  // then splat4d's default bounds
    o.tolerance->pos = kTolerance;
    o.tolerance->rot = 1.0 / 256;
    o.tolerance->rgb = 4.0 / 255;
    o.tolerance->alpha = 4.0 / 255;
    o.tolerance->scale_rel = 0.02;
    return o;
}

// The largest per-axis distance, over every frame, of a decoded gaussian from its own input:
// the decoded gaussian nearest to it, which is its own while the errors stay under half the
// body's spacing (checked: the second nearest is over kSpacing / 2 further away).
double worst_position_error(std::span<const std::uint8_t> bytes,
                            const std::vector<PlyCloud>& frames) {
    MemorySource src(bytes);
    double worst = 0;
    for (std::size_t f = 0; f < frames.size(); ++f) {
        auto got = extract_state(src, double(f) / kFps);
        REQUIRE(got.ok());
        REQUIRE(got->count == frames[f].count);
        const PlyCloud& in = frames[f];
        for (std::size_t i = 0; i < in.count; ++i) {
            std::size_t best = 0;
            double bd = 1e30, second = 1e30;
            for (std::size_t j = 0; j < got->count; ++j) {
                double d = 0;
                for (int k = 0; k < 3; ++k)
                    d += std::pow(double(got->position[j * 3 + k]) - in.position[i * 3 + k], 2);
                if (d < bd) second = bd, bd = d, best = j;
                else second = std::min(second, d);
            }
            REQUIRE(std::sqrt(second) - std::sqrt(bd) > kSpacing / 2);
            for (int k = 0; k < 3; ++k)
                worst = std::max(worst, std::fabs(double(got->position[best * 3 + k]) -
                                                  in.position[i * 3 + k]));
        }
    }
    return worst;
}

}  // namespace

TEST_CASE("riders under a turned pose (property): gaussian-birth keeps the position tolerance "
          "when the track turns a rider's fit error by up to √3") {
    const double worst_row = std::acos(1 / std::sqrt(3.0));
    // Bumps the line misses by 98 % of the fit's half of the tolerance on every axis of the
    // part's frame (what the fit once allowed there: √3 times that on one axis of the scene's),
    // and by that divided by √3 (turned at 54.7°, 98 % of the half on one scene axis: the most
    // a record may miss by now, so one record holds it while the grid's error adds to it).
    struct Case {
        double peak, share;
        unsigned seed;
    };
    const Case cases[] = {{worst_row, 1, 61},
                          {worst_row, 1, 62},
                          {M_PI / 4, 1, 63},
                          {worst_row, 1 / std::sqrt(3.0), 64},
                          {worst_row, 1 / std::sqrt(3.0), 65},
                          {M_PI / 4, 1 / std::sqrt(3.0), 66}};
    for (const Case& k : cases) {
        const auto frames = turned_riders(k.peak, 0.98 * k.share * kTolerance / 2, k.seed);
        const ConvertOptions o = adaptive_options();
        INFO("turned " << k.peak * 180 / M_PI << " degrees, fit share " << k.share << ", seed "
                       << k.seed);
        // The body is ridden: its gaussians stray from the pose by their drift, more than a
        // member may, less than a rider may.
        RigidOptions search = rigid_search_options(ConvertShape::adaptive, *o.tolerance, 2, 32);
        search.ride_residual = 32 * kTolerance;
        const RigidParts parts = find_rigid_parts(frames, search);
        REQUIRE(parts.parts.size() == 1);
        CHECK(parts.riding_count * 10 >= frames[0].count * 9);
        MemorySink sink;
        ConvertReport rep;
        const Status st = convert_frames(frames, o, sink, &rep);
        if (!st.ok()) FAIL(st.error().describe());
        const auto bytes = sink.take();
        REQUIRE(rep.objects.size() == 1);
        const double worst = worst_position_error(bytes, frames);
        INFO("worst position error " << worst << " of " << kTolerance);
        CHECK(worst <= kTolerance + 1e-6);
        test::check_every_frame(bytes, rep.tolerance, frames, kFps);
        test::check_valid(bytes, true);
    }
}
