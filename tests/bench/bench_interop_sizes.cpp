// Bytes at equal bounds against the other implementation's writer, on the files it wrote
// (/work/shared/interop, copied to tests/data): each file's gaussians decoded, then written by our
// writer on the same grid steps (its declared bounds as our bounds, a hair smaller, its SH depths)
// at each effort; our declared bounds (the measured maxima) are checked to be no larger than its. Reported for the whole file and for
// the chunk and SH band records alone (the gaussians' bytes; the files' other records differ).
//   usage: bench_interop_sizes FILE.4dgs...
#include <fourdgs/fourdgs.hpp>
#include <fourdgs/writer.hpp>

#include <charconv>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace fourdgs;

double bound_of(const Quantization& q, const char* key) {
    const std::string* s = q.bound(key);
    double v = 0;
    if (s) std::from_chars(s->data(), s->data() + s->size(), v);
    return v;
}

// The bytes of the chunk and SH band records, from the index.
std::uint64_t chunk_bytes(const std::vector<std::uint8_t>& file) {
    MemorySource src(file);
    auto r = IndexedReader::open(src);
    if (!r) return 0;
    std::uint64_t n = 0;
    for (const ChunkIndex& e : r->scene().index) {
        n += e.chunk_length;
        for (const ChunkIndex::Band& b : e.bands) n += b.length;
    }
    return n;
}

}  // namespace

int main(int argc, char** argv) {
    std::printf("| file | gaussians | theirs: file / chunks | ours default: file / chunks | ours max: "
                "file / chunks | max / theirs (chunks) | our bounds <= theirs |\n|---|---|---|---|---|---|---|\n");
    for (int a = 1; a < argc; ++a) {
        auto bytes = read_file(argv[a]);
        if (!bytes) {
            std::fprintf(stderr, "%s: %s\n", argv[a], bytes.error().describe().c_str());
            return 1;
        }
        MemorySource src(*bytes);
        auto loaded = read_streaming(src);
        if (!loaded) {
            std::fprintf(stderr, "%s: %s\n", argv[a], loaded.error().describe().c_str());
            return 1;
        }
        const SceneInfo& info = loaded->info;
        const GaussianBlock& g = loaded->gaussians;
        const Quantization& q = info.quantization;

        SceneInput in;
        in.header.duration_sec = info.header.duration_sec;
        in.header.cutoff = info.header.cutoff;
        in.header.sh_degree = info.header.sh_degree;
        std::vector<float> sh(g.sh.size());
        for (std::size_t i = 0; i < g.sh.size(); ++i) sh[i] = sh_coefficient(g.sh[i]);
        std::vector<double> lo(g.count), hi(g.count);
        for (std::size_t i = 0; i < g.count; ++i) {
            lo[i] = info.windows[g.window_index[i]].lo;
            hi[i] = info.windows[g.window_index[i]].hi;
        }
        GaussianBatch& b = in.gaussians;
        b.count = g.count;
        b.position = g.position;
        b.scale = g.scale;
        b.rotation = g.rotation;
        b.color = g.color;
        b.motion = g.motion;
        b.mu_t = g.mu_t;
        b.sigma_t = g.sigma_t;
        b.win_lo = lo;
        b.win_hi = hi;
        b.sh_degree = info.header.sh_degree;
        b.sh = sh;
        b.object_id = g.object_id;

        // Its bounds as ours, a hair smaller: its gaussians are its decoded f32 values, and on a
        // grid with another origin our measured errors can pass its bounds in the last digits.
        constexpr double kHair = 1 - 1e-4;
        WriterOptions opt;
        opt.bounds = QuantBounds{kHair * bound_of(q, "pos"),   kHair * bound_of(q, "scale_rel"),
                                 kHair * bound_of(q, "rot"),   kHair * bound_of(q, "rgb"),
                                 kHair * bound_of(q, "alpha"), 0,
                                 kHair * bound_of(q, "time"),  kHair * bound_of(q, "sigma_rel")};
        opt.sh_depths = q.sh_depths;
        std::uint64_t file[2] = {}, chunks[2] = {};
        bool within = true;
        for (int e = 0; e < 2; ++e) {
            opt.effort = e == 0 ? Effort::default_ : Effort::max;
            WriteReport rep;
            auto ours = write_scene(in, opt, &rep);
            if (!ours) {
                std::fprintf(stderr, "%s: %s\n", argv[a], ours.error().describe().c_str());
                return 1;
            }
            file[e] = ours->size();
            chunks[e] = chunk_bytes(*ours);
            for (const auto& [key, value] : rep.quantization.bounds)
                if (const std::string* theirs = q.bound(key); theirs && compare_bounds(value, *theirs) > 0) {
                    within = false;
                    std::fprintf(stderr, "%s: %s ours %s > theirs %s\n", argv[a], key.c_str(),
                                 value.c_str(), theirs->c_str());
                }
        }
        const std::uint64_t their_chunks = chunk_bytes(*bytes);
        std::printf("| %s | %zu | %zu / %llu | %llu / %llu | %llu / %llu | %s | %s |\n", argv[a],
                    g.count, bytes->size(), static_cast<unsigned long long>(their_chunks),
                    static_cast<unsigned long long>(file[0]), static_cast<unsigned long long>(chunks[0]),
                    static_cast<unsigned long long>(file[1]), static_cast<unsigned long long>(chunks[1]),
                    their_chunks ? std::to_string(double(chunks[1]) / double(their_chunks)).c_str()
                                 : "(no index)",
                    within ? "yes" : "NO");
    }
    return 0;
}
