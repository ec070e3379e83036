// The keyframe-delta writer's rebirth_turned (fourdgs/keyframe_writer.hpp): a delta restates the
// rotation of every update once one update changes it (§11.5), so where a few of a delta's
// updated gaussians turn and the rest only move, the writer may write the few as a death and a
// birth under fresh ids (M112: never an id used before) and leave rotation out of the update
// group. The states composed are those written without it, but for those ids; the report names
// the gaussian each new incarnation stands for; the bytes are deterministic and the tracked and
// general paths agree.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "fourdgs/io.hpp"
#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/validate.hpp"

using namespace fourdgs;

namespace {

constexpr std::size_t kSteps = 9;
constexpr std::size_t kManyTurn = 5;  // the step where most moving gaussians turn

// `n` gaussians: at each step after the first about 40 % drift a little, 1 % of the drifting ones
// turn, but at step kManyTurn, where 90 % of them do. The rest keep their inputs.
struct Sequence {
    std::vector<std::uint32_t> ids;                   // shared by every step: the tracked path
    std::vector<std::vector<std::uint32_t>> own_ids;  // a copy a step: the general path
    std::vector<std::vector<float>> position, rotation;
    std::vector<float> scale, color, sigma;
    SceneHeader header;
};

Sequence make_sequence(std::uint32_t seed, std::size_t n) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0, 1);
    Sequence q;
    for (std::size_t i = 0; i < n; ++i) q.ids.push_back(static_cast<std::uint32_t>(5 * i + 2));
    std::vector<float> pos, rot;
    q.sigma.assign(n, std::numeric_limits<float>::infinity());
    for (std::size_t i = 0; i < n; ++i) {
        for (int c = 0; c < 3; ++c) {
            pos.push_back(u(rng) * 4 - 2);
            q.scale.push_back(0.01f + 0.05f * u(rng));
        }
        for (int c = 0; c < 4; ++c) rot.push_back(u(rng) - 0.5f + (c == 3 ? 1.0f : 0.0f));
        for (int c = 0; c < 4; ++c) q.color.push_back(u(rng));
    }
    for (std::size_t s = 0; s < kSteps; ++s) {
        if (s > 0)
            for (std::size_t i = 0; i < n; ++i) {
                if (u(rng) >= 0.4f) continue;
                for (int c = 0; c < 3; ++c) pos[i * 3 + c] += (u(rng) - 0.5f) * 0.05f;
                if (u(rng) < (s == kManyTurn ? 0.9f : 0.01f))
                    for (int c = 0; c < 4; ++c) rot[i * 4 + c] += (u(rng) - 0.5f) * 0.3f;
            }
        q.position.push_back(pos);
        q.rotation.push_back(rot);
        q.own_ids.push_back(q.ids);
    }
    q.header.duration_sec = 0.1 * kSteps;
    return q;
}

std::vector<KeyframeStep> steps_of(const Sequence& q, bool shared_ids) {
    std::vector<KeyframeStep> steps;
    for (std::size_t s = 0; s < kSteps; ++s) {
        KeyframeStep st;
        st.t0 = 0.1 * static_cast<double>(s);
        st.ids = shared_ids ? q.ids : q.own_ids[s];
        st.gaussians.count = q.ids.size();
        st.gaussians.position = q.position[s];
        st.gaussians.rotation = q.rotation[s];
        st.gaussians.scale = q.scale;
        st.gaussians.color = q.color;
        st.gaussians.sigma_t = q.sigma;
        steps.push_back(st);
    }
    return steps;
}

// The rows of `state` keyed by the caller id each stands for (`first_fresh` on: a new
// incarnation, of incarnation_of's id).
std::map<std::uint32_t, std::size_t> rows_by_caller(
    const ChunkBins& state, std::uint64_t first_fresh,
    const std::vector<std::uint32_t>& incarnation_of) {
    std::map<std::uint32_t, std::size_t> out;
    for (std::size_t k = 0; k < state.count; ++k) {
        const auto id = static_cast<std::uint32_t>(state.gaussian_id[k]);
        const std::uint32_t caller = id < first_fresh ? id : incarnation_of.at(id - first_fresh);
        CHECK(out.emplace(caller, k).second);  // one live incarnation per gaussian
    }
    return out;
}

template <std::size_t W>
bool same_row(const std::vector<std::int32_t>& a, std::size_t i, const std::vector<std::int32_t>& b,
              std::size_t j) {
    return std::equal(a.begin() + static_cast<std::ptrdiff_t>(i * W),
                      a.begin() + static_cast<std::ptrdiff_t>(i * W + W),
                      b.begin() + static_cast<std::ptrdiff_t>(j * W));
}

}  // namespace

TEST_CASE("keyframe writer, rebirth_turned (M112): the few gaussians that turn in a delta are "
          "reborn under fresh ids, the states composed are the same but for those ids, the file "
          "is smaller, valid and deterministic",
          "[keyframe-writer]") {
    const Sequence q = make_sequence(41, 2000);
    for (const std::uint32_t keyframe_every : {4u, 20u}) {
        INFO("keyframe_every " << keyframe_every);
        KeyframeWriterOptions opt;
        opt.keyframe_every = keyframe_every;
        KeyframeWriteReport plain, reborn, general;
        plain.keep_states = reborn.keep_states = true;
        auto without = write_keyframe_delta(steps_of(q, true), q.header, opt, &plain);
        opt.rebirth_turned = true;
        auto with = write_keyframe_delta(steps_of(q, true), q.header, opt, &reborn);
        auto again = write_keyframe_delta(steps_of(q, true), q.header, opt);
        auto by_general = write_keyframe_delta(steps_of(q, false), q.header, opt, &general);
        REQUIRE(without.ok());
        REQUIRE(with.ok());
        REQUIRE(again.ok());
        REQUIRE(by_general.ok());
        CHECK(*with == *again);
        CHECK(*with == *by_general);
        INFO(without->size() << " B without, " << with->size() << " B with "
                             << reborn.incarnation_of.size() << " rebirths");
        CHECK(plain.incarnation_of.empty());
        CHECK(!reborn.incarnation_of.empty());
        CHECK(with->size() < without->size());
        CHECK(reborn.first_fresh_id == 5 * (q.ids.size() - 1) + 2 + 1);
        CHECK(reborn.base.gaussian_count == q.ids.size() + reborn.incarnation_of.size());

        // Every state is the one written without rebirths, row for row by the gaussian each row
        // stands for; and no gaussian in both a state and the one before turns under one id.
        REQUIRE(reborn.states.size() == kSteps);
        std::set<std::int32_t> ever;  // every file id used so far
        for (std::size_t s = 0; s < kSteps; ++s) {
            INFO("step " << s);
            const ChunkBins &a = plain.states[s], &b = reborn.states[s];
            REQUIRE(a.count == b.count);
            const auto rows = rows_by_caller(b, reborn.first_fresh_id, reborn.incarnation_of);
            std::size_t differ = 0;
            for (std::size_t i = 0; i < a.count; ++i) {
                const std::size_t j = rows.at(static_cast<std::uint32_t>(a.gaussian_id[i]));
                differ += !same_row<3>(a.position, i, b.position, j) ||
                          !same_row<3>(a.rotation, i, b.rotation, j) ||
                          a.rotation_index[i] != b.rotation_index[j] ||
                          !same_row<3>(a.scale, i, b.scale, j) ||
                          !same_row<3>(a.color, i, b.color, j) || a.opacity[i] != b.opacity[j] ||
                          a.mu_t[i] != b.mu_t[j];
            }
            CHECK(differ == 0);
            std::size_t turned_in_place = 0, fresh_here = 0;
            if (s > 0 && s % keyframe_every != 0) {
                const ChunkBins& p = reborn.states[s - 1];
                std::map<std::int32_t, std::size_t> before;
                for (std::size_t k = 0; k < p.count; ++k) before[p.gaussian_id[k]] = k;
                for (std::size_t k = 0; k < b.count; ++k) {
                    const auto it = before.find(b.gaussian_id[k]);
                    if (it == before.end()) {
                        ++fresh_here;
                        CHECK(!ever.count(b.gaussian_id[k]));  // M112: never reused
                        continue;
                    }
                    turned_in_place += !same_row<3>(p.rotation, it->second, b.rotation, k) ||
                                       p.rotation_index[it->second] != b.rotation_index[k];
                }
                // Where some were reborn, none turns under its id (the update group carries no
                // rotation); where most turn, none is reborn.
                if (fresh_here > 0) CHECK(turned_in_place == 0);
                if (s == kManyTurn) CHECK(fresh_here == 0);
            }
            for (std::size_t k = 0; k < b.count; ++k) ever.insert(b.gaussian_id[k]);
        }

        MemorySource src(*with);
        auto v = validate(src);
        REQUIRE(v.ok());
        CHECK(v->valid());
    }
}
