// fourdgs/wire.hpp — the bytes: a bounds-checked little-endian cursor, the matching writer, the
// magic (§4.1), record framing (§4.2) and the §2 compound types (string, bytes, map).
//
// Every read is checked against the bytes that remain; every count read from a file is checked
// against the remaining bytes (times the element size) before anything is allocated. Errors carry
// the absolute file offset of the field that failed.
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

static_assert(std::endian::native == std::endian::little,
              "fourdgs reads the little-endian wire by memcpy; port the cursor for big-endian hosts");

using Bytes = std::span<const std::uint8_t>;

inline constexpr std::array<std::uint8_t, 8> kMagic = {0x89, 0x34, 0x44, 0x47,
                                                       0x53, 0x31, 0x0D, 0x0A};
inline constexpr std::size_t kMagicSize = 8;
inline constexpr std::size_t kRecordHeaderSize = 9;  // u8 opcode + u64 content_length
inline constexpr std::size_t kFooterContentSize = 20;  // u64 + u64 + u32 (§5.2)
// The tail a seeking reader reads: trailing magic + Footer opcode + length + content (§5.2).
inline constexpr std::size_t kTailSize = kMagicSize + kRecordHeaderSize + kFooterContentSize;
static_assert(kTailSize == 37, "§5.2: the 37-byte tail");

// Record opcodes (registry "Record opcodes").
namespace op {
inline constexpr std::uint8_t header = 0x01, footer = 0x02, quantization = 0x03,
                              window_table = 0x04, chunk = 0x05, attribute_stream = 0x06,
                              sh_band = 0x07, chunk_index = 0x08, audio_legacy = 0x09,
                              camera = 0x0A, metadata = 0x0B, statistics = 0x0C,
                              attachment = 0x0D, attachment_index = 0x0E, summary_offset = 0x0F,
                              delta_chunk = 0x10, audio_source = 0x11, audio_data = 0x12,
                              coordinate_frame = 0x20, sensor_calibration = 0x21,
                              rig_trajectory = 0x22, geodetic_anchor = 0x23, object_table = 0x24,
                              object_track = 0x25;
}  // namespace op

// What the record registry (records/registry.hpp, one row per record kind) says of an opcode;
// implemented in src/format/record_registry.cpp from that table.
// Human name of an opcode ("Header", "private 0x80", "unknown 0x2A").
std::string opcode_name(std::uint8_t opcode);
// Whether the specification defines a record with this opcode (0x0E is reserved with no body,
// 0x26-0x2F are reserved, 0x80-0xFF private): the ones a reader interprets rather than skips.
bool is_defined_opcode(std::uint8_t opcode);
// The summary records (§4.5): Chunk Index, Statistics, Summary Offset.
bool is_summary_opcode(std::uint8_t opcode);

// §4.1: tells a wrong file (magic-mismatch) from a future major version
// (unsupported-major-version: only the version byte differs). `bytes` are the (up to 8) bytes
// found at `offset`; an error's value is them in hex ("89 34 44 47 53 32 0D 0A").
inline Status check_magic(Bytes bytes, std::uint64_t offset) {
    static const char* hex = "0123456789ABCDEF";
    std::string found;
    for (std::size_t i = 0; i < bytes.size() && i < kMagicSize; ++i) {
        if (i != 0) found += ' ';
        found += hex[bytes[i] >> 4];
        found += hex[bytes[i] & 15];
    }
    if (bytes.size() < kMagicSize)
        return make_error(ErrorKind::truncated, refusal::kTruncated,
                          "the file ends inside the 8-byte magic (" +
                              std::to_string(bytes.size()) + " bytes)",
                          offset)
            .about("magic", std::move(found));
    bool other_differs = false;
    for (std::size_t i = 0; i < kMagicSize; ++i)
        if (i != 5 && bytes[i] != kMagic[i]) other_differs = true;
    if (other_differs)
        return make_error(ErrorKind::malformed, refusal::kMagicMismatch,
                          "not a .4dgs file: the magic bytes differ from 89 34 44 47 53 31 0D 0A",
                          offset)
            .about("magic", std::move(found));
    if (bytes[5] != kMagic[5])
        return make_error(ErrorKind::unsupported, refusal::kUnsupportedMajorVersion,
                          "major version byte is 0x" + found.substr(15, 2) +
                              ", this reader implements version 1 (0x31)",
                          offset + 5)
            .about("magic", std::move(found));
    return ok_status();
}

// Little-endian u64 / u32 at `p`, assembled byte by byte: what a length read from raw bytes (a
// record header, a stream header) goes through, so no length depends on the host's byte order.
constexpr std::uint64_t read_le64(const std::uint8_t* p) noexcept {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}
constexpr std::uint32_t read_le32(const std::uint8_t* p) noexcept {
    return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
           std::uint32_t{p[3]} << 24;
}

// A bounds-checked little-endian reader over a byte span. `base` is the absolute file offset of
// the span's first byte, so errors name real file positions. `what` names the structure being
// read (e.g. "Header") for messages, and `record` the record its fields belong to, for the
// "Record.field" an Error carries as data (error.hpp); it defaults to `what`. The cursor keeps
// views of both, so they must outlive it (literals, or named strings — never temporaries).
class Cursor {
public:
    Cursor(Bytes bytes, std::uint64_t base, std::string_view what = "record",
           std::string_view record = {})
        : bytes_(bytes), base_(base), what_(what), record_(record.empty() ? what : record) {}

    std::size_t remaining() const noexcept { return bytes_.size() - pos_; }
    std::size_t position() const noexcept { return pos_; }
    std::uint64_t offset() const noexcept { return base_ + pos_; }  // absolute
    bool at_end() const noexcept { return pos_ == bytes_.size(); }
    std::string_view what() const noexcept { return what_; }
    Bytes rest() const noexcept { return bytes_.subspan(pos_); }

    // "Record.field" for a field of the record this cursor reads.
    std::string field_name(std::string_view field) const {
        std::string s(record_);
        s += '.';
        s += field;
        return s;
    }

    // The error for `n` bytes needed while fewer remain (record-too-short, naming the field).
    Error short_error(std::string_view field, std::uint64_t n) const {
        return make_error(ErrorKind::malformed, refusal::kRecordTooShort,
                          std::string(what_) + ": field '" + std::string(field) + "' needs " +
                              std::to_string(n) + " bytes but only " +
                              std::to_string(remaining()) + " remain in the record",
                          offset())
            .about(field_name(field));
    }

    Status need(std::string_view field, std::uint64_t n) const {
        if (n > remaining()) return short_error(field, n);
        return ok_status();
    }

    // Checks a declared element count against the bytes that remain before anything is
    // allocated: `count * min_element_size` must fit. Refusal: count-exceeds-record.
    Status check_count(std::string_view field, std::uint64_t count,
                       std::uint64_t min_element_size) const {
        if (min_element_size != 0 && count > remaining() / min_element_size)
            return make_error(ErrorKind::malformed, refusal::kCountExceedsRecord,
                              std::string(what_) + ": " + std::string(field) + " = " +
                                  std::to_string(count) + " cannot fit: " +
                                  std::to_string(count) + " x " +
                                  std::to_string(min_element_size) + " bytes > " +
                                  std::to_string(remaining()) + " remaining",
                              offset())
                .about(field_name(field), std::to_string(count));
        return ok_status();
    }

    template <class T>
    Result<T> read(std::string_view field) {
        static_assert(std::is_trivially_copyable_v<T>);
        if (sizeof(T) > remaining()) return short_error(field, sizeof(T));
        T v;
        std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }
    Result<std::uint8_t> u8(std::string_view f) { return read<std::uint8_t>(f); }
    Result<std::uint16_t> u16(std::string_view f) { return read<std::uint16_t>(f); }
    Result<std::uint32_t> u32(std::string_view f) { return read<std::uint32_t>(f); }
    Result<std::uint64_t> u64(std::string_view f) { return read<std::uint64_t>(f); }
    Result<float> f32(std::string_view f) { return read<float>(f); }
    Result<double> f64(std::string_view f) { return read<double>(f); }

    // f64 that must be finite; refusal `non-finite-value`.
    Result<double> finite_f64(std::string_view field) {
        std::uint64_t at = offset();
        FOURDGS_ASSIGN(double v, f64(field));
        if (!std::isfinite(v)) return non_finite(field, v, at);
        return v;
    }
    Result<float> finite_f32(std::string_view field) {
        std::uint64_t at = offset();
        FOURDGS_ASSIGN(float v, f32(field));
        if (!std::isfinite(v)) return non_finite(field, v, at);
        return v;
    }

    // A view of the next n bytes (no copy).
    Result<Bytes> take(std::string_view field, std::uint64_t n) {
        if (n > remaining()) return short_error(field, n);
        Bytes v = bytes_.subspan(pos_, static_cast<std::size_t>(n));
        pos_ += static_cast<std::size_t>(n);
        return v;
    }
    Status skip(std::string_view field, std::uint64_t n) {
        if (n > remaining()) return short_error(field, n);
        pos_ += static_cast<std::size_t>(n);
        return ok_status();
    }

    // §2 string: u32 length + UTF-8 bytes.
    Result<std::string> string(std::string_view field) {
        FOURDGS_ASSIGN(std::uint32_t n, u32(field));
        FOURDGS_ASSIGN(Bytes b, take(field, n));
        return std::string(reinterpret_cast<const char*>(b.data()), b.size());
    }
    // §2 bytes: u64 length + bytes, returned as a view.
    Result<Bytes> bytes(std::string_view field) {
        FOURDGS_ASSIGN(std::uint64_t n, u64(field));
        return take(field, n);
    }
    // §2 map<string,string>: u32 block length, then key/value strings filling exactly the block.
    Result<std::vector<std::pair<std::string, std::string>>> map(std::string_view field) {
        FOURDGS_ASSIGN(std::uint32_t n, u32(field));
        std::uint64_t block_at = offset();
        FOURDGS_ASSIGN(Bytes block, take(field, n));
        Cursor inner(block, block_at, what_, record_);
        std::vector<std::pair<std::string, std::string>> entries;
        while (!inner.at_end()) {
            FOURDGS_ASSIGN(std::string k, inner.string(field));
            FOURDGS_ASSIGN(std::string v, inner.string(field));
            entries.emplace_back(std::move(k), std::move(v));
        }
        return entries;
    }

private:
    Error non_finite(std::string_view field, double v, std::uint64_t at) const {
        return make_error(ErrorKind::malformed, refusal::kNonFiniteValue,
                          std::string(what_) + ": " + std::string(field) + " is " +
                              std::to_string(v) + ", must be finite",
                          at)
            .about(field_name(field), std::to_string(v));
    }

    Bytes bytes_;
    std::uint64_t base_;
    std::size_t pos_ = 0;
    std::string_view what_;
    std::string_view record_;
};

// The write side: appends little-endian fields to a growing byte vector.
class ByteWriter {
public:
    std::vector<std::uint8_t>& buffer() noexcept { return buf_; }
    const std::vector<std::uint8_t>& buffer() const noexcept { return buf_; }
    std::size_t size() const noexcept { return buf_.size(); }

    template <class T>
    void put(T v) {
        static_assert(std::is_trivially_copyable_v<T>);
        std::size_t at = buf_.size();
        buf_.resize(at + sizeof(T));
        std::memcpy(buf_.data() + at, &v, sizeof(T));
    }
    void u8(std::uint8_t v) { put(v); }
    void u16(std::uint16_t v) { put(v); }
    void u32(std::uint32_t v) { put(v); }
    void u64(std::uint64_t v) { put(v); }
    void f32(float v) { put(v); }
    void f64(double v) { put(v); }
    void raw(Bytes b) { buf_.insert(buf_.end(), b.begin(), b.end()); }
    void raw(std::string_view s) { buf_.insert(buf_.end(), s.begin(), s.end()); }
    void string(std::string_view s) {
        u32(static_cast<std::uint32_t>(s.size()));
        raw(s);
    }
    void bytes(Bytes b) {
        u64(b.size());
        raw(b);
    }
    void map(const std::vector<std::pair<std::string, std::string>>& entries) {
        std::size_t len_at = buf_.size();
        u32(0);
        for (const auto& [k, v] : entries) {
            string(k);
            string(v);
        }
        std::uint32_t len = static_cast<std::uint32_t>(buf_.size() - len_at - 4);
        std::memcpy(buf_.data() + len_at, &len, 4);
    }
    // Patch a previously written u32/u64 at a byte position.
    void patch_u64(std::size_t at, std::uint64_t v) { std::memcpy(buf_.data() + at, &v, 8); }
    void patch_u32(std::size_t at, std::uint32_t v) { std::memcpy(buf_.data() + at, &v, 4); }

private:
    std::vector<std::uint8_t> buf_;
};

// One framed record as found in a file (§4.2). `content` views the content bytes.
struct RecordView {
    std::uint8_t opcode = 0;
    std::uint64_t offset = 0;          // absolute offset of the opcode byte
    std::uint64_t content_length = 0;
    Bytes content;                     // exactly content_length bytes

    std::uint64_t content_offset() const noexcept { return offset + kRecordHeaderSize; }
    std::uint64_t end_offset() const noexcept { return content_offset() + content_length; }
    std::uint64_t total_length() const noexcept { return kRecordHeaderSize + content_length; }
};

// One record as a reader walked it: its opcode, whole-record offset and length (a reader's record
// log, for dumps and validators: RecordStream::log(), StreamingReader::record_log()).
struct RecordEntry {
    std::uint8_t opcode = 0;
    std::uint64_t offset = 0, length = 0;
};

// §4.2: where the content of the record at `record_offset` starts, and how long a whole record of
// `content_length` bytes is (for a caller that names a field's offset, or sizes a fetch).
constexpr std::uint64_t content_offset_of(std::uint64_t record_offset) noexcept {
    return record_offset + kRecordHeaderSize;
}
constexpr std::uint64_t whole_record_size(std::uint64_t content_length) noexcept {
    return kRecordHeaderSize + content_length;
}

// Parses one whole record at the start of `bytes` (which begins at absolute `offset`).
// A record that does not fit is reported as kind truncated / refusal "truncated".
inline Result<RecordView> parse_record(Bytes bytes, std::uint64_t offset) {
    if (bytes.size() < kRecordHeaderSize)
        return make_error(ErrorKind::truncated, refusal::kTruncated,
                          "the file ends inside a record header (" +
                              std::to_string(bytes.size()) + " of 9 bytes)",
                          offset);
    RecordView r;
    r.opcode = bytes[0];
    r.content_length = read_le64(bytes.data() + 1);
    r.offset = offset;
    if (r.content_length > bytes.size() - kRecordHeaderSize)
        return make_error(ErrorKind::truncated, refusal::kTruncated,
                          opcode_name(r.opcode) + " record declares content_length " +
                              std::to_string(r.content_length) + " but only " +
                              std::to_string(bytes.size() - kRecordHeaderSize) +
                              " bytes follow",
                          offset);
    r.content = bytes.subspan(kRecordHeaderSize, static_cast<std::size_t>(r.content_length));
    return r;
}

// Appends a framed record: opcode, content_length, content.
inline void write_record(ByteWriter& out, std::uint8_t opcode, Bytes content) {
    out.u8(opcode);
    out.u64(content.size());
    out.raw(content);
}

// CRC-32 (IEEE, zlib's crc32), continuing from `crc` (0 to start). Implemented in
// src/format/crc32.cpp.
std::uint32_t crc32(Bytes data, std::uint32_t crc = 0);

}  // namespace fourdgs
FOURDGS_PUBLIC_END
