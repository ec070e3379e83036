// The record registry's keying column (fourdgs/records/registry.hpp), applied: the one place a
// record that repeats another of its kind is refused. The SceneBuilder asks it of every record
// (a second of a once / at-most-once kind is refused before it is read) and, through
// repeated_key, of the by_key kinds it keeps (Object Track, Audio Source);
// check_scene_references of the provenance kinds (Coordinate Frame, Sensor Calibration, Geodetic
// Anchor). Audio Data, by_key too, pairs with its Audio Source, and its duplicate is a second
// payload for that source (SceneBuilder::absorb_payload asks duplicate_record directly).
//
// The by_key_in_chunk kinds (SH Band Stream, Attribute Stream) are keyed among one chunk's, and
// find_in_chunk is their rule: the decoder (decode_sh_bands, decode_stream_block), the index
// entry's band fetch (RangeFetcher::fetch_sh_bands) and the validator (Validator::absorb_band)
// each find a key among the list they read through it, and a repeat is refused in its words.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/records/registry.hpp"

namespace fourdgs {

// The row's duplicate refusal for the record of kind `opcode` at `offset` that repeats an earlier
// one: a second record of a once / at-most-once kind, or a second with key `value` of a by_key
// kind. The message names the kind, its key field and the value (quoted when the key is a
// string), the byte, and the section the refusal cites; the error's value is `value`.
// Precondition: the row has a duplicate refusal.
Error duplicate_record(std::uint8_t opcode, std::uint64_t offset, std::string_view value = {});

// Whether the row for `opcode` allows one record per file (once / at-most-once) and refuses a
// second as a duplicate.
bool is_single_record_kind(std::uint8_t opcode) noexcept;

// The by_key kinds the scene keeps as parsed records: the member their registry row's key column
// names. The rest of each rule (which kinds are keyed, the refusal, its message) is the row's.
template <class Record>
struct RecordKey;
template <>
struct RecordKey<ObjectTrack> {
    static constexpr std::uint8_t opcode = op::object_track;
    static constexpr auto member = &ObjectTrack::object_id;
};
template <>
struct RecordKey<AudioSource> {
    static constexpr std::uint8_t opcode = op::audio_source;
    static constexpr auto member = &AudioSource::source_id;
};
template <>
struct RecordKey<CoordinateFrame> {
    static constexpr std::uint8_t opcode = op::coordinate_frame;
    static constexpr auto member = &CoordinateFrame::name;
};
template <>
struct RecordKey<SensorCalibration> {
    static constexpr std::uint8_t opcode = op::sensor_calibration;
    static constexpr auto member = &SensorCalibration::name;
};
template <>
struct RecordKey<GeodeticAnchor> {
    static constexpr std::uint8_t opcode = op::geodetic_anchor;
    static constexpr auto member = &GeodeticAnchor::frame_name;
};

namespace detail::keying {

struct Itself {
    template <class T>
    const T& operator()(const T& x) const noexcept { return x; }
};

inline constexpr std::uint8_t kKept[] = {
    RecordKey<ObjectTrack>::opcode,     RecordKey<AudioSource>::opcode,
    RecordKey<CoordinateFrame>::opcode, RecordKey<SensorCalibration>::opcode,
    RecordKey<GeodeticAnchor>::opcode};

// Every by_key row of the registry is one of the kinds above or Audio Data (paired, not kept),
// and every kind above is by_key with a duplicate refusal: a row keyed anew fails to compile
// until its records are checked.
constexpr bool every_by_key_kind_checked() {
    for (const RecordKind& k : kRecordKinds) {
        bool kept = false;
        for (std::uint8_t opcode : kKept) kept = kept || opcode == k.opcode;
        const bool by_key = k.keying == RecordKeying::by_key && !k.duplicate.empty();
        if (kept != by_key && k.opcode != op::audio_data) return false;
    }
    return true;
}
static_assert(every_by_key_kind_checked(),
              "a by_key row of the record registry without its RecordKey (record_keying.hpp)");

}  // namespace detail::keying

// The registry's by_key rule for `record`, at byte `offset`, arriving after `earlier` (the records
// of its kind kept so far, in file order; `of` gives the record an element holds): the kind's
// duplicate refusal naming the key when one of them has the same key, nothing otherwise.
template <class Record, class Earlier, class Of = detail::keying::Itself>
std::optional<Error> repeated_key(std::span<const Earlier> earlier, const Record& record,
                                  std::uint64_t offset, Of of = {}) {
    using Key = RecordKey<Record>;
    const auto& key = record.*Key::member;
    for (const Earlier& e : earlier) {
        if (std::invoke(of, e).*Key::member != key) continue;
        if constexpr (std::is_convertible_v<decltype(key), std::string_view>)
            return duplicate_record(Key::opcode, offset, key);
        else
            return duplicate_record(Key::opcode, offset, std::to_string(key));
    }
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// by_key_in_chunk: a key unique among one chunk's records of the kind.

// The row's duplicate refusal for the second of two records of kind `opcode` (a by_key_in_chunk
// row) with key `key` among one chunk's, at byte `offset`. `holder` names the list and how it
// holds them ("the index entry for the chunk at byte 96 names"); the message reads "<holder> two
// <kind>s with <key field> <key>; the second at byte <offset> (<section>)". The error is about
// the row's key field ("SH Band Stream.band"), its value `key`.
Error duplicate_in_chunk(std::uint8_t opcode, std::uint64_t key, std::uint64_t offset,
                         std::string_view holder);

namespace detail::keying {

// A walk of the rows rather than find_record_kind: GCC's sanitizers (the ASan build) cannot fold
// the comparison of the pointer it returns in a constant expression.
constexpr bool keyed_in_chunk(std::uint8_t opcode) {
    for (const RecordKind& k : kRecordKinds)
        if (k.opcode == opcode)
            return k.keying == RecordKeying::by_key_in_chunk && !k.duplicate.empty();
    return false;
}

}  // namespace detail::keying

// The registry's by_key_in_chunk rule for kind `Opcode`: among `records` (one chunk's records of
// the kind, or the list a path reads them from, in order), the one whose key (`key_of`) is `key`
// — nullptr when none is — or, when two are, the row's duplicate refusal at the second (where
// `offset_of` says it lies; `holder()`, asked only then, names the list for duplicate_in_chunk).
// A path that reads only some keys asks only for those, and so refuses only their repeats.
template <std::uint8_t Opcode, class Record, class KeyOf, class OffsetOf, class Holder>
Result<const Record*> find_in_chunk(std::span<const Record> records, std::uint64_t key,
                                    KeyOf key_of, OffsetOf offset_of, Holder holder) {
    static_assert(detail::keying::keyed_in_chunk(Opcode),
                  "find_in_chunk asks for a by_key_in_chunk row with a duplicate refusal");
    const Record* found = nullptr;
    for (const Record& r : records) {
        if (static_cast<std::uint64_t>(std::invoke(key_of, r)) != key) continue;
        if (found) return duplicate_in_chunk(Opcode, key, std::invoke(offset_of, r), holder());
        found = &r;
    }
    return found;
}

}  // namespace fourdgs
