/* fourdgs_play.h — the C ABI, fourdgs.h's part: streaming, playback.
 *
 * One of the parts fourdgs.h includes, in order, inside its extern "C" block; it relies on the
 * parts before it and on fourdgs.h's macros. Include <fourdgs/fourdgs.h>, never a part alone:
 * the rules that hold for every call are at the top of fourdgs.h. */
#ifndef FOURDGS_PLAY_H
#define FOURDGS_PLAY_H

#ifndef FOURDGS_H
#error "fourdgs_play.h is a part of fourdgs.h: include <fourdgs/fourdgs.h>"
#endif

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

#endif /* FOURDGS_PLAY_H */
