// fourdgs/open_scene.hpp — one call that opens a file with the front-end its temporal model
// needs, and one set of questions whatever the model.
//
// open_scene() reads the front matter once and dispatches on the Header's temporal_model (§5.1):
//
//   source                    gaussian-birth              keyframe-delta
//   random access, known size IndexedReader               KeyframeDeltaReader, built from the
//                                                          same opened IndexedReader
//   a stream (a pipe)         StreamingReader             KeyframeDeltaStream
//
// On a random-access source it reads the magic, the 37-byte tail, the summary and the front
// matter exactly once (IndexedReader::open); a keyframe-delta file then gets its timeline from
// that same state, nothing is read twice. On a stream it reads the magic and the Header record,
// decides, and hands the front-end a source that replays those bytes before the rest of the
// stream, so the stream too is read once, front to back. The front-end is chosen there, once:
// every question below is the chosen front-end's answer.
//
// What each question means, per model:
//   scene()            the SceneInfo: front matter and extras; the Chunk Index and Statistics
//                      (random access: from open(); a stream: once its end has been read).
//   state_at(t)        the decoded §3 state (not yet evaluated: see reconstruct.hpp) of every
//                      gaussian that can be live at t. gaussian-birth: every chunk whose
//                      [t0, t1) contains t, in index order (none outside them). keyframe-delta:
//                      the state composed for the state chunk whose [t0, t1) contains t, sorted
//                      by gaussian_id (time-out-of-range outside [0, duration)).
//   read_all(visit)    every stored block, in order: gaussian-birth, each chunk (index order on
//                      random access, file order on a stream); keyframe-delta, each state chunk's
//                      composed state, in time order.
//   read_every_gaussian() gaussian-birth: every gaussian in one block (read_all's chunks
//                      joined); decode_chunk(i) index entry i's chunk alone (random access).
//                      Refused on keyframe-delta, whose states are composed from chains.
//   chunks_for(t)      the index entries state_at(t) reads: gaussian-birth, the chunks covering
//                      t; keyframe-delta, the chain (keyframe first, §11.8).
//   fetch_cost(t)      the bytes state_at(t) fetches (those entries' records plus the wanted SH
//                      bands); entry_fetch_cost(i) the same for index entry i's state.
//   state_span(t)      which state covers t (fourdgs/state_timeline.hpp): the span of instants
//                      [t0, t1) over which state_at gives the same state, its key, and the
//                      entries it is decoded from (chunks_for(t)); states() the whole timeline.
//   fetch_ranges(t)    those bytes as ranges: everything state_at(t) reads after open(), so a
//                      source that cannot block (a browser's fetch()) fetches them first.
//
// A stream (not random access, or OpenSceneOptions::access = streaming) is read forward only:
//   * gaussian-birth: the file has no index before its end, so any chunk may cover t. The first
//     state_at(t) or read_all reads the rest of the stream; after that both are refused
//     (not-seekable).
//   * keyframe-delta: states arrive in time order and are composed as they pass. state_at(t)
//     works for non-decreasing t (the same state again is answered from memory); a t before the
//     current state is refused (not-seekable). read_all visits the states not yet passed.
//   * chunks_for, state_span, fetch_cost, entry_fetch_cost, fetch_ranges and decode_chunk are
//     refused (not-seekable). read_every_gaussian is read_all's walk, its chunks joined.
//   * next_block pulls the stored blocks one at a time instead (and only on a stream).
//   * A truncated stream: state_at / read_all return the truncation error (kind truncated) after
//     the complete chunks before the cut (read_all has visited them).
//
// Thread safety: on a random-access source, state_at, read_all, read_every_gaussian and
// decode_chunk may be called from several threads at once with distinct workspaces (when the
// ByteSource's read_at is thread-safe). A stream is read by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/state_timeline.hpp"

// The front-end open_scene chose: declared in src/read/scene_front_end.hpp, inside the library
// and not exported.
namespace fourdgs {
class SceneFrontEnd;
}  // namespace fourdgs

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

struct OpenSceneOptions {
    // Limits, SH cap, payloads. accept_keyframe_delta is set by open_scene.
    ReaderOptions reader;
    // automatic: the indexed front-ends when the source is random-access with a known size, the
    // streaming ones otherwise. streaming: front to back even on a random-access source.
    enum class Access : std::uint8_t { automatic, streaming } access = Access::automatic;
};

// Buffers one thread reuses across state_at / read_all calls.
struct SceneWorkspace {
    std::vector<DecodeWorkspace> pool;    // gaussian-birth chunk decoding, one per thread
    KeyframeDeltaWorkspace keyframes;     // keyframe-delta composition
    GaussianBlock block;                  // read_all's current block
};

// One stored block as read_all hands it over, valid for the duration of the visit: a chunk
// (gaussian-birth) or a state chunk's composed state (keyframe-delta), its index entry (on a
// stream: its position in file order) and its interval.
struct StoredBlock {
    std::size_t entry = 0;
    double t0 = 0, t1 = 0;
    const GaussianBlock& gaussians;
};

// What a block read by state_at (when asked) or next_block holds.
struct BlockInfo {
    enum class Kind : std::uint8_t {
        instant,  // gaussian-birth state_at: every gaussian of the chunks covering t
        chunk,    // a gaussian-birth stream's next_block: one chunk, as stored
        state,    // keyframe-delta: the composed state of one state chunk
    } kind = Kind::instant;
    // chunk: the Chunk record's offset, t0, t1, level and object_id_stream (the rest 0: the
    // stream reports no length). state: the state chunk's StateInfo. instant: all 0.
    StateInfo record;
};

class SceneReader {
public:
    SceneReader(SceneReader&&) noexcept;
    SceneReader& operator=(SceneReader&&) noexcept;
    ~SceneReader();

    const SceneInfo& scene() const noexcept;
    bool keyframe_delta() const noexcept;
    // True on the indexed front-ends (random access); false on a stream.
    bool random_access() const noexcept;
    // True when the file had no index and open() built one by walking it (M016).
    bool index_built_by_scan() const noexcept;
    // True when open() read the file by a sequential scan (no index, or a tail it could not
    // use), and why (IndexedReader::read_by_scan, scan_cause); false and none on a stream.
    bool read_by_scan() const noexcept;
    const std::optional<Error>& scan_cause() const noexcept;

    // The state at t into `out` (cleared first), as described above. `threads` (0 = hardware
    // concurrency) decodes a gaussian-birth instant's chunks in parallel on random access.
    // `info`, when given, says what was read: an instant, or the state chunk's StateInfo.
    Status state_at(double t, GaussianBlock& out, SceneWorkspace& ws, unsigned threads = 0,
                    BlockInfo* info = nullptr) const;

    // Calls `visit` for every stored block, in order; a visit that returns an error stops the
    // walk with it.
    Status read_all(const std::function<Status(const StoredBlock&)>& visit,
                    SceneWorkspace& ws) const;

    // Gaussian-birth: every gaussian into `out` (cleared first), chunks in index order (random
    // access: sized once from the index counts, `threads` as state_at's) or file order (a stream:
    // read to its end, as read_all). Keyframe-delta: refused (read-all-needs-gaussian-birth).
    Status read_every_gaussian(GaussianBlock& out, SceneWorkspace& ws,
                               unsigned threads = 0) const;

    // Gaussian-birth, random access: index entry `index`'s chunk alone into ws.block
    // (IndexedReader::decode_chunk). Refused on a stream (not-seekable) and on keyframe-delta,
    // whose states are composed from a chain (chunk-decode-needs-chain).
    Status decode_chunk(std::size_t index, DecodeWorkspace& ws) const;

    Result<std::vector<std::size_t>> chunks_for(double t) const;
    // The state at t (an uncovered StateSpan outside every span), and the whole timeline
    // (nullptr on a stream, which has no index; state_span is refused there, not-seekable).
    Result<StateSpan> state_span(double t) const;
    const StateTimeline* states() const noexcept;
    Result<std::uint64_t> fetch_cost(double t) const;
    Result<std::uint64_t> entry_fetch_cost(std::size_t entry) const;
    // In the order the front-end announces them to the source (ByteSource::prefetch); their
    // lengths sum to fetch_cost(t).
    Result<std::vector<ByteRange>> fetch_ranges(double t) const;

    // Bytes the indexed front-end has fetched so far (0 on a stream).
    std::uint64_t bytes_fetched() const noexcept;

    // A stream's next stored block into `out`, pulled one at a time rather than by read_all's
    // visits (the C ABI's fourdgs_stream), and what it is into `info`: a gaussian-birth chunk
    // (StreamingReader::next_chunk) or a keyframe-delta state (KeyframeDeltaStream::next_state).
    // False at the end. A stream is read by one of the two ways: pulling does not mix with
    // state_at / read_all. Refused on random access (invalid-argument).
    Result<bool> next_block(GaussianBlock& out, BlockInfo& info);

private:
    friend Result<SceneReader> open_scene(ByteSource& source, const OpenSceneOptions& options);
    // The player (player.hpp) plays through the front-end's playback calls, which are not API.
    friend class Player;
    explicit SceneReader(std::unique_ptr<SceneFrontEnd> front_end);

    std::unique_ptr<SceneFrontEnd> front_end_;
};

// Opens `source` (which must outlive the reader) with the front-end its temporal model needs.
// Refusals: those of IndexedReader::open and KeyframeDeltaReader::open (random access), or of
// StreamingReader::open and KeyframeDeltaStream::open (a stream). A keyframe-delta file without
// an index is refused on a random-access source as KeyframeDeltaReader::open refuses it; open it
// with access = streaming.
Result<SceneReader> open_scene(ByteSource& source, const OpenSceneOptions& options = {});

}  // namespace fourdgs
FOURDGS_PUBLIC_END
