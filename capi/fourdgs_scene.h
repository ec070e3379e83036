/* fourdgs_scene.h — the C ABI, fourdgs.h's part: scene information, the state at time t (frames), decoded blocks.
 *
 * One of the parts fourdgs.h includes, in order, inside its extern "C" block; it relies on the
 * parts before it and on fourdgs.h's macros. Include <fourdgs/fourdgs.h>, never a part alone:
 * the rules that hold for every call are at the top of fourdgs.h. */
#ifndef FOURDGS_SCENE_H
#define FOURDGS_SCENE_H

#ifndef FOURDGS_H
#error "fourdgs_scene.h is a part of fourdgs.h: include <fourdgs/fourdgs.h>"
#endif

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

#endif /* FOURDGS_SCENE_H */
