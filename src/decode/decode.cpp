// Chunk decode (fourdgs/decode.hpp): records block → streams → bins → §3 state.
#include "fourdgs/decode.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <string>

#include "decode/compact_code.hpp"
#include "format/record_keying.hpp"
#include "platform/fresh_memory.hpp"
#include "platform/target_clones.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// The loops of §6 that convert bins to floats are compiled twice where the toolchain can pick a
// version at load time: for AVX2 (four f64 lanes instead of SSE2's two) and for the baseline.
// AVX2 alone, not x86-64-v3: that level brings FMA, and a fused o + bin * step rounds once
// where §6's expression rounds twice, so the floats would differ; without FMA both versions run
// the same IEEE operations in the same order and give the same bits (tests/test_decode_exact.cpp
// checks them against the per-gaussian formulas). The WebAssembly core has neither.
#define FOURDGS_AVX2_CLONES FOURDGS_TARGET_CLONES("avx2")

namespace fourdgs {
namespace {

Error malformed(std::string_view refusal, std::string message, std::uint64_t offset) {
    return make_error(ErrorKind::malformed, refusal, std::move(message), offset);
}

// Exact per-bin tables for the transcendental steps of §6: each entry is the very expression the
// per-gaussian code evaluates for that bin, so the output is bit-identical while a chunk pays one
// exp (and log2) per distinct bin instead of one per gaussian. A table is built only when the
// chunk's bins span no more values than it has gaussians; otherwise each value is computed.
struct BinSpan {
    std::int32_t lo = 0, hi = -1;
    std::size_t size() const { return static_cast<std::size_t>(std::int64_t{hi} - lo + 1); }
};

BinSpan span_of(const std::vector<std::int32_t>& bins, std::size_t n) {
    if (n == 0) return {};
    std::int32_t lo = bins[0], hi = bins[0];
    for (std::size_t k = 1; k < n; ++k) {
        lo = std::min(lo, bins[k]);
        hi = std::max(hi, bins[k]);
    }
    return {lo, hi};
}

// §6.3 for a sigma bin of a gaussian that fades: sigma_t and both per-gaussian steps.
struct SigmaSteps {
    float sigma;
    double vstep, tstep;
};

SigmaSteps sigma_steps(const Grid& g, std::int32_t bin) {
    const double sigma = sigma_value(g, bin);
    // A fading gaussian's velocity class does not read its window (only never-fades ones do).
    return {static_cast<float>(sigma),
            std::ldexp(g.step_motion, -velocity_class_for_sigma(g, sigma, false, 0, 0)),
            std::ldexp(g.step_time, birth_class_for_sigma(g, sigma, false))};
}

struct DequantizeTables {
    std::vector<float> scale;  // exp(bin * step_scale_log) from scale_lo
    std::vector<SigmaSteps> sigma;  // from sigma_lo
    std::vector<double> never_vstep;  // a never-fading gaussian's velocity step, per window
    std::int32_t scale_lo = 0, sigma_lo = 0;
};

// §6.4 for n gaussians: the operations of rotation_from_bins (quantize.hpp) in the same order,
// so every quaternion is bit-identical, arranged so the square roots and divisions run two
// gaussians at a time (SSE2 where the target has it) and the omitted component is placed by
// table, not by branch. The omitted index is 0..3 (check_rows).
struct KeptAndOmitted {
    double v[4];  // the three kept components, then the omitted one, all renormalized
};

inline KeptAndOmitted rotation_parts(const std::int32_t* b, double step) {
    KeptAndOmitted r;
    double sum = 0;
    for (int k = 0; k < 3; ++k) {
        r.v[k] = std::clamp(static_cast<double>(b[k]) * step, -1.0, 1.0);
        sum += r.v[k] * r.v[k];
    }
    const double w = std::sqrt(std::max(0.0, 1.0 - sum));
    const double norm = std::sqrt(sum + w * w);
    const double by = norm > 0 ? norm : 1.0;  // dividing by 1 is exact: no branch needed
    for (int k = 0; k < 3; ++k) r.v[k] /= by;
    r.v[3] = w / by;
    return r;
}

void rotations_from_bins(const Grid& g, const std::int32_t* index, const std::int32_t* bins,
                         std::size_t n, float* out) {
    // Where each of (kept 0, kept 1, kept 2, omitted) goes, for each omitted component.
    static constexpr std::uint8_t kPlace[4][4] = {{1, 2, 3, 0}, {0, 2, 3, 1}, {0, 1, 3, 2},
                                                  {0, 1, 2, 3}};
    const double step = g.step_rot;
    auto place = [&](std::size_t i, const double (&v)[4]) {
        const std::uint8_t* to = kPlace[index[i] & 3];
        for (int k = 0; k < 4; ++k) out[i * 4 + to[k]] = static_cast<float>(v[k]);
    };
    std::size_t i = 0;
#if defined(__SSE2__)
    // std::max(0.0, x) is _mm_max_pd(x, 0) (x > 0 ? x : 0, so -0 becomes +0 as it does there);
    // std::clamp(v, -1, 1) is min(max(v, -1), 1) for the finite products here.
    const __m128d vstep = _mm_set1_pd(step), lo = _mm_set1_pd(-1.0), one = _mm_set1_pd(1.0),
                  zero = _mm_setzero_pd();
    for (; i + 2 <= n; i += 2) {
        const std::int32_t* b = bins + i * 3;
        __m128d v[4], sum = zero;
        for (int k = 0; k < 3; ++k) {
            const __m128d x = _mm_mul_pd(_mm_set_pd(b[3 + k], b[k]), vstep);
            v[k] = _mm_min_pd(_mm_max_pd(x, lo), one);
            sum = _mm_add_pd(sum, _mm_mul_pd(v[k], v[k]));
        }
        const __m128d w = _mm_sqrt_pd(_mm_max_pd(_mm_sub_pd(one, sum), zero));
        const __m128d norm = _mm_sqrt_pd(_mm_add_pd(sum, _mm_mul_pd(w, w)));
        const __m128d positive = _mm_cmpgt_pd(norm, zero);
        const __m128d by = _mm_or_pd(_mm_and_pd(positive, norm), _mm_andnot_pd(positive, one));
        v[3] = w;
        double lane[4][2];
        for (int k = 0; k < 4; ++k) _mm_storeu_pd(lane[k], _mm_div_pd(v[k], by));
        place(i, {lane[0][0], lane[1][0], lane[2][0], lane[3][0]});
        place(i + 1, {lane[0][1], lane[1][1], lane[2][1], lane[3][1]});
    }
#endif
    for (; i < n; ++i) place(i, rotation_parts(bins + i * 3, step).v);
}

// §6.1 position: the grid's origin plus the bin times the step, per axis.
FOURDGS_AVX2_CLONES
void positions_from_bins(const std::int32_t* __restrict src, std::size_t n, const Grid& g,
                         float* __restrict dst) {
    const double o0 = g.pos_origin[0], o1 = g.pos_origin[1], o2 = g.pos_origin[2];
    const double step = g.step_pos;
    for (std::size_t i = 0; i < n; ++i) {
        dst[i * 3 + 0] = static_cast<float>(o0 + src[i * 3 + 0] * step);
        dst[i * 3 + 1] = static_cast<float>(o1 + src[i * 3 + 1] * step);
        dst[i * 3 + 2] = static_cast<float>(o2 + src[i * 3 + 2] * step);
    }
}

// §6.2 colour: stored (g, r-g, b-g); inverted in the integer domain, then the step; with the
// opacity as the fourth value of each row.
FOURDGS_AVX2_CLONES
void colors_from_bins(const std::int32_t* __restrict src, const std::int32_t* __restrict alpha,
                      std::size_t n, const Grid& g, float* __restrict dst) {
    const double step = g.step_rgb, step_alpha = g.step_alpha;
    auto unit = [](double v) { return static_cast<float>(std::clamp(v, 0.0, 1.0)); };
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t gb = src[i * 3 + 0];
        const std::int64_t rb = src[i * 3 + 1] + gb;
        const std::int64_t bb = src[i * 3 + 2] + gb;
        dst[i * 4 + 0] = unit(static_cast<double>(rb) * step);
        dst[i * 4 + 1] = unit(static_cast<double>(gb) * step);
        dst[i * 4 + 2] = unit(static_cast<double>(bb) * step);
        dst[i * 4 + 3] = unit(alpha[i] * step_alpha);
    }
}

// n bins times one step (§6.3's motion and mu_t where rows share their steps).
FOURDGS_AVX2_CLONES
void scaled_bins(const std::int32_t* __restrict src, std::size_t n, double step,
                 float* __restrict dst) {
    for (std::size_t k = 0; k < n; ++k) dst[k] = static_cast<float>(src[k] * step);
}

// §6.1 scale: exp of the bin times the step, from a table per bin when the chunk's bins span no
// more values than there are (so each exp is computed once), else computed for every value.
void scales_from_bins(const Grid& g, const ChunkBins& bins, std::size_t n, float* __restrict dst,
                      DequantizeTables& tab) {
    const std::int32_t* __restrict src = bins.scale.data();
    const BinSpan s = span_of(bins.scale, n * 3);
    if (s.size() <= n * 3) {
        tab.scale.resize(s.size());
        for (std::size_t j = 0; j < s.size(); ++j)
            tab.scale[j] = static_cast<float>(
                std::exp(static_cast<double>(std::int64_t{s.lo} + std::int64_t(j)) *
                         g.step_scale_log));
        const float* lut = tab.scale.data();
        for (std::size_t k = 0; k < n * 3; ++k) dst[k] = lut[src[k] - s.lo];
    } else {
        for (std::size_t k = 0; k < n * 3; ++k)
            dst[k] = static_cast<float>(std::exp(src[k] * g.step_scale_log));
    }
}

// SH: per gaussian, component-major across bands 1..D (red's, then green's, then blue's).
void sh_from_bins(const ChunkBins& bins, std::size_t n, GaussianBlock& out, std::size_t base) {
    const int sh_degree = out.sh_degree;
    const int per = sh_coeffs_per_component(sh_degree);
    for (int b = 1; b <= std::min(sh_degree, bins.sh_bands); ++b) {
        const int wdt = sh_band_width(b), first = sh_band_first(b);
        const std::vector<std::uint8_t>& band = bins.sh[b - 1];
        for (std::size_t i = 0; i < n; ++i)
            for (int c = 0; c < 3; ++c)
                std::copy_n(&band[(i * 3 + c) * wdt], wdt,
                            &out.sh[(base + i) * 3 * per + c * per + first]);
    }
}

}  // namespace

std::vector<std::int32_t>* ChunkBins::column(std::uint8_t id) {
    switch (id) {
        case attr::position: return &position;
        case attr::scale: return &scale;
        case attr::rotation_index: return &rotation_index;
        case attr::rotation: return &rotation;
        case attr::color: return &color;
        case attr::opacity: return &opacity;
        case attr::motion: return &motion;
        case attr::mu_t: return &mu_t;
        case attr::sigma_t: return &sigma_t;
        case attr::flags: return &flags;
        case attr::window_index: return &window_index;
        case attr::source_group: return &source_group;
        case attr::source_index: return &source_index;
        case attr::gaussian_id: return &gaussian_id;
        case attr::object_id: return &object_id;
        default: return nullptr;
    }
}

Status decode_stream_block(Bytes block, std::uint64_t block_offset, std::uint32_t count,
                           const char* what, const DecodeLimits& limits, ChunkBins& out,
                           std::array<bool, attr::kKnownCount>& seen, StreamScratch& scratch) {
    seen.fill(false);
    // The known streams read so far, for the registry's by_key_in_chunk rule (one per attribute
    // id: a repeat is refused, so the list never holds more than one past every id).
    struct KnownStream {
        std::uint8_t id;
        std::uint64_t offset;
    };
    std::array<KnownStream, attr::kKnownCount + 1> read{};
    std::size_t known = 0;
    Cursor cur(block, block_offset, what);
    while (!cur.at_end()) {
        FOURDGS_ASSIGN(StreamView s, read_stream(cur));
        const std::uint8_t id = s.header.attribute_id;
        if (id >= attr::kKnownCount) continue;  // reserved, relighting, private: skip by length
        const char* name = attr::kNames[id];
        read[known++] = {id, s.offset};
        FOURDGS_TRY(find_in_chunk<op::attribute_stream>(
            std::span<const KnownStream>(read.data(), known), id, &KnownStream::id,
            &KnownStream::offset, [what] { return std::string(what) + " carries"; }));
        seen[id] = true;
        if (!codec_implemented(s.header.codec))
            return unknown_codec_error(s.header.codec, s.offset + 3,
                                       std::string("stream '") + name + "'");
        if (s.header.channels != attr::kChannels[id])
            return malformed(refusal::kStreamChannelCountMismatch,
                             std::string("stream '") + name + "' has " +
                                 std::to_string(s.header.channels) +
                                 " channels; the registry says " +
                                 std::to_string(attr::kChannels[id]),
                             s.offset + 4)
                .about("Attribute Stream.channels", std::to_string(s.header.channels));
        if (s.header.element_count != count)
            return malformed(refusal::kStreamElementCountMismatch,
                             std::string("stream '") + name + "' has element_count " +
                                 std::to_string(s.header.element_count) + " but " + what +
                                 " declares " + std::to_string(count),
                             s.offset + 5)
                .about("Attribute Stream.element_count", std::to_string(s.header.element_count));
        std::vector<std::int32_t>& col = *out.column(id);
        detail::resize_fresh(col, static_cast<std::size_t>(count) * s.header.channels);
        FOURDGS_TRY(decode_stream(s, col, scratch, limits.max_decompressed_bytes));
    }
    out.has_source_group = seen[attr::source_group];
    out.has_source_index = seen[attr::source_index];
    out.has_object_id = seen[attr::object_id];
    out.has_gaussian_id = seen[attr::gaussian_id];
    return ok_status();
}

Status decode_sh_bands(std::span<const ShBandRecord> bands, std::uint32_t count, int sh_degree,
                       int max_degree, const DecodeLimits& limits, ChunkBins& out,
                       StreamScratch& scratch) {
    const int want = std::min(sh_degree, std::max(0, max_degree));
    out.sh_bands = 0;
    std::vector<std::int32_t> values;
    for (int b = 1; b <= want; ++b) {
        // Band b's record; a repeat of a band above `want` is not read, so not refused here.
        FOURDGS_ASSIGN(const ShBandRecord* rec,
                       find_in_chunk<op::sh_band>(bands, static_cast<std::uint64_t>(b),
                                                  &ShBandRecord::band,
                                                  &ShBandRecord::stream_offset,
                                                  [] { return "the chunk is followed by"; }));
        if (!rec)
            return malformed(refusal::kMissingShBand,
                             "the Header declares sh_degree " + std::to_string(sh_degree) +
                                 " but the chunk has no SH Band Stream record for band " +
                                 std::to_string(b),
                             kNoOffset)
                .about("SH Band Stream.band", std::to_string(b));
        Cursor cur(rec->stream, rec->stream_offset, record_name(op::sh_band));
        FOURDGS_ASSIGN(StreamView s, read_stream(cur));
        const int channels = 3 * sh_band_width(b);
        if (s.header.channels != channels)
            return malformed(refusal::kStreamChannelCountMismatch,
                             "SH band " + std::to_string(b) + " stream has " +
                                 std::to_string(s.header.channels) + " channels; band " +
                                 std::to_string(b) + " needs " + std::to_string(channels),
                             s.offset + 4)
                .about("SH Band Stream.channels", std::to_string(s.header.channels));
        if (s.header.element_count != count)
            return malformed(refusal::kStreamElementCountMismatch,
                             "SH band " + std::to_string(b) + " stream has element_count " +
                                 std::to_string(s.header.element_count) + " but the chunk has " +
                                 std::to_string(count),
                             s.offset + 5)
                .about("SH Band Stream.element_count", std::to_string(s.header.element_count));
        detail::resize_fresh(values, static_cast<std::size_t>(count) * channels);
        FOURDGS_TRY(decode_stream(s, values, scratch, limits.max_decompressed_bytes));
        std::vector<std::uint8_t>& dst = out.sh[b - 1];
        detail::resize_fresh(dst, values.size());
        for (std::size_t i = 0; i < values.size(); ++i) {
            if (values[i] < 0 || values[i] > 255)
                return malformed(refusal::kShCoefficientOutOfRange,
                                 "SH band " + std::to_string(b) + " symbol " + std::to_string(i) +
                                     " decodes to " + std::to_string(values[i]) +
                                     ", outside the byte range 0..255",
                                 s.payload_offset())
                    .about("SH Band Stream.payload", std::to_string(values[i]));
            dst[i] = static_cast<std::uint8_t>(values[i]);
        }
        out.sh_bands = b;
    }
    // A reused `out` (a keyframe decoded into a population's storage) holds no band past those
    // decoded: nothing stale reads as a band.
    for (int b = std::max(want, 0) + 1; b <= 3; ++b) out.sh[b - 1].clear();
    return ok_status();
}

Status check_gaussian_limit(std::uint32_t count, const DecodeLimits& limits, std::string_view what,
                            std::uint64_t at) {
    if (count > limits.max_gaussians_per_chunk)
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          std::string(what) + " declares " + std::to_string(count) +
                              " gaussians, more than the configured limit of " +
                              std::to_string(limits.max_gaussians_per_chunk),
                          at);
    return ok_status();
}

Result<Bytes> open_records_block(std::string_view what, std::string_view compression,
                                 std::uint64_t uncompressed_size, Bytes records, std::uint64_t at,
                                 const DecodeLimits& limits, std::vector<std::uint8_t>& scratch) {
    if (compression.empty()) {
        if (uncompressed_size != records.size())
            return malformed(refusal::kDecompressedSizeMismatch,
                             std::string(what) + " stores its records uncompressed but "
                                                 "uncompressed_size is " +
                                 std::to_string(uncompressed_size) + ", the block is " +
                                 std::to_string(records.size()) + " bytes",
                             at)
                .about(std::string(what) + ".uncompressed_size",
                       std::to_string(uncompressed_size));
        return records;
    }
    FOURDGS_ASSIGN(std::uint8_t codec, chunk_compression_codec(compression, at));
    if (uncompressed_size > limits.max_decompressed_bytes)
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          std::string(what) + " uncompressed_size " +
                              std::to_string(uncompressed_size) + " exceeds the configured limit",
                          at);
    FOURDGS_TRY(check_decompressed_size(codec, records, uncompressed_size, at));
    detail::resize_fresh(scratch, static_cast<std::size_t>(uncompressed_size));
    FOURDGS_TRY(decompress(codec, records, scratch, at));
    return Bytes(scratch);
}

Status require_streams(ChunkBins& out, const std::array<bool, attr::kKnownCount>& seen,
                       std::uint32_t count, std::string_view what, std::string_view field,
                       std::uint64_t at) {
    for (std::uint8_t id = 0; id < attr::kRequiredCount; ++id) {
        if (seen[id]) continue;
        if (count == 0) {
            out.column(id)->clear();
            continue;
        }
        return malformed(refusal::kMissingAttributeStream,
                         std::string(what) + " lacks the required '" + attr::kNames[id] +
                             "' stream (id " + std::to_string(id) + ")",
                         at)
            .about(std::string(field), std::to_string(id));
    }
    if (!out.has_source_group) out.source_group.clear();
    if (!out.has_source_index) out.source_index.clear();
    if (!out.has_object_id) out.object_id.clear();
    if (!out.has_gaussian_id) out.gaussian_id.clear();
    return ok_status();
}

Status check_rows(const SceneInfo& scene, const ChunkBins& b, std::uint32_t count,
                  bool rotation, bool window, std::string_view element, std::uint64_t at) {
    const std::size_t windows = scene.windows.size();
    for (std::uint32_t i = 0; i < count; ++i) {
        const std::int32_t ri = rotation ? b.rotation_index[i] : 0;
        if (ri < 0 || ri > 3)
            return malformed(refusal::kInvalidRotationIndex,
                             std::string(element) + " " + std::to_string(i) +
                                 " has rotation_index " + std::to_string(ri) +
                                 "; only 0..3 name a quaternion component",
                             at)
                .about("Attribute Stream.rotation_index", std::to_string(ri));
        const std::int32_t wi = window ? b.window_index[i] : 0;
        if (window && (wi < 0 || static_cast<std::size_t>(wi) >= windows))
            return malformed(refusal::kWindowIndexOutOfRange,
                             std::string(element) + " " + std::to_string(i) +
                                 " has window index " + std::to_string(wi) +
                                 " but the Window Table has " + std::to_string(windows) +
                                 " window(s)",
                             at)
                .about("Attribute Stream.window_index", std::to_string(wi));
    }
    return ok_status();
}

Status decode_chunk_bins(const SceneInfo& scene, const ChunkRecord& chunk,
                         std::span<const ShBandRecord> bands, const ChunkDecodeOptions& options,
                         ChunkBins& out, DecodeScratch& scratch) {
    const std::uint64_t at = chunk.records_offset;
    FOURDGS_TRY(check_gaussian_limit(chunk.count, options.limits, record_name(op::chunk), at));
    out.count = chunk.count;
    // Offsets inside a decompressed block do not exist in the file: streams name the chunk's
    // block offset then.
    FOURDGS_ASSIGN(Bytes block, open_records_block(record_name(op::chunk), chunk.compression,
                                                   chunk.uncompressed_size, chunk.records, at,
                                                   options.limits, scratch.block));
    std::array<bool, attr::kKnownCount> seen{};
    FOURDGS_TRY(decode_stream_block(block, at, chunk.count, opcode_name(op::chunk).c_str(),
                                    options.limits, out, seen, scratch.stream));
    FOURDGS_TRY(
        require_streams(out, seen, chunk.count, record_name(op::chunk), "Chunk.records", at));
    FOURDGS_TRY(check_rows(scene, out, chunk.count, true, true, "gaussian", at));
    return decode_sh_bands(bands, chunk.count, scene.header.sh_degree, options.max_sh_degree,
                           options.limits, out, scratch.stream);
}

namespace {

// size_rows, with the optional columns sized too when `source_ids` / `ids`. A column keeps its
// storage and the values it held: its callers write every value of every column sized here.
void size_columns(GaussianBlock& out, std::size_t count, int sh_degree, bool source_ids,
                  bool ids) {
    out.count = count;
    out.sh_degree = sh_degree;
    detail::resize_fresh(out.position, count * 3);
    detail::resize_fresh(out.scale, count * 3);
    detail::resize_fresh(out.rotation, count * 4);
    detail::resize_fresh(out.color, count * 4);
    detail::resize_fresh(out.motion, count * 3);
    for (auto* v : {&out.mu_t, &out.sigma_t, &out.win_lo, &out.win_hi})
        detail::resize_fresh(*v, count);
    detail::resize_fresh(out.flags, count);
    detail::resize_fresh(out.window_index, count);
    detail::resize_fresh(out.object_id, count);
    detail::resize_fresh(out.sh, count * static_cast<std::size_t>(out.sh_per_gaussian()));
    out.has_source_ids = source_ids;
    for (auto* v : {&out.source_group, &out.source_index}) {
        if (source_ids) detail::resize_fresh(*v, count);
        else v->clear();
    }
    if (ids) detail::resize_fresh(out.gaussian_id, count);
    else out.gaussian_id.clear();
}

}  // namespace

void size_rows(GaussianBlock& out, std::size_t count, int sh_degree) {
    size_columns(out, count, sh_degree, false, false);
}

void dequantize_state(const SceneInfo& scene, const ChunkBins& bins, GaussianBlock& out) {
    // dequantize_into writes every value of each column sized: all rows of the columns every
    // chunk fills, every coefficient of bands 1..sh_bands, object_id (0 where the bins carry
    // none), both source ids when the bins carry either (0 for the one they lack), and the ids.
    // So what `out` held before is overwritten, never shown.
    size_columns(out, bins.count, bins.sh_bands, bins.has_source_group || bins.has_source_index,
                 bins.has_gaussian_id);
    dequantize_into(scene, bins, out, 0);
}

void dequantize(const SceneInfo& scene, const ChunkBins& bins, GaussianBlock& out) {
    const std::size_t base = out.count;
    if (base == 0) out.sh_degree = bins.sh_bands;
    const std::size_t total = base + bins.count;
    // The rows this chunk adds; resize value-initializes them, so an optional column the chunk
    // lacks reads 0 there.
    out.position.resize(total * 3);
    out.scale.resize(total * 3);
    out.rotation.resize(total * 4);
    out.color.resize(total * 4);
    out.motion.resize(total * 3);
    for (auto* v : {&out.mu_t, &out.sigma_t, &out.win_lo, &out.win_hi}) v->resize(total);
    out.flags.resize(total);
    out.window_index.resize(total);
    out.object_id.resize(total);
    if (bins.has_source_group || bins.has_source_index || out.has_source_ids) {
        out.has_source_ids = true;
        out.source_group.resize(total);
        out.source_index.resize(total);
    }
    if (bins.has_gaussian_id) out.gaussian_id.resize(total);
    out.sh.resize(total * static_cast<std::size_t>(out.sh_per_gaussian()));
    out.count = total;
    dequantize_into(scene, bins, out, base);
}

void dequantize_into(const SceneInfo& scene, const ChunkBins& bins, GaussianBlock& out,
                     std::size_t base) {
    std::array<bool, attr::kKnownCount> every;
    every.fill(true);
    dequantize_columns(scene, bins, every, true, out, base);
}

namespace {

// The §6.3 columns of n gaussians (motion, mu_t and the timing ones as asked), from their
// sigma_t, flags and window bins. Rows that all share those bins (every row of a tracked
// capture, whose gaussians never fade) take their steps once, and their motion and mu_t convert
// in loops that vectorize, with the same operations as a row at a time (so the same floats);
// only rows that differ build tables of the steps per sigma bin and per window.
void timed_columns_from_bins(const SceneInfo& scene, const ChunkBins& bins, std::size_t n,
                             bool motion, bool mu_t, bool timing, GaussianBlock& out,
                             std::size_t base, DequantizeTables& tab) {
    const Grid& g = scene.grid;
    const double never_tstep = std::ldexp(g.step_time, birth_class_for_sigma(g, 0, true));
    // A never-fading gaussian's velocity step, from its window's bounds.
    auto never_vstep = [&](std::size_t window) {
        const auto& w = scene.windows[window];
        return std::ldexp(g.step_motion, -velocity_class_for_sigma(g, 0, true, w.lo, w.hi));
    };
    auto timing_row = [&](std::size_t i, std::size_t o, float sigma) {
        const std::size_t wi = static_cast<std::size_t>(bins.window_index[i]);
        out.sigma_t[o] = sigma;
        out.win_lo[o] = static_cast<float>(scene.windows[wi].lo);
        out.win_hi[o] = static_cast<float>(scene.windows[wi].hi);
        out.flags[o] = static_cast<std::uint8_t>(bins.flags[i]);
        out.window_index[o] = static_cast<std::uint32_t>(wi);
    };
    // Whether every row has row 0's bin; a loop without a branch, so it vectorizes.
    auto shared = [n](const std::vector<std::int32_t>& col) {
        std::int32_t differs = 0;
        FOURDGS_COMPACT_LOOP
        for (std::size_t i = 0; i < n; ++i) differs |= col[i] ^ col[0];
        return differs == 0;
    };
    if (n > 0 && shared(bins.flags) && shared(bins.window_index) && shared(bins.sigma_t)) {
        // One row's steps serve them all: no tables.
        const SigmaSteps s =
            (bins.flags[0] & kFlagNeverFades) == 0
                ? sigma_steps(g, bins.sigma_t[0])
                : SigmaSteps{std::numeric_limits<float>::infinity(),
                             never_vstep(static_cast<std::size_t>(bins.window_index[0])),
                             never_tstep};
        if (motion) scaled_bins(bins.motion.data(), n * 3, s.vstep, out.motion.data() + base * 3);
        if (mu_t) scaled_bins(bins.mu_t.data(), n, s.tstep, out.mu_t.data() + base);
        if (timing)
            for (std::size_t i = 0; i < n; ++i) timing_row(i, base + i, s.sigma);
        return;
    }
    // Rows that differ: each one's steps from tables, per sigma bin and per window, while they
    // are no longer than the rows.
    const BinSpan ss = span_of(bins.sigma_t, n);
    const bool sigma_table = ss.size() <= n;
    if (sigma_table) {
        tab.sigma.resize(ss.size());
        for (std::size_t j = 0; j < ss.size(); ++j)
            tab.sigma[j] =
                sigma_steps(g, static_cast<std::int32_t>(std::int64_t{ss.lo} + std::int64_t(j)));
    }
    const std::size_t windows = scene.windows.size();
    const bool window_table = windows <= n;
    if (window_table) {
        tab.never_vstep.resize(windows);
        for (std::size_t w = 0; w < windows; ++w) tab.never_vstep[w] = never_vstep(w);
    }
    auto steps_of = [&](std::size_t i) -> SigmaSteps {
        const std::size_t wi = static_cast<std::size_t>(bins.window_index[i]);
        if ((bins.flags[i] & kFlagNeverFades) == 0)
            return sigma_table ? tab.sigma[static_cast<std::size_t>(
                                     std::int64_t{bins.sigma_t[i]} - ss.lo)]
                               : sigma_steps(g, bins.sigma_t[i]);
        return {std::numeric_limits<float>::infinity(),
                window_table ? tab.never_vstep[wi] : never_vstep(wi), never_tstep};
    };
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t o = base + i;
        const SigmaSteps s = steps_of(i);
        if (motion)
            for (int c = 0; c < 3; ++c)
                out.motion[o * 3 + c] = static_cast<float>(bins.motion[i * 3 + c] * s.vstep);
        if (mu_t) out.mu_t[o] = static_cast<float>(bins.mu_t[i] * s.tstep);
        if (timing) timing_row(i, o, s.sigma);
    }
}

}  // namespace

void dequantize_columns(const SceneInfo& scene, const ChunkBins& bins,
                        const std::array<bool, attr::kKnownCount>& which, bool with_sh,
                        GaussianBlock& out, std::size_t base) {
    const Grid& g = scene.grid;
    const std::size_t n = bins.count;
    thread_local DequantizeTables tab;

    // One pass per column: the simple ones vectorize, and each reads and writes in order.
    if (which[attr::position])
        positions_from_bins(bins.position.data(), n, g, out.position.data() + base * 3);
    if (which[attr::scale]) scales_from_bins(g, bins, n, out.scale.data() + base * 3, tab);
    if (which[attr::rotation] || which[attr::rotation_index])
        rotations_from_bins(g, bins.rotation_index.data(), bins.rotation.data(), n,
                            out.rotation.data() + base * 4);
    if (which[attr::color] || which[attr::opacity])
        colors_from_bins(bins.color.data(), bins.opacity.data(), n, g,
                         out.color.data() + base * 4);

    // §6.3: sigma_t and the two per-gaussian steps. Only the rows' motion, mu_t or timing
    // columns read them.
    const bool motion = which[attr::motion], mu_t = which[attr::mu_t],
               timing = which[attr::sigma_t] || which[attr::flags] || which[attr::window_index];
    if (motion || mu_t || timing)
        timed_columns_from_bins(scene, bins, n, motion, mu_t, timing, out, base, tab);
    // §6.6: the same-bits view of the i32 code.
    if (which[attr::object_id])
        for (std::size_t i = 0; i < n; ++i)
            out.object_id[base + i] =
                bins.has_object_id ? static_cast<std::uint32_t>(bins.object_id[i]) : 0;
    if ((which[attr::source_group] || which[attr::source_index]) &&
        (bins.has_source_group || bins.has_source_index))  // rows of chunks without them stay 0
        for (std::size_t i = 0; i < n; ++i) {
            out.source_group[base + i] = bins.has_source_group ? bins.source_group[i] : 0;
            out.source_index[base + i] = bins.has_source_index ? bins.source_index[i] : 0;
        }
    if (which[attr::gaussian_id] && bins.has_gaussian_id)
        for (std::size_t i = 0; i < n; ++i)
            out.gaussian_id[base + i] = static_cast<std::uint32_t>(bins.gaussian_id[i]);

    if (with_sh) sh_from_bins(bins, n, out, base);
}

Status decode_chunk(const SceneInfo& scene, const ChunkRecord& chunk,
                    std::span<const ShBandRecord> bands, const ChunkDecodeOptions& options,
                    GaussianBlock& out, ChunkBins& bins, DecodeScratch& scratch) {
    FOURDGS_TRY(decode_chunk_bins(scene, chunk, bands, options, bins, scratch));
    dequantize_state(scene, bins, out);
    return ok_status();
}

namespace {

// The columns every block holds a share of per gaussian (sh, the source ids and gaussian_id
// follow rules of their own): appended and cleared as one list.
using Block = GaussianBlock;
constexpr Column<float> Block::*kFloatColumns[] = {
    &Block::position, &Block::scale,   &Block::rotation, &Block::color, &Block::motion,
    &Block::mu_t,     &Block::sigma_t, &Block::win_lo,   &Block::win_hi};
constexpr Column<std::uint32_t> Block::*kLabelColumns[] = {&Block::window_index,
                                                                &Block::object_id};

}  // namespace

void GaussianBlock::clear() {
    count = 0;
    for (auto column : kFloatColumns) (this->*column).clear();
    for (auto column : kLabelColumns) (this->*column).clear();
    flags.clear();
    sh.clear();
    source_group.clear();
    source_index.clear();
    gaussian_id.clear();
    has_source_ids = false;
}

void GaussianBlock::append(const GaussianBlock& o) {
    if (count == 0) {
        *this = o;
        return;
    }
    auto cat = [](auto& dst, const auto& src) { dst.insert(dst.end(), src.begin(), src.end()); };
    for (auto column : kFloatColumns) cat(this->*column, o.*column);
    for (auto column : kLabelColumns) cat(this->*column, o.*column);
    cat(flags, o.flags);
    if (has_source_ids || o.has_source_ids) {
        source_group.resize(count);
        source_index.resize(count);
        if (o.has_source_ids) {
            cat(source_group, o.source_group);
            cat(source_index, o.source_index);
        } else {
            source_group.resize(count + o.count);
            source_index.resize(count + o.count);
        }
        has_source_ids = true;
    }
    if (!gaussian_id.empty() || !o.gaussian_id.empty()) {
        gaussian_id.resize(count);
        if (o.gaussian_id.empty()) gaussian_id.resize(count + o.count);
        else cat(gaussian_id, o.gaussian_id);
    }
    // Whole bands only (M100): the merged block keeps the smaller degree.
    const int degree = std::min(sh_degree, o.sh_degree);
    const int per_new = sh_coeffs_per_component(degree);
    Column<std::uint8_t> merged((count + o.count) * 3 * static_cast<std::size_t>(per_new));
    auto copy_from = [&](const GaussianBlock& src, std::size_t dst_base) {
        const int per_src = sh_coeffs_per_component(src.sh_degree);
        for (std::size_t i = 0; i < src.count; ++i)
            for (int c = 0; c < 3; ++c)
                std::copy_n(&src.sh[(i * 3 + c) * per_src], per_new,
                            &merged[((dst_base + i) * 3 + c) * per_new]);
    };
    if (per_new > 0) {
        copy_from(*this, 0);
        copy_from(o, count);
    }
    sh = std::move(merged);
    sh_degree = degree;
    count += o.count;
}

}  // namespace fourdgs
