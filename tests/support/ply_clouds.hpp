// tests/support/ply_clouds.hpp — for the tests that read a frame into a cloud already used (the
// PLY and .splat readers' read-into paths): a cloud that held something else, and the check that
// what was read into it equals the reader's one-shot result member by member.
#pragma once

#include "fourdgs/tools/ply.hpp"
#include "support/same_members.hpp"

namespace fourdgs::test {

// A cloud that held something else: another count, SH degree 1 and non-zero normals.
inline PlyCloud used_cloud() {
    PlyCloud c;
    c.count = 3000;
    c.sh_degree = 1;
    c.position.assign(9000, 7.0f);
    c.normal.assign(9000, 1.0f);
    c.scale.assign(9000, 2.0f);
    c.rotation.assign(12000, 3.0f);
    c.color.assign(12000, 4.0f);
    c.sh.assign(27000, 5.0f);
    return c;
}

inline void check_same_cloud(const PlyCloud& got, const PlyCloud& want) {
    check_same_members(got, want, &PlyCloud::count, &PlyCloud::sh_degree, &PlyCloud::position,
                       &PlyCloud::normal, &PlyCloud::scale, &PlyCloud::rotation, &PlyCloud::color,
                       &PlyCloud::sh);
}

}  // namespace fourdgs::test
