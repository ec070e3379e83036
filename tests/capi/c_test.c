/* c_test.c — the C ABI exercised from C11 (compiled as C, not C++).
 *
 *   c_test --data DIR [--tmp DIR] [--quick]   every entry point over the fixtures in DIR, the
 *                                             error paths, and refusal cases built here
 *                                             (truncations, bit flips, hand-made mutations)
 *   c_test --corpus DIR                       every DIR/<name>.4dgs is refused with the status
 *                                             and identifier of DIR/<name>.expected.json
 *                                             (skipped when DIR does not exist)
 *   c_test --valid DIR                        every DIR/<name>.4dgs reads whole (every chunk or
 *                                             state) and the validator runs over it
 *                                             (skipped when DIR does not exist)
 *
 * Prints one line per failed check and exits non-zero when any failed. */
#include <fourdgs/fourdgs.h>

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* A refusal identifier is non-empty kebab-case. */
static int is_kebab(fourdgs_string s) {
    if (s.data == NULL || s.size == 0) return 0;
    for (size_t i = 0; i < s.size; ++i) {
        char c = s.data[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return 0;
    }
    return 1;
}

/* Checks that the call just made failed with `status` and identifier `refusal` (NULL: any). */
#define EXPECT_FAIL(call, want_status, want_refusal)                                          \
    do {                                                                                      \
        fourdgs_status got_ = (call);                                                         \
        fourdgs_error e_ = last_error();                                                      \
        CHECK(got_ == (want_status), "%s: status %s, wanted %s", #call,                        \
              fourdgs_status_name(got_), fourdgs_status_name(want_status));                   \
        CHECK(e_.status == got_, "%s: last error status %d", #call, (int)e_.status);          \
        if ((want_refusal) != NULL)                                                           \
            CHECK(string_is(e_.refusal, (want_refusal) ? (want_refusal) : ""),                 \
                  "%s: refusal \"%.*s\", wanted \"%s\"", #call, (int)e_.refusal.size,          \
                  e_.refusal.data ? e_.refusal.data : "", (want_refusal) ? (want_refusal) : ""); \
    } while (0)

/* ------------------------------------------------------------------------------------------ */
/* Files. */

static char* join(const char* dir, const char* name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char* p = (char*)malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* The integer after `"key":` following `section` in a fixture's JSON (-1 when absent). */
static long json_int_after(const char* json, const char* section, const char* key) {
    const char* s = section ? strstr(json, section) : json;
    if (!s) return -1;
    char pattern[128];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char* k = strstr(s, pattern);
    if (!k) return -1;
    return strtol(k + strlen(pattern), NULL, 10);
}

/* The string value of `"key": "..."` (copied into out; "" when absent). */
static void json_string(const char* json, const char* key, char* out, size_t cap) {
    out[0] = 0;
    char pattern[128];
    snprintf(pattern, sizeof pattern, "\"%s\"", key);
    const char* k = strstr(json, pattern);
    if (!k) return;
    k = strchr(k + strlen(pattern), '"');
    if (!k) return;
    ++k;
    size_t n = 0;
    while (k[n] && k[n] != '"' && n + 1 < cap) ++n;
    memcpy(out, k, n);
    out[n] = 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Callbacks over memory, counting releases. */

typedef struct memory_source {
    const unsigned char* data;
    size_t size;
    int releases;
    int fail_reads;
} memory_source;

static uint64_t ms_size(void* user) { return ((memory_source*)user)->size; }
static int64_t ms_read_at(void* user, uint64_t offset, uint64_t length, void* buffer) {
    memory_source* m = (memory_source*)user;
    if (m->fail_reads) return -1;
    if (offset >= m->size) return 0;
    uint64_t n = m->size - offset < length ? m->size - offset : length;
    memcpy(buffer, m->data + offset, (size_t)n);
    return (int64_t)n;
}
static void ms_release(void* user) { ((memory_source*)user)->releases++; }

static fourdgs_read_callbacks callbacks_for(memory_source* m) {
    fourdgs_read_callbacks cb;
    cb.user = m;
    cb.size = ms_size;
    cb.read_at = ms_read_at;
    cb.release = ms_release;
    return cb;
}

/* Callbacks over memory that count the reads touching the magic, the 37-byte tail and the
 * summary (§4.1, §5.2, §4.5): a file must be opened once. */
typedef struct read_counter {
    memory_source memory;
    uint64_t summary_start, footer_start;
    int magic, tail, summary;
} read_counter;

static int touches(uint64_t offset, uint64_t length, uint64_t lo, uint64_t hi) {
    return length > 0 && offset < hi && lo < offset + length;
}
static int64_t rc_read_at(void* user, uint64_t offset, uint64_t length, void* buffer) {
    read_counter* c = (read_counter*)user;
    c->magic += touches(offset, length, 0, 8);
    c->tail += touches(offset, length, c->footer_start, c->memory.size);
    c->summary += touches(offset, length, c->summary_start, c->footer_start);
    return ms_read_at(&c->memory, offset, length, buffer);
}

/* A counting allocator. */
typedef struct counting {
    long allocs, frees;
} counting;
static void* count_alloc(void* user, size_t size, size_t alignment) {
    ((counting*)user)->allocs++;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    void* p = NULL;
    if (posix_memalign(&p, alignment, size ? size : 1) != 0) return NULL;
    return p;
}
static void count_free(void* user, void* p, size_t size) {
    (void)size;
    ((counting*)user)->frees++;
    free(p);
}

/* ------------------------------------------------------------------------------------------ */
/* Reading a fixture through every reading entry point. */

static size_t evaluate_count(fourdgs_reader* r, fourdgs_frame* frame, double t) {
    size_t n = (size_t)-1;
    if (fourdgs_reader_evaluate(r, t, NULL, frame) != FOURDGS_OK) return (size_t)-1;
    fourdgs_frame_count(frame, &n);
    return n;
}

static void check_frame_copy(fourdgs_frame* frame) {
    size_t n = 0;
    EXPECT_OK(fourdgs_frame_count(frame, &n));
    fourdgs_frame_columns cols;
    memset(&cols, 0, sizeof cols);
    cols.struct_size = sizeof cols;
    EXPECT_OK(fourdgs_frame_columns_get(frame, &cols));
    CHECK(cols.count == n, "columns count %zu vs %zu", cols.count, n);

    size_t cap = n + 1;
    float* center = (float*)malloc(cap * 3 * sizeof(float));
    float* color = (float*)malloc(cap * 4 * sizeof(float));
    uint32_t* ids = (uint32_t*)malloc(cap * sizeof(uint32_t));
    size_t per = 3 * 15; /* degree 3 */
    uint8_t* shb = (uint8_t*)malloc(cap * per);
    float* shf = (float*)malloc(cap * per * sizeof(float));
    fourdgs_frame_buffers b;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    b.center = center;
    b.color = color;
    b.object_id = ids;
    b.sh_degree = 3;
    b.sh_bytes = shb;
    b.sh_floats = shf;
    size_t got = 12345;
    if (n > 0) {
        b.capacity = n - 1;
        EXPECT_FAIL(fourdgs_frame_copy(frame, &b, &got), FOURDGS_BUFFER_TOO_SMALL,
                    "buffer-too-small");
        CHECK(got == 12345, "count written on failure");
    }
    b.capacity = cap;
    EXPECT_OK(fourdgs_frame_copy(frame, &b, &got));
    CHECK(got == n, "copied %zu of %zu", got, n);
    if (n > 0 && cols.center) {
        CHECK(memcmp(center, cols.center, n * 3 * sizeof(float)) == 0, "center copy differs");
        CHECK(memcmp(ids, cols.object_id, n * sizeof(uint32_t)) == 0, "object_id copy differs");
        for (size_t i = 0; i < n; ++i)
            CHECK(color[i * 4 + 3] >= 0.0f && color[i * 4 + 3] <= 1.0f, "opacity %f",
                  (double)color[i * 4 + 3]);
        size_t have = cols.sh_per_gaussian / 3;
        for (size_t i = 0; i < n && i < 8; ++i)
            for (size_t c = 0; c < 3; ++c)
                for (size_t k = 0; k < 15; ++k) {
                    size_t o = (i * 3 + c) * 15 + k;
                    if (k < have) {
                        uint8_t byte = cols.sh[(i * 3 + c) * have + k];
                        CHECK(shb[o] == byte, "sh byte");
                        CHECK(fabsf(shf[o] - (-4.0f + (float)byte * (8.0f / 255.0f))) < 1e-5f,
                              "sh float %f for byte %u", (double)shf[o], (unsigned)byte);
                    } else {
                        CHECK(shb[o] == 128 && shf[o] == 0.0f, "missing SH not neutral");
                    }
                }
    }
    /* Bad arguments. */
    b.sh_degree = 4;
    EXPECT_FAIL(fourdgs_frame_copy(frame, &b, &got), FOURDGS_INVALID_ARGUMENT, "invalid-option");
    b.struct_size = 0;
    EXPECT_FAIL(fourdgs_frame_copy(frame, &b, &got), FOURDGS_INVALID_ARGUMENT,
                "invalid-struct-size");
    free(center);
    free(color);
    free(ids);
    free(shb);
    free(shf);
}

static void read_payload(const fourdgs_reader* r, fourdgs_payload p, const char* what) {
    size_t need = 0;
    EXPECT_OK(fourdgs_reader_read_payload(r, p, NULL, 0, &need));
    CHECK(need == p.size, "%s: payload size %zu", what, need);
    unsigned char* buf = (unsigned char*)malloc(need + 1);
    size_t got = 777;
    if (need > 0) {
        EXPECT_FAIL(fourdgs_reader_read_payload(r, p, buf, need - 1, &got),
                    FOURDGS_BUFFER_TOO_SMALL, "buffer-too-small");
        CHECK(got == 777, "%s: size written on failure", what);
    }
    EXPECT_OK(fourdgs_reader_read_payload(r, p, buf, need + 1, &got));
    CHECK(got == need, "%s: read %zu", what, got);
    free(buf);
}

/* Everything the scene says, through every enumeration; out-of-range indices are NOT_FOUND. */
static void walk_scene(const fourdgs_reader* r, const fourdgs_scene_info* info) {
    fourdgs_string k, v;
    for (size_t i = 0; i < info->header_attribute_count; ++i)
        EXPECT_OK(fourdgs_reader_header_attribute(r, i, &k, &v));
    EXPECT_FAIL(fourdgs_reader_header_attribute(r, info->header_attribute_count, &k, &v),
                FOURDGS_NOT_FOUND, "no-such-element");
    for (size_t i = 0; i < info->quantization_bound_count; ++i)
        EXPECT_OK(fourdgs_reader_quantization_bound(r, i, &k, &v));
    double lo = -1, hi = -1;
    CHECK(info->window_count >= 1, "the effective window table is never empty");
    for (size_t i = 0; i < info->window_count; ++i) EXPECT_OK(fourdgs_reader_window(r, i, &lo, &hi));
    EXPECT_FAIL(fourdgs_reader_window(r, info->window_count, &lo, &hi), FOURDGS_NOT_FOUND, NULL);
    for (size_t i = 0; i < info->metadata_count; ++i) {
        fourdgs_string name;
        size_t entries = 0;
        EXPECT_OK(fourdgs_reader_metadata(r, i, &name, &entries));
        for (size_t j = 0; j < entries; ++j) {
            EXPECT_OK(fourdgs_reader_metadata_entry(r, i, j, &k, &v));
            fourdgs_string found;
            EXPECT_OK(fourdgs_reader_metadata_find(r, k.data, k.size, &found));
        }
        EXPECT_FAIL(fourdgs_reader_metadata_entry(r, i, entries, &k, &v), FOURDGS_NOT_FOUND, NULL);
    }
    fourdgs_string none;
    EXPECT_FAIL(fourdgs_reader_metadata_find(r, "no such key at all", 18, &none),
                FOURDGS_NOT_FOUND, "no-such-element");
    for (size_t i = 0; i < info->attachment_count; ++i) {
        fourdgs_attachment_info a;
        memset(&a, 0, sizeof a);
        a.struct_size = sizeof a;
        EXPECT_OK(fourdgs_reader_attachment(r, i, &a));
        read_payload(r, a.payload, "attachment");
    }
    fourdgs_camera_info cam;
    memset(&cam, 0, sizeof cam);
    cam.struct_size = sizeof cam;
    if (info->has_camera) {
        EXPECT_OK(fourdgs_reader_camera(r, &cam));
        /* On a keyframe the path passes through it exactly; without keys it is the default. */
        double at_time = 0, want_pos[3], want_target[3];
        memcpy(want_pos, cam.position, sizeof want_pos);
        memcpy(want_target, cam.target, sizeof want_target);
        for (size_t i = 0; i < cam.keyframe_count; ++i) {
            fourdgs_camera_keyframe key;
            EXPECT_OK(fourdgs_reader_camera_keyframe(r, i, &key));
            if (i == 0) {
                at_time = key.time;
                memcpy(want_pos, key.position, sizeof want_pos);
                memcpy(want_target, key.target, sizeof want_target);
            }
        }
        double pos[3], target[3], fov = -1;
        EXPECT_OK(fourdgs_reader_camera_at(r, at_time, pos, target, &fov));
        CHECK(fov == cam.fov_y_deg, "camera_at fov %g, record %g", fov, cam.fov_y_deg);
        for (int c = 0; c < 3; ++c)
            CHECK(pos[c] == want_pos[c] && target[c] == want_target[c],
                  "camera_at(%g) component %d: position %g target %g, keyed %g %g", at_time, c,
                  pos[c], target[c], want_pos[c], want_target[c]);
        EXPECT_FAIL(fourdgs_reader_camera_at(r, NAN, pos, target, &fov), FOURDGS_INVALID_ARGUMENT,
                    "non-finite-input");
    } else {
        EXPECT_FAIL(fourdgs_reader_camera(r, &cam), FOURDGS_NOT_FOUND, "no-such-element");
    }
    for (size_t i = 0; i < info->audio_source_count; ++i) {
        fourdgs_audio_source_info a;
        memset(&a, 0, sizeof a);
        a.struct_size = sizeof a;
        EXPECT_OK(fourdgs_reader_audio_source(r, i, &a));
        for (size_t j = 0; j < a.keyframe_count; ++j) {
            fourdgs_audio_keyframe key;
            EXPECT_OK(fourdgs_reader_audio_keyframe(r, i, j, &key));
        }
        /* §7.1: at its start a source is active at local time 0, with its gain. */
        fourdgs_audio_state st;
        EXPECT_OK(fourdgs_reader_audio_state_at(r, i, a.start_sec, &st));
        CHECK(st.active == (a.duration_sec > 0) && st.local_time == 0 && st.gain == a.gain,
              "audio_state_at(start %g): active %u local %g gain %g (descriptor gain %g)",
              a.start_sec, st.active, st.local_time, st.gain, a.gain);
        EXPECT_FAIL(fourdgs_reader_audio_state_at(r, info->audio_source_count, 0, &st),
                    FOURDGS_NOT_FOUND, NULL);
        read_payload(r, a.payload, "audio");
    }
    for (size_t i = 0; i < info->coordinate_frame_count; ++i) {
        fourdgs_coordinate_frame f;
        memset(&f, 0, sizeof f);
        f.struct_size = sizeof f;
        EXPECT_OK(fourdgs_reader_coordinate_frame(r, i, &f));
    }
    for (size_t i = 0; i < info->sensor_count; ++i) {
        fourdgs_sensor s;
        memset(&s, 0, sizeof s);
        s.struct_size = sizeof s;
        EXPECT_OK(fourdgs_reader_sensor(r, i, &s));
        CHECK(s.distortion_count == 0 || s.distortion != NULL, "sensor distortion pointer");
    }
    for (size_t i = 0; i < info->rig_trajectory_count; ++i) {
        fourdgs_string name;
        uint32_t interp;
        size_t samples = 0;
        EXPECT_OK(fourdgs_reader_rig_trajectory(r, i, &name, &interp, &samples));
        for (size_t j = 0; j < samples; ++j) {
            fourdgs_pose_sample p;
            EXPECT_OK(fourdgs_reader_rig_trajectory_sample(r, i, j, &p));
        }
    }
    for (size_t i = 0; i < info->geodetic_anchor_count; ++i) {
        fourdgs_geodetic_anchor g;
        memset(&g, 0, sizeof g);
        g.struct_size = sizeof g;
        EXPECT_OK(fourdgs_reader_geodetic_anchor(r, i, &g));
    }
    for (size_t i = 0; i < info->object_count; ++i) {
        fourdgs_object_info o;
        memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        EXPECT_OK(fourdgs_reader_object(r, i, &o));
        CHECK(!o.has_embedding || o.embedding != NULL, "embedding pointer");
    }
    for (size_t i = 0; i < info->object_track_count; ++i) {
        uint32_t id, interp;
        size_t samples = 0;
        EXPECT_OK(fourdgs_reader_object_track(r, i, &id, &interp, &samples));
        CHECK(id != 0, "object track id 0");
        for (size_t j = 0; j < samples; ++j) {
            fourdgs_pose_sample p;
            EXPECT_OK(fourdgs_reader_object_track_sample(r, i, j, &p));
        }
        fourdgs_pose_sample p;
        EXPECT_FAIL(fourdgs_reader_object_track_sample(r, i, samples, &p), FOURDGS_NOT_FOUND, NULL);
    }
}

/* fourdgs_reader_fetch_ranges at t: the ranges of the chunks `idx` names, their lengths summing
 * to the chunks' fetch_bytes (for a keyframe-delta state, the last entry's: its whole chain). */
static void check_fetch_ranges(const char* name, const fourdgs_reader* r, double t,
                               const size_t* idx, size_t n_chunks, int keyframe_delta) {
    size_t n = 0, got = 0;
    EXPECT_OK(fourdgs_reader_fetch_ranges(r, t, NULL, 0, &n));
    fourdgs_byte_range* ranges = (fourdgs_byte_range*)calloc(n + 1, sizeof *ranges);
    if (n > 0)
        EXPECT_FAIL(fourdgs_reader_fetch_ranges(r, t, ranges, n - 1, &got),
                    FOURDGS_BUFFER_TOO_SMALL, "buffer-too-small");
    EXPECT_OK(fourdgs_reader_fetch_ranges(r, t, ranges, n, &got));
    uint64_t sum = 0, want = 0;
    for (size_t i = 0; i < got; ++i) sum += ranges[i].length;
    for (size_t i = 0; i < n_chunks; ++i) {
        fourdgs_chunk_info ci;
        memset(&ci, 0, sizeof ci);
        ci.struct_size = sizeof ci;
        EXPECT_OK(fourdgs_reader_chunk_info(r, idx[i], &ci));
        want = keyframe_delta ? ci.fetch_bytes : want + ci.fetch_bytes;
    }
    CHECK(got == n && sum == want, "%s: fetch_ranges at %g: %zu ranges, %llu bytes, chunks say %llu",
          name, t, got, (unsigned long long)sum, (unsigned long long)want);
    free(ranges);
}

/* A fixture: its JSON's header count and visible counts, through file, memory and callbacks. */
static void test_fixture(const char* data_dir, const char* name) {
    char file[256], json_name[256];
    snprintf(file, sizeof file, "%s.4dgs", name);
    snprintf(json_name, sizeof json_name, "%s.json", name);
    char* path = join(data_dir, file);
    char* json_path = join(data_dir, json_name);
    bytes data = read_file(path);
    bytes json_bytes = read_file(json_path);
    CHECK(data.size > 0 && json_bytes.size > 0, "%s: fixture missing", name);
    if (data.size == 0 || json_bytes.size == 0) goto done;
    {
        char* json = (char*)malloc(json_bytes.size + 1);
        memcpy(json, json_bytes.data, json_bytes.size);
        json[json_bytes.size] = 0;
        int keyframe_delta = strstr(json, "\"keyframe-delta\"") != NULL;

        fourdgs_reader* from_file = NULL;
        EXPECT_OK(fourdgs_reader_open_file(path, strlen(path), NULL, &from_file));
        fourdgs_reader* from_memory = NULL;
        EXPECT_OK(fourdgs_reader_open_memory(data.data, data.size, NULL, &from_memory));
        memory_source ms = {data.data, data.size, 0, 0};
        fourdgs_read_callbacks cb = callbacks_for(&ms);
        fourdgs_reader* from_callbacks = NULL;
        EXPECT_OK(fourdgs_reader_open_callbacks(&cb, NULL, &from_callbacks));
        if (!from_file || !from_memory || !from_callbacks) {
            fourdgs_reader_free(from_file);
            fourdgs_reader_free(from_memory);
            fourdgs_reader_free(from_callbacks);
            free(json);
            goto done;
        }

        fourdgs_scene_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        EXPECT_OK(fourdgs_reader_scene_info(from_file, &info));
        CHECK(info.temporal_model ==
                  (keyframe_delta ? FOURDGS_MODEL_KEYFRAME_DELTA : FOURDGS_MODEL_GAUSSIAN_BIRTH),
              "%s: temporal model %u", name, info.temporal_model);
        CHECK(string_is(info.temporal_model_name, keyframe_delta ? "keyframe-delta" : "gaussian-birth"),
              "%s: temporal model name", name);
        long want_count = json_int_after(json, "\"header\"", "gaussian_count");
        if (want_count >= 0)
            CHECK(info.gaussian_count == (uint64_t)want_count, "%s: gaussian_count %llu, json %ld",
                  name, (unsigned long long)info.gaussian_count, want_count);
        CHECK(info.duration_sec > 0, "%s: duration", name);
        walk_scene(from_file, &info);

        /* A short struct: only its bytes are written. */
        struct {
            fourdgs_scene_info head;
        } small;
        memset(&small, 0xAB, sizeof small);
        small.head.struct_size = offsetof(fourdgs_scene_info, temporal_model_name);
        EXPECT_OK(fourdgs_reader_scene_info(from_file, &small.head));
        CHECK(string_is(small.head.profile, "") || small.head.profile.data != NULL, "short struct");
        CHECK(((unsigned char*)&small.head.temporal_model_name)[0] == 0xAB,
              "bytes past struct_size were written");

        fourdgs_frame* frame = NULL;
        fourdgs_frame* frame2 = NULL;
        EXPECT_OK(fourdgs_frame_create(NULL, &frame));
        EXPECT_OK(fourdgs_frame_create(NULL, &frame2));

        if (!keyframe_delta) {
            /* visible_count_at from the fixture's JSON, through all three sources and through
             * chunk-level decode. */
            const char* vis = strstr(json, "\"visible_count_at\"");
            CHECK(vis != NULL, "%s: no visible_count_at", name);
            const char* p = vis ? strchr(vis, '{') : NULL;
            while (p && *p && *p != '}') {
                const char* q = strchr(p, '"');
                if (!q) break;
                double t = strtod(q + 1, NULL);
                const char* colon = strchr(q + 1, ':');
                if (!colon) break;
                long want = strtol(colon + 1, NULL, 10);
                size_t a = evaluate_count(from_file, frame, t);
                size_t b = evaluate_count(from_memory, frame, t);
                size_t c = evaluate_count(from_callbacks, frame, t);
                CHECK(a == (size_t)want && b == a && c == a,
                      "%s: visible at %g: %zu/%zu/%zu, json %ld", name, t, a, b, c, want);
                check_frame_copy(frame);
                /* The same instant chunk by chunk, appended into a second frame. */
                size_t n_chunks = 0;
                EXPECT_OK(fourdgs_reader_chunks_for(from_file, t, NULL, 0, &n_chunks));
                size_t* idx = (size_t*)malloc((n_chunks + 1) * sizeof(size_t));
                size_t got = 99;
                if (n_chunks > 0)
                    EXPECT_FAIL(fourdgs_reader_chunks_for(from_file, t, idx, n_chunks - 1, &got),
                                FOURDGS_BUFFER_TOO_SMALL, "buffer-too-small");
                EXPECT_OK(fourdgs_reader_chunks_for(from_file, t, idx, n_chunks, &got));
                fourdgs_evaluate_options eo;
                fourdgs_evaluate_options_init(&eo);
                for (size_t i = 0; i < got; ++i) {
                    eo.append = i > 0;
                    fourdgs_chunk_info ci;
                    memset(&ci, 0, sizeof ci);
                    ci.struct_size = sizeof ci;
                    EXPECT_OK(fourdgs_reader_chunk_info(from_file, idx[i], &ci));
                    CHECK(ci.t0 <= t && t < ci.t1, "%s: chunk %zu does not cover %g", name, idx[i], t);
                    EXPECT_OK(fourdgs_reader_evaluate_chunk(from_file, idx[i], t, &eo, frame2));
                }
                size_t chunked = 0;
                fourdgs_frame_count(frame2, &chunked);
                if (got > 0) CHECK(chunked == a, "%s: chunk-level %zu vs %zu", name, chunked, a);
                check_fetch_ranges(name, from_file, t, idx, got, 0);
                free(idx);
                p = strchr(colon, ',');
                if (!p) break;
                ++p;
            }
            fourdgs_chunk_info ci;
            ci.struct_size = sizeof ci;
            EXPECT_FAIL(fourdgs_reader_chunk_info(from_file, info.chunk_count, &ci),
                        FOURDGS_NOT_FOUND, NULL);
            EXPECT_FAIL(fourdgs_reader_evaluate_chunk(from_file, info.chunk_count, 0.0, NULL, frame2),
                        FOURDGS_NOT_FOUND, NULL);
        } else {
            /* keyframe-delta: every state through the same evaluate call; the live count of the
             * JSON bounds what is visible. */
            long live = json_int_after(json, "\"states\"", "live");
            size_t n = evaluate_count(from_file, frame, 0.0);
            CHECK(n != (size_t)-1 && n > 0 && (live < 0 || n <= (size_t)live),
                  "%s: state at 0: %zu (live %ld)", name, n, live);
            check_frame_copy(frame);
            for (size_t i = 0; i < info.chunk_count; ++i) {
                fourdgs_chunk_info ci;
                memset(&ci, 0, sizeof ci);
                ci.struct_size = sizeof ci;
                EXPECT_OK(fourdgs_reader_chunk_info(from_memory, i, &ci));
                EXPECT_OK(fourdgs_reader_evaluate(from_memory, ci.t0, NULL, frame2));
                size_t chain = 0;
                EXPECT_OK(fourdgs_reader_chunks_for(from_memory, ci.t0, NULL, 0, &chain));
                CHECK(chain >= 1, "%s: empty chain", name);
                size_t* links = (size_t*)calloc(chain + 1, sizeof *links);
                EXPECT_OK(fourdgs_reader_chunks_for(from_memory, ci.t0, links, chain, &chain));
                check_fetch_ranges(name, from_memory, ci.t0, links, chain, 1);
                free(links);
            }
            EXPECT_FAIL(fourdgs_reader_evaluate_chunk(from_file, 0, 0.0, NULL, frame2),
                        FOURDGS_UNSUPPORTED, "chunk-decode-needs-chain");
            /* Outside [0, duration) there is no state. */
            EXPECT_FAIL(fourdgs_reader_evaluate(from_file, info.duration_sec + 1, NULL, frame2),
                        FOURDGS_INVALID_ARGUMENT, NULL);
        }
        EXPECT_FAIL(fourdgs_reader_evaluate(from_file, NAN, NULL, frame), FOURDGS_INVALID_ARGUMENT,
                    "non-finite-input");
        fourdgs_evaluate_options bad;
        fourdgs_evaluate_options_init(&bad);
        bad.max_sh_degree = 9;
        EXPECT_FAIL(fourdgs_reader_evaluate(from_file, 0.0, &bad, frame), FOURDGS_INVALID_ARGUMENT,
                    "invalid-option");

        /* Validation of a good file. */
        fourdgs_validation* v = NULL;
        fourdgs_status vs = fourdgs_validate_file(path, strlen(path), NULL, &v);
        {
            CHECK(vs == FOURDGS_OK, "%s: validate: %s", name, fourdgs_status_name(vs));
            fourdgs_validation_summary sum;
            memset(&sum, 0, sizeof sum);
            sum.struct_size = sizeof sum;
            EXPECT_OK(fourdgs_validation_summary_get(v, &sum));
            CHECK(sum.errors == 0 && sum.valid, "%s: validator found %llu errors", name,
                  (unsigned long long)sum.errors);
            CHECK(sum.file_size == data.size, "%s: validated %llu bytes", name,
                  (unsigned long long)sum.file_size);
            for (size_t i = 0; i < sum.finding_count; ++i) {
                fourdgs_finding f;
                memset(&f, 0, sizeof f);
                f.struct_size = sizeof f;
                EXPECT_OK(fourdgs_validation_finding(v, i, &f));
                CHECK(is_kebab(f.rule), "%s: finding rule", name);
                if (f.severity == FOURDGS_SEVERITY_ERROR)
                    fprintf(stderr, "  %s finding: %.*s %.*s\n", name, (int)f.rule.size,
                            f.rule.data, (int)f.message.size, f.message.data);
            }
            fourdgs_finding f;
            f.struct_size = sizeof f;
            EXPECT_FAIL(fourdgs_validation_finding(v, sum.finding_count, &f), FOURDGS_NOT_FOUND, NULL);
            fourdgs_validation_free(v);
        }

        fourdgs_frame_free(frame);
        fourdgs_frame_free(frame2);
        fourdgs_reader_free(from_file);
        fourdgs_reader_free(from_memory);
        CHECK(ms.releases == 0, "released before free");
        fourdgs_reader_free(from_callbacks);
        CHECK(ms.releases == 1, "%s: release called %d times", name, ms.releases);
        free(json);
    }
done:
    free(data.data);
    free(json_bytes.data);
    free(path);
    free(json_path);
}

/* Opening reads the magic, the tail and the summary once, whatever the temporal model: the C
 * ABI opens a file through open_scene, not once per front-end. */
static void test_opened_once(const char* data_dir, const char* name) {
    char file[256];
    snprintf(file, sizeof file, "%s.4dgs", name);
    char* path = join(data_dir, file);
    bytes data = read_file(path);
    CHECK(data.size > 45, "%s: fixture missing", name);
    if (data.size > 45) {
        read_counter c;
        memset(&c, 0, sizeof c);
        c.memory.data = data.data;
        c.memory.size = data.size;
        c.footer_start = data.size - 37;
        memcpy(&c.summary_start, data.data + c.footer_start + 9, 8);
        CHECK(c.summary_start != 0, "%s: the fixture has an index", name);
        fourdgs_read_callbacks cb;
        cb.user = &c;
        cb.size = ms_size;
        cb.read_at = rc_read_at;
        cb.release = NULL;
        fourdgs_reader* r = NULL;
        EXPECT_OK(fourdgs_reader_open_callbacks(&cb, NULL, &r));
        fourdgs_scene_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        fourdgs_frame* frame = NULL;
        EXPECT_OK(fourdgs_frame_create(NULL, &frame));
        if (r && frame) {
            EXPECT_OK(fourdgs_reader_scene_info(r, &info));
            EXPECT_OK(fourdgs_reader_evaluate(r, info.duration_sec / 2, NULL, frame));
        }
        CHECK(c.magic == 1, "%s: the magic was read %d times", name, c.magic);
        CHECK(c.tail == 1, "%s: the tail was read %d times", name, c.tail);
        CHECK(c.summary == 1, "%s: the summary was read %d times", name, c.summary);
        fourdgs_frame_free(frame);
        fourdgs_reader_free(r);
    }
    free(data.data);
    free(path);
}

/* ------------------------------------------------------------------------------------------ */
/* Refusals built here. */

static const fourdgs_status kKnownStatuses[] = {
    FOURDGS_MALFORMED, FOURDGS_TRUNCATED, FOURDGS_UNSUPPORTED, FOURDGS_IO,
    FOURDGS_INVALID_ARGUMENT, FOURDGS_LIMIT, FOURDGS_OUT_OF_MEMORY};

static int known_failure(fourdgs_status s) {
    for (size_t i = 0; i < sizeof kKnownStatuses / sizeof kKnownStatuses[0]; ++i)
        if (s == kKnownStatuses[i]) return 1;
    return 0;
}

/* Opens damaged bytes and, when they open, reads everything: every failure must be a known
 * status with a kebab-case identifier and a message; nothing may crash. */
static void exercise_damaged(const unsigned char* data, size_t size, const char* what, size_t at) {
    fourdgs_reader* r = (fourdgs_reader*)(void*)&r; /* a sentinel: must stay untouched on failure */
    fourdgs_reader* const sentinel = r;
    fourdgs_status s = fourdgs_reader_open_memory(data, size, NULL, &r);
    if (s != FOURDGS_OK) {
        fourdgs_error e = last_error();
        CHECK(known_failure(s) && is_kebab(e.refusal) && e.message.size > 0,
              "%s at %zu: status %s refusal \"%.*s\"", what, at, fourdgs_status_name(s),
              (int)e.refusal.size, e.refusal.data);
        CHECK(r == sentinel, "%s at %zu: out-parameter written on failure", what, at);
    } else {
        fourdgs_scene_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        EXPECT_OK(fourdgs_reader_scene_info(r, &info));
        fourdgs_frame* frame = NULL;
        fourdgs_frame_create(NULL, &frame);
        double times[3] = {0.0, info.duration_sec / 2, info.duration_sec * 0.999};
        for (int i = 0; i < 3; ++i) {
            fourdgs_status es = fourdgs_reader_evaluate(r, times[i], NULL, frame);
            if (es != FOURDGS_OK) {
                fourdgs_error e = last_error();
                CHECK(known_failure(es) && is_kebab(e.refusal), "%s at %zu: evaluate %s", what, at,
                      fourdgs_status_name(es));
            }
        }
        for (size_t c = 0; c < info.chunk_count && info.temporal_model == 0; ++c) {
            fourdgs_status es = fourdgs_reader_evaluate_chunk(r, c, 0.0, NULL, frame);
            if (es != FOURDGS_OK)
                CHECK(known_failure(es) && is_kebab(last_error().refusal),
                      "%s at %zu: chunk %zu %s", what, at, c, fourdgs_status_name(es));
        }
        fourdgs_frame_free(frame);
        fourdgs_reader_free(r);
    }
    fourdgs_validation* v = NULL;
    s = fourdgs_validate_memory(data, size, NULL, &v);
    CHECK(s == FOURDGS_OK || s == FOURDGS_UNSUPPORTED || known_failure(s), "%s at %zu: validate %s",
          what, at, fourdgs_status_name(s));
    if (s == FOURDGS_OK) {
        fourdgs_validation_summary sum;
        memset(&sum, 0, sizeof sum);
        sum.struct_size = sizeof sum;
        EXPECT_OK(fourdgs_validation_summary_get(v, &sum));
        fourdgs_validation_free(v);
    }
}

static void test_damage(const char* data_dir, const char* name, int quick) {
    char file[256];
    snprintf(file, sizeof file, "%s.4dgs", name);
    char* path = join(data_dir, file);
    bytes data = read_file(path);
    free(path);
    if (data.size == 0) return;
    unsigned char* copy = (unsigned char*)malloc(data.size);

    /* Every truncation is refused (a cut file has no valid tail): the first 64 prefixes, then
     * every `step` bytes, then the last 64. */
    size_t step = quick ? 401 : 23;
    for (size_t n = 0; n < data.size; n += (n < 64 || n + 64 >= data.size) ? 1 : step) {
        memcpy(copy, data.data, n);
        fourdgs_reader* r = NULL;
        fourdgs_status s = fourdgs_reader_open_memory(n ? copy : NULL, n, NULL, &r);
        fourdgs_error e = last_error();
        CHECK(s == FOURDGS_TRUNCATED || s == FOURDGS_MALFORMED,
              "%s cut at %zu: status %s (%.*s)", name, n, fourdgs_status_name(s),
              (int)e.refusal.size, e.refusal.data);
        if (s != FOURDGS_OK) CHECK(is_kebab(e.refusal), "%s cut at %zu: refusal", name, n);
        CHECK(r == NULL, "%s cut at %zu: reader returned", name, n);
        fourdgs_reader_free(r);
        if (!quick && n % 7 == 0) exercise_damaged(copy, n, name, n);
    }

    /* Bit flips, one at a time. */
    size_t flip_step = quick ? 211 : 13;
    for (size_t at = 0; at < data.size; at += flip_step) {
        memcpy(copy, data.data, data.size);
        copy[at] ^= (unsigned char)(1u << (at % 8));
        exercise_damaged(copy, data.size, name, at);
    }
    free(copy);
    free(data.data);
}

/* Mutations whose identifier the spec and registry fix. */
static void test_known_mutations(const char* data_dir) {
    char* path = join(data_dir, "birth-deflate.4dgs");
    bytes data = read_file(path);
    free(path);
    if (data.size == 0) return;
    unsigned char* copy = (unsigned char*)malloc(data.size);
    fourdgs_reader* r = NULL;

    memcpy(copy, data.data, data.size);
    copy[1] ^= 0x40; /* magic "4" → "t" */
    EXPECT_FAIL(fourdgs_reader_open_memory(copy, data.size, NULL, &r), FOURDGS_MALFORMED,
                "magic-mismatch");
    CHECK(r == NULL, "reader on failure");

    memcpy(copy, data.data, data.size);
    copy[5] = '2'; /* only the version byte differs */
    EXPECT_FAIL(fourdgs_reader_open_memory(copy, data.size, NULL, &r), FOURDGS_UNSUPPORTED,
                "unsupported-major-version");

    memcpy(copy, data.data, data.size);
    copy[data.size - 1] ^= 0xFF; /* the trailing magic */
    fourdgs_status s = fourdgs_reader_open_memory(copy, data.size, NULL, &r);
    CHECK(s == FOURDGS_MALFORMED, "trailing magic damaged: %s", fourdgs_status_name(s));

    EXPECT_FAIL(fourdgs_reader_open_memory(copy, 0, NULL, &r), FOURDGS_TRUNCATED, NULL);

    /* A reader that asks for a file that is not there. */
    EXPECT_FAIL(fourdgs_reader_open_file("/nonexistent/x.4dgs", 19, NULL, &r), FOURDGS_IO,
                "io-error");
    free(copy);
    free(data.data);
}

/* ------------------------------------------------------------------------------------------ */
/* Arguments, errors, callbacks, allocator. */

static void test_arguments(const char* data_dir) {
    CHECK(strcmp(fourdgs_version(), FOURDGS_C_VERSION_STRING) == 0, "version %s", fourdgs_version());
    CHECK(fourdgs_abi_version() == FOURDGS_C_ABI_VERSION, "abi version");
    CHECK(strcmp(fourdgs_status_name(FOURDGS_TRUNCATED), "truncated") == 0, "status name");
    CHECK(strcmp(fourdgs_status_name((fourdgs_status)99), "unknown") == 0, "status name 99");
    CHECK(FOURDGS_OK == 0 && FOURDGS_MALFORMED == 1 && FOURDGS_TRUNCATED == 2 &&
              FOURDGS_UNSUPPORTED == 3 && FOURDGS_IO == 4 && FOURDGS_INVALID_ARGUMENT == 5 &&
              FOURDGS_LIMIT == 6,
          "fixed status numbers");

    fourdgs_reader* r = NULL;
    EXPECT_FAIL(fourdgs_reader_open_file(NULL, 0, NULL, &r), FOURDGS_INVALID_ARGUMENT,
                "null-argument");
    EXPECT_FAIL(fourdgs_reader_open_memory(NULL, 10, NULL, &r), FOURDGS_INVALID_ARGUMENT,
                "null-argument");
    EXPECT_FAIL(fourdgs_reader_open_memory("x", 1, NULL, NULL), FOURDGS_INVALID_ARGUMENT,
                "null-argument");
    EXPECT_FAIL(fourdgs_reader_open_callbacks(NULL, NULL, &r), FOURDGS_INVALID_ARGUMENT,
                "null-argument");
    fourdgs_open_options bad;
    fourdgs_open_options_init(&bad);
    bad.max_sh_degree = 4;
    EXPECT_FAIL(fourdgs_reader_open_memory("x", 1, &bad, &r), FOURDGS_INVALID_ARGUMENT,
                "invalid-option");
    bad.struct_size = 0;
    EXPECT_FAIL(fourdgs_reader_open_memory("x", 1, &bad, &r), FOURDGS_INVALID_ARGUMENT,
                "invalid-struct-size");
    fourdgs_allocator half = {NULL, count_alloc, NULL};
    fourdgs_open_options_init(&bad);
    bad.allocator = &half;
    EXPECT_FAIL(fourdgs_reader_open_memory("x", 1, &bad, &r), FOURDGS_INVALID_ARGUMENT,
                "invalid-allocator");
    CHECK(r == NULL, "out-parameter written on failure");

    /* Every getter with NULL handles or outputs. */
    fourdgs_scene_info info;
    info.struct_size = sizeof info;
    fourdgs_string k, v;
    size_t n;
    double d[3], x;
    EXPECT_FAIL(fourdgs_reader_scene_info(NULL, &info), FOURDGS_INVALID_ARGUMENT, "null-argument");
    EXPECT_FAIL(fourdgs_reader_header_attribute(NULL, 0, &k, &v), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_quantization_bound(NULL, 0, &k, &v), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_window(NULL, 0, &x, &x), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_metadata(NULL, 0, &k, &n), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_metadata_entry(NULL, 0, 0, &k, &v), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_metadata_find(NULL, "a", 1, &v), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_attachment(NULL, 0, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    fourdgs_payload p = {0, 0};
    EXPECT_FAIL(fourdgs_reader_read_payload(NULL, p, NULL, 0, &n), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_camera(NULL, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_camera_keyframe(NULL, 0, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_camera_at(NULL, 0, d, d, &x), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_audio_source(NULL, 0, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_audio_keyframe(NULL, 0, 0, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_audio_state_at(NULL, 0, 0, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_coordinate_frame(NULL, 0, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_sensor(NULL, 0, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_rig_trajectory(NULL, 0, &k, NULL, &n), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_rig_trajectory_sample(NULL, 0, 0, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_geodetic_anchor(NULL, 0, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_object(NULL, 0, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_object_track(NULL, 0, NULL, NULL, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_object_track_sample(NULL, 0, 0, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_evaluate(NULL, 0, NULL, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_chunk_info(NULL, 0, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_chunks_for(NULL, 0, NULL, 0, &n), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_reader_evaluate_chunk(NULL, 0, 0, NULL, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_frame_create(NULL, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_frame_columns_get(NULL, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_frame_count(NULL, &n), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_frame_copy(NULL, NULL, &n), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_validate_file(NULL, 0, NULL, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_validate_memory(NULL, 3, NULL, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_validate_callbacks(NULL, NULL, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_validation_summary_get(NULL, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_validation_finding(NULL, 0, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_last_error(NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    fourdgs_reader_free(NULL);
    fourdgs_frame_free(NULL);
    fourdgs_validation_free(NULL);
    fourdgs_writer_free(NULL);
    (fourdgs_open_options_init)(NULL);
    (fourdgs_evaluate_options_init)(NULL);
    (fourdgs_writer_options_init)(NULL);
    fourdgs_open_options_init_sized(NULL, sizeof(fourdgs_open_options));
    fourdgs_evaluate_options_init_sized(NULL, sizeof(fourdgs_evaluate_options));
    fourdgs_writer_options_init_sized(NULL, sizeof(fourdgs_writer_options));

    /* The last error survives successes and is per thread; clear resets it. */
    EXPECT_FAIL(fourdgs_reader_open_file(NULL, 0, NULL, &r), FOURDGS_INVALID_ARGUMENT, NULL);
    CHECK(fourdgs_abi_version() == FOURDGS_C_ABI_VERSION, "");
    CHECK(fourdgs_last_status() == FOURDGS_INVALID_ARGUMENT, "last status kept");
    fourdgs_clear_error();
    fourdgs_error e = last_error();
    CHECK(e.status == FOURDGS_OK && e.refusal.size == 0 && e.offset == FOURDGS_NO_OFFSET,
          "clear_error");

    /* Callbacks: release once on success, on refusal, on invalid callbacks; read failures are
     * io errors. */
    char* path = join(data_dir, "birth-deflate.4dgs");
    bytes data = read_file(path);
    free(path);
    memory_source ms = {data.data, data.size, 0, 1};
    fourdgs_read_callbacks cb = callbacks_for(&ms);
    EXPECT_FAIL(fourdgs_reader_open_callbacks(&cb, NULL, &r), FOURDGS_IO, "io-error");
    CHECK(ms.releases == 1, "release after a failed open: %d", ms.releases);
    ms.releases = 0;
    cb.read_at = NULL;
    EXPECT_FAIL(fourdgs_reader_open_callbacks(&cb, NULL, &r), FOURDGS_INVALID_ARGUMENT,
                "invalid-callbacks");
    CHECK(ms.releases == 1, "release after invalid callbacks: %d", ms.releases);
    ms.releases = 0;
    ms.fail_reads = 0;
    cb = callbacks_for(&ms);
    fourdgs_validation* validation = NULL;
    fourdgs_status vs = fourdgs_validate_callbacks(&cb, NULL, &validation);
    CHECK(vs == FOURDGS_OK || vs == FOURDGS_UNSUPPORTED, "validate callbacks %s",
          fourdgs_status_name(vs));
    CHECK(ms.releases == 1, "release after validate: %d", ms.releases);
    fourdgs_validation_free(validation);

    /* Copied memory outlives the caller's buffer. */
    fourdgs_open_options copy;
    fourdgs_open_options_init(&copy);
    copy.copy_memory = 1;
    unsigned char* scratch = (unsigned char*)malloc(data.size);
    memcpy(scratch, data.data, data.size);
    EXPECT_OK(fourdgs_reader_open_memory(scratch, data.size, &copy, &r));
    memset(scratch, 0, data.size);
    free(scratch);
    fourdgs_frame* frame = NULL;
    EXPECT_OK(fourdgs_frame_create(NULL, &frame));
    EXPECT_OK(fourdgs_reader_evaluate(r, 2.5, NULL, frame));
    /* A range outside the file is the caller's, named by a C-layer identifier (docs/c-api.md). */
    fourdgs_payload outside = {data.size - 2, 10};
    EXPECT_FAIL(fourdgs_reader_read_payload(r, outside, NULL, 0, &n), FOURDGS_INVALID_ARGUMENT,
                "value-out-of-range");
    fourdgs_frame_free(frame);
    fourdgs_reader_free(r);

    /* Allocator hooks: every handle goes through them and is given back. */
    counting counts = {0, 0};
    fourdgs_allocator hooks = {&counts, count_alloc, count_free};
    fourdgs_open_options with_hooks;
    fourdgs_open_options_init(&with_hooks);
    with_hooks.allocator = &hooks;
    r = NULL;
    EXPECT_OK(fourdgs_reader_open_memory(data.data, data.size, &with_hooks, &r));
    frame = NULL;
    EXPECT_OK(fourdgs_frame_create(&hooks, &frame));
    EXPECT_OK(fourdgs_reader_evaluate(r, 1.0, NULL, frame));
    fourdgs_frame_free(frame);
    fourdgs_reader_free(r);
    CHECK(counts.allocs >= 2 && counts.allocs == counts.frees, "allocator: %ld allocs, %ld frees",
          counts.allocs, counts.frees);
    free(data.data);
}

/* ------------------------------------------------------------------------------------------ */
/* Threads: one reader, one frame per thread. */

typedef struct thread_job {
    fourdgs_reader* reader;
    double t;
    size_t count;
    fourdgs_status status;
} thread_job;

static void* evaluate_job(void* arg) {
    thread_job* job = (thread_job*)arg;
    fourdgs_frame* frame = NULL;
    job->status = fourdgs_frame_create(NULL, &frame);
    for (int i = 0; i < 20 && job->status == FOURDGS_OK; ++i)
        job->status = fourdgs_reader_evaluate(job->reader, job->t, NULL, frame);
    if (job->status == FOURDGS_OK) fourdgs_frame_count(frame, &job->count);
    fourdgs_frame_free(frame);
    return NULL;
}

static void test_threads(const char* data_dir) {
    char* path = join(data_dir, "birth-zstd-sh3-balanced.4dgs");
    fourdgs_reader* r = NULL;
    EXPECT_OK(fourdgs_reader_open_file(path, strlen(path), NULL, &r));
    free(path);
    if (!r) return;
    fourdgs_frame* frame = NULL;
    fourdgs_frame_create(NULL, &frame);
    size_t want = evaluate_count(r, frame, 1.0);
    fourdgs_frame_free(frame);
    thread_job jobs[4];
    pthread_t threads[4];
    for (int i = 0; i < 4; ++i) {
        jobs[i].reader = r;
        jobs[i].t = 1.0;
        jobs[i].count = 0;
        jobs[i].status = FOURDGS_INTERNAL;
        pthread_create(&threads[i], NULL, evaluate_job, &jobs[i]);
    }
    for (int i = 0; i < 4; ++i) {
        pthread_join(threads[i], NULL);
        CHECK(jobs[i].status == FOURDGS_OK && jobs[i].count == want, "thread %d: %s %zu vs %zu", i,
              fourdgs_status_name(jobs[i].status), jobs[i].count, want);
    }
    fourdgs_reader_free(r);
}

/* ------------------------------------------------------------------------------------------ */
/* Writing and reading back. */

typedef struct collected {
    unsigned char* data;
    size_t size;
    int fail;
} collected;

static int collect(void* user, const void* data, uint64_t size) {
    collected* c = (collected*)user;
    if (c->fail) return 1;
    unsigned char* grown = (unsigned char*)realloc(c->data, c->size + (size_t)size + 1);
    if (!grown) return 1;
    c->data = grown;
    memcpy(c->data + c->size, data, (size_t)size);
    c->size += (size_t)size;
    return 0;
}

#define N_GAUSSIANS 120

static void fill_batch(size_t first, size_t count, float* pos, float* scale, float* rot,
                       float* color, float* mu, float* sigma, double* lo, double* hi, float* sh,
                       uint32_t* ids) {
    for (size_t j = 0; j < count; ++j) {
        size_t i = first + j;
        for (int c = 0; c < 3; ++c) {
            pos[j * 3 + c] = (float)((double)((i * 7 + (size_t)c * 13) % 41) / 10.0 - 2.0);
            scale[j * 3 + c] = 0.01f + 0.001f * (float)((i + (size_t)c) % 7);
        }
        rot[j * 4 + 0] = 0.1f;
        rot[j * 4 + 1] = 0.2f;
        rot[j * 4 + 2] = (float)(i % 5) * 0.1f;
        rot[j * 4 + 3] = 0.9f;
        for (int c = 0; c < 4; ++c) color[j * 4 + c] = (float)((i + (size_t)c * 3) % 11) / 10.0f;
        mu[j] = 1.0f + (float)(i % 4);
        sigma[j] = (i % 3 == 0) ? INFINITY : 0.8f;
        lo[j] = (i % 2) ? 0.0 : 1.0;
        hi[j] = (i % 2) ? 6.0 : 4.0;
        for (int k = 0; k < 9; ++k) sh[j * 9 + k] = (float)((int)((i + (size_t)k) % 9) - 4) * 0.1f;
        if (ids) ids[j] = (i % 4 == 0) ? 5u : 0u;
    }
}

/* Gaussians 0..count-1 of the columns as a batch (SH degree 1: 9 floats per gaussian). */
static fourdgs_gaussian_batch batch_of(size_t count, const float* pos, const float* scale,
                                       const float* rot, const float* color, const float* mu,
                                       const float* sigma, const double* lo, const double* hi,
                                       const float* sh, const uint32_t* ids) {
    fourdgs_gaussian_batch b;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    b.count = count;
    b.position = pos;
    b.scale = scale;
    b.rotation = rot;
    b.color = color;
    b.mu_t = mu;
    b.sigma_t = sigma;
    b.win_lo = lo;
    b.win_hi = hi;
    b.sh = sh;
    b.object_id = ids;
    return b;
}

static void test_writer(const char* tmp_dir) {
    fourdgs_writer_options o;
    fourdgs_writer_options_init(&o);
    o.duration_sec = 6.0;
    o.sh_degree = 1;
    o.profile = "";
    o.codec = "zstd";
    o.codec_size = 4;
    o.threads = 1;
    counting counts = {0, 0};
    fourdgs_allocator hooks = {&counts, count_alloc, count_free};
    o.allocator = &hooks;
    fourdgs_writer* w = NULL;
    EXPECT_OK(fourdgs_writer_create(&o, &w));
    if (!w) return;

    float pos[N_GAUSSIANS * 3], scale[N_GAUSSIANS * 3], rot[N_GAUSSIANS * 4],
        color[N_GAUSSIANS * 4], mu[N_GAUSSIANS], sigma[N_GAUSSIANS], sh[N_GAUSSIANS * 9];
    double lo[N_GAUSSIANS], hi[N_GAUSSIANS];
    uint32_t ids[N_GAUSSIANS];
    fill_batch(0, N_GAUSSIANS, pos, scale, rot, color, mu, sigma, lo, hi, sh, ids);
    /* Two batches: the first with object ids, the second without (background). */
    fourdgs_gaussian_batch b = batch_of(80, pos, scale, rot, color, mu, sigma, lo, hi, sh, ids);
    EXPECT_OK(fourdgs_writer_add_gaussians(w, &b));
    fourdgs_gaussian_batch b2 = batch_of(N_GAUSSIANS - 80, pos + 80 * 3, scale + 80 * 3,
                                         rot + 80 * 4, color + 80 * 4, mu + 80, sigma + 80,
                                         lo + 80, hi + 80, sh + 80 * 9, NULL);
    EXPECT_OK(fourdgs_writer_add_gaussians(w, &b2));
    fourdgs_gaussian_batch missing = b;
    missing.position = NULL;
    EXPECT_FAIL(fourdgs_writer_add_gaussians(w, &missing), FOURDGS_INVALID_ARGUMENT,
                "null-argument");

    /* Extras. */
    EXPECT_OK(fourdgs_writer_add_header_attribute(w, "title", 5, "c api", 5));
    fourdgs_key_value kv[2] = {{"application", 11, "c_test", 6}, {"note", 4, "written from C", 14}};
    EXPECT_OK(fourdgs_writer_add_metadata(w, "info", 4, kv, 2));
    const char blob[] = "attachment bytes";
    EXPECT_OK(fourdgs_writer_add_attachment(w, "notes.txt", 9, "text/plain", 10, blob,
                                            sizeof blob - 1));
    double cpos[3] = {0, 1, 5}, ctarget[3] = {0, 0, 0};
    fourdgs_camera_keyframe keys[2] = {{0.0, {0, 1, 5}, {0, 0, 0}}, {6.0, {1, 1, 5}, {0, 0, 0}}};
    EXPECT_OK(fourdgs_writer_set_camera(w, 50.0, cpos, ctarget, keys, 2, "linear", 6, 0));
    fourdgs_audio_source_info audio;
    memset(&audio, 0, sizeof audio);
    audio.struct_size = sizeof audio;
    audio.source_id = 4;
    audio.name.data = "bed";
    audio.name.size = 3;
    audio.codec.data = "pcm-s16le";
    audio.codec.size = 9;
    audio.channel_layout.data = "stereo";
    audio.channel_layout.size = 6;
    audio.interpolation.data = "linear";
    audio.interpolation.size = 6;
    audio.start_sec = 0;
    audio.duration_sec = 2;
    audio.gain = 0.5;
    audio.rotation[3] = 1;
    const unsigned char pcm[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    EXPECT_OK(fourdgs_writer_add_audio_source(w, &audio, NULL, 0, pcm, sizeof pcm));
    fourdgs_coordinate_frame frame_rec;
    memset(&frame_rec, 0, sizeof frame_rec);
    frame_rec.struct_size = sizeof frame_rec;
    frame_rec.handedness = 1;
    frame_rec.up_axis = 1;
    frame_rec.forward_axis = 5;
    frame_rec.length_unit = 1;
    frame_rec.metres_per_unit = 1.0;
    EXPECT_OK(fourdgs_writer_add_coordinate_frame(w, &frame_rec));
    frame_rec.up_axis = 9;
    EXPECT_FAIL(fourdgs_writer_add_coordinate_frame(w, &frame_rec), FOURDGS_INVALID_ARGUMENT,
                "value-out-of-range");
    fourdgs_pose_sample rig[2] = {{0.0, {0, 0, 0, 1}, {0, 1, 0}}, {6.0, {0, 0, 0, 1}, {2, 1, 0}}};
    EXPECT_OK(fourdgs_writer_add_rig_trajectory(w, "rig", 3, 0, rig, 2));
    fourdgs_sensor sensor;
    memset(&sensor, 0, sizeof sensor);
    sensor.struct_size = sizeof sensor;
    sensor.name.data = "cam0";
    sensor.name.size = 4;
    sensor.modality.data = "rgb";
    sensor.modality.size = 3;
    sensor.rig_name.data = "rig";
    sensor.rig_name.size = 3;
    sensor.camera_model = 1; /* pinhole */
    sensor.width_px = 640;
    sensor.height_px = 480;
    sensor.fx = sensor.fy = 500;
    sensor.cx = 320;
    sensor.cy = 240;
    sensor.rotation[3] = 1;
    sensor.pose_reference = 1; /* rig */
    EXPECT_OK(fourdgs_writer_add_sensor(w, &sensor));
    sensor.camera_model = 7;
    EXPECT_FAIL(fourdgs_writer_add_sensor(w, &sensor), FOURDGS_INVALID_ARGUMENT, "value-out-of-range");
    fourdgs_geodetic_anchor anchor;
    memset(&anchor, 0, sizeof anchor);
    anchor.struct_size = sizeof anchor;
    anchor.latitude_deg = 45.0;
    anchor.longitude_deg = 7.5;
    anchor.altitude_m = 300;
    EXPECT_OK(fourdgs_writer_add_geodetic_anchor(w, &anchor)); /* in the "" frame added above */
    fourdgs_object_info obj;
    memset(&obj, 0, sizeof obj);
    obj.struct_size = sizeof obj;
    obj.object_id = 5;
    obj.label.data = "box";
    obj.label.size = 3;
    EXPECT_OK(fourdgs_writer_add_object(w, &obj, 0));
    EXPECT_FAIL(fourdgs_writer_add_object(w, &obj, 4), FOURDGS_INVALID_ARGUMENT,
                "embedding-dimension-mismatch");
    fourdgs_pose_sample track[2] = {{0.0, {0, 0, 0, 1}, {0, 0, 0}}, {6.0, {0, 0, 0, 1}, {1, 0, 0}}};
    EXPECT_OK(fourdgs_writer_add_object_track(w, 5, 0, track, 2));

    fourdgs_write_report rep;
    memset(&rep, 0, sizeof rep);
    rep.struct_size = sizeof rep;
    EXPECT_FAIL(fourdgs_writer_report(w, &rep), FOURDGS_NOT_FOUND, NULL);
    const uint8_t* mem = NULL;
    size_t mem_size = 0;
    EXPECT_OK(fourdgs_writer_finish_memory(w, &mem, &mem_size));
    EXPECT_OK(fourdgs_writer_report(w, &rep));
    CHECK(rep.gaussian_count == N_GAUSSIANS && rep.bytes_written == mem_size,
          "report: %llu gaussians, %llu bytes", (unsigned long long)rep.gaussian_count,
          (unsigned long long)rep.bytes_written);

    /* The same bytes through a callback and to a file. */
    collected c = {NULL, 0, 0};
    EXPECT_OK(fourdgs_writer_finish_callback(w, collect, &c));
    CHECK(c.size == mem_size && mem && memcmp(c.data, mem, mem_size) == 0,
          "callback output differs from memory output");
    collected failing = {NULL, 0, 1};
    EXPECT_FAIL(fourdgs_writer_finish_callback(w, collect, &failing), FOURDGS_IO, "io-error");
    char* file = join(tmp_dir, "c_test_written.4dgs");
    EXPECT_OK(fourdgs_writer_finish_file(w, file, strlen(file)));
    EXPECT_FAIL(fourdgs_writer_finish_file(w, "/nonexistent/dir/x.4dgs", 23), FOURDGS_IO, "io-error");

    /* Read it back. */
    fourdgs_reader* r = NULL;
    EXPECT_OK(fourdgs_reader_open_file(file, strlen(file), NULL, &r));
    if (r) {
        fourdgs_scene_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        EXPECT_OK(fourdgs_reader_scene_info(r, &info));
        CHECK(info.gaussian_count == N_GAUSSIANS && info.sh_degree == 1 &&
                  info.duration_sec == 6.0,
              "read back: %llu gaussians, degree %u", (unsigned long long)info.gaussian_count,
              info.sh_degree);
        fourdgs_string v;
        EXPECT_OK(fourdgs_reader_metadata_find(r, "note", 4, &v));
        CHECK(string_is(v, "written from C"), "metadata read back");
        EXPECT_OK(fourdgs_reader_header_attribute(r, 0, &v, &v));
        CHECK(info.attachment_count == 1, "attachments %llu", (unsigned long long)info.attachment_count);
        if (info.attachment_count == 1) {
            fourdgs_attachment_info a;
            memset(&a, 0, sizeof a);
            a.struct_size = sizeof a;
            EXPECT_OK(fourdgs_reader_attachment(r, 0, &a));
            char buf[64];
            size_t got = 0;
            EXPECT_OK(fourdgs_reader_read_payload(r, a.payload, buf, sizeof buf, &got));
            CHECK(got == sizeof blob - 1 && memcmp(buf, blob, got) == 0, "attachment bytes");
        }
        /* Extras emission is the writer's (another engineer's, in progress): report what came
         * back rather than fail on its absence. */
        CHECK(info.has_camera, "camera not written");
        CHECK(info.audio_source_count == 1, "audio sources %llu",
              (unsigned long long)info.audio_source_count);
        CHECK(info.coordinate_frame_count == 1 && info.object_count == 1 &&
                  info.object_track_count == 1 && info.sensor_count == 1 &&
                  info.rig_trajectory_count == 1 && info.geodetic_anchor_count == 1,
              "provenance/objects not written back");
        if (info.sensor_count == 1) {
            fourdgs_sensor back;
            memset(&back, 0, sizeof back);
            back.struct_size = sizeof back;
            EXPECT_OK(fourdgs_reader_sensor(r, 0, &back));
            CHECK(string_is(back.name, "cam0") && string_is(back.rig_name, "rig") &&
                      back.width_px == 640 && back.fx == 500 && back.pose_reference == 1,
                  "sensor read back");
        }
        walk_scene(r, &info);
        fourdgs_frame* frame = NULL;
        fourdgs_frame_create(NULL, &frame);
        size_t n = evaluate_count(r, frame, 2.0);
        CHECK(n != (size_t)-1 && n > 0 && n <= N_GAUSSIANS, "visible at 2: %zu", n);
        check_frame_copy(frame);
        fourdgs_frame_free(frame);
        fourdgs_reader_free(r);
    }

    /* Refusals at finish name the gaussian. */
    fourdgs_writer* bad = NULL;
    o.allocator = NULL;
    EXPECT_OK(fourdgs_writer_create(&o, &bad));
    scale[3] = -1.0f; /* gaussian 1 */
    b.count = 4;
    b.object_id = NULL;
    EXPECT_OK(fourdgs_writer_add_gaussians(bad, &b));
    EXPECT_FAIL(fourdgs_writer_finish_memory(bad, &mem, &mem_size), FOURDGS_INVALID_ARGUMENT,
                "value-out-of-range");
    fourdgs_writer_free(bad);
    bad = NULL;
    o.codec = "snappy";
    o.codec_size = 6;
    EXPECT_FAIL(fourdgs_writer_create(&o, &bad), FOURDGS_INVALID_ARGUMENT, "invalid-option");
    o.codec = NULL;
    o.codec_size = 3;
    EXPECT_FAIL(fourdgs_writer_create(&o, &bad), FOURDGS_INVALID_ARGUMENT, "null-argument");
    CHECK(bad == NULL, "writer returned on failure");
    EXPECT_FAIL(fourdgs_writer_create(NULL, &bad), FOURDGS_INVALID_ARGUMENT, "null-argument");
    EXPECT_FAIL(fourdgs_writer_add_gaussians(NULL, &b), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_writer_add_metadata(w, "x", 1, NULL, 2), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_writer_finish_memory(w, NULL, &mem_size), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_writer_finish_callback(w, NULL, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_writer_add_sensor(w, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_writer_add_geodetic_anchor(w, NULL), FOURDGS_INVALID_ARGUMENT, NULL);
    EXPECT_FAIL(fourdgs_writer_add_rig_trajectory(w, "r", 1, 3, NULL, 0), FOURDGS_INVALID_ARGUMENT,
                "value-out-of-range");

    fourdgs_writer_free(w);
    CHECK(counts.allocs > 0 && counts.allocs == counts.frees, "writer allocator: %ld/%ld",
          counts.allocs, counts.frees);
    free(c.data);
    free(file);
}

/* ------------------------------------------------------------------------------------------ */
/* Decoded blocks, streams, stream writers. */

static fourdgs_reader* open_path(const char* path) {
    fourdgs_open_options o;
    fourdgs_open_options_init(&o);
    CHECK(o.keep_payloads == 0, "keep_payloads is off by default");
    fourdgs_reader* r = NULL;
    EXPECT_OK(fourdgs_reader_open_file(path, strlen(path), &o, &r));
    return r;
}

/* The columns of a block are whole: every lent column has count rows, a missing one is NULL. */
static void check_block_columns(const fourdgs_block* b, size_t want_count, const char* what) {
    fourdgs_block_columns c = block_columns(b);
    CHECK(c.count == want_count, "%s: %zu gaussians, wanted %zu", what, c.count, want_count);
    if (c.count == 0) {
        CHECK(c.position == NULL && c.sh == NULL, "%s: columns lent for an empty block", what);
        return;
    }
    CHECK(c.position && c.scale && c.rotation && c.color && c.motion && c.mu_t && c.sigma_t &&
              c.win_lo && c.win_hi && c.flags && c.window_index,
          "%s: a required column is NULL", what);
    CHECK(c.sh_per_gaussian == (size_t)(3 * ((c.sh_degree + 1) * (c.sh_degree + 1) - 1)) &&
              (c.sh_per_gaussian == 0) == (c.sh == NULL),
          "%s: SH degree %u with %zu bytes per gaussian", what, c.sh_degree, c.sh_per_gaussian);
    for (size_t i = 0; i < c.count; ++i) {
        const float* q = c.rotation + 4 * i;
        const double norm2 = (double)(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (norm2 < 0.998 || norm2 > 1.002 || !(c.win_lo[i] < c.win_hi[i]) || c.color[4 * i + 3] < 0.0f ||
            c.color[4 * i + 3] > 1.0f) {
            CHECK(0, "%s: gaussian %zu: |q|^2 %f, window [%f, %f), opacity %f", what, i, norm2,
                  (double)c.win_lo[i], (double)c.win_hi[i], (double)c.color[4 * i + 3]);
            break;
        }
    }
}

static void test_blocks(const char* data_dir) {
    fourdgs_block* block = NULL;
    EXPECT_FAIL(fourdgs_block_create(NULL, NULL), FOURDGS_INVALID_ARGUMENT, "null-argument");
    counting counts = {0, 0};
    fourdgs_allocator hooks = {&counts, count_alloc, count_free};
    EXPECT_OK(fourdgs_block_create(&hooks, &block));
    if (!block) return;
    fourdgs_block_free(NULL);
    /* A new block is empty. */
    CHECK(block_info(block).kind == FOURDGS_BLOCK_EMPTY, "a new block is not empty");
    check_block_columns(block, 0, "new block");
    fourdgs_block_columns unsized;
    memset(&unsized, 0, sizeof unsized);
    EXPECT_FAIL(fourdgs_block_columns_get(block, &unsized), FOURDGS_INVALID_ARGUMENT,
                "invalid-struct-size");

    /* Gaussian-birth: read_all holds every gaussian; the frame of evaluate_block at t is the
     * frame of evaluate at t; state_at holds the chunks covering t. */
    char* path = join(data_dir, "birth-zstd-sh3-balanced.4dgs");
    fourdgs_reader* r = open_path(path);
    if (r) {
        fourdgs_scene_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        EXPECT_OK(fourdgs_reader_scene_info(r, &info));
        EXPECT_OK(fourdgs_reader_read_all(r, block));
        CHECK(block_info(block).kind == FOURDGS_BLOCK_ALL, "read_all: kind %u",
              block_info(block).kind);
        check_block_columns(block, (size_t)info.gaussian_count, "read_all");
        CHECK(block_columns(block).sh_degree == info.sh_degree, "read_all: SH degree");
        fourdgs_frame *a = NULL, *b = NULL;
        fourdgs_frame_create(NULL, &a);
        fourdgs_frame_create(NULL, &b);
        const double t = info.duration_sec * 0.4;
        EXPECT_OK(fourdgs_reader_evaluate(r, t, NULL, a));
        EXPECT_OK(fourdgs_reader_evaluate_block(r, block, t, NULL, b));
        size_t na = 0, nb = 0;
        fourdgs_frame_count(a, &na);
        fourdgs_frame_count(b, &nb);
        CHECK(na == nb && na > 0, "evaluate %zu visible, evaluate_block over read_all %zu", na, nb);
        /* Two blocks gathered with append: twice the visible set. */
        fourdgs_evaluate_options eo;
        fourdgs_evaluate_options_init(&eo);
        eo.append = 1;
        EXPECT_OK(fourdgs_reader_evaluate_block(r, block, t, &eo, b));
        fourdgs_frame_count(b, &nb);
        CHECK(nb == 2 * na, "append: %zu, wanted %zu", nb, 2 * na);
        EXPECT_FAIL(fourdgs_reader_evaluate_block(r, NULL, t, NULL, b), FOURDGS_INVALID_ARGUMENT,
                    "null-argument");
        EXPECT_FAIL(fourdgs_reader_evaluate_block(r, block, NAN, NULL, b),
                    FOURDGS_INVALID_ARGUMENT, "non-finite-input");

        EXPECT_OK(fourdgs_reader_state_at(r, t, block));
        fourdgs_block_info bi = block_info(block);
        size_t covering = 0;
        fourdgs_reader_chunks_for(r, t, NULL, 0, &covering);
        size_t in_chunks = 0;
        for (size_t c = 0; c < info.chunk_count; ++c) {
            fourdgs_chunk_info ci;
            memset(&ci, 0, sizeof ci);
            ci.struct_size = sizeof ci;
            fourdgs_reader_chunk_info(r, c, &ci);
            if (ci.t0 <= t && t < ci.t1) in_chunks += (size_t)ci.gaussian_count;
        }
        CHECK(bi.kind == FOURDGS_BLOCK_INSTANT && bi.time == t, "state_at: kind %u, time %f",
              bi.kind, bi.time);
        check_block_columns(block, in_chunks, "state_at (gaussian-birth)");
        /* Read again into the same block: its columns are kept and written over, with the
         * same rows as the first read. */
        {
            fourdgs_block_columns first = block_columns(block);
            float* positions = malloc(first.count * 3 * sizeof(float) + 1);
            memcpy(positions, first.position, first.count * 3 * sizeof(float));
            EXPECT_OK(fourdgs_reader_state_at(r, t, block));
            check_block_columns(block, in_chunks, "state_at again into the same block");
            fourdgs_block_columns again = block_columns(block);
            CHECK(memcmp(positions, again.position, first.count * 3 * sizeof(float)) == 0,
                  "state_at again into the same block: positions differ");
            free(positions);
        }
        /* A failed read leaves the block empty. */
        EXPECT_FAIL(fourdgs_reader_state_at(r, INFINITY, block), FOURDGS_INVALID_ARGUMENT,
                    "non-finite-input");
        check_block_columns(block, 0, "state_at refused for a non-finite t");
        EXPECT_FAIL(fourdgs_reader_state_at(r, 1.0, NULL), FOURDGS_INVALID_ARGUMENT,
                    "null-argument");
        EXPECT_FAIL(fourdgs_reader_read_all(NULL, block), FOURDGS_INVALID_ARGUMENT,
                    "null-argument");
        fourdgs_frame_free(a);
        fourdgs_frame_free(b);
        fourdgs_reader_free(r);
    }
    free(path);

    /* Keyframe-delta: state_at is the composed state of current(t); read_all is refused. */
    path = join(data_dir, "keyframe-delta-churn.4dgs");
    r = open_path(path);
    if (r) {
        EXPECT_FAIL(fourdgs_reader_read_all(r, block), FOURDGS_UNSUPPORTED,
                    "read-all-needs-gaussian-birth");
        CHECK(block_info(block).kind == FOURDGS_BLOCK_EMPTY, "block not empty after a failure");
        fourdgs_chunk_info ci;
        memset(&ci, 0, sizeof ci);
        ci.struct_size = sizeof ci;
        EXPECT_OK(fourdgs_reader_chunk_info(r, 1, &ci));
        const double t = 0.5 * (ci.t0 + ci.t1);
        EXPECT_OK(fourdgs_reader_state_at(r, t, block));
        fourdgs_block_info bi = block_info(block);
        fourdgs_block_columns c = block_columns(block);
        CHECK(bi.kind == FOURDGS_BLOCK_STATE && bi.offset == ci.offset && bi.t0 == ci.t0 &&
                  bi.t1 == ci.t1 && bi.live_count == c.count && bi.chunk_kind == ci.kind,
              "keyframe-delta state: kind %u at %llu [%f, %f) live %llu of %zu", bi.kind,
              (unsigned long long)bi.offset, bi.t0, bi.t1, (unsigned long long)bi.live_count,
              c.count);
        CHECK(c.gaussian_id != NULL && c.count > 0, "a composed state carries gaussian_id");
        for (size_t i = 1; c.gaussian_id && i < c.count; ++i)
            if (c.gaussian_id[i - 1] >= c.gaussian_id[i]) {
                CHECK(0, "state not sorted by gaussian_id at %zu", i);
                break;
            }
        check_block_columns(block, c.count, "state_at (keyframe-delta)");
        fourdgs_reader_free(r);
    }
    free(path);
    fourdgs_block_free(block);
    CHECK(counts.allocs == 1 && counts.frees == 1, "block allocator: %ld/%ld", counts.allocs,
          counts.frees);
}

/* Reads a stream to its end into `block`; returns the number of blocks (gaussians in *total). */
static size_t stream_all(fourdgs_stream* s, fourdgs_block* block, size_t* total,
                         fourdgs_status* last) {
    size_t blocks = 0;
    *total = 0;
    uint32_t produced = 1;
    while ((*last = fourdgs_stream_next_block(s, block, &produced)) == FOURDGS_OK && produced) {
        ++blocks;
        *total += block_columns(block).count;
    }
    return blocks;
}

/* A stream over the first `size` bytes of `data`, through callbacks. */
static fourdgs_stream* stream_of(trickle* tr, const bytes* data, size_t size, uint32_t keep) {
    memset(tr, 0, sizeof *tr);
    tr->data = data->data;
    tr->size = size;
    fourdgs_stream_callbacks cb = {tr, trickle_read, trickle_release};
    fourdgs_open_options o;
    fourdgs_open_options_init(&o);
    o.keep_payloads = keep;
    fourdgs_stream* s = NULL;
    EXPECT_OK(fourdgs_stream_open_callbacks(&cb, &o, &s));
    return s;
}

/* A stream's scene is a reader handle: every scene call answers on it as on the random-access
 * reader (after the end, the summary included), evaluate_block evaluates with it, and what
 * needs the index is refused; its payloads come from memory when the stream kept them. */
static void test_stream_scene(const char* data_dir) {
    static const char* names[] = {"birth-deflate", "birth-extras", "birth-never-fades-no-index",
                                  "keyframe-delta-churn"};
    fourdgs_block* block = NULL;
    fourdgs_block_create(NULL, &block);
    fourdgs_frame* frame = NULL;
    fourdgs_frame_create(NULL, &frame);
    for (size_t f = 0; f < sizeof names / sizeof names[0]; ++f) {
        char file[128];
        snprintf(file, sizeof file, "%s.4dgs", names[f]);
        char* path = join(data_dir, file);
        bytes data = read_file(path);
        fourdgs_reader* indexed = open_path(path);
        free(path);
        trickle tr;
        fourdgs_stream* s = stream_of(&tr, &data, data.size, 1);
        const fourdgs_reader* scene = NULL;
        if (s) EXPECT_OK(fourdgs_stream_scene(s, &scene));
        if (!indexed || !scene) {
            fourdgs_reader_free(indexed);
            fourdgs_stream_free(s);
            free(data.data);
            continue;
        }
        const fourdgs_scene_info want = scene_info_of(indexed);
        fourdgs_scene_info info = scene_info_of(scene);
        CHECK(info.temporal_model == want.temporal_model && info.chunk_count == 0 &&
                  info.summary_crc_verified == 0 && info.metadata_count == want.metadata_count &&
                  info.audio_source_count == want.audio_source_count,
              "%s: the front matter differs from the indexed reader's", names[f]);
        EXPECT_FAIL(fourdgs_reader_evaluate(scene, 0.0, NULL, frame), FOURDGS_INVALID_ARGUMENT,
                    "needs-random-access");
        EXPECT_FAIL(fourdgs_reader_read_all(scene, block), FOURDGS_INVALID_ARGUMENT,
                    "needs-random-access");
        EXPECT_FAIL(fourdgs_reader_state_at(scene, 0.0, block), FOURDGS_INVALID_ARGUMENT,
                    "needs-random-access");
        size_t n = 0;
        EXPECT_FAIL(fourdgs_reader_chunks_for(scene, 0.0, NULL, 0, &n), FOURDGS_INVALID_ARGUMENT,
                    "needs-random-access");
        EXPECT_FAIL(fourdgs_reader_fetch_ranges(scene, 0.0, NULL, 0, &n), FOURDGS_INVALID_ARGUMENT,
                    "needs-random-access");
        EXPECT_FAIL(fourdgs_reader_evaluate_chunk(scene, 0, 0.0, NULL, frame),
                    FOURDGS_INVALID_ARGUMENT, "needs-random-access");
        fourdgs_reader_free((fourdgs_reader*)scene); /* the stream's: passed by */

        /* Evaluated block by block with the stream's scene: the indexed reader's frame. */
        const int kd = want.temporal_model == FOURDGS_MODEL_KEYFRAME_DELTA;
        const double t = want.duration_sec * 0.4;
        fourdgs_evaluate_options eo;
        fourdgs_evaluate_options_init(&eo);
        size_t blocks = 0, total = 0, visible = 0;
        uint32_t produced = 0;
        fourdgs_status last;
        while ((last = fourdgs_stream_next_block(s, block, &produced)) == FOURDGS_OK && produced) {
            const fourdgs_block_info bi = block_info(block);
            const size_t count = block_columns(block).count;
            CHECK(bi.kind == (kd ? FOURDGS_BLOCK_STATE : FOURDGS_BLOCK_CHUNK),
                  "%s: block kind %u", names[f], bi.kind);
            check_block_columns(block, count, names[f]);
            if (!kd || (bi.t0 <= t && t < bi.t1)) {
                eo.append = !kd && blocks > 0;
                EXPECT_OK(fourdgs_reader_evaluate_block(scene, block, t, &eo, frame));
                fourdgs_frame_count(frame, &visible);
            }
            ++blocks;
            total += count;
        }
        CHECK(last == FOURDGS_OK && block_info(block).kind == FOURDGS_BLOCK_EMPTY,
              "%s: the stream did not end cleanly (%s)", names[f], fourdgs_status_name(last));
        CHECK(blocks == want.chunk_count, "%s: %zu blocks, %llu chunks", names[f], blocks,
              (unsigned long long)want.chunk_count);
        CHECK(kd || total == want.gaussian_count, "%s: %zu gaussians streamed", names[f], total);
        CHECK(visible > 0 && visible == evaluate_count(indexed, frame, t),
              "%s: %zu visible through the stream", names[f], visible);

        /* After the end the summary has arrived: the scene is the file's, every call answers
         * (the payloads from memory), and the end repeats. (An index the indexed reader built
         * by scanning a file without one is not the file's.) */
        info = scene_info_of(scene);
        CHECK(info.chunk_count == (want.index_built_by_scan ? 0 : want.chunk_count) &&
                  info.gaussian_count == want.gaussian_count &&
                  info.window_count == want.window_count && info.index_built_by_scan == 0 &&
                  info.summary_crc_verified == want.summary_crc_verified &&
                  info.attachment_count == want.attachment_count,
              "%s: the streamed scene differs from the indexed one", names[f]);
        walk_scene(scene, &info);
        EXPECT_OK(fourdgs_stream_next_block(s, block, &produced));
        CHECK(produced == 0, "%s: a block after the end", names[f]);
        fourdgs_stream_free(s);
        CHECK(tr.releases == 1, "%s: release called %d times", names[f], tr.releases);

        /* Without keep_payloads a stream's payloads have passed by. */
        if (want.audio_source_count > 0) {
            s = stream_of(&tr, &data, data.size, 0);
            scene = NULL;
            if (s) EXPECT_OK(fourdgs_stream_scene(s, &scene));
            fourdgs_audio_source_info a;
            memset(&a, 0, sizeof a);
            a.struct_size = sizeof a;
            EXPECT_OK(fourdgs_reader_audio_source(scene, 0, &a));
            size_t size = 0;
            EXPECT_FAIL(fourdgs_reader_read_payload(scene, a.payload, NULL, 0, &size),
                        FOURDGS_INVALID_ARGUMENT, "needs-random-access");
            fourdgs_stream_free(s);
        }
        fourdgs_reader_free(indexed);
        free(data.data);
    }

    /* A truncated file: the whole chunks before the cut, then truncated, and again truncated. */
    char* path = join(data_dir, "birth-deflate.4dgs");
    bytes data = read_file(path);
    free(path);
    if (data.size > 0) {
        trickle tr;
        fourdgs_stream* whole = stream_of(&tr, &data, data.size, 0);
        size_t whole_total = 0;
        fourdgs_status last = FOURDGS_OK;
        const size_t whole_blocks = whole ? stream_all(whole, block, &whole_total, &last) : 0;
        fourdgs_stream_free(whole);
        fourdgs_stream* cut = stream_of(&tr, &data, data.size - 30, 0);
        if (cut) {
            size_t total = 0;
            const size_t blocks = stream_all(cut, block, &total, &last);
            CHECK(last == FOURDGS_TRUNCATED && blocks == whole_blocks && total == whole_total,
                  "cut file: %s after %zu of %zu blocks", fourdgs_status_name(last), blocks,
                  whole_blocks);
            uint32_t produced = 0;
            EXPECT_FAIL(fourdgs_stream_next_block(cut, block, &produced), FOURDGS_TRUNCATED,
                        "truncated");
            fourdgs_stream_free(cut);
        }
        free(data.data);
    }
    fourdgs_frame_free(frame);
    fourdgs_block_free(block);
}

static void test_stream_writer(const char* tmp_dir) {
    fourdgs_writer_options o;
    fourdgs_writer_options_init(&o);
    o.duration_sec = 6.0;
    o.sh_degree = 1;
    o.threads = 1;
    fourdgs_writer* config = NULL;
    EXPECT_OK(fourdgs_writer_create(&o, &config));
    if (!config) return;
    fourdgs_key_value kv[1] = {{"application", 11, "c_test stream", 13}};
    EXPECT_OK(fourdgs_writer_add_metadata(config, "info", 4, kv, 1));

    float pos[N_GAUSSIANS * 3], scale[N_GAUSSIANS * 3], rot[N_GAUSSIANS * 4],
        color[N_GAUSSIANS * 4], mu[N_GAUSSIANS], sigma[N_GAUSSIANS], sh[N_GAUSSIANS * 9];
    double lo[N_GAUSSIANS], hi[N_GAUSSIANS];
    uint32_t ids[N_GAUSSIANS];
    fill_batch(0, N_GAUSSIANS, pos, scale, rot, color, mu, sigma, lo, hi, sh, ids);
    fourdgs_stream_declaration d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.gaussian_count = N_GAUSSIANS;
    for (int c = 0; c < 3; ++c) {
        d.aabb[c] = INFINITY;
        d.aabb[3 + c] = -INFINITY;
    }
    for (size_t i = 0; i < N_GAUSSIANS * 3; ++i) {
        const int c = (int)(i % 3);
        if (pos[i] < d.aabb[c]) d.aabb[c] = pos[i];
        if (pos[i] > d.aabb[3 + c]) d.aabb[3 + c] = pos[i];
    }
    const double windows[4] = {0.0, 3.0, 3.0, 6.0};
    d.windows = windows;
    d.window_count = 2;
    char* file = join(tmp_dir, "c_test_streamed.4dgs");

    fourdgs_stream_writer* w = NULL;
    EXPECT_FAIL(fourdgs_stream_writer_create_file(config, NULL, file, strlen(file), &w),
                FOURDGS_INVALID_ARGUMENT, "null-argument");
    EXPECT_FAIL(fourdgs_stream_writer_create_file(config, &d, "/nonexistent/dir/x.4dgs", 23, &w),
                FOURDGS_IO, "io-error");
    CHECK(w == NULL, "stream writer returned on failure");
    EXPECT_OK(fourdgs_stream_writer_create_file(config, &d, file, strlen(file), &w));
    fourdgs_writer_free(config); /* the stream writer keeps what it needs */
    if (!w) {
        free(file);
        return;
    }
    /* The first 70 gaussians in window 0, the rest as one chunk carrying window 1. */
    fourdgs_gaussian_batch b = batch_of(70, pos, scale, rot, color, mu, sigma, lo, NULL, sh, ids);
    EXPECT_FAIL(fourdgs_stream_writer_add_window(w, 0, &b), FOURDGS_INVALID_ARGUMENT,
                "invalid-argument");
    b.win_lo = NULL;
    b.sh = NULL;
    EXPECT_FAIL(fourdgs_stream_writer_add_window(w, 0, &b), FOURDGS_INVALID_ARGUMENT,
                "null-argument");
    b.sh = sh;
    fourdgs_write_report rep;
    memset(&rep, 0, sizeof rep);
    rep.struct_size = sizeof rep;
    EXPECT_FAIL(fourdgs_stream_writer_report(w, &rep), FOURDGS_NOT_FOUND, "no-such-element");
    EXPECT_OK(fourdgs_stream_writer_add_window(w, 0, &b));
    double lo2[N_GAUSSIANS], hi2[N_GAUSSIANS];
    for (size_t i = 0; i < N_GAUSSIANS; ++i) {
        lo2[i] = 3.0;
        hi2[i] = 6.0;
        mu[i] = 4.0f;
    }
    fourdgs_gaussian_batch c = batch_of(N_GAUSSIANS - 70, pos + 70 * 3, scale + 70 * 3,
                                        rot + 70 * 4, color + 70 * 4, mu + 70, sigma + 70, lo2,
                                        hi2, sh + 70 * 9, NULL);
    EXPECT_OK(fourdgs_stream_writer_add_chunk(w, &c));
    EXPECT_OK(fourdgs_stream_writer_finish(w));
    EXPECT_FAIL(fourdgs_stream_writer_finish(w), FOURDGS_INVALID_ARGUMENT, "writer-finished");
    EXPECT_OK(fourdgs_stream_writer_report(w, &rep));
    CHECK(rep.gaussian_count == N_GAUSSIANS && rep.chunk_count == 2 && rep.bytes_written > 0,
          "stream report: %llu gaussians in %llu chunks", (unsigned long long)rep.gaussian_count,
          (unsigned long long)rep.chunk_count);
    fourdgs_stream_writer_free(w);
    fourdgs_stream_writer_free(NULL);

    fourdgs_reader* r = NULL;
    EXPECT_OK(fourdgs_reader_open_file(file, strlen(file), NULL, &r));
    if (r) {
        fourdgs_scene_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        EXPECT_OK(fourdgs_reader_scene_info(r, &info));
        fourdgs_string v;
        EXPECT_OK(fourdgs_reader_metadata_find(r, "application", 11, &v));
        CHECK(info.gaussian_count == N_GAUSSIANS && info.window_count == 2 &&
                  info.sh_degree == 1 && string_is(v, "c_test stream"),
              "streamed file read back: %llu gaussians, %llu windows",
              (unsigned long long)info.gaussian_count, (unsigned long long)info.window_count);
        fourdgs_block* block = NULL;
        fourdgs_block_create(NULL, &block);
        EXPECT_OK(fourdgs_reader_read_all(r, block));
        check_block_columns(block, N_GAUSSIANS, "streamed file");
        fourdgs_block_free(block);
        fourdgs_reader_free(r);
    }

    /* A declaration the gaussians do not meet is refused at finish; a configured writer that
     * already holds gaussians is refused at creation. */
    fourdgs_writer* full = NULL;
    EXPECT_OK(fourdgs_writer_create(&o, &full));
    b.win_lo = lo;
    b.win_hi = hi;
    EXPECT_OK(fourdgs_writer_add_gaussians(full, &b));
    EXPECT_FAIL(fourdgs_stream_writer_create_file(full, &d, file, strlen(file), &w),
                FOURDGS_INVALID_ARGUMENT, "gaussians-not-streamed");
    fourdgs_writer_free(full);
    EXPECT_OK(fourdgs_writer_create(&o, &full));
    EXPECT_OK(fourdgs_stream_writer_create_file(full, &d, file, strlen(file), &w));
    b.win_lo = NULL;
    b.win_hi = NULL;
    EXPECT_OK(fourdgs_stream_writer_add_window(w, 0, &b));
    EXPECT_FAIL(fourdgs_stream_writer_finish(w), FOURDGS_INVALID_ARGUMENT, NULL);
    fourdgs_stream_writer_free(w);
    fourdgs_writer_free(full);
    free(file);
}

/* ------------------------------------------------------------------------------------------ */
/* The refusal corpus. */

static int has_suffix(const char* s, const char* suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The first refusal reading the whole file gives: open, then every chunk or state. */
static fourdgs_status first_refusal(const char* path, fourdgs_error* out) {
    fourdgs_reader* r = NULL;
    fourdgs_status s = fourdgs_reader_open_file(path, strlen(path), NULL, &r);
    if (s == FOURDGS_OK) {
        fourdgs_scene_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        fourdgs_reader_scene_info(r, &info);
        fourdgs_frame* frame = NULL;
        fourdgs_frame_create(NULL, &frame);
        for (size_t c = 0; c < info.chunk_count && s == FOURDGS_OK; ++c) {
            if (info.temporal_model == FOURDGS_MODEL_GAUSSIAN_BIRTH) {
                s = fourdgs_reader_evaluate_chunk(r, c, 0.0, NULL, frame);
            } else {
                fourdgs_chunk_info ci;
                memset(&ci, 0, sizeof ci);
                ci.struct_size = sizeof ci;
                fourdgs_reader_chunk_info(r, c, &ci);
                s = fourdgs_reader_evaluate(r, ci.t0, NULL, frame);
            }
        }
        fourdgs_frame_free(frame);
        fourdgs_reader_free(r);
    }
    if (s != FOURDGS_OK) *out = last_error();
    return s;
}

static int run_corpus(const char* dir) {
    DIR* d = opendir(dir);
    if (!d) {
        printf("refusal corpus %s does not exist: skipped\n", dir);
        return 0;
    }
    int files = 0;
    struct dirent* entry;
    while ((entry = readdir(d)) != NULL) {
        if (!has_suffix(entry->d_name, ".4dgs")) continue;
        ++files;
        char* path = join(dir, entry->d_name);
        size_t stem = strlen(path) - strlen(".4dgs");
        char* expected_path = (char*)malloc(stem + 32);
        memcpy(expected_path, path, stem);
        strcpy(expected_path + stem, ".expected.json");
        bytes ej = read_file(expected_path);
        char* json = (char*)calloc(ej.size + 1, 1);
        if (ej.size) memcpy(json, ej.data, ej.size);
        char refused[128], kind[64];
        json_string(json, "refused", refused, sizeof refused);
        json_string(json, "kind", kind, sizeof kind);
        CHECK(refused[0] != 0, "%s: no \"refused\" in %s", entry->d_name, expected_path);
        fourdgs_error e;
        memset(&e, 0, sizeof e);
        fourdgs_status s = first_refusal(path, &e);
        CHECK(s != FOURDGS_OK, "%s: read without a refusal (expected %s)", entry->d_name, refused);
        if (s != FOURDGS_OK) {
            if (kind[0])
                CHECK(strcmp(fourdgs_status_name(s), kind) == 0, "%s: status %s, expected %s",
                      entry->d_name, fourdgs_status_name(s), kind);
            else
                CHECK(s == FOURDGS_MALFORMED || s == FOURDGS_UNSUPPORTED || s == FOURDGS_TRUNCATED,
                      "%s: status %s", entry->d_name, fourdgs_status_name(s));
            CHECK(string_is(e.refusal, refused), "%s: refused \"%.*s\" (%.*s), expected \"%s\"",
                  entry->d_name, (int)e.refusal.size, e.refusal.data, (int)e.message.size,
                  e.message.data, refused);
        }
        free(json);
        free(ej.data);
        free(expected_path);
        free(path);
    }
    closedir(d);
    printf("refusal corpus: %d files\n", files);
    return files;
}

/* The file's tail and summary as the C ABI reports them (issue 30), against the file's own
 * bytes: the Footer's three fields read from its last 37 bytes, no trailing bytes, not scanned;
 * every Summary Offset, band range and skipped record lies inside the file, and one past each
 * list is FOURDGS_NOT_FOUND. */
static void check_summary_view(const char* path, const char* name) {
    bytes data = read_file(path);
    fourdgs_reader* r = NULL;
    EXPECT_OK(fourdgs_reader_open_file(path, strlen(path), NULL, &r));
    if (!r || data.size < 45) {
        fourdgs_reader_free(r);
        free(data.data);
        return;
    }
    fourdgs_scene_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    EXPECT_OK(fourdgs_reader_scene_info(r, &info));
    const unsigned char* footer = data.data + data.size - 37;
    uint64_t summary_start, summary_offset_start;
    uint32_t crc;
    memcpy(&summary_start, footer + 9, 8);
    memcpy(&summary_offset_start, footer + 17, 8);
    memcpy(&crc, footer + 25, 4);
    CHECK(info.has_footer && info.summary_start == summary_start &&
              info.summary_offset_start == summary_offset_start && info.summary_crc == crc,
          "%s: Footer %llu %llu %u, the file says %llu %llu %u", name,
          (unsigned long long)info.summary_start, (unsigned long long)info.summary_offset_start,
          info.summary_crc, (unsigned long long)summary_start,
          (unsigned long long)summary_offset_start, crc);
    CHECK(info.trailing_bytes == 0 && info.scan_cause.size == 0 &&
              info.read_by_scan == (summary_start == 0),
          "%s: trailing %llu, read by scan %u (cause %.*s)", name,
          (unsigned long long)info.trailing_bytes, info.read_by_scan, (int)info.scan_cause.size,
          info.scan_cause.data);
    uint32_t code;
    uint64_t offset, length;
    for (size_t k = 0; k <= info.summary_offset_count; ++k) {
        fourdgs_status s = fourdgs_reader_summary_offset(r, k, &code, &offset, &length);
        if (k == info.summary_offset_count)
            CHECK(s == FOURDGS_NOT_FOUND, "%s: summary offset past the end", name);
        else
            CHECK(s == FOURDGS_OK && offset >= summary_start && offset + length <= data.size,
                  "%s: summary offset %zu", name, k);
    }
    for (size_t k = 0; k <= info.skipped_record_count; ++k) {
        fourdgs_status s = fourdgs_reader_skipped_record(r, k, &code, &offset, &length);
        CHECK(k == info.skipped_record_count ? s == FOURDGS_NOT_FOUND
                                             : s == FOURDGS_OK && offset + length <= data.size,
              "%s: skipped record %zu", name, k);
    }
    for (size_t i = 0; i < info.chunk_count; ++i) {
        fourdgs_chunk_info c;
        memset(&c, 0, sizeof c);
        c.struct_size = sizeof c;
        EXPECT_OK(fourdgs_reader_chunk_info(r, i, &c));
        for (size_t k = 0; k <= c.band_count; ++k) {
            fourdgs_status s = fourdgs_reader_chunk_band(r, i, k, &code, &offset, &length);
            CHECK(k == c.band_count ? s == FOURDGS_NOT_FOUND
                                    : s == FOURDGS_OK && code >= 1 && code <= 3 &&
                                          offset >= c.offset + c.size &&
                                          offset + length <= data.size,
                  "%s: chunk %zu band range %zu", name, i, k);
        }
        CHECK(c.has_keyframe_fields == (info.temporal_model == FOURDGS_MODEL_KEYFRAME_DELTA),
              "%s: chunk %zu keyframe fields", name, i);
    }
    fourdgs_reader_free(r);
    free(data.data);
}

/* The valid corpus: every file opens, every chunk (or state) evaluates, the validator runs. */
static int run_valid_corpus(const char* dir) {
    DIR* d = opendir(dir);
    if (!d) {
        printf("valid corpus %s does not exist: skipped\n", dir);
        return 0;
    }
    int files = 0;
    struct dirent* entry;
    while ((entry = readdir(d)) != NULL) {
        if (!has_suffix(entry->d_name, ".4dgs")) continue;
        ++files;
        char* path = join(dir, entry->d_name);
        fourdgs_error e;
        memset(&e, 0, sizeof e);
        fourdgs_status s = first_refusal(path, &e);
        CHECK(s == FOURDGS_OK, "%s: refused %s %.*s: %.*s", entry->d_name, fourdgs_status_name(s),
              (int)e.refusal.size, e.refusal.data, (int)e.message.size, e.message.data);
        if (s == FOURDGS_OK) check_summary_view(path, entry->d_name);
        fourdgs_validation* v = NULL;
        s = fourdgs_validate_file(path, strlen(path), NULL, &v);
        if (s == FOURDGS_OK) {
            /* Valid for a reader is not clean for the validator: a reserved opcode is skipped
             * by readers (§4.2) yet is an error for the writer that emitted it. So only the
             * findings' shape is checked here. */
            fourdgs_validation_summary sum;
            memset(&sum, 0, sizeof sum);
            sum.struct_size = sizeof sum;
            EXPECT_OK(fourdgs_validation_summary_get(v, &sum));
            CHECK(sum.file_size > 0 && !sum.truncated, "%s: validator saw %llu bytes%s",
                  entry->d_name, (unsigned long long)sum.file_size,
                  sum.truncated ? ", truncated" : "");
            for (size_t i = 0; i < sum.finding_count; ++i) {
                fourdgs_finding f;
                memset(&f, 0, sizeof f);
                f.struct_size = sizeof f;
                EXPECT_OK(fourdgs_validation_finding(v, i, &f));
                CHECK(is_kebab(f.rule), "%s: finding rule", entry->d_name);
            }
            fourdgs_validation_free(v);
        } else {
            CHECK(s == FOURDGS_UNSUPPORTED, "%s: validate %s", entry->d_name, fourdgs_status_name(s));
        }
        free(path);
    }
    closedir(d);
    printf("valid corpus: %d files\n", files);
    return files;
}

/* ------------------------------------------------------------------------------------------ */

int main(int argc, char** argv) {
    const char* data_dir = NULL;
    const char* tmp_dir = ".";
    const char* corpus_dir = NULL;
    const char* valid_dir = NULL;
    int quick = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            data_dir = argv[++i];
        else if (strcmp(argv[i], "--tmp") == 0 && i + 1 < argc)
            tmp_dir = argv[++i];
        else if (strcmp(argv[i], "--corpus") == 0 && i + 1 < argc)
            corpus_dir = argv[++i];
        else if (strcmp(argv[i], "--valid") == 0 && i + 1 < argc)
            valid_dir = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else {
            fprintf(stderr, "usage: %s [--data DIR] [--tmp DIR] [--corpus DIR] [--valid DIR] [--quick]\n", argv[0]);
            return 2;
        }
    }
    static const char* fixtures[] = {"birth-deflate", "birth-extras", "birth-zstd-sh3-balanced",
                                     "birth-never-fades-no-index", "keyframe-delta-churn"};
    if (data_dir) {
        test_arguments(data_dir);
        for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; ++i)
            test_fixture(data_dir, fixtures[i]);
        test_known_mutations(data_dir);
        test_opened_once(data_dir, "birth-deflate");
        test_opened_once(data_dir, "keyframe-delta-churn");
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
        printf("not run: one reader on four threads (a WebAssembly build without threads)\n");
#else
        test_threads(data_dir);
#endif
        test_writer(tmp_dir);
        test_blocks(data_dir);
        test_stream_scene(data_dir);
        test_stream_writer(tmp_dir);
        for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; ++i)
            test_damage(data_dir, fixtures[i], quick);
    }
    if (corpus_dir) run_corpus(corpus_dir);
    if (valid_dir) run_valid_corpus(valid_dir);
    printf("%d checks, %d failed\n", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}
