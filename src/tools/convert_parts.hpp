// The internal half of convert.cpp (convert.hpp): what the resolved conversion is, and the steps
// shared by the shapes it writes. convert.cpp resolves the options and writes per-frame files;
// convert_keyframe_delta.cpp and convert_adaptive.cpp write the two tracked shapes.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/tools/convert.hpp"
#include "fourdgs/tools/rigid.hpp"
#include "fourdgs/writer.hpp"
#include "plan_parts.hpp"

namespace fourdgs::convert_parts {

inline constexpr float kInf = std::numeric_limits<float>::infinity();

// Rigid parts stored as objects: each gaussian's object id (0: none), the Object Table and the
// Object Tracks the file carries.
struct Objects {
    std::vector<std::uint32_t> object_of;
    ObjectTable table;
    std::vector<ObjectTrack> tracks;
};

// The new incarnations a keyframe-delta encode made (KeyframeWriteReport): file id
// first_fresh_id + k stands for the gaussian the id of[k] was given.
struct Incarnations {
    std::uint64_t first_fresh_id = 0;
    std::vector<std::uint32_t> of;
};

// The conversion as resolved from the options (and the plan): where the frames sit on the clock,
// the shape and its schedule, the end-to-end tolerance and the writer's options.
struct Resolved {
    double fps = 0, duration = 0;
    std::uint64_t first = 0, end = 0, total = 0;  // the frames given are [first, end) of total
    ConvertShape shape = ConvertShape::per_frame;
    std::uint32_t keyframe_every = 10;
    // keyframe_delta: a keyframe-referenced delta every this many frames between the keyframes
    // (ConvertOptions::keyframe_every, "Keyframes and seek points"); 0: none, every delta as
    // cheaper_reference chooses.
    std::uint32_t seek_every = 0;
    std::uint32_t segment = 0;  // adaptive: records never span a multiple (0: whole clip)
    QuantBounds tolerance;
    WriterOptions writer;  // grid set once it is sized (the plan's, or size_grid's)
    const GridPlan* plan = nullptr;
    const Objects* objects = nullptr;  // rigid parts stored as objects (none: nullptr)
    // The share of pos and rot the grid may take while `objects` rotate what it stores: what the
    // parts found leave (parts_share, grid_plan.hpp; grid_share below).
    PartsShare share;
    const plan_parts::BlockParts* held = nullptr;  // on a plan: the parts this block holds
    // ConvertOptions::rot_levels: tolerance.rot is then the box's half-width (rotation_box.hpp).
    std::optional<std::uint32_t> rot_levels;
    bool rot_levels_floor = false;  // ConvertOptions::rot_levels_floor: the box's rounding
    // keyframe_delta, once written: the new incarnations the writer made (measure_error pairs
    // them with their gaussians by id too).
    Incarnations incarnations;

    double time_of(std::uint64_t frame) const { return static_cast<double>(frame) / fps; }
    bool sliced() const { return plan && (first != 0 || end != total); }
};

// rot_levels: the reader's f32 composition of a rotation may add up to kLevelsF32Allowance, so
// the box's half-width is (N + 1/2) levels less it. Where a box is too shallow for the grid (the
// unit sphere grazes its corner: |v| far from 1), a rotation is placed within up to kLevelsSlack
// levels more (on splat4d's generator about 1 gaussian-frame in 4,000 at a grid of 1/8 level),
// so the tolerance declared is (N + 1/2 + kLevelsSlack) levels less the allowance. The rotation
// grid's bound is 1/kLevelsGridShare of (N + 1/2) levels; where rigid parts were found,
// 1/kLevelsRidersGridShare: their riders' held rotations lie a few hundredths of a level inside
// the intersection of their frames' boxes, so the grid point beside them must be that close.
inline constexpr double kLevelsF32Allowance = 2e-6;
inline constexpr double kLevelsSlack = 1.0 / 8;
inline constexpr double kLevelsGridShare = 8;
inline constexpr double kLevelsRidersGridShare = 64;
inline double levels_grid_share(bool riders) { return riders ? kLevelsRidersGridShare : kLevelsGridShare; }
inline double levels_half_width(std::uint32_t levels, double slack = 0) {
    return (levels + 0.5 + slack) / 128 - kLevelsF32Allowance;
}

// rot_levels (convert.hpp): nullopt where it is unset or its options are already in place;
// else the options it needs (no per-frame comparison: it measures against the normalized input),
// or invalid-option outside keyframe-delta without a plan.
Result<std::optional<ConvertOptions>> levels_options(const ConvertOptions& o);

// An invalid-argument error with `refusal`.
Error bad(std::string_view refusal, std::string message);
double largest_side(const std::array<double, 6>& box);
// Colour with every component clamped into [0, 1], counting the clamps.
std::vector<float> clamped_colors(const PlyCloud& f, std::uint64_t& clamped);
// The same into `out`, its storage reused.
void clamp_colors(const PlyCloud& f, std::uint64_t& clamped, std::vector<float>& out);
// The file's header: duration, SH degree, attributes, metadata, the objects, a shard's record.
SceneHeader base_header(std::span<const PlyCloud> frames, const ConvertOptions& o,
                        const Resolved& r);
SceneHeader base_header(int sh_degree, const ConvertOptions& o, const Resolved& r);
// The options resolved without a plan, for `frames` frames whose positions span `aabb`.
Result<Resolved> resolve_unplanned(std::uint64_t frames, const std::array<double, 6>& aabb,
                                   const ConvertOptions& o);
// Widens each gaussian's largest deviation from frame 0's placement (`first`) by frame `f`.
void widen_still(const PlyCloud& first, const PlyCloud& f, std::span<StillDeviation> still);
// keyframe_delta without a plan and without keyframe_every ("Keyframes and seek points",
// convert.hpp): one keyframe and a seek point each second where at most 3/4 of the gaussians
// move in the file — leave frame 0's placement (`still`: each gaussian's largest deviation from
// it) by more than the tolerance, and are not a strict member of one of `parts` (stored still in
// its object's frame; a rider still drifts there) — otherwise r is left as it is.
// keyframes_chosen says whether it applies.
bool keyframes_chosen(const ConvertOptions& o, const Resolved& r);
void choose_keyframes(std::span<const StillDeviation> still, const RigidParts& parts,
                      const ConvertOptions& o, Resolved& r);
// Object j + 1 for rigid part j of `parts`, found on frames whose frame 0 is `first`.
Objects objects_of(const PlyCloud& first, const RigidParts& parts, const Resolved& r);
// The rigid-part search's residuals for frames whose positions span `aabb`.
RigidOptions part_search_options(const std::array<double, 6>& aabb, const ConvertOptions& o,
                                 const Resolved& r);
// The share of the grid `parts`, found with part_search_options(aabb, ...), leave (parts_share).
PartsShare share_of_parts(const std::array<double, 6>& aabb, const RigidParts& parts,
                          const Resolved& r);
// What size_grid is given for the conversion's rigid parts: r.share while objects are stored,
// else none.
std::optional<PartsShare> grid_share(const Resolved& r);
// rot_levels: that share, the rotation grid the finer one riders need where `parts` were found.
PartsShare levels_share(const Resolved& r, bool parts);
// rot_levels: `ro` (part_search_options') measuring riders in the input's boxes (rigid.hpp's
// RotationLevels) on the rotation grid levels_share gives where parts are found.
void levels_search(const std::array<double, 6>& aabb, const Resolved& r, RigidOptions& ro);
// What the sequence holds, into the report (ConvertReport::parts_sought, static_part, ...).
void report_parts(const RigidParts& parts, ConvertReport& rep);
// Frame k of the frames converted.
using FrameAt = std::function<Result<PlyCloud>(std::size_t k)>;
// ConvertReport::error (convert_verify.cpp): `file` decoded at options.error_frames of the `n`
// frames and compared, a keyframe-delta file's gaussians each with its own input gaussian (by
// the id tracked_ids gave it), the others' by position.
Status measure_error(std::size_t n, const FrameAt& frame_at, const ConvertOptions& o,
                     const Resolved& r, ByteSource& file, ConvertReport& rep);
// A scene opened once and evaluated at one time after another (evaluate_scene_at, measure_error).
class SceneAt {
public:
    static Result<SceneAt> open(ByteSource& source, const ExtractOptions& options);
    SceneAt(SceneAt&&) noexcept;
    SceneAt& operator=(SceneAt&&) noexcept;
    ~SceneAt();
    const SceneInfo& scene() const;
    // The visible state at t (time-out-of-range outside [0, duration)) into `frame`; block()
    // then holds the decoded state it was evaluated from (Frame::source indexes it).
    Status at(double t, Frame& frame);
    const GaussianBlock& block() const;

private:
    SceneAt() = default;
    struct Opened;
    std::unique_ptr<Opened> opened_;
};
// Every frame holds as many gaussians as frame 0, at its SH degree (frames-not-tracked).
Status check_tracked(std::span<const PlyCloud> frames);
// Reports progress: `done` of `total` frames.
void tick(const ConvertOptions& o, std::uint64_t done, std::uint64_t total);
// outside-plan, naming `what`.
Error outside_plan(const std::string& what);
// The grid for shapes whose grid does not depend on what the fit finds (per frame,
// keyframe-delta); a plan's grid is kept.
Status size_fixed_grid(std::span<const PlyCloud> frames, Resolved& r);
// Writes the converted gaussians and fills the report both gaussian-birth shapes share.
Status write_columns(const GaussianColumns& cols, SceneHeader header, const Resolved& r,
                     ByteSink& sink, ConvertReport& rep);

// The tracked shapes (convert.hpp): keyframe-delta (§11) and adaptive temporal sampling (§12).
// The ids a keyframe-delta conversion without a plan gives the gaussians of the sequence whose
// frame 0 is `first`: each one's rank in the Morton order of frame 0's positions (ties by index),
// so neighbours that move together are adjacent in an update group.
std::vector<std::uint32_t> tracked_ids(const PlyCloud& first);
Status convert_keyframe_delta(std::span<const PlyCloud> frames, const ConvertOptions& o,
                              Resolved& r, ByteSink& sink, ConvertReport& rep);
Status convert_adaptive(std::span<const PlyCloud> frames, const ConvertOptions& o, Resolved& r,
                        ByteSink& sink, ConvertReport& rep);

// ---- streamed (convert_stream.cpp) ------------------------------------------------------------

// A tracked sequence read a frame at a time (frame 0 kept): every pass over it reads the frames
// again, so what is held is frame 0 and one more frame, whatever the sequence's length.
struct StreamedFrames {
    std::uint64_t frames = 0;
    std::function<Result<PlyCloud>(std::uint64_t)> read;
    std::function<Status(std::uint64_t, PlyCloud&)> read_into;  // FrameSource::read_into, or empty
    std::function<Status(std::uint64_t, PlyCloud&)> read_motion_into;  // the same, or empty
    PlyCloud first;
    std::array<double, 6> aabb{};  // every frame's positions (frames_aabb), from the first pass
    // Each gaussian's colour range over every frame, from the first pass (where it is read):
    // r, g, b of gaussian g at 3g + c, clamped into [0, 1] (widen_colour_range), or empty. A
    // keyframe-delta encode of the whole frames in one GOP holds its colours by it without
    // reading the GOP ahead (ColourHold, convert_keyframe_delta.cpp).
    std::vector<float> colour_lo, colour_hi;
    // Calls fn(k, frame k) for every frame in order, each read into one cloud.
    Status each(const std::function<Status(std::uint64_t, const PlyCloud&)>& fn) const;
    // Frame k: `first`, or frame k read into `scratch` (its storage reused where read_into is set).
    Result<const PlyCloud*> frame(std::uint64_t k, PlyCloud& scratch) const;
    Result<PlyCloud> frame(std::uint64_t k) const;
    // Frame k's count, positions and rotations (FrameSource::read_motion_into): `first`, or read
    // into `scratch`, whose other columns are then not frame k's.
    Result<const PlyCloud*> motion(std::uint64_t k, PlyCloud& scratch) const;
};

// The frames as one encode sees them: gaussians `keep` (ascending; empty: all) of each frame, those
// whose `held` entry (one per kept gaussian, or empty) is not 0 in the object frame of rigid part
// parts[held - 1]: at frame 0's position and rotation, or, where their `rides` entry (one per kept
// gaussian, or empty: none ride) is a rider's, carried there by the part's pose at frame k
// (to_object_frame, rigid.hpp) and its rotation held at the part's rider_rotation (looked up by
// the gaussian's index in the frame, not in the view).
struct TrackedView {
    std::span<const std::uint32_t> keep;
    std::span<const std::uint32_t> held;
    std::span<const std::uint8_t> rides;
    std::span<const RigidPart> parts;
};
PlyCloud view_of(const PlyCloud& frame, const PlyCloud& first, const TrackedView& view,
                 std::uint64_t k = 0);
// The same into `out`, its storage reused; `frame` is frame k.
void view_into(const PlyCloud& frame, const PlyCloud& first, const TrackedView& view,
               PlyCloud& out, std::uint64_t k = 0);
// The view's held gaussians of frame k placed in `out`, which holds the view's other attributes
// of that frame (view_into's second half; with `keep` empty, the frame itself, changed in place);
// their positions alone where `rotations` is false (`out` then needs no other column).
void place_held(const PlyCloud& first, const TrackedView& view, PlyCloud& out,
                std::uint64_t k, bool rotations = true);
// Whether the view is the whole frames as they are (view_of copies them unchanged).
bool whole_view(const TrackedView& view);

// Counts what is written; keeps nothing. With a limit, the write that takes the count past it
// is refused (limit-exceeded), so that a writer stops there; passed() then says so.
class CountingSink final : public ByteSink {
public:
    CountingSink() = default;
    explicit CountingSink(std::uint64_t limit) : limit_(limit) {}
    Status write(Bytes bytes) override {
        position_ += bytes.size();
        if (position_ > limit_)
            return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                              "counted " + std::to_string(position_) + " bytes, past " +
                                  std::to_string(limit_));
        return ok_status();
    }
    std::uint64_t position() const override { return position_; }
    bool passed() const { return position_ > limit_; }

private:
    std::uint64_t position_ = 0;
    std::uint64_t limit_ = std::numeric_limits<std::uint64_t>::max();
};

// Encodes a view of the sequence the way the conversion at hand encodes it (the frames held in
// memory or read again), into `sink`.
using EncodeView = std::function<Status(const TrackedView& view, Resolved& r, ByteSink& sink)>;
// The report's part sizes (ConvertOptions::part_bytes), both paths: the static gaussians, the
// other moving ones and each rigid part (held in its object frame) encoded alone by `encode`;
// `first` is frame 0.
Status measure_parts(const PlyCloud& first, const RigidParts& parts, const Resolved& r,
                     const EncodeView& encode, ConvertReport& rep);

// lo and hi (3 a gaussian: r, g, b) widened by a frame's colours (4 a gaussian), each clamped
// into [0, 1] as the writer takes it; gaussian g of the range is the frame's keep[g] (keep
// empty: g).
void widen_colour_range(std::span<const float> color, std::span<const std::uint32_t> keep,
                        std::vector<float>& lo, std::vector<float>& hi);

// The frames held in memory as StreamedFrames (each read a copy), their aabb taken.
StreamedFrames streamed_from_memory(std::span<const PlyCloud> frames);

// The per-frame encoding of the frames (convert_per_frame's file, written through a
// StreamingWriter a frame at a time) counted for never_larger_than_per_frame: to its end when
// ConvertOptions::per_frame_whole, else only until it passes `larger_than` bytes (the file it is
// compared with), into rep.per_frame_bytes and rep.per_frame_partial.
Status count_per_frame(const StreamedFrames& in, const ConvertOptions& o, const Resolved& r,
                       std::uint64_t larger_than, ConvertReport& rep);

// Keyframe-delta (no plan) of the view of `in`, its grid sized to the view's aabb.
Status convert_keyframe_delta_streamed(const StreamedFrames& in, const TrackedView& view,
                                       const ConvertOptions& o, Resolved& r, ByteSink& sink,
                                       ConvertReport& rep);

// convert_frames of a tracked keyframe-delta conversion without a plan, the frames read from
// `source` as each pass needs them: the same bytes and report, in memory bounded by two frames,
// the writer's states and (without `spill`) the encoded file.
// The file waits at `spill` (removed at the end) until it is measured and copied to `sink`; in
// memory when `spill` is empty.
Status convert_tracked_streamed(const FrameSource& source, const ConvertOptions& o,
                                ByteSink& sink, ConvertReport& rep, const std::string& spill);

}  // namespace fourdgs::convert_parts
