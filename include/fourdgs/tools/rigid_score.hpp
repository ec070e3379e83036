// fourdgs/tools/rigid_score.hpp — the rigid-part search's hypothesis scoring (rigid.cpp's
// search_parts) on the scored gaussians' positions packed gaussian by gaussian, not read from each
// frame's cloud.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fourdgs/export.hpp"
#include "fourdgs/pose.hpp"
#include "fourdgs/tools/ply.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// The positions of some gaussians at every frame: gaussian i's at frame k at
// position[(i * frames + k) * 3]. A hypothesis is scored on the same few thousand gaussians
// (scattered over the clouds) against 128 pose sets; packed, each gaussian's frames are one run.
struct PackedPositions {
    std::size_t frames = 0;
    std::vector<float> position;
};

// The positions in `frames` of every `stride`th of `ids` from the first (the gaussians a
// hypothesis is scored on), into `out` (its storage reused).
void pack_positions(std::span<const PlyCloud> frames, std::span<const std::uint32_t> ids,
                    std::size_t stride, PackedPositions& out);

// How many of the packed gaussians `poses` carry from frame 0 to within `tol` per component at
// every frame: rigid.cpp's follows_position for each, the same arithmetic on the same floats.
std::size_t count_following(const PackedPositions& packed, std::span<const Pose> poses, double tol);

}  // namespace fourdgs
FOURDGS_PUBLIC_END
