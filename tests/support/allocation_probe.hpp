// tests/support/allocation_probe.hpp — the largest single allocation through operator new since
// the last reset, so a test can show that a count declared as 0xFFFFFFFF is refused before it is
// allocated. The replacement operator new lives in tests/test_allocation_probe.cpp (its own
// translation unit, so no inlined delete ever sees malloc). It is compiled out under
// AddressSanitizer, which owns operator new; then counting() is false and the probe reads 0.
#pragma once

#include <cstddef>

namespace fourdgs::test {
bool allocation_probe_counting() noexcept;
void reset_largest_allocation() noexcept;
std::size_t largest_allocation() noexcept;
}  // namespace fourdgs::test
