// Which rows of a frame changed (fourdgs/frame_changes.hpp).
#include "fourdgs/frame_changes.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <type_traits>

namespace fourdgs {
namespace {

constexpr std::uint32_t kNoRow = 0xFFFFFFFFu;
constexpr std::size_t kMaxBounds = 64;

// Whether gaussian i's §3 value can change with t but for its window (kept apart: few distinct
// bounds are checked for crossings instead): it moves, fades, or has an Object Track.
bool timed_row(const GaussianBlock& b, std::size_t i, const TrackPoses& tracks, bool windowed) {
    const float* m = &b.motion[i * 3];
    if (m[0] != 0.0f || m[1] != 0.0f || m[2] != 0.0f || !std::isinf(b.sigma_t[i])) return true;
    if (windowed && (std::isfinite(b.win_lo[i]) || std::isfinite(b.win_hi[i]))) return true;
    return !b.object_id.empty() && !tracks.empty() && tracks.find(b.object_id[i]) != nullptr;
}

// Row k of `from` over row at[k] of `to` (same SH width), for every k: column by column, the
// widths known at compile time so a row is a few moves rather than a call.
void scatter_frame_rows(const Frame& from, std::span<const std::uint32_t> at, Frame& to) {
    auto scatter = [&]<std::size_t W>(const auto* src, auto* dst,
                                      std::integral_constant<std::size_t, W>) {
        for (std::size_t k = 0; k < at.size(); ++k)
            for (std::size_t c = 0; c < W; ++c) dst[std::size_t{at[k]} * W + c] = src[k * W + c];
    };
    for_each_frame_column(from.sh_degree, [&](auto column, std::size_t per) {
        const auto* src = (from.*column).data();
        auto* dst = (to.*column).data();
        switch (per) {
            case 1: scatter(src, dst, std::integral_constant<std::size_t, 1>{}); break;
            case 3: scatter(src, dst, std::integral_constant<std::size_t, 3>{}); break;
            case 4: scatter(src, dst, std::integral_constant<std::size_t, 4>{}); break;
            default:
                for (std::size_t k = 0; k < at.size(); ++k)
                    std::copy_n(src + k * per, per, dst + std::size_t{at[k]} * per);
        }
    });
}

// The block of `blocks` holding state row r, and r's row in it.
std::pair<const GaussianBlock*, std::size_t> row_in(std::span<const ShownBlock> blocks,
                                                    std::uint32_t r) {
    std::size_t b = 0;
    while (b + 1 < blocks.size() && blocks[b + 1].first <= r) ++b;
    return {blocks[b].block, r - blocks[b].first};
}

}  // namespace

void FrameChanges::stepped(std::span<const std::uint32_t> rows, bool retimed) {
    // A step lists its rows ascending (the state is sorted by gaussian_id, and so are a delta's
    // ids), so the steps since the previous frame merge in one pass rather than a sort.
    retimed_ |= retimed && !rows.empty();
    if (stepped_.empty() && std::is_sorted(rows.begin(), rows.end())) {
        stepped_.assign(rows.begin(), rows.end());
        return;
    }
    merged_.assign(rows.begin(), rows.end());
    if (!std::is_sorted(merged_.begin(), merged_.end())) std::sort(merged_.begin(), merged_.end());
    rows_.resize(stepped_.size() + merged_.size());
    std::merge(stepped_.begin(), stepped_.end(), merged_.begin(), merged_.end(), rows_.begin());
    std::swap(stepped_, rows_);
}

// What the next frame compares with, after `out` was evaluated whole: each state row's Frame
// row, the window bounds, and the rows whose value depends on t.
void FrameChanges::remember(std::span<const ShownBlock> blocks, const Frame& out,
                            const TrackPoses& tracked) {
    std::size_t rows = 0;
    for (const ShownBlock& sh : blocks) rows = sh.first + sh.block->count;
    // evaluate() fills the Frame in state row order, so when every row is visible the Frame
    // row of a state row is itself (the usual case for a capture, and no table to build).
    every_row_ = out.count == rows;
    if (every_row_) {
        frame_row_.clear();
    } else {
        frame_row_.assign(rows, kNoRow);
        for (std::size_t k = 0; k < out.count; ++k)
            frame_row_[out.source[k]] = static_cast<std::uint32_t>(k);
    }
    bounds_.clear();
    many_bounds_ = false;
    for (const ShownBlock& sh : blocks) {
        const GaussianBlock& b = *sh.block;
        float last_lo = std::numeric_limits<float>::quiet_NaN(), last_hi = last_lo;
        for (std::size_t i = 0; i < b.count && !many_bounds_; ++i) {
            if (b.win_lo[i] == last_lo && b.win_hi[i] == last_hi) continue;  // the usual
            last_lo = b.win_lo[i];
            last_hi = b.win_hi[i];
            for (float v : {last_lo, last_hi})
                if (std::isfinite(v) && std::find(bounds_.begin(), bounds_.end(), v) == bounds_.end())
                    bounds_.push_back(v);
            many_bounds_ = bounds_.size() > kMaxBounds;
        }
    }
    std::sort(bounds_.begin(), bounds_.end());
    is_timed_.assign(rows, 0);
    timed_.clear();
    for (const ShownBlock& sh : blocks)
        for (std::size_t i = 0; i < sh.block->count; ++i)
            if (timed_row(*sh.block, i, tracked, many_bounds_)) {
                is_timed_[sh.first + i] = 1;
                timed_.push_back(static_cast<std::uint32_t>(sh.first + i));
            }
    valid_ = out.unrepresentable == 0;
}

bool FrameChanges::evaluate_partial(std::span<const ShownBlock> blocks, double t, double cutoff,
                                    const EvaluateOptions& options) {
    Frame& p = partial_;
    p.count = p.unrepresentable = 0;
    EvaluateOptions opt = options;
    opt.append = true;
    for (const ShownBlock& sh : blocks) {
        const auto lo = std::lower_bound(rows_.begin(), rows_.end(), sh.first);
        const auto hi = std::lower_bound(lo, rows_.end(), sh.first + sh.block->count);
        if (lo == hi) continue;
        // (pointer and size: the wasm build's libc++ has no span from an iterator pair)
        std::span<const std::uint32_t> local(rows_.data() + (lo - rows_.begin()),
                                             static_cast<std::size_t>(hi - lo));
        if (sh.first != 0) {  // the block's own rows
            local_.assign(lo, hi);
            for (std::uint32_t& r : local_) r -= sh.first;
            local = local_;
        }
        const std::size_t at = p.count;
        evaluate_rows(*sh.block, local, t, cutoff, p, opt);
        for (std::size_t k = at; k < p.count; ++k) p.source[k] += sh.first;
    }
    // The same rows visible as before, or the frame's rows are not the previous ones.
    bool same = p.unrepresentable == 0;
    for (std::size_t i = 0, k = 0; same && i < rows_.size(); ++i) {
        const bool now = k < p.count && p.source[k] == rows_[i];
        same = now == (frame_row(rows_[i]) != kNoRow);
        if (now) ++k;
    }
    return same;
}

void FrameChanges::track(std::span<const ShownBlock> blocks, double t, double cutoff,
                         const EvaluateOptions& options, Frame& out, bool& all_changed,
                         std::vector<std::uint32_t>& changed,
                         const std::function<void(double, Frame&)>& evaluate_whole) {
    const TrackPoses tracked(options.tracks, 0);  // for which ids have a track
    changed.clear();
    bool partial = valid_;
    if (partial) {
        stepped_.erase(std::unique(stepped_.begin(), stepped_.end()), stepped_.end());
        // A step may start or stop a gaussian's motion (or its track).
        bool regroup = false;
        for (std::uint32_t r : retimed_ ? std::span<const std::uint32_t>(stepped_)
                                        : std::span<const std::uint32_t>()) {
            const auto [block, i] = row_in(blocks, r);
            const std::uint8_t now = timed_row(*block, i, tracked, many_bounds_);
            regroup |= now != is_timed_[r];
            is_timed_[r] = now;
        }
        if (regroup) {
            timed_.clear();
            for (std::size_t r = 0; r < is_timed_.size(); ++r)
                if (is_timed_[r]) timed_.push_back(static_cast<std::uint32_t>(r));
        }
        const bool moved = t != t_;
        if (moved && !many_bounds_) {
            // A window bound between the two instants changes some gaussian's window test.
            const float a = float_at_or_below(t_), b = float_at_or_below(t);
            const float lo = std::min(a, b), hi = std::max(a, b);
            const auto it = std::upper_bound(bounds_.begin(), bounds_.end(), lo);
            partial = it == bounds_.end() || !(*it <= hi);
        }
        rows_.clear();
        if (moved)
            std::set_union(stepped_.begin(), stepped_.end(), timed_.begin(), timed_.end(),
                           std::back_inserter(rows_));
        else
            rows_ = stepped_;
    }
    if (partial) partial = evaluate_partial(blocks, t, cutoff, options);
    if (partial) {
        const bool same_out = &out == out_ && out.center.data() == out_center_ && out.count == count_;
        changed.resize(partial_.count);
        for (std::size_t k = 0; k < partial_.count; ++k)
            changed[k] = frame_row(partial_.source[k]);
        if (same_out) scatter_frame_rows(partial_, changed, out);
        if (same_out) out.time = t;
        else evaluate_whole(t, out);
        all_changed = false;
    } else {
        evaluate_whole(t, out);
        all_changed = true;
        remember(blocks, out, tracked);
    }
    stepped_.clear();
    retimed_ = false;
    t_ = t;
    out_ = &out;
    out_center_ = out.center.data();
    count_ = out.count;
}

}  // namespace fourdgs
