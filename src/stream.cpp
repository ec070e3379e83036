// Attribute streams (§5.6): framing, the decode pipeline's hot loops, and the encoder.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "fourdgs/stream.hpp"
#include "fresh_memory.hpp"

namespace fourdgs {

namespace {

constexpr std::uint64_t kHeaderFieldWidth = 1, kHeaderFieldMode = 2, kHeaderFieldCodec = 3,
                        kHeaderFieldChannels = 4, kHeaderFieldPayloadLength = 9;

std::string attr(const StreamHeader& h) {
    return "attribute stream (id " + std::to_string(h.attribute_id) + ")";
}

// ---- the decode kernels ---------------------------------------------------------------------
// decode_raw reads the shuffled planes directly (plane j holds byte j of every symbol, §5.6) and
// writes zigzag-decoded values straight into the output; it vectorizes. Delta then runs its
// prefix sum in place over that output, so no intermediate buffer exists beyond the scratch.

template <int W>
void decode_raw(const std::uint8_t* __restrict raw, std::size_t n, std::int32_t* __restrict out) {
    if constexpr (W == 1) {
        for (std::size_t k = 0; k < n; ++k) out[k] = zigzag_decode(raw[k]);
    } else if constexpr (W == 2) {
        const std::uint8_t* __restrict p0 = raw;
        const std::uint8_t* __restrict p1 = raw + n;
        for (std::size_t k = 0; k < n; ++k)
            out[k] = zigzag_decode(p0[k] | (std::uint32_t{p1[k]} << 8));
    } else {
        const std::uint8_t* __restrict p0 = raw;
        const std::uint8_t* __restrict p1 = raw + n;
        const std::uint8_t* __restrict p2 = raw + 2 * n;
        const std::uint8_t* __restrict p3 = raw + 3 * n;
        for (std::size_t k = 0; k < n; ++k)
            out[k] = zigzag_decode(p0[k] | (std::uint32_t{p1[k]} << 8) |
                                   (std::uint32_t{p2[k]} << 16) | (std::uint32_t{p3[k]} << 24));
    }
}

// acc + 2^31 lies in [0, 2^32) exactly when acc fits int32; anything above sets high bits.
inline std::uint64_t out_of_i32(std::int64_t acc) {
    return static_cast<std::uint64_t>(acc + 0x80000000ll) >> 32;
}

// Running sum per channel along elements, applied in place to symbols already unshuffled and
// zigzag-decoded (the vectorized raw kernel does that pass). The sums run in 64-bit so they cannot
// wrap (at most 2^32 elements of at most 2^31 each). Returns false when some sum left int32; the
// flag is accumulated without a branch per symbol.
template <int C>
bool prefix_sum_fixed(std::int32_t* __restrict out, std::size_t elements) {
    std::int64_t acc[C];
    for (int ch = 0; ch < C; ++ch) acc[ch] = out[ch];
    std::uint64_t bad = 0;
    std::int32_t* p = out + C;
    for (std::size_t i = 1; i < elements; ++i, p += C) {
        for (int ch = 0; ch < C; ++ch) {
            acc[ch] += p[ch];
            p[ch] = static_cast<std::int32_t>(acc[ch]);
            bad |= out_of_i32(acc[ch]);
        }
    }
    return bad == 0;
}

bool prefix_sum_any(std::int32_t* __restrict out, std::size_t elements, std::size_t channels) {
    std::array<std::int64_t, 256> acc{};
    for (std::size_t ch = 0; ch < channels; ++ch) acc[ch] = out[ch];
    std::uint64_t bad = 0;
    std::int32_t* p = out + channels;
    for (std::size_t i = 1; i < elements; ++i, p += channels) {
        for (std::size_t ch = 0; ch < channels; ++ch) {
            acc[ch] += p[ch];
            p[ch] = static_cast<std::int32_t>(acc[ch]);
            bad |= out_of_i32(acc[ch]);
        }
    }
    return bad == 0;
}

template <int W>
bool decode_delta(const std::uint8_t* raw, std::size_t elements, std::size_t channels,
                  std::int32_t* out) {
    decode_raw<W>(raw, elements * channels, out);
    switch (channels) {
        case 1: return prefix_sum_fixed<1>(out, elements);
        case 2: return prefix_sum_fixed<2>(out, elements);
        case 3: return prefix_sum_fixed<3>(out, elements);
        case 4: return prefix_sum_fixed<4>(out, elements);
        default: return prefix_sum_any(out, elements, channels);
    }
}

// The symbol at k of a shuffled array of n symbols of width w (slow path, error reporting).
std::uint32_t symbol_at(const std::uint8_t* raw, std::size_t n, int w, std::size_t k) {
    std::uint32_t u = 0;
    for (int j = 0; j < w; ++j) u |= std::uint32_t{raw[static_cast<std::size_t>(j) * n + k]} << (8 * j);
    return u;
}

Error delta_overflow(const StreamView& s, const std::uint8_t* raw) {
    const std::size_t channels = s.header.channels;
    const std::size_t elements = s.header.element_count;
    const std::size_t n = elements * channels;
    std::size_t k = 0;
    for (std::size_t ch = 0; ch < channels; ++ch) {
        std::int64_t acc = 0;
        for (std::size_t i = 0; i < elements; ++i) {
            k = i * channels + ch;
            acc += zigzag_decode(symbol_at(raw, n, s.header.symbol_width, k));
            if (out_of_i32(acc))
                return make_error(ErrorKind::malformed, refusal::kStreamValueOutOfRange,
                                  attr(s.header) + ": the delta running sum of channel " +
                                      std::to_string(ch) + " reaches " + std::to_string(acc) +
                                      " at element " + std::to_string(i) +
                                      ", outside int32",
                                  s.payload_offset())
                    .about("Attribute Stream.payload", std::to_string(acc));
        }
    }
    return make_error(ErrorKind::malformed, refusal::kStreamValueOutOfRange,
                      attr(s.header) + ": a delta running sum leaves int32", s.payload_offset());
}

// The header checks shared by both decode_stream overloads, made before anything is allocated.
// On success `decompressed` is the payload's inflated size in bytes.
Status check_header(const StreamView& s, std::uint64_t max_decompressed_bytes,
                    std::uint64_t& decompressed) {
    const StreamHeader& h = s.header;
    if (!codec_implemented(h.codec))
        return make_error(ErrorKind::unsupported, refusal::kUnknownStreamCodec,
                          attr(h) + ": codec byte " + std::to_string(h.codec) + " (" +
                              codec_name(h.codec) +
                              ") is not implemented; this build implements 0 (deflate), 1 (zstd) "
                              "and 128 (0x80, lz4 block, private range)",
                          s.offset + kHeaderFieldCodec)
            .about("Attribute Stream.codec", std::to_string(h.codec));
    if (h.symbol_width != 1 && h.symbol_width != 2 && h.symbol_width != 4)
        return make_error(ErrorKind::malformed, refusal::kInvalidSymbolWidth,
                          attr(h) + ": symbol_width " + std::to_string(h.symbol_width) +
                              " is not 1, 2 or 4",
                          s.offset + kHeaderFieldWidth)
            .about("Attribute Stream.symbol_width", std::to_string(h.symbol_width));
    if (h.mode > stream_mode::constant)
        return make_error(ErrorKind::malformed, refusal::kUnknownStreamMode,
                          attr(h) + ": mode " + std::to_string(h.mode) +
                              " is not 0 (raw), 1 (delta) or 2 (constant)",
                          s.offset + kHeaderFieldMode)
            .about("Attribute Stream.mode", std::to_string(h.mode));
    if (h.element_count == 0) {
        if (h.payload_length != 0)
            return make_error(ErrorKind::malformed, refusal::kDecompressedSizeMismatch,
                              attr(h) + ": element_count is 0 but payload_length is " +
                                  std::to_string(h.payload_length) +
                                  "; an empty stream has no codec frame",
                              s.offset + kHeaderFieldPayloadLength)
                .about("Attribute Stream.payload_length", std::to_string(h.payload_length));
        decompressed = 0;
        return ok_status();
    }
    if (h.channels == 0)
        return make_error(ErrorKind::malformed, refusal::kInvalidChannelCount,
                          attr(h) + ": channels is 0 with element_count " +
                              std::to_string(h.element_count),
                          s.offset + kHeaderFieldChannels)
            .about("Attribute Stream.channels", "0");
    const std::uint64_t symbols = h.mode == stream_mode::constant
                                      ? std::uint64_t{h.channels}
                                      : std::uint64_t{h.element_count} * h.channels;
    decompressed = symbols * h.symbol_width;  // < 2^42: no overflow
    if (decompressed > max_decompressed_bytes)
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          attr(h) + ": the payload inflates to " + std::to_string(decompressed) +
                              " bytes, over the limit of " +
                              std::to_string(max_decompressed_bytes),
                          s.offset);
    return check_decompressed_size(h.codec, s.payload, decompressed, s.payload_offset());
}

}  // namespace

void write_stream_header(ByteWriter& out, const StreamHeader& h) {
    out.u8(h.attribute_id);
    out.u8(h.symbol_width);
    out.u8(h.mode);
    out.u8(h.codec);
    out.u8(h.channels);
    out.u32(h.element_count);
    out.u64(h.payload_length);
}

Result<StreamView> read_stream(Cursor& c) {
    StreamView s;
    s.offset = c.offset();
    if (c.remaining() < kStreamHeaderSize)
        return c.short_error("attribute stream header", kStreamHeaderSize)
            .about("Attribute Stream", std::to_string(c.remaining()));
    Bytes b = c.rest();
    StreamHeader& h = s.header;
    h.attribute_id = b[0];
    h.symbol_width = b[1];
    h.mode = b[2];
    h.codec = b[3];
    h.channels = b[4];
    h.element_count = read_le32(b.data() + 5);
    h.payload_length = read_le64(b.data() + kHeaderFieldPayloadLength);
    const std::size_t after_header = c.remaining() - kStreamHeaderSize;
    if (h.payload_length > after_header)
        return make_error(ErrorKind::malformed, refusal::kRecordTooShort,
                          std::string(c.what()) + ": " + attr(h) + " declares payload_length " +
                              std::to_string(h.payload_length) + " but only " +
                              std::to_string(after_header) + " bytes remain",
                          s.offset + kHeaderFieldPayloadLength)
            .about("Attribute Stream.payload_length", std::to_string(h.payload_length));
    FOURDGS_TRY(c.skip("attribute stream header", kStreamHeaderSize));
    FOURDGS_ASSIGN(s.payload, c.take("payload", h.payload_length));
    return s;
}

Result<std::vector<StreamView>> split_streams(Bytes block, std::uint64_t base_offset) {
    Cursor c(block, base_offset, "Chunk records block");
    std::vector<StreamView> streams;
    while (!c.at_end()) {
        FOURDGS_ASSIGN(StreamView s, read_stream(c));
        streams.push_back(s);
    }
    return streams;
}

Status decode_stream(const StreamView& s, std::span<std::int32_t> out, StreamScratch& scratch,
                     std::uint64_t max_decompressed_bytes) {
    const StreamHeader& h = s.header;
    const std::uint64_t values = std::uint64_t{h.element_count} * h.channels;
    if (out.size() != values)
        return make_error(ErrorKind::invalid_argument, refusal::kOutputSizeMismatch,
                          attr(h) + " holds " + std::to_string(values) +
                              " values but the output buffer holds " + std::to_string(out.size()),
                          s.offset);
    std::uint64_t bytes = 0;
    FOURDGS_TRY(check_header(s, max_decompressed_bytes, bytes));
    if (h.element_count == 0) return ok_status();

    if (scratch.bytes.size() < bytes)
        detail::resize_fresh(scratch.bytes, static_cast<std::size_t>(bytes));
    std::span<std::uint8_t> raw(scratch.bytes.data(), static_cast<std::size_t>(bytes));
    FOURDGS_TRY(decompress(h.codec, s.payload, raw, s.payload_offset()));

    const std::size_t elements = h.element_count;
    const std::size_t channels = h.channels;
    const std::uint8_t* r = raw.data();
    std::int32_t* o = out.data();
    switch (h.mode) {
        case stream_mode::raw:
            switch (h.symbol_width) {
                case 1: decode_raw<1>(r, out.size(), o); break;
                case 2: decode_raw<2>(r, out.size(), o); break;
                default: decode_raw<4>(r, out.size(), o); break;
            }
            return ok_status();
        case stream_mode::delta: {
            bool ok;
            switch (h.symbol_width) {
                case 1: ok = decode_delta<1>(r, elements, channels, o); break;
                case 2: ok = decode_delta<2>(r, elements, channels, o); break;
                default: ok = decode_delta<4>(r, elements, channels, o); break;
            }
            if (!ok) return delta_overflow(s, r);
            return ok_status();
        }
        default: {
            std::array<std::int32_t, 256> v{};
            for (std::size_t ch = 0; ch < channels; ++ch)
                v[ch] = zigzag_decode(symbol_at(r, channels, h.symbol_width, ch));
            if (channels == 1) {
                std::fill(o, o + elements, v[0]);
            } else {
                for (std::size_t i = 0; i < elements; ++i, o += channels)
                    std::memcpy(o, v.data(), channels * sizeof(std::int32_t));
            }
            return ok_status();
        }
    }
}

Result<std::vector<std::int32_t>> decode_stream(const StreamView& s, StreamScratch& scratch,
                                                std::uint64_t max_bytes) {
    std::uint64_t bytes = 0;
    FOURDGS_TRY(check_header(s, max_bytes, bytes));
    const std::uint64_t values = std::uint64_t{s.header.element_count} * s.header.channels;
    if (values * sizeof(std::int32_t) > max_bytes)
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          attr(s.header) + ": " + std::to_string(values) + " decoded values (" +
                              std::to_string(values * sizeof(std::int32_t)) +
                              " bytes) exceed the limit of " + std::to_string(max_bytes) +
                              " bytes",
                          s.offset);
    std::vector<std::int32_t> out(static_cast<std::size_t>(values));
    FOURDGS_TRY(decode_stream(s, out, scratch, max_bytes));
    return out;
}

// ---- encode ---------------------------------------------------------------------------------

namespace {

Error bad_arg(std::string what) {
    return make_error(ErrorKind::invalid_argument, refusal::kInvalidArgument, std::move(what));
}

int narrowest_width(std::uint32_t max_symbol) {
    return max_symbol <= 0xFFu ? 1 : max_symbol <= 0xFFFFu ? 2 : 4;
}

// Shuffles `symbols` into byte planes of width w (§5.6).
void shuffle(const std::vector<std::uint32_t>& symbols, int w, std::vector<std::uint8_t>& planes) {
    const std::size_t n = symbols.size();
    planes.resize(n * static_cast<std::size_t>(w));
    for (int j = 0; j < w; ++j) {
        std::uint8_t* p = planes.data() + static_cast<std::size_t>(j) * n;
        const int sh = 8 * j;
        for (std::size_t k = 0; k < n; ++k) p[k] = static_cast<std::uint8_t>(symbols[k] >> sh);
    }
}

struct Candidate {
    bool usable = false;
    std::uint8_t mode = 0;
    std::uint8_t width = 1;
    std::vector<std::uint8_t> payload;
};

Status make_candidate(std::uint8_t mode, const std::vector<std::uint32_t>& symbols,
                      std::uint32_t max_symbol, const StreamEncodeOptions& opt, Candidate& c) {
    const int need = narrowest_width(max_symbol);
    int w = need;
    if (opt.symbol_width != 0) {
        if (opt.symbol_width < need) {
            c.usable = false;
            if (opt.mode == -1) return ok_status();  // the other candidate may fit
            return bad_arg("symbol_width " + std::to_string(opt.symbol_width) +
                           " cannot hold symbol " + std::to_string(max_symbol) + " (needs " +
                           std::to_string(need) + ")");
        }
        w = opt.symbol_width;
    }
    c.usable = true;
    c.mode = mode;
    c.width = static_cast<std::uint8_t>(w);
    std::vector<std::uint8_t> planes;
    shuffle(symbols, w, planes);
    return compress(opt.codec, opt.level, planes, c.payload);
}

}  // namespace

Status encode_stream(ByteWriter& out, std::uint8_t attribute_id, std::uint8_t channels,
                     std::span<const std::int32_t> values, const StreamEncodeOptions& opt) {
    if (channels == 0) return bad_arg("an attribute stream needs at least one channel");
    if (values.size() % channels != 0)
        return bad_arg(std::to_string(values.size()) + " values are not a whole number of " +
                       std::to_string(channels) + "-channel elements");
    const std::size_t elements = values.size() / channels;
    if (elements > std::numeric_limits<std::uint32_t>::max())
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          std::to_string(elements) + " elements do not fit element_count (u32)");
    if (!codec_implemented(opt.codec))
        return make_error(ErrorKind::unsupported, refusal::kUnknownStreamCodec,
                          "stream codec byte " + std::to_string(opt.codec) + " (" +
                              codec_name(opt.codec) + ") is not implemented");
    if (opt.mode < -1 || opt.mode > 2)
        return bad_arg("mode " + std::to_string(opt.mode) + " is not -1, 0, 1 or 2");
    if (opt.symbol_width != 0 && opt.symbol_width != 1 && opt.symbol_width != 2 &&
        opt.symbol_width != 4)
        return bad_arg("symbol_width " + std::to_string(opt.symbol_width) +
                       " is not 0, 1, 2 or 4");

    StreamHeader h;
    h.attribute_id = attribute_id;
    h.codec = opt.codec;
    h.channels = channels;
    h.element_count = static_cast<std::uint32_t>(elements);

    if (elements == 0) {
        {
            std::vector<std::uint8_t> probe;  // validates the level as a non-empty stream would
            FOURDGS_TRY(compress(opt.codec, opt.level, {}, probe));
        }
        h.symbol_width = static_cast<std::uint8_t>(opt.symbol_width == 0 ? 1 : opt.symbol_width);
        h.mode = static_cast<std::uint8_t>(opt.mode < 0 ? stream_mode::raw : opt.mode);
        h.payload_length = 0;
        write_stream_header(out, h);
        return ok_status();
    }

    bool constant = true;
    for (std::size_t k = channels; k < values.size() && constant; ++k)
        constant = values[k] == values[k - channels];
    bool delta_fits = true;
    for (std::size_t k = channels; k < values.size() && delta_fits; ++k) {
        const std::int64_t d = std::int64_t{values[k]} - values[k - channels];
        delta_fits = d >= std::numeric_limits<std::int32_t>::min() &&
                     d <= std::numeric_limits<std::int32_t>::max();
    }
    if (opt.mode == stream_mode::constant && !constant)
        return bad_arg("mode 2 (constant) was forced but the elements differ");
    if (opt.mode == stream_mode::delta && !delta_fits)
        return make_error(ErrorKind::invalid_argument, refusal::kStreamValueOutOfRange,
                          "mode 1 (delta) was forced but a per-channel difference leaves int32");

    const bool want_constant = opt.mode == stream_mode::constant || (opt.mode == -1 && constant);
    const bool try_raw = !want_constant && (opt.mode == -1 || opt.mode == stream_mode::raw);
    const bool try_delta =
        !want_constant && delta_fits && (opt.mode == -1 || opt.mode == stream_mode::delta);

    Candidate best, other;
    std::vector<std::uint32_t> symbols;
    if (want_constant) {
        symbols.resize(channels);
        std::uint32_t mx = 0;
        for (std::size_t ch = 0; ch < channels; ++ch) mx = std::max(mx, symbols[ch] = zigzag_encode(values[ch]));
        FOURDGS_TRY(make_candidate(stream_mode::constant, symbols, mx, opt, best));
    } else {
        symbols.resize(values.size());
        if (try_raw) {
            std::uint32_t mx = 0;
            for (std::size_t k = 0; k < values.size(); ++k)
                mx = std::max(mx, symbols[k] = zigzag_encode(values[k]));
            FOURDGS_TRY(make_candidate(stream_mode::raw, symbols, mx, opt, best));
        }
        if (try_delta) {
            std::uint32_t mx = 0;
            for (std::size_t k = 0; k < values.size(); ++k) {
                const std::int64_t d =
                    k < channels ? values[k] : std::int64_t{values[k]} - values[k - channels];
                mx = std::max(mx, symbols[k] = zigzag_encode(static_cast<std::int32_t>(d)));
            }
            FOURDGS_TRY(make_candidate(stream_mode::delta, symbols, mx, opt, other));
            if (other.usable && (!best.usable || other.payload.size() < best.payload.size()))
                std::swap(best, other);
        }
    }
    if (!best.usable)
        return bad_arg("symbol_width " + std::to_string(opt.symbol_width) +
                       " holds the symbols of neither raw nor delta coding");

    h.mode = best.mode;
    h.symbol_width = best.width;
    h.payload_length = best.payload.size();
    write_stream_header(out, h);
    out.raw(best.payload);
    return ok_status();
}

}  // namespace fourdgs
