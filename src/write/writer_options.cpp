// The writer's option helpers (fourdgs/writer.hpp): presets and efforts by name, the bounds a
// preset or a fixed grid declares, the grid that holds a set of tolerances, and the SH ladders.
#include "fourdgs/writer.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "encoding.hpp"

namespace fourdgs {

using encoding::bad_option;
using encoding::kF32;
using encoding::Maxima;
using encoding::num;

std::string bound_string(double value) { return detail::fmt(value == 0 ? 0.0 : value); }

namespace {

// An enumeration's names, in its order: the enumerator a name spells, and back.
template <class E, std::size_t N>
std::optional<E> enum_named(const std::string_view (&names)[N], std::string_view name) {
    for (std::size_t i = 0; i < N; ++i)
        if (name == names[i]) return static_cast<E>(i);
    return std::nullopt;
}

template <class E, std::size_t N>
std::string_view name_of(const std::string_view (&names)[N], E value) {
    const auto i = static_cast<std::size_t>(value);
    return i < N ? names[i] : "unknown";
}

constexpr std::string_view kPresetNames[] = {"fine", "default", "coarse"};
constexpr std::string_view kEffortNames[] = {"fast", "default", "max"};

}  // namespace

std::optional<Preset> parse_preset(std::string_view name) {
    return enum_named<Preset>(kPresetNames, name);
}

std::string_view to_string(Preset preset) { return name_of(kPresetNames, preset); }

std::optional<Effort> parse_effort(std::string_view name) {
    return enum_named<Effort>(kEffortNames, name);
}

std::string_view to_string(Effort effort) { return name_of(kEffortNames, effort); }

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

QuantBounds declared_bounds(const FixedGrid& grid, double duration) {
    const encoding::Limits lim = encoding::limits_for(grid.bounds, grid.reach);
    const Maxima m =
        encoding::analytic_maxima(lim, 2 * grid.bounds.motion, 2 * grid.bounds.time, duration);
    return {m.pos, m.scale, m.rot, m.rgb, m.alpha, m.motion, m.time, m.sigma};
}

Result<FixedGrid> grid_for_tolerance(const QuantBounds& tol, const std::array<double, 6>& aabb,
                                     double duration) {
    const std::pair<const char*, double> all[] = {{"pos", tol.pos},
                                                  {"scale_rel", tol.scale_rel},
                                                  {"rot", tol.rot},
                                                  {"rgb", tol.rgb},
                                                  {"alpha", tol.alpha},
                                                  {"time", tol.time},
                                                  {"sigma_rel", tol.sigma_rel}};
    for (const auto& [key, v] : all)
        if (!std::isfinite(v) || !(v > 0))
            return bad_option(std::string("tolerance '") + key + "' is " + num(v) +
                              ", must be finite and > 0");
    if (!std::isfinite(tol.motion) || tol.motion < 0)
        return bad_option("tolerance 'motion' is " + num(tol.motion) + ", must be finite and >= 0");
    if (tol.rgb > 0.5 || tol.alpha > 0.5)
        return bad_option("tolerances 'rgb' and 'alpha' must be <= 0.5 (colour lives in [0, 1])");
    if (!std::isfinite(duration) || !(duration > 0))
        return bad_option("the clock's duration is " + num(duration) + ", must be finite and > 0");
    FixedGrid g;
    for (int c = 0; c < 3; ++c) {
        if (!std::isfinite(aabb[c]) || !std::isfinite(aabb[3 + c]) || aabb[c] > aabb[3 + c])
            return bad_option("the aabb's axis " + std::to_string(c) + " is [" + num(aabb[c]) +
                              ", " + num(aabb[3 + c]) + "]; it must be finite with min <= max");
        g.origin[c] = 0.5 * (aabb[c] + aabb[3 + c]);
        g.reach = std::max({g.reach, std::fabs(aabb[c]), std::fabs(aabb[3 + c])});
    }
    // Each declared bound is an increasing function of its own half-step (encoding::limits_for,
    // analytic_maxima); invert it, then confirm on the declared values themselves.
    constexpr double near_one = 1 + 0x1p-20, near_one_t = 1 + 0x1p-10;
    auto floor_of = [&](const char* key, double t, double floor) -> Result<double> {
        if (!(t > floor))
            return bad_option(std::string("tolerance '") + key + "' is " + num(t) +
                              ", no larger than the " + num(floor) +
                              " that f32 values hold it to here");
        return t - floor;
    };
    QuantBounds& b = g.bounds;
    FOURDGS_ASSIGN(const double pos_room, floor_of("pos", tol.pos, kF32 * g.reach));
    b.pos = pos_room / (near_one + 2 * kF32);
    FOURDGS_ASSIGN(const double scale_room, floor_of("scale_rel", tol.scale_rel, 2 * kF32));
    b.scale_rel = scale_room / near_one;
    FOURDGS_ASSIGN(const double sigma_room, floor_of("sigma_rel", tol.sigma_rel, 2 * kF32));
    b.sigma_rel = sigma_room / near_one;
    FOURDGS_ASSIGN(const double rgb_room, floor_of("rgb", tol.rgb, kF32));
    b.rgb = rgb_room / near_one;
    FOURDGS_ASSIGN(const double alpha_room, floor_of("alpha", tol.alpha, kF32));
    b.alpha = alpha_room / near_one;
    FOURDGS_ASSIGN(const double time_room,
                   floor_of("time", tol.time, kF32 * 4 * std::max(duration, 1.0)));
    b.time = time_room / near_one_t;
    FOURDGS_TRY(floor_of("rot", tol.rot, 2 * kF32));
    // The rotation bound (§6.4's recovered component) has no closed inverse: bisect the stored
    // component's bound in (0, 0.05], the largest the writer takes.
    auto rot_declared = [](double r) {
        return encoding::limits_for(QuantBounds{1, 1, r, 1, 1, 1, 1, 1}, 0).rot;
    };
    if (rot_declared(0.05) <= tol.rot) {
        b.rot = 0.05;
    } else {
        double lo = 0, hi = 0.05;
        for (int i = 0; i < 200 && lo < hi; ++i) {
            const double mid = 0.5 * (lo + hi);
            if (mid == lo || mid == hi) break;
            (rot_declared(mid) <= tol.rot ? lo : hi) = mid;
        }
        b.rot = lo;
    }
    b.motion = tol.motion > 0 ? tol.motion : 2 * b.pos;
    // Rounding may leave a declared value a few ulps over: step the half-step down until not
    // (motion follows pos when derived from it).
    for (int round = 0; round < 64; ++round) {
        const QuantBounds d = declared_bounds(g, duration);
        bool over = false;
        auto fit = [&](double declared, double t, double& half) {
            if (declared > t) {
                half = std::nextafter(half, 0.0);
                over = true;
            }
        };
        fit(d.pos, tol.pos, b.pos);
        fit(d.scale_rel, tol.scale_rel, b.scale_rel);
        fit(d.rot, tol.rot, b.rot);
        fit(d.rgb, tol.rgb, b.rgb);
        fit(d.alpha, tol.alpha, b.alpha);
        fit(d.time, tol.time, b.time);
        fit(d.sigma_rel, tol.sigma_rel, b.sigma_rel);
        if (tol.motion == 0) b.motion = 2 * b.pos;
        if (!over) {
            if (!(b.rot > 0))
                return bad_option("tolerance 'rot' is " + num(tol.rot) +
                                  ", finer than a rotation grid can be held to");
            return g;
        }
    }
    return bad_option("no grid declares bounds within the tolerance (pos " + num(tol.pos) + ")");
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

}  // namespace fourdgs
