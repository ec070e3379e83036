// fourdgs/tools/grid_plan.hpp — one quantization grid for a whole frame sequence, decided once
// and written to a small file, so that slices of the sequence encoded on different machines land
// on the same grid (and the same clock, shape and keyframe places) and can be joined by merge
// (merge.hpp) without re-encoding. Part of the tools library (fourdgs::tools).
//
// Grid sizing. A tolerance is what the user asks for: per attribute, how far a decoded frame may
// stray from its input (QuantBounds keys; `motion` at §6.3 class 0). size_grid() turns it into the
// coarsest grid that meets it: the part of the tolerance the shape leaves to quantization
// (grid_tolerance: all of it per frame and keyframe-delta; a share for adaptive records, whose
// line fit takes the rest), then grid_for_tolerance (writer.hpp), whose declared bounds are each
// within that share. convert (convert.hpp) sizes its grid with the same function, so a plan and a
// single-process conversion of the same frames agree.
//
// The plan file is JSON, one object (see docs/cli.md "Grid plans" for an example):
//   format          "fourdgs-grid-plan"            version   2
//   scene           {frames, fps, duration_sec, sh_degree, gaussians_per_frame, aabb[6]}
//   encoding        {shape: "per-frame" | "adaptive" | "keyframe-delta", keyframe_every,
//                    segment_frames, max_speed, effort (optional: "fast" | "max"; absent =
//                    default)}
//   tolerance       {pos, scale_rel, rot, rgb, alpha, motion, time, sigma_rel}
//   grid            {scheme: "uniform-v1", pos_origin[3], reach, step_pos, step_scale_log,
//                    step_rot, step_rgb, step_alpha, step_motion, step_time, step_sigma_log,
//                    sh_depths[] (empty: none declared)}
//   declared_bounds {pos, scale_rel, rot, rgb, alpha, motion, time, sigma_rel}
//   parts           [{kind: "static" | "rigid", object_id, frames: [first, end], anchor[3],
//                     members: "a-b,c-d,..." (ascending runs of gaussian indices, b excluded)}]
//   digest          "fnv1a64:<16 hex digits>": FNV-1a 64 of the plan's text without this key
// Numbers are written in their shortest round-trip spelling, so reading a plan gives back the
// same doubles bit for bit, and the text written for a plan is a function of the plan alone.
// Reading refuses (malformed-plan, naming the file and the key) a file that is not such an
// object, a missing, unknown or mistyped key, a value out of range, declared_bounds that differ
// from what the grid declares or exceed the tolerance, and parts that overlap, lie off the
// plan's alignment or name gaussians past gaussians_per_frame; a plan of another version is
// malformed-plan too (make it again with this build). A plan whose content no longer matches its
// digest was edited by hand after `plan` wrote it and is refused as plan-edited: shards encoded
// on it could not be told from shards of the plan it was before (make the plan again).
//
// Rigid parts (PlanOptions::rigid_parts, tracked shapes). A plan finds the gaussians that stay
// still (static) or move as one body (rigid) with convert's own search (find_rigid_parts,
// rigid.hpp; the residuals of rigid_search_options), on its sample, and records each group with
// the frames it holds over, so that every shard stores the same objects: the group is held at its
// placement in the span's first frame (its reference), an Object Track with one sample per frame
// carries a rigid group (the Object Table lists every rigid part of the plan, "rigid part N" at
// its reference centroid), and, for adaptive records, each member is one record over the whole
// span, written by the shard that holds the span's first frame — a static floor or a rigid body
// costs its gaussians once, however many shards the sequence is cut into. The search runs over
// the whole sequence first, then, for what is left, over each half of it (on the plan's
// alignment), and so on while a half holds its first frame and two more frames of the sample, so
// a body rigid over only part of the clip is a part over that part. A few sampled frames can make
// a moving gaussian look still or rigid (a ripple near its crest), so a plan given the whole
// sequence (make_grid_plan's read_frame, plan_ply_files) then checks every part at every frame
// of its span, as a shard will, and drops the members that leave it. A shard checks every frame
// it encodes against the parts (outside-plan, naming frame, gaussian and part, where a member
// leaves its part — make the plan again with a larger sample, --sample 0 scans every frame).
//
// Thread safety: every function is reentrant.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/tools/ply.hpp"
#include "fourdgs/tools/rigid.hpp"
#include "fourdgs/writer.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// How a frame sequence becomes a scene (convert.hpp describes each).
enum class ConvertShape : std::uint8_t { per_frame, keyframe_delta, adaptive };

// "per-frame", "keyframe-delta", "adaptive"; and back (nullopt for anything else).
std::string_view to_string(ConvertShape shape);
std::optional<ConvertShape> parse_convert_shape(std::string_view name);

// The box around every position of every frame (min xyz, max xyz; all zero when there are none):
// a grid's origin is its centre, and a preset scales with its largest side.
std::array<double, 6> frames_aabb(std::span<const PlyCloud> frames);

// A preset's end-to-end tolerance for a scene whose largest side is `extent`: preset_bounds
// (writer.hpp) with `rot` widened to what the whole quaternion then meets (§6.4), which is what a
// preset has always delivered. What the presets look like on screen: docs/cli.md.
QuantBounds preset_tolerance(Preset preset, double extent);

// "pos=1e-3,rot=0.01": the named attributes (QuantBounds keys) replaced in `base`, the rest kept.
// Refusal invalid-option naming the first key or value that does not parse (the value must be a
// finite number; grid_for_tolerance judges its range).
Result<QuantBounds> parse_tolerance(std::string_view spec, QuantBounds base);

// The most of the position and rotation tolerance a grid may take in a file whose Object Tracks
// rotate what it stores (grid_tolerance): a rotated position error grows by up to sqrt(3) per
// component and a rotated quaternion error by up to 2, and the rest is the parts' fit residual.
// pos_gain: what the poses multiply the grid's, velocity's and mu_t's position errors of an
// adaptive rider, stored in its part's frame, by; 1 where none ride.
struct PartsShare {
    double pos = 0, rot = 0, pos_gain = 1;
    friend bool operator==(const PartsShare&, const PartsShare&) = default;
};

// A quarter of each, decided before any part is found, so that the parts a search then finds
// within rigid_residuals fit: what a plan takes (its shards must agree on the grid before they
// see their frames), and adaptive records (their line fit spends a share of what is rotated).
PartsShare quarter_share(const QuantBounds& tolerance);

// What the parts a conversion found leave, in a scene whose coordinates reach `reach`.
// Keyframe-delta: the widest share with which every member's measured residual and every rider's
// held rotation still fit within the tolerance beside the grid's error as the poses carry it
// (fit's gains, rigid.hpp) — pos (tolerance - the f32 allowance of rigid_residuals -
// fit.member_pos) / fit.pos_gain (a rider's position strays by nothing but its carried grid
// error), rot (tolerance - the larger of fit.member_rot and fit.rider_rot) / fit.rot_gain. The
// caller's search keeps the residuals below the tolerance. Adaptive: quarter_share where no part
// keeps riders; else the shares of position a rider spends in its part's frame (grid 1/4,
// velocity and mu_t 1/8 each) are divided by fit.rider_pos_gain, so that carried by the poses
// they stay within their half of the tolerance (its line fit's miss is measured in the scene's
// frame, convert_adaptive) — pos (tolerance/4 - the f32 allowance) / rider_pos_gain, rot a
// quarter (a rider's held rotation is measured as the pose carries it), pos_gain rider_pos_gain.
PartsShare parts_share(ConvertShape shape, const QuantBounds& tolerance, const PartsFit& fit,
                       double reach);

// Keyframe-delta's colour grid is this many times finer than the tolerance's (pitch 2/3 of it):
// a colour that wobbles within the tolerance keeps one bin of it through a GOP, and a still one
// takes every third bin, the bins of a grid of pitch twice the tolerance (convert_keyframe_delta's
// colour hold).
inline constexpr int kHeldColourLattice = 3;

// The share of an end-to-end tolerance `tolerance` that the quantization grid may take for `shape`:
// all of it per frame, and keyframe-delta but rgb (1/kHeldColourLattice of it). Adaptive records
// also spend it on their line fit: pos 1/4 (the fit takes 1/2, velocity and mu_t 1/8 each),
// scale_rel, rot, rgb and alpha 1/2; motion at class 0 such that a record `longest_moving_sec` long
// (or 0.5 s, whichever is longer, §6.3) drifts at most pos/8; time such that a record moving at
// `max_speed` drifts at most pos/8 (time/2 when that is coarser, or max_speed is 0). With `parts`
// (a file with rigid parts, convert.hpp), pos and rot take at most their share whatever the shape,
// and adaptive's motion and time are divided by its pos_gain (a rider's velocity and mu_t errors
// turn with its part).
QuantBounds grid_tolerance(ConvertShape shape, const QuantBounds& tolerance,
                           double longest_moving_sec, double max_speed,
                           const std::optional<PartsShare>& parts = std::nullopt);

// The fit residuals rigid parts may take within `tolerance` on a grid whose share is
// grid_tolerance(..., quarter_share(tolerance)): pos - sqrt(3) x the pos share, less an f32
// allowance for a reader composing the track (at coordinates up to `reach`), and rot - 2 x the
// rot share.
std::pair<double, double> rigid_residuals(const QuantBounds& tolerance, const QuantBounds& share,
                                          double reach);

// A group of gaussians that a plan found static or moving as one body over frames
// [first_frame, end_frame) of the sequence (see "Rigid parts" above).
struct PlannedPart {
    bool rigid = false;           // false: static (never moves; stored without an object)
    std::uint32_t object_id = 0;  // rigid: its object's id, 1, 2, ... in plan order; static: 0
    std::uint64_t first_frame = 0, end_frame = 0;  // on the plan's alignment
    std::array<float, 3> anchor{};  // rigid: the members' centroid in frame first_frame
    // Ascending, disjoint, non-adjacent runs [a, b) of gaussian indices.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> members;
    friend bool operator==(const PlannedPart&, const PlannedPart&) = default;
};

// What a plan says about a frame sequence and its encoding.
struct GridPlan {
    // The scene.
    std::uint64_t frames = 0;  // frame i covers [i / fps, (i + 1) / fps)
    double fps = 0;
    double duration_sec = 0;  // frames / fps: every shard's clock
    int sh_degree = 0;
    std::uint64_t gaussians_per_frame = 0;  // tracked shapes: every frame's count; 0 otherwise
    std::array<double, 6> aabb{};           // every position of every frame lies inside (checked)
    // The encoding.
    ConvertShape shape = ConvertShape::per_frame;
    std::uint32_t keyframe_every = 10;  // keyframe-delta: a keyframe at every multiple
    std::uint32_t segment_frames = 0;   // adaptive: no record spans a multiple; 0 = whole clip
    double max_speed = 0;               // adaptive: the fastest record the time step allows
    // The writer's effort (writer.hpp) every shard encodes at; the plan file names it only when
    // it is not the default ("encoding": {"effort": "max"}), and a plan without it reads as the
    // default.
    Effort effort = Effort::default_;
    // The tolerance asked for, end to end, and the grid that meets it.
    QuantBounds tolerance;
    FixedGrid grid;
    std::vector<std::uint8_t> sh_depths;  // per band 1..sh_degree, 3..8; empty: none declared
    // Tracked shapes: the rigid parts, in plan order (a gaussian in at most one part at a time).
    // With any part the grid is sized for rigid parts (grid_tolerance's quarter_share).
    std::vector<PlannedPart> parts;

    // A shard's first and end frame are multiples of this (the last shard may end at `frames`):
    // keyframe_every for keyframe-delta, segment_frames for adaptive (`frames` when 0), else 1.
    // Then every shard starts where a single encode of the whole sequence on this plan starts a
    // GOP or a segment, and the shards together decode to exactly what that encode does.
    std::uint64_t alignment() const;
};

// keyframe-delta's keyframe spacing when none is given (keyframe_every 0): one second of frames
// at `fps` (at least 1; 10 for an fps that is not finite and positive), splat4d's GOP. A
// keyframe restates every gaussian, static ones included, and a chained delta costs the same at
// any depth (§11.7), so a longer GOP is smaller; a second bounds the chain a seek walks.
std::uint32_t gop_frames(std::uint32_t keyframe_every, double fps);

struct PlanOptions {
    double fps = 30;
    ConvertShape shape = ConvertShape::per_frame;
    Preset preset = Preset::default_;
    std::optional<QuantBounds> tolerance;  // replaces the preset's tolerance when set
    // The scene's aabb when the caller knows it; otherwise it is scanned from the sample.
    std::optional<std::array<double, 6>> aabb;
    // Frames scanned: this many, spread evenly over the sequence (first and last included),
    // each with its successor for tracked shapes (to see their speed); 0 = every frame.
    std::size_t sample_frames = 8;
    // A scanned box is widened by this fraction of its largest side on every face, because the
    // frames not scanned may reach a little further (0 when every frame was scanned).
    double margin = 0.05;
    std::uint32_t keyframe_every = 0;  // keyframe-delta: 0 = one second of frames (gop_frames)
    std::uint32_t segment_frames = 30;
    // Adaptive: the fastest record the grid must hold, units per second; 0 = twice the fastest
    // motion between consecutive frames of the sample.
    double max_speed = 0;
    // SH bit depths, as WriterOptions (explicit depths win over the ladder).
    ShLadder sh_ladder = ShLadder::none;
    std::vector<std::uint8_t> sh_depths;
    // Tracked shapes: find rigid parts and record them (see "Rigid parts" above); a smaller
    // rigid group than rigid_min_members stays with the temporal model.
    bool rigid_parts = true;
    std::size_t rigid_min_members = 64;
    Effort effort = Effort::default_;  // recorded in the plan for its shards
};

// Which frames of a `frames`-long sequence a plan scans under `options` (sorted, distinct): the
// evenly spread sample, and, for rigid parts, the first frame of every span the part search
// visits (a span is searched when it holds two more frames of the spread sample).
std::vector<std::uint64_t> plan_sample(std::uint64_t frames, const PlanOptions& options);

// Frame `frame` of the sequence a plan is made for.
using PlanFrameReader = std::function<Result<PlyCloud>(std::uint64_t frame)>;

// Plans a `frames`-long sequence from `sample`, the frames plan_sample() named, in that order
// (`sample_index` their indices). sh_degree and, for tracked shapes, gaussians_per_frame come from
// the sample, which must agree on both (sh-degree-mismatch, frames-not-tracked). The aabb is
// options.aabb or the sample's box widened by `margin`; the rigid parts are searched on the
// sample (a span whose first frame the sample lacks is not searched) and, with `read_frame`,
// kept only as far as every frame of their spans holds them: the frames the sample lacks are read
// one at a time (one frame besides the sample in memory) and each part is checked as a shard
// checks it, dropping the members that stray and the parts left too small; without it, a part is
// only as sure as the sample. The grid is size_grid's, for rigid parts when any was kept.
// Refusals: no-frames, invalid-option (fps not finite and > 0, sample and indices of different
// lengths), size_grid's, read_frame's,
// and frames-not-tracked for a frame it reads of another count.
Result<GridPlan> make_grid_plan(std::uint64_t frames, std::span<const PlyCloud> sample,
                                std::span<const std::uint64_t> sample_index,
                                const PlanOptions& options, const PlanFrameReader& read_frame = {});

// Reads the frames plan_sample() names from `paths` (the whole sequence, in order) and plans it,
// its parts checked at every frame (make_grid_plan's read_frame). The PLY reader's refusals too.
Result<GridPlan> plan_ply_files(std::span<const std::string> paths, const PlanOptions& options);

// The coarsest grid for a plan's shape, tolerance, aabb, clock and (adaptive) segment and speed:
// grid_for_tolerance(grid_tolerance(...)), except that an adaptive birth-time grid stops at twice
// the finest f32 holds mu_t to over the clock; with `parts` (a file with rigid parts), at most
// their share. Refusals: grid_for_tolerance's.
Result<FixedGrid> size_grid(ConvertShape shape, const QuantBounds& tolerance,
                            const std::array<double, 6>& aabb, double duration_sec,
                            double longest_moving_sec, double max_speed,
                            const std::optional<PartsShare>& parts = std::nullopt);

// The residuals of a rigid-part search (rigid.hpp) for `shape` at end-to-end `tolerance` in a
// scene whose coordinates reach `reach`: rigid_residuals of the grid share for rigid parts. convert
// (no plan) and a plan search with the same, so both find the same parts in the same frames.
RigidOptions rigid_search_options(ConvertShape shape, const QuantBounds& tolerance, double reach,
                                  std::size_t min_members);

// The plan as the JSON text described above (deterministic; ends with a newline).
std::string grid_plan_json(const GridPlan& plan);

// The plan's digest, "fnv1a64:" and 16 hex digits: what its JSON text records. Files converted on
// the plan carry it (Metadata "4dgs-convert", key plan), so merge can tell shards of one plan.
std::string plan_digest(const GridPlan& plan);

// Parses a plan; `name` names it in refusals (malformed-plan, plan-edited).
Result<GridPlan> parse_grid_plan(std::string_view json, std::string_view name);

// The same through a file: io-error when it cannot be read or written. Writing goes through a
// temporary file renamed over `path`.
Result<GridPlan> read_grid_plan(const std::string& path);
Status write_grid_plan(const GridPlan& plan, const std::string& path);

// The plan's frames cut into at most `shards` slices [first, end) for shards to encode: in order,
// covering every frame, each starting and ending on the plan's alignment (the last may end at
// `frames`), as equal as the alignment allows. Fewer when the sequence has fewer aligned blocks;
// none when `shards` is 0.
std::vector<std::pair<std::uint64_t, std::uint64_t>> plan_slices(const GridPlan& plan,
                                                                 std::size_t shards);

// The WriterOptions fields a plan fixes: `grid`, the SH depths and the effort.
void apply_plan(const GridPlan& plan, WriterOptions& options);

}  // namespace fourdgs
FOURDGS_PUBLIC_END
