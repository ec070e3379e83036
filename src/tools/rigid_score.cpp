// The rigid-part search's hypothesis scoring on packed positions (rigid_score.hpp).
#include "fourdgs/tools/rigid_score.hpp"

#include <cmath>

namespace fourdgs {

void pack_positions(std::span<const PlyCloud> frames, std::span<const std::uint32_t> ids,
                    std::size_t stride, PackedPositions& out) {
    out.frames = frames.size();
    out.position.clear();
    for (std::size_t i = 0; i < ids.size(); i += stride)
        for (const PlyCloud& f : frames)
            for (int c = 0; c < 3; ++c) out.position.push_back(f.position[ids[i] * 3 + c]);
}

std::size_t count_following(const PackedPositions& packed, std::span<const Pose> poses,
                            double tol) {
    const std::size_t frames = packed.frames;
    if (frames == 0) return 0;
    std::size_t out = 0;
    for (const float* p = packed.position.data(), *end = p + packed.position.size(); p != end;
         p += frames * 3) {
        const Vec3 first{p[0], p[1], p[2]};
        bool follows = true;
        for (std::size_t k = frames; follows && k-- > 1;) {  // the last frames moved furthest
            const Vec3 at = fourdgs::apply(poses[k], first);
            for (int c = 0; c < 3; ++c)
                if (!(std::fabs(at[c] - p[k * 3 + c]) <= tol)) follows = false;
        }
        out += follows;
    }
    return out;
}

}  // namespace fourdgs
