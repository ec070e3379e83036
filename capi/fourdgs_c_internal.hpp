// fourdgs_c_internal.hpp — what the C ABI's implementation files share (not installed): the
// thread's last error, the guard every entry point runs in, size-tagged structs, allocator hooks
// for handles, and the handles more than one file uses. The C ABI's files are compiled WITH
// exceptions (see fourdgs_c.cpp); nothing here is exported.
#pragma once

#include <fourdgs/fourdgs.h>

#include <fourdgs/fourdgs.hpp>

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
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
