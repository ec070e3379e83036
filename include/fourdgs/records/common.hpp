// fourdgs/records/common.hpp — the ground every record family stands on: the §2 map type, the flag
// bits and fixed sizes the records pin, and the parser and writer internals (a field name built
// only when an error needs it, arrays read with a finiteness check, quaternions, flag bytes, views
// of §2 bytes fields, and the writer's record framing).
//
// Part of records.hpp (the umbrella states the conventions every parser and writer follows).
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fourdgs/export.hpp"
#include "fourdgs/portable.hpp"
#include "fourdgs/records/names.hpp"
#include "fourdgs/wire.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// A §2 map<string,string> in wire order (duplicates, if a file has them, are kept as found).
using StringMap = std::vector<std::pair<std::string, std::string>>;

// Header flags (§5.1) and Audio Source flags (§5.16).
inline constexpr std::uint8_t kHeaderFlagAudio = 0x01;
inline constexpr std::uint8_t kHeaderFlagCompressed = 0x02;
inline constexpr std::uint8_t kAudioFlagSpatial = 0x01;
inline constexpr std::uint8_t kAudioFlagLoop = 0x02;
inline constexpr std::uint8_t kReservedFlagBits = 0xFC;  // bits 2-7 of both flag bytes

// Bytes of the fixed-size records and elements, pinned.
inline constexpr std::size_t kWindowSize = 16;
inline constexpr std::size_t kIndexBandSize = 17;
inline constexpr std::size_t kKeyframeIndexFieldsSize = 28;
inline constexpr std::size_t kCameraKeyframeSize = 56;
inline constexpr std::size_t kAudioKeyframeSize = 64;
inline constexpr std::size_t kTrajectorySampleSize = 64;
inline constexpr std::size_t kSummaryOffsetContentSize = 17;
inline constexpr std::size_t kStatisticsContentSize = 68;
static_assert(kKeyframeIndexFieldsSize == 1 + 1 + 8 + 8 + 2 + 8);
static_assert(kTrajectorySampleSize == 8 + 4 * 8 + 3 * 8);
static_assert(kAudioKeyframeSize == 8 + 3 * 8 + 4 * 8);
static_assert(kCameraKeyframeSize == 8 + 3 * 8 + 3 * 8);
static_assert(kStatisticsContentSize == 8 + 4 + 8 + 6 * 8);

// ---------------------------------------------------------------------------------------------
// Internals shared by the parsers and writers.

namespace detail {

inline std::string fmt(double v) {
    char buf[40];
    auto res = fourdgs::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, res.ptr);
}
inline std::string fmt(std::uint64_t v) { return std::to_string(v); }
inline std::string quoted(std::string_view s) {
    std::string q = "\"";
    q.append(s.substr(0, 80));
    if (s.size() > 80) q += "...";
    q += '"';
    return q;
}

// An error about `field` of the record `what` (a leaf such as "cutoff" or "samples[3].time"; ""
// when the error is about the record as a whole). The message is prefixed with `what`; the
// "Record.field" and the offending value travel as data (error.hpp).
inline Error record_error(ErrorKind kind, std::string_view refusal, std::string_view what,
                          std::string_view field, std::string value, std::string message,
                          std::uint64_t at) {
    Error e = make_error(kind, refusal, std::string(what) + ": " + message, at);
    if (!field.empty()) e.field = std::string(what) + "." + std::string(field);
    e.value = std::move(value);
    return e;
}
inline Error malformed(std::string_view refusal, std::string_view what, std::string_view field,
                       std::string value, std::string message, std::uint64_t at) {
    return record_error(ErrorKind::malformed, refusal, what, field, std::move(value),
                        std::move(message), at);
}
inline Error unsupported(std::string_view refusal, std::string_view what, std::string_view field,
                         std::string value, std::string message, std::uint64_t at) {
    return record_error(ErrorKind::unsupported, refusal, what, field, std::move(value),
                        std::move(message), at);
}

// Parsing a record of the wrong opcode is the caller's mistake, not the file's.
inline Status expect_opcode(const RecordView& r, std::uint8_t opcode) {
    if (r.opcode == opcode) return ok_status();
    return make_error(ErrorKind::invalid_argument, refusal::kWrongOpcode,
                      "asked to parse a " + opcode_name(opcode) + " record but the record at " +
                          std::to_string(r.offset) + " is " + opcode_name(r.opcode),
                      r.offset);
}

// A field name such as "samples[3].rotation", built only when an error needs it.
struct FieldName {
    std::string_view base;
    std::int64_t index = -1;
    std::string_view sub = {};
    std::string str() const {
        std::string s(base);
        if (index >= 0) s += "[" + std::to_string(index) + "]";
        if (!sub.empty()) {
            s += '.';
            s += sub;
        }
        return s;
    }
};

// Reads n f64 (or f32) values; with `finite`, a non-finite one is non-finite-value naming the
// field, the element and the value.
template <class T>
inline Status read_array(Cursor& c, FieldName name, T* out, std::size_t n, bool finite) {
    if (n * sizeof(T) > c.remaining()) return c.short_error(name.str(), n * sizeof(T));
    for (std::size_t j = 0; j < n; ++j) {
        std::uint64_t at = c.offset();
        auto v = c.read<T>("");
        out[j] = *v;
        if (finite && !std::isfinite(out[j])) {
            std::string f = name.str();
            if (n > 1) f += "[" + std::to_string(j) + "]";
            const std::string shown = fmt(static_cast<double>(out[j]));
            return malformed(refusal::kNonFiniteValue, c.what(), f, shown,
                             f + " is " + shown + ", must be finite", at);
        }
    }
    return ok_status();
}

// §5.15.3/§5.16: a rotation must be non-zero with a finite norm (components are already finite).
inline Status check_quaternion(std::string_view what, FieldName name,
                               const std::array<double, 4>& q, std::uint64_t at) {
    double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (n2 == 0) {
        const std::string v =
            "(" + fmt(q[0]) + ", " + fmt(q[1]) + ", " + fmt(q[2]) + ", " + fmt(q[3]) + ")";
        return malformed(refusal::kZeroQuaternion, what, name.str(), v,
                         name.str() + " " + v + " has norm zero and names no rotation", at);
    }
    if (!std::isfinite(n2)) {
        const std::string v =
            fmt(std::max({std::fabs(q[0]), std::fabs(q[1]), std::fabs(q[2]), std::fabs(q[3])}));
        return malformed(refusal::kNonFiniteValue, what, name.str(), v,
                         name.str() + " has a norm that is not finite (components up to " + v +
                             ")",
                         at);
    }
    return ok_status();
}

inline Result<bool> read_flag_byte(Cursor& c, std::string_view field) {
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(std::uint8_t v, c.u8(field));
    if (v > 1)
        return malformed(refusal::kInvalidFlagValue, c.what(), field, std::to_string(v),
                         std::string(field) + " is " + std::to_string(v) + ", must be 0 or 1", at);
    return v == 1;
}

// A §2 bytes field as a view plus the absolute offset of its first byte.
inline Status read_bytes_view(Cursor& c, std::string_view field, Bytes& out,
                              std::uint64_t& out_offset) {
    FOURDGS_ASSIGN(std::uint64_t n, c.u64(field));
    out_offset = c.offset();
    FOURDGS_ASSIGN(out, c.take(field, n));
    return ok_status();
}

// Writer framing: opcode, a content_length placeholder, then the content, then the patch.
inline std::size_t begin_record(ByteWriter& out, std::uint8_t opcode) {
    out.u8(opcode);
    std::size_t at = out.size();
    out.u64(0);
    return at;
}
inline void end_record(ByteWriter& out, std::size_t length_at) {
    out.patch_u64(length_at, out.size() - length_at - 8);
}
template <class T, std::size_t N>
inline void put_array(ByteWriter& out, const std::array<T, N>& a) {
    for (T v : a) out.put(v);
}

}  // namespace detail

}  // namespace fourdgs
FOURDGS_PUBLIC_END
