// Rigid parts on a grid plan (grid_plan.hpp, "Rigid parts"), the internal half: the search a
// plan runs on its sample, the members' text in the plan file, and what one block of frames
// encoded on the plan makes of the parts (their poses, checked member by member). convert.cpp
// stores what this finds; nothing here writes a file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/pose.hpp"
#include "fourdgs/tools/grid_plan.hpp"
#include "fourdgs/tools/ply.hpp"
#include "fourdgs/tools/rigid.hpp"

namespace fourdgs::plan_parts {

using Runs = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

// The spans the search visits over a `frames`-long sequence cut in blocks of `alignment` frames:
// the whole sequence, then the halves (on block boundaries) of each visited span that holds
// something still to sort, while a span holds its first frame and two more of `sampled`. Returns
// the first frames of the spans that hold two more of `sampled` (sorted, distinct): what a plan
// must read besides its sample.
std::vector<std::uint64_t> span_starts(std::uint64_t frames, std::uint64_t alignment,
                                       std::span<const std::uint64_t> sampled);

// The parts of a tracked sequence found on its sample (`sample` the frames `index` names,
// ascending): over each visited span whose first frame the sample holds, find_rigid_parts on the
// span's sample frames among the gaussians not yet in a part. Static groups become static parts,
// rigid ones rigid parts with object ids 1, 2, ... in the order found, anchored at their
// centroid in the span's first frame.
std::vector<PlannedPart> search(std::uint64_t frames, std::uint64_t alignment,
                                std::span<const PlyCloud> sample,
                                std::span<const std::uint64_t> index, const RigidOptions& options);

// Keeps of `plan.parts` (found by search() on `sample`, the frames `index` names) what every
// frame of each part's span holds: each part is checked at each frame of its span as a shard
// checks it (part_pose, follows_pose with part_residuals), the frames the sample lacks read one
// at a time by `read_frame`; a member that strays at any frame is dropped (a rigid part is checked
// again after a drop, its poses being fitted over its members), a part left with fewer than
// `min_members` is dropped, and the rigid parts are renumbered 1, 2, ... and re-anchored. The
// reader's refusals, and frames-not-tracked for a frame of another count.
Status drop_strays(GridPlan& plan, std::size_t min_members, std::span<const PlyCloud> sample,
                   std::span<const std::uint64_t> index, const PlanFrameReader& read_frame);

// The residuals every member of a part is held to (rigid_search_options at the plan's reach).
RigidOptions part_residuals(const GridPlan& plan);

// The pose carrying a part's `reference` (its span's first frame) onto `at`, frame `frame` of the
// sequence: the identity for a static part and at the reference, else Horn's fit over `members`.
Pose part_pose(const PlannedPart& part, std::uint64_t frame, const PlyCloud& reference,
               const PlyCloud& at, std::span<const std::uint32_t> members);

// Members as text, "a-b,c-d" (runs [a, b)), and back: nullopt with `why` set when the text is not
// ascending, disjoint, non-adjacent, non-empty runs below `limit`.
std::string runs_text(const Runs& runs);
std::optional<Runs> parse_runs(std::string_view text, std::uint64_t limit, std::string& why);

// The runs of the gaussians whose flag is set.
Runs runs_of(std::span<const std::uint8_t> flags);

std::uint64_t member_count(const Runs& runs);

// "rigid part 3 of frames [0, 600)", "the static part of frames [0, 30)": a part in messages.
std::string describe(const PlannedPart& part);

// What a block of frames [first, first + frames.size()) encoded on `plan` holds of its parts:
// every part whose span covers the block (a block lies on the plan's alignment, so it is wholly
// inside or outside each span), with its reference — the span's first frame — and the pose that
// carries the reference onto each frame of the block (Horn's fit over the members; the identity
// for a static part and at the reference itself). Every member is checked at every frame against
// the pose (rigid.hpp's follows_pose with the plan's residuals): refusal outside-plan naming
// frame, gaussian and part where it strays. `reference_frame(f)` gives frame f of the sequence
// when the block does not hold it (a span that began in an earlier block).
struct HeldPart {
    std::size_t part = 0;           // index into plan.parts
    const PlyCloud* reference = nullptr;
    std::vector<Pose> poses;        // one per frame of the block
    std::vector<std::uint32_t> members;
};
struct BlockParts {
    std::vector<HeldPart> held;
    std::vector<std::int32_t> held_of;  // per gaussian: index into `held`, -1 when in none
    bool empty() const { return held.empty(); }
};
using FrameLoader = std::function<Result<const PlyCloud*>(std::uint64_t frame)>;
Result<BlockParts> block_parts(const GridPlan& plan, std::uint64_t first,
                               std::span<const PlyCloud> frames, const FrameLoader& reference_frame);

}  // namespace fourdgs::plan_parts
