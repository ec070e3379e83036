// PlaybackPrefetcher (fourdgs/prefetch.hpp): one worker thread that keeps the next instants'
// ranges on their way while the player decodes the current one.
#include "fourdgs/prefetch.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

namespace fourdgs {

PlaybackPrefetcher::PlaybackPrefetcher(ByteSource& source, Planner planner, double duration,
                                       PrefetchOptions options, Now now)
    : source_(&source),
      planner_(std::move(planner)),
      duration_(duration),
      options_(options),
      now_(std::move(now)) {
    if (!(options_.step_sec > 0)) options_.step_sec = PrefetchOptions{}.step_sec;
    if (!now_)
        now_ = [] {
            return std::chrono::duration<double>(
                       std::chrono::steady_clock::now().time_since_epoch())
                .count();
        };
    worker_ = std::thread([this] { run(); });
}

PlaybackPrefetcher::PlaybackPrefetcher(const IndexedReader& reader, ByteSource& source,
                                       PrefetchOptions options)
    : PlaybackPrefetcher(
          source,
          [&reader](double t) -> Result<std::vector<ByteRange>> {
              const std::vector<std::size_t> chunks = reader.chunks_for(t);
              return reader.fetch_ranges(chunks);
          },
          reader.scene().header.duration_sec, options) {}

PlaybackPrefetcher::PlaybackPrefetcher(const KeyframeDeltaReader& reader, ByteSource& source,
                                       PrefetchOptions options)
    : PlaybackPrefetcher(
          source, [&reader](double t) { return reader.fetch_ranges(t); },
          reader.scene().header.duration_sec, options) {}

PlaybackPrefetcher::~PlaybackPrefetcher() {
    {
        std::lock_guard lock(mu_);
        stop_ = true;
        cancel_.store(true);
    }
    wake_.notify_all();
    worker_.join();
}

bool PlaybackPrefetcher::continues_window(double t) const {
    return aimed_ && t >= playhead_ &&
           t <= playhead_ + options_.step_sec * (static_cast<double>(horizon()) + 0.5);
}

void PlaybackPrefetcher::aim(double t) {
    {
        std::lock_guard lock(mu_);
        if (continues_window(t)) {
            // Playback goes on: what the player now reaches leaves the budget.
            for (auto it = held_.begin(); it != held_.end();) {
                if (it->second.needed_at <= t) {
                    held_bytes_ -= it->second.length;
                    it = held_.erase(it);
                } else {
                    ++it;
                }
            }
        } else {
            // A seek: the window fetched so far is for instants the player will not show.
            if (aimed_ && (held_bytes_ > 0 || done_generation_ != generation_))
                ++stats_.cancellations;
            cancel_.store(true);
            held_.clear();
            held_bytes_ = 0;
            stats_.batch_bytes = 0;  // the new window's nearest instant first, alone
        }
        playhead_ = t;
        aimed_ = true;
        ++generation_;
    }
    wake_.notify_one();
}

void PlaybackPrefetcher::wait_idle() {
    std::unique_lock lock(mu_);
    idle_.wait(lock, [this] { return stop_ || done_generation_ == generation_; });
}

PrefetchStats PlaybackPrefetcher::stats() const {
    std::lock_guard lock(mu_);
    return stats_;
}

std::optional<Error> PlaybackPrefetcher::last_error() const {
    std::lock_guard lock(mu_);
    return last_error_;
}

// A call that took measurable time is a source with a round trip: the shortest such call is
// taken as the round trip (it includes its own transfer: an estimate on the large side), and the
// batches grow while a call costs few round trips, so the round trips take a small share of the
// link's time. A longer call does not shrink them: it may have waited behind the player's own
// reads. A batch is at most half the budget, since its first instant waits for the whole call:
// while it is on its way, the half before it plays.
void PlaybackPrefetcher::send(std::vector<ByteRange>& batch, std::uint64_t bytes) {
    const double t0 = now_();
    const Status st = source_->prefetch(batch, &cancel_);
    const double took = now_() - t0;
    batch.clear();
    std::lock_guard lock(mu_);
    ++stats_.batches;
    stats_.bytes_requested += bytes;
    if (!st.ok()) last_error_ = st.error();
    constexpr double kMeasurable = 1e-3;  // a local source's prefetch does nothing
    if (cancel_.load() || !st.ok() || !(took >= kMeasurable)) return;
    double& rtt = stats_.round_trip_sec;
    rtt = rtt > 0 ? std::min(rtt, took) : took;
    std::uint64_t& target = stats_.batch_bytes;
    if (took < kBatchRoundTrips * rtt)
        target = std::min(std::max(target, bytes) * 2, budget() / 2);
}

std::uint64_t PlaybackPrefetcher::budget() const {
    return std::max(options_.byte_budget,
                    std::min(2 * stats_.largest_instant, options_.budget_limit));
}

// At least `horizon` instants; over a link, as many as cover two batches' worth of round trips
// (a batch on its way and the one before it playing), the budget still the bound on the bytes.
std::uint32_t PlaybackPrefetcher::horizon() const {
    const double cover = 2 * kBatchRoundTrips * stats_.round_trip_sec / options_.step_sec;
    constexpr double kMost = 1e6;  // a bound for the conversion; the budget stops far sooner
    return std::max(options_.horizon, static_cast<std::uint32_t>(std::min(std::ceil(cover), kMost)));
}

void PlaybackPrefetcher::run() {
    std::unique_lock lock(mu_);
    while (true) {
        wake_.wait(lock, [this] { return stop_ || generation_ != done_generation_; });
        if (stop_) break;
        const std::uint64_t gen = generation_;
        const double t = playhead_;
        const std::uint32_t ahead = horizon();
        cancel_.store(false);
        lock.unlock();

        // The player reads t's own ranges itself, right now.
        std::vector<ByteRange> own;
        if (auto r = planner_(t); r.ok()) own = std::move(r).value();
        auto is_own = [&own](std::uint64_t offset) {
            return std::any_of(own.begin(), own.end(),
                               [offset](const ByteRange& r) { return r.offset == offset; });
        };
        // The next instants' fresh ranges, gathered into one batch until it holds the bytes a
        // batch gathers (send), then sent; what is gathered is in held_ already.
        std::vector<ByteRange> batch;
        std::uint64_t batch_bytes = 0;
        for (std::uint32_t k = 1; k <= ahead; ++k) {
            const double tk = t + options_.step_sec * static_cast<double>(k);
            if (!(tk < duration_)) break;
            auto plan = planner_(tk);
            lock.lock();
            if (stop_ || generation_ != gen) {
                lock.unlock();
                break;  // re-aimed: the outer loop starts over from the new playhead
            }
            if (!plan.ok()) {
                last_error_ = plan.error();
                lock.unlock();
                continue;
            }
            std::vector<ByteRange> fresh;
            std::uint64_t bytes = 0;
            for (const ByteRange& r : *plan) {
                if (r.length == 0 || is_own(r.offset) || held_.count(r.offset)) continue;
                held_[r.offset] = Held{r.length, tk};
                fresh.push_back(r);
                bytes += r.length;
            }
            if (fresh.empty()) {
                lock.unlock();
                continue;
            }
            // The budget follows the largest instant planned (a keyframe's state, larger than
            // the rest of its GOP together): twice it, so the next keyframe goes on its way as
            // the playhead reaches the one before, a GOP ahead of the instant that needs it.
            stats_.largest_instant = std::max(stats_.largest_instant, bytes);
            if (held_bytes_ + bytes > budget()) {
                for (const ByteRange& r : fresh) held_.erase(r.offset);
                ++stats_.budget_stops;
                lock.unlock();
                break;
            }
            held_bytes_ += bytes;
            const std::uint64_t gather = stats_.batch_bytes;
            lock.unlock();
            batch.insert(batch.end(), fresh.begin(), fresh.end());
            batch_bytes += bytes;
            if (batch_bytes >= gather) {
                send(batch, batch_bytes);
                batch_bytes = 0;
                if (cancel_.load()) break;
            }
        }
        // What was gathered is still wanted unless a seek let it go (it emptied held_).
        if (!batch.empty() && !cancel_.load()) send(batch, batch_bytes);
        lock.lock();
        done_generation_ = gen;
        idle_.notify_all();
    }
    idle_.notify_all();
}

}  // namespace fourdgs
