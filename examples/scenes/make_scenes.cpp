// make_scenes — writes the bundled demonstration scenes (examples/data/) from code, so that they
// can be read, changed and written again: the same bytes on every run.
//
//   fourdgs-make-scenes OUT_DIR      writes OUT_DIR/showcase.4dgs and OUT_DIR/keyframes.4dgs
//
// Both scenes are made of the same shapes, sampled as flat gaussians lying on their surface: a
// checkered ground, an upright checkered torus with a view-dependent SH highlight, a banded ball,
// and coloured boxes that appear and disappear. A Camera record circles the scene and a spatial
// audio source (a short hum, WAV) travels with the ball.
//   showcase.4dgs   gaussian-birth (§3): the ball rolls by on its velocity, each box fades in and
//                   out on its own temporal gaussian and drifts upward; 1-second windows.
//   keyframes.4dgs  keyframe-delta (§11): 10 states a second; the ball circles the torus, boxes
//                   are born and die between states; one keyframe every 2 seconds.
#include <fourdgs/fourdgs.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

namespace {

using Vec = std::array<double, 3>;
constexpr double kPi = std::numbers::pi;
constexpr double kDuration = 6.0;
constexpr int kShDegree = 1;
constexpr double kShC1 = 0.4886025119029199;  // 3DGS's band-1 basis constant
const Vec kLight = {-0.45, 0.8, 0.4};         // towards the light the highlight reflects

Vec add(Vec a, Vec b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
Vec scaled(Vec a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }
double dot(Vec a, Vec b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec cross(Vec a, Vec b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
Vec normalized(Vec a) { return scaled(a, 1 / std::sqrt(dot(a, a))); }

// A small deterministic hash in [0, 1): texture-like variation without a random generator.
double grain(std::uint32_t i) {
    i ^= i >> 16;
    i *= 0x7feb352dU;
    i ^= i >> 15;
    i *= 0x846ca68bU;
    i ^= i >> 16;
    return (i & 0xFFFFFF) / double(0x1000000);
}

// One surface sample: a flat gaussian on the plane of tangents u, v.
struct Splat {
    Vec position, u, v;   // u, v unit tangents; the normal is u × v
    double su, sv;        // extent along u and v
    Vec rgb;
    double shine = 0;     // strength of the view-dependent highlight
};

// The surface samples of one object, before append() moves it and gives it a time.
struct Shape {
    std::vector<Splat> splats;
};

// The quaternion (xyzw) of the rotation whose columns are a, b, c (orthonormal, right-handed).
std::array<double, 4> quaternion(Vec a, Vec b, Vec c) {
    const double trace = a[0] + b[1] + c[2];
    std::array<double, 4> q;
    if (trace > 0) {
        const double s = 2 * std::sqrt(1 + trace);
        q = {(b[2] - c[1]) / s, (c[0] - a[2]) / s, (a[1] - b[0]) / s, s / 4};
    } else if (a[0] > b[1] && a[0] > c[2]) {
        const double s = 2 * std::sqrt(1 + a[0] - b[1] - c[2]);
        q = {s / 4, (b[0] + a[1]) / s, (c[0] + a[2]) / s, (b[2] - c[1]) / s};
    } else if (b[1] > c[2]) {
        const double s = 2 * std::sqrt(1 + b[1] - a[0] - c[2]);
        q = {(b[0] + a[1]) / s, s / 4, (c[1] + b[2]) / s, (c[0] - a[2]) / s};
    } else {
        const double s = 2 * std::sqrt(1 + c[2] - a[0] - b[1]);
        q = {(c[0] + a[2]) / s, (c[1] + b[2]) / s, s / 4, (a[1] - b[0]) / s};
    }
    return q;
}

// Tangents of a unit normal n: any u ⟂ n, v = n × u (so u × v = n).
std::pair<Vec, Vec> tangents(Vec n) {
    const Vec helper = std::abs(n[1]) < 0.9 ? Vec{0, 1, 0} : Vec{1, 0, 0};
    const Vec u = normalized(cross(helper, n));
    return {u, cross(n, u)};
}

// ---- shapes ----------------------------------------------------------------------------------

Shape ground(int n, double half) {
    Shape s;
    const double step = 2 * half / n;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            const double x = -half + (i + 0.5) * step, z = -half + (j + 0.5) * step;
            const bool dark = (int(std::floor(x)) + int(std::floor(z))) & 1;
            const double g = (dark ? 0.18 : 0.62) + 0.06 * grain(std::uint32_t(i * n + j));
            s.splats.push_back({{x, 0, z}, {1, 0, 0}, {0, 0, -1}, 0.7 * step, 0.7 * step,
                                {g, g * 0.97, g * 0.92}});
        }
    return s;
}

// An upright torus facing +z: checkered red and cream, shiny.
Shape torus(Vec centre, double major, double minor, int nu, int nv) {
    Shape s;
    for (int i = 0; i < nu; ++i)
        for (int j = 0; j < nv; ++j) {
            const double a = 2 * kPi * (i + 0.5) / nu, b = 2 * kPi * (j + 0.5) / nv;
            const Vec radial = {std::cos(a), std::sin(a), 0};
            const Vec n = add(scaled(radial, std::cos(b)), {0, 0, std::sin(b)});
            const Vec p = add(centre, add(scaled(radial, major), scaled(n, minor)));
            const Vec tu = {-std::sin(a), std::cos(a), 0};
            const Vec tv = cross(n, tu);
            const bool red = ((i * 24 / nu) + (j * 8 / nv)) & 1;
            const double g = 0.05 * grain(std::uint32_t(i * nv + j) + 7u);
            const Vec rgb = red ? Vec{0.78 + g, 0.10, 0.08} : Vec{0.92, 0.86 - g, 0.70};
            s.splats.push_back({p, tu, tv, 0.75 * 2 * kPi * (major + minor * std::cos(b)) / nu,
                                0.75 * 2 * kPi * minor / nv, rgb, 0.45});
        }
    return s;
}

// A ball with blue and yellow latitude bands, sampled on a Fibonacci spiral.
Shape ball(double radius, int n) {
    Shape s;
    const double golden = kPi * (3 - std::sqrt(5.0));
    const double size = 0.9 * std::sqrt(4 * kPi / n) * radius;
    for (int i = 0; i < n; ++i) {
        const double y = 1 - 2 * (i + 0.5) / n, r = std::sqrt(1 - y * y), a = golden * i;
        const Vec normal = {r * std::cos(a), y, r * std::sin(a)};
        const auto [u, v] = tangents(normal);
        const bool band = int(std::floor((y + 1) * 4)) & 1;
        const Vec rgb = band ? Vec{0.95, 0.78, 0.10} : Vec{0.10, 0.30, 0.85};
        s.splats.push_back({scaled(normal, radius), u, v, size, size, rgb, 0.35});
    }
    return s;
}

// An axis-aligned box of side `side` centred at the origin; each face its own colour.
Shape box(double side, int per_edge, Vec tint) {
    Shape s;
    const double h = side / 2, step = side / per_edge;
    for (int axis = 0; axis < 3; ++axis)
        for (int sign = -1; sign <= 1; sign += 2) {
            Vec n{};
            n[axis] = sign;
            const auto [u, v] = tangents(n);
            const double shade = 0.55 + 0.45 * (axis == 1 ? 1.0 : 0.5 + 0.25 * sign);
            for (int i = 0; i < per_edge; ++i)
                for (int j = 0; j < per_edge; ++j) {
                    const double a = -h + (i + 0.5) * step, b = -h + (j + 0.5) * step;
                    const bool edge = i == 0 || j == 0 || i == per_edge - 1 || j == per_edge - 1;
                    const Vec p = add(scaled(n, h), add(scaled(u, a), scaled(v, b)));
                    const Vec rgb = edge ? Vec{0.95, 0.95, 0.95} : scaled(tint, shade);
                    s.splats.push_back({p, u, v, 0.7 * step, 0.7 * step, rgb, 0.2});
                }
        }
    return s;
}

const std::array<Vec, 8> kBoxTints = {{{0.9, 0.2, 0.6}, {0.2, 0.8, 0.3}, {1.0, 0.55, 0.1},
                                       {0.3, 0.5, 1.0}, {0.7, 0.3, 0.95}, {0.1, 0.8, 0.8},
                                       {0.95, 0.9, 0.2}, {0.9, 0.3, 0.2}}};
constexpr double kBoxSide = 0.5, kBoxRing = 2.9;
Vec box_place(int k) {
    const double a = 2 * kPi * k / 8 + kPi / 8;
    return {kBoxRing * std::cos(a), kBoxSide / 2 + 0.02, kBoxRing * std::sin(a)};
}

// ---- columns ---------------------------------------------------------------------------------

// Appends `shape` moved to `offset` with the given motion and time to `c` (id column included
// when `first_id` is given: consecutive ids from it).
struct Timing {
    Vec motion{};
    double mu_t = 0, sigma_t = std::numeric_limits<double>::infinity();
    double win_lo = 0, win_hi = kDuration;
};
void append(fourdgs::GaussianColumns& c, const Shape& shape, Vec offset, const Timing& t,
            std::vector<std::uint32_t>* ids = nullptr, std::uint32_t first_id = 0) {
    const std::size_t base = c.count;
    c.resize(base + shape.splats.size());
    const std::size_t per = 3 * ((kShDegree + 1) * (kShDegree + 1) - 1);
    const Vec light = normalized(kLight);
    for (std::size_t k = 0; k < shape.splats.size(); ++k) {
        const Splat& s = shape.splats[k];
        const std::size_t i = base + k;
        const Vec n = cross(s.u, s.v);
        const auto q = quaternion(s.u, s.v, n);
        const Vec p = add(s.position, offset);
        for (int a = 0; a < 3; ++a) {
            c.position[3 * i + a] = float(p[a]);
            c.motion[3 * i + a] = float(t.motion[a]);
            c.color[4 * i + a] = float(s.rgb[a]);
        }
        c.scale[3 * i] = float(s.su);
        c.scale[3 * i + 1] = float(s.sv);
        c.scale[3 * i + 2] = float(0.15 * std::min(s.su, s.sv));
        for (int a = 0; a < 4; ++a) c.rotation[4 * i + a] = float(q[a]);
        c.color[4 * i + 3] = 0.97f;
        c.mu_t[i] = float(t.mu_t);
        c.sigma_t[i] = float(t.sigma_t);
        c.win_lo[i] = t.win_lo;
        c.win_hi[i] = t.win_hi;
        // The highlight: brightest where the view direction d (eye to gaussian) is the light's
        // reflection off the surface, r = 2 (n·l) n - l, i.e. the band-1 term -shine (d·r)·…;
        // with 3DGS's basis -C1 y, C1 z, -C1 x that is coefficients (r_y, -r_z, r_x) shine/C1.
        const Vec r = add(scaled(n, 2 * dot(n, light)), scaled(light, -1));
        const double k1 = s.shine / kShC1;
        for (int ch = 0; ch < 3; ++ch) {
            float* sh = &c.sh[i * per + ch * (per / 3)];
            sh[0] = float(k1 * r[1]);
            sh[1] = float(-k1 * r[2]);
            sh[2] = float(k1 * r[0]);
        }
        if (ids) ids->push_back(first_id + std::uint32_t(k));
    }
}

// ---- extras ----------------------------------------------------------------------------------

// A camera swinging 35° either side of the front, a little above the scene, closing in and
// back, looking at the torus; its last keyframe is its first (a loop).
fourdgs::Camera circling_camera() {
    fourdgs::Camera cam;
    cam.fov_y_deg = 50;
    cam.interpolation = "spline";
    cam.loop = true;
    const Vec target = {0, 0.9, 0};
    for (int k = 0; k <= 8; ++k) {
        const double phase = 2 * kPi * k / 8;
        const double a = kPi / 2 + 0.6 * std::sin(phase), radius = 6.4 - 0.8 * std::sin(phase / 2);
        cam.keyframes.push_back({kDuration * k / 8,
                                 {radius * std::cos(a), 2.6, radius * std::sin(a)}, target});
    }
    cam.position = cam.keyframes[0].position;
    cam.target = target;
    return cam;
}

// A one-second mono hum (110 Hz and its octave), 8 kHz 16-bit PCM in a RIFF WAVE file.
std::vector<std::uint8_t> hum_wav() {
    constexpr std::uint32_t rate = 8000, samples = rate;
    std::vector<std::uint8_t> w;
    auto u32 = [&](std::uint32_t v) { for (int b = 0; b < 4; ++b) w.push_back(std::uint8_t(v >> (8 * b))); };
    auto u16 = [&](std::uint16_t v) { w.push_back(std::uint8_t(v)); w.push_back(std::uint8_t(v >> 8)); };
    auto tag = [&](const char* s) { w.insert(w.end(), s, s + 4); };
    tag("RIFF"); u32(36 + 2 * samples); tag("WAVE");
    tag("fmt "); u32(16); u16(1); u16(1); u32(rate); u32(2 * rate); u16(2); u16(16);
    tag("data"); u32(2 * samples);
    for (std::uint32_t i = 0; i < samples; ++i) {
        const double t = double(i) / rate;
        const double v = 0.3 * std::sin(2 * kPi * 110 * t) + 0.15 * std::sin(2 * kPi * 220 * t);
        u16(std::uint16_t(std::int16_t(std::lround(v * 32767))));
    }
    return w;
}

fourdgs::SceneHeader scene_header(const std::string& title,
                                  const std::vector<fourdgs::AudioSource::Keyframe>& path,
                                  const std::vector<std::uint8_t>& wav) {
    fourdgs::SceneHeader h;
    h.duration_sec = kDuration;
    h.sh_degree = kShDegree;
    h.library = "fourdgs examples/scenes/make_scenes";
    h.camera = circling_camera();
    h.metadata.push_back({"scene",
                          {{"title", title},
                           {"generator", "examples/scenes/make_scenes.cpp"},
                           {"visibility_profile", "gaussian"}}});  // soft fades (§3.1)
    // Metres, y up, looking down -z, right-handed (§2).
    h.coordinate_frames = {{"", fourdgs::Handedness::right, fourdgs::Axis::pos_y,
                            fourdgs::Axis::neg_z, fourdgs::LengthUnit::metre, 1.0}};
    fourdgs::AudioSource a;
    a.source_id = 1;
    a.name = "ball hum";
    a.codec = "wav";
    a.channel_layout = "mono";
    a.duration_sec = 1;
    a.flags = fourdgs::kAudioFlagSpatial | fourdgs::kAudioFlagLoop;
    a.position = path.front().position;
    a.keyframes = path;
    a.interpolation = "linear";
    h.audio.push_back({a, fourdgs::Bytes(wav.data(), wav.size())});
    return h;
}

fourdgs::WriterOptions writer_options() {
    fourdgs::WriterOptions o;
    o.preset = fourdgs::Preset::coarse;
    o.sh_depths = {5};
    o.effort = fourdgs::Effort::max;
    o.threads = 1;
    return o;
}

bool save(const std::string& path, const fourdgs::Result<std::vector<std::uint8_t>>& bytes) {
    if (!bytes.ok()) {
        std::fprintf(stderr, "make_scenes: %s: %s\n", path.c_str(),
                     bytes.error().message.c_str());
        return false;
    }
    std::FILE* f = std::fopen(path.c_str(), "wb");
    const bool ok = f && std::fwrite(bytes->data(), 1, bytes->size(), f) == bytes->size();
    if (f) std::fclose(f);
    if (!ok) std::fprintf(stderr, "make_scenes: cannot write %s\n", path.c_str());
    else std::printf("%s: %zu bytes\n", path.c_str(), bytes->size());
    return ok;
}

const Vec kTorusCentre = {0, 1.45, 0};

// ---- the gaussian-birth scene ----------------------------------------------------------------

bool write_showcase(const std::string& path, const std::vector<std::uint8_t>& wav) {
    fourdgs::GaussianColumns c;
    c.sh_degree = kShDegree;
    append(c, ground(240, 5), {}, {});
    append(c, torus(kTorusCentre, 1.0, 0.38, 420, 144), {}, {});
    // The ball rolls (slides) across the front, one window a second on its velocity.
    const Shape b = ball(0.45, 15000);
    const Vec speed = {1.0, 0, 0};
    for (int w = 0; w < int(kDuration); ++w) {
        const Vec at = {-3.0 + w * speed[0], 0.47, 1.9};
        append(c, b, at, {speed, double(w), std::numeric_limits<double>::infinity(), double(w),
                          double(w + 1)});
    }
    // Each box fades in and out on its own temporal gaussian, rising a little meanwhile.
    for (int k = 0; k < 8; ++k) {
        const double mu = 0.6 + 0.65 * k;
        append(c, box(kBoxSide, 22, kBoxTints[k]), box_place(k),
               {{0, 0.12, 0}, mu, 0.55, std::max(0.0, mu - 1.7), std::min(kDuration, mu + 1.7)});
    }
    const std::vector<fourdgs::AudioSource::Keyframe> ball_path = {
        {0, {-3.0, 0.47, 1.9}, {0, 0, 0, 1}}, {kDuration, {3.0, 0.47, 1.9}, {0, 0, 0, 1}}};
    fourdgs::SceneInput in;
    in.header = scene_header("showcase: torus, rolling ball, boxes that come and go", ball_path, wav);
    in.gaussians = c.batch();
    return save(path, fourdgs::write_scene(in, writer_options()));
}

// ---- the keyframe-delta scene ----------------------------------------------------------------

constexpr int kStatesPerSecond = 10;
constexpr double kOrbit = 2.1, kOrbitTurnsPerSecond = 1.0 / kDuration;

Vec orbit_place(double t) {
    const double a = 2 * kPi * kOrbitTurnsPerSecond * t + kPi / 2;
    return {kOrbit * std::cos(a), 0.47, kOrbit * std::sin(a)};
}

bool write_keyframes(const std::string& path, const std::vector<std::uint8_t>& wav) {
    const Shape floor = ground(200, 5), ring = torus(kTorusCentre, 1.0, 0.38, 330, 110);
    const Shape b = ball(0.45, 10000);
    std::vector<Shape> boxes;
    for (int k = 0; k < 8; ++k) boxes.push_back(box(kBoxSide, 18, kBoxTints[k]));
    // Ids: each shape's gaussians consecutive, the same in every state they are in.
    const std::uint32_t ring_id = std::uint32_t(floor.splats.size());
    const std::uint32_t ball_id = ring_id + std::uint32_t(ring.splats.size());
    const std::uint32_t box_id = ball_id + std::uint32_t(b.splats.size());
    const std::uint32_t per_box = std::uint32_t(boxes[0].splats.size());

    const int steps = int(kDuration) * kStatesPerSecond;
    std::vector<fourdgs::GaussianColumns> columns(steps);
    std::vector<std::vector<std::uint32_t>> ids(steps);
    std::vector<fourdgs::KeyframeStep> states;
    for (int s = 0; s < steps; ++s) {
        const double t = double(s) / kStatesPerSecond;
        auto& c = columns[s];
        c.sh_degree = kShDegree;
        append(c, floor, {}, {}, &ids[s], 0);
        append(c, ring, {}, {}, &ids[s], ring_id);
        append(c, b, orbit_place(t), {}, &ids[s], ball_id);
        // Box k is there from 0.6 k s for 1.6 s, then gone: births and deaths between states.
        for (int k = 0; k < 8; ++k)
            if (t >= 0.6 * k && t < 0.6 * k + 1.6)
                append(c, boxes[k], box_place(k), {}, &ids[s], box_id + k * per_box);
        // The writer derives mu_t; sigma_t is +inf (a state holds until the next one).
        c.mu_t.clear();
        c.win_lo.clear();
        c.win_hi.clear();
        states.push_back({t, c.batch(), ids[s]});
    }
    std::vector<fourdgs::AudioSource::Keyframe> ball_path;
    for (int k = 0; k <= 12; ++k)
        ball_path.push_back({kDuration * k / 12, orbit_place(kDuration * k / 12), {0, 0, 0, 1}});
    fourdgs::KeyframeWriterOptions o;
    o.base = writer_options();
    o.keyframe_every = 2 * kStatesPerSecond;
    return save(path, fourdgs::write_keyframe_delta(
                          states, scene_header("keyframes: torus, a ball circling it, boxes "
                                               "born and dying between states", ball_path, wav),
                          o));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: fourdgs-make-scenes OUT_DIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    const auto wav = hum_wav();
    bool ok = write_showcase(dir + "/showcase.4dgs", wav);
    ok = write_keyframes(dir + "/keyframes.4dgs", wav) && ok;
    return ok ? 0 : 1;
}
