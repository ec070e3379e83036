// fourdgs-viewer — plays a .4dgs scene in real time with 3D gaussian splatting on OpenGL 3.3.
//
//   fourdgs-viewer FILE_OR_URL                         a window: space plays/pauses, ←/→ seek,
//                                                      the bar at the bottom scrubs, drag orbits
//   fourdgs-viewer                                     the same on the bundled showcase scene
//   fourdgs-viewer FILE --at T --screenshot out.png    one frame at T, written as a PNG
//   fourdgs-viewer FILE --play-frames N --report s.json   N display frames at 60 Hz, timed
//
// The picture is `4dgs preview`'s (same camera, same projection, same blending, see
// splat_renderer.hpp) so that a screenshot can be checked against it; --width, --height, --at
// and the view options mean what they mean there. Exit status as `4dgs`: 0 success, 1 the file
// was refused, 3 the viewer could not run (no display, no OpenGL 3.3, a network failure).
#include <epoxy/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fourdgs/fourdgs.hpp>
#include <fourdgs/tools/preview.hpp>

#include "depth_order.hpp"
#include "output.hpp"  // the 4dgs tool's JSON writer and PNG writer (src/cli/output.hpp)
#include "splat_renderer.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using fourdgs::CameraView;
using fourdgs::Vec3;

constexpr int kRefused = 1, kCannotRun = 3;
constexpr double kDisplayHz = 60.0;
constexpr int kScrubberHeight = 14;  // pixels at the bottom of the window

int refused(const fourdgs::Error& e) {
    std::fprintf(stderr, "fourdgs-viewer: refused: %s\n", e.describe().c_str());
    return e.kind == fourdgs::ErrorKind::io ? kCannotRun : kRefused;
}
int cannot_run(const std::string& message) {
    std::fprintf(stderr, "fourdgs-viewer: %s\n", message.c_str());
    return kCannotRun;
}

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// ---- the camera -----------------------------------------------------------------------------

// An orbit around a target: the user's camera. Yaw about +y, pitch towards +y, kept off the
// poles so preview_camera's world-up +y always gives a right vector.
struct Orbit {
    Vec3 target{};
    double distance = 1, yaw = 0, pitch = 0, fov_y_deg = fourdgs::kDefaultFovYDeg;

    static Orbit around(const CameraView& v) {
        Orbit o;
        o.target = v.target;
        const Vec3 d{v.position[0] - v.target[0], v.position[1] - v.target[1],
                     v.position[2] - v.target[2]};
        o.distance = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        o.yaw = std::atan2(d[0], d[2]);
        o.pitch = std::asin(std::clamp(d[1] / o.distance, -1.0, 1.0));
        o.fov_y_deg = v.fov_y_deg;
        o.clamp_pitch();
        return o;
    }
    void clamp_pitch() { pitch = std::clamp(pitch, -1.5, 1.5); }
    CameraView view() const {
        CameraView v;
        v.target = target;
        v.position = {target[0] + distance * std::cos(pitch) * std::sin(yaw),
                      target[1] + distance * std::sin(pitch),
                      target[2] + distance * std::cos(pitch) * std::cos(yaw)};
        v.fov_y_deg = fov_y_deg;
        return v;
    }
};

// ---- options --------------------------------------------------------------------------------

struct Options {
    std::string file, screenshot, report;
    double at = 0;
    int width = 640, height = 480, play_frames = 0, sh_degree = 3;
    double rate = 1;
    bool loop = true;
    std::vector<double> eye, target, background{0, 0, 0};
    double fov = fourdgs::kDefaultFovYDeg;
    std::string camera = "scene";
    std::uint32_t look_ahead = 2;
};

// The explicit view of --eye/--target/--fov, when given.
std::optional<CameraView> explicit_view(const Options& o) {
    if (o.eye.empty()) return std::nullopt;
    CameraView v;
    v.position = {o.eye[0], o.eye[1], o.eye[2]};
    v.target = {o.target[0], o.target[1], o.target[2]};
    v.fov_y_deg = o.fov;
    return v;
}

// ---- one displayed frame ----------------------------------------------------------------------

struct FrameTimes {
    double frame_call_ms = 0, sort_ms = 0, upload_ms = 0, draw_ms = 0;
};

// Sort, upload, draw: what the viewer does with each Frame the player hands it, with the
// buffers it reuses from frame to frame.
struct FrameDrawer {
    viewer::SplatRenderer& renderer;
    std::array<float, 3> background;
    std::vector<std::uint32_t> order;
    viewer::DepthSortScratch scratch;

    FrameDrawer(viewer::SplatRenderer& r, const Options& o)
        : renderer(r),
          background{static_cast<float>(o.background[0]), static_cast<float>(o.background[1]),
                     static_cast<float>(o.background[2])} {}

    // Draws `frame` through `view` into a width × height target. `finish` waits for the GPU, so
    // that times.draw_ms is its time too (the headless modes; a window's swap paces itself).
    // Returns "" or why nothing could be drawn.
    std::string draw(const fourdgs::Frame& frame, const CameraView& view, int width, int height,
                     bool finish, FrameTimes& times) {
        auto cam = fourdgs::preview_camera(view, width, height);
        if (!cam.ok()) return cam.error().describe();
        auto start = Clock::now();
        viewer::back_to_front(frame, *cam, fourdgs::kPreviewNear, order, scratch);
        times.sort_ms = ms_since(start);
        start = Clock::now();
        std::string error;
        if (!renderer.upload(frame, error)) return error;
        times.upload_ms = ms_since(start);
        start = Clock::now();
        renderer.draw(*cam, order, width, height, background);
        if (finish) glFinish();
        times.draw_ms = ms_since(start);
        return "";
    }
};

// ---- the window -----------------------------------------------------------------------------

struct Window {
    GLFWwindow* handle = nullptr;
    ~Window() {
        if (handle) glfwDestroyWindow(handle);
        glfwTerminate();
    }
};

// A window with a current OpenGL 3.3 core context; hidden for the headless modes (which render
// into the renderer's own target and never show it).
std::string open_window(Window& w, const Options& o, bool visible) {
    glfwSetErrorCallback([](int, const char* text) {
        std::fprintf(stderr, "fourdgs-viewer: GLFW: %s\n", text);
    });
    if (!glfwInit()) return "GLFW cannot start (no display? set DISPLAY, or run under Xvfb)";
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
    w.handle = glfwCreateWindow(o.width, o.height, "fourdgs-viewer", nullptr, nullptr);
    if (!w.handle) return "no OpenGL 3.3 core context on this display";
    glfwMakeContextCurrent(w.handle);
    glfwSwapInterval(1);
    return "";
}

// ---- headless: one screenshot -----------------------------------------------------------------

int screenshot(fourdgs::Player& player, viewer::SplatRenderer& renderer, const Options& o) {
    fourdgs::Frame frame;
    fourdgs::PlayerFrame info;
    if (auto st = player.frame_at(o.at, frame, info, /*wait=*/true); !st.ok())
        return refused(st.error());
    const CameraView view =
        explicit_view(o).value_or(fourdgs::default_view(player.scene(), frame, o.at));
    FrameDrawer drawer(renderer, o);
    FrameTimes times;
    if (auto e = drawer.draw(frame, view, o.width, o.height, true, times); !e.empty())
        return cannot_run(e);
    if (auto e = cli::write_png(o.screenshot, renderer.read_back()); !e.empty())
        return cannot_run(e);
    std::fprintf(stderr, "fourdgs-viewer: %zu gaussians at t = %g s -> %s (%dx%d)\n", frame.count,
                 o.at, o.screenshot.c_str(), o.width, o.height);
    return 0;
}

// ---- headless: N display frames at 60 Hz ------------------------------------------------------

struct Percentiles {
    double p50 = 0, p99 = 0, max = 0;
};
Percentiles percentiles(std::vector<double> v) {
    Percentiles p;
    if (v.empty()) return p;
    std::sort(v.begin(), v.end());
    const auto at = [&](double q) {
        return v[std::min(v.size() - 1, static_cast<std::size_t>(std::ceil(q * v.size())) - 1)];
    };
    p.p50 = at(0.5);
    p.p99 = at(0.99);
    p.max = v.back();
    return p;
}

int play_frames(fourdgs::Player& player, viewer::SplatRenderer& renderer, const Options& o) {
    struct Row {
        double t = 0;
        std::size_t gaussians = 0;
        FrameTimes times;
        double total_ms = 0;
        bool late = false, deadline_missed = false;
        std::string late_reason;
    };
    std::vector<Row> rows(static_cast<std::size_t>(o.play_frames));
    fourdgs::Frame frame;
    FrameDrawer drawer(renderer, o);
    const auto tick = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(1.0 / kDisplayHz));

    // The first frame is the one a player shows before it starts its clock: it waits for its
    // data, and drawing it once compiles what the driver compiles at the first draw.
    fourdgs::PlayerFrame info;
    if (auto st = player.frame_at(o.at, frame, info, /*wait=*/true); !st.ok())
        return refused(st.error());
    {
        const CameraView view =
            explicit_view(o).value_or(fourdgs::default_view(player.scene(), frame, o.at));
        FrameTimes first;
        if (auto e = drawer.draw(frame, view, o.width, o.height, true, first); !e.empty())
            return cannot_run(e);
    }
    // The clock runs from the first display tick's time, 0: frame k shows --at + k / 60 · rate.
    player.play();
    const Clock::time_point start = Clock::now();
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const Clock::time_point due = start + static_cast<int>(k) * tick;
        std::this_thread::sleep_until(due);
        Row& row = rows[k];
        const Clock::time_point begin = Clock::now();
        if (auto st = player.frame(static_cast<double>(k) / kDisplayHz, frame, info); !st.ok())
            return refused(st.error());
        row.times.frame_call_ms = ms_since(begin);
        row.t = info.time;
        row.late = info.late;
        row.late_reason = info.late ? std::string(fourdgs::to_string(info.reason)) : "";
        row.gaussians = frame.count;
        // The camera follows the clock; a late frame's gaussians hold at info.shown.
        const CameraView view =
            explicit_view(o).value_or(fourdgs::default_view(player.scene(), frame, info.time));
        if (auto e = drawer.draw(frame, view, o.width, o.height, true, row.times); !e.empty())
            return cannot_run(e);
        row.total_ms = ms_since(begin);
        // Shown on time when drawn before the next display tick.
        row.deadline_missed = Clock::now() > due + tick;
    }

    std::size_t late = 0, missed = 0;
    for (const Row& r : rows) {
        late += r.late;
        missed += r.deadline_missed;
    }
    const fourdgs::PlayerStats ps = player.stats();
    cli::Json j;
    j.begin_object()
        .str("file", o.file)
        .num("frames", rows.size())
        .num("display_hz", kDisplayHz)
        .num("rate", o.rate)
        .num("look_ahead", o.look_ahead)
        .num("late_frames", late)
        .num("missed_deadlines", missed);
    // The player's own counters over the run (the first, waited-for frame included).
    j.begin_object("player")
        .num("frames", ps.frames)
        .num("late_frames", ps.late_frames)
        .num("chunks_decoded", ps.chunks_decoded)
        .num("states_composed", ps.states_composed)
        .num("steps", ps.steps)
        .num("discarded", ps.discarded)
        .num("resident_bytes", ps.resident_bytes)
        .end_object();
    const auto column = [&](const char* name, auto get) {
        std::vector<double> v;
        for (const Row& r : rows) v.push_back(get(r));
        const Percentiles p = percentiles(v);
        j.begin_object(name).num("p50", p.p50).num("p99", p.p99).num("max", p.max).end_object();
    };
    j.begin_object("timings_ms");
    column("frame_call", [](const Row& r) { return r.times.frame_call_ms; });
    column("sort", [](const Row& r) { return r.times.sort_ms; });
    column("upload", [](const Row& r) { return r.times.upload_ms; });
    column("draw", [](const Row& r) { return r.times.draw_ms; });
    column("total", [](const Row& r) { return r.total_ms; });
    j.end_object().begin_array("per_frame");
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const Row& r = rows[k];
        j.begin_object()
            .num("frame", k)
            .num("t", r.t)
            .num("gaussians", r.gaussians)
            .num("frame_call_ms", r.times.frame_call_ms)
            .num("sort_ms", r.times.sort_ms)
            .num("upload_ms", r.times.upload_ms)
            .num("draw_ms", r.times.draw_ms)
            .num("total_ms", r.total_ms)
            .boolean("late", r.late)
            .str("late_reason", r.late_reason)
            .boolean("deadline_missed", r.deadline_missed)
            .end_object();
    }
    j.end_array().end_object();
    if (!o.report.empty()) {
        std::ofstream out(o.report);
        out << j.text() << "\n";
        if (!out) return cannot_run("cannot write " + o.report);
    }
    std::fprintf(stderr, "fourdgs-viewer: %zu frames at %g Hz, %zu late, %zu past their tick\n",
                 rows.size(), kDisplayHz, late, missed);
    return 0;
}

// ---- interactive ------------------------------------------------------------------------------

struct Interactive {
    fourdgs::Player* player = nullptr;
    bool orbiting = false;  // else the scene's camera path (or framed view)
    Orbit orbit;
    CameraView last_view;
    bool dragging = false, scrubbing = false;
    double last_x = 0, last_y = 0;
    std::string error;  // the last refusal, shown in the title until a frame succeeds

    void toggle_camera() {
        orbiting = !orbiting;
        if (orbiting) orbit = Orbit::around(last_view);
    }
    void scrub_to(GLFWwindow* w, double x) {
        int width = 0, height = 0;
        glfwGetWindowSize(w, &width, &height);
        player->seek(std::clamp(x / std::max(width, 1), 0.0, 1.0) * player->duration());
    }
    void set_rate(double rate) {
        if (auto st = player->set_rate(rate); !st.ok()) error = st.error().describe();
    }
};

Interactive& state_of(GLFWwindow* w) {
    return *static_cast<Interactive*>(glfwGetWindowUserPointer(w));
}

void on_key(GLFWwindow* w, int key, int, int action, int mods) {
    if (action == GLFW_RELEASE) return;
    Interactive& s = state_of(w);
    fourdgs::Player& p = *s.player;
    const double step = (mods & GLFW_MOD_SHIFT) ? 0.1 : 1.0;
    switch (key) {
        case GLFW_KEY_SPACE:
            if (p.state() == fourdgs::PlaybackState::playing)
                p.pause();
            else
                p.play();  // from the end, without loop: starts over
            break;
        case GLFW_KEY_LEFT: p.seek(p.position() - step); break;
        case GLFW_KEY_RIGHT: p.seek(p.position() + step); break;
        case GLFW_KEY_HOME: p.seek(0); break;
        case GLFW_KEY_UP: s.set_rate(p.rate() * 2); break;
        case GLFW_KEY_DOWN: s.set_rate(p.rate() / 2); break;
        case GLFW_KEY_R: s.set_rate(-p.rate()); break;
        case GLFW_KEY_L: p.set_loop(!p.loop()); break;
        case GLFW_KEY_C: s.toggle_camera(); break;
        case GLFW_KEY_ESCAPE:
        case GLFW_KEY_Q: glfwSetWindowShouldClose(w, GLFW_TRUE); break;
        default: break;
    }
}

void on_mouse_button(GLFWwindow* w, int button, int action, int) {
    Interactive& s = state_of(w);
    if (button != GLFW_MOUSE_BUTTON_LEFT) return;
    if (action == GLFW_RELEASE) {
        s.dragging = s.scrubbing = false;
        return;
    }
    glfwGetCursorPos(w, &s.last_x, &s.last_y);
    int width = 0, height = 0;
    glfwGetWindowSize(w, &width, &height);
    s.scrubbing = s.last_y >= height - kScrubberHeight * 2;
    s.dragging = !s.scrubbing;
    if (s.scrubbing) s.scrub_to(w, s.last_x);
    if (s.dragging && !s.orbiting) s.toggle_camera();  // dragging takes the camera over
}

void on_cursor(GLFWwindow* w, double x, double y) {
    Interactive& s = state_of(w);
    if (s.scrubbing) s.scrub_to(w, x);
    if (s.dragging) {
        s.orbit.yaw -= (x - s.last_x) * 0.01;
        s.orbit.pitch += (y - s.last_y) * 0.01;
        s.orbit.clamp_pitch();
    }
    s.last_x = x;
    s.last_y = y;
}

void on_scroll(GLFWwindow* w, double, double dy) {
    Interactive& s = state_of(w);
    if (!s.orbiting) s.toggle_camera();
    s.orbit.distance *= std::pow(0.9, dy);
}

// The window's loop: one frame from the player per display refresh (vsync), at the steady
// clock's time. A refusal (a damaged chunk, a replaced file) is shown in the title and the
// last good picture kept, so the user can seek past it.
int interactive(fourdgs::Player& player, viewer::SplatRenderer& renderer, Window& window,
                const Options& o) {
    Interactive ui;
    ui.player = &player;
    glfwSetWindowUserPointer(window.handle, &ui);
    glfwSetKeyCallback(window.handle, on_key);
    glfwSetMouseButtonCallback(window.handle, on_mouse_button);
    glfwSetCursorPosCallback(window.handle, on_cursor);
    glfwSetScrollCallback(window.handle, on_scroll);

    fourdgs::Frame frame;
    fourdgs::PlayerFrame info;
    if (auto st = player.frame_at(o.at, frame, info, /*wait=*/true); !st.ok())
        return refused(st.error());
    ui.last_view = explicit_view(o).value_or(fourdgs::default_view(player.scene(), frame, o.at));
    if (o.camera == "orbit" || explicit_view(o)) {
        ui.orbit = Orbit::around(ui.last_view);
        ui.orbiting = true;
    }
    player.play();
    FrameDrawer drawer(renderer, o);
    const Clock::time_point start = Clock::now();
    Clock::time_point title_due = start;
    while (!glfwWindowShouldClose(window.handle)) {
        glfwPollEvents();
        const double now = std::chrono::duration<double>(Clock::now() - start).count();
        if (auto st = player.frame(now, frame, info); !st.ok())
            ui.error = st.error().describe();
        else
            ui.error.clear();
        ui.last_view = ui.orbiting ? ui.orbit.view()
                                   : fourdgs::default_view(player.scene(), frame, info.time);
        int fb_w = 0, fb_h = 0;
        glfwGetFramebufferSize(window.handle, &fb_w, &fb_h);
        if (fb_w > 0 && fb_h > 0) {
            FrameTimes times;
            if (auto e = drawer.draw(frame, ui.last_view, fb_w, fb_h, false, times); !e.empty())
                return cannot_run(e);
            const double duration = player.duration();
            renderer.present(fb_w, fb_h, kScrubberHeight,
                             duration > 0 ? info.time / duration : 0);
            glfwSwapBuffers(window.handle);
        }
        if (Clock::now() >= title_due) {  // the time readout, ten times a second
            char title[512];
            std::snprintf(title, sizeof title,
                          "fourdgs-viewer  t = %.3f / %.3f s  %s %gx%s  %zu gaussians  "
                          "late %llu  [%s]%s%s",
                          info.time, player.duration(),
                          std::string(fourdgs::to_string(player.state())).c_str(), player.rate(),
                          player.loop() ? " loop" : "", frame.count,
                          static_cast<unsigned long long>(player.stats().late_frames),
                          ui.orbiting ? "orbit" : "scene camera",
                          ui.error.empty() ? "" : "  refused: ", ui.error.c_str());
            glfwSetWindowTitle(window.handle, title);
            title_due = Clock::now() + std::chrono::milliseconds(100);
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    CLI::App app{"fourdgs-viewer — play a .4dgs scene with 3D gaussian splatting (OpenGL 3.3)"};
    // Without FILE: the bundled showcase scene of the source tree it was built from.
    o.file = FOURDGS_VIEWER_DEFAULT_SCENE;
    app.add_option("FILE", o.file, "the .4dgs file: a path or an http(s):// URL")
        ->capture_default_str();
    app.add_option("--at", o.at, "scene time to start at (or to screenshot), seconds");
    app.add_option("--screenshot", o.screenshot, "render the frame at --at to this PNG and exit");
    app.add_option("--play-frames", o.play_frames,
                   "play this many display frames at 60 Hz without a window, then exit")
        ->check(CLI::Range(1, 1000000));
    app.add_option("--report", o.report, "with --play-frames: per-frame timings as JSON here");
    app.add_option("--width", o.width, "pixels (as 4dgs preview)")->check(CLI::Range(1, 8192));
    app.add_option("--height", o.height, "pixels (as 4dgs preview)")->check(CLI::Range(1, 8192));
    auto* eye = app.add_option("--eye", o.eye, "camera position x y z (else the scene's camera "
                                               "at t, or a view framing its box: 4dgs preview's)")
                    ->expected(3)
                    ->delimiter(',');
    auto* target = app.add_option("--target", o.target, "the point the camera looks at, x y z")
                       ->expected(3)
                       ->delimiter(',');
    eye->needs(target);
    target->needs(eye);
    app.add_option("--fov", o.fov, "vertical field of view, degrees (with --eye)")
        ->check(CLI::Range(0.01, 179.99))
        ->needs(eye);
    app.add_option("--background", o.background, "linear rgb in [0, 1] (default black)")
        ->expected(3)
        ->delimiter(',');
    app.add_option("--sh-degree", o.sh_degree,
                   "SH degree to evaluate, capped by the file's (0: DC colour, as 4dgs preview)")
        ->check(CLI::Range(0, 3));
    app.add_option("--rate", o.rate, "playback rate (negative: backwards)");
    app.add_option("--look-ahead", o.look_ahead, "states the player decodes ahead of the playhead")
        ->check(CLI::Range(1, 1000));
    app.add_flag("!--no-loop", o.loop, "stop at the end instead of looping");
    app.add_option("--camera", o.camera, "scene: the scene's camera path; orbit: free")
        ->check(CLI::IsMember({"scene", "orbit"}));
    CLI11_PARSE(app, argc, argv);
    if (!o.screenshot.empty() && o.play_frames > 0)
        return cannot_run("--screenshot and --play-frames are two different runs");

    auto source = fourdgs::open_source(o.file);
    if (!source.ok()) return refused(source.error());
    fourdgs::PlayerOptions po;
    po.look_ahead = o.look_ahead;
    po.start = o.at;
    po.rate = o.rate;
    po.loop = o.loop;
    po.max_sh_degree = o.sh_degree;
    fourdgs::OpenSceneOptions so;
    so.reader.decode.max_sh_degree = o.sh_degree;
    auto player = fourdgs::Player::open(std::move(*source), po, so);
    if (!player.ok()) return refused(player.error());
    // As 4dgs preview: an instant of the scene, [0, duration).
    if (!(o.at >= 0 && o.at < player->duration()))
        return refused(fourdgs::make_error(
            fourdgs::ErrorKind::invalid_argument, fourdgs::refusal::kTimeOutOfRange,
            "time " + std::to_string(o.at) + " s is outside [0, " +
                std::to_string(player->duration()) + ")"));

    Window window;
    if (auto e = open_window(window, o, o.screenshot.empty() && o.play_frames == 0); !e.empty())
        return cannot_run(e);
    std::string error;
    auto renderer = viewer::SplatRenderer::create(error);
    if (!renderer) return cannot_run(error);

    if (!o.screenshot.empty()) return screenshot(*player, *renderer, o);
    if (o.play_frames > 0) return play_frames(*player, *renderer, o);
    return interactive(*player, *renderer, window, o);
}
