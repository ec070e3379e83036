// The keyframe-delta writer (fourdgs/keyframe_writer.hpp): steps → one file-wide grid → per-step
// quantized states (bins keyed by gaussian_id) → keyframes and bin-difference deltas → verified
// by composing with ComposedPopulation → records → summary with the appended index fields.
#include "fourdgs/keyframe_writer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "fourdgs/decode.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/quantize.hpp"
#include "fourdgs/version.hpp"
#include "content_records.hpp"

namespace fourdgs {
namespace {

constexpr double kF32 = 0x1p-23;

std::string num(double v) { return detail::fmt(v); }

Error bad_option(std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal::kInvalidOption, std::move(message));
}

Error bad_input(std::string_view refusal, std::size_t step, std::size_t gaussian,
                std::string_view field, std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal,
                      "step " + std::to_string(step) + " gaussian " + std::to_string(gaussian) +
                          ": " + std::string(field) + " " + message);
}

bool bin_of(double value, double step, std::int32_t& out) {
    const double b = std::nearbyint(value / step);
    if (!(std::fabs(b) <= 2147483647.0)) return false;
    out = static_cast<std::int32_t>(b);
    return true;
}

std::uint32_t uid(std::int32_t v) { return static_cast<std::uint32_t>(v); }

// The attribute columns of a ChunkBins with their widths (SH separately).
template <class Bins, class F>
void for_each_column(Bins& b, F&& f) {
    f(attr::position, b.position, 3);
    f(attr::scale, b.scale, 3);
    f(attr::rotation_index, b.rotation_index, 1);
    f(attr::rotation, b.rotation, 3);
    f(attr::color, b.color, 3);
    f(attr::opacity, b.opacity, 1);
    f(attr::motion, b.motion, 3);
    f(attr::mu_t, b.mu_t, 1);
    f(attr::sigma_t, b.sigma_t, 1);
    f(attr::flags, b.flags, 1);
    f(attr::window_index, b.window_index, 1);
    f(attr::source_group, b.source_group, 1);
    f(attr::source_index, b.source_index, 1);
    f(attr::gaussian_id, b.gaussian_id, 1);
    f(attr::object_id, b.object_id, 1);
}

bool optional_column(std::uint8_t id) {
    return id == attr::source_group || id == attr::source_index || id == attr::object_id;
}

struct Ctx {
    SceneInfo scene;
    const KeyframeWriterOptions* opt = nullptr;
    int sh_degree = 0;
    bool declare_depths = false;
    std::array<std::uint8_t, 3> depths{8, 8, 8};
    bool has_group = false, has_index = false, has_object = false;
    std::uint8_t chunk_codec = 0;
    bool chunk_compressed = false;
    std::uint32_t window_full = 0;  // the [0, duration) window's index, when used
};

// ---- validation -----------------------------------------------------------------------------

Status check_span(std::size_t step, std::string_view field, std::size_t got, std::size_t want,
                  bool optional) {
    if (got == want || (optional && got == 0)) return ok_status();
    return make_error(ErrorKind::invalid_argument, refusal::kInputSizeMismatch,
                      "step " + std::to_string(step) + ": " + std::string(field) + " holds " +
                          std::to_string(got) + " values; " + std::to_string(want) +
                          (optional ? " (or none)" : "") + " expected");
}

Status validate_step(const KeyframeStep& st, std::size_t s, double t1, int sh_degree,
                     double duration) {
    const GaussianBatch& b = st.gaussians;
    const std::size_t n = b.count;
    if (n > (std::size_t{1} << 26))
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          "step " + std::to_string(s) + " holds " + std::to_string(n) +
                              " gaussians; one state chunk holds at most 2^26");
    if (b.sh_degree != sh_degree)
        return make_error(ErrorKind::invalid_argument, refusal::kShDegreeMismatch,
                          "step " + std::to_string(s) + " carries SH degree " +
                              std::to_string(b.sh_degree) + " but the scene declares " +
                              std::to_string(sh_degree));
    FOURDGS_TRY(check_span(s, "ids", st.ids.size(), n, false));
    FOURDGS_TRY(check_span(s, "position", b.position.size(), n * 3, false));
    FOURDGS_TRY(check_span(s, "scale", b.scale.size(), n * 3, false));
    FOURDGS_TRY(check_span(s, "rotation", b.rotation.size(), n * 4, false));
    FOURDGS_TRY(check_span(s, "color", b.color.size(), n * 4, false));
    FOURDGS_TRY(check_span(s, "motion", b.motion.size(), n * 3, true));
    FOURDGS_TRY(check_span(s, "mu_t", b.mu_t.size(), n, true));
    FOURDGS_TRY(check_span(s, "sigma_t", b.sigma_t.size(), n, false));
    FOURDGS_TRY(check_span(s, "win_lo", b.win_lo.size(), n, true));
    FOURDGS_TRY(check_span(s, "win_hi", b.win_hi.size(), b.win_lo.size(), false));
    const std::size_t per = static_cast<std::size_t>(sh_coeffs_per_component(sh_degree)) * 3;
    FOURDGS_TRY(check_span(s, "sh", b.sh.size(), n * per, false));
    FOURDGS_TRY(check_span(s, "object_id", b.object_id.size(), n, true));
    FOURDGS_TRY(check_span(s, "source_group", b.source_group.size(), n, true));
    FOURDGS_TRY(check_span(s, "source_index", b.source_index.size(), n, true));
    std::unordered_set<std::uint32_t> seen;
    seen.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        if (!seen.insert(st.ids[i]).second)
            return bad_input(refusal::kDuplicateGaussianId, s, i, "id",
                             std::to_string(st.ids[i]) + " appears twice in the step");
        for (int c = 0; c < 3; ++c) {
            if (!std::isfinite(b.position[i * 3 + c]))
                return bad_input(refusal::kNonFiniteInput, s, i, "position", "is not finite");
            const float sc = b.scale[i * 3 + c];
            if (!std::isfinite(sc))
                return bad_input(refusal::kNonFiniteInput, s, i, "scale", "is not finite");
            if (!(sc > 0))
                return bad_input(refusal::kValueOutOfRange, s, i, "scale",
                                 "is " + num(sc) + ", must be > 0");
            if (!b.motion.empty() && !std::isfinite(b.motion[i * 3 + c]))
                return bad_input(refusal::kNonFiniteInput, s, i, "motion", "is not finite");
        }
        double norm = 0;
        for (int c = 0; c < 4; ++c) {
            const float q = b.rotation[i * 4 + c];
            if (!std::isfinite(q))
                return bad_input(refusal::kNonFiniteInput, s, i, "rotation", "is not finite");
            norm += static_cast<double>(q) * q;
            const float v = b.color[i * 4 + c];
            if (!(v >= 0 && v <= 1))
                return bad_input(std::isnan(v) ? refusal::kNonFiniteInput : refusal::kValueOutOfRange, s, i,
                                 c == 3 ? "opacity (color[3])" : "color",
                                 "is " + num(v) + ", outside [0, 1]");
        }
        if (!(norm > 0))
            return bad_input(refusal::kZeroQuaternion, s, i, "rotation", "is the zero quaternion");
        if (!b.mu_t.empty() && !std::isfinite(b.mu_t[i]))
            return bad_input(refusal::kNonFiniteInput, s, i, "mu_t", "is not finite");
        const float sg = b.sigma_t[i];
        if (std::isnan(sg) || sg == -std::numeric_limits<float>::infinity())
            return bad_input(refusal::kNonFiniteInput, s, i, "sigma_t",
                             "is " + num(sg) + "; must be finite and > 0, or +inf");
        if (!(sg > 0))
            return bad_input(refusal::kValueOutOfRange, s, i, "sigma_t",
                             "is " + num(sg) + ", must be > 0");
        if (!b.win_lo.empty()) {
            const double lo = b.win_lo[i], hi = b.win_hi[i];
            if (!std::isfinite(lo) || !std::isfinite(hi))
                return bad_input(refusal::kNonFiniteInput, s, i, "window", "is not finite");
            if (!(lo < hi))
                return bad_input(refusal::kEmptyWindow, s, i, "window",
                                 "[" + num(lo) + ", " + num(hi) + ") is empty");
            if (lo < 0 || hi > duration)
                return bad_input(refusal::kWindowOutsideDuration, s, i, "window",
                                 "[" + num(lo) + ", " + num(hi) + ") lies outside [0, " +
                                     num(duration) + ")");
            if (lo > st.t0 || hi < t1)
                return bad_input(refusal::kWindowDoesNotCoverState, s, i, "window",
                                 "[" + num(lo) + ", " + num(hi) + ") does not cover the state's "
                                 "interval [" + num(st.t0) + ", " + num(t1) + ")");
        }
        for (std::size_t t = 0; t < per; ++t)
            if (!std::isfinite(b.sh[i * per + t]))
                return bad_input(refusal::kNonFiniteInput, s, i, "sh", "is not finite");
    }
    return ok_status();
}

// ---- quantization of one step ---------------------------------------------------------------

void resize_bins(ChunkBins& b, std::size_t n, int sh_degree) {
    b.count = static_cast<std::uint32_t>(n);
    for_each_column(b, [&](std::uint8_t id, std::vector<std::int32_t>& col, int w) {
        (void)id;
        col.resize(n * w);
    });
    b.sh_bands = sh_degree;
    for (int band = 1; band <= 3; ++band)
        b.sh[band - 1].resize(band <= sh_degree ? n * 3 * sh_band_width(band) : 0);
}

// Quantizes row i of `st` into row i of `out` (mu_t left for the caller when derived).
Status quantize_row(const Ctx& ctx, const KeyframeStep& st, std::size_t s, std::size_t i,
                    const std::vector<WindowTable::Window>& windows,
                    const std::vector<std::uint32_t>& window_of, ChunkBins& out) {
    const GaussianBatch& b = st.gaussians;
    const Grid& g = ctx.scene.grid;
    auto bad = [&](const char* field) {
        return bad_input(refusal::kBinOutOfRange, s, i, field, "does not fit an i32 bin");
    };
    for (int c = 0; c < 3; ++c)
        if (!bin_of(static_cast<double>(b.position[i * 3 + c]) - g.pos_origin[c], g.step_pos,
                    out.position[i * 3 + c]))
            return bad("position");
    for (int c = 0; c < 3; ++c)
        if (!bin_of(std::log(static_cast<double>(b.scale[i * 3 + c])), g.step_scale_log,
                    out.scale[i * 3 + c]))
            return bad("scale");
    double q[4], norm = 0;
    for (int c = 0; c < 4; ++c) {
        q[c] = b.rotation[i * 4 + c];
        norm += q[c] * q[c];
    }
    norm = std::sqrt(norm);
    int m = 0;
    for (int c = 1; c < 4; ++c)
        if (std::fabs(q[c]) > std::fabs(q[m])) m = c;
    const double sign = q[m] < 0 ? -1.0 : 1.0;
    out.rotation_index[i] = m;
    for (int c = 0, kept = 0; c < 4; ++c) {
        if (c == m) continue;
        if (!bin_of(sign * q[c] / norm, g.step_rot, out.rotation[i * 3 + kept++]))
            return bad("rotation");
    }
    std::int32_t rgb[3];
    for (int c = 0; c < 3; ++c)
        if (!bin_of(b.color[i * 4 + c], g.step_rgb, rgb[c])) return bad("color");
    out.color[i * 3 + 0] = rgb[1];
    out.color[i * 3 + 1] = rgb[0] - rgb[1];
    out.color[i * 3 + 2] = rgb[2] - rgb[1];
    if (!bin_of(b.color[i * 4 + 3], g.step_alpha, out.opacity[i])) return bad("opacity");
    const double sigma = b.sigma_t[i];
    const bool never = std::isinf(sigma);
    out.flags[i] = never ? kFlagNeverFades : 0;
    if (never) {
        out.sigma_t[i] = 0;
    } else if (!bin_of(std::log(sigma), g.step_sigma_log, out.sigma_t[i])) {
        return bad("sigma_t");
    }
    const std::uint32_t wi = b.win_lo.empty() ? ctx.window_full : window_of[i];
    out.window_index[i] = static_cast<std::int32_t>(wi);
    const double vstep = velocity_step(g, out.sigma_t[i], never, windows[wi].lo, windows[wi].hi);
    for (int c = 0; c < 3; ++c) {
        const double v = b.motion.empty() ? 0.0 : b.motion[i * 3 + c];
        if (!bin_of(v, vstep, out.motion[i * 3 + c])) return bad("motion");
    }
    if (!b.mu_t.empty() &&
        !bin_of(b.mu_t[i], birth_step(g, out.sigma_t[i], never), out.mu_t[i]))
        return bad("mu_t");
    out.source_group[i] = b.source_group.empty() ? 0 : b.source_group[i];
    out.source_index[i] = b.source_index.empty() ? 0 : b.source_index[i];
    out.object_id[i] = b.object_id.empty() ? 0 : static_cast<std::int32_t>(b.object_id[i]);
    const int per = sh_coeffs_per_component(ctx.sh_degree);
    for (int band = 1; band <= ctx.sh_degree; ++band) {
        const int wd = sh_band_width(band), first = sh_band_first(band);
        const int depth = ctx.depths[band - 1];
        for (int c = 0; c < 3; ++c)
            for (int t = 0; t < wd; ++t) {
                const std::uint8_t b8 =
                    sh_byte(b.sh[i * 3 * per + static_cast<std::size_t>(c) * per + first + t]);
                out.sh[band - 1][(i * 3 + c) * wd + t] = depth < 8 ? sh_requantize(b8, depth) : b8;
            }
    }
    return ok_status();
}

// Row lookup in a state sorted by gaussian_id.
std::optional<std::uint32_t> find_row(const ChunkBins& state, std::uint32_t id) {
    auto it = std::lower_bound(state.gaussian_id.begin(), state.gaussian_id.end(), id,
                               [](std::int32_t a, std::uint32_t v) { return uid(a) < v; });
    if (it == state.gaussian_id.end() || uid(*it) != id) return std::nullopt;
    return static_cast<std::uint32_t>(it - state.gaussian_id.begin());
}

bool same_invariants(const ChunkBins& a, std::size_t i, const ChunkBins& b, std::size_t j) {
    if (a.sigma_t[i] != b.sigma_t[j] || a.flags[i] != b.flags[j] ||
        a.window_index[i] != b.window_index[j])
        return false;
    for (int band = 1; band <= a.sh_bands; ++band) {
        const std::size_t w = 3 * static_cast<std::size_t>(sh_band_width(band));
        if (!std::equal(&a.sh[band - 1][i * w], &a.sh[band - 1][i * w] + w, &b.sh[band - 1][j * w]))
            return false;
    }
    return true;
}

// Equal on every column that may change inside a GOP, mu_t excluded.
bool same_variable(const ChunkBins& a, std::size_t i, const ChunkBins& b, std::size_t j) {
    bool same = true;
    for_each_column(a, [&](std::uint8_t id, const std::vector<std::int32_t>& col, int w) {
        if (id == attr::mu_t || id == attr::gaussian_id || id == attr::sigma_t ||
            id == attr::flags || id == attr::window_index)
            return;
        const std::vector<std::int32_t>& other = *const_cast<ChunkBins&>(b).column(id);
        for (int c = 0; c < w; ++c) same &= col[i * w + c] == other[j * w + c];
    });
    return same;
}

void gather_rows(const ChunkBins& src, std::span<const std::uint32_t> order, ChunkBins& dst) {
    resize_bins(dst, order.size(), src.sh_bands);
    for_each_column(src, [&](std::uint8_t id, const std::vector<std::int32_t>& col, int w) {
        std::vector<std::int32_t>& out = *dst.column(id);
        for (std::size_t k = 0; k < order.size(); ++k)
            std::copy_n(&col[std::size_t{order[k]} * w], w, &out[k * w]);
    });
    for (int band = 1; band <= src.sh_bands; ++band) {
        const std::size_t w = 3 * static_cast<std::size_t>(sh_band_width(band));
        for (std::size_t k = 0; k < order.size(); ++k)
            std::copy_n(&src.sh[band - 1][order[k] * w], w, &dst.sh[band - 1][k * w]);
    }
    dst.has_gaussian_id = true;
    dst.has_source_group = src.has_source_group;
    dst.has_source_index = src.has_source_index;
    dst.has_object_id = src.has_object_id;
}

// Builds step s's quantized state (sorted by file id) from the previous one.
struct Identity {
    std::unordered_map<std::uint32_t, std::uint32_t> live;  // caller id → file id
    std::unordered_set<std::uint32_t> used;                 // caller ids that had an incarnation
    std::uint64_t next_fresh = 0;
    std::uint64_t distinct = 0;
};

Status build_state(const Ctx& ctx, std::span<const KeyframeStep> steps, std::size_t s,
                   bool keyframe, const std::vector<WindowTable::Window>& windows,
                   const std::vector<std::vector<std::uint32_t>>& window_of,
                   const ChunkBins& prev, Identity& ident, ChunkBins& raw, ChunkBins& out) {
    const KeyframeStep& st = steps[s];
    const std::size_t n = st.gaussians.count;
    resize_bins(raw, n, ctx.sh_degree);
    raw.has_source_group = ctx.has_group;
    raw.has_source_index = ctx.has_index;
    raw.has_object_id = ctx.has_object;
    const bool derive_mu = st.gaussians.mu_t.empty();
    const Grid& g = ctx.scene.grid;
    std::unordered_map<std::uint32_t, std::uint32_t> live;
    live.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        FOURDGS_TRY(quantize_row(ctx, st, s, i, windows, window_of[s], raw));
        const std::uint32_t caller = st.ids[i];
        std::optional<std::uint32_t> file;
        std::optional<std::uint32_t> prow;
        if (auto it = ident.live.find(caller); it != ident.live.end()) {
            prow = find_row(prev, it->second);
            if (prow && same_invariants(raw, i, prev, *prow)) file = it->second;
            else prow.reset();
        }
        if (!file) {
            if (!ident.used.count(caller)) {
                file = caller;
                ident.used.insert(caller);
            } else {
                if (ident.next_fresh > 0xFFFFFFFFull)
                    return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                                      "step " + std::to_string(s) + " gaussian " +
                                          std::to_string(i) +
                                          ": no gaussian_id is left for a new incarnation");
                file = static_cast<std::uint32_t>(ident.next_fresh++);
            }
            ++ident.distinct;
        }
        raw.gaussian_id[i] = static_cast<std::int32_t>(*file);
        live.emplace(caller, *file);
        if (derive_mu) {
            const bool never = raw.flags[i] != 0;
            if (!keyframe && prow && same_variable(raw, i, prev, *prow)) {
                raw.mu_t[i] = prev.mu_t[*prow];
            } else if (!bin_of(st.t0, birth_step(g, raw.sigma_t[i], never), raw.mu_t[i])) {
                return bad_input(refusal::kBinOutOfRange, s, i, "mu_t", "does not fit an i32 bin");
            }
        }
    }
    ident.live = std::move(live);
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return uid(raw.gaussian_id[a]) < uid(raw.gaussian_id[b]);
    });
    gather_rows(raw, order, out);
    return ok_status();
}

// ---- encoding -------------------------------------------------------------------------------

struct Encoded {
    std::vector<std::uint8_t> bytes;  // the chunk record, then its band records
    std::uint64_t chunk_length = 0;
    std::array<std::uint64_t, 3> band_length{};
    int bands = 0;
    std::uint32_t count = 0;  // the index's gaussian_count
};

StreamEncodeOptions stream_options(const Ctx& ctx) {
    StreamEncodeOptions so;
    so.codec = ctx.opt->base.codec;
    so.level = ctx.opt->base.level;
    return so;
}

// The full attribute set of `b` (a keyframe or a birth group): required ids, gaussian_id, and the
// optional columns the file carries.
Status encode_full(const Ctx& ctx, const ChunkBins& b, ByteWriter& out) {
    const StreamEncodeOptions so = stream_options(ctx);
    const std::size_t n = b.count;
    for (std::uint8_t id = 0; id < attr::kRequiredCount; ++id) {
        const auto& col = *const_cast<ChunkBins&>(b).column(id);
        const std::size_t len = n * attr::kChannels[id];
        FOURDGS_TRY(encode_stream(out, id, attr::kChannels[id],
                                  std::span<const std::int32_t>(col.data(), len), so));
    }
    FOURDGS_TRY(encode_stream(out, attr::gaussian_id, 1,
                              std::span<const std::int32_t>(b.gaussian_id.data(), n), so));
    if (ctx.has_group)
        FOURDGS_TRY(encode_stream(out, attr::source_group, 1,
                                  std::span<const std::int32_t>(b.source_group.data(), n), so));
    if (ctx.has_index)
        FOURDGS_TRY(encode_stream(out, attr::source_index, 1,
                                  std::span<const std::int32_t>(b.source_index.data(), n), so));
    if (ctx.has_object)
        FOURDGS_TRY(encode_stream(out, attr::object_id, 1,
                                  std::span<const std::int32_t>(b.object_id.data(), n), so));
    return ok_status();
}

Status append_bands(const Ctx& ctx, const ChunkBins& b, bool always, ByteWriter& file,
                    Encoded& e) {
    e.bands = 0;
    if (b.count == 0 && !always) return ok_status();
    const StreamEncodeOptions so = stream_options(ctx);
    ByteWriter band;
    std::vector<std::int32_t> values;
    for (int k = 1; k <= ctx.sh_degree; ++k) {
        band.buffer().clear();
        const int ch = 3 * sh_band_width(k);
        values.assign(b.sh[k - 1].begin(), b.sh[k - 1].end());
        FOURDGS_TRY(encode_stream(band, op::sh_band, static_cast<std::uint8_t>(ch), values, so));
        const std::size_t before = file.size();
        write(file, ShBandRecord{static_cast<std::uint8_t>(k), band.buffer(), 0});
        e.band_length[k - 1] = file.size() - before;
        e.bands = k;
    }
    return ok_status();
}

Status seal_block(const Ctx& ctx, ByteWriter& block, std::vector<std::uint8_t>& compressed,
                  std::string& compression, Bytes& records) {
    if (ctx.chunk_compressed) {
        FOURDGS_TRY(compress(ctx.chunk_codec, ctx.opt->base.chunk_compression_level,
                             block.buffer(), compressed));
        compression = ctx.opt->base.chunk_compression;
        records = compressed;
    } else {
        compression.clear();
        records = block.buffer();
    }
    return ok_status();
}

Status encode_keyframe(const Ctx& ctx, const ChunkBins& state, double t0, double t1, Encoded& e) {
    ByteWriter block;
    FOURDGS_TRY(encode_full(ctx, state, block));
    std::vector<std::uint8_t> compressed;
    ChunkRecord rec;
    rec.t0 = t0;
    rec.t1 = t1;
    rec.count = state.count;
    rec.uncompressed_size = block.size();
    FOURDGS_TRY(seal_block(ctx, block, compressed, rec.compression, rec.records));
    ByteWriter file;
    write(file, rec);
    e.chunk_length = file.size();
    FOURDGS_TRY(append_bands(ctx, state, true, file, e));
    e.count = state.count;
    e.bytes = std::move(file.buffer());
    return ok_status();
}

struct DeltaHead {
    double t0 = 0, t1 = 0;
    std::uint8_t mode = 0;
    std::uint64_t reference = 0, keyframe = 0;
    std::uint16_t depth = 0;
};

// The delta between `ref` and `cur` (both sorted by gaussian_id).
Status encode_delta(const Ctx& ctx, const ChunkBins& ref, const ChunkBins& cur,
                    const DeltaHead& head, std::size_t step, Encoded& e) {
    std::vector<std::uint32_t> upd_ref, upd_cur, born, died;
    std::size_t i = 0, j = 0;
    while (i < ref.count || j < cur.count) {
        const bool has_r = i < ref.count, has_c = j < cur.count;
        const std::uint32_t ri = has_r ? uid(ref.gaussian_id[i]) : 0;
        const std::uint32_t ci = has_c ? uid(cur.gaussian_id[j]) : 0;
        if (has_r && (!has_c || ri < ci)) {
            died.push_back(static_cast<std::uint32_t>(i++));
        } else if (has_c && (!has_r || ci < ri)) {
            born.push_back(static_cast<std::uint32_t>(j++));
        } else {
            if (!same_variable(ref, i, cur, j) || ref.mu_t[i] != cur.mu_t[j]) {
                upd_ref.push_back(static_cast<std::uint32_t>(i));
                upd_cur.push_back(static_cast<std::uint32_t>(j));
            }
            ++i;
            ++j;
        }
    }
    const StreamEncodeOptions so = stream_options(ctx);
    const std::size_t nu = upd_cur.size();

    // Updates: gaussian_id, then each changed column as differences; rotation absolute.
    ByteWriter updates;
    std::vector<std::int32_t> values;
    values.resize(nu);
    for (std::size_t k = 0; k < nu; ++k) values[k] = cur.gaussian_id[upd_cur[k]];
    if (nu > 0) FOURDGS_TRY(encode_stream(updates, attr::gaussian_id, 1, values, so));
    bool rotation_changed = false;
    for (std::size_t k = 0; k < nu && !rotation_changed; ++k) {
        const std::size_t a = upd_ref[k], b = upd_cur[k];
        rotation_changed = ref.rotation_index[a] != cur.rotation_index[b] ||
                           !std::equal(&ref.rotation[a * 3], &ref.rotation[a * 3] + 3,
                                       &cur.rotation[b * 3]);
    }
    Status failed = ok_status();
    for_each_column(cur, [&](std::uint8_t id, const std::vector<std::int32_t>& col, int w) {
        if (!failed.ok() || nu == 0 || id == attr::gaussian_id || id == attr::sigma_t ||
            id == attr::flags || id == attr::window_index)
            return;
        if (optional_column(id) && !(id == attr::source_group   ? ctx.has_group
                                     : id == attr::source_index ? ctx.has_index
                                                                : ctx.has_object))
            return;
        const std::vector<std::int32_t>& rcol = *const_cast<ChunkBins&>(ref).column(id);
        values.resize(nu * w);
        if (id == attr::rotation_index || id == attr::rotation) {
            if (!rotation_changed) return;
            for (std::size_t k = 0; k < nu; ++k)
                std::copy_n(&col[std::size_t{upd_cur[k]} * w], w, &values[k * w]);
        } else {
            bool any = false;
            for (std::size_t k = 0; k < nu; ++k)
                for (int c = 0; c < w; ++c) {
                    const std::int64_t d = std::int64_t{col[std::size_t{upd_cur[k]} * w + c]} -
                                           std::int64_t{rcol[std::size_t{upd_ref[k]} * w + c]};
                    if (d < std::numeric_limits<std::int32_t>::min() ||
                        d > std::numeric_limits<std::int32_t>::max()) {
                        failed = make_error(
                            ErrorKind::invalid_argument, refusal::kBinOutOfRange,
                            "step " + std::to_string(step) + ": the bin difference of '" +
                                attr::kNames[id] + "' for gaussian_id " +
                                std::to_string(uid(cur.gaussian_id[upd_cur[k]])) +
                                " does not fit i32");
                        return;
                    }
                    values[k * w + c] = static_cast<std::int32_t>(d);
                    any |= d != 0;
                }
            if (!any) return;
        }
        failed = encode_stream(updates, id, static_cast<std::uint8_t>(w), values, so);
    });
    FOURDGS_TRY(std::move(failed));

    // Births: the full attribute set.
    ChunkBins births;
    gather_rows(cur, born, births);
    ByteWriter birth_block;
    if (!born.empty()) FOURDGS_TRY(encode_full(ctx, births, birth_block));
    // Deaths: gaussian_id only.
    ByteWriter deaths;
    values.resize(died.size());
    for (std::size_t k = 0; k < died.size(); ++k) values[k] = ref.gaussian_id[died[k]];
    if (!died.empty()) FOURDGS_TRY(encode_stream(deaths, attr::gaussian_id, 1, values, so));

    ByteWriter block;
    write_delta_groups(block, updates.buffer(), birth_block.buffer(), deaths.buffer());
    std::vector<std::uint8_t> compressed;
    DeltaChunk d;
    d.t0 = head.t0;
    d.t1 = head.t1;
    d.delta_mode = head.mode;
    d.reference_offset = head.reference;
    d.keyframe_offset = head.keyframe;
    d.depth = head.depth;
    d.update_count = static_cast<std::uint32_t>(nu);
    d.birth_count = static_cast<std::uint32_t>(born.size());
    d.death_count = static_cast<std::uint32_t>(died.size());
    d.uncompressed_size = block.size();
    FOURDGS_TRY(seal_block(ctx, block, compressed, d.compression, d.records));
    ByteWriter file;
    write(file, d);
    e.chunk_length = file.size();
    FOURDGS_TRY(append_bands(ctx, births, false, file, e));
    e.count = d.update_count + d.birth_count + d.death_count;
    e.bytes = std::move(file.buffer());
    return ok_status();
}

bool same_bins(const ChunkBins& a, const ChunkBins& b, std::string& what) {
    if (a.count != b.count) {
        what = "count " + std::to_string(a.count) + " vs " + std::to_string(b.count);
        return false;
    }
    bool same = true;
    for_each_column(a, [&](std::uint8_t id, const std::vector<std::int32_t>& col, int) {
        if (!same) return;
        const bool present = !optional_column(id) ||
                             (id == attr::source_group   ? a.has_source_group
                              : id == attr::source_index ? a.has_source_index
                                                         : a.has_object_id);
        if (present && col != *const_cast<ChunkBins&>(b).column(id)) {
            same = false;
            what = attr::kNames[id];
        }
    });
    if (!same) return false;
    for (int band = 1; band <= a.sh_bands; ++band)
        if (a.sh[band - 1] != b.sh[band - 1]) {
            what = "sh band " + std::to_string(band);
            return false;
        }
    return true;
}

// ---- the file around the chunks -------------------------------------------------------------

class Assembler {
public:
    explicit Assembler(ByteSink& sink) : sink_(&sink) {}
    Status put(ByteWriter& w) {
        FOURDGS_TRY(sink_->write(w.buffer()));
        if (in_summary_) crc_ = crc32(w.buffer(), crc_);
        pos_ += w.size();
        w.buffer().clear();
        return ok_status();
    }
    Status chunk(const Encoded& c, double t0, double t1, KeyframeIndexFields k) {
        ChunkIndex e;
        e.t0 = t0;
        e.t1 = t1;
        e.chunk_offset = pos_;
        e.chunk_length = c.chunk_length;
        e.gaussian_count = c.count;
        std::uint64_t at = pos_ + c.chunk_length;
        for (int b = 1; b <= c.bands; ++b) {
            e.bands.push_back({static_cast<std::uint8_t>(b), at, c.band_length[b - 1]});
            at += c.band_length[b - 1];
        }
        if (k.chunk_kind == kChunkKindKeyframe) k.keyframe_offset = pos_;
        e.keyframe = k;
        FOURDGS_TRY(sink_->write(c.bytes));
        pos_ += c.bytes.size();
        index_.push_back(std::move(e));
        return ok_status();
    }
    Status finish(const WriterOptions& opt, const Statistics& stats) {
        ByteWriter w;
        const std::uint64_t start = pos_;
        in_summary_ = true;
        crc_ = 0;
        std::uint64_t group_length = 0;
        if (opt.write_index) {
            for (const ChunkIndex& e : index_) write(w, e);
            group_length = w.size();
        }
        if (opt.write_statistics) write(w, stats);
        std::uint64_t offset_start = 0;
        if (opt.write_index && opt.write_summary_offset && !index_.empty()) {
            offset_start = start + w.size();
            write(w, SummaryOffset{op::chunk_index, start, group_length});
        }
        FOURDGS_TRY(put(w));
        in_summary_ = false;
        Footer f;
        f.summary_start = opt.write_index ? start : 0;
        f.summary_offset_start = offset_start;
        f.summary_crc = opt.write_index && opt.write_crc ? crc_ : 0;
        write(w, f);
        w.raw(Bytes(kMagic));
        FOURDGS_TRY(put(w));
        return sink_->flush();
    }
    std::uint64_t position() const { return pos_; }

private:
    ByteSink* sink_;
    std::uint64_t pos_ = 0;
    std::vector<ChunkIndex> index_;
    bool in_summary_ = false;
    std::uint32_t crc_ = 0;
};

Status resolve(const KeyframeWriterOptions& o, const SceneHeader& h, Ctx& ctx) {
    const WriterOptions& opt = o.base;
    ctx.opt = &o;
    ctx.sh_degree = h.sh_degree;
    if (!std::isfinite(h.duration_sec) || !(h.duration_sec > 0))
        return bad_option("duration_sec is " + num(h.duration_sec) + ", must be finite and > 0");
    if (!std::isfinite(h.cutoff) || !(h.cutoff > 0) || !(h.cutoff < 1))
        return bad_option("cutoff is " + num(h.cutoff) + ", must be finite and in (0, 1)");
    if (h.sh_degree < 0 || h.sh_degree > 3)
        return bad_option("sh_degree is " + std::to_string(h.sh_degree) + ", must be 0..3");
    for (const PrivateRecordInput& p : h.private_records)
        if (p.opcode < 0x80) return bad_option("a private record's opcode is below 0x80 (§4.3)");
    if (o.keyframe_every == 0) return bad_option("keyframe_every is 0; it must be >= 1");
    if (!codec_implemented(opt.codec))
        return make_error(ErrorKind::unsupported, refusal::kUnknownStreamCodec,
                          "stream codec byte " + std::to_string(opt.codec) + " (" +
                              codec_name(opt.codec) + ") is not implemented");
    std::vector<std::uint8_t> probe;
    FOURDGS_TRY(compress(opt.codec, opt.level, Bytes{}, probe));
    if (!opt.chunk_compression.empty()) {
        FOURDGS_ASSIGN(ctx.chunk_codec, chunk_compression_codec(opt.chunk_compression, kNoOffset));
        ctx.chunk_compressed = true;
        FOURDGS_TRY(compress(ctx.chunk_codec, opt.chunk_compression_level, Bytes{}, probe));
    }
    if (!opt.sh_depths.empty()) {
        if (static_cast<int>(opt.sh_depths.size()) != h.sh_degree)
            return bad_option("sh_depths needs one entry per band 1.." +
                              std::to_string(h.sh_degree));
        for (std::size_t b = 0; b < opt.sh_depths.size(); ++b) {
            if (opt.sh_depths[b] < 3 || opt.sh_depths[b] > 8)
                return bad_option("sh_depths band " + std::to_string(b + 1) +
                                  " is outside 3..8 (§6.5)");
            ctx.depths[b] = opt.sh_depths[b];
        }
        ctx.declare_depths = h.sh_degree > 0;
    } else if (opt.sh_ladder != ShLadder::none) {
        ctx.depths = ladder_depths(opt.sh_ladder);
        ctx.declare_depths = h.sh_degree > 0;
    }
    for (int b = h.sh_degree; b < 3; ++b) ctx.depths[b] = 8;
    return ok_status();
}

// The grid and the declared (analytic worst-case) bounds, as StreamingWriter declares them.
Status make_grid(Ctx& ctx, const std::array<double, 6>& aabb, double duration, Quantization& q) {
    double extent = 0, reach = 0;
    for (int c = 0; c < 3; ++c) {
        extent = std::max(extent, aabb[3 + c] - aabb[c]);
        reach = std::max({reach, std::fabs(aabb[c]), std::fabs(aabb[3 + c])});
    }
    const WriterOptions& opt = ctx.opt->base;
    QuantBounds qb = opt.bounds ? *opt.bounds : preset_bounds(opt.preset, extent);
    if (qb.motion == 0) qb.motion = 2 * qb.pos;
    for (double v : {qb.pos, qb.scale_rel, qb.rot, qb.rgb, qb.alpha, qb.motion, qb.time,
                     qb.sigma_rel})
        if (!std::isfinite(v) || !(v > 0)) return bad_option("every bound must be finite and > 0");
    if (qb.rot > 0.05) return bad_option("bound 'rot' must be <= 0.05 (§6.4)");
    if (qb.rgb > 0.5 || qb.alpha > 0.5)
        return bad_option("bounds 'rgb' and 'alpha' must be <= 0.5");
    Grid& g = ctx.scene.grid;
    for (int c = 0; c < 3; ++c) g.pos_origin[c] = 0.5 * (aabb[c] + aabb[3 + c]);
    g.step_pos = 2 * qb.pos;
    g.step_scale_log = 2 * qb.scale_rel;
    g.step_rot = 2 * qb.rot;
    g.step_rgb = 2 * qb.rgb;
    g.step_alpha = 2 * qb.alpha;
    g.step_motion = 2 * qb.motion;
    g.step_time = 2 * qb.time;
    g.step_sigma_log = 2 * qb.sigma_rel;
    g.cutoff = ctx.scene.header.cutoff;
    g.k = Grid::k_for_cutoff(g.cutoff);

    const double near_one = 1 + 0x1p-20;
    const double e = qb.rot;
    const double s = std::sqrt(3.0) / 2 + std::sqrt(3.0) * e;
    const double qm_min = std::sqrt(std::max(0.0, 1 - s * s));
    const double rot_kept = e * near_one + 2 * kF32;
    q.scheme = std::string(kSchemeUniformV1);
    q.pos_origin = g.pos_origin;
    q.step_pos = g.step_pos;
    q.step_scale_log = g.step_scale_log;
    q.step_rot = g.step_rot;
    q.step_rgb = g.step_rgb;
    q.step_alpha = g.step_alpha;
    q.step_motion = g.step_motion;
    q.step_time = g.step_time;
    q.step_sigma_log = g.step_sigma_log;
    int coarsest = 8;
    if (ctx.declare_depths)
        for (int b = 0; b < ctx.sh_degree; ++b) coarsest = std::min<int>(coarsest, ctx.depths[b]);
    q.step_sh = static_cast<std::uint8_t>(1 << (8 - coarsest));
    q.sh_depths.clear();
    if (ctx.declare_depths)
        for (int b = 0; b < ctx.sh_degree; ++b) q.sh_depths.push_back(ctx.depths[b]);
    q.bounds = {
        {"pos", bound_string(qb.pos * near_one + kF32 * (reach + g.step_pos))},
        {"scale_rel", bound_string(qb.scale_rel * near_one + 2 * kF32)},
        {"rot", bound_string(std::max(rot_kept, (3 * e + 3 * e * e) / (0.5 + qm_min) * near_one +
                                                    2 * kF32))},
        {"rgb", bound_string(qb.rgb * near_one + kF32)},
        {"alpha", bound_string(qb.alpha * near_one + kF32)},
        {"motion", bound_string(std::ldexp(g.step_motion, -kVelocityClassMin) * 0.5 *
                                (1 + 0x1p-10))},
        {"time", bound_string(g.step_time * 0.5 * (1 + 0x1p-10) +
                              kF32 * 4 * std::max(duration, 1.0))},
        {"sigma_rel", bound_string(qb.sigma_rel * near_one + 2 * kF32)},
    };
    q.bounds.emplace_back("sh", std::to_string(sh_depth_bound(coarsest) * (coarsest < 8)));
    if (ctx.declare_depths)
        for (int b = 1; b <= ctx.sh_degree; ++b) {
            const int d = ctx.depths[b - 1];
            q.bounds.emplace_back("sh_band" + std::to_string(b),
                                  std::to_string(d < 8 ? sh_depth_bound(d) : 0));
        }
    return ok_status();
}

// Parses what was just encoded and composes it with the readers' own ComposedPopulation.
Status verify(const Ctx& ctx, const Encoded& e, bool keyframe, double t0, double t1,
              std::uint64_t offset, ComposedPopulation& target, const ChunkBins& expected,
              DecodeScratch& scratch, ChunkBins& bins, DeltaBins& delta, ChunkBins& composed) {
    const Bytes bytes = e.bytes;
    FOURDGS_ASSIGN(RecordView rv, parse_record(bytes, 0));
    ShBandRecord bands[3];
    std::size_t at = static_cast<std::size_t>(e.chunk_length);
    for (int b = 1; b <= e.bands; ++b) {
        FOURDGS_ASSIGN(RecordView bv, parse_record(bytes.subspan(at), at));
        FOURDGS_ASSIGN(bands[b - 1], parse_sh_band(bv));
        at += static_cast<std::size_t>(bv.total_length());
    }
    const std::span<const ShBandRecord> band_span(bands, static_cast<std::size_t>(e.bands));
    ChunkDecodeOptions dopt;
    const ChunkRef ref{offset, t0, t1, !keyframe};
    if (keyframe) {
        FOURDGS_ASSIGN(ChunkRecord parsed, parse_chunk(rv));
        FOURDGS_TRY(decode_chunk_bins(ctx.scene, parsed, band_span, dopt, bins, scratch));
        target.reset(ctx.sh_degree);
        FOURDGS_TRY(target.assign_keyframe(bins, ref));
    } else {
        FOURDGS_ASSIGN(DeltaChunk parsed, parse_delta_chunk(rv));
        FOURDGS_TRY(decode_delta_bins(ctx.scene, parsed, band_span, dopt, delta, scratch));
        FOURDGS_TRY(target.apply(delta, ref));
    }
    target.materialize(composed);
    std::string what;
    if (!same_bins(expected, composed, what))
        return make_error(ErrorKind::limit, refusal::kBoundViolated,
                          "the state composed from the chunk over [" + num(t0) + ", " + num(t1) +
                              ") differs from the quantized state in " + what);
    return ok_status();
}

}  // namespace

Status write_keyframe_delta(std::span<const KeyframeStep> steps, const SceneHeader& header,
                            const KeyframeWriterOptions& options, ByteSink& sink,
                            KeyframeWriteReport* report) {
    Ctx ctx;
    ctx.scene.header.sh_degree = static_cast<std::uint8_t>(std::clamp(header.sh_degree, 0, 3));
    ctx.scene.header.cutoff = header.cutoff;
    ctx.scene.header.duration_sec = header.duration_sec;
    FOURDGS_TRY(resolve(options, header, ctx));
    FOURDGS_ASSIGN(const content::Extras extras, content::encode_extras(header));
    const double duration = header.duration_sec;
    const std::size_t ns = steps.size();
    if (ns == 0)
        return bad_option("no steps: a keyframe-delta file tiles [0, duration) with states");
    if (steps[0].t0 != 0)
        return bad_option("the first step's t0 is " + num(steps[0].t0) + ", not 0");
    for (std::size_t s = 0; s < ns; ++s) {
        const double t1 = s + 1 < ns ? steps[s + 1].t0 : duration;
        if (!std::isfinite(steps[s].t0) || !(steps[s].t0 < t1))
            return bad_option("step " + std::to_string(s) + " has t0 " + num(steps[s].t0) +
                              " and ends at " + num(t1) +
                              "; steps must start strictly increasing, below the duration");
    }

    // Pass 1: validation, aabb, windows, optional columns, the largest caller id.
    std::array<double, 6> aabb{};
    bool any = false;
    std::vector<WindowTable::Window> windows;
    bool need_full = false;
    std::uint64_t max_id = 0;
    bool any_id = false;
    for (std::size_t s = 0; s < ns; ++s) {
        const KeyframeStep& st = steps[s];
        const double t1 = s + 1 < ns ? steps[s + 1].t0 : duration;
        FOURDGS_TRY(validate_step(st, s, t1, header.sh_degree, duration));
        const GaussianBatch& b = st.gaussians;
        for (std::size_t i = 0; i < b.count; ++i) {
            for (int c = 0; c < 3; ++c) {
                const double v = b.position[i * 3 + c];
                if (!any) aabb[c] = aabb[3 + c] = v;
                aabb[c] = std::min(aabb[c], v);
                aabb[3 + c] = std::max(aabb[3 + c], v);
            }
            any = true;
            if (!b.win_lo.empty()) windows.push_back({b.win_lo[i], b.win_hi[i]});
            max_id = std::max<std::uint64_t>(max_id, st.ids[i]);
            any_id = true;
        }
        if (b.win_lo.empty() && b.count > 0) need_full = true;
        ctx.has_group |= !b.source_group.empty();
        ctx.has_index |= !b.source_index.empty();
        ctx.has_object |= !b.object_id.empty();
        if (windows.size() > (std::size_t{1} << 22)) {
            std::sort(windows.begin(), windows.end(), [](const auto& x, const auto& y) {
                return x.lo < y.lo || (x.lo == y.lo && x.hi < y.hi);
            });
            windows.erase(std::unique(windows.begin(), windows.end()), windows.end());
        }
    }
    if (need_full) windows.push_back({0, duration});
    std::sort(windows.begin(), windows.end(), [](const auto& x, const auto& y) {
        return x.lo < y.lo || (x.lo == y.lo && x.hi < y.hi);
    });
    windows.erase(std::unique(windows.begin(), windows.end()), windows.end());
    auto window_index = [&](double lo, double hi) {
        auto it = std::lower_bound(windows.begin(), windows.end(), WindowTable::Window{lo, hi},
                                   [](const auto& x, const auto& y) {
                                       return x.lo < y.lo || (x.lo == y.lo && x.hi < y.hi);
                                   });
        return static_cast<std::uint32_t>(it - windows.begin());
    };
    if (need_full) ctx.window_full = window_index(0, duration);
    std::vector<std::vector<std::uint32_t>> window_of(ns);
    for (std::size_t s = 0; s < ns; ++s) {
        const GaussianBatch& b = steps[s].gaussians;
        if (b.win_lo.empty()) continue;
        window_of[s].resize(b.count);
        for (std::size_t i = 0; i < b.count; ++i)
            window_of[s][i] = window_index(b.win_lo[i], b.win_hi[i]);
    }
    ctx.scene.windows = windows;
    if (ctx.scene.windows.empty()) ctx.scene.windows.push_back({0, 0});
    Quantization quant;
    FOURDGS_TRY(make_grid(ctx, aabb, duration, quant));
    ctx.scene.quantization = quant;

    // The schedule: kind, mode and depth per step.
    std::vector<bool> is_key(ns), kf_ref(ns);
    std::vector<std::uint16_t> depth(ns);
    std::uint16_t max_depth = 0;
    std::uint32_t keyframes = 0;
    for (std::size_t s = 0; s < ns; ++s) {
        is_key[s] = s % options.keyframe_every == 0;
        if (is_key[s]) {
            ++keyframes;
            continue;
        }
        const double t0 = steps[s].t0, t1 = s + 1 < ns ? steps[s + 1].t0 : duration;
        bool extra = false;
        for (double x : options.keyframe_referenced_at) extra |= t0 <= x && x < t1;
        kf_ref[s] = !options.chained || extra;
        const std::uint32_t d = kf_ref[s] ? 1u : depth[s - 1] + 1u;
        if (d > 0xFFFF) return bad_option("a chain deeper than 65535 deltas: lower keyframe_every");
        depth[s] = static_cast<std::uint16_t>(d);
        max_depth = std::max(max_depth, depth[s]);
    }

    // Pass 2 (dry): identities, for the Header's gaussian_count.
    Identity ident;
    ident.next_fresh = any_id ? max_id + 1 : 0;
    ChunkBins raw, prev, cur;
    prev.sh_bands = ctx.sh_degree;
    for (std::size_t s = 0; s < ns; ++s) {
        FOURDGS_TRY(
            build_state(ctx, steps, s, is_key[s], windows, window_of, prev, ident, raw, cur));
        std::swap(prev, cur);
    }
    const std::uint64_t distinct = ident.distinct;

    // The front of the file.
    Header h;
    const bool indexed = options.base.write_index && ns > 1 && options.base.write_statistics;
    h.profile = header.profile.empty() && indexed ? "keyframed" : header.profile;
    h.library = header.library.empty() ? std::string("fourdgs ") + kVersionString : header.library;
    h.duration_sec = duration;
    h.gaussian_count = distinct;
    h.cutoff = header.cutoff;
    h.temporal_model = std::string(kModelKeyframeDelta);
    h.aabb = aabb;
    h.sh_degree = static_cast<std::uint8_t>(header.sh_degree);
    h.flags = ctx.chunk_compressed ? kHeaderFlagCompressed : 0;
    h.flags |= extras.header_flags();  // bit 0 exactly when there is audio (§7)
    h.attributes = header.attributes;
    ctx.scene.header = h;
    Assembler as(sink);
    {
        ByteWriter w;
        // Reserved up front: GCC 12 otherwise sees the first insert into the empty buffer as a
        // -Wstringop-overflow (a false positive, but CI builds with -Werror).
        w.buffer().reserve(kMagic.size() + 4096);
        w.raw(Bytes(kMagic));
        write(w, h);
        write(w, quant);
        write(w, WindowTable{windows});
        const Metadata advisory{"keyframe-delta",
                                {{"keyframe_interval_sec", bound_string(duration / keyframes)},
                                 {"gop_max_depth", std::to_string(max_depth)}}};
        const bool owed = options.base.codec == codec::lz4 || !header.private_records.empty();
        content::write_content_records(
            w, header, std::span<const Metadata>(&advisory, 1), owed,
            options.base.application.empty() ? h.library : options.base.application);
        content::write_extras(w, extras);
        FOURDGS_TRY(as.put(w));
    }

    // Pass 3: states, chunks, verification.
    if (report) {
        report->chunk_bytes.clear();
        report->live_count.clear();
        report->states.clear();
    }
    ident = Identity{};
    ident.next_fresh = any_id ? max_id + 1 : 0;
    prev = ChunkBins{};
    prev.sh_bands = ctx.sh_degree;
    ChunkBins keyframe_state, bins, composed;
    ComposedPopulation pop_prev, pop_key;
    pop_prev.reset(ctx.sh_degree);
    pop_key.reset(ctx.sh_degree);
    DecodeScratch scratch;
    DeltaBins delta;
    Encoded enc;
    std::uint64_t key_offset = 0, prev_offset = 0;
    for (std::size_t s = 0; s < ns; ++s) {
        const double t0 = steps[s].t0, t1 = s + 1 < ns ? steps[s + 1].t0 : duration;
        FOURDGS_TRY(
            build_state(ctx, steps, s, is_key[s], windows, window_of, prev, ident, raw, cur));
        const std::uint64_t offset = as.position();
        KeyframeIndexFields k;
        k.live_count = cur.count;
        if (is_key[s]) {
            FOURDGS_TRY(encode_keyframe(ctx, cur, t0, t1, enc));
            FOURDGS_TRY(verify(ctx, enc, true, t0, t1, offset, pop_key, cur, scratch, bins, delta,
                               composed));
            pop_prev = pop_key;
            keyframe_state = cur;
            key_offset = offset;
            k.chunk_kind = kChunkKindKeyframe;
        } else {
            DeltaHead head;
            head.t0 = t0;
            head.t1 = t1;
            head.mode = kf_ref[s] ? kDeltaModeKeyframe : kDeltaModeChained;
            head.reference = kf_ref[s] ? key_offset : prev_offset;
            head.keyframe = key_offset;
            head.depth = depth[s];
            FOURDGS_TRY(encode_delta(ctx, kf_ref[s] ? keyframe_state : prev, cur, head, s, enc));
            if (kf_ref[s]) {
                ComposedPopulation next = pop_key;
                FOURDGS_TRY(verify(ctx, enc, false, t0, t1, offset, next, cur, scratch, bins,
                                   delta, composed));
                pop_prev = std::move(next);
            } else {
                FOURDGS_TRY(verify(ctx, enc, false, t0, t1, offset, pop_prev, cur, scratch, bins,
                                   delta, composed));
            }
            k.chunk_kind = kChunkKindDelta;
            k.delta_mode = head.mode;
            k.reference_offset = head.reference;
            k.keyframe_offset = head.keyframe;
            k.depth = head.depth;
        }
        FOURDGS_TRY(as.chunk(enc, t0, t1, k));
        prev_offset = offset;
        if (report) {
            report->chunk_bytes.push_back(enc.bytes.size());
            report->live_count.push_back(cur.count);
            if (report->keep_states) report->states.push_back(cur);
        }
        std::swap(prev, cur);
    }
    const Statistics stats{distinct, static_cast<std::uint32_t>(ns), duration, aabb};
    FOURDGS_TRY(as.finish(options.base, stats));
    if (report) {
        report->base.quantization = quant;
        report->base.windows = windows;
        report->base.gaussian_count = distinct;
        report->base.aabb = aabb;
        report->base.chunk_count = static_cast<std::uint32_t>(ns);
        report->base.bytes_written = as.position();
        report->keyframes = keyframes;
        report->deltas = static_cast<std::uint32_t>(ns) - keyframes;
        report->gop_max_depth = max_depth;
    }
    return ok_status();
}

Result<std::vector<std::uint8_t>> write_keyframe_delta(std::span<const KeyframeStep> steps,
                                                       const SceneHeader& header,
                                                       const KeyframeWriterOptions& options,
                                                       KeyframeWriteReport* report) {
    MemorySink sink;
    FOURDGS_TRY(write_keyframe_delta(steps, header, options, sink, report));
    return sink.take();
}

}  // namespace fourdgs
