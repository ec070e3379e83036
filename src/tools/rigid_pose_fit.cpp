// Horn's absolute orientation (rigid.hpp's fit_pose): the least-squares pose carrying some
// gaussians' positions in one frame onto theirs in another, for the rigid-part search (rigid.cpp).
#include <array>
#include <cmath>

#include "fourdgs/tools/rigid.hpp"

namespace fourdgs {
namespace {

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

}  // namespace fourdgs
