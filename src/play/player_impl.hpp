// The player's inside (player.cpp, player_worker.cpp): Player::Impl, what its worker thread
// prepares and what its render thread shows.
//
// One mutex guards what the two threads share: the playhead the worker works towards, the
// prepared states (gaussian-birth chunk slots, keyframe-delta items) and their refusals. Neither
// thread holds it while it reads, decodes or evaluates: the worker decodes into a slot or an item
// no one else touches, then publishes it; the render thread takes what it needs under the lock
// (pins the slots, takes the items), lets go, and evaluates.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fourdgs/frame_changes.hpp"
#include "fourdgs/player.hpp"
#include "read/scene_front_end.hpp"

namespace fourdgs {
// The player's own parts, named apart from the rest of the library.
namespace player_parts {

inline constexpr std::size_t kNone = ~std::size_t{0};
using Clock = std::chrono::steady_clock;

inline Error invalid_option(std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal::kInvalidOption, std::move(message));
}

inline Error not_seekable(std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal::kNotSeekable, std::move(message));
}

// The largest instant before `t1`: where a state whose interval ends at t1 is last shown.
inline double before(double t1) { return std::nextafter(t1, -std::numeric_limits<double>::infinity()); }

template <class T, class A>
inline std::uint64_t bytes_of(const std::vector<T, A>& v) {
    return v.capacity() * sizeof(T);
}

inline std::uint64_t bytes_of(const GaussianBlock& b) {
    return bytes_of(b.position) + bytes_of(b.scale) + bytes_of(b.rotation) + bytes_of(b.color) +
           bytes_of(b.motion) + bytes_of(b.mu_t) + bytes_of(b.sigma_t) + bytes_of(b.win_lo) +
           bytes_of(b.win_hi) + bytes_of(b.flags) + bytes_of(b.window_index) + bytes_of(b.sh) +
           bytes_of(b.object_id) + bytes_of(b.source_group) + bytes_of(b.source_index) +
           bytes_of(b.gaussian_id);
}

enum class Phase : std::uint8_t { idle, fetching, decoding };

// A gaussian-birth chunk decoded by the worker. The worker writes a slot only while it is
// `decoding` (the render thread reads only `ready` ones) and reuses only unpinned ones.
struct ChunkSlot {
    enum class State : std::uint8_t { empty, decoding, ready, failed };
    std::size_t chunk = kNone;
    State state = State::empty;
    int pins = 0;  // render-thread users: the slots of the state shown
    GaussianBlock block;
    std::uint64_t bytes = 0;  // the block's memory, as of its last decode (for stats())
    std::optional<Error> error;
};

// A keyframe-delta state prepared by the worker: the state at sequence position `pos` (its
// state chunk's place in time order) as a step from the state before it, or whole; or the
// refusal met preparing it.
struct Item {
    std::size_t pos = kNone;
    double t0 = 0, t1 = 0;
    StateStep step;
    std::optional<Error> error;
};

// What the render side found for the instant asked.
struct Found {
    enum class Kind : std::uint8_t { on_time, late, failed } kind = Kind::on_time;
    LateReason reason = LateReason::none;
    std::optional<Error> error;
};

}  // namespace player_parts
using namespace player_parts;

struct Player::Impl {
    enum class Model : std::uint8_t { birth, keyframes, keyframe_stream };

    // ---- fixed at open
    std::unique_ptr<ByteSource> owned_source;
    std::optional<SceneReader> owned_reader;
    SceneReader* reader = nullptr;
    // The reader's front-end, whose playback calls (scene_front_end.hpp) the worker prepares
    // states with.
    SceneFrontEnd* front_end = nullptr;
    ByteSource* source = nullptr;
    PlayerOptions options;
    EvaluateOptions evaluate_options;
    Model model = Model::birth;
    double duration = 0;
    // The segments: the reader's state spans (fourdgs/state_timeline.hpp), tiling the instants
    // the file covers (a segment is a span's key); none on a stream.
    const StateTimeline* states = nullptr;
    // Keyframe-delta: each segment's state chunk, and whether its state is one delta from the
    // segment before's (a forward step) rather than composed whole from its keyframe.
    std::vector<std::size_t> state_chunks;
    std::vector<std::uint8_t> stepped_to;

    // ---- shared: guarded by mu
    mutable std::mutex mu;
    std::condition_variable wake;   // the worker: something to do
    std::condition_variable ready;  // a waiting frame: a state was published
    bool stop = false;
    PlaybackClock clock;
    double last_t = 0;                // the instant the last frame showed
    // What the worker works towards.
    double head_t = 0;
    int head_dir = 1;
    // Where the worker is: the segments it works towards, and whether what it is fetching is
    // still wanted (a seek elsewhere sets `abandon`, which the source's prefetch polls).
    std::vector<std::size_t> working;
    std::atomic<bool> abandon{false};
    bool waiting = false;        // a frame call waits for its state (wait = true)
    double compose_seconds = 0;  // keyframe-delta: how long composing a state takes (a mean)
    double compose_guess = 0;    // the same, the first compose included: what the look-ahead plans for
    // Keyframe-delta, how long the worker takes to have a state ready, each a mean measured with
    // what it waited on the source: a state composed whole (its chain's fetch and the compose),
    // and one step (its delta's fetch and the step). A worker behind the playhead plans with them.
    // The step's is the middle one of the last three steps: a step that waited behind a
    // keyframe's batch on the link is one slow step, not a link that cannot carry the steps.
    double prepare_seconds = 0;
    double step_seconds = 0;
    std::array<double, 3> last_steps{};
    std::size_t steps_timed = 0;
    std::uint64_t composes = 0;
    Phase phase = Phase::idle;
    std::size_t work_pos = kNone;     // the segment (birth: the segment of the chunk) or item
    PlayerStats stats;
    std::optional<Clock::time_point> late_since;
    // gaussian-birth
    std::vector<std::unique_ptr<ChunkSlot>> slots;
    // keyframe-delta
    std::deque<Item> queue;           // prepared, in the order they were made
    std::vector<Item> spare;          // consumed items, kept for their capacity
    std::size_t whole_values = 0;     // the last state composed whole: its position values
    std::size_t shown_pos = kNone;    // the position of the state the render thread holds
    std::uint64_t shown_bytes = 0;    // its size, for stats()
    double stream_floor = 0;          // a stream: the earliest instant it can still show
    bool stream_done = false;         // a stream: its end (or a refusal) was reached

    // ---- the render thread's own
    std::vector<ChunkSlot*> shown;    // birth: the pinned slots of the state shown...
    std::size_t shown_seg = kNone;    // ...and its segment
    GaussianBlock shown_state;        // keyframe-delta: the state shown...
    double shown_t0 = 0, shown_t1 = 0;  // ...and its interval
    bool shown_any = false;
    std::vector<Item> taken;          // items taken from the queue, applied outside the lock
    FrameChanges changes;             // what the previous frame was, for the changed rows

    // ---- the worker's own
    SceneWorkspace work;  // decoding (pool) and composing (keyframes: the state stepped from)
    std::optional<PlaybackPrefetcher> prefetcher;
    double aimed_at = std::numeric_limits<double>::quiet_NaN();

    std::thread worker;

    ~Impl();

    // ---- setup
    Status start(SceneReader& r, ByteSource& s, const PlayerOptions& o);

    // The clock's placing of t (under mu).
    double place(double t) const {
        bool ended = false;
        return clock.place(t, ended);
    }

    // ---- lookups
    std::size_t segment_of(double t) const { return states->find(t); }
    StateSpan segment(std::size_t s) const { return states->span(s); }
    std::size_t segment_count() const { return states->size(); }
    // Keyframe-delta: segment s's state chunk (its chain's last entry).
    std::size_t state_chunk(std::size_t s) const { return state_chunks[s]; }
    // The segments the worker keeps ready, from the one holding `from` (under mu).
    std::vector<std::size_t> wanted_segments(double from) const;
    // The segment after `s` in the direction of play (wrapping when looping), or kNone.
    std::size_t next_segment(std::size_t s) const;
    bool steps_from_previous(std::size_t s) const { return stepped_to[s] != 0; }
    // Keyframe-delta, at open: state_chunks and stepped_to, so that planning ahead (under mu,
    // on every frame) builds no span.
    void note_state_chains();
    // keyframe-delta, forward: `out` extended to the next state composed whole when the
    // playhead reaches it before a compose would end (under mu).
    void reach_next_compose(std::vector<std::size_t>& out, double from) const;
    // Under mu: the head moved, by the clock (`by_clock`) or by a seek or frame_at.
    void retarget(bool by_clock = false);

    // ---- the worker
    void run();
    void work_birth(std::unique_lock<std::mutex>& lock);
    void work_keyframes(std::unique_lock<std::mutex>& lock);
    std::vector<std::size_t> keyframe_targets(std::size_t tail);
    bool steps_catch_up(std::size_t tail, std::size_t p0) const;
    std::size_t keep_leading_items(const std::vector<std::size_t>& wanted, std::size_t tail);
    void work_stream(std::unique_lock<std::mutex>& lock);
    void aim_prefetcher(std::unique_lock<std::mutex>& lock);
    Item take_spare(bool whole);
    void recycle(Item&& item);

    // ---- the render thread
    Status show(double t, bool from_clock, Frame& out, PlayerFrame& info, bool wait);
    Found find_birth(double t);
    Found find_keyframes(double t);
    Found find_stream(double t);
    LateReason why_late(std::size_t pos) const;
    void evaluate_shown(double t, Frame& out);
    void apply_items(std::vector<Item>& items);
    std::vector<ShownBlock> shown_blocks() const;
};

}  // namespace fourdgs
