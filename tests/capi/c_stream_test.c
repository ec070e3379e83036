/* c_stream_test.c — the C ABI's streaming reader and URL entry points, from C11.
 *
 *   c_stream_test --data DIR              every fixture of DIR streamed into blocks through a
 *                                         pipe (fourdgs_stream_open_fd) and through callbacks,
 *                                         evaluated against the stream's scene and compared with
 *                                         the random-access reader; a cut stream; a block that
 *                                         outlives its stream; argument errors
 *   c_stream_test --url BASE --data DIR   files of DIR read from BASE/<name> (a web server,
 *                                         tests/http/harness.py) with fourdgs_reader_open_url
 *                                         and fourdgs_stream_open_url, against the local file
 *
 * Prints one line per failed check and exits non-zero when any failed. */
#include <fourdgs/fourdgs.h>

#include <math.h>
#include <pthread.h>
#include <unistd.h>

#include "check.h"

static int refusal_is(const char* want) { return string_is(last_error().refusal, want); }

/* ------------------------------------------------------------------------------------------ */
/* What a stream yields, against what the random-access reader says. */

typedef struct summary {
    size_t chunks;
    uint64_t gaussians;
    size_t visible; /* evaluated at `t`: every chunk appended (birth), the covering state (kd) */
    double checksum;
} summary;

static double frame_checksum(const fourdgs_frame* frame, size_t* count) {
    fourdgs_frame_columns c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    double sum = 0;
    if (fourdgs_frame_columns_get(frame, &c) != FOURDGS_OK) return -1;
    for (size_t i = 0; i < c.count * 3; ++i) sum += c.center[i] * (double)(i % 7 + 1);
    for (size_t i = 0; i < c.count * 4; ++i) sum += c.color[i] * (double)(i % 5 + 1);
    *count = c.count;
    return sum;
}

/* Drains `s` into one block; returns the status that ended it (FOURDGS_OK at a clean end). */
static fourdgs_status drain(fourdgs_stream* s, double t, summary* out) {
    const fourdgs_reader* scene = NULL;
    EXPECT_OK(fourdgs_stream_scene(s, &scene));
    const int kd = scene_info_of(scene).temporal_model == FOURDGS_MODEL_KEYFRAME_DELTA;
    fourdgs_block* block = NULL;
    EXPECT_OK(fourdgs_block_create(NULL, &block));
    fourdgs_frame* frame = NULL;
    EXPECT_OK(fourdgs_frame_create(NULL, &frame));
    fourdgs_evaluate_options eo;
    fourdgs_evaluate_options_init(&eo);
    memset(out, 0, sizeof *out);
    fourdgs_status st;
    int evaluated = 0;
    for (;;) {
        uint32_t produced = 7;
        st = fourdgs_stream_next_block(s, block, &produced);
        if (st != FOURDGS_OK) {
            CHECK(produced == 7, "produced written on failure");
            CHECK(block_info(block).kind == FOURDGS_BLOCK_EMPTY, "a failed read left a block");
            break;
        }
        CHECK(produced == 0 || produced == 1, "produced = %u", produced);
        if (!produced) {
            CHECK(block_info(block).kind == FOURDGS_BLOCK_EMPTY, "a block at the end");
            break;
        }
        const fourdgs_block_info bi = block_info(block);
        const fourdgs_block_columns c = block_columns(block);
        CHECK(bi.kind == (kd ? FOURDGS_BLOCK_STATE : FOURDGS_BLOCK_CHUNK), "block kind %u", bi.kind);
        CHECK(bi.t0 < bi.t1 && bi.offset > 0, "chunk interval [%g, %g) at %llu", bi.t0, bi.t1,
              (unsigned long long)bi.offset);
        CHECK(!kd || bi.live_count == c.count, "live count %llu of %zu",
              (unsigned long long)bi.live_count, c.count);
        CHECK(c.count == 0 || (c.position && c.scale && c.rotation && c.color && c.mu_t &&
                               c.sigma_t && c.win_lo && c.win_hi && c.flags && c.window_index),
              "columns missing");
        CHECK(kd == (c.gaussian_id != NULL) || c.count == 0, "gaussian_id only for keyframe-delta");
        for (size_t i = 0; i < c.count; ++i)
            CHECK(c.win_lo[i] < c.win_hi[i] && c.color[i * 4 + 3] >= 0 && c.color[i * 4 + 3] <= 1,
                  "gaussian %zu of chunk %zu", i, out->chunks);
        out->chunks++;
        out->gaussians += c.count;
        if (!kd || (bi.t0 <= t && t < bi.t1)) {
            eo.append = evaluated && !kd;
            EXPECT_OK(fourdgs_reader_evaluate_block(scene, block, t, &eo, frame));
            evaluated = 1;
        }
    }
    if (evaluated) out->checksum = frame_checksum(frame, &out->visible);
    fourdgs_frame_free(frame);
    fourdgs_block_free(block);
    return st;
}

static summary random_access(fourdgs_reader* r, double t) {
    summary out;
    memset(&out, 0, sizeof out);
    fourdgs_frame* frame = NULL;
    EXPECT_OK(fourdgs_frame_create(NULL, &frame));
    EXPECT_OK(fourdgs_reader_evaluate(r, t, NULL, frame));
    out.checksum = frame_checksum(frame, &out.visible);
    fourdgs_frame_free(frame);
    return out;
}

static double middle_of(fourdgs_reader* r) { return scene_info_of(r).duration_sec * 0.37; }

static void compare(const char* what, const summary* got, const summary* want) {
    CHECK(got->visible == want->visible, "%s: %zu visible, the reader %zu", what, got->visible,
          want->visible);
    CHECK(fabs(got->checksum - want->checksum) <= 1e-9 * (1 + fabs(want->checksum)),
          "%s: frames differ (%.17g vs %.17g)", what, got->checksum, want->checksum);
}

static void test_fixture(const char* dir, const char* name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    bytes b = read_file(path);
    CHECK(b.size > 0, "cannot read %s", path);
    if (b.size == 0) return;
    fourdgs_reader* r = NULL;
    EXPECT_OK(fourdgs_reader_open_memory(b.data, b.size, NULL, &r));
    if (!r) return;
    const double t = middle_of(r);
    const summary want = random_access(r, t);
    CHECK(want.visible > 0, "%s: nothing visible at t = %g: the comparison would be empty", name, t);

    /* Through a pipe, as the bytes arrive. */
    feeder f;
    int fd = pipe_of(&f, b.data, b.size);
    fourdgs_stream* s = NULL;
    EXPECT_OK(fourdgs_stream_open_fd(fd, 1, NULL, &s));
    summary piped;
    memset(&piped, 0, sizeof piped);
    if (s) {
        EXPECT_OK(drain(s, t, &piped));
        CHECK(piped.chunks > 0, "%s: no chunk came through the pipe", name);
        fourdgs_block* block = NULL;
        EXPECT_OK(fourdgs_block_create(NULL, &block));
        uint32_t produced = 9;
        EXPECT_OK(fourdgs_stream_next_block(s, block, &produced)); /* past the end: the end */
        CHECK(produced == 0 && block_info(block).kind == FOURDGS_BLOCK_EMPTY,
              "%s: a block after the end", name);
        fourdgs_block_free(block);
        fourdgs_stream_free(s);
    }
    pthread_join(f.thread, NULL);
    compare(name, &piped, &want);

    /* Through callbacks, seven bytes at a time. */
    trickle tr = {b.data, b.size, 0, 7, 0};
    fourdgs_stream_callbacks cb = {&tr, trickle_read, trickle_release};
    s = NULL;
    EXPECT_OK(fourdgs_stream_open_callbacks(&cb, NULL, &s));
    summary trickled;
    memset(&trickled, 0, sizeof trickled);
    if (s) {
        EXPECT_OK(drain(s, t, &trickled));
        fourdgs_stream_free(s);
    }
    CHECK(tr.releases == 1, "%s: release called %d times", name, tr.releases);
    CHECK(trickled.chunks == piped.chunks && trickled.gaussians == piped.gaussians,
          "%s: callbacks and pipe disagree", name);
    compare(name, &trickled, &want);

    /* Cut after two thirds: the complete chunks, then "truncated". */
    fd = pipe_of(&f, b.data, b.size * 2 / 3);
    s = NULL;
    fourdgs_status opened = fourdgs_stream_open_fd(fd, 1, NULL, &s);
    if (opened == FOURDGS_OK) {
        summary cut;
        fourdgs_status end = drain(s, t, &cut);
        CHECK(end == FOURDGS_TRUNCATED && refusal_is("truncated"),
              "%s: a cut stream ended with %s", name, fourdgs_status_name(end));
        CHECK(cut.chunks <= piped.chunks, "%s: %zu chunks from a cut stream, %zu whole", name,
              cut.chunks, piped.chunks);
        fourdgs_block* block = NULL;
        EXPECT_OK(fourdgs_block_create(NULL, &block));
        uint32_t produced = 9;
        CHECK(fourdgs_stream_next_block(s, block, &produced) == FOURDGS_TRUNCATED && produced == 9,
              "%s: the failure does not repeat", name);
        fourdgs_block_free(block);
        fourdgs_stream_free(s);
    } else {
        CHECK(opened == FOURDGS_TRUNCATED, "%s: cut in the front matter: %s", name,
              fourdgs_status_name(opened));
    }
    pthread_join(f.thread, NULL);
    fourdgs_reader_free(r);
    free(b.data);
}

/* A block filled by a stream is the caller's: it stays whole after the stream is freed. */
static void test_block_outlives_stream(const char* dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/birth-zstd-sh3-balanced.4dgs", dir);
    bytes b = read_file(path);
    trickle tr = {b.data, b.size, 0, 0, 0};
    fourdgs_stream_callbacks cb = {&tr, trickle_read, trickle_release};
    fourdgs_stream* s = NULL;
    fourdgs_block* block = NULL;
    EXPECT_OK(fourdgs_block_create(NULL, &block));
    EXPECT_OK(fourdgs_stream_open_callbacks(&cb, NULL, &s));
    uint32_t produced = 0;
    if (s) EXPECT_OK(fourdgs_stream_next_block(s, block, &produced));
    CHECK(produced == 1, "no first block");
    const fourdgs_block_columns before = block_columns(block);
    double sum = 0;
    for (size_t i = 0; i < before.count * 3; ++i) sum += before.position[i];
    fourdgs_stream_free(s);
    CHECK(tr.releases == 1, "release called %d times", tr.releases);
    const fourdgs_block_columns after = block_columns(block);
    double again = 0;
    for (size_t i = 0; i < after.count * 3; ++i) again += after.position[i];
    CHECK(after.count == before.count && after.count > 0 && again == sum &&
              after.sh_per_gaussian == 45 && after.sh != NULL,
          "the block changed when its stream was freed");
    fourdgs_block_free(block);
    free(b.data);
}

static void test_arguments(void) {
    fourdgs_stream* s = NULL;
    uint32_t produced = 0;
    CHECK(fourdgs_stream_open_fd(-1, 0, NULL, &s) == FOURDGS_INVALID_ARGUMENT, "fd -1");
    CHECK(fourdgs_stream_open_callbacks(NULL, NULL, &s) == FOURDGS_INVALID_ARGUMENT, "NULL cb");
    trickle tr = {(const unsigned char*)"", 0, 0, 0, 0};
    fourdgs_stream_callbacks no_read = {&tr, NULL, trickle_release};
    CHECK(fourdgs_stream_open_callbacks(&no_read, NULL, &s) == FOURDGS_INVALID_ARGUMENT,
          "no read callback");
    CHECK(tr.releases == 1, "release on a refused open: %d", tr.releases);
    fourdgs_stream_callbacks empty = {&tr, trickle_read, trickle_release};
    CHECK(fourdgs_stream_open_callbacks(&empty, NULL, &s) != FOURDGS_OK, "an empty stream opens");
    CHECK(tr.releases == 2, "release on a failed open: %d", tr.releases);
    const char* junk = "this is not a 4dgs file at all";
    trickle bad = {(const unsigned char*)junk, strlen(junk), 0, 0, 0};
    fourdgs_stream_callbacks not_4dgs = {&bad, trickle_read, trickle_release};
    CHECK(fourdgs_stream_open_callbacks(&not_4dgs, NULL, &s) == FOURDGS_MALFORMED &&
              refusal_is("magic-mismatch"),
          "a stream that is not .4dgs");
    fourdgs_block* block = NULL;
    EXPECT_OK(fourdgs_block_create(NULL, &block));
    CHECK(fourdgs_stream_next_block(NULL, block, &produced) == FOURDGS_INVALID_ARGUMENT &&
              refusal_is("null-argument"),
          "NULL stream");
    const fourdgs_reader* scene = NULL;
    CHECK(fourdgs_stream_scene(NULL, &scene) == FOURDGS_INVALID_ARGUMENT && scene == NULL,
          "the scene of a NULL stream");
    fourdgs_block_free(block);
    CHECK(fourdgs_stream_open_url(NULL, 0, NULL, &s) == FOURDGS_INVALID_ARGUMENT, "NULL url");
    fourdgs_reader* r = NULL;
    const char* not_url = "file.4dgs";
    CHECK(fourdgs_reader_open_url(not_url, strlen(not_url), NULL, &r) == FOURDGS_INVALID_ARGUMENT ||
              fourdgs_last_status() == FOURDGS_UNSUPPORTED,
          "a path given as a URL");
    fourdgs_stream_free(NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* Over HTTP. */

static void test_url(const char* base, const char* dir, const char* name) {
    char url[4096], path[4096];
    snprintf(url, sizeof url, "%s/%s", base, name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    fourdgs_reader *remote = NULL, *local = NULL;
    EXPECT_OK(fourdgs_reader_open_url(url, strlen(url), NULL, &remote));
    EXPECT_OK(fourdgs_reader_open_file(path, strlen(path), NULL, &local));
    if (!remote || !local) return;
    const double t = middle_of(local);
    const summary want = random_access(local, t);
    const summary got = random_access(remote, t);
    compare(url, &got, &want);

    fourdgs_stream* s = NULL;
    EXPECT_OK(fourdgs_stream_open_url(url, strlen(url), NULL, &s));
    if (s) {
        summary streamed;
        EXPECT_OK(drain(s, t, &streamed));
        compare(url, &streamed, &want);
        fourdgs_stream_free(s);
    }
    fourdgs_validation* v = NULL;
    EXPECT_OK(fourdgs_validate_url(url, strlen(url), NULL, &v));
    fourdgs_validation_free(v);
    fourdgs_reader_free(remote);
    fourdgs_reader_free(local);
}

static void test_missing_url(const char* base) {
    char url[4096];
    snprintf(url, sizeof url, "%s/no-such-file.4dgs", base);
    fourdgs_reader* r = NULL;
    CHECK(fourdgs_reader_open_url(url, strlen(url), NULL, &r) == FOURDGS_IO &&
              refusal_is("http-status"),
          "a missing URL: %s", fourdgs_status_name(fourdgs_last_status()));
    fourdgs_error e = last_error();
    CHECK(e.message.data && strstr(e.message.data, "404") && strstr(e.message.data, url),
          "the message names the URL and the status");
    CHECK(r == NULL, "no reader on failure");
}

int main(int argc, char** argv) {
    const char *data = NULL, *url = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--data") == 0) data = argv[i + 1];
        else if (strcmp(argv[i], "--url") == 0) url = argv[i + 1];
    }
    if (!data) {
        fprintf(stderr, "usage: c_stream_test --data DIR [--url BASE]\n");
        return 2;
    }
    if (url) {
        static const char* corpus[] = {"many-chunks.4dgs", "kd-chained.4dgs", "sh-degree-3.4dgs",
                                       "extras-audio-large.4dgs", "summary-no-index.4dgs"};
        for (size_t i = 0; i < sizeof corpus / sizeof *corpus; ++i) test_url(url, data, corpus[i]);
        test_missing_url(url);
    } else {
        static const char* fixtures[] = {"birth-deflate.4dgs", "birth-extras.4dgs",
                                         "birth-zstd-sh3-balanced.4dgs",
                                         "birth-never-fades-no-index.4dgs",
                                         "keyframe-delta-churn.4dgs"};
        for (size_t i = 0; i < sizeof fixtures / sizeof *fixtures; ++i) test_fixture(data, fixtures[i]);
        test_block_outlives_stream(data);
        test_arguments();
    }
    printf("%d checks, %d failed\n", g_checks, g_failures);
    return g_failures ? 1 : 0;
}
