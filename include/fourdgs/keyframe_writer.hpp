// fourdgs/keyframe_writer.hpp — the keyframe-delta writer (§11, §5.18, §5.8): a sequence of
// states at time steps, each a set of gaussians with stable ids, written as keyframe chunks
// (Chunk records carrying gaussian_id) and Delta Chunk records whose updates are bin differences.
//
// The grid is one file-wide grid, fixed before the first state is quantized: the position origin
// is the centre of the aabb over every step's positions, the steps are the preset's (scaled by
// that aabb's largest side) or the explicit bounds (WriterOptions::preset / bounds). Each state
// is quantized to bins on it (§6, the same arithmetic as write_scene), and every delta is a
// difference of those bins against its reference state (§11.7): chained (the previous state) or
// keyframe-referenced (the GOP keyframe). Every emitted chunk is decoded back and composed with
// the readers' own ComposedPopulation, and the composed bins must equal the quantized state
// exactly (refusal `bound-violated`, kind limit, otherwise).
//
// The quantized state of step s (what every reader reconstructs over [t0_s, t1_s)):
//   * gaussian_id: the caller's id, for the first incarnation of that id. A gaussian whose
//     sigma_t bin, flags, window or SH bytes change (GOP-invariant, §11.5/§11.7), or whose id
//     disappears and comes back, is a death plus a birth: the new incarnation takes a fresh file
//     id, max(every caller id) + 1, + 2, ... in order of occurrence (limit-exceeded when that
//     passes 2^32 - 1). KeyframeWriteReport::states carries the file ids.
//   * window: the gaussian's own win_lo/win_hi when the batch supplies them (they must cover the
//     step's interval, refusal `window-does-not-cover-state`), else [0, duration).
//   * mu_t: when the batch supplies mu_t it is quantized as given. When mu_t is empty the writer
//     derives it (§11.3): a gaussian stated by a keyframe, born, or whose other bins change at
//     step s gets mu_t = t0_s; one whose bins do not change keeps the mu_t of the state that last
//     stated it (and so costs no bytes). Keyframe chunks then carry one constant mu_t per
//     birth-time class (a single constant stream when every gaussian shares a class).
//   * rotation is restated absolutely in an update (§11.5); object_id, source_group and
//     source_index travel as bin differences; a column is present in the file when any step
//     supplies it (a step without it contributes zeros).
//
// Schedule: step s is a keyframe when s % keyframe_every == 0 (keyframe_every = 1: every chunk is
// a keyframe — the frame-sequence shape, §11.11), or when keyframe_steps says so. Every other step
// is a delta: chained by default, keyframe-referenced when `chained` is false, and
// keyframe-referenced in any case when its interval contains one of `keyframe_referenced_at` (a
// shot cut, a loop start: that instant then costs two records however deep into the GOP it falls;
// chained deltas after it reference it; an instant inside a keyframe step changes nothing).
// With `cheaper_reference` (§11.4: "the choice is decided on cost") every other delta is encoded
// both ways and the smaller is written — keyframe-referenced only when its chunk and band records
// are strictly smaller, chained on a tie — and `chained` is not used. The choice is exact per
// delta (a chained delta's reference state is the same whatever its predecessor chose), so the
// file is never larger than the all-chained one; it wins where content comes back towards the
// keyframe (a loop, an oscillation) or where the previous step changed more than the GOP did. It
// costs two more delta encodings a step, and it is off by default so existing output is unchanged.
// With `reference_choice` estimate the two candidates are first estimated without a codec — each
// stream the delta would write (its updates' ids and differences, its births', its deaths' ids)
// at its order-0 residual entropy, as ModeChoice::estimate sizes a stream (estimate_modes) — and
// only the one estimated smaller by more than kReferenceEstimateMargin is encoded; both, as
// above, where the estimates are closer. One encoding a delta instead of two, at the cost of the
// exactness: a delta may then be a little larger than its other reference would have made it
// (docs/keyframe-delta.md, "The reference on cost", says by how much on the measured sequences).
//
// The file: Header (temporal_model "keyframe-delta", gaussian_count = distinct file ids, profile
// "keyframed" when the header's profile is "" and the file has an index of more than one entry
// and Statistics), Quantization (bounds = the grid's analytic worst case, as StreamingWriter
// declares), Window Table, the caller's metadata plus a Metadata record "keyframe-delta" with the
// registry's advisory keys keyframe_interval_sec (duration / keyframe count) and gop_max_depth,
// attachments, private records, the state chunks in time order (each followed by its SH band
// records: a keyframe's for every gaussian, a delta's for its births only), and the summary:
// Chunk Index entries with the six appended fields (§5.8; live_count = the composed population),
// Statistics, Summary Offset. Deterministic: the same input gives the same bytes.
//
// Passes: the steps are scanned once (validation, the aabb the grid needs, the windows; skipped
// where the step source gives these facts, KeyframeStepFacts), then
// each state is built once, encoded (with cheaper_reference: both ways), verified and held as
// encoded records until the front of the file, which depends on every state (gaussian_count,
// gop_max_depth), is written; the delta records' offsets are then set. Memory: a few states and
// at most held_bytes of encoded records (the rest wait in a temporary file), whatever the number
// of steps (the span overload's steps are the caller's).
//
// Ignored WriterOptions: max_chunk_gaussians (one chunk per step; at most 2^26 gaussians a step)
// and spatial_order (chunks are in gaussian_id order, which the id stream's delta coding wants).
// threads: more than one encodes a delta's two candidate references side by side (when both are
// encoded).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/writer.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// One state: valid from t0 until the next step's t0 (the last until the Header's duration).
// `ids` holds one id per gaussian, unique within the step. mu_t, win_lo and win_hi may be empty
// (see above); the other columns are as GaussianBatch documents.
struct KeyframeStep {
    double t0 = 0;
    GaussianBatch gaussians;
    std::span<const std::uint32_t> ids;
};

// The guard band of reference_choice estimate: one reference is encoded alone only when its
// estimate is below (1 - kReferenceEstimateMargin) x the other's.
inline constexpr double kReferenceEstimateMargin = 0.04;

struct KeyframeWriterOptions {
    WriterOptions base;
    std::uint32_t keyframe_every = 10;  // >= 1
    bool chained = true;                // false: every delta references its GOP keyframe
    std::vector<double> keyframe_referenced_at;  // instants whose delta references the keyframe
    bool cheaper_reference = false;  // each other delta: the smaller of the two references
    // How cheaper_reference finds the smaller (see above): compress_both (exact) or estimate.
    ModeChoice reference_choice = ModeChoice::compress_both;
    // An explicit schedule, when not empty: one entry per step, step s a keyframe exactly when
    // keyframe_steps[s] is non-zero (keyframe_every is then not used). Step 0 must be a keyframe.
    // A shard of a longer scene uses it to keep the whole scene's keyframes where they fall.
    std::vector<std::uint8_t> keyframe_steps;
    // The encoded chunks wait for the front of the file (see Passes): in memory up to this many
    // bytes, the rest in an anonymous temporary file (std::tmpfile; in memory where none can be
    // made). The bytes written do not depend on it.
    std::uint64_t held_bytes = std::uint64_t{1} << 20;
    // A delta restates the rotation of every update once one update changes it (§11.5): where a
    // few of a delta's updated gaussians turn and the rest only move, the rest pay for rotations
    // they kept. With rebirth_turned, the gaussians whose rotation changes in such a delta die and
    // are born again there, each under a fresh file id (as an SH change makes them, above), when
    // the delta estimated that way (its streams at their order-0 entropy, as reference_choice
    // estimate sizes them) is smaller by kReferenceEstimateMargin than with their updates; then
    // its update group carries no rotation. Decided per delta against the previous state. The
    // composed states are the same but for those file ids (KeyframeWriteReport::states carries
    // them). Off by default: the gaussian_id of a gaussian that turns is then not stable.
    bool rebirth_turned = false;
};

struct KeyframeWriteReport {
    WriteReport base;           // quantization, windows, gaussian_count (distinct ids), ...
    std::uint32_t keyframes = 0, deltas = 0;
    std::uint16_t gop_max_depth = 0;
    std::uint32_t keyframe_referenced = 0;   // deltas written keyframe-referenced (delta_mode 0)
    std::vector<std::uint64_t> chunk_bytes;  // per step: its chunk record plus its band records
    std::vector<std::uint64_t> live_count;   // per step
    // Set keep_states before the call to receive every step's quantized state (bins sorted by
    // gaussian_id, the file ids) — what every reader must reconstruct for that step.
    bool keep_states = false;
    std::vector<ChunkBins> states;
    // The caller id each new incarnation stands for, in the order their fresh file ids were
    // given: file id first_fresh_id + k is an incarnation of caller id incarnation_of[k] (a
    // caller that pairs the decoded gaussians with its own, as convert's verification does).
    std::uint64_t first_fresh_id = 0;
    std::vector<std::uint32_t> incarnation_of;
};

// Refusals (invalid_argument unless noted): invalid-option (no steps, keyframe_every 0, a t0
// that is not 0 first, not strictly increasing, or not below the duration, a keyframe_steps of
// another length or whose step 0 is not a keyframe), the gaussian
// refusals of write_scene (non-finite-input, zero-quaternion, value-out-of-range,
// input-size-mismatch, sh-degree-mismatch, empty-window, window-outside-duration,
// bin-out-of-range — each naming the step and the gaussian), window-does-not-cover-state,
// duplicate-gaussian-id (an id twice in one step), bin-out-of-range for a bin difference that
// does not fit i32, limit-exceeded, bound-violated (kind limit: the composed state differs from
// the quantized one), the codec layer's refusals and the sink's io errors.
Status write_keyframe_delta(std::span<const KeyframeStep> steps, const SceneHeader& header,
                            const KeyframeWriterOptions& options, ByteSink& sink,
                            KeyframeWriteReport* report = nullptr);

// The steps of a sequence too long to hold, handed over one at a time: `t0` gives every step's
// start up front, and step(s) returns step s, valid until the next call. The writer asks for the
// steps in order twice — once to scan them (the grid needs every position) and once to quantize,
// encode and verify each — and holds one state, its reference states and the encoded records,
// never the steps. A step returned for the same s in both passes must hold the same values, and
// a step that keeps its predecessor's ids should hand over the same span (same data pointer) for
// the writer's fast path: the same span is taken to hold the same ids, neither checked for
// uniqueness again nor looked up. The output is byte for byte what the span overload writes.
//
// `facts`, where the caller knows them (a convert that read its frames for the same extent):
// what the first pass would find. Then the writer asks for each step once: the grid and the
// Window Table come from the facts, and the one pass checks each step as it fetches it (the same
// checks, each refusal the same, raised when that step is reached) and finds the facts again,
// refusing the file (invalid-option, nothing written to the sink) where they differ from those
// given. The bytes are those written without them.
struct KeyframeStepFacts {
    // Every position of every step, the f32 values as doubles: min x, y, z, then max x, y, z (all
    // 0 where no step has a gaussian). Compared bit for bit.
    std::array<double, 6> aabb{};
    std::vector<WindowTable::Window> windows;  // every gaussian's own window; order and repeats free
    bool unwindowed = false;    // some step with gaussians has no windows: [0, duration) is listed
    bool any_gaussian = false;  // some step has a gaussian
    std::uint64_t largest_id = 0;  // the largest id of any step (0 where none has a gaussian)
    bool source_group = false, source_index = false, object_id = false;  // some step has them
};

struct KeyframeStepSource {
    std::vector<double> t0;
    std::function<Result<const KeyframeStep*>(std::size_t step)> step;
    std::optional<KeyframeStepFacts> facts;  // see above; empty: the steps are scanned first
};

Status write_keyframe_delta(const KeyframeStepSource& steps, const SceneHeader& header,
                            const KeyframeWriterOptions& options, ByteSink& sink,
                            KeyframeWriteReport* report = nullptr);

Result<std::vector<std::uint8_t>> write_keyframe_delta(std::span<const KeyframeStep> steps,
                                                       const SceneHeader& header,
                                                       const KeyframeWriterOptions& options = {},
                                                       KeyframeWriteReport* report = nullptr);

}  // namespace fourdgs
FOURDGS_PUBLIC_END
