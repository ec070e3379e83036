// SceneBuilder (fourdgs/front_matter.hpp): records in file order into a SceneInfo.
#include "fourdgs/front_matter.hpp"

#include <algorithm>
#include <string>

#include "fourdgs/detail/findings.hpp"
#include "fourdgs/records/registry.hpp"
#include "format/record_keying.hpp"

namespace fourdgs {
namespace {

Error rule(std::string_view refusal, std::string message, std::uint64_t offset,
           std::string value = {}) {
    return make_error(ErrorKind::malformed, refusal, std::move(message), offset)
        .about("", std::move(value));
}

}  // namespace

Status check_temporal_model(const Header& header, std::uint64_t offset,
                            bool accept_keyframe_delta) {
    if (header.temporal_model == kModelGaussianBirth) return ok_status();
    if (header.temporal_model == kModelKeyframeDelta) {
        if (accept_keyframe_delta) return ok_status();
        return make_error(ErrorKind::unsupported, refusal::kUnknownTemporalModel,
                          "temporal_model 'keyframe-delta' is not read by this gaussian-birth "
                          "reader; refusing rather than decoding its keyframes only (§5.1) — "
                          "read it with KeyframeDeltaReader or KeyframeDeltaStream",
                          offset)
            .about("", header.temporal_model);
    }
    return make_error(ErrorKind::unsupported, refusal::kUnknownTemporalModel,
                      "temporal_model '" + header.temporal_model +
                          "' is not a model this reader implements (gaussian-birth)",
                      offset)
        .about("", header.temporal_model);
}

// What a payload record (Attachment, legacy Audio, Audio Data) says in front of its payload, and
// where the payload lies; `data` holds the payload when it was read.
struct SceneBuilder::PayloadRecord {
    std::string name, media_type;  // Attachment
    std::string codec;             // legacy Audio
    double start_sec = 0;          // legacy Audio
    std::uint32_t source_id = 0;   // Audio Data
    Bytes data;
    std::uint64_t data_offset = 0, data_length = 0;
    bool data_read = false;
};

// The fields in front of the payload, read from `r.content`, which may be a prefix of the
// content; the payload itself is not read. False when the fields run past a prefix.
Result<bool> SceneBuilder::read_payload_head(const RecordView& r, PayloadRecord& p) {
    const std::string what = opcode_name(r.opcode);  // the Cursor keeps a view of it
    Cursor c(r.content, r.content_offset(), what);
    auto fields = [&]() -> Status {
        if (r.opcode == op::attachment) {
            FOURDGS_ASSIGN(p.name, c.string("name"));
            FOURDGS_ASSIGN(p.media_type, c.string("media_type"));
        } else if (r.opcode == op::audio_legacy) {
            FOURDGS_ASSIGN(p.codec, c.string("codec"));
            FOURDGS_ASSIGN(p.start_sec, c.f64("start_sec"));
        } else {
            FOURDGS_ASSIGN(p.source_id, c.u32("source_id"));
        }
        FOURDGS_ASSIGN(p.data_length, c.u64("data"));
        return ok_status();
    };
    if (Status st = fields(); !st.ok()) {
        if (r.content.size() < r.content_length) return false;
        return st.error();
    }
    p.data_offset = c.offset();
    if (p.data_length > r.end_offset() - p.data_offset) return c.short_error("data", p.data_length);
    return true;
}

Status require_keyframe_delta(const Header& header, std::uint64_t offset) {
    if (header.temporal_model == kModelKeyframeDelta) return ok_status();
    return make_error(ErrorKind::unsupported, refusal::kUnknownTemporalModel,
                      "the keyframe-delta front-end reads temporal_model 'keyframe-delta'; this "
                      "file declares '" + header.temporal_model +
                          "' (use the gaussian-birth readers)",
                      offset)
        .about("", header.temporal_model);
}

// ---------------------------------------------------------------------------------------------
// The two modes: the findings of a reader's step or of the validator's (detail/findings.hpp).

SceneBuilder::SceneBuilder(const ReaderOptions& options)
    : options_(options), findings_(ReportFn()) {}
SceneBuilder::SceneBuilder(const ReaderOptions& options, ReportFn report)
    : options_(options), findings_(std::move(report)) {}

SceneBuilder::Sink::Sink(ReportFn report)
    : findings_(std::make_unique<detail::Findings>(std::move(report))) {}
SceneBuilder::Sink::Sink(const Sink& other)
    : findings_(std::make_unique<detail::Findings>(*other.findings_)) {}
SceneBuilder::Sink::Sink(Sink&&) noexcept = default;
SceneBuilder::Sink& SceneBuilder::Sink::operator=(const Sink& other) {
    findings_ = std::make_unique<detail::Findings>(*other.findings_);
    return *this;
}
SceneBuilder::Sink& SceneBuilder::Sink::operator=(Sink&&) noexcept = default;
SceneBuilder::Sink::~Sink() = default;

bool SceneBuilder::broken(Error e) { return findings_->take(std::move(e)); }

Status SceneBuilder::outcome() const { return findings_->outcome(); }

// ---------------------------------------------------------------------------------------------
// Records in file order.

Status SceneBuilder::add(const RecordView& r) {
    if (findings_->stopped()) return outcome();
    absorb(r);
    if (findings_->stopped()) return outcome();
    ++records_seen_;
    // A provenance record after the chunks (legal, if unusual) meets the same cross-record rules,
    // over the records so far, in both modes: a reference a later record would mend is broken
    // when this one arrives, and the reader refuses it there, so the validator reports it there.
    if (sealed_ && r.opcode >= op::coordinate_frame && r.opcode <= op::geodetic_anchor)
        check_references();
    return outcome();
}

// The rules that span records (check_scene_references, extras.hpp) over the records so far, the
// one step seal(), add() and finish() take. Collect mode reports each broken rule once, where it
// was first met: the same rule found broken again by a later pass is not a new finding.
void SceneBuilder::check_references() {
    check_scene_references(scene_, &offsets_, [this](Error e) {
        if (findings_->collecting() &&
            std::find(references_reported_.begin(), references_reported_.end(), e.message) !=
                references_reported_.end())
            return true;
        references_reported_.push_back(e.message);
        return broken(std::move(e));
    });
}

// §4: the Header is the first record. Reported once; collect mode goes on with the record.
bool SceneBuilder::header_first(const RecordView& r) {
    if (r.opcode == op::header || header_seen_ || header_first_reported_) return true;
    header_first_reported_ = true;
    return broken(rule(refusal::kHeaderNotFirst,
                       "the first record is " + opcode_name(r.opcode) +
                           "; a file must begin with its Header (§4)",
                       r.offset, opcode_name(r.opcode)));
}

// §5.17 (M092): every audio pair precedes the first chunk, so an indexed reader frames them all
// from the front matter. Collect mode drops the late record, as the readers never pair it: a
// source whose data comes late is unmatched for them, and so for the validator too.
bool SceneBuilder::audio_before_chunks(const RecordView& r) {
    if (!sealed_ || (r.opcode != op::audio_legacy && r.opcode != op::audio_source &&
                     r.opcode != op::audio_data))
        return true;
    broken(rule(refusal::kAudioAfterFirstChunk,
                opcode_name(r.opcode) + " record at byte " + std::to_string(r.offset) +
                    " follows gaussian data; every audio record comes before the first chunk "
                    "(§5.17)",
                r.offset));
    return false;
}

// The registry's once / at-most-once kinds: a second record is refused before it is read.
bool SceneBuilder::first_of_its_kind(const RecordView& r) {
    if (!is_single_record_kind(r.opcode)) return true;
    if (!singles_seen_[r.opcode]) {
        singles_seen_[r.opcode] = true;
        return true;
    }
    broken(duplicate_record(r.opcode, r.offset));
    return false;
}

void SceneBuilder::absorb(const RecordView& r) {
    if (!header_first(r) || !audio_before_chunks(r) || !first_of_its_kind(r)) return;
    switch (r.opcode) {
        case op::header: absorb_header(r); break;
        case op::quantization: absorb_quantization(r); break;
        case op::window_table: absorb_window_table(r); break;
        case op::metadata:
            keep(parse_metadata(r), scene_.metadata, offsets_.metadata, r.offset);
            break;
        case op::camera: keep(parse_camera(r), scene_.camera); break;
        case op::attachment: {
            auto a = parse_attachment(r);
            if (!parsed(a)) break;
            absorb_payload(r, {a->name, a->media_type, {}, 0, 0, a->data, a->data_offset,
                               a->data.size(), true});
            break;
        }
        case op::audio_legacy: {
            auto a = parse_audio_legacy(r);
            if (!parsed(a)) break;
            absorb_payload(r, {{}, {}, a->codec, a->start_sec, 0, a->data, a->data_offset,
                               a->data.size(), true});
            break;
        }
        case op::audio_source: absorb_audio_source(r); break;
        case op::audio_data: {
            auto d = parse_audio_data(r);
            if (!parsed(d)) break;
            absorb_payload(r, {{}, {}, {}, 0, d->source_id, d->data, d->data_offset,
                               d->data.size(), true});
            break;
        }
        case op::coordinate_frame:
            keep(parse_coordinate_frame(r), scene_.coordinate_frames,
                 offsets_.coordinate_frames, r.offset);
            break;
        case op::sensor_calibration:
            keep(parse_sensor_calibration(r), scene_.sensors, offsets_.sensors, r.offset);
            break;
        case op::rig_trajectory:
            keep(parse_rig_trajectory(r), scene_.rig_trajectories, offsets_.rig_trajectories,
                 r.offset);
            break;
        case op::geodetic_anchor:
            keep(parse_geodetic_anchor(r), scene_.geodetic_anchors, offsets_.geodetic_anchors,
                 r.offset);
            break;
        case op::object_table: keep(parse_object_table(r), scene_.object_table); break;
        case op::object_track: {
            auto t = parse_object_track(r);
            if (!parsed(t)) break;
            if (auto repeat = repeated_key(std::span<const ObjectTrack>(scene_.object_tracks), *t,
                                           r.offset)) {
                broken(std::move(*repeat));
                break;
            }
            scene_.object_tracks.push_back(std::move(*t));
            break;
        }
        case op::chunk_index:
        case op::statistics:
        case op::summary_offset: absorb_summary(r); break;
        case op::chunk:
        case op::sh_band:
        case op::delta_chunk:
        case op::footer:
            break;  // owned by the front-ends
        default:
            // Unknown, reserved (0x0E, 0x26-0x2F) and private records: skipped by length (M008).
            scene_.skipped.push_back({r.opcode, r.offset, r.total_length()});
            break;
    }
}

void SceneBuilder::absorb_header(const RecordView& r) {
    if (records_seen_ != 0 && !header_first_reported_) {
        header_first_reported_ = true;
        if (!broken(rule(refusal::kHeaderNotFirst,
                         "the Header is at byte " + std::to_string(r.offset) +
                             " but must be the first record (§4)",
                         r.offset)))
            return;
    }
    header_seen_ = true;
    offsets_.header = r.offset;
    if (!keep(parse_header(r), scene_.header)) return;
    scene_.has_header = true;
    if (Status st = check_temporal_model(scene_.header, r.content_offset(),
                                         options_.accept_keyframe_delta);
        !st.ok())
        broken(st.error());
}

void SceneBuilder::absorb_quantization(const RecordView& r) {
    quantization_seen_ = true;
    offsets_.quantization = r.offset;
    if (!keep(parse_quantization(r), scene_.quantization)) return;
    if (scene_.quantization.scheme != kSchemeUniformV1 &&
        !broken(make_error(ErrorKind::unsupported, refusal::kUnknownQuantizationScheme,
                           "quantization scheme '" + scene_.quantization.scheme +
                               "' is not implemented (only uniform-v1 exists)",
                           r.content_offset())
                    .about("", scene_.quantization.scheme)))
        return;
    scene_.has_quantization = true;
}

void SceneBuilder::absorb_window_table(const RecordView& r) {
    window_table_seen_ = true;
    if (sealed_) {
        // §4: chunks before it were read against the default one-window table (§5.4), so a
        // front-to-back reader and a seeking one would report two scenes: the table comes first.
        broken(rule(refusal::kWindowTableAfterFirstChunk,
                    "the Window Table at byte " + std::to_string(r.offset) +
                        " follows gaussian data, which was read against the default one-window "
                        "table (§5.4); it must come before the first chunk (§4)",
                    r.offset));
        return;
    }
    offsets_.window_table = r.offset;
    auto t = parse_window_table(r);
    if (!parsed(t)) return;
    scene_.windows = std::move(t->windows);
    scene_.has_window_table = true;
}

// §5.16, §7: one descriptor per source id, and never beside a legacy Audio record.
void SceneBuilder::absorb_audio_source(const RecordView& r) {
    auto s = parse_audio_source(r);
    if (!parsed(s)) return;
    // The entries are all descriptors or one legacy record (absorb_payload keeps them apart).
    if (!scene_.audio.empty() && scene_.audio.front().legacy) {
        broken(rule(refusal::kMixedAudioRecords,
                    "an Audio Source record beside a legacy Audio record (§7)", r.offset));
        return;
    }
    if (auto repeat = repeated_key(std::span<const AudioSourceEntry>(scene_.audio), *s, r.offset,
                                   [](const AudioSourceEntry& e) -> const AudioSource& {
                                       return e.descriptor;
                                   })) {
        broken(std::move(*repeat));
        return;
    }
    AudioSourceEntry e;
    e.descriptor = std::move(*s);
    e.payload.offset = 0;
    scene_.audio.push_back(std::move(e));
    offsets_.audio.push_back(r.offset);
}

// The payload records: an attachment is kept by range; a legacy Audio record becomes source 0;
// an Audio Data record joins the Audio Source with its id (§5.9, §5.13, §5.17, §7).
void SceneBuilder::absorb_payload(const RecordView& r, PayloadRecord p) {
    PayloadRef ref;
    ref.offset = p.data_offset;
    ref.length = p.data_length;
    if (p.data_read) {
        ref.crc32 = crc32(p.data);
        ref.crc_known = true;
        if (options_.keep_payloads) ref.data.assign(p.data.begin(), p.data.end());
    }
    if (r.opcode == op::attachment) {
        scene_.attachments.push_back({std::move(p.name), std::move(p.media_type), std::move(ref)});
        return;
    }
    if (r.opcode == op::audio_legacy) {
        if (!scene_.audio.empty()) {
            broken(rule(refusal::kMixedAudioRecords,
                        scene_.audio.front().legacy
                            ? "a second legacy Audio record"
                            : "a legacy Audio record beside Audio Source records (§7)",
                        r.offset));
            return;
        }
        AudioSourceEntry e;
        e.legacy = true;
        e.descriptor.source_id = 0;
        e.descriptor.gain = 1;
        e.descriptor.codec = std::move(p.codec);
        e.descriptor.start_sec = p.start_sec;
        e.descriptor.data_length = p.data_length;
        // The record has no keyframes and no interpolation field; the descriptor reads with the
        // registry's default so that it is a legal §5.16 descriptor like any other.
        e.descriptor.interpolation = "linear";
        e.payload = std::move(ref);
        scene_.audio.push_back(std::move(e));
        offsets_.audio.push_back(r.offset);
        return;
    }
    const std::uint32_t id = p.source_id;
    for (AudioSourceEntry& e : scene_.audio) {
        if (e.legacy) {
            broken(rule(refusal::kMixedAudioRecords,
                        "an Audio Data record beside a legacy Audio record (§7)", r.offset));
            return;
        }
        if (e.descriptor.source_id != id) continue;
        if (e.payload.offset != 0) {
            broken(duplicate_record(r.opcode, r.offset, std::to_string(id)));
            return;
        }
        if (p.data_length != e.descriptor.data_length &&
            !broken(rule(refusal::kAudioDataLengthMismatch,
                         "Audio Data for source_id " + std::to_string(id) + " carries " +
                             std::to_string(p.data_length) +
                             " bytes; its Audio Source declares " +
                             std::to_string(e.descriptor.data_length),
                         r.offset, std::to_string(p.data_length))))
            return;
        e.payload = std::move(ref);
        return;
    }
    broken(rule(refusal::kUnmatchedAudioData,
                "Audio Data for source_id " + std::to_string(id) +
                    " matches no earlier Audio Source record (§5.17)",
                r.offset, std::to_string(id)));
}

Result<bool> SceneBuilder::add_unread_payload(const RecordView& r) {
    if (findings_->stopped()) return outcome().error();
    if (!is_payload_opcode(r.opcode))
        return make_error(ErrorKind::invalid_argument, refusal::kInvalidArgument,
                          opcode_name(r.opcode) + " is not a payload record");
    PayloadRecord p;
    auto head = read_payload_head(r, p);
    // Names longer than the prefix: the fields go on past it, so the whole record is needed.
    if (head.ok() && !*head) return false;
    if (header_first(r) && audio_before_chunks(r)) {
        if (head.ok())
            absorb_payload(r, std::move(p));
        else
            broken(std::move(head).error());
    }
    if (findings_->stopped()) return outcome().error();
    ++records_seen_;
    return true;
}

// ---------------------------------------------------------------------------------------------
// The summary (§4.5).

void SceneBuilder::absorb_summary(const RecordView& r) {
    switch (r.opcode) {
        case op::chunk_index: {
            auto e = parse_chunk_index(r);
            if (!parsed(e)) return;
            scene_.index.push_back(std::move(*e));
            offsets_.index.push_back(r.offset);
            return;
        }
        case op::statistics: {
            auto s = parse_statistics(r);
            if (!parsed(s)) return;
            scene_.statistics = *s;
            offsets_.statistics = r.offset;
            return;
        }
        default: {
            auto s = parse_summary_offset(r);
            if (!parsed(s)) return;
            scene_.summary_offsets.push_back(*s);
            offsets_.summary_offsets.push_back(r.offset);
            return;
        }
    }
}

Status SceneBuilder::add_summary(const RecordView& r) {
    if (findings_->stopped()) return outcome();
    if (is_summary_opcode(r.opcode))
        absorb_summary(r);
    else if (is_defined_opcode(r.opcode))
        broken(rule(refusal::kSummaryNotContiguous,
                    "a " + opcode_name(r.opcode) + " record at byte " + std::to_string(r.offset) +
                        " sits inside the summary (§4.5)",
                    r.offset));
    else
        scene_.skipped.push_back({r.opcode, r.offset, r.total_length()});
    return outcome();
}

void SceneBuilder::take_summary(SceneBuilder&& summary) {
    SceneInfo& s = summary.scene_;
    scene_.index = std::move(s.index);
    scene_.statistics = s.statistics;
    scene_.summary_offsets = std::move(s.summary_offsets);
    scene_.skipped.insert(scene_.skipped.end(), s.skipped.begin(), s.skipped.end());
    offsets_.index = std::move(summary.offsets_.index);
    offsets_.statistics = summary.offsets_.statistics;
    offsets_.summary_offsets = std::move(summary.offsets_.summary_offsets);
}

// ---------------------------------------------------------------------------------------------
// Before the first chunk, and after the last record.

Status SceneBuilder::seal(std::uint64_t at) {
    if (findings_->stopped()) return outcome();
    if (sealed_) return ok_status();
    if (!header_seen_ &&
        !broken(rule(refusal::kMissingHeader, "the file has no Header record", at)))
        return outcome();
    if (!quantization_seen_ &&
        !broken(rule(refusal::kMissingQuantization,
                     "gaussian data begins before any Quantization record", at)))
        return outcome();
    check_references();
    if (findings_->stopped()) return outcome();
    // §5.4: no table, or an empty one, reads as exactly one window (0, 0).
    if (scene_.windows.empty()) scene_.windows.push_back({0.0, 0.0});
    if (!scene_.audio.empty() && scene_.audio.front().legacy) {
        AudioSource& d = scene_.audio.front().descriptor;
        d.duration_sec = std::max(0.0, scene_.header.duration_sec - d.start_sec);
    }
    scene_.grid = grid_for(scene_.quantization, scene_.header.cutoff);
    sealed_ = true;
    return ok_status();
}

Status SceneBuilder::finish() {
    if (findings_->stopped()) return outcome();
    if (!scene_.has_header) return ok_status();
    check_references();
    return outcome();
}

}  // namespace fourdgs
