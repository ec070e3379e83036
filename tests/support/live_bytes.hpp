// tests/support/live_bytes.hpp — the bytes live through operator new, and their peak since the
// last reset, so a test can show what an operation holds at most. The replacement operator new
// lives in tests/support/live_bytes.cpp, which the tools tests and bench_merge link. It is compiled out
// under AddressSanitizer, which owns operator new; then counting() is false and the probe reads 0.
#pragma once

#include <cstddef>

namespace fourdgs::test {
bool live_bytes_counting() noexcept;
std::size_t live_bytes() noexcept;
// Starts a new peak at the bytes live now.
void reset_peak_live_bytes() noexcept;
std::size_t peak_live_bytes() noexcept;
}  // namespace fourdgs::test
