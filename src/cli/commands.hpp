// The subcommands of the `4dgs` tool, a family to a file; each family registers itself on the app
// and stores its exit status in `code` when it runs. Also what the families share (main.cpp).
#pragma once

#include <fourdgs/fourdgs.hpp>
#include <fourdgs/tools/convert.hpp>
#include <fourdgs/tools/preview.hpp>

#include <CLI/CLI.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "output.hpp"

namespace cli {

// The options given before the subcommand (main.cpp).
extern bool g_quiet;                 // -q: no progress bars or notes on stderr
extern fourdgs::HttpOptions g_http;  // --header, --ca-bundle, --timeout, --retries: every URL read

// A message on stderr ("4dgs: <message>"); returns kExitCannotRun.
int cannot_run(const std::string& message);
void print_json(const Json& j);  // the document and a newline on stdout
std::string bytes_human(std::uint64_t n);  // "812 B", "3.4 KiB", "12.0 MiB"
std::string vec3(const std::array<double, 3>& v);  // "(x, y, z)", 4 significant digits

// A file opened with the reader its temporal model needs (open_file).
struct Opened {
    std::unique_ptr<fourdgs::ByteSource> source;  // a file or a URL (open_source)
    std::optional<fourdgs::SceneReader> reader;   // the front-end its model needs, opened once
    const fourdgs::SceneInfo& scene() const { return reader->scene(); }
};
// Opens `path` (a file or a URL) into `out`. Returns an exit status on failure.
std::optional<int> open_file(const std::string& path, Opened& out);
// The live (visible) gaussian count at `samples` instants over the timeline.
fourdgs::Result<fourdgs::LiveTimeline> live_counts(Opened& f, std::size_t samples);
// What one instant costs to seek: the bytes of index entry `entry`'s chunk, or of its chain.
std::uint64_t seek_cost(const Opened& f, std::size_t entry);
// A Chunk Index entry's interval, range, gaussian count and seek cost, as JSON members: with the
// §5.8 field names (`dump --index`) or info's short ones.
void entry_fields(Json& j, const fourdgs::ChunkIndex& e, std::uint64_t seek, bool index_names);
// {"<what>": id, "offset": o, "length": n}: a record's or an SH band's byte range.
void range_object(Json& j, std::string_view what, unsigned id, std::uint64_t offset,
                  std::uint64_t length);

// `4dgs info`, `validate`, `dump` (inspect.cpp).
void add_inspect_commands(CLI::App& app, int& code);
// `4dgs extract`, `preview`, `timeline` (view.cpp).
void add_view_commands(CLI::App& app, int& code);
// `4dgs convert`, `plan`, `slices`, `merge` (encode.cpp).
void add_encode_commands(CLI::App& app, int& code);

// convert's report of its file against the input (ConvertReport::error, when measured): bytes
// per gaussian, then per attribute the largest error, RMS and p99 beside the tolerance; as text,
// and as the "bytes_per_gaussian" and "error" members of a JSON object.
void print_conversion_error(const fourdgs::ConvertReport& rep, std::string_view effort);
void json_conversion_error(Json& j, const fourdgs::ConvertReport& rep);

// `4dgs compare A.ply B.ply`: per-attribute error between two splat PLYs (tools/compare.hpp).
void add_compare(CLI::App& app, int& code);

}  // namespace cli
