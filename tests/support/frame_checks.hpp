// tests/support/frame_checks.hpp — does a converted file give back its input frames? Every frame
// extracted at its time (object tracks composed) against the PLY frames it came from.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "fourdgs/io.hpp"
#include "fourdgs/tools/convert.hpp"

namespace fourdgs::test {

inline double quat_distance(const float* a, const float* b) {
    double na = 0, nb = 0;
    for (int c = 0; c < 4; ++c) na += double(a[c]) * a[c], nb += double(b[c]) * b[c];
    na = std::sqrt(na), nb = std::sqrt(nb);
    double same = 0, flipped = 0;
    for (int c = 0; c < 4; ++c) {
        same = std::max(same, std::fabs(a[c] / na - b[c] / nb));
        flipped = std::max(flipped, std::fabs(a[c] / na + b[c] / nb));
    }
    return std::min(same, flipped);
}

// Every frame, extracted at its time with the tracks composed, holds every input gaussian within
// the tolerance the file records (matched by nearest position): position, rotation, colour and
// full opacity. (Adaptive records move on between frame times, as §12's sampling intends.)
inline void check_every_frame(std::span<const std::uint8_t> bytes, const QuantBounds& tol,
                              const std::vector<PlyCloud>& frames, double fps) {
    MemorySource src(bytes);
    double worst_pos = 0, worst_rot = 0, worst_rgb = 0, worst_alpha = 0;
    for (std::size_t f = 0; f < frames.size(); ++f) {
        auto got = extract_state(src, double(f) / fps);
        REQUIRE(got.ok());
        REQUIRE(got->count == frames[f].count);
        const PlyCloud& in = frames[f];
        for (std::size_t i = 0; i < in.count; ++i) {
            std::size_t best = 0;
            double bd = 1e30;
            for (std::size_t j = 0; j < got->count; ++j) {
                double d = 0;
                for (int k = 0; k < 3; ++k)
                    d += std::pow(double(got->position[j * 3 + k]) - in.position[i * 3 + k], 2);
                if (d < bd) bd = d, best = j;
            }
            for (int k = 0; k < 3; ++k) {
                worst_pos = std::max(worst_pos, std::fabs(double(got->position[best * 3 + k]) -
                                                          in.position[i * 3 + k]));
                worst_rgb = std::max(worst_rgb, std::fabs(double(got->color[best * 4 + k]) -
                                                          in.color[i * 4 + k]));
            }
            worst_alpha = std::max(
                worst_alpha, std::fabs(double(got->color[best * 4 + 3]) - in.color[i * 4 + 3]));
            worst_rot = std::max(worst_rot,
                                 quat_distance(&got->rotation[best * 4], &in.rotation[i * 4]));
        }
    }
    CHECK(worst_pos <= tol.pos + 1e-6);
    CHECK(worst_rot <= tol.rot + 1e-6);
    CHECK(worst_rgb <= tol.rgb + 1e-6);
    CHECK(worst_alpha <= tol.alpha + 1e-6);  // full opacity: the alpha as given, never faded
}

}  // namespace fourdgs::test
