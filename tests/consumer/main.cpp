// Reads a .4dgs file through the installed library and prints its gaussian count.
#include <fourdgs/fourdgs.hpp>

#include <cstdio>

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    auto source = fourdgs::FileSource::open(argv[1]);
    if (!source) return 1;
    auto loaded = fourdgs::read_streaming(*source);
    if (!loaded) {
        std::fprintf(stderr, "%s\n", loaded.error().describe().c_str());
        return 1;
    }
    std::printf("%zu gaussians, fourdgs %s\n", loaded->gaussians.count, fourdgs::kVersionString);
    return loaded->gaussians.count > 0 ? 0 : 1;
}
