// The library's own floating-point <charconv> and its deterministic acos / sin (portable.hpp).
//
// Built with -ffp-contract=off (CMakeLists.txt): the double-double arithmetic below relies on
// every product and sum being rounded on its own, the same on every platform.
#include "fourdgs/portable.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

namespace fourdgs {

namespace {

// ---------------------------------------------------------------------------------------------
// Shortest round-trip spelling.

template <class T>
T parse_as(const char* s) {
    if constexpr (std::is_same_v<T, float>) return std::strtof(s, nullptr);
    else return std::strtod(s, nullptr);
}

// A decimal d × 10^(exp10 - digits + 1) with `digits` significant digits, d < 10^digits.
struct Decimal {
    std::uint64_t significand = 0;
    int digits = 0;
    int exp10 = 0;  // the exponent of the first digit
};

// Whether `d` reads back as exactly `v` (T's own correctly rounded parse).
template <class T>
bool reads_back(const Decimal& d, T v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%llue%d", static_cast<unsigned long long>(d.significand),
                  d.exp10 - d.digits + 1);
    return parse_as<T>(buf) == v;
}

// The shortest decimal that reads back as |v| (finite, non-zero): for each length, the nearest
// decimal of that length (printf's correctly rounded %e); if it misses, its neighbours at that
// length, since beside a power of two the rounding interval is lopsided and the nearest decimal
// can fall on its short side while the next one lies inside the long side. Among the candidates
// of the shortest length the nearest wins, as Ryu (and so std::to_chars) chooses.
template <class T>
Decimal shortest_decimal(T v) {
    constexpr int kMaxDigits = std::numeric_limits<T>::max_digits10;
    for (int p = 1; p <= kMaxDigits; ++p) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.*e", p - 1, static_cast<double>(v));
        Decimal d;
        d.digits = p;
        const char* c = buf;
        for (; *c != 'e'; ++c)
            if (*c >= '0' && *c <= '9') d.significand = d.significand * 10 + std::uint64_t(*c - '0');
        d.exp10 = std::atoi(c + 1);
        if (reads_back(d, v)) return d;
        if (p == kMaxDigits) return d;  // max_digits10 always reads back; not reached
        for (int step : {-1, 1}) {
            Decimal n = d;
            n.significand += std::uint64_t(std::int64_t{step});
            if (reads_back(n, v)) return n;
        }
    }
    return {};
}

template <class T>
std::to_chars_result shortest(char* first, char* last, T v) {
    char out[64];
    std::size_t n = 0;
    if (std::signbit(v)) out[n++] = '-';
    if (std::isnan(v) || std::isinf(v) || v == 0) {
        const char* word = std::isnan(v) ? "nan" : std::isinf(v) ? "inf" : "0";
        for (; *word; ++word) out[n++] = *word;
    } else {
        Decimal d = shortest_decimal(std::fabs(v));
        // Normalize: no trailing zeros; a carry out of the top digit moves the exponent.
        char digits[24];
        int k = std::snprintf(digits, sizeof digits, "%llu",
                              static_cast<unsigned long long>(d.significand));
        int exp10 = d.exp10 + (k - d.digits);
        while (k > 1 && digits[k - 1] == '0') --k;
        char exp_text[8];
        const int exp_len = std::snprintf(exp_text, sizeof exp_text, "e%c%02d",
                                          exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
        const int sci_len = k + (k > 1 ? 1 : 0) + exp_len;
        const int fixed_len = exp10 >= 0 ? (k <= exp10 + 1 ? exp10 + 1 : k + 1) : 1 - exp10 + k;
        if (fixed_len <= sci_len) {
            if (exp10 < 0) {
                out[n++] = '0';
                out[n++] = '.';
                for (int i = 0; i < -exp10 - 1; ++i) out[n++] = '0';
                for (int i = 0; i < k; ++i) out[n++] = digits[i];
            } else if (k <= exp10) {
                // An integer written out: every spelling of its length is as short, and the
                // standard asks for the nearest, the value's own digits (2^27 as a float is
                // "134217728", not "134217730"). Values this large are integers.
                n += static_cast<std::size_t>(
                    std::snprintf(out + n, sizeof out - n, "%.0f", std::fabs(static_cast<double>(v))));
            } else {
                for (int i = 0; i <= exp10 || i < k; ++i) {
                    if (i == exp10 + 1) out[n++] = '.';
                    out[n++] = i < k ? digits[i] : '0';
                }
            }
        } else {
            out[n++] = digits[0];
            if (k > 1) out[n++] = '.';
            for (int i = 1; i < k; ++i) out[n++] = digits[i];
            for (int i = 0; i < exp_len; ++i) out[n++] = exp_text[i];
        }
    }
    if (static_cast<std::size_t>(last - first) < n) return {last, std::errc::value_too_large};
    std::memcpy(first, out, n);
    return {first + n, std::errc()};
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
char lower(char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }
bool starts_with_word(const char* p, const char* last, const char* word) {
    for (; *word; ++word, ++p)
        if (p == last || lower(*p) != *word) return false;
    return true;
}

// ---------------------------------------------------------------------------------------------
// Double-double arithmetic (Dekker, Knuth): a value hi + lo with |lo| <= ulp(hi) / 2.

struct DD {
    double hi = 0, lo = 0;
};

DD two_sum(double a, double b) {
    const double s = a + b;
    const double bb = s - a;
    return {s, (a - (s - bb)) + (b - bb)};
}
DD quick_two_sum(double a, double b) {  // |a| >= |b|
    const double s = a + b;
    return {s, b - (s - a)};
}
DD split(double a) {  // a = hi + lo, each with 26 significant bits (|a| < 2^995)
    const double t = 134217729.0 * a;  // 2^27 + 1
    const double hi = t - (t - a);
    return {hi, a - hi};
}
DD two_prod(double a, double b) {
    const double p = a * b;
    const DD x = split(a), y = split(b);
    return {p, ((x.hi * y.hi - p) + x.hi * y.lo + x.lo * y.hi) + x.lo * y.lo};
}
DD add(DD a, DD b) {
    DD s = two_sum(a.hi, b.hi);
    const DD t = two_sum(a.lo, b.lo);
    s.lo += t.hi;
    s = quick_two_sum(s.hi, s.lo);
    s.lo += t.lo;
    return quick_two_sum(s.hi, s.lo);
}
DD neg(DD a) { return {-a.hi, -a.lo}; }
DD mul(DD a, DD b) {
    DD p = two_prod(a.hi, b.hi);
    p.lo += a.hi * b.lo + a.lo * b.hi;
    return quick_two_sum(p.hi, p.lo);
}
DD mul(DD a, double b) {
    DD p = two_prod(a.hi, b);
    p.lo += a.lo * b;
    return quick_two_sum(p.hi, p.lo);
}
DD div(DD a, double b) {
    const double q1 = a.hi / b;
    DD r = add(a, neg(two_prod(q1, b)));
    const double q2 = r.hi / b;
    r = add(r, neg(two_prod(q2, b)));
    const double q3 = r.hi / b;
    return add(quick_two_sum(q1, q2), DD{q3, 0});
}
DD sqrt_dd(double a) {  // a >= 0: one Newton step from the correctly rounded sqrt
    if (a == 0) return {};
    const double s = std::sqrt(a);
    const DD residual = add(DD{a, 0}, neg(two_prod(s, s)));
    return add(DD{s, 0}, DD{residual.hi / (2 * s), 0});
}

constexpr DD kHalfPi{0x1.921fb54442d18p0, 0x1.1a62633145c07p-54};
constexpr DD kPi{0x1.921fb54442d18p1, 0x1.1a62633145c07p-53};
constexpr double kNegligible = 0x1p-110;  // a series stops when its term falls below this share

// asin(y) for |y| <= 1/2: sum of (2n)! / (4^n (n!)^2 (2n+1)) y^(2n+1); each term at most a
// quarter of the one before, so about 55 terms reach 2^-110.
DD asin_series(DD y) {
    const DD y2 = mul(y, y);
    DD power = y;  // (2n)! / (4^n (n!)^2) y^(2n+1)
    DD sum = y;
    for (int n = 1; n < 200; ++n) {
        power = div(mul(mul(power, y2), double(2 * n - 1)), double(2 * n));
        const DD term = div(power, double(2 * n + 1));
        sum = add(sum, term);
        if (std::fabs(term.hi) <= kNegligible * std::fabs(sum.hi)) break;
    }
    return sum;
}

}  // namespace

std::to_chars_result shortest_to_chars(char* first, char* last, double value) {
    return shortest(first, last, value);
}
std::to_chars_result shortest_to_chars(char* first, char* last, float value) {
    return shortest(first, last, value);
}

std::from_chars_result general_from_chars(const char* first, const char* last, double& value) {
    // The longest prefix in the from_chars grammar, then strtod on a terminated copy of it.
    const char* p = first;
    if (p != last && *p == '-') ++p;
    if (starts_with_word(p, last, "inf") || starts_with_word(p, last, "nan")) {
        const bool nan = lower(*p) == 'n';
        p += 3;
        if (!nan && starts_with_word(p, last, "inity")) p += 5;
        if (nan && p != last && *p == '(') {  // nan(n-char-sequence)
            const char* q = p + 1;
            while (q != last && (is_digit(*q) || (lower(*q) >= 'a' && lower(*q) <= 'z') || *q == '_')) ++q;
            if (q != last && *q == ')') p = q + 1;
        }
        const bool negative = *first == '-';
        if (nan) value = negative ? -std::numeric_limits<double>::quiet_NaN()
                                  : std::numeric_limits<double>::quiet_NaN();
        else value = negative ? -std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::infinity();
        return {p, std::errc()};
    }
    std::size_t mantissa_digits = 0;
    bool nonzero = false;
    while (p != last && is_digit(*p)) nonzero |= *p != '0', ++p, ++mantissa_digits;
    if (p != last && *p == '.') {
        ++p;
        while (p != last && is_digit(*p)) nonzero |= *p != '0', ++p, ++mantissa_digits;
    }
    if (mantissa_digits == 0) return {first, std::errc::invalid_argument};
    if (p != last && lower(*p) == 'e') {
        const char* q = p + 1;
        if (q != last && (*q == '+' || *q == '-')) ++q;
        if (q != last && is_digit(*q)) {
            while (q != last && is_digit(*q)) ++q;
            p = q;
        }
    }
    std::string text(first, p);
    errno = 0;
    const double parsed = std::strtod(text.c_str(), nullptr);
    if (errno == ERANGE && (std::isinf(parsed) || (parsed == 0 && nonzero)))
        return {p, std::errc::result_out_of_range};
    value = parsed;
    return {p, std::errc()};
}

double correctly_rounded_acos(double x) {
    if (!(x >= -1 && x <= 1)) return std::numeric_limits<double>::quiet_NaN();
    if (x == 1) return 0;
    // acos x = pi/2 - asin x for |x| < 1/2; beyond, through the half-angle 2 asin sqrt((1 -|x|)/2)
    // (1 - |x| is exact there), reflected for negative x.
    if (std::fabs(x) < 0.5) return add(kHalfPi, neg(asin_series(DD{x, 0}))).hi;
    const DD half_angle = mul(asin_series(sqrt_dd((1 - std::fabs(x)) / 2)), 2.0);
    return (x > 0 ? half_angle : add(kPi, neg(half_angle))).hi;
}

double correctly_rounded_sin(double x) {
    if (!(std::fabs(x) <= 2)) return std::sin(x);  // NaN, infinities and |x| > 2
    // Below 2^-27, x^3/6 is under half an ulp of x: sin x rounds to x.
    if (std::fabs(x) < 0x1p-27) return x;
    // sum of (-1)^n x^(2n+1) / (2n+1)!: the terms fall below 2^-110 of the sum within 25; on
    // |x| <= 2 the cancellation costs at most 2 bits (sinh x / sin x <= 4).
    const DD x2 = mul(DD{x, 0}, DD{x, 0});
    DD term{x, 0};
    DD sum = term;
    for (int n = 1; n < 100; ++n) {
        term = neg(div(mul(term, x2), double((2 * n) * (2 * n + 1))));
        sum = add(sum, term);
        if (std::fabs(term.hi) <= kNegligible * std::fabs(sum.hi)) break;
    }
    return sum.hi;
}

}  // namespace fourdgs
