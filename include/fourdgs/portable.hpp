// fourdgs/portable.hpp — what the library needs from the platform beyond the C++20 core language,
// written once so that every platform gives the same answer.
//
// Two kinds of thing live here:
//
// - Standard facilities a standard library may lack. libc++ 13 (emscripten 3.1.6's) has no
//   std::bit_cast and no floating-point std::to_chars / std::from_chars. Where the standard
//   library has them (the feature-test macros say so), these names are the standard ones;
//   otherwise they are the library's own implementations, which give the same bytes (the
//   shortest round-trip spelling, the tie resolved to fixed notation) and the same parse.
// - The two transcendental functions whose results the conformance corpus pins: the slerp of
//   poses (§5.15.4, §7.2) needs acos and sin, which C libraries round differently (glibc and
//   musl differ by ulps). correctly_rounded_acos / correctly_rounded_sin use +, -, *, / and sqrt
//   only (IEEE exact everywhere), so every platform computes the same value.
#pragma once

#include <charconv>
#include <cstring>
#include <type_traits>
#include <version>

#include "fourdgs/export.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// std::bit_cast, or the compiler builtin it is made of.
#if defined(__cpp_lib_bit_cast) && __cpp_lib_bit_cast >= 201806L
using std::bit_cast;
#else
template <class To, class From>
constexpr To bit_cast(const From& from) noexcept {
    static_assert(sizeof(To) == sizeof(From) && std::is_trivially_copyable_v<To> &&
                  std::is_trivially_copyable_v<From>);
    return __builtin_bit_cast(To, from);
}
#endif

// The library's own floating-point <charconv>, used where the standard library has none (and
// tested against the standard one where it has). Same contracts as std::to_chars(first, last,
// value) — the shortest decimal that reads back as exactly `value` in its own type, fixed or
// exponent notation, whichever is shorter, fixed on a tie; "inf", "-inf", "nan", "-nan" — and
// std::from_chars(first, last, value) with chars_format::general (no leading '+' or whitespace,
// no hex; out of range leaves `value` unchanged).
std::to_chars_result shortest_to_chars(char* first, char* last, double value);
std::to_chars_result shortest_to_chars(char* first, char* last, float value);
std::from_chars_result general_from_chars(const char* first, const char* last, double& value);

#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
inline std::to_chars_result to_chars(char* first, char* last, double value) {
    return std::to_chars(first, last, value);
}
inline std::to_chars_result to_chars(char* first, char* last, float value) {
    return std::to_chars(first, last, value);
}
inline std::from_chars_result from_chars(const char* first, const char* last, double& value) {
    return std::from_chars(first, last, value);
}
#else
inline std::to_chars_result to_chars(char* first, char* last, double value) {
    return shortest_to_chars(first, last, value);
}
inline std::to_chars_result to_chars(char* first, char* last, float value) {
    return shortest_to_chars(first, last, value);
}
inline std::from_chars_result from_chars(const char* first, const char* last, double& value) {
    return general_from_chars(first, last, value);
}
#endif

// acos(x) for x in [-1, 1] (NaN outside), and sin(x) for |x| <= 2 (the platform's std::sin
// beyond: the library never asks there), each evaluated in double-double arithmetic to within
// 2^-100 relative and rounded once: the correctly rounded result but for inputs within 2^-100
// of a rounding boundary, and the same result on every platform. Pure functions, thread-safe.
double correctly_rounded_acos(double x);
double correctly_rounded_sin(double x);

}  // namespace fourdgs
FOURDGS_PUBLIC_END
