// The benchmarks' one timing rule: the best of `repeats` runs of f (the machines are shared and
// noisy; the minimum is the figure least disturbed by other jobs) — as wall seconds, or as wall
// and CPU time of the process (every thread, user + system) together: on a loaded machine the
// wall time of a single-threaded run includes waiting for a core, and the CPU time is steadier.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

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

inline double cpu_seconds() {  // this process, every thread, user + system
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

inline double load_average() {  // the one-minute load average, or -1
    double l = -1;
    if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(f, "%lf", &l) != 1) l = -1;
        std::fclose(f);
    }
    return l;
}

struct Timing {
    double wall = 1e30, cpu = 1e30;
};

inline Timing operator+(Timing a, Timing b) { return {a.wall + b.wall, a.cpu + b.cpu}; }

// The best wall time and the best CPU time of `repeats` runs.
template <class F>
Timing best_timing(int repeats, F&& f) {
    Timing best;
    for (int r = 0; r < repeats; ++r) {
        const double c0 = cpu_seconds();
        const auto t0 = std::chrono::steady_clock::now();
        f();
        best.wall = std::min(
            best.wall, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        best.cpu = std::min(best.cpu, cpu_seconds() - c0);
    }
    return best;
}
