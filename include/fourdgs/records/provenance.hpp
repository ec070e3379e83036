// fourdgs/records/provenance.hpp — capture provenance (§5.15.2-§5.15.5): the registry enumerations
// these records carry as bytes, Coordinate Frame, Sensor Calibration, Rig Trajectory and Geodetic
// Anchor, and the trajectory samples Object Track shares.
//
// Part of records.hpp (the umbrella states the conventions every parser and writer follows).
#pragma once

#include "fourdgs/export.hpp"
#include "fourdgs/records/common.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

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
constexpr std::string_view to_string(TrajectoryInterpolation i) noexcept {
    switch (i) {
        case TrajectoryInterpolation::linear: return "linear";
        case TrajectoryInterpolation::step: return "step";
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

namespace detail {

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
                             "samples[" + std::to_string(i) + "].time", fmt(s.time),
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
        return unsupported(refusal::kUnknownInterpolation, c.what(), "interpolation",
                           std::to_string(v),
                           "interpolation is " + std::to_string(v) +
                               ", the registry defines 0 (linear) and 1 (step)",
                           at);
    return static_cast<TrajectoryInterpolation>(v);
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

// Parsers.

// §5.15.2. Refuses handedness/axis/length_unit values the registry does not list
// (unsupported/unknown-enum-value), up_axis and forward_axis on the same axis ignoring sign
// (degenerate-basis naming both, M040/M041) and metres_per_unit non-finite or negative
// (invalid-metres-per-unit, M042). A unit/number disagreement is not refused (M045):
// see length_unit_agrees.
inline Result<CoordinateFrame> parse_coordinate_frame(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::coordinate_frame));
    constexpr std::string_view what = record_name(op::coordinate_frame);
    Cursor c(r.content, r.content_offset(), what);
    CoordinateFrame f;
    FOURDGS_ASSIGN(f.name, c.string("name"));
    auto read_enum = [&](std::string_view field, std::uint8_t max,
                         std::string_view legal) -> Result<std::uint8_t> {
        std::uint64_t at = c.offset();
        FOURDGS_ASSIGN(std::uint8_t v, c.u8(field));
        if (v > max)
            return detail::unsupported(refusal::kUnknownEnumValue, what, field, std::to_string(v),
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
        return detail::malformed(refusal::kDegenerateBasis, what, "", "",
                                 "frame " + detail::quoted(f.name) + " up_axis is " +
                                     std::string(to_string(f.up_axis)) + " and forward_axis is " +
                                     std::string(to_string(f.forward_axis)) +
                                     ": they name the same axis and do not form a basis",
                                 up_at)
            .about("Coordinate Frame.up_axis, Coordinate Frame.forward_axis",
                   std::string(to_string(f.up_axis)) + " / " +
                       std::string(to_string(f.forward_axis)));
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(f.metres_per_unit, c.f64("metres_per_unit"));
    if (!std::isfinite(f.metres_per_unit) || f.metres_per_unit < 0)
        return detail::malformed(refusal::kInvalidMetresPerUnit, what, "metres_per_unit",
                                 detail::fmt(f.metres_per_unit),
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
    constexpr std::string_view what = record_name(op::sensor_calibration);
    Cursor c(r.content, r.content_offset(), what);
    SensorCalibration s;
    FOURDGS_ASSIGN(s.name, c.string("name"));
    FOURDGS_ASSIGN(s.modality, c.string("modality"));
    std::string who = "sensor " + detail::quoted(s.name);
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(std::uint8_t model, c.u8("camera_model"));
    if (model > 3)
        return detail::unsupported(refusal::kUnknownCameraModel, what, "camera_model",
                                   std::to_string(model),
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
                refusal::kInvalidIntrinsics, what, "camera_model", std::to_string(model),
                who + " has camera_model 0 (not a camera) but " + intrinsics + ", cx " +
                    detail::fmt(s.cx) + ", cy " + detail::fmt(s.cy) + ", distortion_count " +
                    std::to_string(dcount) + "; all must be 0",
                intr_at);
    } else {
        if (s.width_px == 0 || s.height_px == 0 || s.fx == 0 || s.fy == 0)
            return detail::malformed(refusal::kInvalidIntrinsics, what, "camera_model",
                                     std::to_string(model),
                                     who + " camera_model " + std::to_string(model) + " (" +
                                         std::string(to_string(s.camera_model)) + ") has " +
                                         intrinsics + "; all must be non-zero",
                                     intr_at);
        if (!distortion_count_fits(s.camera_model, dcount))
            return detail::malformed(
                refusal::kDistortionCountMismatch, what, "distortion_count",
                std::to_string(dcount),
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
        return detail::malformed(refusal::kMissingRigTrajectory, what, "rig_name", "",
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
    Cursor c(r.content, r.content_offset(), record_name(op::rig_trajectory));
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
    constexpr std::string_view what = record_name(op::geodetic_anchor);
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
                refusal::kGeodeticOutOfRange, what, f.name, detail::fmt(v),
                "anchor for frame " + detail::quoted(g.frame_name) + " " + std::string(f.name) +
                    " is " + detail::fmt(v) +
                    (std::isfinite(f.lo) ? ", must be finite and in [" + detail::fmt(f.lo) + ", " +
                                               detail::fmt(f.hi) + (f.hi_open ? ")" : "]")
                                         : std::string(", must be finite")),
                at);
    }
    return g;
}

// Writers.

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

}  // namespace fourdgs
FOURDGS_PUBLIC_END
