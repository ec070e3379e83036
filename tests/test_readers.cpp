// The read path (issue 2): both front-ends over files built byte by byte in code
// (tests/support/file_builder.hpp) — what they decode, that they decode the same thing, every
// refusal a reader owes a broken file, the forward-compatibility rules, and the indexed reader's
// own promises (seek by the index, fetch only the bands asked for, decode on several threads).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/reconstruct.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "fourdgs/validate.hpp"
#include "support/allocation_probe.hpp"
#include "support/file_builder.hpp"
#include "support/pipe_source.hpp"
#include "support/readers.hpp"

using namespace fourdgs;
using test::BuiltFile;
using test::BuiltScene;
using test::ByteVec;

using test::largest_allocation;
using test::reset_largest_allocation;
#define FOURDGS_TEST_COUNT_ALLOCATIONS test::allocation_probe_counting()

namespace {

// Both readers on `bytes`: the refusal each gives, which must be `refusal`.
void require_both_refuse(const ByteVec& bytes, const std::string& refusal,
                         const ReaderOptions& options = {}) {
    INFO("expected refusal " << refusal);
    auto s = test::stream_read(bytes, options);
    if (s.ok()) {
        INFO("streaming truncation: " << (s->truncation ? s->truncation->describe() : "none"));
        CHECK(false);
    } else {
        INFO("streaming: " << s.error().describe());
        CHECK(s.error().refusal == refusal);
    }
    auto i = test::indexed_read(bytes, options);
    REQUIRE(i.error.has_value());
    INFO("indexed: " << i.error->describe());
    CHECK(i.error->refusal == refusal);
}

Error streaming_error(const ByteVec& bytes, const ReaderOptions& options = {}) {
    auto s = test::stream_read(bytes, options);
    if (s.ok()) FAIL("the streaming reader accepted the file");
    return s.error();
}

Error indexed_error(const ByteVec& bytes, const ReaderOptions& options = {}) {
    auto i = test::indexed_read(bytes, options);
    if (!i.error) FAIL("the indexed reader accepted the file");
    return *i.error;
}

// Every chunk's bins through StreamingReader::next_chunk_bins.
std::vector<ChunkBins> streamed_bins(const ByteVec& bytes, const ReaderOptions& options = {}) {
    MemorySource src(bytes);
    StreamingReader reader(src, options);
    REQUIRE(reader.open().ok());
    std::vector<ChunkBins> out;
    while (true) {
        ChunkBins bins;
        auto r = reader.next_chunk_bins(bins);
        if (!r.ok()) FAIL(r.error().describe());
        if (!*r) break;
        out.push_back(std::move(bins));
    }
    REQUIRE(reader.finished());
    return out;
}

void require_bins_equal(ChunkBins got, const test::Bins& want) {
    REQUIRE(got.count == want.count);
    for (std::uint8_t id = 0; id < attr::kKnownCount; ++id) {
        if (!want.present[id]) continue;
        INFO("attribute " << attr::kNames[id]);
        CHECK(*got.column(id) == want.cols[id]);
    }
    CHECK(got.has_object_id == want.present[attr::object_id]);
    CHECK(got.has_source_group == want.present[attr::source_group]);
    CHECK(got.sh_bands == want.sh_bands);
    for (int b = 1; b <= want.sh_bands; ++b) CHECK(got.sh[b - 1] == want.sh[b - 1]);
}

GaussianBlock streamed_block(const ByteVec& bytes, const ReaderOptions& options = {}) {
    auto s = test::stream_read(bytes, options);
    if (!s.ok()) FAIL(s.error().describe());
    REQUIRE_FALSE(s->truncation.has_value());
    return std::move(s->gaussians);
}

GaussianBlock indexed_block(const ByteVec& bytes, const ReaderOptions& options = {},
                            unsigned threads = 1) {
    auto i = test::indexed_read(bytes, options, threads);
    if (i.error) FAIL(i.error->describe());
    return std::move(i.block);
}

const test::BuiltRecord& nth_record(const BuiltFile& f, std::uint8_t opcode, int n = 0) {
    for (const test::BuiltRecord& r : f.records)
        if (r.opcode == opcode && n-- == 0) return r;
    FAIL("no such record");
    return f.records.front();
}

// A scene of 3 chunks × 40 gaussians at SH degree 2, valid, for mutating.
BuiltScene small_scene(int sh = 2, std::uint32_t seed = 7) { return test::default_scene(3, 40, sh, seed); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// What the readers decode.

TEST_CASE("a built file decodes to exactly the bins it was written from, SH bands included "
          "(§5.5, §5.6, §5.7)",
          "[readers]") {
    for (int sh = 0; sh <= 3; ++sh) {
        DYNAMIC_SECTION("sh degree " << sh) {
            BuiltScene s = test::default_scene(3, 57, sh, 11 + std::uint32_t(sh), /*object_ids=*/true);
            const BuiltFile f = test::build(s.spec);
            const std::vector<ChunkBins> bins = streamed_bins(f.bytes);
            REQUIRE(bins.size() == s.bins.size());
            for (std::size_t k = 0; k < bins.size(); ++k) require_bins_equal(bins[k], s.bins[k]);

            // Dequantized: the grid of §6 applied to those bins.
            const GaussianBlock b = streamed_block(f.bytes);
            REQUIRE(b.count == 3 * 57);
            CHECK(b.sh_degree == sh);
            REQUIRE(b.sh.size() == b.count * std::size_t(3 * sh_coeffs_per_component(sh)));
            const Quantization q = test::default_quantization();
            const test::Bins& b0 = s.bins[0];
            for (std::size_t i = 0; i < b0.count; ++i) {
                for (int c = 0; c < 3; ++c)
                    CHECK(b.position[i * 3 + c] ==
                          static_cast<float>(q.pos_origin[c] + b0.cols[attr::position][i * 3 + c] * q.step_pos));
                CHECK(b.object_id[i] == static_cast<std::uint32_t>(b0.cols[attr::object_id][i]));
                CHECK(b.win_lo[i] == 0.0f);
                CHECK(b.win_hi[i] == 1.0f);
                CHECK(std::isinf(b.sigma_t[i]) == ((b0.cols[attr::flags][i] & 1) != 0));
                // SH: component-major across bands 1..D (GaussianBlock::sh's layout).
                const int per = sh_coeffs_per_component(sh);
                for (int band = 1; band <= sh; ++band)
                    for (int c = 0; c < 3; ++c)
                        for (int k = 0; k < sh_band_width(band); ++k)
                            CHECK(b.sh[(i * 3 + c) * per + sh_band_first(band) + k] ==
                                  b0.sh[band - 1][(i * 3 + c) * sh_band_width(band) + k]);
            }
        }
    }
}

TEST_CASE("streaming and indexed readers return identical gaussians, field by field, for every "
          "fixture and built file",
          "[readers]") {
    SECTION("fixtures") {
        for (const char* name : {"birth-deflate.4dgs", "birth-zstd-sh3-balanced.4dgs",
                                 "birth-never-fades-no-index.4dgs", "birth-extras.4dgs"}) {
            INFO(name);
            const ByteVec bytes = test::load_fixture(name);
            test::require_identical(streamed_block(bytes), indexed_block(bytes, {}, 3));
        }
    }
    SECTION("built files") {
        struct Variant {
            const char* name;
            int sh;
            bool objects;
            std::string compression;
            std::uint8_t codec;
            bool index;
        };
        const Variant variants[] = {
            {"sh0 deflate", 0, false, "", codec::deflate, true},
            {"sh3 zstd objects", 3, true, "", codec::zstd, true},
            {"sh1 lz4", 1, false, "", codec::lz4, true},
            {"sh2 chunk-level deflate", 2, true, "deflate", codec::deflate, true},
            {"sh3 chunk-level zstd, no index", 3, false, "zstd", codec::zstd, false},
        };
        for (const Variant& v : variants) {
            INFO(v.name);
            StreamEncodeOptions opt;
            opt.codec = v.codec;
            BuiltScene s = test::default_scene(4, 33, v.sh, 5, v.objects, opt);
            for (auto& c : s.spec.chunks) c.compression = v.compression;
            s.spec.index = v.index;
            const BuiltFile f = test::build(s.spec);
            const GaussianBlock a = streamed_block(f.bytes);
            const GaussianBlock b = indexed_block(f.bytes, {}, 2);
            CHECK(a.count == 4 * 33);
            test::require_identical(a, b);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Refusals.

TEST_CASE("M006: a second Header, Quantization or Window Table is refused, naming the record and "
          "the byte (§4)",
          "[readers]") {
    struct Case {
        const char* refusal;
        const char* record;
        std::uint8_t opcode;
    };
    for (const Case& c : {Case{"duplicate-header", "Header", op::header},
                          Case{"duplicate-quantization", "Quantization", op::quantization},
                          Case{"duplicate-window-table", "Window Table", op::window_table}}) {
        DYNAMIC_SECTION(c.record) {
            BuiltScene s = small_scene();
            if (c.opcode == op::header) s.spec.front.push_back(test::record_bytes(s.spec.header));
            if (c.opcode == op::quantization) s.spec.front.push_back(test::record_bytes(s.spec.quantization));
            if (c.opcode == op::window_table) s.spec.front.push_back(test::record_bytes(*s.spec.windows));
            const BuiltFile f = test::build(s.spec);
            const std::uint64_t second = nth_record(f, c.opcode, 1).offset;
            for (const Error& e : {streaming_error(f.bytes), indexed_error(f.bytes)}) {
                INFO(e.describe());
                CHECK(e.refusal == c.refusal);
                CHECK_THAT(e.message, Catch::Contains(c.record));
                CHECK_THAT(e.message, Catch::Contains(std::to_string(second)));
                CHECK(e.offset == second);
            }
        }
    }
}

TEST_CASE("M005: a file whose first record is not the Header is refused as header-not-first (§4)",
          "[readers]") {
    BuiltScene s = small_scene();
    s.spec.before_header = test::record_bytes(Metadata{"early", {{"k", "v"}}});
    require_both_refuse(test::build(s.spec).bytes, "header-not-first");
}

TEST_CASE("M007 M107: a wrong magic is magic-mismatch, only the version byte '2' is "
          "unsupported-major-version (§4.1, §10)",
          "[readers]") {
    const ByteVec good = test::build(small_scene().spec).bytes;
    SECTION("leading magic") {
        ByteVec bad = good;
        bad[1] ^= 0x20;
        require_both_refuse(bad, "magic-mismatch");
        ByteVec crlf = good;
        crlf[6] = 0x0A;  // a transport that mangled CR LF
        require_both_refuse(crlf, "magic-mismatch");
        ByteVec v2 = good;
        v2[5] = '2';
        require_both_refuse(v2, "unsupported-major-version");
        CHECK(streaming_error(v2).kind == ErrorKind::unsupported);
        CHECK(streaming_error(v2).offset == 5);
    }
    SECTION("trailing magic") {
        ByteVec v2 = good;
        v2[good.size() - 8 + 5] = '2';
        require_both_refuse(v2, "unsupported-major-version");
        ByteVec bad = good;
        bad[good.size() - 1] = 0;
        require_both_refuse(bad, "magic-mismatch");
    }
}

TEST_CASE("M015: temporal models other than gaussian-birth are refused as unknown-temporal-model, "
          "naming the model (§5.1)",
          "[readers]") {
    for (const char* model : {"", "deformation-field", "keyframe-delta", "frame-sequence", "Gaussian-Birth"}) {
        DYNAMIC_SECTION("'" << model << "'") {
            BuiltScene s = small_scene();
            s.spec.header.temporal_model = model;
            const BuiltFile f = test::build(s.spec);
            for (const Error& e : {streaming_error(f.bytes), indexed_error(f.bytes)}) {
                INFO(e.describe());
                CHECK(e.refusal == "unknown-temporal-model");
                CHECK(e.kind == ErrorKind::unsupported);
                if (*model) CHECK_THAT(e.message, Catch::Contains(model));
            }
        }
    }
}

TEST_CASE("a quantization scheme other than uniform-v1 is refused as unknown-quantization-scheme "
          "(§5.3, registry)",
          "[readers]") {
    BuiltScene s = small_scene();
    s.spec.quantization.scheme = "uniform-v2";
    const BuiltFile f = test::build(s.spec);
    require_both_refuse(f.bytes, "unknown-quantization-scheme");
    CHECK_THAT(streaming_error(f.bytes).message, Catch::Contains("uniform-v2"));
}

TEST_CASE("M018: a Quantization record whose bounds name object_id is refused as "
          "invalid-object-id-bound (§5.3)",
          "[readers]") {
    BuiltScene s = small_scene();
    s.spec.quantization.bounds.push_back({"object_id", "0"});
    require_both_refuse(test::build(s.spec).bytes, "invalid-object-id-bound");
}

TEST_CASE("M029: a window index past the table is refused, naming the index and the table size "
          "(§5.4)",
          "[readers]") {
    SECTION("a table of 3") {
        BuiltScene s = small_scene();
        s.bins[1].cols[attr::window_index][5] = 7;
        s.spec.chunks[1] = test::chunk_from_bins(s.bins[1], 1, 2);
        const BuiltFile f = test::build(s.spec);
        for (const Error& e : {streaming_error(f.bytes), indexed_error(f.bytes)}) {
            INFO(e.describe());
            CHECK(e.refusal == "window-index-out-of-range");
            CHECK_THAT(e.message, Catch::Contains("7"));
            CHECK_THAT(e.message, Catch::Contains("3 window"));
        }
    }
    SECTION("no Window Table reads as the one window (0, 0): index 0 decodes, index 1 is refused") {
        BuiltScene s = small_scene(0);
        s.spec.windows.reset();
        for (std::size_t k = 0; k < s.bins.size(); ++k) {
            std::fill(s.bins[k].cols[attr::window_index].begin(), s.bins[k].cols[attr::window_index].end(), 0);
            s.spec.chunks[k] = test::chunk_from_bins(s.bins[k], double(k), double(k + 1));
        }
        const ByteVec ok = test::build(s.spec).bytes;
        const GaussianBlock b = streamed_block(ok);
        REQUIRE(b.count == 120);
        CHECK(std::all_of(b.win_lo.begin(), b.win_lo.end(), [](float v) { return v == 0; }));
        CHECK(std::all_of(b.win_hi.begin(), b.win_hi.end(), [](float v) { return v == 0; }));
        CHECK(visible_count(b, 0.0, 0.05) == 0);  // the degenerate window: nothing ever visible
        s.bins[2].cols[attr::window_index][0] = 1;
        s.spec.chunks[2] = test::chunk_from_bins(s.bins[2], 2, 3);
        const ByteVec bad = test::build(s.spec).bytes;
        require_both_refuse(bad, "window-index-out-of-range");
        CHECK_THAT(streaming_error(bad).message, Catch::Contains("1 window"));
    }
    SECTION("a negative index") {
        BuiltScene s = small_scene(0);
        s.bins[0].cols[attr::window_index][0] = -1;
        s.spec.chunks[0] = test::chunk_from_bins(s.bins[0], 0, 1);
        require_both_refuse(test::build(s.spec).bytes, "window-index-out-of-range");
    }
}

TEST_CASE("M031: a chunk compression string this reader does not implement is refused as "
          "unknown-chunk-compression, naming it (§5.5)",
          "[readers]") {
    for (const char* name : {"brotli", "lz4", "Deflate", "zstd "}) {
        DYNAMIC_SECTION(name) {
            BuiltScene s = small_scene();
            s.spec.chunks[1].compression = name;  // stored as is: the reader must not look inside
            const BuiltFile f = test::build(s.spec);
            for (const Error& e : {streaming_error(f.bytes), indexed_error(f.bytes)}) {
                INFO(e.describe());
                CHECK(e.refusal == "unknown-chunk-compression");
                CHECK(e.kind == ErrorKind::unsupported);
                CHECK_THAT(e.message, Catch::Contains(name));
            }
        }
    }
}

TEST_CASE("M030: a chunk-level deflate or zstd records block is honoured and decodes to the same "
          "gaussians (§5.5)",
          "[readers]") {
    const BuiltScene plain = small_scene(3);
    const GaussianBlock want = streamed_block(test::build(plain.spec).bytes);
    for (const char* name : {"deflate", "zstd"}) {
        DYNAMIC_SECTION(name) {
            BuiltScene s = small_scene(3);
            for (auto& c : s.spec.chunks) c.compression = name;
            s.spec.header.flags |= kHeaderFlagCompressed;
            const BuiltFile f = test::build(s.spec);
            CHECK(f.bytes.size() != test::build(plain.spec).bytes.size());
            GaussianBlock a = streamed_block(f.bytes);
            GaussianBlock b = indexed_block(f.bytes);
            test::require_identical(a, want);
            test::require_identical(b, want);
            const std::vector<ChunkBins> bins = streamed_bins(f.bytes);
            for (std::size_t k = 0; k < bins.size(); ++k) require_bins_equal(bins[k], s.bins[k]);
        }
    }
}

TEST_CASE("an unknown stream codec byte in a known stream is refused as unknown-stream-codec, also "
          "at element_count 0 (§5.6, wire-notes)",
          "[readers]") {
    SECTION("in a populated chunk") {
        for (std::uint8_t codec_byte : {std::uint8_t{2}, std::uint8_t{9}, std::uint8_t{0x9F}}) {
            BuiltScene s = small_scene();
            test::stream_with_id(s.spec.chunks[2], attr::motion)[test::stream_field::codec] = codec_byte;
            const BuiltFile f = test::build(s.spec);
            for (const Error& e : {streaming_error(f.bytes), indexed_error(f.bytes)}) {
                INFO(e.describe());
                CHECK(e.refusal == "unknown-stream-codec");
                CHECK_THAT(e.message, Catch::Contains(std::to_string(codec_byte)));
            }
        }
    }
    SECTION("in an empty chunk, whose streams have no payload") {
        BuiltScene s = small_scene(0);
        const test::Bins empty = test::random_bins(0, 1, {0});
        s.spec.chunks.insert(s.spec.chunks.begin() + 1, test::chunk_from_bins(empty, 0.5, 0.75));
        s.spec.header.gaussian_count = 120;
        // First: an empty chunk with registered codecs is fine.
        CHECK(streamed_block(test::build(s.spec).bytes).count == 120);
        CHECK(indexed_block(test::build(s.spec).bytes).count == 120);
        ByteVec& st = test::stream_with_id(s.spec.chunks[1], attr::opacity);
        REQUIRE(st.size() == kStreamHeaderSize);  // no codec frame
        st[test::stream_field::codec] = 7;
        require_both_refuse(test::build(s.spec).bytes, "unknown-stream-codec");
    }
}

TEST_CASE("a payload that inflates to another size is refused as decompressed-size-mismatch, at "
          "stream and at chunk level (§5.5, §5.6)",
          "[readers]") {
    SECTION("stream: symbol_width changed so the declared size is wrong") {
        BuiltScene s = small_scene();
        ByteVec& st = test::stream_with_id(s.spec.chunks[0], attr::position);
        const std::uint8_t w = st[test::stream_field::symbol_width];
        st[test::stream_field::symbol_width] = w == 4 ? 2 : std::uint8_t(w * 2);
        require_both_refuse(test::build(s.spec).bytes, "decompressed-size-mismatch");
    }
    SECTION("stream: a payload at element_count 0") {
        BuiltScene s = small_scene(0);
        test::Bins empty = test::random_bins(0, 1, {0});
        s.spec.chunks.push_back(test::chunk_from_bins(empty, 2.5, 3));
        ByteVec& st = test::stream_with_id(s.spec.chunks.back(), attr::scale);
        st.insert(st.end(), {1, 2, 3});
        test::put_u64(st, test::stream_field::payload_length, 3);
        require_both_refuse(test::build(s.spec).bytes, "decompressed-size-mismatch");
    }
    SECTION("chunk stored as is with an uncompressed_size that is not its length") {
        BuiltScene s = small_scene();
        s.spec.chunks[1].uncompressed_size = 12345;
        require_both_refuse(test::build(s.spec).bytes, "decompressed-size-mismatch");
    }
    for (const char* name : {"deflate", "zstd"}) {
        DYNAMIC_SECTION("chunk compressed with " << name << " declaring a larger block") {
            BuiltScene s = small_scene();
            s.spec.chunks[1].compression = name;
            ByteVec block;
            for (const ByteVec& st : s.spec.chunks[1].streams) block.insert(block.end(), st.begin(), st.end());
            s.spec.chunks[1].uncompressed_size = block.size() + 10;
            require_both_refuse(test::build(s.spec).bytes, "decompressed-size-mismatch");
            s.spec.chunks[1].uncompressed_size = block.size() - 1;
            require_both_refuse(test::build(s.spec).bytes, "decompressed-size-mismatch");
        }
    }
}

TEST_CASE("a chunk's streams are checked against the registry and the chunk: duplicate, channel "
          "count, element count, missing (§6.1, registry)",
          "[readers]") {
    SECTION("two streams of one attribute: duplicate-attribute-stream") {
        BuiltScene s = small_scene();
        s.spec.chunks[1].streams.push_back(test::stream_with_id(s.spec.chunks[1], attr::opacity));
        require_both_refuse(test::build(s.spec).bytes, "duplicate-attribute-stream");
    }
    SECTION("an optional attribute twice is a duplicate too") {
        BuiltScene s = test::default_scene(2, 20, 0, 3, /*object_ids=*/true);
        s.spec.chunks[0].streams.push_back(test::stream_with_id(s.spec.chunks[0], attr::object_id));
        require_both_refuse(test::build(s.spec).bytes, "duplicate-attribute-stream");
    }
    SECTION("a channel count that is not the registry's: stream-channel-count-mismatch") {
        for (std::uint8_t id : {attr::position, attr::opacity, attr::window_index}) {
            BuiltScene s = small_scene();
            const std::uint8_t c = attr::kChannels[id];
            const test::Bins& b = s.bins[0];
            // Re-encode the column with the wrong interleaving so everything else stays consistent.
            std::vector<std::int32_t> v(b.cols[id].begin(), b.cols[id].end());
            const std::uint8_t wrong = c == 3 ? 1 : 3;
            v.resize(std::size_t(b.count) * wrong);
            test::stream_with_id(s.spec.chunks[0], id) = test::stream_of(id, wrong, v);
            require_both_refuse(test::build(s.spec).bytes, "stream-channel-count-mismatch");
        }
    }
    SECTION("an element count that is not the chunk's: stream-element-count-mismatch") {
        BuiltScene s = small_scene();
        std::vector<std::int32_t> v(s.bins[2].cols[attr::mu_t]);
        v.push_back(3);
        test::stream_with_id(s.spec.chunks[2], attr::mu_t) = test::stream_of(attr::mu_t, 1, v);
        require_both_refuse(test::build(s.spec).bytes, "stream-element-count-mismatch");
        // and in an SH band stream
        BuiltScene t = small_scene(2);
        ByteVec shorter(t.bins[0].sh[1].begin(), t.bins[0].sh[1].end() - 15);
        t.spec.chunks[0].bands[1].stream = test::band_stream(2, 39, shorter);
        require_both_refuse(test::build(t.spec).bytes, "stream-element-count-mismatch");
    }
    SECTION("a required stream absent: missing-attribute-stream, naming it") {
        for (std::uint8_t id = 0; id < attr::kRequiredCount; ++id) {
            BuiltScene s = small_scene(0);
            auto& streams = s.spec.chunks[1].streams;
            streams.erase(std::find_if(streams.begin(), streams.end(),
                                       [&](const ByteVec& st) { return st[0] == id; }));
            const BuiltFile f = test::build(s.spec);
            for (const Error& e : {streaming_error(f.bytes), indexed_error(f.bytes)}) {
                INFO(e.describe());
                CHECK(e.refusal == "missing-attribute-stream");
                CHECK_THAT(e.message, Catch::Contains(std::string("'") + attr::kNames[id] + "'"));
            }
        }
    }
}

TEST_CASE("rotation_index 4 is refused as invalid-rotation-index (§6.4, wire-notes)", "[readers]") {
    BuiltScene s = small_scene();
    s.bins[2].cols[attr::rotation_index][11] = 4;
    s.spec.chunks[2] = test::chunk_from_bins(s.bins[2], 2, 3);
    require_both_refuse(test::build(s.spec).bytes, "invalid-rotation-index");
}

TEST_CASE("an SH band symbol outside 0..255 is refused as sh-coefficient-out-of-range (§6.5, "
          "wire-notes)",
          "[readers]") {
    for (std::int32_t bad : {300, 256, -1}) {
        DYNAMIC_SECTION("symbol " << bad) {
            BuiltScene s = small_scene(2);
            std::vector<std::int32_t> symbols(s.bins[1].sh[0].begin(), s.bins[1].sh[0].end());
            symbols[17] = bad;
            s.spec.chunks[1].bands[0].stream = test::band_stream(1, 40, std::span<const std::int32_t>(symbols));
            require_both_refuse(test::build(s.spec).bytes, "sh-coefficient-out-of-range");
        }
    }
}

TEST_CASE("M032: an SH band stream carries attribute id 7 and is not taken for mu_t (§5.7)",
          "[readers]") {
    SECTION("mu_t comes from the chunk's own stream, SH from the band records") {
        BuiltScene s = small_scene(3);
        const BuiltFile f = test::build(s.spec);
        for (const auto& c : s.spec.chunks)
            for (const auto& b : c.bands) REQUIRE(b.stream[0] == attr::mu_t);
        const std::vector<ChunkBins> bins = streamed_bins(f.bytes);
        for (std::size_t k = 0; k < bins.size(); ++k) require_bins_equal(bins[k], s.bins[k]);
        test::require_identical(streamed_block(f.bytes), indexed_block(f.bytes));
    }
    SECTION("a chunk without a mu_t stream is missing one, whatever its band records carry") {
        BuiltScene s = small_scene(1);
        auto& streams = s.spec.chunks[0].streams;
        streams.erase(std::find_if(streams.begin(), streams.end(),
                                   [](const ByteVec& st) { return st[0] == attr::mu_t; }));
        require_both_refuse(test::build(s.spec).bytes, "missing-attribute-stream");
    }
}

TEST_CASE("declared counts that cannot fit are refused before anything is allocated: "
          "count-exceeds-record, truncated, limit-exceeded",
          "[readers][threads]") {
    SECTION("a Window Table declaring 0xFFFFFFFF windows") {
        BuiltScene s = small_scene(0);
        s.spec.windows.reset();
        ByteVec content(4 + 16, 0);
        test::put_u32(content, 0, 0xFFFFFFFFu);
        s.spec.front.push_back(test::framed(op::window_table, content));
        const ByteVec bytes = test::build(s.spec).bytes;
        reset_largest_allocation();
        require_both_refuse(bytes, "count-exceeds-record");
        if (FOURDGS_TEST_COUNT_ALLOCATIONS) {
            CHECK(largest_allocation() > 0);  // the probe is live
            CHECK(largest_allocation() < (std::size_t{64} << 20));
        }
        CHECK_THAT(streaming_error(bytes).message, Catch::Contains("4294967295"));
    }
    SECTION("a Chunk Index entry declaring 0xFFFFFFFF bands") {
        BuiltScene s = small_scene(1);
        s.spec.crc = false;  // so the indexed reader parses the entry instead of failing the CRC
        BuiltFile f = test::build(s.spec);
        const test::BuiltRecord& e = nth_record(f, op::chunk_index, 1);
        test::put_u32(f.bytes, e.offset + kRecordHeaderSize + 8 + 8 + 8 + 8 + 4, 0xFFFFFFFFu);
        reset_largest_allocation();
        require_both_refuse(f.bytes, "count-exceeds-record");
        if (FOURDGS_TEST_COUNT_ALLOCATIONS) CHECK(largest_allocation() < (std::size_t{64} << 20));
    }
    SECTION("a record whose content_length runs past the end of the file") {
        for (std::uint64_t length : {std::uint64_t{1} << 20, std::uint64_t{0xFFFFFFFF},
                                     ~std::uint64_t{0}, ~std::uint64_t{0} - 8}) {
            BuiltScene s = small_scene(0);
            s.spec.front.push_back(test::record_bytes(Metadata{"m", {{"a", "b"}}}));
            BuiltFile f = test::build(s.spec);
            test::put_u64(f.bytes, nth_record(f, op::metadata).offset + 1, length);
            reset_largest_allocation();
            auto st = test::stream_read(f.bytes);
            REQUIRE(st.ok());  // the front matter is cut: a truncation, not a refusal
            REQUIRE(st->truncation.has_value());
            CHECK(st->truncation->refusal == "truncated");
            CHECK(st->gaussians.count == 0);
            const Error ie = indexed_error(f.bytes);
            CHECK((ie.refusal == "truncated" || ie.refusal == "count-exceeds-record"));
            if (FOURDGS_TEST_COUNT_ALLOCATIONS) CHECK(largest_allocation() < (std::size_t{64} << 20));
            // The same through a pipe, where the size is not known in advance.
            auto piped = test::through_pipe(f.bytes, [](ByteSource& src) { return read_streaming(src); });
            if (piped.ok()) {
                REQUIRE(piped->truncation.has_value());
                CHECK(piped->truncation->refusal == "truncated");
            } else {
                CHECK(piped.error().refusal == "limit-exceeded");
            }
            if (FOURDGS_TEST_COUNT_ALLOCATIONS) CHECK(largest_allocation() < (std::size_t{64} << 20));
        }
    }
    SECTION("a chunk of 0xFFFFFFFF gaussians in constant streams is limit-exceeded") {
        BuiltScene s = small_scene(0);
        test::ChunkSpec& c = s.spec.chunks[1];
        c.count = 0xFFFFFFFFu;
        StreamEncodeOptions constant;
        constant.mode = stream_mode::constant;
        for (ByteVec& st : c.streams) {
            const std::uint8_t id = st[0];
            std::vector<std::int32_t> one(attr::kChannels[id], 0);
            st = test::stream_of(id, attr::kChannels[id], one, constant);
            test::put_u32(st, test::stream_field::element_count, 0xFFFFFFFFu);
        }
        const ByteVec bytes = test::build(s.spec).bytes;
        reset_largest_allocation();
        for (const Error& e : {streaming_error(bytes), indexed_error(bytes)}) {
            INFO(e.describe());
            CHECK(e.refusal == "limit-exceeded");
            CHECK(e.kind == ErrorKind::limit);
        }
        if (FOURDGS_TEST_COUNT_ALLOCATIONS) CHECK(largest_allocation() < (std::size_t{64} << 20));
        // With a small configured limit, a modest count is refused the same way.
        ReaderOptions small;
        small.decode.limits.max_gaussians_per_chunk = 39;
        require_both_refuse(test::build(small_scene(0).spec).bytes, "limit-exceeded", small);
    }
}

TEST_CASE("a damaged summary loses no intact content: a summary_crc mismatch is read on both "
          "paths, unverified, the indexed one by its scan (§4.5, §5.2, issue 15 item 4)",
          "[readers]") {
    BuiltScene s = small_scene();
    const BuiltFile good = test::build(s.spec);
    const GaussianBlock expected = streamed_block(good.bytes);
    {
        auto st = test::stream_read(good.bytes);
        REQUIRE(st.ok());
        CHECK(st->info.summary_crc_verified);
        auto ix = test::indexed_read(good.bytes);
        REQUIRE_FALSE(ix.error);
        CHECK(ix.info.summary_crc_verified);
    }
    // Both paths decode every chunk, report the CRC unverified, and the indexed one says it
    // scanned, and why.
    auto both_keep_the_content = [&](const ByteVec& bytes) {
        auto st = test::stream_read(bytes);
        REQUIRE(st.ok());
        CHECK_FALSE(st->truncation);
        CHECK_FALSE(st->info.summary_crc_verified);
        test::require_identical(st->gaussians, expected);
        MemorySource src(bytes);
        auto ix = IndexedReader::open(src);
        REQUIRE(ix.ok());
        CHECK(ix->read_by_scan());
        CHECK_FALSE(ix->index_built_by_scan());  // the file's own index, checked by the scan
        REQUIRE(ix->scan_cause());
        CHECK(ix->scan_cause()->refusal == "summary-crc-mismatch");
        CHECK_FALSE(ix->scene().summary_crc_verified);
        CHECK(ix->scene().index == st->info.index);
        test::require_identical(indexed_block(bytes), expected);
        // The validator reports what the readers read past.
        MemorySource vsrc(bytes);
        auto report = validate(vsrc);
        REQUIRE(report.ok());
        CHECK(std::any_of(report->findings.begin(), report->findings.end(), [](const Finding& f) {
            return f.rule == "summary-crc-mismatch" && f.severity == Severity::error;
        }));
    };
    SECTION("a wrong CRC") {
        std::uint32_t crc = 0;
        std::memcpy(&crc, good.bytes.data() + good.footer_offset + kRecordHeaderSize + 16, 4);
        s.spec.crc_override = crc ^ 0x00010000u;
        both_keep_the_content(test::build(s.spec).bytes);
    }
    SECTION("a flipped byte inside the summary") {
        BuiltFile f = good;
        const test::BuiltRecord& stats = nth_record(f, op::statistics);
        f.bytes[stats.offset + kRecordHeaderSize + 1] ^= 0x01;  // Statistics gaussian_count
        both_keep_the_content(f.bytes);
    }
    SECTION("a zero CRC declares none and is not checked") {
        s.spec.crc = false;
        auto st = test::stream_read(test::build(s.spec).bytes);
        REQUIRE(st.ok());
        CHECK_FALSE(st->info.summary_crc_verified);
    }
}

TEST_CASE("bytes after the trailing magic: both paths keep the content and report the count, the "
          "validator reports bytes-after-magic (§4)",
          "[readers][threads]") {
    const BuiltFile good = test::build(small_scene().spec);
    ByteVec bytes = good.bytes;
    for (int i = 0; i < 100; ++i) bytes.push_back(static_cast<std::uint8_t>(i * 37));
    const GaussianBlock expected = streamed_block(good.bytes);
    auto st = test::stream_read(bytes);
    REQUIRE(st.ok());
    CHECK_FALSE(st->truncation);
    CHECK(st->info.trailing_bytes == 100);
    test::require_identical(st->gaussians, expected);
    // A pipe counts them by reading to the end.
    test::through_pipe(bytes, [](ByteSource& pipe) {
        auto piped = read_streaming(pipe);
        REQUIRE(piped.ok());
        CHECK(piped->info.trailing_bytes == 100);
        return 0;
    });
    MemorySource src(bytes);
    auto ix = IndexedReader::open(src);
    REQUIRE(ix.ok());
    CHECK(ix->read_by_scan());
    CHECK(ix->scene().trailing_bytes == 100);
    CHECK(ix->scene().summary_crc_verified);
    test::require_identical(indexed_block(bytes), expected);
    MemorySource vsrc(bytes);
    auto report = validate(vsrc);
    REQUIRE(report.ok());
    REQUIRE(report->errors() == 1);
    CHECK(report->findings.front().rule == "bytes-after-magic");
    CHECK(report->findings.front().offset == good.bytes.size());
}

TEST_CASE("footer-not-last: a repeated Footer gets one answer on both paths and from the "
          "validator (§4)",
          "[readers]") {
    const BuiltFile good = test::build(small_scene().spec);
    const ByteVec footer(good.bytes.begin() + static_cast<std::ptrdiff_t>(good.footer_offset),
                         good.bytes.end() - static_cast<std::ptrdiff_t>(kMagicSize));
    ByteVec bytes = good.bytes;
    bytes.insert(bytes.end() - static_cast<std::ptrdiff_t>(kMagicSize), footer.begin(),
                 footer.end());
    require_both_refuse(bytes, "footer-not-last");
    MemorySource vsrc(bytes);
    auto report = validate(vsrc);
    REQUIRE(report.ok());
    CHECK(std::any_of(report->findings.begin(), report->findings.end(),
                      [](const Finding& f) { return f.rule == "footer-not-last"; }));
}

TEST_CASE("missing-footer: a file whose Footer is gone is named so by both readers and the "
          "validator (§5.2)",
          "[readers]") {
    const BuiltFile good = test::build(small_scene().spec);
    ByteVec bytes(good.bytes.begin(),
                  good.bytes.begin() + static_cast<std::ptrdiff_t>(good.footer_offset));
    bytes.insert(bytes.end(), kMagic.begin(), kMagic.end());
    auto st = test::stream_read(bytes);
    REQUIRE(st.ok());
    REQUIRE(st->truncation);  // the chunks before it are kept, as after any cut
    CHECK(st->truncation->refusal == "missing-footer");
    CHECK(indexed_error(bytes).refusal == "missing-footer");
    MemorySource vsrc(bytes);
    auto report = validate(vsrc);
    REQUIRE(report.ok());
    CHECK(std::any_of(report->findings.begin(), report->findings.end(),
                      [](const Finding& f) { return f.rule == "missing-footer"; }));
}

TEST_CASE("M033: a chunk named by two index entries is index-record-mismatch on both paths and "
          "in the validator (§5.8: one entry per chunk)",
          "[readers]") {
    const BuiltFile good = test::build(small_scene().spec);
    const test::BuiltRecord& entry = nth_record(good, op::chunk_index);
    ByteVec bytes = good.bytes;
    bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(entry.end()),
                 good.bytes.begin() + static_cast<std::ptrdiff_t>(entry.offset),
                 good.bytes.begin() + static_cast<std::ptrdiff_t>(entry.end()));
    require_both_refuse(bytes, "index-record-mismatch");
    CHECK(streaming_error(bytes).field == "Chunk Index.chunk_offset");
    MemorySource vsrc(bytes);
    auto report = validate(vsrc);
    REQUIRE(report.ok());
    CHECK(std::any_of(report->findings.begin(), report->findings.end(), [](const Finding& f) {
        return f.rule == "index-record-mismatch" && f.field == "Chunk Index.chunk_offset";
    }));
}

TEST_CASE("M033: a NaN chunk time copied into its index entry agrees with itself: index and record "
          "are compared by their bits (§5.8), and the validator names the non-finite time",
          "[readers]") {
    BuiltScene s = small_scene();
    const BuiltFile good = test::build(s.spec);
    ByteVec bytes = good.bytes;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const test::BuiltRecord& chunk = nth_record(good, op::chunk);
    const test::BuiltRecord& entry = nth_record(good, op::chunk_index);
    std::memcpy(&bytes[chunk.offset + kRecordHeaderSize], &nan, 8);  // Chunk t0
    std::memcpy(&bytes[entry.offset + kRecordHeaderSize], &nan, 8);  // Chunk Index t0
    auto st = test::stream_read(bytes);
    REQUIRE(st.ok());
    auto ix = test::indexed_read(bytes);
    REQUIRE_FALSE(ix.error);
    test::require_identical(st->gaussians, ix.block);
    MemorySource vsrc(bytes);
    auto report = validate(vsrc);
    REQUIRE(report.ok());
    CHECK(std::any_of(report->findings.begin(), report->findings.end(), [](const Finding& f) {
        return f.rule == "non-finite-value" && f.field == "Chunk.t0";
    }));
    CHECK_FALSE(std::any_of(report->findings.begin(), report->findings.end(),
                            [](const Finding& f) { return f.rule == "index-record-mismatch"; }));
}

TEST_CASE("M033: an index entry that disagrees with the Chunk it frames is refused as "
          "index-record-mismatch, naming the field (§5.8)",
          "[readers]") {
    struct Case {
        const char* field;
        std::function<void(std::vector<ChunkIndex>&)> edit;
    };
    const Case cases[] = {
        {"gaussian_count", [](std::vector<ChunkIndex>& ix) { ix[1].gaussian_count += 1; }},
        {"t0/t1", [](std::vector<ChunkIndex>& ix) { ix[2].t1 += 0.5; }},
        {"chunk_length", [](std::vector<ChunkIndex>& ix) { ix[0].chunk_length -= 1; }},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.field) {
            BuiltScene s = small_scene(1);
            s.spec.edit_index = c.edit;
            const BuiltFile f = test::build(s.spec);  // the CRC covers the lie: it is consistent
            for (const Error& e : {streaming_error(f.bytes), indexed_error(f.bytes)}) {
                INFO(e.describe());
                CHECK(e.refusal == "index-record-mismatch");
                CHECK_THAT(e.message, Catch::Contains(c.field));
            }
        }
    }
    SECTION("chunk_offset naming a byte that holds no Chunk") {
        BuiltScene s = small_scene(1);
        s.spec.edit_index = [](std::vector<ChunkIndex>& ix) {
            ix[1].chunk_offset = ix[0].bands[0].offset;
            ix[1].chunk_length = ix[0].bands[0].length;
        };
        const BuiltFile f = test::build(s.spec);
        for (const Error& e : {streaming_error(f.bytes), indexed_error(f.bytes)}) {
            INFO(e.describe());
            CHECK(e.refusal == "index-record-mismatch");
            CHECK_THAT(e.message, Catch::Contains("chunk_offset"));
        }
    }
    SECTION("a band range that frames another band") {
        BuiltScene s = small_scene(2);
        s.spec.edit_index = [](std::vector<ChunkIndex>& ix) {
            std::swap(ix[1].bands[0].offset, ix[1].bands[1].offset);
            std::swap(ix[1].bands[0].length, ix[1].bands[1].length);
        };
        const BuiltFile f = test::build(s.spec);
        for (const Error& e : {streaming_error(f.bytes), indexed_error(f.bytes)}) {
            INFO(e.describe());
            CHECK(e.refusal == "index-record-mismatch");
            CHECK_THAT(e.message, Catch::Contains("bands"));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Forward compatibility.

TEST_CASE("M008: private (0x80, 0xFF) and reserved (0x0E, 0x26) records are skipped by length and "
          "recorded in SceneInfo::skipped (§4.2, §4.3)",
          "[readers]") {
    BuiltScene s = small_scene(1);
    const GaussianBlock want = streamed_block(test::build(s.spec).bytes);
    s.spec.front.push_back(test::framed(0x80, {1, 2, 3}));
    s.spec.front.push_back(test::framed(0x0E, ByteVec(40, 0xEE)));
    s.spec.front.push_back(test::framed(0x26, {}));
    s.spec.front.push_back(test::framed(0xFF, ByteVec(1000, 0x01)));
    s.spec.front.push_back(test::framed(0x7F, {9}));
    const BuiltFile f = test::build(s.spec);
    auto st = test::stream_read(f.bytes);
    if (!st.ok()) FAIL(st.error().describe());
    auto ix = test::indexed_read(f.bytes);
    if (ix.error) FAIL(ix.error->describe());
    test::require_identical(st->gaussians, want);
    test::require_identical(ix.block, want);
    for (const SceneInfo* info : {&st->info, &ix.info}) {
        REQUIRE(info->skipped.size() == 5);
        const std::uint8_t opcodes[] = {0x80, 0x0E, 0x26, 0xFF, 0x7F};
        for (std::size_t i = 0; i < 5; ++i) {
            const test::BuiltRecord& r = nth_record(f, opcodes[i]);
            CHECK(info->skipped[i].opcode == opcodes[i]);
            CHECK(info->skipped[i].offset == r.offset);
            CHECK(info->skipped[i].length == r.length);
        }
    }
}

TEST_CASE("M009 M010: records with bytes appended after their known fields still parse, by "
          "content_length (§4.2)",
          "[readers]") {
    BuiltScene s = small_scene(2);
    const GaussianBlock want = streamed_block(test::build(s.spec).bytes);
    const ByteVec seven = {0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7};
    s.spec.write_header = false;
    s.spec.before_header = test::with_trailing(test::record_bytes(s.spec.header), seven);
    const WindowTable windows = *s.spec.windows;
    s.spec.windows.reset();
    s.spec.front.push_back(test::with_trailing(test::record_bytes(windows), seven));
    s.spec.front.push_back(test::with_trailing(test::record_bytes(Metadata{"m", {{"k", "v"}}}), seven));
    for (auto& c : s.spec.chunks) c.trailing = seven;
    const BuiltFile f = test::build(s.spec);
    auto st = test::stream_read(f.bytes);
    if (!st.ok()) FAIL(st.error().describe());
    CHECK_FALSE(st->truncation.has_value());
    test::require_identical(st->gaussians, want);
    test::require_identical(indexed_block(f.bytes), want);
    CHECK(st->info.header.library == s.spec.header.library);
    REQUIRE(st->info.metadata.size() == 1);
    CHECK(st->info.metadata[0].entries == StringMap{{"k", "v"}});
}

TEST_CASE("unknown attribute ids (15, 40, 100) inside a chunk are skipped by payload_length, "
          "garbage codec bytes and all (§5.6, registry)",
          "[readers]") {
    BuiltScene s = small_scene(1);
    const GaussianBlock want = streamed_block(test::build(s.spec).bytes);
    auto junk = [](std::uint8_t id, std::uint8_t codec_byte, std::size_t n) {
        ByteVec st = {id, 3, 7, codec_byte, 0};
        st.resize(kStreamHeaderSize, 0);
        test::put_u32(st, test::stream_field::element_count, 0xFFFFFFFFu);
        test::put_u64(st, test::stream_field::payload_length, n);
        for (std::size_t i = 0; i < n; ++i) st.push_back(static_cast<std::uint8_t>(i * 37 + 5));
        return st;
    };
    for (auto& c : s.spec.chunks) {
        c.streams.insert(c.streams.begin(), junk(15, 0xEE, 11));
        c.streams.insert(c.streams.begin() + 4, junk(40, 0x02, 0));
        c.streams.push_back(junk(100, 0xFF, 300));
        c.streams.push_back(junk(127, 0x80, 1));
    }
    const BuiltFile f = test::build(s.spec);
    test::require_identical(streamed_block(f.bytes), want);
    test::require_identical(indexed_block(f.bytes), want);
    // Also inside a chunk-level compressed block.
    for (auto& c : s.spec.chunks) c.compression = "zstd";
    test::require_identical(streamed_block(test::build(s.spec).bytes), want);
}

// ---------------------------------------------------------------------------------------------
// The indexed reader.

namespace {

// A ByteSource that records every range read from it.
class CountingSource final : public ByteSource {
public:
    explicit CountingSource(const ByteVec& bytes) : inner_(bytes) {}
    std::optional<std::uint64_t> size() const override { return inner_.size(); }
    bool random_access() const override { return true; }
    Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override {
        {
            std::lock_guard<std::mutex> lock(mu_);
            reads_.push_back({offset, out.size()});
        }
        return inner_.read_at(offset, out);
    }
    struct Range {
        std::uint64_t offset, length;
    };
    std::vector<Range> reads() const {
        std::lock_guard<std::mutex> lock(mu_);
        return reads_;
    }
    void clear() {
        std::lock_guard<std::mutex> lock(mu_);
        reads_.clear();
    }

private:
    MemorySource inner_;
    mutable std::mutex mu_;
    std::vector<Range> reads_;
};

bool overlaps(const CountingSource::Range& r, const test::BuiltRecord& rec) {
    return r.length > 0 && r.offset < rec.end() && rec.offset < r.offset + r.length;
}

}  // namespace

TEST_CASE("§8: chunks_for(t) is every index entry whose interval t0..t1 contains t", "[readers]") {
    // Overlapping chunks: [0, 2), [1, 3), [2, 4), [3.5, 4).
    BuiltScene s = test::default_scene(4, 10, 1, 21);
    const double t0[] = {0, 1, 2, 3.5}, t1[] = {2, 3, 4, 4};
    for (int k = 0; k < 4; ++k) {
        s.spec.chunks[k].t0 = t0[k];
        s.spec.chunks[k].t1 = t1[k];
    }
    const BuiltFile f = test::build(s.spec);
    MemorySource src(f.bytes);
    auto reader = IndexedReader::open(src);
    REQUIRE(reader.ok());
    const auto& index = reader->scene().index;
    REQUIRE(index.size() == 4);
    for (double t : {-0.5, 0.0, 0.5, 1.0, 1.999, 2.0, 3.0, 3.5, 3.99, 4.0, 7.0}) {
        std::vector<std::size_t> want;
        for (std::size_t i = 0; i < index.size(); ++i)
            if (index[i].t0 <= t && t < index[i].t1) want.push_back(i);
        INFO("t = " << t);
        CHECK(reader->chunks_for(t) == want);
    }
    CHECK(reader->chunks_for(1.5) == std::vector<std::size_t>{0, 1});
    CHECK(reader->chunks_for(3.75) == std::vector<std::size_t>{2, 3});
    CHECK(reader->chunks_for(4.0).empty());
    // read_instant decodes exactly those chunks.
    std::vector<DecodeWorkspace> pool;
    GaussianBlock at;
    REQUIRE(reader->read_instant(3.75, at, pool).ok());
    CHECK(at.count == 20);
    GaussianBlock none;
    REQUIRE(reader->read_instant(9.0, none, pool).ok());
    CHECK(none.count == 0);
}

TEST_CASE("a reader capped at SH degree d never fetches a band above d, and fetch_cost is what it "
          "fetches (§5.7, §8)",
          "[readers]") {
    BuiltScene s = test::default_scene(3, 25, 3, 31);
    const BuiltFile f = test::build(s.spec);
    const GaussianBlock full = streamed_block(f.bytes);
    for (int d = 0; d <= 3; ++d) {
        DYNAMIC_SECTION("max_sh_degree " << d) {
            CountingSource src(f.bytes);
            ReaderOptions options;
            options.decode.max_sh_degree = d;
            auto reader = IndexedReader::open(src, options);
            REQUIRE(reader.ok());
            // open() reads the tail, the summary and the front matter: never a band.
            for (const auto& r : src.reads())
                for (const test::BuiltRecord& rec : f.records)
                    if (rec.opcode == op::sh_band) CHECK_FALSE(overlaps(r, rec));
            src.clear();

            for (std::size_t i = 0; i < reader->scene().index.size(); ++i) {
                const ChunkIndex& e = reader->scene().index[i];
                std::uint64_t cost = e.chunk_length;
                for (const auto& b : e.bands)
                    if (b.band <= d) cost += b.length;
                CHECK(reader->fetch_cost(i) == cost);
                DecodeWorkspace ws;
                const std::uint64_t before = reader->bytes_fetched();
                REQUIRE(reader->decode_chunk(i, ws).ok());
                CHECK(reader->bytes_fetched() - before == cost);
                CHECK(ws.block.sh_degree == d);
            }
            const auto reads = src.reads();
            for (const test::BuiltRecord& rec : f.records) {
                if (rec.opcode != op::sh_band) continue;
                bool touched = false;
                for (const auto& r : reads) touched |= overlaps(r, rec);
                INFO("band " << rec.band << " of chunk " << rec.chunk);
                CHECK(touched == (rec.band <= d));
            }

            // The bands it did fetch are the full decode's first d bands, whole.
            GaussianBlock capped;
            std::vector<DecodeWorkspace> pool;
            REQUIRE(reader->read_all(capped, pool).ok());
            REQUIRE(capped.count == full.count);
            CHECK(capped.sh_degree == d);
            const int per_full = sh_coeffs_per_component(3), per = sh_coeffs_per_component(d);
            bool same = true;
            for (std::size_t i = 0; i < full.count; ++i)
                for (int c = 0; c < 3; ++c)
                    for (int k = 0; k < per; ++k)
                        same &= capped.sh[(i * 3 + c) * per + k] == full.sh[(i * 3 + c) * per_full + k];
            CHECK(same);
            CHECK(capped.position == full.position);
            // The streaming reader honours the same cap.
            test::require_identical(streamed_block(f.bytes, options), capped);
        }
    }
}

TEST_CASE("several threads decode different chunks of one reader at once: threads=4 equals "
          "threads=1",
          "[readers][threads]") {
    BuiltScene s = test::default_scene(9, 70, 2, 41, true);
    const BuiltFile f = test::build(s.spec);
    MemorySource src(f.bytes);
    auto reader = IndexedReader::open(src);
    REQUIRE(reader.ok());
    std::vector<DecodeWorkspace> pool1, pool4;
    GaussianBlock one, four;
    REQUIRE(reader->read_all(one, pool1, 1).ok());
    for (int round = 0; round < 3; ++round) {  // pools are reused across calls
        REQUIRE(reader->read_all(four, pool4, 4).ok());
        test::require_identical(one, four);
    }
    test::require_identical(one, streamed_block(f.bytes));

    // Direct concurrent decode_chunk calls, one workspace per thread.
    std::vector<DecodeWorkspace> ws(9);
    std::vector<Status> status(9);
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k < 9; ++k)
        threads.emplace_back([&, k] { status[k] = reader->decode_chunk(8 - k, ws[k]); });
    for (auto& t : threads) t.join();
    for (std::size_t k = 0; k < 9; ++k) {
        REQUIRE(status[k].ok());
        DecodeWorkspace alone;
        REQUIRE(reader->decode_chunk(8 - k, alone).ok());
        test::require_identical(ws[k].block, alone.block);
    }
}

TEST_CASE("M016: a file whose summary_start is 0 is read through the scan path and builds the same "
          "index (§5.2)",
          "[readers][threads]") {
    BuiltScene s = test::default_scene(4, 30, 2, 51);
    const BuiltFile indexed = test::build(s.spec);
    s.spec.index = false;
    const BuiltFile f = test::build(s.spec);
    MemorySource src(f.bytes);
    auto reader = IndexedReader::open(src);
    if (!reader.ok()) FAIL(reader.error().describe());
    CHECK(reader->index_built_by_scan());
    const auto& index = reader->scene().index;
    REQUIRE(index.size() == indexed.index.size());
    for (std::size_t i = 0; i < index.size(); ++i) {
        CHECK(index[i].t0 == indexed.index[i].t0);
        CHECK(index[i].t1 == indexed.index[i].t1);
        CHECK(index[i].chunk_offset == indexed.index[i].chunk_offset);
        CHECK(index[i].chunk_length == indexed.index[i].chunk_length);
        CHECK(index[i].gaussian_count == indexed.index[i].gaussian_count);
        CHECK(index[i].bands == indexed.index[i].bands);
    }
    GaussianBlock b;
    std::vector<DecodeWorkspace> pool;
    REQUIRE(reader->read_all(b, pool, 2).ok());
    test::require_identical(b, streamed_block(f.bytes));
    test::require_identical(b, streamed_block(indexed.bytes));
    CHECK_FALSE(reader->scene().statistics.has_value());
    // The streaming reader sees no summary at all.
    auto st = test::stream_read(f.bytes);
    REQUIRE(st.ok());
    CHECK(st->info.index.empty());
    CHECK_FALSE(st->info.summary_crc_verified);
    // Statistics without an index reach both readers alike.
    Statistics stats{120, 4, 4.0, s.spec.header.aabb};
    s.spec.after_chunks.push_back(test::record_bytes(stats));
    const BuiltFile with_stats = test::build(s.spec);
    MemorySource src2(with_stats.bytes);
    auto reader2 = IndexedReader::open(src2);
    REQUIRE(reader2.ok());
    CHECK(reader2->index_built_by_scan());
    REQUIRE(reader2->scene().statistics.has_value());
    CHECK(*reader2->scene().statistics == stats);
    auto st2 = test::stream_read(with_stats.bytes);
    REQUIRE(st2.ok());
    REQUIRE(st2->info.statistics.has_value());
    CHECK(*st2->info.statistics == stats);
    // An indexed reader refuses a pipe: it needs to seek.
    auto piped = test::through_pipe(f.bytes, [](ByteSource& p) { return IndexedReader::open(p).ok(); });
    CHECK_FALSE(piped);
}

TEST_CASE("front matter reaches both readers alike: metadata, camera, attachments, audio payload "
          "ranges (§5.10-§5.13, §5.16, §5.17)",
          "[readers]") {
    BuiltScene s = small_scene(0);
    ByteVec big(100000);
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 13);
    Attachment att{"thumb.png", "image/png", big, 0};
    s.spec.front.push_back(test::record_bytes(att));
    AudioSource src_desc;
    src_desc.source_id = 4;
    src_desc.name = "bed";
    src_desc.codec = "wav";
    src_desc.channel_layout = "stereo";
    src_desc.data_length = big.size();
    src_desc.duration_sec = 2;
    src_desc.interpolation = "linear";
    s.spec.front.push_back(test::record_bytes(src_desc));
    s.spec.front.push_back(test::record_bytes(AudioData{4, big, 0}));
    s.spec.front.push_back(test::record_bytes(Metadata{"app", {{"application", "tests"}}}));
    Camera cam;
    cam.fov_y_deg = 40;
    cam.keyframes = {{0.0, {0, 0, 5}, {0, 0, 0}}, {1.0, {1, 0, 5}, {0, 0, 0}}};
    cam.interpolation = "spline";
    s.spec.front.push_back(test::record_bytes(cam));
    s.spec.header.flags |= kHeaderFlagAudio;
    const BuiltFile f = test::build(s.spec);
    auto st = test::stream_read(f.bytes);
    if (!st.ok()) FAIL(st.error().describe());
    MemorySource mem(f.bytes);
    auto reader = IndexedReader::open(mem);
    if (!reader.ok()) FAIL(reader.error().describe());
    const SceneInfo* infos[] = {&st->info, &reader->scene()};
    for (const SceneInfo* info : infos) {
        REQUIRE(info->attachments.size() == 1);
        CHECK(info->attachments[0].name == "thumb.png");
        CHECK(info->attachments[0].payload.length == big.size());
        REQUIRE(info->audio.size() == 1);
        CHECK(info->audio[0].descriptor.source_id == 4);
        CHECK(info->audio[0].payload.length == big.size());
        REQUIRE(info->metadata.size() == 1);
        REQUIRE(info->camera.has_value());
        CHECK(*info->camera == cam);
    }
    CHECK(st->info.attachments[0].payload.offset == reader->scene().attachments[0].payload.offset);
    CHECK(st->info.audio[0].payload.offset == reader->scene().audio[0].payload.offset);
    auto payload = reader->read_payload(reader->scene().audio[0].payload);
    REQUIRE(payload.ok());
    CHECK(*payload == big);
    auto a = reader->read_payload(reader->scene().attachments[0].payload);
    REQUIRE(a.ok());
    CHECK(*a == big);
    test::require_identical(st->gaussians, indexed_block(f.bytes));
}

// ---------------------------------------------------------------------------------------------
// Reconstruction.

TEST_CASE("M003: the window test is applied — a gaussian outside its window is not visible even "
          "with marginal 1 (§3)",
          "[readers]") {
    GaussianBlock b;
    b.count = 2;
    b.position = {0, 0, 0, 1, 1, 1};
    b.scale = {1, 1, 1, 1, 1, 1};
    b.rotation = {0, 0, 0, 1, 0, 0, 0, 1};
    b.color = {1, 1, 1, 0.5f, 1, 1, 1, 1};
    b.motion = {0, 0, 0, 0, 0, 0};
    // 0: never fades, window [1, 2). 1: fades, centred at 0.5 with a huge sigma (marginal ~1
    // everywhere), window [1, 2).
    b.mu_t = {0.5f, 0.5f};
    b.sigma_t = {std::numeric_limits<float>::infinity(), 1e6f};
    b.win_lo = {1, 1};
    b.win_hi = {2, 2};
    b.flags = {kFlagNeverFades, 0};
    b.window_index = {0, 0};
    b.object_id = {0, 0};
    double m = 0;
    CHECK_FALSE(is_visible(1, 2, 0.5f, std::numeric_limits<float>::infinity(), 0.5, 0.05, &m));
    CHECK(visible_count(b, 0.5, 0.05) == 0);   // marginal is 1 (or ~1) but t < win_lo
    CHECK(visible_count(b, 0.999, 0.05) == 0);
    CHECK(visible_count(b, 1.0, 0.05) == 2);   // win_lo is inside
    CHECK(visible_count(b, 1.5, 0.05) == 2);
    CHECK(visible_count(b, 2.0, 0.05) == 0);   // win_hi is outside
    CHECK(visible_count(b, 1e9, 0.05) == 0);
    Frame frame;
    evaluate(b, 1.5, 0.05, frame);
    REQUIRE(frame.count == 2);
    CHECK(frame.color[3] == 0.5f);  // opacity = color.a × marginal 1
    evaluate(b, 0.5, 0.05, frame);
    CHECK(frame.count == 0);

    // The same through decoded files: a never-fading gaussian in window [k, k+1) is invisible
    // just before k and at k+1.
    BuiltScene s = test::default_scene(2, 50, 0, 61);
    const GaussianBlock d = streamed_block(test::build(s.spec).bytes);
    for (std::size_t i = 0; i < d.count; ++i) {
        if (!std::isinf(d.sigma_t[i])) continue;
        GaussianBlock one;
        one.count = 1;
        one.win_lo = {d.win_lo[i]};
        one.win_hi = {d.win_hi[i]};
        one.mu_t = {d.mu_t[i]};
        one.sigma_t = {d.sigma_t[i]};
        CHECK(visible_count(one, d.win_lo[i] - 0.01, 0.05) == 0);
        CHECK(visible_count(one, d.win_lo[i] + 0.5, 0.05) == 1);
        CHECK(visible_count(one, d.win_hi[i], 0.05) == 0);
    }
}

TEST_CASE("M005/M013: a content record inside the summary is refused by both readers as "
          "summary-not-contiguous (§4.5)",
          "[readers]") {
    BuiltScene s = small_scene(1);
    const BuiltFile f = test::build(s.spec);
    const test::BuiltRecord& stats = nth_record(f, op::statistics);

    // Insert a Metadata record between the Chunk Index run and the Statistics record, then
    // make the Footer's CRC cover the new bytes, so only the contiguity rule is broken.
    ByteWriter meta;
    write(meta, Metadata{"inside", {{"k", "v"}}});
    ByteVec bytes(f.bytes.begin(), f.bytes.begin() + static_cast<std::ptrdiff_t>(stats.offset));
    bytes.insert(bytes.end(), meta.buffer().begin(), meta.buffer().end());
    bytes.insert(bytes.end(), f.bytes.begin() + static_cast<std::ptrdiff_t>(stats.offset),
                 f.bytes.end());
    const std::size_t footer_at = bytes.size() - kTailSize;
    std::uint64_t summary_start;
    std::memcpy(&summary_start, &bytes[footer_at + kRecordHeaderSize], 8);
    const std::uint32_t crc = crc32(Bytes(bytes).subspan(summary_start, footer_at - summary_start));
    std::memcpy(&bytes[footer_at + kRecordHeaderSize + 16], &crc, 4);
    // The Summary Offset record (after Statistics) still names the index group exactly.
    require_both_refuse(bytes, "summary-not-contiguous");

    SECTION("a private record inside the summary is skipped by both readers (§4.2)") {
        ByteWriter priv;
        write_record(priv, 0x90, std::vector<std::uint8_t>{1, 2, 3});
        ByteVec ok(f.bytes.begin(), f.bytes.begin() + static_cast<std::ptrdiff_t>(stats.offset));
        ok.insert(ok.end(), priv.buffer().begin(), priv.buffer().end());
        ok.insert(ok.end(), f.bytes.begin() + static_cast<std::ptrdiff_t>(stats.offset),
                  f.bytes.end());
        const std::size_t at = ok.size() - kTailSize;
        const std::uint32_t c = crc32(Bytes(ok).subspan(summary_start, at - summary_start));
        std::memcpy(&ok[at + kRecordHeaderSize + 16], &c, 4);
        test::require_identical(streamed_block(ok), indexed_block(ok));
    }
}

TEST_CASE("orphan-sh-band (§5.7): an SH band record that follows no chunk is refused by the "
          "streaming path, the indexed path with an index and its scan without one, alike",
          "[readers]") {
    BuiltScene s = test::default_scene(2, 20, 1, 61);
    const ShBandRecord stray{1, s.spec.chunks[0].bands[0].stream, 0};
    const ByteVec band = test::record_bytes(stray);
    const ByteVec meta = test::record_bytes(Metadata{"m", {{"title", "t"}}});
    for (bool index : {true, false})
        for (bool after_chunks : {false, true}) {
            INFO((index ? "with an index" : "without an index (scan path)"));
            INFO((after_chunks ? "after a content record that follows the last chunk's bands"
                               : "before the first chunk"));
            BuiltScene t = s;
            t.spec.index = index;
            if (after_chunks) t.spec.after_chunks = {meta, band};
            else t.spec.front = {band};
            const ByteVec bytes = test::build(t.spec).bytes;
            CHECK(test::streaming_refusal(bytes) == "orphan-sh-band");
            CHECK(test::indexed_refusal(bytes) == "orphan-sh-band");
        }
}

TEST_CASE("differential, multi-fault: a chunk whose next record runs past the end is decoded "
          "before the cut is reported, on both paths (M100)") {
    test::BuiltScene s = test::default_scene(2, 16, 0, 3);
    // The last chunk's position stream names a mode that does not exist...
    test::stream_with_id(s.spec.chunks.back(), attr::position)[test::stream_field::mode] = 9;
    // ...and the record after it claims more bytes than the file holds.
    test::ByteVec bomb = test::framed(0x9C, {1, 2, 3});
    test::put_u64(bomb, 1, std::uint64_t{1} << 40);
    s.spec.after_chunks.push_back(bomb);
    const test::ByteVec bytes = test::build(s.spec).bytes;
    CHECK(test::streaming_refusal(bytes) == "unknown-stream-mode");
    CHECK(test::indexed_refusal(bytes) == "unknown-stream-mode");
}

TEST_CASE("differential, summary start: a summary_start that names a private record, not the "
          "first summary record, is summary-start-mismatch on both paths (§4.5)") {
    test::BuiltScene s = test::default_scene(2, 16, 0, 3);
    s.spec.crc = false;
    s.spec.after_chunks.push_back(test::framed(0xBE, {1, 2, 3}));
    const test::BuiltFile plain = test::build(s.spec);
    std::uint64_t private_at = 0;
    for (const test::BuiltRecord& r : plain.records)
        if (r.opcode == 0xBE) private_at = r.offset;
    REQUIRE(private_at != 0);
    s.spec.summary_start_override = private_at;
    const test::ByteVec bytes = test::build(s.spec).bytes;
    CHECK(test::streaming_refusal(bytes) == "summary-start-mismatch");
    CHECK(test::indexed_refusal(bytes) == "summary-start-mismatch");
}

TEST_CASE("read_range overwrites a reused buffer in place: each range read holds exactly its "
          "bytes, whatever the buffer held before, and append_range keeps what it holds",
          "[readers]") {
    std::vector<std::uint8_t> file(300);
    for (std::size_t i = 0; i < file.size(); ++i) file[i] = static_cast<std::uint8_t>(i * 7 + 1);
    MemorySource src(file);
    auto range = [&](std::size_t at, std::size_t n) {
        return std::vector<std::uint8_t>(file.begin() + static_cast<std::ptrdiff_t>(at),
                                         file.begin() + static_cast<std::ptrdiff_t>(at + n));
    };
    std::vector<std::uint8_t> buf(500, 0xEE);  // longer than any range, stale bytes throughout
    REQUIRE(read_range(src, 10, 200, 1000, buf).ok());
    CHECK(buf == range(10, 200));
    REQUIRE(read_range(src, 250, 50, 1000, buf).ok());  // shorter: nothing of the last one left
    CHECK(buf == range(250, 50));
    REQUIRE(read_range(src, 0, 120, 1000, buf).ok());  // longer again: grown, then overwritten
    CHECK(buf == range(0, 120));
    REQUIRE(append_range(src, 120, 30, 1000, buf).ok());
    CHECK(buf == range(0, 150));
    CHECK(read_range(src, 290, 20, 1000, buf).error().refusal == refusal::kIndexOutOfRange);
    CHECK(read_range(src, 0, 200, 100, buf).error().refusal == refusal::kLimitExceeded);
}
