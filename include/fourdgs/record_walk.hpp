// fourdgs/record_walk.hpp — a file's records as framed, their contents unread: what a dump of a
// file's layout lists (`4dgs dump --records`), in constant memory for a file of any size.
//
// Thread safety: walk_record_frames reads `source` from the calling thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/wire.hpp"  // RecordEntry, a record as a reader walked it

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// One record as its frame says (§4.2): its opcode, the offset of its opcode byte, its content's
// length and its whole length (frame and content).
struct FramedRecord {
    std::uint8_t opcode = 0;
    std::uint64_t offset = 0, content_length = 0, length = 0;
};

// How a walk ended.
struct RecordWalk {
    std::uint64_t records = 0;  // records framed
    std::uint64_t end = 0;      // the offset the walk stopped at
    // The walk stopped exactly where the trailing magic's 8 bytes begin (§4.1); they were read
    // and checked (a mismatch is in `stopped`).
    bool at_trailing_magic = false;
    std::optional<Error> stopped;  // the refusal that ended the walk early, if one did
};

using FramedRecordVisitor = std::function<void(const FramedRecord&)>;

// Walks `source` from its leading magic record by record — each frame read, its content skipped
// and the frame handed to `visit` — until exactly the trailing magic's 8 bytes remain (§4.1) or
// the data ends, then checks the trailing magic. The error is the leading magic's refusal; a
// refusal after it (a frame cut by the end of the data, a bad trailing magic) ends the walk and is
// its `stopped`. Contents are never read, so memory stays constant.
Result<RecordWalk> walk_record_frames(ByteSource& source, const FramedRecordVisitor& visit);

}  // namespace fourdgs
FOURDGS_PUBLIC_END
