// fourdgs/tools/rigid.hpp — the rigid parts of a tracked frame sequence: groups of gaussians that
// move as one body, each with one pose per frame, so that convert (convert.hpp) can store a group
// once in its own frame and let an Object Track (§5.15.7) move it. Part of the tools library.
//
// A tracked sequence holds the same gaussians in the same order in every frame. Gaussian g is
//   static   when every frame's position and rotation are frame 0's within the residuals;
//   in rigid part j when, for every frame k, pose_jk (R, T) carries frame 0's placement onto
//            frame k's within the residuals: |R p0 + T - pk| <= pos_residual per component and
//            the sign-free per-component distance of R ⊗ q0 from qk <= rot_residual (unit
//            quaternions) — the same arithmetic a reader composes a track with (§3);
//   riding   part j when it is neither of those but pose_jk carries its frame-0 position onto
//            frame k's within ride_residual (looser: its own drift, many times the tolerance) at
//            every frame, and one rotation in the object frame (the midrange or the mean of
//            R_k^-1 ⊗ q_k) that R_k carries within ride_rot_residual of q_k at every frame (and,
//            with members_ride, a member of a part that has riders, where its rotation holds so).
//            convert stores a rider in the part's frame (position R_k^-1 (p_k - T_k) per frame,
//            rotation held at that one), so the temporal model carries only the drift the pose
//            leaves and no rotation. A part keeps riders only when at most one in 16 of the
//            gaussians that ride it in position fails to hold its rotation (those few, usually
//            another body's the pose passes, are left to the parts searched next): gaussians
//            whose rotation must be stated every frame put rotation back into every
//            keyframe-delta delta (§11.5), and where many fail the part's frame costs more than
//            it saves (docs/performance.md, issue 39). Where RigidOptions::hold_window allows
//            and no rider of a part holds one rotation over the whole sequence, or some that
//            ride it in position do not, the part's riders may hold one rotation per window of
//            frames instead (restated once a window; the length that leaves fewest astray):
//            a .splat truncates each rotation component to a step of 1/128, an error up to a
//            whole step, biased along the world's axes, so over a body's many orientations no
//            one rotation in its frame stays within a step of every frame's;
//   other    otherwise.
// The object frame of a part is its placement in frame 0, so pose 0 is the identity and the
// gaussians' frame-0 state is their rest state.
//
// Search (RANSAC-like, deterministic for a given seed): among the moving gaussians, in the Morton
// order of their frame-0 positions, a hypothesis is three nearby gaussians spanning a triangle;
// Horn's closed-form absolute orientation gives its pose per frame; its support is the moving
// gaussians within the position residual at every frame. The best hypothesis is refitted by least
// squares (Horn again) to its support a few times, trimming what leaves the residuals, and its
// final support under the final poses — every member checked at every frame — becomes a part
// when it holds at least min_members. Parts are taken one at a time until none is found.
// With ride_residual > pos_residual, hypotheses are scored and refitted at ride_residual (a body
// whose gaussians all drift has no support at the strict residual), then refitted to the strict
// members alone where they are at least half the support; riders count towards min_members.
// With ride_residual 0 the search is exactly the strict one.
//
// Thread safety: reentrant.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/pose.hpp"
#include "fourdgs/tools/ply.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// How a rider's held rotation is measured (ConvertOptions::rot_levels): with `half` > 0, in its
// input's own 8-bit box, as read (b - 128) / 128, not normalized, up to sign, a byte 255 open
// above (src/tools/rotation_box.hpp): the held rotation carried by the pose must lie within
// `half` per component of the box's centre at every frame, and is chosen deepest inside every
// frame's box, then placed on the file's rotation grid (`grid_step`, the bins' step; 0: held in
// f32) as the writer stores it. 0: against the normalized input, as rot_residual measures.
struct RotationLevels {
    double half = 0;       // per quaternion component
    bool floor = false;    // the input's writer truncated (rot_rounding=floor), else it rounded
    double grid_step = 0;  // the file's rotation grid step
    friend bool operator==(const RotationLevels&, const RotationLevels&) = default;
};

struct RigidOptions {
    double pos_residual = 0;  // per position component, scene units
    double rot_residual = 0;  // per quaternion component
    double ride_residual = 0;  // per position component for riders; <= pos_residual: none ride
    std::size_t min_members = 64;      // a smaller group is left to the temporal model
    std::uint32_t max_parts = 64;
    std::uint32_t hypotheses = 128;    // per part searched
    std::uint64_t seed = 0x4d47535249474944ull;
    // Per quaternion component, a rider's held rotation from its own at any frame; 0 (or less
    // than rot_residual): rot_residual.
    double ride_rot_residual = 0;
    // A part with riders has its members ride too, where their rotation holds: their position
    // is then stored as it is, in the part's frame, so their residual takes nothing from the
    // grid's share (keyframe-delta sizes its grid by what the parts found, grid_plan.hpp's
    // parts_share), at the cost of updates where a member's drift crosses a bin.
    bool members_ride = false;
    // Where not every gaussian riding a part in position holds one rotation over the whole
    // sequence (the input's own rotations rounded at the tolerance, a body turning through many
    // orientations), its riders may hold one per window of this many frames (aligned to frame 0;
    // keyframe-delta's second), or of a half or a quarter of it: the longest that leaves fewest
    // of them astray, where that is fewer than one rotation leaves. 0: never.
    std::uint32_t hold_window = 0;
    // Where riders hold per window, whether each part's rider_rotation keeps every window's
    // rotation (O(riders x windows)) or the first window's alone: the others are then obtained
    // a window at a time from that window's frames (held_window_rotations), as the streamed
    // keyframe-delta encode does, in memory bounded by a window, not the sequence.
    bool every_window = true;
    // Riders' held rotations measured in the input's levels (RotationLevels); there a part has
    // no members (a member keeps frame 0's rotation, which its poses need not carry into every
    // frame's box). A rider that drifts is updated in every delta, and a delta restates every
    // update's rotation wherever one changed (§11.5), on the finer grid riders need: the
    // keyframe-delta writer keeps those rotations out where the few gaussians that turn are
    // reborn instead (KeyframeWriterOptions::rebirth_turned, which convert sets).
    RotationLevels rot_levels{};
};

struct RigidPart {
    std::vector<std::uint32_t> members;  // gaussian indices, ascending
    std::vector<std::uint32_t> riders;   // gaussian indices, ascending (none without ride_residual)
    std::vector<float> rider_rotation;   // 4 per rider per window: the rotation it is held at
    std::vector<Pose> poses;  // per frame: frame 0's placement -> frame k; [0] = identity
    // Frames per window of the riders' held rotations (RigidOptions::hold_window); 0: one window,
    // the sequence. rider_rotation holds rider i's rotation of window w at (i x windows + w) x 4,
    // windows being those it keeps (held_windows_kept): every window, or one (with
    // RigidOptions::every_window false, the first, until a caller puts another's there).
    std::uint32_t hold_window = 0;
    // How its riders' rotations were held (RigidOptions::rot_levels): held_window_rotations
    // holds each window's the same way.
    RotationLevels rot_levels{};
};

// How far the parts' gaussians stray, at any frame, from what their poses make of them: the
// largest position and rotation residual of a member (as follows_poses measures them) and the
// largest distance of a rider's held rotation, carried by the pose, from its own rotation (a
// rider's position is stored as it is, in the part's frame, and strays by nothing). And how much
// the poses grow an error stored in a part's frame, per component: a pose's rotation matrix
// carries an error of at most e per component to at most e x the 1-norm of its row (the largest
// of any pose's rows: 1 for the identity, at most sqrt(3)), and its quaternion, multiplying, an
// error of e per quaternion component to e x its own 1-norm (1 to 2). The grid's carried error
// must fit beside the residuals (grid_plan.hpp's parts_share). rider_pos_gain is pos_gain over
// the parts that keep riders alone (0: none do): an adaptive rider's grid, velocity and mu_t
// errors are in its part's frame too, and grow by it.
struct PartsFit {
    double member_pos = 0, member_rot = 0, rider_rot = 0;
    double pos_gain = 1, rot_gain = 1, rider_pos_gain = 0;
    friend bool operator==(const PartsFit&, const PartsFit&) = default;
};

struct RigidParts {
    std::vector<std::uint8_t> is_static;  // per gaussian
    std::vector<std::uint32_t> part_of;   // per gaussian: 0 none, j + 1 for parts[j] (riders too)
    std::vector<std::uint8_t> rides;      // per gaussian: 1 for a rider, else 0
    std::vector<RigidPart> parts;
    std::size_t static_count = 0, other_count = 0, riding_count = 0;
    PartsFit fit;  // over every part
};

// A rider's position in the object frame of its part at pose `pose`, R^-1 (p - T), in place
// (`position` points at its 3 floats).
void to_object_frame(const Pose& pose, float* position);

// How many windows' rotations part.rider_rotation holds for each rider (1 without riders).
std::size_t held_windows_kept(const RigidPart& part);

// The rotations `part` holds its riders at over window `window` of its frames (hold_window > 0;
// frames window x hold_window up to the next window or the sequence's end), exactly as the search
// validated them, from the riders' rotations as those frames hold them: `rotations` has frame
// window x hold_window + i's rotation of part.riders[r] at (i x riders + r) x 4. Into `out`: 4
// floats a rider, in riders' order, the layout of a rider_rotation keeping one window. False
// (`out` unspecified) where the part holds no riders per window, the window is past its frames,
// or `rotations` holds fewer than the window's frames.
bool held_window_rotations(const RigidPart& part, std::size_t window,
                           std::span<const float> rotations, std::vector<float>& out);

// The rotation `part` holds its rider g at in frame `frame` (its window's; where rider_rotation
// keeps fewer windows than the sequence has, the last kept: see held_windows_kept).
std::span<const float, 4> rider_rotation(const RigidPart& part, std::uint32_t g,
                                         std::size_t frame = 0);
// The same for the part's i-th rider (part.riders[i]), without searching for it.
std::span<const float, 4> held_rotation_of_rider(const RigidPart& part, std::size_t i,
                                                 std::size_t frame = 0);

// The parts of `frames`, which must be tracked (every frame holds frame 0's count; the caller
// checks). With `candidates` (one byte per gaussian), only the gaussians whose byte is not 0 are
// sorted: the others are neither static nor other, and in no part. Pure: no refusals.
RigidParts find_rigid_parts(std::span<const PlyCloud> frames, const RigidOptions& options,
                            std::span<const std::uint8_t> candidates = {});

// A first look (convert uses it; the search is about a third of a tracked conversion's time): the
// frames of a sequence of `frames` frames that the search on a sample takes — every frame up to
// kRigidSampleFrames, else that many spread evenly from the first to the last. A part holds at
// these frames wherever it holds at every frame, so where find_rigid_parts on them finds none the
// whole sequence need not be searched (its random draws on the sample may still miss a part the
// whole search would have found).
inline constexpr std::size_t kRigidSampleFrames = 16;
std::vector<std::size_t> rigid_sample_frames(std::size_t frames);

// find_rigid_parts of a sequence of `frames` frames read one at a time, in memory bounded by the
// sample whatever the count of frames: `read` puts frame k (its positions and rotations, every
// frame tracked) into `into`. Up to kRigidSampleFrames frames, it is find_rigid_parts of them all.
// Past that, the parts are searched on rigid_sample_frames (hypotheses, refits and the gaussians
// each part may take, as find_rigid_parts), then each part's pose at every frame is fitted again,
// the same way, to the gaussians it was fitted to on the sample (trimmed at that frame of what
// leaves the residual), and two passes over the frames, one at a time, gather what
// find_rigid_parts measures: each gaussian's largest residual against its part's poses and its
// held rotation's distance. Every member and rider is so checked at every frame against the
// poses stored, and what fails is other; a part left with fewer than min_members is dropped.
// Riders held per window (hold_window) take one more pass for each window length tried, and
// hold one window's rotations of the part's gaussians (16 bytes a gaussian a frame of it) and
// their held rotations (16 bytes a rider a window).
// Memory: frame 0, the sample while it is searched, one more frame, and O(gaussians + parts x
// frames). There it marks no gaussian static (is_static all 0): give it the moving gaussians
// (still_deviation over every frame finds the static ones). Refuses only what `read` refuses.
using RigidFrameReader = std::function<Status(std::size_t frame, PlyCloud& into)>;
Result<RigidParts> find_rigid_parts_streamed(std::size_t frames, const RigidFrameReader& read,
                                             const RigidOptions& options);

// Whether gaussian g of `frames` follows `poses` (one per frame) within the residuals, as above.
bool follows_poses(std::span<const PlyCloud> frames, std::size_t g, std::span<const Pose> poses,
                   const RigidOptions& options);

// The same at one frame: gaussian g of `frame` against its placement in `reference`, carried by
// `pose`.
bool follows_pose(const PlyCloud& reference, const PlyCloud& frame, std::size_t g,
                  const Pose& pose, const RigidOptions& options);

// How far gaussian g of `frame` is from its placement in `reference` when nothing moved: the
// largest position component difference (+inf when one is not a number) and the sign-free
// quaternion component distance. follows_pose(reference, frame, g, Pose{}, o) holds exactly when
// they are within o.pos_residual and o.rot_residual, so a caller holding one frame at a time
// finds the static gaussians from the largest of them over the frames.
struct StillDeviation {
    double pos = 0, rot = 0;
};
StillDeviation still_deviation(const PlyCloud& reference, const PlyCloud& frame, std::size_t g);

// Horn's absolute orientation: the least-squares pose carrying the positions of `members` (not
// empty) in `from` onto theirs in `to`, its rotation spelled with w >= 0. Deterministic: the same
// clouds and members give the same pose bit for bit.
Pose fit_pose(const PlyCloud& from, const PlyCloud& to, std::span<const std::uint32_t> members);

}  // namespace fourdgs
FOURDGS_PUBLIC_END
