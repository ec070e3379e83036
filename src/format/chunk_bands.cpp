// ChunkBands (fourdgs/detail/chunk_bands.hpp): a chunk's SH Band Stream records, parsed and
// gathered in one place.
#include "fourdgs/detail/chunk_bands.hpp"

namespace fourdgs::detail {

Status ChunkBands::add_to(std::vector<ShBandRecord>& bands, const RecordView& record) {
    FOURDGS_ASSIGN(ShBandRecord band, parse_sh_band(record));
    bands.push_back(band);
    return ok_status();
}

Status ChunkBands::add(const RecordView& record) {
    FOURDGS_TRY(add_to(bands, record));
    ranges.push_back({bands.back().band, record.offset, record.total_length()});
    return ok_status();
}

}  // namespace fourdgs::detail
