// POSIX implementations of the file-backed sources and sinks declared in fourdgs/io.hpp.
#include "fourdgs/io.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fourdgs {
namespace {

Error io_error(const std::string& what, int err, std::uint64_t offset = kNoOffset) {
    return make_error(ErrorKind::io, refusal::kIoError, what + ": " + std::strerror(err), offset);
}

}  // namespace

Result<FileSource> FileSource::open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return io_error("cannot open '" + path + "'", errno);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int err = errno;
        ::close(fd);
        return io_error("cannot stat '" + path + "'", err);
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return make_error(ErrorKind::io, refusal::kIoError,
                          "'" + path + "' is not a regular file; read it as a sequential source");
    }
    return FileSource(fd, static_cast<std::uint64_t>(st.st_size));
}

FileSource& FileSource::operator=(FileSource&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = other.fd_;
        size_ = other.size_;
        other.fd_ = -1;
    }
    return *this;
}

FileSource::~FileSource() {
    if (fd_ >= 0) ::close(fd_);
}

Result<std::size_t> FileSource::read_at(std::uint64_t offset, std::span<std::uint8_t> out) {
    std::size_t done = 0;
    while (done < out.size()) {
        ssize_t n = ::pread(fd_, out.data() + done, out.size() - done,
                            static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            return io_error("read failed", errno, offset + done);
        }
        if (n == 0) break;
        done += static_cast<std::size_t>(n);
    }
    return done;
}

SequentialSource::~SequentialSource() {
    if (owns_ && fd_ >= 0) ::close(fd_);
}

Result<std::size_t> SequentialSource::read_at(std::uint64_t offset, std::span<std::uint8_t> out) {
    if (offset < position_)
        return make_error(ErrorKind::invalid_argument, refusal::kNotSeekable,
                          "a sequential source cannot go back to offset " +
                              std::to_string(offset) + " from " + std::to_string(position_));
    std::uint8_t discard[4096];
    while (position_ < offset && !eof_) {
        std::size_t want = static_cast<std::size_t>(
            std::min<std::uint64_t>(sizeof discard, offset - position_));
        ssize_t n = ::read(fd_, discard, want);
        if (n < 0) {
            if (errno == EINTR) continue;
            return io_error("read failed", errno, position_);
        }
        if (n == 0) eof_ = true;
        position_ += static_cast<std::uint64_t>(n);
    }
    if (position_ < offset) return std::size_t{0};
    std::size_t done = 0;
    while (done < out.size() && !eof_) {
        ssize_t n = ::read(fd_, out.data() + done, out.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return io_error("read failed", errno, position_);
        }
        if (n == 0) {
            eof_ = true;
            break;
        }
        done += static_cast<std::size_t>(n);
        position_ += static_cast<std::uint64_t>(n);
    }
    return done;
}

Result<std::vector<std::uint8_t>> read_file(const std::string& path) {
    FOURDGS_ASSIGN(FileSource src, FileSource::open(path));
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(*src.size()));
    FOURDGS_TRY(src.read_exact(0, bytes));
    return bytes;
}

Result<FileSink> FileSink::create(const std::string& path) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return io_error("cannot create '" + path + "'", errno);
    return FileSink(fd, path);
}

FileSink::~FileSink() {
    if (fd_ >= 0) ::close(fd_);
}

Status FileSink::write(std::span<const std::uint8_t> bytes) {
    if (fd_ < 0)
        return make_error(ErrorKind::invalid_argument, refusal::kInvalidArgument,
                          "write to a closed file sink '" + path_ + "'");
    std::size_t done = 0;
    while (done < bytes.size()) {
        ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return io_error("write to '" + path_ + "' failed", errno, position_);
        }
        done += static_cast<std::size_t>(n);
        position_ += static_cast<std::uint64_t>(n);
    }
    return ok_status();
}

Status FileSink::flush() {
    if (fd_ >= 0 && ::fsync(fd_) != 0 && errno != EINVAL)
        return io_error("fsync of '" + path_ + "' failed", errno);
    return ok_status();
}

Status FileSink::close() {
    if (fd_ < 0) return ok_status();
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return io_error("close of '" + path_ + "' failed", errno);
    return ok_status();
}

}  // namespace fourdgs
