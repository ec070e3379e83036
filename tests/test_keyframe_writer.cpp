// The keyframe-delta writer (fourdgs/keyframe_writer.hpp): seeded random state sequences with
// births, deaths, moves, colour changes, rotations, re-incarnations and id churn, written and read
// back through both front-ends, bin for bin against the states the writer quantized.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/validate.hpp"
#include "support/pipe_source.hpp"

using namespace fourdgs;

namespace {

struct StepData {
    double t0 = 0;
    std::vector<std::uint32_t> ids;
    std::vector<float> position, scale, rotation, color, motion, sigma, sh;
    std::vector<std::uint32_t> object;
};

struct Live {
    float p[3], s[3], q[4], c[4], v[3], sigma;
    std::vector<float> sh;
    std::uint32_t object;
};

struct Sequence {
    std::vector<StepData> data;
    std::vector<KeyframeStep> steps;
    SceneHeader header;
    std::uint32_t max_id = 0;
};

// A random sequence: `n0` initial gaussians, `ns` steps of 0.1 s. Per step about 5 % die, 5 % are
// born, 20 % move, 10 % change colour, 5 % rotate, 1 % change sigma_t (a re-incarnation), and
// every few steps a dead id comes back (id churn).
Sequence make_sequence(std::uint32_t seed, std::size_t n0, std::size_t ns, int sh_degree,
                       bool with_object, bool with_motion) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0, 1);
    const int per = 3 * ((sh_degree + 1) * (sh_degree + 1) - 1);
    std::map<std::uint32_t, Live> live;
    std::vector<std::uint32_t> dead;
    std::uint32_t next = 1000;
    auto fresh = [&]() {
        Live g{};
        for (int c = 0; c < 3; ++c) {
            g.p[c] = u(rng) * 4 - 2;
            g.s[c] = 0.01f + 0.05f * u(rng);
            g.v[c] = with_motion ? u(rng) - 0.5f : 0.0f;
        }
        for (int c = 0; c < 4; ++c) g.q[c] = u(rng) - 0.5f;
        g.q[3] += 1;
        for (int c = 0; c < 4; ++c) g.c[c] = u(rng);
        g.sigma = u(rng) < 0.5f ? std::numeric_limits<float>::infinity() : 0.05f + u(rng);
        g.sh.resize(per);
        for (float& x : g.sh) x = u(rng) * 2 - 1;
        g.object = static_cast<std::uint32_t>(rng() % 4);
        return g;
    };
    for (std::size_t i = 0; i < n0; ++i) live[next += 1 + rng() % 3] = fresh();
    Sequence seq;
    seq.data.resize(ns);
    for (std::size_t s = 0; s < ns; ++s) {
        if (s > 0) {
            std::vector<std::uint32_t> keys;
            for (auto& [id, g] : live) keys.push_back(id);
            for (std::uint32_t id : keys) {
                const float r = u(rng);
                Live& g = live[id];
                if (r < 0.05f) {
                    live.erase(id);
                    dead.push_back(id);
                    continue;
                }
                if (u(rng) < 0.2f)
                    for (float& x : g.p) x += (u(rng) - 0.5f) * 0.1f;
                if (u(rng) < 0.1f) g.c[rng() % 4] = u(rng);
                if (u(rng) < 0.05f)
                    for (float& x : g.q) x = u(rng) - 0.5f;
                if (u(rng) < 0.03f) g.s[rng() % 3] *= 1.5f;
                if (u(rng) < 0.01f) g.sigma = 0.05f + u(rng);
            }
            const std::size_t births = 1 + rng() % (1 + live.size() / 20);
            for (std::size_t b = 0; b < births; ++b) live[next += 1 + rng() % 3] = fresh();
            if (!dead.empty() && s % 3 == 0) {
                const std::uint32_t back = dead[rng() % dead.size()];
                if (!live.count(back)) live[back] = fresh();
            }
        }
        StepData& d = seq.data[s];
        d.t0 = 0.1 * static_cast<double>(s);
        // Input order is shuffled: the writer must not depend on it.
        std::vector<std::uint32_t> order;
        for (auto& [id, g] : live) order.push_back(id);
        std::shuffle(order.begin(), order.end(), rng);
        for (std::uint32_t id : order) {
            const Live& g = live[id];
            d.ids.push_back(id);
            d.position.insert(d.position.end(), g.p, g.p + 3);
            d.scale.insert(d.scale.end(), g.s, g.s + 3);
            d.rotation.insert(d.rotation.end(), g.q, g.q + 4);
            d.color.insert(d.color.end(), g.c, g.c + 4);
            d.motion.insert(d.motion.end(), g.v, g.v + 3);
            d.sigma.push_back(g.sigma);
            d.sh.insert(d.sh.end(), g.sh.begin(), g.sh.end());
            d.object.push_back(g.object);
            seq.max_id = std::max(seq.max_id, id);
        }
    }
    for (StepData& d : seq.data) {
        KeyframeStep st;
        st.t0 = d.t0;
        st.ids = d.ids;
        GaussianBatch& b = st.gaussians;
        b.count = d.ids.size();
        b.position = d.position;
        b.scale = d.scale;
        b.rotation = d.rotation;
        b.color = d.color;
        if (with_motion) b.motion = d.motion;
        b.sigma_t = d.sigma;
        b.sh_degree = sh_degree;
        b.sh = d.sh;
        if (with_object) b.object_id = d.object;
        seq.steps.push_back(st);
    }
    seq.header.duration_sec = 0.1 * static_cast<double>(ns);
    seq.header.sh_degree = sh_degree;
    return seq;
}

bool same_bins(const ChunkBins& a, const ChunkBins& b) {
    bool same = a.count == b.count && a.position == b.position && a.scale == b.scale &&
                a.rotation_index == b.rotation_index && a.rotation == b.rotation &&
                a.color == b.color && a.opacity == b.opacity && a.motion == b.motion &&
                a.mu_t == b.mu_t && a.sigma_t == b.sigma_t && a.flags == b.flags &&
                a.window_index == b.window_index && a.gaussian_id == b.gaussian_id &&
                a.has_object_id == b.has_object_id && a.sh_bands == b.sh_bands;
    if (same && a.has_object_id) same = a.object_id == b.object_id;
    for (int k = 0; k < a.sh_bands && same; ++k) same = a.sh[k] == b.sh[k];
    return same;
}

double bound(const Quantization& q, const char* key) {
    const std::string* v = q.bound(key);
    REQUIRE(v != nullptr);
    return std::stod(*v);
}

// Writes, then checks both front-ends against the quantized states, and the decoded values
// against the input within the declared bounds.
std::vector<std::uint8_t> round_trip(const Sequence& seq, const KeyframeWriterOptions& opt,
                                     KeyframeWriteReport& rep) {
    rep.keep_states = true;
    auto bytes = write_keyframe_delta(seq.steps, seq.header, opt, &rep);
    if (!bytes.ok()) FAIL(bytes.error().describe());
    const std::size_t ns = seq.steps.size();
    REQUIRE(rep.states.size() == ns);

    MemorySource src(*bytes);
    auto reader = KeyframeDeltaReader::open(src);
    if (!reader.ok()) FAIL(reader.error().describe());
    const SceneInfo& scene = reader->scene();
    CHECK(scene.header.temporal_model == "keyframe-delta");
    CHECK(scene.header.gaussian_count == rep.base.gaussian_count);
    CHECK(scene.header.profile == (ns > 1 ? "keyframed" : ""));
    REQUIRE(reader->timeline().entries().size() == ns);
    bool interval = false, depth = false;
    for (const Metadata& m : scene.metadata)
        for (const auto& [k, v] : m.entries) {
            interval |= k == "keyframe_interval_sec";
            if (k == "gop_max_depth") depth = v == std::to_string(rep.gop_max_depth);
        }
    CHECK(interval);
    CHECK(depth);

    const double pos = bound(scene.quantization, "pos"), rgb = bound(scene.quantization, "rgb"),
                 alpha = bound(scene.quantization, "alpha"),
                 scale_rel = bound(scene.quantization, "scale_rel");
    KeyframeDeltaWorkspace ws;
    GaussianBlock block;
    for (std::size_t s = 0; s < ns; ++s) {
        INFO("step " << s);
        StateInfo info;
        auto st = reader->state_bins_at(seq.steps[s].t0, ws, &info);
        if (!st.ok()) FAIL(st.error().describe());
        CHECK(same_bins(ws.composed, rep.states[s]));
        CHECK(info.live_count == seq.steps[s].gaussians.count);
        CHECK(info.t0 == seq.steps[s].t0);
        const auto& e = reader->timeline().entries()[reader->current(seq.steps[s].t0).value()];
        CHECK(e.keyframe->live_count == seq.steps[s].gaussians.count);
        CHECK((e.keyframe->chunk_kind == kChunkKindKeyframe) == (s % opt.keyframe_every == 0));

        // Values within the declared bounds (a file id that is a caller id names that id).
        auto d = reader->state_at(seq.steps[s].t0, block, ws);
        if (!d.ok()) FAIL(d.error().describe());
        std::map<std::uint32_t, std::size_t> row;
        const StepData& in = seq.data[s];
        for (std::size_t i = 0; i < in.ids.size(); ++i) row[in.ids[i]] = i;
        std::size_t matched = 0;
        for (std::size_t j = 0; j < block.count; ++j) {
            auto it = row.find(block.gaussian_id[j]);
            if (block.gaussian_id[j] > seq.max_id) continue;  // a re-incarnation's fresh id
            REQUIRE(it != row.end());
            const std::size_t i = it->second;
            ++matched;
            for (int c = 0; c < 3; ++c) {
                REQUIRE(std::fabs(block.position[j * 3 + c] - in.position[i * 3 + c]) <= pos);
                REQUIRE(std::fabs(std::log(block.scale[j * 3 + c]) -
                                  std::log(in.scale[i * 3 + c])) <= scale_rel);
                REQUIRE(std::fabs(block.color[j * 4 + c] - in.color[i * 4 + c]) <= rgb);
            }
            REQUIRE(std::fabs(block.color[j * 4 + 3] - in.color[i * 4 + 3]) <= alpha);
            REQUIRE(std::isinf(block.sigma_t[j]) == std::isinf(in.sigma[i]));
        }
        CHECK(matched <= in.ids.size());
    }

    // The streaming front-end: one state per chunk, in file (= time) order.
    KeyframeDeltaStream stream(src);
    REQUIRE(stream.open().ok());
    ChunkBins bins;
    for (std::size_t s = 0; s < ns; ++s) {
        INFO("streaming step " << s);
        StateInfo info;
        auto r = stream.next_state_bins(bins, &info);
        if (!r.ok()) FAIL(r.error().describe());
        REQUIRE(*r);
        CHECK(same_bins(bins, rep.states[s]));
    }
    auto end = stream.next_state_bins(bins);
    if (!end.ok()) FAIL(end.error().describe());
    CHECK(!*end);
    CHECK(stream.distinct_ids() == rep.base.gaussian_count);
    return std::move(*bytes);
}

}  // namespace

TEST_CASE("keyframe writer: chained deltas round-trip bin for bin through both front-ends",
          "[keyframe-writer]") {
    for (std::uint32_t seed : {1u, 2u, 3u}) {
        INFO("seed " << seed);
        Sequence seq = make_sequence(seed, 200, 25, seed == 2 ? 1 : 0, seed != 3, seed == 1);
        KeyframeWriterOptions opt;
        opt.keyframe_every = 10;
        KeyframeWriteReport rep;
        round_trip(seq, opt, rep);
        // Re-incarnations (a sigma_t change, an id that came back) took fresh file ids.
        bool fresh = false;
        for (const ChunkBins& st : rep.states)
            for (std::int32_t id : st.gaussian_id)
                fresh |= static_cast<std::uint32_t>(id) > seq.max_id;
        CHECK(fresh);
        CHECK(rep.keyframes == 3);
        CHECK(rep.deltas == 22);
        CHECK(rep.gop_max_depth == 9);
        CHECK(rep.base.gaussian_count > 200);
    }
}

TEST_CASE("keyframe writer: keyframe-referenced deltas have depth 1", "[keyframe-writer]") {
    Sequence seq = make_sequence(7, 150, 21, 2, true, true);
    KeyframeWriterOptions opt;
    opt.keyframe_every = 7;
    opt.chained = false;
    KeyframeWriteReport rep;
    auto bytes = round_trip(seq, opt, rep);
    CHECK(rep.gop_max_depth == 1);
    MemorySource src(bytes);
    auto reader = KeyframeDeltaReader::open(src);
    REQUIRE(reader.ok());
    for (const ChunkIndex& e : reader->timeline().entries())
        if (e.keyframe->chunk_kind == kChunkKindDelta) {
            CHECK(e.keyframe->delta_mode == kDeltaModeKeyframe);
            CHECK(e.keyframe->depth == 1);
            CHECK(e.keyframe->reference_offset == e.keyframe->keyframe_offset);
        }
}

TEST_CASE("keyframe writer: extra keyframe-referenced instants cut the chain",
          "[keyframe-writer]") {
    Sequence seq = make_sequence(11, 120, 30, 0, false, false);
    KeyframeWriterOptions opt;
    opt.keyframe_every = 15;
    opt.keyframe_referenced_at = {0.75, 2.05};  // steps 7 and 20
    KeyframeWriteReport rep;
    auto bytes = round_trip(seq, opt, rep);
    MemorySource src(bytes);
    auto reader = KeyframeDeltaReader::open(src);
    REQUIRE(reader.ok());
    const auto& tl = reader->timeline();
    auto entry = [&](double t) { return tl.entries()[tl.current(t).value()]; };
    CHECK(entry(0.75).keyframe->delta_mode == kDeltaModeKeyframe);
    CHECK(entry(0.75).keyframe->depth == 1);
    CHECK(entry(0.85).keyframe->delta_mode == kDeltaModeChained);
    CHECK(entry(0.85).keyframe->depth == 2);
    CHECK(entry(1.45).keyframe->depth == 8);
    CHECK(entry(1.55).keyframe->chunk_kind == kChunkKindKeyframe);
    CHECK(entry(2.05).keyframe->depth == 1);
    CHECK(entry(2.95).keyframe->depth == 10);
    // The seek to the cut costs the keyframe plus one delta.
    auto plan = tl.plan(0.75, 0);
    REQUIRE(plan.ok());
    CHECK(plan->chain.size() == 2);
    CHECK(rep.gop_max_depth == 10);
}

TEST_CASE("keyframe writer: cadence one is the frame-sequence shape (§11.11)",
          "[keyframe-writer]") {
    Sequence seq = make_sequence(5, 80, 12, 1, true, false);
    KeyframeWriterOptions opt;
    opt.keyframe_every = 1;
    KeyframeWriteReport rep;
    auto bytes = round_trip(seq, opt, rep);
    CHECK(rep.keyframes == 12);
    CHECK(rep.deltas == 0);
    CHECK(rep.gop_max_depth == 0);
    MemorySource src(bytes);
    auto reader = KeyframeDeltaReader::open(src);
    REQUIRE(reader.ok());
    for (const ChunkIndex& e : reader->timeline().entries()) {
        CHECK(e.keyframe->chunk_kind == kChunkKindKeyframe);
        CHECK(e.keyframe->keyframe_offset == e.chunk_offset);
    }
}

TEST_CASE("keyframe writer: derived mu_t is the stating time, untouched gaussians keep theirs",
          "[keyframe-writer]") {
    Sequence seq = make_sequence(9, 60, 6, 0, false, false);
    KeyframeWriterOptions opt;
    opt.keyframe_every = 100;
    KeyframeWriteReport rep;
    round_trip(seq, opt, rep);
    // Step 0 is a keyframe: every gaussian's mu_t decodes to 0.
    for (std::int32_t b : rep.states[0].mu_t) CHECK(b == 0);
    // A gaussian untouched from step 0 to step 5 still has mu_t bin 0; a changed one does not.
    const ChunkBins& a = rep.states[0];
    const ChunkBins& z = rep.states[5];
    std::size_t kept = 0, restated = 0;
    for (std::size_t j = 0; j < z.count; ++j) {
        auto it = std::lower_bound(a.gaussian_id.begin(), a.gaussian_id.end(), z.gaussian_id[j]);
        if (it == a.gaussian_id.end() || *it != z.gaussian_id[j]) continue;
        const std::size_t i = static_cast<std::size_t>(it - a.gaussian_id.begin());
        const bool same_pos = std::equal(&a.position[i * 3], &a.position[i * 3] + 3,
                                         &z.position[j * 3]);
        if (z.mu_t[j] == 0) ++kept;
        else ++restated;
        if (!same_pos) CHECK(z.mu_t[j] != 0);
    }
    CHECK(kept > 0);
    CHECK(restated > 0);
}

TEST_CASE("keyframe writer: output is deterministic", "[keyframe-writer]") {
    Sequence seq = make_sequence(21, 100, 15, 1, true, true);
    KeyframeWriterOptions opt;
    opt.keyframe_every = 4;
    auto a = write_keyframe_delta(seq.steps, seq.header, opt);
    auto b = write_keyframe_delta(seq.steps, seq.header, opt);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(*a == *b);
    opt.base.chunk_compression = "deflate";
    auto c = write_keyframe_delta(seq.steps, seq.header, opt);
    REQUIRE(c.ok());
    MemorySource src(*c);
    auto reader = KeyframeDeltaReader::open(src);
    REQUIRE(reader.ok());
    KeyframeDeltaWorkspace ws;
    REQUIRE(reader->state_bins_at(1.45, ws).ok());
}

TEST_CASE("keyframe writer: refuses bad step timing and duplicate ids", "[keyframe-writer]") {
    Sequence seq = make_sequence(3, 20, 4, 0, false, false);
    KeyframeWriterOptions opt;
    {
        auto steps = seq.steps;
        steps[2].t0 = steps[1].t0;
        auto r = write_keyframe_delta(steps, seq.header, opt);
        REQUIRE(!r.ok());
        CHECK(r.error().refusal == "invalid-option");
    }
    {
        auto steps = seq.steps;
        steps[0].t0 = 0.01;
        auto r = write_keyframe_delta(steps, seq.header, opt);
        REQUIRE(!r.ok());
        CHECK(r.error().refusal == "invalid-option");
    }
    {
        auto data = seq.data[1];
        data.ids[1] = data.ids[0];
        auto steps = seq.steps;
        steps[1].ids = data.ids;
        auto r = write_keyframe_delta(steps, seq.header, opt);
        REQUIRE(!r.ok());
        CHECK(r.error().refusal == "duplicate-gaussian-id");
    }
    {
        opt.keyframe_every = 0;
        auto r = write_keyframe_delta(seq.steps, seq.header, opt);
        REQUIRE(!r.ok());
        CHECK(r.error().refusal == "invalid-option");
    }
}

TEST_CASE("keyframe writer: an empty state, a wholesale death and rebirth, a single step",
          "[keyframe-writer]") {
    for (std::uint32_t cadence : {1u, 2u, 10u}) {
        INFO("cadence " << cadence);
        Sequence seq = make_sequence(13, 30, 5, 1, false, false);
        seq.steps[2].gaussians = GaussianBatch{};
        seq.steps[2].gaussians.sh_degree = 1;
        seq.steps[2].ids = {};
        seq.data[2].ids.clear();
        KeyframeWriterOptions opt;
        opt.keyframe_every = cadence;
        KeyframeWriteReport rep;
        round_trip(seq, opt, rep);
        CHECK(rep.live_count[2] == 0);
        CHECK(rep.states[2].count == 0);
    }
    Sequence one = make_sequence(17, 40, 1, 0, true, true);
    KeyframeWriteReport rep;
    round_trip(one, KeyframeWriterOptions{}, rep);
    CHECK(rep.keyframes == 1);
}

TEST_CASE("keyframe writer: a bin difference outside i32 is refused, a keyframe carries it "
          "(M116)",
          "[keyframe-writer]") {
    // One gaussian jumps across the whole aabb on a grid so fine that each bin is ~1.5e9: both
    // states fit i32, their difference (3e9) does not.
    const std::uint32_t ids[1] = {7};
    const float p0[3] = {-1.5f, 0, 0}, p1[3] = {1.5f, 0, 0}, scale[3] = {0.1f, 0.1f, 0.1f},
                rot[4] = {0, 0, 0, 1}, color[4] = {0.5f, 0.5f, 0.5f, 1},
                sigma[1] = {std::numeric_limits<float>::infinity()};
    std::vector<KeyframeStep> steps(2);
    for (int s = 0; s < 2; ++s) {
        steps[s].t0 = s;
        steps[s].ids = ids;
        GaussianBatch& b = steps[s].gaussians;
        b.count = 1;
        b.position = std::span<const float>(s == 0 ? p0 : p1, 3);
        b.scale = scale;
        b.rotation = rot;
        b.color = color;
        b.sigma_t = sigma;
    }
    SceneHeader header;
    header.duration_sec = 2;
    KeyframeWriterOptions opt;
    QuantBounds qb = preset_bounds(Preset::default_, 3);
    qb.pos = 5e-10;
    qb.motion = 1;
    opt.base.bounds = qb;
    auto refused = write_keyframe_delta(steps, header, opt);
    REQUIRE(!refused.ok());
    CHECK(refused.error().refusal == "bin-out-of-range");
    CHECK_THAT(refused.error().message, Catch::Contains("position"));
    opt.keyframe_every = 1;
    auto written = write_keyframe_delta(steps, header, opt);
    if (!written.ok()) FAIL(written.error().describe());
    MemorySource src(*written);
    auto reader = KeyframeDeltaReader::open(src);
    REQUIRE(reader.ok());
    GaussianBlock block;
    REQUIRE(reader->state_at(1.5, block).ok());
    REQUIRE(block.count == 1);
    CHECK(std::fabs(block.position[0] - 1.5f) < 1e-6);
}

namespace {

// `n` gaussians over `ns` steps of 0.1 s, each displaced along its own direction by
// 0.05 × pattern[s % pattern.size()]: a motion that comes back where the pattern repeats a value.
Sequence oscillating(std::initializer_list<float> pattern, std::size_t n, std::size_t ns) {
    std::mt19937 rng(29);
    std::uniform_real_distribution<float> u(0, 1);
    std::vector<float> base(n * 3), dir(n * 3), scale(n * 3), rotation(n * 4), color(n * 4);
    for (float& v : base) v = 4 * u(rng) - 2;
    for (float& v : dir) v = 2 * u(rng) - 1;
    for (float& v : scale) v = 0.01f + 0.05f * u(rng);
    for (std::size_t i = 0; i < n; ++i) {
        for (int c = 0; c < 4; ++c) rotation[i * 4 + c] = u(rng) - 0.5f + (c == 3 ? 1.0f : 0.0f);
        for (int c = 0; c < 4; ++c) color[i * 4 + c] = u(rng);
    }
    const std::vector<float> amplitude(pattern);
    Sequence seq;
    seq.data.resize(ns);
    for (std::size_t s = 0; s < ns; ++s) {
        StepData& d = seq.data[s];
        d.t0 = 0.1 * static_cast<double>(s);
        const float a = 0.05f * amplitude[s % amplitude.size()];
        for (std::size_t i = 0; i < n; ++i) {
            d.ids.push_back(static_cast<std::uint32_t>(i));
            for (int c = 0; c < 3; ++c) d.position.push_back(base[i * 3 + c] + a * dir[i * 3 + c]);
        }
        d.scale = scale;
        d.rotation = rotation;
        d.color = color;
        d.sigma.assign(n, std::numeric_limits<float>::infinity());
    }
    for (StepData& d : seq.data) {
        KeyframeStep st;
        st.t0 = d.t0;
        st.ids = d.ids;
        st.gaussians.count = n;
        st.gaussians.position = d.position;
        st.gaussians.scale = d.scale;
        st.gaussians.rotation = d.rotation;
        st.gaussians.color = d.color;
        st.gaussians.sigma_t = d.sigma;
        seq.steps.push_back(st);
    }
    seq.header.duration_sec = 0.1 * static_cast<double>(ns);
    seq.max_id = static_cast<std::uint32_t>(n - 1);
    return seq;
}

void check_valid_both_paths(const std::vector<std::uint8_t>& bytes) {
    MemorySource src(bytes);
    auto indexed = validate(src);
    REQUIRE(indexed.ok());
    CHECK(indexed->errors() == 0);
    const std::size_t piped_errors = test::through_pipe(bytes, [](ByteSource& pipe) {
        auto r = validate(pipe);
        REQUIRE(r.ok());
        return r->errors();
    });
    CHECK(piped_errors == 0);
}

}  // namespace

TEST_CASE("keyframe writer: cheaper_reference takes the keyframe where motion comes back, chained "
          "on a tie, forced instants kept, chains walk to depth + 1 (§11.4, M117)",
          "[keyframe-writer][threads]") {
    // Ping-pong over 4 positions in one GOP of 12 steps: step 6 is back at the keyframe's state;
    // step 1's two candidates are the same delta (its predecessor is the keyframe).
    Sequence seq = oscillating({0, 1, 2, 3, 2, 1}, 300, 12);
    KeyframeWriterOptions chained;
    chained.keyframe_every = 12;
    KeyframeWriteReport chained_rep;
    const auto all_chained = round_trip(seq, chained, chained_rep);

    KeyframeWriterOptions cheaper = chained;
    cheaper.cheaper_reference = true;
    cheaper.keyframe_referenced_at = {0.35};  // step 3: forced, whatever it costs
    KeyframeWriteReport rep;
    const auto bytes = round_trip(seq, cheaper, rep);
    check_valid_both_paths(bytes);
    CHECK(bytes.size() < all_chained.size());

    MemorySource src(bytes);
    auto reader = KeyframeDeltaReader::open(src);
    REQUIRE(reader.ok());
    const auto& entries = reader->timeline().entries();
    REQUIRE(entries.size() == 12);
    std::uint32_t keyed = 0;
    for (std::size_t s = 1; s < 12; ++s) {
        INFO("step " << s);
        const auto& k = *entries[s].keyframe;
        REQUIRE(k.chunk_kind == kChunkKindDelta);
        keyed += k.delta_mode == kDeltaModeKeyframe;
        // Never larger than the chained delta, except where the keyframe was forced.
        if (s != 3) CHECK(rep.chunk_bytes[s] <= chained_rep.chunk_bytes[s]);
        auto plan = reader->timeline().plan(seq.steps[s].t0, 0);
        REQUIRE(plan.ok());
        CHECK(plan->chain.size() == std::size_t{k.depth} + 1u);
    }
    CHECK(keyed == rep.keyframe_referenced);
    CHECK(entries[1].keyframe->delta_mode == kDeltaModeChained);   // a tie
    CHECK(entries[3].keyframe->delta_mode == kDeltaModeKeyframe);  // forced
    CHECK(entries[6].keyframe->delta_mode == kDeltaModeKeyframe);  // back at the keyframe
    CHECK(entries[6].keyframe->depth == 1);
    CHECK(rep.chunk_bytes[6] < chained_rep.chunk_bytes[6] / 4);    // no update at all
    CHECK(rep.gop_max_depth < chained_rep.gop_max_depth);

    // The same input gives the same bytes.
    auto again = write_keyframe_delta(seq.steps, seq.header, cheaper);
    REQUIRE(again.ok());
    CHECK(*again == bytes);
}

TEST_CASE("keyframe writer: cheaper_reference is never larger than all chained",
          "[keyframe-writer][threads]") {
    for (std::uint32_t seed : {1u, 2u, 3u}) {
        INFO("seed " << seed);
        Sequence seq = make_sequence(seed, 200, 25, seed == 2 ? 1 : 0, seed != 3, seed == 1);
        KeyframeWriterOptions chained;
        chained.keyframe_every = 10;
        KeyframeWriteReport chained_rep, rep;
        const auto a = round_trip(seq, chained, chained_rep);
        KeyframeWriterOptions cheaper = chained;
        cheaper.cheaper_reference = true;
        const auto b = round_trip(seq, cheaper, rep);
        check_valid_both_paths(b);
        CHECK(b.size() <= a.size());
        for (std::size_t s = 0; s < rep.chunk_bytes.size(); ++s)
            CHECK(rep.chunk_bytes[s] <= chained_rep.chunk_bytes[s]);
    }
}

TEST_CASE("keyframe writer: cheaper_reference keeps the candidate whose bin differences fit i32 "
          "(M116)",
          "[keyframe-writer][threads]") {
    // Bins of ~1e9 per 1.5 units: each step's move fits i32, the keyframe's difference to step 2
    // (3 units) does not, so step 2 must stay chained, and keyframe-referenced it is refused.
    const std::uint32_t ids[1] = {7};
    const float p[3][3] = {{-1.5f, 0, 0}, {0, 0, 0}, {1.5f, 0, 0}};
    const float scale[3] = {0.1f, 0.1f, 0.1f}, rot[4] = {0, 0, 0, 1},
                color[4] = {0.5f, 0.5f, 0.5f, 1},
                sigma[1] = {std::numeric_limits<float>::infinity()};
    std::vector<KeyframeStep> steps(3);
    for (int s = 0; s < 3; ++s) {
        steps[s].t0 = s;
        steps[s].ids = ids;
        GaussianBatch& b = steps[s].gaussians;
        b.count = 1;
        b.position = std::span<const float>(p[s], 3);
        b.scale = scale;
        b.rotation = rot;
        b.color = color;
        b.sigma_t = sigma;
    }
    SceneHeader header;
    header.duration_sec = 3;
    KeyframeWriterOptions opt;
    QuantBounds qb = preset_bounds(Preset::default_, 3);
    qb.pos = 5e-10;
    qb.motion = 1;
    opt.base.bounds = qb;
    opt.chained = false;
    auto refused = write_keyframe_delta(steps, header, opt);
    REQUIRE(!refused.ok());
    CHECK(refused.error().refusal == "bin-out-of-range");
    opt.cheaper_reference = true;
    KeyframeWriteReport rep;
    auto written = write_keyframe_delta(steps, header, opt, &rep);
    if (!written.ok()) FAIL(written.error().describe());
    CHECK(rep.keyframe_referenced == 0);
    check_valid_both_paths(*written);
    MemorySource src(*written);
    auto reader = KeyframeDeltaReader::open(src);
    REQUIRE(reader.ok());
    GaussianBlock block;
    REQUIRE(reader->state_at(2.5, block).ok());
    REQUIRE(block.count == 1);
    CHECK(std::fabs(block.position[0] - 1.5f) < 1e-6);
}

TEST_CASE("keyframe writer: each update stream is raw or delta coded, whichever is smaller, and "
          "update ids ascend",
          "[keyframe-writer]") {
    Sequence seq = oscillating({0, 1, 2, 3, 2, 1}, 300, 12);
    KeyframeWriterOptions opt;
    opt.keyframe_every = 12;
    opt.cheaper_reference = true;
    auto bytes = write_keyframe_delta(seq.steps, seq.header, opt);
    REQUIRE(bytes.ok());
    MemorySource src(*bytes);
    auto reader = KeyframeDeltaReader::open(src);
    REQUIRE(reader.ok());
    const StreamEncodeOptions so{};  // the writer's codec and level (WriterOptions' defaults)
    std::size_t raw = 0, delta = 0;
    StreamScratch scratch;
    for (const ChunkIndex& e : reader->timeline().entries()) {
        if (e.keyframe->chunk_kind != kChunkKindDelta) continue;
        const Bytes record(bytes->data() + e.chunk_offset, e.chunk_length);
        auto rv = parse_record(record, e.chunk_offset);
        REQUIRE(rv.ok());
        auto d = parse_delta_chunk(*rv);
        REQUIRE(d.ok());
        REQUIRE(d->compression.empty());
        auto groups = split_delta_groups(d->records, d->records_offset);
        REQUIRE(groups.ok());
        auto streams = split_streams(groups->updates, groups->updates_offset);
        REQUIRE(streams.ok());
        for (const StreamView& s : *streams) {
            INFO("delta at " << e.chunk_offset << ", attribute " << int(s.header.attribute_id));
            auto values = decode_stream(s, scratch);
            REQUIRE(values.ok());
            if (s.header.attribute_id == attr::gaussian_id)
                for (std::size_t k = 1; k < values->size(); ++k)
                    REQUIRE((*values)[k - 1] < (*values)[k]);
            if (s.header.mode == stream_mode::constant) continue;
            std::uint64_t size[2];
            for (int mode : {0, 1}) {
                StreamEncodeOptions forced = so;
                forced.mode = mode;
                ByteWriter w;
                REQUIRE(encode_stream(w, s.header.attribute_id, s.header.channels, *values,
                                      forced)
                            .ok());
                size[mode] = w.size();
            }
            const std::uint64_t chosen = kStreamHeaderSize + s.header.payload_length;
            CHECK(chosen == std::min(size[0], size[1]));
            CHECK(s.header.mode == (size[1] < size[0] ? stream_mode::delta : stream_mode::raw));
            (s.header.mode == stream_mode::raw ? raw : delta) += 1;
        }
    }
    CHECK(raw > 0);    // the position differences: each gaussian its own direction
    CHECK(delta > 0);  // the ids: consecutive
}
