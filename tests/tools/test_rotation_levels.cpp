// Rotation bounded in the input's own 8-bit levels (ConvertOptions::rot_levels, issue 39, lev39):
// the box geometry of src/tools/rotation_box.hpp — known boxes, the clamped byte 255, sign flips,
// empty intersections, the deepest unit quaternion of random .splat rotations, and the grid
// points the converter stores. The conversion's property test is in test_turning_u8.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <span>
#include <tuple>
#include <vector>

#include "../../src/tools/rotation_box.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/pose.hpp"
#include "fourdgs/open_scene.hpp"
#include "fourdgs/refusals.hpp"
#include "fourdgs/tools/convert.hpp"
#include "fourdgs/tools/grid_plan.hpp"
#include "support/convert_streamed.hpp"
#include "support/rigid_frames.hpp"
#include "support/validity.hpp"

using namespace fourdgs;
namespace rb = fourdgs::rotation_box;

namespace {

constexpr double kHalf = 0.5 / 128;  // the box of rot_levels 0

// A unit quaternion's components as a .splat stores them and the importer reads them back:
// round(128 q + 128) clamped to [0, 255], then (b - 128) / 128.
std::array<float, 4> as_read(const std::array<double, 4>& q) {
    std::array<float, 4> v;
    for (int c = 0; c < 4; ++c)
        v[c] = static_cast<float>((std::clamp(std::round(q[c] * 128 + 128), 0.0, 255.0) - 128) / 128);
    return v;
}

std::array<double, 4> random_unit(std::mt19937& rng) {
    std::normal_distribution<double> n;
    std::array<double, 4> q;
    double len = 0;
    for (double& c : q) c = n(rng), len += c * c;
    for (double& c : q) c /= std::sqrt(len);
    return q;
}

}  // namespace

TEST_CASE("rotation box: identity's bytes 128 128 128 255 are open above w, the deepest point is "
          "identity itself") {
    const std::array<float, 4> v = as_read({0, 0, 0, 1});
    CHECK(v[3] == 127.0f / 128);  // byte 255: clamped
    REQUIRE(rb::on_levels(v.data()));
    const rb::Box box = rb::box_of(v.data(), kHalf);
    CHECK(std::isinf(box.hi[3]));
    const auto deepest = rb::deepest_unit(box);
    REQUIRE(deepest);
    CHECK(deepest->depth == Approx(kHalf).margin(1e-9));
    CHECK(deepest->q[3] == Approx(1).margin(1e-9));
    const auto closed = rb::deepest_in_box_of(v.data(), kHalf);
    REQUIRE(closed);
    CHECK(closed->depth == Approx(kHalf).margin(1e-9));
    // Bytes 192 192 192 192 + 2 levels each, |v| = 1.06: no unit quaternion rounds to them.
    const std::array<float, 4> far{66.0f / 128, 66.0f / 128, 66.0f / 128, 66.0f / 128};
    CHECK_FALSE(rb::deepest_unit(rb::box_of(far.data(), kHalf)));
    CHECK_FALSE(rb::deepest_in_box_of(far.data(), kHalf));
    // Above a byte 255 counts nothing: identity is 1/128 above 127/128, yet inside.
    const std::array<float, 4> one{0, 0, 0, 1};
    CHECK(rb::levels_distance(one.data(), v.data()) == 0);
    // Below it counts: bytes 128 128 128 254 read back as w = 126/128, which identity is 2/128 over.
    const std::array<float, 4> lower{0, 0, 0, 126.0f / 128};
    CHECK(rb::levels_distance(one.data(), lower.data()) == Approx(2.0 / 128));
}

TEST_CASE("rotation box: up to sign, a quaternion and its negation are the same distance") {
    std::mt19937 rng(3);
    for (int i = 0; i < 200; ++i) {
        const std::array<double, 4> q = random_unit(rng);
        const std::array<float, 4> v = as_read(q);
        std::array<float, 4> f, neg;
        for (int c = 0; c < 4; ++c) f[c] = static_cast<float>(q[c]), neg[c] = -f[c];
        CHECK(rb::levels_distance(f.data(), v.data()) == rb::levels_distance(neg.data(), v.data()));
        // The box of v seen from -q is the box of -v: as deep, and its point, negated, as deep
        // inside v's box.
        std::array<double, 4> minus_q;
        for (int c = 0; c < 4; ++c) minus_q[c] = -q[c];
        const auto a = rb::deepest_unit(rb::box_of(v.data(), kHalf));
        const auto b = rb::deepest_unit(rb::box_towards(v.data(), kHalf, minus_q));
        REQUIRE(a);
        REQUIRE(b);
        CHECK(b->depth == Approx(a->depth).margin(1e-9));
        std::array<float, 4> back;
        for (int c = 0; c < 4; ++c) back[c] = static_cast<float>(-b->q[c]);
        CHECK(rb::levels_distance(back.data(), v.data()) <= kHalf - a->depth + 1e-7);
        double toward = 0;
        for (int c = 0; c < 4; ++c) toward += b->q[c] * minus_q[c];
        CHECK(toward > 0);
    }
}

TEST_CASE("rotation box: boxes two levels apart do not intersect, one level apart at half-width "
          "1.5 levels they do") {
    const std::array<float, 4> a = as_read({0.5, 0.5, 0.5, 0.5});
    std::array<float, 4> b = a;
    b[0] += 2.0f / 128;
    CHECK_FALSE(rb::deepest_unit(rb::intersect(rb::box_of(a.data(), kHalf), rb::box_of(b.data(), kHalf))));
    b[0] = a[0] + 1.0f / 128;
    const auto both = rb::deepest_unit(
        rb::intersect(rb::box_of(a.data(), 3 * kHalf), rb::box_of(b.data(), 3 * kHalf)));
    REQUIRE(both);
    std::array<float, 4> f;
    for (int c = 0; c < 4; ++c) f[c] = static_cast<float>(both->q[c]);
    CHECK(rb::levels_distance(f.data(), a.data()) <= 3 * kHalf - both->depth + 1e-7);
    CHECK(rb::levels_distance(f.data(), b.data()) <= 3 * kHalf - both->depth + 1e-7);
}

TEST_CASE("rotation box (property): every .splat rotation's box holds a unit quaternion, mostly "
          "a tenth of a level deep, though normalizing the bytes sometimes leaves the box") {
    std::mt19937 rng(11);
    int normalized_outside = 0, shallow = 0;
    double shallowest = 1;
    for (int i = 0; i < 20000; ++i) {
        const std::array<float, 4> v = as_read(random_unit(rng));
        REQUIRE(rb::on_levels(v.data()));
        const auto deepest = rb::deepest_unit(rb::box_of(v.data(), kHalf));
        REQUIRE(deepest);
        const auto closed = rb::deepest_in_box_of(v.data(), kHalf);  // the same, in closed form
        REQUIRE(closed);
        CHECK(closed->depth == Approx(deepest->depth).margin(1e-10));
        shallowest = std::min(shallowest, deepest->depth * 128);
        shallow += deepest->depth * 128 < 0.1;
        std::array<float, 4> f;
        for (int c = 0; c < 4; ++c) f[c] = static_cast<float>(deepest->q[c]);
        CHECK(rb::levels_distance(f.data(), v.data()) <= kHalf - deepest->depth + 1e-7);
        normalized_outside += rb::levels_distance(v.data(), v.data()) > kHalf;
    }
    INFO("shallowest " << shallowest << " levels, " << shallow << " under 0.1, normalized outside "
                       << normalized_outside);
    CHECK(shallowest > 0);  // the rounded quaternion itself lies inside
    CHECK(shallow < 20000 / 50);
    CHECK(normalized_outside > 0);
}

TEST_CASE("rotation box (property): on a grid an eighth of the box, a stored rotation lies inside "
          "nearly every box and an eighth of a level past the rest, coarse sub-lattices where the "
          "box allows") {
    std::mt19937 rng(12);
    Grid grid;
    grid.step_rot = 2 * kHalf / 8;
    int coarse = 0, too_shallow = 0;
    for (int i = 0; i < 5000; ++i) {
        const std::array<float, 4> v = as_read(random_unit(rng));
        auto f = rb::grid_point_in_box(v.data(), kHalf - 1e-6, grid, 8);
        if (!f) {
            ++too_shallow;
            f = rb::grid_point_in_box(v.data(), kHalf + 1.0 / 8 / 128, grid, 8);
            REQUIRE(f);
            CHECK(rb::levels_distance(f->data(), v.data()) <= kHalf + 1.0 / 8 / 128);
            continue;
        }
        CHECK(rb::levels_distance(f->data(), v.data()) <= kHalf - 1e-6);
        // The three stored components on the 8-bin sub-lattice.
        int largest = 0;
        for (int c = 1; c < 4; ++c)
            if (std::fabs((*f)[c]) > std::fabs((*f)[largest])) largest = c;
        bool on_eight = true;
        for (int c = 0; c < 4; ++c) {
            if (c == largest) continue;
            const double bins = (*f)[c] / grid.step_rot * ((*f)[largest] < 0 ? -1 : 1);
            on_eight = on_eight && std::fabs(bins / 8 - std::round(bins / 8)) < 1e-3;
        }
        coarse += on_eight;
    }
    CHECK(coarse > 2500);
    CHECK(too_shallow <= 5000 / 200);
    const std::array<float, 4> off{0.1f, 0.2f, 0.3f, 0.9f};
    CHECK_FALSE(rb::on_levels(off.data()));
}

namespace {

// The turned quaternions' inputs: turn_k ⊗ h as a .splat stores it, 4 floats a frame.
std::vector<float> turned_inputs(const std::vector<std::array<double, 4>>& turns,
                                 const std::array<double, 4>& h) {
    std::vector<float> out;
    for (const auto& turn : turns) {
        const auto v = as_read(multiply(turn, h));
        out.insert(out.end(), v.begin(), v.end());
    }
    return out;
}

}  // namespace

TEST_CASE("rotation box: one frame, not turned — the programme finds the box's deepest point") {
    std::mt19937 rng(21);
    const std::vector<std::array<double, 4>> identity{{0, 0, 0, 1}};
    for (int i = 0; i < 300; ++i) {
        const std::array<float, 4> v = as_read(random_unit(rng));
        const auto exact = rb::deepest_in_box_of(v.data(), kHalf);
        REQUIRE(exact);
        std::array<double, 4> start;
        for (int c = 0; c < 4; ++c) start[c] = v[c];
        const auto lp = rb::deepest_unit_turned(identity, v, kHalf, start);
        REQUIRE(lp);
        CHECK(lp->depth == Approx(exact->depth).margin(1e-8));
    }
}

TEST_CASE("rotation box (property): a rotation held in a turning body's frame — the programme's "
          "point is as deep as the true one in every frame's box, whatever sign the bytes took") {
    std::mt19937 rng(22);
    for (int trial = 0; trial < 200; ++trial) {
        const std::array<double, 4> truth = random_unit(rng);
        std::vector<std::array<double, 4>> turns;
        for (int k = 0; k < 10; ++k) turns.push_back(random_unit(rng));
        std::vector<float> inputs = turned_inputs(turns, truth);
        // The true rotation rounds to every frame's bytes, so it lies in every box.
        std::array<double, 4> start = truth;
        for (double& c : start) c += 0.002;  // a start a fraction of a level off, as a mean is
        const auto lp = rb::deepest_unit_turned(turns, inputs, kHalf, start);
        REQUIRE(lp);
        double truth_depth = 1;
        for (std::size_t k = 0; k < turns.size(); ++k) {
            std::array<float, 4> q;
            const auto turned = multiply(turns[k], truth);
            for (int c = 0; c < 4; ++c) q[c] = static_cast<float>(turned[c]);
            truth_depth = std::min(truth_depth, kHalf - rb::levels_distance(q.data(), &inputs[4 * k]));
        }
        CHECK(lp->depth >= truth_depth - 1e-7);
        // -v is the same rotation: the same depth with some frames' bytes negated.
        for (std::size_t k = 0; k < turns.size(); k += 3)
            for (int c = 0; c < 4; ++c) inputs[4 * k + c] = -inputs[4 * k + c];
        const auto flipped = rb::deepest_unit_turned(turns, inputs, kHalf, start);
        REQUIRE(flipped);
        CHECK(flipped->depth == Approx(lp->depth).margin(1e-9));
    }
}

TEST_CASE("rotation box: frames whose boxes do not meet leave the programme's point outside one") {
    const std::vector<std::array<double, 4>> same{{0, 0, 0, 1}, {0, 0, 0, 1}};
    std::vector<float> inputs = turned_inputs(same, {0.5, 0.5, 0.5, 0.5});
    inputs[4] += 2.0f / 128;  // frame 1's x two levels on
    const auto lp = rb::deepest_unit_turned(same, inputs, kHalf, {0.5, 0.5, 0.5, 0.5});
    REQUIRE(lp);
    CHECK(lp->depth < 0);
    CHECK(lp->depth == Approx(-0.5 / 128).margin(1e-6));  // split evenly: half a level out of each
    CHECK_FALSE(rb::deepest_unit_turned(same, std::span<const float>(inputs).first(4), kHalf, {0, 0, 0, 1}));
}

// ---- a .splat writer that truncates (rot_rounding=floor, issue 39, floor39) -------------------

namespace {

constexpr auto kFloor = rb::Rounding::floor;

// A unit quaternion's components as a truncating writer stores them (numpy's astype(uint8),
// make_tracked_frames): floor(128 q + 128) clamped to [0, 255], read back as (b - 128) / 128.
std::array<float, 4> as_truncated(const std::array<double, 4>& q) {
    std::array<float, 4> v;
    for (int c = 0; c < 4; ++c)
        v[c] = static_cast<float>((std::clamp(std::floor(q[c] * 128 + 128), 0.0, 255.0) - 128) / 128);
    return v;
}

std::array<float, 4> as_float(const std::array<double, 4>& q) {
    return {static_cast<float>(q[0]), static_cast<float>(q[1]), static_cast<float>(q[2]),
            static_cast<float>(q[3])};
}

}  // namespace

TEST_CASE("rotation box floor: byte b holds b <= 128 q + 128 < b + 1 — identity's bytes 128 128 128 255 are a "
          "box half a level up, open above w, its deepest point half a level off identity") {
    const std::array<float, 4> v = as_truncated({0, 0, 0, 1});
    CHECK(v == std::array<float, 4>{0, 0, 0, 127.0f / 128});  // 256 clipped to 255
    CHECK(rb::centre(v[0], kFloor) == 0.5 / 128);
    CHECK(rb::centre(v[0], rb::Rounding::nearest) == 0);
    const rb::Box box = rb::box_of(v.data(), kHalf, kFloor);
    CHECK(box.lo[0] == 0);
    CHECK(box.hi[0] == 1.0 / 128);
    CHECK(box.lo[3] == 127.0 / 128);  // byte 255's side: b - N
    CHECK(std::isinf(box.hi[3]));
    // Identity truncates to these bytes: on the box's closed lower sides, so depth 0.
    const std::array<float, 4> one{0, 0, 0, 1};
    CHECK(rb::levels_distance(one.data(), v.data(), kFloor) == kHalf);
    // x = y = z = 1/256 (w then still above 127/128) is the deepest point, a whole half level in.
    for (const auto& deepest : {rb::deepest_unit(box), rb::deepest_in_box_of(v.data(), kHalf, kFloor)}) {
        REQUIRE(deepest);
        CHECK(deepest->depth == Approx(kHalf).margin(1e-9));
        for (int c = 0; c < 3; ++c) CHECK(deepest->q[c] == Approx(0.5 / 128).margin(1e-9));
        const auto f = as_float(deepest->q);
        CHECK(as_truncated(deepest->q) == v);
        CHECK(rb::levels_distance(f.data(), v.data(), kFloor) == Approx(0).margin(1e-7));
    }
    // 1.5 levels above x's byte is a level past the box (its byte is 129).
    const std::array<float, 4> past{1.5f / 128, 0, 0, 1};
    CHECK(rb::levels_distance(past.data(), v.data(), kFloor) == Approx(1.0 / 128).epsilon(1e-3));
    // Byte 0 holds [-1, -127/128): the rotation (-1, 0, 0, 0) is that box's only corner on the
    // sphere and both boxes agree it is shallow (the sphere grazes it); nearest's box of the same
    // bytes is centred on it and half a level deep.
    const std::array<float, 4> minus_x = as_truncated({-1, 0, 0, 0});
    CHECK(minus_x == std::array<float, 4>{-1, 0, 0, 0});
    const auto graze = rb::deepest_in_box_of(minus_x.data(), kHalf, kFloor);
    const auto graze_bisected = rb::deepest_unit(rb::box_of(minus_x.data(), kHalf, kFloor));
    REQUIRE(graze);
    REQUIRE(graze_bisected);
    CHECK(graze->depth == Approx(graze_bisected->depth).margin(1e-10));
    CHECK(graze->depth < 0.05 * kHalf);  // about 0.023 of it
    CHECK(as_truncated(graze->q) == minus_x);
    const auto centred = rb::deepest_in_box_of(minus_x.data(), kHalf);
    REQUIRE(centred);
    CHECK(centred->depth == Approx(kHalf).margin(1e-9));
}

TEST_CASE("rotation box floor (property): q and -q truncate to bytes whose boxes are each other's "
          "flipped, every rotation lies in its own box, and the closed form is the bisection's") {
    std::mt19937 rng(31);
    int shallow = 0, normalized_outside = 0;
    for (int i = 0; i < 20000; ++i) {
        const std::array<double, 4> q = random_unit(rng);
        std::array<double, 4> minus_q;
        for (int c = 0; c < 4; ++c) minus_q[c] = -q[c];
        const std::array<float, 4> v = as_truncated(q), w = as_truncated(minus_q);
        REQUIRE(rb::on_levels(v.data()));
        const auto f = as_float(q), neg = as_float(minus_q);
        // Inside its own box (a hair for q's f32), up to sign, and in -q's bytes' box too.
        CHECK(rb::levels_distance(f.data(), v.data(), kFloor) <= kHalf + 1e-7);
        CHECK(rb::levels_distance(neg.data(), v.data(), kFloor) ==
              rb::levels_distance(f.data(), v.data(), kFloor));
        CHECK(rb::levels_distance(f.data(), w.data(), kFloor) <= kHalf + 1e-7);
        normalized_outside += rb::levels_distance(v.data(), v.data(), kFloor) > kHalf;
        // Seen from q, -q's bytes' box is q's own (no byte 255 or 0 clipped: the flip is exact).
        const auto a = rb::deepest_unit(rb::box_of(v.data(), kHalf, kFloor));
        const auto b = rb::deepest_unit(rb::box_towards(w.data(), kHalf, q, kFloor));
        const auto closed = rb::deepest_in_box_of(v.data(), kHalf, kFloor);
        REQUIRE(a);
        REQUIRE(b);
        REQUIRE(closed);
        CHECK(closed->depth == Approx(a->depth).margin(1e-10));
        const bool clipped = std::find(v.begin(), v.end(), 127.0f / 128) != v.end() ||
                             std::find(w.begin(), w.end(), 127.0f / 128) != w.end();
        if (!clipped) CHECK(b->depth == Approx(a->depth).margin(1e-9));
        // The deepest point truncates back to the bytes wherever it is inside by more than f32's.
        if (closed->depth > 1e-6) CHECK(as_truncated(closed->q) == v);
        shallow += closed->depth * 128 < 0.1;
    }
    INFO(shallow << " boxes under 0.1 level deep, " << normalized_outside << " normalized outside");
    CHECK(shallow < 20000 / 50);
    CHECK(normalized_outside > 0);
}

TEST_CASE("rotation box floor (property): stored grid points truncate back to the input's bytes, "
          "and the programme's one-frame point is the closed form's") {
    std::mt19937 rng(32);
    Grid grid;
    grid.step_rot = 2 * kHalf / 8;
    int too_shallow = 0;
    const std::vector<std::array<double, 4>> identity{{0, 0, 0, 1}};
    for (int i = 0; i < 5000; ++i) {
        const std::array<double, 4> q = random_unit(rng);
        const std::array<float, 4> v = as_truncated(q);
        auto f = rb::grid_point_in_box(v.data(), kHalf - 3e-6, grid, 8, kFloor);
        if (!f) {
            ++too_shallow;
            f = rb::grid_point_in_box(v.data(), kHalf + 1.0 / 8 / 128, grid, 8, kFloor);
            REQUIRE(f);
            continue;
        }
        CHECK(rb::levels_distance(f->data(), v.data(), kFloor) <= kHalf - 3e-6);
        std::array<double, 4> stored, minus;
        double len = 0;
        for (int c = 0; c < 4; ++c) len += double((*f)[c]) * (*f)[c];
        for (int c = 0; c < 4; ++c) stored[c] = (*f)[c] / std::sqrt(len), minus[c] = -stored[c];
        CHECK((as_truncated(stored) == v || as_truncated(minus) == v));
        if (i < 300) {
            std::array<double, 4> start;
            for (int c = 0; c < 4; ++c) start[c] = v[c];
            const auto exact = rb::deepest_in_box_of(v.data(), kHalf, kFloor);
            const auto lp = rb::deepest_unit_turned(identity, v, kHalf, start, kFloor);
            REQUIRE(exact);
            REQUIRE(lp);
            CHECK(lp->depth == Approx(exact->depth).margin(1e-8));
        }
    }
    CHECK(too_shallow <= 5000 / 200);
}
