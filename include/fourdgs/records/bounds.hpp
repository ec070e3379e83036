// fourdgs/records/bounds.hpp — the §5.3 bound grammar and exact decimal comparison of two bounds.
// Pure functions of strings; nothing here reads a record.
//
// Part of records.hpp (the umbrella states the conventions every parser and writer follows).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

namespace fourdgs {

// Whether `s` is spelled by the §5.3 bound grammar: [sign] significand [exponent], ASCII digits
// only, no whitespace, separators, infinities or NaN. Hand-written on purpose (M019, M022): no
// host-library number parser agrees with the grammar.
constexpr bool is_bound_spelling(std::string_view s) noexcept {
    std::size_t i = 0, n = s.size();
    auto digit = [&](std::size_t k) { return k < n && s[k] >= '0' && s[k] <= '9'; };
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    std::size_t int_digits = 0, frac_digits = 0;
    while (digit(i)) ++i, ++int_digits;
    if (i < n && s[i] == '.') {
        ++i;
        while (digit(i)) ++i, ++frac_digits;
    }
    if (int_digits == 0 && frac_digits == 0) return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
        std::size_t exp_digits = 0;
        while (digit(i)) ++i, ++exp_digits;
        if (exp_digits == 0) return false;
    }
    return i == n;
}

namespace detail {

// A signed arbitrary-precision integer as decimal digits: the exponent of a bound may have any
// number of digits, so it is never converted to a machine integer. `mag` has no leading zeros;
// zero is "" with neg false.
struct BigInt {
    bool neg = false;
    std::string mag;
};

inline int compare_mag(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
    int c = a.compare(b);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

inline std::string add_mag(const std::string& a, const std::string& b) {
    std::string r;
    int carry = 0;
    for (std::size_t i = 0; i < std::max(a.size(), b.size()) || carry; ++i) {
        int d = carry;
        if (i < a.size()) d += a[a.size() - 1 - i] - '0';
        if (i < b.size()) d += b[b.size() - 1 - i] - '0';
        r.push_back(static_cast<char>('0' + d % 10));
        carry = d / 10;
    }
    std::reverse(r.begin(), r.end());
    return r;
}

// a - b for |a| >= |b|.
inline std::string sub_mag(const std::string& a, const std::string& b) {
    std::string r;
    int borrow = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        int d = (a[a.size() - 1 - i] - '0') - borrow;
        if (i < b.size()) d -= b[b.size() - 1 - i] - '0';
        borrow = d < 0;
        if (d < 0) d += 10;
        r.push_back(static_cast<char>('0' + d));
    }
    while (!r.empty() && r.back() == '0') r.pop_back();
    std::reverse(r.begin(), r.end());
    return r;
}

inline BigInt add(const BigInt& a, const BigInt& b) {
    if (a.neg == b.neg) return BigInt{a.neg, add_mag(a.mag, b.mag)};
    int c = compare_mag(a.mag, b.mag);
    if (c == 0) return BigInt{};
    if (c > 0) return BigInt{a.neg, sub_mag(a.mag, b.mag)};
    return BigInt{b.neg, sub_mag(b.mag, a.mag)};
}

inline int compare(const BigInt& a, const BigInt& b) {
    if (a.neg != b.neg) return a.neg ? -1 : 1;
    int c = compare_mag(a.mag, b.mag);
    return a.neg ? -c : c;
}

inline BigInt big_from(std::int64_t v) {
    BigInt r;
    r.neg = v < 0;
    std::uint64_t m = r.neg ? ~static_cast<std::uint64_t>(v) + 1 : static_cast<std::uint64_t>(v);
    r.mag = m == 0 ? std::string() : std::to_string(m);
    return r;
}

// A grammar-valid bound as sign * 0.D * 10^E with D free of leading and trailing zeros; D empty
// means the value zero (whatever the sign or exponent).
struct DecimalValue {
    bool neg = false;
    std::string digits;
    BigInt exponent;
};

inline DecimalValue decimal_value(std::string_view s) {
    DecimalValue v;
    std::size_t i = 0;
    if (s[i] == '+' || s[i] == '-') v.neg = s[i++] == '-';
    std::string all;
    std::int64_t int_digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') all.push_back(s[i++]), ++int_digits;
    if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') all.push_back(s[i++]);
    }
    BigInt exp;
    if (i < s.size()) {  // 'e' or 'E'
        ++i;
        if (s[i] == '+' || s[i] == '-') exp.neg = s[i++] == '-';
        std::size_t first = i;
        while (first < s.size() && s[first] == '0') ++first;
        exp.mag = std::string(s.substr(first));
        if (exp.mag.empty()) exp.neg = false;
    }
    std::size_t lead = all.find_first_not_of('0');
    if (lead == std::string::npos) return DecimalValue{};  // zero: sign and exponent carry nothing
    std::size_t last = all.find_last_not_of('0');
    v.digits = all.substr(lead, last - lead + 1);
    // Moving the point in front of the first significant digit adds int_digits - lead.
    v.exponent = add(exp, big_from(int_digits - static_cast<std::int64_t>(lead)));
    return v;
}

inline int compare_magnitude(const DecimalValue& a, const DecimalValue& b) {
    int e = compare(a.exponent, b.exponent);
    if (e != 0) return e;
    int c = a.digits.compare(b.digits);  // a shorter prefix is the smaller 0.D
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace detail

// Compares two bounds as exact decimal numbers: -1, 0 or 1 for a < b, a == b, a > b (§5.3).
// Works on digits only — never binary floating point, never a string as long as an exponent's
// value — so "5e-05" == "0.00005" == "+0.00005", "-0" == "0" == "0e999999999999999999999" and
// exponents of any length compare exactly. Precondition: both spelled by the grammar; a string
// that is not orders before every valid bound (and equal to other invalid strings), which keeps
// the order total without giving an invalid spelling a value.
inline int compare_bounds(std::string_view a, std::string_view b) {
    bool va = is_bound_spelling(a), vb = is_bound_spelling(b);
    if (!va || !vb) return va == vb ? 0 : (va ? 1 : -1);
    detail::DecimalValue x = detail::decimal_value(a), y = detail::decimal_value(b);
    bool xz = x.digits.empty(), yz = y.digits.empty();
    int sx = xz ? 0 : (x.neg ? -1 : 1), sy = yz ? 0 : (y.neg ? -1 : 1);
    if (sx != sy) return sx < sy ? -1 : 1;
    if (sx == 0) return 0;
    int m = detail::compare_magnitude(x, y);
    return sx > 0 ? m : -m;
}

}  // namespace fourdgs
