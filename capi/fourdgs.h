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

/* The declarations, by part (each part's sections in the order they were written). */
#include "fourdgs_open.h" /* status and errors, allocator hooks, opening */
#include "fourdgs_scene.h" /* scene information, the state at time t (frames), decoded blocks */
#include "fourdgs_play.h" /* streaming, playback */
#include "fourdgs_validate.h" /* validation */
#include "fourdgs_write.h" /* writing, and writing window by window (the streaming writer) */
#include "fourdgs_binding_support.h" /* what the bindings ask the library: state spans, the clock,
                                         enum spellings, PLY */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FOURDGS_H */
