// Per-attribute error between two splat clouds (compare.hpp).
#include "fourdgs/tools/compare.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <span>
#include <string>

namespace fourdgs {
namespace {

Error size_mismatch(std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal::kInputSizeMismatch, std::move(message));
}

Status check_columns(const PlyCloud& c, const char* which) {
    const std::size_t n = c.count;
    const std::size_t sh = n * static_cast<std::size_t>(c.sh_per_gaussian());
    if (c.position.size() != 3 * n || c.scale.size() != 3 * n || c.rotation.size() != 4 * n ||
        c.color.size() != 4 * n || c.sh.size() != sh)
        return size_mismatch(std::string("cloud ") + which + "'s columns do not hold its " +
                             std::to_string(n) + " gaussians");
    return ok_status();
}

// A grid over B's positions of about one gaussian a cell (at most a few times as many cells as
// gaussians), each cell's gaussians contiguous in a list sorted by cell (a counting sort).
class PositionIndex {
public:
    explicit PositionIndex(const PlyCloud& b) : b_(b) {
        const std::size_t n = b.count;
        std::array<double, 3> extent{};
        for (int c = 0; c < 3; ++c) {
            lo_[c] = std::numeric_limits<double>::infinity();
            double hi = -lo_[c];
            for (std::size_t i = 0; i < n; ++i) {
                lo_[c] = std::min<double>(lo_[c], b.position[i * 3 + c]);
                hi = std::max<double>(hi, b.position[i * 3 + c]);
            }
            extent[c] = n ? hi - lo_[c] : 0;
        }
        double volume = 1, largest = 0;
        int sides = 0;
        for (double e : extent)
            if (e > 0) {
                volume *= e;
                largest = std::max(largest, e);
                ++sides;
            }
        cell_ = sides == 0 ? 1.0 : std::pow(volume / static_cast<double>(std::max<std::size_t>(n, 1)), 1.0 / sides);
        if (!(cell_ > 0) || !std::isfinite(cell_)) cell_ = largest > 0 ? largest : 1.0;
        // Rounding up each side can multiply the cells; widen them until they are few enough.
        for (;;) {
            std::size_t total = 1;
            for (int c = 0; c < 3; ++c) {
                dims_[c] = static_cast<std::int64_t>(std::floor(extent[c] / cell_)) + 1;
                total *= static_cast<std::size_t>(dims_[c]);
            }
            if (total <= 4 * n + 64) break;
            cell_ *= 1.25;
        }
        const std::size_t cells = static_cast<std::size_t>(dims_[0] * dims_[1] * dims_[2]);
        first_.assign(cells + 1, 0);
        std::vector<std::uint32_t> cell_of_b(n);
        for (std::size_t i = 0; i < n; ++i) {
            cell_of_b[i] = static_cast<std::uint32_t>(index_of(cell_of(&b.position[i * 3])));
            ++first_[cell_of_b[i] + 1];
        }
        for (std::size_t k = 1; k <= cells; ++k) first_[k] += first_[k - 1];
        members_.resize(n);
        std::vector<std::size_t> next(first_.begin(), first_.end() - 1);
        for (std::size_t i = 0; i < n; ++i) members_[next[cell_of_b[i]]++] = i;
        used_.assign(n, false);
    }

    double cell() const { return cell_; }

    // Marks gaussian j of the cloud taken: nearest() no longer returns it.
    void take(std::size_t j) { used_[j] = true; }

    // The nearest gaussian of the cloud to `p` not yet taken, within kReach cells (ties: the
    // lower index); the cloud's count when there is none.
    std::size_t nearest(const float* p) const {
        const std::array<std::int64_t, 3> home = cell_of(p);
        std::size_t best = b_.count;
        double best_d2 = std::numeric_limits<double>::infinity();
        for (std::int64_t r = 0; r <= kReach; ++r) {
            // A cell of shell r is at least (r - 1) cells from `p`: stop once that is further
            // than the best found.
            if (best < b_.count && r >= 1 && double(r - 1) * cell_ * double(r - 1) * cell_ > best_d2)
                break;
            for (std::int64_t dx = -r; dx <= r; ++dx)
                for (std::int64_t dy = -r; dy <= r; ++dy)
                    for (std::int64_t dz = -r; dz <= r; ++dz) {
                        if (std::max({std::llabs(dx), std::llabs(dy), std::llabs(dz)}) != r) continue;
                        const std::array<std::int64_t, 3> c = {home[0] + dx, home[1] + dy, home[2] + dz};
                        if (c[0] < 0 || c[1] < 0 || c[2] < 0 || c[0] >= dims_[0] ||
                            c[1] >= dims_[1] || c[2] >= dims_[2])
                            continue;
                        const std::size_t cell = index_of(c);
                        for (std::size_t m = first_[cell]; m < first_[cell + 1]; ++m) {
                            const std::size_t j = members_[m];
                            if (used_[j]) continue;
                            const float* q = &b_.position[j * 3];
                            double d2 = 0;
                            for (int k = 0; k < 3; ++k) d2 += (double(q[k]) - p[k]) * (double(q[k]) - p[k]);
                            if (d2 < best_d2 || (d2 == best_d2 && j < best)) {
                                best_d2 = d2;
                                best = j;
                            }
                        }
                    }
        }
        return best;
    }

private:
    static constexpr std::int64_t kReach = 8;

    // The cell of a position, clamped into the grid (a position of A outside B's box searches
    // from the nearest cell of it).
    std::array<std::int64_t, 3> cell_of(const float* p) const {
        std::array<std::int64_t, 3> c{};
        for (int k = 0; k < 3; ++k) {
            const double v = std::floor((double(p[k]) - lo_[k]) / cell_);
            // (NaN, from a NaN coordinate, lands in cell 0 too.)
            c[k] = v >= 0 ? static_cast<std::int64_t>(std::min(v, double(dims_[k] - 1))) : 0;
        }
        return c;
    }
    std::size_t index_of(const std::array<std::int64_t, 3>& c) const {
        return static_cast<std::size_t>((c[0] * dims_[1] + c[1]) * dims_[2] + c[2]);
    }

    const PlyCloud& b_;
    std::array<double, 3> lo_{};
    std::array<std::int64_t, 3> dims_{1, 1, 1};
    double cell_ = 1;
    std::vector<std::size_t> first_, members_;
    std::vector<bool> used_;
};

// The samples of one attribute, summarized.
struct Samples {
    explicit Samples(std::string n) : name(std::move(n)) {}
    std::string name;
    std::vector<float> values;
    double sum_sq = 0, max = 0;

    void reserve(std::size_t n) { values.reserve(n); }
    void add(double e) {
        values.push_back(static_cast<float>(e));
        sum_sq += e * e;
        max = std::max(max, e);
    }
    // `counts`: scratch for order_statistic.
    AttributeError summary(std::vector<std::uint32_t>& counts) {
        AttributeError a;
        a.name = name;
        a.samples = values.size();
        a.max = max;
        if (values.empty()) return a;
        a.rms = std::sqrt(sum_sq / static_cast<double>(values.size()));
        const std::size_t at = static_cast<std::size_t>(std::ceil(0.99 * values.size())) - 1;
        a.p99 = order_statistic(values, at, counts);
        return a;
    }

    // The value std::nth_element puts at `at` (0-based, < values.size()). Errors are
    // non-negative numbers, whose bits sort as they do: their top 16 bits count them into
    // buckets, and only the bucket holding `at` is ordered (nth_element over all of them was a
    // quarter of the error measure's own time). Values that are not (NaN, a sign bit) take
    // nth_element. `counts`: scratch, 2^16 entries.
    static float order_statistic(std::vector<float>& values, std::size_t at,
                                 std::vector<std::uint32_t>& counts) {
        counts.assign(std::size_t{1} << 16, 0);
        std::uint32_t highest = 0;
        for (const float v : values) {
            std::uint32_t u;
            std::memcpy(&u, &v, sizeof u);
            highest = std::max(highest, u);
            ++counts[u >> 16];
        }
        if (highest > 0x7F800000u) {  // NaN or negative: not ordered by their bits
            std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(at),
                             values.end());
            return values[at];
        }
        std::size_t before = 0;
        std::uint32_t bucket = 0;
        while (before + counts[bucket] <= at) before += counts[bucket++];
        std::vector<float> in;
        in.reserve(counts[bucket]);
        for (const float v : values) {
            std::uint32_t u;
            std::memcpy(&u, &v, sizeof u);
            if (u >> 16 == bucket) in.push_back(v);
        }
        const auto nth = in.begin() + static_cast<std::ptrdiff_t>(at - before);
        std::nth_element(in.begin(), nth, in.end());
        return *nth;
    }
};

// A unit quaternion, xyzw, from stored components (any norm; the zero quaternion stays zero).
std::array<double, 4> unit(const float* q) {
    double n = 0;
    for (int c = 0; c < 4; ++c) n += double(q[c]) * q[c];
    n = std::sqrt(n);
    std::array<double, 4> u{};
    for (int c = 0; c < 4; ++c) u[c] = n > 0 ? q[c] / n : 0.0;
    return u;
}

// Mutual nearest neighbours among the gaussians not yet matched (`matched` over A, the taken ones
// of both indexes), in rounds over what is left, into `pairs`: a gaussian whose partner is
// missing from the other cloud stays unmatched rather than taking another's; duplicates (equal
// positions) pair up one a round.
void pair_nearest(const PlyCloud& a, const PlyCloud& b, PositionIndex& in_a, PositionIndex& in_b,
                  std::vector<bool>& matched, std::vector<std::pair<std::size_t, std::size_t>>& pairs) {
    for (int round = 0; round < 8; ++round) {
        std::size_t made = 0;
        for (std::size_t i = 0; i < a.count; ++i) {
            if (matched[i]) continue;
            const std::size_t j = in_b.nearest(&a.position[i * 3]);
            if (j == b.count || in_a.nearest(&b.position[j * 3]) != i) continue;
            pairs.push_back({i, j});
            matched[i] = true;
            in_b.take(j);
            in_a.take(i);
            ++made;
        }
        if (made == 0) break;
    }
}

// The caller's pairs (CompareOptions::partner), the gaussians left without one paired by
// position among themselves.
Status given_pairs(const PlyCloud& a, const PlyCloud& b, std::span<const std::uint32_t> partner,
                   std::vector<std::pair<std::size_t, std::size_t>>& pairs) {
    if (partner.size() != b.count)
        return size_mismatch("given pairs need one entry for each of B's " +
                             std::to_string(b.count) + " gaussians; " +
                             std::to_string(partner.size()) + " given");
    std::vector<bool> matched(a.count, false);
    for (std::size_t j = 0; j < b.count; ++j) {
        const std::uint32_t i = partner[j];
        if (i == kNoPartner) continue;
        if (i >= a.count || matched[i])
            return size_mismatch("gaussian " + std::to_string(j) + " of B is given partner " +
                                 std::to_string(i) + " of A, which " +
                                 (i >= a.count ? "A does not hold" : "another already has"));
        matched[i] = true;
        pairs.push_back({i, j});
    }
    if (pairs.size() < a.count && pairs.size() < b.count) {
        PositionIndex in_a(a), in_b(b);
        for (const auto& [i, j] : pairs) {
            in_a.take(i);
            in_b.take(j);
        }
        pair_nearest(a, b, in_a, in_b, matched, pairs);
    }
    // In order of A's index, each held once (`matched`): std::sort's order, each pair placed at
    // its index rather than sorted.
    std::vector<std::size_t> partner_of(a.count, b.count);
    for (const auto& [i, j] : pairs) partner_of[i] = j;
    pairs.clear();
    for (std::size_t i = 0; i < a.count; ++i)
        if (partner_of[i] != b.count) pairs.push_back({i, partner_of[i]});
    return ok_status();
}

}  // namespace

std::string_view to_string(CompareMatch match) {
    switch (match) {
        case CompareMatch::automatic: return "auto";
        case CompareMatch::order: return "order";
        case CompareMatch::position: return "position";
        case CompareMatch::given: return "given";
    }
    return "unknown";
}

std::optional<CompareMatch> parse_compare_match(std::string_view name) {
    for (CompareMatch m : {CompareMatch::automatic, CompareMatch::order, CompareMatch::position})
        if (name == to_string(m)) return m;
    return std::nullopt;
}

const AttributeError* CompareReport::find(std::string_view name) const {
    for (const AttributeError& a : attributes)
        if (a.name == name) return &a;
    return nullptr;
}

namespace {

// Both clouds hold gaussians, in columns that hold them.
Status check_clouds(const PlyCloud& a, const PlyCloud& b) {
    FOURDGS_TRY(check_columns(a, "A"));
    FOURDGS_TRY(check_columns(b, "B"));
    if (a.count == 0 || b.count == 0)
        return make_error(ErrorKind::invalid_argument, refusal::kNoFrames,
                          std::string("cloud ") + (a.count == 0 ? "A" : "B") +
                              " holds no gaussians; there is nothing to compare");
    return ok_status();
}

// The errors of B's gaussians against A's over `pairs` (index in A, index in B), matched as
// `match` says.
CompareReport measure_pairs(const PlyCloud& a, const PlyCloud& b, CompareMatch match,
                            const std::vector<std::pair<std::size_t, std::size_t>>& pairs);

}  // namespace

Result<CompareReport> compare_clouds(const PlyCloud& a, const PlyCloud& b,
                                     std::span<const std::uint32_t> partner) {
    FOURDGS_TRY(check_clouds(a, b));
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    pairs.reserve(std::min(a.count, b.count));
    FOURDGS_TRY(given_pairs(a, b, partner, pairs));
    return measure_pairs(a, b, CompareMatch::given, pairs);
}

Result<CompareReport> compare_clouds(const PlyCloud& a, const PlyCloud& b,
                                     const CompareOptions& options) {
    FOURDGS_TRY(check_clouds(a, b));
    if (options.match == CompareMatch::order && a.count != b.count)
        return size_mismatch("matching by order needs as many gaussians in both clouds; A holds " +
                             std::to_string(a.count) + ", B " + std::to_string(b.count));
    // The pairs (index in A, index in B).
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    pairs.reserve(std::min(a.count, b.count));
    CompareMatch match = CompareMatch::position;
    {
        PositionIndex index(b);
        bool by_order = options.match == CompareMatch::order;
        if (options.match == CompareMatch::automatic && a.count == b.count) {
            by_order = true;
            const double reach2 = index.cell() * index.cell();
            for (std::size_t i = 0; i < a.count && by_order; ++i) {
                double d2 = 0;
                for (int c = 0; c < 3; ++c) {
                    const double d = double(b.position[i * 3 + c]) - a.position[i * 3 + c];
                    d2 += d * d;
                }
                by_order = d2 <= reach2;
            }
        }
        match = by_order ? CompareMatch::order : CompareMatch::position;
        if (by_order) {
            for (std::size_t i = 0; i < a.count; ++i) pairs.push_back({i, i});
        } else {
            PositionIndex in_a(a);
            std::vector<bool> matched(a.count, false);
            pair_nearest(a, b, in_a, index, matched, pairs);
            std::sort(pairs.begin(), pairs.end());
        }
    }
    return measure_pairs(a, b, match, pairs);
}

namespace {

CompareReport measure_pairs(const PlyCloud& a, const PlyCloud& b, CompareMatch match,
                            const std::vector<std::pair<std::size_t, std::size_t>>& pairs) {
    CompareReport rep;
    rep.a_count = a.count;
    rep.b_count = b.count;
    rep.sh_degree = std::min(a.sh_degree, b.sh_degree);
    rep.match = match;
    rep.matched = pairs.size();

    Samples pos{"pos"}, scale{"scale_rel"}, rot{"rot"}, deg{"rot_deg"}, rgb{"rgb"}, alpha{"alpha"},
        sh{"sh"}, band1{"sh_band1"}, band2{"sh_band2"}, band3{"sh_band3"};
    Samples* bands[] = {&band1, &band2, &band3};
    for (Samples* s : {&pos, &scale, &rgb}) s->reserve(3 * pairs.size());
    for (Samples* s : {&rot, &deg, &alpha}) s->reserve(pairs.size());
    const int ka = a.sh_per_gaussian() / 3, kb = b.sh_per_gaussian() / 3;
    const int k_both = (rep.sh_degree + 1) * (rep.sh_degree + 1) - 1;
    // The pairs run in A's order, B's rows scattered (a decoded frame's order is the file's): B's
    // rows a few pairs ahead are fetched while these are measured (the loop stalled on their
    // loads, 60 % of its time in a convert's error measure).
    constexpr std::size_t kAhead = 8;
    for (std::size_t p = 0; p < pairs.size(); ++p) {
        if (p + kAhead < pairs.size()) {
            const std::size_t ahead = pairs[p + kAhead].second;
            __builtin_prefetch(&b.position[ahead * 3]);
            __builtin_prefetch(&b.scale[ahead * 3]);
            __builtin_prefetch(&b.color[ahead * 4]);
            __builtin_prefetch(&b.rotation[ahead * 4]);
        }
        const auto& [i, j] = pairs[p];
        for (int c = 0; c < 3; ++c) {
            pos.add(std::fabs(double(b.position[j * 3 + c]) - a.position[i * 3 + c]));
            scale.add(std::fabs(std::log(double(b.scale[j * 3 + c])) - std::log(double(a.scale[i * 3 + c]))));
            rgb.add(std::fabs(double(b.color[j * 4 + c]) - a.color[i * 4 + c]));
        }
        alpha.add(std::fabs(double(b.color[j * 4 + 3]) - a.color[i * 4 + 3]));
        const std::array<double, 4> qa = unit(&a.rotation[i * 4]), qb = unit(&b.rotation[j * 4]);
        double ep = 0, en = 0, dot = 0;
        for (int c = 0; c < 4; ++c) {
            ep = std::max(ep, std::fabs(qb[c] - qa[c]));
            en = std::max(en, std::fabs(qb[c] + qa[c]));
            dot += qa[c] * qb[c];
        }
        rot.add(std::min(ep, en));
        // The angle between the rotations: the unit quaternions are an angle φ = θ / 2 apart,
        // and atan2(|a - s b|, |a + s b|) = φ / 2 with s the sign that brings b to a's side —
        // exact near 0, where acos of the dot product is not.
        double near = 0, far = 0;
        for (int c = 0; c < 4; ++c) {
            const double sb = dot < 0 ? -qb[c] : qb[c];
            near += (qa[c] - sb) * (qa[c] - sb);
            far += (qa[c] + sb) * (qa[c] + sb);
        }
        deg.add(4 * std::atan2(std::sqrt(near), std::sqrt(far)) * 180 / std::numbers::pi);
        for (int c = 0; c < 3; ++c)
            for (int k = 0; k < k_both; ++k) {
                const double e =
                    std::fabs(double(b.sh[j * 3 * kb + c * kb + k]) - a.sh[i * 3 * ka + c * ka + k]);
                sh.add(e);
                bands[k < 3 ? 0 : k < 8 ? 1 : 2]->add(e);  // bands 1, 2, 3 hold 3, 5, 7 a colour
            }
    }
    std::vector<std::uint32_t> counts;
    for (Samples* s : {&pos, &scale, &rot, &deg, &rgb, &alpha})
        rep.attributes.push_back(s->summary(counts));
    if (k_both > 0) rep.attributes.push_back(sh.summary(counts));
    for (int band = 0; band < rep.sh_degree; ++band)
        rep.attributes.push_back(bands[band]->summary(counts));
    return rep;
}

}  // namespace

}  // namespace fourdgs
