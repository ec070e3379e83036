// The keyframe-delta writer on a tracked sequence (fourdgs/keyframe_writer.hpp): every step the
// same gaussians, most of them still, some moving, recolouring or turning, a few taking a new
// incarnation (a new sigma_t or SH). Steps that hand over one shared ids span take the writer's
// tracked path (a still gaussian's row kept, the moved rows quantized in place, the rows
// compared with the previous state's); steps that each hold a copy of the ids take the general
// path. The two must write the same bytes.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/keyframe_writer.hpp"

using namespace fourdgs;

namespace {

struct TrackedFrame {
    std::vector<std::uint32_t> own_ids;  // a copy of the ids, for the general path
    std::vector<float> position, scale, rotation, color, motion, sigma, sh;
    std::vector<std::uint32_t> object;
    std::vector<double> win_lo, win_hi;
};

struct Tracked {
    std::vector<std::uint32_t> ids;  // shared by every step of the tracked path
    std::vector<TrackedFrame> frames;
    SceneHeader header;
};

// `n` gaussians over `ns` steps of 0.1 s. Per step about 30 % move, 5 % recolour, 3 % turn, 3 %
// grow, 1 % take a new sigma_t and, with SH, 1 % new SH (both new incarnations); the rest keep
// their inputs bit for bit. Step 5 flips one position to -0.0 (the same bin, other bits).
Tracked make_tracked(std::uint32_t seed, std::size_t n, std::size_t ns, int sh_degree,
                     bool with_windows) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0, 1);
    const std::size_t per = 3 * static_cast<std::size_t>((sh_degree + 1) * (sh_degree + 1) - 1);
    Tracked t;
    for (std::size_t i = 0; i < n; ++i) t.ids.push_back(static_cast<std::uint32_t>(7 * i + 3));
    TrackedFrame f;
    for (std::size_t i = 0; i < n; ++i) {
        for (int c = 0; c < 3; ++c) {
            f.position.push_back(u(rng) * 4 - 2);
            f.scale.push_back(0.01f + 0.05f * u(rng));
            f.motion.push_back(u(rng) - 0.5f);
        }
        for (int c = 0; c < 4; ++c) f.rotation.push_back(u(rng) - 0.5f + (c == 3 ? 1.0f : 0.0f));
        for (int c = 0; c < 4; ++c) f.color.push_back(u(rng));
        f.sigma.push_back(u(rng) < 0.5f ? std::numeric_limits<float>::infinity() : 0.05f + u(rng));
        for (std::size_t k = 0; k < per; ++k) f.sh.push_back(u(rng) * 2 - 1);
        f.object.push_back(static_cast<std::uint32_t>(rng() % 3));
    }
    const double duration = 0.1 * static_cast<double>(ns);
    for (std::size_t s = 0; s < ns; ++s) {
        if (s > 0)
            for (std::size_t i = 0; i < n; ++i) {
                if (u(rng) < 0.3f)
                    for (int c = 0; c < 3; ++c) f.position[i * 3 + c] += (u(rng) - 0.5f) * 0.1f;
                if (u(rng) < 0.05f) f.color[i * 4 + rng() % 4] = u(rng);
                if (u(rng) < 0.03f)
                    for (int c = 0; c < 4; ++c) f.rotation[i * 4 + c] = u(rng) - 0.5f;
                if (u(rng) < 0.03f) f.scale[i * 3 + rng() % 3] *= 1.5f;
                if (u(rng) < 0.01f) f.sigma[i] = 0.05f + u(rng);
                if (per > 0 && u(rng) < 0.01f) f.sh[i * per] = u(rng) * 2 - 1;
            }
        if (s == 5) f.position[0] = -0.0f;
        if (s == 6) f.position[0] = 0.0f;
        f.own_ids = t.ids;
        if (with_windows) {
            f.win_lo.assign(n, 0.0);
            f.win_hi.assign(n, duration);
        }
        t.frames.push_back(f);
    }
    t.header.duration_sec = duration;
    t.header.sh_degree = sh_degree;
    return t;
}

// The steps of `t`, each with the shared ids span (tracked) or its own copy.
std::vector<KeyframeStep> steps_of(const Tracked& t, bool shared_ids, int sh_degree) {
    std::vector<KeyframeStep> steps;
    for (std::size_t s = 0; s < t.frames.size(); ++s) {
        const TrackedFrame& f = t.frames[s];
        KeyframeStep st;
        st.t0 = 0.1 * static_cast<double>(s);
        st.ids = shared_ids ? std::span<const std::uint32_t>(t.ids)
                            : std::span<const std::uint32_t>(f.own_ids);
        GaussianBatch& b = st.gaussians;
        b.count = t.ids.size();
        b.position = f.position;
        b.scale = f.scale;
        b.rotation = f.rotation;
        b.color = f.color;
        b.motion = f.motion;
        b.sigma_t = f.sigma;
        b.sh_degree = sh_degree;
        b.sh = f.sh;
        b.object_id = f.object;
        b.win_lo = f.win_lo;
        b.win_hi = f.win_hi;
        steps.push_back(st);
    }
    return steps;
}

}  // namespace

TEST_CASE("keyframe writer: a tracked sequence's shared ids give the bytes of per-step ids",
          "[keyframe-writer]") {
    for (const int sh_degree : {0, 1}) {
        for (const bool windows : {false, true}) {
            const Tracked t = make_tracked(31 + static_cast<std::uint32_t>(sh_degree), 300, 14,
                                           sh_degree, windows);
            const std::vector<KeyframeStep> shared = steps_of(t, true, sh_degree);
            const std::vector<KeyframeStep> own = steps_of(t, false, sh_degree);
            KeyframeWriterOptions opt;
            opt.keyframe_every = 5;
            for (const bool cheaper : {false, true})
                for (const ModeChoice choice : {ModeChoice::estimate, ModeChoice::compress_both}) {
                    INFO("sh " << sh_degree << " windows " << windows << " cheaper " << cheaper
                               << " estimate " << (choice == ModeChoice::estimate));
                    opt.cheaper_reference = cheaper;
                    opt.reference_choice = choice;
                    KeyframeWriteReport ra, rb;
                    ra.keep_states = rb.keep_states = true;
                    auto a = write_keyframe_delta(shared, t.header, opt, &ra);
                    auto b = write_keyframe_delta(own, t.header, opt, &rb);
                    REQUIRE(a.ok());
                    REQUIRE(b.ok());
                    CHECK(*a == *b);
                    // New incarnations happened, so the tracked path also fell back.
                    CHECK(ra.base.gaussian_count > t.ids.size());
                    CHECK(ra.base.gaussian_count == rb.base.gaussian_count);
                    REQUIRE(ra.states.size() == rb.states.size());
                    for (std::size_t s = 0; s < ra.states.size(); ++s) {
                        CHECK(ra.states[s].position == rb.states[s].position);
                        CHECK(ra.states[s].mu_t == rb.states[s].mu_t);
                        CHECK(ra.states[s].gaussian_id == rb.states[s].gaussian_id);
                    }
                }
        }
    }
}

TEST_CASE("keyframe writer: a tracked sequence's still gaussians keep their rows, bin for bin",
          "[keyframe-writer]") {
    // Nothing moves after step 0: every delta is empty of updates, and every state is step 0's
    // but for the keyframes' mu_t.
    Tracked t = make_tracked(5, 200, 9, 0, false);
    for (TrackedFrame& f : t.frames) {
        const std::vector<std::uint32_t> ids = f.own_ids;
        f = t.frames[0];
        f.own_ids = ids;
    }
    const std::vector<KeyframeStep> shared = steps_of(t, true, 0);
    KeyframeWriterOptions opt;
    opt.keyframe_every = 4;
    KeyframeWriteReport rep;
    rep.keep_states = true;
    auto bytes = write_keyframe_delta(shared, t.header, opt, &rep);
    REQUIRE(bytes.ok());
    REQUIRE(rep.states.size() == 9);
    CHECK(rep.base.gaussian_count == t.ids.size());
    for (std::size_t s = 1; s < rep.states.size(); ++s) {
        CHECK(rep.states[s].position == rep.states[0].position);
        CHECK(rep.states[s].color == rep.states[0].color);
        CHECK(rep.states[s].gaussian_id == rep.states[0].gaussian_id);
    }
    auto own = write_keyframe_delta(steps_of(t, false, 0), t.header, opt);
    REQUIRE(own.ok());
    CHECK(*bytes == *own);
}

TEST_CASE("keyframe writer: a tracked sequence with no new incarnation takes the tracked path at "
          "every step, bin for bin the general path's",
          "[keyframe-writer]") {
    // No sigma_t or SH changes: every step after the first keeps every row, each moved row
    // quantized again in place and compared with the previous state's on the columns its moved
    // inputs feed alone (same_requantized, keyframe_states.cpp). Positions, colours, rotations and
    // scales move in turn, one column or several.
    Tracked t = make_tracked(17, 400, 13, 1, false);
    for (TrackedFrame& f : t.frames) {
        f.sigma = t.frames[0].sigma;
        f.sh = t.frames[0].sh;
    }
    KeyframeWriterOptions opt;
    opt.keyframe_every = 6;
    for (const bool cheaper : {false, true}) {
        INFO("cheaper " << cheaper);
        opt.cheaper_reference = cheaper;
        KeyframeWriteReport tracked, general;
        tracked.keep_states = general.keep_states = true;
        auto a = write_keyframe_delta(steps_of(t, true, 1), t.header, opt, &tracked);
        auto b = write_keyframe_delta(steps_of(t, false, 1), t.header, opt, &general);
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        CHECK(tracked.base.gaussian_count == t.ids.size());  // no new incarnation
        REQUIRE(tracked.states.size() == general.states.size());
        for (std::size_t s = 0; s < tracked.states.size(); ++s) {
            INFO("step " << s);
            const ChunkBins &x = tracked.states[s], &y = general.states[s];
            CHECK(x.position == y.position);
            CHECK(x.scale == y.scale);
            CHECK(x.rotation == y.rotation);
            CHECK(x.color == y.color);
            CHECK(x.opacity == y.opacity);
            CHECK(x.mu_t == y.mu_t);
        }
        CHECK(*a == *b);
    }
}

TEST_CASE("keyframe writer: a tracked sequence's rows against its keyframe are kept from step to "
          "step, bin for bin the general path's",
          "[keyframe-writer]") {
    // mu_t given, so only the variable columns tell a row from its keyframe's (a derived mu_t,
    // restated with every change, would flag the rows anyway). After keyframe 6, half the
    // gaussians step away at steps 7 and 9 and come back to their keyframe positions at steps 8
    // and 10 while the others keep moving: the keyframe-referenced candidate is the smaller there, and its updates are the rows
    // that differ from the keyframe — some changed at this step, some only at an earlier one
    // (KeyframeChanges, keyframe_states.hpp). A row left out fails the verification; one too many
    // writes other bytes than the general path's, which compares every row.
    Tracked t = make_tracked(23, 400, 13, 0, false);
    const std::size_t n = t.ids.size();
    for (TrackedFrame& f : t.frames) {
        f.sigma = t.frames[0].sigma;
        f.sh = t.frames[0].sh;
    }
    for (const std::size_t s : {7, 8, 9, 10})
        for (std::size_t i = 0; i < n / 2; ++i)
            for (int c = 0; c < 3; ++c)
                t.frames[s].position[i * 3 + c] =
                    t.frames[6].position[i * 3 + c] +
                    (s % 2 ? 0.1f + 0.01f * static_cast<float>((i * 7 + c * 3 + s) % 29) : 0.0f);
    const std::vector<float> mu(n, 0.25f);
    KeyframeWriterOptions opt;
    opt.keyframe_every = 6;
    opt.cheaper_reference = true;
    for (const ModeChoice choice : {ModeChoice::estimate, ModeChoice::compress_both}) {
        INFO("estimate " << (choice == ModeChoice::estimate));
        opt.reference_choice = choice;
        std::vector<KeyframeStep> tracked = steps_of(t, true, 0), general = steps_of(t, false, 0);
        for (KeyframeStep& st : tracked) st.gaussians.mu_t = mu;
        for (KeyframeStep& st : general) st.gaussians.mu_t = mu;
        KeyframeWriteReport rt, rg;
        auto a = write_keyframe_delta(tracked, t.header, opt, &rt);
        auto b = write_keyframe_delta(general, t.header, opt, &rg);
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        CHECK(rt.base.gaussian_count == n);  // every step on the tracked path
        CHECK(rt.keyframe_referenced >= 1);  // step 8, and 10 where the estimate allows
        CHECK(rt.keyframe_referenced == rg.keyframe_referenced);
        CHECK(*a == *b);
    }
}
