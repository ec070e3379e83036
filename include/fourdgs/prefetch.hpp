// fourdgs/prefetch.hpp — playback prefetch: while a player decodes instant t, fetch what the
// next instants need in the background, so a remote scene plays without waiting on the network.
//
// A PlaybackPrefetcher owns one worker thread. The player calls aim(t) as it starts on instant
// t; the worker then asks the source to prefetch (ByteSource::prefetch) the ranges of the
// instants t + step, t + 2 step, ... up to `horizon` instants ahead, nearest first, skipping
// ranges it already fetched and the ranges of t itself (the player is reading those). It stops
// early when the bytes fetched ahead of the playhead and not yet reached would exceed the
// budget: `byte_budget`, or twice the largest instant planned so far when that is more (a
// keyframe-delta file's keyframe state, larger than the rest of its GOP: the next keyframe then
// goes on its way as the playhead reaches the one before, a GOP ahead of the instant that needs
// it, where a fixed budget smaller than a keyframe and its GOP would fetch it late), up to
// `budget_limit`: bytes fetched past what the source can cache would be evicted before they are
// read, and fetched twice.
//
// Batches. Each prefetch call costs the source at least a round trip, so the next instants'
// ranges are sent together, as one call (a source such as HttpSource merges adjacent ranges into
// one request): the worker times its calls, takes the shortest as the source's round trip, and
// grows the bytes a batch gathers while a call takes less than kBatchRoundTrips round trips (up
// to half the budget: a batch's first instant waits for the whole call), so the round trips
// cost a small share of the link's time; and it plans at least as many instants ahead as cover
// 2 x kBatchRoundTrips round trips (more than `horizon` over a slow link). Until a call has taken
// measurable time (a local source, whose prefetch does nothing), and after a seek, a batch is
// one instant: the nearest instant first. An aim(t) inside the current window (playback going on)
// keeps what was fetched; an aim elsewhere (a seek) cancels the batch in flight and starts a new
// window from t.
//
// Prefetching is a hint: a failed prefetch is kept in last_error() and otherwise ignored, since
// the player's own reads meet (and report) the same failure. Over a local source prefetch() does
// nothing and the prefetcher costs one idle thread. The source must be able to hold the budget:
// HttpOptions::cache_bytes should be at least twice it (twice byte_budget, and four times the
// largest instant: 58 MB for a 14.5 MB keyframe, under HttpOptions' default 64 MB), which the
// default budget_limit keeps to.
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
                                           // (or twice the largest instant: header comment)
    // How far twice the largest instant may raise the budget: half of HttpOptions' default
    // cache_bytes, so what is fetched ahead is still cached when the playhead reaches it. Raise
    // it with the source's cache (a scene whose keyframe is over a quarter of the cache).
    std::uint64_t budget_limit = 32 << 20;
};

struct PrefetchStats {
    std::uint64_t batches = 0;          // prefetch calls made on the source
    std::uint64_t bytes_requested = 0;  // bytes in those calls
    std::uint64_t cancellations = 0;    // windows abandoned because the player seeked elsewhere
    std::uint64_t budget_stops = 0;     // windows cut short by the byte budget
    double round_trip_sec = 0;          // the shortest prefetch call timed (0: none measurable)
    std::uint64_t batch_bytes = 0;      // the bytes a batch now gathers (0: one instant)
    std::uint64_t largest_instant = 0;  // the most fresh bytes one instant asked for so far
};

class PlaybackPrefetcher {
public:
    // The ranges reading instant t needs (an error for a t the file does not cover).
    using Planner = std::function<Result<std::vector<ByteRange>>(double t)>;
    // Seconds on a monotonic clock, which the worker times its calls with (the steady clock when
    // empty; a test gives a clock its source advances).
    using Now = std::function<double()>;
    // A call that takes less than this many round trips makes the next batches larger.
    static constexpr double kBatchRoundTrips = 8;

    // Starts the worker. `duration` bounds the instants (those at or after it are not planned).
    PlaybackPrefetcher(ByteSource& source, Planner planner, double duration,
                       PrefetchOptions options = {}, Now now = {});
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
    std::uint32_t horizon() const;           // under mu_: the instants planned ahead
    std::uint64_t budget() const;            // under mu_: the bytes held ahead, at most
    // Asks the source for `batch` (whose ranges are in held_) and sizes the batches after it
    // by how long the call took.
    void send(std::vector<ByteRange>& batch, std::uint64_t bytes);

    ByteSource* source_;
    Planner planner_;
    double duration_;
    PrefetchOptions options_;
    Now now_;

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
