// fourdgs/tools/preview.hpp — a picture of an instant and of the timeline, on the CPU. Part of
// the tools library (fourdgs::tools); writing the picture as a PNG is the caller's (the `4dgs`
// tool uses stb_image_write).
//
// render_preview splats a reconstructed Frame (reconstruct.hpp): every visible gaussian's 3D
// covariance (from scale and rotation) is projected through a pinhole camera to a 2D ellipse,
// the ellipses are sorted back to front and alpha-blended. It is a preview for people and tests,
// not a reference renderer: DC colour only (SH ignored), no antialiasing filter beyond a 0.3 px
// dilation of each ellipse.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/extras.hpp"
#include "fourdgs/reconstruct.hpp"
#include "fourdgs/scene.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

struct Image {
    int width = 0, height = 0;
    std::vector<std::uint8_t> rgba;  // width * height * 4, row 0 at the top, 8-bit sRGB-ish
};

struct PreviewOptions {
    int width = 640, height = 480;               // 1..8192 each
    std::optional<CameraView> view;              // else: the scene's Camera at t, else framed
    std::array<float, 3> background{0, 0, 0};    // linear rgb in [0, 1]
};

// The view render_preview uses when none is given: the Camera record sampled at t when the
// scene has one, else a view from +z looking at the centre of the Header's aabb (or of the
// frame's centres when the aabb is empty), far enough back to frame it with a 50° fov. A Camera
// record whose view at t is unusable (not finite, position == target, fov outside (0, 180)) is
// passed over for the framed view. The aabb is used when it is finite with max >= min on every
// axis and not all zero; the framing distance is the bounding sphere's radius / sin(25°) (radius
// 1 for a point or an empty frame). Thread-safe.
inline constexpr double kDefaultFovYDeg = 50.0;
CameraView default_view(const SceneInfo& scene, const Frame& frame, double t);

// The look-at pinhole camera render_preview looks through, for a renderer that must draw the
// same picture (examples/viewer): from view.position towards view.target, world up +y (+z when
// the view direction is within 1e-9 of ±y), an orthonormal basis right × up = -forward (right
// to the image's right, up to its top), focal = height / 2 / tan(fov_y / 2) pixels for both axes
// (square pixels), principal point at the image centre. A point at camera coordinates
// (x, y, z) = (·right, ·up, ·forward) lands at pixel (cx + f x / z, cy - f y / z), pixel i
// spanning [i, i + 1), row 0 at the top. tan_half_x / tan_half_y are the half-field tangents.
// Refusals (invalid_argument) as render_preview's: invalid-image-size, invalid-view.
// Thread-safe.
struct PreviewCamera {
    Vec3 eye{}, right{}, up{}, forward{};
    double focal = 0;       // pixels, the same for x and y
    double cx = 0, cy = 0;  // principal point: the image centre
    double tan_half_x = 0, tan_half_y = 0;
};
Result<PreviewCamera> preview_camera(const CameraView& view, int width, int height);

// How render_preview turns a projected covariance into pixels, for a renderer that matches it:
// the 2D covariance gets kPreviewDilation px² on its diagonal; an ellipse is drawn inside
// kPreviewCutoffSigma standard deviations (its axis-aligned box is ±that · √Σxx by ±that · √Σyy,
// its pixels those with dᵀ Σ⁻¹ d <= that²); the EWA Jacobian is taken with x / z and y / z
// clamped to ±kPreviewFrustumClamp times the half-field tangents, as 3D gaussian splatting does.
inline constexpr double kPreviewDilation = 0.3;
inline constexpr double kPreviewCutoffSigma = 3.0;
inline constexpr double kPreviewFrustumClamp = 1.3;

// Renders `frame` (the state at t, from evaluate()) through options.view or default_view().
// Camera: look-at from view.position to view.target with world up +y (+z when the view direction
// is parallel to y), fov_y_deg the vertical field of view, square pixels; image x to the right,
// y down, row 0 at the top. Per gaussian: Σ = R S Sᵀ Rᵀ (rotation normalized, scale linear),
// projected with the EWA Jacobian to a 2D covariance, + 0.3 px² on the diagonal; gaussians whose
// view depth is below kPreviewNear are skipped, as are non-finite ones. Ellipses are drawn back
// to front (ties in input order) with alpha = opacity · exp(-0.5 dᵀ Σ⁻¹ d), cut at 3σ, colour
// the DC colour (frame.color rgb) clamped to [0, 1]; channels are written as round(255 · v),
// alpha 255. Work per gaussian is bounded by its 3σ bounding box clipped to the image; memory is
// the output image, one record per gaussian and one band of float rows. Thread-safe.
// Refusals (invalid_argument): invalid-image-size for a width or height outside 1..8192;
// invalid-view for a view that is not finite, has position == target or a fov_y_deg outside
// (0, 180); frame-size-mismatch when a Frame column holds fewer values than frame.count needs.
inline constexpr int kMaxImageSide = 8192;
inline constexpr double kPreviewNear = 0.01;  // scene units in front of the eye
Result<Image> render_preview(const SceneInfo& scene, const Frame& frame, double t,
                             const PreviewOptions& options = {});

// Live (visible) gaussian counts at `samples` evenly spaced instants over [0, duration]: the
// centres of `samples` equal slices, times[i] = duration · (i + 0.5) / samples, so no instant
// sits on the end of the scene where every window has closed. live[i] equals
// visible_count(block, times[i], cutoff) exactly (the same is_visible test), computed in
// O(count · log samples + samples). `samples` is capped at kMaxTimelineSamples; a duration that
// is not finite and > 0 reads as 0. Thread-safe.
inline constexpr std::size_t kMaxTimelineSamples = std::size_t{1} << 20;
struct LiveTimeline {
    std::vector<double> times;
    std::vector<std::uint64_t> live;
};
LiveTimeline live_timeline(const GaussianBlock& block, double duration, double cutoff,
                           std::size_t samples);

// A bar plot of the timeline: white background, black axes along the left and bottom (when the
// image is at least 16 px on that side), one bar per sample in kTimelineBarRgb, heights scaled so
// the largest count fills the plot area (a non-zero count is at least 1 px tall). When there are
// more samples than plot columns, each column shows the maximum of the samples it covers.
// Refusal (invalid_argument) invalid-image-size for a width or height outside 1..8192.
inline constexpr std::array<std::uint8_t, 3> kTimelineBackgroundRgb{255, 255, 255};
inline constexpr std::array<std::uint8_t, 3> kTimelineAxisRgb{0, 0, 0};
inline constexpr std::array<std::uint8_t, 3> kTimelineBarRgb{52, 110, 200};
Result<Image> plot_timeline(const LiveTimeline& timeline, int width, int height);

// A one-line Unicode sparkline (▁▂▃▄▅▆▇█) of `columns` characters, each the maximum of the
// samples it covers (when there are fewer samples than columns, each column repeats the sample
// it falls in). Zero is ▁, the timeline's maximum is █, any other non-zero count at least ▂.
// An empty timeline gives `columns` ▁. `columns` is capped at kMaxSparklineColumns.
inline constexpr std::size_t kMaxSparklineColumns = 65536;
std::string sparkline(const LiveTimeline& timeline, std::size_t columns);

}  // namespace fourdgs
FOURDGS_PUBLIC_END
