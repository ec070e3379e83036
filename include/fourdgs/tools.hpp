// fourdgs/tools.hpp — the tools library (fourdgs::tools) in one include: application code built
// on the core library, which the `4dgs` tool links and a user may too.
//   tools/ply.hpp      the 3DGS PLY format, both directions
//   tools/preview.hpp  a CPU splat preview of an instant, the live-count timeline
//   tools/convert.hpp  PLY frame sequences to scenes, an instant back to a PLY
//   tools/grid_plan.hpp  one grid for a frame sequence, sized to a tolerance, as a JSON file
//   tools/merge.hpp    shards of one scene joined without re-encoding
//   tools/compare.hpp  per-attribute error between two splat clouds
//   tools/splat_formats.hpp  antimatter15 .splat frames in and out, splaTV .splatv in
// Link fourdgs::tools (or fourdgs::tools_static; pkg-config fourdgs-tools), which brings the core
// library with it.
#pragma once

#include "fourdgs/fourdgs.hpp"
#include "fourdgs/tools/ply.hpp"
#include "fourdgs/tools/preview.hpp"
#include "fourdgs/tools/convert.hpp"
#include "fourdgs/tools/grid_plan.hpp"
#include "fourdgs/tools/merge.hpp"
#include "fourdgs/tools/compare.hpp"
#include "fourdgs/tools/splat_formats.hpp"
