// An instant as glTF 2.0 with KHR_gaussian_splatting (`4dgs extract --format glb`), written by
// tinygltf (Debian's libtinygltf-dev). It lives with the CLI, not the tools library, because
// tinygltf's JSON layer (nlohmann-json) reports failures by throwing, and the tools library is
// built without exceptions.
//
// One mesh of one POINTS primitive (the extension's geometry), one node, one scene; every
// attribute a float accessor of its own buffer view in the GLB's binary chunk:
//   POSITION (VEC3, with min and max), COLOR_0 (VEC4: the diffuse colour clamped to 0..1, and
//   opacity: the fallback colour the extension describes), KHR_gaussian_splatting:SCALE (VEC3,
//   the linear scale: the ratified text says "Scale values are linear and MUST NOT be negative";
//   drafts had a log scale), :ROTATION (VEC4 x y z w, unit), :OPACITY (SCALAR, 0..1),
//   :SH_DEGREE_0_COEF_0 (VEC3, (rgb − 0.5) / C0, the PLY's f_dc) and :SH_DEGREE_l_COEF_n for
//   every higher degree the cloud holds (VEC3 r g b of coefficient n of degree l),
// the primitive's extension object {"kernel": "ellipse", "colorSpace": "srgb_rec709_display"}
// (both required by the extension), and "KHR_gaussian_splatting" in extensionsUsed (the
// extension's text: it must be listed there; it is not in extensionsRequired, since a viewer
// without it may still draw the points). A cloud with no gaussians is a scene with no nodes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fourdgs/tools/ply.hpp"

namespace cli {

inline constexpr const char* kGaussianSplattingExtension = "KHR_gaussian_splatting";

// The GLB bytes; throws std::runtime_error when tinygltf cannot serialize the model.
std::vector<std::uint8_t> write_glb(const fourdgs::PlyCloud& cloud);

}  // namespace cli
