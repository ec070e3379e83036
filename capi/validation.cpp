// validation.cpp — the validator (fourdgs.h, "Validation"): a file, memory, the caller's
// callbacks or a URL checked in the collect-every-finding mode (fourdgs/validate.hpp), and the
// report's summary and findings.
#include "fourdgs_c_internal.hpp"

#include <memory>
#include <span>
#include <string>
#include <utility>

using namespace fourdgs;
using namespace fourdgs::capi;

struct fourdgs_validation {
    explicit fourdgs_validation(const Allocator& a) : alloc(a) {}
    Allocator alloc;
    ValidationReport report;
};

namespace {

fourdgs_status run_validation(ByteSource& source, const fourdgs_open_options& o,
                              const Allocator& alloc, fourdgs_validation** out) {
    ValidateOptions vo;
    vo.reader = reader_options(o);
    auto report = validate(source, vo);
    FOURDGS_C_TRY(report);
    fourdgs_validation* v = make_handle<fourdgs_validation>(alloc);
    v->report = std::move(report).value();
    *out = v;
    return FOURDGS_OK;
}

template <class MakeSource>
fourdgs_status validate_with(const fourdgs_open_options* options, fourdgs_validation** out,
                             MakeSource&& make) {
    std::unique_ptr<ByteSource> source;
    const fourdgs_status made = make(source);  // first, so callbacks are released on every path
    FOURDGS_C_REQUIRE(out);
    if (made != FOURDGS_OK) return made;
    fourdgs_open_options o;
    Allocator alloc;
    if (auto s = open_settings_in(options, o, alloc); s != FOURDGS_OK) return s;
    return run_validation(*source, o, alloc, out);
}

fourdgs_validation_summary summary_out(const ValidationReport& r) {
    fourdgs_validation_summary v{};
    v.finding_count = r.findings.size();
    v.errors = r.errors();
    v.warnings = r.warnings();
    v.file_size = r.file_size;
    v.records = r.records;
    v.chunks = r.chunks;
    v.truncated = r.truncated;
    v.findings_capped = r.findings_capped;
    v.valid = r.valid();
    return v;
}

fourdgs_finding finding_out(const Finding& f) noexcept {
    fourdgs_finding c{};
    c.severity = static_cast<uint32_t>(f.severity);
    c.rule = str(f.rule);
    c.field = str(f.field);
    c.value = str(f.value);
    c.section = str(f.section);
    c.message = str(f.message);
    c.offset = f.offset;
    return c;
}

}  // namespace

fourdgs_status fourdgs_validate_file(const char* path, size_t path_size,
                                     const fourdgs_open_options* options,
                                     fourdgs_validation** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(path);
        return validate_with(options, out, [&](std::unique_ptr<ByteSource>& source) {
            return file_source(path, path_size, source);
        });
    });
}

fourdgs_status fourdgs_validate_memory(const void* data, size_t size,
                                       const fourdgs_open_options* options,
                                       fourdgs_validation** out) {
    return guarded([&] {
        if (!array_ok(data, size)) return invalid(refusal::kNullArgument, "data is NULL");
        return validate_with(options, out, [&](std::unique_ptr<ByteSource>& source) {
            source = std::make_unique<MemorySource>(
                std::span(static_cast<const std::uint8_t*>(data), size));
            return FOURDGS_OK;
        });
    });
}

fourdgs_status fourdgs_validate_callbacks(const fourdgs_read_callbacks* callbacks,
                                          const fourdgs_open_options* options,
                                          fourdgs_validation** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(callbacks);
        return validate_with(options, out, [&](std::unique_ptr<ByteSource>& source) {
            return callback_source(callbacks, source);
        });
    });
}

fourdgs_status fourdgs_validate_url(const char* url, size_t url_size,
                                    const fourdgs_open_options* options,
                                    fourdgs_validation** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(url);
        return validate_with(options, out, [&](std::unique_ptr<ByteSource>& source) {
            return url_source(url, url_size, options, source);
        });
    });
}

void fourdgs_validation_free(fourdgs_validation* validation) { destroy_handle(validation); }

fourdgs_status fourdgs_validation_summary_get(const fourdgs_validation* validation,
                                              fourdgs_validation_summary* out) {
    return get_from(validation, [](const fourdgs_validation& v) { return &v.report; }, summary_out,
                    out);
}

fourdgs_status fourdgs_validation_finding(const fourdgs_validation* validation, size_t index,
                                          fourdgs_finding* out) {
    return get_from(
        validation,
        [&](const fourdgs_validation& v) { return element(v.report.findings, index, "finding"); },
        finding_out, out);
}
