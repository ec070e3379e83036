// The keyframe-delta writer's quantized states (keyframe_states.hpp): a step's gaussians
// quantized, given file ids and sorted by them, and the rows of a delta between two states.
#include "keyframe_states.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <type_traits>

#include "fourdgs/quantize.hpp"

namespace fourdgs::keyframe_states {

void gather_rows(const ChunkBins& src, std::span<const std::uint32_t> order, ChunkBins& dst) {
    encoding::gather_rows(src, order, dst);
    dst.has_gaussian_id = true;
}

namespace {

// Quantizes row i of `st` into row i of `out` (mu_t left for the caller when derived); `steps`
// remembers §6.3's steps from row to row.
Status quantize_row(const Ctx& ctx, const Step& st, std::size_t s, std::size_t i,
                    std::span<const std::uint32_t> window_of, encoding::StepCache& steps,
                    ChunkBins& out) {
    const GaussianBatch& b = st.gaussians;
    const std::uint32_t window = b.win_lo.empty() ? ctx.window_full : window_of[i];
    if (const char* field = encoding::quantize_row(ctx.enc, b, i, window, i, out, nullptr, &steps))
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
        if (!same_values(&a.sh[band - 1][i * w], &b.sh[band - 1][j * w], w)) return false;
    }
    return true;
}

// Equal on every column that may change inside a GOP, mu_t excluded. Called for every gaussian
// of every step (twice), so it compares the columns by name rather than through for_each_column.
bool same_variable(const ChunkBins& a, std::size_t i, const ChunkBins& b, std::size_t j) {
    auto same = [&](const std::vector<std::int32_t>& x, const std::vector<std::int32_t>& y,
                    std::size_t w) {
        if (x.empty() || y.empty()) return x.empty() == y.empty();
        return same_values(x.data() + i * w, y.data() + j * w, w);
    };
    return same(a.position, b.position, 3) && same(a.rotation, b.rotation, 3) &&
           same(a.rotation_index, b.rotation_index, 1) && same(a.color, b.color, 3) &&
           same(a.opacity, b.opacity, 1) && same(a.scale, b.scale, 3) &&
           same(a.motion, b.motion, 3) && same(a.source_group, b.source_group, 1) &&
           same(a.source_index, b.source_index, 1) && same(a.object_id, b.object_id, 1);
}

// same_variable(a, j, b, j) where row j of `a` is row j of `b` with only the columns
// requantize_row takes for `moved` (the kRow* bits) quantized again: only those can differ.
bool same_requantized(const ChunkBins& a, const ChunkBins& b, std::size_t j, std::uint8_t moved) {
    const std::size_t r = j * 3;
    if ((moved & encoding::kRowPosition) && !same_values(&a.position[r], &b.position[r], 3))
        return false;
    if ((moved & encoding::kRowScale) && !same_values(&a.scale[r], &b.scale[r], 3)) return false;
    if ((moved & encoding::kRowRotation) &&
        (a.rotation_index[j] != b.rotation_index[j] ||
         !same_values(&a.rotation[r], &b.rotation[r], 3)))
        return false;
    if ((moved & encoding::kRowColour) &&
        (a.opacity[j] != b.opacity[j] || !same_values(&a.color[r], &b.color[r], 3)))
        return false;
    return true;
}

// Sets changed[k] where row k of column x differs from row k of column y (w values a row), for
// k < n: same_variable's test of one column for every row at once, in a loop that vectorizes.
// A column one state has and the other lacks differs in every row.
template <std::size_t W>
void mark_column(const std::vector<std::int32_t>& x, const std::vector<std::int32_t>& y,
                 std::size_t n, std::uint8_t* changed) {
    if (x.empty() || y.empty()) {
        if (x.empty() != y.empty()) std::fill_n(changed, n, std::uint8_t{1});
        return;
    }
    const std::int32_t* __restrict a = x.data();
    const std::int32_t* __restrict b = y.data();
    for (std::size_t k = 0; k < n; ++k) {
        std::uint8_t d = 0;
        for (std::size_t c = 0; c < W; ++c) d |= a[k * W + c] != b[k * W + c];
        changed[k] |= d;
    }
}

// changed[k]: row k of `a` and row k of `b` (the same gaussian in both) differ on a column that
// may change inside a GOP, mu_t excluded — !same_variable(a, k, b, k) for every k < a.count.
void mark_changed_rows(const ChunkBins& a, const ChunkBins& b, std::vector<std::uint8_t>& changed) {
    const std::size_t n = a.count;
    changed.assign(n, 0);
    std::uint8_t* c = changed.data();
    mark_column<3>(a.position, b.position, n, c);
    mark_column<3>(a.rotation, b.rotation, n, c);
    mark_column<1>(a.rotation_index, b.rotation_index, n, c);
    mark_column<3>(a.color, b.color, n, c);
    mark_column<1>(a.opacity, b.opacity, n, c);
    mark_column<3>(a.scale, b.scale, n, c);
    mark_column<3>(a.motion, b.motion, n, c);
    mark_column<1>(a.source_group, b.source_group, n, c);
    mark_column<1>(a.source_index, b.source_index, n, c);
    mark_column<1>(a.object_id, b.object_id, n, c);
}

// The bits of v as a U of its size (C++20's bit cast, which the wasm build's libc++ lacks).
template <class U, class T>
U bits_of(T v) {
    static_assert(sizeof(T) == sizeof(U));
    U u;
    std::memcpy(&u, &v, sizeof u);
    return u;
}

// What moved[i] says of row i: which columns requantize_row takes again (encoding::kRow*), and
// kRowOther where any other input moved (then the whole row is quantized again).
constexpr std::uint8_t kRowOther = 0x10, kRowAll = 0xFF;

// `last` := the bits of `now`.
template <class T, class U>
void keep_input(std::span<const T> now, std::vector<U>& last) {
    last.resize(now.size());
    if (!now.empty()) std::memcpy(last.data(), now.data(), now.size() * sizeof(T));
}

// Sets `bit` in moved[i] where row i of `now` (W values a row; bits compared, so -0 and 0 differ)
// is not row i of `last`, for i < n (n > 0; W 0: as many as the column has, the SH's); kRowAll in
// every row where the column came or went. `last` is left holding the bits of `now`: the pass
// that compares a row stores it (a vector loop, where a second pass copying only the moved rows
// branched on every row).
template <std::size_t W, class T, class U>
void mark_and_keep_input(std::span<const T> now, std::vector<U>& last, std::size_t n,
                         std::uint8_t* moved, std::uint8_t bit) {
    static_assert(sizeof(T) == sizeof(U));
    if (now.size() != last.size()) {
        std::fill_n(moved, n, kRowAll);
        return keep_input(now, last);
    }
    if (now.empty()) return;  // absent in both
    const std::size_t w = W ? W : now.size() / n;
    U* __restrict b = last.data();
    for (std::size_t i = 0; i < n; ++i) {
        std::uint8_t d = 0;
        for (std::size_t c = 0; c < w; ++c) {
            const U v = bits_of<U>(now[i * w + c]);
            d |= v != b[i * w + c];
            b[i * w + c] = v;
        }
        moved[i] |= static_cast<std::uint8_t>(d * bit);
    }
}

// f(width, now, last, bit) for each input column of a step (and its window) with its copy in
// `last` (a LastInputs): width an integral_constant, the values a row (0: the SH's, as many as the
// column has); bit what mark_moved_rows sets where a row of it moved.
template <class Last, class F>
void each_input(const GaussianBatch& b, std::span<const std::uint32_t> window, Last& last, F&& f) {
    using One = std::integral_constant<std::size_t, 1>;
    using Three = std::integral_constant<std::size_t, 3>;
    using Four = std::integral_constant<std::size_t, 4>;
    f(Three{}, b.position, last.position, encoding::kRowPosition);
    f(Three{}, b.scale, last.scale, encoding::kRowScale);
    f(Four{}, b.rotation, last.rotation, encoding::kRowRotation);
    f(Four{}, b.color, last.color, encoding::kRowColour);
    f(Three{}, b.motion, last.motion, kRowOther);
    f(One{}, b.mu_t, last.mu_t, kRowOther);
    f(One{}, b.sigma_t, last.sigma_t, kRowOther);
    f(One{}, window, last.window, kRowOther);
    f(One{}, b.object_id, last.object_id, kRowOther);
    f(One{}, b.source_group, last.source_group, kRowOther);
    f(One{}, b.source_index, last.source_index, kRowOther);
    f(std::integral_constant<std::size_t, 0>{}, b.sh, last.sh, kRowOther);
}

// moved[i]: where row i of the step's inputs (and its window) differs from the last step's, for
// every row i < n (0: nowhere; the kRow* bits: which), with `last` := those inputs (valid). Every
// row kRowAll when `last` holds no step of n rows, and `last` left as it was.
void mark_moved_rows(const GaussianBatch& b, std::span<const std::uint32_t> window,
                     LastInputs& last, std::vector<std::uint8_t>& moved) {
    const std::size_t n = b.count;
    const bool none = !last.valid || last.count != n;
    moved.assign(n, none ? kRowAll : std::uint8_t{0});
    if (none || n == 0) return;
    std::uint8_t* m = moved.data();
    each_input(b, window, last, [&](auto width, auto now, auto& kept, std::uint8_t bit) {
        mark_and_keep_input<decltype(width)::value>(std::span(now), kept, n, m, bit);
    });
}

// `last` := the inputs of the step whose state was just built.
void keep_inputs(const GaussianBatch& b, std::span<const std::uint32_t> window, LastInputs& last) {
    last.count = b.count;
    each_input(b, window, last, [](auto, auto now, auto& kept, std::uint8_t) {
        keep_input(std::span(now), kept);
    });
    last.valid = true;
}

// The common step of a tracked sequence: the same ids as the previous step and every gaussian's
// invariants as they were, so every gaussian keeps its file id and its row. Then the state is the
// previous one with the rows whose inputs moved quantized again in place, and a derived mu_t the
// previous row's where no variable column changed (outside keyframes). A still gaussian's row is
// not touched: the same inputs give the same bins. False (`out` half built, `ident.inputs` this
// step's) where that does not hold or a bin does not fit: build_state then takes the rows one at
// a time, which finds the state or the refusal, and keeps the inputs again.
bool build_state_as_before(const Ctx& ctx, const Step& st, bool keyframe,
                           std::span<const std::uint32_t> window_of, const ChunkBins& prev,
                           Identity& ident, ChunkBins& out) {
    const std::size_t n = st.gaussians.count;
    const bool same_ids = !ident.last_ids.empty() && st.ids.data() == ident.last_ids.data() &&
                          st.ids.size() == ident.last_ids.size() && prev.count == n &&
                          ident.order.size() == n && ident.inputs.valid;
    if (!same_ids) return false;
    const GaussianBatch& b = st.gaussians;
    mark_moved_rows(b, window_of, ident.inputs, ident.moved);
    out = prev;
    ident.changed.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint8_t moved = ident.moved[i];
        if (!moved) continue;
        const std::uint32_t window = b.win_lo.empty() ? ctx.window_full : window_of[i];
        const std::uint32_t j = ident.prev_row[i];
        // Only the columns whose inputs moved, where nothing else did: row j holds the bins of
        // the others' inputs, the same bits (the invariants among them).
        if (moved & kRowOther) {
            if (encoding::quantize_row(ctx.enc, b, i, window, j, out, nullptr, &ident.steps) ||
                !same_invariants(out, j, prev, j))
                return false;
            ident.changed[j] = !same_variable(out, j, prev, j);
        } else {
            if (encoding::requantize_row(ctx.enc, b, i, j, moved, out)) return false;
            ident.changed[j] = !same_requantized(out, prev, j, moved);
        }
    }
    if (b.mu_t.empty())
        for (std::size_t k = 0; k < n; ++k) {
            if (!keyframe && !ident.changed[k]) continue;  // prev's mu_t, copied
            const double birth =
                ident.steps.get(ctx.enc, out.sigma_t[k], out.flags[k] != 0, uid(out.window_index[k]))
                    .birth;
            if (!encoding::bin_of(st.t0, birth, out.mu_t[k])) return false;
        }
    ident.last_ids = st.ids;
    ident.changed_known = !keyframe;
    return true;
}

}  // namespace

Status build_state(const Ctx& ctx, const Step& st, std::size_t s, bool keyframe,
                   std::span<const std::uint32_t> window_of, const ChunkBins& prev,
                   Identity& ident, ChunkBins& raw, ChunkBins& out) {
    ident.changed_known = false;
    if (build_state_as_before(ctx, st, keyframe, window_of, prev, ident, out))
        return ok_status();
    ident.inputs.valid = false;  // until the state is built from these inputs
    const std::size_t n = st.gaussians.count;
    encoding::resize_bins(raw, n, ctx.enc.sh_degree);
    raw.has_source_group = ctx.has_group;
    raw.has_source_index = ctx.has_index;
    raw.has_object_id = ctx.has_object;
    const bool derive_mu = st.gaussians.mu_t.empty();
    const bool same_ids = !ident.last_ids.empty() && st.ids.data() == ident.last_ids.data() &&
                          st.ids.size() == ident.last_ids.size() && prev.count == n;
    bool reincarnated = false;
    std::unordered_map<std::uint32_t, std::uint32_t> live;
    if (!same_ids) live.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        FOURDGS_TRY(quantize_row(ctx, st, s, i, window_of, ident.steps, raw));
        const std::uint32_t caller = st.ids[i];
        std::optional<std::uint32_t> file;
        std::optional<std::uint32_t> prow;
        if (same_ids) {
            // Every caller id is live, at the row the previous step put it.
            const std::uint32_t r = ident.prev_row[i];
            if (same_invariants(raw, i, prev, r)) {
                file = uid(prev.gaussian_id[r]);
                prow = r;
            }
        } else if (auto it = ident.live.find(caller); it != ident.live.end()) {
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
                ident.incarnation_of.push_back(caller);
            }
            ++ident.distinct;
        }
        raw.gaussian_id[i] = static_cast<std::int32_t>(*file);
        if (!same_ids) {
            live.emplace(caller, *file);
        } else if (!prow) {
            ident.live[caller] = *file;
            reincarnated = true;
        }
        if (derive_mu) {
            const bool never = raw.flags[i] != 0;
            if (!keyframe && prow && same_variable(raw, i, prev, *prow)) {
                raw.mu_t[i] = prev.mu_t[*prow];
            } else if (!encoding::bin_of(st.t0,
                                         ident.steps
                                             .get(ctx.enc, raw.sigma_t[i], never,
                                                  uid(raw.window_index[i]))
                                             .birth,
                                         raw.mu_t[i])) {
                return encoding::bad_input(refusal::kBinOutOfRange, who(s, i), "mu_t",
                                           "does not fit an i32 bin");
            }
        }
    }
    if (!same_ids || reincarnated) {
        if (!same_ids) ident.live = std::move(live);
        std::vector<std::uint32_t>& order = ident.order;
        order.resize(n);
        std::iota(order.begin(), order.end(), 0u);
        std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
            return uid(raw.gaussian_id[a]) < uid(raw.gaussian_id[b]);
        });
        ident.prev_row.resize(n);
        for (std::size_t k = 0; k < n; ++k)
            ident.prev_row[order[k]] = static_cast<std::uint32_t>(k);
    }
    ident.last_ids = st.ids;
    keep_inputs(st.gaussians, window_of, ident.inputs);
    gather_rows(raw, ident.order, out);
    return ok_status();
}

Status reincarnate_rows(std::span<const std::uint32_t> rows, std::size_t s, Identity& ident,
                        ChunkBins& state, ChunkBins& scratch) {
    if (rows.empty()) return ok_status();
    const std::size_t n = state.count;
    // Every file id so far is a caller id (at most the largest) or an earlier fresh one (below
    // next_fresh), so the fresh ids sort after every row, in the order given: the new order is
    // the other rows, then these.
    std::vector<std::uint32_t> sorted;  // the rows of `state` in their new order
    sorted.reserve(n);
    std::vector<std::uint8_t> again(n, 0);
    for (std::uint32_t k : rows) again[k] = 1;
    for (std::uint32_t k = 0; k < n; ++k)
        if (!again[k]) sorted.push_back(k);
    for (std::uint32_t k : rows) {
        if (ident.next_fresh > 0xFFFFFFFFull)
            return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                              who(s, ident.order[k]) +
                                  ": no gaussian_id is left for a new incarnation");
        const auto file = static_cast<std::uint32_t>(ident.next_fresh++);
        const std::uint32_t caller = ident.last_ids[ident.order[k]];
        ident.live[caller] = file;
        ident.incarnation_of.push_back(caller);
        state.gaussian_id[k] = static_cast<std::int32_t>(file);
        ++ident.distinct;
        sorted.push_back(k);
    }
    std::swap(state, scratch);
    gather_rows(scratch, sorted, state);
    std::vector<std::uint32_t> order(n);
    for (std::size_t k = 0; k < n; ++k) {
        order[k] = ident.order[sorted[k]];
        ident.prev_row[order[k]] = static_cast<std::uint32_t>(k);
    }
    ident.order = std::move(order);
    ident.changed_known = false;
    return ok_status();
}

void match_rows(const ChunkBins& ref, const ChunkBins& cur, DeltaRows& rows,
                const std::vector<std::uint8_t>* changed) {
    rows.upd_ref.clear();
    rows.upd_cur.clear();
    rows.born.clear();
    rows.died.clear();
    if (ref.count == cur.count && ref.gaussian_id == cur.gaussian_id) {
        // The same gaussians in the same rows (a tracked step): none born or dead, and the rows
        // compared a column at a time.
        if (!changed) {
            mark_changed_rows(ref, cur, rows.changed);
            changed = &rows.changed;
        }
        for (std::size_t k = 0; k < cur.count; ++k)
            if ((*changed)[k] || ref.mu_t[k] != cur.mu_t[k]) {
                rows.upd_ref.push_back(static_cast<std::uint32_t>(k));
                rows.upd_cur.push_back(static_cast<std::uint32_t>(k));
            }
        return;
    }
    std::size_t i = 0, j = 0;
    while (i < ref.count || j < cur.count) {
        const bool has_r = i < ref.count, has_c = j < cur.count;
        const std::uint32_t ri = has_r ? uid(ref.gaussian_id[i]) : 0;
        const std::uint32_t ci = has_c ? uid(cur.gaussian_id[j]) : 0;
        if (has_r && (!has_c || ri < ci)) {
            rows.died.push_back(static_cast<std::uint32_t>(i++));
        } else if (has_c && (!has_r || ci < ri)) {
            rows.born.push_back(static_cast<std::uint32_t>(j++));
        } else {
            if (!same_variable(ref, i, cur, j) || ref.mu_t[i] != cur.mu_t[j]) {
                rows.upd_ref.push_back(static_cast<std::uint32_t>(i));
                rows.upd_cur.push_back(static_cast<std::uint32_t>(j));
            }
            ++i;
            ++j;
        }
    }
}

void KeyframeChanges::keyframe(const ChunkBins& key) {
    changed.assign(key.count, 0);
    known = true;
}

void KeyframeChanges::step(const ChunkBins& key, const ChunkBins& cur,
                           const std::vector<std::uint8_t>* from_prev) {
    known = known && from_prev && from_prev->size() == cur.count && changed.size() == cur.count &&
            key.count == cur.count;
    if (!known) return;
    for (std::size_t k = 0; k < cur.count; ++k)
        if ((*from_prev)[k]) changed[k] = !same_variable(key, k, cur, k);
}

}  // namespace fourdgs::keyframe_states
