// fourdgs/version.hpp — the library version and the format version it implements.
#pragma once

#include "fourdgs/export.hpp"

#define FOURDGS_VERSION_MAJOR 0
#define FOURDGS_VERSION_MINOR 1
#define FOURDGS_VERSION_PATCH 0
#define FOURDGS_VERSION_STRING "0.1.0"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {
inline constexpr int kVersionMajor = FOURDGS_VERSION_MAJOR;
inline constexpr int kVersionMinor = FOURDGS_VERSION_MINOR;
inline constexpr int kVersionPatch = FOURDGS_VERSION_PATCH;
inline constexpr const char* kVersionString = FOURDGS_VERSION_STRING;
inline constexpr int kFormatMajorVersion = 1;  // the magic's version byte, '1' (§4.1)
}  // namespace fourdgs
FOURDGS_PUBLIC_END
