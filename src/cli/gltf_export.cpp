// glTF 2.0 + KHR_gaussian_splatting through tinygltf (gltf_export.hpp).
#include "gltf_export.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <tiny_gltf.h>

namespace cli {
namespace {

constexpr const char* kPrefix = "KHR_gaussian_splatting:";

// Appends `values` (float32, `count` elements of `type`) to the buffer as a view and an accessor
// of their own; returns the accessor's index.
int add_float_accessor(tinygltf::Model& m, const std::vector<float>& values, int type,
                       std::size_t count) {
    tinygltf::Buffer& buffer = m.buffers.front();
    tinygltf::BufferView view;
    view.buffer = 0;
    view.byteOffset = buffer.data.size();
    view.byteLength = values.size() * sizeof(float);
    view.target = TINYGLTF_TARGET_ARRAY_BUFFER;
    const auto* bytes = reinterpret_cast<const unsigned char*>(values.data());
    buffer.data.insert(buffer.data.end(), bytes, bytes + view.byteLength);
    m.bufferViews.push_back(view);
    tinygltf::Accessor a;
    a.bufferView = static_cast<int>(m.bufferViews.size() - 1);
    a.byteOffset = 0;
    a.componentType = TINYGLTF_COMPONENT_TYPE_FLOAT;
    a.count = count;
    a.type = type;
    m.accessors.push_back(a);
    return static_cast<int>(m.accessors.size() - 1);
}

}  // namespace

std::vector<std::uint8_t> write_glb(const fourdgs::PlyCloud& c) {
    tinygltf::Model m;
    m.asset.version = "2.0";
    m.asset.generator = "fourdgs 4dgs extract";
    m.extensionsUsed = {kGaussianSplattingExtension};
    m.buffers.emplace_back();
    tinygltf::Scene scene;
    const std::size_t n = c.count;
    if (n > 0) {
        tinygltf::Primitive prim;
        prim.mode = TINYGLTF_MODE_POINTS;
        const int pos = add_float_accessor(m, c.position, TINYGLTF_TYPE_VEC3, n);
        for (int k = 0; k < 3; ++k) {
            float lo = std::numeric_limits<float>::max(), hi = -lo;
            for (std::size_t i = 0; i < n; ++i) {
                lo = std::min(lo, c.position[3 * i + k]);
                hi = std::max(hi, c.position[3 * i + k]);
            }
            m.accessors[static_cast<std::size_t>(pos)].minValues.push_back(lo);
            m.accessors[static_cast<std::size_t>(pos)].maxValues.push_back(hi);
        }
        prim.attributes["POSITION"] = pos;

        std::vector<float> color(4 * n), rotation(4 * n), opacity(n), dc(3 * n);
        for (std::size_t i = 0; i < n; ++i) {
            for (int k = 0; k < 3; ++k) {
                const float rgb = c.color[4 * i + k];
                color[4 * i + k] = std::clamp(rgb, 0.0f, 1.0f);
                dc[3 * i + k] = static_cast<float>((rgb - 0.5) / fourdgs::kShC0);
            }
            opacity[i] = color[4 * i + 3] = std::clamp(c.color[4 * i + 3], 0.0f, 1.0f);
            const float* q = &c.rotation[4 * i];
            const double norm = std::sqrt(double(q[0]) * q[0] + double(q[1]) * q[1] +
                                          double(q[2]) * q[2] + double(q[3]) * q[3]);
            for (int k = 0; k < 4; ++k)
                rotation[4 * i + k] =
                    norm > 0 ? static_cast<float>(q[k] / norm) : (k == 3 ? 1.0f : 0.0f);
        }
        prim.attributes["COLOR_0"] = add_float_accessor(m, color, TINYGLTF_TYPE_VEC4, n);
        prim.attributes[std::string(kPrefix) + "SCALE"] =
            add_float_accessor(m, c.scale, TINYGLTF_TYPE_VEC3, n);
        prim.attributes[std::string(kPrefix) + "ROTATION"] =
            add_float_accessor(m, rotation, TINYGLTF_TYPE_VEC4, n);
        prim.attributes[std::string(kPrefix) + "OPACITY"] =
            add_float_accessor(m, opacity, TINYGLTF_TYPE_SCALAR, n);
        prim.attributes[std::string(kPrefix) + "SH_DEGREE_0_COEF_0"] =
            add_float_accessor(m, dc, TINYGLTF_TYPE_VEC3, n);
        // The cloud's SH: per gaussian red's K coefficients, green's, blue's; coefficient j of
        // the K runs degree 1's 3, degree 2's 5, degree 3's 7.
        const std::size_t per = static_cast<std::size_t>(c.sh_per_gaussian()) / 3;
        std::size_t j = 0;
        for (int degree = 1; degree <= c.sh_degree; ++degree)
            for (int coef = 0; coef < 2 * degree + 1; ++coef, ++j) {
                std::vector<float> rgb(3 * n);
                for (std::size_t i = 0; i < n; ++i)
                    for (int ch = 0; ch < 3; ++ch)
                        rgb[3 * i + ch] = c.sh[i * 3 * per + ch * per + j];
                prim.attributes[std::string(kPrefix) + "SH_DEGREE_" + std::to_string(degree) +
                                "_COEF_" + std::to_string(coef)] =
                    add_float_accessor(m, rgb, TINYGLTF_TYPE_VEC3, n);
            }
        tinygltf::Value::Object ext;
        ext["kernel"] = tinygltf::Value(std::string("ellipse"));
        ext["colorSpace"] = tinygltf::Value(std::string("srgb_rec709_display"));
        prim.extensions[kGaussianSplattingExtension] = tinygltf::Value(std::move(ext));
        tinygltf::Mesh mesh;
        mesh.primitives.push_back(std::move(prim));
        m.meshes.push_back(std::move(mesh));
        tinygltf::Node node;
        node.mesh = 0;
        m.nodes.push_back(std::move(node));
        scene.nodes.push_back(0);
    }
    m.scenes.push_back(std::move(scene));
    m.defaultScene = 0;
    if (m.buffers.front().data.empty()) m.buffers.clear();

    std::ostringstream out;
    tinygltf::TinyGLTF writer;
    if (!writer.WriteGltfSceneToStream(&m, out, false, true))
        throw std::runtime_error("tinygltf could not write the glTF");
    const std::string bytes = out.str();
    return std::vector<std::uint8_t>(bytes.begin(), bytes.end());
}

}  // namespace cli
