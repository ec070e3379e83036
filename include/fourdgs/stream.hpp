// fourdgs/stream.hpp — attribute streams (§5.6) and the codecs under them (§5.5, registry
// "Stream codecs").
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

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/wire.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// Stream codec bytes: an Attribute Stream's `codec` field (registry "Stream codecs").
namespace codec {
// 0: a zlib-wrapped deflate stream (RFC 1950), the default of the files in circulation.
inline constexpr std::uint8_t deflate = 0;
// 1: one Zstandard frame (RFC 8878).
inline constexpr std::uint8_t zstd = 1;
// 0x80 (128): lz4. lz4 is not a registered codec, so this project puts it in the private range
// (128–255) at byte 0x80. The payload is one raw LZ4 *block* (the lz4 block format, not the lz4
// frame format): no magic, no sizes, no checksum; its decompressed size is the one the stream
// header implies (symbols × symbol_width). It is never the default, and a writer that uses it must
// record the producing application in Metadata (registry). Other readers refuse it, naming the
// byte, as they must for any codec they do not implement.
inline constexpr std::uint8_t lz4 = 0x80;
}  // namespace codec

// Stream `mode` values (§5.6).
namespace stream_mode {
inline constexpr std::uint8_t raw = 0, delta = 1, constant = 2;
}  // namespace stream_mode

// True for the codec bytes this build decodes and encodes: 0 (deflate), 1 (zstd), 0x80 (lz4).
bool codec_implemented(std::uint8_t codec) noexcept;

// Human name of a codec byte, for messages: "deflate", "zstd", "lz4 (private 0x80)",
// "atlas-image (reserved 0x02)", "atlas-video (reserved 0x03)", "reserved 0x2A", "private 0x9F".
std::string codec_name(std::uint8_t codec);

// The codecs this build encodes and decodes, in one table: the wire byte, the name the registry
// (and the CLI, the C ABI) spell it by, whether it is a registered codec (readable by every
// implementation) or private, whether a Chunk's `compression` string may name it (§5.5), the
// levels compress() accepts, and the level WriterOptions' effort `fast` uses and the codec's
// customary default (a merge re-compresses at it), and the level for a file written once and read
// many times. Rows: deflate (0, chunks, levels 0–12, fast 1, default 6, archive 6), zstd (1,
// chunks, ZSTD_minCLevel()–ZSTD_maxCLevel(), fast 1, default 3, archive 9), lz4 (0x80, private,
// streams only, 0–12, fast 0, default 0, archive 0). Every name, byte and level the library, the C
// ABI and the CLI accept comes from here; adding a codec is a row here and its four cases in
// codec.cpp (bound, compress, inflate bound, decompress).
struct CodecInfo {
    std::uint8_t byte = 0;
    std::string_view name;
    bool registered = false;
    bool chunk_compression = false;
    int min_level = 0, max_level = 0;
    int fast_level = 0, default_level = 0;
    // The level for a file written once and read many times (`4dgs convert`'s default).
    int archive_level = 0;
};
std::span<const CodecInfo> codec_table();
// The row of a codec byte or name, or nullptr.
const CodecInfo* find_codec(std::uint8_t byte) noexcept;
const CodecInfo* find_codec(std::string_view name) noexcept;
// The table's names joined by ", " (for a message that lists what a build accepts): every codec,
// or with `chunks_only` those a Chunk's compression string may name.
std::string codec_names(bool chunks_only = false);
// The refusal for a codec byte this build does not implement (unknown-stream-codec, M031), the
// one every reader, decoder and encoder returns: "<whose> codec byte N (name) is not implemented;
// this build implements ..." with the list read off codec_table(). `whose` names the stream
// ("stream 'position'") or is "stream" where none is at hand; `offset` is the codec byte's.
Error unknown_codec_error(std::uint8_t codec, std::uint64_t offset,
                          std::string_view whose = "stream");

// Inflates `in` with `codec` into exactly `out.size()` bytes (§5.6 "decompress with codec").
// The whole of `in` must be the codec's data: one zlib stream, one zstd frame, or one lz4 block,
// with nothing after it. Refusals (offset = `offset`, the payload's absolute file offset):
//   unknown-stream-codec (unsupported) — `codec` is not implemented here; the message names it;
//   decompressed-size-mismatch (malformed) — the data inflates to more or fewer bytes than
//     out.size(), or a zstd frame declares a different content size;
//   corrupt-compressed-data (malformed) — the codec reports corrupt data (bad checksum, bad
//     block, trailing bytes after the stream or frame).
// `out` may hold garbage on failure. Thread-safe: each thread uses its own decompressor, created
// on first use and kept for the thread's lifetime; no allocation per call in steady state.
Status decompress(std::uint8_t codec, Bytes in, std::span<std::uint8_t> out,
                  std::uint64_t offset);

// The checks that can be made on `in` without inflating it, for a caller about to allocate
// `declared` bytes to inflate into: each codec's largest possible expansion ratio (deflate
// 1032:1, lz4 255:1, zstd one 128 KiB block per 3 bytes) and a zstd frame's declared content size.
// A `declared` size that `in` cannot produce is refused as decompressed-size-mismatch; a zstd
// frame header that does not parse is corrupt-compressed-data; an unimplemented codec is
// unknown-stream-codec. Passing is no promise that decompress() will succeed. Thread-safe.
Status check_decompressed_size(std::uint8_t codec, Bytes in, std::uint64_t declared,
                               std::uint64_t offset);

// Compresses `in` with `codec` at `level`, replacing the contents of `out`. Output is
// deterministic: the same input, codec and level give the same bytes (with the same library
// versions). Levels: deflate 0–12 (libdeflate's scale; 6 is zlib's default), zstd
// ZSTD_minCLevel()–ZSTD_maxCLevel(), lz4 0–12 (0–2: LZ4_compress_default, 3–12: LZ4_compress_HC
// at that level). Refusals: unknown-stream-codec (unsupported); invalid-compression-level
// (invalid-argument); limit-exceeded (limit) for an lz4 input past LZ4_MAX_INPUT_SIZE.
// Thread-safe: compressor contexts are per thread and reused.
Status compress(std::uint8_t codec, int level, Bytes in, std::vector<std::uint8_t>& out);

// Maps a Chunk's `compression` string (§5.5) to its codec byte: "deflate" → 0, "zstd" → 1, the
// registry's spellings (the table's rows with chunk_compression), matched exactly. Any other string is refused as unknown-chunk-compression
// (unsupported; the message names the string, §5.5: "name the codec"), at `offset` (the field's
// absolute offset). "" means the block is stored as-is; callers handle it before asking, and it is
// refused here as invalid-argument. lz4 has no chunk-level string.
Result<std::uint8_t> chunk_compression_codec(std::string_view name, std::uint64_t offset);

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
