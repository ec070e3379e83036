// fourdgs/detail/chunk_bands.hpp — a state chunk's SH Band Stream records (§5.7), gathered the one
// way every path gathers them: the streaming walk (ChunkWalk::read_bands), the indexed fetch
// (RangeFetcher::fetch_sh_bands), the validator, merge and the writer's read-back.
//
// Each record is parsed (parse_sh_band) and appended as it arrives; the rules on the set belong
// to the step that reads the set: the decoder's (decode_sh_bands), the index entry's
// (fetch_sh_bands), the validator's. A band named twice is the registry's by_key_in_chunk rule,
// which each of them asks of the bands it reads (find_in_chunk, src/format/record_keying.hpp); a
// band missing below the degree read is the decoder's and the index entry's.
//
// Thread safety: a ChunkBands is used by one thread at a time.
#pragma once

#include <cstdint>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/records/chunk.hpp"
#include "fourdgs/records/summary.hpp"
#include "fourdgs/wire.hpp"

FOURDGS_DETAIL_BEGIN
namespace fourdgs::detail {

// The SH Band Stream records that follow a chunk, as a path found them.
struct ChunkBands {
    std::vector<ShBandRecord> bands;       // in the order added; views the caller's buffers
    std::vector<ChunkIndex::Band> ranges;  // where each of those records lies
    // Bands 1..whole arrived whole and in order: all of them, unless the data was cut in or just
    // after them (then the streaming walk's truncation() is set, M100).
    int whole = 3;

    // Appends SH Band Stream record `record` (it must live as long as this does) and where it
    // lies. Refusals: parse_sh_band's.
    Status add(const RecordView& record);

    // add()'s parse and append, into `bands` alone: for a path whose band list is a caller's
    // (the indexed reader's DecodeWorkspace::band_records). Refusals: parse_sh_band's.
    static Status add_to(std::vector<ShBandRecord>& bands, const RecordView& record);
};

}  // namespace fourdgs::detail
FOURDGS_DETAIL_END
