// fourdgs/tools/merge.hpp — joins .4dgs files holding slices of one scene's timeline (the shards
// a grid plan's conversions wrote, grid_plan.hpp) into one file, without re-encoding a gaussian
// stream. Part of the tools library (fourdgs::tools).
//
// What is copied and what is rewritten:
//   * Chunk and Delta Chunk records and their SH Band records are copied byte for byte, with two
//     exceptions, each rewriting only what moved. Where the union of the parts' Window Tables
//     gives a part's windows other indices, the window_index stream of each chunk whose indices
//     change is decoded, renumbered and encoded again (same codec); the other streams' bytes are
//     copied as they are (a chunk-level-compressed block is inflated and compressed again around
//     them). A Delta Chunk's reference_offset and keyframe_offset name the merged file's offsets.
//   * The Header is the base part's with the scene's gaussian_count (gaussian-birth: the chunks'
//     sum; keyframe-delta: the parts' sum, their ids being disjoint as a plan's shards' are), the
//     union of the parts' aabbs and flags bit 1 when any part's chunks are compressed; the
//     Quantization record (one grid for all) and the Window Table (the union, sorted by lo then
//     hi, as a single-process write orders it) are written again; the summary (Chunk Index,
//     Statistics, Summary Offset), its CRC and the Footer are the merged file's own.
//   * The base part's other records — metadata, attachments, audio, camera, provenance, objects,
//     private records — are copied byte for byte, in its file order, ahead of the chunks, except
//     a shard's "4dgs-shard" Metadata (true of one part only; MergeOptions::shard's when the
//     merged file is itself a shard), the keyframe writer's "keyframe-delta" Metadata, whose
//     keyframe_interval_sec and gop_max_depth are recomputed, and the Object Tracks: each
//     object's is the union of the parts' samples in time order (a shard carries its slice's),
//     written where the base part's tracks were, in ascending object id.
//
// The parts: each must open as a .4dgs file (magic, footer, summary and its CRC, front matter), and
// each chunk the merge copies must be the record its index entry says (else invalid-part, naming
// the part and the underlying refusal; MergeOptions::validate_parts runs the whole validator on
// every part first). They must share the temporal model, the clock (duration_sec) and the cutoff
// (scene-mismatch, naming the field), and the grid: the Quantization record field by field and the
// SH degree (grid-mismatch, naming the first field that differs). A part's slice of the timeline
// is its "4dgs-shard" Metadata's [t0, t1) when it has one, else the span of its chunks; parts are
// merged in the order of their slices; a chunk starts inside its part's slice (a planned part's
// record may outlast it, convert.hpp).
//
// Shards of a plan (convert.hpp): a "4dgs-shard" record that names its frames (first_frame,
// end_frame, frames) is convert's, and must be of this build's format (kShardFormat; one without
// shard_format is an older build's: shard-version-mismatch, naming the part); the parts must be
// converted on one plan — the one MergeOptions::plan_digest names, when it names one — (the plan
// in their "4dgs-convert" Metadata; plan-mismatch naming the part and both plans); and when
// every part names its frames, they must cover every frame of the sequence, or of
// MergeOptions::shard's slice (missing-slice naming the frames no part holds). Slices that overlap are refused (overlapping-parts, naming
// both parts) unless allow_overlap says the union is intended — never for keyframe-delta, whose
// state chunks must tile the clock (§11.1): there each part is a shard (or the only part), its
// chunks outside its slice are the empty keyframes a shard fills the clock with and are dropped,
// and the merged tiling must be whole, by the readers' own §11.1 rule (timeline-gap naming the
// hole; non-tiling-chunks for an overlap or an overrun of the duration, which overlapping-parts
// and each part's own reader refuse first in practice). Every other record the parts
// carry must agree with the base part's record of the same kind and name, byte for byte, or be
// absent (conflicting-extras, naming the record, e.g. "Metadata 'title'" or "Object Track 7"); the
// base is MergeOptions::base, or the part whose slice comes first.
//
// Reading: a part is walked by the core's RecordStream and each chunk and SH Band record fetched
// whole by the range its index entry names (RangeFetcher's fetch_framed, detail/record_stream.hpp), then
// checked against that entry (check_index_entry, detail/index_check.hpp).
//
// Memory: the merged index (the summary) and, per part, its index entries and Window Table, plus
// one chunk's records at a time (its Chunk or Delta Chunk record and SH Band records, fetched into
// one buffer sized for them: RangeFetcher::fetch_framed_append) and copy blocks of
// MergeOptions::block_bytes, and the parts' Object Tracks (a sample per frame of each rigid
// part: summary-sized). A renumbered window_index stream is spliced into that buffer, or,
// when it grew past the buffer's room, into the record read again — never two copies of a
// chunk. Nothing in proportion to the scene. A chunk-level-compressed chunk whose window_index
// stream changes also holds its block inflated, twice.
//
// Output is deterministic: the same parts and options give the same bytes.
//
// Thread safety: reentrant; the sources are read by the calling thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/scene.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// The version of the "4dgs-shard" Metadata record this build writes (convert.hpp) and merges: a
// part whose record says another (an older build's has no shard_format, version 1) is refused.
inline constexpr std::uint32_t kShardFormat = 2;

struct MergeOptions {
    bool allow_overlap = false;       // gaussian-birth: overlapping slices are a union
    std::optional<std::size_t> base;  // the part (index into the parts given) whose front matter
                                      // the file carries; default the part whose slice is first
    bool validate_parts = false;      // validate() every part before anything is written
    std::size_t block_bytes = 256 << 10;  // copy block size (>= 4096)
    std::vector<std::string> names;       // the parts' names for messages (paths); default "part i"
    // The plan the parts must have been converted on (plan_digest, grid_plan.hpp); "" = any, as
    // long as it is one.
    std::string plan_digest;
    // The merged file is itself a shard of a plan: this "4dgs-shard" Metadata record (its slice)
    // replaces the parts', the parts must cover its slice, and a keyframe-delta part's empty
    // keyframes outside it are kept. nullopt: the merged file is the whole scene (or a union).
    std::optional<Metadata> shard;
};

struct MergeReport {
    std::size_t base = 0;               // the part whose front matter was taken
    std::vector<std::size_t> order;     // the parts, in the order their chunks were written
    std::uint32_t chunks = 0;           // chunks written
    std::uint32_t chunks_verbatim = 0;  // chunk records copied byte for byte
    std::uint32_t window_streams_rewritten = 0;  // chunks whose window_index stream was renumbered
    std::uint32_t references_rewritten = 0;      // Delta Chunk headers whose offsets were renamed
    std::uint32_t chunks_dropped = 0;            // a shard's empty keyframes outside its slice
    std::uint64_t bytes_verbatim = 0;  // bytes of chunk, band and front-matter records copied as is
    std::uint64_t largest_chunk = 0;   // the largest chunk record plus its SH Band records
    std::uint64_t summary_bytes = 0;   // the merged summary (index, Statistics, Summary Offset)
    std::uint64_t bytes_written = 0;
};

// Merges `parts` (each random-access with a known size, outliving the call) into `sink`, as
// described above. Refusals (invalid_argument unless noted): invalid-option (no parts, a base out
// of range, block_bytes < 4096, a shard record that is not one), invalid-part,
// shard-version-mismatch, plan-mismatch, missing-slice, scene-mismatch, grid-mismatch,
// overlapping-parts, conflicting-extras (also two poses of one object at one time),
// timeline-gap and non-tiling-chunks (malformed), index-out-of-range inside invalid-part (an entry
// naming bytes outside the part's chunks, by the readers' check), limit-exceeded (more than 2^32 - 1 chunks or gaussians), and the
// sink's io errors. On failure the sink may hold a partial file.
Status merge_scenes(std::span<ByteSource* const> parts, const MergeOptions& options, ByteSink& sink,
                    MergeReport* report = nullptr);

// Opens `paths` and merges them into `output` atomically (a temporary file beside it, renamed over
// it at the end; removed on any failure). The paths name the parts in messages. Also io-error.
Status merge_files(std::span<const std::string> paths, const std::string& output,
                   const MergeOptions& options, MergeReport* report = nullptr);

}  // namespace fourdgs
FOURDGS_PUBLIC_END
