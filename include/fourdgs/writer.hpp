// fourdgs/writer.hpp — the way back: gaussians in user terms → quantize (§6, uniform-v1) →
// verify by decoding → attribute streams (§5.6) → Chunk / SH Band records → summary (§4.5) →
// a ByteSink. The file is a gaussian-birth file (§3).
//
// Two entry points:
//   write_scene     one shot: the whole scene in memory; computes gaussian_count, aabb and the
//                   Window Table itself, and records the *measured* maximum deviation of every
//                   attribute in the Quantization record's bounds (§5.3, M028, M099).
//   StreamingWriter bounded memory: gaussians arrive window by window (or chunk by chunk) and go
//                   to the sink as they are encoded. The Header and Quantization are written
//                   first, so the caller declares gaussian_count, aabb and the Window Table up
//                   front (verified as the data arrives and at finish()), and the bounds it
//                   declares are the grid's analytic worst case rather than measured maxima.
//
// Every attribute of every gaussian is verified at encode time: each chunk is decoded back through
// the same decode_chunk_bins + dequantize the readers use, and compared with the input. A deviation
// past the bound fails the write with refusal `bound-violated`, naming the gaussian (its index in
// the input) and the attribute. Bad input is refused before anything is encoded, naming the
// gaussian and the field; nothing is clamped except SH coefficients to [-4, 4] (§6.5, M101).
//
// Output is deterministic: the same input and options give the same bytes, whatever the thread
// count (no pointers hashed, no unordered iteration, no time stamps).
//
// Thread safety: write_scene may be called from several threads at once on different sinks. A
// StreamingWriter is used by one thread at a time; internally it may encode chunks on
// WriterOptions::threads worker threads.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/stream.hpp"
#include "fourdgs/writer_types.hpp"  // what a write takes, how, and what it reports

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// ---------------------------------------------------------------------------------------------
// One shot.

struct SceneInput {
    SceneHeader header;
    GaussianBatch gaussians;  // win_lo / win_hi required
};

// Writes a whole scene to `sink`: validates every gaussian (refusals below, each naming the
// gaussian's index and the field), builds the Window Table from the distinct windows (sorted by
// lo, then hi), plans chunks (one run of chunks per window, each at most max_chunk_gaussians),
// encodes and verifies every chunk, then writes the file with the Quantization bounds set to the
// measured maxima (spelled by to_chars' shortest round trip, which the §5.3 grammar accepts).
// Memory: the input (borrowed) plus the encoded chunks, held until the Quantization record can be
// written — about the size of the output file — plus one chunk's working set per thread.
// Refusals (kind invalid_argument unless noted): non-finite-input, zero-quaternion,
// value-out-of-range (scale or sigma_t <= 0, colour outside [0, 1]), empty-window (lo >= hi),
// window-outside-duration, sh-degree-mismatch, input-size-mismatch (a span of the wrong length),
// invalid-option, bin-out-of-range (a value too far from its grid origin for an i32 bin),
// bound-violated (kind limit: verification found a deviation past the bound), the codec layer's
// refusals, and the sink's io errors. On failure the sink may hold a partial file.
Status write_scene(const SceneInput& scene, const WriterOptions& options, ByteSink& sink,
                   WriteReport* report = nullptr);

// The same into a new byte vector.
Result<std::vector<std::uint8_t>> write_scene(const SceneInput& scene,
                                              const WriterOptions& options = {},
                                              WriteReport* report = nullptr);

// ---------------------------------------------------------------------------------------------
// Streaming.

// What a streaming caller declares before the first gaussian, because the Header, Quantization
// and Window Table precede the chunks and a ByteSink cannot seek back.
//   gaussian_count  exactly the number of gaussians that will be added (checked at finish()).
//   aabb            min xyz, max xyz over all rest positions, exactly (each position is checked
//                   to lie inside it as it arrives, and the measured aabb must equal it at
//                   finish()); it also fixes the position grid (origin = its centre; the preset's
//                   pos bound scales with its largest side).
//   windows         the Window Table, in this order (each 0 <= lo < hi <= duration).
struct StreamDeclaration {
    std::uint64_t gaussian_count = 0;
    std::array<double, 6> aabb{};
    std::vector<WindowTable::Window> windows;
};

class StreamingWriter {
public:
    // Validates the header, declaration and options, and writes the magic, Header, Quantization
    // (bounds = the grid's analytic worst case, see docs/writer.md), Window Table, and the
    // header's metadata, attachments and private records. `sink` must outlive the writer.
    // Refusals: those of write_scene's scene-level checks, plus invalid-declaration.
    static Result<StreamingWriter> create(ByteSink& sink, const SceneHeader& header,
                                          const StreamDeclaration& declaration,
                                          const WriterOptions& options = {});

    StreamingWriter(StreamingWriter&&) noexcept;
    StreamingWriter& operator=(StreamingWriter&&) noexcept;
    ~StreamingWriter();

    // More content records, written at once; only before the first chunk (else
    // refusal `chunks-started`, invalid_argument).
    Status add_metadata(const Metadata& metadata);
    Status add_attachment(const AttachmentInput& attachment);
    Status add_private_record(const PrivateRecordInput& record);

    // Adds gaussians that all live in declared window `window_index` (batch.win_lo/win_hi
    // empty). They are validated, split into chunks of at most max_chunk_gaussians covering
    // exactly that window's interval, encoded, verified and written before this returns.
    // Gaussians are named in messages by their running index across all add_* calls.
    Status add_window(std::uint32_t window_index, const GaussianBatch& batch);

    // Adds one chunk whose gaussians carry their own windows (each must be one of the declared
    // windows, matched exactly); the chunk's interval is the union of their windows. At most
    // max_chunk_gaussians gaussians (else invalid-argument `chunk-too-large`).
    Status add_chunk(const GaussianBatch& batch);

    // Checks the declared gaussian_count (gaussian-count-mismatch) and aabb (aabb-mismatch)
    // against what arrived, then writes the summary, Footer and trailing magic, and flushes.
    // After a refusal the sink holds an incomplete file.
    Status finish();

    // The Quantization record as written, and a report (complete after finish()).
    const WriteReport& report() const;

private:
    struct Impl;
    explicit StreamingWriter(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace fourdgs
FOURDGS_PUBLIC_END
