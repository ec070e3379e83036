// Attribute streams (§5.6): framing, the decode pipeline's hot loops, and the encoder.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "codec.hpp"
#include "fourdgs/stream.hpp"
#include "platform/fresh_memory.hpp"

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
        return unknown_codec_error(h.codec, s.offset + kHeaderFieldCodec, attr(h));
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
            .about(opcode_name(op::attribute_stream), std::to_string(c.remaining()));
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

// The per-channel difference of element k's value from the element before it, or the value
// itself in the first element (§5.6 delta). Computed modulo 2^32, which is the difference
// itself whenever it fits int32 (the only case in which delta coding is used).
inline std::int32_t delta_at(const std::int32_t* v, std::size_t k, std::size_t channels) {
    if (k < channels) return v[k];
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(v[k]) -
                                     static_cast<std::uint32_t>(v[k - channels]));
}

// What one pass over the values finds: whether every element repeats the first, whether every
// per-channel difference fits int32, and the largest zigzagged symbol of either mode.
struct ValueShape {
    bool constant = true, delta_fits = true;
    std::uint32_t raw_max = 0, delta_max = 0;
};

// The largest zigzag symbol over values in [lo, hi]: zigzag grows with |v|.
std::uint32_t zigzag_max(std::int64_t lo, std::int64_t hi) {
    std::uint64_t m = 0;
    if (hi >= 0) m = std::max<std::uint64_t>(m, static_cast<std::uint64_t>(hi) * 2);
    if (lo < 0) m = std::max<std::uint64_t>(m, static_cast<std::uint64_t>(-lo) * 2 - 1);
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(m, 0xFFFFFFFFu));
}

ValueShape shape_of(std::span<const std::int32_t> values, std::size_t channels) {
    const std::int32_t* v = values.data();
    const std::size_t n = values.size();
    std::int32_t lo = v[0], hi = v[0];
    std::int64_t dlo = 0, dhi = 0;
    for (std::size_t k = 0; k < std::min(channels, n); ++k) {
        lo = std::min(lo, v[k]);
        hi = std::max(hi, v[k]);
        dlo = std::min<std::int64_t>(dlo, v[k]);
        dhi = std::max<std::int64_t>(dhi, v[k]);
    }
    std::int64_t rest_lo = 0, rest_hi = 0;  // differences after the first element
    if (n > channels) rest_lo = rest_hi = std::int64_t{v[channels]} - v[0];
    for (std::size_t k = channels; k < n; ++k) {
        lo = std::min(lo, v[k]);
        hi = std::max(hi, v[k]);
        const std::int64_t d = std::int64_t{v[k]} - v[k - channels];
        rest_lo = std::min(rest_lo, d);
        rest_hi = std::max(rest_hi, d);
    }
    ValueShape s;
    s.constant = rest_lo == 0 && rest_hi == 0;
    s.delta_fits = rest_lo >= std::numeric_limits<std::int32_t>::min() &&
                   rest_hi <= std::numeric_limits<std::int32_t>::max();
    s.raw_max = zigzag_max(lo, hi);
    if (n > channels) {
        dlo = std::min(dlo, rest_lo);
        dhi = std::max(dhi, rest_hi);
    }
    s.delta_max = zigzag_max(dlo, dhi);
    return s;
}

// Writes the byte planes (§5.6 shuffle) of the symbols of `mode` at width W into `planes`.
template <int W>
void shuffle_into(const std::int32_t* __restrict v, std::size_t n, std::size_t channels,
                  bool delta, std::uint8_t* __restrict planes) {
    std::size_t k = 0;
    auto put = [&](std::size_t at, std::uint32_t u) {
        planes[at] = static_cast<std::uint8_t>(u);
        if constexpr (W >= 2) planes[n + at] = static_cast<std::uint8_t>(u >> 8);
        if constexpr (W == 4) {
            planes[2 * n + at] = static_cast<std::uint8_t>(u >> 16);
            planes[3 * n + at] = static_cast<std::uint8_t>(u >> 24);
        }
    };
    if (delta) {
        for (; k < std::min(channels, n); ++k) put(k, zigzag_encode(v[k]));
        for (; k < n; ++k)
            put(k, zigzag_encode(static_cast<std::int32_t>(static_cast<std::uint32_t>(v[k]) -
                                                           static_cast<std::uint32_t>(v[k - channels]))));
    } else {
        for (; k < n; ++k) put(k, zigzag_encode(v[k]));
    }
}

void shuffle_into(const std::int32_t* v, std::size_t n, std::size_t channels, bool delta, int w,
                  std::uint8_t* planes) {
    switch (w) {
        case 1: shuffle_into<1>(v, n, channels, delta, planes); break;
        case 2: shuffle_into<2>(v, n, channels, delta, planes); break;
        default: shuffle_into<4>(v, n, channels, delta, planes); break;
    }
}

// Σ count × log2(n / count) over a 256-bin histogram of n bytes: the plane's order-0 bits.
double plane_bits(const std::uint32_t* hist, std::size_t n) {
    if (n == 0) return 0;
    double bits = 0;
    const double total = static_cast<double>(n);
    for (int b = 0; b < 256; ++b)
        if (hist[b] != 0) bits -= hist[b] * std::log2(hist[b] / total);
    return bits;
}

// The order-0 bytes of the symbols of one mode at its narrowest width, from every element or,
// in a longer stream, from kEstimateSample elements spread evenly over it (every step-th; a
// delta is still taken from the element before it), scaled to the whole stream.
double residual_bytes(const std::int32_t* v, std::size_t n, std::size_t channels, bool delta,
                      int w) {
    const std::size_t elements = n / channels;
    const std::size_t step = std::max<std::size_t>(1, elements / kEstimateSample);
    // Two histograms per plane, alternating, so consecutive equal bytes do not wait on each
    // other's increment.
    std::array<std::array<std::uint32_t, 512>, 4> hist{};
    std::size_t seen = 0;
    for (std::size_t e = 0; e < elements; e += step)
        for (std::size_t c = 0, k = e * channels; c < channels; ++c, ++k, ++seen) {
            const std::uint32_t u = zigzag_encode(delta ? delta_at(v, k, channels) : v[k]);
            const std::size_t half = (seen & 1) * 256;
            hist[0][half + (u & 0xFF)]++;
            if (w >= 2) hist[1][half + ((u >> 8) & 0xFF)]++;
            if (w == 4) {
                hist[2][half + ((u >> 16) & 0xFF)]++;
                hist[3][half + (u >> 24)]++;
            }
        }
    double bits = 0;
    for (int j = 0; j < w; ++j) {
        for (int b = 0; b < 256; ++b) hist[j][b] += hist[j][256 + b];
        bits += plane_bits(hist[j].data(), seen);
    }
    return bits / 8 * (static_cast<double>(n) / static_cast<double>(seen));
}

// Grows `v` to at least `size` bytes; never shrinks, so a reused buffer is zero-filled once.
std::span<std::uint8_t> room(std::vector<std::uint8_t>& v, std::size_t size) {
    if (v.size() < size) detail::resize_fresh(v, size);
    return {v.data(), size};
}

}  // namespace

ModeEstimate estimate_modes(std::uint8_t channels, std::span<const std::int32_t> values) {
    ModeEstimate e;
    if (channels == 0 || values.empty() || values.size() % channels != 0) return e;
    const ValueShape s = shape_of(values, channels);
    e.raw_bytes = residual_bytes(values.data(), values.size(), channels, false,
                                 narrowest_width(s.raw_max));
    e.delta_bytes = s.delta_fits ? residual_bytes(values.data(), values.size(), channels, true,
                                                  narrowest_width(s.delta_max))
                                 : std::numeric_limits<double>::infinity();
    return e;
}

Status encode_stream(ByteWriter& out, std::uint8_t attribute_id, std::uint8_t channels,
                     std::span<const std::int32_t> values, const StreamEncodeOptions& opt) {
    StreamEncodeScratch scratch;
    return encode_stream(out, attribute_id, channels, values, opt, scratch);
}

namespace {

// What encode_stream is asked to do, before anything is encoded: whole elements that element_count
// can count, codecs this build implements, a mode and a symbol width the format defines.
Status check_encode_request(std::uint8_t channels, std::span<const std::int32_t> values,
                            const StreamEncodeOptions& opt) {
    if (channels == 0) return bad_arg("an attribute stream needs at least one channel");
    if (values.size() % channels != 0)
        return bad_arg(std::to_string(values.size()) + " values are not a whole number of " +
                       std::to_string(channels) + "-channel elements");
    const std::size_t elements = values.size() / channels;
    if (elements > std::numeric_limits<std::uint32_t>::max())
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          std::to_string(elements) + " elements do not fit element_count (u32)");
    for (const CodecLevel& c : opt.also)
        if (!codec_implemented(c.codec)) return unknown_codec_error(c.codec, kNoOffset);
    if (!codec_implemented(opt.codec)) return unknown_codec_error(opt.codec, kNoOffset);
    if (opt.mode < -1 || opt.mode > 2)
        return bad_arg("mode " + std::to_string(opt.mode) + " is not -1, 0, 1 or 2");
    if (opt.symbol_width != 0 && opt.symbol_width != 1 && opt.symbol_width != 2 &&
        opt.symbol_width != 4)
        return bad_arg("symbol_width " + std::to_string(opt.symbol_width) +
                       " is not 0, 1, 2 or 4");
    return ok_status();
}

}  // namespace

Status encode_stream(ByteWriter& out, std::uint8_t attribute_id, std::uint8_t channels,
                     std::span<const std::int32_t> values, const StreamEncodeOptions& opt,
                     StreamEncodeScratch& scratch) {
    FOURDGS_TRY(check_encode_request(channels, values, opt));
    const std::size_t elements = values.size() / channels;

    StreamHeader h;
    h.attribute_id = attribute_id;
    h.codec = opt.codec;
    h.channels = channels;
    h.element_count = static_cast<std::uint32_t>(elements);

    if (elements == 0) {
        // Every pair's level is still checked (on an empty input), as a non-empty stream would.
        std::vector<std::uint8_t> probe;
        FOURDGS_TRY(compress(opt.codec, opt.level, {}, probe));
        for (const CodecLevel& c : opt.also) FOURDGS_TRY(compress(c.codec, c.level, {}, probe));
        h.symbol_width = static_cast<std::uint8_t>(opt.symbol_width == 0 ? 1 : opt.symbol_width);
        h.mode = static_cast<std::uint8_t>(opt.mode < 0 ? stream_mode::raw : opt.mode);
        h.payload_length = 0;
        write_stream_header(out, h);
        return ok_status();
    }

    const ValueShape shape = shape_of(values, channels);
    if (opt.mode == stream_mode::constant && !shape.constant)
        return bad_arg("mode 2 (constant) was forced but the elements differ");
    if (opt.mode == stream_mode::delta && !shape.delta_fits)
        return make_error(ErrorKind::invalid_argument, refusal::kStreamValueOutOfRange,
                          "mode 1 (delta) was forced but a per-channel difference leaves int32");

    // The width of a mode: its narrowest, or the forced one when that holds every symbol.
    auto width_of = [&](std::uint32_t max_symbol) {
        const int need = narrowest_width(max_symbol);
        return opt.symbol_width == 0 ? need : opt.symbol_width < need ? 0 : opt.symbol_width;
    };
    const bool want_constant = opt.mode == stream_mode::constant || (opt.mode == -1 && shape.constant);
    bool try_raw = !want_constant && (opt.mode == -1 || opt.mode == stream_mode::raw);
    bool try_delta =
        !want_constant && shape.delta_fits && (opt.mode == -1 || opt.mode == stream_mode::delta);
    if (want_constant) {
        const int w = width_of(zigzag_max(*std::min_element(values.begin(), values.begin() + channels),
                                           *std::max_element(values.begin(), values.begin() + channels)));
        if (w == 0)
            return bad_arg("symbol_width " + std::to_string(opt.symbol_width) +
                           " cannot hold the constant's symbols");
        h.mode = stream_mode::constant;
        h.symbol_width = static_cast<std::uint8_t>(w);
    }
    const int raw_w = width_of(shape.raw_max), delta_w = width_of(shape.delta_max);
    // A mode whose symbols the forced width cannot hold is refused when it was forced, and
    // otherwise left out (the other may fit).
    auto fits = [&](bool& tried, int w, int mode, std::uint32_t max_symbol) -> Status {
        if (!tried || w != 0) return ok_status();
        if (opt.mode == mode)
            return bad_arg("symbol_width " + std::to_string(opt.symbol_width) +
                           " cannot hold symbol " + std::to_string(max_symbol) + " (needs " +
                           std::to_string(narrowest_width(max_symbol)) + ")");
        tried = false;
        return ok_status();
    };
    FOURDGS_TRY(fits(try_raw, raw_w, stream_mode::raw, shape.raw_max));
    FOURDGS_TRY(fits(try_delta, delta_w, stream_mode::delta, shape.delta_max));
    if (!want_constant && !try_raw && !try_delta)
        return bad_arg("symbol_width " + std::to_string(opt.symbol_width) +
                       " holds the symbols of neither raw nor delta coding");
    if (try_raw && try_delta && opt.choice == ModeChoice::estimate) {
        const double r = residual_bytes(values.data(), values.size(), channels, false, raw_w);
        const double d = residual_bytes(values.data(), values.size(), channels, true, delta_w);
        if (d < (1 - kModeEstimateMargin) * r) try_raw = false;
        else if (r < (1 - kModeEstimateMargin) * d) try_delta = false;
    }

    // Every candidate (mode, codec, level), in order; the first smallest payload wins.
    const CodecLevel first{opt.codec, opt.level};
    std::size_t best_size = 0;
    bool have = false;
    auto candidate = [&](std::uint8_t mode, int w) -> Status {
        const std::size_t symbols = mode == stream_mode::constant ? channels : values.size();
        const std::span<std::uint8_t> planes = room(scratch.planes, symbols * static_cast<std::size_t>(w));
        shuffle_into(values.data(), symbols, channels, mode == stream_mode::delta, w, planes.data());
        auto one = [&](const CodecLevel& c) -> Status {
            const std::span<std::uint8_t> dst = room(scratch.payload, detail::compress_bound(c.codec, c.level, planes.size()));
            FOURDGS_ASSIGN(const std::size_t n, detail::compress_into(c.codec, c.level, planes, dst));
            if (!have || n < best_size) {
                have = true;
                best_size = n;
                scratch.payload.swap(scratch.best);
                h.mode = mode;
                h.symbol_width = static_cast<std::uint8_t>(w);
                h.codec = c.codec;
            }
            return ok_status();
        };
        FOURDGS_TRY(one(first));
        for (const CodecLevel& c : opt.also) FOURDGS_TRY(one(c));
        return ok_status();
    };
    if (want_constant) {
        FOURDGS_TRY(candidate(stream_mode::constant, h.symbol_width));
    } else {
        if (try_raw) FOURDGS_TRY(candidate(stream_mode::raw, raw_w));
        if (try_delta) FOURDGS_TRY(candidate(stream_mode::delta, delta_w));
    }
    h.payload_length = best_size;
    write_stream_header(out, h);
    out.raw(Bytes(scratch.best.data(), best_size));
    return ok_status();
}

}  // namespace fourdgs
