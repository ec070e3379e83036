// walk_record_frames (fourdgs/record_walk.hpp): the record layer's RecordStream, frames only.
#include "fourdgs/record_walk.hpp"

#include <array>
#include <limits>

#include "fourdgs/detail/record_stream.hpp"

namespace fourdgs {

using detail::RecordFrame;
using detail::RecordStream;

Result<RecordWalk> walk_record_frames(ByteSource& source, const FramedRecordVisitor& visit) {
    const std::uint64_t size = source.size().value_or(0);
    RecordStream stream(source, std::numeric_limits<std::uint64_t>::max());
    FOURDGS_TRY(stream.read_magic());
    RecordWalk walk;
    while (stream.position() + kMagicSize != size) {
        auto frame = stream.next_frame();
        if (!frame.ok()) {
            walk.stopped = frame.error();
            break;
        }
        if (!*frame) break;  // the data ended exactly at a record boundary: no trailing magic
        const RecordFrame& f = **frame;
        stream.skip(f);
        ++walk.records;
        visit({f.opcode, f.offset, f.content_length, f.total_length()});
    }
    walk.end = stream.position();
    walk.at_trailing_magic = walk.end + kMagicSize == size;
    if (!walk.stopped && walk.at_trailing_magic) {
        std::array<std::uint8_t, kMagicSize> tail{};
        if (auto st = source.read_exact(walk.end, tail); !st.ok())
            walk.stopped = st.error();
        else if (auto magic = RecordStream::check_trailing_magic(tail, walk.end); !magic.ok())
            walk.stopped = magic.error();
    }
    return walk;
}

}  // namespace fourdgs
