// The fast paths of §6 dequantization and the §3 window test decide exactly as the plain
// per-gaussian formulas do: same bits for every column, same gaussians visible.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "fourdgs/decode.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/reconstruct.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "fourdgs/writer.hpp"
#include "support/readers.hpp"

using namespace fourdgs;

namespace {

// §6 for one gaussian, straight from quantize.hpp's helpers: the reference the table-driven and
// two-wide code must match bit for bit.
void reference_row(const SceneInfo& scene, const ChunkBins& b, std::size_t i, GaussianBlock& out) {
    const Grid& g = scene.grid;
    for (int c = 0; c < 3; ++c) {
        out.position.push_back(
            static_cast<float>(g.pos_origin[c] + b.position[i * 3 + c] * g.step_pos));
        out.scale.push_back(static_cast<float>(std::exp(b.scale[i * 3 + c] * g.step_scale_log)));
    }
    const auto q = rotation_from_bins(g, static_cast<std::uint32_t>(b.rotation_index[i]),
                                      &b.rotation[i * 3]);
    for (double v : q) out.rotation.push_back(static_cast<float>(v));
    const std::int64_t gb = b.color[i * 3], rb = b.color[i * 3 + 1] + gb,
                       bb = b.color[i * 3 + 2] + gb;
    auto unit = [](double v) { return static_cast<float>(std::clamp(v, 0.0, 1.0)); };
    out.color.push_back(unit(static_cast<double>(rb) * g.step_rgb));
    out.color.push_back(unit(static_cast<double>(gb) * g.step_rgb));
    out.color.push_back(unit(static_cast<double>(bb) * g.step_rgb));
    out.color.push_back(unit(b.opacity[i] * g.step_alpha));
    const bool never = (b.flags[i] & kFlagNeverFades) != 0;
    const auto& w = scene.windows[static_cast<std::size_t>(b.window_index[i])];
    const double sigma = sigma_value(g, b.sigma_t[i]);
    const double vstep =
        std::ldexp(g.step_motion, -velocity_class_for_sigma(g, sigma, never, w.lo, w.hi));
    const double tstep = std::ldexp(g.step_time, birth_class_for_sigma(g, sigma, never));
    for (int c = 0; c < 3; ++c)
        out.motion.push_back(static_cast<float>(b.motion[i * 3 + c] * vstep));
    out.mu_t.push_back(static_cast<float>(b.mu_t[i] * tstep));
    out.sigma_t.push_back(never ? std::numeric_limits<float>::infinity()
                                : static_cast<float>(sigma));
    out.win_lo.push_back(static_cast<float>(w.lo));
    out.win_hi.push_back(static_cast<float>(w.hi));
}

template <class T, class A, class B>
bool same_bits(const std::vector<T, A>& a, const std::vector<T, B>& b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Random bins for `n` gaussians whose scale and sigma bins span `spread` values around a centre
// (narrow: the per-bin tables; wide: the direct expressions), rotations reaching past ±1 so the
// clamp and the zero-norm cases occur, and some never-fading gaussians.
ChunkBins random_bins(std::uint32_t n, std::int32_t spread, std::size_t windows,
                      std::mt19937& rng) {
    ChunkBins b;
    b.count = n;
    std::uniform_int_distribution<std::int32_t> pos(-300000, 300000), spread_bin(-spread, spread),
        rot(-9000, 9000), col(-200, 400), win(0, static_cast<std::int32_t>(windows) - 1),
        ri(0, 3), flag(0, 7);
    for (std::uint32_t i = 0; i < n; ++i) {
        for (int c = 0; c < 3; ++c) {
            b.position.push_back(pos(rng));
            b.scale.push_back(-400 + spread_bin(rng));
            b.rotation.push_back(i % 17 == 0 ? 0 : rot(rng));  // all-zero bins: norm 1
            b.color.push_back(col(rng));
            b.motion.push_back(pos(rng) / 10);
        }
        b.rotation_index.push_back(ri(rng));
        b.opacity.push_back(col(rng));
        b.mu_t.push_back(pos(rng));
        b.sigma_t.push_back(-50 + spread_bin(rng));
        b.flags.push_back(flag(rng) == 0 ? kFlagNeverFades : 0);
        b.window_index.push_back(win(rng));
    }
    return b;
}

// A scene whose grid and windows the random bins exercise.
SceneInfo grid_scene() {
    SceneInfo scene;
    scene.windows = {{0, 1}, {1, 2.5}, {2.5, 10}, {10, 1e6}};
    Grid& g = scene.grid;
    g.pos_origin = {-2, 0.5, 3};
    g.step_pos = 1e-5;
    g.step_scale_log = 0.0078125;
    g.step_rot = 1.0 / 8192;  // bins up to ±9000 reach past ±1: the clamp
    g.step_rgb = g.step_alpha = 1.0 / 255;
    g.step_motion = 1e-4;
    g.step_time = 1e-3;
    g.step_sigma_log = 0.03;
    g.cutoff = 0.05;
    g.k = Grid::k_for_cutoff(g.cutoff);
    return scene;
}

}  // namespace

TEST_CASE("decode: dequantize_into and dequantize equal the per-gaussian §6 formulas bit for bit",
          "[decode]") {
    const SceneInfo scene = grid_scene();
    std::mt19937 rng(6);
    for (std::int32_t spread : {3, 40000}) {
        for (std::uint32_t n : {0u, 1u, 2u, 3u, 65u, 1000u}) {
            const ChunkBins bins = random_bins(n, spread, scene.windows.size(), rng);
            GaussianBlock expected;
            for (std::size_t i = 0; i < n; ++i) reference_row(scene, bins, i, expected);

            GaussianBlock appended;  // dequantize onto rows already there
            appended.position.assign(6, 7.f);
            appended.count = 2;
            appended.scale.resize(6);
            appended.rotation.resize(8);
            appended.color.resize(8);
            appended.motion.resize(6);
            for (auto* v : {&appended.mu_t, &appended.sigma_t, &appended.win_lo,
                            &appended.win_hi})
                v->resize(2);
            appended.flags.resize(2);
            appended.window_index.resize(2);
            appended.object_id.resize(2);
            dequantize(scene, bins, appended);

            GaussianBlock in_place;
            size_rows(in_place, n + 5, 0);
            dequantize_into(scene, bins, in_place, 5);
            auto tail = [](const Column<float>& v, std::size_t from) {
                return std::vector<float>(v.begin() + static_cast<std::ptrdiff_t>(from), v.end());
            };
            for (const GaussianBlock* got : {&appended, &in_place}) {
                const std::size_t skip = got == &appended ? 2 : 5;
                CHECK(same_bits(tail(got->position, skip * 3), expected.position));
                CHECK(same_bits(tail(got->scale, skip * 3), expected.scale));
                CHECK(same_bits(tail(got->rotation, skip * 4), expected.rotation));
                CHECK(same_bits(tail(got->color, skip * 4), expected.color));
                CHECK(same_bits(tail(got->motion, skip * 3), expected.motion));
                CHECK(same_bits(tail(got->mu_t, skip), expected.mu_t));
                CHECK(same_bits(tail(got->sigma_t, skip), expected.sigma_t));
                CHECK(same_bits(tail(got->win_lo, skip), expected.win_lo));
                CHECK(same_bits(tail(got->win_hi, skip), expected.win_hi));
            }
            CHECK(std::vector<float>(appended.position.begin(), appended.position.begin() + 6) ==
                  std::vector<float>(6, 7.f));
        }
    }
}

// The loops that convert bins to floats run in AVX2 where the CPU has it (decode.cpp's
// FOURDGS_AVX2_CLONES, without FMA) and in SSE2 elsewhere: either way each float is the
// per-gaussian formula's, also at the bins' extremes and for rows that share their timing (the
// motion and mu_t loops of a tracked capture's step), over lengths that leave every vector tail.
TEST_CASE("decode: the vector conversions of §6 equal the per-gaussian formulas bit for bit at "
          "extreme bins and shared timing",
          "[decode]") {
    const SceneInfo scene = grid_scene();
    std::mt19937 rng(40);
    constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min(),
                           kMax = std::numeric_limits<std::int32_t>::max();
    const std::int32_t edges[] = {kMin, kMin + 1, -(1 << 24) - 1, -(1 << 24), -1, 0, 1,
                                  (1 << 24) + 1, 1 << 30, kMax - 1, kMax};
    std::uniform_int_distribution<std::size_t> pick(0, std::size(edges) - 1);
    for (bool never_fades : {false, true}) {
        for (std::uint32_t n : {1u, 3u, 4u, 5u, 7u, 8u, 9u, 15u, 16u, 17u, 33u, 100u}) {
            ChunkBins bins = random_bins(n, 3, scene.windows.size(), rng);
            for (std::uint32_t i = 0; i < n; ++i) {  // the timing of row 0 in every row
                bins.sigma_t[i] = -50;
                bins.flags[i] = never_fades ? kFlagNeverFades : 0;
                bins.window_index[i] = 2;
                for (int c = 0; c < 3; ++c) {
                    bins.position[i * 3 + c] = edges[pick(rng)];
                    bins.motion[i * 3 + c] = edges[pick(rng)];
                    bins.color[i * 3 + c] = edges[pick(rng)];
                }
                bins.mu_t[i] = edges[pick(rng)];
                bins.opacity[i] = edges[pick(rng)];
            }
            GaussianBlock expected;
            for (std::size_t i = 0; i < n; ++i) reference_row(scene, bins, i, expected);
            GaussianBlock got;
            dequantize_state(scene, bins, got);
            CHECK(same_bits(got.position, expected.position));
            CHECK(same_bits(got.color, expected.color));
            CHECK(same_bits(got.motion, expected.motion));
            CHECK(same_bits(got.mu_t, expected.mu_t));
            CHECK(same_bits(got.sigma_t, expected.sigma_t));
        }
    }
}

TEST_CASE("decode: dequantize_state over a block that held another state equals dequantize "
          "into an empty one, column for column",
          "[decode]") {
    const SceneInfo scene = grid_scene();
    std::mt19937 rng(9);
    // The states a reused block takes in turn: larger and smaller, with and without the
    // optional columns (source ids, object ids, gaussian ids) and SH bands, so that every
    // column is reused, grown, shrunk, emptied and refilled.
    struct Shape {
        std::uint32_t n;
        bool source, objects, ids;
        int bands;
    };
    const Shape shapes[] = {{1000, true, true, true, 2}, {300, false, false, true, 0},
                            {700, true, false, false, 1}, {1200, false, true, true, 3},
                            {0, false, false, false, 0}, {500, true, true, true, 0}};
    GaussianBlock reused;
    for (const Shape& shape : shapes) {
        INFO("n = " << shape.n << ", bands " << shape.bands);
        ChunkBins bins = random_bins(shape.n, 40, scene.windows.size(), rng);
        std::uniform_int_distribution<std::int32_t> any(0, 255);
        auto fill = [&](std::vector<std::int32_t>& v) {
            v.resize(shape.n);
            for (auto& x : v) x = any(rng);
        };
        bins.has_source_group = bins.has_source_index = shape.source;
        if (shape.source) fill(bins.source_group), fill(bins.source_index);
        bins.has_object_id = shape.objects;
        if (shape.objects) fill(bins.object_id);
        bins.has_gaussian_id = shape.ids;
        if (shape.ids) fill(bins.gaussian_id);
        bins.sh_bands = shape.bands;
        for (int b = 1; b <= shape.bands; ++b) {
            bins.sh[b - 1].resize(std::size_t{shape.n} * 3 * (2 * b + 1));
            for (auto& x : bins.sh[b - 1]) x = static_cast<std::uint8_t>(any(rng));
        }
        GaussianBlock fresh;
        dequantize(scene, bins, fresh);
        dequantize_state(scene, bins, reused);
        CHECK(reused.count == fresh.count);
        CHECK(reused.sh_degree == fresh.sh_degree);
        CHECK(reused.has_source_ids == fresh.has_source_ids);
        CHECK(same_bits(reused.position, fresh.position));
        CHECK(same_bits(reused.scale, fresh.scale));
        CHECK(same_bits(reused.rotation, fresh.rotation));
        CHECK(same_bits(reused.color, fresh.color));
        CHECK(same_bits(reused.motion, fresh.motion));
        CHECK(same_bits(reused.mu_t, fresh.mu_t));
        CHECK(same_bits(reused.sigma_t, fresh.sigma_t));
        CHECK(same_bits(reused.win_lo, fresh.win_lo));
        CHECK(same_bits(reused.win_hi, fresh.win_hi));
        CHECK(same_bits(reused.flags, fresh.flags));
        CHECK(same_bits(reused.window_index, fresh.window_index));
        CHECK(same_bits(reused.sh, fresh.sh));
        CHECK(same_bits(reused.object_id, fresh.object_id));
        CHECK(same_bits(reused.source_group, fresh.source_group));
        CHECK(same_bits(reused.source_index, fresh.source_index));
        CHECK(same_bits(reused.gaussian_id, fresh.gaussian_id));
    }
}

TEST_CASE("reconstruct: the float window test decides as the f64 comparison for every t",
          "[reconstruct]") {
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> xs = {-inf, -1e30f, -1.f, -0.f, 0.f, 1e-40f, 0.1f, 0.3f, 1.f, 5.5f,
                             16777216.f, 16777218.f, 3e38f, std::numeric_limits<float>::max(),
                             inf};
    std::vector<double> ts = {-std::numeric_limits<double>::infinity(), -1e300, -1.0, -0.0, 0.0,
                              1e-300, 1e-45, 0.1, 0.3, 1.0, 5.5, 16777217.0, 3.4e38, 3.5e38, 1e300,
                              std::numeric_limits<double>::infinity(),
                              std::numeric_limits<double>::quiet_NaN()};
    for (float x : xs) ts.push_back(std::nextafter(static_cast<double>(x), 0.0));
    for (float x : xs) ts.push_back(std::nextafter(static_cast<double>(x), 1e301));
    for (double t : ts) {
        const float f = float_at_or_below(t);
        for (float x : xs) {
            INFO("x = " << x << ", t = " << t);
            CHECK((x <= t) == (x <= f));
            CHECK((t < x) == (f < x));
        }
    }
}

TEST_CASE("reconstruct: evaluate's run-at-a-time window test keeps exactly the gaussians "
          "is_visible keeps",
          "[reconstruct]") {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(0.f, 10.f);
    GaussianBlock b;
    b.count = 1000;
    for (std::size_t i = 0; i < b.count; ++i) {
        const float lo = u(rng), len = i % 3 == 0 ? 0.f : u(rng) / 4;
        b.win_lo.push_back(lo);
        b.win_hi.push_back(lo + len);
        b.mu_t.push_back(lo + len / 2);
        b.sigma_t.push_back(i % 7 == 0 ? std::numeric_limits<float>::infinity() : len / 3 + 0.01f);
        for (int c = 0; c < 3; ++c) {
            b.position.push_back(u(rng));
            b.motion.push_back(i % 2 ? 0.f : u(rng) - 5);
            b.scale.push_back(0.01f);
        }
        for (int c = 0; c < 4; ++c) b.rotation.push_back(c == 3 ? 1.f : 0.f);
        for (int c = 0; c < 4; ++c) b.color.push_back(0.5f);
        b.flags.push_back(0);
        b.window_index.push_back(0);
        b.object_id.push_back(0);
    }
    Frame frame;
    for (double t : {0.0, 0.5, 3.25, static_cast<double>(b.win_lo[10]), 9.99, 12.0}) {
        evaluate(b, t, 0.05, frame);
        std::vector<std::uint32_t> expected;
        for (std::size_t i = 0; i < b.count; ++i)
            if (is_visible(b.win_lo[i], b.win_hi[i], b.mu_t[i], b.sigma_t[i], t, 0.05, nullptr))
                expected.push_back(static_cast<std::uint32_t>(i));
        REQUIRE(frame.count == expected.size());
        CHECK(std::vector<std::uint32_t>(frame.source.begin(),
                                         frame.source.begin() +
                                             static_cast<std::ptrdiff_t>(frame.count)) == expected);
        CHECK(visible_count(b, t, 0.05) == expected.size());
    }
}

namespace {

// §3 for one gaussian at a time, as the formulas are written (is_visible, displaced, the track
// composed after, a base center past f32 taken in f64): what evaluate() must give, bit for bit.
// A row with a value that is not a finite f32 is counted in `unrepresentable` instead.
Frame reference_evaluate(const GaussianBlock& b, double t, double cutoff,
                         std::span<const ObjectTrack> tracks) {
    Frame f;
    f.sh_degree = b.sh_degree;
    const std::size_t per = 3 * static_cast<std::size_t>(sh_coeffs_per_component(b.sh_degree));
    const TrackPoses poses(tracks, t);
    for (std::size_t i = 0; i < b.count; ++i) {
        double m = 0;
        if (!is_visible(b.win_lo[i], b.win_hi[i], b.mu_t[i], b.sigma_t[i], t, cutoff, &m))
            continue;
        Vec3 c{};
        for (int k = 0; k < 3; ++k) {
            c[k] = displaced(b.position[i * 3 + k], b.motion[i * 3 + k], t, b.mu_t[i]);
            if (std::isinf(c[k]) && b.motion[i * 3 + k] != 0.f)
                c[k] = double(b.position[i * 3 + k]) +
                       double(b.motion[i * 3 + k]) * (t - double(b.mu_t[i]));
        }
        Quat q{b.rotation[i * 4], b.rotation[i * 4 + 1], b.rotation[i * 4 + 2],
               b.rotation[i * 4 + 3]};
        if (const Pose* p = poses.find(b.object_id[i])) {
            c = fourdgs::apply(*p, c);
            q = multiply(p->rotation, q);
        }
        float row[14];
        for (int k = 0; k < 3; ++k) row[k] = static_cast<float>(c[k]);
        for (int k = 0; k < 3; ++k) row[3 + k] = b.scale[i * 3 + k];
        for (int k = 0; k < 4; ++k) row[6 + k] = static_cast<float>(q[k]);
        for (int k = 0; k < 3; ++k) row[10 + k] = b.color[i * 4 + k];
        row[13] = static_cast<float>(b.color[i * 4 + 3] * m);
        if (!std::all_of(row, row + 14, [](float v) { return std::isfinite(v); })) {
            ++f.unrepresentable;
            continue;
        }
        f.center.insert(f.center.end(), row, row + 3);
        f.scale.insert(f.scale.end(), row + 3, row + 6);
        f.rotation.insert(f.rotation.end(), row + 6, row + 10);
        f.color.insert(f.color.end(), row + 10, row + 14);
        f.object_id.push_back(b.object_id[i]);
        f.flags.push_back(b.flags[i]);
        f.source.push_back(static_cast<std::uint32_t>(i));
        f.sh.insert(f.sh.end(), b.sh.begin() + static_cast<std::ptrdiff_t>(i * per),
                    b.sh.begin() + static_cast<std::ptrdiff_t>((i + 1) * per));
        ++f.count;
    }
    return f;
}

template <class T, class A, class B>
bool same_bits(const std::vector<T, A>& got, const std::vector<T, B>& want, std::size_t n) {
    // memcmp is not given an empty vector's data(), which may be null (UBSan).
    return got.size() >= n && want.size() >= n &&
           (n == 0 || std::memcmp(got.data(), want.data(), n * sizeof(T)) == 0);
}

// Whether the f64 product alpha * marginal sits so near an f32 rounding boundary that an
// estimated marginal cannot decide the f32 opacity (evaluate() then calls exp itself).
bool near_f32_boundary(double product) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &product, sizeof bits);
    const std::int64_t low = static_cast<std::int64_t>(bits & 0x1fffffff);
    return std::abs(low - 0x10000000) < 0x4000;
}

}  // namespace

TEST_CASE("reconstruct: evaluate equals the per-gaussian §3 formulas bit for bit, also where "
          "the marginal is at the cutoff or the opacity at an f32 rounding boundary (M003)",
          "[reconstruct]") {
    const float inf = std::numeric_limits<float>::infinity();
    // At t = 0 the gaussians made to sit at the cutoff have z = (0 - mu_t) / sigma_t = k_cut
    // exactly (sigma_t a power of two, mu_t = -k_cut sigma_t), so their marginal is m0.
    const float k_cut = static_cast<float>(std::sqrt(-2 * std::log(0.05)));
    const double z0 = k_cut, m0 = std::exp(-0.5 * z0 * z0);
    std::mt19937 rng(14);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    GaussianBlock b;
    b.count = 200000;
    b.sh_degree = 1;
    for (std::size_t i = 0; i < b.count; ++i) {
        const float start = 8 * u(rng), len = 4 * u(rng);
        float lo = i % 50 == 0 ? -inf : start, hi = i % 60 == 0 ? inf : start + len;
        float sigma = 0.01f + 2 * u(rng), mu = start + (len + 2) * u(rng) - 1;
        switch (i % 100) {
            case 0: case 1: case 2: case 3: case 4: sigma = inf; break;
            case 5: sigma = 0.f; break;
            case 6: sigma = std::numeric_limits<float>::quiet_NaN(); break;
            case 7: sigma = 1e-30f; break;
            case 8: case 9: case 10: case 11:  // at t = 0, marginal m0
                sigma = std::ldexp(1.f, static_cast<int>(i % 7) - 3);
                mu = (i % 2 ? -k_cut : k_cut) * sigma;
                lo = -inf;
                hi = inf;
                break;
            default: break;
        }
        b.win_lo.push_back(lo);
        b.win_hi.push_back(hi);
        b.mu_t.push_back(mu);
        b.sigma_t.push_back(sigma);
        for (int c = 0; c < 3; ++c) {
            b.position.push_back(20 * u(rng) - 10);
            b.motion.push_back(i % 3 == 0 ? 0.f : 2 * u(rng) - 1);
            b.scale.push_back(u(rng));
        }
        for (int c = 0; c < 4; ++c) b.rotation.push_back(2 * u(rng) - 1);
        for (int c = 0; c < 3; ++c) b.color.push_back(u(rng));
        b.color.push_back(i % 97 == 0 ? 0.f : i % 89 == 0 ? 1e-40f : u(rng));
        b.flags.push_back(static_cast<std::uint8_t>(i % 5));
        b.window_index.push_back(0);
        b.object_id.push_back(static_cast<std::uint32_t>(i % 4));
        for (int c = 0; c < 9; ++c) b.sh.push_back(static_cast<std::uint8_t>(rng()));
    }
    // Objects 1 and 2 move; 3 has no track.
    std::vector<ObjectTrack> tracks(2);
    for (std::uint32_t id : {1u, 2u}) {
        ObjectTrack& tr = tracks[id - 1];
        tr.object_id = id;
        tr.samples.push_back({0.0, {0, 0, 0, 1}, {0, 0, 0}});
        tr.samples.push_back({10.0, {0, std::sin(0.3 * id), 0, std::cos(0.3 * id)}, {1, 2, 3}});
    }
    EvaluateOptions options;
    options.tracks = tracks;

    Frame frame;
    std::size_t at_cutoff = 0, undecidable = 0;
    const double cutoffs[] = {0.05, m0, std::nextafter(m0, 0.0), std::nextafter(m0, 1.0),
                              m0 * (1 + 0x1p-44), 0.5, 0.0, -1.0, 1.0, 1e-320, 2.0};
    for (double co : cutoffs) {
        for (double t : {2.5, 5.0, 0.0, -1e300, 1e30}) {
            INFO("cutoff = " << co << ", t = " << t);
            evaluate(b, t, co, frame, options);
            const Frame want = reference_evaluate(b, t, co, tracks);
            REQUIRE(frame.count == want.count);
            CHECK(frame.unrepresentable == want.unrepresentable);
            CHECK(same_bits(frame.source, want.source, want.count));
            CHECK(same_bits(frame.flags, want.flags, want.count));
            CHECK(same_bits(frame.center, want.center, want.count * 3));
            CHECK(same_bits(frame.scale, want.scale, want.count * 3));
            CHECK(same_bits(frame.rotation, want.rotation, want.count * 4));
            CHECK(same_bits(frame.color, want.color, want.count * 4));
            CHECK(same_bits(frame.object_id, want.object_id, want.count));
            CHECK(same_bits(frame.sh, want.sh, want.count * 9));
            // Every row is visible_state()'s f64 state rounded to f32.
            const TrackPoses poses(tracks, t);
            std::size_t rounded_alike = 0;
            for (std::size_t k = 0; k < frame.count; ++k) {
                const auto s = visible_state(b, frame.source[k], t, co, poses);
                bool same = s && s->opacity == frame.color[k * 4 + 3];
                for (int c = 0; s && c < 3; ++c)
                    same = same && static_cast<float>(s->center[c]) == frame.center[k * 3 + c];
                for (int c = 0; s && c < 4; ++c)
                    same = same && static_cast<float>(s->rotation[c]) == frame.rotation[k * 4 + c];
                rounded_alike += same;
            }
            CHECK(rounded_alike == frame.count);
            for (std::size_t i = 0; i < b.count; ++i) {
                double m = -1;  // set when inside the window
                is_visible(b.win_lo[i], b.win_hi[i], b.mu_t[i], b.sigma_t[i], t, co, &m);
                if (m < 0) continue;
                at_cutoff += std::fabs(m - co) < co * 0x1p-40;
                undecidable += m >= co && near_f32_boundary(b.color[i * 4 + 3] * m);
            }
        }
    }
    // The cases an estimated marginal cannot decide were there to be decided.
    CHECK(at_cutoff > 100);
    CHECK(undecidable > 0);
}

TEST_CASE("decode: an index whose counts outnumber its bytes is decoded chunk by chunk, to the "
          "same block",
          "[decode]") {
    // 60,000 identical gaussians in chunks of 500: constant streams hold each chunk in a few
    // hundred bytes, so the index's counts exceed the bytes fetched and cannot size the output.
    const std::size_t n = 60000;
    GaussianColumns cols;
    cols.resize(n);
    std::fill(cols.position.begin(), cols.position.end(), 0.25f);
    std::fill(cols.scale.begin(), cols.scale.end(), 0.01f);
    for (std::size_t i = 0; i < n; ++i) cols.rotation[i * 4 + 3] = 1.f;
    std::fill(cols.color.begin(), cols.color.end(), 0.5f);
    std::fill(cols.mu_t.begin(), cols.mu_t.end(), 1.f);
    std::fill(cols.sigma_t.begin(), cols.sigma_t.end(), 0.5f);
    std::fill(cols.win_hi.begin(), cols.win_hi.end(), 2.0);
    SceneInput scene;
    scene.header.duration_sec = 2;
    scene.gaussians = cols.batch();
    WriterOptions wo;
    wo.max_chunk_gaussians = 500;
    auto file = write_scene(scene, wo);
    REQUIRE(file.ok());
    MemorySource src(*file);
    auto reader = IndexedReader::open(src);
    REQUIRE(reader.ok());
    REQUIRE(reader->scene().index.size() == n / 500);
    std::uint64_t chunk_bytes = 0;
    for (const ChunkIndex& e : reader->scene().index) chunk_bytes += e.chunk_length;
    REQUIRE(chunk_bytes < n);  // fewer bytes than gaussians: the index is not trusted to size
    std::vector<DecodeWorkspace> pool;
    GaussianBlock all;
    REQUIRE(reader->read_all(all, pool, 2).ok());
    REQUIRE(all.count == n);
    GaussianBlock expected;
    for (std::size_t k = 0; k < reader->scene().index.size(); ++k) {
        DecodeWorkspace ws;
        REQUIRE(reader->decode_chunk(k, ws).ok());
        expected.append(ws.block);
    }
    test::require_identical(all, expected);
}
