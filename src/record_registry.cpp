// wire.hpp's opcode facts, read off the record registry (fourdgs/records/registry.hpp).
#include "fourdgs/records/registry.hpp"

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

}  // namespace fourdgs
