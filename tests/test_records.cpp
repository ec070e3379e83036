// Tests for fourdgs/records.hpp: every record's writer and parser, the shape rules of §5, the
// §5.3 bound grammar and exact comparison, and the interop fixtures written by another
// implementation (tests/data/*.4dgs), which every implemented record of must parse and re-write
// byte for byte.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "fourdgs/records.hpp"

using namespace fourdgs;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::uint64_t kBase = 1000;  // records sit at a non-zero file offset so offsets are absolute

using Buf = std::vector<std::uint8_t>;

template <class T>
Buf framed(const T& x) {
    ByteWriter w;
    write(w, x);
    return w.buffer();
}

RecordView view_of(const Buf& bytes, std::uint64_t offset = kBase) {
    auto r = parse_record(bytes, offset);
    REQUIRE(r.ok());
    return *r;
}

std::uint64_t content_length(const Buf& rec) {
    std::uint64_t n;
    std::memcpy(&n, rec.data() + 1, 8);
    return n;
}

// The record with `extra` appended to its content (content_length patched): §4.2 appended fields.
Buf with_appended(Buf rec, const Buf& extra) {
    rec.insert(rec.end(), extra.begin(), extra.end());
    std::uint64_t n = rec.size() - kRecordHeaderSize;
    std::memcpy(rec.data() + 1, &n, 8);
    return rec;
}

// The record with its content cut to `n` bytes (content_length patched).
Buf cut_to(Buf rec, std::size_t n) {
    rec.resize(kRecordHeaderSize + n);
    std::uint64_t len = n;
    std::memcpy(rec.data() + 1, &len, 8);
    return rec;
}

// A raw record from an opcode and hand-built content.
Buf raw_record(std::uint8_t opcode, const Buf& content) {
    ByteWriter w;
    write_record(w, opcode, content);
    return w.buffer();
}

template <class R>
void require_refusal(const R& r, const std::string& refusal,
                     std::initializer_list<std::string> mentions = {}) {
    REQUIRE_FALSE(r.ok());
    INFO(r.error().describe());
    REQUIRE(r.error().refusal == refusal);
    for (const auto& m : mentions) CHECK_THAT(r.error().message, Catch::Contains(m));
}

// Write → parse → write reproduces the bytes; the same record with bytes appended after its known
// fields parses to the same thing (M009/M010); every shorter content_length is record-too-short
// (or count-exceeds-record when the cut lands inside a counted array); a wrong opcode is the
// caller's error.
// `optional_tail` bytes at the end of the content are an appended field a record may lack (SH
// depths, keyframe index fields): cuts inside that tail are not required to fail.
template <class T, class Parse>
void check_round_trip(const T& x, Parse parse, bool appendable = true,
                      std::size_t optional_tail = 0) {
    Buf bytes = framed(x);
    RecordView rv = view_of(bytes);
    auto p = parse(rv);
    if (!p.ok()) FAIL(p.error().describe());
    CHECK(framed(*p) == bytes);

    if (appendable) {
        Buf ext = with_appended(bytes, {0xAB, 0xCD, 0xEF, 0x01, 0x02});
        auto q = parse(view_of(ext));
        if (!q.ok()) FAIL(q.error().describe());
        CHECK(framed(*q) == bytes);
    }

    std::uint64_t n = content_length(bytes);
    for (std::uint64_t cut = 0; cut + optional_tail < n; ++cut) {
        Buf shorter = cut_to(bytes, cut);
        auto s = parse(view_of(shorter));
        INFO("content cut to " << cut << " of " << n << " bytes");
        REQUIRE_FALSE(s.ok());
        CHECK((s.error().refusal == "record-too-short" ||
               s.error().refusal == "count-exceeds-record"));
        CHECK(s.error().kind == ErrorKind::malformed);
        CHECK(s.error().offset >= kBase + kRecordHeaderSize);
        CHECK(s.error().offset <= kBase + kRecordHeaderSize + cut);
    }

    Buf wrong = bytes;
    wrong[0] = 0x7E;
    auto w = parse(view_of(wrong));
    REQUIRE_FALSE(w.ok());
    CHECK(w.error().kind == ErrorKind::invalid_argument);
}

// ---- sample records with non-trivial values ----

Header sample_header() {
    Header h;
    h.profile = "capture";
    h.library = "fourdgs test";
    h.duration_sec = 12.5;
    h.gaussian_count = 123456789012ull;
    h.cutoff = 0.07;
    h.temporal_model = "gaussian-birth";
    h.aabb = {-1.5, -2.25, -3.125, 4.5, 5.75, 6.875};
    h.sh_degree = 2;
    h.flags = kHeaderFlagAudio | kHeaderFlagCompressed;
    h.attributes = {{"title", "t"}, {"visibility_profile", "box"}, {"a", ""}};
    return h;
}

Quantization sample_quantization() {
    Quantization q;
    q.scheme = "uniform-v1";
    q.pos_origin = {-1.25, 0.5, 3.0};
    q.step_pos = 0.001;
    q.step_scale_log = 0.04;
    q.step_rot = 0.004;
    q.step_rgb = 1.0 / 255;
    q.step_alpha = 2.0 / 255;
    q.step_motion = 0.002;
    q.step_time = 0.004;
    q.step_sigma_log = 0.04;
    q.step_sh = 4;
    q.bounds = {{"pos", "0.0005"}, {"rot", "0.002"}, {"sh", "2"}, {"sh_band1", "0"}};
    q.sh_depths = {8, 6, 5};
    return q;
}

Camera sample_camera() {
    Camera c;
    c.fov_y_deg = 55;
    c.position = {0, 1.5, 4};
    c.target = {0, 0, 0};
    c.keyframes = {{0.0, {0, 1.5, 4}, {0, 0, 0}}, {2.5, {2, 1.5, 3}, {0, 0.5, 0}}};
    c.interpolation = "spline";
    c.loop = true;
    return c;
}

AudioSource sample_audio_source() {
    AudioSource s;
    s.source_id = 3;
    s.name = "drone";
    s.codec = "wav";
    s.channel_layout = "mono";
    s.data_length = 8000;
    s.start_sec = 0.5;
    s.duration_sec = 0.5;
    s.gain = 0.8;
    s.flags = kAudioFlagSpatial | kAudioFlagLoop;
    s.position = {1, 2, 0};
    s.rotation = {0, 0, 0, 1};
    s.keyframes = {{1.0, {1, 2, 0}, {0, 0, 0, 1}}, {4.0, {-1, 2, 3}, {0, 0.7071, 0, 0.7071}}};
    s.interpolation = "linear";
    return s;
}

CoordinateFrame sample_frame() {
    CoordinateFrame f;
    f.name = "";
    f.handedness = Handedness::right;
    f.up_axis = Axis::pos_y;
    f.forward_axis = Axis::neg_z;
    f.length_unit = LengthUnit::centimetre;
    f.metres_per_unit = 0.01;
    return f;
}

SensorCalibration sample_sensor() {
    SensorCalibration s;
    s.name = "front";
    s.modality = "camera";
    s.camera_model = CameraModel::brown_conrady;
    s.width_px = 1920;
    s.height_px = 1080;
    s.fx = 1400;
    s.fy = 1401;
    s.cx = 960;
    s.cy = 540;
    s.distortion = {0.1, -0.05, 0.001, 0.0005, 0.01};
    s.rotation = {0, 0, 0, 1};
    s.translation = {0.1, 0.2, 0};
    s.pose_reference = PoseReference::rig;
    s.rig_name = "rig";
    return s;
}

SensorCalibration sample_imu() {
    SensorCalibration s;
    s.name = "imu";
    s.modality = "imu";
    s.camera_model = CameraModel::none;
    s.rotation = {0, 0, 0, 1};
    return s;
}

std::vector<TrajectorySample> sample_samples() {
    return {{0.0, {0, 0, 0, 1}, {0, 0, 0}},
            {2.5, {0, 0.3827, 0, 0.9239}, {1, 0, 0.5}},
            {5.0, {0, 0.7071, 0, 0.7071}, {2, 0, 0}}};
}

RigTrajectory sample_rig() {
    RigTrajectory t;
    t.name = "rig";
    t.interpolation = TrajectoryInterpolation::step;
    t.samples = sample_samples();
    return t;
}

ObjectTrack sample_track() {
    ObjectTrack t;
    t.object_id = 8;
    t.interpolation = TrajectoryInterpolation::linear;
    t.samples = sample_samples();
    return t;
}

GeodeticAnchor sample_anchor() {
    GeodeticAnchor g;
    g.frame_name = "";
    g.latitude_deg = 48.8584;
    g.longitude_deg = 2.2945;
    g.altitude_m = 35;
    g.heading_deg = 90;
    return g;
}

ObjectTable sample_table() {
    ObjectTable t;
    t.embedding_dim = 3;
    ObjectTable::Entry a;
    a.object_id = 3;
    a.label = "cart";
    a.anchor = {0.5f, 0, -1};
    a.embedding = std::vector<float>{0.6f, 0.8f, 0};
    ObjectTable::Entry b;
    b.object_id = 8;
    b.label = "flag";
    b.anchor = {1, 1, 0};
    b.dynamics = ObjectTable::Dynamics{{0.5f, 0, 0}, {0, 0, 0.1f}, {0, -9.81f, 0}};
    ObjectTable::Entry c;
    c.object_id = 0;
    c.label = "";
    t.entries = {a, b, c};
    return t;
}

// Hand-built bare §5.6 stream: 17-byte header + payload.
Buf bare_stream(std::uint8_t attribute_id, const Buf& payload) {
    ByteWriter w;
    w.u8(attribute_id);
    w.u8(1);
    w.u8(0);
    w.u8(0);
    w.u8(9);
    w.u32(4);
    w.u64(payload.size());
    w.raw(payload);
    return w.buffer();
}

// ---- interop fixtures ----

struct FixtureFile {
    Buf bytes;
    std::vector<RecordView> records;
};

FixtureFile load_fixture(const std::string& name) {
    FixtureFile f;
    std::string path = std::string(FOURDGS_TEST_DATA) + "/" + name;
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in.good());
    f.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    REQUIRE(f.bytes.size() > 2 * kMagicSize);
    REQUIRE(check_magic(f.bytes, 0).ok());
    std::uint64_t end = f.bytes.size() - kMagicSize;
    REQUIRE(check_magic(Bytes(f.bytes).subspan(end), end).ok());
    std::uint64_t p = kMagicSize;
    while (p < end) {
        auto r = parse_record(Bytes(f.bytes).subspan(p, end - p), p);
        REQUIRE(r.ok());
        f.records.push_back(*r);
        p = r->end_offset();
    }
    REQUIRE(p == end);
    return f;
}

template <class Parse>
void reparse_exact(const RecordView& r, Parse parse) {
    auto p = parse(r);
    if (!p.ok()) FAIL(opcode_name(r.opcode) << " at " << r.offset << ": " << p.error().describe());
    Buf original(r.content.begin(), r.content.end());
    Buf again = framed(*p);
    Buf again_content(again.begin() + kRecordHeaderSize, again.end());
    INFO(opcode_name(r.opcode) << " at " << r.offset);
    CHECK(again_content == original);
}

// Parses every record whose opcode records.hpp implements and re-writes it byte for byte.
// Returns the number of records parsed.
int parse_all(const FixtureFile& f) {
    int n = 0;
    for (const RecordView& r : f.records) {
        ++n;
        switch (r.opcode) {
            case op::header: reparse_exact(r, parse_header); break;
            case op::footer: reparse_exact(r, parse_footer); break;
            case op::quantization: reparse_exact(r, parse_quantization); break;
            case op::window_table: reparse_exact(r, parse_window_table); break;
            case op::chunk: reparse_exact(r, parse_chunk); break;
            case op::sh_band: reparse_exact(r, parse_sh_band); break;
            case op::chunk_index: reparse_exact(r, parse_chunk_index); break;
            case op::audio_legacy: reparse_exact(r, parse_audio_legacy); break;
            case op::camera: reparse_exact(r, parse_camera); break;
            case op::metadata: reparse_exact(r, parse_metadata); break;
            case op::statistics: reparse_exact(r, parse_statistics); break;
            case op::attachment: reparse_exact(r, parse_attachment); break;
            case op::summary_offset: reparse_exact(r, parse_summary_offset); break;
            case op::delta_chunk: reparse_exact(r, parse_delta_chunk); break;
            case op::audio_source: reparse_exact(r, parse_audio_source); break;
            case op::audio_data: reparse_exact(r, parse_audio_data); break;
            case op::coordinate_frame: reparse_exact(r, parse_coordinate_frame); break;
            case op::sensor_calibration: reparse_exact(r, parse_sensor_calibration); break;
            case op::rig_trajectory: reparse_exact(r, parse_rig_trajectory); break;
            case op::geodetic_anchor: reparse_exact(r, parse_geodetic_anchor); break;
            case op::object_table: reparse_exact(r, parse_object_table); break;
            case op::object_track: reparse_exact(r, parse_object_track); break;
            default: --n; break;
        }
    }
    return n;
}

std::vector<RecordView> of(const FixtureFile& f, std::uint8_t opcode) {
    std::vector<RecordView> v;
    for (const auto& r : f.records)
        if (r.opcode == opcode) v.push_back(r);
    return v;
}

}  // namespace

// =============================================================================================
// Round trips, appended bytes, short records — every record type.

TEST_CASE("M009/M010: every record round-trips, tolerates appended bytes and refuses a short "
          "content_length (§4.2, §5)",
          "[records]") {
    SECTION("Header") { check_round_trip(sample_header(), parse_header); }
    SECTION("Footer") { check_round_trip(Footer{8578, 8794, 0xDEADBEEF}, parse_footer); }
    SECTION("Quantization with SH depths") {
        check_round_trip(sample_quantization(), parse_quantization, true, 4);
    }
    SECTION("Quantization without SH depths") {
        Quantization q = sample_quantization();
        q.sh_depths.clear();
        // Appended bytes here land on sh_depth_count: tested on their own below.
        check_round_trip(q, parse_quantization, false);
    }
    SECTION("Window Table") {
        check_round_trip(WindowTable{{{0, 2}, {2, 4}, {4, 6.5}}}, parse_window_table);
        check_round_trip(WindowTable{}, parse_window_table);
    }
    SECTION("Chunk Index, gaussian-birth") {
        ChunkIndex e{0.5, 2.5, 611, 2636, 100, {{1, 3000, 916}, {2, 3916, 1098}}, std::nullopt};
        // Appended bytes here land on the keyframe fields: tested on their own below.
        check_round_trip(e, parse_chunk_index, false);
    }
    SECTION("Chunk Index, keyframe-delta") {
        ChunkIndex e{1, 2, 1765, 1055, 44, {}, KeyframeIndexFields{1, 1, 517, 517, 1, 41}};
        check_round_trip(e, parse_chunk_index, true, kKeyframeIndexFieldsSize);
    }
    SECTION("Camera") { check_round_trip(sample_camera(), parse_camera); }
    SECTION("Metadata") {
        check_round_trip(Metadata{"app", {{"application", "fourdgs"}, {"k", "v"}}}, parse_metadata);
    }
    SECTION("Statistics") {
        check_round_trip(Statistics{300, 3, 6, {-1, -2, -3, 1, 2, 3}}, parse_statistics);
    }
    SECTION("Summary Offset") {
        check_round_trip(SummaryOffset{op::chunk_index, 8578, 147}, parse_summary_offset);
    }
    SECTION("Audio Source") { check_round_trip(sample_audio_source(), parse_audio_source); }
    SECTION("Audio Source without keyframes, stereo bed") {
        AudioSource s = sample_audio_source();
        s.flags = 0;
        s.channel_layout = "stereo";
        s.keyframes.clear();
        s.interpolation = "step";
        check_round_trip(s, parse_audio_source);
    }
    SECTION("Coordinate Frame") { check_round_trip(sample_frame(), parse_coordinate_frame); }
    SECTION("Sensor Calibration") {
        check_round_trip(sample_sensor(), parse_sensor_calibration);
        check_round_trip(sample_imu(), parse_sensor_calibration);
    }
    SECTION("Rig Trajectory") { check_round_trip(sample_rig(), parse_rig_trajectory); }
    SECTION("Geodetic Anchor") { check_round_trip(sample_anchor(), parse_geodetic_anchor); }
    SECTION("Object Table") { check_round_trip(sample_table(), parse_object_table); }
    SECTION("Object Table without an embedding space") {
        ObjectTable t = sample_table();
        t.embedding_dim = 0;
        for (auto& e : t.entries) e.embedding.reset();
        check_round_trip(t, parse_object_table);
    }
    SECTION("Object Track") { check_round_trip(sample_track(), parse_object_track); }
}

TEST_CASE("records carrying byte views round-trip and view the content at absolute offsets (§5.5, "
          "§5.7, §5.9, §5.13, §5.17, §5.18)",
          "[records]") {
    Buf payload = {1, 2, 3, 4, 5, 6, 7};

    SECTION("Chunk") {
        ChunkRecord ch;
        ch.t0 = 2;
        ch.t1 = 4;
        ch.level = 1;
        ch.count = 100;
        ch.compression = "zstd";
        ch.uncompressed_size = 9999;
        ch.records = payload;
        check_round_trip(ch, parse_chunk);
        Buf bytes = framed(ch);
        auto p = parse_chunk(view_of(bytes));
        REQUIRE(p.ok());
        CHECK(p->t0 == 2);
        CHECK(p->t1 == 4);
        CHECK(p->level == 1);
        CHECK(p->count == 100);
        CHECK(p->compression == "zstd");
        CHECK(p->uncompressed_size == 9999);
        REQUIRE(p->records.size() == payload.size());
        CHECK(Buf(p->records.begin(), p->records.end()) == payload);
        // The view points into the record's bytes, at the absolute offset it reports.
        std::uint64_t rel = p->records_offset - kBase;
        CHECK(p->records.data() == bytes.data() + rel);
        CHECK(rel == bytes.size() - payload.size());
    }
    SECTION("SH Band Stream") {
        Buf stream = bare_stream(7, payload);
        ShBandRecord s;
        s.band = 2;
        s.stream = stream;
        check_round_trip(s, parse_sh_band);
        Buf bytes = framed(s);
        auto p = parse_sh_band(view_of(bytes));
        REQUIRE(p.ok());
        CHECK(p->band == 2);
        CHECK(p->stream.size() == stream.size());
        CHECK(p->stream_offset == kBase + kRecordHeaderSize + 1);
        CHECK(p->stream[0] == 7);
    }
    SECTION("SH Band Stream whose inner payload runs past the record is record-too-short") {
        Buf stream = bare_stream(7, payload);
        stream.pop_back();
        Buf bytes = raw_record(op::sh_band, [&] {
            Buf c{1};
            c.insert(c.end(), stream.begin(), stream.end());
            return c;
        }());
        require_refusal(parse_sh_band(view_of(bytes)), "record-too-short");
    }
    SECTION("Audio (legacy)") {
        AudioLegacy a;
        a.codec = "opus";
        a.start_sec = 1.25;
        a.data = payload;
        check_round_trip(a, parse_audio_legacy);
        Buf bytes = framed(a);
        auto p = parse_audio_legacy(view_of(bytes));
        REQUIRE(p.ok());
        CHECK(p->codec == "opus");
        CHECK(p->start_sec == 1.25);
        CHECK(p->data_offset == kBase + bytes.size() - payload.size());
    }
    SECTION("Attachment") {
        Attachment a;
        a.name = "thumb.png";
        a.media_type = "image/png";
        a.data = payload;
        check_round_trip(a, parse_attachment);
        Buf bytes = framed(a);
        auto p = parse_attachment(view_of(bytes));
        REQUIRE(p.ok());
        CHECK(p->name == "thumb.png");
        CHECK(p->media_type == "image/png");
        CHECK(p->data.size() == payload.size());
    }
    SECTION("Audio Data") {
        AudioData a;
        a.source_id = 9;
        a.data = payload;
        check_round_trip(a, parse_audio_data);
        Buf bytes = framed(a);
        auto p = parse_audio_data(view_of(bytes));
        REQUIRE(p.ok());
        CHECK(p->source_id == 9);
        CHECK(p->data_offset == kBase + kRecordHeaderSize + 4 + 8);
    }
    SECTION("Delta Chunk and its three groups") {
        Buf updates = bare_stream(13, {1, 2}), births = bare_stream(13, {3}),
            deaths = bare_stream(13, {4, 5, 6});
        ByteWriter block;
        write_delta_groups(block, updates, births, deaths);
        DeltaChunk d;
        d.t0 = 1;
        d.t1 = 2;
        d.level = 0;
        d.delta_mode = 1;
        d.reference_offset = 517;
        d.keyframe_offset = 517;
        d.depth = 1;
        d.update_count = 37;
        d.birth_count = 4;
        d.death_count = 3;
        d.compression = "";
        d.uncompressed_size = block.size();
        d.records = block.buffer();
        check_round_trip(d, parse_delta_chunk);
        Buf bytes = framed(d);
        auto p = parse_delta_chunk(view_of(bytes));
        REQUIRE(p.ok());
        CHECK(p->delta_mode == 1);
        CHECK(p->reference_offset == 517);
        CHECK(p->depth == 1);
        CHECK(p->update_count == 37);
        CHECK(p->birth_count == 4);
        CHECK(p->death_count == 3);
        auto g = split_delta_groups(p->records, p->records_offset);
        REQUIRE(g.ok());
        CHECK(Buf(g->updates.begin(), g->updates.end()) == updates);
        CHECK(Buf(g->births.begin(), g->births.end()) == births);
        CHECK(Buf(g->deaths.begin(), g->deaths.end()) == deaths);
        CHECK(g->updates_offset == p->records_offset + 8);
        CHECK(g->births_offset == g->updates_offset + updates.size() + 8);
        CHECK(g->deaths_offset == g->births_offset + births.size() + 8);
    }
}

TEST_CASE("§5.18: a Delta Chunk block that is not exactly three sub-blocks is refused",
          "[records]") {
    ByteWriter block;
    write_delta_groups(block, Buf{1}, Buf{}, Buf{2, 3});
    Buf b = block.buffer();
    SECTION("a sub-block running past the block") {
        Buf cut(b.begin(), b.end() - 1);
        require_refusal(split_delta_groups(cut, 500), "record-too-short", {"deaths"});
    }
    SECTION("bytes after the deaths sub-block") {
        b.push_back(0);
        auto r = split_delta_groups(b, 500);
        require_refusal(r, "delta-block-trailing-bytes", {"1 bytes"});
        CHECK(r.error().offset == 500 + b.size() - 1);
    }
    SECTION("an empty block") { require_refusal(split_delta_groups(Buf{}, 0), "record-too-short"); }
}

// =============================================================================================
// Counts against remaining bytes.

TEST_CASE("a declared count that cannot fit is count-exceeds-record before any allocation (§5.4, "
          "M071, M072, M077)",
          "[records]") {
    SECTION("Window Table count 0xFFFFFFFF in a 4-byte record") {
        Buf bytes = raw_record(op::window_table, {0xFF, 0xFF, 0xFF, 0xFF});
        auto r = parse_window_table(view_of(bytes));
        require_refusal(r, "count-exceeds-record", {"4294967295"});
        CHECK(r.error().offset == kBase + kRecordHeaderSize + 4);
    }
    SECTION("Chunk Index band_count") {
        ChunkIndex e{0, 1, 0, 0, 0, {}, std::nullopt};
        Buf bytes = framed(e);
        std::uint32_t huge = 0xFFFFFFFF;
        std::memcpy(bytes.data() + kRecordHeaderSize + 36, &huge, 4);
        require_refusal(parse_chunk_index(view_of(bytes)), "count-exceeds-record",
                        {"band_count", "4294967295"});
    }
    SECTION("Camera keyframe_count") {
        Camera c = sample_camera();
        c.keyframes.clear();
        Buf bytes = framed(c);
        std::uint32_t huge = 0x40000000;
        std::memcpy(bytes.data() + kRecordHeaderSize + 56, &huge, 4);
        require_refusal(parse_camera(view_of(bytes)), "count-exceeds-record", {"keyframe_count"});
    }
    SECTION("Audio Source keyframe_count") {
        AudioSource s = sample_audio_source();
        s.keyframes.clear();
        Buf bytes = framed(s);
        std::size_t at = bytes.size() - (4 + 6) - 4;  // before "linear" and its length
        std::uint32_t huge = 0x10000000;
        std::memcpy(bytes.data() + at, &huge, 4);
        require_refusal(parse_audio_source(view_of(bytes)), "count-exceeds-record",
                        {"keyframe_count"});
    }
    SECTION("M077: Rig Trajectory and Object Track sample_count") {
        RigTrajectory t = sample_rig();
        Buf bytes = framed(t);
        std::uint32_t huge = 0xFFFFFFF0;
        std::memcpy(bytes.data() + kRecordHeaderSize + 4 + 3 + 1, &huge, 4);
        require_refusal(parse_rig_trajectory(view_of(bytes)), "count-exceeds-record",
                        {"sample_count", "4294967280"});
        ObjectTrack k = sample_track();
        Buf kb = framed(k);
        std::memcpy(kb.data() + kRecordHeaderSize + 5, &huge, 4);
        require_refusal(parse_object_track(view_of(kb)), "count-exceeds-record",
                        {"sample_count"});
    }
    SECTION("M071/M072: Object Table object_count and embedding_dim") {
        Buf content = {0xFF, 0xFF, 0xFF, 0x7F, 0, 0};
        require_refusal(parse_object_table(view_of(raw_record(op::object_table, content))),
                        "count-exceeds-record", {"Object Table", "object_count", "2147483647"});
        // One entry with has_embedding = 1 and embedding_dim = 65535 in a few bytes.
        ObjectTable t;
        t.embedding_dim = 0xFFFF;
        ObjectTable::Entry e;
        e.object_id = 1;
        t.entries = {e};
        Buf bytes = framed(t);  // has_embedding 0
        bytes.back() = 1;       // now claims an embedding of 65535 floats
        require_refusal(parse_object_table(view_of(bytes)), "count-exceeds-record",
                        {"embedding_dim", "65535"});
    }
    SECTION("Sensor Calibration distortion_count") {
        SensorCalibration s = sample_sensor();
        Buf bytes = framed(s);
        // Cut right after the five coefficients' first byte.
        std::size_t count_at = kRecordHeaderSize + 4 + 5 + 4 + 6 + 1 + 4 + 4 + 32;
        REQUIRE(bytes[count_at] == 5);
        Buf cut = cut_to(bytes, count_at - kRecordHeaderSize + 1 + 8);
        require_refusal(parse_sensor_calibration(view_of(cut)), "count-exceeds-record",
                        {"distortion_count"});
    }
}

TEST_CASE("a field that runs past the record is record-too-short, naming the field (§4.2)",
          "[records]") {
    Buf bytes = cut_to(framed(sample_header()), 13);
    auto r = parse_header(view_of(bytes));
    require_refusal(r, "record-too-short", {"Header", "library"});
    CHECK(r.error().kind == ErrorKind::malformed);
    CHECK(r.error().offset == kBase + kRecordHeaderSize + 4 + 7);
}

// =============================================================================================
// Header (§5.1).

TEST_CASE("M014: Header flags bits 2-7 set are refused (§5.1)", "[records]") {
    for (std::uint8_t bit = 2; bit < 8; ++bit) {
        Header h = sample_header();
        h.flags = static_cast<std::uint8_t>(1u << bit);
        Buf b = framed(h);
        auto r = parse_header(view_of(b));
        require_refusal(r, "reserved-flags-set", {"flags"});
        ByteWriter m;
        m.map(h.attributes);
        CHECK(r.error().offset == kBase + b.size() - m.size() - 1);
    }
    Header h = sample_header();
    h.flags = 0x84;
    require_refusal(parse_header(view_of(framed(h))), "reserved-flags-set", {"0x84"});
}

TEST_CASE("Header sh_degree above 3 is refused (§5.1)", "[records]") {
    Header h = sample_header();
    h.sh_degree = 4;
    require_refusal(parse_header(view_of(framed(h))), "invalid-sh-degree", {"sh_degree", "4"});
    h.sh_degree = 3;
    CHECK(parse_header(view_of(framed(h))).ok());
}

TEST_CASE("Header cutoff not finite or outside (0, 1) is refused (§5.1, §6.3)", "[records]") {
    for (double v : {0.0, 1.0, -0.5, 1.5, kNaN, kInf}) {
        Header h = sample_header();
        h.cutoff = v;
        INFO("cutoff " << v);
        require_refusal(parse_header(view_of(framed(h))), "invalid-cutoff", {"cutoff"});
    }
    Header h = sample_header();
    h.cutoff = 0.125;
    require_refusal(
        [&] {
            Header x = h;
            x.cutoff = 1.25;
            return parse_header(view_of(framed(x)));
        }(),
        "invalid-cutoff", {"1.25"});
    CHECK(parse_header(view_of(framed(h))).ok());
}

TEST_CASE("Header duration_sec not finite or negative is refused (§5.1)", "[records]") {
    for (double v : {-1.0, kNaN, kInf, -kInf}) {
        Header h = sample_header();
        h.duration_sec = v;
        INFO("duration " << v);
        require_refusal(parse_header(view_of(framed(h))), "invalid-duration", {"duration_sec"});
    }
    Header h = sample_header();
    h.duration_sec = -2.5;
    auto r = parse_header(view_of(framed(h)));
    require_refusal(r, "invalid-duration", {"-2.5"});
    CHECK(r.error().offset == kBase + kRecordHeaderSize + 4 + 7 + 4 + 12);
    h.duration_sec = 0;
    CHECK(parse_header(view_of(framed(h))).ok());
}

// =============================================================================================
// Quantization (§5.3).

TEST_CASE("M018: a Quantization record whose bounds name object_id is refused (§5.3)",
          "[records]") {
    Quantization q = sample_quantization();
    q.bounds.push_back({"object_id", "0"});
    auto r = parse_quantization(view_of(framed(q)));
    require_refusal(r, "invalid-object-id-bound", {"object_id", "Quantization"});
    CHECK(r.error().kind == ErrorKind::malformed);
}

TEST_CASE("M024: malformed SH bit depths read as declaring none, never a refusal (§5.3)",
          "[records]") {
    Quantization q = sample_quantization();
    q.sh_depths.clear();
    Buf base = framed(q);
    SECTION("absent: declares none, not malformed") {
        auto p = parse_quantization(view_of(base));
        REQUIRE(p.ok());
        CHECK(p->sh_depths.empty());
        CHECK_FALSE(p->sh_depths_malformed);
    }
    SECTION("a count the record is too short for") {
        auto p = parse_quantization(view_of(with_appended(base, {3, 8, 6})));
        REQUIRE(p.ok());
        CHECK(p->sh_depths.empty());
        CHECK(p->sh_depths_malformed);
    }
    SECTION("a depth outside 3..8") {
        for (std::uint8_t bad : {0, 2, 9, 255}) {
            auto p = parse_quantization(view_of(with_appended(base, {2, 8, bad})));
            REQUIRE(p.ok());
            CHECK(p->sh_depths.empty());
            CHECK(p->sh_depths_malformed);
        }
    }
    SECTION("more than three bands") {
        auto p = parse_quantization(view_of(with_appended(base, {4, 8, 8, 8, 8})));
        REQUIRE(p.ok());
        CHECK(p->sh_depths.empty());
        CHECK(p->sh_depths_malformed);
    }
    SECTION("some other writer's appended bytes landing on the field") {
        auto p = parse_quantization(view_of(with_appended(base, {0xAB, 0xCD, 0xEF})));
        REQUIRE(p.ok());
        CHECK(p->sh_depths_malformed);
    }
    SECTION("well formed, with later appended bytes ignored") {
        auto p = parse_quantization(view_of(with_appended(base, {3, 8, 6, 5, 0xEE, 0xFF})));
        REQUIRE(p.ok());
        CHECK(p->sh_depths == std::vector<std::uint8_t>{8, 6, 5});
        CHECK_FALSE(p->sh_depths_malformed);
    }
    SECTION("a present count of 0 declares none") {
        auto p = parse_quantization(view_of(with_appended(base, {0})));
        REQUIRE(p.ok());
        CHECK(p->sh_depths.empty());
        CHECK_FALSE(p->sh_depths_malformed);
    }
}

TEST_CASE("M026: non-finite quantization steps are not refused by the record parser (§5.3)",
          "[records]") {
    Quantization q = sample_quantization();
    q.step_pos = kNaN;
    q.pos_origin[1] = kInf;
    auto p = parse_quantization(view_of(framed(q)));
    REQUIRE(p.ok());
    CHECK(std::isnan(p->step_pos));
    CHECK(std::isinf(p->pos_origin[1]));
}

// =============================================================================================
// §5.3 bound grammar and exact comparison.

TEST_CASE("M019/M022: the bound grammar accepts exactly its spellings (§5.3)", "[records]") {
    const char* accept[] = {"0",      "1",     "+1",     "-1",      "1.",    "1.5",
                            ".5",     "+.5",   "-.5",    "5e-05",   "5e-5",  "5E+5",
                            "1e0",    "-0",    "+0.0",   "0.00005", "+0.00005",
                            "0e999999999999999999999999", "00012.3400e-0007",
                            "0.00392156862745098", "1.e5", ".5E-1"};
    for (const char* s : accept) {
        INFO("accept " << s);
        CHECK(is_bound_spelling(s));
    }
    const char* reject[] = {"",     " 1",   "1 ",    "1_0",   "inf",  "Infinity", "-inf",
                            "NaN",  "nan",  "e5",    "1e",    ".",    "+",        "-",
                            "1e+",  "1.2.3", "--1",  "+-1",   "1e5.0", "0x10",    "1,5",
                            ".e1",  "1e 5", "\xd9\xa1", "1\xd9\xa1", "\t1", "1\n", "١"};
    for (const char* s : reject) {
        INFO("reject '" << s << "'");
        CHECK_FALSE(is_bound_spelling(s));
    }
    // An embedded NUL is not part of any spelling.
    CHECK_FALSE(is_bound_spelling(std::string_view("1\0", 2)));
}

TEST_CASE("M019: bounds compare as exact decimal numbers, never as bytes or binary64 (§5.3)",
          "[records]") {
    struct Eq {
        const char* a;
        const char* b;
    };
    const Eq equal[] = {
        {"5e-05", "0.00005"},
        {"5e-5", "+0.00005"},
        {"5e-05", "5e-5"},
        {"-0", "0"},
        {"0", "0e999999999999999999999"},
        {"0.0", "-0e-99999999999999999999999"},
        {"1e1000000000000000000000", "10e999999999999999999999"},
        {"1", "1.000"},
        {"100", "1e2"},
        {"0.1e1", "1"},
        {"123.45", "12345e-2"},
        {"12345678901234567890e-20", "0.1234567890123456789"},
        {".5", "0.5"},
        {"1.", "1"},
        {"-2.50", "-25e-1"},
        {"1e-18446744073709551617", "10e-18446744073709551618"},
        {"0.00392156862745098", "3.92156862745098e-3"},
    };
    for (const auto& e : equal) {
        INFO(e.a << " == " << e.b);
        CHECK(compare_bounds(e.a, e.b) == 0);
        CHECK(compare_bounds(e.b, e.a) == 0);
    }
    struct Lt {
        const char* a;
        const char* b;
    };
    const Lt less[] = {
        {"1", "2"},
        {"0.00005", "0.0001"},
        {"9", "10"},
        {"0.5", "0.51"},
        {"99999999999999999999", "1e20"},
        {"0.0006678035482764245", "0.002"},
        {"-1", "0"},
        {"-2", "-1"},
        {"-1e999999999999999999999", "-1"},
        {"0", "1e-999999999999999999999"},
        {"1e-999999999999999999999", "1e-999999999999999999998"},
        {"1e999999999999999999998", "1e999999999999999999999"},
        {"1e18446744073709551615", "1e18446744073709551616"},
        {"9e9223372036854775807", "1e9223372036854775808"},
        {"1e-9223372036854775808", "1e-9223372036854775807"},
        {"-0.51", "-0.5"},
        {"0.1", "0.10000000000000000001"},  // equal in binary64, not as numbers
        {"2", "10"},                         // "10" < "2" as bytes
        {"-5e-1", "5e-99999999999999999999999999999"},
    };
    for (const auto& l : less) {
        INFO(l.a << " < " << l.b);
        CHECK(compare_bounds(l.a, l.b) == -1);
        CHECK(compare_bounds(l.b, l.a) == 1);
    }
    // Invalid spellings carry no value: they order before every valid bound, equal to each other.
    CHECK(compare_bounds("inf", "-1e999") == -1);
    CHECK(compare_bounds("1", "NaN") == 1);
    CHECK(compare_bounds("", " 1") == 0);
}

// =============================================================================================
// Window Table, SH band, Chunk Index, Delta Chunk.

TEST_CASE("an SH Band Stream whose band is outside 1..3 is refused (§5.7)", "[records]") {
    for (std::uint8_t band : {0, 4, 255}) {
        ShBandRecord s;
        Buf stream = bare_stream(7, {1});
        s.band = band;
        s.stream = stream;
        auto r = parse_sh_band(view_of(framed(s)));
        require_refusal(r, "invalid-sh-band", {"band is " + std::to_string(band)});
        CHECK(r.error().offset == kBase + kRecordHeaderSize);
    }
}

TEST_CASE("M009: Chunk Index appended keyframe fields are read only when content remains for them "
          "(§5.8)",
          "[records]") {
    ChunkIndex birth{0, 2, 611, 2636, 100, {{1, 3000, 916}}, std::nullopt};
    Buf bytes = framed(birth);
    auto p = parse_chunk_index(view_of(bytes));
    REQUIRE(p.ok());
    CHECK_FALSE(p->keyframe.has_value());
    CHECK(*p == birth);

    // M009/M010: fewer appended bytes than the six fields take are some other appended field,
    // skipped by content_length, not a keyframe-delta entry cut short.
    auto short_tail = parse_chunk_index(view_of(with_appended(bytes, {0, 0, 0})));
    REQUIRE(short_tail.ok());
    CHECK_FALSE(short_tail->keyframe.has_value());
    CHECK(*short_tail == birth);

    ChunkIndex delta = birth;
    delta.keyframe = KeyframeIndexFields{1, 0, 611, 611, 1, 99};
    auto q = parse_chunk_index(view_of(with_appended(framed(delta), {9, 9, 9})));
    REQUIRE(q.ok());
    REQUIRE(q->keyframe.has_value());
    CHECK(*q->keyframe == *delta.keyframe);
}

TEST_CASE("Chunk Index chunk_kind, delta_mode and band bytes outside their range are refused "
          "(§5.8)",
          "[records]") {
    ChunkIndex e{1, 2, 1765, 1055, 44, {}, KeyframeIndexFields{2, 0, 0, 0, 0, 0}};
    auto r = parse_chunk_index(view_of(framed(e)));
    require_refusal(r, "invalid-chunk-kind", {"chunk_kind is 2"});
    CHECK(r.error().offset == kBase + kRecordHeaderSize + 40);
    e.keyframe = KeyframeIndexFields{1, 7, 0, 0, 0, 0};
    require_refusal(parse_chunk_index(view_of(framed(e))), "invalid-delta-mode",
                    {"delta_mode is 7"});
    ChunkIndex b{0, 1, 0, 0, 0, {{1, 0, 0}, {4, 0, 0}}, std::nullopt};
    require_refusal(parse_chunk_index(view_of(framed(b))), "invalid-sh-band", {"bands[1]", "4"});
}

TEST_CASE("a Delta Chunk whose delta_mode is not 0 or 1 is refused (§5.18)", "[records]") {
    DeltaChunk d;
    d.delta_mode = 2;
    auto r = parse_delta_chunk(view_of(framed(d)));
    require_refusal(r, "invalid-delta-mode", {"delta_mode is 2"});
    CHECK(r.error().offset == kBase + kRecordHeaderSize + 20);
}

// =============================================================================================
// Camera (§5.10).

TEST_CASE("Camera loop other than 0/1 and unknown interpolation are refused (§5.10)",
          "[records]") {
    Buf bytes = framed(sample_camera());
    bytes.back() = 2;
    auto r = parse_camera(view_of(bytes));
    require_refusal(r, "invalid-flag-value", {"loop is 2"});
    CHECK(r.error().offset == kBase + bytes.size() - 1);

    Camera c = sample_camera();
    c.interpolation = "cubic";
    auto u = parse_camera(view_of(framed(c)));
    require_refusal(u, "unknown-interpolation", {"\"cubic\""});
    CHECK(u.error().kind == ErrorKind::unsupported);
    c.interpolation = "linear";
    CHECK(parse_camera(view_of(framed(c))).ok());
}

// =============================================================================================
// Audio Source (§5.16).

TEST_CASE("M082: an Audio Source with an empty codec is refused (§5.16)", "[records]") {
    AudioSource s = sample_audio_source();
    s.codec = "";
    require_refusal(parse_audio_source(view_of(framed(s))), "empty-audio-codec",
                    {"source 3", "codec"});
}

TEST_CASE("M083: an Audio Source duration_sec not finite and positive is refused (§5.16)",
          "[records]") {
    for (double v : {0.0, -1.0, kNaN, kInf}) {
        AudioSource s = sample_audio_source();
        s.duration_sec = v;
        INFO("duration " << v);
        require_refusal(parse_audio_source(view_of(framed(s))), "invalid-audio-duration",
                        {"duration_sec"});
    }
    AudioSource s = sample_audio_source();
    s.duration_sec = -0.25;
    require_refusal(parse_audio_source(view_of(framed(s))), "invalid-audio-duration", {"-0.25"});
}

TEST_CASE("M084: Audio Source start_sec and gain must be finite, gain non-negative (§5.16)",
          "[records]") {
    AudioSource s = sample_audio_source();
    s.start_sec = kNaN;
    require_refusal(parse_audio_source(view_of(framed(s))), "non-finite-value", {"start_sec"});
    s = sample_audio_source();
    s.gain = kInf;
    require_refusal(parse_audio_source(view_of(framed(s))), "non-finite-value", {"gain"});
    s = sample_audio_source();
    s.gain = -0.5;
    require_refusal(parse_audio_source(view_of(framed(s))), "invalid-audio-gain",
                    {"gain", "-0.5"});
    s.gain = 0;
    CHECK(parse_audio_source(view_of(framed(s))).ok());
}

TEST_CASE("M080: Audio Source flags bits 2-7 set are refused (§5.16)", "[records]") {
    AudioSource s = sample_audio_source();
    s.flags = 0x05;
    require_refusal(parse_audio_source(view_of(framed(s))), "reserved-flags-set", {"flags is 5"});
}

TEST_CASE("M085: Audio Source positions and rotations must be finite and non-zero (§5.16)",
          "[records]") {
    AudioSource s = sample_audio_source();
    s.position[1] = kNaN;
    require_refusal(parse_audio_source(view_of(framed(s))), "non-finite-value", {"position[1]"});
    s = sample_audio_source();
    s.rotation = {0, 0, 0, 0};
    require_refusal(parse_audio_source(view_of(framed(s))), "zero-quaternion", {"rotation"});
    s = sample_audio_source();
    s.keyframes[1].rotation = {0, 0, 0, 0};
    require_refusal(parse_audio_source(view_of(framed(s))), "zero-quaternion",
                    {"keyframes[1].rotation"});
    s = sample_audio_source();
    s.keyframes[0].position[2] = -kInf;
    require_refusal(parse_audio_source(view_of(framed(s))), "non-finite-value",
                    {"keyframes[0].position[2]"});
    s = sample_audio_source();
    s.keyframes[0].rotation[3] = kNaN;
    require_refusal(parse_audio_source(view_of(framed(s))), "non-finite-value",
                    {"keyframes[0].rotation"});
}

TEST_CASE("M087: a spatial Audio Source whose channel layout is not mono is refused (§5.16)",
          "[records]") {
    AudioSource s = sample_audio_source();
    s.channel_layout = "stereo";
    require_refusal(parse_audio_source(view_of(framed(s))), "spatial-source-not-mono",
                    {"\"stereo\""});
    s.flags = kAudioFlagLoop;  // a non-spatial bed may be stereo
    CHECK(parse_audio_source(view_of(framed(s))).ok());
}

TEST_CASE("M088: Audio Source keyframe times must be finite and strictly increasing (§5.16)",
          "[records]") {
    AudioSource s = sample_audio_source();
    s.keyframes[1].time = s.keyframes[0].time;
    require_refusal(parse_audio_source(view_of(framed(s))), "non-increasing-keyframe-times",
                    {"keyframes[1]", "1"});
    s = sample_audio_source();
    s.keyframes[1].time = 0.5;
    require_refusal(parse_audio_source(view_of(framed(s))), "non-increasing-keyframe-times",
                    {"keyframes[1]", "0.5"});
    s = sample_audio_source();
    s.keyframes[0].time = kNaN;
    require_refusal(parse_audio_source(view_of(framed(s))), "non-increasing-keyframe-times",
                    {"keyframes[0]"});
}

TEST_CASE("M088: Audio Source keyframes must lie in 0..Header.duration_sec (§5.16)",
          "[records]") {
    AudioSource s = sample_audio_source();  // keyframes at 1 and 4
    CHECK(check_audio_keyframes_within(s, 4.0).ok());
    CHECK(check_audio_keyframes_within(s, 5.0).ok());
    auto r = check_audio_keyframes_within(s, 3.5);
    require_refusal(r, "keyframe-time-out-of-range", {"keyframes[1]", "4", "3.5"});
    s.keyframes[0].time = -0.5;
    require_refusal(check_audio_keyframes_within(s, 10), "keyframe-time-out-of-range",
                    {"keyframes[0]", "-0.5"});
}

TEST_CASE("an Audio Source interpolation other than linear/step is refused (§5.16)",
          "[records]") {
    AudioSource s = sample_audio_source();
    s.interpolation = "spline";
    auto r = parse_audio_source(view_of(framed(s)));
    require_refusal(r, "unknown-interpolation", {"\"spline\""});
    CHECK(r.error().kind == ErrorKind::unsupported);
}

// =============================================================================================
// Coordinate Frame (§5.15.2).

TEST_CASE("Coordinate Frame values the registry does not list are refused (§5.15.2)",
          "[records]") {
    CoordinateFrame f = sample_frame();
    f.handedness = static_cast<Handedness>(3);
    auto r = parse_coordinate_frame(view_of(framed(f)));
    require_refusal(r, "unknown-enum-value", {"handedness is 3"});
    CHECK(r.error().kind == ErrorKind::unsupported);
    f = sample_frame();
    f.up_axis = static_cast<Axis>(6);
    require_refusal(parse_coordinate_frame(view_of(framed(f))), "unknown-enum-value",
                    {"up_axis is 6"});
    f = sample_frame();
    f.forward_axis = static_cast<Axis>(200);
    require_refusal(parse_coordinate_frame(view_of(framed(f))), "unknown-enum-value",
                    {"forward_axis is 200"});
    f = sample_frame();
    f.length_unit = static_cast<LengthUnit>(7);
    require_refusal(parse_coordinate_frame(view_of(framed(f))), "unknown-enum-value",
                    {"length_unit is 7"});
}

TEST_CASE("M040/M041: a Coordinate Frame whose up and forward name one axis is refused, naming "
          "both fields (§5.15.2)",
          "[records]") {
    for (auto [up, fwd] : {std::pair{Axis::pos_y, Axis::pos_y}, std::pair{Axis::pos_y, Axis::neg_y},
                           std::pair{Axis::neg_x, Axis::pos_x}, std::pair{Axis::neg_z, Axis::neg_z}}) {
        CoordinateFrame f = sample_frame();
        f.up_axis = up;
        f.forward_axis = fwd;
        auto r = parse_coordinate_frame(view_of(framed(f)));
        require_refusal(r, "degenerate-basis",
                        {"up_axis", "forward_axis", std::string(to_string(up)),
                         std::string(to_string(fwd))});
    }
    CoordinateFrame f = sample_frame();
    f.up_axis = Axis::pos_z;
    f.forward_axis = Axis::neg_x;
    CHECK(parse_coordinate_frame(view_of(framed(f))).ok());
}

TEST_CASE("M042: metres_per_unit non-finite or negative is refused, 0.0 is unknown (§5.15.2)",
          "[records]") {
    for (double v : {-1.0, -0.01, kNaN, kInf}) {
        CoordinateFrame f = sample_frame();
        f.metres_per_unit = v;
        INFO("metres_per_unit " << v);
        require_refusal(parse_coordinate_frame(view_of(framed(f))), "invalid-metres-per-unit",
                        {"metres_per_unit"});
    }
    CoordinateFrame f = sample_frame();
    f.metres_per_unit = -0.5;
    require_refusal(parse_coordinate_frame(view_of(framed(f))), "invalid-metres-per-unit",
                    {"-0.5"});
    f.metres_per_unit = 0.0;
    CHECK(parse_coordinate_frame(view_of(framed(f))).ok());
}

TEST_CASE("M043/M045: length_unit and metres_per_unit agreement is reported, not refused "
          "(§5.15.2)",
          "[records]") {
    CoordinateFrame f = sample_frame();  // centimetre, 0.01
    CHECK(length_unit_agrees(f));
    f.length_unit = LengthUnit::metre;  // metre and 0.01: the spec's example of disagreement
    CHECK_FALSE(length_unit_agrees(f));
    CHECK(parse_coordinate_frame(view_of(framed(f))).ok());
    f.metres_per_unit = 0.0;  // unknown size never disagrees
    CHECK(length_unit_agrees(f));
    f.length_unit = LengthUnit::unspecified;
    f.metres_per_unit = 123;
    CHECK(length_unit_agrees(f));
    f.length_unit = LengthUnit::foot;
    f.metres_per_unit = static_cast<double>(0.3048f);  // through f32: still a foot
    CHECK(length_unit_agrees(f));
    f.metres_per_unit = 0.3;
    CHECK_FALSE(length_unit_agrees(f));
    f.length_unit = LengthUnit::inch;
    f.metres_per_unit = 0.0254;
    CHECK(length_unit_agrees(f));
}

// =============================================================================================
// Sensor Calibration (§5.15.3).

TEST_CASE("M053: every f64 in a Sensor Calibration must be finite (§5.15.3)", "[records]") {
    auto expect = [](SensorCalibration s, const char* field) {
        INFO(field);
        require_refusal(parse_sensor_calibration(view_of(framed(s))), "non-finite-value", {field});
    };
    SensorCalibration s = sample_sensor();
    s.fx = kNaN;
    expect(s, "fx");
    s = sample_sensor();
    s.cy = kInf;
    expect(s, "cy");
    s = sample_sensor();
    s.distortion[3] = kNaN;
    expect(s, "distortion[3]");
    s = sample_sensor();
    s.rotation[0] = kNaN;
    expect(s, "rotation[0]");
    s = sample_sensor();
    s.translation[2] = -kInf;
    expect(s, "translation[2]");
}

TEST_CASE("a Sensor Calibration camera_model the registry does not list is refused (§5.15.3, "
          "M057)",
          "[records]") {
    SensorCalibration s = sample_sensor();
    s.camera_model = static_cast<CameraModel>(4);
    auto r = parse_sensor_calibration(view_of(framed(s)));
    require_refusal(r, "unknown-camera-model", {"camera_model is 4", "\"front\""});
    CHECK(r.error().kind == ErrorKind::unsupported);
}

TEST_CASE("M054: a camera's fx, fy, width and height must be non-zero (§5.15.3)", "[records]") {
    SensorCalibration s = sample_sensor();
    s.fx = 0;
    require_refusal(parse_sensor_calibration(view_of(framed(s))), "invalid-intrinsics",
                    {"fx 0", "non-zero"});
    s = sample_sensor();
    s.height_px = 0;
    require_refusal(parse_sensor_calibration(view_of(framed(s))), "invalid-intrinsics",
                    {"height_px 0"});
    s = sample_sensor();
    s.camera_model = CameraModel::pinhole;
    s.distortion.clear();
    s.width_px = 0;
    require_refusal(parse_sensor_calibration(view_of(framed(s))), "invalid-intrinsics",
                    {"width_px 0"});
}

TEST_CASE("M055: a non-camera sensor's intrinsics and distortion_count must all be 0 (§5.15.3)",
          "[records]") {
    SensorCalibration s = sample_imu();
    CHECK(parse_sensor_calibration(view_of(framed(s))).ok());
    s.cx = 1;
    require_refusal(parse_sensor_calibration(view_of(framed(s))), "invalid-intrinsics",
                    {"camera_model 0", "cx 1"});
    s = sample_imu();
    s.width_px = 640;
    require_refusal(parse_sensor_calibration(view_of(framed(s))), "invalid-intrinsics",
                    {"width_px 640"});
    s = sample_imu();
    s.distortion = {0.1};
    require_refusal(parse_sensor_calibration(view_of(framed(s))), "invalid-intrinsics",
                    {"distortion_count 1"});
}

TEST_CASE("M056: distortion_count must be what the camera model defines (§5.15.3)", "[records]") {
    struct Case {
        CameraModel model;
        std::size_t count;
        bool ok;
    };
    const Case cases[] = {{CameraModel::pinhole, 0, true},       {CameraModel::pinhole, 4, false},
                          {CameraModel::brown_conrady, 5, true}, {CameraModel::brown_conrady, 8, true},
                          {CameraModel::brown_conrady, 4, false}, {CameraModel::brown_conrady, 6, false},
                          {CameraModel::kannala_brandt, 4, true}, {CameraModel::kannala_brandt, 5, false}};
    for (const auto& c : cases) {
        SensorCalibration s = sample_sensor();
        s.camera_model = c.model;
        s.distortion.assign(c.count, 0.01);
        auto r = parse_sensor_calibration(view_of(framed(s)));
        INFO(to_string(c.model) << " with " << c.count);
        if (c.ok) {
            CHECK(r.ok());
        } else {
            require_refusal(r, "distortion-count-mismatch",
                            {"distortion_count is " + std::to_string(c.count),
                             std::string(to_string(c.model))});
        }
    }
}

TEST_CASE("M050: a Sensor Calibration rotation of norm zero is refused (§5.15.3)", "[records]") {
    SensorCalibration s = sample_sensor();
    s.rotation = {0, 0, 0, 0};
    require_refusal(parse_sensor_calibration(view_of(framed(s))), "zero-quaternion",
                    {"rotation", "norm zero"});
    s.rotation = {1e300, 1e300, 0, 0};  // finite components, norm overflows
    require_refusal(parse_sensor_calibration(view_of(framed(s))), "non-finite-value",
                    {"rotation", "norm"});
}

TEST_CASE("Sensor Calibration pose_reference must be 0/1 and a rig pose must name a rig "
          "(§5.15.3, M051)",
          "[records]") {
    SensorCalibration s = sample_sensor();
    Buf bytes = framed(s);
    std::size_t at = bytes.size() - (4 + 3) - 1;
    REQUIRE(bytes[at] == 1);
    bytes[at] = 2;
    auto r = parse_sensor_calibration(view_of(bytes));
    require_refusal(r, "invalid-flag-value", {"pose_reference is 2"});
    CHECK(r.error().offset == kBase + at);

    s.rig_name = "";
    require_refusal(parse_sensor_calibration(view_of(framed(s))), "missing-rig-trajectory",
                    {"\"front\"", "pose_reference 1"});
}

// =============================================================================================
// Rig Trajectory (§5.15.4) and Object Track (§5.15.7).

TEST_CASE("M059/M060: Rig Trajectory sample times must be finite and strictly increasing, "
          "naming the sample (§5.15.4)",
          "[records]") {
    RigTrajectory t = sample_rig();
    t.samples[2].time = t.samples[1].time;
    auto r = parse_rig_trajectory(view_of(framed(t)));
    require_refusal(r, "non-increasing-sample-times", {"samples[2]", "2.5"});
    CHECK(r.error().offset == kBase + kRecordHeaderSize + 4 + 3 + 1 + 4 + 2 * kTrajectorySampleSize);
    t = sample_rig();
    t.samples[1].time = -1;
    require_refusal(parse_rig_trajectory(view_of(framed(t))), "non-increasing-sample-times",
                    {"samples[1]", "-1"});
    t = sample_rig();
    t.samples[0].time = kInf;
    require_refusal(parse_rig_trajectory(view_of(framed(t))), "non-increasing-sample-times",
                    {"samples[0]", "inf"});
}

TEST_CASE("Rig Trajectory interpolation, rotations and translations are checked (§5.15.4)",
          "[records]") {
    RigTrajectory t = sample_rig();
    t.interpolation = static_cast<TrajectoryInterpolation>(2);
    auto r = parse_rig_trajectory(view_of(framed(t)));
    require_refusal(r, "unknown-interpolation", {"interpolation is 2"});
    CHECK(r.error().kind == ErrorKind::unsupported);
    t = sample_rig();
    t.samples[1].rotation = {0, 0, 0, 0};
    require_refusal(parse_rig_trajectory(view_of(framed(t))), "zero-quaternion",
                    {"samples[1].rotation"});
    t = sample_rig();
    t.samples[2].rotation[1] = kNaN;
    require_refusal(parse_rig_trajectory(view_of(framed(t))), "non-finite-value",
                    {"samples[2].rotation[1]"});
    t = sample_rig();
    t.samples[0].translation[0] = kInf;
    require_refusal(parse_rig_trajectory(view_of(framed(t))), "non-finite-value",
                    {"samples[0].translation[0]"});
    t = sample_rig();
    t.samples.clear();  // M061: legal, read as absent by the layer above
    CHECK(parse_rig_trajectory(view_of(framed(t))).ok());
}

TEST_CASE("M074/M075/M076: Object Track samples follow the Rig Trajectory pose rules (§5.15.7)",
          "[records]") {
    ObjectTrack t = sample_track();
    t.samples[1].time = 5.5;
    require_refusal(parse_object_track(view_of(framed(t))), "non-increasing-sample-times",
                    {"samples[2]", "5"});
    t = sample_track();
    t.samples[0].rotation = {0, 0, 0, 0};
    require_refusal(parse_object_track(view_of(framed(t))), "zero-quaternion",
                    {"samples[0].rotation"});
    t = sample_track();
    t.samples[0].rotation[2] = -kInf;
    require_refusal(parse_object_track(view_of(framed(t))), "non-finite-value",
                    {"samples[0].rotation[2]"});
    t = sample_track();
    t.samples[1].translation[1] = kNaN;
    require_refusal(parse_object_track(view_of(framed(t))), "non-finite-value",
                    {"samples[1].translation[1]"});
    t = sample_track();
    t.interpolation = static_cast<TrajectoryInterpolation>(9);
    require_refusal(parse_object_track(view_of(framed(t))), "unknown-interpolation",
                    {"interpolation is 9"});
}

TEST_CASE("M078: an Object Track for object_id 0 is refused (§5.15.7)", "[records]") {
    ObjectTrack t = sample_track();
    t.object_id = 0;
    auto r = parse_object_track(view_of(framed(t)));
    require_refusal(r, "track-names-background", {"object_id is 0"});
    CHECK(r.error().offset == kBase + kRecordHeaderSize);
}

// =============================================================================================
// Geodetic Anchor (§5.15.5).

TEST_CASE("M064/M065: Geodetic Anchor values out of range or non-finite are refused (§5.15.5)",
          "[records]") {
    struct Case {
        int field;
        double value;
        const char* name;
    };
    const Case bad[] = {{0, 90.5, "latitude_deg"},  {0, -91, "latitude_deg"},
                        {0, kNaN, "latitude_deg"},  {1, 180.25, "longitude_deg"},
                        {1, -181, "longitude_deg"}, {1, kInf, "longitude_deg"},
                        {2, kNaN, "altitude_m"},    {2, -kInf, "altitude_m"},
                        {3, 360, "heading_deg"},    {3, -0.5, "heading_deg"},
                        {3, kNaN, "heading_deg"}};
    for (const auto& c : bad) {
        GeodeticAnchor g = sample_anchor();
        double* f[] = {&g.latitude_deg, &g.longitude_deg, &g.altitude_m, &g.heading_deg};
        *f[c.field] = c.value;
        INFO(c.name << " = " << c.value);
        auto r = parse_geodetic_anchor(view_of(framed(g)));
        require_refusal(r, "geodetic-out-of-range", {c.name, detail::fmt(c.value)});
        CHECK(r.error().offset == kBase + kRecordHeaderSize + 4 + 8 * c.field);
    }
    GeodeticAnchor g = sample_anchor();
    g.latitude_deg = -90;
    g.longitude_deg = 180;
    g.heading_deg = 0;
    g.altitude_m = -400;
    CHECK(parse_geodetic_anchor(view_of(framed(g))).ok());
}

// =============================================================================================
// Object Table (§5.15.6).

TEST_CASE("M068: an Object Table with two entries for one id is refused (§5.15.6)", "[records]") {
    ObjectTable t = sample_table();
    t.entries[2].object_id = 8;
    auto r = parse_object_table(view_of(framed(t)));
    require_refusal(r, "duplicate-object-id", {"object_id 8", "entries[2]"});
}

TEST_CASE("M070: Object Table dynamics_present and has_embedding must be 0 or 1 (§5.15.6)",
          "[records]") {
    ObjectTable t;
    t.embedding_dim = 2;
    ObjectTable::Entry e;
    e.object_id = 5;
    e.label = "x";
    t.entries = {e};
    // ... dynamics_present, has_embedding: the last two bytes.
    Buf a = framed(t);
    a[a.size() - 2] = 2;
    require_refusal(parse_object_table(view_of(a)), "invalid-flag-value",
                    {"dynamics_present is 2"});
    Buf b = framed(t);
    b[b.size() - 1] = 3;
    require_refusal(parse_object_table(view_of(b)), "invalid-flag-value", {"has_embedding is 3"});
}

TEST_CASE("M069: every Object Table f32 must be finite (§5.15.6)", "[records]") {
    ObjectTable t = sample_table();
    t.entries[0].anchor[1] = std::numeric_limits<float>::quiet_NaN();
    require_refusal(parse_object_table(view_of(framed(t))), "non-finite-value",
                    {"entries[0].anchor[1]"});
    t = sample_table();
    t.entries[1].dynamics->angular_velocity[2] = std::numeric_limits<float>::infinity();
    require_refusal(parse_object_table(view_of(framed(t))), "non-finite-value",
                    {"entries[1].angular_velocity[2]", "inf"});
    t = sample_table();
    (*t.entries[0].embedding)[2] = -std::numeric_limits<float>::infinity();
    require_refusal(parse_object_table(view_of(framed(t))), "non-finite-value",
                    {"entries[0].embedding[2]"});
}

TEST_CASE("Object Table entries and embeddings parse as written (§5.15.6)", "[records]") {
    ObjectTable t = sample_table();
    auto p = parse_object_table(view_of(framed(t)));
    REQUIRE(p.ok());
    CHECK(*p == t);
    REQUIRE(p->entries.size() == 3);
    CHECK(p->entries[0].embedding.has_value());
    CHECK_FALSE(p->entries[0].dynamics.has_value());
    CHECK(p->entries[1].dynamics->acceleration[1] == -9.81f);
    CHECK_FALSE(p->entries[2].embedding.has_value());
}

// =============================================================================================
// Interop fixtures from another implementation.

TEST_CASE("interop: every implemented record of every fixture parses and re-writes byte for byte",
          "[records][interop]") {
    for (const char* name : {"birth-deflate.4dgs", "birth-extras.4dgs",
                             "birth-never-fades-no-index.4dgs", "birth-zstd-sh3-balanced.4dgs",
                             "keyframe-delta-churn.4dgs"}) {
        INFO(name);
        FixtureFile f = load_fixture(name);
        int parsed = parse_all(f);
        CHECK(parsed == static_cast<int>(f.records.size()));  // no record here is unknown
    }
}

TEST_CASE("interop: birth-deflate header, quantization and index values (§5.1, §5.3, §5.8)",
          "[records][interop]") {
    FixtureFile f = load_fixture("birth-deflate.4dgs");
    auto h = parse_header(f.records.at(0));
    REQUIRE(h.ok());
    CHECK(h->profile == "");
    CHECK(h->library == "4dgs-python reference encoder");
    CHECK(h->duration_sec == 6.0);
    CHECK(h->gaussian_count == 300);
    CHECK(h->cutoff == 0.05);
    CHECK(h->temporal_model == "gaussian-birth");
    CHECK(h->sh_degree == 0);
    CHECK(h->flags == 0);
    CHECK(h->aabb[0] == Approx(-1.698162).margin(1e-5));
    CHECK(h->aabb[4] == Approx(2.420702).margin(1e-5));
    CHECK(h->attributes ==
          StringMap{{"title", "interop birth deflate"}, {"visibility_profile", "gaussian"}});

    auto q = parse_quantization(of(f, op::quantization).at(0));
    REQUIRE(q.ok());
    CHECK(q->scheme == "uniform-v1");
    REQUIRE(q->bound("pos"));
    CHECK(*q->bound("pos") == "0.00033390177413821225");
    CHECK(*q->bound("alpha") == "0.00392156862745098");
    CHECK(*q->bound("rot") == "0.002");
    CHECK(*q->bound("sh") == "0");
    CHECK(q->bounds.size() == 9);
    for (const auto& [k, v] : q->bounds) {
        INFO(k << " = " << v);
        CHECK(is_bound_spelling(v));
    }
    CHECK(compare_bounds(*q->bound("motion"), "6.678035482764245e-4") == 0);
    CHECK(q->sh_depths.empty());
    CHECK_FALSE(q->sh_depths_malformed);

    auto w = parse_window_table(of(f, op::window_table).at(0));
    REQUIRE(w.ok());
    CHECK(w->windows.size() == 3);

    auto idx = of(f, op::chunk_index);
    REQUIRE(idx.size() == 3);
    auto chunks = of(f, op::chunk);
    const double expect[3][2] = {{0, 2}, {2, 4}, {4, 6}};
    for (int i = 0; i < 3; ++i) {
        auto e = parse_chunk_index(idx[i]);
        REQUIRE(e.ok());
        CHECK(e->t0 == expect[i][0]);
        CHECK(e->t1 == expect[i][1]);
        CHECK(e->gaussian_count == 100);
        CHECK(e->bands.empty());
        CHECK_FALSE(e->keyframe.has_value());
        // Offsets frame whole records (§5.8).
        CHECK(e->chunk_offset == chunks[i].offset);
        CHECK(e->chunk_length == chunks[i].total_length());
        auto ch = parse_chunk(chunks[i]);
        REQUIRE(ch.ok());
        CHECK(ch->count == 100);
        CHECK(ch->compression == "");
        CHECK(ch->uncompressed_size == ch->records.size());
        CHECK(ch->records_offset + ch->records.size() == chunks[i].end_offset());
    }
    auto st = parse_statistics(of(f, op::statistics).at(0));
    REQUIRE(st.ok());
    CHECK(st->gaussian_count == 300);
    CHECK(st->chunk_count == 3);
    auto so = parse_summary_offset(of(f, op::summary_offset).at(0));
    REQUIRE(so.ok());
    CHECK(so->group_opcode == op::chunk_index);
    CHECK(so->group_start == idx[0].offset);
    auto ft = parse_footer(f.records.back());
    REQUIRE(ft.ok());
    CHECK(ft->summary_start == idx[0].offset);
}

TEST_CASE("interop: birth-zstd-sh3-balanced SH depths, band records and index bands (§5.3, §5.7, "
          "§5.8)",
          "[records][interop]") {
    FixtureFile f = load_fixture("birth-zstd-sh3-balanced.4dgs");
    auto h = parse_header(f.records.at(0));
    REQUIRE(h.ok());
    CHECK(h->sh_degree == 3);
    auto q = parse_quantization(of(f, op::quantization).at(0));
    REQUIRE(q.ok());
    CHECK(q->sh_depths == std::vector<std::uint8_t>{8, 6, 5});
    CHECK_FALSE(q->sh_depths_malformed);
    CHECK(*q->bound("sh_band1") == "0");
    CHECK(*q->bound("sh_band2") == "2");
    CHECK(*q->bound("sh_band3") == "4");
    CHECK(*q->bound("sh") == "4");

    auto bands = of(f, op::sh_band);
    REQUIRE(bands.size() == 6);
    for (std::size_t i = 0; i < bands.size(); ++i) {
        auto b = parse_sh_band(bands[i]);
        REQUIRE(b.ok());
        CHECK(b->band == i % 3 + 1);
        CHECK(b->stream[0] == 7);  // the §5.7 quirk: attribute_id carries 0x07
        CHECK(b->stream[4] == 3 * (2 * b->band + 1));  // channels
        CHECK(b->stream.size() + 1 == bands[i].content_length);
    }
    auto idx = of(f, op::chunk_index);
    REQUIRE(idx.size() == 2);
    for (std::size_t i = 0; i < idx.size(); ++i) {
        auto e = parse_chunk_index(idx[i]);
        REQUIRE(e.ok());
        CHECK(e->gaussian_count == 100);
        REQUIRE(e->bands.size() == 3);
        for (std::size_t b = 0; b < 3; ++b) {
            CHECK(e->bands[b].band == b + 1);
            CHECK(e->bands[b].offset == bands[i * 3 + b].offset);
            CHECK(e->bands[b].length == bands[i * 3 + b].total_length());
        }
    }
}

TEST_CASE("interop: birth-never-fades-no-index has no summary records (§5.2)",
          "[records][interop]") {
    FixtureFile f = load_fixture("birth-never-fades-no-index.4dgs");
    CHECK(of(f, op::chunk_index).empty());
    auto ft = parse_footer(f.records.back());
    REQUIRE(ft.ok());
    CHECK(ft->summary_start == 0);
    CHECK(ft->summary_crc == 0);
    auto q = parse_quantization(of(f, op::quantization).at(0));
    REQUIRE(q.ok());
    CHECK(*q->bound("rot") == "0.0005");
    CHECK(compare_bounds(*q->bound("rot"), "5e-4") == 0);
}

TEST_CASE("interop: keyframe-delta-churn delta chunks, groups and appended index fields (§5.8, "
          "§5.18)",
          "[records][interop]") {
    FixtureFile f = load_fixture("keyframe-delta-churn.4dgs");
    auto h = parse_header(f.records.at(0));
    REQUIRE(h.ok());
    CHECK(h->temporal_model == "keyframe-delta");
    CHECK(h->duration_sec == 6.0);

    std::map<std::uint64_t, std::uint32_t> level_at;
    auto deltas = of(f, op::delta_chunk);
    REQUIRE(deltas.size() == 4);
    for (const auto& r : deltas) {
        auto d = parse_delta_chunk(r);
        REQUIRE(d.ok());
        CHECK(d->delta_mode == 1);  // chained
        CHECK(d->reference_offset < r.offset);
        CHECK(d->birth_count == 4);
        CHECK(d->death_count == 3);
        REQUIRE(d->compression == "");
        auto g = split_delta_groups(d->records, d->records_offset);
        REQUIRE(g.ok());
        CHECK(g->updates.size() + g->births.size() + g->deaths.size() + 24 == d->records.size());
        CHECK(g->deaths.size() >= 17);
        CHECK(g->deaths[0] == 13);  // the death group is exactly one gaussian_id stream
        std::uint32_t elements;
        std::memcpy(&elements, g->deaths.data() + 5, 4);
        CHECK(elements == d->death_count);
    }
    auto idx = of(f, op::chunk_index);
    REQUIRE(idx.size() == 6);
    const int kinds[6] = {0, 1, 1, 0, 1, 1};
    const int depths[6] = {0, 1, 2, 0, 1, 2};
    for (int i = 0; i < 6; ++i) {
        auto e = parse_chunk_index(idx[i]);
        REQUIRE(e.ok());
        REQUIRE(e->keyframe.has_value());
        CHECK(e->t0 == i);
        CHECK(e->t1 == i + 1);
        CHECK(e->keyframe->chunk_kind == kinds[i]);
        CHECK(e->keyframe->depth == depths[i]);
        CHECK(e->keyframe->live_count == static_cast<std::uint64_t>(40 + i));
        if (kinds[i] == 0) {
            CHECK(e->keyframe->keyframe_offset == e->chunk_offset);
            CHECK(e->keyframe->reference_offset == 0);
        } else {
            auto d = parse_delta_chunk(*std::find_if(
                f.records.begin(), f.records.end(),
                [&](const RecordView& r) { return r.offset == e->chunk_offset; }));
            REQUIRE(d.ok());
            CHECK(d->reference_offset == e->keyframe->reference_offset);
            CHECK(d->keyframe_offset == e->keyframe->keyframe_offset);
            CHECK(d->depth == e->keyframe->depth);
            CHECK(d->delta_mode == e->keyframe->delta_mode);
            CHECK(e->gaussian_count == d->update_count + d->birth_count + d->death_count);
        }
    }
}

TEST_CASE("interop: birth-extras audio, camera and provenance records (§5.10, §5.15, §5.16)",
          "[records][interop]") {
    FixtureFile f = load_fixture("birth-extras.4dgs");
    auto h = parse_header(f.records.at(0));
    REQUIRE(h.ok());
    CHECK(h->profile == "objects");
    CHECK(h->has_audio());
    CHECK(h->duration_sec == 5.0);

    auto sources = of(f, op::audio_source);
    auto datas = of(f, op::audio_data);
    REQUIRE(sources.size() == 2);
    REQUIRE(datas.size() == 2);
    auto s3 = parse_audio_source(sources[0]);
    auto s9 = parse_audio_source(sources[1]);
    REQUIRE(s3.ok());
    REQUIRE(s9.ok());
    CHECK(s3->source_id == 3);
    CHECK(s3->name == "drone");
    CHECK(s3->codec == "wav");
    CHECK(s3->channel_layout == "mono");
    CHECK(s3->gain == Approx(0.8));
    CHECK(s3->spatial());
    CHECK(s3->loop());
    CHECK(s3->interpolation == "linear");
    CHECK(s3->keyframes.size() == 2);
    CHECK(check_audio_keyframes_within(*s3, h->duration_sec).ok());
    CHECK(s9->source_id == 9);
    CHECK(s9->name == "ambience");
    CHECK(s9->channel_layout == "stereo");
    CHECK(s9->gain == Approx(0.5));
    CHECK_FALSE(s9->spatial());
    CHECK(s9->keyframes.empty());
    auto d3 = parse_audio_data(datas[0]);
    auto d9 = parse_audio_data(datas[1]);
    REQUIRE(d3.ok());
    REQUIRE(d9.ok());
    CHECK(d3->source_id == 3);
    CHECK(d3->data.size() == s3->data_length);
    CHECK(d9->source_id == 9);
    CHECK(d9->data.size() == s9->data_length);
    CHECK(std::string(d3->data.begin(), d3->data.begin() + 4) == "RIFF");

    auto cam = parse_camera(of(f, op::camera).at(0));
    REQUIRE(cam.ok());
    CHECK(cam->fov_y_deg == 55.0);
    CHECK(cam->interpolation == "linear");
    CHECK(cam->keyframes.size() == 3);
    CHECK_FALSE(cam->loop);

    auto frame = parse_coordinate_frame(of(f, op::coordinate_frame).at(0));
    REQUIRE(frame.ok());
    CHECK(frame->name == "");
    CHECK(frame->handedness == Handedness::right);
    CHECK(frame->up_axis == Axis::pos_y);
    CHECK(frame->forward_axis == Axis::neg_z);
    CHECK(frame->length_unit == LengthUnit::metre);
    CHECK(frame->metres_per_unit == 1.0);
    CHECK(length_unit_agrees(*frame));

    auto sensors = of(f, op::sensor_calibration);
    REQUIRE(sensors.size() == 2);
    auto front = parse_sensor_calibration(sensors[0]);
    auto imu = parse_sensor_calibration(sensors[1]);
    REQUIRE(front.ok());
    REQUIRE(imu.ok());
    CHECK(front->name == "front");
    CHECK(front->modality == "camera");
    CHECK(front->camera_model == CameraModel::brown_conrady);
    CHECK(front->width_px == 1920);
    CHECK(front->height_px == 1080);
    CHECK(front->fx == 1400);
    CHECK(front->cx == 960);
    CHECK(front->distortion.size() == 5);
    CHECK(front->distortion[0] == Approx(0.1));
    CHECK(front->pose_reference == PoseReference::rig);
    CHECK(front->rig_name == "rig");
    CHECK(imu->name == "imu");
    CHECK(imu->camera_model == CameraModel::none);
    CHECK(imu->distortion.empty());
    CHECK(imu->pose_reference == PoseReference::scene);

    auto rig = parse_rig_trajectory(of(f, op::rig_trajectory).at(0));
    REQUIRE(rig.ok());
    CHECK(rig->name == "rig");
    CHECK(rig->interpolation == TrajectoryInterpolation::linear);
    REQUIRE(rig->samples.size() == 3);
    CHECK(rig->samples[0].time == 0.0);
    CHECK(rig->samples[2].time == 5.0);

    auto anchor = parse_geodetic_anchor(of(f, op::geodetic_anchor).at(0));
    REQUIRE(anchor.ok());
    CHECK(anchor->frame_name == "");
    CHECK(anchor->latitude_deg == Approx(48.8584).margin(1e-3));
    CHECK(anchor->heading_deg == 90.0);
    CHECK(anchor->altitude_m == 35.0);

    auto table = parse_object_table(of(f, op::object_table).at(0));
    REQUIRE(table.ok());
    CHECK(table->embedding_dim == 3);
    REQUIRE(table->entries.size() == 2);
    CHECK(table->entries[0].object_id == 3);
    CHECK(table->entries[0].label == "cart");
    CHECK_FALSE(table->entries[0].dynamics.has_value());
    REQUIRE(table->entries[0].embedding.has_value());
    CHECK((*table->entries[0].embedding)[1] == Approx(0.8f));
    CHECK(table->entries[1].object_id == 8);
    CHECK(table->entries[1].label == "flag");
    REQUIRE(table->entries[1].dynamics.has_value());
    CHECK(table->entries[1].dynamics->velocity[0] == Approx(0.5f));

    auto tracks = of(f, op::object_track);
    REQUIRE(tracks.size() == 2);
    auto t3 = parse_object_track(tracks[0]);
    auto t8 = parse_object_track(tracks[1]);
    REQUIRE(t3.ok());
    REQUIRE(t8.ok());
    CHECK(t3->object_id == 3);
    CHECK(t3->interpolation == TrajectoryInterpolation::linear);
    CHECK(t3->samples.size() == 2);
    CHECK(t8->object_id == 8);
    CHECK(t8->interpolation == TrajectoryInterpolation::step);
    CHECK(t8->samples.size() == 3);
    CHECK(t8->samples[1].translation[1] == 2.0);
}

TEST_CASE("interop: mutated and truncated fixture records are refused or parsed, never misread "
          "past their content (§4.2)",
          "[records][interop]") {
    FixtureFile f = load_fixture("birth-extras.4dgs");
    std::uint32_t seed = 12345;
    auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
    int refused = 0, parsed = 0;
    for (const RecordView& r : f.records) {
        for (int round = 0; round < 40; ++round) {
            Buf content(r.content.begin(), r.content.end());
            if (round % 2 == 0 && !content.empty()) {
                for (int k = 0; k < 3; ++k) content[next() % content.size()] ^= 1u << (next() % 8);
            } else if (!content.empty()) {
                content.resize(next() % content.size());
            }
            // Exactly the content, on the heap, so a read past it is caught by a sanitizer.
            Buf rec = raw_record(r.opcode, content);
            RecordView v = view_of(rec, r.offset);
            bool ok = false;
            switch (r.opcode) {
                case op::header: ok = parse_header(v).ok(); break;
                case op::quantization: ok = parse_quantization(v).ok(); break;
                case op::window_table: ok = parse_window_table(v).ok(); break;
                case op::chunk: ok = parse_chunk(v).ok(); break;
                case op::chunk_index: ok = parse_chunk_index(v).ok(); break;
                case op::camera: ok = parse_camera(v).ok(); break;
                case op::statistics: ok = parse_statistics(v).ok(); break;
                case op::footer: ok = parse_footer(v).ok(); break;
                case op::audio_source: ok = parse_audio_source(v).ok(); break;
                case op::audio_data: ok = parse_audio_data(v).ok(); break;
                case op::coordinate_frame: ok = parse_coordinate_frame(v).ok(); break;
                case op::sensor_calibration: ok = parse_sensor_calibration(v).ok(); break;
                case op::rig_trajectory: ok = parse_rig_trajectory(v).ok(); break;
                case op::geodetic_anchor: ok = parse_geodetic_anchor(v).ok(); break;
                case op::object_table: ok = parse_object_table(v).ok(); break;
                case op::object_track: ok = parse_object_track(v).ok(); break;
                default: continue;
            }
            (ok ? parsed : refused)++;
        }
    }
    CHECK(refused > 0);
    CHECK(parsed > 0);
}
