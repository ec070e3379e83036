// stream.cpp — reading front to back (fourdgs.h, "Streaming"): a stream over the caller's read
// callback, a file descriptor or a URL; its scene, lent as a reader; and its stored blocks,
// pulled one at a time into a block.
#include "fourdgs_c_internal.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

using namespace fourdgs;
using namespace fourdgs::capi;

namespace {

// The caller's sequential read callback as a forward-only source: an offset past the position
// skips the bytes between, one before it is refused (the streaming readers only move forward).
class StreamCallbackSource final : public ByteSource {
public:
    explicit StreamCallbackSource(const fourdgs_stream_callbacks& cb) : cb_(cb) {}
    StreamCallbackSource(const StreamCallbackSource&) = delete;
    StreamCallbackSource& operator=(const StreamCallbackSource&) = delete;
    ~StreamCallbackSource() override {
        if (cb_.release) cb_.release(cb_.user);
    }
    std::optional<std::uint64_t> size() const override { return std::nullopt; }
    bool random_access() const override { return false; }
    Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override {
        if (offset < position_)
            return make_error(ErrorKind::invalid_argument, refusal::kNotSeekable,
                              "a stream cannot go back to offset " + std::to_string(offset) +
                                  " from " + std::to_string(position_));
        std::uint8_t skip[4096];
        while (position_ < offset && !eof_)
            FOURDGS_TRY(pull(std::span(skip, static_cast<std::size_t>(std::min<std::uint64_t>(
                                                 sizeof skip, offset - position_)))));
        std::size_t done = 0;
        while (position_ == offset + done && done < out.size() && !eof_) {
            FOURDGS_ASSIGN(std::size_t n, pull(out.subspan(done)));
            done += n;
        }
        return done;
    }

private:
    Result<std::size_t> pull(std::span<std::uint8_t> into) {
        const std::int64_t n = cb_.read(cb_.user, into.data(), into.size());
        if (n < 0 || static_cast<std::uint64_t>(n) > into.size())
            return make_error(ErrorKind::io, refusal::kIoError,
                              "the stream read callback failed at offset " +
                                  std::to_string(position_) + " (returned " + std::to_string(n) +
                                  ")",
                              position_);
        eof_ = n == 0;
        position_ += static_cast<std::uint64_t>(n);
        return static_cast<std::size_t>(n);
    }

    fourdgs_stream_callbacks cb_;
    std::uint64_t position_ = 0;
    bool eof_ = false;
};

}  // namespace

// A stream's scene is a reader whose SceneReader holds a streaming front-end (open_scene with
// access = streaming: the magic and Header are read once, the temporal model picks the
// front-end); the stream pulls its blocks from that front-end one at a time.
struct fourdgs_stream {
    explicit fourdgs_stream(const Allocator& a) : alloc(a), scene(a) {}
    Allocator alloc;
    fourdgs_reader scene;          // the source, the front-end, and what fourdgs_stream_scene lends
    std::optional<Error> failure;  // repeated by every later fourdgs_stream_next_block
};

namespace {

fourdgs_status open_stream(std::unique_ptr<ByteSource> raw, const fourdgs_open_options* options,
                           fourdgs_stream** out) {
    FOURDGS_C_REQUIRE(out);
    fourdgs_open_options o;
    Allocator alloc;
    if (auto s = open_settings_in(options, o, alloc); s != FOURDGS_OK) return s;
    fourdgs_stream* stream = make_handle<fourdgs_stream>(alloc);
    std::unique_ptr<fourdgs_stream, void (*)(fourdgs_stream*)> guard(stream, destroy_handle);
    stream->scene.lent_by_stream = true;
    if (auto s = open_scene_into(stream->scene, std::move(raw), o,
                                 OpenSceneOptions::Access::streaming);
        s != FOURDGS_OK)
        return s;
    *out = guard.release();
    return FOURDGS_OK;
}

}  // namespace

fourdgs_status fourdgs_stream_open_callbacks(const fourdgs_stream_callbacks* callbacks,
                                             const fourdgs_open_options* options,
                                             fourdgs_stream** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(callbacks);
        // Made first, so `release` runs exactly once on every path.
        auto source = std::make_unique<StreamCallbackSource>(*callbacks);
        if (callbacks->read == nullptr)
            return invalid(refusal::kInvalidCallbacks, "stream callbacks need read");
        return open_stream(std::move(source), options, out);
    });
}

fourdgs_status fourdgs_stream_open_fd(int fd, uint32_t close_fd,
                                      const fourdgs_open_options* options, fourdgs_stream** out) {
    return guarded([&] {
        // Made first, so a descriptor the stream owns is closed on every path.
        auto source = std::make_unique<SequentialSource>(fd, close_fd != 0);
        if (fd < 0) return invalid(refusal::kInvalidArgument, "fd " + std::to_string(fd) + " is negative");
        return open_stream(std::move(source), options, out);
    });
}

fourdgs_status fourdgs_stream_open_url(const char* url, size_t url_size,
                                       const fourdgs_open_options* options, fourdgs_stream** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(url);
        FOURDGS_C_REQUIRE(out);
        std::unique_ptr<ByteSource> remote;
        if (auto s = url_source(url, url_size, options, remote); s != FOURDGS_OK) return s;
        return open_stream(std::move(remote), options, out);
    });
}

void fourdgs_stream_free(fourdgs_stream* stream) { destroy_handle(stream); }

fourdgs_status fourdgs_stream_scene(const fourdgs_stream* stream, const fourdgs_reader** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(stream);
        FOURDGS_C_REQUIRE(out);
        *out = &stream->scene;
        return FOURDGS_OK;
    });
}

fourdgs_status fourdgs_stream_next_block(fourdgs_stream* stream, fourdgs_block* block,
                                         uint32_t* produced) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(stream);
        FOURDGS_C_REQUIRE(block);
        FOURDGS_C_REQUIRE(produced);
        bool more = false;
        const fourdgs_status s = read_into(block, [&] {
            if (stream->failure) return fail(*stream->failure);
            BlockInfo info;
            Result<bool> r = stream->scene.opened->next_block(block->block, info);
            if (!r.ok()) {
                stream->failure = r.error();
                return fail(r.error());
            }
            more = *r;
            if (more)
                block_info_out(info, block->info);
            else
                empty_block(*block);
            return FOURDGS_OK;
        });
        if (s != FOURDGS_OK) return s;
        *produced = more ? 1 : 0;
        return FOURDGS_OK;
    });
}
