// evaluate() (fourdgs/reconstruct.hpp): the §3 state of a block at time t, a run at a time.
//
// Per run of gaussians: the window test as a float compare; the indices of those inside their
// window packed; their exponents -0.5 z^2 (z = (t - mu_t) / sigma_t) in f64, dropping those whose
// marginal cannot reach the cutoff; the marginal estimated by a polynomial that vectorizes, and
// used wherever it decides the §3 result for certain (visibility, and the f32 opacity), the
// formula's own std::exp everywhere else (one visible gaussian in 2^14); then the visible
// gaussians' rows. The output is bit-identical to the per-gaussian formulas
// (tests/test_decode_exact.cpp); one libm exp per gaussian in its window was half the time.
// A run's rows are then checked for values that are not finite f32 (an or over their bits that
// vectorizes, in cache as they were just written); only a run that has one is compacted.
#include "fourdgs/reconstruct.hpp"
#include "fourdgs/portable.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "platform/target_clones.hpp"

// The loops that vectorize are compiled twice where the toolchain can pick a version at load
// time: for AVX2 with FMA, and for the baseline. Both give the same output: FMA changes only the
// estimate's last bits, which settle() below allows for.
#define FOURDGS_VECTOR_CLONES FOURDGS_TARGET_CLONES("arch=x86-64-v3")

namespace fourdgs {
namespace {

constexpr std::size_t kRun = 1024;

// The largest z*z whose marginal exp(-0.5 z*z) can reach `cutoff`, plus a margin: every gaussian
// above it has a marginal below the cutoff, so it is dropped before any exp. The margin, 2e-6 in
// z*z, is a factor 1e-6 in the marginal, ten orders of magnitude above the error of exp and log
// in any libm (a few ulp). For a cutoff below the normal range (where an exp result loses its
// relative precision), at or below 0 (every marginal passes) or NaN (none does, and the §3
// comparison says so) nothing is dropped.
double z2_limit(double cutoff) {
    if (!(cutoff >= 1e-300)) return std::numeric_limits<double>::infinity();
    return -2.0 * std::log(cutoff) + 2e-6;
}

// e^x for x in [-708, 0] (2^n within the normal range), within 2^-50 relative: x = n ln2 + r,
// |r| <= ln2/2, e^r by its Taylor series to r^12 (the next term is below 2^-51 of the sum).
// Branch-free, so a loop over it vectorizes.
inline double exp_estimate(double x) {
    constexpr double kInvLn2 = 0x1.71547652b82fep0;
    constexpr double kShift = 0x1.8p52;  // adding it rounds to an integer, kept in the low bits
    constexpr double kLn2Hi = 0x1.62e42fefa3800p-1, kLn2Lo = 0x1.ef35793c76730p-45;
    double n = x * kInvLn2 + kShift;
    const std::uint64_t n_bits = fourdgs::bit_cast<std::uint64_t>(n);
    n -= kShift;
    const double r = (x - n * kLn2Hi) - n * kLn2Lo;
    double p = 1.0 / 479001600;  // 1/12!
    p = p * r + 1.0 / 39916800;
    p = p * r + 1.0 / 3628800;
    p = p * r + 1.0 / 362880;
    p = p * r + 1.0 / 40320;
    p = p * r + 1.0 / 5040;
    p = p * r + 1.0 / 720;
    p = p * r + 1.0 / 120;
    p = p * r + 1.0 / 24;
    p = p * r + 1.0 / 6;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    // 2^n: the low bits of n_bits hold n (two's complement); shifted into the exponent field.
    return p * fourdgs::bit_cast<double>((n_bits + 1023) << 52);
}

// Whether every double within a factor 1 ± 2^-40 of p rounds to the same f32 as p. In f32's
// normal range, rounding keeps the top 24 of a double's 53 significant bits; it goes one way or
// the other only where the 29 bits below sit at the half-way pattern, and 2^-40 of p is at most
// 2^13 units of those bits, so p is safe unless they are within 2^14 of it.
inline bool rounds_alike(double p) {
    const double a = std::fabs(p);
    const std::uint64_t low = fourdgs::bit_cast<std::uint64_t>(p) & 0x1fffffff;
    // Bitwise, not short-circuit: the loop over it vectorizes.
    return (p == 0) | ((a >= 0x1p-126) & (a < 0x1p127) & (low - (0x10000000 - 0x4000) >= 0x8000));
}

// Asks the cache for the `kRun` rows of a column from row `first` (`per` values a row).
template <class T, class A>
void prefetch_rows(const std::vector<T, A>& column, std::size_t per, std::size_t first) {
    const char* rows = reinterpret_cast<const char*>(column.data() + first * per);
    for (std::size_t at = 0; at < kRun * per * sizeof(T); at += 64) __builtin_prefetch(rows + at);
}

// The §3 window test over a run (in_window(), compiled for the vector unit at hand).
FOURDGS_VECTOR_CLONES
std::uint32_t window_run(const float* __restrict win_lo, const float* __restrict win_hi,
                         std::size_t n, float tf, std::uint32_t* __restrict in) {
    return in_window(win_lo, win_hi, n, tf, in);
}

// The exponent of each marginal, -0.5 z^2 (0 for a gaussian that never fades: its marginal is
// 1), and whether the marginal can reach the cutoff (z^2 at most `limit`).
FOURDGS_VECTOR_CLONES
void exponents(const float* __restrict mu_t, const float* __restrict sigma_t, std::size_t n,
               double t, double limit, double* __restrict arg, std::uint32_t* __restrict reaches) {
    for (std::size_t k = 0; k < n; ++k) {
        const double z = (t - mu_t[k]) / sigma_t[k];
        const bool never_fades = std::isinf(sigma_t[k]);
        arg[k] = never_fades ? 0.0 : -0.5 * z * z;
        reaches[k] = never_fades | (z * z <= limit);  // a NaN z does not, nor does exp(NaN)
    }
}

// Where the estimated marginal decides the result: state[k] is 1 (visible, and opacity[k] is
// exactly what §3's formula gives), 0 (not visible), or 2 (undecided: compute the formula).
// The estimate and any libm's exp are each within 2^-48 of e^x, so they differ by less than
// 2^-40 of either: a marginal at least that far from the cutoff (`above`, `below`) is on the
// same side of it, and a product alpha * marginal that rounds_alike() rounds to the same f32.
FOURDGS_VECTOR_CLONES
void settle(const double* __restrict arg, const float* __restrict alpha, std::size_t n,
            double above, double below, float* __restrict opacity,
            std::uint32_t* __restrict state) {
    for (std::size_t k = 0; k < n; ++k) {
        const double m = exp_estimate(std::max(arg[k], -708.0));
        const double p = alpha[k] * m;
        opacity[k] = static_cast<float>(p);
        const bool visible = m >= above;
        const bool sure = (arg[k] >= -708.0) & rounds_alike(p) & (visible | (m < below));
        state[k] = sure ? std::uint32_t{visible} : 2u;
    }
}

// The visible gaussians `pick[0..n)` of `block`, written from slot `o` of `frame`. Copies of a
// gaussian's floats go as one fixed-size memcpy (a vector load and store).
void write_columns(const GaussianBlock& block, double t, const std::uint32_t* pick,
                   const float* opacity, std::size_t n, std::size_t o, int per_dst, Frame& frame) {
    const float* position = block.position.data();
    const float* motion = block.motion.data();
    const float* mu_t = block.mu_t.data();
    const float* scale_in = block.scale.data();
    const float* rotation_in = block.rotation.data();
    const float* color_in = block.color.data();
    float* center = frame.center.data() + o * 3;
    float* scale = frame.scale.data() + o * 3;
    float* rotation = frame.rotation.data() + o * 4;
    float* color = frame.color.data() + o * 4;
    for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = pick[k];
        for (std::size_t c = 0; c < 3; ++c)
            center[k * 3 + c] = displaced(position[i * 3 + c], motion[i * 3 + c], t, mu_t[i]);
        std::memcpy(scale + k * 3, scale_in + i * 3, 3 * sizeof(float));
        std::memcpy(rotation + k * 4, rotation_in + i * 4, 4 * sizeof(float));
        std::memcpy(color + k * 4, color_in + i * 4, 3 * sizeof(float));
        color[k * 4 + 3] = opacity[k];
    }
    std::uint32_t* object_id = frame.object_id.data() + o;
    if (block.object_id.empty()) std::fill(object_id, object_id + n, 0u);
    else
        for (std::size_t k = 0; k < n; ++k) object_id[k] = block.object_id[pick[k]];
    std::copy(pick, pick + n, frame.source.data() + o);
    std::uint8_t* flags = frame.flags.data() + o;
    for (std::size_t k = 0; k < n; ++k) flags[k] = block.flags[pick[k]];
    if (per_dst == 0) return;
    // One file's blocks share a degree; a block with fewer bands (a truncated chunk) fills the
    // missing coefficients with byte 128, the code nearest to 0.
    const std::size_t per_src = sh_coeffs_per_component(block.sh_degree), dst = per_dst;
    const std::size_t per_copy = std::min(per_src, dst);
    for (std::size_t k = 0; k < n; ++k)
        for (std::size_t c = 0; c < 3; ++c) {
            std::uint8_t* out = &frame.sh[((o + k) * 3 + c) * dst];
            const std::uint8_t* in = &block.sh[(std::size_t{pick[k]} * 3 + c) * per_src];
            std::copy(in, in + per_copy, out);
            std::fill(out + per_copy, out + dst, std::uint8_t{128});
        }
}

// Whether any of the n floats is not finite: the largest magnitude's bits reach the exponent of
// all ones. A max over the bits without a branch, so it vectorizes.
FOURDGS_VECTOR_CLONES
bool any_non_finite(const float* __restrict v, std::size_t n) {
    std::uint32_t largest = 0;
    for (std::size_t k = 0; k < n; ++k)
        largest = std::max(largest, fourdgs::bit_cast<std::uint32_t>(v[k]) & 0x7fffffffu);
    return largest >= 0x7f800000u;
}

// Calls fn(column, values per row) for each of a Frame's row columns; SH only when sh_per > 0.
template <class F>
void for_each_frame_column(Frame& f, std::size_t sh_per, F&& fn) {
    fn(f.center, 3);
    fn(f.scale, 3);
    fn(f.rotation, 4);
    fn(f.color, 4);
    fn(f.object_id, 1);
    fn(f.source, 1);
    fn(f.flags, 1);
    if (sh_per > 0) fn(f.sh, sh_per);
}

bool row_finite(const Frame& f, std::size_t k) {
    return !any_non_finite(&f.center[k * 3], 3) && !any_non_finite(&f.scale[k * 3], 3) &&
           !any_non_finite(&f.rotation[k * 4], 4) && !any_non_finite(&f.color[k * 4], 4);
}

// Rows [first, first + n) of `frame` with a value that is not a finite f32 are removed, the rows
// after them moved up; `keep(k)` may spare one (a row a track will move yet). Returns how many
// rows remain.
template <class Keep>
std::size_t drop_non_finite(Frame& f, std::size_t first, std::size_t n, int per_dst,
                            const Keep& keep) {
    const std::size_t sh = 3 * static_cast<std::size_t>(per_dst);
    std::size_t out = first;
    for (std::size_t k = first; k < first + n; ++k) {
        if (!row_finite(f, k) && !keep(k)) continue;
        if (out != k)
            for_each_frame_column(f, sh, [&](auto& column, std::size_t per) {
                std::copy_n(column.begin() + static_cast<std::ptrdiff_t>(k * per), per,
                            column.begin() + static_cast<std::ptrdiff_t>(out * per));
            });
        ++out;
    }
    return out - first;
}

// The rows of a run just written: none has a non-finite value (the rule), or the run is
// compacted. A row whose center alone is not finite and whose object has a track is kept: the
// track pass computes its center again in f64 (visible_state()'s order), and may bring it back.
std::size_t keep_finite_rows(Frame& f, std::size_t o, std::size_t n, int per_dst,
                             const TrackPoses& poses) {
    if (!any_non_finite(&f.center[o * 3], n * 3) && !any_non_finite(&f.scale[o * 3], n * 3) &&
        !any_non_finite(&f.rotation[o * 4], n * 4) && !any_non_finite(&f.color[o * 4], n * 4))
        return n;
    return drop_non_finite(f, o, n, per_dst, [&](std::size_t k) {
        return poses.find(f.object_id[k]) != nullptr && !any_non_finite(&f.scale[k * 3], 3) &&
               !any_non_finite(&f.rotation[k * 4], 4) && !any_non_finite(&f.color[k * 4], 4);
    });
}

// §3's base center of gaussian i in f64, rounded to f32 where that stays finite (what
// evaluate() writes before a track moves it).
std::array<double, 3> base_center(const GaussianBlock& block, std::size_t i, double t) {
    std::array<double, 3> c{};
    for (std::size_t k = 0; k < 3; ++k) {
        const float p = block.position[i * 3 + k], v = block.motion[i * 3 + k];
        const double x = v == 0.0f ? double(p) : double(p) + double(v) * (t - double(block.mu_t[i]));
        const float rounded = static_cast<float>(x);
        c[k] = std::isfinite(rounded) ? double(rounded) : x;
    }
    return c;
}

}  // namespace

std::optional<VisibleState> visible_state(const GaussianBlock& block, std::size_t i, double t,
                                          double cutoff, const TrackPoses& poses) {
    double marginal = 1.0;
    if (!is_visible(block.win_lo[i], block.win_hi[i], block.mu_t[i], block.sigma_t[i], t, cutoff,
                    &marginal))
        return std::nullopt;
    VisibleState s;
    s.center = base_center(block, i, t);
    for (std::size_t k = 0; k < 4; ++k) s.rotation[k] = block.rotation[i * 4 + k];
    const std::uint32_t id = block.object_id.empty() ? 0 : block.object_id[i];
    if (const Pose* p = poses.find(id)) {
        s.center = fourdgs::apply(*p, s.center);
        s.rotation = multiply(p->rotation, s.rotation);
    }
    s.opacity = static_cast<float>(block.color[i * 4 + 3] * marginal);
    return s;
}

namespace {

// What every run of one evaluation shares: the block, the instant, the cutoff's bounds, the
// frame's SH width and the tracks' poses at t.
struct Evaluation {
    const GaussianBlock& block;
    Frame& frame;
    double t, cutoff;
    int per_dst;
    TrackPoses poses;
    float tf;
    double limit, above, below;

    Evaluation(const GaussianBlock& b, double t_, double cutoff_, Frame& f,
               const EvaluateOptions& options)
        : block(b), frame(f), t(t_), cutoff(cutoff_), per_dst(0),
          poses(b.object_id.empty() ? std::span<const ObjectTrack>{} : options.tracks, t_),
          tf(float_at_or_below(t_)), limit(z2_limit(cutoff_)),
          above(cutoff_ + std::fabs(cutoff_) * 0x1p-40),
          below(cutoff_ - std::fabs(cutoff_) * 0x1p-40) {
        if (!options.append) frame.count = frame.unrepresentable = 0;
        const int deg = options.with_sh ? std::min(block.sh_degree, options.max_sh_degree) : 0;
        if (!options.append || frame.count == 0) frame.sh_degree = deg;
        per_dst = sh_coeffs_per_component(frame.sh_degree);
    }

    // Room for `rows` more rows (the worst case: every one visible); count says how many are
    // valid.
    void reserve(std::size_t rows) {
        const std::size_t cap = frame.count + rows;
        for_each_frame_column(frame, 3 * static_cast<std::size_t>(per_dst),
                              [cap](auto& v, std::size_t k) {
                                  if (v.size() < cap * k) v.resize(cap * k);
                              });
    }

    // The gaussians pick[0..n) of the block, each inside its window (mu, sigma: their mu_t and
    // sigma_t, in pick order): the visible ones' rows written from slot o. Returns how many
    // rows it kept (pick is overwritten).
    std::size_t run(std::uint32_t* pick, std::size_t n, const float* mu, const float* sigma,
                    std::size_t o) {
        std::uint32_t reaches[kRun], state[kRun];
        float alpha[kRun], opacity[kRun];
        double arg[kRun];
        for (std::size_t k = 0; k < n; ++k) alpha[k] = block.color[std::size_t{pick[k]} * 4 + 3];
        exponents(mu, sigma, n, t, limit, arg, reaches);
        settle(arg, alpha, n, above, below, opacity, state);
        std::size_t v = 0;  // visible
        for (std::size_t k = 0; k < n; ++k) {
            std::uint32_t visible = state[k];
            float op = opacity[k];
            if (visible == 2 && reaches[k]) [[unlikely]] {  // §3 as written
                const double marginal = arg[k] == 0 ? 1.0 : std::exp(arg[k]);
                op = static_cast<float>(alpha[k] * marginal);
                visible = marginal >= cutoff;
            }
            visible &= reaches[k];
            pick[v] = pick[k];
            opacity[v] = op;
            v += visible;
        }
        write_columns(block, t, pick, opacity, v, o, per_dst, frame);
        const std::size_t kept = keep_finite_rows(frame, o, v, per_dst, poses);
        frame.unrepresentable += v - kept;
        return kept;
    }

    // Object tracks after the base state (§3) for rows [o_first, o): R * base_center + T,
    // R ⊗ rotation. The Frame's rotation is still the gaussian's own here. A base center past
    // f32's range is taken again in f64 (visible_state()'s order); a row the pose leaves
    // non-finite is dropped after all. Sets the frame's count and time.
    void finish(std::size_t o_first, std::size_t o) {
        if (!poses.empty()) {
            bool overflow = false;
            for (std::size_t k = o_first; k < o; ++k) {
                const Pose* p = poses.find(frame.object_id[k]);
                if (!p) continue;
                float* c = &frame.center[k * 3];
                float* q = &frame.rotation[k * 4];
                const Vec3 base = any_non_finite(c, 3) ? base_center(block, frame.source[k], t)
                                                       : Vec3{c[0], c[1], c[2]};
                const Vec3 moved = fourdgs::apply(*p, base);
                const Quat turned = multiply(p->rotation, {q[0], q[1], q[2], q[3]});
                for (std::size_t j = 0; j < 3; ++j) c[j] = static_cast<float>(moved[j]);
                for (std::size_t j = 0; j < 4; ++j) q[j] = static_cast<float>(turned[j]);
                overflow |= !row_finite(frame, k);
            }
            if (overflow) {
                const std::size_t kept = drop_non_finite(frame, o_first, o - o_first, per_dst,
                                                         [](std::size_t) { return false; });
                frame.unrepresentable += o - o_first - kept;
                o = o_first + kept;
            }
        }
        frame.count = o;
        frame.time = t;
    }
};

}  // namespace

void evaluate(const GaussianBlock& block, double t, double cutoff, Frame& frame,
              const EvaluateOptions& options) {
    Evaluation e(block, t, cutoff, frame, options);
    e.reserve(block.count);
    const std::size_t o_first = frame.count;
    std::size_t o = o_first;
    std::uint32_t in[kRun], pick[kRun];
    float mu_in[kRun], sigma_in[kRun];
    for (std::size_t first = 0; first < block.count; first += kRun) {
        const std::size_t run = std::min(kRun, block.count - first);
        const std::size_t n =
            window_run(block.win_lo.data() + first, block.win_hi.data() + first, run, e.tf, in);
        if (n == 0) continue;
        // The next run's rows, while this one is worked on: where one run has gaussians inside
        // their window the next usually has too (a writer groups gaussians by window).
        if (first + 2 * kRun <= block.count) {
            prefetch_rows(block.mu_t, 1, first + kRun);
            prefetch_rows(block.sigma_t, 1, first + kRun);
            prefetch_rows(block.color, 4, first + kRun);
            prefetch_rows(block.position, 3, first + kRun);
            prefetch_rows(block.motion, 3, first + kRun);
            prefetch_rows(block.scale, 3, first + kRun);
            prefetch_rows(block.rotation, 4, first + kRun);
            if (!block.object_id.empty()) prefetch_rows(block.object_id, 1, first + kRun);
        }
        const float* mu = block.mu_t.data() + first;
        const float* sigma = block.sigma_t.data() + first;
        if (n == run) {  // all inside
            for (std::size_t k = 0; k < n; ++k) pick[k] = static_cast<std::uint32_t>(first + k);
        } else {
            std::size_t m = 0;
            for (std::size_t j = 0; j < run; ++j) {
                pick[m] = static_cast<std::uint32_t>(first + j);
                m += in[j];
            }
            for (std::size_t k = 0; k < n; ++k) {
                mu_in[k] = block.mu_t[pick[k]];
                sigma_in[k] = block.sigma_t[pick[k]];
            }
            mu = mu_in;
            sigma = sigma_in;
        }
        o += e.run(pick, n, mu, sigma, o);
    }
    e.finish(o_first, o);
}

void evaluate_rows(const GaussianBlock& block, std::span<const std::uint32_t> rows, double t,
                   double cutoff, Frame& frame, const EvaluateOptions& options) {
    Evaluation e(block, t, cutoff, frame, options);
    e.reserve(rows.size());
    const std::size_t o_first = frame.count;
    std::size_t o = o_first;
    std::uint32_t pick[kRun];
    float mu_in[kRun], sigma_in[kRun];
    for (std::size_t first = 0; first < rows.size(); first += kRun) {
        const std::size_t run = std::min(kRun, rows.size() - first);
        std::size_t n = 0;
        for (std::size_t j = 0; j < run; ++j) {
            const std::uint32_t i = rows[first + j];
            pick[n] = i;
            n += (block.win_lo[i] <= e.tf) & (e.tf < block.win_hi[i]);  // in_window()'s test
        }
        for (std::size_t k = 0; k < n; ++k) {
            mu_in[k] = block.mu_t[pick[k]];
            sigma_in[k] = block.sigma_t[pick[k]];
        }
        o += e.run(pick, n, mu_in, sigma_in, o);
    }
    e.finish(o_first, o);
}

}  // namespace fourdgs
