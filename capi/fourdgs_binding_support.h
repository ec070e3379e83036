/* fourdgs_binding_support.h — what the bindings over the C ABI (the npm package, the Python
 * package) ask the library instead of computing it themselves: which state covers an instant and
 * the playback clock (so a player plays as fourdgs::Player does), the spellings of the ABI's
 * enums, and the 3DGS PLY of the tools library (libfourdgs-c only: the WebAssembly core leaves
 * it out).
 *
 * One of the parts fourdgs.h includes, in order, inside its extern "C" block; it relies on the
 * parts before it and on fourdgs.h's macros. Include <fourdgs/fourdgs.h>, never a part alone:
 * the rules that hold for every call (size-tagged structs, the thread's last error) are at the
 * top of fourdgs.h. */
#ifndef FOURDGS_BINDING_SUPPORT_H
#define FOURDGS_BINDING_SUPPORT_H

#ifndef FOURDGS_H
#error "fourdgs_binding_support.h is a part of fourdgs.h: include <fourdgs/fourdgs.h>"
#endif

/* ------------------------------------------------------------------------------------------ */
/* Which state covers t (fourdgs::StateSpan, fourdgs/state_timeline.hpp). A state is what
 * fourdgs_reader_state_at decodes for an instant: gaussian-birth, the chunks covering t;
 * keyframe-delta, the state chunk covering t, composed from its chain. The file's instants are
 * cut into spans over which that state does not change: a player decodes a state once and shows
 * it for every instant of its span [t0, t1). */

#define FOURDGS_NO_STATE UINT64_MAX

typedef struct fourdgs_state_span {
    size_t struct_size;
    uint64_t key;  /* the span's place in time order; FOURDGS_NO_STATE: no state covers t */
    double t0, t1; /* the instants it covers, [t0, t1) (0, 0 when none); the index entries its
                      state is decoded from are fourdgs_reader_chunks_for's at any of them */
} fourdgs_state_span;

/* The state at t. Refusals: a non-finite t; "not-seekable" on a stream (no index). An instant no
 * state covers is not an error: key FOURDGS_NO_STATE. */
FOURDGS_CAPI fourdgs_status fourdgs_reader_state_span(const fourdgs_reader* reader, double t,
                                                      fourdgs_state_span* out);

/* ------------------------------------------------------------------------------------------ */
/* The playback clock (fourdgs::PlaybackClock, fourdgs/playback_clock.hpp): the caller's time
 * `now` (seconds, any origin) mapped to scene time, t = anchor + rate * (now - anchor_now),
 * wrapped into [0, duration) when looping, clamped at the ends otherwise, where playback ends
 * (FOURDGS_PLAYBACK_ENDED). The controls act from the last frame: after play() the next frame
 * shows where playback paused and motion starts from that frame's `now`. fourdgs_player runs
 * the same clock. Not thread-safe: one caller at a time. */

typedef struct fourdgs_playback_clock fourdgs_playback_clock;

typedef struct fourdgs_playback_clock_info {
    size_t struct_size;
    uint32_t state; /* fourdgs_playback_state */
    uint32_t loop;
    double rate;
    double duration;
    double anchor; /* the playhead as of the last control (seek, pause, ...) or the end reached */
} fourdgs_playback_clock_info;

/* A clock for a scene `duration` seconds long (>= 0), its playhead at `start` (wrapped or
 * clamped), paused or `playing`. Refusals: a non-finite duration, start or rate. */
FOURDGS_CAPI fourdgs_status fourdgs_playback_clock_create(const fourdgs_allocator* allocator,
                                                          double duration, double start,
                                                          double rate, uint32_t loop,
                                                          uint32_t playing,
                                                          fourdgs_playback_clock** out);
FOURDGS_CAPI void fourdgs_playback_clock_free(fourdgs_playback_clock* clock);
/* A frame from the caller's clock: the scene time at `now` into *t. Playing past an end without
 * loop ends playback. Refusals: NULL, a non-finite now. */
FOURDGS_CAPI fourdgs_status fourdgs_playback_clock_frame(fourdgs_playback_clock* clock,
                                                         double now, double* t);
/* A frame at scene time t instead (scrubbing): the playhead moves there, unplaced. */
FOURDGS_CAPI fourdgs_status fourdgs_playback_clock_frame_at(fourdgs_playback_clock* clock,
                                                            double t);
FOURDGS_CAPI fourdgs_status fourdgs_playback_clock_play(fourdgs_playback_clock* clock);
FOURDGS_CAPI fourdgs_status fourdgs_playback_clock_pause(fourdgs_playback_clock* clock);
/* The playhead to t (wrapped or clamped); ended becomes paused. */
FOURDGS_CAPI fourdgs_status fourdgs_playback_clock_seek(fourdgs_playback_clock* clock, double t);
FOURDGS_CAPI fourdgs_status fourdgs_playback_clock_set_rate(fourdgs_playback_clock* clock,
                                                            double rate);
FOURDGS_CAPI fourdgs_status fourdgs_playback_clock_set_loop(fourdgs_playback_clock* clock,
                                                            uint32_t loop);
FOURDGS_CAPI fourdgs_status fourdgs_playback_clock_info_get(const fourdgs_playback_clock* clock,
                                                            fourdgs_playback_clock_info* out);

/* ------------------------------------------------------------------------------------------ */
/* Spellings. The names the library gives the values of the ABI's enums and of the format's
 * numbered fields, so that bindings print what the library and the `4dgs` tool print. */

typedef enum fourdgs_enum {
    FOURDGS_ENUM_STATUS = 0,         /* fourdgs_status: "ok", "malformed", ... */
    FOURDGS_ENUM_TEMPORAL_MODEL = 1, /* fourdgs_temporal_model: "gaussian-birth", ... */
    FOURDGS_ENUM_BLOCK_KIND = 2,     /* fourdgs_block_kind: "empty", "all", ... */
    FOURDGS_ENUM_PLAYBACK_STATE = 3, /* fourdgs_playback_state: "paused", ... */
    FOURDGS_ENUM_LATE_REASON = 4,    /* fourdgs_late_reason: "none", "starting", ... */
    FOURDGS_ENUM_SEVERITY = 5,       /* fourdgs_severity: 1 "error", 2 "warning" */
    FOURDGS_ENUM_AXIS = 6,           /* a Coordinate Frame's axis byte: "+x", ... */
    FOURDGS_ENUM_LENGTH_UNIT = 7,    /* a Coordinate Frame's unit byte: "unspecified", ... */
    FOURDGS_ENUM_CAMERA_MODEL = 8,   /* a Sensor Calibration's model byte: "none", ... */
    FOURDGS_ENUM_INTERPOLATION = 9   /* a Rig Trajectory's or Object Track's byte: "linear", ... */
} fourdgs_enum;

/* The name of `value` in enum `which` (static storage), or NULL when it has none (a value past
 * the last, an unknown enum). */
FOURDGS_CAPI const char* fourdgs_enum_name(fourdgs_enum which, uint32_t value);
/* The SH coefficient an SH byte stands for (§6.5): -4 + b * 8 / 255. */
FOURDGS_CAPI float fourdgs_sh_coefficient(uint8_t b);

/* ------------------------------------------------------------------------------------------ */
/* The standard 3D gaussian splat PLY (fourdgs/tools/ply.hpp: the tools library's reader and
 * writer, the ones `4dgs convert` and `4dgs extract` use). A parsed cloud holds its columns in
 * the writer's user terms: linear scale, xyzw rotation as stored, rgb and opacity in linear
 * units (not clamped), SH coefficients red's K, green's K, blue's K per gaussian. */

typedef struct fourdgs_ply_cloud fourdgs_ply_cloud;

typedef struct fourdgs_ply_columns {
    size_t struct_size;
    uint64_t count;
    uint32_t sh_degree;       /* 0..3 */
    uint32_t sh_per_gaussian; /* 3 * ((sh_degree + 1)^2 - 1) */
    const float* position;    /* 3 per gaussian */
    const float* normal;      /* 3 per gaussian (zeros when the file has none); NULL in: zeros */
    const float* scale;       /* 3, linear */
    const float* rotation;    /* 4, x y z w */
    const float* color;       /* 4, r g b opacity */
    const float* sh;          /* count * sh_per_gaussian; NULL when 0 */
} fourdgs_ply_columns;

/* Parses a binary little-endian 3DGS PLY: from memory (copied), or the file at `path`. Refusals
 * (fourdgs/tools/ply.hpp): ply-not-ply, ply-ascii-format, ply-big-endian, ply-bad-header,
 * ply-missing-property, ply-duplicate-property, ply-property-type, ply-sh-count,
 * ply-truncated-body; io-error for a file that cannot be read. */
FOURDGS_CAPI fourdgs_status fourdgs_ply_read_memory(const fourdgs_allocator* allocator,
                                                    const void* data, size_t size,
                                                    fourdgs_ply_cloud** out);
FOURDGS_CAPI fourdgs_status fourdgs_ply_read_file(const fourdgs_allocator* allocator,
                                                  const char* path, size_t path_size,
                                                  fourdgs_ply_cloud** out);
/* The cloud's columns, borrowed until fourdgs_ply_free. */
FOURDGS_CAPI fourdgs_status fourdgs_ply_columns_get(const fourdgs_ply_cloud* cloud,
                                                    fourdgs_ply_columns* out);
FOURDGS_CAPI void fourdgs_ply_free(fourdgs_ply_cloud* cloud);
/* Serializes the caller's columns (count and sh_degree set; normal may be NULL) as a PLY:
 * buffer NULL: *size = the bytes it takes; else capacity >= that size (else
 * FOURDGS_BUFFER_TOO_SMALL). Opacity is written as logit(clamp(a, 1e-7, 1 - 1e-7)), scale as
 * log, colour as (rgb - 0.5) / C0. Refusals: invalid-argument for an sh_degree over 3 or a
 * NULL column with rows. */
FOURDGS_CAPI fourdgs_status fourdgs_ply_write(const fourdgs_ply_columns* columns, void* buffer,
                                              size_t capacity, size_t* size);


#endif /* FOURDGS_BINDING_SUPPORT_H */
