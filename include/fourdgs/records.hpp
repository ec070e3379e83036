// fourdgs/records.hpp — the typed records of §5: one struct per record, one parser and one writer
// each, and the shape rules that need nothing but the record itself.
//
// A parser takes a RecordView (wire.hpp) and reads its content with a bounds-checked Cursor, so
// every error carries the absolute file offset of the field that failed. Parsers use the record's
// content_length and ignore bytes after the fields they know (§4.2, M009/M010); they check every
// declared count against the bytes that remain before allocating (refusal count-exceeds-record);
// a field that runs past the record is record-too-short.
//
// Rules that need another record (the Header's duration, a Rig Trajectory by name, a second record
// of the same name, an index entry against its chunk) belong to the layers above; where a helper
// makes that easy it is here (check_audio_keyframes_within, length_unit_agrees).
//
// Lifetime: every `Bytes` field of a parsed struct (Chunk records, SH band stream, attachment and
// audio payloads, Delta Chunk records) views the RecordView's content, i.e. the caller's buffer. It
// is valid exactly as long as that buffer; copy it out to keep it. Every other field is owned.
//
// Thread safety: every function here is pure and reentrant; the structs are plain values.
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

#include "fourdgs/error.hpp"
#include "fourdgs/wire.hpp"

namespace fourdgs {

// A §2 map<string,string> in wire order (duplicates, if a file has them, are kept as found).
using StringMap = std::vector<std::pair<std::string, std::string>>;

// ---------------------------------------------------------------------------------------------
// Registry enumerations the records carry as bytes. A parser refuses a value outside these, so a
// parsed struct only ever holds a listed one; a writer writes whatever the struct holds.

enum class Handedness : std::uint8_t { unspecified = 0, right = 1, left = 2 };
// Signed axes: 0 +x, 1 +y, 2 +z, 3 -x, 4 -y, 5 -z.
enum class Axis : std::uint8_t { pos_x = 0, pos_y = 1, pos_z = 2, neg_x = 3, neg_y = 4, neg_z = 5 };
enum class LengthUnit : std::uint8_t {
    unspecified = 0, metre = 1, centimetre = 2, millimetre = 3, kilometre = 4, foot = 5, inch = 6
};
enum class CameraModel : std::uint8_t { none = 0, pinhole = 1, brown_conrady = 2, kannala_brandt = 3 };
enum class PoseReference : std::uint8_t { scene = 0, rig = 1 };
// Rig Trajectory and Object Track interpolation byte.
enum class TrajectoryInterpolation : std::uint8_t { linear = 0, step = 1 };

constexpr std::string_view to_string(Axis a) noexcept {
    switch (a) {
        case Axis::pos_x: return "+x";
        case Axis::pos_y: return "+y";
        case Axis::pos_z: return "+z";
        case Axis::neg_x: return "-x";
        case Axis::neg_y: return "-y";
        case Axis::neg_z: return "-z";
    }
    return "unknown";
}
constexpr std::string_view to_string(LengthUnit u) noexcept {
    switch (u) {
        case LengthUnit::unspecified: return "unspecified";
        case LengthUnit::metre: return "metre";
        case LengthUnit::centimetre: return "centimetre";
        case LengthUnit::millimetre: return "millimetre";
        case LengthUnit::kilometre: return "kilometre";
        case LengthUnit::foot: return "foot";
        case LengthUnit::inch: return "inch";
    }
    return "unknown";
}
constexpr std::string_view to_string(CameraModel m) noexcept {
    switch (m) {
        case CameraModel::none: return "none";
        case CameraModel::pinhole: return "pinhole";
        case CameraModel::brown_conrady: return "brown-conrady";
        case CameraModel::kannala_brandt: return "kannala-brandt";
    }
    return "unknown";
}

// Metres per unit of a length unit (registry); 0 for unspecified or an unlisted value.
constexpr double metres_per(LengthUnit u) noexcept {
    switch (u) {
        case LengthUnit::unspecified: return 0.0;
        case LengthUnit::metre: return 1.0;
        case LengthUnit::centimetre: return 0.01;
        case LengthUnit::millimetre: return 0.001;
        case LengthUnit::kilometre: return 1000.0;
        case LengthUnit::foot: return 0.3048;
        case LengthUnit::inch: return 0.0254;
    }
    return 0.0;
}

// Whether `count` distortion coefficients is what the registry defines for `model` (§5.15.3):
// none/pinhole 0, brown-conrady 5 or 8, kannala-brandt 4.
constexpr bool distortion_count_fits(CameraModel model, unsigned count) noexcept {
    switch (model) {
        case CameraModel::none:
        case CameraModel::pinhole: return count == 0;
        case CameraModel::brown_conrady: return count == 5 || count == 8;
        case CameraModel::kannala_brandt: return count == 4;
    }
    return false;
}

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
// The records.

// §5.1 Header (0x01).
struct Header {
    std::string profile;
    std::string library;
    double duration_sec = 0;
    std::uint64_t gaussian_count = 0;
    double cutoff = 0.05;
    std::string temporal_model;
    std::array<double, 6> aabb{};  // min xyz, max xyz
    std::uint8_t sh_degree = 0;
    std::uint8_t flags = 0;
    StringMap attributes;

    bool has_audio() const noexcept { return (flags & kHeaderFlagAudio) != 0; }
    bool chunks_compressed() const noexcept { return (flags & kHeaderFlagCompressed) != 0; }
    friend bool operator==(const Header&, const Header&) = default;
};

// §5.2 Footer (0x02).
struct Footer {
    std::uint64_t summary_start = 0;
    std::uint64_t summary_offset_start = 0;
    std::uint32_t summary_crc = 0;
    friend bool operator==(const Footer&, const Footer&) = default;
};

// §5.3 Quantization (0x03), including the appended per-band SH bit depths.
struct Quantization {
    std::string scheme;
    std::array<double, 3> pos_origin{};
    double step_pos = 0, step_scale_log = 0, step_rot = 0, step_rgb = 0, step_alpha = 0,
           step_motion = 0, step_time = 0, step_sigma_log = 0;
    std::uint8_t step_sh = 0;
    StringMap bounds;  // values as stored; see is_bound_spelling / compare_bounds
    // Appended: band b's depth at sh_depths[b-1]. Empty when the record declares none — the field
    // is absent, its count is 0, or it was malformed (then sh_depths_malformed is set, M024).
    std::vector<std::uint8_t> sh_depths;
    bool sh_depths_malformed = false;

    // The bound declared for `key`, or nullptr.
    const std::string* bound(std::string_view key) const {
        for (const auto& [k, v] : bounds)
            if (k == key) return &v;
        return nullptr;
    }
    friend bool operator==(const Quantization&, const Quantization&) = default;
};

// §5.4 Window Table (0x04).
struct WindowTable {
    struct Window {
        double lo = 0, hi = 0;
        friend bool operator==(const Window&, const Window&) = default;
    };
    std::vector<Window> windows;
    friend bool operator==(const WindowTable&, const WindowTable&) = default;
};

// §5.5 Chunk (0x05). `records` views the (possibly compressed) block; the decode layer checks it
// against compression and uncompressed_size.
struct ChunkRecord {
    double t0 = 0, t1 = 0;
    std::uint32_t level = 0;
    std::uint32_t count = 0;
    std::string compression;
    std::uint64_t uncompressed_size = 0;
    Bytes records;                    // views the RecordView's content
    std::uint64_t records_offset = 0;  // absolute offset of the block's first byte
};

// §5.7 SH Band Stream (0x07). `stream` views exactly the bare §5.6 stream (17-byte header plus
// payload_length bytes), which the stream layer decodes; it carries attribute_id 7 and MUST NOT be
// dispatched on it (M032).
struct ShBandRecord {
    std::uint8_t band = 0;  // 1..3
    Bytes stream;           // views the RecordView's content
    std::uint64_t stream_offset = 0;
};

// §5.8 the six fields appended for keyframe-delta.
struct KeyframeIndexFields {
    std::uint8_t chunk_kind = 0;  // 0 keyframe (Chunk), 1 delta (Delta Chunk)
    std::uint8_t delta_mode = 0;
    std::uint64_t reference_offset = 0;
    std::uint64_t keyframe_offset = 0;
    std::uint16_t depth = 0;
    std::uint64_t live_count = 0;
    friend bool operator==(const KeyframeIndexFields&, const KeyframeIndexFields&) = default;
};

// §5.8 Chunk Index (0x08). Every offset/length frames a whole record.
struct ChunkIndex {
    struct Band {
        std::uint8_t band = 0;
        std::uint64_t offset = 0, length = 0;
        friend bool operator==(const Band&, const Band&) = default;
    };
    double t0 = 0, t1 = 0;
    std::uint64_t chunk_offset = 0, chunk_length = 0;
    std::uint32_t gaussian_count = 0;
    std::vector<Band> bands;
    std::optional<KeyframeIndexFields> keyframe;  // present only when content remains for it
    friend bool operator==(const ChunkIndex&, const ChunkIndex&) = default;
};

// §5.9 Audio (0x09, legacy).
struct AudioLegacy {
    std::string codec;
    double start_sec = 0;
    Bytes data;                    // views the RecordView's content
    std::uint64_t data_offset = 0;  // absolute offset of the first payload byte
};

// §5.10 Camera (0x0A).
struct Camera {
    struct Keyframe {
        double time = 0;
        std::array<double, 3> position{}, target{};
        friend bool operator==(const Keyframe&, const Keyframe&) = default;
    };
    double fov_y_deg = 0;
    std::array<double, 3> position{}, target{};
    std::vector<Keyframe> keyframes;
    std::string interpolation;  // "linear" or "spline"
    bool loop = false;
    friend bool operator==(const Camera&, const Camera&) = default;
};

// §5.11 Metadata (0x0B).
struct Metadata {
    std::string name;
    StringMap entries;
    friend bool operator==(const Metadata&, const Metadata&) = default;
};

// §5.12 Statistics (0x0C). Advisory (M036).
struct Statistics {
    std::uint64_t gaussian_count = 0;
    std::uint32_t chunk_count = 0;
    double duration_sec = 0;
    std::array<double, 6> aabb{};
    friend bool operator==(const Statistics&, const Statistics&) = default;
};

// §5.13 Attachment (0x0D).
struct Attachment {
    std::string name;
    std::string media_type;
    Bytes data;                    // views the RecordView's content
    std::uint64_t data_offset = 0;
};

// §5.14 Summary Offset (0x0F).
struct SummaryOffset {
    std::uint8_t group_opcode = 0;
    std::uint64_t group_start = 0, group_length = 0;
    friend bool operator==(const SummaryOffset&, const SummaryOffset&) = default;
};

// §5.18 Delta Chunk (0x10). `records` decompresses to the three groups (split_delta_groups).
struct DeltaChunk {
    double t0 = 0, t1 = 0;
    std::uint32_t level = 0;
    std::uint8_t delta_mode = 0;  // 0 keyframe-referenced, 1 chained
    std::uint64_t reference_offset = 0;
    std::uint64_t keyframe_offset = 0;
    std::uint16_t depth = 0;
    std::uint32_t update_count = 0, birth_count = 0, death_count = 0;
    std::string compression;
    std::uint64_t uncompressed_size = 0;
    Bytes records;                    // views the RecordView's content
    std::uint64_t records_offset = 0;
};

// The three bytes-framed sub-blocks of a decompressed Delta Chunk block (§5.18), each a run of
// bare §5.6 streams. The views point into the span given to split_delta_groups.
struct DeltaGroups {
    Bytes updates, births, deaths;
    std::uint64_t updates_offset = 0, births_offset = 0, deaths_offset = 0;
};

// §5.16 Audio Source (0x11).
struct AudioSource {
    struct Keyframe {
        double time = 0;
        std::array<double, 3> position{};
        std::array<double, 4> rotation{};  // xyzw
        friend bool operator==(const Keyframe&, const Keyframe&) = default;
    };
    std::uint32_t source_id = 0;
    std::string name;
    std::string codec;
    std::string channel_layout;
    std::uint64_t data_length = 0;
    double start_sec = 0;
    double duration_sec = 0;
    double gain = 1;
    std::uint8_t flags = 0;
    std::array<double, 3> position{};
    std::array<double, 4> rotation{0, 0, 0, 1};
    std::vector<Keyframe> keyframes;
    std::string interpolation;  // "linear" or "step"

    bool spatial() const noexcept { return (flags & kAudioFlagSpatial) != 0; }
    bool loop() const noexcept { return (flags & kAudioFlagLoop) != 0; }
    friend bool operator==(const AudioSource&, const AudioSource&) = default;
};

// §5.17 Audio Data (0x12).
struct AudioData {
    std::uint32_t source_id = 0;
    Bytes data;                    // views the RecordView's content
    std::uint64_t data_offset = 0;
};

// §5.15.2 Coordinate Frame (0x20).
struct CoordinateFrame {
    std::string name;
    Handedness handedness = Handedness::unspecified;
    Axis up_axis = Axis::pos_y;
    Axis forward_axis = Axis::neg_z;
    LengthUnit length_unit = LengthUnit::unspecified;
    double metres_per_unit = 0;  // 0.0 = unknown
    friend bool operator==(const CoordinateFrame&, const CoordinateFrame&) = default;
};

// §5.15.3 Sensor Calibration (0x21).
struct SensorCalibration {
    std::string name;
    std::string modality;
    CameraModel camera_model = CameraModel::none;
    std::uint32_t width_px = 0, height_px = 0;
    double fx = 0, fy = 0, cx = 0, cy = 0;
    std::vector<double> distortion;  // distortion_count coefficients, in the model's order
    std::array<double, 4> rotation{0, 0, 0, 1};  // xyzw
    std::array<double, 3> translation{};
    PoseReference pose_reference = PoseReference::scene;
    std::string rig_name;
    friend bool operator==(const SensorCalibration&, const SensorCalibration&) = default;
};

// One pose sample of a Rig Trajectory or an Object Track (§5.15.4, §5.15.7).
struct TrajectorySample {
    double time = 0;
    std::array<double, 4> rotation{0, 0, 0, 1};  // xyzw
    std::array<double, 3> translation{};
    friend bool operator==(const TrajectorySample&, const TrajectorySample&) = default;
};

// §5.15.4 Rig Trajectory (0x22). No samples = read as absent (M061), decided above this layer.
struct RigTrajectory {
    std::string name;
    TrajectoryInterpolation interpolation = TrajectoryInterpolation::linear;
    std::vector<TrajectorySample> samples;
    friend bool operator==(const RigTrajectory&, const RigTrajectory&) = default;
};

// §5.15.5 Geodetic Anchor (0x23).
struct GeodeticAnchor {
    std::string frame_name;
    double latitude_deg = 0, longitude_deg = 0, altitude_m = 0, heading_deg = 0;
    friend bool operator==(const GeodeticAnchor&, const GeodeticAnchor&) = default;
};

// §5.15.6 Object Table (0x24). Advisory: nothing here transforms a gaussian.
struct ObjectTable {
    struct Dynamics {
        std::array<float, 3> velocity{}, angular_velocity{}, acceleration{};
        friend bool operator==(const Dynamics&, const Dynamics&) = default;
    };
    struct Entry {
        std::uint32_t object_id = 0;
        std::string label;
        std::array<float, 3> anchor{};
        std::optional<Dynamics> dynamics;           // dynamics_present == 1
        std::optional<std::vector<float>> embedding;  // has_embedding == 1; embedding_dim floats
        friend bool operator==(const Entry&, const Entry&) = default;
    };
    std::uint16_t embedding_dim = 0;
    std::vector<Entry> entries;  // object_count entries
    friend bool operator==(const ObjectTable&, const ObjectTable&) = default;
};

// §5.15.7 Object Track (0x25).
struct ObjectTrack {
    std::uint32_t object_id = 0;  // never 0
    TrajectoryInterpolation interpolation = TrajectoryInterpolation::linear;
    std::vector<TrajectorySample> samples;
    friend bool operator==(const ObjectTrack&, const ObjectTrack&) = default;
};

// ---------------------------------------------------------------------------------------------
// §5.3 bounds: the grammar and exact comparison.

// Whether `s` is spelled by the §5.3 bound grammar: [sign] significand [exponent], ASCII digits
// only, no whitespace, separators, infinities or NaN. Hand-written on purpose (M019, M022): no
// host-library number parser agrees with the grammar.
constexpr bool is_bound_spelling(std::string_view s) noexcept {
    std::size_t i = 0, n = s.size();
    auto digit = [&](std::size_t k) { return k < n && s[k] >= '0' && s[k] <= '9'; };
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    std::size_t int_digits = 0, frac_digits = 0;
    while (digit(i)) ++i, ++int_digits;
    if (i < n && s[i] == '.') {
        ++i;
        while (digit(i)) ++i, ++frac_digits;
    }
    if (int_digits == 0 && frac_digits == 0) return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
        std::size_t exp_digits = 0;
        while (digit(i)) ++i, ++exp_digits;
        if (exp_digits == 0) return false;
    }
    return i == n;
}

namespace detail {

// §5.6 bare stream header, as far as the SH band parser frames it: five u8, u32 element_count,
// u64 payload_length = 17 bytes (stream.hpp owns the public constant).
inline constexpr std::size_t kBareStreamHeaderSize = 17;
inline constexpr std::size_t kBareStreamPayloadLengthAt = 9;
static_assert(kBareStreamHeaderSize == 5 + 4 + 8);

// A signed arbitrary-precision integer as decimal digits: the exponent of a bound may have any
// number of digits, so it is never converted to a machine integer. `mag` has no leading zeros;
// zero is "" with neg false.
struct BigInt {
    bool neg = false;
    std::string mag;
};

inline int compare_mag(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
    int c = a.compare(b);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

inline std::string add_mag(const std::string& a, const std::string& b) {
    std::string r;
    int carry = 0;
    for (std::size_t i = 0; i < std::max(a.size(), b.size()) || carry; ++i) {
        int d = carry;
        if (i < a.size()) d += a[a.size() - 1 - i] - '0';
        if (i < b.size()) d += b[b.size() - 1 - i] - '0';
        r.push_back(static_cast<char>('0' + d % 10));
        carry = d / 10;
    }
    std::reverse(r.begin(), r.end());
    return r;
}

// a - b for |a| >= |b|.
inline std::string sub_mag(const std::string& a, const std::string& b) {
    std::string r;
    int borrow = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        int d = (a[a.size() - 1 - i] - '0') - borrow;
        if (i < b.size()) d -= b[b.size() - 1 - i] - '0';
        borrow = d < 0;
        if (d < 0) d += 10;
        r.push_back(static_cast<char>('0' + d));
    }
    while (!r.empty() && r.back() == '0') r.pop_back();
    std::reverse(r.begin(), r.end());
    return r;
}

inline BigInt add(const BigInt& a, const BigInt& b) {
    if (a.neg == b.neg) return BigInt{a.neg, add_mag(a.mag, b.mag)};
    int c = compare_mag(a.mag, b.mag);
    if (c == 0) return BigInt{};
    if (c > 0) return BigInt{a.neg, sub_mag(a.mag, b.mag)};
    return BigInt{b.neg, sub_mag(b.mag, a.mag)};
}

inline int compare(const BigInt& a, const BigInt& b) {
    if (a.neg != b.neg) return a.neg ? -1 : 1;
    int c = compare_mag(a.mag, b.mag);
    return a.neg ? -c : c;
}

inline BigInt big_from(std::int64_t v) {
    BigInt r;
    r.neg = v < 0;
    std::uint64_t m = r.neg ? ~static_cast<std::uint64_t>(v) + 1 : static_cast<std::uint64_t>(v);
    r.mag = m == 0 ? std::string() : std::to_string(m);
    return r;
}

// A grammar-valid bound as sign * 0.D * 10^E with D free of leading and trailing zeros; D empty
// means the value zero (whatever the sign or exponent).
struct DecimalValue {
    bool neg = false;
    std::string digits;
    BigInt exponent;
};

inline DecimalValue decimal_value(std::string_view s) {
    DecimalValue v;
    std::size_t i = 0;
    if (s[i] == '+' || s[i] == '-') v.neg = s[i++] == '-';
    std::string all;
    std::int64_t int_digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') all.push_back(s[i++]), ++int_digits;
    if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') all.push_back(s[i++]);
    }
    BigInt exp;
    if (i < s.size()) {  // 'e' or 'E'
        ++i;
        if (s[i] == '+' || s[i] == '-') exp.neg = s[i++] == '-';
        std::size_t first = i;
        while (first < s.size() && s[first] == '0') ++first;
        exp.mag = std::string(s.substr(first));
        if (exp.mag.empty()) exp.neg = false;
    }
    std::size_t lead = all.find_first_not_of('0');
    if (lead == std::string::npos) return DecimalValue{};  // zero: sign and exponent carry nothing
    std::size_t last = all.find_last_not_of('0');
    v.digits = all.substr(lead, last - lead + 1);
    // Moving the point in front of the first significant digit adds int_digits - lead.
    v.exponent = add(exp, big_from(int_digits - static_cast<std::int64_t>(lead)));
    return v;
}

inline int compare_magnitude(const DecimalValue& a, const DecimalValue& b) {
    int e = compare(a.exponent, b.exponent);
    if (e != 0) return e;
    int c = a.digits.compare(b.digits);  // a shorter prefix is the smaller 0.D
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace detail

// Compares two bounds as exact decimal numbers: -1, 0 or 1 for a < b, a == b, a > b (§5.3).
// Works on digits only — never binary floating point, never a string as long as an exponent's
// value — so "5e-05" == "0.00005" == "+0.00005", "-0" == "0" == "0e999999999999999999999" and
// exponents of any length compare exactly. Precondition: both spelled by the grammar; a string
// that is not orders before every valid bound (and equal to other invalid strings), which keeps
// the order total without giving an invalid spelling a value.
inline int compare_bounds(std::string_view a, std::string_view b) {
    bool va = is_bound_spelling(a), vb = is_bound_spelling(b);
    if (!va || !vb) return va == vb ? 0 : (va ? 1 : -1);
    detail::DecimalValue x = detail::decimal_value(a), y = detail::decimal_value(b);
    bool xz = x.digits.empty(), yz = y.digits.empty();
    int sx = xz ? 0 : (x.neg ? -1 : 1), sy = yz ? 0 : (y.neg ? -1 : 1);
    if (sx != sy) return sx < sy ? -1 : 1;
    if (sx == 0) return 0;
    int m = detail::compare_magnitude(x, y);
    return sx > 0 ? m : -m;
}

// ---------------------------------------------------------------------------------------------
// Internals shared by the parsers.

namespace detail {

inline std::string fmt(double v) {
    char buf[40];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
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

inline Error record_error(ErrorKind kind, std::string_view refusal, std::string_view what,
                          std::string message, std::uint64_t at) {
    return make_error(kind, refusal, std::string(what) + ": " + message, at);
}
inline Error malformed(std::string_view refusal, std::string_view what, std::string message,
                       std::uint64_t at) {
    return record_error(ErrorKind::malformed, refusal, what, std::move(message), at);
}
inline Error unsupported(std::string_view refusal, std::string_view what, std::string message,
                         std::uint64_t at) {
    return record_error(ErrorKind::unsupported, refusal, what, std::move(message), at);
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
            return malformed(refusal::kNonFiniteValue, c.what(),
                             f + " is " + fmt(static_cast<double>(out[j])) + ", must be finite",
                             at);
        }
    }
    return ok_status();
}

// §5.15.3/§5.16: a rotation must be non-zero with a finite norm (components are already finite).
inline Status check_quaternion(std::string_view what, FieldName name,
                               const std::array<double, 4>& q, std::uint64_t at) {
    double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (n2 == 0)
        return malformed(refusal::kZeroQuaternion, what,
                         name.str() + " (" + fmt(q[0]) + ", " + fmt(q[1]) + ", " + fmt(q[2]) +
                             ", " + fmt(q[3]) + ") has norm zero and names no rotation",
                         at);
    if (!std::isfinite(n2))
        return malformed(refusal::kNonFiniteValue, what,
                         name.str() + " has a norm that is not finite (components up to " +
                             fmt(std::max({std::fabs(q[0]), std::fabs(q[1]), std::fabs(q[2]),
                                           std::fabs(q[3])})) +
                             ")",
                         at);
    return ok_status();
}

// Reads `count` trajectory samples (Rig Trajectory, Object Track): times finite and strictly
// increasing (naming the sample index), rotations finite and non-zero, translations finite.
inline Result<std::vector<TrajectorySample>> read_samples(Cursor& c, std::uint32_t count) {
    FOURDGS_TRY(c.check_count("sample_count", count, kTrajectorySampleSize));
    std::vector<TrajectorySample> samples(count);
    for (std::uint32_t i = 0; i < count; ++i) {
        TrajectorySample& s = samples[i];
        std::uint64_t at = c.offset();
        FOURDGS_TRY(read_array(c, FieldName{"samples", i, "time"}, &s.time, 1, false));
        if (!std::isfinite(s.time) || (i > 0 && !(s.time > samples[i - 1].time)))
            return malformed(refusal::kNonIncreasingSampleTimes, c.what(),
                             "samples[" + std::to_string(i) + "].time is " + fmt(s.time) +
                                 (i > 0 ? ", after " + fmt(samples[i - 1].time) : std::string()) +
                                 "; sample times must be finite and strictly increasing",
                             at);
        std::uint64_t rot_at = c.offset();
        FOURDGS_TRY(read_array(c, FieldName{"samples", i, "rotation"}, s.rotation.data(), 4, true));
        FOURDGS_TRY(check_quaternion(c.what(), FieldName{"samples", i, "rotation"}, s.rotation,
                                     rot_at));
        FOURDGS_TRY(read_array(c, FieldName{"samples", i, "translation"}, s.translation.data(), 3,
                               true));
    }
    return samples;
}

inline Result<TrajectoryInterpolation> read_trajectory_interpolation(Cursor& c) {
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(std::uint8_t v, c.u8("interpolation"));
    if (v > 1)
        return unsupported(refusal::kUnknownInterpolation, c.what(),
                           "interpolation is " + std::to_string(v) +
                               ", the registry defines 0 (linear) and 1 (step)",
                           at);
    return static_cast<TrajectoryInterpolation>(v);
}

inline Result<bool> read_flag_byte(Cursor& c, std::string_view field) {
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(std::uint8_t v, c.u8(field));
    if (v > 1)
        return malformed(refusal::kInvalidFlagValue, c.what(),
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
inline void put_samples(ByteWriter& out, const std::vector<TrajectorySample>& samples) {
    out.u32(static_cast<std::uint32_t>(samples.size()));
    for (const auto& s : samples) {
        out.f64(s.time);
        put_array(out, s.rotation);
        put_array(out, s.translation);
    }
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Parsers. Each: `r` must carry the record's opcode (else invalid_argument/wrong-opcode); returns
// the typed record or the first rule it breaks; views in the result borrow r.content.

// §5.1. Refuses flags bits 2-7 (reserved-flags-set, M014), sh_degree > 3 (invalid-sh-degree),
// a cutoff not finite or outside (0, 1) (invalid-cutoff) and a duration_sec not finite or
// negative (invalid-duration). temporal_model and profile are checked by the reader.
inline Result<Header> parse_header(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::header));
    Cursor c(r.content, r.content_offset(), "Header");
    Header h;
    FOURDGS_ASSIGN(h.profile, c.string("profile"));
    FOURDGS_ASSIGN(h.library, c.string("library"));
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(h.duration_sec, c.f64("duration_sec"));
    if (!std::isfinite(h.duration_sec) || h.duration_sec < 0)
        return detail::malformed(refusal::kInvalidDuration, "Header",
                                 "duration_sec is " + detail::fmt(h.duration_sec) +
                                     ", must be finite and not negative",
                                 at);
    FOURDGS_ASSIGN(h.gaussian_count, c.u64("gaussian_count"));
    at = c.offset();
    FOURDGS_ASSIGN(h.cutoff, c.f64("cutoff"));
    if (!(h.cutoff > 0 && h.cutoff < 1))  // NaN fails too
        return detail::malformed(refusal::kInvalidCutoff, "Header",
                                 "cutoff is " + detail::fmt(h.cutoff) +
                                     ", must be a finite value in (0, 1)",
                                 at);
    FOURDGS_ASSIGN(h.temporal_model, c.string("temporal_model"));
    FOURDGS_TRY(detail::read_array(c, {"aabb"}, h.aabb.data(), 6, false));
    at = c.offset();
    FOURDGS_ASSIGN(h.sh_degree, c.u8("sh_degree"));
    if (h.sh_degree > 3)
        return detail::malformed(refusal::kInvalidShDegree, "Header",
                                 "sh_degree is " + std::to_string(h.sh_degree) + ", must be 0..3",
                                 at);
    at = c.offset();
    FOURDGS_ASSIGN(h.flags, c.u8("flags"));
    if (h.flags & kReservedFlagBits)
        return detail::malformed(refusal::kReservedFlagsSet, "Header",
                                 "flags is 0x" + [&] {
                                     static const char* hex = "0123456789ABCDEF";
                                     return std::string{hex[h.flags >> 4], hex[h.flags & 15]};
                                 }() + ": bits 2-7 are reserved and must be 0",
                                 at);
    FOURDGS_ASSIGN(h.attributes, c.map("attributes"));
    return h;
}

// §5.2. Fixed 20 bytes; checks nothing about the offsets (the seeking reader does).
inline Result<Footer> parse_footer(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::footer));
    Cursor c(r.content, r.content_offset(), "Footer");
    Footer f;
    FOURDGS_ASSIGN(f.summary_start, c.u64("summary_start"));
    FOURDGS_ASSIGN(f.summary_offset_start, c.u64("summary_offset_start"));
    FOURDGS_ASSIGN(f.summary_crc, c.u32("summary_crc"));
    return f;
}

// §5.3. Refuses a bounds key "object_id" (invalid-object-id-bound, M018). Reads the appended SH
// bit depths; a count the record is too short for, more than three bands, or a depth outside 3..8
// reads as declaring none with sh_depths_malformed set, never a refusal (M024). Neither the scheme
// (the reader refuses it) nor non-finite steps (validators report them, §5.3) are refused here.
inline Result<Quantization> parse_quantization(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::quantization));
    Cursor c(r.content, r.content_offset(), "Quantization");
    Quantization q;
    FOURDGS_ASSIGN(q.scheme, c.string("scheme"));
    FOURDGS_TRY(detail::read_array(c, {"pos_origin"}, q.pos_origin.data(), 3, false));
    double* steps[] = {&q.step_pos,   &q.step_scale_log, &q.step_rot,  &q.step_rgb,
                       &q.step_alpha, &q.step_motion,    &q.step_time, &q.step_sigma_log};
    static constexpr std::string_view names[] = {"step_pos",   "step_scale_log", "step_rot",
                                                 "step_rgb",   "step_alpha",     "step_motion",
                                                 "step_time",  "step_sigma_log"};
    for (std::size_t i = 0; i < 8; ++i)
        FOURDGS_TRY(detail::read_array(c, {names[i]}, steps[i], 1, false));
    FOURDGS_ASSIGN(q.step_sh, c.u8("step_sh"));
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(q.bounds, c.map("bounds"));
    for (const auto& [k, v] : q.bounds)
        if (k == "object_id")
            return detail::malformed(refusal::kInvalidObjectIdBound, "Quantization",
                                     "bounds declares object_id = " + detail::quoted(v) +
                                         "; object_id is an exact label and has no error bound",
                                     at);
    if (!c.at_end()) {
        std::uint8_t count = *c.u8("sh_depth_count");
        bool bad = count > 3 || count > c.remaining();
        if (!bad) {
            for (std::uint8_t i = 0; i < count; ++i) {
                std::uint8_t d = *c.u8("sh_depths");
                if (d < 3 || d > 8) bad = true;
                q.sh_depths.push_back(d);
            }
        }
        if (bad) {
            q.sh_depths.clear();
            q.sh_depths_malformed = true;
        }
    }
    return q;
}

// §5.4. count × {lo, hi}, the count checked before allocating. Values are not judged here.
inline Result<WindowTable> parse_window_table(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::window_table));
    Cursor c(r.content, r.content_offset(), "Window Table");
    WindowTable t;
    FOURDGS_ASSIGN(std::uint32_t count, c.u32("count"));
    FOURDGS_TRY(c.check_count("count", count, kWindowSize));
    t.windows.resize(count);
    for (auto& w : t.windows) {
        FOURDGS_ASSIGN(w.lo, c.f64("lo"));
        FOURDGS_ASSIGN(w.hi, c.f64("hi"));
    }
    return t;
}

// §5.5. Views the records block; compression and uncompressed_size are honoured and checked by
// the decode layer.
inline Result<ChunkRecord> parse_chunk(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::chunk));
    Cursor c(r.content, r.content_offset(), "Chunk");
    ChunkRecord ch;
    FOURDGS_ASSIGN(ch.t0, c.f64("t0"));
    FOURDGS_ASSIGN(ch.t1, c.f64("t1"));
    FOURDGS_ASSIGN(ch.level, c.u32("level"));
    FOURDGS_ASSIGN(ch.count, c.u32("count"));
    FOURDGS_ASSIGN(ch.compression, c.string("compression"));
    FOURDGS_ASSIGN(ch.uncompressed_size, c.u64("uncompressed_size"));
    FOURDGS_TRY(detail::read_bytes_view(c, "records", ch.records, ch.records_offset));
    return ch;
}

// §5.7. Refuses a band outside 1..3 (invalid-sh-band). Frames the inner stream by its 17-byte
// header's payload_length without decoding it; a stream that runs past the record is
// record-too-short.
inline Result<ShBandRecord> parse_sh_band(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::sh_band));
    Cursor c(r.content, r.content_offset(), "SH Band Stream");
    ShBandRecord s;
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(s.band, c.u8("band"));
    if (s.band < 1 || s.band > 3)
        return detail::malformed(refusal::kInvalidShBand, "SH Band Stream",
                                 "band is " + std::to_string(s.band) + ", must be 1..3", at);
    s.stream_offset = c.offset();
    FOURDGS_TRY(c.need("stream header", detail::kBareStreamHeaderSize));
    std::uint64_t payload_length = 0;
    std::memcpy(&payload_length, c.rest().data() + detail::kBareStreamPayloadLengthAt, 8);
    if (payload_length > c.remaining() - detail::kBareStreamHeaderSize)
        return c.short_error("stream payload", detail::kBareStreamHeaderSize + payload_length);
    FOURDGS_ASSIGN(s.stream, c.take("stream", detail::kBareStreamHeaderSize + payload_length));
    return s;
}

// §5.8. band_count checked before allocating; band bytes outside 1..3 are invalid-sh-band. The
// six keyframe-delta fields are read when any content remains after the bands (all 28 bytes
// must then be there); chunk_kind and delta_mode must be 0 or 1 (invalid-chunk-kind,
// invalid-delta-mode). Agreement with the record it frames is the reader's check (M033).
inline Result<ChunkIndex> parse_chunk_index(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::chunk_index));
    Cursor c(r.content, r.content_offset(), "Chunk Index");
    ChunkIndex e;
    FOURDGS_ASSIGN(e.t0, c.f64("t0"));
    FOURDGS_ASSIGN(e.t1, c.f64("t1"));
    FOURDGS_ASSIGN(e.chunk_offset, c.u64("chunk_offset"));
    FOURDGS_ASSIGN(e.chunk_length, c.u64("chunk_length"));
    FOURDGS_ASSIGN(e.gaussian_count, c.u32("gaussian_count"));
    FOURDGS_ASSIGN(std::uint32_t band_count, c.u32("band_count"));
    FOURDGS_TRY(c.check_count("band_count", band_count, kIndexBandSize));
    e.bands.resize(band_count);
    for (std::uint32_t i = 0; i < band_count; ++i) {
        auto& b = e.bands[i];
        std::uint64_t at = c.offset();
        b.band = *c.u8("band");
        if (b.band < 1 || b.band > 3)
            return detail::malformed(refusal::kInvalidShBand, "Chunk Index",
                                     "bands[" + std::to_string(i) + "].band is " +
                                         std::to_string(b.band) + ", must be 1..3",
                                     at);
        b.offset = *c.u64("offset");
        b.length = *c.u64("length");
    }
    // The six keyframe-delta fields (§5.8) when they are there; fewer bytes than they take are
    // some later appended field this reader does not know, ignored by content_length (M009).
    if (c.remaining() >= kKeyframeIndexFieldsSize) {
        KeyframeIndexFields k;
        std::uint64_t at = c.offset();
        k.chunk_kind = *c.u8("chunk_kind");
        if (k.chunk_kind > 1)
            return detail::malformed(refusal::kInvalidChunkKind, "Chunk Index",
                                     "chunk_kind is " + std::to_string(k.chunk_kind) +
                                         ", must be 0 (keyframe) or 1 (delta)",
                                     at);
        at = c.offset();
        k.delta_mode = *c.u8("delta_mode");
        if (k.delta_mode > 1)
            return detail::malformed(refusal::kInvalidDeltaMode, "Chunk Index",
                                     "delta_mode is " + std::to_string(k.delta_mode) +
                                         ", must be 0 (keyframe-referenced) or 1 (chained)",
                                     at);
        k.reference_offset = *c.u64("reference_offset");
        k.keyframe_offset = *c.u64("keyframe_offset");
        k.depth = *c.u16("depth");
        k.live_count = *c.u64("live_count");
        e.keyframe = k;
    }
    return e;
}

// §5.9. The payload is viewed, never copied. Interpreted as source 0 by the audio layer.
inline Result<AudioLegacy> parse_audio_legacy(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::audio_legacy));
    Cursor c(r.content, r.content_offset(), "Audio");
    AudioLegacy a;
    FOURDGS_ASSIGN(a.codec, c.string("codec"));
    FOURDGS_ASSIGN(a.start_sec, c.f64("start_sec"));
    FOURDGS_TRY(detail::read_bytes_view(c, "data", a.data, a.data_offset));
    return a;
}

// §5.10. keyframe_count checked before allocating; interpolation other than "linear"/"spline" is
// unsupported/unknown-interpolation; loop other than 0/1 is invalid-flag-value.
inline Result<Camera> parse_camera(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::camera));
    Cursor c(r.content, r.content_offset(), "Camera");
    Camera cam;
    FOURDGS_ASSIGN(cam.fov_y_deg, c.f64("fov_y_deg"));
    FOURDGS_TRY(detail::read_array(c, {"position"}, cam.position.data(), 3, false));
    FOURDGS_TRY(detail::read_array(c, {"target"}, cam.target.data(), 3, false));
    FOURDGS_ASSIGN(std::uint32_t count, c.u32("keyframe_count"));
    FOURDGS_TRY(c.check_count("keyframe_count", count, kCameraKeyframeSize));
    cam.keyframes.resize(count);
    for (auto& k : cam.keyframes) {
        k.time = *c.f64("time");
        FOURDGS_TRY(detail::read_array(c, {"keyframes.position"}, k.position.data(), 3, false));
        FOURDGS_TRY(detail::read_array(c, {"keyframes.target"}, k.target.data(), 3, false));
    }
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(cam.interpolation, c.string("interpolation"));
    if (cam.interpolation != "linear" && cam.interpolation != "spline")
        return detail::unsupported(refusal::kUnknownInterpolation, "Camera",
                                   "interpolation is " + detail::quoted(cam.interpolation) +
                                       ", the registry defines \"linear\" and \"spline\"",
                                   at);
    FOURDGS_ASSIGN(cam.loop, detail::read_flag_byte(c, "loop"));
    return cam;
}

// §5.11.
inline Result<Metadata> parse_metadata(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::metadata));
    Cursor c(r.content, r.content_offset(), "Metadata");
    Metadata m;
    FOURDGS_ASSIGN(m.name, c.string("name"));
    FOURDGS_ASSIGN(m.entries, c.map("entries"));
    return m;
}

// §5.12. Advisory; nothing is checked against the chunks here.
inline Result<Statistics> parse_statistics(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::statistics));
    Cursor c(r.content, r.content_offset(), "Statistics");
    Statistics s;
    FOURDGS_ASSIGN(s.gaussian_count, c.u64("gaussian_count"));
    FOURDGS_ASSIGN(s.chunk_count, c.u32("chunk_count"));
    FOURDGS_ASSIGN(s.duration_sec, c.f64("duration_sec"));
    FOURDGS_TRY(detail::read_array(c, {"aabb"}, s.aabb.data(), 6, false));
    return s;
}

// §5.13. The payload is viewed, never copied.
inline Result<Attachment> parse_attachment(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::attachment));
    Cursor c(r.content, r.content_offset(), "Attachment");
    Attachment a;
    FOURDGS_ASSIGN(a.name, c.string("name"));
    FOURDGS_ASSIGN(a.media_type, c.string("media_type"));
    FOURDGS_TRY(detail::read_bytes_view(c, "data", a.data, a.data_offset));
    return a;
}

// §5.14.
inline Result<SummaryOffset> parse_summary_offset(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::summary_offset));
    Cursor c(r.content, r.content_offset(), "Summary Offset");
    SummaryOffset s;
    FOURDGS_ASSIGN(s.group_opcode, c.u8("group_opcode"));
    FOURDGS_ASSIGN(s.group_start, c.u64("group_start"));
    FOURDGS_ASSIGN(s.group_length, c.u64("group_length"));
    return s;
}

// §5.18. Refuses a delta_mode other than 0/1 (invalid-delta-mode). References (backwards only,
// same level, M096/M097) and the codec are checked by the keyframe-delta layer.
inline Result<DeltaChunk> parse_delta_chunk(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::delta_chunk));
    Cursor c(r.content, r.content_offset(), "Delta Chunk");
    DeltaChunk d;
    FOURDGS_ASSIGN(d.t0, c.f64("t0"));
    FOURDGS_ASSIGN(d.t1, c.f64("t1"));
    FOURDGS_ASSIGN(d.level, c.u32("level"));
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(d.delta_mode, c.u8("delta_mode"));
    if (d.delta_mode > 1)
        return detail::malformed(refusal::kInvalidDeltaMode, "Delta Chunk",
                                 "delta_mode is " + std::to_string(d.delta_mode) +
                                     ", must be 0 (keyframe-referenced) or 1 (chained)",
                                 at);
    FOURDGS_ASSIGN(d.reference_offset, c.u64("reference_offset"));
    FOURDGS_ASSIGN(d.keyframe_offset, c.u64("keyframe_offset"));
    FOURDGS_ASSIGN(d.depth, c.u16("depth"));
    FOURDGS_ASSIGN(d.update_count, c.u32("update_count"));
    FOURDGS_ASSIGN(d.birth_count, c.u32("birth_count"));
    FOURDGS_ASSIGN(d.death_count, c.u32("death_count"));
    FOURDGS_ASSIGN(d.compression, c.string("compression"));
    FOURDGS_ASSIGN(d.uncompressed_size, c.u64("uncompressed_size"));
    FOURDGS_TRY(detail::read_bytes_view(c, "records", d.records, d.records_offset));
    return d;
}

// §5.18: splits a decompressed Delta Chunk block into `bytes updates; bytes births; bytes
// deaths`. `base_offset` is reported in errors and offsets: the block's file offset when it is
// stored uncompressed (records_offset), otherwise whatever position the caller wants named. A
// sub-block running past the block is record-too-short; bytes after the deaths block are
// malformed/delta-block-trailing-bytes (the block is exactly three sub-blocks; a stream there
// would belong to no group, M095). Views point into `decompressed`.
inline Result<DeltaGroups> split_delta_groups(Bytes decompressed, std::uint64_t base_offset) {
    Cursor c(decompressed, base_offset, "Delta Chunk records");
    DeltaGroups g;
    FOURDGS_TRY(detail::read_bytes_view(c, "updates", g.updates, g.updates_offset));
    FOURDGS_TRY(detail::read_bytes_view(c, "births", g.births, g.births_offset));
    FOURDGS_TRY(detail::read_bytes_view(c, "deaths", g.deaths, g.deaths_offset));
    if (!c.at_end())
        return detail::malformed(refusal::kDeltaBlockTrailingBytes, "Delta Chunk records",
                                 std::to_string(c.remaining()) +
                                     " bytes follow the deaths sub-block; the block holds "
                                     "exactly updates, births and deaths",
                                 c.offset());
    return g;
}

// §5.16. Refuses: empty codec (empty-audio-codec), duration_sec not finite or not positive
// (invalid-audio-duration), non-finite start_sec/gain/position/rotation (non-finite-value), gain
// < 0 (invalid-audio-gain), flags bits 2-7 (reserved-flags-set), a zero rotation
// (zero-quaternion), the spatial flag without channel_layout "mono" (spatial-source-not-mono),
// keyframe times non-finite or not strictly increasing (non-increasing-keyframe-times, naming
// the index) and interpolation other than "linear"/"step" (unsupported/unknown-interpolation).
// Keyframes inside [0, Header.duration_sec] need the Header: check_audio_keyframes_within.
inline Result<AudioSource> parse_audio_source(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::audio_source));
    constexpr std::string_view what = "Audio Source";
    Cursor c(r.content, r.content_offset(), what);
    AudioSource s;
    FOURDGS_ASSIGN(s.source_id, c.u32("source_id"));
    FOURDGS_ASSIGN(s.name, c.string("name"));
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(s.codec, c.string("codec"));
    if (s.codec.empty())
        return detail::malformed(refusal::kEmptyAudioCodec, what,
                                 "source " + std::to_string(s.source_id) +
                                     " has an empty codec; codec must be non-empty",
                                 at);
    FOURDGS_ASSIGN(s.channel_layout, c.string("channel_layout"));
    FOURDGS_ASSIGN(s.data_length, c.u64("data_length"));
    FOURDGS_TRY(detail::read_array(c, {"start_sec"}, &s.start_sec, 1, true));
    at = c.offset();
    FOURDGS_ASSIGN(s.duration_sec, c.f64("duration_sec"));
    if (!(std::isfinite(s.duration_sec) && s.duration_sec > 0))
        return detail::malformed(refusal::kInvalidAudioDuration, what,
                                 "source " + std::to_string(s.source_id) + " duration_sec is " +
                                     detail::fmt(s.duration_sec) + ", must be finite and positive",
                                 at);
    at = c.offset();
    FOURDGS_TRY(detail::read_array(c, {"gain"}, &s.gain, 1, true));
    if (s.gain < 0)
        return detail::malformed(refusal::kInvalidAudioGain, what,
                                 "source " + std::to_string(s.source_id) + " gain is " +
                                     detail::fmt(s.gain) + ", must not be negative",
                                 at);
    at = c.offset();
    FOURDGS_ASSIGN(s.flags, c.u8("flags"));
    if (s.flags & kReservedFlagBits)
        return detail::malformed(refusal::kReservedFlagsSet, what,
                                 "source " + std::to_string(s.source_id) + " flags is " +
                                     std::to_string(s.flags) + ": bits 2-7 are reserved",
                                 at);
    if (s.spatial() && s.channel_layout != "mono")
        return detail::malformed(refusal::kSpatialSourceNotMono, what,
                                 "source " + std::to_string(s.source_id) +
                                     " is a spatial point source with channel_layout " +
                                     detail::quoted(s.channel_layout) + "; it must be \"mono\"",
                                 at);
    FOURDGS_TRY(detail::read_array(c, {"position"}, s.position.data(), 3, true));
    at = c.offset();
    FOURDGS_TRY(detail::read_array(c, {"rotation"}, s.rotation.data(), 4, true));
    FOURDGS_TRY(detail::check_quaternion(what, {"rotation"}, s.rotation, at));
    FOURDGS_ASSIGN(std::uint32_t count, c.u32("keyframe_count"));
    FOURDGS_TRY(c.check_count("keyframe_count", count, kAudioKeyframeSize));
    s.keyframes.resize(count);
    for (std::uint32_t i = 0; i < count; ++i) {
        auto& k = s.keyframes[i];
        at = c.offset();
        k.time = *c.f64("time");
        if (!std::isfinite(k.time) || (i > 0 && !(k.time > s.keyframes[i - 1].time)))
            return detail::malformed(
                refusal::kNonIncreasingKeyframeTimes, what,
                "source " + std::to_string(s.source_id) + " keyframes[" + std::to_string(i) +
                    "].time is " + detail::fmt(k.time) +
                    (i > 0 ? ", after " + detail::fmt(s.keyframes[i - 1].time) : std::string()) +
                    "; keyframe times must be finite and strictly increasing",
                at);
        FOURDGS_TRY(detail::read_array(c, {"keyframes", i, "position"}, k.position.data(), 3, true));
        at = c.offset();
        FOURDGS_TRY(detail::read_array(c, {"keyframes", i, "rotation"}, k.rotation.data(), 4, true));
        FOURDGS_TRY(detail::check_quaternion(what, {"keyframes", i, "rotation"}, k.rotation, at));
    }
    at = c.offset();
    FOURDGS_ASSIGN(s.interpolation, c.string("interpolation"));
    if (s.interpolation != "linear" && s.interpolation != "step")
        return detail::unsupported(refusal::kUnknownInterpolation, what,
                                   "source " + std::to_string(s.source_id) + " interpolation is " +
                                       detail::quoted(s.interpolation) +
                                       ", must be \"linear\" or \"step\"",
                                   at);
    return s;
}

// §5.16 (M088): every keyframe time lies in [0, duration] (the Header's duration_sec).
// Refusal keyframe-time-out-of-range naming the source and the keyframe index; no offset.
inline Status check_audio_keyframes_within(const AudioSource& s, double duration) {
    for (std::size_t i = 0; i < s.keyframes.size(); ++i) {
        double t = s.keyframes[i].time;
        if (!(t >= 0 && t <= duration))
            return make_error(ErrorKind::malformed, refusal::kKeyframeTimeOutOfRange,
                              "Audio Source: source " + std::to_string(s.source_id) +
                                  " keyframes[" + std::to_string(i) + "].time is " +
                                  detail::fmt(t) + ", outside [0, " + detail::fmt(duration) +
                                  "] (Header duration_sec)");
    }
    return ok_status();
}

// §5.17. The payload is viewed; its length against data_length is the audio layer's (M091).
inline Result<AudioData> parse_audio_data(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::audio_data));
    Cursor c(r.content, r.content_offset(), "Audio Data");
    AudioData a;
    FOURDGS_ASSIGN(a.source_id, c.u32("source_id"));
    FOURDGS_TRY(detail::read_bytes_view(c, "data", a.data, a.data_offset));
    return a;
}

// §5.15.2. Refuses handedness/axis/length_unit values the registry does not list
// (unsupported/unknown-enum-value), up_axis and forward_axis on the same axis ignoring sign
// (degenerate-basis naming both, M040/M041) and metres_per_unit non-finite or negative
// (invalid-metres-per-unit, M042). A unit/number disagreement is not refused (M045):
// see length_unit_agrees.
inline Result<CoordinateFrame> parse_coordinate_frame(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::coordinate_frame));
    constexpr std::string_view what = "Coordinate Frame";
    Cursor c(r.content, r.content_offset(), what);
    CoordinateFrame f;
    FOURDGS_ASSIGN(f.name, c.string("name"));
    auto read_enum = [&](std::string_view field, std::uint8_t max,
                         std::string_view legal) -> Result<std::uint8_t> {
        std::uint64_t at = c.offset();
        FOURDGS_ASSIGN(std::uint8_t v, c.u8(field));
        if (v > max)
            return detail::unsupported(refusal::kUnknownEnumValue, what,
                                       "frame " + detail::quoted(f.name) + " " +
                                           std::string(field) + " is " + std::to_string(v) +
                                           ", the registry defines " + std::string(legal),
                                       at);
        return v;
    };
    FOURDGS_ASSIGN(std::uint8_t hand, read_enum("handedness", 2, "0..2"));
    std::uint64_t up_at = c.offset();
    FOURDGS_ASSIGN(std::uint8_t up, read_enum("up_axis", 5, "0..5"));
    FOURDGS_ASSIGN(std::uint8_t fwd, read_enum("forward_axis", 5, "0..5"));
    FOURDGS_ASSIGN(std::uint8_t unit, read_enum("length_unit", 6, "0..6"));
    f.handedness = static_cast<Handedness>(hand);
    f.up_axis = static_cast<Axis>(up);
    f.forward_axis = static_cast<Axis>(fwd);
    f.length_unit = static_cast<LengthUnit>(unit);
    if (up % 3 == fwd % 3)
        return detail::malformed(refusal::kDegenerateBasis, what,
                                 "frame " + detail::quoted(f.name) + " up_axis is " +
                                     std::string(to_string(f.up_axis)) + " and forward_axis is " +
                                     std::string(to_string(f.forward_axis)) +
                                     ": they name the same axis and do not form a basis",
                                 up_at);
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(f.metres_per_unit, c.f64("metres_per_unit"));
    if (!std::isfinite(f.metres_per_unit) || f.metres_per_unit < 0)
        return detail::malformed(refusal::kInvalidMetresPerUnit, what,
                                 "frame " + detail::quoted(f.name) + " metres_per_unit is " +
                                     detail::fmt(f.metres_per_unit) +
                                     ", must be finite and not negative",
                                 at);
    return f;
}

// §5.15.2 (M043/M044): whether length_unit and metres_per_unit agree, within a relative 1e-6
// (so a unit written through f32 still agrees). An unspecified unit or 0.0 metres means
// "unknown" and never disagrees. On disagreement metres_per_unit is the authority (M045).
inline bool length_unit_agrees(const CoordinateFrame& f) {
    double nominal = metres_per(f.length_unit);
    if (nominal == 0 || f.metres_per_unit == 0) return true;
    return std::fabs(f.metres_per_unit - nominal) <= 1e-6 * nominal;
}

// §5.15.3. Refuses: a non-finite f64 (non-finite-value, M053); a camera_model the registry does
// not list (unsupported/unknown-camera-model); model != 0 with fx, fy, width_px or height_px
// zero, or model 0 with any of width, height, fx, fy, cx, cy, distortion_count non-zero
// (invalid-intrinsics, M054/M055); a distortion_count the model does not define
// (distortion-count-mismatch, M056); a zero rotation (zero-quaternion, M050); pose_reference
// other than 0/1 (invalid-flag-value); pose_reference 1 with an empty rig_name
// (missing-rig-trajectory). Resolving rig_name and unique names are the reader's (M049, M051).
inline Result<SensorCalibration> parse_sensor_calibration(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::sensor_calibration));
    constexpr std::string_view what = "Sensor Calibration";
    Cursor c(r.content, r.content_offset(), what);
    SensorCalibration s;
    FOURDGS_ASSIGN(s.name, c.string("name"));
    FOURDGS_ASSIGN(s.modality, c.string("modality"));
    std::string who = "sensor " + detail::quoted(s.name);
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(std::uint8_t model, c.u8("camera_model"));
    if (model > 3)
        return detail::unsupported(refusal::kUnknownCameraModel, what,
                                   who + " camera_model is " + std::to_string(model) +
                                       ", the registry defines 0..3",
                                   at);
    s.camera_model = static_cast<CameraModel>(model);
    std::uint64_t intr_at = c.offset();
    FOURDGS_ASSIGN(s.width_px, c.u32("width_px"));
    FOURDGS_ASSIGN(s.height_px, c.u32("height_px"));
    FOURDGS_TRY(detail::read_array(c, {"fx"}, &s.fx, 1, true));
    FOURDGS_TRY(detail::read_array(c, {"fy"}, &s.fy, 1, true));
    FOURDGS_TRY(detail::read_array(c, {"cx"}, &s.cx, 1, true));
    FOURDGS_TRY(detail::read_array(c, {"cy"}, &s.cy, 1, true));
    std::uint64_t count_at = c.offset();
    FOURDGS_ASSIGN(std::uint8_t dcount, c.u8("distortion_count"));
    std::string intrinsics = "width_px " + std::to_string(s.width_px) + ", height_px " +
                             std::to_string(s.height_px) + ", fx " + detail::fmt(s.fx) + ", fy " +
                             detail::fmt(s.fy);
    if (s.camera_model == CameraModel::none) {
        if (s.width_px || s.height_px || s.fx != 0 || s.fy != 0 || s.cx != 0 || s.cy != 0 ||
            dcount != 0)
            return detail::malformed(
                refusal::kInvalidIntrinsics, what,
                who + " has camera_model 0 (not a camera) but " + intrinsics + ", cx " +
                    detail::fmt(s.cx) + ", cy " + detail::fmt(s.cy) + ", distortion_count " +
                    std::to_string(dcount) + "; all must be 0",
                intr_at);
    } else {
        if (s.width_px == 0 || s.height_px == 0 || s.fx == 0 || s.fy == 0)
            return detail::malformed(refusal::kInvalidIntrinsics, what,
                                     who + " camera_model " + std::to_string(model) + " (" +
                                         std::string(to_string(s.camera_model)) + ") has " +
                                         intrinsics + "; all must be non-zero",
                                     intr_at);
        if (!distortion_count_fits(s.camera_model, dcount))
            return detail::malformed(
                refusal::kDistortionCountMismatch, what,
                who + " distortion_count is " + std::to_string(dcount) + " but camera_model " +
                    std::string(to_string(s.camera_model)) + " defines " +
                    (s.camera_model == CameraModel::brown_conrady
                         ? "5 or 8"
                         : (s.camera_model == CameraModel::kannala_brandt ? "4" : "0")),
                count_at);
    }
    FOURDGS_TRY(c.check_count("distortion_count", dcount, 8));
    s.distortion.resize(dcount);
    FOURDGS_TRY(detail::read_array(c, {"distortion"}, s.distortion.data(), dcount, true));
    at = c.offset();
    FOURDGS_TRY(detail::read_array(c, {"rotation"}, s.rotation.data(), 4, true));
    FOURDGS_TRY(detail::check_quaternion(what, {"rotation"}, s.rotation, at));
    FOURDGS_TRY(detail::read_array(c, {"translation"}, s.translation.data(), 3, true));
    at = c.offset();
    FOURDGS_ASSIGN(bool rig, detail::read_flag_byte(c, "pose_reference"));
    s.pose_reference = rig ? PoseReference::rig : PoseReference::scene;
    FOURDGS_ASSIGN(s.rig_name, c.string("rig_name"));
    if (rig && s.rig_name.empty())
        return detail::malformed(refusal::kMissingRigTrajectory, what,
                                 who + " has pose_reference 1 (rig) but an empty rig_name; the "
                                       "extrinsic is relative to no Rig Trajectory",
                                 at);
    return s;
}

// §5.15.4. Refuses interpolation other than 0/1 (unsupported/unknown-interpolation), sample times
// non-finite or not strictly increasing (non-increasing-sample-times naming the index,
// M059/M060), non-finite rotation/translation (non-finite-value) and zero rotations
// (zero-quaternion). sample_count is checked before allocating.
inline Result<RigTrajectory> parse_rig_trajectory(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::rig_trajectory));
    Cursor c(r.content, r.content_offset(), "Rig Trajectory");
    RigTrajectory t;
    FOURDGS_ASSIGN(t.name, c.string("name"));
    FOURDGS_ASSIGN(t.interpolation, detail::read_trajectory_interpolation(c));
    FOURDGS_ASSIGN(std::uint32_t count, c.u32("sample_count"));
    FOURDGS_ASSIGN(t.samples, detail::read_samples(c, count));
    return t;
}

// §5.15.5. Refuses any non-finite field, latitude outside [-90, 90], longitude outside
// [-180, 180] or heading outside [0, 360) (geodetic-out-of-range, M064/M065). Resolving
// frame_name is the reader's (M063).
inline Result<GeodeticAnchor> parse_geodetic_anchor(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::geodetic_anchor));
    constexpr std::string_view what = "Geodetic Anchor";
    Cursor c(r.content, r.content_offset(), what);
    GeodeticAnchor g;
    FOURDGS_ASSIGN(g.frame_name, c.string("frame_name"));
    struct Field {
        std::string_view name;
        double* value;
        double lo, hi;
        bool hi_open;
    };
    constexpr double inf = std::numeric_limits<double>::infinity();
    Field fields[] = {{"latitude_deg", &g.latitude_deg, -90, 90, false},
                      {"longitude_deg", &g.longitude_deg, -180, 180, false},
                      {"altitude_m", &g.altitude_m, -inf, inf, false},
                      {"heading_deg", &g.heading_deg, 0, 360, true}};
    for (const Field& f : fields) {
        std::uint64_t at = c.offset();
        FOURDGS_ASSIGN(*f.value, c.f64(f.name));
        double v = *f.value;
        bool ok = std::isfinite(v) && v >= f.lo && (f.hi_open ? v < f.hi : v <= f.hi);
        if (!ok)
            return detail::malformed(
                refusal::kGeodeticOutOfRange, what,
                "anchor for frame " + detail::quoted(g.frame_name) + " " + std::string(f.name) +
                    " is " + detail::fmt(v) +
                    (std::isfinite(f.lo) ? ", must be finite and in [" + detail::fmt(f.lo) + ", " +
                                               detail::fmt(f.hi) + (f.hi_open ? ")" : "]")
                                         : std::string(", must be finite")),
                at);
    }
    return g;
}

// §5.15.6. object_count and each embedding are checked against the remaining bytes before
// allocating (count-exceeds-record, M071/M072); dynamics_present/has_embedding other than 0/1 is
// invalid-flag-value (M070); a non-finite f32 is non-finite-value (M069); two entries with one
// id are duplicate-object-id naming it (M067/M068). A second table is the reader's (M073).
inline Result<ObjectTable> parse_object_table(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::object_table));
    constexpr std::string_view what = "Object Table";
    Cursor c(r.content, r.content_offset(), what);
    ObjectTable t;
    FOURDGS_ASSIGN(std::uint32_t count, c.u32("object_count"));
    FOURDGS_ASSIGN(t.embedding_dim, c.u16("embedding_dim"));
    // object_id + empty label + anchor + dynamics_present (+ has_embedding).
    std::uint64_t min_entry = 4 + 4 + 12 + 1 + (t.embedding_dim > 0 ? 1 : 0);
    FOURDGS_TRY(c.check_count("object_count", count, min_entry));
    t.entries.resize(count);
    std::unordered_set<std::uint32_t> seen;
    seen.reserve(count);
    for (std::uint32_t i = 0; i < count; ++i) {
        auto& e = t.entries[i];
        std::uint64_t at = c.offset();
        FOURDGS_ASSIGN(e.object_id, c.u32("object_id"));
        if (!seen.insert(e.object_id).second)
            return detail::malformed(refusal::kDuplicateObjectId, what,
                                     "entries[" + std::to_string(i) + "] repeats object_id " +
                                         std::to_string(e.object_id) +
                                         "; entries must have distinct ids",
                                     at);
        FOURDGS_ASSIGN(e.label, c.string("label"));
        FOURDGS_TRY(detail::read_array(c, {"entries", i, "anchor"}, e.anchor.data(), 3, true));
        FOURDGS_ASSIGN(bool dyn, detail::read_flag_byte(c, "dynamics_present"));
        if (dyn) {
            ObjectTable::Dynamics d;
            FOURDGS_TRY(detail::read_array(c, {"entries", i, "velocity"}, d.velocity.data(), 3, true));
            FOURDGS_TRY(detail::read_array(c, {"entries", i, "angular_velocity"},
                                           d.angular_velocity.data(), 3, true));
            FOURDGS_TRY(detail::read_array(c, {"entries", i, "acceleration"},
                                           d.acceleration.data(), 3, true));
            e.dynamics = d;
        }
        if (t.embedding_dim > 0) {
            FOURDGS_ASSIGN(bool emb, detail::read_flag_byte(c, "has_embedding"));
            if (emb) {
                FOURDGS_TRY(c.check_count("embedding_dim", t.embedding_dim, 4));
                std::vector<float> v(t.embedding_dim);
                FOURDGS_TRY(detail::read_array(c, {"entries", i, "embedding"}, v.data(), v.size(),
                                               true));
                e.embedding = std::move(v);
            }
        }
    }
    return t;
}

// §5.15.7. Refuses object_id 0 (track-names-background, M078) and everything Rig Trajectory's
// pose rules refuse (M074-M077). One track per id is the reader's (M079).
inline Result<ObjectTrack> parse_object_track(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::object_track));
    Cursor c(r.content, r.content_offset(), "Object Track");
    ObjectTrack t;
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(t.object_id, c.u32("object_id"));
    if (t.object_id == 0)
        return detail::malformed(refusal::kTrackNamesBackground, "Object Track",
                                 "object_id is 0, which means no object; a track must name one",
                                 at);
    FOURDGS_ASSIGN(t.interpolation, detail::read_trajectory_interpolation(c));
    FOURDGS_ASSIGN(std::uint32_t count, c.u32("sample_count"));
    FOURDGS_ASSIGN(t.samples, detail::read_samples(c, count));
    return t;
}

// ---------------------------------------------------------------------------------------------
// Writers. Each appends the whole framed record (opcode, content_length, content) exactly as the
// struct says; they validate nothing, so a test can write a record that breaks a rule. Counts come
// from the vectors' sizes. Quantization writes the appended SH depths only when sh_depths is
// non-empty; ChunkIndex writes the keyframe fields only when present; ObjectTable writes exactly
// embedding_dim floats per embedding (precondition: embedding->size() == embedding_dim).

inline void write(ByteWriter& out, const Header& h) {
    std::size_t at = detail::begin_record(out, op::header);
    out.string(h.profile);
    out.string(h.library);
    out.f64(h.duration_sec);
    out.u64(h.gaussian_count);
    out.f64(h.cutoff);
    out.string(h.temporal_model);
    detail::put_array(out, h.aabb);
    out.u8(h.sh_degree);
    out.u8(h.flags);
    out.map(h.attributes);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const Footer& f) {
    std::size_t at = detail::begin_record(out, op::footer);
    out.u64(f.summary_start);
    out.u64(f.summary_offset_start);
    out.u32(f.summary_crc);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const Quantization& q) {
    std::size_t at = detail::begin_record(out, op::quantization);
    out.string(q.scheme);
    detail::put_array(out, q.pos_origin);
    for (double s : {q.step_pos, q.step_scale_log, q.step_rot, q.step_rgb, q.step_alpha,
                     q.step_motion, q.step_time, q.step_sigma_log})
        out.f64(s);
    out.u8(q.step_sh);
    out.map(q.bounds);
    if (!q.sh_depths.empty()) {
        out.u8(static_cast<std::uint8_t>(q.sh_depths.size()));
        for (std::uint8_t d : q.sh_depths) out.u8(d);
    }
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const WindowTable& t) {
    std::size_t at = detail::begin_record(out, op::window_table);
    out.u32(static_cast<std::uint32_t>(t.windows.size()));
    for (const auto& w : t.windows) {
        out.f64(w.lo);
        out.f64(w.hi);
    }
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const ChunkRecord& ch) {
    std::size_t at = detail::begin_record(out, op::chunk);
    out.f64(ch.t0);
    out.f64(ch.t1);
    out.u32(ch.level);
    out.u32(ch.count);
    out.string(ch.compression);
    out.u64(ch.uncompressed_size);
    out.bytes(ch.records);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const ShBandRecord& s) {
    std::size_t at = detail::begin_record(out, op::sh_band);
    out.u8(s.band);
    out.raw(s.stream);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const ChunkIndex& e) {
    std::size_t at = detail::begin_record(out, op::chunk_index);
    out.f64(e.t0);
    out.f64(e.t1);
    out.u64(e.chunk_offset);
    out.u64(e.chunk_length);
    out.u32(e.gaussian_count);
    out.u32(static_cast<std::uint32_t>(e.bands.size()));
    for (const auto& b : e.bands) {
        out.u8(b.band);
        out.u64(b.offset);
        out.u64(b.length);
    }
    if (e.keyframe) {
        const auto& k = *e.keyframe;
        out.u8(k.chunk_kind);
        out.u8(k.delta_mode);
        out.u64(k.reference_offset);
        out.u64(k.keyframe_offset);
        out.u16(k.depth);
        out.u64(k.live_count);
    }
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const AudioLegacy& a) {
    std::size_t at = detail::begin_record(out, op::audio_legacy);
    out.string(a.codec);
    out.f64(a.start_sec);
    out.bytes(a.data);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const Camera& cam) {
    std::size_t at = detail::begin_record(out, op::camera);
    out.f64(cam.fov_y_deg);
    detail::put_array(out, cam.position);
    detail::put_array(out, cam.target);
    out.u32(static_cast<std::uint32_t>(cam.keyframes.size()));
    for (const auto& k : cam.keyframes) {
        out.f64(k.time);
        detail::put_array(out, k.position);
        detail::put_array(out, k.target);
    }
    out.string(cam.interpolation);
    out.u8(cam.loop ? 1 : 0);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const Metadata& m) {
    std::size_t at = detail::begin_record(out, op::metadata);
    out.string(m.name);
    out.map(m.entries);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const Statistics& s) {
    std::size_t at = detail::begin_record(out, op::statistics);
    out.u64(s.gaussian_count);
    out.u32(s.chunk_count);
    out.f64(s.duration_sec);
    detail::put_array(out, s.aabb);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const Attachment& a) {
    std::size_t at = detail::begin_record(out, op::attachment);
    out.string(a.name);
    out.string(a.media_type);
    out.bytes(a.data);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const SummaryOffset& s) {
    std::size_t at = detail::begin_record(out, op::summary_offset);
    out.u8(s.group_opcode);
    out.u64(s.group_start);
    out.u64(s.group_length);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const DeltaChunk& d) {
    std::size_t at = detail::begin_record(out, op::delta_chunk);
    out.f64(d.t0);
    out.f64(d.t1);
    out.u32(d.level);
    out.u8(d.delta_mode);
    out.u64(d.reference_offset);
    out.u64(d.keyframe_offset);
    out.u16(d.depth);
    out.u32(d.update_count);
    out.u32(d.birth_count);
    out.u32(d.death_count);
    out.string(d.compression);
    out.u64(d.uncompressed_size);
    out.bytes(d.records);
    detail::end_record(out, at);
}

// Appends the uncompressed Delta Chunk block: the three sub-blocks as §2 bytes fields.
inline void write_delta_groups(ByteWriter& out, Bytes updates, Bytes births, Bytes deaths) {
    out.bytes(updates);
    out.bytes(births);
    out.bytes(deaths);
}

inline void write(ByteWriter& out, const AudioSource& s) {
    std::size_t at = detail::begin_record(out, op::audio_source);
    out.u32(s.source_id);
    out.string(s.name);
    out.string(s.codec);
    out.string(s.channel_layout);
    out.u64(s.data_length);
    out.f64(s.start_sec);
    out.f64(s.duration_sec);
    out.f64(s.gain);
    out.u8(s.flags);
    detail::put_array(out, s.position);
    detail::put_array(out, s.rotation);
    out.u32(static_cast<std::uint32_t>(s.keyframes.size()));
    for (const auto& k : s.keyframes) {
        out.f64(k.time);
        detail::put_array(out, k.position);
        detail::put_array(out, k.rotation);
    }
    out.string(s.interpolation);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const AudioData& a) {
    std::size_t at = detail::begin_record(out, op::audio_data);
    out.u32(a.source_id);
    out.bytes(a.data);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const CoordinateFrame& f) {
    std::size_t at = detail::begin_record(out, op::coordinate_frame);
    out.string(f.name);
    out.u8(static_cast<std::uint8_t>(f.handedness));
    out.u8(static_cast<std::uint8_t>(f.up_axis));
    out.u8(static_cast<std::uint8_t>(f.forward_axis));
    out.u8(static_cast<std::uint8_t>(f.length_unit));
    out.f64(f.metres_per_unit);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const SensorCalibration& s) {
    std::size_t at = detail::begin_record(out, op::sensor_calibration);
    out.string(s.name);
    out.string(s.modality);
    out.u8(static_cast<std::uint8_t>(s.camera_model));
    out.u32(s.width_px);
    out.u32(s.height_px);
    out.f64(s.fx);
    out.f64(s.fy);
    out.f64(s.cx);
    out.f64(s.cy);
    out.u8(static_cast<std::uint8_t>(s.distortion.size()));
    for (double d : s.distortion) out.f64(d);
    detail::put_array(out, s.rotation);
    detail::put_array(out, s.translation);
    out.u8(static_cast<std::uint8_t>(s.pose_reference));
    out.string(s.rig_name);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const RigTrajectory& t) {
    std::size_t at = detail::begin_record(out, op::rig_trajectory);
    out.string(t.name);
    out.u8(static_cast<std::uint8_t>(t.interpolation));
    detail::put_samples(out, t.samples);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const GeodeticAnchor& g) {
    std::size_t at = detail::begin_record(out, op::geodetic_anchor);
    out.string(g.frame_name);
    out.f64(g.latitude_deg);
    out.f64(g.longitude_deg);
    out.f64(g.altitude_m);
    out.f64(g.heading_deg);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const ObjectTable& t) {
    std::size_t at = detail::begin_record(out, op::object_table);
    out.u32(static_cast<std::uint32_t>(t.entries.size()));
    out.u16(t.embedding_dim);
    for (const auto& e : t.entries) {
        out.u32(e.object_id);
        out.string(e.label);
        detail::put_array(out, e.anchor);
        out.u8(e.dynamics ? 1 : 0);
        if (e.dynamics) {
            detail::put_array(out, e.dynamics->velocity);
            detail::put_array(out, e.dynamics->angular_velocity);
            detail::put_array(out, e.dynamics->acceleration);
        }
        if (t.embedding_dim > 0) {
            out.u8(e.embedding ? 1 : 0);
            if (e.embedding) {
                assert(e.embedding->size() == t.embedding_dim);
                for (std::size_t j = 0; j < t.embedding_dim; ++j)
                    out.f32(j < e.embedding->size() ? (*e.embedding)[j] : 0.0f);
            }
        }
    }
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const ObjectTrack& t) {
    std::size_t at = detail::begin_record(out, op::object_track);
    out.u32(t.object_id);
    out.u8(static_cast<std::uint8_t>(t.interpolation));
    detail::put_samples(out, t.samples);
    detail::end_record(out, at);
}

}  // namespace fourdgs
