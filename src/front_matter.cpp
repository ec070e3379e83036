// SceneBuilder (fourdgs/front_matter.hpp): records in file order into a SceneInfo.
#include "fourdgs/front_matter.hpp"

#include <algorithm>
#include <string>

namespace fourdgs {
namespace {

Error duplicate(std::string_view refusal, const char* record, std::uint64_t offset) {
    return make_error(ErrorKind::malformed, refusal,
                      std::string("a second ") + record + " record at byte " +
                          std::to_string(offset) + "; the format allows exactly one (§4)",
                      offset);
}

}  // namespace

// §5.17 (M092): every audio pair precedes the first chunk, so an indexed reader frames them all
// from the front matter.
Status SceneBuilder::check_audio_before_chunks(const RecordView& r) const {
    if (!sealed_ || (r.opcode != op::audio_legacy && r.opcode != op::audio_source &&
                     r.opcode != op::audio_data))
        return ok_status();
    return make_error(ErrorKind::malformed, refusal::kAudioAfterFirstChunk,
                      opcode_name(r.opcode) + " record at byte " + std::to_string(r.offset) +
                          " follows gaussian data; every audio record comes before the first "
                          "chunk (§5.17)",
                      r.offset);
}

Status check_temporal_model(const Header& header, std::uint64_t offset,
                            bool accept_keyframe_delta) {
    if (header.temporal_model == kModelGaussianBirth) return ok_status();
    if (header.temporal_model == kModelKeyframeDelta) {
        if (accept_keyframe_delta) return ok_status();
        return make_error(ErrorKind::unsupported, refusal::kUnknownTemporalModel,
                          "temporal_model 'keyframe-delta' is not read by this gaussian-birth "
                          "reader; refusing rather than decoding its keyframes only (§5.1) — "
                          "read it with KeyframeDeltaReader or KeyframeDeltaStream",
                          offset);
    }
    return make_error(ErrorKind::unsupported, refusal::kUnknownTemporalModel,
                      "temporal_model '" + header.temporal_model +
                          "' is not a model this reader implements (gaussian-birth)",
                      offset);
}

Status SceneBuilder::add_header(const RecordView& r) {
    if (scene_.has_header) return duplicate(refusal::kDuplicateHeader, "Header", r.offset);
    if (records_seen_ != 0)
        return make_error(ErrorKind::malformed, refusal::kHeaderNotFirst,
                          "the Header is at byte " + std::to_string(r.offset) +
                              " but must be the first record (§4)",
                          r.offset);
    FOURDGS_ASSIGN(scene_.header, parse_header(r));
    FOURDGS_TRY(check_temporal_model(scene_.header, r.content_offset(),
                                     options_.accept_keyframe_delta));
    scene_.has_header = true;
    return ok_status();
}

Status SceneBuilder::add(const RecordView& r) {
    if (records_seen_ == 0 && r.opcode != op::header)
        return make_error(ErrorKind::malformed, refusal::kHeaderNotFirst,
                          "the first record is " + opcode_name(r.opcode) +
                              "; a file must begin with its Header (§4)",
                          r.offset);
    FOURDGS_TRY(check_audio_before_chunks(r));
    Status st;
    switch (r.opcode) {
        case op::header: st = add_header(r); break;
        case op::quantization: {
            if (scene_.has_quantization)
                return duplicate(refusal::kDuplicateQuantization, "Quantization", r.offset);
            FOURDGS_ASSIGN(scene_.quantization, parse_quantization(r));
            if (scene_.quantization.scheme != kSchemeUniformV1)
                return make_error(ErrorKind::unsupported, refusal::kUnknownQuantizationScheme,
                                  "quantization scheme '" + scene_.quantization.scheme +
                                      "' is not implemented (only uniform-v1 exists)",
                                  r.content_offset());
            scene_.has_quantization = true;
            break;
        }
        case op::window_table: {
            if (scene_.has_window_table)
                return duplicate(refusal::kDuplicateWindowTable, "Window Table", r.offset);
            FOURDGS_ASSIGN(WindowTable t, parse_window_table(r));
            scene_.windows = std::move(t.windows);
            scene_.has_window_table = true;
            break;
        }
        case op::metadata: {
            FOURDGS_ASSIGN(Metadata m, parse_metadata(r));
            scene_.metadata.push_back(std::move(m));
            break;
        }
        case op::camera: {
            FOURDGS_ASSIGN(Camera c, parse_camera(r));
            scene_.camera = std::move(c);
            break;
        }
        case op::attachment: {
            FOURDGS_ASSIGN(Attachment a, parse_attachment(r));
            AttachmentEntry e{a.name, a.media_type, {}};
            e.payload.offset = a.data_offset;
            e.payload.length = a.data.size();
            e.payload.crc32 = crc32(a.data);
            e.payload.crc_known = true;
            if (options_.keep_payloads) e.payload.data.assign(a.data.begin(), a.data.end());
            scene_.attachments.push_back(std::move(e));
            break;
        }
        case op::audio_legacy: {
            FOURDGS_ASSIGN(AudioLegacy a, parse_audio_legacy(r));
            FOURDGS_TRY(add_payload_record(r, r.opcode, a.data, a.data_offset, a.data.size()));
            scene_.audio.back().descriptor.codec = a.codec;
            scene_.audio.back().descriptor.start_sec = a.start_sec;
            break;
        }
        case op::audio_source: {
            FOURDGS_ASSIGN(AudioSource s, parse_audio_source(r));
            for (const AudioSourceEntry& e : scene_.audio) {
                if (e.legacy)
                    return make_error(ErrorKind::malformed, refusal::kMixedAudioRecords,
                                      "an Audio Source record beside a legacy Audio record (§7)",
                                      r.offset);
                if (e.descriptor.source_id == s.source_id)
                    return make_error(ErrorKind::malformed, refusal::kDuplicateAudioSource,
                                      "two Audio Source records for source_id " +
                                          std::to_string(s.source_id),
                                      r.offset);
            }
            AudioSourceEntry e;
            e.descriptor = std::move(s);
            e.payload.offset = 0;
            scene_.audio.push_back(std::move(e));
            offsets_.audio.push_back(r.offset);
            break;
        }
        case op::audio_data: {
            FOURDGS_ASSIGN(AudioData d, parse_audio_data(r));
            FOURDGS_TRY(add_payload_record(r, r.opcode, d.data, d.data_offset, d.data.size()));
            break;
        }
        case op::coordinate_frame: {
            FOURDGS_ASSIGN(CoordinateFrame f, parse_coordinate_frame(r));
            scene_.coordinate_frames.push_back(std::move(f));
            offsets_.coordinate_frames.push_back(r.offset);
            break;
        }
        case op::sensor_calibration: {
            FOURDGS_ASSIGN(SensorCalibration s, parse_sensor_calibration(r));
            scene_.sensors.push_back(std::move(s));
            offsets_.sensors.push_back(r.offset);
            break;
        }
        case op::rig_trajectory: {
            FOURDGS_ASSIGN(RigTrajectory t, parse_rig_trajectory(r));
            scene_.rig_trajectories.push_back(std::move(t));
            offsets_.rig_trajectories.push_back(r.offset);
            break;
        }
        case op::geodetic_anchor: {
            FOURDGS_ASSIGN(GeodeticAnchor a, parse_geodetic_anchor(r));
            scene_.geodetic_anchors.push_back(std::move(a));
            offsets_.geodetic_anchors.push_back(r.offset);
            break;
        }
        case op::object_table: {
            if (scene_.object_table)
                return make_error(ErrorKind::malformed, refusal::kDuplicateObjectTable,
                                  "a second Object Table record; a file carries at most one "
                                  "(§5.15.6)",
                                  r.offset);
            FOURDGS_ASSIGN(ObjectTable t, parse_object_table(r));
            scene_.object_table = std::move(t);
            break;
        }
        case op::object_track: {
            FOURDGS_ASSIGN(ObjectTrack t, parse_object_track(r));
            for (const ObjectTrack& o : scene_.object_tracks)
                if (o.object_id == t.object_id)
                    return make_error(ErrorKind::malformed, refusal::kDuplicateObjectTrack,
                                      "two Object Track records for object_id " +
                                          std::to_string(t.object_id) + " (§5.15.7)",
                                      r.offset);
            scene_.object_tracks.push_back(std::move(t));
            break;
        }
        case op::chunk_index: {
            FOURDGS_ASSIGN(ChunkIndex e, parse_chunk_index(r));
            scene_.index.push_back(std::move(e));
            break;
        }
        case op::statistics: {
            FOURDGS_ASSIGN(Statistics s, parse_statistics(r));
            scene_.statistics = s;
            break;
        }
        case op::summary_offset: {
            FOURDGS_ASSIGN(SummaryOffset s, parse_summary_offset(r));
            scene_.summary_offsets.push_back(s);
            break;
        }
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
    if (!st.ok()) return st;
    ++records_seen_;
    // A provenance record after the chunks (legal, if unusual) meets the same cross-record rules.
    if (sealed_ && r.opcode >= op::coordinate_frame && r.opcode <= op::geodetic_anchor)
        return check_scene_references(scene_, &offsets_);
    return ok_status();
}

Status SceneBuilder::add_payload_record(const RecordView& r, std::uint8_t opcode, Bytes data,
                                        std::uint64_t data_offset, std::uint64_t data_length) {
    PayloadRef ref;
    ref.offset = data_offset;
    ref.length = data_length;
    if (data.size() == data_length) {
        ref.crc32 = crc32(data);
        ref.crc_known = true;
        if (options_.keep_payloads) ref.data.assign(data.begin(), data.end());
    }
    if (opcode == op::audio_legacy) {
        if (!scene_.audio.empty())
            return make_error(ErrorKind::malformed, refusal::kMixedAudioRecords,
                              scene_.audio.front().legacy
                                  ? "a second legacy Audio record"
                                  : "a legacy Audio record beside Audio Source records (§7)",
                              r.offset);
        AudioSourceEntry e;
        e.legacy = true;
        e.descriptor.source_id = 0;
        e.descriptor.gain = 1;
        e.descriptor.data_length = data_length;
        e.payload = std::move(ref);
        scene_.audio.push_back(std::move(e));
        offsets_.audio.push_back(r.offset);
        return ok_status();
    }
    // Audio Data: matches the Audio Source with its id (§5.17).
    std::uint32_t id = 0;
    Cursor c(r.content, r.content_offset(), "Audio Data");
    FOURDGS_ASSIGN(id, c.u32("source_id"));
    for (AudioSourceEntry& e : scene_.audio) {
        if (e.legacy)
            return make_error(ErrorKind::malformed, refusal::kMixedAudioRecords,
                              "an Audio Data record beside a legacy Audio record (§7)", r.offset);
        if (e.descriptor.source_id != id) continue;
        if (e.payload.offset != 0)
            return make_error(ErrorKind::malformed, refusal::kDuplicateAudioData,
                              "two Audio Data records for source_id " + std::to_string(id),
                              r.offset);
        if (data_length != e.descriptor.data_length)
            return make_error(ErrorKind::malformed, refusal::kAudioDataLengthMismatch,
                              "Audio Data for source_id " + std::to_string(id) + " carries " +
                                  std::to_string(data_length) + " bytes; its Audio Source declares " +
                                  std::to_string(e.descriptor.data_length),
                              r.offset);
        e.payload = std::move(ref);
        return ok_status();
    }
    return make_error(ErrorKind::malformed, refusal::kUnmatchedAudioData,
                      "Audio Data for source_id " + std::to_string(id) +
                          " matches no earlier Audio Source record (§5.17)",
                      r.offset);
}

Status SceneBuilder::add_unread_payload(const RecordView& r) {
    if (records_seen_ == 0)
        return make_error(ErrorKind::malformed, refusal::kHeaderNotFirst,
                          "the first record is " + opcode_name(r.opcode) +
                              "; a file must begin with its Header (§4)",
                          r.offset);
    FOURDGS_TRY(check_audio_before_chunks(r));
    const std::string what = opcode_name(r.opcode);  // the Cursor keeps a view of it
    Cursor c(r.content, r.content_offset(), what);
    std::uint64_t length = 0;
    Status st;
    if (r.opcode == op::attachment) {
        FOURDGS_ASSIGN(std::string name, c.string("name"));
        FOURDGS_ASSIGN(std::string media, c.string("media_type"));
        FOURDGS_ASSIGN(length, c.u64("data"));
        AttachmentEntry e{std::move(name), std::move(media), {}};
        e.payload.offset = c.offset();
        e.payload.length = length;
        if (c.offset() + length > r.end_offset())
            return c.short_error("data", length);
        scene_.attachments.push_back(std::move(e));
    } else if (r.opcode == op::audio_legacy) {
        FOURDGS_ASSIGN(std::string codec, c.string("codec"));
        FOURDGS_ASSIGN(double start, c.f64("start_sec"));
        FOURDGS_ASSIGN(length, c.u64("data"));
        if (c.offset() + length > r.end_offset()) return c.short_error("data", length);
        FOURDGS_TRY(add_payload_record(r, r.opcode, {}, c.offset(), length));
        scene_.audio.back().descriptor.codec = std::move(codec);
        scene_.audio.back().descriptor.start_sec = start;
    } else if (r.opcode == op::audio_data) {
        FOURDGS_TRY(c.u32("source_id"));
        FOURDGS_ASSIGN(length, c.u64("data"));
        if (c.offset() + length > r.end_offset()) return c.short_error("data", length);
        FOURDGS_TRY(add_payload_record(r, r.opcode, {}, c.offset(), length));
    } else {
        return make_error(ErrorKind::invalid_argument, refusal::kInvalidArgument,
                          opcode_name(r.opcode) + " is not a payload record");
    }
    ++records_seen_;
    return ok_status();
}

Status SceneBuilder::seal(std::uint64_t at) {
    if (sealed_) return ok_status();
    if (!scene_.has_header)
        return make_error(ErrorKind::malformed, refusal::kMissingHeader, "the file has no Header record",
                          at);
    if (!scene_.has_quantization)
        return make_error(ErrorKind::malformed, refusal::kMissingQuantization,
                          "gaussian data begins before any Quantization record", at);
    FOURDGS_TRY(check_scene_references(scene_, &offsets_));
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

void SummaryRun::add(std::uint8_t opcode, std::uint64_t offset, Bytes bytes) {
    if (is_summary_opcode(opcode)) {
        if (!active_) {
            active_ = true;
            start_ = offset;
            crc_ = 0;
        }
        crc_ = crc32(bytes, crc_);
    } else if (active_ && !is_defined_opcode(opcode)) {
        crc_ = crc32(bytes, crc_);
    } else {
        if (active_) broken_by_ = offset;
        active_ = false;
    }
}

Status SummaryRun::check(const Footer& f, std::uint64_t footer_content, bool verify_crc,
                         bool& verified) const {
    verified = false;
    if (f.summary_start == 0) return ok_status();
    const bool matches = active_ && start_ == f.summary_start;
    if (!matches && active_ && f.summary_start < start_ && broken_by_ >= f.summary_start)
        return make_error(ErrorKind::malformed, refusal::kSummaryNotContiguous,
                          "a content record at byte " + std::to_string(broken_by_) +
                              " sits inside the summary that starts at " +
                              std::to_string(f.summary_start) + " (§4.5)",
                          broken_by_)
            .about("", std::to_string(f.summary_start));
    if (!matches)
        return make_error(ErrorKind::malformed, refusal::kSummaryStartMismatch,
                          "Footer summary_start is " + std::to_string(f.summary_start) +
                              " but the summary records before the Footer start at " +
                              (active_ ? std::to_string(start_)
                                       : std::string("no byte (there are none)")),
                          footer_content)
            .about("", std::to_string(f.summary_start));
    if (verify_crc && f.summary_crc != 0) {
        if (crc_ != f.summary_crc)
            return make_error(ErrorKind::malformed, refusal::kSummaryCrcMismatch,
                              "summary_crc is " + std::to_string(f.summary_crc) +
                                  " but the summary bytes hash to " + std::to_string(crc_),
                              footer_content + 16)
                .about("", std::to_string(f.summary_crc));
        verified = true;
    }
    return ok_status();
}

}  // namespace fourdgs
