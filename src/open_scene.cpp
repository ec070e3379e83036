// open_scene (fourdgs/open_scene.hpp): the front-end a file's temporal model needs, chosen once.
#include "fourdgs/open_scene.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "fourdgs/detail/record_stream.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "fourdgs/wire.hpp"

namespace fourdgs {
namespace {

Error not_seekable(std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal::kNotSeekable, std::move(message));
}

// The bytes a stream has already given (the magic and the Header record), then the rest of the
// stream: what lets the front-end read the file from its first byte although the stream was
// sniffed. Offsets are absolute, as the underlying source's are.
class ReplaySource final : public ByteSource {
public:
    ReplaySource(ByteSource& rest, std::vector<std::uint8_t> prefix)
        : rest_(&rest), prefix_(std::move(prefix)) {}
    std::optional<std::uint64_t> size() const override { return rest_->size(); }
    bool random_access() const override { return false; }
    Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override {
        std::size_t n = 0;
        if (offset < prefix_.size()) {
            n = static_cast<std::size_t>(
                std::min<std::uint64_t>(out.size(), prefix_.size() - offset));
            std::memcpy(out.data(), prefix_.data() + offset, n);
        }
        if (n < out.size()) {
            FOURDGS_ASSIGN(std::size_t got, rest_->read_at(offset + n, out.subspan(n)));
            n += got;
        }
        return n;
    }

private:
    ByteSource* rest_;
    std::vector<std::uint8_t> prefix_;
};

// A stream as it is read from its first byte on, every byte kept in `kept`: the bytes sniffing
// reads, which ReplaySource then gives the front-end again.
class KeepingSource final : public ByteSource {
public:
    KeepingSource(ByteSource& source, std::vector<std::uint8_t>& kept)
        : source_(&source), kept_(&kept) {}
    std::optional<std::uint64_t> size() const override { return source_->size(); }
    bool random_access() const override { return false; }
    Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override {
        // RecordStream reads front to back, so every read starts where the kept bytes end.
        if (offset != kept_->size())
            return make_error(ErrorKind::invalid_argument, refusal::kNotSeekable,
                              "sniffing read out of order at byte " + std::to_string(offset));
        FOURDGS_ASSIGN(std::size_t got, source_->read_at(offset, out));
        kept_->insert(kept_->end(), out.begin(), out.begin() + static_cast<std::ptrdiff_t>(got));
        return got;
    }

private:
    ByteSource* source_;
    std::vector<std::uint8_t>* kept_;
};

// Reads the magic and the first record from a stream, keeping what it reads in `read`. Returns
// whether it is a keyframe-delta file; on anything unexpected (no magic, no Header first, a cut,
// a record over the limit) the answer is "no", and the gaussian-birth StreamingReader then
// refuses the file by its own rule from the same bytes. A failing read is an answer as it stands.
Result<bool> sniff_keyframe_delta(ByteSource& source, const ReaderOptions& options,
                                  std::vector<std::uint8_t>& read) {
    KeepingSource kept(source, read);
    RecordStream stream(kept, options.max_record_bytes);
    auto answer = [](const Status& s) -> Result<bool> {
        if (!s.ok() && s.error().kind == ErrorKind::io) return s.error();
        return false;
    };
    if (Status magic = stream.read_magic(); !magic.ok()) return answer(magic);
    auto frame = stream.next_frame();
    if (!frame.ok()) return answer(frame.error());
    if (!*frame || (*frame)->opcode != op::header) return false;
    HeldRecord header;
    if (Status content = stream.read_content(**frame, header); !content.ok())
        return answer(content);
    SceneBuilder builder(options);  // the one place a Header record becomes a SceneInfo
    return builder.add(header.view).ok() &&
           builder.scene().header.temporal_model == kModelKeyframeDelta;
}

}  // namespace

// ---- the streaming front-ends ------------------------------------------------------------------

struct SceneReader::Stream {
    Stream(ByteSource& rest, std::vector<std::uint8_t> prefix) : source(rest, std::move(prefix)) {}
    ReplaySource source;
    std::optional<StreamingReader> birth;
    std::optional<KeyframeDeltaStream> keyframes;
    bool consumed = false;      // gaussian-birth: the rest of the stream has been read
    std::size_t passed = 0;     // blocks read so far (read_all's entry numbers)
    GaussianBlock state;        // keyframe-delta: the last composed state...
    StateInfo info;             // ...and its chunk
    bool have_state = false;
    bool state_visited = false;  // read_all has handed `state` over already
};

SceneReader::SceneReader() = default;
SceneReader::SceneReader(SceneReader&&) noexcept = default;
SceneReader& SceneReader::operator=(SceneReader&&) noexcept = default;
SceneReader::~SceneReader() = default;

Result<SceneReader> open_scene(ByteSource& source, const OpenSceneOptions& options) {
    SceneReader r;
    ReaderOptions ro = options.reader;
    ro.accept_keyframe_delta = true;
    const bool indexed = options.access == OpenSceneOptions::Access::automatic &&
                         source.random_access() && source.size().has_value();
    if (indexed) {
        FOURDGS_ASSIGN(IndexedReader base, IndexedReader::open(source, ro));
        r.keyframe_delta_ = base.scene().header.temporal_model == kModelKeyframeDelta;
        if (r.keyframe_delta_) {
            FOURDGS_ASSIGN(KeyframeDeltaReader kd, KeyframeDeltaReader::open(std::move(base)));
            r.keyframes_.emplace(std::move(kd));
        } else {
            r.indexed_.emplace(std::move(base));
        }
        return r;
    }
    std::vector<std::uint8_t> read;
    FOURDGS_ASSIGN(r.keyframe_delta_, sniff_keyframe_delta(source, ro, read));
    r.stream_ = std::make_unique<SceneReader::Stream>(source, std::move(read));
    SceneReader::Stream& s = *r.stream_;
    if (r.keyframe_delta_) {
        s.keyframes.emplace(s.source, ro);
        FOURDGS_TRY(s.keyframes->open());
    } else {
        ro.accept_keyframe_delta = false;  // sniffing said no; the reader's gate has the last word
        s.birth.emplace(s.source, ro);
        FOURDGS_TRY(s.birth->open());
    }
    return r;
}

const SceneInfo& SceneReader::scene() const noexcept {
    if (indexed_) return indexed_->scene();
    if (keyframes_) return keyframes_->scene();
    return stream_->birth ? stream_->birth->scene() : stream_->keyframes->scene();
}

bool SceneReader::index_built_by_scan() const noexcept {
    const IndexedReader* base = indexed_base();
    return base && base->index_built_by_scan();
}

const IndexedReader* SceneReader::indexed_base() const noexcept {
    if (indexed_) return &*indexed_;
    if (keyframes_) return &keyframes_->base();
    return nullptr;
}

std::uint64_t SceneReader::bytes_fetched() const noexcept {
    if (indexed_) return indexed_->bytes_fetched();
    if (keyframes_) return keyframes_->bytes_fetched();
    return 0;
}

StreamingReader* SceneReader::birth_stream() noexcept {
    return stream_ && stream_->birth ? &*stream_->birth : nullptr;
}

KeyframeDeltaStream* SceneReader::keyframe_stream() noexcept {
    return stream_ && stream_->keyframes ? &*stream_->keyframes : nullptr;
}

// ---- random access -----------------------------------------------------------------------------

Status SceneReader::state_at(double t, GaussianBlock& out, SceneWorkspace& ws,
                             unsigned threads) const {
    if (stream_) return stream_state_at(t, out);
    if (keyframes_) return keyframes_->state_at(t, out, ws.keyframes);
    return indexed_->read_instant(t, out, ws.pool, threads);
}

Status SceneReader::read_all(const std::function<Status(const StoredBlock&)>& visit,
                             SceneWorkspace& ws) const {
    if (stream_) return stream_read_all(visit, ws.block);
    const std::vector<ChunkIndex>& index = scene().index;
    if (keyframes_) {
        for (std::size_t entry : keyframes_->timeline().by_time()) {
            FOURDGS_TRY(keyframes_->state_at(index[entry].t0, ws.block, ws.keyframes));
            FOURDGS_TRY(visit(StoredBlock{entry, index[entry].t0, index[entry].t1, ws.block}));
        }
        return ok_status();
    }
    if (ws.pool.empty()) ws.pool.resize(1);
    for (std::size_t entry = 0; entry < index.size(); ++entry) {
        FOURDGS_TRY(indexed_->decode_chunk(entry, ws.pool[0]));
        FOURDGS_TRY(visit(StoredBlock{entry, index[entry].t0, index[entry].t1, ws.pool[0].block}));
    }
    return ok_status();
}

Result<std::vector<std::size_t>> SceneReader::chunks_for(double t) const {
    if (stream_) return not_seekable("chunks_for needs the Chunk Index of a random-access source");
    if (keyframes_) return keyframes_->chain(t);
    return indexed_->chunks_for(t);
}

Result<std::uint64_t> SceneReader::fetch_cost(double t) const {
    if (stream_) return not_seekable("fetch_cost needs the Chunk Index of a random-access source");
    if (keyframes_) {
        FOURDGS_ASSIGN(SeekPlan plan, keyframes_->plan(t));
        return plan.total_bytes();
    }
    std::uint64_t bytes = 0;
    for (std::size_t entry : indexed_->chunks_for(t)) bytes += indexed_->fetch_cost(entry);
    return bytes;
}

Result<std::vector<ByteRange>> SceneReader::fetch_ranges(double t) const {
    if (stream_) return not_seekable("fetch_ranges needs the Chunk Index of a random-access source");
    if (keyframes_) return keyframes_->fetch_ranges(t);
    return indexed_->fetch_ranges(indexed_->chunks_for(t));
}

Result<std::uint64_t> SceneReader::entry_fetch_cost(std::size_t entry) const {
    if (stream_) return not_seekable("fetch costs need the Chunk Index of a random-access source");
    const std::vector<ChunkIndex>& index = scene().index;
    if (entry >= index.size())
        return make_error(ErrorKind::invalid_argument, refusal::kIndexOutOfRange,
                          "index entry " + std::to_string(entry) + " of " +
                              std::to_string(index.size()));
    if (keyframes_) return fetch_cost(index[entry].t0);
    return indexed_->fetch_cost(entry);
}

// ---- front to back -----------------------------------------------------------------------------

Status SceneReader::stream_state_at(double t, GaussianBlock& out) const {
    Stream& s = *stream_;
    if (s.birth) {
        if (s.consumed)
            return not_seekable("a gaussian-birth stream answers one state_at or read_all: any "
                                "chunk may cover t, so the first one read it to the end");
        s.consumed = true;
        out.clear();
        GaussianBlock chunk;
        for (;;) {
            FOURDGS_ASSIGN(bool more, s.birth->next_chunk(chunk));
            if (!more) return ok_status();
            ++s.passed;
            const ChunkRecord& c = s.birth->last_chunk();
            if (c.t0 <= t && t < c.t1) out.append(chunk);
        }
    }
    if (!(t >= 0) || !(t < scene().header.duration_sec))
        return make_error(ErrorKind::invalid_argument, refusal::kTimeOutOfRange,
                          "t = " + detail::fmt(t) + " is outside [0, " +
                              detail::fmt(scene().header.duration_sec) + ")");
    if (s.have_state && t < s.info.t0)
        return not_seekable("the stream has passed t = " + detail::fmt(t) +
                            "; it is read forward only (the current state starts at " +
                            detail::fmt(s.info.t0) + ")");
    while (!s.have_state || !(t < s.info.t1)) {
        FOURDGS_ASSIGN(bool more, s.keyframes->next_state(s.state, &s.info));
        if (!more)
            return make_error(ErrorKind::invalid_argument, refusal::kTimeOutOfRange,
                              "no state chunk covers t = " + detail::fmt(t));
        s.have_state = true;
        s.state_visited = false;
        ++s.passed;
    }
    out = s.state;
    return ok_status();
}

Status SceneReader::stream_read_all(const std::function<Status(const StoredBlock&)>& visit,
                                    GaussianBlock& block) const {
    Stream& s = *stream_;
    if (s.birth) {
        if (s.consumed)
            return not_seekable("a gaussian-birth stream answers one state_at or read_all");
        s.consumed = true;
        for (;;) {
            FOURDGS_ASSIGN(bool more, s.birth->next_chunk(block));
            if (!more) return ok_status();
            const ChunkRecord& c = s.birth->last_chunk();
            FOURDGS_TRY(visit(StoredBlock{s.passed++, c.t0, c.t1, block}));
        }
    }
    if (s.have_state && !s.state_visited) {
        s.state_visited = true;
        FOURDGS_TRY(visit(StoredBlock{s.passed - 1, s.info.t0, s.info.t1, s.state}));
    }
    for (;;) {
        FOURDGS_ASSIGN(bool more, s.keyframes->next_state(s.state, &s.info));
        if (!more) return ok_status();
        s.have_state = true;
        s.state_visited = true;
        FOURDGS_TRY(visit(StoredBlock{s.passed++, s.info.t0, s.info.t1, s.state}));
    }
}

}  // namespace fourdgs
