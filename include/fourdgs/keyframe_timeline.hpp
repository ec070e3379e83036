// fourdgs/keyframe_timeline.hpp — the keyframe-delta seek walk (§11.1, §11.8), from the Chunk
// Index alone: which entry holds an instant, the chain of records that composes it, and what
// fetching that chain costs, all before any fetch.
//
// Thread safety: a built KeyframeTimeline is immutable; its const members may be called from
// several threads at once.
#pragma once

#include <cstdint>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/records.hpp"

namespace fourdgs {

// What one seek costs, computed before any fetch: the chain's records plus the wanted bands.
struct SeekPlan {
    std::size_t current = 0;          // index entry of current(t)
    std::vector<std::size_t> chain;   // index entries, keyframe first, current(t) last
    std::uint64_t chunk_bytes = 0;    // sum of chunk_length over the chain
    std::uint64_t band_bytes = 0;     // the wanted SH bands of every chain entry
    std::uint64_t total_bytes() const noexcept { return chunk_bytes + band_bytes; }
};

// The Chunk Index of a keyframe-delta file, validated once: every entry carries the appended
// fields; entries tile [0, duration) (M110/M118); a keyframe entry's duplicated fields are what a
// Chunk implies (index-record-mismatch); every delta's chain walks backwards (M119), through
// entries that exist (M120), to a keyframe (M122) that is the one its keyframe_offset names, in
// exactly depth + 1 steps (M117/M121); delta_mode agrees with reference_offset.
class KeyframeTimeline {
public:
    static Result<KeyframeTimeline> build(std::vector<ChunkIndex> index, double duration);

    // current(t): the unique entry with t0 <= t < t1; invalid-argument outside [0, duration).
    Result<std::size_t> current(double t) const;
    // chain(t): keyframe first.
    Result<std::vector<std::size_t>> chain(double t) const;
    // The chain of index entry `entry` (keyframe first).
    const std::vector<std::size_t>& chain_of(std::size_t entry) const { return chains_[entry]; }
    // The plan for t: chain and byte cost with bands 1..wanted_bands.
    Result<SeekPlan> plan(double t, int wanted_bands) const;

    const std::vector<ChunkIndex>& entries() const noexcept { return index_; }
    // Entries in time order (index positions).
    const std::vector<std::size_t>& by_time() const noexcept { return by_time_; }

private:
    std::vector<ChunkIndex> index_;  // a copy of the Chunk Index, in file order
    std::vector<std::size_t> by_time_;
    std::vector<std::vector<std::size_t>> chains_;
};

}  // namespace fourdgs
