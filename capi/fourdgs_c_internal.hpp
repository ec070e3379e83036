// fourdgs_c_internal.hpp — what the C ABI's implementation files share (not installed): the
// thread's last error, the guard every entry point runs in, size-tagged structs, the one shape
// of a getter, allocator hooks for handles, the handles more than one file uses, and what one
// file defines for the others. Nothing here is exported.
//
// The C ABI converts shapes and holds no logic: each entry point checks its arguments, calls one
// C++ layer, and turns the result into a status plus the thread's last error. Its files are
// compiled WITH exceptions (the library is not): every entry point runs inside guarded(), so a
// std::bad_alloc from a container, or anything else thrown, becomes a status and never unwinds
// into C. fourdgs.h declares every function extern "C", which gives the definitions C linkage
// without an extern "C" block, so their bodies may use templates and lambdas.
//
// The files, by the part of fourdgs.h they implement: errors.cpp (versions and errors), open.cpp
// (opening: options, sources, the reader), scene_info.cpp (the scene as a whole and the file's
// structure), extras.cpp (the scene's extras, read and written), frames.cpp (evaluation),
// blocks.cpp (decoded blocks), stream.cpp (streaming), validation.cpp, writer.cpp (both writers),
// fourdgs_player.cpp (playback), binding_support.cpp (fourdgs_binding_support.h). Every read goes
// through SceneReader's public calls, and only public headers are included:
// fourdgs_reader_evaluate_block_changes answers with the player's own changed rows
// (fourdgs/frame_changes.hpp).
#pragma once

#include <fourdgs/fourdgs.h>

#include <fourdgs/fourdgs.hpp>

#include <fourdgs/frame_changes.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace fourdgs::capi {

// ---------------------------------------------------------------------------------------------
// The thread's last error.

struct LastError {
    fourdgs_status status = FOURDGS_OK;
    std::string refusal, message;
    std::uint64_t offset = FOURDGS_NO_OFFSET;
};
inline thread_local LastError t_error;

inline fourdgs_status fail(fourdgs_status status, std::string_view refusal,
                           std::string_view message,
                           std::uint64_t offset = FOURDGS_NO_OFFSET) noexcept {
    t_error.status = status;
    t_error.offset = offset;
    try {
        t_error.refusal.assign(refusal);
        t_error.message.assign(message);
    } catch (...) {  // no memory for the message: keep the status, drop the text
        t_error.refusal.clear();
        t_error.message.clear();
    }
    return status;
}

inline fourdgs_status fail(const Error& e) noexcept {
    return fail(static_cast<fourdgs_status>(e.kind), e.refusal, e.message, e.offset);
}

inline fourdgs_status invalid(std::string_view refusal, std::string_view message) noexcept {
    return fail(FOURDGS_INVALID_ARGUMENT, refusal, message);
}

inline fourdgs_status null_argument(std::string_view name) {
    return invalid(refusal::kNullArgument, std::string(name) + " is NULL");
}

// Every call that takes a time refuses a NaN or an infinity before anything else it looks up.
inline fourdgs_status finite_time(double t) noexcept {
    if (!std::isfinite(t)) return invalid(refusal::kNonFiniteInput, "t is not finite");
    return FOURDGS_OK;
}

inline fourdgs_status not_found(std::string_view what, std::size_t index,
                                std::size_t count) noexcept {
    try {
        return fail(FOURDGS_NOT_FOUND, refusal::kNoSuchElement,
                    std::string(what) + " " + std::to_string(index) + " does not exist (there are " +
                        std::to_string(count) + ")");
    } catch (...) {
        return fail(FOURDGS_NOT_FOUND, refusal::kNoSuchElement, "");
    }
}

// Runs one entry point's body; nothing escapes.
template <class F>
fourdgs_status guarded(F&& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return fail(FOURDGS_OUT_OF_MEMORY, refusal::kOutOfMemory, "an allocation failed");
    } catch (const std::exception& e) {
        return fail(FOURDGS_INTERNAL, refusal::kInternalError, e.what());
    } catch (...) {
        return fail(FOURDGS_INTERNAL, refusal::kInternalError, "an unknown exception was caught");
    }
}

#define FOURDGS_C_REQUIRE(p)                                             \
    do {                                                                 \
        if ((p) == nullptr) return invalid(refusal::kNullArgument, #p " is NULL"); \
    } while (0)

#define FOURDGS_C_TRY(expr)                              \
    do {                                                 \
        auto&& fourdgs_c_r_ = (expr);                    \
        if (!fourdgs_c_r_.ok()) return fail(fourdgs_c_r_.error()); \
    } while (0)

// ---------------------------------------------------------------------------------------------
// Size-tagged structs: every struct that starts with struct_size crosses the ABI through the
// three calls below, and nothing else touches one of the caller's bytes. A caller compiled
// against an older fourdgs.h passes a smaller struct: the library reads only its struct_size
// bytes (the fields past them take their defaults) and writes only those bytes.

// The names fourdgs.h gives the size-tagged structs, for the refusals that name them.
template <class T>
inline constexpr const char* kStructName = nullptr;
#define FOURDGS_C_STRUCT_NAME(T) template <> inline constexpr const char* kStructName<T> = #T
FOURDGS_C_STRUCT_NAME(fourdgs_error);
FOURDGS_C_STRUCT_NAME(fourdgs_open_options);
FOURDGS_C_STRUCT_NAME(fourdgs_scene_info);
FOURDGS_C_STRUCT_NAME(fourdgs_attachment_info);
FOURDGS_C_STRUCT_NAME(fourdgs_camera_info);
FOURDGS_C_STRUCT_NAME(fourdgs_audio_source_info);
FOURDGS_C_STRUCT_NAME(fourdgs_coordinate_frame);
FOURDGS_C_STRUCT_NAME(fourdgs_sensor);
FOURDGS_C_STRUCT_NAME(fourdgs_geodetic_anchor);
FOURDGS_C_STRUCT_NAME(fourdgs_object_info);
FOURDGS_C_STRUCT_NAME(fourdgs_evaluate_options);
FOURDGS_C_STRUCT_NAME(fourdgs_chunk_info);
FOURDGS_C_STRUCT_NAME(fourdgs_frame_columns);
FOURDGS_C_STRUCT_NAME(fourdgs_frame_buffers);
FOURDGS_C_STRUCT_NAME(fourdgs_block_info);
FOURDGS_C_STRUCT_NAME(fourdgs_block_columns);
FOURDGS_C_STRUCT_NAME(fourdgs_player_options);
FOURDGS_C_STRUCT_NAME(fourdgs_player_frame_info);
FOURDGS_C_STRUCT_NAME(fourdgs_player_info);
FOURDGS_C_STRUCT_NAME(fourdgs_validation_summary);
FOURDGS_C_STRUCT_NAME(fourdgs_finding);
FOURDGS_C_STRUCT_NAME(fourdgs_writer_options);
FOURDGS_C_STRUCT_NAME(fourdgs_gaussian_batch);
FOURDGS_C_STRUCT_NAME(fourdgs_write_report);
FOURDGS_C_STRUCT_NAME(fourdgs_stream_declaration);
FOURDGS_C_STRUCT_NAME(fourdgs_frame_changes);
#undef FOURDGS_C_STRUCT_NAME

template <class T>
concept SizeTagged = requires(T t) { t.struct_size; };

template <SizeTagged T>
fourdgs_status check_size(const T* s) {
    static_assert(kStructName<T> != nullptr, "name the struct in kStructName");
    if (s->struct_size < sizeof(std::size_t))
        return invalid(refusal::kInvalidStructSize,
                       std::string(kStructName<T>) + ".struct_size is not set");
    return FOURDGS_OK;
}

// 1. In: the caller's struct (non-NULL) over `out`, which holds the defaults: its struct_size
// checked, then its first struct_size bytes copied (the fields past them keep their defaults).
template <SizeTagged T>
fourdgs_status read_in(const T* in, T& out) {
    if (auto s = check_size(in); s != FOURDGS_OK) return s;
    std::memcpy(&out, in, std::min(in->struct_size, sizeof(T)));
    out.struct_size = sizeof(T);
    return FOURDGS_OK;
}

// 2. Out: `value` into the caller's struct (which has passed check_size), its first struct_size
// bytes only; its struct_size stays the caller's.
template <SizeTagged T>
fourdgs_status put(T* out, T value) noexcept {
    const std::size_t n = out->struct_size;
    value.struct_size = n;
    std::memcpy(out, &value, std::min(n, sizeof(T)));
    return FOURDGS_OK;
}

// 3. Init: the defaults into a struct of `struct_size` bytes (fourdgs_*_init_sized), struct_size
// set to what was written (min(struct_size, sizeof(T))). A struct too small to hold struct_size
// itself (or NULL) is left alone.
template <SizeTagged T>
void init_sized(T* s, std::size_t struct_size, T defaults) noexcept {
    if (s == nullptr || struct_size < sizeof(std::size_t)) return;
    const std::size_t n = std::min(struct_size, sizeof(T));
    defaults.struct_size = n;
    std::memcpy(s, &defaults, n);
}

// What the exported fourdgs_*_init(s) of ABI 1 writes, for binaries built then (new callers get
// fourdgs.h's macro, which passes their own sizeof): sizeof the struct as ABI 1 had it, which
// ended at `last_field` (its end rounded up to the struct's alignment). Appending a field to one
// of these structs leaves this size as it is.
constexpr std::size_t abi1_size(std::size_t end_of_last_field, std::size_t alignment) noexcept {
    return (end_of_last_field + alignment - 1) / alignment * alignment;
}
#define FOURDGS_C_ABI1_SIZE(T, last_field) \
    ::fourdgs::capi::abi1_size(offsetof(T, last_field) + sizeof(T::last_field), alignof(T))

inline fourdgs_string str(const std::string& s) noexcept { return {s.c_str(), s.size()}; }

// A string coming in as pointer + size.
inline fourdgs_status text_in(const char* p, std::size_t n, const char* what,
                              std::string& out) {
    if (p == nullptr && n != 0)
        return invalid(refusal::kNullArgument, std::string(what) + " is NULL with a non-zero size");
    out.assign(p ? p : "", n);
    return FOURDGS_OK;
}

// Checks a caller array: NULL is fine only when it has no elements.
inline bool array_ok(const void* p, std::size_t count) noexcept {
    return p != nullptr || count == 0;
}

// ---------------------------------------------------------------------------------------------
// Getters: one thing behind a handle, converted into the caller's out-parameters.
//
// Most of fourdgs.h's getters are one shape: the handle and each out-parameter refused when NULL
// (naming the parameter as fourdgs.h names it), a size-tagged out struct refused when its
// struct_size is unset, the thing looked up (element k of a list: NOT_FOUND naming k and the
// count), one conversion, the write. get_from() is that shape, written once; a getter says only
// what to find and how to convert it.

// The names fourdgs.h gives the handles' parameters, for the refusals that name them.
template <class Handle>
inline constexpr const char* kParameterName = nullptr;
template <> inline constexpr const char* kParameterName<fourdgs_reader> = "reader";
template <> inline constexpr const char* kParameterName<fourdgs_frame> = "frame";
template <> inline constexpr const char* kParameterName<fourdgs_block> = "block";
template <> inline constexpr const char* kParameterName<fourdgs_validation> = "validation";
template <> inline constexpr const char* kParameterName<fourdgs_writer> = "writer";
template <> inline constexpr const char* kParameterName<fourdgs_stream_writer> = "writer";
template <> inline constexpr const char* kParameterName<fourdgs_player> = "player";

// An out-parameter and its name in fourdgs.h. A getter's single struct out-parameter, which
// fourdgs.h always calls `out`, is passed as the bare pointer.
template <class T>
struct Out {
    T* pointer;
    const char* name;
};
template <class T>
Out(T*, const char*) -> Out<T>;  // clang before 17 (emscripten's too) deduces no aggregate

template <class T>
Out<T> named(T* out) noexcept {
    return {out, "out"};
}
template <class T>
Out<T> named(Out<T> out) noexcept {
    return out;
}

// The out-parameters are one struct (size-tagged or not) or several scalars: NULL checks in the
// order of the parameters, then a size-tagged struct's struct_size.
template <class T>
fourdgs_status check_outs(Out<T> out) {
    if (out.pointer == nullptr) return null_argument(out.name);
    if constexpr (SizeTagged<T>) return check_size(out.pointer);
    return FOURDGS_OK;
}
template <class... T>
    requires(sizeof...(T) > 1)
fourdgs_status check_outs(Out<T>... outs) {
    for (auto [pointer, name] : {std::pair<const void*, const char*>(outs.pointer, outs.name)...})
        if (pointer == nullptr) return null_argument(name);
    return FOURDGS_OK;
}

// Writes what the conversion made into the out-parameters: a struct into the one (a size-tagged
// one up to its struct_size), a std::tuple into the several, in order.
template <class V, class T>
fourdgs_status write_outs(V&& value, Out<T> out) {
    if constexpr (SizeTagged<T>) {
        return put(out.pointer, T(std::forward<V>(value)));
    } else {
        *out.pointer = std::forward<V>(value);
        return FOURDGS_OK;
    }
}
template <class... V, class... T>
    requires(sizeof...(T) > 1)
fourdgs_status write_outs(std::tuple<V...> values, Out<T>... outs) {
    std::apply([&](auto&... v) { ((*outs.pointer = v), ...); }, values);
    return FOURDGS_OK;
}

// The getter shape without the handle and outside guarded(): checks the out-parameters, then
// `find()` — a pointer to what is asked for, or NULL when it has refused (through fail(), so the
// thread's last error says why) — then writes `convert(*found)`.
template <class Find, class Convert, class... Outs>
fourdgs_status fill_outs(Find&& find, Convert&& convert, Outs... outs) {
    if (auto s = check_outs(named(outs)...); s != FOURDGS_OK) return s;
    const auto* found = find();
    if (found == nullptr) return t_error.status;
    return write_outs(convert(*found), named(outs)...);
}

// The getter shape: the handle refused when NULL, then fill_outs() with `find(*handle)`.
template <class Handle, class Find, class Convert, class... Outs>
fourdgs_status get_from(const Handle* handle, Find&& find, Convert&& convert,
                        Outs... outs) noexcept {
    return guarded([&] {
        if (handle == nullptr) return null_argument(kParameterName<Handle>);
        return fill_outs([&] { return find(*handle); }, convert, outs...);
    });
}

// Finds for get_from() (scene_element, for the lists of a reader's scene, follows the handles).

// The handle itself, for the getters of a whole handle (its columns, its info).
inline constexpr auto the_handle = [](const auto& handle) noexcept { return &handle; };

// Element `index` of `list`, or NULL after refusing it as NOT_FOUND with `what`, the index and
// the count.
template <class List>
auto element(const List& list, std::size_t index, const char* what) -> decltype(&list[index]) {
    if (index < list.size()) return &list[index];
    not_found(what, index, list.size());
    return nullptr;
}

// The value in `o`, or NULL after refusing its absence as NOT_FOUND with `message`.
template <class T>
const T* present(const std::optional<T>& o, const char* message) {
    if (!o) {
        fail(FOURDGS_NOT_FOUND, refusal::kNoSuchElement, message);
        return nullptr;
    }
    return &*o;
}

// ---------------------------------------------------------------------------------------------
// Conversions more than one file makes.

inline std::tuple<fourdgs_string, fourdgs_string> key_value_out(
    const std::pair<std::string, std::string>& entry) noexcept {
    return {str(entry.first), str(entry.second)};
}

inline fourdgs_audio_state audio_state_out(const AudioState& st) noexcept {
    fourdgs_audio_state s{};
    s.active = st.active;
    s.local_time = st.local_time;
    s.gain = st.gain;
    std::copy(st.pose.translation.begin(), st.pose.translation.end(), s.position);
    std::copy(st.pose.rotation.begin(), st.pose.rotation.end(), s.rotation);
    return s;
}

// ---------------------------------------------------------------------------------------------
// Allocator hooks for handles and the buffers the library hands out.

struct Allocator {
    fourdgs_allocator hooks{};
    bool custom = false;

    void* allocate(std::size_t size, std::size_t alignment) const {
        void* p = custom ? hooks.alloc(hooks.user, size, alignment)
                         : ::operator new(size, std::align_val_t(alignment), std::nothrow);
        if (p == nullptr) throw std::bad_alloc();
        return p;
    }
    void release(void* p, std::size_t size, std::size_t alignment) const noexcept {
        if (p == nullptr) return;
        if (custom)
            hooks.free(hooks.user, p, size);
        else
            ::operator delete(p, std::align_val_t(alignment));
    }
};

inline fourdgs_status allocator_in(const fourdgs_allocator* hooks, Allocator& out) noexcept {
    if (hooks == nullptr) return FOURDGS_OK;
    if (hooks->alloc == nullptr || hooks->free == nullptr)
        return invalid(refusal::kInvalidAllocator, "an allocator needs both alloc and free");
    out.hooks = *hooks;
    out.custom = true;
    return FOURDGS_OK;
}

// A handle lives in memory from its allocator; it keeps a copy to free itself.
template <class T>
T* make_handle(const Allocator& alloc) {
    void* p = alloc.allocate(sizeof(T), alignof(T));
    try {
        return new (p) T(alloc);
    } catch (...) {
        alloc.release(p, sizeof(T), alignof(T));
        throw;
    }
}

template <class T>
void destroy_handle(T* h) noexcept {
    if (h == nullptr) return;
    const Allocator alloc = h->alloc;
    h->~T();
    alloc.release(h, sizeof(T), alignof(T));
}

// fourdgs_frame_create and fourdgs_block_create: a handle from the given hooks (NULL: malloc).
template <class T>
fourdgs_status create_handle(const fourdgs_allocator* allocator, T** out) noexcept {
    return guarded([&] {
        FOURDGS_C_REQUIRE(out);
        Allocator alloc;
        if (auto s = allocator_in(allocator, alloc); s != FOURDGS_OK) return s;
        *out = make_handle<T>(alloc);
        return FOURDGS_OK;
    });
}

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

}  // namespace fourdgs::capi

// ---------------------------------------------------------------------------------------------
// Handles more than one file of the C ABI uses.

struct fourdgs_reader {
    explicit fourdgs_reader(const fourdgs::capi::Allocator& a) : alloc(a) {}
    fourdgs::capi::Allocator alloc;
    fourdgs_open_options options{};
    std::vector<std::uint8_t> owned;  // copy_memory
    std::unique_ptr<fourdgs::ByteSource> source;
    // The front-end the temporal model needs (open_scene): the indexed ones for a reader, the
    // streaming ones for a stream's scene (fourdgs_stream_scene), which the stream owns and frees.
    std::optional<fourdgs::SceneReader> opened;
    bool lent_by_stream = false;

    const fourdgs::SceneInfo& scene() const { return opened->scene(); }
};

namespace fourdgs::capi {
// What fourdgs_reader_evaluate_block_changes keeps in a frame: the player's changed rows
// (fourdgs/frame_changes.hpp), and what the frame was last evaluated from by that call. Any
// of these differing from the next call's evaluates the whole block.
struct FrameTracking {
    struct From {
        const fourdgs_reader* reader = nullptr;
        const fourdgs_block* block = nullptr;
        std::uint64_t block_reads = 0, frame_fills = 0;
        bool with_sh = false;
        int max_sh_degree = 0;
        const ObjectTrack* tracks = nullptr;
        bool operator==(const From&) const = default;
    };
    From from;  // block null: nothing yet, or the last call failed
    FrameChanges changes;
    PlayerFrame info;
};
}  // namespace fourdgs::capi

struct fourdgs_frame {
    explicit fourdgs_frame(const fourdgs::capi::Allocator& a) : alloc(a) {}
    fourdgs::capi::Allocator alloc;
    fourdgs::Frame frame;
    std::uint64_t fills = 0;  // calls that filled `frame`, for FrameTracking
    std::unique_ptr<fourdgs::capi::FrameTracking> tracking;
    fourdgs::GaussianBlock block;       // the decoded instant, before §3
    fourdgs::SceneWorkspace workspace;  // state_at's buffers, either temporal model
    fourdgs::DecodeWorkspace chunk;     // evaluate_chunk's buffers
};

struct fourdgs_block {
    explicit fourdgs_block(const fourdgs::capi::Allocator& a) : alloc(a) {
        info.struct_size = sizeof info;
    }
    fourdgs::capi::Allocator alloc;
    fourdgs::GaussianBlock block;
    fourdgs_block_info info{};
    fourdgs::SceneWorkspace workspace;  // state_at's and read_every_gaussian's buffers
    std::uint64_t reads = 0;            // reads into it (read_into), for FrameTracking
};

namespace fourdgs::capi {
// What a writer keeps of the attachments and audio added to it (the caller's bytes are copied).
struct AttachmentCopy {
    std::string name, media_type;
    std::vector<std::uint8_t> data;
};
struct AudioCopy {
    AudioSource descriptor;
    std::vector<std::uint8_t> data;
};
}  // namespace fourdgs::capi

// The one-shot writer (writer.cpp); extras.cpp adds the scene's extras to its header.
struct fourdgs_writer {
    explicit fourdgs_writer(const fourdgs::capi::Allocator& a) : alloc(a) {}
    fourdgs::capi::Allocator alloc;
    fourdgs::SceneHeader header;  // attachments and audio are rebuilt from the copies at finish
    fourdgs::WriterOptions options;
    std::deque<fourdgs::capi::AttachmentCopy> attachments;
    std::deque<fourdgs::capi::AudioCopy> audio;
    std::uint32_t embedding_dim = 0;

    // The gaussians added so far, in the writer's input layout.
    std::size_t count = 0;
    std::vector<float> position, scale, rotation, color, motion, mu_t, sigma_t, sh;
    std::vector<double> win_lo, win_hi;
    std::vector<std::uint32_t> object_id;  // empty until a batch brings ids

    std::unique_ptr<fourdgs::capi::AllocatorSink> memory;
    std::optional<fourdgs::WriteReport> report;
};

namespace fourdgs::capi {

// A find for get_from(): element `index` of `list`, a list of the reader's scene (a member of
// SceneInfo or of its bases).
template <class List, class Scene>
auto scene_element(List Scene::*list, std::size_t index, const char* what) {
    return [=](const fourdgs_reader& r) { return element(r.scene().*list, index, what); };
}

// ---------------------------------------------------------------------------------------------
// Reads into a block (blocks.cpp, stream.cpp).

inline void empty_block(fourdgs_block& b) noexcept {
    b.block.clear();
    b.info = fourdgs_block_info{};
    b.info.struct_size = sizeof b.info;
}

// What SceneReader said it read (state_at's instant or state, a stream's chunk or state) as the
// block's kind and description: the fields the kind does not describe stay 0.
inline void block_info_out(const BlockInfo& b, fourdgs_block_info& i) noexcept {
    static constexpr fourdgs_block_kind kKinds[] = {FOURDGS_BLOCK_INSTANT, FOURDGS_BLOCK_CHUNK,
                                                    FOURDGS_BLOCK_STATE};
    const StateInfo& s = b.record;
    i.kind = kKinds[static_cast<std::size_t>(b.kind)];
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
    ++block->reads;
    const fourdgs_status s = read();
    if (s != FOURDGS_OK) empty_block(*block);
    return s;
}

// ---------------------------------------------------------------------------------------------
// What one file defines for the others.

// open.cpp. The caller's open options over the defaults (NULL: the defaults), checked.
fourdgs_status open_options_in(const fourdgs_open_options* in, fourdgs_open_options& out);
// open_options_in, then the allocator the options name, copied into `alloc`: the handle keeps
// the hooks and the caller's struct is not retained (o.allocator is cleared).
fourdgs_status open_settings_in(const fourdgs_open_options* options, fourdgs_open_options& o,
                                Allocator& alloc);
ReaderOptions reader_options(const fourdgs_open_options& o);
// The byte sources: a file; the caller's range-read callbacks, whose `release` runs exactly once,
// when the source dies — which is `out`'s from the start, refused or not; a URL, read by HTTP(S)
// range requests with the options' headers, CA bundle, timeouts and attempts.
fourdgs_status file_source(const char* path, std::size_t path_size,
                           std::unique_ptr<ByteSource>& out);
fourdgs_status callback_source(const fourdgs_read_callbacks* cb, std::unique_ptr<ByteSource>& out);
fourdgs_status url_source(const char* url, std::size_t url_size,
                          const fourdgs_open_options* options, std::unique_ptr<ByteSource>& out);
// Opens `source` into `r` with the front-end its temporal model needs (open_scene): `automatic`
// for a reader, `streaming` (front to back, keeping payloads when the options ask) for a
// stream's scene.
fourdgs_status open_scene_into(fourdgs_reader& r, std::unique_ptr<ByteSource> source,
                               const fourdgs_open_options& o, OpenSceneOptions::Access access);

// frames.cpp. The caller's evaluate options (NULL: the defaults), checked, as EvaluateOptions
// over `scene`'s object tracks.
fourdgs_status evaluate_options_in(const SceneInfo& scene, const fourdgs_evaluate_options* in,
                                   EvaluateOptions& out);
// The calls that fetch through the index refuse a stream's scene.
fourdgs_status random_access(const fourdgs_reader* reader);

}  // namespace fourdgs::capi
