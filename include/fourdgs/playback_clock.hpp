// fourdgs/playback_clock.hpp — the player's clock as a value: the caller's time `now` (seconds,
// any origin: vsync, an audio clock, a fixed step) mapped to scene time,
//   t = anchor + rate × (now − anchor_now),
// wrapped into [0, duration) when looping, clamped at the ends otherwise, where playback ends
// (going forward at the last instant before the duration, going backward at 0). The controls act
// from the last frame shown: after play() the next frame shows where playback paused and motion
// starts from that frame's `now`; set_rate() and set_loop() continue from the last frame's
// instant. Player (player.hpp) keeps one; the C ABI exports it (fourdgs_playback_clock_*) so the
// npm package's player runs the same clock.
//
// Not thread-safe: a value, guarded by whoever holds it.
#pragma once

#include <cstdint>

#include "fourdgs/export.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

enum class PlaybackState : std::uint8_t {
    paused = 0,
    playing = 1,
    ended = 2,  // reached the end (or the start, in reverse) without loop; paused there
};

class PlaybackClock {
public:
    PlaybackClock() = default;
    // The clock of a scene `duration` seconds long, its playhead at `start` (placed: wrapped or
    // clamped), paused or playing.
    PlaybackClock(double duration, double start, double rate, bool loop, bool playing);

    // A frame from the caller's clock: the scene time at `now`. The first frame after an anchor
    // (open, play, seek, a frame_at) takes its `now` as anchor_now. Playing past an end without
    // loop ends playback: state() becomes ended and the playhead holds at that end.
    double frame(double now);
    // A frame at scene time t instead (scrubbing): the playhead moves there, unplaced, and the
    // next frame(now) anchors its `now` to it.
    void frame_at(double t);

    void play();   // from the last frame's instant; from the start (the end, in reverse) when ended
    void pause();  // at the last frame's instant
    void seek(double t);  // the playhead to t (placed); ended becomes paused; non-finite: ignored
    void set_rate(double rate);  // from the last frame's instant (the caller checks it is finite)
    void set_loop(bool loop);    // from the last frame's instant

    // t wrapped into [0, duration) when looping, else clamped to [0, the last instant before the
    // duration]; `ended` says whether the clamp is the end of playback in the clock's direction.
    double place(double t, bool& ended) const;

    PlaybackState state() const noexcept { return state_; }
    double rate() const noexcept { return rate_; }
    bool loop() const noexcept { return loop_; }
    double duration() const noexcept { return duration_; }
    // Where the playhead is anchored: the instant of the last control or of the last frame
    // that ended playback.
    double anchor() const noexcept { return anchor_t_; }

private:
    double at(double now) const;
    void anchor_here();  // re-anchors at the last frame shown (its instant, its `now`)

    double duration_ = 0;
    PlaybackState state_ = PlaybackState::paused;
    double rate_ = 1;
    bool loop_ = false;
    double anchor_t_ = 0;       // the playhead when the clock was last anchored...
    double anchor_now_ = 0;     // ...at this `now`
    bool anchored_ = false;     // (false: at the next frame's `now`)
    double last_now_ = 0;       // the `now` of the last frame(now)
    bool have_last_now_ = false;
};

}  // namespace fourdgs
FOURDGS_PUBLIC_END
