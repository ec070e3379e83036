// scene_info.cpp — what a reader says about its scene as a whole (fourdgs.h, "Scene
// information"): fourdgs_scene_info, the Header's attributes and the Quantization's bounds, the
// Window Table, and the file's structure — the Chunk Index with its SH band ranges, the Summary
// Offsets and the records skipped as unknown.
#include "fourdgs_c_internal.hpp"

#include <algorithm>
#include <tuple>

using namespace fourdgs;
using namespace fourdgs::capi;

namespace {

// The Header (§5.1) and the temporal model the reader opened it with.
void header_out(const Header& h, bool keyframe_delta, fourdgs_scene_info& i) noexcept {
    i.profile = str(h.profile);
    i.library = str(h.library);
    i.temporal_model_name = str(h.temporal_model);
    i.temporal_model = keyframe_delta ? FOURDGS_MODEL_KEYFRAME_DELTA : FOURDGS_MODEL_GAUSSIAN_BIRTH;
    i.duration_sec = h.duration_sec;
    i.gaussian_count = h.gaussian_count;
    i.cutoff = h.cutoff;
    std::copy(h.aabb.begin(), h.aabb.end(), i.aabb);
    i.sh_degree = h.sh_degree;
    i.header_flags = h.flags;
}

// The Quantization record (§5.3).
void quantization_out(const Quantization& q, fourdgs_scene_info& i) noexcept {
    i.quantization_scheme = str(q.scheme);
    std::copy(q.pos_origin.begin(), q.pos_origin.end(), i.pos_origin);
    i.step_pos = q.step_pos;
    i.step_scale_log = q.step_scale_log;
    i.step_rot = q.step_rot;
    i.step_rgb = q.step_rgb;
    i.step_alpha = q.step_alpha;
    i.step_motion = q.step_motion;
    i.step_time = q.step_time;
    i.step_sigma_log = q.step_sigma_log;
    i.step_sh = q.step_sh;
    i.sh_depth_count = static_cast<uint32_t>(std::min<std::size_t>(q.sh_depths.size(), 3));
    for (uint32_t b = 0; b < i.sh_depth_count; ++b) i.sh_depths[b] = q.sh_depths[b];
    i.sh_depths_malformed = q.sh_depths_malformed;
}

// How many elements each getter of a list may ask for.
void counts_out(const SceneInfo& sc, fourdgs_scene_info& i) noexcept {
    i.header_attribute_count = sc.header.attributes.size();
    i.quantization_bound_count = sc.quantization.bounds.size();
    i.window_count = sc.windows.size();
    i.chunk_count = sc.index.size();
    i.metadata_count = sc.metadata.size();
    i.attachment_count = sc.attachments.size();
    i.audio_source_count = sc.audio.size();
    i.coordinate_frame_count = sc.coordinate_frames.size();
    i.sensor_count = sc.sensors.size();
    i.rig_trajectory_count = sc.rig_trajectories.size();
    i.geodetic_anchor_count = sc.geodetic_anchors.size();
    i.object_count = sc.object_table ? sc.object_table->entries.size() : 0;
    i.object_track_count = sc.object_tracks.size();
    i.skipped_record_count = sc.skipped.size();
    i.summary_offset_count = sc.summary_offsets.size();
    i.has_camera = sc.camera.has_value();
    i.has_object_table = sc.object_table.has_value();
    i.object_embedding_dim = sc.object_table ? sc.object_table->embedding_dim : 0;
}

// The file's tail and summary: the Footer, the Statistics, the bytes after the trailing magic.
void tail_out(const SceneInfo& sc, fourdgs_scene_info& i) noexcept {
    i.summary_crc_verified = sc.summary_crc_verified;
    i.trailing_bytes = sc.trailing_bytes;
    i.window_table_present = sc.has_window_table;
    i.has_footer = sc.footer.has_value();
    if (sc.footer) {
        i.summary_start = sc.footer->summary_start;
        i.summary_offset_start = sc.footer->summary_offset_start;
        i.summary_crc = sc.footer->summary_crc;
    }
    i.has_statistics = sc.statistics.has_value();
    if (sc.statistics) {
        i.statistics_gaussian_count = sc.statistics->gaussian_count;
        i.statistics_chunk_count = sc.statistics->chunk_count;
        i.statistics_duration_sec = sc.statistics->duration_sec;
        std::copy(sc.statistics->aabb.begin(), sc.statistics->aabb.end(), i.statistics_aabb);
    }
}

// A reader's scene as fourdgs_scene_info.
fourdgs_scene_info scene_info_out(const fourdgs_reader& reader) {
    const SceneReader& opened = *reader.opened;
    fourdgs_scene_info i{};
    header_out(opened.scene().header, opened.keyframe_delta(), i);
    quantization_out(opened.scene().quantization, i);
    counts_out(opened.scene(), i);
    tail_out(opened.scene(), i);
    i.index_built_by_scan = opened.index_built_by_scan();
    i.read_by_scan = opened.read_by_scan();
    if (opened.scan_cause()) i.scan_cause = str(opened.scan_cause()->refusal);
    return i;
}

// A Chunk Index entry (§5.8), and the bytes decoding its chunk fetches.
fourdgs_chunk_info chunk_info_out(const ChunkIndex& e, std::uint64_t fetch_bytes) noexcept {
    fourdgs_chunk_info c{};
    c.t0 = e.t0;
    c.t1 = e.t1;
    c.offset = e.chunk_offset;
    c.size = e.chunk_length;
    c.gaussian_count = e.gaussian_count;
    c.fetch_bytes = fetch_bytes;
    c.kind = e.keyframe ? e.keyframe->chunk_kind : 0;
    if (e.keyframe) {
        c.has_keyframe_fields = 1;
        c.delta_mode = e.keyframe->delta_mode;
        c.depth = e.keyframe->depth;
        c.reference_offset = e.keyframe->reference_offset;
        c.keyframe_offset = e.keyframe->keyframe_offset;
        c.live_count = e.keyframe->live_count;
    }
    c.band_count = e.bands.size();
    return c;
}

// Element k of a list as (a small code, a 64-bit offset, a 64-bit length). A NULL out-parameter
// is refused as "code", "offset" or "length", whatever fourdgs.h names it.
using RangeTriple = std::tuple<uint32_t, uint64_t, uint64_t>;

}  // namespace

fourdgs_status fourdgs_reader_scene_info(const fourdgs_reader* reader, fourdgs_scene_info* out) {
    return get_from(reader, the_handle, scene_info_out, out);
}

fourdgs_status fourdgs_reader_header_attribute(const fourdgs_reader* reader, size_t index,
                                               fourdgs_string* key, fourdgs_string* value) {
    return get_from(
        reader,
        [&](const fourdgs_reader& r) {
            return element(r.scene().header.attributes, index, "header attribute");
        },
        key_value_out, Out{key, "key"}, Out{value, "value"});
}

fourdgs_status fourdgs_reader_quantization_bound(const fourdgs_reader* reader, size_t index,
                                                 fourdgs_string* key, fourdgs_string* value) {
    return get_from(
        reader,
        [&](const fourdgs_reader& r) {
            return element(r.scene().quantization.bounds, index, "quantization bound");
        },
        key_value_out, Out{key, "key"}, Out{value, "value"});
}

fourdgs_status fourdgs_reader_window(const fourdgs_reader* reader, size_t index, double* lo,
                                     double* hi) {
    return get_from(
        reader, scene_element(&SceneInfo::windows, index, "window"),
        [](const WindowTable::Window& w) { return std::tuple(w.lo, w.hi); },
        Out{lo, "lo"}, Out{hi, "hi"});
}

// ---------------------------------------------------------------------------------------------
// The file's structure.

fourdgs_status fourdgs_reader_chunk_info(const fourdgs_reader* reader, size_t index,
                                         fourdgs_chunk_info* out) {
    return get_from(
        reader, scene_element(&SceneInfo::index, index, "chunk"),
        [&](const ChunkIndex& e) {
            return chunk_info_out(e, reader->opened->entry_fetch_cost(index).value_or(0));
        },
        out);
}

fourdgs_status fourdgs_reader_chunk_band(const fourdgs_reader* reader, size_t index, size_t k,
                                         uint32_t* band, uint64_t* offset, uint64_t* length) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        // The chunk is looked up before the out-parameters are checked: a call wrong in both
        // ways is refused for the chunk.
        const ChunkIndex* chunk = element(reader->scene().index, index, "chunk");
        if (chunk == nullptr) return FOURDGS_NOT_FOUND;
        return fill_outs(
            [&] { return element(chunk->bands, k, "SH band range"); },
            [](const ChunkIndex::Band& b) { return RangeTriple{b.band, b.offset, b.length}; },
            Out{band, "code"}, Out{offset, "offset"}, Out{length, "length"});
    });
}

fourdgs_status fourdgs_reader_summary_offset(const fourdgs_reader* reader, size_t k,
                                             uint32_t* opcode, uint64_t* start, uint64_t* length) {
    return get_from(
        reader, scene_element(&SceneInfo::summary_offsets, k, "summary offset"),
        [](const SummaryOffset& so) {
            return RangeTriple{so.group_opcode, so.group_start, so.group_length};
        },
        Out{opcode, "code"}, Out{start, "offset"}, Out{length, "length"});
}

fourdgs_status fourdgs_reader_skipped_record(const fourdgs_reader* reader, size_t k,
                                             uint32_t* opcode, uint64_t* offset, uint64_t* length) {
    return get_from(
        reader, scene_element(&SceneInfo::skipped, k, "skipped record"),
        [](const SkippedRecord& r) { return RangeTriple{r.opcode, r.offset, r.length}; },
        Out{opcode, "code"}, Out{offset, "offset"}, Out{length, "length"});
}
