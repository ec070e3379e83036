// The player over a link that cannot keep up (fourdgs/player.hpp): when each step waits longer
// for its delta than the clock takes to cross a state, stepping after the playhead never
// catches it; the player skips ahead to a state it can have ready in time, as a video player
// drops frames, and is on time there.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <span>
#include <mutex>
#include <thread>
#include <vector>

#include "fourdgs/fourdgs.hpp"
#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/player.hpp"

using namespace fourdgs;

namespace {

// `steps` states at 1/8 s of 200 gaussians, a fifth of them moving each step, one keyframe at
// the start and every delta chained to the state before it: one long GOP of steps.
std::vector<std::uint8_t> one_long_gop(std::uint32_t steps) {
    const std::size_t n = 200;
    GaussianColumns g;
    g.resize(n);
    g.mu_t.clear();
    g.win_lo.clear();
    g.win_hi.clear();
    for (std::size_t i = 0; i < n; ++i) {
        for (int c = 0; c < 3; ++c) {
            g.position[i * 3 + c] = static_cast<float>((i * 7 + c * 3) % 19) * 0.1f - 1;
            g.scale[i * 3 + c] = 0.02f;
        }
        g.rotation[i * 4 + 3] = 1;
        for (int c = 0; c < 4; ++c) g.color[i * 4 + c] = 0.5f;
        g.sigma_t[i] = std::numeric_limits<float>::infinity();
    }
    std::vector<GaussianColumns> states(steps, g);
    std::vector<KeyframeStep> ks(steps);
    std::vector<std::uint32_t> ids(n);
    for (std::uint32_t i = 0; i < n; ++i) ids[i] = i;
    for (std::uint32_t s = 0; s < steps; ++s) {
        if (s > 0) {
            states[s] = states[s - 1];
            for (std::size_t i = s % 5; i < n; i += 5) states[s].position[i * 3] += 0.01f;
        }
        ks[s].t0 = s / 8.0;
        ks[s].gaussians = states[s].batch();
        ks[s].ids = ids;
    }
    SceneHeader header;
    header.duration_sec = steps / 8.0;
    KeyframeWriterOptions opt;
    opt.keyframe_every = steps;
    opt.chained = true;
    auto file = write_keyframe_delta(ks, header, opt);
    if (!file.ok()) FAIL(file.error().describe());
    return *file;
}

// Bytes in memory behind a link of `rtt` per request: a read of bytes not yet fetched waits a
// round trip, and so does a prefetch, one request for all its ranges; what either fetched stays
// resident. (Only the round trip is modelled: it is what a step waits on.)
class LinkSource final : public ByteSource {
public:
    LinkSource(const std::vector<std::uint8_t>& bytes, std::chrono::milliseconds rtt)
        : bytes_(bytes), resident_(bytes.size(), 0), rtt_(rtt) {}
    std::optional<std::uint64_t> size() const override { return bytes_.size(); }
    bool random_access() const override { return true; }
    Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override {
        if (offset >= bytes_.size()) return std::size_t{0};
        const std::size_t n =
            static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), bytes_.size() - offset));
        const ByteRange range{offset, n};
        fetch({&range, 1});
        std::memcpy(out.data(), bytes_.data() + offset, n);
        return n;
    }
    Status prefetch(std::span<const ByteRange> ranges, const std::atomic<bool>*) override {
        fetch(ranges);
        return ok_status();
    }

private:
    void fetch(std::span<const ByteRange> ranges) {
        std::unique_lock lock(mu_);
        bool missing = false;
        for (const ByteRange& r : ranges)
            for (std::uint64_t k = r.offset; k < std::min<std::uint64_t>(r.offset + r.length, bytes_.size()); ++k)
                missing = missing || !resident_[k];
        if (!missing) return;
        lock.unlock();
        std::this_thread::sleep_for(rtt_);
        lock.lock();
        for (const ByteRange& r : ranges)
            for (std::uint64_t k = r.offset; k < std::min<std::uint64_t>(r.offset + r.length, bytes_.size()); ++k)
                resident_[k] = 1;
    }

    const std::vector<std::uint8_t>& bytes_;
    std::mutex mu_;
    std::vector<std::uint8_t> resident_;
    std::chrono::milliseconds rtt_;
};

}  // namespace

TEST_CASE("player: over a link where a step waits longer than a state lasts, playback skips "
          "ahead to states it can have in time and is on time there",
          "[player][threads]") {
    // 120 states of 1/8 s in one GOP, played at 4x: a state lasts 31 ms of the clock, and each
    // step waits 60 ms for its delta (no prefetcher: nothing fetches the deltas ahead). Steps
    // after the playhead fall further behind with each one; composing a state ahead waits one
    // round trip for its whole chain. Frames come at 60 Hz of the wall clock, never waiting.
    const std::vector<std::uint8_t> bytes = one_long_gop(120);
    LinkSource source(bytes, std::chrono::milliseconds(60));
    SceneReader reader = std::move(open_scene(source)).value();
    PlayerOptions opt;
    opt.prefetch = false;
    opt.stall_timeout_sec = 0;  // late frames are counted, never an error here
    opt.rate = 4;
    Player player = std::move(Player::open(reader, source, opt)).value();
    Frame f;
    PlayerFrame info;
    REQUIRE(player.frame_at(0, f, info, true).ok());
    player.play();
    int frames = 0, on_time_later = 0;
    const auto start = std::chrono::steady_clock::now();
    for (int k = 1;; ++k) {
        const auto due = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     std::chrono::duration<double>(k / 60.0));
        std::this_thread::sleep_until(due);
        const double now = std::chrono::duration<double>(due - start).count();
        REQUIRE(player.frame(now, f, info).ok());
        ++frames;
        // Past the first seconds of scene (the start, and the worker measuring what a step and
        // a compose cost it), a frame on time is one the worker skipped ahead to.
        if (info.time > 3 && !info.late) ++on_time_later;
        if (info.state == PlaybackState::ended) break;
    }
    INFO(frames << " frames, " << on_time_later << " on time after 3 s, "
                << player.stats().steps << " steps, " << player.stats().states_composed
                << " composed");
    CHECK(on_time_later > 0);
}
