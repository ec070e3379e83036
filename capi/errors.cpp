// errors.cpp — the C ABI's version and errors (fourdgs.h, "Versions and errors"): the version
// calls, the names of the statuses, and the thread's last error that every other entry point
// leaves behind (fourdgs_c_internal.hpp keeps it; fail() writes it).
#include "fourdgs_c_internal.hpp"

#include <iterator>

using namespace fourdgs;
using namespace fourdgs::capi;

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

const char* kStatusNames[] = {"ok",    "malformed",        "truncated", "unsupported",
                              "io",    "invalid-argument", "limit",     "out-of-memory",
                              "internal", "buffer-too-small", "not-found"};

fourdgs_error error_out(const LastError& last) noexcept {
    fourdgs_error e{};
    e.status = last.status;
    e.refusal = str(last.refusal);
    e.message = str(last.message);
    e.offset = last.offset;
    return e;
}

}  // namespace

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
