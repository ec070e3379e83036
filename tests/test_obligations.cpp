// Obligations of the specification (shared/obligations.md) that no other test file names: each
// TEST_CASE carries its id. Frozen-record layouts pinned by an emitter written here from the spec
// alone (M011, M108); the bounds map surfaced under its own names (M017); the bound grammar
// against what host number parsers accept (M021); rig times on the scene clock (M058); distinct
// Object Table ids (M067); gaussian and stream order inside a chunk (M098); the rotation bound
// after reconstruction (M099); SH clamping (M101); and SH depths that fall with band (M102).
//
// M001 (RFC 2119 key words) is informative and has no test.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "fourdgs/io.hpp"
#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/portable.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/validate.hpp"
#include "fourdgs/wire.hpp"
#include "fourdgs/writer.hpp"
#include "support/file_builder.hpp"
#include "support/readers.hpp"

using namespace fourdgs;
using test::ByteVec;

namespace {

// ---- an emitter written from the spec's field lists, independent of ByteWriter and records.hpp

struct Le {
    ByteVec b;
    Le& le(std::uint64_t v, int n) {
        for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
        return *this;
    }
    Le& u8(std::uint8_t v) { return le(v, 1); }
    Le& u16(std::uint16_t v) { return le(v, 2); }
    Le& u32(std::uint32_t v) { return le(v, 4); }
    Le& u64(std::uint64_t v) { return le(v, 8); }
    Le& f64(double v) { return u64(fourdgs::bit_cast<std::uint64_t>(v)); }
    Le& raw(std::span<const std::uint8_t> s) {
        b.insert(b.end(), s.begin(), s.end());
        return *this;
    }
    Le& str(std::string_view s) {  // §2 string: u32 length, UTF-8 bytes
        u32(static_cast<std::uint32_t>(s.size()));
        for (char c : s) b.push_back(static_cast<std::uint8_t>(c));
        return *this;
    }
    Le& map(const StringMap& m) {  // §2 map: u32 block length, then key/value strings
        Le block;
        for (const auto& [k, v] : m) block.str(k).str(v);
        u32(static_cast<std::uint32_t>(block.b.size()));
        return raw(block.b);
    }
    Le& bytes(std::span<const std::uint8_t> s) {  // §2 bytes: u64 length, then the bytes
        u64(s.size());
        return raw(s);
    }
};

// §4.2: u8 opcode, u64 content_length, content.
ByteVec framed_by_spec(std::uint8_t opcode, const Le& content) {
    Le r;
    r.u8(opcode).u64(content.b.size()).raw(content.b);
    return r.b;
}

// §5.1
ByteVec spec_header(const Header& h) {
    Le c;
    c.str(h.profile).str(h.library).f64(h.duration_sec).u64(h.gaussian_count).f64(h.cutoff);
    c.str(h.temporal_model);
    for (double v : h.aabb) c.f64(v);
    c.u8(h.sh_degree).u8(h.flags).map(h.attributes);
    return framed_by_spec(0x01, c);
}

// §5.2
ByteVec spec_footer(const Footer& f) {
    Le c;
    c.u64(f.summary_start).u64(f.summary_offset_start).u32(f.summary_crc);
    return framed_by_spec(0x02, c);
}

// §5.3, with the appended SH depths only when declared.
ByteVec spec_quantization(const Quantization& q) {
    Le c;
    c.str(q.scheme);
    for (double v : q.pos_origin) c.f64(v);
    c.f64(q.step_pos).f64(q.step_scale_log).f64(q.step_rot).f64(q.step_rgb).f64(q.step_alpha);
    c.f64(q.step_motion).f64(q.step_time).f64(q.step_sigma_log).u8(q.step_sh).map(q.bounds);
    if (!q.sh_depths.empty()) {
        c.u8(static_cast<std::uint8_t>(q.sh_depths.size()));
        for (std::uint8_t d : q.sh_depths) c.u8(d);
    }
    return framed_by_spec(0x03, c);
}

// §5.4
ByteVec spec_window_table(const WindowTable& t) {
    Le c;
    c.u32(static_cast<std::uint32_t>(t.windows.size()));
    for (const auto& w : t.windows) c.f64(w.lo).f64(w.hi);
    return framed_by_spec(0x04, c);
}

// §5.5
ByteVec spec_chunk(const ChunkRecord& ch) {
    Le c;
    c.f64(ch.t0).f64(ch.t1).u32(ch.level).u32(ch.count).str(ch.compression);
    c.u64(ch.uncompressed_size).bytes(ch.records);
    return framed_by_spec(0x05, c);
}

// §5.8, with the six appended keyframe-delta fields only when present.
ByteVec spec_chunk_index(const ChunkIndex& e) {
    Le c;
    c.f64(e.t0).f64(e.t1).u64(e.chunk_offset).u64(e.chunk_length).u32(e.gaussian_count);
    c.u32(static_cast<std::uint32_t>(e.bands.size()));
    for (const auto& b : e.bands) c.u8(b.band).u64(b.offset).u64(b.length);
    if (e.keyframe) {
        const KeyframeIndexFields& k = *e.keyframe;
        c.u8(k.chunk_kind).u8(k.delta_mode).u64(k.reference_offset).u64(k.keyframe_offset);
        c.u16(k.depth).u64(k.live_count);
    }
    return framed_by_spec(0x08, c);
}

// How many records of each opcode below 9 a file has, and how many of its Chunk Index entries
// carry the appended keyframe-delta fields.
struct FrozenSeen {
    std::array<int, 9> count{};
    int keyed_index = 0;
};

// Every frozen record (§4.4) of `bytes`, parsed by the library, re-emitted from the spec's field
// list: it must be the bytes the writer wrote.
FrozenSeen check_frozen_records(const ByteVec& bytes) {
    FrozenSeen seen;
    std::uint64_t at = kMagicSize;
    while (at + kMagicSize < bytes.size()) {
        auto r = parse_record(Bytes(bytes).subspan(static_cast<std::size_t>(at)), at);
        REQUIRE(r.ok());
        const ByteVec whole(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                            bytes.begin() + static_cast<std::ptrdiff_t>(r->end_offset()));
        INFO(opcode_name(r->opcode) << " at byte " << at);
        auto same = [&](const auto& parsed, auto emit) {
            if (!parsed.ok()) FAIL(parsed.error().describe());
            CHECK(emit(*parsed) == whole);
        };
        switch (r->opcode) {
            case op::header: same(parse_header(*r), spec_header); break;
            case op::footer: same(parse_footer(*r), spec_footer); break;
            case op::quantization: same(parse_quantization(*r), spec_quantization); break;
            case op::window_table: same(parse_window_table(*r), spec_window_table); break;
            case op::chunk: same(parse_chunk(*r), spec_chunk); break;
            case op::chunk_index:
                same(parse_chunk_index(*r), spec_chunk_index);
                seen.keyed_index += parse_chunk_index(*r)->keyframe.has_value();
                break;
            default: break;
        }
        if (r->opcode < 9) ++seen.count[r->opcode];
        at = r->end_offset();
    }
    return seen;
}

// ---- scenes in user terms

// `n` gaussians at `sh_degree` over a `duration`-second clip, in four windows; deterministic for
// a seed. SH coefficients are drawn from [-sh_range, sh_range].
GaussianColumns random_columns(std::size_t n, int sh_degree, double duration, std::uint32_t seed,
                               double sh_range = 3.5) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    std::normal_distribution<double> nd(0, 1);
    GaussianColumns g;
    g.sh_degree = sh_degree;
    g.resize(n);
    const int per = 3 * sh_coeffs_per_component(sh_degree);
    for (std::size_t i = 0; i < n; ++i) {
        for (int c = 0; c < 3; ++c) {
            g.position[i * 3 + c] = static_cast<float>(4 * u(rng) - 2);
            g.scale[i * 3 + c] = static_cast<float>(std::exp(-5 + 4 * u(rng)));
            g.motion[i * 3 + c] = static_cast<float>(0.2 * nd(rng));
        }
        for (int c = 0; c < 4; ++c) g.rotation[i * 4 + c] = static_cast<float>(nd(rng));
        if (g.rotation[i * 4 + 3] == 0) g.rotation[i * 4 + 3] = 1;
        for (int c = 0; c < 4; ++c) g.color[i * 4 + c] = static_cast<float>(u(rng));
        const int w = static_cast<int>(i % 4);
        g.win_lo[i] = duration * w / 4;
        g.win_hi[i] = duration * (w + 1) / 4;
        g.mu_t[i] = static_cast<float>(g.win_lo[i] + (g.win_hi[i] - g.win_lo[i]) * u(rng));
        g.sigma_t[i] = static_cast<float>(0.01 + u(rng));
        for (int k = 0; k < per; ++k)
            g.sh[i * per + k] = static_cast<float>(sh_range * (2 * u(rng) - 1));
    }
    return g;
}

SceneInput scene_of(const GaussianColumns& g, double duration) {
    SceneInput s;
    s.header.duration_sec = duration;
    s.header.sh_degree = g.sh_degree;
    s.header.library = "fourdgs tests/test_obligations.cpp";
    s.gaussians = g.batch();
    return s;
}

ByteVec write_ok(const SceneInput& s, const WriterOptions& opt = {}, WriteReport* rep = nullptr) {
    auto r = write_scene(s, opt, rep);
    if (!r.ok()) FAIL(r.error().describe());
    return std::move(r).value();
}

LoadedScene read_ok(const ByteVec& bytes) {
    auto r = test::stream_read(bytes);
    if (!r.ok()) FAIL(r.error().describe());
    REQUIRE_FALSE(r->truncation);
    return std::move(r).value();
}

ValidationReport validate_ok(const ByteVec& bytes) {
    MemorySource src(bytes);
    auto r = validate(src);
    REQUIRE(r.ok());
    return std::move(r).value();
}

std::vector<const Finding*> findings(const ValidationReport& rep, std::string_view rule) {
    std::vector<const Finding*> out;
    for (const Finding& f : rep.findings)
        if (f.rule == rule) out.push_back(&f);
    return out;
}

std::string describe(const ValidationReport& rep);

// The one finding of `rule` in `rep`: a warning from `section`, in a report that stays valid.
Finding one_warning(const ValidationReport& rep, std::string_view rule,
                           std::string_view section) {
    INFO(describe(rep));
    const auto found = findings(rep, rule);
    REQUIRE(found.size() == 1);
    CHECK(found[0]->severity == Severity::warning);
    CHECK(found[0]->section == section);
    CHECK(rep.valid());
    return *found[0];
}

std::string describe(const ValidationReport& rep) {
    std::string s;
    for (const Finding& f : rep.findings) {
        s.append(to_string(f.severity)).append(" ").append(f.rule).append(" [").append(f.field);
        s.append("] = '").append(f.value).append("': ").append(f.message).append("\n");
    }
    return s;
}

double bound_value(const Quantization& q, const char* key) {
    const std::string* s = q.bound(key);
    REQUIRE(s != nullptr);
    double v = -1;
    const auto r = fourdgs::from_chars(s->data(), s->data() + s->size(), v);
    REQUIRE(r.ec == std::errc());
    REQUIRE(r.ptr == s->data() + s->size());
    return v;
}

}  // namespace

// =============================================================================================
// M011, M108: frozen records keep their fields where the spec put them; new ones only append.

TEST_CASE("M011 M108: each frozen record is written field for field in the spec's order and "
          "widths, and appended fields only follow them",
          "[obligations]") {
    Header h;
    h.profile = "capture";
    h.library = "lib";
    h.duration_sec = 12.5;
    h.gaussian_count = 0x0102030405060708ull;
    h.cutoff = 0.07;
    h.temporal_model = "gaussian-birth";
    h.aabb = {-1.5, -2.25, -3.125, 4.5, 5.75, 6.875};
    h.sh_degree = 2;
    h.flags = 0x03;
    h.attributes = {{"title", "t"}, {"k", ""}};
    CHECK(test::record_bytes(h) == spec_header(h));
    // Spot-check offsets in the content against the spec by hand: profile string at 0, library
    // at 4 + 7, duration_sec right after it, gaussian_count little-endian.
    const ByteVec hb = test::record_bytes(h);
    CHECK(hb[0] == 0x01);
    CHECK(hb[kRecordHeaderSize] == 7);  // u32 length of "capture"
    const std::size_t duration_at = kRecordHeaderSize + 4 + 7 + 4 + 3;
    CHECK(fourdgs::bit_cast<double>(read_le64(hb.data() + duration_at)) == 12.5);
    CHECK(hb[duration_at + 8] == 0x08);  // gaussian_count's low byte first

    Footer f{0x1122334455667788ull, 0x99AABBCCDDEEFF00ull, 0xDEADBEEF};
    const ByteVec fb = test::record_bytes(f);
    CHECK(fb == spec_footer(f));
    REQUIRE(fb.size() == kRecordHeaderSize + 20);  // §5.2: 8 + 8 + 4
    CHECK(read_le64(fb.data() + kRecordHeaderSize) == f.summary_start);
    CHECK(read_le64(fb.data() + kRecordHeaderSize + 8) == f.summary_offset_start);
    CHECK(read_le32(fb.data() + kRecordHeaderSize + 16) == f.summary_crc);

    Quantization q = test::default_quantization();
    q.step_sh = 32;
    q.sh_depths = {8, 6, 3};
    const ByteVec with_depths = test::record_bytes(q);
    CHECK(with_depths == spec_quantization(q));
    Quantization none = q;
    none.sh_depths.clear();
    const ByteVec without = test::record_bytes(none);
    CHECK(without == spec_quantization(none));
    // The appended SH depths are exactly the earlier record plus 1 + 3 bytes at its end.
    CHECK(test::with_trailing(without, {3, 8, 6, 3}) == with_depths);

    WindowTable t{{{0, 2}, {2, 4.5}}};
    CHECK(test::record_bytes(t) == spec_window_table(t));

    const std::vector<std::uint8_t> block = {1, 2, 3, 4, 5};
    ChunkRecord ch;
    ch.t0 = 0.5;
    ch.t1 = 1.75;
    ch.level = 3;
    ch.count = 77;
    ch.compression = "zstd";
    ch.uncompressed_size = 4096;
    ch.records = block;
    CHECK(test::record_bytes(ch) == spec_chunk(ch));

    ChunkIndex e{0.5, 2.5, 611, 2636, 100, {{1, 3000, 916}, {2, 3916, 1098}}, std::nullopt};
    const ByteVec plain = test::record_bytes(e);
    CHECK(plain == spec_chunk_index(e));
    e.keyframe = KeyframeIndexFields{1, 1, 517, 400, 2, 41};
    const ByteVec keyed = test::record_bytes(e);
    CHECK(keyed == spec_chunk_index(e));
    // §5.8: the six keyframe-delta fields follow the band array; the frozen prefix is unchanged.
    REQUIRE(keyed.size() == plain.size() + 28);
    CHECK(test::with_trailing(plain, ByteVec(keyed.end() - 28, keyed.end())) == keyed);

    // The Attribute Stream (§5.6), frozen too: its 17 header bytes in the spec's order.
    const std::vector<std::int32_t> values = {5, -3, 7, 1, 2, 0};
    const ByteVec s = test::stream_of(attr::motion, 3, values);
    REQUIRE(s.size() >= 17);
    CHECK(s[0] == attr::motion);                                     // attribute_id
    CHECK((s[1] == 1 || s[1] == 2 || s[1] == 4));                    // symbol_width
    CHECK(s[2] <= 2);                                                // mode
    CHECK(s[3] == codec::deflate);                                   // codec
    CHECK(s[4] == 3);                                                // channels
    CHECK(read_le32(s.data() + 5) == 2);                             // element_count
    CHECK(read_le64(s.data() + 9) == s.size() - 17);                 // payload_length
}

TEST_CASE("M011 M108: every frozen record the writers emit is the spec's layout, with or without "
          "appended fields, and a frozen record with bytes appended still reads",
          "[obligations]") {
    SECTION("the one-shot writer, SH depths declared, chunk-compressed") {
        const GaussianColumns g = random_columns(120, 2, 4, 11);
        WriterOptions opt;
        opt.sh_ladder = ShLadder::balanced;
        opt.chunk_compression = "zstd";
        opt.max_chunk_gaussians = 25;
        const ByteVec bytes = write_ok(scene_of(g, 4), opt);
        const auto seen = check_frozen_records(bytes).count;
        CHECK(seen[op::header] == 1);
        CHECK(seen[op::quantization] == 1);
        CHECK(seen[op::window_table] == 1);
        CHECK(seen[op::chunk] >= 4);
        CHECK(seen[op::chunk_index] == seen[op::chunk]);
        CHECK(seen[op::footer] == 1);
    }
    SECTION("the keyframe-delta writer: Chunk Index entries with the appended fields") {
        const GaussianColumns a = random_columns(30, 1, 2, 12), b = random_columns(30, 1, 2, 13);
        std::vector<std::uint32_t> ids(30);
        std::iota(ids.begin(), ids.end(), 1u);
        GaussianBatch ba = a.batch(), bb = b.batch();
        ba.win_lo = ba.win_hi = bb.win_lo = bb.win_hi = {};
        ba.mu_t = bb.mu_t = {};
        const KeyframeStep steps[] = {{0.0, ba, ids}, {1.0, bb, ids}};
        SceneHeader header;
        header.duration_sec = 2;
        header.sh_degree = 1;
        auto bytes = write_keyframe_delta(steps, header);
        if (!bytes.ok()) FAIL(bytes.error().describe());
        const FrozenSeen seen = check_frozen_records(*bytes);
        CHECK(seen.count[op::header] == 1);
        CHECK(seen.count[op::chunk] >= 1);
        CHECK(seen.count[op::chunk_index] == 2);
        CHECK(seen.keyed_index == 2);
    }
    SECTION("appended bytes after every frozen record's fields are stepped over (§4.2)") {
        test::BuiltScene s = test::default_scene(2, 30, 1);
        const ByteVec plain = test::build(s.spec).bytes;
        const ByteVec extra = {0xA5, 0x5A, 0x00, 0xFF};
        // Quantization and Chunk Index carry declared appended fields, so bytes after those
        // fields are what a later revision would append.
        s.spec.quantization.sh_depths = {8};
        s.spec.quantization.bounds.push_back({"sh_band1", "0"});
        auto patched = [&](ByteVec rec) { return test::with_trailing(std::move(rec), extra); };
        test::FileSpec spec = s.spec;
        spec.write_header = spec.write_quantization = false;
        spec.windows.reset();
        spec.before_header = patched(test::record_bytes(s.spec.header));
        for (const ByteVec& r : {patched(test::record_bytes(s.spec.quantization)),
                                 patched(test::record_bytes(*s.spec.windows))})
            spec.before_header.insert(spec.before_header.end(), r.begin(), r.end());
        for (auto& c : spec.chunks) c.trailing = extra;
        const ByteVec appended = test::build(spec).bytes;
        const LoadedScene a = read_ok(plain), b = read_ok(appended);
        test::require_identical(a.gaussians, b.gaussians);
        CHECK(b.info.header.attributes == s.spec.header.attributes);
        CHECK(b.info.quantization.sh_depths == std::vector<std::uint8_t>{8});
        const auto indexed = test::indexed_read(appended);
        REQUIRE_FALSE(indexed.error);
        test::require_identical(a.gaussians, indexed.block);
    }
}

// =============================================================================================
// M017: the bounds map is surfaced under the spec's names.

TEST_CASE("M017: both readers surface the Quantization bounds under the spec's keys, exactly as "
          "declared, and the writer declares only those keys",
          "[obligations]") {
    test::BuiltScene s = test::default_scene(2, 20, 3);
    // Every name §5.3 gives, each with a value no other key has, in an unusual but legal
    // spelling: a reader that renamed a key or re-spelled a value would be caught.
    const StringMap declared = {
        {"pos", "5e-4"},       {"scale_rel", "0.0050"}, {"rot", "+1E-3"},   {"rgb", ".002"},
        {"alpha", "0.0021"},   {"motion", "5.0e-4"},    {"time", "2e-3"},   {"sigma_rel", "0.01"},
        {"sh", "8"},           {"sh_band1", "0"},       {"sh_band2", "2"},  {"sh_band3", "8.0"}};
    s.spec.quantization.bounds = declared;
    s.spec.quantization.sh_depths = {8, 6, 4};
    s.spec.quantization.step_sh = 16;
    const ByteVec bytes = test::build(s.spec).bytes;

    const LoadedScene streamed = read_ok(bytes);
    CHECK(streamed.info.quantization.bounds == declared);
    const auto indexed = test::indexed_read(bytes);
    REQUIRE_FALSE(indexed.error);
    CHECK(indexed.info.quantization.bounds == declared);
    for (const auto& [key, value] : declared) {
        INFO(key);
        REQUIRE(streamed.info.quantization.bound(key) != nullptr);
        CHECK(*streamed.info.quantization.bound(key) == value);
    }

    // The writer's map: exactly §5.3's nine keys, plus sh_band<b> for each band when it declares
    // depths — nothing renamed, nothing private.
    const GaussianColumns g = random_columns(40, 3, 2, 21);
    for (bool depths : {false, true}) {
        INFO("depths declared: " << depths);
        WriterOptions opt;
        if (depths) opt.sh_ladder = ShLadder::aggressive;
        WriteReport rep;
        const ByteVec written = write_ok(scene_of(g, 2), opt, &rep);
        std::vector<std::string> keys;
        for (const auto& kv : read_ok(written).info.quantization.bounds) keys.push_back(kv.first);
        std::vector<std::string> want = {"pos", "scale_rel", "rot",       "rgb", "alpha",
                                         "motion", "time",   "sigma_rel", "sh"};
        if (depths)
            for (const char* k : {"sh_band1", "sh_band2", "sh_band3"}) want.emplace_back(k);
        std::sort(keys.begin(), keys.end());
        std::sort(want.begin(), want.end());
        CHECK(keys == want);
        CHECK(rep.quantization.bounds == read_ok(written).info.quantization.bounds);
    }
}

// =============================================================================================
// M021: what a host library's number parser accepts beyond the grammar is not a bound.

TEST_CASE("M021: underscores, digits of other scripts and surrounding whitespace spell no bound, "
          "and an exponent past any host range still does",
          "[obligations]") {
    // Host extras, each refused by the grammar (§5.3).
    const char* extras[] = {
        "1_000",       "0.000_5",        "5e-0_5",              // digit-group separators
        "\xd9\xa1",    "0.\xd9\xa5",     "\xef\xbc\x91",        // Arabic-Indic 1, .5; fullwidth 1
        "\xe0\xa5\xab", "\xf0\x9d\x9f\x93", "\xc2\xb2",         // Devanagari 5, math bold 5, ²
        " 0.5",        "0.5 ",           "\t0.5",    "0.5\n",   // ASCII whitespace
        "\r0.5",       "\v0.5",          "\f0.5",
        "\xc2\xa0" "0.5", "0.5\xe2\x80\x83", "\xe3\x80\x80" "1"};  // NBSP, em space, ideographic
    for (const char* s : extras) {
        INFO("'" << s << "'");
        CHECK_FALSE(is_bound_spelling(s));
    }
    // Why the grammar is matched by hand (M022): a C runtime skips leading whitespace, and
    // from_chars refuses the leading '+' the grammar allows.
    char* end = nullptr;
    const char* spaced = " 0.5";
    CHECK(std::strtod(spaced, &end) == 0.5);
    CHECK(end == spaced + 4);
    double v = 0;
    const std::string_view plus = "+0.5";
    CHECK(fourdgs::from_chars(plus.data(), plus.data() + plus.size(), v).ec != std::errc());
    CHECK(is_bound_spelling(plus));

    // Exponents outside binary64 (and outside any machine integer) are bounds, compared exactly.
    for (const char* s : {"1e-400", "2.5E+4000", "1e99999999999999999999999999",
                          "7e-18446744073709551616"}) {
        INFO(s);
        CHECK(is_bound_spelling(s));
    }
    CHECK(compare_bounds("1e-400", "0") == 1);  // binary64 would make it 0
    CHECK(compare_bounds("1e400", "1e399") == 1);  // binary64 would make both infinity
    CHECK(compare_bounds("1e99999999999999999999999999", "10e99999999999999999999999998") == 0);

    // In a file: both readers keep each value as spelled (the map is a declaration, not an
    // instruction), and the validator reports each host extra as bound-not-a-number naming the
    // key and the value — and the huge exponents as nothing.
    test::BuiltScene s = test::default_scene(1, 10, 0);
    s.spec.quantization.bounds = {{"pos", "0.000_5"},      {"scale_rel", " 0.005"},
                                  {"rot", "0.001\n"},      {"rgb", "\xd9\xa0.\xd9\xa2"},
                                  {"alpha", "\xc2\xa0" "0.002"}, {"motion", "5e-400"},
                                  {"time", "2e99999999999999999999"}, {"sigma_rel", "0.01"},
                                  {"sh", "0"}};
    const ByteVec bytes = test::build(s.spec).bytes;
    CHECK(read_ok(bytes).info.quantization.bounds == s.spec.quantization.bounds);
    CHECK(test::indexed_refusal(bytes).empty());
    const ValidationReport rep = validate_ok(bytes);
    INFO(describe(rep));
    const auto bad = findings(rep, "bound-not-a-number");
    REQUIRE(bad.size() == 5);
    const char* keys[] = {"pos", "scale_rel", "rot", "rgb", "alpha"};
    for (std::size_t k = 0; k < 5; ++k) {
        CHECK(bad[k]->severity == Severity::warning);
        CHECK(bad[k]->field == std::string("Quantization.bounds.") + keys[k]);
        CHECK(bad[k]->value == *s.spec.quantization.bound(keys[k]));
        CHECK(bad[k]->section == "§5.3");
    }
    CHECK(rep.valid());
}

// =============================================================================================
// M058: rig times are on the scene clock.

TEST_CASE("M058: a rig trajectory is written on the scene clock as given, and the validator "
          "warns about one left on another epoch",
          "[obligations]") {
    const GaussianColumns g = random_columns(16, 0, 10, 31);
    // A capture clock on the Unix epoch, as a producer receives it, and the same samples after
    // the producer's conversion to the scene clock (capture start = scene time 0).
    const double capture_start = 1751328000.25;
    std::vector<TrajectorySample> capture, scene_clock;
    for (int k = 0; k < 5; ++k) {
        const double t = 2.5 * k;
        capture.push_back({capture_start + t, {0, 0, 0, 1}, {0.5 * k, 0, 0}});
        scene_clock.push_back({t, {0, 0, 0, 1}, {0.5 * k, 0, 0}});
    }
    auto written = [&](std::vector<TrajectorySample> samples) {
        SceneInput s = scene_of(g, 10);
        s.header.rig_trajectories.push_back(
            {"rig", TrajectoryInterpolation::linear, std::move(samples)});
        return write_ok(s);
    };

    // Converted: the writer stores the times bit for bit and the validator is content.
    const ByteVec good = written(scene_clock);
    const SceneInfo info = read_ok(good).info;
    REQUIRE(info.rig_trajectories.size() == 1);
    CHECK(info.rig_trajectories[0].samples == scene_clock);
    const ValidationReport ok = validate_ok(good);
    INFO(describe(ok));
    CHECK(findings(ok, "rig-trajectory-off-scene-clock").empty());

    // A trajectory that starts before 0 and ends after the clip still covers it: no warning.
    std::vector<TrajectorySample> around = {{-5, {0, 0, 0, 1}, {0, 0, 0}},
                                            {15, {0, 0, 0, 1}, {1, 0, 0}}};
    CHECK(findings(validate_ok(written(around)), "rig-trajectory-off-scene-clock").empty());

    // Not converted: every sample is past the clip, so every instant of the scene would clamp
    // to the first sample. The file still reads (nothing in it is malformed), but the
    // validator names the trajectory and its first time.
    for (const auto& off : {capture, std::vector<TrajectorySample>{
                                         {-30, {0, 0, 0, 1}, {0, 0, 0}},
                                         {-20, {0, 0, 0, 1}, {1, 0, 0}}}}) {
        const ByteVec bad = written(off);
        CHECK(read_ok(bad).info.rig_trajectories[0].samples == off);
        const Finding f =
            one_warning(validate_ok(bad), "rig-trajectory-off-scene-clock", "§5.15.4");
        CHECK_THAT(f.message, Catch::Contains("\"rig\""));
        CHECK(f.value == detail::fmt(off[0].time));
    }
}

// =============================================================================================
// M067: Object Table ids are distinct.

TEST_CASE("M067: an Object Table with two entries for one id is refused by the writers, both "
          "readers and the validator, naming the id",
          "[obligations]") {
    ObjectTable table;
    for (std::uint32_t id : {0u, 5u, 0xFFFFFFFFu, 9u})
        table.entries.push_back({id, "object " + std::to_string(id), {0, 0, 0}, std::nullopt,
                                 std::nullopt});
    const GaussianColumns g = random_columns(8, 0, 2, 41);

    SceneInput s = scene_of(g, 2);
    s.header.object_table = table;
    CHECK(read_ok(write_ok(s)).info.object_table == table);  // distinct, 0 and 2^32-1 included

    for (std::uint32_t dup : {0u, 0xFFFFFFFFu}) {
        INFO("duplicate id " << dup);
        ObjectTable twice = table;
        twice.entries[3].object_id = dup;
        s.header.object_table = twice;
        auto one_shot = write_scene(s);
        REQUIRE_FALSE(one_shot.ok());
        CHECK(one_shot.error().refusal == "duplicate-object-id");
        CHECK_THAT(one_shot.error().message, Catch::Contains(std::to_string(dup)));

        MemorySink sink;
        StreamDeclaration decl;
        decl.gaussian_count = 0;
        decl.windows = {{0, 2}};
        auto streaming = StreamingWriter::create(sink, s.header, decl);
        REQUIRE_FALSE(streaming.ok());
        CHECK(streaming.error().refusal == "duplicate-object-id");

        test::BuiltScene b = test::default_scene(1, 10, 0);
        b.spec.front = {test::record_bytes(twice)};
        const ByteVec bytes = test::build(b.spec).bytes;
        auto streamed = test::stream_read(bytes);
        REQUIRE_FALSE(streamed.ok());
        CHECK(streamed.error().refusal == "duplicate-object-id");
        CHECK(streamed.error().value == std::to_string(dup));
        CHECK(test::indexed_refusal(bytes) == "duplicate-object-id");
        const ValidationReport rep = validate_ok(bytes);
        INFO(describe(rep));
        const auto found = findings(rep, "duplicate-object-id");
        REQUIRE(found.size() == 1);
        CHECK(found[0]->severity == Severity::error);
        CHECK(found[0]->value == std::to_string(dup));
    }
}

// =============================================================================================
// M098: nothing depends on the order inside a chunk.

namespace {

// Gaussian `i` of `a` and gaussian `j` of `b` decode to the same state, column by column.
void require_same_gaussian(const GaussianBlock& a, std::size_t i, const GaussianBlock& b,
                           std::size_t j) {
    auto same = [&](const auto& ca, const auto& cb, std::size_t w, const char* name) {
        INFO(name << " of gaussian " << i << " / " << j);
        REQUIRE(std::equal(ca.begin() + static_cast<std::ptrdiff_t>(i * w),
                           ca.begin() + static_cast<std::ptrdiff_t>((i + 1) * w),
                           cb.begin() + static_cast<std::ptrdiff_t>(j * w)));
    };
    same(a.position, b.position, 3, "position");
    same(a.scale, b.scale, 3, "scale");
    same(a.rotation, b.rotation, 4, "rotation");
    same(a.color, b.color, 4, "color");
    same(a.motion, b.motion, 3, "motion");
    same(a.mu_t, b.mu_t, 1, "mu_t");
    same(a.sigma_t, b.sigma_t, 1, "sigma_t");
    same(a.win_lo, b.win_lo, 1, "win_lo");
    same(a.win_hi, b.win_hi, 1, "win_hi");
    same(a.flags, b.flags, 1, "flags");
    same(a.window_index, b.window_index, 1, "window_index");
    same(a.sh, b.sh, static_cast<std::size_t>(a.sh_per_gaussian()), "sh");
    same(a.object_id, b.object_id, 1, "object_id");
    if (a.has_source_ids) {
        same(a.source_group, b.source_group, 1, "source_group");
        same(a.source_index, b.source_index, 1, "source_index");
    }
}

// `b` with its gaussians in the order `perm` (new gaussian k is old gaussian perm[k]).
test::Bins permuted(const test::Bins& b, const std::vector<std::uint32_t>& perm) {
    test::Bins p = b;
    for (std::uint8_t id = 0; id < attr::kKnownCount; ++id) {
        if (!b.present[id]) continue;
        const std::size_t w = attr::kChannels[id];
        for (std::size_t k = 0; k < perm.size(); ++k)
            for (std::size_t c = 0; c < w; ++c) p.cols[id][k * w + c] = b.cols[id][perm[k] * w + c];
    }
    for (int band = 1; band <= b.sh_bands; ++band) {
        const std::size_t w = 3 * static_cast<std::size_t>(sh_band_width(band));
        for (std::size_t k = 0; k < perm.size(); ++k)
            std::copy_n(b.sh[band - 1].begin() + static_cast<std::ptrdiff_t>(perm[k] * w), w,
                        p.sh[band - 1].begin() + static_cast<std::ptrdiff_t>(k * w));
    }
    return p;
}

}  // namespace

TEST_CASE("M098: a chunk decodes to the same gaussians whatever order its gaussians and its "
          "attribute streams are stored in, through both readers",
          "[obligations]") {
    constexpr std::uint32_t kCount = 64;
    test::FileSpec spec;
    spec.header = test::default_header(2 * kCount, 2, 2);
    spec.windows = WindowTable{{{0, 1}, {1, 2}}};
    std::vector<test::Bins> bins;
    for (int k = 0; k < 2; ++k) {
        bins.push_back(test::random_bins(kCount, 70 + k, {k}, 2, true, true));
        spec.chunks.push_back(test::chunk_from_bins(bins.back(), k, k + 1));
    }
    const ByteVec reference = test::build(spec).bytes;
    const LoadedScene ref = read_ok(reference);
    REQUIRE(ref.gaussians.count == 2 * kCount);

    SECTION("streams in reverse and in rotated order") {
        test::FileSpec reordered = spec;
        std::reverse(reordered.chunks[0].streams.begin(), reordered.chunks[0].streams.end());
        std::rotate(reordered.chunks[1].streams.begin(), reordered.chunks[1].streams.begin() + 5,
                    reordered.chunks[1].streams.end());
        const ByteVec bytes = test::build(reordered).bytes;
        REQUIRE(bytes != reference);
        test::require_identical(ref.gaussians, read_ok(bytes).gaussians);
        const auto indexed = test::indexed_read(bytes);
        REQUIRE_FALSE(indexed.error);
        test::require_identical(ref.gaussians, indexed.block);
    }
    SECTION("gaussians reversed in one chunk and shuffled in the other") {
        test::FileSpec reordered = spec;
        std::vector<std::vector<std::uint32_t>> perms(2, std::vector<std::uint32_t>(kCount));
        std::iota(perms[0].rbegin(), perms[0].rend(), 0u);
        std::iota(perms[1].begin(), perms[1].end(), 0u);
        std::shuffle(perms[1].begin(), perms[1].end(), std::mt19937(98));
        for (int k = 0; k < 2; ++k)
            reordered.chunks[k] = test::chunk_from_bins(permuted(bins[k], perms[k]), k, k + 1);
        const ByteVec bytes = test::build(reordered).bytes;
        const LoadedScene got = read_ok(bytes);
        const auto indexed = test::indexed_read(bytes);
        REQUIRE_FALSE(indexed.error);
        for (const GaussianBlock* block : {&got.gaussians, &indexed.block}) {
            REQUIRE(block->count == ref.gaussians.count);
            for (std::size_t k = 0; k < 2; ++k)
                for (std::size_t i = 0; i < kCount; ++i)
                    require_same_gaussian(*block, k * kCount + i, ref.gaussians,
                                          k * kCount + perms[k][i]);
        }
    }
}

// =============================================================================================
// M099: the rotation bound declared is the maximum after reconstruction.

TEST_CASE("M099: the one-shot writer declares the measured post-reconstruction rotation maximum, "
          "which exceeds the stored components' error, and the streaming writer declares a "
          "bound above it",
          "[obligations]") {
    const GaussianColumns g = random_columns(3000, 0, 4, 99);
    WriteReport rep;
    const ByteVec bytes = write_ok(scene_of(g, 4), {}, &rep);
    const LoadedScene read = read_ok(bytes);
    const GaussianBlock& d = read.gaussians;
    REQUIRE(d.count == g.count);

    // Writers reorder gaussians (§6.1), so match each decoded one to its input by rest position
    // (distinct in this data at the file's grid).
    auto key = [](const float* p) { return std::array<float, 3>{p[0], p[1], p[2]}; };
    std::vector<std::array<float, 3>> decoded_pos(d.count);
    for (std::size_t j = 0; j < d.count; ++j) decoded_pos[j] = key(&d.position[j * 3]);

    double full = 0, stored = 0;
    const double step = read.info.quantization.step_rot;
    for (std::size_t j = 0; j < d.count; ++j) {
        // The input gaussian whose position is nearest the decoded one.
        std::size_t best = 0;
        double best_e = std::numeric_limits<double>::infinity();
        for (std::size_t i = 0; i < g.count; ++i) {
            double e = 0;
            for (int c = 0; c < 3; ++c)
                e = std::max(e, std::fabs(double(g.position[i * 3 + c]) - decoded_pos[j][c]));
            if (e < best_e) best_e = e, best = i;
        }
        const float* in = &g.rotation[best * 4];
        double q[4], norm = 0;
        for (int c = 0; c < 4; ++c) norm += double(in[c]) * in[c];
        norm = std::sqrt(norm);
        int omitted = 0;
        for (int c = 0; c < 4; ++c) {
            q[c] = in[c] / norm;
            if (std::fabs(q[c]) > std::fabs(q[omitted])) omitted = c;
        }
        double ep = 0, en = 0, sp = 0, sn = 0;
        for (int c = 0; c < 4; ++c) {
            const double a = std::fabs(double(d.rotation[j * 4 + c]) - q[c]);
            const double b = std::fabs(double(d.rotation[j * 4 + c]) + q[c]);
            ep = std::max(ep, a);
            en = std::max(en, b);
            if (c != omitted) sp = std::max(sp, a), sn = std::max(sn, b);
        }
        full = std::max(full, std::min(ep, en));
        stored = std::max(stored, ep <= en ? sp : sn);
    }
    const double declared = bound_value(read.info.quantization, "rot");
    INFO("declared " << declared << " measured " << full << " stored components " << stored
                     << " step_rot/2 " << step / 2);
    CHECK(declared == full);
    // The reconstruction amplifies: a bound of half the stored grid would under-declare.
    CHECK(full > stored);
    CHECK(declared > step / 2);
    CHECK(rep.quantization.bounds == read.info.quantization.bounds);

    // The streaming writer cannot measure before it writes the Quantization record; what it
    // declares must still cover the post-reconstruction maximum of this data.
    MemorySink sink;
    SceneHeader header = scene_of(g, 4).header;
    StreamDeclaration decl;
    decl.gaussian_count = g.count;
    decl.aabb = rep.aabb;
    decl.windows = rep.windows;
    auto w = StreamingWriter::create(sink, header, decl);
    if (!w.ok()) FAIL(w.error().describe());
    const Status added = w->add_chunk(g.batch());
    if (!added.ok()) FAIL(added.error().describe());
    REQUIRE(w->finish().ok());
    CHECK(bound_value(w->report().quantization, "rot") >= full);
}

// =============================================================================================
// M101: SH coefficients outside [-4, 4] are clamped by the producer.

TEST_CASE("M101: the writers clamp SH coefficients outside -4 to +4 to the interval's ends, and "
          "leave those inside on the nearest byte",
          "[obligations]") {
    GaussianColumns g = random_columns(4, 1, 1, 101);
    const float big = std::numeric_limits<float>::max();
    // Per gaussian 9 coefficients (3 per component, band 1).
    const float coefficients[4][9] = {
        {4.0001f, -4.0001f, 5, -5, 1e6f, -1e6f, big, -big, 0},
        {4, -4, 3.999f, -3.999f, 0.5f, -0.5f, 8, -8, 1},
        {100, 100, 100, 100, 100, 100, 100, 100, 100},
        {-100, -100, -100, -100, -100, -100, -100, -100, -100}};
    for (std::size_t i = 0; i < 4; ++i)
        std::copy_n(coefficients[i], 9, g.sh.begin() + static_cast<std::ptrdiff_t>(i * 9));
    for (std::size_t i = 0; i < 4; ++i) g.position[i * 3] = static_cast<float>(i);  // to match
    auto expected = [](float c) {
        if (c >= 4) return std::uint8_t{255};
        if (c <= -4) return std::uint8_t{0};
        return static_cast<std::uint8_t>(std::lround((double(c) + 4) * 255 / 8));
    };
    auto check = [&](const ByteVec& bytes) {
        const GaussianBlock d = read_ok(bytes).gaussians;
        REQUIRE(d.count == 4);
        REQUIRE(d.sh_degree == 1);
        for (std::size_t j = 0; j < 4; ++j) {
            const std::size_t i = static_cast<std::size_t>(std::lround(d.position[j * 3]));
            REQUIRE(i < 4);
            for (int k = 0; k < 9; ++k) {
                INFO("gaussian " << i << " coefficient " << k << " = " << coefficients[i][k]);
                CHECK(d.sh[j * 9 + k] == expected(coefficients[i][k]));
                CHECK(d.sh_float(j, k / 3, k % 3) >= -4.0f);
                CHECK(d.sh_float(j, k / 3, k % 3) <= 4.0f);
            }
        }
    };
    WriteReport rep;
    const ByteVec one_shot = write_ok(scene_of(g, 1), {}, &rep);
    check(one_shot);
    CHECK(*rep.quantization.bound("sh") == "0");  // clamping is not a deviation (§6.5)

    MemorySink sink;
    StreamDeclaration decl;
    decl.gaussian_count = 4;
    decl.aabb = rep.aabb;
    decl.windows = rep.windows;
    auto w = StreamingWriter::create(sink, scene_of(g, 1).header, decl);
    if (!w.ok()) FAIL(w.error().describe());
    const Status added = w->add_chunk(g.batch());
    if (!added.ok()) FAIL(added.error().describe());
    REQUIRE(w->finish().ok());
    check(sink.bytes());
}

// =============================================================================================
// M102: SH depths fall with band index.

TEST_CASE("M102: the writer's SH depth ladders never rise with band index, and the validator "
          "warns about depths that do",
          "[obligations]") {
    for (ShLadder ladder : {ShLadder::flat, ShLadder::balanced, ShLadder::aggressive}) {
        INFO(static_cast<int>(ladder));
        const auto d = ladder_depths(ladder);
        CHECK(d[0] >= d[1]);
        CHECK(d[1] >= d[2]);
        if (ladder != ShLadder::flat) CHECK(d[0] > d[2]);  // a ladder that coarsens falls
    }
    const GaussianColumns g = random_columns(30, 3, 2, 102);
    for (ShLadder ladder : {ShLadder::balanced, ShLadder::aggressive}) {
        WriterOptions opt;
        opt.sh_ladder = ladder;
        const ByteVec bytes = write_ok(scene_of(g, 2), opt);
        const auto depths = read_ok(bytes).info.quantization.sh_depths;
        const auto want = ladder_depths(ladder);
        CHECK(depths == std::vector<std::uint8_t>(want.begin(), want.end()));
        CHECK(findings(validate_ok(bytes), "sh-depths-not-decreasing").empty());
    }

    // Depths the caller chose against the SHOULD are written as asked; the validator says so,
    // once per band that rises, naming its depth.
    WriterOptions rising;
    rising.sh_depths = {4, 6, 6};
    const ByteVec bytes = write_ok(scene_of(g, 2), rising);
    const Finding f = one_warning(validate_ok(bytes), "sh-depths-not-decreasing", "§6.5");
    CHECK(f.value == "6");
    CHECK_THAT(f.message, Catch::Contains("band 2"));
}
