// Instants and intervals spelled for messages (fourdgs/detail/time_text.hpp).
#include "fourdgs/detail/time_text.hpp"

#include <cstdio>
#include <cstdlib>

namespace fourdgs::detail {

std::string time_text(double t) {
    char buf[40];
    for (int p = 1; p <= 17; ++p) {
        std::snprintf(buf, sizeof buf, "%.*g", p, t);
        if (std::strtod(buf, nullptr) == t) break;
    }
    return buf;
}

std::string interval_text(double t0, double t1) {
    std::string s = "[";  // appended piece by piece: GCC 12 misreads "[" + std::string (-Wrestrict)
    s += time_text(t0);
    s += ", ";
    s += time_text(t1);
    s += ')';
    return s;
}

}  // namespace fourdgs::detail
