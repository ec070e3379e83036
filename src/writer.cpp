// The writer (fourdgs/writer.hpp): validate → quantize (§6) → streams (§5.6) → verify by decoding
// → records → summary (§4.5) → sink.
#include "fourdgs/writer.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>
#include <thread>
#include <utility>

#include "fourdgs/decode.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/quantize.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/version.hpp"
#include "content_records.hpp"

namespace fourdgs {
namespace {

// Allowance for the decoder's f32 output: rounding to nearest f32 moves a value by at most 2^-24
// of its magnitude; twice that leaves room for the double arithmetic before it.
constexpr double kF32 = 0x1p-23;
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string num(double v) { return detail::fmt(v); }

Error bad_input(std::string_view refusal, std::uint64_t gaussian, std::string_view field,
                std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal,
                      "gaussian " + std::to_string(gaussian) + ": " + std::string(field) + " " +
                          message);
}

Error bad_option(std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal::kInvalidOption, std::move(message));
}

// ---- the file-wide encoding context ---------------------------------------------------------

// Verification limits: the grid's analytic worst case per attribute (half the step plus the f32
// allowance). The per-gaussian grids of motion and mu_t are checked per gaussian; their
// `*_declared` limits bind only where the file declares them up front (streaming).
struct Limits {
    double pos = 0, scale = 0, rot_kept = 0, rot = 0, rgb = 0, alpha = 0, sigma = 0;
    double motion_declared = kInf, time_declared = kInf;
};

struct Maxima {
    double pos = 0, scale = 0, rot = 0, rgb = 0, alpha = 0, motion = 0, time = 0, sigma = 0;
    int sh = 0;
    void merge(const Maxima& o) {
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
};

struct Context {
    SceneInfo scene;  // what the decoder sees: header.sh_degree, grid, effective windows
    WriterOptions opt;
    int sh_degree = 0;
    bool declare_depths = false;
    std::array<std::uint8_t, 3> depths{8, 8, 8};
    Limits lim;
    std::uint8_t chunk_codec = 0;
    bool chunk_compressed = false;
};

// One chunk to encode: gaussians `indices` of `batch` (window per gaussian, or one for all).
struct ChunkJob {
    const GaussianBatch* batch = nullptr;
    std::span<const std::uint32_t> indices;
    std::span<const std::uint32_t> windows;  // parallel to indices; empty = `window` for all
    std::uint32_t window = 0;
    std::uint64_t name_base = 0;  // added to a batch index to name a gaussian
    double t0 = 0, t1 = 0;
};

struct EncodedChunk {
    std::vector<std::uint8_t> bytes;  // the Chunk record, then its SH Band records
    std::uint64_t chunk_length = 0;
    std::array<std::uint64_t, 3> band_length{};
    int bands = 0;
    double t0 = 0, t1 = 0;
    std::uint32_t count = 0;
    Maxima maxima;
};

// Per-thread buffers, reused across chunks.
struct Work {
    std::vector<std::int32_t> posb, pos, scale, rot, rot_index, color, opacity, motion, mu,
        sigma, flags, window, group, index, object;
    std::array<std::vector<std::int32_t>, 3> sh;
    std::array<std::vector<std::uint8_t>, 3> sh8;  // the 8-bit bytes before bit-depth coarsening
    std::vector<std::pair<std::uint64_t, std::uint32_t>> keys;
    std::vector<std::uint32_t> perm;
    std::vector<double> qc, log_scale, log_sigma, vstep, bstep;
    ByteWriter block;
    std::vector<std::uint8_t> compressed;
    ByteWriter band;
    ChunkBins bins;
    DecodeScratch scratch;
    GaussianBlock decoded;
};

bool bin_of(double value, double step, std::int32_t& out) {
    const double b = std::nearbyint(value / step);
    if (!(std::fabs(b) <= 2147483647.0)) return false;
    out = static_cast<std::int32_t>(b);
    return true;
}

// 21 bits of each axis interleaved (z y x, x lowest).
std::uint64_t spread3(std::uint64_t v) {
    v &= 0x1FFFFF;
    v = (v | v << 32) & 0x1F00000000FFFFull;
    v = (v | v << 16) & 0x1F0000FF0000FFull;
    v = (v | v << 8) & 0x100F00F00F00F00Full;
    v = (v | v << 4) & 0x10C30C30C30C30C3ull;
    v = (v | v << 2) & 0x1249249249249249ull;
    return v;
}

// ---- one chunk: quantize, encode, verify ----------------------------------------------------

Status encode_chunk(const Context& ctx, const ChunkJob& job, Work& w, EncodedChunk& out) {
    const GaussianBatch& b = *job.batch;
    const Grid& g = ctx.scene.grid;
    const std::size_t n = job.indices.size();
    const bool has_motion = !b.motion.empty();
    auto window_of = [&](std::size_t k) {
        return job.windows.empty() ? job.window : job.windows[k];
    };
    auto name = [&](std::size_t k) { return job.name_base + job.indices[k]; };

    // Position bins first: they decide the order.
    w.posb.resize(n * 3);
    for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = job.indices[k];
        for (int c = 0; c < 3; ++c)
            if (!bin_of(static_cast<double>(b.position[i * 3 + c]) - g.pos_origin[c], g.step_pos,
                        w.posb[k * 3 + c]))
                return bad_input(refusal::kBinOutOfRange, name(k), "position",
                                 "is too far from the grid origin for an i32 bin at step_pos " +
                                     num(g.step_pos));
    }
    w.perm.resize(n);
    std::iota(w.perm.begin(), w.perm.end(), 0u);
    if (ctx.opt.spatial_order && n > 1) {
        std::int64_t lo[3], hi[3];
        for (int c = 0; c < 3; ++c) lo[c] = hi[c] = w.posb[c];
        for (std::size_t k = 1; k < n; ++k)
            for (int c = 0; c < 3; ++c) {
                lo[c] = std::min<std::int64_t>(lo[c], w.posb[k * 3 + c]);
                hi[c] = std::max<std::int64_t>(hi[c], w.posb[k * 3 + c]);
            }
        int shift = 0;
        for (int c = 0; c < 3; ++c)
            while (((hi[c] - lo[c]) >> shift) >= (1 << 21)) ++shift;
        w.keys.resize(n);
        for (std::size_t k = 0; k < n; ++k) {
            std::uint64_t key = 0;
            for (int c = 0; c < 3; ++c)
                key |= spread3(static_cast<std::uint64_t>(w.posb[k * 3 + c] - lo[c]) >> shift)
                       << c;
            w.keys[k] = {key, static_cast<std::uint32_t>(k)};
        }
        std::sort(w.keys.begin(), w.keys.end());
        for (std::size_t j = 0; j < n; ++j) w.perm[j] = w.keys[j].second;
    }

    // Every other attribute, in the chosen order.
    for (auto* v : {&w.pos, &w.scale, &w.rot, &w.color, &w.motion}) v->resize(n * 3);
    for (auto* v : {&w.rot_index, &w.opacity, &w.mu, &w.sigma, &w.flags, &w.window}) v->resize(n);
    w.qc.resize(n * 4);
    w.log_scale.resize(n * 3);
    w.log_sigma.resize(n);
    w.vstep.resize(n);
    w.bstep.resize(n);
    const bool has_group = !b.source_group.empty(), has_index = !b.source_index.empty(),
               has_object = !b.object_id.empty();
    if (has_group) w.group.resize(n);
    if (has_index) w.index.resize(n);
    if (has_object) w.object.resize(n);
    const int per = sh_coeffs_per_component(ctx.sh_degree);
    for (int band = 1; band <= ctx.sh_degree; ++band) {
        w.sh[band - 1].resize(n * 3 * sh_band_width(band));
        w.sh8[band - 1].resize(n * 3 * sh_band_width(band));
    }

    for (std::size_t j = 0; j < n; ++j) {
        const std::size_t k = w.perm[j];
        const std::size_t i = job.indices[k];
        const std::uint64_t who = name(k);
        for (int c = 0; c < 3; ++c) w.pos[j * 3 + c] = w.posb[k * 3 + c];
        for (int c = 0; c < 3; ++c) {
            const double ls = std::log(static_cast<double>(b.scale[i * 3 + c]));
            w.log_scale[j * 3 + c] = ls;
            if (!bin_of(ls, g.step_scale_log, w.scale[j * 3 + c]))
                return bad_input(refusal::kBinOutOfRange, who, "scale", "does not fit an i32 bin");
        }
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
        for (int c = 0; c < 4; ++c) w.qc[j * 4 + c] = sign * q[c] / norm;
        w.rot_index[j] = m;
        for (int c = 0, kept = 0; c < 4; ++c) {
            if (c == m) continue;
            if (!bin_of(w.qc[j * 4 + c], g.step_rot, w.rot[j * 3 + kept++]))
                return bad_input(refusal::kBinOutOfRange, who, "rotation", "does not fit an i32 bin");
        }
        // §6.2: (g, r-g, b-g).
        std::int32_t rgb[3];
        for (int c = 0; c < 3; ++c)
            if (!bin_of(b.color[i * 4 + c], g.step_rgb, rgb[c]))
                return bad_input(refusal::kBinOutOfRange, who, "color", "does not fit an i32 bin");
        w.color[j * 3 + 0] = rgb[1];
        w.color[j * 3 + 1] = rgb[0] - rgb[1];
        w.color[j * 3 + 2] = rgb[2] - rgb[1];
        if (!bin_of(b.color[i * 4 + 3], g.step_alpha, w.opacity[j]))
            return bad_input(refusal::kBinOutOfRange, who, "opacity", "does not fit an i32 bin");

        const double sigma = b.sigma_t[i];
        const bool never = std::isinf(sigma);
        w.flags[j] = never ? kFlagNeverFades : 0;
        if (never) {
            w.sigma[j] = 0;
            w.log_sigma[j] = kInf;
        } else {
            w.log_sigma[j] = std::log(sigma);
            if (!bin_of(w.log_sigma[j], g.step_sigma_log, w.sigma[j]))
                return bad_input(refusal::kBinOutOfRange, who, "sigma_t", "does not fit an i32 bin");
        }
        const std::uint32_t wi = window_of(k);
        w.window[j] = static_cast<std::int32_t>(wi);
        const auto& win = ctx.scene.windows[wi];
        // §6.3 with the file's own cutoff, from the sigma bin the decoder will see.
        w.vstep[j] = velocity_step(g, w.sigma[j], never, win.lo, win.hi);
        w.bstep[j] = birth_step(g, w.sigma[j], never);
        for (int c = 0; c < 3; ++c) {
            const double v = has_motion ? b.motion[i * 3 + c] : 0.0;
            if (!bin_of(v, w.vstep[j], w.motion[j * 3 + c]))
                return bad_input(refusal::kBinOutOfRange, who, "motion", "does not fit an i32 bin");
        }
        if (!bin_of(b.mu_t[i], w.bstep[j], w.mu[j]))
            return bad_input(refusal::kBinOutOfRange, who, "mu_t", "does not fit an i32 bin");
        if (has_group) w.group[j] = b.source_group[i];
        if (has_index) w.index[j] = b.source_index[i];
        if (has_object) w.object[j] = static_cast<std::int32_t>(b.object_id[i]);  // §6.6 same bits
        // §6.5: clamp to [-4, 4], byte, then the band's bit depth; band streams are
        // component-major (red's coefficients, green's, blue's).
        for (int band = 1; band <= ctx.sh_degree; ++band) {
            const int wd = sh_band_width(band), first = sh_band_first(band);
            const int depth = ctx.depths[band - 1];
            for (int c = 0; c < 3; ++c)
                for (int t = 0; t < wd; ++t) {
                    const std::uint8_t b8 =
                        sh_byte(b.sh[i * 3 * per + static_cast<std::size_t>(c) * per + first + t]);
                    const std::size_t at = (j * 3 + c) * wd + t;
                    w.sh8[band - 1][at] = b8;
                    w.sh[band - 1][at] = depth < 8 ? sh_requantize(b8, depth) : b8;
                }
        }
    }

    // Streams: required ids 0..10, then the optional ones present in the input.
    StreamEncodeOptions so;
    so.codec = ctx.opt.codec;
    so.level = ctx.opt.level;
    w.block.buffer().clear();
    struct Col {
        std::uint8_t id;
        const std::vector<std::int32_t>* v;
    };
    const Col cols[] = {{attr::position, &w.pos},       {attr::scale, &w.scale},
                        {attr::rotation_index, &w.rot_index}, {attr::rotation, &w.rot},
                        {attr::color, &w.color},        {attr::opacity, &w.opacity},
                        {attr::motion, &w.motion},      {attr::mu_t, &w.mu},
                        {attr::sigma_t, &w.sigma},      {attr::flags, &w.flags},
                        {attr::window_index, &w.window}};
    for (const Col& col : cols)
        FOURDGS_TRY(encode_stream(w.block, col.id, attr::kChannels[col.id],
                                  std::span<const std::int32_t>(col.v->data(),
                                                                n * attr::kChannels[col.id]),
                                  so));
    if (has_group)
        FOURDGS_TRY(encode_stream(w.block, attr::source_group, 1,
                                  std::span<const std::int32_t>(w.group.data(), n), so));
    if (has_index)
        FOURDGS_TRY(encode_stream(w.block, attr::source_index, 1,
                                  std::span<const std::int32_t>(w.index.data(), n), so));
    if (has_object)
        FOURDGS_TRY(encode_stream(w.block, attr::object_id, 1,
                                  std::span<const std::int32_t>(w.object.data(), n), so));

    ChunkRecord rec;
    rec.t0 = job.t0;
    rec.t1 = job.t1;
    rec.level = 0;
    rec.count = static_cast<std::uint32_t>(n);
    rec.uncompressed_size = w.block.size();
    if (ctx.chunk_compressed) {
        FOURDGS_TRY(compress(ctx.chunk_codec, ctx.opt.chunk_compression_level, w.block.buffer(),
                             w.compressed));
        rec.compression = ctx.opt.chunk_compression;
        rec.records = w.compressed;
    } else {
        rec.records = w.block.buffer();
    }
    ByteWriter file;
    file.buffer().swap(out.bytes);
    file.buffer().clear();
    write(file, rec);
    out.chunk_length = file.size();
    out.bands = ctx.sh_degree;
    for (int band = 1; band <= ctx.sh_degree; ++band) {
        w.band.buffer().clear();
        const int ch = 3 * sh_band_width(band);
        FOURDGS_TRY(encode_stream(w.band, op::sh_band, static_cast<std::uint8_t>(ch),
                                  std::span<const std::int32_t>(w.sh[band - 1].data(), n * ch),
                                  so));
        const std::size_t before = file.size();
        write(file, ShBandRecord{static_cast<std::uint8_t>(band), w.band.buffer(), 0});
        out.band_length[band - 1] = file.size() - before;
    }
    out.bytes = std::move(file.buffer());
    out.t0 = job.t0;
    out.t1 = job.t1;
    out.count = static_cast<std::uint32_t>(n);

    // Verify: parse what was written and decode it with the readers' own decoder.
    const Bytes bytes = out.bytes;
    FOURDGS_ASSIGN(RecordView rv, parse_record(bytes, 0));
    FOURDGS_ASSIGN(ChunkRecord parsed, parse_chunk(rv));
    ShBandRecord band_recs[3];
    std::size_t at = static_cast<std::size_t>(out.chunk_length);
    for (int band = 1; band <= ctx.sh_degree; ++band) {
        FOURDGS_ASSIGN(RecordView bv, parse_record(bytes.subspan(at), at));
        FOURDGS_ASSIGN(band_recs[band - 1], parse_sh_band(bv));
        at += static_cast<std::size_t>(bv.total_length());
    }
    ChunkDecodeOptions dopt;
    FOURDGS_TRY(decode_chunk_bins(ctx.scene, parsed,
                                  std::span<const ShBandRecord>(band_recs, ctx.sh_degree), dopt,
                                  w.bins, w.scratch));
    w.decoded.clear();
    dequantize(ctx.scene, w.bins, w.decoded);
    const GaussianBlock& d = w.decoded;
    if (d.count != n || d.sh_degree != ctx.sh_degree)
        return make_error(ErrorKind::limit, refusal::kBoundViolated,
                          "a chunk decodes to " + std::to_string(d.count) +
                              " gaussians at SH degree " + std::to_string(d.sh_degree) + ", not " +
                              std::to_string(n) + " at " + std::to_string(ctx.sh_degree));

    const Limits& lim = ctx.lim;
    Maxima& mx = out.maxima;
    mx = Maxima{};
    auto violated = [&](std::uint64_t who, std::string_view field, double err, double bound) {
        return make_error(ErrorKind::limit, refusal::kBoundViolated,
                          "gaussian " + std::to_string(who) + ": " + std::string(field) +
                              " decodes " + num(err) + " away from the input, over its bound " +
                              num(bound));
    };
    for (std::size_t j = 0; j < n; ++j) {
        const std::size_t k = w.perm[j];
        const std::size_t i = job.indices[k];
        const std::uint64_t who = name(k);
        for (int c = 0; c < 3; ++c) {
            const double e = std::fabs(static_cast<double>(d.position[j * 3 + c]) -
                                       static_cast<double>(b.position[i * 3 + c]));
            if (!(e <= lim.pos)) return violated(who, "position", e, lim.pos);
            mx.pos = std::max(mx.pos, e);
        }
        for (int c = 0; c < 3; ++c) {
            const double e = std::fabs(std::log(static_cast<double>(d.scale[j * 3 + c])) -
                                       w.log_scale[j * 3 + c]);
            if (!(e <= lim.scale)) return violated(who, "scale (relative, log domain)", e, lim.scale);
            mx.scale = std::max(mx.scale, e);
        }
        {
            double ep = 0, en = 0, kept = 0;
            const int m = w.rot_index[j];
            for (int c = 0; c < 4; ++c) {
                const double dq = d.rotation[j * 4 + c], qc = w.qc[j * 4 + c];
                ep = std::max(ep, std::fabs(dq - qc));
                en = std::max(en, std::fabs(dq + qc));
                if (c != m) kept = std::max(kept, std::fabs(dq - qc));
            }
            const double e = std::min(ep, en);
            if (!(kept <= lim.rot_kept))
                return violated(who, "rotation (a stored component)", kept, lim.rot_kept);
            if (!(e <= lim.rot)) return violated(who, "rotation", e, lim.rot);
            mx.rot = std::max(mx.rot, e);
        }
        for (int c = 0; c < 3; ++c) {
            const double e = std::fabs(static_cast<double>(d.color[j * 4 + c]) -
                                       static_cast<double>(b.color[i * 4 + c]));
            if (!(e <= lim.rgb)) return violated(who, "color", e, lim.rgb);
            mx.rgb = std::max(mx.rgb, e);
        }
        {
            const double e = std::fabs(static_cast<double>(d.color[j * 4 + 3]) -
                                       static_cast<double>(b.color[i * 4 + 3]));
            if (!(e <= lim.alpha)) return violated(who, "opacity", e, lim.alpha);
            mx.alpha = std::max(mx.alpha, e);
        }
        const bool never = w.flags[j] != 0;
        if (never) {
            if (!std::isinf(d.sigma_t[j]) || (d.flags[j] & kFlagNeverFades) == 0)
                return violated(who, "sigma_t (never fades)", kInf, 0);
        } else {
            const double e = std::fabs(std::log(static_cast<double>(d.sigma_t[j])) - w.log_sigma[j]);
            if (!(e <= lim.sigma)) return violated(who, "sigma_t (relative, log domain)", e, lim.sigma);
            mx.sigma = std::max(mx.sigma, e);
        }
        for (int c = 0; c < 3; ++c) {
            const double v = has_motion ? b.motion[i * 3 + c] : 0.0;
            const double e = std::fabs(static_cast<double>(d.motion[j * 3 + c]) - v);
            const double bound =
                std::min(w.vstep[j] * 0.5 * (1 + 0x1p-10) + kF32 * std::fabs(v), lim.motion_declared);
            if (!(e <= bound)) return violated(who, "motion", e, bound);
            mx.motion = std::max(mx.motion, e);
        }
        {
            const double mu = b.mu_t[i];
            const double e = std::fabs(static_cast<double>(d.mu_t[j]) - mu);
            const double bound =
                std::min(w.bstep[j] * 0.5 * (1 + 0x1p-10) + kF32 * std::fabs(mu), lim.time_declared);
            if (!(e <= bound)) return violated(who, "mu_t", e, bound);
            mx.time = std::max(mx.time, e);
        }
        const std::uint32_t wi = window_of(k);
        if (d.window_index[j] != wi ||
            d.win_lo[j] != static_cast<float>(ctx.scene.windows[wi].lo) ||
            d.win_hi[j] != static_cast<float>(ctx.scene.windows[wi].hi))
            return violated(who, "window", 1, 0);
        if (has_object && d.object_id[j] != b.object_id[i])
            return violated(who, "object_id", 1, 0);
        if ((has_group && d.source_group[j] != b.source_group[i]) ||
            (has_index && d.source_index[j] != b.source_index[i]))
            return violated(who, "source_group/source_index", 1, 0);
        for (int band = 1; band <= ctx.sh_degree; ++band) {
            const int wd = sh_band_width(band), first = sh_band_first(band);
            const int bound = ctx.depths[band - 1] < 8 ? sh_depth_bound(ctx.depths[band - 1]) : 0;
            for (int c = 0; c < 3; ++c)
                for (int t = 0; t < wd; ++t) {
                    const std::size_t at8 = (j * 3 + c) * wd + t;
                    const int got = d.sh[j * 3 * per + static_cast<std::size_t>(c) * per + first + t];
                    const int e = std::abs(got - w.sh8[band - 1][at8]);
                    if (got != w.sh[band - 1][at8] || e > bound)
                        return violated(who, "sh (code units)", e, bound);
                    mx.sh = std::max(mx.sh, e);
                }
        }
    }
    return ok_status();
}

// Encodes `jobs` into `outs` on up to ctx.opt.threads threads. The result does not depend on the
// thread count; on failure the error of the lowest-numbered failing job is returned.
Status encode_jobs(const Context& ctx, std::span<const ChunkJob> jobs,
                   std::vector<EncodedChunk>& outs, std::vector<Work>& pool) {
    outs.resize(jobs.size());
    unsigned threads = ctx.opt.threads ? ctx.opt.threads : std::thread::hardware_concurrency();
    threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(jobs.size())));
    if (pool.size() < threads) pool.resize(threads);
    if (threads == 1) {
        for (std::size_t j = 0; j < jobs.size(); ++j)
            FOURDGS_TRY(encode_chunk(ctx, jobs[j], pool[0], outs[j]));
        return ok_status();
    }
    std::vector<Status> status(jobs.size());
    std::atomic<std::size_t> next{0};
    auto worker = [&](unsigned t) {
        for (std::size_t j; (j = next.fetch_add(1)) < jobs.size();)
            status[j] = encode_chunk(ctx, jobs[j], pool[t], outs[j]);
    };
    std::vector<std::thread> team;
    team.reserve(threads - 1);
    for (unsigned t = 1; t < threads; ++t) team.emplace_back(worker, t);
    worker(0);
    for (auto& th : team) th.join();
    for (Status& s : status)
        if (!s.ok()) return s;
    return ok_status();
}

// ---- validation -----------------------------------------------------------------------------

Status check_span(std::string_view field, std::size_t got, std::size_t want, bool optional) {
    if (got == want || (optional && got == 0)) return ok_status();
    return make_error(ErrorKind::invalid_argument, refusal::kInputSizeMismatch,
                      std::string(field) + " holds " + std::to_string(got) + " values; " +
                          std::to_string(want) + (optional ? " (or none)" : "") + " expected");
}

Status check_window(double lo, double hi, double duration, std::uint64_t who, bool is_gaussian,
                    std::size_t table_index = 0) {
    auto err = [&](std::string_view refusal, std::string message) {
        if (is_gaussian) return bad_input(refusal, who, "window", std::move(message));
        return make_error(ErrorKind::invalid_argument, refusal,
                          "declared window " + std::to_string(table_index) + " " + message);
    };
    if (!std::isfinite(lo) || !std::isfinite(hi))
        return err(refusal::kNonFiniteInput, "[" + num(lo) + ", " + num(hi) + ") is not finite");
    if (!(lo < hi))
        return err(refusal::kEmptyWindow, "[" + num(lo) + ", " + num(hi) + ") is empty: lo >= hi");
    if (lo < 0 || hi > duration)
        return err(refusal::kWindowOutsideDuration, "[" + num(lo) + ", " + num(hi) +
                                                  ") lies outside the scene [0, " + num(duration) +
                                                  ")");
    return ok_status();
}

Status validate_batch(const GaussianBatch& b, int sh_degree, double duration, bool need_windows,
                      std::uint64_t name_base) {
    const std::size_t n = b.count;
    if (b.sh_degree != sh_degree)
        return make_error(ErrorKind::invalid_argument, refusal::kShDegreeMismatch,
                          "the gaussians carry SH degree " + std::to_string(b.sh_degree) +
                              " but the scene declares sh_degree " + std::to_string(sh_degree));
    const std::size_t per = static_cast<std::size_t>(sh_coeffs_per_component(sh_degree)) * 3;
    FOURDGS_TRY(check_span("position", b.position.size(), n * 3, false));
    FOURDGS_TRY(check_span("scale", b.scale.size(), n * 3, false));
    FOURDGS_TRY(check_span("rotation", b.rotation.size(), n * 4, false));
    FOURDGS_TRY(check_span("color", b.color.size(), n * 4, false));
    FOURDGS_TRY(check_span("motion", b.motion.size(), n * 3, true));
    FOURDGS_TRY(check_span("mu_t", b.mu_t.size(), n, false));
    FOURDGS_TRY(check_span("sigma_t", b.sigma_t.size(), n, false));
    FOURDGS_TRY(check_span("win_lo", b.win_lo.size(), need_windows ? n : 0, false));
    FOURDGS_TRY(check_span("win_hi", b.win_hi.size(), need_windows ? n : 0, false));
    if (b.sh.size() != n * per)
        return make_error(ErrorKind::invalid_argument, refusal::kShDegreeMismatch,
                          "sh holds " + std::to_string(b.sh.size()) + " coefficients; SH degree " +
                              std::to_string(sh_degree) + " needs " + std::to_string(n * per) +
                              " for " + std::to_string(n) + " gaussians");
    FOURDGS_TRY(check_span("object_id", b.object_id.size(), n, true));
    FOURDGS_TRY(check_span("source_group", b.source_group.size(), n, true));
    FOURDGS_TRY(check_span("source_index", b.source_index.size(), n, true));

    static const char* kAxis[4] = {"[0]", "[1]", "[2]", "[3]"};
    auto finite = [&](std::uint64_t who, const char* field, int c, float v) -> Status {
        if (std::isfinite(v)) return ok_status();
        return bad_input(refusal::kNonFiniteInput, who, std::string(field) + (c >= 0 ? kAxis[c] : ""),
                         "is " + num(v) + ", must be finite");
    };
    // A branch-light pass finds the first bad gaussian; only that one is examined field by field.
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
        ok &= std::isfinite(b.mu_t[i]) & (b.sigma_t[i] > 0);  // +inf passes, NaN does not
        if (need_windows) {
            const double lo = b.win_lo[i], hi = b.win_hi[i];
            ok &= std::isfinite(lo) & std::isfinite(hi) & (lo < hi) & (lo >= 0) & (hi <= duration);
        }
        for (std::size_t t = 0; t < per; ++t) ok &= std::isfinite(b.sh[i * per + t]);
        return ok;
    };
    for (std::size_t i = 0; i < n; ++i) {
        if (plausible(i)) continue;
        const std::uint64_t who = name_base + i;
        for (int c = 0; c < 3; ++c) FOURDGS_TRY(finite(who, "position", c, b.position[i * 3 + c]));
        for (int c = 0; c < 3; ++c) {
            const float s = b.scale[i * 3 + c];
            FOURDGS_TRY(finite(who, "scale", c, s));
            if (!(s > 0))
                return bad_input(refusal::kValueOutOfRange, who, std::string("scale") + kAxis[c],
                                 "is " + num(s) + ", must be > 0 (a linear scale)");
        }
        double norm = 0;
        for (int c = 0; c < 4; ++c) {
            const float q = b.rotation[i * 4 + c];
            FOURDGS_TRY(finite(who, "rotation", c, q));
            norm += static_cast<double>(q) * q;
        }
        if (!(norm > 0))
            return bad_input(refusal::kZeroQuaternion, who, "rotation",
                             "is the zero quaternion, which names no rotation");
        for (int c = 0; c < 4; ++c) {
            const float v = b.color[i * 4 + c];
            const char* field = c == 3 ? "opacity (color[3])" : "color";
            FOURDGS_TRY(finite(who, field, c == 3 ? -1 : c, v));
            if (!(v >= 0 && v <= 1))
                return bad_input(refusal::kValueOutOfRange, who,
                                 c == 3 ? std::string(field) : std::string("color") + kAxis[c],
                                 "is " + num(v) + ", outside [0, 1]");
        }
        if (!b.motion.empty())
            for (int c = 0; c < 3; ++c) FOURDGS_TRY(finite(who, "motion", c, b.motion[i * 3 + c]));
        FOURDGS_TRY(finite(who, "mu_t", -1, b.mu_t[i]));
        const float sg = b.sigma_t[i];
        if (std::isnan(sg) || sg == -std::numeric_limits<float>::infinity())
            return bad_input(refusal::kNonFiniteInput, who, "sigma_t",
                             "is " + num(sg) + "; must be finite and > 0, or +inf (never fades)");
        if (!(sg > 0))
            return bad_input(refusal::kValueOutOfRange, who, "sigma_t",
                             "is " + num(sg) + ", must be > 0 (or +inf: never fades)");
        if (need_windows) FOURDGS_TRY(check_window(b.win_lo[i], b.win_hi[i], duration, who, true));
        for (std::size_t t = 0; t < per; ++t) {
            const float v = b.sh[i * per + t];
            if (!std::isfinite(v))
                return bad_input(refusal::kNonFiniteInput, who, "sh[" + std::to_string(t) + "]",
                                 "is " + num(v) + ", must be finite");
        }
    }
    return ok_status();
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
            return bad_option("a private record's opcode is 0x" +
                              std::to_string(p.opcode) +
                              " (decimal); the private range is 0x80..0xFF (§4.3)");
    return ok_status();
}

// ---- the grid, the limits and the bounds ----------------------------------------------------

Result<QuantBounds> resolve_bounds(const WriterOptions& opt, double extent) {
    QuantBounds q = opt.bounds ? *opt.bounds : preset_bounds(opt.preset, extent);
    if (q.motion == 0) q.motion = 2 * q.pos;
    const std::pair<const char*, double> all[] = {
        {"pos", q.pos},       {"scale_rel", q.scale_rel}, {"rot", q.rot},   {"rgb", q.rgb},
        {"alpha", q.alpha},   {"motion", q.motion},       {"time", q.time}, {"sigma_rel", q.sigma_rel}};
    for (const auto& [key, v] : all)
        if (!std::isfinite(v) || !(v > 0))
            return bad_option(std::string("bound '") + key + "' is " + num(v) +
                              ", must be finite and > 0");
    if (q.rot > 0.05)
        return bad_option("bound 'rot' is " + num(q.rot) +
                          "; the smallest-three reconstruction (§6.4) needs it <= 0.05");
    if (q.rgb > 0.5 || q.alpha > 0.5)
        return bad_option("bounds 'rgb' and 'alpha' must be <= 0.5 (colour lives in [0, 1])");
    return q;
}

Status resolve_options(const WriterOptions& opt, int sh_degree, Context& ctx) {
    ctx.opt = opt;
    ctx.sh_degree = sh_degree;
    if (!codec_implemented(opt.codec))
        return make_error(ErrorKind::unsupported, refusal::kUnknownStreamCodec,
                          "stream codec byte " + std::to_string(opt.codec) + " (" +
                              codec_name(opt.codec) + ") is not implemented");
    {
        std::vector<std::uint8_t> probe;  // refuses a bad level before anything is written
        FOURDGS_TRY(compress(opt.codec, opt.level, Bytes{}, probe));
    }
    if (!opt.chunk_compression.empty()) {
        FOURDGS_ASSIGN(ctx.chunk_codec, chunk_compression_codec(opt.chunk_compression, kNoOffset));
        ctx.chunk_compressed = true;
        std::vector<std::uint8_t> probe;
        FOURDGS_TRY(compress(ctx.chunk_codec, opt.chunk_compression_level, Bytes{}, probe));
    }
    if (opt.max_chunk_gaussians == 0 || opt.max_chunk_gaussians > (1u << 26))
        return bad_option("max_chunk_gaussians is " + std::to_string(opt.max_chunk_gaussians) +
                          ", must be in 1..67108864");
    if (!opt.sh_depths.empty()) {
        if (static_cast<int>(opt.sh_depths.size()) != sh_degree)
            return bad_option("sh_depths has " + std::to_string(opt.sh_depths.size()) +
                              " entries; the scene's SH degree " + std::to_string(sh_degree) +
                              " needs one per band");
        for (std::size_t b = 0; b < opt.sh_depths.size(); ++b) {
            if (opt.sh_depths[b] < 3 || opt.sh_depths[b] > 8)
                return bad_option("sh_depths band " + std::to_string(b + 1) + " is " +
                                  std::to_string(opt.sh_depths[b]) + "; depths are 3..8 (§6.5)");
            ctx.depths[b] = opt.sh_depths[b];
        }
        ctx.declare_depths = sh_degree > 0;
    } else if (opt.sh_ladder != ShLadder::none) {
        ctx.depths = ladder_depths(opt.sh_ladder);
        ctx.declare_depths = sh_degree > 0;
    }
    for (int b = sh_degree; b < 3; ++b) ctx.depths[b] = 8;
    return ok_status();
}

// The grid for an aabb, and the analytic verification limits that go with it.
Status make_grid(Context& ctx, const std::array<double, 6>& aabb, double cutoff, double duration,
                 Quantization& q) {
    double extent = 0, reach = 0;
    for (int c = 0; c < 3; ++c) {
        extent = std::max(extent, aabb[3 + c] - aabb[c]);
        reach = std::max({reach, std::fabs(aabb[c]), std::fabs(aabb[3 + c])});
    }
    FOURDGS_ASSIGN(QuantBounds qb, resolve_bounds(ctx.opt, extent));
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
    g.cutoff = cutoff;
    g.k = Grid::k_for_cutoff(cutoff);

    Limits& L = ctx.lim;
    const double near_one = 1 + 0x1p-20;
    L.pos = qb.pos * near_one + kF32 * (reach + g.step_pos);
    L.scale = qb.scale_rel * near_one + 2 * kF32;
    L.sigma = qb.sigma_rel * near_one + 2 * kF32;
    L.rgb = qb.rgb * near_one + kF32;
    L.alpha = qb.alpha * near_one + kF32;
    // §6.4: a stored component is off by at most e; the recovered one by at most
    // |Δ Σk²| / (q_m + q_m') <= (3e + 3e²) / (1/2 + q_m'min), since q_m >= 1/2 and Σ|k| <= 3/2.
    const double e = qb.rot;
    const double s = std::sqrt(3.0) / 2 + std::sqrt(3.0) * e;
    const double qm_min = std::sqrt(std::max(0.0, 1 - s * s));
    L.rot_kept = e * near_one + 2 * kF32;
    L.rot = std::max(L.rot_kept, (3 * e + 3 * e * e) / (0.5 + qm_min) * near_one + 2 * kF32);
    (void)duration;

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
    q.step_sh = static_cast<std::uint8_t>(1 << (8 - coarsest));  // M103: the coarsest pitch
    q.sh_depths.clear();
    if (ctx.declare_depths)
        for (int b = 0; b < ctx.sh_degree; ++b) q.sh_depths.push_back(ctx.depths[b]);
    return ok_status();
}

// §5.3 bounds, keys in the spec's order; never object_id (M018). SH bounds follow the §6.5 rule.
StringMap make_bounds(const Context& ctx, const Maxima& m) {
    StringMap out = {{"pos", bound_string(m.pos)},       {"scale_rel", bound_string(m.scale)},
                     {"rot", bound_string(m.rot)},       {"rgb", bound_string(m.rgb)},
                     {"alpha", bound_string(m.alpha)},   {"motion", bound_string(m.motion)},
                     {"time", bound_string(m.time)},     {"sigma_rel", bound_string(m.sigma)}};
    int coarsest = 8;
    if (ctx.declare_depths)
        for (int b = 0; b < ctx.sh_degree; ++b) coarsest = std::min<int>(coarsest, ctx.depths[b]);
    out.emplace_back("sh", std::to_string(sh_depth_bound(coarsest) * (coarsest < 8)));
    if (ctx.declare_depths)
        for (int b = 1; b <= ctx.sh_degree; ++b) {
            const int d = ctx.depths[b - 1];
            out.emplace_back("sh_band" + std::to_string(b),
                             std::to_string(d < 8 ? sh_depth_bound(d) : 0));
        }
    return out;
}

// The streaming declaration: what the grid guarantees before any gaussian is seen.
Maxima analytic_maxima(const Context& ctx, const Grid& g, double duration) {
    Maxima m;
    m.pos = ctx.lim.pos;
    m.scale = ctx.lim.scale;
    m.rot = ctx.lim.rot;
    m.rgb = ctx.lim.rgb;
    m.alpha = ctx.lim.alpha;
    m.sigma = ctx.lim.sigma;
    // The coarsest §6.3 velocity class (-4) and the class-0 birth grid bound every gaussian.
    m.motion = std::ldexp(g.step_motion, -kVelocityClassMin) * 0.5 * (1 + 0x1p-10);
    m.time = g.step_time * 0.5 * (1 + 0x1p-10) + kF32 * 4 * std::max(duration, 1.0);
    return m;
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

    Status front(const Header& h, const Quantization& q, const WindowTable& t) {
        ByteWriter w;
        w.raw(Bytes(kMagic));
        write(w, h);
        write(w, q);
        write(w, t);
        return put(w);
    }

    Status chunk(EncodedChunk& c) {
        ChunkIndex e;
        e.t0 = c.t0;
        e.t1 = c.t1;
        e.chunk_offset = pos_;
        e.chunk_length = c.chunk_length;
        e.gaussian_count = c.count;
        std::uint64_t at = pos_ + c.chunk_length;
        for (int b = 1; b <= c.bands; ++b) {
            e.bands.push_back({static_cast<std::uint8_t>(b), at, c.band_length[b - 1]});
            at += c.band_length[b - 1];
        }
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
    std::size_t chunks() const { return index_.size(); }

private:
    ByteSink* sink_;
    std::uint64_t pos_ = 0;
    std::vector<ChunkIndex> index_;
    bool in_summary_ = false;
    std::uint32_t crc_ = 0;
};

Header make_header(const SceneHeader& sh, const Context& ctx, const content::Extras& extras,
                   std::uint64_t count, const std::array<double, 6>& aabb) {
    Header h;
    h.profile = sh.profile;
    h.library = sh.library.empty() ? std::string("fourdgs ") + kVersionString : sh.library;
    h.duration_sec = sh.duration_sec;
    h.gaussian_count = count;
    h.cutoff = sh.cutoff;
    h.temporal_model = std::string(kModelGaussianBirth);
    h.aabb = aabb;
    h.sh_degree = static_cast<std::uint8_t>(sh.sh_degree);
    h.flags = ctx.chunk_compressed && count > 0 ? kHeaderFlagCompressed : 0;
    h.flags |= extras.header_flags();  // bit 0 exactly when there is audio (§7)
    h.attributes = sh.attributes;
    return h;
}

// The content records ahead of the chunks but the extras (content_records.hpp): metadata, the
// registry's `application` entry when lz4 or private records owe it, attachments, private
// records.
Status write_content(Assembler& as, const SceneHeader& sh, const Context& ctx,
                     const std::string& library, bool& application_written) {
    ByteWriter w;
    const bool owed = ctx.opt.codec == codec::lz4 || !sh.private_records.empty();
    application_written = content::write_content_records(
        w, sh, {}, owed, ctx.opt.application.empty() ? library : ctx.opt.application);
    return as.put(w);
}

// The extras, last before the first chunk (nothing at all when there are none).
Status put_extras(Assembler& as, const content::Extras& extras) {
    if (extras.records.empty()) return ok_status();
    ByteWriter w;
    content::write_extras(w, extras);
    return as.put(w);
}

void init_scene(Context& ctx, const SceneHeader& sh, const std::vector<WindowTable::Window>& win) {
    ctx.scene.header.sh_degree = static_cast<std::uint8_t>(sh.sh_degree);
    ctx.scene.header.cutoff = sh.cutoff;
    ctx.scene.header.duration_sec = sh.duration_sec;
    ctx.scene.windows = win;
    if (ctx.scene.windows.empty()) ctx.scene.windows.push_back({0, 0});  // §5.4
}

// Splits [0, count) into ceil(count / max) near-equal runs; calls fn(first, size).
template <class F>
void split_runs(std::size_t count, std::uint32_t max_chunk, F&& fn) {
    if (count == 0) return;
    const std::size_t parts = (count + max_chunk - 1) / max_chunk;
    for (std::size_t p = 0; p < parts; ++p) {
        const std::size_t first = count * p / parts, last = count * (p + 1) / parts;
        fn(first, last - first);
    }
}

}  // namespace

// ---- public helpers -------------------------------------------------------------------------

std::string bound_string(double value) { return detail::fmt(value == 0 ? 0.0 : value); }

std::optional<Preset> parse_preset(std::string_view name) {
    if (name == "fine") return Preset::fine;
    if (name == "default") return Preset::default_;
    if (name == "coarse") return Preset::coarse;
    return std::nullopt;
}

std::string_view to_string(Preset preset) {
    switch (preset) {
        case Preset::fine: return "fine";
        case Preset::default_: return "default";
        case Preset::coarse: return "coarse";
    }
    return "unknown";
}

QuantBounds preset_bounds(Preset preset, double extent) {
    if (!std::isfinite(extent) || !(extent > 0)) extent = 1;
    QuantBounds q;
    switch (preset) {
        case Preset::fine:
            q = {std::ldexp(extent, -16), 0.005, 0.0005, 1.0 / 510, 1.0 / 510, 0, 0.0005, 0.005};
            break;
        case Preset::default_:
            q = {std::ldexp(extent, -14), 0.02, 0.002, 1.0 / 255, 1.0 / 255, 0, 0.002, 0.02};
            break;
        case Preset::coarse:
            q = {std::ldexp(extent, -12), 0.06, 0.006, 3.0 / 255, 3.0 / 255, 0, 0.008, 0.06};
            break;
    }
    q.motion = 2 * q.pos;
    return q;
}

std::optional<ShLadder> parse_sh_ladder(std::string_view name) {
    if (name == "none") return ShLadder::none;
    if (name == "flat") return ShLadder::flat;
    if (name == "balanced") return ShLadder::balanced;
    if (name == "aggressive") return ShLadder::aggressive;
    return std::nullopt;
}

std::array<std::uint8_t, 3> ladder_depths(ShLadder ladder) {
    switch (ladder) {
        case ShLadder::none:
        case ShLadder::flat: return {8, 8, 8};
        case ShLadder::balanced: return {8, 6, 5};
        case ShLadder::aggressive: return {6, 4, 3};
    }
    return {8, 8, 8};
}

// ---- one shot -------------------------------------------------------------------------------

Status write_scene(const SceneInput& scene, const WriterOptions& options, ByteSink& sink,
                   WriteReport* report) {
    const SceneHeader& sh = scene.header;
    const GaussianBatch& b = scene.gaussians;
    FOURDGS_TRY(validate_header(sh));
    FOURDGS_ASSIGN(const content::Extras extras, content::encode_extras(sh));
    Context ctx;
    FOURDGS_TRY(resolve_options(options, sh.sh_degree, ctx));
    FOURDGS_TRY(validate_batch(b, sh.sh_degree, sh.duration_sec, true, 0));
    const std::size_t n = b.count;
    if (n > std::numeric_limits<std::uint32_t>::max())
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          std::to_string(n) + " gaussians exceed this writer's 2^32 - 1");

    // The Window Table: distinct windows sorted by (lo, hi); gaussians grouped by window.
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
        if (b.win_lo[x] != b.win_lo[y]) return b.win_lo[x] < b.win_lo[y];
        if (b.win_hi[x] != b.win_hi[y]) return b.win_hi[x] < b.win_hi[y];
        return x < y;
    });
    std::vector<WindowTable::Window> windows;
    std::vector<std::size_t> window_first;  // first position in `order` of each window
    for (std::size_t p = 0; p < n; ++p) {
        const std::uint32_t i = order[p];
        if (windows.empty() || windows.back().lo != b.win_lo[i] || windows.back().hi != b.win_hi[i]) {
            windows.push_back({b.win_lo[i], b.win_hi[i]});
            window_first.push_back(p);
        }
    }
    window_first.push_back(n);

    std::array<double, 6> aabb{};
    if (n > 0) {
        for (int c = 0; c < 3; ++c) aabb[c] = aabb[3 + c] = b.position[c];
        for (std::size_t i = 1; i < n; ++i)
            for (int c = 0; c < 3; ++c) {
                const double v = b.position[i * 3 + c];
                aabb[c] = std::min(aabb[c], v);
                aabb[3 + c] = std::max(aabb[3 + c], v);
            }
    }
    init_scene(ctx, sh, windows);
    Quantization quant;
    FOURDGS_TRY(make_grid(ctx, aabb, sh.cutoff, sh.duration_sec, quant));

    std::vector<ChunkJob> jobs;
    for (std::size_t wi = 0; wi < windows.size(); ++wi) {
        const std::size_t first = window_first[wi], count = window_first[wi + 1] - first;
        split_runs(count, options.max_chunk_gaussians, [&](std::size_t f, std::size_t len) {
            ChunkJob j;
            j.batch = &b;
            j.indices = std::span<const std::uint32_t>(order.data() + first + f, len);
            j.window = static_cast<std::uint32_t>(wi);
            j.t0 = windows[wi].lo;
            j.t1 = windows[wi].hi;
            jobs.push_back(j);
        });
    }
    std::vector<EncodedChunk> encoded;
    std::vector<Work> pool;
    FOURDGS_TRY(encode_jobs(ctx, jobs, encoded, pool));
    pool.clear();
    Maxima measured;
    for (const EncodedChunk& c : encoded) measured.merge(c.maxima);
    quant.bounds = make_bounds(ctx, measured);

    const Header header = make_header(sh, ctx, extras, n, aabb);
    Assembler as(sink);
    FOURDGS_TRY(as.front(header, quant, WindowTable{windows}));
    bool app = false;
    FOURDGS_TRY(write_content(as, sh, ctx, header.library, app));
    FOURDGS_TRY(put_extras(as, extras));
    for (EncodedChunk& c : encoded) FOURDGS_TRY(as.chunk(c));
    const Statistics stats{n, static_cast<std::uint32_t>(as.chunks()), sh.duration_sec, aabb};
    FOURDGS_TRY(as.finish(options, stats));
    if (report) {
        report->quantization = quant;
        report->windows = windows;
        report->gaussian_count = n;
        report->aabb = aabb;
        report->chunk_count = static_cast<std::uint32_t>(as.chunks());
        report->bytes_written = as.position();
    }
    return ok_status();
}

Result<std::vector<std::uint8_t>> write_scene(const SceneInput& scene,
                                              const WriterOptions& options, WriteReport* report) {
    MemorySink sink;
    FOURDGS_TRY(write_scene(scene, options, sink, report));
    return sink.take();
}

// ---- streaming ------------------------------------------------------------------------------

struct StreamingWriter::Impl {
    explicit Impl(ByteSink& s) : as(s) {}
    Assembler as;
    SceneHeader header;  // the scalars only: create() wrote the content records
    // Checked by create(), written just before the first chunk (or the summary), so that
    // add_metadata / add_attachment / add_private_record still precede them.
    content::Extras extras;
    bool extras_written = false;
    StreamDeclaration decl;
    Context ctx;
    WriteReport report;
    std::string library;
    bool chunks_started = false, finished = false, application_written = false;
    std::uint64_t added = 0;
    std::array<double, 6> measured{};
    std::vector<std::pair<WindowTable::Window, std::uint32_t>> window_lookup;  // sorted
    std::vector<std::uint32_t> iota, windows_of;
    std::vector<Work> pool;
    std::vector<EncodedChunk> encoded;

    Status not_started(const char* what) const {
        if (finished)
            return make_error(ErrorKind::invalid_argument, refusal::kWriterFinished,
                              std::string(what) + " after finish()");
        if (chunks_started)
            return make_error(ErrorKind::invalid_argument, refusal::kChunksStarted,
                              std::string(what) +
                                  " must come before the first chunk: content records precede "
                                  "the chunks (§4)");
        return ok_status();
    }

    Status begin_chunks() {
        if (finished)
            return make_error(ErrorKind::invalid_argument, refusal::kWriterFinished,
                              "gaussians added after finish()");
        chunks_started = true;
        return flush_extras();
    }

    Status flush_extras() {
        if (extras_written) return ok_status();
        extras_written = true;
        FOURDGS_TRY(put_extras(as, extras));
        extras = {};  // the payload copies are no longer needed
        return ok_status();
    }

    // Positions inside the declared aabb; the measured aabb grows.
    Status track(const GaussianBatch& b) {
        if (added + b.count > decl.gaussian_count)
            return make_error(ErrorKind::invalid_argument, refusal::kGaussianCountMismatch,
                              std::to_string(added + b.count) +
                                  " gaussians would exceed the declared gaussian_count " +
                                  std::to_string(decl.gaussian_count));
        for (std::size_t i = 0; i < b.count; ++i)
            for (int c = 0; c < 3; ++c) {
                const double v = b.position[i * 3 + c];
                if (v < decl.aabb[c] || v > decl.aabb[3 + c])
                    return bad_input(refusal::kOutsideDeclaredAabb, added + i,
                                     "position[" + std::to_string(c) + "]",
                                     "is " + num(v) + ", outside the declared aabb [" +
                                         num(decl.aabb[c]) + ", " + num(decl.aabb[3 + c]) + "]");
                if (added + i == 0) {
                    measured[c] = measured[3 + c] = v;
                } else {
                    measured[c] = std::min(measured[c], v);
                    measured[3 + c] = std::max(measured[3 + c], v);
                }
            }
        return ok_status();
    }

    Status run(std::span<const ChunkJob> jobs) {
        // Rounds of at most one job per thread keep the memory bound at one chunk per thread.
        unsigned threads = ctx.opt.threads ? ctx.opt.threads : std::thread::hardware_concurrency();
        const std::size_t round = std::max(1u, threads);
        for (std::size_t at = 0; at < jobs.size(); at += round) {
            const auto part = jobs.subspan(at, std::min(round, jobs.size() - at));
            FOURDGS_TRY(encode_jobs(ctx, part, encoded, pool));
            for (EncodedChunk& c : encoded) FOURDGS_TRY(as.chunk(c));
        }
        return ok_status();
    }
};

StreamingWriter::StreamingWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StreamingWriter::StreamingWriter(StreamingWriter&&) noexcept = default;
StreamingWriter& StreamingWriter::operator=(StreamingWriter&&) noexcept = default;
StreamingWriter::~StreamingWriter() = default;

Result<StreamingWriter> StreamingWriter::create(ByteSink& sink, const SceneHeader& header,
                                                const StreamDeclaration& declaration,
                                                const WriterOptions& options) {
    FOURDGS_TRY(validate_header(header));
    FOURDGS_ASSIGN(content::Extras extras, content::encode_extras(header));
    auto impl = std::make_unique<Impl>(sink);
    Context& ctx = impl->ctx;
    FOURDGS_TRY(resolve_options(options, header.sh_degree, ctx));
    for (std::size_t i = 0; i < declaration.windows.size(); ++i)
        FOURDGS_TRY(check_window(declaration.windows[i].lo, declaration.windows[i].hi,
                                 header.duration_sec, 0, false, i));
    for (int c = 0; c < 3; ++c)
        if (!std::isfinite(declaration.aabb[c]) || !std::isfinite(declaration.aabb[3 + c]) ||
            declaration.aabb[c] > declaration.aabb[3 + c])
            return make_error(ErrorKind::invalid_argument, refusal::kInvalidDeclaration,
                              "the declared aabb's axis " + std::to_string(c) + " is [" +
                                  num(declaration.aabb[c]) + ", " + num(declaration.aabb[3 + c]) +
                                  "]; it must be finite with min <= max");
    if (declaration.gaussian_count > 0 && declaration.windows.empty())
        return make_error(ErrorKind::invalid_argument, refusal::kInvalidDeclaration,
                          "gaussians are declared but the Window Table is empty");
    impl->decl = declaration;
    init_scene(ctx, header, declaration.windows);
    Quantization quant;
    FOURDGS_TRY(make_grid(ctx, declaration.aabb, header.cutoff, header.duration_sec, quant));
    // Declared up front: the grid's analytic worst case, which verification then enforces.
    const Maxima declared = analytic_maxima(ctx, ctx.scene.grid, header.duration_sec);
    ctx.lim.motion_declared = declared.motion;
    ctx.lim.time_declared = declared.time;
    quant.bounds = make_bounds(ctx, declared);

    const Header h =
        make_header(header, ctx, extras, declaration.gaussian_count, declaration.aabb);
    impl->library = h.library;
    FOURDGS_TRY(impl->as.front(h, quant, WindowTable{declaration.windows}));
    FOURDGS_TRY(write_content(impl->as, header, ctx, h.library, impl->application_written));
    impl->extras = std::move(extras);
    // What the writer keeps of the header: the scalars. The content records are written, and
    // their payloads were only borrowed for this call.
    impl->header.duration_sec = header.duration_sec;
    impl->header.cutoff = header.cutoff;
    impl->header.sh_degree = header.sh_degree;
    for (std::uint32_t i = 0; i < declaration.windows.size(); ++i)
        impl->window_lookup.push_back({declaration.windows[i], i});
    std::stable_sort(impl->window_lookup.begin(), impl->window_lookup.end(),
                     [](const auto& x, const auto& y) {
                         return x.first.lo != y.first.lo ? x.first.lo < y.first.lo
                                                         : x.first.hi < y.first.hi;
                     });
    impl->report.quantization = quant;
    impl->report.windows = declaration.windows;
    impl->report.gaussian_count = declaration.gaussian_count;
    impl->report.aabb = declaration.aabb;
    return StreamingWriter(std::move(impl));
}

Status StreamingWriter::add_metadata(const Metadata& metadata) {
    FOURDGS_TRY(impl_->not_started("add_metadata"));
    ByteWriter w;
    write(w, metadata);
    return impl_->as.put(w);
}

Status StreamingWriter::add_attachment(const AttachmentInput& a) {
    FOURDGS_TRY(impl_->not_started("add_attachment"));
    ByteWriter w;
    write(w, Attachment{a.name, a.media_type, a.data, 0});
    return impl_->as.put(w);
}

Status StreamingWriter::add_private_record(const PrivateRecordInput& p) {
    FOURDGS_TRY(impl_->not_started("add_private_record"));
    if (p.opcode < 0x80)
        return bad_option("a private record's opcode must be 0x80..0xFF (§4.3), not " +
                          std::to_string(p.opcode));
    ByteWriter w;
    if (!impl_->application_written) {
        const std::string& app =
            impl_->ctx.opt.application.empty() ? impl_->library : impl_->ctx.opt.application;
        write(w, Metadata{"application", {{"application", app}}});
        impl_->application_written = true;
    }
    write_record(w, p.opcode, p.content);
    return impl_->as.put(w);
}

Status StreamingWriter::add_window(std::uint32_t window_index, const GaussianBatch& batch) {
    Impl& m = *impl_;
    FOURDGS_TRY(m.begin_chunks());
    if (window_index >= m.decl.windows.size())
        return make_error(ErrorKind::invalid_argument, refusal::kWindowIndexOutOfRange,
                          "window " + std::to_string(window_index) + " is not in the declared " +
                              std::to_string(m.decl.windows.size()) + "-window table");
    if (batch.count > std::numeric_limits<std::uint32_t>::max())
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          "one add_window batch of " + std::to_string(batch.count) +
                              " gaussians exceeds 2^32 - 1; split it");
    FOURDGS_TRY(validate_batch(batch, m.header.sh_degree, m.header.duration_sec, false, m.added));
    FOURDGS_TRY(m.track(batch));
    if (m.iota.size() < batch.count) {
        m.iota.resize(batch.count);
        std::iota(m.iota.begin(), m.iota.end(), 0u);
    }
    std::vector<ChunkJob> jobs;
    split_runs(batch.count, m.ctx.opt.max_chunk_gaussians, [&](std::size_t f, std::size_t len) {
        ChunkJob j;
        j.batch = &batch;
        j.indices = std::span<const std::uint32_t>(m.iota.data() + f, len);
        j.window = window_index;
        j.name_base = m.added;
        j.t0 = m.decl.windows[window_index].lo;
        j.t1 = m.decl.windows[window_index].hi;
        jobs.push_back(j);
    });
    FOURDGS_TRY(m.run(jobs));
    m.added += batch.count;
    return ok_status();
}

Status StreamingWriter::add_chunk(const GaussianBatch& batch) {
    Impl& m = *impl_;
    FOURDGS_TRY(m.begin_chunks());
    if (batch.count > m.ctx.opt.max_chunk_gaussians)
        return make_error(ErrorKind::invalid_argument, refusal::kChunkTooLarge,
                          std::to_string(batch.count) + " gaussians exceed max_chunk_gaussians " +
                              std::to_string(m.ctx.opt.max_chunk_gaussians));
    FOURDGS_TRY(validate_batch(batch, m.header.sh_degree, m.header.duration_sec, true, m.added));
    if (batch.count == 0) return ok_status();
    m.windows_of.resize(batch.count);
    double t0 = kInf, t1 = -kInf;
    for (std::size_t i = 0; i < batch.count; ++i) {
        const WindowTable::Window key{batch.win_lo[i], batch.win_hi[i]};
        auto it = std::lower_bound(m.window_lookup.begin(), m.window_lookup.end(), key,
                                   [](const auto& e, const WindowTable::Window& k) {
                                       return e.first.lo != k.lo ? e.first.lo < k.lo
                                                                 : e.first.hi < k.hi;
                                   });
        if (it == m.window_lookup.end() || !(it->first == key))
            return bad_input(refusal::kUndeclaredWindow, m.added + i, "window",
                             "[" + num(key.lo) + ", " + num(key.hi) +
                                 ") is not in the declared Window Table");
        m.windows_of[i] = it->second;
        t0 = std::min(t0, key.lo);
        t1 = std::max(t1, key.hi);
    }
    FOURDGS_TRY(m.track(batch));
    if (m.iota.size() < batch.count) {
        m.iota.resize(batch.count);
        std::iota(m.iota.begin(), m.iota.end(), 0u);
    }
    ChunkJob j;
    j.batch = &batch;
    j.indices = std::span<const std::uint32_t>(m.iota.data(), batch.count);
    j.windows = std::span<const std::uint32_t>(m.windows_of.data(), batch.count);
    j.name_base = m.added;
    j.t0 = t0;
    j.t1 = t1;
    FOURDGS_TRY(m.run(std::span<const ChunkJob>(&j, 1)));
    m.added += batch.count;
    return ok_status();
}

Status StreamingWriter::finish() {
    Impl& m = *impl_;
    if (m.finished)
        return make_error(ErrorKind::invalid_argument, refusal::kWriterFinished, "finish() called twice");
    m.finished = true;
    if (m.added != m.decl.gaussian_count)
        return make_error(ErrorKind::invalid_argument, refusal::kGaussianCountMismatch,
                          std::to_string(m.added) + " gaussians were added but " +
                              std::to_string(m.decl.gaussian_count) + " were declared");
    if (m.added > 0 && m.measured != m.decl.aabb) {
        std::string got, want;
        for (int c = 0; c < 6; ++c) {
            got += (c ? ", " : "") + num(m.measured[c]);
            want += (c ? ", " : "") + num(m.decl.aabb[c]);
        }
        return make_error(ErrorKind::invalid_argument, refusal::kAabbMismatch,
                          "the positions span [" + got + "] but the Header declares [" + want +
                              "] (§5.1: the aabb is over all rest positions)");
    }
    FOURDGS_TRY(m.flush_extras());  // a file without chunks still carries them
    const Statistics stats{m.added, static_cast<std::uint32_t>(m.as.chunks()),
                           m.header.duration_sec, m.decl.aabb};
    FOURDGS_TRY(m.as.finish(m.ctx.opt, stats));
    m.report.chunk_count = static_cast<std::uint32_t>(m.as.chunks());
    m.report.bytes_written = m.as.position();
    return ok_status();
}

const WriteReport& StreamingWriter::report() const { return impl_->report; }

}  // namespace fourdgs
