// fourdgs/detail/keyframe_rules.hpp — the keyframe-delta model's §11.1 tiling rule and §11.8 chain
// rules, written once.
//
// Two front-ends meet the same rules on different material: the keyframe timeline checks the
// Chunk Index before any fetch (keyframe_timeline.hpp), the keyframe-delta stream checks the
// records as they arrive (keyframe_delta.hpp). Both describe each state chunk as a StateLink and
// feed it here — the timeline its entries, the stream its records — so a fault is refused with
// the same identifier, at the same byte, in the same words, whichever meets it.
//
//   TimelineTiling  fed in time order: the intervals tile [0, duration) (§11.1, M110/M118).
//   StateChains     fed in file order: each delta's reference points backwards (M119) to a state
//                   chunk that exists (M120), as its delta_mode says (§5.18), within a chain that
//                   reaches the keyframe its keyframe_offset names (M122) in exactly depth + 1
//                   records (M117/M121).
//
// A file's state chunks are in time order and in file order at once only when it is well formed;
// the timeline sorts the index both ways, the stream's file order must be its time order.
//
// Not exported from the shared library (no FOURDGS_DETAIL_BEGIN): only the library calls these,
// but for TimelineTiling, which the tools library's merge calls on the state chunks it keeps.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/detail/index_check.hpp"
#include "fourdgs/records.hpp"

namespace fourdgs::detail {

// One state chunk as the rules see it: what its Chunk Index entry and its record both state.
struct StateLink {
    std::uint64_t offset = 0;
    double t0 = 0, t1 = 0;
    bool delta = false;
    std::uint8_t delta_mode = 0;
    std::uint64_t reference_offset = 0, keyframe_offset = 0;
    std::uint32_t depth = 0;

    // An index entry with the six keyframe-delta fields (§5.8).
    static StateLink of(const ChunkIndex& entry);
    static StateLink of(const FramedChunk& record);
};

// §11.1: a state chunk's interval is finite and ordered (non-tiling-chunks otherwise).
Status check_state_interval(const StateLink& s);

// §11.1: the state chunks, fed in time order, tile [0, duration): the first starts at 0, each
// starts where the one before ended, the last ends at the Header's duration. A gap is
// timeline-gap, an overlap non-tiling-chunks, each naming the two intervals.
FOURDGS_DETAIL_BEGIN
class TimelineTiling {
public:
    Status next(const StateLink& s);
    // After the last state chunk.
    Status end(double duration) const;

private:
    std::optional<StateLink> last_;
};
FOURDGS_DETAIL_END

// §11.8, §5.18: the state chunks fed in file order, each delta checked against those before it.
class StateChains {
public:
    // Checks `s` and remembers it. For a delta, returns the position (in the order fed) of the
    // state chunk it composes onto; std::nullopt for a keyframe.
    Result<std::optional<std::size_t>> next(const StateLink& s);

private:
    struct Fed {
        std::uint64_t offset = 0;
        std::uint64_t keyframe = 0;  // the keyframe its chain reaches
        std::uint32_t depth = 0;     // Delta Chunk records its chain composes
    };
    Result<std::size_t> check_delta(const StateLink& s) const;

    std::vector<Fed> fed_;
    std::unordered_map<std::uint64_t, std::size_t> position_of_;  // offset → position in fed_
};

}  // namespace fourdgs::detail
