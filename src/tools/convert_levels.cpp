// rot_levels (convert_parts.hpp): its options, the grid's share and the rigid-part search's
// measure in the input's own 8-bit levels.
#include "convert_parts.hpp"

#include "fourdgs/refusals.hpp"
#include "fourdgs/tools/grid_plan.hpp"

namespace fourdgs::convert_parts {

Result<std::optional<ConvertOptions>> levels_options(const ConvertOptions& o) {
    if (o.rot_levels_floor && !o.rot_levels)
        return bad(refusal::kInvalidOption,
                   "tolerance key rot_rounding=floor (rot_levels_floor) needs tolerance key rot_levels: it "
                   "says how the input's rotation bytes were made, which only rot_levels measures in");
    if (!o.rot_levels) return std::optional<ConvertOptions>{};
    if (o.plan || o.shape != ConvertShape::keyframe_delta)
        return bad(refusal::kInvalidOption,
                   "tolerance key rot_levels needs the keyframe-delta shape without a grid plan");
    if (!o.never_larger_than_per_frame) return std::optional<ConvertOptions>{};
    ConvertOptions out = o;
    out.never_larger_than_per_frame = false;
    return std::optional<ConvertOptions>{std::move(out)};
}

// rot_levels: the grid's share, with the finer rotation grid riders need where parts were found
// (`parts`), whose position share is then what they leave, as outside this mode.
PartsShare levels_share(const Resolved& r, bool parts) {
    PartsShare s{r.tolerance.pos, levels_half_width(*r.rot_levels) / levels_grid_share(parts), 1};
    if (parts && r.objects) s.pos = r.share.pos, s.pos_gain = r.share.pos_gain;
    return s;
}

void levels_search(const std::array<double, 6>& aabb, const Resolved& r, RigidOptions& ro) {
    // Riders held inside their boxes (rigid.hpp's RotationLevels), on the rotation grid the
    // file has where parts are found (levels_share: its rotation bound does not depend on
    // what the parts leave), within the box's half-width less the f32 allowance — not
    // tolerance.rot, whose slack is for the scene-frame rotations of shallow boxes alone.
    ro.rot_levels.half = levels_half_width(*r.rot_levels);
    ro.rot_levels.floor = r.rot_levels_floor;
    ro.ride_rot_residual = ro.rot_levels.half;
    const auto grid =
        size_grid(r.shape, r.tolerance, aabb, r.duration, 0, 0, levels_share(r, true));
    if (grid) ro.rot_levels.grid_step = 2 * grid->bounds.rot;
}

}  // namespace fourdgs::convert_parts
