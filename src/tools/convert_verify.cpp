// The conversion's verification (convert.hpp, ConvertReport::error): the written file decoded at
// a few of the frames and each decoded gaussian compared with the input gaussian it was written
// from. A keyframe-delta conversion knows that gaussian — it chose every gaussian's id
// (tracked_ids) and the file keeps them (gaussian_id) — so each is measured against its own
// input, which is what the declared bounds are about; pairing by nearest position could match a
// neighbour and under-report. The gaussian-birth shapes keep no identity a reader gives back, so
// theirs are paired by position (compare.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "convert_parts.hpp"
#include "fourdgs/open_scene.hpp"
#include "fourdgs/reconstruct.hpp"
#include "fourdgs/tools/compare.hpp"
#include "rotation_box.hpp"

namespace fourdgs::convert_parts {

struct SceneAt::Opened {
    SceneReader reader;
    ExtractOptions options;
    SceneWorkspace ws;
    GaussianBlock block;
};

SceneAt::SceneAt(SceneAt&&) noexcept = default;
SceneAt& SceneAt::operator=(SceneAt&&) noexcept = default;
SceneAt::~SceneAt() = default;

Result<SceneAt> SceneAt::open(ByteSource& source, const ExtractOptions& options) {
    OpenSceneOptions so;
    so.reader.decode.max_sh_degree = std::clamp(options.max_sh_degree, 0, 3);
    FOURDGS_ASSIGN(SceneReader reader, open_scene(source, so));
    SceneAt out;
    out.opened_ = std::make_unique<Opened>(Opened{std::move(reader), options, {}, {}});
    out.opened_->options.max_sh_degree = so.reader.decode.max_sh_degree;
    return out;
}

const SceneInfo& SceneAt::scene() const { return opened_->reader.scene(); }
const GaussianBlock& SceneAt::block() const { return opened_->block; }

Status SceneAt::at(double t, Frame& frame) {
    const SceneInfo& scene = opened_->reader.scene();
    if (!std::isfinite(t) || t < 0 || !(t < scene.header.duration_sec))
        return bad(refusal::kTimeOutOfRange, "time " + std::to_string(t) + " s is outside [0, " +
                                                 std::to_string(scene.header.duration_sec) + ")");
    FOURDGS_TRY(opened_->reader.state_at(t, opened_->block, opened_->ws));
    EvaluateOptions eo;
    eo.with_sh = true;
    eo.max_sh_degree = opened_->options.max_sh_degree;
    if (opened_->options.object_tracks) eo.tracks = scene.object_tracks;
    evaluate(opened_->block, t, scene.header.cutoff, frame, eo);
    return ok_status();
}

namespace {

// The input frame as the writer takes it: colour and opacity clamped to [0, 1], SH to [-4, 4].
PlyCloud as_written(const PlyCloud& f) {
    PlyCloud c = f;
    for (float& v : c.color) v = std::clamp(v, 0.0f, 1.0f);
    for (float& v : c.sh) v = std::clamp(v, -4.0f, 4.0f);
    return c;
}

// For each visible gaussian of `frame` (evaluated from `block`), the input gaussian whose id it
// carries (`input_of`: the input gaussian of each id the conversion gave, a new incarnation's
// fresh id included, keyframe_writer.hpp), or kNoPartner: a block without ids.
void partners_by_id(const Frame& frame, const GaussianBlock& block,
                    std::span<const std::uint32_t> input_of, std::vector<std::uint32_t>& out) {
    out.assign(frame.count, kNoPartner);
    if (block.gaussian_id.size() != block.count) return;
    for (std::size_t i = 0; i < frame.count; ++i) {
        const std::uint32_t id = block.gaussian_id[frame.source[i]];
        if (id < input_of.size()) out[i] = input_of[id];
    }
}

// rot_levels: the rotation error as the tolerance means it — each decoded rotation, normalized,
// against its input as read, in the input's levels' box (rotation_box::levels_distance) — in
// place of compare's, which measures against the normalized input. In the rounding the input's
// writer used (`rounding`: the box's centre).
void measure_rotation_in_levels(const PlyCloud& input, const PlyCloud& got,
                                std::span<const std::uint32_t> partner, rotation_box::Rounding rounding,
                                CompareReport& c) {
    std::vector<double> d;
    double sum_sq = 0;
    for (std::size_t i = 0; i < partner.size() && i < got.count; ++i) {
        if (partner[i] == kNoPartner) continue;
        d.push_back(rotation_box::levels_distance(&got.rotation[i * 4],
                                                  &input.rotation[partner[i] * std::size_t{4}],
                                                  rounding));
        sum_sq += d.back() * d.back();
    }
    AttributeError e;
    e.name = "rot";
    e.samples = d.size();
    if (!d.empty()) {
        e.rms = std::sqrt(sum_sq / static_cast<double>(d.size()));
        const auto p99 = d.begin() + static_cast<std::ptrdiff_t>((d.size() - 1) * 99 / 100);
        std::nth_element(d.begin(), p99, d.end());
        e.p99 = *p99;
        e.max = *std::max_element(d.begin(), d.end());
    }
    for (AttributeError& a : c.attributes)
        if (a.name == "rot") a = e;
}

}  // namespace

Status measure_error(std::size_t n, const FrameAt& frame_at, const ConvertOptions& o,
                     const Resolved& r, ByteSource& file, ConvertReport& rep) {
    rep.error_frames.clear();
    rep.error.clear();
    const std::size_t want = std::min(o.error_frames, n);
    if (want == 0) return ok_status();
    struct Sum {
        double max = 0, sum_sq = 0, p99 = 0;
        std::uint64_t samples = 0;
    };
    std::vector<std::pair<std::string, Sum>> sums;
    FOURDGS_ASSIGN(SceneAt scene, SceneAt::open(file, {}));
    // Keyframe-delta without a plan: the input gaussian of each id, from frame 0 (measured first).
    const bool by_id = rep.shape == ConvertShape::keyframe_delta && !r.plan;
    std::vector<std::uint32_t> input_of, partner;
    Frame frame;
    for (std::size_t s = 0; s < want; ++s) {
        const std::size_t k = want == 1 ? 0 : s * (n - 1) / (want - 1);
        if (!rep.error_frames.empty() && rep.error_frames.back() == r.first + k) continue;
        rep.error_frames.push_back(r.first + k);
        FOURDGS_ASSIGN(const PlyCloud input, frame_at(k));
        if (by_id && k == 0) {
            const std::vector<std::uint32_t> ids = tracked_ids(input);
            input_of.assign(ids.size(), kNoPartner);
            for (std::size_t g = 0; g < ids.size(); ++g) input_of[ids[g]] = static_cast<std::uint32_t>(g);
            // A new incarnation stands for the gaussian of the id it was given for.
            const Incarnations& made = r.incarnations;
            if (!made.of.empty())
                input_of.resize(std::max<std::uint64_t>(input_of.size(),
                                                        made.first_fresh_id + made.of.size()),
                                kNoPartner);
            for (std::size_t f = 0; f < made.of.size(); ++f)
                if (made.of[f] < made.first_fresh_id)
                    input_of[made.first_fresh_id + f] = input_of[made.of[f]];
        }
        // The frame's start, or the f32 a reader holds its window's start as when that is later.
        const double t = r.time_of(r.first + k);
        FOURDGS_TRY(scene.at(std::max(t, double(static_cast<float>(t))), frame));
        const PlyCloud got = ply_from_frame(frame);
        if (by_id) partners_by_id(frame, scene.block(), input_of, partner);
        FOURDGS_ASSIGN(CompareReport c,
                       by_id ? compare_clouds(as_written(input), got, partner)
                             : compare_clouds(as_written(input), got, {CompareMatch::position}));
        if (by_id && r.rot_levels)
            measure_rotation_in_levels(input, got, partner,
                                       r.rot_levels_floor ? rotation_box::Rounding::floor
                                                          : rotation_box::Rounding::nearest,
                                       c);
        for (const AttributeError& e : c.attributes) {
            auto it = std::find_if(sums.begin(), sums.end(),
                                   [&](const auto& x) { return x.first == e.name; });
            if (it == sums.end()) it = sums.insert(sums.end(), {e.name, Sum{}});
            Sum& sum = it->second;
            sum.max = std::max(sum.max, e.max);
            sum.p99 = std::max(sum.p99, e.p99);
            sum.sum_sq += e.rms * e.rms * static_cast<double>(e.samples);
            sum.samples += e.samples;
        }
    }
    for (const auto& [name, sum] : sums) {
        AttributeError e;
        e.name = name;
        e.samples = sum.samples;
        e.max = sum.max;
        e.p99 = sum.p99;
        e.rms = sum.samples ? std::sqrt(sum.sum_sq / static_cast<double>(sum.samples)) : 0;
        rep.error.push_back(e);
    }
    return ok_status();
}

}  // namespace fourdgs::convert_parts
