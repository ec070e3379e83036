// fourdgs/keyframe_delta_stream.hpp — the keyframe-delta model's (§11) streaming front-end:
// KeyframeDeltaStream composes each state chunk as it arrives in file order, from any byte
// source, and StateInfo says what a composed state came from. It sits on the walk every streaming
// front-end takes (detail/chunk_walk.hpp) and the composition (detail/keyframe_composition.hpp),
// below the indexed front-ends: IndexedReader's scan of a keyframe-delta file without an index
// composes its states with it, and KeyframeDeltaReader (keyframe_delta.hpp, which includes this
// header) is built on IndexedReader. The refusals are keyframe_delta.hpp's list.
//
// Thread safety: a KeyframeDeltaStream is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "fourdgs/decode.hpp"
#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/reader_options.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// What state_at composed: the chunk, its kind and depth, and the byte cost it fetched.
struct StateInfo {
    std::uint64_t offset = 0, length = 0;  // the state chunk's record
    double t0 = 0, t1 = 0;
    std::uint32_t level = 0;
    std::uint8_t chunk_kind = 0;  // 0 keyframe, 1 delta
    std::uint8_t delta_mode = 0;
    std::uint16_t depth = 0;
    std::uint64_t reference_offset = 0, keyframe_offset = 0;
    std::uint64_t live_count = 0;  // the composed population's size
    int sh_bands = 0;
    // The state chunk's own record: a Delta Chunk's group counts (all 0 for a keyframe, whose
    // size is live_count), and whether it carried an object_id stream — a keyframe's, or a
    // delta's update or birth group (absent and all-zero decode alike, §6.6).
    std::uint32_t update_count = 0, birth_count = 0, death_count = 0;
    bool object_id_stream = false;
};

// ---------------------------------------------------------------------------------------------
// Streaming front-end.

// Reads a keyframe-delta file front to back from any byte source (a pipe included). It holds
// the current composed population and, while a GOP is open, a copy of its keyframe's population
// (a keyframe-referenced delta composes onto it, §11.4): two populations, plus one chunk record
// with its band records and one record read ahead, plus the summary. Each state chunk's composed
// state is available as it arrives (next_state). Checks as it goes: tiling in file order (M110),
// references backwards to a state chunk already seen (M119/M120), the GOP keyframe (M122), depth
// (M121), level (M131), every composition rule, and — when the summary arrives — every Chunk
// Index entry against the chunk it frames (M123) and the summary CRC. On a truncated file it
// returns every complete chunk's state (a chunk whose trailing SH bands were cut keeps the whole
// bands that arrived, M100), then an Error of kind truncated; it never interprets a partial
// record (M132, §11.10). The records, the scene and the index checks are the ChunkWalk's
// (detail/chunk_walk.hpp), the walk the gaussian-birth streaming reader takes too; this
// front-end decodes and composes the state chunks it hands out.
class KeyframeDeltaStream {
public:
    explicit KeyframeDeltaStream(ByteSource& source, ReaderOptions options = {});
    ~KeyframeDeltaStream();
    KeyframeDeltaStream(KeyframeDeltaStream&&) noexcept;
    KeyframeDeltaStream& operator=(KeyframeDeltaStream&&) noexcept;

    // Magic and front matter up to the first state chunk. Refusals as StreamingReader::open, and
    // unknown-temporal-model for a file that is not keyframe-delta.
    Status open();
    const SceneInfo& scene() const noexcept;

    // Composes the next state chunk. Returns true with the state's bins (sorted by gaussian_id)
    // in `bins`, false at the clean end of the file; a truncation is an Error of kind truncated
    // after the last complete chunk's state (kept in truncation()).
    Result<bool> next_state_bins(ChunkBins& bins, StateInfo* info = nullptr);
    // The same, dequantized into `out` (cleared first).
    Result<bool> next_state(GaussianBlock& out, StateInfo* info = nullptr);

    // Distinct gaussian_id values seen so far (the Header's gaussian_count, §5.1, when complete).
    std::uint64_t distinct_ids() const noexcept;
    bool finished() const noexcept;
    const std::optional<Error>& truncation() const noexcept;
    // What a Chunk Index entry with the six keyframe-delta fields says of each state chunk
    // composed so far, in file order (§5.8): its record, SH band ranges and live population.
    std::vector<ChunkIndex> index_entries() const;
    // Bytes read from the source so far.
    std::uint64_t bytes_read() const noexcept;

private:
    // The walk, the populations and the §11 checks (detail/ types, not API).
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace fourdgs
FOURDGS_PUBLIC_END
