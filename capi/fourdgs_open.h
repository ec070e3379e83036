/* fourdgs_open.h — the C ABI, fourdgs.h's part: status and errors, allocator hooks, opening.
 *
 * One of the parts fourdgs.h includes, in order, inside its extern "C" block; it relies on the
 * parts before it and on fourdgs.h's macros. Include <fourdgs/fourdgs.h>, never a part alone:
 * the rules that hold for every call are at the top of fourdgs.h. */
#ifndef FOURDGS_OPEN_H
#define FOURDGS_OPEN_H

#ifndef FOURDGS_H
#error "fourdgs_open.h is a part of fourdgs.h: include <fourdgs/fourdgs.h>"
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

#endif /* FOURDGS_OPEN_H */
