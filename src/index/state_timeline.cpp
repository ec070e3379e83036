// Which state covers t (fourdgs/state_timeline.hpp): the Chunk Index cut into spans over which the
// state a reader decodes does not change.
#include "fourdgs/state_timeline.hpp"

#include <algorithm>
#include <cmath>

namespace fourdgs {

StateTimeline StateTimeline::of_chunks(const std::vector<ChunkIndex>& index, double duration) {
    StateTimeline out;
    std::vector<double> bounds{0.0};
    if (!std::isnan(duration)) bounds.push_back(duration);
    for (const ChunkIndex& e : index)
        for (double b : {e.t0, e.t1})
            if (!std::isnan(b)) bounds.push_back(b);
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    const std::size_t spans = bounds.empty() ? 0 : bounds.size() - 1;
    // Each entry lies in the spans between its two bounds: counted first, then placed, so the
    // chunks of every span are in index order in one array.
    std::vector<std::size_t> lo(index.size()), hi(index.size());
    std::vector<std::size_t> count(spans + 1, 0);
    for (std::size_t entry = 0; entry < index.size(); ++entry) {
        const ChunkIndex& e = index[entry];
        if (std::isnan(e.t0) || std::isnan(e.t1)) continue;  // covers no instant
        lo[entry] = static_cast<std::size_t>(
            std::lower_bound(bounds.begin(), bounds.end(), e.t0) - bounds.begin());
        hi[entry] = static_cast<std::size_t>(
            std::lower_bound(bounds.begin(), bounds.end(), e.t1) - bounds.begin());
        for (std::size_t k = lo[entry]; k < hi[entry]; ++k) ++count[k + 1];
    }
    out.first_.assign(spans + 1, 0);
    for (std::size_t k = 0; k < spans; ++k) out.first_[k + 1] = out.first_[k] + count[k + 1];
    out.chunks_.resize(out.first_[spans]);
    std::vector<std::size_t> fill(out.first_.begin(), out.first_.end() - 1);
    for (std::size_t entry = 0; entry < index.size(); ++entry)
        for (std::size_t k = lo[entry]; k < hi[entry]; ++k) out.chunks_[fill[k]++] = entry;
    for (std::size_t k = 0; k < spans; ++k) {
        out.t0_.push_back(bounds[k]);
        out.t1_.push_back(bounds[k + 1]);
    }
    return out;
}

StateTimeline StateTimeline::of_states(const KeyframeTimeline& timeline) {
    StateTimeline out;
    const std::vector<ChunkIndex>& index = timeline.entries();
    out.first_.push_back(0);
    for (std::size_t entry : timeline.by_time()) {
        const std::vector<std::size_t>& chain = timeline.chain_of(entry);
        out.chunks_.insert(out.chunks_.end(), chain.begin(), chain.end());
        out.first_.push_back(out.chunks_.size());
        out.t0_.push_back(index[entry].t0);
        out.t1_.push_back(index[entry].t1);
    }
    return out;
}

StateSpan StateTimeline::span(std::size_t key) const {
    const std::span<const std::size_t> all(chunks_.data(), chunks_.size());
    return StateSpan{key, t0_[key], t1_[key], all.subspan(first_[key], first_[key + 1] - first_[key])};
}

std::size_t StateTimeline::find(double t) const noexcept {
    const auto it = std::upper_bound(t0_.begin(), t0_.end(), t);
    if (it == t0_.begin()) return StateSpan::kNoState;
    const std::size_t k = static_cast<std::size_t>(it - t0_.begin()) - 1;
    return t < t1_[k] ? k : StateSpan::kNoState;
}

StateSpan StateTimeline::at(double t) const {
    const std::size_t key = find(t);
    return key == StateSpan::kNoState ? StateSpan{} : span(key);
}

}  // namespace fourdgs
