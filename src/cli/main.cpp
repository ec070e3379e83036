// 4dgs — the command-line tool of the fourdgs SDK. Each subcommand is a thin layer over the
// library: it parses arguments, calls the library, and prints (text for people, --json for
// machines). Exit status: 0 success, 1 the file was refused or is invalid, 2 valid with
// warnings (validate), 3 the command could not run (usage, I/O).
#include <fourdgs/tools/convert.hpp>
#include <fourdgs/extras.hpp>
#include <fourdgs/fourdgs.hpp>
#include <fourdgs/detail/record_stream.hpp>
#include <fourdgs/tools/grid_plan.hpp>
#include <fourdgs/tools/merge.hpp>
#include <fourdgs/tools/ply.hpp>
#include <fourdgs/tools/preview.hpp>
#include <fourdgs/tools/splat_formats.hpp>
#include <fourdgs/validate.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gltf_export.hpp"
#include "output.hpp"

namespace {

using namespace fourdgs;
using cli::Json;

constexpr int kOk = 0, kRefused = 1, kWarnings = 2, kCannotRun = 3;

bool g_quiet = false;
HttpOptions g_http;  // --header, --ca-bundle, --timeout, --retries: every URL the command reads

// A refusal from the library: the identifier first, so scripts can match it.
int refused(const Error& e) {
    std::fprintf(stderr, "4dgs: refused: %s\n", e.describe().c_str());
    return e.kind == ErrorKind::io ? kCannotRun : kRefused;
}

int cannot_run(const std::string& message) {
    std::fprintf(stderr, "4dgs: %s\n", message.c_str());
    return kCannotRun;
}

void print_json(const Json& j) { std::printf("%s\n", j.text().c_str()); }

std::string bytes_human(std::uint64_t n) {
    if (n < 10 * 1024) return fmt::format("{} B", n);
    if (n < 10 * 1024 * 1024) return fmt::format("{:.1f} KiB", n / 1024.0);
    return fmt::format("{:.1f} MiB", n / (1024.0 * 1024.0));
}

// ---- opening a file ------------------------------------------------------------------------

struct Opened {
    std::unique_ptr<ByteSource> source;  // a file or a URL (open_source)
    std::optional<SceneReader> reader;   // the front-end its temporal model needs, opened once
    const SceneInfo& scene() const { return reader->scene(); }
};

// Opens the file with the reader its temporal model needs. Returns an exit status on failure.
std::optional<int> open_file(const std::string& path, Opened& out) {
    auto src = open_source(path, g_http);
    if (!src.ok()) return refused(src.error());
    out.source = std::move(*src);
    auto reader = open_scene(*out.source);
    if (!reader.ok()) return refused(reader.error());
    out.reader.emplace(std::move(*reader));
    return std::nullopt;
}

// The live (visible) gaussian count over time. Gaussian-birth: from every gaussian at once.
// Keyframe-delta: the composed state at each sample instant, evaluated there (a population member
// can be faded out); for files over 64 MiB the index's live_count (the population) stands in.
Result<LiveTimeline> live_counts(Opened& f, std::size_t samples) {
    const SceneInfo& s = f.scene();
    SceneWorkspace ws;
    if (!f.reader->keyframe_delta()) {
        GaussianBlock all;
        FOURDGS_TRY(f.reader->read_every_gaussian(all, ws));
        return live_timeline(all, s.header.duration_sec, s.header.cutoff, samples);
    }
    const bool evaluate_states = f.source->size().value_or(0) <= (std::uint64_t{64} << 20);
    LiveTimeline tl;
    GaussianBlock state;
    for (std::size_t i = 0; i < samples; ++i) {
        const double span = s.header.duration_sec;
        double t = samples > 1 ? span * static_cast<double>(i) / static_cast<double>(samples - 1) : 0.0;
        if (t >= span) t = std::nextafter(span, 0.0);  // the last instant inside the timeline
        std::uint64_t live = 0;
        if (evaluate_states) {
            FOURDGS_TRY(f.reader->state_at(t, state, ws));
            live = visible_count(state, t, s.header.cutoff);
        } else if (auto chain = f.reader->chunks_for(t); chain.ok() && s.index[chain->back()].keyframe) {
            live = s.index[chain->back()].keyframe->live_count;  // the chain ends at t's state
        }
        tl.times.push_back(t);
        tl.live.push_back(live);
    }
    return tl;
}

// What one instant costs to seek: the chunk's bytes, or a keyframe-delta chain's.
std::uint64_t seek_cost(const Opened& f, std::size_t entry) {
    return f.reader->entry_fetch_cost(entry).value_or(0);
}

// A Chunk Index entry's interval, range, gaussian count and seek cost: with the §5.8 field names
// (`dump --index`), or info's short ones.
void entry_fields(Json& j, const ChunkIndex& e, std::uint64_t seek, bool index_names) {
    j.num("t0", e.t0)
        .num("t1", e.t1)
        .num(index_names ? "chunk_offset" : "offset", e.chunk_offset)
        .num(index_names ? "chunk_length" : "length", e.chunk_length)
        .num(index_names ? "gaussian_count" : "gaussians", unsigned{e.gaussian_count})
        .num("seek_cost", seek);
}

// {"<what>": id, "offset": o, "length": n}: a record's or an SH band's byte range.
void range_object(Json& j, std::string_view what, unsigned id, std::uint64_t offset,
                  std::uint64_t length) {
    j.begin_object().num(what, id).num("offset", offset).num("length", length).end_object();
}

std::string vec3(const std::array<double, 3>& v) {
    return fmt::format("({:.4g}, {:.4g}, {:.4g})", v[0], v[1], v[2]);
}

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
    return kOk;
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
    return kOk;
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
    cli::Progress bar("validating", g_quiet || ((*src)->size().value_or(0) < (8u << 20)));
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
    const int status = !r.valid() ? kRefused : (r.warnings() > 0 ? kWarnings : kOk);
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
               status == kOk ? "valid" : status == kWarnings ? "valid with warnings" : "invalid",
               r.errors(), r.warnings(), r.records, r.chunks, r.truncated ? ", truncated" : "");
    return status;
}

// ---- dump ----------------------------------------------------------------------------------

int dump_records(const std::string& path, bool json) {
    auto src = open_source(path, g_http);
    if (!src.ok()) return refused(src.error());
    const std::uint64_t size = (*src)->size().value_or(0);
    // Frames only, through the readers' record stream: contents are never read, so a file of any
    // size dumps in constant memory.
    RecordStream stream(**src, std::numeric_limits<std::uint64_t>::max());
    if (auto st = stream.read_magic(); !st.ok()) return refused(st.error());
    Json j;
    j.begin_object().str("file", path).num("file_size", size).begin_array("records");
    if (!json) fmt::print("{:>12}  {:>12}  {}\n", "offset", "length", "record");
    cli::Progress bar("walking", g_quiet);
    std::uint64_t count = 0;
    std::optional<Error> stop;
    // Records until exactly the trailing magic's 8 bytes remain (§4.1), or the data ends.
    while (stream.position() + kMagicSize != size) {
        auto frame = stream.next_frame();
        if (!frame.ok()) {
            stop = frame.error();
            break;
        }
        if (!*frame) break;  // the data ended exactly at a record boundary: no trailing magic
        const RecordFrame& f = **frame;
        if (json)
            j.begin_object()
                .num("offset", f.offset)
                .num("opcode", unsigned{f.opcode})
                .str("name", opcode_name(f.opcode))
                .num("content_length", f.content_length)
                .num("length", f.total_length())
                .end_object();
        else
            fmt::print("{:>12}  {:>12}  {} (0x{:02X})\n", f.offset, f.total_length(),
                       opcode_name(f.opcode), unsigned{f.opcode});
        stream.skip(f);
        ++count;
        bar.update(stream.position(), size);
    }
    bar.finish();
    const std::uint64_t at = stream.position();
    if (!stop && at + kMagicSize == size) {
        std::array<std::uint8_t, kMagicSize> tail{};
        if (auto st = (*src)->read_exact(at, tail); !st.ok())
            stop = st.error();
        else if (auto magic = RecordStream::check_trailing_magic(tail, at); !magic.ok())
            stop = magic.error();
    }
    j.end_array().num("records_walked", count);
    if (stop) j.str("stopped", stop->describe());
    j.end_object();
    if (json) print_json(j);
    else {
        fmt::print("{} records{}\n", count, at + kMagicSize == size ? ", then the trailing magic" : "");
        if (stop) fmt::print("stopped: {}\n", stop->describe());
    }
    return stop ? kRefused : kOk;
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
    return kOk;
}

// Gaussians of a block (the stored §3 state) or of a frame (the state at T).
int dump_gaussians(const std::string& path, std::optional<double> at, bool json) {
    Json j;
    j.begin_object().str("file", path);
    if (at) {
        auto src = open_source(path, g_http);
        if (!src.ok()) return refused(src.error());
        SceneInfo scene;
        Frame frame;
        if (auto st = evaluate_scene_at(**src, *at, ExtractOptions{}, scene, frame); !st.ok())
            return refused(st.error());
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
        return kOk;
    }

    Opened f;
    if (auto rc = open_file(path, f)) return *rc;
    const SceneInfo& s = f.scene();
    // A gaussian-birth file's records; a keyframe-delta file's composed state per state chunk.
    std::vector<std::pair<std::size_t, GaussianBlock>> blocks;
    blocks.reserve(s.index.size());  // random access: the index is known before any decode
    cli::Progress bar("decoding", g_quiet);
    SceneWorkspace ws;
    if (auto st = f.reader->read_all([&](const StoredBlock& b) {
            blocks.emplace_back(b.entry, b.gaussians);
            bar.update(blocks.size(), s.index.size());
            return ok_status();
        }, ws);
        !st.ok())
        return refused(st.error());
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
    return kOk;
}

// ---- extract, preview, timeline --------------------------------------------------------------

int cmd_extract(const std::string& path, double t, const std::string& out, int sh_degree,
                const std::string& format) {
    if (format != "ply" && format != "splat" && format != "glb")
        return cannot_run("unknown --format '" + format + "' (ply, splat, glb)");
    auto src = open_source(path, g_http);
    if (!src.ok()) return refused(src.error());
    ExtractOptions eo;
    eo.max_sh_degree = format == "splat" ? 0 : sh_degree;  // .splat holds the DC colour only
    auto cloud = extract_state(**src, t, eo);
    if (!cloud.ok()) return refused(cloud.error());
    std::vector<std::uint8_t> bytes;
    if (format == "splat") {
        bytes = write_splat(*cloud);
    } else if (format == "glb") {
        try {
            bytes = cli::write_glb(*cloud);
        } catch (const std::exception& e) {
            return cannot_run(std::string("glTF: ") + e.what());
        }
    } else {
        auto ply = write_ply(*cloud);
        if (!ply.ok()) return refused(ply.error());
        bytes = std::move(*ply);
    }
    const std::string temp = out + ".partial";
    {
        auto sink = FileSink::create(temp);
        if (!sink.ok()) return refused(sink.error());
        if (auto st = sink->write(bytes); !st.ok()) return refused(st.error());
        if (auto st = sink->close(); !st.ok()) return refused(st.error());
    }
    if (std::rename(temp.c_str(), out.c_str()) != 0) {
        std::remove(temp.c_str());
        return cannot_run("cannot rename " + temp + " to " + out);
    }
    if (!g_quiet)
        std::fprintf(stderr, "%s: %zu gaussians visible at t = %g s, SH degree %d -> %s\n",
                     path.c_str(), cloud->count, t, cloud->sh_degree, out.c_str());
    return kOk;
}

int cmd_preview(const std::string& path, double t, const std::string& out, int width, int height) {
    auto src = open_source(path, g_http);
    if (!src.ok()) return refused(src.error());
    SceneInfo scene;
    Frame frame;
    ExtractOptions eo;
    eo.max_sh_degree = 0;  // the preview is DC colour only
    if (auto st = evaluate_scene_at(**src, t, eo, scene, frame); !st.ok()) return refused(st.error());
    PreviewOptions po;
    po.width = width;
    po.height = height;
    auto image = render_preview(scene, frame, t, po);
    if (!image.ok()) return refused(image.error());
    if (auto e = cli::write_png(out, *image); !e.empty()) return cannot_run(e);
    if (!g_quiet)
        std::fprintf(stderr, "%s: %zu gaussians at t = %g s -> %s (%dx%d)\n", path.c_str(),
                     frame.count, t, out.c_str(), width, height);
    return kOk;
}

int cmd_timeline(const std::string& path, const std::string& out, int width, int height) {
    Opened f;
    if (auto rc = open_file(path, f)) return *rc;
    auto tl = live_counts(f, static_cast<std::size_t>(std::max(2, width)));
    if (!tl.ok()) return refused(tl.error());
    auto image = plot_timeline(*tl, width, height);
    if (!image.ok()) return refused(image.error());
    if (auto e = cli::write_png(out, *image); !e.empty()) return cannot_run(e);
    if (!g_quiet) std::fprintf(stderr, "%s: live %s -> %s\n", path.c_str(), sparkline(*tl, 32).c_str(), out.c_str());
    return kOk;
}

// ---- convert -------------------------------------------------------------------------------

// The options convert and plan share: how the frames become a scene and what tolerance it keeps.
struct EncodeArgs {
    std::vector<std::string> inputs;
    std::string output, preset = "default", sh_bits = "none", model = "gaussian-birth", tolerance;
    std::string effort = "default";
    double fps = 0;
    bool tracked = false, json = false;
    std::uint32_t keyframe_every = 0;  // 0: not given, one second of frames (gop_frames)
};

struct ConvertArgs : EncodeArgs {
    std::string codec = fourdgs::codec_name(fourdgs::WriterOptions{}.codec);  // the writer's default
    std::string title, coordinate_system, grid, frames;
    std::string delta_reference = "cheaper";
    bool no_rigid_parts = false;
    unsigned threads = 0;
    std::size_t error_frames = 4;
    std::uint64_t splatv_frames = 30;  // a .splatv input: frames sampled over splaTV's [0, 1]
    // Which of the options the plan decides were given (a plan refuses them).
    std::vector<std::string> given;
};

// "none", "flat", ... or explicit depths "8,6,5". Returns an error message, or "".
std::string parse_sh_bits(const std::string& spec, ShLadder& ladder,
                          std::vector<std::uint8_t>& depths) {
    if (auto l = parse_sh_ladder(spec)) {
        ladder = *l;
        return {};
    }
    for (std::size_t i = 0; i < spec.size();) {
        std::size_t j = spec.find(',', i);
        if (j == std::string::npos) j = spec.size();
        const std::string part = spec.substr(i, j - i);
        if (part.size() != 1 || part[0] < '3' || part[0] > '8')
            return "--sh-bits '" + spec +
                   "': a ladder (none, flat, balanced, aggressive) or depths 3..8 per band, e.g. "
                   "8,6,5";
        depths.push_back(static_cast<std::uint8_t>(part[0] - '0'));
        i = j + 1;
    }
    return {};
}

// --model and --tracked as a conversion shape. Returns an error message, or "".
std::string parse_shape(const EncodeArgs& a, ConvertShape& shape) {
    if (a.model == "keyframe-delta") {
        if (!a.tracked) return "--model keyframe-delta needs --tracked (stable ids across frames)";
        shape = ConvertShape::keyframe_delta;
    } else if (a.model == "gaussian-birth") {
        shape = a.tracked ? ConvertShape::adaptive : ConvertShape::per_frame;
    } else {
        return "unknown --model '" + a.model + "' (gaussian-birth, keyframe-delta)";
    }
    return {};
}

// --preset and --tolerance as an end-to-end tolerance over a scene of `extent`; nullopt when
// neither was given and the preset should scale with the scene. Returns an error message, or "".
std::string parse_tolerance_args(const EncodeArgs& a, Preset& preset,
                                 std::optional<QuantBounds>& tolerance) {
    auto p = parse_preset(a.preset);
    if (!p) return "unknown --preset '" + a.preset + "' (fine, default, coarse)";
    preset = *p;
    if (a.tolerance.empty()) return {};
    // Keys not named keep the preset's, at the scale the preset has for a unit scene; pos keeps
    // the preset's only through the scene's size, so it must be named.
    auto t = parse_tolerance(a.tolerance, preset_tolerance(*p, 1.0));
    if (!t.ok()) return "--tolerance: " + t.error().message;
    if (a.tolerance.find("pos=") == std::string::npos)
        return "--tolerance: name pos (e.g. pos=1e-3): the other keys default to the preset's";
    tolerance = *t;
    return {};
}

// What a tracked conversion found, per frame, and each part's bytes encoded alone; and when the
// per-frame encoding won, that it did.
void print_parts(const ConvertReport& rep, ConvertShape asked) {
    if (rep.parts_sought) {
        auto line = [](const std::string& what, std::uint64_t n, std::uint64_t bytes) {
            fmt::print("  {:<22}{:>10} gaussians{:>12} alone\n", what, n, bytes_human(bytes));
        };
        fmt::print("parts found in every frame:\n");
        line("static", rep.static_part.gaussians, rep.static_part.bytes);
        for (const auto& obj : rep.objects)
            line("rigid object #" + std::to_string(obj.object_id), obj.gaussians, obj.bytes);
        line("other (" + std::string(to_string(asked)) + ")", rep.other_part.gaussians,
             rep.other_part.bytes);
    }
    if (rep.per_frame_bytes != 0)
        fmt::print("per-frame encoding: {}{}\n", bytes_human(rep.per_frame_bytes),
                   rep.shape != asked ? std::string(", smaller, so written instead of ") +
                                            std::string(to_string(asked))
                                      : std::string());
}

// The EncodeArgs into `o` (ConvertOptions or PlanOptions: clock, keyframe spacing, tolerance,
// shape) and `sh` (where that options struct keeps its preset and SH depths). Returns an error
// message, or "".
// The keyframe spacing when --keyframe-every is not given: one second of frames, splat4d's GOP.
// A keyframe restates every gaussian, static ones included, and a chained delta costs the same
// at any depth (§11.7), so a longer GOP is smaller; a second bounds the chain a seek walks.
std::uint32_t gop_frames(const EncodeArgs& a, double fps) {
    if (a.keyframe_every != 0) return a.keyframe_every;
    return fps > 0 && fps < 1e6 ? static_cast<std::uint32_t>(std::max(1.0, std::round(fps))) : 10;
}

template <class Options, class PresetAndDepths>
std::string apply_encode_args(const EncodeArgs& a, Options& o, PresetAndDepths& sh) {
    o.fps = a.fps;
    o.keyframe_every = gop_frames(a, a.fps);
    if (auto e = parse_tolerance_args(a, sh.preset, o.tolerance); !e.empty()) return e;
    if (auto e = parse_sh_bits(a.sh_bits, sh.sh_ladder, sh.sh_depths); !e.empty()) return e;
    const auto effort = parse_effort(a.effort);
    if (!effort) return "unknown --effort '" + a.effort + "' (fast, default, max)";
    sh.effort = *effort;
    return parse_shape(a, o.shape);
}

bool has_extension(const std::string& path, std::string_view ext) {
    std::string e = std::filesystem::path(path).extension().string();
    std::transform(e.begin(), e.end(), e.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return e == ext;
}

// The frame rate of a frames.json in an input directory, or beside a .splatv input (0: none).
Result<double> frames_json_fps(const std::vector<std::string>& inputs, std::size_t frames) {
    namespace fs = std::filesystem;
    for (const std::string& in : inputs) {
        std::error_code ec;
        const fs::path dir = fs::is_directory(in, ec) ? fs::path(in) : fs::path(in).parent_path();
        const fs::path json = dir / "frames.json";
        if (!fs::is_regular_file(json, ec)) continue;
        auto bytes = read_file(json.string());
        if (!bytes.ok()) return std::move(bytes).error();
        return read_frames_json(
            std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()), frames,
            json.string());
    }
    return 0.0;
}

int cmd_convert(const ConvertArgs& a) {
    ConvertOptions o;
    if (auto e = apply_encode_args(a, o, o.writer); !e.empty()) return cannot_run(e);
    o.title = a.title;
    o.coordinate_system = a.coordinate_system;
    const CodecInfo* chosen = find_codec(a.codec);
    if (!chosen) return cannot_run("unknown --codec '" + a.codec + "' (" + codec_names() + ")");
    o.writer.codec = chosen->byte;
    o.writer.level = chosen->archive_level;  // a file written once and read many times
    if (!a.grid.empty()) {
        // The plan decides the clock, the shape, the tolerance and the keyframes.
        for (const std::string& opt : a.given)
            if (opt != "--tracked" && opt != "--model")
                return cannot_run(opt + " cannot be given with --grid: the plan decides it");
        auto plan = read_grid_plan(a.grid);
        if (!plan.ok()) return refused(plan.error());
        const bool shape_given =
            std::find(a.given.begin(), a.given.end(), "--tracked") != a.given.end() ||
            std::find(a.given.begin(), a.given.end(), "--model") != a.given.end();
        if (shape_given && o.shape != plan->shape)
            return cannot_run("--tracked/--model ask for " + std::string(to_string(o.shape)) +
                              " but the plan " + a.grid + " was made for " +
                              std::string(to_string(plan->shape)));
        o.plan = std::move(*plan);
        o.shape = o.plan->shape;
        if (!a.frames.empty()) {
            const std::size_t colon = a.frames.find(':');
            std::uint64_t first = 0, end = 0;
            const char* s = a.frames.c_str();
            const auto r1 = std::from_chars(s, s + (colon == std::string::npos ? 0 : colon), first);
            const auto r2 = colon == std::string::npos
                                ? r1
                                : std::from_chars(s + colon + 1, s + a.frames.size(), end);
            if (colon == std::string::npos || r1.ec != std::errc() || r1.ptr != s + colon ||
                (colon + 1 < a.frames.size() &&
                 (r2.ec != std::errc() || r2.ptr != s + a.frames.size())))
                return cannot_run("--frames '" + a.frames +
                                  "': A:B (frames A up to B, B excluded) or A:");
            o.first_frame = first;
            o.end_frame = colon + 1 < a.frames.size() ? end : 0;
            if (o.end_frame == 0 && colon + 1 < a.frames.size())
                return cannot_run("--frames '" + a.frames + "': the slice is empty");
        }
    } else if (!a.frames.empty()) {
        return cannot_run("--frames needs --grid: a slice is a slice of a plan's frames");
    }
    // A .splatv holds a whole clip: its frames are sampled from it (splat_formats.hpp).
    const bool splatv = a.inputs.size() == 1 && has_extension(a.inputs[0], ".splatv");
    if (splatv && o.plan) return cannot_run("a .splatv converts without --grid");
    std::vector<std::string> paths;
    if (!splatv) {
        auto listed = list_ply_frames(a.inputs);
        if (!listed.ok()) return cannot_run(listed.error().describe());
        if (listed->empty()) return cannot_run("no .ply or .splat frames found");
        paths = std::move(*listed);
    }
    if (!o.plan) {
        auto json_fps = frames_json_fps(a.inputs, splatv ? a.splatv_frames : paths.size());
        if (!json_fps.ok()) return refused(json_fps.error());
        if (*json_fps > 0 && a.fps > 0 && std::abs(*json_fps - a.fps) > 1e-9 * a.fps)
            return cannot_run(fmt::format("--fps {} disagrees with frames.json's {}", a.fps,
                                          *json_fps));
        if (!(o.fps > 0)) o.fps = *json_fps;
        if (!(o.fps > 0))
            return cannot_run("--fps is required (or --grid, whose plan has it, or a frames.json "
                              "beside the frames)");
        o.keyframe_every = gop_frames(a, o.fps);
    }

    cli::Progress bar("converting", g_quiet);
    o.progress = [&](std::uint64_t done, std::uint64_t total) { bar.update(done, total); };
    o.rigid_parts = !a.no_rigid_parts;
    if (a.delta_reference != "cheaper" && a.delta_reference != "chained")
        return cannot_run("unknown --delta-reference '" + a.delta_reference +
                          "' (cheaper, chained)");
    o.cheaper_reference = a.delta_reference == "cheaper";
    o.writer.threads = a.threads;
    o.part_bytes = o.shape != ConvertShape::per_frame && !o.plan;  // the report's bytes per part
    o.error_frames = a.error_frames;
    ConvertReport rep;
    Status st;
    if (splatv) {
        auto scene = read_splatv_file(a.inputs[0]);
        if (!scene.ok()) return refused(scene.error());
        std::error_code ec;
        const std::uint64_t file_bytes = std::filesystem::file_size(a.inputs[0], ec);
        st = convert_frame_source(splatv_frames(*scene, a.splatv_frames, file_bytes), a.output,
                                  o, &rep);
    } else {
        st = convert_ply_files(paths, a.output, o, &rep);
    }
    bar.finish();
    if (!st.ok()) return refused(st.error());
    const std::string shape(to_string(rep.shape));
    const double ratio = rep.input_bytes ? double(rep.output_bytes) / double(rep.input_bytes) : 0;
    if (a.json) {
        Json j;
        j.begin_object()
            .str("output", a.output)
            .str("shape", shape)
            .num("frames", std::uint64_t{rep.frames})
            .num("first_frame", o.first_frame)
            .num("input_gaussians", rep.input_gaussians)
            .num("records", rep.records)
            .num("chunks", unsigned{rep.chunks})
            .num("deltas", unsigned{rep.deltas})
            .num("keyframe_referenced", unsigned{rep.keyframe_referenced})
            .num("input_bytes", rep.input_bytes)
            .num("output_bytes", rep.output_bytes)
            .num("ratio", ratio)
            .num("clamped_colors", rep.clamped_colors)
            .num("per_frame_bytes", rep.per_frame_bytes)
            .str("effort", to_string(o.plan ? o.plan->effort : o.writer.effort));
        cli::json_conversion_error(j, rep);
        if (rep.parts_sought) {
            auto part = [&](const char* name, const ConvertReport::Part& p) {
                j.begin_object(name).num("gaussians", p.gaussians).num("bytes", p.bytes);
                j.end_object();
            };
            j.begin_object("parts");
            part("static", rep.static_part);
            j.begin_array("objects");
            for (const auto& obj : rep.objects)
                j.begin_object()
                    .num("object_id", obj.object_id)
                    .num("gaussians", obj.gaussians)
                    .num("bytes", obj.bytes)
                    .end_object();
            j.end_array();
            part("other", rep.other_part);
            j.end_object();
        }
        j.begin_object("tolerance")
            .num("pos", rep.tolerance.pos)
            .num("scale_rel", rep.tolerance.scale_rel)
            .num("rot", rep.tolerance.rot)
            .num("rgb", rep.tolerance.rgb)
            .num("alpha", rep.tolerance.alpha)
            .end_object();
        j.begin_object("bounds");
        for (const auto& [k, v] : rep.quantization.bounds) j.str(k, v);
        j.end_object().end_object();
        print_json(j);
    } else if (!g_quiet) {  // -q: the file is the answer; --json still prints what it asks for
        fmt::print("{} frames, {} gaussians -> {} ({}): {} records in {} chunks\n", rep.frames,
                   rep.input_gaussians, a.output, shape, rep.records, rep.chunks);
        if (rep.deltas != 0)
            fmt::print("{} delta chunks: {} chained, {} keyframe-referenced{}\n", rep.deltas,
                       rep.deltas - rep.keyframe_referenced, rep.keyframe_referenced,
                       o.cheaper_reference ? " (each the smaller)" : "");
        fmt::print("{} of PLY -> {} ({:.1f}% of the input)\n", bytes_human(rep.input_bytes),
                   bytes_human(rep.output_bytes), ratio * 100);
        if (rep.clamped_colors)
            fmt::print("{} colour components outside [0, 1] were clamped\n", rep.clamped_colors);
        print_parts(rep, o.shape);
        fmt::print("within pos {}, scale_rel {}, rot {}, rgb {}, alpha {} of the input at every frame\n",
                   bound_string(rep.tolerance.pos), bound_string(rep.tolerance.scale_rel),
                   bound_string(rep.tolerance.rot), bound_string(rep.tolerance.rgb),
                   bound_string(rep.tolerance.alpha));
        cli::print_conversion_error(rep, to_string(o.plan ? o.plan->effort : o.writer.effort));
    }
    return kOk;
}

// ---- plan ----------------------------------------------------------------------------------

struct PlanArgs : EncodeArgs {
    std::uint32_t segment_frames = 30;
    std::size_t sample = 8;
    double margin = 0.05, max_speed = 0;
    std::vector<double> aabb;
    bool no_rigid_parts = false;
};

// The rigid parts a plan recorded: what each shard stores once.
void print_planned_parts(const GridPlan& plan) {
    if (plan.parts.empty()) return;
    fmt::print("parts (every shard stores them alike):\n");
    for (const PlannedPart& part : plan.parts) {
        std::uint64_t n = 0;
        for (const auto& [a, b] : part.members) n += b - a;
        fmt::print("  {:<22}{:>10} gaussians  frames [{}, {})\n",
                   part.rigid ? "rigid object #" + std::to_string(part.object_id)
                              : std::string("static"),
                   n, part.first_frame, part.end_frame);
    }
}

int cmd_plan(const PlanArgs& a) {
    PlanOptions po;
    if (auto e = apply_encode_args(a, po, po); !e.empty()) return cannot_run(e);
    po.segment_frames = a.segment_frames;
    po.sample_frames = a.sample;
    po.margin = a.margin;
    po.max_speed = a.max_speed;
    po.rigid_parts = !a.no_rigid_parts;
    if (!a.aabb.empty()) {
        if (a.aabb.size() != 6) return cannot_run("--aabb takes six numbers: min x y z, max x y z");
        std::array<double, 6> box{};
        std::copy(a.aabb.begin(), a.aabb.end(), box.begin());
        po.aabb = box;
    }
    auto paths = list_ply_frames(a.inputs);
    if (!paths.ok()) return cannot_run(paths.error().describe());
    if (paths->empty()) return cannot_run("no .ply frames found");
    auto plan = plan_ply_files(*paths, po);
    if (!plan.ok()) return refused(plan.error());
    if (auto st = write_grid_plan(*plan, a.output); !st.ok()) return refused(st.error());
    if (a.json) {
        std::printf("%s", grid_plan_json(*plan).c_str());
        return kOk;
    }
    const QuantBounds d = declared_bounds(plan->grid, plan->duration_sec);
    fmt::print("{} frames at {} fps ({:.3f} s), {}, effort {} -> {}\n", plan->frames, plan->fps,
               plan->duration_sec, to_string(plan->shape), to_string(plan->effort), a.output);
    fmt::print("aabb {} .. {}, scanned from {} frames\n",
               vec3({plan->aabb[0], plan->aabb[1], plan->aabb[2]}),
               vec3({plan->aabb[3], plan->aabb[4], plan->aabb[5]}),
               po.aabb ? 0 : plan_sample(plan->frames, po).size());
    fmt::print("  {:<10} {:>24} {:>24}\n", "attribute", "tolerance", "bound declared");
    const std::pair<const char*, std::pair<double, double>> rows[] = {
        {"pos", {plan->tolerance.pos, d.pos}},
        {"scale_rel", {plan->tolerance.scale_rel, d.scale_rel}},
        {"rot", {plan->tolerance.rot, d.rot}},
        {"rgb", {plan->tolerance.rgb, d.rgb}},
        {"alpha", {plan->tolerance.alpha, d.alpha}},
        {"time", {plan->tolerance.time, d.time}},
        {"sigma_rel", {plan->tolerance.sigma_rel, d.sigma_rel}}};
    for (const auto& [k, v] : rows)
        fmt::print("  {:<10} {:>24} {:>24}\n", k, bound_string(v.first), bound_string(v.second));
    if (plan->alignment() > 1)
        fmt::print("shards start and end on multiples of {} frames (the last may end at {})\n",
                   plan->alignment(), plan->frames);
    print_planned_parts(*plan);
    return kOk;
}

// The plan's frames cut into at most `shards` slices, one "A:B" per line: what each shard's
// convert --frames takes (a scheduler's task i reads line i + 1).
int cmd_slices(const std::string& grid, std::size_t shards) {
    auto plan = read_grid_plan(grid);
    if (!plan.ok()) return refused(plan.error());
    for (const auto& [first, end] : plan_slices(*plan, shards)) fmt::print("{}:{}\n", first, end);
    return kOk;
}

// ---- merge ---------------------------------------------------------------------------------

struct MergeArgs {
    std::vector<std::string> parts;
    std::string output, base, grid;
    bool allow_overlap = false, validate_parts = false, json = false;
};

int cmd_merge(const MergeArgs& a) {
    MergeOptions mo;
    mo.allow_overlap = a.allow_overlap;
    mo.validate_parts = a.validate_parts;
    if (!a.grid.empty()) {
        auto plan = read_grid_plan(a.grid);
        if (!plan.ok()) return refused(plan.error());
        mo.plan_digest = plan_digest(*plan);
    }
    if (!a.base.empty()) {
        const auto it = std::find(a.parts.begin(), a.parts.end(), a.base);
        if (it == a.parts.end()) return cannot_run("--base " + a.base + " is not one of the parts");
        mo.base = static_cast<std::size_t>(it - a.parts.begin());
    }
    MergeReport rep;
    if (auto st = merge_files(a.parts, a.output, mo, &rep); !st.ok()) return refused(st.error());
    if (a.json) {
        Json j;
        j.begin_object()
            .str("output", a.output)
            .num("parts", std::uint64_t{a.parts.size()})
            .str("base", a.parts[rep.base]);
        j.begin_array("order");
        for (std::size_t i : rep.order) j.str({}, a.parts[i]);
        j.end_array()
            .num("chunks", unsigned{rep.chunks})
            .num("chunks_verbatim", unsigned{rep.chunks_verbatim})
            .num("window_streams_rewritten", unsigned{rep.window_streams_rewritten})
            .num("references_rewritten", unsigned{rep.references_rewritten})
            .num("chunks_dropped", unsigned{rep.chunks_dropped})
            .num("bytes_verbatim", rep.bytes_verbatim)
            .num("bytes_written", rep.bytes_written)
            .end_object();
        print_json(j);
        return kOk;
    }
    fmt::print("{} parts -> {} ({}): {} chunks, front matter from {}\n", a.parts.size(), a.output,
               bytes_human(rep.bytes_written), rep.chunks, a.parts[rep.base]);
    fmt::print(
        "{} of {} copied byte for byte; {} window_index streams renumbered, {} delta "
        "references renamed, {} filler keyframes dropped\n",
        bytes_human(rep.bytes_verbatim), bytes_human(rep.bytes_written),
        rep.window_streams_rewritten, rep.references_rewritten, rep.chunks_dropped);
    return kOk;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"4dgs — inspect, validate, convert and preview .4dgs 4D gaussian-splat files"};
    app.require_subcommand(1);
    app.add_flag("-q,--quiet", g_quiet, "no progress bars or notes on stderr");
    // URLs on private servers (before the subcommand: 4dgs --header "Authorization: Bearer T" info URL).
    app.add_option("--header", g_http.headers,
                   "an HTTP request header 'Name: value' sent with every request for a URL (repeatable)")
        ->expected(1)
        ->take_all();
    app.add_option("--ca-bundle", g_http.ca_bundle,
                   "a PEM file of certificate authorities to trust for https:// instead of the system's");
    app.add_option_function<std::uint32_t>(
           "--timeout", [](const std::uint32_t& s) { g_http.transfer_timeout_ms = s * 1000; },
           "per-attempt transfer timeout for a URL, in seconds")
        ->check(CLI::PositiveNumber);
    app.add_option("--retries", g_http.max_attempts, "attempts per HTTP request, retries included")
        ->check(CLI::PositiveNumber);

    std::string file, out;
    bool json = false;
    double at = 0;
    int code = kOk;

    auto* info = app.add_subcommand("info", "summarize a file: header, chunks, extras");
    info->add_option("FILE", file, "the .4dgs file: a path or an http(s):// URL")->required();
    info->add_flag("--json", json, "machine-readable output");
    info->callback([&] { code = cmd_info(file, json); });

    auto* val = app.add_subcommand("validate",
                                   "every finding of the validator; exit 0 valid, 1 invalid, "
                                   "2 valid with warnings, 3 could not run");
    val->add_option("FILE", file, "the .4dgs file: a path or an http(s):// URL")->required();
    val->add_flag("--json", json, "machine-readable output");
    val->callback([&] { code = cmd_validate(file, json); });

    bool records = false, index = false, gaussians = false;
    auto* dump = app.add_subcommand("dump", "the record walk, the chunk index, or the gaussians");
    dump->add_option("FILE", file, "the .4dgs file: a path or an http(s):// URL")->required();
    auto* r_opt = dump->add_flag("--records", records, "every record with its offset and length");
    auto* i_opt = dump->add_flag("--index", index, "the Chunk Index");
    auto* g_opt = dump->add_flag("--gaussians", gaussians, "decoded gaussians");
    r_opt->excludes(i_opt)->excludes(g_opt);
    i_opt->excludes(g_opt);
    auto* at_opt = dump->add_option("--at", at, "with --gaussians: the visible state at T seconds");
    dump->add_flag("--json", json, "machine-readable output");
    dump->callback([&] {
        if (records) code = dump_records(file, json);
        else if (index) code = dump_index(file, json);
        else if (gaussians)
            code = dump_gaussians(file, at_opt->count() ? std::optional<double>(at) : std::nullopt, json);
        else code = cannot_run("dump needs one of --records, --index, --gaussians");
    });

    int sh_degree = 3;
    std::string extract_format = "ply";
    auto* ext = app.add_subcommand(
        "extract", "the state at T as a standard 3DGS PLY, an antimatter15 .splat or a glTF (.glb)");
    ext->add_option("FILE", file, "the .4dgs file: a path or an http(s):// URL")->required();
    ext->add_option("--at", at, "scene time, seconds")->required();
    ext->add_option("-o,--output", out, "the PLY to write")->required();
    ext->add_option("--sh-degree", sh_degree, "SH degree of the output (capped by the file's)")
        ->check(CLI::Range(0, 3));
    ext->add_option("--format", extract_format,
                    "ply (default), splat (antimatter15 .splat) or glb (glTF 2.0 with "
                    "KHR_gaussian_splatting)");
    ext->callback([&] { code = cmd_extract(file, at, out, sh_degree, extract_format); });

    // The encoding options convert and plan share.
    auto encode_options = [](CLI::App* cmd, EncodeArgs& a) {
        cmd->add_option("FRAMES", a.inputs,
                        "PLY or .splat frame files or directories, sorted naturally (convert: or "
                        "one .splatv)")
            ->required();
        cmd->add_option("--fps", a.fps, "frames per second");
        cmd->add_option(
            "--preset", a.preset,
            "tolerance preset: fine, default, coarse (docs/cli.md: what each looks like)");
        cmd->add_option(
            "--tolerance", a.tolerance,
            "end-to-end tolerance per attribute, e.g. pos=1e-3,rot=0.005 (pos required; "
            "others default to the preset's)");
        cmd->add_option("--sh-bits", a.sh_bits,
                        "SH bit depths: none, flat, balanced, aggressive, or e.g. 8,6,5");
        cmd->add_flag("--tracked", a.tracked,
                      "every frame holds the same gaussians in the same order: keep the "
                      "correspondence");
        cmd->add_option("--model", a.model,
                        "with --tracked: gaussian-birth (adaptive temporal sampling) or "
                        "keyframe-delta");
        cmd->add_option("--keyframe-every", a.keyframe_every,
                        "keyframe-delta: a keyframe every K frames (default: one second of "
                        "frames)")
            ->check(CLI::PositiveNumber);
        cmd->add_flag("--json", a.json, "machine-readable report");
        cmd->add_option("--effort", a.effort,
                        "encoder effort: fast, default, max (the smallest file, several times "
                        "slower)");
    };

    ConvertArgs ca;
    auto* conv = app.add_subcommand(
        "convert", "PLY or .splat frames (files or directories), or a .splatv, to a .4dgs scene");
    encode_options(conv, ca);
    conv->add_option("-o,--output", ca.output, "the .4dgs file to write")->required();
    conv->add_option("--codec", ca.codec, "stream codec: " + fourdgs::codec_names());
    conv->add_option("--title", ca.title, "a title for the scene's metadata");
    conv->add_option("--coordinate-system", ca.coordinate_system,
                     "the scene's handedness and up axis, e.g. \"right-handed, y-up\" "
                     "(the registry's coordinate_system key)");
    conv->add_option("--grid", ca.grid,
                     "a grid plan (4dgs plan): encode on its grid, clock, shape and keyframes");
    conv->add_option("--frames", ca.frames,
                     "with --grid: the slice A:B of the plan's frames (B excluded; A: to the end)");
    conv->add_option("--delta-reference", ca.delta_reference,
                     "keyframe-delta: cheaper (each delta references the GOP keyframe or the "
                     "previous frame, whichever is smaller; default) or chained");
    conv->add_option("--error-frames", ca.error_frames,
                     "decode this many frames and report the error against the input (0: none)");
    conv->add_flag("--no-rigid-parts", ca.no_rigid_parts,
                   "with --tracked: leave rigid parts to the temporal model instead of storing "
                   "them as objects with Object Tracks");
    conv->add_option("--splatv-frames", ca.splatv_frames,
                     "a .splatv input: the frames sampled over its clip (splaTV time 0 to 1)")
        ->check(CLI::Range(1, 100000));
    conv->add_option("--threads", ca.threads,
                     "encoder threads (0: one per core; a scheduler's task: its CPUs)");
    conv->callback([&] {
        for (const char* name : {"--fps", "--preset", "--tolerance", "--sh-bits", "--tracked",
                                 "--model", "--keyframe-every", "--effort"})
            if (conv->get_option(name)->count() > 0) ca.given.emplace_back(name);
        code = cmd_convert(ca);
    });

    PlanArgs pa;
    auto* plan = app.add_subcommand(
        "plan", "decide one quantization grid for a frame sequence, for encoding it in shards");
    encode_options(plan, pa);
    plan->get_option("--fps")->required();
    plan->add_option("-o,--output", pa.output, "the grid plan to write (JSON)")->required();
    plan->add_option("--segment-frames", pa.segment_frames,
                     "adaptive: records never span a multiple of S frames (shards start on one)");
    plan->add_option("--sample", pa.sample, "frames to scan for the aabb (0: every frame)");
    plan->add_option("--margin", pa.margin,
                     "widen a scanned aabb by this fraction of its largest side on every face");
    plan->add_option(
        "--max-speed", pa.max_speed,
        "adaptive: the fastest motion to allow, units/s (0: twice what the sample shows)");
    plan->add_option("--aabb", pa.aabb, "the scene's aabb, min x y z max x y z: no scan")
        ->expected(6)
        ->delimiter(',');
    plan->add_flag("--no-rigid-parts", pa.no_rigid_parts,
                   "with --tracked: record no rigid parts (each shard's temporal model takes "
                   "every gaussian)");
    plan->callback([&] { code = cmd_plan(pa); });

    std::string slices_grid;
    std::size_t slices_count = 1;
    auto* slc = app.add_subcommand(
        "slices", "cut a plan's frames into slices for N shards: one A:B per line, aligned");
    slc->add_option("GRID", slices_grid, "the grid plan")->required();
    slc->add_option("N", slices_count, "shards")->required()->check(CLI::PositiveNumber);
    slc->callback([&] { code = cmd_slices(slices_grid, slices_count); });

    MergeArgs ma;
    auto* mrg = app.add_subcommand("merge",
                                   "join shards of one scene (convert --grid --frames) into one "
                                   "file, copying their chunks byte for byte");
    mrg->add_option("PARTS", ma.parts, "the .4dgs parts, in any order")->required();
    mrg->add_option("-o,--output", ma.output, "the .4dgs file to write")->required();
    mrg->add_flag("--allow-overlap", ma.allow_overlap,
                  "gaussian-birth parts whose timelines overlap are a union");
    mrg->add_option("--base", ma.base,
                    "the part whose front matter the file takes (default: the earliest)");
    mrg->add_flag("--validate-parts", ma.validate_parts, "run the validator over every part first");
    mrg->add_option("--grid", ma.grid,
                    "the grid plan the shards were encoded on: every part must be one of its");
    mrg->add_flag("--json", ma.json, "machine-readable report");
    mrg->callback([&] { code = cmd_merge(ma); });

    int width = 640, height = 480;
    auto* prev = app.add_subcommand("preview", "render the state at T to a PNG");
    prev->add_option("FILE", file, "the .4dgs file: a path or an http(s):// URL")->required();
    prev->add_option("--at", at, "scene time, seconds")->required();
    prev->add_option("-o,--output", out, "the PNG to write")->required();
    prev->add_option("--width", width, "pixels")->check(CLI::Range(1, 8192));
    prev->add_option("--height", height, "pixels")->check(CLI::Range(1, 8192));
    prev->callback([&] { code = cmd_preview(file, at, out, width, height); });

    int tw = 800, th = 200;
    auto* tl = app.add_subcommand("timeline", "plot the live-gaussian count over time to a PNG");
    tl->add_option("FILE", file, "the .4dgs file: a path or an http(s):// URL")->required();
    tl->add_option("-o,--output", out, "the PNG to write")->required();
    tl->add_option("--width", tw, "pixels")->check(CLI::Range(1, 8192));
    tl->add_option("--height", th, "pixels")->check(CLI::Range(1, 8192));
    tl->callback([&] { code = cmd_timeline(file, out, tw, th); });

    cli::add_compare(app, code);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? kOk : kCannotRun;
    }
    return code;
}
