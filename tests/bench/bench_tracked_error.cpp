// The error of a tracked .splat frame sequence decoded back, attribute by attribute, in the units
// of splat4d's bounds (tests/bench/bench_vs_splat4d.py): the largest error over the frames asked
// for, of either
//   a .4dgs written from the frames (each frame's state extracted at its time, frame / FPS, as
//   convert's own --error-frames does), or
//   splat4d's decode of each frame (`splat4d decode --frame K -o DIR/frame_K.splat`), put back in
//   input order by its --perm-out file (n × u32: the input index of each gaussian of the file),
//   paired by order.
// A .4dgs may store the gaussians in another order than the input's (static ones apart, Morton
// order, ...). Its gaussian_ids are the converter's (Morton ranks of frame 0), which convert's own
// report pairs by (convert_verify.cpp); this bench takes no such knowledge of the writer, so that
// both formats are measured alike, from their decoded frames alone. Pairing by nearest position
// alone mismatches neighbours closer than the position bound (compare.hpp's p99 is right, its max
// is not). So each decoded gaussian is paired with the input gaussian nearest to it in every
// attribute at once: among those within the position bound on each axis (a grid of the bound's
// cell size), the one whose largest error relative to its bound (BOUNDS) is smallest and not yet
// taken — best pairs first. A file within its bounds has such a partner for every gaussian; one
// outside them shows as an error above its bound (or as unmatched gaussians, which are counted
// and reported).
// Units: pos the largest |Δ| of a coordinate (scene units), rgb and alpha 8-bit levels (× 255),
// rot steps of 1/128 of a unit-quaternion component (compared up to sign), scale_rel the largest
// |relative| change of a linear scale (exp |Δ log| − 1), and rot_levels the rotation in the input's
// own 8-bit levels: the largest |128 q_c + 128 − b_c| up to sign, q the decoded rotation as decoded
// (ours a unit quaternion; splat4d's decoded .splat bytes, read as (b − 128) / 128, so 0 where it
// keeps them) and b the input's byte (255 counting only from below: a .splat clamps 256 there) —
// at most 1/2 rounds back to the input's bytes (convert's rot_levels, rotation_box.hpp). Where the
// input's writer truncated (BOUNDS ending in "floor": make_tracked_frames' frames), b_c + 1/2 in
// place of b_c — the middle of what it stores as b_c, convert's rot_rounding=floor — so at most
// 1/2 truncates back to the input's bytes.
//
// Usage: bench_tracked_error FRAMES_DIR LIST FPS --4dgs FILE BOUNDS
//        bench_tracked_error FRAMES_DIR LIST FPS --splat4d DECODED_DIR PERM
// BOUNDS: pos,rgb,alpha,rot,scale_rel in compare.hpp's units (scene units, 0..1, 0..1, unit
// quaternion component, |Δ log scale|), the tolerance the file was written at; a sixth number,
// rot_levels' bound in levels (N + 1/2 + 1/8), pairs by rotation in levels instead of by rot; and
// after it, "floor" or "nearest" (the default), the rounding the input's writer used.
// FRAMES_DIR holds frame_NNNN.splat (splat4d's names); LIST is the comma-separated frame indices
// (DECODED_DIR/frame_NNNN.splat for each). Prints one JSON object.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "fourdgs/io.hpp"
#include "fourdgs/tools/convert.hpp"
#include "fourdgs/tools/splat_formats.hpp"

using namespace fourdgs;

namespace {

constexpr int kAttributes = 6;  // pos, rgb, alpha, rot, scale_rel, rot_levels (in 1/128)
using Errors = std::array<double, kAttributes>;

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "bench_tracked_error: %s\n", what.c_str());
    std::exit(1);
}

template <typename T>
T must(Result<T> r, const std::string& what) {
    if (!r.ok()) fail(what + ": " + r.error().describe());
    return std::move(r).value();
}

std::vector<double> numbers(const std::string& list) {
    std::vector<double> out;
    std::stringstream items(list);
    for (std::string item; std::getline(items, item, ',');) out.push_back(std::stod(item));
    return out;
}

std::string frame_name(const std::string& dir, std::size_t k) {
    char name[32];
    std::snprintf(name, sizeof name, "/frame_%04zu.splat", k);
    return dir + name;
}

std::array<double, 4> unit_quaternion(const PlyCloud& c, std::size_t i) {
    const float* q = &c.rotation[4 * i];
    const double len = std::sqrt(double(q[0]) * q[0] + double(q[1]) * q[1] +
                                 double(q[2]) * q[2] + double(q[3]) * q[3]);
    return {q[0] / len, q[1] / len, q[2] / len, q[3] / len};
}

// Gaussian j of `b` against gaussian i of `a`, per attribute (compare.hpp's yardstick); `mid` is
// how far above a's rotation as read its byte's box is centred (0, or half a level: floor).
Errors errors(const PlyCloud& a, std::size_t i, const PlyCloud& b, std::size_t j, double mid) {
    Errors e{};
    for (int c = 0; c < 3; ++c) {
        e[0] = std::max<double>(e[0], std::fabs(a.position[3 * i + c] - b.position[3 * j + c]));
        e[1] = std::max<double>(e[1], std::fabs(a.color[4 * i + c] - b.color[4 * j + c]));
        e[4] = std::max(e[4], std::fabs(std::log(double(b.scale[3 * j + c]) / a.scale[3 * i + c])));
    }
    e[2] = std::fabs(a.color[4 * i + 3] - b.color[4 * j + 3]);
    const auto qa = unit_quaternion(a, i), qb = unit_quaternion(b, j);
    double same = 0, flipped = 0;
    for (int c = 0; c < 4; ++c) {
        same = std::max(same, std::fabs(qa[c] - qb[c]));
        flipped = std::max(flipped, std::fabs(qa[c] + qb[c]));
    }
    e[3] = std::min(same, flipped);
    // In the input's levels: a's rotation as read against b's as decoded.
    const float* v = &a.rotation[4 * i];
    const float* q = &b.rotation[4 * j];
    e[5] = 1e9;
    for (const double sign : {1.0, -1.0}) {
        double far = 0;
        for (int c = 0; c < 4; ++c) {
            const double d = double(v[c]) + mid - sign * q[c];
            far = std::max(far, double(v[c]) * 128 + 128 == 255 ? std::max(0.0, d) : std::fabs(d));
        }
        e[5] = std::min(e[5], far);
    }
    return e;
}

// `decoded` with gaussian i moved to perm[i] (splat4d's file order back to the input's).
PlyCloud unpermute(const PlyCloud& decoded, const std::vector<std::uint32_t>& perm) {
    if (perm.size() != decoded.count) fail("the permutation does not hold the frame's gaussians");
    PlyCloud out = decoded;
    for (std::size_t i = 0; i < perm.size(); ++i) {
        const std::size_t j = perm[i];
        if (j >= decoded.count) fail("permutation entry out of range");
        std::copy_n(&decoded.position[3 * i], 3, &out.position[3 * j]);
        std::copy_n(&decoded.scale[3 * i], 3, &out.scale[3 * j]);
        std::copy_n(&decoded.rotation[4 * i], 4, &out.rotation[4 * j]);
        std::copy_n(&decoded.color[4 * i], 4, &out.color[4 * j]);
    }
    return out;
}

std::vector<std::uint32_t> read_perm(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
    if (bytes.empty() || bytes.size() % 4) fail("cannot read the permutation " + path);
    std::vector<std::uint32_t> perm(bytes.size() / 4);
    for (std::size_t i = 0; i < perm.size(); ++i)
        for (int b = 0; b < 4; ++b)
            perm[i] |= std::uint32_t(static_cast<std::uint8_t>(bytes[4 * i + b])) << (8 * b);
    return perm;
}

struct Pairing {
    std::vector<std::size_t> partner;  // of each decoded gaussian in the input; npos: none
    std::size_t unmatched = 0;
};

// The pairing described at the top: decoded gaussians against input ones, by bound-relative
// error over every attribute, among input gaussians within the position bound on each axis.
Pairing pair_by_attributes(const PlyCloud& input, const PlyCloud& decoded, const Errors& bounds,
                           double mid) {
    const double cell = bounds[0];
    auto key = [cell](const float* p, int dx, int dy, int dz) {
        const auto c = [cell](float v, int d) {
            return static_cast<std::uint64_t>(static_cast<std::int64_t>(std::floor(v / cell)) + d) &
                   0x1fffff;
        };
        return c(p[0], dx) << 42 | c(p[1], dy) << 21 | c(p[2], dz);
    };
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> grid;
    for (std::size_t i = 0; i < input.count; ++i)
        grid[key(&input.position[3 * i], 0, 0, 0)].push_back(static_cast<std::uint32_t>(i));
    struct Candidate {
        double cost;
        std::uint32_t decoded, input;
    };
    std::vector<Candidate> candidates;
    for (std::size_t j = 0; j < decoded.count; ++j)
        for (int dx = -1; dx <= 1; ++dx)
            for (int dy = -1; dy <= 1; ++dy)
                for (int dz = -1; dz <= 1; ++dz) {
                    const auto it = grid.find(key(&decoded.position[3 * j], dx, dy, dz));
                    if (it == grid.end()) continue;
                    for (std::uint32_t i : it->second) {
                        const Errors e = errors(input, i, decoded, j, mid);
                        double cost = 0;
                        for (int a = 0; a < kAttributes; ++a)
                            if (bounds[a] > 0) cost = std::max(cost, e[a] / bounds[a]);
                        candidates.push_back({cost, static_cast<std::uint32_t>(j), i});
                    }
                }
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& x, const Candidate& y) {
        return x.cost != y.cost ? x.cost < y.cost
                                : std::pair(x.decoded, x.input) < std::pair(y.decoded, y.input);
    });
    Pairing p;
    p.partner.assign(decoded.count, std::size_t(-1));
    std::vector<bool> taken(input.count, false);
    for (const Candidate& c : candidates)
        if (p.partner[c.decoded] == std::size_t(-1) && !taken[c.input]) {
            p.partner[c.decoded] = c.input;
            taken[c.input] = true;
        }
    p.unmatched = static_cast<std::size_t>(
        std::count(p.partner.begin(), p.partner.end(), std::size_t(-1)));
    return p;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 4 ? argv[4] : "";
    if (argc != 7 || (mode != "--4dgs" && mode != "--splat4d")) {
        std::fprintf(stderr, "usage: bench_tracked_error FRAMES_DIR LIST FPS --4dgs FILE BOUNDS\n"
                             "       bench_tracked_error FRAMES_DIR LIST FPS --splat4d DIR PERM\n");
        return 2;
    }
    const std::string frames = argv[1];
    const double fps = std::strtod(argv[3], nullptr);
    const bool ours = mode == "--4dgs";
    Errors bounds{};
    std::vector<std::uint32_t> perm;
    double mid = 0;  // the rotation box's centre above the input's byte (floor: half a level)
    if (ours) {
        std::string list = argv[6];
        const std::size_t comma = list.rfind(',');
        const std::string last = comma == std::string::npos ? "" : list.substr(comma + 1);
        if (last == "floor" || last == "nearest") {
            list.resize(comma);
            mid = last == "floor" ? 0.5 / 128 : 0;
        }
        const std::vector<double> b = numbers(list);
        if (list.size() != std::strlen(argv[6]) && b.size() != 6)
            fail("BOUNDS: the rounding follows a rot_levels bound");
        if (b.size() != 5 && b.size() != 6)
            fail("BOUNDS: five numbers, pos,rgb,alpha,rot,scale_rel, and optionally rot_levels "
                 "and its rounding");
        std::copy(b.begin(), b.end(), bounds.begin());
        // Paired by rotation in the input's levels where its bound is given, else by rot.
        if (b.size() == 6) bounds[3] = 0, bounds[5] = b[5] / 128;
    } else {
        perm = read_perm(argv[6]);
    }
    Errors worst{};
    std::size_t unmatched = 0, count = 0;
    for (double item : numbers(argv[2])) {
        const auto k = static_cast<std::size_t>(item);
        const PlyCloud input = must(read_splat_file(frame_name(frames, k)), "input frame");
        PlyCloud got;
        std::vector<std::size_t> partner;
        if (ours) {
            auto source = must(FileSource::open(argv[5]), argv[5]);
            const double t = static_cast<double>(k) / fps;
            // As convert's --error-frames: the frame's start, or the f32 a reader holds it as.
            got = must(extract_state(source, std::max(t, double(static_cast<float>(t)))), "extract");
            Pairing p = pair_by_attributes(input, got, bounds, mid);
            partner = std::move(p.partner);
            unmatched += p.unmatched + (input.count > got.count ? input.count - got.count : 0);
        } else {
            got = unpermute(must(read_splat_file(frame_name(argv[5], k)), "decoded frame"), perm);
            partner.resize(got.count);
            std::iota(partner.begin(), partner.end(), std::size_t(0));
        }
        if (got.count != input.count) fail("frame " + std::to_string(k) + " decodes " +
                                           std::to_string(got.count) + " gaussians, not " +
                                           std::to_string(input.count));
        for (std::size_t j = 0; j < got.count; ++j) {
            if (partner[j] == std::size_t(-1)) continue;
            const Errors e = errors(input, partner[j], got, j, mid);
            for (int a = 0; a < kAttributes; ++a) worst[a] = std::max(worst[a], e[a]);
        }
        ++count;
    }
    std::printf("{\"frames\": %zu, \"unmatched\": %zu, \"pos\": %.9g, \"rgb_levels\": %.9g, "
                "\"alpha_levels\": %.9g, \"rot_steps\": %.9g, \"scale_rel\": %.9g, "
                "\"rot_levels\": %.9g}\n",
                count, unmatched, worst[0], worst[1] * 255, worst[2] * 255, worst[3] * 128,
                std::expm1(worst[4]), worst[5] * 128);
    return 0;
}
