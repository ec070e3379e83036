// Grid plans (grid_plan.hpp): one grid for a whole frame sequence, sized to its tolerance, and
// its JSON file.
#include "fourdgs/tools/grid_plan.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <utility>

#include "fourdgs/text.hpp"
#include "fourdgs/portable.hpp"
#include "fourdgs/tools/splat_formats.hpp"
#include "json_text.hpp"
#include "plan_parts.hpp"

namespace fourdgs {
namespace {

Error bad_option(std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal::kInvalidOption, std::move(message));
}

std::string num(double v) { return detail::fmt(v); }

using json_text::Json;

// One JSON object read against a schema: each key asked for once, typed; unknown keys refused at
// finish(). Errors name the plan and the key path ("grid.step_pos").
class Fields {
public:
    Fields(const Json& j, std::string path, std::string_view name)
        : j_(j), path_(std::move(path)), name_(name) {}

    Status is_object() const {
        if (j_.kind != Json::Kind::object)
            return bad(path_.empty() ? "the plan" : path_, "is not an object");
        return ok_status();
    }

    // Whether the object has `key` (for the keys a plan may leave out).
    bool has(std::string_view key) const {
        for (const auto& m : j_.members)
            if (m.first == key) return true;
        return false;
    }

    Result<const Json*> get(std::string_view key) {
        used_.emplace_back(key);
        for (const auto& m : j_.members)
            if (m.first == key) return &m.second;
        return bad(at(key), "is missing");
    }

    Result<double> number(std::string_view key) {
        FOURDGS_ASSIGN(const Json* v, get(key));
        if (v->kind != Json::Kind::number) return bad(at(key), "is not a number");
        return v->number;
    }

    Result<std::uint64_t> whole(std::string_view key, std::uint64_t max) {
        FOURDGS_ASSIGN(const Json* v, get(key));
        if (v->kind != Json::Kind::number || !v->integral || v->number < 0 ||
            v->number > static_cast<double>(max))
            return bad(at(key), "is not a whole number in 0.." + std::to_string(max));
        return static_cast<std::uint64_t>(v->number);
    }

    Result<std::string> text(std::string_view key) {
        FOURDGS_ASSIGN(const Json* v, get(key));
        if (v->kind != Json::Kind::string) return bad(at(key), "is not a string");
        return v->text;
    }

    Result<std::vector<double>> numbers(std::string_view key, std::size_t min_n,
                                        std::size_t max_n) {
        FOURDGS_ASSIGN(const Json* v, get(key));
        if (v->kind != Json::Kind::array || v->items.size() < min_n || v->items.size() > max_n)
            return bad(at(key), min_n == max_n
                                    ? "is not an array of " + std::to_string(min_n) + " numbers"
                                    : "is not an array of " + std::to_string(min_n) + ".." +
                                          std::to_string(max_n) + " numbers");
        std::vector<double> out;
        for (const Json& item : v->items) {
            if (item.kind != Json::Kind::number)
                return bad(at(key), "holds something other than a number");
            out.push_back(item.number);
        }
        return out;
    }

    Result<Fields> object(std::string_view key) {
        FOURDGS_ASSIGN(const Json* v, get(key));
        Fields f(*v, at(key), name_);
        FOURDGS_TRY(f.is_object());
        return f;
    }

    Status finish() const {
        for (const auto& m : j_.members)
            if (std::find(used_.begin(), used_.end(), m.first) == used_.end())
                return bad(at(m.first), "is not a key a grid plan has");
        return ok_status();
    }

    Error bad(const std::string& what, const std::string& problem) const {
        return make_error(ErrorKind::invalid_argument, refusal::kMalformedPlan,
                          std::string(name_) + ": " + what + " " + problem)
            .about("grid plan " + std::string(name_), what);
    }

    std::string at(std::string_view key) const {
        return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
    }

    std::string_view name() const { return name_; }

private:
    const Json& j_;
    std::string path_;
    std::string_view name_;
    std::vector<std::string> used_;
};

constexpr std::string_view kPlanFormat = "fourdgs-grid-plan";
constexpr std::uint64_t kPlanVersion = 2;
// Room for the parts' member runs of a large capture; the text is read whole.
constexpr std::size_t kMaxPlanBytes = std::size_t{64} << 20;

struct BoundKey {
    const char* key;
    double QuantBounds::*field;
};
constexpr BoundKey kBoundKeys[] = {
    {"pos", &QuantBounds::pos},     {"scale_rel", &QuantBounds::scale_rel},
    {"rot", &QuantBounds::rot},     {"rgb", &QuantBounds::rgb},
    {"alpha", &QuantBounds::alpha}, {"motion", &QuantBounds::motion},
    {"time", &QuantBounds::time},   {"sigma_rel", &QuantBounds::sigma_rel}};

std::string bounds_json(const QuantBounds& b, const char* indent) {
    std::string out = "{\n";
    for (std::size_t k = 0; k < std::size(kBoundKeys); ++k)
        out += std::string(indent) + "  \"" + kBoundKeys[k].key +
               "\": " + num(b.*kBoundKeys[k].field) +
               (k + 1 < std::size(kBoundKeys) ? ",\n" : "\n");
    return out + indent + "}";
}

Result<QuantBounds> read_bounds(Fields& parent, std::string_view key) {
    FOURDGS_ASSIGN(Fields f, parent.object(key));
    QuantBounds b;
    for (const BoundKey& k : kBoundKeys) {
        FOURDGS_ASSIGN(b.*k.field, f.number(k.key));
    }
    FOURDGS_TRY(f.finish());
    return b;
}

// The share of a tolerance the grid may take, and the grid (see grid_plan.hpp).
QuantBounds scale_bounds(const QuantBounds& b, double pos, double rest) {
    QuantBounds q = b;
    q.pos = b.pos * pos;
    q.scale_rel = b.scale_rel * rest;
    q.rot = b.rot * rest;
    q.rgb = b.rgb * rest;
    q.alpha = b.alpha * rest;
    return q;
}

double largest_side(const std::array<double, 6>& box) {
    return std::max({box[3] - box[0], box[4] - box[1], box[5] - box[2]});
}

Result<std::vector<std::uint8_t>> resolve_depths(int sh_degree, ShLadder ladder,
                                                 const std::vector<std::uint8_t>& explicit_depths) {
    std::vector<std::uint8_t> out;
    if (sh_degree == 0) return out;
    if (!explicit_depths.empty()) {
        if (static_cast<int>(explicit_depths.size()) != sh_degree)
            return bad_option("sh_depths has " + std::to_string(explicit_depths.size()) +
                              " entries; the frames' SH degree " + std::to_string(sh_degree) +
                              " needs one per band");
        for (std::uint8_t d : explicit_depths)
            if (d < 3 || d > 8)
                return bad_option("an SH depth of " + std::to_string(d) + "; depths are 3..8");
        return explicit_depths;
    }
    if (ladder == ShLadder::none) return out;
    const auto d = ladder_depths(ladder);
    out.assign(d.begin(), d.begin() + sh_degree);
    return out;
}

// The alignment a plan made under `o` will have (GridPlan::alignment()), which the part search
// cuts the sequence on.
std::uint64_t search_alignment(std::uint64_t frames, const PlanOptions& o) {
    if (o.shape == ConvertShape::keyframe_delta) return gop_frames(o.keyframe_every, o.fps);
    if (o.shape == ConvertShape::adaptive && o.segment_frames) return o.segment_frames;
    return std::max<std::uint64_t>(1, frames);
}

// A plan's parts take a quarter of pos and rot from its grid (quarter_share); none without parts.
std::optional<PartsShare> planned_share(const GridPlan& p) {
    if (p.parts.empty()) return std::nullopt;
    return quarter_share(p.tolerance);
}

// A reader composes a track in f64 and stores the centre as f32: a few ulps at this reach.
double f32_allowance(double reach) { return 4 * 0x1p-23 * std::max(reach, 1.0); }

double reach_of(const std::array<double, 6>& aabb) {
    double reach = 0;
    for (double v : aabb) reach = std::max(reach, std::fabs(v));
    return reach;
}

}  // namespace

std::uint32_t gop_frames(std::uint32_t keyframe_every, double fps) {
    if (keyframe_every != 0) return keyframe_every;
    return std::isfinite(fps) && fps > 0 && fps < 1e6
               ? static_cast<std::uint32_t>(std::max(1.0, std::round(fps)))
               : 10;
}

std::string_view to_string(ConvertShape shape) {
    switch (shape) {
        case ConvertShape::per_frame: return "per-frame";
        case ConvertShape::keyframe_delta: return "keyframe-delta";
        case ConvertShape::adaptive: return "adaptive";
    }
    return "unknown";
}

std::optional<ConvertShape> parse_convert_shape(std::string_view name) {
    for (ConvertShape s :
         {ConvertShape::per_frame, ConvertShape::keyframe_delta, ConvertShape::adaptive})
        if (name == to_string(s)) return s;
    return std::nullopt;
}

std::array<double, 6> frames_aabb(std::span<const PlyCloud> frames) {
    std::array<double, 6> box{};
    for (int c = 0; c < 3; ++c) {
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (const PlyCloud& f : frames)
            for (std::size_t i = 0; i < f.count; ++i) {
                lo = std::min<double>(lo, f.position[i * 3 + c]);
                hi = std::max<double>(hi, f.position[i * 3 + c]);
            }
        if (lo <= hi) box[c] = lo, box[3 + c] = hi;
    }
    return box;
}

QuantBounds preset_tolerance(Preset preset, double extent) {
    QuantBounds t = preset_bounds(preset, extent);
    // What the whole quaternion meets when each stored component meets the preset's rot (§6.4).
    t.rot = declared_bounds(FixedGrid{{0, 0, 0}, preset_bounds(preset, extent), 0}, 1).rot;
    t.motion = 0;  // derived from pos by the grid (§6.3's displacement guarantee)
    return t;
}

Result<QuantBounds> parse_tolerance(std::string_view spec, QuantBounds base) {
    std::size_t i = 0;
    while (i < spec.size()) {
        std::size_t j = spec.find(',', i);
        if (j == std::string_view::npos) j = spec.size();
        const std::string_view item = spec.substr(i, j - i);
        const std::size_t eq = item.find('=');
        if (eq == std::string_view::npos)
            return bad_option("tolerance '" + std::string(item) + "' is not key=value");
        const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
        const BoundKey* found = nullptr;
        for (const BoundKey& k : kBoundKeys)
            if (key == k.key) found = &k;
        if (!found)
            return bad_option("unknown tolerance '" + std::string(key) +
                              "' (pos, scale_rel, rot, rgb, alpha, motion, time, sigma_rel)");
        double v = 0;
        const auto res = fourdgs::from_chars(value.data(), value.data() + value.size(), v);
        if (value.empty() || res.ec != std::errc() || res.ptr != value.data() + value.size() ||
            !std::isfinite(v))
            return bad_option("tolerance '" + std::string(key) + "' is '" + std::string(value) +
                              "', not a finite number");
        base.*found->field = v;
        i = j + 1;
    }
    return base;
}

PartsShare quarter_share(const QuantBounds& tolerance) {
    return {tolerance.pos / 4, tolerance.rot / 4, 1};
}

PartsShare parts_share(ConvertShape shape, const QuantBounds& tolerance, const PartsFit& fit,
                       double reach) {
    if (shape == ConvertShape::adaptive) {
        if (fit.rider_pos_gain == 0) return quarter_share(tolerance);
        return {(tolerance.pos / 4 - f32_allowance(reach)) / fit.rider_pos_gain, tolerance.rot / 4,
                fit.rider_pos_gain};
    }
    return {(tolerance.pos - f32_allowance(reach) - fit.member_pos) / fit.pos_gain,
            (tolerance.rot - std::max(fit.member_rot, fit.rider_rot)) / fit.rot_gain};
}

QuantBounds grid_tolerance(ConvertShape shape, const QuantBounds& b, double longest_moving_sec,
                           double max_speed, const std::optional<PartsShare>& parts) {
    QuantBounds q = shape == ConvertShape::adaptive ? scale_bounds(b, 0.25, 0.5) : b;
    if (parts) q.pos = std::min(q.pos, parts->pos), q.rot = std::min(q.rot, parts->rot);
    if (shape == ConvertShape::keyframe_delta) q.rgb = b.rgb / kHeldColourLattice;
    if (shape != ConvertShape::adaptive) return q;
    // A velocity error dv moves a record by at most dv x its window; §6.3 scales the velocity
    // step with the lifetime up to 2 s, so this is pos/8 for windows up to 2 s and window/4 times
    // the class-0 bound beyond.
    const double turned = parts ? parts->pos_gain : 1;
    q.motion = (b.pos / 8) / std::max(0.5, longest_moving_sec / 4) / turned;
    q.time = max_speed > 0 ? std::min(b.time / 2, (b.pos / 8) / max_speed / turned) : b.time / 2;
    return q;
}

Result<FixedGrid> size_grid(ConvertShape shape, const QuantBounds& tolerance,
                            const std::array<double, 6>& aabb, double duration_sec,
                            double longest_moving_sec, double max_speed,
                            const std::optional<PartsShare>& parts) {
    QuantBounds share = grid_tolerance(shape, tolerance, longest_moving_sec, max_speed, parts);
    // A fast record asks for a birth-time grid finer than f32 holds mu_t to over this clock
    // (grid_for_tolerance's floor, 4 x 2^-23 x the clock): the grid stops at twice that floor.
    if (shape == ConvertShape::adaptive)
        share.time = std::max(share.time, 8 * 0x1p-23 * std::max(duration_sec, 1.0));
    return grid_for_tolerance(share, aabb, duration_sec);
}

std::pair<double, double> rigid_residuals(const QuantBounds& tolerance, const QuantBounds& share,
                                          double reach) {
    return {tolerance.pos - std::sqrt(3.0) * share.pos - f32_allowance(reach),
            tolerance.rot - 2 * share.rot};
}

RigidOptions rigid_search_options(ConvertShape shape, const QuantBounds& tolerance, double reach,
                                  std::size_t min_members) {
    const QuantBounds share = grid_tolerance(shape, tolerance, 0, 0, quarter_share(tolerance));
    const auto [pos, rot] = rigid_residuals(tolerance, share, reach);
    RigidOptions o;
    o.pos_residual = pos;
    o.rot_residual = rot;
    o.min_members = min_members;
    return o;
}

std::uint64_t GridPlan::alignment() const {
    if (shape == ConvertShape::keyframe_delta) return keyframe_every;
    if (shape == ConvertShape::adaptive) return segment_frames ? segment_frames : frames;
    return 1;
}

std::vector<std::uint64_t> plan_sample(std::uint64_t frames, const PlanOptions& o) {
    std::vector<std::uint64_t> out;
    if (frames == 0) return out;
    const bool tracked = o.shape != ConvertShape::per_frame;
    if (o.sample_frames == 0 || o.sample_frames >= frames) {
        for (std::uint64_t f = 0; f < frames; ++f) out.push_back(f);
        return out;
    }
    const std::uint64_t k = o.sample_frames;
    for (std::uint64_t i = 0; i < k; ++i) {
        const std::uint64_t f = k == 1 ? 0 : (i * (frames - 1) + (k - 1) / 2) / (k - 1);
        out.push_back(f);
        if (tracked && f + 1 < frames) out.push_back(f + 1);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (tracked && o.rigid_parts) {
        // The part search also needs the first frame of every span it visits (plan_parts.hpp).
        const std::vector<std::uint64_t> starts =
            plan_parts::span_starts(frames, search_alignment(frames, o), out);
        out.insert(out.end(), starts.begin(), starts.end());
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
    }
    return out;
}

Result<GridPlan> make_grid_plan(std::uint64_t frames, std::span<const PlyCloud> sample,
                                std::span<const std::uint64_t> sample_index, const PlanOptions& o,
                                const PlanFrameReader& read_frame) {
    if (frames == 0 || sample.empty())
        return make_error(ErrorKind::invalid_argument, refusal::kNoFrames,
                          "there are no frames to plan");
    if (!std::isfinite(o.fps) || !(o.fps > 0))
        return bad_option("fps is " + num(o.fps) + ", must be finite and > 0");
    if (sample.size() != sample_index.size())
        return bad_option(std::to_string(sample.size()) + " sample frames for " +
                          std::to_string(sample_index.size()) + " indices");
    if (!std::is_sorted(sample_index.begin(), sample_index.end()) ||
        std::adjacent_find(sample_index.begin(), sample_index.end()) != sample_index.end())
        return bad_option("the sample's frame indices are not ascending");
    if (!std::isfinite(o.margin) || o.margin < 0)
        return bad_option("margin is " + num(o.margin) + ", must be finite and >= 0");
    if (!std::isfinite(o.max_speed) || o.max_speed < 0)
        return bad_option("max_speed is " + num(o.max_speed) + ", must be finite and >= 0");
    GridPlan p;
    p.frames = frames;
    p.fps = o.fps;
    p.duration_sec = static_cast<double>(frames) / o.fps;
    p.shape = o.shape;
    p.keyframe_every = gop_frames(o.keyframe_every, o.fps);
    p.effort = o.effort;
    p.segment_frames = o.shape == ConvertShape::adaptive ? o.segment_frames : 0;
    p.sh_degree = sample.front().sh_degree;
    const bool tracked = o.shape != ConvertShape::per_frame;
    for (std::size_t k = 0; k < sample.size(); ++k) {
        if (sample_index[k] >= frames)
            return bad_option("sample frame " + std::to_string(sample_index[k]) + " of a " +
                              std::to_string(frames) + "-frame sequence");
        if (sample[k].sh_degree != p.sh_degree)
            return make_error(ErrorKind::invalid_argument, refusal::kShDegreeMismatch,
                              "frame " + std::to_string(sample_index[k]) + " has SH degree " +
                                  std::to_string(sample[k].sh_degree) + " but frame " +
                                  std::to_string(sample_index[0]) + " has " +
                                  std::to_string(p.sh_degree));
        if (tracked && sample[k].count != sample[0].count)
            return make_error(ErrorKind::invalid_argument, refusal::kFramesNotTracked,
                              "frame " + std::to_string(sample_index[k]) + " holds " +
                                  std::to_string(sample[k].count) + " gaussians but frame " +
                                  std::to_string(sample_index[0]) + " holds " +
                                  std::to_string(sample[0].count) +
                                  "; a tracked plan needs the same gaussians in every frame");
    }
    p.gaussians_per_frame = tracked ? sample.front().count : 0;
    std::array<double, 6> box = frames_aabb(sample);
    if (o.aabb) {
        box = *o.aabb;
    } else if (sample.size() < frames) {
        const double widen = o.margin * largest_side(box);
        for (int c = 0; c < 3; ++c) {
            box[c] -= widen;
            box[3 + c] += widen;
        }
    }
    p.aabb = box;
    p.tolerance = o.tolerance ? *o.tolerance : preset_tolerance(o.preset, largest_side(box));
    // Adaptive: the fastest record a span can fit is no faster than the fastest motion between
    // two consecutive frames; the sample's successor pairs show it, doubled for what they miss.
    p.max_speed = 0;
    if (o.shape == ConvertShape::adaptive) {
        p.max_speed = o.max_speed;
        if (p.max_speed == 0) {
            double fastest = 0;
            for (std::size_t k = 0; k + 1 < sample.size(); ++k) {
                if (sample_index[k + 1] != sample_index[k] + 1) continue;
                const PlyCloud& a = sample[k];
                const PlyCloud& b = sample[k + 1];
                for (std::size_t i = 0; i < a.count * 3; ++i)
                    fastest =
                        std::max(fastest, std::fabs(double(b.position[i]) - a.position[i]) * o.fps);
            }
            p.max_speed = 2 * fastest;
        }
    }
    if (tracked && o.rigid_parts)
        p.parts = plan_parts::search(
            frames, p.alignment(), sample, sample_index,
            rigid_search_options(p.shape, p.tolerance, reach_of(p.aabb), o.rigid_min_members));
    if (read_frame)
        FOURDGS_TRY(plan_parts::drop_strays(p, o.rigid_min_members, sample, sample_index,
                                            read_frame));
    const double segment =
        p.segment_frames ? std::min<double>(p.segment_frames, double(frames)) : double(frames);
    FOURDGS_ASSIGN(p.grid, size_grid(p.shape, p.tolerance, p.aabb, p.duration_sec, segment / o.fps,
                                     p.max_speed, planned_share(p)));
    FOURDGS_ASSIGN(p.sh_depths, resolve_depths(p.sh_degree, o.sh_ladder, o.sh_depths));
    return p;
}

Result<GridPlan> plan_ply_files(std::span<const std::string> paths, const PlanOptions& o) {
    const std::vector<std::uint64_t> index = plan_sample(paths.size(), o);
    std::vector<PlyCloud> sample;
    sample.reserve(index.size());
    for (std::uint64_t f : index) {
        FOURDGS_ASSIGN(PlyCloud cloud, read_frame_file(paths[f]));
        sample.push_back(std::move(cloud));
    }
    return make_grid_plan(paths.size(), sample, index, o,
                          [paths](std::uint64_t f) { return read_frame_file(paths[f]); });
}

namespace {

// The plan's text up to its digest: every key but the last.
std::string plan_body(const GridPlan& p) {
    std::string depths;
    for (std::size_t b = 0; b < p.sh_depths.size(); ++b)
        depths += (b ? ", " : "") + std::to_string(p.sh_depths[b]);
    std::string aabb;
    for (int c = 0; c < 6; ++c) aabb += (c ? ", " : "") + num(p.aabb[c]);
    const FixedGrid& g = p.grid;
    std::string out = "{\n";
    out += "  \"format\": \"" + std::string(kPlanFormat) + "\",\n";
    out += "  \"version\": " + std::to_string(kPlanVersion) + ",\n";
    out += "  \"scene\": {\n";
    out += "    \"frames\": " + std::to_string(p.frames) + ",\n";
    out += "    \"fps\": " + num(p.fps) + ",\n";
    out += "    \"duration_sec\": " + num(p.duration_sec) + ",\n";
    out += "    \"sh_degree\": " + std::to_string(p.sh_degree) + ",\n";
    out += "    \"gaussians_per_frame\": " + std::to_string(p.gaussians_per_frame) + ",\n";
    out += "    \"aabb\": [" + aabb + "]\n";
    out += "  },\n";
    out += "  \"encoding\": {\n";
    out += "    \"shape\": \"" + std::string(to_string(p.shape)) + "\",\n";
    out += "    \"keyframe_every\": " + std::to_string(p.keyframe_every) + ",\n";
    out += "    \"segment_frames\": " + std::to_string(p.segment_frames) + ",\n";
    const bool effort = p.effort != Effort::default_;
    out += "    \"max_speed\": " + num(p.max_speed) + (effort ? ",\n" : "\n");
    if (effort) out += "    \"effort\": \"" + std::string(to_string(p.effort)) + "\"\n";
    out += "  },\n";
    out += "  \"tolerance\": " + bounds_json(p.tolerance, "  ") + ",\n";
    out += "  \"grid\": {\n";
    out += "    \"scheme\": \"uniform-v1\",\n";
    out += "    \"pos_origin\": [" + num(g.origin[0]) + ", " + num(g.origin[1]) + ", " +
           num(g.origin[2]) + "],\n";
    out += "    \"reach\": " + num(g.reach) + ",\n";
    out += "    \"step_pos\": " + num(2 * g.bounds.pos) + ",\n";
    out += "    \"step_scale_log\": " + num(2 * g.bounds.scale_rel) + ",\n";
    out += "    \"step_rot\": " + num(2 * g.bounds.rot) + ",\n";
    out += "    \"step_rgb\": " + num(2 * g.bounds.rgb) + ",\n";
    out += "    \"step_alpha\": " + num(2 * g.bounds.alpha) + ",\n";
    out += "    \"step_motion\": " + num(2 * g.bounds.motion) + ",\n";
    out += "    \"step_time\": " + num(2 * g.bounds.time) + ",\n";
    out += "    \"step_sigma_log\": " + num(2 * g.bounds.sigma_rel) + ",\n";
    out += "    \"sh_depths\": [" + depths + "]\n";
    out += "  },\n";
    out += "  \"declared_bounds\": " + bounds_json(declared_bounds(g, p.duration_sec), "  ") + ",\n";
    out += "  \"parts\": [";
    for (std::size_t j = 0; j < p.parts.size(); ++j) {
        const PlannedPart& part = p.parts[j];
        out += std::string(j ? "," : "") + "\n    {\"kind\": \"" + (part.rigid ? "rigid" : "static") +
               "\", \"object_id\": " + std::to_string(part.object_id) + ", \"frames\": [" +
               std::to_string(part.first_frame) + ", " + std::to_string(part.end_frame) +
               "], \"anchor\": [" + num(part.anchor[0]) + ", " + num(part.anchor[1]) + ", " +
               num(part.anchor[2]) + "], \"members\": \"" + plan_parts::runs_text(part.members) +
               "\"}";
    }
    out += p.parts.empty() ? "]" : "\n  ]";
    return out;
}

// FNV-1a, 64 bits: a plan's identity, not a defence against forgery.
std::string fnv1a64(std::string_view text) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return std::string("fnv1a64:") + hex;
}

}  // namespace

std::string plan_digest(const GridPlan& plan) { return fnv1a64(plan_body(plan)); }

std::string grid_plan_json(const GridPlan& p) {
    const std::string body = plan_body(p);
    return body + ",\n  \"digest\": \"" + fnv1a64(body) + "\"\n}\n";
}

namespace {

// The "parts" array into p.parts (after scene and encoding: the checks use frames, alignment and
// gaussians_per_frame).
Status read_parts(Fields& top, GridPlan& p) {
    FOURDGS_ASSIGN(const Json* list, top.get("parts"));
    if (list->kind != Json::Kind::array) return top.bad("parts", "is not an array");
    if (!list->items.empty() && p.gaussians_per_frame == 0)
        return top.bad("parts", "is not empty on a plan that is not tracked");
    const std::uint64_t a = std::max<std::uint64_t>(1, p.alignment());
    std::vector<std::uint32_t> ids;
    for (std::size_t j = 0; j < list->items.size(); ++j) {
        Fields f(list->items[j], "parts[" + std::to_string(j) + "]", top.name());
        FOURDGS_TRY(f.is_object());
        PlannedPart part;
        FOURDGS_ASSIGN(const std::string kind, f.text("kind"));
        if (kind != "static" && kind != "rigid")
            return f.bad(f.at("kind"), "is \"" + kind + "\" (static, rigid)");
        part.rigid = kind == "rigid";
        FOURDGS_ASSIGN(const std::uint64_t id, f.whole("object_id", 0xFFFFFFFFu));
        part.object_id = static_cast<std::uint32_t>(id);
        if (part.rigid != (id != 0) ||
            std::find(ids.begin(), ids.end(), part.object_id) != ids.end())
            return f.bad(f.at("object_id"), "is " + std::to_string(id) +
                                                 "; a rigid part has an id of its own, a static "
                                                 "part 0");
        if (part.rigid) ids.push_back(part.object_id);
        FOURDGS_ASSIGN(const std::vector<double> span, f.numbers("frames", 2, 2));
        if (!(span[0] >= 0 && span[0] < span[1] && span[1] <= double(p.frames) &&
              span[0] == std::floor(span[0]) && span[1] == std::floor(span[1])))
            return f.bad(f.at("frames"), "is not a span [first, end) of the plan's " +
                                             std::to_string(p.frames) + " frames");
        part.first_frame = static_cast<std::uint64_t>(span[0]);
        part.end_frame = static_cast<std::uint64_t>(span[1]);
        if (part.first_frame % a != 0 || (part.end_frame % a != 0 && part.end_frame != p.frames))
            return f.bad(f.at("frames"), "does not start and end on a multiple of " +
                                             std::to_string(a) + ", the plan's alignment");
        FOURDGS_ASSIGN(const std::vector<double> anchor, f.numbers("anchor", 3, 3));
        for (int c = 0; c < 3; ++c) {
            part.anchor[c] = static_cast<float>(anchor[c]);
            if (!std::isfinite(part.anchor[c]) || double(part.anchor[c]) != anchor[c])
                return f.bad(f.at("anchor"), "holds " + num(anchor[c]) + ", not a finite f32");
        }
        FOURDGS_ASSIGN(const std::string members, f.text("members"));
        std::string why;
        auto runs = plan_parts::parse_runs(members, p.gaussians_per_frame, why);
        if (!runs) return f.bad(f.at("members"), why);
        part.members = std::move(*runs);
        FOURDGS_TRY(f.finish());
        // A gaussian is in one part at a time.
        for (std::size_t i = 0; i < p.parts.size(); ++i) {
            const PlannedPart& other = p.parts[i];
            if (other.end_frame <= part.first_frame || part.end_frame <= other.first_frame)
                continue;
            for (std::size_t x = 0, y = 0; x < part.members.size() && y < other.members.size();) {
                const auto& [xa, xb] = part.members[x];
                const auto& [ya, yb] = other.members[y];
                if (xa < yb && ya < xb)
                    return f.bad(f.at("members"),
                                 "shares gaussian " + std::to_string(std::max(xa, ya)) +
                                     " with parts[" + std::to_string(i) +
                                     "] over frames they both cover");
                (xb <= yb ? x : y)++;
            }
        }
        p.parts.push_back(std::move(part));
    }
    return ok_status();
}

// The plan's "grid": the uniform-v1 scheme, an origin, a reach that holds the aabb, each step
// (twice its bound) and the SH depths, one per band of the scene's degree.
Status read_grid(Fields& top, GridPlan& p) {
    FOURDGS_ASSIGN(Fields f, top.object("grid"));
    FOURDGS_ASSIGN(const std::string scheme, f.text("scheme"));
    if (scheme != "uniform-v1")
        return f.bad(f.at("scheme"), "is \"" + scheme + "\", not \"uniform-v1\"");
    FOURDGS_ASSIGN(const std::vector<double> origin, f.numbers("pos_origin", 3, 3));
    std::copy(origin.begin(), origin.end(), p.grid.origin.begin());
    FOURDGS_ASSIGN(p.grid.reach, f.number("reach"));
    double reach = 0;
    for (double v : p.aabb) reach = std::max(reach, std::fabs(v));
    if (!(p.grid.reach >= reach))
        return f.bad(f.at("reach"),
                     "is " + num(p.grid.reach) + ", less than the aabb's " + num(reach));
    const std::pair<const char*, double QuantBounds::*> steps[] = {
        {"step_pos", &QuantBounds::pos},     {"step_scale_log", &QuantBounds::scale_rel},
        {"step_rot", &QuantBounds::rot},     {"step_rgb", &QuantBounds::rgb},
        {"step_alpha", &QuantBounds::alpha}, {"step_motion", &QuantBounds::motion},
        {"step_time", &QuantBounds::time},   {"step_sigma_log", &QuantBounds::sigma_rel}};
    for (const auto& [key, field] : steps) {
        FOURDGS_ASSIGN(const double step, f.number(key));
        if (!(step > 0)) return f.bad(f.at(key), "is not > 0");
        p.grid.bounds.*field = step / 2;  // exact: a step is twice its bound
    }
    FOURDGS_ASSIGN(const std::vector<double> depths, f.numbers("sh_depths", 0, 3));
    if (!depths.empty() && static_cast<int>(depths.size()) != p.sh_degree)
        return f.bad(f.at("sh_depths"), "has " + std::to_string(depths.size()) +
                                            " entries for SH degree " +
                                            std::to_string(p.sh_degree));
    for (double d : depths) {
        if (!(d >= 3 && d <= 8 && d == std::floor(d)))
            return f.bad(f.at("sh_depths"),
                         "holds " + num(d) + "; depths are whole numbers 3..8");
        p.sh_depths.push_back(static_cast<std::uint8_t>(d));
    }
    FOURDGS_TRY(f.finish());
    return ok_status();
}

}  // namespace

Result<GridPlan> parse_grid_plan(std::string_view json, std::string_view name) {
    if (json.size() > kMaxPlanBytes)
        return make_error(ErrorKind::invalid_argument, refusal::kMalformedPlan,
                          std::string(name) + ": " + std::to_string(json.size()) +
                              " bytes; a grid plan is at most 64 MiB")
            .about("grid plan", std::string(name));
    FOURDGS_ASSIGN(const Json doc, json_text::Parser(json, name, refusal::kMalformedPlan, "grid plan").document());
    Fields top(doc, "", name);
    FOURDGS_TRY(top.is_object());
    FOURDGS_ASSIGN(const std::string format, top.text("format"));
    if (format != kPlanFormat)
        return top.bad("format", "is \"" + format + "\", not \"fourdgs-grid-plan\"");
    FOURDGS_ASSIGN(const std::uint64_t version, top.whole("version", 1000));
    if (version != kPlanVersion)
        return top.bad("version", "is " + std::to_string(version) + "; this build reads version " +
                                      std::to_string(kPlanVersion) +
                                      " (make the plan again with this build)");
    GridPlan p;
    {
        FOURDGS_ASSIGN(Fields f, top.object("scene"));
        FOURDGS_ASSIGN(p.frames, f.whole("frames", std::uint64_t{1} << 40));
        if (p.frames == 0) return f.bad(f.at("frames"), "is 0");
        FOURDGS_ASSIGN(p.fps, f.number("fps"));
        if (!(p.fps > 0)) return f.bad(f.at("fps"), "is not > 0");
        FOURDGS_ASSIGN(p.duration_sec, f.number("duration_sec"));
        if (p.duration_sec != static_cast<double>(p.frames) / p.fps)
            return f.bad(f.at("duration_sec"),
                         "is " + num(p.duration_sec) +
                             ", not frames / fps = " + num(static_cast<double>(p.frames) / p.fps));
        FOURDGS_ASSIGN(const std::uint64_t degree, f.whole("sh_degree", 3));
        p.sh_degree = static_cast<int>(degree);
        FOURDGS_ASSIGN(p.gaussians_per_frame,
                       f.whole("gaussians_per_frame", std::uint64_t{1} << 32));
        FOURDGS_ASSIGN(const std::vector<double> box, f.numbers("aabb", 6, 6));
        for (int c = 0; c < 3; ++c)
            if (!(box[c] <= box[3 + c]))
                return f.bad(f.at("aabb"), "has min > max on axis " + std::to_string(c));
        std::copy(box.begin(), box.end(), p.aabb.begin());
        FOURDGS_TRY(f.finish());
    }
    {
        FOURDGS_ASSIGN(Fields f, top.object("encoding"));
        FOURDGS_ASSIGN(const std::string shape, f.text("shape"));
        const auto parsed = parse_convert_shape(shape);
        if (!parsed)
            return f.bad(f.at("shape"),
                         "is \"" + shape + "\" (per-frame, adaptive, keyframe-delta)");
        p.shape = *parsed;
        FOURDGS_ASSIGN(const std::uint64_t every, f.whole("keyframe_every", 0xFFFFFFFFu));
        if (every == 0) return f.bad(f.at("keyframe_every"), "is 0");
        p.keyframe_every = static_cast<std::uint32_t>(every);
        FOURDGS_ASSIGN(const std::uint64_t segment, f.whole("segment_frames", 0xFFFFFFFFu));
        p.segment_frames = static_cast<std::uint32_t>(segment);
        FOURDGS_ASSIGN(p.max_speed, f.number("max_speed"));
        if (!(p.max_speed >= 0)) return f.bad(f.at("max_speed"), "is negative");
        if (f.has("effort")) {
            FOURDGS_ASSIGN(const std::string effort, f.text("effort"));
            const auto level = parse_effort(effort);
            if (!level) return f.bad(f.at("effort"), "is \"" + effort + "\" (fast, default, max)");
            p.effort = *level;
        }
        FOURDGS_TRY(f.finish());
    }
    FOURDGS_ASSIGN(p.tolerance, read_bounds(top, "tolerance"));
    FOURDGS_TRY(read_grid(top, p));
    FOURDGS_ASSIGN(const QuantBounds declared, read_bounds(top, "declared_bounds"));
    FOURDGS_TRY(read_parts(top, p));
    FOURDGS_ASSIGN(const std::string digest, top.text("digest"));
    FOURDGS_TRY(top.finish());
    // The declaration is derived; it must be what the grid declares, and within the tolerance.
    const QuantBounds want = declared_bounds(p.grid, p.duration_sec);
    for (const BoundKey& k : kBoundKeys)
        if (declared.*k.field != want.*k.field)
            return top.bad(
                std::string("declared_bounds.") + k.key,
                "is " + num(declared.*k.field) + " but the grid declares " + num(want.*k.field));
    const QuantBounds share = grid_tolerance(p.shape, p.tolerance, 0, 0, planned_share(p));
    for (const BoundKey& k : kBoundKeys) {
        if (std::string_view(k.key) == "motion" || std::string_view(k.key) == "time") continue;
        if (!(p.tolerance.*k.field > 0) || want.*k.field > share.*k.field)
            return top.bad(
                std::string("declared_bounds.") + k.key,
                "is " + num(want.*k.field) + ", over the tolerance's " + num(share.*k.field));
    }
    if (!(p.tolerance.time > 0) || !(p.tolerance.motion >= 0))
        return top.bad("tolerance", "has a time that is not > 0 or a negative motion");
    // Last: a plan that is well formed but not the one its digest names was edited by hand.
    if (const std::string own = plan_digest(p); digest != own)
        return make_error(ErrorKind::invalid_argument, refusal::kPlanEdited,
                          std::string(name) + ": its content is " + own + " but its digest says " +
                              digest +
                              ": it was edited by hand after 4dgs plan wrote it; make the plan "
                              "again (4dgs plan), and encode every shard on the new one")
            .about("grid plan " + std::string(name), "digest");
    return p;
}

Result<GridPlan> read_grid_plan(const std::string& path) {
    FOURDGS_ASSIGN(const std::vector<std::uint8_t> bytes, read_file(path));
    return parse_grid_plan(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path);
}

Status write_grid_plan(const GridPlan& plan, const std::string& path) {
    const std::string text = grid_plan_json(plan);
    const std::string temp = path + ".partial-" + std::to_string(::getpid());
    Status st;
    {
        auto sink = FileSink::create(temp);
        if (!sink.ok()) return std::move(sink).error();
        st =
            sink->write(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
        if (st.ok()) st = sink->close();
    }
    if (st.ok() && std::rename(temp.c_str(), path.c_str()) != 0)
        st = make_error(ErrorKind::io, refusal::kIoError, "cannot rename " + temp + " to " + path);
    if (!st.ok()) std::remove(temp.c_str());
    return st;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> plan_slices(const GridPlan& plan,
                                                                 std::size_t shards) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
    const std::uint64_t a = std::max<std::uint64_t>(1, plan.alignment());
    const std::uint64_t blocks = (plan.frames + a - 1) / a;  // the last may be short
    const std::uint64_t n = std::min<std::uint64_t>(shards, blocks);
    for (std::uint64_t k = 0; k < n; ++k) {
        const std::uint64_t first = blocks * k / n * a;
        const std::uint64_t end = std::min(plan.frames, blocks * (k + 1) / n * a);
        out.push_back({first, end});
    }
    return out;
}

void apply_plan(const GridPlan& plan, WriterOptions& options) {
    options.grid = plan.grid;
    options.sh_ladder = ShLadder::none;
    options.sh_depths = plan.sh_depths;
    options.effort = plan.effort;
}

}  // namespace fourdgs
