// The unit quaternion deepest inside the boxes of several frames, each turned by its frame's pose
// (rotation_box.hpp, deepest_unit_turned): a small linear programme, solved exactly.
//
// On the tangent space at h0 (orthonormal B, h = h0 + B u), turn_k ⊗ h = L_k h0 + L_k B u with
// L_k the matrix of left multiplication by turn_k, so each closed side of each frame's box is one
// half-space in (u, t): s_k (L_k h)_c - v_kc <= half - t above and v_kc - s_k (L_k h)_c <= half
// - t below (s_k the sign that brings the turned quaternion to v_k's side). Maximizing t over
// them, with |u_i| <= a reach that keeps the linearization honest, is max c.x subject to A x <= b with
// x = (u, t) free. Its dual, min b.y subject to A^T y = c, y >= 0, has 4 equality rows, so the
// simplex runs on a 4-row tableau however many frames there are; the primal x is read back as
// the simplex multipliers (minus the reduced costs of the artificial columns).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "fourdgs/pose.hpp"
#include "rotation_box.hpp"

namespace fourdgs::rotation_box {
namespace {

constexpr double kEps = 1e-13;
constexpr double kReach = 0.05;  // the first step's |u_i|: a held rotation moves a few levels

double dot(const Quat& a, const Quat& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]; }

bool is_top_byte(float v_c) { return static_cast<double>(v_c) * 128 + 128 == 255; }

// Three orthonormal quaternions orthogonal to the unit h0 (Gram-Schmidt on the axes, the one most
// parallel to h0 left out).
std::array<Quat, 3> tangent_basis(const Quat& h0) {
    int skip = 0;
    for (int c = 1; c < 4; ++c)
        if (std::fabs(h0[c]) > std::fabs(h0[skip])) skip = c;
    std::array<Quat, 3> b{};
    int n = 0;
    for (int axis = 0; axis < 4; ++axis) {
        if (axis == skip) continue;
        Quat e{};
        e[axis] = 1;
        const double along = dot(e, h0);
        for (int c = 0; c < 4; ++c) e[c] -= along * h0[c];
        for (int j = 0; j < n; ++j) {
            const double p = dot(e, b[j]);
            for (int c = 0; c < 4; ++c) e[c] -= p * b[j][c];
        }
        const double len = std::sqrt(dot(e, e));
        for (int c = 0; c < 4; ++c) e[c] /= len;
        b[n++] = e;
    }
    return b;
}

// The sign bringing turn ⊗ h to the side of the input's box.
double side(const Quat& turned, const float* v, Rounding rounding) {
    double d = 0;
    for (int c = 0; c < 4; ++c) d += turned[c] * centre(v[c], rounding);
    return d < 0 ? -1 : 1;
}

// How deep the unit h lies inside every turned box (negative: outside the shallowest by that).
double depth_at(const Quat& h, std::span<const Quat> turns, std::span<const float> inputs, double half,
                Rounding rounding) {
    double depth = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < turns.size(); ++k) {
        const float* v = &inputs[4 * k];
        const Quat q = multiply(turns[k], h);
        const double s = side(q, v, rounding);
        for (int c = 0; c < 4; ++c) {
            const double off = s * q[c] - centre(v[c], rounding);
            depth = std::min(depth, half - (is_top_byte(v[c]) ? std::max(0.0, -off) : std::fabs(off)));
        }
    }
    return depth;
}

// The programme's rows and the simplex's tableau, kept across the steps of one search (their
// sizes change only with the frames).
struct Scratch {
    std::vector<std::array<double, 5>> rows;
    std::vector<double> t, cost;
};

// max x[3] subject to rows a.x <= b (x free, 4 unknowns), by the simplex on the dual; nullopt
// where the programme is infeasible or unbounded.
std::optional<std::array<double, 4>> solve(Scratch& s) {
    const std::vector<std::array<double, 5>>& rows = s.rows;
    const std::size_t m = rows.size(), cols = m + 4;  // y_0..y_{m-1}, then 4 artificials
    // Tableau: 4 rows of A^T | I | c, c = (0, 0, 0, 1), each row contiguous (a pivot divides
    // and subtracts whole rows: the loops vectorize, each entry given the same operations).
    const std::size_t width = cols + 1;
    s.t.assign(4 * width, 0.0);
    double* const t = s.t.data();
    const auto at = [&](int row) { return t + static_cast<std::size_t>(row) * width; };
    for (std::size_t i = 0; i < m; ++i)
        for (int r = 0; r < 4; ++r) at(r)[i] = rows[i][r];
    for (int r = 0; r < 4; ++r) at(r)[m + r] = 1, at(r)[cols] = r == 3 ? 1 : 0;
    std::array<std::size_t, 4> basic{m, m + 1, m + 2, m + 3};
    std::vector<double>& cost = s.cost;
    cost.assign(cols, 0);
    const auto pivot = [&](std::size_t enter, int row) {
        double* __restrict const from = at(row);
        const double p = from[enter];
        for (std::size_t j = 0; j < width; ++j) from[j] /= p;
        for (int r = 0; r < 4; ++r) {
            double* __restrict const to = at(r);
            if (r == row || to[enter] == 0) continue;
            const double f = to[enter];
            for (std::size_t j = 0; j < width; ++j) to[j] -= f * from[j];
        }
        basic[row] = enter;
    };
    const auto reduced = [&](std::size_t j) {
        double r = cost[j];
        for (int row = 0; row < 4; ++row) r -= cost[basic[row]] * at(row)[j];
        return r;
    };
    // Bland's rule: the first column that lowers the cost enters, the first row of the least
    // ratio leaves; no cycling.
    const auto run = [&](std::size_t enterable) -> bool {
        for (int step = 0; step < 10000; ++step) {
            // reduced(j) over the columns, its basic costs and rows read once for the scan.
            const double c0 = cost[basic[0]], c1 = cost[basic[1]], c2 = cost[basic[2]],
                         c3 = cost[basic[3]];
            const double *t0 = at(0), *t1 = at(1), *t2 = at(2), *t3 = at(3);
            std::size_t enter = cols;
            for (std::size_t j = 0; j < enterable; ++j)
                if (cost[j] - c0 * t0[j] - c1 * t1[j] - c2 * t2[j] - c3 * t3[j] < -kEps) {
                    enter = j;
                    break;
                }
            if (enter == cols) return true;
            int leave = -1;
            for (int r = 0; r < 4; ++r) {
                if (!(at(r)[enter] > kEps)) continue;
                const double ratio = at(r)[cols] / at(r)[enter],
                             best = leave < 0 ? 0 : at(leave)[cols] / at(leave)[enter];
                if (leave < 0 || ratio < best - kEps || (ratio <= best + kEps && basic[r] < basic[leave]))
                    leave = r;
            }
            if (leave < 0) return false;  // unbounded
            pivot(enter, leave);
        }
        return false;
    };
    for (int r = 0; r < 4; ++r) cost[m + r] = 1;  // phase 1: the artificials out
    if (!run(cols)) return std::nullopt;
    double left = 0;
    for (int r = 0; r < 4; ++r) left += cost[basic[r]] * at(r)[cols];
    if (left > 1e-9) return std::nullopt;  // the dual is infeasible: the primal unbounded
    for (std::size_t i = 0; i < m; ++i) cost[i] = rows[i][4];  // phase 2: min b.y
    for (int r = 0; r < 4; ++r) cost[m + r] = 0;
    if (!run(m)) return std::nullopt;  // the dual unbounded: the primal infeasible
    std::array<double, 4> x;
    for (int r = 0; r < 4; ++r) x[r] = -reduced(m + r);
    return x;
}

// One linearization at h0: the programme's rows, solved, and the unit point it gives.
std::optional<Quat> step(const Quat& h0, std::span<const Quat> turns, std::span<const float> inputs,
                         double half, double reach, Rounding rounding, Scratch& scratch) {
    const std::array<Quat, 3> basis = tangent_basis(h0);
    std::vector<std::array<double, 5>>& rows = scratch.rows;
    rows.clear();
    for (std::size_t k = 0; k < turns.size(); ++k) {
        const float* v = &inputs[4 * k];
        const Quat at = multiply(turns[k], h0);
        const double s = side(at, v, rounding);
        std::array<Quat, 3> along;  // turn ⊗ basis_i: how each unknown moves the turned point
        for (int i = 0; i < 3; ++i) along[i] = multiply(turns[k], basis[i]);
        for (int c = 0; c < 4; ++c) {
            const std::array<double, 3> m{s * along[0][c], s * along[1][c], s * along[2][c]};
            const double p = s * at[c] - centre(v[c], rounding);
            if (!is_top_byte(v[c])) rows.push_back({m[0], m[1], m[2], 1, half - p});
            rows.push_back({-m[0], -m[1], -m[2], 1, half + p});
        }
    }
    for (int i = 0; i < 3; ++i) {
        std::array<double, 5> up{}, down{};
        up[i] = 1, down[i] = -1, up[4] = down[4] = reach;
        rows.push_back(up);
        rows.push_back(down);
    }
    const auto x = solve(scratch);
    if (!x) return std::nullopt;
    Quat h = h0;
    for (int i = 0; i < 3; ++i)
        for (int c = 0; c < 4; ++c) h[c] += (*x)[i] * basis[i][c];
    const double len = std::sqrt(dot(h, h));
    for (double& c : h) c /= len;
    return h;
}

}  // namespace

std::optional<Deepest> deepest_unit_turned(std::span<const Quat> turns, std::span<const float> inputs,
                                           double half, const Quat& start, Rounding rounding,
                                           double enough) {
    if (turns.empty() || inputs.size() != 4 * turns.size() || !(dot(start, start) > 0))
        return std::nullopt;
    Quat h = start;
    const double len = std::sqrt(dot(h, h));
    for (double& c : h) c /= len;
    // The plane runs deeper into a box than the curved sphere beside it, so a step that lands
    // shallower than where it started is retried from there within a quarter of the reach (a
    // trust region): the error of the plane shrinks with the square of the reach.
    Deepest best{h, depth_at(h, turns, inputs, half, rounding)};
    double reach = kReach;
    Scratch scratch;
    for (int again = 0; again < 24 && reach > 1e-9 && !(best.depth >= enough); ++again) {
        const auto next = step(best.q, turns, inputs, half, reach, rounding, scratch);
        if (!next) break;
        const double d = depth_at(*next, turns, inputs, half, rounding);
        if (d > best.depth + 1e-12) {
            best = {*next, d};
        } else {
            reach /= 4;
        }
    }
    return best;
}

}  // namespace fourdgs::rotation_box
