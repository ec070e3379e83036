// Decode benchmark on any gaussian-birth file: the paths a user takes first (a fresh process's
// first full decode and first seek), the warm paths, evaluate, and — measured in the same run —
// the limits those paths cannot beat: inflating the file's own streams with the codec library
// into reused buffers, and memcpy of the output bytes. Every figure is printed with its ratio to
// its limit, because the machines we run on are shared and noisy (the load average is printed
// at the start and the end).
//
//   usage: bench_decode FILE [repeats=5] [threads=hardware] [t=middle of the scene]
//
// "Cold" figures come from a fresh child process (this program re-run with --child): the time of
// the one call, and the child's peak RSS (wait4) above its RSS once the file is open. Make the
// issue-14 scene with `make_bench_scene scene.4dgs`. `bench_decode --child warm FILE 1 0` runs
// eleven full decodes on one thread, for a profiler (perf record).
#include <fourdgs/fourdgs.hpp>

#include <libdeflate.h>
#include <lz4.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "best_seconds.hpp"

extern char** environ;

namespace {

using namespace fourdgs;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

[[noreturn]] void fail(const char* what, const Error& e) {
    std::fprintf(stderr, "%s: %s\n", what, e.describe().c_str());
    std::exit(1);
}

void check(const char* what, const Status& st) {
    if (!st.ok()) fail(what, st.error());
}

std::size_t block_bytes(const GaussianBlock& b) {
    auto sz = [](const auto& v) { return v.size() * sizeof(v[0]); };
    return sz(b.position) + sz(b.scale) + sz(b.rotation) + sz(b.color) + sz(b.motion) +
           sz(b.mu_t) + sz(b.sigma_t) + sz(b.win_lo) + sz(b.win_hi) + sz(b.flags) +
           sz(b.window_index) + sz(b.object_id) + sz(b.sh) + sz(b.source_group) +
           sz(b.source_index) + sz(b.gaussian_id);
}

long peak_rss_kb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

// The process's anonymous memory in 2 MB pages and its resident memory, in kB, summed over
// /proc/self/smaps: whether the fresh-memory advice (src/platform/fresh_memory.hpp) took.
std::pair<long, long> huge_and_rss_kb() {
    long huge = 0, rss = 0;
    if (std::FILE* f = std::fopen("/proc/self/smaps", "r")) {
        char line[256];
        long kb = 0;
        while (std::fgets(line, sizeof line, f)) {
            if (std::sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) huge += kb;
            else if (std::sscanf(line, "Rss: %ld kB", &kb) == 1) rss += kb;
        }
        std::fclose(f);
    }
    return {huge, rss};
}

// ---- the limits: the file's own streams through the codec library ---------------------------

struct CompressedStream {
    std::uint8_t codec;
    std::vector<std::uint8_t> payload;
    std::size_t inflated;
};

// One chunk's work for the inflate limit: its chunk-level block (when compressed) and its
// streams, each with the size it inflates to.
struct ChunkStreams {
    std::vector<CompressedStream> block;  // zero or one chunk-level block
    std::vector<CompressedStream> streams;
};

class Inflaters {
public:
    Inflaters() : deflate_(libdeflate_alloc_decompressor()), zstd_(ZSTD_createDCtx()) {}
    ~Inflaters() {
        libdeflate_free_decompressor(deflate_);
        ZSTD_freeDCtx(zstd_);
    }
    Inflaters(const Inflaters&) = delete;
    Inflaters& operator=(const Inflaters&) = delete;

    // Inflates into `out` (sized by the caller); exits on a codec error.
    void run(const CompressedStream& s, std::vector<std::uint8_t>& out) {
        bool ok = false;
        if (s.codec == codec::deflate) {
            std::size_t got = 0;
            ok = libdeflate_zlib_decompress(deflate_, s.payload.data(), s.payload.size(),
                                            out.data(), s.inflated, &got) == LIBDEFLATE_SUCCESS &&
                 got == s.inflated;
        } else if (s.codec == codec::zstd) {
            ok = ZSTD_decompressDCtx(zstd_, out.data(), s.inflated, s.payload.data(),
                                     s.payload.size()) == s.inflated;
        } else if (s.codec == codec::lz4) {
            ok = LZ4_decompress_safe(reinterpret_cast<const char*>(s.payload.data()),
                                     reinterpret_cast<char*>(out.data()),
                                     static_cast<int>(s.payload.size()),
                                     static_cast<int>(s.inflated)) == static_cast<int>(s.inflated);
        }
        if (!ok) {
            std::fprintf(stderr, "the codec library refused a stream (codec %d)\n", s.codec);
            std::exit(1);
        }
    }

private:
    libdeflate_decompressor* deflate_;
    ZSTD_DCtx* zstd_;
};

void add_streams(Bytes block, std::uint64_t offset, std::vector<CompressedStream>& out) {
    auto streams = split_streams(block, offset);
    if (!streams) fail("split_streams", streams.error());
    for (const StreamView& s : *streams) {
        const StreamHeader& h = s.header;
        if (h.element_count == 0 || h.payload_length == 0) continue;
        const std::size_t symbols = h.mode == stream_mode::constant
                                        ? h.channels
                                        : std::size_t{h.element_count} * h.channels;
        out.push_back({h.codec, {s.payload.begin(), s.payload.end()}, symbols * h.symbol_width});
    }
}

ChunkStreams chunk_streams(ByteSource& source, const ChunkIndex& e) {
    ChunkStreams cs;
    std::vector<std::uint8_t> bytes;
    check("read chunk", read_range(source, e.chunk_offset, e.chunk_length, e.chunk_length, bytes));
    auto rec = parse_record(bytes, e.chunk_offset);
    if (!rec) fail("parse_record", rec.error());
    auto chunk = parse_chunk(*rec);
    if (!chunk) fail("parse_chunk", chunk.error());
    if (chunk->compression.empty()) {
        add_streams(chunk->records, chunk->records_offset, cs.streams);
    } else {
        auto codec = chunk_compression_codec(chunk->compression, 0);
        if (!codec) fail("chunk compression", codec.error());
        cs.block.push_back({*codec, {chunk->records.begin(), chunk->records.end()},
                            static_cast<std::size_t>(chunk->uncompressed_size)});
        std::vector<std::uint8_t> inflated(cs.block[0].inflated);
        Inflaters inf;
        inf.run(cs.block[0], inflated);
        add_streams(inflated, 0, cs.streams);
    }
    for (const ChunkIndex::Band& b : e.bands) {
        std::vector<std::uint8_t> band;
        check("read band", read_range(source, b.offset, b.length, b.length, band));
        auto r = parse_record(band, b.offset);
        if (!r) fail("parse_record", r.error());
        auto sh = parse_sh_band(*r);
        if (!sh) fail("parse_sh_band", sh.error());
        add_streams(sh->stream, 0, cs.streams);
    }
    return cs;
}

// Inflates every stream of `chunks` into one reused buffer (the bytes a decoder must produce
// before it can do anything else).
Timing time_inflate(const std::vector<ChunkStreams>& chunks, int repeats) {
    Inflaters inf;
    std::size_t largest = 0;
    for (const ChunkStreams& c : chunks) {
        for (const CompressedStream& s : c.block) largest = std::max(largest, s.inflated);
        for (const CompressedStream& s : c.streams) largest = std::max(largest, s.inflated);
    }
    std::vector<std::uint8_t> out(largest, 1);
    return best_timing(repeats, [&] {
        for (const ChunkStreams& c : chunks) {
            for (const CompressedStream& s : c.block) inf.run(s, out);
            for (const CompressedStream& s : c.streams) inf.run(s, out);
        }
    });
}

Timing time_memcpy(std::size_t bytes, int repeats) {
    std::vector<std::uint8_t> a(bytes, 1), b(bytes, 2);
    return best_timing(repeats, [&] {
        std::memcpy(b.data(), a.data(), bytes);
        asm volatile("" : : "r"(b.data()) : "memory");
    });
}

// ---- one cold call in a fresh process ----------------------------------------------------------

struct ColdResult {
    double seconds = 0;      // the call: wall
    double cpu = 0;          // ... and CPU time
    double open_seconds = 0;
    long rss_open_kb = 0;    // the child's peak RSS once the file is open
    long rss_peak_kb = 0;    // ... and at exit
};

// Child side: open FILE, note RSS, make one call, print the figures.
int child(const std::string& mode, const char* path, unsigned threads, double t) {
    if (mode == "touch") {  // the limit of a first call: fresh memory for the output bytes
        const std::size_t bytes = std::strtoull(path, nullptr, 10);
        const double c0 = cpu_seconds();
        const auto t0 = Clock::now();
        std::vector<std::uint8_t> fresh(bytes);
        asm volatile("" : : "r"(fresh.data()) : "memory");
        std::printf("%.9f %.9f 0 0\n", seconds_since(t0), cpu_seconds() - c0);
        return 0;
    }
    auto file = FileSource::open(path);
    if (!file) fail("open", file.error());
    GaussianBlock out;
    std::vector<DecodeWorkspace> pool;
    double open_s = 0, call_s = 0, call_cpu = 0;
    long rss_open = 0;
    if (mode == "stream") {
        const auto t0 = Clock::now();
        StreamingReader reader(*file);
        check("open", reader.open());
        open_s = seconds_since(t0);
        rss_open = peak_rss_kb();
        const double c1 = cpu_seconds();
        const auto t1 = Clock::now();
        for (;;) {
            auto more = reader.next_chunk(out);
            if (!more) fail("next_chunk", more.error());
            if (!*more) break;
        }
        call_s = seconds_since(t1);
        call_cpu = cpu_seconds() - c1;
    } else {
        const auto t0 = Clock::now();
        auto reader = IndexedReader::open(*file);
        if (!reader) fail("open", reader.error());
        open_s = seconds_since(t0);
        rss_open = peak_rss_kb();
        const double c1 = cpu_seconds();
        const auto t1 = Clock::now();
        if (mode == "warm")  // for a profiler: ten warm decodes after the first
            for (int r = 0; r < 10; ++r) check("read_all", reader->read_all(out, pool, threads));
        if (mode == "seek") check("read_instant", reader->read_instant(t, out, pool, threads));
        else check("read_all", reader->read_all(out, pool, threads));
        call_s = seconds_since(t1);
        call_cpu = cpu_seconds() - c1;
    }
    const auto [huge_kb, rss_kb] = huge_and_rss_kb();
    std::fprintf(stderr, "  (first call, %s, %u thread(s): AnonHugePages %ld kB of %ld kB resident)\n",
                 mode.c_str(), threads, huge_kb, rss_kb);
    std::printf("%.9f %.9f %.9f %ld\n", call_s, call_cpu, open_s, rss_open);
    return 0;
}

ColdResult cold(const char* self, const std::string& mode, const char* path, unsigned threads,
                double t) {
    int fds[2];
    if (pipe(fds) != 0) std::exit(1);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    const std::string th = std::to_string(threads), ts = std::to_string(t);
    std::vector<char*> argv = {const_cast<char*>(self), const_cast<char*>("--child"),
                               const_cast<char*>(mode.c_str()), const_cast<char*>(path),
                               const_cast<char*>(th.c_str()), const_cast<char*>(ts.c_str()),
                               nullptr};
    pid_t pid = 0;
    if (posix_spawn(&pid, self, &actions, nullptr, argv.data(), environ) != 0) {
        std::fprintf(stderr, "cannot start %s\n", self);
        std::exit(1);
    }
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    std::string text;
    char buf[256];
    for (ssize_t got; (got = read(fds[0], buf, sizeof buf)) > 0;)
        text.append(buf, std::size_t(got));
    close(fds[0]);
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    ColdResult r;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        std::sscanf(text.c_str(), "%lf %lf %lf %ld", &r.seconds, &r.cpu, &r.open_seconds,
                    &r.rss_open_kb) != 4) {
        std::fprintf(stderr, "the %s child failed\n", mode.c_str());
        std::exit(1);
    }
    r.rss_peak_kb = usage.ru_maxrss;
    return r;
}

// Best of `repeats` fresh processes (the cold figure is as noisy as any other).
ColdResult best_cold(const char* self, const std::string& mode, const char* path,
                     unsigned threads, double t, int repeats) {
    ColdResult best;
    best.seconds = 1e30;
    for (int r = 0; r < repeats; ++r) {
        ColdResult c = cold(self, mode, path, threads, t);
        if (c.seconds < best.seconds) best = c;
    }
    return best;
}

// ---- printing --------------------------------------------------------------------------------

// One figure: wall and CPU time, and both ratios to `limit` (the wall ratio is the one that
// counts on a quiet machine; on a loaded one a single thread's CPU ratio is the steadier).
void row(const char* path, Timing x, const char* against, Timing limit) {
    std::printf("  %-42s %8.2f ms wall %8.2f ms cpu  %6.2fx %s (cpu %.2fx)\n", path, x.wall * 1e3,
                x.cpu * 1e3, x.wall / limit.wall, against, x.cpu / limit.cpu);
}

void row_cold(const char* path, const ColdResult& c, Timing warm, std::size_t out_bytes,
              std::size_t largest_chunk_bytes) {
    const double peak = double(c.rss_peak_kb) * 1024.0, base = double(c.rss_open_kb) * 1024.0;
    std::printf("  %-42s %8.2f ms wall %8.2f ms cpu  %6.2fx warm (cpu %.2fx)\n", path,
                c.seconds * 1e3, c.cpu * 1e3, c.seconds / warm.wall, c.cpu / warm.cpu);
    std::printf("  %-42s peak RSS %.1f MB, %.1f MB above the open file = %.2fx (output %.1f MB "
                "+ largest chunk %.1f MB)\n",
                "", peak / 1e6, (peak - base) / 1e6,
                (peak - base) / double(out_bytes + largest_chunk_bytes), out_bytes / 1e6,
                largest_chunk_bytes / 1e6);
}

Timing sum(Timing a, Timing b) { return a + b; }

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 6 && std::strcmp(argv[1], "--child") == 0)
        return child(argv[2], argv[3], static_cast<unsigned>(std::atoi(argv[4])),
                     std::atof(argv[5]));
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_decode FILE [repeats] [threads] [t]\n");
        return 2;
    }
    const char* path = argv[1];
    const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const unsigned threads = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : hw;
    const double load_start = load_average();

    auto file = FileSource::open(path);
    if (!file) fail("open", file.error());
    auto reader = IndexedReader::open(*file);
    if (!reader) fail("open", reader.error());
    const SceneInfo& scene = reader->scene();
    const double t = argc > 4 ? std::atof(argv[4]) : scene.header.duration_sec / 2;
    const std::size_t chunks = scene.index.size();

    // Cold first: fresh processes, before this one has warmed anything up
    // or grown (a spawned child's peak RSS starts from its parent's).
    const ColdResult cold_all_1 = best_cold(argv[0], "indexed", path, 1, t, repeats);
    const ColdResult cold_all_n = best_cold(argv[0], "indexed", path, threads, t, repeats);
    const ColdResult cold_seek = best_cold(argv[0], "seek", path, threads, t, repeats);
    const ColdResult cold_stream = best_cold(argv[0], "stream", path, 1, t, repeats);

    // The limits' inputs, read once (untimed).
    std::vector<ChunkStreams> all_streams;
    for (const ChunkIndex& e : scene.index) all_streams.push_back(chunk_streams(*file, e));
    std::vector<ChunkStreams> seek_streams;
    const std::vector<std::size_t> seek_chunks = reader->chunks_for(t);
    for (std::size_t i : seek_chunks) seek_streams.push_back(all_streams[i]);


    // Warm: reused output and workspaces.
    std::vector<DecodeWorkspace> pool;
    GaussianBlock all;
    check("read_all", reader->read_all(all, pool, threads));
    const std::size_t out_bytes = block_bytes(all);
    std::size_t largest_chunk = 0;
    for (const ChunkIndex& e : scene.index)
        largest_chunk = std::max<std::size_t>(largest_chunk, e.gaussian_count);
    const std::size_t largest_chunk_bytes = all.count ? out_bytes / all.count * largest_chunk : 0;

    // What a fresh process pays for that much new memory (a plain std::vector of the bytes).
    const ColdResult touch_all =
        best_cold(argv[0], "touch", std::to_string(out_bytes).c_str(), 1, 0, repeats);

    const Timing t_inflate = time_inflate(all_streams, repeats);
    const Timing t_memcpy = time_memcpy(out_bytes, repeats);
    const Timing limit = sum(t_inflate, t_memcpy);
    const Timing t_all_1 = best_timing(repeats, [&] { (void)reader->read_all(all, pool, 1); });
    const Timing t_all_n =
        best_timing(repeats, [&] { (void)reader->read_all(all, pool, threads); });
    GaussianBlock chunk;
    const Timing t_stream = best_timing(repeats, [&] {
        StreamingReader sr(*file);
        check("open", sr.open());
        while (true) {
            auto more = sr.next_chunk(chunk);
            if (!more || !*more) break;
        }
    });

    GaussianBlock instant;
    check("read_instant", reader->read_instant(t, instant, pool, threads));
    const std::size_t seek_bytes = block_bytes(instant);
    std::uint64_t seek_fetch = 0;
    for (std::size_t i : seek_chunks) seek_fetch += reader->fetch_cost(i);
    const Timing seek_limit =
        sum(time_inflate(seek_streams, repeats), time_memcpy(seek_bytes, repeats));
    const ColdResult touch_seek =
        best_cold(argv[0], "touch", std::to_string(seek_bytes).c_str(), 1, 0, repeats);
    const Timing t_seek =
        best_timing(repeats, [&] { (void)reader->read_instant(t, instant, pool, threads); });
    const Timing t_seek_1 =
        best_timing(repeats, [&] { (void)reader->read_instant(t, instant, pool, 1); });

    // evaluate over the whole decoded scene at t, into a reused Frame.
    Frame frame;
    evaluate(all, t, scene.header.cutoff, frame);
    const Timing t_eval =
        best_timing(repeats, [&] { evaluate(all, t, scene.header.cutoff, frame); });
    // What it must read: the four time columns of every gaussian, then position, motion, scale,
    // rotation, colour (and SH) of each visible one; what it writes: the Frame's columns. A
    // memcpy of half the sum moves the same bytes (it reads that much and writes that much).
    const std::size_t sh_bytes = all.count ? all.sh.size() / all.count : 0;
    const std::size_t eval_read = all.count * 16 + frame.count * (17 * 4 + sh_bytes);
    const std::size_t eval_written = frame.count * (16 * 4 + sh_bytes);
    const Timing t_eval_memcpy = time_memcpy((eval_read + eval_written) / 2, repeats);

    std::printf("bench_decode %s: %zu gaussians in %zu chunks, %.1f MB file, decoded columns "
                "%.1f MB; best of %d; N = %u threads of %u; load %.1f at the start\n",
                path, all.count, chunks, double(*file->size()) / 1e6, out_bytes / 1e6, repeats,
                threads, hw, load_start);
    std::printf("\nlimits measured in this run\n");
    std::printf("  %-42s %8.2f ms wall %8.2f ms cpu\n", "inflate of every stream (codec library)",
                t_inflate.wall * 1e3, t_inflate.cpu * 1e3);
    std::printf("  %-42s %8.2f ms wall %8.2f ms cpu\n", "memcpy of the decoded bytes",
                t_memcpy.wall * 1e3, t_memcpy.cpu * 1e3);
    std::printf("  %-42s %8.2f ms wall %8.2f ms cpu\n",
                "fresh memory for the output (new process)", touch_all.seconds * 1e3,
                touch_all.cpu * 1e3);
    std::printf("\nfull decode\n");
    row("indexed, 1 thread, warm", t_all_1, "inflate + memcpy", limit);
    row("indexed, N threads, warm", t_all_n, "inflate + memcpy", limit);
    std::printf("  %-42s %8.2fx wall\n", "  N threads over 1", t_all_1.wall / t_all_n.wall);
    row_cold("indexed, 1 thread, first call in a process", cold_all_1, t_all_1, out_bytes,
             largest_chunk_bytes);
    row_cold("indexed, N threads, first call in a process", cold_all_n, t_all_n, out_bytes,
             largest_chunk_bytes);
    row("  1 thread, first call", {cold_all_1.seconds, cold_all_1.cpu},
        "warm + fresh memory for the output",
        sum(t_all_1, {touch_all.seconds, touch_all.cpu}));
    row("streaming, chunk by chunk, warm", t_stream, "inflate + memcpy", limit);
    row_cold("streaming, first call in a process", cold_stream, t_stream, out_bytes,
             largest_chunk_bytes);
    std::printf("\nseek to t = %g: %zu chunks, %llu bytes fetched, %zu gaussians, %.1f MB\n", t,
                seek_chunks.size(), static_cast<unsigned long long>(seek_fetch), instant.count,
                seek_bytes / 1e6);
    std::printf("  %-42s %8.2f ms wall %8.2f ms cpu\n", "limit: inflate + memcpy of its chunks",
                seek_limit.wall * 1e3, seek_limit.cpu * 1e3);
    row("seek, 1 thread, warm", t_seek_1, "inflate + memcpy", seek_limit);
    row("seek, N threads, warm", t_seek, "inflate + memcpy", seek_limit);
    row("seek, N threads, first call in a process", {cold_seek.seconds, cold_seek.cpu},
        "inflate + memcpy", seek_limit);
    row_cold("  (the same against warm)", cold_seek, t_seek, seek_bytes, largest_chunk_bytes);
    row("  against warm + fresh memory", {cold_seek.seconds, cold_seek.cpu},
        "warm + fresh memory for the output", sum(t_seek, {touch_seek.seconds, touch_seek.cpu}));
    std::printf("\nevaluate at t = %g over all %zu gaussians (%zu visible), reused Frame\n", t,
                all.count, frame.count);
    row("evaluate", t_eval, "memcpy of what it reads and writes", t_eval_memcpy);
    std::printf("\nopen (fresh process): indexed %.2f ms, streaming %.2f ms; load %.1f at the "
                "end\n",
                cold_all_1.open_seconds * 1e3, cold_stream.open_seconds * 1e3, load_average());
    return 0;
}
