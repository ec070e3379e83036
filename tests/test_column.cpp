// Column<T> (fourdgs/column.hpp), the vector type of a GaussianBlock column: a std::vector in
// everything a user sees, whose buffers from 2 MiB on start on a 2 MiB boundary so that the
// first decode in a process gets huge pages (issue 28).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fourdgs/column.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/writer.hpp"
#include "support/bench_scenes.hpp"

using namespace fourdgs;

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

// Where the library aligns large columns: Linux, outside AddressSanitizer (which gets exactly
// the bytes asked for, to catch reads past the end).
#if defined(__SANITIZE_ADDRESS__)
#define FOURDGS_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FOURDGS_TEST_UNDER_ASAN 1
#endif
#endif
#if defined(__linux__) && !defined(FOURDGS_TEST_UNDER_ASAN)
constexpr bool kAligned = true;
#else
constexpr bool kAligned = false;
#endif

bool starts_on_huge_page(const void* p) {
    return reinterpret_cast<std::uintptr_t>(p) % kHugePage == 0;
}

}  // namespace

TEST_CASE("column: a Column is a std::vector across the 2 MiB line: contents kept as it grows "
          "and shrinks, new elements value-initialized",
          "[column]") {
    Column<std::uint32_t> c;
    std::vector<std::uint32_t> plain;
    // From the heap to aligned buffers (1.5 M elements = 6 MB) by push_back's growth.
    for (std::uint32_t i = 0; i < 1'500'000; ++i) {
        c.push_back(i * 2654435761u);
        plain.push_back(i * 2654435761u);
    }
    REQUIRE(std::equal(c.begin(), c.end(), plain.begin(), plain.end()));
    // Shrunk, then grown again within its capacity and past it: the new elements read 0.
    c.resize(1000);
    c.resize(700'000);
    CHECK(c[999] == plain[999]);
    CHECK(std::all_of(c.begin() + 1000, c.end(), [](std::uint32_t v) { return v == 0; }));
    c.resize(3'000'000);
    CHECK(std::all_of(c.begin() + 1000, c.end(), [](std::uint32_t v) { return v == 0; }));
    // Copies, moves and shrink_to_fit between the two sizes.
    Column<std::uint32_t> copy = c;
    CHECK(copy == c);
    Column<std::uint32_t> moved = std::move(copy);
    CHECK(moved == c);
    moved.resize(10);
    moved.shrink_to_fit();
    CHECK(moved.size() == 10);
    CHECK(std::equal(moved.begin(), moved.end(), plain.begin()));
}

TEST_CASE("column: a column of 2 MiB or more starts on a 2 MiB boundary, so huge pages can back "
          "all of it, and so do the decoded output's large columns",
          "[column]") {
    if (!kAligned) {
        WARN("columns are not aligned in this build (AddressSanitizer, or not Linux)");
        return;
    }
    Column<float> big(kHugePage / sizeof(float));
    CHECK(starts_on_huge_page(big.data()));
    Column<float> larger(3'000'001);
    CHECK(starts_on_huge_page(larger.data()));

    // 200,000 gaussians: position, scale and motion 2.4 MB, rotation and colour 3.2 MB.
    const GaussianColumns scene = test::issue14_scene(200'000);
    auto bytes = write_scene(test::scene_of(scene, 10.0));
    REQUIRE(bytes.ok());
    MemorySource source(*bytes);
    auto reader = IndexedReader::open(source);
    REQUIRE(reader.ok());
    GaussianBlock out;
    std::vector<DecodeWorkspace> pool;
    REQUIRE(reader->read_all(out, pool, 1).ok());
    REQUIRE(out.count == 200'000);
    for (const Column<float>* column :
         {&out.position, &out.scale, &out.rotation, &out.color, &out.motion})
        CHECK(starts_on_huge_page(column->data()));
}
