// The record registry's keying column (fourdgs/records/registry.hpp), applied: the one place a
// record that repeats another of its kind is refused. The SceneBuilder asks it of every record
// (a second of a once / at-most-once kind is refused before it is read) and of the by_key kinds
// it pairs (Object Track, Audio Source, Audio Data); check_scene_references of the provenance
// kinds (Coordinate Frame, Sensor Calibration, Geodetic Anchor).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
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

// by_key: the index of the first element before `i` whose key equals element i's, or `i` when
// there is none. The lists are front matter (a handful of records), so quadratic is the readable
// choice.
template <class T, class Key>
std::size_t first_with_same_key(const std::vector<T>& v, std::size_t i, Key key) {
    for (std::size_t j = 0; j < i; ++j)
        if (key(v[j]) == key(v[i])) return j;
    return i;
}

}  // namespace fourdgs
