// fourdgs_binding_support.h: which state covers t, the playback clock and the enums' spellings,
// each a conversion of the library's own answer (StateTimeline, PlaybackClock, the to_string of
// each enum) for players written over the C ABI. Nothing here allocates but the clock's handle
// (create_handle, which catches), so no entry point needs guarded(): each is noexcept as
// written, which keeps the WebAssembly core free of their exception paths (docs/web.md, "Size").
#include "fourdgs_c_internal.hpp"

using namespace fourdgs;
using namespace fourdgs::capi;

struct fourdgs_playback_clock {
    explicit fourdgs_playback_clock(const Allocator& a) : alloc(a) {}
    Allocator alloc;
    PlaybackClock clock;
};

namespace fourdgs::capi {
template <> inline constexpr const char* kParameterName<fourdgs_playback_clock> = "clock";
template <> inline constexpr const char* kStructName<fourdgs_state_span> = "fourdgs_state_span";
template <>
inline constexpr const char* kStructName<fourdgs_playback_clock_info> = "fourdgs_playback_clock_info";
}  // namespace fourdgs::capi

namespace {

fourdgs_state_span state_span_out(const StateSpan& span) noexcept {
    fourdgs_state_span s{};
    s.key = span.covered() ? span.key : FOURDGS_NO_STATE;
    s.t0 = span.t0;
    s.t1 = span.t1;
    return s;
}

fourdgs_playback_clock_info clock_info_out(const fourdgs_playback_clock& c) noexcept {
    fourdgs_playback_clock_info i{};
    i.state = static_cast<uint32_t>(c.clock.state());
    i.loop = c.clock.loop();
    i.rate = c.clock.rate();
    i.duration = c.clock.duration();
    i.anchor = c.clock.anchor();
    return i;
}

// One control of the clock: the handle refused when NULL, a time or rate when not finite
// (`what` says which).
template <class Control>
fourdgs_status control(fourdgs_playback_clock* clock, double value, const char* what,
                       Control&& apply) noexcept {
    if (clock == nullptr) return invalid(refusal::kNullArgument, "clock is NULL");
    if (!std::isfinite(value)) return invalid(refusal::kNonFiniteInput, what);
    apply(clock->clock);
    return FOURDGS_OK;
}

// The library's name of an enum's value (its to_string), NULL for one it does not name.
template <class Enum>
const char* name_of(std::uint32_t value) noexcept {
    if (value > 255) return nullptr;  // every one of these is a byte
    const std::string_view name = to_string(static_cast<Enum>(value));
    return name == "unknown" ? nullptr : name.data();  // string literals: NUL-terminated
}

const char* block_kind_name(std::uint32_t value) noexcept {
    // The C ABI's own enum (fourdgs_block_kind): BlockInfo's kinds after "empty" and "all".
    static const char* const kNames[] = {"empty", "all", "instant", "chunk", "state"};
    return value < std::size(kNames) ? kNames[value] : nullptr;
}

const char* temporal_model_name(std::uint32_t value) noexcept {
    if (value == FOURDGS_MODEL_GAUSSIAN_BIRTH) return kModelGaussianBirth.data();
    if (value == FOURDGS_MODEL_KEYFRAME_DELTA) return kModelKeyframeDelta.data();
    return nullptr;
}

}  // namespace

fourdgs_status fourdgs_reader_state_span(const fourdgs_reader* reader, double t,
                                         fourdgs_state_span* out) {
    if (reader == nullptr) return invalid(refusal::kNullArgument, "reader is NULL");
    if (out == nullptr) return invalid(refusal::kNullArgument, "out is NULL");
    if (out->struct_size < sizeof(size_t))
        return invalid(refusal::kInvalidStructSize, "fourdgs_state_span.struct_size is not set");
    if (auto s = finite_time(t); s != FOURDGS_OK) return s;
    const Result<StateSpan> span = reader->opened->state_span(t);
    if (!span.ok()) return fail(span.error());
    return put(out, state_span_out(*span));
}

fourdgs_status fourdgs_playback_clock_create(const fourdgs_allocator* allocator, double duration,
                                             double start, double rate, uint32_t loop,
                                             uint32_t playing, fourdgs_playback_clock** out) {
    if (out == nullptr) return invalid(refusal::kNullArgument, "out is NULL");
    *out = nullptr;
    if (!std::isfinite(duration) || duration < 0)
        return invalid(refusal::kNonFiniteInput, "duration is not a finite number >= 0");
    if (!std::isfinite(start)) return invalid(refusal::kNonFiniteInput, "start is not finite");
    if (!std::isfinite(rate)) return invalid(refusal::kNonFiniteInput, "rate is not finite");
    fourdgs_playback_clock* clock = nullptr;
    if (auto s = create_handle(allocator, &clock); s != FOURDGS_OK) return s;
    clock->clock = PlaybackClock(duration, start, rate, loop != 0, playing != 0);
    *out = clock;
    return FOURDGS_OK;
}

void fourdgs_playback_clock_free(fourdgs_playback_clock* clock) { destroy_handle(clock); }

fourdgs_status fourdgs_playback_clock_frame(fourdgs_playback_clock* clock, double now,
                                            double* t) {
    if (t == nullptr) return invalid(refusal::kNullArgument, "t is NULL");
    return control(clock, now, "now is not finite", [&](PlaybackClock& c) { *t = c.frame(now); });
}

fourdgs_status fourdgs_playback_clock_frame_at(fourdgs_playback_clock* clock, double t) {
    return control(clock, t, "t is not finite", [&](PlaybackClock& c) { c.frame_at(t); });
}

fourdgs_status fourdgs_playback_clock_play(fourdgs_playback_clock* clock) {
    return control(clock, 0, "", [](PlaybackClock& c) { c.play(); });
}

fourdgs_status fourdgs_playback_clock_pause(fourdgs_playback_clock* clock) {
    return control(clock, 0, "", [](PlaybackClock& c) { c.pause(); });
}

fourdgs_status fourdgs_playback_clock_seek(fourdgs_playback_clock* clock, double t) {
    return control(clock, t, "t is not finite", [&](PlaybackClock& c) { c.seek(t); });
}

fourdgs_status fourdgs_playback_clock_set_rate(fourdgs_playback_clock* clock, double rate) {
    return control(clock, rate, "rate is not finite", [&](PlaybackClock& c) { c.set_rate(rate); });
}

fourdgs_status fourdgs_playback_clock_set_loop(fourdgs_playback_clock* clock, uint32_t loop) {
    return control(clock, 0, "", [&](PlaybackClock& c) { c.set_loop(loop != 0); });
}

fourdgs_status fourdgs_playback_clock_info_get(const fourdgs_playback_clock* clock,
                                               fourdgs_playback_clock_info* out) {
    if (clock == nullptr) return invalid(refusal::kNullArgument, "clock is NULL");
    if (out == nullptr) return invalid(refusal::kNullArgument, "out is NULL");
    if (out->struct_size < sizeof(size_t))
        return invalid(refusal::kInvalidStructSize,
                       "fourdgs_playback_clock_info.struct_size is not set");
    return put(out, clock_info_out(*clock));
}

const char* fourdgs_enum_name(fourdgs_enum which, uint32_t value) {
    switch (which) {
        case FOURDGS_ENUM_STATUS:
            return value <= FOURDGS_NOT_FOUND ? fourdgs_status_name(static_cast<fourdgs_status>(value))
                                              : nullptr;
        case FOURDGS_ENUM_TEMPORAL_MODEL: return temporal_model_name(value);
        case FOURDGS_ENUM_BLOCK_KIND: return block_kind_name(value);
        case FOURDGS_ENUM_PLAYBACK_STATE: return name_of<PlaybackState>(value);
        case FOURDGS_ENUM_LATE_REASON: return name_of<LateReason>(value);
        case FOURDGS_ENUM_SEVERITY:  // to_string(Severity) names every other value "warning"
            return value == FOURDGS_SEVERITY_ERROR || value == FOURDGS_SEVERITY_WARNING
                       ? name_of<Severity>(value)
                       : nullptr;
        case FOURDGS_ENUM_AXIS: return name_of<Axis>(value);
        case FOURDGS_ENUM_LENGTH_UNIT: return name_of<LengthUnit>(value);
        case FOURDGS_ENUM_CAMERA_MODEL: return name_of<CameraModel>(value);
        case FOURDGS_ENUM_INTERPOLATION: return name_of<TrajectoryInterpolation>(value);
    }
    return nullptr;
}

float fourdgs_sh_coefficient(uint8_t b) { return sh_coefficient(b); }
