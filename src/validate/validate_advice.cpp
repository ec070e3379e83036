// The Validator's last passes (validator.hpp): what a file says of itself, which no reader has
// reason to refuse — the coordinate_system key beside the Coordinate Frame record (M046/M047)
// and the SHOULD-level advice (§3.1, §4.3, §5.1, §8).
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "validator.hpp"

#include "fourdgs/detail/index_check.hpp"

namespace fourdgs::validation {

using detail::FramedChunk;

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// What a free-form coordinate_system string ("y-up-right-handed", "Z_UP left handed") says,
// as far as it can be read: handedness and the up axis. Unread parts stay nullopt.
struct CoordinateSystemKey {
    std::optional<Handedness> handedness;
    std::optional<Axis> up;
    std::optional<Axis> forward;
};

CoordinateSystemKey interpret_coordinate_system(std::string_view text) {
    std::string s = lower(text);
    for (char& c : s)
        if (c == '_' || c == ' ' || c == ',' || c == '/') c = '-';
    // Tokens, remembering whether a '-' directly preceded a single-letter axis token at the start
    // of the string or after a double separator ("-y-up" = negative y up).
    std::vector<std::string> tokens;
    std::vector<bool> negative;
    std::size_t i = 0;
    while (i < s.size()) {
        bool neg = false, pos = false;
        if (s[i] == '-' && (i == 0 || s[i - 1] == '-')) neg = true;
        while (i < s.size() && s[i] == '-') ++i;
        if (i < s.size() && s[i] == '+') {
            pos = true;
            ++i;
        }
        std::size_t start = i;
        while (i < s.size() && s[i] != '-') ++i;
        if (i > start) {
            tokens.push_back(s.substr(start, i - start));
            negative.push_back(neg && !pos);
        }
    }
    CoordinateSystemKey key;
    auto axis_of = [](const std::string& t, bool neg) -> std::optional<Axis> {
        if (t.size() != 1 || t[0] < 'x' || t[0] > 'z') return std::nullopt;
        int a = t[0] - 'x' + (neg ? 3 : 0);
        return static_cast<Axis>(a);
    };
    for (std::size_t k = 0; k < tokens.size(); ++k) {
        const std::string& t = tokens[k];
        const bool next_handed = k + 1 < tokens.size() && tokens[k + 1] == "handed";
        if (t == "righthanded" || t == "rh" || (t == "right" && next_handed))
            key.handedness = Handedness::right;
        if (t == "lefthanded" || t == "lh" || (t == "left" && next_handed))
            key.handedness = Handedness::left;
        if (k + 1 < tokens.size() && (tokens[k + 1] == "up" || tokens[k + 1] == "forward")) {
            if (auto a = axis_of(t, negative[k])) {
                if (tokens[k + 1] == "up") key.up = a;
                else key.forward = a;
            }
        }
        if (t.size() == 3 && t[1] == 'u' && t[2] == 'p') {  // "yup"
            if (auto a = axis_of(t.substr(0, 1), negative[k])) key.up = a;
        }
    }
    return key;
}

}  // namespace

// §5.15.2 (M046/M047): the coordinate_system key beside the scene frame's record.
void Validator::check_coordinate_system() {
    std::optional<KeySeen> key = metadata_key("coordinate_system");
    if (!key && scene_.has_header)
        for (const auto& [k, v] : scene_.header.attributes)
            if (k == "coordinate_system") key = KeySeen{v, header_offset()};
    const CoordinateFrame* frame = nullptr;
    std::uint64_t frame_at = 0;
    for (std::size_t i = 0; i < scene_.coordinate_frames.size(); ++i)
        if (scene_.coordinate_frames[i].name.empty()) {
            frame = &scene_.coordinate_frames[i];
            frame_at = builder_.offsets().coordinate_frames[i];
            break;
        }
    if (!frame && !key) {  // M002: nothing says which way is up
        warning(refusal::kNoCoordinateSystem, "", "", kNoOffset,
                "the file records no handedness or up-axis: no coordinate_system metadata key "
                "and no Coordinate Frame record for the scene frame (§2)");
        return;
    }
    if (!frame || !key) return;
    warning(refusal::kCoordinateSystemKeyBesideRecord, "", key->value, key->offset,
            "the file carries both a Coordinate Frame record and a coordinate_system key "
            "(" + detail::quoted(key->value) + "); a writer should emit only the record, and the "
            "record wins (M046, M047)");
    const CoordinateSystemKey said = interpret_coordinate_system(key->value);
    std::string disagreement;
    if (said.handedness && frame->handedness != Handedness::unspecified &&
        *said.handedness != frame->handedness)
        disagreement = std::string("handedness ") +
                       (frame->handedness == Handedness::right ? "right" : "left") +
                       " in the record, " +
                       (*said.handedness == Handedness::right ? "right" : "left") + " in the key";
    else if (said.up && *said.up != frame->up_axis)
        disagreement = "up_axis " + std::string(to_string(frame->up_axis)) + " in the record, " +
                       std::string(to_string(*said.up)) + " in the key";
    else if (said.forward && *said.forward != frame->forward_axis)
        disagreement = "forward_axis " + std::string(to_string(frame->forward_axis)) +
                       " in the record, " + std::string(to_string(*said.forward)) + " in the key";
    if (!disagreement.empty())
        error(refusal::kCoordinateSystemMismatch, "Metadata.coordinate_system, Coordinate Frame",
              key->value, key->offset,
              "the coordinate_system key " + detail::quoted(key->value) +
                  " disagrees with the Coordinate Frame record at byte " +
                  std::to_string(frame_at) + " (" + disagreement +
                  "); a writer that emits both must make them agree (M047)");
}

// The SHOULD-level advice about what a file says of itself (§3.1, §4.3, §5.1, §8).
void Validator::check_advice() {
    if (!scene_.has_header) return;
    auto header_key = [&](std::string_view name) -> const std::string* {
        for (const auto& [k, v] : scene_.header.attributes)
            if (k == name) return &v;
        return nullptr;
    };
    std::optional<KeySeen> profile = metadata_key("visibility_profile");
    if (!profile)
        if (const std::string* v = header_key("visibility_profile"))
            profile = KeySeen{*v, header_offset()};
    if (!profile)
        warning(refusal::kNoVisibilityProfile, "", "", kNoOffset,
                "no visibility_profile metadata key: producers should declare gaussian (soft fade) "
                "or box (hard edges) (M004)");
    else if (profile->value != "gaussian" && profile->value != "box")
        warning(refusal::kUnknownVisibilityProfile, "", profile->value, profile->offset,
                "visibility_profile is " + detail::quoted(profile->value) +
                    "; the registry defines gaussian and box (flat-top is reserved, not "
                    "representable)");
    if (!private_records_.empty() && !metadata_key("application") && !header_key("application"))
        warning(refusal::kPrivateRecordsWithoutApplication, "",
                hex_byte(private_records_.front().opcode), private_records_.front().offset,
                std::to_string(private_records_.size()) + " private-range record(s), the first " +
                    hex_byte(private_records_.front().opcode) + " at byte " +
                    std::to_string(private_records_.front().offset) +
                    ", and no application metadata entry naming what wrote them (M012)");
    const bool flag = scene_.header.chunks_compressed();
    if (!chunks_.empty() && flag != compressed_chunk_seen_)
        warning(refusal::kCompressedFlagMismatch, "", std::to_string(scene_.header.flags),
                header_offset(),
                std::string("Header flags bit 1 (chunk data is compressed) is ") +
                    (flag ? "set" : "clear") + " but " +
                    (compressed_chunk_seen_ ? "a chunk names a codec" : "no chunk names a codec"));
    // M106: every chunk spans the whole timeline, so a seek costs the whole scene.
    if (!keyframe_delta_ && !chunks_.empty() && scene_.header.duration_sec > 0 &&
        scene_.header.profile != "baked") {
        bool all_whole = true;
        for (const FramedChunk& c : chunks_)
            all_whole = all_whole && c.t0 <= 0 && c.t1 >= scene_.header.duration_sec;
        if (all_whole)
            warning(refusal::kUndeclaredUnseekableContent, "", scene_.header.profile,
                    header_offset(),
                    "every chunk covers the whole timeline [0, " + num(scene_.header.duration_sec) +
                        "), so a seek costs the whole scene, and the file does not say so (profile "
                        "\"baked\", §8, M106)");
    }
}

}  // namespace fourdgs::validation
