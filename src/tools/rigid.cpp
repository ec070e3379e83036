// Rigid parts of a tracked frame sequence (rigid.hpp).
#include "fourdgs/tools/rigid.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>

#include "fourdgs/tools/rigid_score.hpp"
#include "rigid_hold.hpp"

namespace fourdgs {
namespace {

using namespace rigid_hold;

Vec3 position_of(const PlyCloud& f, std::size_t g) {
    return {f.position[g * 3], f.position[g * 3 + 1], f.position[g * 3 + 2]};
}

std::vector<Pose> fit_poses(std::span<const PlyCloud> frames,
                            std::span<const std::uint32_t> members) {
    std::vector<Pose> poses(frames.size());  // [0] stays the identity: the object frame
    for (std::size_t k = 1; k < frames.size(); ++k)
        poses[k] = fit_pose(frames[0], frames[k], members);
    return poses;
}

// Whether gaussian g of `frame` is where `pose` carries its placement in `reference`, within
// `tol` per component.
bool position_follows(const PlyCloud& reference, const PlyCloud& frame, std::size_t g,
                      const Pose& pose, double tol) {
    const Vec3 p = fourdgs::apply(pose, position_of(reference, g));
    for (int c = 0; c < 3; ++c)
        if (!(std::fabs(p[c] - frame.position[g * 3 + c]) <= tol)) return false;
    return true;
}

// The bound a rider's held rotation is measured against: in the input's levels the box's
// half-width, else the larger of the two residuals.
double ride_rot_of(const RigidOptions& o) {
    return o.rot_levels.half > 0 ? o.rot_levels.half : std::max(o.rot_residual, o.ride_rot_residual);
}

// The same for its rotation: pose ⊗ the reference's, against the frame's, up to sign.
bool rotation_follows(const PlyCloud& reference, const PlyCloud& frame, std::size_t g,
                      const Pose& pose, double tol) {
    return quat_distance(multiply(pose.rotation, rotation_of(reference, g)),
                         rotation_of(frame, g)) <= tol;
}

bool follows_position(std::span<const PlyCloud> frames, std::size_t g,
                      std::span<const Pose> poses, double tol) {
    for (std::size_t k = frames.size(); k-- > 1;)  // the last frames usually moved furthest
        if (!position_follows(frames[0], frames[k], g, poses[k], tol)) return false;
    return true;
}

std::uint32_t spread_bits(std::uint32_t v) {  // 10 bits -> every third bit
    v &= 0x3FF;
    v = (v | (v << 16)) & 0x030000FF;
    v = (v | (v << 8)) & 0x0300F00F;
    v = (v | (v << 4)) & 0x030C30C3;
    v = (v | (v << 2)) & 0x09249249;
    return v;
}

// `ids` sorted by the Morton code of their frame-0 positions (ties by index).
void morton_sort(const PlyCloud& f, std::vector<std::uint32_t>& ids) {
    if (ids.empty()) return;
    Vec3 lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
    for (std::uint32_t g : ids)
        for (int c = 0; c < 3; ++c) {
            lo[c] = std::min(lo[c], double(f.position[g * 3 + c]));
            hi[c] = std::max(hi[c], double(f.position[g * 3 + c]));
        }
    const double side = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1e-30});
    std::vector<std::pair<std::uint32_t, std::uint32_t>> keyed;
    keyed.reserve(ids.size());
    for (std::uint32_t g : ids) {
        std::uint32_t code = 0;
        for (int c = 0; c < 3; ++c) {
            const double u = (f.position[g * 3 + c] - lo[c]) / side;
            code |= spread_bits(static_cast<std::uint32_t>(std::clamp(u, 0.0, 1.0) * 1023)) << c;
        }
        keyed.push_back({code, g});
    }
    std::sort(keyed.begin(), keyed.end());
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = keyed[i].second;
}

// Three gaussians that pin a pose down: edges well above the residual, not nearly collinear.
bool spans_triangle(const PlyCloud& f, std::uint32_t a, std::uint32_t b, std::uint32_t c,
                    double residual) {
    const Vec3 pa = position_of(f, a), pb = position_of(f, b), pc = position_of(f, c);
    const Vec3 u{pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]};
    const Vec3 v{pc[0] - pa[0], pc[1] - pa[1], pc[2] - pa[2]};
    const Vec3 w{pc[0] - pb[0], pc[1] - pb[1], pc[2] - pb[2]};
    auto norm2 = [](const Vec3& x) { return x[0] * x[0] + x[1] * x[1] + x[2] * x[2]; };
    const double shortest = std::min({norm2(u), norm2(v), norm2(w)});
    const double longest = std::max({norm2(u), norm2(v), norm2(w)});
    const Vec3 x{u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    return shortest > 64 * residual * residual && norm2(x) > 0.01 * longest * longest;
}

bool follows_rotation(std::span<const PlyCloud> frames, std::size_t g, std::span<const Pose> poses,
                      double tol) {
    for (std::size_t k = 1; k < frames.size(); ++k)
        if (!rotation_follows(frames[0], frames[k], g, poses[k], tol)) return false;
    return true;
}

// Least squares on the gaussians of `moving` that `poses` carry within `residual` at every frame,
// a few times, each round trimming what leaves it; `support` ends as the last round's.
void refit(std::span<const PlyCloud> frames, std::span<const std::uint32_t> moving,
           double residual, std::vector<Pose>& poses, std::vector<std::uint32_t>& support) {
    for (int round = 0; round < 4; ++round) {
        support.clear();
        for (std::uint32_t g : moving)
            if (follows_position(frames, g, poses, residual)) support.push_back(g);
        if (support.size() < 3) break;
        poses = fit_poses(frames, support);
    }
}

// Found at the riders' residual, a part whose members are mostly rigid is refitted to those
// alone, so that the drift of a few riders does not push rigid members out of the strict
// residual; a part of drifting gaussians keeps the fit to all of them.
// The gaussians the poses were last fitted to are then `members` (returned: whether it was).
bool refit_to_strict(std::span<const PlyCloud> frames, std::span<const std::uint32_t> moving,
                     double residual, std::size_t support, std::vector<Pose>& poses,
                     std::vector<std::uint32_t>& members) {
    std::vector<Pose> strict = poses;
    refit(frames, moving, residual, strict, members);
    if (members.size() < 3 || 2 * members.size() < support) return false;
    poses = std::move(strict);
    return true;
}

// The poses with each frame's rotation the mean turn of the `support` gaussians' own rotations
// since frame 0 (q_k ⊗ q_0^-1, each on `near`'s side of the sign) and the translation that keeps
// their centroid: where the gaussians drift but their rotations turn exactly with the body (as a
// tracked capture's do), this is the rotation that keeps their rotations held, which a fit to
// the drifting positions misses by the drift's share of the body's size.
Pose pose_from_rotations(const PlyCloud& first, const PlyCloud& frame,
                         std::span<const std::uint32_t> support, const Pose& near) {
    Vec3 c0{}, ck{};
    Quat sum{};
    for (std::uint32_t g : support) {
        const Quat q0 = rotation_of(first, g);
        const Quat turn = multiply(rotation_of(frame, g), {-q0[0], -q0[1], -q0[2], q0[3]});
        double dot = 0;
        for (int c = 0; c < 4; ++c) dot += turn[c] * near.rotation[c];
        for (int c = 0; c < 4; ++c) sum[c] += dot < 0 ? -turn[c] : turn[c];
        for (int c = 0; c < 3; ++c) {
            c0[c] += first.position[g * 3 + c];
            ck[c] += frame.position[g * 3 + c];
        }
    }
    const double n = static_cast<double>(support.size());
    Pose p;
    p.rotation = normalized(sum);
    if (p.rotation[3] < 0)  // one spelling of each rotation, as fit_pose
        for (double& x : p.rotation) x = -x;
    const Vec3 r = rotate(p.rotation, {c0[0] / n, c0[1] / n, c0[2] / n});
    for (int c = 0; c < 3; ++c) p.translation[c] = ck[c] / n - r[c];
    return p;
}

std::vector<Pose> poses_from_rotations(std::span<const PlyCloud> frames,
                                       std::span<const std::uint32_t> support,
                                       std::span<const Pose> near) {
    std::vector<Pose> poses(frames.size());
    for (std::size_t k = 1; k < frames.size(); ++k)
        poses[k] = pose_from_rotations(frames[0], frames[k], support, near[k]);
    return poses;
}

// How many of `support` follow `poses` within `position` and rot_residual at every frame.
std::size_t followers(std::span<const PlyCloud> frames, std::span<const std::uint32_t> support,
                      std::span<const Pose> poses, double position, double rotation) {
    std::size_t out = 0;
    for (std::uint32_t g : support)
        out += follows_position(frames, g, poses, position) &&
               follows_rotation(frames, g, poses, rotation);
    return out;
}

// The largest residual of gaussian g against `poses` at any frame: position per component (as
// position_follows measures it; +inf where one is not a number) and rotation (rotation_follows').
struct Residual {
    double pos = 0, rot = 0;
};
Residual residual_of(std::span<const PlyCloud> frames, std::size_t g, std::span<const Pose> poses) {
    Residual out;
    for (std::size_t k = 1; k < frames.size(); ++k) {
        const Vec3 p = fourdgs::apply(poses[k], position_of(frames[0], g));
        for (int c = 0; c < 3; ++c) {
            const double e = std::fabs(p[c] - frames[k].position[g * 3 + c]);
            out.pos = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(out.pos, e);
        }
        out.rot = std::max(out.rot, quat_distance(multiply(poses[k].rotation,
                                                           rotation_of(frames[0], g)),
                                                  rotation_of(frames[k], g)));
    }
    return out;
}

// A part found at the riders' residual takes the poses of its gaussians' rotations
// (poses_from_rotations) where more of its support then follows in position and rotation.
// (Returned: whether it took them.)
bool prefer_rotations(std::span<const PlyCloud> frames, std::span<const std::uint32_t> support,
                      const RigidOptions& o, std::vector<Pose>& poses) {
    if (support.size() < 3) return false;
    std::vector<Pose> turned = poses_from_rotations(frames, support, poses);
    if (followers(frames, support, turned, o.ride_residual, o.rot_residual) <=
        followers(frames, support, poses, o.ride_residual, o.rot_residual))
        return false;
    poses = std::move(turned);
    return true;
}

// A part's riders in ascending order, each rotation kept with its rider.
void sort_riders(RigidPart& part) {
    std::vector<std::uint32_t> order(part.riders.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return part.riders[a] < part.riders[b]; });
    const std::size_t block = 4 * held_windows_kept(part);
    std::vector<std::uint32_t> riders;
    std::vector<float> rotations;
    for (std::uint32_t i : order) {
        riders.push_back(part.riders[i]);
        rotations.insert(rotations.end(), part.rider_rotation.begin() + i * block,
                         part.rider_rotation.begin() + (i + 1) * block);
    }
    part.riders = std::move(riders);
    part.rider_rotation = std::move(rotations);
}

// A part keeps riders only while at most one in this many of the gaussians riding it in position
// fails to hold its rotation: a few that fail are another body's gaussians passing within the
// ride residual (left to the parts searched next), many are a body whose rotations the grid
// cannot hold (rigid.hpp).
constexpr std::size_t kMostAstray = 16;

// The gaussians of `moving` that follow `part`'s poses, into its members and riders (ascending,
// each rider's held rotation with it), and how far they stray (`fit`): riders while few fail to
// hold their rotation (kMostAstray), and with members_ride its members then ride too where theirs
// holds. What each gaussian does against the poses comes from `facts`: member(g) (within the
// residuals at every frame), rides_position(g) (within ride_residual), held(g) (held_rotation
// within the riders' rotation residual) and residual(g) (residual_of), measured on the frames
// held (sort_part) or gathered a frame at a time (find_rigid_parts_streamed).
template <class Facts>
void sort_part_by(std::span<const std::uint32_t> moving, const RigidOptions& o, const Facts& facts,
                  RigidPart& part, PartsFit& fit,
                  std::size_t most_astray = std::numeric_limits<std::size_t>::max()) {
    const bool riding = o.ride_residual > o.pos_residual;
    std::vector<double> held_distance;  // per rider
    auto ride = [&](std::uint32_t g) {
        const std::optional<Held> held = facts.held(g);
        if (!held) return false;
        part.riders.push_back(g);
        // Every window's rotation, or the first's alone (held_window_rotations gives the others).
        const std::span<const Quat> windows = held->per_window.empty() || !o.every_window
                                                  ? std::span<const Quat>(&held->rest, 1)
                                                  : std::span<const Quat>(held->per_window);
        for (const Quat& q : windows)
            for (int c = 0; c < 4; ++c) part.rider_rotation.push_back(static_cast<float>(q[c]));
        held_distance.push_back(held->distance);
        return true;
    };
    std::size_t astray = 0;  // gaussians riding in position whose rotation does not hold
    const bool in_levels = o.rot_levels.half > 0;  // no members there (RigidOptions::rot_levels)
    part.rot_levels = o.rot_levels;
    for (std::uint32_t g : moving) {
        if (!in_levels && facts.member(g)) {
            part.members.push_back(g);
        } else if (riding && facts.rides_position(g)) {
            astray += !ride(g);
        }
        if (astray > most_astray) {  // not to be kept (HeldSoFar::most_astray): no riders
            part.riders.clear(), part.rider_rotation.clear(), part.members.clear();
            return;
        }
    }
    if (astray * kMostAstray > part.riders.size())
        part.riders.clear(), part.rider_rotation.clear(), held_distance.clear();
    if (o.members_ride && !part.riders.empty())
        std::erase_if(part.members, ride);
    // riders (and their rotations) are in `moving`'s order, ascending by index, then the members
    // that ride: sorted here.
    sort_riders(part);
    for (const Pose& pose : part.poses) {
        const Quat q = normalized(pose.rotation);
        fit.rot_gain = std::max(fit.rot_gain, std::fabs(q[0]) + std::fabs(q[1]) + std::fabs(q[2]) +
                                                  std::fabs(q[3]));
        const Vec3 columns[3] = {rotate(q, {1, 0, 0}), rotate(q, {0, 1, 0}), rotate(q, {0, 0, 1})};
        for (int c = 0; c < 3; ++c)
            fit.pos_gain = std::max(fit.pos_gain, std::fabs(columns[0][c]) +
                                                      std::fabs(columns[1][c]) +
                                                      std::fabs(columns[2][c]));
    }
    if (!part.riders.empty()) fit.rider_pos_gain = fit.pos_gain;
    for (double d : held_distance) fit.rider_rot = std::max(fit.rider_rot, d);
    for (std::uint32_t g : part.members) {
        const Residual r = facts.residual(g);
        fit.member_pos = std::max(fit.member_pos, r.pos);
        fit.member_rot = std::max(fit.member_rot, r.rot);
    }
}

// How many of `moving` ride `part` in position but are neither its members nor its riders.
template <class Facts>
std::size_t astray_of(std::span<const std::uint32_t> moving, const Facts& facts,
                      const RigidPart& part) {
    std::size_t riding = 0;  // members too: the ride residual is the looser
    for (std::uint32_t g : moving) riding += facts.rides_position(g);
    return riding - part.members.size() - part.riders.size();
}

// The part kept while its riders are tried held a window at a time (hold_lengths): `part`, how
// far it strays (`fit`), how many of the gaussians riding it in position it leaves astray
// (`astray`, counted where it has riders) and whether its riders hold a window at a time
// (`by_length`; else over the whole sequence, or none do). An astray gaussian is other, its
// rotation restated at every frame, which puts the rotation stream back into every
// keyframe-delta delta (§11.5) for every gaussian updated there: the length kept leaves fewest
// astray, the longest of those, and fewer than the whole sequence. The lengths go longest
// first, or in the input's levels shortest first (a rotation held inside every box of a
// window mostly holds in its halves, not the other way: there the shortest leaves fewest, and
// a longer one's sort stops once it leaves more).
struct HeldSoFar {
    RigidPart& part;
    PartsFit& fit;
    std::size_t& astray;
    bool shortest_first = false;
    bool by_length = false;

    static std::vector<std::size_t> lengths(const RigidOptions& o) {
        std::vector<std::size_t> out = hold_lengths(o.hold_window);
        if (o.rot_levels.half > 0) std::reverse(out.begin(), out.end());
        return out;
    }
    bool gave_up = false;  // none_kept, shortest first

    // Whether no length left to try can be kept.
    bool settled() const {
        return gave_up || (!shortest_first && !part.riders.empty() && astray == 0);
    }
    // A length whose sort kept no riders, or stopped past most_astray. Shortest first (in the
    // input's levels) no longer length can be kept: a rotation held over a window holds over each
    // half of it, so a longer length's riders are among the shorter's and its astray more. (On
    // splat4d's 300 frames at rot_levels=0 every part's riders fail at the shortest length, and
    // the longer ones cost 5x the encode's CPU for nothing.)
    void none_kept() { gave_up = gave_up || shortest_first; }
    // The most astray a length's riders may leave and still be kept: a sort past it stops
    // (sort_part_by's most_astray, hold_per_window's budget). Not settled().
    std::size_t most_astray() const {
        if (part.riders.empty()) return std::numeric_limits<std::size_t>::max();
        return shortest_first && by_length ? astray : astray - 1;
    }
    // `tried` (sorted with its riders held a window of `length` frames at a time), kept where
    // it has riders and leaves no more astray (`left`) than most_astray.
    void offer(RigidPart& tried, const PartsFit& tried_fit, std::size_t left, std::size_t length) {
        if (tried.riders.empty() || !(left <= most_astray())) return;
        tried.hold_window = static_cast<std::uint32_t>(length);
        part = std::move(tried);
        fit = tried_fit;
        astray = left;
        by_length = true;
    }
};

// sort_part_by with what every frame, held, says of each gaussian: frames[k] is frame at[k] of
// the sequence. Where the options allow and the part keeps no rider, or leaves some of the
// gaussians riding it in position astray, its riders are tried again with a rotation held per
// window (HeldSoFar::lengths): the length that leaves fewest astray (the longest of those) is
// the part's hold_window (HeldSoFar); a length's sort stops once it cannot be kept. Where the
// frames are a sample whose part is only claimed here (`claims`: find_rigid_parts_streamed in
// the input's levels, whose settle holds its riders a window at a time over every frame, never
// over the whole), the lengths are tried only where no rider holds over the whole sample: the
// sample's frames lie apart, its windows are not the ones settle holds, and a rotation held
// over every frame of the sample holds in each of its windows.
void sort_part(std::span<const PlyCloud> frames, std::span<const std::size_t> at,
               std::span<const std::uint32_t> moving, const RigidOptions& o, bool claims,
               RigidPart& part, PartsFit& fit) {
    const double ride_rot = ride_rot_of(o);
    struct Facts {
        std::span<const PlyCloud> frames;
        std::span<const std::size_t> at;
        const RigidOptions& o;
        const std::vector<Pose>& poses;
        double ride_rot;
        std::size_t window;  // 0: one held rotation for the sequence
        bool member(std::uint32_t g) const { return follows_poses(frames, g, poses, o); }
        bool rides_position(std::uint32_t g) const {
            return follows_position(frames, g, poses, o.ride_residual);
        }
        std::optional<Held> held(std::uint32_t g) const {
            return window == 0 ? held_rotation(frames, g, poses, ride_rot, o.rot_levels)
                               : held_per_window(frames, at, g, poses, ride_rot, window,
                                                 o.rot_levels);
        }
        Residual residual(std::uint32_t g) const { return residual_of(frames, g, poses); }
    };
    sort_part_by(moving, o, Facts{frames, at, o, part.poses, ride_rot, 0}, part, fit);
    if (o.hold_window == 0 || !(o.ride_residual > o.pos_residual)) return;
    if (claims && o.rot_levels.half > 0 && !part.riders.empty()) return;
    const std::vector<Pose> poses = part.poses;
    const Facts whole{frames, at, o, poses, ride_rot, 0};
    std::size_t best_astray = part.riders.empty() ? 0 : astray_of(moving, whole, part);
    if (!part.riders.empty() && best_astray == 0) return;
    HeldSoFar kept{part, fit, best_astray, o.rot_levels.half > 0};
    for (std::size_t length : HeldSoFar::lengths(o)) {
        if (kept.settled()) break;
        RigidPart tried;
        tried.poses = poses;
        PartsFit tried_fit;
        sort_part_by(moving, o, Facts{frames, at, o, tried.poses, ride_rot, length}, tried,
                     tried_fit, kept.most_astray());
        if (!tried.riders.empty())
            kept.offer(tried, tried_fit, astray_of(moving, whole, tried), length);
        else
            kept.none_kept();
    }
}

}  // namespace

bool follows_pose(const PlyCloud& reference, const PlyCloud& frame, std::size_t g,
                 const Pose& pose, const RigidOptions& o) {
    return position_follows(reference, frame, g, pose, o.pos_residual) &&
           rotation_follows(reference, frame, g, pose, o.rot_residual);
}

StillDeviation still_deviation(const PlyCloud& reference, const PlyCloud& frame, std::size_t g) {
    const Pose still;
    StillDeviation d;
    const Vec3 p = fourdgs::apply(still, position_of(reference, g));
    for (int c = 0; c < 3; ++c) {  // as position_follows measures it
        const double e = std::fabs(p[c] - frame.position[g * 3 + c]);
        d.pos = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(d.pos, e);
    }
    // As rotation_follows measures it.
    d.rot = quat_distance(multiply(still.rotation, rotation_of(reference, g)),
                          rotation_of(frame, g));
    return d;
}

bool follows_poses(std::span<const PlyCloud> frames, std::size_t g, std::span<const Pose> poses,
                   const RigidOptions& o) {
    return follows_position(frames, g, poses, o.pos_residual) &&
           follows_rotation(frames, g, poses, o.rot_residual);
}

namespace {

// How a part's poses were fitted to the frames searched, so that the pose at any other frame is
// fitted the same way (find_rigid_parts_streamed): Horn's least squares on `fit_set`, trimmed of
// what leaves `residual`, then, where `turn_set` is not empty, the mean turn of its gaussians'
// rotations (pose_from_rotations) on that pose's side.
struct Recipe {
    std::vector<std::uint32_t> fit_set;
    double residual = 0;
    std::vector<std::uint32_t> turn_set;
};

// `part` (with how far its gaussians stray, `fit`) as the next of `out`'s parts.
void add_part(RigidPart part, const PartsFit& fit, RigidParts& out) {
    out.fit.member_pos = std::max(out.fit.member_pos, fit.member_pos);
    out.fit.member_rot = std::max(out.fit.member_rot, fit.member_rot);
    out.fit.rider_rot = std::max(out.fit.rider_rot, fit.rider_rot);
    out.fit.pos_gain = std::max(out.fit.pos_gain, fit.pos_gain);
    out.fit.rot_gain = std::max(out.fit.rot_gain, fit.rot_gain);
    out.fit.rider_pos_gain = std::max(out.fit.rider_pos_gain, fit.rider_pos_gain);
    const auto id = static_cast<std::uint32_t>(out.parts.size() + 1);
    for (std::uint32_t g : part.members) out.part_of[g] = id;
    for (std::uint32_t g : part.riders) out.part_of[g] = id, out.rides[g] = 1;
    out.riding_count += part.riders.size();
    out.parts.push_back(std::move(part));
}

// find_rigid_parts, with each part's Recipe into `recipes` where it is not null.
// frames[k] is frame at[k] of the sequence.
RigidParts search_parts(std::span<const PlyCloud> frames, std::span<const std::size_t> at,
                        const RigidOptions& o, std::span<const std::uint8_t> candidates,
                        std::vector<Recipe>* recipes) {
    RigidParts out;
    const std::size_t n = frames.empty() ? 0 : frames.front().count;
    out.is_static.assign(n, 0);
    out.part_of.assign(n, 0);
    const std::vector<Pose> identity(frames.size());
    std::vector<std::uint32_t> moving;
    for (std::size_t g = 0; g < n; ++g) {
        if (!candidates.empty() && !candidates[g]) continue;
        if (follows_poses(frames, g, identity, o)) {
            out.is_static[g] = 1;
            ++out.static_count;
        } else {
            moving.push_back(static_cast<std::uint32_t>(g));
        }
    }
    out.rides.assign(n, 0);
    if (frames.size() < 2 || !(o.pos_residual > 0) || !(o.rot_residual > 0)) {
        out.other_count = moving.size();
        return out;
    }
    morton_sort(frames[0], moving);
    // The residual a hypothesis is scored and refitted at: the riders' where they ride.
    const bool riding = o.ride_residual > o.pos_residual;
    const double found = riding ? o.ride_residual : o.pos_residual;
    std::mt19937_64 rng(o.seed);  // the engine's sequence is fixed by the standard
    constexpr std::size_t kWindow = 16;  // hypothesis members: this close in Morton order
    constexpr std::size_t kScored = 4096;  // a hypothesis is scored on at most this many
    std::vector<std::uint32_t> support;
    PackedPositions packed;
    while (moving.size() >= std::max<std::size_t>(o.min_members, 3) &&
           out.parts.size() < o.max_parts) {
        const std::size_t m = moving.size();
        const std::size_t stride = std::max<std::size_t>(1, m / kScored);
        pack_positions(frames, moving, stride, packed);  // each scored gaussian's frames one run
        std::vector<Pose> best;
        std::size_t best_score = 0;
        for (std::uint32_t h = 0, tries = 0; h < o.hypotheses && tries < 8 * o.hypotheses;
             ++tries) {
            const std::size_t s = rng() % m;
            const std::size_t lo = s >= kWindow ? s - kWindow : 0;
            const std::size_t hi = std::min(m - 1, s + kWindow);
            const std::uint32_t a = moving[s], b = moving[lo + rng() % (hi - lo + 1)],
                                c = moving[lo + rng() % (hi - lo + 1)];
            if (a == b || b == c || a == c || !spans_triangle(frames[0], a, b, c, o.pos_residual))
                continue;
            ++h;
            const std::array<std::uint32_t, 3> tri{a, b, c};
            std::vector<Pose> poses = fit_poses(frames, tri);
            const std::size_t score = count_following(packed, poses, found);  // follows_position
            if (score > best_score) best_score = score, best = std::move(poses);
        }
        if (best.empty()) break;
        // Least squares on the support, trimmed to what stays within the residuals.
        refit(frames, moving, found, best, support);
        Recipe recipe{support, found, {}};
        if (riding) {
            std::vector<std::uint32_t> strict;
            if (refit_to_strict(frames, moving, o.pos_residual, support.size(), best, strict))
                recipe.fit_set = std::move(strict), recipe.residual = o.pos_residual;
            // In the input's levels the poses are the fit to the positions held within
            // pos_residual, the body's turn; the mean turn of the riders' rotations is measured
            // against the normalized input, which a truncating writer biases.
            if (!(o.rot_levels.half > 0) && prefer_rotations(frames, support, o, best))
                recipe.turn_set = support;
        }
        RigidPart part;
        part.poses = best;
        PartsFit fit;
        sort_part(frames, at, moving, o, recipes != nullptr, part, fit);
        if (part.members.size() + part.riders.size() < std::max<std::size_t>(o.min_members, 3))
            break;
        add_part(std::move(part), fit, out);
        std::erase_if(moving, [&](std::uint32_t g) { return out.part_of[g] != 0; });
        if (recipes) recipes->push_back(std::move(recipe));
    }
    out.other_count = moving.size();
    return out;
}

}  // namespace

RigidParts find_rigid_parts(std::span<const PlyCloud> frames, const RigidOptions& o,
                            std::span<const std::uint8_t> candidates) {
    std::vector<std::size_t> at(frames.size());
    for (std::size_t k = 0; k < at.size(); ++k) at[k] = k;
    return search_parts(frames, at, o, candidates, nullptr);
}

bool held_window_rotations(const RigidPart& part, std::size_t window,
                           std::span<const float> rotations, std::vector<float>& out) {
    const std::size_t riders = part.riders.size(), length = part.hold_window;
    if (length == 0 || window >= windows_of(part.poses.size() - 1, length) || riders == 0)
        return false;  // (poses are never empty where hold_window is set)
    const std::size_t k0 = window * length, k1 = std::min(part.poses.size(), k0 + length);
    if (rotations.size() / 4 / riders < k1 - k0) return false;
    out.resize(riders * 4);
    for (std::size_t i = 0; i < riders; ++i) {
        // The window before's, as the search held it (`out` may be part.rider_rotation: rider
        // i's is read before it is written).
        const float* previous =
            window > 0 ? held_rotation_of_rider(part, i, (window - 1) * length).data() : nullptr;
        // Unbounded: the search held every rider within its bound, where the choice is the same.
        const std::optional<Held> h = hold_read(rotations.data() + i * 4, riders * 4, k0, k1,
                                                part.poses, std::numeric_limits<double>::infinity(),
                                                part.rot_levels, previous);
        if (!h) return false;  // (an unbounded hold has one)
        for (int c = 0; c < 4; ++c) out[i * 4 + c] = static_cast<float>(h->rest[c]);
    }
    return true;
}

namespace {

// What the passes over every frame gather of a gaussian the sample put in a part, against the
// part's poses: its largest residual (residual_of), its rotation carried into the part's frame
// (R_k^-1 ⊗ q_k, on frame 0's side of the sign) as a range and a sum, for held_rotation's two
// candidates (`mid`, `mean`), and then their largest distances from its own (held_distance).
struct Gathered {
    Residual largest;
    Quat lo{}, hi{}, sum{};
    Quat mid{}, mean{};
    double mid_distance = 0, mean_distance = 0;
};

double largest_of(double so_far, double e) {
    return std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(so_far, e);
}

// The pose at `frame` by `recipe`: Horn on its gaussians, refitted to those the pose carries
// within the recipe's residual at this frame (a few rounds, as refit does over the frames held).
Pose pose_at(const PlyCloud& first, const PlyCloud& frame, const Recipe& recipe,
             std::vector<std::uint32_t>& kept) {
    if (recipe.fit_set.size() < 3) return Pose{};  // a part dropped (find_rigid_parts_streamed)
    Pose pose = fit_pose(first, frame, recipe.fit_set);
    std::size_t fitted = recipe.fit_set.size();
    for (int round = 0; round < 3; ++round) {
        kept.clear();
        for (std::uint32_t g : recipe.fit_set)
            if (position_follows(first, frame, g, pose, recipe.residual)) kept.push_back(g);
        if (kept.size() < 3 || kept.size() == fitted) break;
        pose = fit_pose(first, frame, kept);
        fitted = kept.size();
    }
    if (!recipe.turn_set.empty()) pose = pose_from_rotations(first, frame, recipe.turn_set, pose);
    return pose;
}

// The held rotation's two candidates, as held_rotation makes them, from the gathered range and sum.
void held_candidates(Gathered& g) {
    g.mid = normalized({(g.lo[0] + g.hi[0]) / 2, (g.lo[1] + g.hi[1]) / 2, (g.lo[2] + g.hi[2]) / 2,
                        (g.lo[3] + g.hi[3]) / 2});
    g.mean = normalized(g.sum);
}

// Frame k's share of what is gathered of gaussian g (in part `pose`'s frame).
void gather(const PlyCloud& first, const PlyCloud& frame, std::uint32_t g, const Pose& pose,
            Gathered& out) {
    const Vec3 p = fourdgs::apply(pose, position_of(first, g));
    for (int c = 0; c < 3; ++c)
        out.largest.pos = largest_of(out.largest.pos, std::fabs(p[c] - frame.position[g * 3 + c]));
    const Quat q0 = rotation_of(first, g), qk = rotation_of(frame, g);
    out.largest.rot =
        largest_of(out.largest.rot, quat_distance(multiply(pose.rotation, q0), qk));
    const Quat& r = pose.rotation;
    Quat local = multiply({-r[0], -r[1], -r[2], r[3]}, qk);
    double dot = 0;
    for (int c = 0; c < 4; ++c) dot += local[c] * q0[c];
    for (int c = 0; c < 4; ++c) {
        if (dot < 0) local[c] = -local[c];
        out.lo[c] = std::min(out.lo[c], local[c]);
        out.hi[c] = std::max(out.hi[c], local[c]);
        out.sum[c] += local[c];
    }
}

// Frame k's share of the held candidates' distances (held_distance: as stored, f32 normalized).
void measure_held(const PlyCloud& frame, std::uint32_t g, const Pose& pose, Gathered& out) {
    auto distance = [&](Quat rest) {
        for (double& c : rest) c = static_cast<float>(c);
        return quat_distance(multiply(pose.rotation, normalized(rest)), rotation_of(frame, g));
    };
    out.mid_distance = largest_of(out.mid_distance, distance(out.mid));
    out.mean_distance = largest_of(out.mean_distance, distance(out.mean));
}

// held_rotation's choice from what was gathered: the midrange or the mean, whichever strays
// less, while within `tol`.
std::optional<Held> held_of(const Gathered& g, double tol) {
    const double inf = std::numeric_limits<double>::infinity();
    Held best{g.mid, g.mid_distance <= tol ? g.mid_distance : inf, {}};
    if (g.mean_distance <= std::min(tol, best.distance) && g.mean_distance < best.distance)
        best = {g.mean, g.mean_distance, {}};
    if (!(best.distance <= tol)) return std::nullopt;
    return best;
}

// Refused: frame k not holding `count` gaussians' positions and rotations (the frames are read
// again for each pass: one that changed since must not be indexed past its end).
Status check_tracked(const PlyCloud& f, std::size_t k, std::size_t count) {
    if (f.count == count && f.position.size() >= count * 3 && f.rotation.size() >= count * 4)
        return ok_status();
    return make_error(ErrorKind::invalid_argument, refusal::kFramesNotTracked,
                      "frame " + std::to_string(k) + " holds " + std::to_string(f.count) +
                          " gaussians but frame 0 holds " + std::to_string(count) +
                          "; the rigid-part search needs the same gaussians in every frame");
}

Status read_tracked(const RigidFrameReader& read, std::size_t k, std::size_t count,
                    PlyCloud& into) {
    FOURDGS_TRY(read(k, into));
    return check_tracked(into, k, count);
}

// The state of the streamed search after the sample: the parts found there (their poses to be
// fitted again at every frame by their recipes), which part each gaussian may belong to, and
// what is gathered of those gaussians. Memory: frame 0, one more frame, and O(gaussians + parts
// x frames), whatever the count of frames.
struct Streamed {
    PlyCloud first;
    std::vector<Recipe> recipes;
    std::vector<std::uint32_t> part_of;  // per gaussian: 0 none, j + 1 for recipes[j]
    std::vector<std::vector<Pose>> poses;  // per part, per frame
    std::vector<Gathered> gathered;        // per gaussian (those of no part: unused)
};

// One pass over every frame: each part's pose at each frame, and what is gathered against it.
Status gather_poses(std::size_t frames, const RigidFrameReader& read, Streamed& s) {
    for (std::size_t j = 0; j < s.recipes.size(); ++j) s.poses[j].assign(frames, Pose{});
    for (std::size_t g = 0; g < s.part_of.size(); ++g)
        if (s.part_of[g]) {
            Gathered& t = s.gathered[g];
            t.lo = t.hi = t.sum = rotation_of(s.first, static_cast<std::uint32_t>(g));
        }
    PlyCloud frame;
    std::vector<std::uint32_t> kept;
    for (std::size_t k = 1; k < frames; ++k) {
        FOURDGS_TRY(read_tracked(read, k, s.part_of.size(), frame));
        for (std::size_t j = 0; j < s.recipes.size(); ++j)
            s.poses[j][k] = pose_at(s.first, frame, s.recipes[j], kept);
        for (std::uint32_t g = 0; g < s.part_of.size(); ++g)
            if (s.part_of[g]) gather(s.first, frame, g, s.poses[s.part_of[g] - 1][k], s.gathered[g]);
    }
    return ok_status();
}

// A second pass, where gaussians may ride: the held candidates' distances at every frame, of
// those within the ride residual in position.
Status gather_held(std::size_t frames, const RigidFrameReader& read, const RigidOptions& o,
                   Streamed& s) {
    std::vector<std::uint32_t> riding;
    for (std::uint32_t g = 0; g < s.part_of.size(); ++g)
        if (s.part_of[g] && s.gathered[g].largest.pos <= o.ride_residual) {
            held_candidates(s.gathered[g]);
            riding.push_back(g);
        }
    if (riding.empty()) return ok_status();
    PlyCloud scratch;
    for (std::size_t k = 0; k < frames; ++k) {
        if (k > 0) FOURDGS_TRY(read_tracked(read, k, s.part_of.size(), scratch));
        const PlyCloud& frame = k == 0 ? s.first : scratch;
        for (std::uint32_t g : riding)
            measure_held(frame, g, s.poses[s.part_of[g] - 1][k], s.gathered[g]);
    }
    return ok_status();
}

// Riders' rotations held a window of `length` frames at a time (RigidOptions::hold_window), for
// the gaussians `who` (ascending): each one's held rotation per window (the first window's alone
// where `every_window` is false) and its largest distance (hold_over), from the frames read a
// window at a time. A part (index part_of - 1) whose gaussians left astray by a failed hold
// (`astray_if_failed`, per who) pass its `budget` is given up: its others are not held further
// (settle: it cannot be taken at this length). Memory: one window's rotations of `who` and their
// held rotations, 16 bytes each.
struct PerWindow {
    std::vector<std::uint32_t> who;
    std::vector<std::uint8_t> astray_if_failed;  // per who
    std::size_t length = 0, windows = 0;
    bool every_window = true;
    std::vector<float> rests;      // per who, per window kept: 4
    std::vector<double> distance;  // per who: +inf where some window holds none
    std::vector<std::size_t> budget, failed;  // per part
    std::size_t kept() const { return every_window ? windows : 1; }
    bool given_up(std::size_t part) const { return failed[part] > budget[part]; }
};

Status hold_per_window(std::size_t frames, const RigidFrameReader& read, const Streamed& s,
                       double tol, const RotationLevels& levels, PerWindow& out) {
    const std::size_t m = out.who.size(), length = out.length;
    out.windows = windows_of(frames - 1, length);
    out.rests.assign(m * out.kept() * 4, 0.0f);
    out.distance.assign(m, 0);
    out.failed.assign(out.budget.size(), 0);
    std::vector<float> window(length * m * 4);  // frame k0 + i's rotation of who[j] at (i m + j) 4
    std::vector<float> previous(m * 4);  // who[j]'s held in the window before (hold_over)
    PlyCloud scratch;
    for (std::size_t w = 0; w < out.windows; ++w) {
        const std::size_t k0 = w * length, k1 = std::min(frames, k0 + length);
        for (std::size_t k = k0; k < k1; ++k) {
            if (k > 0) FOURDGS_TRY(read_tracked(read, k, s.part_of.size(), scratch));
            const PlyCloud& f = k == 0 ? s.first : scratch;
            for (std::size_t j = 0; j < m; ++j)
                std::copy_n(f.rotation.begin() + out.who[j] * std::size_t{4}, 4,
                            window.begin() + ((k - k0) * m + j) * 4);
        }
        for (std::size_t j = 0; j < m; ++j) {
            if (!(out.distance[j] <= tol)) continue;
            const std::size_t part = s.part_of[out.who[j]] - 1;
            const std::optional<Held> h =
                out.given_up(part) ? std::nullopt
                                   : hold_read(window.data() + j * 4, m * 4, k0, k1,
                                               s.poses[part], tol, levels,
                                               w > 0 ? &previous[j * 4] : nullptr);
            if (!h) {
                out.distance[j] = std::numeric_limits<double>::infinity();
                out.failed[part] += out.astray_if_failed[j];
                continue;
            }
            for (int c = 0; c < 4; ++c) previous[j * 4 + c] = static_cast<float>(h->rest[c]);
            if (w < out.kept())
                for (int c = 0; c < 4; ++c)
                    out.rests[(j * out.kept() + w) * 4 + c] = static_cast<float>(h->rest[c]);
            out.distance[j] = std::max(out.distance[j], h->distance);
        }
    }
    return ok_status();
}

// What the passes gathered of each gaussian, as sort_part_by asks it; the held rotation from
// `windowed` where it is set, else held over the whole sequence (held_of).
struct GatheredFacts {
    const std::vector<Gathered>& gathered;
    const RigidOptions& o;
    double ride_rot;
    const PerWindow* windowed = nullptr;
    bool member(std::uint32_t g) const {
        return gathered[g].largest.pos <= o.pos_residual &&
               gathered[g].largest.rot <= o.rot_residual;
    }
    bool rides_position(std::uint32_t g) const { return gathered[g].largest.pos <= o.ride_residual; }
    std::optional<Held> held(std::uint32_t g) const {
        // In the input's levels the whole sequence is not tried: its candidate is the programme's
        // over every frame, which the one pass's range and sum cannot give (riders hold per
        // window there: hold_per_window keeps a window's rotations).
        if (!windowed) {
            if (o.rot_levels.half > 0) return std::nullopt;
            return held_of(gathered[g], ride_rot);
        }
        const PerWindow& w = *windowed;
        const auto at = std::lower_bound(w.who.begin(), w.who.end(), g);
        const auto j = static_cast<std::size_t>(at - w.who.begin());
        if (at == w.who.end() || *at != g || !(w.distance[j] <= ride_rot)) return std::nullopt;
        Held out{{}, w.distance[j], std::vector<Quat>(w.kept())};
        for (std::size_t k = 0; k < w.kept(); ++k)
            for (int c = 0; c < 4; ++c) out.per_window[k][c] = w.rests[(j * w.kept() + k) * 4 + c];
        out.rest = out.per_window.front();
        return out;
    }
    Residual residual(std::uint32_t g) const { return gathered[g].largest; }
};

// Each part's members and riders from what was gathered (sort_part_by), in `order`; where a
// part keeps no rider with one held rotation, or leaves some gaussians riding it in position
// astray, its riders tried again held a window at a time as sort_part does (one more pass over
// the frames for each length tried); a part left with fewer than min_members is dropped, its
// gaussians left to the temporal model.
Result<RigidParts> settle(std::size_t frames, const RigidFrameReader& read, Streamed& s,
                          std::span<const std::uint32_t> order, const RigidOptions& o) {
    RigidParts out;
    const std::size_t n = s.part_of.size(), count = s.recipes.size();
    out.is_static.assign(n, 0);
    out.part_of.assign(n, 0);
    out.rides.assign(n, 0);
    const double ride_rot = ride_rot_of(o);
    std::vector<std::vector<std::uint32_t>> candidates(count);
    std::vector<RigidPart> parts(count);
    std::vector<PartsFit> fits(count);
    std::vector<std::uint32_t> retry;  // parts (j + 1) whose riders may hold per window
    std::vector<std::size_t> astray(count, 0);  // HeldSoFar's, per part
    const GatheredFacts whole{s.gathered, o, ride_rot};
    std::vector<HeldSoFar> kept;
    for (std::size_t j = 0; j < count; ++j) {
        for (std::uint32_t g : order)
            if (s.part_of[g] == j + 1) candidates[j].push_back(g);
        parts[j].poses = std::move(s.poses[j]);
        sort_part_by(candidates[j], o, whole, parts[j], fits[j]);
        if (!parts[j].riders.empty()) astray[j] = astray_of(candidates[j], whole, parts[j]);
        if ((parts[j].riders.empty() || astray[j] > 0) && o.ride_residual > o.pos_residual)
            retry.push_back(static_cast<std::uint32_t>(j + 1));
        kept.push_back({parts[j], fits[j], astray[j], o.rot_levels.half > 0});
    }
    // A length's pass gives a part up once it cannot be kept (HeldSoFar::most_astray).
    for (std::size_t length : HeldSoFar::lengths(o)) {
        std::erase_if(retry, [&](std::uint32_t j) { return kept[j - 1].settled(); });
        if (retry.empty()) break;
        PerWindow windowed;
        windowed.length = length;
        windowed.every_window = o.every_window;
        for (std::uint32_t g = 0; g < n; ++g)
            if (std::binary_search(retry.begin(), retry.end(), s.part_of[g]) &&
                whole.rides_position(g)) {
                windowed.who.push_back(g);
                // A failed hold leaves it astray unless it is a member (none in the input's levels).
                windowed.astray_if_failed.push_back(o.rot_levels.half > 0 || !whole.member(g));
            }
        if (windowed.who.empty()) break;
        windowed.budget.assign(count, std::numeric_limits<std::size_t>::max());
        for (std::uint32_t j : retry) {
            s.poses[j - 1] = parts[j - 1].poses;  // hold_per_window's
            windowed.budget[j - 1] = kept[j - 1].most_astray();
        }
        if (o.rot_levels.half > 0) {
            // There each gaussian riding a part in position rides it or is astray, and with more
            // than 1 in kMostAstray + 1 astray sort_part_by keeps no rider: no further hold of
            // that part can change it.
            std::vector<std::size_t> riding(count, 0);
            for (std::uint32_t g : windowed.who) ++riding[s.part_of[g] - 1];
            for (std::uint32_t j : retry)
                windowed.budget[j - 1] =
                    std::min(windowed.budget[j - 1], riding[j - 1] / (kMostAstray + 1));
        }
        FOURDGS_TRY(hold_per_window(frames, read, s, ride_rot, o.rot_levels, windowed));
        const GatheredFacts facts{s.gathered, o, ride_rot, &windowed};
        for (std::uint32_t j : retry) {
            if (windowed.given_up(j - 1)) {
                kept[j - 1].none_kept();
                continue;
            }
            RigidPart tried;
            tried.poses = std::move(s.poses[j - 1]);
            PartsFit fit;
            sort_part_by(candidates[j - 1], o, facts, tried, fit);
            if (!tried.riders.empty())
                kept[j - 1].offer(tried, fit, astray_of(candidates[j - 1], whole, tried), length);
            else
                kept[j - 1].none_kept();
        }
    }
    for (std::size_t j = 0; j < count; ++j) {
        if (parts[j].members.size() + parts[j].riders.size() <
            std::max<std::size_t>(o.min_members, 3))
            continue;
        add_part(std::move(parts[j]), fits[j], out);
    }
    out.other_count = static_cast<std::size_t>(
        std::count(out.part_of.begin(), out.part_of.end(), std::uint32_t{0}));
    return out;
}

}  // namespace

Result<RigidParts> find_rigid_parts_streamed(std::size_t frames, const RigidFrameReader& read,
                                             const RigidOptions& o) {
    const std::vector<std::size_t> at = rigid_sample_frames(frames);
    std::vector<PlyCloud> sample(at.size());
    for (std::size_t i = 0; i < at.size(); ++i) {
        FOURDGS_TRY(read(at[i], sample[i]));
        FOURDGS_TRY(check_tracked(sample[i], at[i], sample[0].count));  // frame 0 sets the count
    }
    if (frames <= kRigidSampleFrames) return find_rigid_parts(sample, o);  // every frame
    Streamed s;
    const RigidParts found = search_parts(sample, at, o, {}, &s.recipes);
    // Gaussians in the order the search took them (the Morton order of the moving ones).
    std::vector<std::uint32_t> order;
    for (std::uint32_t g = 0; g < found.is_static.size(); ++g)
        if (!found.is_static[g]) order.push_back(g);
    morton_sort(sample[0], order);
    s.first = std::move(sample[0]);
    sample = {};  // the sample is not held through the passes
    s.part_of = found.part_of;
    for (std::size_t j = 0; j < s.recipes.size(); ++j)
        if (s.recipes[j].fit_set.size() < 3)  // no pose to fit at the other frames
            for (std::uint32_t& p : s.part_of) p = p == j + 1 ? 0 : p;
    for (Recipe& r : s.recipes)
        if (r.fit_set.size() < 3) r.fit_set.clear();
    s.poses.resize(s.recipes.size());
    s.gathered.resize(s.part_of.size());
    if (!found.parts.empty()) {
        FOURDGS_TRY(gather_poses(frames, read, s));
        if (o.ride_residual > o.pos_residual && !(o.rot_levels.half > 0))
            FOURDGS_TRY(gather_held(frames, read, o, s));
    }
    return settle(frames, read, s, order, o);
}

}  // namespace fourdgs
