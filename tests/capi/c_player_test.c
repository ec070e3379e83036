/* c_player_test.c — the C ABI's player (fourdgs.h "Playback"), from C11.
 *
 *   c_player_test --corpus DIR     the valid corpus files of both temporal models played from C:
 *                                  every frame the player gives on time equals
 *                                  fourdgs_reader_evaluate at the same instant (the C++
 *                                  state_at + evaluate the C++ player is tested against), column
 *                                  by column, bit for bit — scrubbing, on the player's clock
 *                                  forward, backward and looping, and from a pipe; audio states;
 *                                  the info; argument errors
 *
 * Prints one line per failed check and exits non-zero when any failed. */
#include <fourdgs/fourdgs.h>

#include <math.h>

#include "check.h"

static int refusal_is(const char* want) { return string_is(last_error().refusal, want); }

static fourdgs_frame_columns columns_of(const fourdgs_frame* frame) {
    fourdgs_frame_columns c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    fourdgs_frame_columns_get(frame, &c);
    return c;
}

static int same(const void* a, const void* b, size_t bytes) {
    return bytes == 0 || (a != NULL && b != NULL && memcmp(a, b, bytes) == 0);
}

/* Bit for bit: the instant, the count, every column's rows. */
static int same_frame(const fourdgs_frame* got, const fourdgs_frame* want) {
    const fourdgs_frame_columns g = columns_of(got), w = columns_of(want);
    const size_t n = g.count;
    if (g.count != w.count || memcmp(&g.time, &w.time, sizeof g.time) != 0) return 0;
    if (n == 0) return 1;
    return g.sh_degree == w.sh_degree && same(g.center, w.center, n * 3 * sizeof(float)) &&
           same(g.scale, w.scale, n * 3 * sizeof(float)) &&
           same(g.rotation, w.rotation, n * 4 * sizeof(float)) &&
           same(g.color, w.color, n * 4 * sizeof(float)) &&
           same(g.object_id, w.object_id, n * sizeof(uint32_t)) &&
           same(g.source, w.source, n * sizeof(uint32_t)) &&
           same(g.sh, w.sh, n * g.sh_per_gaussian);
}

/* The changed rows of `info`: ascending rows of `got`, and every row of `got` not listed is the
 * row of `previous` (the frame before), bit for bit; with all_changed, none listed. */
static int changed_rows_hold(const fourdgs_player_frame_info* info, const fourdgs_frame* got,
                             const fourdgs_frame* previous) {
    const fourdgs_frame_columns g = columns_of(got), p = columns_of(previous);
    if (info->all_changed) return info->changed_count == 0;
    if (g.count != p.count || !same(g.source, p.source, g.count * sizeof(uint32_t))) return 0;
    size_t next = 0;
    for (size_t k = 0; k < g.count; ++k) {
        if (next < info->changed_count && info->changed_rows[next] == k) {
            if (next > 0 && info->changed_rows[next - 1] >= k) return 0;
            ++next;
            continue;
        }
        if (!same(g.center + 3 * k, p.center + 3 * k, 3 * sizeof(float)) ||
            !same(g.scale + 3 * k, p.scale + 3 * k, 3 * sizeof(float)) ||
            !same(g.rotation + 4 * k, p.rotation + 4 * k, 4 * sizeof(float)) ||
            !same(g.color + 4 * k, p.color + 4 * k, 4 * sizeof(float)) ||
            !same(g.object_id + k, p.object_id + k, sizeof(uint32_t)) ||
            !same(g.sh + k * g.sh_per_gaussian, p.sh + k * p.sh_per_gaussian, g.sh_per_gaussian))
            return 0;
    }
    return next == info->changed_count;
}

static fourdgs_player_frame_info new_info(void) {
    fourdgs_player_frame_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    return i;
}

/* The player's frame at scene time t against the reader's evaluate at t: the same frame, or
 * the same refusal. */
static void frame_at_matches(fourdgs_player* player, const fourdgs_reader* reader, double t,
                             const char* name) {
    fourdgs_frame *got = NULL, *want = NULL;
    fourdgs_frame_create(NULL, &got);
    fourdgs_frame_create(NULL, &want);
    fourdgs_player_frame_info info = new_info();
    const fourdgs_status p = fourdgs_player_frame_at(player, t, 1, got, &info);
    char p_refusal[64] = "";
    if (p != FOURDGS_OK) {
        fourdgs_error e = last_error();
        snprintf(p_refusal, sizeof p_refusal, "%.*s", (int)e.refusal.size, e.refusal.data);
    }
    const fourdgs_status r = fourdgs_reader_evaluate(reader, t, NULL, want);
    CHECK(p == r, "%s t=%g: player status %s, reader %s", name, t, fourdgs_status_name(p),
          fourdgs_status_name(r));
    if (p == FOURDGS_OK && r == FOURDGS_OK) {
        CHECK(!info.late && info.time == t && info.shown == t, "%s t=%g: late or moved", name, t);
        CHECK(same_frame(got, want), "%s t=%g: frames differ", name, t);
    } else if (p != FOURDGS_OK && r != FOURDGS_OK) {
        CHECK(refusal_is(p_refusal), "%s t=%g: refusals differ (%s)", name, t, p_refusal);
    }
    fourdgs_frame_free(got);
    fourdgs_frame_free(want);
}

static fourdgs_player_info info_of(const fourdgs_player* player) {
    fourdgs_player_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    EXPECT_OK(fourdgs_player_info_get(player, &i));
    return i;
}

/* Scrubbing: forward, backward, random, past the end. */
static void scrub(const char* path) {
    fourdgs_reader *reader = NULL, *reference = NULL;
    EXPECT_OK(fourdgs_reader_open_file(path, strlen(path), NULL, &reader));
    EXPECT_OK(fourdgs_reader_open_file(path, strlen(path), NULL, &reference));
    if (!reader || !reference) return;
    fourdgs_player* player = NULL;
    EXPECT_OK(fourdgs_player_create(reader, NULL, &player));
    if (!player) return;
    const double d = info_of(player).duration;
    for (double t = 0; t < d; t += 1.0 / 30) frame_at_matches(player, reference, t, path);
    for (double t = d - 0.01; t >= 0; t -= 0.3) frame_at_matches(player, reference, t, path);
    unsigned seed = 25;
    for (int k = 0; k < 20; ++k) {
        seed = seed * 1103515245u + 12345u;
        frame_at_matches(player, reference, d * (double)(seed % 1000) / 1000.0, path);
    }
    frame_at_matches(player, reference, d + 0.5, path);
    frame_at_matches(player, reference, 0.75, path);
    frame_at_matches(player, reference, -0.25, path);  /* keyframe-delta: time-out-of-range */
    const fourdgs_player_info i = info_of(player);
    const int birth = scene_info_of(reference).temporal_model == FOURDGS_MODEL_GAUSSIAN_BIRTH;
    /* The last frame shown: a refused frame shows nothing and moves nothing. */
    CHECK(i.frames > 0 && i.position == (birth ? -0.25 : 0.75), "%s: info frames %llu position %g",
          path, (unsigned long long)i.frames, i.position);
    fourdgs_player_free(player);
    fourdgs_reader_free(reader);
    fourdgs_reader_free(reference);
}

/* On the player's clock: forward at 2x, then backward, then looping; each frame against the
 * reader at the instant the info names; the audio states against the reader's. */
static void on_the_clock(const char* path) {
    fourdgs_reader *reader = NULL, *reference = NULL;
    EXPECT_OK(fourdgs_reader_open_file(path, strlen(path), NULL, &reader));
    EXPECT_OK(fourdgs_reader_open_file(path, strlen(path), NULL, &reference));
    if (!reader || !reference) return;
    fourdgs_player_options o;
    fourdgs_player_options_init(&o);
    o.rate = 2;
    o.playing = 1;
    o.look_ahead = 3;
    fourdgs_player* player = NULL;
    EXPECT_OK(fourdgs_player_create(reader, &o, &player));
    if (!player) return;
    fourdgs_frame *got = NULL, *want = NULL, *previous = NULL;
    fourdgs_frame_create(NULL, &got);
    fourdgs_frame_create(NULL, &want);
    fourdgs_frame_create(NULL, &previous);
    const double d = info_of(player).duration;
    double now = 1000, last = -1;
    int frames = 0, moved = 1, listed = 0;
    for (int phase = 0; phase < 3; ++phase) {
        if (phase == 1) EXPECT_OK(fourdgs_player_set_rate(player, -3));
        if (phase == 2) {
            EXPECT_OK(fourdgs_player_set_loop(player, 1));
            EXPECT_OK(fourdgs_player_set_rate(player, 3));
            EXPECT_OK(fourdgs_player_play(player));
        }
        for (int k = 0; k < 90; ++k, now += 1.0 / 60) {
            fourdgs_player_frame_info info = new_info();
            EXPECT_OK(fourdgs_player_frame(player, now, 1, got, &info));
            EXPECT_OK(fourdgs_reader_evaluate(reference, info.time, NULL, want));
            CHECK(!info.late, "%s: a waited frame is late", path);
            CHECK(same_frame(got, want), "%s now=%g t=%g: frames differ", path, now, info.time);
            /* The previous frame is the reference's at the instant it showed (checked above). */
            CHECK(frames == 0 ? info.all_changed == 1 : 1, "%s: the first frame is whole", path);
            if (frames > 0 && !info.all_changed) {
                EXPECT_OK(fourdgs_reader_evaluate(reference, last, NULL, previous));
                CHECK(changed_rows_hold(&info, got, previous),
                      "%s t=%g: a row not listed as changed differs from t=%g's", path, info.time,
                      last);
                ++listed;
            }
            if (phase == 0 && k > 0 && info.time < d * 0.99) moved &= info.time > last;
            last = info.time;
            ++frames;
            const size_t sources = (size_t)scene_info_of(reference).audio_source_count;
            CHECK(info.audio_count == sources, "%s: %zu audio states for %zu sources", path,
                  info.audio_count, sources);
            for (size_t a = 0; a < sources; ++a) {
                fourdgs_audio_state ps, rs;
                EXPECT_OK(fourdgs_player_audio_state(player, a, &ps));
                EXPECT_OK(fourdgs_reader_audio_state_at(reference, a, info.time, &rs));
                CHECK(ps.active == rs.active && ps.local_time == rs.local_time &&
                          ps.gain == rs.gain && ps.position[0] == rs.position[0],
                      "%s: audio source %zu at %g differs", path, a, info.time);
            }
        }
        if (phase == 1)
            CHECK(info_of(player).state == FOURDGS_PLAYBACK_ENDED && last == 0,
                  "%s: reverse play ends at 0 (at %g)", path, last);
    }
    CHECK(moved, "%s: the clock did not move forward", path);
    CHECK(listed > 0, "%s: no frame listed its changed rows", path);
    CHECK(info_of(player).state == FOURDGS_PLAYBACK_PLAYING, "%s: looping stopped", path);
    fourdgs_frame_free(got);
    fourdgs_frame_free(want);
    fourdgs_frame_free(previous);
    fourdgs_player_free(player);
    fourdgs_reader_free(reader);
    fourdgs_reader_free(reference);
}

/* ------------------------------------------------------------------------------------------ */
/* A keyframe-delta file from a pipe. */

static void from_pipe(const char* path) {
    feeder f;
    const bytes data = read_file(path);
    const int fd = data.size ? pipe_of(&f, data.data, data.size) : -1;
    if (fd < 0) {
        CHECK(0, "%s: cannot read or pipe", path);
        free(data.data);
        return;
    }
    fourdgs_stream* stream = NULL;
    EXPECT_OK(fourdgs_stream_open_fd(fd, 1, NULL, &stream));
    fourdgs_reader* reference = NULL;
    EXPECT_OK(fourdgs_reader_open_file(path, strlen(path), NULL, &reference));
    const fourdgs_reader* scene = NULL;
    if (stream) EXPECT_OK(fourdgs_stream_scene(stream, &scene));
    fourdgs_player* player = NULL;
    if (scene) EXPECT_OK(fourdgs_player_create(scene, NULL, &player));
    if (player && reference) {
        const double d = info_of(player).duration;
        for (double t = 0; t < d; t += 0.1) frame_at_matches(player, reference, t, path);
        fourdgs_frame* frame = NULL;
        fourdgs_frame_create(NULL, &frame);
        CHECK(fourdgs_player_frame_at(player, 0.05, 1, frame, NULL) == FOURDGS_INVALID_ARGUMENT &&
                  refusal_is("not-seekable"),
              "%s: a seek backwards on a pipe is not-seekable", path);
        CHECK(fourdgs_player_set_rate(player, -1) == FOURDGS_INVALID_ARGUMENT &&
                  refusal_is("not-seekable"),
              "%s: a negative rate on a pipe is not-seekable", path);
        fourdgs_frame_free(frame);
    }
    fourdgs_player_free(player);
    fourdgs_stream_free(stream);
    pthread_join(f.thread, NULL);
    fourdgs_reader_free(reference);
    free(data.data);
}

static void arguments(const char* path) {
    fourdgs_reader* reader = NULL;
    EXPECT_OK(fourdgs_reader_open_file(path, strlen(path), NULL, &reader));
    fourdgs_player* player = NULL;
    CHECK(fourdgs_player_create(NULL, NULL, &player) == FOURDGS_INVALID_ARGUMENT &&
              refusal_is("null-argument"),
          "a NULL reader is null-argument");
    fourdgs_player_options o;
    fourdgs_player_options_init(&o);
    o.look_ahead = 0;
    CHECK(fourdgs_player_create(reader, &o, &player) == FOURDGS_INVALID_ARGUMENT &&
              refusal_is("invalid-option") && player == NULL,
          "look_ahead 0 is invalid-option");
    o.look_ahead = 1;
    o.struct_size = 0;
    CHECK(fourdgs_player_create(reader, &o, &player) == FOURDGS_INVALID_ARGUMENT,
          "an unset struct_size is refused");
    EXPECT_OK(fourdgs_player_create(reader, NULL, &player));
    fourdgs_frame* frame = NULL;
    fourdgs_frame_create(NULL, &frame);
    CHECK(fourdgs_player_frame(player, NAN, 0, frame, NULL) == FOURDGS_INVALID_ARGUMENT,
          "a NaN now is refused");
    CHECK(fourdgs_player_frame(player, 0, 0, NULL, NULL) == FOURDGS_INVALID_ARGUMENT &&
              refusal_is("null-argument"),
          "a NULL frame is null-argument");
    CHECK(fourdgs_player_seek(player, INFINITY) == FOURDGS_INVALID_ARGUMENT,
          "an infinite seek is refused");
    CHECK(fourdgs_player_set_rate(player, NAN) == FOURDGS_INVALID_ARGUMENT &&
              refusal_is("invalid-option"),
          "a NaN rate is invalid-option");
    fourdgs_audio_state a;
    CHECK(fourdgs_player_audio_state(player, 99, &a) == FOURDGS_NOT_FOUND,
          "an audio source past the last is not found");
    /* Without waiting, the first frame may be late; it is never a refusal. */
    fourdgs_player_frame_info info = new_info();
    EXPECT_OK(fourdgs_player_frame(player, 5.0, 0, frame, &info));
    CHECK(info.late ? info.reason != FOURDGS_LATE_NONE : info.reason == FOURDGS_LATE_NONE,
          "a late frame has a reason, an on-time one none");
    EXPECT_OK(fourdgs_player_pause(player));
    fourdgs_frame_free(frame);
    fourdgs_player_free(player);
    fourdgs_player_free(NULL);
    fourdgs_reader_free(reader);
}

/* ------------------------------------------------------------------------------------------ */
/* fourdgs_reader_evaluate_block_changes: the frame is evaluate_block's, bit for bit, and the
 * rows it lists hold against the frame before — over instants moving within a block, the same
 * instant twice, a block read again and a frame another call filled in between (both whole). */

static void block_changes(const char* path) {
    fourdgs_reader* reader = NULL;
    EXPECT_OK(fourdgs_reader_open_file(path, strlen(path), NULL, &reader));
    if (!reader) return;
    fourdgs_block* block = NULL;
    fourdgs_frame *got = NULL, *want = NULL, *previous = NULL;
    fourdgs_block_create(NULL, &block);
    fourdgs_frame_create(NULL, &got);
    fourdgs_frame_create(NULL, &want);
    fourdgs_frame_create(NULL, &previous);
    const double d = scene_info_of(reader).duration_sec;
    int listed = 0, fewer = 0;
    for (int k = 0; k < 48; ++k) {
        const double t = d * (0.05 + 0.9 * (k - k % 3 / 2) / 48.0);  /* every third repeats */
        const int reread = k % 12 == 0, foreign = k % 12 == 7;
        if (reread) EXPECT_OK(fourdgs_reader_state_at(reader, t, block));
        if (foreign) EXPECT_OK(fourdgs_reader_evaluate(reader, t, NULL, got));
        fourdgs_frame_changes changes;
        memset(&changes, 0, sizeof changes);
        changes.struct_size = sizeof changes;
        EXPECT_OK(fourdgs_reader_evaluate_block_changes(reader, block, t, NULL, got, &changes));
        EXPECT_OK(fourdgs_reader_evaluate_block(reader, block, t, NULL, want));
        CHECK(same_frame(got, want), "%s t=%g: the frame is not evaluate_block's", path, t);
        if (reread || foreign)
            CHECK(changes.all_changed == 1, "%s t=%g: a %s block is not whole", path, t,
                  reread ? "read again" : "filled by another call");
        if (!changes.all_changed) {
            fourdgs_player_frame_info info = new_info();
            info.changed_rows = changes.changed_rows;
            info.changed_count = changes.changed_count;
            CHECK(changed_rows_hold(&info, got, previous),
                  "%s t=%g: a row not listed as changed differs from the frame before", path, t);
            ++listed;
            fewer += changes.changed_count < columns_of(got).count;
            if (k % 3 == 2)
                CHECK(changes.changed_count == 0, "%s t=%g: the same instant again lists %zu rows",
                      path, t, changes.changed_count);
        }
        EXPECT_OK(fourdgs_reader_evaluate_block(reader, block, t, NULL, previous));
    }
    CHECK(listed >= 24 && fewer >= 4, "%s: %d frames listed their rows, %d fewer than all", path,
          listed, fewer);
    /* The same instant again lists nothing; append is refused; NULL changes too. */
    fourdgs_frame_changes changes;
    memset(&changes, 0, sizeof changes);
    changes.struct_size = sizeof changes;
    EXPECT_OK(fourdgs_reader_evaluate_block_changes(reader, block, d / 2, NULL, got, &changes));
    EXPECT_OK(fourdgs_reader_evaluate_block_changes(reader, block, d / 2, NULL, got, &changes));
    CHECK(!changes.all_changed && changes.changed_count == 0,
          "%s: the same instant again lists %zu rows", path, changes.changed_count);
    fourdgs_evaluate_options eo;
    fourdgs_evaluate_options_init(&eo);
    eo.append = 1;
    CHECK(fourdgs_reader_evaluate_block_changes(reader, block, d / 2, &eo, got, &changes) ==
                  FOURDGS_INVALID_ARGUMENT && refusal_is("invalid-option"),
          "%s: append is not refused", path);
    CHECK(fourdgs_reader_evaluate_block_changes(reader, block, d / 2, NULL, got, NULL) ==
                  FOURDGS_INVALID_ARGUMENT && refusal_is("null-argument"),
          "%s: NULL changes is not refused", path);
    changes.struct_size = 0;
    CHECK(fourdgs_reader_evaluate_block_changes(reader, block, d / 2, NULL, got, &changes) ==
                  FOURDGS_INVALID_ARGUMENT && refusal_is("invalid-struct-size"),
          "%s: an unsized fourdgs_frame_changes is not refused", path);
    fourdgs_frame_free(got);
    fourdgs_frame_free(want);
    fourdgs_frame_free(previous);
    fourdgs_block_free(block);
    fourdgs_reader_free(reader);
}

/* ------------------------------------------------------------------------------------------ */
/* fourdgs_binding_support.h. */

static fourdgs_state_span span_at(const fourdgs_reader* reader, double t) {
    fourdgs_state_span s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    EXPECT_OK(fourdgs_reader_state_span(reader, t, &s));
    return s;
}

/* Which state covers t: the span holds t, every instant of it has the same key, the next span
 * starts where it ends with the next key, and an instant outside every span has none (nor any
 * chunks). */
static void state_spans(const char* path) {
    fourdgs_reader* reader = NULL;
    EXPECT_OK(fourdgs_reader_open_file(path, strlen(path), NULL, &reader));
    if (!reader) return;
    const double d = scene_info_of(reader).duration_sec;
    int covered = 0;
    for (int k = -4; k <= 52; ++k) {
        const double t = d * k / 48.0;
        const fourdgs_state_span s = span_at(reader, t);
        size_t count = 0;
        const fourdgs_status cf = fourdgs_reader_chunks_for(reader, t, NULL, 0, &count);
        if (s.key == FOURDGS_NO_STATE) {
            CHECK(s.t0 == 0 && s.t1 == 0 && (cf != FOURDGS_OK || count == 0),
                  "%s t=%g: no state, yet chunks or an interval", path, t);
            continue;
        }
        ++covered;
        CHECK(s.t0 <= t && t < s.t1, "%s t=%g: outside its span [%g, %g)", path, t, s.t0, s.t1);
        CHECK(cf == FOURDGS_OK, "%s t=%g: a state but no chunks", path, t);
        const fourdgs_state_span mid = span_at(reader, s.t0 + (s.t1 - s.t0) / 2);
        const fourdgs_state_span first = span_at(reader, s.t0);
        CHECK(mid.key == s.key && first.key == s.key, "%s t=%g: one span, two keys", path, t);
        const fourdgs_state_span next = span_at(reader, s.t1);
        CHECK(next.key == FOURDGS_NO_STATE || (next.key == s.key + 1 && next.t0 == s.t1),
              "%s t=%g: the span after [%g, %g) is not the next one", path, t, s.t0, s.t1);
    }
    CHECK(covered >= 40, "%s: %d instants covered", path, covered);
    fourdgs_state_span s;
    memset(&s, 0, sizeof s);
    CHECK(fourdgs_reader_state_span(reader, 0.5, &s) == FOURDGS_INVALID_ARGUMENT &&
              refusal_is("invalid-struct-size"),
          "%s: an unsized fourdgs_state_span is not refused", path);
    s.struct_size = sizeof s;
    CHECK(fourdgs_reader_state_span(reader, NAN, &s) == FOURDGS_INVALID_ARGUMENT,
          "%s: a NaN instant is not refused", path);
    /* A caller that knows only struct_size and key: nothing written past them. */
    unsigned char small[sizeof(size_t) + sizeof(uint64_t) + 8];
    memset(small, 0xab, sizeof small);
    const size_t small_size = sizeof(size_t) + sizeof(uint64_t);
    memcpy(small, &small_size, sizeof small_size);
    EXPECT_OK(fourdgs_reader_state_span(reader, d / 2, (fourdgs_state_span*)(void*)small));
    CHECK(small[small_size] == 0xab && small[sizeof small - 1] == 0xab,
          "%s: fourdgs_reader_state_span wrote past struct_size", path);
    fourdgs_reader_free(reader);
}

static fourdgs_playback_clock_info clock_info(const fourdgs_playback_clock* clock) {
    fourdgs_playback_clock_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    EXPECT_OK(fourdgs_playback_clock_info_get(clock, &i));
    return i;
}

/* Control k of one_clock's sequence, on the player and on the clock alike. */
static void control_both(fourdgs_player* p, fourdgs_playback_clock* c, int k, double d) {
    if (k == 10) {
        EXPECT_OK(fourdgs_player_pause(p));
        EXPECT_OK(fourdgs_playback_clock_pause(c));
    } else if (k == 13 || k == 31) {
        EXPECT_OK(fourdgs_player_play(p));
        EXPECT_OK(fourdgs_playback_clock_play(c));
    } else if (k == 20 || k == 45) {
        EXPECT_OK(fourdgs_player_set_rate(p, k == 20 ? -2 : 3.5));
        EXPECT_OK(fourdgs_playback_clock_set_rate(c, k == 20 ? -2 : 3.5));
    } else if (k == 30) {
        EXPECT_OK(fourdgs_player_seek(p, d * 0.6));
        EXPECT_OK(fourdgs_playback_clock_seek(c, d * 0.6));
    } else if (k == 40) {
        EXPECT_OK(fourdgs_player_set_loop(p, 1));
        EXPECT_OK(fourdgs_playback_clock_set_loop(c, 1));
    }
}

/* The clock is the player's: the same controls and `now`s give the same instants and states, on
 * a fourdgs_playback_clock and on a fourdgs_player; and its arithmetic on a scene 2 s long. */
static void one_clock(const char* path) {
    fourdgs_reader* reader = NULL;
    EXPECT_OK(fourdgs_reader_open_file(path, strlen(path), NULL, &reader));
    if (!reader) return;
    fourdgs_player_options o;
    fourdgs_player_options_init(&o);
    o.start = 0.25;
    o.rate = 1.5;
    o.playing = 1;
    fourdgs_player* player = NULL;
    EXPECT_OK(fourdgs_player_create(reader, &o, &player));
    fourdgs_playback_clock* clock = NULL;
    const double d = scene_info_of(reader).duration_sec;
    EXPECT_OK(fourdgs_playback_clock_create(NULL, d, o.start, o.rate, 0, 1, &clock));
    fourdgs_frame* frame = NULL;
    fourdgs_frame_create(NULL, &frame);
    if (!player || !clock || !frame) return;
    double now = 100;
    for (int k = 0; k < 60; ++k, now += d / 20) {
        control_both(player, clock, k, d);
        fourdgs_player_frame_info info = new_info();
        EXPECT_OK(fourdgs_player_frame(player, now, 1, frame, &info));
        double t = -1;
        EXPECT_OK(fourdgs_playback_clock_frame(clock, now, &t));
        CHECK(info.time == t && info.state == clock_info(clock).state,
              "%s frame %d: the player shows %g (%u), the clock says %g (%u)", path, k, info.time,
              info.state, t, clock_info(clock).state);
    }
    fourdgs_frame_free(frame);
    fourdgs_player_free(player);
    fourdgs_playback_clock_free(clock);
    fourdgs_reader_free(reader);
}

static void clock_arithmetic(void) {
    fourdgs_playback_clock* c = NULL;
    EXPECT_OK(fourdgs_playback_clock_create(NULL, 2.0, 0.5, 2.0, 0, 1, &c));
    if (!c) return;
    double t = -1;
    EXPECT_OK(fourdgs_playback_clock_frame(c, 10.0, &t));
    CHECK(t == 0.5, "the first frame shows the start (%g)", t);
    EXPECT_OK(fourdgs_playback_clock_frame(c, 10.25, &t));
    CHECK(t == 1.0, "t = anchor + rate x (now - anchor_now) (%g)", t);
    EXPECT_OK(fourdgs_playback_clock_frame(c, 11.0, &t));
    CHECK(t < 2.0 && t > 1.999 && clock_info(c).state == FOURDGS_PLAYBACK_ENDED,
          "past the end: held before it, ended (%g, %u)", t, clock_info(c).state);
    EXPECT_OK(fourdgs_playback_clock_play(c));
    EXPECT_OK(fourdgs_playback_clock_frame(c, 20.0, &t));
    CHECK(t == 0 && clock_info(c).state == FOURDGS_PLAYBACK_PLAYING, "play after the end starts over (%g)", t);
    EXPECT_OK(fourdgs_playback_clock_set_loop(c, 1));
    EXPECT_OK(fourdgs_playback_clock_frame(c, 21.25, &t));
    CHECK(t == 0.5, "looping wraps (%g)", t);
    EXPECT_OK(fourdgs_playback_clock_set_rate(c, -1));
    EXPECT_OK(fourdgs_playback_clock_frame(c, 22.25, &t));
    CHECK(t == 1.5, "backward from the last frame's instant, wrapped (%g)", t);
    CHECK(fourdgs_playback_clock_frame(c, INFINITY, &t) == FOURDGS_INVALID_ARGUMENT &&
              refusal_is("non-finite-input"), "a non-finite now is refused");
    CHECK(fourdgs_playback_clock_seek(NULL, 1) == FOURDGS_INVALID_ARGUMENT, "a NULL clock is refused");
    fourdgs_playback_clock* bad = NULL;
    CHECK(fourdgs_playback_clock_create(NULL, NAN, 0, 1, 0, 0, &bad) == FOURDGS_INVALID_ARGUMENT && !bad,
          "a NaN duration is refused");
    fourdgs_playback_clock_free(c);
    fourdgs_playback_clock_free(NULL);
}

/* The spellings are the library's: the status names fourdgs_status_name gives, the temporal
 * model each file's scene info names, and a NULL past the last value of each enum. */
static void spellings(const char* birth_path, const char* keyframe_path) {
    for (uint32_t s = 0; s <= FOURDGS_NOT_FOUND; ++s)
        CHECK(strcmp(fourdgs_enum_name(FOURDGS_ENUM_STATUS, s), fourdgs_status_name((fourdgs_status)s)) == 0,
              "status %u: two spellings", s);
    const char* paths[] = {birth_path, keyframe_path};
    for (int k = 0; k < 2; ++k) {
        fourdgs_reader* reader = NULL;
        EXPECT_OK(fourdgs_reader_open_file(paths[k], strlen(paths[k]), NULL, &reader));
        if (!reader) continue;
        const fourdgs_scene_info i = scene_info_of(reader);
        CHECK(string_is(i.temporal_model_name, fourdgs_enum_name(FOURDGS_ENUM_TEMPORAL_MODEL, i.temporal_model)),
              "%s: the temporal model's two spellings differ", paths[k]);
        fourdgs_reader_free(reader);
    }
    static const struct { fourdgs_enum which; uint32_t last; const char* name; } last[] = {
        {FOURDGS_ENUM_STATUS, FOURDGS_NOT_FOUND, "not-found"},
        {FOURDGS_ENUM_TEMPORAL_MODEL, 1, "keyframe-delta"}, {FOURDGS_ENUM_BLOCK_KIND, 4, "state"},
        {FOURDGS_ENUM_PLAYBACK_STATE, 2, "ended"}, {FOURDGS_ENUM_LATE_REASON, 4, "decoding"},
        {FOURDGS_ENUM_SEVERITY, 2, "warning"}, {FOURDGS_ENUM_AXIS, 5, "-z"},
        {FOURDGS_ENUM_LENGTH_UNIT, 6, "inch"}, {FOURDGS_ENUM_CAMERA_MODEL, 3, "kannala-brandt"},
        {FOURDGS_ENUM_INTERPOLATION, 1, "step"}};
    for (size_t k = 0; k < sizeof last / sizeof last[0]; ++k) {
        const char* name = fourdgs_enum_name(last[k].which, last[k].last);
        CHECK(name && strcmp(name, last[k].name) == 0, "enum %d value %u: %s", (int)last[k].which,
              last[k].last, name ? name : "NULL");
        CHECK(fourdgs_enum_name(last[k].which, last[k].last + 1) == NULL &&
                  fourdgs_enum_name(last[k].which, 1000) == NULL,
              "enum %d: a name past the last value", (int)last[k].which);
    }
    CHECK(fourdgs_enum_name(FOURDGS_ENUM_SEVERITY, 0) == NULL, "severity 0 has a name");
    CHECK(fourdgs_enum_name((fourdgs_enum)99, 0) == NULL, "an unknown enum has names");
    CHECK(fourdgs_sh_coefficient(0) == -4.0f && fourdgs_sh_coefficient(255) == 4.0f &&
              fourdgs_sh_coefficient(51) == -4.0f + 51.0f * (8.0f / 255.0f),
          "the SH byte map is not section 6.5's");
}

int main(int argc, char** argv) {
    /* check.h's helpers this program does not use */
    (void)trickle_read, (void)trickle_release, (void)block_info, (void)block_columns;
    const char* corpus = NULL;
    for (int i = 1; i + 1 < argc; ++i)
        if (strcmp(argv[i], "--corpus") == 0) corpus = argv[i + 1];
    if (!corpus) {
        fprintf(stderr, "usage: c_player_test --corpus DIR\n");
        return 2;
    }
    static const char* files[] = {"many-chunks", "extras-audio-sources", "kd-chained",
                                  "kd-churn", "kd-mixed-modes"};
    char path[4096];
    for (size_t k = 0; k < sizeof files / sizeof files[0]; ++k) {
        snprintf(path, sizeof path, "%s/%s.4dgs", corpus, files[k]);
        scrub(path);
        on_the_clock(path);
        if (files[k][0] == 'k') from_pipe(path);
        block_changes(path);
        state_spans(path);
        one_clock(path);
    }
    clock_arithmetic();
    char keyframes[4096];
    snprintf(path, sizeof path, "%s/many-chunks.4dgs", corpus);
    snprintf(keyframes, sizeof keyframes, "%s/kd-chained.4dgs", corpus);
    spellings(path, keyframes);
    snprintf(path, sizeof path, "%s/many-chunks.4dgs", corpus);
    arguments(path);
    printf("c_player_test: %d checks, %d failed\n", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}
