// fourdgs/detail/time_text.hpp — instants and intervals spelled for refusal messages: the index
// check, the §11 rules and the composition name times the same way.
#pragma once

#include <string>

#include "fourdgs/export.hpp"

FOURDGS_DETAIL_BEGIN
namespace fourdgs::detail {

// "[t0, t1)" with each time spelled as its shortest round-trip decimal, for messages.
std::string interval_text(double t0, double t1);
std::string time_text(double t);

}  // namespace fourdgs::detail
FOURDGS_DETAIL_END
