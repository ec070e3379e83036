// fourdgs/extras.hpp — what the scene's extras mean: audio state (§7), the camera path (§5.10),
// capture provenance (§5.15.2–§5.15.5) and objects (§5.15.6, §5.15.7, §6.6).
//
// The record layer (records.hpp) parses each record and enforces the rules local to it; the
// rules that span records are check_scene_references() below, which both readers run before
// the first chunk and the validator runs over the whole file. Everything here is a pure
// function of a SceneInfo (and, for object queries, decoded gaussians).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/pose.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"

namespace fourdgs {

// ---------------------------------------------------------------------------------------------
// Rules that span records (§5.15.2–§5.15.7, §5.16, §5.17, §7).
//
// Each violation is passed to `report` (with its refusal identifier and, where known, the offset
// of the record); `report` returns false to stop at that one. `record_offsets`, when given,
// holds the offset of each provenance/audio record in the order SceneInfo stores them (readers
// pass them so messages carry offsets). Checked:
//   duplicate-coordinate-frame (M039), duplicate-sensor-name (M049), missing-rig-trajectory
//   (M051, naming the trajectory; a zero-sample trajectory does not resolve, M061),
//   missing-anchor-frame (M063), duplicate-geodetic-anchor (M066), keyframe-time-out-of-range
//   (M088, against Header.duration_sec), audio-flag-mismatch (Header flags bit 0 exactly when
//   audio exists, §7), unmatched-audio-source (M090).
// Duplicate audio ids, unmatched Audio Data, mixed legacy/pairs, the second Object Table and
// duplicate tracks are refused by SceneBuilder as the records arrive.
struct RecordOffsets {
    std::vector<std::uint64_t> coordinate_frames, sensors, rig_trajectories, geodetic_anchors,
        audio;
    // The other records a SceneBuilder keeps (front_matter.hpp), for tools that report by offset.
    std::uint64_t header = kNoOffset, quantization = kNoOffset, window_table = kNoOffset,
                  statistics = kNoOffset;
    std::vector<std::uint64_t> metadata, index, summary_offsets;
};
void check_scene_references(const SceneInfo& scene, const RecordOffsets* offsets,
                            const ReportFn& report);
// The first violation, as a Status (what the readers use).
Status check_scene_references(const SceneInfo& scene, const RecordOffsets* offsets = nullptr);

// ---------------------------------------------------------------------------------------------
// Audio (§7).

struct AudioState {
    bool active = false;     // t >= start AND (loop OR t < start + duration)
    double local_time = 0;   // loop ? elapsed mod duration : min(elapsed, duration)
    double gain = 1;
    Pose pose;               // scene-space position (translation) and normalized rotation
};

// §7.1 and §7.2 for one source at scene time t.
AudioState audio_state_at(const AudioSource& source, double t);
// By source_id among the scene's sources; nullopt when no such source.
std::optional<AudioState> audio_state_at(const SceneInfo& scene, std::uint32_t source_id,
                                         double t);

// ---------------------------------------------------------------------------------------------
// Camera (§5.10): the default view, or the keyed path at t. `linear` lerps position and target;
// `spline` is a uniform Catmull-Rom through the keyframes (end keys duplicated). With `loop`, t
// wraps over [first key, last key); otherwise it clamps to the end keys.
struct CameraView {
    Vec3 position{}, target{};
    double fov_y_deg = 0;
};
CameraView camera_at(const Camera& camera, double t);

// ---------------------------------------------------------------------------------------------
// Provenance (§5.15.2–§5.15.5).

// The scene frame's description, with its source: the Coordinate Frame record named "" when
// there is one (it wins in whole over the coordinate_system metadata key, M046), else the key's
// string as written, else nothing.
struct SceneFrame {
    const CoordinateFrame* record = nullptr;   // the "" frame record, when present
    std::optional<std::string> coordinate_system;  // the metadata key, only when no record
    // metres_per_unit is the authority when it disagrees with length_unit (§5.15.2, M045):
    // 0 = unknown.
    double metres_per_unit() const { return record ? record->metres_per_unit : 0.0; }
};
SceneFrame scene_frame(const SceneInfo& scene);

// The rig trajectory of that name with at least one sample (M061), or nullptr.
const RigTrajectory* find_rig_trajectory(const SceneInfo& scene, std::string_view name);
const SensorCalibration* find_sensor(const SceneInfo& scene, std::string_view name);

// The sensor's pose in the scene frame at t (§5.15.3): the extrinsic for pose_reference 0,
// rig(t) ∘ extrinsic for 1. Refusals: unknown-sensor (invalid_argument), missing-rig-trajectory.
Result<Pose> sensor_pose_at(const SceneInfo& scene, std::string_view sensor_name, double t);

// Whether this library can undistort a sensor's model (M057): pinhole (nothing to undo),
// brown-conrady (5 or 8 coefficients, OpenCV's radial-tangential and rational forms) and
// kannala-brandt (OpenCV's fisheye). A model it does not implement is reported uncorrected,
// never partially applied.
bool can_undistort(const SensorCalibration& sensor);

// The sensor's intrinsics, both ways. `project` maps an ideal normalized image point (x, y) =
// (X/Z, Y/Z) in the sensor frame to a pixel, applying the distortion; `unproject` inverts it
// (iteratively, to ~1e-12 in normalized units). Refusals: not-a-camera (camera_model 0,
// invalid_argument), unsupported-camera-model (a model byte this build does not implement).
Result<std::array<double, 2>> project(const SensorCalibration& sensor, double x, double y);
Result<std::array<double, 2>> unproject(const SensorCalibration& sensor, double u, double v);

// ---------------------------------------------------------------------------------------------
// Objects (§5.15.6, §5.15.7, §6.6).

// The track for a non-zero object id with at least one sample, or nullptr.
const ObjectTrack* find_object_track(const SceneInfo& scene, std::uint32_t object_id);
// The object's rigid pose at t, or nullopt when it has no track.
std::optional<Pose> object_pose_at(const SceneInfo& scene, std::uint32_t object_id, double t);

// Indices into `block` of the gaussians with this object_id visible at t (§3 window and cutoff).
std::vector<std::size_t> gaussians_of_object(const GaussianBlock& block, std::uint32_t object_id,
                                             double t, double cutoff);

struct ObjectMatch {
    std::uint32_t object_id = 0;
    double similarity = 0;  // cosine, in [-1, 1]
};
// The `k` table entries whose embeddings are most cosine-similar to `query`, best first (ties
// by ascending object_id); entries without an embedding, or with a zero one, are skipped.
// Refusals (invalid_argument): no-embedding-space (embedding_dim 0), embedding-dimension-mismatch
// (query size != embedding_dim), zero-query, non-finite-query.
Result<std::vector<ObjectMatch>> objects_by_embedding(const ObjectTable& table,
                                                      std::span<const float> query,
                                                      std::size_t k);

}  // namespace fourdgs
