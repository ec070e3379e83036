// Remote reads (fourdgs/http_source.hpp): open + first instant, seeks, a keyframe-delta seek,
// a front-to-back read and playback with prefetch, over loopback with a per-request latency
// injected by tests/http/fault_proxy.py. For each: requests, round trips, bytes (against what
// the index says a seek needs), and the wall time as a multiple of the injected latency (the
// round-trip time a real network would add). Run through the harness, which starts nginx and
// the proxy:
//   python3 tests/http/harness.py run -- build/tests/bench_remote {base} {proxy} {root} [ms] [per]
// ms: injected latency (default 20); per: gaussians per window (default 40000; 11 windows).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "fourdgs/http_source.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/prefetch.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "../support/remote_scenes.hpp"

using namespace fourdgs;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "bench_remote: %s\n", what.c_str());
    std::exit(1);
}

void save(const std::string& path, const std::vector<std::uint8_t>& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) die("cannot write " + path);
}

std::unique_ptr<HttpSource> open_http(const std::string& url) {
    auto s = HttpSource::open(url);
    if (!s) die(s.error().describe());
    return std::move(s).value();
}

// A source that forwards reads but drops the prefetch hint: what a seek costs without it.
class NoHint final : public ByteSource {
public:
    explicit NoHint(ByteSource& inner) : inner_(&inner) {}
    std::optional<std::uint64_t> size() const override { return inner_->size(); }
    bool random_access() const override { return true; }
    Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override {
        return inner_->read_at(offset, out);
    }

private:
    ByteSource* inner_;
};

// A source that forwards everything and adds up the time its callers spend in it: the network
// time a player's reads wait for (the prefetcher talks to the source underneath).
class Timed final : public ByteSource {
public:
    explicit Timed(ByteSource& inner) : inner_(&inner) {}
    std::optional<std::uint64_t> size() const override { return inner_->size(); }
    bool random_access() const override { return true; }
    Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override {
        const auto t0 = Clock::now();
        auto r = inner_->read_at(offset, out);
        add(t0);
        return r;
    }
    Status prefetch(std::span<const ByteRange> ranges, const std::atomic<bool>* cancel) override {
        const auto t0 = Clock::now();
        Status st = inner_->prefetch(ranges, cancel);
        add(t0);
        return st;
    }
    double waited_ms() const { return static_cast<double>(waited_us_.load()) / 1000; }

private:
    void add(Clock::time_point t0) {
        waited_us_ += static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count());
    }
    ByteSource* inner_;
    std::atomic<std::uint64_t> waited_us_{0};
};

struct Row {
    std::string what;
    HttpStats before, after;
    double net_ms;       // time waiting on the source
    double decode_ms;    // time decoding, everything cached (< 0: not measured)
    std::uint64_t promised = 0;  // bytes the index says it needs (0: not shown)
};

void print(const Row& r, double rtt_ms) {
    const std::uint64_t bytes = r.after.bytes_fetched - r.before.bytes_fetched;
    std::printf("  %-40s %4llu %4llu %10llu", r.what.c_str(),
                static_cast<unsigned long long>(r.after.requests - r.before.requests),
                static_cast<unsigned long long>(r.after.round_trips - r.before.round_trips),
                static_cast<unsigned long long>(bytes));
    if (r.promised) std::printf(" %10llu", static_cast<unsigned long long>(r.promised));
    else std::printf(" %10s", "-");
    std::printf(" %9.1f", r.net_ms);
    if (rtt_ms > 0) std::printf(" %7.2f", r.net_ms / rtt_ms);
    else std::printf(" %7s", "-");
    if (r.decode_ms >= 0) std::printf(" %9.1f", r.decode_ms);
    std::printf("\n");
}

std::uint64_t sum(const std::vector<ByteRange>& ranges) {
    std::uint64_t n = 0;
    for (const ByteRange& r : ranges) n += r.length;
    return n;
}

// Network, then decode: the instant's ranges through prefetch (what read_instant announces),
// then read_instant from the cache.
Row seek_row(std::string what, HttpSource& src, const IndexedReader& reader, double t,
             GaussianBlock& block, std::vector<DecodeWorkspace>& pool) {
    Row row{std::move(what), src.stats(), {}, 0, 0};
    const std::vector<ByteRange> ranges = reader.fetch_ranges(reader.chunks_for(t));
    row.promised = sum(ranges);
    auto t0 = Clock::now();
    if (auto st = src.prefetch(ranges); !st) die(st.error().describe());
    row.net_ms = ms_since(t0);
    auto t1 = Clock::now();
    if (auto st = reader.read_instant(t, block, pool); !st) die(st.error().describe());
    row.decode_ms = ms_since(t1);
    row.after = src.stats();
    return row;
}

void run(const std::string& base, const std::string& birth_name, const std::string& delta_name,
         double rtt_ms) {
    std::printf("\n%s (%s)\n", base.c_str(),
                rtt_ms > 0 ? (std::to_string(static_cast<int>(rtt_ms)) + " ms added per request").c_str()
                           : "no added latency");
    std::printf("  %-40s %4s %4s %10s %10s %9s %7s %9s\n", "", "req", "rt", "bytes", "index B",
                "net ms", "x RTT", "decode ms");
    std::vector<DecodeWorkspace> pool;
    GaussianBlock block;
    {
        auto t0 = Clock::now();
        auto src = open_http(base + "/" + birth_name);
        auto reader = IndexedReader::open(*src);
        if (!reader) die(reader.error().describe());
        const Row open{"open: head + tail (footer, summary, front)", HttpStats{}, src->stats(),
                       ms_since(t0), -1};
        print(open, rtt_ms);
        const Row first = seek_row("first instant t = 0.5", *src, *reader, 0.5, block, pool);
        print(first, rtt_ms);
        print({"open + first instant", HttpStats{}, src->stats(), open.net_ms + first.net_ms,
               first.decode_ms},
              rtt_ms);
        for (double t : {5.5, 8.25})
            print(seek_row("seek t = " + std::to_string(t).substr(0, 4) + " (background cached)",
                           *src, *reader, t, block, pool),
                  rtt_ms);
    }
    {
        auto src = open_http(base + "/" + birth_name);
        auto reader = IndexedReader::open(*src);
        if (!reader) die(reader.error().describe());
        print(seek_row("cold seek t = 6.5 (two groups)", *src, *reader, 6.5, block, pool), rtt_ms);
    }
    {
        // The same cold seek without the hint: one request per read that misses; the decode
        // time of a cached repeat is taken off.
        auto src = open_http(base + "/" + birth_name);
        NoHint plain(*src);
        auto reader = IndexedReader::open(plain);
        if (!reader) die(reader.error().describe());
        Row row{"  the same without the prefetch hint", src->stats(), {}, 0, 0};
        auto t0 = Clock::now();
        if (auto st = reader->read_instant(6.5, block, pool, 1); !st) die(st.error().describe());
        const double total = ms_since(t0);
        row.after = src->stats();
        auto t1 = Clock::now();
        if (auto st = reader->read_instant(6.5, block, pool, 1); !st) die(st.error().describe());
        row.decode_ms = ms_since(t1);
        row.net_ms = std::max(0.0, total - row.decode_ms);
        print(row, rtt_ms);
    }
    {
        auto src = open_http(base + "/" + delta_name);
        auto reader = KeyframeDeltaReader::open(*src);
        if (!reader) die(reader.error().describe());
        const double t = 50.5 / 30.0;  // step 50: keyframe 30 and 20 chained deltas
        auto plan = reader->plan(t);
        auto ranges = reader->fetch_ranges(t);
        if (!plan || !ranges) die("no plan");
        Row row{"keyframe-delta seek, chain of " + std::to_string(plan->chain.size()), src->stats(),
                {}, 0, 0, plan->total_bytes()};
        auto t0 = Clock::now();
        if (auto st = src->prefetch(*ranges); !st) die(st.error().describe());
        row.net_ms = ms_since(t0);
        auto t1 = Clock::now();
        GaussianBlock state;
        if (auto st = reader->state_at(t, state); !st) die(st.error().describe());
        row.decode_ms = ms_since(t1);
        row.after = src->stats();
        print(row, rtt_ms);
    }
    {
        auto t0 = Clock::now();
        auto src = open_http(base + "/" + birth_name);
        auto loaded = read_streaming(*src);
        if (!loaded) die(loaded.error().describe());
        print({"stream it all, " + std::to_string(*src->size() >> 10) + " KiB (net + decode)",
               HttpStats{}, src->stats(), ms_since(t0), -1},
              rtt_ms);
    }
    // Playback: 40 instants at 10 per second from t = 2.05, each decoded. "net" is the time the
    // player's own reads waited on the network; the prefetcher works beside it.
    for (bool prefetch : {false, true}) {
        auto src = open_http(base + "/" + birth_name);
        Timed timed(*src);
        auto reader = IndexedReader::open(timed);
        if (!reader) die(reader.error().describe());
        PrefetchOptions po;
        po.step_sec = 0.1;
        po.horizon = 15;
        std::unique_ptr<PlaybackPrefetcher> pf;
        if (prefetch) pf = std::make_unique<PlaybackPrefetcher>(*reader, *src, po);
        const HttpStats before = src->stats();
        const double waited_before = timed.waited_ms();
        double total = 0;
        for (int k = 0; k < 40; ++k) {
            const double t = 2.05 + 0.1 * k;
            if (pf) pf->aim(t);
            auto ts = Clock::now();
            if (auto st = reader->read_instant(t, block, pool); !st) die(st.error().describe());
            total += ms_since(ts);
        }
        const double waited = timed.waited_ms() - waited_before;
        print({prefetch ? "playback, 40 instants, with prefetch" : "playback, 40 instants, no prefetch",
               before, src->stats(), waited, total - waited},
              rtt_ms);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: bench_remote BASE PROXY ROOT [latency_ms] [per_window]\n");
        return 2;
    }
    const std::string base = argv[1], proxy = argv[2], root = argv[3];
    const int latency = argc > 4 ? std::atoi(argv[4]) : 20;
    const std::size_t per = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 40000;
    auto tw = Clock::now();
    // The tests' layouts (tests/support/remote_scenes.hpp), larger: chunks of 16384 gaussians;
    // 50000 gaussians over 90 steps with a keyframe every 30.
    auto birth = test::remote_birth_scene(per, 16384);
    auto delta = test::remote_delta_scene(50000, 90, 30);
    if (!birth || !delta) die("the writer failed");
    save(root + "/bench-birth.4dgs", *birth);
    save(root + "/bench-delta.4dgs", *delta);
    std::printf("files: gaussian-birth %zu KiB (%zu gaussians), keyframe-delta %zu KiB; written in "
                "%.1f s\n",
                birth->size() >> 10, per * 11, delta->size() >> 10, ms_since(tw) / 1000);
    run(base, "bench-birth.4dgs", "bench-delta.4dgs", 0);
    run(proxy + "/fault/delay=0", "bench-birth.4dgs", "bench-delta.4dgs", 0);
    run(proxy + "/fault/delay=" + std::to_string(latency), "bench-birth.4dgs", "bench-delta.4dgs",
        latency);
    return 0;
}
