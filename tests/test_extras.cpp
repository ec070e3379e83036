// The scene extras through the readers (extras.hpp): the cross-record refusals of §5.15 and §7,
// each proved on a file built byte by byte and read by both readers; what the extras mean
// (audio state, camera path, sensor and object poses, embedding search); and the interop
// fixture's own answers for audio state, rig poses and object poses.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "fourdgs/extras.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/validate.hpp"
#include "support/file_builder.hpp"
#include "support/json.hpp"
#include "support/readers.hpp"

using namespace fourdgs;
using fourdgs::test::Json;

namespace {

using test::ByteVec;
using test::record_bytes;

// A two-chunk scene with `front` records after the Window Table; flags bit 0 follows `audio`.
test::BuiltFile scene_with(std::vector<ByteVec> front, bool audio = false,
                           std::vector<ByteVec> after_chunks = {}) {
    test::BuiltScene s = test::default_scene(2, 40, 0);
    s.spec.header.flags = audio ? kHeaderFlagAudio : 0;
    s.spec.front = std::move(front);
    s.spec.after_chunks = std::move(after_chunks);
    return test::build(s.spec);
}

// Both readers refuse `bytes` with `refusal`; returns the streaming reader's error.
Error refused_by_both(const ByteVec& bytes, const std::string& refusal) {
    auto streamed = test::stream_read(bytes);
    REQUIRE_FALSE(streamed.ok());
    CHECK(streamed.error().refusal == refusal);
    CHECK(test::indexed_refusal(bytes) == refusal);
    return streamed.error();
}

SceneInfo read_ok(const ByteVec& bytes) {
    auto streamed = test::stream_read(bytes);
    if (!streamed.ok()) FAIL(streamed.error().describe());
    CHECK(test::indexed_refusal(bytes).empty());
    return streamed->info;
}

CoordinateFrame frame(std::string name) {
    CoordinateFrame f;
    f.name = std::move(name);
    f.handedness = Handedness::right;
    f.length_unit = LengthUnit::metre;
    f.metres_per_unit = 1;
    return f;
}

SensorCalibration sensor(std::string name, std::string rig = "") {
    SensorCalibration s;
    s.name = std::move(name);
    s.modality = "imu";
    s.translation = {0, 0.5, 0};
    if (!rig.empty()) {
        s.pose_reference = PoseReference::rig;
        s.rig_name = std::move(rig);
    }
    return s;
}

RigTrajectory rig(std::string name, std::vector<TrajectorySample> samples) {
    return {std::move(name), TrajectoryInterpolation::linear, std::move(samples)};
}

GeodeticAnchor anchor(std::string frame_name) {
    return {std::move(frame_name), 48.8584, 2.2945, 35.0, 90.0};
}

AudioSource source(std::uint32_t id) {
    AudioSource a;
    a.source_id = id;
    a.name = "src" + std::to_string(id);
    a.codec = "wav";
    a.channel_layout = "mono";
    a.data_length = 4;
    a.start_sec = 0.5;
    a.duration_sec = 1.0;
    a.gain = 0.8;
    a.interpolation = "linear";
    return a;
}

ByteVec audio_data(std::uint32_t id, std::size_t n = 4) {
    const ByteVec payload(n, 0x5A);
    return record_bytes(AudioData{id, payload, 0});
}

ObjectTrack track(std::uint32_t id, std::vector<TrajectorySample> samples) {
    return {id, TrajectoryInterpolation::linear, std::move(samples)};
}

std::array<double, 4> about_z(double angle) {
    return {0, 0, std::sin(angle / 2), std::cos(angle / 2)};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// §5.15: absence, names, references.

TEST_CASE("M038: a file without provenance records reads with none, and neither reader nor "
          "validator calls their absence an error or a warning",
          "[extras]") {
    const auto file = scene_with({});
    const SceneInfo info = read_ok(file.bytes);
    CHECK(info.coordinate_frames.empty());
    CHECK(info.sensors.empty());
    CHECK(info.rig_trajectories.empty());
    CHECK(info.geodetic_anchors.empty());
    CHECK_FALSE(info.object_table.has_value());
    CHECK(info.object_tracks.empty());
    const SceneFrame f = scene_frame(info);
    CHECK(f.record == nullptr);
    CHECK_FALSE(f.coordinate_system.has_value());
    CHECK(f.metres_per_unit() == 0);

    MemorySource src(file.bytes);
    auto report = validate(src);
    REQUIRE(report.ok());
    for (const Finding& finding : report->findings) {
        INFO(finding.rule << ": " << finding.message);
        CHECK(finding.section.rfind("§5.15", 0) != 0);
    }
}

TEST_CASE("M039: two Coordinate Frame records with one name are refused as "
          "duplicate-coordinate-frame, naming it, at the second record",
          "[extras]") {
    const auto file = scene_with({record_bytes(frame("lidar")), record_bytes(frame("")),
                                  record_bytes(frame("lidar"))});
    const Error e = refused_by_both(file.bytes, "duplicate-coordinate-frame");
    CHECK_THAT(e.message, Catch::Contains("\"lidar\""));
    REQUIRE(file.records[5].opcode == op::coordinate_frame);  // Header, Quantization, Window Table
    CHECK(e.offset == file.records[5].offset);
    // Distinct names read.
    read_ok(scene_with({record_bytes(frame("lidar")), record_bytes(frame(""))}).bytes);
}

TEST_CASE("M048 M049: two Sensor Calibration records with one name are refused as "
          "duplicate-sensor-name, naming it",
          "[extras]") {
    const auto file = scene_with({record_bytes(sensor("imu0")), record_bytes(sensor("imu1")),
                                  record_bytes(sensor("imu0"))});
    const Error e = refused_by_both(file.bytes, "duplicate-sensor-name");
    CHECK_THAT(e.message, Catch::Contains("\"imu0\""));
    CHECK(e.offset == file.records[5].offset);
}

TEST_CASE("M051 M052: a rig-relative sensor whose Rig Trajectory is not in the file is refused as "
          "missing-rig-trajectory, naming the trajectory, never placed at the rig origin",
          "[extras]") {
    const TrajectorySample s0{0.0, {0, 0, 0, 1}, {1, 0, 0}};
    SECTION("no trajectory of that name") {
        const auto file = scene_with({record_bytes(rig("other", {s0})),
                                      record_bytes(sensor("cam", "truck"))});
        const Error e = refused_by_both(file.bytes, "missing-rig-trajectory");
        CHECK_THAT(e.message, Catch::Contains("\"truck\""));
        CHECK_THAT(e.message, Catch::Contains("\"cam\""));
    }
    SECTION("the trajectory comes after the sensor: records are not ordered (§5.15)") {
        const SceneInfo info = read_ok(
            scene_with({record_bytes(sensor("cam", "truck")), record_bytes(rig("truck", {s0}))})
                .bytes);
        auto pose = sensor_pose_at(info, "cam", 0.3);
        REQUIRE(pose.ok());
        // rig(t) ∘ extrinsic: identity rotation, rig at (1,0,0), sensor 0.5 up the rig.
        CHECK(pose->translation == Vec3{1, 0.5, 0});
    }
    SECTION("the library refuses the same lookup on a scene built in code") {
        SceneInfo info;
        info.sensors.push_back(sensor("cam", "truck"));
        auto pose = sensor_pose_at(info, "cam", 0);
        REQUIRE_FALSE(pose.ok());
        CHECK(pose.error().refusal == "missing-rig-trajectory");
        CHECK(sensor_pose_at(info, "nope", 0).error().refusal == "unknown-sensor");
        CHECK(sensor_pose_at(info, "nope", 0).error().kind == ErrorKind::invalid_argument);
    }
}

TEST_CASE("M061: a zero-sample Rig Trajectory is read as absent: it resolves no sensor, and a "
          "zero-sample Object Track moves nothing",
          "[extras]") {
    const auto lonely = scene_with({record_bytes(rig("truck", {}))});
    const SceneInfo info = read_ok(lonely.bytes);
    REQUIRE(info.rig_trajectories.size() == 1);  // kept as written, for tools
    CHECK(find_rig_trajectory(info, "truck") == nullptr);

    const auto file = scene_with({record_bytes(rig("truck", {})),
                                  record_bytes(sensor("cam", "truck"))});
    const Error e = refused_by_both(file.bytes, "missing-rig-trajectory");
    CHECK_THAT(e.message, Catch::Contains("no samples"));

    const SceneInfo with_track = read_ok(scene_with({record_bytes(track(5, {}))}).bytes);
    CHECK(find_object_track(with_track, 5) == nullptr);
    CHECK_FALSE(object_pose_at(with_track, 5, 0.5).has_value());
}

TEST_CASE("M063: a Geodetic Anchor whose frame is not in the file is refused as "
          "missing-anchor-frame, naming the frame, and the scene frame needs its own record too",
          "[extras]") {
    SECTION("named frame") {
        const auto file = scene_with({record_bytes(frame("")), record_bytes(anchor("site"))});
        const Error e = refused_by_both(file.bytes, "missing-anchor-frame");
        CHECK_THAT(e.message, Catch::Contains("\"site\""));
        CHECK(e.offset == file.records[4].offset);
    }
    SECTION("the scene frame with no frame record") {
        const auto file = scene_with({record_bytes(anchor(""))});
        refused_by_both(file.bytes, "missing-anchor-frame");
    }
    SECTION("resolved") {
        const SceneInfo info =
            read_ok(scene_with({record_bytes(anchor("")), record_bytes(frame(""))}).bytes);
        REQUIRE(info.geodetic_anchors.size() == 1);
        CHECK(info.geodetic_anchors[0].latitude_deg == 48.8584);
    }
}

TEST_CASE("M066: two Geodetic Anchors for one frame are refused as duplicate-geodetic-anchor, "
          "naming it",
          "[extras]") {
    const auto file = scene_with({record_bytes(frame("site")), record_bytes(anchor("site")),
                                  record_bytes(anchor("site"))});
    const Error e = refused_by_both(file.bytes, "duplicate-geodetic-anchor");
    CHECK_THAT(e.message, Catch::Contains("\"site\""));
}

TEST_CASE("M046: the Coordinate Frame record named \"\" wins in whole over the "
          "coordinate_system key, and the key stands only when there is no such record",
          "[extras]") {
    const ByteVec key = record_bytes(Metadata{"conventions", {{"coordinate_system", "z-up-left-handed"}}});
    SECTION("both: the record, and nothing of the key") {
        const SceneInfo info = read_ok(scene_with({key, record_bytes(frame(""))}).bytes);
        const SceneFrame f = scene_frame(info);
        REQUIRE(f.record != nullptr);
        CHECK(f.record->handedness == Handedness::right);
        CHECK(f.record->up_axis == Axis::pos_y);
        CHECK_FALSE(f.coordinate_system.has_value());
        CHECK(f.metres_per_unit() == 1.0);
    }
    SECTION("a named frame is not the scene frame, so the key describes it") {
        const SceneInfo info = read_ok(scene_with({key, record_bytes(frame("lidar"))}).bytes);
        const SceneFrame f = scene_frame(info);
        CHECK(f.record == nullptr);
        CHECK(f.coordinate_system == std::optional<std::string>("z-up-left-handed"));
    }
    SECTION("metres_per_unit is the authority when length_unit disagrees (M045)") {
        CoordinateFrame cm = frame("");
        cm.metres_per_unit = 0.01;  // beside length_unit metre
        const SceneInfo info = read_ok(scene_with({record_bytes(cm)}).bytes);
        CHECK(scene_frame(info).metres_per_unit() == 0.01);
    }
}

TEST_CASE("M057: only the camera models this library implements are undistortable, and any other "
          "model byte is reported uncorrected and never partially applied",
          "[extras]") {
    SensorCalibration s;
    for (CameraModel m : {CameraModel::pinhole, CameraModel::brown_conrady,
                          CameraModel::kannala_brandt}) {
        s.camera_model = m;
        CHECK(can_undistort(s));
    }
    s.camera_model = CameraModel::none;
    CHECK_FALSE(can_undistort(s));
    CHECK(project(s, 0, 0).error().refusal == "not-a-camera");
    s.camera_model = static_cast<CameraModel>(9);
    CHECK_FALSE(can_undistort(s));
    CHECK(unproject(s, 0, 0).error().refusal == "unsupported-camera-model");
    CHECK(unproject(s, 0, 0).error().kind == ErrorKind::unsupported);
}

TEST_CASE("§5.15.3: project applies the named distortion model in the registry's coefficient "
          "order, and unproject inverts it",
          "[extras]") {
    SensorCalibration s;
    s.name = "cam";
    s.fx = 1000;
    s.fy = 990;
    s.cx = 960;
    s.cy = 540;
    const double x = 0.3, y = -0.2, r2 = x * x + y * y;
    SECTION("brown-conrady, 5 coefficients: k1 k2 p1 p2 k3") {
        s.camera_model = CameraModel::brown_conrady;
        s.distortion = {-0.1, 0.02, 0.001, -0.002, 0.003};
        const double radial = 1 - 0.1 * r2 + 0.02 * r2 * r2 + 0.003 * r2 * r2 * r2;
        const double xd = x * radial + 2 * 0.001 * x * y - 0.002 * (r2 + 2 * x * x);
        const double yd = y * radial + 0.001 * (r2 + 2 * y * y) + 2 * -0.002 * x * y;
        auto px = project(s, x, y);
        REQUIRE(px.ok());
        CHECK((*px)[0] == Approx(1000 * xd + 960));
        CHECK((*px)[1] == Approx(990 * yd + 540));
        auto back = unproject(s, (*px)[0], (*px)[1]);
        REQUIRE(back.ok());
        CHECK((*back)[0] == Approx(x).margin(1e-9));
        CHECK((*back)[1] == Approx(y).margin(1e-9));
    }
    SECTION("brown-conrady, 8 coefficients: the rational form k4 k5 k6 in the denominator") {
        s.camera_model = CameraModel::brown_conrady;
        s.distortion = {0.1, 0.01, 0, 0, 0.001, 0.05, 0.002, 0.0001};
        const double radial = (1 + 0.1 * r2 + 0.01 * r2 * r2 + 0.001 * r2 * r2 * r2) /
                              (1 + 0.05 * r2 + 0.002 * r2 * r2 + 0.0001 * r2 * r2 * r2);
        auto px = project(s, x, y);
        REQUIRE(px.ok());
        CHECK((*px)[0] == Approx(1000 * x * radial + 960));
        auto back = unproject(s, (*px)[0], (*px)[1]);
        REQUIRE(back.ok());
        CHECK((*back)[0] == Approx(x).margin(1e-9));
        CHECK((*back)[1] == Approx(y).margin(1e-9));
    }
    SECTION("kannala-brandt: theta_d = theta (1 + k1 theta^2 + ... + k4 theta^8)") {
        s.camera_model = CameraModel::kannala_brandt;
        s.distortion = {0.05, -0.01, 0.002, -0.0003};
        const double r = std::sqrt(r2), th = std::atan(r), t2 = th * th;
        const double thd = th * (1 + 0.05 * t2 - 0.01 * t2 * t2 + 0.002 * t2 * t2 * t2 -
                                 0.0003 * t2 * t2 * t2 * t2);
        auto px = project(s, x, y);
        REQUIRE(px.ok());
        CHECK((*px)[0] == Approx(1000 * x * thd / r + 960));
        CHECK((*px)[1] == Approx(990 * y * thd / r + 540));
        auto back = unproject(s, (*px)[0], (*px)[1]);
        REQUIRE(back.ok());
        CHECK((*back)[0] == Approx(x).margin(1e-9));
        CHECK((*back)[1] == Approx(y).margin(1e-9));
    }
    SECTION("pinhole: intrinsics only") {
        s.camera_model = CameraModel::pinhole;
        auto px = project(s, x, y);
        REQUIRE(px.ok());
        CHECK((*px)[0] == Approx(1260));
        CHECK((*px)[1] == Approx(342));
    }
}

// ---------------------------------------------------------------------------------------------
// Objects.

TEST_CASE("M073: a second Object Table is refused as duplicate-object-table", "[extras]") {
    ObjectTable t;
    t.entries.push_back({3, "cart", {0, 0, 0}, std::nullopt, std::nullopt});
    const auto file = scene_with({record_bytes(t), record_bytes(t)});
    const Error e = refused_by_both(file.bytes, "duplicate-object-table");
    CHECK(e.offset == file.records[4].offset);
}

TEST_CASE("M079: two Object Tracks for one id are refused as duplicate-object-track, naming it",
          "[extras]") {
    const TrajectorySample s0{0.0, {0, 0, 0, 1}, {0, 0, 0}};
    const auto file = scene_with({record_bytes(track(7, {s0})), record_bytes(track(4, {s0})),
                                  record_bytes(track(7, {s0}))});
    const Error e = refused_by_both(file.bytes, "duplicate-object-track");
    CHECK_THAT(e.message, Catch::Contains("7"));
}

TEST_CASE("M071 M072 M077: object counts that cannot fit are refused before allocation, naming "
          "the count and the record",
          "[extras]") {
    // object_count 2^32-1 with 6 bytes left; sample_count 2^32-1 with none.
    ByteVec table = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0};
    ByteVec trk = {7, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF};
    for (const ByteVec& rec : {test::framed(op::object_table, table), test::framed(op::object_track, trk)}) {
        const auto file = scene_with({rec});
        auto streamed = test::stream_read(file.bytes);
        REQUIRE_FALSE(streamed.ok());
        CHECK_THAT(streamed.error().message, Catch::Contains("4294967295"));
        CHECK(test::indexed_refusal(file.bytes) == streamed.error().refusal);
    }
}

TEST_CASE("§6.6: object ids keep all 32 bits through the same-bits view, and "
          "gaussians_of_object finds exactly the visible members",
          "[extras]") {
    test::BuiltScene s = test::default_scene(1, 200, 0, 11, /*object_ids=*/true);
    const auto file = test::build(s.spec);
    auto loaded = test::stream_read(file.bytes);
    REQUIRE(loaded.ok());
    const GaussianBlock& b = loaded->gaussians;
    const double t = 0.5, cutoff = loaded->info.header.cutoff;
    for (std::uint32_t id : {0u, 3u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu}) {
        std::size_t expected = 0, members = 0;
        for (std::size_t i = 0; i < b.count; ++i) {
            const auto bin = static_cast<std::uint32_t>(s.bins[0].cols[attr::object_id][i]);
            CHECK(b.object_id[i] == bin);
            members += bin == id;
            expected += bin == id && is_visible(b.win_lo[i], b.win_hi[i], b.mu_t[i],
                                                b.sigma_t[i], t, cutoff, nullptr);
        }
        const auto found = gaussians_of_object(b, id, t, cutoff);
        INFO("object " << id);
        CHECK(members > 0);
        CHECK(found.size() == expected);
        for (std::size_t i : found) CHECK(b.object_id[i] == id);
    }
}

TEST_CASE("objects_by_embedding ranks by cosine, best first, ties by id, skipping entries "
          "without or with a zero embedding, and refuses impossible queries",
          "[extras]") {
    ObjectTable t;
    t.embedding_dim = 2;
    auto entry = [](std::uint32_t id, std::optional<std::vector<float>> e) {
        return ObjectTable::Entry{id, "", {0, 0, 0}, std::nullopt, std::move(e)};
    };
    t.entries = {entry(9, std::vector<float>{2, 0}), entry(4, std::vector<float>{1, 1}),
                 entry(2, std::vector<float>{5, 0}), entry(6, std::nullopt),
                 entry(1, std::vector<float>{0, 0}), entry(3, std::vector<float>{-1, 0})};
    const std::vector<float> query = {1, 0};
    auto all = objects_by_embedding(t, query, 10);
    REQUIRE(all.ok());
    REQUIRE(all->size() == 4);
    CHECK((*all)[0].object_id == 2);  // similarity 1, tie with 9: lower id first
    CHECK((*all)[1].object_id == 9);
    CHECK((*all)[2].object_id == 4);
    CHECK((*all)[2].similarity == Approx(std::sqrt(0.5)));
    CHECK((*all)[3].object_id == 3);
    CHECK((*all)[3].similarity == Approx(-1));
    auto two = objects_by_embedding(t, query, 2);
    REQUIRE(two.ok());
    CHECK(two->size() == 2);
    CHECK(objects_by_embedding(t, std::vector<float>{1}, 1).error().refusal ==
          "embedding-dimension-mismatch");
    CHECK(objects_by_embedding(t, std::vector<float>{0, 0}, 1).error().refusal == "zero-query");
    const float nan = std::numeric_limits<float>::quiet_NaN();
    CHECK(objects_by_embedding(t, std::vector<float>{nan, 0}, 1).error().refusal ==
          "non-finite-query");
    t.embedding_dim = 0;
    CHECK(objects_by_embedding(t, query, 1).error().refusal == "no-embedding-space");
}

TEST_CASE("§3: object_pose_at clamps, lerps and slerps a track, and id 0 and untracked ids have "
          "no pose",
          "[extras]") {
    SceneInfo info;
    info.object_tracks.push_back(track(5, {{1.0, about_z(0), {0, 0, 0}},
                                           {3.0, about_z(M_PI / 2), {4, 0, 0}}}));
    ObjectTrack held = track(6, {{0.0, about_z(0), {1, 1, 1}}, {2.0, about_z(1), {2, 2, 2}}});
    held.interpolation = TrajectoryInterpolation::step;
    info.object_tracks.push_back(held);
    auto at = [&](std::uint32_t id, double t) {
        auto p = object_pose_at(info, id, t);
        REQUIRE(p.has_value());
        return *p;
    };
    CHECK(at(5, 0.0).translation == Vec3{0, 0, 0});  // before: the first sample
    CHECK(at(5, 9.0).translation == Vec3{4, 0, 0});  // after: the last
    const Pose mid = at(5, 2.0);
    CHECK(mid.translation[0] == Approx(2));
    CHECK(mid.rotation[2] == Approx(std::sin(M_PI / 8)));
    CHECK(mid.rotation[3] == Approx(std::cos(M_PI / 8)));
    CHECK(at(6, 1.999).translation == Vec3{1, 1, 1});  // step holds the earlier sample
    CHECK(at(6, 2.0).translation == Vec3{2, 2, 2});
    CHECK_FALSE(object_pose_at(info, 0, 1.0).has_value());
    CHECK_FALSE(object_pose_at(info, 8, 1.0).has_value());
}

// ---------------------------------------------------------------------------------------------
// §5.16, §5.17, §7: audio.

TEST_CASE("M081: two Audio Source records with one source_id are refused as "
          "duplicate-audio-source, naming it",
          "[extras][audio]") {
    const auto file = scene_with({record_bytes(source(4)), audio_data(4),
                                  record_bytes(source(4)), audio_data(4)},
                                 true);
    const Error e = refused_by_both(file.bytes, "duplicate-audio-source");
    CHECK_THAT(e.message, Catch::Contains("4"));
}

TEST_CASE("M089 M090: an Audio Source without its Audio Data, or Audio Data without its source, "
          "is refused naming the unmatched source_id",
          "[extras][audio]") {
    SECTION("source without data") {
        const auto file = scene_with({record_bytes(source(4)), record_bytes(source(12)),
                                      audio_data(4)},
                                     true);
        const Error e = refused_by_both(file.bytes, "unmatched-audio-source");
        CHECK_THAT(e.message, Catch::Contains("12"));
        CHECK(e.offset == file.records[4].offset);  // the Audio Source record
    }
    SECTION("data without source") {
        const auto file = scene_with({record_bytes(source(4)), audio_data(4), audio_data(13)},
                                     true);
        const Error e = refused_by_both(file.bytes, "unmatched-audio-data");
        CHECK_THAT(e.message, Catch::Contains("13"));
    }
    SECTION("two data records for one source") {
        const auto file = scene_with({record_bytes(source(4)), audio_data(4), audio_data(4)},
                                     true);
        refused_by_both(file.bytes, "duplicate-audio-data");
    }
}

TEST_CASE("M091: Audio Data whose payload length is not the descriptor's data_length is refused "
          "as audio-data-length-mismatch",
          "[extras][audio]") {
    const auto file = scene_with({record_bytes(source(4)), audio_data(4, 5)}, true);
    const Error e = refused_by_both(file.bytes, "audio-data-length-mismatch");
    CHECK_THAT(e.message, Catch::Contains("5 bytes"));
}

TEST_CASE("M092: audio records after the first chunk are refused by both readers, as the "
          "record that is late or as the pair that is missing when the first chunk arrives",
          "[extras][audio]") {
    SECTION("the whole pair late, flag set: no pair is there when the first chunk arrives") {
        const auto file = scene_with({}, true, {record_bytes(source(4)), audio_data(4)});
        refused_by_both(file.bytes, "audio-flag-mismatch");
    }
    SECTION("the whole pair late, flag clear") {
        const auto file = scene_with({}, false, {record_bytes(source(4)), audio_data(4)});
        const Error e = refused_by_both(file.bytes, "audio-after-first-chunk");
        CHECK(e.offset == file.records[file.records.size() - 7].offset);  // the Audio Source
        MemorySource src(file.bytes);
        auto report = validate(src);
        REQUIRE(report.ok());
        std::size_t late = 0;
        for (const Finding& f : report->findings) late += f.rule == "audio-after-first-chunk";
        CHECK(late == 2);  // the Audio Source and its Audio Data
    }
    SECTION("the data late") {
        const auto file = scene_with({record_bytes(source(4))}, true, {audio_data(4)});
        refused_by_both(file.bytes, "unmatched-audio-source");
    }
}

TEST_CASE("§7: Header flags bit 0 is set exactly when the scene carries audio "
          "(audio-flag-mismatch both ways)",
          "[extras][audio]") {
    refused_by_both(scene_with({}, true).bytes, "audio-flag-mismatch");
    refused_by_both(scene_with({record_bytes(source(4)), audio_data(4)}, false).bytes,
                    "audio-flag-mismatch");
    const SceneInfo info =
        read_ok(scene_with({record_bytes(source(4)), audio_data(4)}, true).bytes);
    REQUIRE(info.audio.size() == 1);
    CHECK(info.audio[0].payload.length == 4);
}

TEST_CASE("M088: an audio keyframe outside 0..Header.duration_sec is refused by the readers as "
          "keyframe-time-out-of-range, at the Audio Source record",
          "[extras][audio]") {
    AudioSource late = source(4);
    late.keyframes = {{0.5, {0, 0, 0}, {0, 0, 0, 1}}, {2.5, {1, 0, 0}, {0, 0, 0, 1}}};
    const auto file = scene_with({record_bytes(late), audio_data(4)}, true);  // duration 2
    const Error e = refused_by_both(file.bytes, "keyframe-time-out-of-range");
    CHECK_THAT(e.message, Catch::Contains("keyframes[1]"));
    CHECK(e.offset == file.records[3].offset);
}

TEST_CASE("M105: the legacy Audio record beside Audio Source or Audio Data records is refused as "
          "mixed-audio-records, in either order",
          "[extras][audio]") {
    const ByteVec payload(4, 1);
    const ByteVec legacy = record_bytes(AudioLegacy{"wav", 0.0, payload, 0});
    refused_by_both(scene_with({legacy, record_bytes(source(4)), audio_data(4)}, true).bytes,
                    "mixed-audio-records");
    refused_by_both(scene_with({record_bytes(source(4)), audio_data(4), legacy}, true).bytes,
                    "mixed-audio-records");
    refused_by_both(scene_with({legacy, audio_data(4)}, true).bytes, "mixed-audio-records");
    refused_by_both(scene_with({legacy, legacy}, true).bytes, "mixed-audio-records");
}

TEST_CASE("M034: the legacy Audio record is accepted as source 0, non-spatial, gain 1, no loop, "
          "lasting max(0, duration - start)",
          "[extras][audio]") {
    const ByteVec payload(6, 1);
    const SceneInfo info =
        read_ok(scene_with({record_bytes(AudioLegacy{"wav", 0.5, payload, 0})}, true).bytes);
    REQUIRE(info.audio.size() == 1);
    const AudioSourceEntry& a = info.audio[0];
    CHECK(a.legacy);
    CHECK(a.descriptor.source_id == 0);
    CHECK_FALSE(a.descriptor.spatial());
    CHECK_FALSE(a.descriptor.loop());
    CHECK(a.descriptor.gain == 1);
    CHECK(a.descriptor.channel_layout.empty());
    CHECK(a.descriptor.duration_sec == 1.5);  // the built scene lasts 2 s
    CHECK(a.payload.length == 6);
    const auto st = audio_state_at(info, 0, 1.0);
    REQUIRE(st.has_value());
    CHECK(st->active);
    CHECK(st->local_time == 0.5);
    CHECK_FALSE(audio_state_at(info, 0, 2.0)->active);
}

TEST_CASE("M034: the legacy Audio record reads with the registry's default interpolation, "
          "\"linear\", on both paths",
          "[extras][audio]") {
    const ByteVec payload(6, 1);
    const auto file = scene_with({record_bytes(AudioLegacy{"wav", 0.5, payload, 0})}, true);
    const SceneInfo streamed = read_ok(file.bytes);
    REQUIRE(streamed.audio.size() == 1);
    CHECK(streamed.audio[0].descriptor.interpolation == "linear");
    const auto indexed = test::indexed_read(file.bytes);
    REQUIRE_FALSE(indexed.error);
    REQUIRE(indexed.info.audio.size() == 1);
    CHECK(indexed.info.audio[0].descriptor == streamed.audio[0].descriptor);
}

TEST_CASE("§5.10: the Camera is advisory — a NaN fov and key times that do not increase are read "
          "by both paths as written, camera_at stays finite, and the validator warns naming the "
          "field",
          "[extras]") {
    Camera cam;
    cam.fov_y_deg = std::numeric_limits<double>::quiet_NaN();
    cam.position = {1, 2, 3};
    cam.keyframes = {{0, {0, 0, 0}, {0, 0, -1}}, {2, {2, 0, 0}, {2, 0, -1}},
                     {1, {1, 0, 0}, {1, 0, -1}}, {1, {5, 0, 0}, {5, 0, -1}}};
    cam.interpolation = "spline";
    const auto file = scene_with({record_bytes(cam)});
    const SceneInfo info = read_ok(file.bytes);
    REQUIRE(info.camera.has_value());
    CHECK(std::isnan(info.camera->fov_y_deg));
    CHECK(info.camera->keyframes == cam.keyframes);
    const auto indexed = test::indexed_read(file.bytes);
    REQUIRE(indexed.info.camera.has_value());
    CHECK(indexed.info.camera->keyframes == cam.keyframes);
    for (double t : {-1.0, 0.5, 1.0, 1.5, 3.0})
        for (double v : camera_at(*info.camera, t).position) CHECK(std::isfinite(v));

    MemorySource src(file.bytes);
    auto report = validate(src);
    REQUIRE(report.ok());
    std::vector<std::string> warned;
    for (const Finding& f : report->findings) {
        if (f.field.rfind("Camera.", 0) != 0) continue;
        CHECK(f.severity == Severity::warning);
        CHECK(f.section == "§5.10");
        warned.push_back(f.rule + " " + f.field);
    }
    CHECK(warned == std::vector<std::string>{"non-finite-value Camera.fov_y_deg",
                                             "non-increasing-keyframe-times Camera.keyframes[2].time",
                                             "non-increasing-keyframe-times Camera.keyframes[3].time"});
    CHECK(report->valid());
}

TEST_CASE("M054: fx and fy must be non-zero — a negative focal length is one, read by both paths, "
          "a zero fx is refused as invalid-intrinsics by both",
          "[extras]") {
    SensorCalibration cam;
    cam.name = "cam";
    cam.modality = "camera";
    cam.camera_model = CameraModel::pinhole;
    cam.width_px = 640;
    cam.height_px = 480;
    cam.fx = -500;  // a mirrored image axis: non-zero, finite
    cam.fy = 500;
    cam.cx = 320;
    cam.cy = 240;
    const SceneInfo info = read_ok(scene_with({record_bytes(cam)}).bytes);
    REQUIRE(info.sensors.size() == 1);
    CHECK(info.sensors[0].fx == -500);
    cam.fx = 0;
    refused_by_both(scene_with({record_bytes(cam)}).bytes, "invalid-intrinsics");
}

TEST_CASE("§7.1 §7.2: audio_state_at — active window, local time with and without loop, base "
          "pose, clamped keys, step and linear with shortest-arc slerp",
          "[extras][audio]") {
    AudioSource a = source(1);
    a.rotation = {0, 0, 0, 2};  // normalized on use
    AudioState st = audio_state_at(a, 0.25);
    CHECK_FALSE(st.active);
    CHECK(st.local_time == 0);
    CHECK(st.gain == 0.8);
    CHECK(st.pose.rotation == Quat{0, 0, 0, 1});
    st = audio_state_at(a, 1.25);
    CHECK(st.active);
    CHECK(st.local_time == 0.75);
    st = audio_state_at(a, 1.5);  // start + duration: ended
    CHECK_FALSE(st.active);
    CHECK(st.local_time == 1.0);
    a.flags = kAudioFlagLoop;
    st = audio_state_at(a, 3.75);
    CHECK(st.active);
    CHECK(st.local_time == Approx(0.25));

    // Keyed: the second key's quaternion is the negated form of 90° about z; the path must take
    // the short way (45° at the midpoint, not 135°).
    a.keyframes = {{1.0, {0, 0, 0}, about_z(0)},
                   {2.0, {2, 0, 0}, {0, 0, -std::sin(M_PI / 4), -std::cos(M_PI / 4)}}};
    CHECK(audio_state_at(a, 0.0).pose.translation == Vec3{0, 0, 0});
    CHECK(audio_state_at(a, 5.0).pose.translation == Vec3{2, 0, 0});
    const Pose mid = audio_state_at(a, 1.5).pose;
    CHECK(mid.translation[0] == Approx(1));
    CHECK(std::abs(mid.rotation[3]) == Approx(std::cos(M_PI / 8)));
    CHECK(std::abs(mid.rotation[2]) == Approx(std::sin(M_PI / 8)));
    a.interpolation = "step";
    CHECK(audio_state_at(a, 1.99).pose.translation == Vec3{0, 0, 0});
    CHECK(audio_state_at(a, 2.0).pose.translation == Vec3{2, 0, 0});
}

// ---------------------------------------------------------------------------------------------
// §5.10: the camera.

TEST_CASE("§5.10: camera_at — default view without keys, linear lerp, Catmull-Rom through the "
          "keys, clamping, and loop wrapping over the keyed span",
          "[extras]") {
    Camera cam;
    cam.fov_y_deg = 50;
    cam.position = {9, 9, 9};
    cam.target = {0, 0, 0};
    cam.interpolation = "linear";
    CHECK(camera_at(cam, 3).position == Vec3{9, 9, 9});
    CHECK(camera_at(cam, 3).fov_y_deg == 50);

    cam.keyframes = {{0, {0, 0, 0}, {0, 0, -1}}, {1, {1, 0, 0}, {1, 0, -1}},
                     {2, {3, 0, 0}, {3, 0, -1}}};
    CHECK(camera_at(cam, 0.5).position[0] == Approx(0.5));
    CHECK(camera_at(cam, 1.5).target[0] == Approx(2));
    CHECK(camera_at(cam, -4).position[0] == 0);
    CHECK(camera_at(cam, 7).position[0] == 3);

    cam.interpolation = "spline";
    for (const auto& k : cam.keyframes) CHECK(camera_at(cam, k.time).position == k.position);
    // Uniform Catmull-Rom, written out: 0.5 (2 p1 + (p2 - p0) u + (2 p0 - 5 p1 + 4 p2 - p3) u²
    // + (3 p1 - p0 - 3 p2 + p3) u³), the end keys standing in for the missing neighbours.
    auto cr = [](double p0, double p1, double p2, double p3, double u) {
        return 0.5 * (2 * p1 + (p2 - p0) * u + (2 * p0 - 5 * p1 + 4 * p2 - p3) * u * u +
                      (3 * p1 - p0 - 3 * p2 + p3) * u * u * u);
    };
    CHECK(camera_at(cam, 0.5).position[0] == Approx(cr(0, 0, 1, 3, 0.5)));  // 0.375
    CHECK(camera_at(cam, 1.25).position[0] == Approx(cr(0, 1, 3, 3, 0.25)));
    CHECK(camera_at(cam, 0.5).position[0] != Approx(0.5));  // not the linear path

    cam.interpolation = "linear";
    cam.loop = true;
    CHECK(camera_at(cam, 2.5).position[0] == Approx(0.5));   // wraps to 0.5
    CHECK(camera_at(cam, -0.5).position[0] == Approx(2));    // wraps to 1.5
    CHECK(camera_at(cam, 2.0).position[0] == 0);             // [first, last): last maps to first

    // The record is advisory and its keys are not ordered by the parser: never NaN.
    cam.loop = false;
    cam.keyframes = {{1, {0, 0, 0}, {0, 0, 0}}, {1, {5, 0, 0}, {0, 0, 0}}};
    for (double t : {0.5, 1.0, 1.5}) CHECK(std::isfinite(camera_at(cam, t).position[0]));
}

// ---------------------------------------------------------------------------------------------
// The interop fixture's answers.

TEST_CASE("interop: birth-extras' audio_state_at, rig_pose_at and object_pose_at match the other "
          "implementation at every instant it lists",
          "[extras][interop]") {
    const auto bytes = test::load_fixture("birth-extras.4dgs");
    const Json fixture = Json::parse_file(test::data_path("birth-extras.json"));
    auto loaded = test::stream_read(bytes);
    if (!loaded.ok()) FAIL(loaded.error().describe());
    const SceneInfo& info = loaded->info;
    auto check_vec = [](const auto& got, const Json& want) {
        REQUIRE(want.items().size() == got.size());
        for (std::size_t c = 0; c < got.size(); ++c)
            CHECK(got[c] == Approx(want.items()[c].number()).margin(1e-6));
    };
    std::size_t compared = 0;
    for (const auto& [time, states] : fixture["audio_state_at"].members()) {
        const double t = std::stod(time);
        for (const Json& want : states.items()) {
            INFO("t " << t << " source " << want["source_id"].number());
            auto got = audio_state_at(info, std::uint32_t(want["source_id"].number()), t);
            REQUIRE(got.has_value());
            CHECK(got->active == want["active"].boolean());
            CHECK(got->local_time == Approx(want["local_time"].number()).margin(1e-9));
            CHECK(got->gain == Approx(want["gain"].number()));
            check_vec(got->pose.translation, want["position"]);
            check_vec(got->pose.rotation, want["rotation"]);
            ++compared;
        }
    }
    for (const auto& [time, rigs] : fixture["rig_pose_at"].members()) {
        const double t = std::stod(time);
        for (const auto& [name, want] : rigs.members()) {
            INFO("t " << t << " rig " << name);
            const RigTrajectory* r = find_rig_trajectory(info, name);
            REQUIRE(r != nullptr);
            const Pose got = sample_trajectory(r->samples, r->interpolation, t);
            check_vec(got.translation, want["translation"]);
            check_vec(got.rotation, want["rotation"]);
            ++compared;
        }
    }
    for (const auto& [time, objects] : fixture["object_pose_at"].members()) {
        const double t = std::stod(time);
        for (const auto& [id, want] : objects.members()) {
            INFO("t " << t << " object " << id);
            auto got = object_pose_at(info, std::uint32_t(std::stoul(id)), t);
            REQUIRE(got.has_value());
            check_vec(got->translation, want["translation"]);
            check_vec(got->rotation, want["rotation"]);
            ++compared;
        }
    }
    CHECK(compared == 5 * 2 + 5 * 1 + 5 * 2);
    // The rig-mounted sensor composes with the rig (§5.15.3), and the file passes every
    // cross-record rule.
    auto front = sensor_pose_at(info, "front", 2.0);
    REQUIRE(front.ok());
    CHECK(check_scene_references(info).ok());
}

TEST_CASE("M036: Statistics are advisory, and what a reader reports comes from the chunks, even when "
          "the Statistics record disagrees",
          "[extras]") {
    test::BuiltScene s = test::default_scene(2, 40, 0);
    s.spec.crc = false;  // so the lie below is not caught as a summary fault first
    auto file = test::build(s.spec);
    for (const test::BuiltRecord& r : file.records)
        if (r.opcode == op::statistics)
            test::put_u64(file.bytes, r.offset + kRecordHeaderSize, 999);  // gaussian_count
    auto streamed = test::stream_read(file.bytes);
    REQUIRE(streamed.ok());
    CHECK(streamed->gaussians.count == 80);
    REQUIRE(streamed->info.statistics.has_value());
    CHECK(streamed->info.statistics->gaussian_count == 999);  // kept as written, not trusted
    const auto indexed = test::indexed_read(file.bytes);
    REQUIRE_FALSE(indexed.error.has_value());
    CHECK(indexed.block.count == 80);
    CHECK(indexed.info.index.size() == 2);
}

TEST_CASE("a file without chunks meets the same cross-record rules and the same effective window "
          "table in both readers",
          "[extras]") {
    test::BuiltScene s = test::default_scene(0, 0, 0);
    s.spec.windows.reset();
    s.spec.header.flags = kHeaderFlagAudio;
    refused_by_both(test::build(s.spec).bytes, "audio-flag-mismatch");
    s.spec.header.flags = 0;
    s.spec.front = {record_bytes(anchor("nowhere"))};
    refused_by_both(test::build(s.spec).bytes, "missing-anchor-frame");
    s.spec.front.clear();
    const auto file = test::build(s.spec);
    const SceneInfo streamed = read_ok(file.bytes);
    const auto indexed = test::indexed_read(file.bytes);
    REQUIRE(streamed.windows.size() == 1);
    CHECK(streamed.windows[0].lo == 0);
    CHECK(streamed.windows[0].hi == 0);
    CHECK(indexed.info.windows.size() == 1);
}
