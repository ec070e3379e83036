// src/platform/worker_threads.hpp — how many threads a parallel step (chunk decode, chunk
// encode) runs on.
#pragma once

#include <algorithm>
#include <thread>

namespace fourdgs {

// The threads for a request of `requested` (0: one per hardware thread). A WebAssembly build
// without -pthread cannot start a thread at all (std::thread's constructor fails), so there every
// request runs on the caller's thread: the same result, since no step's output depends on its
// thread count.
inline unsigned worker_threads(unsigned requested) {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
    (void)requested;
    return 1;
#else
    return requested ? requested : std::max(1u, std::thread::hardware_concurrency());
#endif
}

}  // namespace fourdgs
