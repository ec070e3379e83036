/* check.h — what the C tests share: counted checks, the last error, fixture files. Each test
 * program includes it once (the definitions are static). */
#ifndef FOURDGS_TESTS_CAPI_CHECK_H
#define FOURDGS_TESTS_CAPI_CHECK_H

#include <fourdgs/fourdgs.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>
#include <unistd.h>

static int g_checks = 0, g_failures = 0;

static void check_at(int ok, const char* file, int line, const char* what, ...) {
    ++g_checks;
    if (ok) return;
    ++g_failures;
    va_list args;
    va_start(args, what);
    fprintf(stderr, "%s:%d: FAILED: ", file, line);
    vfprintf(stderr, what, args);
    va_end(args);
    fprintf(stderr, "\n");
}
#define CHECK(cond, ...) check_at((cond) ? 1 : 0, __FILE__, __LINE__, __VA_ARGS__)

/* The thread's last error, as a status and a refusal identifier. */
static fourdgs_error last_error(void) {
    fourdgs_error e;
    memset(&e, 0, sizeof e);
    e.struct_size = sizeof e;
    fourdgs_last_error(&e);
    return e;
}

static inline int string_is(fourdgs_string s, const char* want) {
    return s.data != NULL && s.size == strlen(want) && memcmp(s.data, want, s.size) == 0;
}

#define EXPECT_OK(call)                                                                       \
    do {                                                                                      \
        fourdgs_status got_ = (call);                                                         \
        if (got_ != FOURDGS_OK) {                                                             \
            fourdgs_error e_ = last_error();                                                  \
            CHECK(0, "%s: %s %.*s: %.*s", #call, fourdgs_status_name(got_),                   \
                  (int)e_.refusal.size, e_.refusal.data, (int)e_.message.size,                \
                  e_.message.data);                                                           \
        } else {                                                                              \
            CHECK(1, "");                                                                     \
        }                                                                                     \
    } while (0)

/* A whole file in memory (size 0 when it cannot be read). */
typedef struct bytes {
    unsigned char* data;
    size_t size;
} bytes;

static inline bytes read_file(const char* path) {
    bytes b = {NULL, 0};
    FILE* f = fopen(path, "rb");
    if (!f) return b;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (n > 0) {
        b.data = (unsigned char*)malloc((size_t)n);
        if (b.data && fread(b.data, 1, (size_t)n, f) == (size_t)n) b.size = (size_t)n;
    }
    fclose(f);
    return b;
}

/* A function `name(handle)` that returns the size-tagged struct `type` filled by
 * `get(handle, &out)`, the call checked. */
#define FILLED_BY(name, type, handle_type, get)                                               \
    static inline type name(const handle_type* handle) {                                           \
        type out;                                                                             \
        memset(&out, 0, sizeof out);                                                          \
        out.struct_size = sizeof out;                                                         \
        EXPECT_OK(get(handle, &out));                                                         \
        return out;                                                                           \
    }
/* What a block holds, its lent columns, and a reader's (or a stream's) scene. */
FILLED_BY(block_info, fourdgs_block_info, fourdgs_block, fourdgs_block_info_get)
FILLED_BY(block_columns, fourdgs_block_columns, fourdgs_block, fourdgs_block_columns_get)
FILLED_BY(scene_info_of, fourdgs_scene_info, fourdgs_reader, fourdgs_reader_scene_info)

/* A stream's read callback over bytes in memory, `step` bytes at a time at most (0: as many as
 * asked): a stream must not care how its bytes arrive. */
typedef struct trickle {
    const unsigned char* data;
    size_t size, at, step;
    int releases;
} trickle;

static int64_t trickle_read(void* user, void* buffer, uint64_t length) {
    trickle* t = (trickle*)user;
    size_t n = t->size - t->at;
    if (t->step && n > t->step) n = t->step;
    if (n > length) n = (size_t)length;
    memcpy(buffer, t->data + t->at, n);
    t->at += n;
    return (int64_t)n;
}
static inline void trickle_release(void* user) { ((trickle*)user)->releases++; }

/* ------------------------------------------------------------------------------------------ */
/* Feeding a pipe from a second thread (static inline: programs that do not use it get no
 * warning). */

typedef struct feeder {
    int fd;
    const unsigned char* data;
    size_t size;
    pthread_t thread;
} feeder;

static inline void* feed(void* arg) {
    feeder* f = (feeder*)arg;
    size_t done = 0;
    while (done < f->size) {
        ssize_t n = write(f->fd, f->data + done, f->size - done);
        if (n <= 0) break; /* the reader closed its end */
        done += (size_t)n;
    }
    close(f->fd);
    return NULL;
}

/* Returns the read end of a pipe that receives data[0, size) and then ends. */
static inline int pipe_of(feeder* f, const unsigned char* data, size_t size) {
    int fds[2];
    if (pipe(fds) != 0) return -1;
    f->fd = fds[1];
    f->data = data;
    f->size = size;
    pthread_create(&f->thread, NULL, feed, f);
    return fds[0];
}

#endif
