// tests/support/pipe_source.hpp — feed bytes to a SequentialSource through a real pipe.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "fourdgs/io.hpp"

namespace fourdgs::test {

// Writes `bytes` into a pipe from a second thread and calls `read(source)` with a
// SequentialSource over the read end. Whatever the reader leaves unread is drained afterwards so
// the writer never blocks, and the thread is joined before returning.
template <class F>
auto through_pipe(const std::vector<std::uint8_t>& bytes, F&& read) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe() failed");
    std::thread writer([fd = fds[1], &bytes] {
        std::size_t done = 0;
        while (done < bytes.size()) {
            const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
            if (n <= 0) break;
            done += static_cast<std::size_t>(n);
        }
        ::close(fd);
    });
    struct Drain {
        int fd;
        std::thread& t;
        ~Drain() {
            char buf[4096];
            while (::read(fd, buf, sizeof buf) > 0) {
            }
            t.join();
            ::close(fd);
        }
    } drain{fds[0], writer};
    SequentialSource src(fds[0], /*owns_fd=*/false);
    return read(src);
}

}  // namespace fourdgs::test
