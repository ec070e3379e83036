// The player's clock (fourdgs/playback_clock.hpp): the caller's time mapped to scene time.
#include "fourdgs/playback_clock.hpp"

#include <cmath>
#include <limits>

namespace fourdgs {
namespace {

// The largest instant before `t1`: where a scene that ends at t1 is last shown.
double before(double t1) { return std::nextafter(t1, -std::numeric_limits<double>::infinity()); }

}  // namespace

PlaybackClock::PlaybackClock(double duration, double start, double rate, bool loop, bool playing)
    : duration_(duration),
      state_(playing ? PlaybackState::playing : PlaybackState::paused),
      rate_(rate),
      loop_(loop) {
    bool ended = false;
    anchor_t_ = place(start, ended);
}

double PlaybackClock::place(double t, bool& ended) const {
    ended = false;
    if (!(duration_ > 0)) return 0;
    if (loop_) {
        t = std::fmod(t, duration_);
        if (t < 0) t += duration_;
        return t < duration_ ? t : 0.0;
    }
    if (t >= duration_) {
        ended = true;
        return before(duration_);
    }
    if (t < 0) {
        ended = rate_ < 0;
        return 0;
    }
    return t;
}

double PlaybackClock::at(double now) const {
    if (state_ != PlaybackState::playing || !anchored_) return anchor_t_;
    return anchor_t_ + rate_ * (now - anchor_now_);
}

void PlaybackClock::anchor_here() {
    if (have_last_now_ && anchored_) {
        bool ended = false;
        anchor_t_ = place(at(last_now_), ended);
        anchor_now_ = last_now_;
    }
}

double PlaybackClock::frame(double now) {
    if (!anchored_) {
        anchor_now_ = now;
        anchored_ = true;
    }
    last_now_ = now;
    have_last_now_ = true;
    bool ended = false;
    const double t = place(at(now), ended);
    if (ended && state_ == PlaybackState::playing) {
        state_ = PlaybackState::ended;
        anchor_t_ = t;
    }
    return t;
}

void PlaybackClock::frame_at(double t) {
    anchor_t_ = t;
    anchored_ = false;
}

void PlaybackClock::play() {
    if (state_ == PlaybackState::playing) return;
    if (state_ == PlaybackState::ended) {
        bool ended = false;
        anchor_t_ = place(rate_ < 0 ? before(duration_) : 0.0, ended);
    }
    state_ = PlaybackState::playing;
    anchored_ = false;
}

void PlaybackClock::pause() {
    if (state_ != PlaybackState::playing) return;
    anchor_here();
    state_ = PlaybackState::paused;
    anchored_ = false;
}

void PlaybackClock::seek(double t) {
    if (!std::isfinite(t)) return;
    bool ended = false;
    anchor_t_ = place(t, ended);
    anchored_ = false;
    if (state_ == PlaybackState::ended) state_ = PlaybackState::paused;
}

void PlaybackClock::set_rate(double rate) {
    anchor_here();
    rate_ = rate;
}

void PlaybackClock::set_loop(bool loop) {
    anchor_here();
    loop_ = loop;
}

}  // namespace fourdgs
