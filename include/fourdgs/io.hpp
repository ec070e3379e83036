// fourdgs/io.hpp — where bytes come from and where they go.
//
// ByteSource is the one read interface every front-end uses: a memory buffer, a file (pread), a
// sequential-only stream (a pipe, stdin), or a caller's range-read callback (HTTP ranges, an asset
// pack). A front-end asks for byte ranges; a source either fills a caller buffer or fails. Sources
// that know their size say so; a sequential source does not and only moves forward.
//
// ByteSink is the write side: memory, a file, or a callback. Every write can fail, and the
// failure is returned, never swallowed.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// The bytes [offset, offset + length) of a source.
struct ByteRange {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

class ByteSource {
public:
    virtual ~ByteSource() = default;

    // Total size in bytes, when the source knows it (files, memory, callbacks with a size).
    virtual std::optional<std::uint64_t> size() const = 0;

    // True when read_at accepts any offset in any order. A sequential source accepts only
    // offsets at or after the end of its previous read.
    virtual bool random_access() const = 0;

    // Reads up to out.size() bytes at `offset`. Returns the number read: fewer than asked only at
    // the end of the data (0 at or past the end). Thread-safe for random-access sources (several
    // threads may read different ranges at once); a sequential source is single-threaded.
    virtual Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) = 0;

    // Reads exactly out.size() bytes or fails: a short read is an Error of kind truncated
    // (refusal "truncated") naming the range.
    Status read_exact(std::uint64_t offset, std::span<std::uint8_t> out) {
        FOURDGS_ASSIGN(std::size_t n, read_at(offset, out));
        if (n != out.size())
            return make_error(ErrorKind::truncated, refusal::kTruncated,
                              "wanted " + std::to_string(out.size()) + " bytes at offset " +
                                  std::to_string(offset) + " but the data ends after " +
                                  std::to_string(n),
                              offset + n);
        return ok_status();
    }

    // A hint: the caller is about to read `ranges` (exactly these, roughly in this order). A
    // source that pays per request (HttpSource) fetches them together in as few round trips as
    // it can and serves the reads that follow from memory; local sources ignore it (the
    // default). `cancel`, when not null, is polled: once it reads true the source may stop early.
    // A cancelled or partial prefetch is not an error; an error returned is one the reads would
    // have met too (source-changed, a refusing server). Thread-safe where read_at is.
    virtual Status prefetch(std::span<const ByteRange> ranges,
                            const std::atomic<bool>* cancel = nullptr) {
        (void)ranges;
        (void)cancel;
        return ok_status();
    }
};

// A source over caller-owned memory. The memory must outlive the source.
class MemorySource final : public ByteSource {
public:
    explicit MemorySource(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
    std::optional<std::uint64_t> size() const override { return bytes_.size(); }
    bool random_access() const override { return true; }
    Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override {
        if (offset >= bytes_.size()) return std::size_t{0};
        std::size_t n = static_cast<std::size_t>(
            std::min<std::uint64_t>(out.size(), bytes_.size() - offset));
        if (n != 0) std::memcpy(out.data(), bytes_.data() + offset, n);  // data() may be null at 0
        return n;
    }
    std::span<const std::uint8_t> bytes() const noexcept { return bytes_; }

private:
    std::span<const std::uint8_t> bytes_;
};

// A file read with pread (thread-safe, no shared file position). Opened by path.
class FileSource final : public ByteSource {
public:
    // Opens `path` for reading. Refusal "io-error" (kind io) naming the path and errno text.
    static Result<FileSource> open(const std::string& path);
    FileSource(FileSource&& other) noexcept : fd_(other.fd_), size_(other.size_) { other.fd_ = -1; }
    FileSource& operator=(FileSource&& other) noexcept;
    FileSource(const FileSource&) = delete;
    FileSource& operator=(const FileSource&) = delete;
    ~FileSource() override;

    std::optional<std::uint64_t> size() const override { return size_; }
    bool random_access() const override { return true; }
    Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override;

private:
    FileSource(int fd, std::uint64_t size) : fd_(fd), size_(size) {}
    int fd_ = -1;
    std::uint64_t size_ = 0;
};

// A forward-only source over a file descriptor (a pipe, stdin, a socket). Reading at an offset
// past the current position discards the bytes in between; an offset before it is refused
// (kind invalid_argument, "not-seekable"). The descriptor is not closed by the source unless
// `owns_fd` is set.
class SequentialSource final : public ByteSource {
public:
    explicit SequentialSource(int fd, bool owns_fd = false) : fd_(fd), owns_(owns_fd) {}
    SequentialSource(SequentialSource&& o) noexcept
        : fd_(o.fd_), owns_(o.owns_), position_(o.position_), eof_(o.eof_) {
        o.owns_ = false;
    }
    SequentialSource(const SequentialSource&) = delete;
    SequentialSource& operator=(const SequentialSource&) = delete;
    ~SequentialSource() override;

    std::optional<std::uint64_t> size() const override { return std::nullopt; }
    bool random_access() const override { return false; }
    Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override;
    std::uint64_t position() const noexcept { return position_; }

private:
    int fd_;
    bool owns_;
    std::uint64_t position_ = 0;
    bool eof_ = false;
};

// Range reads through caller callbacks, for remote storage or a virtual file system.
// `read_at` returns the number of bytes it wrote into `buffer` (fewer only at the end of the
// data) or a negative value on failure. The callbacks must be safe to call from several threads
// at once if the source is shared across threads.
struct RangeReadCallbacks {
    void* user = nullptr;
    std::uint64_t (*size)(void* user) = nullptr;
    std::int64_t (*read_at)(void* user, std::uint64_t offset, std::uint64_t length,
                            void* buffer) = nullptr;
    void (*release)(void* user) = nullptr;  // called once when the source is destroyed; may be null
};

class CallbackSource final : public ByteSource {
public:
    explicit CallbackSource(RangeReadCallbacks cb) : cb_(cb) {}
    CallbackSource(CallbackSource&& o) noexcept : cb_(o.cb_) { o.cb_.release = nullptr; }
    CallbackSource(const CallbackSource&) = delete;
    CallbackSource& operator=(const CallbackSource&) = delete;
    ~CallbackSource() override {
        if (cb_.release) cb_.release(cb_.user);
    }
    std::optional<std::uint64_t> size() const override {
        if (!cb_.size) return std::nullopt;
        return cb_.size(cb_.user);
    }
    bool random_access() const override { return true; }
    Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override {
        if (!cb_.read_at)
            return make_error(ErrorKind::invalid_argument, refusal::kInvalidArgument,
                              "range-read callback is null");
        std::int64_t n = cb_.read_at(cb_.user, offset, out.size(), out.data());
        if (n < 0 || static_cast<std::uint64_t>(n) > out.size())
            return make_error(ErrorKind::io, refusal::kIoError,
                              "range-read callback failed reading " + std::to_string(out.size()) +
                                  " bytes at offset " + std::to_string(offset) + " (returned " +
                                  std::to_string(n) + ")",
                              offset);
        return static_cast<std::size_t>(n);
    }

private:
    RangeReadCallbacks cb_;
};

// Reads up to `n` bytes at `offset`, appending them to `buf`, which grows only as bytes arrive:
// a lying length on a pipe cannot make the caller allocate what never comes. Returns how many
// bytes were read (fewer than `n` only at the end of the data).
inline Result<std::uint64_t> read_growing(ByteSource& src, std::uint64_t offset, std::uint64_t n,
                                          std::vector<std::uint8_t>& buf) {
    constexpr std::uint64_t kStep = std::uint64_t{16} << 20;
    std::uint64_t done = 0;
    while (done < n) {
        const std::uint64_t want = std::min(kStep, n - done);
        const std::size_t at = buf.size();
        buf.resize(at + static_cast<std::size_t>(want));
        FOURDGS_ASSIGN(std::size_t got, src.read_at(offset + done, std::span(buf.data() + at, want)));
        buf.resize(at + got);
        done += got;
        if (got < want) break;
    }
    return done;
}

// The refusals of append_range and read_range: index-out-of-range when [offset, offset + length)
// is not inside the source (the range came from an index or a record in the file),
// limit-exceeded when length > max_length.
inline Status check_read_range(ByteSource& src, std::uint64_t offset, std::uint64_t length,
                          std::uint64_t max_length) {
    const std::uint64_t size = src.size().value_or(0);
    if (offset > size || length > size - offset)
        return make_error(ErrorKind::malformed, refusal::kIndexOutOfRange,
                          "range [" + std::to_string(offset) + ", +" + std::to_string(length) +
                              ") lies outside the " + std::to_string(size) + "-byte file",
                          offset);
    if (length > max_length)
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          "a " + std::to_string(length) + "-byte read exceeds the configured limit",
                          offset);
    return ok_status();
}

// Sizes `out` to `size` bytes. Capacity grows by half at least: a buffer reused for ranges of
// varying lengths (a chunk after another) then stops meeting fresh memory after a few ranges,
// where growing to fit each longer range exactly would take new pages for every one.
inline void size_for_range(std::vector<std::uint8_t>& out, std::size_t size) {
    if (size > out.capacity()) out.reserve(std::max(size, out.capacity() + out.capacity() / 2));
    out.resize(size);
}

// Reads exactly [offset, offset + length) of a source of known size into `out`, after the bytes
// it holds (which stay). Refusals: check_read_range's, truncated on a short read.
inline Status append_range(ByteSource& src, std::uint64_t offset, std::uint64_t length,
                           std::uint64_t max_length, std::vector<std::uint8_t>& out) {
    FOURDGS_TRY(check_read_range(src, offset, length, max_length));
    const std::size_t at = out.size();
    size_for_range(out, at + static_cast<std::size_t>(length));
    return src.read_exact(offset, std::span(out).subspan(at));
}

// The same, into `out` replaced. The read overwrites the bytes `out` held rather than emptying
// it first, so a buffer reused for chunk after chunk zeroes only what it grows by (on a
// refusal its contents are unspecified).
inline Status read_range(ByteSource& src, std::uint64_t offset, std::uint64_t length,
                         std::uint64_t max_length, std::vector<std::uint8_t>& out) {
    FOURDGS_TRY(check_read_range(src, offset, length, max_length));
    size_for_range(out, static_cast<std::size_t>(length));
    return src.read_exact(offset, std::span(out));
}

// Reads a whole file into memory. Refusal "io-error" naming the path.
Result<std::vector<std::uint8_t>> read_file(const std::string& path);

class ByteSink {
public:
    virtual ~ByteSink() = default;
    virtual Status write(std::span<const std::uint8_t> bytes) = 0;
    virtual Status flush() { return ok_status(); }
    // Bytes written so far: the absolute offset of the next byte.
    virtual std::uint64_t position() const = 0;
};

class MemorySink final : public ByteSink {
public:
    Status write(std::span<const std::uint8_t> bytes) override {
        bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
        return ok_status();
    }
    std::uint64_t position() const override { return bytes_.size(); }
    std::vector<std::uint8_t>& bytes() noexcept { return bytes_; }
    std::vector<std::uint8_t> take() noexcept { return std::move(bytes_); }

private:
    std::vector<std::uint8_t> bytes_;
};

// Writes to a file created (or truncated) at `path`.
class FileSink final : public ByteSink {
public:
    static Result<FileSink> create(const std::string& path);
    FileSink(FileSink&& o) noexcept : fd_(o.fd_), position_(o.position_), path_(std::move(o.path_)) {
        o.fd_ = -1;
    }
    FileSink(const FileSink&) = delete;
    FileSink& operator=(const FileSink&) = delete;
    ~FileSink() override;
    Status write(std::span<const std::uint8_t> bytes) override;
    Status flush() override;
    Status close();
    std::uint64_t position() const override { return position_; }

private:
    FileSink(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
    int fd_ = -1;
    std::uint64_t position_ = 0;
    std::string path_;
};

// Writes through a caller callback returning 0 on success, non-zero on failure.
class CallbackSink final : public ByteSink {
public:
    using WriteFn = int (*)(void* user, const void* data, std::uint64_t length);
    CallbackSink(WriteFn fn, void* user) : fn_(fn), user_(user) {}
    Status write(std::span<const std::uint8_t> bytes) override {
        if (!fn_ || fn_(user_, bytes.data(), bytes.size()) != 0)
            return make_error(ErrorKind::io, refusal::kIoError,
                              "write callback failed writing " + std::to_string(bytes.size()) +
                                  " bytes at offset " + std::to_string(position_));
        position_ += bytes.size();
        return ok_status();
    }
    std::uint64_t position() const override { return position_; }

private:
    WriteFn fn_;
    void* user_;
    std::uint64_t position_ = 0;
};

}  // namespace fourdgs
FOURDGS_PUBLIC_END
