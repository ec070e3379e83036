// The keyframe-delta model's §11.1 and §11.8 rules (fourdgs/detail/keyframe_rules.hpp).
#include "fourdgs/detail/keyframe_rules.hpp"

#include <cmath>
#include <string>

namespace fourdgs::detail {
namespace {

Error malformed(std::string_view refusal, std::string message, std::uint64_t offset) {
    return make_error(ErrorKind::malformed, refusal, std::move(message), offset);
}

std::string at_byte(std::uint64_t offset) { return "(byte " + std::to_string(offset) + ")"; }

}  // namespace

StateLink StateLink::of(const ChunkIndex& entry) {
    const KeyframeIndexFields& k = *entry.keyframe;
    return StateLink{entry.chunk_offset, entry.t0, entry.t1, k.chunk_kind == kChunkKindDelta,
                     k.delta_mode, k.reference_offset, k.keyframe_offset, k.depth};
}

StateLink StateLink::of(const FramedChunk& record) {
    return StateLink{record.offset,          record.t0,     record.t1,
                     record.delta,           record.delta_mode,
                     record.reference_offset, record.keyframe_offset, record.depth};
}

// ---------------------------------------------------------------------------------------------
// §11.1: the tiling.

Status check_state_interval(const StateLink& s) {
    if (std::isfinite(s.t0) && std::isfinite(s.t1) && s.t0 <= s.t1) return ok_status();
    return malformed(refusal::kNonTilingChunks,
                     "state chunk at byte " + std::to_string(s.offset) + " has interval " +
                         interval_text(s.t0, s.t1) +
                         ", which is not a finite, ordered interval (§11.1)",
                     s.offset);
}

Status TimelineTiling::next(const StateLink& s) {
    FOURDGS_TRY(check_state_interval(s));
    const double starts_at = last_ ? last_->t1 : 0.0;
    if (s.t0 != starts_at) {
        const bool gap = s.t0 > starts_at;
        const std::string_view refusal = gap ? refusal::kTimelineGap : refusal::kNonTilingChunks;
        if (!last_)
            return malformed(refusal,
                             "the timeline starts at 0 but its first state chunk " +
                                 at_byte(s.offset) + " covers " + interval_text(s.t0, s.t1) +
                                 " (§11.1)",
                             s.offset);
        return malformed(refusal,
                         "state chunks " + interval_text(last_->t0, last_->t1) + " " +
                             at_byte(last_->offset) + " and " + interval_text(s.t0, s.t1) + " " +
                             at_byte(s.offset) + (gap ? " leave a gap" : " overlap") + " (§11.1)",
                         s.offset);
    }
    last_ = s;
    return ok_status();
}

Status TimelineTiling::end(double duration) const {
    const double ends_at = last_ ? last_->t1 : 0.0;
    if (ends_at == duration) return ok_status();
    const bool short_of_it = ends_at < duration;
    const std::string_view refusal = short_of_it ? refusal::kTimelineGap : refusal::kNonTilingChunks;
    const std::string timeline = "the timeline " + interval_text(0, duration);
    if (!last_) return malformed(refusal, "no state chunk covers " + timeline + " (§11.1)", kNoOffset);
    return malformed(refusal,
                     "the last state chunk " + at_byte(last_->offset) + " covers " +
                         interval_text(last_->t0, last_->t1) + " but the Header's duration is " +
                         time_text(duration) + ", so " + timeline +
                         (short_of_it ? " is not covered to its end" : " is overrun") + " (§11.1)",
                     last_->offset);
}

// ---------------------------------------------------------------------------------------------
// §11.8, §5.18: the chains.

Result<std::optional<std::size_t>> StateChains::next(const StateLink& s) {
    std::optional<std::size_t> reference;
    Fed fed{s.offset, s.offset, 0};
    if (s.delta) {
        FOURDGS_ASSIGN(reference, check_delta(s));
        fed.keyframe = s.keyframe_offset;
        fed.depth = s.depth;
    }
    position_of_.emplace(s.offset, fed_.size());
    fed_.push_back(fed);
    return reference;
}

// The rules in the order a reader meets them walking the chain back from `s`: where the
// reference points, which state it names, whether that is the one delta_mode says, then the
// chain it extends — its keyframe and its length. Returns the position of the state named.
Result<std::size_t> StateChains::check_delta(const StateLink& s) const {
    const std::string who = "the Delta Chunk at byte " + std::to_string(s.offset);
    auto bad_reference = [&](std::string_view refusal, std::string_view says,
                             std::string_view why) {
        return reference_refusal(refusal, who, says, s.reference_offset, why, s.offset);
    };
    if (s.reference_offset >= s.offset)
        return bad_reference(refusal::kForwardReference, " has reference_offset ",
                             ", not before its own offset; references point backwards only "
                             "(§11.8)");
    const auto named = position_of_.find(s.reference_offset);
    if (named == position_of_.end()) {
        if (fed_.empty() || s.reference_offset < fed_.front().offset)
            return bad_reference(refusal::kChainWithoutKeyframe, " references byte ",
                                 " but no keyframe precedes it; there is no absolute state to "
                                 "compose onto (§11.8)");
        return bad_reference(refusal::kBrokenReference, " has reference_offset ",
                             ", which names no state chunk before it (§11.8)");
    }
    const Fed& reference = fed_[named->second];
    const bool chained = s.delta_mode == kDeltaModeChained;
    const std::uint64_t expected = chained ? fed_.back().offset : s.keyframe_offset;
    if (s.reference_offset != expected)
        return malformed(refusal::kDeltaModeMismatch,
                         who + " has delta_mode " + std::to_string(s.delta_mode) +
                             (chained ? " (chained)" : " (keyframe-referenced)") +
                             ", so its reference is byte " + std::to_string(expected) +
                             ", but its reference_offset is " +
                             std::to_string(s.reference_offset) + " (§5.18)",
                         s.offset);
    if (s.keyframe_offset != reference.keyframe)
        return malformed(refusal::kChainWithoutKeyframe,
                         who + " names keyframe_offset " + std::to_string(s.keyframe_offset) +
                             " but its chain reaches the keyframe at byte " +
                             std::to_string(reference.keyframe) + " (§11.8)",
                         s.offset);
    const std::uint32_t composes = reference.depth + 1;
    if (s.depth != composes)
        return malformed(refusal::kDepthMismatch,
                         who + " declares depth " + std::to_string(s.depth) + " (a chain of " +
                             std::to_string(s.depth + 1) + " records) but its chain walks " +
                             std::to_string(composes + 1) + " records: it composes " +
                             std::to_string(composes) + " Delta Chunk record(s) (§11.8)",
                         s.offset);
    return named->second;
}

}  // namespace fourdgs::detail
