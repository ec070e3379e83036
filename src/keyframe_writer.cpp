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
#include "fourdgs/file_assembler.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/quantize.hpp"
#include "fourdgs/version.hpp"
#include "content_records.hpp"
#include "encoding.hpp"

namespace fourdgs {
namespace {

using encoding::bad_option;
using encoding::num;

std::string who(std::size_t step, std::size_t gaussian) {
    return "step " + std::to_string(step) + " gaussian " + std::to_string(gaussian);
}

std::uint32_t uid(std::int32_t v) { return static_cast<std::uint32_t>(v); }

bool optional_column(std::uint8_t id) {
    return id == attr::source_group || id == attr::source_index || id == attr::object_id;
}

struct Ctx {
    encoding::Encoding enc;  // options, grid, the decoder's view of the scene
    const KeyframeWriterOptions* opt = nullptr;
    bool has_group = false, has_index = false, has_object = false;
    std::uint32_t window_full = 0;  // the [0, duration) window's index, when used
};

// ---- validation -----------------------------------------------------------------------------

// The batch checks both writers make (encoding.hpp), then what a state adds: at most 2^26
// gaussians, one unique id each, and windows that cover the state's interval.
Status validate_step(const KeyframeStep& st, std::size_t s, double t1, int sh_degree,
                     double duration) {
    const GaussianBatch& b = st.gaussians;
    const std::size_t n = b.count;
    if (n > (std::size_t{1} << 26))
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          "step " + std::to_string(s) + " holds " + std::to_string(n) +
                              " gaussians; one state chunk holds at most 2^26");
    if (st.ids.size() != n)
        return make_error(ErrorKind::invalid_argument, refusal::kInputSizeMismatch,
                          "step " + std::to_string(s) + ": ids holds " +
                              std::to_string(st.ids.size()) + " values; " + std::to_string(n) +
                              " expected")
            .about("KeyframeStep.ids", std::to_string(st.ids.size()));
    encoding::BatchRules rules;
    rules.windows = encoding::BatchRules::Windows::optional;
    rules.mu_t_optional = true;
    rules.prefix = "step " + std::to_string(s);
    FOURDGS_TRY(encoding::validate_batch(b, sh_degree, duration, rules));
    std::unordered_set<std::uint32_t> seen;
    seen.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        if (!seen.insert(st.ids[i]).second)
            return encoding::bad_input(refusal::kDuplicateGaussianId, who(s, i), "id",
                                       std::to_string(st.ids[i]) + " appears twice in the step");
        if (!b.win_lo.empty() && (b.win_lo[i] > st.t0 || b.win_hi[i] < t1))
            return encoding::bad_input(refusal::kWindowDoesNotCoverState, who(s, i), "window",
                                       "[" + num(b.win_lo[i]) + ", " + num(b.win_hi[i]) +
                                           ") does not cover the state's interval [" +
                                           num(st.t0) + ", " + num(t1) + ")");
    }
    return ok_status();
}

// ---- quantization of one step ---------------------------------------------------------------

// Quantizes row i of `st` into row i of `out` (mu_t left for the caller when derived).
Status quantize_row(const Ctx& ctx, const KeyframeStep& st, std::size_t s, std::size_t i,
                    const std::vector<std::uint32_t>& window_of, ChunkBins& out) {
    const GaussianBatch& b = st.gaussians;
    const std::uint32_t window = b.win_lo.empty() ? ctx.window_full : window_of[i];
    if (const char* field = encoding::quantize_row(ctx.enc, b, i, window, i, out, nullptr))
        return encoding::bad_input(refusal::kBinOutOfRange, who(s, i), field,
                                   "does not fit an i32 bin");
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
    encoding::for_each_column(a, [&](std::uint8_t id, const std::vector<std::int32_t>& col, int w) {
        if (id == attr::mu_t || id == attr::gaussian_id || id == attr::sigma_t ||
            id == attr::flags || id == attr::window_index)
            return;
        const std::vector<std::int32_t>& other = *const_cast<ChunkBins&>(b).column(id);
        for (int c = 0; c < w; ++c) same &= col[i * w + c] == other[j * w + c];
    });
    return same;
}

// The rows `order` of `src`, in that order, with gaussian ids.
void gather_rows(const ChunkBins& src, std::span<const std::uint32_t> order, ChunkBins& dst) {
    encoding::gather_rows(src, order, dst);
    dst.has_gaussian_id = true;
}

// Builds step s's quantized state (sorted by file id) from the previous one.
struct Identity {
    std::unordered_map<std::uint32_t, std::uint32_t> live;  // caller id → file id
    std::unordered_set<std::uint32_t> used;                 // caller ids that had an incarnation
    std::uint64_t next_fresh = 0;
    std::uint64_t distinct = 0;
};

Status build_state(const Ctx& ctx, std::span<const KeyframeStep> steps, std::size_t s,
                   bool keyframe, const std::vector<std::vector<std::uint32_t>>& window_of,
                   const ChunkBins& prev, Identity& ident, ChunkBins& raw, ChunkBins& out) {
    const KeyframeStep& st = steps[s];
    const std::size_t n = st.gaussians.count;
    encoding::resize_bins(raw, n, ctx.enc.sh_degree);
    raw.has_source_group = ctx.has_group;
    raw.has_source_index = ctx.has_index;
    raw.has_object_id = ctx.has_object;
    const bool derive_mu = st.gaussians.mu_t.empty();
    const Grid& g = ctx.enc.scene.grid;
    std::unordered_map<std::uint32_t, std::uint32_t> live;
    live.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        FOURDGS_TRY(quantize_row(ctx, st, s, i, window_of[s], raw));
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
                                      who(s, i) + ": no gaussian_id is left for a new incarnation");
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
            } else if (!encoding::bin_of(st.t0, birth_step(g, raw.sigma_t[i], never),
                                         raw.mu_t[i])) {
                return encoding::bad_input(refusal::kBinOutOfRange, who(s, i), "mu_t",
                                           "does not fit an i32 bin");
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

// A state chunk as encoded, and the index's gaussian_count for it.
struct Encoded {
    encoding::EncodedRecords records;
    std::uint32_t count = 0;
};

Status encode_keyframe(const Ctx& ctx, const ChunkBins& state, double t0, double t1,
                       encoding::ChunkBuffers& buf, Encoded& e) {
    FOURDGS_TRY(encoding::encode_chunk_records(ctx.enc, state, t0, t1, buf, e.records));
    e.count = state.count;
    return ok_status();
}

// The delta between `ref` and `cur` (both sorted by gaussian_id), written as the Delta Chunk
// `chunk`, whose span and chain fields (t0, t1, delta_mode, offsets, depth) the caller has set.
Status encode_delta(const Ctx& ctx, const ChunkBins& ref, const ChunkBins& cur, DeltaChunk chunk,
                    std::size_t step, encoding::ChunkBuffers& buf, Encoded& e) {
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
    const StreamEncodeOptions so = encoding::stream_options(ctx.enc);
    const std::size_t nu = upd_cur.size();

    // Updates: gaussian_id, then each changed column as differences; rotation absolute.
    ByteWriter updates;
    std::vector<std::int32_t> values;
    values.resize(nu);
    for (std::size_t k = 0; k < nu; ++k) values[k] = cur.gaussian_id[upd_cur[k]];
    if (nu > 0) FOURDGS_TRY(encode_stream(updates, attr::gaussian_id, 1, values, so, buf.stream));
    bool rotation_changed = false;
    for (std::size_t k = 0; k < nu && !rotation_changed; ++k) {
        const std::size_t a = upd_ref[k], b = upd_cur[k];
        rotation_changed = ref.rotation_index[a] != cur.rotation_index[b] ||
                           !std::equal(&ref.rotation[a * 3], &ref.rotation[a * 3] + 3,
                                       &cur.rotation[b * 3]);
    }
    Status failed = ok_status();
    encoding::for_each_column(cur, [&](std::uint8_t id, const std::vector<std::int32_t>& col, int w) {
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
        failed = encode_stream(updates, id, static_cast<std::uint8_t>(w), values, so, buf.stream);
    });
    FOURDGS_TRY(std::move(failed));

    // Births: the full attribute set.
    ChunkBins births;
    gather_rows(cur, born, births);
    ByteWriter birth_block;
    if (!born.empty())
        FOURDGS_TRY(encoding::encode_attribute_streams(ctx.enc, births, birth_block, buf.stream));
    // Deaths: gaussian_id only.
    ByteWriter deaths;
    values.resize(died.size());
    for (std::size_t k = 0; k < died.size(); ++k) values[k] = ref.gaussian_id[died[k]];
    if (!died.empty()) FOURDGS_TRY(encode_stream(deaths, attr::gaussian_id, 1, values, so, buf.stream));

    buf.block.buffer().clear();
    write_delta_groups(buf.block, updates.buffer(), birth_block.buffer(), deaths.buffer());
    chunk.update_count = static_cast<std::uint32_t>(nu);
    chunk.birth_count = static_cast<std::uint32_t>(born.size());
    chunk.death_count = static_cast<std::uint32_t>(died.size());
    chunk.uncompressed_size = buf.block.size();
    FOURDGS_TRY(encoding::seal_block(ctx.enc, buf, chunk.compression, chunk.records));
    ByteWriter file;
    file.buffer().swap(e.records.bytes);
    file.buffer().clear();
    write(file, chunk);
    e.records.chunk_length = file.size();
    e.records.bands = 0;
    file.buffer().swap(e.records.bytes);
    // A delta carries SH bands for its births only (§5.18).
    if (!born.empty()) FOURDGS_TRY(encoding::append_band_records(ctx.enc, births, buf, e.records));
    e.count = chunk.update_count + chunk.birth_count + chunk.death_count;
    return ok_status();
}

bool same_bins(const ChunkBins& a, const ChunkBins& b, std::string& what) {
    if (a.count != b.count) {
        what = "count " + std::to_string(a.count) + " vs " + std::to_string(b.count);
        return false;
    }
    bool same = true;
    encoding::for_each_column(a, [&](std::uint8_t id, const std::vector<std::int32_t>& col, int) {
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

// ---- options and the grid ------------------------------------------------------------------

Status resolve(const KeyframeWriterOptions& o, const SceneHeader& h, Ctx& ctx) {
    ctx.opt = &o;
    FOURDGS_TRY(encoding::validate_header(h));
    if (o.keyframe_every == 0) return bad_option("keyframe_every is 0; it must be >= 1");
    return encoding::resolve_options(o.base, h.sh_degree, ctx.enc);
}

// The grid and the declared (analytic worst-case) bounds, as StreamingWriter declares them.
Status make_grid(Ctx& ctx, const std::array<double, 6>& aabb, const SceneHeader& header,
                 Quantization& q) {
    FOURDGS_TRY(encoding::make_grid(ctx.enc, aabb, header.cutoff, q));
    q.bounds =
        encoding::make_bounds(ctx.enc, encoding::analytic_maxima(ctx.enc, header.duration_sec));
    return ok_status();
}

// Parses what was just encoded and composes it with the readers' own ComposedPopulation.
Status verify(const Ctx& ctx, const Encoded& e, bool keyframe, double t0, double t1,
              std::uint64_t offset, ComposedPopulation& target, const ChunkBins& expected,
              DecodeScratch& scratch, ChunkBins& bins, DeltaBins& delta, ChunkBins& composed) {
    RecordView rv;
    std::array<ShBandRecord, 3> bands;
    FOURDGS_TRY(encoding::parse_back(e.records, rv, bands));
    const std::span<const ShBandRecord> band_span(bands.data(),
                                                  static_cast<std::size_t>(e.records.bands));
    ChunkDecodeOptions dopt;
    const ChunkRef ref{offset, t0, t1, !keyframe};
    if (keyframe) {
        FOURDGS_ASSIGN(ChunkRecord parsed, parse_chunk(rv));
        FOURDGS_TRY(decode_chunk_bins(ctx.enc.scene, parsed, band_span, dopt, bins, scratch));
        target.reset(ctx.enc.sh_degree);
        FOURDGS_TRY(target.assign_keyframe(bins, ref));
    } else {
        FOURDGS_ASSIGN(DeltaChunk parsed, parse_delta_chunk(rv));
        FOURDGS_TRY(decode_delta_bins(ctx.enc.scene, parsed, band_span, dopt, delta, scratch));
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
    encoding::init_scene(ctx.enc, header, windows);
    Quantization quant;
    FOURDGS_TRY(make_grid(ctx, aabb, header, quant));
    ctx.enc.scene.quantization = quant;

    // The schedule: kind, mode and depth per step.
    std::vector<bool> is_key(ns), kf_ref(ns);
    std::vector<std::uint16_t> depth(ns);
    std::uint16_t max_depth = 0;
    std::uint32_t keyframes = 0;
    const std::vector<std::uint8_t>& schedule = options.keyframe_steps;
    if (!schedule.empty() && (schedule.size() != ns || schedule[0] == 0))
        return bad_option("keyframe_steps has " + std::to_string(schedule.size()) +
                          " entries for " + std::to_string(ns) +
                          " steps; it needs one per step, and step 0 a keyframe");
    // A delta whose reference is decided on cost (cheaper_reference) is marked `choose` here and
    // given its reference in pass 2; the others' references are fixed by the options.
    std::vector<bool> choose(ns);
    for (std::size_t s = 0; s < ns; ++s) {
        is_key[s] = schedule.empty() ? s % options.keyframe_every == 0 : schedule[s] != 0;
        if (is_key[s]) {
            ++keyframes;
            continue;
        }
        const double t0 = steps[s].t0, t1 = s + 1 < ns ? steps[s + 1].t0 : duration;
        bool extra = false;
        for (double x : options.keyframe_referenced_at) extra |= t0 <= x && x < t1;
        kf_ref[s] = extra || (!options.cheaper_reference && !options.chained);
        choose[s] = !extra && options.cheaper_reference;
    }
    auto chain_depths = [&]() -> Status {
        max_depth = 0;
        for (std::size_t s = 0; s < ns; ++s) {
            if (is_key[s]) continue;
            const std::uint32_t d = kf_ref[s] ? 1u : depth[s - 1] + 1u;
            if (d > 0xFFFF)
                return bad_option("a chain deeper than 65535 deltas: lower keyframe_every");
            depth[s] = static_cast<std::uint16_t>(d);
            max_depth = std::max(max_depth, depth[s]);
        }
        return ok_status();
    };
    if (!options.cheaper_reference) FOURDGS_TRY(chain_depths());

    // Pass 2 (dry): identities, for the Header's gaussian_count; and, for a delta whose reference
    // is decided on cost, both encodings: keyframe-referenced when its records (chunk and band
    // records; the header fields are fixed-width, so the offsets not yet known do not matter)
    // are strictly smaller, chained on a tie. The choice is exact per delta, since a chained
    // delta references the previous state whatever reference that state's own delta took.
    Identity ident;
    ident.next_fresh = any_id ? max_id + 1 : 0;
    ChunkBins raw, prev, cur, keyframe_state;
    prev.sh_bands = ctx.enc.sh_degree;
    encoding::ChunkBuffers buffers;
    Encoded enc, other;
    for (std::size_t s = 0; s < ns; ++s) {
        FOURDGS_TRY(
            build_state(ctx, steps, s, is_key[s], window_of, prev, ident, raw, cur));
        if (is_key[s] && options.cheaper_reference) keyframe_state = cur;
        if (choose[s]) {
            DeltaChunk head;
            head.t0 = steps[s].t0;
            head.t1 = s + 1 < ns ? steps[s + 1].t0 : duration;
            // Either candidate alone is a valid file: one that is refused (a bin difference
            // outside i32) leaves the other; both refused, the chained one's refusal stands.
            head.delta_mode = kDeltaModeChained;
            Status chained = encode_delta(ctx, prev, cur, head, s, buffers, enc);
            head.delta_mode = kDeltaModeKeyframe;
            const Status keyed = encode_delta(ctx, keyframe_state, cur, head, s, buffers, other);
            if (!chained.ok() && !keyed.ok()) return chained;
            kf_ref[s] = !chained.ok() ||
                        (keyed.ok() && other.records.bytes.size() < enc.records.bytes.size());
        }
        std::swap(prev, cur);
    }
    const std::uint64_t distinct = ident.distinct;
    if (options.cheaper_reference) FOURDGS_TRY(chain_depths());

    // The front of the file.
    Header h = encoding::make_header(header, kModelKeyframeDelta, distinct, aabb,
                                     ctx.enc.chunk_compressed, extras);
    const bool indexed = options.base.write_index && ns > 1 && options.base.write_statistics;
    if (header.profile.empty() && indexed) h.profile = "keyframed";
    ctx.enc.scene.header = h;
    FileAssembler as(sink);
    FOURDGS_TRY(as.begin(h, quant, WindowTable{windows}));
    {
        ByteWriter w;
        const Metadata advisory{"keyframe-delta",
                                {{"keyframe_interval_sec", bound_string(duration / keyframes)},
                                 {"gop_max_depth", std::to_string(max_depth)}}};
        encoding::write_content(w, header, options.base, std::span<const Metadata>(&advisory, 1),
                                h.library);
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
    prev.sh_bands = ctx.enc.sh_degree;
    ChunkBins bins, composed;
    ComposedPopulation pop_prev, pop_key;
    pop_prev.reset(ctx.enc.sh_degree);
    pop_key.reset(ctx.enc.sh_degree);
    DecodeScratch scratch;
    DeltaBins delta;
    std::uint64_t key_offset = 0, prev_offset = 0;
    for (std::size_t s = 0; s < ns; ++s) {
        const double t0 = steps[s].t0, t1 = s + 1 < ns ? steps[s + 1].t0 : duration;
        FOURDGS_TRY(
            build_state(ctx, steps, s, is_key[s], window_of, prev, ident, raw, cur));
        const std::uint64_t offset = as.position();
        KeyframeIndexFields k;
        k.live_count = cur.count;
        if (is_key[s]) {
            FOURDGS_TRY(encode_keyframe(ctx, cur, t0, t1, buffers, enc));
            FOURDGS_TRY(verify(ctx, enc, true, t0, t1, offset, pop_key, cur, scratch, bins, delta,
                               composed));
            pop_prev = pop_key;
            keyframe_state = cur;
            key_offset = offset;
            k.chunk_kind = kChunkKindKeyframe;
        } else {
            DeltaChunk head;
            head.t0 = t0;
            head.t1 = t1;
            head.delta_mode = kf_ref[s] ? kDeltaModeKeyframe : kDeltaModeChained;
            head.reference_offset = kf_ref[s] ? key_offset : prev_offset;
            head.keyframe_offset = key_offset;
            head.depth = depth[s];
            FOURDGS_TRY(encode_delta(ctx, kf_ref[s] ? keyframe_state : prev, cur, head, s,
                                     buffers, enc));
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
            k.delta_mode = head.delta_mode;
            k.reference_offset = head.reference_offset;
            k.keyframe_offset = head.keyframe_offset;
            k.depth = head.depth;
        }
        ChunkRecords records = enc.records.records(t0, t1, enc.count);
        records.keyframe = k;
        FOURDGS_TRY(as.add_chunk(records));
        prev_offset = offset;
        if (report) {
            report->chunk_bytes.push_back(enc.records.bytes.size());
            report->live_count.push_back(cur.count);
            if (report->keep_states) report->states.push_back(cur);
        }
        std::swap(prev, cur);
    }
    const Statistics stats{distinct, static_cast<std::uint32_t>(ns), duration, aabb};
    const WriterOptions& o = options.base;
    FOURDGS_TRY(as.finish({o.write_index, o.write_crc, o.write_statistics, o.write_summary_offset},
                          stats));
    if (report) {
        report->base.quantization = quant;
        report->base.windows = windows;
        report->base.gaussian_count = distinct;
        report->base.aabb = aabb;
        report->base.chunk_count = static_cast<std::uint32_t>(ns);
        report->base.bytes_written = as.position();
        report->keyframes = keyframes;
        report->deltas = static_cast<std::uint32_t>(ns) - keyframes;
        report->keyframe_referenced = 0;
        for (std::size_t s = 0; s < ns; ++s) report->keyframe_referenced += !is_key[s] && kf_ref[s];
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
