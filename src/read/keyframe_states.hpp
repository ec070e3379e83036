// src/read/keyframe_states.hpp (internal) — what both keyframe-delta front-ends ask of a state
// chunk and of their options: the SH bands they compose, and StateInfo's description of the
// state chunk's own record. Shared by keyframe_delta.cpp (the indexed front-end) and
// keyframe_delta_stream.cpp (the streaming one).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

#include "fourdgs/decode.hpp"
#include "fourdgs/detail/keyframe_composition.hpp"
#include "fourdgs/keyframe_delta_stream.hpp"
#include "fourdgs/reader_options.hpp"
#include "fourdgs/scene.hpp"

namespace fourdgs::detail {

inline Error malformed(std::string_view refusal, std::string message, std::uint64_t offset) {
    return make_error(ErrorKind::malformed, refusal, std::move(message), offset);
}

// The SH bands a state is composed with: the Header's, capped by the options.
inline int wanted_bands_for(const SceneInfo& scene, const ReaderOptions& options) {
    return std::min<int>(scene.header.sh_degree, std::max(0, options.decode.max_sh_degree));
}

inline ReaderOptions keyframe_delta_options(ReaderOptions o) {
    o.accept_keyframe_delta = true;
    return o;
}

// StateInfo's description of the state chunk's own record (keyframe_delta_stream.hpp).
inline void describe_keyframe(const ChunkBins& keyframe, StateInfo& info) {
    info.update_count = info.birth_count = info.death_count = 0;
    info.object_id_stream = keyframe.has_object_id;
}
inline void describe_delta(const DeltaChunk& d, const DeltaBins& bins, StateInfo& info) {
    info.update_count = d.update_count;
    info.birth_count = d.birth_count;
    info.death_count = d.death_count;
    info.object_id_stream = bins.update_present[attr::object_id] || bins.births.has_object_id;
}

}  // namespace fourdgs::detail
