// fourdgs/decode.hpp — one chunk from bytes to gaussians: the records block (§5.5) through the
// stream pipeline (§5.6) into ChunkBins, then §6 dequantization into a GaussianBlock.
//
// Every front-end calls exactly these functions; none re-implements any of it. A Delta Chunk
// (§5.18) opens its block and checks its rows through the same steps as a Chunk
// (keyframe_delta.hpp composes them). Every stream's shape is checked against the registry and the
// chunk before its values are used, and every allocation is bounded by DecodeLimits before it
// happens.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/reader_options.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/stream.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// Buffers reused across chunk decodes so a steady-state decode allocates nothing.
struct DecodeScratch {
    std::vector<std::uint8_t> block;  // a chunk-level decompressed records block
    StreamScratch stream;
};

// Where one chunk fetched by its index entry lands: the chunk's record and its SH Band Stream
// records, each fetched whole, and the bands' parsed views. The indexed front-ends' decode
// workspaces are these buffers and their own.
struct FetchedChunkBuffers {
    std::vector<std::uint8_t> record;
    std::array<std::vector<std::uint8_t>, 3> bands;
    std::vector<ShBandRecord> band_records;  // views `bands`
};

// Decodes a Chunk record's streams and its SH band records into integer bins. Checks (§5.5,
// §5.6, §6.1): the chunk compression codec and uncompressed_size; each known stream's codec,
// channel count, element count and uniqueness; every required stream present; rotation_index in
// 0..3; window_index inside the table; SH band records whole, of the right shape, bytes in
// 0..255. Unknown attribute ids are skipped by length; SH band streams are routed by the record
// that holds them, never by their attribute_id (M032). `bands` are the SH Band Stream records
// that follow the chunk, in file order; bands above options.max_sh_degree are not decoded.
Status decode_chunk_bins(const SceneInfo& scene, const ChunkRecord& chunk,
                         std::span<const ShBandRecord> bands, const ChunkDecodeOptions& options,
                         ChunkBins& out, DecodeScratch& scratch);

// Decodes the streams of one records block (a Chunk's, or one Delta Chunk group's) into `out`,
// expecting `count` elements per stream. `what` names the block for messages. Used by
// decode_chunk_bins and by the keyframe-delta front-end; `seen` reports which known ids were
// present.
Status decode_stream_block(Bytes block, std::uint64_t block_offset, std::uint32_t count,
                           const char* what, const DecodeLimits& limits, ChunkBins& out,
                           std::array<bool, attr::kKnownCount>& seen, StreamScratch& scratch);

// The steps of a chunk decode, in order, for a Chunk (decode_chunk_bins) and for the groups of a
// Delta Chunk (keyframe_delta.hpp). `what` names the record or group in messages ("Chunk",
// "Delta Chunk", "the birth group"); `at` is the offset errors carry.

// limit-exceeded when `count` gaussians exceed limits.max_gaussians_per_chunk (a count is not
// checked against the bytes that hold it: a constant stream holds any count in a few bytes).
Status check_gaussian_limit(std::uint32_t count, const DecodeLimits& limits, std::string_view what,
                            std::uint64_t at);

// §5.5, §5.18 (M030, M093): a records block as stored or decompressed per its `compression`
// string. "" keeps `records` as is, whose length must be `uncompressed_size`
// (decompressed-size-mismatch naming what.uncompressed_size); a codec name (or
// unknown-chunk-compression naming it) inflates it into `scratch`, after checking
// uncompressed_size against limits.max_decompressed_bytes (limit-exceeded) and against what the
// block can inflate to. The result views `records` or `scratch`.
Result<Bytes> open_records_block(std::string_view what, std::string_view compression,
                                 std::uint64_t uncompressed_size, Bytes records, std::uint64_t at,
                                 const DecodeLimits& limits, std::vector<std::uint8_t>& scratch);

// After decode_stream_block: with `count` > 0 every required stream (attr ids below
// kRequiredCount) is present, else missing-attribute-stream naming `field` (the records field,
// e.g. "Chunk.records") and the id; with `count` 0 their columns are emptied. The columns of
// optional streams that were absent are emptied either way.
Status require_streams(ChunkBins& out, const std::array<bool, attr::kKnownCount>& seen,
                       std::uint32_t count, std::string_view what, std::string_view field,
                       std::uint64_t at);

// §6.4, §5.4, row by row: rotation_index in 0..3 when `rotation` (invalid-rotation-index), and
// window_index inside the scene's table when `window` (window-index-out-of-range, M029).
// `element` names a row in messages ("gaussian", "update element").
Status check_rows(const SceneInfo& scene, const ChunkBins& bins, std::uint32_t count,
                  bool rotation, bool window, std::string_view element, std::uint64_t at);

// Decodes SH band records for `count` gaussians into out.sh (whole bands 1..max_degree).
Status decode_sh_bands(std::span<const ShBandRecord> bands, std::uint32_t count, int sh_degree,
                       int max_degree, const DecodeLimits& limits, ChunkBins& out,
                       StreamScratch& scratch);

// §6: bins to the §3 state, appended to `out` (its sh_degree must be set by the caller when it
// is not empty; a fresh block takes the bins' band count).
void dequantize(const SceneInfo& scene, const ChunkBins& bins, GaussianBlock& out);

// §6: `out` becomes the bins' rows, as out.clear() then dequantize() make it, in out's storage
// as it is: no column is zeroed before its values are written, so a block that held a state
// takes the next one of the same size without touching fresh pages.
void dequantize_state(const SceneInfo& scene, const ChunkBins& bins, GaussianBlock& out);

// Sizes `out` to `count` rows of every column a chunk always fills, with `sh_degree` bands of SH,
// and empties the optional columns (source ids, gaussian_id): the one allocation of a decode
// whose counts are known up front (the Chunk Index), reused when `out` already has the room.
void size_rows(GaussianBlock& out, std::size_t count, int sh_degree);

// §6 in place: bins to the §3 state at rows [first, first + bins.count) of `out`, which already
// holds those rows (size_rows), SH bands 1..out.sh_degree (≤ bins.sh_bands). The optional
// columns the bins carry must already hold the rows too; those they lack are not touched.
void dequantize_into(const SceneInfo& scene, const ChunkBins& bins, GaussianBlock& out,
                     std::size_t first);

// dequantize_into for some attributes only: the §3 columns made from the attributes `which`
// flags (by attr id) at rows [first, first + bins.count) of `out`, whose columns the caller
// sized. Only the bins those columns need are read (motion and mu_t also read sigma_t, flags
// and window_index; color and opacity each other; rotation rotation_index); other columns are
// not touched; SH bands (which no attribute id names) only `with_sh`. A keyframe-delta step
// dequantizes the columns its update changed, for the rows it changed, with it.
void dequantize_columns(const SceneInfo& scene, const ChunkBins& bins,
                        const std::array<bool, attr::kKnownCount>& which, bool with_sh,
                        GaussianBlock& out, std::size_t first);

// Convenience: decode_chunk_bins then dequantize into a cleared `out`.
Status decode_chunk(const SceneInfo& scene, const ChunkRecord& chunk,
                    std::span<const ShBandRecord> bands, const ChunkDecodeOptions& options,
                    GaussianBlock& out, ChunkBins& bins, DecodeScratch& scratch);

}  // namespace fourdgs
FOURDGS_PUBLIC_END
