// The content records both writers emit ahead of the chunks (content_records.hpp).
#include "content_records.hpp"

#include <cmath>
#include <limits>
#include <utility>

#include "fourdgs/extras.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/detail/record_stream.hpp"

namespace fourdgs::content {

using detail::RecordsInMemory;

namespace {

// A writer refusal carrying the reader's identifier: the caller's input is what needs fixing
// (invalid_argument), and the reader's offset would point into a file that does not exist.
Error refused(const Error& reader_error) {
    return make_error(ErrorKind::invalid_argument, reader_error.refusal,
                      "scene extras: " + reader_error.message);
}

Error refused(std::string_view refusal, std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal, "scene extras: " + std::move(message));
}

// M086: q / |q|. A zero or non-finite quaternion is left as given, so that the Audio Source
// parser below refuses it by its own rule (zero-quaternion, non-finite-value) instead of this
// function hiding it behind an identity.
std::array<double, 4> normalized_or_as_is(const std::array<double, 4>& q) {
    const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(n > 0) || !std::isfinite(n)) return q;
    return {q[0] / n, q[1] / n, q[2] / n, q[3] / n};
}

AudioSource descriptor_as_written(const AudioSourceInput& in) {
    AudioSource d = in.descriptor;
    d.data_length = in.data.size();
    d.rotation = normalized_or_as_is(d.rotation);
    for (AudioSource::Keyframe& k : d.keyframes) k.rotation = normalized_or_as_is(k.rotation);
    return d;
}

// What the record writers cannot say faithfully, refused before they are asked: they take the
// u8 distortion count and the embeddings' size on trust (records.hpp).
Status check_serializable(const SceneHeader& h) {
    for (const SensorCalibration& s : h.sensors)
        if (s.distortion.size() > std::numeric_limits<std::uint8_t>::max())
            return refused(refusal::kDistortionCountMismatch,
                           "sensor " + detail::quoted(s.name) + " has " +
                               std::to_string(s.distortion.size()) +
                               " distortion coefficients; the record's u8 count holds at most "
                               "255 (and the registry's models define 0, 4, 5 or 8)");
    if (h.object_table) {
        const ObjectTable& t = *h.object_table;
        // With embedding_dim 0 the record has no has_embedding byte, so even an empty embedding
        // would read back as none.
        for (const ObjectTable::Entry& e : t.entries)
            if (e.embedding && (t.embedding_dim == 0 || e.embedding->size() != t.embedding_dim))
                return refused(refusal::kEmbeddingDimensionMismatch,
                               "object " + std::to_string(e.object_id) + " has an embedding of " +
                                   std::to_string(e.embedding->size()) +
                                   " floats; the Object Table's embedding_dim is " +
                                   std::to_string(t.embedding_dim) + " (§5.15.6)");
    }
    return ok_status();
}

// Every record in `records` (which starts at absolute `base`) into `builder`, in order.
Status feed(SceneBuilder& builder, Bytes records, std::uint64_t base) {
    RecordsInMemory walk(records, base);
    while (true) {
        FOURDGS_ASSIGN(std::optional<RecordView> r, walk.next());
        if (!r) return ok_status();
        FOURDGS_TRY(builder.add(*r));
    }
}

// Every record the extras carry is written here, `Parse` being its kind's parser. When the kind's
// registry row says read_back, the backstop for what check_serializable does not foresee: the
// record is parsed back from the bytes just written, and what the parser reads must be the input.
// So a new kind needs no check of its own; its name in the refusal is the registry's.
template <auto Parse, class Record>
Status write_extra(ByteWriter& out, const Record& record) {
    const std::size_t at = out.size();
    write(out, record);
    RecordsInMemory written(Bytes(out.buffer()).subspan(at), at);
    FOURDGS_ASSIGN(std::optional<RecordView> r, written.next());
    if (!find_record_kind(r->opcode)->read_back) return ok_status();
    Result<Record> parsed = Parse(*r);
    if (!parsed.ok()) return refused(parsed.error());
    if (*parsed == record) return ok_status();
    return refused(refusal::kUnrepresentableRecord,
                   "the " + std::string(opcode_name(r->opcode)) + " record at byte " +
                       std::to_string(at) + " of the extras would read back differently from "
                       "the input");
}

}  // namespace

Result<Extras> encode_extras(const SceneHeader& h) {
    if (h.legacy_audio && !h.audio.empty())
        return refused(refusal::kMixedAudioRecords,
                       "both a legacy Audio track and " + std::to_string(h.audio.size()) +
                           " Audio Source input(s); a file must not mix them (§7, M105)");
    FOURDGS_TRY(check_serializable(h));

    Extras out;
    out.has_audio = h.legacy_audio.has_value() || !h.audio.empty();
    ByteWriter w;
    // In this order (the bytes are part of the writer's determinism); each kind's row says
    // whether it is read back. The audio payloads are bytes passed through as given, never
    // parsed back (their rows' read_back is false), so they are written plainly.
    if (h.camera) FOURDGS_TRY(write_extra<&parse_camera>(w, *h.camera));
    for (const AudioSourceInput& a : h.audio) {
        FOURDGS_TRY(write_extra<&parse_audio_source>(w, descriptor_as_written(a)));
        write(w, AudioData{a.descriptor.source_id, a.data, 0});  // right after it (M092)
    }
    if (h.legacy_audio)
        write(w, AudioLegacy{h.legacy_audio->codec, h.legacy_audio->start_sec,
                             h.legacy_audio->data, 0});
    for (const CoordinateFrame& f : h.coordinate_frames)
        FOURDGS_TRY(write_extra<&parse_coordinate_frame>(w, f));
    for (const SensorCalibration& s : h.sensors)
        FOURDGS_TRY(write_extra<&parse_sensor_calibration>(w, s));
    for (const RigTrajectory& t : h.rig_trajectories)
        FOURDGS_TRY(write_extra<&parse_rig_trajectory>(w, t));
    for (const GeodeticAnchor& g : h.geodetic_anchors)
        FOURDGS_TRY(write_extra<&parse_geodetic_anchor>(w, g));
    if (h.object_table) FOURDGS_TRY(write_extra<&parse_object_table>(w, *h.object_table));
    for (const ObjectTrack& t : h.object_tracks)
        FOURDGS_TRY(write_extra<&parse_object_track>(w, t));
    out.records = std::move(w.buffer());
    if (out.records.empty()) return out;

    // Read back by the readers' machinery, behind a Header carrying what the rules consult: the
    // duration (M088) and flags bit 0 (§7).
    Header front;
    front.duration_sec = h.duration_sec;
    front.cutoff = h.cutoff;
    front.temporal_model = std::string(kModelGaussianBirth);
    front.sh_degree = static_cast<std::uint8_t>(h.sh_degree);
    front.flags = out.header_flags();
    ByteWriter header_record;
    write(header_record, front);
    SceneBuilder builder{ReaderOptions{}};
    Status st = feed(builder, header_record.buffer(), 0);
    if (st.ok()) st = feed(builder, out.records, header_record.size());
    if (!st.ok()) return refused(st.error());
    if (Status refs = check_scene_references(builder.scene()); !refs.ok())
        return refused(refs.error());
    return out;
}

bool write_content_records(ByteWriter& out, const SceneHeader& h,
                           std::span<const Metadata> writer_metadata, bool application_owed,
                           const std::string& application) {
    bool named = false;
    for (const Metadata& m : h.metadata) {
        write(out, m);
        for (const auto& entry : m.entries) named |= entry.first == "application";
    }
    for (const Metadata& m : writer_metadata) write(out, m);
    if (application_owed && !named) {
        write(out, Metadata{"application", {{"application", application}}});
        named = true;
    }
    for (const AttachmentInput& a : h.attachments)
        write(out, Attachment{a.name, a.media_type, a.data, 0});
    for (const PrivateRecordInput& p : h.private_records) write_record(out, p.opcode, p.content);
    return named;
}

}  // namespace fourdgs::content
