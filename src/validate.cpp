// validate() (fourdgs/validate.hpp): every problem in a file, not just the first.
//
// The walk frames records itself (wire.hpp) and parses each with the records.hpp parsers, so a
// record that fails is one finding and the walk steps over it by content_length; only a framing
// failure (a length past the end of the data) ends it. What parsed is assembled into a SceneInfo
// the way SceneBuilder assembles it, with the same refusal identifiers, except that a rule broken
// here is reported and the walk goes on. Chunks are decoded with their SH band records as they
// arrive (one chunk and its bands in memory at a time). The rules that span the file — the index
// against the chunks, the summary and the tail, Statistics, the provenance/audio references and
// the SHOULD-level advice — run after the walk over what was kept: small per-record summaries,
// never record contents.
#include "fourdgs/validate.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fourdgs/decode.hpp"
#include "fourdgs/extras.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/record_stream.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"
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

// The section of the record a "Record.field" names, or "".
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

// What is kept of each chunk for the index checks: never its contents.
struct ChunkSeen {
    std::uint64_t offset = 0, length = 0;
    double t0 = 0, t1 = 0;
    std::uint32_t count = 0;  // Chunk count, or update + birth + death for a Delta Chunk
    bool delta = false;
    std::uint8_t delta_mode = 0;
    std::uint64_t reference_offset = 0, keyframe_offset = 0;
    std::uint16_t depth = 0;
    std::vector<ChunkIndex::Band> bands;
};

struct IndexSeen {
    ChunkIndex entry;
    std::uint64_t offset = 0;
};

struct RecordSeen {
    std::uint8_t opcode = 0;
    std::uint64_t offset = 0, length = 0;
};

// A record read whole: the bytes (header + content) and the framed view over them.
struct Held {
    std::vector<std::uint8_t> bytes;
    RecordView view;
};

class Validator {
public:
    Validator(ByteSource& source, const ValidateOptions& options)
        : source_(source), options_(options) {
        reader_ = options.reader;
        reader_.accept_keyframe_delta = true;
    }

    Result<ValidationReport> run();

private:
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

    // ---- the walk
    enum class ReadOutcome { record, end_of_data, stop };
    ReadOutcome read_record(std::uint64_t at, Held& out, Status& io);
    void walk(Status& io);
    void absorb(const RecordView& r, const std::vector<std::uint8_t>& bytes);
    void absorb_header(const RecordView& r);
    void absorb_quantization(const RecordView& r);
    void absorb_audio(const RecordView& r);
    void absorb_band(Held& held);
    void begin_chunk(Held& held);
    void flush_chunk();
    void seal(std::uint64_t at);
    bool after_footer(const RecordView& r, Status& io);  // true: keep walking
    void progress(std::uint64_t at) {
        if (options_.progress && at >= next_progress_) {
            options_.progress(at, report_.file_size);
            next_progress_ = at + kProgressStep;
        }
    }

    // ---- rules that span records
    void check_quantization_values(const Quantization& q, std::uint64_t at);
    void check_index();
    void check_composition();
    void check_statistics();
    void check_advice();
    void check_coordinate_system();
    void check_references();

    static constexpr std::uint64_t kProgressStep = std::uint64_t{4} << 20;

    ByteSource& source_;
    const ValidateOptions& options_;
    ReaderOptions reader_;
    ValidationReport report_;
    std::uint64_t next_progress_ = 0;
    std::optional<std::uint64_t> size_;

    SceneInfo scene_;
    RecordOffsets offsets_;
    std::uint64_t header_offset_ = kNoOffset, quantization_offset_ = kNoOffset;
    std::uint64_t records_before_header_ = 0;
    bool header_first_reported_ = false;
    bool sealed_ = false;
    bool keyframe_delta_ = false;

    // Where the metadata keys were found (offsets of the records carrying them).
    struct KeySeen {
        std::string value;
        std::uint64_t offset = 0;
    };
    std::optional<KeySeen> coordinate_system_, visibility_profile_, application_;
    std::vector<RecordSeen> private_records_;

    // Chunks and their bands, the index, the summary.
    Held chunk_;          // the pending Chunk or Delta Chunk, decoded when its bands are in
    bool chunk_pending_ = false;
    std::array<Held, 3> bands_;
    std::size_t band_count_ = 0;
    std::vector<ChunkSeen> chunks_;
    std::vector<IndexSeen> index_;
    std::vector<RecordSeen> summary_records_;
    std::optional<std::pair<Statistics, std::uint64_t>> statistics_;
    std::vector<std::pair<SummaryOffset, std::uint64_t>> summary_offsets_;
    SummaryRun summary_run_;
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
    Held held_;
};

// Reads the record at `at` whole into `out`. end_of_data: the data ended exactly at `at`.
// stop: a framing failure was reported (or the source failed: `io` is set).
Validator::ReadOutcome Validator::read_record(std::uint64_t at, Held& out, Status& io) {
    std::uint8_t head[kRecordHeaderSize];
    auto got = source_.read_at(at, head);
    if (!got.ok()) {
        io = std::move(got).error();
        return ReadOutcome::stop;
    }
    if (*got == 0) return ReadOutcome::end_of_data;
    if (*got < kRecordHeaderSize) {
        // Eight bytes of trailing magic with no Footer before them: the Footer is missing.
        if (*got == kMagicSize && std::memcmp(head, kMagic.data(), kMagicSize) == 0) {
            error(refusal::kMissingFooter, "", "", at,
                  "the trailing magic at byte " + std::to_string(at) +
                      " follows no Footer record; the Footer must be the last record (§5.2)");
            return ReadOutcome::stop;
        }
        report_.truncated = true;
        error(refusal::kTruncated, "", std::to_string(*got), at,
              "the file ends inside a record header (" + std::to_string(*got) + " of 9 bytes)");
        return ReadOutcome::stop;
    }
    std::uint64_t length = 0;
    std::memcpy(&length, head + 1, 8);
    const std::string name = opcode_name(head[0]);
    if (size_ && length > *size_ - std::min(*size_, at + kRecordHeaderSize)) {
        report_.truncated = true;
        error(refusal::kTruncated, name + ".content_length", std::to_string(length), at,
              name + " record at byte " + std::to_string(at) + " declares content_length " +
                  std::to_string(length) + " but only " +
                  std::to_string(*size_ - std::min(*size_, at + kRecordHeaderSize)) +
                  " bytes remain in the file");
        return ReadOutcome::stop;
    }
    if (length > reader_.max_record_bytes) {
        error(refusal::kLimitExceeded, name + ".content_length", std::to_string(length), at,
              name + " record at byte " + std::to_string(at) + " declares content_length " +
                  std::to_string(length) + ", over the configured limit of " +
                  std::to_string(reader_.max_record_bytes) + "; its content was not checked");
        out.bytes.resize(kRecordHeaderSize);
        std::memcpy(out.bytes.data(), head, kRecordHeaderSize);
        out.view = RecordView{head[0], at, length, {}};
        return ReadOutcome::record;  // content empty: the caller steps over it
    }
    out.bytes.resize(kRecordHeaderSize);  // (resize + memcpy: GCC 12 misreads insert here)
    std::memcpy(out.bytes.data(), head, kRecordHeaderSize);
    auto body = read_growing(source_, at + kRecordHeaderSize, length, out.bytes);
    if (!body.ok()) {
        io = std::move(body).error();
        return ReadOutcome::stop;
    }
    if (*body < length) {
        report_.truncated = true;
        error(refusal::kTruncated, name + ".content_length", std::to_string(length), at,
              name + " record at byte " + std::to_string(at) + " is cut after " +
                  std::to_string(*body) + " of " + std::to_string(length) + " content bytes");
        return ReadOutcome::stop;
    }
    auto view = parse_record(out.bytes, at);
    if (!view.ok()) {  // cannot happen: the bytes were read to the length
        report_refusal(view.error(), name, at);
        return ReadOutcome::stop;
    }
    out.view = *view;
    return ReadOutcome::record;
}

Result<ValidationReport> Validator::run() {
    size_ = source_.size();
    report_.file_size = size_.value_or(0);
    std::uint8_t magic[kMagicSize];
    FOURDGS_ASSIGN(std::size_t got, source_.read_at(0, magic));
    if (Status m = check_magic(std::span(magic, got), 0); !m.ok()) {
        if (m.error().kind == ErrorKind::truncated) report_.truncated = true;
        report_refusal(m.error(), "magic", 0);
        return std::move(report_);  // not a version-1 .4dgs file: nothing after this is meaningful
    }
    Status io;
    walk(io);
    if (!io.ok()) return std::move(io).error();
    flush_chunk();
    if (!sealed_ && !report_.truncated) seal(kNoOffset);  // a file without chunks still needs both
    check_index();
    check_composition();
    check_statistics();
    check_coordinate_system();
    check_references();
    check_advice();
    if (options_.progress) options_.progress(report_.file_size, report_.file_size);
    return std::move(report_);
}

void Validator::walk(Status& io) {
    std::uint64_t at = kMagicSize;
    while (!full()) {
        progress(at);
        Held& held = held_;
        const ReadOutcome outcome = read_record(at, held, io);
        if (outcome == ReadOutcome::stop) return;
        if (outcome == ReadOutcome::end_of_data) {
            if (!footer_) {
                report_.truncated = true;
                error(refusal::kTruncated, "Footer", "", at,
                      "the file ends at byte " + std::to_string(at) +
                          " without a Footer and the trailing magic");
            }
            return;
        }
        ++report_.records;
        const RecordView r = held.view;
        const std::uint64_t next = r.end_offset();
        if (held.bytes.size() < r.total_length()) {  // over the limit: stepped over unread
            flush_chunk();
            at = next;
            continue;
        }
        if (r.opcode != op::sh_band) flush_chunk();
        switch (r.opcode) {
            case op::chunk:
            case op::delta_chunk: begin_chunk(held); break;
            case op::sh_band: absorb_band(held); break;
            case op::footer: {
                if (!after_footer(r, io)) return;
                break;
            }
            default: absorb(r, held.bytes); break;
        }
        at = next;
    }
}

// ---------------------------------------------------------------------------------------------
// Records other than chunks.

void Validator::absorb(const RecordView& r, const std::vector<std::uint8_t>& bytes) {
    summary_run_.add(r.opcode, r.offset, bytes);  // §4.5
    if (r.opcode == op::header) {
        absorb_header(r);
        return;
    }
    if (header_offset_ == kNoOffset) {
        ++records_before_header_;
        if (!header_first_reported_) {
            header_first_reported_ = true;
            error(refusal::kHeaderNotFirst, "", opcode_name(r.opcode), r.offset,
                  "the first record is " + opcode_name(r.opcode) +
                      "; a file must begin with its Header (§4)");
        }
    }
    switch (r.opcode) {
        case op::quantization: absorb_quantization(r); break;
        case op::window_table: {
            if (scene_.has_window_table) {
                error(refusal::kDuplicateWindowTable, "", "", r.offset,
                      "a second Window Table record at byte " + std::to_string(r.offset) +
                          "; the format allows exactly one (§4)");
                break;
            }
            auto t = parse_window_table(r);
            if (!take(t, r)) break;
            scene_.windows = std::move(t->windows);
            scene_.has_window_table = true;
            if (sealed_)  // a late table: decoded chunks were checked against the default
                warning(refusal::kStatisticsMismatch, "Window Table", "", r.offset,
                        "the Window Table follows chunks that were checked against the default "
                        "one-window table");
            break;
        }
        case op::metadata: {
            auto m = parse_metadata(r);
            if (!take(m, r)) break;
            for (const auto& [k, v] : m->entries) {
                if (k == "coordinate_system" && !coordinate_system_) coordinate_system_ = KeySeen{v, r.offset};
                if (k == "visibility_profile" && !visibility_profile_) visibility_profile_ = KeySeen{v, r.offset};
                if (k == "application" && !application_) application_ = KeySeen{v, r.offset};
            }
            scene_.metadata.push_back(std::move(*m));
            break;
        }
        case op::camera: {
            auto c = parse_camera(r);
            if (take(c, r)) scene_.camera = std::move(*c);
            break;
        }
        case op::attachment: {
            auto a = parse_attachment(r);
            if (!take(a, r)) break;
            AttachmentEntry e{a->name, a->media_type, {}};
            e.payload.offset = a->data_offset;
            e.payload.length = a->data.size();
            scene_.attachments.push_back(std::move(e));
            break;
        }
        case op::audio_legacy:
        case op::audio_source:
        case op::audio_data: absorb_audio(r); break;
        case op::coordinate_frame: {
            auto f = parse_coordinate_frame(r);
            if (!take(f, r)) break;
            if (!length_unit_agrees(*f))  // M044: an error naming both fields
                error(refusal::kLengthUnitMismatch, "",
                      std::string(to_string(f->length_unit)) + " / " + num(f->metres_per_unit),
                      r.offset,
                      "Coordinate Frame " + detail::quoted(f->name) + " declares length_unit " +
                          std::string(to_string(f->length_unit)) + " (" +
                          num(metres_per(f->length_unit)) + " m) but metres_per_unit " +
                          num(f->metres_per_unit) +
                          "; the two fields must agree (metres_per_unit is the authority, M045)");
            scene_.coordinate_frames.push_back(std::move(*f));
            offsets_.coordinate_frames.push_back(r.offset);
            break;
        }
        case op::sensor_calibration: {
            auto s = parse_sensor_calibration(r);
            if (!take(s, r)) break;
            scene_.sensors.push_back(std::move(*s));
            offsets_.sensors.push_back(r.offset);
            break;
        }
        case op::rig_trajectory: {
            auto t = parse_rig_trajectory(r);
            if (!take(t, r)) break;
            if (t->samples.empty())  // M062
                warning(refusal::kEmptyRigTrajectory, "", "0", r.offset,
                        "Rig Trajectory " + detail::quoted(t->name) +
                            " has no samples; it reads as absent (M061) and a producer should "
                            "omit the record instead (M062)");
            scene_.rig_trajectories.push_back(std::move(*t));
            offsets_.rig_trajectories.push_back(r.offset);
            break;
        }
        case op::geodetic_anchor: {
            auto g = parse_geodetic_anchor(r);
            if (!take(g, r)) break;
            scene_.geodetic_anchors.push_back(std::move(*g));
            offsets_.geodetic_anchors.push_back(r.offset);
            break;
        }
        case op::object_table: {
            if (scene_.object_table) {
                error(refusal::kDuplicateObjectTable, "", "", r.offset,
                      "a second Object Table record; a file carries at most one (§5.15.6)");
                break;
            }
            auto t = parse_object_table(r);
            if (take(t, r)) scene_.object_table = std::move(*t);
            break;
        }
        case op::object_track: {
            auto t = parse_object_track(r);
            if (!take(t, r)) break;
            bool dup = false;
            for (const ObjectTrack& o : scene_.object_tracks) dup = dup || o.object_id == t->object_id;
            if (dup) {
                error(refusal::kDuplicateObjectTrack, "", std::to_string(t->object_id), r.offset,
                      "two Object Track records for object_id " + std::to_string(t->object_id) +
                          " (§5.15.7)");
                break;
            }
            scene_.object_tracks.push_back(std::move(*t));
            break;
        }
        case op::chunk_index: {
            summary_records_.push_back({r.opcode, r.offset, r.total_length()});
            auto e = parse_chunk_index(r);
            if (take(e, r)) index_.push_back({std::move(*e), r.offset});
            break;
        }
        case op::statistics: {
            summary_records_.push_back({r.opcode, r.offset, r.total_length()});
            auto s = parse_statistics(r);
            if (take(s, r)) statistics_ = std::make_pair(*s, r.offset);
            break;
        }
        case op::summary_offset: {
            summary_records_.push_back({r.opcode, r.offset, r.total_length()});
            auto s = parse_summary_offset(r);
            if (take(s, r)) summary_offsets_.push_back({*s, r.offset});
            break;
        }
        default:
            // Unknown, reserved and private records are stepped over (M008). 0x00 and 0x0E are
            // numbers a writer must never emit (§4.3, §5.13, M037).
            if (r.opcode == 0x00 || r.opcode == op::attachment_index)
                error(refusal::kReservedOpcode, "", hex_byte(r.opcode), r.offset,
                      "a record with opcode " + hex_byte(r.opcode) + " at byte " +
                          std::to_string(r.offset) +
                          ", which the specification reserves and a writer must not emit");
            if (r.opcode >= 0x80) private_records_.push_back({r.opcode, r.offset, r.total_length()});
            scene_.skipped.push_back({r.opcode, r.offset, r.total_length()});
            break;
    }
}

void Validator::absorb_header(const RecordView& r) {
    if (header_offset_ != kNoOffset) {
        error(refusal::kDuplicateHeader, "", "", r.offset,
              "a second Header record at byte " + std::to_string(r.offset) +
                  "; the format allows exactly one (§4)");
        return;
    }
    if (records_before_header_ != 0 && !header_first_reported_) {
        header_first_reported_ = true;
        error(refusal::kHeaderNotFirst, "", "", r.offset,
              "the Header is at byte " + std::to_string(r.offset) +
                  " but must be the first record (§4)");
    }
    header_offset_ = r.offset;
    auto h = parse_header(r);
    if (!take(h, r)) return;
    scene_.header = std::move(*h);
    scene_.has_header = true;
    keyframe_delta_ = scene_.header.temporal_model == kModelKeyframeDelta;
    take(check_temporal_model(scene_.header, r.content_offset(), true), r);
}

void Validator::absorb_quantization(const RecordView& r) {
    if (quantization_offset_ != kNoOffset) {
        error(refusal::kDuplicateQuantization, "", "", r.offset,
              "a second Quantization record at byte " + std::to_string(r.offset) +
                  "; the format allows exactly one (§4)");
        return;
    }
    quantization_offset_ = r.offset;
    auto q = parse_quantization(r);
    if (!take(q, r)) return;
    if (q->scheme != kSchemeUniformV1)
        error(refusal::kUnknownQuantizationScheme, "", q->scheme, r.content_offset(),
              "quantization scheme '" + q->scheme + "' is not implemented (only uniform-v1 exists)");
    check_quantization_values(*q, r.content_offset());
    scene_.quantization = std::move(*q);
    scene_.has_quantization = true;
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

// §5.9, §5.16, §5.17, §7: the pairing rules SceneBuilder applies, each reported.
void Validator::absorb_audio(const RecordView& r) {
    if (sealed_)  // M092; the record is still paired, so its other faults are reported too
        error(refusal::kAudioAfterFirstChunk, "", "", r.offset,
              opcode_name(r.opcode) + " record at byte " + std::to_string(r.offset) +
                  " follows gaussian data; every audio record comes before the first chunk");
    if (r.opcode == op::audio_source) {
        auto s = parse_audio_source(r);
        if (!take(s, r)) return;
        for (const AudioSourceEntry& e : scene_.audio) {
            if (e.legacy) {
                error(refusal::kMixedAudioRecords, "", "", r.offset,
                      "an Audio Source record beside a legacy Audio record (§7)");
                return;
            }
            if (e.descriptor.source_id == s->source_id) {
                error(refusal::kDuplicateAudioSource, "", std::to_string(s->source_id), r.offset,
                      "two Audio Source records for source_id " + std::to_string(s->source_id));
                return;
            }
        }
        AudioSourceEntry e;
        e.descriptor = std::move(*s);
        scene_.audio.push_back(std::move(e));
        offsets_.audio.push_back(r.offset);
        return;
    }
    if (r.opcode == op::audio_legacy) {
        auto a = parse_audio_legacy(r);
        if (!take(a, r)) return;
        warning(refusal::kLegacyAudioRecord, "", a->codec, r.offset,
                "a legacy Audio record; writers should emit Audio Source and Audio Data pairs "
                "instead (M035)");
        if (!scene_.audio.empty()) {
            error(refusal::kMixedAudioRecords, "", "", r.offset,
                  scene_.audio.front().legacy
                      ? "a second legacy Audio record"
                      : "a legacy Audio record beside Audio Source records (§7)");
            return;
        }
        AudioSourceEntry e;
        e.legacy = true;
        e.descriptor.codec = a->codec;
        e.descriptor.start_sec = a->start_sec;
        e.descriptor.data_length = a->data.size();
        e.descriptor.duration_sec =
            std::max(0.0, scene_.header.duration_sec - a->start_sec);
        e.payload.offset = a->data_offset;
        e.payload.length = a->data.size();
        scene_.audio.push_back(std::move(e));
        offsets_.audio.push_back(r.offset);
        return;
    }
    auto d = parse_audio_data(r);
    if (!take(d, r)) return;
    for (AudioSourceEntry& e : scene_.audio) {
        if (e.legacy) {
            error(refusal::kMixedAudioRecords, "", "", r.offset,
                  "an Audio Data record beside a legacy Audio record (§7)");
            return;
        }
        if (e.descriptor.source_id != d->source_id) continue;
        if (e.payload.offset != 0) {
            error(refusal::kDuplicateAudioData, "", std::to_string(d->source_id), r.offset,
                  "two Audio Data records for source_id " + std::to_string(d->source_id));
            return;
        }
        if (d->data.size() != e.descriptor.data_length)
            error(refusal::kAudioDataLengthMismatch, "", std::to_string(d->data.size()), r.offset,
                  "Audio Data for source_id " + std::to_string(d->source_id) + " carries " +
                      std::to_string(d->data.size()) + " bytes; its Audio Source declares " +
                      std::to_string(e.descriptor.data_length));
        e.payload.offset = d->data_offset;
        e.payload.length = d->data.size();
        return;
    }
    error(refusal::kUnmatchedAudioData, "", std::to_string(d->source_id), r.offset,
          "Audio Data for source_id " + std::to_string(d->source_id) +
              " matches no earlier Audio Source record (§5.17)");
}

// ---------------------------------------------------------------------------------------------
// Chunks: held with their SH band records, decoded when the next other record arrives.

void Validator::seal(std::uint64_t at) {
    if (sealed_) return;
    sealed_ = true;
    if (!scene_.has_header && header_offset_ == kNoOffset)
        error(refusal::kMissingHeader, "", "", at, "the file has no Header record before its chunks");
    if (!scene_.has_quantization && quantization_offset_ == kNoOffset)
        error(refusal::kMissingQuantization, "", "", at,
              "gaussian data begins before any Quantization record");
    if (scene_.windows.empty()) scene_.windows.push_back({0.0, 0.0});  // §5.4
    scene_.grid = grid_for(scene_.quantization, scene_.header.cutoff);
}

void Validator::begin_chunk(Held& held) {
    seal(held.view.offset);
    summary_run_.end();
    std::swap(chunk_, held);
    chunk_pending_ = true;
    band_count_ = 0;
}

void Validator::absorb_band(Held& held) {
    const RecordView& r = held.view;
    if (!chunk_pending_) {
        error(refusal::kOrphanShBand, "", "", r.offset,
              "an SH Band Stream record that does not follow a Chunk (§5.7)");
        summary_run_.end();
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
    ChunkSeen seen;
    seen.offset = r.offset;
    seen.length = r.total_length();
    std::vector<ShBandRecord> bands;
    for (std::size_t i = 0; i < band_count_; ++i) {
        auto b = parse_sh_band(bands_[i].view);
        if (!b.ok()) continue;
        bands.push_back(*b);
        seen.bands.push_back({b->band, bands_[i].view.offset, bands_[i].view.total_length()});
    }
    band_count_ = 0;
    ChunkDecodeOptions decode = reader_.decode;
    if (r.opcode == op::chunk) {
        auto c = parse_chunk(r);
        if (!take(c, r)) {
            decode_failed_ = true;
            return;
        }
        seen.t0 = c->t0;
        seen.t1 = c->t1;
        seen.count = c->count;
        if (!c->compression.empty()) compressed_chunk_seen_ = true;
        chunks_.push_back(seen);
        if (!options_.decode_chunks) return;
        Status st = decode_chunk_bins(scene_, *c, bands, decode, bins_, scratch_);
        if (!take(st, r)) {
            decode_failed_ = true;
            return;
        }
        if (keyframe_delta_) {
            for (std::int32_t id : bins_.gaussian_id) {
                if (ids_.size() >= (std::size_t{1} << 24)) {
                    ids_capped_ = true;
                    break;
                }
                ids_.insert(static_cast<std::uint32_t>(id));
            }
            return;
        }
        gaussians_ += bins_.count;
        if (!scene_.has_quantization) {
            aabb_valid_ = false;
            return;
        }
        block_.clear();
        dequantize(scene_, bins_, block_);
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
    if (scene_.has_header && !keyframe_delta_)
        error(refusal::kDeltaChunkInGaussianBirth, "", scene_.header.temporal_model, r.offset,
              "a Delta Chunk record in a '" + scene_.header.temporal_model + "' file (§5.18)");
    auto d = parse_delta_chunk(r);
    if (!take(d, r)) {
        decode_failed_ = true;
        return;
    }
    seen.delta = true;
    seen.t0 = d->t0;
    seen.t1 = d->t1;
    seen.count = d->update_count + d->birth_count + d->death_count;
    seen.delta_mode = d->delta_mode;
    seen.reference_offset = d->reference_offset;
    seen.keyframe_offset = d->keyframe_offset;
    seen.depth = d->depth;
    if (!d->compression.empty()) compressed_chunk_seen_ = true;
    chunks_.push_back(seen);
    if (!options_.decode_chunks) return;
    Status st = decode_delta_bins(scene_, *d, bands, decode, delta_bins_, scratch_);
    if (!take(st, r)) {
        decode_failed_ = true;
        return;
    }
    for (std::int32_t id : delta_bins_.births.gaussian_id) {
        if (ids_.size() >= (std::size_t{1} << 24)) {
            ids_capped_ = true;
            break;
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
            if (f->summary_start < kMagicSize || f->summary_start > r.offset) {
                error(refusal::kSummaryOutOfRange, "", std::to_string(f->summary_start), content,
                      "summary_start " + std::to_string(f->summary_start) + " is outside [8, " +
                          std::to_string(r.offset) + "]");
            } else {
                bool verified = false;
                Status st = summary_run_.check(*f, content, true, verified);
                if (!st.ok()) report_refusal(st.error(), "Footer", r.offset);
                scene_.summary_crc_verified = verified;
            }
        }
        if (f->summary_offset_start != 0) {
            bool names_one = false;
            for (const auto& [s, at] : summary_offsets_) names_one = names_one || at == f->summary_offset_start;
            if (!names_one)
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
    if (*got < kMagicSize) {
        report_.truncated = true;
        error(refusal::kTruncated, "magic", std::to_string(*got), at,
              "the file ends inside the trailing magic (" + std::to_string(*got) + " of 8 bytes)");
        return false;
    }
    const bool magic = std::memcmp(tail.data(), kMagic.data(), kMagicSize) == 0;
    if (*got == kMagicSize || magic) {
        if (Status m = check_magic(std::span(tail.data(), kMagicSize), at); !m.ok()) {
            Error e = m.error();
            e.message = "trailing magic: " + e.message;
            report_refusal(e, "magic", at);
        }
        else if (*got > kMagicSize)
            error(refusal::kFooterNotLast, "", "", at + kMagicSize,
                  "bytes follow the trailing magic at byte " + std::to_string(at + kMagicSize) +
                      "; the Footer must be the last record and the magic the last bytes (§4)");
        return false;
    }
    // More than eight bytes follow and they are not the magic: the Footer sits mid-file. Say
    // so, and walk on over what follows it.
    error(refusal::kFooterNotLast, "", "", r.offset,
          "a Footer record at byte " + std::to_string(r.offset) +
              " is followed by more data rather than the trailing magic; the Footer must be the "
              "last record (§4)");
    return true;
}

// ---------------------------------------------------------------------------------------------
// The index against the chunks it frames (§5.8, M033), the summary groups (§5.14).

void Validator::check_index() {
    if (index_.empty()) {
        if (keyframe_delta_ && !chunks_.empty())
            error(refusal::kNoChunkIndex, "", "", footer_offset_ ? footer_offset_ : kNoOffset,
                  "a keyframe-delta file without a Chunk Index cannot be sought (§11.8)");
        return;
    }
    std::vector<const ChunkSeen*> by_offset;
    for (const ChunkSeen& c : chunks_) by_offset.push_back(&c);
    std::sort(by_offset.begin(), by_offset.end(),
              [](const ChunkSeen* a, const ChunkSeen* b) { return a->offset < b->offset; });
    std::vector<bool> named(by_offset.size(), false);
    auto mismatch = [&](const IndexSeen& e, const std::string& field, std::string value,
                        const std::string& message) {
        error(refusal::kIndexRecordMismatch, "Chunk Index." + field, std::move(value), e.offset,
              "Chunk Index field '" + field + "' disagrees with the record: " + message);
    };
    for (const IndexSeen& e : index_) {
        if (full()) return;
        const ChunkIndex& x = e.entry;
        auto it = std::lower_bound(by_offset.begin(), by_offset.end(), x.chunk_offset,
                                   [](const ChunkSeen* c, std::uint64_t off) { return c->offset < off; });
        if (it == by_offset.end() || (*it)->offset != x.chunk_offset) {
            mismatch(e, "chunk_offset", std::to_string(x.chunk_offset),
                     "no Chunk or Delta Chunk record starts at byte " + std::to_string(x.chunk_offset));
            continue;
        }
        named[static_cast<std::size_t>(it - by_offset.begin())] = true;
        const ChunkSeen& c = **it;
        const char* kind = c.delta ? "Delta Chunk" : "Chunk";
        if (x.chunk_length != c.length)
            mismatch(e, "chunk_length", std::to_string(x.chunk_length),
                     "the index says " + std::to_string(x.chunk_length) + " bytes, the record is " +
                         std::to_string(c.length));
        if (x.gaussian_count != c.count)
            mismatch(e, "gaussian_count", std::to_string(x.gaussian_count),
                     "the index says " + std::to_string(x.gaussian_count) + ", the " + kind +
                         " holds " + std::to_string(c.count));
        if (x.t0 != c.t0)
            mismatch(e, "t0", num(x.t0), "the index says " + num(x.t0) + ", the " + kind +
                                             " says " + num(c.t0));
        if (x.t1 != c.t1)
            mismatch(e, "t1", num(x.t1), "the index says " + num(x.t1) + ", the " + kind +
                                             " says " + num(c.t1));
        if (x.bands.size() != c.bands.size())
            mismatch(e, "band_count", std::to_string(x.bands.size()),
                     "the index names " + std::to_string(x.bands.size()) +
                         " band(s), the chunk is followed by " + std::to_string(c.bands.size()));
        for (const ChunkIndex::Band& b : x.bands) {
            const ChunkIndex::Band* s = nullptr;
            for (const ChunkIndex::Band& y : c.bands)
                if (y.band == b.band) s = &y;
            if (!s || s->offset != b.offset || s->length != b.length)
                mismatch(e, "bands", std::to_string(b.offset),
                         "the index names band " + std::to_string(b.band) + " at [" +
                             std::to_string(b.offset) + ", +" + std::to_string(b.length) + ") but " +
                             (s ? "that band's record is at [" + std::to_string(s->offset) +
                                      ", +" + std::to_string(s->length) + ")"
                                : std::string("the chunk has no such band")));
        }
        if (x.keyframe) {
            const KeyframeIndexFields& k = *x.keyframe;
            const std::uint8_t want_kind = c.delta ? kChunkKindDelta : kChunkKindKeyframe;
            if (k.chunk_kind != want_kind)
                mismatch(e, "chunk_kind", std::to_string(k.chunk_kind),
                         std::string("the entry says ") + std::to_string(k.chunk_kind) +
                             ", the record is a " + kind);
            const std::uint8_t mode = c.delta ? c.delta_mode : 0;
            const std::uint64_t ref = c.delta ? c.reference_offset : 0;
            const std::uint64_t key = c.delta ? c.keyframe_offset : c.offset;
            const std::uint16_t depth = c.delta ? c.depth : 0;
            if (k.delta_mode != mode)
                mismatch(e, "delta_mode", std::to_string(k.delta_mode),
                         "the entry says " + std::to_string(k.delta_mode) + ", the record implies " +
                             std::to_string(mode));
            if (k.reference_offset != ref)
                mismatch(e, "reference_offset", std::to_string(k.reference_offset),
                         "the entry says " + std::to_string(k.reference_offset) +
                             ", the record implies " + std::to_string(ref));
            if (k.keyframe_offset != key)
                mismatch(e, "keyframe_offset", std::to_string(k.keyframe_offset),
                         "the entry says " + std::to_string(k.keyframe_offset) +
                             ", the record implies " + std::to_string(key));
            if (k.depth != depth)
                mismatch(e, "depth", std::to_string(k.depth),
                         "the entry says " + std::to_string(k.depth) + ", the record implies " +
                             std::to_string(depth));
        } else if (keyframe_delta_) {
            error(refusal::kMissingKeyframeIndexFields, "", "", e.offset,
                  "a keyframe-delta file's Chunk Index entry lacks the six appended fields (§5.8)");
        }
    }
    for (std::size_t i = 0; i < by_offset.size() && !full(); ++i)
        if (!named[i])
            error(refusal::kIndexRecordMismatch, "Chunk Index.chunk_offset",
                  std::to_string(by_offset[i]->offset), by_offset[i]->offset,
                  std::string(by_offset[i]->delta ? "Delta Chunk" : "Chunk") + " record at byte " +
                      std::to_string(by_offset[i]->offset) +
                      " is named by no Chunk Index entry's chunk_offset (§5.8: one entry per chunk)");
    // The keyframe-delta seek structure over the whole index (§11.1, §11.8).
    if (keyframe_delta_ && scene_.has_header) {
        bool all_fields = true;
        std::vector<ChunkIndex> entries;
        for (const IndexSeen& e : index_) {
            all_fields = all_fields && e.entry.keyframe.has_value();
            entries.push_back(e.entry);
        }
        if (all_fields) {
            auto timeline = KeyframeTimeline::build(std::move(entries), scene_.header.duration_sec);
            if (!timeline.ok())
                report_refusal(timeline.error(), "Chunk Index", index_.front().offset);
        }
    }
    // §5.14: each Summary Offset frames its group's records, whole. A length that also covers
    // records of another opcode after the group is in circulation (wire-notes): a warning.
    for (const auto& [s, at] : summary_offsets_) {
        const std::uint64_t end = s.group_start + s.group_length;
        std::string problem;
        bool overlong = false, in_group = true, started = false;
        std::uint64_t expect = s.group_start;
        for (const RecordSeen& rec : summary_records_) {
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
        while (true) {
            auto next = stream.next_state_bins(bins);
            if (!next.ok()) {
                refused = next.error();
                break;
            }
            if (!*next) break;
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
              header_offset_ + kRecordHeaderSize + 4 + scene_.header.profile.size() + 4 +
                  scene_.header.library.size() + 8,
              "Header gaussian_count is " + std::to_string(scene_.header.gaussian_count) +
                  " but the chunks hold " + std::to_string(*computed) +
                  (keyframe_delta_ ? " distinct gaussian ids" : " gaussians"));
    if (!statistics_) return;
    const Statistics& s = statistics_->first;
    const std::uint64_t at = statistics_->second + kRecordHeaderSize;
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
    std::optional<KeySeen> key = coordinate_system_;
    if (!key && scene_.has_header)
        for (const auto& [k, v] : scene_.header.attributes)
            if (k == "coordinate_system") key = KeySeen{v, header_offset_};
    const CoordinateFrame* frame = nullptr;
    std::uint64_t frame_at = 0;
    for (std::size_t i = 0; i < scene_.coordinate_frames.size(); ++i)
        if (scene_.coordinate_frames[i].name.empty()) {
            frame = &scene_.coordinate_frames[i];
            frame_at = offsets_.coordinate_frames[i];
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

void Validator::check_references() {
    if (!scene_.has_header) return;
    check_scene_references(scene_, &offsets_, [this](Error e) {
        report_refusal(e, "", kNoOffset);
        return !full();
    });
}

// The SHOULD-level advice about what a file says of itself (§3.1, §4.3, §5.1, §8).
void Validator::check_advice() {
    if (!scene_.has_header) return;
    auto header_key = [&](std::string_view name) -> const std::string* {
        for (const auto& [k, v] : scene_.header.attributes)
            if (k == name) return &v;
        return nullptr;
    };
    std::optional<KeySeen> profile = visibility_profile_;
    if (!profile)
        if (const std::string* v = header_key("visibility_profile")) profile = KeySeen{*v, header_offset_};
    if (!profile)
        warning(refusal::kNoVisibilityProfile, "", "", kNoOffset,
                "no visibility_profile metadata key: producers should declare gaussian (soft fade) "
                "or box (hard edges) (M004)");
    else if (profile->value != "gaussian" && profile->value != "box")
        warning(refusal::kUnknownVisibilityProfile, "", profile->value, profile->offset,
                "visibility_profile is " + detail::quoted(profile->value) +
                    "; the registry defines gaussian and box (flat-top is reserved, not representable)");
    if (!private_records_.empty() && !application_ && !header_key("application"))
        warning(refusal::kPrivateRecordsWithoutApplication, "", hex_byte(private_records_.front().opcode),
                private_records_.front().offset,
                std::to_string(private_records_.size()) + " private-range record(s), the first " +
                    hex_byte(private_records_.front().opcode) + " at byte " +
                    std::to_string(private_records_.front().offset) +
                    ", and no application metadata entry naming what wrote them (M012)");
    const bool flag = scene_.header.chunks_compressed();
    if (!chunks_.empty() && flag != compressed_chunk_seen_)
        warning(refusal::kCompressedFlagMismatch, "", std::to_string(scene_.header.flags), header_offset_,
                std::string("Header flags bit 1 (chunk data is compressed) is ") +
                    (flag ? "set" : "clear") + " but " +
                    (compressed_chunk_seen_ ? "a chunk names a codec" : "no chunk names a codec"));
    // M106: every chunk spans the whole timeline, so a seek costs the whole scene.
    if (!keyframe_delta_ && !chunks_.empty() && scene_.header.duration_sec > 0 &&
        scene_.header.profile != "baked") {
        bool all_whole = true;
        for (const ChunkSeen& c : chunks_)
            all_whole = all_whole && c.t0 <= 0 && c.t1 >= scene_.header.duration_sec;
        if (all_whole)
            warning(refusal::kUndeclaredUnseekableContent, "", scene_.header.profile, header_offset_,
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
