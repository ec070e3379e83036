// preview.cpp — CPU splatting of a reconstructed Frame, and the live-count timeline.
//
// render_preview: project every gaussian once (EWA, as in 3D gaussian splatting), sort the
// resulting ellipses back to front, then composite them over the background one band of rows at
// a time so the float accumulator stays small whatever the image size.
#include "fourdgs/tools/preview.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace fourdgs {
namespace {

// ---------------------------------------------------------------------------------------------
// Small vector helpers (double precision: the camera basis and projection).

Vec3 sub(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec3 cross(const Vec3& a, const Vec3& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
Vec3 unit(const Vec3& v) {
    const double n = std::sqrt(dot(v, v));
    return {v[0] / n, v[1] / n, v[2] / n};
}
bool finite3(const Vec3& v) {
    return std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2]);
}

bool usable_view(const CameraView& v) {
    return finite3(v.position) && finite3(v.target) && v.position != v.target &&
           std::isfinite(v.fov_y_deg) && v.fov_y_deg > 0 && v.fov_y_deg < 180;
}

Error invalid_size(const char* what, int w, int h) {
    return make_error(ErrorKind::invalid_argument, refusal::kInvalidImageSize,
                      std::string(what) + " size " + std::to_string(w) + "x" + std::to_string(h) +
                          " is outside 1.." + std::to_string(kMaxImageSide) + " per side");
}
bool valid_side(int n) { return n >= 1 && n <= kMaxImageSide; }

// A linear value in [0, 1] as a byte; NaN and negatives are 0.
std::uint8_t to_byte(double v) {
    if (!(v > 0)) return 0;
    if (v >= 1) return 255;
    return static_cast<std::uint8_t>(std::lround(v * 255.0));
}

// One projected gaussian: where its ellipse is, its inverse covariance, colour and extent.
struct Splat {
    double depth = 0;
    double mx = 0, my = 0;                   // centre in pixels (pixel i spans [i, i + 1))
    double conic_a = 0, conic_b = 0, conic_c = 0;  // Σ⁻¹ = [[a, b], [b, c]]
    float rgb[3]{};
    float opacity = 0;
    int x0 = 0, x1 = 0, y0 = 0, y1 = 0;      // inclusive pixel bounds of the 3σ box, clipped
};

// Projects gaussian i of the frame; false when it draws nothing (behind the near plane, off the
// image, transparent, degenerate or non-finite).
bool project(const Frame& frame, std::size_t i, const PreviewCamera& cam, int width, int height,
             Splat& out) {
    const float* c = &frame.center[i * 3];
    const Vec3 d = sub({c[0], c[1], c[2]}, cam.eye);
    const double xc = dot(d, cam.right), yc = dot(d, cam.up), zc = dot(d, cam.forward);
    if (!(zc > kPreviewNear) || !std::isfinite(xc) || !std::isfinite(yc)) return false;

    const float opacity = frame.color[i * 4 + 3];
    if (!(opacity > 0) || !std::isfinite(opacity)) return false;

    // M = R S, so Σ = M Mᵀ.
    const float* q = &frame.rotation[i * 4];
    const Quat r = normalized({q[0], q[1], q[2], q[3]});
    const double x = r[0], y = r[1], z = r[2], w = r[3];
    const double rot[3][3] = {
        {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
        {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
        {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
    const float* s = &frame.scale[i * 3];
    if (!std::isfinite(s[0]) || !std::isfinite(s[1]) || !std::isfinite(s[2])) return false;

    // The EWA Jacobian of (u, v) = (cx + f x / z, cy - f y / z) at the centre, composed with the
    // world-to-camera rotation: T = J W (2 × 3). Like 3DGS, x / z and y / z are clamped a little
    // past the frustum so gaussians far off to the side do not get absurd Jacobians.
    const double lim_x = kPreviewFrustumClamp * cam.tan_half_x;
    const double lim_y = kPreviewFrustumClamp * cam.tan_half_y;
    const double tx = std::clamp(xc / zc, -lim_x, lim_x) * zc;
    const double ty = std::clamp(yc / zc, -lim_y, lim_y) * zc;
    const double f = cam.focal;
    const double j00 = f / zc, j02 = -f * tx / (zc * zc);
    const double j11 = -f / zc, j12 = f * ty / (zc * zc);
    double t[2][3];
    for (int k = 0; k < 3; ++k) {
        t[0][k] = j00 * cam.right[k] + j02 * cam.forward[k];
        t[1][k] = j11 * cam.up[k] + j12 * cam.forward[k];
    }
    // A = T M; Σ2 = A Aᵀ.
    double a[2][3];
    for (int row = 0; row < 2; ++row)
        for (int col = 0; col < 3; ++col)
            a[row][col] = (t[row][0] * rot[0][col] + t[row][1] * rot[1][col] +
                           t[row][2] * rot[2][col]) *
                          s[col];
    const Vec3 a0{a[0][0], a[0][1], a[0][2]}, a1{a[1][0], a[1][1], a[1][2]};
    const double sxx = dot(a0, a0) + kPreviewDilation;
    const double sxy = dot(a0, a1);
    const double syy = dot(a1, a1) + kPreviewDilation;
    const double det = sxx * syy - sxy * sxy;
    if (!(det > 0) || !std::isfinite(det)) return false;

    out.depth = zc;
    out.mx = cam.cx + f * xc / zc;
    out.my = cam.cy - f * yc / zc;
    out.conic_a = syy / det;
    out.conic_b = -sxy / det;
    out.conic_c = sxx / det;
    // The 3σ ellipse's axis-aligned box is ±3√Σxx by ±3√Σyy; pixel centres sit at i + 0.5.
    const double hx = kPreviewCutoffSigma * std::sqrt(sxx);
    const double hy = kPreviewCutoffSigma * std::sqrt(syy);
    const double fx0 = std::ceil(out.mx - hx - 0.5), fx1 = std::floor(out.mx + hx - 0.5);
    const double fy0 = std::ceil(out.my - hy - 0.5), fy1 = std::floor(out.my + hy - 0.5);
    if (!(fx1 >= 0 && fx0 <= width - 1 && fy1 >= 0 && fy0 <= height - 1)) return false;
    out.x0 = static_cast<int>(std::max(fx0, 0.0));
    out.x1 = static_cast<int>(std::min(fx1, width - 1.0));
    out.y0 = static_cast<int>(std::max(fy0, 0.0));
    out.y1 = static_cast<int>(std::min(fy1, height - 1.0));
    for (int k = 0; k < 3; ++k) {
        const float v = frame.color[i * 4 + k];
        out.rgb[k] = v > 0 ? std::min(v, 1.0f) : 0.0f;
    }
    out.opacity = std::min(opacity, 1.0f);
    return true;
}

bool frame_columns_fit(const Frame& frame) {
    const std::size_t n = frame.count;
    // Guard the multiplications below against a count no vector could hold.
    if (n > frame.center.max_size() / 4) return false;
    return frame.center.size() >= n * 3 && frame.scale.size() >= n * 3 &&
           frame.rotation.size() >= n * 4 && frame.color.size() >= n * 4;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

CameraView default_view(const SceneInfo& scene, const Frame& frame, double t) {
    if (scene.camera) {
        CameraView v = camera_at(*scene.camera, t);
        if (usable_view(v)) return v;
    }
    const auto& box = scene.header.aabb;
    bool box_usable = std::any_of(box.begin(), box.end(), [](double v) { return v != 0; });
    for (int k = 0; k < 3; ++k)
        box_usable = box_usable && std::isfinite(box[k]) && std::isfinite(box[k + 3]) &&
                     box[k + 3] >= box[k];
    Vec3 lo{}, hi{};
    if (box_usable) {
        lo = {box[0], box[1], box[2]};
        hi = {box[3], box[4], box[5]};
    } else if (frame_columns_fit(frame)) {
        // The bounding box of the frame's finite centres.
        bool any = false;
        for (std::size_t i = 0; i < frame.count; ++i) {
            const Vec3 p{frame.center[i * 3], frame.center[i * 3 + 1], frame.center[i * 3 + 2]};
            if (!finite3(p)) continue;
            for (int k = 0; k < 3; ++k) {
                lo[k] = any ? std::min(lo[k], p[k]) : p[k];
                hi[k] = any ? std::max(hi[k], p[k]) : p[k];
            }
            any = true;
        }
    }
    const Vec3 centre{(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2};
    double radius = std::sqrt(dot(sub(hi, lo), sub(hi, lo))) / 2;
    if (!(radius > 0) || !std::isfinite(radius)) radius = 1;
    const double pi = std::acos(-1.0);
    // A sphere of this radius just fits the vertical field of view from this distance.
    const double distance = radius / std::sin(kDefaultFovYDeg * pi / 360.0);
    CameraView v;
    v.target = centre;
    v.position = {centre[0], centre[1], centre[2] + distance};
    v.fov_y_deg = kDefaultFovYDeg;
    return v;
}

Result<PreviewCamera> preview_camera(const CameraView& view, int width, int height) {
    if (!valid_side(width) || !valid_side(height)) return invalid_size("preview", width, height);
    if (!usable_view(view))
        return make_error(ErrorKind::invalid_argument, refusal::kInvalidView,
                          "view with fov_y_deg " + std::to_string(view.fov_y_deg) +
                              " is not finite, has position == target, or its fov is outside "
                              "(0, 180)");
    PreviewCamera cam;
    cam.eye = view.position;
    cam.forward = unit(sub(view.target, view.position));
    // World up +y, or +z when looking (almost) straight along y, where +y gives no right vector.
    Vec3 world_up{0, 1, 0};
    if (std::abs(cam.forward[1]) > 1 - 1e-9) world_up = {0, 0, 1};
    cam.right = unit(cross(cam.forward, world_up));
    cam.up = cross(cam.right, cam.forward);
    const double pi = std::acos(-1.0);
    cam.tan_half_y = std::tan(view.fov_y_deg * pi / 360.0);
    cam.focal = 0.5 * height / cam.tan_half_y;
    cam.tan_half_x = 0.5 * width / cam.focal;
    cam.cx = 0.5 * width;
    cam.cy = 0.5 * height;
    return cam;
}

Result<Image> render_preview(const SceneInfo& scene, const Frame& frame, double t,
                             const PreviewOptions& options) {
    const int width = options.width, height = options.height;
    if (!valid_side(width) || !valid_side(height)) return invalid_size("preview", width, height);
    if (!frame_columns_fit(frame))
        return make_error(ErrorKind::invalid_argument, refusal::kFrameSizeMismatch,
                          "frame.count " + std::to_string(frame.count) +
                              " needs more values than the frame's columns hold");
    const CameraView view = options.view ? *options.view : default_view(scene, frame, t);
    FOURDGS_ASSIGN(const PreviewCamera cam, preview_camera(view, width, height));

    std::vector<Splat> splats;
    splats.reserve(frame.count);
    for (std::size_t i = 0; i < frame.count; ++i) {
        Splat sp;
        if (project(frame, i, cam, width, height, sp)) splats.push_back(sp);
    }
    // Back to front: the farthest first, so nearer ellipses are blended over it; stable, so
    // equal depths keep input order and the picture is deterministic.
    std::stable_sort(splats.begin(), splats.end(),
                     [](const Splat& a, const Splat& b) { return a.depth > b.depth; });

    Image image;
    image.width = width;
    image.height = height;
    image.rgba.resize(static_cast<std::size_t>(width) * height * 4);

    // Composite in bands of rows: the float accumulator is band × width, not the whole image.
    constexpr int kBandRows = 64;
    std::vector<float> band(static_cast<std::size_t>(std::min(kBandRows, height)) * width * 3);
    for (int band_y0 = 0; band_y0 < height; band_y0 += kBandRows) {
        const int band_y1 = std::min(band_y0 + kBandRows, height) - 1;  // inclusive
        for (std::size_t p = 0; p < band.size(); p += 3)
            for (int k = 0; k < 3; ++k) band[p + k] = options.background[k];
        for (const Splat& sp : splats) {
            const int y0 = std::max(sp.y0, band_y0), y1 = std::min(sp.y1, band_y1);
            for (int py = y0; py <= y1; ++py) {
                const double dy = py + 0.5 - sp.my;
                float* row = &band[(static_cast<std::size_t>(py - band_y0) * width) * 3];
                for (int px = sp.x0; px <= sp.x1; ++px) {
                    const double dx = px + 0.5 - sp.mx;
                    const double power =
                        sp.conic_a * dx * dx + 2 * sp.conic_b * dx * dy + sp.conic_c * dy * dy;
                    if (power > kPreviewCutoffSigma * kPreviewCutoffSigma) continue;  // outside 3σ
                    const float alpha = sp.opacity * static_cast<float>(std::exp(-0.5 * power));
                    float* px_rgb = row + static_cast<std::size_t>(px) * 3;
                    for (int k = 0; k < 3; ++k)
                        px_rgb[k] = alpha * sp.rgb[k] + (1 - alpha) * px_rgb[k];
                }
            }
        }
        for (int py = band_y0; py <= band_y1; ++py)
            for (int px = 0; px < width; ++px) {
                const float* src =
                    &band[(static_cast<std::size_t>(py - band_y0) * width + px) * 3];
                std::uint8_t* dst = &image.rgba[(static_cast<std::size_t>(py) * width + px) * 4];
                for (int k = 0; k < 3; ++k) dst[k] = to_byte(src[k]);
                dst[3] = 255;
            }
    }
    return image;
}

// ---------------------------------------------------------------------------------------------
// Timeline.

LiveTimeline live_timeline(const GaussianBlock& block, double duration, double cutoff,
                           std::size_t samples) {
    LiveTimeline tl;
    samples = std::min(samples, kMaxTimelineSamples);
    if (samples == 0) return tl;
    if (!(duration > 0) || !std::isfinite(duration)) duration = 0;
    tl.times.resize(samples);
    for (std::size_t i = 0; i < samples; ++i)
        tl.times[i] = duration * (static_cast<double>(i) + 0.5) / static_cast<double>(samples);

    // A gaussian is visible over one contiguous run of the (increasing) sample times: its window
    // is an interval and its marginal rises to mu_t and falls after it (rounding keeps both
    // monotone). So two binary searches find the run, and a difference array adds it up. The
    // predicates use is_visible itself for the marginal, so the counts equal visible_count's.
    const double inf = std::numeric_limits<double>::infinity();
    const std::size_t n = std::min({block.count, block.win_lo.size(), block.win_hi.size(),
                                    block.mu_t.size(), block.sigma_t.size()});
    std::vector<std::int64_t> delta(samples + 1, 0);
    for (std::size_t g = 0; g < n; ++g) {
        const float lo = block.win_lo[g], hi = block.win_hi[g];
        const float mu = block.mu_t[g], sigma = block.sigma_t[g];
        auto marginal_passes = [&](double t) {
            return is_visible(static_cast<float>(-inf), static_cast<float>(inf), mu, sigma, t,
                              cutoff, nullptr);
        };
        // Not before the run: inside the window's start, and past the rising edge.
        auto started = [&](double t) { return lo <= t && (t >= mu || marginal_passes(t)); };
        // After the run: past the window's end, or past the falling edge.
        auto ended = [&](double t) { return t >= hi || (t >= mu && !marginal_passes(t)); };
        const std::size_t first = static_cast<std::size_t>(
            std::partition_point(tl.times.begin(), tl.times.end(),
                                 [&](double t) { return !started(t); }) -
            tl.times.begin());
        const std::size_t last = static_cast<std::size_t>(
            std::partition_point(tl.times.begin(), tl.times.end(),
                                 [&](double t) { return !ended(t); }) -
            tl.times.begin());
        if (first < last) {
            ++delta[first];
            --delta[last];
        }
    }
    tl.live.resize(samples);
    std::int64_t running = 0;
    for (std::size_t i = 0; i < samples; ++i) {
        running += delta[i];
        tl.live[i] = static_cast<std::uint64_t>(running);
    }
    return tl;
}

namespace {

// The maximum of the samples that column `col` of `columns` covers; with fewer samples than
// columns, the one sample the column falls in.
std::uint64_t column_max(const std::vector<std::uint64_t>& values, std::size_t col,
                         std::size_t columns) {
    const std::size_t n = values.size();
    std::size_t lo = col * n / columns, hi = (col + 1) * n / columns;
    if (hi <= lo) hi = lo + 1;
    return *std::max_element(values.begin() + static_cast<std::ptrdiff_t>(lo),
                             values.begin() + static_cast<std::ptrdiff_t>(std::min(hi, n)));
}

}  // namespace

Result<Image> plot_timeline(const LiveTimeline& timeline, int width, int height) {
    if (!valid_side(width) || !valid_side(height)) return invalid_size("plot", width, height);
    Image image;
    image.width = width;
    image.height = height;
    image.rgba.resize(static_cast<std::size_t>(width) * height * 4);
    auto put = [&](int x, int y, const std::array<std::uint8_t, 3>& rgb) {
        std::uint8_t* p = &image.rgba[(static_cast<std::size_t>(y) * width + x) * 4];
        p[0] = rgb[0];
        p[1] = rgb[1];
        p[2] = rgb[2];
        p[3] = 255;
    };
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) put(x, y, kTimelineBackgroundRgb);

    // Margins for the axes when there is room for them; tiny images are all plot.
    const int left = width >= 16 ? std::clamp(width / 16, 2, 48) : 0;
    const int right = width >= 16 ? std::clamp(width / 64, 1, 16) : 0;
    const int bottom = height >= 16 ? std::clamp(height / 16, 2, 48) : 0;
    const int top = height >= 16 ? std::clamp(height / 64, 1, 16) : 0;
    const int plot_w = width - left - right, plot_h = height - top - bottom;
    const int baseline = height - bottom;  // the first row below the plot area

    if (left > 0)
        for (int y = top; y < std::min(baseline + 1, height); ++y) put(left - 1, y, kTimelineAxisRgb);
    if (bottom > 0)
        for (int x = std::max(left - 1, 0); x < width - right; ++x) put(x, baseline, kTimelineAxisRgb);

    const std::size_t n = std::min(timeline.live.size(), kMaxTimelineSamples);
    if (n == 0) return image;
    const std::vector<std::uint64_t> live(timeline.live.begin(),
                                          timeline.live.begin() + static_cast<std::ptrdiff_t>(n));
    const std::uint64_t peak = *std::max_element(live.begin(), live.end());
    if (peak == 0) return image;
    const auto columns = static_cast<std::size_t>(plot_w);
    // With room to spare (3+ columns per sample), a one-column gap separates the bars.
    const bool gaps = n * 3 <= columns;
    for (std::size_t col = 0; col < columns; ++col) {
        if (gaps && (col + 1) * n / columns > col * n / columns) continue;
        const std::uint64_t v = column_max(live, col, columns);
        if (v == 0) continue;
        int bar = static_cast<int>(std::lround(static_cast<double>(v) * plot_h /
                                               static_cast<double>(peak)));
        bar = std::clamp(bar, 1, plot_h);
        for (int y = baseline - bar; y < baseline; ++y)
            put(left + static_cast<int>(col), y, kTimelineBarRgb);
    }
    return image;
}

std::string sparkline(const LiveTimeline& timeline, std::size_t columns) {
    static const char* const kGlyphs[8] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                           "\u2585", "\u2586", "\u2587", "\u2588"};
    columns = std::min(columns, kMaxSparklineColumns);
    const std::vector<std::uint64_t>& live = timeline.live;
    const std::uint64_t peak = live.empty() ? 0 : *std::max_element(live.begin(), live.end());
    std::string out;
    out.reserve(columns * 3);
    for (std::size_t col = 0; col < columns; ++col) {
        int level = 0;
        if (peak > 0) {
            const std::uint64_t v = column_max(live, col, columns);
            if (v > 0)
                level = std::max(1, static_cast<int>(std::lround(static_cast<double>(v) * 7.0 /
                                                                 static_cast<double>(peak))));
        }
        out += kGlyphs[level];
    }
    return out;
}

}  // namespace fourdgs
