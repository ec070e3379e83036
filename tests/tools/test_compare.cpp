// Per-attribute error between two splat clouds (fourdgs/tools/compare.hpp): known perturbations
// give the errors they were made with, by order and by position, and the refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <random>
#include <span>
#include <vector>

#include "fourdgs/tools/compare.hpp"

using namespace fourdgs;

namespace {

PlyCloud cloud(std::size_t n, int degree, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0, 1);
    PlyCloud c;
    c.count = n;
    c.sh_degree = degree;
    for (std::size_t i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) {
            c.position.push_back(4 * u(rng) - 2);
            c.normal.push_back(0);
            c.scale.push_back(0.01f + 0.05f * u(rng));
        }
        for (int k = 0; k < 4; ++k) c.rotation.push_back(u(rng) - 0.5f);
        for (int k = 0; k < 4; ++k) c.color.push_back(0.1f + 0.8f * u(rng));
        for (int k = 0; k < c.sh_per_gaussian(); ++k) c.sh.push_back(u(rng) - 0.5f);
    }
    return c;
}

const AttributeError& get(const CompareReport& r, const char* name) {
    const AttributeError* a = r.find(name);
    REQUIRE(a != nullptr);
    return *a;
}

}  // namespace

TEST_CASE("compare: a cloud against itself has no error, matched by order") {
    const PlyCloud a = cloud(500, 2, 1);
    auto r = compare_clouds(a, a);
    REQUIRE(r.ok());
    CHECK(r->match == CompareMatch::order);
    CHECK(r->matched == 500);
    CHECK(r->sh_degree == 2);
    for (const AttributeError& e : r->attributes) {
        INFO(e.name);
        CHECK(e.max == 0);
        CHECK(e.rms == 0);
        CHECK(e.p99 == 0);
    }
    CHECK(get(*r, "pos").samples == 1500);
    CHECK(get(*r, "rot").samples == 500);
    CHECK(get(*r, "sh").samples == 500 * 3 * 8);
}

TEST_CASE("compare: known perturbations give their max, RMS and p99") {
    const std::size_t n = 1000;
    const PlyCloud a = cloud(n, 1, 2);
    PlyCloud b = a;
    // x moves by 1e-3 for every gaussian, y by 2e-3 for one in a hundred; opacity by 0.01 for
    // all; scale by a factor e^0.02 on one axis; each rotation turned by 1 degree about z.
    const double turn = 1.0 * std::numbers::pi / 180;
    for (std::size_t i = 0; i < n; ++i) {
        b.position[i * 3] += 1e-3f;
        if (i % 100 == 0) b.position[i * 3 + 1] += 2e-3f;
        b.color[i * 4 + 3] += 0.01f;
        b.scale[i * 3 + 2] *= std::exp(0.02f);
        // q' = q * r, r = (0, 0, sin(turn/2), cos(turn/2)), xyzw.
        const float x = a.rotation[i * 4], y = a.rotation[i * 4 + 1], z = a.rotation[i * 4 + 2],
                    w = a.rotation[i * 4 + 3];
        const float s = static_cast<float>(std::sin(turn / 2)), c = static_cast<float>(std::cos(turn / 2));
        b.rotation[i * 4] = x * c + y * s;
        b.rotation[i * 4 + 1] = y * c - x * s;
        b.rotation[i * 4 + 2] = z * c + w * s;
        b.rotation[i * 4 + 3] = w * c - z * s;
        b.sh[i * 9 + 4] += 0.25f;  // green's second coefficient
    }
    auto r = compare_clouds(a, b);
    REQUIRE(r.ok());
    CHECK(r->match == CompareMatch::order);
    const AttributeError& pos = get(*r, "pos");
    CHECK(pos.max == Approx(2e-3).epsilon(0.02));
    CHECK(pos.p99 == Approx(1e-3).epsilon(0.02));  // 3000 samples: 10 of them at 2e-3
    // RMS over 3n samples: n at 1e-3, n / 100 at 2e-3.
    CHECK(pos.rms == Approx(std::sqrt((n * 1e-6 + n / 100 * 4e-6) / (3.0 * n))).epsilon(0.02));
    CHECK(get(*r, "alpha").max == Approx(0.01).epsilon(0.01));
    CHECK(get(*r, "alpha").rms == Approx(0.01).epsilon(0.01));
    CHECK(get(*r, "scale_rel").max == Approx(0.02).epsilon(0.01));
    CHECK(get(*r, "rot_deg").max == Approx(1.0).epsilon(0.01));
    CHECK(get(*r, "rot_deg").p99 == Approx(1.0).epsilon(0.01));
    CHECK(get(*r, "rot").max > 0);
    CHECK(get(*r, "rgb").max == 0);
    CHECK(get(*r, "sh").max == Approx(0.25).epsilon(0.01));
    CHECK(get(*r, "sh_band1").max == Approx(0.25).epsilon(0.01));  // coefficient 1: band 1
    CHECK(get(*r, "sh_band1").samples == n * 9);
    CHECK(r->find("sh_band2") == nullptr);  // degree 1
}

TEST_CASE("compare: p99 is the order statistic of every sample, where many share its bucket") {
    // The errors' p99 is found by the floats' top bits before a sort of one bucket (compare.cpp's
    // order_statistic): each case puts it among other values of its bucket (7 mantissa bits),
    // at a bucket's first or last sample, among zeros and ties, and spread over many octaves.
    // The expected value is nth_element's over the same samples.
    const std::size_t n = 4000;
    const PlyCloud a = cloud(n, 0, 3);
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(0, 1);
    const std::size_t at = static_cast<std::size_t>(std::ceil(0.99 * 3 * n)) - 1;
    for (int kind = 0; kind < 5; ++kind) {
        INFO("kind " << kind);
        PlyCloud b = a;
        for (std::size_t k = 0; k < 3 * n; ++k) {
            float e = 0;
            switch (kind) {
                case 0: e = 1e-3f * (1 + 0.005f * u(rng)); break;         // one bucket, distinct
                case 1: e = k % 3 == 0 ? 0.0f : 2e-3f * u(rng); break;     // zeros and a spread
                case 2: e = std::ldexp(u(rng), -static_cast<int>(k % 20)); break;  // 20 octaves
                case 3: e = k < 3 * n - 120 ? 1e-4f : 4e-3f * u(rng); break;  // ties below p99
                case 4: e = k < at + 1 ? 1e-3f * u(rng) : 8e-3f; break;      // p99 a bucket's last
            }
            b.position[k] += k % 2 ? e : -e;
        }
        std::vector<float> samples;
        for (std::size_t k = 0; k < 3 * n; ++k)
            samples.push_back(static_cast<float>(std::fabs(double(b.position[k]) - a.position[k])));
        std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(at),
                         samples.end());
        auto r = compare_clouds(a, b, {CompareMatch::order});
        REQUIRE(r.ok());
        CHECK(get(*r, "pos").p99 == samples[at]);
    }
}

TEST_CASE("compare: shuffled clouds are matched by position, and extra gaussians stay unmatched") {
    const PlyCloud a = cloud(2000, 0, 3);
    std::vector<std::size_t> order(a.count);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937(4));
    PlyCloud b;
    b.count = a.count;
    for (std::size_t j : order) {
        for (int k = 0; k < 3; ++k) b.position.push_back(a.position[j * 3 + k] + 1e-4f);
        for (int k = 0; k < 3; ++k) b.normal.push_back(0), b.scale.push_back(a.scale[j * 3 + k]);
        for (int k = 0; k < 4; ++k) b.rotation.push_back(a.rotation[j * 4 + k]);
        for (int k = 0; k < 4; ++k) b.color.push_back(a.color[j * 4 + k]);
    }
    auto r = compare_clouds(a, b);
    REQUIRE(r.ok());
    CHECK(r->match == CompareMatch::position);
    CHECK(r->matched == a.count);
    CHECK(get(*r, "pos").max == Approx(1e-4).epsilon(0.05));
    CHECK(get(*r, "rgb").max == 0);
    CHECK(get(*r, "rot").max == 0);

    // B has 100 fewer: as many of A are unmatched, the rest compare as before.
    PlyCloud fewer = b;
    fewer.count -= 100;
    for (auto* col : {&fewer.position, &fewer.normal, &fewer.scale}) col->resize(fewer.count * 3);
    for (auto* col : {&fewer.rotation, &fewer.color}) col->resize(fewer.count * 4);
    auto f = compare_clouds(a, fewer);
    REQUIRE(f.ok());
    CHECK(f->match == CompareMatch::position);
    CHECK(f->matched == fewer.count);
    CHECK(get(*f, "rgb").max == 0);

    // Asked to match by order, the shuffle shows as large errors.
    auto o = compare_clouds(a, b, {CompareMatch::order});
    REQUIRE(o.ok());
    CHECK(get(*o, "pos").max > 0.1);
}

TEST_CASE("compare: refusals name what cannot be compared") {
    const PlyCloud a = cloud(10, 0, 5), b = cloud(12, 0, 6);
    auto r = compare_clouds(a, b, {CompareMatch::order});
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().refusal == "input-size-mismatch");
    CHECK(compare_clouds(a, PlyCloud{}).error().refusal == "no-frames");
    PlyCloud broken = a;
    broken.rotation.pop_back();
    CHECK(compare_clouds(broken, a).error().refusal == "input-size-mismatch");
    CHECK(parse_compare_match("position") == CompareMatch::position);
    CHECK(parse_compare_match("auto") == CompareMatch::automatic);
    CHECK_FALSE(parse_compare_match("nearest").has_value());
}

TEST_CASE("compare: given pairs measure each gaussian against its own partner, the rest by position") {
    // B is A shuffled, each moved by 1e-4 along x; gaussian 0's copy is moved onto gaussian 1 of
    // A instead. Given the shuffle, gaussian 0 is measured against itself (its full move), where
    // matching by position pairs it with gaussian 1 (no move, another's colour).
    const PlyCloud a = cloud(300, 1, 7);
    std::vector<std::uint32_t> order(a.count);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), std::mt19937(8));
    PlyCloud b;
    b.count = a.count;
    b.sh_degree = a.sh_degree;
    const int per = a.sh_per_gaussian();
    for (std::uint32_t i : order) {
        for (int k = 0; k < 3; ++k)
            b.position.push_back(i == 0 ? a.position[3 + k] : a.position[i * 3 + k] + (k == 0 ? 1e-4f : 0));
        for (int k = 0; k < 3; ++k) b.normal.push_back(0), b.scale.push_back(a.scale[i * 3 + k]);
        for (int k = 0; k < 4; ++k) b.rotation.push_back(a.rotation[i * 4 + k]);
        for (int k = 0; k < 4; ++k) b.color.push_back(a.color[i * 4 + k]);
        for (int k = 0; k < per; ++k) b.sh.push_back(a.sh[i * per + k]);
    }
    double moved = 0;  // gaussian 0's true error: the distance to gaussian 1, on the largest axis
    for (int k = 0; k < 3; ++k) moved = std::max(moved, double(std::fabs(a.position[3 + k] - a.position[k])));
    auto r = compare_clouds(a, b, std::span<const std::uint32_t>(order));
    REQUIRE(r.ok());
    CHECK(r->match == CompareMatch::given);
    CHECK(r->matched == a.count);
    CHECK(get(*r, "pos").max == Approx(std::max(moved, 1e-4)).epsilon(1e-3));
    CHECK(get(*r, "rgb").max == 0);
    CHECK(get(*r, "sh").max == 0);
    auto nearest = compare_clouds(a, b, {CompareMatch::position});
    REQUIRE(nearest.ok());
    CHECK(get(*nearest, "rgb").max > 0);  // a neighbour's colour: the pairs crossed

    // Partners left out (kNoPartner) are matched by position among what is left.
    std::vector<std::uint32_t> some = order;
    for (std::size_t j = 0; j < some.size(); j += 3)
        if (some[j] > 1) some[j] = kNoPartner;
    auto mixed = compare_clouds(a, b, std::span<const std::uint32_t>(some));
    REQUIRE(mixed.ok());
    CHECK(mixed->matched == a.count);
    CHECK(get(*mixed, "rgb").max == 0);  // the shuffled ones found their own by position

    // One partner a gaussian of B, each of A at most once and within A.
    CHECK(compare_clouds(a, b, std::span<const std::uint32_t>(order).first(10)).error().refusal ==
          "input-size-mismatch");
    std::vector<std::uint32_t> twice = order;
    twice[1] = twice[0];
    CHECK(compare_clouds(a, b, std::span<const std::uint32_t>(twice)).error().refusal == "input-size-mismatch");
    std::vector<std::uint32_t> past = order;
    past[2] = static_cast<std::uint32_t>(a.count);
    CHECK(compare_clouds(a, b, std::span<const std::uint32_t>(past)).error().refusal == "input-size-mismatch");
    CHECK(to_string(CompareMatch::given) == "given");
    CHECK_FALSE(parse_compare_match("given").has_value());  // its pairs come from code
}
