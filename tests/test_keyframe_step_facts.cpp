// The keyframe-delta writer given its first pass's facts by the step source (KeyframeStepFacts,
// fourdgs/keyframe_writer.hpp): it then asks for each step once, writes the bytes it writes
// after scanning the steps itself, and refuses facts that differ from the steps' in any part —
// the aabb bit for bit, the windows, the ids, the optional columns — without writing a byte.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "fourdgs/keyframe_writer.hpp"

using namespace fourdgs;

namespace {

struct Frame {
    std::vector<float> position, scale, rotation, color, sigma;
    std::vector<std::uint32_t> object;
    std::vector<double> win_lo, win_hi;
};

struct Sequence {
    std::vector<std::uint32_t> ids;  // one span for every step (the tracked path)
    std::vector<Frame> frames;
    std::vector<KeyframeStep> steps;
    SceneHeader header;
};

// `n` gaussians over `ns` steps of 0.1 s, a third of them moving each step; with `windows`, each
// gaussian's own window [0, duration); with `objects`, an object column.
// Gaussian 0's x is -0.0 at every step and the smallest x: the aabb's lower x is -0.0.
Sequence make_sequence(std::size_t n, std::size_t ns, bool windows, bool objects) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0, 1);
    Sequence q;
    const double duration = 0.1 * static_cast<double>(ns);
    for (std::size_t i = 0; i < n; ++i) q.ids.push_back(static_cast<std::uint32_t>(5 * i + 2));
    Frame f;
    for (std::size_t i = 0; i < n; ++i) {
        for (int c = 0; c < 3; ++c) {
            f.position.push_back(0.5f + u(rng));
            f.scale.push_back(0.01f + 0.05f * u(rng));
        }
        for (int c = 0; c < 4; ++c) f.rotation.push_back(u(rng) - 0.5f + (c == 3 ? 1.0f : 0.0f));
        for (int c = 0; c < 4; ++c) f.color.push_back(u(rng));
        f.sigma.push_back(std::numeric_limits<float>::infinity());
        f.object.push_back(static_cast<std::uint32_t>(i % 3));
        if (windows) {
            f.win_lo.push_back(0.0);
            f.win_hi.push_back(duration);
        }
    }
    f.position[0] = -0.0f;
    for (std::size_t s = 0; s < ns; ++s) {
        if (s > 0)
            for (std::size_t i = 1; i < n; ++i)
                if (u(rng) < 0.33f)
                    for (int c = 0; c < 3; ++c) f.position[i * 3 + c] += (u(rng) - 0.5f) * 0.1f;
        q.frames.push_back(f);
    }
    for (std::size_t s = 0; s < ns; ++s) {
        const Frame& fr = q.frames[s];
        KeyframeStep st;
        st.t0 = 0.1 * static_cast<double>(s);
        st.ids = q.ids;
        GaussianBatch& b = st.gaussians;
        b.count = n;
        b.position = fr.position;
        b.scale = fr.scale;
        b.rotation = fr.rotation;
        b.color = fr.color;
        b.sigma_t = fr.sigma;
        if (objects) b.object_id = fr.object;
        b.win_lo = fr.win_lo;
        b.win_hi = fr.win_hi;
        q.steps.push_back(st);
    }
    q.header.duration_sec = duration;
    return q;
}

// The facts of q's steps, worked out here from the frames.
KeyframeStepFacts facts_of(const Sequence& q, bool windows, bool objects) {
    KeyframeStepFacts f;
    for (int c = 0; c < 3; ++c) {
        f.aabb[c] = std::numeric_limits<double>::infinity();
        f.aabb[3 + c] = -f.aabb[c];
    }
    for (const Frame& fr : q.frames)
        for (std::size_t i = 0; i < q.ids.size(); ++i)
            for (int c = 0; c < 3; ++c) {
                f.aabb[c] = std::min<double>(f.aabb[c], fr.position[i * 3 + c]);
                f.aabb[3 + c] = std::max<double>(f.aabb[3 + c], fr.position[i * 3 + c]);
            }
    f.aabb[0] = -0.0;  // gaussian 0's, the first met
    if (windows) f.windows = {{0.0, q.header.duration_sec}};
    f.unwindowed = !windows;
    f.any_gaussian = true;
    f.largest_id = q.ids.back();
    f.object_id = objects;
    return f;
}

struct Written {
    Status status;
    std::vector<std::uint8_t> bytes;
    std::size_t fetches = 0;
};

Written write_with(const Sequence& q, const std::optional<KeyframeStepFacts>& facts) {
    Written w;
    KeyframeStepSource source;
    for (const KeyframeStep& st : q.steps) source.t0.push_back(st.t0);
    source.step = [&](std::size_t s) -> Result<const KeyframeStep*> {
        ++w.fetches;
        return &q.steps[s];
    };
    source.facts = facts;
    KeyframeWriterOptions opt;
    opt.keyframe_every = 4;
    MemorySink sink;
    w.status = write_keyframe_delta(source, q.header, opt, sink);
    w.bytes = sink.take();
    return w;
}

}  // namespace

TEST_CASE("keyframe writer: a step source's facts spare the scan and give the same bytes",
          "[keyframe-writer]") {
    for (const bool windows : {false, true})
        for (const bool objects : {false, true}) {
            INFO("windows " << windows << " objects " << objects);
            const Sequence q = make_sequence(120, 9, windows, objects);
            const Written scanned = write_with(q, std::nullopt);
            REQUIRE(scanned.status.ok());
            CHECK(scanned.fetches == 2 * q.steps.size());
            const Written given = write_with(q, facts_of(q, windows, objects));
            REQUIRE(given.status.ok());
            CHECK(given.fetches == q.steps.size());
            CHECK(given.bytes == scanned.bytes);
        }
}

TEST_CASE("keyframe writer: facts that differ from the steps' are refused, nothing written",
          "[keyframe-writer]") {
    const Sequence q = make_sequence(120, 9, true, true);
    const KeyframeStepFacts right = facts_of(q, true, true);
    std::vector<std::pair<std::string, KeyframeStepFacts>> wrong;
    auto add = [&](const char* what, auto change) {
        KeyframeStepFacts f = right;
        change(f);
        wrong.emplace_back(what, f);
    };
    add("aabb", [](KeyframeStepFacts& f) { f.aabb[0] = 0.0; });  // +0 for the steps' -0
    add("aabb", [](KeyframeStepFacts& f) { f.aabb[4] = std::nextafter(f.aabb[4], 9.0); });
    add("windows", [](KeyframeStepFacts& f) { f.unwindowed = true; });
    add("windows", [&](KeyframeStepFacts& f) { f.windows.push_back({0.05, q.header.duration_sec}); });
    add("ids", [](KeyframeStepFacts& f) { f.largest_id += 1; });
    add("optional columns", [](KeyframeStepFacts& f) { f.object_id = false; });
    add("optional columns", [](KeyframeStepFacts& f) { f.source_group = true; });
    for (const auto& [what, facts] : wrong) {
        INFO(what);
        const Written w = write_with(q, facts);
        REQUIRE_FALSE(w.status.ok());
        CHECK(w.status.error().refusal == "invalid-option");
        CHECK(w.status.error().message.find(what) != std::string::npos);
        CHECK(w.bytes.empty());
    }
    // A window the facts leave out is refused where the step is reached.
    KeyframeStepFacts none = right;
    none.windows.clear();
    const Written w = write_with(q, none);
    REQUIRE_FALSE(w.status.ok());
    CHECK(w.status.error().refusal == "invalid-option");
    CHECK(w.bytes.empty());
}

TEST_CASE("keyframe writer: with facts given, a bad step is refused as the scan refuses it",
          "[keyframe-writer]") {
    Sequence q = make_sequence(60, 6, false, false);
    q.frames[3].position[7 * 3 + 1] = std::numeric_limits<float>::quiet_NaN();
    q.frames[4].scale[2] = 0.0f;
    for (std::size_t s = 0; s < q.steps.size(); ++s) {
        q.steps[s].gaussians.position = q.frames[s].position;
        q.steps[s].gaussians.scale = q.frames[s].scale;
    }
    const Written scanned = write_with(q, std::nullopt);
    const Written given = write_with(q, facts_of(q, false, false));
    REQUIRE_FALSE(scanned.status.ok());
    REQUIRE_FALSE(given.status.ok());
    CHECK(given.status.error().refusal == scanned.status.error().refusal);
    CHECK(given.status.error().message == scanned.status.error().message);
    CHECK(given.status.error().message.find("step 3") != std::string::npos);
    CHECK(given.bytes.empty());
}
