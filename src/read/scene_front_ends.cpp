// scene_front_ends.cpp — the four front-ends behind SceneReader (scene_front_end.hpp): what each
// question of open_scene.hpp means on one temporal model and one access. The two random-access
// ones first, then the two streams; each part starts with what its pair shares.
#include <string>
#include <utility>

#include "scene_front_end.hpp"

namespace fourdgs {

// Only keyframe-delta on random access steps; the others read each state whole.
Result<std::optional<std::size_t>> SceneFrontEnd::next_step(const SceneWorkspace&) const {
    return std::optional<std::size_t>();
}
Result<bool> SceneFrontEnd::step_forward(SceneWorkspace&, StateStep&) const { return false; }

namespace {

Error not_seekable(std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal::kNotSeekable, std::move(message));
}

Error read_all_needs_gaussian_birth() {
    return make_error(ErrorKind::unsupported, refusal::kReadAllNeedsGaussianBirth,
                      "a keyframe-delta file is a sequence of composed states: read one with "
                      "state_at, or each in turn with read_all");
}

Error chunk_decode_needs_chain() {
    return make_error(ErrorKind::unsupported, refusal::kChunkDecodeNeedsChain,
                      "a keyframe-delta state is composed from a chain of chunks: read it "
                      "with state_at");
}

// ---- random access -----------------------------------------------------------------------------

// What both indexed front-ends share: their reader, the IndexedReader's open-time answers, and a
// stream's own call refused.
template <class Reader>
class IndexedFrontEnd : public SceneFrontEnd {
public:
    explicit IndexedFrontEnd(Reader reader) : reader_(std::move(reader)) {}

    std::uint64_t bytes_fetched() const noexcept final { return reader_.bytes_fetched(); }
    bool random_access() const noexcept final { return true; }
    bool index_built_by_scan() const noexcept final { return base().index_built_by_scan(); }
    bool read_by_scan() const noexcept final { return base().read_by_scan(); }
    const std::optional<Error>& scan_cause() const noexcept final { return base().scan_cause(); }
    const SceneInfo& scene() const noexcept final { return base().scene(); }

    Result<bool> next_block(GaussianBlock&, BlockInfo&) final {
        return make_error(ErrorKind::invalid_argument, refusal::kInvalidArgument,
                          "next_block pulls a stream's blocks; a random-access scene is read "
                          "with state_at or read_all");
    }

    Result<std::uint64_t> entry_fetch_cost(std::size_t entry) const final {
        const std::vector<ChunkIndex>& index = scene().index;
        if (entry >= index.size())
            return make_error(ErrorKind::invalid_argument, refusal::kIndexOutOfRange,
                              "index entry " + std::to_string(entry) + " of " +
                                  std::to_string(index.size()));
        return checked_entry_fetch_cost(entry);
    }

protected:
    virtual const IndexedReader& base() const noexcept = 0;
    // entry_fetch_cost for an entry of the index.
    virtual Result<std::uint64_t> checked_entry_fetch_cost(std::size_t entry) const = 0;

    Reader reader_;
};

// Gaussian-birth, random access: the IndexedReader's calls as they are.
class IndexedBirth final : public IndexedFrontEnd<IndexedReader> {
public:
    using IndexedFrontEnd::IndexedFrontEnd;

    bool keyframe_delta() const noexcept override { return false; }
    Result<Playback> playback() const override { return Playback::chunks; }

    Status state_at(double t, GaussianBlock& out, SceneWorkspace& ws, unsigned threads,
                    BlockInfo* info) override {
        FOURDGS_TRY(reader_.read_instant(t, out, ws.pool, threads));
        if (info) *info = BlockInfo{};
        return ok_status();
    }

    Status read_all(const StoredBlockVisit& visit, SceneWorkspace& ws) override {
        const std::vector<ChunkIndex>& index = scene().index;
        if (ws.pool.empty()) ws.pool.resize(1);
        for (std::size_t entry = 0; entry < index.size(); ++entry) {
            FOURDGS_TRY(reader_.decode_chunk(entry, ws.pool[0]));
            FOURDGS_TRY(
                visit(StoredBlock{entry, index[entry].t0, index[entry].t1, ws.pool[0].block}));
        }
        return ok_status();
    }

    Status read_every_gaussian(GaussianBlock& out, SceneWorkspace& ws,
                               unsigned threads) override {
        return reader_.read_all(out, ws.pool, threads);
    }

    Status decode_chunk(std::size_t index, DecodeWorkspace& ws) const override {
        return reader_.decode_chunk(index, ws);
    }
    Result<std::vector<ByteRange>> entry_ranges(
        std::span<const std::size_t> entries) const override {
        return reader_.fetch_ranges(entries);
    }
    Status decode_chunks(std::span<const std::size_t> entries, GaussianBlock& out,
                         SceneWorkspace& ws, unsigned threads) const override {
        return reader_.decode_chunks(entries, out, ws.pool, threads);
    }

    Result<std::vector<std::size_t>> chunks_for(double t) const override {
        return reader_.chunks_for(t);
    }
    const StateTimeline* states() const noexcept override { return &reader_.states(); }

    Result<std::uint64_t> fetch_cost(double t) const override {
        std::uint64_t bytes = 0;
        for (std::size_t entry : reader_.chunks_for(t)) bytes += reader_.fetch_cost(entry);
        return bytes;
    }

    Result<std::vector<ByteRange>> fetch_ranges(double t) const override {
        return reader_.fetch_ranges(reader_.chunks_for(t));
    }

private:
    const IndexedReader& base() const noexcept override { return reader_; }
    Result<std::uint64_t> checked_entry_fetch_cost(std::size_t entry) const override {
        return reader_.fetch_cost(entry);
    }
};

// Keyframe-delta, random access: each state composed from its chain (KeyframeDeltaReader).
class IndexedKeyframes final : public IndexedFrontEnd<KeyframeDeltaReader> {
public:
    using IndexedFrontEnd::IndexedFrontEnd;

    bool keyframe_delta() const noexcept override { return true; }
    Result<Playback> playback() const override { return Playback::steps; }

    Status state_at(double t, GaussianBlock& out, SceneWorkspace& ws, unsigned,
                    BlockInfo* info) override {
        if (info) info->kind = BlockInfo::Kind::state;
        return reader_.state_at(t, out, ws.keyframes, info ? &info->record : nullptr);
    }

    Status read_all(const StoredBlockVisit& visit, SceneWorkspace& ws) override {
        const std::vector<ChunkIndex>& index = scene().index;
        for (std::size_t entry : reader_.timeline().by_time()) {
            FOURDGS_TRY(reader_.state_at(index[entry].t0, ws.block, ws.keyframes));
            FOURDGS_TRY(visit(StoredBlock{entry, index[entry].t0, index[entry].t1, ws.block}));
        }
        return ok_status();
    }

    Status read_every_gaussian(GaussianBlock&, SceneWorkspace&, unsigned) override {
        return read_all_needs_gaussian_birth();
    }

    Status decode_chunk(std::size_t, DecodeWorkspace&) const override {
        return chunk_decode_needs_chain();
    }
    Result<std::vector<ByteRange>> entry_ranges(std::span<const std::size_t>) const override {
        return chunk_decode_needs_chain();
    }
    Status decode_chunks(std::span<const std::size_t>, GaussianBlock&, SceneWorkspace&,
                         unsigned) const override {
        return chunk_decode_needs_chain();
    }

    Result<std::optional<std::size_t>> next_step(const SceneWorkspace& ws) const override {
        return reader_.next_step(ws.keyframes);
    }
    Result<bool> step_forward(SceneWorkspace& ws, StateStep& step) const override {
        return reader_.step_forward(ws.keyframes, step);
    }

    Result<std::vector<std::size_t>> chunks_for(double t) const override {
        return reader_.chain(t);
    }
    const StateTimeline* states() const noexcept override { return &reader_.states(); }

    Result<std::uint64_t> fetch_cost(double t) const override {
        FOURDGS_ASSIGN(SeekPlan plan, reader_.plan(t));
        return plan.total_bytes();
    }

    Result<std::vector<ByteRange>> fetch_ranges(double t) const override {
        return reader_.fetch_ranges(t);
    }

private:
    const IndexedReader& base() const noexcept override { return reader_.base(); }
    // The entry's state is the state at its t0.
    Result<std::uint64_t> checked_entry_fetch_cost(std::size_t entry) const override {
        return fetch_cost(scene().index[entry].t0);
    }
};

// ---- front to back -----------------------------------------------------------------------------

// What both streams share: the source they own and their reader on it, the questions that need
// an index refused, and the count of blocks read_all has numbered.
template <class Reader>
class StreamFrontEnd : public SceneFrontEnd {
public:
    StreamFrontEnd(std::unique_ptr<ByteSource> source, const ReaderOptions& options)
        : source_(std::move(source)), reader_(*source_, options) {}
    Status open() { return reader_.open(); }

    const SceneInfo& scene() const noexcept final { return reader_.scene(); }

    bool random_access() const noexcept final { return false; }
    bool index_built_by_scan() const noexcept final { return false; }
    bool read_by_scan() const noexcept final { return false; }
    const std::optional<Error>& scan_cause() const noexcept final { return no_scan_; }
    std::uint64_t bytes_fetched() const noexcept final { return 0; }

    Status read_every_gaussian(GaussianBlock& out, SceneWorkspace& ws, unsigned) override {
        out.clear();
        return read_all(
            [&](const StoredBlock& b) {
                out.append(b.gaussians);
                return ok_status();
            },
            ws);
    }

    Status decode_chunk(std::size_t, DecodeWorkspace&) const final {
        return not_seekable("decode_chunk needs the Chunk Index of a random-access source");
    }
    Result<std::vector<ByteRange>> entry_ranges(std::span<const std::size_t>) const final {
        return not_seekable("entry ranges need the Chunk Index of a random-access source");
    }
    Status decode_chunks(std::span<const std::size_t>, GaussianBlock&, SceneWorkspace&,
                         unsigned) const final {
        return not_seekable("decode_chunks needs the Chunk Index of a random-access source");
    }
    Result<std::vector<std::size_t>> chunks_for(double) const final {
        return not_seekable("chunks_for needs the Chunk Index of a random-access source");
    }
    Result<std::uint64_t> fetch_cost(double) const final {
        return not_seekable("fetch_cost needs the Chunk Index of a random-access source");
    }
    Result<std::uint64_t> entry_fetch_cost(std::size_t) const final {
        return not_seekable("fetch costs need the Chunk Index of a random-access source");
    }
    Result<std::vector<ByteRange>> fetch_ranges(double) const final {
        return not_seekable("fetch_ranges needs the Chunk Index of a random-access source");
    }

private:
    std::unique_ptr<ByteSource> source_;  // before reader_, which reads it
    std::optional<Error> no_scan_;

protected:
    Reader reader_;
    std::size_t passed_ = 0;  // blocks read so far (read_all's entry numbers)
};

// Gaussian-birth, front to back: the file has no index before its end, so any chunk may cover
// t; the first state_at or read_all reads the stream to its end.
class BirthStream final : public StreamFrontEnd<StreamingReader> {
public:
    using StreamFrontEnd::StreamFrontEnd;

    bool keyframe_delta() const noexcept override { return false; }
    Result<Playback> playback() const override {
        return not_seekable(
            "a gaussian-birth file read front to back has no index: any chunk may cover any "
            "instant, so it cannot be played; open it on a random-access source");
    }

    Status state_at(double t, GaussianBlock& out, SceneWorkspace&, unsigned,
                    BlockInfo* info) override {
        if (consumed_)
            return not_seekable("a gaussian-birth stream answers one state_at or read_all: any "
                                "chunk may cover t, so the first one read it to the end");
        consumed_ = true;
        out.clear();
        GaussianBlock chunk;
        for (;;) {
            FOURDGS_ASSIGN(bool more, reader_.next_chunk(chunk));
            if (!more) break;
            ++passed_;
            const ChunkRecord& c = reader_.last_chunk();
            if (c.t0 <= t && t < c.t1) out.append(chunk);
        }
        if (info) *info = BlockInfo{};
        return ok_status();
    }

    Status read_all(const StoredBlockVisit& visit, SceneWorkspace& ws) override {
        if (consumed_)
            return not_seekable("a gaussian-birth stream answers one state_at or read_all");
        consumed_ = true;
        for (;;) {
            FOURDGS_ASSIGN(bool more, reader_.next_chunk(ws.block));
            if (!more) return ok_status();
            const ChunkRecord& c = reader_.last_chunk();
            FOURDGS_TRY(visit(StoredBlock{passed_++, c.t0, c.t1, ws.block}));
        }
    }

    Result<bool> next_block(GaussianBlock& out, BlockInfo& info) override {
        FOURDGS_ASSIGN(bool more, reader_.next_chunk(out));
        if (!more) return false;
        const ChunkRecord& c = reader_.last_chunk();
        info = BlockInfo{};
        info.kind = BlockInfo::Kind::chunk;
        info.record.offset = reader_.last_chunk_offset();
        info.record.t0 = c.t0;
        info.record.t1 = c.t1;
        info.record.level = c.level;
        info.record.object_id_stream = reader_.last_chunk_object_id_stream();
        return true;
    }

private:
    bool consumed_ = false;  // the rest of the stream has been read
};

// Keyframe-delta, front to back: states arrive in time order and are composed as they pass; the
// last one is kept, so state_at at a later t in the same state answers from memory.
class KeyframeStream final : public StreamFrontEnd<KeyframeDeltaStream> {
public:
    using StreamFrontEnd::StreamFrontEnd;

    bool keyframe_delta() const noexcept override { return true; }
    Result<Playback> playback() const override { return Playback::stream; }

    Status state_at(double t, GaussianBlock& out, SceneWorkspace&, unsigned,
                    BlockInfo* info) override {
        if (!(t >= 0) || !(t < scene().header.duration_sec))
            return make_error(ErrorKind::invalid_argument, refusal::kTimeOutOfRange,
                              "t = " + detail::fmt(t) + " is outside [0, " +
                                  detail::fmt(scene().header.duration_sec) + ")");
        if (have_state_ && t < info_.t0)
            return not_seekable("the stream has passed t = " + detail::fmt(t) +
                                "; it is read forward only (the current state starts at " +
                                detail::fmt(info_.t0) + ")");
        while (!have_state_ || !(t < info_.t1)) {
            FOURDGS_ASSIGN(bool more, reader_.next_state(state_, &info_));
            if (!more)
                return make_error(ErrorKind::invalid_argument, refusal::kTimeOutOfRange,
                                  "no state chunk covers t = " + detail::fmt(t));
            have_state_ = true;
            state_visited_ = false;
            ++passed_;
        }
        out = state_;
        if (info) *info = BlockInfo{BlockInfo::Kind::state, info_};
        return ok_status();
    }

    Status read_all(const StoredBlockVisit& visit, SceneWorkspace&) override {
        if (have_state_ && !state_visited_) {
            state_visited_ = true;
            FOURDGS_TRY(visit(StoredBlock{passed_ - 1, info_.t0, info_.t1, state_}));
        }
        for (;;) {
            FOURDGS_ASSIGN(bool more, reader_.next_state(state_, &info_));
            if (!more) return ok_status();
            have_state_ = true;
            state_visited_ = true;
            FOURDGS_TRY(visit(StoredBlock{passed_++, info_.t0, info_.t1, state_}));
        }
    }

    Status read_every_gaussian(GaussianBlock&, SceneWorkspace&, unsigned) override {
        return read_all_needs_gaussian_birth();
    }

    Result<bool> next_block(GaussianBlock& out, BlockInfo& info) override {
        info = BlockInfo{BlockInfo::Kind::state, {}};
        return reader_.next_state(out, &info.record);
    }

private:
    GaussianBlock state_;         // the last composed state...
    StateInfo info_;              // ...and its chunk
    bool have_state_ = false;
    bool state_visited_ = false;  // read_all has handed state_ over already
};

// A stream's front-end, opened.
template <class Stream>
Result<std::unique_ptr<SceneFrontEnd>> opened(std::unique_ptr<ByteSource> source,
                                              const ReaderOptions& options) {
    auto stream = std::make_unique<Stream>(std::move(source), options);
    FOURDGS_TRY(stream->open());
    return std::unique_ptr<SceneFrontEnd>(std::move(stream));
}

}  // namespace

std::unique_ptr<SceneFrontEnd> indexed_birth_front_end(IndexedReader reader) {
    return std::make_unique<IndexedBirth>(std::move(reader));
}

std::unique_ptr<SceneFrontEnd> indexed_keyframe_front_end(KeyframeDeltaReader reader) {
    return std::make_unique<IndexedKeyframes>(std::move(reader));
}

Result<std::unique_ptr<SceneFrontEnd>> birth_stream_front_end(std::unique_ptr<ByteSource> source,
                                                              const ReaderOptions& options) {
    return opened<BirthStream>(std::move(source), options);
}

Result<std::unique_ptr<SceneFrontEnd>> keyframe_stream_front_end(
    std::unique_ptr<ByteSource> source, const ReaderOptions& options) {
    return opened<KeyframeStream>(std::move(source), options);
}

}  // namespace fourdgs
