// `4dgs compare A.ply B.ply [--match auto|order|position] [--json]`: how far B is from A,
// attribute by attribute (max, RMS, p99), with the gaussians matched by order or by position
// (fourdgs/tools/compare.hpp). Exit status 0, 1 when a file is refused, 3 when it cannot run.
#include <fourdgs/tools/compare.hpp>
#include <fourdgs/tools/convert.hpp>
#include <fourdgs/writer.hpp>
#include <fourdgs/tools/ply.hpp>

#include <fmt/core.h>

#include <cstdio>
#include <string>

#include "commands.hpp"
#include "output.hpp"

namespace cli {
namespace {

struct CompareArgs {
    std::string a, b, match = "auto";
    bool json = false;
};

int run(const CompareArgs& args) {
    const auto match = fourdgs::parse_compare_match(args.match);
    if (!match) {
        std::fprintf(stderr, "4dgs: unknown --match '%s' (auto, order, position)\n",
                     args.match.c_str());
        return kExitCannotRun;
    }
    auto a = fourdgs::read_ply_file(args.a);
    if (!a.ok()) return exit_refused(a.error());
    auto b = fourdgs::read_ply_file(args.b);
    if (!b.ok()) return exit_refused(b.error());
    auto rep = fourdgs::compare_clouds(*a, *b, {*match});
    if (!rep.ok()) return exit_refused(rep.error());
    if (args.json) {
        Json j;
        j.begin_object()
            .str("a", args.a)
            .str("b", args.b)
            .num("a_count", std::uint64_t{rep->a_count})
            .num("b_count", std::uint64_t{rep->b_count})
            .num("matched", std::uint64_t{rep->matched})
            .str("match", fourdgs::to_string(rep->match))
            .num("sh_degree", rep->sh_degree);
        j.begin_object("attributes");
        for (const fourdgs::AttributeError& e : rep->attributes)
            j.begin_object(e.name)
                .num("max", e.max)
                .num("rms", e.rms)
                .num("p99", e.p99)
                .num("samples", e.samples)
                .end_object();
        j.end_object().end_object();
        std::printf("%s\n", j.text().c_str());
        return kExitOk;
    }
    fmt::print("A {}: {} gaussians (SH {})\nB {}: {} gaussians (SH {})\n", args.a, rep->a_count,
               a->sh_degree, args.b, rep->b_count, b->sh_degree);
    fmt::print("matched by {}: {} pairs; unmatched {} of A, {} of B\n",
               fourdgs::to_string(rep->match), rep->matched, rep->a_count - rep->matched,
               rep->b_count - rep->matched);
    fmt::print("{:<10} {:>12} {:>12} {:>12} {:>10}\n", "attribute", "max", "rms", "p99", "samples");
    for (const fourdgs::AttributeError& e : rep->attributes)
        fmt::print("{:<10} {:>12.4g} {:>12.4g} {:>12.4g} {:>10}\n", e.name, e.max, e.rms, e.p99,
                   e.samples);
    return kExitOk;
}

// The tolerance of an attribute the report measures, or a negative number when it has none.
double tolerance_of(const fourdgs::QuantBounds& t, std::string_view name) {
    if (name == "pos") return t.pos;
    if (name == "scale_rel") return t.scale_rel;
    if (name == "rot") return t.rot;
    if (name == "rgb") return t.rgb;
    if (name == "alpha") return t.alpha;
    return -1;
}

double bytes_per_gaussian(const fourdgs::ConvertReport& rep) {
    return rep.input_gaussians ? double(rep.output_bytes) / double(rep.input_gaussians) : 0;
}

}  // namespace

void print_conversion_error(const fourdgs::ConvertReport& rep, std::string_view effort) {
    fmt::print("{:.3f} bytes per input gaussian (effort {})\n", bytes_per_gaussian(rep), effort);
    if (rep.error.empty()) return;
    fmt::print("measured at {} frame(s) against the input:\n", rep.error_frames.size());
    fmt::print("  {:<10} {:>12} {:>12} {:>12} {:>12}\n", "attribute", "max", "rms", "p99",
               "tolerance");
    for (const fourdgs::AttributeError& e : rep.error) {
        const double t = tolerance_of(rep.tolerance, e.name);
        fmt::print("  {:<10} {:>12.4g} {:>12.4g} {:>12.4g} {:>12}\n", e.name, e.max, e.rms, e.p99,
                   t < 0 ? std::string("-") : fmt::format("{:.4g}", t));
    }
}

void json_conversion_error(Json& j, const fourdgs::ConvertReport& rep) {
    j.num("bytes_per_gaussian", bytes_per_gaussian(rep));
    j.begin_object("error");
    for (const fourdgs::AttributeError& e : rep.error) {
        j.begin_object(e.name).num("max", e.max).num("rms", e.rms).num("p99", e.p99);
        if (const double t = tolerance_of(rep.tolerance, e.name); t >= 0) j.num("tolerance", t);
        j.end_object();
    }
    j.begin_array("frames");
    for (std::uint64_t f : rep.error_frames) j.num("", f);
    j.end_array().end_object();
}

void add_compare(CLI::App& app, int& code) {
    static CompareArgs args;
    auto* cmd = app.add_subcommand(
        "compare", "per-attribute error (max, RMS, p99) between two splat PLYs, B against A");
    cmd->add_option("A", args.a, "the reference PLY")->required();
    cmd->add_option("B", args.b, "the PLY compared with it")->required();
    cmd->add_option("--match", args.match,
                    "pair the gaussians by order, by position (nearest), or auto (order when both "
                    "keep one order)");
    cmd->add_flag("--json", args.json, "machine-readable output");
    cmd->callback([&code] { code = run(args); });
}

}  // namespace cli
