// wire.hpp's opcode facts, read off the record registry (fourdgs/records/registry.hpp).
#include "fourdgs/records/registry.hpp"

#include "record_keying.hpp"

namespace fourdgs {

std::string opcode_name(std::uint8_t opcode) {
    if (const RecordKind* k = find_record_kind(opcode)) return std::string(k->name);
    static const char* hex = "0123456789ABCDEF";
    std::string h = {'0', 'x', hex[opcode >> 4], hex[opcode & 15]};
    return (opcode >= 0x80 ? "private " : "unknown ") + h;
}

bool is_defined_opcode(std::uint8_t opcode) {
    const RecordKind* k = find_record_kind(opcode);
    return k && k->defined();
}

bool is_summary_opcode(std::uint8_t opcode) {
    const RecordKind* k = find_record_kind(opcode);
    return k && k->role == RecordRole::summary;
}

// ---------------------------------------------------------------------------------------------
// The keying column applied (record_keying.hpp).

bool is_single_record_kind(std::uint8_t opcode) noexcept {
    const RecordKind* k = find_record_kind(opcode);
    return k && !k->duplicate.empty() &&
           (k->keying == RecordKeying::once || k->keying == RecordKeying::at_most_once);
}

namespace {

// The section a row's duplicate refusal cites: the refusal's own, else the row's.
std::string duplicate_section(const RecordKind& k) {
    const RefusalInfo* why = find_refusal(k.duplicate);
    return why ? std::string(why->section) : std::string(k.section);
}

}  // namespace

Error duplicate_record(std::uint8_t opcode, std::uint64_t offset, std::string_view value) {
    const RecordKind& k = *find_record_kind(opcode);
    const std::string section = duplicate_section(k);
    const std::string name(k.name);
    std::string message;
    if (k.keying == RecordKeying::once || k.keying == RecordKeying::at_most_once) {
        message = "a second " + name + " record at byte " + std::to_string(offset) +
                  (k.keying == RecordKeying::once ? "; the format allows exactly one ("
                                                  : "; a file carries at most one (") +
                  section + ")";
    } else {
        bool string_key = false;
        for (std::string_view path : k.strings) string_key = string_key || path == k.key;
        message = "two " + name + " records with " + std::string(k.key) + " " +
                  (string_key ? detail::quoted(value) : std::string(value)) +
                  "; the second at byte " + std::to_string(offset) + " (" + section + ")";
    }
    return make_error(ErrorKind::malformed, k.duplicate, std::move(message), offset)
        .about("", std::string(value));
}

Error duplicate_in_chunk(std::uint8_t opcode, std::uint64_t key, std::uint64_t offset,
                         std::string_view holder) {
    const RecordKind& k = *find_record_kind(opcode);
    const std::string value = std::to_string(key);
    return make_error(ErrorKind::malformed, k.duplicate,
                      std::string(holder) + " two " + std::string(k.name) + "s with " +
                          std::string(k.key) + " " + value + "; the second at byte " +
                          std::to_string(offset) + " (" + duplicate_section(k) + ")",
                      offset)
        .about(std::string(k.name) + "." + std::string(k.key), value);
}

}  // namespace fourdgs
