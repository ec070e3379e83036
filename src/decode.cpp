// Chunk decode (fourdgs/decode.hpp): records block → streams → bins → §3 state.
#include "fourdgs/decode.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace fourdgs {
namespace {

Error malformed(std::string_view refusal, std::string message, std::uint64_t offset) {
    return make_error(ErrorKind::malformed, refusal, std::move(message), offset);
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
    Cursor cur(block, block_offset, what);
    while (!cur.at_end()) {
        FOURDGS_ASSIGN(StreamView s, read_stream(cur));
        const std::uint8_t id = s.header.attribute_id;
        if (id >= attr::kKnownCount) continue;  // reserved, relighting, private: skip by length
        const char* name = attr::kNames[id];
        if (seen[id])
            return malformed(refusal::kDuplicateAttributeStream,
                             std::string(what) + " carries two '" + name + "' streams (id " +
                                 std::to_string(id) + ")",
                             s.offset)
                .about("Attribute Stream.attribute_id", std::to_string(id));
        seen[id] = true;
        if (!codec_implemented(s.header.codec))
            return make_error(ErrorKind::unsupported, refusal::kUnknownStreamCodec,
                              std::string("stream '") + name + "' uses codec byte " +
                                  std::to_string(s.header.codec) + " (" +
                                  codec_name(s.header.codec) + "), which this reader does not implement",
                              s.offset + 3)
                .about("Attribute Stream.codec", std::to_string(s.header.codec));
        if (s.header.channels != attr::kChannels[id])
            return malformed(refusal::kStreamChannelCountMismatch,
                             std::string("stream '") + name + "' has " +
                                 std::to_string(s.header.channels) + " channels; the registry says " +
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
        col.resize(static_cast<std::size_t>(count) * s.header.channels);
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
        const ShBandRecord* rec = nullptr;
        for (const ShBandRecord& r : bands)
            if (r.band == b) {
                if (rec)
                    return malformed(refusal::kDuplicateShBand,
                                     "two SH Band Stream records for band " + std::to_string(b),
                                     r.stream_offset)
                        .about("SH Band Stream.band", std::to_string(b));
                rec = &r;
            }
        if (!rec)
            return malformed(refusal::kMissingShBand,
                             "the Header declares sh_degree " + std::to_string(sh_degree) +
                                 " but the chunk has no SH Band Stream record for band " +
                                 std::to_string(b),
                             kNoOffset)
                .about("SH Band Stream.band", std::to_string(b));
        Cursor cur(rec->stream, rec->stream_offset, "SH Band Stream");
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
        values.resize(static_cast<std::size_t>(count) * channels);
        FOURDGS_TRY(decode_stream(s, values, scratch, limits.max_decompressed_bytes));
        std::vector<std::uint8_t>& dst = out.sh[b - 1];
        dst.resize(values.size());
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
    scratch.resize(static_cast<std::size_t>(uncompressed_size));
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
    FOURDGS_TRY(check_gaussian_limit(chunk.count, options.limits, "Chunk", at));
    out.count = chunk.count;
    // Offsets inside a decompressed block do not exist in the file: streams name the chunk's
    // block offset then.
    FOURDGS_ASSIGN(Bytes block,
                   open_records_block("Chunk", chunk.compression, chunk.uncompressed_size,
                                      chunk.records, at, options.limits, scratch.block));
    std::array<bool, attr::kKnownCount> seen{};
    FOURDGS_TRY(decode_stream_block(block, at, chunk.count, "Chunk", options.limits, out, seen,
                                    scratch.stream));
    FOURDGS_TRY(require_streams(out, seen, chunk.count, "Chunk", "Chunk.records", at));
    FOURDGS_TRY(check_rows(scene, out, chunk.count, true, true, "gaussian", at));
    return decode_sh_bands(bands, chunk.count, scene.header.sh_degree, options.max_sh_degree,
                           options.limits, out, scratch.stream);
}

void size_rows(GaussianBlock& out, std::size_t count, int sh_degree) {
    out.count = count;
    out.sh_degree = sh_degree;
    out.position.resize(count * 3);
    out.scale.resize(count * 3);
    out.rotation.resize(count * 4);
    out.color.resize(count * 4);
    out.motion.resize(count * 3);
    for (auto* v : {&out.mu_t, &out.sigma_t, &out.win_lo, &out.win_hi}) v->resize(count);
    out.flags.resize(count);
    out.window_index.resize(count);
    out.object_id.resize(count);
    out.sh.resize(count * static_cast<std::size_t>(out.sh_per_gaussian()));
    out.has_source_ids = false;
    out.source_group.clear();
    out.source_index.clear();
    out.gaussian_id.clear();
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
    const Grid& g = scene.grid;
    const std::size_t n = bins.count;
    const int sh_degree = out.sh_degree;
    const bool source_ids = bins.has_source_group || bins.has_source_index;

    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t o = base + i;
        for (int c = 0; c < 3; ++c) {
            out.position[o * 3 + c] =
                static_cast<float>(g.pos_origin[c] + bins.position[i * 3 + c] * g.step_pos);
            out.scale[o * 3 + c] =
                static_cast<float>(std::exp(bins.scale[i * 3 + c] * g.step_scale_log));
        }
        const auto q = rotation_from_bins(g, static_cast<std::uint32_t>(bins.rotation_index[i]),
                                          &bins.rotation[i * 3]);
        for (int c = 0; c < 4; ++c) out.rotation[o * 4 + c] = static_cast<float>(q[c]);

        // §6.2: stored (g, r-g, b-g); invert in the integer domain, then the step.
        const std::int64_t gb = bins.color[i * 3 + 0];
        const std::int64_t rb = bins.color[i * 3 + 1] + gb;
        const std::int64_t bb = bins.color[i * 3 + 2] + gb;
        auto unit = [](double v) { return static_cast<float>(std::clamp(v, 0.0, 1.0)); };
        out.color[o * 4 + 0] = unit(static_cast<double>(rb) * g.step_rgb);
        out.color[o * 4 + 1] = unit(static_cast<double>(gb) * g.step_rgb);
        out.color[o * 4 + 2] = unit(static_cast<double>(bb) * g.step_rgb);
        out.color[o * 4 + 3] = unit(bins.opacity[i] * g.step_alpha);

        const bool never = (bins.flags[i] & kFlagNeverFades) != 0;
        const auto& w = scene.windows[static_cast<std::size_t>(bins.window_index[i])];
        // One exp per gaussian feeds sigma_t and both §6.3 per-gaussian steps.
        const double sigma = sigma_value(g, bins.sigma_t[i]);
        const double vstep =
            std::ldexp(g.step_motion, -velocity_class_for_sigma(g, sigma, never, w.lo, w.hi));
        const double tstep = std::ldexp(g.step_time, birth_class_for_sigma(g, sigma, never));
        for (int c = 0; c < 3; ++c)
            out.motion[o * 3 + c] = static_cast<float>(bins.motion[i * 3 + c] * vstep);
        out.mu_t[o] = static_cast<float>(bins.mu_t[i] * tstep);
        out.sigma_t[o] = never ? std::numeric_limits<float>::infinity() : static_cast<float>(sigma);
        out.win_lo[o] = static_cast<float>(w.lo);
        out.win_hi[o] = static_cast<float>(w.hi);
        out.flags[o] = static_cast<std::uint8_t>(bins.flags[i]);
        out.window_index[o] = static_cast<std::uint32_t>(bins.window_index[i]);
        // §6.6: the same-bits view of the i32 code.
        out.object_id[o] = bins.has_object_id ? static_cast<std::uint32_t>(bins.object_id[i]) : 0;
        if (source_ids) {  // rows of a chunk without them stay 0 (sized that way)
            out.source_group[o] = bins.has_source_group ? bins.source_group[i] : 0;
            out.source_index[o] = bins.has_source_index ? bins.source_index[i] : 0;
        }
        if (bins.has_gaussian_id) out.gaussian_id[o] = static_cast<std::uint32_t>(bins.gaussian_id[i]);
    }

    // SH: per gaussian, component-major across bands 1..D (red's, then green's, then blue's).
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

Status decode_chunk(const SceneInfo& scene, const ChunkRecord& chunk,
                    std::span<const ShBandRecord> bands, const ChunkDecodeOptions& options,
                    GaussianBlock& out, ChunkBins& bins, DecodeScratch& scratch) {
    FOURDGS_TRY(decode_chunk_bins(scene, chunk, bands, options, bins, scratch));
    out.clear();
    dequantize(scene, bins, out);
    return ok_status();
}

void GaussianBlock::clear() {
    count = 0;
    for (auto* v : {&position, &scale, &rotation, &color, &motion, &mu_t, &sigma_t, &win_lo, &win_hi})
        v->clear();
    flags.clear();
    window_index.clear();
    sh.clear();
    object_id.clear();
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
    cat(position, o.position);
    cat(scale, o.scale);
    cat(rotation, o.rotation);
    cat(color, o.color);
    cat(motion, o.motion);
    cat(mu_t, o.mu_t);
    cat(sigma_t, o.sigma_t);
    cat(win_lo, o.win_lo);
    cat(win_hi, o.win_hi);
    cat(flags, o.flags);
    cat(window_index, o.window_index);
    cat(object_id, o.object_id);
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
    std::vector<std::uint8_t> merged((count + o.count) * 3 * static_cast<std::size_t>(per_new));
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
