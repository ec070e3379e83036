// Player (fourdgs/player.hpp): a worker thread that prepares the states the next instants need,
// and a render-thread call that evaluates what is resident.
//
// One mutex guards what the two threads share: the playhead the worker works towards, the
// prepared states (gaussian-birth chunk slots, keyframe-delta items) and their refusals. Neither
// thread holds it while it reads, decodes or evaluates: the worker decodes into a slot or an item
// no one else touches, then publishes it; the render thread takes what it needs under the lock
// (pins the slots, takes the items), lets go, and evaluates.
#include "fourdgs/player.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <iterator>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "read/scene_front_end.hpp"

namespace fourdgs {

std::string_view to_string(LateReason reason) noexcept {
    switch (reason) {
        case LateReason::none: return "none";
        case LateReason::starting: return "starting";
        case LateReason::queued: return "queued";
        case LateReason::fetching: return "fetching";
        case LateReason::decoding: return "decoding";
    }
    return "unknown";
}

std::string_view to_string(PlaybackState state) noexcept {
    switch (state) {
        case PlaybackState::paused: return "paused";
        case PlaybackState::playing: return "playing";
        case PlaybackState::ended: return "ended";
    }
    return "unknown";
}

namespace {

constexpr std::size_t kNone = ~std::size_t{0};
using Clock = std::chrono::steady_clock;

Error invalid_option(std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal::kInvalidOption, std::move(message));
}

Error not_seekable(std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal::kNotSeekable, std::move(message));
}

// The largest instant before `t1`: where a state whose interval ends at t1 is last shown.
double before(double t1) { return std::nextafter(t1, -std::numeric_limits<double>::infinity()); }

template <class T, class A>
std::uint64_t bytes_of(const std::vector<T, A>& v) {
    return v.capacity() * sizeof(T);
}

std::uint64_t bytes_of(const GaussianBlock& b) {
    return bytes_of(b.position) + bytes_of(b.scale) + bytes_of(b.rotation) + bytes_of(b.color) +
           bytes_of(b.motion) + bytes_of(b.mu_t) + bytes_of(b.sigma_t) + bytes_of(b.win_lo) +
           bytes_of(b.win_hi) + bytes_of(b.flags) + bytes_of(b.window_index) + bytes_of(b.sh) +
           bytes_of(b.object_id) + bytes_of(b.source_group) + bytes_of(b.source_index) +
           bytes_of(b.gaussian_id);
}

// An interval of instants over which the state is one: gaussian-birth, the chunks covering each
// of its instants (in index order, as chunks_for gives them); keyframe-delta, one state chunk.
struct Segment {
    double t0 = 0, t1 = 0;
    std::vector<std::size_t> chunks;
    std::size_t entry = kNone;
};

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

// One block of the state shown and the row its first gaussian has in the state (gaussian-birth:
// the chunks one after another, as state_at concatenates them).
struct Shown {
    const GaussianBlock* block = nullptr;
    std::uint32_t first = 0;
};

// The render thread's memory of the previous frame, from which PlayerFrame::changed is told.
// `valid` while the state shown is the one that frame was evaluated from (but for the rows of
// `stepped`): then only the rows of `stepped`, and when the instant moves those of `timed`, can
// differ; a row that becomes visible or not, or a window bound the instant crosses, makes the
// frame whole again.
struct Changes {
    bool valid = false;
    double t = 0;
    const Frame* out = nullptr;         // the Frame it filled, as it left it
    const float* out_center = nullptr;
    std::size_t count = 0;
    std::vector<std::uint32_t> frame_row;  // state row -> its Frame row, kNone when none
    std::vector<std::uint8_t> is_timed;    // state row: its §3 value depends on t
    std::vector<std::uint32_t> timed;      // ...those rows, ascending
    std::vector<float> bounds;             // the distinct finite window bounds, ascending...
    bool many_bounds = false;              // ...unless too many: then windowed rows are timed
    std::vector<std::uint32_t> stepped;    // state rows steps changed since the previous frame
    std::vector<std::uint32_t> rows;       // scratch: the rows re-evaluated
    Frame partial;                         // ...and their evaluation
};

constexpr std::uint32_t kNoRow = 0xFFFFFFFFu;
constexpr std::size_t kMaxBounds = 64;

// Whether gaussian i's §3 value can change with t but for its window (kept apart: few distinct
// bounds are checked for crossings instead): it moves, fades, or has an Object Track.
bool timed_row(const GaussianBlock& b, std::size_t i, const TrackPoses& tracks, bool windowed) {
    const float* m = &b.motion[i * 3];
    if (m[0] != 0.0f || m[1] != 0.0f || m[2] != 0.0f || !std::isinf(b.sigma_t[i])) return true;
    if (windowed && (std::isfinite(b.win_lo[i]) || std::isfinite(b.win_hi[i]))) return true;
    return !b.object_id.empty() && tracks.find(b.object_id[i]) != nullptr;
}

// Row k of `from` over row at of `to` (same SH width), every column.
void copy_frame_row(const Frame& from, std::size_t k, Frame& to, std::size_t at) {
    auto copy = [&](const auto& src, auto& dst, std::size_t per) {
        std::copy_n(src.begin() + static_cast<std::ptrdiff_t>(k * per), per,
                    dst.begin() + static_cast<std::ptrdiff_t>(at * per));
    };
    copy(from.center, to.center, 3);
    copy(from.scale, to.scale, 3);
    copy(from.rotation, to.rotation, 4);
    copy(from.color, to.color, 4);
    copy(from.object_id, to.object_id, 1);
    copy(from.source, to.source, 1);
    copy(from.flags, to.flags, 1);
    const std::size_t sh = 3 * static_cast<std::size_t>(sh_coeffs_per_component(from.sh_degree));
    if (sh > 0) copy(from.sh, to.sh, sh);
}

}  // namespace

struct Player::Impl {
    enum class Model : std::uint8_t { birth, keyframes, keyframe_stream };

    // ---- fixed at open
    std::unique_ptr<ByteSource> owned_source;
    std::optional<SceneReader> owned_reader;
    SceneReader* reader = nullptr;
    // The reader's front-end: each model is played with its reader's own calls.
    SceneFrontEnd* front_end = nullptr;
    ByteSource* source = nullptr;
    PlayerOptions options;
    EvaluateOptions evaluate_options;
    Model model = Model::birth;
    double duration = 0;
    std::vector<Segment> segments;  // random access: tiling the instants the file covers
    std::vector<double> starts;     // segments[i].t0, for the lookups

    // ---- shared: guarded by mu
    mutable std::mutex mu;
    std::condition_variable wake;   // the worker: something to do
    std::condition_variable ready;  // a waiting frame: a state was published
    bool stop = false;
    // The clock.
    PlaybackState play_state = PlaybackState::paused;
    double rate = 1;
    bool loop = false;
    double anchor_t = 0;              // the playhead when the clock was last anchored...
    std::optional<double> anchor_now; // ...at this `now` (none: at the next frame's)
    double last_now = 0;
    bool have_last_now = false;
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
    Changes changes;                  // what the previous frame was, for the changed rows

    // ---- the worker's own
    std::vector<DecodeWorkspace> pool;
    KeyframeDeltaWorkspace cursor;
    std::optional<PlaybackPrefetcher> prefetcher;
    double aimed_at = std::numeric_limits<double>::quiet_NaN();

    std::thread worker;

    ~Impl();

    // ---- setup
    Status start(SceneReader& r, ByteSource& s, const PlayerOptions& o);
    void build_segments();

    // ---- the clock (under mu)
    double place(double t, bool& ended) const;
    double clock_at(double now) const;
    void anchor_here();

    // ---- lookups
    std::size_t segment_of(double t) const;
    // The segments the worker keeps ready, from the one holding `from` (under mu).
    std::vector<std::size_t> wanted_segments(double from) const;
    void retarget();                                    // under mu: the head moved

    // ---- the worker
    void run();
    void work_birth(std::unique_lock<std::mutex>& lock);
    void work_keyframes(std::unique_lock<std::mutex>& lock);
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
    std::vector<Shown> shown_blocks() const;
    void track_changes(double t, Frame& out, PlayerFrame& info);
    void remember(const std::vector<Shown>& blocks, const Frame& out, const TrackPoses& tracked);
};

// ---------------------------------------------------------------------------------------------
// Setup.

Status Player::Impl::start(SceneReader& r, ByteSource& s, const PlayerOptions& o) {
    reader = &r;
    front_end = &SceneReaderAccess::front_end(r);
    source = &s;
    options = o;
    if (options.look_ahead == 0) return invalid_option("look_ahead is 0; at least 1 state ahead");
    if (!std::isfinite(options.start)) return invalid_option("start is not finite");
    if (!std::isfinite(options.rate)) return invalid_option("rate is not finite");
    if (options.max_sh_degree < 0 || options.max_sh_degree > 3)
        return invalid_option("max_sh_degree " + std::to_string(options.max_sh_degree) +
                              " is outside 0..3");
    if (!(options.stall_timeout_sec >= 0)) return invalid_option("stall_timeout_sec is negative");
    const SceneInfo& scene = r.scene();
    duration = scene.header.duration_sec;
    if (!r.random_access()) {
        if (!r.keyframe_delta())
            return not_seekable(
                "a gaussian-birth file read front to back has no index: any chunk may cover any "
                "instant, so it cannot be played; open it on a random-access source");
        if (options.rate < 0)
            return not_seekable("a stream plays forward only; the rate " +
                                detail::fmt(options.rate) + " is negative");
        model = Model::keyframe_stream;
    } else {
        model = r.keyframe_delta() ? Model::keyframes : Model::birth;
    }
    evaluate_options.with_sh = options.max_sh_degree > 0;
    evaluate_options.max_sh_degree = options.max_sh_degree;
    if (options.object_tracks) evaluate_options.tracks = scene.object_tracks;
    build_segments();
    rate = options.rate;
    loop = options.loop;
    bool ended = false;
    anchor_t = last_t = head_t = place(options.start, ended);
    head_dir = rate < 0 ? -1 : 1;
    play_state = options.playing ? PlaybackState::playing : PlaybackState::paused;
    if (model != Model::keyframe_stream && options.prefetch) {
        if (model == Model::birth)
            prefetcher.emplace(*front_end->birth_reader(), s, options.prefetch_options);
        else
            prefetcher.emplace(*front_end->keyframe_reader(), s, options.prefetch_options);
    }
    worker = std::thread([this] { run(); });
    return ok_status();
}

void Player::Impl::build_segments() {
    const std::vector<ChunkIndex>& index = reader->scene().index;
    if (model == Model::keyframes) {
        const KeyframeDeltaReader& kd = *front_end->keyframe_reader();
        for (std::size_t entry : kd.timeline().by_time())
            segments.push_back(Segment{index[entry].t0, index[entry].t1, {}, entry});
    } else if (model == Model::birth) {
        // Every interval bound splits the timeline; between two bounds the chunks covering an
        // instant do not change, so each piece's set is chunks_for of any instant in it.
        std::vector<double> bounds{0.0, duration};
        for (const ChunkIndex& e : index)
            for (double b : {e.t0, e.t1})
                if (!std::isnan(b)) bounds.push_back(b);
        std::sort(bounds.begin(), bounds.end());
        bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
        for (std::size_t i = 0; i + 1 < bounds.size(); ++i)
            segments.push_back(Segment{bounds[i], bounds[i + 1], {}, kNone});
        for (std::size_t entry = 0; entry < index.size(); ++entry) {
            const ChunkIndex& e = index[entry];
            if (std::isnan(e.t0) || std::isnan(e.t1)) continue;  // covers no instant
            const auto lo = std::lower_bound(bounds.begin(), bounds.end(), e.t0) - bounds.begin();
            const auto hi = std::lower_bound(bounds.begin(), bounds.end(), e.t1) - bounds.begin();
            for (auto i = lo; i < hi; ++i) segments[static_cast<std::size_t>(i)].chunks.push_back(entry);
        }
    }
    for (const Segment& s : segments) starts.push_back(s.t0);
}

std::size_t Player::Impl::segment_of(double t) const {
    const auto it = std::upper_bound(starts.begin(), starts.end(), t);
    if (it == starts.begin()) return kNone;
    const std::size_t i = static_cast<std::size_t>(it - starts.begin()) - 1;
    return t < segments[i].t1 ? i : kNone;
}

// ---------------------------------------------------------------------------------------------
// The clock.

double Player::Impl::place(double t, bool& ended) const {
    ended = false;
    if (!(duration > 0)) return 0;
    if (loop) {
        t = std::fmod(t, duration);
        if (t < 0) t += duration;
        return t < duration ? t : 0.0;
    }
    if (t >= duration) {
        ended = true;
        return before(duration);
    }
    if (t < 0) {
        ended = rate < 0;
        return 0;
    }
    return t;
}

double Player::Impl::clock_at(double now) const {
    if (play_state != PlaybackState::playing || !anchor_now) return anchor_t;
    return anchor_t + rate * (now - *anchor_now);
}

// Re-anchors the clock at the last frame shown (its instant, its `now`).
void Player::Impl::anchor_here() {
    if (have_last_now && anchor_now) {
        bool ended = false;
        anchor_t = place(clock_at(last_now), ended);
        anchor_now = last_now;
    }
}

// ---------------------------------------------------------------------------------------------
// The worker.

// The segments the worker keeps ready: the playhead's, then look_ahead more in the direction of
// play (wrapping when looping). Random access only.
std::vector<std::size_t> Player::Impl::wanted_segments(double from) const {
    std::vector<std::size_t> out;
    if (segments.empty()) return out;
    double t = std::clamp(from, segments.front().t0, before(segments.back().t1));
    std::size_t s = segment_of(t);
    if (s == kNone) s = t < segments.front().t1 ? 0 : segments.size() - 1;
    for (std::uint32_t k = 0; k <= options.look_ahead; ++k) {
        out.push_back(s);
        if (head_dir >= 0) {
            if (s + 1 < segments.size()) ++s;
            else if (loop && segments.size() > 1) s = 0;
            else break;
        } else {
            if (s > 0) --s;
            else if (loop && segments.size() > 1) s = segments.size() - 1;
            else break;
        }
        if (std::find(out.begin(), out.end(), s) != out.end()) break;  // a short loop
    }
    return out;
}

void Player::Impl::retarget() {
    wake.notify_one();
    if (segments.empty()) return;
    const double t = std::clamp(head_t, segments.front().t0, before(segments.back().t1));
    if (std::find(working.begin(), working.end(), segment_of(t)) == working.end())
        abandon.store(true);
}

void Player::Impl::run() {
    std::unique_lock lock(mu);
    while (!stop) {
        switch (model) {
            case Model::birth: work_birth(lock); break;
            case Model::keyframes: work_keyframes(lock); break;
            case Model::keyframe_stream: work_stream(lock); break;
        }
    }
}

// Over a remote source, the prefetcher fetches the instants after the playhead while the worker
// decodes; aimed when the playhead's own state is resident (so the first state's bytes do not
// share the link), and only playing forward (it plans forward).
void Player::Impl::aim_prefetcher(std::unique_lock<std::mutex>& lock) {
    (void)lock;  // held: aim() only takes the prefetcher's own lock, briefly
    if (!prefetcher || head_dir < 0 || head_t == aimed_at) return;
    aimed_at = head_t;
    prefetcher->aim(head_t);
}

void Player::Impl::work_birth(std::unique_lock<std::mutex>& lock) {
    const std::vector<std::size_t> wanted = wanted_segments(head_t);
    working = wanted;
    abandon.store(false);
    std::vector<std::size_t> needed;
    for (std::size_t s : wanted)
        for (std::size_t c : segments[s].chunks)
            if (std::find(needed.begin(), needed.end(), c) == needed.end()) needed.push_back(c);
    auto slot_of = [this](std::size_t c) -> ChunkSlot* {
        for (auto& s : slots)
            if (s->chunk == c && s->state != ChunkSlot::State::empty) return s.get();
        return nullptr;
    };
    // The first chunk the wanted segments lack, and the segment it is for.
    std::size_t chunk = kNone, segment = kNone;
    for (std::size_t s : wanted) {
        for (std::size_t c : segments[s].chunks)
            if (!slot_of(c)) {
                chunk = c;
                segment = s;
                break;
            }
        if (chunk != kNone) break;
    }
    if (chunk == kNone || segment != wanted.front()) aim_prefetcher(lock);
    if (chunk == kNone) {
        phase = Phase::idle;
        work_pos = kNone;
        wake.wait(lock);
        return;
    }
    // A slot no state wanted or shown uses (its memory is reused), else a new one.
    ChunkSlot* slot = nullptr;
    for (auto& s : slots)
        if (s->pins == 0 && s->state != ChunkSlot::State::decoding &&
            (s->chunk == kNone ||
             std::find(needed.begin(), needed.end(), s->chunk) == needed.end())) {
            slot = s.get();
            break;
        }
    if (!slot) slot = slots.emplace_back(std::make_unique<ChunkSlot>()).get();
    slot->chunk = chunk;
    slot->state = ChunkSlot::State::decoding;
    slot->error.reset();
    // The segment's other missing chunks are fetched with this one: one round trip remotely.
    std::vector<std::size_t> fetch;
    for (std::size_t c : segments[segment].chunks)
        if (c == chunk || !slot_of(c)) fetch.push_back(c);
    phase = Phase::fetching;
    work_pos = segment;
    lock.unlock();
    const IndexedReader& indexed = *front_end->birth_reader();
    const std::vector<ByteRange> ranges = indexed.fetch_ranges(fetch);
    // A failed prefetch is one the decode meets too, and reports.
    (void)source->prefetch(ranges, &abandon);
    lock.lock();
    if (abandon.load()) {  // the playhead went elsewhere: the slot is free again
        slot->state = ChunkSlot::State::empty;
        slot->chunk = kNone;
        phase = Phase::idle;
        return;
    }
    phase = Phase::decoding;
    lock.unlock();
    const std::size_t one[] = {chunk};
    Status st = indexed.decode_chunks(one, slot->block, pool, options.decode_threads);
    const std::uint64_t held = bytes_of(slot->block);
    lock.lock();
    slot->bytes = held;
    if (st.ok()) {
        slot->state = ChunkSlot::State::ready;
    } else {
        slot->state = ChunkSlot::State::failed;
        slot->error = st.error();
    }
    ++stats.chunks_decoded;
    phase = Phase::idle;
    ready.notify_all();
}

// Items are kept for their capacity: a whole state's columns (fresh memory costs more than
// decoding into it) and a step's rows. A whole state takes the largest, a step the smallest.
Item Player::Impl::take_spare(bool whole) {
    if (spare.empty()) return Item{};
    auto size = [](const Item& it) { return it.step.values.position.capacity(); };
    auto pick = whole ? std::max_element(spare.begin(), spare.end(),
                                         [&](const Item& a, const Item& b) {
                                             return size(a) < size(b);
                                         })
                      : std::min_element(spare.begin(), spare.end(),
                                         [&](const Item& a, const Item& b) {
                                             return size(a) < size(b);
                                         });
    Item it = std::move(*pick);
    spare.erase(pick);
    it.error.reset();
    return it;
}

void Player::Impl::recycle(Item&& item) {
    // As many as a full look-ahead uses; past that the smallest goes.
    spare.push_back(std::move(item));
    if (spare.size() > options.look_ahead + 1) {
        auto smallest = std::min_element(spare.begin(), spare.end(), [](const Item& a,
                                                                        const Item& b) {
            return a.step.values.position.capacity() < b.step.values.position.capacity();
        });
        spare.erase(smallest);
    }
}

void Player::Impl::work_keyframes(std::unique_lock<std::mutex>& lock) {
    std::vector<std::size_t> wanted = wanted_segments(head_t);
    const KeyframeDeltaReader& kd = *front_end->keyframe_reader();
    // The state the next item would follow; none after a refusal (nothing composes past it).
    const std::size_t tail = queue.empty()        ? shown_pos
                             : queue.back().error ? kNone
                                                  : queue.back().pos;
    // Playing forward behind the playhead: the state it needs is neither prepared nor a step
    // away, and composing it would end after the playhead has left it. Aim where the playhead
    // will be when a compose ends (the last one's time ahead, at the rate), or keep what is
    // already prepared there, rather than chase it.
    const std::size_t p0 = wanted.front();
    const bool forward = play_state == PlaybackState::playing && rate > 0;
    const bool have_p0 = shown_pos == p0 || std::any_of(queue.begin(), queue.end(),
                                                        [p0](const Item& it) {
                                                            return it.pos == p0;
                                                        });
    // A frame that waits holds the playhead where it is: compose its state, not a later one.
    if (forward && !have_p0 && compose_seconds > 0 && !waiting) {
        const bool ahead = !queue.empty() && !queue.front().error && queue.front().pos > p0 &&
                           queue.front().step.whole;
        const std::vector<std::size_t>& chain = kd.timeline().chain_of(segments[p0].entry);
        const bool steps_reach = tail != kNone && tail < p0 &&
                                 std::find(chain.begin(), chain.end(), segments[tail].entry) !=
                                     chain.end();
        if (ahead)
            wanted = wanted_segments(segments[queue.front().pos].t0);
        else if (!steps_reach)
            wanted = wanted_segments(head_t + compose_seconds * rate);
    }
    working = wanted;
    abandon.store(false);
    // Playing forward, when the playhead has run ahead of what is prepared but stays on the
    // chain from it, the states in between are stepped through (one delta each, and the render
    // thread applies each one's rows) rather than the playhead's composed from its keyframe.
    if (head_dir >= 0 && tail != kNone && tail < wanted.front()) {
        const std::vector<std::size_t>& chain =
            kd.timeline().chain_of(segments[wanted.front()].entry);
        if (std::find(chain.begin(), chain.end(), segments[tail].entry) != chain.end())
            for (std::size_t p = wanted.front(); p-- > tail + 1;) wanted.insert(wanted.begin(), p);
    }
    // Keep what still leads to the wanted states: the items up to the first one wanted (the
    // render thread walks through them to it), then those that follow in the wanted order;
    // drop the rest. A refusal is always last: nothing composes past it.
    std::size_t keep = 0;  // queue items kept
    std::size_t next = 0;  // wanted[next] is the first not prepared
    if (shown_pos == wanted.front()) {
        next = 1;
    } else {
        while (keep < queue.size() && queue[keep].pos != wanted.front()) ++keep;
        if (keep < queue.size()) next = 1, ++keep;
        else if (head_dir >= 0 && tail != kNone && wanted.front() == tail + 1)
            keep = queue.size();  // it follows what is prepared
        else keep = 0;  // the first state wanted is not on the way (a seek, a turn)
    }
    if (next == 1)
        while (keep < queue.size() && next < wanted.size() && queue[keep].pos == wanted[next])
            ++keep, ++next;
    while (queue.size() > keep) {
        ++stats.discarded;
        recycle(std::move(queue.back()));
        queue.pop_back();
    }
    const bool blocked = !queue.empty() && queue.back().error;
    if (next >= wanted.size() || blocked) {
        aim_prefetcher(lock);
        phase = Phase::idle;
        work_pos = kNone;
        wake.wait(lock);
        return;
    }
    if (next > 0) aim_prefetcher(lock);
    const std::size_t pos = wanted[next];
    const std::size_t last = queue.empty() ? shown_pos : queue.back().pos;
    const Segment& seg = segments[pos];
    // A step when the state before it is the one the worker's workspace holds, going forward.
    bool step = head_dir >= 0 && last != kNone && pos == last + 1 &&
                cursor.composed_entry == segments[last].entry;
    if (step) {
        auto following = kd.next_step(cursor);
        step = following.ok() && *following && **following == seg.entry;
    }
    Item item = take_spare(!step);
    item.pos = pos;
    item.t0 = seg.t0;
    item.t1 = seg.t1;
    work_pos = pos;
    phase = step ? Phase::decoding : Phase::fetching;
    lock.unlock();
    Status st = ok_status();
    if (step) {
        auto stepped = kd.step_forward(cursor, item.step);
        if (!stepped.ok()) st = stepped.error();
        else if (!*stepped) step = false;  // (cannot happen: next_step said it would)
    }
    if (!step && st.ok()) {
        if (auto ranges = kd.fetch_ranges(seg.t0); ranges.ok())
            (void)source->prefetch(*ranges, &abandon);
        lock.lock();
        if (abandon.load()) {  // the playhead went elsewhere: compose what it wants instead
            recycle(std::move(item));
            phase = Phase::idle;
            work_pos = kNone;
            return;
        }
        phase = Phase::decoding;
        lock.unlock();
        item.step.whole = true;
        item.step.rows.clear();
        const auto c0 = Clock::now();
        st = kd.state_at(seg.t0, item.step.values, cursor);
        const double took = std::chrono::duration<double>(Clock::now() - c0).count();
        lock.lock();
        // The first compose also pays for the state's fresh memory: it is not a measure.
        if (composes++ > 0) compose_seconds = compose_seconds > 0 ? (compose_seconds + took) / 2
                                                                  : took;
        lock.unlock();
    }
    lock.lock();
    if (!st.ok()) item.error = st.error();
    else if (step) ++stats.steps;
    else ++stats.states_composed;
    queue.push_back(std::move(item));
    phase = Phase::idle;
    work_pos = kNone;
    ready.notify_all();
}

void Player::Impl::work_stream(std::unique_lock<std::mutex>& lock) {
    // States the playhead has passed are not kept; the stream cannot give them again.
    while (!queue.empty() && !queue.front().error && queue.front().t1 <= head_t) {
        stream_floor = queue.front().t1;
        ++stats.discarded;
        recycle(std::move(queue.front()));
        queue.pop_front();
    }
    std::size_t ahead = 0;
    for (const Item& it : queue)
        if (it.t1 > head_t) ++ahead;
    if (stream_done || ahead > options.look_ahead) {
        phase = Phase::idle;
        wake.wait(lock);
        return;
    }
    Item item = take_spare(true);
    item.pos = stats.states_composed;
    phase = Phase::decoding;
    const double from = queue.empty() ? stream_floor : queue.back().t1;
    lock.unlock();
    StateInfo info;
    auto more = front_end->keyframe_stream()->next_state(item.step.values, &info);
    lock.lock();
    phase = Phase::idle;
    if (!more.ok()) {
        item.error = more.error();
        item.t0 = from;
        item.t1 = std::numeric_limits<double>::infinity();
        queue.push_back(std::move(item));
        stream_done = true;
    } else if (!*more) {
        stream_done = true;
        recycle(std::move(item));
    } else {
        ++stats.states_composed;
        item.step.whole = true;
        item.step.rows.clear();
        item.t0 = info.t0;
        item.t1 = info.t1;
        queue.push_back(std::move(item));
    }
    ready.notify_all();
}

// ---------------------------------------------------------------------------------------------
// The render thread.

LateReason Player::Impl::why_late(std::size_t pos) const {
    // Before any state was shown the frame is empty, whatever the worker is doing: `starting`
    // says so (the worker may already be fetching or decoding the first state).
    if (!shown_any) return LateReason::starting;
    if (work_pos == pos && phase == Phase::fetching) return LateReason::fetching;
    if (work_pos == pos && phase == Phase::decoding) return LateReason::decoding;
    return LateReason::queued;
}

Found Player::Impl::find_birth(double t) {
    const std::size_t s = segment_of(t);
    if (s == shown_seg && s != kNone) return {};
    std::vector<ChunkSlot*> found;
    if (s != kNone) {
        for (std::size_t c : segments[s].chunks) {
            ChunkSlot* slot = nullptr;
            for (auto& sl : slots)
                if (sl->chunk == c && (sl->state == ChunkSlot::State::ready ||
                                       sl->state == ChunkSlot::State::failed))
                    slot = sl.get();
            if (!slot) return {Found::Kind::late, why_late(s), std::nullopt};
            if (slot->state == ChunkSlot::State::failed)
                return {Found::Kind::failed, LateReason::none, slot->error};
            found.push_back(slot);
        }
    }
    for (ChunkSlot* sl : found) ++sl->pins;
    for (ChunkSlot* sl : shown) --sl->pins;
    shown = std::move(found);
    shown_seg = s;
    changes.valid = false;  // other chunks: other rows
    shown_any = true;
    if (s != kNone) {
        shown_t0 = segments[s].t0;
        shown_t1 = segments[s].t1;
    } else {
        shown_t0 = shown_t1 = 0;
    }
    wake.notify_one();  // slots it let go of may be reused
    return {};
}

Found Player::Impl::find_keyframes(double t) {
    const std::size_t p = segment_of(t);
    if (p == kNone) {
        // Outside the timeline: the reader's own answer (time-out-of-range).
        auto current = front_end->keyframe_reader()->current(t);
        if (!current.ok()) return {Found::Kind::failed, LateReason::none, current.error()};
        return {Found::Kind::failed, LateReason::none,
                make_error(ErrorKind::invalid_argument, refusal::kTimeOutOfRange,
                           "no state chunk covers t = " + detail::fmt(t))};
    }
    if (p == shown_pos) return {};
    std::size_t j = 0;
    while (j < queue.size() && queue[j].pos != p) ++j;
    if (j == queue.size()) return {Found::Kind::late, why_late(p), std::nullopt};
    if (queue[j].error) return {Found::Kind::failed, LateReason::none, queue[j].error};
    for (std::size_t k = 0; k <= j; ++k) {
        taken.push_back(std::move(queue.front()));
        queue.pop_front();
    }
    shown_pos = p;
    wake.notify_one();
    return {};
}

Found Player::Impl::find_stream(double t) {
    if (!(t >= 0) || !(t < duration))
        return {Found::Kind::failed, LateReason::none,
                make_error(ErrorKind::invalid_argument, refusal::kTimeOutOfRange,
                           "t = " + detail::fmt(t) + " is outside [0, " + detail::fmt(duration) +
                               ")")};
    if (shown_any && shown_t0 <= t && t < shown_t1) return {};
    // What is before the state shown (or the states the worker let pass) is gone.
    const double earliest = shown_any ? shown_t0 : stream_floor;
    if (t < earliest)
        return {Found::Kind::failed, LateReason::none,
                not_seekable("the stream has passed t = " + detail::fmt(t) +
                             "; it is read forward only (the earliest state left starts at " +
                             detail::fmt(earliest) + ")")};
    std::size_t j = 0;
    while (j < queue.size() && !(queue[j].t0 <= t && t < queue[j].t1)) ++j;
    if (j == queue.size()) return {Found::Kind::late, why_late(kNone), std::nullopt};
    if (queue[j].error) return {Found::Kind::failed, LateReason::none, queue[j].error};
    for (std::size_t k = 0; k <= j; ++k) {
        taken.push_back(std::move(queue.front()));
        queue.pop_front();
    }
    shown_pos = taken.back().pos;
    wake.notify_one();
    return {};
}

void Player::Impl::evaluate_shown(double t, Frame& out) {
    const double cutoff = reader->scene().header.cutoff;
    if (model != Model::birth) {
        evaluate(shown_state, t, cutoff, out, evaluate_options);
        return;
    }
    if (shown.empty()) {
        static const GaussianBlock nothing;
        evaluate(nothing, t, cutoff, out, evaluate_options);
        return;
    }
    // The chunks one after another, as state_at concatenates them: each visible gaussian's
    // `source` is its row in that concatenation.
    EvaluateOptions opt = evaluate_options;
    std::uint32_t rows = 0;
    for (ChunkSlot* slot : shown) {
        const std::size_t first = opt.append ? out.count : 0;
        evaluate(slot->block, t, cutoff, out, opt);
        if (rows != 0)
            for (std::size_t k = first; k < out.count; ++k) out.source[k] += rows;
        rows += static_cast<std::uint32_t>(slot->block.count);
        opt.append = true;
    }
}

std::vector<Shown> Player::Impl::shown_blocks() const {
    std::vector<Shown> blocks;
    if (model != Model::birth) {
        blocks.push_back({&shown_state, 0});
        return blocks;
    }
    std::uint32_t first = 0;
    for (const ChunkSlot* slot : shown) {
        blocks.push_back({&slot->block, first});
        first += static_cast<std::uint32_t>(slot->block.count);
    }
    return blocks;
}

// What the next frame compares with, after `out` was evaluated whole: each state row's Frame
// row, the window bounds, and the rows whose value depends on t.
void Player::Impl::remember(const std::vector<Shown>& blocks, const Frame& out,
                            const TrackPoses& tracked) {
    Changes& c = changes;
    std::size_t rows = 0;
    for (const Shown& sh : blocks) rows = sh.first + sh.block->count;
    c.frame_row.assign(rows, kNoRow);
    for (std::size_t k = 0; k < out.count; ++k)
        c.frame_row[out.source[k]] = static_cast<std::uint32_t>(k);
    c.bounds.clear();
    c.many_bounds = false;
    for (const Shown& sh : blocks) {
        const GaussianBlock& b = *sh.block;
        float last_lo = std::numeric_limits<float>::quiet_NaN(), last_hi = last_lo;
        for (std::size_t i = 0; i < b.count && !c.many_bounds; ++i) {
            if (b.win_lo[i] == last_lo && b.win_hi[i] == last_hi) continue;  // the usual
            last_lo = b.win_lo[i];
            last_hi = b.win_hi[i];
            for (float v : {last_lo, last_hi})
                if (std::isfinite(v) &&
                    std::find(c.bounds.begin(), c.bounds.end(), v) == c.bounds.end())
                    c.bounds.push_back(v);
            c.many_bounds = c.bounds.size() > kMaxBounds;
        }
    }
    std::sort(c.bounds.begin(), c.bounds.end());
    c.is_timed.assign(rows, 0);
    c.timed.clear();
    for (const Shown& sh : blocks)
        for (std::size_t i = 0; i < sh.block->count; ++i)
            if (timed_row(*sh.block, i, tracked, c.many_bounds)) {
                c.is_timed[sh.first + i] = 1;
                c.timed.push_back(static_cast<std::uint32_t>(sh.first + i));
            }
    c.valid = out.unrepresentable == 0;
}

// Evaluates the state shown at t into `out` and says which rows changed (PlayerFrame): while
// the state is the previous frame's but for stepped rows, only those and, when t moved, the
// timed rows are evaluated again; anything else evaluates the whole state and starts over.
void Player::Impl::track_changes(double t, Frame& out, PlayerFrame& info) {
    Changes& c = changes;
    const std::vector<Shown> blocks = shown_blocks();
    const double cutoff = reader->scene().header.cutoff;
    const TrackPoses tracked(evaluate_options.tracks, 0);  // for which ids have a track
    info.changed.clear();
    bool partial = c.valid;
    if (partial) {
        std::sort(c.stepped.begin(), c.stepped.end());
        c.stepped.erase(std::unique(c.stepped.begin(), c.stepped.end()), c.stepped.end());
        // A step may start or stop a gaussian's motion (or its track).
        bool regroup = false;
        for (std::uint32_t r : c.stepped) {
            const std::uint8_t now = timed_row(shown_state, r, tracked, c.many_bounds);
            regroup |= now != c.is_timed[r];
            c.is_timed[r] = now;
        }
        if (regroup) {
            c.timed.clear();
            for (std::size_t r = 0; r < c.is_timed.size(); ++r)
                if (c.is_timed[r]) c.timed.push_back(static_cast<std::uint32_t>(r));
        }
        const bool moved = t != c.t;
        if (moved && !c.many_bounds) {
            // A window bound between the two instants changes some gaussian's window test.
            const float a = float_at_or_below(c.t), b = float_at_or_below(t);
            const float lo = std::min(a, b), hi = std::max(a, b);
            const auto it = std::upper_bound(c.bounds.begin(), c.bounds.end(), lo);
            partial = it == c.bounds.end() || !(*it <= hi);
        }
        c.rows.clear();
        if (moved)
            std::set_union(c.stepped.begin(), c.stepped.end(), c.timed.begin(), c.timed.end(),
                           std::back_inserter(c.rows));
        else
            c.rows = c.stepped;
    }
    if (partial) {
        Frame& p = c.partial;
        p.count = p.unrepresentable = 0;
        EvaluateOptions opt = evaluate_options;
        opt.append = true;
        std::vector<std::uint32_t> local;
        for (const Shown& sh : blocks) {
            const auto lo = std::lower_bound(c.rows.begin(), c.rows.end(), sh.first);
            const auto hi = std::lower_bound(lo, c.rows.end(), sh.first + sh.block->count);
            if (lo == hi) continue;
            local.assign(lo, hi);
            for (std::uint32_t& r : local) r -= sh.first;
            const std::size_t at = p.count;
            evaluate_rows(*sh.block, local, t, cutoff, p, opt);
            for (std::size_t k = at; k < p.count; ++k) p.source[k] += sh.first;
        }
        // The same rows visible as before, or the frame's rows are not the previous ones.
        partial = p.unrepresentable == 0;
        for (std::size_t i = 0, k = 0; partial && i < c.rows.size(); ++i) {
            const bool now = k < p.count && p.source[k] == c.rows[i];
            partial = now == (c.frame_row[c.rows[i]] != kNoRow);
            if (now) ++k;
        }
    }
    if (partial) {
        const bool same_out = &out == c.out && out.center.data() == c.out_center &&
                              out.count == c.count;
        for (std::size_t k = 0; k < c.partial.count; ++k) {
            const std::uint32_t row = c.frame_row[c.partial.source[k]];
            info.changed.push_back(row);
            if (same_out) copy_frame_row(c.partial, k, out, row);
        }
        if (same_out) out.time = t;
        else evaluate_shown(t, out);
        info.all_changed = false;
    } else {
        evaluate_shown(t, out);
        info.all_changed = true;
        remember(blocks, out, tracked);
    }
    c.stepped.clear();
    c.t = t;
    c.out = &out;
    c.out_center = out.center.data();
    c.count = out.count;
}

Status Player::Impl::show(double t, bool from_clock, Frame& out, PlayerFrame& info, bool wait) {
    std::unique_lock lock(mu);
    if (from_clock) {
        bool ended = false;
        if (!anchor_now) anchor_now = t;
        last_now = t;
        have_last_now = true;
        t = place(clock_at(t), ended);
        if (ended && play_state == PlaybackState::playing) {
            play_state = PlaybackState::ended;
            anchor_t = t;
        }
    } else {
        anchor_t = t;
        anchor_now.reset();
    }
    // What the worker works towards (clamped: a frame past the end still plays the last state).
    bool ended = false;
    const double head = std::isfinite(t) ? place(t, ended) : head_t;
    const int dir = rate < 0 ? -1 : 1;
    if (head != head_t || dir != head_dir) {
        head_t = head;
        head_dir = dir;
        retarget();
    }
    ++stats.frames;
    Found found;
    // A late state fails the frame once it has been late this long (the stall timeout).
    const bool timed = options.stall_timeout_sec > 0;
    const Clock::time_point deadline =
        (late_since ? *late_since : Clock::now()) +
        std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(timed ? options.stall_timeout_sec : 0.0));
    for (;;) {
        switch (model) {
            case Model::birth: found = find_birth(t); break;
            case Model::keyframes: found = find_keyframes(t); break;
            case Model::keyframe_stream: found = find_stream(t); break;
        }
        if (found.kind != Found::Kind::late || !wait || stop) break;
        if (!waiting) {
            waiting = true;
            wake.notify_one();  // the worker may be aiming past this instant
        }
        if (timed) {
            if (ready.wait_until(lock, deadline) == std::cv_status::timeout) break;
        } else {
            ready.wait(lock);
        }
    }
    waiting = false;
    if (found.kind == Found::Kind::failed) {
        late_since.reset();
        return *found.error;
    }
    const bool late = found.kind == Found::Kind::late;
    if (late) {
        ++stats.late_frames;
        const auto now = Clock::now();
        if (!late_since) late_since = now;
        if (timed && now >= deadline)
            return make_error(
                ErrorKind::io, refusal::kPlaybackStalled,
                "the state for t = " + detail::fmt(t) + " has not arrived in " +
                    detail::fmt(options.stall_timeout_sec) + " s (the worker is " +
                    (phase == Phase::fetching   ? "waiting on the source"
                     : phase == Phase::decoding ? "decoding"
                                                : "idle") +
                    ")");
    } else {
        late_since.reset();
    }
    info.time = t;
    info.late = late;
    info.reason = found.reason;
    info.state = play_state;
    last_t = t;
    // The items taken are applied outside the lock; the state shown is the render thread's own.
    std::vector<Item> apply = std::move(taken);
    taken.clear();
    lock.unlock();

    if (!apply.empty()) {
        // From the last whole state on: each step builds on the state before it.
        std::size_t from = apply.size() - 1;
        while (from > 0 && !apply[from].step.whole) --from;
        for (std::size_t k = from; k < apply.size(); ++k) {
            const StateStep& step = apply[k].step;
            if (step.whole) changes.valid = false;  // rows may have moved
            else changes.stepped.insert(changes.stepped.end(), step.rows.begin(), step.rows.end());
            apply[k].step.apply_to(shown_state);
        }
        shown_t0 = apply.back().t0;
        shown_t1 = apply.back().t1;
        shown_any = true;
    }
    double at = t;
    if (late) at = shown_any && shown_t1 > shown_t0 ? std::clamp(t, shown_t0, before(shown_t1)) : t;
    if (late && !shown_any) {
        out.clear();
        out.time = at;
        changes.valid = false;
        info.all_changed = true;
        info.changed.clear();
    } else {
        track_changes(at, out, info);
    }
    info.shown = at;
    info.state_t0 = shown_any ? shown_t0 : 0;
    info.state_t1 = shown_any ? shown_t1 : 0;
    const SceneInfo& scene = reader->scene();
    info.audio.resize(scene.audio.size());
    for (std::size_t i = 0; i < scene.audio.size(); ++i)
        info.audio[i] = audio_state_at(scene.audio[i].descriptor, t);

    if (!apply.empty()) {
        lock.lock();
        shown_bytes = bytes_of(shown_state);
        for (Item& it : apply) recycle(std::move(it));
        apply.clear();
        taken = std::move(apply);  // keeps the capacity
    }
    return ok_status();
}

// ---------------------------------------------------------------------------------------------
// Player.

Player::Player(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Player::Player(Player&&) noexcept = default;
Player& Player::operator=(Player&&) noexcept = default;

Player::~Player() = default;

Player::Impl::~Impl() {
    {
        std::lock_guard lock(mu);
        stop = true;
    }
    wake.notify_all();
    ready.notify_all();
    if (worker.joinable()) worker.join();
    prefetcher.reset();  // before the reader it plans with
}

Result<Player> Player::open(SceneReader& reader, ByteSource& source,
                            const PlayerOptions& options) {
    auto impl = std::make_unique<Impl>();
    FOURDGS_TRY(impl->start(reader, source, options));
    return Player(std::move(impl));
}

Result<Player> Player::open(std::unique_ptr<ByteSource> source, const PlayerOptions& options,
                            const OpenSceneOptions& open) {
    if (!source)
        return make_error(ErrorKind::invalid_argument, refusal::kInvalidArgument,
                          "the source is null");
    auto impl = std::make_unique<Impl>();
    impl->owned_source = std::move(source);
    FOURDGS_ASSIGN(SceneReader reader, open_scene(*impl->owned_source, open));
    impl->owned_reader.emplace(std::move(reader));
    FOURDGS_TRY(impl->start(*impl->owned_reader, *impl->owned_source, options));
    return Player(std::move(impl));
}

const SceneInfo& Player::scene() const noexcept { return impl_->reader->scene(); }
double Player::duration() const noexcept { return impl_->duration; }

Status Player::frame(double now, Frame& out, PlayerFrame& info, bool wait) {
    if (!std::isfinite(now))
        return make_error(ErrorKind::invalid_argument, refusal::kInvalidArgument,
                          "now is not finite");
    return impl_->show(now, true, out, info, wait);
}

Status Player::frame_at(double t, Frame& out, PlayerFrame& info, bool wait) {
    if (!std::isfinite(t))
        return make_error(ErrorKind::invalid_argument, refusal::kInvalidArgument,
                          "t is not finite");
    return impl_->show(t, false, out, info, wait);
}

void Player::play() {
    std::lock_guard lock(impl_->mu);
    Impl& m = *impl_;
    if (m.play_state == PlaybackState::playing) return;
    if (m.play_state == PlaybackState::ended) {
        bool ended = false;
        m.anchor_t = m.place(m.rate < 0 ? before(m.duration) : 0.0, ended);
    }
    m.play_state = PlaybackState::playing;
    m.anchor_now.reset();
}

void Player::pause() {
    std::lock_guard lock(impl_->mu);
    Impl& m = *impl_;
    if (m.play_state != PlaybackState::playing) return;
    m.anchor_here();
    m.play_state = PlaybackState::paused;
    m.anchor_now.reset();
}

void Player::seek(double t) {
    std::lock_guard lock(impl_->mu);
    Impl& m = *impl_;
    if (!std::isfinite(t)) return;
    bool ended = false;
    m.anchor_t = m.place(t, ended);
    m.anchor_now.reset();
    if (m.play_state == PlaybackState::ended) m.play_state = PlaybackState::paused;
    m.late_since.reset();
    // Refusals are kept per state until a seek: try them again.
    for (auto& s : m.slots)
        if (s->state == ChunkSlot::State::failed && s->pins == 0) {
            s->state = ChunkSlot::State::empty;
            s->chunk = kNone;
        }
    if (m.model == Impl::Model::keyframes)
        while (!m.queue.empty() && m.queue.back().error) {
            m.recycle(std::move(m.queue.back()));
            m.queue.pop_back();
        }
    m.head_t = m.anchor_t;
    m.retarget();
}

Status Player::set_rate(double rate) {
    std::lock_guard lock(impl_->mu);
    Impl& m = *impl_;
    if (!std::isfinite(rate)) return invalid_option("rate is not finite");
    if (rate < 0 && m.model == Impl::Model::keyframe_stream)
        return not_seekable("a stream plays forward only; the rate " + detail::fmt(rate) +
                            " is negative");
    m.anchor_here();
    m.rate = rate;
    m.head_dir = rate < 0 ? -1 : 1;
    m.wake.notify_one();
    return ok_status();
}

void Player::set_loop(bool loop) {
    std::lock_guard lock(impl_->mu);
    impl_->anchor_here();
    impl_->loop = loop;
    impl_->wake.notify_one();
}

PlaybackState Player::state() const {
    std::lock_guard lock(impl_->mu);
    return impl_->play_state;
}

double Player::rate() const {
    std::lock_guard lock(impl_->mu);
    return impl_->rate;
}

bool Player::loop() const {
    std::lock_guard lock(impl_->mu);
    return impl_->loop;
}

double Player::position() const {
    std::lock_guard lock(impl_->mu);
    return impl_->last_t;
}

PlayerStats Player::stats() const {
    std::lock_guard lock(impl_->mu);
    const Impl& m = *impl_;
    PlayerStats s = m.stats;
    s.resident_bytes = 0;
    for (const auto& slot : m.slots) s.resident_bytes += slot->bytes;
    s.resident_bytes += m.shown_bytes;
    for (const Item& it : m.queue) s.resident_bytes += bytes_of(it.step.values);
    return s;
}

}  // namespace fourdgs
