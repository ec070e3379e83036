/* fourdgs_write.h — the C ABI, fourdgs.h's part: writing, and writing window by window (the streaming writer).
 *
 * One of the parts fourdgs.h includes, in order, inside its extern "C" block; it relies on the
 * parts before it and on fourdgs.h's macros. Include <fourdgs/fourdgs.h>, never a part alone:
 * the rules that hold for every call are at the top of fourdgs.h. */
#ifndef FOURDGS_WRITE_H
#define FOURDGS_WRITE_H

#ifndef FOURDGS_H
#error "fourdgs_write.h is a part of fourdgs.h: include <fourdgs/fourdgs.h>"
#endif

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

#endif /* FOURDGS_WRITE_H */
