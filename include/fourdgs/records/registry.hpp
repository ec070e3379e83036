// fourdgs/records/registry.hpp — the record registry: one row per record kind the specification
// names (registry "Record opcodes", §4.3), in opcode order, saying what the rest of the library
// would otherwise spell in a place of its own:
//
//   opcode, name     "Geodetic Anchor", from record_name (records/names.hpp); opcode_name()
//                    (wire.hpp) is this column
//   section          the spec section that defines it; the validator's field -> § map
//   role             where it sits in a file and what a reader does with it: is_defined_opcode,
//                    is_summary_opcode (wire.hpp) and is_payload_opcode (below: the records the
//                    indexed reader frames unread and the SceneBuilder takes unread)
//   keying           how two records of the kind are told apart, as the SceneBuilder and
//                    check_scene_references enforce it, and the refusal for two with one key
//   named_by         the field a record's content opens with that names it among its kind (a
//                    string, or a u32 id): the key a merge gives each record it carries over
//   strings          every string field of the parsed struct, as a field path ("profile",
//                    "attributes[].key"; "[]" is where the element's index goes), and a walk that
//                    parses the record and visits each of them — the validator's §2 UTF-8 check
//   read_back        whether the writer parses a record of the kind back from the bytes it wrote
//                    and refuses one that reads back other than its input (content_records.cpp)
//
// tests/test_record_registry.cpp walks the table against the parsers, the refusal list and (where
// it sits beside the checkout) the specification's headings.
//
// Part of records.hpp (the umbrella states the conventions every parser and writer follows).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "fourdgs/export.hpp"
#include "fourdgs/records/audio.hpp"
#include "fourdgs/records/chunk.hpp"
#include "fourdgs/records/content.hpp"
#include "fourdgs/records/core.hpp"
#include "fourdgs/records/names.hpp"
#include "fourdgs/records/objects.hpp"
#include "fourdgs/records/provenance.hpp"
#include "fourdgs/records/summary.hpp"
#include "fourdgs/refusals.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// Where a record sits in a file and what a reader does with it.
enum class RecordRole : std::uint8_t {
    front,      // ahead of the chunks, read whole (Header ... Object Track, Audio Source)
    payload,    // ahead of the chunks, fields then a payload that may be framed unread
    gaussians,  // the gaussian data: chunks and the streams inside them
    summary,    // the contiguous summary run (§4.5): Chunk Index, Statistics, Summary Offset
    footer,     // the last record (§5.2)
    reserved,   // a number the specification keeps without a body; skipped like an unknown one
};

// How two records of one kind are told apart.
enum class RecordKeying : std::uint8_t {
    unkeyed,       // any number, none refused for repeating another
    once,          // exactly one per file
    at_most_once,  // none or one per file
    by_key,        // any number, `key` unique in the file
    by_key_in_chunk,  // any number, `key` unique among one chunk's
};

// visit(field path with indices filled in, value) for each string of a parsed record.
using StringVisitor = std::function<void(const std::string& field, std::string_view value)>;
// Parses `r` (which carries the row's opcode) with the kind's parser; when it parses, visits
// every string field in the order `strings` names them. Returns the parser's status.
using StringWalk = Status (*)(const RecordView& r, const StringVisitor& visit);

struct RecordKind {
    std::uint8_t opcode = 0;
    std::string_view name;     // as the spec spells it: opcode_name, and a field's "<name>." prefix
    std::string_view section;  // "§5.15.5"
    RecordRole role = RecordRole::front;
    RecordKeying keying = RecordKeying::unkeyed;
    std::string_view key;        // the keying field ("frame_name") for by_key / by_key_in_chunk
    std::string_view duplicate;  // the refusal for a second record of one key ("" for none)
    // The content's first field when it names the record among its kind ("name", "source_id"),
    // "" for a kind whose records carry no name. A string when `strings` lists it, else a u32.
    std::string_view named_by;
    std::span<const std::string_view> strings;  // the string field paths, in visiting order
    StringWalk walk = nullptr;   // nullptr for a kind with no parser (0x06, 0x0E)
    // The writer's backstop (unrepresentable-record): a record of the kind the extras carry is
    // parsed back after it is written and must equal its input. False for the kinds the writer
    // does not write that way, and for Camera, whose parser accepts NaN (the record is advisory),
    // which never equals itself.
    bool read_back = false;

    constexpr bool defined() const noexcept { return role != RecordRole::reserved; }
    // Whether `named_by` is a string field (else a u32 id; false when there is none).
    constexpr bool named_by_string() const noexcept {
        for (std::string_view path : strings)
            if (path == named_by) return true;
        return false;
    }
};

namespace detail::registry {

// A string field of each element of a vector member ("entries[].label").
template <auto Vector, auto String>
struct Each {};

template <class T>
constexpr std::size_t paths_of(std::string T::*) { return 1; }
template <class T>
constexpr std::size_t paths_of(StringMap T::*) { return 2; }  // "[].key", "[].value"
template <auto V, auto S>
constexpr std::size_t paths_of(Each<V, S>) { return 1; }

// "attributes[].key" with element i: "attributes[i].key".
inline std::string element(std::string_view path, std::size_t i) {
    const std::size_t at = path.find("[]");
    std::string out(path.substr(0, at + 1));
    out += std::to_string(i);
    out += path.substr(at + 1);
    return out;
}

template <class T>
void visit_member(const T& t, std::string T::* m, const std::string_view*& path,
                  const StringVisitor& visit) {
    visit(std::string(*path++), t.*m);
}

template <class T>
void visit_member(const T& t, StringMap T::* m, const std::string_view*& path,
                  const StringVisitor& visit) {
    const StringMap& map = t.*m;
    for (std::size_t i = 0; i < map.size(); ++i) {
        visit(element(path[0], i), map[i].first);
        visit(element(path[1], i), map[i].second);
    }
    path += 2;
}

template <class T, auto V, auto S>
void visit_member(const T& t, Each<V, S>, const std::string_view*& path,
                  const StringVisitor& visit) {
    const auto& elements = t.*V;
    for (std::size_t i = 0; i < elements.size(); ++i) visit(element(*path, i), elements[i].*S);
    ++path;
}

template <auto Parse, const auto& Paths, auto... Members>
Status walk(const RecordView& r, const StringVisitor& visit) {
    static_assert((std::size_t{0} + ... + paths_of(Members)) == std::size(Paths),
                  "one path per string member (two per StringMap)");
    auto parsed = Parse(r);
    if (!parsed.ok()) return std::move(parsed).error();
    const std::string_view* path = std::data(Paths);
    (visit_member(*parsed, Members, path, visit), ...);
    (void)path;  // a kind with no strings visits none
    return ok_status();
}

inline constexpr std::array<std::string_view, 0> kNone{};

}  // namespace detail::registry

// A kind's string fields: the paths, and the walk over the parsed struct's members that hold
// them (std::string, StringMap, or Each<vector, string-of-element>), in the same order.
template <auto Parse, const auto& Paths, auto... Members>
inline constexpr std::pair<std::span<const std::string_view>, StringWalk> string_fields{
    Paths, &detail::registry::walk<Parse, Paths, Members...>};

namespace detail::registry {

inline constexpr std::string_view kHeader[] = {"profile", "library", "temporal_model",
                                               "attributes[].key", "attributes[].value"};
inline constexpr std::string_view kQuantization[] = {"scheme", "bounds[].key", "bounds[].value"};
inline constexpr std::string_view kChunk[] = {"compression"};
inline constexpr std::string_view kAudio[] = {"codec"};
inline constexpr std::string_view kCamera[] = {"interpolation"};
inline constexpr std::string_view kMetadata[] = {"name", "entries[].key", "entries[].value"};
inline constexpr std::string_view kAttachment[] = {"name", "media_type"};
inline constexpr std::string_view kAudioSource[] = {"name", "codec", "channel_layout",
                                                    "interpolation"};
inline constexpr std::string_view kName[] = {"name"};
inline constexpr std::string_view kSensorCalibration[] = {"name", "modality", "rig_name"};
inline constexpr std::string_view kGeodeticAnchor[] = {"frame_name"};
inline constexpr std::string_view kObjectTable[] = {"entries[].label"};

// One row: the kind's facts (its name from records/names.hpp), then its string fields.
constexpr RecordKind row(std::uint8_t opcode, std::string_view section, RecordRole role,
                         RecordKeying keying, std::string_view key, std::string_view duplicate,
                         std::string_view named_by,
                         std::pair<std::span<const std::string_view>, StringWalk> strings = {},
                         bool read_back = false) {
    return {opcode,   record_name(opcode), section,        role,
            keying,   key,                 duplicate,      named_by,
            strings.first, strings.second, read_back};
}
inline constexpr bool kReadBack = true;  // the row's read_back

using enum RecordRole;
using enum RecordKeying;
using AS = AudioSource;
using SC = SensorCalibration;

inline constexpr RecordKind kTable[] = {
    row(op::header, "§5.1", front, once, "", refusal::kDuplicateHeader, "",
        string_fields<&parse_header, kHeader, &Header::profile, &Header::library,
                      &Header::temporal_model, &Header::attributes>),
    row(op::footer, "§5.2", footer, once, "", "", "", string_fields<&parse_footer, kNone>),
    row(op::quantization, "§5.3", front, once, "", refusal::kDuplicateQuantization, "",
        string_fields<&parse_quantization, kQuantization, &Quantization::scheme,
                      &Quantization::bounds>),
    row(op::window_table, "§5.4", front, once, "", refusal::kDuplicateWindowTable, "",
        string_fields<&parse_window_table, kNone>),
    row(op::chunk, "§5.5", gaussians, unkeyed, "", "", "",
        string_fields<&parse_chunk, kChunk, &ChunkRecord::compression>),
    // A structure inside a chunk, never a record (§5.5/§5.6); its number is not reused.
    row(op::attribute_stream, "§5.6", gaussians, by_key_in_chunk, "attribute_id",
        refusal::kDuplicateAttributeStream, ""),
    row(op::sh_band, "§5.7", gaussians, by_key_in_chunk, "band", refusal::kDuplicateShBand, "",
        string_fields<&parse_sh_band, kNone>),
    row(op::chunk_index, "§5.8", summary, unkeyed, "", "", "",
        string_fields<&parse_chunk_index, kNone>),
    row(op::audio_legacy, "§5.9", payload, unkeyed, "", "", "",
        string_fields<&parse_audio_legacy, kAudio, &AudioLegacy::codec>),
    row(op::camera, "§5.10", front, unkeyed, "", "", "",
        string_fields<&parse_camera, kCamera, &Camera::interpolation>),
    row(op::metadata, "§5.11", front, unkeyed, "", "", "name",
        string_fields<&parse_metadata, kMetadata, &Metadata::name, &Metadata::entries>),
    row(op::statistics, "§5.12", summary, unkeyed, "", "", "",
        string_fields<&parse_statistics, kNone>),
    row(op::attachment, "§5.13", payload, unkeyed, "", "", "name",
        string_fields<&parse_attachment, kAttachment, &Attachment::name, &Attachment::media_type>),
    // Reserved with no body (§5.13): never emitted, skipped like an unknown opcode.
    row(op::attachment_index, "§5.13", reserved, unkeyed, "", "", ""),
    row(op::summary_offset, "§5.14", summary, unkeyed, "", "", "",
        string_fields<&parse_summary_offset, kNone>),
    row(op::delta_chunk, "§5.18", gaussians, unkeyed, "", "", "",
        string_fields<&parse_delta_chunk, kChunk, &DeltaChunk::compression>),
    row(op::audio_source, "§5.16", front, by_key, "source_id", refusal::kDuplicateAudioSource,
        "source_id",
        string_fields<&parse_audio_source, kAudioSource, &AS::name, &AS::codec, &AS::channel_layout,
                      &AS::interpolation>,
        kReadBack),
    row(op::audio_data, "§5.17", payload, by_key, "source_id", refusal::kDuplicateAudioData,
        "source_id", string_fields<&parse_audio_data, kNone>),
    row(op::coordinate_frame, "§5.15.2", front, by_key, "name", refusal::kDuplicateCoordinateFrame,
        "name", string_fields<&parse_coordinate_frame, kName, &CoordinateFrame::name>, kReadBack),
    row(op::sensor_calibration, "§5.15.3", front, by_key, "name", refusal::kDuplicateSensorName,
        "name",
        string_fields<&parse_sensor_calibration, kSensorCalibration, &SC::name, &SC::modality,
                      &SC::rig_name>,
        kReadBack),
    row(op::rig_trajectory, "§5.15.4", front, unkeyed, "", "", "name",
        string_fields<&parse_rig_trajectory, kName, &RigTrajectory::name>, kReadBack),
    row(op::geodetic_anchor, "§5.15.5", front, by_key, "frame_name",
        refusal::kDuplicateGeodeticAnchor, "frame_name",
        string_fields<&parse_geodetic_anchor, kGeodeticAnchor, &GeodeticAnchor::frame_name>,
        kReadBack),
    row(op::object_table, "§5.15.6", front, at_most_once, "", refusal::kDuplicateObjectTable, "",
        string_fields<&parse_object_table, kObjectTable,
                      Each<&ObjectTable::entries, &ObjectTable::Entry::label>{}>,
        kReadBack),
    row(op::object_track, "§5.15.7", front, by_key, "object_id", refusal::kDuplicateObjectTrack,
        "object_id", string_fields<&parse_object_track, kNone>, kReadBack),
};

// opcode -> row + 1 (0: none), built once at compile time.
inline constexpr std::array<std::uint8_t, 256> kRowOf = [] {
    std::array<std::uint8_t, 256> at{};
    for (std::size_t i = 0; i < std::size(kTable); ++i)
        at[kTable[i].opcode] = static_cast<std::uint8_t>(i + 1);
    return at;
}();

}  // namespace detail::registry

// The registry, in opcode order.
inline constexpr std::span<const RecordKind> kRecordKinds{detail::registry::kTable};

// The row for `opcode`, or nullptr for an opcode the specification does not name (0x00,
// 0x13-0x1F, 0x26-0x2F, private 0x80-0xFF).
constexpr const RecordKind* find_record_kind(std::uint8_t opcode) noexcept {
    const std::uint8_t at = detail::registry::kRowOf[opcode];
    return at ? &kRecordKinds[at - 1] : nullptr;
}

// A record whose fields come before a payload that a reader may frame without reading it
// (Attachment, Audio Data, the legacy Audio): the registry's payload role.
constexpr bool is_payload_opcode(std::uint8_t opcode) noexcept {
    const RecordKind* k = find_record_kind(opcode);
    return k && k->role == RecordRole::payload;
}

// The row whose name is `field`'s record ("Camera.position[1]" -> Camera), or nullptr.
constexpr const RecordKind* find_record_kind_of_field(std::string_view field) noexcept {
    for (const RecordKind& k : kRecordKinds)
        if (field.substr(0, k.name.size()) == k.name &&
            (field.size() == k.name.size() || field[k.name.size()] == '.'))
            return &k;
    return nullptr;
}

}  // namespace fourdgs
FOURDGS_PUBLIC_END
