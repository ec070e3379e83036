// `convert --tracked --model gaussian-birth` (convert.hpp, §12): adaptive temporal sampling, each
// gaussian's frames cut into the fewest linear records that stay within the tolerance.
#include "convert_parts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fourdgs/pose.hpp"
#include "fourdgs/quantize.hpp"
#include "fourdgs/reconstruct.hpp"
#include "fourdgs/refusals.hpp"

namespace fourdgs::convert_parts {
namespace {

struct FitTolerance {
    double pos, scale_log, rot, rgb, alpha;
};

// One gaussian's state in frame k, normalized for comparison.
struct Sample {
    std::array<double, 3> p, log_s;
    std::array<double, 4> q;
    std::array<double, 4> c;
};

Sample sample_of(const PlyCloud& f, std::size_t g) {
    Sample s;
    double nq = 0;
    for (int c = 0; c < 4; ++c) nq += double(f.rotation[g * 4 + c]) * f.rotation[g * 4 + c];
    nq = nq > 0 ? std::sqrt(nq) : 1;
    for (int c = 0; c < 3; ++c) {
        s.p[c] = f.position[g * 3 + c];
        s.log_s[c] = std::log(std::max(double(f.scale[g * 3 + c]), 1e-30));
    }
    for (int c = 0; c < 4; ++c) {
        s.q[c] = f.rotation[g * 4 + c] / nq;
        s.c[c] = std::clamp(double(f.color[g * 4 + c]), 0.0, 1.0);
    }
    return s;
}

// Whether gaussian g of `x` (sampled as `xs`) keeps the scale, colour, opacity and SH bytes it
// has in `first` (sampled as `fs`), within `tol`: what one record holds for its whole range.
bool holds_appearance(const PlyCloud& first, const Sample& fs, const PlyCloud& x,
                      const Sample& xs, std::size_t g, const FitTolerance& tol) {
    for (int c = 0; c < 3; ++c) {
        if (std::fabs(xs.log_s[c] - fs.log_s[c]) > tol.scale_log) return false;
        if (std::fabs(xs.c[c] - fs.c[c]) > tol.rgb) return false;
    }
    if (std::fabs(xs.c[3] - fs.c[3]) > tol.alpha) return false;
    const std::size_t per = static_cast<std::size_t>(first.sh_per_gaussian());
    for (std::size_t j = 0; j < per; ++j)
        if (sh_byte(x.sh[g * per + j]) != sh_byte(first.sh[g * per + j])) return false;
    return true;
}

// Whether frames [a, b) of gaussian g are one record within `tol`: the line from frame a's
// position to frame b-1's, and every other attribute held at frame a's value (SH bytes equal).
// A part's gaussian is given in its part's frame and `turns` holds its track's sample per frame:
// the line's miss is measured as the track turns it into the scene's (empty: given there).
bool span_fits(std::span<const PlyCloud> frames, std::span<const Sample> s, std::size_t g,
               std::size_t a, std::size_t b, const FitTolerance& tol,
               std::span<const TrajectorySample> turns) {
    if (b - a <= 1) return true;
    const Sample& first = s[a];
    const Sample& last = s[b - 1];
    const double dt = static_cast<double>(b - 1 - a);
    for (std::size_t k = a + 1; k < b; ++k) {
        const Sample& x = s[k];
        const double u = static_cast<double>(k - a) / dt;
        Vec3 miss;
        for (int c = 0; c < 3; ++c) miss[c] = first.p[c] + (last.p[c] - first.p[c]) * u - x.p[c];
        if (!turns.empty()) miss = rotate(turns[k].rotation, miss);
        for (int c = 0; c < 3; ++c)
            if (std::fabs(miss[c]) > tol.pos) return false;
        double ep = 0, en = 0;
        for (int c = 0; c < 4; ++c) {
            ep = std::max(ep, std::fabs(x.q[c] - first.q[c]));
            en = std::max(en, std::fabs(x.q[c] + first.q[c]));
        }
        if (std::min(ep, en) > tol.rot) return false;
        if (!holds_appearance(frames[a], first, frames[k], x, g, tol)) return false;
    }
    return true;
}

struct Span {
    std::uint32_t g, a, b;  // gaussian, frames [a, b) of those given
};

void bisect(std::span<const PlyCloud> frames, std::span<const Sample> s, std::size_t g,
            std::size_t a, std::size_t b, const FitTolerance& tol,
            std::span<const TrajectorySample> turns, std::vector<Span>& out) {
    if (span_fits(frames, s, g, a, b, tol, turns)) {
        out.push_back({static_cast<std::uint32_t>(g), static_cast<std::uint32_t>(a),
                       static_cast<std::uint32_t>(b)});
        return;
    }
    const std::size_t mid = a + (b - a) / 2;
    bisect(frames, s, g, a, mid, tol, turns, out);
    bisect(frames, s, g, mid, b, tol, turns, out);
}

// A planned part's member is one record over the part's frames: every frame of the block must
// keep the appearance it has in the part's reference (block_parts has checked its pose).
Status check_held_appearance(std::span<const PlyCloud> frames, std::span<const Sample> samples,
                             std::size_t g, const plan_parts::BlockParts& held,
                             const GridPlan& plan, std::uint64_t first, const FitTolerance& fit) {
    const plan_parts::HeldPart& h = held.held[held.held_of[g]];
    const Sample rest = sample_of(*h.reference, g);
    for (std::size_t k = 0; k < frames.size(); ++k)
        if (!holds_appearance(*h.reference, rest, frames[k], samples[k], g, fit))
            return outside_plan("frame " + std::to_string(first + k) + " gaussian " +
                                std::to_string(g) + " changes its scale, colour, opacity or SH " +
                                "by more than half the tolerance within " +
                                plan_parts::describe(plan.parts[h.part]) +
                                ", which one record holds");
    return ok_status();
}

// The track samples that turn gaussian g of `nf` frames from its part's frame into the scene's
// (none: it is in the scene's). A part's rider is fitted in the part's frame and its miss
// measured in the scene's; the grid's, velocity's and mu_t's shares in its frame are divided by
// what the poses turn them by (parts_share). Only unplanned (a plan's parts are held): its track
// has a sample per frame given.
Result<std::span<const TrajectorySample>> turns_of(const Resolved& r, std::size_t g,
                                                   std::size_t nf) {
    if (!r.objects || r.objects->object_of[g] == 0) return std::span<const TrajectorySample>();
    const std::span<const TrajectorySample> turns =
        r.objects->tracks[r.objects->object_of[g] - 1].samples;
    if (turns.size() != nf)
        return bad(refusal::kInternalError, "gaussian " + std::to_string(g) +
                                                "'s part has a track of " +
                                                std::to_string(turns.size()) + " samples for " +
                                                std::to_string(nf) + " frames");
    return turns;
}

}  // namespace

Status convert_adaptive(std::span<const PlyCloud> frames, const ConvertOptions& o, Resolved& r,
                        ByteSink& sink, ConvertReport& rep) {
    FOURDGS_TRY(check_tracked(frames));
    const QuantBounds& B = r.tolerance;
    const FitTolerance fit{B.pos / 2, B.scale_rel / 2, B.rot / 2, B.rgb / 2, B.alpha / 2};

    // Segments: on a plan, records never span a multiple of segment_frames, so each shard fits
    // exactly the records a whole-sequence encode on the plan fits.
    const std::size_t n = frames.front().count, nf = frames.size();
    std::vector<std::pair<std::size_t, std::size_t>> segments;
    const std::uint64_t seg = r.segment ? r.segment : r.total;
    for (std::uint64_t a = r.first; a < r.end;) {
        const std::uint64_t b = std::min<std::uint64_t>(r.end, (a / seg + 1) * seg);
        segments.push_back({a - r.first, b - r.first});
        a = b;
    }
    std::vector<Span> spans;
    std::vector<Sample> samples(nf);
    // On a plan, a member of a part is one record over the part's frames, written by the block
    // that holds its first frame (`owned`): here it is only checked to keep its appearance.
    std::vector<std::uint32_t> owned;
    for (std::size_t g = 0; g < n; ++g) {
        for (std::size_t k = 0; k < nf; ++k) samples[k] = sample_of(frames[k], g);
        if (r.held && r.held->held_of[g] >= 0) {
            FOURDGS_TRY(check_held_appearance(frames, samples, g, *r.held, *r.plan, r.first, fit));
            const plan_parts::HeldPart& h = r.held->held[r.held->held_of[g]];
            if (r.plan->parts[h.part].first_frame == r.first)
                owned.push_back(static_cast<std::uint32_t>(g));
            continue;
        }
        FOURDGS_ASSIGN(const std::span<const TrajectorySample> turns, turns_of(r, g, nf));
        for (const auto& [a, b] : segments) bisect(frames, samples, g, a, b, fit, turns, spans);
        if ((g & 1023) == 0) tick(o, g, n);
    }
    tick(o, n, n);

    // One record per span: frame a's state, moving along the fitted line.
    const std::size_t m = spans.size() + owned.size();
    const std::size_t per = static_cast<std::size_t>(frames.front().sh_per_gaussian());
    GaussianColumns cols;
    cols.sh_degree = frames.front().sh_degree;
    cols.resize(m);
    std::fill(cols.sigma_t.begin(), cols.sigma_t.end(), kInf);
    if (r.objects) cols.object_id.resize(m);
    double vmax = 0, longest_moving = 0;
    std::size_t fastest = 0;
    for (std::size_t rec = 0; rec < spans.size(); ++rec) {
        const Span& sp = spans[rec];
        const PlyCloud& fa = frames[sp.a];
        const PlyCloud& fb = frames[sp.b - 1];
        const double ta = r.time_of(r.first + sp.a), tb = r.time_of(r.first + sp.b - 1);
        for (int c = 0; c < 3; ++c) {
            cols.position[rec * 3 + c] = fa.position[sp.g * 3 + c];
            const double v = sp.b - sp.a > 1
                                 ? (double(fb.position[sp.g * 3 + c]) - fa.position[sp.g * 3 + c]) /
                                       (tb - ta)
                                 : 0.0;
            cols.motion[rec * 3 + c] = static_cast<float>(v);
            cols.scale[rec * 3 + c] = fa.scale[sp.g * 3 + c];
            if (std::fabs(v) > vmax) vmax = std::fabs(v), fastest = rec;
        }
        for (int c = 0; c < 4; ++c) {
            cols.rotation[rec * 4 + c] = fa.rotation[sp.g * 4 + c];
            cols.color[rec * 4 + c] = std::clamp(fa.color[sp.g * 4 + c], 0.0f, 1.0f);
            rep.clamped_colors +=
                std::fabs(cols.color[rec * 4 + c] - fa.color[sp.g * 4 + c]) > 1e-6f;
        }
        cols.mu_t[rec] = static_cast<float>(ta);
        cols.win_lo[rec] = ta;
        cols.win_hi[rec] = r.time_of(r.first + sp.b);
        if (cols.motion[rec * 3] != 0 || cols.motion[rec * 3 + 1] != 0 ||
            cols.motion[rec * 3 + 2] != 0)
            longest_moving = std::max(longest_moving, cols.win_hi[rec] - cols.win_lo[rec]);
        std::copy_n(fa.sh.begin() + sp.g * per, per, cols.sh.begin() + rec * per);
        if (r.objects) cols.object_id[rec] = r.objects->object_of[sp.g];
    }
    // A part's members, still at their reference (this block's first frame) over the part's span.
    for (std::size_t i = 0; i < owned.size(); ++i) {
        const std::size_t rec = spans.size() + i, g = owned[i];
        const PlannedPart& part = r.plan->parts[r.held->held[r.held->held_of[g]].part];
        const PlyCloud& fa = frames.front();
        std::copy_n(fa.position.begin() + g * 3, 3, cols.position.begin() + rec * 3);
        std::copy_n(fa.scale.begin() + g * 3, 3, cols.scale.begin() + rec * 3);
        std::copy_n(fa.rotation.begin() + g * 4, 4, cols.rotation.begin() + rec * 4);
        for (int c = 0; c < 4; ++c) {
            cols.color[rec * 4 + c] = std::clamp(fa.color[g * 4 + c], 0.0f, 1.0f);
            rep.clamped_colors += std::fabs(cols.color[rec * 4 + c] - fa.color[g * 4 + c]) > 1e-6f;
        }
        cols.mu_t[rec] = static_cast<float>(r.time_of(part.first_frame));
        cols.win_lo[rec] = r.time_of(part.first_frame);
        cols.win_hi[rec] = r.time_of(part.end_frame);
        std::copy_n(fa.sh.begin() + g * per, per, cols.sh.begin() + rec * per);
        if (r.objects) cols.object_id[rec] = r.objects->object_of[g];
    }

    // The quantization half of the budget (grid_tolerance): from what the fit found, or on a plan
    // from what the plan allows, which the records must then stay within.
    if (!r.plan) {
        FOURDGS_ASSIGN(r.writer.grid,
                       size_grid(ConvertShape::adaptive, B, frames_aabb(frames), r.duration,
                                 longest_moving, vmax, grid_share(r)));
    } else if (vmax > r.plan->max_speed) {
        const Span& sp = spans[fastest];
        return outside_plan("gaussian " + std::to_string(sp.g) + " moves at " + detail::fmt(vmax) +
                            " units/s over frames [" + std::to_string(r.first + sp.a) + ", " +
                            std::to_string(r.first + sp.b) +
                            "), faster than the plan's max_speed " +
                            detail::fmt(r.plan->max_speed));
    }
    return write_columns(cols, base_header(frames, o, r), r, sink, rep);
}

}  // namespace fourdgs::convert_parts
