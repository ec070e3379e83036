// fourdgs/records/names.hpp — the record registry's name column: the one place a record kind's
// name is spelled. The registry (records/registry.hpp) reads its rows' names from here, and so do
// the parsers, which the registry includes and so cannot include it; tests/CMakeLists.txt's
// records.named_in_the_registry_only keeps every other file from spelling a name.
//
// Part of records.hpp (the umbrella states the conventions every parser and writer follows).
#pragma once

#include <cstdint>
#include <string_view>

#include "fourdgs/export.hpp"
#include "fourdgs/wire.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// The name the specification gives the record kind `opcode` ("Geodetic Anchor"), or "" for an
// opcode it does not name. opcode_name (wire.hpp) is this, with a fallback for the others.
constexpr std::string_view record_name(std::uint8_t opcode) noexcept {
    switch (opcode) {
        case op::header: return "Header";
        case op::footer: return "Footer";
        case op::quantization: return "Quantization";
        case op::window_table: return "Window Table";
        case op::chunk: return "Chunk";
        case op::attribute_stream: return "Attribute Stream";
        case op::sh_band: return "SH Band Stream";
        case op::chunk_index: return "Chunk Index";
        case op::audio_legacy: return "Audio";
        case op::camera: return "Camera";
        case op::metadata: return "Metadata";
        case op::statistics: return "Statistics";
        case op::attachment: return "Attachment";
        case op::attachment_index: return "Attachment Index";
        case op::summary_offset: return "Summary Offset";
        case op::delta_chunk: return "Delta Chunk";
        case op::audio_source: return "Audio Source";
        case op::audio_data: return "Audio Data";
        case op::coordinate_frame: return "Coordinate Frame";
        case op::sensor_calibration: return "Sensor Calibration";
        case op::rig_trajectory: return "Rig Trajectory";
        case op::geodetic_anchor: return "Geodetic Anchor";
        case op::object_table: return "Object Table";
        case op::object_track: return "Object Track";
        default: return "";
    }
}

}  // namespace fourdgs
FOURDGS_PUBLIC_END
