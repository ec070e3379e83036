// Full decode of one .4dgs file through the indexed reader, for comparing another front-end
// (python/bench/bench_decode.py) with the C++ figure on the same file in the same run.
//   usage: bench_decode_file FILE [repeats] [threads]
// Prints one line per measurement, `name seconds gaussians`: `warm` decodes into the same block
// and workspaces every time (bench_decode's figure), `fresh` into new ones every time (what a
// caller that keeps each result pays: allocation and first touch included).
#include <fourdgs/fourdgs.hpp>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "best_seconds.hpp"

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s FILE [repeats] [threads]\n", argv[0]);
        return 2;
    }
    const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
    const unsigned threads = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 1;
    auto source = fourdgs::FileSource::open(argv[1]);
    if (!source) {
        std::fprintf(stderr, "%s\n", source.error().describe().c_str());
        return 1;
    }
    auto reader = fourdgs::IndexedReader::open(*source);
    if (!reader) {
        std::fprintf(stderr, "%s\n", reader.error().describe().c_str());
        return 1;
    }
    std::vector<fourdgs::DecodeWorkspace> pool;
    fourdgs::GaussianBlock block;
    if (auto st = reader->read_all(block, pool, threads); !st) {  // the file decodes, and warms
        std::fprintf(stderr, "%s\n", st.error().describe().c_str());
        return 1;
    }
    const double warm = best_seconds(repeats, [&] { (void)reader->read_all(block, pool, threads); });
    const double fresh = best_seconds(repeats, [&] {
        std::vector<fourdgs::DecodeWorkspace> p;
        fourdgs::GaussianBlock b;
        (void)reader->read_all(b, p, threads);
    });
    std::printf("warm %.6f %zu\nfresh %.6f %zu\n", warm, block.count, fresh, block.count);
    return 0;
}
