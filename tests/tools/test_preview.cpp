// The CPU preview (fourdgs/tools/preview.hpp): splatting a Frame through a look-at pinhole camera, the
// default view, and the live-count timeline with its plot and sparkline.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fourdgs/tools/preview.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "fourdgs/writer.hpp"

using namespace fourdgs;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

struct Gaussian {
    std::array<float, 3> center{}, scale{0.5f, 0.5f, 0.5f};
    std::array<float, 4> rotation{0, 0, 0, 1}, rgba{1, 0, 0, 1};
};

void push(Frame& frame, const Gaussian& g) {
    frame.center.insert(frame.center.end(), g.center.begin(), g.center.end());
    frame.scale.insert(frame.scale.end(), g.scale.begin(), g.scale.end());
    frame.rotation.insert(frame.rotation.end(), g.rotation.begin(), g.rotation.end());
    frame.color.insert(frame.color.end(), g.rgba.begin(), g.rgba.end());
    frame.object_id.push_back(0);
    frame.source.push_back(static_cast<std::uint32_t>(frame.count));
    ++frame.count;
}

Frame frame_of(const std::vector<Gaussian>& gs) {
    Frame f;
    for (const Gaussian& g : gs) push(f, g);
    return f;
}

// Camera on +z looking at the origin.
CameraView front_view(double distance = 5) {
    CameraView v;
    v.position = {0, 0, distance};
    v.target = {0, 0, 0};
    v.fov_y_deg = 50;
    return v;
}

PreviewOptions options_with(const CameraView& view, int w = 64, int h = 48) {
    PreviewOptions o;
    o.width = w;
    o.height = h;
    o.view = view;
    o.background = {0, 0, 1};  // blue: unlike every gaussian colour used here
    return o;
}

struct Rgb {
    int r, g, b;
};
Rgb pixel(const Image& im, int x, int y) {
    const std::uint8_t* p = &im.rgba[(static_cast<std::size_t>(y) * im.width + x) * 4];
    return {p[0], p[1], p[2]};
}
bool is_background(const Image& im, int x, int y) {
    const Rgb p = pixel(im, x, y);
    return p.r == 0 && p.g == 0 && p.b == 255;
}
std::size_t lit_pixels(const Image& im) {
    std::size_t n = 0;
    for (int y = 0; y < im.height; ++y)
        for (int x = 0; x < im.width; ++x) n += !is_background(im, x, y);
    return n;
}

Image render_ok(const Frame& frame, const PreviewOptions& options, const SceneInfo& scene = {}) {
    auto r = render_preview(scene, frame, 0.0, options);
    REQUIRE(r.ok());
    REQUIRE(r->width == options.width);
    REQUIRE(r->height == options.height);
    REQUIRE(r->rgba.size() == static_cast<std::size_t>(options.width) * options.height * 4);
    return std::move(r).value();
}

void require_red_centre_background_corners(const Image& im) {
    const Rgb c = pixel(im, im.width / 2, im.height / 2);
    CHECK(c.r >= 245);
    CHECK(c.g <= 10);
    CHECK(c.b <= 10);
    for (int y : {0, im.height - 1})
        for (int x : {0, im.width - 1}) CHECK(is_background(im, x, y));
}

// One large red gaussian at the origin, written and read back through the file format.
LoadedScene written_red_scene(std::optional<Camera> camera) {
    const std::vector<float> position{0, 0, 0}, scale{0.5f, 0.5f, 0.5f}, rotation{0, 0, 0, 1},
        color{1, 0, 0, 1}, mu_t{0.5f}, sigma_t{kInf};
    const std::vector<double> win_lo{0}, win_hi{1};
    SceneInput in;
    in.header.duration_sec = 1;
    in.header.camera = std::move(camera);
    in.gaussians.count = 1;
    in.gaussians.position = position;
    in.gaussians.scale = scale;
    in.gaussians.rotation = rotation;
    in.gaussians.color = color;
    in.gaussians.mu_t = mu_t;
    in.gaussians.sigma_t = sigma_t;
    in.gaussians.win_lo = win_lo;
    in.gaussians.win_hi = win_hi;
    auto bytes = write_scene(in);
    REQUIRE(bytes.ok());
    MemorySource src(*bytes);
    auto loaded = read_streaming(src);
    REQUIRE(loaded.ok());
    REQUIRE_FALSE(loaded->truncation);
    return std::move(loaded).value();
}

}  // namespace

// ---------------------------------------------------------------------------------------------

TEST_CASE("preview: one large red gaussian in front of the camera is red at the centre and "
          "background at the corners") {
    const Frame frame = frame_of({Gaussian{}});
    const Image im = render_ok(frame, options_with(front_view()));
    require_red_centre_background_corners(im);
    // Alpha is opaque everywhere.
    for (std::size_t i = 3; i < im.rgba.size(); i += 4) REQUIRE(im.rgba[i] == 255);
}

TEST_CASE("preview: the red gaussian survives the writer, the streaming reader and evaluate") {
    SECTION("framed from the scene, no Camera record") {
        const LoadedScene scene = written_red_scene(std::nullopt);
        Frame frame;
        evaluate(scene.gaussians, 0.5, scene.info.header.cutoff, frame);
        REQUIRE(frame.count == 1);
        PreviewOptions o;
        o.width = 80;
        o.height = 60;
        o.background = {0, 0, 1};
        auto im = render_preview(scene.info, frame, 0.5, o);
        REQUIRE(im.ok());
        require_red_centre_background_corners(*im);
    }
    SECTION("through the scene's Camera record") {
        Camera cam;
        cam.fov_y_deg = 40;
        cam.position = {0, 0, 8};
        cam.target = {0, 0, 0};
        cam.interpolation = "linear";
        const LoadedScene scene = written_red_scene(cam);
        REQUIRE(scene.info.camera.has_value());
        const CameraView v = default_view(scene.info, Frame{}, 0.5);
        CHECK(v.position == Vec3{0, 0, 8});
        CHECK(v.target == Vec3{0, 0, 0});
        CHECK(v.fov_y_deg == 40);
        Frame frame;
        evaluate(scene.gaussians, 0.5, scene.info.header.cutoff, frame);
        PreviewOptions o;
        o.width = 64;
        o.height = 64;
        o.background = {0, 0, 1};
        auto im = render_preview(scene.info, frame, 0.5, o);
        REQUIRE(im.ok());
        require_red_centre_background_corners(*im);
    }
}

TEST_CASE("preview: the ellipse ends at 3 sigma of the dilated projected covariance") {
    // scale 0.5 (linear) at depth 5 with a 50° vertical fov on 48 rows: σ = f · 0.5 / 5 px with
    // f = 24 / tan 25°, dilated by 0.3 px², cut at 3σ. The width of the lit run along the centre
    // row pins the scale convention, the focal length (vertical fov, square pixels) and the cut.
    const double pi = std::acos(-1.0);
    const double f = 24 / std::tan(25 * pi / 180);
    const double sigma = f * 0.5 / 5;
    const double half = 3 * std::sqrt(sigma * sigma + 0.3);
    for (int width : {64, 128}) {
        const Image im = render_ok(frame_of({Gaussian{}}), options_with(front_view(), width, 48));
        int run = 0;
        for (int x = 0; x < width; ++x) run += !is_background(im, x, 24);
        int expected = 0;  // pixel centres within ±half of the image centre
        for (int x = 0; x < width; ++x) expected += std::abs(x + 0.5 - width / 2.0) <= half;
        INFO("width " << width);
        CHECK(run == expected);
        // Everywhere: lit exactly inside the 3σ circle (alpha there is >= e^-4.5, a visible
        // change in 8 bits), background outside it, the corners of its bounding box included.
        int wrong = 0;
        for (int y = 0; y < 48; ++y)
            for (int x = 0; x < width; ++x) {
                const double dx = x + 0.5 - width / 2.0, dy = y + 0.5 - 24;
                const bool inside = (dx * dx + dy * dy) / (sigma * sigma + 0.3) <= 9;
                wrong += inside == is_background(im, x, y);
            }
        CHECK(wrong == 0);
    }
}

TEST_CASE("preview: the nearer of two overlapping gaussians wins whatever the input order") {
    Gaussian far_red;  // large, at the origin
    far_red.scale = {1, 1, 1};
    Gaussian near_green;  // small, 2 units closer to the camera
    near_green.center = {0, 0, 2};
    near_green.scale = {0.15f, 0.15f, 0.15f};
    near_green.rgba = {0, 1, 0, 1};
    for (bool near_first : {false, true}) {
        const Frame frame =
            near_first ? frame_of({near_green, far_red}) : frame_of({far_red, near_green});
        const Image im = render_ok(frame, options_with(front_view()));
        const Rgb c = pixel(im, 32, 24);
        CHECK(c.g >= 245);
        CHECK(c.r <= 10);
        // The far one still shows where the near one does not cover.
        const Rgb side = pixel(im, 32 + 9, 24);
        CHECK(side.r >= 150);
        CHECK(side.g == 0);
    }
}

TEST_CASE("preview: a gaussian behind the camera or at the eye draws nothing") {
    Gaussian behind;
    behind.center = {0, 0, 10};  // the camera is at z = 5 looking towards -z
    behind.scale = {3, 3, 3};
    Gaussian at_eye;
    at_eye.center = {0, 0, 5};
    const Image im = render_ok(frame_of({behind, at_eye}), options_with(front_view()));
    CHECK(lit_pixels(im) == 0);
}

TEST_CASE("preview: image x runs to the camera's right and image y downwards") {
    // Camera on +z looking at the origin: world +x is to the right, world +y is up.
    Gaussian up_right;
    up_right.center = {1, 1, 0};
    up_right.scale = {0.1f, 0.1f, 0.1f};
    const Image im = render_ok(frame_of({up_right}), options_with(front_view(), 64, 64));
    // focal = 32 / tan 25°, so (1, 1) at depth 5 lands 13.7 px right of and above the centre.
    CHECK_FALSE(is_background(im, 32 + 13, 32 - 14));
    CHECK(is_background(im, 32 - 14, 32 - 14));
    CHECK(is_background(im, 32 + 13, 32 + 13));
    // From the other side (-z looking at the origin) world +x is on the left.
    const Image back = render_ok(frame_of({up_right}), options_with(front_view(-5), 64, 64));
    CHECK_FALSE(is_background(back, 32 - 14, 32 - 14));
    CHECK(is_background(back, 32 + 13, 32 - 14));
}

TEST_CASE("preview: an elongated gaussian follows its rotation about the view axis") {
    const double pi = std::acos(-1.0);
    auto streak = [&](double angle_deg) {
        Gaussian g;
        g.scale = {1, 0.05f, 0.05f};
        const double h = angle_deg * pi / 360.0;
        g.rotation = {0, 0, static_cast<float>(std::sin(h)), static_cast<float>(std::cos(h))};
        return render_ok(frame_of({g}), options_with(front_view(), 96, 96));
    };
    auto count_row = [](const Image& im, int y) {
        int n = 0;
        for (int x = 0; x < im.width; ++x) n += !is_background(im, x, y);
        return n;
    };
    auto count_column = [](const Image& im, int x) {
        int n = 0;
        for (int y = 0; y < im.height; ++y) n += !is_background(im, x, y);
        return n;
    };
    const Image flat = streak(0);
    CHECK(count_row(flat, 48) > 4 * count_column(flat, 48));
    const Image turned = streak(90);
    CHECK(count_column(turned, 48) > 4 * count_row(turned, 48));
    CHECK(count_column(turned, 48) >= 30);
    // 45° about +z turns the long axis towards +x +y: up and to the right on the image (y down).
    const Image diagonal = streak(45);
    CHECK_FALSE(is_background(diagonal, 48 + 12, 48 - 12));
    CHECK(is_background(diagonal, 48 + 12, 48 + 12));
    CHECK(is_background(diagonal, 48 - 12, 48 - 12));
}

TEST_CASE("preview: default_view frames the Header aabb from +z with a 50 degree fov") {
    SceneInfo scene;
    scene.header.aabb = {-2, -1, -3, 4, 3, 1};  // centre (1, 1, -1)
    const Vec3 centre{1, 1, -1};
    Gaussian g;
    g.center = {1, 1, -1};
    g.scale = {0.2f, 0.2f, 0.2f};
    const Frame frame = frame_of({g});
    const CameraView v = default_view(scene, frame, 0);
    CHECK(v.target == centre);
    CHECK(v.position[0] == Approx(1));
    CHECK(v.position[1] == Approx(1));
    CHECK(v.position[2] > 1);
    CHECK(v.fov_y_deg == 50);

    PreviewOptions o;  // no view: default_view
    o.width = 64;
    o.height = 64;
    o.background = {0, 0, 1};
    auto im = render_preview(scene, frame, 0, o);
    REQUIRE(im.ok());
    const Rgb c = pixel(*im, 32, 32);
    CHECK(c.r >= 200);
    CHECK(is_background(*im, 0, 0));

    // Every corner of the box lands inside the picture.
    for (int corner = 0; corner < 8; ++corner) {
        Gaussian small;
        small.scale = {0.02f, 0.02f, 0.02f};
        for (int k = 0; k < 3; ++k)
            small.center[k] = static_cast<float>(scene.header.aabb[(corner >> k & 1) ? k + 3 : k]);
        PreviewOptions oc = o;
        oc.view = v;
        auto corner_image = render_preview(scene, frame_of({small}), 0, oc);
        REQUIRE(corner_image.ok());
        INFO("corner " << corner);
        CHECK(lit_pixels(*corner_image) > 0);
    }

    SECTION("an empty aabb falls back to the frame's centres") {
        SceneInfo empty;
        Gaussian a, b;
        a.center = {10, 20, 30};
        b.center = {12, 22, 32};
        const CameraView fv = default_view(empty, frame_of({a, b}), 0);
        CHECK(fv.target == Vec3{11, 21, 31});
        CHECK(fv.position[2] > 31);
    }
    SECTION("an unusable Camera record is passed over") {
        SceneInfo with_camera = scene;
        Camera cam;
        cam.fov_y_deg = 0;
        cam.position = {0, 0, 0};
        cam.target = {0, 0, 0};
        cam.interpolation = "linear";
        with_camera.camera = cam;
        const CameraView fv = default_view(with_camera, frame, 0);
        CHECK(fv.target == centre);
        CHECK(fv.fov_y_deg == 50);
    }
}

TEST_CASE("preview: live_timeline counts equal visible_count at every sample") {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0, 1);
    const double duration = 5;
    const std::size_t samples = 50;
    GaussianBlock block;
    block.count = 600;
    for (std::size_t i = 0; i < block.count; ++i) {
        // Windows and temporal centres often sit exactly on sample instants.
        auto on_sample = [&] {
            return static_cast<float>(duration * (static_cast<double>(rng() % samples) + 0.5) /
                                      samples);
        };
        float lo = i % 3 == 0 ? on_sample() : u(rng) * 5;
        float hi = i % 4 == 0 ? on_sample() : u(rng) * 5;
        if (lo > hi) std::swap(lo, hi);
        if (lo == hi) hi = lo + 0.1f;
        block.win_lo.push_back(lo);
        block.win_hi.push_back(hi);
        block.mu_t.push_back(i % 5 == 0 ? on_sample() : u(rng) * 5);
        block.sigma_t.push_back(i % 2 == 0 ? kInf : 0.01f + u(rng));
    }
    for (double cutoff : {0.05, 0.5, 1.0}) {
        const LiveTimeline tl = live_timeline(block, duration, cutoff, samples);
        REQUIRE(tl.times.size() == samples);
        REQUIRE(tl.live.size() == samples);
        std::uint64_t total = 0;
        for (std::size_t i = 0; i < samples; ++i) {
            CHECK(tl.times[i] == Approx(duration * (i + 0.5) / samples));
            if (i > 0) CHECK(tl.times[i] > tl.times[i - 1]);
            INFO("cutoff " << cutoff << " sample " << i);
            CHECK(tl.live[i] == visible_count(block, tl.times[i], cutoff));
            total += tl.live[i];
        }
        if (cutoff < 1) CHECK(total > 0);
    }
    CHECK(live_timeline(block, duration, 0.05, 0).times.empty());
}

TEST_CASE("preview: sparkline has one glyph per column, from the lowest to the full block") {
    LiveTimeline tl;
    tl.live = {0, 1, 2, 3, 4, 5, 6, 7};
    tl.times.assign(8, 0.0);
    CHECK(sparkline(tl, 8) == "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588");
    CHECK(sparkline(tl, 4) == "\u2582\u2584\u2586\u2588");  // each column the max of two
    const std::string wide = sparkline(tl, 16);
    CHECK(wide.size() == 16 * 3);
    CHECK(wide.substr(0, 6) == "\u2581\u2581");
    CHECK(wide.substr(wide.size() - 6) == "\u2588\u2588");
    CHECK(sparkline(tl, 0).empty());
    CHECK(sparkline(LiveTimeline{}, 5) == "\u2581\u2581\u2581\u2581\u2581");
    // Large counts: a small non-zero value never reads as zero.
    tl.live = {0, 1, 1000000};
    CHECK(sparkline(tl, 3) == "\u2581\u2582\u2588");
}

TEST_CASE("preview: plot_timeline has the asked size, axes, and bars that grow with the count") {
    LiveTimeline tl;
    tl.live = {1, 2, 3, 4};
    tl.times = {0.5, 1.5, 2.5, 3.5};
    auto plot = plot_timeline(tl, 200, 100);
    REQUIRE(plot.ok());
    REQUIRE(plot->width == 200);
    REQUIRE(plot->height == 100);
    REQUIRE(plot->rgba.size() == 200u * 100u * 4u);
    auto is = [&](int x, int y, const std::array<std::uint8_t, 3>& rgb) {
        const std::uint8_t* p = &plot->rgba[(static_cast<std::size_t>(y) * 200 + x) * 4];
        return p[0] == rgb[0] && p[1] == rgb[1] && p[2] == rgb[2] && p[3] == 255;
    };
    // Bar heights per column, grouped into runs of adjacent bar columns.
    std::vector<int> heights;
    bool in_bar = false;
    int axis_pixels = 0;
    for (int x = 0; x < 200; ++x) {
        int h = 0;
        for (int y = 0; y < 100; ++y) {
            h += is(x, y, kTimelineBarRgb);
            axis_pixels += is(x, y, kTimelineAxisRgb);
        }
        if (h > 0 && !in_bar) heights.push_back(h);
        if (h > 0 && in_bar) CHECK(h == heights.back());
        in_bar = h > 0;
    }
    REQUIRE(heights.size() == 4);
    for (std::size_t i = 1; i < heights.size(); ++i) CHECK(heights[i] > heights[i - 1]);
    CHECK(heights[3] == Approx(4 * heights[0]).margin(1));
    CHECK(axis_pixels > 200);  // a full-width x axis and a y axis

    tl.live = {0, 0, 0, 0};
    auto empty = plot_timeline(tl, 50, 20);
    REQUIRE(empty.ok());
    for (int y = 0; y < 20; ++y)
        for (int x = 0; x < 50; ++x) {
            const std::uint8_t* p = &empty->rgba[(static_cast<std::size_t>(y) * 50 + x) * 4];
            CHECK_FALSE((p[0] == kTimelineBarRgb[0] && p[1] == kTimelineBarRgb[1] &&
                         p[2] == kTimelineBarRgb[2]));
        }
    // More samples than columns, and a one-pixel image, still work.
    tl.live.assign(1000, 3);
    REQUIRE(plot_timeline(tl, 40, 30).ok());
    REQUIRE(plot_timeline(tl, 1, 1).ok());
}

TEST_CASE("preview: image sizes outside 1..8192 are refused as invalid-image-size") {
    const Frame frame = frame_of({Gaussian{}});
    for (auto [w, h] : std::vector<std::pair<int, int>>{{0, 10}, {10, 0}, {-1, 10}, {8193, 1},
                                                          {1, 8193}}) {
        INFO(w << "x" << h);
        auto r = render_preview(SceneInfo{}, frame, 0, options_with(front_view(), w, h));
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().refusal == "invalid-image-size");
        CHECK(r.error().kind == ErrorKind::invalid_argument);
        auto p = plot_timeline(LiveTimeline{}, w, h);
        REQUIRE_FALSE(p.ok());
        CHECK(p.error().refusal == "invalid-image-size");
    }
    CHECK(render_preview(SceneInfo{}, frame, 0, options_with(front_view(), 8192, 1)).ok());
    CHECK(plot_timeline(LiveTimeline{}, 1, 8192).ok());
}

TEST_CASE("preview: an impossible view or a short Frame is refused") {
    Frame frame = frame_of({Gaussian{}});
    CameraView v = front_view();
    v.fov_y_deg = 0;
    auto r = render_preview(SceneInfo{}, frame, 0, options_with(v));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().refusal == "invalid-view");
    v = front_view();
    v.target = v.position;
    CHECK(render_preview(SceneInfo{}, frame, 0, options_with(v)).error().refusal ==
          "invalid-view");
    v = front_view();
    v.position[0] = std::nan("");
    CHECK(render_preview(SceneInfo{}, frame, 0, options_with(v)).error().refusal ==
          "invalid-view");

    frame.count = 2;  // more than the columns hold
    auto s = render_preview(SceneInfo{}, frame, 0, options_with(front_view()));
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().refusal == "frame-size-mismatch");
}

TEST_CASE("preview: non-finite gaussians and a straight-down view draw without failing") {
    Gaussian bad;
    bad.center = {std::nanf(""), 0, 0};
    Gaussian huge;
    huge.scale = {1e30f, 1e30f, 1e30f};
    Gaussian ok;
    const Image im = render_ok(frame_of({bad, huge, ok}), options_with(front_view()));
    CHECK(im.rgba.size() == 64u * 48u * 4u);
    // Looking straight down y: up falls back to +z and the gaussian is still in the middle.
    CameraView down;
    down.position = {0, 5, 0};
    down.target = {0, 0, 0};
    down.fov_y_deg = 50;
    const Image top = render_ok(frame_of({ok}), options_with(down));
    const Rgb c = pixel(top, 32, 24);
    CHECK(c.r >= 245);
}
