// playback.cpp — the playhead over the reader API: state_at + evaluate on the calling thread,
// the decoded state kept while the playhead stays in the same chunks.
#include "playback.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

namespace viewer {

struct Playback::Impl {
    std::unique_ptr<fourdgs::ByteSource> source;
    std::optional<fourdgs::SceneReader> reader;
    fourdgs::SceneWorkspace workspace;
    fourdgs::GaussianBlock block;
    std::vector<std::size_t> resident;  // the chunks `block` holds (random access)
    bool have_block = false;

    // The clock: scene time anchor_t at display time anchor_display.
    double anchor_t = 0, anchor_display = 0, last_display = 0, rate = 1;
    bool loop = true, paused = false;
    std::size_t late = 0;

    double duration() const { return reader->scene().header.duration_sec; }

    // t wrapped or clamped into [0, duration).
    double wrap(double t) const {
        const double d = duration();
        if (!(d > 0)) return 0;
        if (loop) {
            t = std::fmod(t, d);
            return t < 0 ? t + d : t;
        }
        return std::clamp(t, 0.0, std::nextafter(d, 0.0));
    }
    double now() const {
        return wrap(paused ? anchor_t : anchor_t + (last_display - anchor_display) * rate);
    }
    void anchor(double t) {
        anchor_t = wrap(t);
        anchor_display = last_display;
    }

    // Makes `block` the state at t; `decoded` says whether that needed a decode.
    fourdgs::Status load(double t, bool& decoded) {
        decoded = false;
        if (reader->random_access()) {
            auto chunks = reader->chunks_for(t);
            if (!chunks.ok()) return chunks.error();
            if (have_block && *chunks == resident) return fourdgs::ok_status();
            resident = std::move(*chunks);
        }
        decoded = true;
        have_block = false;
        FOURDGS_TRY(reader->state_at(t, block, workspace));
        have_block = true;
        return fourdgs::ok_status();
    }
    void evaluate(double t, fourdgs::Frame& out) const {
        fourdgs::EvaluateOptions eo;
        eo.tracks = reader->scene().object_tracks;
        fourdgs::evaluate(block, t, reader->scene().header.cutoff, out, eo);
    }
};

Playback::Playback(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Playback::~Playback() = default;

fourdgs::Result<std::unique_ptr<Playback>> Playback::open(const std::string& path_or_url,
                                                         const fourdgs::OpenSceneOptions& options,
                                                         std::size_t) {
    auto impl = std::make_unique<Impl>();
    FOURDGS_ASSIGN(impl->source, fourdgs::open_source(path_or_url));
    FOURDGS_ASSIGN(fourdgs::SceneReader reader, fourdgs::open_scene(*impl->source, options));
    impl->reader.emplace(std::move(reader));
    return std::unique_ptr<Playback>(new Playback(std::move(impl)));
}

const fourdgs::SceneInfo& Playback::scene() const { return impl_->reader->scene(); }

fourdgs::Status Playback::frame_at_blocking(double t, fourdgs::Frame& out) {
    bool decoded = false;
    FOURDGS_TRY(impl_->load(t, decoded));
    impl_->evaluate(t, out);
    return fourdgs::ok_status();
}

void Playback::play(double t, double rate, bool loop) {
    impl_->rate = rate;
    impl_->loop = loop;
    impl_->paused = false;
    impl_->last_display = 0;
    impl_->anchor(t);
}

fourdgs::Status Playback::frame_for_display(double display_seconds, fourdgs::Frame& out,
                                            FrameReport& report) {
    impl_->last_display = display_seconds;
    const double t = impl_->now();
    bool decoded = false;
    FOURDGS_TRY(impl_->load(t, decoded));
    report.t = t;
    report.late = decoded;
    report.late_reason = decoded ? "decoded on the render thread" : "";
    impl_->late += decoded;
    impl_->evaluate(t, out);
    return fourdgs::ok_status();
}

void Playback::seek(double t) { impl_->anchor(t); }
void Playback::toggle_pause() {
    impl_->anchor(impl_->now());
    impl_->paused = !impl_->paused;
}
void Playback::set_rate(double rate) {
    impl_->anchor(impl_->now());
    impl_->rate = rate;
}
void Playback::set_loop(bool loop) {
    impl_->anchor(impl_->now());
    impl_->loop = loop;
}
double Playback::time() const { return impl_->now(); }
double Playback::rate() const { return impl_->rate; }
bool Playback::loop() const { return impl_->loop; }
bool Playback::paused() const { return impl_->paused; }
std::size_t Playback::late_frames() const { return impl_->late; }

}  // namespace viewer
