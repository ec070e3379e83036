// The 3DGS PLY reader and writer (fourdgs/tools/ply.hpp): the standard property set both ways, and
// every malformed shape refused by name before anything is allocated.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "fourdgs/tools/ply.hpp"
#include "fourdgs/tools/splat_formats.hpp"
#include "support/ply_clouds.hpp"
#include "support/scratch_files.hpp"

using namespace fourdgs;

namespace {

PlyCloud random_cloud(std::size_t n, int degree, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1, 1), pos(0.05f, 0.95f);
    PlyCloud c;
    c.count = n;
    c.sh_degree = degree;
    for (std::size_t i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) {
            c.position.push_back(u(rng));
            c.normal.push_back(0);
            c.scale.push_back(0.01f + 0.05f * pos(rng));
        }
        for (int k = 0; k < 4; ++k) c.rotation.push_back(u(rng));
        for (int k = 0; k < 4; ++k) c.color.push_back(pos(rng));
        for (int k = 0; k < c.sh_per_gaussian(); ++k) c.sh.push_back(u(rng));
    }
    return c;
}

// A PLY built by hand: the header lines given, then `body` bytes.
std::vector<std::uint8_t> ply_bytes(const std::string& header, std::size_t body) {
    std::vector<std::uint8_t> b(header.begin(), header.end());
    b.resize(b.size() + body, 0);
    return b;
}

std::string header_with(const std::vector<std::string>& props, std::uint64_t n,
                        const std::string& format = "binary_little_endian") {
    std::string h = "ply\nformat " + format + " 1.0\nelement vertex " + std::to_string(n) + "\n";
    for (const auto& p : props) h += "property float " + p + "\n";
    return h + "end_header\n";
}

std::string refusal_of(const std::vector<std::uint8_t>& bytes) {
    auto r = read_ply(bytes);
    return r.ok() ? std::string("(accepted)") : r.error().refusal;
}

}  // namespace

TEST_CASE("PLY: write then read keeps every attribute, in the standard property order") {
    for (int degree = 0; degree <= 3; ++degree) {
        const PlyCloud in = random_cloud(17, degree, 7 + degree);
        auto bytes = write_ply(in);
        REQUIRE(bytes.ok());
        // The header names exactly the standard properties, in order, all float.
        std::string text(bytes->begin(), bytes->begin() + 4096 > bytes->end() ? bytes->end() : bytes->begin() + 4096);
        std::string expected = "element vertex 17\n";
        for (const auto& name : ply_property_names(degree)) expected += "property float " + name + "\n";
        CHECK(text.find(expected + "end_header\n") != std::string::npos);
        CHECK(ply_property_names(degree).size() == 17u + 3u * ((degree + 1) * (degree + 1) - 1));

        auto out = read_ply(*bytes);
        REQUIRE(out.ok());
        REQUIRE(out->count == in.count);
        REQUIRE(out->sh_degree == degree);
        for (std::size_t i = 0; i < in.position.size(); ++i) CHECK(out->position[i] == in.position[i]);
        for (std::size_t i = 0; i < in.rotation.size(); ++i) CHECK(out->rotation[i] == in.rotation[i]);
        for (std::size_t i = 0; i < in.scale.size(); ++i)
            CHECK(out->scale[i] == Approx(in.scale[i]).epsilon(1e-6));
        for (std::size_t i = 0; i < in.color.size(); ++i)
            CHECK(out->color[i] == Approx(in.color[i]).margin(1e-6));
        for (std::size_t i = 0; i < in.sh.size(); ++i) CHECK(out->sh[i] == in.sh[i]);
    }
}

TEST_CASE("PLY: rot_0 is w, opacity is a logit, scale a log, f_dc through C0") {
    PlyCloud c;
    c.count = 1;
    c.position = {1, 2, 3};
    c.scale = {1, static_cast<float>(std::exp(1.0)), 0.5f};
    c.rotation = {0.1f, 0.2f, 0.3f, 0.9f};  // xyzw
    c.color = {0.5f, 1.0f, 0.0f, 0.5f};
    auto bytes = write_ply(c);
    REQUIRE(bytes.ok());
    const std::string s(bytes->begin(), bytes->end());
    const std::size_t body = s.find("end_header\n") + 11;
    float v[17];
    REQUIRE(bytes->size() == body + sizeof v);
    std::memcpy(v, bytes->data() + body, sizeof v);
    CHECK(v[6] == Approx(0.0));                        // f_dc_0: rgb 0.5
    CHECK(v[7] == Approx(0.5 / kShC0));                // f_dc_1: rgb 1
    CHECK(v[9] == Approx(0.0).margin(1e-6));           // opacity 0.5 -> logit 0
    CHECK(v[10] == Approx(0.0).margin(1e-6));          // scale 1 -> log 0
    CHECK(v[11] == Approx(1.0));                       // scale e -> 1
    CHECK(v[13] == Approx(0.9));                       // rot_0 = w
    CHECK(v[14] == Approx(0.1));                       // rot_1 = x
}

TEST_CASE("PLY: malformed files are refused by name") {
    const auto props = ply_property_names(0);
    const std::size_t stride = props.size() * 4;
    CHECK(refusal_of(ply_bytes("not a ply\n", 0)) == "ply-not-ply");
    CHECK(refusal_of(ply_bytes(header_with(props, 1, "ascii"), 0)) == "ply-ascii-format");
    CHECK(refusal_of(ply_bytes(header_with(props, 1, "binary_big_endian"), stride)) == "ply-big-endian");
    CHECK(refusal_of(ply_bytes(header_with(props, 2), stride * 2 - 1)) == "ply-truncated-body");
    CHECK(refusal_of(ply_bytes(header_with(props, 2), stride * 2)) == "(accepted)");
    auto missing = props;
    missing.erase(missing.begin() + 9);  // opacity
    CHECK(refusal_of(ply_bytes(header_with(missing, 1), stride)) == "ply-missing-property");
    auto twice = props;
    twice.push_back("x");
    CHECK(refusal_of(ply_bytes(header_with(twice, 1), stride + 4)) == "ply-duplicate-property");
    auto five = props;
    for (int k = 0; k < 5; ++k) five.push_back("f_rest_" + std::to_string(k));
    CHECK(refusal_of(ply_bytes(header_with(five, 1), stride + 20)) == "ply-sh-count");
    std::string dbl = header_with(props, 1);
    dbl.replace(dbl.find("property float x"), 16, "property double x");
    CHECK(refusal_of(ply_bytes(dbl, stride + 4)) == "ply-property-type");
    CHECK(refusal_of(ply_bytes("ply\nformat binary_little_endian 1.0\nelement vertex 1\n", 0)) ==
          "ply-bad-header");
}

TEST_CASE("PLY: a lying vertex count is refused before anything is allocated") {
    const auto props = ply_property_names(3);
    auto r = read_ply(ply_bytes(header_with(props, 4000000000000ull), 64));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().refusal == "ply-truncated-body");
}

TEST_CASE("PLY: unknown scalar properties are skipped by their size") {
    auto props = ply_property_names(0);
    std::string h = header_with(props, 1);
    h.replace(h.find("end_header"), 0, "property uchar red\nproperty double extra\n");
    PlyCloud c = random_cloud(1, 0, 3);
    auto good = write_ply(c);
    REQUIRE(good.ok());
    const std::string s(good->begin(), good->end());
    std::vector<std::uint8_t> bytes(h.begin(), h.end());
    bytes.insert(bytes.end(), good->begin() + static_cast<long>(s.find("end_header\n") + 11), good->end());
    bytes.resize(bytes.size() + 9, 0);
    auto r = read_ply(bytes);
    REQUIRE(r.ok());
    CHECK(r->position[0] == c.position[0]);
}

TEST_CASE("PLY: a reconstructed frame becomes a cloud with its SH degree capped") {
    Frame f;
    f.count = 1;
    f.center = {1, 2, 3};
    f.scale = {0.1f, 0.2f, 0.3f};
    f.rotation = {0, 0, 0, 1};
    f.color = {0.2f, 0.4f, 0.6f, 0.8f};
    f.sh_degree = 2;
    f.sh.resize(3 * 8);
    for (int c = 0; c < 3; ++c)
        for (int k = 0; k < 8; ++k) f.sh[c * 8 + k] = static_cast<std::uint8_t>(c * 8 + k);
    PlyCloud full = ply_from_frame(f, 3);
    CHECK(full.sh_degree == 2);
    CHECK(full.sh[8] == sh_coefficient(8));  // green's first coefficient
    PlyCloud one = ply_from_frame(f, 1);
    REQUIRE(one.sh_degree == 1);
    REQUIRE(one.sh.size() == 9u);
    CHECK(one.sh[3] == sh_coefficient(8));   // green's band 1 starts where green starts
    CHECK(one.sh[6] == sh_coefficient(16));
    CHECK(one.position == std::vector<float>{1, 2, 3});
}

using test::check_same_cloud;
using test::used_cloud;

TEST_CASE("PLY: a file read in blocks into a used cloud is read_ply's, SH bands included") {
    test::TempDir dir("fourdgs-ply-into");
    const std::string path = (dir.path / "f.ply").string();
    // 2,500 vertices of degree 3 (248 bytes each): three of the reader's 256 KiB blocks, the last
    // short.
    PlyCloud in = random_cloud(2500, 3, 21);
    for (std::size_t k = 0; k < in.normal.size(); ++k) in.normal[k] = 0.25f * float(k % 5);
    auto deg3 = write_ply(in);
    REQUIRE(deg3.ok());
    // No normals, degree 1, an unknown property: the reader's zero normals overwrite stale ones.
    std::vector<std::string> props = {"x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2"};
    for (int k = 0; k < 9; ++k) props.push_back("f_rest_" + std::to_string(k));
    for (const char* p : {"opacity", "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2",
                          "rot_3", "extra"})
        props.emplace_back(p);
    std::string h = header_with(props, 450);
    std::vector<std::uint8_t> deg1(h.begin(), h.end());
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1, 1);
    for (std::size_t k = 0; k < 450 * props.size(); ++k) {
        const float v = u(rng);
        const auto* b = reinterpret_cast<const std::uint8_t*>(&v);
        deg1.insert(deg1.end(), b, b + 4);
    }
    PlyCloud into = used_cloud();
    for (const auto* bytes : {&*deg3, &deg1, &*deg3, &*deg3}) {  // other shapes, then twice
        test::write_bytes(path, *bytes);
        auto want = read_ply(*bytes);
        REQUIRE(want.ok());
        REQUIRE(read_ply_file_into(path, into).ok());
        check_same_cloud(into, *want);
    }
    PlyCloud framed = used_cloud();
    REQUIRE(read_frame_file_into(path, framed).ok());
    check_same_cloud(framed, into);
    auto whole = read_ply_file(path);
    REQUIRE(whole.ok());
    check_same_cloud(*whole, into);
    CHECK(into.sh.size() == 2500u * 45u);

    SECTION("a damaged header is refused as read_ply refuses it, with the path") {
        std::vector<std::uint8_t> bad = *deg3;
        const std::string s(bad.begin(), bad.end());
        const std::size_t at = s.find("property float f_rest_7\n");
        REQUIRE(at != std::string::npos);
        bad[at + 9] = 'g';  // "property gloat f_rest_7": an unknown type, refused at its line
        test::write_bytes(path, bad);
        auto want = read_ply(bad);
        REQUIRE_FALSE(want.ok());
        CHECK(want.error().refusal == "ply-bad-header");
        CHECK(want.error().offset == at);
        auto st = read_frame_file_into(path, into);
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().refusal == want.error().refusal);
        CHECK(st.error().kind == want.error().kind);
        CHECK(st.error().offset == want.error().offset);
        CHECK(st.error().message == path + ": " + want.error().message);
        check_same_cloud(into, *whole);  // refused before anything was sized
    }
    SECTION("a truncated body is refused before anything is sized") {
        PlyCloud before = used_cloud();
        std::vector<std::uint8_t> cut = *deg3;
        cut.resize(cut.size() - 3);
        test::write_bytes(path, cut);
        auto want = read_ply(cut);
        REQUIRE_FALSE(want.ok());
        auto st = read_ply_file_into(path, before);
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().refusal == "ply-truncated-body");
        CHECK(st.error().offset == cut.size());
        CHECK(st.error().offset == want.error().offset);
        CHECK(st.error().message == path + ": " + want.error().message);
        check_same_cloud(before, used_cloud());
    }
    SECTION("a lying vertex count is refused before anything is sized") {
        PlyCloud before = used_cloud();
        test::write_bytes(path,
                          ply_bytes(header_with(ply_property_names(3), 4000000000000ull), 64));
        auto st = read_ply_file_into(path, before);
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().refusal == "ply-truncated-body");
        check_same_cloud(before, used_cloud());
    }
    SECTION("an empty file and a missing one") {
        test::write_bytes(path, {});
        auto st = read_ply_file_into(path, into);
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().refusal == "ply-not-ply");
        CHECK(st.error().offset == 0u);
        const std::string none = (dir.path / "none.ply").string();
        auto missing = read_ply_file_into(none, into);
        REQUIRE_FALSE(missing.ok());
        CHECK(missing.error().kind == ErrorKind::io);
        CHECK(missing.error().message.rfind(none + ": ", 0) == std::string::npos);  // named once
    }
}
