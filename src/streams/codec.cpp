// The codec bindings: libdeflate (zlib-wrapped deflate), zstd, lz4 blocks.
//
// Contexts are per thread (thread_local, created on first use, freed when the thread ends), so
// concurrent decodes never share a context and steady-state calls do not allocate.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>

#include <libdeflate.h>
#include <lz4.h>
#include <lz4hc.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "codec.hpp"
#include "fourdgs/codec.hpp"
#include "fourdgs/wire.hpp"

namespace fourdgs {

namespace {

std::string hex_byte(std::uint8_t b) {
    static const char* hex = "0123456789ABCDEF";
    return std::string{'0', 'x', hex[b >> 4], hex[b & 15]};
}

Error size_mismatch(std::string what, std::uint64_t offset) {
    return make_error(ErrorKind::malformed, refusal::kDecompressedSizeMismatch, std::move(what), offset);
}

Error corrupt(std::string what, std::uint64_t offset) {
    return make_error(ErrorKind::malformed, refusal::kCorruptCompressedData, std::move(what), offset);
}

Error out_of_memory(const char* what) {
    return make_error(ErrorKind::limit, refusal::kOutOfMemory,
                      std::string("could not allocate a ") + what + " context");
}

// ---- per-thread contexts -------------------------------------------------------------------

// A per-thread codec context: made on first use, freed with its thread.
template <class Context, auto create, auto destroy>
struct LazyContext {
    Context* context = nullptr;
    ~LazyContext() { destroy(context); }
    Context* get() {
        if (!context) context = create();
        return context;
    }
};

// libdeflate makes one compressor per level.
struct Deflaters {
    libdeflate_compressor* c[13] = {};
    ~Deflaters() {
        for (auto* p : c) libdeflate_free_compressor(p);
    }
    libdeflate_compressor* get(int level) {
        if (!c[level]) c[level] = libdeflate_alloc_compressor(level);
        return c[level];
    }
};

thread_local LazyContext<libdeflate_decompressor, libdeflate_alloc_decompressor,
                         libdeflate_free_decompressor>
    t_inflater;
thread_local Deflaters t_deflaters;
thread_local LazyContext<ZSTD_DCtx, ZSTD_createDCtx, ZSTD_freeDCtx> t_zstd_d;
thread_local LazyContext<ZSTD_CCtx, ZSTD_createCCtx, ZSTD_freeCCtx> t_zstd_c;

// Walks an lz4 block's sequences without writing anything and returns the size it decodes to, or
// -1 when the block is not well formed. Used only after LZ4_decompress_safe failed, to tell a
// block that is valid but decodes to a different size from a corrupt one.
std::int64_t lz4_block_decoded_size(Bytes in) {
    std::uint64_t total = 0;
    std::size_t pos = 0;
    const std::size_t n = in.size();
    // A length of 15 goes on in the bytes that follow, up to the first one under 255.
    auto extend = [&](std::uint64_t& length) {
        if (length != 15) return true;
        std::uint8_t b;
        do {
            if (pos >= n) return false;
            b = in[pos++];
            length += b;
        } while (b == 255);
        return true;
    };
    while (pos < n) {
        const std::uint8_t token = in[pos++];
        std::uint64_t lit = token >> 4;
        if (!extend(lit)) return -1;
        if (lit > n - pos) return -1;
        pos += static_cast<std::size_t>(lit);
        total += lit;
        if (pos == n) return static_cast<std::int64_t>(total);  // the last sequence: literals only
        if (n - pos < 2) return -1;
        const std::uint32_t off = in[pos] | (std::uint32_t{in[pos + 1]} << 8);
        pos += 2;
        if (off == 0 || off > total) return -1;
        std::uint64_t ml = token & 15;
        if (!extend(ml)) return -1;
        total += ml + 4;
    }
    return -1;  // empty, or ended on a match
}

}  // namespace

bool codec_implemented(std::uint8_t c) noexcept { return find_codec(c) != nullptr; }

std::string codec_name(std::uint8_t c) {
    if (const CodecInfo* info = find_codec(c))
        return info->registered ? std::string(info->name)
                                : std::string(info->name) + " (private " + hex_byte(c) + ")";
    switch (c) {
        case 2: return "atlas-image (reserved 0x02)";
        case 3: return "atlas-video (reserved 0x03)";
        default: break;
    }
    return (c >= 0x80 ? "private " : "reserved ") + hex_byte(c);
}

Status check_decompressed_size(std::uint8_t c, Bytes in, std::uint64_t declared,
                               std::uint64_t offset) {
    if (!codec_implemented(c)) return unknown_codec_error(c, offset);
    const std::uint64_t n = in.size();
    std::uint64_t bound = 0;
    const char* why = "";
    switch (c) {
        case codec::deflate:
            // Two bits per 258-byte match is deflate's densest code.
            bound = n * 1032 + 1032;
            why = "deflate expands at most 1032:1";
            break;
        case codec::lz4:
            // Each match-length extension byte adds at most 255 bytes.
            bound = n * 255 + 64;
            why = "an lz4 block expands at most 255:1";
            break;
        case codec::zstd: {
            const unsigned long long fcs = ZSTD_getFrameContentSize(in.data(), in.size());
            if (fcs == ZSTD_CONTENTSIZE_ERROR)
                return corrupt("the payload does not begin with a zstd frame header", offset);
            if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != declared)
                return size_mismatch("the zstd frame declares a content size of " +
                                         std::to_string(fcs) + " bytes, the stream needs " +
                                         std::to_string(declared),
                                     offset);
            // A block holds at most 128 KiB and costs at least 3 bytes.
            bound = (n / 3 + 1) * 131072;
            why = "a zstd block of at least 3 bytes holds at most 128 KiB";
            break;
        }
        default: break;
    }
    if (declared > bound)
        return size_mismatch(std::to_string(n) + " bytes of " + codec_name(c) +
                                 " data cannot inflate to the " + std::to_string(declared) +
                                 " bytes the stream declares (" + why + ")",
                             offset);
    return ok_status();
}

Status decompress(std::uint8_t c, Bytes in, std::span<std::uint8_t> out, std::uint64_t offset) {
    const std::string declared = std::to_string(out.size());
    switch (c) {
        case codec::deflate: {
            libdeflate_decompressor* d = t_inflater.get();
            if (!d) return out_of_memory("libdeflate decompressor");
            std::size_t in_used = 0, out_made = 0;
            const libdeflate_result r = libdeflate_zlib_decompress_ex(
                d, in.data(), in.size(), out.data(), out.size(), &in_used, &out_made);
            if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
                return size_mismatch("the zlib stream inflates to more than the " + declared +
                                         " bytes declared",
                                     offset);
            if (r != LIBDEFLATE_SUCCESS)
                return corrupt("the zlib stream is corrupt (bad deflate data or checksum)",
                               offset);
            if (out_made != out.size())
                return size_mismatch("the zlib stream inflates to " + std::to_string(out_made) +
                                         " bytes, " + declared + " declared",
                                     offset);
            if (in_used != in.size())
                return corrupt(std::to_string(in.size() - in_used) +
                                   " bytes follow the end of the zlib stream inside the payload",
                               offset + in_used);
            return ok_status();
        }
        case codec::zstd: {
            const unsigned long long fcs = ZSTD_getFrameContentSize(in.data(), in.size());
            if (fcs == ZSTD_CONTENTSIZE_ERROR)
                return corrupt("the payload does not begin with a zstd frame header", offset);
            if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != out.size())
                return size_mismatch("the zstd frame declares a content size of " +
                                         std::to_string(fcs) + " bytes, " + declared + " declared",
                                     offset);
            const std::size_t frame = ZSTD_findFrameCompressedSize(in.data(), in.size());
            if (ZSTD_isError(frame))
                return corrupt(std::string("the zstd frame is corrupt: ") +
                                   ZSTD_getErrorName(frame),
                               offset);
            if (frame != in.size())
                return corrupt(std::to_string(in.size() - frame) +
                                   " bytes follow the end of the zstd frame inside the payload",
                               offset + frame);
            ZSTD_DCtx* d = t_zstd_d.get();
            if (!d) return out_of_memory("zstd decompression");
            const std::size_t r =
                ZSTD_decompressDCtx(d, out.data(), out.size(), in.data(), in.size());
            if (ZSTD_isError(r)) {
                if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall)
                    return size_mismatch("the zstd frame inflates to more than the " + declared +
                                             " bytes declared",
                                         offset);
                return corrupt(std::string("the zstd frame is corrupt: ") + ZSTD_getErrorName(r),
                               offset);
            }
            if (r != out.size())
                return size_mismatch("the zstd frame inflates to " + std::to_string(r) +
                                         " bytes, " + declared + " declared",
                                     offset);
            return ok_status();
        }
        case codec::lz4: {
            if (in.size() > static_cast<std::size_t>(INT_MAX) ||
                out.size() > static_cast<std::size_t>(INT_MAX))
                return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                                  "an lz4 block and its output must each be under 2 GiB (" +
                                      std::to_string(in.size()) + " in, " + declared + " out)",
                                  offset);
            const int r = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data()),
                                              reinterpret_cast<char*>(out.data()),
                                              static_cast<int>(in.size()),
                                              static_cast<int>(out.size()));
            if (r < 0) {
                const std::int64_t real = lz4_block_decoded_size(in);
                if (real >= 0 && static_cast<std::uint64_t>(real) != out.size())
                    return size_mismatch("the lz4 block decodes to " + std::to_string(real) +
                                             " bytes, " + declared + " declared",
                                         offset);
                return corrupt("the lz4 block is corrupt", offset);
            }
            if (static_cast<std::size_t>(r) != out.size())
                return size_mismatch("the lz4 block decodes to " + std::to_string(r) + " bytes, " +
                                         declared + " declared",
                                     offset);
            return ok_status();
        }
        default: break;
    }
    return unknown_codec_error(c, offset);
}

std::span<const CodecInfo> codec_table() {
    // zstd's levels are the linked library's; the static is built once, thread-safely.
    static const CodecInfo table[] = {
        {codec::deflate, "deflate", true, true, 0, 12, 1, 6, 6},
        {codec::zstd, "zstd", true, true, ZSTD_minCLevel(), ZSTD_maxCLevel(), 1, 3, 9},
        {codec::lz4, "lz4", false, false, 0, LZ4HC_CLEVEL_MAX, 0, 0, 0},
    };
    return table;
}

const CodecInfo* find_codec(std::uint8_t byte) noexcept {
    for (const CodecInfo& c : codec_table())
        if (c.byte == byte) return &c;
    return nullptr;
}

const CodecInfo* find_codec(std::string_view name) noexcept {
    for (const CodecInfo& c : codec_table())
        if (c.name == name) return &c;
    return nullptr;
}

std::string codec_names(bool chunks_only) {
    std::string names;
    for (const CodecInfo& c : codec_table()) {
        if (chunks_only && !c.chunk_compression) continue;
        if (!names.empty()) names += ", ";
        names += c.name;
    }
    return names;
}

Error unknown_codec_error(std::uint8_t c, std::uint64_t offset, std::string_view whose) {
    std::string implemented;
    const std::span<const CodecInfo> table = codec_table();
    for (std::size_t i = 0; i < table.size(); ++i) {
        const CodecInfo& row = table[i];
        if (i > 0) implemented += i + 1 == table.size() ? " and " : ", ";
        implemented += std::to_string(row.byte) + " (" +
                       (row.registered ? std::string(row.name)
                                       : hex_byte(row.byte) + ", " + std::string(row.name) +
                                             ", private range") +
                       ")";
    }
    return make_error(ErrorKind::unsupported, refusal::kUnknownStreamCodec,
                      std::string(whose) + " codec byte " + std::to_string(c) + " (" +
                          codec_name(c) + ") is not implemented; this build implements " +
                          implemented,
                      offset)
        .about("Attribute Stream.codec", std::to_string(c));
}

namespace detail {

std::size_t compress_bound(std::uint8_t c, int level, std::size_t n) {
    switch (c) {
        case codec::deflate: {
            // The level's own compressor, as libdeflate's interface asks (a bad level is refused
            // by compress_into; any compressor's bound serves until then).
            libdeflate_compressor* z = t_deflaters.get(level >= 0 && level <= 12 ? level : 6);
            return z ? libdeflate_zlib_compress_bound(z, n) : n + n / 8 + 1024;
        }
        case codec::zstd: return ZSTD_compressBound(n);
        case codec::lz4:
            return n > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE)
                       ? n
                       : static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(n)));
        default: break;
    }
    return n;
}

Result<std::size_t> compress_into(std::uint8_t c, int level, Bytes in,
                                  std::span<std::uint8_t> out) {
    auto bad_level = [&](int lo, int hi) {
        return make_error(ErrorKind::invalid_argument, refusal::kInvalidCompressionLevel,
                          codec_name(c) + " level " + std::to_string(level) + " is outside " +
                              std::to_string(lo) + ".." + std::to_string(hi));
    };
    const CodecInfo* info = find_codec(c);
    if (!info) return unknown_codec_error(c, kNoOffset);
    if (level < info->min_level || level > info->max_level)
        return bad_level(info->min_level, info->max_level);
    switch (c) {
        case codec::deflate: {
            libdeflate_compressor* z = t_deflaters.get(level);
            if (!z) return out_of_memory("libdeflate compressor");
            const std::size_t n =
                libdeflate_zlib_compress(z, in.data(), in.size(), out.data(), out.size());
            if (n == 0)
                return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                                  "libdeflate could not compress into its own bound");
            return n;
        }
        case codec::zstd: {
            ZSTD_CCtx* z = t_zstd_c.get();
            if (!z) return out_of_memory("zstd compression");
            const std::size_t n =
                ZSTD_compressCCtx(z, out.data(), out.size(), in.data(), in.size(), level);
            if (ZSTD_isError(n))
                return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                                  std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
            return n;
        }
        default: {  // lz4
            if (in.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE))
                return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                                  "an lz4 block holds at most " +
                                      std::to_string(LZ4_MAX_INPUT_SIZE) + " bytes, not " +
                                      std::to_string(in.size()));
            const int src = static_cast<int>(in.size());
            const char* s = reinterpret_cast<const char*>(in.data());
            char* d = reinterpret_cast<char*>(out.data());
            const int cap = static_cast<int>(
                std::min<std::size_t>(out.size(), static_cast<std::size_t>(INT_MAX)));
            const int n = level < LZ4HC_CLEVEL_MIN ? LZ4_compress_default(s, d, src, cap)
                                                   : LZ4_compress_HC(s, d, src, cap, level);
            if (n <= 0)
                return make_error(ErrorKind::limit, refusal::kLimitExceeded, "lz4 compression failed");
            return static_cast<std::size_t>(n);
        }
    }
}

}  // namespace detail

Status compress(std::uint8_t c, int level, Bytes in, std::vector<std::uint8_t>& out) {
    if (!find_codec(c)) return unknown_codec_error(c, kNoOffset);
    out.resize(detail::compress_bound(c, level, in.size()));
    FOURDGS_ASSIGN(const std::size_t n, detail::compress_into(c, level, in, out));
    out.resize(n);
    return ok_status();
}

Result<std::uint8_t> chunk_compression_codec(std::string_view name, std::uint64_t offset) {
    if (const CodecInfo* info = find_codec(name); info && info->chunk_compression)
        return info->byte;
    if (name.empty())
        return make_error(ErrorKind::invalid_argument, refusal::kInvalidArgument,
                          "compression \"\" means the records block is stored; there is no codec "
                          "to look up",
                          offset);
    // The string comes from the file: name it, but not at any length.
    std::string shown(name.substr(0, 64));
    if (name.size() > 64) shown += "...";
    return make_error(ErrorKind::unsupported, refusal::kUnknownChunkCompression,
                      "chunk compression \"" + shown +
                          "\" is not implemented; this build implements " +
                          codec_names(true),
                      offset)
        .about("", std::string(name));
}

}  // namespace fourdgs
