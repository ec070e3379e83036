// libFuzzer harness for the C ABI (fourdgs.h): arbitrary bytes through every read entry point —
// open from memory and through callbacks, every scene accessor at every index the scene info
// counts (and one past it), payload reads, the camera, audio and pose queries, evaluation of the
// whole scene and of each chunk, the frame accessors and copies, and validation with every
// finding. Nothing may crash, hang or allocate past the limits; every failure must be a status
// that fourdgs_last_error names.
//   build: cmake -DFOURDGS_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ... ; run: fuzz_capi corpus/
#include <fourdgs/fourdgs.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

// Per family, at most this many indices are asked for (the counts come from the file).
constexpr std::uint64_t kMaxPerFamily = 32;

struct Memory {
    const std::uint8_t* data;
    std::size_t size;
};
std::uint64_t memory_size(void* user) { return static_cast<Memory*>(user)->size; }
std::int64_t memory_read_at(void* user, std::uint64_t offset, std::uint64_t length, void* out) {
    const Memory* m = static_cast<Memory*>(user);
    if (offset >= m->size) return 0;
    const std::uint64_t n = std::min<std::uint64_t>(length, m->size - offset);
    if (n) std::memcpy(out, m->data + offset, n);
    return static_cast<std::int64_t>(n);
}

// A failing call must leave a named error behind.
void named(fourdgs_status st) {
    if (st == FOURDGS_OK) return;
    fourdgs_error e{};
    e.struct_size = sizeof e;
    if (fourdgs_last_error(&e) != FOURDGS_OK || e.status != st || e.refusal.size == 0 ||
        e.message.size == 0 || fourdgs_status_name(st) == nullptr)
        std::abort();
}

std::uint64_t capped(std::uint64_t n) { return std::min(n, kMaxPerFamily) + 1; }  // one past

// Every index of one family (and one past the count), each into a fresh struct of its C type.
template <class Info>
void each(const fourdgs_reader* r, std::uint64_t count,
          fourdgs_status (*get)(const fourdgs_reader*, std::size_t, Info*)) {
    for (std::uint64_t i = 0; i < capped(count); ++i) {
        Info info{};
        info.struct_size = sizeof info;
        named(get(r, i, &info));
    }
}

void frame_accessors(const fourdgs_frame* frame) {
    fourdgs_frame_columns cols{};
    cols.struct_size = sizeof cols;
    named(fourdgs_frame_columns_get(frame, &cols));
    std::size_t count = 0;
    named(fourdgs_frame_count(frame, &count));
    const std::size_t n = std::min<std::size_t>(count, 4096);
    std::vector<float> center(n * 3), scale(n * 3), rotation(n * 4), color(n * 4);
    std::vector<std::uint32_t> object_id(n);
    std::vector<std::uint8_t> sh_bytes(n * 45);
    std::vector<float> sh_floats(n * 45);
    fourdgs_frame_buffers b{};
    b.struct_size = sizeof b;
    b.capacity = n;
    b.center = center.data();
    b.scale = scale.data();
    b.rotation = rotation.data();
    b.color = color.data();
    b.object_id = object_id.data();
    b.sh_degree = 3;
    b.sh_bytes = sh_bytes.data();
    b.sh_floats = sh_floats.data();
    std::size_t copied = 0;
    named(fourdgs_frame_copy(frame, &b, &copied));
}

void read_everything(const fourdgs_reader* r) {
    fourdgs_scene_info s{};
    s.struct_size = sizeof s;
    if (fourdgs_reader_scene_info(r, &s) != FOURDGS_OK) std::abort();  // an open reader has one
    fourdgs_string k, v;
    for (std::uint64_t i = 0; i < capped(s.header_attribute_count); ++i)
        named(fourdgs_reader_header_attribute(r, i, &k, &v));
    for (std::uint64_t i = 0; i < capped(s.quantization_bound_count); ++i)
        named(fourdgs_reader_quantization_bound(r, i, &k, &v));
    double lo, hi;
    for (std::uint64_t i = 0; i < capped(s.window_count); ++i)
        named(fourdgs_reader_window(r, i, &lo, &hi));
    for (std::uint64_t i = 0; i < capped(s.metadata_count); ++i) {
        std::size_t entries = 0;
        named(fourdgs_reader_metadata(r, i, &k, &entries));
        for (std::uint64_t e = 0; e < capped(entries); ++e)
            named(fourdgs_reader_metadata_entry(r, i, e, &k, &v));
    }
    named(fourdgs_reader_metadata_find(r, "title", 5, &v));
    std::vector<std::uint8_t> payload(1 << 16);
    for (std::uint64_t i = 0; i < capped(s.attachment_count); ++i) {
        fourdgs_attachment_info a{};
        a.struct_size = sizeof a;
        named(fourdgs_reader_attachment(r, i, &a));
        std::size_t got = 0;
        if (i < s.attachment_count)
            named(fourdgs_reader_read_payload(r, a.payload, payload.data(), payload.size(), &got));
    }
    const double times[] = {-1.0, 0.0, 0.37, 1.0, 2.5, 1e300};
    fourdgs_camera_info cam{};
    cam.struct_size = sizeof cam;
    named(fourdgs_reader_camera(r, &cam));
    if (s.has_camera) {
        fourdgs_camera_keyframe key;
        for (std::uint64_t i = 0; i < capped(cam.keyframe_count); ++i)
            named(fourdgs_reader_camera_keyframe(r, i, &key));
        double pos[3], target[3], fov;
        for (double t : times) named(fourdgs_reader_camera_at(r, t, pos, target, &fov));
    }
    for (std::uint64_t i = 0; i < capped(s.audio_source_count); ++i) {
        fourdgs_audio_source_info a{};
        a.struct_size = sizeof a;
        named(fourdgs_reader_audio_source(r, i, &a));
        fourdgs_audio_keyframe key;
        for (std::uint64_t j = 0; i < s.audio_source_count && j < capped(a.keyframe_count); ++j)
            named(fourdgs_reader_audio_keyframe(r, i, j, &key));
        fourdgs_audio_state st;
        for (double t : times) named(fourdgs_reader_audio_state_at(r, i, t, &st));
        std::size_t got = 0;
        if (i < s.audio_source_count)
            named(fourdgs_reader_read_payload(r, a.payload, payload.data(), payload.size(), &got));
    }
    each<fourdgs_coordinate_frame>(r, s.coordinate_frame_count, fourdgs_reader_coordinate_frame);
    each<fourdgs_sensor>(r, s.sensor_count, fourdgs_reader_sensor);
    each<fourdgs_geodetic_anchor>(r, s.geodetic_anchor_count, fourdgs_reader_geodetic_anchor);
    each<fourdgs_object_info>(r, s.object_count, fourdgs_reader_object);
    fourdgs_pose_sample sample;
    for (std::uint64_t i = 0; i < capped(s.rig_trajectory_count); ++i) {
        std::uint32_t interpolation = 0;
        std::size_t samples = 0;
        named(fourdgs_reader_rig_trajectory(r, i, &k, &interpolation, &samples));
        for (std::uint64_t j = 0; j < capped(samples); ++j)
            named(fourdgs_reader_rig_trajectory_sample(r, i, j, &sample));
    }
    for (std::uint64_t i = 0; i < capped(s.object_track_count); ++i) {
        std::uint32_t id = 0, interpolation = 0;
        std::size_t samples = 0;
        named(fourdgs_reader_object_track(r, i, &id, &interpolation, &samples));
        for (std::uint64_t j = 0; j < capped(samples); ++j)
            named(fourdgs_reader_object_track_sample(r, i, j, &sample));
    }

    fourdgs_frame* frame = nullptr;
    if (fourdgs_frame_create(nullptr, &frame) != FOURDGS_OK) std::abort();
    fourdgs_evaluate_options eo;
    fourdgs_evaluate_options_init(&eo);
    for (double t : times) {
        named(fourdgs_reader_evaluate(r, t, &eo, frame));
        frame_accessors(frame);
    }
    eo.max_sh_degree = 1;
    eo.append = 1;
    for (std::uint64_t i = 0; i < capped(s.chunk_count); ++i) {
        fourdgs_chunk_info c{};
        c.struct_size = sizeof c;
        named(fourdgs_reader_chunk_info(r, i, &c));
        named(fourdgs_reader_evaluate_chunk(r, i, c.t0, &eo, frame));
    }
    frame_accessors(frame);
    std::size_t indices[8], count = 0;
    for (double t : times) named(fourdgs_reader_chunks_for(r, t, indices, 8, &count));
    fourdgs_frame_free(frame);
}

void validate_everything(const std::uint8_t* data, std::size_t size,
                         const fourdgs_open_options* options) {
    fourdgs_validation* v = nullptr;
    const fourdgs_status st = fourdgs_validate_memory(data, size, options, &v);
    named(st);
    if (st != FOURDGS_OK) return;
    fourdgs_validation_summary sum{};
    sum.struct_size = sizeof sum;
    named(fourdgs_validation_summary_get(v, &sum));
    for (std::uint64_t i = 0; i < capped(sum.finding_count); ++i) {
        fourdgs_finding f{};
        f.struct_size = sizeof f;
        named(fourdgs_validation_finding(v, i, &f));
    }
    fourdgs_validation_free(v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fourdgs_open_options options;
    fourdgs_open_options_init(&options);
    // Small limits keep the fuzzer fast and prove the limits are honoured.
    options.max_record_bytes = 1u << 24;
    options.max_summary_bytes = 1u << 20;
    options.max_gaussians_per_chunk = 1u << 16;
    options.decode_threads = 1;

    fourdgs_reader* reader = nullptr;
    fourdgs_status st = fourdgs_reader_open_memory(data, size, &options, &reader);
    named(st);
    if (st == FOURDGS_OK) {
        read_everything(reader);
        fourdgs_reader_free(reader);
    }
    // The same bytes through the callback source, which fetches range by range.
    Memory memory{data, size};
    fourdgs_read_callbacks cb{&memory, memory_size, memory_read_at, nullptr};
    options.verify_summary_crc = 0;
    reader = nullptr;
    st = fourdgs_reader_open_callbacks(&cb, &options, &reader);
    named(st);
    if (st == FOURDGS_OK) {
        read_everything(reader);
        fourdgs_reader_free(reader);
    }
    validate_everything(data, size, &options);
    return 0;
}
