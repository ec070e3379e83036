// fourdgs/reconstruct.hpp — the state at scene time t (§3).
//
//   visible  = win_lo <= t < win_hi AND marginal >= cutoff
//   marginal = sigma_t == +inf ? 1 : exp(-0.5 ((t - mu_t) / sigma_t)^2)
//   center   = position + motion (t - mu_t);  opacity = color.a * marginal
//
// then, for a gaussian whose non-zero object_id has an Object Track, that track's pose (R, T)
// once, after the base state: center = R center + T, orientation = R ⊗ rotation (§3, §6.6).
//
// Output is structure-of-arrays in reusable buffers (Frame): the visible gaussians only, packed,
// with the columns a renderer uploads as is. Calling evaluate() again with the same Frame reuses
// its capacity, so a steady-state playback loop allocates nothing.
//
// The Frame is f32, what a renderer wants. The §3 formulas are computed in f64, and a valid file
// can make one of them finite in f64 yet beyond f32 (a gaussian that moves for a very long time:
// position + motion (t - mu_t) past 3.4e38). evaluate() never hands such a row, nor one whose
// decoded values are not finite, to a renderer: it leaves it out and counts it
// (Frame::unrepresentable). visible_state() gives any gaussian's state in f64 (what the
// conformance runner reports).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "fourdgs/export.hpp"
#include "fourdgs/pose.hpp"
#include "fourdgs/scene.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

struct Frame {
    double time = 0;
    std::size_t count = 0;              // visible gaussians
    std::vector<float> center;          // 3 per gaussian
    std::vector<float> scale;           // 3, linear
    std::vector<float> rotation;        // 4, xyzw
    std::vector<float> color;           // 4: r g b and opacity (color.a * marginal)
    std::vector<std::uint32_t> object_id;
    std::vector<std::uint32_t> source;  // index of each visible gaussian in its GaussianBlock
    std::vector<std::uint8_t> flags;    // each one's flags byte (bit 0: never fades)
    int sh_degree = 0;
    std::vector<std::uint8_t> sh;       // when requested: per gaussian as in GaussianBlock
    // Visible gaussians (§3) left out of the columns because a value of theirs is not a finite
    // f32: a center beyond f32's range at this t, or a non-finite decoded value. Every visible
    // gaussian is either one of the `count` rows or counted here.
    std::size_t unrepresentable = 0;

    void clear() noexcept { count = unrepresentable = 0; }
};

// Calls f(&Frame::column, values per row) for each per-gaussian column of a Frame whose SH
// degree is `sh_degree`, in declaration order: the one walk for code that copies, moves or
// compares a frame's rows column by column.
template <class F>
void for_each_frame_column(int sh_degree, F&& f) {
    f(&Frame::center, std::size_t{3});
    f(&Frame::scale, std::size_t{3});
    f(&Frame::rotation, std::size_t{4});
    f(&Frame::color, std::size_t{4});
    f(&Frame::object_id, std::size_t{1});
    f(&Frame::source, std::size_t{1});
    f(&Frame::flags, std::size_t{1});
    f(&Frame::sh, 3 * static_cast<std::size_t>(sh_coeffs_per_component(sh_degree)));
}

struct EvaluateOptions {
    bool with_sh = true;    // copy SH bytes of visible gaussians (up to max_sh_degree)
    int max_sh_degree = 3;
    bool append = false;    // append to the frame instead of replacing its contents
    // The scene's Object Tracks (SceneInfo::object_tracks), composed after the base state.
    // Empty: base state only. Zero-sample tracks and id 0 are ignored (§5.15.7).
    std::span<const ObjectTrack> tracks;
};

// The tracks' poses at one instant, looked up by object id (sorted; files carry few tracks).
class TrackPoses {
public:
    TrackPoses(std::span<const ObjectTrack> tracks, double t) {
        for (const ObjectTrack& tr : tracks)
            if (tr.object_id != 0 && !tr.samples.empty())
                poses_.push_back({tr.object_id, sample_trajectory(tr.samples, tr.interpolation, t)});
        std::sort(poses_.begin(), poses_.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    bool empty() const noexcept { return poses_.empty(); }
    const Pose* find(std::uint32_t id) const {
        if (id == 0) return nullptr;
        auto it = std::lower_bound(poses_.begin(), poses_.end(), id,
                                   [](const auto& p, std::uint32_t v) { return p.first < v; });
        return it != poses_.end() && it->first == id ? &it->second : nullptr;
    }

private:
    std::vector<std::pair<std::uint32_t, Pose>> poses_;
};

// §3 visibility for one gaussian.
inline bool is_visible(float win_lo, float win_hi, float mu_t, float sigma_t, double t,
                       double cutoff, double* marginal_out) {
    if (!(win_lo <= t && t < win_hi)) return false;
    double m = 1.0;
    if (!std::isinf(sigma_t)) {
        const double z = (t - mu_t) / sigma_t;
        m = std::exp(-0.5 * z * z);
    }
    if (marginal_out) *marginal_out = m;
    return m >= cutoff;
}

// The largest float not above t. For a float x, x <= t exactly when x <= it, and t < x exactly
// when it < x, so the §3 window test over f32 columns can compare floats (which vectorize) and
// still decide as the f64 comparison does. NaN stays NaN (every comparison false).
inline float float_at_or_below(double t) {
    constexpr double kMax = std::numeric_limits<float>::max();
    if (t > kMax) return t == std::numeric_limits<double>::infinity()
                             ? std::numeric_limits<float>::infinity()
                             : std::numeric_limits<float>::max();
    if (t < -kMax) return -std::numeric_limits<float>::infinity();
    float f = static_cast<float>(t);
    if (static_cast<double>(f) > t) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
    return f;
}

// The §3 window test for `n` gaussians from `first`: in[j] is 1 when gaussian first + j has
// win_lo <= t < win_hi (tf = float_at_or_below(t)), else 0. Returns how many have.
inline std::uint32_t in_window(const float* __restrict win_lo, const float* __restrict win_hi,
                               std::size_t n, float tf, std::uint32_t* __restrict in) {
    std::uint32_t inside = 0;
    for (std::size_t j = 0; j < n; ++j) {
        in[j] = (win_lo[j] <= tf) & (tf < win_hi[j]);
        inside += in[j];
    }
    return inside;
}

// §3's base_center on one axis: position + motion * (t - mu_t), computed in f64 and rounded once
// to f32, so a large t neither loses the displacement's precision nor overflows an f32 dt. An
// axis that does not move stays exactly at its position at any finite t (0 * inf would be NaN).
inline float displaced(float position, float motion, double t, float mu_t) {
    if (motion == 0.0f) return position;
    return static_cast<float>(double(position) + double(motion) * (t - double(mu_t)));
}

// Fills `frame` with the visible gaussians of `block` at time t (§3), composing
// `options.tracks`. `cutoff` is the Header's. Thread-safe for distinct frames. Each row is bit
// for bit what is_visible(), displaced() and the formulas above give for its gaussian (what
// visible_state() gives, rounded to f32); a visible gaussian with a value that is not a finite
// f32 gets no row and is counted in frame.unrepresentable instead (with options.append, added to
// the count already there). The work is vectorized over runs of gaussians (src/scene/reconstruct.cpp).
void evaluate(const GaussianBlock& block, double t, double cutoff, Frame& frame,
              const EvaluateOptions& options = {});
// The same for the gaussians `rows` of `block` alone (ascending, each < block.count): their
// visible ones' rows, in that order, each bit for bit the row evaluate() gives it (its `source`
// the block row). What a player re-evaluates when only some rows changed.
void evaluate_rows(const GaussianBlock& block, std::span<const std::uint32_t> rows, double t,
                   double cutoff, Frame& frame, const EvaluateOptions& options = {});

// One visible gaussian's §3 state where it may lie beyond f32: the center and orientation in
// f64, the opacity as evaluate() rounds it.
struct VisibleState {
    std::array<double, 3> center{};
    std::array<double, 4> rotation{};  // xyzw; R(t) ⊗ rotation when a track moves it
    float opacity = 0;                 // color.a * marginal
};

// Gaussian `i` of `block` at time t (§3, the tracks in `poses` composed after the base state),
// or nullopt when it is not visible. Wherever evaluate() writes a finite f32, that value is
// exactly this one rounded to f32 (the same operations in the same order: the base center is
// rounded to f32 before a track moves it, unless the rounding would overflow); where it would
// overflow, this is the finite f64 the formulas give. Scale, colour, SH, flags and object_id are
// the block's own. Precondition: i < block.count. Thread-safe.
std::optional<VisibleState> visible_state(const GaussianBlock& block, std::size_t i, double t,
                                          double cutoff, const TrackPoses& poses);

// How many gaussians of `block` are visible at t.
inline std::size_t visible_count(const GaussianBlock& block, double t, double cutoff) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < block.count; ++i)
        n += is_visible(block.win_lo[i], block.win_hi[i], block.mu_t[i], block.sigma_t[i], t,
                        cutoff, nullptr);
    return n;
}

}  // namespace fourdgs
FOURDGS_PUBLIC_END
