// fourdgs/error.hpp — errors as values.
//
// Every fallible call in the library returns Result<T> (or Status = Result<void>). Nothing throws:
// the library builds with -fno-exceptions -fno-rtti, and no exception ever crosses the public API.
// An Error carries a kind (what would fix it), a stable kebab-case refusal identifier (shared with
// other implementations of the format where the rule is the same, see docs/api.md), a message that
// names the offending value, and the byte offset in the file where it is known.
#pragma once

#include <cstdint>
#include <functional>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "fourdgs/refusals.hpp"

namespace fourdgs {

// Fixed numeric values, sorted by what fixes the problem: a different file, a different build,
// a different call. The C ABI exposes the same numbers (capi/fourdgs.h).
enum class ErrorKind : std::uint8_t {
    malformed = 1,    // the file breaks a rule of the format: a different file fixes it
    truncated = 2,    // the bytes end before a structure does
    unsupported = 3,  // legal but not implemented here (codec, model, version): a different build
    io = 4,           // the byte source or sink failed
    invalid_argument = 5,  // the caller asked for something impossible: a different call
    limit = 6,        // a configured resource limit would be exceeded
};

constexpr std::string_view to_string(ErrorKind kind) noexcept {
    switch (kind) {
        case ErrorKind::malformed: return "malformed";
        case ErrorKind::truncated: return "truncated";
        case ErrorKind::unsupported: return "unsupported";
        case ErrorKind::io: return "io";
        case ErrorKind::invalid_argument: return "invalid-argument";
        case ErrorKind::limit: return "limit";
    }
    return "unknown";
}

inline constexpr std::uint64_t kNoOffset = ~std::uint64_t{0};

struct Error {
    ErrorKind kind = ErrorKind::malformed;
    std::string refusal;  // stable kebab-case identifier (refusals.hpp), e.g. "truncated"
    std::string message;  // one sentence naming the offending value
    std::uint64_t offset = kNoOffset;  // absolute byte offset in the file, or kNoOffset
    // What the error is about, as data, for validators and tools: "Record.field" (e.g.
    // "Window Table.count") and the offending value as text. `field` is empty when the refusal
    // identifier alone names the field (its catalog entry in refusals.hpp does), when the refusal
    // is about something other than one field, or when the layer that failed does not know it.
    std::string field;
    std::string value;

    bool has_offset() const noexcept { return offset != kNoOffset; }

    // The same error, naming the field it is about and its value: make_error(...).about(f, v).
    Error&& about(std::string field_name, std::string field_value = {}) && {
        field = std::move(field_name);
        value = std::move(field_value);
        return std::move(*this);
    }

    // "refusal: message (at byte N)" — for logs and the CLI.
    std::string describe() const {
        std::string s = refusal;
        s += ": ";
        s += message;
        if (has_offset()) {
            s += " (at byte ";
            s += std::to_string(offset);
            s += ")";
        }
        return s;
    }
};

// Where a layer that keeps going after a broken rule (a validator's collect-every-finding mode)
// sends each Error; it returns false to stop at that one.
using ReportFn = std::function<bool(Error)>;

// Builds an Error; `offset` may be filled in later by a layer that knows the file position.
inline Error make_error(ErrorKind kind, std::string_view refusal, std::string message,
                        std::uint64_t offset = kNoOffset) {
    return Error{kind, std::string(refusal), std::move(message), offset, {}, {}};
}

// Result<T>: a T or an Error, shaped like std::expected. Accessing value() of an error (or
// error() of a value) is a programming error and aborts in debug builds; it never throws.
template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit, like std::expected
    Result(Error error) : error_(std::move(error)) {}  // NOLINT

    bool ok() const noexcept { return value_.has_value(); }
    explicit operator bool() const noexcept { return ok(); }

    T& value() & { return *value_; }
    const T& value() const& { return *value_; }
    T&& value() && { return std::move(*value_); }
    T& operator*() & { return *value_; }
    const T& operator*() const& { return *value_; }
    T* operator->() { return &*value_; }
    const T* operator->() const { return &*value_; }

    const Error& error() const& { return error_; }
    Error&& error() && { return std::move(error_); }

    template <class U>
    T value_or(U&& fallback) const& {
        return ok() ? *value_ : static_cast<T>(std::forward<U>(fallback));
    }

private:
    std::optional<T> value_;
    Error error_;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

    bool ok() const noexcept { return ok_; }
    explicit operator bool() const noexcept { return ok_; }
    const Error& error() const& { return error_; }
    Error&& error() && { return std::move(error_); }

private:
    Error error_;
    bool ok_ = true;
};

using Status = Result<void>;

inline Status ok_status() { return Status{}; }

}  // namespace fourdgs

// Propagate an error from an expression returning Result<T>/Status. Inside a function returning
// any Result<U>.
#define FOURDGS_TRY(expr)                                   \
    do {                                                    \
        auto&& fourdgs_try_r_ = (expr);                     \
        if (!fourdgs_try_r_.ok()) return std::move(fourdgs_try_r_).error(); \
    } while (0)

#define FOURDGS_CONCAT_INNER_(a, b) a##b
#define FOURDGS_CONCAT_(a, b) FOURDGS_CONCAT_INNER_(a, b)

// FOURDGS_ASSIGN(auto x, expr): evaluate expr (a Result<T>); on error return it; else bind x.
#define FOURDGS_ASSIGN(decl, expr) \
    FOURDGS_ASSIGN_IMPL_(FOURDGS_CONCAT_(fourdgs_assign_r_, __LINE__), decl, expr)
#define FOURDGS_ASSIGN_IMPL_(tmp, decl, expr) \
    auto tmp = (expr);                        \
    if (!tmp.ok()) return std::move(tmp).error(); \
    decl = std::move(tmp).value()
