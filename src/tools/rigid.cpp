// Rigid parts of a tracked frame sequence (rigid.hpp).
#include "fourdgs/tools/rigid.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>

namespace fourdgs {
namespace {

Vec3 position_of(const PlyCloud& f, std::size_t g) {
    return {f.position[g * 3], f.position[g * 3 + 1], f.position[g * 3 + 2]};
}

Quat rotation_of(const PlyCloud& f, std::size_t g) {
    return normalized({f.rotation[g * 4], f.rotation[g * 4 + 1], f.rotation[g * 4 + 2],
                       f.rotation[g * 4 + 3]});
}

// Eigenvector of the largest eigenvalue of a symmetric 4 x 4 matrix (cyclic Jacobi).
std::array<double, 4> top_eigenvector(std::array<std::array<double, 4>, 4> a) {
    std::array<std::array<double, 4>, 4> v{};
    for (int i = 0; i < 4; ++i) v[i][i] = 1;
    for (int sweep = 0; sweep < 32; ++sweep) {
        double off = 0;
        for (int p = 0; p < 4; ++p)
            for (int q = p + 1; q < 4; ++q) off += a[p][q] * a[p][q];
        if (off < 1e-30) break;
        for (int p = 0; p < 4; ++p)
            for (int q = p + 1; q < 4; ++q) {
                if (a[p][q] == 0) continue;
                const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
                const double t = (theta >= 0 ? 1.0 : -1.0) /
                                 (std::fabs(theta) + std::sqrt(theta * theta + 1));
                const double c = 1 / std::sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < 4; ++k) {  // columns p, q
                    const double akp = a[k][p], akq = a[k][q];
                    a[k][p] = c * akp - s * akq;
                    a[k][q] = s * akp + c * akq;
                }
                for (int k = 0; k < 4; ++k) {  // rows p, q
                    const double apk = a[p][k], aqk = a[q][k];
                    a[p][k] = c * apk - s * aqk;
                    a[q][k] = s * apk + c * aqk;
                }
                for (int k = 0; k < 4; ++k) {
                    const double vkp = v[k][p], vkq = v[k][q];
                    v[k][p] = c * vkp - s * vkq;
                    v[k][q] = s * vkp + c * vkq;
                }
            }
    }
    int best = 0;
    for (int i = 1; i < 4; ++i)
        if (a[i][i] > a[best][best]) best = i;
    return {v[0][best], v[1][best], v[2][best], v[3][best]};
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

// The sign-free largest component difference of two unit quaternions.
double quat_distance(const Quat& got, const Quat& want) {
    double same = 0, flipped = 0;
    for (int c = 0; c < 4; ++c) {
        same = std::max(same, std::fabs(got[c] - want[c]));
        flipped = std::max(flipped, std::fabs(got[c] + want[c]));
    }
    return std::min(same, flipped);
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

// A rider's held rotation and its largest distance, carried by the poses, from its own.
struct Held {
    Quat rest;
    double distance = 0;
};

// The largest distance at any frame of `rest`, as it is stored (the f32 components the converter
// gives the writer, normalized) and carried by the poses, from the frame's rotation; past `limit`
// it stops counting and says +inf.
double held_distance(std::span<const PlyCloud> frames, std::size_t g, std::span<const Pose> poses,
                     Quat rest, double limit) {
    for (double& c : rest) c = static_cast<float>(c);
    const Quat stored = normalized(rest);
    double distance = 0;
    for (std::size_t k = 0; k < frames.size(); ++k) {
        const double d =
            quat_distance(multiply(poses[k].rotation, stored), rotation_of(frames[k], g));
        if (!(d <= limit)) return std::numeric_limits<double>::infinity();
        distance = std::max(distance, d);
    }
    return distance;
}

// The rotation a rider of `poses` is held at, when there is one within `tol` of every frame's
// rotation (carried by its pose): of its rotations carried into the object frame (R_k^-1 ⊗ q_k,
// on frame 0's side of the sign), the midrange or the mean, whichever strays less. Not frame 0's:
// a rotation rounded to the input's grid (a .splat's u8 components) would then spend two
// roundings of the budget; the midrange spends one, and the mean of many frames' roundings
// nearly none beyond the frame's own (the grid's share of the rotation tolerance is what the
// farthest rider leaves, parts_share in grid_plan.hpp).
std::optional<Held> held_rotation(std::span<const PlyCloud> frames, std::size_t g,
                                  std::span<const Pose> poses, double tol) {
    const Quat q0 = rotation_of(frames[0], g);
    Quat lo = q0, hi = q0, sum = q0;
    for (std::size_t k = 1; k < frames.size(); ++k) {
        const Quat& r = poses[k].rotation;
        Quat local = multiply({-r[0], -r[1], -r[2], r[3]}, rotation_of(frames[k], g));
        double dot = 0;
        for (int c = 0; c < 4; ++c) dot += local[c] * q0[c];
        for (int c = 0; c < 4; ++c) {
            if (dot < 0) local[c] = -local[c];
            lo[c] = std::min(lo[c], local[c]);
            hi[c] = std::max(hi[c], local[c]);
            sum[c] += local[c];
        }
    }
    Held best{normalized({(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2,
                          (lo[3] + hi[3]) / 2}),
              0};
    best.distance = held_distance(frames, g, poses, best.rest, tol);
    const Quat mean = normalized(sum);
    if (const double d = held_distance(frames, g, poses, mean, std::min(tol, best.distance));
        d < best.distance)
        best = {mean, d};
    if (!(best.distance <= tol)) return std::nullopt;
    return best;
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
    std::vector<std::uint32_t> riders;
    std::vector<float> rotations;
    for (std::uint32_t i : order) {
        riders.push_back(part.riders[i]);
        rotations.insert(rotations.end(), part.rider_rotation.begin() + i * 4,
                         part.rider_rotation.begin() + i * 4 + 4);
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
                  RigidPart& part, PartsFit& fit) {
    const bool riding = o.ride_residual > o.pos_residual;
    std::vector<double> held_distance;  // per rider
    auto ride = [&](std::uint32_t g) {
        const std::optional<Held> held = facts.held(g);
        if (!held) return false;
        part.riders.push_back(g);
        for (int c = 0; c < 4; ++c) part.rider_rotation.push_back(static_cast<float>(held->rest[c]));
        held_distance.push_back(held->distance);
        return true;
    };
    std::size_t astray = 0;  // gaussians riding in position whose rotation does not hold
    for (std::uint32_t g : moving) {
        if (facts.member(g))
            part.members.push_back(g);
        else if (riding && facts.rides_position(g))
            astray += !ride(g);
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

// sort_part_by with what every frame, held, says of each gaussian.
void sort_part(std::span<const PlyCloud> frames, std::span<const std::uint32_t> moving,
               const RigidOptions& o, RigidPart& part, PartsFit& fit) {
    const double ride_rot = std::max(o.rot_residual, o.ride_rot_residual);
    struct {
        std::span<const PlyCloud> frames;
        const RigidOptions& o;
        const RigidPart& part;
        double ride_rot;
        bool member(std::uint32_t g) const { return follows_poses(frames, g, part.poses, o); }
        bool rides_position(std::uint32_t g) const {
            return follows_position(frames, g, part.poses, o.ride_residual);
        }
        std::optional<Held> held(std::uint32_t g) const {
            return held_rotation(frames, g, part.poses, ride_rot);
        }
        Residual residual(std::uint32_t g) const { return residual_of(frames, g, part.poses); }
    } facts{frames, o, part, ride_rot};
    sort_part_by(moving, o, facts, part, fit);
}

}  // namespace

Pose fit_pose(const PlyCloud& from, const PlyCloud& to, std::span<const std::uint32_t> members) {
    Vec3 ca{}, cb{};
    for (std::uint32_t g : members)
        for (int c = 0; c < 3; ++c) {
            ca[c] += from.position[g * 3 + c];
            cb[c] += to.position[g * 3 + c];
        }
    const double n = static_cast<double>(members.size());
    for (int c = 0; c < 3; ++c) ca[c] /= n, cb[c] /= n;
    std::array<std::array<double, 3>, 3> s{};
    for (std::uint32_t g : members)
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                s[i][j] += (from.position[g * 3 + i] - ca[i]) * (to.position[g * 3 + j] - cb[j]);
    const double sxx = s[0][0], sxy = s[0][1], sxz = s[0][2], syx = s[1][0], syy = s[1][1],
                 syz = s[1][2], szx = s[2][0], szy = s[2][1], szz = s[2][2];
    const std::array<std::array<double, 4>, 4> nm{{
        {sxx + syy + szz, syz - szy, szx - sxz, sxy - syx},
        {syz - szy, sxx - syy - szz, sxy + syx, szx + sxz},
        {szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy},
        {sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz},
    }};
    const std::array<double, 4> e = top_eigenvector(nm);  // w x y z
    Pose p;
    p.rotation = normalized({e[1], e[2], e[3], e[0]});
    if (p.rotation[3] < 0)  // one spelling of each rotation, for deterministic tracks
        for (double& x : p.rotation) x = -x;
    const Vec3 r = rotate(p.rotation, ca);
    p.translation = {cb[0] - r[0], cb[1] - r[1], cb[2] - r[2]};
    return p;
}

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

std::vector<std::size_t> rigid_sample_frames(std::size_t frames) {
    std::vector<std::size_t> out;
    const std::size_t n = std::min(frames, kRigidSampleFrames);
    for (std::size_t i = 0; i < n; ++i) out.push_back(n == 1 ? 0 : i * (frames - 1) / (n - 1));
    return out;
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
RigidParts search_parts(std::span<const PlyCloud> frames, const RigidOptions& o,
                        std::span<const std::uint8_t> candidates, std::vector<Recipe>* recipes) {
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
    std::vector<std::uint32_t> scored, support;
    while (moving.size() >= std::max<std::size_t>(o.min_members, 3) &&
           out.parts.size() < o.max_parts) {
        const std::size_t m = moving.size();
        const std::size_t stride = std::max<std::size_t>(1, m / kScored);
        scored.clear();
        for (std::size_t i = 0; i < m; i += stride) scored.push_back(moving[i]);
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
            std::size_t score = 0;
            for (std::uint32_t g : scored)
                score += follows_position(frames, g, poses, found);
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
            if (prefer_rotations(frames, support, o, best)) recipe.turn_set = support;
        }
        RigidPart part;
        part.poses = best;
        PartsFit fit;
        sort_part(frames, moving, o, part, fit);
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
    return search_parts(frames, o, candidates, nullptr);
}

std::span<const float, 4> rider_rotation(const RigidPart& part, std::uint32_t g) {
    const auto at = std::lower_bound(part.riders.begin(), part.riders.end(), g);
    const auto i = static_cast<std::size_t>(at - part.riders.begin());
    return std::span<const float, 4>(part.rider_rotation.data() + i * 4, 4);
}

void to_object_frame(const Pose& pose, float* position) {
    const Quat inverse{-pose.rotation[0], -pose.rotation[1], -pose.rotation[2], pose.rotation[3]};
    const Vec3 local = rotate(inverse, {position[0] - pose.translation[0],
                                        position[1] - pose.translation[1],
                                        position[2] - pose.translation[2]});
    for (int c = 0; c < 3; ++c) position[c] = static_cast<float>(local[c]);
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
    Held best{g.mid, g.mid_distance <= tol ? g.mid_distance : inf};
    if (g.mean_distance <= std::min(tol, best.distance) && g.mean_distance < best.distance)
        best = {g.mean, g.mean_distance};
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

// Each part's members and riders from what was gathered (sort_part_by), in `order`; a part left
// with fewer than min_members is dropped, its gaussians left to the temporal model.
RigidParts settle(Streamed& s, std::span<const std::uint32_t> order, const RigidOptions& o) {
    RigidParts out;
    const std::size_t n = s.part_of.size();
    out.is_static.assign(n, 0);
    out.part_of.assign(n, 0);
    out.rides.assign(n, 0);
    const double ride_rot = std::max(o.rot_residual, o.ride_rot_residual);
    std::vector<std::uint32_t> candidates;
    for (std::size_t j = 0; j < s.recipes.size(); ++j) {
        candidates.clear();
        for (std::uint32_t g : order)
            if (s.part_of[g] == j + 1) candidates.push_back(g);
        struct {
            const std::vector<Gathered>& gathered;
            const RigidOptions& o;
            double ride_rot;
            bool member(std::uint32_t g) const {
                return gathered[g].largest.pos <= o.pos_residual &&
                       gathered[g].largest.rot <= o.rot_residual;
            }
            bool rides_position(std::uint32_t g) const {
                return gathered[g].largest.pos <= o.ride_residual;
            }
            std::optional<Held> held(std::uint32_t g) const { return held_of(gathered[g], ride_rot); }
            Residual residual(std::uint32_t g) const { return gathered[g].largest; }
        } facts{s.gathered, o, ride_rot};
        RigidPart part;
        part.poses = std::move(s.poses[j]);
        PartsFit fit;
        sort_part_by(candidates, o, facts, part, fit);
        if (part.members.size() + part.riders.size() < std::max<std::size_t>(o.min_members, 3))
            continue;
        add_part(std::move(part), fit, out);
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
    const RigidParts found = search_parts(sample, o, {}, &s.recipes);
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
        if (o.ride_residual > o.pos_residual) FOURDGS_TRY(gather_held(frames, read, o, s));
    }
    return settle(s, order, o);
}

}  // namespace fourdgs
