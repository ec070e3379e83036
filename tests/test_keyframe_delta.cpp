// The keyframe-delta front-end (§11, §5.18, §5.8): the interop fixture through the indexed and
// the streaming path against the other implementation's JSON, bin-for-bin agreement of the two
// paths, the seek plan, one test per §11.9 row built by mutating the fixture minimally, truncation
// at every record boundary (§11.10), and the §5.1 gate of the gaussian-birth readers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fourdgs/detail/keyframe_composition.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/stream.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "fourdgs/wire.hpp"
#include "support/json.hpp"

using namespace fourdgs;
using fourdgs::detail::ComposedPopulation;
using fourdgs::detail::ComposedRowsSink;
using fourdgs::detail::DeltaBins;
using fourdgs::detail::rows_of_ids;

namespace {

using ByteVec = std::vector<std::uint8_t>;

const std::string kFixture = std::string(FOURDGS_TEST_DATA) + "/keyframe-delta-churn";

// Fixture layout (asserted in the first test): record offsets of the six state chunks.
constexpr std::uint64_t kK0 = 517, kD1 = 1765, kD2 = 2820, kK3 = 3884, kD4 = 5186, kD5 = 6260;

ByteVec load_bytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f.good());
    return ByteVec(std::istreambuf_iterator<char>(f), {});
}

const ByteVec& fixture() {
    static const ByteVec bytes = load_bytes(kFixture + ".4dgs");
    return bytes;
}

const test::Json& fixture_json() {
    static const test::Json j = test::Json::parse_file(kFixture + ".json");
    return j;
}

template <class T>
T get_le(const ByteVec& b, std::size_t at) {
    T v;
    std::memcpy(&v, b.data() + at, sizeof v);
    return v;
}
template <class T>
void put_le(ByteVec& b, std::size_t at, T v) {
    std::memcpy(b.data() + at, &v, sizeof v);
}

struct Rec {
    std::uint8_t opcode = 0;
    std::uint64_t offset = 0;  // in the file it was parsed from
    ByteVec content;
};

std::vector<Rec> split_records(const ByteVec& file) {
    std::vector<Rec> out;
    std::size_t at = kMagicSize;
    while (at + kMagicSize < file.size()) {
        Rec r;
        r.opcode = file[at];
        const auto len = get_le<std::uint64_t>(file, at + 1);
        r.offset = at;
        r.content.assign(file.begin() + at + 9, file.begin() + at + 9 + len);
        out.push_back(std::move(r));
        at += 9 + len;
    }
    return out;
}

RecordView view_of(const Rec& r) {
    RecordView v;
    v.opcode = r.opcode;
    v.offset = r.offset;
    v.content_length = r.content.size();
    v.content = r.content;
    return v;
}

template <class R>
ByteVec content_of(const R& record) {
    ByteWriter w;
    write(w, record);
    ByteVec b = w.buffer();
    return ByteVec(b.begin() + 9, b.end());
}

// Re-emits records as a file: record offsets are recomputed, and every offset the file states
// (Chunk Index chunk/band ranges and keyframe fields, Delta Chunk references, Summary Offset,
// Footer) is mapped from the old offsets to the new ones; lengths are recomputed; the summary CRC
// is recomputed. An offset that names no old record is kept as is (a deliberate lie survives).
ByteVec emit(const std::vector<Rec>& recs) {
    std::map<std::uint64_t, std::uint64_t> moved;
    std::map<std::uint64_t, std::uint64_t> length_at;  // new offset -> new total length
    std::uint64_t at = kMagicSize;
    for (const Rec& r : recs) {
        moved[r.offset] = at;
        length_at[at] = 9 + r.content.size();
        at += 9 + r.content.size();
    }
    auto map = [&](std::uint64_t off) {
        auto it = moved.find(off);
        return it == moved.end() ? off : it->second;
    };
    std::vector<Rec> out = recs;
    std::uint64_t summary_start = 0, index_bytes = 0;
    for (Rec& r : out) {
        r.offset = moved[r.offset];
        if (r.opcode == op::delta_chunk) {
            put_le(r.content, 21, map(get_le<std::uint64_t>(r.content, 21)));
            put_le(r.content, 29, map(get_le<std::uint64_t>(r.content, 29)));
        } else if (r.opcode == op::chunk_index) {
            ChunkIndex e = *parse_chunk_index(view_of(r));
            const bool known = moved.count(e.chunk_offset) != 0;
            e.chunk_offset = map(e.chunk_offset);
            if (known) e.chunk_length = length_at[e.chunk_offset];
            for (auto& b : e.bands) {
                const bool bk = moved.count(b.offset) != 0;
                b.offset = map(b.offset);
                if (bk) b.length = length_at[b.offset];
            }
            if (e.keyframe) {
                if (e.keyframe->reference_offset != 0)
                    e.keyframe->reference_offset = map(e.keyframe->reference_offset);
                e.keyframe->keyframe_offset = map(e.keyframe->keyframe_offset);
            }
            r.content = content_of(e);
            if (summary_start == 0) summary_start = r.offset;
            index_bytes += 9 + r.content.size();
        }
    }
    ByteVec file(kMagic.begin(), kMagic.end());
    std::uint64_t footer_at = 0;
    for (Rec& r : out) {
        if (r.opcode == op::summary_offset) {
            SummaryOffset s = *parse_summary_offset(view_of(r));
            s.group_start = map(s.group_start);
            s.group_length = index_bytes;
            r.content = content_of(s);
        }
        if (r.opcode == op::footer) {
            footer_at = file.size();
            const std::uint32_t crc = crc32(Bytes(file).subspan(summary_start));
            Footer f = *parse_footer(view_of(r));
            f.summary_start = summary_start;
            f.summary_offset_start = map(f.summary_offset_start);
            f.summary_crc = f.summary_crc ? crc : 0;
            r.content = content_of(f);
        }
        file.push_back(r.opcode);
        const std::size_t l = file.size();
        file.resize(l + 8);
        put_le<std::uint64_t>(file, l, r.content.size());
        file.insert(file.end(), r.content.begin(), r.content.end());
    }
    (void)footer_at;
    file.insert(file.end(), kMagic.begin(), kMagic.end());
    return file;
}

// Recomputes the Footer's summary_crc after a summary byte was patched in place.
void fix_crc(ByteVec& file) {
    const std::size_t footer = file.size() - kTailSize;
    const auto start = get_le<std::uint64_t>(file, footer + 9);
    put_le(file, footer + 9 + 16,
           crc32(Bytes(file).subspan(start, footer - start)));
}

Rec& rec_at(std::vector<Rec>& recs, std::uint64_t offset) {
    for (Rec& r : recs)
        if (r.offset == offset) return r;
    FAIL("no record at " << offset);
    return recs.front();
}

std::vector<std::size_t> index_record_positions(const std::vector<Rec>& recs) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < recs.size(); ++i)
        if (recs[i].opcode == op::chunk_index) out.push_back(i);
    return out;
}

// Patches Chunk Index entry `k` in place (its length does not change) and fixes the CRC.
ByteVec with_index(const ByteVec& file, std::size_t k, const std::function<void(ChunkIndex&)>& f) {
    std::vector<Rec> recs = split_records(file);
    const Rec& r = recs[index_record_positions(recs).at(k)];
    ChunkIndex e = *parse_chunk_index(view_of(r));
    f(e);
    ByteVec c = content_of(e);
    REQUIRE(c.size() == r.content.size());
    ByteVec out = file;
    std::copy(c.begin(), c.end(), out.begin() + r.offset + 9);
    fix_crc(out);
    return out;
}

// Rewrites Chunk Index entry `k` among `recs` (before emit, which fixes offsets and the CRC).
void patch_index(std::vector<Rec>& recs, std::size_t k, const std::function<void(ChunkIndex&)>& f) {
    Rec& r = recs[index_record_positions(recs).at(k)];
    ChunkIndex e = *parse_chunk_index(view_of(r));
    f(e);
    r.content = content_of(e);
}

// Patches the header fields of the Delta Chunk at `offset` in place.
ByteVec with_delta_header(const ByteVec& file, std::uint64_t offset,
                          const std::function<void(DeltaChunk&)>& f) {
    std::vector<Rec> recs = split_records(file);
    const Rec& r = rec_at(recs, offset);
    DeltaChunk d = *parse_delta_chunk(view_of(r));
    ByteVec block(d.records.begin(), d.records.end());
    d.records = block;
    f(d);
    ByteVec c = content_of(d);
    REQUIRE(c.size() == r.content.size());
    ByteVec out = file;
    std::copy(c.begin(), c.end(), out.begin() + offset + 9);
    return out;
}

// Streams of a block, decoded to values, for re-encoding.
struct StreamVals {
    std::uint8_t id = 0, channels = 1;
    std::vector<std::int32_t> v;
    std::uint32_t count() const { return static_cast<std::uint32_t>(v.size() / channels); }
};
using Group = std::vector<StreamVals>;

Group decode_group(Bytes block) {
    Group g;
    auto streams = split_streams(block, 0);
    REQUIRE(streams.ok());
    StreamScratch scratch;
    for (const StreamView& s : *streams) {
        auto v = decode_stream(s, scratch);
        REQUIRE(v.ok());
        g.push_back({s.header.attribute_id, s.header.channels, std::move(*v)});
    }
    return g;
}

ByteVec encode_group(const Group& g) {
    ByteWriter w;
    for (const StreamVals& s : g) REQUIRE(encode_stream(w, s.id, s.channels, s.v).ok());
    return w.buffer();
}

StreamVals* find(Group& g, std::uint8_t id) {
    for (StreamVals& s : g)
        if (s.id == id) return &s;
    return nullptr;
}

void erase_stream(Group& g, std::uint8_t id) {
    g.erase(std::remove_if(g.begin(), g.end(), [&](const StreamVals& s) { return s.id == id; }),
            g.end());
}

void erase_element(Group& g, std::uint32_t k) {
    for (StreamVals& s : g) {
        s.v.erase(s.v.begin() + std::size_t{k} * s.channels,
                  s.v.begin() + std::size_t{k + 1} * s.channels);
    }
}

struct DeltaEdit {
    DeltaChunk header;  // scalars; records rebuilt
    Group updates, births, deaths;
};

DeltaEdit read_delta(const Rec& r) {
    DeltaEdit e;
    e.header = *parse_delta_chunk(view_of(r));
    REQUIRE(e.header.compression.empty());
    auto g = split_delta_groups(e.header.records, 0);
    REQUIRE(g.ok());
    e.updates = decode_group(g->updates);
    e.births = decode_group(g->births);
    e.deaths = decode_group(g->deaths);
    e.header.records = {};
    return e;
}

void write_delta(Rec& r, DeltaEdit e, std::string compression = "") {
    ByteWriter block;
    const ByteVec u = encode_group(e.updates), b = encode_group(e.births),
                  d = encode_group(e.deaths);
    write_delta_groups(block, u, b, d);
    ByteVec raw = block.buffer();
    e.header.uncompressed_size = raw.size();
    ByteVec stored = raw;
    if (compression == "deflate") REQUIRE(compress(codec::deflate, 6, raw, stored).ok());
    e.header.compression = compression;
    e.header.records = stored;
    r.content = content_of(e.header);
}

struct ChunkEdit {
    ChunkRecord header;
    Group streams;
};

ChunkEdit read_chunk(const Rec& r) {
    ChunkEdit e;
    e.header = *parse_chunk(view_of(r));
    REQUIRE(e.header.compression.empty());
    e.streams = decode_group(e.header.records);
    e.header.records = {};
    return e;
}

void write_chunk(Rec& r, ChunkEdit e) {
    ByteVec raw = encode_group(e.streams);
    e.header.uncompressed_size = raw.size();
    e.header.records = raw;
    r.content = content_of(e.header);
}

// ---------------------------------------------------------------------------------------------
// Running the two paths.

struct Outcome {
    std::vector<ChunkBins> states;     // one per state chunk (streaming) or per instant (indexed)
    std::vector<StateInfo> infos;
    std::optional<Error> error;
};

Outcome run_streaming(const ByteVec& file, ReaderOptions options = {}) {
    MemorySource src(file);
    KeyframeDeltaStream s(src, options);
    Outcome o;
    while (true) {
        ChunkBins bins;
        StateInfo info;
        auto r = s.next_state_bins(bins, &info);
        if (!r.ok()) {
            o.error = r.error();
            break;
        }
        if (!*r) break;
        o.states.push_back(std::move(bins));
        o.infos.push_back(info);
    }
    return o;
}

// The indexed path at every state chunk's t0 and midpoint, in time order.
Outcome run_indexed(const ByteVec& file, ReaderOptions options = {}) {
    MemorySource src(file);
    Outcome o;
    auto reader = KeyframeDeltaReader::open(src, options);
    if (!reader.ok()) {
        o.error = reader.error();
        return o;
    }
    KeyframeDeltaWorkspace ws;
    for (std::size_t e : reader->timeline().by_time()) {
        const ChunkIndex& entry = reader->timeline().entries()[e];
        for (double t : {entry.t0, 0.5 * (entry.t0 + entry.t1)}) {
            StateInfo info;
            auto st = reader->state_bins_at(t, ws, &info);
            if (!st.ok()) {
                o.error = st.error();
                return o;
            }
            if (t == entry.t0) {
                o.states.push_back(ws.composed);
                o.infos.push_back(info);
            }
        }
    }
    return o;
}

void require_refusal(const Outcome& o, const std::string& refusal,
                     std::initializer_list<std::string> mentions = {}) {
    INFO("expected refusal " << refusal);
    REQUIRE(o.error.has_value());
    INFO(o.error->describe());
    CHECK(o.error->refusal == refusal);
    for (const std::string& m : mentions) CHECK_THAT(o.error->message, Catch::Contains(m));
}

void require_clean(const Outcome& o) {
    if (o.error) FAIL(o.error->describe());
}

bool same_bins(const ChunkBins& a, const ChunkBins& b) {
    bool same = a.count == b.count && a.position == b.position && a.scale == b.scale &&
                a.rotation_index == b.rotation_index && a.rotation == b.rotation &&
                a.color == b.color && a.opacity == b.opacity && a.motion == b.motion &&
                a.mu_t == b.mu_t && a.sigma_t == b.sigma_t && a.flags == b.flags &&
                a.window_index == b.window_index && a.gaussian_id == b.gaussian_id &&
                a.has_gaussian_id == b.has_gaussian_id && a.has_object_id == b.has_object_id &&
                a.object_id == b.object_id && a.sh_bands == b.sh_bands;
    for (int k = 0; k < a.sh_bands && same; ++k) same = a.sh[k] == b.sh[k];
    return same;
}

const Outcome& reference_streaming() {
    static const Outcome o = run_streaming(fixture());
    return o;
}

// Ids of a group's gaussian_id stream, as u32.
std::vector<std::uint32_t> ids(Group g) {
    StreamVals* s = find(g, attr::gaussian_id);
    REQUIRE(s != nullptr);
    return std::vector<std::uint32_t>(s->v.begin(), s->v.end());
}

// §3 at t, compared with one JSON state.
void compare_with_json(const GaussianBlock& block, double t, const test::Json& state) {
    const auto& rows = state.find("rows")->items();
    REQUIRE(block.count == rows.size());
    REQUIRE(block.gaussian_id.size() == block.count);
    constexpr double tol = 1e-5;
    for (std::size_t i = 0; i < block.count; ++i) {
        const auto& row = rows[i].items();
        INFO("t = " << t << ", gaussian " << i);
        CHECK(block.gaussian_id[i] == static_cast<std::uint32_t>(row[0].number()));
        const double dt = t - block.mu_t[i];
        for (int c = 0; c < 3; ++c) {
            CHECK(block.position[i * 3 + c] + block.motion[i * 3 + c] * dt ==
                  Approx(row[1 + c].number()).margin(tol));
            CHECK(block.scale[i * 3 + c] == Approx(row[4 + c].number()).margin(tol));
        }
        std::array<double, 4> q;
        int big = 0;
        for (int c = 0; c < 4; ++c) {
            q[c] = block.rotation[i * 4 + c];
            if (std::fabs(q[c]) > std::fabs(q[big])) big = c;
        }
        const double sign = q[big] < 0 ? -1.0 : 1.0;
        for (int c = 0; c < 4; ++c) CHECK(sign * q[c] == Approx(row[7 + c].number()).margin(tol));
        for (int c = 0; c < 3; ++c)
            CHECK(block.color[i * 4 + c] == Approx(row[11 + c].number()).margin(tol));
        double marginal = 1.0;
        if (!std::isinf(block.sigma_t[i])) {
            const double z = dt / block.sigma_t[i];
            marginal = std::exp(-0.5 * z * z);
        }
        CHECK(block.color[i * 4 + 3] * marginal == Approx(row[14].number()).margin(tol));
    }
}

}  // namespace

// ---------------------------------------------------------------------------------------------

TEST_CASE("keyframe-delta fixture: the indexed path reproduces every state of the interop JSON "
          "(§11.3, §11.8)",
          "[keyframe-delta]") {
    const std::vector<Rec> recs = split_records(fixture());
    std::vector<std::uint64_t> states;
    for (const Rec& r : recs)
        if (r.opcode == op::chunk || r.opcode == op::delta_chunk) states.push_back(r.offset);
    REQUIRE(states == std::vector<std::uint64_t>{kK0, kD1, kD2, kK3, kD4, kD5});

    MemorySource src(fixture());
    auto reader = KeyframeDeltaReader::open(src);
    REQUIRE(reader.ok());
    CHECK(reader->scene().header.temporal_model == "keyframe-delta");
    KeyframeDeltaWorkspace ws;
    GaussianBlock block;
    for (const test::Json& state : fixture_json().find("states")->items()) {
        const double t = state.find("t")->number();
        INFO("t = " << t);
        auto plan = reader->plan(t);
        REQUIRE(plan.ok());
        const ChunkIndex& cur = reader->timeline().entries()[plan->current];
        CHECK(cur.t0 == state.find("chunk_t0")->number());
        const std::string kind = state.find("kind")->str();
        CHECK(cur.keyframe->chunk_kind == (kind == "keyframe" ? 0 : 1));
        CHECK(cur.keyframe->depth == state.find("depth")->number());
        CHECK(plan->chain.size() == cur.keyframe->depth + 1u);

        const std::uint64_t before = reader->bytes_fetched();
        StateInfo info;
        auto st = reader->state_at(t, block, ws, &info);
        if (!st.ok()) FAIL(st.error().describe());
        // §11.8: the seek fetched exactly what the index said it would cost.
        CHECK(reader->bytes_fetched() - before == plan->total_bytes());
        CHECK(info.live_count == state.find("live")->number());
        CHECK(info.depth == state.find("depth")->number());
        compare_with_json(block, t, state);
    }
}

TEST_CASE("keyframe-delta fixture: the streaming path reproduces every state of the interop "
          "JSON and agrees with the indexed path bin for bin (§11.3, §11.7)",
          "[keyframe-delta]") {
    MemorySource src(fixture());
    KeyframeDeltaStream stream(src);
    std::vector<ChunkBins> streamed;
    GaussianBlock block;
    const auto& states = fixture_json().find("states")->items();
    std::size_t compared = 0;
    while (true) {
        StateInfo info;
        auto r = stream.next_state(block, &info);
        if (!r.ok()) FAIL(r.error().describe());
        if (!*r) break;
        for (const test::Json& state : states) {
            if (state.find("chunk_t0")->number() != info.t0) continue;
            CHECK(info.live_count == state.find("live")->number());
            CHECK(info.depth == state.find("depth")->number());
            CHECK(info.chunk_kind == (state.find("kind")->str() == "keyframe" ? 0 : 1));
            compare_with_json(block, state.find("t")->number(), state);
            ++compared;
        }
    }
    CHECK(compared == states.size());
    CHECK(stream.finished());
    CHECK(stream.scene().summary_crc_verified);
    // §5.1: gaussian_count is the number of distinct ids.
    CHECK(stream.distinct_ids() == stream.scene().header.gaussian_count);

    const Outcome s = run_streaming(fixture());
    const Outcome ix = run_indexed(fixture());
    require_clean(s);
    require_clean(ix);
    REQUIRE(s.states.size() == 6);
    REQUIRE(ix.states.size() == 6);
    for (std::size_t k = 0; k < 6; ++k) {
        INFO("state chunk " << k);
        CHECK(same_bins(s.states[k], ix.states[k]));
        CHECK(s.infos[k].offset == ix.infos[k].offset);
        CHECK(s.infos[k].live_count == ix.infos[k].live_count);
    }
}

TEST_CASE("keyframe-delta: current(t), chain(t) and the seek cost come from the index alone "
          "(§11.8)",
          "[keyframe-delta]") {
    MemorySource src(fixture());
    auto reader = KeyframeDeltaReader::open(src);
    REQUIRE(reader.ok());
    const std::uint64_t after_open = reader->bytes_fetched();
    const auto& ix = reader->timeline().entries();
    auto chain = reader->chain(2.5);
    REQUIRE(chain.ok());
    REQUIRE(chain->size() == 3);
    CHECK(ix[(*chain)[0]].chunk_offset == kK0);
    CHECK(ix[(*chain)[1]].chunk_offset == kD1);
    CHECK(ix[(*chain)[2]].chunk_offset == kD2);
    auto plan = reader->plan(2.5);
    REQUIRE(plan.ok());
    CHECK(plan->chunk_bytes == 1248 + 1055 + 1064);
    CHECK(plan->band_bytes == 0);
    CHECK(ix[*reader->current(3.0)].chunk_offset == kK3);
    CHECK(ix[*reader->current(5.999)].chunk_offset == kD5);
    CHECK(reader->chain(3.5)->size() == 1);
    CHECK(reader->current(6.0).error().refusal == "time-out-of-range");
    CHECK(reader->current(-0.25).error().refusal == "time-out-of-range");
    CHECK(reader->current(std::nan("")).error().refusal == "time-out-of-range");
    CHECK(reader->bytes_fetched() == after_open);  // none of that fetched anything
}

TEST_CASE("M015/M109: the gaussian-birth readers still refuse a keyframe-delta file, naming the "
          "model",
          "[keyframe-delta]") {
    MemorySource src(fixture());
    auto indexed = IndexedReader::open(src);
    REQUIRE_FALSE(indexed.ok());
    CHECK(indexed.error().refusal == "unknown-temporal-model");
    CHECK_THAT(indexed.error().message, Catch::Contains("keyframe-delta"));

    StreamingReader streaming(src);
    auto opened = streaming.open();
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.error().refusal == "unknown-temporal-model");
    CHECK_THAT(opened.error().message, Catch::Contains("keyframe-delta"));

    auto loaded = read_streaming(src);
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.error().refusal == "unknown-temporal-model");

    // And the keyframe-delta front-end refuses a gaussian-birth file, naming its model.
    const ByteVec birth = load_bytes(std::string(FOURDGS_TEST_DATA) + "/birth-deflate.4dgs");
    MemorySource bsrc(birth);
    auto kd = KeyframeDeltaReader::open(bsrc);
    REQUIRE_FALSE(kd.ok());
    CHECK(kd.error().refusal == "unknown-temporal-model");
    CHECK_THAT(kd.error().message, Catch::Contains("gaussian-birth"));
    require_refusal(run_streaming(birth), "unknown-temporal-model", {"gaussian-birth"});
}

// ---------------------------------------------------------------------------------------------
// §11.9, one row at a time.

TEST_CASE("M110/M118: state chunks that leave a gap are refused, naming the two intervals",
          "[keyframe-delta]") {
    // Index: [1, 2) shortened to [1, 1.5).
    require_refusal(run_indexed(with_index(fixture(), 1, [](ChunkIndex& e) { e.t1 = 1.5; })),
                    "timeline-gap", {"[1, 1.5)", "[2, 3)"});
    // Record: the Delta Chunk's own interval, seen by the streaming path as chunks arrive.
    const ByteVec rec = with_delta_header(fixture(), kD1, [](DeltaChunk& d) { d.t1 = 1.5; });
    require_refusal(run_streaming(rec), "timeline-gap", {"[1, 1.5)", "[2, 3)"});
    require_refusal(run_indexed(rec), "index-record-mismatch", {"t0/t1"});
    // The first t0 must be 0.
    require_refusal(run_indexed(with_index(fixture(), 0, [](ChunkIndex& e) { e.t0 = 0.5; })),
                    "timeline-gap", {"[0.5, 1)"});
    // The last t1 must be the Header's duration: lengthen the duration (Header content byte 44).
    ByteVec longer = fixture();
    put_le(longer, 8 + 9 + 44, 7.0);
    require_refusal(run_indexed(longer), "timeline-gap", {"[5, 6)", "7"});
    require_refusal(run_streaming(longer), "timeline-gap", {"[5, 6)", "7"});
}

TEST_CASE("M110/M118: overlapping state chunks are refused as non-tiling, naming both intervals",
          "[keyframe-delta]") {
    require_refusal(run_indexed(with_index(fixture(), 1, [](ChunkIndex& e) { e.t1 = 2.5; })),
                    "non-tiling-chunks", {"[1, 2.5)", "[2, 3)"});
    const ByteVec rec = with_delta_header(fixture(), kD1, [](DeltaChunk& d) { d.t1 = 2.5; });
    require_refusal(run_streaming(rec), "non-tiling-chunks", {"[1, 2.5)", "[2, 3)"});
    ByteVec shorter = fixture();
    put_le(shorter, 8 + 9 + 44, 5.5);
    require_refusal(run_indexed(shorter), "non-tiling-chunks", {"[5, 6)", "5.5"});
    require_refusal(run_streaming(shorter), "non-tiling-chunks", {"[5, 6)", "5.5"});
}

TEST_CASE("M096/M119: a forward or self reference is refused", "[keyframe-delta]") {
    for (std::uint64_t ref : {kK3, kD2}) {
        INFO("reference_offset " << ref);
        require_refusal(
            run_indexed(with_index(fixture(), 2, [&](ChunkIndex& e) {
                e.keyframe->reference_offset = ref;
            })),
            "forward-reference", {std::to_string(ref)});
        const ByteVec rec =
            with_delta_header(fixture(), kD2, [&](DeltaChunk& d) { d.reference_offset = ref; });
        require_refusal(run_streaming(rec), "forward-reference", {std::to_string(ref)});
        require_refusal(run_indexed(rec), "index-record-mismatch", {"reference_offset"});
    }
}

TEST_CASE("M120: a reference_offset that names no index entry is refused", "[keyframe-delta]") {
    require_refusal(run_indexed(with_index(fixture(), 2,
                                           [](ChunkIndex& e) { e.keyframe->reference_offset = 1000; })),
                    "broken-reference", {"1000"});
    const ByteVec rec =
        with_delta_header(fixture(), kD2, [](DeltaChunk& d) { d.reference_offset = 1000; });
    require_refusal(run_streaming(rec), "broken-reference", {"1000"});
}

TEST_CASE("M122: a chain that reaches the file's start without a keyframe is refused",
          "[keyframe-delta]") {
    // A delta whose reference lies before every state chunk.
    require_refusal(run_indexed(with_index(fixture(), 1,
                                           [](ChunkIndex& e) { e.keyframe->reference_offset = 100; })),
                    "chain-without-keyframe", {"100"});
    // The first keyframe's entry claims to be a delta: its chain has nowhere to go.
    require_refusal(run_indexed(with_index(fixture(), 0, [](ChunkIndex& e) {
                        e.keyframe->chunk_kind = 1;
                        e.keyframe->depth = 1;
                    })),
                    "chain-without-keyframe");
    // A delta naming a keyframe its chain does not reach.
    require_refusal(run_indexed(with_index(fixture(), 2,
                                           [](ChunkIndex& e) { e.keyframe->keyframe_offset = kK3; })),
                    "chain-without-keyframe", {std::to_string(kK3)});
    const ByteVec rec =
        with_delta_header(fixture(), kD4, [](DeltaChunk& d) { d.keyframe_offset = kK0; });
    require_refusal(run_streaming(rec), "chain-without-keyframe", {std::to_string(kK0)});
    // A file whose first state chunk is a delta: drop the first keyframe from the stream.
    std::vector<Rec> recs = split_records(fixture());
    recs.erase(std::remove_if(recs.begin(), recs.end(),
                              [](const Rec& r) { return r.offset == kK0; }),
               recs.end());
    const ByteVec headless = emit(recs);
    require_refusal(run_streaming(headless), "timeline-gap");  // [0, 1) is gone first
    // ... and once the delta claims [0, 2), there is nothing for it to compose onto.
    const ByteVec orphan = with_delta_header(headless, kK0, [](DeltaChunk& d) {
        d.t0 = 0;
        d.reference_offset = 100;
    });
    require_refusal(run_streaming(orphan), "chain-without-keyframe", {"100"});
}

TEST_CASE("M117/M121: a chain walk whose length disagrees with depth + 1 is refused, naming both",
          "[keyframe-delta]") {
    require_refusal(run_indexed(with_index(fixture(), 2, [](ChunkIndex& e) { e.keyframe->depth = 3; })),
                    "depth-mismatch", {"depth 3", "walks 3"});
    const ByteVec rec = with_delta_header(fixture(), kD2, [](DeltaChunk& d) { d.depth = 3; });
    require_refusal(run_streaming(rec), "depth-mismatch", {"depth 3", "composes 2"});
    require_refusal(run_indexed(rec), "index-record-mismatch", {"'depth'"});
}

TEST_CASE("M033/M123: an index that disagrees with the Delta Chunk or Chunk it frames is "
          "refused, naming the field",
          "[keyframe-delta]") {
    // The record says it references the keyframe, the index says the chained predecessor.
    const ByteVec ref =
        with_delta_header(fixture(), kD2, [](DeltaChunk& d) { d.reference_offset = kK0; });
    require_refusal(run_indexed(ref), "index-record-mismatch", {"'reference_offset'"});
    require_refusal(run_streaming(ref), "delta-mode-mismatch", {std::to_string(kK0)});
    // delta_mode: the index turns [1, 2) into a keyframe-referenced delta (a consistent chain).
    const ByteVec mode =
        with_index(fixture(), 1, [](ChunkIndex& e) { e.keyframe->delta_mode = 0; });
    require_refusal(run_indexed(mode), "index-record-mismatch", {"'delta_mode'"});
    require_refusal(run_streaming(mode), "index-record-mismatch", {"'delta_mode'"});
    // A keyframe entry's keyframe_offset must be its own chunk_offset.
    const ByteVec kf =
        with_index(fixture(), 3, [](ChunkIndex& e) { e.keyframe->keyframe_offset = kK0; });
    require_refusal(run_indexed(kf), "index-record-mismatch", {"'keyframe_offset'"});
    require_refusal(run_streaming(kf), "index-record-mismatch", {"'keyframe_offset'"});
    // live_count must be the composed population's size.
    const ByteVec live =
        with_index(fixture(), 4, [](ChunkIndex& e) { e.keyframe->live_count = 99; });
    require_refusal(run_indexed(live), "index-record-mismatch", {"'live_count'", "99", "44"});
    require_refusal(run_streaming(live), "index-record-mismatch", {"'live_count'", "99", "44"});
    // gaussian_count of a delta entry is update + birth + death.
    const ByteVec count = with_index(fixture(), 1, [](ChunkIndex& e) { e.gaussian_count = 41; });
    require_refusal(run_indexed(count), "index-record-mismatch", {"'gaussian_count'", "44"});
    require_refusal(run_streaming(count), "index-record-mismatch", {"'gaussian_count'"});
    // chunk_kind: a delta entry that says keyframe.
    const ByteVec kind = with_index(fixture(), 5, [](ChunkIndex& e) {
        *e.keyframe = {0, 0, 0, e.chunk_offset, 0, e.keyframe->live_count};
    });
    require_refusal(run_indexed(kind), "index-record-mismatch", {"'chunk_kind'"});
    require_refusal(run_streaming(kind), "index-record-mismatch", {"'chunk_kind'"});
}

TEST_CASE("M124: an update or a death naming an id that is not live is refused",
          "[keyframe-delta]") {
    for (int group = 0; group < 2; ++group) {
        std::vector<Rec> recs = split_records(fixture());
        DeltaEdit e = read_delta(rec_at(recs, kD1));
        Group& g = group == 0 ? e.deaths : e.updates;
        find(g, attr::gaussian_id)->v[1] = 999999;
        write_delta(rec_at(recs, kD1), e);
        const ByteVec file = emit(recs);
        INFO((group == 0 ? "death" : "update"));
        require_refusal(run_indexed(file), "unknown-gaussian-id", {"999999"});
        require_refusal(run_streaming(file), "unknown-gaussian-id", {"999999"});
    }
}

TEST_CASE("M125: a birth naming an id that is already live is refused", "[keyframe-delta]") {
    std::vector<Rec> recs = split_records(fixture());
    DeltaEdit e = read_delta(rec_at(recs, kD1));
    // Stop updating one survivor, then "bear" it again.
    const std::uint32_t survivor = ids(e.updates)[5];
    erase_element(e.updates, 5);
    e.header.update_count -= 1;
    find(e.births, attr::gaussian_id)->v[0] = static_cast<std::int32_t>(survivor);
    write_delta(rec_at(recs, kD1), e);
    patch_index(recs, 1, [](ChunkIndex& ie) { ie.gaussian_count -= 1; });
    const ByteVec file = emit(recs);
    require_refusal(run_indexed(file), "duplicate-gaussian-id",
                    {std::to_string(survivor), "already live"});
    require_refusal(run_streaming(file), "duplicate-gaussian-id", {std::to_string(survivor)});
}

TEST_CASE("M113/M126: an id in two groups of one chunk is refused", "[keyframe-delta]") {
    std::vector<Rec> recs = split_records(fixture());
    DeltaEdit e = read_delta(rec_at(recs, kD1));
    const std::uint32_t dying = ids(e.deaths)[0];
    find(e.births, attr::gaussian_id)->v[0] = static_cast<std::int32_t>(dying);
    write_delta(rec_at(recs, kD1), e);
    const ByteVec file = emit(recs);
    require_refusal(run_indexed(file), "gaussian-id-in-two-groups",
                    {std::to_string(dying), "death", "birth"});
    require_refusal(run_streaming(file), "gaussian-id-in-two-groups", {std::to_string(dying)});
}

TEST_CASE("M111/M127: a duplicate id within one state is refused, naming the id",
          "[keyframe-delta]") {
    std::vector<Rec> recs = split_records(fixture());
    ChunkEdit k = read_chunk(rec_at(recs, kK3));
    StreamVals* id = find(k.streams, attr::gaussian_id);
    id->v[2] = id->v[0];
    const std::string dup = std::to_string(static_cast<std::uint32_t>(id->v[0]));
    write_chunk(rec_at(recs, kK3), k);
    const ByteVec file = emit(recs);
    require_refusal(run_indexed(file), "duplicate-gaussian-id", {dup});
    require_refusal(run_streaming(file), "duplicate-gaussian-id", {dup});
    // Within one group, too.
    std::vector<Rec> r2 = split_records(fixture());
    DeltaEdit e = read_delta(rec_at(r2, kD1));
    StreamVals* u = find(e.updates, attr::gaussian_id);
    u->v[3] = u->v[4];
    write_delta(rec_at(r2, kD1), e);
    require_refusal(run_streaming(emit(r2)), "duplicate-gaussian-id",
                    {std::to_string(static_cast<std::uint32_t>(u->v[4]))});
}

TEST_CASE("M112: an id reused after the gaussian carrying it died is refused", "[keyframe-delta]") {
    std::vector<Rec> recs = split_records(fixture());
    const std::uint32_t died = ids(read_delta(rec_at(recs, kD1)).deaths)[0];
    DeltaEdit e = read_delta(rec_at(recs, kD2));
    find(e.births, attr::gaussian_id)->v[0] = static_cast<std::int32_t>(died);
    write_delta(rec_at(recs, kD2), e);
    const ByteVec file = emit(recs);
    require_refusal(run_indexed(file), "gaussian-id-reused", {std::to_string(died)});
    require_refusal(run_streaming(file), "gaussian-id-reused", {std::to_string(died)});
    // Across GOPs (streaming sees the whole timeline): the next keyframe restates a dead id.
    std::vector<Rec> r2 = split_records(fixture());
    ChunkEdit k = read_chunk(rec_at(r2, kK3));
    find(k.streams, attr::gaussian_id)->v[0] = static_cast<std::int32_t>(died);
    write_chunk(rec_at(r2, kK3), k);
    require_refusal(run_streaming(emit(r2)), "gaussian-id-reused", {std::to_string(died)});
}

TEST_CASE("M094/M114/M128: sigma_t, flags, window_index or a lone rotation_index in an update "
          "group is refused",
          "[keyframe-delta]") {
    for (std::uint8_t id : {attr::sigma_t, attr::flags, attr::window_index}) {
        std::vector<Rec> recs = split_records(fixture());
        DeltaEdit e = read_delta(rec_at(recs, kD1));
        e.updates.push_back({id, 1, std::vector<std::int32_t>(e.header.update_count, 0)});
        write_delta(rec_at(recs, kD1), e);
        const ByteVec file = emit(recs);
        INFO(attr::kNames[id]);
        require_refusal(run_indexed(file), "invariant-changed-in-update", {attr::kNames[id]});
        require_refusal(run_streaming(file), "invariant-changed-in-update", {attr::kNames[id]});
    }
    std::vector<Rec> recs = split_records(fixture());
    DeltaEdit e = read_delta(rec_at(recs, kD1));
    REQUIRE(find(e.updates, attr::rotation_index));
    erase_stream(e.updates, attr::rotation);
    write_delta(rec_at(recs, kD1), e);
    require_refusal(run_streaming(emit(recs)), "invariant-changed-in-update", {"rotation_index"});
}

TEST_CASE("§11.5: rotation in an update is an absolute restatement, not a difference",
          "[keyframe-delta]") {
    // Restate gaussian k's rotation to a chosen absolute value; every other bin is unchanged.
    std::vector<Rec> recs = split_records(fixture());
    DeltaEdit e = read_delta(rec_at(recs, kD1));
    const std::uint32_t who = ids(e.updates)[7];
    find(e.updates, attr::rotation_index)->v[7] = 3;
    auto& rot = find(e.updates, attr::rotation)->v;
    rot[21] = 11, rot[22] = -22, rot[23] = 33;
    write_delta(rec_at(recs, kD1), e);
    const Outcome o = run_streaming(emit(recs));
    require_clean(o);
    const ChunkBins& s = o.states[1];
    const ChunkBins& ref = reference_streaming().states[1];
    for (std::uint32_t i = 0; i < s.count; ++i) {
        if (static_cast<std::uint32_t>(s.gaussian_id[i]) != who) continue;
        CHECK(s.rotation_index[i] == 3);
        CHECK(s.rotation[i * 3 + 0] == 11);
        CHECK(s.rotation[i * 3 + 1] == -22);
        CHECK(s.rotation[i * 3 + 2] == 33);
        CHECK(s.position[i * 3] == ref.position[i * 3]);
    }
}

TEST_CASE("M129: a stream whose element_count differs from its group's count is refused",
          "[keyframe-delta]") {
    // Length-preserving: the first update stream's element_count, in place. The uncompressed
    // block starts at 1845; the updates sub-block's first stream at +8; element_count at +5.
    ByteVec file = fixture();
    const std::size_t at = 1845 + 8 + 5;
    REQUIRE(file[1845 + 8] == attr::gaussian_id);
    REQUIRE(get_le<std::uint32_t>(file, at) == 37);
    put_le<std::uint32_t>(file, at, 36);
    require_refusal(run_indexed(file), "stream-element-count-mismatch", {"36", "37"});
    require_refusal(run_streaming(file), "stream-element-count-mismatch", {"36", "37"});
    // A death stream one short of death_count, re-encoded.
    std::vector<Rec> recs = split_records(fixture());
    DeltaEdit e = read_delta(rec_at(recs, kD2));
    find(e.deaths, attr::gaussian_id)->v.pop_back();
    write_delta(rec_at(recs, kD2), e);
    require_refusal(run_streaming(emit(recs)), "stream-element-count-mismatch", {"death"});
}

TEST_CASE("M116/M130: a composed bin outside i32 is refused, naming attribute, id and chunk",
          "[keyframe-delta]") {
    std::vector<Rec> recs = split_records(fixture());
    DeltaEdit e = read_delta(rec_at(recs, kD1));
    const std::uint32_t who = ids(e.updates)[0];
    ChunkEdit k = read_chunk(rec_at(recs, kK0));
    const auto kid = ids(k.streams);
    const std::size_t row = std::find(kid.begin(), kid.end(), who) - kid.begin();
    REQUIRE(row < kid.size());
    find(k.streams, attr::position)->v[row * 3 + 1] = std::numeric_limits<std::int32_t>::max() - 3;
    find(e.updates, attr::position)->v[1] = 10;
    write_chunk(rec_at(recs, kK0), k);
    write_delta(rec_at(recs, kD1), e);
    const ByteVec file = emit(recs);
    const std::string id = "gaussian_id " + std::to_string(who);
    require_refusal(run_indexed(file), "composed-bin-out-of-range",
                    {"position[1]", id, "Delta Chunk at byte", "[1, 2)"});
    require_refusal(run_streaming(file), "composed-bin-out-of-range", {"position[1]", id});
}

TEST_CASE("M097/M115/M131: a delta whose level differs from its reference's is refused, naming "
          "both",
          "[keyframe-delta]") {
    const ByteVec file = with_delta_header(fixture(), kD1, [](DeltaChunk& d) { d.level = 1; });
    require_refusal(run_indexed(file), "level-mismatch", {"level 1", "level 0"});
    require_refusal(run_streaming(file), "level-mismatch", {"level 1", "level 0"});
}

TEST_CASE("M093: a Delta Chunk's compression is honoured, or refused naming the codec",
          "[keyframe-delta]") {
    std::vector<Rec> recs = split_records(fixture());
    write_delta(rec_at(recs, kD1), read_delta(rec_at(recs, kD1)), "deflate");
    write_delta(rec_at(recs, kD4), read_delta(rec_at(recs, kD4)), "deflate");
    const ByteVec file = emit(recs);
    const Outcome s = run_streaming(file), ix = run_indexed(file);
    require_clean(s);
    require_clean(ix);
    REQUIRE(s.states.size() == 6);
    REQUIRE(ix.states.size() == 6);
    for (std::size_t k = 0; k < 6; ++k) {
        CHECK(same_bins(s.states[k], reference_streaming().states[k]));
        CHECK(same_bins(ix.states[k], reference_streaming().states[k]));
    }
    // An unknown chunk-level codec: refused by name.
    std::vector<Rec> r2 = split_records(fixture());
    DeltaEdit e = read_delta(rec_at(r2, kD1));
    write_delta(rec_at(r2, kD1), e);
    DeltaChunk d = *parse_delta_chunk(view_of(rec_at(r2, kD1)));
    ByteVec block(d.records.begin(), d.records.end());
    d.records = block;
    d.compression = "lz5";
    rec_at(r2, kD1).content = content_of(d);
    const ByteVec bad = emit(r2);
    require_refusal(run_indexed(bad), "unknown-chunk-compression", {"lz5"});
    require_refusal(run_streaming(bad), "unknown-chunk-compression", {"lz5"});
}

TEST_CASE("§11.2: a keyframe chunk or a delta group without gaussian_id is refused",
          "[keyframe-delta]") {
    std::vector<Rec> recs = split_records(fixture());
    ChunkEdit k = read_chunk(rec_at(recs, kK0));
    erase_stream(k.streams, attr::gaussian_id);
    write_chunk(rec_at(recs, kK0), k);
    const ByteVec file = emit(recs);
    require_refusal(run_indexed(file), "missing-gaussian-id");
    require_refusal(run_streaming(file), "missing-gaussian-id");
    for (int group = 0; group < 3; ++group) {
        std::vector<Rec> r2 = split_records(fixture());
        DeltaEdit e = read_delta(rec_at(r2, kD1));
        erase_stream(group == 0 ? e.updates : group == 1 ? e.births : e.deaths, attr::gaussian_id);
        write_delta(rec_at(r2, kD1), e);
        const ByteVec f2 = emit(r2);
        INFO("group " << group);
        require_refusal(run_indexed(f2), "missing-gaussian-id");
        require_refusal(run_streaming(f2), "missing-gaussian-id");
    }
}

TEST_CASE("M095: a stream's group is its sub-block, whatever the counts say", "[keyframe-delta]") {
    // Move the death stream into the births sub-block and a birth-sized stream nowhere: the
    // reader must not re-route it by its element_count, so this is a refusal, not a decode.
    std::vector<Rec> recs = split_records(fixture());
    DeltaEdit e = read_delta(rec_at(recs, kD1));
    std::swap(e.births, e.deaths);
    write_delta(rec_at(recs, kD1), e);
    const ByteVec file = emit(recs);
    const Outcome s = run_streaming(file);
    REQUIRE(s.error);
    CHECK((s.error->refusal == "stream-element-count-mismatch" ||
           s.error->refusal == "invalid-death-stream"));
}

TEST_CASE("§11.4: a keyframe-referenced delta composes onto the GOP keyframe in both paths",
          "[keyframe-delta]") {
    // Re-express [2, 3) as a delta against the keyframe (delta_mode 0, depth 1), computed from the
    // composed states themselves — the writer's use of the composer — and check that both paths
    // compose exactly the state the chained file gave.
    const Outcome& ref = reference_streaming();
    require_clean(ref);
    const ChunkBins& k = ref.states[0];
    const ChunkBins& s2 = ref.states[2];
    std::map<std::uint32_t, std::uint32_t> in_k, in_s2;
    for (std::uint32_t i = 0; i < k.count; ++i) in_k[k.gaussian_id[i]] = i;
    for (std::uint32_t i = 0; i < s2.count; ++i) in_s2[s2.gaussian_id[i]] = i;

    Group upd(10), births(12), deaths(1);
    const std::uint8_t upd_ids[] = {attr::gaussian_id, attr::position, attr::scale,
                                    attr::rotation_index, attr::rotation, attr::color,
                                    attr::opacity, attr::motion, attr::mu_t};
    upd.resize(std::size(upd_ids));
    for (std::size_t j = 0; j < std::size(upd_ids); ++j)
        upd[j] = {upd_ids[j], attr::kChannels[upd_ids[j]], {}};
    births.clear();
    for (std::uint8_t id = 0; id < attr::kRequiredCount; ++id)
        births.push_back({id, attr::kChannels[id], {}});
    births.push_back({attr::gaussian_id, 1, {}});
    deaths = {{attr::gaussian_id, 1, {}}};
    auto column = [](const ChunkBins& b, std::uint8_t id) {
        return const_cast<ChunkBins&>(b).column(id);
    };
    for (auto [id, i] : in_k)
        if (!in_s2.count(id)) deaths[0].v.push_back(static_cast<std::int32_t>(id));
    for (auto [id, i] : in_s2) {
        auto kit = in_k.find(id);
        if (kit == in_k.end()) {
            for (StreamVals& s : births) {
                const auto& col = *column(s2, s.id);
                s.v.insert(s.v.end(), col.begin() + i * s.channels, col.begin() + (i + 1) * s.channels);
            }
            continue;
        }
        const std::uint32_t j = kit->second;
        for (std::uint8_t inv : {attr::sigma_t, attr::flags, attr::window_index})
            REQUIRE((*column(k, inv))[j] == (*column(s2, inv))[i]);
        for (StreamVals& s : upd) {
            const auto& now = *column(s2, s.id);
            const auto& was = *column(k, s.id);
            for (int c = 0; c < s.channels; ++c) {
                const bool absolute = s.id == attr::gaussian_id || s.id == attr::rotation_index ||
                                      s.id == attr::rotation;
                s.v.push_back(absolute ? now[i * s.channels + c]
                                       : now[i * s.channels + c] - was[j * s.channels + c]);
            }
        }
    }
    std::vector<Rec> recs = split_records(fixture());
    DeltaEdit e = read_delta(rec_at(recs, kD2));
    e.updates = upd;
    e.births = births;
    e.deaths = deaths;
    e.header.delta_mode = 0;
    e.header.reference_offset = kK0;
    e.header.depth = 1;
    e.header.update_count = upd[0].count();
    e.header.birth_count = births.back().count();
    e.header.death_count = deaths[0].count();
    write_delta(rec_at(recs, kD2), e);
    patch_index(recs, 2, [&](ChunkIndex& ie) {
        ie.keyframe->delta_mode = 0;
        ie.keyframe->reference_offset = kK0;
        ie.keyframe->depth = 1;
        ie.gaussian_count = e.header.update_count + e.header.birth_count + e.header.death_count;
    });
    const ByteVec file = emit(recs);
    const Outcome s = run_streaming(file), ix = run_indexed(file);
    require_clean(s);
    require_clean(ix);
    REQUIRE(s.states.size() == 6);
    for (std::size_t c = 0; c < 6; ++c) {
        INFO("state chunk " << c);
        CHECK(same_bins(s.states[c], ref.states[c]));
        CHECK(same_bins(ix.states[c], ref.states[c]));
    }
    CHECK(s.infos[2].delta_mode == 0);
    CHECK(s.infos[2].depth == 1);
    MemorySource src(file);
    auto reader = KeyframeDeltaReader::open(src);
    REQUIRE(reader.ok());
    CHECK(reader->chain(2.5)->size() == 2);  // two records however deep into the GOP

    // A keyframe-referenced delta whose reference is not the keyframe: refused.
    const ByteVec wrong = with_delta_header(file, s.infos[2].offset, [&](DeltaChunk& d) {
        d.reference_offset = s.infos[1].offset;
    });
    require_refusal(run_streaming(wrong), "delta-mode-mismatch");
    require_refusal(run_indexed(with_index(file, 2, [&](ChunkIndex& ie) {
                        ie.keyframe->reference_offset = s.infos[1].offset;
                    })),
                    "delta-mode-mismatch");
}

TEST_CASE("M132/§11.10: a truncated file yields every complete chunk's state, then the "
          "truncation",
          "[keyframe-delta]") {
    const ByteVec& full = fixture();
    const Outcome& ref = reference_streaming();
    require_clean(ref);
    const std::vector<Rec> recs = split_records(full);
    std::vector<std::size_t> cuts;
    for (const Rec& r : recs) {
        cuts.push_back(r.offset);       // at the boundary
        cuts.push_back(r.offset + 5);   // inside the record header
        cuts.push_back(r.offset + 9 + r.content.size() / 2);  // inside the content
    }
    for (std::size_t c : {std::size_t{0}, std::size_t{3}, std::size_t{8}, full.size() - 8,
                          full.size() - 1})
        cuts.push_back(c);
    for (std::size_t cut : cuts) {
        INFO("cut at byte " << cut);
        const ByteVec prefix(full.begin(), full.begin() + cut);
        std::size_t complete = 0;
        for (const Rec& r : recs)
            if ((r.opcode == op::chunk || r.opcode == op::delta_chunk) &&
                r.offset + 9 + r.content.size() <= cut)
                ++complete;
        const Outcome o = run_streaming(prefix);
        REQUIRE(o.error.has_value());
        CHECK(o.error->kind == (cut < 8 ? o.error->kind : ErrorKind::truncated));
        if (cut >= 8) CHECK(o.error->refusal == "truncated");
        REQUIRE(o.states.size() == complete);
        for (std::size_t k = 0; k < complete; ++k) CHECK(same_bins(o.states[k], ref.states[k]));
        // The indexed path never crashes on a cut file; it refuses it.
        MemorySource src(prefix);
        CHECK_FALSE(KeyframeDeltaReader::open(src).ok());
    }
    // The whole file is not a truncation.
    const Outcome whole = run_streaming(full);
    CHECK_FALSE(whole.error.has_value());
    CHECK(whole.states.size() == 6);
}

TEST_CASE("keyframe-delta: the streaming path reads from a pipe (a sequential source)",
          "[keyframe-delta]") {
    const ByteVec& file = fixture();
    // A sequential source over memory: reads only at or after the previous end.
    class Pipe final : public ByteSource {
    public:
        explicit Pipe(const ByteVec& b) : b_(b) {}
        std::optional<std::uint64_t> size() const override { return std::nullopt; }
        bool random_access() const override { return false; }
        Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override {
            if (offset < end_)
                return make_error(ErrorKind::io, "io", "pipe rewound");
            const std::size_t n =
                offset >= b_.size() ? 0 : std::min<std::size_t>(out.size(), b_.size() - offset);
            std::memcpy(out.data(), b_.data() + offset, n);
            end_ = offset + n;
            return n;
        }

    private:
        const ByteVec& b_;
        std::uint64_t end_ = 0;
    } pipe(file);
    KeyframeDeltaStream s(pipe);
    ChunkBins bins;
    std::size_t k = 0;
    while (true) {
        auto r = s.next_state_bins(bins);
        if (!r.ok()) FAIL(r.error().describe());
        if (!*r) break;
        CHECK(same_bins(bins, reference_streaming().states[k++]));
    }
    CHECK(k == 6);
    // The random-access front-end says why it cannot.
    CHECK(KeyframeDeltaReader::open(pipe).error().refusal == "not-seekable");
}

TEST_CASE("§5.18: the death group carries gaussian_id and nothing else", "[keyframe-delta]") {
    std::vector<Rec> recs = split_records(fixture());
    DeltaEdit e = read_delta(rec_at(recs, kD1));
    e.deaths.push_back({attr::opacity, 1, std::vector<std::int32_t>(e.header.death_count, 0)});
    write_delta(rec_at(recs, kD1), e);
    const ByteVec file = emit(recs);
    require_refusal(run_indexed(file), "invalid-death-stream", {"opacity"});
    require_refusal(run_streaming(file), "invalid-death-stream", {"opacity"});
}

namespace {

// The SH coefficients the SH-degree-1 fixture gives gaussian `id`, channel `c`.
std::int32_t sh_coeff(std::uint32_t id, int c) {
    return static_cast<std::int32_t>((id * 37 + static_cast<std::uint32_t>(c) * 11) % 256);
}

// The fixture with SH degree 1: a band-1 record after every state chunk, carrying each keyframe
// gaussian's or born gaussian's coefficients as a function of its id (sh_coeff), every index
// entry naming its band; `edit` may change entry k's bands (offsets are the band records' own
// before emit maps them).
ByteVec fixture_with_band_one(
    const std::function<void(std::size_t, std::vector<ChunkIndex::Band>&)>& edit = {}) {
    auto coeff = sh_coeff;
    std::vector<Rec> recs = split_records(fixture());
    put_le<std::uint8_t>(rec_at(recs, 8).content, 134, 1);  // Header sh_degree
    REQUIRE(parse_header(view_of(rec_at(recs, 8)))->sh_degree == 1);
    std::vector<Rec> out;
    std::vector<std::uint64_t> band_at;  // fake "old" offsets, mapped by emit
    std::size_t state = 0;
    for (const Rec& r : recs) {
        out.push_back(r);
        if (r.opcode != op::chunk && r.opcode != op::delta_chunk) continue;
        std::vector<std::uint32_t> who;
        if (r.opcode == op::chunk) who = ids(read_chunk(r).streams);
        else who = ids(read_delta(r).births);
        std::vector<std::int32_t> values;
        for (std::uint32_t id : who)
            for (int c = 0; c < 9; ++c) values.push_back(coeff(id, c));
        ByteWriter w;
        REQUIRE(encode_stream(w, 7, 9, values).ok());
        ShBandRecord b;
        b.band = 1;
        ByteVec stream = w.buffer();
        b.stream = stream;
        Rec br;
        br.opcode = op::sh_band;
        br.offset = 1'000'000 + state;
        br.content = content_of(b);
        band_at.push_back(br.offset);
        out.push_back(std::move(br));
        ++state;
    }
    for (std::size_t k = 0; k < 6; ++k)
        patch_index(out, k, [&](ChunkIndex& e) {
            e.bands = {{1, band_at[k], 0}};
            if (edit) edit(k, e.bands);
        });
    return emit(out);
}

}  // namespace

TEST_CASE("§5.18/§6.5: keyframe and birth SH bands follow their gaussian_id through "
          "composition, wanted bands set the seek cost, a cut band is dropped whole (M100)",
          "[keyframe-delta]") {
    auto coeff = sh_coeff;
    const ByteVec file = fixture_with_band_one();

    auto check_sh = [&](const ChunkBins& b) {
        REQUIRE(b.sh_bands == 1);
        for (std::uint32_t i = 0; i < b.count; ++i)
            for (int c = 0; c < 9; ++c)
                REQUIRE(b.sh[0][i * 9 + c] ==
                        coeff(static_cast<std::uint32_t>(b.gaussian_id[i]), c));
    };
    const Outcome s = run_streaming(file), ix = run_indexed(file);
    require_clean(s);
    require_clean(ix);
    REQUIRE(s.states.size() == 6);
    for (std::size_t k = 0; k < 6; ++k) {
        check_sh(s.states[k]);
        CHECK(same_bins(s.states[k], ix.states[k]));
    }
    MemorySource src(file);
    auto reader = KeyframeDeltaReader::open(src);
    REQUIRE(reader.ok());
    auto plan = reader->plan(5.5);
    REQUIRE(plan.ok());
    CHECK(plan->band_bytes > 0);
    const std::uint64_t before = reader->bytes_fetched();
    GaussianBlock block;
    REQUIRE(reader->state_at(5.5, block).ok());
    CHECK(reader->bytes_fetched() - before == plan->total_bytes());
    CHECK(block.sh_degree == 1);
    // A reader capped at degree 0 never fetches a band (§5.7).
    ReaderOptions no_sh;
    no_sh.decode.max_sh_degree = 0;
    MemorySource src0(file);
    auto r0 = KeyframeDeltaReader::open(src0, no_sh);
    REQUIRE(r0.ok());
    CHECK(r0->plan(5.5)->band_bytes == 0);
    const std::uint64_t before0 = r0->bytes_fetched();
    REQUIRE(r0->state_at(5.5, block).ok());
    CHECK(r0->bytes_fetched() - before0 == plan->chunk_bytes);
    CHECK(block.sh_degree == 0);
    const Outcome s0 = run_streaming(file, no_sh);
    require_clean(s0);
    CHECK(s0.states[4].sh_bands == 0);

    // Cut inside the band record of [1, 2): its state arrives without the band, then the cut.
    const std::vector<Rec> laid = split_records(file);
    std::uint64_t cut = 0;
    for (std::size_t i = 0; i + 1 < laid.size(); ++i)
        if (laid[i].opcode == op::delta_chunk) {
            cut = laid[i + 1].offset + 12;
            break;
        }
    const Outcome t = run_streaming(ByteVec(file.begin(), file.begin() + cut));
    REQUIRE(t.error);
    CHECK(t.error->refusal == "truncated");
    REQUIRE(t.states.size() == 2);
    check_sh(t.states[0]);
    CHECK(t.states[1].sh_bands == 0);
    CHECK(t.states[1].position == s.states[1].position);
}

TEST_CASE("§5.7: a duplicate SH band entry is refused by the keyframe-delta reader as by the "
          "indexed reader",
          "[keyframe-delta]") {
    // The first keyframe's index entry names its band-1 record twice. The indexed readers fetch
    // bands by the entry, so which of two entries is "the" band 1 is undecidable: both refuse,
    // naming the band (the keyframe-delta reader used to take the last entry silently).
    const ByteVec file = fixture_with_band_one([](std::size_t k, std::vector<ChunkIndex::Band>& b) {
        if (k == 0) b.push_back(b.front());
    });
    require_refusal(run_indexed(file), "duplicate-sh-band", {"band 1"});

    MemorySource src(file);
    ReaderOptions keyframes_as_chunks;
    keyframes_as_chunks.accept_keyframe_delta = true;  // the first entry frames a plain Chunk
    auto reader = IndexedReader::open(src, keyframes_as_chunks);
    REQUIRE(reader.ok());
    DecodeWorkspace ws;
    const Status decoded = reader->decode_chunk(0, ws);
    REQUIRE_FALSE(decoded.ok());
    CHECK(decoded.error().refusal == "duplicate-sh-band");
    CHECK_THAT(decoded.error().message, Catch::Contains("band 1"));

    // The streaming path sees one band record after the chunk and two in the entry.
    require_refusal(run_streaming(file), "index-record-mismatch", {"band_count"});
    // Without the duplicate, all three read the file.
    require_clean(run_indexed(fixture_with_band_one()));
}

namespace {

// A keyframe's bins: gaussians with the given ids, every required column, position (v, v, v)
// and scale (v, v, v) for a value v per gaussian.
ChunkBins keyframe_bins(const std::vector<std::uint32_t>& id, const std::vector<std::int32_t>& v) {
    ChunkBins b;
    b.count = static_cast<std::uint32_t>(id.size());
    for (std::uint8_t a = 0; a < attr::kRequiredCount; ++a)
        b.column(a)->assign(std::size_t{b.count} * attr::kChannels[a], 0);
    for (std::size_t i = 0; i < id.size(); ++i)
        for (int c = 0; c < 3; ++c) b.position[i * 3 + c] = b.scale[i * 3 + c] = v[i];
    b.has_gaussian_id = true;
    for (std::uint32_t i : id) b.gaussian_id.push_back(static_cast<std::int32_t>(i));
    return b;
}

// A delta updating the given ids by the given position and scale differences (all 3 components).
DeltaBins update_bins(const std::vector<std::uint32_t>& id, const std::vector<std::int32_t>& dpos,
                      const std::vector<std::int32_t>& dscale) {
    DeltaBins d;
    d.updates.count = static_cast<std::uint32_t>(id.size());
    for (std::size_t i = 0; i < id.size(); ++i) {
        d.updates.gaussian_id.push_back(static_cast<std::int32_t>(id[i]));
        for (int c = 0; c < 3; ++c) {
            d.updates.position.push_back(dpos[i]);
            d.updates.scale.push_back(dscale[i]);
        }
    }
    d.updates.has_gaussian_id = true;
    d.update_present[attr::gaussian_id] = d.update_present[attr::position] =
        d.update_present[attr::scale] = true;
    return d;
}

Error apply_error(const ChunkBins& keyframe, const DeltaBins& delta) {
    ComposedPopulation pop;
    pop.reset(0);
    REQUIRE(pop.assign_keyframe(keyframe, {100, 0, 1, false}).ok());
    const Status st = pop.apply(delta, {200, 1, 2, true});
    REQUIRE(!st.ok());
    return st.error();
}

}  // namespace

TEST_CASE("M116/M124: updates applied column by column refuse what a row-by-row composition "
          "meets first",
          "[keyframe-delta]") {
    constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
    const ChunkBins kf = keyframe_bins({0, 1, 2}, {1, kMax, kMax});
    // Row 0 (id 0) overflows in scale, row 1 (id 2) in position: row by row, id 0's scale is
    // met first, though the position column is added first.
    Error e = apply_error(kf, update_bins({0, 2}, {0, 1}, {kMax, 0}));
    CHECK(e.refusal == refusal::kComposedBinOutOfRange);
    CHECK_THAT(e.message, Catch::Contains("'scale[0]' of gaussian_id 0"));
    // An overflow in a row before an id that is not live is met first...
    e = apply_error(kf, update_bins({2, 7}, {1, 0}, {0, 0}));
    CHECK(e.refusal == refusal::kComposedBinOutOfRange);
    CHECK_THAT(e.message, Catch::Contains("'position[0]' of gaussian_id 2"));
    // ...and one after it is not.
    e = apply_error(kf, update_bins({0, 7, 2}, {0, 0, 1}, {0, 0, 0}));
    CHECK(e.refusal == refusal::kUnknownGaussianId);
    CHECK_THAT(e.message, Catch::Contains("gaussian_id 7"));
}

TEST_CASE("M116: a run of adjacent updated rows refuses what a row-by-row composition meets "
          "first, and leaves the rows before it composed",
          "[keyframe-delta]") {
    constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
    // Ids 0..5 are adjacent rows. Row 3 (id 3) overflows in scale, row 4 (id 4) in position:
    // a run's columns are checked a column at a time, but row by row id 3's scale comes first.
    const ChunkBins kf = keyframe_bins({0, 1, 2, 3, 4, 5}, {1, 2, 3, kMax, kMax, 6});
    const DeltaBins d = update_bins({0, 1, 2, 3, 4, 5}, {1, 1, 1, 0, 1, 1}, {1, 1, 1, 1, 0, 1});
    Error e = apply_error(kf, d);
    CHECK(e.refusal == refusal::kComposedBinOutOfRange);
    CHECK_THAT(e.message, Catch::Contains("'scale[0]' of gaussian_id 3"));
    // The same bins with the rows apart (ids 0, 2, ...: not adjacent) give the same refusal.
    const ChunkBins apart = keyframe_bins({0, 2, 4, 6, 8, 10}, {1, 2, 3, kMax, kMax, 6});
    e = apply_error(apart, update_bins({0, 2, 4, 6, 8, 10}, {1, 1, 1, 0, 1, 1},
                                       {1, 1, 1, 1, 0, 1}));
    CHECK_THAT(e.message, Catch::Contains("'scale[0]' of gaussian_id 6"));
    // Sums that reach the i32 bounds exactly fit.
    ComposedPopulation pop;
    pop.reset(0);
    REQUIRE(pop.assign_keyframe(keyframe_bins({0, 1, 2}, {kMax - 1, -kMax, 0}),
                                {100, 0, 1, false}).ok());
    REQUIRE(pop.apply(update_bins({0, 1, 2}, {1, -1, 0}, {-kMax, 0, kMax}), {200, 1, 2, true})
                .ok());
    CHECK(pop.slot_bins().position == std::vector<std::int32_t>{kMax, kMax, kMax,
                                                                std::numeric_limits<std::int32_t>::min(),
                                                                std::numeric_limits<std::int32_t>::min(),
                                                                std::numeric_limits<std::int32_t>::min(),
                                                                0, 0, 0});
    CHECK(pop.slot_bins().scale == std::vector<std::int32_t>{-1, -1, -1, -kMax, -kMax, -kMax,
                                                             kMax, kMax, kMax});
}

TEST_CASE("§11.3: updates in runs of adjacent rows and apart compose as a row-at-a-time sum",
          "[keyframe-delta]") {
    // 5,000 gaussians; the update names runs of every length from 1 to 40 rows, with gaps
    // between them, across the 2,048-row blocks a sink receives.
    constexpr std::uint32_t n = 5000;
    std::vector<std::uint32_t> kid(n);
    std::vector<std::int32_t> v(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        kid[i] = i;
        v[i] = static_cast<std::int32_t>(i * 7 % 1000) - 500;
    }
    const ChunkBins kf = keyframe_bins(kid, v);
    std::vector<std::uint32_t> uid;
    std::vector<std::int32_t> dpos, dscale;
    for (std::uint32_t at = 0, len = 1; at < n; at += len + len % 3, len = len % 40 + 1)
        for (std::uint32_t k = at; k < std::min(n, at + len); ++k) {
            uid.push_back(k);
            dpos.push_back(static_cast<std::int32_t>(k % 13) - 6);
            dscale.push_back(static_cast<std::int32_t>(k % 5) + 1);
        }
    const DeltaBins d = update_bins(uid, dpos, dscale);
    // What each row becomes, one row at a time.
    std::vector<std::int32_t> position = kf.position, scale = kf.scale;
    for (std::size_t i = 0; i < uid.size(); ++i)
        for (int c = 0; c < 3; ++c) {
            position[uid[i] * 3 + c] += dpos[i];
            scale[uid[i] * 3 + c] += dscale[i];
        }
    // The composed position rows a sink is handed, in order.
    struct PositionRows final : ComposedRowsSink {
        std::vector<std::int32_t> position;
        std::optional<std::array<bool, attr::kKnownCount>> begin(
            const DeltaBins&, std::span<const std::uint32_t>) override {
            return std::array<bool, attr::kKnownCount>{};
        }
        void take(const ChunkBins& block, std::size_t) override {
            position.insert(position.end(), block.position.begin(),
                            block.position.begin() + std::size_t{block.count} * 3);
        }
    };
    for (bool sinked : {false, true}) {
        INFO("composed in blocks for a sink: " << sinked);
        ComposedPopulation pop;
        pop.reset(0);
        REQUIRE(pop.assign_keyframe(kf, {100, 0, 1, false}).ok());
        PositionRows sink;
        REQUIRE(pop.apply(d, {200, 1, 2, true}, std::uint64_t{1} << 26, nullptr,
                          sinked ? &sink : nullptr)
                    .ok());
        CHECK(pop.slot_bins().position == position);
        CHECK(pop.slot_bins().scale == scale);
        if (!sinked) continue;
        REQUIRE(sink.position.size() == uid.size() * 3);
        for (std::size_t i = 0; i < uid.size(); ++i)
            for (int c = 0; c < 3; ++c)
                REQUIRE(sink.position[i * 3 + c] == position[uid[i] * 3 + c]);
    }
}

TEST_CASE("§11.3: deaths keep a population in id order, so its slots stay the sorted state",
          "[keyframe-delta]") {
    ComposedPopulation pop;
    pop.reset(0);
    REQUIRE(pop.assign_keyframe(keyframe_bins({0, 1, 2, 3, 4, 5}, {10, 11, 12, 13, 14, 15}),
                                {100, 0, 1, false})
                .ok());
    DeltaBins d = update_bins({2, 5}, {100, 100}, {0, 0});
    d.deaths = {1, 3};
    std::vector<std::uint32_t> updated;
    REQUIRE(pop.apply(d, {200, 1, 2, true}, std::uint64_t{1} << 26, &updated).ok());
    CHECK(pop.in_id_order());
    CHECK(updated == std::vector<std::uint32_t>{1, 3});  // ids 2 and 5, at their sorted rows
    ChunkBins out;
    pop.materialize(out);
    CHECK(out.gaussian_id == std::vector<std::int32_t>{0, 2, 4, 5});
    CHECK(out.position == std::vector<std::int32_t>{10, 10, 10, 112, 112, 112, 14, 14, 14,
                                                    115, 115, 115});
    // The dead ids stay dead, and the live ones are found at their new slots.
    CHECK(pop.dead_ids().count(1) == 1);
    CHECK(pop.dead_ids().count(3) == 1);
    CHECK(pop.contains(5));
    d = update_bins({5}, {1}, {0});
    REQUIRE(pop.apply(d, {300, 2, 3, true}, std::uint64_t{1} << 26, &updated).ok());
    CHECK(updated == std::vector<std::uint32_t>{3});
}

TEST_CASE("§11.3: an update's rows are found by a merge walk over the sorted ids",
          "[keyframe-delta]") {
    auto ids = [](std::initializer_list<std::int32_t> v) { return std::vector<std::int32_t>(v); };
    std::vector<std::uint32_t> rows;
    // Consecutive ids: a row is the distance from the first; one past either end is not found.
    const std::vector<std::int32_t> run = ids({7, 8, 9, 10, 11});
    CHECK(rows_of_ids(run, ids({7, 9, 11}), rows) == 3);
    CHECK(rows == std::vector<std::uint32_t>{0, 2, 4});
    rows.clear();
    CHECK(rows_of_ids(run, ids({8, 12, 9}), rows) == 1);
    CHECK(rows == std::vector<std::uint32_t>{1});
    rows.clear();
    CHECK(rows_of_ids(run, ids({6}), rows) == 0);
    // Ids with gaps: galloping from the row found before, and from the start when an id is
    // lower than the one before it.
    const std::vector<std::int32_t> gaps = ids({0, 3, 4, 9, 20, 21, 40, 100});
    CHECK(rows_of_ids(gaps, ids({3, 21, 100}), rows) == 3);
    CHECK(rows == std::vector<std::uint32_t>{1, 5, 7});
    rows.clear();
    CHECK(rows_of_ids(gaps, ids({40, 0, 9}), rows) == 3);
    CHECK(rows == std::vector<std::uint32_t>{6, 0, 3});
    rows.clear();
    CHECK(rows_of_ids(gaps, ids({4, 5, 9}), rows) == 1);  // 5 is not there
    CHECK(rows == std::vector<std::uint32_t>{2});
    rows.clear();
    // Ids past 2^31 order as unsigned.
    const std::vector<std::int32_t> high = ids({1, 5, static_cast<std::int32_t>(0x80000001u)});
    CHECK(rows_of_ids(high, ids({5, static_cast<std::int32_t>(0x80000001u)}), rows) == 2);
    CHECK(rows == std::vector<std::uint32_t>{1, 2});
}

TEST_CASE("§11.3: deaths in a population out of id order keep the other rows' order",
          "[keyframe-delta]") {
    ComposedPopulation pop;
    pop.reset(0);
    REQUIRE(pop.assign_keyframe(keyframe_bins({5, 2, 9, 0, 7}, {15, 12, 19, 10, 17}),
                                {100, 0, 1, false})
                .ok());
    CHECK_FALSE(pop.in_id_order());
    DeltaBins d = update_bins({0, 7}, {100, 100}, {0, 0});
    d.deaths = {2, 9};
    std::vector<std::uint32_t> updated;
    REQUIRE(pop.apply(d, {200, 1, 2, true}, std::uint64_t{1} << 26, &updated).ok());
    // Slots 1 and 2 died; ids 0 and 7 moved down to slots 1 and 2.
    CHECK(updated == std::vector<std::uint32_t>{1, 2});
    CHECK(pop.slot_bins().gaussian_id == std::vector<std::int32_t>{5, 0, 7});
    ChunkBins out;
    pop.materialize(out);
    CHECK(out.gaussian_id == std::vector<std::int32_t>{0, 5, 7});
    CHECK(out.position == std::vector<std::int32_t>{110, 110, 110, 15, 15, 15, 117, 117, 117});
}

TEST_CASE("§11.3: timing bins no update changes are gathered as the rows hold them",
          "[keyframe-delta]") {
    ComposedPopulation pop;
    pop.reset(0);
    ChunkBins kf = keyframe_bins({0, 1, 2}, {1, 2, 3});
    for (std::int32_t& s : kf.sigma_t) s = 4;
    for (std::int32_t& f : kf.flags) f = 1;
    REQUIRE(pop.assign_keyframe(kf, {100, 0, 1, false}).ok());
    std::array<bool, attr::kKnownCount> timing{};
    timing[attr::sigma_t] = timing[attr::flags] = timing[attr::window_index] = true;
    const std::vector<std::uint32_t> slots{2, 0};
    ChunkBins rows;
    pop.gather(slots, rows, &timing);  // every row shares them
    CHECK(rows.sigma_t == std::vector<std::int32_t>{4, 4});
    CHECK(rows.flags == std::vector<std::int32_t>{1, 1});
    CHECK(rows.window_index == std::vector<std::int32_t>{0, 0});
    // A birth with other timing: each row's own again.
    DeltaBins d;
    d.births = keyframe_bins({3}, {4});
    d.births.sigma_t = {-6};
    REQUIRE(pop.apply(d, {200, 1, 2, true}).ok());
    pop.gather(std::vector<std::uint32_t>{3, 1}, rows, &timing);
    CHECK(rows.sigma_t == std::vector<std::int32_t>{-6, 4});
    CHECK(rows.flags == std::vector<std::int32_t>{0, 1});
}

namespace {

// The columns a block test compares: the update's own and those a sink asks to read.
constexpr std::uint8_t kBlockColumns[] = {attr::position, attr::mu_t,    attr::rotation_index,
                                          attr::rotation, attr::color,   attr::opacity,
                                          attr::sigma_t,  attr::flags,   attr::window_index};

// Keeps every row a ComposedPopulation hands it, block after block, in kBlockColumns: the
// update's own (block_update's) and the others it asks to read.
struct CollectedRows final : ComposedRowsSink {
    std::array<bool, attr::kKnownCount> reads = [] {
        std::array<bool, attr::kKnownCount> r{};
        for (std::uint8_t a : {attr::color, attr::opacity, attr::sigma_t, attr::flags,
                               attr::window_index})
            r[a] = true;
        return r;
    }();
    std::vector<std::uint32_t> slots;
    std::vector<std::size_t> firsts;  // each block's first row
    ChunkBins rows;

    std::optional<std::array<bool, attr::kKnownCount>> begin(
        const DeltaBins&, std::span<const std::uint32_t> live) override {
        slots.assign(live.begin(), live.end());
        return reads;
    }
    void take(const ChunkBins& block, std::size_t first) override {
        firsts.push_back(first);
        CHECK(first == rows.count);  // in order, none left out
        for (std::uint8_t a : kBlockColumns) {
            const std::vector<std::int32_t>& from = *const_cast<ChunkBins&>(block).column(a);
            const std::size_t n = std::size_t{block.count} * attr::kChannels[a];
            REQUIRE(from.size() >= n);
            rows.column(a)->insert(rows.column(a)->end(), from.begin(), from.begin() + n);
        }
        rows.count += block.count;
    }
};

// `n` gaussians, ids 2i ascending (or descending: slots out of id order), every column set
// from the row; the timing bins shared by all.
ChunkBins block_keyframe(std::uint32_t n, bool ascending) {
    std::vector<std::uint32_t> ids(n);
    std::vector<std::int32_t> v(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        ids[i] = 2 * (ascending ? i : n - 1 - i);
        v[i] = static_cast<std::int32_t>(i);
    }
    ChunkBins kf = keyframe_bins(ids, v);
    for (std::uint32_t i = 0; i < n; ++i) {
        kf.mu_t[i] = 7 * v[i];
        kf.rotation_index[i] = v[i] % 4;
        for (int c = 0; c < 3; ++c) {
            kf.color[i * 3 + c] = v[i] + c;
            kf.rotation[i * 3 + c] = -v[i] - c;
        }
        kf.opacity[i] = v[i] % 255;
        kf.sigma_t[i] = 4;
        kf.flags[i] = 1;
    }
    return kf;
}

// Updates of every id 2i with i % 6 != 0, in ascending order: position and mu_t differences,
// rotation restated.
DeltaBins block_update(std::uint32_t n) {
    DeltaBins d;
    ChunkBins& u = d.updates;
    for (std::uint32_t i = 0; i < n; ++i) {
        if (i % 6 == 0) continue;
        const auto k = static_cast<std::int32_t>(i);
        u.gaussian_id.push_back(2 * k);
        for (int c = 0; c < 3; ++c) {
            u.position.push_back(k % 11 - 5 + c);
            u.rotation.push_back(k + c);
        }
        u.mu_t.push_back(30 - k % 61);
        u.rotation_index.push_back((k + 1) % 4);
    }
    u.count = static_cast<std::uint32_t>(u.gaussian_id.size());
    u.has_gaussian_id = true;
    for (std::uint8_t a : {attr::gaussian_id, attr::position, attr::mu_t, attr::rotation_index,
                           attr::rotation})
        d.update_present[a] = true;
    return d;
}

}  // namespace

TEST_CASE("§11.3: an update's composed rows reach a sink a block at a time, as the whole "
          "composition leaves them",
          "[keyframe-delta]") {
    constexpr std::uint32_t n = 6000;  // 4,999 updated rows: three blocks
    const DeltaBins d = block_update(n);
    for (bool ascending : {true, false}) {
        INFO("ids ascending: " << ascending);
        const ChunkBins kf = block_keyframe(n, ascending);
        ComposedPopulation blocks, whole;
        for (ComposedPopulation* pop : {&blocks, &whole}) {
            pop->reset(0);
            REQUIRE(pop->assign_keyframe(kf, {100, 0, 1, false}).ok());
        }
        REQUIRE(blocks.in_id_order() == ascending);
        CollectedRows sink;
        REQUIRE(blocks.apply(d, {200, 1, 2, true}, std::uint64_t{1} << 26, nullptr, &sink).ok());
        std::vector<std::uint32_t> updated;
        REQUIRE(whole.apply(d, {200, 1, 2, true}, std::uint64_t{1} << 26, &updated).ok());
        CHECK(sink.firsts == std::vector<std::size_t>{0, 2048, 4096});
        CHECK(sink.slots == updated);
        // The populations agree, and the sink's rows are the composed population's rows.
        std::array<bool, attr::kKnownCount> every{};
        for (std::uint8_t a : kBlockColumns) every[a] = true;
        ChunkBins want;
        whole.gather(updated, want, &every);
        REQUIRE(sink.rows.count == d.updates.count);
        for (std::uint8_t a : kBlockColumns) {
            INFO("column " << attr::kNames[a]);
            CHECK(*const_cast<ChunkBins&>(blocks.slot_bins()).column(a) ==
                  *const_cast<ChunkBins&>(whole.slot_bins()).column(a));
            CHECK(*sink.rows.column(a) == *want.column(a));
        }
    }
}

TEST_CASE("M116: an update composed in blocks refuses the row a row-by-row composition meets "
          "first, after the blocks before it",
          "[keyframe-delta]") {
    constexpr std::uint32_t n = 6000;
    ChunkBins kf = block_keyframe(n, true);
    DeltaBins d = block_update(n);
    const std::uint32_t bad = 4500;  // in the third block
    kf.position[static_cast<std::size_t>(d.updates.gaussian_id[bad]) / 2 * 3 + 1] =
        std::numeric_limits<std::int32_t>::max();
    d.updates.position[std::size_t{bad} * 3 + 1] = 1;
    std::string messages[2];
    std::vector<std::size_t> firsts;
    for (int sinked = 0; sinked < 2; ++sinked) {
        ComposedPopulation pop;
        pop.reset(0);
        REQUIRE(pop.assign_keyframe(kf, {100, 0, 1, false}).ok());
        CollectedRows sink;
        const Status st = pop.apply(d, {200, 1, 2, true}, std::uint64_t{1} << 26, nullptr,
                                    sinked ? &sink : nullptr);
        REQUIRE(!st.ok());
        CHECK(st.error().refusal == refusal::kComposedBinOutOfRange);
        messages[sinked] = st.error().message;
        firsts = sink.firsts;
    }
    CHECK(messages[0] == messages[1]);
    CHECK_THAT(messages[1], Catch::Contains("'position[1]' of gaussian_id " +
                                            std::to_string(d.updates.gaussian_id[bad])));
    CHECK(firsts == std::vector<std::size_t>{0, 2048});  // the blocks before it were handed on
}
