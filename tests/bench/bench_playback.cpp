// The player's figures (issue 25), each a ratio to a limit measured in the same run:
//
//   bench_playback local SCENE [seconds] [look_ahead]
//                                          the render thread: a 60 Hz display for `seconds` of
//                                          wall time (default: the scene at 1x) at rate 1x and
//                                          2x from the file, with a look-ahead of `look_ahead`
//                                          states (default 2); each frame() call (wall and thread
//                                          CPU) against evaluate() of the same instant's state
//                                          alone, and against evaluating and copying only the
//                                          rows it says changed, at the same 60 Hz; late frames
//   bench_playback step SCENE              keyframe-delta: each forward step
//                                          (KeyframeDeltaReader::step_forward) against the
//                                          decode of that delta chunk alone (fetch, parse,
//                                          decode_delta_bins); a seek (state_at) against the
//                                          decode of its keyframe and deltas alone
//   bench_playback memory SCENE            peak RSS of a process playing the whole scene (every
//                                          1/60 s, waiting for each frame) above its RSS once
//                                          the scene is open, against the largest instant's
//                                          decoded state
//   bench_playback http BASE ROOT SCENE... run by tests/http/harness.py (nginx on BASE serving
//                                          ROOT); starts tests/bench/link_proxy.py in front of
//                                          it (50 ms round trip, 200 Mbit/s): time to first
//                                          frame, a seek's first frame, late frames at 1x and 2x
//                                          (and at 1x again on a fresh source with a 32 MB
//                                          prefetch budget), where they fall, requests, bytes
//
// Load: the machines are shared; each section prints the load average beside its figures.
#include <fourdgs/fourdgs.hpp>
#include <fourdgs/player.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "best_seconds.hpp"

#include "fourdgs/detail/keyframe_composition.hpp"
#include "fourdgs/detail/record_stream.hpp"

extern char** environ;

using namespace fourdgs;
using fourdgs::detail::DeltaBins;
using fourdgs::detail::RangeFetcher;
using fourdgs::detail::decode_delta_bins;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void fail(const std::string& what, const Error& e) {
    std::fprintf(stderr, "%s: %s\n", what.c_str(), e.describe().c_str());
    std::exit(1);
}

template <class T>
T take(Result<T> r, const std::string& what) {
    if (!r) fail(what, r.error());
    return std::move(r).value();
}

void check(const Status& s, const std::string& what) {
    if (!s) fail(what, s.error());
}

double cpu_clock(clockid_t clock) {
    timespec ts{};
    clock_gettime(clock, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double thread_cpu() { return cpu_clock(CLOCK_THREAD_CPUTIME_ID); }

// The CPU time of every thread of this process but the calling one (the player's worker, while
// the render thread calls), from /proc/self/task/*/schedstat (nanoseconds on a CPU).
double other_threads_cpu() {
    const std::string self = std::to_string(gettid());
    double total = 0;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
        if (task.path().filename() == self) continue;
        std::FILE* f = std::fopen((task.path() / "schedstat").c_str(), "r");
        if (!f) continue;
        unsigned long long ns = 0;
        if (std::fscanf(f, "%llu", &ns) == 1) total += double(ns) * 1e-9;
        std::fclose(f);
    }
    return total;
}

// The worker's thread CPU, attributed to the states it finished: what it spent between two
// frames goes to the states finished between them (to the composes when a compose finished
// there, and then the steps beside it are not counted), or waits for the next state finished
// when none was.
struct WorkerCpu {
    double steps_cpu = 0, composes_cpu = 0, pending = 0, last = 0;
    std::uint64_t steps = 0, composes = 0;
    PlayerStats seen;
    void start(const PlayerStats& s) {
        seen = s;
        last = other_threads_cpu();
    }
    void frame(const PlayerStats& s) {
        const double now = other_threads_cpu();
        pending += now - last;
        last = now;
        const std::uint64_t stepped = s.steps - seen.steps;
        const std::uint64_t composed = (s.states_composed - seen.states_composed) +
                                       (s.chunks_decoded - seen.chunks_decoded);
        seen = s;
        if (composed > 0) {
            composes_cpu += pending;  // with any step finished beside them
            composes += composed;
        } else if (stepped > 0) {
            steps_cpu += pending;
            steps += stepped;
        } else {
            return;
        }
        pending = 0;
    }
};

double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string load() {
    double l[3] = {0, 0, 0};
    getloadavg(l, 3);
    char buf[64];
    std::snprintf(buf, sizeof buf, "load %.1f %.1f %.1f", l[0], l[1], l[2]);
    return buf;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t i = std::min(v.size() - 1, static_cast<std::size_t>(p * double(v.size() - 1) + 0.5));
    return v[i];
}

// The bytes a decoded state's columns take (what the player holds per state).
std::uint64_t state_bytes(const GaussianBlock& b) {
    auto n = [](const auto& v) { return v.size() * sizeof(v[0]); };
    return n(b.position) + n(b.scale) + n(b.rotation) + n(b.color) + n(b.motion) + n(b.mu_t) +
           n(b.sigma_t) + n(b.win_lo) + n(b.win_hi) + n(b.flags) + n(b.window_index) + n(b.sh) +
           n(b.object_id) + n(b.source_group) + n(b.source_index) + n(b.gaussian_id);
}

long status_kib(const char* key) {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kib = -1;
    const std::size_t k = std::strlen(key);
    while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, key, k) == 0) kib = std::strtol(line + k + 1, nullptr, 10);
    std::fclose(f);
    return kib;
}

// The file through open_scene, and a keyframe-delta file also through its own reader, whose
// forward steps (step_forward) and timeline the benchmarks measure.
struct Opened {
    explicit Opened(const std::string& path)
        : source(take(FileSource::open(path), "open " + path)),
          reader(take(open_scene(source), "open_scene " + path)) {
        if (reader.keyframe_delta())
            kd.emplace(take(KeyframeDeltaReader::open(source), "KeyframeDeltaReader " + path));
    }
    const KeyframeDeltaReader* keyframes() const { return kd ? &*kd : nullptr; }
    FileSource source;
    SceneReader reader;
    std::optional<KeyframeDeltaReader> kd;
};

// The interval between a scene's states at 1x: the shortest span of a chunk (keyframe-delta:
// of a state chunk).
double scene_state_interval(const Opened& o) {
    double shortest = o.reader.scene().header.duration_sec;
    for (const ChunkIndex& e : o.reader.scene().index)
        if (e.t1 > e.t0) shortest = std::min(shortest, e.t1 - e.t0);
    return shortest;
}

// Each instant's state, computed alone: by state_at for gaussian-birth (one per chunk set), by
// stepping forward for keyframe-delta (step_forward's rows applied, or state_at at a keyframe),
// which gives state_at's state (test_player.cpp proves it) without composing each chain.
class States {
public:
    explicit States(const Opened& o) : o_(o) {}
    const GaussianBlock& at(double t) {
        const std::vector<std::size_t> key = take(o_.reader.chunks_for(t), "chunks_for");
        if (have_ && key == key_) return block_;
        if (const KeyframeDeltaReader* kd = o_.keyframes(); kd && have_) {
            // Forward from the state held, one step at a time, while that reaches t.
            const std::size_t want = take(kd->current(t), "current");
            while (ws_.composed_entry != want) {
                auto stepped = take(kd->step_forward(ws_, step_), "step_forward");
                if (!stepped) break;
                step_.apply_to(block_);
            }
            if (ws_.composed_entry == want) {
                key_ = key;
                return block_;
            }
        }
        if (const KeyframeDeltaReader* kd = o_.keyframes())
            check(kd->state_at(t, block_, ws_), "state_at");
        else
            check(o_.reader.state_at(t, block_, sws_, 1), "state_at");
        key_ = key;
        have_ = true;
        return block_;
    }

private:
    const Opened& o_;
    bool have_ = false;
    std::vector<std::size_t> key_;
    GaussianBlock block_;
    SceneWorkspace sws_;
    KeyframeDeltaWorkspace ws_;
    StateStep step_;
};

// ---------------------------------------------------------------------------------------------
// The render thread at 60 Hz.

struct FrameSample {
    double time = 0, wall = 0, cpu = 0;
    double start_delay = 0;  // how long after its vsync the frame() call began
    double state_t0 = 0;     // the state shown's interval start
    bool late = false;
    LateReason reason = LateReason::none;
    bool all_changed = true;
    std::vector<std::uint32_t> changed;  // !all_changed: the state rows of the changed Frame rows
    std::vector<std::uint32_t> frame_rows;  // ...and those Frame rows
};

// Rows [0, from.count) of `from` over rows [0, from.count) of `to`: the changed rows copied in
// one piece, the least a copy of them costs.
void copy_rows(const Frame& from, Frame& to) {
    for_each_frame_column(from.sh_degree, [&](auto column, std::size_t per) {
        const auto& a = from.*column;
        auto& b = to.*column;
        const std::size_t n = from.count * per;
        if (n > 0 && b.size() >= n) std::memcpy(b.data(), a.data(), n * sizeof a[0]);
    });
}

// Row k of `from` over row at[k] of `to`: the changed rows copied to their places in the Frame,
// as the player writes them and an engine uploads them. (copy_rows when the rows do not pair.)
// Column by column, a row's width known at compile time (a few moves, not a call).
void scatter_rows(const Frame& from, std::span<const std::uint32_t> at, Frame& to) {
    if (at.size() != from.count) return copy_rows(from, to);
    auto scatter = [&]<std::size_t W>(const auto* a, auto* b,
                                      std::integral_constant<std::size_t, W>) {
        for (std::size_t k = 0; k < at.size(); ++k)
            for (std::size_t c = 0; c < W; ++c) b[std::size_t{at[k]} * W + c] = a[k * W + c];
    };
    for_each_frame_column(from.sh_degree, [&](auto column, std::size_t per) {
        const auto* a = (from.*column).data();
        auto* b = (to.*column).data();
        if ((to.*column).size() < to.count * per) return;
        if (per == 1) scatter(a, b, std::integral_constant<std::size_t, 1>{});
        else if (per == 3) scatter(a, b, std::integral_constant<std::size_t, 3>{});
        else if (per == 4) scatter(a, b, std::integral_constant<std::size_t, 4>{});
        else
            for (std::size_t k = 0; k < at.size(); ++k)
                std::copy_n(a + k * per, per, b + std::size_t{at[k]} * per);
    });
}

void render_thread(const std::string& path, double rate, double wall_seconds,
                   std::uint32_t look_ahead) {
    Opened o(path);
    PlayerOptions po;
    po.look_ahead = look_ahead;
    po.stall_timeout_sec = 0;  // late frames are counted, never an error here
    Player player = take(Player::open(o.reader, o.source, po), "player");
    const double duration = player.duration();
    if (!(wall_seconds > 0)) wall_seconds = duration / rate;
    Frame frame;
    PlayerFrame info;
    const auto w0 = Clock::now();
    check(player.frame_at(0, frame, info, true), "first frame");
    const double first = since(w0);
    player.play();
    check(player.set_rate(rate), "rate");
    std::vector<FrameSample> samples;
    // The worker's CPU: the process's less this (render) thread's, over the playing loop.
    const PlayerStats before = player.stats();
    const double process0 = cpu_clock(CLOCK_PROCESS_CPUTIME_ID), render0 = thread_cpu();
    WorkerCpu worker;
    worker.start(before);
    const auto start = Clock::now();
    const double vsync = 1.0 / 60;
    for (int k = 0;; ++k) {
        const auto due = start + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(k * vsync));
        std::this_thread::sleep_until(due);
        const double now = std::chrono::duration<double>(due - start).count();
        if (now >= wall_seconds) break;
        FrameSample s;
        const double c0 = thread_cpu();
        const auto t0 = Clock::now();
        s.start_delay = std::chrono::duration<double>(t0 - due).count();
        check(player.frame(now, frame, info), "frame");
        s.wall = since(t0);
        s.cpu = thread_cpu() - c0;
        s.time = info.time;
        s.state_t0 = info.state_t0;
        s.late = info.late;
        s.reason = info.reason;
        s.all_changed = info.all_changed;
        for (std::uint32_t r : info.changed) s.changed.push_back(frame.source[r]);
        s.frame_rows = info.changed;
        samples.push_back(std::move(s));
        worker.frame(player.stats());
        if (info.state == PlaybackState::ended) break;
    }
    const double played = since(start);
    const double worker_cpu =
        (cpu_clock(CLOCK_PROCESS_CPUTIME_ID) - process0) - (thread_cpu() - render0);
    const PlayerStats stats = player.stats();
    const std::string during = load();
    // evaluate() of each instant's state alone, in the same process and the same rhythm (60 Hz,
    // so each call meets caches as cold as the player's did): the limit.
    States states(o);
    const SceneInfo& scene = o.reader.scene();
    EvaluateOptions eo;
    eo.tracks = scene.object_tracks;
    std::vector<double> eval_wall, eval_cpu, call_wall, call_cpu, rows_wall, rows_cpu;
    std::vector<double> placed_wall, placed_cpu;  // the changed rows copied to their places
    std::size_t whole = 0, rows_changed = 0;
    Frame part;
    int late = 0, over_budget = 0, late_only_over = 0;
    int late_by[5] = {0, 0, 0, 0, 0};
    std::string late_at;  // the scene times of the late frames ("q": queued behind others)
    const auto again = Clock::now();
    for (std::size_t k = 0; k < samples.size(); ++k) {
        const FrameSample& s = samples[k];
        const GaussianBlock& block = states.at(s.time);
        std::this_thread::sleep_until(again + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(k * vsync)));
        const double c0 = thread_cpu();
        const auto t0 = Clock::now();
        evaluate(block, s.time, scene.header.cutoff, frame, eo);
        eval_wall.push_back(since(t0));
        eval_cpu.push_back(thread_cpu() - c0);
        // At the same 60 Hz rhythm:
        std::this_thread::sleep_until(again + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>((k + 0.5) * vsync)));
        // The frame's own limit: its changed rows alone evaluated (the whole state when all
        // changed), then copied in one piece (rows) or to their places in the Frame (placed).
        auto timed = [](auto&& f) {
            const double c0 = thread_cpu();
            const auto w0 = Clock::now();
            f();
            return std::pair<double, double>{since(w0), thread_cpu() - c0};
        };
        const auto [eval_w, eval_c] = timed([&] {
            if (s.all_changed) evaluate(block, s.time, scene.header.cutoff, frame, eo);
            else evaluate_rows(block, s.changed, s.time, scene.header.cutoff, part, eo);
        });
        const auto [copy_w, copy_c] = timed([&] {
            if (!s.all_changed) copy_rows(part, frame);
        });
        const auto [place_w, place_c] = timed([&] {
            if (!s.all_changed) scatter_rows(part, s.frame_rows, frame);
        });
        rows_wall.push_back(eval_w + copy_w);
        rows_cpu.push_back(eval_c + copy_c);
        placed_wall.push_back(eval_w + place_w);
        placed_cpu.push_back(eval_c + place_c);
        whole += s.all_changed;
        rows_changed += s.changed.size();
        call_wall.push_back(s.wall);
        call_cpu.push_back(s.cpu);
        late += s.late;
        late_by[static_cast<int>(s.reason)]++;
        if (s.late && late_at.size() < 400) {  // where in the scene the late frames fall
            char buf[48];
            std::snprintf(buf, sizeof buf, " %.3f%s", s.time,
                          s.reason == LateReason::queued ? "q" : "");
            late_at += buf;
        }
        // A frame misses its vsync when frame() began after the vsync's slot ended or took
        // longer than a slot: the render thread over budget, whether or not the state was
        // ready.
        const bool over = s.start_delay + s.wall > vsync;
        over_budget += over;
        late_only_over += over && !s.late;
    }
    auto ms = [](const std::vector<double>& v, double p) { return percentile(v, p) * 1e3; };
    std::printf("%s at %gx, look_ahead %u: %zu frames at 60 Hz (first frame %.1f ms), %s\n",
                path.c_str(), rate, look_ahead, samples.size(), first * 1e3, during.c_str());
    std::printf("  frame() ms:        wall p50 %.3f p99 %.3f max %.3f | thread CPU p50 %.3f p99 "
                "%.3f max %.3f\n",
                ms(call_wall, 0.5), ms(call_wall, 0.99), ms(call_wall, 1), ms(call_cpu, 0.5),
                ms(call_cpu, 0.99), ms(call_cpu, 1));
    std::printf("  evaluate alone ms: wall p50 %.3f p99 %.3f max %.3f | thread CPU p50 %.3f p99 "
                "%.3f max %.3f\n",
                ms(eval_wall, 0.5), ms(eval_wall, 0.99), ms(eval_wall, 1), ms(eval_cpu, 0.5),
                ms(eval_cpu, 0.99), ms(eval_cpu, 1));
    std::printf("  frame() / evaluate alone: p99 %.2fx, max %.2fx (wall); p99 %.2fx, max %.2fx "
                "(thread CPU)\n",
                percentile(call_wall, 0.99) / percentile(eval_wall, 0.99),
                percentile(call_wall, 1) / percentile(eval_wall, 1),
                percentile(call_cpu, 0.99) / percentile(eval_cpu, 0.99),
                percentile(call_cpu, 1) / percentile(eval_cpu, 1));
    std::printf("  changed rows: %zu frames whole, %zu listed rows a frame on average; evaluate "
                "+ copy of those alone ms: wall p99 %.3f | thread CPU p50 %.3f p99 %.3f\n",
                whole, samples.empty() ? 0 : rows_changed / samples.size(), ms(rows_wall, 0.99),
                ms(rows_cpu, 0.5), ms(rows_cpu, 0.99));
    std::printf("  frame() / changed rows alone: p99 %.2fx (wall), p99 %.2fx (thread CPU)\n",
                percentile(call_wall, 0.99) / percentile(rows_wall, 0.99),
                percentile(call_cpu, 0.99) / percentile(rows_cpu, 0.99));
    std::printf("  frame() / changed rows alone, copied to their Frame rows: p99 %.2fx (wall), "
                "p99 %.2fx (thread CPU) (the limit's thread CPU p99 %.3f ms)\n",
                percentile(call_wall, 0.99) / percentile(placed_wall, 0.99),
                percentile(call_cpu, 0.99) / percentile(placed_cpu, 0.99),
                ms(placed_cpu, 0.99));
    std::printf("  late frames %d (queued %d, fetching %d, decoding %d); worker: %llu chunks "
                "decoded, %llu composed, %llu steps, %llu discarded\n",
                late, late_by[2], late_by[3], late_by[4],
                static_cast<unsigned long long>(stats.chunks_decoded),
                static_cast<unsigned long long>(stats.states_composed),
                static_cast<unsigned long long>(stats.steps),
                static_cast<unsigned long long>(stats.discarded));
    if (!late_at.empty()) std::printf("  late at t =%s\n", late_at.c_str());
    // Why frames were late: the state not prepared (the worker behind), or the render thread
    // over its 1/60 s budget (the frame missed its vsync whatever the worker did).
    std::printf("  why late: state not prepared %d; render thread over budget %d (%d of them "
                "with the state prepared)\n",
                late, over_budget, late_only_over);
    // Whether the worker keeps up on one core: its thread CPU per state prepared against the
    // interval at which the clock asks for a new state. Its CPU against the wall time played
    // says how much of a core the machine gave it.
    const std::uint64_t prepared = (stats.steps - before.steps) +
                                   (stats.states_composed - before.states_composed) +
                                   (stats.chunks_decoded - before.chunks_decoded);
    if (prepared > 0) {
        const double interval = scene_state_interval(o) / rate;
        const double per = worker_cpu / double(prepared);
        std::printf("  worker: %llu states prepared in %.2f s, thread CPU %.2f ms a state against "
                    "a state every %.1f ms at %gx; it ran %.0f %% of the wall time\n",
                    static_cast<unsigned long long>(prepared), played, per * 1e3,
                    interval * 1e3, rate, 100 * worker_cpu / played);
        const double step = worker.steps > 0 ? worker.steps_cpu / double(worker.steps) : 0;
        std::printf("    %llu steps at %.2f ms of thread CPU each (%.2fx the interval: one core "
                    "%s), %llu composes at %.1f ms each; playing on time needs %.0f %% of a "
                    "core for the steps, the worker got %.0f %%\n",
                    static_cast<unsigned long long>(worker.steps), step * 1e3, step / interval,
                    step <= interval ? "keeps up" : "falls behind",
                    static_cast<unsigned long long>(worker.composes),
                    worker.composes > 0 ? worker.composes_cpu / double(worker.composes) * 1e3 : 0.0,
                    100 * step / interval, 100 * worker_cpu / played);
    }
    // The slowest frames (thread CPU): what they did.
    std::vector<std::size_t> order(samples.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return call_cpu[a] > call_cpu[b]; });
    for (std::size_t r = 0; r < std::min<std::size_t>(3, order.size()); ++r) {
        const std::size_t k = order[r];
        const FrameSample& s = samples[k];
        const double prev = k > 0 ? samples[k - 1].state_t0 : s.state_t0;
        std::printf("    slow frame %zu: thread CPU %.2f ms (its changed rows alone %.2f ms, "
                    "placed %.2f ms), %s, %zu rows listed, states advanced %.0f%s\n",
                    k, s.cpu * 1e3, rows_cpu[k] * 1e3, placed_cpu[k] * 1e3,
                    s.all_changed ? "whole" : "partial",
                    s.changed.size(), std::round((s.state_t0 - prev) * 30),
                    s.late ? ", late" : "");
    }
}

// ---------------------------------------------------------------------------------------------
// Keyframe-delta: a forward step against the decode of its delta chunk alone.

// The decode of one state chunk alone, as a reader fetches it: its record and SH bands
// fetched, parsed and decoded to bins (decode_chunk_bins or decode_delta_bins), no composing.
struct ChunkDecoder {
    explicit ChunkDecoder(Opened& o)
        : scene(o.keyframes()->scene()), fetcher(o.source, ReaderOptions{}.max_record_bytes) {}
    void decode(const ChunkIndex& e) {
        const bool delta = e.keyframe->chunk_kind == kChunkKindDelta;
        RecordView rec = take(fetcher.fetch_framed(e.chunk_offset, e.chunk_length,
                                                   delta ? op::delta_chunk : op::chunk,
                                                   buffers.record, {}),
                              "fetch");
        check(fetcher.fetch_sh_bands(e, scene.header.sh_degree, false, buffers.bands,
                                     buffers.band_records),
              "bands");
        if (delta)
            check(decode_delta_bins(scene, take(parse_delta_chunk(rec), "parse"),
                                    buffers.band_records, options, delta_bins, scratch),
                  "decode");
        else
            check(decode_chunk_bins(scene, take(parse_chunk(rec), "parse"), buffers.band_records,
                                    options, bins, scratch),
                  "decode");
    }
    const SceneInfo& scene;
    RangeFetcher fetcher;
    FetchedChunkBuffers buffers;
    ChunkBins bins;
    DeltaBins delta_bins;
    DecodeScratch scratch;
    ChunkDecodeOptions options;
};

// The best of `runs` timings of f, in wall and thread-CPU seconds.
template <class F>
std::pair<double, double> best_of(int runs, F&& f) {
    double wall = 1e30, cpu = 1e30;
    for (int r = 0; r < runs; ++r) {
        const double c0 = thread_cpu();
        const auto w0 = Clock::now();
        f();
        wall = std::min(wall, since(w0));
        cpu = std::min(cpu, thread_cpu() - c0);
    }
    return {wall, cpu};
}

// The memory traffic a step in place cannot avoid: the rows it changed, scattered over a state
// of a million, each read, added to and written back in int32 bin columns of the state's size
// (3 bins a row for position, 1 for mu_t, as the update group carries them), nothing else. The
// columns are this bench's own, touched only here, so each step meets them as cold as the
// composed population's; like the population's (a keyframe's decoded columns), they ask for
// 2 MB pages, so the two pay the same TLB misses. Returns the thread CPU seconds it took.
struct ScatteredUpdate {
    std::vector<std::int32_t> position, mu_t;
    static void size(std::vector<std::int32_t>& column, std::size_t n) {
        if (n > column.capacity()) {
            column.reserve(n);
            const auto at = reinterpret_cast<std::uintptr_t>(column.data());
            const std::uintptr_t page = 4096, begin = (at + page - 1) & ~(page - 1),
                                 end = (at + n * sizeof(std::int32_t)) & ~(page - 1);
            if (end > begin)
                (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
        }
        column.resize(n);
    }
    double add(const StateStep& step, std::size_t rows) {
        if (step.whole) return 0;
        size(position, rows * 3);
        size(mu_t, rows);
        const bool pos = step.attributes[attr::position], mu = step.attributes[attr::mu_t];
        const std::vector<std::uint32_t>& r = step.rows;
        const double c0 = thread_cpu();
        constexpr std::size_t kAhead = 64;
        for (std::size_t k = 0; k < r.size(); ++k) {
            if (k + kAhead < r.size()) {
                __builtin_prefetch(&position[std::size_t{r[k + kAhead]} * 3], 1);
                __builtin_prefetch(&mu_t[r[k + kAhead]], 1);
            }
            if (pos)
                for (std::size_t c = 0; c < 3; ++c) position[std::size_t{r[k]} * 3 + c] += 1;
            if (mu) mu_t[r[k]] += 1;
        }
        return thread_cpu() - c0;
    }
};

void step_cost(const std::string& path) {
    Opened o(path);
    const KeyframeDeltaReader* kd = o.keyframes();
    if (!kd) {
        std::fprintf(stderr, "%s is not keyframe-delta\n", path.c_str());
        std::exit(1);
    }
    const std::vector<ChunkIndex>& ix = kd->timeline().entries();
    KeyframeDeltaWorkspace ws;
    StateStep step;
    GaussianBlock state;
    ChunkDecoder decoder(o);
    std::vector<double> ratio_wall, ratio_cpu, step_ms, decode_ms, keyframe_ms;
    std::vector<double> traffic_ms, ratio_traffic, ratio_beyond;
    ScatteredUpdate scattered;
    std::uint64_t rows = 0;
    for (std::size_t entry : kd->timeline().by_time()) {
        const ChunkIndex& e = ix[entry];
        if (e.keyframe->chunk_kind == kChunkKindKeyframe || ws.composed_entry == ws.kNone) {
            const auto t0 = Clock::now();
            check(kd->state_at(e.t0, state, ws), "state_at");
            keyframe_ms.push_back(since(t0) * 1e3);
            continue;
        }
        // The step (best of 1: it changes the state), then the decode alone, best of 3.
        const double c0 = thread_cpu();
        const auto t0 = Clock::now();
        const bool stepped = take(kd->step_forward(ws, step), "step_forward");
        const double step_wall = since(t0), step_cpu = thread_cpu() - c0;
        if (!stepped) {
            check(kd->state_at(e.t0, state, ws), "state_at");
            continue;
        }
        step.apply_to(state);
        rows += step.rows.size();
        const auto [best_wall, best_cpu] = best_of(3, [&] { decoder.decode(e); });
        const double traffic = scattered.add(step, state.count);
        step_ms.push_back(step_wall * 1e3);
        decode_ms.push_back(best_wall * 1e3);
        traffic_ms.push_back(traffic * 1e3);
        ratio_wall.push_back(step_wall / best_wall);
        ratio_cpu.push_back(step_cpu / best_cpu);
        ratio_traffic.push_back(traffic / best_cpu);
        ratio_beyond.push_back(step_cpu / (best_cpu + traffic));
    }
    // A seek: state_at composing the keyframe and the chain up to the state, against the decode
    // of those chunks alone (each best of 3).
    std::string seeks;
    {
        KeyframeDeltaWorkspace sws;
        GaussianBlock out;
        check(kd->state_at(0, out, sws), "state_at");  // the buffers' first pages, not measured
        for (std::size_t depth : {0u, 1u, 10u, 20u, 29u}) {
            const std::size_t entry = kd->timeline().by_time().at(
                std::min<std::size_t>(depth, kd->timeline().by_time().size() - 1));
            const auto [seek_wall, seek_cpu] =
                best_of(3, [&] { check(kd->state_at(ix[entry].t0, out, sws), "state_at"); });
            const auto [dec_wall, dec_cpu] = best_of(3, [&] {
                for (std::size_t c : kd->timeline().chain_of(entry)) decoder.decode(ix[c]);
            });
            char buf[160];
            std::snprintf(buf, sizeof buf,
                          "\n    depth %zu: seek %.1f ms, decode alone %.1f ms: %.2fx wall, "
                          "%.2fx thread CPU",
                          kd->timeline().chain_of(entry).size() - 1, seek_wall * 1e3,
                          dec_wall * 1e3, seek_wall / dec_wall, seek_cpu / dec_cpu);
            seeks += buf;
        }
    }
    std::printf("%s: %zu forward steps (%.0f rows each on average), %zu states composed; %s\n",
                path.c_str(), step_ms.size(), step_ms.empty() ? 0.0 : double(rows) / double(step_ms.size()),
                keyframe_ms.size(), load().c_str());
    std::printf("  step ms p50 %.2f max %.2f; decode of the delta chunk alone p50 %.2f; a "
                "keyframe's state p50 %.1f ms\n",
                percentile(step_ms, 0.5), percentile(step_ms, 1.0), percentile(decode_ms, 0.5),
                percentile(keyframe_ms, 0.5));
    std::printf("  step / decode of that delta chunk: wall p50 %.2fx p90 %.2fx max %.2fx; thread "
                "CPU p50 %.2fx p90 %.2fx max %.2fx\n",
                percentile(ratio_wall, 0.5), percentile(ratio_wall, 0.9),
                percentile(ratio_wall, 1.0), percentile(ratio_cpu, 0.5),
                percentile(ratio_cpu, 0.9), percentile(ratio_cpu, 1.0));
    std::printf("  the step's rows alone, read, added to and written back in bin columns of "
                "the state's size (its position and mu_t columns): thread CPU p50 %.2f ms = "
                "%.2fx the delta's decode; step / (decode + that) p50 %.2fx\n",
                percentile(traffic_ms, 0.5), percentile(ratio_traffic, 0.5),
                percentile(ratio_beyond, 0.5));
    std::printf("  a seek (state_at) against the decode of its keyframe and deltas alone, by "
                "deltas composed:%s\n  %s\n",
                seeks.c_str(), load().c_str());
}

// ---------------------------------------------------------------------------------------------
// Memory: a child process plays the whole scene.

int memory_child(const std::string& path, std::uint32_t look_ahead) {
    Opened o(path);
    PlayerOptions po;
    po.look_ahead = look_ahead;
    po.stall_timeout_sec = 0;  // late frames are counted, never an error here
    Player player = take(Player::open(o.reader, o.source, po), "player");
    const long open_kib = status_kib("VmRSS:");
    Frame frame;
    PlayerFrame info;
    for (double t = 0; t < player.duration(); t += 1.0 / 60)
        check(player.frame_at(t, frame, info, true), "frame");
    std::printf("%ld %ld\n", open_kib, status_kib("VmHWM:"));
    return 0;
}

void memory(const char* self, const std::string& path) {
    // The largest instant's decoded state, in this process.
    std::uint64_t largest = 0;
    {
        Opened o(path);
        States states(o);
        const double d = o.reader.scene().header.duration_sec;
        const bool kd = o.reader.keyframe_delta();
        const std::vector<ChunkIndex>& ix = o.reader.scene().index;
        std::vector<double> ts;
        if (kd)
            for (const ChunkIndex& e : ix) ts.push_back(e.t0);
        else
            for (double t = 0; t < d; t += 0.25) ts.push_back(t);
        std::sort(ts.begin(), ts.end());
        for (double t : ts) largest = std::max(largest, state_bytes(states.at(t)));
    }
    std::printf("%s: largest instant's state %.1f MB; %s\n", path.c_str(),
                double(largest) / 1e6, load().c_str());
    for (int look_ahead : {1, 2}) {
        const std::string command = std::string("'") + self + "' memory-child '" + path + "' " +
                                    std::to_string(look_ahead);
        std::FILE* p = ::popen(command.c_str(), "r");
        long open_kib = -1, peak_kib = -1;
        if (!p || std::fscanf(p, "%ld %ld", &open_kib, &peak_kib) != 2 || ::pclose(p) != 0) {
            std::fprintf(stderr, "the memory child failed\n");
            std::exit(1);
        }
        const double above = double(peak_kib - open_kib) * 1024;
        std::printf("  look_ahead %d: peak RSS playing the whole scene %.1f MB above the open "
                    "scene's %.1f MB: %.2fx the largest state\n",
                    look_ahead, above / 1e6, double(open_kib) * 1024 / 1e6,
                    above / double(largest));
    }
}

// ---------------------------------------------------------------------------------------------
// Over HTTP, through the link proxy.

struct Link {
    pid_t pid = 0;
    int to_child = -1;
    int port = 0;
};

Link start_link(int upstream_port, double rtt_ms, double mbit) {
    const std::string script =
        (std::filesystem::path(FOURDGS_SOURCE_DIR) / "tests" / "bench" / "link_proxy.py").string();
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) std::exit(1);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addclose(&actions, in[1]);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    const std::string port = std::to_string(upstream_port), rtt = std::to_string(rtt_ms),
                      rate = std::to_string(mbit);
    const char* argv[] = {"python3", script.c_str(), port.c_str(), "--rtt-ms", rtt.c_str(),
                          "--mbit", rate.c_str(), nullptr};
    Link link;
    if (posix_spawnp(&link.pid, "python3", &actions, nullptr, const_cast<char**>(argv),
                     environ) != 0) {
        std::fprintf(stderr, "cannot start %s\n", script.c_str());
        std::exit(1);
    }
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    link.to_child = in[1];
    std::string line;  // the port, then a newline
    char c = 0;
    while (line.size() < 16 && read(out[0], &c, 1) == 1 && c != '\n') line += c;
    close(out[0]);
    if ((link.port = std::atoi(line.c_str())) <= 0) {
        std::fprintf(stderr, "the link proxy did not start\n");
        std::exit(1);
    }
    return link;
}

void stop_link(Link& link) {
    close(link.to_child);  // its stdin closes: it stops
    int status = 0;
    waitpid(link.pid, &status, 0);
}

// Times in order as runs " a-b (n)", a run going on while the next time is within `gap`.
std::string runs_of(const std::vector<double>& times, double gap) {
    std::string out;
    for (std::size_t i = 0; i < times.size();) {
        std::size_t j = i;
        while (j + 1 < times.size() && times[j + 1] - times[j] <= gap) ++j;
        char buf[64];
        std::snprintf(buf, sizeof buf, " %.2f-%.2f (%zu)", times[i], times[j], j - i + 1);
        out += buf;
        i = j + 1;
    }
    return out;
}

void over_http(const std::string& base, const std::string& root,
               const std::vector<std::string>& files) {
    const double rtt = 0.050, mbit = 200;
    const int upstream = std::atoi(base.substr(base.rfind(':') + 1).c_str());
    Link link = start_link(upstream, rtt * 1e3, mbit);
    const std::string via = "http://127.0.0.1:" + std::to_string(link.port);
    std::printf("over HTTP: nginx through a link of %.0f ms round trip and %.0f Mbit/s; %s\n",
                rtt * 1e3, mbit, load().c_str());
    for (const std::string& path : files) {
        const std::string name = std::filesystem::path(path).filename().string();
        std::filesystem::remove(root + "/" + name);
        std::filesystem::create_symlink(std::filesystem::absolute(path), root + "/" + name);
        const std::string url = via + "/" + name;
        // Local figures for the goals: the decode of the first instant and of the seek's.
        Opened local(path);
        const double duration = local.reader.scene().header.duration_sec;
        const double seek_to = std::floor(duration * 0.65 * 30) / 30 + 0.01;
        const std::uint64_t first_bytes = take(local.reader.fetch_cost(0), "fetch_cost");
        const std::uint64_t seek_bytes = take(local.reader.fetch_cost(seek_to), "fetch_cost");
        auto decode_alone = [&](double t) {
            GaussianBlock b;
            SceneWorkspace ws;
            check(local.reader.state_at(t, b, ws, 1), "state_at");  // warms the page cache
            return best_seconds(3, [&] { check(local.reader.state_at(t, b, ws, 1), "state_at"); });
        };
        const double first_decode = decode_alone(0), seek_decode = decode_alone(seek_to);
        const double bytes_per_s = mbit * 1e6 / 8;

        // Time to first frame: open the URL, the scene and the player, then the first frame.
        const auto t0 = Clock::now();
        auto source = take(HttpSource::open(url), "HttpSource::open");
        const double opened = since(t0);
        SceneReader reader = take(open_scene(*source), "open_scene");
        const double scene_open = since(t0);
        Player player = take(Player::open(reader, *source, {}), "player");
        Frame frame;
        PlayerFrame info;
        check(player.frame_at(0, frame, info, true), "first frame");
        const double ttff = since(t0);
        std::printf("  (source open %.0f ms, scene open %.0f ms, first frame %.0f ms)\n",
                    opened * 1e3, scene_open * 1e3, ttff * 1e3);
        const HttpStats first_stats = source->stats();
        const double ttff_goal = 3 * rtt + double(first_bytes) / bytes_per_s;
        std::printf("%s (%.1f MB): time to first frame %.0f ms = %.2fx the goal (3 round trips "
                    "+ %.2f MB at the link's rate = %.0f ms); %llu requests, %llu round trips; "
                    "its decode alone %.0f ms\n",
                    name.c_str(), double(*source->size()) / 1e6, ttff * 1e3, ttff / ttff_goal,
                    double(first_bytes) / 1e6, ttff_goal * 1e3,
                    static_cast<unsigned long long>(first_stats.requests),
                    static_cast<unsigned long long>(first_stats.round_trips), first_decode * 1e3);

        // A seek far from the playhead (outside the prefetch window): its first frame.
        const auto s0 = Clock::now();
        player.seek(seek_to);
        check(player.frame_at(seek_to, frame, info, true), "seek");
        const double seek = since(s0);
        const double seek_goal = rtt + double(seek_bytes) / bytes_per_s + seek_decode;
        std::printf("  seek to %.2f s: first frame %.0f ms = %.2fx the goal (1 round trip + %.2f "
                    "MB at the link's rate + its decode alone %.0f ms = %.0f ms)\n",
                    seek_to, seek * 1e3, seek / seek_goal, double(seek_bytes) / 1e6,
                    seek_decode * 1e3, seek_goal * 1e3);

        // Playback from the start at `rate`, 60 Hz, never waiting.
        auto play_from_start = [&](Player& p, HttpSource& src, double rate, const char* label) {
            p.pause();
            p.seek(0);
            check(p.frame_at(0, frame, info, true), "restart");
            check(p.set_rate(rate), "rate");
            p.play();
            const HttpStats before = src.stats();
            int frames = 0, late = 0;
            std::vector<double> late_at;  // the scene times of the late frames
            const auto start = Clock::now();
            for (int k = 1;; ++k) {
                const auto due = start + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(k / 60.0));
                std::this_thread::sleep_until(due);
                const double now = std::chrono::duration<double>(due - start).count();
                check(p.frame(now, frame, info), "frame");
                ++frames;
                late += info.late;
                if (info.late) late_at.push_back(info.time);
                if (info.state == PlaybackState::ended) break;
            }
            const HttpStats st = src.stats();
            std::printf("  playback at %gx%s: %d frames, %d late; %llu requests, %.1f MB "
                        "fetched; %s\n",
                        rate, label, frames, late,
                        static_cast<unsigned long long>(st.requests - before.requests),
                        double(st.bytes_fetched - before.bytes_fetched) / 1e6, load().c_str());
            if (!late_at.empty())
                std::printf("    late at t =%s\n", runs_of(late_at, 1.5 * rate / 60).c_str());
        };
        for (double rate : {1.0, 2.0}) play_from_start(player, *source, rate, "");
        // The same on a fresh source with a prefetch budget of 32 MB (the most the source's
        // default 64 MB cache holds twice over): room for a keyframe and the deltas before it.
        auto fresh = take(HttpSource::open(url), "HttpSource::open");
        SceneReader fresh_reader = take(open_scene(*fresh), "open_scene");
        PlayerOptions roomy;
        roomy.prefetch_options.byte_budget = 32 << 20;
        Player roomy_player = take(Player::open(fresh_reader, *fresh, roomy), "player");
        play_from_start(roomy_player, *fresh, 1.0, ", prefetch budget 32 MB");
    }
    stop_link(link);
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "local" && argc > 2) {
        const double seconds = argc > 3 ? std::strtod(argv[3], nullptr) : 0;
        const auto look_ahead = static_cast<std::uint32_t>(argc > 4 ? std::atoi(argv[4]) : 2);
        render_thread(argv[2], 1, seconds, look_ahead);
        render_thread(argv[2], 2, seconds / 2, look_ahead);
        return 0;
    }
    if (mode == "step" && argc > 2) {
        step_cost(argv[2]);
        return 0;
    }
    if (mode == "memory" && argc > 2) {
        const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
        memory(self.c_str(), argv[2]);
        return 0;
    }
    if (mode == "memory-child" && argc > 3)
        return memory_child(argv[2], static_cast<std::uint32_t>(std::atoi(argv[3])));
    if (mode == "http" && argc > 4) {
        over_http(argv[2], argv[3], std::vector<std::string>(argv + 4, argv + argc));
        return 0;
    }
    std::fprintf(stderr,
                 "usage: bench_playback local SCENE [seconds] [look_ahead] | step SCENE | "
                 "memory SCENE | "
                 "http BASE ROOT SCENE...\n");
    return 2;
}
