// The report's part sizes (convert_parts.hpp's measure_parts): each part of a tracked sequence
// encoded alone, as the conversion at hand encodes it — split from convert.cpp, which holds the
// conversion itself.
#include <numeric>

#include "convert_parts.hpp"

namespace fourdgs::convert_parts {
namespace {

// The bytes of gaussians `keep` encoded alone by `encode` (rigid part `part` > 0: in its object
// frame, members held at frame 0's position and rotation, riders carried by its poses).
Result<std::uint64_t> bytes_alone(const PlyCloud& first, const RigidParts& parts,
                                  std::span<const std::uint32_t> keep, std::size_t part,
                                  Resolved r, const EncodeView& encode) {
    if (keep.empty()) return std::uint64_t{0};
    RigidParts one;  // the part alone, its gaussians numbered as in the view (for its anchor)
    std::vector<std::uint32_t> held;
    std::vector<std::uint8_t> rides;
    std::span<const RigidPart> found;  // the view looks riders up by their index in the frame
    if (part > 0) {
        one.part_of.assign(keep.size(), 1);
        one.is_static.assign(keep.size(), 0);
        one.parts.push_back({{}, {}, {}, parts.parts[part - 1].poses});
        one.parts[0].members.resize(keep.size());
        std::iota(one.parts[0].members.begin(), one.parts[0].members.end(), 0u);
        held.assign(keep.size(), 1);
        for (std::uint32_t g : keep) rides.push_back(parts.rides[g]);
        found = std::span<const RigidPart>(&parts.parts[part - 1], 1);
    }
    const TrackedView view{keep, held, rides, found};
    const Objects objects = objects_of(view_of(first, first, view), one, r);
    r.objects = part > 0 ? &objects : nullptr;
    CountingSink sink;
    FOURDGS_TRY(encode(view, r, sink));
    return sink.position();
}

}  // namespace

Status measure_parts(const PlyCloud& first, const RigidParts& parts, const Resolved& r,
                     const EncodeView& encode, ConvertReport& rep) {
    std::vector<std::uint32_t> still, other;
    std::vector<std::vector<std::uint32_t>> members(parts.parts.size());
    for (std::size_t g = 0; g < parts.part_of.size(); ++g) {
        const auto id = static_cast<std::uint32_t>(g);
        if (parts.part_of[g] != 0) members[parts.part_of[g] - 1].push_back(id);
        else (parts.is_static[g] ? still : other).push_back(id);
    }
    FOURDGS_ASSIGN(rep.static_part.bytes, bytes_alone(first, parts, still, 0, r, encode));
    FOURDGS_ASSIGN(rep.other_part.bytes, bytes_alone(first, parts, other, 0, r, encode));
    for (std::size_t j = 0; j < parts.parts.size(); ++j) {
        FOURDGS_ASSIGN(rep.objects[j].bytes,
                       bytes_alone(first, parts, members[j], j + 1, r, encode));
    }
    return ok_status();
}

}  // namespace fourdgs::convert_parts
