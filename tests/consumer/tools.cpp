// Reads a .4dgs file through the installed tools library: the state at the middle of the scene as
// a 3DGS PLY, in memory.
#include <fourdgs/tools.hpp>

#include <cstdio>

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    auto source = fourdgs::FileSource::open(argv[1]);
    if (!source) return 1;
    auto scene = fourdgs::open_scene(*source);
    if (!scene) return 1;
    const double t = scene->scene().header.duration_sec / 2;
    auto cloud = fourdgs::extract_state(*source, t);
    if (!cloud) {
        std::fprintf(stderr, "%s\n", cloud.error().describe().c_str());
        return 1;
    }
    auto ply = fourdgs::write_ply(*cloud);
    if (!ply) return 1;
    std::printf("%zu gaussians at %g s, a %zu-byte PLY, fourdgs tools %s\n", cloud->count, t,
                ply->size(), fourdgs::kVersionString);
    return cloud->count > 0 ? 0 : 1;
}
