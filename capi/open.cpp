// open.cpp — opening a reader (fourdgs.h, "Opening"): the open options as ReaderOptions, the
// byte sources (a file, memory, the caller's callbacks, a URL), and the reader handle over
// open_scene. Validation and streams open their sources with the same options and sources.
#include "fourdgs_c_internal.hpp"

#include <memory>
#include <span>
#include <string>
#include <utility>

using namespace fourdgs;
using namespace fourdgs::capi;

// ---------------------------------------------------------------------------------------------
// Open options → ReaderOptions.

namespace {

fourdgs_open_options default_open_options() noexcept {
    fourdgs_open_options o{};
    o.struct_size = sizeof o;
    o.max_sh_degree = 3;
    o.verify_summary_crc = 1;
    o.copy_memory = 0;
    o.decode_threads = 1;
    const ReaderOptions ro;
    o.max_record_bytes = ro.max_record_bytes;
    o.max_summary_bytes = ro.max_summary_bytes;
    o.max_gaussians_per_chunk = ro.decode.limits.max_gaussians_per_chunk;
    o.allocator = nullptr;
    o.keep_payloads = 0;
    const HttpOptions http;
    o.http_connect_timeout_ms = http.connect_timeout_ms;
    o.http_transfer_timeout_ms = http.transfer_timeout_ms;
    o.http_max_attempts = http.max_attempts;
    o.http_verify_tls = http.verify_tls;
    return o;
}

HttpOptions http_options(const fourdgs_open_options& o) {
    HttpOptions h;
    h.headers.assign(o.http_headers, o.http_headers + o.http_header_count);
    if (o.http_ca_bundle) h.ca_bundle = o.http_ca_bundle;
    h.connect_timeout_ms = o.http_connect_timeout_ms;
    h.transfer_timeout_ms = o.http_transfer_timeout_ms;
    h.max_attempts = o.http_max_attempts;
    h.verify_tls = o.http_verify_tls != 0;
    return h;
}

}  // namespace

namespace fourdgs::capi {

fourdgs_status open_options_in(const fourdgs_open_options* in, fourdgs_open_options& out) {
    out = default_open_options();
    if (in == nullptr) return FOURDGS_OK;
    if (auto s = read_in(in, out); s != FOURDGS_OK) return s;
    if (out.max_sh_degree > 3)
        return invalid(refusal::kInvalidOption, "max_sh_degree " + std::to_string(out.max_sh_degree) +
                                             " is above 3");
    if (out.http_max_attempts == 0)
        return invalid(refusal::kInvalidOption, "http_max_attempts is 0: at least one attempt");
    if (out.http_header_count != 0 && out.http_headers == nullptr)
        return invalid(refusal::kInvalidOption,
                       "http_header_count is " + std::to_string(out.http_header_count) +
                           " but http_headers is NULL");
    for (std::size_t k = 0; k < out.http_header_count; ++k)
        if (out.http_headers[k] == nullptr)
            return invalid(refusal::kInvalidOption,
                           "http_headers[" + std::to_string(k) + "] is NULL");
    return FOURDGS_OK;
}

fourdgs_status open_settings_in(const fourdgs_open_options* options, fourdgs_open_options& o,
                                Allocator& alloc) {
    if (auto s = open_options_in(options, o); s != FOURDGS_OK) return s;
    if (auto s = allocator_in(o.allocator, alloc); s != FOURDGS_OK) return s;
    o.allocator = nullptr;  // copied into the handle; the caller's struct is not retained
    return FOURDGS_OK;
}

ReaderOptions reader_options(const fourdgs_open_options& o) {
    ReaderOptions ro;
    ro.decode.max_sh_degree = static_cast<int>(o.max_sh_degree);
    ro.decode.limits.max_gaussians_per_chunk = o.max_gaussians_per_chunk;
    ro.verify_summary_crc = o.verify_summary_crc != 0;
    ro.max_record_bytes = o.max_record_bytes;
    ro.max_summary_bytes = o.max_summary_bytes;
    return ro;
}

// ---------------------------------------------------------------------------------------------
// Sources.

fourdgs_status file_source(const char* path, std::size_t path_size,
                           std::unique_ptr<ByteSource>& out) {
    auto file = FileSource::open(std::string(path, path_size));
    FOURDGS_C_TRY(file);
    out = std::make_unique<FileSource>(std::move(file).value());
    return FOURDGS_OK;
}

// A source from the caller's callbacks. `release` runs exactly once, when the source dies.
fourdgs_status callback_source(const fourdgs_read_callbacks* cb,
                               std::unique_ptr<ByteSource>& out) {
    RangeReadCallbacks rc;
    rc.user = cb->user;
    rc.size = cb->size;
    rc.read_at = cb->read_at;
    rc.release = cb->release;
    out = std::make_unique<CallbackSource>(rc);  // from here on, release is owed by `out`
    if (cb->size == nullptr || cb->read_at == nullptr)
        return invalid(refusal::kInvalidCallbacks, "read callbacks need both size and read_at");
    return FOURDGS_OK;
}

// A source for a URL: HTTP(S) range requests (fourdgs/http_source.hpp), with the caller's
// headers, CA bundle, timeouts and attempts.
fourdgs_status url_source(const char* url, std::size_t url_size, const fourdgs_open_options* options,
                          std::unique_ptr<ByteSource>& out) {
    fourdgs_open_options o;
    if (auto s = open_options_in(options, o); s != FOURDGS_OK) return s;
    auto remote = HttpSource::open(std::string(url, url_size), http_options(o));
    FOURDGS_C_TRY(remote);
    out = std::move(remote).value();
    return FOURDGS_OK;
}

// ---------------------------------------------------------------------------------------------
// The reader handle.

fourdgs_status open_scene_into(fourdgs_reader& r, std::unique_ptr<ByteSource> source,
                               const fourdgs_open_options& o, OpenSceneOptions::Access access) {
    r.options = o;
    r.source = std::move(source);
    // The Header's temporal_model picks the front-end; the file is opened once (open_scene).
    OpenSceneOptions so;
    so.reader = reader_options(o);
    if (access == OpenSceneOptions::Access::streaming) {
        so.reader.keep_payloads = o.keep_payloads != 0;  // a stream's option (fourdgs.h)
        so.access = access;                               // front to back even over a URL
    }
    auto opened = open_scene(*r.source, so);
    FOURDGS_C_TRY(opened);
    r.opened.emplace(std::move(opened).value());
    return FOURDGS_OK;
}

}  // namespace fourdgs::capi

namespace {

// A reader over the source `fill` makes, with the caller's options and allocator.
template <class Fill>
fourdgs_status open_with(const fourdgs_open_options* options, fourdgs_reader** out, Fill&& fill) {
    FOURDGS_C_REQUIRE(out);
    fourdgs_open_options o;
    Allocator alloc;
    if (auto s = open_settings_in(options, o, alloc); s != FOURDGS_OK) return s;
    fourdgs_reader* r = make_handle<fourdgs_reader>(alloc);
    std::unique_ptr<fourdgs_reader, void (*)(fourdgs_reader*)> guard(r, destroy_handle);
    std::unique_ptr<ByteSource> source;
    if (auto s = fill(o, *r, source); s != FOURDGS_OK) return s;
    if (auto s = open_scene_into(*r, std::move(source), o, OpenSceneOptions::Access::automatic);
        s != FOURDGS_OK)
        return s;
    *out = guard.release();
    return FOURDGS_OK;
}

}  // namespace

void fourdgs_open_options_init_sized(fourdgs_open_options* options, size_t struct_size) {
    init_sized(options, struct_size, default_open_options());
}

void(fourdgs_open_options_init)(fourdgs_open_options* options) {
    fourdgs_open_options_init_sized(options, FOURDGS_C_ABI1_SIZE(fourdgs_open_options, keep_payloads));
}

fourdgs_status fourdgs_reader_open_file(const char* path, size_t path_size,
                                        const fourdgs_open_options* options,
                                        fourdgs_reader** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(path);
        return open_with(options, out, [&](const fourdgs_open_options&, fourdgs_reader&,
                                           std::unique_ptr<ByteSource>& source) {
            return file_source(path, path_size, source);
        });
    });
}

fourdgs_status fourdgs_reader_open_memory(const void* data, size_t size,
                                          const fourdgs_open_options* options,
                                          fourdgs_reader** out) {
    return guarded([&] {
        if (!array_ok(data, size)) return invalid(refusal::kNullArgument, "data is NULL");
        return open_with(options, out, [&](const fourdgs_open_options& o, fourdgs_reader& r,
                                           std::unique_ptr<ByteSource>& source) {
            const auto* bytes = static_cast<const std::uint8_t*>(data);
            std::span<const std::uint8_t> view(bytes, size);
            if (o.copy_memory) {
                r.owned.assign(bytes, bytes + size);
                view = r.owned;
            }
            source = std::make_unique<MemorySource>(view);
            return FOURDGS_OK;
        });
    });
}

fourdgs_status fourdgs_reader_open_callbacks(const fourdgs_read_callbacks* callbacks,
                                             const fourdgs_open_options* options,
                                             fourdgs_reader** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(callbacks);
        // The source (and so `release`) is made first, so release runs exactly once even when
        // the arguments or the file are refused.
        std::unique_ptr<ByteSource> source;
        if (auto s = callback_source(callbacks, source); s != FOURDGS_OK) return s;
        return open_with(options, out, [&](const fourdgs_open_options&, fourdgs_reader&,
                                           std::unique_ptr<ByteSource>& into) {
            into = std::move(source);
            return FOURDGS_OK;
        });
    });
}

fourdgs_status fourdgs_reader_open_url(const char* url, size_t url_size,
                                       const fourdgs_open_options* options, fourdgs_reader** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(url);
        return open_with(options, out, [&](const fourdgs_open_options&, fourdgs_reader&,
                                           std::unique_ptr<ByteSource>& source) {
            return url_source(url, url_size, options, source);
        });
    });
}

void fourdgs_reader_free(fourdgs_reader* reader) {
    if (reader != nullptr && reader->lent_by_stream) return;  // a stream's: it frees it
    destroy_handle(reader);
}
