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
    for (const ChunkIndex& e : index) {
        out.entry_t0_.push_back(e.t0);
        out.entry_t1_.push_back(e.t1);
        for (double b : {e.t0, e.t1})
            if (!std::isnan(b)) bounds.push_back(b);
    }
    // A heap sort: n log n as std::sort, in a fraction of its code (the WebAssembly core's size
    // budget, docs/web.md).
    std::make_heap(bounds.begin(), bounds.end());
    std::sort_heap(bounds.begin(), bounds.end());
    for (std::size_t k = 0; k + 1 < bounds.size(); ++k)
        if (bounds[k] != bounds[k + 1]) {  // each distinct bound to the next
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
        out.chains_.insert(out.chains_.end(), chain.begin(), chain.end());
        out.first_.push_back(out.chains_.size());
        out.t0_.push_back(index[entry].t0);
        out.t1_.push_back(index[entry].t1);
    }
    return out;
}

StateSpan StateTimeline::span(std::size_t key) const {
    StateSpan s{key, t0_[key], t1_[key], {}};
    if (!first_.empty()) {
        s.chunks.assign(chains_.begin() + static_cast<std::ptrdiff_t>(first_[key]),
                        chains_.begin() + static_cast<std::ptrdiff_t>(first_[key + 1]));
        return s;
    }
    // No bound lies inside a span, so the entries covering its first instant cover all of it.
    for (std::size_t entry = 0; entry < entry_t0_.size(); ++entry)
        if (entry_t0_[entry] <= s.t0 && s.t0 < entry_t1_[entry]) s.chunks.push_back(entry);
    return s;
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
