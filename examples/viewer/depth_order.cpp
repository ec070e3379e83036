// depth_order.cpp — back-to-front order by an LSD radix sort of the depths' float bits.
#include "depth_order.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <utility>

namespace viewer {

void back_to_front(const fourdgs::Frame& frame, const fourdgs::PreviewCamera& cam, double near,
                   std::vector<std::uint32_t>& order, DepthSortScratch& scratch) {
    order.clear();
    scratch.keys.clear();
    for (std::size_t i = 0; i < frame.count; ++i) {
        const float* c = &frame.center[i * 3];
        const double depth = (c[0] - cam.eye[0]) * cam.forward[0] +
                             (c[1] - cam.eye[1]) * cam.forward[1] +
                             (c[2] - cam.eye[2]) * cam.forward[2];
        const float opacity = frame.color[i * 4 + 3];
        if (!(depth > near) || !std::isfinite(depth) || !(opacity > 0) ||
            !std::isfinite(c[0] + c[1] + c[2]))
            continue;
        // A positive float's bits grow with its value; inverted, an ascending sort of the keys
        // is a descending sort of the depths.
        order.push_back(static_cast<std::uint32_t>(i));
        scratch.keys.push_back(~std::bit_cast<std::uint32_t>(static_cast<float>(depth)));
    }

    // Three stable counting passes of 11, 11 and 10 bits, least significant first. A pass whose
    // digit is the same for every key moves nothing and is skipped.
    const std::size_t n = order.size();
    scratch.keys_swap.resize(n);
    scratch.order_swap.resize(n);
    constexpr std::array<int, 3> kShift{0, 11, 22};
    for (const int shift : kShift) {
        std::array<std::uint32_t, 2048> count{};
        for (const std::uint32_t k : scratch.keys) ++count[(k >> shift) & 2047];
        if (n == 0 || count[(scratch.keys[0] >> shift) & 2047] == n) continue;
        std::uint32_t sum = 0;
        for (std::uint32_t& c : count) sum += std::exchange(c, sum);
        for (std::size_t j = 0; j < n; ++j) {
            const std::uint32_t slot = count[(scratch.keys[j] >> shift) & 2047]++;
            scratch.keys_swap[slot] = scratch.keys[j];
            scratch.order_swap[slot] = order[j];
        }
        scratch.keys.swap(scratch.keys_swap);
        order.swap(scratch.order_swap);
    }
}

}  // namespace viewer
