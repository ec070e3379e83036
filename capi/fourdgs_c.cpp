// fourdgs_c.cpp — the C ABI (fourdgs.h) over the C++ library.
//
// Each entry point checks its arguments, calls one C++ layer, and turns the result into a status
// plus the thread's last error. The file is compiled WITH exceptions (the library is not): every
// entry point runs inside guarded(), so a std::bad_alloc from a container or anything else thrown
// becomes a status and never unwinds into C. No format logic lives here: decoding, evaluation,
// writing and validation are the library's; this file only converts shapes.
#include <fourdgs/fourdgs.h>

#include "fourdgs_c_internal.hpp"

#include <fourdgs/extras.hpp>
#include <fourdgs/fourdgs.hpp>
#include <fourdgs/validate.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

static_assert(FOURDGS_C_VERSION_MAJOR == FOURDGS_VERSION_MAJOR &&
                  FOURDGS_C_VERSION_MINOR == FOURDGS_VERSION_MINOR &&
                  FOURDGS_C_VERSION_PATCH == FOURDGS_VERSION_PATCH,
              "fourdgs.h and version.hpp disagree on the version");
static_assert(FOURDGS_MALFORMED == static_cast<int>(fourdgs::ErrorKind::malformed) &&
                  FOURDGS_TRUNCATED == static_cast<int>(fourdgs::ErrorKind::truncated) &&
                  FOURDGS_UNSUPPORTED == static_cast<int>(fourdgs::ErrorKind::unsupported) &&
                  FOURDGS_IO == static_cast<int>(fourdgs::ErrorKind::io) &&
                  FOURDGS_INVALID_ARGUMENT ==
                      static_cast<int>(fourdgs::ErrorKind::invalid_argument) &&
                  FOURDGS_LIMIT == static_cast<int>(fourdgs::ErrorKind::limit),
              "fourdgs_status must mirror ErrorKind");

namespace {

using namespace fourdgs;
using namespace fourdgs::capi;

// A growing byte buffer in allocator memory: the writer's memory output.
class AllocatorSink final : public ByteSink {
public:
    explicit AllocatorSink(const Allocator& alloc) : alloc_(alloc) {}
    AllocatorSink(const AllocatorSink&) = delete;
    AllocatorSink& operator=(const AllocatorSink&) = delete;
    ~AllocatorSink() override { alloc_.release(data_, capacity_, alignof(std::max_align_t)); }

    Status write(std::span<const std::uint8_t> bytes) override {
        if (bytes.size() > capacity_ - size_) {
            std::size_t want = std::max<std::size_t>(capacity_ * 2, 4096);
            while (want - size_ < bytes.size()) want *= 2;
            auto* grown = static_cast<std::uint8_t*>(alloc_.allocate(want, alignof(std::max_align_t)));
            if (size_ != 0) std::memcpy(grown, data_, size_);
            alloc_.release(data_, capacity_, alignof(std::max_align_t));
            data_ = grown;
            capacity_ = want;
        }
        if (!bytes.empty()) std::memcpy(data_ + size_, bytes.data(), bytes.size());
        size_ += bytes.size();
        return ok_status();
    }
    std::uint64_t position() const override { return size_; }
    const std::uint8_t* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }

private:
    Allocator alloc_;
    std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0, capacity_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Open options → ReaderOptions.

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

fourdgs_status open_options_in(const fourdgs_open_options* in, fourdgs_open_options& out) {
    out = default_open_options();
    if (in == nullptr) return FOURDGS_OK;
    if (auto s = check_size(in, "fourdgs_open_options"); s != FOURDGS_OK) return s;
    out = take(in, out);
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

ReaderOptions reader_options(const fourdgs_open_options& o) {
    ReaderOptions ro;
    ro.decode.max_sh_degree = static_cast<int>(o.max_sh_degree);
    ro.decode.limits.max_gaussians_per_chunk = o.max_gaussians_per_chunk;
    ro.verify_summary_crc = o.verify_summary_crc != 0;
    ro.max_record_bytes = o.max_record_bytes;
    ro.max_summary_bytes = o.max_summary_bytes;
    return ro;
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

}  // namespace

// ---------------------------------------------------------------------------------------------
// Handles.

struct fourdgs_validation {
    explicit fourdgs_validation(const Allocator& a) : alloc(a) {}
    Allocator alloc;
    ValidationReport report;
};

struct fourdgs_block {
    explicit fourdgs_block(const Allocator& a) : alloc(a) { info.struct_size = sizeof info; }
    Allocator alloc;
    GaussianBlock block;
    fourdgs_block_info info{};
    std::vector<DecodeWorkspace> pool;  // gaussian-birth decode buffers
    KeyframeDeltaWorkspace delta;       // keyframe-delta composition buffers
};

struct fourdgs_stream_writer {
    explicit fourdgs_stream_writer(const Allocator& a) : alloc(a) {}
    Allocator alloc;
    int sh_degree = 0;
    std::optional<FileSink> sink;
    std::optional<StreamingWriter> writer;  // refers to *sink
    std::optional<WriteReport> report;      // after finish
};

namespace {

struct AttachmentCopy {
    std::string name, media_type;
    std::vector<std::uint8_t> data;
};
struct AudioCopy {
    AudioSource descriptor;
    std::vector<std::uint8_t> data;
};

}  // namespace

struct fourdgs_writer {
    explicit fourdgs_writer(const Allocator& a) : alloc(a) {}
    Allocator alloc;
    SceneHeader header;  // attachments and audio are rebuilt from the copies at finish
    WriterOptions options;
    std::deque<AttachmentCopy> attachments;
    std::deque<AudioCopy> audio;
    std::uint32_t embedding_dim = 0;

    // The gaussians added so far, in the writer's input layout.
    std::size_t count = 0;
    std::vector<float> position, scale, rotation, color, motion, mu_t, sigma_t, sh;
    std::vector<double> win_lo, win_hi;
    std::vector<std::uint32_t> object_id;  // empty until a batch brings ids

    std::unique_ptr<AllocatorSink> memory;
    std::optional<WriteReport> report;
};

namespace {

fourdgs_status open_reader(std::unique_ptr<ByteSource> source, const fourdgs_open_options& o,
                           fourdgs_reader* r) {
    r->options = o;
    r->source = std::move(source);
    // The Header's temporal_model picks the front-end; the file is opened once (open_scene).
    OpenSceneOptions so;
    so.reader = reader_options(o);
    auto opened = open_scene(*r->source, so);
    FOURDGS_C_TRY(opened);
    r->opened.emplace(std::move(opened).value());
    return FOURDGS_OK;
}

template <class Fill>
fourdgs_status open_with(const fourdgs_open_options* options, fourdgs_reader** out, Fill&& fill) {
    FOURDGS_C_REQUIRE(out);
    fourdgs_open_options o;
    if (auto s = open_options_in(options, o); s != FOURDGS_OK) return s;
    Allocator alloc;
    if (auto s = allocator_in(o.allocator, alloc); s != FOURDGS_OK) return s;
    o.allocator = nullptr;  // copied into the handle; the caller's struct is not retained
    fourdgs_reader* r = make_handle<fourdgs_reader>(alloc);
    std::unique_ptr<fourdgs_reader, void (*)(fourdgs_reader*)> guard(r, destroy_handle);
    std::unique_ptr<ByteSource> source;
    if (auto s = fill(o, *r, source); s != FOURDGS_OK) return s;
    if (auto s = open_reader(std::move(source), o, r); s != FOURDGS_OK) return s;
    *out = guard.release();
    return FOURDGS_OK;
}

fourdgs_error error_out(const LastError& last) noexcept {
    fourdgs_error e{};
    e.status = last.status;
    e.refusal = str(last.refusal);
    e.message = str(last.message);
    e.offset = last.offset;
    return e;
}

const char* kStatusNames[] = {"ok",    "malformed",        "truncated", "unsupported",
                              "io",    "invalid-argument", "limit",     "out-of-memory",
                              "internal", "buffer-too-small", "not-found"};

}  // namespace

// =============================================================================================
// The C ABI. fourdgs.h declares every function extern "C", which gives these definitions C
// linkage; no extern "C" block here, so the bodies may use templates and generic lambdas.


const char* fourdgs_version(void) { return FOURDGS_C_VERSION_STRING; }
uint32_t fourdgs_abi_version(void) { return FOURDGS_C_ABI_VERSION; }

const char* fourdgs_status_name(fourdgs_status status) {
    const auto i = static_cast<unsigned>(status);
    return i < std::size(kStatusNames) ? kStatusNames[i] : "unknown";
}

fourdgs_status fourdgs_last_error(fourdgs_error* out) {
    return guarded([&] { return fill_outs([] { return &t_error; }, error_out, out); });
}

fourdgs_status fourdgs_last_status(void) { return t_error.status; }

void fourdgs_clear_error(void) {
    t_error.status = FOURDGS_OK;
    t_error.refusal.clear();
    t_error.message.clear();
    t_error.offset = FOURDGS_NO_OFFSET;
}

// ---------------------------------------------------------------------------------------------
// Opening.

void fourdgs_open_options_init(fourdgs_open_options* options) {
    if (options) *options = default_open_options();
}

fourdgs_status fourdgs_reader_open_file(const char* path, size_t path_size,
                                        const fourdgs_open_options* options,
                                        fourdgs_reader** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(path);
        return open_with(options, out, [&](const fourdgs_open_options&, fourdgs_reader&,
                                           std::unique_ptr<ByteSource>& source) {
            auto file = FileSource::open(std::string(path, path_size));
            FOURDGS_C_TRY(file);
            source = std::make_unique<FileSource>(std::move(file).value());
            return FOURDGS_OK;
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

// ---------------------------------------------------------------------------------------------
// Scene information.

namespace {
// A reader's scene as fourdgs_scene_info.
fourdgs_scene_info scene_info_out(const fourdgs_reader& reader) {
        const SceneInfo& sc = reader.scene();
        const bool keyframe_delta = reader.opened->keyframe_delta();
        const bool scanned = reader.opened->index_built_by_scan();
        const IndexedReader* base = reader.opened->indexed_base();
        const Header& h = sc.header;
        const Quantization& q = sc.quantization;
        fourdgs_scene_info i{};
        i.profile = str(h.profile);
        i.library = str(h.library);
        i.temporal_model_name = str(h.temporal_model);
        i.temporal_model = keyframe_delta ? FOURDGS_MODEL_KEYFRAME_DELTA
                                          : FOURDGS_MODEL_GAUSSIAN_BIRTH;
        i.duration_sec = h.duration_sec;
        i.gaussian_count = h.gaussian_count;
        i.cutoff = h.cutoff;
        std::copy(h.aabb.begin(), h.aabb.end(), i.aabb);
        i.sh_degree = h.sh_degree;
        i.header_flags = h.flags;
        i.quantization_scheme = str(q.scheme);
        std::copy(q.pos_origin.begin(), q.pos_origin.end(), i.pos_origin);
        i.step_pos = q.step_pos;
        i.step_scale_log = q.step_scale_log;
        i.step_rot = q.step_rot;
        i.step_rgb = q.step_rgb;
        i.step_alpha = q.step_alpha;
        i.step_motion = q.step_motion;
        i.step_time = q.step_time;
        i.step_sigma_log = q.step_sigma_log;
        i.step_sh = q.step_sh;
        i.sh_depth_count = static_cast<uint32_t>(std::min<std::size_t>(q.sh_depths.size(), 3));
        for (uint32_t b = 0; b < i.sh_depth_count; ++b) i.sh_depths[b] = q.sh_depths[b];
        i.header_attribute_count = h.attributes.size();
        i.quantization_bound_count = q.bounds.size();
        i.window_count = sc.windows.size();
        i.chunk_count = sc.index.size();
        i.metadata_count = sc.metadata.size();
        i.attachment_count = sc.attachments.size();
        i.audio_source_count = sc.audio.size();
        i.coordinate_frame_count = sc.coordinate_frames.size();
        i.sensor_count = sc.sensors.size();
        i.rig_trajectory_count = sc.rig_trajectories.size();
        i.geodetic_anchor_count = sc.geodetic_anchors.size();
        i.object_count = sc.object_table ? sc.object_table->entries.size() : 0;
        i.object_track_count = sc.object_tracks.size();
        i.skipped_record_count = sc.skipped.size();
        i.has_camera = sc.camera.has_value();
        i.has_object_table = sc.object_table.has_value();
        i.object_embedding_dim = sc.object_table ? sc.object_table->embedding_dim : 0;
        i.index_built_by_scan = scanned;
        i.summary_crc_verified = sc.summary_crc_verified;
        i.trailing_bytes = sc.trailing_bytes;
        i.read_by_scan = base && base->read_by_scan();
        if (base && base->scan_cause()) i.scan_cause = str(base->scan_cause()->refusal);
        i.window_table_present = sc.has_window_table;
        i.has_footer = sc.footer.has_value();
        if (sc.footer) {
            i.summary_start = sc.footer->summary_start;
            i.summary_offset_start = sc.footer->summary_offset_start;
            i.summary_crc = sc.footer->summary_crc;
        }
        i.summary_offset_count = sc.summary_offsets.size();
        i.has_statistics = sc.statistics.has_value();
        if (sc.statistics) {
            i.statistics_gaussian_count = sc.statistics->gaussian_count;
            i.statistics_chunk_count = sc.statistics->chunk_count;
            i.statistics_duration_sec = sc.statistics->duration_sec;
            std::copy(sc.statistics->aabb.begin(), sc.statistics->aabb.end(), i.statistics_aabb);
        }
        i.sh_depths_malformed = sc.quantization.sh_depths_malformed;
        return i;
}

}  // namespace

fourdgs_status fourdgs_reader_scene_info(const fourdgs_reader* reader, fourdgs_scene_info* out) {
    return get_from(reader, the_handle, scene_info_out, out);
}

namespace {
std::tuple<fourdgs_string, fourdgs_string> key_value_out(
    const std::pair<std::string, std::string>& entry) noexcept {
    return {str(entry.first), str(entry.second)};
}
}  // namespace

fourdgs_status fourdgs_reader_header_attribute(const fourdgs_reader* reader, size_t index,
                                               fourdgs_string* key, fourdgs_string* value) {
    return get_from(
        reader,
        [&](const fourdgs_reader& r) {
            return element(r.scene().header.attributes, index, "header attribute");
        },
        key_value_out, Out{key, "key"}, Out{value, "value"});
}

fourdgs_status fourdgs_reader_quantization_bound(const fourdgs_reader* reader, size_t index,
                                                 fourdgs_string* key, fourdgs_string* value) {
    return get_from(
        reader,
        [&](const fourdgs_reader& r) {
            return element(r.scene().quantization.bounds, index, "quantization bound");
        },
        key_value_out, Out{key, "key"}, Out{value, "value"});
}

fourdgs_status fourdgs_reader_window(const fourdgs_reader* reader, size_t index, double* lo,
                                     double* hi) {
    return get_from(
        reader, scene_element(&SceneInfo::windows, index, "window"),
        [](const WindowTable::Window& w) { return std::tuple(w.lo, w.hi); }, Out{lo, "lo"},
        Out{hi, "hi"});
}

fourdgs_status fourdgs_reader_metadata(const fourdgs_reader* reader, size_t index,
                                       fourdgs_string* name, size_t* entry_count) {
    return get_from(
        reader, scene_element(&SceneInfo::metadata, index, "metadata record"),
        [](const Metadata& m) { return std::tuple(str(m.name), m.entries.size()); },
        Out{name, "name"}, Out{entry_count, "entry_count"});
}

fourdgs_status fourdgs_reader_metadata_entry(const fourdgs_reader* reader, size_t index,
                                             size_t entry, fourdgs_string* key,
                                             fourdgs_string* value) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        // The record is looked up before key and value are checked: a call wrong in both ways
        // is refused for the record.
        const Metadata* record = element(reader->scene().metadata, index, "metadata record");
        if (record == nullptr) return FOURDGS_NOT_FOUND;
        return fill_outs([&] { return element(record->entries, entry, "metadata entry"); },
                         key_value_out, Out{key, "key"}, Out{value, "value"});
    });
}

fourdgs_status fourdgs_reader_metadata_find(const fourdgs_reader* reader, const char* key,
                                            size_t key_size, fourdgs_string* value) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(value);
        std::string k;
        if (auto s = text_in(key, key_size, "key", k); s != FOURDGS_OK) return s;
        for (const Metadata& m : reader->scene().metadata)
            for (const auto& [mk, mv] : m.entries)
                if (mk == k) {
                    *value = str(mv);
                    return FOURDGS_OK;
                }
        return fail(FOURDGS_NOT_FOUND, refusal::kNoSuchElement, "no metadata entry has key \"" + k + "\"");
    });
}

namespace {
fourdgs_attachment_info attachment_out(const AttachmentEntry& a) noexcept {
    fourdgs_attachment_info i{};
    i.name = str(a.name);
    i.media_type = str(a.media_type);
    i.payload = {a.payload.offset, a.payload.length};
    return i;
}
}  // namespace

fourdgs_status fourdgs_reader_attachment(const fourdgs_reader* reader, size_t index,
                                         fourdgs_attachment_info* out) {
    return get_from(reader, scene_element(&SceneInfo::attachments, index, "attachment"),
                    attachment_out, out);
}

namespace {
// A stream's scene cannot go back to its source: a payload range is served from the kept bytes of
// the attachment or audio payload that holds it (fourdgs_open_options.keep_payloads), or not at
// all.
const PayloadRef* kept_payload(const SceneInfo& scene, fourdgs_payload p) {
    auto holds = [&](const PayloadRef& r) {
        return r.data.size() == r.length && p.offset >= r.offset &&
               p.offset - r.offset <= r.length && p.size <= r.length - (p.offset - r.offset);
    };
    for (const AttachmentEntry& a : scene.attachments)
        if (holds(a.payload)) return &a.payload;
    for (const AudioSourceEntry& a : scene.audio)
        if (holds(a.payload)) return &a.payload;
    return nullptr;
}
}  // namespace

fourdgs_status fourdgs_reader_read_payload(const fourdgs_reader* reader, fourdgs_payload payload,
                                           void* buffer, size_t capacity, size_t* size) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(size);
        const std::string range =
            "payload [" + std::to_string(payload.offset) + ", +" + std::to_string(payload.size) + ")";
        const PayloadRef* kept = nullptr;
        if (!reader->opened->random_access()) {
            kept = kept_payload(reader->scene(), payload);
            if (kept == nullptr)
                return invalid(refusal::kNeedsRandomAccess,
                               range + " is not held by this stream's scene: a stream keeps the "
                                       "payloads it passes only when opened with keep_payloads");
        } else {
            const std::uint64_t file_size = reader->source->size().value_or(0);
            if (payload.offset > file_size || payload.size > file_size - payload.offset)
                // The caller's range, not the file, is at fault: a C-layer identifier, not §5.8's.
                return invalid(refusal::kValueOutOfRange,
                               range + " lies outside the " + std::to_string(file_size) +
                                   "-byte file");
        }
        if (buffer == nullptr) {
            *size = static_cast<size_t>(payload.size);
            return FOURDGS_OK;
        }
        if (capacity < payload.size)
            return fail(FOURDGS_BUFFER_TOO_SMALL, refusal::kBufferTooSmall,
                        "the payload is " + std::to_string(payload.size) + " bytes, the buffer " +
                            std::to_string(capacity));
        if (kept != nullptr) {
            if (payload.size != 0)
                std::memcpy(buffer, kept->data.data() + (payload.offset - kept->offset),
                            static_cast<size_t>(payload.size));
        } else {
            // read_exact may have written part of the buffer before failing; that is buffer
            // content, not an out-parameter, and `size` stays untouched.
            FOURDGS_C_TRY(reader->source->read_exact(
                payload.offset, std::span(static_cast<std::uint8_t*>(buffer), payload.size)));
        }
        *size = static_cast<size_t>(payload.size);
        return FOURDGS_OK;
    });
}

namespace {
const Camera* camera_of(const fourdgs_reader& reader) {
    return present(reader.scene().camera, "the file has no Camera");
}

fourdgs_camera_info camera_out(const Camera& cam) noexcept {
    fourdgs_camera_info i{};
    i.fov_y_deg = cam.fov_y_deg;
    std::copy(cam.position.begin(), cam.position.end(), i.position);
    std::copy(cam.target.begin(), cam.target.end(), i.target);
    i.keyframe_count = cam.keyframes.size();
    i.interpolation = str(cam.interpolation);
    i.loop = cam.loop;
    return i;
}

fourdgs_camera_keyframe camera_keyframe_out(const Camera::Keyframe& k) noexcept {
    fourdgs_camera_keyframe c{};
    c.time = k.time;
    std::copy(k.position.begin(), k.position.end(), c.position);
    std::copy(k.target.begin(), k.target.end(), c.target);
    return c;
}
}  // namespace

fourdgs_status fourdgs_reader_camera(const fourdgs_reader* reader, fourdgs_camera_info* out) {
    return get_from(reader, camera_of, camera_out, out);
}

fourdgs_status fourdgs_reader_camera_keyframe(const fourdgs_reader* reader, size_t index,
                                              fourdgs_camera_keyframe* out) {
    return get_from(
        reader,
        [&](const fourdgs_reader& r) {
            const Camera* cam = camera_of(r);
            return cam ? element(cam->keyframes, index, "camera keyframe") : nullptr;
        },
        camera_keyframe_out, out);
}

fourdgs_status fourdgs_reader_camera_at(const fourdgs_reader* reader, double t,
                                        double position[3], double target[3], double* fov_y_deg) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(position);
        FOURDGS_C_REQUIRE(target);
        FOURDGS_C_REQUIRE(fov_y_deg);
        if (auto s = finite_time(t); s != FOURDGS_OK) return s;
        const Camera* cam = camera_of(*reader);
        if (cam == nullptr) return FOURDGS_NOT_FOUND;
        const CameraView v = camera_at(*cam, t);
        std::copy(v.position.begin(), v.position.end(), position);
        std::copy(v.target.begin(), v.target.end(), target);
        *fov_y_deg = v.fov_y_deg;
        return FOURDGS_OK;
    });
}

namespace {
fourdgs_audio_source_info audio_source_out(const AudioSourceEntry& e) noexcept {
    const AudioSource& d = e.descriptor;
    fourdgs_audio_source_info i{};
    i.source_id = d.source_id;
    i.legacy = e.legacy;
    i.name = str(d.name);
    i.codec = str(d.codec);
    i.channel_layout = str(d.channel_layout);
    i.interpolation = str(d.interpolation);
    i.start_sec = d.start_sec;
    i.duration_sec = d.duration_sec;
    i.gain = d.gain;
    i.flags = d.flags;
    std::copy(d.position.begin(), d.position.end(), i.position);
    std::copy(d.rotation.begin(), d.rotation.end(), i.rotation);
    i.keyframe_count = d.keyframes.size();
    i.payload = {e.payload.offset, e.payload.length};
    return i;
}

fourdgs_audio_keyframe audio_keyframe_out(const AudioSource::Keyframe& key) noexcept {
    fourdgs_audio_keyframe k{};
    k.time = key.time;
    std::copy(key.position.begin(), key.position.end(), k.position);
    std::copy(key.rotation.begin(), key.rotation.end(), k.rotation);
    return k;
}
}  // namespace

fourdgs_status fourdgs_reader_audio_source(const fourdgs_reader* reader, size_t index,
                                           fourdgs_audio_source_info* out) {
    return get_from(reader, scene_element(&SceneInfo::audio, index, "audio source"),
                    audio_source_out, out);
}

fourdgs_status fourdgs_reader_audio_keyframe(const fourdgs_reader* reader, size_t source,
                                             size_t index, fourdgs_audio_keyframe* out) {
    return get_from(
        reader,
        [&](const fourdgs_reader& r) {
            const AudioSourceEntry* e = element(r.scene().audio, source, "audio source");
            return e ? element(e->descriptor.keyframes, index, "audio keyframe") : nullptr;
        },
        audio_keyframe_out, out);
}

fourdgs_status fourdgs_reader_audio_state_at(const fourdgs_reader* reader, size_t source, double t,
                                             fourdgs_audio_state* out) {
    return get_from(
        reader,
        [&](const fourdgs_reader& r) {
            return finite_time(t) == FOURDGS_OK ? element(r.scene().audio, source, "audio source")
                                                : nullptr;
        },
        [&](const AudioSourceEntry& e) { return audio_state_out(audio_state_at(e.descriptor, t)); },
        out);
}

namespace {
fourdgs_coordinate_frame coordinate_frame_out(const CoordinateFrame& f) noexcept {
    fourdgs_coordinate_frame c{};
    c.name = str(f.name);
    c.handedness = static_cast<uint32_t>(f.handedness);
    c.up_axis = static_cast<uint32_t>(f.up_axis);
    c.forward_axis = static_cast<uint32_t>(f.forward_axis);
    c.length_unit = static_cast<uint32_t>(f.length_unit);
    c.metres_per_unit = f.metres_per_unit;
    return c;
}
}  // namespace

fourdgs_status fourdgs_reader_coordinate_frame(const fourdgs_reader* reader, size_t index,
                                               fourdgs_coordinate_frame* out) {
    return get_from(reader,
                    scene_element(&SceneInfo::coordinate_frames, index, "coordinate frame"),
                    coordinate_frame_out, out);
}

namespace {
fourdgs_sensor sensor_out(const SensorCalibration& s) noexcept {
    fourdgs_sensor c{};
    c.name = str(s.name);
    c.modality = str(s.modality);
    c.rig_name = str(s.rig_name);
    c.camera_model = static_cast<uint32_t>(s.camera_model);
    c.width_px = s.width_px;
    c.height_px = s.height_px;
    c.fx = s.fx;
    c.fy = s.fy;
    c.cx = s.cx;
    c.cy = s.cy;
    c.distortion_count = s.distortion.size();
    c.distortion = s.distortion.data();
    std::copy(s.rotation.begin(), s.rotation.end(), c.rotation);
    std::copy(s.translation.begin(), s.translation.end(), c.translation);
    c.pose_reference = static_cast<uint32_t>(s.pose_reference);
    return c;
}
}  // namespace

fourdgs_status fourdgs_reader_sensor(const fourdgs_reader* reader, size_t index,
                                     fourdgs_sensor* out) {
    return get_from(reader, scene_element(&SceneInfo::sensors, index, "sensor"), sensor_out, out);
}

namespace {
fourdgs_pose_sample sample_out(const TrajectorySample& s) {
    fourdgs_pose_sample p{};
    p.time = s.time;
    std::copy(s.rotation.begin(), s.rotation.end(), p.rotation);
    std::copy(s.translation.begin(), s.translation.end(), p.translation);
    return p;
}
}  // namespace

fourdgs_status fourdgs_reader_rig_trajectory(const fourdgs_reader* reader, size_t index,
                                             fourdgs_string* name, uint32_t* interpolation,
                                             size_t* sample_count) {
    return get_from(
        reader, scene_element(&SceneInfo::rig_trajectories, index, "rig trajectory"),
        [](const RigTrajectory& r) {
            return std::tuple(str(r.name), static_cast<uint32_t>(r.interpolation),
                              r.samples.size());
        },
        Out{name, "name"}, Out{interpolation, "interpolation"},
        Out{sample_count, "sample_count"});
}

fourdgs_status fourdgs_reader_rig_trajectory_sample(const fourdgs_reader* reader, size_t index,
                                                    size_t sample, fourdgs_pose_sample* out) {
    return get_from(
        reader,
        [&](const fourdgs_reader& r) {
            const RigTrajectory* t = element(r.scene().rig_trajectories, index, "rig trajectory");
            return t ? element(t->samples, sample, "trajectory sample") : nullptr;
        },
        sample_out, out);
}

namespace {
fourdgs_geodetic_anchor geodetic_anchor_out(const GeodeticAnchor& g) noexcept {
    fourdgs_geodetic_anchor a{};
    a.frame_name = str(g.frame_name);
    a.latitude_deg = g.latitude_deg;
    a.longitude_deg = g.longitude_deg;
    a.altitude_m = g.altitude_m;
    a.heading_deg = g.heading_deg;
    return a;
}
}  // namespace

fourdgs_status fourdgs_reader_geodetic_anchor(const fourdgs_reader* reader, size_t index,
                                              fourdgs_geodetic_anchor* out) {
    return get_from(reader,
                    scene_element(&SceneInfo::geodetic_anchors, index, "geodetic anchor"),
                    geodetic_anchor_out, out);
}

namespace {
fourdgs_object_info object_out(const ObjectTable::Entry& e) noexcept {
    fourdgs_object_info o{};
    o.object_id = e.object_id;
    o.label = str(e.label);
    std::copy(e.anchor.begin(), e.anchor.end(), o.anchor);
    o.has_dynamics = e.dynamics.has_value();
    if (e.dynamics) {
        std::copy(e.dynamics->velocity.begin(), e.dynamics->velocity.end(), o.velocity);
        std::copy(e.dynamics->angular_velocity.begin(), e.dynamics->angular_velocity.end(),
                  o.angular_velocity);
        std::copy(e.dynamics->acceleration.begin(), e.dynamics->acceleration.end(),
                  o.acceleration);
    }
    o.has_embedding = e.embedding.has_value();
    o.embedding = e.embedding ? e.embedding->data() : nullptr;
    return o;
}
}  // namespace

fourdgs_status fourdgs_reader_object(const fourdgs_reader* reader, size_t index,
                                     fourdgs_object_info* out) {
    return get_from(
        reader,
        [&](const fourdgs_reader& r) {
            const auto& table = r.scene().object_table;  // no table: no objects
            const std::span<const ObjectTable::Entry> objects =
                table ? std::span(table->entries) : std::span<const ObjectTable::Entry>();
            return element(objects, index, "object");
        },
        object_out, out);
}

fourdgs_status fourdgs_reader_object_track(const fourdgs_reader* reader, size_t index,
                                           uint32_t* object_id, uint32_t* interpolation,
                                           size_t* sample_count) {
    return get_from(
        reader, scene_element(&SceneInfo::object_tracks, index, "object track"),
        [](const ObjectTrack& t) {
            return std::tuple(t.object_id, static_cast<uint32_t>(t.interpolation),
                              t.samples.size());
        },
        Out{object_id, "object_id"}, Out{interpolation, "interpolation"},
        Out{sample_count, "sample_count"});
}

fourdgs_status fourdgs_reader_object_track_sample(const fourdgs_reader* reader, size_t index,
                                                  size_t sample, fourdgs_pose_sample* out) {
    return get_from(
        reader,
        [&](const fourdgs_reader& r) {
            const ObjectTrack* t = element(r.scene().object_tracks, index, "object track");
            return t ? element(t->samples, sample, "track sample") : nullptr;
        },
        sample_out, out);
}

// ---------------------------------------------------------------------------------------------
// Evaluation.

namespace {
fourdgs_evaluate_options default_evaluate_options() noexcept {
    fourdgs_evaluate_options o{};
    o.struct_size = sizeof o;
    o.max_sh_degree = 3;
    o.apply_object_tracks = 1;
    o.append = 0;
    return o;
}

fourdgs_status evaluate_options_in(const SceneInfo& scene, const fourdgs_evaluate_options* in,
                                   EvaluateOptions& out) {
    fourdgs_evaluate_options o = default_evaluate_options();
    if (in != nullptr) {
        if (auto s = check_size(in, "fourdgs_evaluate_options"); s != FOURDGS_OK) return s;
        o = take(in, o);
    }
    if (o.max_sh_degree > 3)
        return invalid(refusal::kInvalidOption, "max_sh_degree " + std::to_string(o.max_sh_degree) +
                                             " is above 3");
    out.with_sh = o.max_sh_degree > 0;
    out.max_sh_degree = static_cast<int>(o.max_sh_degree);
    out.append = o.append != 0;
    if (o.apply_object_tracks) out.tracks = scene.object_tracks;
    return FOURDGS_OK;
}

// The calls that fetch through the index refuse a stream's scene.
fourdgs_status random_access(const fourdgs_reader* reader) {
    if (reader->opened->random_access()) return FOURDGS_OK;
    return invalid(refusal::kNeedsRandomAccess,
                   "this is a stream's scene (fourdgs_stream_scene): read its gaussians with "
                   "fourdgs_stream_next_block");
}
}  // namespace

void fourdgs_evaluate_options_init(fourdgs_evaluate_options* options) {
    if (options) *options = default_evaluate_options();
}

namespace {
// fourdgs_frame_create and fourdgs_block_create: a handle from the given hooks (NULL: malloc).
template <class T>
fourdgs_status create_with(const fourdgs_allocator* allocator, T** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(out);
        Allocator alloc;
        if (auto s = allocator_in(allocator, alloc); s != FOURDGS_OK) return s;
        *out = make_handle<T>(alloc);
        return FOURDGS_OK;
    });
}
}  // namespace

fourdgs_status fourdgs_frame_create(const fourdgs_allocator* allocator, fourdgs_frame** out) {
    return create_with(allocator, out);
}

void fourdgs_frame_free(fourdgs_frame* frame) { destroy_handle(frame); }

fourdgs_status fourdgs_reader_evaluate(const fourdgs_reader* reader, double t,
                                       const fourdgs_evaluate_options* options,
                                       fourdgs_frame* frame) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(frame);
        if (auto s = finite_time(t); s != FOURDGS_OK) return s;
        if (auto s = random_access(reader); s != FOURDGS_OK) return s;
        EvaluateOptions eo;
        if (auto s = evaluate_options_in(reader->scene(), options, eo); s != FOURDGS_OK) return s;
        FOURDGS_C_TRY(reader->opened->state_at(t, frame->block, frame->workspace,
                                               reader->options.decode_threads));
        evaluate(frame->block, t, reader->scene().header.cutoff, frame->frame, eo);
        return FOURDGS_OK;
    });
}

namespace {
fourdgs_chunk_info chunk_info_out(const ChunkIndex& e, std::uint64_t fetch_bytes) noexcept {
    fourdgs_chunk_info c{};
    c.t0 = e.t0;
    c.t1 = e.t1;
    c.offset = e.chunk_offset;
    c.size = e.chunk_length;
    c.gaussian_count = e.gaussian_count;
    c.fetch_bytes = fetch_bytes;
    c.kind = e.keyframe ? e.keyframe->chunk_kind : 0;
    if (e.keyframe) {
        c.has_keyframe_fields = 1;
        c.delta_mode = e.keyframe->delta_mode;
        c.depth = e.keyframe->depth;
        c.reference_offset = e.keyframe->reference_offset;
        c.keyframe_offset = e.keyframe->keyframe_offset;
        c.live_count = e.keyframe->live_count;
    }
    c.band_count = e.bands.size();
    return c;
}
}  // namespace

fourdgs_status fourdgs_reader_chunk_info(const fourdgs_reader* reader, size_t index,
                                         fourdgs_chunk_info* out) {
    return get_from(
        reader, scene_element(&SceneInfo::index, index, "chunk"),
        [&](const ChunkIndex& e) {
            return chunk_info_out(e, reader->opened->entry_fetch_cost(index).value_or(0));
        },
        out);
}

namespace {
// Element k of one of the scene's lists as (a small code, a 64-bit offset, a 64-bit length).
// Element k of a list as (a small code, a 64-bit offset, a 64-bit length). A NULL out-parameter
// is refused as "code", "offset" or "length", whatever fourdgs.h names it.
using RangeTriple = std::tuple<uint32_t, uint64_t, uint64_t>;
}  // namespace

fourdgs_status fourdgs_reader_chunk_band(const fourdgs_reader* reader, size_t index, size_t k,
                                         uint32_t* band, uint64_t* offset, uint64_t* length) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        // The chunk is looked up before the out-parameters are checked: a call wrong in both
        // ways is refused for the chunk.
        const ChunkIndex* chunk = element(reader->scene().index, index, "chunk");
        if (chunk == nullptr) return FOURDGS_NOT_FOUND;
        return fill_outs(
            [&] { return element(chunk->bands, k, "SH band range"); },
            [](const ChunkIndex::Band& b) { return RangeTriple{b.band, b.offset, b.length}; },
            Out{band, "code"}, Out{offset, "offset"}, Out{length, "length"});
    });
}

fourdgs_status fourdgs_reader_summary_offset(const fourdgs_reader* reader, size_t k,
                                             uint32_t* opcode, uint64_t* start, uint64_t* length) {
    return get_from(
        reader, scene_element(&SceneInfo::summary_offsets, k, "summary offset"),
        [](const SummaryOffset& so) {
            return RangeTriple{so.group_opcode, so.group_start, so.group_length};
        },
        Out{opcode, "code"}, Out{start, "offset"}, Out{length, "length"});
}

fourdgs_status fourdgs_reader_skipped_record(const fourdgs_reader* reader, size_t k,
                                             uint32_t* opcode, uint64_t* offset, uint64_t* length) {
    return get_from(
        reader, scene_element(&SceneInfo::skipped, k, "skipped record"),
        [](const SkippedRecord& r) { return RangeTriple{r.opcode, r.offset, r.length}; },
        Out{opcode, "code"}, Out{offset, "offset"}, Out{length, "length"});
}

fourdgs_status fourdgs_reader_chunks_for(const fourdgs_reader* reader, double t, size_t* indices,
                                         size_t capacity, size_t* count) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(count);
        if (auto s = finite_time(t); s != FOURDGS_OK) return s;
        if (auto s = random_access(reader); s != FOURDGS_OK) return s;
        // Gaussian-birth: the chunks covering t; keyframe-delta: the chain the state at t is
        // composed from.
        auto chunks = reader->opened->chunks_for(t);
        FOURDGS_C_TRY(chunks);
        const std::vector<std::size_t> found = std::move(chunks).value();
        if (indices != nullptr) {
            if (capacity < found.size())
                return fail(FOURDGS_BUFFER_TOO_SMALL, refusal::kBufferTooSmall,
                            std::to_string(found.size()) + " chunks cover t, the buffer holds " +
                                std::to_string(capacity));
            std::copy(found.begin(), found.end(), indices);
        }
        *count = found.size();
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_reader_fetch_ranges(const fourdgs_reader* reader, double t,
                                           fourdgs_byte_range* ranges, size_t capacity,
                                           size_t* count) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(count);
        if (auto s = finite_time(t); s != FOURDGS_OK) return s;
        if (auto s = random_access(reader); s != FOURDGS_OK) return s;
        auto planned = reader->opened->fetch_ranges(t);
        FOURDGS_C_TRY(planned);
        const std::vector<ByteRange>& found = *planned;
        if (ranges != nullptr) {
            if (capacity < found.size())
                return fail(FOURDGS_BUFFER_TOO_SMALL, refusal::kBufferTooSmall,
                            std::to_string(found.size()) + " ranges at t, the buffer holds " +
                                std::to_string(capacity));
            for (std::size_t i = 0; i < found.size(); ++i)
                ranges[i] = {found[i].offset, found[i].length};
        }
        *count = found.size();
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_reader_evaluate_chunk(const fourdgs_reader* reader, size_t index, double t,
                                             const fourdgs_evaluate_options* options,
                                             fourdgs_frame* frame) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(frame);
        if (auto s = finite_time(t); s != FOURDGS_OK) return s;
        if (auto s = random_access(reader); s != FOURDGS_OK) return s;
        if (reader->opened->keyframe_delta())
            return fail(FOURDGS_UNSUPPORTED, refusal::kChunkDecodeNeedsChain,
                        "a keyframe-delta state is composed from a chain of chunks: use "
                        "fourdgs_reader_evaluate");
        const std::size_t n = reader->scene().index.size();
        if (index >= n) return not_found("chunk", index, n);
        EvaluateOptions eo;
        if (auto s = evaluate_options_in(reader->scene(), options, eo); s != FOURDGS_OK) return s;
        FOURDGS_C_TRY(reader->opened->indexed()->decode_chunk(index, frame->chunk));
        evaluate(frame->chunk.block, t, reader->scene().header.cutoff, frame->frame, eo);
        return FOURDGS_OK;
    });
}

namespace {
fourdgs_frame_columns frame_columns_out(const Frame& f) noexcept {
    fourdgs_frame_columns c{};
    c.time = f.time;
    c.count = f.count;
    c.center = f.center.data();
    c.scale = f.scale.data();
    c.rotation = f.rotation.data();
    c.color = f.color.data();
    c.object_id = f.object_id.data();
    c.source = f.source.data();
    c.sh_degree = static_cast<uint32_t>(f.sh_degree);
    c.sh_per_gaussian = 3 * static_cast<size_t>(sh_coeffs_per_component(f.sh_degree));
    c.sh = c.sh_per_gaussian ? f.sh.data() : nullptr;
    c.flags = f.flags.data();
    c.unrepresentable = f.unrepresentable;
    return c;
}
}  // namespace

fourdgs_status fourdgs_frame_columns_get(const fourdgs_frame* frame, fourdgs_frame_columns* out) {
    return get_from(frame, [](const fourdgs_frame& f) { return &f.frame; }, frame_columns_out, out);
}

fourdgs_status fourdgs_frame_count(const fourdgs_frame* frame, size_t* count) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(frame);
        FOURDGS_C_REQUIRE(count);
        *count = frame->frame.count;
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_frame_copy(const fourdgs_frame* frame, const fourdgs_frame_buffers* buffers,
                                  size_t* count) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(frame);
        FOURDGS_C_REQUIRE(buffers);
        FOURDGS_C_REQUIRE(count);
        if (auto s = check_size(buffers, "fourdgs_frame_buffers"); s != FOURDGS_OK) return s;
        const fourdgs_frame_buffers b = take(buffers, fourdgs_frame_buffers{});
        const Frame& f = frame->frame;
        const std::size_t n = f.count;
        if (b.sh_degree > 3)
            return invalid(refusal::kInvalidOption,
                           "sh_degree " + std::to_string(b.sh_degree) + " is above 3");
        if (b.capacity < n)
            return fail(FOURDGS_BUFFER_TOO_SMALL, refusal::kBufferTooSmall,
                        "the frame holds " + std::to_string(n) + " gaussians, the buffers " +
                            std::to_string(b.capacity));
        auto copy = [n](float* dst, const std::vector<float>& src, std::size_t per) {
            if (dst && n) std::memcpy(dst, src.data(), n * per * sizeof(float));
        };
        copy(b.center, f.center, 3);
        copy(b.scale, f.scale, 3);
        copy(b.rotation, f.rotation, 4);
        copy(b.color, f.color, 4);
        if (b.object_id && n) std::memcpy(b.object_id, f.object_id.data(), n * sizeof(uint32_t));
        // SH at the requested degree: the frame's coefficients per component, the rest neutral.
        const int want = sh_coeffs_per_component(static_cast<int>(b.sh_degree));
        const int have = sh_coeffs_per_component(f.sh_degree);
        if (want > 0 && (b.sh_bytes || b.sh_floats))
            for (std::size_t i = 0; i < n; ++i)
                for (int c = 0; c < 3; ++c)
                    for (int k = 0; k < want; ++k) {
                        const std::size_t o = (i * 3 + c) * want + k;
                        const bool known = k < have;
                        const std::uint8_t byte = known ? f.sh[(i * 3 + c) * have + k] : 0;
                        if (b.sh_bytes) b.sh_bytes[o] = known ? byte : std::uint8_t{128};
                        if (b.sh_floats) b.sh_floats[o] = known ? sh_coefficient(byte) : 0.0f;
                    }
        *count = n;
        return FOURDGS_OK;
    });
}

// ---------------------------------------------------------------------------------------------
// Decoded blocks.

namespace {
void empty_block(fourdgs_block& b) noexcept {
    b.block.clear();
    b.info = fourdgs_block_info{};
    b.info.struct_size = sizeof b.info;
}

template <class T>
const T* column(const std::vector<T>& v) noexcept {
    return v.empty() ? nullptr : v.data();
}

void state_info_out(const StateInfo& s, fourdgs_block_info& i) noexcept {
    i.kind = FOURDGS_BLOCK_STATE;
    i.offset = s.offset;
    i.length = s.length;
    i.t0 = s.t0;
    i.t1 = s.t1;
    i.level = s.level;
    i.chunk_kind = s.chunk_kind;
    i.delta_mode = s.delta_mode;
    i.depth = s.depth;
    i.reference_offset = s.reference_offset;
    i.keyframe_offset = s.keyframe_offset;
    i.live_count = s.live_count;
    i.update_count = s.update_count;
    i.birth_count = s.birth_count;
    i.death_count = s.death_count;
    i.object_id_stream = s.object_id_stream;
}

// Runs one read into `block`, checks included, and empties the block when the read fails or is
// refused. The columns are kept until the reader sizes them: a column resized to the length it
// had is written once, where emptying it first would zero-fill the whole output again before
// decoding over it (93 MB for a 1M-gaussian read_all).
template <class Read>
fourdgs_status read_into(fourdgs_block* block, Read&& read) {
    block->info = fourdgs_block_info{};
    block->info.struct_size = sizeof block->info;
    const fourdgs_status s = read();
    if (s != FOURDGS_OK) empty_block(*block);
    return s;
}
}  // namespace

fourdgs_status fourdgs_block_create(const fourdgs_allocator* allocator, fourdgs_block** out) {
    return create_with(allocator, out);
}

void fourdgs_block_free(fourdgs_block* block) { destroy_handle(block); }

namespace {
fourdgs_block_columns block_columns_out(const GaussianBlock& b) noexcept {
    fourdgs_block_columns c{};
    c.count = b.count;
    if (b.count != 0) {
        c.position = column(b.position);
        c.scale = column(b.scale);
        c.rotation = column(b.rotation);
        c.color = column(b.color);
        c.motion = column(b.motion);
        c.mu_t = column(b.mu_t);
        c.sigma_t = column(b.sigma_t);
        c.win_lo = column(b.win_lo);
        c.win_hi = column(b.win_hi);
        c.flags = column(b.flags);
        c.window_index = column(b.window_index);
        c.object_id = column(b.object_id);
        c.source_group = b.has_source_ids ? column(b.source_group) : nullptr;
        c.source_index = b.has_source_ids ? column(b.source_index) : nullptr;
        c.gaussian_id = column(b.gaussian_id);
        c.sh = b.sh_per_gaussian() > 0 ? column(b.sh) : nullptr;
    }
    c.sh_degree = static_cast<uint32_t>(b.sh_degree);
    c.sh_per_gaussian = static_cast<size_t>(b.sh_per_gaussian());
    return c;
}
}  // namespace

fourdgs_status fourdgs_block_columns_get(const fourdgs_block* block, fourdgs_block_columns* out) {
    return get_from(block, [](const fourdgs_block& b) { return &b.block; }, block_columns_out, out);
}

fourdgs_status fourdgs_block_info_get(const fourdgs_block* block, fourdgs_block_info* out) {
    return get_from(block, the_handle, [](const fourdgs_block& b) { return b.info; }, out);
}

fourdgs_status fourdgs_reader_read_all(const fourdgs_reader* reader, fourdgs_block* block) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(block);
        return read_into(block, [&] {
            if (auto s = random_access(reader); s != FOURDGS_OK) return s;
            if (reader->opened->keyframe_delta())
                return fail(FOURDGS_UNSUPPORTED, refusal::kReadAllNeedsGaussianBirth,
                            "a keyframe-delta file is a sequence of composed states: read one "
                            "with fourdgs_reader_state_at");
            const IndexedReader& indexed = *reader->opened->indexed();
            FOURDGS_C_TRY(indexed.read_all(block->block, block->pool,
                                           reader->options.decode_threads));
            block->info.kind = FOURDGS_BLOCK_ALL;
            return FOURDGS_OK;
        });
    });
}

fourdgs_status fourdgs_reader_state_at(const fourdgs_reader* reader, double t,
                                       fourdgs_block* block) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(block);
        return read_into(block, [&] {
            if (auto s = finite_time(t); s != FOURDGS_OK) return s;
            if (auto s = random_access(reader); s != FOURDGS_OK) return s;
            if (const KeyframeDeltaReader* keyframes = reader->opened->keyframes()) {
                StateInfo info;
                FOURDGS_C_TRY(keyframes->state_at(t, block->block, block->delta, &info));
                state_info_out(info, block->info);
            } else {
                const IndexedReader& indexed = *reader->opened->indexed();
                FOURDGS_C_TRY(indexed.read_instant(t, block->block, block->pool,
                                                   reader->options.decode_threads));
                block->info.kind = FOURDGS_BLOCK_INSTANT;
            }
            block->info.time = t;
            return FOURDGS_OK;
        });
    });
}

fourdgs_status fourdgs_reader_evaluate_block(const fourdgs_reader* reader,
                                             const fourdgs_block* block, double t,
                                             const fourdgs_evaluate_options* options,
                                             fourdgs_frame* frame) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(block);
        FOURDGS_C_REQUIRE(frame);
        if (auto s = finite_time(t); s != FOURDGS_OK) return s;
        EvaluateOptions eo;
        if (auto s = evaluate_options_in(reader->scene(), options, eo); s != FOURDGS_OK) return s;
        evaluate(block->block, t, reader->scene().header.cutoff, frame->frame, eo);
        return FOURDGS_OK;
    });
}

// ---------------------------------------------------------------------------------------------
// Validation.

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
    if (auto s = open_options_in(options, o); s != FOURDGS_OK) return s;
    Allocator alloc;
    if (auto s = allocator_in(o.allocator, alloc); s != FOURDGS_OK) return s;
    return run_validation(*source, o, alloc, out);
}
}  // namespace

fourdgs_status fourdgs_validate_file(const char* path, size_t path_size,
                                     const fourdgs_open_options* options,
                                     fourdgs_validation** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(path);
        return validate_with(options, out, [&](std::unique_ptr<ByteSource>& source) {
            auto file = FileSource::open(std::string(path, path_size));
            FOURDGS_C_TRY(file);
            source = std::make_unique<FileSource>(std::move(file).value());
            return FOURDGS_OK;
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

namespace {
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

// ---------------------------------------------------------------------------------------------
// Writing.

namespace {
fourdgs_writer_options default_writer_options() noexcept {
    fourdgs_writer_options o{};
    o.struct_size = sizeof o;
    o.cutoff = 0.05;
    o.level = 6;
    o.write_index = o.write_crc = o.write_statistics = o.write_summary_offset = 1;
    o.max_chunk_gaussians = 65536;
    o.spatial_order = 1;
    o.threads = 0;
    return o;
}

// An enumerated field coming in: within [0, max] or refused naming it.
template <class E>
fourdgs_status enum_in(uint32_t v, uint32_t max, const char* what, E& out) {
    if (v > max)
        return invalid(refusal::kValueOutOfRange,
                       std::string(what) + " " + std::to_string(v) + " is not one of 0.." +
                           std::to_string(max));
    out = static_cast<E>(v);
    return FOURDGS_OK;
}

fourdgs_status samples_in(const fourdgs_pose_sample* samples, size_t count,
                          std::vector<TrajectorySample>& out) {
    if (!array_ok(samples, count)) return invalid(refusal::kNullArgument, "samples is NULL");
    out.resize(count);
    for (size_t i = 0; i < count; ++i) {
        out[i].time = samples[i].time;
        std::copy(samples[i].rotation, samples[i].rotation + 4, out[i].rotation.begin());
        std::copy(samples[i].translation, samples[i].translation + 3, out[i].translation.begin());
    }
    return FOURDGS_OK;
}

// The header and extras added so far; attachment and audio bytes are borrowed from `w`.
SceneHeader scene_header(const fourdgs_writer* w) {
    SceneHeader h = w->header;
    for (const AttachmentCopy& a : w->attachments)
        h.attachments.push_back({a.name, a.media_type, a.data});
    for (const AudioCopy& a : w->audio) h.audio.push_back({a.descriptor, a.data});
    return h;
}

// Runs the one-shot writer over everything added so far.
fourdgs_status finish_into(fourdgs_writer* w, ByteSink& sink) {
    SceneInput scene;
    scene.header = scene_header(w);
    if (!w->object_id.empty()) w->object_id.resize(w->count, 0);  // batches without ids: 0
    GaussianBatch& g = scene.gaussians;
    g.count = w->count;
    g.position = w->position;
    g.scale = w->scale;
    g.rotation = w->rotation;
    g.color = w->color;
    g.motion = w->motion;
    g.mu_t = w->mu_t;
    g.sigma_t = w->sigma_t;
    g.win_lo = w->win_lo;
    g.win_hi = w->win_hi;
    g.sh_degree = w->header.sh_degree;
    g.sh = w->sh;
    g.object_id = w->object_id;
    WriteReport report;
    w->report.reset();
    FOURDGS_C_TRY(write_scene(scene, w->options, sink, &report));
    w->report = std::move(report);
    return FOURDGS_OK;
}
}  // namespace

namespace {
fourdgs_write_report report_out(const WriteReport& w) noexcept {
    fourdgs_write_report r{};
    r.gaussian_count = w.gaussian_count;
    r.chunk_count = w.chunk_count;
    r.bytes_written = w.bytes_written;
    std::copy(w.aabb.begin(), w.aabb.end(), r.aabb);
    return r;
}
}  // namespace

void fourdgs_writer_options_init(fourdgs_writer_options* options) {
    if (options) *options = default_writer_options();
}

fourdgs_status fourdgs_writer_create(const fourdgs_writer_options* options, fourdgs_writer** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(options);
        FOURDGS_C_REQUIRE(out);
        if (auto s = check_size(options, "fourdgs_writer_options"); s != FOURDGS_OK) return s;
        const fourdgs_writer_options o = take(options, default_writer_options());
        Allocator alloc;
        if (auto s = allocator_in(o.allocator, alloc); s != FOURDGS_OK) return s;

        SceneHeader h;
        h.duration_sec = o.duration_sec;
        h.cutoff = o.cutoff;
        if (o.sh_degree > 3)
            return invalid(refusal::kInvalidOption, "sh_degree " + std::to_string(o.sh_degree) +
                                                 " is above 3");
        h.sh_degree = static_cast<int>(o.sh_degree);
        if (auto s = text_in(o.profile, o.profile_size, "profile", h.profile); s != FOURDGS_OK)
            return s;
        if (auto s = text_in(o.library, o.library_size, "library", h.library); s != FOURDGS_OK)
            return s;

        WriterOptions wo;
        std::string preset, ladder, codec, chunk_compression;
        if (auto s = text_in(o.preset, o.preset_size, "preset", preset); s != FOURDGS_OK) return s;
        if (auto s = text_in(o.sh_ladder, o.sh_ladder_size, "sh_ladder", ladder); s != FOURDGS_OK)
            return s;
        if (auto s = text_in(o.codec, o.codec_size, "codec", codec); s != FOURDGS_OK) return s;
        if (auto s = text_in(o.chunk_compression, o.chunk_compression_size, "chunk_compression",
                             chunk_compression);
            s != FOURDGS_OK)
            return s;
        if (!preset.empty()) {
            auto p = parse_preset(preset);
            if (!p) return invalid(refusal::kInvalidOption, "unknown preset \"" + preset + "\"");
            wo.preset = *p;
        }
        if (!ladder.empty()) {
            auto l = parse_sh_ladder(ladder);
            if (!l) return invalid(refusal::kInvalidOption, "unknown SH ladder \"" + ladder + "\"");
            wo.sh_ladder = *l;
        }
        if (codec.empty() || codec == "deflate")
            wo.codec = codec::deflate;
        else if (codec == "zstd")
            wo.codec = codec::zstd;
        else if (codec == "lz4")
            wo.codec = codec::lz4;
        else
            return invalid(refusal::kInvalidOption, "unknown codec \"" + codec + "\"");
        wo.level = o.level;
        wo.chunk_compression = chunk_compression;
        wo.write_index = o.write_index != 0;
        wo.write_crc = o.write_crc != 0;
        wo.write_statistics = o.write_statistics != 0;
        wo.write_summary_offset = o.write_summary_offset != 0;
        wo.max_chunk_gaussians = o.max_chunk_gaussians;
        wo.spatial_order = o.spatial_order != 0;
        wo.threads = o.threads;

        fourdgs_writer* w = make_handle<fourdgs_writer>(alloc);
        w->header = std::move(h);
        w->options = std::move(wo);
        *out = w;
        return FOURDGS_OK;
    });
}

void fourdgs_writer_free(fourdgs_writer* writer) { destroy_handle(writer); }

fourdgs_status fourdgs_writer_add_gaussians(fourdgs_writer* writer,
                                            const fourdgs_gaussian_batch* batch) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        FOURDGS_C_REQUIRE(batch);
        if (auto s = check_size(batch, "fourdgs_gaussian_batch"); s != FOURDGS_OK) return s;
        const fourdgs_gaussian_batch b = take(batch, fourdgs_gaussian_batch{});
        const std::size_t n = b.count;
        if (n == 0) return FOURDGS_OK;
        const int per = 3 * sh_coeffs_per_component(writer->header.sh_degree);
        if (n > std::numeric_limits<std::size_t>::max() / 64 / (per + 1))
            return invalid(refusal::kInputSizeMismatch, "count " + std::to_string(n) + " is too large");
        struct Column {
            const void* p;
            const char* name;
        };
        for (Column c : {Column{b.position, "position"}, Column{b.scale, "scale"},
                         Column{b.rotation, "rotation"}, Column{b.color, "color"},
                         Column{b.mu_t, "mu_t"}, Column{b.sigma_t, "sigma_t"},
                         Column{b.win_lo, "win_lo"}, Column{b.win_hi, "win_hi"}})
            if (c.p == nullptr)
                return invalid(refusal::kNullArgument, std::string("batch.") + c.name + " is NULL");
        if (per > 0 && b.sh == nullptr)
            return invalid(refusal::kNullArgument, "batch.sh is NULL but the scene has SH");
        // Append every column (strong guarantee: on an allocation failure nothing is kept).
        fourdgs_writer& w = *writer;
        const std::size_t before = w.count;
        try {
            auto add = [n](auto& dst, const auto* src, std::size_t k) {
                dst.insert(dst.end(), src, src + n * k);
            };
            add(w.position, b.position, 3);
            add(w.scale, b.scale, 3);
            add(w.rotation, b.rotation, 4);
            add(w.color, b.color, 4);
            if (b.motion)
                add(w.motion, b.motion, 3);
            else
                w.motion.resize(w.motion.size() + 3 * n, 0.0f);
            add(w.mu_t, b.mu_t, 1);
            add(w.sigma_t, b.sigma_t, 1);
            add(w.win_lo, b.win_lo, 1);
            add(w.win_hi, b.win_hi, 1);
            if (per > 0) add(w.sh, b.sh, static_cast<std::size_t>(per));
            if (b.object_id) {
                w.object_id.resize(before, 0);  // earlier batches without ids are background
                add(w.object_id, b.object_id, 1);
            } else if (!w.object_id.empty()) {
                w.object_id.resize(before + n, 0);
            }
        } catch (...) {
            for (auto* v : {&w.position, &w.scale, &w.motion}) v->resize(before * 3);
            for (auto* v : {&w.rotation, &w.color}) v->resize(before * 4);
            for (auto* v : {&w.mu_t, &w.sigma_t}) v->resize(before);
            w.win_lo.resize(before);
            w.win_hi.resize(before);
            w.sh.resize(before * static_cast<std::size_t>(per));
            if (w.object_id.size() > before) w.object_id.resize(before);
            throw;
        }
        w.count += n;
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_header_attribute(fourdgs_writer* writer, const char* key,
                                                   size_t key_size, const char* value,
                                                   size_t value_size) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        std::string k, v;
        if (auto s = text_in(key, key_size, "key", k); s != FOURDGS_OK) return s;
        if (auto s = text_in(value, value_size, "value", v); s != FOURDGS_OK) return s;
        writer->header.attributes.emplace_back(std::move(k), std::move(v));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_metadata(fourdgs_writer* writer, const char* name,
                                           size_t name_size, const fourdgs_key_value* entries,
                                           size_t entry_count) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        if (!array_ok(entries, entry_count)) return invalid(refusal::kNullArgument, "entries is NULL");
        Metadata m;
        if (auto s = text_in(name, name_size, "name", m.name); s != FOURDGS_OK) return s;
        for (size_t i = 0; i < entry_count; ++i) {
            std::string k, v;
            if (auto s = text_in(entries[i].key, entries[i].key_size, "entries[].key", k);
                s != FOURDGS_OK)
                return s;
            if (auto s = text_in(entries[i].value, entries[i].value_size, "entries[].value", v);
                s != FOURDGS_OK)
                return s;
            m.entries.emplace_back(std::move(k), std::move(v));
        }
        writer->header.metadata.push_back(std::move(m));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_attachment(fourdgs_writer* writer, const char* name,
                                             size_t name_size, const char* media_type,
                                             size_t media_type_size, const void* data,
                                             size_t size) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        if (!array_ok(data, size)) return invalid(refusal::kNullArgument, "data is NULL");
        AttachmentCopy a;
        if (auto s = text_in(name, name_size, "name", a.name); s != FOURDGS_OK) return s;
        if (auto s = text_in(media_type, media_type_size, "media_type", a.media_type);
            s != FOURDGS_OK)
            return s;
        const auto* bytes = static_cast<const std::uint8_t*>(data);
        a.data.assign(bytes, bytes + size);
        writer->attachments.push_back(std::move(a));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_set_camera(fourdgs_writer* writer, double fov_y_deg,
                                         const double position[3], const double target[3],
                                         const fourdgs_camera_keyframe* keyframes,
                                         size_t keyframe_count, const char* interpolation,
                                         size_t interpolation_size, uint32_t loop) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        FOURDGS_C_REQUIRE(position);
        FOURDGS_C_REQUIRE(target);
        if (!array_ok(keyframes, keyframe_count))
            return invalid(refusal::kNullArgument, "keyframes is NULL");
        Camera cam;
        cam.fov_y_deg = fov_y_deg;
        std::copy(position, position + 3, cam.position.begin());
        std::copy(target, target + 3, cam.target.begin());
        for (size_t i = 0; i < keyframe_count; ++i) {
            Camera::Keyframe k;
            k.time = keyframes[i].time;
            std::copy(keyframes[i].position, keyframes[i].position + 3, k.position.begin());
            std::copy(keyframes[i].target, keyframes[i].target + 3, k.target.begin());
            cam.keyframes.push_back(k);
        }
        if (auto s = text_in(interpolation, interpolation_size, "interpolation", cam.interpolation);
            s != FOURDGS_OK)
            return s;
        cam.loop = loop != 0;
        writer->header.camera = std::move(cam);
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_audio_source(fourdgs_writer* writer,
                                               const fourdgs_audio_source_info* info,
                                               const fourdgs_audio_keyframe* keyframes,
                                               size_t keyframe_count, const void* data,
                                               size_t size) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        FOURDGS_C_REQUIRE(info);
        if (auto s = check_size(info, "fourdgs_audio_source_info"); s != FOURDGS_OK) return s;
        if (!array_ok(keyframes, keyframe_count))
            return invalid(refusal::kNullArgument, "keyframes is NULL");
        if (!array_ok(data, size)) return invalid(refusal::kNullArgument, "data is NULL");
        const fourdgs_audio_source_info in = take(info, fourdgs_audio_source_info{});
        AudioCopy a;
        AudioSource& d = a.descriptor;
        d.source_id = in.source_id;
        if (auto s = text_in(in.name.data, in.name.size, "name", d.name); s != FOURDGS_OK) return s;
        if (auto s = text_in(in.codec.data, in.codec.size, "codec", d.codec); s != FOURDGS_OK)
            return s;
        if (auto s = text_in(in.channel_layout.data, in.channel_layout.size, "channel_layout",
                             d.channel_layout);
            s != FOURDGS_OK)
            return s;
        if (auto s = text_in(in.interpolation.data, in.interpolation.size, "interpolation",
                             d.interpolation);
            s != FOURDGS_OK)
            return s;
        if (in.flags > 0xFF)
            return invalid(refusal::kValueOutOfRange, "flags " + std::to_string(in.flags) +
                                                     " does not fit a byte");
        d.start_sec = in.start_sec;
        d.duration_sec = in.duration_sec;
        d.gain = in.gain;
        d.flags = static_cast<std::uint8_t>(in.flags);
        std::copy(in.position, in.position + 3, d.position.begin());
        std::copy(in.rotation, in.rotation + 4, d.rotation.begin());
        for (size_t i = 0; i < keyframe_count; ++i) {
            AudioSource::Keyframe k;
            k.time = keyframes[i].time;
            std::copy(keyframes[i].position, keyframes[i].position + 3, k.position.begin());
            std::copy(keyframes[i].rotation, keyframes[i].rotation + 4, k.rotation.begin());
            d.keyframes.push_back(k);
        }
        const auto* bytes = static_cast<const std::uint8_t*>(data);
        a.data.assign(bytes, bytes + size);
        writer->audio.push_back(std::move(a));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_coordinate_frame(fourdgs_writer* writer,
                                                   const fourdgs_coordinate_frame* frame) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        FOURDGS_C_REQUIRE(frame);
        if (auto s = check_size(frame, "fourdgs_coordinate_frame"); s != FOURDGS_OK) return s;
        const fourdgs_coordinate_frame in = take(frame, fourdgs_coordinate_frame{});
        CoordinateFrame f;
        if (auto s = text_in(in.name.data, in.name.size, "name", f.name); s != FOURDGS_OK) return s;
        if (auto s = enum_in(in.handedness, 2, "handedness", f.handedness); s != FOURDGS_OK) return s;
        if (auto s = enum_in(in.up_axis, 5, "up_axis", f.up_axis); s != FOURDGS_OK) return s;
        if (auto s = enum_in(in.forward_axis, 5, "forward_axis", f.forward_axis); s != FOURDGS_OK)
            return s;
        if (auto s = enum_in(in.length_unit, 6, "length_unit", f.length_unit); s != FOURDGS_OK)
            return s;
        f.metres_per_unit = in.metres_per_unit;
        writer->header.coordinate_frames.push_back(std::move(f));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_sensor(fourdgs_writer* writer, const fourdgs_sensor* sensor) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        FOURDGS_C_REQUIRE(sensor);
        if (auto s = check_size(sensor, "fourdgs_sensor"); s != FOURDGS_OK) return s;
        const fourdgs_sensor in = take(sensor, fourdgs_sensor{});
        if (!array_ok(in.distortion, in.distortion_count))
            return invalid(refusal::kNullArgument, "sensor.distortion is NULL");
        SensorCalibration c;
        if (auto s = text_in(in.name.data, in.name.size, "name", c.name); s != FOURDGS_OK) return s;
        if (auto s = text_in(in.modality.data, in.modality.size, "modality", c.modality);
            s != FOURDGS_OK)
            return s;
        if (auto s = text_in(in.rig_name.data, in.rig_name.size, "rig_name", c.rig_name);
            s != FOURDGS_OK)
            return s;
        if (auto s = enum_in(in.camera_model, 3, "camera_model", c.camera_model); s != FOURDGS_OK)
            return s;
        if (auto s = enum_in(in.pose_reference, 1, "pose_reference", c.pose_reference);
            s != FOURDGS_OK)
            return s;
        c.width_px = in.width_px;
        c.height_px = in.height_px;
        c.fx = in.fx;
        c.fy = in.fy;
        c.cx = in.cx;
        c.cy = in.cy;
        c.distortion.assign(in.distortion, in.distortion + in.distortion_count);
        std::copy(in.rotation, in.rotation + 4, c.rotation.begin());
        std::copy(in.translation, in.translation + 3, c.translation.begin());
        writer->header.sensors.push_back(std::move(c));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_rig_trajectory(fourdgs_writer* writer, const char* name,
                                                 size_t name_size, uint32_t interpolation,
                                                 const fourdgs_pose_sample* samples,
                                                 size_t sample_count) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        RigTrajectory r;
        if (auto s = text_in(name, name_size, "name", r.name); s != FOURDGS_OK) return s;
        if (auto s = enum_in(interpolation, 1, "interpolation", r.interpolation); s != FOURDGS_OK)
            return s;
        if (auto s = samples_in(samples, sample_count, r.samples); s != FOURDGS_OK) return s;
        writer->header.rig_trajectories.push_back(std::move(r));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_geodetic_anchor(fourdgs_writer* writer,
                                                  const fourdgs_geodetic_anchor* anchor) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        FOURDGS_C_REQUIRE(anchor);
        if (auto s = check_size(anchor, "fourdgs_geodetic_anchor"); s != FOURDGS_OK) return s;
        const fourdgs_geodetic_anchor in = take(anchor, fourdgs_geodetic_anchor{});
        GeodeticAnchor g;
        if (auto s = text_in(in.frame_name.data, in.frame_name.size, "frame_name", g.frame_name);
            s != FOURDGS_OK)
            return s;
        g.latitude_deg = in.latitude_deg;
        g.longitude_deg = in.longitude_deg;
        g.altitude_m = in.altitude_m;
        g.heading_deg = in.heading_deg;
        writer->header.geodetic_anchors.push_back(std::move(g));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_object(fourdgs_writer* writer, const fourdgs_object_info* object,
                                         uint32_t embedding_dim) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        FOURDGS_C_REQUIRE(object);
        if (auto s = check_size(object, "fourdgs_object_info"); s != FOURDGS_OK) return s;
        const fourdgs_object_info in = take(object, fourdgs_object_info{});
        if (embedding_dim > 0xFFFF)
            return invalid(refusal::kValueOutOfRange,
                           "embedding_dim " + std::to_string(embedding_dim) + " is above 65535");
        if (writer->header.object_table && writer->embedding_dim != embedding_dim)
            return invalid(refusal::kEmbeddingDimensionMismatch,
                           "embedding_dim " + std::to_string(embedding_dim) +
                               " differs from the table's " +
                               std::to_string(writer->embedding_dim));
        if (in.has_embedding && embedding_dim > 0 && in.embedding == nullptr)
            return invalid(refusal::kNullArgument, "object.embedding is NULL");
        ObjectTable::Entry e;
        e.object_id = in.object_id;
        if (auto s = text_in(in.label.data, in.label.size, "label", e.label); s != FOURDGS_OK)
            return s;
        std::copy(in.anchor, in.anchor + 3, e.anchor.begin());
        if (in.has_dynamics) {
            ObjectTable::Dynamics d;
            std::copy(in.velocity, in.velocity + 3, d.velocity.begin());
            std::copy(in.angular_velocity, in.angular_velocity + 3, d.angular_velocity.begin());
            std::copy(in.acceleration, in.acceleration + 3, d.acceleration.begin());
            e.dynamics = d;
        }
        if (in.has_embedding)
            e.embedding = std::vector<float>(in.embedding, in.embedding + embedding_dim);
        if (!writer->header.object_table) {
            writer->header.object_table.emplace();
            writer->header.object_table->embedding_dim = static_cast<std::uint16_t>(embedding_dim);
            writer->embedding_dim = embedding_dim;
        }
        writer->header.object_table->entries.push_back(std::move(e));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_add_object_track(fourdgs_writer* writer, uint32_t object_id,
                                               uint32_t interpolation,
                                               const fourdgs_pose_sample* samples,
                                               size_t sample_count) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        ObjectTrack t;
        t.object_id = object_id;
        if (auto s = enum_in(interpolation, 1, "interpolation", t.interpolation); s != FOURDGS_OK)
            return s;
        if (auto s = samples_in(samples, sample_count, t.samples); s != FOURDGS_OK) return s;
        writer->header.object_tracks.push_back(std::move(t));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_finish_file(fourdgs_writer* writer, const char* path,
                                          size_t path_size) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        FOURDGS_C_REQUIRE(path);
        auto sink = FileSink::create(std::string(path, path_size));
        FOURDGS_C_TRY(sink);
        if (auto s = finish_into(writer, *sink); s != FOURDGS_OK) return s;
        FOURDGS_C_TRY(sink->close());
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_finish_memory(fourdgs_writer* writer, const uint8_t** data,
                                            size_t* size) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        FOURDGS_C_REQUIRE(data);
        FOURDGS_C_REQUIRE(size);
        auto sink = std::make_unique<AllocatorSink>(writer->alloc);
        if (auto s = finish_into(writer, *sink); s != FOURDGS_OK) return s;
        writer->memory = std::move(sink);
        *data = writer->memory->data();
        *size = writer->memory->size();
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_writer_finish_callback(fourdgs_writer* writer,
                                              int (*write)(void* user, const void* data,
                                                           uint64_t size),
                                              void* user) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        FOURDGS_C_REQUIRE(write);
        CallbackSink sink(write, user);
        return finish_into(writer, sink);
    });
}

fourdgs_status fourdgs_writer_report(const fourdgs_writer* writer, fourdgs_write_report* out) {
    return get_from(
        writer,
        [](const fourdgs_writer& w) { return present(w.report, "nothing has been written yet"); },
        report_out, out);
}


// ---------------------------------------------------------------------------------------------
// Writing window by window.

namespace {
// A batch for the streaming writer: borrowed as spans (the writer consumes it before the call
// returns). `windows`: the batch carries win_lo / win_hi (add_chunk) or must not (add_window).
fourdgs_status stream_batch_in(const fourdgs_gaussian_batch* batch, int sh_degree, bool windows,
                               GaussianBatch& out) {
    FOURDGS_C_REQUIRE(batch);
    if (auto s = check_size(batch, "fourdgs_gaussian_batch"); s != FOURDGS_OK) return s;
    const fourdgs_gaussian_batch b = take(batch, fourdgs_gaussian_batch{});
    const std::size_t n = b.count;
    const std::size_t per = 3 * static_cast<std::size_t>(sh_coeffs_per_component(sh_degree));
    if (n > std::numeric_limits<std::size_t>::max() / 64 / (per + 1))
        return invalid(refusal::kInputSizeMismatch, "count " + std::to_string(n) + " is too large");
    struct Column {
        const void* p;
        const char* name;
    };
    for (Column c : {Column{b.position, "position"}, Column{b.scale, "scale"},
                     Column{b.rotation, "rotation"}, Column{b.color, "color"},
                     Column{b.mu_t, "mu_t"}, Column{b.sigma_t, "sigma_t"}})
        if (c.p == nullptr && n != 0)
            return invalid(refusal::kNullArgument, std::string("batch.") + c.name + " is NULL");
    if (windows && n != 0 && (b.win_lo == nullptr || b.win_hi == nullptr))
        return invalid(refusal::kNullArgument, "batch.win_lo or batch.win_hi is NULL");
    if (!windows && (b.win_lo != nullptr || b.win_hi != nullptr))
        return invalid(refusal::kInvalidArgument,
                       "a window's gaussians take their window from window_index: win_lo and "
                       "win_hi must be NULL");
    if (per > 0 && n != 0 && b.sh == nullptr)
        return invalid(refusal::kNullArgument, "batch.sh is NULL but the scene has SH");
    auto span = [n](const auto* p, std::size_t k) {
        using T = std::remove_cv_t<std::remove_pointer_t<decltype(p)>>;
        return p && n ? std::span<const T>(p, n * k) : std::span<const T>();
    };
    out = GaussianBatch{};
    out.count = n;
    out.position = span(b.position, 3);
    out.scale = span(b.scale, 3);
    out.rotation = span(b.rotation, 4);
    out.color = span(b.color, 4);
    out.motion = span(b.motion, 3);
    out.mu_t = span(b.mu_t, 1);
    out.sigma_t = span(b.sigma_t, 1);
    if (windows) {
        out.win_lo = span(b.win_lo, 1);
        out.win_hi = span(b.win_hi, 1);
    }
    out.sh_degree = sh_degree;
    out.sh = per > 0 ? span(b.sh, per) : std::span<const float>();
    out.object_id = span(b.object_id, 1);
    return FOURDGS_OK;
}

fourdgs_status streaming_open(const fourdgs_stream_writer* w) {
    if (!w->writer)
        return invalid(refusal::kWriterFinished, "the stream writer has finished or failed to create");
    return FOURDGS_OK;
}
}  // namespace

fourdgs_status fourdgs_stream_writer_create_file(const fourdgs_writer* writer,
                                                 const fourdgs_stream_declaration* declaration,
                                                 const char* path, size_t path_size,
                                                 fourdgs_stream_writer** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        FOURDGS_C_REQUIRE(declaration);
        FOURDGS_C_REQUIRE(path);
        FOURDGS_C_REQUIRE(out);
        if (auto s = check_size(declaration, "fourdgs_stream_declaration"); s != FOURDGS_OK)
            return s;
        const fourdgs_stream_declaration d = take(declaration, fourdgs_stream_declaration{});
        if (!array_ok(d.windows, d.window_count))
            return invalid(refusal::kNullArgument, "declaration.windows is NULL");
        if (writer->count != 0)
            return invalid(refusal::kGaussiansNotStreamed,
                           std::to_string(writer->count) +
                               " gaussians were added to the writer: a stream writer takes its "
                               "gaussians window by window");
        StreamDeclaration decl;
        decl.gaussian_count = d.gaussian_count;
        std::copy(d.aabb, d.aabb + 6, decl.aabb.begin());
        for (size_t i = 0; i < d.window_count; ++i)
            decl.windows.push_back({d.windows[2 * i], d.windows[2 * i + 1]});

        fourdgs_stream_writer* w = make_handle<fourdgs_stream_writer>(writer->alloc);
        std::unique_ptr<fourdgs_stream_writer, void (*)(fourdgs_stream_writer*)> guard(
            w, destroy_handle);
        auto sink = FileSink::create(std::string(path, path_size));
        FOURDGS_C_TRY(sink);
        w->sink.emplace(std::move(sink).value());
        auto created = StreamingWriter::create(*w->sink, scene_header(writer), decl,
                                               writer->options);
        FOURDGS_C_TRY(created);
        w->writer.emplace(std::move(created).value());
        w->sh_degree = writer->header.sh_degree;
        *out = guard.release();
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_stream_writer_add_window(fourdgs_stream_writer* writer,
                                                uint32_t window_index,
                                                const fourdgs_gaussian_batch* batch) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        if (auto s = streaming_open(writer); s != FOURDGS_OK) return s;
        GaussianBatch b;
        if (auto s = stream_batch_in(batch, writer->sh_degree, false, b); s != FOURDGS_OK)
            return s;
        FOURDGS_C_TRY(writer->writer->add_window(window_index, b));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_stream_writer_add_chunk(fourdgs_stream_writer* writer,
                                               const fourdgs_gaussian_batch* batch) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        if (auto s = streaming_open(writer); s != FOURDGS_OK) return s;
        GaussianBatch b;
        if (auto s = stream_batch_in(batch, writer->sh_degree, true, b); s != FOURDGS_OK)
            return s;
        FOURDGS_C_TRY(writer->writer->add_chunk(b));
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_stream_writer_finish(fourdgs_stream_writer* writer) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        if (auto s = streaming_open(writer); s != FOURDGS_OK) return s;
        FOURDGS_C_TRY(writer->writer->finish());
        writer->report = writer->writer->report();
        writer->writer.reset();
        FOURDGS_C_TRY(writer->sink->close());
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_stream_writer_report(const fourdgs_stream_writer* writer,
                                            fourdgs_write_report* out) {
    return get_from(
        writer,
        [](const fourdgs_stream_writer& w) {
            return present(w.report, "the stream has not finished");
        },
        report_out, out);
}

void fourdgs_stream_writer_free(fourdgs_stream_writer* writer) { destroy_handle(writer); }

// ---------------------------------------------------------------------------------------------
// Streaming.

namespace {

// The caller's sequential read callback as a forward-only source: an offset past the position
// skips the bytes between, one before it is refused (the streaming readers only move forward).
class StreamCallbackSource final : public ByteSource {
public:
    explicit StreamCallbackSource(const fourdgs_stream_callbacks& cb) : cb_(cb) {}
    StreamCallbackSource(const StreamCallbackSource&) = delete;
    StreamCallbackSource& operator=(const StreamCallbackSource&) = delete;
    ~StreamCallbackSource() override {
        if (cb_.release) cb_.release(cb_.user);
    }
    std::optional<std::uint64_t> size() const override { return std::nullopt; }
    bool random_access() const override { return false; }
    Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override {
        if (offset < position_)
            return make_error(ErrorKind::invalid_argument, refusal::kNotSeekable,
                              "a stream cannot go back to offset " + std::to_string(offset) +
                                  " from " + std::to_string(position_));
        std::uint8_t skip[4096];
        while (position_ < offset && !eof_)
            FOURDGS_TRY(pull(std::span(skip, static_cast<std::size_t>(std::min<std::uint64_t>(
                                                 sizeof skip, offset - position_)))));
        std::size_t done = 0;
        while (position_ == offset + done && done < out.size() && !eof_) {
            FOURDGS_ASSIGN(std::size_t n, pull(out.subspan(done)));
            done += n;
        }
        return done;
    }

private:
    Result<std::size_t> pull(std::span<std::uint8_t> into) {
        const std::int64_t n = cb_.read(cb_.user, into.data(), into.size());
        if (n < 0 || static_cast<std::uint64_t>(n) > into.size())
            return make_error(ErrorKind::io, refusal::kIoError,
                              "the stream read callback failed at offset " +
                                  std::to_string(position_) + " (returned " + std::to_string(n) +
                                  ")",
                              position_);
        eof_ = n == 0;
        position_ += static_cast<std::uint64_t>(n);
        return static_cast<std::size_t>(n);
    }

    fourdgs_stream_callbacks cb_;
    std::uint64_t position_ = 0;
    bool eof_ = false;
};

}  // namespace

// A stream's scene is a reader whose SceneReader holds a streaming front-end (open_scene with
// access = streaming: the magic and Header are read once, the temporal model picks the
// front-end); the stream pulls its blocks from that front-end one at a time.
struct fourdgs_stream {
    explicit fourdgs_stream(const Allocator& a) : alloc(a), scene(a) {}
    Allocator alloc;
    fourdgs_reader scene;          // the source, the front-end, and what fourdgs_stream_scene lends
    std::optional<Error> failure;  // repeated by every later fourdgs_stream_next_block
};

namespace {

fourdgs_status open_stream(std::unique_ptr<ByteSource> raw, const fourdgs_open_options* options,
                           fourdgs_stream** out) {
    FOURDGS_C_REQUIRE(out);
    fourdgs_open_options o;
    if (auto s = open_options_in(options, o); s != FOURDGS_OK) return s;
    Allocator alloc;
    if (auto s = allocator_in(o.allocator, alloc); s != FOURDGS_OK) return s;
    o.allocator = nullptr;  // copied into the handle; the caller's struct is not retained
    fourdgs_stream* s = make_handle<fourdgs_stream>(alloc);
    std::unique_ptr<fourdgs_stream, void (*)(fourdgs_stream*)> guard(s, destroy_handle);
    fourdgs_reader& scene = s->scene;
    scene.options = o;
    scene.lent_by_stream = true;
    scene.source = std::move(raw);
    OpenSceneOptions so;
    so.reader = reader_options(o);
    so.reader.keep_payloads = o.keep_payloads != 0;
    so.access = OpenSceneOptions::Access::streaming;  // front to back even over a URL
    auto opened = open_scene(*scene.source, so);
    FOURDGS_C_TRY(opened);
    scene.opened.emplace(std::move(opened).value());
    *out = guard.release();
    return FOURDGS_OK;
}

}  // namespace

fourdgs_status fourdgs_stream_open_callbacks(const fourdgs_stream_callbacks* callbacks,
                                             const fourdgs_open_options* options,
                                             fourdgs_stream** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(callbacks);
        // Made first, so `release` runs exactly once on every path.
        auto source = std::make_unique<StreamCallbackSource>(*callbacks);
        if (callbacks->read == nullptr)
            return invalid(refusal::kInvalidCallbacks, "stream callbacks need read");
        return open_stream(std::move(source), options, out);
    });
}

fourdgs_status fourdgs_stream_open_fd(int fd, uint32_t close_fd,
                                      const fourdgs_open_options* options, fourdgs_stream** out) {
    return guarded([&] {
        // Made first, so a descriptor the stream owns is closed on every path.
        auto source = std::make_unique<SequentialSource>(fd, close_fd != 0);
        if (fd < 0) return invalid(refusal::kInvalidArgument, "fd " + std::to_string(fd) + " is negative");
        return open_stream(std::move(source), options, out);
    });
}

fourdgs_status fourdgs_stream_open_url(const char* url, size_t url_size,
                                       const fourdgs_open_options* options, fourdgs_stream** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(url);
        FOURDGS_C_REQUIRE(out);
        std::unique_ptr<ByteSource> remote;
        if (auto s = url_source(url, url_size, options, remote); s != FOURDGS_OK) return s;
        return open_stream(std::move(remote), options, out);
    });
}

void fourdgs_stream_free(fourdgs_stream* stream) { destroy_handle(stream); }

fourdgs_status fourdgs_stream_scene(const fourdgs_stream* stream, const fourdgs_reader** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(stream);
        FOURDGS_C_REQUIRE(out);
        *out = &stream->scene;
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_stream_next_block(fourdgs_stream* stream, fourdgs_block* block,
                                         uint32_t* produced) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(stream);
        FOURDGS_C_REQUIRE(block);
        FOURDGS_C_REQUIRE(produced);
        bool more = false;
        const fourdgs_status s = read_into(block, [&] {
            if (stream->failure) return fail(*stream->failure);
            SceneReader& opened = *stream->scene.opened;
            KeyframeDeltaStream* keyframes = opened.keyframe_stream();
            StreamingReader* birth = opened.birth_stream();
            StateInfo state;
            Result<bool> r = keyframes ? keyframes->next_state(block->block, &state)
                                       : birth->next_chunk(block->block);
            if (!r.ok()) {
                stream->failure = r.error();
                return fail(r.error());
            }
            more = *r;
            if (!more) {
                empty_block(*block);
            } else if (keyframes) {
                state_info_out(state, block->info);
            } else {
                const ChunkRecord& c = birth->last_chunk();
                block->info.kind = FOURDGS_BLOCK_CHUNK;
                block->info.offset = birth->last_chunk_offset();
                block->info.t0 = c.t0;
                block->info.t1 = c.t1;
                block->info.level = c.level;
                block->info.object_id_stream = birth->last_chunk_object_id_stream();
            }
            return FOURDGS_OK;
        });
        if (s != FOURDGS_OK) return s;
        *produced = more ? 1 : 0;
        return FOURDGS_OK;
    });
}
