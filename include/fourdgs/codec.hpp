// fourdgs/codec.hpp — the stream codecs (§5.5, §5.6 "decompress with codec"; registry "Stream
// codecs"): their bytes, their one table (codec_table), and whole-buffer compress / decompress.
// stream.hpp includes this header; the attribute-stream pipeline there (codec → unshuffle →
// zigzag → mode) sits on top of it, and nothing here knows about streams.
//
// Every function is safe on untrusted input and thread-safe (codec contexts are per thread).
#pragma once

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

}  // namespace fourdgs
FOURDGS_PUBLIC_END
