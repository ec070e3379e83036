// fourdgs/tools/convert.hpp — other representations in and out (§12): a sequence of 3DGS PLY
// frames becomes a scene, and the state of a scene at an instant becomes a PLY. Part of the
// tools library (fourdgs::tools).
//
// Frame sequence → scene. Frame i holds the gaussians of [i / fps, (i + 1) / fps); the scene's
// duration is frames / fps. Three shapes:
//   per_frame       §12's import, correct for any sequence: a gaussian-birth file with one
//                   validity window per frame, zero velocity, never fading (flags bit 0, the
//                   `box` visibility profile). Nothing is assumed about correspondence.
//   keyframe_delta  for tracked frames (every frame holds the same gaussians in the same order):
//                   gaussian i keeps id i across frames, written by keyframe_writer.hpp as
//                   keyframes every `keyframe_every` frames and deltas between them.
//   adaptive        for tracked frames: §12's adaptive temporal sampling into gaussian-birth.
//                   Each gaussian's frame range is bisected only where the straight line between
//                   the range's first and last positions misses an intermediate frame by more
//                   than the fit tolerance, or where another attribute leaves its tolerance of
//                   the range's first frame; a gaussian that does not move is one record for the
//                   whole clip. Each record is never fading over its range, positioned at the
//                   first frame with the fitted velocity. Ranges come from bisection, so the
//                   Window Table stays small (at most 2 x frames - 1 windows).
//
// Rigid parts (tracked shapes, no plan, ConvertOptions::rigid_parts). find_rigid_parts
// (rigid.hpp) finds the groups that follow one pose per frame; each group j becomes object j + 1:
// its gaussians carry object_id j + 1 and hold their frame-0 position and rotation in every frame
// (so the temporal model sees them still: one adaptive record, no keyframe-delta update), and an
// Object Track with one sample per frame (step interpolation, time k / fps) moves them, which
// every reader composes after the base state (§3, §6.6); the Object Table names it "rigid part
// j + 1" with its frame-0 centroid as anchor. A gaussian joins a part only when its fit residual
// at every frame is within what a quarter-of-B grid leaves after the rotated quantization error
// (rigid_residuals); the grid then takes that quarter of pos and rot (adaptive), or, for
// keyframe-delta, what the parts found leave of B (parts_share, grid_plan.hpp: their measured
// residuals and the poses' own turn), so every frame still reconstructs within B. Static
// gaussians and the rest (other) stay as they are.
// A part may also hold riders (rigid.hpp): gaussians its pose carries only to within their own
// drift; the temporal model gets a rider's position in the object frame at every frame and its
// rotation held there, so it carries the drift alone (docs/cli.md "--tracked").
//
// Never larger. A tracked shape without a plan is also encoded per frame, and the smaller of the
// two is written (ConvertReport::shape says which). The per-frame encoding is counted whole
// (per_frame_whole), or only until it passes the tracked file's size, which settles the choice
// (ConvertReport::per_frame_partial); either way the same file is written.
//
// Ids. keyframe-delta ids (no plan) follow the Morton order of frame 0's positions, so a chunk's
// rows and an update group's ids run through space: neighbours are adjacent, id deltas small.
// Each delta references the GOP keyframe or the previous frame, whichever encodes smaller
// (cheaper_reference; ties chained): at effort max both are encoded and the smaller kept; at fast
// and default the smaller is estimated first and only it is encoded unless the two estimates are
// within kReferenceEstimateMargin (ConvertOptions::reference_choice).
//
// Error budget. The tolerance B (ConvertOptions::tolerance, else the preset's,
// preset_tolerance) is what every frame time reconstructs within, per attribute. The grid is the
// coarsest that meets it (size_grid, grid_plan.hpp): its declared Quantization bounds are within
// B per frame and keyframe-delta (the writers verify every attribute against them). An adaptive
// file spends B as: for position, B/4 on quantization, B/2 on the line fit, B/8 on velocity and
// B/8 on mu_t quantization (their steps are narrowed to fit); for scale, rotation, rgb and
// opacity, B/2 on the fit and B/2 on quantization. Where rigid parts keep riders (stored in
// their part's frame, which the tracks turn: an error of e per component there is up to g x e
// in the scene, g <= √3 the poses' largest rotation-row 1-norm), a rider's line fit is measured
// in the scene's frame and the quantization, velocity and mu_t shares are divided by g
// (parts_share, grid_plan.hpp). The bounds B a file meets end to end are
// recorded in a Metadata record named "4dgs-convert" (keys tolerance.pos, tolerance.scale_rel,
// tolerance.rot, tolerance.rgb, tolerance.alpha, plus source_frames and fps), for every shape.
//
// On a grid plan (ConvertOptions::plan, grid_plan.hpp) the file takes the plan's grid, clock,
// shape, tolerance, keyframe places and segments, whatever slice [first_frame, end_frame) of the
// plan's frames it holds: a shard of a scene encoded in parts, for merge (merge.hpp). The slice
// starts and ends on GridPlan::alignment(); per frame, its windows are the whole sequence's frame
// times; adaptive records never span a multiple of segment_frames; keyframe-delta keyframes fall
// on the multiples of keyframe_every, a shard's empty keyframes fill [0, first) and [end,
// duration) (§11.1: state chunks tile the clock), and each GOP's gaussians take ids of their own
// (g × gaussians_per_frame + r for gaussian i of GOP g, r its rank in the Morton order of the
// GOP's first frame; a gaussian whose SH bytes change within a GOP is a new incarnation with an
// id past every GOP's range), so no id of one shard is reused in another. A shard also carries a
// Metadata record "4dgs-shard" (first_frame, end_frame, frames, t0, t1, shard_format =
// kShardFormat, merge.hpp), and every file on a plan names it in "4dgs-convert" (key plan: its
// plan_digest). The plan's rigid parts (grid_plan.hpp) are stored as it says: members held at
// their part's reference (the span's first frame, which load_frame supplies to convert_frames
// when it lies before the slice), a rigid part as its object with a track sample per frame of
// the slice, and, adaptive, each member one record over its part's whole span, written by the
// file holding the span's first frame. The shards of one plan, merged, are byte for byte what
// convert of all the frames on the same plan writes.
//
// Memory on a plan: the slice is encoded a block at a time — runs of the plan's alignment of
// about 2^20 gaussians (at least one run), cut where a part begins or ends — each block into a
// file of its own (convert_ply_files: beside the output; convert_frames: in memory), and the
// blocks are joined by merge_scenes (merge.hpp), so convert_ply_files holds one block's frames
// (and the references of the parts it is inside), never the slice's.
//
// Keyframes and seek points (keyframe-delta without a plan, keyframe_every 0). A keyframe
// restates every gaussian, the static ones included; a keyframe-referenced delta (§11.4,
// delta_mode 0) restates only the gaussians whose bins differ from the keyframe's. On a capture
// where some gaussians stay put, a keyframe each second pays for the still ones again each
// second. So where at most three quarters of the gaussians ever leave frame 0's placement
// (position or rotation beyond the tolerance; a rigid part's strict members, stored still in
// its object's frame, do not count), the sequence gets one keyframe, and each second's first
// frame is a keyframe-referenced delta, the chained deltas of that second following it: a seek
// composes the keyframe, that delta and at most a second of chained deltas — one record more than
// a keyframe each second, never a longer chain, and at most about 1.75 keyframes' worth of
// gaussians where a keyframe each second would decode one. Where more move, the delta would
// restate nearly a keyframe and double a seek's work for little: a keyframe each second.
//
// Memory without a plan. convert_frame_source (and convert_ply_files) of a tracked keyframe-delta
// conversion reads the frames again for each pass instead of holding them: a first pass checks
// them and finds the aabb and the static gaussians, the rigid-part search reads the moving
// gaussians' positions and rotations (when there are enough to make a part: a sample of frames,
// then two more passes; find_rigid_parts_streamed, rigid.hpp), the
// keyframe-delta writer reads them twice (KeyframeStepSource: scan, then build each state once),
// the per-frame encoding it must not be larger than is counted through a StreamingWriter, each
// part alone (part_bytes) is one more encode, and the error frames are read once more. What is
// held is frame 0, one frame, the writer's states, the rigid search's sample of the moving
// positions and rotations, and the encoded file — not the sequence; the file and the report are
// those convert_frames writes for the same frames, but where the parts of more than
// kRigidSampleFrames frames differ (convert_frames searches every frame it holds). The other
// shapes hold every frame.
//
// Input colour outside [0, 1] (trainers' DC terms leave it) is clamped, and counted in the
// report; SH coefficients are clamped to [-4, 4] by the writer (§6.5).
//
// Refusals (invalid_argument unless noted): no-frames, invalid-option (fps not finite and > 0,
// a frame too many for the timeline, a slice without a plan, outside the plan,
// of another length than the frames given or off the plan's alignment), frames-not-tracked
// (naming the first frame whose count or SH degree differs from frame 0's, for keyframe_delta and
// adaptive), sh-degree-mismatch (per_frame frames of different SH degrees), outside-plan (a frame
// whose SH degree, count, positions or, adaptive, speed the plan was not made for, or where a
// member of a planned part leaves it — or, adaptive, changes its appearance past half the
// tolerance — naming frame, gaussian and value or part), limit-exceeded (keyframe-delta ids of a
// plan that do not fit u32), the
// grid sizing's invalid-option, then the writers' refusals naming the gaussian. The file variant
// also refuses io-error; it writes to a temporary name beside the output and renames it into place
// only after the whole file is written, so a refusal leaves nothing partial behind.
//
// Scene → PLY. extract_state opens the scene once with open_scene (open_scene.hpp: the
// front-end its temporal model needs, on a random-access source or a stream), reconstructs the
// visible state at t (§3, object tracks composed) and returns it as a PlyCloud.
//
// Thread safety: every function is reentrant; `progress` is called on the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/tools/compare.hpp"
#include "fourdgs/tools/grid_plan.hpp"
#include "fourdgs/tools/ply.hpp"
#include "fourdgs/reconstruct.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/writer.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

struct ConvertOptions {
    double fps = 30;
    ConvertShape shape = ConvertShape::per_frame;
    // preset (the tolerance when `tolerance` is not set), codec, SH ladder, chunking; its `bounds`
    // and `grid` are replaced by the grid sized to the tolerance.
    WriterOptions writer;
    std::optional<QuantBounds> tolerance;  // the end-to-end tolerance; replaces the preset's
    // keyframe_delta: a keyframe every K frames. 0 = chosen per sequence (without a plan): where
    // at most 3/4 of the gaussians ever leave their frame-0 placement by more than the tolerance,
    // one keyframe for the sequence and a keyframe-referenced delta each second (gop_frames) as
    // the place a seek starts from (see "Keyframes and seek points" above); elsewhere, and on a
    // plan without keyframe_every, a keyframe each second.
    std::uint32_t keyframe_every = 0;
    // keyframe_delta: each delta references whichever of the GOP keyframe and the previous frame
    // makes it smaller (KeyframeWriterOptions::cheaper_reference); false: every delta chained.
    bool cheaper_reference = true;
    // How cheaper_reference finds the smaller (KeyframeWriterOptions::reference_choice); unset:
    // by estimate, except at effort max, which encodes both references and keeps the smaller.
    std::optional<ModeChoice> reference_choice;
    // A grid plan: its grid, clock, shape, tolerance, SH depths, keyframe_every and segments
    // replace fps, shape, tolerance, the preset, the writer's SH depths and keyframe_every above.
    std::optional<GridPlan> plan;
    // With a plan: the slice of its frames this file holds, [first_frame, end_frame) (end_frame
    // 0: to the plan's last frame). convert_frames is given exactly those frames;
    // convert_ply_files the whole sequence's paths, of which it reads the slice.
    std::uint64_t first_frame = 0, end_frame = 0;
    // convert_frames on a plan whose parts begin before the slice: frame `frame` of the sequence
    // (a part's reference, see grid_plan.hpp). convert_ply_files reads it from its path.
    std::function<Result<PlyCloud>(std::uint64_t frame)> load_frame;
    // On a plan: a block of frames holds about this many gaussians (at least one run of the
    // plan's alignment; see "Memory on a plan"). Smaller holds less at once and merges more
    // blocks; the file is the same whatever it is.
    std::uint64_t block_gaussians = std::uint64_t{1} << 20;
    std::string title;                 // "" = none; else a `title` metadata entry
    // The registry's `coordinate_system` key (handedness, up axis; PLY files carry none), written
    // to the Header attributes when not "" (§2: producers SHOULD record one).
    std::string coordinate_system;
    // Tracked shapes without a plan: store the rigid parts found (rigid.hpp) once in their object
    // frame, each an Object Table entry and an Object Track (see "Rigid parts" above).
    bool rigid_parts = true;
    std::size_t rigid_min_members = 64;  // a smaller rigid group stays with the temporal model
    // Tracked shapes without a plan: also encode per frame and write that when it is smaller.
    bool never_larger_than_per_frame = true;
    // never_larger_than_per_frame: count the per-frame encoding to its end, for the report's
    // per_frame_bytes. false: count it only until it passes the tracked file's size, which is all
    // the choice needs (usually a few frames' worth: ConvertReport::per_frame_partial).
    bool per_frame_whole = true;
    // Also encode each part (static, every rigid part, other) alone, for the report's bytes.
    bool part_bytes = false;
    // Measure the file against its input (ConvertReport::error) at this many frames spread evenly
    // over the ones converted, first and last included (every frame when there are fewer); 0:
    // not measured. Each is decoded at its frame time and compared (compare.hpp, matched by
    // position) with the input frame as the writer takes it: colour and opacity clamped to
    // [0, 1], SH coefficients to [-4, 4].
    std::size_t error_frames = 0;
    // Called with (step, steps) as frames are loaded or gaussians fitted; may be empty.
    std::function<void(std::uint64_t, std::uint64_t)> progress;
    // Rotation bounded in the input's own 8-bit levels (a .splat's round(128 q + 128) bytes, read
    // as v = (b - 128) / 128): every decoded rotation q, normalized, is within N levels of the
    // input's bytes, up to sign — |128 q_c + 128 - b_c| <= N + 1/2 on every component (a byte
    // 255 only from below), so 0 decodes back to the input's bytes. Replaces the tolerance's rot
    // (the report's tolerance.rot is (N + 1/2) / 128 less 2e-6, an allowance for a reader's f32);
    // recorded as tolerance.rot_levels in "4dgs-convert". keyframe_delta without a plan only, the
    // per-frame comparison off (it measures against the normalized input), which is
    // invalid-option otherwise; the rigid-part search measures its riders in the boxes there
    // (each holds one rotation a window at a time whose turns by its part's poses lie within
    // N + 1/2 levels at every frame; only gaussians the poses carry within the position residual
    // ride, and no part keeps members: rigid.hpp's RotationLevels); a frame whose rotations are not all 8-bit
    // levels (a PLY sequence) is invalid-option, naming the frame, gaussian, value and the key.
    std::optional<std::uint32_t> rot_levels;
    // rot_levels for a .splat whose writer truncated, b = floor(128 q + 128) clipped to 0..255
    // (numpy's astype(uint8)), instead of rounding: N levels are then b - N <= 128 q_c + 128 <
    // b + 1 + N (a byte 255 only from below), so 0 decodes back to the input's bytes under such a
    // writer. Recorded as tolerance.rot_rounding = floor in "4dgs-convert" (absent: nearest).
    // Without rot_levels it is invalid-option.
    bool rot_levels_floor = false;
};

struct ConvertReport {
    std::size_t frames = 0;
    std::uint64_t input_gaussians = 0;  // summed over frames
    std::uint64_t records = 0;          // gaussian records written (adaptive: spans)
    std::uint64_t input_bytes = 0;      // the PLY files read (file variant only)
    std::uint64_t output_bytes = 0;
    std::uint32_t chunks = 0;
    std::uint32_t deltas = 0, keyframe_referenced = 0;  // keyframe_delta: its delta chunks
    std::uint64_t clamped_colors = 0;   // colour components clamped into [0, 1]
    QuantBounds tolerance;              // the end-to-end bounds B the file meets (see above)
    Quantization quantization;          // as written
    // What was written: the shape asked for, or per_frame when that encoding was smaller.
    ConvertShape shape = ConvertShape::per_frame;
    std::uint64_t per_frame_bytes = 0;  // the per-frame encoding compared against (0: none)
    // per_frame_bytes is only what was counted before the per-frame encoding passed the file
    // written (ConvertOptions::per_frame_whole false): that encoding is larger than both.
    bool per_frame_partial = false;
    // Tracked shapes: what the sequence holds, per frame (rigid.hpp). `bytes` are each part's
    // encoding alone (ConvertOptions::part_bytes; 0 otherwise): the parts share the file's records
    // and chunks, so they sum to about, not exactly, output_bytes.
    struct Part {
        std::uint32_t object_id = 0;  // 0: not an object
        std::uint64_t gaussians = 0, bytes = 0;
    };
    bool parts_sought = false;
    Part static_part, other_part;
    std::vector<Part> objects;
    // The decoded file against its input (ConvertOptions::error_frames): per attribute, the
    // largest error, the RMS and the largest per-frame p99 over the frames measured.
    std::vector<std::uint64_t> error_frames;  // the frames measured
    std::vector<AttributeError> error;
};

// Natural order of file names ("frame2" < "frame10"): digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b);

// The frame files named by `inputs`: each a file, or a directory whose *.ply and *.splat files
// are taken; every group sorted naturally. Refusal io-error for a path that does not exist.
Result<std::vector<std::string>> list_ply_frames(std::span<const std::string> inputs);

// Converts frames already in memory, writing the file to `sink`. With a plan, `frames` are the
// slice's frames, first_frame first.
Status convert_frames(std::span<const PlyCloud> frames, const ConvertOptions& options,
                      ByteSink& sink, ConvertReport* report = nullptr);

// A frame sequence read one frame at a time: `frames` frames, frame i from read(i) (so a shard
// reads only its slice); `input_bytes(i)` is what reading it took, for the report (may be empty).
// With `concurrent_reads`, read may be called from two threads at once (writer.threads above 1
// then encodes the report's part sizes and the per-frame size beside the file: the same bytes).
struct FrameSource {
    std::uint64_t frames = 0;
    std::function<Result<PlyCloud>(std::uint64_t frame)> read;
    std::function<std::uint64_t(std::uint64_t frame)> input_bytes;
    bool concurrent_reads = false;
    // Optional: frame `frame` into `into`, reusing its storage (the same cloud `read` returns).
    // Passes that read every frame in turn call it with one cloud, so a frame takes no fresh
    // memory; where it is empty they call `read`.
    std::function<Status(std::uint64_t frame, PlyCloud& into)> read_into;
    // Optional: frame `frame`'s count, positions and rotations into `into` (its other columns
    // may be left as they were), for the passes that read nothing else (the rigid parts' search,
    // the extent of the tracked view); where it is empty they call read_into or `read`.
    std::function<Status(std::uint64_t frame, PlyCloud& into)> read_motion_into;
};

// Converts the frames of `source` as convert_ply_files converts its files (below), writing
// `output` atomically.
Status convert_frame_source(const FrameSource& source, const std::string& output,
                            const ConvertOptions& options, ConvertReport* report = nullptr);

// Reads the frame files (PLY, or .splat: read_frame_file, splat_formats.hpp) in the order given (with a plan: the whole sequence's paths, of which only
// the slice is read; a count other than the plan's frames is invalid-option), converts them and
// writes `output` atomically (a temporary file beside it, renamed over it at the end; removed on
// any failure).
Status convert_ply_files(std::span<const std::string> paths, const std::string& output,
                         const ConvertOptions& options, ConvertReport* report = nullptr);

struct ExtractOptions {
    int max_sh_degree = 3;     // SH degree of the output, capped by the file's
    bool object_tracks = true; // compose the scene's Object Tracks (§3)
};

// The visible state of the scene in `source` at time t, reconstructed into `frame` (§3, object
// tracks composed when asked), and the scene it came from into `scene`. Refusals: invalid-argument
// time-out-of-range when t is not finite or outside [0, duration), plus the reader refusals.
Status evaluate_scene_at(ByteSource& source, double t, const ExtractOptions& options,
                         SceneInfo& scene, Frame& frame);

// The same state as a PlyCloud (ply_from_frame).
Result<PlyCloud> extract_state(ByteSource& source, double t, const ExtractOptions& options = {});

}  // namespace fourdgs
FOURDGS_PUBLIC_END
