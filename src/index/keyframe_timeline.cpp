// The keyframe-delta seek walk (fourdgs/keyframe_timeline.hpp): the Chunk Index validated once,
// and the chain and cost of every instant from it.
#include "fourdgs/keyframe_timeline.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <unordered_map>

#include "fourdgs/detail/index_check.hpp"
#include "fourdgs/detail/keyframe_rules.hpp"

namespace fourdgs {

using detail::StateChains;
using detail::StateLink;
using detail::TimelineTiling;
using detail::check_state_interval;
using detail::entries_by_chunk_offset;
using detail::index_record_mismatch;
using detail::time_text;

namespace {

Error malformed(std::string_view refusal, std::string message, std::uint64_t offset) {
    return make_error(ErrorKind::malformed, refusal, std::move(message), offset);
}

// The steps of KeyframeTimeline::build, in the order it takes them; each refuses with the first
// entry that breaks its rule, so the order of the steps is the order of the refusals.

// Every entry carries the six keyframe-delta fields and a finite, ordered interval (§5.8,
// §11.1): what the later steps read of each entry.
Status check_entries(const std::vector<ChunkIndex>& ix) {
    for (std::size_t i = 0; i < ix.size(); ++i) {
        const ChunkIndex& e = ix[i];
        if (!e.keyframe)
            return malformed(refusal::kMissingKeyframeIndexFields,
                             "Chunk Index entry " + std::to_string(i) + " (chunk at byte " +
                                 std::to_string(e.chunk_offset) +
                                 ") lacks the six keyframe-delta fields (§5.8)",
                             e.chunk_offset);
        FOURDGS_TRY(check_state_interval(StateLink::of(e)));
    }
    return ok_status();
}

// The entries in time order (by t0, then t1; equal intervals keep file order).
std::vector<std::size_t> sorted_by_time(const std::vector<ChunkIndex>& ix) {
    std::vector<std::size_t> by_time(ix.size());
    std::iota(by_time.begin(), by_time.end(), std::size_t{0});
    std::stable_sort(by_time.begin(), by_time.end(), [&](std::size_t a, std::size_t b) {
        return ix[a].t0 < ix[b].t0 || (ix[a].t0 == ix[b].t0 && ix[a].t1 < ix[b].t1);
    });
    return by_time;
}

// §11.1: sorted by t0, the intervals tile [0, duration), so every instant has one current state.
Status check_tiling(const std::vector<ChunkIndex>& ix, const std::vector<std::size_t>& by_time,
                    double duration) {
    TimelineTiling tiling;
    for (std::size_t i : by_time) FOURDGS_TRY(tiling.next(StateLink::of(ix[i])));
    return tiling.end(duration);
}

// The entries in file order, which the references and delta_mode 1 are about; an index naming a
// chunk twice is refused here.
Result<std::vector<std::size_t>> in_file_order(const std::vector<ChunkIndex>& ix) {
    // (No entry offsets here: a repeated entry is named at the chunk both name.)
    std::vector<std::uint64_t> named_at(ix.size());
    for (std::size_t i = 0; i < ix.size(); ++i) named_at[i] = ix[i].chunk_offset;
    return entries_by_chunk_offset(ix, named_at);
}

// §5.8: a keyframe entry's duplicated fields are what a Chunk record implies.
Status check_keyframe_entries(const std::vector<ChunkIndex>& ix) {
    for (const ChunkIndex& e : ix) {
        const KeyframeIndexFields& k = *e.keyframe;
        if (k.chunk_kind != kChunkKindKeyframe) continue;
        const std::string who = "the keyframe entry for byte " + std::to_string(e.chunk_offset);
        if (k.delta_mode != 0)
            return index_record_mismatch("delta_mode", who + " has delta_mode " +
                                                    std::to_string(k.delta_mode) +
                                                    "; a Chunk has none (0)",
                                  e.chunk_offset);
        if (k.reference_offset != 0)
            return index_record_mismatch("reference_offset",
                                  who + " has reference_offset " +
                                      std::to_string(k.reference_offset) +
                                      "; a Chunk references nothing (0)",
                                  e.chunk_offset);
        if (k.keyframe_offset != e.chunk_offset)
            return index_record_mismatch("keyframe_offset",
                                  who + " has keyframe_offset " +
                                      std::to_string(k.keyframe_offset) +
                                      "; a keyframe is its own GOP head",
                                  e.chunk_offset);
        if (k.depth != 0)
            return index_record_mismatch("depth", who + " has depth " + std::to_string(k.depth) +
                                               "; a keyframe composes no delta (0)",
                                  e.chunk_offset);
    }
    return ok_status();
}

// §11.8: every entry's chain, keyframe first. Fed in file order, each delta is checked against
// the entries before it and its chain is the chain of the entry it references, extended by it.
Result<std::vector<std::vector<std::size_t>>> walk_chains(const std::vector<ChunkIndex>& ix,
                                                          const std::vector<std::size_t>& by_offset) {
    std::vector<std::vector<std::size_t>> chains(ix.size());
    StateChains rules;
    for (std::size_t i : by_offset) {
        FOURDGS_ASSIGN(const std::optional<std::size_t> reference, rules.next(StateLink::of(ix[i])));
        if (reference) chains[i] = chains[by_offset[*reference]];
        chains[i].push_back(i);
    }
    return chains;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// KeyframeTimeline.

Result<KeyframeTimeline> KeyframeTimeline::build(std::vector<ChunkIndex> index, double duration) {
    KeyframeTimeline tl;
    tl.index_ = std::move(index);
    const std::vector<ChunkIndex>& ix = tl.index_;
    FOURDGS_TRY(check_entries(ix));
    tl.by_time_ = sorted_by_time(ix);
    FOURDGS_TRY(check_tiling(ix, tl.by_time_, duration));
    FOURDGS_ASSIGN(const std::vector<std::size_t> by_offset, in_file_order(ix));
    FOURDGS_TRY(check_keyframe_entries(ix));
    FOURDGS_ASSIGN(tl.chains_, walk_chains(ix, by_offset));
    return tl;
}

Result<std::size_t> KeyframeTimeline::current(double t) const {
    // The first entry in time order whose t1 exceeds t; tiling makes it the unique one.
    auto it = std::upper_bound(by_time_.begin(), by_time_.end(), t,
                               [&](double v, std::size_t e) { return v < index_[e].t1; });
    if (!(t >= 0) || it == by_time_.end() || !(index_[*it].t0 <= t))
        return make_error(ErrorKind::invalid_argument, refusal::kTimeOutOfRange,
                          "t = " + time_text(t) + " is outside the timeline covered by the state "
                                            "chunks");
    return *it;
}

Result<std::vector<std::size_t>> KeyframeTimeline::chain(double t) const {
    FOURDGS_ASSIGN(std::size_t cur, current(t));
    return chains_[cur];
}

Result<SeekPlan> KeyframeTimeline::plan(double t, int wanted_bands) const {
    SeekPlan p;
    FOURDGS_ASSIGN(p.current, current(t));
    p.chain = chains_[p.current];
    for (std::size_t c : p.chain) {
        p.chunk_bytes += index_[c].chunk_length;
        for (const ChunkIndex::Band& b : index_[c].bands)
            if (b.band >= 1 && b.band <= wanted_bands) p.band_bytes += b.length;
    }
    return p;
}

}  // namespace fourdgs
