// The writer (fourdgs/writer.hpp): validate → quantize (§6) → streams (§5.6) → verify by decoding
// → records → summary (§4.5) → sink. The steps it shares with the keyframe-delta writer are in
// encoding.hpp; the file around the chunks is FileAssembler's.
#include "fourdgs/writer.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>
#include <thread>
#include <utility>

#include "fourdgs/decode.hpp"
#include "fourdgs/detail/file_assembler.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/quantize.hpp"
#include "fourdgs/scene.hpp"
#include "chunk_plan.hpp"
#include "content_records.hpp"
#include "encoding.hpp"
#include "platform/fresh_memory.hpp"
#include "platform/worker_threads.hpp"

namespace fourdgs {

using detail::FileAssembler;
using detail::SummaryOptions;

namespace {

using encoding::bad_input;
using encoding::bad_option;
using encoding::kF32;
using encoding::kInf;
using encoding::Maxima;
using encoding::num;
using Context = encoding::Encoding;

std::string gaussian(std::uint64_t index) { return "gaussian " + std::to_string(index); }

// One chunk to encode: gaussians `indices` of `batch` (window per gaussian, or one for all).
struct ChunkJob {
    const GaussianBatch* batch = nullptr;
    std::span<const std::uint32_t> indices;
    std::span<const std::uint32_t> windows;  // parallel to indices; empty = `window` for all
    std::uint32_t window = 0;
    std::uint64_t name_base = 0;  // added to a batch index to name a gaussian
    double t0 = 0, t1 = 0;

    std::uint32_t window_of(std::size_t k) const { return windows.empty() ? window : windows[k]; }
    std::uint64_t name(std::size_t k) const { return name_base + indices[k]; }
};

struct EncodedChunk {
    encoding::EncodedRecords records;  // the Chunk record, then its SH Band records
    double t0 = 0, t1 = 0;
    std::uint32_t count = 0;
    Maxima maxima;
};

// log of a decoded value that depends only on its bin (a scale or sigma_t: exp of the bin times
// the step), computed once per bin of a chunk — the same expression, so the same double — when
// the chunk's bins span no more values than it has rows; otherwise computed every time.
class LogByBin {
public:
    void reset(const std::vector<std::int32_t>& bins, std::size_t n) {
        on_ = n > 0 && bins.size() >= n;
        if (!on_) return;
        const auto [lo, hi] = std::minmax_element(bins.begin(), bins.begin() + n);
        lo_ = *lo;
        const std::uint64_t span = static_cast<std::uint64_t>(std::int64_t{*hi} - *lo) + 1;
        on_ = span <= std::max<std::size_t>(n, 1024);
        if (on_) logs_.assign(static_cast<std::size_t>(span), std::numeric_limits<double>::quiet_NaN());
    }
    double operator()(std::int32_t bin, float decoded) {
        if (!on_) return std::log(static_cast<double>(decoded));
        double& l = logs_[static_cast<std::size_t>(std::int64_t{bin} - lo_)];
        if (std::isnan(l)) l = std::log(static_cast<double>(decoded));
        return l;
    }

private:
    bool on_ = false;
    std::int32_t lo_ = 0;
    std::vector<double> logs_;
};

// What verification compares against the input of one decoded row (ChunkCheck).
struct DecodedRow {
    double log_scale[3];
    double log_sigma;  // unused when `never`
    float position[3], rotation[4], color[4], motion[3], mu_t;
    std::int32_t rotation_index;  // the omitted component, as encoded
    bool never;                   // never fades, as encoded
};

// Per-thread buffers, reused across chunks.
struct Work {
    std::vector<std::int32_t> posb;  // position bins in input order: they decide the order
    std::vector<std::pair<std::uint64_t, std::uint32_t>> keys, sorted;
    // Chunk row row_of[k] holds job gaussian k. The rows are filled and checked in job order,
    // which reads the caller's columns front to back (a job's gaussians ascend in the input)
    // rather than in the rows' spatial order, all over them.
    std::vector<std::uint32_t> row_of;
    std::vector<std::uint32_t> perm;  // its inverse: row j holds job gaussian perm[j]
    ChunkBins q_job;                  // the quantized rows, in job order
    ChunkBins q;                      // ... and in chunk order
    std::vector<encoding::ExactRow> exact;  // in job order
    encoding::StepCache steps;
    LogByBin log_scale, log_sigma;  // of the decoded values, for verification
    std::vector<DecodedRow> rows;
    encoding::ChunkBuffers buffers;
    ChunkBins bins;  // decoded back
    DecodeScratch scratch;
    GaussianBlock decoded;
};

// ---- one chunk: quantize, encode, verify ----------------------------------------------------

// Step 1: the position bins of every gaussian, in input order (a position too far from the grid
// origin is refused here, before anything else is quantized).
Status bin_positions(const Context& ctx, const ChunkJob& job, Work& w) {
    const GaussianBatch& b = *job.batch;
    const Grid& g = ctx.scene.grid;
    const std::size_t n = job.indices.size();
    w.posb.resize(n * 3);
    for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = job.indices[k];
        for (int c = 0; c < 3; ++c)
            if (!encoding::bin_of(static_cast<double>(b.position[i * 3 + c]) - g.pos_origin[c],
                                  g.step_pos, w.posb[k * 3 + c]))
                return bad_input(refusal::kBinOutOfRange, gaussian(job.name(k)), "position",
                                 "is too far from the grid origin for an i32 bin at step_pos " +
                                     num(g.step_pos));
    }
    return ok_status();
}

// Sorts (key, index) pairs whose keys are below 2^bits by key, ties in their present order
// (which is the order of the indices, so the result is std::sort's of the pairs): a least
// significant digit radix sort, 11 bits a pass, a pass skipped when every key shares its digit.
void sort_keys(std::vector<std::pair<std::uint64_t, std::uint32_t>>& keys,
               std::vector<std::pair<std::uint64_t, std::uint32_t>>& scratch, int bits) {
    constexpr int kDigit = 11;
    const std::size_t n = keys.size();
    scratch.resize(n);
    std::vector<std::uint32_t> count(std::size_t{1} << kDigit);
    for (int at = 0; at < bits; at += kDigit) {
        std::fill(count.begin(), count.end(), 0u);
        for (const auto& k : keys) ++count[(k.first >> at) & ((1u << kDigit) - 1)];
        if (count[(keys[0].first >> at) & ((1u << kDigit) - 1)] == n) continue;
        std::uint32_t sum = 0;
        for (std::uint32_t& c : count) sum += std::exchange(c, sum);
        for (const auto& k : keys) scratch[count[(k.first >> at) & ((1u << kDigit) - 1)]++] = k;
        keys.swap(scratch);
    }
}

// Step 2: the chunk's row order — input order, or the Morton order of the position bins (§6.1:
// neighbours in space become neighbours in the position stream).
void choose_order(const Context& ctx, std::size_t n, Work& w) {
    w.row_of.resize(n);
    std::iota(w.row_of.begin(), w.row_of.end(), 0u);
    w.perm = w.row_of;
    if (!ctx.opt.spatial_order || n <= 1) return;
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
    int axis_bits = 0;  // the key holds 3 x this many bits
    for (int c = 0; c < 3; ++c)
        while (((hi[c] - lo[c]) >> shift) >> axis_bits) ++axis_bits;
    w.keys.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
        std::uint64_t key = 0;
        for (int c = 0; c < 3; ++c) {
            const auto bin = static_cast<std::uint64_t>(w.posb[k * 3 + c] - lo[c]);
            key |= morton_spread3(bin >> shift) << c;
        }
        w.keys[k] = {key, static_cast<std::uint32_t>(k)};
    }
    sort_keys(w.keys, w.sorted, 3 * axis_bits);
    for (std::size_t j = 0; j < n; ++j) {
        w.perm[j] = w.keys[j].second;
        w.row_of[w.perm[j]] = static_cast<std::uint32_t>(j);
    }
}

// How far ahead the loops over a job's gaussians fetch the next ones' memory: a job's gaussians
// ascend in the input but need not be adjacent (a window's gaussians may be spread over it), and
// each is read from a dozen columns, more streams than a core's prefetcher follows.
constexpr std::size_t kAhead = 16;

void prefetch_input(const GaussianBatch& b, std::size_t i) {
    __builtin_prefetch(&b.position[i * 3]);
    __builtin_prefetch(&b.scale[i * 3]);
    __builtin_prefetch(&b.rotation[i * 4]);
    __builtin_prefetch(&b.color[i * 4]);
    if (!b.motion.empty()) __builtin_prefetch(&b.motion[i * 3]);
    if (!b.mu_t.empty()) __builtin_prefetch(&b.mu_t[i]);
    __builtin_prefetch(&b.sigma_t[i]);
}

// Step 3: every attribute of every gaussian into its row, in the chosen order. The rows are
// quantized in job order (reading the input front to back, writing the bins front to back), then
// put in the chosen order column by column: a dozen columns written at random at once would
// stall on their misses.
Status quantize_rows(const Context& ctx, const ChunkJob& job, Work& w) {
    const GaussianBatch& b = *job.batch;
    const std::size_t n = job.indices.size();
    ChunkBins& rows = w.q_job;
    encoding::resize_bins(rows, n, ctx.sh_degree);
    rows.has_source_group = !b.source_group.empty();
    rows.has_source_index = !b.source_index.empty();
    rows.has_object_id = !b.object_id.empty();
    detail::resize_fresh(w.exact, n);
    for (std::size_t k = 0; k < n; ++k) {
        if (k + kAhead < n) prefetch_input(b, job.indices[k + kAhead]);
        if (const char* field = encoding::quantize_row(ctx, b, job.indices[k], job.window_of(k), k,
                                                       rows, &w.exact[k], &w.steps))
            return bad_input(refusal::kBinOutOfRange, gaussian(job.name(k)), field,
                             "does not fit an i32 bin");
    }
    encoding::gather_rows(rows, w.perm, w.q);
    return ok_status();
}

// Step 5: what was written, parsed and decoded with the readers' own decoder.
Status decode_back(const Context& ctx, const EncodedChunk& out, Work& w) {
    RecordView chunk;
    std::array<ShBandRecord, 3> bands;
    FOURDGS_TRY(encoding::parse_back(out.records, chunk, bands));
    FOURDGS_ASSIGN(ChunkRecord parsed, parse_chunk(chunk));
    ChunkDecodeOptions dopt;
    FOURDGS_TRY(decode_chunk_bins(ctx.scene, parsed,
                                  std::span<const ShBandRecord>(bands.data(), ctx.sh_degree), dopt,
                                  w.bins, w.scratch));
    w.decoded.clear();
    dequantize(ctx.scene, w.bins, w.decoded);
    const GaussianBlock& d = w.decoded;
    if (d.count != out.count || d.sh_degree != ctx.sh_degree)
        return make_error(ErrorKind::limit, refusal::kBoundViolated,
                          "a chunk decodes to " + std::to_string(d.count) +
                              " gaussians at SH degree " + std::to_string(d.sh_degree) + ", not " +
                              std::to_string(out.count) + " at " + std::to_string(ctx.sh_degree));
    return ok_status();
}

// Step 6: the decoded chunk against its input, attribute by attribute; the deviations go into
// `mx`. Refusal bound-violated (kind limit) naming the gaussian and the attribute.
//
// The input is read in job order (front to back through the caller's columns) and the decoded
// chunk in its rows' spatial order, so one of the two is visited at random. The decoded side is
// first gathered row by row — a sequential pass over its columns — into one packed row per
// gaussian (DecodedRow), so that the comparison touches one packed row at random instead of a
// dozen columns.
class ChunkCheck {
public:
    ChunkCheck(const Context& ctx, const ChunkJob& job, Work& w, Maxima& mx)
        : ctx_(ctx), lim_(ctx.lim), job_(job), w_(w), b_(*job.batch), d_(w.decoded), mx_(mx) {}

    // The checks that need no input (never fading, the window, SH bytes as encoded), and the
    // packed rows, in row order.
    Status gather() {
        const ChunkBins& q = w_.q;
        const std::size_t n = job_.indices.size();
        w_.log_scale.reset(w_.bins.scale, n * 3);
        w_.log_sigma.reset(w_.bins.sigma_t, n);
        detail::resize_fresh(w_.rows, n);
        for (std::size_t j = 0; j < n; ++j) {
            DecodedRow& r = w_.rows[j];
            who_ = job_.name(w_.perm[j]);
            r.never = q.flags[j] != 0;
            if (r.never) {
                if (!std::isinf(d_.sigma_t[j]) || (d_.flags[j] & kFlagNeverFades) == 0)
                    return violated("sigma_t (never fades)", kInf, 0);
                r.log_sigma = kInf;
            } else {
                r.log_sigma = w_.log_sigma(w_.bins.sigma_t[j], d_.sigma_t[j]);
            }
            const std::uint32_t wi = static_cast<std::uint32_t>(q.window_index[j]);
            const WindowTable::Window& win = ctx_.scene.windows[wi];
            if (d_.window_index[j] != wi || d_.win_lo[j] != static_cast<float>(win.lo) ||
                d_.win_hi[j] != static_cast<float>(win.hi))
                return violated("window", 1, 0);
            for (int c = 0; c < 3; ++c) {
                r.log_scale[c] = w_.log_scale(w_.bins.scale[j * 3 + c], d_.scale[j * 3 + c]);
                r.position[c] = d_.position[j * 3 + c];
                r.motion[c] = d_.motion[j * 3 + c];
            }
            for (int c = 0; c < 4; ++c) {
                r.rotation[c] = d_.rotation[j * 4 + c];
                r.color[c] = d_.color[j * 4 + c];
            }
            r.mu_t = d_.mu_t[j];
            r.rotation_index = q.rotation_index[j];
            const int per = sh_coeffs_per_component(ctx_.sh_degree);
            for (int band = 1; band <= ctx_.sh_degree; ++band) {
                const int wd = sh_band_width(band), first = sh_band_first(band);
                for (int c = 0; c < 3; ++c)
                    for (int t = 0; t < wd; ++t)
                        if (d_.sh[j * 3 * per + static_cast<std::size_t>(c) * per + first + t] !=
                            q.sh[band - 1][(j * 3 + c) * wd + t])
                            return violated("sh (code units)", 1, 0);
            }
        }
        return ok_status();
    }

    // Every gaussian of the job against its packed row, in job order.
    Status compare() {
        const std::size_t n = job_.indices.size();
        for (std::size_t k = 0; k < n; ++k) {
            // The packed row a few gaussians ahead, at random in the chunk: fetched while this
            // one is compared, so its miss is not waited for.
            if (k + kAhead < n) {
                const char* ahead = reinterpret_cast<const char*>(&w_.rows[w_.row_of[k + kAhead]]);
                __builtin_prefetch(ahead);
                __builtin_prefetch(ahead + sizeof(DecodedRow) - 1);
                prefetch_input(b_, job_.indices[k + kAhead]);
            }
            const std::size_t i = job_.indices[k], j = w_.row_of[k];
            const DecodedRow& r = w_.rows[j];
            const encoding::ExactRow& x = w_.exact[k];
            if (!geometry(i, r, x) || !appearance(i, j, r) || !time(i, r, x) || !ids(i, j)) {
                who_ = job_.name(k);
                return violated(failed_.field, failed_.err, failed_.bound);
            }
        }
        return ok_status();
    }

private:
    // The first deviation past its bound (the per-gaussian checks return false and leave it
    // here; the refusal is built once, outside the loop).
    struct Failure {
        const char* field = "";
        double err = 0, bound = 0;
    };

    bool fail(const char* field, double err, double bound) {
        failed_ = {field, err, bound};
        return false;
    }

    Error violated(std::string_view field, double err, double bound) const {
        return make_error(ErrorKind::limit, refusal::kBoundViolated,
                          gaussian(who_) + ": " + std::string(field) + " decodes " + num(err) +
                              " away from the input, over its bound " + num(bound));
    }

    // Position, scale (log domain) and rotation (up to sign, §6.4).
    bool geometry(std::size_t i, const DecodedRow& r, const encoding::ExactRow& x) {
        for (int c = 0; c < 3; ++c) {
            const double e = std::fabs(static_cast<double>(r.position[c]) -
                                       static_cast<double>(b_.position[i * 3 + c]));
            if (!(e <= lim_.pos)) return fail("position", e, lim_.pos);
            mx_.pos = std::max(mx_.pos, e);
        }
        for (int c = 0; c < 3; ++c) {
            const double e = std::fabs(r.log_scale[c] - x.log_scale[c]);
            if (!(e <= lim_.scale)) return fail("scale (relative, log domain)", e, lim_.scale);
            mx_.scale = std::max(mx_.scale, e);
        }
        double ep = 0, en = 0, kept = 0;
        for (int c = 0; c < 4; ++c) {
            const double dq = r.rotation[c], qc = x.rotation[c];
            ep = std::max(ep, std::fabs(dq - qc));
            en = std::max(en, std::fabs(dq + qc));
            if (c != r.rotation_index) kept = std::max(kept, std::fabs(dq - qc));
        }
        const double e = std::min(ep, en);
        if (!(kept <= lim_.rot_kept))
            return fail("rotation (a stored component)", kept, lim_.rot_kept);
        if (!(e <= lim_.rot)) return fail("rotation", e, lim_.rot);
        mx_.rot = std::max(mx_.rot, e);
        return true;
    }

    // Colour, opacity and the SH code units at each band's depth (§6.5).
    bool appearance(std::size_t i, std::size_t j, const DecodedRow& r) {
        for (int c = 0; c < 4; ++c) {
            const double e = std::fabs(static_cast<double>(r.color[c]) -
                                       static_cast<double>(b_.color[i * 4 + c]));
            const double bound = c < 3 ? lim_.rgb : lim_.alpha;
            if (!(e <= bound)) return fail(c < 3 ? "color" : "opacity", e, bound);
            double& largest = c < 3 ? mx_.rgb : mx_.alpha;
            largest = std::max(largest, e);
        }
        const int per = sh_coeffs_per_component(ctx_.sh_degree);
        for (int band = 1; band <= ctx_.sh_degree; ++band) {
            const int wd = sh_band_width(band), first = sh_band_first(band);
            const int depth = ctx_.depths[band - 1];
            const int bound = depth < 8 ? sh_depth_bound(depth) : 0;
            for (int c = 0; c < 3; ++c)
                for (int t = 0; t < wd; ++t) {
                    const std::size_t at = static_cast<std::size_t>(c) * per + first + t;
                    const int e = std::abs(d_.sh[j * 3 * per + at] - sh_byte(b_.sh[i * 3 * per + at]));
                    if (e > bound) return fail("sh (code units)", e, bound);
                    mx_.sh = std::max(mx_.sh, e);
                }
        }
        return true;
    }

    // sigma_t, motion and mu_t on their per-gaussian grids.
    bool time(std::size_t i, const DecodedRow& r, const encoding::ExactRow& x) {
        if (!r.never) {
            const double e = std::fabs(r.log_sigma - x.log_sigma);
            if (!(e <= lim_.sigma)) return fail("sigma_t (relative, log domain)", e, lim_.sigma);
            mx_.sigma = std::max(mx_.sigma, e);
        }
        for (int c = 0; c < 3; ++c) {
            const double v = b_.motion.empty() ? 0.0 : b_.motion[i * 3 + c];
            const double e = std::fabs(static_cast<double>(r.motion[c]) - v);
            const double bound =
                std::min(x.velocity_step * 0.5 * (1 + 0x1p-10) + kF32 * std::fabs(v),
                         lim_.motion_declared);
            if (!(e <= bound)) return fail("motion", e, bound);
            mx_.motion = std::max(mx_.motion, e);
        }
        const double mu = b_.mu_t[i];
        const double e = std::fabs(static_cast<double>(r.mu_t) - mu);
        const double bound =
            std::min(x.birth_step * 0.5 * (1 + 0x1p-10) + kF32 * std::fabs(mu), lim_.time_declared);
        if (!(e <= bound)) return fail("mu_t", e, bound);
        mx_.time = std::max(mx_.time, e);
        return true;
    }

    // object_id, source_group and source_index: exact.
    bool ids(std::size_t i, std::size_t j) {
        if (!b_.object_id.empty() && d_.object_id[j] != b_.object_id[i])
            return fail("object_id", 1, 0);
        if ((!b_.source_group.empty() && d_.source_group[j] != b_.source_group[i]) ||
            (!b_.source_index.empty() && d_.source_index[j] != b_.source_index[i]))
            return fail("source_group/source_index", 1, 0);
        return true;
    }

    const Context& ctx_;
    const encoding::Limits& lim_;
    const ChunkJob& job_;
    Work& w_;
    const GaussianBatch& b_;
    const GaussianBlock& d_;
    Maxima& mx_;
    std::uint64_t who_ = 0;
    Failure failed_;
};

Status verify_rows(const Context& ctx, const ChunkJob& job, Work& w, Maxima& mx) {
    mx = Maxima{};
    ChunkCheck check(ctx, job, w, mx);
    FOURDGS_TRY(check.gather());
    return check.compare();
}

// One chunk, step by step: position bins → order → rows → streams and records (step 4,
// encoding.hpp) → decoded back → verified.
Status encode_chunk(const Context& ctx, const ChunkJob& job, Work& w, EncodedChunk& out) {
    FOURDGS_TRY(bin_positions(ctx, job, w));
    choose_order(ctx, job.indices.size(), w);
    FOURDGS_TRY(quantize_rows(ctx, job, w));
    FOURDGS_TRY(encoding::encode_chunk_records(ctx, w.q, job.t0, job.t1, w.buffers, out.records));
    out.t0 = job.t0;
    out.t1 = job.t1;
    out.count = static_cast<std::uint32_t>(job.indices.size());
    if (!ctx.opt.verify) return ok_status();  // a file counted, never kept (WriterOptions::verify)
    FOURDGS_TRY(decode_back(ctx, out, w));
    return verify_rows(ctx, job, w, out.maxima);
}

}  // namespace

// What a WriteWorkspace holds: the per-thread working sets, the encoded chunks and the grouping.
struct WriteWorkspace::Impl {
    std::vector<Work> pool;
    std::vector<EncodedChunk> encoded;
    std::vector<std::uint32_t> order, window_of;
};

WriteWorkspace::WriteWorkspace() : impl_(std::make_unique<Impl>()) {}
WriteWorkspace::~WriteWorkspace() = default;
WriteWorkspace::WriteWorkspace(WriteWorkspace&&) noexcept = default;
WriteWorkspace& WriteWorkspace::operator=(WriteWorkspace&&) noexcept = default;

namespace {

// Encodes `jobs` into `outs` on up to ctx.opt.threads threads. The result does not depend on the
// thread count; on failure the error of the lowest-numbered failing job is returned.
Status encode_jobs(const Context& ctx, std::span<const ChunkJob> jobs,
                   std::vector<EncodedChunk>& outs, std::vector<Work>& pool) {
    outs.resize(jobs.size());
    unsigned threads = worker_threads(ctx.opt.threads);
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

// ---- options and the file around the chunks ------------------------------------------------

// The shared option checks, and the one this writer adds.
Status resolve_writer_options(const WriterOptions& opt, int sh_degree, Context& ctx) {
    FOURDGS_TRY(encoding::resolve_options(opt, sh_degree, ctx));
    if (opt.max_chunk_gaussians == 0 || opt.max_chunk_gaussians > (1u << 26))
        return bad_option("max_chunk_gaussians is " + std::to_string(opt.max_chunk_gaussians) +
                          ", must be in 1..67108864");
    return ok_status();
}

SummaryOptions summary_options(const WriterOptions& o) {
    return {o.write_index, o.write_crc, o.write_statistics, o.write_summary_offset};
}

Header make_header(const SceneHeader& sh, const Context& ctx, const content::Extras& extras,
                   std::uint64_t count, const std::array<double, 6>& aabb) {
    return encoding::make_header(sh, kModelGaussianBirth, count, aabb,
                                 ctx.chunk_compressed && count > 0, extras);
}

// The content records ahead of the chunks but the extras (content_records.hpp).
Status write_content(FileAssembler& as, const SceneHeader& sh, const Context& ctx,
                     const std::string& library, bool& application_written) {
    ByteWriter w;
    application_written = encoding::write_content(w, sh, ctx.opt, {}, library);
    return as.put(w);
}

// The extras, last before the first chunk (nothing at all when there are none).
Status put_extras(FileAssembler& as, const content::Extras& extras) {
    if (extras.records.empty()) return ok_status();
    return as.put(Bytes(extras.records));
}

Status append_chunk(FileAssembler& as, const EncodedChunk& c) {
    return as.add_chunk(c.records.records(c.t0, c.t1, c.count));
}

using chunk_plan::batch_rules;
using chunk_plan::check_declared_window;
using chunk_plan::group_by_window;
using chunk_plan::split_runs;

}  // namespace

// ---- one shot -------------------------------------------------------------------------------

namespace {

// write_scene into `sink`; when the sink is a MemorySink's, `memory` is its vector, which is
// given the room for the whole file at once (in fresh pages advised as large ones) once the
// chunks are encoded, instead of growing by doubling.
Status write_scene_to(const SceneInput& scene, const WriterOptions& options, ByteSink& sink,
                      WriteReport* report, std::vector<std::uint8_t>* memory) {
    const SceneHeader& sh = scene.header;
    const GaussianBatch& b = scene.gaussians;
    FOURDGS_TRY(encoding::validate_header(sh));
    FOURDGS_ASSIGN(const content::Extras extras, content::encode_extras(sh));
    Context ctx;
    FOURDGS_TRY(resolve_writer_options(options, sh.sh_degree, ctx));
    if (!options.verify && !options.grid)
        return bad_option("verify is false without a fixed grid: the Quantization record's bounds "
                          "are the measured maxima, which only verification measures");
    FOURDGS_TRY(encoding::validate_batch(b, sh.sh_degree, sh.duration_sec, batch_rules(true, 0)));
    const std::size_t n = b.count;
    if (n > std::numeric_limits<std::uint32_t>::max())
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          std::to_string(n) + " gaussians exceed this writer's 2^32 - 1");

    WriteWorkspace own;
    WriteWorkspace::Impl& ws = options.workspace ? options.workspace->impl() : own.impl();
    for (Work& w : ws.pool) w.steps = {};  // remembered for another grid

    // The Window Table: distinct windows sorted by (lo, hi); gaussians grouped by window.
    std::vector<std::uint32_t>& order = ws.order;
    std::vector<WindowTable::Window> windows;
    std::vector<std::size_t> window_first;  // first position in `order` of each window
    group_by_window(b, order, ws.window_of, windows, window_first);

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
    encoding::init_scene(ctx, sh, windows);
    Quantization quant;
    FOURDGS_TRY(encoding::make_grid(ctx, aabb, sh.cutoff, quant));
    // On a fixed grid the file declares the grid's worst case, so that every file on it (the
    // shards of one scene) carries the same Quantization record; verification enforces it.
    const Maxima fixed = encoding::analytic_maxima(ctx, sh.duration_sec);
    if (options.grid) {
        ctx.lim.motion_declared = fixed.motion;
        ctx.lim.time_declared = fixed.time;
    }

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
    std::vector<EncodedChunk>& encoded = ws.encoded;
    FOURDGS_TRY(encode_jobs(ctx, jobs, encoded, ws.pool));
    if (!options.workspace) ws.pool.clear();  // the working sets go before the file is assembled
    Maxima measured;
    for (const EncodedChunk& c : encoded) measured.merge(c.maxima);
    quant.bounds = encoding::make_bounds(ctx, options.grid ? fixed : measured);

    const Header header = make_header(sh, ctx, extras, n, aabb);
    if (memory) {
        // The chunks, the front matter's payloads, and room for the records around them.
        std::size_t size = extras.records.size() + (std::size_t{1} << 16) + 64 * encoded.size();
        for (const EncodedChunk& c : encoded) size += c.records.bytes.size();
        for (const AttachmentInput& a : sh.attachments) size += a.data.size();
        detail::reserve_fresh(*memory, memory->size() + size);
    }
    FileAssembler as(sink);
    FOURDGS_TRY(as.begin(header, quant, WindowTable{windows}));
    bool app = false;
    FOURDGS_TRY(write_content(as, sh, ctx, header.library, app));
    FOURDGS_TRY(put_extras(as, extras));
    for (const EncodedChunk& c : encoded) FOURDGS_TRY(append_chunk(as, c));
    const Statistics stats{n, static_cast<std::uint32_t>(as.chunk_count()), sh.duration_sec, aabb};
    FOURDGS_TRY(as.finish(summary_options(options), stats));
    if (report) {
        report->quantization = quant;
        report->windows = windows;
        report->gaussian_count = n;
        report->aabb = aabb;
        report->chunk_count = static_cast<std::uint32_t>(as.chunk_count());
        report->bytes_written = as.position();
    }
    return ok_status();
}

}  // namespace

Status write_scene(const SceneInput& scene, const WriterOptions& options, ByteSink& sink,
                   WriteReport* report) {
    return write_scene_to(scene, options, sink, report, nullptr);
}

Result<std::vector<std::uint8_t>> write_scene(const SceneInput& scene,
                                              const WriterOptions& options, WriteReport* report) {
    MemorySink sink;
    FOURDGS_TRY(write_scene_to(scene, options, sink, report, &sink.bytes()));
    return sink.take();
}

// ---- streaming ------------------------------------------------------------------------------

struct StreamingWriter::Impl {
    explicit Impl(ByteSink& s) : as(s) {}
    FileAssembler as;
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
                    return bad_input(refusal::kOutsideDeclaredAabb, gaussian(added + i),
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
        unsigned threads = worker_threads(ctx.opt.threads);
        const std::size_t round = std::max(1u, threads);
        for (std::size_t at = 0; at < jobs.size(); at += round) {
            const auto part = jobs.subspan(at, std::min(round, jobs.size() - at));
            FOURDGS_TRY(encode_jobs(ctx, part, encoded, pool));
            for (const EncodedChunk& c : encoded) FOURDGS_TRY(append_chunk(as, c));
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
    FOURDGS_TRY(encoding::validate_header(header));
    FOURDGS_ASSIGN(content::Extras extras, content::encode_extras(header));
    auto impl = std::make_unique<Impl>(sink);
    Context& ctx = impl->ctx;
    FOURDGS_TRY(resolve_writer_options(options, header.sh_degree, ctx));
    for (std::size_t i = 0; i < declaration.windows.size(); ++i)
        FOURDGS_TRY(check_declared_window(declaration.windows[i], header.duration_sec, i));
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
    encoding::init_scene(ctx, header, declaration.windows);
    Quantization quant;
    FOURDGS_TRY(encoding::make_grid(ctx, declaration.aabb, header.cutoff, quant));
    // Declared up front: the grid's analytic worst case, which verification then enforces.
    const Maxima declared = encoding::analytic_maxima(ctx, header.duration_sec);
    ctx.lim.motion_declared = declared.motion;
    ctx.lim.time_declared = declared.time;
    quant.bounds = encoding::make_bounds(ctx, declared);

    const Header h =
        make_header(header, ctx, extras, declaration.gaussian_count, declaration.aabb);
    impl->library = h.library;
    FOURDGS_TRY(impl->as.begin(h, quant, WindowTable{declaration.windows}));
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
    // Reserved up front, as FileAssembler::begin does: GCC 12 with the sanitizers otherwise sees
    // the first write into the empty buffer as a -Wstringop-overflow (a false positive).
    w.buffer().reserve(whole_record_size(256));
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
    FOURDGS_TRY(encoding::validate_batch(batch, m.header.sh_degree, m.header.duration_sec,
                                         batch_rules(false, m.added)));
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
    FOURDGS_TRY(encoding::validate_batch(batch, m.header.sh_degree, m.header.duration_sec,
                                         batch_rules(true, m.added)));
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
            return bad_input(refusal::kUndeclaredWindow, gaussian(m.added + i), "window",
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
    const Statistics stats{m.added, static_cast<std::uint32_t>(m.as.chunk_count()),
                           m.header.duration_sec, m.decl.aabb};
    FOURDGS_TRY(m.as.finish(summary_options(m.ctx.opt), stats));
    m.report.chunk_count = static_cast<std::uint32_t>(m.as.chunk_count());
    m.report.bytes_written = m.as.position();
    return ok_status();
}

const WriteReport& StreamingWriter::report() const { return impl_->report; }

}  // namespace fourdgs
