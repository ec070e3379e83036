// fourdgs/records/content.hpp — the content records with no family of their own: Camera (§5.10),
// Metadata (§5.11) and Attachment (§5.13).
//
// Part of records.hpp (the umbrella states the conventions every parser and writer follows).
#pragma once

#include "fourdgs/export.hpp"
#include "fourdgs/records/common.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

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

// §5.13 Attachment (0x0D).
struct Attachment {
    std::string name;
    std::string media_type;
    Bytes data;                    // views the RecordView's content
    std::uint64_t data_offset = 0;
};

// Parsers.

// §5.10. keyframe_count checked before allocating; interpolation other than "linear"/"spline" is
// unsupported/unknown-interpolation; loop other than 0/1 is invalid-flag-value.
inline Result<Camera> parse_camera(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::camera));
    Cursor c(r.content, r.content_offset(), record_name(op::camera));
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
        return detail::unsupported(refusal::kUnknownInterpolation, record_name(op::camera),
                                   "interpolation", cam.interpolation,
                                   "interpolation is " + detail::quoted(cam.interpolation) +
                                       ", the registry defines \"linear\" and \"spline\"",
                                   at);
    FOURDGS_ASSIGN(cam.loop, detail::read_flag_byte(c, "loop"));
    return cam;
}

// §5.11.
inline Result<Metadata> parse_metadata(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::metadata));
    Cursor c(r.content, r.content_offset(), record_name(op::metadata));
    Metadata m;
    FOURDGS_ASSIGN(m.name, c.string("name"));
    FOURDGS_ASSIGN(m.entries, c.map("entries"));
    return m;
}

// §5.13. The payload is viewed, never copied.
inline Result<Attachment> parse_attachment(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::attachment));
    Cursor c(r.content, r.content_offset(), record_name(op::attachment));
    Attachment a;
    FOURDGS_ASSIGN(a.name, c.string("name"));
    FOURDGS_ASSIGN(a.media_type, c.string("media_type"));
    FOURDGS_TRY(detail::read_bytes_view(c, "data", a.data, a.data_offset));
    return a;
}

// Writers.

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

inline void write(ByteWriter& out, const Attachment& a) {
    std::size_t at = detail::begin_record(out, op::attachment);
    out.string(a.name);
    out.string(a.media_type);
    out.bytes(a.data);
    detail::end_record(out, at);
}

}  // namespace fourdgs
FOURDGS_PUBLIC_END
