// extras.cpp — the scene's extras both ways (fourdgs.h, "Metadata and attachments" through
// "Objects", and the writer's add calls): Metadata, Attachments and their payloads, the Camera,
// Audio Sources, the provenance records (Coordinate Frames, Sensor Calibrations, Rig
// Trajectories, Geodetic Anchors), the Object Table and Object Tracks. Reading, each getter
// names its list and its conversion (get_from); writing, each add call converts the caller's
// struct and appends it to the writer's SceneHeader.
#include "fourdgs_c_internal.hpp"

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace fourdgs;
using namespace fourdgs::capi;

// ---------------------------------------------------------------------------------------------
// Metadata (§5.9) and attachments (§5.11).

fourdgs_status fourdgs_reader_metadata(const fourdgs_reader* reader, size_t index,
                                       fourdgs_string* name, size_t* entry_count) {
    return get_from(
        reader, scene_element(&SceneInfo::metadata, index, "metadata record"),
        [](const Metadata& m) { return std::tuple(str(m.name), m.entries.size()); },
        Out{name, "name"}, Out{entry_count, "entry_count"});
}

fourdgs_status fourdgs_reader_metadata_entry(const fourdgs_reader* reader, size_t index,
                                             size_t entry, fourdgs_string* key,
                                             fourdgs_string* value) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        // The record is looked up before key and value are checked: a call wrong in both ways
        // is refused for the record.
        const Metadata* record = element(reader->scene().metadata, index, "metadata record");
        if (record == nullptr) return FOURDGS_NOT_FOUND;
        return fill_outs([&] { return element(record->entries, entry, "metadata entry"); },
                         key_value_out, Out{key, "key"}, Out{value, "value"});
    });
}

fourdgs_status fourdgs_reader_metadata_find(const fourdgs_reader* reader, const char* key,
                                            size_t key_size, fourdgs_string* value) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(value);
        std::string k;
        if (auto s = text_in(key, key_size, "key", k); s != FOURDGS_OK) return s;
        for (const Metadata& m : reader->scene().metadata)
            for (const auto& [mk, mv] : m.entries)
                if (mk == k) {
                    *value = str(mv);
                    return FOURDGS_OK;
                }
        return fail(FOURDGS_NOT_FOUND, refusal::kNoSuchElement, "no metadata entry has key \"" + k + "\"");
    });
}

namespace {

fourdgs_attachment_info attachment_out(const AttachmentEntry& a) noexcept {
    fourdgs_attachment_info i{};
    i.name = str(a.name);
    i.media_type = str(a.media_type);
    i.payload = {a.payload.offset, a.payload.length};
    return i;
}

// A stream's scene cannot go back to its source: a payload range is served from the kept bytes of
// the attachment or audio payload that holds it (fourdgs_open_options.keep_payloads), or not at
// all.
const PayloadRef* kept_payload(const SceneInfo& scene, fourdgs_payload p) {
    auto holds = [&](const PayloadRef& r) {
        return r.data.size() == r.length && p.offset >= r.offset &&
               p.offset - r.offset <= r.length && p.size <= r.length - (p.offset - r.offset);
    };
    for (const AttachmentEntry& a : scene.attachments)
        if (holds(a.payload)) return &a.payload;
    for (const AudioSourceEntry& a : scene.audio)
        if (holds(a.payload)) return &a.payload;
    return nullptr;
}

// Whether the reader can serve the payload range: from the kept bytes that hold it on a stream's
// scene (`kept`), from the file, which must hold it, otherwise (`kept` stays NULL).
fourdgs_status payload_held(const fourdgs_reader& reader, fourdgs_payload payload,
                            const PayloadRef*& kept) {
    const std::string range =
        "payload [" + std::to_string(payload.offset) + ", +" + std::to_string(payload.size) + ")";
    if (!reader.opened->random_access()) {
        kept = kept_payload(reader.scene(), payload);
        if (kept == nullptr)
            return invalid(refusal::kNeedsRandomAccess,
                           range + " is not held by this stream's scene: a stream keeps the "
                                   "payloads it passes only when opened with keep_payloads");
    } else {
        const std::uint64_t file_size = reader.source->size().value_or(0);
        if (payload.offset > file_size || payload.size > file_size - payload.offset)
            // The caller's range, not the file, is at fault: a C-layer identifier, not §5.8's.
            return invalid(refusal::kValueOutOfRange,
                           range + " lies outside the " + std::to_string(file_size) + "-byte file");
    }
    return FOURDGS_OK;
}

}  // namespace

fourdgs_status fourdgs_reader_attachment(const fourdgs_reader* reader, size_t index,
                                         fourdgs_attachment_info* out) {
    return get_from(reader, scene_element(&SceneInfo::attachments, index, "attachment"),
                    attachment_out, out);
}

fourdgs_status fourdgs_reader_read_payload(const fourdgs_reader* reader, fourdgs_payload payload,
                                           void* buffer, size_t capacity, size_t* size) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(size);
        const PayloadRef* kept = nullptr;
        if (auto s = payload_held(*reader, payload, kept); s != FOURDGS_OK) return s;
        if (buffer == nullptr) {
            *size = static_cast<size_t>(payload.size);
            return FOURDGS_OK;
        }
        if (capacity < payload.size)
            return fail(FOURDGS_BUFFER_TOO_SMALL, refusal::kBufferTooSmall,
                        "the payload is " + std::to_string(payload.size) + " bytes, the buffer " +
                            std::to_string(capacity));
        if (kept != nullptr) {
            if (payload.size != 0)
                std::memcpy(buffer, kept->data.data() + (payload.offset - kept->offset),
                            static_cast<size_t>(payload.size));
        } else {
            // read_exact may have written part of the buffer before failing; that is buffer
            // content, not an out-parameter, and `size` stays untouched.
            FOURDGS_C_TRY(reader->source->read_exact(
                payload.offset, std::span(static_cast<std::uint8_t*>(buffer), payload.size)));
        }
        *size = static_cast<size_t>(payload.size);
        return FOURDGS_OK;
    });
}

// ---------------------------------------------------------------------------------------------
// The Camera (§5.10).

namespace {

// The Camera, or NULL after refusing its absence (NOT_FOUND).
const Camera* camera_of(const fourdgs_reader& reader) {
    return present(reader.scene().camera, "the file has no Camera");
}

fourdgs_camera_info camera_out(const Camera& cam) noexcept {
    fourdgs_camera_info i{};
    i.fov_y_deg = cam.fov_y_deg;
    std::copy(cam.position.begin(), cam.position.end(), i.position);
    std::copy(cam.target.begin(), cam.target.end(), i.target);
    i.keyframe_count = cam.keyframes.size();
    i.interpolation = str(cam.interpolation);
    i.loop = cam.loop;
    return i;
}

fourdgs_camera_keyframe camera_keyframe_out(const Camera::Keyframe& k) noexcept {
    fourdgs_camera_keyframe c{};
    c.time = k.time;
    std::copy(k.position.begin(), k.position.end(), c.position);
    std::copy(k.target.begin(), k.target.end(), c.target);
    return c;
}

}  // namespace

fourdgs_status fourdgs_reader_camera(const fourdgs_reader* reader, fourdgs_camera_info* out) {
    return get_from(reader, camera_of, camera_out, out);
}

fourdgs_status fourdgs_reader_camera_keyframe(const fourdgs_reader* reader, size_t index,
                                              fourdgs_camera_keyframe* out) {
    return get_from(
        reader,
        [&](const fourdgs_reader& r) {
            const Camera* cam = camera_of(r);
            return cam ? element(cam->keyframes, index, "camera keyframe") : nullptr;
        },
        camera_keyframe_out, out);
}

fourdgs_status fourdgs_reader_camera_at(const fourdgs_reader* reader, double t,
                                        double position[3], double target[3], double* fov_y_deg) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(position);
        FOURDGS_C_REQUIRE(target);
        FOURDGS_C_REQUIRE(fov_y_deg);
        if (auto s = finite_time(t); s != FOURDGS_OK) return s;
        const Camera* cam = camera_of(*reader);
        if (cam == nullptr) return FOURDGS_NOT_FOUND;
        const CameraView v = camera_at(*cam, t);
        std::copy(v.position.begin(), v.position.end(), position);
        std::copy(v.target.begin(), v.target.end(), target);
        *fov_y_deg = v.fov_y_deg;
        return FOURDGS_OK;
    });
}

// ---------------------------------------------------------------------------------------------
// Audio sources (§5.16, §7).

namespace {

fourdgs_audio_source_info audio_source_out(const AudioSourceEntry& e) noexcept {
    const AudioSource& d = e.descriptor;
    fourdgs_audio_source_info i{};
    i.source_id = d.source_id;
    i.legacy = e.legacy;
    i.name = str(d.name);
    i.codec = str(d.codec);
    i.channel_layout = str(d.channel_layout);
    i.interpolation = str(d.interpolation);
    i.start_sec = d.start_sec;
    i.duration_sec = d.duration_sec;
    i.gain = d.gain;
    i.flags = d.flags;
    std::copy(d.position.begin(), d.position.end(), i.position);
    std::copy(d.rotation.begin(), d.rotation.end(), i.rotation);
    i.keyframe_count = d.keyframes.size();
    i.payload = {e.payload.offset, e.payload.length};
    return i;
}

fourdgs_audio_keyframe audio_keyframe_out(const AudioSource::Keyframe& key) noexcept {
    fourdgs_audio_keyframe k{};
    k.time = key.time;
    std::copy(key.position.begin(), key.position.end(), k.position);
    std::copy(key.rotation.begin(), key.rotation.end(), k.rotation);
    return k;
}

}  // namespace

fourdgs_status fourdgs_reader_audio_source(const fourdgs_reader* reader, size_t index,
                                           fourdgs_audio_source_info* out) {
    return get_from(reader, scene_element(&SceneInfo::audio, index, "audio source"),
                    audio_source_out, out);
}

fourdgs_status fourdgs_reader_audio_keyframe(const fourdgs_reader* reader, size_t source,
                                             size_t index, fourdgs_audio_keyframe* out) {
    return get_from(
        reader,
        [&](const fourdgs_reader& r) {
            const AudioSourceEntry* e = element(r.scene().audio, source, "audio source");
            return e ? element(e->descriptor.keyframes, index, "audio keyframe") : nullptr;
        },
        audio_keyframe_out, out);
}

fourdgs_status fourdgs_reader_audio_state_at(const fourdgs_reader* reader, size_t source, double t,
                                             fourdgs_audio_state* out) {
    return get_from(
        reader,
        [&](const fourdgs_reader& r) {  // t is refused before the source is looked up
            return finite_time(t) == FOURDGS_OK ? element(r.scene().audio, source, "audio source")
                                                : nullptr;
        },
        [&](const AudioSourceEntry& e) { return audio_state_out(audio_state_at(e.descriptor, t)); },
        out);
}

// ---------------------------------------------------------------------------------------------
// Provenance (§5.15.2–§5.15.5).

namespace {

fourdgs_coordinate_frame coordinate_frame_out(const CoordinateFrame& f) noexcept {
    fourdgs_coordinate_frame c{};
    c.name = str(f.name);
    c.handedness = static_cast<uint32_t>(f.handedness);
    c.up_axis = static_cast<uint32_t>(f.up_axis);
    c.forward_axis = static_cast<uint32_t>(f.forward_axis);
    c.length_unit = static_cast<uint32_t>(f.length_unit);
    c.metres_per_unit = f.metres_per_unit;
    return c;
}

fourdgs_sensor sensor_out(const SensorCalibration& s) noexcept {
    fourdgs_sensor c{};
    c.name = str(s.name);
    c.modality = str(s.modality);
    c.rig_name = str(s.rig_name);
    c.camera_model = static_cast<uint32_t>(s.camera_model);
    c.width_px = s.width_px;
    c.height_px = s.height_px;
    c.fx = s.fx;
    c.fy = s.fy;
    c.cx = s.cx;
    c.cy = s.cy;
    c.distortion_count = s.distortion.size();
    c.distortion = s.distortion.data();
    std::copy(s.rotation.begin(), s.rotation.end(), c.rotation);
    std::copy(s.translation.begin(), s.translation.end(), c.translation);
    c.pose_reference = static_cast<uint32_t>(s.pose_reference);
    return c;
}

fourdgs_pose_sample sample_out(const TrajectorySample& s) {
    fourdgs_pose_sample p{};
    p.time = s.time;
    std::copy(s.rotation.begin(), s.rotation.end(), p.rotation);
    std::copy(s.translation.begin(), s.translation.end(), p.translation);
    return p;
}

// A find for get_from(): sample `sample` of track `index` of the scene's `tracks` (the Rig
// Trajectories or the Object Tracks).
template <class Tracks, class Scene>
auto track_sample(Tracks Scene::*tracks, std::size_t index, const char* track, std::size_t sample,
                  const char* what) {
    return [=](const fourdgs_reader& r) {
        const auto* t = element(r.scene().*tracks, index, track);
        return t ? element(t->samples, sample, what) : nullptr;
    };
}

fourdgs_geodetic_anchor geodetic_anchor_out(const GeodeticAnchor& g) noexcept {
    fourdgs_geodetic_anchor a{};
    a.frame_name = str(g.frame_name);
    a.latitude_deg = g.latitude_deg;
    a.longitude_deg = g.longitude_deg;
    a.altitude_m = g.altitude_m;
    a.heading_deg = g.heading_deg;
    return a;
}

}  // namespace

fourdgs_status fourdgs_reader_coordinate_frame(const fourdgs_reader* reader, size_t index,
                                               fourdgs_coordinate_frame* out) {
    return get_from(reader,
                    scene_element(&SceneInfo::coordinate_frames, index, "coordinate frame"),
                    coordinate_frame_out, out);
}

fourdgs_status fourdgs_reader_sensor(const fourdgs_reader* reader, size_t index,
                                     fourdgs_sensor* out) {
    return get_from(reader, scene_element(&SceneInfo::sensors, index, "sensor"), sensor_out, out);
}

fourdgs_status fourdgs_reader_rig_trajectory(const fourdgs_reader* reader, size_t index,
                                             fourdgs_string* name, uint32_t* interpolation,
                                             size_t* sample_count) {
    return get_from(
        reader, scene_element(&SceneInfo::rig_trajectories, index, "rig trajectory"),
        [](const RigTrajectory& r) {
            return std::tuple(str(r.name), static_cast<uint32_t>(r.interpolation),
                              r.samples.size());
        },
        Out{name, "name"}, Out{interpolation, "interpolation"},
        Out{sample_count, "sample_count"});
}

fourdgs_status fourdgs_reader_rig_trajectory_sample(const fourdgs_reader* reader, size_t index,
                                                    size_t sample, fourdgs_pose_sample* out) {
    return get_from(reader,
                    track_sample(&SceneInfo::rig_trajectories, index, "rig trajectory", sample,
                                 "trajectory sample"),
                    sample_out, out);
}

fourdgs_status fourdgs_reader_geodetic_anchor(const fourdgs_reader* reader, size_t index,
                                              fourdgs_geodetic_anchor* out) {
    return get_from(reader,
                    scene_element(&SceneInfo::geodetic_anchors, index, "geodetic anchor"),
                    geodetic_anchor_out, out);
}

// ---------------------------------------------------------------------------------------------
// Objects (§5.15.6, §5.15.7).

namespace {

fourdgs_object_info object_out(const ObjectTable::Entry& e) noexcept {
    fourdgs_object_info o{};
    o.object_id = e.object_id;
    o.label = str(e.label);
    std::copy(e.anchor.begin(), e.anchor.end(), o.anchor);
    o.has_dynamics = e.dynamics.has_value();
    if (e.dynamics) {
        std::copy(e.dynamics->velocity.begin(), e.dynamics->velocity.end(), o.velocity);
        std::copy(e.dynamics->angular_velocity.begin(), e.dynamics->angular_velocity.end(),
                  o.angular_velocity);
        std::copy(e.dynamics->acceleration.begin(), e.dynamics->acceleration.end(),
                  o.acceleration);
    }
    o.has_embedding = e.embedding.has_value();
    o.embedding = e.embedding ? e.embedding->data() : nullptr;
    return o;
}

}  // namespace

fourdgs_status fourdgs_reader_object(const fourdgs_reader* reader, size_t index,
                                     fourdgs_object_info* out) {
    return get_from(
        reader,
        [&](const fourdgs_reader& r) {
            const auto& table = r.scene().object_table;  // no table: no objects
            const std::span<const ObjectTable::Entry> objects =
                table ? std::span(table->entries) : std::span<const ObjectTable::Entry>();
            return element(objects, index, "object");
        },
        object_out, out);
}

fourdgs_status fourdgs_reader_object_track(const fourdgs_reader* reader, size_t index,
                                           uint32_t* object_id, uint32_t* interpolation,
                                           size_t* sample_count) {
    return get_from(
        reader, scene_element(&SceneInfo::object_tracks, index, "object track"),
        [](const ObjectTrack& t) {
            return std::tuple(t.object_id, static_cast<uint32_t>(t.interpolation),
                              t.samples.size());
        },
        Out{object_id, "object_id"}, Out{interpolation, "interpolation"},
        Out{sample_count, "sample_count"});
}

fourdgs_status fourdgs_reader_object_track_sample(const fourdgs_reader* reader, size_t index,
                                                  size_t sample, fourdgs_pose_sample* out) {
    return get_from(reader,
                    track_sample(&SceneInfo::object_tracks, index, "object track", sample,
                                 "track sample"),
                    sample_out, out);
}

// =============================================================================================
// Adding the extras to a writer, in the order above. Strings and bytes are copied: the caller's
// buffers are free again when the call returns.

namespace {

// An enumerated field coming in: within [0, max] or refused naming it.
template <class E>
fourdgs_status enum_in(uint32_t v, uint32_t max, const char* what, E& out) {
    if (v > max)
        return invalid(refusal::kValueOutOfRange,
                       std::string(what) + " " + std::to_string(v) + " is not one of 0.." +
                           std::to_string(max));
    out = static_cast<E>(v);
    return FOURDGS_OK;
}

fourdgs_status samples_in(const fourdgs_pose_sample* samples, size_t count,
                          std::vector<TrajectorySample>& out) {
    if (!array_ok(samples, count)) return invalid(refusal::kNullArgument, "samples is NULL");
    out.resize(count);
    for (size_t i = 0; i < count; ++i) {
        out[i].time = samples[i].time;
        std::copy(samples[i].rotation, samples[i].rotation + 4, out[i].rotation.begin());
        std::copy(samples[i].translation, samples[i].translation + 3, out[i].translation.begin());
    }
    return FOURDGS_OK;
}

// An Audio Source descriptor (§5.16) with its keyframes.
fourdgs_status audio_source_in(const fourdgs_audio_source_info& in,
                               const fourdgs_audio_keyframe* keyframes, size_t keyframe_count,
                               AudioSource& d) {
    d.source_id = in.source_id;
    if (auto s = text_in(in.name.data, in.name.size, "name", d.name); s != FOURDGS_OK) return s;
    if (auto s = text_in(in.codec.data, in.codec.size, "codec", d.codec); s != FOURDGS_OK)
        return s;
    if (auto s = text_in(in.channel_layout.data, in.channel_layout.size, "channel_layout",
                         d.channel_layout);
        s != FOURDGS_OK)
        return s;
    if (auto s = text_in(in.interpolation.data, in.interpolation.size, "interpolation",
                         d.interpolation);
        s != FOURDGS_OK)
        return s;
    if (in.flags > 0xFF)
        return invalid(refusal::kValueOutOfRange,
                       "flags " + std::to_string(in.flags) + " does not fit a byte");
    d.start_sec = in.start_sec;
    d.duration_sec = in.duration_sec;
    d.gain = in.gain;
    d.flags = static_cast<std::uint8_t>(in.flags);
    std::copy(in.position, in.position + 3, d.position.begin());
    std::copy(in.rotation, in.rotation + 4, d.rotation.begin());
    for (size_t i = 0; i < keyframe_count; ++i) {
        AudioSource::Keyframe k;
        k.time = keyframes[i].time;
        std::copy(keyframes[i].position, keyframes[i].position + 3, k.position.begin());
        std::copy(keyframes[i].rotation, keyframes[i].rotation + 4, k.rotation.begin());
        d.keyframes.push_back(k);
    }
    return FOURDGS_OK;
}

// An Object Table entry; `embedding_dim` floats of embedding when it has one.
fourdgs_status object_in(const fourdgs_object_info& in, uint32_t embedding_dim,
                         ObjectTable::Entry& e) {
    e.object_id = in.object_id;
    if (auto s = text_in(in.label.data, in.label.size, "label", e.label); s != FOURDGS_OK)
        return s;
    std::copy(in.anchor, in.anchor + 3, e.anchor.begin());
    if (in.has_dynamics) {
        ObjectTable::Dynamics d;
        std::copy(in.velocity, in.velocity + 3, d.velocity.begin());
        std::copy(in.angular_velocity, in.angular_velocity + 3, d.angular_velocity.begin());
        std::copy(in.acceleration, in.acceleration + 3, d.acceleration.begin());
        e.dynamics = d;
    }
    if (in.has_embedding)
        e.embedding = std::vector<float>(in.embedding, in.embedding + embedding_dim);
    return FOURDGS_OK;
}

}  // namespace

fourdgs_status fourdgs_writer_add_metadata(fourdgs_writer* writer, const char* name,
                                           size_t name_size, const fourdgs_key_value* entries,
                                           size_t entry_count) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        if (!array_ok(entries, entry_count)) return invalid(refusal::kNullArgument, "entries is NULL");
        Metadata m;
        if (auto s = text_in(name, name_size, "name", m.name); s != FOURDGS_OK) return s;
        for (size_t i = 0; i < entry_count; ++i) {
            std::string k, v;
            if (auto s = text_in(entries[i].key, entries[i].key_size, "entries[].key", k);
                s != FOURDGS_OK)
                return s;
            if (auto s = text_in(entries[i].value, entries[i].value_size, "entries[].value", v);
                s != FOURDGS_OK)
                return s;
            m.entries.emplace_back(std::move(k), std::move(v));
        }
        writer->header.metadata.push_back(std::move(m));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_attachment(fourdgs_writer* writer, const char* name,
                                             size_t name_size, const char* media_type,
                                             size_t media_type_size, const void* data,
                                             size_t size) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        if (!array_ok(data, size)) return invalid(refusal::kNullArgument, "data is NULL");
        AttachmentCopy a;
        if (auto s = text_in(name, name_size, "name", a.name); s != FOURDGS_OK) return s;
        if (auto s = text_in(media_type, media_type_size, "media_type", a.media_type);
            s != FOURDGS_OK)
            return s;
        const auto* bytes = static_cast<const std::uint8_t*>(data);
        a.data.assign(bytes, bytes + size);
        writer->attachments.push_back(std::move(a));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_set_camera(fourdgs_writer* writer, double fov_y_deg,
                                         const double position[3], const double target[3],
                                         const fourdgs_camera_keyframe* keyframes,
                                         size_t keyframe_count, const char* interpolation,
                                         size_t interpolation_size, uint32_t loop) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        FOURDGS_C_REQUIRE(position);
        FOURDGS_C_REQUIRE(target);
        if (!array_ok(keyframes, keyframe_count))
            return invalid(refusal::kNullArgument, "keyframes is NULL");
        Camera cam;
        cam.fov_y_deg = fov_y_deg;
        std::copy(position, position + 3, cam.position.begin());
        std::copy(target, target + 3, cam.target.begin());
        for (size_t i = 0; i < keyframe_count; ++i) {
            Camera::Keyframe k;
            k.time = keyframes[i].time;
            std::copy(keyframes[i].position, keyframes[i].position + 3, k.position.begin());
            std::copy(keyframes[i].target, keyframes[i].target + 3, k.target.begin());
            cam.keyframes.push_back(k);
        }
        if (auto s = text_in(interpolation, interpolation_size, "interpolation", cam.interpolation);
            s != FOURDGS_OK)
            return s;
        cam.loop = loop != 0;
        writer->header.camera = std::move(cam);
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_audio_source(fourdgs_writer* writer,
                                               const fourdgs_audio_source_info* info,
                                               const fourdgs_audio_keyframe* keyframes,
                                               size_t keyframe_count, const void* data,
                                               size_t size) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        FOURDGS_C_REQUIRE(info);
        fourdgs_audio_source_info in{};
        if (auto s = read_in(info, in); s != FOURDGS_OK) return s;
        if (!array_ok(keyframes, keyframe_count))
            return invalid(refusal::kNullArgument, "keyframes is NULL");
        if (!array_ok(data, size)) return invalid(refusal::kNullArgument, "data is NULL");
        AudioCopy a;
        if (auto s = audio_source_in(in, keyframes,
                                     keyframe_count, a.descriptor);
            s != FOURDGS_OK)
            return s;
        const auto* bytes = static_cast<const std::uint8_t*>(data);
        a.data.assign(bytes, bytes + size);
        writer->audio.push_back(std::move(a));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_coordinate_frame(fourdgs_writer* writer,
                                                   const fourdgs_coordinate_frame* frame) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        FOURDGS_C_REQUIRE(frame);
        fourdgs_coordinate_frame in{};
        if (auto s = read_in(frame, in); s != FOURDGS_OK) return s;
        CoordinateFrame f;
        if (auto s = text_in(in.name.data, in.name.size, "name", f.name); s != FOURDGS_OK) return s;
        if (auto s = enum_in(in.handedness, 2, "handedness", f.handedness); s != FOURDGS_OK) return s;
        if (auto s = enum_in(in.up_axis, 5, "up_axis", f.up_axis); s != FOURDGS_OK) return s;
        if (auto s = enum_in(in.forward_axis, 5, "forward_axis", f.forward_axis); s != FOURDGS_OK)
            return s;
        if (auto s = enum_in(in.length_unit, 6, "length_unit", f.length_unit); s != FOURDGS_OK)
            return s;
        f.metres_per_unit = in.metres_per_unit;
        writer->header.coordinate_frames.push_back(std::move(f));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_sensor(fourdgs_writer* writer, const fourdgs_sensor* sensor) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        FOURDGS_C_REQUIRE(sensor);
        fourdgs_sensor in{};
        if (auto s = read_in(sensor, in); s != FOURDGS_OK) return s;
        if (!array_ok(in.distortion, in.distortion_count))
            return invalid(refusal::kNullArgument, "sensor.distortion is NULL");
        SensorCalibration c;
        if (auto s = text_in(in.name.data, in.name.size, "name", c.name); s != FOURDGS_OK) return s;
        if (auto s = text_in(in.modality.data, in.modality.size, "modality", c.modality);
            s != FOURDGS_OK)
            return s;
        if (auto s = text_in(in.rig_name.data, in.rig_name.size, "rig_name", c.rig_name);
            s != FOURDGS_OK)
            return s;
        if (auto s = enum_in(in.camera_model, 3, "camera_model", c.camera_model); s != FOURDGS_OK)
            return s;
        if (auto s = enum_in(in.pose_reference, 1, "pose_reference", c.pose_reference);
            s != FOURDGS_OK)
            return s;
        c.width_px = in.width_px;
        c.height_px = in.height_px;
        c.fx = in.fx;
        c.fy = in.fy;
        c.cx = in.cx;
        c.cy = in.cy;
        c.distortion.assign(in.distortion, in.distortion + in.distortion_count);
        std::copy(in.rotation, in.rotation + 4, c.rotation.begin());
        std::copy(in.translation, in.translation + 3, c.translation.begin());
        writer->header.sensors.push_back(std::move(c));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_rig_trajectory(fourdgs_writer* writer, const char* name,
                                                 size_t name_size, uint32_t interpolation,
                                                 const fourdgs_pose_sample* samples,
                                                 size_t sample_count) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        RigTrajectory r;
        if (auto s = text_in(name, name_size, "name", r.name); s != FOURDGS_OK) return s;
        if (auto s = enum_in(interpolation, 1, "interpolation", r.interpolation); s != FOURDGS_OK)
            return s;
        if (auto s = samples_in(samples, sample_count, r.samples); s != FOURDGS_OK) return s;
        writer->header.rig_trajectories.push_back(std::move(r));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_geodetic_anchor(fourdgs_writer* writer,
                                                  const fourdgs_geodetic_anchor* anchor) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        FOURDGS_C_REQUIRE(anchor);
        fourdgs_geodetic_anchor in{};
        if (auto s = read_in(anchor, in); s != FOURDGS_OK) return s;
        GeodeticAnchor g;
        if (auto s = text_in(in.frame_name.data, in.frame_name.size, "frame_name", g.frame_name);
            s != FOURDGS_OK)
            return s;
        g.latitude_deg = in.latitude_deg;
        g.longitude_deg = in.longitude_deg;
        g.altitude_m = in.altitude_m;
        g.heading_deg = in.heading_deg;
        writer->header.geodetic_anchors.push_back(std::move(g));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_object(fourdgs_writer* writer, const fourdgs_object_info* object,
                                         uint32_t embedding_dim) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        FOURDGS_C_REQUIRE(object);
        fourdgs_object_info in{};
        if (auto s = read_in(object, in); s != FOURDGS_OK) return s;
        if (embedding_dim > 0xFFFF)
            return invalid(refusal::kValueOutOfRange,
                           "embedding_dim " + std::to_string(embedding_dim) + " is above 65535");
        if (writer->header.object_table && writer->embedding_dim != embedding_dim)
            return invalid(refusal::kEmbeddingDimensionMismatch,
                           "embedding_dim " + std::to_string(embedding_dim) +
                               " differs from the table's " +
                               std::to_string(writer->embedding_dim));
        if (in.has_embedding && embedding_dim > 0 && in.embedding == nullptr)
            return invalid(refusal::kNullArgument, "object.embedding is NULL");
        ObjectTable::Entry e;
        if (auto s = object_in(in, embedding_dim, e); s != FOURDGS_OK) return s;
        if (!writer->header.object_table) {
            writer->header.object_table.emplace();
            writer->header.object_table->embedding_dim = static_cast<std::uint16_t>(embedding_dim);
            writer->embedding_dim = embedding_dim;
        }
        writer->header.object_table->entries.push_back(std::move(e));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_object_track(fourdgs_writer* writer, uint32_t object_id,
                                               uint32_t interpolation,
                                               const fourdgs_pose_sample* samples,
                                               size_t sample_count) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        ObjectTrack t;
        t.object_id = object_id;
        if (auto s = enum_in(interpolation, 1, "interpolation", t.interpolation); s != FOURDGS_OK)
            return s;
        if (auto s = samples_in(samples, sample_count, t.samples); s != FOURDGS_OK) return s;
        writer->header.object_tracks.push_back(std::move(t));
        return FOURDGS_OK;
    });
}
