// conformance/canonical.cpp — a decoded file as canonical JSON (docs/conformance.md).
//
// Everything a file says (Header, Quantization, windows, chunks, summary, content records,
// extras) and everything it decodes to (every gaussian's §3 state, the visible state at fixed
// instants, and for keyframe-delta files the composed state at every chunk's t0). The form does
// not depend on the read path or on decode order: gaussians are listed sorted by their own
// serialization, records in file order, audio sources by id.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/portable.hpp"
#include "fourdgs/reconstruct.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "fourdgs/text.hpp"
#include "fourdgs/wire.hpp"
#ifdef FOURDGS_CONFORMANCE_HAVE_EXTRAS
#include "fourdgs/extras.hpp"
#endif

namespace conformance {

using namespace fourdgs;

// ---------------------------------------------------------------------------------------------
// Json.

Json Json::boolean(bool b) {
    Json j;
    j.kind_ = Kind::boolean;
    j.scalar_ = b ? "true" : "false";
    return j;
}
Json Json::number_token(std::string token) {
    Json j;
    j.kind_ = Kind::number;
    j.scalar_ = std::move(token);
    return j;
}
Json Json::string(std::string s) {
    Json j;
    j.kind_ = Kind::string;
    j.scalar_ = std::move(s);
    return j;
}
Json Json::array() {
    Json j;
    j.kind_ = Kind::array;
    return j;
}
Json Json::object() {
    Json j;
    j.kind_ = Kind::object;
    return j;
}
Json& Json::push(Json v) {
    items_.push_back(std::move(v));
    return *this;
}
Json& Json::set(const std::string& key, Json v) {
    members_[key] = std::move(v);
    return *this;
}

std::string Json::dump() const {
    std::string out;
    switch (kind_) {
        case Kind::null: out = "null"; break;
        case Kind::boolean:
        case Kind::number: out = scalar_; break;
        case Kind::string: out += json_quote(scalar_); break;
        case Kind::array: {
            out += '[';
            for (std::size_t i = 0; i < items_.size(); ++i) {
                if (i) out += ',';
                out += items_[i].dump();
            }
            out += ']';
            break;
        }
        case Kind::object: {
            out += '{';
            bool first = true;
            for (const auto& [k, v] : members_) {  // std::map: sorted by key bytes
                if (!first) out += ',';
                first = false;
                out += json_quote(k);
                out += ':';
                out += v.dump();
            }
            out += '}';
            break;
        }
    }
    return out;
}

namespace {

// The shortest decimal that reads back as exactly `v` in its own type (std::to_chars: fixed or
// exponent notation, whichever is shorter). Non-finite values are the strings "inf", "-inf",
// "nan"; a negative zero is "0".
template <class T>
Json exact(T v) {
    if (std::isnan(v)) return Json::string("nan");
    if (std::isinf(v)) return Json::string(v > 0 ? "inf" : "-inf");
    if (v == 0) return Json::number_token("0");
    char buf[64];
    const auto r = fourdgs::to_chars(buf, buf + sizeof buf, v);
    return Json::number_token(std::string(buf, r.ptr));
}

}  // namespace

Json num(double v) { return exact(v); }
Json num(float v) { return exact(v); }
Json integer(std::uint64_t v) {
    if (v > (std::uint64_t{1} << 53)) return Json::string(std::to_string(v));
    return Json::number_token(std::to_string(v));
}
Json sinteger(std::int64_t v) {
    if (v > (std::int64_t{1} << 53) || v < -(std::int64_t{1} << 53))
        return Json::string(std::to_string(v));
    return Json::number_token(std::to_string(v));
}

namespace {

template <class T, std::size_t N>
Json nums(const std::array<T, N>& a) {
    Json j = Json::array();
    for (const T& v : a) j.push(num(v));
    return j;
}
Json nums(const float* p, std::size_t n) {
    Json j = Json::array();
    for (std::size_t i = 0; i < n; ++i) j.push(num(p[i]));
    return j;
}
Json string_map(const StringMap& m) {  // wire order kept: a §2 map may repeat keys
    Json j = Json::array();
    for (const auto& [k, v] : m) j.push(Json::array().push(Json::string(k)).push(Json::string(v)));
    return j;
}
std::string hex(const std::uint8_t* p, std::size_t n) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    s.reserve(n * 2);
    for (std::size_t i = 0; i < n; ++i) {
        s += digits[p[i] >> 4];
        s += digits[p[i] & 15];
    }
    return s;
}

[[noreturn]] void fail(const Error& e) {
    if (!e.refusal.empty()) throw Refused(e.refusal, e.describe());
    throw std::runtime_error(e.describe());
}
template <class T>
T take(Result<T> r) {
    if (!r) fail(r.error());
    return std::move(*r);
}
void check(const Status& s) {
    if (!s) fail(s.error());
}

// The fixed instants every file is evaluated at: fractions of its duration.
std::vector<double> instants(double duration) {
    std::vector<double> ts;
    for (double f : {0.0, 0.125, 0.25, 0.5, 0.75, 0.999}) ts.push_back(f * duration);
    return ts;
}

Json header_json(const Header& h) {
    Json j = Json::object();
    j.set("profile", Json::string(h.profile));
    j.set("library", Json::string(h.library));
    j.set("duration_sec", num(h.duration_sec));
    j.set("gaussian_count", integer(h.gaussian_count));
    j.set("cutoff", num(h.cutoff));
    j.set("temporal_model", Json::string(h.temporal_model));
    j.set("aabb", nums(h.aabb));
    j.set("sh_degree", integer(h.sh_degree));
    j.set("flags", integer(h.flags));
    j.set("attributes", string_map(h.attributes));
    return j;
}

Json quantization_json(const Quantization& q) {
    Json j = Json::object();
    j.set("scheme", Json::string(q.scheme));
    j.set("pos_origin", nums(q.pos_origin));
    j.set("step_pos", num(q.step_pos));
    j.set("step_scale_log", num(q.step_scale_log));
    j.set("step_rot", num(q.step_rot));
    j.set("step_rgb", num(q.step_rgb));
    j.set("step_alpha", num(q.step_alpha));
    j.set("step_motion", num(q.step_motion));
    j.set("step_time", num(q.step_time));
    j.set("step_sigma_log", num(q.step_sigma_log));
    j.set("step_sh", integer(q.step_sh));
    Json bounds = Json::object();  // values exactly as stored (the §5.3 grammar), keys sorted
    for (const auto& [k, v] : q.bounds) bounds.set(k, Json::string(v));
    j.set("bounds", bounds);
    Json depths = Json::array();
    for (auto d : q.sh_depths) depths.push(integer(d));
    j.set("sh_depths", depths);
    j.set("sh_depths_malformed", Json::boolean(q.sh_depths_malformed));
    return j;
}

Json index_json(const std::vector<ChunkIndex>& index) {
    Json j = Json::array();
    for (const ChunkIndex& e : index) {
        Json o = Json::object();
        o.set("t0", num(e.t0));
        o.set("t1", num(e.t1));
        o.set("chunk_offset", integer(e.chunk_offset));
        o.set("chunk_length", integer(e.chunk_length));
        o.set("gaussian_count", integer(e.gaussian_count));
        Json bands = Json::array();
        for (const auto& b : e.bands)
            bands.push(Json::object()
                           .set("band", integer(b.band))
                           .set("offset", integer(b.offset))
                           .set("length", integer(b.length)));
        o.set("bands", bands);
        if (e.keyframe) {
            const KeyframeIndexFields& k = *e.keyframe;
            o.set("keyframe", Json::object()
                                  .set("chunk_kind", integer(k.chunk_kind))
                                  .set("delta_mode", integer(k.delta_mode))
                                  .set("reference_offset", integer(k.reference_offset))
                                  .set("keyframe_offset", integer(k.keyframe_offset))
                                  .set("depth", integer(k.depth))
                                  .set("live_count", integer(k.live_count)));
        } else {
            o.set("keyframe", Json::null());
        }
        j.push(o);
    }
    return j;
}

Json samples_json(const std::vector<TrajectorySample>& samples) {
    Json j = Json::array();
    for (const auto& s : samples)
        j.push(Json::object()
                   .set("time", num(s.time))
                   .set("rotation", nums(s.rotation))
                   .set("translation", nums(s.translation)));
    return j;
}

Json payload_json(const std::vector<std::uint8_t>& data) {
    return Json::object()
        .set("length", integer(data.size()))
        .set("crc32", integer(crc32(Bytes(data.data(), data.size()))));
}

// Everything SceneInfo holds except gaussians. `payload` fetches a payload's bytes.
template <class PayloadFn>
Json scene_json(const SceneInfo& s, const PayloadFn& payload, bool index_from_file) {
    Json j = Json::object();
    j.set("header", header_json(s.header));
    j.set("quantization", quantization_json(s.quantization));
    Json windows = Json::array();
    for (const auto& w : s.windows) windows.push(Json::array().push(num(w.lo)).push(num(w.hi)));
    // The effective table (§5.4): an empty one reads as one (0, 0) window. (The streaming reader
    // computes it only when a chunk arrives, so a file without chunks is normalized here.)
    if (s.windows.empty()) windows.push(Json::array().push(num(0.0)).push(num(0.0)));
    j.set("windows", windows);
    j.set("window_table_present", Json::boolean(s.has_window_table));

    Json metadata = Json::array();
    for (const Metadata& m : s.metadata)
        metadata.push(Json::object().set("name", Json::string(m.name)).set("entries", string_map(m.entries)));
    j.set("metadata", metadata);

    if (s.camera) {
        const Camera& c = *s.camera;
        Json keys = Json::array();
        for (const auto& k : c.keyframes)
            keys.push(Json::object()
                          .set("time", num(k.time))
                          .set("position", nums(k.position))
                          .set("target", nums(k.target)));
        j.set("camera", Json::object()
                            .set("fov_y_deg", num(c.fov_y_deg))
                            .set("position", nums(c.position))
                            .set("target", nums(c.target))
                            .set("keyframes", keys)
                            .set("interpolation", Json::string(c.interpolation))
                            .set("loop", Json::boolean(c.loop)));
    } else {
        j.set("camera", Json::null());
    }

    Json attachments = Json::array();
    for (const AttachmentEntry& a : s.attachments) {
        attachments.push(Json::object()
                             .set("name", Json::string(a.name))
                             .set("media_type", Json::string(a.media_type))
                             .set("payload", payload_json(payload(a.payload))));
    }
    j.set("attachments", attachments);

    // Audio sources by id (a legacy Audio record is source 0).
    std::vector<const AudioSourceEntry*> audio;
    for (const auto& a : s.audio) audio.push_back(&a);
    std::sort(audio.begin(), audio.end(), [](auto* a, auto* b) {
        return a->descriptor.source_id < b->descriptor.source_id;
    });
    Json audio_json = Json::array();
    for (const AudioSourceEntry* e : audio) {
        const AudioSource& d = e->descriptor;
        Json keys = Json::array();
        for (const auto& k : d.keyframes)
            keys.push(Json::object()
                          .set("time", num(k.time))
                          .set("position", nums(k.position))
                          .set("rotation", nums(k.rotation)));
        Json o = Json::object();
        o.set("source_id", integer(d.source_id));
        o.set("legacy", Json::boolean(e->legacy));
        o.set("name", Json::string(d.name));
        o.set("codec", Json::string(d.codec));
        o.set("channel_layout", Json::string(d.channel_layout));
        o.set("data_length", integer(d.data_length));
        o.set("start_sec", num(d.start_sec));
        o.set("duration_sec", num(d.duration_sec));
        o.set("gain", num(d.gain));
        o.set("flags", integer(d.flags));
        o.set("position", nums(d.position));
        o.set("rotation", nums(d.rotation));
        o.set("keyframes", keys);
        o.set("interpolation", Json::string(d.interpolation));
        o.set("payload", payload_json(payload(e->payload)));
#ifdef FOURDGS_CONFORMANCE_HAVE_EXTRAS
        Json states = Json::array();
        for (double t : instants(s.header.duration_sec)) {
            const AudioState st = audio_state_at(d, t);
            states.push(Json::object()
                            .set("t", num(t))
                            .set("active", Json::boolean(st.active))
                            .set("local_time", num(st.local_time))
                            .set("gain", num(st.gain))
                            .set("position", nums(st.pose.translation))
                            .set("rotation", nums(st.pose.rotation)));
        }
        o.set("states", states);
#endif
        audio_json.push(o);
    }
    j.set("audio", audio_json);

    Json frames = Json::array();
    for (const CoordinateFrame& f : s.coordinate_frames)
        frames.push(Json::object()
                        .set("name", Json::string(f.name))
                        .set("handedness", integer(static_cast<unsigned>(f.handedness)))
                        .set("up_axis", Json::string(std::string(to_string(f.up_axis))))
                        .set("forward_axis", Json::string(std::string(to_string(f.forward_axis))))
                        .set("length_unit", Json::string(std::string(to_string(f.length_unit))))
                        .set("metres_per_unit", num(f.metres_per_unit)));
    j.set("coordinate_frames", frames);

    Json sensors = Json::array();
    for (const SensorCalibration& c : s.sensors) {
        Json dist = Json::array();
        for (double d : c.distortion) dist.push(num(d));
        sensors.push(Json::object()
                         .set("name", Json::string(c.name))
                         .set("modality", Json::string(c.modality))
                         .set("camera_model", Json::string(std::string(to_string(c.camera_model))))
                         .set("width_px", integer(c.width_px))
                         .set("height_px", integer(c.height_px))
                         .set("fx", num(c.fx))
                         .set("fy", num(c.fy))
                         .set("cx", num(c.cx))
                         .set("cy", num(c.cy))
                         .set("distortion", dist)
                         .set("rotation", nums(c.rotation))
                         .set("translation", nums(c.translation))
                         .set("pose_reference", integer(static_cast<unsigned>(c.pose_reference)))
                         .set("rig_name", Json::string(c.rig_name)));
    }
    j.set("sensors", sensors);

    Json rigs = Json::array();
    for (const RigTrajectory& r : s.rig_trajectories)
        rigs.push(Json::object()
                      .set("name", Json::string(r.name))
                      .set("interpolation", integer(static_cast<unsigned>(r.interpolation)))
                      .set("samples", samples_json(r.samples)));
    j.set("rig_trajectories", rigs);

    Json anchors = Json::array();
    for (const GeodeticAnchor& g : s.geodetic_anchors)
        anchors.push(Json::object()
                         .set("frame_name", Json::string(g.frame_name))
                         .set("latitude_deg", num(g.latitude_deg))
                         .set("longitude_deg", num(g.longitude_deg))
                         .set("altitude_m", num(g.altitude_m))
                         .set("heading_deg", num(g.heading_deg)));
    j.set("geodetic_anchors", anchors);

    if (s.object_table) {
        Json entries = Json::array();
        for (const auto& e : s.object_table->entries) {
            Json o = Json::object();
            o.set("object_id", integer(e.object_id));
            o.set("label", Json::string(e.label));
            o.set("anchor", nums(e.anchor));
            if (e.dynamics)
                o.set("dynamics", Json::object()
                                      .set("velocity", nums(e.dynamics->velocity))
                                      .set("angular_velocity", nums(e.dynamics->angular_velocity))
                                      .set("acceleration", nums(e.dynamics->acceleration)));
            else
                o.set("dynamics", Json::null());
            if (e.embedding)
                o.set("embedding", nums(e.embedding->data(), e.embedding->size()));
            else
                o.set("embedding", Json::null());
            entries.push(o);
        }
        j.set("object_table", Json::object()
                                  .set("embedding_dim", integer(s.object_table->embedding_dim))
                                  .set("entries", entries));
    } else {
        j.set("object_table", Json::null());
    }
    Json tracks = Json::array();
    for (const ObjectTrack& t : s.object_tracks)
        tracks.push(Json::object()
                        .set("object_id", integer(t.object_id))
                        .set("interpolation", integer(static_cast<unsigned>(t.interpolation)))
                        .set("samples", samples_json(t.samples)));
    j.set("object_tracks", tracks);

    Json skipped = Json::array();
    for (const SkippedRecord& r : s.skipped)
        skipped.push(Json::object()
                         .set("opcode", integer(r.opcode))
                         .set("offset", integer(r.offset))
                         .set("length", integer(r.length)));
    j.set("skipped_records", skipped);

    // The summary as the file states it (an index an indexed reader built by scanning a file
    // without one is not the file's, so it is not listed).
    j.set("index", index_json(index_from_file ? s.index : std::vector<ChunkIndex>{}));
    if (s.statistics) {
        const Statistics& st = *s.statistics;
        j.set("statistics", Json::object()
                                .set("gaussian_count", integer(st.gaussian_count))
                                .set("chunk_count", integer(st.chunk_count))
                                .set("duration_sec", num(st.duration_sec))
                                .set("aabb", nums(st.aabb)));
    } else {
        j.set("statistics", Json::null());
    }
    Json offsets = Json::array();
    for (const SummaryOffset& o : s.summary_offsets)
        offsets.push(Json::object()
                         .set("group_opcode", integer(o.group_opcode))
                         .set("group_start", integer(o.group_start))
                         .set("group_length", integer(o.group_length)));
    j.set("summary_offsets", offsets);
    j.set("summary_crc_verified", Json::boolean(s.summary_crc_verified));
    j.set("trailing_bytes", integer(s.trailing_bytes));
    if (s.footer)
        j.set("footer", Json::object()
                            .set("summary_start", integer(s.footer->summary_start))
                            .set("summary_offset_start", integer(s.footer->summary_offset_start))
                            .set("summary_crc", integer(s.footer->summary_crc)));
    else
        j.set("footer", Json::null());
    return j;
}

// One decoded gaussian's full §3 state.
Json gaussian_json(const GaussianBlock& b, std::size_t i) {
    Json o = Json::object();
    o.set("position", nums(&b.position[i * 3], 3));
    o.set("scale", nums(&b.scale[i * 3], 3));
    o.set("rotation", nums(&b.rotation[i * 4], 4));
    o.set("color", nums(&b.color[i * 4], 4));
    o.set("motion", nums(&b.motion[i * 3], 3));
    o.set("mu_t", num(b.mu_t[i]));
    o.set("sigma_t", std::isinf(b.sigma_t[i]) ? Json::null() : num(b.sigma_t[i]));
    o.set("window", Json::array().push(num(b.win_lo[i])).push(num(b.win_hi[i])));
    o.set("window_index", integer(b.window_index[i]));
    o.set("flags", integer(b.flags[i]));
    const std::size_t per = static_cast<std::size_t>(b.sh_per_gaussian());
    o.set("sh", Json::string(hex(b.sh.data() + i * per, per)));
    o.set("object_id", integer(b.object_id.empty() ? 0 : b.object_id[i]));
    if (b.has_source_ids)
        o.set("source", Json::array().push(sinteger(b.source_group[i])).push(sinteger(b.source_index[i])));
    else
        o.set("source", Json::null());
    o.set("gaussian_id", b.gaussian_id.empty() ? Json::null() : integer(b.gaussian_id[i]));
    return o;
}

// A list of JSON items in the order of their own serialization: independent of decode order.
Json sorted_list(std::vector<Json> items) {
    std::vector<std::pair<std::string, std::size_t>> keyed;
    for (std::size_t i = 0; i < items.size(); ++i) keyed.emplace_back(items[i].dump(), i);
    std::sort(keyed.begin(), keyed.end());
    Json j = Json::array();
    for (const auto& [k, i] : keyed) j.push(std::move(items[i]));
    return j;
}

Json gaussians_json(const GaussianBlock& b) {
    std::vector<Json> items;
    for (std::size_t i = 0; i < b.count; ++i) items.push_back(gaussian_json(b, i));
    return sorted_list(std::move(items));
}

// A number of the visible state: its f32 spelling, as evaluate() writes it, unless the f32 would
// overflow a finite value: then the f64 the §3 formulas give (a consumer tells the two apart by
// magnitude: no f32 is beyond 3.4e38).
Json visible_num(double v) {
    const float f = static_cast<float>(v);
    return std::isfinite(f) || !std::isfinite(v) ? num(f) : num(v);
}

// The visible state at t (§3, the Header's cutoff, Object Tracks composed), each gaussian by
// visible_state(): in f64 where f32 cannot hold it.
Json visible_at(const SceneInfo& s, const GaussianBlock& block, double t) {
    const TrackPoses poses(s.object_tracks, t);
    std::vector<Json> items;
    const std::size_t per = static_cast<std::size_t>(block.sh_per_gaussian());
    for (std::size_t i = 0; i < block.count; ++i) {
        const std::optional<VisibleState> v = visible_state(block, i, t, s.header.cutoff, poses);
        if (!v) continue;
        Json center = Json::array(), rotation = Json::array(), color = Json::array();
        for (double c : v->center) center.push(visible_num(c));
        for (double q : v->rotation) rotation.push(visible_num(q));
        for (int c = 0; c < 3; ++c) color.push(num(block.color[i * 4 + c]));
        color.push(num(v->opacity));
        items.push_back(Json::object()
                            .set("flags", integer(block.flags[i]))
                            .set("center", center)
                            .set("scale", nums(&block.scale[i * 3], 3))
                            .set("rotation", rotation)
                            .set("color", color)
                            .set("object_id", integer(block.object_id.empty() ? 0 : block.object_id[i]))
                            .set("sh", Json::string(hex(block.sh.data() + i * per, per))));
    }
    return Json::object().set("t", num(t)).set("visible", sorted_list(std::move(items)));
}

// ---------------------------------------------------------------------------------------------
// Gaussian-birth files.

struct ChunkSeen {
    std::uint64_t offset = 0;
    double t0 = 0, t1 = 0;
    std::uint32_t count = 0;
    bool object_id_stream = false;  // absent and all-zero decode alike (§6.6)
};

Json chunks_json(std::vector<ChunkSeen> chunks) {
    std::sort(chunks.begin(), chunks.end(), [](auto& a, auto& b) { return a.offset < b.offset; });
    Json j = Json::array();
    for (const auto& c : chunks)
        j.push(Json::object()
                   .set("offset", integer(c.offset))
                   .set("t0", num(c.t0))
                   .set("t1", num(c.t1))
                   .set("gaussian_count", integer(c.count))
                   .set("object_id_stream", Json::boolean(c.object_id_stream)));
    return j;
}

Json birth_document(const SceneInfo& s, const GaussianBlock& all, std::vector<ChunkSeen> chunks,
                    Json scene) {
    scene.set("model", Json::string("gaussian-birth"));
    scene.set("chunks", chunks_json(std::move(chunks)));
    scene.set("gaussians", gaussians_json(all));
    Json inst = Json::array();
    for (double t : instants(s.header.duration_sec)) inst.push(visible_at(s, all, t));
    scene.set("instants", inst);
    return scene;
}

Json birth_streamed(ByteSource& src) {
    ReaderOptions opt;
    opt.keep_payloads = true;
    StreamingReader reader(src, opt);
    check(reader.open());
    GaussianBlock all, chunk;
    ChunkBins bins;
    std::vector<ChunkSeen> chunks;
    bool first = true;
    while (true) {
        // Through the bins, which say which optional streams the chunk carried.
        auto more = reader.next_chunk_bins(bins);
        if (!more) fail(more.error());
        if (!*more) break;
        chunk.clear();
        dequantize(reader.scene(), bins, chunk);
        const ChunkRecord& c = reader.last_chunk();
        chunks.push_back({reader.last_chunk_offset(), c.t0, c.t1, c.count, bins.has_object_id});
        if (first) {
            all = chunk;
            first = false;
        } else {
            all.append(chunk);
        }
    }
    const SceneInfo& s = reader.scene();
    auto payload = [](const PayloadRef& p) { return p.data; };
    return birth_document(s, all, std::move(chunks), scene_json(s, payload, true));
}

Json birth_indexed(ByteSource& src) {
    IndexedReader reader = take(IndexedReader::open(src));
    const SceneInfo& s = reader.scene();
    GaussianBlock all;
    std::vector<DecodeWorkspace> pool;
    check(reader.read_all(all, pool, 1));
    std::vector<ChunkSeen> chunks;
    DecodeWorkspace ws;
    for (std::size_t i = 0; i < s.index.size(); ++i) {
        const ChunkIndex& e = s.index[i];
        check(reader.decode_chunk(i, ws));  // again, for the streams it carried
        chunks.push_back({e.chunk_offset, e.t0, e.t1, e.gaussian_count, ws.bins.has_object_id});
    }
    auto payload = [&](const PayloadRef& p) { return take(reader.read_payload(p)); };
    return birth_document(s, all, std::move(chunks),
                          scene_json(s, payload, !reader.index_built_by_scan()));
}

// ---------------------------------------------------------------------------------------------
// Keyframe-delta files: the composed state at every chunk's t0, and the visible state at the
// fixed instants (each evaluated on the state whose interval holds it).

struct ComposedState {
    StateInfo info;
    GaussianBlock block;
};

Json state_info_json(const StateInfo& i) {
    const bool delta = i.chunk_kind == kChunkKindDelta;  // a keyframe has no groups to count
    return Json::object()
        .set("offset", integer(i.offset))
        .set("length", integer(i.length))
        .set("t0", num(i.t0))
        .set("t1", num(i.t1))
        .set("level", integer(i.level))
        .set("chunk_kind", integer(i.chunk_kind))
        .set("delta_mode", integer(i.delta_mode))
        .set("depth", integer(i.depth))
        .set("reference_offset", integer(i.reference_offset))
        .set("keyframe_offset", integer(i.keyframe_offset))
        .set("live_count", integer(i.live_count))
        .set("update_count", delta ? integer(i.update_count) : Json::null())
        .set("birth_count", delta ? integer(i.birth_count) : Json::null())
        .set("death_count", delta ? integer(i.death_count) : Json::null())
        .set("object_id_stream", Json::boolean(i.object_id_stream));
}

Json delta_document(const SceneInfo& s, std::vector<ComposedState> states, Json scene) {
    std::sort(states.begin(), states.end(),
              [](auto& a, auto& b) { return a.info.t0 < b.info.t0; });
    scene.set("model", Json::string("keyframe-delta"));
    Json sj = Json::array();
    for (const auto& st : states)
        sj.push(Json::object()
                    .set("chunk", state_info_json(st.info))
                    .set("gaussians", gaussians_json(st.block)));
    scene.set("states", sj);
    Json inst = Json::array();
    for (double t : instants(s.header.duration_sec)) {
        const ComposedState* holder = nullptr;
        for (const auto& st : states)
            if (st.info.t0 <= t && t < st.info.t1) holder = &st;
        if (!holder) throw std::runtime_error("no state chunk covers t = " + std::to_string(t));
        inst.push(visible_at(s, holder->block, t));
    }
    scene.set("instants", inst);
    return scene;
}

Json delta_streamed(ByteSource& src) {
    ReaderOptions opt;
    opt.keep_payloads = true;
    KeyframeDeltaStream stream(src, opt);
    check(stream.open());
    std::vector<ComposedState> states;
    while (true) {
        ComposedState st;
        auto more = stream.next_state(st.block, &st.info);
        if (!more) fail(more.error());
        if (!*more) break;
        states.push_back(std::move(st));
    }
    const SceneInfo& s = stream.scene();
    auto payload = [](const PayloadRef& p) { return p.data; };
    return delta_document(s, std::move(states), scene_json(s, payload, true));
}

Json delta_indexed(ByteSource& src) {
    KeyframeDeltaReader reader = take(KeyframeDeltaReader::open(src));
    const SceneInfo& s = reader.scene();
    std::vector<ComposedState> states;
    KeyframeDeltaWorkspace ws;
    for (const ChunkIndex& e : reader.timeline().entries()) {
        ComposedState st;
        check(reader.state_at(e.t0, st.block, ws, &st.info));
        states.push_back(std::move(st));
    }
    // Payloads through a plain indexed reader over the same bytes (the front-end exposes the
    // scene, whose payload ranges any range read can serve).
    auto payload = [&](const PayloadRef& p) {
        const std::uint64_t size = src.size().value_or(0);
        if (p.offset > size || p.length > size - p.offset)
            throw std::runtime_error("payload outside the file");
        std::vector<std::uint8_t> out;
        check(read_range(src, p.offset, p.length, p.length, out));
        return out;
    };
    return delta_document(s, std::move(states),
                          scene_json(s, payload, !reader.base().index_built_by_scan()));
}

// Which front-end a file needs: the Header's temporal_model, read by the record layer.
bool is_keyframe_delta(ByteSource& src) {
    // The magic and the first record, whatever its declared length (up to what the source holds).
    std::vector<std::uint8_t> bytes(kMagicSize + kRecordHeaderSize);
    auto got = src.read_at(0, bytes);
    if (!got || *got < bytes.size()) return false;
    std::uint64_t length = 0;
    std::memcpy(&length, bytes.data() + kMagicSize + 1, 8);
    if (length > src.size().value_or(0)) return false;
    bytes.resize(bytes.size() + static_cast<std::size_t>(length));
    got = src.read_at(0, bytes);
    if (!got || *got < bytes.size()) return false;
    auto r = parse_record(Bytes(bytes).subspan(kMagicSize), kMagicSize);
    if (!r || r->opcode != op::header) return false;
    auto h = parse_header(*r);
    return h && h->temporal_model == kModelKeyframeDelta;
}

}  // namespace

Json canonical_decode(ByteSource& src, ReadPath path) {
    const bool kd = is_keyframe_delta(src);
    if (kd) return path == ReadPath::streamed ? delta_streamed(src) : delta_indexed(src);
    return path == ReadPath::streamed ? birth_streamed(src) : birth_indexed(src);
}

Json canonical_decode(const std::vector<std::uint8_t>& bytes, ReadPath path) {
    MemorySource src(bytes);
    return canonical_decode(src, path);
}

std::string canonical_output(ByteSource& source, ReadPath path) {
    try {
        return canonical_decode(source, path).dump() + "\n";
    } catch (const Refused& r) {
        return Json::object().set("refused", Json::string(r.id)).dump() + "\n";
    }
}

}  // namespace conformance
