// `4dgs convert`, `4dgs plan`, `4dgs slices`, `4dgs merge`: frames to a .4dgs scene, and the
// sharded path (a grid plan, its slices, the shards joined into one file).
#include <fourdgs/fourdgs.hpp>
#include <fourdgs/tools/convert.hpp>
#include <fourdgs/tools/grid_plan.hpp>
#include <fourdgs/tools/merge.hpp>
#include <fourdgs/tools/ply.hpp>
#include <fourdgs/tools/splat_formats.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "output.hpp"

namespace cli {
namespace {

using namespace fourdgs;

// ---- convert -------------------------------------------------------------------------------

// The options convert and plan share: how the frames become a scene and what tolerance it keeps.
struct EncodeArgs {
    std::vector<std::string> inputs;
    std::string output, preset = "default", sh_bits = "none", model = "gaussian-birth", tolerance;
    std::string effort = "default";
    double fps = 0;
    bool tracked = false, json = false;
    std::uint32_t keyframe_every = 0;  // 0: not given, one second of frames (gop_frames)
};

struct ConvertArgs : EncodeArgs {
    std::string codec = fourdgs::codec_name(fourdgs::WriterOptions{}.codec);  // the writer's default
    std::string title, coordinate_system, grid, frames;
    std::string delta_reference = "cheaper";
    bool no_rigid_parts = false, report_sizes = false;
    unsigned threads = 0;
    std::size_t error_frames = 4;
    std::uint64_t splatv_frames = 30;  // a .splatv input: frames sampled over splaTV's [0, 1]
    // Which of the options the plan decides were given (a plan refuses them).
    std::vector<std::string> given;
};

// "none", "flat", ... or explicit depths "8,6,5". Returns an error message, or "".
std::string parse_sh_bits(const std::string& spec, ShLadder& ladder,
                          std::vector<std::uint8_t>& depths) {
    if (auto l = parse_sh_ladder(spec)) {
        ladder = *l;
        return {};
    }
    for (std::size_t i = 0; i < spec.size();) {
        std::size_t j = spec.find(',', i);
        if (j == std::string::npos) j = spec.size();
        const std::string part = spec.substr(i, j - i);
        if (part.size() != 1 || part[0] < '3' || part[0] > '8')
            return "--sh-bits '" + spec +
                   "': a ladder (none, flat, balanced, aggressive) or depths 3..8 per band, e.g. "
                   "8,6,5";
        depths.push_back(static_cast<std::uint8_t>(part[0] - '0'));
        i = j + 1;
    }
    return {};
}

// --model and --tracked as a conversion shape. Returns an error message, or "".
std::string parse_shape(const EncodeArgs& a, ConvertShape& shape) {
    if (a.model == "keyframe-delta") {
        if (!a.tracked) return "--model keyframe-delta needs --tracked (stable ids across frames)";
        shape = ConvertShape::keyframe_delta;
    } else if (a.model == "gaussian-birth") {
        shape = a.tracked ? ConvertShape::adaptive : ConvertShape::per_frame;
    } else {
        return "unknown --model '" + a.model + "' (gaussian-birth, keyframe-delta)";
    }
    return {};
}

// --preset and --tolerance as an end-to-end tolerance over a scene of `extent`; nullopt when
// neither was given and the preset should scale with the scene. Returns an error message, or "".
std::string parse_tolerance_args(const EncodeArgs& a, Preset& preset,
                                 std::optional<QuantBounds>& tolerance) {
    auto p = parse_preset(a.preset);
    if (!p) return "unknown --preset '" + a.preset + "' (fine, default, coarse)";
    preset = *p;
    if (a.tolerance.empty()) return {};
    // Keys not named keep the preset's, at the scale the preset has for a unit scene; pos keeps
    // the preset's only through the scene's size, so it must be named.
    auto t = parse_tolerance(a.tolerance, preset_tolerance(*p, 1.0));
    if (!t.ok()) return "--tolerance: " + t.error().message;
    if (a.tolerance.find("pos=") == std::string::npos)
        return "--tolerance: name pos (e.g. pos=1e-3): the other keys default to the preset's";
    tolerance = *t;
    return {};
}

// What a tracked conversion found, per frame, and each part's bytes encoded alone (measured
// with --report-sizes); and the per-frame encoding it was compared with: its size, or (without
// --report-sizes) that it was larger than the file, counted only that far; when it won, that it
// did.
void print_parts(const ConvertReport& rep, ConvertShape asked, bool part_bytes) {
    if (rep.parts_sought) {
        auto line = [&](const std::string& what, std::uint64_t n, std::uint64_t bytes) {
            if (part_bytes)
                fmt::print("  {:<22}{:>10} gaussians{:>12} alone\n", what, n, bytes_human(bytes));
            else
                fmt::print("  {:<22}{:>10} gaussians\n", what, n);
        };
        fmt::print("parts found in every frame{}:\n",
                   part_bytes ? "" : " (each one's size alone: --report-sizes)");
        line("static", rep.static_part.gaussians, rep.static_part.bytes);
        for (const auto& obj : rep.objects)
            line("rigid object #" + std::to_string(obj.object_id), obj.gaussians, obj.bytes);
        line("other (" + std::string(to_string(asked)) + ")", rep.other_part.gaussians,
             rep.other_part.bytes);
    }
    if (rep.per_frame_partial)
        fmt::print("per-frame encoding: larger, past {} when counting stopped (its size: "
                   "--report-sizes)\n",
                   bytes_human(rep.per_frame_bytes));
    else if (rep.per_frame_bytes != 0)
        fmt::print("per-frame encoding: {}{}\n", bytes_human(rep.per_frame_bytes),
                   rep.shape != asked ? std::string(", smaller, so written instead of ") +
                                            std::string(to_string(asked))
                                      : std::string());
}

// The keys rot_levels=N and rot_rounding=nearest|floor taken out of a --tolerance list into
// `levels` (N a whole number of the input's 8-bit levels) and `floor` (the input's writer
// truncated: ConvertOptions::rot_levels_floor, convert.hpp). Returns an error message, or "".
std::string take_rot_levels(std::string& spec, std::optional<std::uint32_t>& levels, bool& floor) {
    std::string rest;
    std::optional<std::string> rounding;
    for (std::size_t i = 0; i <= spec.size();) {
        const std::size_t j = std::min(spec.find(',', i), spec.size());
        const std::string item = spec.substr(i, j - i);
        if (item.rfind("rot_levels=", 0) == 0) {
            const std::string n = item.substr(11);
            if (n.empty() || n.size() > 3 || n.find_first_not_of("0123456789") != std::string::npos ||
                std::stoul(n) > 255)
                return "--tolerance: rot_levels is '" + n + "', must be a whole number of levels 0..255";
            levels = static_cast<std::uint32_t>(std::stoul(n));
        } else if (item.rfind("rot_rounding=", 0) == 0) {
            rounding = item.substr(13);
            if (*rounding != "nearest" && *rounding != "floor")
                return "--tolerance: rot_rounding is '" + *rounding +
                       "', must be nearest (the .splat's writer rounded) or floor (it truncated)";
        } else if (!item.empty()) {
            rest += (rest.empty() ? "" : ",") + item;
        }
        i = j + 1;
    }
    if (levels && (rest.rfind("rot=", 0) == 0 || rest.find(",rot=") != std::string::npos))
        return "--tolerance: give rot or rot_levels, not both (rot_levels replaces rot)";
    if (rounding && !levels)
        return "--tolerance: rot_rounding is '" + *rounding +
               "' without rot_levels (it says how the input's rotation bytes were made, which only "
               "rot_levels measures in)";
    floor = rounding == "floor";
    spec = rest;
    return {};
}

// The EncodeArgs into `o` (ConvertOptions or PlanOptions: clock, keyframe spacing, tolerance,
// shape) and `sh` (where that options struct keeps its preset and SH depths). Returns an error
// message, or "".
template <class Options, class PresetAndDepths>
std::string apply_encode_args(const EncodeArgs& given, Options& o, PresetAndDepths& sh) {
    EncodeArgs a = given;
    std::optional<std::uint32_t> levels;
    bool floor = false;
    if (auto e = take_rot_levels(a.tolerance, levels, floor); !e.empty()) return e;
    if constexpr (requires { o.rot_levels; })
        o.rot_levels = levels, o.rot_levels_floor = floor;
    else if (levels)
        return "--tolerance: rot_levels is convert's (a plan's shards measure rotation against "
               "the normalized input)";
    o.fps = a.fps;
    o.keyframe_every = a.keyframe_every;
    if (auto e = parse_tolerance_args(a, sh.preset, o.tolerance); !e.empty()) return e;
    if (auto e = parse_sh_bits(a.sh_bits, sh.sh_ladder, sh.sh_depths); !e.empty()) return e;
    const auto effort = parse_effort(a.effort);
    if (!effort) return "unknown --effort '" + a.effort + "' (fast, default, max)";
    sh.effort = *effort;
    return parse_shape(a, o.shape);
}

bool has_extension(const std::string& path, std::string_view ext) {
    std::string e = std::filesystem::path(path).extension().string();
    std::transform(e.begin(), e.end(), e.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return e == ext;
}

// The frame rate of a frames.json in an input directory, or beside a .splatv input (0: none).
// `paths`: the frames convert takes, in order (empty for a .splatv: `frames` are sampled).
Result<double> frames_json_fps(const std::vector<std::string>& inputs,
                               const std::vector<std::string>& paths, std::size_t frames) {
    namespace fs = std::filesystem;
    std::vector<std::string> names;
    for (const std::string& p : paths) names.push_back(fs::path(p).filename().string());
    for (const std::string& in : inputs) {
        std::error_code ec;
        const fs::path dir = fs::is_directory(in, ec) ? fs::path(in) : fs::path(in).parent_path();
        const fs::path json = dir / "frames.json";
        if (!fs::is_regular_file(json, ec)) continue;
        auto bytes = read_file(json.string());
        if (!bytes.ok()) return std::move(bytes).error();
        return read_frames_json(
            std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()), frames,
            json.string(), names);
    }
    return 0.0;
}

// --grid and --frames: the plan decides the clock, the shape, the tolerance and the keyframes, and
// --frames takes a slice of its frames. Returns an exit status when the arguments cannot run.
std::optional<int> apply_grid(const ConvertArgs& a, ConvertOptions& o) {
    if (a.grid.empty()) {
        if (!a.frames.empty())
            return cannot_run("--frames needs --grid: a slice is a slice of a plan's frames");
        return std::nullopt;
    }
    for (const std::string& opt : a.given)
        if (opt != "--tracked" && opt != "--model")
            return cannot_run(opt + " cannot be given with --grid: the plan decides it");
    auto plan = read_grid_plan(a.grid);
    if (!plan.ok()) return exit_refused(plan.error());
    const bool shape_given =
        std::find(a.given.begin(), a.given.end(), "--tracked") != a.given.end() ||
        std::find(a.given.begin(), a.given.end(), "--model") != a.given.end();
    if (shape_given && o.shape != plan->shape)
        return cannot_run("--tracked/--model ask for " + std::string(to_string(o.shape)) +
                          " but the plan " + a.grid + " was made for " +
                          std::string(to_string(plan->shape)));
    o.plan = std::move(*plan);
    o.shape = o.plan->shape;
    if (!a.frames.empty()) {
        const std::size_t colon = a.frames.find(':');
        std::uint64_t first = 0, end = 0;
        const char* s = a.frames.c_str();
        const auto r1 = std::from_chars(s, s + (colon == std::string::npos ? 0 : colon), first);
        const auto r2 = colon == std::string::npos
                            ? r1
                            : std::from_chars(s + colon + 1, s + a.frames.size(), end);
        if (colon == std::string::npos || r1.ec != std::errc() || r1.ptr != s + colon ||
            (colon + 1 < a.frames.size() &&
             (r2.ec != std::errc() || r2.ptr != s + a.frames.size())))
            return cannot_run("--frames '" + a.frames +
                              "': A:B (frames A up to B, B excluded) or A:");
        o.first_frame = first;
        o.end_frame = colon + 1 < a.frames.size() ? end : 0;
        if (o.end_frame == 0 && colon + 1 < a.frames.size())
            return cannot_run("--frames '" + a.frames + "': the slice is empty");
    }
    return std::nullopt;
}

// What convert wrote, as --json asks or as text (nothing under -q).
void print_convert_report(const ConvertArgs& a, const ConvertOptions& o, const ConvertReport& rep) {
    const std::string shape(to_string(rep.shape));
    const double ratio = rep.input_bytes ? double(rep.output_bytes) / double(rep.input_bytes) : 0;
    if (a.json) {
        Json j;
        j.begin_object()
            .str("output", a.output)
            .str("shape", shape)
            .num("frames", std::uint64_t{rep.frames})
            .num("first_frame", o.first_frame)
            .num("input_gaussians", rep.input_gaussians)
            .num("records", rep.records)
            .num("chunks", unsigned{rep.chunks})
            .num("deltas", unsigned{rep.deltas})
            .num("keyframe_referenced", unsigned{rep.keyframe_referenced})
            .num("input_bytes", rep.input_bytes)
            .num("output_bytes", rep.output_bytes)
            .num("ratio", ratio)
            .num("clamped_colors", rep.clamped_colors);
        // The per-frame size only where it was counted whole; where counting stopped once it
        // passed the file, what was counted by then, under a name that says so.
        j.num(rep.per_frame_partial ? "per_frame_bytes_more_than" : "per_frame_bytes",
              rep.per_frame_bytes);
        j.str("effort", to_string(o.plan ? o.plan->effort : o.writer.effort));
        cli::json_conversion_error(j, rep);
        if (rep.parts_sought) {
            // "bytes" (each part encoded alone) only where measured (--report-sizes).
            auto part = [&](const char* name, const ConvertReport::Part& p) {
                j.begin_object(name).num("gaussians", p.gaussians);
                if (o.part_bytes) j.num("bytes", p.bytes);
                j.end_object();
            };
            j.begin_object("parts");
            part("static", rep.static_part);
            j.begin_array("objects");
            for (const auto& obj : rep.objects) {
                j.begin_object().num("object_id", obj.object_id).num("gaussians", obj.gaussians);
                if (o.part_bytes) j.num("bytes", obj.bytes);
                j.end_object();
            }
            j.end_array();
            part("other", rep.other_part);
            j.end_object();
        }
        j.begin_object("tolerance")
            .num("pos", rep.tolerance.pos)
            .num("scale_rel", rep.tolerance.scale_rel)
            .num("rot", rep.tolerance.rot)
            .num("rgb", rep.tolerance.rgb)
            .num("alpha", rep.tolerance.alpha)
            .end_object();
        j.begin_object("bounds");
        for (const auto& [k, v] : rep.quantization.bounds) j.str(k, v);
        j.end_object().end_object();
        print_json(j);
    } else if (!g_quiet) {  // -q: the file is the answer; --json still prints what it asks for
        fmt::print("{} frames, {} gaussians -> {} ({}): {} records in {} chunks\n", rep.frames,
                   rep.input_gaussians, a.output, shape, rep.records, rep.chunks);
        if (rep.deltas != 0)
            fmt::print("{} delta chunks: {} chained, {} keyframe-referenced{}\n", rep.deltas,
                       rep.deltas - rep.keyframe_referenced, rep.keyframe_referenced,
                       o.cheaper_reference ? " (each the smaller)" : "");
        fmt::print("{} of PLY -> {} ({:.1f}% of the input)\n", bytes_human(rep.input_bytes),
                   bytes_human(rep.output_bytes), ratio * 100);
        if (rep.clamped_colors)
            fmt::print("{} colour components outside [0, 1] were clamped\n", rep.clamped_colors);
        print_parts(rep, o.shape, o.part_bytes);
        fmt::print("within pos {}, scale_rel {}, rot {}, rgb {}, alpha {} of the input at every frame\n",
                   bound_string(rep.tolerance.pos), bound_string(rep.tolerance.scale_rel),
                   bound_string(rep.tolerance.rot), bound_string(rep.tolerance.rgb),
                   bound_string(rep.tolerance.alpha));
        cli::print_conversion_error(rep, to_string(o.plan ? o.plan->effort : o.writer.effort));
    }
}

int cmd_convert(const ConvertArgs& a) {
    ConvertOptions o;
    if (auto e = apply_encode_args(a, o, o.writer); !e.empty()) return cannot_run(e);
    o.title = a.title;
    o.coordinate_system = a.coordinate_system;
    const CodecInfo* chosen = find_codec(a.codec);
    if (!chosen) return cannot_run("unknown --codec '" + a.codec + "' (" + codec_names() + ")");
    o.writer.codec = chosen->byte;
    o.writer.level = chosen->archive_level;  // a file written once and read many times
    if (auto rc = apply_grid(a, o)) return *rc;
    // A .splatv holds a whole clip: its frames are sampled from it (splat_formats.hpp).
    const bool splatv = a.inputs.size() == 1 && has_extension(a.inputs[0], ".splatv");
    if (splatv && o.plan) return cannot_run("a .splatv converts without --grid");
    std::vector<std::string> paths;
    if (!splatv) {
        auto listed = list_ply_frames(a.inputs);
        if (!listed.ok()) return cannot_run(listed.error().describe());
        if (listed->empty()) return cannot_run("no .ply or .splat frames found");
        paths = std::move(*listed);
    }
    if (!o.plan) {
        auto json_fps = frames_json_fps(a.inputs, paths, splatv ? a.splatv_frames : paths.size());
        if (!json_fps.ok()) return exit_refused(json_fps.error());
        if (*json_fps > 0 && a.fps > 0 && std::abs(*json_fps - a.fps) > 1e-9 * a.fps)
            return cannot_run(fmt::format("--fps {} disagrees with frames.json's {}", a.fps,
                                          *json_fps));
        if (!(o.fps > 0)) o.fps = *json_fps;
        if (!(o.fps > 0))
            return cannot_run("--fps is required (or --grid, whose plan has it, or a frames.json "
                              "beside the frames)");
    }

    Progress bar("converting", g_quiet);
    o.progress = [&](std::uint64_t done, std::uint64_t total) { bar.update(done, total); };
    o.rigid_parts = !a.no_rigid_parts;
    if (a.delta_reference != "cheaper" && a.delta_reference != "chained")
        return cannot_run("unknown --delta-reference '" + a.delta_reference +
                          "' (cheaper, chained)");
    o.cheaper_reference = a.delta_reference == "cheaper";
    o.writer.threads = a.threads;
    // The report's sizes that cost encodes of their own, only when asked: each part alone, and
    // the per-frame encoding counted whole rather than until it passes the file (a third of the
    // CPU of a tracked conversion, docs/performance.md).
    o.part_bytes = a.report_sizes && o.shape != ConvertShape::per_frame && !o.plan;
    o.per_frame_whole = a.report_sizes;
    o.error_frames = a.error_frames;
    ConvertReport rep;
    Status st;
    if (splatv) {
        auto scene = read_splatv_file(a.inputs[0]);
        if (!scene.ok()) return exit_refused(scene.error());
        std::error_code ec;
        const std::uint64_t file_bytes = std::filesystem::file_size(a.inputs[0], ec);
        st = convert_frame_source(splatv_frames(*scene, a.splatv_frames, file_bytes), a.output,
                                  o, &rep);
    } else {
        st = convert_ply_files(paths, a.output, o, &rep);
    }
    bar.finish();
    if (!st.ok()) return exit_refused(st.error());
    print_convert_report(a, o, rep);
    return kExitOk;
}

// ---- plan ----------------------------------------------------------------------------------

struct PlanArgs : EncodeArgs {
    std::uint32_t segment_frames = 30;
    std::size_t sample = 8;
    double margin = 0.05, max_speed = 0;
    std::vector<double> aabb;
    bool no_rigid_parts = false;
};

// The rigid parts a plan recorded: what each shard stores once.
void print_planned_parts(const GridPlan& plan) {
    if (plan.parts.empty()) return;
    fmt::print("parts (every shard stores them alike):\n");
    for (const PlannedPart& part : plan.parts) {
        std::uint64_t n = 0;
        for (const auto& [a, b] : part.members) n += b - a;
        fmt::print("  {:<22}{:>10} gaussians  frames [{}, {})\n",
                   part.rigid ? "rigid object #" + std::to_string(part.object_id)
                              : std::string("static"),
                   n, part.first_frame, part.end_frame);
    }
}

int cmd_plan(const PlanArgs& a) {
    PlanOptions po;
    if (auto e = apply_encode_args(a, po, po); !e.empty()) return cannot_run(e);
    po.segment_frames = a.segment_frames;
    po.sample_frames = a.sample;
    po.margin = a.margin;
    po.max_speed = a.max_speed;
    po.rigid_parts = !a.no_rigid_parts;
    if (!a.aabb.empty()) {
        if (a.aabb.size() != 6) return cannot_run("--aabb takes six numbers: min x y z, max x y z");
        std::array<double, 6> box{};
        std::copy(a.aabb.begin(), a.aabb.end(), box.begin());
        po.aabb = box;
    }
    auto paths = list_ply_frames(a.inputs);
    if (!paths.ok()) return cannot_run(paths.error().describe());
    if (paths->empty()) return cannot_run("no .ply frames found");
    auto plan = plan_ply_files(*paths, po);
    if (!plan.ok()) return exit_refused(plan.error());
    if (auto st = write_grid_plan(*plan, a.output); !st.ok()) return exit_refused(st.error());
    if (a.json) {
        std::printf("%s", grid_plan_json(*plan).c_str());
        return kExitOk;
    }
    const QuantBounds d = declared_bounds(plan->grid, plan->duration_sec);
    fmt::print("{} frames at {} fps ({:.3f} s), {}, effort {} -> {}\n", plan->frames, plan->fps,
               plan->duration_sec, to_string(plan->shape), to_string(plan->effort), a.output);
    fmt::print("aabb {} .. {}, scanned from {} frames\n",
               vec3({plan->aabb[0], plan->aabb[1], plan->aabb[2]}),
               vec3({plan->aabb[3], plan->aabb[4], plan->aabb[5]}),
               po.aabb ? 0 : plan_sample(plan->frames, po).size());
    fmt::print("  {:<10} {:>24} {:>24}\n", "attribute", "tolerance", "bound declared");
    const std::pair<const char*, std::pair<double, double>> rows[] = {
        {"pos", {plan->tolerance.pos, d.pos}},
        {"scale_rel", {plan->tolerance.scale_rel, d.scale_rel}},
        {"rot", {plan->tolerance.rot, d.rot}},
        {"rgb", {plan->tolerance.rgb, d.rgb}},
        {"alpha", {plan->tolerance.alpha, d.alpha}},
        {"time", {plan->tolerance.time, d.time}},
        {"sigma_rel", {plan->tolerance.sigma_rel, d.sigma_rel}}};
    for (const auto& [k, v] : rows)
        fmt::print("  {:<10} {:>24} {:>24}\n", k, bound_string(v.first), bound_string(v.second));
    if (plan->alignment() > 1)
        fmt::print("shards start and end on multiples of {} frames (the last may end at {})\n",
                   plan->alignment(), plan->frames);
    print_planned_parts(*plan);
    return kExitOk;
}

// The plan's frames cut into at most `shards` slices, one "A:B" per line: what each shard's
// convert --frames takes (a scheduler's task i reads line i + 1).
int cmd_slices(const std::string& grid, std::size_t shards) {
    auto plan = read_grid_plan(grid);
    if (!plan.ok()) return exit_refused(plan.error());
    for (const auto& [first, end] : plan_slices(*plan, shards)) fmt::print("{}:{}\n", first, end);
    return kExitOk;
}

// ---- merge ---------------------------------------------------------------------------------

struct MergeArgs {
    std::vector<std::string> parts;
    std::string output, base, grid;
    bool allow_overlap = false, validate_parts = false, json = false;
};

int cmd_merge(const MergeArgs& a) {
    MergeOptions mo;
    mo.allow_overlap = a.allow_overlap;
    mo.validate_parts = a.validate_parts;
    if (!a.grid.empty()) {
        auto plan = read_grid_plan(a.grid);
        if (!plan.ok()) return exit_refused(plan.error());
        mo.plan_digest = plan_digest(*plan);
    }
    if (!a.base.empty()) {
        const auto it = std::find(a.parts.begin(), a.parts.end(), a.base);
        if (it == a.parts.end()) return cannot_run("--base " + a.base + " is not one of the parts");
        mo.base = static_cast<std::size_t>(it - a.parts.begin());
    }
    MergeReport rep;
    if (auto st = merge_files(a.parts, a.output, mo, &rep); !st.ok()) return exit_refused(st.error());
    if (a.json) {
        Json j;
        j.begin_object()
            .str("output", a.output)
            .num("parts", std::uint64_t{a.parts.size()})
            .str("base", a.parts[rep.base]);
        j.begin_array("order");
        for (std::size_t i : rep.order) j.str({}, a.parts[i]);
        j.end_array()
            .num("chunks", unsigned{rep.chunks})
            .num("chunks_verbatim", unsigned{rep.chunks_verbatim})
            .num("window_streams_rewritten", unsigned{rep.window_streams_rewritten})
            .num("references_rewritten", unsigned{rep.references_rewritten})
            .num("chunks_dropped", unsigned{rep.chunks_dropped})
            .num("bytes_verbatim", rep.bytes_verbatim)
            .num("bytes_written", rep.bytes_written)
            .end_object();
        print_json(j);
        return kExitOk;
    }
    fmt::print("{} parts -> {} ({}): {} chunks, front matter from {}\n", a.parts.size(), a.output,
               bytes_human(rep.bytes_written), rep.chunks, a.parts[rep.base]);
    fmt::print(
        "{} of {} copied byte for byte; {} window_index streams renumbered, {} delta "
        "references renamed, {} filler keyframes dropped\n",
        bytes_human(rep.bytes_verbatim), bytes_human(rep.bytes_written),
        rep.window_streams_rewritten, rep.references_rewritten, rep.chunks_dropped);
    return kExitOk;
}

}  // namespace

void add_encode_commands(CLI::App& app, int& code) {
    // The encoding options convert and plan share.
    auto encode_options = [](CLI::App* cmd, EncodeArgs& a) {
        cmd->add_option("FRAMES", a.inputs,
                        "PLY or .splat frame files or directories, sorted naturally (convert: or "
                        "one .splatv)")
            ->required();
        cmd->add_option("--fps", a.fps, "frames per second");
        cmd->add_option(
            "--preset", a.preset,
            "tolerance preset: fine, default, coarse (docs/cli.md: what each looks like)");
        cmd->add_option(
            "--tolerance", a.tolerance,
            "end-to-end tolerance per attribute, e.g. pos=1e-3,rot=0.005 (pos required; "
            "others default to the preset's)");
        cmd->add_option("--sh-bits", a.sh_bits,
                        "SH bit depths: none, flat, balanced, aggressive, or e.g. 8,6,5");
        cmd->add_flag("--tracked", a.tracked,
                      "every frame holds the same gaussians in the same order: keep the "
                      "correspondence");
        cmd->add_option("--model", a.model,
                        "with --tracked: gaussian-birth (adaptive temporal sampling) or "
                        "keyframe-delta");
        cmd->add_option("--keyframe-every", a.keyframe_every,
                        "keyframe-delta: a keyframe every K frames (default: one keyframe and "
                        "a keyframe-referenced delta each second where at most 3/4 of the "
                        "gaussians move, else a keyframe each second)")
            ->check(CLI::PositiveNumber);
        cmd->add_flag("--json", a.json, "machine-readable report");
        cmd->add_option("--effort", a.effort,
                        "encoder effort: fast, default, max (the smallest file, several times "
                        "slower)");
    };

    static ConvertArgs ca;
    auto* conv = app.add_subcommand(
        "convert", "PLY or .splat frames (files or directories), or a .splatv, to a .4dgs scene");
    encode_options(conv, ca);
    conv->add_option("-o,--output", ca.output, "the .4dgs file to write")->required();
    conv->add_option("--codec", ca.codec, "stream codec: " + fourdgs::codec_names());
    conv->add_option("--title", ca.title, "a title for the scene's metadata");
    conv->add_option("--coordinate-system", ca.coordinate_system,
                     "the scene's handedness and up axis, e.g. \"right-handed, y-up\" "
                     "(the registry's coordinate_system key)");
    conv->add_option("--grid", ca.grid,
                     "a grid plan (4dgs plan): encode on its grid, clock, shape and keyframes");
    conv->add_option("--frames", ca.frames,
                     "with --grid: the slice A:B of the plan's frames (B excluded; A: to the end)");
    conv->add_option("--delta-reference", ca.delta_reference,
                     "keyframe-delta: cheaper (each delta references the GOP keyframe or the "
                     "previous frame, whichever is smaller; default) or chained");
    conv->add_option("--error-frames", ca.error_frames,
                     "decode this many frames and report the error against the input (0: none)");
    conv->add_flag("--no-rigid-parts", ca.no_rigid_parts,
                   "with --tracked: leave rigid parts to the temporal model instead of storing "
                   "them as objects with Object Tracks");
    conv->add_flag("--report-sizes", ca.report_sizes,
                   "with --tracked: also encode each part alone and the whole per-frame file for "
                   "the report's sizes (about a third more CPU; without it the per-frame file is "
                   "counted only until it is larger than the file written)");
    conv->add_option("--splatv-frames", ca.splatv_frames,
                     "a .splatv input: the frames sampled over its clip (splaTV time 0 to 1)")
        ->check(CLI::Range(1, 100000));
    conv->add_option("--threads", ca.threads,
                     "encoder threads (0: one per core; a scheduler's task: its CPUs)");
    conv->callback([&code, conv] {
        for (const char* name : {"--fps", "--preset", "--tolerance", "--sh-bits", "--tracked",
                                 "--model", "--keyframe-every", "--effort"})
            if (conv->get_option(name)->count() > 0) ca.given.emplace_back(name);
        code = cmd_convert(ca);
    });

    static PlanArgs pa;
    auto* plan = app.add_subcommand(
        "plan", "decide one quantization grid for a frame sequence, for encoding it in shards");
    encode_options(plan, pa);
    plan->get_option("--fps")->required();
    plan->add_option("-o,--output", pa.output, "the grid plan to write (JSON)")->required();
    plan->add_option("--segment-frames", pa.segment_frames,
                     "adaptive: records never span a multiple of S frames (shards start on one)");
    plan->add_option("--sample", pa.sample, "frames to scan for the aabb (0: every frame)");
    plan->add_option("--margin", pa.margin,
                     "widen a scanned aabb by this fraction of its largest side on every face");
    plan->add_option(
        "--max-speed", pa.max_speed,
        "adaptive: the fastest motion to allow, units/s (0: twice what the sample shows)");
    plan->add_option("--aabb", pa.aabb, "the scene's aabb, min x y z max x y z: no scan")
        ->expected(6)
        ->delimiter(',');
    plan->add_flag("--no-rigid-parts", pa.no_rigid_parts,
                   "with --tracked: record no rigid parts (each shard's temporal model takes "
                   "every gaussian)");
    plan->callback([&code] { code = cmd_plan(pa); });

    static std::string slices_grid;
    static std::size_t slices_count = 1;
    auto* slc = app.add_subcommand(
        "slices", "cut a plan's frames into slices for N shards: one A:B per line, aligned");
    slc->add_option("GRID", slices_grid, "the grid plan")->required();
    slc->add_option("N", slices_count, "shards")->required()->check(CLI::PositiveNumber);
    slc->callback([&code] { code = cmd_slices(slices_grid, slices_count); });

    static MergeArgs ma;
    auto* mrg = app.add_subcommand("merge",
                                   "join shards of one scene (convert --grid --frames) into one "
                                   "file, copying their chunks byte for byte");
    mrg->add_option("PARTS", ma.parts, "the .4dgs parts, in any order")->required();
    mrg->add_option("-o,--output", ma.output, "the .4dgs file to write")->required();
    mrg->add_flag("--allow-overlap", ma.allow_overlap,
                  "gaussian-birth parts whose timelines overlap are a union");
    mrg->add_option("--base", ma.base,
                    "the part whose front matter the file takes (default: the earliest)");
    mrg->add_flag("--validate-parts", ma.validate_parts, "run the validator over every part first");
    mrg->add_option("--grid", ma.grid,
                    "the grid plan the shards were encoded on: every part must be one of its");
    mrg->add_flag("--json", ma.json, "machine-readable report");
    mrg->callback([&code] { code = cmd_merge(ma); });
}

}  // namespace cli
