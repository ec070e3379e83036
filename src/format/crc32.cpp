// crc32 (fourdgs/wire.hpp): the CRC-32 the Footer's summary_crc states (§4.5, §5.2), in the
// record layer that checks it; libdeflate computes it.
#include <libdeflate.h>

#include "fourdgs/wire.hpp"

namespace fourdgs {

std::uint32_t crc32(Bytes data, std::uint32_t crc) {
    return libdeflate_crc32(crc, data.data(), data.size());
}

}  // namespace fourdgs
