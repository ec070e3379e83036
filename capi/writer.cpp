// writer.cpp — both writers (fourdgs.h, "Writing" and "Writing window by window"). The one-shot
// writer gathers the gaussians and the extras the caller adds (extras.cpp adds the extras) and
// runs write_scene over them at finish, into a file, memory or a callback. The stream writer
// takes the header and extras from a writer and the gaussians window by window, each batch
// borrowed for the call.
#include "fourdgs_c_internal.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

using namespace fourdgs;
using namespace fourdgs::capi;

struct fourdgs_stream_writer {
    explicit fourdgs_stream_writer(const Allocator& a) : alloc(a) {}
    Allocator alloc;
    int sh_degree = 0;
    std::optional<FileSink> sink;
    std::optional<StreamingWriter> writer;  // refers to *sink
    std::optional<WriteReport> report;      // after finish
};

namespace {

// ---------------------------------------------------------------------------------------------
// The writer's options.

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

// The Header the options declare (§5.1).
fourdgs_status header_in(const fourdgs_writer_options& o, SceneHeader& h) {
    h.duration_sec = o.duration_sec;
    h.cutoff = o.cutoff;
    if (o.sh_degree > 3)
        return invalid(refusal::kInvalidOption,
                       "sh_degree " + std::to_string(o.sh_degree) + " is above 3");
    h.sh_degree = static_cast<int>(o.sh_degree);
    if (auto s = text_in(o.profile, o.profile_size, "profile", h.profile); s != FOURDGS_OK)
        return s;
    if (auto s = text_in(o.library, o.library_size, "library", h.library); s != FOURDGS_OK)
        return s;
    return FOURDGS_OK;
}

// A codec by name (the codec table's: "deflate", "zstd", "lz4"), or none: the writer's default.
fourdgs_status codec_in(const std::string& codec, std::uint8_t& out) {
    if (codec.empty()) {
        out = WriterOptions{}.codec;
        return FOURDGS_OK;
    }
    const CodecInfo* info = find_codec(codec);  // the library's codec table names them
    if (!info) return invalid(refusal::kInvalidOption, "unknown codec \"" + codec + "\"");
    out = info->byte;
    return FOURDGS_OK;
}

// The quantization and the encoding the options ask for.
fourdgs_status encoding_in(const fourdgs_writer_options& o, WriterOptions& wo) {
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
    if (auto s = codec_in(codec, wo.codec); s != FOURDGS_OK) return s;
    wo.level = o.level;
    wo.chunk_compression = chunk_compression;
    wo.write_index = o.write_index != 0;
    wo.write_crc = o.write_crc != 0;
    wo.write_statistics = o.write_statistics != 0;
    wo.write_summary_offset = o.write_summary_offset != 0;
    wo.max_chunk_gaussians = o.max_chunk_gaussians;
    wo.spatial_order = o.spatial_order != 0;
    wo.threads = o.threads;
    return FOURDGS_OK;
}

// ---------------------------------------------------------------------------------------------
// Gaussian batches.

// What every batch must carry: a count whose columns fit in memory (64 bytes per gaussian and
// per SH value is past any column) and, when it has gaussians, the six columns without a
// default.
fourdgs_status batch_columns_in(const fourdgs_gaussian_batch& b, std::size_t sh_per_gaussian) {
    const std::size_t n = b.count;
    if (n > std::numeric_limits<std::size_t>::max() / 64 / (sh_per_gaussian + 1))
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
    return FOURDGS_OK;
}

// Appends the batch's columns to the writer's (strong guarantee: on an allocation failure
// nothing is kept).
void append_batch(fourdgs_writer& w, const fourdgs_gaussian_batch& b, std::size_t per) {
    const std::size_t n = b.count;
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
        if (per > 0) add(w.sh, b.sh, per);
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
        w.sh.resize(before * per);
        if (w.object_id.size() > before) w.object_id.resize(before);
        throw;
    }
    w.count += n;
}

// ---------------------------------------------------------------------------------------------
// Finishing.

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

fourdgs_write_report report_out(const WriteReport& w) noexcept {
    fourdgs_write_report r{};
    r.gaussian_count = w.gaussian_count;
    r.chunk_count = w.chunk_count;
    r.bytes_written = w.bytes_written;
    std::copy(w.aabb.begin(), w.aabb.end(), r.aabb);
    return r;
}

}  // namespace

void fourdgs_writer_options_init_sized(fourdgs_writer_options* options, size_t struct_size) {
    init_sized(options, struct_size, default_writer_options());
}

void(fourdgs_writer_options_init)(fourdgs_writer_options* options) {
    fourdgs_writer_options_init_sized(options, FOURDGS_C_ABI1_SIZE(fourdgs_writer_options, allocator));
}

fourdgs_status fourdgs_writer_create(const fourdgs_writer_options* options, fourdgs_writer** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(options);
        FOURDGS_C_REQUIRE(out);
        fourdgs_writer_options o = default_writer_options();
        if (auto s = read_in(options, o); s != FOURDGS_OK) return s;
        Allocator alloc;
        if (auto s = allocator_in(o.allocator, alloc); s != FOURDGS_OK) return s;
        SceneHeader h;
        if (auto s = header_in(o, h); s != FOURDGS_OK) return s;
        WriterOptions wo;
        if (auto s = encoding_in(o, wo); s != FOURDGS_OK) return s;
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
        fourdgs_gaussian_batch b{};
        if (auto s = read_in(batch, b); s != FOURDGS_OK) return s;
        if (b.count == 0) return FOURDGS_OK;
        const auto per =
            static_cast<std::size_t>(3 * sh_coeffs_per_component(writer->header.sh_degree));
        if (auto s = batch_columns_in(b, per); s != FOURDGS_OK) return s;
        // A whole scene's gaussians: each carries its window.
        if (b.win_lo == nullptr) return null_argument("batch.win_lo");
        if (b.win_hi == nullptr) return null_argument("batch.win_hi");
        if (per > 0 && b.sh == nullptr)
            return invalid(refusal::kNullArgument, "batch.sh is NULL but the scene has SH");
        append_batch(*writer, b, per);
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
    fourdgs_gaussian_batch b{};
    if (auto s = read_in(batch, b); s != FOURDGS_OK) return s;
    const std::size_t n = b.count;
    const std::size_t per = 3 * static_cast<std::size_t>(sh_coeffs_per_component(sh_degree));
    if (auto s = batch_columns_in(b, per); s != FOURDGS_OK) return s;
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

// What the stream writer is told in advance: the count, the bounds, the Window Table.
StreamDeclaration declaration_in(const fourdgs_stream_declaration& d) {
    StreamDeclaration decl;
    decl.gaussian_count = d.gaussian_count;
    std::copy(d.aabb, d.aabb + 6, decl.aabb.begin());
    for (size_t i = 0; i < d.window_count; ++i)
        decl.windows.push_back({d.windows[2 * i], d.windows[2 * i + 1]});
    return decl;
}

// One batch into an open stream writer through `add` (add_window or add_chunk); `windows` as for
// stream_batch_in.
template <class Add>
fourdgs_status add_streamed(fourdgs_stream_writer* writer, const fourdgs_gaussian_batch* batch,
                            bool windows, Add&& add) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(writer);
        if (auto s = streaming_open(writer); s != FOURDGS_OK) return s;
        GaussianBatch b;
        if (auto s = stream_batch_in(batch, writer->sh_degree, windows, b); s != FOURDGS_OK)
            return s;
        FOURDGS_C_TRY(add(*writer->writer, b));
        return FOURDGS_OK;
    });
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
        fourdgs_stream_declaration d{};
        if (auto s = read_in(declaration, d); s != FOURDGS_OK) return s;
        if (!array_ok(d.windows, d.window_count))
            return invalid(refusal::kNullArgument, "declaration.windows is NULL");
        if (writer->count != 0)
            return invalid(refusal::kGaussiansNotStreamed,
                           std::to_string(writer->count) +
                               " gaussians were added to the writer: a stream writer takes its "
                               "gaussians window by window");
        const StreamDeclaration decl = declaration_in(d);
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
    return add_streamed(writer, batch, false, [&](StreamingWriter& w, const GaussianBatch& b) {
        return w.add_window(window_index, b);
    });
}

fourdgs_status fourdgs_stream_writer_add_chunk(fourdgs_stream_writer* writer,
                                               const fourdgs_gaussian_batch* batch) {
    return add_streamed(writer, batch, true, [&](StreamingWriter& w, const GaussianBatch& b) {
        return w.add_chunk(b);
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
