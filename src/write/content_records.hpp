// src/write/content_records.hpp (internal) — the content records both writers put between the
// Window Table and the first chunk: the caller's Metadata, the registry's `application` entry when
// it is owed, Attachments and the private records, then the scene extras (writer.hpp's SceneHeader
// comment is the contract), last so that whatever else a writer adds before its first chunk still
// precedes them.
//
// The extras are serialized once, up front, and those very bytes are run back through the
// readers' own SceneBuilder (and so every parse_* the readers use), check_audio_keyframes_within
// and check_scene_references before a single byte reaches the sink. A violation therefore comes
// back with the refusal identifier a reader would give the file, and the bytes that are finally
// written are exactly the bytes that were checked.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "fourdgs/error.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/wire.hpp"
#include "fourdgs/writer_types.hpp"

namespace fourdgs::content {

// The scene extras as framed records, in the order they are written: Camera; each Audio Source
// followed by its Audio Data (M092), or the legacy Audio record; Coordinate Frames, Sensor
// Calibrations, Rig Trajectories, Geodetic Anchors, the Object Table, Object Tracks (ascending
// opcode, §5.15). Empty when the scene has no extras (§5.15.1, §7).
struct Extras {
    std::vector<std::uint8_t> records;
    bool has_audio = false;  // Header flags bit 0 (kHeaderFlagAudio), §7

    std::uint8_t header_flags() const noexcept { return has_audio ? kHeaderFlagAudio : 0; }
};

// Serializes and checks `header`'s extras against header.duration_sec. Audio descriptors get
// data_length from their payload and normalized rotations (M086). Refusals (kind
// invalid_argument, the reader's identifier, no offset since no file exists yet):
// mixed-audio-records (legacy and pairs both given, M105), embedding-dimension-mismatch (an
// Object Table embedding whose size is not embedding_dim, or any embedding when it is 0),
// distortion-count-mismatch (more coefficients than the u8 count can say), every record
// parser's refusal, duplicate-audio-source, duplicate-object-track, keyframe-time-out-of-range,
// each check_scene_references refusal, and unrepresentable-record (the reader would read back
// something other than the input; a backstop that no valid input reaches).
Result<Extras> encode_extras(const SceneHeader& header);

// Appends the content records other than the extras to `out`: header.metadata, then
// `writer_metadata` (records the writer adds, e.g. keyframe-delta's advisory keys), then — when
// `application_owed` and no caller Metadata has an `application` key — Metadata "application"
// naming `application`, then header.attachments and header.private_records. Returns whether the
// file now names its application (so a later private record does not owe another).
bool write_content_records(ByteWriter& out, const SceneHeader& header,
                           std::span<const Metadata> writer_metadata, bool application_owed,
                           const std::string& application);

// Appends the extras' records (after the other content records, before the first chunk).
inline void write_extras(ByteWriter& out, const Extras& extras) {
    out.raw(Bytes(extras.records));
}

}  // namespace fourdgs::content
