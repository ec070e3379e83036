// 4dgs — the command-line tool of the fourdgs SDK. Each subcommand is a thin layer over the
// library: it parses arguments, calls the library, and prints (text for people, --json for
// machines). Exit status: 0 success, 1 the file was refused or is invalid, 2 valid with
// warnings (validate), 3 the command could not run (usage, I/O).
//
// The commands live one family to a file (commands.hpp): inspect.cpp (info, validate, dump),
// view.cpp (extract, preview, timeline), encode.cpp (convert, plan, slices, merge), compare.cpp.
// This file holds the options given before the subcommand, the helpers the commands share, and
// main.
#include <fourdgs/fourdgs.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "commands.hpp"
#include "output.hpp"

namespace cli {

using namespace fourdgs;

bool g_quiet = false;
HttpOptions g_http;

int cannot_run(const std::string& message) {
    std::fprintf(stderr, "4dgs: %s\n", message.c_str());
    return kExitCannotRun;
}

void print_json(const Json& j) { std::printf("%s\n", j.text().c_str()); }

std::string bytes_human(std::uint64_t n) {
    if (n < 10 * 1024) return fmt::format("{} B", n);
    if (n < 10 * 1024 * 1024) return fmt::format("{:.1f} KiB", n / 1024.0);
    return fmt::format("{:.1f} MiB", n / (1024.0 * 1024.0));
}

// ---- opening a file ------------------------------------------------------------------------

// Opens the file with the reader its temporal model needs. Returns an exit status on failure.
std::optional<int> open_file(const std::string& path, Opened& out) {
    auto src = open_source(path, g_http);
    if (!src.ok()) return exit_refused(src.error());
    out.source = std::move(*src);
    auto reader = open_scene(*out.source);
    if (!reader.ok()) return exit_refused(reader.error());
    out.reader.emplace(std::move(*reader));
    return std::nullopt;
}

// The live (visible) gaussian count over time. Gaussian-birth: from every gaussian at once.
// Keyframe-delta: the composed state at each sample instant, evaluated there (a population member
// can be faded out); for files over 64 MiB the index's live_count (the population) stands in.
Result<LiveTimeline> live_counts(Opened& f, std::size_t samples) {
    const SceneInfo& s = f.scene();
    SceneWorkspace ws;
    if (!f.reader->keyframe_delta()) {
        GaussianBlock all;
        FOURDGS_TRY(f.reader->read_every_gaussian(all, ws));
        return live_timeline(all, s.header.duration_sec, s.header.cutoff, samples);
    }
    const bool evaluate_states = f.source->size().value_or(0) <= (std::uint64_t{64} << 20);
    LiveTimeline tl;
    GaussianBlock state;
    for (std::size_t i = 0; i < samples; ++i) {
        const double span = s.header.duration_sec;
        double t = samples > 1 ? span * static_cast<double>(i) / static_cast<double>(samples - 1) : 0.0;
        if (t >= span) t = std::nextafter(span, 0.0);  // the last instant inside the timeline
        std::uint64_t live = 0;
        if (evaluate_states) {
            FOURDGS_TRY(f.reader->state_at(t, state, ws));
            live = visible_count(state, t, s.header.cutoff);
        } else if (auto chain = f.reader->chunks_for(t); chain.ok() && s.index[chain->back()].keyframe) {
            live = s.index[chain->back()].keyframe->live_count;  // the chain ends at t's state
        }
        tl.times.push_back(t);
        tl.live.push_back(live);
    }
    return tl;
}

// What one instant costs to seek: the chunk's bytes, or a keyframe-delta chain's.
std::uint64_t seek_cost(const Opened& f, std::size_t entry) {
    return f.reader->entry_fetch_cost(entry).value_or(0);
}

// A Chunk Index entry's interval, range, gaussian count and seek cost: with the §5.8 field names
// (`dump --index`), or info's short ones.
void entry_fields(Json& j, const ChunkIndex& e, std::uint64_t seek, bool index_names) {
    j.num("t0", e.t0)
        .num("t1", e.t1)
        .num(index_names ? "chunk_offset" : "offset", e.chunk_offset)
        .num(index_names ? "chunk_length" : "length", e.chunk_length)
        .num(index_names ? "gaussian_count" : "gaussians", unsigned{e.gaussian_count})
        .num("seek_cost", seek);
}

// {"<what>": id, "offset": o, "length": n}: a record's or an SH band's byte range.
void range_object(Json& j, std::string_view what, unsigned id, std::uint64_t offset,
                  std::uint64_t length) {
    j.begin_object().num(what, id).num("offset", offset).num("length", length).end_object();
}

std::string vec3(const std::array<double, 3>& v) {
    return fmt::format("({:.4g}, {:.4g}, {:.4g})", v[0], v[1], v[2]);
}

}  // namespace cli

int main(int argc, char** argv) {
#if defined(__GLIBC__)
    // A fixed threshold: glibc raises it to each large block freed (up to 32 MiB), after which
    // the converter's per-window frame and chunk buffers come from the heap and fragment it, so a
    // streamed convert's peak RSS grew with the frame count (182.7 against 174.3 MB at 300 and 40
    // frames; heaptrack's peak heap 162.1 against 160.5 MB). Kept at glibc's own starting value,
    // every block of 128 KiB or more is mapped and given back when freed (docs/performance.md).
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
    CLI::App app{"4dgs — inspect, validate, convert and preview .4dgs 4D gaussian-splat files"};
    app.require_subcommand(1);
    app.add_flag("-q,--quiet", cli::g_quiet, "no progress bars or notes on stderr");
    // URLs on private servers (before the subcommand: 4dgs --header "Authorization: Bearer T" info URL).
    app.add_option("--header", cli::g_http.headers,
                   "an HTTP request header 'Name: value' sent with every request for a URL (repeatable)")
        ->expected(1)
        ->take_all();
    app.add_option("--ca-bundle", cli::g_http.ca_bundle,
                   "a PEM file of certificate authorities to trust for https:// instead of the system's");
    app.add_option_function<std::uint32_t>(
           "--timeout", [](const std::uint32_t& s) { cli::g_http.transfer_timeout_ms = s * 1000; },
           "per-attempt transfer timeout for a URL, in seconds")
        ->check(CLI::PositiveNumber);
    app.add_option("--retries", cli::g_http.max_attempts, "attempts per HTTP request, retries included")
        ->check(CLI::PositiveNumber);

    int code = cli::kExitOk;
    cli::add_inspect_commands(app, code);
    cli::add_view_commands(app, code);
    cli::add_encode_commands(app, code);
    cli::add_compare(app, code);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? cli::kExitOk : cli::kExitCannotRun;
    }
    return code;
}
