// fourdgs/prefetch.hpp — playback prefetch: while a player decodes instant t, fetch what the
// next instants need in the background, so a remote scene plays without waiting on the network.
//
// A PlaybackPrefetcher owns one worker thread. The player calls aim(t) as it starts on instant
// t; the worker then asks the source to prefetch (ByteSource::prefetch) the ranges of the
// instants t + step, t + 2 step, ... up to `horizon` instants ahead, nearest first, one batch
// per instant, skipping ranges it already fetched and the ranges of t itself (the player is
// reading those). It stops early when the bytes fetched ahead of the playhead and not yet
// reached would exceed `byte_budget`. An aim(t) inside the current window (playback going on)
// keeps what was fetched; an aim elsewhere (a seek) cancels the batch in flight and starts a new
// window from t.
//
// Prefetching is a hint: a failed prefetch is kept in last_error() and otherwise ignored, since
// the player's own reads meet (and report) the same failure. Over a local source prefetch() does
// nothing and the prefetcher costs one idle thread. The source must be able to hold the budget:
// HttpOptions::cache_bytes should be at least twice byte_budget.
//
// Thread safety: aim, wait_idle, stats and last_error may be called from any thread. The
// planner (and the reader it wraps) must outlive the prefetcher and be safe to call while the
// player uses the reader from another thread (IndexedReader::chunks_for / fetch_ranges and
// KeyframeDeltaReader::fetch_ranges are).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/keyframe_delta.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

struct PrefetchOptions {
    double step_sec = 1.0 / 30.0;          // time between the instants the player shows (> 0)
    std::uint32_t horizon = 30;            // instants ahead of the playhead
    std::uint64_t byte_budget = 16 << 20;  // bytes fetched ahead and not yet reached, at most
};

struct PrefetchStats {
    std::uint64_t batches = 0;          // prefetch calls made on the source
    std::uint64_t bytes_requested = 0;  // bytes in those calls
    std::uint64_t cancellations = 0;    // windows abandoned because the player seeked elsewhere
    std::uint64_t budget_stops = 0;     // windows cut short by the byte budget
};

class PlaybackPrefetcher {
public:
    // The ranges reading instant t needs (an error for a t the file does not cover).
    using Planner = std::function<Result<std::vector<ByteRange>>(double t)>;

    // Starts the worker. `duration` bounds the instants (those at or after it are not planned).
    PlaybackPrefetcher(ByteSource& source, Planner planner, double duration,
                       PrefetchOptions options = {});
    // For a gaussian-birth reader (chunks_for + fetch_ranges) and a keyframe-delta reader
    // (fetch_ranges: the whole chain). The reader must outlive the prefetcher.
    PlaybackPrefetcher(const IndexedReader& reader, ByteSource& source, PrefetchOptions options = {});
    PlaybackPrefetcher(const KeyframeDeltaReader& reader, ByteSource& source,
                       PrefetchOptions options = {});
    PlaybackPrefetcher(const PlaybackPrefetcher&) = delete;
    PlaybackPrefetcher& operator=(const PlaybackPrefetcher&) = delete;
    // Cancels the batch in flight and joins the worker.
    ~PlaybackPrefetcher();

    // The player starts on instant t: prefetch the window after it (see the header comment).
    void aim(double t);
    // Blocks until the worker has done all the last aim() asked for (or was cancelled).
    void wait_idle();

    PrefetchStats stats() const;
    // The last failure a prefetch or the planner reported, if any.
    std::optional<Error> last_error() const;

private:
    void run();
    bool continues_window(double t) const;  // under mu_

    ByteSource* source_;
    Planner planner_;
    double duration_;
    PrefetchOptions options_;

    mutable std::mutex mu_;
    std::condition_variable wake_, idle_;
    bool stop_ = false, aimed_ = false;
    double playhead_ = 0;
    std::uint64_t generation_ = 0, done_generation_ = 0;
    struct Held {
        std::uint64_t length = 0;
        double needed_at = 0;  // the first instant that reads it
    };
    std::map<std::uint64_t, Held> held_;  // ranges fetched ahead, by offset
    std::uint64_t held_bytes_ = 0;
    PrefetchStats stats_;
    std::optional<Error> last_error_;
    std::atomic<bool> cancel_{false};
    std::thread worker_;
};

}  // namespace fourdgs
FOURDGS_PUBLIC_END
