/* fourdgs.h — the C ABI of the fourdgs SDK (.4dgs 4D gaussian-splat files).
 *
 * C99; also compiles as C++. A thin layer over the C++ library (include/fourdgs/): every call
 * maps onto one C++ call, and every refusal is the C++ layer's own (same kind, same identifier,
 * same message, same byte offset).
 *
 * Rules (docs/c-api.md explains them with examples):
 *
 *   Status    Every function that can fail returns fourdgs_status. FOURDGS_OK is 0; the other
 *             values are fixed forever (1..6 are the C++ ErrorKind numbers).
 *   Errors    On failure the calling thread's last error holds the status, the kebab-case
 *             refusal identifier (e.g. "magic-mismatch"), a message naming the value and the
 *             byte offset where known: fourdgs_last_error(). Successful calls leave it alone.
 *   Outputs   Out-parameters are written only on FOURDGS_OK; on failure they are untouched.
 *   NULL      Every pointer argument may be NULL: a required one gives
 *             FOURDGS_INVALID_ARGUMENT ("null-argument"), never a crash. *_free(NULL) is a no-op.
 *   Strings   Strings go in as pointer + length (the pointer may be NULL when the length is 0)
 *             and come out as fourdgs_string {data, size}. Strings that come out are also
 *             NUL-terminated, but may contain NUL bytes; trust `size`.
 *   Borrowed  A pointer the library returns (a fourdgs_string, a column) is borrowed: the
 *             function's comment says until when it stays valid. Never free it.
 *   Buffers   Every fill has a size query: pass a NULL buffer to learn the size; a non-NULL
 *             buffer smaller than that gives FOURDGS_BUFFER_TOO_SMALL and writes nothing.
 *   Structs   Option and info structs start with `struct_size`; set it to sizeof the struct you
 *             were compiled with (the *_init macros do). The library reads and writes only
 *             that many bytes (fields past them read as their defaults), so a newer library
 *             works with an older caller.
 *   ABI       Within one FOURDGS_C_ABI_VERSION a newer library only adds functions, appends
 *             fields to size-tagged structs and adds enumerators at the end; anything else
 *             bumps the ABI version and the soname (docs/c-api.md, "Compatibility"). The
 *             library's ABI is checked against capi/abi/libfourdgs-c.abi on every build.
 *   Threads   Handles are not internally locked. A reader may be used from several threads at
 *             once for the calls marked "thread-safe" (each thread with its own fourdgs_frame);
 *             everything else needs one thread at a time per handle. The last error is
 *             per thread.
 *   Unwinding Nothing unwinds across this boundary: every entry point catches everything and
 *             reports FOURDGS_OUT_OF_MEMORY or FOURDGS_INTERNAL.
 */
#ifndef FOURDGS_H
#define FOURDGS_H

#include <stddef.h>
#include <stdint.h>

/* The one export macro. Define FOURDGS_C_STATIC when linking the static library on Windows. */
#if defined(_WIN32) || defined(__CYGWIN__)
#  if defined(FOURDGS_C_BUILDING)
#    define FOURDGS_CAPI __declspec(dllexport)
#  elif defined(FOURDGS_C_STATIC)
#    define FOURDGS_CAPI
#  else
#    define FOURDGS_CAPI __declspec(dllimport)
#  endif
#elif defined(__GNUC__) || defined(__clang__)
#  define FOURDGS_CAPI __attribute__((visibility("default")))
#else
#  define FOURDGS_CAPI
#endif

/* The library version (the same numbers as fourdgs/version.hpp) and the C ABI's version, which
 * changes only when a binary built against an older fourdgs.h could break. */
#define FOURDGS_C_VERSION_MAJOR 0
#define FOURDGS_C_VERSION_MINOR 1
#define FOURDGS_C_VERSION_PATCH 0
#define FOURDGS_C_VERSION_STRING "0.1.0"
#define FOURDGS_C_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Status and errors. */

typedef enum fourdgs_status {
    FOURDGS_OK = 0,
    FOURDGS_MALFORMED = 1,        /* the file breaks a rule of the format */
    FOURDGS_TRUNCATED = 2,        /* the bytes end before a structure does */
    FOURDGS_UNSUPPORTED = 3,      /* legal, but not implemented by this build */
    FOURDGS_IO = 4,               /* the byte source or sink failed */
    FOURDGS_INVALID_ARGUMENT = 5, /* the caller asked for something impossible */
    FOURDGS_LIMIT = 6,            /* a configured resource limit would be exceeded */
    FOURDGS_OUT_OF_MEMORY = 7,    /* an allocation failed */
    FOURDGS_INTERNAL = 8,         /* a bug in the library; please report it */
    FOURDGS_BUFFER_TOO_SMALL = 9, /* a caller buffer is smaller than the size query says */
    FOURDGS_NOT_FOUND = 10        /* no such element (index out of range, no camera, ...) */
} fourdgs_status;

/* A string coming out of the library: borrowed, `size` bytes (plus a terminating NUL). */
typedef struct fourdgs_string {
    const char* data;
    size_t size;
} fourdgs_string;

/* The offset value meaning "no byte offset known". */
#define FOURDGS_NO_OFFSET UINT64_MAX

typedef struct fourdgs_error {
    size_t struct_size;
    fourdgs_status status;
    fourdgs_string refusal; /* kebab-case identifier, e.g. "truncated" */
    fourdgs_string message; /* names the offending value */
    uint64_t offset;        /* byte offset in the file, or FOURDGS_NO_OFFSET */
} fourdgs_error;

/* "0.1.0": static storage. */
FOURDGS_CAPI const char* fourdgs_version(void);
/* FOURDGS_C_ABI_VERSION of the library actually loaded. */
FOURDGS_CAPI uint32_t fourdgs_abi_version(void);
/* The name of a status ("ok", "malformed", ..., "buffer-too-small"): static storage. */
FOURDGS_CAPI const char* fourdgs_status_name(fourdgs_status status);

/* The calling thread's last failure. Its strings stay valid until the next failing call (or
 * fourdgs_clear_error) on this thread. Before any failure: status FOURDGS_OK, empty strings. */
FOURDGS_CAPI fourdgs_status fourdgs_last_error(fourdgs_error* out);
FOURDGS_CAPI fourdgs_status fourdgs_last_status(void);
FOURDGS_CAPI void fourdgs_clear_error(void);

/* ------------------------------------------------------------------------------------------ */
/* Allocator hooks (optional). The handles, and the buffers the library hands out through them
 * (writer memory output), are allocated through the hooks given at creation; the C++ library's
 * internal containers use the global allocator. `alloc` returns NULL on failure. Both functions
 * may be called from any thread that uses the handle. The struct is copied at creation. */
typedef struct fourdgs_allocator {
    void* user;
    void* (*alloc)(void* user, size_t size, size_t alignment);
    void (*free)(void* user, void* pointer, size_t size);
} fourdgs_allocator;

/* ------------------------------------------------------------------------------------------ */
/* Opening. */

typedef struct fourdgs_reader fourdgs_reader;

typedef struct fourdgs_open_options {
    size_t struct_size;
    uint32_t max_sh_degree;       /* decode SH bands up to this degree (default 3) */
    uint32_t verify_summary_crc;  /* default 1 */
    uint32_t copy_memory;         /* open_memory: copy the bytes instead of borrowing (default 0) */
    uint32_t decode_threads;      /* threads fourdgs_reader_evaluate decodes on; 0 = all cores
                                     (default 1) */
    uint64_t max_record_bytes;    /* one record's content (default 2^32) */
    uint64_t max_summary_bytes;   /* default 2^30 */
    uint32_t max_gaussians_per_chunk; /* default 2^24 */
    const fourdgs_allocator* allocator; /* NULL = malloc/free */
    uint32_t keep_payloads;       /* streams: keep attachment and audio payloads in memory as
                                     they pass, for fourdgs_reader_read_payload on
                                     fourdgs_stream_scene (default 0) */
    /* URLs (fourdgs_reader_open_url, fourdgs_stream_open_url, fourdgs_validate_url): extra
     * request headers ("Name: value", http_header_count of them, sent with every request: a
     * bearer token, a CDN key), a PEM file of certificate authorities to trust instead of the
     * system's (NULL = the system's), per-attempt timeouts, attempts per request (retries
     * included, >= 1) and whether to verify the server's certificate (default 1). The strings
     * are copied at open. A certificate that does not verify is FOURDGS_IO
     * "tls-verification-failed". */
    const char* const* http_headers;
    size_t http_header_count;
    const char* http_ca_bundle;
    uint32_t http_connect_timeout_ms; /* default 10000 */
    uint32_t http_transfer_timeout_ms; /* default 60000 */
    uint32_t http_max_attempts;       /* default 4 */
    uint32_t http_verify_tls;         /* default 1 */
} fourdgs_open_options;

/* Fills the defaults and struct_size. Every options struct has the same three forms:
 *   fourdgs_X_init_sized(s, struct_size)  writes the defaults into the first
 *       min(struct_size, sizeof) bytes of *s (the library's sizeof) and sets s->struct_size to
 *       that; nothing past struct_size bytes is written, and a struct_size below
 *       sizeof(size_t) writes nothing. For bindings that allocate the struct themselves.
 *   fourdgs_X_init(s)  the macro new callers use: fourdgs_X_init_sized(s, sizeof *(s)), s a
 *       pointer to the struct (not a bare NULL).
 *   (fourdgs_X_init)(s)  the exported function of ABI 1, kept for binaries built against it:
 *       it writes the struct as ABI 1 had it, never the fields appended since. */
FOURDGS_CAPI void fourdgs_open_options_init_sized(fourdgs_open_options* options,
                                                  size_t struct_size);
FOURDGS_CAPI void(fourdgs_open_options_init)(fourdgs_open_options* options);
#define fourdgs_open_options_init(options) \
    fourdgs_open_options_init_sized((options), sizeof *(options))

/* Range reads through the caller (HTTP ranges, an asset pack, a VFS).
 *   size     total size in bytes of the data; required.
 *   read_at  writes up to `length` bytes at `offset` into `buffer`; returns the count written
 *            (fewer only at the end of the data) or a negative value on failure.
 *   release  called exactly once when the library is done with `user`: at fourdgs_reader_free,
 *            at the end of fourdgs_validate_callbacks, or when the open fails; may be NULL.
 * read_at may be called from several threads at once when the reader is used from several
 * threads. The struct is copied. */
typedef struct fourdgs_read_callbacks {
    void* user;
    uint64_t (*size)(void* user);
    int64_t (*read_at)(void* user, uint64_t offset, uint64_t length, void* buffer);
    void (*release)(void* user);
} fourdgs_read_callbacks;

/* Opens a file for random access: the tail, the summary and the front matter are read; the
 * chunks are fetched on demand. The front-end follows the Header's temporal_model
 * (gaussian-birth or keyframe-delta). `options` may be NULL (defaults). To read front to back
 * instead (a pipe, a download, a file without an index, a truncated file), open a
 * fourdgs_stream. */
FOURDGS_CAPI fourdgs_status fourdgs_reader_open_file(const char* path, size_t path_size,
                                                     const fourdgs_open_options* options,
                                                     fourdgs_reader** out);
/* `data` is borrowed until fourdgs_reader_free, unless options->copy_memory. */
FOURDGS_CAPI fourdgs_status fourdgs_reader_open_memory(const void* data, size_t size,
                                                       const fourdgs_open_options* options,
                                                       fourdgs_reader** out);
FOURDGS_CAPI fourdgs_status fourdgs_reader_open_callbacks(const fourdgs_read_callbacks* callbacks,
                                                          const fourdgs_open_options* options,
                                                          fourdgs_reader** out);
/* A file on a web server (an http:// or https:// URL), read by HTTP range requests: opening
 * costs one round trip (the file's head and tail at once), each fourdgs_reader_evaluate one more
 * (the chunks an instant needs, fetched together), cached in a bounded memory cache (64 MiB).
 * The file's first ETag (or Last-Modified) is pinned: a file that changes on the server while it
 * is read fails with FOURDGS_IO "source-changed", never with a mix of two versions. Other
 * failures are FOURDGS_IO with "http-status" (e.g. 404), "http-timeout", "http-connection",
 * "http-short-body", "http-bad-response", "range-not-supported", "unknown-size"; the message
 * names the URL, the byte range and the HTTP status. FOURDGS_UNSUPPORTED ("http-not-built") in a
 * build without libcurl. docs/remote.md says how to serve files. */
FOURDGS_CAPI fourdgs_status fourdgs_reader_open_url(const char* url, size_t url_size,
                                                    const fourdgs_open_options* options,
                                                    fourdgs_reader** out);
FOURDGS_CAPI void fourdgs_reader_free(fourdgs_reader* reader);

/* ------------------------------------------------------------------------------------------ */
/* Scene information. Every string and pointer below is borrowed from the reader and stays valid
 * until fourdgs_reader_free. All of these are thread-safe. */

typedef enum fourdgs_temporal_model {
    FOURDGS_MODEL_GAUSSIAN_BIRTH = 0,
    FOURDGS_MODEL_KEYFRAME_DELTA = 1
} fourdgs_temporal_model;

typedef struct fourdgs_scene_info {
    size_t struct_size;
    /* Header (§5.1) */
    fourdgs_string profile, library, temporal_model_name;
    uint32_t temporal_model; /* fourdgs_temporal_model */
    double duration_sec;
    uint64_t gaussian_count;
    double cutoff;
    double aabb[6]; /* min xyz, max xyz */
    uint32_t sh_degree;
    uint32_t header_flags;
    /* Quantization (§5.3) */
    fourdgs_string quantization_scheme;
    double pos_origin[3];
    double step_pos, step_scale_log, step_rot, step_rgb, step_alpha, step_motion, step_time,
        step_sigma_log;
    uint32_t step_sh;
    uint32_t sh_depth_count; /* 0 = no per-band depths declared */
    uint8_t sh_depths[3];
    /* Counts */
    uint64_t header_attribute_count, quantization_bound_count, window_count, chunk_count,
        metadata_count, attachment_count, audio_source_count, coordinate_frame_count,
        sensor_count, rig_trajectory_count, geodetic_anchor_count, object_count,
        object_track_count, skipped_record_count;
    uint32_t has_camera, has_object_table, object_embedding_dim;
    uint32_t index_built_by_scan;   /* the file had no index; open() walked it */
    uint32_t summary_crc_verified;
    /* The file's tail, summary and how it was read (issue 30: every field of the canonical
     * output, docs/conformance.md). trailing_bytes: bytes after the trailing magic. read_by_scan:
     * the indexed reader walked the file (no index, or a tail it could not use); scan_cause: the
     * refusal id the tail gave (empty when there was none, or on a stream). */
    uint64_t trailing_bytes;
    uint32_t read_by_scan;
    fourdgs_string scan_cause;
    uint32_t window_table_present;
    uint32_t has_footer; /* the Footer's fields below are 0 without one */
    uint64_t summary_start, summary_offset_start;
    uint32_t summary_crc;
    uint64_t summary_offset_count;
    uint32_t has_statistics; /* the Statistics record's fields below are 0 without one */
    uint64_t statistics_gaussian_count, statistics_chunk_count;
    double statistics_duration_sec, statistics_aabb[6];
    /* The Quantization record's per-band SH depths were malformed and read as none (M024). */
    uint32_t sh_depths_malformed;
} fourdgs_scene_info;

FOURDGS_CAPI fourdgs_status fourdgs_reader_scene_info(const fourdgs_reader* reader,
                                                      fourdgs_scene_info* out);

/* Header attributes (§5.1) and Quantization bounds (§5.3), by position. */
FOURDGS_CAPI fourdgs_status fourdgs_reader_header_attribute(const fourdgs_reader* reader,
                                                            size_t index, fourdgs_string* key,
                                                            fourdgs_string* value);
FOURDGS_CAPI fourdgs_status fourdgs_reader_quantization_bound(const fourdgs_reader* reader,
                                                              size_t index, fourdgs_string* key,
                                                              fourdgs_string* value);
/* The effective Window Table (never empty, §5.4). */
FOURDGS_CAPI fourdgs_status fourdgs_reader_window(const fourdgs_reader* reader, size_t index,
                                                  double* lo, double* hi);

/* Metadata records (§5.11): record `index` has a name and `entry_count` entries. */
FOURDGS_CAPI fourdgs_status fourdgs_reader_metadata(const fourdgs_reader* reader, size_t index,
                                                    fourdgs_string* name, size_t* entry_count);
FOURDGS_CAPI fourdgs_status fourdgs_reader_metadata_entry(const fourdgs_reader* reader,
                                                          size_t index, size_t entry,
                                                          fourdgs_string* key,
                                                          fourdgs_string* value);
/* Looks a key up across every Metadata record (first match in file order). */
FOURDGS_CAPI fourdgs_status fourdgs_reader_metadata_find(const fourdgs_reader* reader,
                                                         const char* key, size_t key_size,
                                                         fourdgs_string* value);

/* A payload the file holds by range (attachment data, audio data). */
typedef struct fourdgs_payload {
    uint64_t offset; /* absolute offset of the first payload byte */
    uint64_t size;
} fourdgs_payload;

typedef struct fourdgs_attachment_info {
    size_t struct_size;
    fourdgs_string name, media_type;
    fourdgs_payload payload;
} fourdgs_attachment_info;

FOURDGS_CAPI fourdgs_status fourdgs_reader_attachment(const fourdgs_reader* reader, size_t index,
                                                      fourdgs_attachment_info* out);
/* Reads a payload range (fourdgs_attachment_info.payload, fourdgs_audio_source_info.payload)
 * from the file. buffer NULL: *size = payload.size. Otherwise capacity >= payload.size.
 * A stream's scene (fourdgs_stream_scene) serves the payloads the stream kept
 * (fourdgs_open_options.keep_payloads); without them it refuses ("needs-random-access"). A range
 * that does not lie inside the file is FOURDGS_INVALID_ARGUMENT, value-out-of-range. */
FOURDGS_CAPI fourdgs_status fourdgs_reader_read_payload(const fourdgs_reader* reader,
                                                        fourdgs_payload payload, void* buffer,
                                                        size_t capacity, size_t* size);

/* Camera (§5.10). FOURDGS_NOT_FOUND when the file has none. */
typedef struct fourdgs_camera_info {
    size_t struct_size;
    double fov_y_deg;
    double position[3], target[3];
    uint64_t keyframe_count;
    fourdgs_string interpolation; /* "linear" or "spline" */
    uint32_t loop;
} fourdgs_camera_info;

typedef struct fourdgs_camera_keyframe {
    double time;
    double position[3], target[3];
} fourdgs_camera_keyframe;

FOURDGS_CAPI fourdgs_status fourdgs_reader_camera(const fourdgs_reader* reader,
                                                  fourdgs_camera_info* out);
FOURDGS_CAPI fourdgs_status fourdgs_reader_camera_keyframe(const fourdgs_reader* reader,
                                                           size_t index,
                                                           fourdgs_camera_keyframe* out);
/* The camera's view at scene time t (the keyed path, or the default view). */
FOURDGS_CAPI fourdgs_status fourdgs_reader_camera_at(const fourdgs_reader* reader, double t,
                                                     double position[3], double target[3],
                                                     double* fov_y_deg);

/* Audio sources (§5.16; a legacy Audio record is source 0 with legacy = 1). */
typedef struct fourdgs_audio_source_info {
    size_t struct_size;
    uint32_t source_id;
    uint32_t legacy;
    fourdgs_string name, codec, channel_layout, interpolation;
    double start_sec, duration_sec, gain;
    uint32_t flags; /* bit 0 spatial, bit 1 loop */
    double position[3], rotation[4];
    uint64_t keyframe_count;
    fourdgs_payload payload;
} fourdgs_audio_source_info;

typedef struct fourdgs_audio_keyframe {
    double time;
    double position[3], rotation[4];
} fourdgs_audio_keyframe;

/* §7.1/§7.2: the state of one source at scene time t. */
typedef struct fourdgs_audio_state {
    uint32_t active;
    double local_time, gain;
    double position[3], rotation[4];
} fourdgs_audio_state;

FOURDGS_CAPI fourdgs_status fourdgs_reader_audio_source(const fourdgs_reader* reader,
                                                        size_t index,
                                                        fourdgs_audio_source_info* out);
FOURDGS_CAPI fourdgs_status fourdgs_reader_audio_keyframe(const fourdgs_reader* reader,
                                                          size_t source, size_t index,
                                                          fourdgs_audio_keyframe* out);
FOURDGS_CAPI fourdgs_status fourdgs_reader_audio_state_at(const fourdgs_reader* reader,
                                                          size_t source, double t,
                                                          fourdgs_audio_state* out);

/* Provenance (§5.15.2–§5.15.5). Enumerated fields carry the file's numbers. */
typedef struct fourdgs_coordinate_frame {
    size_t struct_size;
    fourdgs_string name;
    uint32_t handedness;   /* 0 unspecified, 1 right, 2 left */
    uint32_t up_axis;      /* 0 +x, 1 +y, 2 +z, 3 -x, 4 -y, 5 -z */
    uint32_t forward_axis;
    uint32_t length_unit;  /* 0 unspecified, 1 metre, 2 cm, 3 mm, 4 km, 5 foot, 6 inch */
    double metres_per_unit;
} fourdgs_coordinate_frame;

typedef struct fourdgs_sensor {
    size_t struct_size;
    fourdgs_string name, modality, rig_name;
    uint32_t camera_model; /* 0 none, 1 pinhole, 2 brown-conrady, 3 kannala-brandt */
    uint32_t width_px, height_px;
    double fx, fy, cx, cy;
    uint64_t distortion_count;
    const double* distortion; /* distortion_count coefficients, borrowed */
    double rotation[4], translation[3];
    uint32_t pose_reference; /* 0 scene, 1 rig */
} fourdgs_sensor;

/* One pose sample of a Rig Trajectory or an Object Track. */
typedef struct fourdgs_pose_sample {
    double time;
    double rotation[4]; /* xyzw */
    double translation[3];
} fourdgs_pose_sample;

typedef struct fourdgs_geodetic_anchor {
    size_t struct_size;
    fourdgs_string frame_name;
    double latitude_deg, longitude_deg, altitude_m, heading_deg;
} fourdgs_geodetic_anchor;

FOURDGS_CAPI fourdgs_status fourdgs_reader_coordinate_frame(const fourdgs_reader* reader,
                                                            size_t index,
                                                            fourdgs_coordinate_frame* out);
FOURDGS_CAPI fourdgs_status fourdgs_reader_sensor(const fourdgs_reader* reader, size_t index,
                                                  fourdgs_sensor* out);
/* interpolation: 0 linear, 1 step. */
FOURDGS_CAPI fourdgs_status fourdgs_reader_rig_trajectory(const fourdgs_reader* reader,
                                                          size_t index, fourdgs_string* name,
                                                          uint32_t* interpolation,
                                                          size_t* sample_count);
FOURDGS_CAPI fourdgs_status fourdgs_reader_rig_trajectory_sample(const fourdgs_reader* reader,
                                                                 size_t index, size_t sample,
                                                                 fourdgs_pose_sample* out);
FOURDGS_CAPI fourdgs_status fourdgs_reader_geodetic_anchor(const fourdgs_reader* reader,
                                                           size_t index,
                                                           fourdgs_geodetic_anchor* out);

/* Objects (§5.15.6, §5.15.7). */
typedef struct fourdgs_object_info {
    size_t struct_size;
    uint32_t object_id;
    fourdgs_string label;
    float anchor[3];
    uint32_t has_dynamics;
    float velocity[3], angular_velocity[3], acceleration[3];
    uint32_t has_embedding;
    const float* embedding; /* object_embedding_dim floats when has_embedding, borrowed */
} fourdgs_object_info;

FOURDGS_CAPI fourdgs_status fourdgs_reader_object(const fourdgs_reader* reader, size_t index,
                                                  fourdgs_object_info* out);
FOURDGS_CAPI fourdgs_status fourdgs_reader_object_track(const fourdgs_reader* reader,
                                                        size_t index, uint32_t* object_id,
                                                        uint32_t* interpolation,
                                                        size_t* sample_count);
FOURDGS_CAPI fourdgs_status fourdgs_reader_object_track_sample(const fourdgs_reader* reader,
                                                               size_t index, size_t sample,
                                                               fourdgs_pose_sample* out);

/* ------------------------------------------------------------------------------------------ */
/* The state at time t. A fourdgs_frame holds one evaluated instant (the visible gaussians,
 * packed) and the decode buffers that produced it; reusing it makes playback allocation-free.
 * Several threads may evaluate the same reader at once, each into its own frame. */

typedef struct fourdgs_frame fourdgs_frame;

typedef struct fourdgs_evaluate_options {
    size_t struct_size;
    uint32_t max_sh_degree;       /* SH kept in the frame, 0..3 (default 3) */
    uint32_t apply_object_tracks; /* compose the scene's Object Tracks (§3, default 1) */
    uint32_t append;              /* append to the frame instead of replacing it (default 0) */
} fourdgs_evaluate_options;

/* Fills the defaults and struct_size (the three forms of fourdgs_open_options_init). */
FOURDGS_CAPI void fourdgs_evaluate_options_init_sized(fourdgs_evaluate_options* options,
                                                      size_t struct_size);
FOURDGS_CAPI void(fourdgs_evaluate_options_init)(fourdgs_evaluate_options* options);
#define fourdgs_evaluate_options_init(options) \
    fourdgs_evaluate_options_init_sized((options), sizeof *(options))

/* `allocator` may be NULL (malloc/free); copied. */
FOURDGS_CAPI fourdgs_status fourdgs_frame_create(const fourdgs_allocator* allocator,
                                                 fourdgs_frame** out);
FOURDGS_CAPI void fourdgs_frame_free(fourdgs_frame* frame);

/* Fetches and decodes what instant t needs (the chunks covering t; for keyframe-delta the
 * chain to current(t)), then evaluates §3 into `frame`. Thread-safe for distinct frames. */
FOURDGS_CAPI fourdgs_status fourdgs_reader_evaluate(const fourdgs_reader* reader, double t,
                                                    const fourdgs_evaluate_options* options,
                                                    fourdgs_frame* frame);

/* Chunk-level work, for callers that spread chunks over their own threads (gaussian-birth
 * files; a keyframe-delta state is a chain, use fourdgs_reader_evaluate). Thread-safe. */
typedef struct fourdgs_chunk_info {
    size_t struct_size;
    double t0, t1;
    uint64_t offset, size;   /* the chunk record */
    uint64_t gaussian_count;
    uint64_t fetch_bytes;    /* what decoding it fetches (record + wanted SH bands); for a
                                keyframe-delta state chunk, its whole chain's */
    uint32_t kind;           /* 0 keyframe/Chunk, 1 Delta Chunk */
    /* The entry's six §5.8 keyframe-delta fields (has_keyframe_fields 0: the entry has none),
     * and how many SH band ranges it names (fourdgs_reader_chunk_band). */
    uint32_t has_keyframe_fields, delta_mode, depth;
    uint64_t reference_offset, keyframe_offset, live_count;
    uint64_t band_count;
} fourdgs_chunk_info;

FOURDGS_CAPI fourdgs_status fourdgs_reader_chunk_info(const fourdgs_reader* reader, size_t index,
                                                      fourdgs_chunk_info* out);
/* The summary's ranges as the file states them: index entry `index`'s SH band range `k` (its
 * band 1..3 and the SH Band Stream record's offset and length), Summary Offset record `k`
 * (summary_offset_count of fourdgs_scene_info: the group's opcode, start and length), and
 * skipped record `k` (skipped_record_count: an unknown record's opcode, offset and whole
 * length). Index out of range: FOURDGS_NOT_FOUND. */
FOURDGS_CAPI fourdgs_status fourdgs_reader_chunk_band(const fourdgs_reader* reader, size_t index,
                                                      size_t k, uint32_t* band, uint64_t* offset,
                                                      uint64_t* length);
FOURDGS_CAPI fourdgs_status fourdgs_reader_summary_offset(const fourdgs_reader* reader, size_t k,
                                                          uint32_t* opcode, uint64_t* start,
                                                          uint64_t* length);
FOURDGS_CAPI fourdgs_status fourdgs_reader_skipped_record(const fourdgs_reader* reader, size_t k,
                                                          uint32_t* opcode, uint64_t* offset,
                                                          uint64_t* length);
/* Gaussian-birth: the chunks whose [t0, t1) holds t, in index order (§8; none is not an error).
 * Keyframe-delta: the chain the state at t is composed from (its keyframe first, then each
 * Delta Chunk to the state chunk holding t, §11.8), and t outside [0, duration) fails with
 * time-out-of-range. A non-finite t is non-finite-input. indices NULL: *count = how many. */
FOURDGS_CAPI fourdgs_status fourdgs_reader_chunks_for(const fourdgs_reader* reader, double t,
                                                      size_t* indices, size_t capacity,
                                                      size_t* count);
/* The byte ranges of the file that fourdgs_reader_evaluate and fourdgs_reader_state_at at t read
 * (the records and wanted SH bands of the chunks fourdgs_reader_chunks_for names; their lengths
 * sum to those chunks' fetch_bytes): a caller whose bytes arrive asynchronously (a browser's
 * fetch(), an asset streamer) fetches them first, then serves the read callbacks from memory.
 * Random-access readers only (a stream's scene: FOURDGS_INVALID_ARGUMENT "needs-random-access");
 * t as fourdgs_reader_chunks_for. ranges NULL: *count = how many; else capacity >= that count. */
typedef struct fourdgs_byte_range {
    uint64_t offset;
    uint64_t length;
} fourdgs_byte_range;

FOURDGS_CAPI fourdgs_status fourdgs_reader_fetch_ranges(const fourdgs_reader* reader, double t,
                                                        fourdgs_byte_range* ranges,
                                                        size_t capacity, size_t* count);

/* Decodes chunk `index` and evaluates it at t into `frame` (options->append to gather several
 * chunks in one frame). Thread-safe for distinct frames. */
FOURDGS_CAPI fourdgs_status fourdgs_reader_evaluate_chunk(const fourdgs_reader* reader,
                                                          size_t index, double t,
                                                          const fourdgs_evaluate_options* options,
                                                          fourdgs_frame* frame);

/* The frame's columns, borrowed until the next evaluate into this frame or fourdgs_frame_free.
 * Per visible gaussian: center 3, scale 3 (linear), rotation 4 (xyzw), color 4 (r g b and
 * opacity at t), object_id 1, source 1 (index in its decoded chunk or state), and
 * sh_per_gaussian SH bytes (red's coefficients of bands 1..sh_degree, then green's, blue's;
 * byte b means the coefficient -4 + b * 8 / 255, §6.5). */
typedef struct fourdgs_frame_columns {
    size_t struct_size;
    double time;
    size_t count;
    const float* center;
    const float* scale;
    const float* rotation;
    const float* color;
    const uint32_t* object_id;
    const uint32_t* source;
    uint32_t sh_degree;
    size_t sh_per_gaussian;
    const uint8_t* sh;
    /* Each row's flags byte (bit 0: never fades), and the visible gaussians left out of the
     * rows because a value of theirs is not a finite f32 (a center beyond f32's range at this t,
     * or a non-finite decoded value): every visible gaussian is a row or counted here. */
    const uint8_t* flags;
    size_t unrepresentable;
} fourdgs_frame_columns;

FOURDGS_CAPI fourdgs_status fourdgs_frame_columns_get(const fourdgs_frame* frame,
                                                      fourdgs_frame_columns* out);
FOURDGS_CAPI fourdgs_status fourdgs_frame_count(const fourdgs_frame* frame, size_t* count);

/* Caller-provided structure-of-arrays buffers. Every pointer may be NULL (that column is not
 * copied). `capacity` is in gaussians; it must be >= the frame's count. SH goes out at
 * `sh_degree` (0..3): sh_bytes takes capacity * 3 * ((sh_degree+1)^2 - 1) bytes, sh_floats as
 * many floats. A coefficient the frame lacks (a band above the frame's degree) is written as
 * the neutral value: byte 128 in sh_bytes, 0.0f in sh_floats. A stored byte b goes out in
 * sh_floats as -4 + b * 8 / 255 (§6.5, sh_coefficient in quantize.hpp). */
typedef struct fourdgs_frame_buffers {
    size_t struct_size;
    size_t capacity;
    float* center;   /* 3 per gaussian */
    float* scale;    /* 3 */
    float* rotation; /* 4 */
    float* color;    /* 4 */
    uint32_t* object_id;
    uint32_t sh_degree;
    uint8_t* sh_bytes;
    float* sh_floats;
} fourdgs_frame_buffers;

/* Copies the frame into `buffers`; *count = the number of gaussians written. */
FOURDGS_CAPI fourdgs_status fourdgs_frame_copy(const fourdgs_frame* frame,
                                               const fourdgs_frame_buffers* buffers,
                                               size_t* count);

/* ------------------------------------------------------------------------------------------ */
/* Decoded blocks: the §3 state of gaussians before evaluation (fourdgs/scene.hpp GaussianBlock),
 * lent column by column without a copy. Ownership follows Apache Arrow's C data interface:
 * the block owns its columns, fourdgs_block_free is their release, and a column pointer is
 * valid from fourdgs_block_columns_get until the next read into that block or
 * fourdgs_block_free, whichever comes first. A block does not refer to the reader that filled
 * it: it may outlive it. A block is used by one thread at a time; reading into a block reuses
 * its memory and its decode buffers. */

typedef struct fourdgs_block fourdgs_block;

/* What a block holds. */
typedef enum fourdgs_block_kind {
    FOURDGS_BLOCK_EMPTY = 0,   /* nothing read yet, or the last read failed */
    FOURDGS_BLOCK_ALL = 1,     /* every gaussian of a gaussian-birth file, chunks in index order */
    FOURDGS_BLOCK_INSTANT = 2, /* gaussian-birth: every gaussian of the chunks covering `time` */
    FOURDGS_BLOCK_CHUNK = 3,   /* gaussian-birth: one chunk of a stream, as stored */
    FOURDGS_BLOCK_STATE = 4    /* keyframe-delta: the composed state of one state chunk (§11),
                                  sorted by gaussian_id (fourdgs_reader_state_at, or one per
                                  state chunk of a stream) */
} fourdgs_block_kind;

typedef struct fourdgs_block_info {
    size_t struct_size;
    uint32_t kind;       /* fourdgs_block_kind */
    double time;         /* INSTANT and STATE from fourdgs_reader_state_at: the t asked for */
    /* CHUNK and STATE: the chunk record (length is 0 where the front-end does not report it) */
    uint64_t offset, length;
    double t0, t1;
    uint32_t level;
    /* STATE: the §5.8 keyframe fields of the state chunk and its composed population */
    uint32_t chunk_kind; /* 0 keyframe, 1 Delta Chunk */
    uint32_t delta_mode;
    uint32_t depth;
    uint64_t reference_offset, keyframe_offset;
    uint64_t live_count;
    /* STATE: a Delta Chunk's group counts (0 for a keyframe). STATE and CHUNK: whether the
     * chunk record carried an object_id stream (absent and all-zero decode alike, §6.6). */
    uint32_t update_count, birth_count, death_count;
    uint32_t object_id_stream;
} fourdgs_block_info;

/* Per gaussian (count of them): position 3, scale 3 (linear), rotation 4 (xyzw), color 4 (r g b
 * opacity), motion 3 (units per second), mu_t, sigma_t (+inf = never fades), win_lo, win_hi
 * (the validity window), flags, window_index, object_id; source_group and source_index when the
 * file carries them; gaussian_id for keyframe-delta states; and sh_per_gaussian SH bytes (red's
 * coefficients of bands 1..sh_degree, then green's, blue's; byte b means -4 + b * 8 / 255).
 * A column the block does not carry is NULL: object_id (every gaussian is background, 0),
 * source_group / source_index, gaussian_id, sh (sh_degree 0). Every pointer is NULL when count
 * is 0. */
typedef struct fourdgs_block_columns {
    size_t struct_size;
    size_t count;
    const float* position;
    const float* scale;
    const float* rotation;
    const float* color;
    const float* motion;
    const float* mu_t;
    const float* sigma_t;
    const float* win_lo;
    const float* win_hi;
    const uint8_t* flags;
    const uint32_t* window_index;
    const uint32_t* object_id;
    const int32_t* source_group;
    const int32_t* source_index;
    const uint32_t* gaussian_id;
    uint32_t sh_degree;
    size_t sh_per_gaussian;
    const uint8_t* sh;
} fourdgs_block_columns;

/* `allocator` may be NULL (malloc/free); copied. */
FOURDGS_CAPI fourdgs_status fourdgs_block_create(const fourdgs_allocator* allocator,
                                                 fourdgs_block** out);
FOURDGS_CAPI void fourdgs_block_free(fourdgs_block* block);
FOURDGS_CAPI fourdgs_status fourdgs_block_columns_get(const fourdgs_block* block,
                                                      fourdgs_block_columns* out);
FOURDGS_CAPI fourdgs_status fourdgs_block_info_get(const fourdgs_block* block,
                                                   fourdgs_block_info* out);

/* Every gaussian of a gaussian-birth file into `block` (decoded on decode_threads threads).
 * A keyframe-delta file has no such block: FOURDGS_UNSUPPORTED ("read-all-needs-gaussian-birth");
 * read its states with fourdgs_reader_state_at. On failure the block is left EMPTY. Thread-safe
 * for distinct blocks. */
FOURDGS_CAPI fourdgs_status fourdgs_reader_read_all(const fourdgs_reader* reader,
                                                    fourdgs_block* block);
/* The decoded state instant t needs, before §3 (what fourdgs_reader_evaluate evaluates):
 * gaussian-birth, every gaussian of the chunks whose [t0, t1) holds t; keyframe-delta, the
 * composed state of current(t) (t in [0, duration), the chain fetched and composed). On failure
 * the block is left EMPTY. Thread-safe for distinct blocks. */
FOURDGS_CAPI fourdgs_status fourdgs_reader_state_at(const fourdgs_reader* reader, double t,
                                                    fourdgs_block* block);
/* §3 on a block already decoded (by this reader, another reader of the same file, or a stream
 * of it): the visible gaussians at t into `frame`, with this reader's cutoff and Object Tracks.
 * `reader` may be a stream's scene (fourdgs_stream_scene). With options->append, several
 * blocks gather in one frame (blocks that do not cover t add nothing). Thread-safe for distinct
 * frames. */
FOURDGS_CAPI fourdgs_status fourdgs_reader_evaluate_block(const fourdgs_reader* reader,
                                                          const fourdgs_block* block, double t,
                                                          const fourdgs_evaluate_options* options,
                                                          fourdgs_frame* frame);

/* Appended after ABI 1 (callers built before see none of it). Which rows of a frame differ from
 * what the same call filled it with before, as fourdgs_player_frame_info says for a player's
 * frames: all_changed 1 when rows may have come, gone or moved (take the whole frame); else the
 * frame has the previous rows (same count, sources and order) and every row not in changed_rows
 * (ascending, changed_count of them; valid until the next call into that frame) is bit for bit
 * the previous frame's. */
typedef struct fourdgs_frame_changes {
    size_t struct_size;
    const uint32_t* changed_rows;
    size_t changed_count;
    uint32_t all_changed;
} fourdgs_frame_changes;

/* fourdgs_reader_evaluate_block (options->append must be 0) that also says in `changes` which
 * rows changed since this call last filled `frame`, for an engine that re-uploads only those
 * (the player's own answer, fourdgs_player_frame_info). Only the rows that can differ are
 * evaluated again: those whose §3 value depends on t when t moved (motion, fading, an Object
 * Track), none at the same t; a gaussian that becomes visible or not, a window bound crossed,
 * another block, a read into the block, other options, another reader or another call filling
 * `frame` since, evaluate the whole block and report all_changed 1. The frame is exactly
 * fourdgs_reader_evaluate_block's. On failure the frame and `changes` are untouched but for
 * all_changed, which the next call reports. */
FOURDGS_CAPI fourdgs_status fourdgs_reader_evaluate_block_changes(
    const fourdgs_reader* reader, const fourdgs_block* block, double t,
    const fourdgs_evaluate_options* options, fourdgs_frame* frame, fourdgs_frame_changes* changes);

/* ------------------------------------------------------------------------------------------ */
/* Streaming: a file front to back as its bytes arrive — a pipe, a socket, a download, stdin, a
 * file without an index, a truncated file — holding one chunk at a time
 * (fourdgs/streaming_reader.hpp, fourdgs/keyframe_delta.hpp). It fills caller blocks: the
 * front-end follows the Header's temporal_model, and fourdgs_stream_next_block gives a
 * gaussian-birth file's chunks as stored (CHUNK blocks: the §3 parameters, not yet evaluated)
 * and a keyframe-delta file's composed state per state chunk (STATE blocks). The scene read so
 * far is a reader handle the stream lends (fourdgs_stream_scene): the scene calls and
 * fourdgs_reader_evaluate_block are the random-access reader's own. On a cut stream every
 * complete chunk comes out, then FOURDGS_TRUNCATED ("truncated"); a partial record is never
 * decoded. A stream and its scene are used by one thread at a time. */

typedef struct fourdgs_stream fourdgs_stream;

/* Sequential reads through the caller.
 *   read     writes up to `length` bytes into `buffer`; returns the count written (0 only at the
 *            end of the data) or a negative value on failure. Called on the thread that calls
 *            fourdgs_stream_open_callbacks / fourdgs_stream_next_block.
 *   release  called exactly once when the library is done with `user`: at fourdgs_stream_free,
 *            or when the open fails; may be NULL.
 * The struct is copied. */
typedef struct fourdgs_stream_callbacks {
    void* user;
    int64_t (*read)(void* user, void* buffer, uint64_t length);
    void (*release)(void* user);
} fourdgs_stream_callbacks;

/* Each open reads the magic and the front matter (every record before the first chunk), so the
 * stream's scene answers at once. `options` may be NULL (defaults; copy_memory and
 * decode_threads do not apply, keep_payloads does). */
FOURDGS_CAPI fourdgs_status fourdgs_stream_open_callbacks(const fourdgs_stream_callbacks* callbacks,
                                                          const fourdgs_open_options* options,
                                                          fourdgs_stream** out);
/* A file descriptor read with read(2) (a pipe, a socket, stdin, a regular file). With close_fd
 * non-zero the stream closes it at fourdgs_stream_free (and when the open fails). */
FOURDGS_CAPI fourdgs_status fourdgs_stream_open_fd(int fd, uint32_t close_fd,
                                                   const fourdgs_open_options* options,
                                                   fourdgs_stream** out);
/* A URL, read front to back by HTTP range requests of growing size (as fourdgs_reader_open_url,
 * with its refusals). */
FOURDGS_CAPI fourdgs_status fourdgs_stream_open_url(const char* url, size_t url_size,
                                                    const fourdgs_open_options* options,
                                                    fourdgs_stream** out);
/* Frees the stream and its scene. Blocks it filled stay valid (they are the caller's). */
FOURDGS_CAPI void fourdgs_stream_free(fourdgs_stream* stream);

/* The scene as read so far, as a reader handle lent by the stream until fourdgs_stream_free
 * (never free it: fourdgs_reader_free passes it by). It holds the front matter after the open,
 * and the summary (the Chunk Index, summary_crc_verified) once the end is reached. Every call
 * that reads the scene works on it — fourdgs_reader_scene_info, _header_attribute,
 * _quantization_bound, _window, _metadata*, _attachment, _camera*, _audio_*, the provenance and
 * object calls, _chunk_info — and fourdgs_reader_evaluate_block evaluates the stream's blocks
 * with its cutoff and Object Tracks. What those calls lend stays valid until the next
 * fourdgs_stream_next_block (a record after the chunks may add to the scene) or
 * fourdgs_stream_free. fourdgs_reader_read_payload serves the payloads the stream kept
 * (keep_payloads); the calls that fetch through the index (evaluate, chunks_for,
 * evaluate_chunk, read_all, state_at) refuse it: FOURDGS_INVALID_ARGUMENT
 * "needs-random-access". */
FOURDGS_CAPI fourdgs_status fourdgs_stream_scene(const fourdgs_stream* stream,
                                                 const fourdgs_reader** out);

/* Decodes the next chunk into `block` (CHUNK; its info has the chunk record's offset, t0, t1 and
 * level) or composes the next state (STATE; with the §5.8 fields of its state chunk and the
 * live count) and sets *produced to 1. At the clean end of the file (after the Footer and the
 * trailing magic) *produced is 0 and the block is EMPTY; the call may be repeated. On a cut
 * stream every complete chunk comes back, then FOURDGS_TRUNCATED ("truncated"). On failure the
 * block is EMPTY, and every further call gives the same failure. The block does not refer to
 * the stream: it may outlive it. */
FOURDGS_CAPI fourdgs_status fourdgs_stream_next_block(fourdgs_stream* stream,
                                                      fourdgs_block* block, uint32_t* produced);

/* ------------------------------------------------------------------------------------------ */
/* Playback (fourdgs/player.hpp, docs/playback.md): a frame for every display tick while the scene
 * streams. A player owns a worker thread that decodes the states the next instants need ahead of
 * the playhead; fourdgs_player_frame, called by the render thread, evaluates what is resident
 * into a fourdgs_frame (its columns as fourdgs_frame_columns_get lends them) and never waits on
 * the source or on inflate when the data arrived in time. When it did not, the frame is late:
 * the info says so and why, and the frame shows the state before (unless the call waits). On
 * time, the frame is exactly fourdgs_reader_evaluate's at the same instant.
 *
 * The clock is the caller's: fourdgs_player_frame(now) reads it at `now` (seconds, any origin);
 * play, pause, seek, set_rate and set_loop take effect from the last frame shown.
 * Errors while playing are the readers' own refusals, returned by the frame that needs the state
 * (a damaged chunk, a cut file, "source-changed"); a state late for stall_timeout_sec fails the
 * frame with "playback-stalled". The frame calls are made by one thread at a time; the control
 * calls and fourdgs_player_info from any thread. */

typedef struct fourdgs_player fourdgs_player;

typedef enum fourdgs_playback_state {
    FOURDGS_PLAYBACK_PAUSED = 0,
    FOURDGS_PLAYBACK_PLAYING = 1,
    FOURDGS_PLAYBACK_ENDED = 2 /* reached the end (the start, in reverse) without loop */
} fourdgs_playback_state;

typedef enum fourdgs_late_reason {
    FOURDGS_LATE_NONE = 0,     /* on time */
    FOURDGS_LATE_STARTING = 1, /* nothing resident yet: the frame is empty */
    FOURDGS_LATE_QUEUED = 2,   /* the worker has not started on the state (after a seek, or
                                  behind at a high rate) */
    FOURDGS_LATE_FETCHING = 3, /* the worker is reading it from the source */
    FOURDGS_LATE_DECODING = 4  /* the worker is decoding or composing it */
} fourdgs_late_reason;

typedef struct fourdgs_player_options {
    size_t struct_size;
    uint32_t look_ahead;          /* states prepared ahead of the one shown (default 2, >= 1) */
    double start;                 /* the playhead's start, seconds (default 0) */
    double rate;                  /* default 1; negative plays backward */
    uint32_t loop;                /* default 0 */
    uint32_t playing;             /* start playing at once (default 0: paused) */
    uint32_t max_sh_degree;       /* SH kept in each frame, 0..3 (default 3) */
    uint32_t apply_object_tracks; /* compose the scene's Object Tracks (default 1) */
    uint32_t decode_threads;      /* threads a gaussian-birth chunk decodes on (default 1) */
    uint32_t prefetch;            /* keep the next instants' bytes on their way (default 1) */
    double prefetch_step_sec;     /* spacing of the instants prefetched (default 1/30) */
    uint32_t prefetch_horizon;    /* how many (default 30) */
    uint64_t prefetch_bytes;      /* bytes held ahead, at most (default 16 MiB) */
    double stall_timeout_sec;     /* a state late this long fails the frame (default 10; 0 never) */
} fourdgs_player_options;

/* What a frame call says beside the frame it fills. */
typedef struct fourdgs_player_frame_info {
    size_t struct_size;
    double time;               /* the instant asked for: the clock's at `now`, or frame_at's t */
    double shown;              /* the instant the frame was evaluated at (late: the nearest one
                                  the state shown covers) */
    uint32_t late;             /* 1 when the state for `time` was not resident */
    uint32_t reason;           /* fourdgs_late_reason */
    uint32_t state;            /* fourdgs_playback_state */
    double state_t0, state_t1; /* where the state shown is state_at's (0, 0: none) */
    size_t audio_count;        /* audio sources: fourdgs_player_audio_state 0..audio_count-1 */
    /* Appended after ABI 1 (callers built before see none of it). Which rows of the frame may
     * differ from the frame this player filled before (its previous successful frame call), so
     * an engine re-uploads only those. all_changed 1: rows may have come, gone or moved (the
     * first frame, a keyframe, a seek, reverse play, a birth or death, a gaussian that became
     * visible or not): take the whole frame. 0: the frame has the previous one's rows (same
     * count, same sources, same order), and every row not in changed_rows (ascending,
     * changed_count of them; valid until the player's next frame call) is bit for bit the
     * previous frame's. */
    const uint32_t* changed_rows;
    size_t changed_count;
    uint32_t all_changed;
} fourdgs_player_frame_info;

typedef struct fourdgs_player_info {
    size_t struct_size;
    uint32_t state;   /* fourdgs_playback_state */
    uint32_t loop;
    double rate;
    double position;  /* the instant the last frame showed */
    double duration;
    uint64_t frames, late_frames;
    uint64_t chunks_decoded;  /* gaussian-birth chunks the worker decoded */
    uint64_t states_composed; /* keyframe-delta states composed from their keyframe */
    uint64_t steps;           /* keyframe-delta forward steps, one delta each */
    uint64_t discarded;       /* prepared states dropped unseen */
    uint64_t resident_bytes;  /* decoded states held now */
} fourdgs_player_info;

/* Fills the defaults and struct_size (the three forms of fourdgs_open_options_init). */
FOURDGS_CAPI void fourdgs_player_options_init_sized(fourdgs_player_options* options,
                                                    size_t struct_size);
FOURDGS_CAPI void(fourdgs_player_options_init)(fourdgs_player_options* options);
#define fourdgs_player_options_init(options) \
    fourdgs_player_options_init_sized((options), sizeof *(options))
/* Plays `reader`, which must outlive the player: a reader (fourdgs_reader_open_*: file, memory,
 * callbacks, URL), or a stream's scene (fourdgs_stream_scene) of a keyframe-delta file, played
 * forward only (the player then pulls the stream: do not call fourdgs_stream_next_block while
 * it lives). `options` may be NULL. Refusals: "not-seekable" (a gaussian-birth stream, or a
 * negative rate on a stream), "invalid-option". */
FOURDGS_CAPI fourdgs_status fourdgs_player_create(const fourdgs_reader* reader,
                                                  const fourdgs_player_options* options,
                                                  fourdgs_player** out);
/* Stops the worker (waiting for a read in flight to return) and frees the player. */
FOURDGS_CAPI void fourdgs_player_free(fourdgs_player* player);

/* The render thread's call: evaluates the frame at the clock's time for `now` into `frame` and
 * describes it in `info` (may be NULL). With `wait` non-zero it blocks until the state is
 * resident instead of returning a late frame (at most stall_timeout_sec). On a refusal the frame
 * and info are untouched. */
FOURDGS_CAPI fourdgs_status fourdgs_player_frame(fourdgs_player* player, double now,
                                                 uint32_t wait, fourdgs_frame* frame,
                                                 fourdgs_player_frame_info* info);
/* The same at scene time t, which becomes the playhead. */
FOURDGS_CAPI fourdgs_status fourdgs_player_frame_at(fourdgs_player* player, double t,
                                                    uint32_t wait, fourdgs_frame* frame,
                                                    fourdgs_player_frame_info* info);
/* §7: audio source `index` (the reader's order) at the last frame's `time`. */
FOURDGS_CAPI fourdgs_status fourdgs_player_audio_state(const fourdgs_player* player, size_t index,
                                                       fourdgs_audio_state* out);

FOURDGS_CAPI fourdgs_status fourdgs_player_play(fourdgs_player* player);
FOURDGS_CAPI fourdgs_status fourdgs_player_pause(fourdgs_player* player);
/* Moves the playhead (clamped, or wrapped when looping) and retries states that were refused. */
FOURDGS_CAPI fourdgs_status fourdgs_player_seek(fourdgs_player* player, double t);
FOURDGS_CAPI fourdgs_status fourdgs_player_set_rate(fourdgs_player* player, double rate);
FOURDGS_CAPI fourdgs_status fourdgs_player_set_loop(fourdgs_player* player, uint32_t loop);
FOURDGS_CAPI fourdgs_status fourdgs_player_info_get(const fourdgs_player* player,
                                                    fourdgs_player_info* out);

/* ------------------------------------------------------------------------------------------ */
/* Validation: every problem in a file, not just the first (fourdgs/validate.hpp). */

typedef struct fourdgs_validation fourdgs_validation;

typedef enum fourdgs_severity { FOURDGS_SEVERITY_ERROR = 1, FOURDGS_SEVERITY_WARNING = 2 } fourdgs_severity;

typedef struct fourdgs_validation_summary {
    size_t struct_size;
    uint64_t finding_count, errors, warnings;
    uint64_t file_size, records, chunks;
    uint32_t truncated, findings_capped, valid;
} fourdgs_validation_summary;

/* Strings borrowed until fourdgs_validation_free. */
typedef struct fourdgs_finding {
    size_t struct_size;
    uint32_t severity; /* fourdgs_severity */
    fourdgs_string rule, field, value, section, message;
    uint64_t offset; /* or FOURDGS_NO_OFFSET */
} fourdgs_finding;

/* The result is FOURDGS_OK whenever the validator ran (a file full of errors included); it
 * fails only when the source could not be read. `options` (may be NULL) supplies the limits
 * and the allocator. */
FOURDGS_CAPI fourdgs_status fourdgs_validate_file(const char* path, size_t path_size,
                                                  const fourdgs_open_options* options,
                                                  fourdgs_validation** out);
/* `data` is borrowed for the duration of the call only. */
FOURDGS_CAPI fourdgs_status fourdgs_validate_memory(const void* data, size_t size,
                                                    const fourdgs_open_options* options,
                                                    fourdgs_validation** out);
/* callbacks->release is called before this returns. */
FOURDGS_CAPI fourdgs_status fourdgs_validate_callbacks(const fourdgs_read_callbacks* callbacks,
                                                       const fourdgs_open_options* options,
                                                       fourdgs_validation** out);
/* A URL, read by range requests (see fourdgs_reader_open_url). */
FOURDGS_CAPI fourdgs_status fourdgs_validate_url(const char* url, size_t url_size,
                                                 const fourdgs_open_options* options,
                                                 fourdgs_validation** out);
FOURDGS_CAPI void fourdgs_validation_free(fourdgs_validation* validation);
FOURDGS_CAPI fourdgs_status fourdgs_validation_summary_get(const fourdgs_validation* validation,
                                                           fourdgs_validation_summary* out);
FOURDGS_CAPI fourdgs_status fourdgs_validation_finding(const fourdgs_validation* validation,
                                                       size_t index, fourdgs_finding* out);

/* ------------------------------------------------------------------------------------------ */
/* Writing (a gaussian-birth file; fourdgs/writer.hpp). Gaussians are appended in batches and
 * copied; the file is encoded, verified and written at finish. */

typedef struct fourdgs_writer fourdgs_writer;

typedef struct fourdgs_writer_options {
    size_t struct_size;
    /* Header */
    double duration_sec;   /* required: finite, > 0 */
    double cutoff;         /* default 0.05 */
    uint32_t sh_degree;    /* 0..3 */
    const char* profile; size_t profile_size;   /* default "" */
    const char* library; size_t library_size;   /* default "" = "fourdgs <version>" */
    /* Quantization */
    const char* preset; size_t preset_size;     /* "fine", "default" (default), "coarse" */
    const char* sh_ladder; size_t sh_ladder_size; /* "none" (default), "flat", "balanced",
                                                      "aggressive" */
    /* Encoding */
    const char* codec; size_t codec_size;       /* "deflate" (default), "zstd", "lz4" */
    int32_t level;                              /* default 6 */
    const char* chunk_compression; size_t chunk_compression_size; /* "", "deflate", "zstd" */
    uint32_t write_index, write_crc, write_statistics, write_summary_offset; /* default 1 */
    uint32_t max_chunk_gaussians; /* default 65536 */
    uint32_t spatial_order;       /* default 1 */
    uint32_t threads;             /* 0 = all cores (default), 1 = the calling thread */
    const fourdgs_allocator* allocator; /* NULL = malloc/free */
} fourdgs_writer_options;

/* Fills the defaults and struct_size (the three forms of fourdgs_open_options_init). */
FOURDGS_CAPI void fourdgs_writer_options_init_sized(fourdgs_writer_options* options,
                                                    size_t struct_size);
FOURDGS_CAPI void(fourdgs_writer_options_init)(fourdgs_writer_options* options);
#define fourdgs_writer_options_init(options) \
    fourdgs_writer_options_init_sized((options), sizeof *(options))
/* The options are copied (strings included). */
FOURDGS_CAPI fourdgs_status fourdgs_writer_create(const fourdgs_writer_options* options,
                                                  fourdgs_writer** out);
FOURDGS_CAPI void fourdgs_writer_free(fourdgs_writer* writer);

/* One batch of gaussians as borrowed columns (copied before the call returns):
 *   position, scale 3 × count; rotation 4 × count (xyzw, any norm > 0); color 4 × count (r g b
 *   opacity in [0, 1]); motion 3 × count or NULL (zero); mu_t, sigma_t count (sigma_t +inf =
 *   never fades); win_lo, win_hi count (0 <= lo < hi <= duration); sh count × 3 ×
 *   ((sh_degree+1)^2 - 1) floats or NULL when sh_degree is 0; object_id count or NULL (0).
 * Values are checked at finish, where a refusal names the gaussian's index across all batches. */
typedef struct fourdgs_gaussian_batch {
    size_t struct_size;
    size_t count;
    const float* position;
    const float* scale;
    const float* rotation;
    const float* color;
    const float* motion;
    const float* mu_t;
    const float* sigma_t;
    const double* win_lo;
    const double* win_hi;
    const float* sh;
    const uint32_t* object_id;
} fourdgs_gaussian_batch;

FOURDGS_CAPI fourdgs_status fourdgs_writer_add_gaussians(fourdgs_writer* writer,
                                                         const fourdgs_gaussian_batch* batch);

/* Extras (copied). They are checked with the readers' parsers when the file is written. */
typedef struct fourdgs_key_value {
    const char* key; size_t key_size;
    const char* value; size_t value_size;
} fourdgs_key_value;

FOURDGS_CAPI fourdgs_status fourdgs_writer_add_header_attribute(fourdgs_writer* writer,
                                                                const char* key, size_t key_size,
                                                                const char* value,
                                                                size_t value_size);
FOURDGS_CAPI fourdgs_status fourdgs_writer_add_metadata(fourdgs_writer* writer, const char* name,
                                                        size_t name_size,
                                                        const fourdgs_key_value* entries,
                                                        size_t entry_count);
FOURDGS_CAPI fourdgs_status fourdgs_writer_add_attachment(fourdgs_writer* writer,
                                                          const char* name, size_t name_size,
                                                          const char* media_type,
                                                          size_t media_type_size,
                                                          const void* data, size_t size);
/* interpolation "linear" or "spline". */
FOURDGS_CAPI fourdgs_status fourdgs_writer_set_camera(fourdgs_writer* writer, double fov_y_deg,
                                                      const double position[3],
                                                      const double target[3],
                                                      const fourdgs_camera_keyframe* keyframes,
                                                      size_t keyframe_count,
                                                      const char* interpolation,
                                                      size_t interpolation_size, uint32_t loop);
/* One audio source (§5.16) and its encoded payload, written as an Audio Source / Audio Data
 * pair. From `info` the writer takes source_id, the strings (as data + size), start, duration,
 * gain, flags, position, rotation; keyframe_count, payload and legacy are ignored. */
FOURDGS_CAPI fourdgs_status fourdgs_writer_add_audio_source(fourdgs_writer* writer,
                                                            const fourdgs_audio_source_info* info,
                                                            const fourdgs_audio_keyframe* keyframes,
                                                            size_t keyframe_count,
                                                            const void* data, size_t size);
FOURDGS_CAPI fourdgs_status fourdgs_writer_add_coordinate_frame(fourdgs_writer* writer,
                                                                const fourdgs_coordinate_frame* frame);
FOURDGS_CAPI fourdgs_status fourdgs_writer_add_sensor(fourdgs_writer* writer,
                                                      const fourdgs_sensor* sensor);
FOURDGS_CAPI fourdgs_status fourdgs_writer_add_rig_trajectory(fourdgs_writer* writer,
                                                              const char* name, size_t name_size,
                                                              uint32_t interpolation,
                                                              const fourdgs_pose_sample* samples,
                                                              size_t sample_count);
FOURDGS_CAPI fourdgs_status fourdgs_writer_add_geodetic_anchor(fourdgs_writer* writer,
                                                               const fourdgs_geodetic_anchor* anchor);
/* Object Table entries; every call must use the same embedding_dim (0 = no embeddings). */
FOURDGS_CAPI fourdgs_status fourdgs_writer_add_object(fourdgs_writer* writer,
                                                      const fourdgs_object_info* object,
                                                      uint32_t embedding_dim);
FOURDGS_CAPI fourdgs_status fourdgs_writer_add_object_track(fourdgs_writer* writer,
                                                            uint32_t object_id,
                                                            uint32_t interpolation,
                                                            const fourdgs_pose_sample* samples,
                                                            size_t sample_count);

typedef struct fourdgs_write_report {
    size_t struct_size;
    uint64_t gaussian_count;
    uint64_t chunk_count;
    uint64_t bytes_written;
    double aabb[6];
} fourdgs_write_report;

/* Encodes everything added so far and writes the whole file. May be called again (the same
 * input gives the same bytes). On failure the destination may hold a partial file. */
FOURDGS_CAPI fourdgs_status fourdgs_writer_finish_file(fourdgs_writer* writer, const char* path,
                                                       size_t path_size);
/* The bytes are borrowed from the writer until the next finish or fourdgs_writer_free. */
FOURDGS_CAPI fourdgs_status fourdgs_writer_finish_memory(fourdgs_writer* writer,
                                                         const uint8_t** data, size_t* size);
/* `write` returns 0 on success, non-zero on failure; called on this thread, in order. */
FOURDGS_CAPI fourdgs_status fourdgs_writer_finish_callback(
    fourdgs_writer* writer, int (*write)(void* user, const void* data, uint64_t size), void* user);
/* The report of the last successful finish. */
FOURDGS_CAPI fourdgs_status fourdgs_writer_report(const fourdgs_writer* writer,
                                                  fourdgs_write_report* out);

/* ------------------------------------------------------------------------------------------ */
/* Writing window by window in bounded memory (fourdgs/writer.hpp StreamingWriter). A
 * fourdgs_writer holds the options and the extras; a stream writer made from it writes the
 * Header, Quantization, Window Table and every extra at creation, then each window's gaussians
 * as they are added (encoded, verified and written before the call returns). Because the Header
 * comes first, the gaussian count, the aabb and the Window Table are declared up front and
 * checked at finish. The Quantization bounds are the grid's analytic worst case. */

typedef struct fourdgs_stream_writer fourdgs_stream_writer;

typedef struct fourdgs_stream_declaration {
    size_t struct_size;
    uint64_t gaussian_count; /* exactly the number of gaussians that will be added */
    double aabb[6];          /* min xyz, max xyz over every rest position, exactly */
    const double* windows;   /* window_count (lo, hi) pairs: the Window Table, in this order */
    size_t window_count;
} fourdgs_stream_declaration;

/* Creates `path` and writes everything up to the first chunk. From `writer` it takes the options
 * (its allocator included) and the extras added so far (copied: the writer may be freed or
 * changed afterwards); gaussians added to it with fourdgs_writer_add_gaussians are refused
 * ("gaussians-not-streamed"). Refusals: those of fourdgs_writer_finish_file's scene checks, and
 * "invalid-declaration". On failure nothing is returned and the file may hold a prefix. */
FOURDGS_CAPI fourdgs_status fourdgs_stream_writer_create_file(
    const fourdgs_writer* writer, const fourdgs_stream_declaration* declaration, const char* path,
    size_t path_size, fourdgs_stream_writer** out);
/* Gaussians that all live in declared window `window_index`: batch->win_lo and win_hi must be
 * NULL. Copied, validated, encoded, verified and written before the call returns; refusals name
 * the gaussian by its running index across all calls. */
FOURDGS_CAPI fourdgs_status fourdgs_stream_writer_add_window(fourdgs_stream_writer* writer,
                                                             uint32_t window_index,
                                                             const fourdgs_gaussian_batch* batch);
/* One chunk whose gaussians carry their own windows (each one of the declared windows). */
FOURDGS_CAPI fourdgs_status fourdgs_stream_writer_add_chunk(fourdgs_stream_writer* writer,
                                                            const fourdgs_gaussian_batch* batch);
/* Checks the declared count and aabb, writes the summary and Footer, and closes the file. */
FOURDGS_CAPI fourdgs_status fourdgs_stream_writer_finish(fourdgs_stream_writer* writer);
/* The report, complete after a successful finish (FOURDGS_NOT_FOUND before). */
FOURDGS_CAPI fourdgs_status fourdgs_stream_writer_report(const fourdgs_stream_writer* writer,
                                                         fourdgs_write_report* out);
/* Closes the file; an unfinished file stays as written so far. */
FOURDGS_CAPI void fourdgs_stream_writer_free(fourdgs_stream_writer* writer);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FOURDGS_H */
#include "fourdgs_binding_support.h"
