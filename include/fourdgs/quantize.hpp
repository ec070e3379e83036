// fourdgs/quantize.hpp — the uniform-v1 grids of §6, both directions.
//
// Decode: an integer bin times its step (exponentiated for the log-domain scale and sigma), with
// two per-gaussian steps (§6.3) derived from the gaussian's own sigma bin, flags and window, and
// the Header's cutoff. Encode: the inverse, rounding to the nearest bin. Each pair of functions
// sits together so the grid is stated once.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include "fourdgs/export.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

inline constexpr std::string_view kSchemeUniformV1 = "uniform-v1";

// §6.3 constants (wire-notes "Per-gaussian steps").
inline constexpr double kHalfLifeMin = 0.02, kHalfLifeMax = 2.0, kReferenceLifetime = 0.5;
inline constexpr int kVelocityClassMin = -4, kVelocityClassMax = 2;
inline constexpr double kBirthTargetFraction = 0.05;
inline constexpr int kBirthClassMin = -10, kBirthClassMax = 0;

// Morton order: 21 bits of one axis spread to every third bit, so that three axes interleave as
// spread(x) | spread(y) << 1 | spread(z) << 2 (x lowest). Writers sort by it so that
// neighbouring positions sit together in a stream (§6.1).
inline constexpr std::uint64_t morton_spread3(std::uint64_t v) {
    v &= 0x1FFFFF;
    v = (v | v << 32) & 0x1F00000000FFFFull;
    v = (v | v << 16) & 0x1F0000FF0000FFull;
    v = (v | v << 8) & 0x100F00F00F00F00Full;
    v = (v | v << 4) & 0x10C30C30C30C30C3ull;
    v = (v | v << 2) & 0x1249249249249249ull;
    return v;
}

// The uniform-v1 grid's origin and per-attribute steps (§5.3): the Quantization record stores
// them and the decode Grid carries them, so each is declared once and copied as one value.
struct GridSteps {
    std::array<double, 3> pos_origin{0, 0, 0};
    double step_pos = 0, step_scale_log = 0, step_rot = 0, step_rgb = 0, step_alpha = 0,
           step_motion = 0, step_time = 0, step_sigma_log = 0;
    friend bool operator==(const GridSteps&, const GridSteps&) = default;
};

// The grid parameters a decoder needs: the Quantization record's steps and the Header's cutoff.
struct Grid : GridSteps {
    double cutoff = 0.05;
    double k = 0;  // sqrt(-2 ln cutoff), with the Header's cutoff (§6.3), never the default

    static double k_for_cutoff(double cutoff) { return std::sqrt(-2.0 * std::log(cutoff)); }
};

// sigma_t from its bin; +inf for a never-fading gaussian (flags bit 0).
inline double sigma_from_bin(const Grid& g, std::int32_t sigma_bin, bool never_fades) {
    if (never_fades) return std::numeric_limits<double>::infinity();
    return std::exp(static_cast<double>(sigma_bin) * g.step_sigma_log);
}

// §6.3 velocity class: precision follows lifetime. `sigma` is exp(sigma_bin * step_sigma_log),
// ignored for a never-fading gaussian, whose half-life is its own window's length. log2 in double
// precision so that a value on a power-of-two boundary lands on it (wire-notes).
inline int velocity_class_for_sigma(const Grid& g, double sigma, bool never_fades, double win_lo,
                                    double win_hi) {
    double half = never_fades ? (win_hi - win_lo) : g.k * sigma;
    if (!(half >= kHalfLifeMin)) half = kHalfLifeMin;  // also catches NaN
    if (half > kHalfLifeMax) half = kHalfLifeMax;
    double c = std::ceil(std::log2(half / kReferenceLifetime));
    return static_cast<int>(std::clamp(c, double(kVelocityClassMin), double(kVelocityClassMax)));
}

// §6.3 birth-time class: mu_t precision is a fraction of the gaussian's own sigma.
inline int birth_class_for_sigma(const Grid& g, double sigma, bool never_fades) {
    double target = never_fades ? g.step_time : std::min(g.step_time, kBirthTargetFraction * sigma);
    double c = std::floor(std::log2(target / g.step_time));
    if (std::isnan(c)) c = 0;
    return static_cast<int>(std::clamp(c, double(kBirthClassMin), double(kBirthClassMax)));
}

inline double sigma_value(const Grid& g, std::int32_t sigma_bin) {
    return std::exp(static_cast<double>(sigma_bin) * g.step_sigma_log);
}

inline int velocity_class(const Grid& g, std::int32_t sigma_bin, bool never_fades, double win_lo,
                          double win_hi) {
    return velocity_class_for_sigma(g, sigma_value(g, sigma_bin), never_fades, win_lo, win_hi);
}

inline double velocity_step(const Grid& g, std::int32_t sigma_bin, bool never_fades,
                            double win_lo, double win_hi) {
    return std::ldexp(g.step_motion, -velocity_class(g, sigma_bin, never_fades, win_lo, win_hi));
}

inline int birth_class(const Grid& g, std::int32_t sigma_bin, bool never_fades) {
    return birth_class_for_sigma(g, sigma_value(g, sigma_bin), never_fades);
}

inline double birth_step(const Grid& g, std::int32_t sigma_bin, bool never_fades) {
    return std::ldexp(g.step_time, birth_class(g, sigma_bin, never_fades));
}

// §6.4 smallest-three: `index` is the omitted component (x=0,y=1,z=2,w=3); `bins` the other
// three in ascending component order. Each kept component is clamped to [-1, 1], the omitted
// one recovered as sqrt(max(0, 1 - sum of squares)), then the quaternion renormalized.
inline std::array<double, 4> rotation_from_bins(const Grid& g, std::uint32_t index,
                                                const std::int32_t bins[3]) {
    std::array<double, 4> q{};
    double sum = 0;
    int k = 0;
    for (std::uint32_t c = 0; c < 4; ++c) {
        if (c == index) continue;
        double v = std::clamp(static_cast<double>(bins[k++]) * g.step_rot, -1.0, 1.0);
        q[c] = v;
        sum += v * v;
    }
    q[index] = std::sqrt(std::max(0.0, 1.0 - sum));
    double n = std::sqrt(sum + q[index] * q[index]);
    if (n > 0)
        for (double& v : q) v /= n;
    return q;
}

// SH byte → coefficient on the fixed interval [-4, +4] (§6.5); and back, clamped.
inline float sh_coefficient(std::uint8_t b) { return -4.0f + static_cast<float>(b) * (8.0f / 255.0f); }
inline std::uint8_t sh_byte(double coefficient) {
    double c = std::clamp(coefficient, -4.0, 4.0);
    return static_cast<std::uint8_t>(std::lround((c + 4.0) * 255.0 / 8.0));
}
// §6.5 bit depth n in 3..8: pitch q = 2^(8-n), bin centre b = floor(x/q)*q + floor(q/2).
inline std::uint8_t sh_requantize(std::uint8_t b, int depth) {
    int q = 1 << (8 - depth);
    return static_cast<std::uint8_t>((b / q) * q + q / 2);
}
inline int sh_depth_bound(int depth) { return (1 << (8 - depth)) / 2; }

// Number of SH coefficients per colour component for a whole degree d: (d+1)^2 - 1 (§6.5).
constexpr int sh_coeffs_per_component(int degree) { return (degree + 1) * (degree + 1) - 1; }
// Coefficients per component in band b: 2b + 1; the first coefficient of band b: b^2 - 1.
constexpr int sh_band_width(int band) { return 2 * band + 1; }
constexpr int sh_band_first(int band) { return band * band - 1; }

// Encode side: nearest bin. Values that do not fit int32 are reported by the caller's
// verification, so here they saturate rather than invoke undefined behaviour.
inline std::int32_t quantize_to_bin(double value, double step) {
    double b = std::nearbyint(value / step);
    if (!(b > -2147483648.0)) return std::numeric_limits<std::int32_t>::min();
    if (!(b < 2147483647.0)) return std::numeric_limits<std::int32_t>::max();
    return static_cast<std::int32_t>(b);
}

}  // namespace fourdgs
FOURDGS_PUBLIC_END
