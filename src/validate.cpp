// validate() (fourdgs/validate.hpp): every problem in a file, not just the first.
//
// The validator is a front-end on the same layers as the readers. A RecordStream
// (record_stream.hpp) frames the records front to back; a record whose content is over the limit
// is one finding and is stepped over, and only a framing failure (a length past the end of the
// data) ends the walk. A SceneBuilder in collect mode (front_matter.hpp) assembles the scene
// with the readers' rules, reporting every rule a record breaks and going on. Chunks are decoded
// with their SH band records as they arrive (decode.hpp; one chunk and its bands in memory at a
// time). The rules that span the file — the index against the chunks (index_check.hpp), the
// summary and the tail, Statistics, the provenance/audio references and the SHOULD-level advice
// — run after the walk over what was kept: small per-record summaries, never record contents.
// What is the validator's own is the advice a reader has no reason to refuse for (§5.3 bound
// spellings and finite steps, M044 length units, M062 empty trajectories, M035 legacy audio,
// reserved and private opcodes, Statistics, the tail) and the bookkeeping of findings.
#include "fourdgs/validate.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fourdgs/decode.hpp"
#include "fourdgs/extras.hpp"
#include "fourdgs/index_check.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/record_stream.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/text.hpp"
#include "fourdgs/wire.hpp"

namespace fourdgs {

std::size_t ValidationReport::errors() const {
    return static_cast<std::size_t>(std::count_if(
        findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::error; }));
}
std::size_t ValidationReport::warnings() const {
    return findings.size() - errors();
}

namespace {

std::string_view section_of_field(std::string_view field) {
    static constexpr std::pair<std::string_view, std::string_view> kRecords[] = {
        {"Header", "§5.1"}, {"Footer", "§5.2"}, {"Quantization", "§5.3"}, {"Window Table", "§5.4"},
        {"Chunk Index", "§5.8"}, {"Chunk", "§5.5"}, {"Attribute Stream", "§5.6"},
        {"SH Band Stream", "§5.7"}, {"Audio Source", "§5.16"}, {"Audio Data", "§5.17"},
        {"Audio", "§5.9"}, {"Camera", "§5.10"}, {"Metadata", "§5.11"}, {"Statistics", "§5.12"},
        {"Attachment", "§5.13"}, {"Summary Offset", "§5.14"}, {"Delta Chunk", "§5.18"},
        {"Coordinate Frame", "§5.15.2"}, {"Sensor Calibration", "§5.15.3"},
        {"Rig Trajectory", "§5.15.4"}, {"Geodetic Anchor", "§5.15.5"},
        {"Object Table", "§5.15.6"}, {"Object Track", "§5.15.7"}};
    for (const auto& [name, section] : kRecords)
        if (field.substr(0, name.size()) == name &&
            (field.size() == name.size() || field[name.size()] == '.'))
            return section;
    return {};
}

std::string hex_byte(std::uint8_t v) {
    static const char* hex = "0123456789ABCDEF";
    return std::string{'0', 'x', hex[v >> 4], hex[v & 15]};
}

std::string num(double v) { return detail::fmt(v); }

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

// §6.5: the bound in code units of a band quantized to n bits.
std::uint32_t sh_bound_for_depth(unsigned depth) {
    const std::uint32_t q = std::uint32_t{1} << (8 - depth);
    return q / 2;
}

// One §2 string a record holds and the field it fills ("Metadata.entries[2].key").
struct NamedString {
    std::string field;
    std::string_view value;
};

// Every string of a record that parses, for the §2 UTF-8 check (a record its parser refuses is
// already a finding). Chunk and Delta Chunk compression strings are checked where those records
// are parsed; the other records hold no strings.
template <class Fn>
void for_each_string(const RecordView& r, const Fn& fn) {
    auto map = [&](const std::string& field, const StringMap& m) {
        for (std::size_t i = 0; i < m.size(); ++i) {
            const std::string at = field + "[" + std::to_string(i) + "]";
            fn(at + ".key", m[i].first);
            fn(at + ".value", m[i].second);
        }
    };
    // The string members named and the StringMap `pairs` names (if any), of a record that
    // parsed: fn("<record>.<member>", its value).
    auto strings = [&]<class T>(const Result<T>& parsed, std::string_view record,
                                std::initializer_list<std::pair<const char*, std::string T::*>>
                                    members,
                                std::pair<const char*, StringMap T::*> pairs = {}) {
        if (!parsed.ok()) return;
        const std::string prefix = std::string(record) + '.';
        for (const auto& [name, member] : members) fn(prefix + name, (*parsed).*member);
        if (pairs.second) map(prefix + pairs.first, (*parsed).*pairs.second);
    };
    using AS = AudioSource;
    using CF = CoordinateFrame;
    using SC = SensorCalibration;
    using RT = RigTrajectory;
    switch (r.opcode) {
        case op::header:
            return strings(parse_header(r), "Header",
                           {{"profile", &Header::profile}, {"library", &Header::library},
                            {"temporal_model", &Header::temporal_model}},
                           {"attributes", &Header::attributes});
        case op::quantization:
            return strings(parse_quantization(r), "Quantization",
                           {{"scheme", &Quantization::scheme}}, {"bounds", &Quantization::bounds});
        case op::camera:
            return strings(parse_camera(r), "Camera", {{"interpolation", &Camera::interpolation}});
        case op::metadata:
            return strings(parse_metadata(r), "Metadata", {{"name", &Metadata::name}},
                           {"entries", &Metadata::entries});
        case op::attachment:
            return strings(parse_attachment(r), "Attachment",
                           {{"name", &Attachment::name}, {"media_type", &Attachment::media_type}});
        case op::audio_legacy:
            return strings(parse_audio_legacy(r), "Audio", {{"codec", &AudioLegacy::codec}});
        case op::audio_source:
            return strings(parse_audio_source(r), "Audio Source",
                           {{"name", &AS::name}, {"codec", &AS::codec},
                            {"channel_layout", &AS::channel_layout},
                            {"interpolation", &AS::interpolation}});
        case op::coordinate_frame:
            return strings(parse_coordinate_frame(r), "Coordinate Frame", {{"name", &CF::name}});
        case op::sensor_calibration:
            return strings(parse_sensor_calibration(r), "Sensor Calibration",
                           {{"name", &SC::name}, {"modality", &SC::modality},
                            {"rig_name", &SC::rig_name}});
        case op::rig_trajectory:
            return strings(parse_rig_trajectory(r), "Rig Trajectory", {{"name", &RT::name}});
        case op::geodetic_anchor:
            return strings(parse_geodetic_anchor(r), "Geodetic Anchor",
                           {{"frame_name", &GeodeticAnchor::frame_name}});
        case op::object_table:
            if (auto t = parse_object_table(r); t.ok())
                for (std::size_t i = 0; i < t->entries.size(); ++i)
                    fn("Object Table.entries[" + std::to_string(i) + "].label",
                       t->entries[i].label);
            break;
        default: break;
    }
}

// Where a metadata key was found: its value and the offset of the record carrying it.
struct KeySeen {
    std::string value;
    std::uint64_t offset = 0;
};

class Validator {
public:
    Validator(ByteSource& source, const ValidateOptions& options)
        : source_(source), options_(options), reader_(collect_options(options.reader)),
          builder_(reader_, [this](Error e) { return collected(std::move(e)); }),
          stream_(source, reader_.max_record_bytes) {}

    Result<ValidationReport> run();

private:
    static ReaderOptions collect_options(ReaderOptions o) {
        o.accept_keyframe_delta = true;
        return o;
    }

    // ---- findings
    bool full() const { return report_.findings_capped; }
    void add(Severity severity, std::string_view rule, std::string field, std::string value,
             std::uint64_t offset, std::string message) {
        if (full()) return;
        if (report_.findings.size() >= options_.max_findings) {
            report_.findings_capped = true;
            return;
        }
        Finding f;
        f.severity = severity;
        f.rule = std::string(rule);
        const RefusalInfo* info = find_refusal(rule);
        f.field = field.empty() && info ? std::string(info->field) : std::move(field);
        f.section = info ? std::string(info->section) : std::string();
        // Rules any record can break (a short field, a non-finite number, a bad flag byte) take
        // the section of the record the field belongs to.
        if (info && (info->field.empty() || f.section.empty()))
            if (std::string_view s = section_of_field(f.field); !s.empty()) f.section = std::string(s);
        f.value = std::move(value);
        f.offset = offset;
        f.message = std::move(message);
        report_.findings.push_back(std::move(f));
    }
    void error(std::string_view rule, std::string field, std::string value, std::uint64_t offset,
               std::string message) {
        add(Severity::error, rule, std::move(field), std::move(value), offset, std::move(message));
    }
    void warning(std::string_view rule, std::string field, std::string value,
                 std::uint64_t offset, std::string message) {
        add(Severity::warning, rule, std::move(field), std::move(value), offset,
            std::move(message));
    }
    // A refusal from a parser, a decoder or a cross-record check, as the layer that refused named
    // it: its field and value are the Error's own (error.hpp), else the field its identifier
    // names (refusals.hpp), else `record`, the record it is about ("" when unknown).
    void report_refusal(const Error& e, std::string_view record, std::uint64_t record_offset) {
        const RefusalInfo* info = find_refusal(e.refusal);
        std::string field = e.field;
        if (field.empty() && !(info && !info->field.empty())) field = std::string(record);
        add(Severity::error, e.refusal, std::move(field), e.value,
            e.has_offset() ? e.offset : record_offset, e.message);
    }
    // The SceneBuilder's report function: each rule a record breaks is a finding.
    bool collected(Error e) {
        report_refusal(e, current_record_, kNoOffset);
        return !full();
    }
    template <class T>
    bool take(Result<T>& r, const RecordView& v) {
        if (r.ok()) return true;
        report_refusal(r.error(), opcode_name(v.opcode), v.offset);
        return false;
    }
    bool take(const Status& s, const RecordView& v) {
        if (s.ok()) return true;
        report_refusal(s.error(), opcode_name(v.opcode), v.offset);
        return false;
    }

    // take(), for a chunk: one that does not parse or decode leaves the computed totals partial.
    template <class R>
    bool take_chunk(R& r, const RecordView& v) {
        if (take(r, v)) return true;
        decode_failed_ = true;
        return false;
    }

    // ---- the walk
    void walk(Status& io);
    void end_at_cut(const Error& e, Status& io);
    void absorb(const RecordView& r);
    void absorb_band(HeldRecord& held);
    void begin_chunk(HeldRecord& held);
    void flush_chunk();
    bool note_chunk(const RecordView& r, FramedChunk framed, std::vector<ChunkIndex::Band> ranges,
                    std::string_view compression_field, const std::string& compression);
    void note_ids(const std::vector<std::int32_t>& ids);
    bool after_footer(const RecordView& r, Status& io);  // true: keep walking
    void progress(std::uint64_t at) {
        if (options_.progress && at >= next_progress_) {
            options_.progress(at, report_.file_size);
            next_progress_ = at + kProgressStep;
        }
    }

    // ---- rules that span records
    void check_quantization_values(const Quantization& q, std::uint64_t at);
    void check_camera(const RecordView& r);
    void check_rig_clock(const RigTrajectory& rig, const RecordView& r);
    // §2: a string that is not UTF-8 (readers keep its bytes; text.hpp spells them for JSON).
    void check_utf8(std::string_view field, std::string_view value, std::uint64_t record_at);
    void check_windows(const RecordView& table);
    void check_finite(std::string field, double v, std::uint64_t at, std::string_view why);
    void check_header_aabb(const RecordView& header);
    void check_decoded(const GaussianBlock& b, std::string_view record, std::uint64_t at,
                       std::set<std::string>* once = nullptr);
    void check_index();
    void check_index_by_tail();
    void check_composition();
    void check_statistics();
    void check_advice();
    void check_coordinate_system();
    std::uint64_t header_offset() const { return builder_.offsets().header; }
    // The first Metadata entry named `key`, in file order.
    std::optional<KeySeen> metadata_key(std::string_view key) const;

    static constexpr std::uint64_t kProgressStep = std::uint64_t{4} << 20;

    ByteSource& source_;
    const ValidateOptions& options_;
    ReaderOptions reader_;
    ValidationReport report_;
    std::uint64_t next_progress_ = 0;
    std::optional<std::uint64_t> size_;

    SceneBuilder builder_;                    // collect mode: every rule broken is a finding
    SceneInfo& scene_ = builder_.scene();     // the scene it assembles
    RecordStream stream_;
    std::string current_record_;              // the record the builder is given, for findings
    bool keyframe_delta_ = false;
    std::vector<RecordEntry> private_records_;

    // Chunks and their bands, the tail.
    HeldRecord chunk_;    // the pending Chunk or Delta Chunk, decoded when its bands are in
    bool chunk_pending_ = false;
    std::array<HeldRecord, 3> bands_;
    std::size_t band_count_ = 0;
    std::vector<FramedChunk> chunks_;  // what each said of itself, file order
    std::optional<Footer> footer_;
    std::uint64_t footer_offset_ = 0;
    bool compressed_chunk_seen_ = false;

    // What the chunks computed, for Header and Statistics.
    std::uint64_t gaussians_ = 0;
    bool aabb_known_ = false, aabb_valid_ = true;
    std::array<double, 6> aabb_{};
    std::unordered_set<std::uint32_t> ids_;  // keyframe-delta: distinct gaussian ids
    bool ids_capped_ = false;
    bool decode_failed_ = false;  // some chunk did not decode: computed totals are partial

    ChunkBins bins_;
    DeltaBins delta_bins_;
    DecodeScratch scratch_;
    GaussianBlock block_;
    HeldRecord held_;
};

Result<ValidationReport> Validator::run() {
    size_ = source_.size();
    report_.file_size = size_.value_or(0);
    if (Status m = stream_.read_magic(); !m.ok()) {
        if (m.error().kind == ErrorKind::io) return m.error();
        if (m.error().kind == ErrorKind::truncated) report_.truncated = true;
        report_refusal(m.error(), "magic", 0);
        return std::move(report_);  // not a version-1 .4dgs file: nothing after this is meaningful
    }
    stream_.enable_log(true);  // the summary records, for the Summary Offset groups
    Status io;
    walk(io);
    if (!io.ok()) return std::move(io).error();
    flush_chunk();
    keyframe_delta_ = scene_.has_header && scene_.header.temporal_model == kModelKeyframeDelta;
    if (!builder_.sealed() && !report_.truncated)
        (void)builder_.seal(kNoOffset);  // a file without chunks still needs both
    check_index();
    check_index_by_tail();
    check_composition();
    check_statistics();
    check_coordinate_system();
    (void)builder_.finish();  // the references between records (extras.hpp), once
    check_advice();
    if (options_.progress) options_.progress(report_.file_size, report_.file_size);
    return std::move(report_);
}

// The walk ended on an error while framing or reading a record: the source failed (`io`), or
// the data ends inside a record (a finding).
void Validator::end_at_cut(const Error& e, Status& io) {
    if (e.kind != ErrorKind::truncated) {
        io = e;
        return;
    }
    // Eight bytes of trailing magic with no Footer before them: the Footer is missing.
    const Bytes cut = stream_.cut_frame();
    if (cut.size() == kMagicSize && std::equal(cut.begin(), cut.end(), kMagic.begin())) {
        error(refusal::kMissingFooter, "", "", stream_.position(),
              "the trailing magic at byte " + std::to_string(stream_.position()) +
                  " follows no Footer record; the Footer must be the last record (§5.2)");
        return;
    }
    report_.truncated = true;
    report_refusal(e, "", stream_.position());
}

void Validator::walk(Status& io) {
    while (!full()) {
        progress(stream_.position());
        auto frame = stream_.next_frame();
        if (!frame.ok()) return end_at_cut(frame.error(), io);
        if (!*frame) {
            if (!footer_) {
                report_.truncated = true;
                report_refusal(stream_.ended_without_footer(), "Footer", stream_.position());
            }
            return;
        }
        ++report_.records;
        if (Status read = stream_.read_content(**frame, held_); !read.ok()) {
            if (read.error().kind != ErrorKind::limit) return end_at_cut(read.error(), io);
            Error over = read.error();
            over.message += "; its content was not checked";
            report_refusal(over, "", (*frame)->offset);
            flush_chunk();
            stream_.skip(**frame);
            continue;
        }
        const RecordView& r = held_.view;
        if (r.opcode != op::sh_band) flush_chunk();
        switch (r.opcode) {
            case op::chunk:
            case op::delta_chunk: begin_chunk(held_); break;
            case op::sh_band: absorb_band(held_); break;
            case op::footer: {
                if (!after_footer(r, io)) return;
                break;
            }
            default: absorb(r); break;
        }
    }
}

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
                      num(params[i].second) + "; every quantization parameter must be finite (§5.3)");
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
            warning(refusal::kBoundDisagreesWithRecord, "Quantization.bounds." + key, "", bounds_at,
                    "band " + std::to_string(b + 1) + " declares depth " +
                        std::to_string(q.sh_depths[b]) + " but bounds has no " + key +
                        " (expected " + want + ", M023)");
        else if (is_bound_spelling(*got) && compare_bounds(*got, want) != 0)
            warning(refusal::kBoundDisagreesWithRecord, "Quantization.bounds." + key, *got, bounds_at,
                    "bounds." + key + " is " + *got + " but band " + std::to_string(b + 1) +
                        "'s depth " + std::to_string(q.sh_depths[b]) + " gives " + want +
                        " code units (§6.5, M023)");
        if (b > 0 && q.sh_depths[b] > q.sh_depths[b - 1])
            warning(refusal::kShDepthsNotDecreasing, "", std::to_string(q.sh_depths[b]), bounds_at,
                    "band " + std::to_string(b + 1) + " has depth " + std::to_string(q.sh_depths[b]) +
                        ", above band " + std::to_string(b) + "'s " +
                        std::to_string(q.sh_depths[b - 1]) + "; depths should fall with band index (§6.5)");
    }
    if (!q.sh_depths.empty()) {
        const unsigned coarsest = *std::min_element(q.sh_depths.begin(), q.sh_depths.end());
        const std::uint32_t pitch = std::uint32_t{1} << (8 - coarsest);
        if (q.step_sh != pitch)
            warning(refusal::kBoundDisagreesWithRecord, "Quantization.step_sh", std::to_string(q.step_sh),
                    params_at + 8 * std::size(params),
                    "step_sh is " + std::to_string(q.step_sh) + " but the coarsest declared band "
                        "depth " + std::to_string(coarsest) + " has pitch " + std::to_string(pitch) +
                        " (§6.5)");
        const std::string want = std::to_string(sh_bound_for_depth(coarsest));
        if (const std::string* sh = q.bound("sh");
            sh && is_bound_spelling(*sh) && compare_bounds(*sh, want) != 0)
            warning(refusal::kBoundDisagreesWithRecord, "Quantization.bounds.sh", *sh, bounds_at,
                    "bounds.sh is " + *sh + " but the coarsest band's bound is " + want + " (§6.5)");
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

// §3, §6: a decoded attribute that is not finite (a finite but huge quantization step or origin
// multiplies a bin past the range of f32, or exp of a huge log-domain value overflows). Readers
// decode it as written and a renderer cannot draw it; the specification requires the parameters
// to be finite (an error above, and then their attributes are not reported again) but says
// nothing of the decoded values, so each is a warning: per record and attribute, naming the first
// gaussian, its value and how many gaussians of the record have one. With `once`, an attribute
// named there is not checked, and one reported is added (keyframe-delta states carry the same
// gaussians from state to state: the first state that has one is named).
void Validator::check_decoded(const GaussianBlock& b, std::string_view record, std::uint64_t at,
                              std::set<std::string>* once) {
    if (!scene_.has_quantization) return;
    const Quantization& q = scene_.quantization;
    struct Attribute {
        const char* name;
        const Column<float> GaussianBlock::*column;
        std::size_t per;
        std::initializer_list<double> params;  // what it is computed from
        const char* from;
    };
    const Attribute attributes[] = {
        {"position", &GaussianBlock::position, 3,
         {q.pos_origin[0], q.pos_origin[1], q.pos_origin[2], q.step_pos},
         "pos_origin + step_pos x bin"},
        {"scale", &GaussianBlock::scale, 3, {q.step_scale_log}, "exp(step_scale_log x bin)"},
        {"rotation", &GaussianBlock::rotation, 4, {q.step_rot}, "step_rot x bin, smallest three"},
        {"color", &GaussianBlock::color, 4, {q.step_rgb, q.step_alpha}, "step_rgb, step_alpha x bin"},
        {"motion", &GaussianBlock::motion, 3, {q.step_motion, q.step_sigma_log},
         "step_motion x 2^-class x bin"},
        {"mu_t", &GaussianBlock::mu_t, 1, {q.step_time, q.step_sigma_log},
         "step_time x 2^class x bin"},
        {"sigma_t", &GaussianBlock::sigma_t, 1, {q.step_sigma_log}, "exp(step_sigma_log x bin)"}};
    for (const Attribute& a : attributes) {
        if (once && once->count(a.name)) continue;
        if (!std::all_of(a.params.begin(), a.params.end(), [](double v) { return std::isfinite(v); }))
            continue;
        const Column<float>& column = b.*a.column;
        std::size_t first = b.count, component = 0, gaussians = 0;
        for (std::size_t i = 0; i < b.count && a.per * (i + 1) <= column.size(); ++i) {
            bool bad = false;
            for (std::size_t c = 0; c < a.per; ++c) {
                const float v = column[i * a.per + c];
                // +inf sigma_t is a never-fading gaussian's (flags bit 0), not a value.
                const bool never = a.column == &GaussianBlock::sigma_t && v > 0 &&
                                   (b.flags[i] & kFlagNeverFades) != 0;
                if (std::isfinite(v) || never) continue;
                if (!bad && first == b.count) {
                    first = i;
                    component = c;
                }
                bad = true;
            }
            gaussians += bad;
        }
        if (gaussians == 0) continue;
        const float value = column[first * a.per + component];
        const std::string field = std::string(record.substr(0, record.find(" at byte"))) + "." +
                                  a.name + (a.per > 1 ? "[" + std::to_string(component) + "]" : "");
        warning(refusal::kNonFiniteValue, field, num(value), at,
                "gaussian " + std::to_string(first) + " of the " + std::string(record) +
                    " decodes " + a.name + (a.per > 1 ? "[" + std::to_string(component) + "]" : "") +
                    " to " + num(value) + " (" + a.from + "); " + std::to_string(gaussians) +
                    " of its " + std::to_string(b.count) + " gaussians have a non-finite " +
                    a.name + ", which a renderer cannot draw (§3, §6)");
        if (once) once->insert(a.name);
    }
}

// ---------------------------------------------------------------------------------------------
// Chunks: held with their SH band records, decoded when the next other record arrives.

void Validator::begin_chunk(HeldRecord& held) {
    (void)builder_.seal(held.view.offset);
    std::swap(chunk_, held);
    chunk_pending_ = true;
    band_count_ = 0;
}

void Validator::absorb_band(HeldRecord& held) {
    const RecordView& r = held.view;
    // A chunk has three bands at most: a fourth band record follows no chunk (the streaming
    // reader stops collecting bands at three and meets it alone).
    if (!chunk_pending_ || band_count_ == bands_.size()) {
        report_refusal(orphan_sh_band(r.offset), "SH Band Stream", r.offset);
        return;
    }
    auto b = parse_sh_band(r);
    if (!take(b, r)) return;
    for (std::size_t i = 0; i < band_count_; ++i)
        if (bands_[i].view.content[0] == b->band) {
            error(refusal::kDuplicateShBand, "", std::to_string(b->band), r.offset,
                  "two SH Band Stream records for band " + std::to_string(b->band) +
                      " follow the chunk at byte " + std::to_string(chunk_.view.offset));
            return;
        }
    // parse_sh_band refuses bands outside 1..3, so three distinct ones fill the slots.
    std::swap(bands_[band_count_++], held);
}

void Validator::flush_chunk() {
    if (!chunk_pending_) return;
    chunk_pending_ = false;
    const RecordView& r = chunk_.view;
    ++report_.chunks;
    std::vector<ShBandRecord> bands;
    std::vector<ChunkIndex::Band> ranges;
    for (std::size_t i = 0; i < band_count_; ++i) {
        auto b = parse_sh_band(bands_[i].view);
        if (!b.ok()) continue;
        bands.push_back(*b);
        ranges.push_back({b->band, bands_[i].view.offset, bands_[i].view.total_length()});
    }
    band_count_ = 0;
    ChunkDecodeOptions decode = reader_.decode;
    if (r.opcode == op::chunk) {
        auto c = parse_chunk(r);
        if (!take_chunk(c, r)) return;
        check_finite("Chunk.t0", c->t0, r.content_offset(),
                     "a chunk's interval is a span of time (§5.5)");
        check_finite("Chunk.t1", c->t1, r.content_offset() + 8,
                     "a chunk's interval is a span of time (§5.5)");
        if (!note_chunk(r, FramedChunk::of(r, *c), std::move(ranges), "Chunk.compression",
                        c->compression))
            return;
        Status st = decode_chunk_bins(scene_, *c, bands, decode, bins_, scratch_);
        if (!take_chunk(st, r)) return;
        if (scene_.has_header && scene_.header.temporal_model == kModelKeyframeDelta) {
            note_ids(bins_.gaussian_id);
            return;
        }
        gaussians_ += bins_.count;
        if (!scene_.has_quantization) {
            aabb_valid_ = false;
            return;
        }
        block_.clear();
        dequantize(scene_, bins_, block_);
        check_decoded(block_, "Chunk at byte " + std::to_string(r.offset), r.offset);
        for (std::size_t i = 0; i < block_.count; ++i)
            for (int k = 0; k < 3; ++k) {
                const double v = block_.position[i * 3 + k];
                if (!aabb_known_ || v < aabb_[k]) aabb_[k] = v;
                if (!aabb_known_ || v > aabb_[3 + k]) aabb_[3 + k] = v;
                if (k == 2) aabb_known_ = true;
            }
        return;
    }
    // A Delta Chunk.
    if (scene_.has_header && scene_.header.temporal_model != kModelKeyframeDelta)
        error(refusal::kDeltaChunkInGaussianBirth, "", scene_.header.temporal_model, r.offset,
              "a Delta Chunk record in a '" + scene_.header.temporal_model + "' file (§5.18)");
    auto d = parse_delta_chunk(r);
    if (!take_chunk(d, r)) return;
    if (!note_chunk(r, FramedChunk::of(r, *d), std::move(ranges), "Delta Chunk.compression",
                    d->compression))
        return;
    Status st = decode_delta_bins(scene_, *d, bands, decode, delta_bins_, scratch_);
    if (!take_chunk(st, r)) return;
    note_ids(delta_bins_.births.gaussian_id);
}

// The framing of a Chunk or Delta Chunk that parsed (checked against the index at the end), and
// its compression string. Whether to decode it.
bool Validator::note_chunk(const RecordView& r, FramedChunk framed,
                           std::vector<ChunkIndex::Band> ranges,
                           std::string_view compression_field, const std::string& compression) {
    chunks_.push_back(std::move(framed));
    chunks_.back().bands = std::move(ranges);
    check_utf8(compression_field, compression, r.offset);
    if (!compression.empty()) compressed_chunk_seen_ = true;
    return options_.decode_chunks;
}

// Keyframe-delta gaussian ids seen, for the distinct count (up to 2^24 of them).
void Validator::note_ids(const std::vector<std::int32_t>& ids) {
    for (std::int32_t id : ids) {
        if (ids_.size() >= (std::size_t{1} << 24)) {
            ids_capped_ = true;
            return;
        }
        ids_.insert(static_cast<std::uint32_t>(id));
    }
}

// ---------------------------------------------------------------------------------------------
// The Footer and the tail (§5.2, §4.5).

bool Validator::after_footer(const RecordView& r, Status& io) {
    footer_offset_ = r.offset;
    if (r.content_length != kFooterContentSize)
        error(refusal::kBadFooter, "Footer.content_length", std::to_string(r.content_length), r.offset,
              "the Footer declares content_length " + std::to_string(r.content_length) +
                  "; the 37-byte tail needs exactly 20 (§5.2)");
    auto f = parse_footer(r);
    if (take(f, r)) {
        footer_ = *f;
        scene_.footer = *f;
        const std::uint64_t content = r.content_offset();
        if (f->summary_start != 0) {
            if (Status range = check_summary_start(*f, r.offset, content); !range.ok()) {
                report_refusal(range.error(), "Footer", r.offset);
            } else {
                const SummaryRun& run = stream_.summary_run();
                if (Status st = run.check_start(*f, content); !st.ok()) {
                    report_refusal(st.error(), "Footer", r.offset);
                } else {
                    // The readers read on past a summary that fails its CRC (§4.5); the
                    // validator reports it.
                    const SummaryCrc crc = compare_summary_crc(*f, run.crc());
                    if (crc == SummaryCrc::mismatch)
                        report_refusal(summary_crc_mismatch(*f, run.crc(), content), "Footer",
                                       r.offset);
                    scene_.summary_crc_verified = crc == SummaryCrc::verified;
                }
            }
        }
        if (f->summary_offset_start != 0) {
            const auto& at = builder_.offsets().summary_offsets;
            if (std::find(at.begin(), at.end(), f->summary_offset_start) == at.end())
                error(refusal::kSummaryOffsetMismatch, "Footer.summary_offset_start",
                      std::to_string(f->summary_offset_start), content + 8,
                      "summary_offset_start " + std::to_string(f->summary_offset_start) +
                          " names no Summary Offset record (§5.2)");
        }
    }
    // The trailing magic, and nothing after it (§4, §4.1).
    const std::uint64_t at = r.end_offset();
    std::vector<std::uint8_t> tail;
    auto got = read_growing(source_, at, kMagicSize + 1, tail);
    if (!got.ok()) {
        io = std::move(got).error();
        return false;
    }
    const bool magic =
        *got >= kMagicSize && std::memcmp(tail.data(), kMagic.data(), kMagicSize) == 0;
    if (Status m = RecordStream::check_after_footer(Bytes(tail).first(*got), at); !m.ok()) {
        if (!magic && *got > kMagicSize) {
            // The Footer sits mid-file (or is repeated): say so, and walk on over what follows.
            report_refusal(m.error(), "Footer", r.offset);
            return true;
        }
        if (m.error().kind == ErrorKind::truncated) report_.truncated = true;
        report_refusal(m.error(), "magic", at);
    } else if (*got > kMagicSize) {
        // The readers keep the content and report the count (SceneInfo::trailing_bytes).
        error(refusal::kBytesAfterMagic, "", "", at + kMagicSize,
              "bytes follow the trailing magic at byte " + std::to_string(at + kMagicSize) +
                  "; the magic must be the last bytes of the file (§4)");
    }
    return false;
}

// ---------------------------------------------------------------------------------------------
// The index against the chunks it frames (§5.8, M033), the summary groups (§5.14).

// The walk was cut before the Footer (a length that runs past the end, or misframes what
// follows), yet the source can be read at random and its tail is intact: the index it names is
// checked as an indexed reader checks it when it fetches each chunk by its entry (§5.8: the
// range must frame a chunk record, which must say what its entry says), so the validator reports
// what that reader refuses. A summary that fails its CRC is not used (an indexed reader does not
// use one either).
void Validator::check_index_by_tail() {
    if (footer_ || full() || !source_.random_access() || !size_ ||
        *size_ < kMagicSize + kTailSize)
        return;
    const RangeFetcher fetch(source_, reader_.max_record_bytes);
    auto tail = read_footer_tail(fetch, *size_);
    if (!tail.ok() || tail->footer.summary_start == 0) return;
    std::vector<std::uint8_t> summary;
    SummaryCrc crc = SummaryCrc::not_stated;
    if (!fetch_summary(fetch, *tail, reader_.max_summary_bytes, true, summary, crc).ok()) return;
    FetchedChunkBuffers buffers;
    RecordsInMemory records(summary, tail->footer.summary_start);
    while (!full()) {
        auto next = records.next();
        if (!next.ok() || !*next) return;
        const RecordView& r = **next;
        if (r.opcode != op::chunk_index) continue;
        auto e = parse_chunk_index(r);
        if (!e.ok()) continue;
        auto found = fetch.opcode_at(e->chunk_offset);
        if (!found.ok()) continue;
        const std::uint8_t opcode = *found == op::delta_chunk ? op::delta_chunk : op::chunk;
        IndexCheckOptions fetched;
        fetched.ranges = false;
        // The bands are checked only when the Header says how many there are.
        const int bands = scene_.has_header ? std::min<int>(3, scene_.header.sh_degree) : 0;
        ChunkTrip failed = ChunkTrip::fetch;
        auto trip = fetch_indexed_chunk(fetch, *e, opcode, fetched, bands, true, buffers, {},
                                        &failed);
        // A record that does not parse: the walk, or the record's own parser, says why.
        if (!trip.ok() && failed != ChunkTrip::parse)
            report_refusal(trip.error(), "Chunk Index", r.offset);
    }
}

void Validator::check_index() {
    const std::vector<ChunkIndex>& index = scene_.index;
    const std::vector<std::uint64_t>& index_at = builder_.offsets().index;
    if (index.empty()) {
        // Readers scan such a file and build its index (M016), so it is read; but a seek then
        // costs the whole file, which the model exists to avoid (§11.8): a warning.
        if (keyframe_delta_ && !chunks_.empty())
            warning(refusal::kNoChunkIndex, "", "", footer_offset_ ? footer_offset_ : kNoOffset,
                    "a keyframe-delta file without a Chunk Index: readers read it front to back "
                    "(M016), so a seek costs the whole file rather than one chain (§11.8)");
        return;
    }
    IndexCheckOptions check;
    check.keyframe = keyframe_delta_ ? IndexCheckOptions::KeyframeFields::required
                                     : IndexCheckOptions::KeyframeFields::when_present;
    ChunksNamed named;
    for (std::size_t i = 0; i < index.size(); ++i) {
        if (full()) return;
        const ChunkIndex& e = index[i];
        auto c = named.name(chunks_, e, index_at[i]);
        if (!c.ok()) {
            report_refusal(c.error(), "Chunk Index", index_at[i]);
            continue;
        }
        check_index_entry(e, **c, index_at[i], check, [this](Error err) {
            report_refusal(err, "Chunk Index", kNoOffset);
            return !full();
        });
    }
    for (std::size_t k = 0; k < chunks_.size() && !full(); ++k)
        if (!named.named(k))
            report_refusal(unindexed_chunk(chunks_[k].delta ? op::delta_chunk : op::chunk,
                                           chunks_[k].offset),
                           "Chunk Index", chunks_[k].offset);
    // The keyframe-delta seek structure over the whole index (§11.1, §11.8).
    if (keyframe_delta_) {
        const bool all_fields = std::all_of(index.begin(), index.end(),
                                            [](const ChunkIndex& e) { return e.keyframe.has_value(); });
        if (all_fields) {
            auto timeline = KeyframeTimeline::build(index, scene_.header.duration_sec);
            if (!timeline.ok()) report_refusal(timeline.error(), "Chunk Index", index_at.front());
        }
    }
    // The summary records as the walk framed them, for the groups below.
    std::vector<RecordEntry> summary_records;
    for (const RecordEntry& rec : stream_.log())
        if (is_summary_opcode(rec.opcode)) summary_records.push_back(rec);
    // §5.14: each Summary Offset frames its group's records, whole. A length that also covers
    // records of another opcode after the group is in circulation (wire-notes): a warning.
    for (std::size_t g = 0; g < scene_.summary_offsets.size(); ++g) {
        const SummaryOffset& s = scene_.summary_offsets[g];
        const std::uint64_t at = builder_.offsets().summary_offsets[g];
        const std::uint64_t end = s.group_start + s.group_length;
        std::string problem;
        bool overlong = false, in_group = true, started = false;
        std::uint64_t expect = s.group_start;
        for (const RecordEntry& rec : summary_records) {
            const bool inside = rec.offset >= s.group_start && rec.offset < end;
            if (!inside) {
                if (rec.opcode == s.group_opcode && problem.empty())
                    problem = "leaves out the " + opcode_name(rec.opcode) + " record at byte " +
                              std::to_string(rec.offset);
                continue;
            }
            if (!started && rec.offset != s.group_start && problem.empty())
                problem = "does not start at a record";
            started = true;
            if (rec.offset != expect && problem.empty()) problem = "does not frame whole records";
            expect = rec.offset + rec.length;
            if (rec.length > end - rec.offset && problem.empty()) problem = "cuts a record";
            if (rec.opcode != s.group_opcode) {
                in_group = false;
                overlong = true;
            } else if (!in_group && problem.empty()) {
                problem = "mixes other records into the group";
            }
        }
        if (!started && problem.empty()) problem = "frames no record";
        else if (expect != end && problem.empty()) problem = "does not end at a record boundary";
        const std::string range = "Summary Offset for " + opcode_name(s.group_opcode) + " names [" +
                                  std::to_string(s.group_start) + ", +" +
                                  std::to_string(s.group_length) + "), which ";
        if (!problem.empty())
            error(refusal::kSummaryOffsetMismatch, "", std::to_string(s.group_start), at,
                  range + problem + " (§5.14)");
        else if (overlong)
            warning(refusal::kSummaryOffsetOverlong, "", std::to_string(s.group_length), at,
                    range + "also covers records of other opcodes after the group; the length "
                            "should be the group's alone (§5.14)");
    }
}

// §11.3-§11.7: the composition rules need the population a delta composes onto, which the
// walk does not keep. A keyframe-delta file on a re-readable source is read once more by the
// streaming keyframe-delta front-end; its first refusal is reported unless the walk already
// reported the same rule at the same byte.
void Validator::check_composition() {
    if (!keyframe_delta_ || !options_.decode_chunks || !source_.random_access() || full()) return;
    KeyframeDeltaStream stream(source_, reader_);
    std::optional<Error> refused;
    if (Status st = stream.open(); !st.ok()) {
        refused = st.error();
    } else {
        ChunkBins bins;
        StateInfo info;
        std::set<std::string> reported;  // decoded attributes found non-finite in an earlier state
        while (true) {
            auto next = stream.next_state_bins(bins, &info);
            if (!next.ok()) {
                refused = next.error();
                break;
            }
            if (!*next) break;
            block_.clear();
            dequantize(stream.scene(), bins, block_);
            check_decoded(block_,
                          std::string(info.chunk_kind == kChunkKindDelta ? "Delta Chunk" : "Chunk") +
                              " at byte " + std::to_string(info.offset) + " (its composed state)",
                          info.offset, &reported);
        }
    }
    if (!refused || refused->kind == ErrorKind::truncated || refused->kind == ErrorKind::io) return;
    for (const Finding& f : report_.findings)
        if (f.rule == refused->refusal && (f.offset == refused->offset || !refused->has_offset()))
            return;
    report_refusal(*refused, "Delta Chunk", kNoOffset);
}

// §5.1 gaussian_count and §5.12 Statistics against what the chunks hold. Statistics is advisory
// (M036): a lie there is a warning; the Header's total is a field of the format: an error.
void Validator::check_statistics() {
    // The totals need every chunk decoded; the record counts and the duration do not.
    const bool complete = options_.decode_chunks && !decode_failed_ && !report_.truncated;
    std::optional<std::uint64_t> computed;
    if (complete && !keyframe_delta_) computed = gaussians_;
    else if (complete && !ids_capped_) computed = ids_.size();
    if (computed && scene_.has_header && scene_.header.gaussian_count != *computed)
        error(refusal::kGaussianCountMismatch, "", std::to_string(scene_.header.gaussian_count),
              content_offset_of(header_offset()) + 4 + scene_.header.profile.size() + 4 +
                  scene_.header.library.size() + 8,
              "Header gaussian_count is " + std::to_string(scene_.header.gaussian_count) +
                  " but the chunks hold " + std::to_string(*computed) +
                  (keyframe_delta_ ? " distinct gaussian ids" : " gaussians"));
    if (!scene_.statistics) return;
    const Statistics& s = *scene_.statistics;
    const std::uint64_t at = content_offset_of(builder_.offsets().statistics);
    if (computed && s.gaussian_count != *computed)
        warning(refusal::kStatisticsMismatch, "Statistics.gaussian_count", std::to_string(s.gaussian_count), at,
                "Statistics gaussian_count is " + std::to_string(s.gaussian_count) +
                    " but the chunks hold " + std::to_string(*computed));
    if (!report_.truncated && s.chunk_count != chunks_.size())
        warning(refusal::kStatisticsMismatch, "Statistics.chunk_count", std::to_string(s.chunk_count), at + 8,
                "Statistics chunk_count is " + std::to_string(s.chunk_count) + " but the file has " +
                    std::to_string(chunks_.size()) + " chunk record(s)");
    if (scene_.has_header && s.duration_sec != scene_.header.duration_sec)
        warning(refusal::kStatisticsMismatch, "Statistics.duration_sec", num(s.duration_sec), at + 12,
                "Statistics duration_sec is " + num(s.duration_sec) + " but the Header says " +
                    num(scene_.header.duration_sec));
    if (complete && !keyframe_delta_ && aabb_known_ && aabb_valid_) {
        // Decoded positions differ from the originals by at most the grid's half step.
        const double tolerance = std::fabs(scene_.quantization.step_pos) + 1e-9;
        for (int k = 0; k < 6; ++k)
            if (!(std::fabs(s.aabb[k] - aabb_[k]) <= tolerance)) {
                warning(refusal::kStatisticsMismatch, "Statistics.aabb[" + std::to_string(k) + "]",
                        num(s.aabb[k]), at + 20 + 8 * static_cast<std::uint64_t>(k),
                        "Statistics aabb[" + std::to_string(k) + "] is " + num(s.aabb[k]) +
                            " but the decoded positions give " + num(aabb_[k]));
                break;
            }
    }
}

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
        if (const std::string* v = header_key("visibility_profile")) profile = KeySeen{*v, header_offset()};
    if (!profile)
        warning(refusal::kNoVisibilityProfile, "", "", kNoOffset,
                "no visibility_profile metadata key: producers should declare gaussian (soft fade) "
                "or box (hard edges) (M004)");
    else if (profile->value != "gaussian" && profile->value != "box")
        warning(refusal::kUnknownVisibilityProfile, "", profile->value, profile->offset,
                "visibility_profile is " + detail::quoted(profile->value) +
                    "; the registry defines gaussian and box (flat-top is reserved, not representable)");
    if (!private_records_.empty() && !metadata_key("application") && !header_key("application"))
        warning(refusal::kPrivateRecordsWithoutApplication, "", hex_byte(private_records_.front().opcode),
                private_records_.front().offset,
                std::to_string(private_records_.size()) + " private-range record(s), the first " +
                    hex_byte(private_records_.front().opcode) + " at byte " +
                    std::to_string(private_records_.front().offset) +
                    ", and no application metadata entry naming what wrote them (M012)");
    const bool flag = scene_.header.chunks_compressed();
    if (!chunks_.empty() && flag != compressed_chunk_seen_)
        warning(refusal::kCompressedFlagMismatch, "", std::to_string(scene_.header.flags), header_offset(),
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
            warning(refusal::kUndeclaredUnseekableContent, "", scene_.header.profile, header_offset(),
                    "every chunk covers the whole timeline [0, " + num(scene_.header.duration_sec) +
                        "), so a seek costs the whole scene, and the file does not say so (profile "
                        "\"baked\", §8, M106)");
    }
}

}  // namespace

Result<ValidationReport> validate(ByteSource& source, const ValidateOptions& options) {
    Validator v(source, options);
    return v.run();
}

}  // namespace fourdgs
