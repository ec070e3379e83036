// Tests for fourdgs/records/registry.hpp: the record registry walked against the parsers (each
// row's walk parses what the writer wrote, and visits exactly the struct's string members under
// the paths the row names), the refusal list (a keyed row's duplicate refusal names its key), the
// opcode helpers derived from it, and — where they sit beside the checkout — the specification's
// headings and the shared registry's opcode table.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fourdgs/records.hpp"
#include "support/file_builder.hpp"

using namespace fourdgs;

namespace {

using Buf = std::vector<std::uint8_t>;

// One record of each kind with a parser, every string a distinct marker where the record lets it
// be one (Camera and Audio Source interpolation are keywords), and what the walk must visit.
struct Sample {
    Buf bytes;
    std::multimap<std::string, std::string> strings;  // path with indices -> value
    std::uint32_t id = 0;  // the id the record opens with, for a row named by an id
};

std::map<std::uint8_t, Sample> samples() {
    std::map<std::uint8_t, Sample> s;
    Header h;
    h.profile = "m-profile";
    h.library = "m-library";
    h.temporal_model = "m-model";
    h.duration_sec = 1;
    h.attributes = {{"m-ak0", "m-av0"}, {"m-ak1", "m-av1"}};
    s[op::header] = {test::record_bytes(h),
                     {{"profile", "m-profile"}, {"library", "m-library"},
                      {"temporal_model", "m-model"}, {"attributes[0].key", "m-ak0"},
                      {"attributes[0].value", "m-av0"}, {"attributes[1].key", "m-ak1"},
                      {"attributes[1].value", "m-av1"}}};
    s[op::footer] = {test::record_bytes(Footer{}), {}};
    Quantization q;
    q.scheme = "m-scheme";
    q.bounds = {{"pos", "1"}};
    s[op::quantization] = {test::record_bytes(q),
                           {{"scheme", "m-scheme"}, {"bounds[0].key", "pos"},
                            {"bounds[0].value", "1"}}};
    s[op::window_table] = {test::record_bytes(WindowTable{{{0, 1}}}), {}};
    ChunkRecord c;
    c.t1 = 1;
    c.compression = "m-compression";
    s[op::chunk] = {test::record_bytes(c), {{"compression", "m-compression"}}};
    static const std::uint8_t kStreamHeader[17] = {};  // an empty stream's header (§5.6)
    ShBandRecord band;
    band.band = 1;
    band.stream = Bytes(kStreamHeader);
    s[op::sh_band] = {test::record_bytes(band), {}};
    s[op::chunk_index] = {test::record_bytes(ChunkIndex{}), {}};
    AudioLegacy legacy;
    legacy.codec = "m-codec";
    s[op::audio_legacy] = {test::record_bytes(legacy), {{"codec", "m-codec"}}};
    Camera cam;
    cam.fov_y_deg = 50;
    cam.interpolation = "spline";
    s[op::camera] = {test::record_bytes(cam), {{"interpolation", "spline"}}};
    s[op::metadata] = {test::record_bytes(Metadata{"m-name", {{"m-k", "m-v"}}}),
                       {{"name", "m-name"}, {"entries[0].key", "m-k"},
                        {"entries[0].value", "m-v"}}};
    s[op::statistics] = {test::record_bytes(Statistics{}), {}};
    s[op::attachment] = {test::record_bytes(Attachment{"m-name", "m-type", {}, 0}),
                         {{"name", "m-name"}, {"media_type", "m-type"}}};
    s[op::summary_offset] = {test::record_bytes(SummaryOffset{op::chunk_index, 0, 0}), {}};
    DeltaChunk d;
    d.t1 = 1;
    d.compression = "m-compression";
    s[op::delta_chunk] = {test::record_bytes(d), {{"compression", "m-compression"}}};
    AudioSource a;
    a.source_id = 0x5150;
    a.name = "m-name";
    a.codec = "m-codec";
    a.channel_layout = "m-layout";
    a.duration_sec = 1;
    a.gain = 1;
    a.rotation = {0, 0, 0, 1};
    a.interpolation = "linear";
    s[op::audio_source] = {test::record_bytes(a),
                           {{"name", "m-name"}, {"codec", "m-codec"},
                            {"channel_layout", "m-layout"}, {"interpolation", "linear"}},
                           0x5150};
    s[op::audio_data] = {test::record_bytes(AudioData{0xDA7A, {}, 0}), {}, 0xDA7A};
    CoordinateFrame f;
    f.name = "m-frame";
    f.up_axis = Axis::pos_y;
    f.forward_axis = Axis::neg_z;
    f.metres_per_unit = 1;
    s[op::coordinate_frame] = {test::record_bytes(f), {{"name", "m-frame"}}};
    SensorCalibration sensor;
    sensor.name = "m-sensor";
    sensor.modality = "m-modality";
    sensor.rotation = {0, 0, 0, 1};
    sensor.pose_reference = PoseReference::rig;
    sensor.rig_name = "m-rig";
    s[op::sensor_calibration] = {test::record_bytes(sensor),
                                 {{"name", "m-sensor"}, {"modality", "m-modality"},
                                  {"rig_name", "m-rig"}}};
    RigTrajectory rig;
    rig.name = "m-rig";
    s[op::rig_trajectory] = {test::record_bytes(rig), {{"name", "m-rig"}}};
    GeodeticAnchor g;
    g.frame_name = "m-frame";
    s[op::geodetic_anchor] = {test::record_bytes(g), {{"frame_name", "m-frame"}}};
    ObjectTable t;
    t.entries.resize(2);
    t.entries[0].object_id = 1;
    t.entries[0].label = "m-label0";
    t.entries[1].object_id = 2;
    t.entries[1].label = "m-label1";
    s[op::object_table] = {test::record_bytes(t),
                           {{"entries[0].label", "m-label0"}, {"entries[1].label", "m-label1"}}};
    ObjectTrack track;
    track.object_id = 0x7AC;
    track.samples = {{0.0, {0, 0, 0, 1}, {0, 0, 0}}};
    s[op::object_track] = {test::record_bytes(track), {}, 0x7AC};
    return s;
}

}  // namespace

TEST_CASE("registry.walk_visits_every_string_member_of_the_parsed_record", "[registry]") {
    const auto all = samples();
    for (const RecordKind& k : kRecordKinds) {
        INFO(k.name);
        if (!k.walk) {
            CHECK(k.strings.empty());
            CHECK(all.count(k.opcode) == 0);
            continue;
        }
        REQUIRE(all.count(k.opcode) == 1);
        const Sample& sample = all.at(k.opcode);
        auto r = parse_record(sample.bytes, 100);
        REQUIRE(r.ok());
        std::multimap<std::string, std::string> seen;
        Status parsed = k.walk(*r, [&](const std::string& field, std::string_view value) {
            seen.emplace(field, std::string(value));
        });
        INFO((parsed.ok() ? std::string() : parsed.error().describe()));
        REQUIRE(parsed.ok());
        CHECK(seen == sample.strings);
        // The row names each path the walk visited, and the walk visits each path the row names.
        std::set<std::string> named(k.strings.begin(), k.strings.end()), visited;
        for (const auto& [field, value] : seen) {
            std::string path = field;
            if (auto open = path.find('['); open != std::string::npos)
                path.erase(open + 1, path.find(']') - open - 1);
            visited.insert(path);
        }
        CHECK(visited == named);
        // A record of another kind is refused by the row's parser, not walked.
        RecordView other = *r;
        other.opcode = static_cast<std::uint8_t>(k.opcode == op::header ? op::footer : op::header);
        CHECK_FALSE(k.walk(other, [](const std::string&, std::string_view) { FAIL(); }).ok());
    }
}

// What a merge keys each record by: the name or id the content opens with.
TEST_CASE("registry.named_by_is_the_field_the_record_opens_with", "[registry]") {
    const auto all = samples();
    for (const RecordKind& k : kRecordKinds) {
        INFO(k.name);
        if (k.keying == RecordKeying::by_key) CHECK(k.named_by == k.key);
        if (k.named_by.empty()) continue;
        REQUIRE(all.count(k.opcode) == 1);
        const Sample& sample = all.at(k.opcode);
        auto r = parse_record(sample.bytes, 100);
        REQUIRE(r.ok());
        REQUIRE(r->content.size() >= 4);
        const std::uint32_t lead = read_le32(r->content.data());
        if (k.named_by_string()) {
            REQUIRE(sample.strings.count(std::string(k.named_by)) == 1);
            const std::string& name = sample.strings.find(std::string(k.named_by))->second;
            CHECK(lead == name.size());
            CHECK(std::string(r->content.begin() + 4, r->content.begin() + 4 + lead) == name);
        } else {
            CHECK(sample.id != 0);
            CHECK(lead == sample.id);
        }
    }
}

TEST_CASE("registry.rows_in_opcode_order_with_unique_names", "[registry]") {
    std::set<std::string_view> names;
    for (std::size_t i = 0; i < kRecordKinds.size(); ++i) {
        const RecordKind& k = kRecordKinds[i];
        if (i) CHECK(kRecordKinds[i - 1].opcode < k.opcode);
        CHECK(names.insert(k.name).second);
        CHECK(find_record_kind(k.opcode) == &k);
        CHECK(opcode_name(k.opcode) == k.name);
        CHECK(find_record_kind_of_field(std::string(k.name) + ".x") == &k);
    }
    CHECK(find_record_kind_of_field("Chunk Index.entries") == find_record_kind(op::chunk_index));
    CHECK(find_record_kind_of_field("Chunks") == nullptr);
}

// M008: every opcode the registry does not define is one a reader skips.
TEST_CASE("M008.undefined_opcodes_are_the_ones_the_registry_leaves_out", "[registry]") {
    for (unsigned op = 0; op < 256; ++op) {
        const auto b = static_cast<std::uint8_t>(op);
        const RecordKind* k = find_record_kind(b);
        const bool in_table = (op >= 0x01 && op <= 0x12) || (op >= 0x20 && op <= 0x25);
        CHECK((k != nullptr) == in_table);
        CHECK(is_defined_opcode(b) == (in_table && op != 0x0E));
        CHECK(is_summary_opcode(b) == (op == 0x08 || op == 0x0C || op == 0x0F));
        if (!k) {
            char hex[5];
            std::snprintf(hex, sizeof hex, "0x%02X", op);
            CHECK(opcode_name(b) == (op >= 0x80 ? "private " : "unknown ") + std::string(hex));
        }
    }
}

TEST_CASE("registry.a_keyed_row_names_the_refusal_for_its_duplicate", "[registry]") {
    for (const RecordKind& k : kRecordKinds) {
        INFO(k.name);
        const bool keyed = k.keying == RecordKeying::by_key ||
                           k.keying == RecordKeying::by_key_in_chunk;
        CHECK(keyed == !k.key.empty());
        if (k.duplicate.empty()) {
            CHECK((k.keying == RecordKeying::unkeyed || k.role == RecordRole::footer));
            continue;
        }
        const RefusalInfo* info = find_refusal(k.duplicate);
        REQUIRE(info != nullptr);
        CHECK(info->field == (keyed ? std::string(k.name) + "." + std::string(k.key)
                                    : std::string(k.name)));
    }
}

// The writer parses back what its read_back column names (src/write/content_records.cpp): records
// of the front matter the scene's extras carry, each with a parser; Camera stays out (its parser
// accepts NaN, which never equals itself), and so do the payload records, passed through as given.
TEST_CASE("registry.read_back_rows_are_front_records_with_a_parser", "[registry]") {
    std::vector<std::uint8_t> read_back;
    for (const RecordKind& k : kRecordKinds) {
        INFO(k.name);
        if (!k.read_back) continue;
        CHECK(k.role == RecordRole::front);
        CHECK(k.walk != nullptr);
        read_back.push_back(k.opcode);
    }
    CHECK_FALSE(find_record_kind(op::camera)->read_back);
    CHECK_FALSE(find_record_kind(op::audio_data)->read_back);
    CHECK(read_back == std::vector<std::uint8_t>{op::audio_source, op::coordinate_frame,
                                                 op::sensor_calibration, op::rig_trajectory,
                                                 op::geodetic_anchor, op::object_table,
                                                 op::object_track});
}

TEST_CASE("registry.sections_and_names_match_the_spec_and_the_shared_registry", "[registry]") {
#if defined(FOURDGS_SHARED_SPEC) && defined(FOURDGS_SHARED_REGISTRY)
    auto slurp = [](const char* path) {
        std::ifstream in(path);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    const std::string spec = slurp(FOURDGS_SHARED_SPEC);
    const std::string registry = slurp(FOURDGS_SHARED_REGISTRY);
    REQUIRE(!spec.empty());
    REQUIRE(!registry.empty());
    for (const RecordKind& k : kRecordKinds) {
        INFO(k.name);
        char hex[5];
        std::snprintf(hex, sizeof hex, "0x%02X", k.opcode);
        const std::string number(k.section.substr(std::string_view("§").size()));
        // "5.15.5 Geodetic Anchor — opcode `0x23`"; 0x0E is described inside §5.13.
        if (k.defined())
            CHECK(spec.find("\n" + number + " " + std::string(k.name) + " — ") !=
                  std::string::npos);
        else
            CHECK(spec.find("\n" + number + " ") != std::string::npos);
        CHECK(spec.find(std::string(hex)) != std::string::npos);
        const std::string cell = "| " + std::string(hex) + " | " + std::string(k.name);
        CHECK((registry.find(cell + " |") != std::string::npos ||
               registry.find(cell + " (") != std::string::npos));
    }
#else
    WARN("shared/spec/4dgs-format.txt or shared/registry.md is not beside the checkout");
#endif
}
