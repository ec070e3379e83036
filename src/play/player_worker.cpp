// The player's worker thread (player_impl.hpp): prepares the states the next instants need —
// gaussian-birth chunks decoded into slots, keyframe-delta states composed or stepped into items
// — ahead of the playhead, and publishes them under the player's mutex.
#include <algorithm>
#include <utility>

#include "player_impl.hpp"

namespace fourdgs {
namespace {

// A running mean of the last measures, the newest weighing half: it follows a link or a load
// that changes within a few measures. The first measure (mean 0) is taken as it is.
double mean_with(double mean, double measure) { return mean > 0 ? (mean + measure) / 2 : measure; }

}  // namespace

// ---------------------------------------------------------------------------------------------
// The worker.

// The segments the worker keeps ready: the playhead's, then look_ahead more in the direction of
// play (wrapping when looping), then, for keyframe-delta, as far as a state composed whole that
// the playhead would reach while it composes. Random access only.
std::vector<std::size_t> Player::Impl::wanted_segments(double from) const {
    std::vector<std::size_t> out;
    if (segment_count() == 0) return out;
    double t = std::clamp(from, segment(0).t0, before(segment(segment_count() - 1).t1));
    std::size_t s = segment_of(t);
    if (s == kNone) s = t < segment(0).t1 ? 0 : segment_count() - 1;
    for (std::uint32_t k = 0; k <= options.look_ahead && s != kNone; ++k) {
        out.push_back(s);
        s = next_segment(s);
        if (std::find(out.begin(), out.end(), s) != out.end()) break;  // a short loop
    }
    if (model == Model::keyframes) reach_next_compose(out, t);
    return out;
}

std::size_t Player::Impl::next_segment(std::size_t s) const {
    const bool wraps = clock.loop() && segment_count() > 1;
    if (head_dir >= 0) {
        if (s + 1 < segment_count()) return s + 1;
        return wraps ? 0 : kNone;
    }
    if (s > 0) return s - 1;
    return wraps ? segment_count() - 1 : kNone;
}

void Player::Impl::note_state_chains() {
    if (model != Model::keyframes) return;
    state_chunks.resize(segment_count());
    stepped_to.assign(segment_count(), 0);
    for (std::size_t s = 0; s < segment_count(); ++s) {
        const StateSpan span = segment(s);
        const std::vector<std::size_t>& chain = span.chunks;
        state_chunks[s] = chain.empty() ? kNone : chain.back();
        // One delta from segment s - 1's state: the chain's entry before its last is that state.
        stepped_to[s] =
            s > 0 && chain.size() >= 2 && chain[chain.size() - 2] == state_chunks[s - 1];
    }
}

// Played forward, the states after the look-ahead are steps the worker makes in a few
// milliseconds each, except a state composed whole (the next keyframe, a keyframe-referenced
// delta), which takes compose_guess seconds. When one begins before the clock would have moved
// kComposeMargin times that long (at the rate) from `from`, a look-ahead of a few states starts
// it too late and every frame while it composes is late: the worker prepares it now, with the
// steps that lead to it (each holds only the rows it changed). Backward every state is composed
// whole, so the look-ahead alone stays.
//
// The margin is wide because one compose is not like the last: at a million gaussians on two
// shared cores composes took 94 to 172 ms within one run (the mean is the guess), and with a
// margin of 1.5 two runs in ten were late at the first keyframe. Starting earlier costs only the
// steps held meanwhile, each the rows it changed.
constexpr double kComposeMargin = 3.0;

void Player::Impl::reach_next_compose(std::vector<std::size_t>& out, double from) const {
    if (head_dir < 0 || out.empty() || compose_guess <= 0) return;
    const double horizon = compose_guess * kComposeMargin * std::max(std::abs(clock.rate()), 1.0);
    auto distance = [&](std::size_t s) {  // scene time from `from` to segment s, playing on
        const double d = segment(s).t0 - from;
        return d >= 0 ? d : d + duration;
    };
    for (std::size_t s : out)
        if (s != out.front() && !steps_from_previous(s)) return;  // already there
    const std::size_t kept = out.size();
    for (std::size_t s = next_segment(out.back()); s != kNone && distance(s) <= horizon;
         s = next_segment(s)) {
        if (std::find(out.begin(), out.end(), s) != out.end()) break;  // a short loop
        out.push_back(s);
        if (!steps_from_previous(s)) return;  // reached: prepare up to it
    }
    out.resize(kept);  // no whole compose near: steps need no more than the look-ahead
}

void Player::Impl::retarget(bool by_clock) {
    wake.notify_one();
    if (segment_count() == 0) return;
    const double t = std::clamp(head_t, segment(0).t0, before(segment(segment_count() - 1).t1));
    const std::size_t s = segment_of(t);
    // The clock playing forward towards the state the worker prepares ahead of it (a compose
    // aimed where the playhead will be): the playhead still wants it, its fetch goes on. A seek
    // or a frame_at elsewhere does not.
    const bool approaching = by_clock && head_dir > 0 && clock.state() == PlaybackState::playing &&
                             !working.empty() && s < working.front();
    if (!approaching && std::find(working.begin(), working.end(), s) == working.end())
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
// share the link), and only playing forward (it plans forward). Where the worker has skipped
// ahead of the playhead, from the state it skipped to: the states in between are not shown,
// and the window fetched for them gives the link back.
void Player::Impl::aim_prefetcher(std::unique_lock<std::mutex>& lock) {
    (void)lock;  // held: aim() only takes the prefetcher's own lock, briefly
    if (!prefetcher || head_dir < 0) return;
    const double from = working.empty() ? head_t : std::max(head_t, segment(working.front()).t0);
    if (from == aimed_at) return;
    aimed_at = from;
    prefetcher->aim(from);
}

void Player::Impl::work_birth(std::unique_lock<std::mutex>& lock) {
    const std::vector<std::size_t> wanted = wanted_segments(head_t);
    working = wanted;
    abandon.store(false);
    std::vector<std::size_t> needed;
    for (std::size_t s : wanted)
        for (std::size_t c : segment(s).chunks)
            if (std::find(needed.begin(), needed.end(), c) == needed.end()) needed.push_back(c);
    auto slot_of = [this](std::size_t c) -> ChunkSlot* {
        for (auto& s : slots)
            if (s->chunk == c && s->state != ChunkSlot::State::empty) return s.get();
        return nullptr;
    };
    // The first chunk the wanted segments lack, and the segment it is for.
    std::size_t chunk = kNone, for_segment = kNone;
    for (std::size_t s : wanted) {
        for (std::size_t c : segment(s).chunks)
            if (!slot_of(c)) {
                chunk = c;
                for_segment = s;
                break;
            }
        if (chunk != kNone) break;
    }
    if (chunk == kNone || for_segment != wanted.front()) aim_prefetcher(lock);
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
    for (std::size_t c : segment(for_segment).chunks)
        if (c == chunk || !slot_of(c)) fetch.push_back(c);
    phase = Phase::fetching;
    work_pos = for_segment;
    lock.unlock();
    // A failed prefetch is one the decode meets too, and reports.
    if (auto ranges = front_end->entry_ranges(fetch); ranges.ok())
        (void)source->prefetch(*ranges, &abandon);
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
    Status st = front_end->decode_chunks(one, slot->block, work, options.decode_threads);
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
// decoding into it, two to four times a compose) and a step's rows. A whole state takes the
// largest. A step takes the smallest of those that do not hold a whole state's columns, or a new
// item: a step that took the one state-sized spare would hold it in the queue, with the
// look-ahead's other steps, while the next keyframe composes into fresh memory.
Item Player::Impl::take_spare(bool whole) {
    auto size = [](const Item& it) { return it.step.values.position.capacity(); };
    auto by_size = [&](const Item& a, const Item& b) { return size(a) < size(b); };
    auto pick = spare.end();
    if (whole) {
        pick = std::max_element(spare.begin(), spare.end(), by_size);
    } else {
        for (auto it = spare.begin(); it != spare.end(); ++it)
            if ((whole_values == 0 || size(*it) < whole_values) &&
                (pick == spare.end() || size(*it) < size(*pick)))
                pick = it;
    }
    if (pick == spare.end()) return Item{};
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

// Behind the playhead, stepping from `tail` towards p0 catches it only when a step takes less
// than the clock's time to cross a state: each step gains on the clock what is left of it. The
// steps are worth taking when they catch the playhead before a compose aimed ahead of it would be
// ready (prepare_seconds). Over a link that cannot carry the states at the rate, a step waits a
// round trip for its delta, the playhead runs away from every step, and only a state skipped to
// can be on time, as a video player drops the frames it cannot decode in time.
bool Player::Impl::steps_catch_up(std::size_t tail, std::size_t p0) const {
    if (step_seconds <= 0 || prepare_seconds <= 0) return true;  // not measured: step, as before
    const StateSpan at = segment(p0);
    const double clock_per_state = (at.t1 - at.t0) / std::abs(clock.rate());
    const double gain = 1 - step_seconds / clock_per_state;  // states gained on the clock a step
    if (gain <= 0) return false;
    const double steps = static_cast<double>(p0 - tail) / gain;
    return steps * step_seconds <= prepare_seconds;
}

// The states the worker prepares next, in order (under mu): the playhead's and look_ahead more
// (those also become `working`), aimed ahead when playing forward behind the playhead, and
// preceded by the states a forward step walks through from `tail`, the state the next item
// would follow, unless those steps would not catch the playhead.
std::vector<std::size_t> Player::Impl::keyframe_targets(std::size_t tail) {
    std::vector<std::size_t> wanted = wanted_segments(head_t);
    // Playing forward behind the playhead: the state it needs is neither prepared nor a step
    // away, and composing it would end after the playhead has left it. Aim where the playhead
    // will be when a compose is ready (the last ones' time ahead, their fetch included, at the
    // rate), or keep what is already prepared there, rather than chase it.
    const std::size_t p0 = wanted.front();
    const bool forward = clock.state() == PlaybackState::playing && clock.rate() > 0;
    const bool have_p0 = shown_pos == p0 || std::any_of(queue.begin(), queue.end(),
                                                        [p0](const Item& it) {
                                                            return it.pos == p0;
                                                        });
    auto on_chain = [this](std::size_t from, std::size_t to) {
        const std::vector<std::size_t> chain = segment(to).chunks;
        return from != kNone && from < to &&
               std::find(chain.begin(), chain.end(), state_chunk(from)) != chain.end();
    };
    bool skip = false;  // aimed ahead of the playhead: composed there, not stepped to
    // A frame that waits holds the playhead where it is: compose its state, not a later one.
    const double lead = prepare_seconds;
    if (forward && !have_p0 && lead > 0 && !waiting) {
        const bool ahead = !queue.empty() && !queue.front().error && queue.front().pos > p0 &&
                           queue.front().step.whole;
        if (ahead) {
            wanted = wanted_segments(segment(queue.front().pos).t0);
        } else if (!on_chain(tail, p0) || !steps_catch_up(tail, p0)) {
            skip = true;
            wanted = wanted_segments(head_t + lead * clock.rate());
        }
    }
    working = wanted;
    abandon.store(false);
    // Playing forward, when the playhead has run ahead of what is prepared but stays on the
    // chain from it, the states in between are stepped through (one delta each, and the render
    // thread applies each one's rows) rather than the playhead's composed from its keyframe.
    if (head_dir >= 0 && !skip && on_chain(tail, wanted.front()))
        for (std::size_t p = wanted.front(); p-- > tail + 1;) wanted.insert(wanted.begin(), p);
    return wanted;
}

// Keeps the queue items that still lead to `wanted` or go on from it in the direction of play,
// and drops the rest (under mu); returns how many of `wanted` are prepared (wanted[next] is the
// first that is not).
std::size_t Player::Impl::keep_leading_items(const std::vector<std::size_t>& wanted,
                                             std::size_t tail) {
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
        else if (head_dir >= 0 && tail != kNone && wanted.front() == next_segment(tail))
            keep = queue.size();  // it follows what is prepared
        else keep = 0;  // the first state wanted is not on the way (a seek, a turn)
    }
    if (next == 1)
        while (keep < queue.size() && next < wanted.size() && queue[keep].pos == wanted[next])
            ++keep, ++next;
    // Every state wanted is prepared: the items after them that go on in the direction of play
    // are the states the playhead meets next, prepared when the plan reached further (the way
    // to a keyframe, planned with a compose time or a rate that has since come down). Dropping
    // them would leave the workspace on the last of them, so the first one wanted again would be
    // composed whole, and the keyframe after it again.
    if (next == wanted.size())
        while (keep < queue.size() &&
               queue[keep].pos == next_segment(keep > 0 ? queue[keep - 1].pos : shown_pos))
            ++keep;
    while (queue.size() > keep) {
        ++stats.discarded;
        recycle(std::move(queue.back()));
        queue.pop_back();
    }
    return next;
}

void Player::Impl::work_keyframes(std::unique_lock<std::mutex>& lock) {
    // The state the next item would follow; none after a refusal (nothing composes past it).
    const std::size_t tail = queue.empty()        ? shown_pos
                             : queue.back().error ? kNone
                                                  : queue.back().pos;
    const std::vector<std::size_t> wanted = keyframe_targets(tail);
    const std::size_t next = keep_leading_items(wanted, tail);
    const bool blocked = !queue.empty() && queue.back().error;
    if (next >= wanted.size() || blocked) {
        aim_prefetcher(lock);
        phase = Phase::idle;
        work_pos = kNone;
        wake.wait(lock);
        return;
    }
    if (next > 0 || segment(wanted.front()).t0 > head_t) aim_prefetcher(lock);
    const std::size_t pos = wanted[next];
    const std::size_t last = queue.empty() ? shown_pos : queue.back().pos;
    const StateSpan seg = segment(pos);
    // A step when the state before it is the one the worker's workspace holds, going forward:
    // the step from that state reaches this one (from no other does it, the states tiling time).
    bool step = head_dir >= 0 && last != kNone && pos == last + 1;
    if (step) {
        auto following = front_end->next_step(work);
        step = following.ok() && *following && **following == seg.chunks.back();
    }
    Item item = take_spare(!step);
    item.pos = pos;
    item.t0 = seg.t0;
    item.t1 = seg.t1;
    work_pos = pos;
    phase = step ? Phase::decoding : Phase::fetching;
    lock.unlock();
    Status st = ok_status();
    // What a state costs to have ready, its wait on the source included: what a worker behind
    // the playhead plans with (prepare_seconds, step_seconds).
    const auto began = Clock::now();
    auto since_began = [&began] {
        return std::chrono::duration<double>(Clock::now() - began).count();
    };
    if (step) {
        auto stepped = front_end->step_forward(work, item.step);
        if (!stepped.ok()) st = stepped.error();
        else if (!*stepped) step = false;  // (cannot happen: next_step said it would)
        lock.lock();
        if (st.ok() && step) {
            last_steps[steps_timed++ % last_steps.size()] = since_began();
            std::array<double, 3> sorted = last_steps;
            std::sort(sorted.begin(), sorted.begin() + std::min(steps_timed, sorted.size()));
            step_seconds = sorted[std::min(steps_timed, sorted.size()) / 2];
        }
        lock.unlock();
    }
    if (!step && st.ok()) {
        if (auto ranges = front_end->fetch_ranges(seg.t0); ranges.ok())
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
        st = front_end->state_at(seg.t0, item.step.values, work, options.decode_threads, nullptr);
        const double took = std::chrono::duration<double>(Clock::now() - c0).count();
        lock.lock();
        // The first compose also pays for the state's fresh memory: it is not a measure.
        // The look-ahead plans with it anyway, an overestimate being the safe side.
        if (st.ok()) whole_values = item.step.values.position.size();
        if (composes++ > 0) compose_seconds = mean_with(compose_seconds, took);
        compose_guess = compose_seconds > 0 ? compose_seconds : took;
        if (st.ok()) prepare_seconds = mean_with(prepare_seconds, since_began());
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
    BlockInfo info;
    auto more = front_end->next_block(item.step.values, info);
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
        item.t0 = info.record.t0;
        item.t1 = info.record.t1;
        queue.push_back(std::move(item));
    }
    ready.notify_all();
}

}  // namespace fourdgs
