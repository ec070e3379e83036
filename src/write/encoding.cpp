// The steps both writers share (encoding.hpp).
#include "encoding.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "fourdgs/detail/chunk_bands.hpp"
#include "fourdgs/detail/record_stream.hpp"
#include "fourdgs/version.hpp"

namespace fourdgs::encoding {

using detail::RecordsInMemory;

namespace {

Status check_span(const BatchRules& rules, std::string_view field, std::size_t got,
                  std::size_t want, bool optional) {
    if (got == want || (optional && got == 0)) return ok_status();
    std::string message = std::string(field) + " holds " + std::to_string(got) + " values; " +
                          std::to_string(want) + (optional ? " (or none)" : "") + " expected";
    if (!rules.prefix.empty()) message = rules.prefix + ": " + message;
    return make_error(ErrorKind::invalid_argument, refusal::kInputSizeMismatch, std::move(message))
        .about("GaussianBatch." + std::string(field), std::to_string(got));
}

std::string gaussian_name(const BatchRules& rules, std::size_t i) {
    return (rules.prefix.empty() ? std::string() : rules.prefix + " ") + "gaussian " +
           std::to_string(rules.name_base + i);
}

Status check_window(const BatchRules& rules, std::size_t i, double lo, double hi,
                    double duration) {
    const std::string who = gaussian_name(rules, i);
    if (!std::isfinite(lo) || !std::isfinite(hi))
        return bad_input(refusal::kNonFiniteInput, who, "window",
                         "[" + num(lo) + ", " + num(hi) + ") is not finite");
    if (!(lo < hi))
        return bad_input(refusal::kEmptyWindow, who, "window",
                         "[" + num(lo) + ", " + num(hi) + ") is empty: lo >= hi");
    if (lo < 0 || hi > duration)
        return bad_input(refusal::kWindowOutsideDuration, who, "window",
                         "[" + num(lo) + ", " + num(hi) + ") lies outside the scene [0, " +
                             num(duration) + ")");
    return ok_status();
}

// Gaussian i of a batch that failed the fast check, field by field: the first refusal.
Status diagnose(const GaussianBatch& b, std::size_t i, std::size_t per, bool windows,
                double duration, const BatchRules& rules) {
    static const char* kAxis[4] = {"[0]", "[1]", "[2]", "[3]"};
    const std::string who = gaussian_name(rules, i);
    auto finite = [&](const char* field, int c, float v) -> Status {
        if (std::isfinite(v)) return ok_status();
        return bad_input(refusal::kNonFiniteInput, who,
                         std::string(field) + (c >= 0 ? kAxis[c] : ""),
                         "is " + num(v) + ", must be finite");
    };
    for (int c = 0; c < 3; ++c) FOURDGS_TRY(finite("position", c, b.position[i * 3 + c]));
    for (int c = 0; c < 3; ++c) {
        const float s = b.scale[i * 3 + c];
        FOURDGS_TRY(finite("scale", c, s));
        if (!(s > 0))
            return bad_input(refusal::kValueOutOfRange, who, std::string("scale") + kAxis[c],
                             "is " + num(s) + ", must be > 0 (a linear scale)");
    }
    double norm = 0;
    for (int c = 0; c < 4; ++c) {
        const float q = b.rotation[i * 4 + c];
        FOURDGS_TRY(finite("rotation", c, q));
        norm += static_cast<double>(q) * q;
    }
    if (!(norm > 0))
        return bad_input(refusal::kZeroQuaternion, who, "rotation",
                         "is the zero quaternion, which names no rotation");
    for (int c = 0; c < 4; ++c) {
        const float v = b.color[i * 4 + c];
        const char* field = c == 3 ? "opacity (color[3])" : "color";
        FOURDGS_TRY(finite(field, c == 3 ? -1 : c, v));
        if (!(v >= 0 && v <= 1))
            return bad_input(refusal::kValueOutOfRange, who,
                             c == 3 ? std::string(field) : std::string("color") + kAxis[c],
                             "is " + num(v) + ", outside [0, 1]");
    }
    if (!b.motion.empty())
        for (int c = 0; c < 3; ++c) FOURDGS_TRY(finite("motion", c, b.motion[i * 3 + c]));
    if (!b.mu_t.empty()) FOURDGS_TRY(finite("mu_t", -1, b.mu_t[i]));
    const float sg = b.sigma_t[i];
    if (std::isnan(sg) || sg == -std::numeric_limits<float>::infinity())
        return bad_input(refusal::kNonFiniteInput, who, "sigma_t",
                         "is " + num(sg) + "; must be finite and > 0, or +inf (never fades)");
    if (!(sg > 0))
        return bad_input(refusal::kValueOutOfRange, who, "sigma_t",
                         "is " + num(sg) + ", must be > 0 (or +inf: never fades)");
    if (windows) FOURDGS_TRY(check_window(rules, i, b.win_lo[i], b.win_hi[i], duration));
    for (std::size_t t = 0; t < per; ++t) {
        const float v = b.sh[i * per + t];
        if (!std::isfinite(v))
            return bad_input(refusal::kNonFiniteInput, who, "sh[" + std::to_string(t) + "]",
                             "is " + num(v) + ", must be finite");
    }
    return ok_status();
}

}  // namespace

Error bad_option(std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal::kInvalidOption, std::move(message));
}

Error bad_input(std::string_view refusal, std::string_view who, std::string_view field,
                std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal,
                      std::string(who) + ": " + std::string(field) + " " + message)
        .about("GaussianBatch." + std::string(field));
}

Status validate_header(const SceneHeader& h) {
    if (!std::isfinite(h.duration_sec) || !(h.duration_sec > 0))
        return bad_option("duration_sec is " + num(h.duration_sec) + ", must be finite and > 0");
    if (!std::isfinite(h.cutoff) || !(h.cutoff > 0) || !(h.cutoff < 1))
        return bad_option("cutoff is " + num(h.cutoff) + ", must be finite and in (0, 1)");
    if (h.sh_degree < 0 || h.sh_degree > 3)
        return bad_option("sh_degree is " + std::to_string(h.sh_degree) + ", must be 0..3");
    for (const PrivateRecordInput& p : h.private_records)
        if (p.opcode < 0x80)
            return bad_option("a private record's opcode is " + std::to_string(p.opcode) +
                              " (decimal); the private range is 0x80..0xFF (§4.3)");
    return ok_status();
}

Status validate_batch(const GaussianBatch& b, int sh_degree, double duration,
                      const BatchRules& rules) {
    const std::size_t n = b.count;
    if (b.sh_degree != sh_degree)
        return make_error(ErrorKind::invalid_argument, refusal::kShDegreeMismatch,
                          (rules.prefix.empty() ? std::string() : rules.prefix + ": ") +
                              "the gaussians carry SH degree " + std::to_string(b.sh_degree) +
                              " but the scene declares sh_degree " + std::to_string(sh_degree));
    const std::size_t per = static_cast<std::size_t>(sh_coeffs_per_component(sh_degree)) * 3;
    using W = BatchRules::Windows;
    const bool windows = rules.windows == W::required ||
                         (rules.windows == W::optional && !b.win_lo.empty());
    FOURDGS_TRY(check_span(rules, "position", b.position.size(), n * 3, false));
    FOURDGS_TRY(check_span(rules, "scale", b.scale.size(), n * 3, false));
    FOURDGS_TRY(check_span(rules, "rotation", b.rotation.size(), n * 4, false));
    FOURDGS_TRY(check_span(rules, "color", b.color.size(), n * 4, false));
    FOURDGS_TRY(check_span(rules, "motion", b.motion.size(), n * 3, true));
    FOURDGS_TRY(check_span(rules, "mu_t", b.mu_t.size(), n, rules.mu_t_optional));
    FOURDGS_TRY(check_span(rules, "sigma_t", b.sigma_t.size(), n, false));
    FOURDGS_TRY(check_span(rules, "win_lo", b.win_lo.size(), windows ? n : 0, false));
    FOURDGS_TRY(check_span(rules, "win_hi", b.win_hi.size(), windows ? n : 0, false));
    if (b.sh.size() != n * per)
        return make_error(ErrorKind::invalid_argument, refusal::kShDegreeMismatch,
                          (rules.prefix.empty() ? std::string() : rules.prefix + ": ") +
                              "sh holds " + std::to_string(b.sh.size()) +
                              " coefficients; SH degree " +
                              std::to_string(sh_degree) + " needs " + std::to_string(n * per) +
                              " for " + std::to_string(n) + " gaussians")
            .about("GaussianBatch.sh", std::to_string(b.sh.size()));
    FOURDGS_TRY(check_span(rules, "object_id", b.object_id.size(), n, true));
    FOURDGS_TRY(check_span(rules, "source_group", b.source_group.size(), n, true));
    FOURDGS_TRY(check_span(rules, "source_index", b.source_index.size(), n, true));

    // A branch-light pass finds the first bad gaussian; only that one is examined field by field.
    const bool has_mu = !b.mu_t.empty();
    auto plausible = [&](std::size_t i) {
        bool ok = true;
        for (int c = 0; c < 3; ++c) {
            ok &= std::isfinite(b.position[i * 3 + c]);
            const float sc = b.scale[i * 3 + c];
            ok &= std::isfinite(sc) & (sc > 0);
            if (!b.motion.empty()) ok &= std::isfinite(b.motion[i * 3 + c]);
        }
        float qn = 0;
        for (int c = 0; c < 4; ++c) {
            const float q = b.rotation[i * 4 + c], v = b.color[i * 4 + c];
            ok &= std::isfinite(q) & (v >= 0) & (v <= 1);
            qn += std::fabs(q);
        }
        ok &= qn > 0;
        if (has_mu) ok &= std::isfinite(b.mu_t[i]);
        ok &= b.sigma_t[i] > 0;  // +inf passes, NaN does not
        if (windows) {
            const double lo = b.win_lo[i], hi = b.win_hi[i];
            const bool finite = std::isfinite(lo);  // two calls joined by & draw clang's warning
            ok &= finite & std::isfinite(hi) & (lo < hi) & (lo >= 0) & (hi <= duration);
        }
        for (std::size_t t = 0; t < per; ++t) ok &= std::isfinite(b.sh[i * per + t]);
        return ok;
    };
    for (std::size_t i = 0; i < n; ++i)
        if (!plausible(i)) FOURDGS_TRY(diagnose(b, i, per, windows, duration, rules));
    return ok_status();
}

void Maxima::merge(const Maxima& o) {
    pos = std::max(pos, o.pos);
    scale = std::max(scale, o.scale);
    rot = std::max(rot, o.rot);
    rgb = std::max(rgb, o.rgb);
    alpha = std::max(alpha, o.alpha);
    motion = std::max(motion, o.motion);
    time = std::max(time, o.time);
    sigma = std::max(sigma, o.sigma);
    sh = std::max(sh, o.sh);
}

Status resolve_options(const WriterOptions& opt, int sh_degree, Encoding& e) {
    e.opt = opt;
    e.sh_degree = sh_degree;
    if (!codec_implemented(opt.codec))
        return make_error(ErrorKind::unsupported, refusal::kUnknownStreamCodec,
                          "stream codec byte " + std::to_string(opt.codec) + " (" +
                              codec_name(opt.codec) + ") is not implemented");
    if (static_cast<int>(opt.effort) > static_cast<int>(Effort::max))
        return bad_option("effort " + std::to_string(static_cast<int>(opt.effort)) +
                          " is not fast (0), default (1) or max (2)");
    std::vector<std::uint8_t> probe;  // refuses a bad level before anything is written
    FOURDGS_TRY(compress(opt.codec, opt.level, Bytes{}, probe));
    if (!opt.chunk_compression.empty()) {
        FOURDGS_ASSIGN(e.chunk_codec, chunk_compression_codec(opt.chunk_compression, kNoOffset));
        e.chunk_compressed = true;
        FOURDGS_TRY(compress(e.chunk_codec, opt.chunk_compression_level, Bytes{}, probe));
    }
    if (!opt.sh_depths.empty()) {
        if (static_cast<int>(opt.sh_depths.size()) != sh_degree)
            return bad_option("sh_depths has " + std::to_string(opt.sh_depths.size()) +
                              " entries; the scene's SH degree " + std::to_string(sh_degree) +
                              " needs one per band");
        for (std::size_t b = 0; b < opt.sh_depths.size(); ++b) {
            if (opt.sh_depths[b] < 3 || opt.sh_depths[b] > 8)
                return bad_option("sh_depths band " + std::to_string(b + 1) + " is " +
                                  std::to_string(opt.sh_depths[b]) + "; depths are 3..8 (§6.5)");
            e.depths[b] = opt.sh_depths[b];
        }
        e.declare_depths = sh_degree > 0;
    } else if (opt.sh_ladder != ShLadder::none) {
        e.depths = ladder_depths(opt.sh_ladder);
        e.declare_depths = sh_degree > 0;
    }
    for (int b = sh_degree; b < 3; ++b) e.depths[b] = 8;
    return ok_status();
}

void init_scene(Encoding& e, const SceneHeader& sh, const std::vector<WindowTable::Window>& win) {
    e.scene.header.sh_degree = static_cast<std::uint8_t>(sh.sh_degree);
    e.scene.header.cutoff = sh.cutoff;
    e.scene.header.duration_sec = sh.duration_sec;
    e.scene.windows = win;
    if (e.scene.windows.empty()) e.scene.windows.push_back({0, 0});  // §5.4
}

namespace {

Status check_bounds(const QuantBounds& q) {
    const std::pair<const char*, double> all[] = {
        {"pos", q.pos},         {"scale_rel", q.scale_rel}, {"rot", q.rot},
        {"rgb", q.rgb},         {"alpha", q.alpha},         {"motion", q.motion},
        {"time", q.time},       {"sigma_rel", q.sigma_rel}};
    for (const auto& [key, v] : all)
        if (!std::isfinite(v) || !(v > 0))
            return bad_option(std::string("bound '") + key + "' is " + num(v) +
                              ", must be finite and > 0");
    if (q.rot > 0.05)
        return bad_option("bound 'rot' is " + num(q.rot) +
                          "; the smallest-three reconstruction (§6.4) needs it <= 0.05");
    if (q.rgb > 0.5 || q.alpha > 0.5)
        return bad_option("bounds 'rgb' and 'alpha' must be <= 0.5 (colour lives in [0, 1])");
    return ok_status();
}

Result<QuantBounds> resolve_bounds(const WriterOptions& opt, double extent) {
    QuantBounds q = opt.bounds ? *opt.bounds : preset_bounds(opt.preset, extent);
    if (q.motion == 0) q.motion = 2 * q.pos;
    FOURDGS_TRY(check_bounds(q));
    return q;
}

// The coarsest declared SH depth (8 when none are declared).
int coarsest_depth(const Encoding& e) {
    int coarsest = 8;
    if (e.declare_depths)
        for (int b = 0; b < e.sh_degree; ++b) coarsest = std::min<int>(coarsest, e.depths[b]);
    return coarsest;
}

}  // namespace

Limits limits_for(const QuantBounds& qb, double reach) {
    Limits L;
    const double near_one = 1 + 0x1p-20;
    L.pos = qb.pos * near_one + kF32 * (reach + 2 * qb.pos);
    L.scale = qb.scale_rel * near_one + 2 * kF32;
    L.sigma = qb.sigma_rel * near_one + 2 * kF32;
    L.rgb = qb.rgb * near_one + kF32;
    L.alpha = qb.alpha * near_one + kF32;
    // §6.4: a stored component is off by at most e; the recovered one by at most
    // |Δ Σk²| / (q_m + q_m') <= (3e + 3e²) / (1/2 + q_m'min), since q_m >= 1/2 and Σ|k| <= 3/2.
    const double r = qb.rot;
    const double s = std::sqrt(3.0) / 2 + std::sqrt(3.0) * r;
    const double qm_min = std::sqrt(std::max(0.0, 1 - s * s));
    L.rot_kept = r * near_one + 2 * kF32;
    L.rot = std::max(L.rot_kept, (3 * r + 3 * r * r) / (0.5 + qm_min) * near_one + 2 * kF32);
    return L;
}

Status make_grid(Encoding& e, const std::array<double, 6>& aabb, double cutoff, Quantization& q) {
    QuantBounds qb;
    double reach = 0;
    Grid& g = e.scene.grid;
    if (e.opt.grid) {
        const FixedGrid& fixed = *e.opt.grid;
        for (int c = 0; c < 3; ++c)
            if (!std::isfinite(fixed.origin[c]))
                return bad_option("the fixed grid's origin is not finite");
        if (!std::isfinite(fixed.reach) || fixed.reach < 0)
            return bad_option("the fixed grid's reach is " + num(fixed.reach) +
                              ", must be finite and >= 0");
        qb = fixed.bounds;
        FOURDGS_TRY(check_bounds(qb));
        reach = fixed.reach;
        g.pos_origin = fixed.origin;
    } else {
        double extent = 0;
        for (int c = 0; c < 3; ++c) {
            extent = std::max(extent, aabb[3 + c] - aabb[c]);
            reach = std::max({reach, std::fabs(aabb[c]), std::fabs(aabb[3 + c])});
        }
        FOURDGS_ASSIGN(qb, resolve_bounds(e.opt, extent));
        for (int c = 0; c < 3; ++c) g.pos_origin[c] = 0.5 * (aabb[c] + aabb[3 + c]);
    }
    g.step_pos = 2 * qb.pos;
    g.step_scale_log = 2 * qb.scale_rel;
    g.step_rot = 2 * qb.rot;
    g.step_rgb = 2 * qb.rgb;
    g.step_alpha = 2 * qb.alpha;
    g.step_motion = 2 * qb.motion;
    g.step_time = 2 * qb.time;
    g.step_sigma_log = 2 * qb.sigma_rel;
    g.cutoff = cutoff;
    g.k = Grid::k_for_cutoff(cutoff);
    e.lim = limits_for(qb, reach);

    q.scheme = std::string(kSchemeUniformV1);
    static_cast<GridSteps&>(q) = g;
    q.step_sh = static_cast<std::uint8_t>(1 << (8 - coarsest_depth(e)));  // M103: the coarsest
    q.sh_depths.clear();
    if (e.declare_depths)
        for (int b = 0; b < e.sh_degree; ++b) q.sh_depths.push_back(e.depths[b]);
    return ok_status();
}

Maxima analytic_maxima(const Limits& lim, double step_motion, double step_time, double duration) {
    // The coarsest §6.3 velocity class (-4) and the class-0 birth grid bound every gaussian.
    return {.pos = lim.pos, .scale = lim.scale, .rot = lim.rot, .rgb = lim.rgb,
            .alpha = lim.alpha,
            .motion = std::ldexp(step_motion, -kVelocityClassMin) * 0.5 * (1 + 0x1p-10),
            .time = step_time * 0.5 * (1 + 0x1p-10) + kF32 * 4 * std::max(duration, 1.0),
            .sigma = lim.sigma};
}

Maxima analytic_maxima(const Encoding& e, double duration) {
    return analytic_maxima(e.lim, e.scene.grid.step_motion, e.scene.grid.step_time, duration);
}

StringMap make_bounds(const Encoding& e, const Maxima& m) {
    StringMap out = {{"pos", bound_string(m.pos)},     {"scale_rel", bound_string(m.scale)},
                     {"rot", bound_string(m.rot)},     {"rgb", bound_string(m.rgb)},
                     {"alpha", bound_string(m.alpha)}, {"motion", bound_string(m.motion)},
                     {"time", bound_string(m.time)},   {"sigma_rel", bound_string(m.sigma)}};
    const int coarsest = coarsest_depth(e);
    out.emplace_back("sh", std::to_string(sh_depth_bound(coarsest) * (coarsest < 8)));
    if (e.declare_depths)
        for (int b = 1; b <= e.sh_degree; ++b) {
            const int d = e.depths[b - 1];
            out.emplace_back("sh_band" + std::to_string(b),
                             std::to_string(d < 8 ? sh_depth_bound(d) : 0));
        }
    return out;
}

Header make_header(const SceneHeader& sh, std::string_view temporal_model,
                   std::uint64_t gaussian_count, const std::array<double, 6>& aabb,
                   bool compressed, const content::Extras& extras) {
    Header h;
    h.profile = sh.profile;
    h.library = sh.library.empty() ? std::string("fourdgs ") + kVersionString : sh.library;
    h.duration_sec = sh.duration_sec;
    h.gaussian_count = gaussian_count;
    h.cutoff = sh.cutoff;
    h.temporal_model = std::string(temporal_model);
    h.aabb = aabb;
    h.sh_degree = static_cast<std::uint8_t>(sh.sh_degree);
    h.flags = compressed ? kHeaderFlagCompressed : 0;
    h.flags |= extras.header_flags();  // bit 0 exactly when there is audio (§7)
    h.attributes = sh.attributes;
    return h;
}

bool write_content(ByteWriter& out, const SceneHeader& sh, const WriterOptions& opt,
                   std::span<const Metadata> writer_metadata, const std::string& library) {
    // At effort max only registered codecs are written, whatever `codec` says.
    const CodecInfo* codec = find_codec(opt.codec);
    const bool owed = (codec && !codec->registered && opt.effort != Effort::max) ||
                      !sh.private_records.empty();
    return content::write_content_records(out, sh, writer_metadata, owed,
                                          opt.application.empty() ? library : opt.application);
}

void resize_bins(ChunkBins& b, std::size_t n, int sh_degree) {
    b.count = static_cast<std::uint32_t>(n);
    for (std::uint8_t id = 0; id < attr::kKnownCount; ++id)
        if (std::vector<std::int32_t>* col = b.column(id)) col->resize(n * attr::kChannels[id]);
    b.sh_bands = sh_degree;
    for (int band = 1; band <= 3; ++band)
        b.sh[band - 1].resize(band <= sh_degree ? n * 3 * sh_band_width(band) : 0);
}

void gather_rows(const ChunkBins& src, std::span<const std::uint32_t> order, ChunkBins& dst) {
    resize_bins(dst, order.size(), src.sh_bands);
    // Rows of a fixed width, copied as such (a copy of a run-time length is a call each).
    auto gather = [&]<std::size_t W, class T>(const T* from, T* to) {
        for (std::size_t k = 0; k < order.size(); ++k)
            for (std::size_t c = 0; c < W; ++c) to[k * W + c] = from[std::size_t{order[k]} * W + c];
    };
    for_each_column(src, [&](std::uint8_t id, const std::vector<std::int32_t>& col, int w) {
        std::int32_t* out = dst.column(id)->data();
        if (w == 1) gather.template operator()<1>(col.data(), out);
        else gather.template operator()<3>(col.data(), out);
    });
    for (int band = 1; band <= src.sh_bands; ++band) {
        const std::uint8_t* from = src.sh[band - 1].data();
        std::uint8_t* to = dst.sh[band - 1].data();
        switch (band) {
            case 1: gather.template operator()<9>(from, to); break;
            case 2: gather.template operator()<15>(from, to); break;
            default: gather.template operator()<21>(from, to); break;
        }
    }
    dst.has_gaussian_id = src.has_gaussian_id;
    dst.has_source_group = src.has_source_group;
    dst.has_source_index = src.has_source_index;
    dst.has_object_id = src.has_object_id;
}

// The steps of a key not remembered yet, computed and remembered.
StepCache::Steps StepCache::fill(const Encoding& e, std::int32_t bin, bool never,
                                 std::uint32_t window) {
    const Grid& g = e.scene.grid;
    const WindowTable::Window& win = e.scene.windows[window];
    if (never) {
        if (never_.size() <= window) never_.resize(e.scene.windows.size());
        Steps& s = never_[window];
        if (s.velocity == 0) s = {velocity_step(g, bin, true, win.lo, win.hi), birth_step(g, bin, true)};
        return s;
    }
    Entry& entry = fading_[static_cast<std::uint32_t>(bin) & (fading_.size() - 1)];
    if (!entry.set || entry.bin != bin)
        entry = {bin, true, {velocity_step(g, bin, false, win.lo, win.hi), birth_step(g, bin, false)}};
    return entry.steps;
}

namespace {

// quantize_row's columns that depend on one input column each: row i's position, scale, rotation
// and colour (with opacity) into row j of `out`. Each returns the field whose bin does not fit,
// or nullptr.
const char* bin_position(const Grid& g, const GaussianBatch& b, std::size_t i, std::size_t j,
                         ChunkBins& out) {
    for (int c = 0; c < 3; ++c)
        if (!bin_of(static_cast<double>(b.position[i * 3 + c]) - g.pos_origin[c], g.step_pos,
                    out.position[j * 3 + c]))
            return "position";
    return nullptr;
}

const char* bin_scale(const Grid& g, const GaussianBatch& b, std::size_t i, std::size_t j,
                      ExactRow& x, ChunkBins& out) {
    for (int c = 0; c < 3; ++c) {
        x.log_scale[c] = std::log(static_cast<double>(b.scale[i * 3 + c]));
        if (!bin_of(x.log_scale[c], g.step_scale_log, out.scale[j * 3 + c])) return "scale";
    }
    return nullptr;
}

const char* bin_rotation(const Grid& g, const GaussianBatch& b, std::size_t i, std::size_t j,
                         ExactRow& x, ChunkBins& out) {
    // §6.4 smallest-three: omit the largest-magnitude component, made positive.
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
    for (int c = 0; c < 4; ++c) x.rotation[c] = sign * q[c] / norm;
    out.rotation_index[j] = m;
    for (int c = 0, kept = 0; c < 4; ++c) {
        if (c == m) continue;
        if (!bin_of(x.rotation[c], g.step_rot, out.rotation[j * 3 + kept++])) return "rotation";
    }
    return nullptr;
}

const char* bin_colour(const Grid& g, const GaussianBatch& b, std::size_t i, std::size_t j,
                       ChunkBins& out) {
    // §6.2: (g, r-g, b-g).
    std::int32_t rgb[3];
    for (int c = 0; c < 3; ++c)
        if (!bin_of(b.color[i * 4 + c], g.step_rgb, rgb[c])) return "color";
    out.color[j * 3 + 0] = rgb[1];
    out.color[j * 3 + 1] = rgb[0] - rgb[1];
    out.color[j * 3 + 2] = rgb[2] - rgb[1];
    if (!bin_of(b.color[i * 4 + 3], g.step_alpha, out.opacity[j])) return "opacity";
    return nullptr;
}

}  // namespace

const char* requantize_row(const Encoding& e, const GaussianBatch& b, std::size_t i,
                           std::size_t j, unsigned changed, ChunkBins& out) {
    const Grid& g = e.scene.grid;
    ExactRow x;
    const char* field = nullptr;
    if (!field && (changed & kRowPosition)) field = bin_position(g, b, i, j, out);
    if (!field && (changed & kRowScale)) field = bin_scale(g, b, i, j, x, out);
    if (!field && (changed & kRowRotation)) field = bin_rotation(g, b, i, j, x, out);
    if (!field && (changed & kRowColour)) field = bin_colour(g, b, i, j, out);
    return field;
}

const char* quantize_row(const Encoding& e, const GaussianBatch& b, std::size_t i,
                         std::uint32_t window, std::size_t j, ChunkBins& out, ExactRow* exact,
                         StepCache* steps) {
    const Grid& g = e.scene.grid;
    ExactRow local;
    ExactRow& x = exact ? *exact : local;
    if (const char* field = bin_position(g, b, i, j, out)) return field;
    if (const char* field = bin_scale(g, b, i, j, x, out)) return field;
    if (const char* field = bin_rotation(g, b, i, j, x, out)) return field;
    if (const char* field = bin_colour(g, b, i, j, out)) return field;

    const double sigma = b.sigma_t[i];
    const bool never = std::isinf(sigma);
    std::int32_t sigma_bin = 0;  // kept here: the row is written at random, not read back
    if (never) {
        x.log_sigma = kInf;
    } else {
        x.log_sigma = std::log(sigma);
        if (!bin_of(x.log_sigma, g.step_sigma_log, sigma_bin)) return "sigma_t";
    }
    out.flags[j] = never ? kFlagNeverFades : 0;
    out.sigma_t[j] = sigma_bin;
    out.window_index[j] = static_cast<std::int32_t>(window);
    const WindowTable::Window& win = e.scene.windows[window];
    // §6.3 with the file's own cutoff, from the sigma bin the decoder will see.
    if (steps) {
        const StepCache::Steps s = steps->get(e, sigma_bin, never, window);
        x.velocity_step = s.velocity;
        x.birth_step = s.birth;
    } else {
        x.velocity_step = velocity_step(g, sigma_bin, never, win.lo, win.hi);
        x.birth_step = birth_step(g, sigma_bin, never);
    }
    for (int c = 0; c < 3; ++c) {
        const double v = b.motion.empty() ? 0.0 : b.motion[i * 3 + c];
        if (!bin_of(v, x.velocity_step, out.motion[j * 3 + c])) return "motion";
    }
    if (!b.mu_t.empty() && !bin_of(b.mu_t[i], x.birth_step, out.mu_t[j])) return "mu_t";
    // The optional columns: 0 where the batch has none but the bins carry the column; not
    // written at all where neither has it (the column is not encoded).
    if (out.has_source_group || !b.source_group.empty())
        out.source_group[j] = b.source_group.empty() ? 0 : b.source_group[i];
    if (out.has_source_index || !b.source_index.empty())
        out.source_index[j] = b.source_index.empty() ? 0 : b.source_index[i];
    // §6.6: the same bits.
    if (out.has_object_id || !b.object_id.empty())
        out.object_id[j] = b.object_id.empty() ? 0 : static_cast<std::int32_t>(b.object_id[i]);
    // §6.5: clamp to [-4, 4], byte, then the band's bit depth; band streams are component-major
    // (red's coefficients, green's, blue's).
    const int per = sh_coeffs_per_component(e.sh_degree);
    for (int band = 1; band <= e.sh_degree; ++band) {
        const int wd = sh_band_width(band), first = sh_band_first(band);
        const int depth = e.depths[band - 1];
        for (int c = 0; c < 3; ++c)
            for (int t = 0; t < wd; ++t) {
                const std::uint8_t b8 =
                    sh_byte(b.sh[i * 3 * per + static_cast<std::size_t>(c) * per + first + t]);
                out.sh[band - 1][(j * 3 + c) * wd + t] = depth < 8 ? sh_requantize(b8, depth) : b8;
            }
    }
    return nullptr;
}

namespace {
// The candidates of effort max, read off codec_table() in its order.
std::vector<CodecLevel> registered_codecs_at_max_level() {
    std::vector<CodecLevel> levels;
    for (const CodecInfo& c : codec_table())
        if (c.registered) levels.push_back({c.byte, c.max_level});
    return levels;
}
}  // namespace

StreamEncodeOptions stream_options(const Encoding& e) {
    StreamEncodeOptions so;
    so.codec = e.opt.codec;
    so.level = e.opt.level;
    so.choice = e.opt.exact_modes ? ModeChoice::compress_both : ModeChoice::estimate;
    switch (e.opt.effort) {
        case Effort::fast: so.level = find_codec(so.codec)->fast_level; break;
        case Effort::default_: break;
        case Effort::max: {
            // Every registered codec at its highest level, in both modes; the options' own
            // (codec, level) first when registered, so a stream is never larger than at default.
            static const std::vector<CodecLevel> highest = registered_codecs_at_max_level();
            if (!find_codec(so.codec)->registered) {
                so.codec = highest[0].codec;
                so.level = highest[0].level;
            }
            so.choice = ModeChoice::compress_both;
            so.also = highest;
            break;
        }
    }
    return so;
}

Status encode_attribute_streams(const Encoding& e, const ChunkBins& b, ByteWriter& out,
                                StreamEncodeScratch& scratch) {
    const StreamEncodeOptions so = stream_options(e);
    const std::size_t n = b.count;
    auto put = [&](std::uint8_t id, const std::vector<std::int32_t>& col) {
        return encode_stream(out, id, attr::kChannels[id],
                             std::span<const std::int32_t>(col.data(), n * attr::kChannels[id]),
                             so, scratch);
    };
    ChunkBins& columns = const_cast<ChunkBins&>(b);  // column() is not const; nothing is changed
    for (std::uint8_t id = 0; id < attr::kRequiredCount; ++id)
        FOURDGS_TRY(put(id, *columns.column(id)));
    if (b.has_gaussian_id) FOURDGS_TRY(put(attr::gaussian_id, b.gaussian_id));
    if (b.has_source_group) FOURDGS_TRY(put(attr::source_group, b.source_group));
    if (b.has_source_index) FOURDGS_TRY(put(attr::source_index, b.source_index));
    if (b.has_object_id) FOURDGS_TRY(put(attr::object_id, b.object_id));
    return ok_status();
}

Status seal_block(const Encoding& e, ChunkBuffers& buf, std::string& compression, Bytes& records) {
    if (e.chunk_compressed) {
        FOURDGS_TRY(compress(e.chunk_codec, e.opt.chunk_compression_level, buf.block.buffer(),
                             buf.compressed));
        compression = e.opt.chunk_compression;
        records = buf.compressed;
    } else {
        compression.clear();
        records = buf.block.buffer();
    }
    return ok_status();
}

Status append_band_records(const Encoding& e, const ChunkBins& b, ChunkBuffers& buf,
                           EncodedRecords& out) {
    const StreamEncodeOptions so = stream_options(e);
    ByteWriter file;
    file.buffer().swap(out.bytes);
    Status st = ok_status();
    for (int band = 1; band <= e.sh_degree && st.ok(); ++band) {
        buf.band.buffer().clear();
        const int ch = 3 * sh_band_width(band);
        buf.values.assign(b.sh[band - 1].begin(), b.sh[band - 1].end());
        st = encode_stream(buf.band, op::sh_band, static_cast<std::uint8_t>(ch), buf.values, so,
                           buf.stream);
        if (!st.ok()) break;
        const std::size_t before = file.size();
        write(file, ShBandRecord{static_cast<std::uint8_t>(band), buf.band.buffer(), 0});
        out.band_length[band - 1] = file.size() - before;
        out.bands = band;
    }
    file.buffer().swap(out.bytes);
    return st;
}

Status encode_chunk_records(const Encoding& e, const ChunkBins& bins, double t0, double t1,
                            ChunkBuffers& buf, EncodedRecords& out) {
    buf.block.buffer().clear();
    FOURDGS_TRY(encode_attribute_streams(e, bins, buf.block, buf.stream));
    ChunkRecord rec;
    rec.t0 = t0;
    rec.t1 = t1;
    rec.level = 0;
    rec.count = bins.count;
    rec.uncompressed_size = buf.block.size();
    FOURDGS_TRY(seal_block(e, buf, rec.compression, rec.records));
    ByteWriter file;
    file.buffer().swap(out.bytes);
    file.buffer().clear();
    write(file, rec);
    out.chunk_length = file.size();
    out.bands = 0;
    file.buffer().swap(out.bytes);
    return append_band_records(e, bins, buf, out);
}

Status parse_back(const EncodedRecords& encoded, RecordView& chunk,
                  std::array<ShBandRecord, 3>& bands) {
    // The chunk record, then its band records, as a reader meets them.
    RecordsInMemory records(encoded.bytes, 0);
    FOURDGS_ASSIGN(std::optional<RecordView> record, records.next());
    auto missing = [&](const std::string& what) {
        return make_error(ErrorKind::truncated, refusal::kTruncated,
                          "the encoded records end before the " + what, records.position());
    };
    if (!record) return missing("chunk record");
    chunk = *record;
    detail::ChunkBands gathered;
    for (int band = 1; band <= encoded.bands; ++band) {
        FOURDGS_ASSIGN(record, records.next());
        if (!record) return missing("SH band " + std::to_string(band) + " record");
        FOURDGS_TRY(gathered.add(*record));
        bands[band - 1] = gathered.bands.back();
    }
    return ok_status();
}

}  // namespace fourdgs::encoding
