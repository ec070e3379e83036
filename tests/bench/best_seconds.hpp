// The benchmarks' one timing rule: the best of `repeats` runs of f, in seconds (the machines are
// shared and noisy; the minimum is the figure least disturbed by other jobs).
#pragma once

#include <algorithm>
#include <chrono>

template <class F>
double best_seconds(int repeats, F&& f) {
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}
