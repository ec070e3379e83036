// The internal half of convert.cpp (convert.hpp): what the resolved conversion is, and the steps
// shared by the shapes it writes. convert.cpp resolves the options and writes per-frame files;
// convert_keyframe_delta.cpp and convert_adaptive.cpp write the two tracked shapes.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/tools/convert.hpp"
#include "fourdgs/writer.hpp"
#include "plan_parts.hpp"

namespace fourdgs::convert_parts {

inline constexpr float kInf = std::numeric_limits<float>::infinity();

// Rigid parts stored as objects: each gaussian's object id (0: none), the Object Table and the
// Object Tracks the file carries.
struct Objects {
    std::vector<std::uint32_t> object_of;
    ObjectTable table;
    std::vector<ObjectTrack> tracks;
};

// The conversion as resolved from the options (and the plan): where the frames sit on the clock,
// the shape and its schedule, the end-to-end tolerance and the writer's options.
struct Resolved {
    double fps = 0, duration = 0;
    std::uint64_t first = 0, end = 0, total = 0;  // the frames given are [first, end) of total
    ConvertShape shape = ConvertShape::per_frame;
    std::uint32_t keyframe_every = 10;
    std::uint32_t segment = 0;  // adaptive: records never span a multiple (0: whole clip)
    QuantBounds tolerance;
    WriterOptions writer;  // grid set once it is sized (the plan's, or size_grid's)
    const GridPlan* plan = nullptr;
    const Objects* objects = nullptr;  // rigid parts stored as objects (none: nullptr)
    const plan_parts::BlockParts* held = nullptr;  // on a plan: the parts this block holds

    double time_of(std::uint64_t frame) const { return static_cast<double>(frame) / fps; }
    bool sliced() const { return plan && (first != 0 || end != total); }
};

// An invalid-argument error with `refusal`.
Error bad(std::string_view refusal, std::string message);
double largest_side(const std::array<double, 6>& box);
// Colour with every component clamped into [0, 1], counting the clamps.
std::vector<float> clamped_colors(const PlyCloud& f, std::uint64_t& clamped);
// The file's header: duration, SH degree, attributes, metadata, the objects, a shard's record.
SceneHeader base_header(std::span<const PlyCloud> frames, const ConvertOptions& o,
                        const Resolved& r);
// Every frame holds as many gaussians as frame 0, at its SH degree (frames-not-tracked).
Status check_tracked(std::span<const PlyCloud> frames);
// Reports progress: `done` of `total` frames.
void tick(const ConvertOptions& o, std::uint64_t done, std::uint64_t total);
// outside-plan, naming `what`.
Error outside_plan(const std::string& what);
// The grid for shapes whose grid does not depend on what the fit finds (per frame,
// keyframe-delta); a plan's grid is kept.
Status size_fixed_grid(std::span<const PlyCloud> frames, Resolved& r);
// Writes the converted gaussians and fills the report both gaussian-birth shapes share.
Status write_columns(const GaussianColumns& cols, SceneHeader header, const Resolved& r,
                     ByteSink& sink, ConvertReport& rep);

// The tracked shapes (convert.hpp): keyframe-delta (§11) and adaptive temporal sampling (§12).
Status convert_keyframe_delta(std::span<const PlyCloud> frames, const ConvertOptions& o,
                              Resolved& r, ByteSink& sink, ConvertReport& rep);
Status convert_adaptive(std::span<const PlyCloud> frames, const ConvertOptions& o, Resolved& r,
                        ByteSink& sink, ConvertReport& rep);

}  // namespace fourdgs::convert_parts
