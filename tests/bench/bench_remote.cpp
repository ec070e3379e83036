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
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fourdgs/http_source.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/prefetch.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "fourdgs/writer.hpp"

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

// The tests' gaussian-birth layout, larger: a background window [0, 10) and ten one-second
// windows, `per` gaussians each, SH degree 1, chunks of 16384.
std::vector<std::uint8_t> birth_scene(std::size_t per) {
    const std::size_t windows = 11, n = per * windows;
    std::mt19937 rng(16);
    std::uniform_real_distribution<float> u(0, 1);
    GaussianColumns g;
    g.count = n;
    g.sh_degree = 1;
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t w = i / per;
        for (int c = 0; c < 3; ++c) g.position.push_back(u(rng) * 8 - 4);
        for (int c = 0; c < 3; ++c) g.scale.push_back(0.01f + 0.05f * u(rng));
        for (int c = 0; c < 4; ++c) g.rotation.push_back(u(rng) - 0.5f);
        g.rotation.back() += 1;
        for (int c = 0; c < 4; ++c) g.color.push_back(u(rng));
        for (int c = 0; c < 3; ++c) g.motion.push_back(u(rng) * 0.2f - 0.1f);
        const double lo = w == 0 ? 0.0 : static_cast<double>(w - 1);
        const double hi = w == 0 ? 10.0 : static_cast<double>(w);
        g.win_lo.push_back(lo);
        g.win_hi.push_back(hi);
        g.mu_t.push_back(static_cast<float>((lo + hi) / 2));
        g.sigma_t.push_back(w == 0 ? std::numeric_limits<float>::infinity() : 0.3f);
        for (int c = 0; c < 9; ++c) g.sh.push_back(u(rng) - 0.5f);
    }
    SceneInput scene;
    scene.header.duration_sec = 10;
    scene.header.sh_degree = 1;
    scene.gaussians = g.batch();
    WriterOptions o;
    o.max_chunk_gaussians = 16384;
    auto out = write_scene(scene, o);
    if (!out) die(out.error().describe());
    return std::move(out).value();
}

// 90 steps of 1/30 s, 50000 gaussians, 5 % moving per step, a keyframe every 30, chained.
std::vector<std::uint8_t> delta_scene() {
    const std::size_t n = 50000, steps = 90;
    std::mt19937 rng(61);
    std::uniform_real_distribution<float> u(0, 1);
    std::vector<std::uint32_t> ids(n);
    std::vector<float> scale(n * 3), rotation(n * 4), color(n * 4),
        sigma(n, std::numeric_limits<float>::infinity());
    for (std::size_t i = 0; i < n; ++i) {
        ids[i] = static_cast<std::uint32_t>(i);
        for (int c = 0; c < 3; ++c) scale[i * 3 + c] = 0.01f + 0.02f * u(rng);
        for (int c = 0; c < 4; ++c) rotation[i * 4 + c] = u(rng) - 0.5f;
        rotation[i * 4 + 3] += 1;
        for (int c = 0; c < 4; ++c) color[i * 4 + c] = u(rng);
    }
    std::vector<std::vector<float>> pos(steps);
    pos[0].resize(n * 3);
    for (float& p : pos[0]) p = u(rng) * 10 - 5;
    for (std::size_t s = 1; s < steps; ++s) {
        pos[s] = pos[s - 1];
        for (std::size_t k = 0; k < n / 20; ++k) {
            const std::size_t i = rng() % n;
            for (int c = 0; c < 3; ++c)
                pos[s][i * 3 + c] = std::clamp(pos[s][i * 3 + c] + (u(rng) - 0.5f) * 0.1f, -5.0f, 5.0f);
        }
    }
    std::vector<KeyframeStep> st(steps);
    for (std::size_t s = 0; s < steps; ++s) {
        st[s].t0 = static_cast<double>(s) / 30.0;
        st[s].ids = ids;
        st[s].gaussians.count = n;
        st[s].gaussians.position = pos[s];
        st[s].gaussians.scale = scale;
        st[s].gaussians.rotation = rotation;
        st[s].gaussians.color = color;
        st[s].gaussians.sigma_t = sigma;
    }
    SceneHeader header;
    header.duration_sec = static_cast<double>(steps) / 30.0;
    KeyframeWriterOptions o;
    o.keyframe_every = 30;
    auto out = write_keyframe_delta(st, header, o);
    if (!out) die(out.error().describe());
    return std::move(out).value();
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
    const auto birth = birth_scene(per);
    const auto delta = delta_scene();
    save(root + "/bench-birth.4dgs", birth);
    save(root + "/bench-delta.4dgs", delta);
    std::printf("files: gaussian-birth %zu KiB (%zu gaussians), keyframe-delta %zu KiB; written in "
                "%.1f s\n",
                birth.size() >> 10, per * 11, delta.size() >> 10, ms_since(tw) / 1000);
    run(base, "bench-birth.4dgs", "bench-delta.4dgs", 0);
    run(proxy + "/fault/delay=0", "bench-birth.4dgs", "bench-delta.4dgs", 0);
    run(proxy + "/fault/delay=" + std::to_string(latency), "bench-birth.4dgs", "bench-delta.4dgs",
        latency);
    return 0;
}
