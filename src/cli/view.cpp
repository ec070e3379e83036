// `4dgs extract`, `4dgs preview`, `4dgs timeline`: the state at T as a PLY, .splat or glTF, a
// rendered PNG of it, and a PNG plot of the live-gaussian count over time.
#include <fourdgs/fourdgs.hpp>
#include <fourdgs/tools/ply.hpp>
#include <fourdgs/tools/preview.hpp>
#include <fourdgs/tools/splat_formats.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gltf_export.hpp"
#include "output.hpp"

namespace cli {
namespace {

using namespace fourdgs;

// ---- extract, preview, timeline --------------------------------------------------------------

int cmd_extract(const std::string& path, double t, const std::string& out, int sh_degree,
                const std::string& format) {
    if (format != "ply" && format != "splat" && format != "glb")
        return cannot_run("unknown --format '" + format + "' (ply, splat, glb)");
    auto src = open_source(path, g_http);
    if (!src.ok()) return exit_refused(src.error());
    ExtractOptions eo;
    eo.max_sh_degree = format == "splat" ? 0 : sh_degree;  // .splat holds the DC colour only
    auto cloud = extract_state(**src, t, eo);
    if (!cloud.ok()) return exit_refused(cloud.error());
    std::vector<std::uint8_t> bytes;
    if (format == "splat") {
        bytes = write_splat(*cloud);
    } else if (format == "glb") {
        try {
            bytes = write_glb(*cloud);
        } catch (const std::exception& e) {
            return cannot_run(std::string("glTF: ") + e.what());
        }
    } else {
        auto ply = write_ply(*cloud);
        if (!ply.ok()) return exit_refused(ply.error());
        bytes = std::move(*ply);
    }
    const std::string temp = out + ".partial";
    {
        auto sink = FileSink::create(temp);
        if (!sink.ok()) return exit_refused(sink.error());
        if (auto st = sink->write(bytes); !st.ok()) return exit_refused(st.error());
        if (auto st = sink->close(); !st.ok()) return exit_refused(st.error());
    }
    if (std::rename(temp.c_str(), out.c_str()) != 0) {
        std::remove(temp.c_str());
        return cannot_run("cannot rename " + temp + " to " + out);
    }
    if (!g_quiet)
        std::fprintf(stderr, "%s: %zu gaussians visible at t = %g s, SH degree %d -> %s\n",
                     path.c_str(), cloud->count, t, cloud->sh_degree, out.c_str());
    return kExitOk;
}

int cmd_preview(const std::string& path, double t, const std::string& out, int width, int height) {
    auto src = open_source(path, g_http);
    if (!src.ok()) return exit_refused(src.error());
    SceneInfo scene;
    Frame frame;
    ExtractOptions eo;
    eo.max_sh_degree = 0;  // the preview is DC colour only
    if (auto st = evaluate_scene_at(**src, t, eo, scene, frame); !st.ok()) return exit_refused(st.error());
    PreviewOptions po;
    po.width = width;
    po.height = height;
    auto image = render_preview(scene, frame, t, po);
    if (!image.ok()) return exit_refused(image.error());
    if (auto e = write_png(out, *image); !e.empty()) return cannot_run(e);
    if (!g_quiet)
        std::fprintf(stderr, "%s: %zu gaussians at t = %g s -> %s (%dx%d)\n", path.c_str(),
                     frame.count, t, out.c_str(), width, height);
    return kExitOk;
}

int cmd_timeline(const std::string& path, const std::string& out, int width, int height) {
    Opened f;
    if (auto rc = open_file(path, f)) return *rc;
    auto tl = live_counts(f, static_cast<std::size_t>(std::max(2, width)));
    if (!tl.ok()) return exit_refused(tl.error());
    auto image = plot_timeline(*tl, width, height);
    if (!image.ok()) return exit_refused(image.error());
    if (auto e = write_png(out, *image); !e.empty()) return cannot_run(e);
    if (!g_quiet) std::fprintf(stderr, "%s: live %s -> %s\n", path.c_str(), sparkline(*tl, 32).c_str(), out.c_str());
    return kExitOk;
}

}  // namespace

void add_view_commands(CLI::App& app, int& code) {
    static std::string file, out;
    static double at = 0;
    static int sh_degree = 3;
    static std::string extract_format = "ply";
    auto* ext = app.add_subcommand(
        "extract", "the state at T as a standard 3DGS PLY, an antimatter15 .splat or a glTF (.glb)");
    ext->add_option("FILE", file, "the .4dgs file: a path or an http(s):// URL")->required();
    ext->add_option("--at", at, "scene time, seconds")->required();
    ext->add_option("-o,--output", out, "the PLY to write")->required();
    ext->add_option("--sh-degree", sh_degree, "SH degree of the output (capped by the file's)")
        ->check(CLI::Range(0, 3));
    ext->add_option("--format", extract_format,
                    "ply (default), splat (antimatter15 .splat) or glb (glTF 2.0 with "
                    "KHR_gaussian_splatting)");
    ext->callback([&code] { code = cmd_extract(file, at, out, sh_degree, extract_format); });

    static int width = 640, height = 480;
    auto* prev = app.add_subcommand("preview", "render the state at T to a PNG");
    prev->add_option("FILE", file, "the .4dgs file: a path or an http(s):// URL")->required();
    prev->add_option("--at", at, "scene time, seconds")->required();
    prev->add_option("-o,--output", out, "the PNG to write")->required();
    prev->add_option("--width", width, "pixels")->check(CLI::Range(1, 8192));
    prev->add_option("--height", height, "pixels")->check(CLI::Range(1, 8192));
    prev->callback([&code] { code = cmd_preview(file, at, out, width, height); });

    static int tw = 800, th = 200;
    auto* tl = app.add_subcommand("timeline", "plot the live-gaussian count over time to a PNG");
    tl->add_option("FILE", file, "the .4dgs file: a path or an http(s):// URL")->required();
    tl->add_option("-o,--output", out, "the PNG to write")->required();
    tl->add_option("--width", tw, "pixels")->check(CLI::Range(1, 8192));
    tl->add_option("--height", th, "pixels")->check(CLI::Range(1, 8192));
    tl->callback([&code] { code = cmd_timeline(file, out, tw, th); });
}

}  // namespace cli
