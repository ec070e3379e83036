// portable.hpp: the library's own <charconv> spells and parses numbers exactly as the standard
// library does, and its acos / sin are correctly rounded, so the same file gives the same
// numbers on every platform (glibc, musl, a browser's WebAssembly).
#include <catch2/catch.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "fourdgs/pose.hpp"
#include "fourdgs/portable.hpp"

using namespace fourdgs;

namespace {

std::uint64_t splitmix(std::uint64_t& s) {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

template <class T>
std::string ours(T v) {
    char buf[64];
    const auto r = shortest_to_chars(buf, buf + sizeof buf, v);
    REQUIRE(r.ec == std::errc());
    return std::string(buf, r.ptr);
}

// Doubles and floats of every kind: random bit patterns (every exponent), short decimals,
// integers, powers of two (where the rounding interval is lopsided), subnormals, the extremes.
std::vector<double> sample_doubles() {
    std::vector<double> v = {0.0, -0.0, 1.0, 0.1, 0.05, 2.5e-07, 1234567.0, 1e+300, 1e22, 1e21,
                             1e-5, 1.5e-5, 123456789012345678.0, 5e-324, 2.2250738585072014e-308,
                             std::numeric_limits<double>::max(), 0.3, 2.0 / 3, 100.0, 1e15, 1e16,
                             9007199254740993.0, 0.000123, 4.35, 1.0 / 255};
    for (int e = -1074; e <= 1023; ++e) v.push_back(std::ldexp(1.0, e));
    std::uint64_t s = 20261203;
    for (int i = 0; i < 30000; ++i) {
        std::uint64_t bits = splitmix(s);
        double d;
        std::memcpy(&d, &bits, sizeof d);
        if (std::isfinite(d)) v.push_back(d);
    }
    for (int i = 0; i < 5000; ++i) {  // short decimals: k digits at 10^e
        const int digits = 1 + int(splitmix(s) % 17), e = int(splitmix(s) % 60) - 30;
        std::uint64_t m = splitmix(s) % 100000000000000000ULL;
        for (int d = 17; d > digits; --d) m /= 10;
        v.push_back(std::strtod((std::to_string(m) + "e" + std::to_string(e)).c_str(), nullptr));
    }
    return v;
}

}  // namespace

TEST_CASE("shortest_to_chars reads back exactly and spells pinned values as to_chars does") {
    // The spellings docs/conformance.md pins (the canonical form's numbers).
    CHECK(ours(0.05) == "0.05");
    CHECK(ours(2.5e-07) == "2.5e-07");
    CHECK(ours(1234567.0) == "1234567");
    CHECK(ours(1e+300) == "1e+300");
    CHECK(ours(0.1f) == "0.1");
    CHECK(ours(static_cast<double>(0.1f)) == "0.10000000149011612");
    CHECK(ours(-0.0) == "-0");
    CHECK(ours(std::numeric_limits<double>::infinity()) == "inf");
    CHECK(ours(-std::numeric_limits<float>::infinity()) == "-inf");
    CHECK(ours(std::numeric_limits<double>::quiet_NaN()) == "nan");
    CHECK(ours(5e-324) == "5e-324");
    CHECK(ours(1e22) == "1e+22");
    CHECK(ours(1.5e-5) == "1.5e-05");
    CHECK(ours(1e-5) == "1e-05");
    CHECK(ours(0.001) == "0.001");  // a tie in length goes to fixed ("1e-03")
    CHECK(ours(0.0001) == "1e-04");
    CHECK(ours(134217728.0f) == "134217728");  // 2^27: as long as "134217730", and exact
    CHECK(ours(std::numeric_limits<double>::max()) == "1.7976931348623157e+308");
    CHECK(ours(std::numeric_limits<float>::max()) == "3.4028235e+38");
    for (double d : sample_doubles()) {
        const std::string s = ours(d);
        REQUIRE(std::strtod(s.c_str(), nullptr) == d);
        const float f = static_cast<float>(d);
        if (std::isfinite(f)) REQUIRE(std::strtof(ours(f).c_str(), nullptr) == f);
    }
    char small[4];
    CHECK(shortest_to_chars(small, small + sizeof small, 0.125).ec == std::errc::value_too_large);
}

#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
TEST_CASE("shortest_to_chars gives the standard library's bytes for every double and float") {
    std::size_t checked = 0;
    for (double d : sample_doubles()) {
        char buf[64];
        const auto r = std::to_chars(buf, buf + sizeof buf, d);
        REQUIRE(ours(d) == std::string(buf, r.ptr));
        const float f = static_cast<float>(d);
        const auto rf = std::to_chars(buf, buf + sizeof buf, f);
        REQUIRE(ours(f) == std::string(buf, rf.ptr));
        ++checked;
    }
    std::uint64_t s = 7;
    for (int i = 0; i < 30000; ++i) {  // float bit patterns, every exponent
        const std::uint32_t bits = static_cast<std::uint32_t>(splitmix(s));
        float f;
        std::memcpy(&f, &bits, sizeof f);
        if (!std::isfinite(f)) continue;
        char buf[64];
        const auto r = std::to_chars(buf, buf + sizeof buf, f);
        REQUIRE(ours(f) == std::string(buf, r.ptr));
    }
    CHECK(checked > 30000);
}

TEST_CASE("general_from_chars parses as std::from_chars does") {
    const char* texts[] = {"0.5", "-0.5", "+0.5", " 0.5", "1e5", "1e", "1e+", "1.", ".5", ".",
                           "-", "", "inf", "-inf", "infinity", "INF", "nan", "-nan", "nan(123)",
                           "0x1p3", "1e400", "1e-400", "-1e400", "12abc", "3.25e-2x",
                           "00012", "1E3", "2.2250738585072011e-308", "4.9e-324", "1_000"};
    for (const char* t : texts) {
        const char* end = t + std::strlen(t);
        double a = -7, b = -7;
        const auto ra = general_from_chars(t, end, a);
        const auto rb = std::from_chars(t, end, b);
        INFO(t);
        CHECK(ra.ec == rb.ec);
        CHECK(ra.ptr == rb.ptr);
        if (std::isnan(b)) CHECK(std::isnan(a));
        else CHECK(fourdgs::bit_cast<std::uint64_t>(a) == fourdgs::bit_cast<std::uint64_t>(b));
    }
    for (double d : sample_doubles()) {  // every shortest spelling parses back
        const std::string s = ours(d);
        double back = 0;
        REQUIRE(general_from_chars(s.data(), s.data() + s.size(), back).ec == std::errc());
        REQUIRE(back == d);
    }
}
#endif

TEST_CASE("correctly_rounded_acos and sin give pinned bits on every platform") {
    // Correctly rounded values (pi/3, pi/2, pi/4, sin 1, sin 0.5, ...), as hex, so that the test
    // says the same on every platform: the WebAssembly build runs it too.
    CHECK(correctly_rounded_acos(0.5) == 0x1.0c152382d7366p+0);
    CHECK(correctly_rounded_acos(0.0) == 0x1.921fb54442d18p+0);
    CHECK(correctly_rounded_acos(-1.0) == 0x1.921fb54442d18p+1);
    CHECK(correctly_rounded_acos(1.0) == 0);
    CHECK(correctly_rounded_acos(std::sqrt(0.5)) == 0x1.921fb54442d18p-1);
    CHECK(correctly_rounded_acos(0.9995) == 0x1.031088621c93ep-5);
    CHECK(correctly_rounded_acos(-0.3) == 0x1.e0200bbc96ad8p+0);
    CHECK(std::isnan(correctly_rounded_acos(1.0000000000000002)));
    CHECK(std::isnan(correctly_rounded_acos(std::numeric_limits<double>::quiet_NaN())));
    CHECK(correctly_rounded_sin(1.0) == 0x1.aed548f090ceep-1);
    CHECK(correctly_rounded_sin(0.5) == 0x1.eaee8744b05f0p-2);
    CHECK(correctly_rounded_sin(0x1.921fb54442d18p+0) == 1.0);
    CHECK(correctly_rounded_sin(1e-9) == 1e-9);  // below 2^-27: x itself
    CHECK(correctly_rounded_sin(-0.25) == -0x1.faaeed4f31577p-3);
    CHECK(correctly_rounded_sin(0.0) == 0.0);
}

TEST_CASE("correctly_rounded_acos and sin round the exact value to nearest") {
    // Against a long double reference, where the platform's long double carries more bits than a
    // double: away from a rounding boundary (a margin far above the reference's own error) the
    // correctly rounded double is the reference's rounding.
    if (std::numeric_limits<long double>::digits < 64) return;
    std::uint64_t s = 99;
    std::size_t compared = 0, platform_differs = 0;
    auto decisive = [](long double ref) {
        const double r = static_cast<double>(ref);
        const long double ulp = std::nextafter(std::fabs(r), 1e300) - std::fabs(r);
        const long double off = std::fabs(ref - static_cast<long double>(r)) / ulp;
        return off < 0.49L;  // not within 1% of an ulp of a midpoint
    };
    for (int i = 0; i < 100000; ++i) {
        const double u = static_cast<double>(splitmix(s) >> 11) * 0x1p-53;
        const double x = 2 * u - 1;  // acos over [-1, 1]
        const long double ra = std::acos(static_cast<long double>(x));
        if (decisive(ra)) {
            REQUIRE(correctly_rounded_acos(x) == static_cast<double>(ra));
            ++compared;
            platform_differs += correctly_rounded_acos(x) != std::acos(x);
        }
        const double y = 2 * u;  // sin over [0, 2]
        const long double rs = std::sin(static_cast<long double>(y));
        if (decisive(rs)) {
            REQUIRE(correctly_rounded_sin(y) == static_cast<double>(rs));
            ++compared;
            platform_differs += correctly_rounded_sin(y) != std::sin(y);
        }
    }
    CHECK(compared > 190000);
    // The platform's libm may round otherwise now and then (musl often, glibc rarely).
    UNSCOPED_INFO("the platform's acos/sin differ on " << platform_differs << " of " << compared);
}

TEST_CASE("slerp between audio and track poses is the same bits on every platform (7.2)") {
    // 60 degrees about z to 100 degrees about x, a third of the way: weights from acos and sin.
    // The expected bits are the same steps with each acos and sin rounded from 300 bits
    // (mpmath), the slerp's own arithmetic in doubles.
    const Quat a{0, 0, 0.5, 0x1.bb67ae8584caap-1};
    const Quat b{0x1.8836fa2cf5039p-1, 0, 0, 0x1.491b7523c161dp-2};
    const Quat q = slerp_shortest(a, b, 1.0 / 3);
    char text[200];
    std::snprintf(text, sizeof text, "%a %a %a %a", q[0], q[1], q[2], q[3]);
    CHECK(std::string(text) ==
          "0x1.5e82e79eda9fbp-2 0x0p+0 0x1.9ffc9c7544bf7p-2 0x1.b1c8994ebbc1ep-1");
}
