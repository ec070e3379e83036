// scene_front_end.hpp (not installed) — the one interface SceneReader (open_scene.hpp) forwards
// to, and the four front-ends behind it (scene_front_ends.cpp): indexed gaussian-birth, indexed
// keyframe-delta, gaussian-birth stream, keyframe-delta stream. open_scene() chooses one, once;
// after that no call asks which it is. Each is a thin adapter over its reader (IndexedReader,
// KeyframeDeltaReader, StreamingReader, KeyframeDeltaStream): what a question means per model,
// and the refusals of the questions a model or an access cannot answer, live in the adapter.
//
// The calls that advance a stream are not const here: SceneReader's const state_at / read_all
// read a stream forward (open_scene.hpp says a stream is read by one thread at a time).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "fourdgs/open_scene.hpp"
#include "fourdgs/streaming_reader.hpp"

namespace fourdgs {

using StoredBlockVisit = std::function<Status(const StoredBlock&)>;

class SceneFrontEnd {
public:
    virtual ~SceneFrontEnd() = default;

    virtual const SceneInfo& scene() const noexcept = 0;
    virtual bool keyframe_delta() const noexcept = 0;
    virtual bool random_access() const noexcept = 0;
    virtual bool index_built_by_scan() const noexcept = 0;
    virtual bool read_by_scan() const noexcept = 0;
    virtual const std::optional<Error>& scan_cause() const noexcept = 0;
    virtual std::uint64_t bytes_fetched() const noexcept = 0;

    virtual Status state_at(double t, GaussianBlock& out, SceneWorkspace& ws, unsigned threads,
                            BlockInfo* info) = 0;
    virtual Status read_all(const StoredBlockVisit& visit, SceneWorkspace& ws) = 0;
    virtual Status read_every_gaussian(GaussianBlock& out, SceneWorkspace& ws,
                                       unsigned threads) = 0;
    virtual Status decode_chunk(std::size_t index, DecodeWorkspace& ws) const = 0;
    virtual Result<std::vector<std::size_t>> chunks_for(double t) const = 0;
    virtual Result<std::uint64_t> fetch_cost(double t) const = 0;
    virtual Result<std::uint64_t> entry_fetch_cost(std::size_t entry) const = 0;
    virtual Result<std::vector<ByteRange>> fetch_ranges(double t) const = 0;
    virtual Result<bool> next_block(GaussianBlock& out, BlockInfo& info) = 0;
    // The states of the instants (fourdgs/state_timeline.hpp): random access only, else nullptr.
    virtual const StateTimeline* states() const noexcept { return nullptr; }

    // ---- Playback: what the player (play/player.cpp) prepares ahead of the playhead, asked of
    // every front-end alike, so that it plays through this interface and never reaches the reader
    // underneath. Its worker calls them with its own workspace beside the render thread's calls;
    // besides these it asks the calls above (states, fetch_ranges, state_at, chunks_for, and a
    // stream's next_block, whose state the player shows whole).
    //
    // How the front-end's states are played, which is the player's schedule: the player asks
    // this once, at open, and never which model or access the front-end is.
    enum class Playback : std::uint8_t {
        chunks,  // a state is the chunks covering it, each decoded once (decode_chunks) and kept
        steps,   // a state is composed (state_at) or one step from the one before (step_forward)
        stream,  // each state whole, forward only, as the stream passes it (next_block)
    };
    // Refused (not-seekable) where the states cannot be played: a gaussian-birth stream, whose
    // every chunk may cover any instant.
    virtual Result<Playback> playback() const = 0;
    //
    // A gaussian-birth state is its chunks, each decoded once and kept while a state shows it: the
    // ranges decode_chunks(entries) reads, and those index entries decoded one after another into
    // `out` (ws.pool; `threads` as state_at's). Refused where a state is not its chunks
    // (keyframe-delta: chunk-decode-needs-chain) and without an index (not-seekable).
    virtual Result<std::vector<ByteRange>> entry_ranges(
        std::span<const std::size_t> entries) const = 0;
    virtual Status decode_chunks(std::span<const std::size_t> entries, GaussianBlock& out,
                                 SceneWorkspace& ws, unsigned threads) const = 0;
    // A state one forward step from the state `ws` holds (left by state_at or an earlier step):
    // the index entry of the state chunk the step reaches, from the index alone, or nullopt when
    // there is none; then the step, which says in `step` what changed (false, nothing done, when
    // there is none). Keyframe-delta on random access steps through a GOP one delta at a time
    // (KeyframeDeltaReader::step_forward); every other front-end reads each state whole
    // (state_at, or a stream's next_block), so it has no step.
    virtual Result<std::optional<std::size_t>> next_step(const SceneWorkspace& ws) const;
    virtual Result<bool> step_forward(SceneWorkspace& ws, StateStep& step) const;
};

// The four front-ends (scene_front_ends.cpp). A stream's front-end owns `source`, which replays
// the bytes open_scene sniffed before the rest of the stream, and opens its reader on it.
std::unique_ptr<SceneFrontEnd> indexed_birth_front_end(IndexedReader reader);
std::unique_ptr<SceneFrontEnd> indexed_keyframe_front_end(KeyframeDeltaReader reader);
Result<std::unique_ptr<SceneFrontEnd>> birth_stream_front_end(std::unique_ptr<ByteSource> source,
                                                              const ReaderOptions& options);
Result<std::unique_ptr<SceneFrontEnd>> keyframe_stream_front_end(
    std::unique_ptr<ByteSource> source, const ReaderOptions& options);

}  // namespace fourdgs
