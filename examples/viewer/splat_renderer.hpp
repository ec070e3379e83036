// splat_renderer.hpp — 3D gaussian splatting on OpenGL 3.3 core, the picture `4dgs preview`
// draws (fourdgs/tools/preview.hpp), on the GPU.
//
// Data flow per frame:
//   upload(frame)   the Frame's SoA columns as they are (centre, scale, rotation, colour, SH
//                   bytes) into buffer textures: one copy each, no repacking on the CPU.
//   draw(...)       one instanced draw of a 4-vertex strip per gaussian, in the back-to-front
//                   order of depth_order.hpp (the order is the only per-instance attribute: the
//                   vertex shader fetches the gaussian it names). The vertex shader projects the
//                   3D covariance R S Sᵀ Rᵀ to a screen-space ellipse with the EWA Jacobian, as
//                   render_preview does (and with its constants: kPreviewDilation,
//                   kPreviewCutoffSigma, kPreviewFrustumClamp), adds the view-dependent SH colour
//                   (3DGS's basis, §6.5's byte map) and emits the ellipse's 3σ box; the fragment
//                   shader evaluates the gaussian at the pixel centre. Colours are premultiplied
//                   and blended back to front with ONE, ONE_MINUS_SRC_ALPHA, which is
//                   render_preview's c = α·rgb + (1 − α)·c, into an RGBA32F target so many layers
//                   lose nothing to 8-bit rounding between them.
//   read_back()     that target as 8-bit RGBA, row 0 at the top (an Image, as render_preview's).
//   present(...)    that target scaled into the window.
//
// Needs a current OpenGL 3.3 core context (epoxy resolves the entry points) for its whole life;
// one thread.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include <fourdgs/reconstruct.hpp>
#include <fourdgs/tools/preview.hpp>

namespace viewer {

class SplatRenderer {
public:
    // Compiles the shaders and creates the buffers. Returns nullptr with `error` set when the
    // context cannot (a shader that does not compile, no RGBA32F render target).
    static std::unique_ptr<SplatRenderer> create(std::string& error);
    ~SplatRenderer();
    SplatRenderer(const SplatRenderer&) = delete;
    SplatRenderer& operator=(const SplatRenderer&) = delete;

    // Copies the frame's columns to the GPU. False with `error` set when a column is larger
    // than the context's GL_MAX_TEXTURE_BUFFER_SIZE (then nothing is drawn until a frame fits).
    bool upload(const fourdgs::Frame& frame, std::string& error);

    // Draws the uploaded frame's gaussians listed in `order` (back to front) through `cam` into
    // a width × height target cleared to `background` (linear rgb, opaque).
    void draw(const fourdgs::PreviewCamera& cam, std::span<const std::uint32_t> order, int width,
              int height, const std::array<float, 3>& background);

    // The last draw as 8-bit RGBA (round(255 · v), clamped), row 0 at the top.
    fourdgs::Image read_back() const;

    // Copies the last draw into the default framebuffer (fb_width × fb_height), then draws the
    // time scrubber over its bottom `bar_height` pixels: a track and `fraction` of it filled.
    void present(int fb_width, int fb_height, int bar_height, double fraction);

private:
    struct Gl;
    explicit SplatRenderer(std::unique_ptr<Gl> gl);
    std::unique_ptr<Gl> gl_;
};

}  // namespace viewer
