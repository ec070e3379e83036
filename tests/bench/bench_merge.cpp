// merge_scenes against re-encoding (fourdgs/tools/merge.hpp): a per-frame scene of FRAMES frames
// of GAUSSIANS gaussians (SH degree 1) on one grid plan, encoded as one shard per frame; then, in
// the same run, the time to write the scene by re-encoding every frame on the plan (convert) and
// the time to merge the shards, and their ratio. The merged file is checked to be the re-encoded
// file byte for byte, so both produce the same scene.
//
// Memory, two ways: the bytes live through operator new during the merge (the counting operator
// new of tests/support/live_bytes.cpp; the peak above what was live before), and the peak resident
// set of a separate process that does nothing but merge the shard files into a file (this program
// run again with
// --merge-only, which reports its /proc/self/status VmHWM), beside the same process merging two
// one-frame shards of four gaussians (what running the merge costs whatever the scene: code,
// codec contexts). Both are set against twice the largest chunk plus the summary.
//
// Usage: bench_merge [frames (64)] [gaussians per frame (65536, a writer's largest chunk)]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fourdgs/tools/convert.hpp"
#include "fourdgs/tools/grid_plan.hpp"
#include "fourdgs/tools/merge.hpp"
#include "support/discarding_sink.hpp"
#include "support/live_bytes.hpp"
#include "support/peak_rss.hpp"

using namespace fourdgs;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

Status merge_paths(const std::vector<std::string>& paths, ByteSink& sink, MergeReport* report) {
    std::vector<FileSource> files;
    for (const std::string& p : paths) {
        auto f = FileSource::open(p);
        if (!f.ok()) return std::move(f).error();
        files.push_back(std::move(*f));
    }
    std::vector<ByteSource*> sources;
    for (FileSource& f : files) sources.push_back(&f);
    return merge_scenes(sources, {}, sink, report);
}

// Runs this program again with `args` (it prints its own peak RSS) and returns that, KiB.
long child_peak_rss_kib(const std::string& self, const std::vector<std::string>& args) {
    std::string command = "'" + self + "'";
    for (const std::string& a : args) command += " '" + a + "'";
    std::FILE* p = ::popen(command.c_str(), "r");
    if (!p) return -1;
    long kib = -1;
    if (std::fscanf(p, "%ld", &kib) != 1) kib = -1;
    return ::pclose(p) == 0 ? kib : -1;
}

std::vector<PlyCloud> make_frames(std::size_t frames, std::size_t n) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(0, 1);
    std::normal_distribution<float> nd(0, 1);
    PlyCloud base;
    base.count = n;
    base.sh_degree = 1;
    std::vector<float> vel;
    for (std::size_t i = 0; i < n; ++i) {
        base.position.insert(base.position.end(), {2 * nd(rng), nd(rng), 2 * nd(rng)});
        base.normal.insert(base.normal.end(), {0, 0, 0});
        base.scale.insert(base.scale.end(),
                          {std::exp(-5 + nd(rng)), std::exp(-5 + nd(rng)), std::exp(-5 + nd(rng))});
        base.rotation.insert(base.rotation.end(), {nd(rng), nd(rng), nd(rng), nd(rng)});
        base.color.insert(base.color.end(), {u(rng), u(rng), u(rng), u(rng)});
        for (int k = 0; k < 9; ++k) base.sh.push_back(0.3f * nd(rng));
        for (int k = 0; k < 3; ++k) vel.push_back(0.2f * nd(rng));
    }
    std::vector<PlyCloud> out;
    for (std::size_t f = 0; f < frames; ++f) {
        PlyCloud c = base;
        for (std::size_t i = 0; i < n * 3; ++i) c.position[i] += vel[i] * float(f) / 30;
        out.push_back(std::move(c));
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    if (argc > 2 && std::string(argv[1]) == "--merge-only") {
        std::vector<std::string> parts(argv + 3, argv + argc);
        auto sink = FileSink::create(argv[2]);
        if (!sink.ok() || !merge_paths(parts, *sink, nullptr).ok() || !sink->close().ok()) return 1;
        return std::printf("%ld\n", test::own_peak_rss_kib()) > 0 ? 0 : 1;
    }
    const std::size_t frames = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 64;
    const std::size_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 65536;
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    std::printf("scene: %zu frames x %zu gaussians (SH degree 1), per-frame, one shard per frame\n",
                frames, n);

    const std::vector<PlyCloud> clouds = make_frames(frames, n);
    PlanOptions po;
    po.fps = 30;
    po.sample_frames = 0;
    std::vector<std::uint64_t> index(frames);
    for (std::size_t f = 0; f < frames; ++f) index[f] = f;
    auto plan = make_grid_plan(frames, clouds, index, po);
    if (!plan.ok()) return std::fprintf(stderr, "%s\n", plan.error().describe().c_str()), 1;

    // The shards, in memory and as files; and two tiny shards of another scene.
    const fs::path dir =
        fs::temp_directory_path() / ("fourdgs-bench-merge-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::vector<std::vector<std::uint8_t>> shards;
    std::vector<std::string> paths, tiny_paths;
    auto shard = [&](const GridPlan& p, std::span<const PlyCloud> all, std::size_t f,
                     const std::string& name, std::vector<std::string>& out) -> Status {
        ConvertOptions o;
        o.plan = p;
        o.first_frame = f;
        o.end_frame = f + 1;
        MemorySink sink;
        FOURDGS_TRY(convert_frames(all.subspan(f, 1), o, sink));
        out.push_back((dir / name).string());
        std::FILE* fp = std::fopen(out.back().c_str(), "wb");
        std::fwrite(sink.bytes().data(), 1, sink.bytes().size(), fp);
        std::fclose(fp);
        shards.push_back(sink.take());
        return ok_status();
    };
    for (std::size_t f = 0; f < frames; ++f)
        if (auto st = shard(*plan, clouds, f, "part_" + std::to_string(f) + ".4dgs", paths);
            !st.ok())
            return std::fprintf(stderr, "%s\n", st.error().describe().c_str()), 1;
    const std::vector<PlyCloud> tiny = make_frames(2, 4);
    auto tiny_plan = make_grid_plan(2, tiny, std::vector<std::uint64_t>{0, 1}, po);
    if (!tiny_plan.ok()) return 1;
    for (std::size_t f = 0; f < 2; ++f)
        if (!shard(*tiny_plan, tiny, f, "tiny_" + std::to_string(f) + ".4dgs", tiny_paths).ok())
            return 1;
    shards.resize(frames);

    // Re-encoding the scene: every frame converted on the plan, in one process.
    std::vector<std::uint8_t> single;
    double encode_s = 0;
    for (unsigned threads : {cores, 1u}) {
        ConvertOptions o;
        o.plan = *plan;
        o.writer.threads = threads;
        MemorySink sink;
        const auto t0 = Clock::now();
        if (auto st = convert_frames(clouds, o, sink); !st.ok())
            return std::fprintf(stderr, "%s\n", st.error().describe().c_str()), 1;
        const double s = seconds_since(t0);
        std::printf("re-encode (convert on the plan, %u thread%s): %.3f s\n", threads,
                    threads == 1 ? "" : "s", s);
        if (threads == cores) {
            encode_s = s;
            single = sink.take();
        }
    }

    // Merging the shards, from memory.
    std::vector<MemorySource> sources;
    for (const auto& s : shards) sources.emplace_back(s);
    std::vector<ByteSource*> ptrs;
    for (auto& s : sources) ptrs.push_back(&s);
    double merge_s = 1e30;
    MergeReport report;
    std::vector<std::uint8_t> merged;
    for (int run = 0; run < 3; ++run) {
        MemorySink sink;
        sink.bytes().reserve(single.size());
        const auto t0 = Clock::now();
        if (auto st = merge_scenes(ptrs, {}, sink, &report); !st.ok())
            return std::fprintf(stderr, "%s\n", st.error().describe().c_str()), 1;
        merge_s = std::min(merge_s, seconds_since(t0));
        merged = sink.take();
    }
    std::printf(
        "merge of %zu shards: %.4f s (best of 3), %.1f MB written, %u window_index streams "
        "renumbered\n",
        frames, merge_s, double(report.bytes_written) / 1e6, report.window_streams_rewritten);
    std::printf("merged file == re-encoded file: %s\n", merged == single ? "yes" : "NO");
    std::printf("speed ratio (re-encode on %u threads / merge): %.1fx\n", cores,
                encode_s / merge_s);

    // Memory: live bytes during one merge into a sink that keeps nothing, from files.
    {
        test::DiscardingSink sink;
        MergeReport r;
        const std::size_t before = test::live_bytes();
        test::reset_peak_live_bytes();
        if (auto st = merge_paths(paths, sink, &r); !st.ok())
            return std::fprintf(stderr, "%s\n", st.error().describe().c_str()), 1;
        const std::size_t peak = test::peak_live_bytes() - before;
        const std::uint64_t limit = 2 * r.largest_chunk + r.summary_bytes;
        std::printf(
            "merge heap peak: %zu bytes; largest chunk %llu, summary %llu: 2 x chunk + "
            "summary = %llu (%s)\n",
            peak, static_cast<unsigned long long>(r.largest_chunk),
            static_cast<unsigned long long>(r.summary_bytes),
            static_cast<unsigned long long>(limit), peak < limit ? "below" : "ABOVE");
        const std::string out = (dir / "merged.4dgs").string();
        std::vector<std::string> args{"--merge-only", out};
        args.insert(args.end(), paths.begin(), paths.end());
        const long rss = child_peak_rss_kib(argv[0], args);
        std::vector<std::string> tiny_args{"--merge-only", (dir / "tiny.4dgs").string()};
        tiny_args.insert(tiny_args.end(), tiny_paths.begin(), tiny_paths.end());
        const long base = child_peak_rss_kib(argv[0], tiny_args);
        std::printf(
            "merge process peak RSS: %ld KiB; merging two 4-gaussian shards: %ld KiB; "
            "difference %ld KiB against 2 x chunk + summary = %llu KiB (%s)\n",
            rss, base, rss - base, static_cast<unsigned long long>(limit / 1024),
            rss - base < static_cast<long>(limit / 1024) ? "below" : "ABOVE");
    }
    fs::remove_all(dir);
    return merged == single ? 0 : 1;
}
