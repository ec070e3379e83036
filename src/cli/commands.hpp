// Subcommands of the `4dgs` tool that live in their own files; each registers itself on the app
// and stores its exit status in `code` when it runs.
#pragma once

#include <fourdgs/tools/convert.hpp>

#include <CLI/CLI.hpp>

#include <string_view>

#include "output.hpp"

namespace cli {

// convert's report of its file against the input (ConvertReport::error, when measured): bytes
// per gaussian, then per attribute the largest error, RMS and p99 beside the tolerance; as text,
// and as the "bytes_per_gaussian" and "error" members of a JSON object.
void print_conversion_error(const fourdgs::ConvertReport& rep, std::string_view effort);
void json_conversion_error(Json& j, const fourdgs::ConvertReport& rep);

// `4dgs compare A.ply B.ply`: per-attribute error between two splat PLYs (tools/compare.hpp).
void add_compare(CLI::App& app, int& code);

}  // namespace cli
