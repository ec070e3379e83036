// conformance/source_check.hpp — does a decoded gaussian match the one written, within the
// bounds the file's Quantization record declares (§5.3)? The corpus check (main.cpp) and the
// write → read fuzz target (tests/fuzz/fuzz_round_trip.cpp) both ask it. Throws
// std::runtime_error when the file declares no bound it needs.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "fourdgs/quantize.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/writer.hpp"

namespace conformance {

using fourdgs::GaussianBlock;
using fourdgs::Quantization;
using SourceColumns = fourdgs::GaussianColumns;

inline double bound_of(const Quantization& q, const char* key) {
    const std::string* s = q.bound(key);
    if (!s) throw std::runtime_error(std::string("Quantization declares no bound '") + key + "'");
    return std::strtod(s->c_str(), nullptr);
}

struct Bounds {
    double pos, scale_rel, rot, rgb, alpha, motion, time, sigma_rel;
    std::array<double, 3> sh_band{};
};
inline Bounds bounds_of(const Quantization& q, int sh_degree) {
    Bounds b{bound_of(q, "pos"),    bound_of(q, "scale_rel"), bound_of(q, "rot"),
             bound_of(q, "rgb"),    bound_of(q, "alpha"),     bound_of(q, "motion"),
             bound_of(q, "time"),   bound_of(q, "sigma_rel")};
    for (int band = 1; band <= sh_degree; ++band) {
        const std::string key = "sh_band" + std::to_string(band);
        const std::string* s = q.bound(key);
        b.sh_band[band - 1] =
            s ? std::strtod(s->c_str(), nullptr) : (q.bound("sh") ? bound_of(q, "sh") : 0);
    }
    return b;
}

// Float columns are compared with a relative allowance of a few f32 ulps on top of the bound:
// the bound is measured in f64, the decoded value is an f32.
inline bool within(double got, double want, double bound) {
    return std::fabs(got - want) <= bound * (1 + 1e-6) + 4e-7 * std::max(1.0, std::fabs(want));
}

// Why decoded gaussian i does not match source gaussian j, or "" when it does.
inline std::string mismatch(const GaussianBlock& d, std::size_t i, const SourceColumns& s,
                            std::size_t j, const Bounds& b, bool check_mu) {
    for (int c = 0; c < 3; ++c) {
        if (!within(d.position[i * 3 + c], s.position[j * 3 + c], b.pos)) return "position";
        if (!within(std::log(d.scale[i * 3 + c]), std::log(s.scale[j * 3 + c]), b.scale_rel))
            return "scale";
        const double m = s.motion.empty() ? 0.0 : s.motion[j * 3 + c];
        if (!within(d.motion[i * 3 + c], m, b.motion)) return "motion";
        if (!within(d.color[i * 4 + c], s.color[j * 4 + c], b.rgb)) return "rgb";
    }
    if (!within(d.color[i * 4 + 3], s.color[j * 4 + 3], b.alpha)) return "alpha";
    // Rotation: the source normalized, the sign that matches; each component within 3 x rot
    // (three are stored to rot, the fourth is derived from them, §6.4).
    double n = 0;
    for (int c = 0; c < 4; ++c) n += double(s.rotation[j * 4 + c]) * s.rotation[j * 4 + c];
    n = std::sqrt(n);
    double dot = 0;
    for (int c = 0; c < 4; ++c) dot += d.rotation[i * 4 + c] * (s.rotation[j * 4 + c] / n);
    const double sign = dot < 0 ? -1 : 1;
    for (int c = 0; c < 4; ++c)
        if (!within(d.rotation[i * 4 + c], sign * s.rotation[j * 4 + c] / n, 3 * b.rot))
            return "rotation";
    if (std::isinf(s.sigma_t[j]) != std::isinf(d.sigma_t[i])) return "never-fades";
    if (!std::isinf(s.sigma_t[j]) &&
        !within(std::log(d.sigma_t[i]), std::log(s.sigma_t[j]), b.sigma_rel))
        return "sigma_t";
    if (check_mu && !within(d.mu_t[i], s.mu_t[j], b.time)) return "mu_t";
    if (!s.win_lo.empty() &&
        (!within(d.win_lo[i], s.win_lo[j], 0) || !within(d.win_hi[i], s.win_hi[j], 0)))
        return "window";
    const std::uint32_t oid = s.object_id.empty() ? 0 : s.object_id[j];
    if ((d.object_id.empty() ? 0 : d.object_id[i]) != oid) return "object_id";
    if (!s.source_index.empty() &&
        (!d.has_source_ids || d.source_group[i] != s.source_group[j] ||
         d.source_index[i] != s.source_index[j]))
        return "source ids";
    using fourdgs::sh_band_first, fourdgs::sh_band_width;
    const int per = fourdgs::sh_coeffs_per_component(s.sh_degree);
    if (d.sh_degree != s.sh_degree) return "sh_degree";
    for (int c = 0; c < 3; ++c)
        for (int band = 1; band <= s.sh_degree; ++band)
            for (int k = sh_band_first(band); k < sh_band_first(band) + sh_band_width(band); ++k) {
                const int got = d.sh[(i * 3 + c) * per + k];
                const int want = fourdgs::sh_byte(s.sh[(j * 3 + c) * per + k]);
                if (std::abs(got - want) > b.sh_band[band - 1])
                    return "sh band " + std::to_string(band);
            }
    return "";
}

}  // namespace conformance
