// tests/support/readers.hpp — run bytes through both readers and compare what they return.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/streaming_reader.hpp"

namespace fourdgs::test {

// The whole file through read_streaming over a MemorySource.
inline Result<LoadedScene> stream_read(const std::vector<std::uint8_t>& bytes,
                                       const ReaderOptions& options = {}) {
    MemorySource src(bytes);
    return read_streaming(src, options);
}

// The whole file through IndexedReader::open + read_all; the first error of either.
struct IndexedOutcome {
    std::optional<Error> error;
    SceneInfo info;
    GaussianBlock block;
    bool scanned = false;
};
inline IndexedOutcome indexed_read(const std::vector<std::uint8_t>& bytes,
                                   const ReaderOptions& options = {}, unsigned threads = 1) {
    IndexedOutcome out;
    MemorySource src(bytes);
    auto reader = IndexedReader::open(src, options);
    if (!reader.ok()) {
        out.error = reader.error();
        return out;
    }
    out.info = reader->scene();
    out.scanned = reader->index_built_by_scan();
    std::vector<DecodeWorkspace> pool;
    const Status st = reader->read_all(out.block, pool, threads);
    if (!st.ok()) out.error = st.error();
    return out;
}

// The refusal identifier each reader gives (or "" when it reads the file without one; the
// streaming reader's truncation is reported as "truncated").
inline std::string streaming_refusal(const std::vector<std::uint8_t>& bytes,
                                     const ReaderOptions& options = {}) {
    auto r = stream_read(bytes, options);
    if (!r.ok()) return r.error().refusal;
    if (r->truncation) return r->truncation->refusal;
    return "";
}
inline std::string indexed_refusal(const std::vector<std::uint8_t>& bytes,
                                   const ReaderOptions& options = {}) {
    auto r = indexed_read(bytes, options);
    return r.error ? r.error->refusal : "";
}

// Field-by-field exact equality of two decoded blocks.
inline void require_identical(const GaussianBlock& a, const GaussianBlock& b) {
    REQUIRE(a.count == b.count);
    CHECK(a.position == b.position);
    CHECK(a.scale == b.scale);
    CHECK(a.rotation == b.rotation);
    CHECK(a.color == b.color);
    CHECK(a.motion == b.motion);
    CHECK(a.mu_t == b.mu_t);
    CHECK(a.sigma_t == b.sigma_t);
    CHECK(a.win_lo == b.win_lo);
    CHECK(a.win_hi == b.win_hi);
    CHECK(a.flags == b.flags);
    CHECK(a.window_index == b.window_index);
    CHECK(a.sh_degree == b.sh_degree);
    CHECK(a.sh == b.sh);
    CHECK(a.object_id == b.object_id);
    CHECK(a.has_source_ids == b.has_source_ids);
    CHECK(a.source_group == b.source_group);
    CHECK(a.source_index == b.source_index);
    CHECK(a.gaussian_id == b.gaussian_id);
}

inline std::string data_path(const std::string& name) {
    return std::string(FOURDGS_TEST_DATA) + "/" + name;
}

inline std::vector<std::uint8_t> load_fixture(const std::string& name) {
    auto bytes = read_file(data_path(name));
    if (!bytes.ok()) FAIL(bytes.error().describe());
    return std::move(bytes).value();
}

}  // namespace fourdgs::test
