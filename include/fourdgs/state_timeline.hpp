// fourdgs/state_timeline.hpp — which state a scene shows at t, from the Chunk Index alone: the
// one answer the readers, the player and the bindings (through the C ABI) ask.
//
// A state is what the reader decodes for an instant and what a player holds: gaussian-birth, the
// chunks covering t; keyframe-delta, the state chunk covering t, composed from its chain. The
// timeline cuts [0, duration) into spans over which that state does not change, so a player
// decodes a state once and shows it for every instant of its span:
//   gaussian-birth   every bound of an entry's interval (and 0 and the duration) cuts the
//                    timeline; between two bounds the chunks covering an instant are the same
//                    (in index order); a span may cover no chunk (a gap: an empty state)
//   keyframe-delta   one span per state chunk, in time order; its chunks are the chain that
//                    composes it, keyframe first, the state chunk last
//
// Thread safety: a built StateTimeline is immutable; its const members may be called from
// several threads at once.
#pragma once

#include <cstddef>
#include <vector>

#include "fourdgs/export.hpp"
#include "fourdgs/keyframe_timeline.hpp"
#include "fourdgs/records.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// The state at an instant: which span of the timeline (`key`, its place in time order), the
// instants [t0, t1) it covers, and the index entries it is decoded from. No state covers t
// (outside every span): key == kNoState, t0 == t1 == 0, no chunks.
struct StateSpan {
    static constexpr std::size_t kNoState = ~std::size_t{0};
    std::size_t key = kNoState;
    double t0 = 0, t1 = 0;
    std::vector<std::size_t> chunks;
    bool covered() const noexcept { return key != kNoState; }
};

class StateTimeline {
public:
    StateTimeline() = default;  // no spans: a stream, which has no index
    // gaussian-birth: spans cut at every bound (entries whose interval is NaN cover nothing).
    // Holds the bounds and the entries' intervals (memory linear in the index); a span's chunks
    // are found when asked, by a walk over the intervals.
    static StateTimeline of_chunks(const std::vector<ChunkIndex>& index, double duration);
    // keyframe-delta: one span per state chunk, from a validated timeline.
    static StateTimeline of_states(const KeyframeTimeline& timeline);

    std::size_t size() const noexcept { return t0_.size(); }
    // The span `key` (0 <= key < size()).
    StateSpan span(std::size_t key) const;
    // The key of the span holding t, or kNoState.
    std::size_t find(double t) const noexcept;
    // The state at t: span(find(t)), or an uncovered StateSpan.
    StateSpan at(double t) const;

private:
    std::vector<double> t0_, t1_;  // span k covers [t0_[k], t1_[k])
    // gaussian-birth: each entry's interval, in index order (an entry lies in span k when its
    // interval holds t0_[k]); keyframe-delta: span k's chain, chains_[first_[k] .. first_[k + 1]).
    std::vector<double> entry_t0_, entry_t1_;
    std::vector<std::size_t> first_, chains_;
};

}  // namespace fourdgs
FOURDGS_PUBLIC_END
