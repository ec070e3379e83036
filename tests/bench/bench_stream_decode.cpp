// Attribute stream decode throughput (§5.6), as a ratio to memcpy of the same output bytes
// measured in the same run, so the figure means the same thing on any machine.
//
// A 1M-element, 3-channel delta stream (a position-like random walk) at symbol width 2 and 4,
// under deflate, zstd and lz4 (0x80), decoded repeatedly into one reused buffer and scratch.
// Usage: bench_stream_decode [elements]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "fourdgs/stream.hpp"

using namespace fourdgs;
using Clock = std::chrono::steady_clock;

namespace {

// Runs `fn` until at least `min_seconds` have passed (and at least 5 times), returns the best
// seconds per call.
template <class F>
double best_seconds(F&& fn, double min_seconds = 0.6) {
    double best = 1e30;
    const auto start = Clock::now();
    int runs = 0;
    while (runs < 5 || std::chrono::duration<double>(Clock::now() - start).count() < min_seconds) {
        const auto t0 = Clock::now();
        fn();
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        best = std::min(best, s);
        ++runs;
    }
    return best;
}

std::vector<std::int32_t> walk(std::size_t elements, int width) {
    // Steps sized so the zigzagged deltas need `width` bytes; most steps are small, as in a
    // spatially sorted position stream.
    std::mt19937 rng(42);
    const std::int32_t small = width == 2 ? 2000 : 200000;
    std::uniform_int_distribution<std::int32_t> d(-small, small);
    std::vector<std::int32_t> v(elements * 3);
    std::int32_t acc[3] = {0, 0, 0};
    for (std::size_t i = 0; i < elements; ++i)
        for (int ch = 0; ch < 3; ++ch) {
            if (i) acc[ch] += d(rng);
            v[i * 3 + ch] = acc[ch];
        }
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t elements = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
    const std::size_t values = elements * 3;
    const std::size_t out_bytes = values * sizeof(std::int32_t);

    std::vector<std::int32_t> out(values), copy_dst(values);
    std::vector<std::int32_t> copy_src(values, 7);
    const double memcpy_s = best_seconds([&] {
        std::memcpy(copy_dst.data(), copy_src.data(), out_bytes);
        asm volatile("" : : "r"(copy_dst.data()) : "memory");
    });
    std::printf("output %zu elements x 3 channels = %.1f MB; memcpy %.0f MB/s\n", elements,
                out_bytes / 1e6, out_bytes / memcpy_s / 1e6);

    int failures = 0;
    for (int width : {2, 4}) {
        const auto v = walk(elements, width);
        for (std::uint8_t c : {codec::deflate, codec::lz4, codec::zstd}) {
            StreamEncodeOptions opt;
            opt.codec = c;
            opt.mode = stream_mode::delta;
            opt.symbol_width = width;
            opt.level = c == codec::zstd ? 3 : c == codec::lz4 ? 0 : 6;
            ByteWriter w;
            if (!encode_stream(w, 0, 3, v, opt).ok()) return 1;
            Cursor cur(w.buffer(), 0);
            auto s = read_stream(cur);
            if (!s.ok()) return 1;
            StreamScratch scratch;
            bool ok = true;
            const double dec_s = best_seconds([&] { ok &= decode_stream(*s, out, scratch).ok(); });
            if (!ok || out != v) {
                std::printf("delta w%d %s: DECODE MISMATCH\n", width, codec_name(c).c_str());
                ++failures;
                continue;
            }
            const char* name = c == codec::deflate ? "deflate" : c == codec::zstd ? "zstd" : "lz4";
            std::printf("delta w%d %-7s: %.3fx memcpy  (%.0f MB/s of output, %.2f ms, payload %.2f "
                        "MB, ratio %.2f)\n",
                        width, name, memcpy_s / dec_s, out_bytes / dec_s / 1e6, dec_s * 1e3,
                        s->payload.size() / 1e6,
                        double(values) * width / double(s->payload.size()));
        }
    }
    return failures ? 1 : 0;
}
