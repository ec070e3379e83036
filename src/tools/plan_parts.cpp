// Rigid parts on a grid plan (plan_parts.hpp): the search over spans of the sample, members as
// text, and the parts one block of frames holds, checked.
#include "plan_parts.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "fourdgs/text.hpp"

namespace fourdgs::plan_parts {
namespace {

std::uint64_t block_count(std::uint64_t frames, std::uint64_t alignment) {
    return (frames + alignment - 1) / alignment;
}

// [first, end) of blocks [a, b).
std::pair<std::uint64_t, std::uint64_t> span_of(std::uint64_t a, std::uint64_t b,
                                                std::uint64_t frames, std::uint64_t alignment) {
    return {a * alignment, std::min(frames, b * alignment)};
}

// How many of `sampled` (ascending) lie in [first, end), besides `first` itself.
std::size_t sampled_inside(std::span<const std::uint64_t> sampled, std::uint64_t first,
                           std::uint64_t end) {
    const auto lo = std::upper_bound(sampled.begin(), sampled.end(), first);
    const auto hi = std::lower_bound(sampled.begin(), sampled.end(), end);
    return lo < hi ? static_cast<std::size_t>(hi - lo) : 0;
}

constexpr std::size_t kSearchedBeyondFirst = 2;  // a span is searched on its first frame and two more

// A rigid part's anchor: its members' centroid in `reference`.
std::array<float, 3> centroid_of(const PlyCloud& reference, std::span<const std::uint32_t> members) {
    std::array<double, 3> sum{};
    for (std::uint32_t g : members)
        for (int c = 0; c < 3; ++c) sum[c] += reference.position[g * 3 + c];
    std::array<float, 3> out{};
    for (int c = 0; c < 3; ++c) out[c] = static_cast<float>(sum[c] / double(members.size()));
    return out;
}

std::vector<std::uint32_t> members_of(const PlannedPart& part) {
    std::vector<std::uint32_t> out;
    for (const auto& [a, b] : part.members)
        for (std::uint32_t g = a; g < b; ++g) out.push_back(g);
    return out;
}  // a span is searched on its first frame and two more

class Search {
public:
    Search(std::uint64_t frames, std::uint64_t alignment, std::span<const PlyCloud> sample,
           std::span<const std::uint64_t> index, const RigidOptions& options)
        : frames_(frames), alignment_(alignment), sample_(sample), index_(index), options_(options),
          candidate_(sample.front().count, 1) {}

    std::vector<PlannedPart> run() {
        visit(0, block_count(frames_, alignment_));
        return std::move(parts_);
    }

private:
    void visit(std::uint64_t a, std::uint64_t b) {
        const auto [first, end] = span_of(a, b, frames_, alignment_);
        if (sampled_inside(index_, first, end) < kSearchedBeyondFirst) return;
        const auto at = std::lower_bound(index_.begin(), index_.end(), first);
        if (at != index_.end() && *at == first) {
            const auto i0 = static_cast<std::size_t>(at - index_.begin());
            const auto i1 = static_cast<std::size_t>(
                std::lower_bound(index_.begin(), index_.end(), end) - index_.begin());
            sort_span(first, end, sample_.subspan(i0, i1 - i0));
        }
        if (b - a < 2 || std::find(candidate_.begin(), candidate_.end(), 1) == candidate_.end())
            return;
        const std::uint64_t mid = a + (b - a) / 2;
        visit(a, mid);
        visit(mid, b);
    }

    void sort_span(std::uint64_t first, std::uint64_t end, std::span<const PlyCloud> frames) {
        const RigidParts found = find_rigid_parts(frames, options_, candidate_);
        // A static group as small as a rigid one the search would drop is left to the temporal
        // model too: on a sparse sample a few gaussians can look still by chance.
        if (found.static_count >= std::max<std::size_t>(options_.min_members, 1)) {
            PlannedPart p;
            p.first_frame = first;
            p.end_frame = end;
            p.members = runs_of(found.is_static);
            parts_.push_back(std::move(p));
            for (std::size_t g = 0; g < found.is_static.size(); ++g)
                if (found.is_static[g]) candidate_[g] = 0;
        }
        for (const RigidPart& rp : found.parts) {
            PlannedPart p;
            p.rigid = true;
            p.object_id = next_id_++;
            p.first_frame = first;
            p.end_frame = end;
            std::vector<std::uint8_t> flags(candidate_.size(), 0);
            for (std::uint32_t g : rp.members) {
                flags[g] = 1;
                candidate_[g] = 0;
            }
            p.anchor = centroid_of(frames.front(), rp.members);
            p.members = runs_of(flags);
            parts_.push_back(std::move(p));
        }
    }

    std::uint64_t frames_, alignment_;
    std::span<const PlyCloud> sample_;
    std::span<const std::uint64_t> index_;
    RigidOptions options_;
    std::vector<std::uint8_t> candidate_;
    std::vector<PlannedPart> parts_;
    std::uint32_t next_id_ = 1;
};

void collect_starts(std::uint64_t a, std::uint64_t b, std::uint64_t frames,
                    std::uint64_t alignment, std::span<const std::uint64_t> sampled,
                    std::vector<std::uint64_t>& out) {
    const auto [first, end] = span_of(a, b, frames, alignment);
    if (sampled_inside(sampled, first, end) < kSearchedBeyondFirst) return;
    out.push_back(first);
    if (b - a < 2) return;
    const std::uint64_t mid = a + (b - a) / 2;
    collect_starts(a, mid, frames, alignment, sampled, out);
    collect_starts(mid, b, frames, alignment, sampled, out);
}

}  // namespace

std::string describe(const PlannedPart& p) {
    return (p.rigid ? "rigid part " + std::to_string(p.object_id) : std::string("the static part")) +
           " of frames [" + std::to_string(p.first_frame) + ", " + std::to_string(p.end_frame) +
           ")";
}

std::vector<std::uint64_t> span_starts(std::uint64_t frames, std::uint64_t alignment,
                                       std::span<const std::uint64_t> sampled) {
    std::vector<std::uint64_t> out;
    if (frames == 0 || alignment == 0) return out;
    collect_starts(0, block_count(frames, alignment), frames, alignment, sampled, out);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<PlannedPart> search(std::uint64_t frames, std::uint64_t alignment,
                                std::span<const PlyCloud> sample,
                                std::span<const std::uint64_t> index, const RigidOptions& options) {
    if (sample.empty() || frames == 0 || alignment == 0) return {};
    return Search(frames, alignment, sample, index, options).run();
}

Runs runs_of(std::span<const std::uint8_t> flags) {
    Runs runs;
    for (std::size_t g = 0; g < flags.size(); ++g) {
        if (!flags[g]) continue;
        const auto at = static_cast<std::uint32_t>(g);
        if (!runs.empty() && runs.back().second == at)
            ++runs.back().second;
        else
            runs.push_back({at, at + 1});
    }
    return runs;
}

std::uint64_t member_count(const Runs& runs) {
    std::uint64_t n = 0;
    for (const auto& [a, b] : runs) n += b - a;
    return n;
}

std::string runs_text(const Runs& runs) {
    std::string out;
    for (const auto& [a, b] : runs) {
        if (!out.empty()) out += ',';
        out += std::to_string(a) + '-' + std::to_string(b);
    }
    return out;
}

std::optional<Runs> parse_runs(std::string_view text, std::uint64_t limit, std::string& why) {
    Runs runs;
    std::size_t i = 0;
    auto number = [&](std::uint64_t& v) {
        const auto res = std::from_chars(text.data() + i, text.data() + text.size(), v);
        if (res.ec != std::errc() || res.ptr == text.data() + i) return false;
        i = static_cast<std::size_t>(res.ptr - text.data());
        return true;
    };
    while (true) {
        std::uint64_t a = 0, b = 0;
        if (!number(a) || i >= text.size() || text[i++] != '-' || !number(b)) {
            why = "is not a list of runs a-b at character " + std::to_string(i);
            return std::nullopt;
        }
        if (!(a < b) || b > limit || (!runs.empty() && a <= runs.back().second)) {
            why = "has the run " + std::to_string(a) + "-" + std::to_string(b) +
                  ", which is empty, reaches past " + std::to_string(limit) +
                  " gaussians or does not follow the run before it with a gap";
            return std::nullopt;
        }
        runs.push_back({static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b)});
        if (i == text.size()) return runs;
        if (text[i++] != ',') {
            why = "is not a list of runs a-b at character " + std::to_string(i);
            return std::nullopt;
        }
    }
}

Status drop_strays(GridPlan& plan, std::size_t min_members, std::span<const PlyCloud> sample,
                   std::span<const std::uint64_t> index, const PlanFrameReader& read_frame) {
    std::vector<PlannedPart>& parts = plan.parts;
    if (parts.empty()) return {};
    const RigidOptions residuals = part_residuals(plan);
    const std::size_t n = sample.front().count;
    auto sampled = [&](std::uint64_t f) -> const PlyCloud* {
        const auto at = std::lower_bound(index.begin(), index.end(), f);
        return at != index.end() && *at == f ? &sample[static_cast<std::size_t>(at - index.begin())]
                                             : nullptr;
    };
    std::vector<std::vector<std::uint32_t>> members(parts.size());
    std::vector<const PlyCloud*> reference(parts.size());
    for (std::size_t j = 0; j < parts.size(); ++j) {
        members[j] = members_of(parts[j]);
        reference[j] = sampled(parts[j].first_frame);  // the search ran on spans it samples
    }
    // A rigid part's poses are fitted over its members, so dropping one moves the poses of the
    // frames already passed: such a part is checked again until a pass drops nothing. A static
    // part's pose is the identity, so one pass settles it.
    std::vector<std::uint8_t> pending(parts.size(), 1);
    std::vector<std::uint32_t> kept;
    while (std::find(pending.begin(), pending.end(), 1) != pending.end()) {
        std::vector<std::uint8_t> dropped(parts.size(), 0);
        for (std::uint64_t f = 0; f < plan.frames; ++f) {
            bool needed = false;
            for (std::size_t j = 0; j < parts.size(); ++j)
                needed |= pending[j] && parts[j].first_frame <= f && f < parts[j].end_frame;
            if (!needed) continue;
            PlyCloud read;
            const PlyCloud* frame = sampled(f);
            if (!frame) {
                FOURDGS_ASSIGN(read, read_frame(f));
                frame = &read;
            }
            if (frame->count != n)
                return make_error(ErrorKind::invalid_argument, refusal::kFramesNotTracked,
                                  "frame " + std::to_string(f) + " holds " +
                                      std::to_string(frame->count) + " gaussians but frame " +
                                      std::to_string(index.front()) + " holds " +
                                      std::to_string(n) +
                                      "; a tracked plan needs the same gaussians in every frame");
            for (std::size_t j = 0; j < parts.size(); ++j) {
                const PlannedPart& part = parts[j];
                if (!pending[j] || f < part.first_frame || f >= part.end_frame ||
                    members[j].empty())
                    continue;
                const Pose pose = part_pose(part, f, *reference[j], *frame, members[j]);
                kept.clear();
                for (std::uint32_t g : members[j])
                    if (follows_pose(*reference[j], *frame, g, pose, residuals)) kept.push_back(g);
                if (kept.size() == members[j].size()) continue;
                members[j].swap(kept);
                dropped[j] = 1;
            }
        }
        for (std::size_t j = 0; j < parts.size(); ++j)
            pending[j] = dropped[j] && parts[j].rigid && !members[j].empty();
    }
    // What is left of each part, renumbered; a part left smaller than the search keeps is
    // left to the temporal model, as the search leaves one.
    std::vector<PlannedPart> out;
    std::uint32_t next_id = 1;
    for (std::size_t j = 0; j < parts.size(); ++j) {
        if (members[j].size() < std::max<std::size_t>(min_members, 1)) continue;
        PlannedPart part = std::move(parts[j]);
        if (part.rigid) {
            part.object_id = next_id++;
            part.anchor = centroid_of(*reference[j], members[j]);
        }
        std::vector<std::uint8_t> flags(n, 0);
        for (std::uint32_t g : members[j]) flags[g] = 1;
        part.members = runs_of(flags);
        out.push_back(std::move(part));
    }
    parts = std::move(out);
    return {};
}

RigidOptions part_residuals(const GridPlan& plan) {
    double reach = 0;
    for (double v : plan.aabb) reach = std::max(reach, std::fabs(v));
    return rigid_search_options(plan.shape, plan.tolerance, reach, 0);
}

Pose part_pose(const PlannedPart& part, std::uint64_t frame, const PlyCloud& reference,
               const PlyCloud& at, std::span<const std::uint32_t> members) {
    if (!part.rigid || frame == part.first_frame) return Pose{};  // the identity
    return fit_pose(reference, at, members);
}

Result<BlockParts> block_parts(const GridPlan& plan, std::uint64_t first,
                               std::span<const PlyCloud> frames, const FrameLoader& reference_frame) {
    BlockParts out;
    if (plan.parts.empty() || frames.empty()) return out;
    const std::uint64_t end = first + frames.size();
    const std::size_t n = frames.front().count;
    const RigidOptions residuals = part_residuals(plan);
    out.held_of.assign(n, -1);
    for (std::size_t j = 0; j < plan.parts.size(); ++j) {
        const PlannedPart& part = plan.parts[j];
        if (part.end_frame <= first || part.first_frame >= end) continue;
        if (part.first_frame > first || part.end_frame < end)
            return make_error(ErrorKind::invalid_argument, refusal::kInvalidOption,
                              "frames [" + std::to_string(first) + ", " + std::to_string(end) +
                                  ") cut across " + describe(part) +
                                  "; a block of frames lies on the plan's alignment");
        HeldPart h;
        h.part = j;
        if (part.first_frame == first) {
            h.reference = &frames.front();
        } else {
            FOURDGS_ASSIGN(h.reference, reference_frame(part.first_frame));
        }
        if (h.reference->count != n)
            return make_error(ErrorKind::invalid_argument, refusal::kOutsidePlan,
                              "frame " + std::to_string(part.first_frame) + " holds " +
                                  std::to_string(h.reference->count) + " gaussians but frame " +
                                  std::to_string(first) + " holds " + std::to_string(n));
        for (const auto& [a, b] : part.members)
            for (std::uint32_t g = a; g < b; ++g) {
                if (g >= n)
                    return make_error(ErrorKind::invalid_argument, refusal::kOutsidePlan,
                                      describe(part) + " names gaussian " + std::to_string(g) +
                                          " but frame " + std::to_string(first) + " holds " +
                                          std::to_string(n));
                out.held_of[g] = static_cast<std::int32_t>(out.held.size());
                h.members.push_back(g);
            }
        h.poses.resize(frames.size());
        for (std::size_t k = 0; k < frames.size(); ++k) {
            h.poses[k] = part_pose(part, first + k, *h.reference, frames[k], h.members);
            for (std::uint32_t g : h.members) {
                if (follows_pose(*h.reference, frames[k], g, h.poses[k], residuals)) continue;
                const Vec3 at = fourdgs::apply(h.poses[k], {h.reference->position[g * 3],
                                                   h.reference->position[g * 3 + 1],
                                                   h.reference->position[g * 3 + 2]});
                return make_error(
                    ErrorKind::invalid_argument, refusal::kOutsidePlan,
                    "frame " + std::to_string(first + k) + " gaussian " + std::to_string(g) +
                        " leaves " + describe(part) + ": it is at (" +
                        detail::fmt(frames[k].position[g * 3]) + ", " +
                        detail::fmt(frames[k].position[g * 3 + 1]) + ", " +
                        detail::fmt(frames[k].position[g * 3 + 2]) + ") where the part puts it at (" +
                        detail::fmt(at[0]) + ", " + detail::fmt(at[1]) + ", " + detail::fmt(at[2]) +
                        "), or turned, past the residuals " + detail::fmt(residuals.pos_residual) +
                        " and " + detail::fmt(residuals.rot_residual) +
                        "; make the plan again with these frames in its sample (--sample 0 scans "
                        "every frame)");
            }
        }
        out.held.push_back(std::move(h));
    }
    return out;
}

}  // namespace fourdgs::plan_parts
