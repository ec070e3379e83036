// The keyframe-delta seek walk (fourdgs/keyframe_timeline.hpp): the Chunk Index validated once,
// and the chain and cost of every instant from it.
#include "fourdgs/keyframe_timeline.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <unordered_map>

#include "fourdgs/index_check.hpp"

namespace fourdgs {
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
        if (!(std::isfinite(e.t0) && std::isfinite(e.t1) && e.t0 <= e.t1))
            return malformed(refusal::kNonTilingChunks,
                             "state chunk at byte " + std::to_string(e.chunk_offset) +
                                 " has interval " + interval_text(e.t0, e.t1) +
                                 ", which is not a finite, ordered interval (§11.1)",
                             e.chunk_offset);
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
    const std::size_t n = ix.size();
    if (n == 0) {
        if (duration > 0)
            return malformed(refusal::kTimelineGap,
                             "no state chunk covers the timeline " + interval_text(0, duration) +
                                 " (§11.1)",
                             kNoOffset);
        return ok_status();
    }
    const ChunkIndex& first = ix[by_time.front()];
    if (first.t0 != 0)
        return malformed(first.t0 > 0 ? refusal::kTimelineGap : refusal::kNonTilingChunks,
                         "the timeline starts at 0 but its first state chunk covers " +
                             interval_text(first.t0, first.t1) + " (§11.1)",
                         first.chunk_offset);
    for (std::size_t k = 1; k < n; ++k) {
        const ChunkIndex& a = ix[by_time[k - 1]];
        const ChunkIndex& b = ix[by_time[k]];
        if (a.t1 != b.t0) {
            const bool overlap = a.t1 > b.t0;
            return malformed(overlap ? refusal::kNonTilingChunks : refusal::kTimelineGap,
                             "state chunks " + interval_text(a.t0, a.t1) + " (byte " +
                                 std::to_string(a.chunk_offset) + ") and " +
                                 interval_text(b.t0, b.t1) + " (byte " +
                                 std::to_string(b.chunk_offset) + ") " +
                                 (overlap ? "overlap" : "leave a gap") + " (§11.1)",
                             b.chunk_offset);
        }
    }
    const ChunkIndex& last = ix[by_time.back()];
    if (last.t1 != duration)
        return malformed(last.t1 < duration ? refusal::kTimelineGap : refusal::kNonTilingChunks,
                         "the last state chunk covers " + interval_text(last.t0, last.t1) +
                             " but the Header's duration is " + time_text(duration) +
                             ", so the timeline " + interval_text(0, duration) +
                             (last.t1 < duration ? " is not covered to its end"
                                                 : " is overrun") +
                             " (§11.1)",
                         last.chunk_offset);
    return ok_status();
}

// The entries in file order, which the references and delta_mode 1 are about: the entry framing
// each record, and each entry's predecessor in file order (n for the first).
struct FileOrder {
    std::unordered_map<std::uint64_t, std::size_t> at;
    std::vector<std::size_t> previous;
    std::uint64_t first_offset = 0;
};

Result<FileOrder> file_order(const std::vector<ChunkIndex>& ix) {
    const std::size_t n = ix.size();
    // (No entry offsets here: a repeated entry is named at the chunk both name.)
    std::vector<std::uint64_t> named_at(n);
    for (std::size_t i = 0; i < n; ++i) named_at[i] = ix[i].chunk_offset;
    FOURDGS_ASSIGN(const std::vector<std::size_t> by_offset, entries_by_chunk_offset(ix, named_at));
    FileOrder order;
    order.at.reserve(n);
    order.previous.assign(n, n);
    for (std::size_t k = 0; k < n; ++k) {
        order.at.emplace(ix[by_offset[k]].chunk_offset, by_offset[k]);
        if (k > 0) order.previous[by_offset[k]] = by_offset[k - 1];
    }
    order.first_offset = n ? ix[by_offset.front()].chunk_offset : 0;
    return order;
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

// §11.8: entry i's chain, walked backwards through reference_offset to its keyframe, each
// reference checked as it is followed; returned keyframe first.
Result<std::vector<std::size_t>> walk_chain(const std::vector<ChunkIndex>& ix, std::size_t i,
                                            const FileOrder& order) {
    std::vector<std::size_t> chain;
    chain.push_back(i);
    std::size_t cur = i;
    while (ix[cur].keyframe->chunk_kind == kChunkKindDelta) {
        const ChunkIndex& e = ix[cur];
        const KeyframeIndexFields& k = *e.keyframe;
        auto bad_reference = [&](std::string_view refusal, std::string_view says,
                                 std::string_view why) {
            std::string who = "the delta entry for byte ";
            who += std::to_string(e.chunk_offset);
            return reference_refusal(refusal, std::move(who), says, k.reference_offset, why,
                                     e.chunk_offset);
        };
        if (k.reference_offset >= e.chunk_offset)
            return bad_reference(refusal::kForwardReference, " has reference_offset ",
                                 ", not before its own offset; references point backwards "
                                 "only (§11.8)");
        auto it = order.at.find(k.reference_offset);
        if (it == order.at.end()) {
            if (k.reference_offset < order.first_offset)
                return malformed(refusal::kChainWithoutKeyframe,
                                 "the chain of the entry for byte " +
                                     std::to_string(ix[i].chunk_offset) +
                                     " reaches reference_offset " +
                                     std::to_string(k.reference_offset) +
                                     ", before the file's first state chunk at byte " +
                                     std::to_string(order.first_offset) +
                                     ", without a keyframe (§11.8)",
                                 e.chunk_offset);
            return bad_reference(refusal::kBrokenReference, " has reference_offset ",
                                 ", which names no Chunk Index entry (§11.8)");
        }
        if (k.delta_mode == kDeltaModeKeyframe && k.reference_offset != k.keyframe_offset) {
            std::string why = " is not its keyframe_offset ";
            why += std::to_string(k.keyframe_offset);
            why += " (§5.18)";
            return bad_reference(refusal::kDeltaModeMismatch,
                                 " is keyframe-referenced (delta_mode 0) but its "
                                 "reference_offset ",
                                 why);
        }
        if (k.delta_mode == kDeltaModeChained && it->second != order.previous[cur])
            return bad_reference(refusal::kDeltaModeMismatch,
                                 " is chained (delta_mode 1) but its reference_offset ",
                                 " is not the state chunk immediately preceding it (§5.18)");
        cur = it->second;
        chain.push_back(cur);
    }
    std::reverse(chain.begin(), chain.end());
    return chain;
}

// §11.8: the chain walked agrees with what its entries declare: every member names the keyframe
// the walk reached, and entry i's depth counts the chain's deltas.
Status check_chain(const std::vector<ChunkIndex>& ix, std::size_t i,
                   const std::vector<std::size_t>& chain) {
    const ChunkIndex& head = ix[chain.front()];
    for (std::size_t c : chain)
        if (ix[c].keyframe->keyframe_offset != head.chunk_offset)
            return malformed(refusal::kChainWithoutKeyframe,
                             "the entry for byte " + std::to_string(ix[c].chunk_offset) +
                                 " names keyframe_offset " +
                                 std::to_string(ix[c].keyframe->keyframe_offset) +
                                 " but its chain reaches the keyframe at byte " +
                                 std::to_string(head.chunk_offset) + " (§11.8)",
                             ix[c].chunk_offset);
    if (chain.size() != std::size_t{ix[i].keyframe->depth} + 1)
        return malformed(refusal::kDepthMismatch,
                         "the entry for byte " + std::to_string(ix[i].chunk_offset) +
                             " declares depth " + std::to_string(ix[i].keyframe->depth) +
                             " (a chain of " + std::to_string(ix[i].keyframe->depth + 1) +
                             " records) but its chain walks " + std::to_string(chain.size()) +
                             " (§11.8)",
                         ix[i].chunk_offset);
    return ok_status();
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
    FOURDGS_ASSIGN(const FileOrder order, file_order(ix));
    FOURDGS_TRY(check_keyframe_entries(ix));
    tl.chains_.resize(ix.size());
    for (std::size_t i = 0; i < ix.size(); ++i) {
        FOURDGS_ASSIGN(tl.chains_[i], walk_chain(ix, i, order));
        FOURDGS_TRY(check_chain(ix, i, tl.chains_[i]));
    }
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
