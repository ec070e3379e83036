// The writer (fourdgs/writer.hpp): seeded property tests over random scenes through both readers,
// declared bounds against measured deviations, determinism, refusals, chunk planning and the
// summary's optional parts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/portable.hpp"
#include "fourdgs/quantize.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "fourdgs/writer.hpp"
#include "support/bench_scenes.hpp"

using namespace fourdgs;

namespace {

constexpr float kInfF = std::numeric_limits<float>::infinity();

// A scene that owns its columns; batch() lends them.
struct OwnedScene {
    SceneHeader header;
    std::size_t n = 0;
    std::vector<float> position, scale, rotation, color, motion, mu_t, sigma_t, sh;
    std::vector<double> win_lo, win_hi;
    std::vector<std::uint32_t> object_id;
    std::vector<std::int32_t> source_group, source_index;

    GaussianBatch batch() const {
        GaussianBatch b;
        b.count = n;
        b.position = position;
        b.scale = scale;
        b.rotation = rotation;
        b.color = color;
        b.motion = motion;
        b.mu_t = mu_t;
        b.sigma_t = sigma_t;
        b.win_lo = win_lo;
        b.win_hi = win_hi;
        b.sh_degree = header.sh_degree;
        b.sh = sh;
        b.object_id = object_id;
        b.source_group = source_group;
        b.source_index = source_index;
        return b;
    }
    SceneInput input() const { return SceneInput{header, batch()}; }
};

struct SceneShape {
    std::size_t n = 100;
    int sh_degree = 0;
    int windows = 4;
    double duration = 8;
    bool object_ids = false, source_group = false;
    bool zero_motion = false;
    double coord_scale = 2, coord_offset = 0;
};

OwnedScene random_scene(std::uint32_t seed, const SceneShape& shape) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    std::normal_distribution<double> nd(0, 1);
    OwnedScene s;
    s.n = shape.n;
    s.header.duration_sec = shape.duration;
    s.header.sh_degree = shape.sh_degree;
    s.header.library = "fourdgs tests";
    // Windows: an even partition, plus one long window spanning half the clip.
    std::vector<std::pair<double, double>> wins;
    for (int k = 0; k < shape.windows; ++k)
        wins.push_back({shape.duration * k / shape.windows,
                        std::min(shape.duration, shape.duration * (k + 1) / shape.windows)});
    wins.push_back({0.25 * shape.duration, 0.75 * shape.duration});
    const int per = 3 * sh_coeffs_per_component(shape.sh_degree);
    for (std::size_t i = 0; i < shape.n; ++i) {
        for (int c = 0; c < 3; ++c)
            s.position.push_back(static_cast<float>(shape.coord_offset +
                                                    shape.coord_scale * (2 * u(rng) - 1)));
        for (int c = 0; c < 3; ++c) s.scale.push_back(static_cast<float>(std::exp(-6 + 5 * u(rng))));
        float q[4];
        do {
            for (float& v : q) v = static_cast<float>(nd(rng));
        } while (std::fabs(q[0]) + std::fabs(q[1]) + std::fabs(q[2]) + std::fabs(q[3]) < 1e-3);
        const float scale = static_cast<float>(0.1 + 10 * u(rng));  // any norm > 0
        for (float v : q) s.rotation.push_back(v * scale);
        for (int c = 0; c < 4; ++c) {
            double v = u(rng);
            if (u(rng) < 0.05) v = u(rng) < 0.5 ? 0.0 : 1.0;
            s.color.push_back(static_cast<float>(v));
        }
        for (int c = 0; c < 3; ++c)
            s.motion.push_back(shape.zero_motion ? 0.0f : static_cast<float>(0.3 * nd(rng)));
        const auto& w = wins[std::min<std::size_t>(static_cast<std::size_t>(u(rng) * wins.size()),
                                                   wins.size() - 1)];
        s.win_lo.push_back(w.first);
        s.win_hi.push_back(w.second);
        s.mu_t.push_back(static_cast<float>(w.first + (w.second - w.first) * u(rng)));
        const double r = u(rng);
        s.sigma_t.push_back(r < 0.1 ? kInfF
                                    : static_cast<float>(std::exp(std::log(0.002) +
                                                                  (std::log(3.0) - std::log(0.002)) * u(rng))));
        for (int k = 0; k < per; ++k) s.sh.push_back(static_cast<float>(-5 + 10 * u(rng)));
        if (shape.object_ids)
            s.object_id.push_back(u(rng) < 0.5 ? 0u : static_cast<std::uint32_t>(rng()));
        if (shape.source_group) s.source_group.push_back(static_cast<std::int32_t>(i / 7));
        s.source_index.push_back(static_cast<std::int32_t>(i));  // identity for matching
    }
    return s;
}

double parse_bound(const Quantization& q, const char* key) {
    const std::string* s = q.bound(key);
    REQUIRE(s != nullptr);
    REQUIRE(is_bound_spelling(*s));
    double v = -1;
    auto r = fourdgs::from_chars(s->data(), s->data() + s->size(), v);
    REQUIRE(r.ec == std::errc());
    REQUIRE(r.ptr == s->data() + s->size());
    return v;
}

struct Measured {
    double pos = 0, scale = 0, rot = 0, rgb = 0, alpha = 0, motion = 0, time = 0, sigma = 0;
    int sh = 0;
    std::array<int, 3> sh_band{};
};

// Matches every decoded gaussian to its input by source_index and measures each attribute's
// deviation the way §5.3 names them.
Measured measure(const OwnedScene& s, const GaussianBlock& d) {
    Measured m;
    REQUIRE(d.count == s.n);
    REQUIRE(d.has_source_ids);
    std::vector<int> seen(s.n, 0);
    const int per = sh_coeffs_per_component(s.header.sh_degree);
    REQUIRE(d.sh_degree == s.header.sh_degree);
    for (std::size_t j = 0; j < d.count; ++j) {
        const std::int32_t si = d.source_index[j];
        REQUIRE(si >= 0);
        REQUIRE(static_cast<std::size_t>(si) < s.n);
        const std::size_t i = static_cast<std::size_t>(si);
        REQUIRE(seen[i]++ == 0);
        for (int c = 0; c < 3; ++c) {
            m.pos = std::max(m.pos, std::fabs(double(d.position[j * 3 + c]) - s.position[i * 3 + c]));
            m.scale = std::max(m.scale, std::fabs(std::log(double(d.scale[j * 3 + c])) -
                                                  std::log(double(s.scale[i * 3 + c]))));
            m.rgb = std::max(m.rgb, std::fabs(double(d.color[j * 4 + c]) - s.color[i * 4 + c]));
            m.motion = std::max(m.motion, std::fabs(double(d.motion[j * 3 + c]) - s.motion[i * 3 + c]));
        }
        m.alpha = std::max(m.alpha, std::fabs(double(d.color[j * 4 + 3]) - s.color[i * 4 + 3]));
        // Rotation up to sign, against the normalized input.
        double q[4], norm = 0;
        for (int c = 0; c < 4; ++c) norm += double(s.rotation[i * 4 + c]) * s.rotation[i * 4 + c];
        norm = std::sqrt(norm);
        double ep = 0, en = 0;
        for (int c = 0; c < 4; ++c) {
            q[c] = s.rotation[i * 4 + c] / norm;
            ep = std::max(ep, std::fabs(double(d.rotation[j * 4 + c]) - q[c]));
            en = std::max(en, std::fabs(double(d.rotation[j * 4 + c]) + q[c]));
        }
        m.rot = std::max(m.rot, std::min(ep, en));
        m.time = std::max(m.time, std::fabs(double(d.mu_t[j]) - s.mu_t[i]));
        if (std::isinf(s.sigma_t[i])) {
            REQUIRE(std::isinf(d.sigma_t[j]));
            REQUIRE((d.flags[j] & 1) == 1);
        } else {
            m.sigma = std::max(m.sigma, std::fabs(std::log(double(d.sigma_t[j])) -
                                                  std::log(double(s.sigma_t[i]))));
        }
        REQUIRE(d.win_lo[j] == static_cast<float>(s.win_lo[i]));
        REQUIRE(d.win_hi[j] == static_cast<float>(s.win_hi[i]));
        if (!s.object_id.empty()) REQUIRE(d.object_id[j] == s.object_id[i]);
        else REQUIRE(d.object_id[j] == 0);
        if (!s.source_group.empty()) REQUIRE(d.source_group[j] == s.source_group[i]);
        for (int b = 1; b <= s.header.sh_degree; ++b)
            for (int c = 0; c < 3; ++c)
                for (int t = 0; t < sh_band_width(b); ++t) {
                    const int k = sh_band_first(b) + t;
                    const int want = sh_byte(s.sh[i * 3 * per + c * per + k]);
                    const int got = d.sh[j * 3 * per + c * per + k];
                    m.sh_band[b - 1] = std::max(m.sh_band[b - 1], std::abs(got - want));
                    m.sh = std::max(m.sh, std::abs(got - want));
                }
    }
    return m;
}

// Both readers, every attribute within its declared bound; `exact` additionally demands that the
// declared bounds are the measured maxima (the one-shot writer's promise).
void check_file(const std::vector<std::uint8_t>& bytes, const OwnedScene& s, bool exact,
                const WriterOptions& opt) {
    MemorySource src(bytes);
    auto streamed = read_streaming(src);
    REQUIRE(streamed.ok());
    REQUIRE_FALSE(streamed->truncation);
    const SceneInfo& info = streamed->info;
    REQUIRE(info.header.gaussian_count == s.n);
    REQUIRE(info.header.temporal_model == "gaussian-birth");
    REQUIRE((info.header.flags & 0x01) == 0);
    REQUIRE(((info.header.flags & 0x02) != 0) == (!opt.chunk_compression.empty() && s.n > 0));
    REQUIRE((info.header.flags & 0xFC) == 0);

    auto indexed = IndexedReader::open(src);
    REQUIRE(indexed.ok());
    REQUIRE(indexed->index_built_by_scan() == !opt.write_index);
    if (opt.write_index && opt.write_crc && !indexed->scene().index.empty())
        REQUIRE(indexed->scene().summary_crc_verified);
    if (opt.write_index && opt.write_crc && s.n > 0) REQUIRE(info.summary_crc_verified);
    // (The indexed reader's scan of an index-less file does not collect Statistics; the
    // streaming reader always does.)
    REQUIRE(info.statistics.has_value() == opt.write_statistics);
    if (opt.write_index)
        REQUIRE(indexed->scene().statistics.has_value() == opt.write_statistics);
    if (opt.write_statistics) {
        REQUIRE(info.statistics->gaussian_count == s.n);
        REQUIRE(info.statistics->aabb == info.header.aabb);
        REQUIRE(info.statistics->duration_sec == s.header.duration_sec);
        REQUIRE(info.statistics->chunk_count == indexed->scene().index.size());
    }
    GaussianBlock all;
    std::vector<DecodeWorkspace> pool;
    REQUIRE(indexed->read_all(all, pool, 2).ok());
    REQUIRE(all.count == s.n);

    const Quantization& q = info.quantization;
    REQUIRE(q.scheme == "uniform-v1");
    REQUIRE(q.bound("object_id") == nullptr);  // M018
    for (const auto& [k, v] : q.bounds) REQUIRE(is_bound_spelling(v));  // M019
    for (double step : {q.step_pos, q.step_scale_log, q.step_rot, q.step_rgb, q.step_alpha,
                        q.step_motion, q.step_time, q.step_sigma_log})
        REQUIRE((std::isfinite(step) && step > 0));  // M026
    for (double o : q.pos_origin) REQUIRE(std::isfinite(o));

    if (s.n == 0) return;
    const Measured a = measure(s, streamed->gaussians);
    const Measured b = measure(s, all);
    REQUIRE(a.pos == b.pos);
    REQUIRE(a.rot == b.rot);
    REQUIRE(a.motion == b.motion);
    const std::pair<const char*, double> keys[] = {
        {"pos", a.pos},     {"scale_rel", a.scale}, {"rot", a.rot},   {"rgb", a.rgb},
        {"alpha", a.alpha}, {"motion", a.motion},   {"time", a.time}, {"sigma_rel", a.sigma}};
    for (const auto& [key, got] : keys) {
        INFO("bound " << key << " declared " << *q.bound(key) << " measured " << got);
        const double declared = parse_bound(q, key);
        REQUIRE(got <= declared);
        if (exact) REQUIRE(got == declared);  // M028, M099: the measured maxima
    }
    // SH bounds follow §6.5's rule, not the measurement (M023, M103).
    const double sh = parse_bound(q, "sh");
    REQUIRE(a.sh <= sh);
    if (!q.sh_depths.empty()) {
        int coarsest = 8;
        for (std::size_t bnd = 0; bnd < q.sh_depths.size(); ++bnd) {
            const int depth = q.sh_depths[bnd];
            coarsest = std::min(coarsest, depth);
            const std::string key = "sh_band" + std::to_string(bnd + 1);
            const double declared = parse_bound(q, key.c_str());
            REQUIRE(declared == sh_depth_bound(depth) * (depth < 8));
            REQUIRE(a.sh_band[bnd] <= declared);
        }
        REQUIRE(q.step_sh == (1 << (8 - coarsest)));
        REQUIRE(sh == sh_depth_bound(coarsest) * (coarsest < 8));
    } else {
        REQUIRE(sh == 0);
        REQUIRE(a.sh == 0);
    }
}

std::vector<std::uint8_t> write_ok(const OwnedScene& s, const WriterOptions& opt,
                                   WriteReport* report = nullptr) {
    auto r = write_scene(s.input(), opt, report);
    if (!r.ok()) FAIL(r.error().describe());
    return std::move(r).value();
}

}  // namespace

TEST_CASE("M028: every codec x chunk compression x summary shape round-trips through both readers",
          "[writer]") {
    const std::uint8_t codecs[] = {codec::deflate, codec::zstd, codec::lz4};
    const char* chunk[] = {"", "deflate", "zstd"};
    std::uint32_t seed = 100;
    for (std::uint8_t c : codecs)
        for (const char* cc : chunk)
            for (int summary = 0; summary < 8; ++summary) {
                SceneShape shape;
                shape.n = 40 + seed % 60;
                shape.sh_degree = 1;
                shape.object_ids = (seed & 1) != 0;
                const OwnedScene s = random_scene(seed++, shape);
                WriterOptions opt;
                opt.codec = c;
                opt.level = c == codec::zstd ? 3 : 6;
                opt.chunk_compression = cc;
                opt.write_index = (summary & 1) != 0;
                opt.write_crc = (summary & 2) != 0;
                opt.write_statistics = (summary & 4) != 0;
                opt.write_summary_offset = summary != 7;
                opt.max_chunk_gaussians = 16;
                INFO("codec " << int(c) << " chunk '" << cc << "' summary " << summary);
                check_file(write_ok(s, opt), s, true, opt);
            }
}

TEST_CASE("M016: a scene without gaussians or Statistics has no summary — summary_start 0 — and "
          "both readers read it (found by fuzz_round_trip: the Footer named an empty summary)",
          "[writer]") {
    for (bool statistics : {false, true}) {
        INFO("statistics " << statistics);
        SceneInput empty;
        empty.header.duration_sec = 1;
        WriterOptions opt;
        opt.write_statistics = statistics;
        auto bytes = write_scene(empty, opt);
        REQUIRE(bytes.ok());
        MemorySource src(*bytes);
        auto streamed = read_streaming(src);
        if (!streamed.ok()) FAIL(streamed.error().describe());
        CHECK_FALSE(streamed->truncation);
        REQUIRE(streamed->info.footer.has_value());
        CHECK((streamed->info.footer->summary_start == 0) == !statistics);
        CHECK(streamed->info.statistics.has_value() == statistics);
        auto indexed = IndexedReader::open(src);
        if (!indexed.ok()) FAIL(indexed.error().describe());
        CHECK(indexed->scene().index.empty());
    }
}

TEST_CASE("M023/M103: every SH degree x ladder x preset declares its bounds and meets them",
          "[writer]") {
    const Preset presets[] = {Preset::fine, Preset::default_, Preset::coarse};
    const ShLadder ladders[] = {ShLadder::none, ShLadder::flat, ShLadder::balanced,
                                ShLadder::aggressive};
    std::uint32_t seed = 500;
    for (int degree = 0; degree <= 3; ++degree)
        for (ShLadder ladder : ladders)
            for (Preset preset : presets) {
                SceneShape shape;
                shape.n = 60;
                shape.sh_degree = degree;
                const OwnedScene s = random_scene(seed++, shape);
                WriterOptions opt;
                opt.preset = preset;
                opt.sh_ladder = ladder;
                INFO("degree " << degree << " ladder " << int(ladder) << " preset "
                               << to_string(preset));
                WriteReport report;
                check_file(write_ok(s, opt, &report), s, true, opt);
                const bool declared = degree > 0 && ladder != ShLadder::none;
                REQUIRE(report.quantization.sh_depths.size() ==
                        (declared ? static_cast<std::size_t>(degree) : 0u));
                if (declared)
                    for (int b = 0; b < degree; ++b)
                        REQUIRE(report.quantization.sh_depths[b] == ladder_depths(ladder)[b]);
            }
}

TEST_CASE("M028: seeded random scenes from 0 to ~20,000 gaussians, random options", "[writer]") {
    std::mt19937 rng(20240601);
    const std::size_t sizes[] = {0, 1, 2, 7, 333, 1500, 20000};
    for (std::size_t n : sizes) {
        SceneShape shape;
        shape.n = n;
        shape.sh_degree = static_cast<int>(rng() % 4);
        shape.windows = 1 + static_cast<int>(rng() % 12);
        shape.object_ids = rng() % 2;
        shape.source_group = rng() % 2;
        shape.zero_motion = rng() % 4 == 0;
        shape.coord_scale = n == 333 ? 150 : 2;
        shape.coord_offset = n == 333 ? 1000 : 0;
        const OwnedScene s = random_scene(static_cast<std::uint32_t>(rng()), shape);
        WriterOptions opt;
        opt.preset = static_cast<Preset>(rng() % 3);
        opt.sh_ladder = static_cast<ShLadder>(rng() % 4);
        opt.codec = (rng() % 3 == 2) ? codec::lz4 : static_cast<std::uint8_t>(rng() % 2);
        opt.level = 3;
        const char* cc[] = {"", "deflate", "zstd"};
        opt.chunk_compression = cc[rng() % 3];
        opt.max_chunk_gaussians = n > 1000 ? 4096 : 100;
        opt.threads = 1 + rng() % 3;
        INFO("n " << n << " degree " << shape.sh_degree);
        check_file(write_ok(s, opt), s, true, opt);
    }
}

TEST_CASE("explicit bounds: steps are twice the bounds, motion defaults to 2 x pos", "[writer]") {
    SceneShape shape;
    shape.n = 500;
    const OwnedScene s = random_scene(7, shape);
    WriterOptions opt;
    opt.bounds = QuantBounds{0.001, 0.01, 0.001, 0.002, 0.003, 0, 0.001, 0.01};
    WriteReport report;
    check_file(write_ok(s, opt, &report), s, true, opt);
    const Quantization& q = report.quantization;
    REQUIRE(q.step_pos == 0.002);
    REQUIRE(q.step_scale_log == 0.02);
    REQUIRE(q.step_rot == 0.002);
    REQUIRE(q.step_rgb == 0.004);
    REQUIRE(q.step_alpha == 0.006);
    REQUIRE(q.step_motion == 0.004);
    REQUIRE(q.step_time == 0.002);
    REQUIRE(q.step_sigma_log == 0.02);
    // The measured maxima stay within the requested bounds (rotation and motion aside: §6.4's
    // reconstruction and §6.3's short-lived classes are coarser, and declared as measured).
    REQUIRE(parse_bound(q, "pos") <= 0.001 * (1 + 1e-6));
    REQUIRE(parse_bound(q, "rgb") <= 0.002 * (1 + 1e-6));
    REQUIRE(parse_bound(q, "time") <= 0.001 * (1 + 1e-6));
    REQUIRE(parse_bound(q, "scale_rel") <= 0.01 * (1 + 1e-6));
}

TEST_CASE("M019: bound strings use the grammar and compare equal to the measured numbers",
          "[writer]") {
    REQUIRE(bound_string(0) == "0");
    REQUIRE(bound_string(0.002) == "0.002");
    REQUIRE(bound_string(5e-05) == "5e-05");
    for (double v : {1.0 / 255, 3.3390177413821225e-4, 1e-300, 123456789.0}) {
        const std::string s = bound_string(v);
        REQUIRE(is_bound_spelling(s));
        double back = 0;
        fourdgs::from_chars(s.data(), s.data() + s.size(), back);
        REQUIRE(back == v);
    }
    REQUIRE(compare_bounds(bound_string(5e-05), "0.00005") == 0);
}

TEST_CASE("determinism: identical input and options give identical bytes, any thread count",
          "[writer]") {
    SceneShape shape;
    shape.n = 6000;
    shape.sh_degree = 2;
    shape.windows = 5;
    const OwnedScene s = random_scene(99, shape);
    WriterOptions opt;
    opt.max_chunk_gaussians = 700;
    opt.sh_ladder = ShLadder::balanced;
    opt.threads = 1;
    const auto a = write_ok(s, opt);
    const auto b = write_ok(s, opt);
    opt.threads = 4;
    const auto c = write_ok(s, opt);
    REQUIRE(a == b);
    REQUIRE(a == c);
    opt.codec = codec::zstd;
    opt.chunk_compression = "deflate";
    REQUIRE(write_ok(s, opt) == write_ok(s, opt));
}

TEST_CASE("bad input is refused naming the gaussian and the field", "[writer]") {
    SceneShape shape;
    shape.n = 10;
    shape.sh_degree = 1;
    auto refused = [&](auto mutate, const char* refusal, const char* field) {
        OwnedScene s = random_scene(3, shape);
        mutate(s);
        auto r = write_scene(s.input());
        REQUIRE_FALSE(r.ok());
        INFO(r.error().describe());
        CHECK(r.error().refusal == refusal);
        CHECK(r.error().kind == ErrorKind::invalid_argument);
        CHECK(r.error().message.find(field) != std::string::npos);
        if (std::string(field) != "SH degree")
            CHECK(r.error().message.find("gaussian 3") != std::string::npos);
    };
    const float nan = std::numeric_limits<float>::quiet_NaN();
    refused([&](OwnedScene& s) { s.position[3 * 3 + 1] = nan; }, "non-finite-input", "position[1]");
    refused([&](OwnedScene& s) { s.scale[3 * 3 + 2] = kInfF; }, "non-finite-input", "scale[2]");
    refused([&](OwnedScene& s) { s.scale[3 * 3] = 0; }, "value-out-of-range", "scale[0]");
    refused([&](OwnedScene& s) { std::fill_n(&s.rotation[12], 4, 0.0f); }, "zero-quaternion",
            "rotation");
    refused([&](OwnedScene& s) { s.color[3 * 4 + 2] = 1.5f; }, "value-out-of-range", "color[2]");
    refused([&](OwnedScene& s) { s.color[3 * 4 + 3] = -0.1f; }, "value-out-of-range", "opacity");
    refused([&](OwnedScene& s) { s.motion[3 * 3] = -kInfF; }, "non-finite-input", "motion[0]");
    refused([&](OwnedScene& s) { s.mu_t[3] = nan; }, "non-finite-input", "mu_t");
    refused([&](OwnedScene& s) { s.sigma_t[3] = 0; }, "value-out-of-range", "sigma_t");
    refused([&](OwnedScene& s) { s.sigma_t[3] = nan; }, "non-finite-input", "sigma_t");
    refused([&](OwnedScene& s) { s.win_lo[3] = s.win_hi[3]; }, "empty-window", "window");
    refused([&](OwnedScene& s) { s.win_lo[3] = 5; s.win_hi[3] = 4; }, "empty-window", "window");
    refused([&](OwnedScene& s) { s.win_hi[3] = s.header.duration_sec + 1; },
            "window-outside-duration", "window");
    refused([&](OwnedScene& s) { s.win_lo[3] = -0.5; }, "window-outside-duration", "window");
    refused([&](OwnedScene& s) { s.sh[3 * 9 + 4] = nan; }, "non-finite-input", "sh[4]");
    refused([&](OwnedScene& s) { s.header.sh_degree = 2; }, "sh-degree-mismatch", "SH degree");

    // SH coefficients outside [-4, 4] are clamped, not refused (M101).
    OwnedScene s = random_scene(3, shape);
    s.sh[0] = 1e6f;
    s.sh[1] = -1e6f;
    REQUIRE(write_scene(s.input()).ok());
}

TEST_CASE("options are checked before anything is written", "[writer]") {
    SceneShape shape;
    shape.n = 5;
    shape.sh_degree = 2;
    const OwnedScene s = random_scene(4, shape);
    WriterOptions opt;
    opt.codec = 2;  // reserved atlas-image
    REQUIRE(write_scene(s.input(), opt).error().refusal == "unknown-stream-codec");
    opt = {};
    opt.chunk_compression = "lz4";
    REQUIRE(write_scene(s.input(), opt).error().refusal == "unknown-chunk-compression");
    opt = {};
    opt.sh_depths = {8, 9};
    REQUIRE(write_scene(s.input(), opt).error().refusal == "invalid-option");
    opt.sh_depths = {8};
    REQUIRE(write_scene(s.input(), opt).error().refusal == "invalid-option");
    opt = {};
    opt.level = 99;
    REQUIRE(write_scene(s.input(), opt).error().refusal == "invalid-compression-level");
    opt = {};
    opt.bounds = QuantBounds{0.001, 0.01, 0.001, 0.002, 0.003, 0, 0.001, 0};
    REQUIRE(write_scene(s.input(), opt).error().refusal == "invalid-option");
    opt = {};
    opt.sh_depths = {7, 3};
    WriteReport report;
    check_file(write_ok(s, opt, &report), s, true, opt);
    REQUIRE(report.quantization.step_sh == 32);
}

TEST_CASE("M016: a file written without an index still reads, by scan", "[writer]") {
    SceneShape shape;
    shape.n = 800;
    const OwnedScene s = random_scene(11, shape);
    WriterOptions opt;
    opt.write_index = false;
    opt.max_chunk_gaussians = 64;
    const auto bytes = write_ok(s, opt);
    MemorySource src(bytes);
    auto r = IndexedReader::open(src);
    REQUIRE(r.ok());
    REQUIRE(r->index_built_by_scan());
    REQUIRE(r->scene().footer->summary_start == 0);
    REQUIRE(r->scene().footer->summary_crc == 0);
    REQUIRE(r->scene().index.size() > 5);
    check_file(bytes, s, true, opt);
}

TEST_CASE("M013: the summary is contiguous, the Summary Offset exact, the CRC right", "[writer]") {
    SceneShape shape;
    shape.n = 300;
    shape.sh_degree = 3;
    const OwnedScene s = random_scene(12, shape);
    WriterOptions opt;
    opt.max_chunk_gaussians = 50;
    const auto bytes = write_ok(s, opt);
    MemorySource src(bytes);
    StreamingReader reader(src);
    reader.enable_record_log(true);
    GaussianBlock block;
    while (true) {
        auto r = reader.next_chunk(block);
        REQUIRE(r.ok());
        if (!*r) break;
    }
    const auto& log = reader.record_log();
    const SceneInfo& info = reader.scene();
    REQUIRE(info.summary_crc_verified);
    REQUIRE(info.summary_offsets.size() == 1);
    const SummaryOffset& so = info.summary_offsets[0];
    REQUIRE(so.group_opcode == op::chunk_index);
    REQUIRE(so.group_start == info.footer->summary_start);
    std::uint64_t index_bytes = 0, chunks = 0;
    bool in_summary = false;
    for (std::size_t k = 0; k < log.size(); ++k) {
        const RecordEntry& e = log[k];
        if (e.opcode == op::chunk_index) index_bytes += e.length;
        if (e.offset == info.footer->summary_start) in_summary = true;
        if (in_summary)  // nothing but summary records until the Footer (§4.5)
            REQUIRE((e.opcode == op::chunk_index || e.opcode == op::statistics ||
                     e.opcode == op::summary_offset || e.opcode == op::footer));
        if (e.opcode == op::chunk) {
            ++chunks;
            for (int b = 1; b <= 3; ++b) REQUIRE(log[k + b].opcode == op::sh_band);  // band 1 first
        }
    }
    REQUIRE(so.group_length == index_bytes);
    REQUIRE(info.index.size() == chunks);
    // Every index range frames a whole record (§5.8).
    for (const ChunkIndex& e : info.index) {
        REQUIRE(bytes[e.chunk_offset] == op::chunk);
        REQUIRE(e.bands.size() == 3);
        for (const auto& b : e.bands) {
            REQUIRE(bytes[b.offset] == op::sh_band);
            REQUIRE(bytes[b.offset + 9] == b.band);
        }
        REQUIRE(e.bands[0].offset == e.chunk_offset + e.chunk_length);
    }
    REQUIRE(crc32(Bytes(bytes).subspan(info.footer->summary_start,
                                       bytes.size() - 37 - info.footer->summary_start)) ==
            info.footer->summary_crc);
}

TEST_CASE("chunk intervals: a seek into a 10-window file reads a small fraction of it",
          "[writer]") {
    SceneShape shape;
    shape.n = 10000;
    shape.windows = 10;
    shape.duration = 10;
    OwnedScene s = random_scene(21, shape);
    // Only the ten even windows (drop the long one the generator adds).
    for (std::size_t i = 0; i < s.n; ++i) {
        const double lo = std::floor(s.mu_t[i]);
        s.win_lo[i] = lo;
        s.win_hi[i] = lo + 1;
    }
    WriterOptions opt;
    WriteReport report;
    const auto bytes = write_ok(s, opt, &report);
    REQUIRE(report.windows.size() == 10);
    REQUIRE(report.chunk_count == 10);
    MemorySource src(bytes);
    auto r = IndexedReader::open(src);
    REQUIRE(r.ok());
    for (double t : {0.5, 3.25, 9.99}) {
        std::uint64_t cost = 0;
        const auto hits = r->chunks_for(t);
        REQUIRE(hits.size() == 1);
        for (std::size_t k : hits) cost += r->fetch_cost(k);
        INFO("t " << t << " cost " << cost << " of " << bytes.size());
        REQUIRE(cost < bytes.size() / 5);
        GaussianBlock at_t;
        std::vector<DecodeWorkspace> pool;
        const std::uint64_t before = r->bytes_fetched();
        REQUIRE(r->read_instant(t, at_t, pool, 1).ok());
        REQUIRE(r->bytes_fetched() - before == cost);
        for (std::size_t j = 0; j < at_t.count; ++j)
            REQUIRE((at_t.win_lo[j] <= t && t < at_t.win_hi[j]));
    }
    check_file(bytes, s, true, opt);
}

TEST_CASE("chunk planning: big windows split at max_chunk_gaussians, Morton order shrinks it",
          "[writer]") {
    SceneShape shape;
    shape.n = 5000;
    shape.windows = 1;
    OwnedScene s = random_scene(31, shape);
    std::fill(s.win_lo.begin(), s.win_lo.end(), 0.0);
    std::fill(s.win_hi.begin(), s.win_hi.end(), s.header.duration_sec);
    WriterOptions opt;
    opt.max_chunk_gaussians = 1000;
    WriteReport report;
    check_file(write_ok(s, opt, &report), s, true, opt);
    REQUIRE(report.chunk_count == 5);
    opt.spatial_order = false;
    check_file(write_ok(s, opt), s, true, opt);
    // Sizes without the input-ordered source_index column, which favours input order.
    s.source_index.clear();
    opt.spatial_order = true;
    const auto sorted = write_ok(s, opt);
    opt.spatial_order = false;
    const auto unsorted = write_ok(s, opt);
    INFO("sorted " << sorted.size() << " unsorted " << unsorted.size());
    REQUIRE(sorted.size() < unsorted.size());
}

TEST_CASE("M012: lz4 and private records bring a Metadata entry naming the application",
          "[writer]") {
    SceneShape shape;
    shape.n = 50;
    OwnedScene s = random_scene(41, shape);
    auto application_of = [](const SceneInfo& info) -> std::string {
        for (const Metadata& m : info.metadata)
            for (const auto& [k, v] : m.entries)
                if (k == "application") return v;
        return "";
    };
    WriterOptions opt;
    opt.codec = codec::lz4;
    opt.application = "writer-test 1.0";
    {
        const auto bytes = write_ok(s, opt);
        MemorySource src(bytes);
        auto r = read_streaming(src);
        REQUIRE(r.ok());
        REQUIRE(application_of(r->info) == "writer-test 1.0");
    }
    opt = {};
    const std::vector<std::uint8_t> blob = {1, 2, 3, 4};
    s.header.private_records.push_back({0x9A, blob});
    s.header.attachments.push_back({"thumb", "image/png", blob});
    s.header.metadata.push_back({"scene", {{"title", "private"}}});
    {
        const auto bytes = write_ok(s, opt);
        MemorySource src(bytes);
        auto r = read_streaming(src, ReaderOptions{{}, true});
        REQUIRE(r.ok());
        REQUIRE(application_of(r->info) == "fourdgs tests");  // the library string
        REQUIRE(r->info.skipped.size() == 1);
        REQUIRE(r->info.skipped[0].opcode == 0x9A);
        REQUIRE(r->info.attachments.size() == 1);
        REQUIRE(r->info.attachments[0].payload.data == blob);
        REQUIRE(r->info.metadata.size() == 2);
        check_file(bytes, s, true, opt);
    }
    // A caller's own application entry is kept, not duplicated.
    s.header.metadata[0].entries.push_back({"application", "mine"});
    {
        const auto bytes = write_ok(s, opt);
        MemorySource src(bytes);
        auto r = read_streaming(src);
        REQUIRE(r.ok());
        REQUIRE(r->info.metadata.size() == 1);
        REQUIRE(application_of(r->info) == "mine");
    }
    s.header.private_records[0].opcode = 0x20;
    REQUIRE(write_scene(s.input()).error().refusal == "invalid-option");
}

TEST_CASE("the Header, Statistics and Window Table describe the scene", "[writer]") {
    SceneShape shape;
    shape.n = 400;
    shape.windows = 3;
    OwnedScene s = random_scene(51, shape);
    s.header.profile = "capture";
    s.header.cutoff = 0.1;
    s.header.attributes = {{"title", "t"}, {"visibility_profile", "gaussian"}};
    WriterOptions opt;
    opt.chunk_compression = "zstd";
    const auto bytes = write_ok(s, opt);
    MemorySource src(bytes);
    auto r = read_streaming(src);
    REQUIRE(r.ok());
    const Header& h = r->info.header;
    REQUIRE(h.profile == "capture");
    REQUIRE(h.cutoff == 0.1);
    REQUIRE(h.attributes == s.header.attributes);
    REQUIRE(h.flags == kHeaderFlagCompressed);
    REQUIRE(h.library == "fourdgs tests");
    for (int c = 0; c < 3; ++c) {
        float lo = s.position[c], hi = s.position[c];
        for (std::size_t i = 0; i < s.n; ++i) {
            lo = std::min(lo, s.position[i * 3 + c]);
            hi = std::max(hi, s.position[i * 3 + c]);
        }
        REQUIRE(h.aabb[c] == lo);
        REQUIRE(h.aabb[3 + c] == hi);
    }
    REQUIRE(r->info.windows.size() == 4);
    REQUIRE(std::is_sorted(r->info.windows.begin(), r->info.windows.end(),
                           [](const auto& a, const auto& b) {
                               return a.lo != b.lo ? a.lo < b.lo : a.hi < b.hi;
                           }));
    // Every chunk's interval covers its gaussians' windows (wire-notes).
    for (const ChunkIndex& e : r->info.index) {
        bool found = false;
        for (const auto& w : r->info.windows) found |= (w.lo == e.t0 && w.hi == e.t1);
        REQUIRE(found);
    }
    check_file(bytes, s, true, opt);
}

TEST_CASE("an empty scene writes a valid file", "[writer]") {
    SceneShape shape;
    shape.n = 0;
    const OwnedScene s = random_scene(1, shape);
    for (bool index : {true, false}) {
        WriterOptions opt;
        opt.write_index = index;
        opt.chunk_compression = "deflate";
        check_file(write_ok(s, opt), s, true, opt);
    }
}

TEST_CASE("streaming writer: window by window and chunk by chunk, bounded and verified",
          "[writer]") {
    SceneShape shape;
    shape.n = 3000;
    shape.windows = 4;
    shape.sh_degree = 2;
    const OwnedScene s = random_scene(61, shape);
    WriteReport one_shot;
    WriterOptions opt;
    opt.max_chunk_gaussians = 300;
    opt.sh_ladder = ShLadder::aggressive;
    (void)write_ok(s, opt, &one_shot);

    // Regroup the gaussians window by window (the streaming caller's shape).
    StreamDeclaration decl;
    decl.gaussian_count = s.n;
    decl.aabb = one_shot.aabb;
    decl.windows = one_shot.windows;
    OwnedScene ordered = s;
    std::vector<std::size_t> order(s.n);
    for (std::size_t i = 0; i < s.n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::make_pair(s.win_lo[a], s.win_hi[a]) < std::make_pair(s.win_lo[b], s.win_hi[b]);
    });
    auto permute = [&](auto& dst, const auto& src, std::size_t k) {
        for (std::size_t j = 0; j < order.size(); ++j)
            std::copy_n(&src[order[j] * k], k, &dst[j * k]);
    };
    permute(ordered.position, s.position, 3);
    permute(ordered.scale, s.scale, 3);
    permute(ordered.rotation, s.rotation, 4);
    permute(ordered.color, s.color, 4);
    permute(ordered.motion, s.motion, 3);
    permute(ordered.mu_t, s.mu_t, 1);
    permute(ordered.sigma_t, s.sigma_t, 1);
    permute(ordered.win_lo, s.win_lo, 1);
    permute(ordered.win_hi, s.win_hi, 1);
    permute(ordered.sh, s.sh, 3 * sh_coeffs_per_component(2));

    for (int mode = 0; mode < 2; ++mode) {
        MemorySink sink;
        auto w = StreamingWriter::create(sink, s.header, decl, opt);
        REQUIRE(w.ok());
        REQUIRE(w->add_metadata({"scene", {{"title", "streamed"}}}).ok());
        const GaussianBatch all = ordered.batch();
        std::size_t at = 0;
        for (std::uint32_t wi = 0; wi < decl.windows.size(); ++wi) {
            std::size_t end = at;
            while (end < s.n && ordered.win_lo[end] == decl.windows[wi].lo &&
                   ordered.win_hi[end] == decl.windows[wi].hi)
                ++end;
            auto slice = [&](std::size_t a, std::size_t b, bool windows) {
                GaussianBatch g;
                g.count = b - a;
                g.position = all.position.subspan(a * 3, g.count * 3);
                g.scale = all.scale.subspan(a * 3, g.count * 3);
                g.rotation = all.rotation.subspan(a * 4, g.count * 4);
                g.color = all.color.subspan(a * 4, g.count * 4);
                g.motion = all.motion.subspan(a * 3, g.count * 3);
                g.mu_t = all.mu_t.subspan(a, g.count);
                g.sigma_t = all.sigma_t.subspan(a, g.count);
                if (windows) {
                    g.win_lo = all.win_lo.subspan(a, g.count);
                    g.win_hi = all.win_hi.subspan(a, g.count);
                }
                g.sh_degree = 2;
                g.sh = all.sh.subspan(a * 24, g.count * 24);
                g.source_index = all.source_index.subspan(a, g.count);
                return g;
            };
            if (mode == 0) {
                REQUIRE(w->add_window(wi, slice(at, end, false)).ok());
            } else {
                for (std::size_t c = at; c < end; c += 300)
                    REQUIRE(w->add_chunk(slice(c, std::min(end, c + 300), true)).ok());
            }
            at = end;
        }
        REQUIRE(at == s.n);
        REQUIRE(w->add_metadata({"late", {}}).error().refusal == "chunks-started");
        auto fin = w->finish();
        if (!fin.ok()) FAIL(fin.error().describe());
        // The streaming declaration is the grid's worst case: true, if looser than measured.
        check_file(sink.bytes(), ordered, false, opt);
        REQUIRE(w->report().chunk_count == one_shot.chunk_count);
        MemorySource src(sink.bytes());
        auto r = read_streaming(src);
        REQUIRE(r.ok());
        REQUIRE(r->info.metadata.size() == 1);
        REQUIRE(r->info.header.aabb == one_shot.aabb);
        REQUIRE(parse_bound(r->info.quantization, "pos") >=
                parse_bound(one_shot.quantization, "pos"));
        REQUIRE(parse_bound(r->info.quantization, "motion") >=
                parse_bound(one_shot.quantization, "motion"));
    }
}

TEST_CASE("streaming writer refuses a wrong declaration", "[writer]") {
    SceneShape shape;
    shape.n = 20;
    OwnedScene s = random_scene(71, shape);
    for (std::size_t i = 0; i < s.n; ++i) {
        s.win_lo[i] = 0;
        s.win_hi[i] = 2;
    }
    WriteReport rep;
    (void)write_ok(s, {}, &rep);
    StreamDeclaration decl{s.n, rep.aabb, rep.windows};
    GaussianBatch b = s.batch();
    b.win_lo = {};
    b.win_hi = {};
    {  // count too small
        MemorySink sink;
        auto w = StreamingWriter::create(sink, s.header, decl, {});
        REQUIRE(w.ok());
        GaussianBatch half = b;
        half.count = 10;
        half.position = b.position.first(30);
        half.scale = b.scale.first(30);
        half.rotation = b.rotation.first(40);
        half.color = b.color.first(40);
        half.motion = b.motion.first(30);
        half.mu_t = b.mu_t.first(10);
        half.sigma_t = b.sigma_t.first(10);
        half.source_index = b.source_index.first(10);
        REQUIRE(w->add_window(0, half).ok());
        REQUIRE(w->finish().error().refusal == "gaussian-count-mismatch");
    }
    {  // a loose aabb
        StreamDeclaration loose = decl;
        loose.aabb[0] -= 1;
        MemorySink sink;
        auto w = StreamingWriter::create(sink, s.header, loose, {});
        REQUIRE(w.ok());
        REQUIRE(w->add_window(0, b).ok());
        REQUIRE(w->finish().error().refusal == "aabb-mismatch");
    }
    {  // a position outside the declared aabb
        StreamDeclaration tight = decl;
        tight.aabb[3] -= 0.5;
        MemorySink sink;
        auto w = StreamingWriter::create(sink, s.header, tight, {});
        REQUIRE(w.ok());
        auto r = w->add_window(0, b);
        REQUIRE(r.error().refusal == "outside-declared-aabb");
        REQUIRE(r.error().message.find("position[0]") != std::string::npos);
    }
    {  // windows
        StreamDeclaration bad = decl;
        bad.windows.push_back({3, 1});
        MemorySink sink;
        REQUIRE(StreamingWriter::create(sink, s.header, bad, {}).error().refusal == "empty-window");
        MemorySink sink2;
        auto w = StreamingWriter::create(sink2, s.header, decl, {});
        REQUIRE(w->add_window(5, b).error().refusal == "window-index-out-of-range");
        GaussianBatch with = s.batch();
        std::vector<double> lo(s.n, 0.5);
        with.win_lo = lo;
        REQUIRE(w->add_chunk(with).error().refusal == "undeclared-window");
    }
}

TEST_CASE("M028: 200 seeded random option combinations over small scenes", "[writer]") {
    std::mt19937 rng(777);
    const char* cc[] = {"", "deflate", "zstd"};
    for (int round = 0; round < 200; ++round) {
        SceneShape shape;
        shape.n = rng() % 5 == 0 ? rng() % 3 : rng() % 250;
        shape.sh_degree = static_cast<int>(rng() % 4);
        shape.windows = 1 + static_cast<int>(rng() % 6);
        shape.object_ids = rng() % 2;
        shape.source_group = rng() % 3 == 0;
        shape.zero_motion = rng() % 5 == 0;
        shape.duration = 0.5 + (rng() % 100) / 10.0;
        const OwnedScene s = random_scene(static_cast<std::uint32_t>(rng()), shape);
        WriterOptions opt;
        opt.preset = static_cast<Preset>(rng() % 3);
        if (rng() % 4 == 0)
            opt.bounds = QuantBounds{0.0005 + (rng() % 100) * 1e-4, 0.01, 0.001 + (rng() % 10) * 1e-3,
                                     0.003, 0.002, 0, 0.001 + (rng() % 10) * 1e-3, 0.03};
        opt.sh_ladder = static_cast<ShLadder>(rng() % 4);
        if (shape.sh_degree > 0 && rng() % 4 == 0) {
            opt.sh_depths.clear();
            for (int b = 0; b < shape.sh_degree; ++b)
                opt.sh_depths.push_back(static_cast<std::uint8_t>(3 + rng() % 6));
        }
        const std::uint8_t codecs[] = {codec::deflate, codec::zstd, codec::lz4};
        opt.codec = codecs[rng() % 3];
        opt.level = 1 + static_cast<int>(rng() % 9);
        opt.chunk_compression = cc[rng() % 3];
        opt.write_index = rng() % 2;
        opt.write_crc = rng() % 2;
        opt.write_statistics = rng() % 2;
        opt.write_summary_offset = rng() % 2;
        opt.max_chunk_gaussians = 1 + rng() % 120;
        opt.spatial_order = rng() % 4 != 0;
        opt.threads = 1 + rng() % 3;
        INFO("round " << round << " n " << shape.n << " degree " << shape.sh_degree);
        const auto bytes = write_ok(s, opt);
        check_file(bytes, s, true, opt);
        if (round % 10 == 0) REQUIRE(write_ok(s, opt) == bytes);
    }
}

TEST_CASE("GaussianColumns::resize sizes every column a batch needs, so write_scene takes it") {
    GaussianColumns cols;
    cols.sh_degree = 2;
    cols.resize(3);
    CHECK(cols.count == 3);
    CHECK(cols.sh.size() == 3 * 3 * 8);
    for (std::size_t i = 0; i < 3; ++i) {
        cols.scale[i * 3] = cols.scale[i * 3 + 1] = cols.scale[i * 3 + 2] = 0.1f;
        cols.rotation[i * 4 + 3] = 1;
        cols.sigma_t[i] = 1;
        cols.win_hi[i] = 1;
    }
    SceneInput in;
    in.header.duration_sec = 1;
    in.header.sh_degree = 2;
    in.gaussians = cols.batch();
    auto bytes = write_scene(in);
    REQUIRE(bytes.ok());
    MemorySource src(*bytes);
    auto back = read_streaming(src);
    REQUIRE(back.ok());
    CHECK(back->gaussians.count == 3);
}

// ---- effort levels and the raw/delta estimate -------------------------------------------------

namespace {

// A bench scene (tests/support/bench_scenes.hpp) as an OwnedScene, source_index the input order
// so that check_file can match decoded gaussians to their input.
OwnedScene owned(const GaussianColumns& g, double duration) {
    OwnedScene s;
    s.n = g.count;
    s.header.duration_sec = duration;
    s.header.sh_degree = g.sh_degree;
    s.header.library = "fourdgs tests";
    s.position = g.position;
    s.scale = g.scale;
    s.rotation = g.rotation;
    s.color = g.color;
    s.motion = g.motion;
    s.mu_t = g.mu_t;
    s.sigma_t = g.sigma_t;
    s.sh = g.sh;
    s.win_lo = g.win_lo;
    s.win_hi = g.win_hi;
    for (std::size_t i = 0; i < g.count; ++i) s.source_index.push_back(static_cast<std::int32_t>(i));
    return s;
}

// Every attribute stream of a file (chunk records and SH Band records), in file order.
std::vector<StreamView> streams_of(const std::vector<std::uint8_t>& bytes,
                                   std::vector<std::vector<std::uint8_t>>& keep) {
    MemorySource src(bytes);
    auto reader = IndexedReader::open(src);
    REQUIRE(reader.ok());
    std::vector<StreamView> out;
    for (const ChunkIndex& e : reader->scene().index) {
        keep.emplace_back();
        REQUIRE(read_range(src, e.chunk_offset, e.chunk_length, e.chunk_length, keep.back()).ok());
        auto rec = parse_record(keep.back(), e.chunk_offset);
        REQUIRE(rec.ok());
        auto chunk = parse_chunk(*rec);
        REQUIRE(chunk.ok());
        auto streams = split_streams(chunk->records, chunk->records_offset);
        REQUIRE(streams.ok());
        out.insert(out.end(), streams->begin(), streams->end());
        for (const ChunkIndex::Band& b : e.bands) {
            keep.emplace_back();
            REQUIRE(read_range(src, b.offset, b.length, b.length, keep.back()).ok());
            auto r = parse_record(keep.back(), b.offset);
            REQUIRE(r.ok());
            auto band = parse_sh_band(*r);
            REQUIRE(band.ok());
            Cursor c(band->stream, b.offset, "band");
            auto s = read_stream(c);
            REQUIRE(s.ok());
            out.push_back(*s);
        }
    }
    return out;
}

// The scenes the effort tests hold on: seeded random scenes of several shapes and small
// instances of the bench scenes.
std::vector<std::pair<std::string, OwnedScene>> effort_scenes() {
    std::vector<std::pair<std::string, OwnedScene>> out;
    SceneShape plain;
    plain.n = 3000;
    out.emplace_back("random SH 0", random_scene(281, plain));
    SceneShape sh;
    sh.n = 1500;
    sh.sh_degree = 3;
    out.emplace_back("random SH 3", random_scene(282, sh));
    SceneShape ids;
    ids.n = 2000;
    ids.object_ids = ids.source_group = ids.zero_motion = true;
    out.emplace_back("random ids, still", random_scene(283, ids));
    out.emplace_back("issue-14 bench scene", owned(test::issue14_scene(20000), 10));
    out.emplace_back("issue-14 bench scene, SH 3", owned(test::issue14_scene(4000, 3), 10));
    out.emplace_back("clustered bench scene", owned(test::clustered_scene(20000), 10));
    return out;
}

}  // namespace

TEST_CASE("effort max decodes within its declared bounds and is never larger than default",
          "[writer][effort]") {
    for (const auto& [name, s] : effort_scenes()) {
        for (ShLadder ladder : {ShLadder::none, ShLadder::balanced}) {
            if (ladder != ShLadder::none && s.header.sh_degree == 0) continue;
            INFO(name << ", ladder " << static_cast<int>(ladder));
            WriterOptions opt;
            opt.sh_ladder = ladder;
            const auto standard = write_ok(s, opt);
            opt.effort = Effort::max;
            const auto smallest = write_ok(s, opt);
            INFO("default " << standard.size() << " bytes, max " << smallest.size());
            CHECK(smallest.size() <= standard.size());
            check_file(smallest, s, true, opt);
            // The same gaussians, the same declared bounds: only the streams differ.
            MemorySource a(standard), b(smallest);
            auto ra = read_streaming(a), rb = read_streaming(b);
            REQUIRE((ra.ok() && rb.ok()));
            CHECK(ra->info.quantization == rb->info.quantization);
        }
    }
}

TEST_CASE("effort max writes registered codecs only, and fast is the codec at its fastest level",
          "[writer][effort]") {
    SceneShape shape;
    shape.n = 2500;
    shape.sh_degree = 1;
    const OwnedScene s = random_scene(290, shape);
    WriterOptions opt;
    opt.codec = codec::lz4;
    opt.effort = Effort::max;
    const auto bytes = write_ok(s, opt);
    check_file(bytes, s, true, opt);
    std::vector<std::vector<std::uint8_t>> keep;
    std::set<int> codecs;
    for (const StreamView& v : streams_of(bytes, keep)) codecs.insert(v.header.codec);
    CHECK(codecs.count(codec::lz4) == 0);
    for (int c : codecs) CHECK(find_codec(static_cast<std::uint8_t>(c))->registered);
    MemorySource src(bytes);
    auto back = read_streaming(src);
    REQUIRE(back.ok());
    for (const Metadata& m : back->info.metadata) CHECK(m.name != "application");  // none owed

    // fast: the codec at its fastest level, the mode estimated, as default at that level.
    for (const CodecInfo& c : codec_table()) {
        INFO(c.name);
        WriterOptions fast, level;
        fast.codec = level.codec = c.byte;
        fast.effort = Effort::fast;
        level.level = c.fast_level;
        CHECK(write_ok(s, fast) == write_ok(s, level));
    }
}

TEST_CASE("writer output is deterministic for each effort, whatever the thread count",
          "[writer][effort]") {
    SceneShape shape;
    shape.n = 3000;
    shape.sh_degree = 2;
    const OwnedScene s = random_scene(291, shape);
    WriteWorkspace workspace;
    for (Effort effort : {Effort::fast, Effort::default_, Effort::max}) {
        INFO("effort " << to_string(effort));
        WriterOptions opt;
        opt.effort = effort;
        opt.max_chunk_gaussians = 1200;
        opt.threads = 1;
        const auto one = write_ok(s, opt);
        opt.threads = 3;
        CHECK(write_ok(s, opt) == one);
        opt.workspace = &workspace;  // a workspace used before, for other options
        CHECK(write_ok(s, opt) == one);
        CHECK(parse_effort(to_string(effort)) == effort);
    }
    CHECK_FALSE(parse_effort("maximum").has_value());
    WriterOptions bad;
    bad.effort = static_cast<Effort>(7);
    CHECK(write_scene(s.input(), bad).error().refusal == "invalid-option");
}

TEST_CASE("the raw/delta estimate loses at most 1% to compressing both on the bench scenes",
          "[writer][effort]") {
    struct Bench {
        const char* name;
        OwnedScene scene;
    };
    const Bench benches[] = {{"issue-14", owned(test::issue14_scene(100000), 10)},
                             {"issue-14 SH 3", owned(test::issue14_scene(30000, 3), 10)},
                             {"clustered", owned(test::clustered_scene(100000), 10)}};
    for (const Bench& b : benches) {
        WriterOptions opt;
        const auto estimated = write_ok(b.scene, opt);
        opt.exact_modes = true;
        const auto exact = write_ok(b.scene, opt);
        // Stream by stream: the same streams in the same order, each the estimate's choice or
        // the smaller.
        std::vector<std::vector<std::uint8_t>> keep;
        const auto e = streams_of(estimated, keep), x = streams_of(exact, keep);
        REQUIRE(e.size() == x.size());
        double worst = 0;
        int differ = 0;
        for (std::size_t k = 0; k < e.size(); ++k) {
            REQUIRE(e[k].header.attribute_id == x[k].header.attribute_id);
            REQUIRE(e[k].header.payload_length >= x[k].header.payload_length);
            differ += e[k].header.mode != x[k].header.mode;
            worst = std::max(worst, double(e[k].header.payload_length) /
                                            double(x[k].header.payload_length) - 1);
        }
        INFO(b.name << ": estimated " << estimated.size() << " bytes, compressing both "
                    << exact.size() << "; " << differ << " of " << e.size()
                    << " streams in the other mode, the worst " << worst * 100 << "% larger");
        CHECK(double(estimated.size()) <= 1.01 * double(exact.size()));
        CHECK(worst <= 0.05);
    }
}
