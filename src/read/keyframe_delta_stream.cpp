// KeyframeDeltaStream (fourdgs/keyframe_delta_stream.hpp): the state chunks a ChunkWalk hands out,
// composed in file order.
#include "fourdgs/keyframe_delta_stream.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "fourdgs/detail/chunk_walk.hpp"
#include "fourdgs/detail/index_check.hpp"
#include "fourdgs/detail/keyframe_composition.hpp"
#include "fourdgs/detail/keyframe_rules.hpp"
#include "keyframe_states.hpp"

namespace fourdgs {

using detail::ChunkBands;
using detail::ChunkRef;
using detail::ChunkWalk;
using detail::ComposedPopulation;
using detail::DeltaBins;
using detail::FramedChunk;
using detail::StateChains;
using detail::StateChunk;
using detail::StateLink;
using detail::TimelineTiling;
using detail::check_delta_level;
using detail::decode_state_chunk_bins;
using detail::parse_state_chunk;
using detail::describe_delta;
using detail::describe_keyframe;
using detail::keyframe_delta_options;
using detail::malformed;
using detail::wanted_bands_for;


struct KeyframeDeltaStream::State {
    State(ByteSource& source, ReaderOptions options)
        : options_(keyframe_delta_options(options)),
          walk_(source, options_, ChunkWalk::Model::keyframe_delta) {}

    // Checks `r` (a Chunk or Delta Chunk) against the states before it, decodes it and composes
    // it onto the current population; `seen` receives what it said, for the index check.
    Status compose_state(const RecordView& r, std::span<const ShBandRecord> bands,
                         const ChunkDecodeOptions& decode, FramedChunk& seen);
    // §11.4, §11.6: delta `d` (described by `ref`) composes onto this GOP's keyframe, at the
    // level of the state it references. Refusals at `at`: chain-without-keyframe, level-mismatch.
    Status check_delta_reference(const DeltaChunk& d, const ChunkRef& ref, std::uint64_t at) const;
    Result<bool> next_state_bins(ChunkBins& bins, StateInfo* info);
    Result<bool> next_state(GaussianBlock& out, StateInfo* info);

    ReaderOptions options_;
    ChunkWalk walk_;  // the records, the scene, and every state chunk seen (file order)
    ChunkBins bins_;
    DeltaBins delta_;
    DecodeScratch scratch_;
    ComposedPopulation current_, keyframe_;
    TimelineTiling tiling_;  // §11.1 and §11.8, checked as the state chunks arrive
    StateChains chains_;
    std::uint32_t keyframe_level_ = 0, previous_level_ = 0;
    std::uint64_t keyframe_offset_ = 0;  // the current GOP's keyframe
    StateInfo record_;  // what the last composed record said of itself (its counts, streams)
};

KeyframeDeltaStream::KeyframeDeltaStream(ByteSource& source, ReaderOptions options)
    : state_(std::make_unique<State>(source, options)) {}
KeyframeDeltaStream::~KeyframeDeltaStream() = default;
KeyframeDeltaStream::KeyframeDeltaStream(KeyframeDeltaStream&&) noexcept = default;
KeyframeDeltaStream& KeyframeDeltaStream::operator=(KeyframeDeltaStream&&) noexcept = default;

Status KeyframeDeltaStream::open() { return state_->walk_.open(); }
const SceneInfo& KeyframeDeltaStream::scene() const noexcept { return state_->walk_.scene(); }
Result<bool> KeyframeDeltaStream::next_state_bins(ChunkBins& bins, StateInfo* info) {
    return state_->next_state_bins(bins, info);
}
Result<bool> KeyframeDeltaStream::next_state(GaussianBlock& out, StateInfo* info) {
    return state_->next_state(out, info);
}
std::uint64_t KeyframeDeltaStream::distinct_ids() const noexcept {
    return state_->current_.size() + state_->current_.dead_ids().size();
}
bool KeyframeDeltaStream::finished() const noexcept { return state_->walk_.finished(); }
const std::optional<Error>& KeyframeDeltaStream::truncation() const noexcept {
    return state_->walk_.truncation();
}
std::vector<ChunkIndex> KeyframeDeltaStream::index_entries() const {
    std::vector<ChunkIndex> out;
    for (const FramedChunk& c : state_->walk_.chunks()) out.push_back(c.entry(true));
    return out;
}
std::uint64_t KeyframeDeltaStream::bytes_read() const noexcept {
    return state_->walk_.stream().bytes_read();
}

Status KeyframeDeltaStream::State::check_delta_reference(const DeltaChunk& d, const ChunkRef& ref,
                                                         std::uint64_t at) const {
    // The chain rules allow a keyframe-referenced delta onto an earlier GOP's keyframe; a
    // stream holds the current GOP's keyframe only, so that one cannot be composed here.
    if (d.keyframe_offset != keyframe_offset_)
        return malformed(refusal::kChainWithoutKeyframe,
                         ref.describe() + " names keyframe_offset " +
                             std::to_string(d.keyframe_offset) +
                             " but the keyframe at the head of its GOP is at byte " +
                             std::to_string(keyframe_offset_) + " (§11.4)",
                         at);
    const bool chained = d.delta_mode == kDeltaModeChained;
    return check_delta_level(ref, d.level, d.reference_offset,
                             chained ? previous_level_ : keyframe_level_, at);
}

Status KeyframeDeltaStream::State::compose_state(const RecordView& r,
                                                 std::span<const ShBandRecord> bands,
                                                 const ChunkDecodeOptions& decode,
                                                 FramedChunk& seen) {
    const SceneInfo& sc = walk_.scene();
    FOURDGS_ASSIGN(StateChunk parsed, parse_state_chunk(r));
    seen = FramedChunk::of(r, parsed);
    const ChunkRef ref{r.offset, seen.t0, seen.t1, seen.delta};
    // §11.1 and §11.8 on the records as they arrive: in a stream, file order is time order.
    const StateLink link = StateLink::of(seen);
    FOURDGS_TRY(tiling_.next(link));
    FOURDGS_TRY(chains_.next(link));
    const int want = wanted_bands_for(sc, options_);
    const std::uint64_t max_pop = options_.decode.limits.max_gaussians_per_chunk;

    // §11.4 and §11.6 before a delta is decoded: its keyframe and level are refused first.
    if (parsed.delta) FOURDGS_TRY(check_delta_reference(*parsed.delta, ref, r.offset));
    FOURDGS_TRY(decode_state_chunk_bins(sc, parsed, bands, decode, bins_, delta_, scratch_));
    if (const std::optional<ChunkRecord>& chunk = parsed.chunk) {
        ComposedPopulation next;
        next.reset(want);
        FOURDGS_TRY(next.assign_keyframe(bins_, ref));
        FOURDGS_TRY(next.succeed(std::move(current_), ref));
        current_ = std::move(next);
        keyframe_ = current_;
        describe_keyframe(bins_, record_);
        keyframe_offset_ = r.offset;
        keyframe_level_ = previous_level_ = chunk->level;
    } else {
        const DeltaChunk& d = *parsed.delta;
        if (d.delta_mode == kDeltaModeChained) {
            FOURDGS_TRY(current_.apply(delta_, ref, max_pop));
        } else {
            ComposedPopulation next = keyframe_;
            FOURDGS_TRY(next.apply(delta_, ref, max_pop));
            FOURDGS_TRY(next.succeed(std::move(current_), ref));
            current_ = std::move(next);
        }
        previous_level_ = d.level;
        describe_delta(d, delta_, record_);
    }
    seen.live = current_.size();
    return ok_status();
}

Result<bool> KeyframeDeltaStream::State::next_state_bins(ChunkBins& out, StateInfo* info) {
    RecordView record;
    FOURDGS_ASSIGN(bool have, walk_.next_chunk(record));
    if (!have) {
        // The clean end: the last state chunk must end at the Header's duration (§11.1).
        FOURDGS_TRY(tiling_.end(walk_.scene().header.duration_sec));
        return false;
    }
    // The SH band records follow their chunk directly (§5.7, §5.18).
    FOURDGS_ASSIGN(ChunkBands b, walk_.read_bands());
    ChunkDecodeOptions decode = options_.decode;
    decode.max_sh_degree = wanted_bands_for(walk_.scene(), options_);
    // Trailing-band recovery (§11.10, M100): keep the whole bands that arrived, in order.
    if (walk_.truncation()) decode.max_sh_degree = std::min(decode.max_sh_degree, b.whole);
    FramedChunk seen;
    FOURDGS_TRY(compose_state(record, b.bands, decode, seen));
    seen.bands = b.ranges;
    current_.materialize(out);
    if (info)
        *info = StateInfo{seen.offset, seen.length, seen.t0, seen.t1, previous_level_,
                          seen.delta ? kChunkKindDelta : kChunkKindKeyframe, seen.delta_mode,
                          seen.depth, seen.delta ? seen.reference_offset : 0,
                          seen.keyframe_offset, *seen.live, out.sh_bands,
                          record_.update_count, record_.birth_count, record_.death_count,
                          record_.object_id_stream};
    walk_.remember(std::move(seen));
    return true;
}

Result<bool> KeyframeDeltaStream::State::next_state(GaussianBlock& out, StateInfo* info) {
    FOURDGS_ASSIGN(bool have, next_state_bins(bins_, info));
    if (!have) return false;
    out.clear();
    dequantize(walk_.scene(), bins_, out);
    return true;
}

}  // namespace fourdgs
