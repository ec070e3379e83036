// open_scene (fourdgs/open_scene.hpp): the front-end a file's temporal model needs, chosen once
// (the four are in scene_front_ends.cpp), and SceneReader forwarding each question to it.
#include "fourdgs/open_scene.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "fourdgs/detail/chunk_walk.hpp"
#include "fourdgs/detail/record_stream.hpp"
#include "fourdgs/wire.hpp"
#include "scene_front_end.hpp"

namespace fourdgs {

using detail::RecordStream;
using detail::declares_keyframe_delta;

namespace {

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
// whether it is a keyframe-delta file (declares_keyframe_delta); on anything unexpected (no magic,
// no Header first, a cut, a record over the limit) the answer is "no", and the gaussian-birth
// StreamingReader then refuses the file by its own rule from the same bytes. A failing read is
// an answer as it stands.
Result<bool> sniff_keyframe_delta(ByteSource& source, const ReaderOptions& options,
                                  std::vector<std::uint8_t>& read) {
    KeepingSource kept(source, read);
    RecordStream stream(kept, options.max_record_bytes);
    if (Status magic = stream.read_magic(); !magic.ok()) {
        if (magic.error().kind == ErrorKind::io) return magic.error();
        return false;
    }
    return declares_keyframe_delta(stream, options);
}

}  // namespace

SceneReader::SceneReader(std::unique_ptr<SceneFrontEnd> front_end)
    : front_end_(std::move(front_end)) {}
SceneReader::SceneReader(SceneReader&&) noexcept = default;
SceneReader& SceneReader::operator=(SceneReader&&) noexcept = default;
SceneReader::~SceneReader() = default;

// The one place the temporal model and the access are asked: the front-end chosen here answers
// every question after.
Result<SceneReader> open_scene(ByteSource& source, const OpenSceneOptions& options) {
    ReaderOptions ro = options.reader;
    ro.accept_keyframe_delta = true;
    const bool indexed = options.access == OpenSceneOptions::Access::automatic &&
                         source.random_access() && source.size().has_value();
    if (indexed) {
        FOURDGS_ASSIGN(IndexedReader base, IndexedReader::open(source, ro));
        if (base.scene().header.temporal_model != kModelKeyframeDelta)
            return SceneReader(indexed_birth_front_end(std::move(base)));
        FOURDGS_ASSIGN(KeyframeDeltaReader kd, KeyframeDeltaReader::open(std::move(base)));
        return SceneReader(indexed_keyframe_front_end(std::move(kd)));
    }
    std::vector<std::uint8_t> read;
    FOURDGS_ASSIGN(bool keyframe_delta, sniff_keyframe_delta(source, ro, read));
    auto replay = std::make_unique<ReplaySource>(source, std::move(read));
    if (keyframe_delta) {
        FOURDGS_ASSIGN(auto front_end, keyframe_stream_front_end(std::move(replay), ro));
        return SceneReader(std::move(front_end));
    }
    ro.accept_keyframe_delta = false;  // sniffing said no; the reader's gate has the last word
    FOURDGS_ASSIGN(auto front_end, birth_stream_front_end(std::move(replay), ro));
    return SceneReader(std::move(front_end));
}

// ---- each question, the front-end's answer -----------------------------------------------------

const SceneInfo& SceneReader::scene() const noexcept { return front_end_->scene(); }
bool SceneReader::keyframe_delta() const noexcept { return front_end_->keyframe_delta(); }
bool SceneReader::random_access() const noexcept { return front_end_->random_access(); }
bool SceneReader::index_built_by_scan() const noexcept {
    return front_end_->index_built_by_scan();
}
bool SceneReader::read_by_scan() const noexcept { return front_end_->read_by_scan(); }
const std::optional<Error>& SceneReader::scan_cause() const noexcept {
    return front_end_->scan_cause();
}
std::uint64_t SceneReader::bytes_fetched() const noexcept { return front_end_->bytes_fetched(); }

Status SceneReader::state_at(double t, GaussianBlock& out, SceneWorkspace& ws, unsigned threads,
                             BlockInfo* info) const {
    return front_end_->state_at(t, out, ws, threads, info);
}

Status SceneReader::read_all(const std::function<Status(const StoredBlock&)>& visit,
                             SceneWorkspace& ws) const {
    return front_end_->read_all(visit, ws);
}

Status SceneReader::read_every_gaussian(GaussianBlock& out, SceneWorkspace& ws,
                                        unsigned threads) const {
    return front_end_->read_every_gaussian(out, ws, threads);
}

Status SceneReader::decode_chunk(std::size_t index, DecodeWorkspace& ws) const {
    return front_end_->decode_chunk(index, ws);
}

Result<std::vector<std::size_t>> SceneReader::chunks_for(double t) const {
    return front_end_->chunks_for(t);
}

Result<StateSpan> SceneReader::state_span(double t) const {
    const StateTimeline* timeline = front_end_->states();
    if (!timeline)
        return make_error(ErrorKind::invalid_argument, refusal::kNotSeekable,
                          "state_span needs the Chunk Index of a random-access source");
    return timeline->at(t);
}

const StateTimeline* SceneReader::states() const noexcept { return front_end_->states(); }

Result<std::uint64_t> SceneReader::fetch_cost(double t) const { return front_end_->fetch_cost(t); }

Result<std::uint64_t> SceneReader::entry_fetch_cost(std::size_t entry) const {
    return front_end_->entry_fetch_cost(entry);
}

Result<std::vector<ByteRange>> SceneReader::fetch_ranges(double t) const {
    return front_end_->fetch_ranges(t);
}

Result<bool> SceneReader::next_block(GaussianBlock& out, BlockInfo& info) {
    return front_end_->next_block(out, info);
}

}  // namespace fourdgs
