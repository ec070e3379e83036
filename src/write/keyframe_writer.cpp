// The keyframe-delta writer (fourdgs/keyframe_writer.hpp): steps → one file-wide grid → per-step
// quantized states (bins keyed by gaussian_id) → keyframes and bin-difference deltas → verified
// by composing with ComposedPopulation → records → summary with the appended index fields.
#include "fourdgs/keyframe_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "fourdgs/decode.hpp"
#include "fourdgs/detail/file_assembler.hpp"
#include "fourdgs/detail/keyframe_composition.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/quantize.hpp"
#include "fourdgs/stream.hpp"
#include "fourdgs/version.hpp"
#include "content_records.hpp"
#include "encoding.hpp"
#include "held_chunks.hpp"
#include "keyframe_states.hpp"
#include "platform/worker_threads.hpp"

namespace fourdgs {

using detail::ChunkRecords;
using detail::ChunkRef;
using detail::ComposedPopulation;
using detail::DeltaBins;
using detail::FileAssembler;
using detail::StateChunk;
using detail::decode_state_chunk_bins;
using detail::parse_state_chunk;
using keyframe_held::HeldChunk;
using keyframe_held::HeldChunks;
using keyframe_states::Ctx;
using keyframe_states::DeltaRows;
using keyframe_states::Identity;
using keyframe_states::build_state;
using keyframe_states::gather_rows;
using keyframe_states::match_rows;
using keyframe_states::optional_column;
using keyframe_states::reincarnate_rows;
using keyframe_states::same_values;
using keyframe_states::uid;
using keyframe_states::who;

namespace {

using encoding::bad_option;
using encoding::num;


// ---- validation -----------------------------------------------------------------------------

// The batch checks both writers make (encoding.hpp), then what a state adds: at most 2^26
// gaussians, one unique id each, and windows that cover the state's interval. `ids_checked`: the
// step's ids are the span an earlier step handed (a tracked sequence's), already found unique.
Status validate_step(const KeyframeStep& st, std::size_t s, double t1, int sh_degree,
                     double duration, bool ids_checked) {
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
    if (!ids_checked) seen.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        if (!ids_checked && !seen.insert(st.ids[i]).second)
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


// The Window Table's order (by lo, then hi), each window once.
void sort_unique(std::vector<WindowTable::Window>& w) {
    std::sort(w.begin(), w.end(), [](const auto& x, const auto& y) {
        return x.lo < y.lo || (x.lo == y.lo && x.hi < y.hi);
    });
    w.erase(std::unique(w.begin(), w.end()), w.end());
}

// What a pass finds of the steps so far (KeyframeStepFacts), and the last step's ids, found
// unique.
struct StepScan {
    KeyframeStepFacts facts;
    std::span<const std::uint32_t> checked_ids;
};

// Step s (ending at t1) checked (validate_step) and its facts added to `scan`'s.
Status scan_step(const KeyframeStep& st, std::size_t s, double t1, int sh_degree, double duration,
                 StepScan& scan) {
    const bool ids_checked = !scan.checked_ids.empty() &&
                             st.ids.data() == scan.checked_ids.data() &&
                             st.ids.size() == scan.checked_ids.size();
    FOURDGS_TRY(validate_step(st, s, t1, sh_degree, duration, ids_checked));
    scan.checked_ids = st.ids;
    KeyframeStepFacts& f = scan.facts;
    const GaussianBatch& b = st.gaussians;
    for (std::size_t i = 0; i < b.count; ++i) {
        for (int c = 0; c < 3; ++c) {
            const double v = b.position[i * 3 + c];
            if (!f.any_gaussian) f.aabb[c] = f.aabb[3 + c] = v;
            f.aabb[c] = std::min(f.aabb[c], v);
            f.aabb[3 + c] = std::max(f.aabb[3 + c], v);
        }
        f.any_gaussian = true;
        if (!b.win_lo.empty()) f.windows.push_back({b.win_lo[i], b.win_hi[i]});
        f.largest_id = std::max<std::uint64_t>(f.largest_id, st.ids[i]);
    }
    if (b.win_lo.empty() && b.count > 0) f.unwindowed = true;
    f.source_group |= !b.source_group.empty();
    f.source_index |= !b.source_index.empty();
    f.object_id |= !b.object_id.empty();
    if (f.windows.size() > (std::size_t{1} << 22)) sort_unique(f.windows);
    return ok_status();
}

// Where the facts a step source gave differ from those its steps hold: empty where they agree
// (the aabb bit for bit, the windows as a set).
std::string facts_differ(const KeyframeStepFacts& given, KeyframeStepFacts found) {
    KeyframeStepFacts g = given;
    sort_unique(g.windows);
    sort_unique(found.windows);
    if (std::memcmp(g.aabb.data(), found.aabb.data(), sizeof g.aabb) != 0) return "aabb";
    if (g.windows != found.windows || g.unwindowed != found.unwindowed) return "windows";
    if (g.any_gaussian != found.any_gaussian || g.largest_id != found.largest_id) return "ids";
    if (g.source_group != found.source_group || g.source_index != found.source_index ||
        g.object_id != found.object_id)
        return "optional columns";
    return {};
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


// One stream of a delta: its attribute id, channels and values (element-major).
using PutStream =
    std::function<Status(std::uint8_t id, int channels, std::span<const std::int32_t> values)>;

// The update group's streams in the order they are written (§11.5): the updated gaussians' ids,
// then each column that may change inside a GOP as bin differences — left out where every
// difference is 0, optional columns only where the file has them — with rotation and
// rotation_index restated absolutely, and only when some update changed a rotation. `values` is
// scratch. Refusal bin-out-of-range for a difference that does not fit i32.
Status update_streams(const Ctx& ctx, const ChunkBins& ref, const ChunkBins& cur,
                      const DeltaRows& rows, std::size_t step, std::vector<std::int32_t>& values,
                      const PutStream& put) {
    const std::size_t nu = rows.upd_cur.size();
    if (nu == 0) return ok_status();
    values.resize(nu);
    for (std::size_t k = 0; k < nu; ++k) values[k] = cur.gaussian_id[rows.upd_cur[k]];
    FOURDGS_TRY(put(attr::gaussian_id, 1, values));
    bool rotation_changed = false;
    for (std::size_t k = 0; k < nu && !rotation_changed; ++k) {
        const std::size_t a = rows.upd_ref[k], b = rows.upd_cur[k];
        rotation_changed = ref.rotation_index[a] != cur.rotation_index[b] ||
                           !same_values(&ref.rotation[a * 3], &cur.rotation[b * 3], 3);
    }
    Status failed = ok_status();
    encoding::for_each_column(cur, [&](std::uint8_t id, const std::vector<std::int32_t>& col, int w) {
        if (!failed.ok() || id == attr::gaussian_id || id == attr::sigma_t ||
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
                std::copy_n(&col[std::size_t{rows.upd_cur[k]} * w], w, &values[k * w]);
        } else {
            bool any = false;
            for (std::size_t k = 0; k < nu; ++k)
                for (int c = 0; c < w; ++c) {
                    const std::int64_t d =
                        std::int64_t{col[std::size_t{rows.upd_cur[k]} * w + c]} -
                        std::int64_t{rcol[std::size_t{rows.upd_ref[k]} * w + c]};
                    if (d < std::numeric_limits<std::int32_t>::min() ||
                        d > std::numeric_limits<std::int32_t>::max()) {
                        failed = make_error(
                            ErrorKind::invalid_argument, refusal::kBinOutOfRange,
                            "step " + std::to_string(step) + ": the bin difference of '" +
                                attr::kNames[id] + "' for gaussian_id " +
                                std::to_string(uid(cur.gaussian_id[rows.upd_cur[k]])) +
                                " does not fit i32");
                        return;
                    }
                    values[k * w + c] = static_cast<std::int32_t>(d);
                    any |= d != 0;
                }
            if (!any) return;
        }
        failed = put(id, w, values);
    });
    return failed;
}

// The update streams' mode estimates (estimate_modes), each with its attribute id, in the order
// update_streams puts them: estimate_delta's, which encode_delta then need not make again.
using UpdateModes = std::vector<std::pair<std::uint8_t, ModeEstimate>>;

// The mode encode_stream would take alone for `values` under ModeChoice::estimate, from the
// estimate `m` already made of the same values (the same residual bytes it would compute), or
// so.mode where that estimate is not the one it makes or leaves the choice open: two candidates
// closer than kModeEstimateMargin, or a constant stream (written as such).
int estimated_mode(const StreamEncodeOptions& so, const ModeEstimate& m, int channels,
                   std::span<const std::int32_t> values) {
    if (so.choice != ModeChoice::estimate || so.mode != -1 || so.symbol_width != 0) return so.mode;
    if (std::equal(values.begin() + channels, values.end(), values.begin())) return so.mode;
    const double keep = 1 - kModeEstimateMargin;
    if (m.delta_bytes < keep * m.raw_bytes) return stream_mode::delta;
    if (m.raw_bytes < keep * m.delta_bytes) return stream_mode::raw;
    return so.mode;
}

// The delta between `ref` and `cur` (rows: match_rows of the two), written as the Delta Chunk
// `chunk`, whose span and chain fields (t0, t1, delta_mode, offsets, depth) the caller has set.
// `modes`: estimate_delta's of the same delta, where it was made.
Status encode_delta(const Ctx& ctx, const ChunkBins& ref, const ChunkBins& cur,
                    const DeltaRows& rows, DeltaChunk chunk, std::size_t step,
                    const UpdateModes* modes, encoding::ChunkBuffers& buf, Encoded& e) {
    const StreamEncodeOptions so = encoding::stream_options(ctx.enc);
    // Updates: gaussian_id, then each changed column as differences; rotation absolute.
    ByteWriter updates;
    std::size_t put = 0;  // the update streams put so far
    FOURDGS_TRY(update_streams(ctx, ref, cur, rows, step, buf.values,
                               [&](std::uint8_t id, int w, std::span<const std::int32_t> v) {
                                   StreamEncodeOptions o = so;
                                   if (modes && put < modes->size() &&
                                       (*modes)[put].first == id)
                                       o.mode = estimated_mode(so, (*modes)[put].second, w, v);
                                   ++put;
                                   return encode_stream(updates, id, static_cast<std::uint8_t>(w),
                                                        v, o, buf.stream);
                               }));
    // Births: the full attribute set.
    ChunkBins births;
    gather_rows(cur, rows.born, births);
    ByteWriter birth_block;
    if (!rows.born.empty())
        FOURDGS_TRY(encoding::encode_attribute_streams(ctx.enc, births, birth_block, buf.stream));
    // Deaths: gaussian_id only.
    ByteWriter deaths;
    std::vector<std::int32_t>& values = buf.values;
    values.resize(rows.died.size());
    for (std::size_t k = 0; k < rows.died.size(); ++k) values[k] = ref.gaussian_id[rows.died[k]];
    if (!rows.died.empty())
        FOURDGS_TRY(encode_stream(deaths, attr::gaussian_id, 1, values, so, buf.stream));

    buf.block.buffer().clear();
    write_delta_groups(buf.block, updates.buffer(), birth_block.buffer(), deaths.buffer());
    chunk.update_count = static_cast<std::uint32_t>(rows.upd_cur.size());
    chunk.birth_count = static_cast<std::uint32_t>(rows.born.size());
    chunk.death_count = static_cast<std::uint32_t>(rows.died.size());
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
    if (!rows.born.empty())
        FOURDGS_TRY(encoding::append_band_records(ctx.enc, births, buf, e.records));
    e.count = chunk.update_count + chunk.birth_count + chunk.death_count;
    return ok_status();
}

// A stream's bytes as ModeChoice::estimate sees them: the smaller of its raw and delta coding's
// order-0 residual bytes (estimate_modes), plus its header.
double estimated_stream_bytes(const ModeEstimate& m) {
    return std::min(m.raw_bytes, m.delta_bytes) + kStreamHeaderSize;
}

double estimated_stream_bytes(int channels, std::span<const std::int32_t> values) {
    if (values.empty()) return 0;
    return estimated_stream_bytes(estimate_modes(static_cast<std::uint8_t>(channels), values));
}

// What the delta between `ref` and `cur` (rows: match_rows of the two) would take, estimated
// from its streams before the codec: every stream it writes (the updates', the births' attribute
// streams and SH bands, the deaths' ids), each estimated_stream_bytes. The same refusals as
// encode_delta's differences. No codec runs: a pass over the updated rows and a sample of each
// stream (estimate_modes). `modes` gets the update streams' estimates.
Result<double> estimate_delta(const Ctx& ctx, const ChunkBins& ref, const ChunkBins& cur,
                              const DeltaRows& rows, std::size_t step,
                              std::vector<std::int32_t>& values, ChunkBins& births,
                              UpdateModes& modes) {
    double bytes = 0;
    modes.clear();
    FOURDGS_TRY(update_streams(ctx, ref, cur, rows, step, values,
                               [&](std::uint8_t id, int w, std::span<const std::int32_t> v) {
                                   // update_streams puts no empty stream
                                   modes.emplace_back(
                                       id, estimate_modes(static_cast<std::uint8_t>(w), v));
                                   bytes += estimated_stream_bytes(modes.back().second);
                                   return ok_status();
                               }));
    if (!rows.born.empty()) {
        gather_rows(cur, rows.born, births);
        encoding::for_each_column(births, [&](std::uint8_t id, const std::vector<std::int32_t>& col,
                                              int w) {
            const bool present = !optional_column(id) ||
                                 (id == attr::source_group   ? births.has_source_group
                                  : id == attr::source_index ? births.has_source_index
                                                             : births.has_object_id);
            if (present) bytes += estimated_stream_bytes(w, col);
        });
        for (int band = 1; band <= births.sh_bands; ++band) {
            values.assign(births.sh[band - 1].begin(), births.sh[band - 1].end());
            bytes += estimated_stream_bytes(3 * sh_band_width(band), values);
        }
    }
    values.resize(rows.died.size());
    for (std::size_t k = 0; k < rows.died.size(); ++k) values[k] = ref.gaussian_id[rows.died[k]];
    bytes += estimated_stream_bytes(1, values);
    return bytes;
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
    const std::vector<std::uint8_t> none;  // a band b does not carry
    for (int band = 1; band <= a.sh_bands; ++band)
        if (a.sh[band - 1] != (band <= b.sh_bands ? b.sh[band - 1] : none)) {
            what = "sh band " + std::to_string(band);
            return false;
        }
    return true;
}

// ---- options and the grid ------------------------------------------------------------------

Status resolve(const KeyframeWriterOptions& o, const SceneHeader& h, Ctx& ctx) {
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
    // Read back as a reader reads it: the record's own opcode picks the parser (the encoder wrote
    // a Chunk exactly when `keyframe`).
    FOURDGS_ASSIGN(StateChunk parsed, parse_state_chunk(rv));
    FOURDGS_TRY(decode_state_chunk_bins(ctx.enc.scene, parsed, band_span, dopt, bins, delta,
                                        scratch));
    if (parsed.chunk) {
        target.reset(ctx.enc.sh_degree);
        FOURDGS_TRY(target.assign_keyframe(bins, ref));
    } else {
        FOURDGS_TRY(target.apply(delta, ref));
    }
    // The composed state as a reader holds it: the population's own columns while its slots are
    // in id order (what materialize would copy), else sorted into `composed`.
    const ChunkBins* got = &target.slot_bins();
    if (!target.in_id_order()) {
        target.materialize(composed);
        got = &composed;
    }
    std::string what;
    if (!same_bins(expected, *got, what))
        return make_error(ErrorKind::limit, refusal::kBoundViolated,
                          "the state composed from the chunk over [" + num(t0) + ", " + num(t1) +
                              ") differs from the quantized state in " + what);
    return ok_status();
}

// ---- the writer, a pass at a time ----------------------------------------------------------

// What write_keyframe_delta carries from one pass to the next. Each member function is one pass
// or one step of it; write() takes them in order, and that order is the order of the refusals.
class KeyframeDeltaWriter {
public:
    KeyframeDeltaWriter(const KeyframeStepSource& source, const SceneHeader& header,
                        const KeyframeWriterOptions& options)
        : source_(source), header_(header), options_(options), duration_(header.duration_sec),
          ns_(source.t0.size()) {}

    Status write(ByteSink& sink, KeyframeWriteReport* report);

private:
    // Where step s ends: the next step's t0, or the duration for the last.
    double t1_of(std::size_t s) const { return s + 1 < ns_ ? source_.t0[s + 1] : duration_; }
    Result<const KeyframeStep*> fetch(std::size_t s) const;
    std::uint32_t window_index(double lo, double hi) const;

    Status check_steps() const;
    Status scan_steps();
    void take_facts(const KeyframeStepFacts& facts);
    Status plan_schedule();
    Status chain_depths();
    Status encode_states(HeldChunks& held, KeyframeWriteReport* report);
    Status write_front(FileAssembler& as, const content::Extras& extras);
    Status write_chunks(HeldChunks& held, FileAssembler& as);
    void fill_report(const FileAssembler& as, KeyframeWriteReport& report) const;

    // Pass 2's composition state: the populations a delta composes onto, and the offsets (from
    // the first chunk) its chain fields name.
    struct Composing {
        ChunkBins bins, composed;
        ComposedPopulation pop_prev, pop_key;
        DecodeScratch scratch;
        DeltaBins delta;
        std::uint64_t key_offset = 0, prev_offset = 0;
    };
    Status encode_state(std::size_t s, std::uint64_t offset, Composing& c,
                        KeyframeIndexFields& k);
    Status encode_delta_state(std::size_t s, Composing& c, DeltaChunk& head);
    Status rebirth_turned(std::size_t s, Identity& ident);

    const KeyframeStepSource& source_;
    const SceneHeader& header_;
    const KeyframeWriterOptions& options_;
    const double duration_;
    const std::size_t ns_;
    Ctx ctx_;

    // Pass 1 (or the step source): the scene's extent, windows and ids, and the Window Table.
    KeyframeStepFacts facts_;
    std::vector<WindowTable::Window> windows_;
    Quantization quant_;

    // The schedule: kind, mode and depth per step.
    std::vector<bool> is_key_, kf_ref_, choose_;
    std::vector<std::uint16_t> depth_;
    std::uint16_t max_depth_ = 0;
    std::uint32_t keyframes_ = 0;
    std::uint64_t distinct_ = 0;  // the Header's gaussian_count, from pass 2

    // Pass 2's working states and buffers, and the chunks it encoded.
    ChunkBins raw_, prev_, cur_, keyframe_state_;
    std::vector<std::uint32_t> window_of_;  // the current step's gaussians' windows
    encoding::ChunkBuffers buffers_, other_buffers_;
    Encoded enc_, other_;
    DeltaRows rows_, other_rows_;  // each candidate's matched rows
    // build_state's comparison of cur_ with prev_, row for row, where it made one, and cur_'s
    // with keyframe_state_, where every state since the keyframe had one.
    const std::vector<std::uint8_t>* changed_from_prev_ = nullptr;
    keyframe_states::KeyframeChanges changed_from_key_;
    ChunkBins births_;             // estimate_delta's scratch
    UpdateModes modes_, other_modes_;  // each candidate's update streams' estimates
};

Status KeyframeDeltaWriter::write(ByteSink& sink, KeyframeWriteReport* report) {
    FOURDGS_TRY(resolve(options_, header_, ctx_));
    FOURDGS_ASSIGN(const content::Extras extras, content::encode_extras(header_));
    FOURDGS_TRY(check_steps());
    if (source_.facts) take_facts(*source_.facts);
    else FOURDGS_TRY(scan_steps());
    encoding::init_scene(ctx_.enc, header_, windows_);
    FOURDGS_TRY(make_grid(ctx_, facts_.aabb, header_, quant_));
    ctx_.enc.scene.quantization = quant_;
    FOURDGS_TRY(plan_schedule());
    HeldChunks held(options_.held_bytes);
    FOURDGS_TRY(encode_states(held, report));
    FileAssembler as(sink);
    FOURDGS_TRY(write_front(as, extras));
    FOURDGS_TRY(write_chunks(held, as));
    const Statistics stats{distinct_, static_cast<std::uint32_t>(ns_), duration_, facts_.aabb};
    const WriterOptions& o = options_.base;
    FOURDGS_TRY(as.finish({o.write_index, o.write_crc, o.write_statistics, o.write_summary_offset},
                          stats));
    if (report) fill_report(as, *report);
    return ok_status();
}

Result<const KeyframeStep*> KeyframeDeltaWriter::fetch(std::size_t s) const {
    if (!source_.step) return bad_option("the step source has no step function");
    FOURDGS_ASSIGN(const KeyframeStep* st, source_.step(s));
    if (!st) return bad_option("the step source gave no step " + std::to_string(s));
    if (st->t0 != source_.t0[s])
        return bad_option("step " + std::to_string(s) + " has t0 " + num(st->t0) +
                          " but the source declared " + num(source_.t0[s]));
    return st;
}

// The steps tile [0, duration): a first step at 0, then strictly increasing starts.
Status KeyframeDeltaWriter::check_steps() const {
    if (ns_ == 0)
        return bad_option("no steps: a keyframe-delta file tiles [0, duration) with states");
    if (source_.t0[0] != 0)
        return bad_option("the first step's t0 is " + num(source_.t0[0]) + ", not 0");
    for (std::size_t s = 0; s < ns_; ++s) {
        const double t0 = source_.t0[s], t1 = t1_of(s);
        if (!std::isfinite(t0) || !(t0 < t1))
            return bad_option("step " + std::to_string(s) + " has t0 " + num(t0) +
                              " and ends at " + num(t1) +
                              "; steps must start strictly increasing, below the duration");
    }
    return ok_status();
}

// Pass 1: each step validated, and what the grid and the Window Table need from all of them —
// the aabb, the windows, the optional columns, the largest caller id.
Status KeyframeDeltaWriter::scan_steps() {
    StepScan scan;
    for (std::size_t s = 0; s < ns_; ++s) {
        FOURDGS_ASSIGN(const KeyframeStep* step, fetch(s));
        FOURDGS_TRY(scan_step(*step, s, t1_of(s), header_.sh_degree, duration_, scan));
    }
    take_facts(scan.facts);
    return ok_status();
}

// The steps' facts kept, and the Window Table made of their windows, sorted and unique.
void KeyframeDeltaWriter::take_facts(const KeyframeStepFacts& facts) {
    facts_ = facts;
    ctx_.has_group = facts.source_group;
    ctx_.has_index = facts.source_index;
    ctx_.has_object = facts.object_id;
    windows_ = facts.windows;
    if (facts.unwindowed) windows_.push_back({0, duration_});
    sort_unique(windows_);
    if (facts.unwindowed) ctx_.window_full = window_index(0, duration_);
}

// The index of [lo, hi) in the Window Table (pass 1 put every window of every step there).
std::uint32_t KeyframeDeltaWriter::window_index(double lo, double hi) const {
    auto it = std::lower_bound(windows_.begin(), windows_.end(), WindowTable::Window{lo, hi},
                               [](const auto& x, const auto& y) {
                                   return x.lo < y.lo || (x.lo == y.lo && x.hi < y.hi);
                               });
    return static_cast<std::uint32_t>(it - windows_.begin());
}

// The schedule: which steps are keyframes, which deltas' references the options fix, and which
// are left to pass 2 to decide on cost (marked `choose`).
Status KeyframeDeltaWriter::plan_schedule() {
    is_key_.assign(ns_, false);
    kf_ref_.assign(ns_, false);
    choose_.assign(ns_, false);
    depth_.assign(ns_, 0);
    const std::vector<std::uint8_t>& schedule = options_.keyframe_steps;
    if (!schedule.empty() && (schedule.size() != ns_ || schedule[0] == 0))
        return bad_option("keyframe_steps has " + std::to_string(schedule.size()) +
                          " entries for " + std::to_string(ns_) +
                          " steps; it needs one per step, and step 0 a keyframe");
    for (std::size_t s = 0; s < ns_; ++s) {
        is_key_[s] = schedule.empty() ? s % options_.keyframe_every == 0 : schedule[s] != 0;
        if (is_key_[s]) {
            ++keyframes_;
            continue;
        }
        const double t0 = source_.t0[s], t1 = t1_of(s);
        bool extra = false;
        for (double x : options_.keyframe_referenced_at) extra |= t0 <= x && x < t1;
        kf_ref_[s] = extra || (!options_.cheaper_reference && !options_.chained);
        choose_[s] = !extra && options_.cheaper_reference;
    }
    if (!options_.cheaper_reference) FOURDGS_TRY(chain_depths());
    return ok_status();
}

// Each delta's depth from the references chosen so far, once they are all known.
Status KeyframeDeltaWriter::chain_depths() {
    max_depth_ = 0;
    for (std::size_t s = 0; s < ns_; ++s) {
        if (is_key_[s]) continue;
        const std::uint32_t d = kf_ref_[s] ? 1u : depth_[s - 1] + 1u;
        if (d > 0xFFFF) return bad_option("a chain deeper than 65535 deltas: lower keyframe_every");
        depth_[s] = static_cast<std::uint16_t>(d);
        max_depth_ = std::max(max_depth_, depth_[s]);
    }
    return ok_status();
}

// Pass 2: each step fetched once, its state built, encoded as its keyframe or delta, verified
// by composing it as a reader would, and held with its index fields until the front is written.
Status KeyframeDeltaWriter::encode_states(HeldChunks& held, KeyframeWriteReport* report) {
    if (report) {
        report->chunk_bytes.clear();
        report->live_count.clear();
        report->states.clear();
    }
    Identity ident;
    ident.next_fresh = facts_.any_gaussian ? facts_.largest_id + 1 : 0;
    // Facts the source gave are found again here, each step checked as pass 1 would have.
    std::optional<StepScan> rescan;
    if (source_.facts) rescan.emplace();
    prev_ = ChunkBins{};
    prev_.sh_bands = ctx_.enc.sh_degree;
    Composing c;
    c.pop_prev.reset(ctx_.enc.sh_degree);
    c.pop_key.reset(ctx_.enc.sh_degree);
    std::uint64_t offset = 0;
    for (std::size_t s = 0; s < ns_; ++s) {
        FOURDGS_ASSIGN(const KeyframeStep* st, fetch(s));
        if (rescan) FOURDGS_TRY(scan_step(*st, s, t1_of(s), header_.sh_degree, duration_, *rescan));
        const GaussianBatch& b = st->gaussians;
        window_of_.resize(b.win_lo.empty() ? 0 : b.count);
        for (std::size_t i = 0; i < window_of_.size(); ++i) {
            window_of_[i] = window_index(b.win_lo[i], b.win_hi[i]);
            // Not in the table only where the source's facts left it out.
            if (window_of_[i] >= windows_.size() ||
                !(windows_[window_of_[i]] == WindowTable::Window{b.win_lo[i], b.win_hi[i]}))
                return bad_option(who(s, i) + ": its window is not among the facts' windows");
        }
        FOURDGS_TRY(build_state(ctx_, {st->t0, st->ids, st->gaussians}, s, is_key_[s], window_of_,
                                prev_, ident, raw_, cur_));
        if (options_.rebirth_turned && !is_key_[s]) FOURDGS_TRY(rebirth_turned(s, ident));
        changed_from_prev_ = ident.changed_known ? &ident.changed : nullptr;
        if (is_key_[s]) changed_from_key_.keyframe(cur_);
        else changed_from_key_.step(keyframe_state_, cur_, changed_from_prev_);
        HeldChunk h;
        h.index.live_count = cur_.count;
        FOURDGS_TRY(encode_state(s, offset, c, h.index));
        h.t0 = source_.t0[s];
        h.t1 = t1_of(s);
        h.count = enc_.count;
        h.records = std::move(enc_.records);
        const std::uint64_t length = h.records.bytes.size();
        FOURDGS_TRY(held.hold(std::move(h)));
        c.prev_offset = offset;
        offset += length;
        if (report) {
            report->chunk_bytes.push_back(length);
            report->live_count.push_back(cur_.count);
            if (report->keep_states) report->states.push_back(cur_);
        }
        std::swap(prev_, cur_);
    }
    distinct_ = ident.distinct;
    if (report) {
        report->first_fresh_id = facts_.any_gaussian ? facts_.largest_id + 1 : 0;
        report->incarnation_of = std::move(ident.incarnation_of);
    }
    if (rescan)
        if (const std::string what = facts_differ(facts_, rescan->facts); !what.empty())
            return bad_option("the step source's facts differ from its steps' in their " + what);
    return ok_status();
}

// KeyframeWriterOptions::rebirth_turned for delta s: the updates against the previous state
// whose rotation changed, reincarnated where the delta is estimated smaller that way — their
// updates become births and deaths, and the others' rotations are not restated.
Status KeyframeDeltaWriter::rebirth_turned(std::size_t s, Identity& ident) {
    match_rows(prev_, cur_, rows_, ident.changed_known ? &ident.changed : nullptr);
    std::vector<std::uint32_t> turned;  // rows of cur_
    DeltaRows& reborn = other_rows_;    // the delta with them reborn
    reborn.upd_ref.clear();
    reborn.upd_cur.clear();
    reborn.born = rows_.born;
    reborn.died = rows_.died;
    for (std::size_t k = 0; k < rows_.upd_cur.size(); ++k) {
        const std::uint32_t a = rows_.upd_ref[k], b = rows_.upd_cur[k];
        if (prev_.rotation_index[a] != cur_.rotation_index[b] ||
            !same_values(&prev_.rotation[a * std::size_t{3}], &cur_.rotation[b * std::size_t{3}],
                         3)) {
            turned.push_back(b);
            reborn.born.push_back(b);
            reborn.died.push_back(a);
        } else {
            reborn.upd_ref.push_back(a);
            reborn.upd_cur.push_back(b);
        }
    }
    if (turned.empty() || reborn.upd_cur.empty()) return ok_status();
    // A difference outside i32 refuses an estimate: the delta is then left as it is, for
    // encode_delta_state to refuse or to reference the keyframe.
    const Result<double> as_updates =
        estimate_delta(ctx_, prev_, cur_, rows_, s, buffers_.values, births_, modes_);
    const Result<double> as_births =
        estimate_delta(ctx_, prev_, cur_, reborn, s, buffers_.values, births_, modes_);
    if (!as_updates.ok() || !as_births.ok() ||
        !(*as_births < (1 - kReferenceEstimateMargin) * *as_updates))
        return ok_status();
    return reincarnate_rows(turned, s, ident, cur_, raw_);
}

// One state of pass 2 into enc_, as a keyframe or as a delta on its reference, verified; `k`
// gets its chain fields (offsets from the first chunk).
Status KeyframeDeltaWriter::encode_state(std::size_t s, std::uint64_t offset, Composing& c,
                                         KeyframeIndexFields& k) {
    const double t0 = source_.t0[s], t1 = t1_of(s);
    if (is_key_[s]) {
        FOURDGS_TRY(encode_keyframe(ctx_, cur_, t0, t1, buffers_, enc_));
        FOURDGS_TRY(verify(ctx_, enc_, true, t0, t1, offset, c.pop_key, cur_, c.scratch, c.bins,
                           c.delta, c.composed));
        c.pop_prev = c.pop_key;
        keyframe_state_ = cur_;
        c.key_offset = offset;
        k.chunk_kind = kChunkKindKeyframe;
        return ok_status();
    }
    DeltaChunk head;
    head.t0 = t0;
    head.t1 = t1;
    FOURDGS_TRY(encode_delta_state(s, c, head));
    if (kf_ref_[s]) {
        ComposedPopulation next = c.pop_key;
        FOURDGS_TRY(verify(ctx_, enc_, false, t0, t1, offset, next, cur_, c.scratch, c.bins,
                           c.delta, c.composed));
        c.pop_prev = std::move(next);
    } else {
        FOURDGS_TRY(verify(ctx_, enc_, false, t0, t1, offset, c.pop_prev, cur_, c.scratch, c.bins,
                           c.delta, c.composed));
    }
    k.chunk_kind = kChunkKindDelta;
    k.delta_mode = head.delta_mode;
    k.reference_offset = head.reference_offset;
    k.keyframe_offset = head.keyframe_offset;
    k.depth = head.depth;
    return ok_status();
}

// Delta s into enc_ on the reference the schedule fixed, or, where it is decided on cost, on the
// smaller: both candidates encoded, keyframe-referenced when its records (chunk and band records)
// are strictly smaller, chained on a tie. With reference_choice estimate, the candidates are
// first estimated (estimate_delta) and only one is encoded where its estimate is below
// (1 - kReferenceEstimateMargin) x the other's; both, as above, where the two are closer. The
// choice is per delta, since a chained delta references the previous state whatever reference
// that state's own delta took. Either candidate alone is a valid file: one that is refused (a
// bin difference outside i32) leaves the other; both refused, the chained one's refusal stands.
Status KeyframeDeltaWriter::encode_delta_state(std::size_t s, Composing& c, DeltaChunk& head) {
    auto set_reference = [&](bool keyed) -> Status {
        head.delta_mode = keyed ? kDeltaModeKeyframe : kDeltaModeChained;
        head.reference_offset = keyed ? c.key_offset : c.prev_offset;
        head.keyframe_offset = c.key_offset;
        const std::uint32_t depth = keyed ? 1u : depth_[s - 1] + 1u;
        if (depth > 0xFFFF)
            return bad_option("a chain deeper than 65535 deltas: lower keyframe_every");
        head.depth = static_cast<std::uint16_t>(depth);
        return ok_status();
    };
    // Right after a keyframe both references are the keyframe, at the same offset and depth: the
    // two candidates are the same bytes but for delta_mode, and a tie goes to chained.
    if (choose_[s] && !is_key_[s - 1]) {
        FOURDGS_TRY(set_reference(true));
        const DeltaChunk keyed_head = head;
        Status chained = set_reference(false);
        match_rows(prev_, cur_, rows_, changed_from_prev_);
        match_rows(keyframe_state_, cur_, other_rows_, changed_from_key_.get());
        // Which candidates are encoded: both, unless the estimate tells them apart.
        bool try_chained = chained.ok(), try_keyed = true;
        const UpdateModes *chain_modes = nullptr, *key_modes = nullptr;
        if (options_.reference_choice == ModeChoice::estimate && try_chained) {
            auto by_chain = estimate_delta(ctx_, prev_, cur_, rows_, s, buffers_.values, births_,
                                           modes_);
            auto by_key = estimate_delta(ctx_, keyframe_state_, cur_, other_rows_, s,
                                         buffers_.values, births_, other_modes_);
            chain_modes = &modes_;
            key_modes = &other_modes_;
            if (!by_chain.ok()) chained = std::move(by_chain).error();
            if (!by_key.ok() && !chained.ok()) return chained;
            const double m = 1 - kReferenceEstimateMargin;
            try_keyed = by_key.ok() && !(chained.ok() && *by_chain < m * *by_key);
            try_chained = chained.ok() && !(by_key.ok() && *by_key < m * *by_chain);
        }
        // A candidate left out counts as refused: the other is encoded, and a refusal of it
        // stands.
        const bool chained_left_out = chained.ok() && !try_chained;
        const Status left_out = bad_option("the other reference was estimated smaller");
        Status keyed = try_keyed ? ok_status() : left_out;
        if (chained_left_out) chained = left_out;
        // The two candidates share nothing but the states they read: on two threads when the
        // options allow, the same bytes either way.
        auto encode_keyed = [&] {
            keyed = encode_delta(ctx_, keyframe_state_, cur_, other_rows_, keyed_head, s,
                                 key_modes, other_buffers_, other_);
        };
        std::optional<std::thread> beside;
        if (try_keyed && try_chained && worker_threads(options_.base.threads) > 1)
            beside.emplace(encode_keyed);
        else if (try_keyed)
            encode_keyed();
        if (try_chained)
            chained = encode_delta(ctx_, prev_, cur_, rows_, head, s, chain_modes, buffers_, enc_);
        if (beside) beside->join();
        if (!chained.ok() && !keyed.ok()) return chained_left_out ? keyed : chained;
        kf_ref_[s] = !chained.ok() ||
                     (keyed.ok() && other_.records.bytes.size() < enc_.records.bytes.size());
        if (kf_ref_[s]) {
            std::swap(enc_, other_);
            head = keyed_head;
        }
    } else {
        FOURDGS_TRY(set_reference(kf_ref_[s]));
        const ChunkBins& ref = kf_ref_[s] ? keyframe_state_ : prev_;
        match_rows(ref, cur_, rows_, kf_ref_[s] ? changed_from_key_.get() : changed_from_prev_);
        FOURDGS_TRY(encode_delta(ctx_, ref, cur_, rows_, head, s, nullptr, buffers_, enc_));
    }
    depth_[s] = head.depth;
    max_depth_ = std::max(max_depth_, depth_[s]);
    return ok_status();
}

// The front of the file: Header, Quantization, Window Table, then the content records with the
// keyframe-delta advisory metadata and the scene extras.
Status KeyframeDeltaWriter::write_front(FileAssembler& as, const content::Extras& extras) {
    Header h = encoding::make_header(header_, kModelKeyframeDelta, distinct_, facts_.aabb,
                                     ctx_.enc.chunk_compressed, extras);
    const bool indexed = options_.base.write_index && ns_ > 1 && options_.base.write_statistics;
    if (header_.profile.empty() && indexed) h.profile = "keyframed";
    ctx_.enc.scene.header = h;
    FOURDGS_TRY(as.begin(h, quant_, WindowTable{windows_}));
    ByteWriter w;
    const Metadata advisory{"keyframe-delta",
                            {{"keyframe_interval_sec", bound_string(duration_ / keyframes_)},
                             {"gop_max_depth", std::to_string(max_depth_)}}};
    encoding::write_content(w, header_, options_.base, std::span<const Metadata>(&advisory, 1),
                            h.library);
    content::write_extras(w, extras);
    return as.put(w);
}

// The held chunks after the front, their offsets moved by the front's length; each is released
// once written.
Status KeyframeDeltaWriter::write_chunks(HeldChunks& held, FileAssembler& as) {
    const std::uint64_t front = as.position();
    for (std::size_t i = 0; i < held.size(); ++i) {
        FOURDGS_ASSIGN(HeldChunk* h, held.take(i));
        std::optional<KeyframeIndexFields> k = h->index;
        if (k->chunk_kind == kChunkKindDelta) {
            k->reference_offset += front;
            k->keyframe_offset += front;
            patch_delta_references(
                std::span<std::uint8_t>(h->records.bytes.data(), h->records.chunk_length),
                k->reference_offset, k->keyframe_offset);
        }
        ChunkRecords records = h->records.records(h->t0, h->t1, h->count);
        records.keyframe = k;
        FOURDGS_TRY(as.add_chunk(records));
    }
    return ok_status();
}

// What the caller asked to be told of the file written.
void KeyframeDeltaWriter::fill_report(const FileAssembler& as,
                                      KeyframeWriteReport& report) const {
    report.base.quantization = quant_;
    report.base.windows = windows_;
    report.base.gaussian_count = distinct_;
    report.base.aabb = facts_.aabb;
    report.base.chunk_count = static_cast<std::uint32_t>(ns_);
    report.base.bytes_written = as.position();
    report.keyframes = keyframes_;
    report.deltas = static_cast<std::uint32_t>(ns_) - keyframes_;
    report.keyframe_referenced = 0;
    for (std::size_t s = 0; s < ns_; ++s) report.keyframe_referenced += !is_key_[s] && kf_ref_[s];
    report.gop_max_depth = max_depth_;
}

}  // namespace

Status write_keyframe_delta(const KeyframeStepSource& steps, const SceneHeader& header,
                            const KeyframeWriterOptions& options, ByteSink& sink,
                            KeyframeWriteReport* report) {
    KeyframeDeltaWriter writer(steps, header, options);
    return writer.write(sink, report);
}

Status write_keyframe_delta(std::span<const KeyframeStep> steps, const SceneHeader& header,
                            const KeyframeWriterOptions& options, ByteSink& sink,
                            KeyframeWriteReport* report) {
    KeyframeStepSource source;
    source.t0.reserve(steps.size());
    for (const KeyframeStep& st : steps) source.t0.push_back(st.t0);
    source.step = [steps](std::size_t s) -> Result<const KeyframeStep*> { return &steps[s]; };
    return write_keyframe_delta(source, header, options, sink, report);
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
