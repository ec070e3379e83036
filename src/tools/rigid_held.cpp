// Where a rigid part (rigid.hpp) places its gaussians: a rider's held rotation at a frame, its
// position in the part's object frame, and the frames the search samples.
#include <algorithm>

#include "fourdgs/tools/rigid.hpp"

namespace fourdgs {

std::size_t held_windows_kept(const RigidPart& part) {
    return part.riders.empty() ? 1 : part.rider_rotation.size() / (part.riders.size() * 4);
}

std::span<const float, 4> rider_rotation(const RigidPart& part, std::uint32_t g,
                                         std::size_t frame) {
    const auto at = std::lower_bound(part.riders.begin(), part.riders.end(), g);
    return held_rotation_of_rider(part, static_cast<std::size_t>(at - part.riders.begin()), frame);
}

std::span<const float, 4> held_rotation_of_rider(const RigidPart& part, std::size_t i,
                                                 std::size_t frame) {
    const std::size_t kept = held_windows_kept(part);
    const std::size_t window =
        part.hold_window == 0 ? 0 : std::min(frame / part.hold_window, kept - 1);
    return std::span<const float, 4>(part.rider_rotation.data() + (i * kept + window) * 4, 4);
}

void to_object_frame(const Pose& pose, float* position) {
    const Quat inverse{-pose.rotation[0], -pose.rotation[1], -pose.rotation[2], pose.rotation[3]};
    const Vec3 local = rotate(inverse, {position[0] - pose.translation[0],
                                        position[1] - pose.translation[1],
                                        position[2] - pose.translation[2]});
    for (int c = 0; c < 3; ++c) position[c] = static_cast<float>(local[c]);
}

std::vector<std::size_t> rigid_sample_frames(std::size_t frames) {
    std::vector<std::size_t> out;
    const std::size_t n = std::min(frames, kRigidSampleFrames);
    for (std::size_t i = 0; i < n; ++i) out.push_back(n == 1 ? 0 : i * (frames - 1) / (n - 1));
    return out;
}

}  // namespace fourdgs
