// fourdgs_c_internal.hpp — what the C ABI's implementation files share (not installed): the
// thread's last error, the guard every entry point runs in, size-tagged structs, the one shape
// of a getter, allocator hooks for handles, and the handles more than one file uses. The C ABI's
// files are compiled WITH exceptions (see fourdgs_c.cpp); nothing here is exported.
#pragma once

#include <fourdgs/fourdgs.h>

#include <fourdgs/fourdgs.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
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
// Size-tagged structs: read or write only the bytes the caller's struct_size covers.

template <class T>
fourdgs_status check_size(const T* s, const char* what) {
    if (s->struct_size < sizeof(std::size_t))
        return invalid(refusal::kInvalidStructSize, std::string(what) + ".struct_size is not set");
    return FOURDGS_OK;
}

// Copies `value` into the caller's struct (which has already passed check_size).
template <class T>
fourdgs_status put(T* out, T value) noexcept {
    const std::size_t n = out->struct_size;
    value.struct_size = n;
    std::memcpy(out, &value, std::min(n, sizeof(T)));
    return FOURDGS_OK;
}

// The caller's struct over `defaults` (fields past its struct_size keep their defaults).
template <class T>
T take(const T* in, T defaults) noexcept {
    std::memcpy(&defaults, in, std::min(in->struct_size, sizeof(T)));
    defaults.struct_size = sizeof(T);
    return defaults;
}

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

// The names fourdgs.h gives the handles' parameters and the size-tagged structs that getters
// fill, for the refusals that name them.
template <class Handle>
inline constexpr const char* kParameterName = nullptr;
template <> inline constexpr const char* kParameterName<fourdgs_reader> = "reader";
template <> inline constexpr const char* kParameterName<fourdgs_frame> = "frame";
template <> inline constexpr const char* kParameterName<fourdgs_block> = "block";
template <> inline constexpr const char* kParameterName<fourdgs_validation> = "validation";
template <> inline constexpr const char* kParameterName<fourdgs_writer> = "writer";
template <> inline constexpr const char* kParameterName<fourdgs_stream_writer> = "writer";
template <> inline constexpr const char* kParameterName<fourdgs_player> = "player";

template <class T>
inline constexpr const char* kStructName = nullptr;
#define FOURDGS_C_STRUCT_NAME(T) template <> inline constexpr const char* kStructName<T> = #T
FOURDGS_C_STRUCT_NAME(fourdgs_error);
FOURDGS_C_STRUCT_NAME(fourdgs_scene_info);
FOURDGS_C_STRUCT_NAME(fourdgs_attachment_info);
FOURDGS_C_STRUCT_NAME(fourdgs_camera_info);
FOURDGS_C_STRUCT_NAME(fourdgs_audio_source_info);
FOURDGS_C_STRUCT_NAME(fourdgs_coordinate_frame);
FOURDGS_C_STRUCT_NAME(fourdgs_sensor);
FOURDGS_C_STRUCT_NAME(fourdgs_geodetic_anchor);
FOURDGS_C_STRUCT_NAME(fourdgs_object_info);
FOURDGS_C_STRUCT_NAME(fourdgs_chunk_info);
FOURDGS_C_STRUCT_NAME(fourdgs_frame_columns);
FOURDGS_C_STRUCT_NAME(fourdgs_block_info);
FOURDGS_C_STRUCT_NAME(fourdgs_block_columns);
FOURDGS_C_STRUCT_NAME(fourdgs_validation_summary);
FOURDGS_C_STRUCT_NAME(fourdgs_finding);
FOURDGS_C_STRUCT_NAME(fourdgs_write_report);
FOURDGS_C_STRUCT_NAME(fourdgs_player_info);
#undef FOURDGS_C_STRUCT_NAME

template <class T>
concept SizeTagged = requires(T t) { t.struct_size; };

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

template <class T>
fourdgs_status check_struct_size(Out<T> out) {
    if constexpr (SizeTagged<T>) {
        static_assert(kStructName<T> != nullptr, "name the struct in kStructName");
        return check_size(out.pointer, kStructName<T>);
    }
    return FOURDGS_OK;
}

// NULL checks in the order of the parameters, then the struct_size of a size-tagged struct.
template <class... T>
fourdgs_status check_outs(Out<T>... outs) {
    for (auto [pointer, name] : {std::pair<const void*, const char*>(outs.pointer, outs.name)...})
        if (pointer == nullptr) return null_argument(name);
    fourdgs_status s = FOURDGS_OK;
    (void)(((s = check_struct_size(outs)) == FOURDGS_OK) && ...);  // stops at the first refusal
    return s;
}

// A struct into its one out-parameter (a size-tagged one up to its struct_size), or a std::tuple
// into several scalar out-parameters, in order.
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

// Finds for get_from().

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

struct fourdgs_frame {
    explicit fourdgs_frame(const fourdgs::capi::Allocator& a) : alloc(a) {}
    fourdgs::capi::Allocator alloc;
    fourdgs::Frame frame;
    fourdgs::GaussianBlock block;       // the decoded instant, before §3
    fourdgs::SceneWorkspace workspace;  // state_at's buffers, either temporal model
    fourdgs::DecodeWorkspace chunk;     // evaluate_chunk's buffers
};

namespace fourdgs::capi {

// A find for get_from(): element `index` of `list`, a list of the reader's scene (a member of
// SceneInfo or of its bases).
template <class List, class Scene>
auto scene_element(List Scene::*list, std::size_t index, const char* what) {
    return [=](const fourdgs_reader& r) { return element(r.scene().*list, index, what); };
}

}  // namespace fourdgs::capi
