// How the writer plans its chunks (chunk_plan.hpp).
#include "chunk_plan.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <string_view>

namespace fourdgs::chunk_plan {

using encoding::num;

encoding::BatchRules batch_rules(bool need_windows, std::uint64_t name_base) {
    encoding::BatchRules r;
    r.windows = need_windows ? encoding::BatchRules::Windows::required
                             : encoding::BatchRules::Windows::absent;
    r.name_base = name_base;
    return r;
}

Status check_declared_window(const WindowTable::Window& w, double duration, std::size_t index) {
    auto err = [&](std::string_view refusal, std::string message) {
        return make_error(ErrorKind::invalid_argument, refusal,
                          "declared window " + std::to_string(index) + " " + message);
    };
    // Appended piecewise: GCC 12 misreads `"[" + num(...)` here as an overlapping copy (-Wrestrict).
    std::string range = "[";
    range.append(num(w.lo)).append(", ").append(num(w.hi)).append(")");
    if (!std::isfinite(w.lo) || !std::isfinite(w.hi))
        return err(refusal::kNonFiniteInput, range + " is not finite");
    if (!(w.lo < w.hi)) return err(refusal::kEmptyWindow, range + " is empty: lo >= hi");
    if (w.lo < 0 || w.hi > duration)
        return err(refusal::kWindowOutsideDuration,
                   range + " lies outside the scene [0, " + num(duration) + ")");
    return ok_status();
}

void group_by_window(const GaussianBatch& b, std::vector<std::uint32_t>& order,
                     std::vector<std::uint32_t>& id, std::vector<WindowTable::Window>& windows,
                     std::vector<std::size_t>& first) {
    constexpr std::size_t kManyWindows = 4096;
    const std::size_t n = b.count;
    auto before = [](const WindowTable::Window& x, const WindowTable::Window& y) {
        return x.lo != y.lo ? x.lo < y.lo : x.hi < y.hi;
    };
    // The sorted position of gaussian i's window in `windows`, or -1 when it is not there.
    auto find = [&](std::size_t i) -> std::ptrdiff_t {
        const WindowTable::Window key{b.win_lo[i], b.win_hi[i]};
        auto it = std::lower_bound(windows.begin(), windows.end(), key, before);
        return it != windows.end() && *it == key ? it - windows.begin() : -1;
    };
    windows.clear();
    bool many = false;
    for (std::size_t i = 0; i < n && !many; ++i) {
        if (i > 0 && b.win_lo[i] == b.win_lo[i - 1] && b.win_hi[i] == b.win_hi[i - 1]) continue;
        if (find(i) >= 0) continue;
        const WindowTable::Window key{b.win_lo[i], b.win_hi[i]};
        windows.insert(std::upper_bound(windows.begin(), windows.end(), key, before), key);
        many = windows.size() > kManyWindows;
    }
    order.resize(n);
    first.clear();
    if (!many) {
        id.resize(n);
        first.assign(windows.size() + 1, 0);
        std::ptrdiff_t last = -1;
        for (std::size_t i = 0; i < n; ++i) {
            if (i == 0 || b.win_lo[i] != b.win_lo[i - 1] || b.win_hi[i] != b.win_hi[i - 1])
                last = find(i);
            id[i] = static_cast<std::uint32_t>(last);
            ++first[static_cast<std::size_t>(last) + 1];
        }
        for (std::size_t w = 1; w < first.size(); ++w) first[w] += first[w - 1];
        std::vector<std::size_t> next(first.begin(), first.end() - 1);
        for (std::size_t i = 0; i < n; ++i) order[next[id[i]]++] = static_cast<std::uint32_t>(i);
        return;
    }
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
        if (b.win_lo[x] != b.win_lo[y]) return b.win_lo[x] < b.win_lo[y];
        if (b.win_hi[x] != b.win_hi[y]) return b.win_hi[x] < b.win_hi[y];
        return x < y;
    });
    windows.clear();
    for (std::size_t p = 0; p < n; ++p) {
        const std::uint32_t i = order[p];
        if (windows.empty() || windows.back().lo != b.win_lo[i] || windows.back().hi != b.win_hi[i]) {
            windows.push_back({b.win_lo[i], b.win_hi[i]});
            first.push_back(p);
        }
    }
    first.push_back(n);
}

}  // namespace fourdgs::chunk_plan
