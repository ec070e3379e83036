// Attribute streams (§5.6) and the codecs under them: round trips over every mode × width × codec,
// golden byte arrays that pin the wire independently of the encoder, and every refusal.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fourdgs/stream.hpp"
#include "fourdgs/wire.hpp"

using namespace fourdgs;

namespace {

using ByteVec = std::vector<std::uint8_t>;

constexpr std::int32_t kI32Min = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kI32Max = std::numeric_limits<std::int32_t>::max();

// A header written byte by byte, independent of write_stream_header.
ByteVec header_bytes(std::uint8_t id, std::uint8_t width, std::uint8_t mode, std::uint8_t codec,
                     std::uint8_t channels, std::uint32_t count, std::uint64_t payload_length) {
    ByteVec b = {id, width, mode, codec, channels};
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(count >> (8 * i)));
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<std::uint8_t>(payload_length >> (8 * i)));
    return b;
}

ByteVec stream_bytes(std::uint8_t id, std::uint8_t width, std::uint8_t mode, std::uint8_t codec,
                     std::uint8_t channels, std::uint32_t count, const ByteVec& payload) {
    ByteVec b = header_bytes(id, width, mode, codec, channels, count, payload.size());
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}

ByteVec squeeze(std::uint8_t codec, const ByteVec& raw, int level = 6) {
    ByteVec out;
    REQUIRE(compress(codec, level, raw, out).ok());
    return out;
}

StreamView view_of(const ByteVec& bytes, std::uint64_t base = 0) {
    Cursor c(bytes, base, "test block");
    auto s = read_stream(c);
    REQUIRE(s.ok());
    REQUIRE(c.at_end());
    return *s;
}

std::vector<std::int32_t> decode_all(const ByteVec& bytes) {
    StreamScratch scratch;
    auto r = decode_stream(view_of(bytes), scratch);
    if (!r.ok()) FAIL(r.error().describe());
    return *r;
}

Error decode_error(const ByteVec& bytes, std::uint64_t base = 0, std::uint64_t limit = 1ull << 31) {
    StreamScratch scratch;
    auto r = decode_stream(view_of(bytes, base), scratch, limit);
    REQUIRE_FALSE(r.ok());
    return r.error();
}

ByteVec encode(std::uint8_t id, std::uint8_t channels, const std::vector<std::int32_t>& v,
               const StreamEncodeOptions& opt = {}) {
    ByteWriter w;
    auto st = encode_stream(w, id, channels, v, opt);
    if (!st.ok()) FAIL(st.error().describe());
    return w.buffer();
}

const char* codec_label(std::uint8_t c) {
    return c == codec::deflate ? "deflate" : c == codec::zstd ? "zstd" : "lz4";
}

// Values whose zigzag symbols need exactly `width` bytes in the given mode, 3 channels.
std::vector<std::int32_t> values_needing(int mode, int width, std::size_t elements) {
    std::mt19937 rng(1234u + static_cast<unsigned>(mode * 10 + width));
    const std::int64_t span = width == 1 ? 60 : width == 2 ? 15000 : 900000000;
    std::uniform_int_distribution<std::int64_t> d(-span, span);
    std::vector<std::int32_t> v(elements * 3);
    if (mode == 2) {
        const std::int32_t c[3] = {width == 1 ? -64 : width == 2 ? 20000 : kI32Min,
                                   width == 1 ? 5 : -1, 0};
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = c[i % 3];
        return v;
    }
    if (mode == 0) {
        for (auto& x : v) x = static_cast<std::int32_t>(d(rng));
        v[1] = static_cast<std::int32_t>(span);  // reach the top of the width
        return v;
    }
    // delta: a random walk whose steps need `width`; the first element stays small.
    std::int64_t acc[3] = {0, 0, 0};
    for (std::size_t i = 0; i < elements; ++i)
        for (int ch = 0; ch < 3; ++ch) {
            if (i > 0) {
                std::int64_t step = d(rng);
                if (acc[ch] + step > kI32Max || acc[ch] + step < kI32Min) step = -step;
                acc[ch] += step;
            }
            v[i * 3 + ch] = static_cast<std::int32_t>(acc[ch]);
        }
    v[4] = v[1] + static_cast<std::int32_t>(span);  // element 1, channel 1: a full-width step
    return v;
}

ByteVec read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return ByteVec(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace

// ---- crc, zigzag, codec names ---------------------------------------------------------------

TEST_CASE("crc32 is the IEEE CRC-32 of zlib, and continues from a previous value (§5.2)",
          "[stream][crc]") {
    const std::string s = "123456789";
    Bytes b(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
    CHECK(crc32(b) == 0xCBF43926u);
    CHECK(crc32(b.first(4), 0) != 0);
    CHECK(crc32(b.subspan(4), crc32(b.first(4))) == 0xCBF43926u);
    CHECK(crc32(Bytes{}) == 0u);
}

TEST_CASE("zigzag maps int32 onto uint32 as (u >> 1) ^ -(u & 1) (§5.6)", "[stream]") {
    CHECK(zigzag_encode(0) == 0u);
    CHECK(zigzag_encode(-1) == 1u);
    CHECK(zigzag_encode(1) == 2u);
    CHECK(zigzag_encode(-2) == 3u);
    CHECK(zigzag_encode(kI32Max) == 0xFFFFFFFEu);
    CHECK(zigzag_encode(kI32Min) == 0xFFFFFFFFu);
    for (std::int32_t v : {0, 1, -1, 127, -128, 32767, -32768, kI32Max, kI32Min, 123456789})
        CHECK(zigzag_decode(zigzag_encode(v)) == v);
    for (std::uint32_t u : {0u, 1u, 2u, 255u, 256u, 0xFFFFu, 0x7FFFFFFFu, 0xFFFFFFFEu, 0xFFFFFFFFu})
        CHECK(zigzag_encode(zigzag_decode(u)) == u);
    static_assert(zigzag_decode(5) == -3);
}

TEST_CASE("the implemented stream codecs are deflate 0, zstd 1 and lz4 in the private range at 0x80",
          "[stream]") {
    CHECK(codec::deflate == 0);
    CHECK(codec::zstd == 1);
    CHECK(codec::lz4 == 0x80);
    CHECK(codec_implemented(0));
    CHECK(codec_implemented(1));
    CHECK(codec_implemented(0x80));
    for (int c : {2, 3, 4, 0x7F, 0x81, 0x9F, 0xFF}) CHECK_FALSE(codec_implemented(static_cast<std::uint8_t>(c)));
    CHECK(codec_name(0) == "deflate");
    CHECK(codec_name(1) == "zstd");
    CHECK(codec_name(0x80).find("lz4") != std::string::npos);
    CHECK(codec_name(2).find("atlas-image") != std::string::npos);
    CHECK(codec_name(0x9F) == "private 0x9F");
    CHECK(codec_name(0x2A) == "reserved 0x2A");
}

TEST_CASE("chunk compression strings map to the registry's codecs and an unknown one is refused, "
          "naming it (§5.5)",
          "[stream]") {
    CHECK(chunk_compression_codec("deflate", 0).value() == codec::deflate);
    CHECK(chunk_compression_codec("zstd", 0).value() == codec::zstd);
    for (const char* name : {"lz4", "Deflate", "gzip", "zlib", "zstd "}) {
        auto r = chunk_compression_codec(name, 77);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().refusal == "unknown-chunk-compression");
        CHECK(r.error().kind == ErrorKind::unsupported);
        CHECK(r.error().message.find(std::string("\"") + name + "\"") != std::string::npos);
        CHECK(r.error().offset == 77);
    }
    auto stored = chunk_compression_codec("", 0);
    REQUIRE_FALSE(stored.ok());
    CHECK(stored.error().kind == ErrorKind::invalid_argument);
}

// ---- round trips ----------------------------------------------------------------------------

TEST_CASE("every mode x symbol width x codec round-trips, at the narrowest width (§5.6)",
          "[stream]") {
    for (std::uint8_t c : {codec::deflate, codec::zstd, codec::lz4}) {
        for (int mode : {0, 1, 2}) {
            for (int width : {1, 2, 4}) {
                INFO(codec_label(c) << " mode " << mode << " width " << width);
                const auto v = values_needing(mode, width, 500);
                StreamEncodeOptions opt;
                opt.codec = c;
                opt.mode = mode;
                const ByteVec bytes = encode(4, 3, v, opt);
                const StreamView s = view_of(bytes);
                CHECK(s.header.attribute_id == 4);
                CHECK(s.header.mode == mode);
                CHECK(s.header.symbol_width == width);
                CHECK(s.header.codec == c);
                CHECK(s.header.channels == 3);
                CHECK(s.header.element_count == 500);
                CHECK(s.header.payload_length == bytes.size() - kStreamHeaderSize);
                CHECK(decode_all(bytes) == v);

                // Wider than needed decodes to the same values.
                for (int wider : {2, 4}) {
                    if (wider <= width) continue;
                    opt.symbol_width = wider;
                    const ByteVec wide = encode(4, 3, v, opt);
                    CHECK(view_of(wide).header.symbol_width == wider);
                    CHECK(decode_all(wide) == v);
                    opt.symbol_width = 0;
                }
            }
        }
    }
}

TEST_CASE("round trips hold for any channel count, including the generic delta path", "[stream]") {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> d(-300, 300);
    for (int channels : {1, 2, 4, 5, 7, 255}) {
        for (int mode : {0, 1}) {
            INFO("channels " << channels << " mode " << mode);
            std::vector<std::int32_t> v(static_cast<std::size_t>(channels) * 37);
            for (auto& x : v) x = d(rng);
            StreamEncodeOptions opt;
            opt.mode = mode;
            opt.codec = codec::zstd;
            const ByteVec bytes = encode(12, static_cast<std::uint8_t>(channels), v, opt);
            CHECK(decode_all(bytes) == v);
        }
    }
}

TEST_CASE("the encoder chooses constant, then the smaller of raw and delta, deterministically",
          "[stream]") {
    std::vector<std::int32_t> constant(3 * 1000);
    for (std::size_t i = 0; i < constant.size(); ++i) constant[i] = static_cast<std::int32_t>(i % 3) - 1;
    const ByteVec c = encode(0, 3, constant);
    CHECK(view_of(c).header.mode == stream_mode::constant);
    CHECK(view_of(c).header.symbol_width == 1);
    CHECK(view_of(c).header.payload_length > 0);  // mode 2 still goes through the codec
    CHECK(decode_all(c) == constant);

    std::vector<std::int32_t> ramp(2000);
    for (std::size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<std::int32_t>(i * 977);
    const ByteVec r = encode(7, 1, ramp);
    CHECK(view_of(r).header.mode == stream_mode::delta);
    CHECK(view_of(r).header.symbol_width == 2);  // the step 977 zigzags to 1954
    CHECK(decode_all(r) == ramp);

    std::mt19937 rng(99);
    std::vector<std::int32_t> noise(3000);
    for (auto& x : noise) x = static_cast<std::int32_t>(rng() & 0xFF) - 128;
    const ByteVec n = encode(5, 1, noise);
    CHECK(view_of(n).header.mode == stream_mode::raw);
    CHECK(view_of(n).header.symbol_width == 1);  // -128..127 zigzag onto 0..255
    CHECK(decode_all(n) == noise);

    for (std::uint8_t codec_byte : {codec::deflate, codec::zstd, codec::lz4}) {
        StreamEncodeOptions opt;
        opt.codec = codec_byte;
        CHECK(encode(5, 1, noise, opt) == encode(5, 1, noise, opt));
        CHECK(encode(7, 1, ramp, opt) == encode(7, 1, ramp, opt));
    }
}

TEST_CASE("object ids over the whole int32 domain use raw mode when a delta would leave int32 "
          "(§6.6)",
          "[stream]") {
    const std::vector<std::int32_t> ids = {kI32Min, kI32Max, 0, -1, kI32Max, kI32Min, 1};
    const ByteVec bytes = encode(14, 1, ids);
    CHECK(view_of(bytes).header.mode == stream_mode::raw);
    CHECK(view_of(bytes).header.symbol_width == 4);
    CHECK(decode_all(bytes) == ids);

    StreamEncodeOptions forced;
    forced.mode = stream_mode::delta;
    ByteWriter w;
    auto st = encode_stream(w, 14, 1, ids, forced);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().refusal == "stream-value-out-of-range");
    CHECK(w.size() == 0);

    // Deltas that span the domain but fit int32 are allowed, at width 4.
    const std::vector<std::int32_t> wide = {kI32Min, -1, kI32Max - 1, 0};
    const ByteVec d = encode(14, 1, wide, forced);
    CHECK(view_of(d).header.mode == stream_mode::delta);
    CHECK(decode_all(d) == wide);
}

TEST_CASE("an empty stream has payload_length 0 and no codec frame, and decodes to nothing (§5.6)",
          "[stream]") {
    for (std::uint8_t c : {codec::deflate, codec::zstd, codec::lz4}) {
        StreamEncodeOptions opt;
        opt.codec = c;
        const ByteVec bytes = encode(3, 3, {}, opt);
        CHECK(bytes == header_bytes(3, 1, 0, c, 3, 0, 0));
        CHECK(decode_all(bytes).empty());
    }
}

TEST_CASE("the encoder refuses impossible requests and appends nothing", "[stream]") {
    const std::vector<std::int32_t> v = {1, 2, 3, 400};
    auto refused = [&](std::uint8_t channels, StreamEncodeOptions opt) {
        ByteWriter w;
        auto st = encode_stream(w, 0, channels, v, opt);
        CHECK(w.size() == 0);
        REQUIRE_FALSE(st.ok());
        return st.error();
    };
    CHECK(refused(0, {}).kind == ErrorKind::invalid_argument);
    CHECK(refused(3, {}).kind == ErrorKind::invalid_argument);  // 4 values, 3 channels
    StreamEncodeOptions o;
    o.codec = 0x9F;
    CHECK(refused(1, o).refusal == "unknown-stream-codec");
    o = {};
    o.level = 99;
    CHECK(refused(1, o).refusal == "invalid-compression-level");
    o = {};
    o.mode = stream_mode::constant;
    CHECK(refused(1, o).kind == ErrorKind::invalid_argument);
    o = {};
    o.symbol_width = 3;
    CHECK(refused(1, o).kind == ErrorKind::invalid_argument);
    o = {};
    o.mode = stream_mode::raw;
    o.symbol_width = 1;  // 400 zigzags to 800
    CHECK(refused(1, o).kind == ErrorKind::invalid_argument);
}

// ---- golden bytes ---------------------------------------------------------------------------

TEST_CASE("golden: a raw width-2 stream in a hand-written stored zlib stream (§5.6)", "[stream]") {
    // values 1, -2, 300 → zigzag 2, 3, 600 (0x0258) → plane 0: 02 03 58, plane 1: 00 00 02.
    // zlib: CMF 78, FLG 01, stored final block (01, LEN 0006, NLEN FFF9), data, adler32 (BE).
    // adler: a = 1 + 2+3+88+0+0+2 = 96; b = 3+6+94+94+94+96 = 387 → 0x01830060.
    const ByteVec payload = {0x78, 0x01, 0x01, 0x06, 0x00, 0xF9, 0xFF, 0x02, 0x03,
                             0x58, 0x00, 0x00, 0x02, 0x01, 0x83, 0x00, 0x60};
    const ByteVec golden = {0x0B, 0x02, 0x00, 0x00, 0x01,                    // id 11, w2, raw, deflate, 1 ch
                            0x03, 0x00, 0x00, 0x00,                          // element_count 3
                            0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // payload_length 17
                            0x78, 0x01, 0x01, 0x06, 0x00, 0xF9, 0xFF, 0x02, 0x03,
                            0x58, 0x00, 0x00, 0x02, 0x01, 0x83, 0x00, 0x60};
    CHECK(golden == stream_bytes(11, 2, 0, 0, 1, 3, payload));
    CHECK(decode_all(golden) == std::vector<std::int32_t>{1, -2, 300});

    // libdeflate's level 0 writes exactly this stored stream, so the encoder reproduces the bytes.
    StreamEncodeOptions opt;
    opt.level = 0;
    opt.mode = stream_mode::raw;
    CHECK(encode(11, 1, {1, -2, 300}, opt) == golden);
}

TEST_CASE("golden: a delta width-1 zstd stream runs its sum per channel (§5.6)", "[stream]") {
    // elements (10,-5) (12,-7) (11,-4): element 0 as is → 20, 9; then (+2,-2) → 4, 3;
    // then (-1,+3) → 1, 6.
    const ByteVec symbols = {20, 9, 4, 3, 1, 6};
    const ByteVec bytes = stream_bytes(0x06, 1, 1, 1, 2, 3, squeeze(codec::zstd, symbols));
    CHECK(decode_all(bytes) == std::vector<std::int32_t>{10, -5, 12, -7, 11, -4});
}

TEST_CASE("golden: a constant width-4 deflate stream stores exactly `channels` symbols (§5.6)",
          "[stream]") {
    // (70000, -1, 0) → zigzag 140000 (0x000222E0), 1, 0; planes byte 0..3 of the three symbols.
    const ByteVec planes = {0xE0, 0x01, 0x00, 0x22, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00};
    const ByteVec bytes = stream_bytes(0x01, 4, 2, 0, 3, 4, squeeze(codec::deflate, planes));
    CHECK(decode_all(bytes) ==
          std::vector<std::int32_t>{70000, -1, 0, 70000, -1, 0, 70000, -1, 0, 70000, -1, 0});
}

TEST_CASE("golden: codec 0x80 is one raw lz4 block with no frame around it", "[stream]") {
    // One literals-only sequence: token 0x40 (4 literals, no match), then the literals.
    // Raw width 2, values -1, 128 → zigzag 1, 256 → plane 0: 01 00, plane 1: 00 01.
    const ByteVec block = {0x40, 0x01, 0x00, 0x00, 0x01};
    const ByteVec bytes = stream_bytes(0x0C, 2, 0, 0x80, 1, 2, block);
    CHECK(decode_all(bytes) == std::vector<std::int32_t>{-1, 128});
    // A block with a match: 1 literal (05), a 20-byte match at offset 1 (token 0x1F, length
    // extension byte 01 → 15 + 1 + 4), then the 5 literals lz4 requires at the end of a block.
    // 26 bytes of 05, width 1: zigzag 5 = -3.
    const ByteVec with_match = {0x1F, 0x05, 0x01, 0x00, 0x01, 0x50, 0x05, 0x05, 0x05, 0x05, 0x05};
    CHECK(decode_all(stream_bytes(0x0C, 1, 0, 0x80, 1, 26, with_match)) ==
          std::vector<std::int32_t>(26, -3));
    // The same block declared one byte short or long is a size mismatch, not corruption.
    CHECK(decode_error(stream_bytes(0x0C, 1, 0, 0x80, 1, 25, with_match)).refusal ==
          "decompressed-size-mismatch");
    CHECK(decode_error(stream_bytes(0x0C, 1, 0, 0x80, 1, 27, with_match)).refusal ==
          "decompressed-size-mismatch");
}

// ---- refusals -------------------------------------------------------------------------------

TEST_CASE("a known stream with an unknown codec byte is refused even at element_count 0 (§5.6)",
          "[stream]") {
    for (std::uint8_t c : {std::uint8_t{2}, std::uint8_t{3}, std::uint8_t{0x7F}, std::uint8_t{0x9F},
                           std::uint8_t{0xFF}}) {
        for (std::uint32_t count : {0u, 5u}) {
            INFO("codec " << int(c) << " count " << count);
            const ByteVec payload = count ? ByteVec{1, 2, 3, 4, 5} : ByteVec{};
            const Error e = decode_error(stream_bytes(4, 1, 0, c, 1, count, payload), 1000);
            CHECK(e.refusal == "unknown-stream-codec");
            CHECK(e.kind == ErrorKind::unsupported);
            CHECK(e.message.find(std::to_string(c)) != std::string::npos);
            CHECK(e.offset == 1000 + 3);
        }
    }
    const Error e = decode_error(stream_bytes(4, 1, 0, 0x9F, 1, 0, {}));
    CHECK(e.message.find("0x9F") != std::string::npos);
}

TEST_CASE("a payload that inflates to more or fewer bytes than declared is refused (§5.6)",
          "[stream]") {
    const ByteVec six = {1, 2, 3, 4, 5, 6};
    for (std::uint8_t c : {codec::deflate, codec::zstd, codec::lz4}) {
        INFO(codec_label(c));
        // 6 bytes where 5 (too large) and 7 (too small) are declared.
        for (std::uint32_t declared : {5u, 7u, 3u, 12u}) {
            const Error e = decode_error(stream_bytes(5, 1, 0, c, 1, declared, squeeze(c, six)), 40);
            CHECK(e.refusal == "decompressed-size-mismatch");
            CHECK(e.kind == ErrorKind::malformed);
            CHECK(e.offset == 40 + kStreamHeaderSize);
        }
        // width 2 doubles the declared size: 3 elements × 2 bytes = 6 is right.
        CHECK(decode_error(stream_bytes(5, 2, 0, c, 1, 2, squeeze(c, six))).refusal ==
              "decompressed-size-mismatch");
        CHECK(decode_all(stream_bytes(5, 2, 0, c, 1, 3, squeeze(c, six))).size() == 3);
        // mode 2 stores `channels` symbols whatever element_count is.
        CHECK(decode_error(stream_bytes(5, 1, 2, c, 1, 6, squeeze(c, six))).refusal ==
              "decompressed-size-mismatch");
        CHECK(decode_all(stream_bytes(5, 1, 2, c, 6, 100, squeeze(c, six))).size() == 600);
    }
}

TEST_CASE("an empty stream with a non-zero payload_length is refused (§5.6)", "[stream]") {
    const ByteVec frame = squeeze(codec::deflate, {});
    const Error e = decode_error(stream_bytes(0, 1, 0, 0, 3, 0, frame));
    CHECK(e.refusal == "decompressed-size-mismatch");
}

TEST_CASE("a payload the codec reports as corrupt is refused as corrupt, not as a size mismatch",
          "[stream]") {
    const ByteVec raw(64, 9);
    for (std::uint8_t c : {codec::deflate, codec::zstd, codec::lz4}) {
        INFO(codec_label(c));
        ByteVec p = squeeze(c, raw);
        p.back() ^= 0x5A;  // the adler32, the zstd block, the lz4 last literal run
        if (c == codec::lz4) p = {0x1F, 0x09, 0x00, 0x10};  // match offset 16 before any output
        const Error e = decode_error(stream_bytes(8, 1, 0, c, 1, 64, p));
        CHECK(e.refusal == "corrupt-compressed-data");
        CHECK(e.kind == ErrorKind::malformed);
        // Garbage that is not a frame at all.
        const Error g = decode_error(stream_bytes(8, 1, 0, c, 1, 4, {0xFF, 0xFF, 0xFF, 0xFF, 0xFF}));
        CHECK((g.refusal == "corrupt-compressed-data" || g.refusal == "decompressed-size-mismatch"));
    }
    // zlib's header check bits, and a zstd magic that is not one.
    CHECK(decode_error(stream_bytes(8, 1, 0, 0, 1, 4, {0x78, 0x00, 0, 0, 0, 0})).refusal ==
          "corrupt-compressed-data");
    CHECK(decode_error(stream_bytes(8, 1, 0, 1, 1, 4, {0x28, 0xB5, 0x2F, 0xFE, 0, 0})).refusal ==
          "corrupt-compressed-data");
}

TEST_CASE("bytes after the end of the codec's stream or frame inside payload_length are refused",
          "[stream]") {
    for (std::uint8_t c : {codec::deflate, codec::zstd}) {
        ByteVec p = squeeze(c, {1, 2, 3});
        p.push_back(0);
        const Error e = decode_error(stream_bytes(9, 1, 0, c, 1, 3, p));
        CHECK(e.refusal == "corrupt-compressed-data");
    }
}

TEST_CASE("symbol widths other than 1, 2 and 4 are refused (§5.6)", "[stream]") {
    for (std::uint8_t w : {std::uint8_t{0}, std::uint8_t{3}, std::uint8_t{8}}) {
        const Error e = decode_error(stream_bytes(0, w, 0, 0, 3, 1, squeeze(0, {1, 2, 3})), 10);
        CHECK(e.refusal == "invalid-symbol-width");
        CHECK(e.offset == 11);
    }
}

TEST_CASE("stream modes other than 0, 1 and 2 are refused (§5.6)", "[stream]") {
    const Error e = decode_error(stream_bytes(0, 1, 3, 0, 3, 1, squeeze(0, {1, 2, 3})), 10);
    CHECK(e.refusal == "unknown-stream-mode");
    CHECK(e.offset == 12);
}

TEST_CASE("a stream with elements and zero channels is refused", "[stream]") {
    const Error e = decode_error(stream_bytes(0, 1, 0, 0, 0, 4, squeeze(0, {})), 10);
    CHECK(e.refusal == "invalid-channel-count");
    CHECK(e.offset == 14);
    // No elements and no channels is merely empty.
    CHECK(decode_all(stream_bytes(0, 1, 0, 0, 0, 0, {})).empty());
}

TEST_CASE("a payload_length past the end of the block is refused before anything is read (§5.5)",
          "[stream]") {
    ByteVec bytes = stream_bytes(0, 1, 0, 0, 1, 3, squeeze(0, {1, 2, 3}));
    bytes.pop_back();
    Cursor c(bytes, 500, "Chunk records block");
    auto s = read_stream(c);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().refusal == "record-too-short");
    CHECK(s.error().offset == 500 + 9);

    // A huge declared length, and a header cut short.
    const ByteVec huge = header_bytes(0, 1, 0, 0, 1, 3, ~std::uint64_t{0});
    Cursor ch(huge, 0);
    CHECK(read_stream(ch).error().refusal == "record-too-short");
    const ByteVec cut(kStreamHeaderSize - 1, 0);
    auto r = split_streams(cut, 64);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().refusal == "record-too-short");
    CHECK(r.error().offset == 64);
}

TEST_CASE("a delta running sum that leaves int32 is refused (§5.6)", "[stream]") {
    // width 4, one channel: int32 max, then +1.
    const std::uint32_t a = zigzag_encode(kI32Max), b = zigzag_encode(1);
    const ByteVec planes = {std::uint8_t(a), std::uint8_t(b), std::uint8_t(a >> 8), std::uint8_t(b >> 8),
                            std::uint8_t(a >> 16), std::uint8_t(b >> 16), std::uint8_t(a >> 24),
                            std::uint8_t(b >> 24)};
    const Error e = decode_error(stream_bytes(14, 4, 1, 0, 1, 2, squeeze(0, planes)), 100);
    CHECK(e.refusal == "stream-value-out-of-range");
    CHECK(e.offset == 100 + kStreamHeaderSize);
    CHECK(e.message.find("element 1") != std::string::npos);

    // Down past int32 min on the second of three channels.
    const std::uint32_t m = zigzag_encode(kI32Min), n1 = zigzag_encode(-1);
    std::vector<std::uint32_t> sym = {0, m, 0, 0, n1, 0};
    ByteVec p(sym.size() * 4);
    for (std::size_t j = 0; j < 4; ++j)
        for (std::size_t k = 0; k < sym.size(); ++k) p[j * sym.size() + k] = std::uint8_t(sym[k] >> (8 * j));
    const Error e2 = decode_error(stream_bytes(0, 4, 1, 1, 3, 2, squeeze(1, p)));
    CHECK(e2.refusal == "stream-value-out-of-range");
    CHECK(e2.message.find("channel 1") != std::string::npos);
}

TEST_CASE("a decompressed size over the limit is refused before anything is allocated", "[stream]") {
    // Constant mode, 0xFFFFFFFF elements: a tiny payload, an enormous output.
    const ByteVec bytes = stream_bytes(0, 1, 2, 0, 3, 0xFFFFFFFFu, squeeze(0, {1, 2, 3}));
    StreamScratch scratch;
    auto r = decode_stream(view_of(bytes), scratch, 1u << 20);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().refusal == "limit-exceeded");
    CHECK(r.error().kind == ErrorKind::limit);
    CHECK(scratch.bytes.capacity() == 0);
    // ... also under the default limit.
    CHECK(decode_stream(view_of(bytes), scratch).error().refusal == "limit-exceeded");

    // Raw mode through the span overload: 1000 × 4 bytes against a 100-byte limit.
    const ByteVec raw = stream_bytes(0, 4, 0, 0, 1, 1000, squeeze(0, ByteVec(4000, 0)));
    std::vector<std::int32_t> out(1000);
    auto st = decode_stream(view_of(raw), out, scratch, 100);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().refusal == "limit-exceeded");
    CHECK(scratch.bytes.capacity() == 0);
    CHECK(decode_stream(view_of(raw), out, scratch, 4000).ok());
}

TEST_CASE("a declared size the payload cannot possibly inflate to is refused without allocating",
          "[stream]") {
    // 11 bytes of deflate cannot make a gigabyte, nor can 5 bytes of lz4; a zstd frame that
    // declares its content size is held to it.
    for (std::uint8_t c : {codec::deflate, codec::zstd, codec::lz4}) {
        INFO(codec_label(c));
        const ByteVec bytes = stream_bytes(0, 4, 0, c, 4, 0x10000000u, squeeze(c, {1, 2, 3}));
        StreamScratch scratch;
        auto r = decode_stream(view_of(bytes), scratch, ~std::uint64_t{0});
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().refusal == "decompressed-size-mismatch");
        CHECK(scratch.bytes.capacity() == 0);
    }
}

TEST_CASE("the expansion bounds admit the densest payloads each codec really writes", "[stream]") {
    const ByteVec zeros(2u << 20, 0);
    for (std::uint8_t c : {codec::deflate, codec::zstd, codec::lz4}) {
        for (int level : {0, 1, 12}) {
            INFO(codec_label(c) << " level " << level);
            const ByteVec p = squeeze(c, zeros, level);
            CHECK(check_decompressed_size(c, p, zeros.size(), 0).ok());
            ByteVec back(zeros.size(), 1);
            CHECK(decompress(c, p, back, 0).ok());
            CHECK(back == zeros);
        }
    }
}

TEST_CASE("an output buffer of the wrong size is the caller's error", "[stream]") {
    const ByteVec bytes = encode(0, 3, {1, 2, 3, 4, 5, 6});
    StreamScratch scratch;
    std::vector<std::int32_t> out(5);
    auto st = decode_stream(view_of(bytes), out, scratch);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().kind == ErrorKind::invalid_argument);
    out.resize(6);
    CHECK(decode_stream(view_of(bytes), out, scratch).ok());
    CHECK(out == std::vector<std::int32_t>{1, 2, 3, 4, 5, 6});
}

// ---- the records block ----------------------------------------------------------------------

TEST_CASE("split_streams walks bare streams back to back, unknown attribute ids included (§5.5)",
          "[stream]") {
    ByteVec block;
    const ByteVec a = encode(0, 3, {1, 2, 3, 4, 5, 6});
    // Unknown ids 40 and 100, with codec bytes nobody implements: framing alone walks past them.
    const ByteVec u1 = stream_bytes(40, 3, 7, 0x9F, 0, 9, {0xDE, 0xAD, 0xBE, 0xEF});
    const ByteVec u2 = stream_bytes(100, 1, 0, 0xFF, 1, 0, {});
    const ByteVec b = encode(5, 1, {7, 7, 7});
    for (const ByteVec* p : {&a, &u1, &u2, &b}) block.insert(block.end(), p->begin(), p->end());

    auto r = split_streams(block, 1000);
    REQUIRE(r.ok());
    const auto& s = *r;
    REQUIRE(s.size() == 4);
    CHECK(s[0].header.attribute_id == 0);
    CHECK(s[0].offset == 1000);
    CHECK(s[1].header.attribute_id == 40);
    CHECK(s[1].offset == 1000 + a.size());
    CHECK(s[1].payload.size() == 4);
    CHECK(s[1].payload[0] == 0xDE);
    CHECK(s[2].header.attribute_id == 100);
    CHECK(s[2].payload.empty());
    CHECK(s[3].header.attribute_id == 5);
    CHECK(s[3].offset == 1000 + a.size() + u1.size() + u2.size());
    CHECK(s[3].end_offset() == 1000 + block.size());

    StreamScratch scratch;
    CHECK(decode_stream(s[0], scratch).value() == std::vector<std::int32_t>{1, 2, 3, 4, 5, 6});
    CHECK(decode_stream(s[3], scratch).value() == std::vector<std::int32_t>{7, 7, 7});
    CHECK(decode_stream(s[2], scratch).error().refusal == "unknown-stream-codec");

    CHECK(split_streams({}, 0).value().empty());
    ByteVec cut = block;
    cut.pop_back();
    CHECK(split_streams(cut, 0).error().refusal == "record-too-short");
}

TEST_CASE("streams decode concurrently on several threads, each with its own scratch", "[stream][threads]") {
    std::vector<ByteVec> streams;
    std::vector<std::vector<std::int32_t>> expected;
    for (int t = 0; t < 4; ++t) {
        const std::uint8_t c = t % 3 == 0 ? codec::deflate : t % 3 == 1 ? codec::zstd : codec::lz4;
        expected.push_back(values_needing(1, 2, 20000 + t));
        StreamEncodeOptions opt;
        opt.codec = c;
        streams.push_back(encode(0, 3, expected.back(), opt));
    }
    std::vector<int> good(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            StreamScratch scratch;
            Cursor c(streams[static_cast<std::size_t>(t)], 0);
            auto s = read_stream(c);
            int ok = 1;
            for (int i = 0; i < 20 && s.ok(); ++i) {
                auto r = decode_stream(*s, scratch);
                ok &= r.ok() && *r == expected[static_cast<std::size_t>(t)];
            }
            good[static_cast<std::size_t>(t)] = ok && s.ok();
        });
    for (auto& th : threads) th.join();
    CHECK(good == std::vector<int>(4, 1));
}

// ---- files written by another implementation ------------------------------------------------

TEST_CASE("every stream of the interop fixtures decodes, element counts matching their chunk",
          "[stream][interop]") {
    std::size_t streams_seen = 0;
    for (const char* name : {"birth-deflate", "birth-zstd-sh3-balanced", "birth-extras",
                             "birth-never-fades-no-index", "keyframe-delta-churn"}) {
        INFO(name);
        const ByteVec file = read_file(std::string(FOURDGS_TEST_DATA) + "/" + name + ".4dgs");
        REQUIRE(file.size() > 64);
        std::size_t pos = kMagicSize;
        std::uint32_t last_count = 0;
        StreamScratch scratch;
        while (pos + kRecordHeaderSize <= file.size()) {
            auto rec = parse_record(Bytes(file).subspan(pos), pos);
            if (!rec.ok()) break;  // the trailing magic
            if (rec->opcode == op::chunk) {
                Cursor c(rec->content, rec->content_offset(), "Chunk");
                REQUIRE(c.f64("t0").ok());
                REQUIRE(c.f64("t1").ok());
                REQUIRE(c.u32("level").ok());
                const std::uint32_t count = c.u32("count").value();
                last_count = count;
                const std::string compression = c.string("compression").value();
                const std::uint64_t uncompressed = c.u64("uncompressed_size").value();
                const std::uint64_t block_at = c.offset() + 8;
                const Bytes block = c.bytes("records").value();
                ByteVec inflated;
                Bytes walk = block;
                if (!compression.empty()) {
                    const std::uint8_t cc = chunk_compression_codec(compression, 0).value();
                    inflated.resize(uncompressed);
                    REQUIRE(decompress(cc, block, inflated, block_at).ok());
                    walk = inflated;
                } else {
                    CHECK(uncompressed == block.size());
                }
                auto streams = split_streams(walk, block_at);
                REQUIRE(streams.ok());
                CHECK(streams->size() >= 11);
                for (const StreamView& s : *streams) {
                    CHECK(s.header.element_count == count);
                    auto v = decode_stream(s, scratch);
                    if (!v.ok()) FAIL(v.error().describe());
                    CHECK(v->size() == std::size_t{count} * s.header.channels);
                    ++streams_seen;
                }
            } else if (rec->opcode == op::sh_band) {
                Cursor c(rec->content, rec->content_offset(), "SH Band Stream");
                const std::uint8_t band = c.u8("band").value();
                auto s = read_stream(c);
                REQUIRE(s.ok());
                CHECK(c.at_end());
                CHECK(s->header.attribute_id == 7);
                CHECK(s->header.channels == 3 * (2 * band + 1));
                CHECK(s->header.element_count == last_count);
                auto v = decode_stream(*s, scratch);
                if (!v.ok()) FAIL(v.error().describe());
                for (std::int32_t x : *v) CHECK((x >= 0 && x <= 255));
                ++streams_seen;
            }
            pos = static_cast<std::size_t>(rec->end_offset());
        }
    }
    CHECK(streams_seen > 50);
}

// ---- the raw/delta estimate (ModeChoice::estimate) --------------------------------------------

namespace {

// Σ over the byte planes at the narrowest width of count × log2(n / count), in bytes: the
// estimate written out the slow way, from the symbols.
double order0_bytes(const std::vector<std::uint32_t>& symbols) {
    std::uint32_t mx = 0;
    for (std::uint32_t u : symbols) mx = std::max(mx, u);
    const int w = mx <= 0xFF ? 1 : mx <= 0xFFFF ? 2 : 4;
    double bits = 0;
    for (int j = 0; j < w; ++j) {
        std::map<int, double> count;
        for (std::uint32_t u : symbols) count[(u >> (8 * j)) & 0xFF] += 1;
        for (const auto& [b, c] : count) bits += c * std::log2(double(symbols.size()) / c);
    }
    return bits / 8;
}

ModeEstimate slow_estimate(const std::vector<std::int32_t>& v, std::size_t channels) {
    std::vector<std::uint32_t> raw, delta;
    for (std::size_t k = 0; k < v.size(); ++k) {
        raw.push_back(zigzag_encode(v[k]));
        // The stream's delta wraps in 32 bits (§6), as the writer computes it.
        const std::int32_t d = k < channels ? v[k]
                                            : static_cast<std::int32_t>(
                                                  static_cast<std::uint32_t>(v[k]) -
                                                  static_cast<std::uint32_t>(v[k - channels]));
        delta.push_back(zigzag_encode(d));
    }
    return {order0_bytes(raw), order0_bytes(delta)};
}

}  // namespace

TEST_CASE("the raw/delta estimate is each mode's order-0 entropy per byte plane", "[stream]") {
    std::mt19937 rng(5);
    for (std::size_t channels : {1u, 3u}) {
        for (int shape = 0; shape < 4; ++shape) {
            INFO("channels " << channels << " shape " << shape);
            std::vector<std::int32_t> v(channels * 3000);
            std::int32_t walk = 0;
            for (std::size_t k = 0; k < v.size(); ++k) {
                switch (shape) {
                    case 0: v[k] = static_cast<std::int32_t>(rng() % 200) - 100; break;
                    case 1: v[k] = walk += static_cast<std::int32_t>(rng() % 9) - 4; break;
                    case 2: v[k] = static_cast<std::int32_t>(k * 1000 + rng() % 3); break;
                    default: v[k] = static_cast<std::int32_t>(rng()); break;
                }
            }
            const ModeEstimate fast = estimate_modes(static_cast<std::uint8_t>(channels), v);
            const ModeEstimate slow = slow_estimate(v, channels);
            CHECK(fast.raw_bytes == Approx(slow.raw_bytes).epsilon(1e-9));
            if (shape == 3) {  // differences of random int32 leave int32
                CHECK(std::isinf(fast.delta_bytes));
            } else {
                CHECK(fast.delta_bytes == Approx(slow.delta_bytes).epsilon(1e-9));
            }
        }
    }
    // A longer stream is estimated from an even sample, within a percent of the whole.
    std::vector<std::int32_t> big(3 * 200000);
    for (auto& x : big) x = static_cast<std::int32_t>(std::lround(std::normal_distribution<>(0, 300)(rng)));
    const ModeEstimate sampled = estimate_modes(3, big);
    const ModeEstimate whole = slow_estimate(big, 3);
    CHECK(sampled.raw_bytes == Approx(whole.raw_bytes).epsilon(0.01));
    CHECK(sampled.delta_bytes == Approx(whole.delta_bytes).epsilon(0.01));
}

TEST_CASE("the estimate drops a mode only outside its guard band, and inside it compresses both",
          "[stream]") {
    std::mt19937 rng(11);
    StreamEncodeOptions both, estimate;
    estimate.choice = ModeChoice::estimate;
    int decided = 0, guarded = 0;
    // Random walks with noise: from pure noise (raw far smaller) through mixtures where the two
    // estimates meet, to pure walks (delta far smaller).
    for (int mix = 0; mix <= 40; ++mix) {
        std::vector<std::int32_t> v(3 * 4000);
        std::int64_t walk[3] = {0, 0, 0};
        const double noise = 40.0 * (40 - mix) / 40, step = 40.0 * mix / 40;
        std::normal_distribution<> n(0, 1);
        for (std::size_t k = 0; k < v.size(); ++k) {
            walk[k % 3] += std::llround(step * n(rng));
            v[k] = static_cast<std::int32_t>(walk[k % 3] + std::llround(noise * n(rng)));
        }
        const ModeEstimate e = estimate_modes(3, v);
        const ByteVec exact = encode(1, 3, v, both), guessed = encode(1, 3, v, estimate);
        const bool decisive = e.delta_bytes < (1 - kModeEstimateMargin) * e.raw_bytes ||
                              e.raw_bytes < (1 - kModeEstimateMargin) * e.delta_bytes;
        INFO("mix " << mix << " raw " << e.raw_bytes << " delta " << e.delta_bytes);
        CHECK(decode_all(guessed) == v);
        if (!decisive) {
            ++guarded;
            CHECK(guessed == exact);  // inside the band: exactly what compressing both gives
        } else {
            ++decided;
            const int mode = e.delta_bytes < e.raw_bytes ? stream_mode::delta : stream_mode::raw;
            CHECK(view_of(guessed).header.mode == mode);
            // Outside it, on these streams the estimate's choice is compressing both's too.
            CHECK(guessed == exact);
        }
    }
    CHECK(decided > 0);
    CHECK(guarded > 0);
}
