// Player (fourdgs/player.hpp): a worker thread that prepares the states the next instants need,
// and a render-thread call that evaluates what is resident.
//
// One mutex guards what the two threads share: the playhead the worker works towards, the
// prepared states (gaussian-birth chunk slots, keyframe-delta items) and their refusals. Neither
// thread holds it while it reads, decodes or evaluates: the worker decodes into a slot or an item
// no one else touches, then publishes it; the render thread takes what it needs under the lock
// (pins the slots, takes the items), lets go, and evaluates.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "player_impl.hpp"

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

// ---------------------------------------------------------------------------------------------
// Setup.

Status Player::Impl::start(SceneReader& r, ByteSource& s, const PlayerOptions& o) {
    reader = &r;
    front_end = r.front_end_.get();  // Player is SceneReader's friend (open_scene.hpp)
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
    // The worker's schedule is how the front-end's states are played (scene_front_end.hpp).
    FOURDGS_ASSIGN(const SceneFrontEnd::Playback playback, front_end->playback());
    switch (playback) {
        case SceneFrontEnd::Playback::chunks: model = Model::birth; break;
        case SceneFrontEnd::Playback::steps: model = Model::keyframes; break;
        case SceneFrontEnd::Playback::stream: model = Model::keyframe_stream; break;
    }
    if (model == Model::keyframe_stream && options.rate < 0)
        return not_seekable("a stream plays forward only; the rate " + detail::fmt(options.rate) +
                            " is negative");
    evaluate_options.with_sh = options.max_sh_degree > 0;
    evaluate_options.max_sh_degree = options.max_sh_degree;
    if (options.object_tracks) evaluate_options.tracks = scene.object_tracks;
    static const StateTimeline no_states;
    states = r.states() ? r.states() : &no_states;
    note_state_chains();
    clock = PlaybackClock(duration, options.start, options.rate, options.loop, options.playing);
    last_t = head_t = clock.anchor();
    head_dir = options.rate < 0 ? -1 : 1;
    if (model != Model::keyframe_stream && options.prefetch)
        prefetcher.emplace(
            s, [fe = front_end](double t) { return fe->fetch_ranges(t); }, duration,
            options.prefetch_options);
    worker = std::thread([this] { run(); });
    return ok_status();
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
        for (std::size_t c : segment(s).chunks) {
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
    changes.forget();  // other chunks: other rows
    shown_any = true;
    if (s != kNone) {
        shown_t0 = segment(s).t0;
        shown_t1 = segment(s).t1;
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
        auto chain = front_end->chunks_for(t);
        if (!chain.ok()) return {Found::Kind::failed, LateReason::none, chain.error()};
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

std::vector<ShownBlock> Player::Impl::shown_blocks() const {
    std::vector<ShownBlock> blocks;
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

// The keyframe-delta items taken from the queue, applied to the state shown (the render
// thread's own: outside the lock), from the last whole state on: each step builds on the state
// before it, and says which rows it changed.
void Player::Impl::apply_items(std::vector<Item>& items) {
    std::size_t from = items.size() - 1;
    while (from > 0 && !items[from].step.whole) --from;
    for (std::size_t k = from; k < items.size(); ++k) {
        StateStep& step = items[k].step;
        if (step.whole) changes.forget();  // rows may have moved
        else changes.stepped(step.rows, step.attributes[attr::motion] ||
                                            step.attributes[attr::object_id]);
        step.apply_to(shown_state);
    }
    shown_t0 = items.back().t0;
    shown_t1 = items.back().t1;
    shown_any = true;
}

Status Player::Impl::show(double t, bool from_clock, Frame& out, PlayerFrame& info, bool wait) {
    std::unique_lock lock(mu);
    if (from_clock) t = clock.frame(t);
    else clock.frame_at(t);
    // What the worker works towards (clamped: a frame past the end still plays the last state).
    const double head = std::isfinite(t) ? place(t) : head_t;
    const int dir = clock.rate() < 0 ? -1 : 1;
    if (head != head_t || dir != head_dir) {
        head_t = head;
        head_dir = dir;
        retarget(from_clock);
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
    info.state = clock.state();
    last_t = t;
    // The items taken are applied outside the lock; the state shown is the render thread's own.
    std::vector<Item> apply = std::move(taken);
    taken.clear();
    lock.unlock();

    if (!apply.empty()) apply_items(apply);
    double at = t;
    if (late) at = shown_any && shown_t1 > shown_t0 ? std::clamp(t, shown_t0, before(shown_t1)) : t;
    if (late && !shown_any) {
        out.clear();
        out.time = at;
        changes.forget();
        info.all_changed = true;
        info.changed.clear();
    } else {
        changes.track(shown_blocks(), at, reader->scene().header.cutoff, evaluate_options, out,
                      info.all_changed, info.changed, [this](double when, Frame& frame) { evaluate_shown(when, frame); });
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
    m.clock.play();
}

void Player::pause() {
    std::lock_guard lock(impl_->mu);
    Impl& m = *impl_;
    m.clock.pause();
}

void Player::seek(double t) {
    std::lock_guard lock(impl_->mu);
    Impl& m = *impl_;
    if (!std::isfinite(t)) return;
    m.clock.seek(t);
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
    m.head_t = m.clock.anchor();
    m.retarget();
}

Status Player::set_rate(double rate) {
    std::lock_guard lock(impl_->mu);
    Impl& m = *impl_;
    if (!std::isfinite(rate)) return invalid_option("rate is not finite");
    if (rate < 0 && m.model == Impl::Model::keyframe_stream)
        return not_seekable("a stream plays forward only; the rate " + detail::fmt(rate) +
                            " is negative");
    m.clock.set_rate(rate);
    m.head_dir = rate < 0 ? -1 : 1;
    m.wake.notify_one();
    return ok_status();
}

void Player::set_loop(bool loop) {
    std::lock_guard lock(impl_->mu);
    impl_->clock.set_loop(loop);
    impl_->wake.notify_one();
}

PlaybackState Player::state() const {
    std::lock_guard lock(impl_->mu);
    return impl_->clock.state();
}

double Player::rate() const {
    std::lock_guard lock(impl_->mu);
    return impl_->clock.rate();
}

bool Player::loop() const {
    std::lock_guard lock(impl_->mu);
    return impl_->clock.loop();
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
