// Truncation (§11.10 M132, §4.5, §5.7 M100): a file cut anywhere — at every record boundary and
// inside every record — still reads through the streaming reader up to the cut. Every chunk
// whose record is whole before the cut comes back, a chunk whose trailing SH bands were cut comes
// back with the whole bands that survived, nothing of a partial record is ever interpreted, and
// the cut is reported as a truncation. The indexed reader refuses a cut file cleanly.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "support/file_builder.hpp"
#include "support/pipe_source.hpp"
#include "support/readers.hpp"

using namespace fourdgs;
using test::ByteVec;

namespace {

// The records of a whole file as an independent walk finds them (wire.hpp framing only).
struct Rec {
    std::uint8_t opcode = 0;
    std::uint64_t offset = 0, end = 0;
    int chunk = -1;  // for Chunk and SH band records
    int band = 0;
    std::uint32_t count = 0;  // for Chunk records
};

struct Layout {
    std::vector<Rec> records;
    std::vector<std::size_t> chunks;  // positions in `records` of the Chunk records
    int sh_degree = 0;
    std::uint64_t size = 0;
};

Layout layout_of(const ByteVec& bytes) {
    Layout l;
    l.size = bytes.size();
    std::uint64_t at = kMagicSize;
    while (at + kMagicSize < bytes.size()) {
        auto r = parse_record(Bytes(bytes).subspan(static_cast<std::size_t>(at)), at);
        REQUIRE(r.ok());
        Rec rec{r->opcode, at, r->end_offset()};
        if (r->opcode == op::header) {
            auto h = parse_header(*r);
            REQUIRE(h.ok());
            l.sh_degree = h->sh_degree;
        } else if (r->opcode == op::chunk) {
            auto c = parse_chunk(*r);
            REQUIRE(c.ok());
            rec.chunk = static_cast<int>(l.chunks.size());
            rec.count = c->count;
            l.chunks.push_back(l.records.size());
        } else if (r->opcode == op::sh_band) {
            rec.chunk = static_cast<int>(l.chunks.size()) - 1;
            rec.band = r->content[0];
        }
        l.records.push_back(rec);
        at = r->end_offset();
    }
    REQUIRE(at + kMagicSize == bytes.size());
    return l;
}

std::size_t complete(const Layout& l, std::uint8_t opcode, std::uint64_t cut) {
    std::size_t n = 0;
    for (const Rec& r : l.records) n += r.opcode == opcode && r.end <= cut;
    return n;
}

// What a cut at `cut` must leave: the gaussians of every chunk whose record is whole, the SH
// degree of the merged block (a chunk cut inside its bands keeps the whole bands before the cut).
struct Expected {
    std::uint64_t gaussians = 0;
    int sh_degree = 0;
};

Expected expected_at(const Layout& l, std::uint64_t cut) {
    Expected e;
    e.sh_degree = l.sh_degree;
    for (std::size_t pos : l.chunks) {
        const Rec& c = l.records[pos];
        if (c.end > cut) break;
        e.gaussians += c.count;
        int whole = 0;
        for (std::size_t k = pos + 1; k < l.records.size() && l.records[k].opcode == op::sh_band; ++k)
            if (l.records[k].end <= cut && l.records[k].band == whole + 1) ++whole;
        e.sh_degree = std::min(e.sh_degree, whole);
    }
    return e;
}

// The cut points: every record boundary, the magic, and several offsets inside every record.
std::vector<std::uint64_t> cut_points(const Layout& l, bool every_byte) {
    std::set<std::uint64_t> cuts;
    if (every_byte) {
        for (std::uint64_t c = 0; c < l.size; ++c) cuts.insert(c);
    } else {
        for (std::uint64_t c = 0; c <= kMagicSize; ++c) cuts.insert(c);
        for (const Rec& r : l.records) {
            const std::uint64_t len = r.end - r.offset;
            for (std::uint64_t d : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{5},
                                    std::uint64_t{8}, std::uint64_t{9}, std::uint64_t{10},
                                    std::uint64_t{26}, len / 3, len / 2, len - 17, len - 2, len - 1})
                if (d < len) cuts.insert(r.offset + d);
        }
        for (std::uint64_t c = l.size - kMagicSize; c < l.size; ++c) cuts.insert(c);
    }
    return {cuts.begin(), cuts.end()};
}

// The first n gaussians of `full`, with SH cut to `degree`, must be exactly `got`.
void require_prefix(const GaussianBlock& got, const GaussianBlock& full) {
    const std::size_t n = got.count;
    REQUIRE(n <= full.count);
    auto prefix = [n](const auto& v, std::size_t k) {
        using V = std::decay_t<decltype(v)>;
        return V(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n * k));
    };
    CHECK(got.position == prefix(full.position, 3));
    CHECK(got.scale == prefix(full.scale, 3));
    CHECK(got.rotation == prefix(full.rotation, 4));
    CHECK(got.color == prefix(full.color, 4));
    CHECK(got.motion == prefix(full.motion, 3));
    CHECK(got.mu_t == prefix(full.mu_t, 1));
    CHECK(got.sigma_t == prefix(full.sigma_t, 1));
    CHECK(got.win_lo == prefix(full.win_lo, 1));
    CHECK(got.win_hi == prefix(full.win_hi, 1));
    CHECK(got.object_id == prefix(full.object_id, 1));
    const int per = sh_coeffs_per_component(got.sh_degree);
    const int per_full = sh_coeffs_per_component(full.sh_degree);
    REQUIRE(got.sh.size() == n * 3 * std::size_t(per));
    bool same = true;
    for (std::size_t i = 0; i < n; ++i)
        for (int c = 0; c < 3; ++c)
            for (int k = 0; k < per; ++k)
                same &= got.sh[(i * 3 + c) * per + k] == full.sh[(i * 3 + c) * per_full + k];
    CHECK(same);
}

struct CutStats {
    std::size_t cuts = 0, with_chunks = 0, partial_sh = 0;
};

void check_cut(const ByteVec& bytes, const Layout& l, const GaussianBlock& full, std::uint64_t cut,
               CutStats& stats) {
    INFO("cut at " << cut << " of " << bytes.size());
    const ByteVec prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    MemorySource src(prefix);
    auto loaded = read_streaming(src);
    if (!loaded.ok()) FAIL("refused instead of reporting a truncation: " << loaded.error().describe());
    REQUIRE(loaded->truncation.has_value());
    CHECK(loaded->truncation->refusal == "truncated");
    CHECK(loaded->truncation->kind == ErrorKind::truncated);

    const Expected e = expected_at(l, cut);
    REQUIRE(loaded->gaussians.count == e.gaussians);
    if (e.gaussians > 0) {
        CHECK(loaded->gaussians.sh_degree == e.sh_degree);
        require_prefix(loaded->gaussians, full);
        ++stats.with_chunks;
        if (e.sh_degree < l.sh_degree) ++stats.partial_sh;
    }
    // Nothing of a partial record: the summary and the extras hold exactly the whole records.
    const SceneInfo& info = loaded->info;
    CHECK(info.index.size() == complete(l, op::chunk_index, cut));
    CHECK(info.statistics.has_value() == (complete(l, op::statistics, cut) == 1));
    CHECK(info.summary_offsets.size() == complete(l, op::summary_offset, cut));
    CHECK(info.footer.has_value() == (complete(l, op::footer, cut) == 1));
    CHECK(info.metadata.size() == complete(l, op::metadata, cut));
    CHECK(info.has_header == (complete(l, op::header, cut) == 1));
    std::size_t audio_sources = complete(l, op::audio_source, cut);
    CHECK(info.audio.size() == audio_sources);
    CHECK(info.object_tracks.size() == complete(l, op::object_track, cut));
    CHECK(info.sensors.size() == complete(l, op::sensor_calibration, cut));

    // The indexed reader cannot find the tail of a cut file: it refuses, cleanly.
    auto reader = IndexedReader::open(src);
    CHECK_FALSE(reader.ok());
    if (reader.ok()) {
        GaussianBlock b;
        std::vector<DecodeWorkspace> pool;
        (void)reader->read_all(b, pool, 1);
    }
    ++stats.cuts;
}

void check_file_truncations(const ByteVec& bytes, bool every_byte) {
    const Layout l = layout_of(bytes);
    auto whole = test::stream_read(bytes);
    if (!whole.ok()) FAIL(whole.error().describe());
    REQUIRE_FALSE(whole->truncation.has_value());
    const GaussianBlock& full = whole->gaussians;
    CutStats stats;
    for (std::uint64_t cut : cut_points(l, every_byte)) check_cut(bytes, l, full, cut, stats);
    CHECK(stats.cuts > l.records.size());
    CHECK(stats.with_chunks > 0);
    if (l.sh_degree > 0) CHECK(stats.partial_sh > 0);
}

// A multi-chunk file with SH bands and front matter, built in code.
ByteVec built_file() {
    test::BuiltScene s = test::default_scene(4, 24, 3, 71, /*object_ids=*/true);
    s.spec.front.push_back(test::record_bytes(Metadata{"app", {{"application", "tests"}}}));
    s.spec.front.push_back(test::framed(0x80, ByteVec(33, 0x5A)));
    s.spec.after_chunks.push_back(test::record_bytes(Metadata{"late", {{"k", "v"}}}));
    return test::build(s.spec).bytes;
}

}  // namespace

TEST_CASE("M132: a built multi-chunk SH file cut at every byte reads up to the cut, never past "
          "it, and reports the truncation (§11.10, §5.7 M100)",
          "[truncation]") {
    check_file_truncations(built_file(), /*every_byte=*/true);
}

TEST_CASE("M132: the interop fixtures cut at every record boundary and inside every record read "
          "up to the cut (§11.10)",
          "[truncation]") {
    for (const char* name : {"birth-deflate.4dgs", "birth-zstd-sh3-balanced.4dgs",
                             "birth-never-fades-no-index.4dgs", "birth-extras.4dgs"}) {
        DYNAMIC_SECTION(name) { check_file_truncations(test::load_fixture(name), false); }
    }
}

TEST_CASE("M100: a cut inside a chunk's trailing SH band keeps that chunk with the whole bands "
          "before the cut (§6.5)",
          "[truncation]") {
    const ByteVec bytes = built_file();
    const Layout l = layout_of(bytes);
    auto whole = test::stream_read(bytes);
    REQUIRE(whole.ok());
    const Rec& chunk1 = l.records[l.chunks[1]];
    for (int band = 1; band <= 3; ++band) {
        const Rec& b = l.records[l.chunks[1] + std::size_t(band)];
        REQUIRE(b.opcode == op::sh_band);
        REQUIRE(b.band == band);
        for (std::uint64_t cut : {b.offset, b.offset + 3, (b.offset + b.end) / 2, b.end - 1}) {
            INFO("band " << band << " cut at " << cut);
            const ByteVec prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
            auto r = test::stream_read(prefix);
            REQUIRE(r.ok());
            REQUIRE(r->truncation.has_value());
            CHECK(r->gaussians.count == 48);  // chunks 0 and 1
            CHECK(r->gaussians.sh_degree == band - 1);
            require_prefix(r->gaussians, whole->gaussians);
        }
    }
    // Through StreamingReader directly: chunk 0 whole, chunk 1 with fewer bands, then the cut.
    const Rec& band3 = l.records[l.chunks[1] + 3];
    const ByteVec prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(band3.offset + 20));
    MemorySource src(prefix);
    StreamingReader reader(src);
    REQUIRE(reader.open().ok());
    GaussianBlock b;
    auto r0 = reader.next_chunk(b);
    REQUIRE(r0.ok());
    REQUIRE(*r0);
    CHECK(b.sh_degree == 3);
    auto r1 = reader.next_chunk(b);
    REQUIRE(r1.ok());
    REQUIRE(*r1);
    CHECK(b.count == 24);
    CHECK(b.sh_degree == 2);
    CHECK(reader.last_chunk_offset() == chunk1.offset);
    auto r2 = reader.next_chunk(b);
    REQUIRE_FALSE(r2.ok());
    CHECK(r2.error().refusal == "truncated");
    REQUIRE(reader.truncation().has_value());
    CHECK(reader.truncation()->refusal == "truncated");
    CHECK_FALSE(reader.finished());
}

TEST_CASE("M132: a cut file arriving through a pipe (SequentialSource) reads like the same cut "
          "in memory",
          "[truncation][threads]") {
    for (const ByteVec& bytes : {built_file(), test::load_fixture("birth-zstd-sh3-balanced.4dgs")}) {
        const Layout l = layout_of(bytes);
        const Rec& band2 = l.records[l.chunks[1] + 2];
        const Rec& index0 = *std::find_if(l.records.begin(), l.records.end(),
                                          [](const Rec& r) { return r.opcode == op::chunk_index; });
        for (std::uint64_t cut : {band2.offset + 30, l.records[l.chunks[1]].offset + 100,
                                  index0.offset + 12, l.size - 3}) {
            INFO("cut at " << cut);
            const ByteVec prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
            auto mem = test::stream_read(prefix);
            REQUIRE(mem.ok());
            auto piped = test::through_pipe(prefix, [](ByteSource& src) { return read_streaming(src); });
            if (!piped.ok()) FAIL(piped.error().describe());
            REQUIRE(piped->truncation.has_value());
            CHECK(piped->truncation->refusal == "truncated");
            test::require_identical(piped->gaussians, mem->gaussians);
            CHECK(piped->info.index.size() == mem->info.index.size());
        }
    }
}

TEST_CASE("a cut file is refused cleanly by IndexedReader::open, whatever the cut", "[truncation]") {
    const ByteVec bytes = test::load_fixture("birth-deflate.4dgs");
    for (std::uint64_t cut : {std::uint64_t{0}, std::uint64_t{7}, std::uint64_t{8}, std::uint64_t{44},
                              std::uint64_t{45}, std::uint64_t{2000}, std::uint64_t{bytes.size() - 37},
                              std::uint64_t{bytes.size() - 9}, std::uint64_t{bytes.size() - 1}}) {
        INFO("cut at " << cut);
        const ByteVec prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
        MemorySource src(prefix);
        auto r = IndexedReader::open(src);
        REQUIRE_FALSE(r.ok());
        CHECK_FALSE(r.error().refusal.empty());
        CHECK_FALSE(r.error().message.empty());
    }
}
