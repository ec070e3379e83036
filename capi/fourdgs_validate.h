/* fourdgs_validate.h — the C ABI, fourdgs.h's part: validation.
 *
 * One of the parts fourdgs.h includes, in order, inside its extern "C" block; it relies on the
 * parts before it and on fourdgs.h's macros. Include <fourdgs/fourdgs.h>, never a part alone:
 * the rules that hold for every call are at the top of fourdgs.h. */
#ifndef FOURDGS_VALIDATE_H
#define FOURDGS_VALIDATE_H

#ifndef FOURDGS_H
#error "fourdgs_validate.h is a part of fourdgs.h: include <fourdgs/fourdgs.h>"
#endif

/* ------------------------------------------------------------------------------------------ */
/* Validation: every problem in a file, not just the first (fourdgs/validate.hpp). */

typedef struct fourdgs_validation fourdgs_validation;

typedef enum fourdgs_severity { FOURDGS_SEVERITY_ERROR = 1, FOURDGS_SEVERITY_WARNING = 2 } fourdgs_severity;

typedef struct fourdgs_validation_summary {
    size_t struct_size;
    uint64_t finding_count, errors, warnings;
    uint64_t file_size, records, chunks;
    uint32_t truncated, findings_capped, valid;
} fourdgs_validation_summary;

/* Strings borrowed until fourdgs_validation_free. */
typedef struct fourdgs_finding {
    size_t struct_size;
    uint32_t severity; /* fourdgs_severity */
    fourdgs_string rule, field, value, section, message;
    uint64_t offset; /* or FOURDGS_NO_OFFSET */
} fourdgs_finding;

/* The result is FOURDGS_OK whenever the validator ran (a file full of errors included); it
 * fails only when the source could not be read. `options` (may be NULL) supplies the limits
 * and the allocator. */
FOURDGS_CAPI fourdgs_status fourdgs_validate_file(const char* path, size_t path_size,
                                                  const fourdgs_open_options* options,
                                                  fourdgs_validation** out);
/* `data` is borrowed for the duration of the call only. */
FOURDGS_CAPI fourdgs_status fourdgs_validate_memory(const void* data, size_t size,
                                                    const fourdgs_open_options* options,
                                                    fourdgs_validation** out);
/* callbacks->release is called before this returns. */
FOURDGS_CAPI fourdgs_status fourdgs_validate_callbacks(const fourdgs_read_callbacks* callbacks,
                                                       const fourdgs_open_options* options,
                                                       fourdgs_validation** out);
/* A URL, read by range requests (see fourdgs_reader_open_url). */
FOURDGS_CAPI fourdgs_status fourdgs_validate_url(const char* url, size_t url_size,
                                                 const fourdgs_open_options* options,
                                                 fourdgs_validation** out);
FOURDGS_CAPI void fourdgs_validation_free(fourdgs_validation* validation);
FOURDGS_CAPI fourdgs_status fourdgs_validation_summary_get(const fourdgs_validation* validation,
                                                           fourdgs_validation_summary* out);
FOURDGS_CAPI fourdgs_status fourdgs_validation_finding(const fourdgs_validation* validation,
                                                       size_t index, fourdgs_finding* out);

#endif /* FOURDGS_VALIDATE_H */
