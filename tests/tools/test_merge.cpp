// Merging shards (fourdgs/tools/merge.hpp): shards of one grid plan, merged, decode bin for bin
// to what a single conversion of every frame on the plan gives, through the indexed and the
// streaming front-ends, and validate clean; chunk payloads are copied byte for byte; the merge is
// deterministic; each refusal is named; 64 shards merge in memory bounded by a chunk.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/open_scene.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/stream.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "fourdgs/tools/convert.hpp"
#include "fourdgs/tools/grid_plan.hpp"
#include "fourdgs/tools/merge.hpp"
#include "fourdgs/validate.hpp"
#include "support/discarding_sink.hpp"
#include "support/live_bytes.hpp"
#include "support/merge_parts.hpp"
#include "support/ply_frames.hpp"
#include "support/readers.hpp"
#include "support/validity.hpp"

using namespace fourdgs;

namespace {

constexpr double kFps = 8;  // frame times k / 8 are exact

GridPlan make_plan(const std::vector<PlyCloud>& frames, ConvertShape shape,
                   std::optional<QuantBounds> tolerance = std::nullopt) {
    return test::plan_every_frame(frames, shape, kFps, tolerance);
}

std::vector<std::uint8_t> encode(const std::vector<PlyCloud>& frames, const GridPlan& plan,
                                 std::uint64_t first, std::uint64_t end,
                                 const std::string& chunk_compression = "") {
    ConvertOptions o;
    o.plan = plan;
    o.first_frame = first;
    o.end_frame = end;
    o.writer.chunk_compression = chunk_compression;
    o.writer.threads = 1;
    o.coordinate_system = "right-handed, y-up";
    MemorySink sink;
    auto st = convert_frames(std::span(frames).subspan(first, end - first), o, sink);
    if (!st.ok()) FAIL(st.error().describe());
    return sink.take();
}

std::vector<std::uint8_t> merge(const std::vector<std::vector<std::uint8_t>>& parts,
                                const MergeOptions& options = {}, MergeReport* report = nullptr) {
    auto merged = test::merge_in_memory(parts, options, report);
    if (!merged.ok()) FAIL(merged.error().describe());
    return std::move(*merged);
}

Error merge_error(const std::vector<std::vector<std::uint8_t>>& parts,
                  const MergeOptions& options = {}) {
    auto merged = test::merge_in_memory(parts, options);
    REQUIRE_FALSE(merged.ok());
    return merged.error();
}

void check_same_bins(const ChunkBins& a, const ChunkBins& b) {
    REQUIRE(a.count == b.count);
    for (std::uint8_t id = 0; id < attr::kKnownCount; ++id) {
        INFO(attr::kNames[id]);
        CHECK(*const_cast<ChunkBins&>(a).column(id) == *const_cast<ChunkBins&>(b).column(id));
    }
    CHECK(a.has_gaussian_id == b.has_gaussian_id);
    CHECK(a.has_object_id == b.has_object_id);
    CHECK(a.sh_bands == b.sh_bands);
    for (int band = 0; band < 3; ++band) CHECK(a.sh[band] == b.sh[band]);
}

// Two streaming front-ends over two files give the same bins, block for block, to the end.
template <class Reader, class Next>
void check_same_stream(Reader& a, Reader& b, Next next) {
    REQUIRE(a.open().ok());
    REQUIRE(b.open().ok());
    ChunkBins ba, bb;
    while (true) {
        auto na = next(a, ba);
        auto nb = next(b, bb);
        REQUIRE(na.ok());
        REQUIRE(nb.ok());
        REQUIRE(*na == *nb);
        if (!*na) return;
        check_same_bins(ba, bb);
    }
}

using test::check_valid;

// The merged file decodes bin for bin as the single conversion does: every chunk (gaussian-birth)
// or every state (keyframe-delta) through the indexed front-end, the same through the streaming
// one, and the decoded state at every frame's start and middle.
void check_same_scene(const std::vector<std::uint8_t>& merged,
                      const std::vector<std::uint8_t>& single, std::size_t frames) {
    MemorySource ms(merged), ss(single);
    ReaderOptions ro;
    ro.accept_keyframe_delta = true;
    auto mi = IndexedReader::open(ms, ro);
    auto si = IndexedReader::open(ss, ro);
    REQUIRE(mi.ok());
    REQUIRE(si.ok());
    CHECK(mi->scene().header == si->scene().header);
    CHECK(mi->scene().quantization == si->scene().quantization);
    CHECK(mi->scene().windows == si->scene().windows);
    REQUIRE(mi->scene().index.size() == si->scene().index.size());
    const bool kd = si->scene().header.temporal_model == "keyframe-delta";
    if (!kd) {
        DecodeWorkspace wm, ws;
        for (std::size_t i = 0; i < si->scene().index.size(); ++i) {
            REQUIRE(mi->decode_chunk(i, wm).ok());
            REQUIRE(si->decode_chunk(i, ws).ok());
            check_same_bins(wm.bins, ws.bins);
        }
        StreamingReader a(ms), b(ss);
        check_same_stream(
            a, b, [](StreamingReader& r, ChunkBins& bins) { return r.next_chunk_bins(bins); });
    } else {
        auto km = KeyframeDeltaReader::open(ms, ro);
        auto ks = KeyframeDeltaReader::open(ss, ro);
        REQUIRE(km.ok());
        REQUIRE(ks.ok());
        KeyframeDeltaWorkspace wm, ws;
        for (std::size_t f = 0; f < frames; ++f) {
            const double t = (double(f) + 0.5) / kFps;
            REQUIRE(km->state_bins_at(t, wm).ok());
            REQUIRE(ks->state_bins_at(t, ws).ok());
            check_same_bins(wm.composed, ws.composed);
        }
        KeyframeDeltaStream a(ms, ro), b(ss, ro);
        check_same_stream(
            a, b, [](KeyframeDeltaStream& r, ChunkBins& bins) { return r.next_state_bins(bins); });
    }
    for (auto access : {OpenSceneOptions::Access::automatic, OpenSceneOptions::Access::streaming}) {
        OpenSceneOptions oo;
        oo.access = access;
        auto rm = open_scene(ms, oo);
        auto rs = open_scene(ss, oo);
        REQUIRE(rm.ok());
        REQUIRE(rs.ok());
        SceneWorkspace wm, ws;
        GaussianBlock bm, bs;
        if (access == OpenSceneOptions::Access::streaming && !kd) {
            // A gaussian-birth stream is read once: every chunk, in file order.
            std::vector<GaussianBlock> got;
            REQUIRE(rm->read_all(
                          [&](const StoredBlock& s) {
                              got.push_back(s.gaussians);
                              return ok_status();
                          },
                          wm)
                        .ok());
            std::size_t k = 0;
            REQUIRE(rs->read_all(
                          [&](const StoredBlock& s) {
                              REQUIRE(k < got.size());
                              test::require_identical(got[k++], s.gaussians);
                              return ok_status();
                          },
                          ws)
                        .ok());
            CHECK(k == got.size());
            continue;
        }
        for (std::size_t f = 0; f < frames; ++f)
            for (double t : {double(f) / kFps, (double(f) + 0.5) / kFps}) {
                INFO("t = " << t);
                REQUIRE(rm->state_at(t, bm, wm).ok());
                REQUIRE(rs->state_at(t, bs, ws).ok());
                test::require_identical(bm, bs);
            }
    }
}

// Every stream of a chunk's records block (§5.5), by attribute id, as bytes.
std::vector<std::pair<std::uint8_t, std::vector<std::uint8_t>>> streams_of(Bytes record) {
    auto rv = parse_record(record, 0);
    REQUIRE(rv.ok());
    auto chunk = parse_chunk(*rv);
    REQUIRE(chunk.ok());
    REQUIRE(chunk->compression.empty());
    auto split = split_streams(chunk->records, chunk->records_offset);
    REQUIRE(split.ok());
    std::vector<std::pair<std::uint8_t, std::vector<std::uint8_t>>> out;
    for (const StreamView& s : *split) {
        const auto from =
            chunk->records.begin() + static_cast<std::ptrdiff_t>(s.offset - chunk->records_offset);
        out.push_back({s.header.attribute_id,
                       std::vector<std::uint8_t>(
                           from, from + static_cast<std::ptrdiff_t>(kStreamHeaderSize +
                                                                    s.header.payload_length))});
    }
    return out;
}

Bytes range(const std::vector<std::uint8_t>& file, std::uint64_t offset, std::uint64_t length) {
    return Bytes(file).subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
}
bool same_bytes(Bytes a, Bytes b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

const std::vector<std::pair<std::uint64_t, std::uint64_t>> kShards = {{0, 4}, {4, 8}, {8, 10}};

// The kShards slices of `frames`, each encoded on `plan`.
std::vector<std::vector<std::uint8_t>> encode_shards(const std::vector<PlyCloud>& frames,
                                                     const GridPlan& plan,
                                                     const std::string& chunk_compression = "") {
    std::vector<std::vector<std::uint8_t>> shards;
    for (auto [a, b] : kShards) shards.push_back(encode(frames, plan, a, b, chunk_compression));
    return shards;
}

}  // namespace

TEST_CASE(
    "merged shards decode bin for bin as one conversion on the same plan, through both "
    "front-ends, and validate clean") {
    const auto frames = test::tracked_sequence(10, 90, 1, kFps, 1, 6);
    for (ConvertShape shape :
         {ConvertShape::per_frame, ConvertShape::adaptive, ConvertShape::keyframe_delta}) {
        INFO(to_string(shape));
        const GridPlan plan = make_plan(frames, shape);
        const auto shards = encode_shards(frames, plan);
        for (const auto& s : shards) check_valid(s);  // each shard is a whole, valid file
        MergeReport report;
        const auto merged = merge(shards, {}, &report);
        const auto single = encode(frames, plan, 0, frames.size());
        check_valid(merged);
        check_same_scene(merged, single, frames.size());
        // Nothing but the shards' own bookkeeping differs: the merged file is the single file.
        CHECK(merged == single);
        CHECK(report.order == std::vector<std::size_t>{0, 1, 2});
        if (shape == ConvertShape::keyframe_delta) {
            CHECK(report.chunks_dropped == 4);  // two shards' leading, two shards' trailing fillers
            CHECK(report.references_rewritten > 0);
        } else {
            CHECK(report.window_streams_rewritten > 0);  // shards 1 and 2 renumber their windows
        }
    }
}

TEST_CASE(
    "a merge copies chunk payloads byte for byte: every stream but a moved window_index, "
    "every SH band record, and a delta's records block") {
    const auto frames = test::tracked_sequence(10, 90, 1, kFps, 2, 6);
    for (ConvertShape shape :
         {ConvertShape::per_frame, ConvertShape::adaptive, ConvertShape::keyframe_delta}) {
        INFO(to_string(shape));
        const GridPlan plan = make_plan(frames, shape);
        const auto shards = encode_shards(frames, plan);
        MergeReport report;
        const auto merged = merge(shards, {}, &report);
        MemorySource ms(merged);
        ReaderOptions ro;
        ro.accept_keyframe_delta = true;
        auto mr = IndexedReader::open(ms, ro);
        REQUIRE(mr.ok());
        const auto& out = mr->scene().index;
        std::size_t k = 0, compared_streams = 0;
        std::uint64_t verbatim = 0;
        for (const auto& shard : shards) {
            MemorySource src(shard);
            auto sr = IndexedReader::open(src, ro);
            REQUIRE(sr.ok());
            for (const ChunkIndex& e : sr->scene().index) {
                if (e.keyframe && e.keyframe->chunk_kind == 0 && e.gaussian_count == 0)
                    continue;  // filler
                REQUIRE(k < out.size());
                const ChunkIndex& m = out[k++];
                REQUIRE(m.bands.size() == e.bands.size());
                for (std::size_t b = 0; b < e.bands.size(); ++b) {
                    CHECK(same_bytes(range(merged, m.bands[b].offset, m.bands[b].length),
                                             range(shard, e.bands[b].offset, e.bands[b].length)));
                    verbatim += e.bands[b].length;
                }
                const Bytes in = range(shard, e.chunk_offset, e.chunk_length);
                const Bytes got = range(merged, m.chunk_offset, m.chunk_length);
                if (e.keyframe && e.keyframe->chunk_kind == 1) {
                    // Only reference_offset and keyframe_offset (16 bytes at content + 21) move.
                    REQUIRE(in.size() == got.size());
                    CHECK(same_bytes(in.first(9 + 21), got.first(9 + 21)));
                    CHECK(same_bytes(in.subspan(9 + 37), got.subspan(9 + 37)));
                    verbatim += in.size() - 16;
                    continue;
                }
                const auto a = streams_of(in), b = streams_of(got);
                REQUIRE(a.size() == b.size());
                for (std::size_t s = 0; s < a.size(); ++s) {
                    REQUIRE(a[s].first == b[s].first);
                    if (a[s].first == attr::window_index && a[s].second != b[s].second) continue;
                    CHECK(a[s].second == b[s].second);
                    ++compared_streams;
                    verbatim += a[s].second.size();
                }
            }
        }
        CHECK(k == out.size());
        CHECK(compared_streams > 0);
        CHECK(verbatim <= report.bytes_verbatim);
    }
}

TEST_CASE("chunk-level compression survives a merge: renumbered blocks are compressed again") {
    const auto frames = test::tracked_sequence(10, 60, 1, kFps, 3, 6);
    const GridPlan plan = make_plan(frames, ConvertShape::per_frame);
    const auto shards = encode_shards(frames, plan, "deflate");
    const auto merged = merge(shards);
    const auto single = encode(frames, plan, 0, frames.size(), "deflate");
    check_valid(merged);
    check_same_scene(merged, single, frames.size());
}

TEST_CASE("a merge is deterministic, whatever order the parts come in") {
    const auto frames = test::tracked_sequence(10, 40, 1, kFps, 4, 6);
    const GridPlan plan = make_plan(frames, ConvertShape::adaptive);
    const auto shards = encode_shards(frames, plan);
    const auto once = merge(shards);
    CHECK(merge(shards) == once);
    std::vector<std::vector<std::uint8_t>> reversed(shards.rbegin(), shards.rend());
    MergeReport report;
    CHECK(merge(reversed, {}, &report) == once);
    CHECK(report.order == std::vector<std::size_t>{2, 1, 0});
    CHECK(report.base == 2);
    // A named base whose front matter is the same gives the same file.
    MergeOptions named;
    named.base = 1;
    CHECK(merge(shards, named) == once);
}

TEST_CASE("parts on different grids are refused as grid-mismatch, naming the field") {
    // Files converted without a plan: shards of two plans are refused before their grids are
    // compared (plan-mismatch, test_sharded_parts.cpp).
    const auto frames = test::tracked_sequence(8, 30, 1, kFps, 5, 6);
    auto whole = [&](std::size_t first, std::size_t count, double pos) {
        ConvertOptions o;
        o.fps = kFps;
        QuantBounds t = preset_tolerance(Preset::default_, 2);
        t.pos = pos;
        o.tolerance = t;
        MemorySink sink;
        REQUIRE(convert_frames(std::span(frames).subspan(first, count), o, sink).ok());
        return sink.take();
    };
    MergeOptions o;
    o.names = {"a.4dgs", "b.4dgs"};
    const Error e = merge_error({whole(0, 4, 1e-3), whole(0, 4, 2e-3)}, o);
    CHECK(e.refusal == refusal::kGridMismatch);
    CHECK(e.field == "Quantization.step_pos");
    CHECK(e.message.find("b.4dgs") != std::string::npos);
    // Another clock is another scene.
    const Error clock = merge_error({whole(0, 4, 1e-3), whole(2, 6, 1e-3)});
    CHECK(clock.refusal == refusal::kSceneMismatch);
    CHECK(clock.field == "Header.duration_sec");
}

TEST_CASE("overlapping timelines are refused unless allow_overlap says the union is intended") {
    const auto frames = test::tracked_sequence(8, 30, 1, kFps, 6, 6);
    for (ConvertShape shape : {ConvertShape::per_frame, ConvertShape::keyframe_delta}) {
        INFO(to_string(shape));
        const GridPlan plan = make_plan(frames, shape);
        const std::vector<std::vector<std::uint8_t>> parts = {encode(frames, plan, 0, 8),
                                                              encode(frames, plan, 4, 8)};
        const Error e = merge_error(parts);
        CHECK(e.refusal == refusal::kOverlappingParts);
        CHECK(e.message.find("part 1") != std::string::npos);
        MergeOptions allow;
        allow.allow_overlap = true;
        if (shape == ConvertShape::per_frame) {
            const auto merged = merge(parts, allow);
            check_valid(merged);
            MemorySource src(merged);
            auto r = IndexedReader::open(src);
            REQUIRE(r.ok());
            CHECK(r->scene().header.gaussian_count == 30 * 12);  // the union: frames 4..7 twice
        } else {
            CHECK(merge_error(parts, allow).refusal == refusal::kOverlappingParts);
        }
    }
    // Keyframe-delta shards that leave a hole cannot tile the clock: a plan's shards name the
    // frames missing (missing-slice; timeline-gap for shards that name only their times, below).
    const GridPlan kd = make_plan(frames, ConvertShape::keyframe_delta);
    const Error gap = merge_error({encode(frames, kd, 4, 8)});
    CHECK(gap.refusal == refusal::kMissingSlice);
    CHECK(gap.message.find("frames [0, 4)") != std::string::npos);
}

TEST_CASE("conflicting extras are refused by name, and equal ones are not") {
    // Parts written directly on one fixed grid, each a frame of its own, with their own extras.
    auto grid = grid_for_tolerance(preset_tolerance(Preset::default_, 2), {-1, -1, -1, 1, 1, 1}, 2);
    REQUIRE(grid.ok());
    auto part = [&](int frame, std::optional<Camera> camera, std::vector<Metadata> metadata) {
        GaussianColumns c;
        c.count = 3;
        for (int i = 0; i < 3; ++i) {
            c.position.insert(c.position.end(), {0.1f * float(i), 0, 0});
            c.scale.insert(c.scale.end(), {0.1f, 0.1f, 0.1f});
            c.rotation.insert(c.rotation.end(), {0, 0, 0, 1});
            c.color.insert(c.color.end(), {0.5f, 0.5f, 0.5f, 1});
            c.mu_t.push_back(float(frame));
            c.sigma_t.push_back(std::numeric_limits<float>::infinity());
            c.win_lo.push_back(frame);
            c.win_hi.push_back(frame + 1);
        }
        SceneInput in;
        in.header.duration_sec = 2;
        in.header.camera = camera;
        in.header.metadata = std::move(metadata);
        in.gaussians = c.batch();
        WriterOptions o;
        o.grid = *grid;
        auto bytes = write_scene(in, o);
        REQUIRE(bytes.ok());
        return *bytes;
    };
    Camera cam;
    cam.fov_y_deg = 60;
    cam.target = {0, 0, -1};
    cam.interpolation = "linear";
    Camera other = cam;
    other.fov_y_deg = 45;
    const Metadata title{"title", {{"title", "a"}}};
    // Equal extras merge.
    const auto ok = merge({part(0, cam, {title}), part(1, cam, {title})});
    check_valid(ok, true);
    // A camera that differs.
    Error e = merge_error({part(0, cam, {title}), part(1, other, {title})});
    CHECK(e.refusal == refusal::kConflictingExtras);
    CHECK(e.field == "Camera");
    // A metadata record the base part does not carry.
    e = merge_error({part(0, cam, {}), part(1, cam, {title})});
    CHECK(e.refusal == refusal::kConflictingExtras);
    CHECK(e.field == "Metadata 'title'");
    // Unless that part is named the base, and the other's are a subset of it.
    MergeOptions base;
    base.base = 1;
    check_valid(merge({part(0, cam, {}), part(1, cam, {title})}, base), true);
}

TEST_CASE("a part that is not a valid file is refused as invalid-part, naming it and why") {
    const auto frames = test::tracked_sequence(8, 30, 1, kFps, 7, 6);
    const GridPlan plan = make_plan(frames, ConvertShape::per_frame);
    const auto good = encode(frames, plan, 0, 4);
    const auto second = encode(frames, plan, 4, 8);
    MergeOptions o;
    o.names = {"good.4dgs", "bad.4dgs"};
    struct Case {
        const char* what;
        std::vector<std::uint8_t> bytes;
        std::string_view underlying;
    };
    std::vector<std::uint8_t> garbage(200, 0x42);
    auto truncated = second;
    truncated.resize(truncated.size() - 50);
    auto crc = second;
    crc[crc.size() - 60] ^= 0xFF;  // inside the summary
    std::vector<Case> cases = {{"not a .4dgs file", garbage, refusal::kMagicMismatch},
                               {"truncated", truncated, refusal::kTruncated},
                               // The readers read past a damaged summary by scanning the file
                               // (issue 15); the scan then names the damage it meets first.
                               {"summary bytes changed", crc, {}}};
    for (const Case& c : cases) {
        INFO(c.what);
        const Error e = merge_error({good, c.bytes}, o);
        CHECK(e.refusal == refusal::kInvalidPart);
        CHECK(e.field == "bad.4dgs");
        if (!c.underlying.empty()) CHECK(e.value == c.underlying);
        CHECK(!e.value.empty());
    }
    // A chunk record whose bytes no longer say what its index entry does: found while copying.
    MemorySource src(second);
    auto reader = IndexedReader::open(src);
    REQUIRE(reader.ok());
    auto lying = second;
    lying[reader->scene().index[0].chunk_offset + 9 + 20] ^= 1;  // the Chunk's count
    const Error e = merge_error({good, lying}, o);
    CHECK(e.refusal == refusal::kInvalidPart);
    CHECK(e.value == refusal::kIndexRecordMismatch);
    // validate_parts finds what the structure does not show: a stream that does not decode.
    auto corrupt = second;
    corrupt[reader->scene().index[0].chunk_offset + reader->scene().index[0].chunk_length - 3] ^=
        0xFF;
    MergeOptions deep = o;
    deep.validate_parts = true;
    CHECK(merge_error({good, corrupt}, deep).refusal == refusal::kInvalidPart);
}

TEST_CASE("merging 64 shards holds at most twice the largest chunk plus the summary") {
    if (!test::live_bytes_counting()) {
        WARN("operator new is the sanitizer's here: peak memory is not measured");
        return;
    }
    // 64 one-frame shards of 16384 gaussians each: chunks of about 300 KiB (a writer's chunk
    // holds up to 65536).
    const std::size_t n = 16384, shards = 64;
    std::vector<PlyCloud> frames;
    const auto one = test::tracked_sequence(1, n, 1, kFps, 8, 6);
    for (std::size_t f = 0; f < shards; ++f) frames.push_back(one[0]);
    const GridPlan plan = make_plan(frames, ConvertShape::per_frame);
    std::vector<std::vector<std::uint8_t>> parts;
    for (std::size_t f = 0; f < shards; ++f) parts.push_back(encode(frames, plan, f, f + 1));
    std::vector<MemorySource> sources;
    for (const auto& p : parts) sources.emplace_back(p);
    std::vector<ByteSource*> ptrs;
    for (auto& s : sources) ptrs.push_back(&s);

    // The merged file goes to a sink that keeps nothing, so what is measured is the merge.
    test::DiscardingSink sink;
    MergeReport report;
    report.order.reserve(shards);
    const std::size_t before = test::live_bytes();
    test::reset_peak_live_bytes();
    REQUIRE(merge_scenes(ptrs, {}, sink, &report).ok());
    const std::size_t peak = test::peak_live_bytes() - before;
    const std::uint64_t limit = 2 * report.largest_chunk + report.summary_bytes;
    INFO("peak " << peak << " bytes; largest chunk " << report.largest_chunk << ", summary "
                 << report.summary_bytes);
    CHECK(report.chunks == shards);
    CHECK(report.largest_chunk > 64 * 1024);
    CHECK(peak < limit);
}

TEST_CASE(
    "keyframe-delta shards whose windows move: keyframes and delta births are renumbered, "
    "the states kept") {
    // Two shards of a 2-second scene written directly, each with its own Window Table: the first
    // holds [0, 1) (windows [0, 2)), the second [1, 2) (windows [1, 2) and, for a birth, [1.25,
    // 2)), so the second's indices move in the union. Each fills the rest of the clock with an
    // empty keyframe and says its slice in a 4dgs-shard Metadata record.
    auto grid = grid_for_tolerance(preset_tolerance(Preset::default_, 2), {-1, -1, -1, 1, 1, 1}, 2);
    REQUIRE(grid.ok());
    struct Step {
        double t0;
        std::vector<std::uint32_t> ids;
        GaussianColumns g;
    };
    auto columns = [](std::size_t n, float x, double lo) {
        GaussianColumns c;
        c.count = n;
        // Reserved first: GCC 12 otherwise takes the first insert into an empty vector for a
        // -Wstringop-overflow (a false positive, under -Werror).
        for (auto* v : {&c.position, &c.scale}) v->reserve(3 * n);
        for (auto* v : {&c.rotation, &c.color}) v->reserve(4 * n);
        for (std::size_t i = 0; i < n; ++i) {
            c.position.insert(c.position.end(), {x + 0.05f * float(i), 0.1f, -0.2f});
            c.scale.insert(c.scale.end(), {0.05f, 0.05f, 0.05f});
            c.rotation.insert(c.rotation.end(), {0, 0, 0, 1});
            c.color.insert(c.color.end(), {0.2f, 0.4f, 0.6f, 1});
            c.sigma_t.push_back(std::numeric_limits<float>::infinity());
            c.win_lo.push_back(lo);
            c.win_hi.push_back(2);
        }
        return c;
    };
    auto append = [](GaussianColumns& a, const GaussianColumns& b) {
        a.count += b.count;
        for (auto [x, y] : {std::pair{&a.position, &b.position},
                            {&a.scale, &b.scale},
                            {&a.rotation, &b.rotation},
                            {&a.color, &b.color},
                            {&a.sigma_t, &b.sigma_t}})
            x->insert(x->end(), y->begin(), y->end());
        a.win_lo.insert(a.win_lo.end(), b.win_lo.begin(), b.win_lo.end());
        a.win_hi.insert(a.win_hi.end(), b.win_hi.begin(), b.win_hi.end());
    };
    auto shard = [&](std::vector<Step>& steps, std::vector<std::uint8_t> schedule, double t0,
                     double t1) {
        std::vector<KeyframeStep> ks;
        for (Step& s : steps) ks.push_back({s.t0, s.g.batch(), s.ids});
        SceneHeader h;
        h.duration_sec = 2;
        h.metadata.push_back({"4dgs-shard", {{"t0", bound_string(t0)}, {"t1", bound_string(t1)}}});
        KeyframeWriterOptions ko;
        ko.base.grid = *grid;
        ko.keyframe_steps = std::move(schedule);
        auto bytes = write_keyframe_delta(ks, h, ko);
        if (!bytes.ok()) FAIL(bytes.error().describe());
        return *bytes;
    };
    std::vector<Step> a(3), b(4);
    a[0] = {0, {1, 2, 3}, columns(3, -0.5f, 0)};
    a[1] = {0.5, {1, 2, 3, 4}, columns(3, -0.4f, 0)};
    append(a[1].g, columns(1, 0.3f, 0));
    a[2] = {1, {}, GaussianColumns{}};
    b[0] = {0, {}, GaussianColumns{}};
    b[1] = {1, {10, 11}, columns(2, 0.1f, 1)};
    b[2] = {1.5, {10, 11, 12}, columns(2, 0.15f, 1)};
    append(b[2].g, columns(1, 0.6f, 1.25));
    b[3] = {1.75, {10, 11, 12}, b[2].g};
    const auto first = shard(a, {1, 0, 1}, 0, 1);
    const auto second = shard(b, {1, 1, 0, 0}, 1, 2);
    // Alone, the second leaves [0, 1) untiled.
    CHECK(merge_error({second}).refusal == refusal::kTimelineGap);
    MergeReport report;
    const auto merged = merge({second, first}, {}, &report);
    check_valid(merged, true);
    CHECK(report.window_streams_rewritten >= 2);  // b's keyframe and its birth-carrying delta
    CHECK(report.chunks_dropped == 2);
    // Every instant decodes to the state the part that holds it decodes to (window indices aside,
    // which the union renumbers: the windows themselves are the same).
    for (double t : {0.25, 0.75, 1.25, 1.6, 1.9}) {
        INFO("t = " << t);
        MemorySource ms(merged), ps(t < 1 ? first : second);
        GaussianBlock bm, bp;
        for (auto access :
             {OpenSceneOptions::Access::automatic, OpenSceneOptions::Access::streaming}) {
            OpenSceneOptions oo;
            oo.access = access;
            auto rm = open_scene(ms, oo);
            auto rp = open_scene(ps, oo);
            REQUIRE(rm.ok());
            REQUIRE(rp.ok());
            SceneWorkspace wm, wp;
            REQUIRE(rm->state_at(t, bm, wm).ok());
            REQUIRE(rp->state_at(t, bp, wp).ok());
            REQUIRE(bm.count == bp.count);
            CHECK(bm.position == bp.position);
            CHECK(bm.win_lo == bp.win_lo);
            CHECK(bm.win_hi == bp.win_hi);
            CHECK(bm.gaussian_id == bp.gaussian_id);
            CHECK(bm.mu_t == bp.mu_t);
        }
    }
}

TEST_CASE(
    "a window_index stream that grows when renumbered is spliced in, the rest of the chunk "
    "byte for byte") {
    // Part `late` holds one window, [0.5, 1); part `early` holds 300 windows in [0, 0.3), so in
    // the union late's window index 0 becomes 300, which needs a wider symbol: its chunk's
    // window_index stream grows. With SH degree 0 the chunk has no bands, so its buffer has no
    // room to grow into and the record is read again around the stream (merge.cpp: splice).
    auto grid = grid_for_tolerance(preset_tolerance(Preset::default_, 2), {-1, -1, -1, 1, 1, 1}, 1);
    REQUIRE(grid.ok());
    auto part = [&](std::size_t n, auto window_of) {
        GaussianColumns c;
        c.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            c.position[3 * i] = -0.9f + 1.8f * float(i) / float(n);
            for (int k = 0; k < 3; ++k) c.scale[3 * i + k] = 0.05f;
            c.rotation[4 * i + 3] = 1;
            for (int k = 0; k < 4; ++k) c.color[4 * i + k] = 0.5f;
            c.sigma_t[i] = std::numeric_limits<float>::infinity();
            std::tie(c.win_lo[i], c.win_hi[i]) = window_of(i);
            c.mu_t[i] = float(c.win_lo[i]);
        }
        SceneInput in;
        in.header.duration_sec = 1;
        in.gaussians = c.batch();
        WriterOptions o;
        o.grid = *grid;
        auto bytes = write_scene(in, o);
        REQUIRE(bytes.ok());
        return *bytes;
    };
    const auto early = part(300, [](std::size_t i) {
        return std::pair{double(i) / 1000, double(i + 1) / 1000};
    });
    const auto late = part(500, [](std::size_t) { return std::pair{0.5, 1.0}; });
    MergeReport report;
    const auto merged = merge({late, early}, {}, &report);
    check_valid(merged, true);
    CHECK(report.window_streams_rewritten == 1);

    MemorySource ls(late), ms(merged);
    auto lr = IndexedReader::open(ls);
    auto mr = IndexedReader::open(ms);
    REQUIRE(lr.ok());
    REQUIRE(mr.ok());
    REQUIRE(lr->scene().index.size() == 1);
    REQUIRE(mr->scene().index.size() == 301);
    const ChunkIndex& in = lr->scene().index[0];
    const ChunkIndex& out = mr->scene().index[300];
    REQUIRE(in.bands.empty());
    const auto a = streams_of(range(late, in.chunk_offset, in.chunk_length));
    const auto b = streams_of(range(merged, out.chunk_offset, out.chunk_length));
    REQUIRE(a.size() == b.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
        INFO("attribute " << int(a[k].first));
        REQUIRE(a[k].first == b[k].first);
        if (a[k].first == attr::window_index)
            CHECK(b[k].second.size() > a[k].second.size());  // it grew
        else
            CHECK(a[k].second == b[k].second);
    }
    // The chunk decodes to late's gaussians, now in window 300 of the union.
    DecodeWorkspace wl, wm;
    REQUIRE(lr->decode_chunk(0, wl).ok());
    REQUIRE(mr->decode_chunk(300, wm).ok());
    REQUIRE(wl.bins.count == wm.bins.count);
    for (std::uint8_t id = 0; id < attr::kKnownCount; ++id) {
        if (id == attr::window_index) continue;
        INFO(attr::kNames[id]);
        CHECK(*wl.bins.column(id) == *wm.bins.column(id));
    }
    CHECK(std::all_of(wm.bins.window_index.begin(), wm.bins.window_index.end(), [](std::int32_t w) { return w == 300; }));
}

TEST_CASE("corrupted parts are refused or merged, never a crash, a hang or a runaway allocation") {
    const auto frames = test::tracked_sequence(8, 20, 1, kFps, 9, 6);
    for (ConvertShape shape : {ConvertShape::per_frame, ConvertShape::keyframe_delta}) {
        INFO(to_string(shape));
        const GridPlan plan = make_plan(frames, shape);
        const std::vector<std::vector<std::uint8_t>> good = {encode(frames, plan, 0, 4),
                                                             encode(frames, plan, 4, 8)};
        std::mt19937 rng(42);
        std::size_t refused = 0;
        for (int round = 0; round < 150; ++round) {
            auto parts = good;
            auto& victim = parts[rng() % 2];
            if (round % 10 == 9) {
                victim.resize(rng() % victim.size());  // a cut anywhere
            } else {
                for (int k = 1 + static_cast<int>(rng() % 4); k > 0; --k)
                    victim[rng() % victim.size()] ^= static_cast<std::uint8_t>(1 + rng() % 255);
            }
            std::vector<MemorySource> sources;
            for (const auto& p : parts) sources.emplace_back(p);
            std::vector<ByteSource*> ptrs;
            for (auto& s : sources) ptrs.push_back(&s);
            test::DiscardingSink sink;
            const Status st = merge_scenes(ptrs, {}, sink);
            if (st.ok()) continue;
            ++refused;
            CHECK(st.error().kind != ErrorKind::io);  // a bad part is the file's fault
        }
        CHECK(refused > 0);
    }
}
