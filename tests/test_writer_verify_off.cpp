// WriterOptions::verify false (fourdgs/writer_types.hpp): a file counted and never kept is not
// decoded back, and its bytes are those of the verified file — on a fixed grid and in the
// streaming writer; write_scene without a fixed grid needs the check to measure its bounds and
// refuses it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "fourdgs/writer.hpp"

using namespace fourdgs;

namespace {

// `n` never-fading gaussians in one window [0, 2).
GaussianColumns columns(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0, 1);
    GaussianColumns c;
    c.count = n;
    for (std::size_t i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) {
            c.position.push_back(3 * u(rng) - 1.5f);
            c.scale.push_back(0.01f + 0.1f * u(rng));
        }
        c.rotation.insert(c.rotation.end(), {u(rng) - 0.5f, u(rng) - 0.5f, u(rng) - 0.5f, 1.0f});
        c.color.insert(c.color.end(), {u(rng), u(rng), u(rng), u(rng)});
        c.mu_t.push_back(1.0f);
        c.sigma_t.push_back(std::numeric_limits<float>::infinity());
        c.win_lo.push_back(0);
        c.win_hi.push_back(2);
    }
    return c;
}

Result<std::vector<std::uint8_t>> streamed(const GaussianColumns& cols, const WriterOptions& o) {
    MemorySink sink;
    SceneHeader header;
    header.duration_sec = 2;
    StreamDeclaration decl;
    decl.gaussian_count = cols.count;
    for (int c = 0; c < 3; ++c) {  // the positions' own extent, as the Header must declare it
        decl.aabb[c] = decl.aabb[3 + c] = cols.position[c];
        for (std::size_t i = 0; i < cols.count; ++i) {
            decl.aabb[c] = std::min<double>(decl.aabb[c], cols.position[i * 3 + c]);
            decl.aabb[3 + c] = std::max<double>(decl.aabb[3 + c], cols.position[i * 3 + c]);
        }
    }
    decl.windows = {{0, 2}};
    FOURDGS_ASSIGN(StreamingWriter w, StreamingWriter::create(sink, header, decl, o));
    GaussianBatch batch = cols.batch();
    batch.win_lo = {};  // add_window names the window
    batch.win_hi = {};
    FOURDGS_TRY(w.add_window(0, batch));
    FOURDGS_TRY(w.finish());
    return sink.take();
}

}  // namespace

TEST_CASE("writer: verify false writes the verified file's bytes on a fixed grid and streamed",
          "[writer]") {
    const GaussianColumns cols = columns(500, 3);
    SceneInput in;
    in.header.duration_sec = 2;
    in.gaussians = cols.batch();
    auto grid = grid_for_tolerance({1e-3, 0.01, 0.004, 1.0 / 255, 1.0 / 255, 0, 0.002, 0.01},
                                   {-2, -2, -2, 2, 2, 2}, 2);
    REQUIRE(grid.ok());
    WriterOptions o;
    o.grid = *grid;
    o.max_chunk_gaussians = 128;  // several chunks
    auto checked = write_scene(in, o);
    o.verify = false;
    auto counted = write_scene(in, o);
    REQUIRE(checked.ok());
    REQUIRE(counted.ok());
    CHECK(*checked == *counted);

    WriterOptions s;
    s.max_chunk_gaussians = 128;
    auto streamed_checked = streamed(cols, s);
    s.verify = false;
    auto streamed_counted = streamed(cols, s);
    if (!streamed_checked.ok()) FAIL(streamed_checked.error().describe());
    REQUIRE(streamed_counted.ok());
    CHECK(*streamed_checked == *streamed_counted);
}

TEST_CASE("writer: verify false without a fixed grid is refused, since the bounds are measured",
          "[writer]") {
    const GaussianColumns cols = columns(50, 4);
    SceneInput in;
    in.header.duration_sec = 2;
    in.gaussians = cols.batch();
    WriterOptions o;
    o.verify = false;
    auto bytes = write_scene(in, o);
    REQUIRE_FALSE(bytes.ok());
    CHECK(bytes.error().refusal == refusal::kInvalidOption);
    CHECK(bytes.error().message.find("verify") != std::string::npos);
}
