// `4dgs info`, `4dgs validate`, `4dgs dump`: what a file holds, whether it is valid, and its
// records, index or gaussians, as text for people or --json for machines.
#include <fourdgs/fourdgs.hpp>
#include <fourdgs/record_walk.hpp>
#include <fourdgs/extras.hpp>
#include <fourdgs/validate.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "output.hpp"

namespace cli {
namespace {

using namespace fourdgs;

// ---- info ----------------------------------------------------------------------------------

// The end-to-end tolerance a conversion recorded for bounds key `key` ("4dgs-convert" metadata,
// tools/convert.hpp), or nullptr.
const std::string* tolerance_of(const SceneInfo& s, std::string_view key) {
    for (const Metadata& m : s.metadata)
        if (m.name == "4dgs-convert")
            for (const auto& [k, v] : m.entries)
                if (k.size() == 10 + key.size() && k.rfind("tolerance.", 0) == 0 &&
                    k.substr(10) == key)
                    return &v;
    return nullptr;
}

// The JSON form of info, a section at a time, in the order its keys appear.

// "header": the Header's fields as written.
void info_json_header(Json& j, const Header& h) {
    j.begin_object("header")
        .str("profile", h.profile)
        .str("library", h.library)
        .str("temporal_model", h.temporal_model)
        .num("duration_sec", h.duration_sec)
        .num("gaussian_count", h.gaussian_count)
        .num("cutoff", h.cutoff)
        .num("sh_degree", unsigned{h.sh_degree})
        .num("flags", unsigned{h.flags});
    j.begin_array("aabb");
    for (double v : h.aabb) j.num({}, v);
    j.end_array();
    j.begin_object("attributes");
    for (const auto& [k, v] : h.attributes) j.str(k, v);
    j.end_object().end_object();
}

// "quantization", with the tolerance a conversion recorded beside each bound, and "windows".
void info_json_quantization(Json& j, const SceneInfo& s) {
    j.begin_object("quantization").str("scheme", s.quantization.scheme);
    j.begin_object("bounds");
    for (const auto& [k, v] : s.quantization.bounds) j.str(k, v);
    j.end_object();
    j.begin_object("tolerance");
    for (const auto& [k, v] : s.quantization.bounds)
        if (const std::string* t = tolerance_of(s, k)) j.str(k, *t);
    j.end_object();
    j.begin_array("sh_depths");
    for (auto d : s.quantization.sh_depths) j.num({}, unsigned{d});
    j.end_array().end_object();
    j.begin_array("windows");
    for (const auto& w : s.windows) j.begin_array().num({}, w.lo).num({}, w.hi).end_array();
    j.end_array();
}

// "chunks": each Chunk Index entry with its seek cost, and its keyframe-delta fields if any.
void info_json_chunks(Json& j, const Opened& f) {
    const SceneInfo& s = f.scene();
    j.begin_array("chunks");
    for (std::size_t i = 0; i < s.index.size(); ++i) {
        const ChunkIndex& e = s.index[i];
        entry_fields(j.begin_object(), e, seek_cost(f, i), false);
        if (e.keyframe)
            j.str("kind", e.keyframe->chunk_kind == 0 ? "keyframe" : "delta")
                .num("depth", unsigned{e.keyframe->depth})
                .num("live_count", e.keyframe->live_count);
        j.end_object();
    }
    j.end_array();
}

// "metadata", "audio" and "camera": the records a viewer presents.
void info_json_content(Json& j, const SceneInfo& s) {
    j.begin_array("metadata");
    for (const Metadata& m : s.metadata) {
        j.begin_object().str("name", m.name).begin_object("entries");
        for (const auto& [k, v] : m.entries) j.str(k, v);
        j.end_object().end_object();
    }
    j.end_array();
    j.begin_array("audio");
    for (const AudioSourceEntry& a : s.audio)
        j.begin_object()
            .num("source_id", unsigned{a.descriptor.source_id})
            .str("name", a.descriptor.name)
            .str("codec", a.descriptor.codec)
            .num("start_sec", a.descriptor.start_sec)
            .num("duration_sec", a.descriptor.duration_sec)
            .boolean("spatial", a.descriptor.spatial())
            .boolean("legacy", a.legacy)
            .num("bytes", a.payload.length)
            .end_object();
    j.end_array();
    if (s.camera)
        j.begin_object("camera")
            .num("fov_y_deg", s.camera->fov_y_deg)
            .num("keyframes", std::uint64_t{s.camera->keyframes.size()})
            .str("interpolation", s.camera->interpolation)
            .boolean("loop", s.camera->loop)
            .end_object();
    else
        j.null("camera");
}

// "provenance", "objects", "attachments" and "skipped": the rest, mostly as counts.
void info_json_extras(Json& j, const SceneInfo& s) {
    j.begin_object("provenance")
        .num("coordinate_frames", std::uint64_t{s.coordinate_frames.size()})
        .num("sensors", std::uint64_t{s.sensors.size()})
        .num("rig_trajectories", std::uint64_t{s.rig_trajectories.size()})
        .num("geodetic_anchors", std::uint64_t{s.geodetic_anchors.size()})
        .end_object();
    j.begin_object("objects")
        .num("table_entries",
             std::uint64_t{s.object_table ? s.object_table->entries.size() : 0})
        .num("tracks", std::uint64_t{s.object_tracks.size()})
        .end_object();
    j.begin_array("attachments");
    for (const AttachmentEntry& a : s.attachments)
        j.begin_object()
            .str("name", a.name)
            .str("media_type", a.media_type)
            .num("bytes", a.payload.length)
            .end_object();
    j.end_array();
    j.begin_array("skipped");
    for (const SkippedRecord& r : s.skipped)
        range_object(j, "opcode", r.opcode, r.offset, r.length);
    j.end_array();
}

// `info --json`: the sections above as one object, then the live counts when computed.
int info_json(const std::string& path, std::uint64_t file_size, const Opened& f,
              const Result<LiveTimeline>& tl) {
    const SceneInfo& s = f.scene();
    Json j;
    j.begin_object();
    j.str("file", path).num("file_size", file_size);
    info_json_header(j, s.header);
    info_json_quantization(j, s);
    info_json_chunks(j, f);
    info_json_content(j, s);
    info_json_extras(j, s);
    if (tl.ok()) {
        j.begin_array("live");
        for (auto v : tl->live) j.num({}, v);
        j.end_array();
    }
    j.end_object();
    print_json(j);
    return kExitOk;
}

// The text form of info, a section at a time, top to bottom as printed.

// The file, the Header, the SH depths, the quantization with its bounds, the window count.
void info_text_header(const std::string& path, std::uint64_t file_size, const SceneInfo& s) {
    const Header& h = s.header;
    fmt::print("{}  ({})\n", path, bytes_human(file_size));
    fmt::print("  library         {}\n", h.library);
    fmt::print("  profile         {}\n", h.profile.empty() ? "(none)" : h.profile);
    fmt::print("  temporal model  {}\n", h.temporal_model);
    fmt::print("  duration        {:.3f} s\n", h.duration_sec);
    fmt::print("  gaussians       {}\n", h.gaussian_count);
    fmt::print("  cutoff          {}\n", h.cutoff);
    fmt::print("  aabb            {} .. {}\n", vec3({h.aabb[0], h.aabb[1], h.aabb[2]}),
               vec3({h.aabb[3], h.aabb[4], h.aabb[5]}));
    for (const auto& [k, v] : h.attributes) fmt::print("  attribute       {} = {}\n", k, v);
    std::string depths;
    for (std::size_t b = 0; b < s.quantization.sh_depths.size(); ++b)
        depths += fmt::format("{}band {} {} bits", b ? ", " : "", b + 1,
                              unsigned{s.quantization.sh_depths[b]});
    fmt::print("  sh degree       {}{}\n", unsigned{h.sh_degree},
               depths.empty() ? std::string() : " (" + depths + ")");
    fmt::print("  quantization    {}\n", s.quantization.scheme);
    // The tolerance the producer asked for (convert's "4dgs-convert" metadata) beside each bound.
    for (const auto& [k, v] : s.quantization.bounds) {
        const std::string* t = tolerance_of(s, k);
        fmt::print("    bound {:<10}{:<24}{}\n", k, v, t ? "tolerance " + *t : std::string());
    }
    fmt::print("  windows         {}\n", s.windows.size());
}

// Each Chunk Index entry with its seek cost, then the live-count sparkline.
void info_text_chunks(const Opened& f, const Result<LiveTimeline>& tl) {
    const SceneInfo& s = f.scene();
    fmt::print("  chunks          {}\n", s.index.size());
    for (std::size_t i = 0; i < s.index.size(); ++i) {
        const ChunkIndex& e = s.index[i];
        std::string kind;
        if (e.keyframe)
            kind = e.keyframe->chunk_kind == 0
                       ? "  keyframe"
                       : fmt::format("  delta depth {}", unsigned{e.keyframe->depth});
        fmt::print("    #{:<4} [{:.3f}, {:.3f})  {:>7} gaussians  {:>10}  seek {}{}\n", i, e.t0,
                   e.t1, e.gaussian_count, bytes_human(e.chunk_length),
                   bytes_human(seek_cost(f, i)), kind);
    }
    if (tl.ok()) {
        std::uint64_t peak = 0;
        for (auto v : tl->live) peak = std::max(peak, v);
        fmt::print("  live            {}  (peak {})\n", sparkline(*tl, 48), peak);
    }
}

// Metadata, audio and the camera: the records a viewer presents.
void info_text_content(const SceneInfo& s) {
    for (const Metadata& m : s.metadata) {
        fmt::print("  metadata        {}\n", m.name.empty() ? "(unnamed)" : m.name);
        for (const auto& [k, v] : m.entries) fmt::print("    {} = {}\n", k, v);
    }
    fmt::print("  audio sources   {}\n", s.audio.size());
    for (const AudioSourceEntry& a : s.audio)
        fmt::print("    #{} {} {} start {} s, {} s{}{}, {}\n", a.descriptor.source_id,
                   a.descriptor.name.empty() ? "(unnamed)" : a.descriptor.name,
                   a.descriptor.codec, a.descriptor.start_sec, a.descriptor.duration_sec,
                   a.descriptor.spatial() ? ", spatial" : "", a.legacy ? ", legacy" : "",
                   bytes_human(a.payload.length));
    if (s.camera)
        fmt::print("  camera          fov {}°, {} keyframes, {}{}\n", s.camera->fov_y_deg,
                   s.camera->keyframes.size(), s.camera->interpolation,
                   s.camera->loop ? ", loop" : "");
    else
        fmt::print("  camera          (none)\n");
}

// Provenance, objects, attachments and the records stepped over.
void info_text_extras(const SceneInfo& s) {
    for (const CoordinateFrame& c : s.coordinate_frames)
        fmt::print("  frame           \"{}\" up {} forward {} unit {} ({} m/unit)\n", c.name,
                   to_string(c.up_axis), to_string(c.forward_axis), to_string(c.length_unit),
                   c.metres_per_unit);
    for (const SensorCalibration& c : s.sensors)
        fmt::print("  sensor          {} ({}, {} {}x{})\n", c.name, c.modality,
                   to_string(c.camera_model), c.width_px, c.height_px);
    for (const RigTrajectory& r : s.rig_trajectories)
        fmt::print("  rig trajectory  {} ({} samples)\n", r.name, r.samples.size());
    for (const GeodeticAnchor& g : s.geodetic_anchors)
        fmt::print("  geodetic anchor \"{}\" {:.6f}, {:.6f}, {} m\n", g.frame_name, g.latitude_deg,
                   g.longitude_deg, g.altitude_m);
    if (s.object_table) {
        fmt::print("  objects         {}\n", s.object_table->entries.size());
        for (const auto& e : s.object_table->entries)
            fmt::print("    #{} {}{}\n", e.object_id, e.label,
                       find_object_track(s, e.object_id) ? "  (tracked)" : "");
    }
    if (!s.object_tracks.empty()) fmt::print("  object tracks   {}\n", s.object_tracks.size());
    for (const AttachmentEntry& a : s.attachments)
        fmt::print("  attachment      {} ({}, {})\n", a.name, a.media_type,
                   bytes_human(a.payload.length));
    fmt::print("  skipped records {}\n", s.skipped.size());
    for (const SkippedRecord& r : s.skipped)
        fmt::print("    {} at byte {}, {} bytes\n", opcode_name(r.opcode), r.offset, r.length);
}

int cmd_info(const std::string& path, bool json) {
    Opened f;
    if (auto rc = open_file(path, f)) return *rc;
    auto tl = live_counts(f, 64);
    const std::uint64_t file_size = f.source->size().value_or(0);
    if (json) return info_json(path, file_size, f, tl);
    const SceneInfo& s = f.scene();
    info_text_header(path, file_size, s);
    info_text_chunks(f, tl);
    info_text_content(s);
    info_text_extras(s);
    return kExitOk;
}

// ---- validate ------------------------------------------------------------------------------

// Reads the whole file the way a player would: the front matter and index, then every chunk
// (gaussian-birth) or every state chunk's composed state (keyframe-delta). The first refusal,
// or nothing.
std::optional<Error> reader_refusal(ByteSource& source) {
    auto reader = open_scene(source);
    if (!reader.ok()) return reader.error();
    SceneWorkspace ws;
    if (auto st = reader->read_all([](const StoredBlock&) { return ok_status(); }, ws); !st.ok())
        return st.error();
    return std::nullopt;
}

int cmd_validate(const std::string& path, bool json) {
    auto src = open_source(path, g_http);
    if (!src.ok()) return cannot_run(src.error().describe());
    ValidateOptions vo;
    Progress bar("validating", g_quiet || ((*src)->size().value_or(0) < (8u << 20)));
    vo.progress = [&](std::uint64_t done, std::uint64_t total) { bar.update(done, total); };
    auto report = validate(**src, vo);
    bar.finish();
    if (!report.ok()) return cannot_run(report.error().describe());
    ValidationReport r = std::move(*report);
    // The readers' verdict too: a file the validator passes but a reader refuses is refused,
    // with the reader's identifier (a finding the validator did not make).
    if (auto refusal = reader_refusal(**src)) {
        bool known = false;
        for (const Finding& x : r.findings)
            known |= x.severity == Severity::error && x.rule == refusal->refusal;
        if (!known && refusal->kind != ErrorKind::io) {
            Finding x;
            x.severity = Severity::error;
            x.rule = refusal->refusal;
            x.field = "(reader)";
            x.offset = refusal->offset;
            x.message = "the reader refuses the file: " + refusal->message;
            r.findings.push_back(std::move(x));
        }
    }
    const int status = !r.valid() ? kExitRefused : (r.warnings() > 0 ? kExitWarnings : kExitOk);
    if (json) {
        Json j;
        j.begin_object()
            .str("file", path)
            .boolean("valid", r.valid())
            .num("errors", std::uint64_t{r.errors()})
            .num("warnings", std::uint64_t{r.warnings()})
            .num("records", r.records)
            .num("chunks", r.chunks)
            .boolean("truncated", r.truncated)
            .boolean("findings_capped", r.findings_capped)
            .num("exit_status", status);
        j.begin_array("findings");
        for (const Finding& x : r.findings) {
            j.begin_object()
                .str("severity", to_string(x.severity))
                .str("rule", x.rule)
                .str("field", x.field)
                .str("value", x.value);
            if (x.offset != kNoOffset) j.num("offset", x.offset);
            else j.null("offset");
            j.str("section", x.section).str("message", x.message).end_object();
        }
        j.end_array().end_object();
        print_json(j);
        return status;
    }
    for (const Finding& x : r.findings)
        fmt::print("{}: {} [{}] {}{}{} — {}\n", to_string(x.severity), x.rule,
                   x.section.empty() ? "-" : x.section, x.field,
                   x.value.empty() ? "" : " = " + x.value,
                   x.offset != kNoOffset ? fmt::format(" (at byte {})", x.offset) : "", x.message);
    fmt::print("{}: {} — {} error(s), {} warning(s), {} records, {} chunks{}\n", path,
               status == kExitOk ? "valid" : status == kExitWarnings ? "valid with warnings" : "invalid",
               r.errors(), r.warnings(), r.records, r.chunks, r.truncated ? ", truncated" : "");
    return status;
}

// ---- dump ----------------------------------------------------------------------------------

int dump_records(const std::string& path, bool json) {
    auto src = open_source(path, g_http);
    if (!src.ok()) return exit_refused(src.error());
    const std::uint64_t size = (*src)->size().value_or(0);
    Json j;
    j.begin_object().str("file", path).num("file_size", size).begin_array("records");
    // The text header, once the leading magic has been read (a refusal of it prints nothing).
    bool headed = json;
    auto head = [&] {
        if (!headed) fmt::print("{:>12}  {:>12}  {}\n", "offset", "length", "record");
        headed = true;
    };
    Progress bar("walking", g_quiet);
    // Frames only: contents are never read, so a file of any size dumps in constant memory.
    auto walk = walk_record_frames(**src, [&](const FramedRecord& f) {
        head();
        if (json)
            j.begin_object()
                .num("offset", f.offset)
                .num("opcode", unsigned{f.opcode})
                .str("name", opcode_name(f.opcode))
                .num("content_length", f.content_length)
                .num("length", f.length)
                .end_object();
        else
            fmt::print("{:>12}  {:>12}  {} (0x{:02X})\n", f.offset, f.length,
                       opcode_name(f.opcode), unsigned{f.opcode});
        bar.update(f.offset + f.length, size);
    });
    if (!walk.ok()) return exit_refused(walk.error());
    head();
    bar.finish();
    const std::optional<Error>& stop = walk->stopped;
    j.end_array().num("records_walked", walk->records);
    if (stop) j.str("stopped", stop->describe());
    j.end_object();
    if (json) print_json(j);
    else {
        fmt::print("{} records{}\n", walk->records,
                   walk->at_trailing_magic ? ", then the trailing magic" : "");
        if (stop) fmt::print("stopped: {}\n", stop->describe());
    }
    return stop ? kExitRefused : kExitOk;
}

int dump_index(const std::string& path, bool json) {
    Opened f;
    if (auto rc = open_file(path, f)) return *rc;
    const SceneInfo& s = f.scene();
    Json j;
    j.begin_object().str("file", path).boolean("built_by_scan", f.reader->index_built_by_scan());
    j.begin_array("entries");
    if (!json)
        fmt::print("{:>4} {:>10} {:>10} {:>12} {:>10} {:>9} {:>10}  bands\n", "#", "t0", "t1",
                   "offset", "length", "gaussians", "seek");
    for (std::size_t i = 0; i < s.index.size(); ++i) {
        const ChunkIndex& e = s.index[i];
        if (json) {
            entry_fields(j.begin_object(), e, seek_cost(f, i), true);
            j.begin_array("bands");
            for (const auto& b : e.bands) range_object(j, "band", b.band, b.offset, b.length);
            j.end_array();
            if (e.keyframe)
                j.num("chunk_kind", unsigned{e.keyframe->chunk_kind})
                    .num("delta_mode", unsigned{e.keyframe->delta_mode})
                    .num("reference_offset", e.keyframe->reference_offset)
                    .num("keyframe_offset", e.keyframe->keyframe_offset)
                    .num("depth", unsigned{e.keyframe->depth})
                    .num("live_count", e.keyframe->live_count);
            j.end_object();
        } else {
            std::string bands;
            for (const auto& b : e.bands) bands += fmt::format(" {}@{}+{}", b.band, b.offset, b.length);
            std::string kd;
            if (e.keyframe)
                kd = fmt::format("  {} depth {} ref {} live {}",
                                 e.keyframe->chunk_kind == 0 ? "keyframe" : "delta",
                                 unsigned{e.keyframe->depth}, e.keyframe->reference_offset,
                                 e.keyframe->live_count);
            fmt::print("{:>4} {:>10.4f} {:>10.4f} {:>12} {:>10} {:>9} {:>10} {}{}\n", i, e.t0, e.t1,
                       e.chunk_offset, e.chunk_length, e.gaussian_count, seek_cost(f, i), bands, kd);
        }
    }
    j.end_array().end_object();
    if (json) print_json(j);
    return kExitOk;
}

// Gaussians of a block (the stored §3 state) or of a frame (the state at T).
int dump_gaussians(const std::string& path, std::optional<double> at, bool json) {
    Json j;
    j.begin_object().str("file", path);
    if (at) {
        auto src = open_source(path, g_http);
        if (!src.ok()) return exit_refused(src.error());
        SceneInfo scene;
        Frame frame;
        if (auto st = evaluate_scene_at(**src, *at, ExtractOptions{}, scene, frame); !st.ok())
            return exit_refused(st.error());
        j.num("time", *at).num("visible", std::uint64_t{frame.count}).begin_array("gaussians");
        if (!json)
            fmt::print("visible at t = {} s: {} gaussians\n{:>8} {:>10} {:>10} {:>10} {:>9} {:>9} "
                       "{:>9} {:>6} {:>6} {:>6} {:>7} {:>6}\n",
                       *at, frame.count, "#", "x", "y", "z", "sx", "sy", "sz", "r", "g", "b",
                       "opacity", "object");
        for (std::size_t i = 0; i < frame.count; ++i) {
            const float* c = &frame.center[i * 3];
            const float* sc = &frame.scale[i * 3];
            const float* q = &frame.rotation[i * 4];
            const float* col = &frame.color[i * 4];
            if (json) {
                j.begin_object().num("source", unsigned{frame.source[i]});
                j.begin_array("center").num({}, c[0]).num({}, c[1]).num({}, c[2]).end_array();
                j.begin_array("scale").num({}, sc[0]).num({}, sc[1]).num({}, sc[2]).end_array();
                j.begin_array("rotation").num({}, q[0]).num({}, q[1]).num({}, q[2]).num({}, q[3]).end_array();
                j.begin_array("color").num({}, col[0]).num({}, col[1]).num({}, col[2]).num({}, col[3]).end_array();
                j.num("object_id", unsigned{frame.object_id[i]}).end_object();
            } else {
                fmt::print("{:>8} {:>10.4f} {:>10.4f} {:>10.4f} {:>9.4g} {:>9.4g} {:>9.4g} {:>6.3f} "
                           "{:>6.3f} {:>6.3f} {:>7.3f} {:>6}\n",
                           i, c[0], c[1], c[2], sc[0], sc[1], sc[2], col[0], col[1], col[2], col[3],
                           frame.object_id[i]);
            }
        }
        j.end_array().end_object();
        if (json) print_json(j);
        return kExitOk;
    }

    Opened f;
    if (auto rc = open_file(path, f)) return *rc;
    const SceneInfo& s = f.scene();
    // A gaussian-birth file's records; a keyframe-delta file's composed state per state chunk.
    std::vector<std::pair<std::size_t, GaussianBlock>> blocks;
    blocks.reserve(s.index.size());  // random access: the index is known before any decode
    Progress bar("decoding", g_quiet);
    SceneWorkspace ws;
    if (auto st = f.reader->read_all([&](const StoredBlock& b) {
            blocks.emplace_back(b.entry, b.gaussians);
            bar.update(blocks.size(), s.index.size());
            return ok_status();
        }, ws);
        !st.ok())
        return exit_refused(st.error());
    bar.finish();
    j.begin_array("chunks");
    for (const auto& [chunk, b] : blocks) {
        const ChunkIndex& e = s.index[chunk];
        j.begin_object().num("chunk", std::uint64_t{chunk}).num("t0", e.t0).num("t1", e.t1);
        j.begin_array("gaussians");
        if (!json)
            fmt::print("chunk {} [{:.4f}, {:.4f}): {} gaussians\n{:>8} {:>10} {:>10} {:>10} {:>6} "
                       "{:>6} {:>6} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
                       chunk, e.t0, e.t1, b.count, "#", "x", "y", "z", "r", "g", "b", "alpha",
                       "mu_t", "sigma_t", "win_lo", "win_hi", "id");
        for (std::size_t i = 0; i < b.count; ++i) {
            const std::uint32_t id = b.gaussian_id.empty() ? static_cast<std::uint32_t>(i) : b.gaussian_id[i];
            if (json) {
                j.begin_object().num("id", unsigned{id});
                j.begin_array("position");
                for (int c = 0; c < 3; ++c) j.num({}, b.position[i * 3 + c]);
                j.end_array().begin_array("scale");
                for (int c = 0; c < 3; ++c) j.num({}, b.scale[i * 3 + c]);
                j.end_array().begin_array("rotation");
                for (int c = 0; c < 4; ++c) j.num({}, b.rotation[i * 4 + c]);
                j.end_array().begin_array("color");
                for (int c = 0; c < 4; ++c) j.num({}, b.color[i * 4 + c]);
                j.end_array().begin_array("motion");
                for (int c = 0; c < 3; ++c) j.num({}, b.motion[i * 3 + c]);
                j.end_array()
                    .num("mu_t", b.mu_t[i])
                    .num("sigma_t", b.sigma_t[i])
                    .num("win_lo", b.win_lo[i])
                    .num("win_hi", b.win_hi[i])
                    .num("object_id", unsigned{b.object_id.empty() ? 0u : b.object_id[i]})
                    .end_object();
            } else {
                fmt::print("{:>8} {:>10.4f} {:>10.4f} {:>10.4f} {:>6.3f} {:>6.3f} {:>6.3f} {:>6.3f} "
                           "{:>9.4f} {:>9.4g} {:>9.4f} {:>9.4f} {:>9}\n",
                           i, b.position[i * 3], b.position[i * 3 + 1], b.position[i * 3 + 2],
                           b.color[i * 4], b.color[i * 4 + 1], b.color[i * 4 + 2],
                           b.color[i * 4 + 3], b.mu_t[i], b.sigma_t[i], b.win_lo[i], b.win_hi[i],
                           id);
            }
        }
        j.end_array().end_object();
    }
    j.end_array().end_object();
    if (json) print_json(j);
    return kExitOk;
}

}  // namespace

void add_inspect_commands(CLI::App& app, int& code) {
    static std::string file;
    static bool json = false;
    static double at = 0;
    auto* info = app.add_subcommand("info", "summarize a file: header, chunks, extras");
    info->add_option("FILE", file, "the .4dgs file: a path or an http(s):// URL")->required();
    info->add_flag("--json", json, "machine-readable output");
    info->callback([&code] { code = cmd_info(file, json); });

    auto* val = app.add_subcommand("validate",
                                   "every finding of the validator; exit 0 valid, 1 invalid, "
                                   "2 valid with warnings, 3 could not run");
    val->add_option("FILE", file, "the .4dgs file: a path or an http(s):// URL")->required();
    val->add_flag("--json", json, "machine-readable output");
    val->callback([&code] { code = cmd_validate(file, json); });

    static bool records = false, index = false, gaussians = false;
    auto* dump = app.add_subcommand("dump", "the record walk, the chunk index, or the gaussians");
    dump->add_option("FILE", file, "the .4dgs file: a path or an http(s):// URL")->required();
    auto* r_opt = dump->add_flag("--records", records, "every record with its offset and length");
    auto* i_opt = dump->add_flag("--index", index, "the Chunk Index");
    auto* g_opt = dump->add_flag("--gaussians", gaussians, "decoded gaussians");
    r_opt->excludes(i_opt)->excludes(g_opt);
    i_opt->excludes(g_opt);
    auto* at_opt = dump->add_option("--at", at, "with --gaussians: the visible state at T seconds");
    dump->add_flag("--json", json, "machine-readable output");
    dump->callback([&code, at_opt] {
        if (records) code = dump_records(file, json);
        else if (index) code = dump_index(file, json);
        else if (gaussians)
            code = dump_gaussians(file, at_opt->count() ? std::optional<double>(at) : std::nullopt, json);
        else code = cannot_run("dump needs one of --records, --index, --gaussians");
    });
}

}  // namespace cli
