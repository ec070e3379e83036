// validate() (fourdgs/validate.hpp): every fault in a file, each with its rule, field, value,
// offset and section; the SHOULD-level warnings; truncation; and no crash on any bytes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fourdgs/io.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/validate.hpp"
#include "fourdgs/wire.hpp"
#include "fourdgs/writer.hpp"
#include "support/file_builder.hpp"
#include "support/readers.hpp"
#include "support/pipe_source.hpp"

using namespace fourdgs;
using test::ByteVec;

namespace {

ValidationReport validate_bytes(const ByteVec& bytes, ValidateOptions options = {}) {
    MemorySource src(bytes);
    auto r = validate(src, options);
    REQUIRE(r.ok());
    return std::move(r).value();
}

std::string describe(const ValidationReport& rep) {
    std::string s;
    for (const Finding& f : rep.findings)
        s += std::string(to_string(f.severity)) + " " + f.rule + " [" + f.field + "] = '" +
             f.value + "' at " + std::to_string(f.offset) + " " + f.section + ": " + f.message +
             "\n";
    return s;
}

std::vector<const Finding*> with_rule(const ValidationReport& rep, std::string_view rule) {
    std::vector<const Finding*> out;
    for (const Finding& f : rep.findings)
        if (f.rule == rule) out.push_back(&f);
    return out;
}

// The one finding with this rule (fails the test when there is not exactly one).
const Finding& only(const ValidationReport& rep, std::string_view rule) {
    auto found = with_rule(rep, rule);
    INFO(describe(rep));
    REQUIRE(found.size() == 1);
    return *found.front();
}

struct Rec {
    std::uint8_t opcode = 0;
    std::uint64_t offset = 0, length = 0;
    std::uint64_t content() const { return offset + kRecordHeaderSize; }
};

// The records of a well-formed file, by the wire framing alone.
std::vector<Rec> records_of(const ByteVec& bytes) {
    std::vector<Rec> out;
    std::uint64_t at = kMagicSize;
    while (at + kMagicSize < bytes.size()) {
        auto r = parse_record(Bytes(bytes).subspan(static_cast<std::size_t>(at)), at);
        REQUIRE(r.ok());
        out.push_back({r->opcode, at, r->total_length()});
        at = r->end_offset();
    }
    return out;
}

const Rec& first(const std::vector<Rec>& recs, std::uint8_t opcode) {
    for (const Rec& r : recs)
        if (r.opcode == opcode) return r;
    FAIL("no record with opcode " << int(opcode));
    return recs.front();
}

RecordView view_of(const ByteVec& bytes, const Rec& r) {
    auto v = parse_record(Bytes(bytes).subspan(static_cast<std::size_t>(r.offset)), r.offset);
    REQUIRE(v.ok());
    return *v;
}

// A small scene through write_scene: `n` gaussians over two windows of a 2-second clip.
struct Scene {
    SceneHeader header;
    std::size_t n = 48;
    std::vector<float> position, scale, rotation, color, motion, mu_t, sigma_t;
    std::vector<double> win_lo, win_hi;

    Scene() {
        header.duration_sec = 2;
        header.library = "fourdgs tests/test_validate.cpp";
        header.metadata.push_back(Metadata{"", {{"visibility_profile", "gaussian"}}});
        CoordinateFrame frame;
        frame.handedness = Handedness::right;
        frame.up_axis = Axis::pos_y;
        frame.forward_axis = Axis::neg_z;
        frame.length_unit = LengthUnit::metre;
        frame.metres_per_unit = 1.0;
        header.coordinate_frames.push_back(frame);
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> u(0, 1);
        for (std::size_t i = 0; i < n; ++i) {
            for (int c = 0; c < 3; ++c) position.push_back(2 * u(rng) - 1);
            for (int c = 0; c < 3; ++c) scale.push_back(0.01f + 0.05f * u(rng));
            for (float q : {u(rng), u(rng), u(rng), 1.0f}) rotation.push_back(q);
            for (int c = 0; c < 4; ++c) color.push_back(u(rng));
            for (int c = 0; c < 3; ++c) motion.push_back(0.1f * (u(rng) - 0.5f));
            const double lo = i % 2 ? 1.0 : 0.0;
            win_lo.push_back(lo);
            win_hi.push_back(lo + 1.0);
            mu_t.push_back(static_cast<float>(lo + 0.5));
            sigma_t.push_back(0.25f + 0.1f * u(rng));
        }
    }
    ByteVec write(const WriterOptions& options = {}) const {
        GaussianBatch b;
        b.count = n;
        b.position = position;
        b.scale = scale;
        b.rotation = rotation;
        b.color = color;
        b.motion = motion;
        b.mu_t = mu_t;
        b.sigma_t = sigma_t;
        b.win_lo = win_lo;
        b.win_hi = win_hi;
        auto bytes = write_scene(SceneInput{header, b}, options);
        if (!bytes.ok()) FAIL(bytes.error().describe());
        return std::move(bytes).value();
    }
};

WriterOptions single_thread() {
    WriterOptions o;
    o.threads = 1;
    return o;
}

std::vector<std::filesystem::path> fixtures() {
    std::vector<std::filesystem::path> out;
    for (const auto& e : std::filesystem::directory_iterator(FOURDGS_TEST_DATA))
        if (e.path().extension() == ".4dgs") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

ByteVec read_fixture(const std::filesystem::path& p) {
    auto bytes = read_file(p.string());
    REQUIRE(bytes.ok());
    return std::move(bytes).value();
}

// A file built record by record (tests/support/file_builder.hpp): two chunks, valid.
test::BuiltScene built_scene() { return test::default_scene(2, 16, 0, 3); }

// Sensor "cam", posed relative to rig "rig", and that rig's one-sample Rig Trajectory.
std::pair<SensorCalibration, RigTrajectory> sensor_on_a_rig() {
    SensorCalibration sensor;
    sensor.name = "cam";
    sensor.modality = "rgb";
    sensor.pose_reference = PoseReference::rig;
    sensor.rig_name = "rig";
    RigTrajectory rig;
    rig.name = "rig";
    rig.samples.push_back({0.0, {0, 0, 0, 1}, {1, 2, 3}});
    return {sensor, rig};
}

}  // namespace

TEST_CASE("validate: a file written by write_scene yields no errors") {
    const ByteVec bytes = Scene().write(single_thread());
    const ValidationReport rep = validate_bytes(bytes);
    INFO(describe(rep));
    CHECK(rep.valid());
    CHECK(rep.errors() == 0);
    CHECK_FALSE(rep.truncated);
    CHECK(rep.file_size == bytes.size());
    CHECK(rep.chunks >= 2);
    CHECK(rep.records == records_of(bytes).size());
}

TEST_CASE("validate: the interop fixtures yield no errors") {
    const auto files = fixtures();
    REQUIRE(files.size() >= 5);
    for (const auto& path : files) {
        const ByteVec bytes = read_fixture(path);
        const ValidationReport rep = validate_bytes(bytes);
        INFO(path.filename().string() << "\n" << describe(rep));
        CHECK(rep.errors() == 0);
        CHECK_FALSE(rep.truncated);
        CHECK(rep.chunks > 0);
        for (const Finding& f : rep.findings) {  // every finding names its rule and section
            CHECK_FALSE(f.rule.empty());
            CHECK_FALSE(f.section.empty());
            CHECK_FALSE(f.field.empty());
        }
    }
}

TEST_CASE("validate reports at least three independent faults planted in one file, all of them, with offsets") {
    ByteVec bytes = Scene().write(single_thread());
    const auto recs = records_of(bytes);

    // 1. A codec byte no implementation defines, inside the first stream of the first chunk.
    const Rec& chunk_rec = first(recs, op::chunk);
    auto chunk = parse_chunk(view_of(bytes, chunk_rec));
    REQUIRE(chunk.ok());
    REQUIRE(chunk->compression.empty());
    const std::uint64_t codec_at = chunk->records_offset + test::stream_field::codec;
    bytes[codec_at] = 0x55;

    // 2. The scene frame says centimetre while metres_per_unit says 1.0 (M044).
    const Rec& frame_rec = first(recs, op::coordinate_frame);
    const RecordView frame_view = view_of(bytes, frame_rec);
    const std::uint64_t unit_at = frame_rec.content() + 4 + 0 /* name "" */ + 3;
    REQUIRE(bytes[unit_at] == static_cast<std::uint8_t>(LengthUnit::metre));
    bytes[unit_at] = static_cast<std::uint8_t>(LengthUnit::centimetre);
    (void)frame_view;

    // 3. The first index entry lies about gaussian_count (M033).
    const Rec& index_rec = first(recs, op::chunk_index);
    std::uint32_t count = 0;
    std::memcpy(&count, bytes.data() + index_rec.content() + 32, 4);
    REQUIRE(count == chunk->count);
    test::put_u32(bytes, index_rec.content() + 32, count + 5);

    // 4. Statistics lies about chunk_count (advisory, M036: a warning).
    const Rec& stats_rec = first(recs, op::statistics);
    std::uint32_t chunks = 0;
    std::memcpy(&chunks, bytes.data() + stats_rec.content() + 8, 4);
    test::put_u32(bytes, stats_rec.content() + 8, chunks + 3);

    const ValidationReport rep = validate_bytes(bytes);
    INFO(describe(rep));

    const Finding& codec = only(rep, "unknown-stream-codec");
    CHECK(codec.severity == Severity::error);
    CHECK(codec.field == "Attribute Stream.codec");
    CHECK(codec.value == "85");
    CHECK(codec.offset == codec_at);
    CHECK(codec.section == "§5.6");

    const Finding& unit = only(rep, "length-unit-mismatch");
    CHECK(unit.severity == Severity::error);
    CHECK(unit.field == "Coordinate Frame.length_unit, Coordinate Frame.metres_per_unit");
    CHECK(unit.value == "centimetre / 1");
    CHECK(unit.offset == frame_rec.offset);
    CHECK(unit.section == "§5.15.2");

    const Finding& index = only(rep, "index-record-mismatch");
    CHECK(index.severity == Severity::error);
    CHECK(index.field == "Chunk Index.gaussian_count");
    CHECK(index.value == std::to_string(count + 5));
    CHECK(index.offset == index_rec.offset);
    CHECK(index.section == "§5.8");

    const Finding& stats = only(rep, "statistics-mismatch");
    CHECK(stats.severity == Severity::warning);
    CHECK(stats.field == "Statistics.chunk_count");
    CHECK(stats.value == std::to_string(chunks + 3));
    CHECK(stats.offset == stats_rec.content() + 8);
    CHECK(stats.section == "§5.12");

    // The summary bytes changed under their CRC: that is reported too, at the Footer's field.
    const Rec& footer_rec = first(recs, op::footer);
    const Finding& crc = only(rep, "summary-crc-mismatch");
    CHECK(crc.offset == footer_rec.content() + 16);
    CHECK(crc.section == "§4.5");

    CHECK(rep.errors() == 4);
    CHECK_FALSE(rep.valid());
    CHECK_FALSE(rep.truncated);
}

TEST_CASE("validate: a pipe gives the findings memory gives, and decode_chunks off skips only the streams",
          "[threads]") {
    ByteVec bytes = Scene().write(single_thread());
    const auto recs = records_of(bytes);
    auto chunk = parse_chunk(view_of(bytes, first(recs, op::chunk)));
    REQUIRE(chunk.ok());
    bytes[chunk->records_offset + test::stream_field::codec] = 0x55;
    test::put_u32(bytes, first(recs, op::chunk_index).content() + 32, chunk->count + 1);
    const ValidationReport memory = validate_bytes(bytes);
    REQUIRE(memory.errors() == 3);  // codec, index entry, summary CRC
    const ValidationReport piped = test::through_pipe(bytes, [](ByteSource& src) {
        auto r = validate(src);
        REQUIRE(r.ok());
        return std::move(r).value();
    });
    REQUIRE(piped.findings.size() == memory.findings.size());
    for (std::size_t i = 0; i < piped.findings.size(); ++i) {
        CHECK(piped.findings[i].rule == memory.findings[i].rule);
        CHECK(piped.findings[i].offset == memory.findings[i].offset);
    }
    ValidateOptions no_decode;
    no_decode.decode_chunks = false;
    const ValidationReport shallow = validate_bytes(bytes, no_decode);
    CHECK(with_rule(shallow, "unknown-stream-codec").empty());
    CHECK(with_rule(shallow, "index-record-mismatch").size() == 1);
}

TEST_CASE("M044: a length_unit that disagrees with metres_per_unit is an error naming both fields") {
    Scene s;
    s.header.coordinate_frames[0].length_unit = LengthUnit::metre;
    s.header.coordinate_frames[0].metres_per_unit = 0.01;  // the spec's own example
    // The writer checks records with the reader's parsers, which do not refuse this (M045).
    const ByteVec bytes = s.write(single_thread());
    const ValidationReport rep = validate_bytes(bytes);
    const Finding& f = only(rep, "length-unit-mismatch");
    CHECK(f.severity == Severity::error);
    CHECK(f.field.find("length_unit") != std::string::npos);
    CHECK(f.field.find("metres_per_unit") != std::string::npos);
    CHECK(f.value == "metre / 0.01");
    CHECK(f.offset == first(records_of(bytes), op::coordinate_frame).offset);
    CHECK_FALSE(rep.valid());  // M045: a tool that reports files says the file is wrong

    SECTION("an agreeing pair, and the unknown states, report nothing") {
        for (auto [unit, metres] : {std::pair{LengthUnit::centimetre, 0.01},
                                    std::pair{LengthUnit::unspecified, 3.0},
                                    std::pair{LengthUnit::foot, 0.0}}) {
            Scene ok;
            ok.header.coordinate_frames[0].length_unit = unit;
            ok.header.coordinate_frames[0].metres_per_unit = metres;
            const ValidationReport clean = validate_bytes(ok.write(single_thread()));
            INFO(describe(clean));
            CHECK(with_rule(clean, "length-unit-mismatch").empty());
            CHECK(clean.valid());
        }
    }
}

TEST_CASE("M062: a Rig Trajectory with no samples is a warning") {
    Scene s;
    RigTrajectory empty;
    empty.name = "rig";
    s.header.rig_trajectories.push_back(empty);
    const ByteVec bytes = s.write(single_thread());
    const ValidationReport rep = validate_bytes(bytes);
    const Finding& f = only(rep, "empty-rig-trajectory");
    CHECK(f.severity == Severity::warning);
    CHECK(f.section == "§5.15.4");
    CHECK(f.offset == first(records_of(bytes), op::rig_trajectory).offset);
    CHECK(rep.valid());
}

TEST_CASE("M020: a bound the grammar does not spell is reported as a warning naming the key") {
    test::BuiltScene s = built_scene();
    s.spec.quantization.bounds.push_back({"rgb_extra", " 0.5"});
    s.spec.quantization.bounds[1].second = "1_000";  // scale_rel
    const test::BuiltFile file = test::build(s.spec);
    const ValidationReport rep = validate_bytes(file.bytes);
    INFO(describe(rep));
    auto found = with_rule(rep, "bound-not-a-number");
    REQUIRE(found.size() == 2);
    CHECK(found[0]->severity == Severity::warning);
    CHECK(found[0]->field == "Quantization.bounds.scale_rel");
    CHECK(found[0]->value == "1_000");
    CHECK(found[0]->section == "§5.3");
    CHECK(found[1]->value == " 0.5");
    CHECK(rep.valid());
}

TEST_CASE("M025: malformed or inconsistent SH depth declarations are reported") {
    SECTION("a depth outside 3..8 reads as none and is reported (M024)") {
        test::BuiltScene s = built_scene();
        s.spec.quantization.sh_depths = {9};
        const ValidationReport rep = validate_bytes(test::build(s.spec).bytes);
        const Finding& f = only(rep, "malformed-sh-depths");
        CHECK(f.severity == Severity::warning);
        CHECK(f.section == "§5.3");
        CHECK(rep.valid());
    }
    SECTION("a sh_band bound that is not the depth's (M023)") {
        test::BuiltScene s = built_scene();
        s.spec.quantization.sh_depths = {6};  // pitch 4, bound 2
        s.spec.quantization.step_sh = 4;
        s.spec.quantization.bounds.push_back({"sh_band1", "3"});
        for (auto& [k, v] : s.spec.quantization.bounds)
            if (k == "sh") v = "2";
        const ValidationReport rep = validate_bytes(test::build(s.spec).bytes);
        const Finding& f = only(rep, "bound-disagrees-with-record");
        CHECK(f.field == "Quantization.bounds.sh_band1");
        CHECK(f.value == "3");
        CHECK(f.severity == Severity::warning);
    }
}

TEST_CASE("a non-finite window bound, pos_origin or step is an error naming the field, which the "
          "readers decode silently (issue 15 item 5, §5.3, §5.4)") {
    SECTION("a window bound") {
        test::BuiltScene s = built_scene();
        WindowTable table;
        table.windows = {{0.0, 1.0}, {0.5, std::numeric_limits<double>::quiet_NaN()}};
        s.spec.windows = table;
        const ValidationReport rep = validate_bytes(test::build(s.spec).bytes);
        INFO(describe(rep));
        const Finding& f = only(rep, "non-finite-value");
        CHECK(f.field == "Window Table.windows[1].hi");
        CHECK(f.severity == Severity::error);
        CHECK(f.section == "§5.4");
    }
    SECTION("pos_origin") {
        test::BuiltScene s = built_scene();
        s.spec.quantization.pos_origin[1] = -std::numeric_limits<double>::infinity();
        const ValidationReport rep = validate_bytes(test::build(s.spec).bytes);
        CHECK(only(rep, "non-finite-value").field == "Quantization.pos_origin[1]");
    }
    SECTION("a step") {
        test::BuiltScene s = built_scene();
        s.spec.quantization.step_pos = std::numeric_limits<double>::quiet_NaN();
        const ValidationReport rep = validate_bytes(test::build(s.spec).bytes);
        CHECK(only(rep, "non-finite-value").field == "Quantization.step_pos");
    }
}

TEST_CASE("window-table-after-first-chunk: a Window Table after gaussian data is refused by both "
          "readers and reported by the validator (§4, §5.4)") {
    test::BuiltScene s = built_scene();
    test::BuiltFile good = test::build(s.spec);
    // Move the Window Table to just after the first chunk's records.
    const auto recs = records_of(good.bytes);
    std::size_t table = 0, first_chunk = 0;
    for (std::size_t i = 0; i < recs.size(); ++i) {
        if (recs[i].opcode == op::window_table) table = i;
        if (recs[i].opcode == op::chunk && first_chunk == 0) first_chunk = i;
    }
    REQUIRE(table != 0);
    REQUIRE(first_chunk > table);
    std::size_t after = first_chunk + 1;
    while (after < recs.size() && recs[after].opcode == op::sh_band) ++after;
    const ByteVec t(good.bytes.begin() + static_cast<std::ptrdiff_t>(recs[table].offset),
                    good.bytes.begin() +
                        static_cast<std::ptrdiff_t>(recs[table].offset + recs[table].length));
    ByteVec bytes = good.bytes;
    bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(recs[after].offset), t.begin(),
                 t.end());
    bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(recs[table].offset),
                bytes.begin() + static_cast<std::ptrdiff_t>(recs[table].offset + recs[table].length));
    CHECK(test::streaming_refusal(bytes) == "window-table-after-first-chunk");
    CHECK(test::indexed_refusal(bytes) == "window-table-after-first-chunk");
    const ValidationReport rep = validate_bytes(bytes);
    CHECK(with_rule(rep, "window-table-after-first-chunk").size() == 1);
}

TEST_CASE("M027: a non-finite quantization parameter is an error naming the field") {
    test::BuiltScene s = built_scene();
    s.spec.quantization.step_time = std::numeric_limits<double>::infinity();
    const test::BuiltFile file = test::build(s.spec);
    const ValidationReport rep = validate_bytes(file.bytes);
    INFO(describe(rep));
    auto found = with_rule(rep, "non-finite-value");
    REQUIRE(found.size() == 1);
    const Finding& f = *found[0];
    CHECK(f.severity == Severity::error);
    CHECK(f.field == "Quantization.step_time");
    CHECK(f.value == "inf");
    CHECK(f.section == "§5.3");
    // scheme string (4 + 10 bytes), pos_origin (24), six steps before step_time (48).
    const std::uint64_t content = file.records[1].offset + kRecordHeaderSize;
    CHECK(f.offset == content + 4 + 10 + 24 + 6 * 8);
}

TEST_CASE("§2: a string that is not UTF-8 is an invalid-utf8 error naming record and field, in "
          "every record family") {
    // "caf" then a lead byte cut by the next character: not well-formed UTF-8 from byte 3.
    const std::string bad = std::string("caf\xc3", 4) + "!";
    test::BuiltScene s = built_scene();
    s.spec.header.profile = bad;
    s.spec.header.library = bad;
    s.spec.header.attributes = {{bad, "v"}, {"k", bad}};
    s.spec.quantization.bounds.push_back({bad, bad});
    s.spec.chunks[1].compression = bad;
    const ByteVec payload(3, 7);
    Metadata meta{bad, {{"title", bad}}};
    Attachment att{bad, bad, payload, 0};
    AudioLegacy legacy{bad, 0.0, payload, 0};
    AudioSource source;
    source.source_id = 3;
    source.name = bad;
    source.codec = bad;
    source.channel_layout = bad;
    source.duration_sec = 1;
    source.interpolation = "linear";
    CoordinateFrame frame;
    frame.name = bad;
    SensorCalibration sensor;
    sensor.name = bad;
    sensor.modality = bad;
    sensor.rig_name = bad;
    RigTrajectory rig;
    rig.name = bad;
    GeodeticAnchor anchor{bad, 1, 2, 3, 4};
    ObjectTable table;
    table.entries.push_back({});
    table.entries[0].object_id = 1;
    table.entries[0].label = bad;
    s.spec.front = {test::record_bytes(meta), test::record_bytes(att), test::record_bytes(legacy),
                    test::record_bytes(source), test::record_bytes(frame),
                    test::record_bytes(sensor), test::record_bytes(rig),
                    test::record_bytes(anchor), test::record_bytes(table)};
    const test::BuiltFile file = test::build(s.spec);
    const ValidationReport rep = validate_bytes(file.bytes);
    INFO(describe(rep));

    const std::vector<std::string> expected = {
        "Header.profile", "Header.library", "Header.attributes[0].key",
        "Header.attributes[1].value", "Quantization.bounds[" +
            std::to_string(s.spec.quantization.bounds.size() - 1) + "].key",
        "Quantization.bounds[" + std::to_string(s.spec.quantization.bounds.size() - 1) +
            "].value",
        "Metadata.name", "Metadata.entries[0].value", "Attachment.name", "Attachment.media_type",
        "Audio.codec", "Audio Source.name", "Audio Source.codec", "Audio Source.channel_layout",
        "Coordinate Frame.name", "Sensor Calibration.name", "Sensor Calibration.modality",
        "Sensor Calibration.rig_name", "Rig Trajectory.name", "Geodetic Anchor.frame_name",
        "Object Table.entries[0].label", "Chunk.compression"};
    std::vector<std::string> got;
    for (const Finding* f : with_rule(rep, "invalid-utf8")) {
        got.push_back(f->field);
        CHECK(f->severity == Severity::error);
        // The section of the record holding the string, as for any rule every record can break.
        CHECK_FALSE(f->section.empty());
        if (f->field.rfind("Header.", 0) == 0) CHECK(f->section == "§5.1");
        CHECK(f->value == "\"caf\\udcc3!\"");  // the reversible JSON spelling (text.hpp)
        CHECK(f->message.find("byte 3") != std::string::npos);
        // At the record that holds the string.
        const bool at_a_record = std::any_of(file.records.begin(), file.records.end(),
                                             [&](const auto& r) { return r.offset == f->offset; });
        CHECK(at_a_record);
    }
    std::sort(got.begin(), got.end());
    std::vector<std::string> want = expected;
    std::sort(want.begin(), want.end());
    CHECK(got == want);
    CHECK_FALSE(rep.valid());

    SECTION("well-formed UTF-8 in every field reports nothing") {
        test::BuiltScene ok = built_scene();
        ok.spec.header.library = "caf\xc3\xa9 \xf0\x9f\x8e\xa5";  // two and four bytes
        ok.spec.front = {test::record_bytes(Metadata{"m\xc3\xa9ta", {{"title", "\xe2\x82\xac"}}})};
        const ValidationReport clean = validate_bytes(test::build(ok.spec).bytes);
        INFO(describe(clean));
        CHECK(with_rule(clean, "invalid-utf8").empty());
    }
}

TEST_CASE("M047: a coordinate_system key that disagrees with the Coordinate Frame record is an error") {
    Scene s;
    s.header.metadata[0].entries.push_back({"coordinate_system", "z-up-right-handed"});
    const ByteVec bytes = s.write(single_thread());
    const ValidationReport rep = validate_bytes(bytes);
    const Finding& f = only(rep, "coordinate-system-mismatch");
    CHECK(f.severity == Severity::error);
    CHECK(f.value == "z-up-right-handed");
    CHECK(f.section == "§5.15.2");
    CHECK(f.offset == first(records_of(bytes), op::metadata).offset);
    // Emitting both at all is advice against (a writer SHOULD emit only the record).
    CHECK(only(rep, "coordinate-system-key-beside-record").severity == Severity::warning);

    SECTION("an agreeing key is only the advice") {
        Scene agree;
        agree.header.metadata[0].entries.push_back({"coordinate_system", "y-up-right-handed"});
        const ValidationReport ok = validate_bytes(agree.write(single_thread()));
        INFO(describe(ok));
        CHECK(ok.valid());
        CHECK(with_rule(ok, "coordinate-system-key-beside-record").size() == 1);
    }
}

TEST_CASE("M002: a file recording no coordinate system is warned about") {
    Scene s;
    s.header.coordinate_frames.clear();
    const ValidationReport rep = validate_bytes(s.write(single_thread()));
    CHECK(only(rep, "no-coordinate-system").severity == Severity::warning);
    CHECK(only(rep, "no-coordinate-system").section == "§2");
    CHECK(rep.valid());
    // The record, or the key alone, says it.
    CHECK(with_rule(validate_bytes(Scene().write(single_thread())), "no-coordinate-system").empty());
    s.header.metadata[0].entries.push_back({"coordinate_system", "y-up-right-handed"});
    CHECK(with_rule(validate_bytes(s.write(single_thread())), "no-coordinate-system").empty());
}

TEST_CASE("M004: a file not declaring its visibility profile is warned about") {
    Scene s;
    s.header.metadata.clear();
    const ValidationReport rep = validate_bytes(s.write(single_thread()));
    CHECK(only(rep, "no-visibility-profile").severity == Severity::warning);
    CHECK(only(rep, "no-visibility-profile").section == "§3.1");
    s.header.metadata.push_back(Metadata{"", {{"visibility_profile", "flat-top"}}});
    const ValidationReport odd = validate_bytes(s.write(single_thread()));
    CHECK(only(odd, "unknown-visibility-profile").value == "flat-top");
    CHECK(with_rule(validate_bytes(Scene().write(single_thread())), "no-visibility-profile").empty());
}

TEST_CASE("M012: private records without an application metadata entry are warned about") {
    test::BuiltScene s = built_scene();
    s.spec.front.push_back(test::framed(0x91, {1, 2, 3}));
    const test::BuiltFile file = test::build(s.spec);
    const ValidationReport rep = validate_bytes(file.bytes);
    const Finding& f = only(rep, "private-records-without-application");
    CHECK(f.severity == Severity::warning);
    CHECK(f.value == "0x91");
    CHECK(f.section == "§4.3");
    std::uint64_t private_at = 0;
    for (const auto& r : file.records)
        if (r.opcode == 0x91) private_at = r.offset;
    CHECK(f.offset == private_at);
    CHECK(rep.valid());

    s.spec.front.insert(s.spec.front.begin(),
                        test::record_bytes(Metadata{"", {{"application", "an editor"}}}));
    CHECK(with_rule(validate_bytes(test::build(s.spec).bytes), "private-records-without-application").empty());
}

TEST_CASE("M106: content whose every chunk spans the clip, undeclared, is warned about") {
    test::BuiltScene s = test::default_scene(1, 16, 0, 5);  // one chunk over [0, 1) of a 1 s clip
    const ValidationReport rep = validate_bytes(test::build(s.spec).bytes);
    const Finding& f = only(rep, "undeclared-unseekable-content");
    CHECK(f.severity == Severity::warning);
    CHECK(f.section == "§8");
    s.spec.header.profile = "baked";
    CHECK(with_rule(validate_bytes(test::build(s.spec).bytes), "undeclared-unseekable-content").empty());
    // Two chunks partition the clip: seeking is cheap, nothing to say.
    CHECK(with_rule(validate_bytes(test::build(built_scene().spec).bytes),
                    "undeclared-unseekable-content").empty());
}

TEST_CASE("M029: a window index outside the table is reported naming the index") {
    test::BuiltScene s = test::default_scene(1, 8, 0, 9);
    s.spec.windows->windows.resize(1);
    s.bins[0] = test::random_bins(8, 9, {3});
    s.spec.chunks[0] = test::chunk_from_bins(s.bins[0], 0, 1);
    const test::BuiltFile file = test::build(s.spec);
    const ValidationReport rep = validate_bytes(file.bytes);
    const Finding& f = only(rep, "window-index-out-of-range");
    CHECK(f.value == "3");
    CHECK(f.section == "§5.4");
    CHECK(f.field == "Attribute Stream.window_index");
}

TEST_CASE("validate: duplicates and a misplaced Header are each reported, and the walk goes on") {
    test::BuiltScene s = built_scene();
    s.spec.before_header = test::record_bytes(Metadata{"early", {}});
    s.spec.front.push_back(test::record_bytes(s.spec.header));
    s.spec.front.push_back(test::record_bytes(s.spec.quantization));
    s.spec.front.push_back(test::record_bytes(*s.spec.windows));
    Header bad = s.spec.header;
    bad.cutoff = 1.5;  // a second Header is refused as such, before its fields are judged
    s.spec.front.push_back(test::record_bytes(bad));
    const test::BuiltFile file = test::build(s.spec);
    const ValidationReport rep = validate_bytes(file.bytes);
    INFO(describe(rep));
    CHECK(only(rep, "header-not-first").offset == file.records[0].offset);
    CHECK(with_rule(rep, "duplicate-header").size() == 2);
    CHECK(only(rep, "duplicate-quantization").offset == file.records[5].offset);
    CHECK(only(rep, "duplicate-window-table").offset == file.records[6].offset);
    CHECK(with_rule(rep, "duplicate-header")[0]->section == "§4");
    CHECK(with_rule(rep, "duplicate-header")[0]->offset == file.records[4].offset);
    CHECK(with_rule(rep, "duplicate-header")[1]->offset == file.records[7].offset);
    // The chunks after all that were still decoded and checked against the index.
    CHECK(rep.chunks == 2);
    CHECK(with_rule(rep, "index-record-mismatch").empty());
}

TEST_CASE("validate: a record that fails its parser is one finding, with the field and value") {
    test::BuiltScene s = built_scene();
    AudioSource src;
    src.source_id = 4;
    src.codec = "wav";
    src.channel_layout = "mono";
    src.duration_sec = -1;  // invalid-audio-duration
    src.interpolation = "linear";
    s.spec.front.push_back(test::record_bytes(src));
    s.spec.front.push_back(test::record_bytes(CoordinateFrame{"", Handedness::right, Axis::pos_y,
                                                              Axis::pos_y, LengthUnit::metre, 1.0}));
    const test::BuiltFile file = test::build(s.spec);
    const ValidationReport rep = validate_bytes(file.bytes);
    INFO(describe(rep));
    const Finding& d = only(rep, "invalid-audio-duration");
    CHECK(d.field == "Audio Source.duration_sec");
    CHECK(d.value == "-1");
    CHECK(d.section == "§5.16");
    const Finding& basis = only(rep, "degenerate-basis");
    CHECK(basis.section == "§5.15.2");
    CHECK(basis.offset != kNoOffset);
    CHECK(rep.chunks == 2);
}

TEST_CASE("validate: a keyframe-delta fixture with a bad codec byte in a Delta Chunk group is reported") {
    ByteVec bytes = read_fixture(std::filesystem::path(FOURDGS_TEST_DATA) / "keyframe-delta-churn.4dgs");
    REQUIRE(validate_bytes(bytes).valid());
    const auto recs = records_of(bytes);
    const Rec& delta_rec = first(recs, op::delta_chunk);
    auto delta = parse_delta_chunk(view_of(bytes, delta_rec));
    REQUIRE(delta.ok());
    REQUIRE(delta->compression.empty());
    auto groups = split_delta_groups(delta->records, delta->records_offset);
    REQUIRE(groups.ok());
    const std::uint64_t stream_at = !groups->updates.empty() ? groups->updates_offset
                                    : !groups->births.empty() ? groups->births_offset
                                                              : groups->deaths_offset;
    bytes[stream_at + test::stream_field::codec] = 0x66;
    const ValidationReport rep = validate_bytes(bytes);
    INFO(describe(rep));
    const Finding& f = only(rep, "unknown-stream-codec");
    CHECK(f.offset == stream_at + test::stream_field::codec);
    CHECK(f.value == "102");
}

TEST_CASE("validate: a truncated file reports the truncation, at every cut") {
    const ByteVec bytes = Scene().write(single_thread());
    const auto recs = records_of(bytes);
    for (std::size_t cut = 1; cut < bytes.size(); cut += 1 + cut / 8) {
        const ByteVec head(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
        const ValidationReport rep = validate_bytes(head);
        INFO("cut at " << cut << "\n" << describe(rep));
        CHECK(rep.truncated);
        CHECK_FALSE(rep.valid());
        REQUIRE(!with_rule(rep, "truncated").empty());
        const Finding& t = *with_rule(rep, "truncated").back();
        CHECK(t.section == "§4.2");
        CHECK(t.offset <= cut);
    }
    SECTION("a cut inside the second record names that record's offset") {
        const std::uint64_t cut = recs[1].offset + 5;
        const ByteVec head(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
        const ValidationReport rep = validate_bytes(head);
        CHECK(only(rep, "truncated").offset == recs[1].offset);
    }
}

TEST_CASE("validate: bit flips and garbage never crash, and every finding is complete") {
    const ByteVec base = read_fixture(std::filesystem::path(FOURDGS_TEST_DATA) / "birth-extras.4dgs");
    std::mt19937 rng(11);
    ValidateOptions options;
    options.reader.max_record_bytes = 1 << 20;
    options.reader.decode.limits.max_gaussians_per_chunk = 1 << 16;
    options.reader.decode.limits.max_decompressed_bytes = 1 << 22;
    std::size_t reported = 0;
    for (int trial = 0; trial < 600; ++trial) {
        ByteVec bytes = base;
        const int flips = 1 + trial % 3;
        for (int k = 0; k < flips; ++k) {
            const std::size_t at = std::uniform_int_distribution<std::size_t>(0, bytes.size() - 1)(rng);
            bytes[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        }
        MemorySource src(bytes);
        auto r = validate(src, options);
        REQUIRE(r.ok());
        reported += r->findings.size();
        for (const Finding& f : r->findings) {
            INFO(f.rule << " [" << f.field << "] " << f.message);
            CHECK_FALSE(f.rule.empty());
            CHECK_FALSE(f.section.empty());
            CHECK_FALSE(f.field.empty());
            CHECK_FALSE(f.message.empty());
        }
    }
    CHECK(reported > 0);
    for (int trial = 0; trial < 50; ++trial) {
        ByteVec garbage(static_cast<std::size_t>(rng() % 4096));
        for (auto& b : garbage) b = static_cast<std::uint8_t>(rng());
        if (trial % 2 && garbage.size() >= 8) std::copy(kMagic.begin(), kMagic.end(), garbage.begin());
        MemorySource src(garbage);
        auto r = validate(src, options);
        REQUIRE(r.ok());
        CHECK_FALSE(r->valid());
    }
}

TEST_CASE("validate: max_findings caps the report and says so") {
    test::BuiltScene s = built_scene();
    for (int i = 0; i < 20; ++i) s.spec.front.push_back(test::record_bytes(*s.spec.windows));
    ValidateOptions options;
    options.max_findings = 5;
    const ValidationReport rep = validate_bytes(test::build(s.spec).bytes, options);
    CHECK(rep.findings.size() == 5);
    CHECK(rep.findings_capped);
}

TEST_CASE("validate: progress is reported up to the file size") {
    const ByteVec bytes = Scene().write(single_thread());
    ValidateOptions options;
    std::uint64_t last = 0, total = 0;
    int calls = 0;
    options.progress = [&](std::uint64_t done, std::uint64_t size) {
        CHECK(done >= last);
        last = done;
        total = size;
        ++calls;
    };
    validate_bytes(bytes, options);
    CHECK(calls >= 2);
    CHECK(last == bytes.size());
    CHECK(total == bytes.size());
}

TEST_CASE("validate: a wrong magic is one finding and nothing else") {
    ByteVec bytes = Scene().write(single_thread());
    bytes[1] = 'X';
    const ValidationReport rep = validate_bytes(bytes);
    REQUIRE(rep.findings.size() == 1);
    CHECK(rep.findings[0].rule == "magic-mismatch");
    CHECK(rep.findings[0].section == "§4.1");
    CHECK(rep.findings[0].offset == 0);
}

TEST_CASE("validate: the cross-record rules are reported through check_scene_references") {
    test::BuiltScene s = built_scene();
    const CoordinateFrame frame{"", Handedness::right, Axis::pos_y, Axis::neg_z, LengthUnit::metre, 1.0};
    s.spec.front.push_back(test::record_bytes(frame));
    s.spec.front.push_back(test::record_bytes(frame));  // M039
    GeodeticAnchor anchor;
    anchor.frame_name = "nowhere";  // M063
    s.spec.front.push_back(test::record_bytes(anchor));
    const test::BuiltFile file = test::build(s.spec);
    const ValidationReport rep = validate_bytes(file.bytes);
    INFO(describe(rep));
    const Finding& dup = only(rep, "duplicate-coordinate-frame");
    CHECK(dup.section == "§5.15.2");
    CHECK(dup.offset == file.records[4].offset);
    CHECK(only(rep, "missing-anchor-frame").section == "§5.15.5");
}

TEST_CASE("validate: a keyframe-delta composition fault (a death of an unknown id) is reported") {
    // A keyframe over [0, 1) with ids 1..4, then a delta over [1, 2) whose deaths name id 999.
    test::FileSpec spec;
    spec.header = test::default_header(4, 0, 2.0);
    spec.header.temporal_model = "keyframe-delta";
    spec.windows = WindowTable{{{0.0, 2.0}}};
    test::Bins kf = test::random_bins(4, 21, {0});
    kf.present[attr::gaussian_id] = true;
    kf.cols[attr::gaussian_id] = {1, 2, 3, 4};
    spec.chunks.push_back(test::chunk_from_bins(kf, 0, 1));
    spec.statistics = false;
    const std::uint64_t keyframe_at = test::build(spec).records[3].offset;

    const std::vector<std::int32_t> dead = {999};
    ByteWriter groups;
    write_delta_groups(groups, {}, {}, test::stream_of(attr::gaussian_id, 1, dead));
    DeltaChunk d;
    d.t0 = 1;
    d.t1 = 2;
    d.delta_mode = kDeltaModeKeyframe;
    d.reference_offset = d.keyframe_offset = keyframe_at;
    d.depth = 1;
    d.death_count = 1;
    d.uncompressed_size = groups.size();
    d.records = groups.buffer();
    const ByteVec delta_bytes = test::record_bytes(d);
    spec.after_chunks.push_back(delta_bytes);
    spec.edit_index = [&](std::vector<ChunkIndex>& index) {
        index[0].keyframe = KeyframeIndexFields{kChunkKindKeyframe, 0, 0, keyframe_at, 0, 4};
        ChunkIndex e;
        e.t0 = 1;
        e.t1 = 2;
        e.chunk_offset = index[0].chunk_offset + index[0].chunk_length;
        e.chunk_length = delta_bytes.size();
        e.gaussian_count = 1;
        e.keyframe = KeyframeIndexFields{kChunkKindDelta, kDeltaModeKeyframe, keyframe_at,
                                         keyframe_at, 1, 3};
        index.push_back(e);
    };
    const test::BuiltFile file = test::build(spec);
    REQUIRE(file.records[3].offset == keyframe_at);
    const ValidationReport rep = validate_bytes(file.bytes);
    INFO(describe(rep));
    const Finding& f = only(rep, "unknown-gaussian-id");
    CHECK(f.severity == Severity::error);
    CHECK(f.section == "§11.3");
    CHECK(rep.errors() == 1);
}

TEST_CASE("validate: the tail (§4, §5.2): bytes after the magic, a bad Footer length, no Header") {
    const ByteVec good = Scene().write(single_thread());
    const auto recs = records_of(good);
    SECTION("bytes after the trailing magic") {
        ByteVec bytes = good;
        bytes.push_back(0);
        const ValidationReport rep = validate_bytes(bytes);
        // The readers keep the content and count the byte (SceneInfo::trailing_bytes); the
        // validator reports it under its own identifier.
        CHECK(only(rep, "bytes-after-magic").offset == good.size());
        CHECK(rep.errors() == 1);
    }
    SECTION("a Footer whose content_length is not 20") {
        ByteVec bytes(good.begin(), good.end() - kMagicSize);
        bytes = test::with_trailing(ByteVec(bytes.begin() + static_cast<std::ptrdiff_t>(recs.back().offset), bytes.end()), {0, 0});
        ByteVec file(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(recs.back().offset));
        file.insert(file.end(), bytes.begin(), bytes.end());
        file.insert(file.end(), kMagic.begin(), kMagic.end());
        const ValidationReport rep = validate_bytes(file);
        const Finding& f = only(rep, "bad-footer");
        CHECK(f.value == "22");
        CHECK(f.offset == recs.back().offset);
        CHECK(f.section == "§5.2");
    }
    SECTION("a file of front matter with no Header") {
        test::BuiltScene s = built_scene();
        s.spec.write_header = false;
        s.spec.chunks.clear();
        const ValidationReport rep = validate_bytes(test::build(s.spec).bytes);
        INFO(describe(rep));
        CHECK(with_rule(rep, "missing-header").size() == 1);
        CHECK(with_rule(rep, "header-not-first").size() == 1);
    }
}

namespace {

// `bytes` with the Quantization record's f64 parameter `k` (0..2 pos_origin, 3 step_pos,
// 4 step_scale_log, ... 10 step_sigma_log) set to `v`: the damage a bit flip in an exponent does.
ByteVec with_quantization_param(ByteVec bytes, std::size_t k, double v) {
    const Rec q = first(records_of(bytes), op::quantization);  // a copy: the list is a temporary
    std::uint32_t scheme = 0;
    std::memcpy(&scheme, bytes.data() + q.content(), 4);
    std::memcpy(bytes.data() + q.content() + 4 + scheme + 8 * k, &v, 8);
    return bytes;
}

// A keyframe-delta file through write_keyframe_delta: the Scene's gaussians over two steps.
ByteVec keyframe_delta_scene() {
    const Scene s;
    std::vector<std::uint32_t> ids(s.n);
    for (std::size_t i = 0; i < s.n; ++i) ids[i] = static_cast<std::uint32_t>(i + 1);
    std::vector<double> lo(s.n, 0.0), hi(s.n, 2.0);
    std::vector<float> moved = s.position;
    for (float& p : moved) p += 0.01f;
    std::vector<KeyframeStep> steps(2);
    for (int k = 0; k < 2; ++k) {
        GaussianBatch& b = steps[k].gaussians;
        b.count = s.n;
        b.position = k == 0 ? std::span<const float>(s.position) : std::span<const float>(moved);
        b.scale = s.scale;
        b.rotation = s.rotation;
        b.color = s.color;
        b.motion = s.motion;
        b.mu_t = s.mu_t;
        b.sigma_t = s.sigma_t;
        b.win_lo = lo;
        b.win_hi = hi;
        steps[k].t0 = k;
        steps[k].ids = ids;
    }
    KeyframeWriterOptions o;
    o.base = single_thread();
    auto bytes = write_keyframe_delta(steps, s.header, o);
    if (!bytes.ok()) FAIL(bytes.error().describe());
    return std::move(bytes).value();
}

}  // namespace

TEST_CASE("non-finite decoded values: a finite but huge quantization step or origin that decodes "
          "a gaussian attribute to a non-finite value is a warning naming record, field and value") {
    const ByteVec good = Scene().write(single_thread());
    CHECK(with_rule(validate_bytes(good), "non-finite-value").empty());
    struct Case {
        std::size_t param;
        double value;
        const char* field;
    };
    for (const Case& c : {Case{3, 1e300, "Chunk.position"}, Case{0, 1e300, "Chunk.position[0]"},
                          Case{4, -1e10, "Chunk.scale"}, Case{6, 1e300, "Chunk.color"}}) {
        INFO("parameter " << c.param << " = " << c.value);
        const ByteVec bytes = with_quantization_param(good, c.param, c.value);
        // The readers decode the file as written (no refusal: the parameters are finite).
        CHECK(test::streaming_refusal(bytes).empty());
        CHECK(test::indexed_refusal(bytes).empty());
        const ValidationReport rep = validate_bytes(bytes);
        INFO(describe(rep));
        if (std::string(c.field) == "Chunk.color") {
            // Colour is clamped to [0, 1] when decoded: a huge step gives 1, never inf.
            CHECK(with_rule(rep, "non-finite-value").empty());
            continue;
        }
        const auto found = with_rule(rep, "non-finite-value");
        REQUIRE(!found.empty());
        const Finding& f = *found.front();
        CHECK(f.severity == Severity::warning);
        CHECK(f.field.rfind(c.field, 0) == 0);
        CHECK((f.value == "inf" || f.value == "-inf"));
        CHECK(f.section == "§5.5");
        CHECK(first(records_of(bytes), op::chunk).offset == f.offset);
        CHECK(f.message.find("Chunk at byte " + std::to_string(f.offset)) != std::string::npos);
        CHECK(rep.errors() == 0);
    }
}

TEST_CASE("non-finite decoded values: a window entry beyond f32 and a non-finite Header aabb are "
          "warnings naming the field, and a non-finite window entry stays an error") {
    SECTION("a window bound beyond f32") {
        test::BuiltScene s = built_scene();
        s.spec.windows->windows[1].hi = 1e300;
        const ValidationReport rep = validate_bytes(test::build(s.spec).bytes);
        INFO(describe(rep));
        const Finding& f = only(rep, "non-finite-value");
        CHECK(f.field == "Window Table.windows[1].hi");
        CHECK(f.value == "1e+300");
        CHECK(f.severity == Severity::warning);
        CHECK(f.section == "§5.4");
    }
    SECTION("the Header aabb") {
        test::BuiltScene s = built_scene();
        s.spec.header.aabb[4] = std::numeric_limits<double>::quiet_NaN();
        const test::BuiltFile file = test::build(s.spec);
        const ValidationReport rep = validate_bytes(file.bytes);
        INFO(describe(rep));
        const Finding& f = only(rep, "non-finite-value");
        CHECK(f.field == "Header.aabb[4]");
        CHECK(f.value == "nan");
        CHECK(f.severity == Severity::warning);
        CHECK(f.section == "§5.1");
        double at = 0;
        std::memcpy(&at, file.bytes.data() + f.offset, 8);
        CHECK(std::isnan(at));  // the offset is the field's own
    }
}

TEST_CASE("non-finite decoded values in a keyframe-delta file: the first composed state that has "
          "one is named, once per attribute") {
    const ByteVec good = keyframe_delta_scene();
    CHECK(with_rule(validate_bytes(good), "non-finite-value").empty());
    const ByteVec bytes = with_quantization_param(good, 3, 1e300);
    const ValidationReport rep = validate_bytes(bytes);
    INFO(describe(rep));
    const Finding& f = only(rep, "non-finite-value");
    CHECK(f.severity == Severity::warning);
    CHECK(f.field.rfind("Chunk.position", 0) == 0);
    CHECK(f.offset == first(records_of(bytes), op::chunk).offset);
    CHECK(f.message.find("composed state") != std::string::npos);
}

TEST_CASE("differential, validator order: a Rig Trajectory that only follows the first chunk is "
          "missing when the chunks begin, for the readers and the validator alike (§5.15.3)") {
    test::BuiltScene s = built_scene();
    const auto [sensor, rig] = sensor_on_a_rig();
    s.spec.front.push_back(test::record_bytes(sensor));
    SECTION("the rig before the chunks: valid") {
        s.spec.front.push_back(test::record_bytes(rig));
        const ByteVec bytes = test::build(s.spec).bytes;
        CHECK(test::streaming_refusal(bytes).empty());
        CHECK(with_rule(validate_bytes(bytes), "missing-rig-trajectory").empty());
    }
    SECTION("the rig after the chunks: refused, and the validator says so") {
        s.spec.after_chunks.push_back(test::record_bytes(rig));
        const ByteVec bytes = test::build(s.spec).bytes;
        CHECK(test::streaming_refusal(bytes) == "missing-rig-trajectory");
        CHECK(test::indexed_refusal(bytes) == "missing-rig-trajectory");
        const ValidationReport rep = validate_bytes(bytes);
        INFO(describe(rep));
        const Finding& f = only(rep, "missing-rig-trajectory");
        CHECK(f.severity == Severity::error);
        CHECK(f.value == "rig");
    }
}

TEST_CASE("differential, validator order: a provenance record after the chunks whose reference "
          "only a later record mends is refused where it arrives, by the readers and the "
          "validator alike (§5.15.3, §5.15.5)") {
    // SceneBuilder checks the rules that span records when a provenance record arrives after the
    // first chunk, over the records so far, in the readers' mode and the validator's: checked
    // only over the whole file, the validator would find the reference whole and say nothing.
    test::BuiltScene s = built_scene();
    // The streaming reader refuses the file by `rule`, and the validator reports it once, with
    // `value`, at the first record of kind `opcode` (the one the reader refuses at).
    const auto refused_where_it_arrives = [&](std::string_view rule, std::string_view value,
                                              std::uint8_t opcode) {
        const ByteVec bytes = test::build(s.spec).bytes;
        CHECK(test::streaming_refusal(bytes) == rule);
        const ValidationReport rep = validate_bytes(bytes);
        INFO(describe(rep));
        const Finding& f = only(rep, rule);
        CHECK(f.value == value);
        CHECK(f.offset == first(records_of(bytes), opcode).offset);
    };
    GeodeticAnchor anchor;
    anchor.frame_name = "site";
    CoordinateFrame frame;
    frame.name = "site";
    SECTION("a sensor posed on a rig that follows it") {
        const auto [sensor, rig] = sensor_on_a_rig();
        s.spec.after_chunks = {test::record_bytes(sensor), test::record_bytes(rig)};
        refused_where_it_arrives("missing-rig-trajectory", "rig", op::sensor_calibration);
    }
    SECTION("an anchor on a frame that follows it") {
        s.spec.after_chunks = {test::record_bytes(anchor), test::record_bytes(frame)};
        refused_where_it_arrives("missing-anchor-frame", "site", op::geodetic_anchor);
    }
    SECTION("the same records in the mended order: valid for both") {
        s.spec.after_chunks = {test::record_bytes(frame), test::record_bytes(anchor)};
        const ByteVec bytes = test::build(s.spec).bytes;
        CHECK(test::streaming_refusal(bytes).empty());
        CHECK(with_rule(validate_bytes(bytes), "missing-anchor-frame").empty());
    }
}

TEST_CASE("§5.7 by_key_in_chunk: a band repeated after one chunk is refused by the decoder, the "
          "index entry's fetch and the validator through the registry's one rule, naming the "
          "key field, and a reader that reads fewer bands does not read the repeat") {
    test::BuiltScene s = test::default_scene(2, 16, 2);
    REQUIRE(s.spec.chunks[0].bands.size() == 2);
    s.spec.chunks[0].bands.push_back(s.spec.chunks[0].bands[1]);  // bands 1, 2, 2
    const auto band_offsets = [](const test::BuiltFile& file) {
        std::vector<std::uint64_t> at;
        for (const test::BuiltRecord& r : file.records)
            if (r.opcode == op::sh_band && r.chunk == 0) at.push_back(r.offset);
        return at;
    };
    SECTION("indexed: the entry names band 2 twice; the validator meets the second record") {
        const test::BuiltFile file = test::build(s.spec);
        const std::vector<std::uint64_t> band_at = band_offsets(file);
        REQUIRE(band_at.size() == 3);
        const test::IndexedOutcome indexed = test::indexed_read(file.bytes);
        REQUIRE(indexed.error);
        CHECK(indexed.error->refusal == "duplicate-sh-band");
        CHECK(indexed.error->field == "SH Band Stream.band");
        CHECK(indexed.error->value == "2");
        CHECK(indexed.error->offset == band_at[2]);
        const ValidationReport rep = validate_bytes(file.bytes);
        INFO(describe(rep));
        const Finding& f = only(rep, "duplicate-sh-band");
        CHECK(f.field == "SH Band Stream.band");
        CHECK(f.value == "2");
        CHECK(f.offset == band_at[2]);
        CHECK(f.section == "§5.7");
    }
    SECTION("no index: the decoder meets band 2 twice, and only when it decodes band 2") {
        s.spec.index = false;
        s.spec.summary_offset = false;
        const test::BuiltFile file = test::build(s.spec);
        REQUIRE(band_offsets(file).size() == 3);
        auto streamed = test::stream_read(file.bytes);
        REQUIRE_FALSE(streamed.ok());
        CHECK(streamed.error().refusal == "duplicate-sh-band");
        CHECK(streamed.error().field == "SH Band Stream.band");
        CHECK(streamed.error().value == "2");
        CHECK(test::indexed_refusal(file.bytes) == "duplicate-sh-band");  // its scan decodes
        CHECK(only(validate_bytes(file.bytes), "duplicate-sh-band").value == "2");
        // Read at SH degree 1, neither reader decodes band 2, so neither meets its repeat.
        ReaderOptions degree_one;
        degree_one.decode.max_sh_degree = 1;
        CHECK(test::streaming_refusal(file.bytes, degree_one).empty());
        CHECK(test::indexed_refusal(file.bytes, degree_one).empty());
    }
}

TEST_CASE("M033: a walk cut before the Footer has its intact tail's summary read by the indexed "
          "readers' own walk of it, each rule that walk refuses by a finding") {
    test::BuiltScene scene = test::default_scene(2, 16, 0);
    constexpr std::uint64_t far = std::uint64_t{1} << 30;
    scene.spec.edit_index = [&](std::vector<ChunkIndex>& index) { index[1].chunk_offset = far; };
    test::BuiltFile file = test::build(scene.spec);
    const auto is = [](std::uint8_t opcode) {
        return [opcode](const test::BuiltRecord& r) { return r.opcode == opcode; };
    };
    const auto chunk = std::find_if(file.records.begin(), file.records.end(), is(op::chunk));
    const auto entry = std::find_if(file.records.begin(), file.records.end(), is(op::chunk_index));
    REQUIRE(chunk != file.records.end());
    REQUIRE(entry + 1 < file.records.end());
    // The first chunk's content_length runs past the end of the data: the walk is cut there,
    // never reaching the summary, while the tail (Footer, summary, CRC) is intact.
    test::put_u64(file.bytes, chunk->offset + 1, file.bytes.size());
    const ValidationReport rep = validate_bytes(file.bytes);
    INFO(describe(rep));
    CHECK(rep.truncated);
    // read_summary_by_tail's refusal of the second entry, as an indexed reader's summary walk
    // refuses it (before it falls back to the scan, which meets the cut).
    const Finding& out = only(rep, "index-out-of-range");
    CHECK(out.severity == Severity::error);
    CHECK(out.offset == (entry + 1)->offset);
    CHECK(out.value == std::to_string(far));
}
