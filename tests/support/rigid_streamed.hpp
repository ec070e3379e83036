// tests/support/rigid_streamed.hpp — find_rigid_parts_streamed of frames held in memory, each
// frame read from the vector as a file would be (the rigid-part tests).
#pragma once

#include <catch2/catch.hpp>

#include <vector>

#include "fourdgs/tools/rigid.hpp"

namespace fourdgs::test {

inline RigidParts found_streamed(const std::vector<PlyCloud>& frames, const RigidOptions& o) {
    const auto parts = find_rigid_parts_streamed(
        frames.size(), [&](std::size_t k, PlyCloud& into) { into = frames[k]; return ok_status(); },
        o);
    REQUIRE(parts.ok());
    return *parts;
}

}  // namespace fourdgs::test
