// The box of a rotation in the input's 8-bit levels, and the unit quaternion deepest inside it
// (rotation_box.hpp).
#include "rotation_box.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace fourdgs::rotation_box {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kSearchRadius = 4;  // grid_point_in_box: bins tried around the deepest point

bool is_top_byte(float v_c) { return static_cast<double>(v_c) * 128 + 128 == 255; }

// The box moved in by `t` on every closed side, and cut to [-1, 1] (no unit quaternion has a
// component outside it, so nothing is lost).
Box shrunk(const Box& b, double t) {
    Box s;
    for (int c = 0; c < 4; ++c) {
        s.lo[c] = std::max(-1.0, b.lo[c] + t);
        s.hi[c] = std::min(1.0, b.hi[c] - t);
    }
    return s;
}

bool empty(const Box& b) {
    for (int c = 0; c < 4; ++c)
        if (!(b.lo[c] <= b.hi[c])) return true;
    return false;
}

// The point of the box nearest the origin, and its corner farthest from it.
Quat nearest_point(const Box& b) {
    Quat p;
    for (int c = 0; c < 4; ++c) p[c] = std::clamp(0.0, b.lo[c], b.hi[c]);
    return p;
}

Quat farthest_corner(const Box& b) {
    Quat p;
    for (int c = 0; c < 4; ++c) p[c] = std::fabs(b.lo[c]) > std::fabs(b.hi[c]) ? b.lo[c] : b.hi[c];
    return p;
}

double norm2(const Quat& q) { return q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]; }

// A connected box meets the unit sphere exactly when its nearest point is inside the sphere and
// its farthest corner outside.
bool meets_sphere(const Box& b) {
    return !empty(b) && norm2(nearest_point(b)) <= 1 && norm2(farthest_corner(b)) >= 1;
}

}  // namespace

bool on_levels(const float* v) {
    for (int c = 0; c < 4; ++c) {
        const double x = static_cast<double>(v[c]) * 128 + 128;
        if (!(x >= 0 && x <= 255) || x != std::floor(x)) return false;
    }
    return true;
}

double centre(float v_c, Rounding rounding) {
    return static_cast<double>(v_c) + (rounding == Rounding::floor ? kLevel / 2 : 0);
}

int byte_of(float v_c) { return static_cast<int>(std::lround(static_cast<double>(v_c) * 128 + 128)); }

LevelsBox LevelsBox::of(const float* v, Rounding rounding) {
    LevelsBox box;
    for (int c = 0; c < 4; ++c) {
        box.centre[c] = rotation_box::centre(v[c], rounding);
        box.open[c] = is_top_byte(v[c]);
    }
    return box;
}

double LevelsBox::distance(const float* q) const {
    double n = 0;
    for (int c = 0; c < 4; ++c) n += static_cast<double>(q[c]) * q[c];
    n = std::sqrt(n);
    if (!(n > 0) || !std::isfinite(n)) return kInf;
    // Each component divided once for both signs: -q_c / n is -(q_c / n) exactly (rounding is
    // symmetric), so the flipped side's differences are the ones a second division would give.
    return from_centres({q[0] / n, q[1] / n, q[2] / n, q[3] / n});
}

double levels_distance(const float* q, const float* v, Rounding rounding) {
    return LevelsBox::of(v, rounding).distance(q);
}

Box box_of(const float* v, double half, Rounding rounding) {
    Box b;
    for (int c = 0; c < 4; ++c) {
        b.lo[c] = centre(v[c], rounding) - half;
        b.hi[c] = is_top_byte(v[c]) ? kInf : centre(v[c], rounding) + half;
    }
    return b;
}

Box intersect(const Box& a, const Box& b) {
    Box out;
    for (int c = 0; c < 4; ++c) {
        out.lo[c] = std::max(a.lo[c], b.lo[c]);
        out.hi[c] = std::min(a.hi[c], b.hi[c]);
    }
    return out;
}

Box box_towards(const float* v, double half, const Quat& towards, Rounding rounding) {
    double dot = 0;
    for (int c = 0; c < 4; ++c) dot += centre(v[c], rounding) * towards[c];
    const Box b = box_of(v, half, rounding);
    if (dot >= 0) return b;
    Box flipped;
    for (int c = 0; c < 4; ++c) flipped.lo[c] = -b.hi[c], flipped.hi[c] = -b.lo[c];
    return flipped;
}

namespace {

// A unit quaternion in `box` moved in by `depth` (which meets the sphere): the segment from its
// nearest point to its farthest corner lies in the (convex) box and crosses the sphere, where
// |p + s d| = 1 for s in [0, 1].
std::optional<Deepest> unit_point_at(const Box& box, double depth) {
    const Box b = shrunk(box, depth);
    const Quat p = nearest_point(b), far = farthest_corner(b);
    Quat d;
    for (int c = 0; c < 4; ++c) d[c] = far[c] - p[c];
    const double a = norm2(d), half_b = p[0] * d[0] + p[1] * d[1] + p[2] * d[2] + p[3] * d[3];
    const double s = a > 0 ? (-half_b + std::sqrt(std::max(0.0, half_b * half_b - a * (norm2(p) - 1)))) / a
                           : 0;
    Deepest out;
    for (int c = 0; c < 4; ++c) out.q[c] = p[c] + std::clamp(s, 0.0, 1.0) * d[c];
    const double n = std::sqrt(norm2(out.q));
    if (!(n > 0)) return std::nullopt;
    for (double& x : out.q) x /= n;
    out.depth = depth;
    return out;
}

}  // namespace

std::optional<Deepest> deepest_unit(const Box& box) {
    if (!meets_sphere(shrunk(box, 0))) return std::nullopt;
    // Moving the sides in nests the boxes, so "still meets the sphere" is monotone in the depth:
    // bisect it. No box of [-1, 1] is deeper than 1 on a closed side.
    double inside = 0, outside = 1 + 1e-9;
    while (outside - inside > 1e-12) {
        const double mid = (inside + outside) / 2;
        (meets_sphere(shrunk(box, mid)) ? inside : outside) = mid;
    }
    return unit_point_at(box, inside);
}

std::optional<Deepest> deepest_in_box_of(const float* v, double half, Rounding rounding) {
    // With r the half-width left once the sides move in, the nearest point's norm is
    // N(r) = sum max(0, |v_c| - r)^2 (falling) and the farthest corner's F(r) = sum (|v_c| + r)^2
    // (rising; 1 or more with a byte 255, capped at 1 there): the box meets the sphere while
    // N(r) <= 1 <= F(r), so the least r is the larger of their crossings, and depth = half - r.
    // v_c here is the box's centre (centre()).
    std::array<double, 4> a;
    double sum = 0, sum_sq = 0;
    bool open = false;
    for (int c = 0; c < 4; ++c) {
        a[c] = std::fabs(centre(v[c], rounding));
        sum += a[c], sum_sq += a[c] * a[c];
        open = open || is_top_byte(v[c]);
    }
    double far = 0;  // F's crossing: 4 r^2 + 2 S r + (Q - 1) = 0
    if (!open && sum_sq < 1) far = (-sum + std::sqrt(sum * sum - 4 * (sum_sq - 1))) / 4;
    double near = 0;  // N's: over the k largest |v_c| that r stays below
    if (sum_sq > 1) {
        std::sort(a.begin(), a.end(), [](double x, double y) { return x > y; });
        double s = 0, q = 0;
        near = kInf;
        for (int k = 1; k <= 4; ++k) {
            s += a[k - 1], q += a[k - 1] * a[k - 1];
            const double disc = s * s - k * (q - 1);
            if (disc < 0) continue;
            const double r = (s - std::sqrt(disc)) / k;
            if (r <= a[k - 1] && (k == 4 || r >= a[k])) {
                near = std::max(0.0, r);
                break;
            }
        }
    }
    const double left = std::max(near, far);
    if (!(left <= half)) return std::nullopt;
    return unit_point_at(box_of(v, half, rounding), half - left);
}

namespace {

// The bins `bins` with omitted component `m`, as a reader decodes them, where m stays the one the
// writer omits (the largest, by more than a hair, so re-quantizing picks it again).
std::optional<std::array<float, 4>> decoded(const Grid& grid, int m, const std::int32_t bins[3]) {
    const std::array<double, 4> d = rotation_from_bins(grid, static_cast<std::uint32_t>(m), bins);
    std::array<float, 4> f;
    for (int c = 0; c < 4; ++c) {
        f[c] = static_cast<float>(d[c]);
        if (c != m && !(std::fabs(d[c]) < d[m] - 1e-6)) return std::nullopt;
    }
    return f;
}

// The writer's omitted component of `x` (its largest, encoding.cpp), `x` flipped so that it is
// positive.
int omitted_made_positive(Quat& x) {
    int m = 0;
    for (int c = 1; c < 4; ++c)
        if (std::fabs(x[c]) > std::fabs(x[m])) m = c;
    if (x[m] < 0)
        for (double& c : x) c = -c;
    return m;
}

}  // namespace

std::optional<std::array<float, 4>> grid_point_in_box(const float* v, double half, const Grid& grid,
                                                      int lattice, Rounding rounding) {
    if (!(grid.step_rot > 0)) return std::nullopt;
    const std::optional<Deepest> deepest = deepest_in_box_of(v, half, rounding);
    if (!deepest) return std::nullopt;
    Quat x = deepest->q;
    const int m = omitted_made_positive(x);
    std::int32_t rounded[3];
    for (; lattice >= 1; lattice /= 2) {
        for (int c = 0, k = 0; c < 4; ++c)
            if (c != m)
                rounded[k++] = lattice * static_cast<std::int32_t>(
                                             std::lround(x[c] / (lattice * grid.step_rot)));
        if (lattice == 1) break;
        const auto f = decoded(grid, m, rounded);
        if (f && levels_distance(f->data(), v, rounding) <= half) return f;
    }
    // A shallow box (|v| far from 1 pushes the sphere to its corner: depths down to a few
    // thousandths of a level occur) may hold no grid point next to the deepest one but a
    // farther one: the cube of bins around it widened until one lies inside.
    for (int radius = 1; radius <= kSearchRadius; ++radius) {
        std::optional<std::array<float, 4>> best;
        double nearest = half;
        const int side = 2 * radius + 1;
        for (int i = 0; i < side * side * side; ++i) {
            const std::int32_t bins[3] = {rounded[0] + i % side - radius,
                                          rounded[1] + i / side % side - radius,
                                          rounded[2] + i / (side * side) - radius};
            const auto f = decoded(grid, m, bins);
            if (!f) continue;
            const double d = levels_distance(f->data(), v, rounding);
            if (d <= nearest) nearest = d, best = f;
        }
        if (best) return best;
    }
    return std::nullopt;
}

void grid_points_around(const Quat& q, const Grid& grid, int radius,
                        std::vector<std::array<float, 4>>& out) {
    out.clear();
    if (!(grid.step_rot > 0)) return;
    Quat x = q;
    const int m = omitted_made_positive(x);
    std::int32_t rounded[3];
    for (int c = 0, k = 0; c < 4; ++c)
        if (c != m) rounded[k++] = static_cast<std::int32_t>(std::lround(x[c] / grid.step_rot));
    if (const auto f = decoded(grid, m, rounded)) out.push_back(*f);
    const int side = 2 * radius + 1;
    for (int i = 0; i < side * side * side; ++i) {
        const std::int32_t bins[3] = {rounded[0] + i % side - radius,
                                      rounded[1] + i / side % side - radius,
                                      rounded[2] + i / (side * side) - radius};
        if (bins[0] == rounded[0] && bins[1] == rounded[1] && bins[2] == rounded[2]) continue;
        if (const auto f = decoded(grid, m, bins)) out.push_back(*f);
    }
}

std::vector<std::array<float, 4>> grid_points_around(const Quat& q, const Grid& grid, int radius) {
    std::vector<std::array<float, 4>> out;
    grid_points_around(q, grid, radius, out);
    return out;
}

}  // namespace fourdgs::rotation_box
