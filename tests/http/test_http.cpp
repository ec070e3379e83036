// Remote scenes against a real web server (issue 16). Run by tests/http/harness.py, which starts
// nginx on loopback (FOURDGS_HTTP_BASE, document root FOURDGS_HTTP_ROOT, the conformance corpus
// under /corpus) and the fault-injecting proxy in front of it (FOURDGS_HTTP_PROXY, see
// fault_proxy.py for the /fault/<spec>/ paths). The files are written here, by our writers, into
// the document root.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "fourdgs/http_source.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/open_scene.hpp"
#include "fourdgs/player.hpp"
#include "fourdgs/prefetch.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "support/readers.hpp"
#include "support/remote_scenes.hpp"

using namespace fourdgs;

namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    if (!v) FAIL(std::string(name) + " is not set: run this through tests/http/harness.py");
    return v;
}

void write_file_at(const std::string& path, const std::vector<std::uint8_t>& bytes) {
    const std::string temp = path + ".partial";
    std::ofstream out(temp, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.close();
    REQUIRE(out);
    REQUIRE(std::rename(temp.c_str(), path.c_str()) == 0);  // atomic: nginx never sees half
}

// The served scenes (tests/support/remote_scenes.hpp): chunks of 4096 gaussians, 8192 per
// window, so an instant in the middle needs two groups of ranges, each well away from the first
// and last 64 KiB; and a keyframe-delta clip of 60 steps with a keyframe every 10.
const std::vector<std::uint8_t>& birth_scene() {
    static const std::vector<std::uint8_t> bytes = [] {
        auto out = test::remote_birth_scene(8192, 4096);
        if (!out) FAIL(out.error().describe());
        return std::move(out).value();
    }();
    return bytes;
}

const std::vector<std::uint8_t>& delta_scene() {
    static const std::vector<std::uint8_t> bytes = [] {
        auto out = test::remote_delta_scene(12000, 60, 10);
        if (!out) FAIL(out.error().describe());
        return std::move(out).value();
    }();
    return bytes;
}

// The files in the document root (written once per process).
std::string served(const std::string& name, const std::vector<std::uint8_t>& bytes) {
    const std::string path = env("FOURDGS_HTTP_ROOT") + "/" + name;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) write_file_at(path, bytes);
    return name;
}
std::string birth_name() { return served("birth.4dgs", birth_scene()); }
std::string delta_name() { return served("delta.4dgs", delta_scene()); }

std::string direct(const std::string& name) { return env("FOURDGS_HTTP_BASE") + "/" + name; }
// Through the proxy with faults `spec`; each call gets its own counter key.
std::string faulty(const std::string& spec, const std::string& name) {
    static std::atomic<int> key{0};
    return env("FOURDGS_HTTP_PROXY") + "/fault/" + spec + (spec.empty() ? "" : ",") + "key=k" +
           std::to_string(key++) + "/" + name;
}

std::unique_ptr<HttpSource> open_http(const std::string& url, HttpOptions o = {}) {
    auto s = HttpSource::open(url, o);
    if (!s) FAIL(s.error().describe());
    return std::move(s).value();
}

// How many requests a set of ranges takes when adjacent ranges coalesce.
std::size_t contiguous_groups(std::vector<ByteRange> ranges) {
    std::sort(ranges.begin(), ranges.end(),
              [](const ByteRange& a, const ByteRange& b) { return a.offset < b.offset; });
    std::size_t groups = 0;
    std::uint64_t end = 0;
    for (const ByteRange& r : ranges) {
        if (groups == 0 || r.offset > end) ++groups;
        end = std::max(end, r.offset + r.length);
    }
    return groups;
}

std::uint64_t total(const std::vector<ByteRange>& ranges) {
    std::uint64_t n = 0;
    for (const ByteRange& r : ranges) n += r.length;
    return n;
}

bool outside_speculative(const std::vector<ByteRange>& ranges, std::uint64_t size) {
    const std::uint64_t spec = HttpOptions{}.speculative_bytes;
    for (const ByteRange& r : ranges)
        if (r.offset < spec || r.offset + r.length > size - spec) return false;
    return true;
}

GaussianBlock local_instant(double t) {
    MemorySource mem(birth_scene());
    auto reader = IndexedReader::open(mem);
    REQUIRE(reader.ok());
    GaussianBlock out;
    std::vector<DecodeWorkspace> pool;
    REQUIRE(reader->read_instant(t, out, pool).ok());
    return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Round trips and bytes.

TEST_CASE("open and the first instant of a multi-chunk file take at most two round trips",
          "[seek]") {
    auto src = open_http(direct(birth_name()));
    auto reader = IndexedReader::open(*src);
    REQUIRE(reader.ok());
    const HttpStats opened = src->stats();
    CHECK(opened.round_trips == 1);  // head + tail at once: footer, summary and front matter
    CHECK(opened.requests == 2);
    CHECK(opened.bytes_fetched <= 2 * HttpOptions{}.speculative_bytes);

    GaussianBlock block;
    std::vector<DecodeWorkspace> pool;
    REQUIRE(reader->read_instant(0.5, block, pool).ok());
    const HttpStats first = src->stats();
    CHECK(first.round_trips <= 2);
    const std::vector<ByteRange> ranges = reader->fetch_ranges(reader->chunks_for(0.5));
    CHECK(first.requests - opened.requests <= contiguous_groups(ranges));
    CHECK(first.bytes_fetched - opened.bytes_fetched <= total(ranges));
    test::require_identical(block, local_instant(0.5));
}

TEST_CASE("a seek is one round trip, one request per contiguous group, exactly fetch_cost bytes",
          "[seek]") {
    auto src = open_http(direct(birth_name()));
    auto reader = IndexedReader::open(*src);
    REQUIRE(reader.ok());
    const double t = 5.5;
    const std::vector<std::size_t> chunks = reader->chunks_for(t);
    REQUIRE(chunks.size() == 4);  // two of the background, two of [5, 6)
    const std::vector<ByteRange> ranges = reader->fetch_ranges(chunks);
    std::uint64_t cost = 0;
    for (std::size_t c : chunks) cost += reader->fetch_cost(c);
    REQUIRE(total(ranges) == cost);
    REQUIRE(outside_speculative(ranges, *src->size()));
    REQUIRE(contiguous_groups(ranges) == 2);

    const HttpStats before = src->stats();
    GaussianBlock block;
    std::vector<DecodeWorkspace> pool;
    REQUIRE(reader->read_instant(t, block, pool).ok());
    const HttpStats after = src->stats();
    CHECK(after.round_trips - before.round_trips == 1);
    CHECK(after.requests - before.requests == 2);
    CHECK(after.bytes_fetched - before.bytes_fetched == cost);
    CHECK(after.retries == 0);
    test::require_identical(block, local_instant(t));

    // The same instant again comes from memory.
    REQUIRE(reader->read_instant(t, block, pool).ok());
    CHECK(src->stats().requests == after.requests);
}

TEST_CASE("a keyframe-delta seek fetches its whole chain in one round trip, exactly "
          "plan(t).total_bytes()",
          "[seek]") {
    auto src = open_http(direct(delta_name()));
    auto reader = KeyframeDeltaReader::open(*src);
    REQUIRE(reader.ok());
    CHECK(src->stats().round_trips <= 2);  // the timeline checks read nothing more
    const double t = 26.5 / 30.0;  // step 26: keyframe 20 and six chained deltas
    auto plan = reader->plan(t);
    REQUIRE(plan.ok());
    REQUIRE(plan->chain.size() == 7);
    auto ranges = reader->fetch_ranges(t);
    REQUIRE(ranges.ok());
    REQUIRE(total(*ranges) == plan->total_bytes());
    REQUIRE(outside_speculative(*ranges, *src->size()));

    const HttpStats before = src->stats();
    GaussianBlock state;
    REQUIRE(reader->state_at(t, state).ok());
    const HttpStats after = src->stats();
    CHECK(after.round_trips - before.round_trips == 1);
    CHECK(after.requests - before.requests == contiguous_groups(*ranges));
    CHECK(after.bytes_fetched - before.bytes_fetched == plan->total_bytes());

    MemorySource mem(delta_scene());
    auto local = KeyframeDeltaReader::open(mem);
    REQUIRE(local.ok());
    GaussianBlock expected;
    REQUIRE(local->state_at(t, expected).ok());
    test::require_identical(state, expected);
}

TEST_CASE("a file read over HTTP decodes as it does from memory, streaming and indexed",
          "[seek]") {
    SECTION("gaussian-birth, every chunk, indexed on several threads") {
        auto src = open_http(direct(birth_name()));
        auto remote = test::IndexedOutcome{};
        auto reader = IndexedReader::open(*src);
        REQUIRE(reader.ok());
        std::vector<DecodeWorkspace> pool;
        REQUIRE(reader->read_all(remote.block, pool, 4).ok());
        test::require_identical(remote.block, test::indexed_read(birth_scene()).block);
    }
    SECTION("gaussian-birth, front to back, read-ahead doubling") {
        auto src = open_http(direct(birth_name()));
        auto remote = read_streaming(*src);
        REQUIRE(remote.ok());
        CHECK(!remote->truncation);
        auto local = test::stream_read(birth_scene());
        REQUIRE(local.ok());
        test::require_identical(remote->gaussians, local->gaussians);
        // 16 KiB, 32 KiB, ... 4 MiB: a handful of requests, not one per record.
        CHECK(src->stats().requests < 16);
    }
    SECTION("keyframe-delta, front to back") {
        auto src = open_http(direct(delta_name()));
        KeyframeDeltaStream remote(*src);
        MemorySource mem(delta_scene());
        KeyframeDeltaStream local(mem);
        REQUIRE(remote.open().ok());
        REQUIRE(local.open().ok());
        GaussianBlock a, b;
        std::size_t states = 0;
        while (true) {
            auto ra = remote.next_state(a);
            auto rb = local.next_state(b);
            REQUIRE(ra.ok());
            REQUIRE(rb.ok());
            REQUIRE(*ra == *rb);
            if (!*ra) break;
            test::require_identical(a, b);
            ++states;
        }
        CHECK(states == 60);
    }
}

TEST_CASE("playback prefetch: after aim(t) the next instants are read without a request",
          "[seek]") {
    auto src = open_http(direct(birth_name()));
    auto reader = IndexedReader::open(*src);
    REQUIRE(reader.ok());
    PrefetchOptions po;
    po.step_sec = 0.25;
    po.horizon = 8;  // 2.25 .. 4.25: the background and the chunks of [2,3), [3,4), [4,5)
    po.byte_budget = 32 << 20;
    PlaybackPrefetcher prefetcher(*reader, *src, po);
    GaussianBlock block;
    std::vector<DecodeWorkspace> pool;
    prefetcher.aim(2.25);
    REQUIRE(reader->read_instant(2.25, block, pool).ok());
    prefetcher.wait_idle();
    CHECK(!prefetcher.last_error());
    CHECK(prefetcher.stats().batches >= 2);
    const std::uint64_t requests = src->stats().requests;
    for (int k = 1; k <= 8; ++k) {
        const double t = 2.25 + 0.25 * k;
        REQUIRE(reader->read_instant(t, block, pool).ok());
        test::require_identical(block, local_instant(t));
    }
    CHECK(src->stats().requests == requests);

    // A seek elsewhere: the window moves there.
    prefetcher.aim(8.0);
    REQUIRE(reader->read_instant(8.0, block, pool).ok());
    prefetcher.wait_idle();
    const std::uint64_t after_seek = src->stats().requests;
    REQUIRE(reader->read_instant(8.5, block, pool).ok());
    CHECK(src->stats().requests == after_seek);
}

// ---------------------------------------------------------------------------------------------
// Faults, through the proxy. Open's two requests are let through (after=2); the seek that
// follows meets the fault.

namespace {

struct Seek {
    Status status;
    HttpStats stats;
    GaussianBlock block;
};

Seek seek_through(const std::string& url, HttpOptions o = {}, double t = 5.5) {
    auto src = open_http(url, o);
    auto reader = IndexedReader::open(*src);
    REQUIRE(reader.ok());
    Seek s;
    std::vector<DecodeWorkspace> pool;
    s.status = reader->read_instant(t, s.block, pool);
    s.stats = src->stats();
    return s;
}

void require_io_error(const Status& st, const std::string& refusal, const std::string& url) {
    REQUIRE(!st.ok());
    INFO(st.error().describe());
    CHECK(st.error().kind == ErrorKind::io);
    CHECK(st.error().refusal == refusal);
    CHECK(st.error().message.find(url) != std::string::npos);  // the URL
    CHECK(st.error().message.find("bytes ") != std::string::npos);  // the range
}

}  // namespace

namespace {

// A fault the retries absorb: the seek succeeds after at least `retries` retries and decodes
// what a local read decodes.
void require_recovers(const std::string& spec, std::uint64_t retries) {
    INFO(spec);
    Seek s = seek_through(faulty(spec, birth_name()));
    REQUIRE(s.status.ok());
    CHECK(s.stats.retries >= retries);
    CHECK(s.stats.round_trips >= 3);  // open, a failed wave, the retry
    test::require_identical(s.block, local_instant(5.5));
}

// A fault that outlasts `attempts` attempts: the seek fails with `refusal`, naming the URL, the
// range and the attempts, and nothing of what came was decoded.
Seek require_gives_up(const std::string& spec, std::uint32_t attempts, const std::string& refusal) {
    HttpOptions o;
    o.max_attempts = attempts;
    const std::string url = faulty(spec, birth_name());
    Seek s = seek_through(url, o);
    require_io_error(s.status, refusal, url);
    CHECK(s.status.error().message.find("after " + std::to_string(attempts) + " attempts") !=
          std::string::npos);
    CHECK(s.block.count == 0);
    return s;
}

}  // namespace

// Four failures for drops and resets: curl itself resends a request once when a kept-alive
// connection dies before answering, so two might never reach our retry loop.
TEST_CASE("the cache drops bytes already read before bytes prefetched and not yet read",
          "[seek]") {
    const std::string url = direct(delta_name());
    const std::uint64_t size = delta_scene().size();
    constexpr std::uint64_t kPiece = 64 << 10;
    REQUIRE(size > 12 * kPiece);
    HttpOptions o;
    o.speculative_bytes = 1;          // open() caches two bytes, unread
    o.cache_bytes = 3 * kPiece - 1;   // three pieces do not fit: one must go
    auto src = open_http(url, o);
    const ByteRange ahead{4 * kPiece, kPiece}, later{8 * kPiece, kPiece};
    std::vector<std::uint8_t> buf(kPiece);
    REQUIRE(src->prefetch(std::span(&ahead, 1)).ok());          // prefetched, not yet read
    REQUIRE(src->read_at(6 * kPiece, buf).ok());                 // read
    REQUIRE(src->prefetch(std::span(&later, 1)).ok());          // over the bound
    const std::uint64_t requests = src->stats().requests;
    // The piece read went, not the older piece prefetched: reading that costs no request.
    REQUIRE(src->read_at(ahead.offset, buf).ok());
    CHECK(std::equal(buf.begin(), buf.end(), delta_scene().begin() + ahead.offset));
    CHECK(src->stats().requests == requests);
    REQUIRE(src->read_at(6 * kPiece, buf).ok());
    CHECK(src->stats().requests == requests + 1);
    CHECK(std::equal(buf.begin(), buf.end(), delta_scene().begin() + 6 * kPiece));
}

TEST_CASE("prefetches and reads from several threads at once: every byte as served, none "
          "fetched twice", "[seek]") {
    const std::string url = direct(delta_name());
    const std::vector<std::uint8_t>& file = delta_scene();
    const std::uint64_t size = file.size();
    REQUIRE(size > (1u << 20));
    auto src = open_http(url);  // a 64 MB cache: nothing is dropped
    const HttpStats opened = src->stats();
    // Four threads, each prefetching overlapping ranges then reading them back: the ranges
    // another thread has on the wire are left out of a prefetch and waited for by a read.
    constexpr int kThreads = 4, kRanges = 12;
    const std::uint64_t span = (size - (128 << 10)) / kRanges;
    std::atomic<int> bad{0};
    std::vector<std::thread> threads;
    for (int th = 0; th < kThreads; ++th)
        threads.emplace_back([&, th] {
            for (int k = 0; k < kRanges; ++k) {
                const int j = (k + th * 3) % kRanges;  // each thread starts elsewhere
                const ByteRange r{(64 << 10) + j * span + th * 997, span};
                if (!src->prefetch(std::span(&r, 1)).ok()) ++bad;
                std::vector<std::uint8_t> got(static_cast<std::size_t>(r.length));
                auto n = src->read_at(r.offset, got);
                if (!n.ok() || *n != got.size() ||
                    !std::equal(got.begin(), got.end(), file.begin() + static_cast<std::ptrdiff_t>(r.offset)))
                    ++bad;
            }
        });
    for (std::thread& t : threads) t.join();
    CHECK(bad.load() == 0);
    CHECK(src->stats().bytes_fetched - opened.bytes_fetched <= size);
}

TEST_CASE("dropped and reset connections are retried and the seek recovers", "[faults]") {
    require_recovers("drop=4,after=2", 1);
    require_recovers("reset=4,after=2", 1);
}

TEST_CASE("a connection that keeps failing ends as http-connection after the last attempt",
          "[faults]") {
    Seek s = require_gives_up("drop=1000,after=2", 3, "http-connection");
    CHECK(s.stats.requests == 2 + 2 * 3);
}

TEST_CASE("5xx answers are retried with backoff; a lasting one is http-status naming the status",
          "[faults]") {
    require_recovers("status=503:2,after=2", 2);
    Seek s = require_gives_up("status=500:1000,after=2", 2, "http-status");
    CHECK(s.status.error().message.find("HTTP 500") != std::string::npos);
}

TEST_CASE("a short body is retried and never decoded; one that stays short is http-short-body",
          "[faults]") {
    require_recovers("short=1,after=2", 1);
    require_gives_up("short=1000,after=2", 2, "http-short-body");
}

TEST_CASE("a server that stops answering is http-timeout, not a hang", "[faults]") {
    HttpOptions o;
    o.transfer_timeout_ms = 400;
    const std::string url = faulty("hang=1000,after=2", birth_name());
    Seek s = seek_through(url, o);
    require_io_error(s.status, "http-timeout", url);
    CHECK(s.stats.retries == 0);  // a timeout is not retried: the wait stays bounded
}

TEST_CASE("a slow server (added latency) serves the same bytes in the same requests",
          "[faults]") {
    Seek s = seek_through(faulty("delay=30", birth_name()));
    REQUIRE(s.status.ok());
    CHECK(s.stats.requests == 4);
    CHECK(s.stats.round_trips == 2);
    test::require_identical(s.block, local_instant(5.5));
}

TEST_CASE("a server that ignores ranges: the whole body under the limit, range-not-supported "
          "over it",
          "[faults]") {
    {
        auto src = open_http(faulty("norange", birth_name()));
        CHECK(src->whole_body());
        CHECK(*src->size() == birth_scene().size());
        auto reader = IndexedReader::open(*src);
        REQUIRE(reader.ok());
        GaussianBlock block;
        std::vector<DecodeWorkspace> pool;
        REQUIRE(reader->read_instant(5.5, block, pool).ok());
        test::require_identical(block, local_instant(5.5));
        CHECK(src->stats().requests == 2);  // everything came with the first answer
    }
    HttpOptions small;
    small.whole_body_limit = 100000;
    const std::string url = faulty("norange", birth_name());
    auto refused = HttpSource::open(url, small);
    REQUIRE(!refused.ok());
    CHECK(refused.error().refusal == "range-not-supported");
    CHECK(refused.error().kind == ErrorKind::io);
    CHECK(refused.error().message.find(url) != std::string::npos);
}

TEST_CASE("a missing file is http-status 404 at once; a closed port is http-connection",
          "[faults]") {
    const std::string url = direct("no-such-file.4dgs");
    auto missing = HttpSource::open(url);
    REQUIRE(!missing.ok());
    CHECK(missing.error().refusal == "http-status");
    CHECK(missing.error().message.find("HTTP 404") != std::string::npos);
    CHECK(missing.error().message.find(url) != std::string::npos);
    CHECK(missing.error().message.find("attempts") == std::string::npos);  // not retried

    HttpOptions o;
    o.max_attempts = 2;
    o.backoff_initial_ms = 1;
    auto refused = HttpSource::open("http://127.0.0.1:1/x.4dgs", o);  // nothing listens on port 1
    REQUIRE(!refused.ok());
    CHECK(refused.error().refusal == "http-connection");
    CHECK(refused.error().message.find("after 2 attempts") != std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Consistency: a file replaced while it is read.

TEST_CASE("a file replaced mid-read is source-changed, never a mix of two versions",
          "[consistency]") {
    static int round = 0;
    const std::string name = "changing-" + std::to_string(round++) + ".4dgs";
    const std::string path = env("FOURDGS_HTTP_ROOT") + "/" + name;
    write_file_at(path, birth_scene());
    auto src = open_http(direct(name));
    CHECK(!src->validator().empty());
    auto reader = IndexedReader::open(*src);
    REQUIRE(reader.ok());

    SECTION("a different size") {
        std::vector<std::uint8_t> other = birth_scene();
        other.insert(other.end(), 64, std::uint8_t{0});
        write_file_at(path, other);
    }
    SECTION("the same size, a new modification time") {
        std::vector<std::uint8_t> other = birth_scene();
        other[other.size() / 2] ^= 0xFF;
        write_file_at(path, other);
        struct timespec times[2] = {{0, UTIME_OMIT}, {std::time(nullptr) + 3600, 0}};
        REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
    }
    GaussianBlock block;
    std::vector<DecodeWorkspace> pool;
    const Status st = reader->read_instant(5.5, block, pool);
    require_io_error(st, "source-changed", direct(name));
    CHECK(block.count == 0);
}

TEST_CASE("a file replaced while it streams is source-changed at the first byte of the new one",
          "[consistency]") {
    const std::string name = "changing-stream.4dgs";
    const std::string path = env("FOURDGS_HTTP_ROOT") + "/" + name;
    write_file_at(path, birth_scene());
    auto src = open_http(direct(name));
    StreamingReader reader(*src);
    REQUIRE(reader.open().ok());
    GaussianBlock chunk;
    REQUIRE(reader.next_chunk(chunk).ok());
    std::vector<std::uint8_t> other = birth_scene();
    other.insert(other.end(), 8, std::uint8_t{0});
    write_file_at(path, other);
    Error error;
    bool failed = false;
    for (int i = 0; i < 1000 && !failed; ++i) {
        auto more = reader.next_chunk(chunk);
        if (!more.ok()) {
            error = more.error();
            failed = true;
        } else if (!*more) {
            break;
        }
    }
    REQUIRE(failed);
    CHECK(error.refusal == "source-changed");
}

TEST_CASE("open_source opens paths as files and http(s) URLs over HTTP", "[consistency]") {
    CHECK(is_url("http://x/y"));
    CHECK(is_url("HTTPS://x/y"));
    CHECK(!is_url("/tmp/http://x"));
    CHECK(!is_url("file.4dgs"));
    auto remote = open_source(direct(birth_name()));
    REQUIRE(remote.ok());
    CHECK((*remote)->size() == birth_scene().size());
    auto local = open_source(env("FOURDGS_HTTP_ROOT") + "/" + birth_name());
    REQUIRE(local.ok());
    CHECK((*local)->size() == birth_scene().size());
    std::vector<std::uint8_t> a(4096), b(4096);
    REQUIRE((*remote)->read_exact(100000, a).ok());
    REQUIRE((*local)->read_exact(100000, b).ok());
    CHECK(a == b);
}

// ---------------------------------------------------------------------------------------------
// Playback (fourdgs/player.hpp) over HTTP: the frames of the local file; a replaced file and a
// server that stops answering end in the readers' own refusals, never a hang.

namespace {

bool same_frame(const Frame& a, const Frame& b) {
    auto same = [](const auto& x, const auto& y, std::size_t n) {
        return n == 0 || std::equal(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n), y.begin());
    };
    const std::size_t n = a.count;
    return a.count == b.count && a.time == b.time && same(a.center, b.center, n * 3) &&
           same(a.scale, b.scale, n * 3) && same(a.rotation, b.rotation, n * 4) &&
           same(a.color, b.color, n * 4) && same(a.source, b.source, n);
}

struct RemotePlayer {
    RemotePlayer(const std::string& url, HttpOptions o = {}, PlayerOptions po = {})
        : source(open_http(url, o)) {
        auto r = open_scene(*source);
        if (!r) FAIL(r.error().describe());
        reader.emplace(std::move(r).value());
        auto p = Player::open(*reader, *source, po);
        if (!p) FAIL(p.error().describe());
        player.emplace(std::move(p).value());
    }
    std::unique_ptr<HttpSource> source;
    std::optional<SceneReader> reader;
    std::optional<Player> player;  // destroyed first
};

}  // namespace

TEST_CASE("the player over HTTP plays the frames of the local file, both models", "[player]") {
    for (const std::string& name : {birth_name(), delta_name()}) {
        RemotePlayer remote(faulty("delay=10", name));
        const std::vector<std::uint8_t>& bytes = name == birth_name() ? birth_scene() : delta_scene();
        MemorySource mem(bytes);
        auto local = std::move(open_scene(mem)).value();
        SceneWorkspace ws;
        GaussianBlock block;
        Frame got, want;
        PlayerFrame info;
        remote.player->play();
        for (double now = 0; now < 1.5; now += 1.0 / 30) {
            REQUIRE(remote.player->frame(now, got, info, true).ok());
            REQUIRE(local.state_at(info.time, block, ws).ok());
            evaluate(block, info.time, local.scene().header.cutoff, want,
                     {.tracks = local.scene().object_tracks});
            INFO(name << " t = " << info.time);
            CHECK(same_frame(got, want));
        }
        const double at = remote.player->duration() * 0.625;
        remote.player->seek(at);
        REQUIRE(remote.player->frame(2.0, got, info, true).ok());
        CHECK(info.time == at);
    }
}

TEST_CASE("a file replaced on the server while it plays is source-changed at the frame that "
          "needs new bytes",
          "[player]") {
    const std::string name = "changing-player.4dgs";
    const std::string path = env("FOURDGS_HTTP_ROOT") + "/" + name;
    write_file_at(path, birth_scene());
    PlayerOptions po;
    po.prefetch = false;  // only the frames' own reads
    RemotePlayer remote(direct(name), {}, po);
    Frame f;
    PlayerFrame info;
    REQUIRE(remote.player->frame_at(0.5, f, info, true).ok());
    std::vector<std::uint8_t> other = birth_scene();
    other.insert(other.end(), 64, std::uint8_t{0});
    write_file_at(path, other);
    const Status st = remote.player->frame_at(7.5, f, info, true);
    require_io_error(st, "source-changed", direct(name));
}

TEST_CASE("a server that stops answering while it plays gives late frames, then http-timeout, "
          "not a hang",
          "[player]") {
    HttpOptions o;
    o.transfer_timeout_ms = 400;
    PlayerOptions po;
    po.prefetch = false;
    const std::string url = faulty("hang=1000,after=2", birth_name());
    RemotePlayer remote(url, o, po);
    Frame f;
    PlayerFrame info;
    int late = 0;
    Status st = ok_status();
    for (int k = 0; k < 400 && st.ok(); ++k) {
        st = remote.player->frame_at(5.5, f, info);
        if (st.ok()) {
            CHECK(info.late);
            ++late;
            ::usleep(10000);
        }
    }
    CHECK(late > 0);
    require_io_error(st, "http-timeout", url);
}

// ---- https and private servers (issue 30; harness.py --tls) ---------------------------------

namespace {

std::vector<std::string> corpus_names() {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(env("FOURDGS_HTTP_ROOT") + "/corpus/valid"))
        if (e.path().extension() == ".4dgs") names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::vector<std::uint8_t> local_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The whole remote file through `source`, then every stored block through the front-end its
// model needs: the scene is read, not just its bytes.
void read_whole_scene(HttpSource& source, const std::vector<std::uint8_t>& want,
                      const std::string& name) {
    INFO(name);
    REQUIRE(source.size() == want.size());
    std::vector<std::uint8_t> got(want.size());
    auto n = source.read_at(0, got);
    REQUIRE(n.ok());
    REQUIRE(*n == want.size());
    REQUIRE(got == want);
    auto reader = open_scene(source);
    REQUIRE(reader.ok());
    SceneWorkspace ws;
    std::size_t blocks = 0;
    REQUIRE(reader->read_all([&](const StoredBlock&) { return ++blocks, ok_status(); }, ws).ok());
    REQUIRE(blocks == reader->scene().index.size());
}

}  // namespace

TEST_CASE("https: the conformance corpus reads over TLS with the certificate authority the test "
          "made (HttpOptions::ca_bundle)", "[tls]") {
    HttpOptions o;
    o.ca_bundle = env("FOURDGS_HTTPS_CA");
    const std::vector<std::string> names = corpus_names();
    REQUIRE(names.size() >= 40);
    for (const std::string& name : names) {
        auto source = HttpSource::open(env("FOURDGS_HTTPS_BASE") + "/corpus/valid/" + name, o);
        REQUIRE(source.ok());
        read_whole_scene(**source,
                         local_bytes(env("FOURDGS_HTTP_ROOT") + "/corpus/valid/" + name), name);
    }
}

TEST_CASE("https: a certificate that the trusted authorities did not sign is refused as "
          "tls-verification-failed, with a wrong CA bundle or the system's", "[tls]") {
    const std::string url = env("FOURDGS_HTTPS_BASE") + "/corpus/valid/" + corpus_names().front();
    HttpOptions wrong;
    wrong.ca_bundle = env("FOURDGS_HTTPS_WRONG_CA");
    wrong.max_attempts = 3;
    for (const HttpOptions& o : {wrong, HttpOptions{}}) {
        auto source = HttpSource::open(url, o);
        REQUIRE_FALSE(source.ok());
        CHECK(source.error().refusal == "tls-verification-failed");
        CHECK(source.error().kind == ErrorKind::io);
        CHECK(source.error().message.find("127.0.0.1") != std::string::npos);
    }
    HttpOptions unverified;  // what verify_tls = false is for: the same file, unchecked
    unverified.verify_tls = false;
    auto source = HttpSource::open(url, unverified);
    REQUIRE(source.ok());
}

TEST_CASE("private server: HttpOptions::headers sends the token on every request, and without "
          "it the server's 403 is http-status", "[private]") {
    const std::string name = corpus_names().back();
    const std::string url = env("FOURDGS_HTTP_BASE") + "/private/valid/" + name;
    auto refused = HttpSource::open(url);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().refusal == "http-status");
    CHECK(refused.error().message.find("403") != std::string::npos);
    HttpOptions o;
    o.headers = {"X-Fourdgs-Token: " + env("FOURDGS_HTTP_TOKEN")};
    o.speculative_bytes = 512;  // small, so reading the scene takes further range requests
    o.min_read_bytes = 512;
    auto source = HttpSource::open(url, o);
    REQUIRE(source.ok());
    read_whole_scene(**source, local_bytes(env("FOURDGS_HTTP_ROOT") + "/corpus/valid/" + name),
                     name);
    (*source)->clear_cache();
    auto reader = open_scene(**source);  // again, every range from the server
    REQUIRE(reader.ok());
    CHECK((*source)->stats().requests >= 3);
}
