// A delta's update differences read from their streams' byte planes as they are added
// (DeltaBins::keep_difference_planes, which KeyframeDeltaReader sets) compose and refuse
// exactly as the same differences decoded into columns: every symbol width, runs of adjacent
// rows and rows apart, with and without a sink, and §11.7's refusal naming the same attribute,
// column, gaussian_id and bin.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "fourdgs/detail/keyframe_composition.hpp"
#include "fourdgs/stream.hpp"

using namespace fourdgs;
using fourdgs::detail::ComposedPopulation;
using fourdgs::detail::ComposedRowsSink;
using fourdgs::detail::DeltaBins;

namespace {

constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();

// A keyframe's bins: gaussians with the given ids, every required column, position (v, v, v)
// and scale (v, v, v) for a value v per gaussian.
ChunkBins keyframe_bins(const std::vector<std::uint32_t>& id, const std::vector<std::int32_t>& v) {
    ChunkBins b;
    b.count = static_cast<std::uint32_t>(id.size());
    for (std::uint8_t a = 0; a < attr::kRequiredCount; ++a)
        b.column(a)->assign(std::size_t{b.count} * attr::kChannels[a], 0);
    for (std::size_t i = 0; i < id.size(); ++i)
        for (int c = 0; c < 3; ++c) b.position[i * 3 + c] = b.scale[i * 3 + c] = v[i];
    b.has_gaussian_id = true;
    for (std::uint32_t i : id) b.gaussian_id.push_back(static_cast<std::int32_t>(i));
    return b;
}

// A delta updating the given ids by the given position and scale differences (all three
// components), decoded into columns.
DeltaBins update_bins(const std::vector<std::uint32_t>& id, const std::vector<std::int32_t>& dpos,
                      const std::vector<std::int32_t>& dscale) {
    DeltaBins d;
    d.updates.count = static_cast<std::uint32_t>(id.size());
    for (std::size_t i = 0; i < id.size(); ++i) {
        d.updates.gaussian_id.push_back(static_cast<std::int32_t>(id[i]));
        for (int c = 0; c < 3; ++c) {
            d.updates.position.push_back(dpos[i]);
            d.updates.scale.push_back(dscale[i]);
        }
    }
    d.updates.has_gaussian_id = true;
    d.update_present[attr::gaussian_id] = d.update_present[attr::position] =
        d.update_present[attr::scale] = true;
    return d;
}

// The same delta with its position and scale differences as a raw stream's shuffled byte
// planes of `width` bytes a symbol (§5.6: plane j holds byte j of every zigzagged value), as
// decode_delta_bins keeps them, their columns emptied.
DeltaBins as_planes(DeltaBins d, int width) {
    for (std::uint8_t id : {attr::position, attr::scale}) {
        std::vector<std::int32_t>& column = *d.updates.column(id);
        StreamPlanes& p = d.planes[id];
        const std::size_t n = column.size();
        p.width = static_cast<std::uint8_t>(width);
        p.values = n;
        p.bytes.bytes.assign(n * static_cast<std::size_t>(width), 0);
        for (std::size_t k = 0; k < n; ++k) {
            const std::uint32_t u = zigzag_encode(column[k]);
            for (int j = 0; j < width; ++j)
                p.bytes.bytes[static_cast<std::size_t>(j) * n + k] =
                    static_cast<std::uint8_t>(u >> (8 * j));
        }
        column.clear();
    }
    d.keep_difference_planes = true;
    return d;
}

Error apply_error(const ChunkBins& keyframe, const DeltaBins& delta) {
    ComposedPopulation pop;
    pop.reset(0);
    REQUIRE(pop.assign_keyframe(keyframe, {100, 0, 1, false}).ok());
    const Status st = pop.apply(delta, {200, 1, 2, true});
    REQUIRE(!st.ok());
    return st.error();
}

// The composed position rows a sink is handed, in order.
struct PositionRows final : ComposedRowsSink {
    std::vector<std::int32_t> position;
    std::optional<std::array<bool, attr::kKnownCount>> begin(
        const DeltaBins&, std::span<const std::uint32_t>) override {
        return std::array<bool, attr::kKnownCount>{};
    }
    void take(const ChunkBins& block, std::size_t) override {
        position.insert(position.end(), block.position.begin(),
                        block.position.begin() + std::size_t{block.count} * 3);
    }
};

}  // namespace

TEST_CASE("M116: differences read from byte planes refuse, in runs and apart, what the decoded "
          "columns refuse",
          "[keyframe-delta]") {
    // Ids 0..5 are adjacent rows: row 3 overflows in scale, row 4 in position; row by row, id
    // 3's scale comes first. Apart (even ids), id 6's scale.
    const ChunkBins adjacent = keyframe_bins({0, 1, 2, 3, 4, 5}, {1, 2, 3, kMax, kMax, 6});
    const ChunkBins apart = keyframe_bins({0, 2, 4, 6, 8, 10}, {1, 2, 3, kMax, kMax, 6});
    const DeltaBins in_run =
        update_bins({0, 1, 2, 3, 4, 5}, {1, 1, 1, 0, 1, 1}, {1, 1, 1, 1, 0, 1});
    const DeltaBins scattered =
        update_bins({0, 2, 4, 6, 8, 10}, {1, 1, 1, 0, 1, 1}, {1, 1, 1, 1, 0, 1});
    for (int width : {1, 2, 4}) {
        INFO("symbol width " << width);
        const Error columns = apply_error(adjacent, in_run);
        const Error planes = apply_error(adjacent, as_planes(in_run, width));
        CHECK(planes.refusal == refusal::kComposedBinOutOfRange);
        CHECK(planes.message == columns.message);
        CHECK_THAT(planes.message, Catch::Contains("'scale[0]' of gaussian_id 3 "));
        CHECK_THAT(planes.message, Catch::Contains("gives bin 2147483648"));
        const Error planes_apart = apply_error(apart, as_planes(scattered, width));
        CHECK(planes_apart.message == apply_error(apart, scattered).message);
        CHECK_THAT(planes_apart.message, Catch::Contains("'scale[0]' of gaussian_id 6 "));
    }
    // A difference only four bytes hold, reaching the i32 bounds exactly, fits; one past them
    // is refused naming its column.
    ComposedPopulation pop;
    pop.reset(0);
    REQUIRE(pop.assign_keyframe(keyframe_bins({0, 1, 2, 3}, {-1, 0, 0, 0}), {100, 0, 1, false})
                .ok());
    REQUIRE(pop.apply(as_planes(update_bins({0, 1, 2, 3}, {-kMax, 0, kMax, 0}, {0, -kMax, 0, 0}), 4),
                      {200, 1, 2, true})
                .ok());
    CHECK(pop.slot_bins().position ==
          std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::min(),
                                    std::numeric_limits<std::int32_t>::min(),
                                    std::numeric_limits<std::int32_t>::min(), 0, 0, 0, kMax, kMax,
                                    kMax, 0, 0, 0});
    CHECK(pop.slot_bins().scale ==
          std::vector<std::int32_t>{-1, -1, -1, -kMax, -kMax, -kMax, 0, 0, 0, 0, 0, 0});
    const Error past = apply_error(keyframe_bins({0, 1, 2, 3}, {0, 0, 0, kMax}),
                                   as_planes(update_bins({0, 1, 2, 3}, {0, 0, 0, 1}, {0, 0, 0, 0}), 4));
    CHECK_THAT(past.message, Catch::Contains("'position[0]' of gaussian_id 3 "));
}

TEST_CASE("§11.3: differences read from byte planes compose, in runs and apart, as a "
          "row-at-a-time sum",
          "[keyframe-delta]") {
    // 5,000 gaussians; the update names runs of every length from 1 to 40 rows, with gaps
    // between them, across the 2,048-row blocks a sink receives.
    constexpr std::uint32_t n = 5000;
    std::vector<std::uint32_t> kid(n);
    std::vector<std::int32_t> v(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        kid[i] = i;
        v[i] = static_cast<std::int32_t>(i * 7 % 1000) - 500;
    }
    const ChunkBins kf = keyframe_bins(kid, v);
    std::vector<std::uint32_t> uid;
    std::vector<std::int32_t> dpos, dscale;
    for (std::uint32_t at = 0, len = 1; at < n; at += len + len % 3, len = len % 40 + 1)
        for (std::uint32_t k = at; k < std::min(n, at + len); ++k) {
            uid.push_back(k);
            dpos.push_back(static_cast<std::int32_t>(k % 251) - 125);  // fits a byte zigzagged
            dscale.push_back(static_cast<std::int32_t>(k % 5) + 1);
        }
    const DeltaBins columns = update_bins(uid, dpos, dscale);
    std::vector<std::int32_t> position = kf.position, scale = kf.scale;
    for (std::size_t i = 0; i < uid.size(); ++i)
        for (int c = 0; c < 3; ++c) {
            position[uid[i] * 3 + c] += dpos[i];
            scale[uid[i] * 3 + c] += dscale[i];
        }
    for (int width : {1, 2, 4}) {
        const DeltaBins planes = as_planes(columns, width);
        for (bool sinked : {false, true}) {
            INFO("symbol width " << width << ", composed in blocks for a sink: " << sinked);
            ComposedPopulation pop;
            pop.reset(0);
            REQUIRE(pop.assign_keyframe(kf, {100, 0, 1, false}).ok());
            PositionRows sink;
            REQUIRE(pop.apply(planes, {200, 1, 2, true}, std::uint64_t{1} << 26, nullptr,
                              sinked ? &sink : nullptr)
                        .ok());
            CHECK(pop.slot_bins().position == position);
            CHECK(pop.slot_bins().scale == scale);
            if (!sinked) continue;
            REQUIRE(sink.position.size() == uid.size() * 3);
            for (std::size_t i = 0; i < uid.size(); ++i)
                for (int c = 0; c < 3; ++c)
                    REQUIRE(sink.position[i * 3 + c] == position[uid[i] * 3 + c]);
        }
    }
}
