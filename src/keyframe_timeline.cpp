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

}  // namespace

// ---------------------------------------------------------------------------------------------
// KeyframeTimeline.

Result<KeyframeTimeline> KeyframeTimeline::build(std::vector<ChunkIndex> index, double duration) {
    KeyframeTimeline tl;
    tl.index_ = std::move(index);
    const std::vector<ChunkIndex>& ix = tl.index_;
    const std::size_t n = ix.size();

    for (std::size_t i = 0; i < n; ++i) {
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
    // §11.1: sorted by t0, the intervals tile [0, duration).
    tl.by_time_.resize(n);
    std::iota(tl.by_time_.begin(), tl.by_time_.end(), std::size_t{0});
    std::stable_sort(tl.by_time_.begin(), tl.by_time_.end(), [&](std::size_t a, std::size_t b) {
        return ix[a].t0 < ix[b].t0 || (ix[a].t0 == ix[b].t0 && ix[a].t1 < ix[b].t1);
    });
    if (n == 0) {
        if (duration > 0)
            return malformed(refusal::kTimelineGap,
                             "no state chunk covers the timeline " + interval_text(0, duration) +
                                 " (§11.1)",
                             kNoOffset);
    } else {
        const ChunkIndex& first = ix[tl.by_time_.front()];
        if (first.t0 != 0)
            return malformed(first.t0 > 0 ? refusal::kTimelineGap : refusal::kNonTilingChunks,
                             "the timeline starts at 0 but its first state chunk covers " +
                                 interval_text(first.t0, first.t1) + " (§11.1)",
                             first.chunk_offset);
        for (std::size_t k = 1; k < n; ++k) {
            const ChunkIndex& a = ix[tl.by_time_[k - 1]];
            const ChunkIndex& b = ix[tl.by_time_[k]];
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
        const ChunkIndex& last = ix[tl.by_time_.back()];
        if (last.t1 != duration)
            return malformed(last.t1 < duration ? refusal::kTimelineGap : refusal::kNonTilingChunks,
                             "the last state chunk covers " + interval_text(last.t0, last.t1) +
                                 " but the Header's duration is " + time_text(duration) +
                                 ", so the timeline " + interval_text(0, duration) +
                                 (last.t1 < duration ? " is not covered to its end"
                                                     : " is overrun") +
                                 " (§11.1)",
                             last.chunk_offset);
    }

    // Offsets: the entry framing each record, and each entry's predecessor in file order.
    // (No entry offsets here: a repeated entry is named at the chunk both name.)
    std::vector<std::uint64_t> named_at(n);
    for (std::size_t i = 0; i < n; ++i) named_at[i] = ix[i].chunk_offset;
    FOURDGS_ASSIGN(const std::vector<std::size_t> by_offset, entries_by_chunk_offset(ix, named_at));
    std::unordered_map<std::uint64_t, std::size_t> at;
    at.reserve(n);
    std::vector<std::size_t> previous(n, n);
    for (std::size_t k = 0; k < n; ++k) {
        at.emplace(ix[by_offset[k]].chunk_offset, by_offset[k]);
        if (k > 0) previous[by_offset[k]] = by_offset[k - 1];
    }
    const std::uint64_t first_offset = n ? ix[by_offset.front()].chunk_offset : 0;

    // A keyframe entry's duplicated fields are what a Chunk record implies (§5.8).
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

    // §11.8: each entry's chain, walked backwards through reference_offset.
    tl.chains_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::vector<std::size_t>& chain = tl.chains_[i];
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
            auto it = at.find(k.reference_offset);
            if (it == at.end()) {
                if (k.reference_offset < first_offset)
                    return malformed(refusal::kChainWithoutKeyframe,
                                     "the chain of the entry for byte " +
                                         std::to_string(ix[i].chunk_offset) +
                                         " reaches reference_offset " +
                                         std::to_string(k.reference_offset) +
                                         ", before the file's first state chunk at byte " +
                                         std::to_string(first_offset) +
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
            if (k.delta_mode == kDeltaModeChained && it->second != previous[cur])
                return bad_reference(refusal::kDeltaModeMismatch,
                                     " is chained (delta_mode 1) but its reference_offset ",
                                     " is not the state chunk immediately preceding it (§5.18)");
            cur = it->second;
            chain.push_back(cur);
        }
        std::reverse(chain.begin(), chain.end());
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
