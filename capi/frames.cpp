// frames.cpp — evaluation (fourdgs.h, "Evaluation"): a frame handle, the scene evaluated at t
// into it (§3), the chunks and byte ranges an instant needs, one chunk evaluated on its own, and
// the frame's columns lent or copied out. The blocks' evaluation (blocks.cpp) shares the
// evaluate options.
#include "fourdgs_c_internal.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

using namespace fourdgs;
using namespace fourdgs::capi;

namespace {

fourdgs_evaluate_options default_evaluate_options() noexcept {
    fourdgs_evaluate_options o{};
    o.struct_size = sizeof o;
    o.max_sh_degree = 3;
    o.apply_object_tracks = 1;
    o.append = 0;
    return o;
}

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

// The frame's SH at the caller's degree: its coefficients per component, the rest neutral.
void copy_sh(const Frame& f, const fourdgs_frame_buffers& b) noexcept {
    const std::size_t n = f.count;
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
}

// What the reader plans to fetch at t (`plan`: chunks_for or fetch_ranges), into the caller's
// array: `count` always, the elements (`convert`ed) too when the array is not NULL and holds them
// — a first call with NULL sizes it. A stream's scene has no index to plan from.
template <class T, class Plan, class Convert>
fourdgs_status plan_at(const fourdgs_reader* reader, double t, T* out, std::size_t capacity,
                       std::size_t* count, const char* what_at_t, Plan&& plan,
                       Convert&& convert) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(reader);
        FOURDGS_C_REQUIRE(count);
        if (auto s = finite_time(t); s != FOURDGS_OK) return s;
        if (auto s = random_access(reader); s != FOURDGS_OK) return s;
        auto planned = plan(*reader->opened);
        FOURDGS_C_TRY(planned);
        const auto& found = *planned;
        if (out != nullptr) {
            if (capacity < found.size())
                return fail(FOURDGS_BUFFER_TOO_SMALL, refusal::kBufferTooSmall,
                            std::to_string(found.size()) + what_at_t + ", the buffer holds " +
                                std::to_string(capacity));
            std::transform(found.begin(), found.end(), out, convert);
        }
        *count = found.size();
        return FOURDGS_OK;
    });
}

}  // namespace

namespace fourdgs::capi {

fourdgs_status evaluate_options_in(const SceneInfo& scene, const fourdgs_evaluate_options* in,
                                   EvaluateOptions& out) {
    fourdgs_evaluate_options o = default_evaluate_options();
    if (in != nullptr)
        if (auto s = read_in(in, o); s != FOURDGS_OK) return s;
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

}  // namespace fourdgs::capi

void fourdgs_evaluate_options_init_sized(fourdgs_evaluate_options* options, size_t struct_size) {
    init_sized(options, struct_size, default_evaluate_options());
}

void(fourdgs_evaluate_options_init)(fourdgs_evaluate_options* options) {
    fourdgs_evaluate_options_init_sized(options, FOURDGS_C_ABI1_SIZE(fourdgs_evaluate_options, append));
}

fourdgs_status fourdgs_frame_create(const fourdgs_allocator* allocator, fourdgs_frame** out) {
    return create_handle(allocator, out);
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
        ++frame->fills;  // FrameTracking (counted first: a fill may fail midway)
        evaluate(frame->block, t, reader->scene().header.cutoff, frame->frame, eo);
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_reader_chunks_for(const fourdgs_reader* reader, double t, size_t* indices,
                                         size_t capacity, size_t* count) {
    // Gaussian-birth: the chunks covering t; keyframe-delta: the chain the state at t is
    // composed from.
    return plan_at(
        reader, t, indices, capacity, count, " chunks cover t",
        [&](const SceneReader& scene) { return scene.chunks_for(t); },
        [](std::size_t index) { return index; });
}

fourdgs_status fourdgs_reader_fetch_ranges(const fourdgs_reader* reader, double t,
                                           fourdgs_byte_range* ranges, size_t capacity,
                                           size_t* count) {
    return plan_at(
        reader, t, ranges, capacity, count, " ranges at t",
        [&](const SceneReader& scene) { return scene.fetch_ranges(t); },
        [](const ByteRange& r) { return fourdgs_byte_range{r.offset, r.length}; });
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
        FOURDGS_C_TRY(reader->opened->decode_chunk(index, frame->chunk));
        ++frame->fills;  // FrameTracking (counted first: a fill may fail midway)
        evaluate(frame->chunk.block, t, reader->scene().header.cutoff, frame->frame, eo);
        return FOURDGS_OK;
    });
}

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
        fourdgs_frame_buffers b{};
        if (auto s = read_in(buffers, b); s != FOURDGS_OK) return s;
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
        copy_sh(f, b);
        *count = n;
        return FOURDGS_OK;
    });
}
