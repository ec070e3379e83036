// Frame sequences into scenes and instants back out (fourdgs/tools/convert.hpp, §12): every shape
// round-trips within the tolerances it records, adaptive sampling collapses linear motion, and
// refusals leave nothing behind.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/tools/compare.hpp"
#include "fourdgs/tools/convert.hpp"
#include "fourdgs/tools/rigid.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/io.hpp"
#include "support/convert_streamed.hpp"
#include "support/counting_source.hpp"
#include "support/live_bytes.hpp"
#include "support/ply_frames.hpp"
#include "support/rigid_frames.hpp"
#include "support/same_members.hpp"

using namespace fourdgs;
using test::convert_streamed;

namespace {

constexpr double kFps = 8;  // frame times k / 8 are exact in f32

// n gaussians 0.1 apart; gaussian i moves with velocity v_i, the first `accelerating` also
// accelerate along x.
std::vector<PlyCloud> tracked(std::size_t frames, std::size_t n, int accelerating, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1, 1), c01(0.1f, 0.9f);
    PlyCloud base;
    base.count = n;
    std::vector<float> vel;
    for (std::size_t i = 0; i < n; ++i) {
        base.position.insert(base.position.end(), {0.1f * float(i % 5), 0.1f * float(i / 5 % 5), 0.1f * float(i / 25)});
        base.normal.insert(base.normal.end(), {0, 0, 0});
        base.scale.insert(base.scale.end(), {0.02f, 0.03f, 0.01f});
        base.rotation.insert(base.rotation.end(), {u(rng), u(rng), u(rng), 1.5f});
        base.color.insert(base.color.end(), {c01(rng), c01(rng), c01(rng), c01(rng)});
        for (int k = 0; k < 3; ++k) vel.push_back(0.02f * u(rng));
    }
    std::vector<PlyCloud> out;
    for (std::size_t f = 0; f < frames; ++f) {
        PlyCloud c = base;
        const double t = double(f) / kFps;
        for (std::size_t i = 0; i < n; ++i)
            for (int k = 0; k < 3; ++k)
                c.position[i * 3 + k] = static_cast<float>(
                    base.position[i * 3 + k] + vel[i * 3 + k] * t +
                    (int(i) < accelerating && k == 0 ? 0.5 * t * t : 0.0));
        out.push_back(std::move(c));
    }
    return out;
}

struct Converted {
    std::vector<std::uint8_t> bytes;
    ConvertReport report;
};

Converted convert(const std::vector<PlyCloud>& frames, ConvertShape shape) {
    ConvertOptions o;
    o.fps = kFps;
    o.shape = shape;
    o.keyframe_every = 4;
    MemorySink sink;
    Converted c;
    auto st = convert_frames(frames, o, sink, &c.report);
    if (!st.ok()) FAIL(st.error().describe());
    c.bytes = sink.take();
    return c;
}

// Max deviation of position and colour over every frame time, matching gaussians by position.
void check_round_trip(const Converted& c, const std::vector<PlyCloud>& frames) {
    MemorySource src(c.bytes);
    const QuantBounds& tol = c.report.tolerance;
    double worst_pos = 0, worst_rgb = 0;
    for (std::size_t f = 0; f < frames.size(); ++f) {
        auto got = extract_state(src, double(f) / kFps);
        REQUIRE(got.ok());
        REQUIRE(got->count == frames[f].count);
        for (std::size_t i = 0; i < frames[f].count; ++i) {
            std::size_t best = 0;
            double bd = 1e30;
            for (std::size_t j = 0; j < got->count; ++j) {
                double d = 0;
                for (int k = 0; k < 3; ++k)
                    d += std::pow(got->position[j * 3 + k] - frames[f].position[i * 3 + k], 2);
                if (d < bd) bd = d, best = j;
            }
            for (int k = 0; k < 3; ++k) {
                worst_pos = std::max(worst_pos, double(std::fabs(got->position[best * 3 + k] -
                                                                 frames[f].position[i * 3 + k])));
                worst_rgb = std::max(worst_rgb, double(std::fabs(got->color[best * 4 + k] -
                                                                 frames[f].color[i * 4 + k])));
            }
        }
    }
    CHECK(worst_pos <= tol.pos + 1e-6);
    CHECK(worst_rgb <= tol.rgb + 1e-6);
}

// The reports of the two paths agree on everything the file and its parts decide.
void check_same_report(const ConvertReport& a, const ConvertReport& b) {
    using R = ConvertReport;
    test::check_same_members(a, b, &R::shape, &R::frames, &R::input_gaussians, &R::records,
                             &R::chunks, &R::deltas, &R::keyframe_referenced, &R::output_bytes,
                             &R::per_frame_bytes, &R::clamped_colors);
    const auto same_part = [](const R::Part& x, const R::Part& y) {
        test::check_same_members(x, y, &R::Part::gaussians, &R::Part::bytes);
    };
    same_part(a.static_part, b.static_part);
    same_part(a.other_part, b.other_part);
    REQUIRE(a.objects.size() == b.objects.size());
    for (std::size_t j = 0; j < a.objects.size(); ++j) same_part(a.objects[j], b.objects[j]);
    CHECK(a.error_frames == b.error_frames);
    REQUIRE(a.error.size() == b.error.size());
    for (std::size_t i = 0; i < a.error.size(); ++i) CHECK(a.error[i].max == b.error[i].max);
}

}  // namespace

TEST_CASE("natural order sorts digit runs as numbers") {
    std::vector<std::string> v = {"f10.ply", "f2.ply", "f1.ply", "f02.ply", "g.ply", "f.ply"};
    std::sort(v.begin(), v.end(), natural_less);
    CHECK(v == std::vector<std::string>{"f.ply", "f1.ply", "f2.ply", "f02.ply", "f10.ply", "g.ply"});
}

TEST_CASE("§12: a frame sequence imports as one window per frame with zero velocity") {
    auto frames = tracked(4, 30, 0, 1);
    frames[2].count = 20;  // an untracked sequence: counts may differ
    for (auto* col : {&frames[2].position, &frames[2].normal, &frames[2].scale}) col->resize(60);
    for (auto* col : {&frames[2].rotation, &frames[2].color}) col->resize(80);
    Converted c = convert(frames, ConvertShape::per_frame);
    CHECK(c.report.records == 30 + 30 + 20 + 30);
    MemorySource src(c.bytes);
    auto reader = IndexedReader::open(src);
    REQUIRE(reader.ok());
    CHECK(reader->scene().windows.size() == 4);
    CHECK(reader->scene().header.duration_sec == 0.5);
    GaussianBlock all;
    std::vector<DecodeWorkspace> pool;
    REQUIRE(reader->read_all(all, pool).ok());
    for (float m : all.motion) CHECK(m == 0);
    for (float s : all.sigma_t) CHECK(std::isinf(s));
    check_round_trip(c, frames);
}

TEST_CASE("§12: adaptive sampling keeps linear motion in one record and splits acceleration") {
    const auto frames = tracked(16, 50, 5, 2);
    Converted a = convert(frames, ConvertShape::adaptive);
    Converted p = convert(frames, ConvertShape::per_frame);
    CHECK(a.report.records > 50);          // the accelerating five split
    CHECK(a.report.records < 50 + 5 * 16);  // the others are one record each
    CHECK(a.bytes.size() < p.bytes.size());
    check_round_trip(a, frames);
    MemorySource src(a.bytes);
    auto reader = IndexedReader::open(src);
    REQUIRE(reader.ok());
    CHECK(reader->scene().windows.size() <= 2 * 16 - 1);  // bisection windows only
}

TEST_CASE("tracked frames convert to keyframe-delta with stable ids") {
    const auto frames = tracked(8, 40, 0, 3);
    Converted c = convert(frames, ConvertShape::keyframe_delta);
    MemorySource src(c.bytes);
    ReaderOptions ro;
    ro.accept_keyframe_delta = true;
    auto reader = IndexedReader::open(src, ro);
    REQUIRE(reader.ok());
    CHECK(reader->scene().header.temporal_model == "keyframe-delta");
    CHECK(reader->scene().header.gaussian_count == 40);
    CHECK(reader->scene().index.size() == 8);
    check_round_trip(c, frames);
}

TEST_CASE("tracked conversion refuses frames that do not hold the same gaussians") {
    auto frames = tracked(3, 10, 0, 4);
    frames[1] = tracked(1, 9, 0, 5)[0];
    ConvertOptions o;
    o.fps = kFps;
    MemorySink sink;
    for (ConvertShape s : {ConvertShape::adaptive, ConvertShape::keyframe_delta}) {
        o.shape = s;
        auto st = convert_frames(frames, o, sink);
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().refusal == "frames-not-tracked");
    }
    o.shape = ConvertShape::per_frame;
    o.fps = 0;
    auto st = convert_frames(frames, o, sink);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().refusal == "invalid-option");
    CHECK(convert_frames({}, ConvertOptions{}, sink).error().refusal == "no-frames");
}

TEST_CASE("convert_ply_files writes atomically and leaves nothing behind on a refusal") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("fourdgs-convert-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const auto frames = tracked(2, 6, 0, 6);
    std::vector<std::string> paths;
    for (std::size_t f = 0; f < frames.size(); ++f) {
        auto bytes = write_ply(frames[f]);
        REQUIRE(bytes.ok());
        paths.push_back((dir / ("frame" + std::to_string(f) + ".ply")).string());
        std::FILE* fp = std::fopen(paths.back().c_str(), "wb");
        std::fwrite(bytes->data(), 1, bytes->size(), fp);
        std::fclose(fp);
    }
    std::vector<std::string> inputs{dir.string()};
    auto listed = list_ply_frames(inputs);
    REQUIRE(listed.ok());
    CHECK(*listed == paths);
    const std::string out = (dir / "scene.4dgs").string();
    ConvertOptions o;
    o.fps = kFps;
    ConvertReport rep;
    REQUIRE(convert_ply_files(paths, out, o, &rep).ok());
    CHECK(fs::file_size(out) == rep.output_bytes);
    CHECK(rep.input_bytes == fs::file_size(paths[0]) + fs::file_size(paths[1]));
    // A truncated second frame: refused, and neither the output nor a temporary remains.
    fs::resize_file(paths[1], fs::file_size(paths[1]) - 3);
    fs::remove(out);
    auto st = convert_ply_files(paths, out, o, &rep);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().refusal == "ply-truncated-body");
    std::size_t entries = 0;
    for (auto& e : fs::directory_iterator(dir)) entries += e.path().extension() != ".ply";
    CHECK(entries == 0);
    fs::remove_all(dir);
}

TEST_CASE("extract refuses an instant outside the scene") {
    Converted c = convert(tracked(2, 4, 0, 7), ConvertShape::per_frame);
    MemorySource src(c.bytes);
    for (double t : {-0.1, 0.25, 1e9, std::nan("")}) {
        auto r = extract_state(src, t);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().refusal == "time-out-of-range");
    }
    CHECK(extract_state(src, 0.125).ok());
}

TEST_CASE("extract_state opens a file once: the magic, the tail and the summary are read once, "
          "whatever the temporal model") {
    for (const char* name : {"birth-deflate.4dgs", "keyframe-delta-churn.4dgs"}) {
        INFO(name);
        auto file = read_file(std::string(FOURDGS_TEST_DATA) + "/" + name);
        REQUIRE(file.ok());
        test::CountingSource src(*file);
        auto cloud = extract_state(src, 0.5);
        REQUIRE(cloud.ok());
        CHECK(src.magic_reads() == 1);
        CHECK(src.tail_reads() == 1);
        CHECK(src.summary_reads() == 1);
    }
}

TEST_CASE("extract_state reads a stream front to back, once") {
    auto file = read_file(std::string(FOURDGS_TEST_DATA) + "/keyframe-delta-churn.4dgs");
    REQUIRE(file.ok());
    MemorySource mem(*file);
    auto expected = extract_state(mem, 0.5);
    REQUIRE(expected.ok());
    test::CountingSource pipe(*file, /*random_access=*/false);
    auto cloud = extract_state(pipe, 0.5);
    REQUIRE(cloud.ok());
    CHECK(cloud->count == expected->count);
    CHECK(cloud->position == expected->position);
    CHECK(pipe.magic_reads() == 1);
}

TEST_CASE("convert measures its file against the input at the frames asked, within the tolerance") {
    const auto frames = test::tracked_sequence(6, 80, 1, 8, 21);
    for (ConvertShape shape : {ConvertShape::per_frame, ConvertShape::keyframe_delta}) {
        INFO(to_string(shape));
        ConvertOptions o;
        o.fps = 8;
        o.shape = shape;
        o.error_frames = 3;
        MemorySink sink;
        ConvertReport rep;
        REQUIRE(convert_frames(frames, o, sink, &rep).ok());
        CHECK(rep.error_frames == std::vector<std::uint64_t>{0, 2, 5});
        const std::pair<const char*, double> keys[] = {{"pos", rep.tolerance.pos},
                                                       {"scale_rel", rep.tolerance.scale_rel},
                                                       {"rot", rep.tolerance.rot},
                                                       {"rgb", rep.tolerance.rgb},
                                                       {"alpha", rep.tolerance.alpha}};
        for (const auto& [key, tolerance] : keys) {
            const AttributeError* e = nullptr;
            for (const AttributeError& a : rep.error)
                if (a.name == key) e = &a;
            REQUIRE(e != nullptr);
            INFO(key << " max " << e->max << " tolerance " << tolerance);
            CHECK(e->max > 0);
            CHECK(e->max <= tolerance * (1 + 1e-6));
            CHECK(e->samples > 0);
        }
        o.error_frames = 0;
        MemorySink again;
        ConvertReport quiet;
        REQUIRE(convert_frames(frames, o, again, &quiet).ok());
        CHECK(quiet.error.empty());
        CHECK(again.bytes() == sink.bytes());  // measuring does not change the file
    }
}

TEST_CASE("keyframe-delta conversion: every choice the encoder may make keeps each attribute "
          "within its tolerance at every frame, and writes the same bytes twice") {
    // Generated sequences (still, moving and accelerating gaussians, one SH change: a death and
    // a birth) under every schedule and reference choice and each effort; the error is measured
    // by decoding every frame back (ConvertReport::error).
    for (unsigned seed : {31u, 32u}) {
        const auto frames = test::tracked_sequence(9, 60, 1, 8, seed, 5 + seed % 3);
        for (std::uint32_t every : {1u, 3u, 8u, 16u})
            for (bool cheaper : {false, true})
                for (Effort effort : {Effort::fast, Effort::default_}) {
                    INFO("seed " << seed << " keyframe_every " << every << " cheaper " << cheaper
                                 << " effort " << int(effort));
                    ConvertOptions o;
                    o.fps = 8;
                    o.shape = ConvertShape::keyframe_delta;
                    o.keyframe_every = every;
                    o.cheaper_reference = cheaper;
                    o.never_larger_than_per_frame = false;
                    o.writer.effort = effort;
                    o.error_frames = frames.size();
                    MemorySink sink, again;
                    ConvertReport rep, rep2;
                    REQUIRE(convert_frames(frames, o, sink, &rep).ok());
                    REQUIRE(rep.shape == ConvertShape::keyframe_delta);
                    const std::pair<const char*, double> keys[] = {
                        {"pos", rep.tolerance.pos},  {"scale_rel", rep.tolerance.scale_rel},
                        {"rot", rep.tolerance.rot},  {"rgb", rep.tolerance.rgb},
                        {"alpha", rep.tolerance.alpha}};
                    for (const auto& [key, tolerance] : keys) {
                        const AttributeError* e = nullptr;
                        for (const AttributeError& a : rep.error)
                            if (a.name == key) e = &a;
                        REQUIRE(e != nullptr);
                        INFO(key << " max " << e->max << " tolerance " << tolerance);
                        CHECK(e->samples > 0);
                        CHECK(e->max <= tolerance * (1 + 1e-6));
                    }
                    REQUIRE(convert_frames(frames, o, again, &rep2).ok());
                    CHECK(again.bytes() == sink.bytes());
                    // Read a frame at a time (convert_frame_source): the same file.
                    ConvertReport streamed;
                    CHECK(convert_streamed(frames, o, streamed) == sink.bytes());
                    check_same_report(streamed, rep);
                }
    }
}

TEST_CASE("keyframe-delta's default keyframe spacing is one second of frames where every "
          "gaussian moves, as the CLI's") {
    CHECK(gop_frames(0, 8) == 8);
    CHECK(gop_frames(0, 29.97) == 30);
    CHECK(gop_frames(0, 0.25) == 1);
    CHECK(gop_frames(0, std::numeric_limits<double>::quiet_NaN()) == 10);
    CHECK(gop_frames(5, 8) == 5);
    CHECK(ConvertOptions{}.keyframe_every == 0);
    CHECK(PlanOptions{}.keyframe_every == 0);

    // (Where some stay put, one keyframe and a seek point each second: test_seek_points.cpp.)
    const auto frames = test::moving_sequence(20, 40, 1, 8, 33u);
    auto write = [&](std::uint32_t every, ConvertReport& rep) {
        ConvertOptions o;
        o.fps = 8;
        o.shape = ConvertShape::keyframe_delta;
        if (every) o.keyframe_every = every;
        o.never_larger_than_per_frame = false;
        MemorySink sink;
        REQUIRE(convert_frames(frames, o, sink, &rep).ok());
        return sink.take();
    };
    ConvertReport by_default, explicit_second;
    const auto a = write(0, by_default), b = write(8, explicit_second);
    CHECK(by_default.chunks == 20);
    CHECK(by_default.deltas == 17);  // keyframes at frames 0, 8 and 16
    CHECK(a == b);
}

TEST_CASE("keyframe-delta writer: steps sharing one id list write what steps with their own "
          "copies write") {
    // A tracked sequence hands every step the same ids, and the writer then finds each row at
    // the previous state's row without a lookup (keyframe_writer.cpp, Identity); the result must
    // be the lookup's, incarnations included (gaussian 3's SH changes at frame 5: a new id).
    const auto frames = test::tracked_sequence(12, 50, 1, 8, 35u, 5);
    std::vector<std::uint32_t> shared(frames.front().count);
    for (std::size_t i = 0; i < shared.size(); ++i)
        shared[i] = static_cast<std::uint32_t>((i * 37 + 11) % shared.size());  // shuffled ids
    std::vector<std::vector<std::uint32_t>> copies(frames.size(), shared);
    std::vector<std::vector<float>> colors(frames.size());
    const std::vector<float> sigma(frames.front().count, std::numeric_limits<float>::infinity());
    auto steps_with = [&](bool share) {
        std::vector<KeyframeStep> steps;
        for (std::size_t s = 0; s < frames.size(); ++s) {
            const PlyCloud& f = frames[s];
            colors[s].assign(f.color.begin(), f.color.end());
            for (float& c : colors[s]) c = std::clamp(c, 0.0f, 1.0f);
            KeyframeStep st;
            st.t0 = double(s) / 8;
            st.ids = share ? std::span<const std::uint32_t>(shared) : copies[s];
            st.gaussians.count = f.count;
            st.gaussians.position = f.position;
            st.gaussians.scale = f.scale;
            st.gaussians.rotation = f.rotation;
            st.gaussians.color = colors[s];
            st.gaussians.sigma_t = sigma;
            st.gaussians.sh_degree = f.sh_degree;
            st.gaussians.sh = f.sh;
            steps.push_back(st);
        }
        return steps;
    };
    SceneHeader header;
    header.duration_sec = double(frames.size()) / 8;
    header.sh_degree = frames.front().sh_degree;
    for (bool cheaper : {false, true})
        for (std::uint32_t every : {1u, 4u, 12u}) {
            INFO("keyframe_every " << every << " cheaper " << cheaper);
            KeyframeWriterOptions o;
            o.keyframe_every = every;
            o.cheaper_reference = cheaper;
            KeyframeWriteReport shared_rep, copied_rep;
            auto a = write_keyframe_delta(steps_with(true), header, o, &shared_rep);
            auto b = write_keyframe_delta(steps_with(false), header, o, &copied_rep);
            if (!a.ok()) FAIL(a.error().describe());
            if (!b.ok()) FAIL(b.error().describe());
            CHECK(*a == *b);
            CHECK(shared_rep.base.gaussian_count == frames.front().count + 1);
            CHECK(copied_rep.base.gaussian_count == shared_rep.base.gaussian_count);
            // The encoded chunks waiting in the temporary file, from the first one or from the
            // fifth on (held_bytes), instead of in memory: the same bytes.
            for (std::uint64_t held : {std::uint64_t{0}, std::uint64_t{4} * a->size() / 12}) {
                INFO("held_bytes " << held);
                o.held_bytes = held;
                auto spilled = write_keyframe_delta(steps_with(true), header, o);
                if (!spilled.ok()) FAIL(spilled.error().describe());
                CHECK(*spilled == *a);
            }
        }
}

TEST_CASE("tracked keyframe-delta read a frame at a time writes what the frames in memory write") {
    // Rigid parts found (objects, each part's bytes), a deforming part, clamped colours, the
    // per-frame comparison, and a sequence whose per-frame encoding is the smaller.
    ConvertOptions o;
    o.fps = 10;
    o.shape = ConvertShape::keyframe_delta;
    o.part_bytes = true;
    o.error_frames = 3;
    test::RigidSceneShape shape;
    shape.static_share = 0.3, shape.part_a_share = 0.3, shape.part_b_share = 0.2;
    shape.sh_degree = 1;
    const test::RigidScene scene(1200, o.fps, 5, shape);
    std::vector<PlyCloud> frames;
    for (std::size_t f = 0; f < 12; ++f) frames.push_back(scene.frame(f));
    for (std::size_t i = 0; i < 40; ++i) frames[3].color[i * 4] = 1.25f;  // clamped
    for (bool cheaper : {true, false}) {
        INFO("cheaper " << cheaper);
        o.cheaper_reference = cheaper;
        MemorySink sink;
        ConvertReport held;
        REQUIRE(convert_frames(frames, o, sink, &held).ok());
        REQUIRE(held.objects.size() == 2);
        REQUIRE(held.clamped_colors > 0);
        // One thread, or the report's sizes encoded on a second one beside the file.
        for (unsigned threads : {1u, 2u}) {
            INFO("threads " << threads);
            o.writer.threads = threads;
            ConvertReport streamed;
            CHECK(convert_streamed(frames, o, streamed) == sink.bytes());
            check_same_report(streamed, held);
        }
        // A source with no read_into: each frame a fresh cloud from read.
        ConvertReport fresh;
        CHECK(convert_streamed(frames, o, fresh, false) == sink.bytes());
        check_same_report(fresh, held);
    }
    // More frames than the rigid search's first look takes (rigid_sample_frames): the parts are
    // still found, and the same.
    {
        std::vector<PlyCloud> longer;
        for (std::size_t f = 0; f < 2 * kRigidSampleFrames + 3; ++f)
            longer.push_back(scene.frame(f));
        MemorySink sink;
        ConvertReport held, streamed;
        REQUIRE(convert_frames(longer, o, sink, &held).ok());
        CHECK(held.objects.size() == 2);
        CHECK(convert_streamed(longer, o, streamed) == sink.bytes());
        check_same_report(streamed, held);
    }
    o.writer.threads = 0;

    // Every gaussian somewhere else in every frame, and every frame a keyframe (which carries
    // gaussian ids a per-frame chunk does not): per frame is the smaller.
    o.keyframe_every = 1;
    std::vector<PlyCloud> jumping = test::tracked_sequence(3, 30, 0, o.fps, 9);
    std::mt19937 rng(4);
    std::uniform_real_distribution<float> u(-1, 1);
    for (PlyCloud& f : jumping)
        for (float& v : f.position) v = u(rng);
    for (PlyCloud& f : jumping)
        for (float& v : f.rotation) v = u(rng);
    MemorySink sink;
    ConvertReport held, streamed;
    REQUIRE(convert_frames(jumping, o, sink, &held).ok());
    INFO("tracked " << held.output_bytes << " per frame " << held.per_frame_bytes);
    CHECK(held.shape == ConvertShape::per_frame);
    CHECK(convert_streamed(jumping, o, streamed) == sink.bytes());
    check_same_report(streamed, held);
}

TEST_CASE("tracked keyframe-delta read a frame at a time holds as much for 120 frames as for 40") {
    if (!test::live_bytes_counting()) {
        WARN("operator new is the sanitizer's here: peak memory is not measured");
        return;
    }
    // 4000 gaussians, 272 KB a frame: 120 frames held would be 33 MB. The frames are made on
    // demand, so what is live is what the conversion holds (and the encoded file).
    ConvertOptions o;
    o.fps = 10;
    o.shape = ConvertShape::keyframe_delta;
    o.part_bytes = true;
    o.error_frames = 4;
    const test::RigidScene scene(4000, o.fps, 6);
    const std::size_t frame_bytes = 4000 * 17 * sizeof(float);
    std::size_t peak[2] = {};
    std::uint64_t output[2] = {}, moving = 0;
    for (int i = 0; i < 2; ++i) {
        const std::uint64_t frames = i == 0 ? 40 : 120;
        ConvertReport rep;
        const std::size_t before = test::live_bytes();
        test::reset_peak_live_bytes();
        const auto bytes = convert_streamed(
            frames, [&](std::uint64_t k) { return scene.frame(k); }, o, rep);
        peak[i] = test::peak_live_bytes() - before;
        output[i] = bytes.size();
        moving = 4000 - rep.static_part.gaussians;
        CHECK(rep.objects.size() == 2);
    }
    INFO("peak " << peak[0] << " B at 40 frames, " << peak[1] << " B at 120; files " << output[0]
                 << " and " << output[1] << " B; a frame " << frame_bytes << " B; " << moving
                 << " moving");
    // What grows is the writers' chunks up to held_bytes each (two writers at once with threads),
    // the parts' poses and per-frame bookkeeping; not the frames, not the rigid search's positions
    // and rotations (a sample of frames, then a frame at a time: 28 B a moving gaussian a frame
    // for 80 more frames would be this much again), not the encoded file.
    CHECK(peak[1] < peak[0] + 2 * KeyframeWriterOptions{}.held_bytes + 4 * frame_bytes);
    CHECK(peak[1] < peak[0] + 80 * 28 * moving);
    CHECK(peak[1] < 40 * frame_bytes);
}

TEST_CASE("keyframe-delta: a reference chosen by estimate keeps every bound, is deterministic, "
          "and is within 2 % of the reference chosen by encoding both") {
    // Motion that comes back (the first 4 frames looped, and played forward and back), where some
    // deltas are smaller against the keyframe, and steady motion, where none is; rigid parts and
    // a deforming share; a keyframe every 8 frames.
    test::RigidSceneShape shape;
    shape.static_share = 0.4, shape.part_a_share = 0.25, shape.part_b_share = 0.25;
    const test::RigidScene scene(1500, kFps, 41, shape);
    std::vector<PlyCloud> steady, looped, pingpong;
    for (std::size_t f = 0; f < 20; ++f) {
        steady.push_back(scene.frame(f));
        looped.push_back(scene.frame(f % 4));
        const std::size_t back_and_forth[] = {0, 1, 2, 3, 2, 1};
        pingpong.push_back(scene.frame(back_and_forth[f % 6]));
    }
    std::uint32_t keyed_by_estimate = 0;
    for (const auto* frames : {&steady, &looped, &pingpong})
        for (bool rigid : {false, true}) {
            INFO("sequence " << (frames == &steady ? "steady" : frames == &looped ? "looped"
                                                                                : "ping-pong")
                             << " rigid parts " << rigid);
            ConvertOptions o;
            o.fps = kFps;
            o.shape = ConvertShape::keyframe_delta;
            o.keyframe_every = 8;
            o.rigid_parts = rigid;
            o.rigid_min_members = 32;
            o.never_larger_than_per_frame = false;
            o.error_frames = frames->size();
            ConvertReport exact, estimated, again, streamed;
            MemorySink exact_sink, sink, again_sink;
            o.reference_choice = ModeChoice::compress_both;
            REQUIRE(convert_frames(*frames, o, exact_sink, &exact).ok());
            o.reference_choice.reset();  // the default at effort default: by estimate
            REQUIRE(convert_frames(*frames, o, sink, &estimated).ok());
            INFO("estimated " << estimated.output_bytes << " B, " << estimated.keyframe_referenced
                              << " keyframe-referenced; exact " << exact.output_bytes << " B, "
                              << exact.keyframe_referenced);
            CHECK(double(estimated.output_bytes) <= 1.02 * double(exact.output_bytes));
            keyed_by_estimate += estimated.keyframe_referenced;
            for (const AttributeError& e : estimated.error) {
                const double bound = e.name == "pos"         ? estimated.tolerance.pos
                                     : e.name == "scale_rel" ? estimated.tolerance.scale_rel
                                     : e.name == "rot"       ? estimated.tolerance.rot
                                     : e.name == "rgb"       ? estimated.tolerance.rgb
                                     : e.name == "alpha"     ? estimated.tolerance.alpha
                                                             : -1;
                if (bound < 0) continue;
                INFO(e.name << " max " << e.max << " bound " << bound);
                CHECK(e.max <= bound * (1 + 1e-6));
            }
            REQUIRE(convert_frames(*frames, o, again_sink, &again).ok());
            CHECK(again_sink.bytes() == sink.bytes());
            CHECK(convert_streamed(*frames, o, streamed) == sink.bytes());
            check_same_report(streamed, estimated);
        }
    CHECK(keyed_by_estimate > 0);  // the estimate does take the keyframe where motion comes back
}

TEST_CASE("never larger than per frame: counting the per-frame encoding only until it passes the "
          "file chooses the same file, and says the count stopped") {
    ConvertOptions o;
    o.fps = 10;
    o.shape = ConvertShape::keyframe_delta;
    o.error_frames = 0;
    const test::RigidScene scene(1200, o.fps, 43);
    std::vector<PlyCloud> frames;
    for (std::size_t f = 0; f < 12; ++f) frames.push_back(scene.frame(f));
    for (ConvertShape shape : {ConvertShape::keyframe_delta, ConvertShape::adaptive}) {
        INFO(to_string(shape));
        o.shape = shape;
        o.per_frame_whole = true;
        MemorySink whole_sink, sink;
        ConvertReport whole, counted;
        REQUIRE(convert_frames(frames, o, whole_sink, &whole).ok());
        o.per_frame_whole = false;
        REQUIRE(convert_frames(frames, o, sink, &counted).ok());
        CHECK(sink.bytes() == whole_sink.bytes());
        CHECK_FALSE(whole.per_frame_partial);
        CHECK(counted.shape == shape);
        CHECK(counted.per_frame_partial);
        // What was counted is past the file and short of the whole count.
        CHECK(counted.per_frame_bytes > counted.output_bytes);
        CHECK(counted.per_frame_bytes < whole.per_frame_bytes);
        if (shape == ConvertShape::keyframe_delta) {
            ConvertReport streamed;
            CHECK(convert_streamed(frames, o, streamed) == sink.bytes());
            check_same_report(streamed, counted);
            CHECK(streamed.per_frame_partial);
        }
    }
    // Where the per-frame encoding is the smaller, it is counted whole and written, as before.
    o.shape = ConvertShape::keyframe_delta;
    o.keyframe_every = 1;
    std::vector<PlyCloud> jumping = test::tracked_sequence(3, 30, 0, o.fps, 9);
    std::mt19937 rng(4);
    std::uniform_real_distribution<float> u(-1, 1);
    for (PlyCloud& f : jumping) {
        for (float& v : f.position) v = u(rng);
        for (float& v : f.rotation) v = u(rng);
    }
    MemorySink whole_sink, sink;
    ConvertReport whole, counted, streamed;
    o.per_frame_whole = true;
    REQUIRE(convert_frames(jumping, o, whole_sink, &whole).ok());
    o.per_frame_whole = false;
    REQUIRE(convert_frames(jumping, o, sink, &counted).ok());
    CHECK(counted.shape == ConvertShape::per_frame);
    CHECK_FALSE(counted.per_frame_partial);
    CHECK(counted.per_frame_bytes == whole.per_frame_bytes);
    CHECK(sink.bytes() == whole_sink.bytes());
    CHECK(convert_streamed(jumping, o, streamed) == sink.bytes());
    check_same_report(streamed, counted);
}

TEST_CASE("keyframe-delta: the measured error pairs each decoded gaussian with its own input "
          "gaussian (by its id), not the nearest") {
    // Gaussians on a line 0.01 apart in frame 0, so their ids (Morton ranks of frame 0) are
    // their indices and a decoded state, sorted by id, lists them in input order; later they
    // wander up to 0.03 and cross their neighbours, each with its own colour.
    const std::size_t n = 200, frames_n = 6;
    std::mt19937 rng(41);
    std::uniform_real_distribution<float> u(0.1f, 0.9f);
    PlyCloud base;
    base.count = n;
    for (std::size_t i = 0; i < n; ++i) {
        base.position.insert(base.position.end(), {0.01f * float(i), 0, 0});
        base.normal.insert(base.normal.end(), {0, 0, 0});
        base.scale.insert(base.scale.end(), {0.02f, 0.02f, 0.02f});
        base.rotation.insert(base.rotation.end(), {0, 0, 0, 1});
        base.color.insert(base.color.end(), {u(rng), u(rng), u(rng), 0.9f});
    }
    std::vector<PlyCloud> frames(frames_n, base);
    for (std::size_t k = 1; k < frames_n; ++k)
        for (std::size_t i = 0; i < n; ++i)
            frames[k].position[i * 3] += 0.03f * std::sin(1.7f * float(i) + float(k));
    ConvertOptions o;
    o.fps = kFps;
    o.shape = ConvertShape::keyframe_delta;
    o.keyframe_every = 4;
    o.never_larger_than_per_frame = false;
    o.error_frames = frames_n;
    MemorySink sink;
    ConvertReport rep;
    REQUIRE(convert_frames(frames, o, sink, &rep).ok());
    MemorySource src(sink.bytes());
    double by_order = 0, by_position = 0;  // the largest colour error over the frames
    for (std::size_t k = 0; k < frames_n; ++k) {
        auto got = extract_state(src, double(k) / kFps);
        REQUIRE(got.ok());
        REQUIRE(got->count == n);
        PlyCloud input = frames[k];
        for (float& v : input.color) v = std::clamp(v, 0.0f, 1.0f);
        auto own = compare_clouds(input, *got, {CompareMatch::order});
        auto nearest = compare_clouds(input, *got, {CompareMatch::position});
        REQUIRE(own.ok());
        REQUIRE(nearest.ok());
        by_order = std::max(by_order, own->find("rgb")->max);
        by_position = std::max(by_position, nearest->find("rgb")->max);
    }
    const AttributeError* rgb = nullptr;
    for (const AttributeError& e : rep.error)
        if (e.name == "rgb") rgb = &e;
    REQUIRE(rgb != nullptr);
    CHECK(rgb->max == by_order);
    CHECK(rgb->max <= rep.tolerance.rgb * (1 + 1e-6));
    CHECK(by_position > rep.tolerance.rgb);  // nearest pairing crossed pairs: another's colour
    // Read a frame at a time: the same pairs, the same figures.
    ConvertReport streamed;
    CHECK(convert_streamed(frames, o, streamed) == sink.bytes());
    check_same_report(streamed, rep);
}
