// The writers' scene extras (writer.hpp's SceneHeader contract): camera, moving audio sources,
// the provenance family and tracked objects with embeddings are written by write_scene,
// StreamingWriter and write_keyframe_delta, read back through every reader, and reconstructed
// at several instants against values this file computes with its own formulas (its own
// quaternion algebra, slerp, lerp, Catmull-Rom and loop arithmetic — nothing from pose.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "fourdgs/extras.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/reconstruct.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "fourdgs/writer.hpp"

using namespace fourdgs;

namespace {

using ByteVec = std::vector<std::uint8_t>;
constexpr double kDuration = 10.0;
constexpr double kPi = 3.14159265358979323846;

// ---- the test's own rigid-motion arithmetic --------------------------------------------------

struct Q {
    double x, y, z, w;
};
struct V {
    double x, y, z;
};

Q q_of(const std::array<double, 4>& a) { return {a[0], a[1], a[2], a[3]}; }
V v_of(const std::array<double, 3>& a) { return {a[0], a[1], a[2]}; }

Q unit(Q q) {
    const double n = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
    return {q.x / n, q.y / n, q.z / n, q.w / n};
}
// Rotation of `angle` radians about a unit axis.
std::array<double, 4> axis_angle(V axis, double angle) {
    const double s = std::sin(angle / 2);
    return {axis.x * s, axis.y * s, axis.z * s, std::cos(angle / 2)};
}
// Hamilton product in vector form: (w1 w2 - v1.v2, w1 v2 + w2 v1 + v1 x v2).
Q mul(Q a, Q b) {
    const V c{a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
    return {a.w * b.x + b.w * a.x + c.x, a.w * b.y + b.w * a.y + c.y, a.w * b.z + b.w * a.z + c.z,
            a.w * b.w - (a.x * b.x + a.y * b.y + a.z * b.z)};
}
// Through the rotation matrix of a unit quaternion.
V rot(Q q, V v) {
    const double x = q.x, y = q.y, z = q.z, w = q.w;
    const double m[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                            {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                            {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
    return {m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z,
            m[1][0] * v.x + m[1][1] * v.y + m[1][2] * v.z,
            m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z};
}
V add(V a, V b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
V scaled(V a, double s) { return {a.x * s, a.y * s, a.z * s}; }
V mix(V a, V b, double u) { return add(scaled(a, 1 - u), scaled(b, u)); }
// Shortest-arc slerp by the half-angle formula on unit inputs.
Q slerp(Q a, Q b, double u) {
    a = unit(a);
    b = unit(b);
    double d = a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    if (d < 0) {
        b = {-b.x, -b.y, -b.z, -b.w};
        d = -d;
    }
    if (d > 1 - 1e-12) return unit({a.x + (b.x - a.x) * u, a.y + (b.y - a.y) * u,
                                    a.z + (b.z - a.z) * u, a.w + (b.w - a.w) * u});
    const double th = std::acos(d);
    const double wa = std::sin((1 - u) * th) / std::sin(th), wb = std::sin(u * th) / std::sin(th);
    return unit({wa * a.x + wb * b.x, wa * a.y + wb * b.y, wa * a.z + wb * b.z,
                 wa * a.w + wb * b.w});
}

struct RigidPose {
    Q r{0, 0, 0, 1};
    V t{0, 0, 0};
};

// A sampled trajectory (times, rotations, translations), linear or step, clamped at the ends.
RigidPose sample(const std::vector<TrajectorySample>& s, bool step, double t) {
    if (t <= s.front().time) return {unit(q_of(s.front().rotation)), v_of(s.front().translation)};
    if (t >= s.back().time) return {unit(q_of(s.back().rotation)), v_of(s.back().translation)};
    std::size_t i = 0;
    while (s[i + 1].time <= t) ++i;
    if (step) return {unit(q_of(s[i].rotation)), v_of(s[i].translation)};
    const double u = (t - s[i].time) / (s[i + 1].time - s[i].time);
    return {slerp(q_of(s[i].rotation), q_of(s[i + 1].rotation), u),
            mix(v_of(s[i].translation), v_of(s[i + 1].translation), u)};
}

void check_vec(V got, V want, double tol) {
    CHECK(std::fabs(got.x - want.x) <= tol);
    CHECK(std::fabs(got.y - want.y) <= tol);
    CHECK(std::fabs(got.z - want.z) <= tol);
}
// q and -q are one rotation.
void check_rotation(Q got, Q want, double tol) {
    const double d = got.x * want.x + got.y * want.y + got.z * want.z + got.w * want.w;
    const double s = d < 0 ? -1 : 1;
    CHECK(std::fabs(got.x - s * want.x) <= tol);
    CHECK(std::fabs(got.y - s * want.y) <= tol);
    CHECK(std::fabs(got.z - s * want.z) <= tol);
    CHECK(std::fabs(got.w - s * want.w) <= tol);
}
V vec3(const std::array<double, 3>& a) { return v_of(a); }
Q quat(const std::array<double, 4>& a) { return q_of(a); }

// ---- the scene ---------------------------------------------------------------------------------

ByteVec pattern(std::size_t n, std::uint8_t seed) {
    ByteVec v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed + i * 7 + (i >> 8));
    return v;
}

struct Payloads {
    ByteVec voice = pattern(5000, 1), steps = pattern(6100, 2), bed = pattern(7300, 3);
};

std::vector<TrajectorySample> samples(std::initializer_list<TrajectorySample> s) { return s; }

// One audio source's descriptor fields that every source sets, and its payload.
AudioSourceInput source(std::uint32_t id, const char* name, const char* codec, const char* layout,
                        double start, double duration, double gain, std::uint8_t flags,
                        const char* interpolation, const ByteVec& data) {
    AudioSourceInput a;
    a.descriptor.source_id = id;
    a.descriptor.name = name;
    a.descriptor.codec = codec;
    a.descriptor.channel_layout = layout;
    a.descriptor.start_sec = start;
    a.descriptor.duration_sec = duration;
    a.descriptor.gain = gain;
    a.descriptor.flags = flags;
    a.descriptor.interpolation = interpolation;
    a.data = data;
    return a;
}

// Three moving sources (linear + loop, step, a static bed), a spline camera path, two frames, a
// rig-mounted camera and a scene-fixed lidar on a moving rig, a geodetic anchor, an Object Table
// with embeddings and two Object Tracks (linear and step). Rotations are given unnormalized and
// with sign flips on purpose.
SceneHeader extras_header(const Payloads& p) {
    SceneHeader h;
    h.duration_sec = kDuration;
    h.cutoff = 0.05;
    h.metadata.push_back(Metadata{"capture", {{"site", "bay 4"}}});
    h.attachments.push_back(AttachmentInput{"notes.txt", "text/plain", Bytes(p.bed).first(10)});

    Camera cam;
    cam.fov_y_deg = 50;
    cam.position = {0, 1, 5};
    cam.target = {0, 0, 0};
    cam.keyframes = {{0, {0, 1, 5}, {0, 0, 0}},
                     {3, {4, 1, 3}, {0, 0.5, 0}},
                     {6, {2, 2, -4}, {1, 0, 0}},
                     {9, {-3, 1, 0}, {0, 0, 1}}};
    cam.interpolation = "spline";
    cam.loop = false;
    h.camera = cam;

    AudioSourceInput voice = source(7, "voice", "opus", "mono", 1.0, 3.0, 0.8,
                                    kAudioFlagSpatial | kAudioFlagLoop, "linear", p.voice);
    voice.descriptor.data_length = 12345;  // the writer sets it from the payload
    voice.descriptor.rotation = {0, 0, 0, 3};
    voice.descriptor.keyframes = {
        {0, {0, 0, 0}, {0, 0, 0, 2}},
        {4, {4, 0, 0}, {0, 0, 3 * std::sin(kPi / 4), 3 * std::cos(kPi / 4)}},
        {8, {4, 4, 2}, {-std::sin(kPi / 6), 0, 0, -std::cos(kPi / 6)}}};  // sign-flipped
    AudioSourceInput steps = source(3, "footsteps", "flac", "mono", 0, 10, 1.25,
                                    kAudioFlagSpatial, "step", p.steps);
    steps.descriptor.keyframes = {{2, {1, 0, 1}, {0, 0.5, 0, 0.5}},
                                  {5, {2, 0, 1}, {0, 0, 0, 1}},
                                  {7, {3, 0, 2}, axis_angle({1, 0, 0}, 1.0)}};
    AudioSourceInput bed = source(11, "ambience", "opus", "stereo", 2.5, 4, 0.5, 0, "linear", p.bed);
    bed.descriptor.position = {0, 3, 0};
    bed.descriptor.rotation = {0, 0, 1, 1};
    h.audio = {voice, steps, bed};

    h.coordinate_frames = {
        CoordinateFrame{"", Handedness::right, Axis::pos_y, Axis::neg_z, LengthUnit::metre, 1.0},
        CoordinateFrame{"lidar", Handedness::right, Axis::pos_z, Axis::pos_x, LengthUnit::metre,
                        1.0}};
    SensorCalibration cam0;
    cam0.name = "cam0";
    cam0.modality = "camera";
    cam0.camera_model = CameraModel::pinhole;
    cam0.width_px = 640;
    cam0.height_px = 480;
    cam0.fx = cam0.fy = 500;
    cam0.cx = 320;
    cam0.cy = 240;
    cam0.rotation = axis_angle({1, 0, 0}, 0.2);
    cam0.translation = {0.1, 0, 0.05};
    cam0.pose_reference = PoseReference::rig;
    cam0.rig_name = "rig0";
    SensorCalibration lidar0;
    lidar0.name = "lidar0";
    lidar0.modality = "lidar";
    lidar0.rotation = {0, 0, 0, 2};
    lidar0.translation = {0, 1.5, 0};
    h.sensors = {cam0, lidar0};
    h.rig_trajectories = {RigTrajectory{
        "rig0", TrajectoryInterpolation::linear,
        samples({{0, {0, 0, 0, 1}, {0, 0, 0}},
                 {4, axis_angle({0, 1, 0}, kPi / 2), {4, 0, 0}},
                 {10, axis_angle({0, 1, 0}, kPi), {4, 0, 6}}})}};
    h.geodetic_anchors = {GeodeticAnchor{"", 47.37, 8.54, 408, 90}};

    ObjectTable table;
    table.embedding_dim = 4;
    ObjectTable::Entry car{1, "car", {0, 0, 0}, ObjectTable::Dynamics{{1, 0, 0}, {0, 0, 0.1f}, {}},
                           std::vector<float>{1, 0, 0, 0}};
    ObjectTable::Entry person{2, "person", {1, 0, 0}, std::nullopt,
                              std::vector<float>{0.6f, 0.8f, 0, 0}};
    ObjectTable::Entry tree{3, "tree", {0, 0, 5}, std::nullopt, std::vector<float>{0, 0, 2, 0}};
    ObjectTable::Entry sign{4, "sign", {2, 0, 5}, std::nullopt, std::nullopt};
    table.entries = {car, person, tree, sign};
    h.object_table = table;
    h.object_tracks = {
        ObjectTrack{1, TrajectoryInterpolation::linear,
                    samples({{1, {0, 0, 0, 1}, {0, 0, 0}},
                             {5, axis_angle({0, 0, 1}, kPi / 2), {1, 2, 0}},
                             {9, {-0.5, 0, 0, -0.8}, {-1, 0, 3}}})},
        ObjectTrack{2, TrajectoryInterpolation::step,
                    samples({{0, {0, 0, 0, 1}, {0, 0, 0}},
                             {3, axis_angle({0, 1, 0}, kPi / 4), {0, 1, 0}},
                             {6, axis_angle({1, 0, 0}, kPi / 6), {2, 0, 0}}})}};
    return h;
}

// 60 gaussians: object ids 0 (background), 1 and 2 in turn, each moving, never fading, living
// over the whole scene; source_index carries the input index so the test can find each one.
struct Gaussians {
    std::size_t n = 60;
    std::vector<float> position, scale, rotation, color, motion, mu_t, sigma_t;
    std::vector<double> win_lo, win_hi;
    std::vector<std::uint32_t> object_id;
    std::vector<std::int32_t> source_group, source_index;

    Gaussians() {
        for (std::size_t i = 0; i < n; ++i) {
            const double a = 0.37 * static_cast<double>(i);
            position.insert(position.end(), {static_cast<float>(2 * std::cos(a)),
                                             static_cast<float>(0.05 * i - 1.5),
                                             static_cast<float>(2 * std::sin(a))});
            scale.insert(scale.end(), {0.05f, 0.06f, 0.07f});
            const auto q = axis_angle({0, 1, 0}, 0.1 * static_cast<double>(i));
            rotation.insert(rotation.end(), {static_cast<float>(2 * q[0]), static_cast<float>(2 * q[1]),
                                             static_cast<float>(2 * q[2]), static_cast<float>(2 * q[3])});
            color.insert(color.end(), {0.5f, 0.25f, 0.75f, 0.9f});
            motion.insert(motion.end(), {0.1f * static_cast<float>(i % 4), -0.05f,
                                         0.02f * static_cast<float>(i % 3)});
            mu_t.push_back(static_cast<float>(1 + (i % 5)));
            sigma_t.push_back(std::numeric_limits<float>::infinity());
            win_lo.push_back(0);
            win_hi.push_back(kDuration);
            object_id.push_back(static_cast<std::uint32_t>(i % 3));
            source_group.push_back(0);
            source_index.push_back(static_cast<std::int32_t>(i));
        }
    }
    // `windows` false: win_lo/win_hi empty, as StreamingWriter::add_window and keyframe steps
    // take them.
    GaussianBatch batch(bool windows = true) const {
        const std::span<const double> lo = windows ? std::span<const double>(win_lo) : std::span<const double>{};
        const std::span<const double> hi = windows ? std::span<const double>(win_hi) : std::span<const double>{};
        return {.count = n, .position = position, .scale = scale, .rotation = rotation,
                .color = color, .motion = motion, .mu_t = mu_t, .sigma_t = sigma_t,
                .win_lo = lo, .win_hi = hi, .sh_degree = 0, .sh = {}, .object_id = object_id,
                .source_group = source_group, .source_index = source_index};
    }
    std::array<double, 6> aabb() const {
        std::array<double, 6> box{};
        for (int c = 0; c < 3; ++c) box[c] = box[3 + c] = position[c];
        for (std::size_t i = 0; i < n; ++i)
            for (int c = 0; c < 3; ++c) {
                box[c] = std::min<double>(box[c], position[i * 3 + c]);
                box[3 + c] = std::max<double>(box[3 + c], position[i * 3 + c]);
            }
        return box;
    }
};

WriterOptions small_chunks() {
    WriterOptions o;
    o.max_chunk_gaussians = 16;  // several chunks, so "no chunk fetched" means something
    o.threads = 1;
    return o;
}

double bound(const Quantization& q, const std::string& key) {
    for (const auto& [k, v] : q.bounds)
        if (k == key) return std::stod(v);
    FAIL("no bounds key " << key);
    return 0;
}

// ---- the records of a file -------------------------------------------------------------------

struct Rec {
    std::uint8_t opcode;
    std::uint64_t offset, length;
};
std::vector<Rec> walk(const ByteVec& file) {
    std::vector<Rec> out;
    std::uint64_t at = kMagicSize;
    while (at + kMagicSize < file.size()) {
        auto r = parse_record(Bytes(file).subspan(at), at);
        REQUIRE(r.ok());
        out.push_back({r->opcode, at, r->total_length()});
        at += r->total_length();
    }
    REQUIRE(at + kMagicSize == file.size());
    return out;
}
std::vector<std::uint8_t> opcodes(const ByteVec& file) {
    std::vector<std::uint8_t> ops;
    for (const Rec& r : walk(file)) ops.push_back(r.opcode);
    return ops;
}
std::size_t count_of(const std::vector<std::uint8_t>& ops, std::uint8_t opcode) {
    return static_cast<std::size_t>(std::count(ops.begin(), ops.end(), opcode));
}

// The contract's order of the front matter after Metadata and Attachments.
void check_front_order(const ByteVec& file, std::size_t audio_sources, bool keyframe_delta) {
    const std::vector<std::uint8_t> ops = opcodes(file);
    // A keyframe-delta file starts with a keyframe, itself a Chunk record (§11.1).
    const auto first_chunk = std::find_if(ops.begin(), ops.end(), [](std::uint8_t o) {
                                 return o == op::chunk || o == op::delta_chunk;
                             }) - ops.begin();
    CHECK(ops[static_cast<std::size_t>(first_chunk)] == op::chunk);
    std::vector<std::uint8_t> front(ops.begin(), ops.begin() + first_chunk);
    // Header, Quantization, Window Table, then metadata and attachments, then the extras.
    REQUIRE(front.size() >= 3);
    CHECK(front[0] == op::header);
    CHECK(front[1] == op::quantization);
    CHECK(front[2] == op::window_table);
    std::vector<std::uint8_t> extras;
    bool past_content = false;
    for (std::size_t i = 3; i < front.size(); ++i) {
        const bool content = front[i] == op::metadata || front[i] == op::attachment;
        if (!content) past_content = true;
        if (content) {
            INFO("a Metadata/Attachment record after the extras, at record " << i);
            CHECK_FALSE(past_content);
        } else {
            extras.push_back(front[i]);
        }
    }
    std::vector<std::uint8_t> want = {op::camera};
    for (std::size_t i = 0; i < audio_sources; ++i) {
        want.push_back(op::audio_source);
        want.push_back(op::audio_data);  // each Data right after its Source, before a chunk (M092)
    }
    for (std::uint8_t o : {op::coordinate_frame, op::coordinate_frame, op::sensor_calibration,
                           op::sensor_calibration, op::rig_trajectory, op::geodetic_anchor,
                           op::object_table, op::object_track, op::object_track})
        want.push_back(o);
    CHECK(extras == want);
    CHECK(std::is_sorted(extras.begin() + 1 + 2 * static_cast<std::ptrdiff_t>(audio_sources),
                         extras.end()));
    // Nothing of the extras after the first chunk; a keyframe-delta file's states follow.
    for (std::size_t i = static_cast<std::size_t>(first_chunk); i < ops.size(); ++i) {
        CHECK((ops[i] < op::audio_source || ops[i] > op::object_track));
        CHECK(ops[i] != op::camera);
        CHECK(ops[i] != op::audio_legacy);
    }
    CHECK(count_of(ops, op::delta_chunk) == (keyframe_delta ? 1u : 0u));
}

// ---- reading back ------------------------------------------------------------------------------

// The extras a reader returns are the input (audio descriptors with data_length and unit
// rotations).
void check_extras_read(const SceneInfo& got, const SceneHeader& in) {
    CHECK(got.header.has_audio());
    REQUIRE(got.camera.has_value());
    CHECK(*got.camera == *in.camera);
    REQUIRE(got.audio.size() == in.audio.size());
    for (std::size_t i = 0; i < in.audio.size(); ++i) {
        const AudioSource& d = got.audio[i].descriptor;
        const AudioSource& want = in.audio[i].descriptor;
        CHECK_FALSE(got.audio[i].legacy);
        CHECK(d.source_id == want.source_id);
        CHECK(d.name == want.name);
        CHECK(d.data_length == in.audio[i].data.size());
        CHECK(got.audio[i].payload.length == in.audio[i].data.size());
        CHECK(d.keyframes.size() == want.keyframes.size());
        check_rotation(quat(d.rotation), unit(quat(want.rotation)), 1e-15);
    }
    CHECK(got.coordinate_frames == in.coordinate_frames);
    CHECK(got.sensors == in.sensors);
    CHECK(got.rig_trajectories == in.rig_trajectories);
    CHECK(got.geodetic_anchors == in.geodetic_anchors);
    CHECK(got.object_table == in.object_table);
    CHECK(got.object_tracks == in.object_tracks);
}

// §7.1/§7.2 by the test's own arithmetic.
struct ExpectedAudio {
    bool active;
    double local;
    RigidPose pose;
};
ExpectedAudio expected_audio(const AudioSource& s, double t) {
    ExpectedAudio e;
    const bool loop = (s.flags & kAudioFlagLoop) != 0;
    e.active = t >= s.start_sec && (loop || t < s.start_sec + s.duration_sec);
    const double elapsed = std::max(0.0, t - s.start_sec);
    e.local = loop ? elapsed - s.duration_sec * std::floor(elapsed / s.duration_sec)
                   : std::min(elapsed, s.duration_sec);
    if (s.keyframes.empty()) {
        e.pose = {unit(quat(s.rotation)), vec3(s.position)};
    } else {
        std::vector<TrajectorySample> k;
        for (const auto& f : s.keyframes) k.push_back({f.time, f.rotation, f.position});
        e.pose = sample(k, s.interpolation == "step", t);
    }
    return e;
}

// §5.10 uniform Catmull-Rom (end keys duplicated), clamped, by the test's own polynomial.
V catmull_rom(V p0, V p1, V p2, V p3, double u) {
    auto f = [&](double a, double b, double c, double d) {
        return 0.5 * (2 * b + (-a + c) * u + (2 * a - 5 * b + 4 * c - d) * u * u +
                      (-a + 3 * b - 3 * c + d) * u * u * u);
    };
    return {f(p0.x, p1.x, p2.x, p3.x), f(p0.y, p1.y, p2.y, p3.y), f(p0.z, p1.z, p2.z, p3.z)};
}
std::pair<V, V> expected_camera(const Camera& c, double t) {
    const auto& k = c.keyframes;
    const std::size_t n = k.size();
    if (c.loop) {
        const double span = k.back().time - k.front().time;
        t = k.front().time + (t - k.front().time) - span * std::floor((t - k.front().time) / span);
    }
    if (t <= k.front().time) return {vec3(k.front().position), vec3(k.front().target)};
    if (t >= k.back().time) return {vec3(k.back().position), vec3(k.back().target)};
    std::size_t i = 0;
    while (k[i + 1].time <= t) ++i;
    const double u = (t - k[i].time) / (k[i + 1].time - k[i].time);
    if (c.interpolation == "linear")
        return {mix(vec3(k[i].position), vec3(k[i + 1].position), u),
                mix(vec3(k[i].target), vec3(k[i + 1].target), u)};
    auto at = [&](std::ptrdiff_t j) -> const Camera::Keyframe& {
        return k[static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(j, 0, n - 1))];
    };
    const auto ii = static_cast<std::ptrdiff_t>(i);
    return {catmull_rom(vec3(at(ii - 1).position), vec3(at(ii).position), vec3(at(ii + 1).position),
                        vec3(at(ii + 2).position), u),
            catmull_rom(vec3(at(ii - 1).target), vec3(at(ii).target), vec3(at(ii + 1).target),
                        vec3(at(ii + 2).target), u)};
}

const ObjectTrack* track_for(const SceneHeader& h, std::uint32_t id) {
    for (const ObjectTrack& t : h.object_tracks)
        if (t.object_id == id) return &t;
    return nullptr;
}

// Every pure function of the extras at instant t, against the test's own values.
void check_extras_at(const SceneInfo& scene, const SceneHeader& in, double t) {
    INFO("t = " << t);
    for (const AudioSourceInput& a : in.audio) {
        INFO("audio source " << a.descriptor.source_id);
        const ExpectedAudio e = expected_audio(a.descriptor, t);
        auto got = audio_state_at(scene, a.descriptor.source_id, t);
        REQUIRE(got.has_value());
        CHECK(got->active == e.active);
        CHECK(std::fabs(got->local_time - e.local) <= 1e-12);
        CHECK(got->gain == a.descriptor.gain);
        check_vec(vec3(got->pose.translation), e.pose.t, 1e-12);
        check_rotation(quat(got->pose.rotation), e.pose.r, 1e-12);
    }
    CHECK_FALSE(audio_state_at(scene, 999, t).has_value());

    const auto [cam_pos, cam_target] = expected_camera(*in.camera, t);
    const CameraView view = camera_at(*scene.camera, t);
    check_vec(vec3(view.position), cam_pos, 1e-12);
    check_vec(vec3(view.target), cam_target, 1e-12);
    CHECK(view.fov_y_deg == in.camera->fov_y_deg);

    // cam0 rides rig0: rig(t) ∘ extrinsic; lidar0 is fixed in the scene frame.
    const RigidPose rig = sample(in.rig_trajectories[0].samples, false, t);
    const SensorCalibration& cam0 = in.sensors[0];
    const Q ext = unit(quat(cam0.rotation));
    auto cam_pose = sensor_pose_at(scene, "cam0", t);
    REQUIRE(cam_pose.ok());
    check_rotation(quat(cam_pose->rotation), mul(rig.r, ext), 1e-12);
    check_vec(vec3(cam_pose->translation), add(rot(rig.r, vec3(cam0.translation)), rig.t), 1e-12);
    auto lidar_pose = sensor_pose_at(scene, "lidar0", t);
    REQUIRE(lidar_pose.ok());
    check_rotation(quat(lidar_pose->rotation), {0, 0, 0, 1}, 1e-15);
    check_vec(vec3(lidar_pose->translation), {0, 1.5, 0}, 0);
    auto unknown = sensor_pose_at(scene, "nope", t);
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().refusal == "unknown-sensor");

    for (std::uint32_t id : {1u, 2u}) {
        const ObjectTrack& tr = *track_for(in, id);
        const RigidPose want = sample(tr.samples, tr.interpolation == TrajectoryInterpolation::step, t);
        auto got = object_pose_at(scene, id, t);
        REQUIRE(got.has_value());
        check_rotation(quat(got->rotation), want.r, 1e-12);
        check_vec(vec3(got->translation), want.t, 1e-12);
    }
    CHECK_FALSE(object_pose_at(scene, 3, t).has_value());  // a table entry without a track
    CHECK_FALSE(object_pose_at(scene, 0, t).has_value());  // background never moves
}

// Embedding search against the test's own cosine ranking.
void check_embeddings(const SceneInfo& scene) {
    REQUIRE(scene.object_table.has_value());
    const std::vector<float> query = {1, 1, 0, 0};
    // cos(car) = 1/sqrt2, cos(person) = 1.4/sqrt2, cos(tree) = 0; sign has no embedding.
    auto best = objects_by_embedding(*scene.object_table, query, 2);
    REQUIRE(best.ok());
    REQUIRE(best->size() == 2);
    CHECK((*best)[0].object_id == 2);
    CHECK(std::fabs((*best)[0].similarity - 1.4 / std::sqrt(2.0)) <= 1e-6);
    CHECK((*best)[1].object_id == 1);
    CHECK(std::fabs((*best)[1].similarity - 1 / std::sqrt(2.0)) <= 1e-6);
    auto all = objects_by_embedding(*scene.object_table, query, 10);
    REQUIRE(all.ok());
    REQUIRE(all->size() == 3);
    CHECK((*all)[2].object_id == 3);
    CHECK(std::fabs((*all)[2].similarity) <= 1e-7);
}

// The decoded gaussians evaluated at t with the tracks composed, against the test's own §3
// arithmetic on the input (center = p + v (t - mu_t), then R center + T for a tracked object).
// `index_of(block, i)` maps a decoded gaussian to its input index.
template <class IndexOf>
void check_gaussians_at(const GaussianBlock& block, const SceneInfo& scene, const Gaussians& g,
                        const std::vector<V>& rest, const std::vector<double>& mu, double t,
                        IndexOf&& index_of) {
    INFO("gaussians at t = " << t);
    const Quantization& q = scene.quantization;
    Frame frame;
    EvaluateOptions options;
    options.tracks = scene.object_tracks;
    evaluate(block, t, scene.header.cutoff, frame, options);
    REQUIRE(frame.count == block.count);  // never fading, alive over the whole scene
    const double pos = bound(q, "pos"), vel = bound(q, "motion"), tim = bound(q, "time"),
                 rb = bound(q, "rot");
    CHECK(pos < 1e-3);  // the bounds are tight enough for the comparison to mean something
    std::map<std::uint32_t, std::size_t> per_object;
    for (std::size_t o = 0; o < frame.count; ++o) {
        const std::size_t i = index_of(block, frame.source[o]);
        INFO("input gaussian " << i);
        const V v{g.motion[i * 3], g.motion[i * 3 + 1], g.motion[i * 3 + 2]};
        const double dt = t - mu[i];
        V center = add(rest[i], scaled(v, dt));
        Q orientation = unit({g.rotation[i * 4], g.rotation[i * 4 + 1], g.rotation[i * 4 + 2],
                              g.rotation[i * 4 + 3]});
        const std::uint32_t id = g.object_id[i];
        CHECK(frame.object_id[o] == id);
        ++per_object[id];
        if (const ObjectTrack* tr = id ? [&]() -> const ObjectTrack* {
                for (const ObjectTrack& x : scene.object_tracks)
                    if (x.object_id == id) return &x;
                return nullptr;
            }() : nullptr) {
            const RigidPose p = sample(tr->samples, tr->interpolation == TrajectoryInterpolation::step, t);
            center = add(rot(p.r, center), p.t);
            orientation = mul(p.r, orientation);
        }
        // Per axis the error is at most pos + |dt| motion + |v| time; a track's rotation turns
        // that box, so the bound that survives it is the box's diagonal.
        const double speed = std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
        const double tol = std::sqrt(3.0) * (pos + vel * std::fabs(dt) + tim * speed) + 1e-5;
        const V got{frame.center[o * 3], frame.center[o * 3 + 1], frame.center[o * 3 + 2]};
        const V err = add(got, scaled(center, -1));
        CHECK(std::sqrt(err.x * err.x + err.y * err.y + err.z * err.z) <= tol);
        check_rotation({frame.rotation[o * 4], frame.rotation[o * 4 + 1],
                        frame.rotation[o * 4 + 2], frame.rotation[o * 4 + 3]},
                       orientation, 8 * rb + 1e-4);
    }
    for (std::uint32_t id : {0u, 1u, 2u}) {
        const std::vector<std::size_t> members =
            gaussians_of_object(block, id, t, scene.header.cutoff);
        CHECK(members.size() == per_object[id]);
        CHECK(members.size() == g.n / 3);
        for (std::size_t i : members) CHECK(block.object_id[i] == id);
    }
}

std::vector<V> rest_of(const Gaussians& g) {
    std::vector<V> r;
    for (std::size_t i = 0; i < g.n; ++i)
        r.push_back({g.position[i * 3], g.position[i * 3 + 1], g.position[i * 3 + 2]});
    return r;
}
std::vector<double> mu_of(const Gaussians& g) { return {g.mu_t.begin(), g.mu_t.end()}; }

std::size_t by_source_index(const GaussianBlock& b, std::uint32_t k) {
    REQUIRE(b.has_source_ids);
    return static_cast<std::size_t>(b.source_index[k]);
}

// Inside the scene (gaussians live in [0, duration)) ...
const double kInstants[] = {0.0, 1.3, 2.5, 4.75, 6.0, 7.2, 9.9};
// ... and past both ends, where every trajectory clamps.
const double kOutside[] = {-1.0, 12.0};

// ---- a ByteSource that logs every read ---------------------------------------------------------

class LoggingSource final : public ByteSource {
public:
    explicit LoggingSource(const ByteVec& bytes) : inner_(bytes) {}
    std::optional<std::uint64_t> size() const override { return inner_.size(); }
    bool random_access() const override { return true; }
    Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override {
        {
            std::lock_guard<std::mutex> lock(mu_);
            reads_.push_back({offset, out.size()});
        }
        return inner_.read_at(offset, out);
    }
    struct Range {
        std::uint64_t offset, length;
    };
    std::vector<Range> take() {
        std::lock_guard<std::mutex> lock(mu_);
        return std::exchange(reads_, {});
    }

private:
    MemorySource inner_;
    std::mutex mu_;
    std::vector<Range> reads_;
};

bool overlaps(std::uint64_t a, std::uint64_t alen, std::uint64_t b, std::uint64_t blen) {
    return alen > 0 && blen > 0 && a < b + blen && b < a + alen;
}

// ---- the keyframe-delta scene ------------------------------------------------------------------

// Three states at t0 = 0, 3, 6 of the same 60 ids; every gaussian drifts by 0.1 in x a step, so
// every delta carries updates. mu_t is each step's t0.
struct KeyframeScene {
    Gaussians g;
    std::vector<std::vector<float>> position, mu;
    std::vector<std::uint32_t> ids;
    std::vector<KeyframeStep> steps;
    static constexpr double kT0[3] = {0, 3, 6};

    KeyframeScene() {
        for (std::size_t i = 0; i < g.n; ++i) ids.push_back(static_cast<std::uint32_t>(100 + i));
        position.resize(3);
        mu.resize(3);
        for (std::size_t s = 0; s < 3; ++s) {
            position[s] = g.position;
            for (std::size_t i = 0; i < g.n; ++i)
                position[s][i * 3] += 0.1f * static_cast<float>(s);
            mu[s].assign(g.n, static_cast<float>(kT0[s]));
        }
        for (std::size_t s = 0; s < 3; ++s) {
            KeyframeStep st;
            st.t0 = kT0[s];
            st.gaussians = g.batch(false);
            st.gaussians.position = position[s];
            st.gaussians.mu_t = mu[s];
            st.ids = ids;
            steps.push_back(st);
        }
    }
    std::size_t step_at(double t) const { return t >= 6 ? 2 : t >= 3 ? 1 : 0; }
    std::vector<V> rest(std::size_t s) const {
        std::vector<V> r;
        for (std::size_t i = 0; i < g.n; ++i)
            r.push_back({position[s][i * 3], position[s][i * 3 + 1], position[s][i * 3 + 2]});
        return r;
    }
    std::vector<double> mu_t(std::size_t s) const { return {mu[s].begin(), mu[s].end()}; }
};

KeyframeWriterOptions keyframe_options() {
    KeyframeWriterOptions o;
    o.keyframe_every = 2;  // a keyframe, a delta, a keyframe
    o.base.threads = 1;
    return o;
}

std::size_t by_gaussian_id(const GaussianBlock& b, std::uint32_t k) {
    REQUIRE(b.gaussian_id.size() == b.count);
    return static_cast<std::size_t>(b.gaussian_id[k] - 100);
}

// ---- refusals ----------------------------------------------------------------------------------

// The refusal each writer gives for `h` (and that nothing reached its sink).
void check_refused_everywhere(const SceneHeader& h, const std::string& refusal) {
    INFO("expected refusal " << refusal);
    const Gaussians g;
    {
        MemorySink sink;
        SceneInput in{h, g.batch()};
        const Status st = write_scene(in, small_chunks(), sink);
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().refusal == refusal);
        CHECK(sink.bytes().empty());
    }
    {
        MemorySink sink;
        StreamDeclaration decl{g.n, g.aabb(), {{0, kDuration}}};
        auto w = StreamingWriter::create(sink, h, decl, small_chunks());
        REQUIRE_FALSE(w.ok());
        CHECK(w.error().refusal == refusal);
        CHECK(sink.bytes().empty());
    }
    {
        MemorySink sink;
        const KeyframeScene k;
        const Status st = write_keyframe_delta(k.steps, h, keyframe_options(), sink);
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().refusal == refusal);
        CHECK(sink.bytes().empty());
    }
}

// The acceptance scene's inputs.
struct Acceptance {
    Payloads p;
    SceneHeader h = extras_header(p);
    Gaussians g;
};

// `h` and `g` through write_scene / write_keyframe_delta, which must accept them.
ByteVec one_shot(const SceneHeader& h, const Gaussians& g, WriteReport* report = nullptr) {
    auto bytes = write_scene(SceneInput{h, g.batch()}, small_chunks(), report);
    REQUIRE(bytes.ok());
    return std::move(bytes).value();
}
ByteVec keyframed(const SceneHeader& h, const KeyframeScene& k,
                  KeyframeWriteReport* report = nullptr) {
    auto bytes = write_keyframe_delta(k.steps, h, keyframe_options(), report);
    REQUIRE(bytes.ok());
    return std::move(bytes).value();
}

}  // namespace

// ---------------------------------------------------------------------------------------------

TEST_CASE("writer extras: moving audio sources, a camera path, full provenance and tracked "
          "objects with embeddings round-trip through both readers at several instants",
          "[writer][extras]") {
    const Acceptance input;
    const auto& [p, h, g] = input;
    WriteReport report;
    const ByteVec bytes = one_shot(h, g, &report);
    REQUIRE(report.chunk_count >= 4);
    check_front_order(bytes, h.audio.size(), false);

    MemorySource src(bytes);
    auto streamed = read_streaming(src);
    REQUIRE(streamed.ok());
    REQUIRE_FALSE(streamed->truncation.has_value());
    MemorySource src2(bytes);
    auto indexed = IndexedReader::open(src2);
    REQUIRE(indexed.ok());
    GaussianBlock indexed_block;
    std::vector<DecodeWorkspace> pool;
    REQUIRE(indexed->read_all(indexed_block, pool, 1).ok());

    const std::vector<V> rest = rest_of(g);
    const std::vector<double> mu = mu_of(g);
    for (const SceneInfo* scene : {static_cast<const SceneInfo*>(&streamed->info), &indexed->scene()}) {
        check_extras_read(*scene, h);
        check_embeddings(*scene);
        for (double t : kInstants) check_extras_at(*scene, h, t);
        for (double t : kOutside) check_extras_at(*scene, h, t);
    }
    for (double t : kInstants) {
        check_gaussians_at(streamed->gaussians, streamed->info, g, rest, mu, t, by_source_index);
        check_gaussians_at(indexed_block, indexed->scene(), g, rest, mu, t, by_source_index);
        GaussianBlock at;
        REQUIRE(indexed->read_instant(t, at, pool, 1).ok());
        check_gaussians_at(at, indexed->scene(), g, rest, mu, t, by_source_index);
    }
}

TEST_CASE("writer extras: StreamingWriter writes the same extras, in the same order, as "
          "write_scene",
          "[writer][extras]") {
    const Acceptance input;
    const auto& [p, h, g] = input;
    MemorySink sink;
    {
        StreamDeclaration decl{g.n, g.aabb(), {{0, kDuration}}};
        auto w = StreamingWriter::create(sink, h, decl, small_chunks());
        REQUIRE(w.ok());
        CHECK((w->report().quantization.bounds.size() > 0));
        REQUIRE(w->add_window(0, g.batch(false)).ok());
        REQUIRE(w->finish().ok());
    }
    const ByteVec file = sink.take();
    check_front_order(file, h.audio.size(), false);
    const ByteVec single = one_shot(h, g);
    // The front matter after the Quantization record is byte-identical (the bounds differ: the
    // streaming writer declares analytic ones).
    const auto a = walk(file), b = walk(single);
    REQUIRE(a.size() > 4);
    const std::uint64_t a_extras = a[3].offset, b_extras = b[3].offset;
    std::uint64_t a_end = 0, b_end = 0;
    for (const Rec& r : a)
        if (r.opcode == op::chunk && !a_end) a_end = r.offset;
    for (const Rec& r : b)
        if (r.opcode == op::chunk && !b_end) b_end = r.offset;
    CHECK(ByteVec(file.begin() + a_extras, file.begin() + a_end) ==
          ByteVec(single.begin() + b_extras, single.begin() + b_end));

    // Content records added after create() still come before the extras, which wait for the
    // first chunk.
    {
        MemorySink later;
        StreamDeclaration decl{g.n, g.aabb(), {{0, kDuration}}};
        auto w = StreamingWriter::create(later, h, decl, small_chunks());
        REQUIRE(w.ok());
        REQUIRE(w->add_metadata(Metadata{"late", {{"k", "v"}}}).ok());
        REQUIRE(w->add_attachment(AttachmentInput{"late.bin", "application/octet-stream",
                                                  Bytes(p.voice).first(3)})
                    .ok());
        REQUIRE(w->add_window(0, g.batch(false)).ok());
        CHECK(w->add_metadata(Metadata{"too late", {}}).error().refusal == "chunks-started");
        REQUIRE(w->finish().ok());
        const ByteVec file2 = later.take();
        check_front_order(file2, h.audio.size(), false);
        const auto ops = opcodes(file2);
        CHECK(count_of(ops, op::metadata) == 2);
        CHECK(count_of(ops, op::attachment) == 2);
    }

    MemorySource src(file);
    auto streamed = read_streaming(src);
    REQUIRE(streamed.ok());
    check_extras_read(streamed->info, h);
    for (double t : kInstants) {
        check_extras_at(streamed->info, h, t);
        check_gaussians_at(streamed->gaussians, streamed->info, g, rest_of(g), mu_of(g), t,
                           by_source_index);
    }
}

TEST_CASE("writer extras: a keyframe-delta file carries the extras and is reconstructed by "
          "KeyframeDeltaReader and KeyframeDeltaStream at several instants",
          "[writer][extras][keyframe]") {
    const Payloads p;
    const SceneHeader h = extras_header(p);
    const KeyframeScene k;
    KeyframeWriteReport report;
    const ByteVec bytes = keyframed(h, k, &report);
    CHECK(report.deltas == 1);
    check_front_order(bytes, h.audio.size(), true);

    MemorySource src(bytes);
    auto reader = KeyframeDeltaReader::open(src);
    REQUIRE(reader.ok());
    check_extras_read(reader->scene(), h);
    check_embeddings(reader->scene());
    for (double t : {0.5, 2.9, 3.0, 4.75, 6.5, 9.5}) {
        check_extras_at(reader->scene(), h, t);
        GaussianBlock state;
        REQUIRE(reader->state_at(t, state).ok());
        const std::size_t s = k.step_at(t);
        check_gaussians_at(state, reader->scene(), k.g, k.rest(s), k.mu_t(s), t, by_gaussian_id);
    }

    MemorySource src2(bytes);
    KeyframeDeltaStream stream(src2);
    REQUIRE(stream.open().ok());
    check_extras_read(stream.scene(), h);
    GaussianBlock state;
    for (std::size_t s = 0; s < 3; ++s) {
        auto more = stream.next_state(state);
        REQUIRE(more.ok());
        REQUIRE(*more);
        const double t = KeyframeScene::kT0[s] + 1.25;
        check_extras_at(stream.scene(), h, t);
        check_gaussians_at(state, stream.scene(), k.g, k.rest(s), k.mu_t(s), t, by_gaussian_id);
    }
    auto end = stream.next_state(state);
    REQUIRE(end.ok());
    CHECK_FALSE(*end);
}

TEST_CASE("M092: the indexed reader frames every audio payload before the first chunk and "
          "range-reads one without fetching a chunk or another payload",
          "[writer][extras]") {
    const Acceptance input;
    const auto& [p, h, g] = input;
    const ByteVec bytes = one_shot(h, g);
    const std::vector<Rec> records = walk(bytes);
    std::uint64_t first_chunk = 0;
    std::vector<Rec> chunks, audio_data;
    for (const Rec& r : records) {
        if (r.opcode == op::chunk) {
            if (chunks.empty()) first_chunk = r.offset;
            chunks.push_back(r);
        }
        if (r.opcode == op::audio_data) audio_data.push_back(r);
    }
    REQUIRE(audio_data.size() == 3);

    LoggingSource src(bytes);
    auto reader = IndexedReader::open(src);
    REQUIRE(reader.ok());
    const auto open_reads = src.take();
    const SceneInfo& scene = reader->scene();
    REQUIRE(scene.audio.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        const PayloadRef& ref = scene.audio[i].payload;
        // Framed where the test's own walk puts the payload: after source_id and the u64 length.
        CHECK(ref.offset == audio_data[i].offset + kRecordHeaderSize + 4 + 8);
        CHECK(ref.length == h.audio[i].data.size());
        CHECK(ref.offset + ref.length <= first_chunk);
        // open() read none of any payload past the fields before it, and no chunk.
        std::uint64_t payload_bytes_read = 0;
        for (const auto& r : open_reads)
            if (overlaps(r.offset, r.length, ref.offset, ref.length))
                payload_bytes_read += std::min(r.offset + r.length, ref.offset + ref.length) -
                                      std::max(r.offset, ref.offset);
        CHECK(payload_bytes_read < ref.length);
    }
    for (const auto& r : open_reads)
        for (const Rec& c : chunks) CHECK_FALSE(overlaps(r.offset, r.length, c.offset, c.length));

    for (std::size_t i = 0; i < 3; ++i) {
        INFO("source " << scene.audio[i].descriptor.source_id);
        const PayloadRef& ref = scene.audio[i].payload;
        const std::uint64_t before = reader->bytes_fetched();
        auto payload = reader->read_payload(ref);
        REQUIRE(payload.ok());
        CHECK(*payload == ByteVec(h.audio[i].data.begin(), h.audio[i].data.end()));
        CHECK(reader->bytes_fetched() - before == ref.length);
        const auto reads = src.take();
        std::uint64_t total = 0;
        for (const auto& r : reads) {
            total += r.length;
            CHECK(r.offset >= ref.offset);
            CHECK(r.offset + r.length <= ref.offset + ref.length);
            for (const Rec& c : chunks) CHECK_FALSE(overlaps(r.offset, r.length, c.offset, c.length));
        }
        CHECK(total == ref.length);
    }
}

TEST_CASE("writer extras: records follow metadata and attachments in the contract's order, "
          "audio pairs before the first chunk (M092) and provenance in ascending opcode order",
          "[writer][extras]") {
    const Acceptance input;
    const auto& [p, h, g] = input;
    const ByteVec one = one_shot(h, g);
    check_front_order(one, 3, false);
    const KeyframeScene k;
    const ByteVec kd = keyframed(h, k);
    check_front_order(kd, 3, true);
    // Pairs: each Audio Data names the Audio Source right before it.
    for (const ByteVec* file : {&one, &kd}) {
        const std::vector<Rec> recs = walk(*file);
        for (std::size_t i = 0; i + 1 < recs.size(); ++i) {
            if (recs[i].opcode != op::audio_source) continue;
            REQUIRE(recs[i + 1].opcode == op::audio_data);
            auto s = parse_record(Bytes(*file).subspan(recs[i].offset), recs[i].offset);
            auto d = parse_record(Bytes(*file).subspan(recs[i + 1].offset), recs[i + 1].offset);
            REQUIRE(s.ok());
            REQUIRE(d.ok());
            auto src = parse_audio_source(*s);
            auto dat = parse_audio_data(*d);
            REQUIRE(src.ok());
            REQUIRE(dat.ok());
            CHECK(src->source_id == dat->source_id);
            CHECK(src->data_length == dat->data.size());
        }
    }
}

TEST_CASE("writer extras: writing the same input twice gives byte-identical files",
          "[writer][extras]") {
    const Acceptance input;
    const auto& [p, h, g] = input;
    auto a = write_scene(SceneInput{h, g.batch()}, small_chunks());
    auto b = write_scene(SceneInput{h, g.batch()}, small_chunks());
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(*a == *b);
    const KeyframeScene k;
    auto c = write_keyframe_delta(k.steps, h, keyframe_options());
    auto d = write_keyframe_delta(k.steps, h, keyframe_options());
    REQUIRE(c.ok());
    REQUIRE(d.ok());
    CHECK(*c == *d);
    // And the extras cost exactly their records: the same scene without them differs only by
    // those bytes and Header flags bit 0.
    SceneHeader bare = h;
    bare.camera.reset();
    bare.audio.clear();
    bare.coordinate_frames.clear();
    bare.sensors.clear();
    bare.rig_trajectories.clear();
    bare.geodetic_anchors.clear();
    bare.object_table.reset();
    bare.object_tracks.clear();
    const ByteVec e = one_shot(bare, g);
    std::uint64_t extras_bytes = 0;
    for (const Rec& r : walk(*a))
        if (r.opcode == op::camera || (r.opcode >= op::audio_source && r.opcode <= op::object_track))
            extras_bytes += r.length;
    CHECK(a->size() - e.size() == extras_bytes);
}

TEST_CASE("writer extras: a violation is refused with the reader's refusal identifier and "
          "nothing is written, by all three writers",
          "[writer][extras]") {
    const Payloads p;
    const SceneHeader good = extras_header(p);
    struct Violation {
        const char* what;
        std::function<void(SceneHeader&)> apply;
        const char* refusal;
    };
    const Violation violations[] = {
        {"legacy audio beside source pairs (M105)",
         [&](SceneHeader& h) { h.legacy_audio = LegacyAudioInput{"opus", 0, p.voice}; },
         "mixed-audio-records"},
        {"two sources with one id",
         [&](SceneHeader& h) { h.audio[1].descriptor.source_id = h.audio[0].descriptor.source_id; },
         "duplicate-audio-source"},
        {"an audio keyframe after the scene's end (M088)",
         [&](SceneHeader& h) { h.audio[0].descriptor.keyframes.back().time = kDuration + 0.5; },
         "keyframe-time-out-of-range"},
        {"an audio keyframe before 0 (M088)",
         [&](SceneHeader& h) { h.audio[1].descriptor.keyframes.front().time = -0.25; },
         "keyframe-time-out-of-range"},
        {"a zero audio rotation is not normalized into an identity",
         [&](SceneHeader& h) { h.audio[2].descriptor.rotation = {0, 0, 0, 0}; },
         "zero-quaternion"},
        {"a spatial source that is not mono",
         [&](SceneHeader& h) { h.audio[2].descriptor.flags = kAudioFlagSpatial; },
         "spatial-source-not-mono"},
        {"an audio source with an empty codec",
         [&](SceneHeader& h) { h.audio[0].descriptor.codec.clear(); },
         "empty-audio-codec"},
        {"a camera interpolation the registry does not define",
         [&](SceneHeader& h) { h.camera->interpolation = "bezier"; },
         "unknown-interpolation"},
        {"two coordinate frames of one name (M039)",
         [&](SceneHeader& h) { h.coordinate_frames.push_back(h.coordinate_frames[1]); },
         "duplicate-coordinate-frame"},
        {"a degenerate coordinate frame",
         [&](SceneHeader& h) { h.coordinate_frames[1].forward_axis = Axis::neg_z; },
         "degenerate-basis"},
        {"two sensors of one name (M049)",
         [&](SceneHeader& h) { h.sensors[1].name = "cam0"; },
         "duplicate-sensor-name"},
        {"a sensor on a rig trajectory the scene lacks (M051)",
         [&](SceneHeader& h) { h.sensors[0].rig_name = "rig9"; },
         "missing-rig-trajectory"},
        {"a sensor on a zero-sample rig trajectory (M061)",
         [&](SceneHeader& h) { h.rig_trajectories[0].samples.clear(); },
         "missing-rig-trajectory"},
        {"a geodetic anchor naming no coordinate frame (M063)",
         [&](SceneHeader& h) { h.geodetic_anchors[0].frame_name = "utm"; },
         "missing-anchor-frame"},
        {"two geodetic anchors for one frame (M066)",
         [&](SceneHeader& h) { h.geodetic_anchors.push_back(h.geodetic_anchors[0]); },
         "duplicate-geodetic-anchor"},
        {"a geodetic anchor off the globe",
         [&](SceneHeader& h) { h.geodetic_anchors[0].latitude_deg = 91; },
         "geodetic-out-of-range"},
        {"two tracks for one object (M079)",
         [&](SceneHeader& h) { h.object_tracks.push_back(h.object_tracks[0]); },
         "duplicate-object-track"},
        {"a track for the background (M078)",
         [&](SceneHeader& h) { h.object_tracks[1].object_id = 0; },
         "track-names-background"},
        {"track sample times that do not increase",
         [&](SceneHeader& h) { h.object_tracks[0].samples[2].time = 1; },
         "non-increasing-sample-times"},
        {"two table entries with one id",
         [&](SceneHeader& h) { h.object_table->entries[3].object_id = 1; },
         "duplicate-object-id"},
        {"an embedding of the wrong size",
         [&](SceneHeader& h) { h.object_table->entries[0].embedding->push_back(0.5f); },
         "embedding-dimension-mismatch"},
        {"an embedding, even an empty one, when embedding_dim is 0 (no has_embedding byte)",
         [&](SceneHeader& h) {
             h.object_table->embedding_dim = 0;
             for (ObjectTable::Entry& e : h.object_table->entries) e.embedding.reset();
             h.object_table->entries[2].embedding.emplace();
         },
         "embedding-dimension-mismatch"},
        {"a non-finite embedding value",
         [&](SceneHeader& h) { (*h.object_table->entries[1].embedding)[0] = std::numeric_limits<float>::quiet_NaN(); },
         "non-finite-value"},
        {"a pinhole sensor without intrinsics",
         [&](SceneHeader& h) { h.sensors[0].fx = 0; },
         "invalid-intrinsics"},
    };
    for (const Violation& v : violations) {
        INFO(v.what);
        SceneHeader h = good;
        v.apply(h);
        check_refused_everywhere(h, v.refusal);
    }
}

TEST_CASE("M035: audio input is written as Audio Source and Audio Data pairs, the legacy Audio "
          "record only when asked for on purpose",
          "[writer][extras]") {
    const Payloads p;
    const Gaussians g;
    SceneHeader h;
    h.duration_sec = kDuration;
    h.audio = extras_header(p).audio;
    const ByteVec pairs = one_shot(h, g);
    const auto ops = opcodes(pairs);
    CHECK(count_of(ops, op::audio_source) == 3);
    CHECK(count_of(ops, op::audio_data) == 3);
    CHECK(count_of(ops, op::audio_legacy) == 0);

    SceneHeader legacy;
    legacy.duration_sec = kDuration;
    legacy.legacy_audio = LegacyAudioInput{"opus", 1.5, p.steps};
    const ByteVec old = one_shot(legacy, g);
    const auto old_ops = opcodes(old);
    CHECK(count_of(old_ops, op::audio_legacy) == 1);
    CHECK(count_of(old_ops, op::audio_source) == 0);
    CHECK(count_of(old_ops, op::audio_data) == 0);
    MemorySource src(old);
    auto read = read_streaming(src);
    REQUIRE(read.ok());
    CHECK(read->info.header.has_audio());
    REQUIRE(read->info.audio.size() == 1);
    CHECK(read->info.audio[0].legacy);
    CHECK(read->info.audio[0].descriptor.codec == "opus");
    CHECK(read->info.audio[0].descriptor.start_sec == 1.5);
    CHECK(read->info.audio[0].payload.length == p.steps.size());
}

TEST_CASE("M086: audio rotations, base and keyframes, are normalized on output",
          "[writer][extras]") {
    const Acceptance input;
    const auto& [p, h, g] = input;
    const ByteVec bytes = one_shot(h, g);
    std::size_t seen = 0;
    for (const Rec& r : walk(bytes)) {
        if (r.opcode != op::audio_source) continue;
        auto view = parse_record(Bytes(bytes).subspan(r.offset), r.offset);
        REQUIRE(view.ok());
        auto s = parse_audio_source(*view);
        REQUIRE(s.ok());
        const AudioSource& in = h.audio[seen++].descriptor;
        auto check_unit = [](const std::array<double, 4>& got, const std::array<double, 4>& given) {
            const double n = std::sqrt(given[0] * given[0] + given[1] * given[1] +
                                       given[2] * given[2] + given[3] * given[3]);
            const double norm = std::sqrt(got[0] * got[0] + got[1] * got[1] + got[2] * got[2] +
                                          got[3] * got[3]);
            CHECK(std::fabs(norm - 1) <= 1e-15);
            for (int c = 0; c < 4; ++c) CHECK(std::fabs(got[c] - given[c] / n) <= 1e-15);
        };
        check_unit(s->rotation, in.rotation);
        REQUIRE(s->keyframes.size() == in.keyframes.size());
        for (std::size_t k = 0; k < in.keyframes.size(); ++k) {
            check_unit(s->keyframes[k].rotation, in.keyframes[k].rotation);
            CHECK(s->keyframes[k].position == in.keyframes[k].position);  // nothing else changes
            CHECK(s->keyframes[k].time == in.keyframes[k].time);
        }
        CHECK(s->data_length == h.audio[seen - 1].data.size());
    }
    CHECK(seen == 3);
    // The input given had non-unit rotations, so this test says something.
    CHECK(h.audio[0].descriptor.rotation[3] == 3);
}

TEST_CASE("M104: a scene without audio carries no audio record and Header flags bit 0 clear, "
          "and absent extras cost nothing",
          "[writer][extras]") {
    const Payloads p;
    const Gaussians g;
    auto audio_records = [](const ByteVec& file) {
        const auto ops = opcodes(file);
        return count_of(ops, op::audio_legacy) + count_of(ops, op::audio_source) +
               count_of(ops, op::audio_data);
    };
    auto flags_of = [](const ByteVec& file) {
        MemorySource src(file);
        auto r = read_streaming(src);
        REQUIRE(r.ok());
        CHECK(r->info.audio.empty());
        return r->info.header.flags;
    };
    SECTION("no extras at all: no extras record of any kind") {
        SceneHeader h;
        h.duration_sec = kDuration;
        const ByteVec bytes = one_shot(h, g);
        for (std::uint8_t o : opcodes(bytes)) {
            CHECK(o != op::camera);
            CHECK((o < op::audio_source || o > op::object_track || o == op::delta_chunk));
            CHECK(o != op::audio_legacy);
        }
        CHECK((flags_of(bytes) & kHeaderFlagAudio) == 0);
    }
    SECTION("every extra but audio, through each writer") {
        SceneHeader h = extras_header(p);
        h.audio.clear();
        const ByteVec one = one_shot(h, g);
        CHECK(audio_records(one) == 0);
        CHECK((flags_of(one) & kHeaderFlagAudio) == 0);
        MemorySink sink;
        StreamDeclaration decl{g.n, g.aabb(), {{0, kDuration}}};
        auto w = StreamingWriter::create(sink, h, decl, small_chunks());
        REQUIRE(w.ok());
        REQUIRE(w->add_window(0, g.batch(false)).ok());
        REQUIRE(w->finish().ok());
        const ByteVec streamed = sink.take();
        CHECK(audio_records(streamed) == 0);
        CHECK((flags_of(streamed) & kHeaderFlagAudio) == 0);
        const KeyframeScene k;
        const ByteVec kd = keyframed(h, k);
        CHECK(audio_records(kd) == 0);
        MemorySource src(kd);
        auto reader = KeyframeDeltaReader::open(src);
        REQUIRE(reader.ok());
        CHECK((reader->scene().header.flags & kHeaderFlagAudio) == 0);
        CHECK(reader->scene().audio.empty());
    }
    SECTION("with audio the bit is set, by each writer") {
        const SceneHeader h = extras_header(p);
        const ByteVec one = one_shot(h, g);
        const KeyframeScene k;
        const ByteVec kd = keyframed(h, k);
        for (const ByteVec* file : {&one, &kd}) {
            auto header = parse_record(Bytes(*file).subspan(kMagicSize), kMagicSize);
            REQUIRE(header.ok());
            auto parsed = parse_header(*header);
            REQUIRE(parsed.ok());
            CHECK(parsed->has_audio());
        }
    }
}

TEST_CASE("writer extras: a looping linear camera path is written as given and wraps over its "
          "keys when read back",
          "[writer][extras]") {
    const Gaussians g;
    SceneHeader h;
    h.duration_sec = kDuration;
    Camera cam;
    cam.fov_y_deg = 35;
    cam.keyframes = {{1, {0, 0, 0}, {0, 0, -1}}, {2, {2, 0, 0}, {2, 0, -1}}, {4, {2, 4, 0}, {0, 0, 0}}};
    cam.interpolation = "linear";
    cam.loop = true;
    h.camera = cam;
    const ByteVec file = one_shot(h, g);
    const auto ops = opcodes(file);
    CHECK(count_of(ops, op::camera) == 1);
    MemorySource src(file);
    auto read = read_streaming(src);
    REQUIRE(read.ok());
    REQUIRE(read->info.camera.has_value());
    CHECK(*read->info.camera == cam);
    CHECK_FALSE(read->info.header.has_audio());
    // The loop spans [1, 4): 4.5 is 0.5 into its second lap, 7.75 is 0.75 into its third.
    // (Instants before the first key are left out: extras.hpp does not say whether they wrap.)
    for (double t : {1.0, 1.5, 2.0, 3.0, 3.99, 4.0, 4.5, 7.75, 10.0}) {
        INFO("t = " << t);
        const auto [pos, target] = expected_camera(cam, t);
        const CameraView view = camera_at(*read->info.camera, t);
        check_vec(vec3(view.position), pos, 1e-12);
        check_vec(vec3(view.target), target, 1e-12);
    }
    // The test's own loop arithmetic, spelled out once: 7.75 wraps to 1.75, three quarters of the
    // way from key 0 to key 1.
    const auto [pos, target] = expected_camera(cam, 7.75);
    check_vec(pos, {1.5, 0, 0}, 1e-12);
    check_vec(target, {1.5, 0, -1}, 1e-12);
}

TEST_CASE("M037: no writer emits 0x0E (or any reserved opcode): a private record below 0x80 is "
          "refused, and a scene with every extra writes only defined and private opcodes",
          "[writer][extras]") {
    const Payloads p;
    const Gaussians g;
    SceneHeader h = extras_header(p);
    for (std::uint8_t o : opcodes(one_shot(h, g)))
        CHECK((is_defined_opcode(o) || o >= 0x80));
    const ByteVec content = {1, 2, 3};
    h.private_records.push_back({0x0E, content});
    auto refused = write_scene(SceneInput{h, g.batch()}, small_chunks());
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("0x80"));
    MemorySink sink;
    StreamDeclaration decl{g.n, g.aabb(), {{0, kDuration}}};
    h.private_records.clear();
    auto w = StreamingWriter::create(sink, h, decl, small_chunks());
    REQUIRE(w.ok());
    CHECK_FALSE(w->add_private_record({0x0E, content}).ok());
    CHECK_FALSE(w->add_private_record({0x26, content}).ok());
}
