/* c_struct_size_test.c — fourdgs.h's struct_size promise, struct by struct (issue 41): a caller
 * compiled against an older fourdgs.h passes smaller structs, and the library reads and writes
 * only the struct_size bytes it was given.
 *
 * Every size-tagged struct lives in one buffer whose bytes past the caller's struct_size are guard
 * bytes (GUARD). Each struct goes, at several sizes smaller than today's (just struct_size, the
 * offset of its last field, its size in ABI 1) and one larger, through every function that takes
 * it:
 *   - the *_init forms: the sized one writes only within the size it is given, the exported
 *     ABI-1 symbol only within ABI 1's size; what they write is the defaults;
 *   - structs the library fills: the guard bytes are untouched, struct_size stays the caller's,
 *     and the bytes within it are what a full-size call gives;
 *   - structs the library reads: the guard bytes past the cut (garbage: huge counts, wild
 *     pointers, out-of-range enums) are never read — the call succeeds and behaves as with the
 *     defaults.
 * Usage: fourdgs_c_struct_size_test --tmp DIR */
#include "check.h"

#include <math.h>
#include <signal.h>
#include <stdalign.h>
#include <stddef.h>

#define GUARD 0xA5
#define SLACK 32 /* guard bytes checked past the library's sizeof */

/* The size a struct had in ABI 1 (capi/fourdgs.h at a61be18), for the structs that have grown
 * since: everything before the first field appended. */
#define ABI1_OPEN_OPTIONS offsetof(fourdgs_open_options, http_headers)
#define ABI1_SCENE_INFO offsetof(fourdgs_scene_info, trailing_bytes)
#define ABI1_CHUNK_INFO offsetof(fourdgs_chunk_info, has_keyframe_fields)
#define ABI1_FRAME_COLUMNS offsetof(fourdgs_frame_columns, flags)
#define ABI1_BLOCK_INFO offsetof(fourdgs_block_info, update_count)
#define ABI1_PLAYER_FRAME_INFO offsetof(fourdgs_player_frame_info, changed_rows)

#define END_OF(T, field) (offsetof(T, field) + sizeof(((T*)0)->field))
#define ROUND_UP(n, a) (((n) + (a) - 1) / (a) * (a))

/* The caller's struct and the guard bytes after it. */
static union {
    max_align_t align;
    unsigned char bytes[1024];
} g_space;

/* The space all guard bytes. */
static void* guarded_space(void) {
    memset(g_space.bytes, GUARD, sizeof g_space.bytes);
    return g_space.bytes;
}

/* The space as a caller's struct of `size` bytes: struct_size = size, the bytes [8, size) from
 * `fields` (NULL: guards too), guards after. */
static void* caller_struct(size_t size, const void* fields) {
    unsigned char* p = (unsigned char*)guarded_space();
    if (fields) memcpy(p, fields, size);
    memcpy(p, &size, sizeof size);
    return p;
}

/* Whether bytes [from, to) of the space are all still guards. */
static int guards_kept(size_t from, size_t to) {
    for (size_t i = from; i < to; ++i)
        if (g_space.bytes[i] != GUARD) return 0;
    return 1;
}

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* ------------------------------------------------------------------------------------------ */
/* The *_init forms. */

#define CHECK_INIT(T, abi1_size)                                                                \
    do {                                                                                        \
        T want_;                                                                                \
        memset(&want_, 0, sizeof want_);                                                        \
        T##_init_sized(&want_, sizeof want_);                                                   \
        CHECK(want_.struct_size == sizeof want_, #T "_init_sized: struct_size %zu",             \
              want_.struct_size);                                                               \
        T macro_;                                                                               \
        memset(&macro_, 0, sizeof macro_);                                                      \
        T##_init(&macro_);                                                                      \
        CHECK(memcmp(&macro_, &want_, sizeof want_) == 0, #T "_init (the macro) differs");      \
        const size_t sizes_[] = {sizeof(size_t) - 1, sizeof(size_t),                            \
                                 offsetof(T, LAST_FIELD_OF_##T), (abi1_size), sizeof(T),         \
                                 sizeof(T) + SLACK / 2};                                        \
        for (size_t k_ = 0; k_ < sizeof sizes_ / sizeof sizes_[0]; ++k_) {                      \
            const size_t n_ = sizes_[k_];                                                       \
            T* s_ = (T*)guarded_space();                                                        \
            T##_init_sized(s_, n_);                                                             \
            const size_t written_ = n_ < sizeof(size_t) ? 0 : min_size(n_, sizeof(T));         \
            CHECK(guards_kept(written_, sizeof(T) + SLACK),                                     \
                  #T "_init_sized(%zu) wrote past %zu bytes", n_, written_);                    \
            if (written_ == 0) continue;                                                        \
            CHECK(s_->struct_size == written_, #T "_init_sized(%zu): struct_size %zu", n_,      \
                  s_->struct_size);                                                             \
            CHECK(memcmp((unsigned char*)s_ + sizeof(size_t),                                   \
                         (unsigned char*)&want_ + sizeof(size_t),                               \
                         written_ - sizeof(size_t)) == 0,                                       \
                  #T "_init_sized(%zu): not the defaults", n_);                                 \
        }                                                                                       \
        /* The exported symbol of ABI 1, as a binary built then calls it. */                    \
        T* old_ = (T*)guarded_space();                                                          \
        (T##_init)(old_);                                                                       \
        CHECK(guards_kept((abi1_size), sizeof(T) + SLACK),                                      \
              "(" #T "_init) wrote past ABI 1's %zu bytes", (size_t)(abi1_size));               \
        CHECK(old_->struct_size == (abi1_size), "(" #T "_init): struct_size %zu, want %zu",     \
              old_->struct_size, (size_t)(abi1_size));                                          \
        CHECK(memcmp((unsigned char*)old_ + sizeof(size_t),                                     \
                     (unsigned char*)&want_ + sizeof(size_t),                                   \
                     (abi1_size) - sizeof(size_t)) == 0,                                        \
              "(" #T "_init): not the defaults");                                               \
        T##_init_sized(NULL, sizeof(T));                                                        \
        (T##_init)(NULL);                                                                       \
    } while (0)

#define LAST_FIELD_OF_fourdgs_open_options http_verify_tls
#define LAST_FIELD_OF_fourdgs_evaluate_options append
#define LAST_FIELD_OF_fourdgs_player_options stall_timeout_sec
#define LAST_FIELD_OF_fourdgs_writer_options allocator

static void test_inits(void) {
    /* ABI 1's sizes: open options ended at keep_payloads; the others have not grown. */
    CHECK_INIT(fourdgs_open_options, ROUND_UP(END_OF(fourdgs_open_options, keep_payloads),
                                              alignof(fourdgs_open_options)));
    CHECK_INIT(fourdgs_evaluate_options, sizeof(fourdgs_evaluate_options));
    CHECK_INIT(fourdgs_player_options, sizeof(fourdgs_player_options));
    CHECK_INIT(fourdgs_writer_options, sizeof(fourdgs_writer_options));
}

/* ------------------------------------------------------------------------------------------ */
/* Structs the library fills: `call` fills `out`. Each cut: the guards kept, struct_size the
 * caller's, and (when `same`) the bytes within the cut a full-size call's. */

static void check_filled(const char* what, size_t cut, size_t size, const void* full, int same) {
    const size_t written = min_size(cut, size);
    CHECK(guards_kept(written, size + SLACK), "%s with struct_size %zu: wrote past it", what, cut);
    size_t got = 0;
    memcpy(&got, g_space.bytes, sizeof got);
    CHECK(got == cut, "%s: struct_size %zu became %zu", what, cut, got);
    if (same)
        CHECK(memcmp(g_space.bytes + sizeof(size_t), (const unsigned char*)full + sizeof(size_t),
                     written - sizeof(size_t)) == 0,
              "%s with struct_size %zu: not what a full-size call gives", what, cut);
}

#define CHECK_FILLED(T, last, abi1_size, same, call)                                            \
    do {                                                                                        \
        T full_;                                                                                \
        memset(&full_, 0, sizeof full_);                                                        \
        full_.struct_size = sizeof full_;                                                       \
        {                                                                                       \
            T* out = &full_;                                                                    \
            EXPECT_OK(call);                                                                    \
        }                                                                                       \
        const size_t cuts_[] = {sizeof(size_t), offsetof(T, last), (abi1_size),                 \
                                sizeof(T) + SLACK / 2};                                         \
        for (size_t k_ = 0; k_ < sizeof cuts_ / sizeof cuts_[0]; ++k_) {                        \
            T* out = (T*)caller_struct(cuts_[k_], NULL);                                        \
            EXPECT_OK(call);                                                                    \
            check_filled(#call, cuts_[k_], sizeof(T), &full_, (same));                          \
        }                                                                                       \
    } while (0)

/* ------------------------------------------------------------------------------------------ */
/* A scene written through the C API with the writer's inputs cut short, every extra in it. */

enum { COUNT = 60 };

typedef struct columns {
    float position[COUNT * 3], scale[COUNT * 3], rotation[COUNT * 4], color[COUNT * 4];
    float mu_t[COUNT], sigma_t[COUNT];
    double win_lo[COUNT], win_hi[COUNT];
} columns;

static void fill_columns(columns* c) {
    for (size_t i = 0; i < COUNT; ++i) {
        for (int k = 0; k < 3; ++k) {
            c->position[i * 3 + k] = (float)(i % 7) * 0.25f + (float)k;
            c->scale[i * 3 + k] = 0.05f;
        }
        c->rotation[i * 4 + 0] = c->rotation[i * 4 + 1] = c->rotation[i * 4 + 2] = 0.0f;
        c->rotation[i * 4 + 3] = 1.0f;
        for (int k = 0; k < 4; ++k) c->color[i * 4 + k] = 0.5f;
        c->mu_t[i] = 1.0f;
        c->sigma_t[i] = 0.5f;
        c->win_lo[i] = 0.0;
        c->win_hi[i] = 2.0;
    }
}

static fourdgs_gaussian_batch batch_of(const columns* c, size_t first, size_t count, int windows) {
    fourdgs_gaussian_batch b;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    b.count = count;
    b.position = c->position + first * 3;
    b.scale = c->scale + first * 3;
    b.rotation = c->rotation + first * 4;
    b.color = c->color + first * 4;
    b.mu_t = c->mu_t + first;
    b.sigma_t = c->sigma_t + first;
    b.win_lo = windows ? c->win_lo + first : NULL;
    b.win_hi = windows ? c->win_hi + first : NULL;
    return b;
}

static fourdgs_writer_options writer_options(void) {
    fourdgs_writer_options o;
    fourdgs_writer_options_init(&o);
    o.duration_sec = 2.0;
    o.threads = 1;
    return o;
}

/* The writer options cut before `allocator` (garbage there would be called). */
static fourdgs_writer* writer_cut(void) {
    const fourdgs_writer_options o = writer_options();
    fourdgs_writer* w = NULL;
    EXPECT_OK(fourdgs_writer_create(
        (const fourdgs_writer_options*)caller_struct(offsetof(fourdgs_writer_options, allocator), &o),
        &w));
    return w;
}

static void add_extras(fourdgs_writer* w) {
    fourdgs_audio_source_info audio;
    memset(&audio, 0, sizeof audio);
    audio.struct_size = sizeof audio;
    audio.source_id = 3;
    audio.name.data = "bed";
    audio.name.size = 3;
    audio.codec.data = "pcm-s16le";
    audio.codec.size = 9;
    audio.channel_layout.data = "mono";
    audio.channel_layout.size = 4;
    audio.interpolation.data = "linear";
    audio.interpolation.size = 6;
    audio.duration_sec = 1;
    audio.gain = 1;
    audio.rotation[3] = 1;
    const unsigned char pcm[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    /* Cut before keyframe_count (garbage: a count with no keyframes behind it). */
    EXPECT_OK(fourdgs_writer_add_audio_source(
        w,
        (const fourdgs_audio_source_info*)caller_struct(
            offsetof(fourdgs_audio_source_info, keyframe_count), &audio),
        NULL, 0, pcm, sizeof pcm));

    fourdgs_coordinate_frame frame;
    memset(&frame, 0, sizeof frame);
    frame.struct_size = sizeof frame;
    frame.name.data = "scene";
    frame.name.size = 5;
    frame.handedness = 1;
    frame.up_axis = 1;
    frame.forward_axis = 5;
    frame.length_unit = 1;
    frame.metres_per_unit = 2.0; /* past the cut: the default (0) is written */
    EXPECT_OK(fourdgs_writer_add_coordinate_frame(
        w, (const fourdgs_coordinate_frame*)caller_struct(
               offsetof(fourdgs_coordinate_frame, metres_per_unit), &frame)));

    fourdgs_sensor sensor;
    memset(&sensor, 0, sizeof sensor);
    sensor.struct_size = sizeof sensor;
    sensor.name.data = "cam0";
    sensor.name.size = 4;
    sensor.modality.data = "rgb";
    sensor.modality.size = 3;
    sensor.camera_model = 1;
    sensor.width_px = 640;
    sensor.height_px = 480;
    sensor.fx = sensor.fy = 500;
    sensor.cx = 320;
    sensor.cy = 240;
    sensor.rotation[3] = 1;
    /* Cut before pose_reference (garbage: a reference that is neither 0 nor 1). */
    EXPECT_OK(fourdgs_writer_add_sensor(
        w, (const fourdgs_sensor*)caller_struct(offsetof(fourdgs_sensor, pose_reference),
                                                &sensor)));

    fourdgs_geodetic_anchor anchor;
    memset(&anchor, 0, sizeof anchor);
    anchor.struct_size = sizeof anchor;
    anchor.frame_name.data = "scene";
    anchor.frame_name.size = 5;
    anchor.latitude_deg = 48.85;
    anchor.longitude_deg = 2.35;
    EXPECT_OK(fourdgs_writer_add_geodetic_anchor(
        w, (const fourdgs_geodetic_anchor*)caller_struct(
               offsetof(fourdgs_geodetic_anchor, heading_deg), &anchor)));

    fourdgs_object_info object;
    memset(&object, 0, sizeof object);
    object.struct_size = sizeof object;
    object.object_id = 1;
    object.label.data = "box";
    object.label.size = 3;
    /* Cut before has_embedding (garbage: an embedding flag and a wild pointer). */
    EXPECT_OK(fourdgs_writer_add_object(
        w, (const fourdgs_object_info*)caller_struct(offsetof(fourdgs_object_info, has_embedding),
                                                     &object),
        4));

    double pos[3] = {0, 1, 5}, target[3] = {0, 0, 0};
    EXPECT_OK(fourdgs_writer_set_camera(w, 50.0, pos, target, NULL, 0, "linear", 6, 0));
    const char note[] = "notes";
    EXPECT_OK(fourdgs_writer_add_attachment(w, "notes.txt", 9, "text/plain", 10, note,
                                            sizeof note - 1));
}

/* Writes the scene (batches cut before object_id: garbage would be a wild pointer). */
static bytes write_scene(const columns* c) {
    bytes out = {NULL, 0};
    fourdgs_writer* w = writer_cut();
    if (!w) return out;
    for (size_t first = 0; first < COUNT; first += COUNT / 2) {
        const fourdgs_gaussian_batch b = batch_of(c, first, COUNT / 2, 1);
        EXPECT_OK(fourdgs_writer_add_gaussians(
            w, (const fourdgs_gaussian_batch*)caller_struct(
                   offsetof(fourdgs_gaussian_batch, object_id), &b)));
    }
    add_extras(w);
    const uint8_t* data = NULL;
    size_t size = 0;
    EXPECT_OK(fourdgs_writer_finish_memory(w, &data, &size));
    if (data) {
        out.data = (unsigned char*)malloc(size);
        memcpy(out.data, data, size);
        out.size = size;
    }
    CHECK_FILLED(fourdgs_write_report, aabb, sizeof(fourdgs_write_report), 1,
                 fourdgs_writer_report(w, out));
    fourdgs_writer_free(w);
    return out;
}

/* The streaming writer: declaration cut before its window table's count, batches cut before
 * object_id. */
static void test_stream_writer(const columns* c, const char* tmp_dir) {
    fourdgs_writer* config = writer_cut();
    if (!config) return;
    fourdgs_stream_declaration d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.gaussian_count = COUNT;
    for (int k = 0; k < 3; ++k) {
        d.aabb[k] = INFINITY;
        d.aabb[3 + k] = -INFINITY;
    }
    for (size_t i = 0; i < COUNT * 3; ++i) {
        const int k = (int)(i % 3);
        if (c->position[i] < d.aabb[k]) d.aabb[k] = c->position[i];
        if (c->position[i] > d.aabb[3 + k]) d.aabb[3 + k] = c->position[i];
    }
    const double windows[2] = {0.0, 2.0};
    d.windows = windows;
    d.window_count = 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/c_struct_size_streamed.4dgs", tmp_dir);
    fourdgs_stream_writer* w = NULL;
    /* Cut at the last field: the whole declaration as ABI 1 had it, guards after. */
    EXPECT_OK(fourdgs_stream_writer_create_file(
        config,
        (const fourdgs_stream_declaration*)caller_struct(sizeof(fourdgs_stream_declaration), &d),
        path, strlen(path), &w));
    CHECK(guards_kept(sizeof(fourdgs_stream_declaration), sizeof(fourdgs_stream_declaration) + SLACK),
          "stream declaration: guards written");
    fourdgs_writer_free(config);
    if (!w) return;
    const fourdgs_gaussian_batch in_window = batch_of(c, 0, COUNT / 2, 0);
    EXPECT_OK(fourdgs_stream_writer_add_window(
        w, 0, (const fourdgs_gaussian_batch*)caller_struct(
                  offsetof(fourdgs_gaussian_batch, object_id), &in_window)));
    const fourdgs_gaussian_batch chunk = batch_of(c, COUNT / 2, COUNT / 2, 1);
    EXPECT_OK(fourdgs_stream_writer_add_chunk(
        w, (const fourdgs_gaussian_batch*)caller_struct(offsetof(fourdgs_gaussian_batch, object_id),
                                                        &chunk)));
    EXPECT_OK(fourdgs_stream_writer_finish(w));
    CHECK_FILLED(fourdgs_write_report, aabb, sizeof(fourdgs_write_report), 1,
                 fourdgs_stream_writer_report(w, out));
    fourdgs_stream_writer_free(w);
    remove(path);
}

/* ------------------------------------------------------------------------------------------ */
/* Open options: cut at just struct_size (garbage max_sh_degree would be refused), at ABI 1's
 * size (garbage http_headers / http_header_count would be walked), and before the last field.
 * Through every function that takes them. */

typedef struct source_of {
    const bytes* file;
} source_of;

static uint64_t memory_size(void* user) { return ((source_of*)user)->file->size; }
static int64_t memory_read_at(void* user, uint64_t offset, uint64_t length, void* buffer) {
    const bytes* b = ((source_of*)user)->file;
    if (offset >= b->size) return 0;
    uint64_t n = b->size - offset;
    if (n > length) n = length;
    memcpy(buffer, b->data + offset, (size_t)n);
    return (int64_t)n;
}

static const fourdgs_open_options* open_options_cut(size_t cut) {
    fourdgs_open_options o;
    fourdgs_open_options_init(&o);
    o.http_max_attempts = 1; /* within the last cut: the refused URL fails at once */
    return (const fourdgs_open_options*)caller_struct(cut, &o);
}

static void test_open_options(const bytes* file, const char* tmp_dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/c_struct_size.4dgs", tmp_dir);
    FILE* f = fopen(path, "wb");
    CHECK(f && fwrite(file->data, 1, file->size, f) == file->size, "cannot write %s", path);
    if (f) fclose(f);
    const size_t cuts[] = {sizeof(size_t), ABI1_OPEN_OPTIONS,
                           offsetof(fourdgs_open_options, http_verify_tls)};
    /* A URL nothing listens at: the options are read, then the connection is refused. */
    const char* url = "http://127.0.0.1:1/none.4dgs";
    source_of src = {file};
    fourdgs_read_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.user = &src;
    cb.size = memory_size;
    cb.read_at = memory_read_at;
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; ++k) {
        fourdgs_reader* r = NULL;
        EXPECT_OK(fourdgs_reader_open_file(path, strlen(path), open_options_cut(cuts[k]), &r));
        if (r) {
            fourdgs_scene_info info = scene_info_of(r);
            CHECK(info.gaussian_count == COUNT, "open_file: %llu gaussians",
                  (unsigned long long)info.gaussian_count);
        }
        fourdgs_reader_free(r);
        r = NULL;
        EXPECT_OK(fourdgs_reader_open_memory(file->data, file->size, open_options_cut(cuts[k]), &r));
        fourdgs_reader_free(r);
        r = NULL;
        EXPECT_OK(fourdgs_reader_open_callbacks(&cb, open_options_cut(cuts[k]), &r));
        fourdgs_reader_free(r);
        r = NULL;
        CHECK(fourdgs_reader_open_url(url, strlen(url), open_options_cut(cuts[k]), &r) == FOURDGS_IO,
              "open_url with struct_size %zu: not an I/O failure", cuts[k]);

        fourdgs_stream* s = NULL;
        fourdgs_stream_callbacks scb;
        memset(&scb, 0, sizeof scb);
        trickle tr = {file->data, file->size, 0, 0, 0};
        scb.user = &tr;
        scb.read = trickle_read;
        EXPECT_OK(fourdgs_stream_open_callbacks(&scb, open_options_cut(cuts[k]), &s));
        fourdgs_stream_free(s);
        s = NULL;
        feeder fd;
        const int in = pipe_of(&fd, file->data, file->size);
        EXPECT_OK(fourdgs_stream_open_fd(in, 1, open_options_cut(cuts[k]), &s));
        fourdgs_stream_free(s);
        pthread_join(fd.thread, NULL);
        s = NULL;
        CHECK(fourdgs_stream_open_url(url, strlen(url), open_options_cut(cuts[k]), &s) == FOURDGS_IO,
              "stream_open_url with struct_size %zu: not an I/O failure", cuts[k]);

        fourdgs_validation* v = NULL;
        EXPECT_OK(fourdgs_validate_file(path, strlen(path), open_options_cut(cuts[k]), &v));
        fourdgs_validation_free(v);
        v = NULL;
        EXPECT_OK(fourdgs_validate_memory(file->data, file->size, open_options_cut(cuts[k]), &v));
        fourdgs_validation_free(v);
        v = NULL;
        EXPECT_OK(fourdgs_validate_callbacks(&cb, open_options_cut(cuts[k]), &v));
        fourdgs_validation_free(v);
        v = NULL;
        CHECK(fourdgs_validate_url(url, strlen(url), open_options_cut(cuts[k]), &v) == FOURDGS_IO,
              "validate_url with struct_size %zu: not an I/O failure", cuts[k]);
        CHECK(guards_kept(cuts[k], sizeof(fourdgs_open_options) + SLACK),
              "open options with struct_size %zu: guards written", cuts[k]);
    }
    remove(path);
}

/* ------------------------------------------------------------------------------------------ */
/* What a reader fills, and the evaluate options and frame buffers it reads. */

static void test_reader(const fourdgs_reader* r) {
    CHECK_FILLED(fourdgs_scene_info, sh_depths_malformed, ABI1_SCENE_INFO, 1,
                 fourdgs_reader_scene_info(r, out));
    CHECK_FILLED(fourdgs_attachment_info, payload, sizeof(fourdgs_attachment_info), 1,
                 fourdgs_reader_attachment(r, 0, out));
    CHECK_FILLED(fourdgs_camera_info, loop, sizeof(fourdgs_camera_info), 1,
                 fourdgs_reader_camera(r, out));
    CHECK_FILLED(fourdgs_audio_source_info, payload, sizeof(fourdgs_audio_source_info), 1,
                 fourdgs_reader_audio_source(r, 0, out));
    CHECK_FILLED(fourdgs_coordinate_frame, metres_per_unit, sizeof(fourdgs_coordinate_frame), 1,
                 fourdgs_reader_coordinate_frame(r, 0, out));
    CHECK_FILLED(fourdgs_sensor, pose_reference, sizeof(fourdgs_sensor), 1,
                 fourdgs_reader_sensor(r, 0, out));
    CHECK_FILLED(fourdgs_geodetic_anchor, heading_deg, sizeof(fourdgs_geodetic_anchor), 1,
                 fourdgs_reader_geodetic_anchor(r, 0, out));
    CHECK_FILLED(fourdgs_object_info, embedding, sizeof(fourdgs_object_info), 1,
                 fourdgs_reader_object(r, 0, out));
    CHECK_FILLED(fourdgs_chunk_info, band_count, ABI1_CHUNK_INFO, 1,
                 fourdgs_reader_chunk_info(r, 0, out));

    /* The written inputs' fields past their cuts read back as the defaults. */
    fourdgs_coordinate_frame frame;
    memset(&frame, 0, sizeof frame);
    frame.struct_size = sizeof frame;
    EXPECT_OK(fourdgs_reader_coordinate_frame(r, 0, &frame));
    CHECK(frame.up_axis == 1 && frame.metres_per_unit == 0.0,
          "coordinate frame: up %u, metres_per_unit %g (the cut-off field's default is 0)",
          frame.up_axis, frame.metres_per_unit);
    fourdgs_sensor sensor;
    memset(&sensor, 0, sizeof sensor);
    sensor.struct_size = sizeof sensor;
    EXPECT_OK(fourdgs_reader_sensor(r, 0, &sensor));
    CHECK(sensor.width_px == 640 && sensor.distortion_count == 0 && sensor.pose_reference == 0,
          "sensor: %u px, %llu distortion coefficients", sensor.width_px,
          (unsigned long long)sensor.distortion_count);
    fourdgs_object_info object;
    memset(&object, 0, sizeof object);
    object.struct_size = sizeof object;
    EXPECT_OK(fourdgs_reader_object(r, 0, &object));
    CHECK(object.object_id == 1 && object.has_embedding == 0, "object: id %u, embedding %u",
          object.object_id, object.has_embedding);
    fourdgs_audio_source_info audio;
    memset(&audio, 0, sizeof audio);
    audio.struct_size = sizeof audio;
    EXPECT_OK(fourdgs_reader_audio_source(r, 0, &audio));
    CHECK(audio.source_id == 3 && audio.keyframe_count == 0, "audio: id %u, %llu keyframes",
          audio.source_id, (unsigned long long)audio.keyframe_count);

    fourdgs_frame* frame_h = NULL;
    fourdgs_block* block = NULL;
    EXPECT_OK(fourdgs_frame_create(NULL, &frame_h));
    EXPECT_OK(fourdgs_block_create(NULL, &block));
    if (!frame_h || !block) {
        fourdgs_frame_free(frame_h);
        fourdgs_block_free(block);
        return;
    }
    /* Evaluate options cut at just struct_size (garbage max_sh_degree would be refused) and
     * before `append` (garbage would append): every call replaces the frame. */
    const double t = 1.0;
    EXPECT_OK(fourdgs_reader_evaluate(r, t, NULL, frame_h));
    size_t want = 0, got = 0;
    EXPECT_OK(fourdgs_frame_count(frame_h, &want));
    CHECK(want > 0, "nothing visible at t=%g", t);
    fourdgs_evaluate_options eo;
    fourdgs_evaluate_options_init(&eo);
    EXPECT_OK(fourdgs_reader_state_at(r, t, block));
    const size_t cuts[] = {sizeof(size_t), offsetof(fourdgs_evaluate_options, append)};
    for (size_t k = 0; k < 2; ++k) {
        for (int rep = 0; rep < 2; ++rep) {
            EXPECT_OK(fourdgs_reader_evaluate(
                r, t, (const fourdgs_evaluate_options*)caller_struct(cuts[k], &eo), frame_h));
            EXPECT_OK(fourdgs_frame_count(frame_h, &got));
            CHECK(got == want, "evaluate, struct_size %zu: %zu gaussians, want %zu", cuts[k], got,
                  want);
            EXPECT_OK(fourdgs_reader_evaluate_chunk(
                r, 0, t, (const fourdgs_evaluate_options*)caller_struct(cuts[k], &eo), frame_h));
            EXPECT_OK(fourdgs_reader_evaluate_block(
                r, block, t, (const fourdgs_evaluate_options*)caller_struct(cuts[k], &eo),
                frame_h));
            EXPECT_OK(fourdgs_frame_count(frame_h, &got));
            CHECK(got == want, "evaluate_block, struct_size %zu: %zu gaussians, want %zu", cuts[k],
                  got, want);
        }
    }
    EXPECT_OK(fourdgs_reader_evaluate(r, t, NULL, frame_h));
    CHECK_FILLED(fourdgs_frame_columns, unrepresentable, ABI1_FRAME_COLUMNS, 1,
                 fourdgs_frame_columns_get(frame_h, out));
    CHECK_FILLED(fourdgs_block_info, object_id_stream, ABI1_BLOCK_INFO, 1,
                 fourdgs_block_info_get(block, out));
    CHECK_FILLED(fourdgs_block_columns, sh, sizeof(fourdgs_block_columns), 1,
                 fourdgs_block_columns_get(block, out));

    /* Frame buffers cut before sh_floats (garbage: a wild pointer that would be written). */
    float center[COUNT * 3], scale[COUNT * 3], rotation[COUNT * 4], color[COUNT * 4];
    fourdgs_frame_buffers fb;
    memset(&fb, 0, sizeof fb);
    fb.struct_size = sizeof fb;
    fb.capacity = COUNT;
    fb.center = center;
    fb.scale = scale;
    fb.rotation = rotation;
    fb.color = color;
    EXPECT_OK(fourdgs_frame_copy(
        frame_h,
        (const fourdgs_frame_buffers*)caller_struct(offsetof(fourdgs_frame_buffers, sh_floats), &fb),
        &got));
    CHECK(got == want, "frame_copy: %zu gaussians, want %zu", got, want);
    fourdgs_frame_free(frame_h);
    fourdgs_block_free(block);
}

/* ------------------------------------------------------------------------------------------ */
/* Validation, the last error, the player. */

static void test_validation(const bytes* file) {
    fourdgs_validation* v = NULL;
    /* Cut short: the validator reports what is missing. */
    EXPECT_OK(fourdgs_validate_memory(file->data, file->size - 30, NULL, &v));
    if (!v) return;
    CHECK_FILLED(fourdgs_validation_summary, valid, sizeof(fourdgs_validation_summary), 1,
                 fourdgs_validation_summary_get(v, out));
    CHECK_FILLED(fourdgs_finding, offset, sizeof(fourdgs_finding), 1,
                 fourdgs_validation_finding(v, 0, out));
    fourdgs_validation_free(v);
}

static void test_last_error(void) {
    fourdgs_reader* r = NULL;
    CHECK(fourdgs_reader_open_file("/nonexistent.4dgs", 17, NULL, &r) == FOURDGS_IO, "no I/O error");
    CHECK_FILLED(fourdgs_error, offset, sizeof(fourdgs_error), 1, fourdgs_last_error(out));
}

static void test_player(const fourdgs_reader* r) {
    fourdgs_player_options o;
    fourdgs_player_options_init(&o);
    /* Cut at just struct_size: garbage would be a strange rate, a loop and a look-ahead of
     * billions; the player starts with the defaults. And before the last field. */
    const size_t cuts[] = {sizeof(size_t), offsetof(fourdgs_player_options, stall_timeout_sec)};
    for (size_t k = 0; k < 2; ++k) {
        fourdgs_player* p = NULL;
        EXPECT_OK(fourdgs_player_create(
            r, (const fourdgs_player_options*)caller_struct(cuts[k], &o), &p));
        if (!p) continue;
        fourdgs_player_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        EXPECT_OK(fourdgs_player_info_get(p, &info));
        CHECK(info.rate == 1.0 && info.loop == 0 && info.state == FOURDGS_PLAYBACK_PAUSED,
              "player with struct_size %zu: rate %g, loop %u, state %u", cuts[k], info.rate,
              info.loop, info.state);
        fourdgs_player_free(p);
    }
    fourdgs_player* p = NULL;
    EXPECT_OK(fourdgs_player_create(r, NULL, &p));
    fourdgs_frame* frame = NULL;
    EXPECT_OK(fourdgs_frame_create(NULL, &frame));
    if (p && frame) {
        /* A first frame at 1.0, then the same frame again: unchanged, every call alike. */
        fourdgs_player_frame_info first;
        memset(&first, 0, sizeof first);
        first.struct_size = sizeof first;
        EXPECT_OK(fourdgs_player_frame_at(p, 1.0, 1, frame, &first));
        CHECK_FILLED(fourdgs_player_frame_info, all_changed,
                     ABI1_PLAYER_FRAME_INFO, 1,
                     fourdgs_player_frame_at(p, 1.0, 1, frame, out));
        CHECK_FILLED(fourdgs_player_frame_info, all_changed, ABI1_PLAYER_FRAME_INFO, 0,
                     fourdgs_player_frame(p, 0.0, 1, frame, out));
        /* The worker runs beside: the counters may move between two calls. */
        CHECK_FILLED(fourdgs_player_info, resident_bytes, sizeof(fourdgs_player_info), 0,
                     fourdgs_player_info_get(p, out));
    }
    fourdgs_frame_free(frame);
    fourdgs_player_free(p);
}

int main(int argc, char** argv) {
    const char* tmp_dir = ".";
    for (int i = 1; i + 1 < argc; ++i)
        if (strcmp(argv[i], "--tmp") == 0) tmp_dir = argv[i + 1];
    signal(SIGPIPE, SIG_IGN); /* a stream freed before its pipe's end: the feeder stops */
    test_inits();
    static columns c;
    fill_columns(&c);
    bytes file = write_scene(&c);
    CHECK(file.size > 0, "the scene was not written");
    if (file.size > 0) {
        test_open_options(&file, tmp_dir);
        fourdgs_reader* r = NULL;
        EXPECT_OK(fourdgs_reader_open_memory(file.data, file.size, NULL, &r));
        if (r) {
            test_reader(r);
            test_player(r);
        }
        fourdgs_reader_free(r);
        test_validation(&file);
    }
    test_stream_writer(&c, tmp_dir);
    test_last_error();
    free(file.data);
    printf("%d checks, %d failures\n", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}
