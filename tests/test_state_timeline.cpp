// Which state covers t (fourdgs/state_timeline.hpp) and the playback clock
// (fourdgs/playback_clock.hpp): the one answer the readers, the player and the bindings ask.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "fourdgs/playback_clock.hpp"
#include "fourdgs/state_timeline.hpp"

using namespace fourdgs;

namespace {

// §8's rule as written: every entry whose [t0, t1) contains t, in index order.
std::vector<std::size_t> covering(const std::vector<ChunkIndex>& index, double t) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < index.size(); ++i)
        if (index[i].t0 <= t && t < index[i].t1) out.push_back(i);
    return out;
}

}  // namespace

TEST_CASE("state timeline: a span's chunks are the entries covering each of its instants") {
    std::mt19937 rng(44);
    std::uniform_real_distribution<double> at(-1.0, 11.0);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int trial = 0; trial < 40; ++trial) {
        std::vector<ChunkIndex> index(1 + rng() % 12);
        for (ChunkIndex& e : index) {
            e.t0 = std::floor(at(rng) * 4) / 4;  // shared bounds are common
            e.t1 = e.t0 + std::floor(at(rng) * 2) / 4;  // some empty or reversed
            if (rng() % 17 == 0) e.t0 = nan;
        }
        const StateTimeline states = StateTimeline::of_chunks(index, 10.0);
        for (std::size_t k = 0; k < states.size(); ++k) {
            const StateSpan s = states.span(k);
            REQUIRE(s.t0 < s.t1);
            if (k > 0) REQUIRE(states.span(k - 1).t1 == s.t0);  // they tile
        }
        for (int q = 0; q < 200; ++q) {
            const double t = std::round(at(rng) * 8) / 8;  // bounds themselves included
            const StateSpan s = states.at(t);
            const std::vector<std::size_t> want = covering(index, t);
            if (!s.covered()) {
                REQUIRE(want.empty());
                continue;
            }
            CHECK((s.t0 <= t && t < s.t1));
            CHECK(std::vector<std::size_t>(s.chunks.begin(), s.chunks.end()) == want);
            CHECK(covering(index, s.t0) == want);  // the same state over the whole span
            CHECK(covering(index, std::nextafter(s.t1, -1e300)) == want);
        }
        CHECK_FALSE(states.at(nan).covered());
    }
}

TEST_CASE("playback clock: now to scene time, wrap, clamp, ended, and the controls") {
    PlaybackClock c(2.0, 0.5, 2.0, false, true);
    CHECK(c.frame(10.0) == 0.5);  // the first frame anchors its now
    CHECK(c.frame(10.25) == 1.0);
    const double end = c.frame(11.0);
    CHECK((end < 2.0 && end > 1.999));
    CHECK(c.state() == PlaybackState::ended);
    CHECK(c.frame(12.0) == end);  // held at the end
    c.play();                     // starts over
    CHECK(c.frame(20.0) == 0.0);
    c.pause();
    CHECK(c.frame(30.0) == 0.0);  // paused at the last frame's instant
    c.play();
    CHECK(c.frame(31.0) == 0.0);
    CHECK(c.frame(31.5) == 1.0);
    c.set_loop(true);
    CHECK(c.frame(32.0) == 0.0);  // 2.0 wraps to 0
    c.set_rate(-1);               // from the last frame's instant, backward, wrapping
    CHECK(c.frame(32.5) == 1.5);
    c.seek(7.25);                 // placed: wrapped into [0, 2)
    CHECK(c.anchor() == 1.25);
    c.set_loop(false);
    bool ended = false;
    CHECK(c.place(-1, ended) == 0.0);
    CHECK(ended);  // backward, the start ends playback
    c.frame_at(5.0);  // scrubbing: unplaced
    CHECK(c.anchor() == 5.0);
}
