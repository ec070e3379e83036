// The player (fourdgs/player.hpp): its frames are state_at + evaluate at the same instant, bit
// for bit, for both temporal models and every way of moving through a scene; late frames say
// why and show the state before; a stalling or failing source gives late frames and then a clean
// error; bad input surfaces as the readers' own refusals at the frame that needs the data.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <optional>
#include <mutex>
#include <random>
#include <thread>

#include "fourdgs/detail/record_stream.hpp"
#include "fourdgs/fourdgs.hpp"
#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/player.hpp"
#include "fourdgs/writer.hpp"

using namespace fourdgs;
using fourdgs::detail::RangeFetcher;

namespace {

using Bytes8 = std::vector<std::uint8_t>;

// A gaussian-birth scene over 4 s: a background window [0, 4) and four one-second windows, split
// into chunks of 150 (so an instant needs several chunks, one of them shared by every instant),
// SH degree 1, moving gaussians, an object with a track, and an audio source.
const Bytes8& birth_scene() {
    static const Bytes8 bytes = [] {
        std::mt19937 rng(25);
        std::uniform_real_distribution<float> u(0, 1);
        const std::size_t n = 1400;
        GaussianColumns g;
        g.sh_degree = 1;
        g.resize(n);
        g.object_id.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            for (int c = 0; c < 3; ++c) {
                g.position[i * 3 + c] = 4 * u(rng) - 2;
                g.scale[i * 3 + c] = 0.01f + 0.05f * u(rng);
                g.motion[i * 3 + c] = 0.2f * u(rng) - 0.1f;
            }
            for (int c = 0; c < 4; ++c) g.rotation[i * 4 + c] = u(rng) - 0.5f;
            g.rotation[i * 4 + 3] += 1;
            for (int c = 0; c < 4; ++c) g.color[i * 4 + c] = u(rng);
            for (int k = 0; k < 9; ++k) g.sh[i * 9 + k] = u(rng) - 0.5f;
            const int w = static_cast<int>(i % 5);  // 0: background
            g.win_lo[i] = w == 0 ? 0.0 : w - 1.0;
            g.win_hi[i] = w == 0 ? 4.0 : double(w);
            g.mu_t[i] = static_cast<float>(g.win_lo[i] + (g.win_hi[i] - g.win_lo[i]) * u(rng));
            g.sigma_t[i] = w == 0 ? std::numeric_limits<float>::infinity() : 0.2f + 0.3f * u(rng);
            g.object_id[i] = i % 7 == 0 ? 1u : 0u;
        }
        SceneInput in;
        in.header.duration_sec = 4;
        in.header.sh_degree = 1;
        ObjectTrack track;
        track.object_id = 1;
        for (int k = 0; k <= 4; ++k) {
            TrajectorySample s;
            s.time = k;
            s.translation = {0.1 * k, 0, 0};
            s.rotation = {0, 0, std::sin(0.1 * k), std::cos(0.1 * k)};
            track.samples.push_back(s);
        }
        in.header.object_table.emplace();
        in.header.object_table->entries.push_back({});
        in.header.object_table->entries.back().object_id = 1;
        in.header.object_table->entries.back().label = "ball";
        in.header.object_tracks.push_back(track);
        static const std::uint8_t sound[64] = {};
        AudioSourceInput audio;
        audio.descriptor.source_id = 3;
        audio.descriptor.name = "hum";
        audio.descriptor.codec = "pcm_s16le";
        audio.descriptor.channel_layout = "mono";
        audio.descriptor.start_sec = 0.5;
        audio.descriptor.duration_sec = 1.25;
        audio.descriptor.flags = kAudioFlagSpatial | kAudioFlagLoop;
        audio.descriptor.position = {1, 2, 3};
        audio.descriptor.interpolation = "linear";
        audio.data = Bytes(sound, sizeof sound);
        in.header.audio.push_back(audio);
        in.gaussians = g.batch();
        WriterOptions opt;
        opt.max_chunk_gaussians = 150;
        opt.threads = 1;
        auto file = write_scene(in, opt);
        if (!file.ok()) FAIL(file.error().describe());
        return *file;
    }();
    return bytes;
}

// A keyframe-delta scene: `steps` states at 1/8 s, a keyframe every 6, 300 gaussians of which a
// tenth move each step; with `churn`, some die and some are born every third step.
Bytes8 keyframe_scene(bool chained, bool churn, std::uint32_t steps = 26) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(0, 1);
    const std::size_t n = 300;
    struct State {
        std::vector<std::uint32_t> ids;
        GaussianColumns g;
    };
    std::vector<State> states(steps);
    std::uint32_t next_id = 0;
    State first;
    first.g.sh_degree = 1;
    first.g.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        first.ids.push_back(next_id++);
        for (int c = 0; c < 3; ++c) {
            first.g.position[i * 3 + c] = 4 * u(rng) - 2;
            first.g.scale[i * 3 + c] = 0.01f + 0.05f * u(rng);
        }
        for (int c = 0; c < 4; ++c) first.g.rotation[i * 4 + c] = u(rng) - 0.5f;
        first.g.rotation[i * 4 + 3] += 1;
        for (int c = 0; c < 4; ++c) first.g.color[i * 4 + c] = u(rng);
        for (int k = 0; k < 9; ++k) first.g.sh[i * 9 + k] = u(rng) - 0.5f;
        first.g.sigma_t[i] = std::numeric_limits<float>::infinity();
    }
    first.g.mu_t.clear();
    first.g.win_lo.clear();
    first.g.win_hi.clear();
    states[0] = first;
    for (std::uint32_t s = 1; s < steps; ++s) {
        State st = states[s - 1];
        for (std::size_t k = 0; k < n / 10; ++k) {
            const std::size_t i = rng() % st.ids.size();
            for (int c = 0; c < 3; ++c) st.g.position[i * 3 + c] += 0.05f * (u(rng) - 0.5f);
        }
        if (churn && s % 3 == 0) {
            // Two die (the last two), three are born.
            const std::size_t keep = st.ids.size() - 2;
            State next;
            next.g.sh_degree = 1;
            next.g.resize(keep + 3);
            next.g.mu_t.clear();
            next.g.win_lo.clear();
            next.g.win_hi.clear();
            auto copy = [](auto& dst, const auto& src, std::size_t from, std::size_t to,
                           std::size_t w) {
                std::copy_n(src.begin() + static_cast<std::ptrdiff_t>(from * w), w,
                            dst.begin() + static_cast<std::ptrdiff_t>(to * w));
            };
            for (std::size_t i = 0; i < keep + 3; ++i) {
                const std::size_t from = i < keep ? i : rng() % keep;
                copy(next.g.position, st.g.position, from, i, 3);
                copy(next.g.scale, st.g.scale, from, i, 3);
                copy(next.g.rotation, st.g.rotation, from, i, 4);
                copy(next.g.color, st.g.color, from, i, 4);
                copy(next.g.sh, st.g.sh, from, i, 9);
                next.g.sigma_t[i] = st.g.sigma_t[from];
                if (i >= keep) next.g.position[i * 3] += 0.3f;
                next.ids.push_back(i < keep ? st.ids[i] : next_id++);
            }
            st = next;
        }
        states[s] = st;
    }
    std::vector<KeyframeStep> ks(steps);
    for (std::uint32_t s = 0; s < steps; ++s) {
        ks[s].t0 = s / 8.0;
        ks[s].gaussians = states[s].g.batch();
        ks[s].ids = states[s].ids;
    }
    SceneHeader header;
    header.duration_sec = steps / 8.0;
    header.sh_degree = 1;
    KeyframeWriterOptions opt;
    opt.keyframe_every = 6;
    opt.chained = chained;
    if (chained) opt.keyframe_referenced_at = {1.3};  // one keyframe-referenced delta too
    auto file = write_keyframe_delta(ks, header, opt);
    if (!file.ok()) FAIL(file.error().describe());
    return *file;
}

const Bytes8& kd_chained() {
    static const Bytes8 b = keyframe_scene(true, false);
    return b;
}
const Bytes8& kd_churn() {
    static const Bytes8 b = keyframe_scene(true, true);
    return b;
}
const Bytes8& kd_referenced() {
    static const Bytes8 b = keyframe_scene(false, true);
    return b;
}

// A source over memory that a test can hold (reads wait), fail, or cut short.
class GatedSource final : public ByteSource {
public:
    explicit GatedSource(const Bytes8& bytes) : bytes_(bytes) {}
    std::optional<std::uint64_t> size() const override { return bytes_.size(); }
    bool random_access() const override { return true; }
    Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override {
        std::unique_lock lock(mu_);
        ++waiting_;
        cv_.wait(lock, [&] { return open_; });
        --waiting_;
        if (fail_)
            return make_error(ErrorKind::io, refusal::kIoError,
                              "the test's source fails at byte " + std::to_string(offset), offset);
        const std::uint64_t end = std::min<std::uint64_t>(bytes_.size(), cut_);
        if (offset >= end) return std::size_t{0};
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), end - offset));
        std::memcpy(out.data(), bytes_.data() + offset, n);
        return n;
    }
    void hold() {
        std::lock_guard lock(mu_);
        open_ = false;
    }
    void release() {
        {
            std::lock_guard lock(mu_);
            open_ = true;
        }
        cv_.notify_all();
    }
    void fail() {
        std::lock_guard lock(mu_);
        fail_ = true;
    }
    void cut_at(std::uint64_t at) {
        std::lock_guard lock(mu_);
        cut_ = at;
    }
    int waiting() {
        std::lock_guard lock(mu_);
        return waiting_;
    }

private:
    const Bytes8& bytes_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool open_ = true, fail_ = false;
    std::uint64_t cut_ = ~std::uint64_t{0};
    int waiting_ = 0;
};

template <class T, class A, class B>
bool same_rows(const std::vector<T, A>& a, const std::vector<T, B>& b, std::size_t n) {
    return n == 0 || (a.size() >= n && b.size() >= n && std::memcmp(a.data(), b.data(), n * sizeof(T)) == 0);
}

// Bit for bit: the visible rows, in order, every column; and the instant.
void require_same_frame(const Frame& got, const Frame& want) {
    REQUIRE(got.count == want.count);
    REQUIRE(std::memcmp(&got.time, &want.time, sizeof got.time) == 0);
    const std::size_t n = got.count;
    if (n == 0) return;
    REQUIRE(got.sh_degree == want.sh_degree);
    for_each_frame_column(got.sh_degree, [&](auto column, std::size_t per) {
        REQUIRE(same_rows(got.*column, want.*column, n * per));
    });
}

// state_at + evaluate on a reader of its own: what every frame must equal.
struct Reference {
    explicit Reference(const Bytes8& bytes, OpenSceneOptions o = {})
        : source(bytes), reader(std::move(open_scene(source, o)).value()) {}
    Status frame(double t, Frame& out) {
        FOURDGS_TRY(reader.state_at(t, block, ws, 1));
        EvaluateOptions eo;
        eo.tracks = reader.scene().object_tracks;
        evaluate(block, t, reader.scene().header.cutoff, out, eo);
        return ok_status();
    }
    MemorySource source;
    SceneReader reader;
    SceneWorkspace ws;
    GaussianBlock block;
};

// The player's frame at t (waiting for it) against the reference's: the same frame, or the
// same refusal.
// The player's frame at t (waiting for it) against the reference's: the same frame, on time,
// or the same refusal (identifier and byte offset), which is returned.
std::optional<Error> require_frame_at(Player& player, Reference& ref, double t) {
    Frame got, want;
    PlayerFrame info;
    const Status p = player.frame_at(t, got, info, true);
    const Status r = ref.frame(t, want);
    INFO("t = " << t);
    REQUIRE(p.ok() == r.ok());
    if (!r.ok()) {
        REQUIRE(p.error().refusal == r.error().refusal);
        CHECK(p.error().offset == r.error().offset);
        return r.error();
    }
    REQUIRE_FALSE(info.late);
    REQUIRE(info.time == t);
    REQUIRE(info.shown == t);
    require_same_frame(got, want);
    return std::nullopt;
}

// A source, its reader and a player on them. `prepare` runs on the source once the reader is
// open, before the player starts (a test holds or cuts the source there).
template <class Source>
struct Played {
    explicit Played(const Bytes8& bytes, const PlayerOptions& o = {}, OpenSceneOptions so = {},
                    const std::function<void(Source&)>& prepare = {})
        : source(bytes), reader(std::move(open_scene(source, so)).value()),
          player(start(o, prepare)) {}
    Player start(const PlayerOptions& o, const std::function<void(Source&)>& prepare) {
        if (prepare) prepare(source);
        return std::move(Player::open(reader, source, o)).value();
    }
    Source source;
    SceneReader reader;
    Player player;
};
using Opened = Played<MemorySource>;

PlayerOptions without_prefetch(double stall_timeout_sec = PlayerOptions{}.stall_timeout_sec) {
    PlayerOptions o;
    o.prefetch = false;
    o.stall_timeout_sec = stall_timeout_sec;
    return o;
}

std::vector<double> seek_pattern(double duration, const std::string& kind) {
    std::vector<double> ts;
    if (kind == "forward")
        for (double t = 0; t < duration; t += 1.0 / 30) ts.push_back(t);
    if (kind == "backward")
        for (double t = duration - 1e-3; t >= 0; t -= 1.0 / 24) ts.push_back(t);
    if (kind == "random") {
        std::mt19937 rng(7);
        std::uniform_real_distribution<double> u(0, duration);
        for (int k = 0; k < 40; ++k) ts.push_back(u(rng));
    }
    if (kind == "across GOPs")  // a keyframe every 6 steps of 1/8 s: 0.75 s
        for (double t : {0.1, 0.9, 0.2, 2.3, 1.6, 3.1, 0.8, 0.05, 2.9})
            if (t < duration) ts.push_back(t);
    if (kind == "past the end")
        for (double t : {0.5, duration + 0.25, duration, duration - 0.01, -0.5, 1.0})
            ts.push_back(t);
    return ts;
}

}  // namespace

TEST_CASE("player: frames equal state_at + evaluate bit for bit, both models, every seek "
          "pattern",
          "[player][threads]") {
    const std::pair<const char*, const Bytes8*> scenes[] = {
        {"gaussian-birth", &birth_scene()},
        {"keyframe-delta chained", &kd_chained()},
        {"keyframe-delta with deaths and births", &kd_churn()},
        {"keyframe-delta keyframe-referenced", &kd_referenced()}};
    for (auto [name, bytes] : scenes) {
        for (const char* pattern : {"forward", "backward", "random", "across GOPs", "past the end"}) {
            INFO(name << ", " << pattern);
            Opened o(*bytes);
            Reference ref(*bytes);
            for (double t : seek_pattern(o.player.duration(), pattern))
                require_frame_at(o.player, ref, t);
        }
    }
}

TEST_CASE("player: playing forward through a GOP steps one delta at a time, seeks and turns "
          "compose from the keyframe",
          "[player][threads]") {
    Opened o(kd_chained());
    Reference ref(kd_chained());
    for (double t = 0; t < o.player.duration(); t += 1.0 / 30) require_frame_at(o.player, ref, t);
    const PlayerStats forward = o.player.stats();
    // 26 states, keyframes at 0, 6, 12, 18, 24 and one keyframe-referenced delta: those six are
    // composed, every other one is a step.
    CHECK(forward.states_composed == 6);
    CHECK(forward.steps == 20);
    // Backward, every state is composed from its keyframe.
    REQUIRE(o.player.set_rate(-1).ok());
    for (double t = o.player.duration() - 0.01; t > 0; t -= 1.0 / 8)
        require_frame_at(o.player, ref, t);
    CHECK(o.player.stats().steps == forward.steps);
}

TEST_CASE("player: a state prepared ahead on the way forward is kept when the plan shrinks, so "
          "each keyframe is composed once",
          "[player][threads]") {
    // The worker plans to reach the next keyframe when composing it would take longer than the
    // playhead needs to get there (its horizon: the compose time measured, times the rate). At
    // a rate of a million any compose time reaches the keyframe at 0.75 s from 0: the worker
    // prepares the steps to it and composes it. At 1x the plan is the look-ahead alone again;
    // the states already prepared past it are still the ones the playhead meets next. Dropped,
    // the workspace would be left on the keyframe, so the first state wanted again would be
    // composed whole, and the keyframe once more. The clock is paused and the frames are asked
    // for by frame_at, each waiting for its state: no wall time decides what is prepared.
    Opened o(kd_chained());
    Reference ref(kd_chained());
    REQUIRE(o.player.set_rate(1e6).ok());
    require_frame_at(o.player, ref, 0);
    // The worker prepares on its own: wait (no time limit asserted) until it has composed the
    // keyframe at 0.75 s, the second state composed.
    for (int k = 0; k < 20000 && o.player.stats().states_composed < 2; ++k)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(o.player.stats().states_composed == 2);
    REQUIRE(o.player.set_rate(1).ok());
    for (double t = 1.0 / 30; t < o.player.duration(); t += 1.0 / 30) require_frame_at(o.player, ref, t);
    const PlayerStats s = o.player.stats();
    CHECK(s.discarded == 0);
    // 26 states: keyframes at 0, 6, 12, 18, 24 and the keyframe-referenced delta composed, once
    // each; the other 20 steps.
    CHECK(s.states_composed == 6);
    CHECK(s.steps == 20);
}

TEST_CASE("player: looping forward on a caller's clock composes each keyframe once a pass and "
          "discards nothing, across the wrap",
          "[player][threads]") {
    PlayerOptions opt;
    opt.loop = true;
    opt.playing = true;
    Opened o(kd_chained(), opt);
    Reference ref(kd_chained());
    Frame got, want;
    PlayerFrame info;
    // Two passes and a little, at 30 frames a second of the caller's clock; each frame waits
    // for its state, so what the worker prepares follows the frames, not the wall time.
    const double duration = o.player.duration();
    int wraps = 0;
    double last = -1;
    for (int k = 0; k < static_cast<int>(2 * duration * 30) + 5; ++k) {
        REQUIRE(o.player.frame(k / 30.0, got, info, true).ok());
        INFO("t = " << info.time);
        REQUIRE_FALSE(info.late);
        REQUIRE(ref.frame(info.time, want).ok());
        require_same_frame(got, want);
        wraps += info.time < last;
        last = info.time;
    }
    REQUIRE(wraps == 2);
    const PlayerStats s = o.player.stats();
    CHECK(s.discarded == 0);
    // Two full passes, 6 states composed and 20 steps each, then the third pass's start: its
    // state 0 and the steps up to the one shown, and what the worker prepared ahead of it (at
    // most up to its keyframe at 0.75 s, state 6).
    const std::uint64_t shown_steps = static_cast<std::uint64_t>(std::floor(last * 8));
    CHECK(s.states_composed >= 6 + 6 + 1);
    CHECK(s.states_composed <= 6 + 6 + 2);
    CHECK(s.steps >= 20 + 20 + shown_steps);
    CHECK(s.steps <= 20 + 20 + 5);
}

TEST_CASE("player: the clock — play, pause, seek, rate, reverse, loop and the end", "[player][threads]") {
    PlayerOptions opt;
    opt.start = 1.0;
    Opened o(birth_scene(), opt);
    Reference ref(birth_scene());
    Player& p = o.player;
    Frame f, want;
    PlayerFrame info;
    auto at = [&](double now) {
        REQUIRE(p.frame(now, f, info, true).ok());
        REQUIRE(ref.frame(info.time, want).ok());
        require_same_frame(f, want);
        return info.time;
    };
    CHECK(at(100.0) == 1.0);  // paused at the start
    CHECK(p.state() == PlaybackState::paused);
    p.play();
    CHECK(at(100.5) == 1.0);  // the first frame after play shows where playback was
    CHECK(at(101.0) == 1.5);
    REQUIRE(p.set_rate(2).ok());
    CHECK(at(101.25) == 2.0);
    p.pause();
    CHECK(at(102.0) == 2.0);
    CHECK(p.position() == 2.0);
    p.seek(0.25);
    CHECK(at(103.0) == 0.25);
    // Reverse to the start: ended at 0.
    REQUIRE(p.set_rate(-1).ok());
    p.play();
    CHECK(at(104.0) == 0.25);
    CHECK(at(104.125) == 0.125);
    CHECK(at(105.0) == 0.0);
    CHECK(p.state() == PlaybackState::ended);
    CHECK(info.state == PlaybackState::ended);
    // Forward past the end without loop: the last instant before the duration.
    REQUIRE(p.set_rate(1).ok());
    p.play();  // ended: starts over from 0
    CHECK(at(106.0) == 0.0);
    CHECK(at(110.5) == std::nextafter(4.0, 0.0));
    CHECK(p.state() == PlaybackState::ended);
    // Looping wraps.
    p.set_loop(true);
    p.seek(3.5);
    p.play();
    CHECK(at(111.0) == 3.5);
    CHECK(at(112.0) == 0.5);
    REQUIRE(p.set_rate(-2).ok());
    CHECK(at(112.5) == 3.5);
    CHECK(p.state() == PlaybackState::playing);
    // Not a number is refused.
    CHECK(p.frame_at(std::nan(""), f, info).error().refusal == refusal::kInvalidArgument);
    CHECK(p.set_rate(INFINITY).error().refusal == refusal::kInvalidOption);
}

namespace {

// Row i of a and row j of b, bit for bit, every column.
bool same_row(const Frame& a, std::size_t i, const Frame& b, std::size_t j) {
    bool same = a.sh_degree == b.sh_degree;
    for_each_frame_column(a.sh_degree, [&](auto column, std::size_t per) {
        const auto& x = a.*column;
        const auto& y = b.*column;
        same = same && (per == 0 || std::memcmp(&x[i * per], &y[j * per], per * sizeof x[0]) == 0);
    });
    return same;
}

// Checks each frame's changed rows against the frame before it, and the frame against a fresh
// state_at + evaluate at the instant it shows.
struct ChangeChecker {
    explicit ChangeChecker(const Bytes8& bytes) : ref(bytes) {}
    // `f` is the frame just filled, `info` what the player said of it.
    void check(const Frame& f, const PlayerFrame& info) {
        Frame want;
        REQUIRE(ref.frame(info.shown, want).ok());
        require_same_frame(f, want);
        REQUIRE(std::is_sorted(info.changed.begin(), info.changed.end()));
        REQUIRE(std::adjacent_find(info.changed.begin(), info.changed.end()) == info.changed.end());
        if (info.all_changed) {
            REQUIRE(info.changed.empty());
            ++whole;
        } else {
            REQUIRE(have_previous);
            REQUIRE(f.count == previous.count);
            REQUIRE(same_rows(f.source, previous.source, f.count));
            std::size_t next = 0;
            for (std::size_t k = 0; k < f.count; ++k) {
                if (next < info.changed.size() && info.changed[next] == k) {
                    ++next;
                    continue;
                }
                INFO("row " << k << " not listed as changed");
                REQUIRE(same_row(f, k, previous, k));
            }
            REQUIRE(next == info.changed.size());  // every listed row is a row of the frame
            ++partial;
            if (info.changed.size() < f.count) ++fewer;
        }
        previous = f;
        have_previous = true;
    }
    Reference ref;
    Frame previous;
    bool have_previous = false;
    int whole = 0, partial = 0, fewer = 0;
};

}  // namespace

TEST_CASE("player: a frame's changed rows are exact — every row not listed is the previous "
          "frame's, bit for bit — over play, pause, seek, rate, reverse and loop, both models",
          "[player][threads]") {
    const std::pair<const char*, const Bytes8*> scenes[] = {
        {"gaussian-birth", &birth_scene()},
        {"keyframe-delta chained", &kd_chained()},
        {"keyframe-delta with deaths and births", &kd_churn()},
        {"keyframe-delta keyframe-referenced", &kd_referenced()}};
    for (auto [name, bytes] : scenes) {
        for (bool alternate : {false, true}) {
            INFO(name << (alternate ? ", two Frames in turn" : ", one Frame"));
            Opened o(*bytes);
            ChangeChecker check(*bytes);
            Player& p = o.player;
            Frame frames[2];
            int turn = 0;
            PlayerFrame info;
            double now = 50;
            auto frame = [&](double dt) {
                now += dt;
                Frame& f = frames[alternate ? (turn++ % 2) : 0];
                const Status st = p.frame(now, f, info, true);
                INFO((st.ok() ? std::string() : st.error().describe()));
                REQUIRE(st.ok());
                check.check(f, info);
            };
            auto frame_at = [&](double t) {
                Frame& f = frames[alternate ? (turn++ % 2) : 0];
                REQUIRE(p.frame_at(t, f, info, true).ok());
                check.check(f, info);
            };
            const double d = p.duration();
            frame(0);
            p.play();
            for (int k = 0; k < 40; ++k) frame(1.0 / 60);  // play through steps and keyframes
            p.pause();
            for (int k = 0; k < 3; ++k) frame(1.0 / 60);  // paused: nothing changes
            CHECK(info.changed.empty());
            CHECK_FALSE(info.all_changed);
            p.play();
            REQUIRE(p.set_rate(2).ok());
            for (int k = 0; k < 30; ++k) frame(1.0 / 60);
            p.seek(d * 0.3);
            for (int k = 0; k < 10; ++k) frame(1.0 / 60);
            REQUIRE(p.set_rate(-1).ok());  // reverse
            for (int k = 0; k < 30; ++k) frame(1.0 / 60);
            REQUIRE(p.set_rate(0.5).ok());
            for (int k = 0; k < 20; ++k) frame(1.0 / 60);
            p.set_loop(true);
            REQUIRE(p.set_rate(3).ok());
            p.seek(d - 0.2);
            for (int k = 0; k < 40; ++k) frame(1.0 / 60);  // over the end, back to the start
            for (double t : {0.05, 0.06, 0.06, d * 0.5, d * 0.5 + 0.01}) frame_at(t);
            CHECK(check.whole > 0);
            CHECK(check.partial >= 3);  // at least the paused frames
            // Keyframe-delta: frames of one state over moving instants, and of steps, list fewer
            // rows than the frame holds (every gaussian of the birth scene moves).
            if (bytes != &birth_scene()) CHECK(check.fewer > 20);
        }
    }
}

TEST_CASE("player: each frame carries the audio sources' state at its instant (§7)", "[player][threads]") {
    Opened o(birth_scene());
    Frame f;
    PlayerFrame info;
    for (double t : {0.0, 0.6, 1.9, 3.2}) {
        REQUIRE(o.player.frame_at(t, f, info, true).ok());
        REQUIRE(info.audio.size() == 1);
        const AudioState want = audio_state_at(o.reader.scene().audio[0].descriptor, t);
        CHECK(info.audio[0].active == want.active);
        CHECK(info.audio[0].local_time == want.local_time);
        CHECK(info.audio[0].pose.translation == want.pose.translation);
    }
}

TEST_CASE("player: a late frame says why, shows the state before at its nearest instant, and "
          "the state arriving makes frames on time",
          "[player][threads]") {
    for (const Bytes8* bytes : {&birth_scene(), &kd_chained()}) {
        Played<GatedSource> played(*bytes, without_prefetch(), {},
                                   [](GatedSource& s) { s.hold(); });
        GatedSource& source = played.source;
        Player& player = played.player;
        Reference ref(*bytes);
        Frame f, want;
        PlayerFrame info;
        // Nothing resident yet: late, starting, empty.
        REQUIRE(player.frame_at(0.2, f, info).ok());
        CHECK(info.late);
        CHECK(info.reason == LateReason::starting);
        CHECK(f.count == 0);
        source.release();
        REQUIRE(player.frame_at(0.2, f, info, true).ok());
        CHECK_FALSE(info.late);
        // A state far away (beyond the look-ahead) while the source holds: late, and the
        // state before shown at the last instant it covers.
        const double t1 = info.state_t1;
        CHECK(info.state_t0 <= 0.2);
        CHECK(0.2 < t1);
        const double far = player.duration() - 0.3;
        source.hold();
        REQUIRE(player.frame_at(far, f, info).ok());
        CHECK(info.late);
        CHECK(info.reason != LateReason::none);
        CHECK(info.reason != LateReason::starting);
        CHECK(info.time == far);
        CHECK(info.shown == std::nextafter(t1, 0.0));
        REQUIRE(ref.frame(info.shown, want).ok());
        require_same_frame(f, want);
        source.release();
        REQUIRE(player.frame_at(far, f, info, true).ok());
        CHECK_FALSE(info.late);
        REQUIRE(ref.frame(far, want).ok());
        require_same_frame(f, want);
        CHECK(player.stats().late_frames >= 1);
    }
}

TEST_CASE("player: a source that stalls gives late frames then playback-stalled, one that fails "
          "gives the reader's refusal at the frame that needs it, neither hangs",
          "[player][threads]") {
    for (const Bytes8* bytes : {&birth_scene(), &kd_chained()}) {
        Played<GatedSource> played(*bytes, without_prefetch(0.2));
        GatedSource& source = played.source;
        Player& player = played.player;
        Frame f;
        PlayerFrame info;
        REQUIRE(player.frame_at(0.1, f, info, true).ok());
        source.hold();
        // Frames of a far state: late, until the stall timeout.
        Status st = ok_status();
        int late = 0;
        for (int k = 0; k < 200 && st.ok(); ++k) {
            st = player.frame_at(3.0, f, info);
            if (st.ok()) {
                CHECK(info.late);
                ++late;
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        }
        CHECK(late > 0);
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().refusal == refusal::kPlaybackStalled);
        CHECK(st.error().kind == ErrorKind::io);
        // Waiting gives up at the stall timeout too.
        const auto w0 = std::chrono::steady_clock::now();
        CHECK(player.frame_at(3.0, f, info, true).error().refusal == refusal::kPlaybackStalled);
        CHECK(std::chrono::steady_clock::now() - w0 < std::chrono::seconds(5));
        // The source now fails: the frame that needs the state gets the reader's refusal.
        source.fail();
        source.release();
        GatedSource failing(*bytes);
        auto failing_reader = std::move(open_scene(failing)).value();
        failing.fail();
        SceneWorkspace ws;
        GaussianBlock block;
        const Status want = failing_reader.state_at(3.0, block, ws, 1);
        REQUIRE_FALSE(want.ok());
        player.seek(3.0);
        const Status got = player.frame_at(3.0, f, info, true);
        REQUIRE_FALSE(got.ok());
        CHECK(got.error().refusal == want.error().refusal);
    }
}

namespace {

// The file with `count` bytes inverted in the middle of index entry `entry`'s chunk record.
Bytes8 damaged(const Bytes8& bytes, std::size_t entry) {
    MemorySource src(bytes);
    auto reader = std::move(open_scene(src)).value();
    const ChunkIndex& e = reader.scene().index.at(entry);
    Bytes8 out = bytes;
    const std::uint64_t mid = e.chunk_offset + e.chunk_length / 2;
    for (std::uint64_t k = mid; k < mid + 16; ++k) out[k] ^= 0x5a;
    return out;
}

// Every frame of the pattern against the reader's answer on the same bytes.
void require_refusals_where_the_reader_refuses(const Bytes8& bytes, int* refused) {
    Opened o(bytes);
    Reference ref(bytes);
    for (double t = 0; t < o.player.duration(); t += 1.0 / 16)
        *refused += require_frame_at(o.player, ref, t).has_value();
}

}  // namespace

TEST_CASE("player: a damaged chunk is the reader's refusal at the frames that need it, and only "
          "there",
          "[player][threads]") {
    // A chunk of the window [1, 2): only its instants are refused.
    MemorySource birth(birth_scene());
    auto birth_reader = std::move(open_scene(birth)).value();
    const std::vector<std::size_t> at_one = birth_reader.chunks_for(1.5).value();
    std::size_t window_chunk = at_one.front();
    for (std::size_t c : at_one)
        if (birth_reader.scene().index[c].t0 == 1.0) window_chunk = c;
    int refused = 0;
    require_refusals_where_the_reader_refuses(damaged(birth_scene(), window_chunk), &refused);
    CHECK(refused == 16);
    refused = 0;
    // A delta in the second GOP: its state and the rest of its GOP are refused, the GOPs
    // around it play.
    MemorySource src(kd_chained());
    auto reader = std::move(open_scene(src)).value();
    const std::size_t entry = reader.chunks_for(1.0).value().back();  // the chain ends at 1.0's
    require_refusals_where_the_reader_refuses(damaged(kd_chained(), entry), &refused);
    CHECK(refused > 0);
}

TEST_CASE("player: a file cut short after it was opened is the reader's truncated at the frames "
          "that need the missing bytes",
          "[player][threads]") {
    for (const Bytes8* bytes : {&birth_scene(), &kd_chained()}) {
        GatedSource ref_source(*bytes);
        auto ref_reader = std::move(open_scene(ref_source)).value();
        const std::vector<ChunkIndex>& index = ref_reader.scene().index;
        const std::uint64_t cut = index.at(index.size() / 2).chunk_offset + 10;
        ref_source.cut_at(cut);
        Played<GatedSource> played(*bytes, without_prefetch(), {},
                                   [cut](GatedSource& s) { s.cut_at(cut); });
        Player& player = played.player;
        SceneWorkspace ws;
        GaussianBlock block;
        int truncated = 0;
        for (double t = 0; t < player.duration(); t += 0.25) {
            Frame f;
            PlayerFrame info;
            const Status p = player.frame_at(t, f, info, true);
            const Status r = ref_reader.state_at(t, block, ws, 1);
            INFO("t = " << t);
            REQUIRE(p.ok() == r.ok());
            if (!r.ok()) {
                CHECK(p.error().refusal == r.error().refusal);
                truncated += p.error().refusal == refusal::kTruncated;
            }
        }
        CHECK(truncated > 0);
    }
}

TEST_CASE("player: a keyframe-delta stream (a pipe) plays forward, a cut stream gives its "
          "states then truncated, backwards is not-seekable, a gaussian-birth stream is refused",
          "[player][threads]") {
    OpenSceneOptions streaming;
    streaming.access = OpenSceneOptions::Access::streaming;
    {
        Opened o(kd_churn(), {}, streaming);
        Reference ref(kd_churn());
        for (double t = 0; t < o.player.duration(); t += 1.0 / 20) require_frame_at(o.player, ref, t);
        Frame f;
        PlayerFrame info;
        CHECK(o.player.frame_at(0.5, f, info, true).error().refusal == refusal::kNotSeekable);
        CHECK(o.player.set_rate(-1).error().refusal == refusal::kNotSeekable);
    }
    {
        // Cut in the middle of a chunk record: every state before it plays, then the reader's
        // own refusal.
        MemorySource whole(kd_churn());
        auto indexed = std::move(open_scene(whole)).value();
        const ChunkIndex& e = indexed.scene().index.at(indexed.scene().index.size() / 2);
        const Bytes8 cut(kd_churn().begin(),
                         kd_churn().begin() + static_cast<std::ptrdiff_t>(e.chunk_offset + 20));
        Opened o(cut, {}, streaming);
        Reference ref(cut, streaming);
        std::optional<Error> refused;
        for (double t = 0; t < o.player.duration() && !refused; t += 1.0 / 20)
            refused = require_frame_at(o.player, ref, t);  // a stream is spent after it
        REQUIRE(refused);
        CHECK(refused->refusal == refusal::kTruncated);
    }
    MemorySource src(birth_scene());
    auto reader = std::move(open_scene(src, streaming)).value();
    auto player = Player::open(reader, src);
    REQUIRE_FALSE(player.ok());
    CHECK(player.error().refusal == refusal::kNotSeekable);
}

TEST_CASE("player: options are checked", "[player]") {
    MemorySource src(birth_scene());
    auto reader = std::move(open_scene(src)).value();
    PlayerOptions opt;
    opt.look_ahead = 0;
    CHECK(Player::open(reader, src, opt).error().refusal == refusal::kInvalidOption);
    opt = {};
    opt.rate = NAN;
    CHECK(Player::open(reader, src, opt).error().refusal == refusal::kInvalidOption);
    opt = {};
    opt.max_sh_degree = 4;
    CHECK(Player::open(reader, src, opt).error().refusal == refusal::kInvalidOption);
    CHECK(Player::open(nullptr).error().refusal == refusal::kInvalidArgument);
}

TEST_CASE("player: playing the whole scene keeps what is resident bounded by the look-ahead",
          "[player][threads]") {
    // Gaussian-birth: at most the chunks of the instant shown and of look_ahead instants after
    // it, whatever the number of instants played.
    PlayerOptions opt;
    opt.look_ahead = 1;
    Opened o(birth_scene(), opt);
    std::uint64_t most = 0;
    Frame f;
    PlayerFrame info;
    for (double t = 0; t < o.player.duration(); t += 1.0 / 60) {
        REQUIRE(o.player.frame_at(t, f, info, true).ok());
        most = std::max(most, o.player.stats().resident_bytes);
    }
    // The largest instant is the background chunks plus one window's: 2 of the 5 groups, and a
    // look-ahead of one more window: at most 4/5 of the file's gaussians' columns (plus the
    // vectors' slack). The whole file decoded would be 5/5.
    MemorySource src(birth_scene());
    auto reader = std::move(open_scene(src)).value();
    SceneWorkspace ws;
    GaussianBlock all;
    std::uint64_t largest = 0;
    for (double t = 0.5; t < 4; t += 1) {
        REQUIRE(reader.state_at(t, all, ws, 1).ok());
        largest = std::max<std::uint64_t>(largest, all.count);
    }
    const std::uint64_t per = (3 + 3 + 4 + 4 + 3 + 4 + 1 + 1 + 1) * 4 + 1 + 9;
    CHECK(most <= 2 * largest * per * 11 / 10);
}

TEST_CASE("keyframe-delta step_forward: one chained delta applied to the composed state equals "
          "state_at bit for bit, fetching that delta's bytes only (§11.4)",
          "[keyframe-delta][player]") {
    for (const Bytes8* bytes : {&kd_chained(), &kd_churn()}) {
        MemorySource src(*bytes);
        auto opened = KeyframeDeltaReader::open(src);
        REQUIRE(opened.ok());
        const KeyframeDeltaReader& kd = *opened;
        KeyframeDeltaReader ref = std::move(KeyframeDeltaReader::open(src)).value();
        const std::vector<ChunkIndex>& ix = kd.timeline().entries();
        KeyframeDeltaWorkspace ws;
        GaussianBlock state, want;
        StateStep step;
        std::size_t steps = 0, wholes = 0, composed = 0;
        for (std::size_t entry : kd.timeline().by_time()) {
            const ChunkIndex& e = ix[entry];
            auto next = kd.next_step(ws);
            REQUIRE(next.ok());
            const std::uint64_t before = kd.bytes_fetched();
            auto stepped = kd.step_forward(ws, step);
            REQUIRE(stepped.ok());
            // A step exactly onto a chained delta whose reference is the state held.
            const bool chained_on = e.keyframe->chunk_kind == kChunkKindDelta &&
                                    e.keyframe->delta_mode == kDeltaModeChained && ws.composed_entry == entry;
            CHECK(*stepped == next->has_value());
            if (*stepped) {
                CHECK(**next == entry);
                CHECK(chained_on);
                ++steps;
                wholes += step.whole;
                std::vector<ByteRange> ranges;
                RangeFetcher::append_ranges(e, 1, ranges);
                std::uint64_t own = 0;
                for (const ByteRange& r : ranges) own += r.length;
                CHECK(kd.bytes_fetched() - before == own);  // that record and its bands only
                step.apply_to(state);
            } else {
                ++composed;
                REQUIRE(kd.state_at(e.t0, state, ws).ok());
            }
            REQUIRE(ref.state_at(e.t0, want).ok());
            REQUIRE(state.count == want.count);
            CHECK(same_rows(state.position, want.position, want.count * 3));
            CHECK(same_rows(state.scale, want.scale, want.count * 3));
            CHECK(same_rows(state.rotation, want.rotation, want.count * 4));
            CHECK(same_rows(state.color, want.color, want.count * 4));
            CHECK(same_rows(state.motion, want.motion, want.count * 3));
            CHECK(same_rows(state.mu_t, want.mu_t, want.count));
            CHECK(same_rows(state.sigma_t, want.sigma_t, want.count));
            CHECK(same_rows(state.win_lo, want.win_lo, want.count));
            CHECK(same_rows(state.win_hi, want.win_hi, want.count));
            CHECK(same_rows(state.sh, want.sh, want.count * 9));
            CHECK(same_rows(state.gaussian_id, want.gaussian_id, want.count));
            CHECK(state.object_id.size() == want.object_id.size());
        }
        CHECK(steps > 0);
        CHECK(composed > 0);
        if (bytes == &kd_churn()) CHECK(wholes > 0);  // deaths and births move rows
        else CHECK(wholes == 0);
    }
}
