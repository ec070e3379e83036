// fourdgs/tools/ply.hpp — the standard 3D gaussian splat PLY, both directions (§12's interchange
// form). Part of the tools library (fourdgs::tools).
//
// The file is the one every 3DGS trainer writes: `ply`, `format binary_little_endian 1.0`, one
// `element vertex N` of float32 properties
//   x y z  [nx ny nz]  f_dc_0..2  [f_rest_0..f_rest_{3K-1}]  opacity  scale_0..2  rot_0..3
// with K = (D+1)^2 - 1 coefficients per colour component for SH degree D (f_rest channel-major:
// every red coefficient, then green's, then blue's), opacity as a logit, scale as a natural log,
// rotation as w x y z, and the DC colour through the SH C0 constant: rgb = 0.5 + C0 * f_dc.
//
// PlyCloud holds the gaussians in the user terms of writer.hpp's GaussianBatch (linear scale,
// xyzw rotation, rgb and opacity in linear units, SH coefficients in the GaussianBlock layout), so
// a cloud goes to the writer and a reconstructed Frame comes back without re-deriving anything.
// Values are decoded as they are, not clamped: a trainer's rgb may leave [0, 1] (convert.hpp
// decides what to do with that).
//
// Reading refuses, naming the value: ply-not-ply (no `ply` magic line), ply-ascii-format,
// ply-big-endian, ply-bad-header (a malformed or unterminated header, an element or property
// line that does not parse, a list property, a second element with data), ply-missing-property,
// ply-duplicate-property, ply-property-type (a splat property that is not float32),
// ply-sh-count (an f_rest count that is not 3K for a whole degree 0..3, or a gap in the f_rest
// numbering), ply-truncated-body (the body is shorter than N vertices). Unknown scalar properties
// are skipped by their size. Every count is checked against the bytes present before anything
// is allocated.
//
// Thread safety: pure functions over caller-owned data.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/reconstruct.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// The zeroth-order SH basis constant, 1 / (2 sqrt(pi)).
inline constexpr double kShC0 = 0.28209479177387814;

struct PlyCloud {
    std::size_t count = 0;
    int sh_degree = 0;               // 0..3, from the f_rest count
    std::vector<float> position;     // 3 per gaussian
    std::vector<float> normal;       // 3 per gaussian (zeros when the file has none)
    std::vector<float> scale;        // 3, linear (exp of the file's log scale)
    std::vector<float> rotation;     // 4, xyzw as stored (not normalized)
    std::vector<float> color;        // 4: rgb = 0.5 + C0 f_dc, opacity = sigmoid(logit)
    std::vector<float> sh;           // count * 3 * K: red's K, green's K, blue's K

    int sh_per_gaussian() const { return 3 * ((sh_degree + 1) * (sh_degree + 1) - 1); }
};

// Parses a whole binary little-endian 3DGS PLY. Refusals above.
Result<PlyCloud> read_ply(std::span<const std::uint8_t> bytes);

// Reads and parses the file at `path` (io-error naming it, then read_ply's refusals, with the
// path prefixed to the message).
Result<PlyCloud> read_ply_file(const std::string& path);

// The same into `into`, its columns' storage reused (a frame read into the cloud of the frame
// before), the body read 256 KiB at a time rather than whole. A refusal of the header or of a
// body shorter than the header declares leaves `into` as it was; a failed read part-way leaves
// it sized but partly written.
Status read_ply_file_into(const std::string& path, PlyCloud& into);

// The property names in file order for a cloud of SH degree `sh_degree` (with normals).
std::vector<std::string> ply_property_names(int sh_degree);

// Serializes `cloud` (normals written as stored, or zeros when `normal` is empty). Opacity is
// written as logit(clamp(a, 1e-7, 1 - 1e-7)), scale as log, colour as (rgb - 0.5) / C0.
// Refusal input-size-mismatch when a column has the wrong length.
Result<std::vector<std::uint8_t>> write_ply(const PlyCloud& cloud);
Status write_ply(const PlyCloud& cloud, ByteSink& sink);

// The visible state of a Frame (reconstruct.hpp) as a cloud: centres, linear scales, rotations,
// rgb and opacity (color.a * marginal), and SH coefficients of degree min(frame.sh_degree,
// max_sh_degree) through §6.5's byte map. Normals are zero.
PlyCloud ply_from_frame(const Frame& frame, int max_sh_degree = 3);

}  // namespace fourdgs
FOURDGS_PUBLIC_END
