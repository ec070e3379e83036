// Compression into a caller's buffer (internal to the library): what codec.hpp's compress() does,
// without the std::vector it resizes, so that an encoder can keep one buffer at its largest size
// across streams and chunks instead of zero-filling a fresh one for every call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "fourdgs/error.hpp"
#include "fourdgs/wire.hpp"

namespace fourdgs::detail {

// The most bytes compress_into() can write for `n` input bytes with `codec` at `level`.
std::size_t compress_bound(std::uint8_t codec, int level, std::size_t n);

// compress() (fourdgs/codec.hpp) into `out`, which holds at least compress_bound(codec, in.size())
// bytes: the number of bytes written. The same refusals as compress(). Thread-safe.
Result<std::size_t> compress_into(std::uint8_t codec, int level, Bytes in,
                                  std::span<std::uint8_t> out);

}  // namespace fourdgs::detail
