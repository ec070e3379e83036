// playback.hpp — the viewer's playhead: a scene, a clock (play, pause, seek, rate, loop) and
// the Frame for each display tick.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <fourdgs/fourdgs.hpp>

namespace viewer {

// What frame_for_display says about the frame it gave.
struct FrameReport {
    double t = 0;             // the scene time of the frame
    bool late = false;        // its data was not resident when the display asked for it
    std::string late_reason;  // why, when late
};

class Playback {
public:
    // Opens a path or an http(s):// URL. Refusals: those of open_source and open_scene.
    static fourdgs::Result<std::unique_ptr<Playback>> open(const std::string& path_or_url,
                                                           const fourdgs::OpenSceneOptions& options,
                                                           std::size_t look_ahead);
    ~Playback();

    const fourdgs::SceneInfo& scene() const;

    // The frame at scene time t, waiting for its data (the first frame, a screenshot).
    fourdgs::Status frame_at_blocking(double t, fourdgs::Frame& out);

    // Starts the clock: display time 0 shows scene time t, then rate seconds of scene per
    // second of display, wrapping at the end with `loop`, else stopping there.
    void play(double t, double rate, bool loop);
    // The frame for the display tick at `display_seconds` (the caller's clock, from play()).
    fourdgs::Status frame_for_display(double display_seconds, fourdgs::Frame& out,
                                      FrameReport& report);

    void seek(double t);
    void toggle_pause();
    void set_rate(double rate);
    void set_loop(bool loop);
    double time() const;
    double rate() const;
    bool loop() const;
    bool paused() const;
    std::size_t late_frames() const;

private:
    struct Impl;
    explicit Playback(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace viewer
