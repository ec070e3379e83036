// The web viewers' formats (fourdgs/tools/splat_formats.hpp) and the glTF export
// (src/cli/gltf_export.hpp): a generator here writes .splat frames and a .splatv the way the
// upstream writers do (antimatter15/splat convert.py, antimatter15/splaTV hybrid.js); they convert
// through the same tracked machinery as PLY frames and come back within the recorded tolerance;
// damaged files are refused by name; the exports equal the PLY export within each format's own
// precision.
#include <catch2/catch.hpp>

#include <tiny_gltf.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fourdgs/io.hpp"
#include "fourdgs/refusals.hpp"
#include "fourdgs/tools/compare.hpp"
#include "fourdgs/tools/convert.hpp"
#include "fourdgs/tools/splat_formats.hpp"
#include "gltf_export.hpp"
#include "support/ply_clouds.hpp"
#include "support/scratch_files.hpp"

using namespace fourdgs;
using test::TempDir;
using test::write_bytes;

namespace {

constexpr double kFps = 8;  // frame times k / 8 are exact in f32

// ---- the generator: upstream's layouts -------------------------------------------------------

struct Splat {
    float p[3], s[3];  // position, linear scale
    float rgba[4];     // 0..1
    float q[4];        // w x y z, unit
};

// convert.py: (v * 255).clip(0, 255).astype(uint8) — truncation.
std::uint8_t trunc_byte(double v) { return static_cast<std::uint8_t>(std::clamp(v, 0.0, 255.0)); }

std::vector<std::uint8_t> splat_file(const std::vector<Splat>& splats) {
    std::vector<std::uint8_t> out;
    for (const Splat& g : splats) {
        std::uint8_t b[32];
        std::memcpy(b, g.p, 12);
        std::memcpy(b + 12, g.s, 12);
        for (int k = 0; k < 4; ++k) b[24 + k] = trunc_byte(g.rgba[k] * 255.0);
        for (int k = 0; k < 4; ++k) b[28 + k] = trunc_byte(g.q[k] * 128.0 + 128.0);
        out.insert(out.end(), b, b + 32);
    }
    return out;
}

std::vector<Splat> splat_frame(std::size_t n, double t, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1, 1), c(0.1f, 0.9f);
    std::vector<Splat> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        Splat& g = out[i];
        const float base[3] = {0.1f * float(i % 8), 0.1f * float(i / 8 % 8), 0.1f * float(i / 64)};
        for (int k = 0; k < 3; ++k) {
            const float v = 0.05f * u(rng);
            g.p[k] = static_cast<float>(base[k] + v * t);
            g.s[k] = 0.01f + 0.02f * c(rng);
        }
        for (float& x : g.rgba) x = c(rng);
        float q[4] = {1.0f + c(rng), u(rng), u(rng), u(rng)};
        const float norm = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        for (int k = 0; k < 4; ++k) g.q[k] = q[k] / norm;
    }
    return out;
}

// hybrid.js's floatToHalf: truncating, subnormals kept, overflow to infinity.
std::uint32_t float_to_half(float value) {
    std::uint32_t f;
    std::memcpy(&f, &value, 4);
    const std::uint32_t sign = (f >> 31) & 1, exp = (f >> 23) & 0xff;
    std::uint32_t frac = f & 0x7fffff, new_exp;
    if (exp == 0) {
        new_exp = 0;
    } else if (exp < 113) {
        new_exp = 0;
        frac |= 0x800000;
        frac >>= (113 - exp);
        if (frac & 0x1000000) {
            new_exp = 1;
            frac = 0;
        }
    } else if (exp < 142) {
        new_exp = exp - 112;
    } else {
        new_exp = 31;
        frac = 0;
    }
    return (sign << 15) | (new_exp << 10) | (frac >> 13);
}

std::uint32_t pack_half2(float a, float b) { return float_to_half(a) | (float_to_half(b) << 16); }

struct SplatvGaussian {
    float p[3], rot[4], s[3], rgba[4], motion[9], omega[4], trbf_center, trbf_scale;
};

// hybrid.js's texture (16 u32 per gaussian, 4096 u32 a row) and its file: magic, JSON, chunk.
std::vector<std::uint8_t> splatv_file(const std::vector<SplatvGaussian>& gs) {
    const std::size_t texwidth = 1024 * 4, texheight = (4 * gs.size() + texwidth - 1) / texwidth;
    std::vector<std::uint32_t> tex(texwidth * texheight * 4, 0);
    for (std::size_t j = 0; j < gs.size(); ++j) {
        const SplatvGaussian& g = gs[j];
        std::uint32_t* t = &tex[16 * j];
        std::memcpy(t, g.p, 12);
        t[3] = pack_half2(g.rot[0], g.rot[1]);
        t[4] = pack_half2(g.rot[2], g.rot[3]);
        t[5] = pack_half2(g.s[0], g.s[1]);
        t[6] = pack_half2(g.s[2], 0);
        std::uint8_t rgba[4];
        for (int k = 0; k < 4; ++k) rgba[k] = trunc_byte(g.rgba[k] * 255.0);
        std::memcpy(&t[7], rgba, 4);
        for (int k = 0; k < 4; ++k) t[8 + k] = pack_half2(g.motion[2 * k], g.motion[2 * k + 1]);
        t[12] = pack_half2(g.motion[8], 0);
        t[13] = pack_half2(g.omega[0], g.omega[1]);
        t[14] = pack_half2(g.omega[2], g.omega[3]);
        t[15] = pack_half2(g.trbf_center, g.trbf_scale);
    }
    const std::string json =
        "[{\"type\":\"splat\",\"size\":" + std::to_string(tex.size() * 4) +
        ",\"texwidth\":" + std::to_string(texwidth) + ",\"texheight\":" +
        std::to_string(texheight) +
        ",\"cameras\":[{\"id\":0,\"img_name\":\"00001\",\"width\":1959,\"height\":1090,"
        "\"position\":[-3.0,-0.1,-3.7],\"rotation\":[[1,0,0],[0,1,0],[0,0,1]],\"fy\":1164.66,"
        "\"fx\":1159.59}]}]";
    const std::uint32_t head[2] = {kSplatvMagic, static_cast<std::uint32_t>(json.size())};
    std::vector<std::uint8_t> out(8 + json.size() + tex.size() * 4);
    std::memcpy(out.data(), head, 8);
    std::memcpy(out.data() + 8, json.data(), json.size());
    std::memcpy(out.data() + 8 + json.size(), tex.data(), tex.size() * 4);
    return out;
}

std::vector<SplatvGaussian> splatv_gaussians(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1, 1), c(0.3f, 0.9f);
    std::vector<SplatvGaussian> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        SplatvGaussian& g = out[i];
        const float base[3] = {0.1f * float(i % 8), 0.1f * float(i / 8 % 8), 0.1f * float(i / 64)};
        for (int k = 0; k < 3; ++k) {
            g.p[k] = base[k];
            g.s[k] = 0.01f + 0.02f * c(rng);
        }
        g.rot[0] = 1.5f;
        for (int k = 1; k < 4; ++k) g.rot[k] = 0.5f * u(rng);
        for (float& x : g.rgba) x = c(rng);
        for (int k = 0; k < 9; ++k) g.motion[k] = (k < 3 ? 0.05f : 0.01f) * u(rng);
        for (float& x : g.omega) x = 0.1f * u(rng);
        g.trbf_center = 0.5f + 0.2f * u(rng);
        g.trbf_scale = 2.0f + c(rng);  // never fades far: every gaussian stays visible
    }
    return out;
}

// ---- helpers -----------------------------------------------------------------------------------

std::vector<std::uint8_t> read_bytes(const std::string& path) {
    auto r = read_file(path);
    REQUIRE(r.ok());
    return *r;
}

// The input frame as the writer takes it (colour and opacity clamped to [0, 1]).
PlyCloud clamped(PlyCloud c) {
    for (float& v : c.color) v = std::clamp(v, 0.0f, 1.0f);
    return c;
}

// Every frame of `file`, extracted at its frame time k / fps (exact in f32), within the report's
// tolerance of `frames` (the promise holds at frame times: between them adaptive records move on).
void check_frames_within_tolerance(const std::string& file, const std::vector<PlyCloud>& frames,
                                   const ConvertReport& rep) {
    const auto bytes = read_bytes(file);
    MemorySource src(bytes);
    const QuantBounds& tol = rep.tolerance;
    for (std::size_t k = 0; k < frames.size(); ++k) {
        auto got = extract_state(src, double(k) / kFps);
        REQUIRE(got.ok());
        REQUIRE(got->count == frames[k].count);
        auto cmp = compare_clouds(clamped(frames[k]), *got, {CompareMatch::position});
        REQUIRE(cmp.ok());
        for (const AttributeError& e : cmp->attributes) {
            INFO("frame " << k << " " << e.name << " max " << e.max);
            if (e.name == "pos") CHECK(e.max <= tol.pos * 1.0001);
            if (e.name == "rgb") CHECK(e.max <= tol.rgb * 1.0001);
            if (e.name == "alpha") CHECK(e.max <= tol.alpha * 1.0001);
            if (e.name == "rot") CHECK(e.max <= tol.rot * 1.0001);
            if (e.name == "scale_rel") CHECK(e.max <= tol.scale_rel * 1.0001);
        }
    }
}

std::string_view refusal_of(const Error& e) { return e.refusal; }

}  // namespace

TEST_CASE("read_splat decodes convert.py's layout within its quantization") {
    const auto splats = splat_frame(100, 0, 1);
    auto cloud = read_splat(splat_file(splats));
    REQUIRE(cloud.ok());
    REQUIRE(cloud->count == 100);
    CHECK(cloud->sh_degree == 0);
    for (std::size_t i = 0; i < 100; ++i) {
        for (int k = 0; k < 3; ++k) {
            CHECK(cloud->position[3 * i + k] == splats[i].p[k]);
            CHECK(cloud->scale[3 * i + k] == splats[i].s[k]);
        }
        for (int k = 0; k < 4; ++k) {
            CHECK(std::abs(cloud->color[4 * i + k] - splats[i].rgba[k]) <= 1.0 / 255 + 1e-6);
            // Bytes are w x y z; the cloud holds x y z w.
            CHECK(std::abs(cloud->rotation[4 * i + (k + 3) % 4] - splats[i].q[k]) <=
                  1.0 / 128 + 1e-6);
        }
    }
}

TEST_CASE("a .splat sequence converts tracked and extracts back within the tolerance") {
    TempDir dir("fourdgs-splat-seq");
    std::vector<PlyCloud> frames;
    for (int f = 0; f < 5; ++f) {
        const auto bytes = splat_file(splat_frame(150, f / kFps, 7));
        const auto path = dir.path / ("frame_" + std::to_string(f) + ".splat");
        write_bytes(path, bytes);
        auto c = read_splat(bytes);
        REQUIRE(c.ok());
        frames.push_back(std::move(*c));
    }
    auto paths = list_ply_frames(std::vector<std::string>{dir.path.string()});
    REQUIRE(paths.ok());
    REQUIRE(paths->size() == 5);
    for (const auto shape : {ConvertShape::adaptive, ConvertShape::keyframe_delta}) {
        ConvertOptions o;
        o.fps = kFps;
        o.shape = shape;
        ConvertReport rep;
        const std::string out = (dir.path / "seq.4dgs").string();
        auto st = convert_ply_files(*paths, out, o, &rep);
        REQUIRE(st.ok());
        CHECK(rep.frames == 5);
        CHECK(rep.input_gaussians == 5 * 150);
        check_frames_within_tolerance(out, frames, rep);
    }
}

TEST_CASE("a .splatv converts through its sampled frames and extracts back within the tolerance") {
    const auto file = splatv_file(splatv_gaussians(200, 3));
    auto scene = read_splatv(file);
    REQUIRE(scene.ok());
    REQUIRE(scene->count == 200);  // the texture's padding rows are not gaussians
    const std::uint64_t n = 6;
    std::vector<PlyCloud> frames;
    for (std::uint64_t k = 0; k < n; ++k) frames.push_back(splatv_state_at(*scene, double(k) / (n - 1)));
    // The motion moves the gaussians: the frames are not all alike.
    CHECK(frames.front().position != frames.back().position);
    TempDir dir("fourdgs-splatv");
    ConvertOptions o;
    o.fps = kFps;
    o.shape = ConvertShape::adaptive;
    ConvertReport rep;
    const std::string out = (dir.path / "v.4dgs").string();
    REQUIRE(convert_frame_source(splatv_frames(*scene, n, file.size()), out, o, &rep).ok());
    CHECK(rep.frames == n);
    CHECK(rep.input_bytes == file.size());
    check_frames_within_tolerance(out, frames, rep);
}

TEST_CASE("splatv_state_at follows the player's motion, rotation and temporal opacity") {
    SplatvGaussian g{};
    g.p[0] = 1;
    g.rot[0] = 1;  // w
    for (float& s : g.s) s = 0.5f;
    for (float& c : g.rgba) c = 1.0f;
    g.motion[0] = 0.5f;   // x velocity
    g.motion[4] = 0.25f;  // y acceleration term
    g.motion[8] = 1.0f;   // z cubic term
    g.omega[3] = 0.5f;    // z rotation rate
    g.trbf_center = 0.25f;
    g.trbf_scale = 0.5f;
    auto scene = read_splatv(splatv_file({g}));
    REQUIRE(scene.ok());
    const PlyCloud c = splatv_state_at(*scene, 0.75);  // dt = 0.5
    CHECK(c.position[0] == Approx(1 + 0.5 * 0.5));
    CHECK(c.position[1] == Approx(0.25 * 0.25));
    CHECK(c.position[2] == Approx(0.125));
    CHECK(c.rotation[3] == Approx(1.0));   // w
    CHECK(c.rotation[2] == Approx(0.25));  // z
    CHECK(c.color[3] == Approx(std::exp(-1.0)));
}

TEST_CASE("damaged .splat and .splatv files are refused by name") {
    auto good = splat_file(splat_frame(4, 0, 2));
    SECTION("truncated") {
        good.pop_back();
        auto r = read_splat(good);
        REQUIRE(!r.ok());
        CHECK(refusal_of(r.error()) == refusal::kSplatTruncated);
    }
    SECTION("non-finite position") {
        const float nan = std::numeric_limits<float>::quiet_NaN();
        std::memcpy(good.data() + 32 + 4, &nan, 4);
        auto r = read_splat(good);
        REQUIRE(!r.ok());
        CHECK(refusal_of(r.error()) == refusal::kSplatBadValue);
        CHECK(r.error().message.find("splat 1") != std::string::npos);
    }
    SECTION("a zero quaternion") {
        std::fill(good.begin() + 28, good.begin() + 32, std::uint8_t{128});
        auto r = read_splat(good);
        REQUIRE(!r.ok());
        CHECK(refusal_of(r.error()) == refusal::kSplatBadValue);
    }
    SECTION("a negative scale, by the motion read too (which takes no scale)") {
        const float negative = -1.0f;
        std::memcpy(good.data() + 64 + 16, &negative, 4);
        TempDir dir("fourdgs-splat-bad-motion");
        const auto path = (dir.path / "f.splat").string();
        write_bytes(path, good);
        PlyCloud whole, motion;
        const Status a = read_frame_file_into(path, whole);
        const Status b = read_frame_motion_into(path, motion);
        REQUIRE(!a.ok());
        REQUIRE(!b.ok());
        CHECK(refusal_of(b.error()) == refusal::kSplatBadValue);
        CHECK(b.error().message == a.error().message);
        CHECK(b.error().message.find("splat 2") != std::string::npos);
    }
    auto v = splatv_file(splatv_gaussians(3, 4));
    std::uint32_t json_length;
    std::memcpy(&json_length, v.data() + 4, 4);
    auto refused = [](const std::vector<std::uint8_t>& bytes) {
        auto r = read_splatv(bytes);
        REQUIRE(!r.ok());
        return std::string(r.error().refusal);
    };
    SECTION("another magic") {
        v[0] ^= 1;
        CHECK(refused(v) == refusal::kSplatvNotSplatv);
    }
    SECTION("a JSON length past the end") {
        const std::uint32_t lie = static_cast<std::uint32_t>(v.size());
        std::memcpy(v.data() + 4, &lie, 4);
        CHECK(refused(v) == refusal::kSplatvBadHeader);
    }
    SECTION("a chunk size that disagrees with the bytes") {
        v.resize(v.size() - 64);
        CHECK(refused(v) == refusal::kSplatvBadHeader);
    }
    SECTION("JSON that does not parse") {
        v[8 + json_length - 1] = '}';
        CHECK(refused(v) == refusal::kSplatvBadHeader);
    }
    SECTION("a splat chunk whose texture size lies") {
        const std::string text(v.begin() + 8, v.begin() + 8 + json_length);
        const auto at = text.find("\"texheight\":1");
        REQUIRE(at != std::string::npos);
        v[8 + at + 12] = '2';
        CHECK(refused(v) == refusal::kSplatvBadHeader);
    }
    SECTION("a non-finite value") {
        const std::uint32_t inf_pair = 0x7c00u;  // half infinity in rot_0
        std::memcpy(v.data() + 8 + json_length + 12, &inf_pair, 4);
        CHECK(refused(v) == refusal::kSplatvBadValue);
    }
    SECTION("a trbf_scale of zero") {
        const std::uint32_t centre_only = 0x3800u;  // half(0.5), half(0)
        std::memcpy(v.data() + 8 + json_length + 60, &centre_only, 4);
        CHECK(refused(v) == refusal::kSplatvBadValue);
    }
}

TEST_CASE("a .splat's values are checked at their edges: -0 and the largest finite pass, the "
          "least negative scale, infinities and NaN of either sign are refused at their splat") {
    // The splats are checked by their bits first and searched one by one only where that finds
    // a bad one (parse_splats): both must draw the line where `isfinite` and `s < 0` do.
    using limits = std::numeric_limits<float>;
    const float big = limits::max(), tiny = limits::denorm_min();
    const float inf = limits::infinity(), nan = limits::quiet_NaN();
    const auto good = splat_file(splat_frame(1500, 0.5, 13));  // two blocks of the file reader's
    auto with = [&](std::size_t at, float v) {
        auto b = good;
        std::memcpy(b.data() + at, &v, 4);
        return b;
    };
    for (std::size_t splat : {std::size_t{0}, std::size_t{1400}}) {
        INFO("splat " << splat);
        const std::size_t pos = 32 * splat + 8, scale = 32 * splat + 20;  // z, scale z
        for (const auto& b : {with(pos, -0.0f), with(pos, big), with(pos, -big),
                              with(scale, -0.0f), with(scale, 0.0f), with(scale, big),
                              with(scale, tiny)})
            CHECK(read_splat(b).ok());
        for (const auto& b : {with(pos, inf), with(pos, -inf), with(pos, nan), with(pos, -nan),
                              with(scale, -tiny), with(scale, -1.0f), with(scale, inf),
                              with(scale, -inf), with(scale, nan), with(scale, -nan)}) {
            auto r = read_splat(b);
            REQUIRE(!r.ok());
            CHECK(refusal_of(r.error()) == refusal::kSplatBadValue);
            CHECK(r.error().message.find("splat " + std::to_string(splat) + ":") == 0);
        }
        auto zero = good;
        std::fill_n(zero.begin() + 32 * splat + 28, 4, std::uint8_t{128});
        CHECK(!read_splat(zero).ok());
        zero[32 * splat + 31] = 127;  // one byte off the zero quaternion
        CHECK(read_splat(zero).ok());
    }
}

TEST_CASE("a .splat's colour and rotation bytes read as b / 255 and (b - 128) / 128, every b") {
    // 256 splats, splat b's eight bytes all b but for a rotation that is never all 128 (the zero
    // quaternion is refused): its w byte is b + 1. The reader looks the values up; the lookup
    // must give the divisions' floats for every byte in every slot.
    std::vector<std::uint8_t> bytes(256 * 32, 0);
    for (int b = 0; b < 256; ++b) {
        std::uint8_t* p = bytes.data() + 32 * b;
        for (int k = 0; k < 8; ++k) p[24 + k] = static_cast<std::uint8_t>(b);
        p[28] = static_cast<std::uint8_t>(b + 1);
    }
    auto c = read_splat(bytes);
    REQUIRE(c.ok());
    for (int b = 0; b < 256; ++b) {
        const float colour = static_cast<float>(b) / 255.0f;
        const float turn = (static_cast<float>(b) - 128.0f) / 128.0f;
        const float w = (static_cast<float>((b + 1) % 256) - 128.0f) / 128.0f;
        for (int k = 0; k < 4; ++k) CHECK(c->color[4 * b + k] == colour);
        for (int k = 0; k < 3; ++k) CHECK(c->rotation[4 * b + k] == turn);  // x y z: bytes 29..31
        CHECK(c->rotation[4 * b + 3] == w);
    }
}

TEST_CASE("a .splat's every slot lands in its own column and lane, the last splat of a block too, "
          "whole and by the motion read") {
    // Splats whose 32 bytes all differ (random, the scale's sign bit cleared and each float's
    // exponent kept finite, the rotation never all 128), read whole and through the reader's
    // blocks of 1,024 at counts around a block's and a lane loop's ends: every float is its slot's
    // bytes as the format defines them — position and scale as they are, colour b / 255, rotation
    // (b - 128) / 128 from bytes w x y z into x y z w.
    TempDir dir("fourdgs-splat-lanes");
    std::mt19937 rng(5);
    for (const std::size_t n : {1u, 2u, 3u, 1023u, 1024u, 1025u, 2049u}) {
        INFO(n << " splats");
        std::vector<std::uint8_t> bytes(n * 32);
        for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
        for (std::size_t j = 0; j < n; ++j) {
            std::uint8_t* p = bytes.data() + 32 * j;
            for (int k = 0; k < 6; ++k) p[4 * k + 3] &= 0x3f;  // |value| < 2^-1: finite, scale >= 0
            if (p[28] == 128) p[28] = 129;
        }
        const auto path = (dir.path / "f.splat").string();
        write_bytes(path, bytes);
        auto whole = read_splat(bytes);
        REQUIRE(whole.ok());
        PlyCloud blocks;
        REQUIRE(read_frame_file_into(path, blocks).ok());
        // The motion read (count, positions, rotations alone) into a used cloud: read_splat's.
        PlyCloud motion = test::used_cloud();
        REQUIRE(read_frame_motion_into(path, motion).ok());
        CHECK(motion.count == n);
        CHECK(std::memcmp(motion.position.data(), whole->position.data(), 12 * n) == 0);
        CHECK(std::memcmp(motion.rotation.data(), whole->rotation.data(), 16 * n) == 0);
        CHECK(motion.position.size() == 3 * n);
        CHECK(motion.rotation.size() == 4 * n);
        for (const PlyCloud* c : {&*whole, &blocks}) {
            REQUIRE(c->count == n);
            for (std::size_t j = 0; j < n; ++j) {
                const std::uint8_t* p = bytes.data() + 32 * j;
                for (int k = 0; k < 3; ++k) {
                    float pos, scale;
                    std::memcpy(&pos, p + 4 * k, 4);
                    std::memcpy(&scale, p + 12 + 4 * k, 4);
                    CHECK(std::memcmp(&c->position[3 * j + k], &pos, 4) == 0);
                    CHECK(std::memcmp(&c->scale[3 * j + k], &scale, 4) == 0);
                }
                for (int k = 0; k < 4; ++k)
                    CHECK(c->color[4 * j + k] == static_cast<float>(p[24 + k]) / 255.0f);
                for (int k = 0; k < 4; ++k)  // x y z from bytes 29..31, w from byte 28
                    CHECK(c->rotation[4 * j + k] ==
                          (static_cast<float>(p[28 + (k + 1) % 4]) - 128.0f) / 128.0f);
            }
        }
    }
}

TEST_CASE("read_frame_file_into: a .splat read in blocks into a used cloud is read_splat's") {
    TempDir dir("fourdgs-splat-into");
    // 2,500 splats: more than one block of the reader's, the last one short.
    const auto bytes = splat_file(splat_frame(2500, 0.5, 11));
    const auto path = (dir.path / "f.splat").string();
    write_bytes(path, bytes);
    auto want = read_splat(bytes);
    REQUIRE(want.ok());
    REQUIRE(want->sh_degree == 0);
    REQUIRE(want->sh.empty());
    PlyCloud into = test::used_cloud();  // more gaussians, SH, non-zero normals
    for (int pass = 0; pass < 2; ++pass) {  // and again into the same storage
        REQUIRE(read_frame_file_into(path, into).ok());
        test::check_same_cloud(into, *want);
    }
    auto whole = read_splat_file(path);
    REQUIRE(whole.ok());
    CHECK(whole->position == want->position);
    CHECK(whole->rotation == want->rotation);

    SECTION("a bad value past the first block names its splat and offset, with the path") {
        auto bad = bytes;
        const float inf = std::numeric_limits<float>::infinity();
        std::memcpy(bad.data() + 32 * 2100 + 16, &inf, 4);  // splat 2100's scale y
        write_bytes(path, bad);
        auto st = read_frame_file_into(path, into);
        REQUIRE(!st.ok());
        CHECK(refusal_of(st.error()) == refusal::kSplatBadValue);
        CHECK(st.error().message.find(path + ": splat 2100") == 0);
        CHECK(st.error().offset == 32 * 2100);
        auto r = read_splat(bad);
        REQUIRE(!r.ok());
        CHECK(st.error().message == path + ": " + r.error().message);
    }
    SECTION("a truncated file is refused before anything is sized") {
        auto cut = bytes;
        cut.resize(cut.size() - 5);
        write_bytes(path, cut);
        auto st = read_frame_file_into(path, into);
        REQUIRE(!st.ok());
        CHECK(refusal_of(st.error()) == refusal::kSplatTruncated);
        CHECK(st.error().offset == 32 * 2499);
    }
    SECTION("a missing file is an io error") {
        auto st = read_frame_file_into((dir.path / "none.splat").string(), into);
        REQUIRE(!st.ok());
        CHECK(st.error().kind == ErrorKind::io);
    }
}

TEST_CASE("a splat count that changes between tracked frames is refused") {
    TempDir dir("fourdgs-splat-count");
    write_bytes(dir.path / "f0.splat", splat_file(splat_frame(20, 0, 5)));
    write_bytes(dir.path / "f1.splat", splat_file(splat_frame(21, 0.1, 5)));
    auto paths = list_ply_frames(std::vector<std::string>{dir.path.string()});
    REQUIRE(paths.ok());
    ConvertOptions o;
    o.fps = kFps;
    o.shape = ConvertShape::adaptive;
    const std::string out = (dir.path / "x.4dgs").string();
    auto st = convert_ply_files(*paths, out, o);
    REQUIRE(!st.ok());
    CHECK(st.error().refusal == refusal::kFramesNotTracked);
    CHECK(!std::filesystem::exists(out));
}

TEST_CASE("frames.json gives the frame rate, or is refused by name") {
    CHECK(*read_frames_json(R"({"fps": 24})", 3) == 24);
    auto t = read_frames_json(R"({"timestamps": [1.0, 1.5, 2.0, 2.5]})", 4);
    REQUIRE(t.ok());
    CHECK(*t == Approx(2.0));
    for (const char* bad : {R"({"fps": 0})", R"({"fps": 24, "timestamps": [0, 0.5, 1]})",
                            R"({"timestamps": [0, 0.5, 1.5]})", R"({"timestamps": [0, 1]})",
                            R"({"speed": 2})", R"({})", R"([24])", R"({"fps": )"}) {
        INFO(bad);
        auto r = read_frames_json(bad, 3);
        REQUIRE(!r.ok());
        CHECK(r.error().refusal == refusal::kBadFramesJson);
    }
}

TEST_CASE("frames.json: splat4d's manifest gives the clock, its files checked against the frames") {
    const std::vector<std::string> files{"frame_0000.splat", "frame_0001.splat", "frame_0002.splat"};
    const std::string manifest = R"({"fps": 20, "count": 3, "num_splats": 300000, "frames": [
        {"file": "frame_0000.splat", "timestamp": 0.0},
        {"file": "frame_0001.splat", "timestamp": 0.05},
        {"file": "frame_0002.splat", "timestamp": 0.1}]})";
    auto fps = read_frames_json(manifest, 3, "frames.json", files);
    REQUIRE(fps.ok());
    CHECK(*fps == Approx(20));
    const std::vector<std::string> reordered{"frame_0000.splat", "frame_0002.splat",
                                             "frame_0001.splat"};
    for (const auto& [text, names] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {manifest, reordered},                                    // a file out of place
             {R"({"fps": 20, "count": 4})", files},                     // count is not 3
             {R"({"fps": 20, "num_splats": 1.5})", files},              // not a whole number
             {R"({"frames": [{"file": "frame_0000.splat", "timestamp": 0.0}]})", files},
             {R"({"frames": [{"timestamp": 0}, {"timestamp": 0.05}, {"timestamp": 0.2}]})", files},
             {R"({"frames": [{"file": "a", "size": 1}, {}, {}]})", {}},  // an unknown field
             {R"({"fps": 10, "frames": [{"timestamp": 0}, {"timestamp": 0.05}, {"timestamp": 0.1}]})",
              files}}) {
        INFO(text);
        auto r = read_frames_json(text, 3, "frames.json", names);
        REQUIRE(!r.ok());
        CHECK(r.error().refusal == refusal::kBadFramesJson);
    }
}

TEST_CASE("write_splat: the PLY export's attributes within .splat's precision, sorted as upstream") {
    auto cloud = read_splat(splat_file(splat_frame(64, 0, 9)));
    REQUIRE(cloud.ok());
    PlyCloud ply = *cloud;  // what extract's PLY holds: normalized rotations
    const auto bytes = write_splat(ply);
    REQUIRE(bytes.size() == 64 * kSplatBytes);
    auto back = read_splat(bytes);
    REQUIRE(back.ok());
    // Upstream's order, by the exported cloud's own key: exp(Σ log scale) × opacity, largest first.
    auto key_of = [&](std::size_t j) {
        for (std::size_t i = 0; i < ply.count; ++i)
            if (std::equal(&ply.position[3 * i], &ply.position[3 * i + 3], &back->position[3 * j]))
                return double(ply.scale[3 * i]) * ply.scale[3 * i + 1] * ply.scale[3 * i + 2] *
                       ply.color[4 * i + 3];
        FAIL("splat " << j << " is not in the cloud");
        return 0.0;
    };
    for (std::size_t j = 1; j < back->count; ++j) CHECK(key_of(j - 1) >= key_of(j));
    auto cmp = compare_clouds(ply, *back, {CompareMatch::position});
    REQUIRE(cmp.ok());
    for (const AttributeError& e : cmp->attributes) {
        INFO(e.name << " max " << e.max);
        if (e.name == "pos") CHECK(e.max == 0);
        if (e.name == "scale_rel") CHECK(e.max < 1e-6);
        if (e.name == "rgb" || e.name == "alpha") CHECK(e.max <= 1.0 / 255 + 1e-6);
        if (e.name == "rot") CHECK(e.max <= 2.0 / 128);
    }
}

TEST_CASE("write_glb: tinygltf loads it, the extension is declared, attributes are the PLY's") {
    PlyCloud c;
    c.count = 3;
    c.sh_degree = 1;
    c.position = {0, 1, 2, -1, 0.5f, 3, 2, -2, 0};
    c.normal.assign(9, 0);
    c.scale = {0.1f, 0.2f, 0.3f, 1, 1, 1, 0.05f, 0.5f, 2};
    c.rotation = {0, 0, 0, 2, 0.5f, 0.5f, 0.5f, 0.5f, 1, 0, 0, 0};
    c.color = {0.2f, 0.4f, 0.6f, 0.9f, 1.2f, 0, 0.5f, 0.5f, 0, 0, 1, 0.1f};
    for (int i = 0; i < 3 * 9; ++i) c.sh.push_back(0.01f * float(i) - 0.1f);
    const auto glb = cli::write_glb(c);
    CHECK(cli::write_glb(c) == glb);  // deterministic

    tinygltf::Model m;
    tinygltf::TinyGLTF loader;
    std::string err, warn;
    REQUIRE(loader.LoadBinaryFromMemory(&m, &err, &warn, glb.data(),
                                        static_cast<unsigned>(glb.size())));
    INFO(err << warn);
    CHECK(m.asset.version == "2.0");
    CHECK(std::count(m.extensionsUsed.begin(), m.extensionsUsed.end(),
                     std::string("KHR_gaussian_splatting")) == 1);
    REQUIRE(m.meshes.size() == 1);
    REQUIRE(m.meshes[0].primitives.size() == 1);
    const tinygltf::Primitive& p = m.meshes[0].primitives[0];
    CHECK(p.mode == TINYGLTF_MODE_POINTS);
    REQUIRE(p.extensions.count("KHR_gaussian_splatting") == 1);
    const tinygltf::Value& ext = p.extensions.at("KHR_gaussian_splatting");
    CHECK(ext.Get("kernel").Get<std::string>() == "ellipse");
    CHECK(ext.Get("colorSpace").Get<std::string>() == "srgb_rec709_display");

    auto column = [&](const std::string& name, int type) {
        REQUIRE(p.attributes.count(name) == 1);
        const tinygltf::Accessor& a = m.accessors[static_cast<std::size_t>(p.attributes.at(name))];
        CHECK(a.componentType == TINYGLTF_COMPONENT_TYPE_FLOAT);
        CHECK(a.type == type);
        CHECK(a.count == 3);
        const tinygltf::BufferView& v = m.bufferViews[static_cast<std::size_t>(a.bufferView)];
        const std::size_t n = a.count * static_cast<std::size_t>(tinygltf::GetNumComponentsInType(
                                            static_cast<std::uint32_t>(type)));
        std::vector<float> out(n);
        std::memcpy(out.data(), m.buffers[0].data.data() + v.byteOffset + a.byteOffset, n * 4);
        return out;
    };
    CHECK(column("POSITION", TINYGLTF_TYPE_VEC3) == c.position);
    const auto scale = column("KHR_gaussian_splatting:SCALE", TINYGLTF_TYPE_VEC3);
    const auto rot = column("KHR_gaussian_splatting:ROTATION", TINYGLTF_TYPE_VEC4);
    const auto opacity = column("KHR_gaussian_splatting:OPACITY", TINYGLTF_TYPE_SCALAR);
    const auto dc = column("KHR_gaussian_splatting:SH_DEGREE_0_COEF_0", TINYGLTF_TYPE_VEC3);
    const auto color0 = column("COLOR_0", TINYGLTF_TYPE_VEC4);
    for (std::size_t i = 0; i < 3; ++i) {
        for (int k = 0; k < 3; ++k) {
            CHECK(scale[3 * i + k] == c.scale[3 * i + k]);  // linear, as the ratified text says
            CHECK(dc[3 * i + k] == Approx((c.color[4 * i + k] - 0.5) / kShC0));
            CHECK(color0[4 * i + k] == std::clamp(c.color[4 * i + k], 0.0f, 1.0f));
        }
        CHECK(opacity[i] == c.color[4 * i + 3]);
        CHECK(color0[4 * i + 3] == c.color[4 * i + 3]);
        double norm = 0;
        for (int k = 0; k < 4; ++k) norm += double(c.rotation[4 * i + k]) * c.rotation[4 * i + k];
        for (int k = 0; k < 4; ++k)  // x y z w, unit
            CHECK(rot[4 * i + k] == Approx(c.rotation[4 * i + k] / std::sqrt(norm)));
    }
    // Degree 1: coefficient n of red, green, blue (the cloud: red's 3, green's 3, blue's 3).
    for (int coef = 0; coef < 3; ++coef) {
        const auto sh = column("KHR_gaussian_splatting:SH_DEGREE_1_COEF_" + std::to_string(coef),
                               TINYGLTF_TYPE_VEC3);
        for (std::size_t i = 0; i < 3; ++i)
            for (int ch = 0; ch < 3; ++ch)
                CHECK(sh[3 * i + ch] == c.sh[i * 9 + ch * 3 + coef]);
    }
    CHECK(p.attributes.count("KHR_gaussian_splatting:SH_DEGREE_2_COEF_0") == 0);
}
