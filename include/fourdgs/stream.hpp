// fourdgs/stream.hpp — attribute streams (§5.6); the codecs under them (§5.5, registry "Stream
// codecs") are codec.hpp's, which this header includes.
//
// An attribute stream is a bare 17-byte header followed by `payload_length` payload bytes; a
// chunk's records block is such streams back to back (§5.5), and an SH Band Stream record wraps
// one after its band byte (§5.7). Decoding a payload runs codec → reverse byte-plane shuffle →
// zigzag → mode (raw, delta per channel, constant). Encoding is the same pipeline backwards.
//
// Every function here is safe on untrusted input: each size read from a file is checked against
// the bytes that hold it and against a caller's limit before anything is allocated. All functions
// are thread-safe: they touch no shared state (codec contexts are per thread), so several threads
// may decode different streams at once, each with its own StreamScratch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fourdgs/codec.hpp"  // the codecs under the streams, for every includer of this header
#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/wire.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// Stream `mode` values (§5.6).
namespace stream_mode {
inline constexpr std::uint8_t raw = 0, delta = 1, constant = 2;
}  // namespace stream_mode

// Zigzag (§5.6): the stream symbol of a signed value and back. zigzag_decode is
// (u >> 1) ^ -(u & 1); the two are inverse bijections between int32 and uint32.
constexpr std::uint32_t zigzag_encode(std::int32_t v) noexcept {
    return (static_cast<std::uint32_t>(v) << 1) ^ static_cast<std::uint32_t>(v >> 31);
}
constexpr std::int32_t zigzag_decode(std::uint32_t u) noexcept {
    return static_cast<std::int32_t>((u >> 1) ^ (0u - (u & 1u)));
}

// u8 attribute_id, u8 symbol_width, u8 mode, u8 codec, u8 channels, u32 element_count,
// u64 payload_length (§5.6): 17 bytes. (wire-notes.md says 19; the spec's field list and every
// file in circulation say 17 — the interop fixtures' first payload byte is at header + 17.)
inline constexpr std::size_t kStreamHeaderSize = 17;
static_assert(kStreamHeaderSize == 5 * sizeof(std::uint8_t) + sizeof(std::uint32_t) +
                                       sizeof(std::uint64_t),
              "§5.6: the 17-byte stream header");

struct StreamHeader {
    std::uint8_t attribute_id = 0;
    std::uint8_t symbol_width = 1;
    std::uint8_t mode = 0;
    std::uint8_t codec = codec::deflate;
    std::uint8_t channels = 1;
    std::uint32_t element_count = 0;
    std::uint64_t payload_length = 0;
};

// One stream as found in a byte range: its header and a view of its payload. `payload` borrows
// the bytes the stream was read from and lives as long as they do.
struct StreamView {
    StreamHeader header;
    Bytes payload;            // exactly header.payload_length bytes
    std::uint64_t offset = 0;  // absolute offset of the attribute_id byte

    std::uint64_t payload_offset() const noexcept { return offset + kStreamHeaderSize; }
    std::uint64_t end_offset() const noexcept { return payload_offset() + header.payload_length; }
};

// Appends a 17-byte stream header. The payload (header.payload_length bytes) is the caller's to
// append after it.
void write_stream_header(ByteWriter& out, const StreamHeader& h);

// Parses one bare stream at the cursor (§5.6): the header, then payload_length bytes, which must
// fit in what remains (refusal record-too-short, malformed, at the field that does not fit). Reads
// only the framing: codec, width, mode and channels are checked by decode_stream, so an unknown
// attribute can be skipped without touching its codec byte. On success the cursor stands after
// the payload. No allocation.
Result<StreamView> read_stream(Cursor& c);

// Walks a chunk's records block (§5.5: bare streams back to back, the first byte is the first
// stream's attribute_id) and returns every stream, in order, whatever its attribute id. `block`
// begins at absolute `base_offset`. Each stream must fit inside the block (record-too-short).
// Allocates only in proportion to the streams actually present (each is ≥ 17 bytes).
Result<std::vector<StreamView>> split_streams(Bytes block, std::uint64_t base_offset);

// A reusable decompression buffer. One per thread doing decodes; reusing it across calls means no
// allocation in steady state. Not thread-safe: never share one between concurrent calls.
struct StreamScratch {
    std::vector<std::uint8_t> bytes;
};

// Decodes a stream's payload into `out` (§5.6): decompress with the codec, reverse the byte-plane
// shuffle, zigzag-decode, apply the mode. `out` receives element_count × channels values,
// element-major, channel-minor, and its size must be exactly that (else output-size-mismatch,
// invalid-argument). The decompressed size (symbols × symbol_width, symbols = channels in mode 2)
// is checked against `max_decompressed_bytes` and against what the payload can inflate to before
// `scratch` grows. Refusals, at the field's absolute offset (header fields at s.offset + their
// position, payload problems at s.payload_offset()):
//   unknown-stream-codec (unsupported) — also when element_count is 0;
//   invalid-symbol-width — symbol_width is not 1, 2 or 4;
//   unknown-stream-mode — mode is not 0, 1 or 2;
//   invalid-channel-count — channels is 0 while element_count is not;
//   decompressed-size-mismatch — the payload inflates to another size, or element_count is 0 and
//     payload_length is not;
//   corrupt-compressed-data — the codec reports corruption;
//   stream-value-out-of-range — a delta running sum leaves int32;
//   limit-exceeded (limit) — the decompressed size exceeds max_decompressed_bytes.
// `out` may be partly written on failure. Thread-safe given distinct `scratch` and `out`.
Status decode_stream(const StreamView& s, std::span<std::int32_t> out, StreamScratch& scratch,
                     std::uint64_t max_decompressed_bytes = (1ull << 31));

// Convenience: decodes into a new vector. `max_bytes` bounds both the decompressed size and the
// output (element_count × channels × 4 bytes), checked before either is allocated, so a constant
// stream declaring 0xFFFFFFFF elements is refused as limit-exceeded rather than allocated.
Result<std::vector<std::int32_t>> decode_stream(const StreamView& s, StreamScratch& scratch,
                                                std::uint64_t max_bytes = (1ull << 31));

// How encode_stream's mode -1 decides between raw and delta coding.
enum class ModeChoice : std::uint8_t {
    // Compress both and keep the smaller: exact, at twice the codec's time.
    compress_both,
    // Compress only the candidate whose residual entropy (estimate_modes) is smaller by more than
    // kModeEstimateMargin; both when the two estimates are closer than that.
    estimate,
};

// The guard band of ModeChoice::estimate: one candidate is taken alone only when its estimate is
// below (1 - kModeEstimateMargin) x the other's. docs/writer.md ("Effort") states what that
// bounds and what was measured.
inline constexpr double kModeEstimateMargin = 0.04;
// The elements ModeChoice::estimate samples at most.
inline constexpr std::size_t kEstimateSample = 16384;

// A codec byte and a level for it.
struct CodecLevel {
    std::uint8_t codec = codec::deflate;
    int level = 6;
};

struct StreamEncodeOptions {
    std::uint8_t codec = codec::deflate;
    int level = 6;
    int mode = -1;          // -1 = choose; else 0 raw, 1 delta, 2 constant
    int symbol_width = 0;   // 0 = narrowest that holds every symbol; else 1, 2 or 4
    ModeChoice choice = ModeChoice::compress_both;
    // More (codec, level) pairs to compress every candidate mode with, besides (codec, level);
    // the smallest payload of them all is written (ties: the earlier pair, raw before delta).
    // Borrowed for the call.
    std::span<const CodecLevel> also;
};

// What ModeChoice::estimate compares: for raw and for delta coding of `values` (`channels`
// channels, element-major), the residual entropy of the stream's payload before the codec —
// summed over the byte planes at that mode's narrowest symbol width, each plane's order-0
// entropy (in bits) times its length — in bytes. `delta_bytes` is +inf when some per-channel
// difference leaves int32. The entropy is measured on every element of a stream of up to
// kEstimateSample elements, and on kEstimateSample elements spread evenly over a longer one
// (scaled to its length). An order-0 coder (a Huffman code per plane) gets within one bit a
// symbol of it; deflate and zstd differ from it by their matches and framing, alike for both
// modes of one stream, which is what the comparison relies on. Pure; O(values) time (one pass to
// find the widths, then the sample), no allocation.
struct ModeEstimate {
    double raw_bytes = 0, delta_bytes = 0;
};
ModeEstimate estimate_modes(std::uint8_t channels, std::span<const std::int32_t> values);

// Buffers encode_stream reuses across calls (the shuffled planes and the compressed
// candidates); one per thread. Not thread-safe: never share one between concurrent calls.
struct StreamEncodeScratch {
    std::vector<std::uint8_t> planes, payload, best;
};

// Appends one bare stream (header + payload, §5.6) encoding `values` (element-major,
// channel-minor; values.size() must be a multiple of `channels`, and element_count must fit u32).
// With mode -1 it chooses: constant when every element equals element 0 (per channel), else raw
// or delta as opt.choice says (by default the smaller compressed payload of the two, raw on a
// tie), delta only when every per-channel difference fits int32. Symbol width is the narrowest
// of 1, 2, 4 that holds every zigzagged symbol of the chosen mode, unless forced. With
// opt.also, each candidate mode is compressed with every pair and the smallest payload kept; the
// stream's codec byte is that payload's. Zero elements give payload_length 0 and no codec frame;
// otherwise the payload always goes through the codec, also in mode 2. Deterministic.
// Refusals (nothing is appended on failure): invalid-argument for channels 0, a ragged value
// count, an impossible forced mode or width, or a mode/width value outside the options' range;
// unknown-stream-codec; invalid-compression-level (also for a pair of opt.also);
// limit-exceeded. Thread-safe.
Status encode_stream(ByteWriter& out, std::uint8_t attribute_id, std::uint8_t channels,
                     std::span<const std::int32_t> values, const StreamEncodeOptions& opt = {});

// The same, reusing `scratch`'s buffers (no allocation once they have grown to the largest
// stream). Thread-safe given distinct `scratch`.
Status encode_stream(ByteWriter& out, std::uint8_t attribute_id, std::uint8_t channels,
                     std::span<const std::int32_t> values, const StreamEncodeOptions& opt,
                     StreamEncodeScratch& scratch);

}  // namespace fourdgs
FOURDGS_PUBLIC_END
