// fourdgs/records/audio.hpp — the audio records: legacy Audio (§5.9), Audio Source (§5.16) and
// Audio Data (§5.17). Pairing them is SceneBuilder's (front_matter.hpp); what they mean,
// extras.hpp's.
//
// Part of records.hpp (the umbrella states the conventions every parser and writer follows).
#pragma once

#include "fourdgs/export.hpp"
#include "fourdgs/records/common.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// §5.9 Audio (0x09, legacy).
struct AudioLegacy {
    std::string codec;
    double start_sec = 0;
    Bytes data;                    // views the RecordView's content
    std::uint64_t data_offset = 0;  // absolute offset of the first payload byte
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

// Parsers.

// §5.9. The payload is viewed, never copied. Interpreted as source 0 by the audio layer.
inline Result<AudioLegacy> parse_audio_legacy(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::audio_legacy));
    Cursor c(r.content, r.content_offset(), record_name(op::audio_legacy));
    AudioLegacy a;
    FOURDGS_ASSIGN(a.codec, c.string("codec"));
    FOURDGS_ASSIGN(a.start_sec, c.f64("start_sec"));
    FOURDGS_TRY(detail::read_bytes_view(c, "data", a.data, a.data_offset));
    return a;
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
    constexpr std::string_view what = record_name(op::audio_source);
    Cursor c(r.content, r.content_offset(), what);
    AudioSource s;
    FOURDGS_ASSIGN(s.source_id, c.u32("source_id"));
    FOURDGS_ASSIGN(s.name, c.string("name"));
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(s.codec, c.string("codec"));
    if (s.codec.empty())
        return detail::malformed(refusal::kEmptyAudioCodec, what, "codec", "",
                                 "source " + std::to_string(s.source_id) +
                                     " has an empty codec; codec must be non-empty",
                                 at);
    FOURDGS_ASSIGN(s.channel_layout, c.string("channel_layout"));
    FOURDGS_ASSIGN(s.data_length, c.u64("data_length"));
    FOURDGS_TRY(detail::read_array(c, {"start_sec"}, &s.start_sec, 1, true));
    at = c.offset();
    FOURDGS_ASSIGN(s.duration_sec, c.f64("duration_sec"));
    if (!(std::isfinite(s.duration_sec) && s.duration_sec > 0))
        return detail::malformed(refusal::kInvalidAudioDuration, what, "duration_sec",
                                 detail::fmt(s.duration_sec),
                                 "source " + std::to_string(s.source_id) + " duration_sec is " +
                                     detail::fmt(s.duration_sec) + ", must be finite and positive",
                                 at);
    at = c.offset();
    FOURDGS_TRY(detail::read_array(c, {"gain"}, &s.gain, 1, true));
    if (s.gain < 0)
        return detail::malformed(refusal::kInvalidAudioGain, what, "gain", detail::fmt(s.gain),
                                 "source " + std::to_string(s.source_id) + " gain is " +
                                     detail::fmt(s.gain) + ", must not be negative",
                                 at);
    at = c.offset();
    FOURDGS_ASSIGN(s.flags, c.u8("flags"));
    if (s.flags & kReservedFlagBits)
        return detail::malformed(refusal::kReservedFlagsSet, what, "flags", std::to_string(s.flags),
                                 "source " + std::to_string(s.source_id) + " flags is " +
                                     std::to_string(s.flags) + ": bits 2-7 are reserved",
                                 at);
    if (s.spatial() && s.channel_layout != "mono")
        return detail::malformed(refusal::kSpatialSourceNotMono, what, "channel_layout",
                                 s.channel_layout,
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
                refusal::kNonIncreasingKeyframeTimes, what, "keyframes", detail::fmt(k.time),
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
        return detail::unsupported(refusal::kUnknownInterpolation, what, "interpolation",
                                   s.interpolation,
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
                                  "] (Header duration_sec)")
                .about("Audio Source.keyframes", detail::fmt(t));
    }
    return ok_status();
}

// §5.17. The payload is viewed; its length against data_length is the audio layer's (M091).
inline Result<AudioData> parse_audio_data(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::audio_data));
    Cursor c(r.content, r.content_offset(), record_name(op::audio_data));
    AudioData a;
    FOURDGS_ASSIGN(a.source_id, c.u32("source_id"));
    FOURDGS_TRY(detail::read_bytes_view(c, "data", a.data, a.data_offset));
    return a;
}

// Writers.

inline void write(ByteWriter& out, const AudioLegacy& a) {
    std::size_t at = detail::begin_record(out, op::audio_legacy);
    out.string(a.codec);
    out.f64(a.start_sec);
    out.bytes(a.data);
    detail::end_record(out, at);
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

}  // namespace fourdgs
FOURDGS_PUBLIC_END
