// open_scene (fourdgs/open_scene.hpp): one call, the front-end the temporal model needs, the
// file read once, and the same questions answered whatever the model and whatever the source.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/open_scene.hpp"
#include "support/counting_source.hpp"
#include "support/pipe_source.hpp"
#include "support/same_members.hpp"

using namespace fourdgs;
using test::CountingSource;

namespace {

std::vector<std::uint8_t> birth_file() {
    auto bytes = read_file(std::string(FOURDGS_TEST_DATA) + "/birth-deflate.4dgs");
    REQUIRE(bytes.ok());
    return std::move(bytes).value();
}

// Six steps of 0.5 s: eight gaussians walking along x, one dying at step 3, one born at step 4;
// a keyframe every three steps.
std::vector<std::uint8_t> keyframe_file(bool with_index) {
    constexpr std::size_t kSteps = 6;
    std::vector<GaussianColumns> cols(kSteps);
    std::vector<std::vector<std::uint32_t>> ids(kSteps);
    std::vector<KeyframeStep> steps(kSteps);
    for (std::size_t s = 0; s < kSteps; ++s) {
        GaussianColumns& c = cols[s];
        for (std::uint32_t g = 0; g < 9; ++g) {
            if ((g == 7 && s >= 3) || (g == 8 && s < 4)) continue;
            ids[s].push_back(g);
            c.position.insert(c.position.end(), {0.1f * g + 0.05f * s, 0.2f * (g % 3), 0.0f});
            c.scale.insert(c.scale.end(), {0.05f, 0.05f, 0.05f});
            c.rotation.insert(c.rotation.end(), {0, 0, 0, 1});
            c.color.insert(c.color.end(), {0.5f, 0.1f * g, 0.2f, 0.9f});
            c.sigma_t.push_back(std::numeric_limits<float>::infinity());
            ++c.count;
        }
        steps[s].t0 = 0.5 * static_cast<double>(s);
        steps[s].gaussians = c.batch();
        steps[s].ids = ids[s];
    }
    SceneHeader h;
    h.duration_sec = 3;
    KeyframeWriterOptions o;
    o.keyframe_every = 3;
    o.base.write_index = with_index;
    auto bytes = write_keyframe_delta(steps, h, o);
    REQUIRE(bytes.ok());
    return std::move(bytes).value();
}

// open_scene, which must succeed.
std::optional<SceneReader> opened(ByteSource& src) {
    auto r = open_scene(src);
    REQUIRE(r.ok());
    return std::move(r).value();
}

void same_block(const GaussianBlock& a, const GaussianBlock& b) {
    REQUIRE(a.count == b.count);
    test::check_same_members(a, b, &GaussianBlock::position, &GaussianBlock::color,
                             &GaussianBlock::mu_t, &GaussianBlock::gaussian_id);
}

}  // namespace

TEST_CASE("open_scene reads a random-access file's magic, tail and summary once, whatever the "
          "temporal model") {
    for (const bool keyframes : {false, true}) {
        INFO((keyframes ? "keyframe-delta" : "gaussian-birth"));
        const std::vector<std::uint8_t> file = keyframes ? keyframe_file(true) : birth_file();
        CountingSource src(file);
        auto scene = opened(src);
        CHECK(scene->keyframe_delta() == keyframes);
        CHECK(scene->random_access());
        SceneWorkspace ws;
        GaussianBlock state;
        REQUIRE(scene->state_at(1.0, state, ws).ok());
        CHECK(state.count > 0);
        CHECK(src.magic_reads() == 1);
        CHECK(src.tail_reads() == 1);
        CHECK(src.summary_reads() == 1);
    }
}

TEST_CASE("the counting source sees a file opened twice (what open_scene replaces)") {
    const std::vector<std::uint8_t> file = keyframe_file(true);
    CountingSource src(file);
    ReaderOptions ro;
    ro.accept_keyframe_delta = true;
    REQUIRE(IndexedReader::open(src, ro).ok());
    REQUIRE(KeyframeDeltaReader::open(src, ro).ok());
    CHECK(src.magic_reads() == 2);
    CHECK(src.tail_reads() == 2);
    CHECK(src.summary_reads() == 2);
}

TEST_CASE("KeyframeDeltaReader::open(IndexedReader&&) takes over the opened state and reads "
          "nothing again") {
    const std::vector<std::uint8_t> file = keyframe_file(true);
    CountingSource src(file);
    ReaderOptions ro;
    ro.accept_keyframe_delta = true;
    auto base = IndexedReader::open(src, ro);
    REQUIRE(base.ok());
    const std::size_t reads = src.reads().size();
    auto kd = KeyframeDeltaReader::open(std::move(base).value());
    REQUIRE(kd.ok());
    CHECK(src.reads().size() == reads);
    CHECK(kd->timeline().entries().size() == 6);
    // A gaussian-birth file is refused by the same rule as open(source).
    const std::vector<std::uint8_t> birth = birth_file();
    MemorySource bsrc(birth);
    auto bbase = IndexedReader::open(bsrc, ro);
    REQUIRE(bbase.ok());
    CHECK(KeyframeDeltaReader::open(std::move(bbase).value()).error().refusal ==
          refusal::kUnknownTemporalModel);
}

TEST_CASE("open_scene answers state_at as the front-end of the file's model does, and the calls "
          "only one model has as that model's reader, refused on the other") {
    SECTION("gaussian-birth: the chunks covering t") {
        const std::vector<std::uint8_t> file = birth_file();
        MemorySource src(file);
        auto scene = opened(src);
        auto reader = IndexedReader::open(src);
        REQUIRE(reader.ok());
        const double duration = scene->scene().header.duration_sec;
        SceneWorkspace ws;
        std::vector<DecodeWorkspace> pool;
        for (double t : {0.0, duration / 3, duration / 2, duration * 0.99}) {
            GaussianBlock a, b;
            REQUIRE(scene->state_at(t, a, ws, 2).ok());
            REQUIRE(reader->read_instant(t, b, pool).ok());
            same_block(a, b);
            CHECK(*scene->chunks_for(t) == reader->chunks_for(t));
            std::uint64_t cost = 0;
            for (std::size_t e : reader->chunks_for(t)) cost += reader->fetch_cost(e);
            CHECK(*scene->fetch_cost(t) == cost);
        }
        CHECK(*scene->entry_fetch_cost(0) == reader->fetch_cost(0));
        // What only gaussian-birth has: every gaussian in one block, one chunk alone.
        GaussianBlock all, expected;
        REQUIRE(scene->read_every_gaussian(all, ws, 2).ok());
        REQUIRE(reader->read_all(expected, pool).ok());
        same_block(all, expected);
        const std::size_t last = scene->scene().index.size() - 1;
        DecodeWorkspace one, other;
        REQUIRE(scene->decode_chunk(last, one).ok());
        REQUIRE(reader->decode_chunk(last, other).ok());
        same_block(one.block, other.block);
        BlockInfo info;
        info.kind = BlockInfo::Kind::state;
        REQUIRE(scene->state_at(0, all, ws, 1, &info).ok());
        CHECK(info.kind == BlockInfo::Kind::instant);
        CHECK_FALSE(scene->read_by_scan());
        CHECK_FALSE(scene->scan_cause().has_value());
    }
    SECTION("keyframe-delta: the composed state, its chain and the chain's cost") {
        const std::vector<std::uint8_t> file = keyframe_file(true);
        MemorySource src(file);
        auto scene = opened(src);
        REQUIRE(scene->keyframe_delta());
        REQUIRE(scene->random_access());
        auto reader = KeyframeDeltaReader::open(src);
        REQUIRE(reader.ok());
        SceneWorkspace ws;
        for (double t : {0.0, 0.7, 1.6, 2.9}) {
            GaussianBlock a, b;
            REQUIRE(scene->state_at(t, a, ws).ok());
            REQUIRE(reader->state_at(t, b).ok());
            same_block(a, b);
            CHECK(*scene->chunks_for(t) == *reader->chain(t));
            CHECK(*scene->fetch_cost(t) == reader->plan(t)->total_bytes());
        }
        const ChunkIndex& last = scene->scene().index.back();
        CHECK(*scene->entry_fetch_cost(scene->scene().index.size() - 1) ==
              reader->plan(last.t0)->total_bytes());
        GaussianBlock out;
        CHECK(scene->state_at(3.0, out, ws).error().refusal == refusal::kTimeOutOfRange);
        // The state's StateInfo when asked; the gaussian-birth calls refused.
        GaussianBlock expected;
        BlockInfo info;
        StateInfo state;
        REQUIRE(scene->state_at(1.6, out, ws, 0, &info).ok());
        REQUIRE(reader->state_at(1.6, expected, &state).ok());
        same_block(out, expected);
        CHECK(info.kind == BlockInfo::Kind::state);
        CHECK(info.record.offset == state.offset);
        CHECK(info.record.depth == state.depth);
        CHECK(info.record.live_count == state.live_count);
        CHECK(scene->read_every_gaussian(out, ws).error().refusal ==
              refusal::kReadAllNeedsGaussianBirth);
        DecodeWorkspace one;
        CHECK(scene->decode_chunk(0, one).error().refusal == refusal::kChunkDecodeNeedsChain);
    }
}

TEST_CASE("fetch_ranges(t) holds every byte state_at(t) reads after open and sums to fetch_cost(t) "
          "(what a browser fetches before it decodes)") {
    auto sh3 = read_file(std::string(FOURDGS_TEST_DATA) + "/birth-zstd-sh3-balanced.4dgs");
    REQUIRE(sh3.ok());
    struct Case {
        const char* name;
        std::vector<std::uint8_t> file;
        int max_sh_degree;
    };
    const std::vector<Case> cases = {{"birth-deflate", birth_file(), 3},
                                     {"birth-zstd-sh3-balanced", *sh3, 3},
                                     {"birth-zstd-sh3-balanced capped at band 1", *sh3, 1},
                                     {"keyframe-delta", keyframe_file(true), 3}};
    for (const Case& c : cases) {
        INFO(c.name);
        CountingSource src(c.file);
        OpenSceneOptions options;
        options.reader.decode.max_sh_degree = c.max_sh_degree;
        auto scene = open_scene(src, options);
        REQUIRE(scene.ok());
        const double duration = scene->scene().header.duration_sec;
        SceneWorkspace ws;
        for (double t : {0.0, duration / 3, duration / 2, duration * 0.99}) {
            auto ranges = scene->fetch_ranges(t);
            REQUIRE(ranges.ok());
            std::uint64_t sum = 0;
            for (const ByteRange& r : *ranges) sum += r.length;
            CHECK(sum == *scene->fetch_cost(t));
            src.clear();
            GaussianBlock block;
            REQUIRE(scene->state_at(t, block, ws, 1).ok());
            for (const auto& read : src.reads()) {
                const bool inside = std::any_of(ranges->begin(), ranges->end(), [&](const ByteRange& r) {
                    return read.offset >= r.offset && read.offset + read.length <= r.offset + r.length;
                });
                INFO("t " << t << ": read of " << read.length << " bytes at " << read.offset);
                CHECK(inside);
            }
        }
    }
    // A stream has no index to plan from.
    const std::vector<std::uint8_t> file = birth_file();
    CountingSource pipe(file, false);
    auto streamed = open_scene(pipe);
    REQUIRE(streamed.ok());
    CHECK(streamed->fetch_ranges(0.0).error().refusal == refusal::kNotSeekable);
}

TEST_CASE("read_all visits every chunk (gaussian-birth) or every composed state in time order "
          "(keyframe-delta)") {
    {
        const std::vector<std::uint8_t> file = birth_file();
        MemorySource src(file);
        auto scene = opened(src);
        auto reader = IndexedReader::open(src);
        REQUIRE(reader.ok());
        GaussianBlock all, expected;
        std::vector<std::size_t> entries;
        SceneWorkspace ws;
        REQUIRE(scene->read_all([&](const StoredBlock& b) {
                         entries.push_back(b.entry);
                         CHECK(b.t0 == scene->scene().index[b.entry].t0);
                         all.append(b.gaussians);
                         return ok_status();
                     }, ws).ok());
        std::vector<DecodeWorkspace> pool;
        REQUIRE(reader->read_all(expected, pool).ok());
        same_block(all, expected);
        std::vector<std::size_t> order(scene->scene().index.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        CHECK(entries == order);
    }
    {
        const std::vector<std::uint8_t> file = keyframe_file(true);
        MemorySource src(file);
        auto scene = opened(src);
        SceneWorkspace ws;
        std::vector<double> starts;
        REQUIRE(scene->read_all([&](const StoredBlock& b) {
                         GaussianBlock expected;
                         SceneWorkspace other;
                         REQUIRE(scene->state_at(b.t0, expected, other).ok());
                         same_block(b.gaussians, expected);
                         starts.push_back(b.t0);
                         return ok_status();
                     }, ws).ok());
        CHECK(starts == std::vector<double>{0, 0.5, 1, 1.5, 2, 2.5});
    }
    // A visit's error ends the walk with it.
    const std::vector<std::uint8_t> file = birth_file();
    MemorySource src(file);
    auto scene = open_scene(src);
    SceneWorkspace ws;
    int visits = 0;
    const Status st = scene->read_all([&](const StoredBlock&) -> Status {
        ++visits;
        return make_error(ErrorKind::invalid_argument, refusal::kInvalidArgument, "stop");
    }, ws);
    CHECK(st.error().message == "stop");
    CHECK(visits == 1);
}

TEST_CASE("on a pipe, open_scene reads the stream once, front to back, with the streaming "
          "front-ends",
          "[threads]") {
    SECTION("gaussian-birth: one state_at reads the rest; a second is not-seekable") {
        const std::vector<std::uint8_t> file = birth_file();
        MemorySource mem(file);
        auto indexed = IndexedReader::open(mem);
        REQUIRE(indexed.ok());
        const double t = indexed->scene().header.duration_sec / 2;
        GaussianBlock expected;
        std::vector<DecodeWorkspace> pool;
        REQUIRE(indexed->read_instant(t, expected, pool).ok());
        test::through_pipe(file, [&](ByteSource& pipe) {
            auto scene = open_scene(pipe);
            REQUIRE(scene.ok());
            CHECK_FALSE(scene->random_access());
            CHECK_FALSE(scene->keyframe_delta());
            SceneWorkspace ws;
            GaussianBlock got;
            REQUIRE(scene->state_at(t, got, ws).ok());
            same_block(got, expected);
            CHECK(scene->scene().index.size() == indexed->scene().index.size());
            CHECK(scene->state_at(t, got, ws).error().refusal == refusal::kNotSeekable);
            CHECK(scene->chunks_for(t).error().refusal == refusal::kNotSeekable);
            CHECK(scene->fetch_cost(t).error().refusal == refusal::kNotSeekable);
            return 0;
        });
    }
    SECTION("keyframe-delta: state_at forward only, every byte read once") {
        const std::vector<std::uint8_t> file = keyframe_file(true);
        MemorySource mem(file);
        auto reader = KeyframeDeltaReader::open(mem);
        REQUIRE(reader.ok());
        CountingSource pipe(file, /*random_access=*/false);
        auto scene = open_scene(pipe);
        REQUIRE(scene.ok());
        CHECK(scene->keyframe_delta());
        SceneWorkspace ws;
        for (double t : {0.2, 0.3, 1.1, 2.6}) {
            GaussianBlock got, expected;
            REQUIRE(scene->state_at(t, got, ws).ok());
            REQUIRE(reader->state_at(t, expected).ok());
            same_block(got, expected);
        }
        GaussianBlock got;
        CHECK(scene->state_at(1.2, got, ws).error().refusal == refusal::kNotSeekable);
        // read_all hands over the current state, then those that follow.
        std::vector<double> starts;
        REQUIRE(scene->read_all([&](const StoredBlock& b) {
                         starts.push_back(b.t0);
                         return ok_status();
                     }, ws).ok());
        CHECK(starts == std::vector<double>{2.5});
        CHECK(scene->scene().statistics.has_value());  // the summary, read at the end
        // Forward only, and the magic read once.
        CHECK(pipe.magic_reads() == 1);
        std::uint64_t at = 0;
        for (const CountingSource::Read& r : pipe.reads()) {
            CHECK(r.offset >= at);
            at = r.offset + r.length;
        }
    }
}

TEST_CASE("a stream's stored blocks are pulled one at a time (the C ABI's fourdgs_stream), "
          "and a random-access scene has none to pull") {
    OpenSceneOptions streaming;
    streaming.access = OpenSceneOptions::Access::streaming;
    SECTION("gaussian-birth: the chunks in file order, as read_all would visit them") {
        const std::vector<std::uint8_t> file = birth_file();
        MemorySource mem(file);
        auto indexed = IndexedReader::open(mem);
        REQUIRE(indexed.ok());
        CountingSource src(file, /*random_access=*/true);
        auto scene = open_scene(src, streaming);  // a random-access source, read front to back
        REQUIRE(scene.ok());
        CHECK_FALSE(scene->random_access());
        REQUIRE_FALSE(scene->keyframe_delta());
        DecodeWorkspace ws;
        GaussianBlock got;
        BlockInfo info;
        std::size_t chunks = 0;
        for (;;) {
            auto more = scene->next_block(got, info);
            REQUIRE(more.ok());
            if (!*more) break;
            REQUIRE(chunks < indexed->scene().index.size());
            const ChunkIndex& entry = indexed->scene().index[chunks];
            CHECK(info.kind == BlockInfo::Kind::chunk);
            CHECK(info.record.offset == entry.chunk_offset);
            CHECK(info.record.t0 == entry.t0);
            CHECK(info.record.t1 == entry.t1);
            REQUIRE(indexed->decode_chunk(chunks, ws).ok());
            same_block(got, ws.block);
            ++chunks;
        }
        CHECK(chunks == indexed->scene().index.size());
        CHECK(scene->scene().index.size() == chunks);  // the scene is the front-end's
        CHECK(src.magic_reads() == 1);                 // the sniffed Header was replayed
    }
    SECTION("keyframe-delta: the composed states in time order") {
        const std::vector<std::uint8_t> file = keyframe_file(true);
        MemorySource mem(file);
        auto reader = KeyframeDeltaReader::open(mem);
        REQUIRE(reader.ok());
        auto scene = open_scene(mem, streaming);
        REQUIRE(scene.ok());
        REQUIRE(scene->keyframe_delta());
        std::vector<double> starts;
        GaussianBlock got, expected;
        BlockInfo info;
        for (;;) {
            auto more = scene->next_block(got, info);
            REQUIRE(more.ok());
            if (!*more) break;
            CHECK(info.kind == BlockInfo::Kind::state);
            starts.push_back(info.record.t0);
            StateInfo state;
            REQUIRE(reader->state_at(info.record.t0, expected, &state).ok());
            same_block(got, expected);
            CHECK(info.record.offset == state.offset);
            CHECK(info.record.live_count == state.live_count);
        }
        CHECK(starts == std::vector<double>{0, 0.5, 1, 1.5, 2, 2.5});
    }
    SECTION("random access: the indexed front-ends, nothing to pull") {
        const std::vector<std::uint8_t> file = birth_file();
        MemorySource mem(file);
        std::optional<SceneReader> scene = opened(mem);
        GaussianBlock got;
        BlockInfo info;
        CHECK(scene->next_block(got, info).error().refusal == refusal::kInvalidArgument);
    }
}

TEST_CASE("a gaussian-birth stream's every gaussian is read_all's chunks joined, and one chunk "
          "alone needs the index") {
    const std::vector<std::uint8_t> file = birth_file();
    MemorySource mem(file);
    OpenSceneOptions streaming;
    streaming.access = OpenSceneOptions::Access::streaming;
    auto scene = open_scene(mem, streaming);
    REQUIRE(scene.ok());
    auto reader = IndexedReader::open(mem);
    REQUIRE(reader.ok());
    SceneWorkspace ws;
    std::vector<DecodeWorkspace> pool;
    GaussianBlock all, expected;
    REQUIRE(scene->read_every_gaussian(all, ws).ok());
    REQUIRE(reader->read_all(expected, pool).ok());
    same_block(all, expected);
    DecodeWorkspace one;
    CHECK(scene->decode_chunk(0, one).error().refusal == refusal::kNotSeekable);
    CHECK(scene->read_every_gaussian(all, ws).error().refusal == refusal::kNotSeekable);
}

TEST_CASE("no-chunk-index: a keyframe-delta file without an index is scanned once and sought "
          "by the index built from its composed states, as one with its own index (M016)") {
    const std::vector<std::uint8_t> file = keyframe_file(false), indexed = keyframe_file(true);
    MemorySource src(file), with_index(indexed);
    auto direct = KeyframeDeltaReader::open(src);
    REQUIRE(direct.ok());
    CHECK(direct->base().read_by_scan());
    CHECK(direct->base().index_built_by_scan());
    // The built index is the one the writer writes (the Footer and Statistics aside, the two
    // files differ by a constant shift of the chunk offsets), the six keyframe-delta fields
    // included.
    auto reference = KeyframeDeltaReader::open(with_index);
    REQUIRE(reference.ok());
    const std::vector<ChunkIndex>& built = direct->scene().index;
    const std::vector<ChunkIndex>& own = reference->scene().index;
    REQUIRE(built.size() == own.size());
    REQUIRE(!built.empty());
    const std::uint64_t shift = own[0].chunk_offset - built[0].chunk_offset;
    for (std::size_t i = 0; i < built.size(); ++i) {
        ChunkIndex moved = built[i];
        moved.chunk_offset += shift;
        for (ChunkIndex::Band& b : moved.bands) b.offset += shift;
        REQUIRE(moved.keyframe.has_value());
        moved.keyframe->keyframe_offset += shift;
        if (moved.keyframe->chunk_kind == kChunkKindDelta) moved.keyframe->reference_offset += shift;
        CHECK(moved == own[i]);
    }
    // Composed once: the open read the file's bytes a single time (plus the tail it tried
    // first and the Header it read to pick the walk), not a scan and then a composition.
    CHECK(direct->bytes_fetched() < file.size() + 512);
    // Every state, sought, equals the state front to back, through open_scene too.
    auto scene = open_scene(src);
    REQUIRE(scene.ok());
    CHECK(scene->random_access());
    CHECK(scene->index_built_by_scan());
    CHECK(scene->read_by_scan());
    OpenSceneOptions o;
    o.access = OpenSceneOptions::Access::streaming;
    MemorySource again(file);
    auto stream = open_scene(again, o);
    REQUIRE(stream.ok());
    SceneWorkspace ws, ws2;
    int states = 0;
    REQUIRE(stream->read_all([&](const StoredBlock& b) {
                     ++states;
                     GaussianBlock sought;
                     REQUIRE(scene->state_at(b.t0, sought, ws2).ok());
                     same_block(b.gaussians, sought);
                     return ok_status();
                 }, ws).ok());
    CHECK(states == 6);
    CHECK(scene->chunks_for(1.25).ok());
}

TEST_CASE("open_scene refuses what the readers refuse, on either path") {
    std::vector<std::uint8_t> file = birth_file();
    file[0] ^= 0xFF;
    for (const bool stream : {false, true}) {
        CountingSource src(file, !stream);
        CHECK(open_scene(src).error().refusal == refusal::kMagicMismatch);
    }
    // An unknown temporal model, read from a stream: the gaussian-birth reader's gate names it.
    std::vector<std::uint8_t> odd = birth_file();
    const std::string model = "gaussian-birth";
    auto at = std::search(odd.begin(), odd.end(), model.begin(), model.end());
    REQUIRE(at != odd.end());
    at[0] = 'G';
    CountingSource pipe(odd, false);
    CHECK(open_scene(pipe).error().refusal == refusal::kUnknownTemporalModel);
}
