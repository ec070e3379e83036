// The in-process measurements of the long-capture benchmark (tests/bench/long_capture.py):
//
//   bench_long_capture merge OUT PART...   merges the shards into OUT (merge_files) and prints, as
//       JSON: the heap the merge held at most (the counting operator new of
//       tests/support/live_bytes.cpp, above what was live before), the process's peak resident set
//       (VmHWM), the largest chunk and the summary (MergeReport), the bytes and the wall time.
//   bench_long_capture seek URL T...        opens the scene at URL over HTTP (HttpSource; a
//       path reads the file) and, for each instant T, reconstructs the state at T (open_scene,
//       tracks composed), printing as JSON per seek: requests, round trips, bytes fetched, the
//       gaussians visible, the wall time, and the bytes the index says the chunks live at T take
//       (IndexedReader::fetch_cost), beside the file's size.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fourdgs/http_source.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/open_scene.hpp"
#include "fourdgs/reconstruct.hpp"
#include "fourdgs/tools/merge.hpp"
#include "support/live_bytes.hpp"
#include "support/peak_rss.hpp"

using namespace fourdgs;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "bench_long_capture: %s\n", what.c_str());
    std::exit(1);
}

int merge(const std::string& out, std::vector<std::string> parts) {
    MergeReport report;
    report.order.reserve(parts.size());
    const std::size_t before = test::live_bytes();
    test::reset_peak_live_bytes();
    const auto t0 = Clock::now();
    if (auto st = merge_files(parts, out, {}, &report); !st.ok()) die(st.error().describe());
    const double wall = seconds_since(t0);
    std::printf(
        "{\"peak_heap\": %zu, \"vmhwm_kib\": %ld, \"largest_chunk\": %llu, \"summary_bytes\": "
        "%llu, \"bytes\": %llu, \"chunks\": %u, \"wall_s\": %.3f}\n",
        test::peak_live_bytes() - before, test::own_peak_rss_kib(),
        static_cast<unsigned long long>(report.largest_chunk),
        static_cast<unsigned long long>(report.summary_bytes),
        static_cast<unsigned long long>(report.bytes_written), report.chunks, wall);
    return 0;
}

int seek(const std::string& url, const std::vector<double>& times) {
    std::unique_ptr<HttpSource> http;
    std::optional<FileSource> file;
    if (url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0) {
        auto s = HttpSource::open(url);
        if (!s.ok()) die(s.error().describe());
        http = std::move(s).value();
    } else {
        auto f = FileSource::open(url);
        if (!f.ok()) die(f.error().describe());
        file.emplace(std::move(*f));
    }
    ByteSource& source = http ? static_cast<ByteSource&>(*http) : *file;
    auto stats = [&] { return http ? http->stats() : HttpStats{}; };
    const auto t_open = Clock::now();
    auto reader = open_scene(source);
    if (!reader.ok()) die(reader.error().describe());
    const HttpStats opened_stats = stats();
    const double open_s = seconds_since(t_open);
    auto index = IndexedReader::open(source);
    if (!index.ok()) die(index.error().describe());
    const std::uint64_t size = source.size().value_or(0);
    std::printf("{\"size\": %llu, \"open\": {\"requests\": %llu, \"bytes\": %llu, \"wall_s\": %.4f},"
                " \"seeks\": [",
                static_cast<unsigned long long>(size),
                static_cast<unsigned long long>(opened_stats.requests),
                static_cast<unsigned long long>(opened_stats.bytes_fetched), open_s);
    for (std::size_t k = 0; k < times.size(); ++k) {
        const double t = times[k];
        std::uint64_t needed = 0;
        const auto& entries = index->scene().index;
        for (std::size_t i = 0; i < entries.size(); ++i)
            if (entries[i].t0 <= t && t < entries[i].t1) needed += index->fetch_cost(i);
        const HttpStats before = stats();
        const auto t0 = Clock::now();
        GaussianBlock block;
        SceneWorkspace ws;
        if (auto st = reader->state_at(t, block, ws); !st.ok()) die(st.error().describe());
        Frame frame;
        EvaluateOptions eo;
        eo.tracks = reader->scene().object_tracks;
        evaluate(block, t, reader->scene().header.cutoff, frame, eo);
        const double wall = seconds_since(t0);
        const HttpStats after = stats();
        std::printf("%s{\"t\": %g, \"visible\": %zu, \"requests\": %llu, \"round_trips\": %llu, "
                    "\"bytes\": %llu, \"index_bytes\": %llu, \"wall_s\": %.4f}",
                    k ? ", " : "", t, frame.count,
                    static_cast<unsigned long long>(after.requests - before.requests),
                    static_cast<unsigned long long>(after.round_trips - before.round_trips),
                    static_cast<unsigned long long>(after.bytes_fetched - before.bytes_fetched),
                    static_cast<unsigned long long>(needed), wall);
    }
    std::printf("]}\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "merge" && argc > 3) return merge(argv[2], {argv + 3, argv + argc});
    if (mode == "seek" && argc > 3) {
        std::vector<double> times;
        for (int i = 3; i < argc; ++i) times.push_back(std::strtod(argv[i], nullptr));
        return seek(argv[2], times);
    }
    std::fprintf(stderr,
                 "usage: bench_long_capture merge OUT PART...\n"
                 "       bench_long_capture seek URL T...\n");
    return 2;
}
