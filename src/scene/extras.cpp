// What the scene's extras mean (fourdgs/extras.hpp): the rules that span records, audio state,
// the camera path, provenance poses and object queries. Pure functions of a SceneInfo.
#include "fourdgs/extras.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "fourdgs/detail/findings.hpp"
#include "fourdgs/reconstruct.hpp"
#include "format/record_keying.hpp"

namespace fourdgs {
namespace {

std::uint64_t offset_of(const std::vector<std::uint64_t>* offsets, std::size_t i) {
    return offsets && i < offsets->size() ? (*offsets)[i] : kNoOffset;
}

// A broken cross-record rule; the field is the one the identifier names (refusals.hpp), the value
// the name or number that broke it.
Error refused(std::string_view id, std::string value, std::string message,
              std::uint64_t offset) {
    return make_error(ErrorKind::malformed, id, std::move(message), offset)
        .about("", std::move(value));
}

// Whether element i of `v` repeats the key of an earlier one of its kind (record_keying.hpp) and
// the findings, told so, stop.
template <class T>
bool stop_at_repeat(detail::Findings& findings, const std::vector<T>& v, std::size_t i,
                    const std::vector<std::uint64_t>* offsets) {
    std::optional<Error> repeat =
        repeated_key(std::span<const T>(v).first(i), v[i], offset_of(offsets, i));
    return repeat && !findings.take(std::move(*repeat));
}

// ---------------------------------------------------------------------------------------------
// Rules that span records, each broken one taken by `findings` (detail/findings.hpp).

void check_references(const SceneInfo& s, const RecordOffsets* offsets,
                      detail::Findings& findings) {
    const auto* frames_at = offsets ? &offsets->coordinate_frames : nullptr;
    const auto* sensors_at = offsets ? &offsets->sensors : nullptr;
    const auto* anchors_at = offsets ? &offsets->geodetic_anchors : nullptr;
    const auto* audio_at = offsets ? &offsets->audio : nullptr;

    // §5.15.2 (M039): a frame is referred to by its name alone.
    for (std::size_t i = 0; i < s.coordinate_frames.size(); ++i)
        if (stop_at_repeat(findings, s.coordinate_frames, i, frames_at)) return;
    // §5.15.3 (M049, M051): unique sensor names; a rig-relative extrinsic needs its rig.
    for (std::size_t i = 0; i < s.sensors.size(); ++i) {
        const SensorCalibration& sensor = s.sensors[i];
        if (stop_at_repeat(findings, s.sensors, i, sensors_at)) return;
        if (sensor.pose_reference == PoseReference::rig &&
            find_rig_trajectory(s, sensor.rig_name) == nullptr) {
            const bool empty_one = std::any_of(
                s.rig_trajectories.begin(), s.rig_trajectories.end(),
                [&](const RigTrajectory& t) { return t.name == sensor.rig_name; });
            if (!findings.take(refused(refusal::kMissingRigTrajectory, sensor.rig_name,
                                "sensor " + detail::quoted(sensor.name) +
                                    " is posed relative to rig " +
                                    detail::quoted(sensor.rig_name) + ", and " +
                                    (empty_one ? "that Rig Trajectory has no samples, which "
                                                 "reads as no record at all (§5.15.4)"
                                               : "the file has no Rig Trajectory of that name "
                                                 "(§5.15.3)"),
                                offset_of(sensors_at, i))))
                return;
        }
    }
    // §5.15.5 (M063, M066): an anchor names a frame the file defines, at most once.
    for (std::size_t i = 0; i < s.geodetic_anchors.size(); ++i) {
        const GeodeticAnchor& a = s.geodetic_anchors[i];
        const bool found =
            std::any_of(s.coordinate_frames.begin(), s.coordinate_frames.end(),
                        [&](const CoordinateFrame& f) { return f.name == a.frame_name; });
        if (!found &&
            !findings.take(refused(refusal::kMissingAnchorFrame, a.frame_name,
                            "a Geodetic Anchor names frame " + detail::quoted(a.frame_name) +
                                ", and no Coordinate Frame record has that name (§5.15.5)",
                            offset_of(anchors_at, i))))
            return;
        if (stop_at_repeat(findings, s.geodetic_anchors, i, anchors_at)) return;
    }
    // §7: flags bit 0 is the whole discovery signal, so it must tell the truth both ways.
    if (s.header.has_audio() != !s.audio.empty() &&
        !findings.take(refused(refusal::kAudioFlagMismatch, std::to_string(s.header.flags),
                        s.header.has_audio()
                            ? "Header flags bit 0 says the scene has audio, and it carries no "
                              "Audio or Audio Source record (§7)"
                            : "the scene carries " + std::to_string(s.audio.size()) +
                                  " audio source(s) but Header flags bit 0 is clear (§7)",
                        offset_of(audio_at, 0))))
        return;
    for (std::size_t i = 0; i < s.audio.size(); ++i) {
        const AudioSourceEntry& e = s.audio[i];
        if (e.legacy) continue;
        // §5.16 (M088): keyframes lie on the scene's timeline.
        if (Status st = check_audio_keyframes_within(e.descriptor, s.header.duration_sec);
            !st.ok()) {
            Error err = st.error();
            err.offset = offset_of(audio_at, i);
            if (!findings.take(std::move(err))) return;
        }
        // §5.17 (M090): every descriptor has its payload, before the first chunk.
        if (e.payload.offset == 0 &&
            !findings.take(refused(refusal::kUnmatchedAudioSource,
                            std::to_string(e.descriptor.source_id),
                            "Audio Source " + std::to_string(e.descriptor.source_id) +
                                " has no Audio Data record before the first chunk (§5.17)",
                            offset_of(audio_at, i))))
            return;
    }
}

}  // namespace

void check_scene_references(const SceneInfo& scene, const RecordOffsets* offsets,
                            const ReportFn& report) {
    detail::Findings findings(report);
    check_references(scene, offsets, findings);
}

Status check_scene_references(const SceneInfo& scene, const RecordOffsets* offsets) {
    detail::Findings first;  // a reader's: the first rule broken
    check_references(scene, offsets, first);
    return first.outcome();
}

// ---------------------------------------------------------------------------------------------
// Audio (§7.1, §7.2).

AudioState audio_state_at(const AudioSource& source, double t) {
    AudioState st;
    const double start = source.start_sec, duration = source.duration_sec;
    st.active = t >= start && (source.loop() || t < start + duration);
    const double elapsed = std::max(0.0, t - start);
    if (duration > 0)
        st.local_time = source.loop() ? std::fmod(elapsed, duration) : std::min(elapsed, duration);
    st.gain = source.gain;

    const auto& keys = source.keyframes;
    if (keys.empty()) {
        st.pose = {normalized(source.rotation), source.position};
        return st;
    }
    const SampleSpan at =
        locate_sample(keys.size(), t, [&](std::size_t i) { return keys[i].time; });
    const AudioSource::Keyframe& a = keys[at.index];
    if (at.u == 0 || source.interpolation == "step") {
        st.pose = {normalized(a.rotation), a.position};
        return st;
    }
    const AudioSource::Keyframe& b = keys[at.index + 1];
    st.pose = {slerp_shortest(normalized(a.rotation), normalized(b.rotation), at.u),
               lerp(a.position, b.position, at.u)};
    return st;
}

std::optional<AudioState> audio_state_at(const SceneInfo& scene, std::uint32_t source_id,
                                         double t) {
    for (const AudioSourceEntry& e : scene.audio)
        if (e.descriptor.source_id == source_id) return audio_state_at(e.descriptor, t);
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Camera (§5.10).

namespace {

// Uniform Catmull-Rom between p1 and p2 at u, with p0 and p3 the neighbours.
Vec3 catmull_rom(const Vec3& p0, const Vec3& p1, const Vec3& p2, const Vec3& p3, double u) {
    Vec3 r{};
    const double u2 = u * u, u3 = u2 * u;
    for (int c = 0; c < 3; ++c)
        r[c] = 0.5 * (2 * p1[c] + (p2[c] - p0[c]) * u +
                      (2 * p0[c] - 5 * p1[c] + 4 * p2[c] - p3[c]) * u2 +
                      (3 * p1[c] - p0[c] - 3 * p2[c] + p3[c]) * u3);
    return r;
}

}  // namespace

CameraView camera_at(const Camera& camera, double t) {
    CameraView view{camera.position, camera.target, camera.fov_y_deg};
    const auto& keys = camera.keyframes;
    if (keys.empty() || !std::isfinite(t)) return view;
    const double first = keys.front().time, last = keys.back().time;
    if (camera.loop && last > first) {
        double into = std::fmod(t - first, last - first);
        if (into < 0) into += last - first;
        t = first + into;
    }
    // The parser does not order camera keyframes (the record is advisory), so a span whose end
    // is not after its start is held rather than divided by.
    SampleSpan at = locate_sample(keys.size(), t, [&](std::size_t i) { return keys[i].time; });
    if (!(at.u > 0 && at.u < 1)) at.u = 0;
    const std::size_t i = at.index;
    if (at.u == 0) {
        view.position = keys[i].position;
        view.target = keys[i].target;
        return view;
    }
    const std::size_t j = i + 1;
    if (camera.interpolation == "spline") {
        const std::size_t h = i == 0 ? 0 : i - 1, k = j + 1 < keys.size() ? j + 1 : j;
        view.position = catmull_rom(keys[h].position, keys[i].position, keys[j].position,
                                    keys[k].position, at.u);
        view.target = catmull_rom(keys[h].target, keys[i].target, keys[j].target, keys[k].target,
                                  at.u);
    } else {
        view.position = lerp(keys[i].position, keys[j].position, at.u);
        view.target = lerp(keys[i].target, keys[j].target, at.u);
    }
    return view;
}

// ---------------------------------------------------------------------------------------------
// Provenance (§5.15.2–§5.15.5).

SceneFrame scene_frame(const SceneInfo& scene) {
    SceneFrame frame;
    for (const CoordinateFrame& f : scene.coordinate_frames)
        if (f.name.empty()) {
            frame.record = &f;  // wins in whole: the key is not consulted at all (M046)
            return frame;
        }
    for (const Metadata& m : scene.metadata)
        for (const auto& [key, value] : m.entries)
            if (key == "coordinate_system") {
                frame.coordinate_system = value;
                return frame;
            }
    for (const auto& [key, value] : scene.header.attributes)
        if (key == "coordinate_system") {
            frame.coordinate_system = value;
            return frame;
        }
    return frame;
}

const RigTrajectory* find_rig_trajectory(const SceneInfo& scene, std::string_view name) {
    for (const RigTrajectory& t : scene.rig_trajectories)
        if (t.name == name && !t.samples.empty()) return &t;  // zero samples = absent (M061)
    return nullptr;
}

const SensorCalibration* find_sensor(const SceneInfo& scene, std::string_view name) {
    for (const SensorCalibration& s : scene.sensors)
        if (s.name == name) return &s;
    return nullptr;
}

Result<Pose> sensor_pose_at(const SceneInfo& scene, std::string_view sensor_name, double t) {
    const SensorCalibration* sensor = find_sensor(scene, sensor_name);
    if (!sensor)
        return make_error(ErrorKind::invalid_argument, refusal::kUnknownSensor,
                          "the scene has no sensor named " + detail::quoted(sensor_name));
    const Pose extrinsic{normalized(sensor->rotation), sensor->translation};
    if (sensor->pose_reference == PoseReference::scene) return extrinsic;
    const RigTrajectory* rig = find_rig_trajectory(scene, sensor->rig_name);
    if (!rig)  // never placed at the rig's origin instead (M052)
        return make_error(ErrorKind::malformed, refusal::kMissingRigTrajectory,
                          "sensor " + detail::quoted(sensor->name) + " rides rig " +
                              detail::quoted(sensor->rig_name) +
                              ", which has no Rig Trajectory with samples (§5.15.3)");
    // p_scene = R_rig (R p + T) + t_rig.
    return compose(sample_trajectory(rig->samples, rig->interpolation, t), extrinsic);
}

bool can_undistort(const SensorCalibration& sensor) {
    switch (sensor.camera_model) {
        case CameraModel::pinhole:
        case CameraModel::brown_conrady:
        case CameraModel::kannala_brandt: return true;
        case CameraModel::none: return false;
    }
    return false;  // a model byte this build does not know: reported uncorrected (M057)
}

namespace {

Status check_camera(const SensorCalibration& s) {
    if (s.camera_model == CameraModel::none)
        return make_error(ErrorKind::invalid_argument, refusal::kNotACamera,
                          "sensor " + detail::quoted(s.name) + " has camera_model 0 (none)");
    if (!can_undistort(s))
        return make_error(ErrorKind::unsupported, refusal::kUnsupportedCameraModel,
                          "sensor " + detail::quoted(s.name) + " has camera_model " +
                              std::to_string(static_cast<unsigned>(s.camera_model)) +
                              ", which this build does not implement; it is left uncorrected");
    return ok_status();
}

// Ideal normalized (x, y) to distorted normalized coordinates, in the registry's coefficient
// order. The parser has checked the coefficient count against the model (M056).
std::array<double, 2> distort(const SensorCalibration& s, double x, double y) {
    const std::vector<double>& k = s.distortion;
    if (s.camera_model == CameraModel::brown_conrady && k.size() >= 5) {
        const double r2 = x * x + y * y, r4 = r2 * r2, r6 = r4 * r2;
        double radial = 1 + k[0] * r2 + k[1] * r4 + k[4] * r6;
        if (k.size() == 8) radial /= 1 + k[5] * r2 + k[6] * r4 + k[7] * r6;
        return {x * radial + 2 * k[2] * x * y + k[3] * (r2 + 2 * x * x),
                y * radial + k[2] * (r2 + 2 * y * y) + 2 * k[3] * x * y};
    }
    if (s.camera_model == CameraModel::kannala_brandt && k.size() == 4) {
        const double r = std::sqrt(x * x + y * y);
        if (r < 1e-15) return {x, y};
        const double th = std::atan(r), t2 = th * th;
        const double thd = th * (1 + t2 * (k[0] + t2 * (k[1] + t2 * (k[2] + t2 * k[3]))));
        return {x * thd / r, y * thd / r};
    }
    return {x, y};  // pinhole
}

}  // namespace

Result<std::array<double, 2>> project(const SensorCalibration& sensor, double x, double y) {
    FOURDGS_TRY(check_camera(sensor));
    const auto d = distort(sensor, x, y);
    return std::array<double, 2>{sensor.fx * d[0] + sensor.cx, sensor.fy * d[1] + sensor.cy};
}

Result<std::array<double, 2>> unproject(const SensorCalibration& sensor, double u, double v) {
    FOURDGS_TRY(check_camera(sensor));
    const double xd = (u - sensor.cx) / sensor.fx, yd = (v - sensor.cy) / sensor.fy;
    // Newton on distort(x, y) = (xd, yd) with a numerical Jacobian: one loop for every model,
    // and it converges in a handful of steps for any calibration a real lens produces.
    double x = xd, y = yd;
    for (int it = 0; it < 50; ++it) {
        const auto f = distort(sensor, x, y);
        const double ex = f[0] - xd, ey = f[1] - yd;
        if (std::abs(ex) + std::abs(ey) < 1e-14) break;
        const double h = 1e-7;
        const auto fx = distort(sensor, x + h, y), fy = distort(sensor, x, y + h);
        const double a = (fx[0] - f[0]) / h, b = (fy[0] - f[0]) / h;
        const double c = (fx[1] - f[1]) / h, d = (fy[1] - f[1]) / h;
        const double det = a * d - b * c;
        if (!(std::abs(det) > 1e-300)) break;
        x -= (d * ex - b * ey) / det;
        y -= (a * ey - c * ex) / det;
    }
    return std::array<double, 2>{x, y};
}

// ---------------------------------------------------------------------------------------------
// Objects (§5.15.6, §5.15.7, §6.6).

const ObjectTrack* find_object_track(const SceneInfo& scene, std::uint32_t object_id) {
    if (object_id == 0) return nullptr;  // 0 is background: never tracked
    for (const ObjectTrack& t : scene.object_tracks)
        if (t.object_id == object_id && !t.samples.empty()) return &t;
    return nullptr;
}

std::optional<Pose> object_pose_at(const SceneInfo& scene, std::uint32_t object_id, double t) {
    const ObjectTrack* track = find_object_track(scene, object_id);
    if (!track) return std::nullopt;
    return sample_trajectory(track->samples, track->interpolation, t);
}

std::vector<std::size_t> gaussians_of_object(const GaussianBlock& block, std::uint32_t object_id,
                                             double t, double cutoff) {
    std::vector<std::size_t> out;
    // A block without the stream is all background (§6.6).
    if (block.object_id.empty() && object_id != 0) return out;
    for (std::size_t i = 0; i < block.count; ++i) {
        const std::uint32_t id = block.object_id.empty() ? 0 : block.object_id[i];
        if (id == object_id && is_visible(block.win_lo[i], block.win_hi[i], block.mu_t[i],
                                          block.sigma_t[i], t, cutoff, nullptr))
            out.push_back(i);
    }
    return out;
}

Result<std::vector<ObjectMatch>> objects_by_embedding(const ObjectTable& table,
                                                      std::span<const float> query,
                                                      std::size_t k) {
    if (table.embedding_dim == 0)
        return make_error(ErrorKind::invalid_argument, refusal::kNoEmbeddingSpace,
                          "the Object Table declares no embedding space (embedding_dim 0)");
    if (query.size() != table.embedding_dim)
        return make_error(ErrorKind::invalid_argument, refusal::kEmbeddingDimensionMismatch,
                          "the query has " + std::to_string(query.size()) +
                              " components; the table's embedding_dim is " +
                              std::to_string(table.embedding_dim));
    double qq = 0;
    for (float q : query) qq += double(q) * q;
    if (!std::isfinite(qq))
        return make_error(ErrorKind::invalid_argument, refusal::kNonFiniteQuery,
                          "the query vector has a non-finite component");
    if (!(qq > 0))
        return make_error(ErrorKind::invalid_argument, refusal::kZeroQuery,
                          "the query vector is zero; cosine similarity is undefined for it");
    std::vector<ObjectMatch> matches;
    for (const ObjectTable::Entry& e : table.entries) {
        if (!e.embedding || e.embedding->size() != query.size()) continue;
        double dot = 0, ee = 0;
        for (std::size_t c = 0; c < query.size(); ++c) {
            dot += double(query[c]) * (*e.embedding)[c];
            ee += double((*e.embedding)[c]) * (*e.embedding)[c];
        }
        if (!(ee > 0)) continue;  // a zero embedding points nowhere
        matches.push_back({e.object_id, std::clamp(dot / std::sqrt(qq * ee), -1.0, 1.0)});
    }
    std::sort(matches.begin(), matches.end(), [](const ObjectMatch& a, const ObjectMatch& b) {
        return a.similarity != b.similarity ? a.similarity > b.similarity
                                            : a.object_id < b.object_id;
    });
    if (matches.size() > k) matches.resize(k);
    return matches;
}

}  // namespace fourdgs
