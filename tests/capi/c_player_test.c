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
    }
    snprintf(path, sizeof path, "%s/many-chunks.4dgs", corpus);
    arguments(path);
    printf("c_player_test: %d checks, %d failed\n", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}
