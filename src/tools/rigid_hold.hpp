// A rider's held rotation (rigid.hpp): the one rotation in its part's frame that the poses carry
// near its own at every frame of a window, and how far it strays. Internal to the rigid-part
// search (rigid.cpp) and the encode's per-window recomputation (held_window_rotations): both call
// the same hold_over, so the rotation the search validated is the one written, bit for bit.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "fourdgs/pose.hpp"
#include "fourdgs/tools/ply.hpp"
#include "fourdgs/tools/rigid.hpp"

namespace fourdgs::rigid_hold {

inline Quat rotation_of(const PlyCloud& f, std::size_t g) {
    return normalized({f.rotation[g * 4], f.rotation[g * 4 + 1], f.rotation[g * 4 + 2],
                       f.rotation[g * 4 + 3]});
}

// The sign-free largest component difference of two unit quaternions.
inline double quat_distance(const Quat& got, const Quat& want) {
    double same = 0, flipped = 0;
    for (int c = 0; c < 4; ++c) {
        same = std::max(same, std::fabs(got[c] - want[c]));
        flipped = std::max(flipped, std::fabs(got[c] + want[c]));
    }
    return std::min(same, flipped);
}

// A rider's held rotation and its largest distance, carried by the poses, from its own; where it
// is held a window of frames at a time (RigidOptions::hold_window), the rotation of each window
// (`per_window`; `rest` is the first's) and the largest distance over them.
struct Held {
    Quat rest;
    double distance = 0;
    std::vector<Quat> per_window;
};

// Frame k's rotation of one gaussian as the frame holds it: 4 floats, not normalized.
using RotationAt = std::function<const float*(std::size_t k)>;

// The rotation a rider is held at over frames [k0, k1) (rigid.cpp says how it is chosen), when
// there is one within `tol` of every such frame's rotation carried by its pose (`poses[k]`'s
// rotation); `levels` says how that distance is measured (RotationLevels). In the input's levels
// `previous` (4 floats, the value stored for the window before; none for a first window) is
// taken first wherever it holds inside every frame's box: a rider that keeps its rotation from
// one window to the next is not updated there, and a delta restates no rotation for it (§11.5).
std::optional<Held> hold_over(std::size_t k0, std::size_t k1, const RotationAt& rotation,
                              std::span<const Pose> poses, double tol,
                              const RotationLevels& levels, const float* previous = nullptr);

// hold_over frames [k0, k1) of a rider whose rotations are as a frame holds them: 4 floats at
// q + (k - k0) x stride; `poses` its part's.
std::optional<Held> hold_read(const float* q, std::size_t stride, std::size_t k0, std::size_t k1,
                              std::span<const Pose> poses, double tol,
                              const RotationLevels& levels, const float* previous = nullptr);

// hold_over every frame of `frames` (gaussian g, its part's `poses`).
std::optional<Held> held_rotation(std::span<const PlyCloud> frames, std::size_t g,
                                  std::span<const Pose> poses, double tol,
                                  const RotationLevels& levels);

// How many windows of `length` frames a sequence whose last frame is `last` spans.
inline std::size_t windows_of(std::size_t last, std::size_t length) { return last / length + 1; }

// hold_over each window of `length` frames: frames[k] is frame at[k] of the sequence (ascending;
// a sample), a window the frames of `frames` that fall in it, each given the window before's as
// `previous`. A window none of them falls in takes the rotation of the window before (a sample's
// search only asks whether its riders hold).
std::optional<Held> held_per_window(std::span<const PlyCloud> frames,
                                    std::span<const std::size_t> at, std::size_t g,
                                    std::span<const Pose> poses, double tol, std::size_t length,
                                    const RotationLevels& levels);

// The window lengths a part's riders are tried with, longest first, where their rotation cannot
// be held over the whole sequence: the option's, a half and a quarter of it, none shorter than
// kShortestHold frames (a rotation restated that often costs more than the part's frame saves).
inline constexpr std::size_t kShortestHold = 4;
std::vector<std::size_t> hold_lengths(std::size_t window);

}  // namespace fourdgs::rigid_hold
