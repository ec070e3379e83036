// Writes a static splat PLY of a bench scene (tests/support/bench_scenes.hpp): the gaussians'
// positions, scales, rotations, colours and SH as a standard 3DGS PLY, for comparing formats at
// equal errors (tests/bench/bench_vs_spz_sog.py).
//   usage: make_bench_ply OUT.ply [gaussians=100000] [issue14|clustered] [sh_degree=0]
#include <fourdgs/tools/ply.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "support/bench_scenes.hpp"

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: make_bench_ply OUT.ply [gaussians] [issue14|clustered] [sh_degree]\n");
        return 2;
    }
    const std::size_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 100000;
    const std::string scene = argc > 3 ? argv[3] : "issue14";
    const int degree = argc > 4 ? std::atoi(argv[4]) : 0;
    if (degree < 0 || degree > 3 || (scene == "clustered" && degree != 0)) {
        std::fprintf(stderr, "SH degree 0..3 (the clustered scene has SH degree 0)\n");
        return 2;
    }
    const fourdgs::GaussianColumns g = scene == "clustered" ? fourdgs::test::clustered_scene(n)
                                                            : fourdgs::test::issue14_scene(n, degree);
    fourdgs::PlyCloud c;
    c.count = n;
    c.sh_degree = degree;
    c.position = g.position;
    c.scale = g.scale;
    c.rotation = g.rotation;
    c.color = g.color;
    c.sh = g.sh;
    auto bytes = fourdgs::write_ply(c);
    std::FILE* f = bytes ? std::fopen(argv[1], "wb") : nullptr;
    if (!f || std::fwrite(bytes->data(), 1, bytes->size(), f) != bytes->size() || std::fclose(f)) {
        std::fprintf(stderr, "cannot write %s\n", argv[1]);
        return 1;
    }
    std::printf("%s: %zu gaussians, %s scene, SH %d, %zu bytes\n", argv[1], n, scene.c_str(), degree,
                bytes->size());
    return 0;
}
