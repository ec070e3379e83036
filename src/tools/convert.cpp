// Frame sequences in, instants out (convert.hpp).
#include "fourdgs/tools/convert.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <deque>
#include <map>
#include <system_error>

#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/open_scene.hpp"
#include "fourdgs/quantize.hpp"
#include "fourdgs/reconstruct.hpp"
#include "fourdgs/tools/merge.hpp"
#include "fourdgs/tools/rigid.hpp"
#include "fourdgs/tools/splat_formats.hpp"
#include "convert_parts.hpp"
#include "plan_parts.hpp"

namespace fourdgs {
namespace convert_parts {

Error bad(std::string_view refusal, std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal, std::move(message));
}

double largest_side(const std::array<double, 6>& box) {
    return std::max({box[3] - box[0], box[4] - box[1], box[5] - box[2]});
}

std::string num(double v) { return bound_string(std::fabs(v)); }

// Object `id`'s track: pose k, one per frame given, over [first + k, first + k + 1) / fps (step).
ObjectTrack track_of(std::uint32_t id, std::span<const Pose> poses, const Resolved& r) {
    ObjectTrack track;
    track.object_id = id;
    track.interpolation = TrajectoryInterpolation::step;
    for (std::size_t k = 0; k < poses.size(); ++k)
        track.samples.push_back({r.time_of(r.first + k), poses[k].rotation, poses[k].translation});
    return track;
}

Metadata convert_metadata(const Resolved& r) {
    const QuantBounds& tol = r.tolerance;
    Metadata m;
    m.name = "4dgs-convert";
    m.entries = {{"source_frames", std::to_string(r.total)},
                 {"fps", bound_string(r.fps)},
                 {"tolerance.pos", num(tol.pos)},
                 {"tolerance.scale_rel", num(tol.scale_rel)},
                 {"tolerance.rot", num(tol.rot)},
                 {"tolerance.rgb", num(tol.rgb)},
                 {"tolerance.alpha", num(tol.alpha)}};
    if (r.rot_levels) m.entries.emplace_back("tolerance.rot_levels", std::to_string(*r.rot_levels));
    // Only where it is floor: a rounding writer's files stay as they were (absent: nearest).
    if (r.rot_levels_floor) m.entries.emplace_back("tolerance.rot_rounding", "floor");
    if (r.plan) m.entries.emplace_back("plan", plan_digest(*r.plan));
    return m;
}

// The slice [first, end) of a plan's `total` frames a shard holds (merge.hpp reads it). Version 2
// shards name their plan in "4dgs-convert"; a shard without shard_format is an older build's.
Metadata shard_record(std::uint64_t first, std::uint64_t end, std::uint64_t total, double fps) {
    return {"4dgs-shard",
            {{"first_frame", std::to_string(first)},
             {"end_frame", std::to_string(end)},
             {"frames", std::to_string(total)},
             {"t0", bound_string(static_cast<double>(first) / fps)},
             {"t1", bound_string(static_cast<double>(end) / fps)},
             {"shard_format", std::to_string(kShardFormat)}}};
}

// Object j + 1 for rigid part j: a table entry, anchored at its frame-0 centroid, and a track with
// one sample per frame that holds until the next (step): frame k's pose over [k, k + 1) / fps.
Objects objects_of(const PlyCloud& first, const RigidParts& parts, const Resolved& r) {
    Objects out;
    out.object_of = parts.part_of;
    for (std::size_t j = 0; j < parts.parts.size(); ++j) {
        const RigidPart& part = parts.parts[j];
        const auto id = static_cast<std::uint32_t>(j + 1);
        std::array<double, 3> centroid{};
        for (const auto* list : {&part.members, &part.riders})
            for (std::uint32_t g : *list)
                for (int c = 0; c < 3; ++c) centroid[c] += first.position[g * 3 + c];
        ObjectTable::Entry e;
        e.object_id = id;
        e.label = "rigid part " + std::to_string(id);
        const double count = double(part.members.size() + part.riders.size());
        for (int c = 0; c < 3; ++c) e.anchor[c] = static_cast<float>(centroid[c] / count);
        out.table.entries.push_back(std::move(e));
        out.tracks.push_back(track_of(id, part.poses, r));
    }
    return out;
}

SceneHeader base_header(std::span<const PlyCloud> frames, const ConvertOptions& o,
                        const Resolved& r) {
    return base_header(frames.front().sh_degree, o, r);
}

SceneHeader base_header(int sh_degree, const ConvertOptions& o, const Resolved& r) {
    SceneHeader h;
    h.duration_sec = r.duration;
    h.sh_degree = sh_degree;
    h.attributes = {{"source", "ply-sequence"}, {"visibility_profile", "box"}};
    if (!o.title.empty()) h.attributes.emplace_back("title", o.title);
    if (!o.coordinate_system.empty())
        h.attributes.emplace_back("coordinate_system", o.coordinate_system);
    h.metadata.push_back(convert_metadata(r));
    if (r.objects) {
        h.object_table = r.objects->table;
        h.object_tracks = r.objects->tracks;
    }
    if (r.sliced()) h.metadata.push_back(shard_record(r.first, r.end, r.total, r.fps));
    return h;
}

Status check_tracked(std::span<const PlyCloud> frames) {
    for (std::size_t i = 1; i < frames.size(); ++i) {
        if (frames[i].count != frames[0].count)
            return bad(refusal::kFramesNotTracked,
                       "frame " + std::to_string(i) + " holds " + std::to_string(frames[i].count) +
                           " gaussians but frame 0 holds " + std::to_string(frames[0].count) +
                           "; tracked conversion needs the same gaussians in every frame");
        if (frames[i].sh_degree != frames[0].sh_degree)
            return bad(refusal::kFramesNotTracked, "frame " + std::to_string(i) + " has SH degree " +
                                                 std::to_string(frames[i].sh_degree) +
                                                 " but frame 0 has " +
                                                 std::to_string(frames[0].sh_degree));
    }
    return ok_status();
}

void tick(const ConvertOptions& o, std::uint64_t done, std::uint64_t total) {
    if (o.progress) o.progress(done, total);
}

Error outside_plan(const std::string& what) {
    return bad(refusal::kOutsidePlan,
               what + "; make the plan again with these frames in its sample");
}

// Whether [first, end) is a slice of the plan's frames on its alignment.
Status check_slice(const GridPlan& p, std::uint64_t first, std::uint64_t end) {
    const std::string slice = "[" + std::to_string(first) + ", " + std::to_string(end) + ")";
    if (!(first < end && end <= p.frames))
        return bad(refusal::kInvalidOption, "frames " + slice + " are not a slice of the plan's " +
                                                std::to_string(p.frames) + " frames");
    const std::uint64_t a = p.alignment();
    if (first % a != 0 || (end % a != 0 && end != p.frames))
        return bad(refusal::kInvalidOption,
                   "frames " + slice + " do not start and end on a multiple of " +
                       std::to_string(a) +
                       (p.shape == ConvertShape::keyframe_delta ? " (the plan's keyframe_every)"
                                                                : " (the plan's segment_frames)") +
                       ", where an encode of the whole sequence starts a GOP or a segment");
    return ok_status();
}

// Resolves the options; with a plan, checks the slice and that its frames are ones the plan was
// made for (SH degree, count when tracked, every position inside its aabb).
Result<Resolved> resolve_unplanned(std::uint64_t frames, const std::array<double, 6>& aabb,
                                   const ConvertOptions& o) {
    Resolved r;
    r.writer = o.writer;
    if (o.first_frame != 0 || o.end_frame != 0)
        return bad(refusal::kInvalidOption, "a slice of frames needs a grid plan");
    r.fps = o.fps;
    r.total = r.end = frames;
    r.duration = r.time_of(r.total);
    r.shape = o.shape;
    r.keyframe_every = gop_frames(o.keyframe_every, o.fps);
    r.tolerance =
        o.tolerance ? *o.tolerance : preset_tolerance(o.writer.preset, largest_side(aabb));
    if (o.rot_levels) {
        r.rot_levels = o.rot_levels;
        r.rot_levels_floor = o.rot_levels_floor;
        r.tolerance.rot = levels_half_width(*o.rot_levels, kLevelsSlack);
    }
    return r;
}

void widen_still(const PlyCloud& first, const PlyCloud& f, std::span<StillDeviation> still) {
    for (std::size_t g = 0; g < still.size(); ++g) {
        const StillDeviation d = still_deviation(first, f, g);
        still[g].pos = std::max(still[g].pos, d.pos);
        still[g].rot = std::max(still[g].rot, d.rot);
    }
}

// Each gaussian's largest deviation from frame 0's placement over `frames`.
std::vector<StillDeviation> still_deviations(std::span<const PlyCloud> frames) {
    std::vector<StillDeviation> still(frames.front().count);
    for (const PlyCloud& f : frames.subspan(1)) widen_still(frames.front(), f, still);
    return still;
}

bool keyframes_chosen(const ConvertOptions& o, const Resolved& r) {
    return !o.plan && o.keyframe_every == 0 && r.shape == ConvertShape::keyframe_delta;
}

void choose_keyframes(std::span<const StillDeviation> still, const RigidParts& parts,
                      const ConvertOptions& o, Resolved& r) {
    if (!keyframes_chosen(o, r)) return;
    const bool any_parts = !parts.parts.empty();
    std::uint64_t moving = 0;
    for (std::size_t g = 0; g < still.size(); ++g) {
        const bool held = any_parts && parts.part_of[g] != 0 && !parts.rides[g];
        moving += !held && (still[g].pos > r.tolerance.pos || still[g].rot > r.tolerance.rot);
    }
    if (4 * moving > 3 * still.size()) return;
    r.seek_every = r.keyframe_every;  // one second of frames (gop_frames)
    r.keyframe_every = static_cast<std::uint32_t>(
        std::clamp<std::uint64_t>(r.total, 1, std::numeric_limits<std::uint32_t>::max()));
}

Result<Resolved> resolve(std::span<const PlyCloud> frames, const ConvertOptions& o) {
    if (!o.plan) return resolve_unplanned(frames.size(), frames_aabb(frames), o);
    Resolved r;
    r.writer = o.writer;
    const GridPlan& p = *o.plan;
    r.plan = &p;
    r.fps = p.fps;
    r.total = p.frames;
    r.duration = p.duration_sec;
    r.first = o.first_frame;
    r.end = o.end_frame ? o.end_frame : p.frames;
    r.shape = p.shape;
    r.keyframe_every = p.keyframe_every;
    r.segment = p.segment_frames;
    r.tolerance = p.tolerance;
    apply_plan(p, r.writer);
    FOURDGS_TRY(check_slice(p, r.first, r.end));
    if (frames.size() != r.end - r.first)
        return bad(refusal::kInvalidOption, std::to_string(frames.size()) +
                                                " frames given for the slice [" +
                                                std::to_string(r.first) + ", " +
                                                std::to_string(r.end) + ")");
    for (std::size_t k = 0; k < frames.size(); ++k) {
        const PlyCloud& f = frames[k];
        const std::string who = "frame " + std::to_string(r.first + k);
        if (f.sh_degree != p.sh_degree)
            return outside_plan(who + " has SH degree " + std::to_string(f.sh_degree) +
                                " but the plan was made for " + std::to_string(p.sh_degree));
        if (p.gaussians_per_frame != 0 && f.count != p.gaussians_per_frame)
            return outside_plan(who + " holds " + std::to_string(f.count) +
                                " gaussians but the plan was made for " +
                                std::to_string(p.gaussians_per_frame) + " in every frame");
        for (std::size_t i = 0; i < f.count; ++i)
            for (int c = 0; c < 3; ++c) {
                const double v = f.position[i * 3 + c];
                if (!(v >= p.aabb[c] && v <= p.aabb[3 + c]))
                    return outside_plan(who + " gaussian " + std::to_string(i) + ": position[" +
                                        std::to_string(c) + "] is " + detail::fmt(v) +
                                        ", outside the plan's aabb [" + detail::fmt(p.aabb[c]) +
                                        ", " + detail::fmt(p.aabb[3 + c]) + "]");
            }
    }
    return r;
}

// The grid for shapes whose grid does not depend on what the fit finds (per frame, keyframe-delta).
Status size_fixed_grid(std::span<const PlyCloud> frames, Resolved& r) {
    if (r.plan) return ok_status();
    FOURDGS_ASSIGN(r.writer.grid, size_grid(r.shape, r.tolerance, frames_aabb(frames), r.duration,
                                            0, 0, grid_share(r)));
    return ok_status();
}

// ---- per frame --------------------------------------------------------------------------------

// Writes the converted gaussians and fills the report both gaussian-birth shapes share.
Status write_columns(const GaussianColumns& cols, SceneHeader header, const Resolved& r,
                     ByteSink& sink, ConvertReport& rep) {
    WriteReport wr;
    FOURDGS_TRY(write_scene(SceneInput{std::move(header), cols.batch()}, r.writer, sink, &wr));
    rep.records = wr.gaussian_count;
    rep.chunks = wr.chunk_count;
    rep.output_bytes = wr.bytes_written;
    rep.quantization = wr.quantization;
    rep.tolerance = r.tolerance;
    return ok_status();
}

Status convert_per_frame(std::span<const PlyCloud> frames, const ConvertOptions& o, Resolved& r,
                         ByteSink& sink, ConvertReport& rep) {
    const int degree = frames.front().sh_degree;
    std::size_t total = 0;
    for (std::size_t i = 0; i < frames.size(); ++i) {
        if (frames[i].sh_degree != degree)
            return bad(refusal::kShDegreeMismatch, "frame " + std::to_string(i) + " has SH degree " +
                                                 std::to_string(frames[i].sh_degree) +
                                                 " but frame 0 has " + std::to_string(degree));
        total += frames[i].count;
    }
    FOURDGS_TRY(size_fixed_grid(frames, r));

    GaussianColumns cols;
    const std::size_t per = static_cast<std::size_t>(frames.front().sh_per_gaussian());
    cols.position.reserve(total * 3);
    for (std::size_t i = 0; i < frames.size(); ++i) {
        const PlyCloud& f = frames[i];
        cols.position.insert(cols.position.end(), f.position.begin(), f.position.end());
        cols.scale.insert(cols.scale.end(), f.scale.begin(), f.scale.end());
        cols.rotation.insert(cols.rotation.end(), f.rotation.begin(), f.rotation.end());
        const auto c = clamped_colors(f, rep.clamped_colors);
        cols.color.insert(cols.color.end(), c.begin(), c.end());
        cols.sh.insert(cols.sh.end(), f.sh.begin(), f.sh.begin() + f.count * per);
        const double t0 = r.time_of(r.first + i), t1 = r.time_of(r.first + i + 1);
        cols.mu_t.insert(cols.mu_t.end(), f.count, static_cast<float>(t0));
        cols.sigma_t.insert(cols.sigma_t.end(), f.count, kInf);  // never fades: the box profile
        cols.win_lo.insert(cols.win_lo.end(), f.count, t0);
        cols.win_hi.insert(cols.win_hi.end(), f.count, t1);
        tick(o, i + 1, frames.size());
    }
    cols.count = total;
    cols.sh_degree = degree;
    return write_columns(cols, base_header(frames, o, r), r, sink, rep);
}

}  // namespace convert_parts

namespace {
using namespace convert_parts;

// ---- what the sequence holds --------------------------------------------------------------

// `made`: where given, the new incarnations a keyframe-delta encode made (the rest of `r` as the
// encode leaves it is not the caller's).
Status encode(std::span<const PlyCloud> frames, const ConvertOptions& o, Resolved r,
              ByteSink& sink, ConvertReport& rep, Incarnations* made = nullptr) {
    switch (r.shape) {
        case ConvertShape::per_frame: return convert_per_frame(frames, o, r, sink, rep);
        case ConvertShape::keyframe_delta:
            FOURDGS_TRY(convert_keyframe_delta(frames, o, r, sink, rep));
            if (made) *made = std::move(r.incarnations);
            return ok_status();
        case ConvertShape::adaptive: return convert_adaptive(frames, o, r, sink, rep);
    }
    return bad(refusal::kInvalidOption, "unknown conversion shape");
}

// The search, skipped (no part sought: only the static gaussians sorted out) where a sample of
// the frames shows no part (rigid_sample_frames).
RigidParts find_parts(std::span<const PlyCloud> frames, const ConvertOptions& o,
                      const Resolved& r) {
    RigidOptions ro = part_search_options(frames_aabb(frames), o, r);
    if (frames.size() > kRigidSampleFrames) {
        std::vector<PlyCloud> sample;
        for (std::size_t k : rigid_sample_frames(frames.size())) {
            PlyCloud& m = sample.emplace_back();
            m.count = frames[k].count;
            m.position = frames[k].position;
            m.rotation = frames[k].rotation;
        }
        // The sample's frames lie apart: where riders may hold their rotation a window at a
        // time, each is its own window here (the search over every frame decides).
        RigidOptions first_look = ro;
        first_look.hold_window = ro.hold_window == 0 ? 0 : 1;
        if (find_rigid_parts(sample, first_look).parts.empty()) ro.max_parts = 0;
    }
    return find_rigid_parts(frames, ro);
}

}  // namespace

namespace convert_parts {

// How far, in tolerances per position component, a part's pose may leave a gaussian and still
// have it ride the part (ride_residual, rigid.hpp): splat4d's generator drifts its foreground
// gaussians by a sine of amplitude ~N(0, 1 cm) per axis: up to ~6 cm from the pose.
constexpr double kRideTolerances = 32;

// The finest rotation grid keyframe-delta's riders may ask for, as a fraction of the rotation
// tolerance: their held rotations may take the rest less twice this (the rotated grid error).
// Where riders hold, no delta carries rotation (§11.5 restates it absolutely); a finer rotation
// grid costs every gaussian's keyframes, a few bits each.
constexpr double kRiderRotationFloor = 1.0 / 16;

double reach_of(const std::array<double, 6>& aabb) {
    double reach = 0;
    for (double v : aabb) reach = std::max(reach, std::fabs(v));
    return reach;
}

RigidOptions part_search_options(const std::array<double, 6>& aabb, const ConvertOptions& o,
                                 const Resolved& r) {
    RigidOptions ro =
        rigid_search_options(r.shape, r.tolerance, reach_of(aabb), o.rigid_min_members);
    // A rider's stored state is its drift in the part's frame, its error rotated by the track
    // (√3 per position component, 2 per quaternion component: the grid's share leaves that
    // room), so any drift may ride; this bound keeps riding to gaussians whose drift is small
    // beside a body's motion, where the part's frame makes their deltas smaller.
    ro.ride_residual = kRideTolerances * r.tolerance.pos;
    if (r.shape == ConvertShape::keyframe_delta) {
        // keyframe-delta's grid takes what the parts found leave (share_of_parts), so a rider's
        // held rotation may stray by more than the quarter grid leaves, and a member of a part
        // with riders rides rather than pin the position grid with its residual.
        ro.ride_rot_residual = r.tolerance.rot * (1 - 2 * kRiderRotationFloor);
        ro.members_ride = true;
        // A rider whose rotation no one value holds over the sequence may hold one a second
        // (restated once a window): a plan's blocks see only their own frames, so not there.
        if (!o.plan) ro.hold_window = r.keyframe_every;
    }
    if (r.rot_levels) levels_search(aabb, r, ro);
    return ro;
}

PartsShare share_of_parts(const std::array<double, 6>& aabb, const RigidParts& parts,
                          const Resolved& r) {
    return parts_share(r.shape, r.tolerance, parts.fit, reach_of(aabb));
}

std::optional<PartsShare> grid_share(const Resolved& r) {
    // rot_levels: the grid's error must mostly stay inside the box's depth around its deepest
    // unit quaternion (a tenth of a level for most boxes, far less for a few; rotation_box.hpp),
    // so the grid is finer than the box and rotations snap to its coarser sub-lattices where a
    // box allows (RotationSnap).
    // Where parts were found, the position grid takes what they leave, as outside this mode.
    if (r.rot_levels) {
        return levels_share(r, r.objects != nullptr);
    }
    if (!r.objects) return std::nullopt;
    return r.share;
}

void report_parts(const RigidParts& parts, ConvertReport& rep) {
    rep.parts_sought = true;
    rep.static_part = {0, parts.static_count, 0};
    rep.other_part = {0, parts.other_count, 0};
    rep.objects.clear();
    for (std::size_t j = 0; j < parts.parts.size(); ++j)
        rep.objects.push_back(
            {static_cast<std::uint32_t>(j + 1),
             parts.parts[j].members.size() + parts.parts[j].riders.size(), 0});
}

}  // namespace convert_parts

namespace {

// The frames with each gaussian `reference_of` names (not null) at the position and rotation it
// has there: held in its part's object frame.
std::vector<PlyCloud> held_frames(std::span<const PlyCloud> frames,
                                  std::span<const PlyCloud* const> reference_of) {
    std::vector<PlyCloud> out(frames.begin(), frames.end());
    for (PlyCloud& f : out)
        for (std::size_t g = 0; g < reference_of.size(); ++g) {
            const PlyCloud* ref = reference_of[g];
            if (!ref || ref == &f) continue;
            std::copy_n(ref->position.begin() + g * 3, 3, f.position.begin() + g * 3);
            std::copy_n(ref->rotation.begin() + g * 4, 4, f.rotation.begin() + g * 4);
        }
    return out;
}

// Every part's gaussians in its object frame: members at their frame-0 position and rotation,
// riders carried there by the part's pose at each frame.
std::vector<PlyCloud> held_in_object_frames(std::span<const PlyCloud> frames,
                                            const RigidParts& parts) {
    const TrackedView view{{}, parts.part_of, parts.rides, parts.parts};
    std::vector<PlyCloud> out;
    out.reserve(frames.size());
    for (std::size_t k = 0; k < frames.size(); ++k)
        out.push_back(view_of(frames[k], frames[0], view, k));
    return out;
}

// ---- on a plan: block by block ----------------------------------------------------------------
// A slice is encoded a block of frames at a time (a run of the plan's alignment), each block into
// a file of its own on the plan, and the blocks are joined by merge (merge.hpp) — which is how
// shards are joined too, so a slice and the whole sequence come out as one encode of every frame
// would write them, and memory holds one block's frames, not the slice's.

// Blocks are merged this many at a time (each an open file); more go through intermediate merges.
constexpr std::size_t kBlocksPerMerge = 128;

// Frames of the plan's sequence: a block [first, end) (valid until the next call), or one frame.
struct FrameReader {
    std::function<Result<std::span<const PlyCloud>>(std::uint64_t, std::uint64_t)> block;
    std::function<Result<PlyCloud>(std::uint64_t)> frame;
};

// Where the encoded blocks wait to be merged: in memory, or in files beside the output.
class Spool {
public:
    struct Entry {
        std::uint64_t first, end;  // the frames it holds
        std::string name;
    };
    virtual ~Spool() = default;
    // A sink for the next block (written before the next call).
    virtual Result<ByteSink*> next(std::uint64_t first, std::uint64_t end) = 0;
    virtual Status close_last() { return ok_status(); }
    // Sources over entries [from, to), valid until the next call.
    virtual Result<std::vector<ByteSource*>> open(std::size_t from, std::size_t to) = 0;
    // Forgets the first `n` entries (merged into later ones).
    virtual void drop(std::size_t n) {
        entries.erase(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(n));
    }
    std::vector<Entry> entries;
};

class MemorySpool final : public Spool {
public:
    Result<ByteSink*> next(std::uint64_t first, std::uint64_t end) override {
        entries.push_back({first, end, block_name(first, end)});
        return &sinks_.emplace_back();
    }
    Result<std::vector<ByteSource*>> open(std::size_t from, std::size_t to) override {
        sources_.clear();
        std::vector<ByteSource*> out;
        for (std::size_t i = from; i < to; ++i) sources_.emplace_back(sinks_[i].bytes());
        for (MemorySource& m : sources_) out.push_back(&m);
        return out;
    }
    void drop(std::size_t n) override {
        sources_.clear();
        sinks_.erase(sinks_.begin(), sinks_.begin() + static_cast<std::ptrdiff_t>(n));
        Spool::drop(n);
    }
    static std::string block_name(std::uint64_t first, std::uint64_t end) {
        return "frames [" + std::to_string(first) + ", " + std::to_string(end) + ")";
    }

private:
    std::deque<MemorySink> sinks_;
    std::deque<MemorySource> sources_;
};

class FileSpool final : public Spool {
public:
    explicit FileSpool(std::string stem) : stem_(std::move(stem)) {}
    ~FileSpool() override {
        sink_.reset();
        files_.clear();
        for (const Entry& e : entries) std::remove(e.name.c_str());
    }
    Result<ByteSink*> next(std::uint64_t first, std::uint64_t end) override {
        entries.push_back({first, end, stem_ + "." + std::to_string(entries.size())});
        sink_.reset();
        FOURDGS_ASSIGN(FileSink s, FileSink::create(entries.back().name));
        sink_.emplace(std::move(s));
        return &*sink_;
    }
    Status close_last() override { return sink_ ? sink_->close() : ok_status(); }
    void drop(std::size_t n) override {
        files_.clear();
        for (std::size_t i = 0; i < n; ++i) std::remove(entries[i].name.c_str());
        Spool::drop(n);
    }
    Result<std::vector<ByteSource*>> open(std::size_t from, std::size_t to) override {
        files_.clear();
        std::vector<ByteSource*> out;
        for (std::size_t i = from; i < to; ++i) {
            FOURDGS_ASSIGN(FileSource f, FileSource::open(entries[i].name));
            files_.push_back(std::move(f));
        }
        for (FileSource& f : files_) out.push_back(&f);
        return out;
    }

private:
    std::string stem_;
    std::optional<FileSink> sink_;
    std::deque<FileSource> files_;
};

// Entries [from, to) of `spool` merged into `sink`; a slice of the plan's frames short of all of
// them carries its 4dgs-shard record.
Status merge_spooled(Spool& spool, std::size_t from, std::size_t to, const GridPlan& plan,
                     ByteSink& sink, MergeReport& report) {
    MergeOptions mo;
    const std::uint64_t first = spool.entries[from].first, end = spool.entries[to - 1].end;
    if (first != 0 || end != plan.frames) mo.shard = shard_record(first, end, plan.frames, plan.fps);
    for (std::size_t i = from; i < to; ++i) mo.names.push_back(spool.entries[i].name);
    FOURDGS_ASSIGN(const std::vector<ByteSource*> sources, spool.open(from, to));
    return merge_scenes(sources, mo, sink, &report);
}

// The objects a block on `plan` stores: every rigid part of the plan in its Object Table, the
// held rigid parts' members under their object ids, and a track over the block for each.
std::optional<Objects> plan_objects(const GridPlan& plan, const plan_parts::BlockParts& held,
                                    std::size_t n, const Resolved& r) {
    Objects out;
    for (const PlannedPart& part : plan.parts)
        if (part.rigid)
            out.table.entries.push_back(
                {part.object_id, "rigid part " + std::to_string(part.object_id), part.anchor, {}, {}});
    if (out.table.entries.empty()) return std::nullopt;
    out.object_of.assign(n, 0);
    for (const plan_parts::HeldPart& h : held.held) {
        const PlannedPart& part = plan.parts[h.part];
        if (!part.rigid) continue;
        for (std::uint32_t g : h.members) out.object_of[g] = part.object_id;
        out.tracks.push_back(track_of(part.object_id, h.poses, r));
    }
    return out;
}

// One block [first, end) of the plan's frames into `sink`.
Status encode_block(std::span<const PlyCloud> frames, std::uint64_t first, std::uint64_t end,
                    const ConvertOptions& o, const plan_parts::FrameLoader& reference,
                    ByteSink& sink, ConvertReport& rep) {
    ConvertOptions bo = o;
    bo.first_frame = first;
    bo.end_frame = end;
    bo.progress = nullptr;
    FOURDGS_ASSIGN(Resolved r, resolve(frames, bo));
    FOURDGS_ASSIGN(const plan_parts::BlockParts held,
                   plan_parts::block_parts(*r.plan, first, frames, reference));
    const std::optional<Objects> objects =
        plan_objects(*r.plan, held, frames.front().count, r);
    if (objects) r.objects = &*objects;
    if (!held.empty()) r.held = &held;
    std::vector<PlyCloud> still;
    std::span<const PlyCloud> input = frames;
    // Keyframe-delta states hold the members at their reference; adaptive records stand for them.
    if (r.shape == ConvertShape::keyframe_delta && !held.empty()) {
        std::vector<const PlyCloud*> reference_of(held.held_of.size(), nullptr);
        for (std::size_t g = 0; g < reference_of.size(); ++g)
            if (held.held_of[g] >= 0) reference_of[g] = held.held[held.held_of[g]].reference;
        still = held_frames(frames, reference_of);
        input = still;
    }
    return encode(input, bo, r, sink, rep);
}

// The slice `o` names of `o.plan`'s frames, block by block through `spool`, merged into `sink`.
Status convert_on_plan(const ConvertOptions& o, const FrameReader& in, Spool& spool,
                       ByteSink& sink, ConvertReport& rep) {
    const GridPlan& plan = *o.plan;
    const std::uint64_t first = o.first_frame, end = o.end_frame ? o.end_frame : plan.frames;
    FOURDGS_TRY(check_slice(plan, first, end));
    // A block: runs of the alignment holding about block_gaussians (per frame: as many as the
    // first frame holds), cut where a part begins or ends.
    std::uint64_t per_frame = plan.gaussians_per_frame;
    if (per_frame == 0) {
        FOURDGS_ASSIGN(const std::span<const PlyCloud> one, in.block(first, first + 1));
        per_frame = std::max<std::uint64_t>(1, one.front().count);
    }
    const std::uint64_t a = plan.alignment();
    const std::uint64_t block =
        a * std::max<std::uint64_t>(1, o.block_gaussians / (a * per_frame));
    // The references of parts that began before the block, kept while a part needs them.
    std::map<std::uint64_t, PlyCloud> references;
    const plan_parts::FrameLoader reference =
        [&](std::uint64_t f) -> Result<const PlyCloud*> {
        auto it = references.find(f);
        if (it == references.end()) {
            FOURDGS_ASSIGN(PlyCloud c, in.frame(f));
            it = references.emplace(f, std::move(c)).first;
        }
        return &it->second;
    };
    rep = ConvertReport{};
    rep.shape = plan.shape;
    rep.tolerance = plan.tolerance;
    for (std::uint64_t b0 = first; b0 < end;) {
        // A block ends where a part begins or ends, so that it holds each part whole or not.
        std::uint64_t b1 = std::min(end, (b0 / block + 1) * block);
        for (const PlannedPart& part : plan.parts)
            for (std::uint64_t edge : {part.first_frame, part.end_frame})
                if (edge > b0 && edge < b1) b1 = edge;
        FOURDGS_ASSIGN(const std::span<const PlyCloud> frames, in.block(b0, b1));
        FOURDGS_ASSIGN(ByteSink* out, spool.next(b0, b1));
        ConvertReport br;
        FOURDGS_TRY(encode_block(frames, b0, b1, o, reference, *out, br));
        FOURDGS_TRY(spool.close_last());
        for (const PlyCloud& f : frames) rep.input_gaussians += f.count;
        rep.records += br.records;
        rep.deltas += br.deltas;
        rep.keyframe_referenced += br.keyframe_referenced;
        rep.clamped_colors += br.clamped_colors;
        rep.quantization = br.quantization;
        std::erase_if(references, [&](const auto& ref) {
            return std::none_of(plan.parts.begin(), plan.parts.end(), [&](const PlannedPart& p) {
                return p.first_frame == ref.first && p.end_frame > b1;
            });
        });
        b0 = b1;
        tick(o, b1 - first, end - first);
    }
    rep.frames = static_cast<std::size_t>(end - first);
    // Groups of blocks first while there are too many to hold open at once.
    while (spool.entries.size() > kBlocksPerMerge) {
        const std::size_t blocks = spool.entries.size();
        for (std::size_t from = 0; from < blocks; from += kBlocksPerMerge) {
            const std::size_t to = std::min(blocks, from + kBlocksPerMerge);
            FOURDGS_ASSIGN(ByteSink* out,
                           spool.next(spool.entries[from].first, spool.entries[to - 1].end));
            MergeReport ignored;
            FOURDGS_TRY(merge_spooled(spool, from, to, plan, *out, ignored));
            FOURDGS_TRY(spool.close_last());
        }
        spool.drop(blocks);
    }
    MergeReport mr;
    FOURDGS_TRY(merge_spooled(spool, 0, spool.entries.size(), plan, sink, mr));
    rep.chunks = mr.chunks;
    rep.output_bytes = mr.bytes_written;
    return ok_status();
}

}  // namespace

bool natural_less(const std::string& a, const std::string& b) {
    std::size_t i = 0, j = 0;
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    while (i < a.size() && j < b.size()) {
        if (digit(a[i]) && digit(b[j])) {
            std::size_t i2 = i, j2 = j;
            while (i2 < a.size() && a[i2] == '0') ++i2;
            while (j2 < b.size() && b[j2] == '0') ++j2;
            std::size_t ie = i2, je = j2;
            while (ie < a.size() && digit(a[ie])) ++ie;
            while (je < b.size() && digit(b[je])) ++je;
            if (ie - i2 != je - j2) return ie - i2 < je - j2;
            const int c = a.compare(i2, ie - i2, b, j2, je - j2);
            if (c != 0) return c < 0;
            if (ie - i != je - j) return ie - i < je - j;  // fewer leading zeros first
            i = ie;
            j = je;
        } else {
            if (a[i] != b[j]) return a[i] < b[j];
            ++i;
            ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

Result<std::vector<std::string>> list_ply_frames(std::span<const std::string> inputs) {
    namespace fs = std::filesystem;
    std::vector<std::string> out;
    for (const std::string& in : inputs) {
        std::error_code ec;
        const fs::file_status st = fs::status(in, ec);
        if (ec || !fs::exists(st))
            return make_error(ErrorKind::io, refusal::kIoError, "no such file or directory: " + in);
        if (!fs::is_directory(st)) {
            out.push_back(in);
            continue;
        }
        std::vector<std::string> found;
        for (fs::directory_iterator it(in, ec), end; !ec && it != end; it.increment(ec)) {
            std::string ext = it->path().extension().string();
            std::transform(ext.begin(), ext.end(), ext.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            if ((ext == ".ply" || ext == ".splat") && it->is_regular_file(ec))
                found.push_back(it->path().string());
        }
        if (ec) return make_error(ErrorKind::io, refusal::kIoError, "cannot list " + in + ": " + ec.message());
        std::sort(found.begin(), found.end(), natural_less);
        out.insert(out.end(), found.begin(), found.end());
    }
    return out;
}

namespace {

// Writes `file` to the sink, measuring it first when asked.
Status finish_file(std::span<const PlyCloud> frames, const ConvertOptions& o, const Resolved& r,
                   MemorySink& file, ByteSink& sink, ConvertReport& rep) {
    const FrameAt frame_at = [frames](std::size_t k) -> Result<PlyCloud> { return frames[k]; };
    MemorySource source(file.bytes());
    FOURDGS_TRY(measure_error(frames.size(), frame_at, o, r, source, rep));
    return sink.write(Bytes(file.bytes()));
}

}  // namespace

Status convert_frames(std::span<const PlyCloud> frames, const ConvertOptions& options,
                      ByteSink& sink, ConvertReport* report) {
    FOURDGS_ASSIGN(const std::optional<ConvertOptions> levels, levels_options(options));
    if (levels) return convert_frames(frames, *levels, sink, report);
    if (frames.empty()) return bad(refusal::kNoFrames, "there are no frames to convert");
    if (!options.plan && (!std::isfinite(options.fps) || !(options.fps > 0)))
        return bad(refusal::kInvalidOption, "fps is " + std::to_string(options.fps) +
                                         ", must be finite and > 0");
    ConvertReport local;
    ConvertReport& rep = report ? *report : local;
    rep.frames = frames.size();
    rep.input_gaussians = 0;
    for (const PlyCloud& f : frames) rep.input_gaussians += f.count;
    if (options.plan) {
        // The slice's frames, and any earlier frame a part's reference needs (load_frame).
        const std::uint64_t first = options.first_frame;
        const std::uint64_t end = options.end_frame ? options.end_frame : options.plan->frames;
        if (end < first || frames.size() != end - first)
            return bad(refusal::kInvalidOption,
                       std::to_string(frames.size()) + " frames given for the slice [" +
                           std::to_string(first) + ", " + std::to_string(end) + ")");
        FrameReader in;
        in.block = [&](std::uint64_t a, std::uint64_t b) -> Result<std::span<const PlyCloud>> {
            return frames.subspan(static_cast<std::size_t>(a - first),
                                  static_cast<std::size_t>(b - a));
        };
        in.frame = [&](std::uint64_t f) -> Result<PlyCloud> {
            if (f >= first && f < end) return frames[static_cast<std::size_t>(f - first)];
            if (options.load_frame) return options.load_frame(f);
            return bad(refusal::kInvalidOption,
                       "a part of the plan begins at frame " + std::to_string(f) +
                           ", before the slice: load_frame must supply it");
        };
        MemorySpool spool;
        return convert_on_plan(options, in, spool, sink, rep);
    }
    FOURDGS_ASSIGN(Resolved r, resolve(frames, options));
    rep.shape = r.shape;
    if (r.shape == ConvertShape::per_frame) {
        if (options.error_frames == 0) return encode(frames, options, r, sink, rep);
        MemorySink file;
        FOURDGS_TRY(encode(frames, options, r, file, rep));
        return finish_file(frames, options, r, file, sink, rep);
    }
    FOURDGS_TRY(check_tracked(frames));

    RigidParts parts;
    Objects objects;
    std::vector<PlyCloud> held;
    std::span<const PlyCloud> input = frames;
    if (options.rigid_parts) {
        parts = find_parts(frames, options, r);
        report_parts(parts, rep);
        if (!parts.parts.empty()) {
            held = held_in_object_frames(frames, parts);
            input = held;
            objects = objects_of(frames.front(), parts, r);
            r.objects = &objects;
            r.share = share_of_parts(frames_aabb(frames), parts, r);
        }
    }
    if (keyframes_chosen(options, r)) choose_keyframes(still_deviations(frames), parts, options, r);
    if (options.rigid_parts) {
        if (options.part_bytes) {
            // Each part alone: the view of every frame, encoded as this conversion encodes.
            auto encode_view = [&](const TrackedView& view, Resolved& vr, ByteSink& counted) {
                std::vector<PlyCloud> sub;
                sub.reserve(frames.size());
                for (const PlyCloud& f : frames) sub.push_back(view_of(f, frames[0], view));
                ConvertReport ignored;
                return encode(sub, options, vr, counted, ignored);
            };
            FOURDGS_TRY(measure_parts(frames[0], parts, r, encode_view, rep));
        }
    }
    MemorySink tracked;
    FOURDGS_TRY(encode(input, options, r, tracked, rep, &r.incarnations));
    if (options.never_larger_than_per_frame && !options.per_frame_whole) {
        // Counted only until it passes the tracked file (the streamed path's count, so the
        // report is the same); counted whole, it is the smaller, and encoded below to keep.
        FOURDGS_TRY(count_per_frame(streamed_from_memory(frames), options, r, tracked.position(),
                                    rep));
        if (rep.per_frame_partial || rep.per_frame_bytes >= tracked.position())
            return finish_file(frames, options, r, tracked, sink, rep);
    }
    if (options.never_larger_than_per_frame) {
        Resolved flat_r = r;
        flat_r.shape = ConvertShape::per_frame;
        flat_r.objects = nullptr;
        MemorySink flat;
        ConvertReport flat_rep = rep;
        FOURDGS_TRY(convert_per_frame(frames, options, flat_r, flat, flat_rep));
        rep.per_frame_bytes = flat.position();
        if (flat.position() < tracked.position()) {
            rep = std::move(flat_rep);
            rep.per_frame_bytes = flat.position();
            rep.shape = ConvertShape::per_frame;
            return finish_file(frames, options, r, flat, sink, rep);
        }
    }
    return finish_file(frames, options, r, tracked, sink, rep);
}

Status convert_ply_files(std::span<const std::string> paths, const std::string& output,
                         const ConvertOptions& options, ConvertReport* report) {
    FrameSource source;
    source.frames = paths.size();
    source.read = [&](std::uint64_t f) { return read_frame_file(paths[static_cast<std::size_t>(f)]); };
    source.read_into = [&](std::uint64_t f, PlyCloud& into) {
        return read_frame_file_into(paths[static_cast<std::size_t>(f)], into);
    };
    source.read_motion_into = [&](std::uint64_t f, PlyCloud& into) {
        return read_frame_motion_into(paths[static_cast<std::size_t>(f)], into);
    };
    source.concurrent_reads = true;  // each read opens its own file
    source.input_bytes = [&](std::uint64_t f) -> std::uint64_t {
        std::error_code ec;
        const auto size = std::filesystem::file_size(paths[static_cast<std::size_t>(f)], ec);
        return ec ? 0 : size;
    };
    return convert_frame_source(source, output, options, report);
}

Status convert_frame_source(const FrameSource& source, const std::string& output,
                            const ConvertOptions& options, ConvertReport* report) {
    FOURDGS_ASSIGN(const std::optional<ConvertOptions> levels, levels_options(options));
    if (levels) return convert_frame_source(source, output, *levels, report);
    ConvertReport local;
    ConvertReport& rep = report ? *report : local;
    const std::uint64_t frame_count = source.frames;
    if (options.plan && frame_count != options.plan->frames)
        return bad(refusal::kInvalidOption, std::to_string(frame_count) +
                                                " frames given, but the plan was made for " +
                                                std::to_string(options.plan->frames));
    auto read = [&](std::uint64_t i) -> Result<PlyCloud> {
        FOURDGS_ASSIGN(PlyCloud cloud, source.read(i));
        if (source.input_bytes) rep.input_bytes += source.input_bytes(i);
        return cloud;
    };
    // Write beside the output and rename at the end, so a refusal never leaves a partial file.
    const std::string temp = output + ".partial-" + std::to_string(::getpid());
    Status st;
    {
        auto sink = FileSink::create(temp);
        if (!sink.ok()) return std::move(sink).error();
        if (options.plan) {
            // The slice block by block: one block's frames in memory, the blocks in files.
            std::vector<PlyCloud> block;
            FrameReader in;
            in.block = [&](std::uint64_t a, std::uint64_t b) -> Result<std::span<const PlyCloud>> {
                block.clear();
                for (std::uint64_t f = a; f < b && f < frame_count; ++f) {
                    FOURDGS_ASSIGN(PlyCloud cloud, read(f));
                    block.push_back(std::move(cloud));
                }
                return std::span<const PlyCloud>(block);
            };
            in.frame = [&](std::uint64_t f) -> Result<PlyCloud> {
                if (f >= frame_count)
                    return bad(refusal::kInvalidOption, "frame " + std::to_string(f) +
                                                            " is past the sequence");
                return source.read(f);
            };
            FileSpool spool(temp + ".block");
            st = convert_on_plan(options, in, spool, *sink, rep);
        } else if (options.shape == ConvertShape::keyframe_delta) {
            // Read again for each pass rather than held (convert_stream.cpp).
            rep = ConvertReport{};
            st = convert_tracked_streamed(source, options, *sink, rep, temp + ".tracked");
        } else {
            std::vector<PlyCloud> frames;
            rep.input_bytes = 0;
            for (std::uint64_t i = 0; i < frame_count && st.ok(); ++i) {
                auto cloud = read(i);
                if (!cloud.ok()) {
                    st = std::move(cloud).error();
                    break;
                }
                frames.push_back(std::move(*cloud));
                if (options.progress) options.progress(i + 1, frame_count);
            }
            if (st.ok()) st = convert_frames(frames, options, *sink, &rep);
        }
        if (st.ok()) st = sink->close();
    }
    if (st.ok() && std::rename(temp.c_str(), output.c_str()) != 0)
        st = make_error(ErrorKind::io, refusal::kIoError, "cannot rename " + temp + " to " + output);
    if (!st.ok()) std::remove(temp.c_str());
    return st;
}

Status evaluate_scene_at(ByteSource& source, double t, const ExtractOptions& options,
                         SceneInfo& scene_out, Frame& frame) {
    FOURDGS_ASSIGN(SceneAt scene, SceneAt::open(source, options));
    FOURDGS_TRY(scene.at(t, frame));
    scene_out = scene.scene();
    return ok_status();
}

Result<PlyCloud> extract_state(ByteSource& source, double t, const ExtractOptions& options) {
    SceneInfo scene;
    Frame frame;
    FOURDGS_TRY(evaluate_scene_at(source, t, options, scene, frame));
    return ply_from_frame(frame, options.max_sh_degree);
}

}  // namespace fourdgs
