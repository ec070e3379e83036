// depth_order.hpp — the order the viewer draws a Frame's gaussians in: back to front.
//
// Why on the CPU: OpenGL 3.3 core has no compute shaders or storage buffers, so a GPU sort
// would be a chain of bitonic passes through fragment shaders, O(n log² n) work over tens of
// passes. An LSD radix sort of 32-bit keys is O(n) in three passes over the data (9.7 ms of CPU
// time for a million gaussians, depths included, on the project's shared 2-core test machine),
// it is stable, and it is exact: the keys are the view depths'
// f32 bits, so the order is the one `4dgs preview` gets from its comparison sort (farthest
// first, equal depths in frame order), not an approximation of it through depth buckets; only
// depths within one f32 rounding of each other (6e-8 relative) stay in frame order where the
// preview's f64 comparison could order them.
#pragma once

#include <cstdint>
#include <vector>

#include <fourdgs/reconstruct.hpp>
#include <fourdgs/tools/preview.hpp>

namespace viewer {

// Buffers one thread reuses from frame to frame, so a steady playback loop allocates nothing.
struct DepthSortScratch {
    std::vector<std::uint32_t> keys, keys_swap, order_swap;
};

// Fills `order` with the indices of the frame's gaussians that can draw anything through `cam`
// — view depth (along cam.forward, in double precision as render_preview computes it) above
// `near`, opacity above 0, finite centre — sorted farthest first; gaussians at the same f32
// depth keep their frame order. The rest of render_preview's culling (off-image, degenerate
// covariance) is per pixel work the vertex shader does.
void back_to_front(const fourdgs::Frame& frame, const fourdgs::PreviewCamera& cam, double near,
                   std::vector<std::uint32_t>& order, DepthSortScratch& scratch);

}  // namespace viewer
