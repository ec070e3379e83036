// tests/support/validity.hpp — a file the validator passes: no error, and (unless allowed) no
// warning; the findings are printed when it does not.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "fourdgs/io.hpp"
#include "fourdgs/validate.hpp"

namespace fourdgs::test {

// Validates clean: no finding at all, or, with `warnings_allowed` (files written without the
// registry's advisory metadata), no error.
inline void check_valid(const std::vector<std::uint8_t>& bytes, bool warnings_allowed = false) {
    MemorySource src(bytes);
    auto report = validate(src);
    REQUIRE(report.ok());
    std::string findings;
    for (const Finding& f : report->findings) findings += f.rule + ": " + f.message + "\n";
    INFO(findings);
    CHECK(report->errors() == 0);
    if (!warnings_allowed) CHECK(report->warnings() == 0);
}

}  // namespace fourdgs::test
