// The rigid-part search's hypothesis scoring on packed positions (fourdgs/tools/rigid_score.hpp):
// the count is the gaussians that a set of poses carries from frame 0 to within the residual at
// every frame, as rigid.cpp's follows_position decides each, whichever frame one fails at.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "fourdgs/tools/rigid_score.hpp"

using namespace fourdgs;

namespace {

// follows_position, written out: pose k applied to frame 0's position, each component within
// `tol` of frame k's.
bool follows(const std::vector<PlyCloud>& frames, std::uint32_t g, const std::vector<Pose>& poses,
             double tol) {
    const Vec3 first{frames[0].position[g * 3], frames[0].position[g * 3 + 1],
                     frames[0].position[g * 3 + 2]};
    for (std::size_t k = 1; k < frames.size(); ++k) {
        const Vec3 at = fourdgs::apply(poses[k], first);
        for (int c = 0; c < 3; ++c)
            if (!(std::fabs(at[c] - frames[k].position[g * 3 + c]) <= tol)) return false;
    }
    return true;
}

}  // namespace

TEST_CASE("count_following counts the packed gaussians every pose carries within the residual, "
          "one failing at any frame, any component, or by NaN left out") {
    constexpr std::size_t kGaussians = 600, kFrames = 7;
    constexpr double kTol = 1e-3;
    std::mt19937 rng(39);
    std::uniform_real_distribution<double> unit(-1, 1);
    std::vector<Pose> poses(kFrames);
    for (std::size_t k = 1; k < kFrames; ++k) {
        poses[k].rotation = normalized({unit(rng), unit(rng), unit(rng), unit(rng)});
        poses[k].translation = {unit(rng), unit(rng), unit(rng)};
    }
    std::vector<PlyCloud> frames(kFrames);
    for (PlyCloud& f : frames) f.count = kGaussians, f.position.resize(kGaussians * 3);
    for (std::size_t g = 0; g < kGaussians; ++g) {
        const Vec3 p{unit(rng), unit(rng), unit(rng)};
        for (int c = 0; c < 3; ++c) frames[0].position[g * 3 + c] = static_cast<float>(p[c]);
        for (std::size_t k = 1; k < kFrames; ++k) {
            const Vec3 at = fourdgs::apply(poses[k], p);
            for (int c = 0; c < 3; ++c)
                frames[k].position[g * 3 + c] = static_cast<float>(at[c]);
        }
        // Two in three stray: at one frame (the first and the last included), one component, by
        // a little under the residual, a little over it, or to NaN.
        if (g % 3 == 0) continue;
        const std::size_t k = 1 + g / 27 % (kFrames - 1);
        const int c = static_cast<int>(g / 3 % 3);
        const double by[] = {0.9 * kTol, 1.5 * kTol, std::nan("")};
        frames[k].position[g * 3 + c] += static_cast<float>(by[g / 9 % 3]);
    }
    std::vector<std::uint32_t> ids(kGaussians);
    for (std::uint32_t g = 0; g < kGaussians; ++g) ids[g] = (g * 7) % kGaussians;  // scattered
    PackedPositions packed;
    for (std::size_t stride : {1, 2, 5, 1000}) {
        pack_positions(frames, ids, stride, packed);
        std::size_t want = 0, strays = 0;
        for (std::size_t i = 0; i < ids.size(); i += stride) {
            want += follows(frames, ids[i], poses, kTol);
            strays += !follows(frames, ids[i], poses, kTol);
        }
        CHECK(count_following(packed, poses, kTol) == want);
        if (stride < 1000) CHECK(strays > 0);  // the count is not everything
        if (stride < 1000) CHECK(want > 0);
    }
    // One frame: nothing to fail at. None: nothing to count.
    pack_positions(std::span<const PlyCloud>(frames.data(), 1), ids, 1, packed);
    CHECK(count_following(packed, poses, kTol) == kGaussians);
    pack_positions({}, ids, 1, packed);
    CHECK(count_following(packed, poses, kTol) == 0);
}
