// A Delta Chunk's update group added into the composed population's bins
// (decode/update_addition.hpp): a run of adjacent rows a column stretch at a time, other rows
// a row at a time, each difference read from its decoded column or from its stream's byte planes.
#include "decode/update_addition.hpp"

#include <algorithm>
#include <limits>

#include "decode/compact_code.hpp"

namespace fourdgs::detail {
namespace {

bool fits_i32(std::int64_t v) {
    return v >= std::numeric_limits<std::int32_t>::min() &&
           v <= std::numeric_limits<std::int32_t>::max();
}

// One present difference stream of an update group, ready to add: its values (row i at value
// i * width: in `delta`, or in `planes` when its symbols are `symbol_width` bytes there), the
// population's column, and the composed rows' column (or null).
struct Addend {
    const Difference* df;
    const std::int32_t* delta;
    const std::uint8_t* planes;
    std::size_t values;  // the bytes of one plane
    int symbol_width;    // 0: the values are `delta`
    std::int32_t* dst;
    std::int32_t* sums;
};

// The differences of an addend from value `first` on, read as they are added: from the decoded
// column, or zigzag-decoded from the stream's shuffled planes (§5.6: plane j holds byte j of
// every symbol), so the update's values are read once where a decode would write a column for
// the add to read again.
struct ColumnValues {
    const std::int32_t* v;
    std::int32_t operator[](std::size_t k) const { return v[k]; }
    ColumnValues from(std::size_t k) const { return {v + k}; }
};
template <int W>
struct PlaneValues {
    const std::uint8_t* p;  // plane 0; plane j at p + j * n
    std::size_t n;
    std::int32_t operator[](std::size_t k) const {
        std::uint32_t u = p[k];
        if constexpr (W >= 2) u |= std::uint32_t{p[n + k]} << 8;
        if constexpr (W == 4)
            u |= (std::uint32_t{p[2 * n + k]} << 16) | (std::uint32_t{p[3 * n + k]} << 24);
        return zigzag_decode(u);
    }
    PlaneValues from(std::size_t k) const { return {p + k, n}; }
};

// f called with the values of `a` (each kind a type of its own, so its loops compile for it).
template <class F>
bool with_values(const Addend& a, F&& f) {
    if constexpr (kDifferencePlanes) {
        switch (a.symbol_width) {
            case 1: return f(PlaneValues<1>{a.planes, a.values});
            case 2: return f(PlaneValues<2>{a.planes, a.values});
            case 4: return f(PlaneValues<4>{a.planes, a.values});
            default: break;
        }
    }
    return f(ColumnValues{a.delta});
}

// Adds row i of `a` (width W, its values `delta`) to row `slot` of its column, copying the sum
// to row `to` of its composed rows when kept; false, and nothing written, when a sum leaves
// i32 (`bad` then holds the composed bins of the row, in 64 bits).
template <int W, class Values>
inline bool add_row(const Values& delta, const Addend& a, std::size_t i, std::size_t slot,
                    std::size_t to_row, std::int64_t (&bad)[3]) {
    std::int32_t* to = a.dst + slot * W;
    bool out = false;
    for (int c = 0; c < W; ++c) {
        bad[c] = std::int64_t{to[c]} + std::int64_t{delta[i * W + c]};
        out |= bad[c] < std::numeric_limits<std::int32_t>::min() ||
               bad[c] > std::numeric_limits<std::int32_t>::max();
    }
    if (out) return false;
    for (int c = 0; c < W; ++c) to[c] = static_cast<std::int32_t>(bad[c]);
    if (a.sums)
        for (int c = 0; c < W; ++c) a.sums[to_row * W + c] = to[c];
    return true;
}

// Adds the n differences `delta` to the n bins `to`, copying the sums to `sums` when given,
// and returns whether every sum fits i32. In 32 bits, wrapping, so the loop vectorizes: a sum
// wraps exactly when it differs in sign from both of its addends, and subtract_wrapped undoes
// the add exactly.
template <class Values>
bool add_wrapping(std::int32_t* __restrict to, Values delta, std::int32_t* __restrict sums,
                  std::size_t n) {
    std::uint32_t wrapped = 0;
    auto add = [&](std::size_t k) {
        const auto a = static_cast<std::uint32_t>(to[k]), b = static_cast<std::uint32_t>(delta[k]);
        const std::uint32_t sum = a + b;
        wrapped |= (a ^ sum) & (b ^ sum);
        to[k] = static_cast<std::int32_t>(sum);
    };
    if (sums) {
        FOURDGS_COMPACT_LOOP
        for (std::size_t k = 0; k < n; ++k) {
            add(k);
            sums[k] = to[k];
        }
    } else {
        FOURDGS_COMPACT_LOOP
        for (std::size_t k = 0; k < n; ++k) add(k);
    }
    return (wrapped >> 31) == 0;
}

template <class Values>
bool subtract_wrapped(std::int32_t* __restrict to, Values delta, std::size_t n) {
    FOURDGS_COMPACT_LOOP
    for (std::size_t k = 0; k < n; ++k)
        to[k] = static_cast<std::int32_t>(static_cast<std::uint32_t>(to[k]) -
                                          static_cast<std::uint32_t>(delta[k]));
    return true;
}

// Asks for the lines of row k of an update (k past the rows: nothing) in each of the m
// addends' columns of the population, to be written.
inline void prefetch_slot(const Addend* addends, std::size_t m,
                          std::span<const std::uint32_t> slots, std::size_t k) {
    if (k >= slots.size()) return;
    for (std::size_t j = 0; j < m; ++j)
        __builtin_prefetch(
            addends[j].dst + std::size_t{slots[k]} * static_cast<std::size_t>(addends[j].df->width),
            1);
}

}  // namespace

// A run of update rows whose slots follow each other (a tracked capture's moving gaussians,
// written in spatial order, are mostly such runs) is a stretch of each column: each present
// column's stretch is added, and checked, by one straight loop. Other rows go row by row, every
// present column of a row together: they are scattered over columns of a million rows, and one
// pass asks for all of a row's lines at once (each some rows ahead, looking past `to` into the
// rows a next block composes, so many misses are in flight) where a pass per column would wait
// on each column's lines in turn. A composed bin outside i32 is refused (§11.7): the first met
// in a row-by-row composition's order, so a run that does not fit is subtracted back and
// composed row by row to name it.
std::optional<BinOverflow> add_differences(ChunkBins& bins, const UpdateGroup& g,
                                           std::span<const std::uint32_t> slots,
                                           std::size_t from, std::size_t to, ChunkBins* rows) {
    const ChunkBins& u = g.u;
    Addend addends[std::size(kDifferences)];
    std::size_t m = 0;
    for (const Difference& df : kDifferences) {
        if (!g.present[df.id]) continue;
        const StreamPlanes& p = g.planes[df.id];
        std::int32_t* sums = rows ? (rows->*df.col).data() : nullptr;
        addends[m++] = {&df, (u.*df.col).data(), p.bytes.bytes.data(), p.values, p.width,
                        (bins.*df.col).data(), sums};
    }
    constexpr std::size_t kAhead = 64;  // rows: 64 ahead made a 1M-gaussian step 15 % cheaper
    // A run is at least kRun rows: where few rows are adjacent (a random tenth of a million
    // moving) a row rarely starts one, so the test whether it does is a branch predicted right.
    constexpr std::size_t kRun = 4;
    auto starts_run = [&](std::size_t i) {
        if (i + kRun > to || slots[i + kRun - 1] - slots[i] != kRun - 1) return false;
        for (std::size_t k = i + 1; k < i + kRun; ++k)  // in case the slots do not ascend
            if (slots[k] != slots[k - 1] + 1) return false;
        return true;
    };
    for (std::size_t i = from; i < to && m > 0;) {
        const bool run = starts_run(i);
        std::size_t end = i + 1;  // the run of rows from i, or row i alone
        // Only the rows' slots are read here: a run's lines are asked for by its own straight
        // loops, which the hardware follows; asking for them a row at a time some rows ahead,
        // as for scattered rows, queued a prefetch per row behind the misses and made a step of
        // the converter's capture 10 % slower.
        for (; run && end < to && slots[end] == slots[end - 1] + 1; ++end) {
        }
        if (run) {
            bool fit = true;
            for (std::size_t j = 0; j < m; ++j) {
                const Addend& a = addends[j];
                const auto w = static_cast<std::size_t>(a.df->width);
                fit &= with_values(a, [&](auto values) {
                    return add_wrapping(a.dst + slots[i] * w, values.from(i * w),
                                        a.sums ? a.sums + (i - from) * w : nullptr, (end - i) * w);
                });
            }
            if (fit) {
                i = end;
                continue;
            }
            for (std::size_t j = 0; j < m; ++j) {  // as it was, to be composed row by row
                const Addend& a = addends[j];
                const auto w = static_cast<std::size_t>(a.df->width);
                with_values(a, [&](auto values) {
                    return subtract_wrapped(a.dst + slots[i] * w, values.from(i * w), (end - i) * w);
                });
            }
        }
        for (; i < end; ++i) {
            if (!run) prefetch_slot(addends, m, slots, i + kAhead);
            for (std::size_t j = 0; j < m; ++j) {
                const Addend& a = addends[j];
                std::int64_t v[3];
                if (with_values(a, [&](auto values) {
                        return a.df->width == 3 ? add_row<3>(values, a, i, slots[i], i - from, v)
                                                : add_row<1>(values, a, i, slots[i], i - from, v);
                    }))
                    continue;
                const auto c = std::find_if_not(v, v + a.df->width, fits_i32) - v;
                return BinOverflow{a.df->id, a.df->width, static_cast<int>(c), i, v[c]};
            }
        }
    }
    return std::nullopt;
}

void restate_rotations(ChunkBins& bins, const UpdateGroup& g, std::span<const std::uint32_t> slots,
                       std::size_t from, std::size_t to, ChunkBins* rows) {
    const ChunkBins& u = g.u;
    if (g.present[attr::rotation_index])
        for (std::size_t i = from; i < to; ++i) {
            bins.rotation_index[slots[i]] = u.rotation_index[i];
            if (rows) rows->rotation_index[i - from] = u.rotation_index[i];
        }
    if (g.present[attr::rotation])
        for (std::size_t i = from; i < to; ++i) {
            std::copy_n(&u.rotation[i * 3], 3, &bins.rotation[std::size_t{slots[i]} * 3]);
            if (rows) std::copy_n(&u.rotation[i * 3], 3, &rows->rotation[(i - from) * 3]);
        }
}

}  // namespace fourdgs::detail
