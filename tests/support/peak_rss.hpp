// tests/support/peak_rss.hpp — this process's peak resident set, for the benchmarks that report
// what a step holds at most.
#pragma once

#include <cstdio>

namespace fourdgs::test {

// KiB: /proc/self/status VmHWM, which (unlike getrusage's ru_maxrss) counts only the memory image
// since exec; -1 where it cannot be read.
inline long own_peak_rss_kib() {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kib = -1;
    while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
    std::fclose(f);
    return kib;
}

}  // namespace fourdgs::test
