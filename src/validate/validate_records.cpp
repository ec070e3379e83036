// The Validator's checks on each record other than a chunk, as the walk meets it (validator.hpp):
// the SceneBuilder's rules in collect mode, then the advice that is the validator's own — §2
// UTF-8, §5.3 finite steps and bound spellings, §5.4 window bounds, §5.10 the Camera path, M044
// length units, M058/M062 rig trajectories, reserved and private opcodes.
#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <utility>

#include "fourdgs/records/registry.hpp"
#include "validator.hpp"

namespace fourdgs::validation {

namespace {

// §6.5: the bound in code units of a band quantized to n bits.
std::uint32_t sh_bound_for_depth(unsigned depth) {
    const std::uint32_t q = std::uint32_t{1} << (8 - depth);
    return q / 2;
}

// Every string of a record that parses, for the §2 UTF-8 check (a record its parser refuses is
// already a finding): the registry's string fields, fn("<record>.<field>", its value). Chunk and
// Delta Chunk records never come here; their compression strings are checked where the chunk is
// noted (validate_chunks.cpp).
void for_each_string(const RecordView& r, const StringVisitor& fn) {
    const RecordKind* kind = find_record_kind(r.opcode);
    if (!kind || kind->strings.empty()) return;
    const std::string prefix = std::string(kind->name) + '.';
    (void)kind->walk(r, [&](const std::string& field, std::string_view value) {
        fn(prefix + field, value);
    });
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Records other than chunks: the SceneBuilder's, and the advice that is the validator's own.

void Validator::absorb(const RecordView& r) {
    // M035: advice about the record as written, given before its pairing is judged.
    if (r.opcode == op::audio_legacy)
        if (auto a = parse_audio_legacy(r); a.ok())
            warning(refusal::kLegacyAudioRecord, "", a->codec, r.offset,
                    "a legacy Audio record; writers should emit Audio Source and Audio Data "
                    "pairs instead (M035)");
    const bool had_quantization = scene_.has_quantization;
    const bool had_window_table = scene_.has_window_table;
    const bool had_header = scene_.has_header;
    const std::size_t frames = scene_.coordinate_frames.size();
    const std::size_t rigs = scene_.rig_trajectories.size();
    current_record_ = opcode_name(r.opcode);
    (void)builder_.add(r);
    current_record_.clear();
    for_each_string(r, [&](const std::string& field, std::string_view value) {
        check_utf8(field, value, r.offset);
    });

    if (!had_quantization && scene_.has_quantization)
        check_quantization_values(scene_.quantization, r.content_offset());
    if (!had_header && scene_.has_header) check_header_aabb(r);
    if (r.opcode == op::camera) check_camera(r);
    if (!had_window_table && scene_.has_window_table) check_windows(r);
    if (scene_.coordinate_frames.size() > frames) {
        const CoordinateFrame& f = scene_.coordinate_frames.back();
        if (!length_unit_agrees(f))  // M044: an error naming both fields
            error(refusal::kLengthUnitMismatch, "",
                  std::string(to_string(f.length_unit)) + " / " + num(f.metres_per_unit), r.offset,
                  "Coordinate Frame " + detail::quoted(f.name) + " declares length_unit " +
                      std::string(to_string(f.length_unit)) + " (" +
                      num(metres_per(f.length_unit)) + " m) but metres_per_unit " +
                      num(f.metres_per_unit) +
                      "; the two fields must agree (metres_per_unit is the authority, M045)");
    }
    if (scene_.rig_trajectories.size() > rigs && scene_.rig_trajectories.back().samples.empty())
        warning(refusal::kEmptyRigTrajectory, "", "0", r.offset,  // M062
                "Rig Trajectory " + detail::quoted(scene_.rig_trajectories.back().name) +
                    " has no samples; it reads as absent (M061) and a producer should omit the "
                    "record instead (M062)");
    if (scene_.rig_trajectories.size() > rigs) check_rig_clock(scene_.rig_trajectories.back(), r);
    if (!is_defined_opcode(r.opcode)) {
        // Unknown, reserved and private records are stepped over (M008). 0x00 and 0x0E are
        // numbers a writer must never emit (§4.3, §5.13, M037).
        if (r.opcode == 0x00 || r.opcode == op::attachment_index)
            error(refusal::kReservedOpcode, "", hex_byte(r.opcode), r.offset,
                  "a record with opcode " + hex_byte(r.opcode) + " at byte " +
                      std::to_string(r.offset) +
                      ", which the specification reserves and a writer must not emit");
        if (r.opcode >= 0x80) private_records_.push_back({r.opcode, r.offset, r.total_length()});
    }
}

// §5.15.4 (M058): sample times are on the scene clock, so a producer converts capture timestamps
// from any other epoch. Samples that all lie before 0 or all after the Header's duration are what
// an unconverted clock looks like (Unix seconds are ~1.7e9): the file is well formed, and every
// instant of the scene clamps to one end sample, so this is a warning.
void Validator::check_rig_clock(const RigTrajectory& rig, const RecordView& r) {
    if (rig.samples.empty() || !scene_.has_header) return;
    const double first = rig.samples.front().time, last = rig.samples.back().time;
    const double duration = scene_.header.duration_sec;
    if (!(last < 0 || first > duration)) return;
    warning(refusal::kRigTrajectoryOffSceneClock, "", num(first), r.offset,
            "Rig Trajectory " + detail::quoted(rig.name) + " has samples from " + num(first) +
                " to " + num(last) + " s, all outside the scene clock [0, " + num(duration) +
                "]; capture timestamps on another epoch must be converted (§5.15.4, M058)");
}

// §5.10: the Camera is advisory (a reader may ignore it) and states no rule for its numbers, so
// readers keep it as written; a NaN or infinite number and key times that do not increase leave
// a viewer no usable path, so the validator warns, naming the field.
void Validator::check_camera(const RecordView& r) {
    auto cam = parse_camera(r);
    if (!cam.ok()) return;
    auto finite = [&](std::string field, const double* v, std::size_t n) {
        for (std::size_t k = 0; k < n; ++k)
            if (!std::isfinite(v[k])) {
                if (n > 1) field += "[" + std::to_string(k) + "]";
                warning(refusal::kNonFiniteValue, field, num(v[k]), r.offset,
                        field + " is " + num(v[k]) + "; a viewer cannot use it (§5.10)");
                return;
            }
    };
    finite("Camera.fov_y_deg", &cam->fov_y_deg, 1);
    finite("Camera.position", cam->position.data(), 3);
    finite("Camera.target", cam->target.data(), 3);
    for (std::size_t i = 0; i < cam->keyframes.size(); ++i) {
        const Camera::Keyframe& k = cam->keyframes[i];
        const std::string at = "Camera.keyframes[" + std::to_string(i) + "]";
        finite(at + ".position", k.position.data(), 3);
        finite(at + ".target", k.target.data(), 3);
        if (!std::isfinite(k.time) || (i > 0 && !(k.time > cam->keyframes[i - 1].time)))
            warning(refusal::kNonIncreasingKeyframeTimes, at + ".time", num(k.time), r.offset,
                    at + ".time is " + num(k.time) +
                        (i > 0 ? ", after " + num(cam->keyframes[i - 1].time) : std::string()) +
                        "; a camera path's key times should be finite and strictly increasing "
                        "(§5.10)");
    }
}

void Validator::check_utf8(std::string_view field, std::string_view value,
                           std::uint64_t record_at) {
    const std::size_t bad = find_invalid_utf8(value);
    if (bad == std::string_view::npos) return;
    const unsigned byte = static_cast<unsigned char>(value[bad]);
    const std::string spelled = json_quote(value);
    std::string shown = spelled.substr(0, 100);
    if (shown.size() < spelled.size()) shown += "...";
    error(refusal::kInvalidUtf8, std::string(field), spelled, record_at,
          std::string(field) + " is " + shown + ": byte " + std::to_string(bad) +
              " (" + hex_byte(static_cast<std::uint8_t>(byte)) +
              ") does not start well-formed UTF-8; every string is UTF-8 (§2)");
}

std::optional<KeySeen> Validator::metadata_key(std::string_view key) const {
    for (std::size_t i = 0; i < scene_.metadata.size(); ++i)
        for (const auto& [k, v] : scene_.metadata[i].entries)
            if (k == key) return KeySeen{v, builder_.offsets().metadata[i]};
    return std::nullopt;
}

// §5.3 at validator level: non-finite parameters (M026/M027, an error naming the field), bound
// spellings (M019/M020), the SH depth declaration (M023-M025).
void Validator::check_quantization_values(const Quantization& q, std::uint64_t content) {
    // Field offsets: scheme string, then pos_origin and the eight steps, 8 bytes each.
    const std::uint64_t params_at = content + 4 + q.scheme.size();
    const std::pair<const char*, double> params[] = {
        {"pos_origin[0]", q.pos_origin[0]}, {"pos_origin[1]", q.pos_origin[1]},
        {"pos_origin[2]", q.pos_origin[2]}, {"step_pos", q.step_pos},
        {"step_scale_log", q.step_scale_log}, {"step_rot", q.step_rot},
        {"step_rgb", q.step_rgb},           {"step_alpha", q.step_alpha},
        {"step_motion", q.step_motion},     {"step_time", q.step_time},
        {"step_sigma_log", q.step_sigma_log}};
    for (std::size_t i = 0; i < std::size(params); ++i)
        if (!std::isfinite(params[i].second))
            error(refusal::kNonFiniteValue, std::string("Quantization.") + params[i].first,
                  num(params[i].second), params_at + 8 * i,
                  std::string("Quantization: ") + params[i].first + " is " +
                      num(params[i].second) +
                      "; every quantization parameter must be finite (§5.3)");
    const std::uint64_t bounds_at = params_at + 8 * std::size(params) + 1;
    for (const auto& [key, value] : q.bounds)
        if (!is_bound_spelling(value))
            warning(refusal::kBoundNotANumber, "Quantization.bounds." + key, value, bounds_at,
                    "bounds." + key + " is " + detail::quoted(value) +
                        ", which the §5.3 grammar does not spell: it declares no bound at all");
    if (q.sh_depths_malformed)
        warning(refusal::kMalformedShDepths, "", "", bounds_at,
                "the appended SH bit-depth fields are malformed (a count the record is too short "
                "for, more than three bands, or a depth outside 3..8); the file reads as "
                "declaring none (M024)");
    for (std::size_t b = 0; b < q.sh_depths.size(); ++b) {
        const std::string key = "sh_band" + std::to_string(b + 1);
        const std::string want = std::to_string(sh_bound_for_depth(q.sh_depths[b]));
        const std::string* got = q.bound(key);
        if (!got)
            warning(refusal::kBoundDisagreesWithRecord, "Quantization.bounds." + key, "",
                    bounds_at,
                    "band " + std::to_string(b + 1) + " declares depth " +
                        std::to_string(q.sh_depths[b]) + " but bounds has no " + key +
                        " (expected " + want + ", M023)");
        else if (is_bound_spelling(*got) && compare_bounds(*got, want) != 0)
            warning(refusal::kBoundDisagreesWithRecord, "Quantization.bounds." + key, *got,
                    bounds_at,
                    "bounds." + key + " is " + *got + " but band " + std::to_string(b + 1) +
                        "'s depth " + std::to_string(q.sh_depths[b]) + " gives " + want +
                        " code units (§6.5, M023)");
        if (b > 0 && q.sh_depths[b] > q.sh_depths[b - 1])
            warning(refusal::kShDepthsNotDecreasing, "", std::to_string(q.sh_depths[b]),
                    bounds_at,
                    "band " + std::to_string(b + 1) + " has depth " +
                        std::to_string(q.sh_depths[b]) + ", above band " + std::to_string(b) +
                        "'s " + std::to_string(q.sh_depths[b - 1]) +
                        "; depths should fall with band index (§6.5)");
    }
    if (!q.sh_depths.empty()) {
        const unsigned coarsest = *std::min_element(q.sh_depths.begin(), q.sh_depths.end());
        const std::uint32_t pitch = std::uint32_t{1} << (8 - coarsest);
        if (q.step_sh != pitch)
            warning(refusal::kBoundDisagreesWithRecord, "Quantization.step_sh",
                    std::to_string(q.step_sh), params_at + 8 * std::size(params),
                    "step_sh is " + std::to_string(q.step_sh) + " but the coarsest declared band "
                        "depth " + std::to_string(coarsest) + " has pitch " +
                        std::to_string(pitch) + " (§6.5)");
        const std::string want = std::to_string(sh_bound_for_depth(coarsest));
        if (const std::string* sh = q.bound("sh");
            sh && is_bound_spelling(*sh) && compare_bounds(*sh, want) != 0)
            warning(refusal::kBoundDisagreesWithRecord, "Quantization.bounds.sh", *sh, bounds_at,
                    "bounds.sh is " + *sh + " but the coarsest band's bound is " + want +
                        " (§6.5)");
    }
}

// A number the readers decode without complaint but that means nothing when it is not finite
// (§5.3's SHOULD, §5.4, §5.5): an error naming the field.
void Validator::check_finite(std::string field, double v, std::uint64_t at, std::string_view why) {
    if (std::isfinite(v)) return;
    std::string message = field;
    message += " is ";
    message += num(v);
    message += "; ";
    message += why;
    error(refusal::kNonFiniteValue, std::move(field), num(v), at, std::move(message));
}

// §5.4: every window bound is a time, so finite (a NaN bound admits no instant, an infinite one
// every instant, whatever the writer meant). A finite bound beyond f32's range is legal, but every
// gaussian of the window holds it as an f32 (§3): it decodes to an infinity, a warning.
void Validator::check_windows(const RecordView& table) {
    const std::uint64_t entries = table.content_offset() + 4;  // u32 count, then (lo, hi) f64s
    for (std::size_t i = 0; i < scene_.windows.size(); ++i) {
        const std::string at = "Window Table.windows[" + std::to_string(i) + "]";
        const std::pair<const char*, double> bounds[] = {{".lo", scene_.windows[i].lo},
                                                        {".hi", scene_.windows[i].hi}};
        for (std::size_t b = 0; b < 2; ++b) {
            const auto [which, v] = bounds[b];
            const std::uint64_t offset = entries + 16 * i + 8 * b;
            check_finite(at + which, v, offset, "a window bound must be a finite time (§5.4)");
            if (std::isfinite(v) && !std::isfinite(static_cast<float>(v)))
                warning(refusal::kNonFiniteValue, at + which, num(v), offset,
                        at + which + " is " + num(v) +
                            ", beyond f32: every gaussian of the window decodes it to " +
                            (v > 0 ? "inf" : "-inf") + " (§3 holds win_lo and win_hi as f32)");
        }
    }
}

// §5.1: the Header's aabb bounds the rest positions, which are numbers; the specification does
// not state that it is finite, so a non-finite entry is a warning naming it.
void Validator::check_header_aabb(const RecordView& header) {
    const Header& h = scene_.header;
    // profile, library, duration, gaussian_count, cutoff, temporal_model, then the six f64s.
    const std::uint64_t at = header.content_offset() + 4 + h.profile.size() + 4 +
                             h.library.size() + 8 + 8 + 8 + 4 + h.temporal_model.size();
    for (std::size_t k = 0; k < 6; ++k)
        if (!std::isfinite(h.aabb[k])) {
            const std::string field = "Header.aabb[" + std::to_string(k) + "]";
            warning(refusal::kNonFiniteValue, field, num(h.aabb[k]), at + 8 * k,
                    field + " is " + num(h.aabb[k]) +
                        "; the aabb bounds the rest positions, which are numbers (§5.1)");
        }
}

}  // namespace fourdgs::validation
