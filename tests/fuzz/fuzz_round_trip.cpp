// libFuzzer harness: write → read round trips. The input bytes choose a random scene (gaussians,
// windows, lifetimes, SH degree, object and source ids) and random writer options (preset,
// codec, chunk compression, SH ladder, chunk size, which summary parts); write_scene must accept
// it (only a bin outside i32 may be refused), and both readers must give back, for every
// gaussian, the value written within the bound the file's Quantization record declares
// (conformance/source_check.hpp), the two paths bit-identical, and the validator no error.
//   build: cmake -DFOURDGS_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ... ; run: fuzz_round_trip dir/
#include <fuzzer/FuzzedDataProvider.h>

#include <fourdgs/fourdgs.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "source_check.hpp"

using namespace fourdgs;

namespace {

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "round trip: %s\n", what.c_str());
    std::abort();
}

float in(FuzzedDataProvider& p, float lo, float hi) {
    return p.ConsumeFloatingPointInRange<float>(lo, hi);
}

GaussianColumns random_scene(FuzzedDataProvider& p, double duration, int sh_degree,
                             const std::vector<WindowTable::Window>& windows) {
    GaussianColumns g;
    g.sh_degree = sh_degree;
    const std::size_t n = p.ConsumeIntegralInRange<std::size_t>(0, 96);
    g.resize(n);
    const float extent = std::pow(10.0f, in(p, -3, 4));
    const bool ids = p.ConsumeBool();
    const bool still = p.ConsumeBool();
    for (std::size_t i = 0; i < n; ++i) {
        for (int c = 0; c < 3; ++c) {
            g.position[i * 3 + c] = in(p, -extent, extent);
            g.scale[i * 3 + c] = std::pow(10.0f, in(p, -4, 1));
            g.motion[i * 3 + c] = still ? 0.0f : in(p, -extent, extent) / 10;
        }
        float norm = 0;
        for (int c = 0; c < 4; ++c) {
            g.rotation[i * 4 + c] = in(p, -1, 1);
            norm += g.rotation[i * 4 + c] * g.rotation[i * 4 + c];
        }
        if (norm < 1e-6f) g.rotation[i * 4 + 3] = 1;
        for (int c = 0; c < 4; ++c) g.color[i * 4 + c] = in(p, 0, 1);
        const WindowTable::Window& w =
            windows[p.ConsumeIntegralInRange<std::size_t>(0, windows.size() - 1)];
        g.win_lo[i] = w.lo;
        g.win_hi[i] = w.hi;
        g.mu_t[i] = in(p, 0, static_cast<float>(duration));
        g.sigma_t[i] = p.ConsumeBool() ? std::numeric_limits<float>::infinity()
                                       : std::pow(10.0f, in(p, -2, 1));
    }
    for (float& v : g.sh) v = in(p, -4.5f, 4.5f);
    if (ids) {
        g.object_id.resize(n);
        for (auto& id : g.object_id) id = p.ConsumeIntegralInRange<std::uint32_t>(0, 5);
    }
    // Source ids match each decoded gaussian to the one written.
    g.source_group.assign(n, 0);
    g.source_index.resize(n);
    for (std::size_t i = 0; i < n; ++i) g.source_index[i] = static_cast<std::int32_t>(i);
    return g;
}

WriterOptions random_options(FuzzedDataProvider& p, int sh_degree) {
    WriterOptions o;
    o.threads = 1;
    o.preset = static_cast<Preset>(p.ConsumeIntegralInRange<int>(0, 2));
    const std::uint8_t codecs[] = {codec::deflate, codec::zstd, codec::lz4};
    o.codec = codecs[p.ConsumeIntegralInRange<int>(0, 2)];
    o.level = 1;
    const char* chunk[] = {"", "deflate", "zstd"};
    o.chunk_compression = chunk[p.ConsumeIntegralInRange<int>(0, 2)];
    o.chunk_compression_level = 1;
    if (sh_degree > 0) o.sh_ladder = static_cast<ShLadder>(p.ConsumeIntegralInRange<int>(0, 3));
    o.max_chunk_gaussians = p.ConsumeIntegralInRange<std::uint32_t>(1, 64);
    o.spatial_order = p.ConsumeBool();
    o.write_index = p.ConsumeBool();
    o.write_crc = p.ConsumeBool();
    o.write_statistics = p.ConsumeBool();
    o.write_summary_offset = p.ConsumeBool();
    return o;
}

void check_block(const char* path, const GaussianBlock& d, const GaussianColumns& g,
                 const conformance::Bounds& b) {
    if (d.count != g.count) fail(std::string(path) + ": a different number of gaussians");
    if (d.count && !d.has_source_ids) fail(std::string(path) + ": the source ids were lost");
    for (std::size_t i = 0; i < d.count; ++i) {
        const auto j = static_cast<std::size_t>(d.source_index[i]);
        if (j >= g.count) fail(std::string(path) + ": a source id that was never written");
        const std::string why = conformance::mismatch(d, i, g, j, b, true);
        if (!why.empty()) fail(std::string(path) + ": gaussian " + std::to_string(j) + ": " + why);
    }
}

template <class T, class A, class B>
bool same_bits(const std::vector<T, A>& a, const std::vector<T, B>& b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider p(data, size);
    const double duration = std::pow(10.0, p.ConsumeFloatingPointInRange<double>(-1, 3));
    const int sh_degree = p.ConsumeIntegralInRange<int>(0, 3);
    std::vector<WindowTable::Window> windows;
    const int window_count = p.ConsumeIntegralInRange<int>(1, 4);
    for (int k = 0; k < window_count; ++k) {
        double lo = p.ConsumeFloatingPointInRange<double>(0, duration);
        double hi = p.ConsumeFloatingPointInRange<double>(0, duration);
        if (lo > hi) std::swap(lo, hi);
        if (!(lo < hi)) {
            lo = 0;
            hi = duration;
        }
        windows.push_back({lo, hi});
    }
    SceneInput scene;
    scene.header.duration_sec = duration;
    scene.header.cutoff = p.ConsumeFloatingPointInRange<double>(0.001, 0.5);
    scene.header.sh_degree = sh_degree;
    const WriterOptions options = random_options(p, sh_degree);
    const GaussianColumns g = random_scene(p, duration, sh_degree, windows);
    scene.gaussians = g.batch();

    auto bytes = write_scene(scene, options);
    if (!bytes.ok()) {
        // A position too far from the grid's origin for an i32 bin is the input's, not a bug.
        if (bytes.error().refusal == refusal::kBinOutOfRange) return 0;
        fail("write_scene refused a valid scene: " + bytes.error().describe());
    }

    MemorySource src(*bytes);
    auto streamed = read_streaming(src);
    if (!streamed.ok()) fail("the streaming reader refused it: " + streamed.error().describe());
    if (streamed->truncation) fail("the streaming reader found it cut");
    const conformance::Bounds b =
        conformance::bounds_of(streamed->info.quantization, streamed->info.header.sh_degree);
    check_block("streamed", streamed->gaussians, g, b);

    auto reader = IndexedReader::open(src);
    if (!reader.ok()) fail("the indexed reader refused the file: " + reader.error().describe());
    GaussianBlock indexed;
    std::vector<DecodeWorkspace> pool;
    if (!reader->read_all(indexed, pool, 1).ok()) fail("read_all failed");
    check_block("indexed", indexed, g, b);
    const GaussianBlock& s = streamed->gaussians;
    if (!same_bits(s.position, indexed.position) || !same_bits(s.rotation, indexed.rotation) ||
        !same_bits(s.scale, indexed.scale) || !same_bits(s.color, indexed.color) ||
        !same_bits(s.motion, indexed.motion) || !same_bits(s.mu_t, indexed.mu_t) ||
        !same_bits(s.sigma_t, indexed.sigma_t) || s.sh != indexed.sh ||
        s.object_id != indexed.object_id || s.source_index != indexed.source_index)
        fail("the two read paths decode different values");

    ValidateOptions vo;
    auto report = validate(src, vo);
    if (!report.ok() || !report->valid()) {
        if (report.ok())
            for (const Finding& f : report->findings)
                if (f.severity == Severity::error) std::fprintf(stderr, "%s\n", f.message.c_str());
        fail("the validator finds an error in a file the writer wrote");
    }
    return 0;
}
