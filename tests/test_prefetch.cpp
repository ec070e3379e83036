// ByteSource::prefetch and PlaybackPrefetcher (issue 16), without a network: the readers
// announce exactly the ranges they then read, and the prefetcher asks for the right instants'
// ranges, within its budget, and gives up a window when the player seeks elsewhere.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/prefetch.hpp"
#include "support/readers.hpp"

using namespace fourdgs;

namespace {

bool range_equal(const ByteRange& a, const ByteRange& b) {
    return a.offset == b.offset && a.length == b.length;
}
bool same_ranges(std::vector<ByteRange> a, std::vector<ByteRange> b) {
    auto less = [](const ByteRange& x, const ByteRange& y) {
        return x.offset < y.offset || (x.offset == y.offset && x.length < y.length);
    };
    std::sort(a.begin(), a.end(), less);
    std::sort(b.begin(), b.end(), less);
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), range_equal);
}

// A memory source that records what it is asked: every prefetch, and every read with whether
// a prefetch covered it.
class RecordingSource final : public ByteSource {
public:
    explicit RecordingSource(std::span<const std::uint8_t> bytes) : mem_(bytes) {}
    std::optional<std::uint64_t> size() const override { return mem_.size(); }
    bool random_access() const override { return mem_.random_access(); }
    Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override {
        {
            std::lock_guard lock(mu_);
            bool covered = false;
            for (const ByteRange& r : announced_)
                covered |= offset >= r.offset && offset + out.size() <= r.offset + r.length;
            reads_.push_back({offset, out.size()});
            uncovered_ += covered ? 0 : 1;
        }
        return mem_.read_at(offset, out);
    }
    Status prefetch(std::span<const ByteRange> ranges, const std::atomic<bool>*) override {
        std::lock_guard lock(mu_);
        calls_.emplace_back(ranges.begin(), ranges.end());
        announced_.insert(announced_.end(), ranges.begin(), ranges.end());
        return ok_status();
    }
    void reset() {
        std::lock_guard lock(mu_);
        calls_.clear();
        announced_.clear();
        reads_.clear();
        uncovered_ = 0;
    }
    std::vector<std::vector<ByteRange>> calls_;
    std::vector<ByteRange> announced_, reads_;
    std::size_t uncovered_ = 0;

private:
    std::mutex mu_;
    MemorySource mem_;
};

}  // namespace

TEST_CASE("read_instant announces exactly the ranges it then reads, fetch_cost in all", "[prefetch]") {
    const auto bytes = test::load_fixture("birth-zstd-sh3-balanced.4dgs");
    RecordingSource src(bytes);
    auto reader = IndexedReader::open(src);
    REQUIRE(reader.ok());
    REQUIRE(!reader->scene().index.empty());
    const ChunkIndex& first = reader->scene().index.front();
    const double t = (first.t0 + first.t1) / 2;
    const std::vector<std::size_t> chunks = reader->chunks_for(t);
    REQUIRE(!chunks.empty());
    src.reset();
    GaussianBlock block;
    std::vector<DecodeWorkspace> pool;
    REQUIRE(reader->read_instant(t, block, pool, 2).ok());
    REQUIRE(src.calls_.size() == 1);  // one announcement, before any read
    CHECK(same_ranges(src.calls_[0], reader->fetch_ranges(chunks)));
    CHECK(same_ranges(src.calls_[0], src.reads_));  // nothing more, nothing less
    CHECK(src.uncovered_ == 0);
    std::uint64_t announced = 0, cost = 0;
    for (const ByteRange& r : src.calls_[0]) announced += r.length;
    for (std::size_t c : chunks) cost += reader->fetch_cost(c);
    CHECK(announced == cost);
}

TEST_CASE("state_at announces the chain of plan(t) before reading it", "[prefetch]") {
    const auto bytes = test::load_fixture("keyframe-delta-churn.4dgs");
    RecordingSource src(bytes);
    auto reader = KeyframeDeltaReader::open(src);
    REQUIRE(reader.ok());
    for (std::size_t entry : reader->timeline().by_time()) {
        const double t = reader->scene().index[entry].t0;
        auto plan = reader->plan(t);
        REQUIRE(plan.ok());
        src.reset();
        GaussianBlock state;
        REQUIRE(reader->state_at(t, state).ok());
        REQUIRE(src.calls_.size() == 1);
        std::uint64_t announced = 0;
        for (const ByteRange& r : src.calls_[0]) announced += r.length;
        CHECK(announced == plan->total_bytes());
        CHECK(same_ranges(src.calls_[0], src.reads_));
        CHECK(src.uncovered_ == 0);
    }
}

namespace {

// Instant k (t in [k, k+1)) needs its own range [1000 k, +100) and a shared one [0, 50).
Result<std::vector<ByteRange>> synthetic_plan(double t) {
    if (t < 0 || t >= 100) return make_error(ErrorKind::invalid_argument, "time-out-of-range", "t");
    const auto k = static_cast<std::uint64_t>(t);
    return std::vector<ByteRange>{{0, 50}, {1000 * k + 1000, 100}};
}

// One instant a second, `horizon` instants ahead.
PrefetchOptions per_second(std::uint32_t horizon, std::uint64_t budget = PrefetchOptions{}.byte_budget) {
    PrefetchOptions o;
    o.step_sec = 1;
    o.horizon = horizon;
    o.byte_budget = budget;
    return o;
}

std::vector<std::uint64_t> offsets_of(const std::vector<std::vector<ByteRange>>& calls) {
    std::vector<std::uint64_t> out;
    for (const auto& c : calls)
        for (const ByteRange& r : c) out.push_back(r.offset);
    return out;
}

}  // namespace

TEST_CASE("the prefetcher asks for the next instants nearest first, each range once", "[prefetch][threads]") {
    std::vector<std::uint8_t> none;
    RecordingSource src(none);
    PlaybackPrefetcher p(src, synthetic_plan, 100, per_second(3));
    p.aim(2);
    p.wait_idle();
    // Instants 3, 4, 5; the shared range is the player's own at 2.
    CHECK(offsets_of(src.calls_) == std::vector<std::uint64_t>{4000, 5000, 6000});
    CHECK(p.stats().batches == 3);
    CHECK(p.stats().bytes_requested == 300);
    src.reset();
    p.aim(3);  // playback goes on: only instant 6 is new
    p.wait_idle();
    CHECK(offsets_of(src.calls_) == std::vector<std::uint64_t>{7000});
    CHECK(p.stats().cancellations == 0);
    src.reset();
    p.aim(98);  // near the end: nothing at or past the duration is planned
    p.wait_idle();
    CHECK(offsets_of(src.calls_) == std::vector<std::uint64_t>{100000});
    CHECK(!p.last_error());
}

TEST_CASE("the prefetcher stops at its byte budget and resumes as the playhead moves", "[prefetch][threads]") {
    std::vector<std::uint8_t> none;
    RecordingSource src(none);
    PlaybackPrefetcher p(src, synthetic_plan, 100, per_second(10, 250));  // two instants' ranges
    p.aim(0);
    p.wait_idle();
    CHECK(offsets_of(src.calls_) == std::vector<std::uint64_t>{2000, 3000});
    CHECK(p.stats().budget_stops == 1);
    src.reset();
    p.aim(1);  // instant 1's range is reached: room for one more
    p.wait_idle();
    CHECK(offsets_of(src.calls_) == std::vector<std::uint64_t>{4000});
}

namespace {

// A source behind a link the test's clock models: each prefetch call moves the clock on by a
// round trip plus its bytes at the link's rate, and is recorded.
class LinkSource final : public ByteSource {
public:
    LinkSource(double round_trip, double bytes_per_sec) : rtt_(round_trip), rate_(bytes_per_sec) {}
    std::optional<std::uint64_t> size() const override { return 0; }
    bool random_access() const override { return true; }
    Result<std::size_t> read_at(std::uint64_t, std::span<std::uint8_t>) override {
        return std::size_t{0};
    }
    Status prefetch(std::span<const ByteRange> ranges, const std::atomic<bool>*) override {
        std::lock_guard lock(mu_);
        std::uint64_t bytes = 0;
        for (const ByteRange& r : ranges) bytes += r.length;
        clock_ += rtt_ + double(bytes) / rate_;
        calls_.emplace_back(ranges.begin(), ranges.end());
        return ok_status();
    }
    double now() {
        std::lock_guard lock(mu_);
        return clock_;
    }
    std::vector<std::vector<ByteRange>> calls() {
        std::lock_guard lock(mu_);
        return calls_;
    }

private:
    std::mutex mu_;
    double rtt_, rate_, clock_ = 0;
    std::vector<std::vector<ByteRange>> calls_;
};

}  // namespace

TEST_CASE("over a link the prefetcher sends the next instants together, more of them a call "
          "while a call costs few round trips, and the nearest alone after a seek",
          "[prefetch][threads]") {
    // 50 ms a round trip; an instant's 100 bytes take 5 ms at the link's rate.
    LinkSource src(0.050, 20000);
    PlaybackPrefetcher p(src, synthetic_plan, 100, per_second(30), [&src] { return src.now(); });
    p.aim(0);
    p.wait_idle();
    // The first call, one instant, is the round trip measured (55 ms); each call after it costs
    // under 8 round trips, so each gathers twice the bytes of the one before: 1, 2, 4, 8
    // instants, then the 15 left of the 30 ahead.
    std::vector<std::size_t> sizes;
    for (const auto& call : src.calls()) sizes.push_back(call.size());
    CHECK(sizes == std::vector<std::size_t>{1, 2, 4, 8, 15});
    std::vector<std::uint64_t> want;
    for (std::uint64_t k = 1; k <= 30; ++k) want.push_back(1000 * k + 1000);
    CHECK(offsets_of(src.calls()) == want);  // nearest first, each once
    CHECK(p.stats().batches == 5);
    CHECK(p.stats().bytes_requested == 3000);
    CHECK(p.stats().round_trip_sec == Approx(0.055));
    CHECK(p.stats().batch_bytes == 3200);
    // A seek: the nearest instant of the new window goes alone, then the batches grow again.
    p.aim(60);
    p.wait_idle();
    const auto calls = src.calls();
    REQUIRE(calls.size() >= 7);
    CHECK(calls[5].size() == 1);
    CHECK(calls[5][0].offset == 62000);
    CHECK(calls[6].size() == 2);
    CHECK(p.stats().round_trip_sec == Approx(0.055));
}

TEST_CASE("over a slow link the prefetcher plans as many instants as cover its batches' round "
          "trips", "[prefetch][threads]") {
    // Instants every 50 ms (instant k: [1000 k + 1000, +100)); a round trip of 200 ms.
    LinkSource src(0.200, 20000);
    auto plan = [](double t) -> Result<std::vector<ByteRange>> {
        const auto k = static_cast<std::uint64_t>(std::llround(t * 20));
        return std::vector<ByteRange>{{1000 * k + 1000, 100}};
    };
    PrefetchOptions o;
    o.step_sec = 0.05;
    o.horizon = 30;
    PlaybackPrefetcher p(src, plan, 100, o, [&src] { return src.now(); });
    p.aim(0);
    p.wait_idle();
    // Before any call is timed: the 30 instants asked for.
    CHECK(offsets_of(src.calls()).back() == 1000 * 30 + 1000);
    // Measured, the round trip is 205 ms: 2 x 8 of them are 66 instants of 50 ms.
    REQUIRE(p.stats().round_trip_sec == Approx(0.205));
    p.aim(0.05);
    p.wait_idle();
    CHECK(offsets_of(src.calls()).back() == 1000 * 67 + 1000);
}

namespace {

// A source whose prefetch holds until it is cancelled (or 30 s pass, so a broken cancel fails
// the test instead of hanging it).
class BlockingSource final : public ByteSource {
public:
    std::optional<std::uint64_t> size() const override { return 0; }
    bool random_access() const override { return true; }
    Result<std::size_t> read_at(std::uint64_t, std::span<std::uint8_t>) override {
        return std::size_t{0};
    }
    Status prefetch(std::span<const ByteRange> ranges, const std::atomic<bool>* cancel) override {
        std::unique_lock lock(mu_);
        first_.push_back(ranges.front().offset);
        entered_.notify_all();
        if (!block_) return ok_status();
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!(cancel && cancel->load()) && std::chrono::steady_clock::now() < until)
            entered_.wait_for(lock, std::chrono::milliseconds(5));
        saw_cancel_ = cancel && cancel->load();
        block_ = false;
        return ok_status();
    }
    void wait_entered() {
        std::unique_lock lock(mu_);
        entered_.wait(lock, [this] { return !first_.empty(); });
    }
    std::mutex mu_;
    std::condition_variable entered_;
    std::vector<std::uint64_t> first_;
    bool block_ = true, saw_cancel_ = false;
};

}  // namespace

TEST_CASE("a seek elsewhere cancels the prefetch in flight and re-aims the window", "[prefetch][threads]") {
    BlockingSource src;
    PlaybackPrefetcher p(src, synthetic_plan, 100, per_second(2));
    p.aim(0);
    src.wait_entered();  // the worker is inside the prefetch for instant 1
    p.aim(50);           // a seek: that batch is no longer wanted
    p.wait_idle();
    std::lock_guard lock(src.mu_);
    CHECK(src.saw_cancel_);
    CHECK(p.stats().cancellations == 1);
    // The new window: instants 51 and 52.
    REQUIRE(src.first_.size() >= 3);
    CHECK(src.first_[0] == 2000);
    CHECK(src.first_[src.first_.size() - 2] == 52000);
    CHECK(src.first_.back() == 53000);
}

TEST_CASE("a planner failure is kept as the prefetcher's last error, not thrown at the player",
          "[prefetch][threads]") {
    std::vector<std::uint8_t> none;
    RecordingSource src(none);
    PlaybackPrefetcher p(
        src,
        [](double t) -> Result<std::vector<ByteRange>> {
            if (t >= 3) return make_error(ErrorKind::io, "io-error", "no plan");
            return synthetic_plan(t);
        },
        100, per_second(3));
    p.aim(1);
    p.wait_idle();
    REQUIRE(p.last_error());
    CHECK(p.last_error()->refusal == "io-error");
    CHECK(offsets_of(src.calls_) == std::vector<std::uint64_t>{3000});
}

namespace {

// Instants 0-99 of 100 bytes each at [1000 k + 1000, +100), but instant 5: 1000 bytes (a
// keyframe's state), [6000, 7000).
Result<std::vector<ByteRange>> keyframe_at_5_plan(double t) {
    if (t < 0 || t >= 100) return make_error(ErrorKind::invalid_argument, "time-out-of-range", "t");
    const auto k = static_cast<std::uint64_t>(t);
    return std::vector<ByteRange>{{1000 * k + 1000, k == 5 ? 1000u : 100u}};
}

}  // namespace

TEST_CASE("the budget follows the largest instant: an instant larger than the byte budget (a "
          "keyframe's state) is fetched ahead, within twice its size",
          "[prefetch][threads]") {
    const auto plan = keyframe_at_5_plan;
    std::vector<std::uint8_t> none;
    RecordingSource src(none);
    // A budget of 450 bytes, 30 instants ahead: instants 1-4 (400 bytes), then the keyframe,
    // which the budget does not hold, raises it to twice its 1000 bytes: it goes, and instants
    // 6-11 after it, up to 2000 bytes held; instant 12 would be 2100.
    PlaybackPrefetcher p(src, plan, 100, per_second(30, 450));
    p.aim(0);
    p.wait_idle();
    CHECK(offsets_of(src.calls_) == std::vector<std::uint64_t>{2000, 3000, 4000, 5000, 6000, 7000,
                                                                8000, 9000, 10000, 11000, 12000});
    CHECK(p.stats().largest_instant == 1000);
    CHECK(p.stats().budget_stops == 1);
    CHECK(p.stats().bytes_requested == 2000);
}

TEST_CASE("the budget grows with the largest instant only up to budget_limit, so what is fetched "
          "ahead stays within what the source can cache",
          "[prefetch][threads]") {
    // Prefetched from instant 0 under a byte budget of 450 and `limit`: the offsets the source
    // was asked for, and the prefetcher's stats.
    auto prefetched = [](std::uint64_t limit) {
        std::vector<std::uint8_t> none;
        RecordingSource src(none);
        PrefetchOptions o = per_second(30, 450);
        o.budget_limit = limit;
        PlaybackPrefetcher p(src, keyframe_at_5_plan, 100, o);
        p.aim(0);
        p.wait_idle();
        return std::pair{offsets_of(src.calls_), p.stats()};
    };
    SECTION("a limit under twice the keyframe: the budget stops at the limit") {
        // 450 bytes, raised by the keyframe to min(2000, 1500): instants 1-6 (1500 bytes) go,
        // instant 7 would be 1600.
        const auto [offsets, stats] = prefetched(1500);
        CHECK(offsets == std::vector<std::uint64_t>{2000, 3000, 4000, 5000, 6000, 7000});
        CHECK(stats.largest_instant == 1000);
        CHECK(stats.bytes_requested == 1500);
        CHECK(stats.budget_stops == 1);
    }
    SECTION("a limit under the keyframe itself: the keyframe waits for the playhead") {
        // The budget is max(450, 900): 400 bytes held, and the keyframe's 1000 do not fit.
        const auto [offsets, stats] = prefetched(900);
        CHECK(offsets == std::vector<std::uint64_t>{2000, 3000, 4000, 5000});
        CHECK(stats.bytes_requested == 400);
        CHECK(stats.budget_stops == 1);
    }
    SECTION("a limit under byte_budget never lowers it") {
        CHECK(prefetched(100).second.bytes_requested == 400);  // instants 1-4 within 450
    }
}
