// fourdgs/tools/compare.hpp — how far one splat cloud is from another, attribute by attribute:
// the maximum, RMS and 99th-percentile error between two clouds of the same gaussians (PlyCloud,
// ply.hpp), matched by order or by position. It measures any format's error — SPZ, SOG, a .4dgs
// extracted to PLY — with the yardstick the writer's bounds use (§5.3's keys). Part of the tools
// library (fourdgs::tools).
//
// The attributes, each in the units of its bounds key:
//   pos        |Δ| of each coordinate (file units)
//   scale_rel  |Δ log scale| of each axis
//   rot        the largest |Δ| of the four components of the unit quaternions, compared up to
//              sign (as the writer's `rot` bound); rot_deg the angle between the two rotations,
//              in degrees
//   rgb        |Δ| of each colour component (linear, 0.5 + C0 f_dc)
//   alpha      |Δ opacity| (after the sigmoid)
//   sh         |Δ| of each SH coefficient, over the bands both clouds have; sh_band1..3 the same
//              band by band
// Samples are per component (pos, scale_rel, rgb, sh: three a gaussian, or every coefficient) or
// per gaussian (rot, rot_deg, alpha); RMS and p99 are over the samples.
//
// Matching: by order, gaussian i of A against gaussian i of B (the clouds must have as many);
// given, the pairs the caller knows (the overload with `partner`: a converter knows which input
// gaussian each decoded one is, so each is measured against its own input, never a neighbour's),
// those it leaves without a partner then matched by position among themselves; by position,
// pairs of mutual nearest neighbours (each the other's nearest not yet matched), in
// rounds over what is left until a round makes none — so a gaussian whose partner is missing
// from the other cloud stays unmatched rather than taking another's, and duplicates pair up one a
// round (searched in a grid of about one gaussian a cell, within 8 cells); automatic: by order
// when the counts are equal and order puts every pair within a cell of each other (both files
// keep the gaussians in one order), else by position.
//
// Thread safety: pure functions over caller-owned data.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/tools/ply.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

enum class CompareMatch : std::uint8_t { automatic, order, position, given };

// "auto", "order", "position" → CompareMatch; anything else (given among them: its pairs come
// from code, not a name) → nullopt. And back ("given" too).
std::optional<CompareMatch> parse_compare_match(std::string_view name);
std::string_view to_string(CompareMatch match);

struct CompareOptions {
    CompareMatch match = CompareMatch::automatic;  // automatic, order or position
};

// One attribute's error over the matched pairs.
struct AttributeError {
    std::string name;  // pos, scale_rel, rot, rot_deg, rgb, alpha, sh, sh_band1..3
    std::uint64_t samples = 0;
    double max = 0, rms = 0, p99 = 0;
};

struct CompareReport {
    std::size_t a_count = 0, b_count = 0;
    std::size_t matched = 0;          // pairs compared; the rest of each cloud is unmatched
    CompareMatch match = CompareMatch::order;  // how they were matched
    int sh_degree = 0;                // the SH bands compared: the smaller of the two degrees
    std::vector<AttributeError> attributes;  // in the order listed above

    // The attribute named `name`, or nullptr.
    const AttributeError* find(std::string_view name) const;
};

// Compares B against A (A is the reference: errors are B − A). Refusal invalid-argument
// (input-size-mismatch) when matching by order is asked for clouds of different counts, or a
// cloud's columns do not hold its count; no-frames (invalid-argument) when either cloud is empty.
Result<CompareReport> compare_clouds(const PlyCloud& a, const PlyCloud& b,
                                     const CompareOptions& options = {});

// No partner, in compare_clouds' `partner`.
inline constexpr std::uint32_t kNoPartner = 0xFFFFFFFFu;

// The same with the pairs given (CompareMatch::given): `partner` holds one entry per gaussian of
// B, the index of its gaussian in A or kNoPartner (those matched by position among the gaussians
// of both clouds left without a partner); each index of A at most once. The refusals above, and
// input-size-mismatch when `partner` is not one entry a gaussian of B or names a gaussian of A
// twice or past its count.
Result<CompareReport> compare_clouds(const PlyCloud& a, const PlyCloud& b,
                                     std::span<const std::uint32_t> partner);

}  // namespace fourdgs
FOURDGS_PUBLIC_END
