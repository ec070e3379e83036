// The keyframe-delta writer's tracked path on a sequence with no new incarnation (fourdgs/
// keyframe_writer.hpp): every step takes that path, each moved row quantized again in place and
// compared with the previous state's row on the columns its moved inputs feed alone
// (same_requantized). The bytes and every state must be those of the general path (each step its
// own copy of the ids), whether few rows move a step or most, in each column alone and in
// several, rows moving back to the bins they had two steps before.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "fourdgs/keyframe_writer.hpp"

using namespace fourdgs;

namespace {

struct Frame {
    std::vector<std::uint32_t> own_ids;
    std::vector<float> position, scale, rotation, color, motion, sigma;
};

struct Sequence {
    std::vector<std::uint32_t> ids;
    std::vector<Frame> frames;
    SceneHeader header;
};

// `n` gaussians over `ns` steps of 0.1 s; each step a share `moving` of them change one input
// column (position, scale, rotation, colour or motion, in turn) and some of those a second; a
// gaussian that moved at one step often moves back at the next, so a row rewritten two steps
// running holds its old bins again.
Sequence make_sequence(std::uint32_t seed, std::size_t n, std::size_t ns, float moving) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0, 1);
    Sequence q;
    for (std::size_t i = 0; i < n; ++i) q.ids.push_back(static_cast<std::uint32_t>(3 * i + 1));
    Frame f;
    for (std::size_t i = 0; i < n; ++i) {
        for (int c = 0; c < 3; ++c) {
            f.position.push_back(u(rng) * 2 - 1);
            f.scale.push_back(0.01f + 0.05f * u(rng));
            f.motion.push_back(u(rng) - 0.5f);
        }
        for (int c = 0; c < 4; ++c) f.rotation.push_back(u(rng) - 0.5f + (c == 3 ? 1.0f : 0.0f));
        for (int c = 0; c < 4; ++c) f.color.push_back(u(rng));
        f.sigma.push_back(std::numeric_limits<float>::infinity());
    }
    Frame before = f;
    for (std::size_t s = 0; s < ns; ++s) {
        if (s > 0) {
            const Frame last = f;
            for (std::size_t i = 0; i < n; ++i) {
                if (u(rng) < 0.3f) {  // back to what it was a step ago
                    for (std::size_t c = 0; c < 3; ++c) f.position[i * 3 + c] = before.position[i * 3 + c];
                    continue;
                }
                if (!(u(rng) < moving)) continue;
                for (int change = 0, column = static_cast<int>(rng() % 5); change < 2; ++change) {
                    switch ((column + change) % 5) {
                        case 0:
                            for (int c = 0; c < 3; ++c) f.position[i * 3 + c] += (u(rng) - 0.5f) * 0.2f;
                            break;
                        case 1: f.scale[i * 3 + rng() % 3] *= 1.5f; break;
                        case 2:
                            for (int c = 0; c < 4; ++c) f.rotation[i * 4 + c] = u(rng) - 0.5f;
                            break;
                        case 3: f.color[i * 4 + rng() % 4] = u(rng); break;
                        default: f.motion[i * 3 + rng() % 3] = u(rng) - 0.5f; break;
                    }
                    if (u(rng) < 0.7f) break;
                }
            }
            before = last;
        }
        f.own_ids = q.ids;
        q.frames.push_back(f);
    }
    q.header.duration_sec = 0.1 * static_cast<double>(ns);
    return q;
}

std::vector<KeyframeStep> steps_of(const Sequence& q, bool shared_ids) {
    std::vector<KeyframeStep> steps;
    for (std::size_t s = 0; s < q.frames.size(); ++s) {
        const Frame& f = q.frames[s];
        KeyframeStep st;
        st.t0 = 0.1 * static_cast<double>(s);
        st.ids = shared_ids ? std::span<const std::uint32_t>(q.ids)
                            : std::span<const std::uint32_t>(f.own_ids);
        GaussianBatch& b = st.gaussians;
        b.count = q.ids.size();
        b.position = f.position;
        b.scale = f.scale;
        b.rotation = f.rotation;
        b.color = f.color;
        b.motion = f.motion;
        b.sigma_t = f.sigma;
        steps.push_back(st);
    }
    return steps;
}

}  // namespace

TEST_CASE("keyframe writer: a tracked state with every row requantized in place is the general path's",
          "[keyframe-writer]") {
    for (const float moving : {0.05f, 0.2f, 0.9f}) {
        const Sequence q = make_sequence(11, 400, 13, moving);
        KeyframeWriterOptions opt;
        opt.keyframe_every = 6;
        for (const bool cheaper : {false, true}) {
            INFO("moving " << moving << " cheaper " << cheaper);
            opt.cheaper_reference = cheaper;
            KeyframeWriteReport tracked, general;
            tracked.keep_states = general.keep_states = true;
            auto a = write_keyframe_delta(steps_of(q, true), q.header, opt, &tracked);
            auto b = write_keyframe_delta(steps_of(q, false), q.header, opt, &general);
            REQUIRE(a.ok());
            REQUIRE(b.ok());
            CHECK(tracked.base.gaussian_count == q.ids.size());  // no new incarnation
            REQUIRE(tracked.states.size() == general.states.size());
            for (std::size_t s = 0; s < tracked.states.size(); ++s) {
                INFO("step " << s);
                const ChunkBins &x = tracked.states[s], &y = general.states[s];
                CHECK(x.position == y.position);
                CHECK(x.scale == y.scale);
                CHECK(x.rotation == y.rotation);
                CHECK(x.rotation_index == y.rotation_index);
                CHECK(x.color == y.color);
                CHECK(x.opacity == y.opacity);
                CHECK(x.motion == y.motion);
                CHECK(x.mu_t == y.mu_t);
            }
            CHECK(*a == *b);
        }
    }
}
