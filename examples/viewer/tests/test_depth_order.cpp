// The viewer's draw order (depth_order.hpp): render_preview's back-to-front order, exactly.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "depth_order.hpp"

using fourdgs::Frame;

namespace {

void push(Frame& f, float x, float y, float z, float opacity = 0.5f) {
    f.center.insert(f.center.end(), {x, y, z});
    f.scale.insert(f.scale.end(), {0.1f, 0.1f, 0.1f});
    f.rotation.insert(f.rotation.end(), {0, 0, 0, 1});
    f.color.insert(f.color.end(), {1, 1, 1, opacity});
    ++f.count;
}

fourdgs::PreviewCamera camera_at(const fourdgs::Vec3& eye, const fourdgs::Vec3& target) {
    fourdgs::CameraView v;
    v.position = eye;
    v.target = target;
    v.fov_y_deg = 50;
    auto cam = fourdgs::preview_camera(v, 64, 48);
    REQUIRE(cam.ok());
    return *cam;
}

// The reference: what render_preview does — every gaussian's f64 view depth, kept when in
// front of the near plane, std::stable_sort farthest first — with the depths compared as f32,
// the keys the viewer sorts (depths within an f32 rounding of each other keep frame order).
std::vector<std::uint32_t> reference_order(const Frame& f, const fourdgs::PreviewCamera& cam,
                                           double near) {
    std::vector<std::uint32_t> idx;
    std::vector<double> depth(f.count);
    for (std::uint32_t i = 0; i < f.count; ++i) {
        const float* c = &f.center[i * 3];
        depth[i] = (c[0] - cam.eye[0]) * cam.forward[0] + (c[1] - cam.eye[1]) * cam.forward[1] +
                   (c[2] - cam.eye[2]) * cam.forward[2];
        if (depth[i] > near && f.color[i * 4 + 3] > 0) idx.push_back(i);
    }
    std::stable_sort(idx.begin(), idx.end(), [&](std::uint32_t a, std::uint32_t b) {
        return static_cast<float>(depth[a]) > static_cast<float>(depth[b]);
    });
    return idx;
}

}  // namespace

TEST_CASE("the draw order is render_preview's: farthest first, equal f32 depths in frame order") {
    std::mt19937 rng(25);
    std::uniform_real_distribution<float> coord(-50, 50);
    Frame f;
    for (int i = 0; i < 20000; ++i) push(f, coord(rng), coord(rng), coord(rng));
    // Exact ties for the camera on the z axis: the same depth at different places in the view.
    for (int i = 0; i < 300; ++i) push(f, coord(rng), coord(rng), 3.0f);
    std::vector<std::uint32_t> order;
    viewer::DepthSortScratch scratch;
    for (const fourdgs::Vec3& eye : {fourdgs::Vec3{0, 0, 80}, fourdgs::Vec3{0.5, -2, 80}}) {
        const auto cam = camera_at(eye, {0, 0, 0});
        const auto expected = reference_order(f, cam, fourdgs::kPreviewNear);
        CHECK(expected.size() > 10000);
        viewer::back_to_front(f, cam, fourdgs::kPreviewNear, order, scratch);
        CHECK(order == expected);
        // Reused buffers give the same answer a second time.
        viewer::back_to_front(f, cam, fourdgs::kPreviewNear, order, scratch);
        CHECK(order == expected);
    }
}

TEST_CASE("gaussians behind the near plane, transparent or not finite are not drawn") {
    Frame f;
    push(f, 0, 0, 0);                                             // 0: drawn, depth 5
    push(f, 0, 0, 5);                                             // 1: at the eye
    push(f, 0, 0, 6);                                             // 2: behind it
    push(f, 0, 0, -1, 0.0f);                                      // 3: transparent
    push(f, std::numeric_limits<float>::quiet_NaN(), 0, -1);      // 4: NaN centre
    push(f, std::numeric_limits<float>::infinity(), 0, -1);       // 5: infinite centre
    push(f, 0, 0, 5 - 0.5f * static_cast<float>(fourdgs::kPreviewNear));  // 6: inside near
    push(f, 1, 1, -2);                                            // 7: drawn, depth 7
    const auto cam = camera_at({0, 0, 5}, {0, 0, 0});
    std::vector<std::uint32_t> order;
    viewer::DepthSortScratch scratch;
    viewer::back_to_front(f, cam, fourdgs::kPreviewNear, order, scratch);
    CHECK(order == std::vector<std::uint32_t>{7, 0});
}

TEST_CASE("an empty frame gives an empty order") {
    Frame f;
    std::vector<std::uint32_t> order{1, 2, 3};
    viewer::DepthSortScratch scratch;
    viewer::back_to_front(f, camera_at({0, 0, 5}, {0, 0, 0}), fourdgs::kPreviewNear, order,
                          scratch);
    CHECK(order.empty());
}
