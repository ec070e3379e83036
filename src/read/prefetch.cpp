// PlaybackPrefetcher (fourdgs/prefetch.hpp): one worker thread that keeps the next instants'
// ranges on their way while the player decodes the current one.
#include "fourdgs/prefetch.hpp"

#include <algorithm>
#include <utility>

namespace fourdgs {

PlaybackPrefetcher::PlaybackPrefetcher(ByteSource& source, Planner planner, double duration,
                                       PrefetchOptions options)
    : source_(&source), planner_(std::move(planner)), duration_(duration), options_(options) {
    if (!(options_.step_sec > 0)) options_.step_sec = PrefetchOptions{}.step_sec;
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
           t <= playhead_ + options_.step_sec * (static_cast<double>(options_.horizon) + 0.5);
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

void PlaybackPrefetcher::run() {
    std::unique_lock lock(mu_);
    while (true) {
        wake_.wait(lock, [this] { return stop_ || generation_ != done_generation_; });
        if (stop_) break;
        const std::uint64_t gen = generation_;
        const double t = playhead_;
        cancel_.store(false);
        lock.unlock();

        // The player reads t's own ranges itself, right now.
        std::vector<ByteRange> own;
        if (auto r = planner_(t); r.ok()) own = std::move(r).value();
        auto is_own = [&own](std::uint64_t offset) {
            return std::any_of(own.begin(), own.end(),
                               [offset](const ByteRange& r) { return r.offset == offset; });
        };
        for (std::uint32_t k = 1; k <= options_.horizon; ++k) {
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
            if (held_bytes_ + bytes > options_.byte_budget) {
                for (const ByteRange& r : fresh) held_.erase(r.offset);
                ++stats_.budget_stops;
                lock.unlock();
                break;
            }
            held_bytes_ += bytes;
            ++stats_.batches;
            stats_.bytes_requested += bytes;
            lock.unlock();
            const Status st = source_->prefetch(fresh, &cancel_);
            if (!st.ok()) {
                lock.lock();
                last_error_ = st.error();
                lock.unlock();
            }
            if (cancel_.load()) break;
        }
        lock.lock();
        done_generation_ = gen;
        idle_.notify_all();
    }
    idle_.notify_all();
}

}  // namespace fourdgs
