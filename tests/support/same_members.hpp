// tests/support/same_members.hpp — two values of one struct agree member by member: a CHECK per
// member named, so a failure says which (its place in the list) and shows both values.
#pragma once

#include <catch2/catch.hpp>

namespace fourdgs::test {

template <class T, class... Member>
void check_same_members(const T& a, const T& b, Member T::*... members) {
    int place = 0;
    ([&] {
        INFO("member " << place++ << " of the list");
        CHECK(a.*members == b.*members);
    }(), ...);
}

}  // namespace fourdgs::test
