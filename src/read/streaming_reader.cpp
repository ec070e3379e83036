// StreamingReader (fourdgs/streaming_reader.hpp): one pass, front to back, the records walked by a
// ChunkWalk (detail/chunk_walk.hpp) and each chunk decoded.
#include "fourdgs/streaming_reader.hpp"

#include <algorithm>
#include <string>

#include "fourdgs/detail/chunk_walk.hpp"

namespace fourdgs {

// ---------------------------------------------------------------------------------------------
// StreamingReader.

StreamingReader::StreamingReader(ByteSource& source, ReaderOptions options)
    : options_(options),
      walk_(std::make_unique<detail::ChunkWalk>(source, options_,
                                                detail::ChunkWalk::Model::gaussian_birth)) {}
StreamingReader::~StreamingReader() = default;
StreamingReader::StreamingReader(StreamingReader&&) noexcept = default;
StreamingReader& StreamingReader::operator=(StreamingReader&&) noexcept = default;

Status StreamingReader::open() { return walk_->open(); }
const SceneInfo& StreamingReader::scene() const noexcept { return walk_->scene(); }
bool StreamingReader::finished() const noexcept { return walk_->finished(); }
const std::optional<Error>& StreamingReader::truncation() const noexcept {
    return walk_->truncation();
}
void StreamingReader::enable_record_log(bool on) noexcept { walk_->stream().enable_log(on); }
const std::vector<RecordEntry>& StreamingReader::record_log() const noexcept {
    return walk_->stream().log();
}

Result<bool> StreamingReader::next_chunk_bins(ChunkBins& bins) {
    RecordView record;
    FOURDGS_ASSIGN(bool have, walk_->next_chunk(record));
    if (!have) return false;
    FOURDGS_ASSIGN(chunk_, parse_chunk(record));
    chunk_offset_ = record.offset;
    FOURDGS_ASSIGN(detail::ChunkBands b, walk_->read_bands());
    detail::FramedChunk seen = detail::FramedChunk::of(record, chunk_);
    seen.bands = b.ranges;
    walk_->remember(std::move(seen));
    ChunkDecodeOptions decode = options_.decode;
    if (walk_->truncation()) decode.max_sh_degree = std::min(decode.max_sh_degree, b.whole);
    FOURDGS_TRY(decode_chunk_bins(walk_->scene(), chunk_, b.bands, decode, bins, scratch_));
    return true;
}

Result<bool> StreamingReader::next_chunk(GaussianBlock& out) {
    FOURDGS_ASSIGN(bool have, next_chunk_bins(bins_));
    if (!have) return false;
    out.clear();
    dequantize(walk_->scene(), bins_, out);
    return true;
}

Result<LoadedScene> read_streaming(ByteSource& source, const ReaderOptions& options) {
    StreamingReader reader(source, options);
    LoadedScene loaded;
    auto opened = reader.open();
    if (!opened.ok() && opened.error().kind != ErrorKind::truncated) return std::move(opened).error();
    GaussianBlock block;
    while (true) {
        auto r = reader.next_chunk(block);
        if (!r.ok()) {
            if (r.error().kind != ErrorKind::truncated) return std::move(r).error();
            loaded.truncation = r.error();
            break;
        }
        if (!*r) break;
        loaded.gaussians.append(block);
    }
    loaded.info = reader.scene();
    return loaded;
}

}  // namespace fourdgs
