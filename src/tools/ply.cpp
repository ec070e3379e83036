// The 3DGS PLY reader and writer (ply.hpp).
#include "fourdgs/tools/ply.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <string_view>

#include "fourdgs/io.hpp"
#include "fourdgs/quantize.hpp"
#include "path_in_error.hpp"

namespace fourdgs {
namespace {

constexpr std::size_t kMaxHeaderBytes = 1 << 16;

Error ply_error(std::string_view refusal, std::string message, std::uint64_t offset = kNoOffset) {
    return make_error(ErrorKind::malformed, refusal, std::move(message), offset);
}

// Size in bytes of a PLY scalar type name, or 0 for an unknown one.
std::size_t scalar_size(std::string_view type) {
    static constexpr std::array<std::pair<std::string_view, std::size_t>, 16> kTypes = {{
        {"char", 1}, {"uchar", 1}, {"int8", 1}, {"uint8", 1},
        {"short", 2}, {"ushort", 2}, {"int16", 2}, {"uint16", 2},
        {"int", 4}, {"uint", 4}, {"int32", 4}, {"uint32", 4},
        {"float", 4}, {"float32", 4}, {"double", 8}, {"float64", 8},
    }};
    for (const auto& [name, size] : kTypes)
        if (name == type) return size;
    return 0;
}

std::vector<std::string_view> split_words(std::string_view line) {
    std::vector<std::string_view> words;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
        std::size_t j = i;
        while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
        if (j > i) words.push_back(line.substr(i, j - i));
        i = j;
    }
    return words;
}

struct Property {
    std::string name;
    std::size_t offset = 0;  // within one vertex
    std::size_t size = 0;
    bool is_float = false;
};

// Where each splat property lives in a vertex; nullopt-like -1 for absent.
struct Layout {
    std::size_t stride = 0;
    long x[3] = {-1, -1, -1}, n[3] = {-1, -1, -1}, dc[3] = {-1, -1, -1}, scale[3] = {-1, -1, -1},
         rot[4] = {-1, -1, -1, -1}, opacity = -1;
    std::vector<long> rest;
    int sh_degree = -1;  // from the number of f_rest properties
};

// What the header says: the vertex properties, the number of vertices, where the body starts and
// how long one vertex is.
struct PlyHeader {
    std::vector<Property> props;
    std::uint64_t vertex_count = 0;
    std::size_t body = 0, stride = 0;
};

float load_f32(const std::uint8_t* p) {
    float v;
    std::memcpy(&v, p, 4);  // the build targets little-endian hosts, as the rest of the library
    return v;
}

void store_f32(std::vector<std::uint8_t>& out, float v) {
    std::uint8_t b[4];
    std::memcpy(b, &v, 4);
    out.insert(out.end(), b, b + 4);
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

namespace {

// The header: ASCII lines up to and including "end_header\n", every vertex property with its
// place in a vertex.
Result<PlyHeader> parse_ply_header(std::span<const std::uint8_t> bytes) {
    const std::size_t scan = std::min(bytes.size(), kMaxHeaderBytes);
    std::string_view text(reinterpret_cast<const char*>(bytes.data()), scan);
    if (text.substr(0, 4) != "ply\n" && text.substr(0, 5) != "ply\r\n")
        return ply_error(refusal::kPlyNotPly, "the file does not start with the line \"ply\"", 0);
    const std::size_t end_at = text.find("end_header");
    if (end_at == std::string_view::npos)
        return ply_error(refusal::kPlyBadHeader,
                         "no end_header line within the first " + std::to_string(kMaxHeaderBytes) +
                             " bytes");
    std::size_t body = text.find('\n', end_at);
    if (body == std::string_view::npos)
        return ply_error(refusal::kPlyBadHeader, "the end_header line is not terminated", end_at);
    ++body;

    std::vector<Property> props;
    std::optional<std::uint64_t> vertex_count;
    bool in_vertex = false, format_seen = false;
    std::size_t line_start = text.find('\n') + 1, stride = 0;
    while (line_start < end_at) {
        std::size_t line_end = text.find('\n', line_start);
        std::string_view line = text.substr(line_start, line_end - line_start);
        const std::uint64_t at = line_start;
        line_start = line_end + 1;
        auto w = split_words(line);
        if (w.empty() || w[0] == "comment" || w[0] == "obj_info") continue;
        if (w[0] == "format") {
            if (w.size() < 3) return ply_error(refusal::kPlyBadHeader, "malformed format line", at);
            if (w[1] == "ascii")
                return ply_error(refusal::kPlyAsciiFormat,
                                 "ASCII PLY is not read; convert it to binary_little_endian", at);
            if (w[1] == "binary_big_endian")
                return ply_error(refusal::kPlyBigEndian,
                                 "big-endian PLY is not read; convert it to binary_little_endian",
                                 at);
            if (w[1] != "binary_little_endian")
                return ply_error(refusal::kPlyBadHeader,
                                 "unknown PLY format \"" + std::string(w[1]) + "\"", at);
            format_seen = true;
        } else if (w[0] == "element") {
            if (w.size() != 3) return ply_error(refusal::kPlyBadHeader, "malformed element line", at);
            std::uint64_t n = 0;
            auto [p, ec] = std::from_chars(w[2].data(), w[2].data() + w[2].size(), n);
            if (ec != std::errc() || p != w[2].data() + w[2].size())
                return ply_error(refusal::kPlyBadHeader,
                                 "element count \"" + std::string(w[2]) + "\" is not a number", at);
            if (w[1] == "vertex") {
                if (vertex_count)
                    return ply_error(refusal::kPlyBadHeader, "a second vertex element", at);
                vertex_count = n;
                in_vertex = true;
            } else {
                // Another element after the vertices would need parsing to be skipped; one with
                // no rows changes nothing.
                if (n != 0)
                    return ply_error(refusal::kPlyBadHeader,
                                     "element \"" + std::string(w[1]) + "\" with " +
                                         std::to_string(n) + " rows is not a gaussian splat file",
                                     at);
                in_vertex = false;
            }
        } else if (w[0] == "property") {
            if (w.size() >= 2 && w[1] == "list")
                return ply_error(refusal::kPlyBadHeader, "list properties are not splat properties", at);
            if (w.size() != 3) return ply_error(refusal::kPlyBadHeader, "malformed property line", at);
            if (!in_vertex) continue;  // a property of an empty element
            const std::size_t size = scalar_size(w[1]);
            if (size == 0)
                return ply_error(refusal::kPlyBadHeader,
                                 "unknown property type \"" + std::string(w[1]) + "\"", at);
            for (const Property& q : props)
                if (q.name == w[2])
                    return ply_error(refusal::kPlyDuplicateProperty,
                                     "property \"" + std::string(w[2]) + "\" appears twice", at);
            props.push_back({std::string(w[2]), stride, size, w[1] == "float" || w[1] == "float32"});
            stride += size;
        } else {
            return ply_error(refusal::kPlyBadHeader, "unknown header line \"" + std::string(line) + "\"",
                             at);
        }
    }
    if (!format_seen) return ply_error(refusal::kPlyBadHeader, "no format line", 0);
    if (!vertex_count) return ply_error(refusal::kPlyBadHeader, "no vertex element", 0);
    return PlyHeader{std::move(props), *vertex_count, body, stride};
}

// Where each splat property lies in a vertex (x, f_dc, scale, rot and opacity required, float32;
// the normal optional) and the SH degree the f_rest properties make.
Result<Layout> splat_layout(const std::vector<Property>& props, std::size_t stride) {
    Layout L;
    L.stride = stride;
    auto find = [&](std::string_view name) -> Result<long> {
        for (const Property& p : props)
            if (p.name == name) {
                if (!p.is_float || p.size != 4)
                    return ply_error(refusal::kPlyPropertyType,
                                     "property \"" + p.name + "\" is not float32");
                return static_cast<long>(p.offset);
            }
        return -1L;
    };
    auto need = [&](std::string_view name, long& slot) -> Status {
        FOURDGS_ASSIGN(slot, find(name));
        if (slot < 0)
            return ply_error(refusal::kPlyMissingProperty,
                             "required property \"" + std::string(name) + "\" is missing");
        return ok_status();
    };
    static constexpr const char* kXyz[3] = {"x", "y", "z"};
    static constexpr const char* kNormal[3] = {"nx", "ny", "nz"};
    for (int c = 0; c < 3; ++c) {
        FOURDGS_TRY(need(kXyz[c], L.x[c]));
        FOURDGS_TRY(need("f_dc_" + std::to_string(c), L.dc[c]));
        FOURDGS_TRY(need("scale_" + std::to_string(c), L.scale[c]));
        FOURDGS_ASSIGN(L.n[c], find(kNormal[c]));
    }
    for (int c = 0; c < 4; ++c) FOURDGS_TRY(need("rot_" + std::to_string(c), L.rot[c]));
    FOURDGS_TRY(need("opacity", L.opacity));
    std::size_t rest_count = 0;
    for (const Property& p : props)
        if (p.name.rfind("f_rest_", 0) == 0) ++rest_count;
    for (std::size_t k = 0; k < rest_count; ++k) {
        long slot = -1;
        FOURDGS_ASSIGN(slot, find("f_rest_" + std::to_string(k)));
        if (slot < 0)
            return ply_error(refusal::kPlyShCount, "f_rest properties are not numbered 0.." +
                                                 std::to_string(rest_count - 1) + ": f_rest_" +
                                                 std::to_string(k) + " is missing");
        L.rest.push_back(slot);
    }
    int& degree = L.sh_degree;
    for (int d = 0; d <= 3; ++d)
        if (rest_count == static_cast<std::size_t>(3 * sh_coeffs_per_component(d))) degree = d;
    if (degree < 0)
        return ply_error(refusal::kPlyShCount, std::to_string(rest_count) +
                                             " f_rest properties is not 3 x ((D+1)^2 - 1) for a "
                                             "degree D of 0..3 (0, 9, 24 or 45)");
    return L;
}

}  // namespace

namespace {

// Vertices decoded per block: the body is read a block at a time, never whole.
constexpr std::size_t kBlockBytes = 256 * 1024;

// `into` sized for `count` vertices of SH degree `degree`, its storage reused: the vertex loop
// writes every element of every column, so nothing stale survives.
void size_cloud(std::size_t count, int degree, PlyCloud& into) {
    into.count = count;
    into.sh_degree = degree;
    const std::size_t per = static_cast<std::size_t>(sh_coeffs_per_component(degree));
    into.position.resize(count * 3);
    into.normal.resize(count * 3);
    into.scale.resize(count * 3);
    into.rotation.resize(count * 4);
    into.color.resize(count * 4);
    into.sh.resize(count * 3 * per);
}

// Vertices `first`.. (whole vertices of `L.stride` bytes in `block`) into the sized cloud `c`.
void parse_vertices(std::span<const std::uint8_t> block, std::size_t first, const Layout& L,
                    PlyCloud& c) {
    const std::size_t per = static_cast<std::size_t>(sh_coeffs_per_component(c.sh_degree));
    for (std::size_t j = 0; j < block.size() / L.stride; ++j) {
        const std::size_t i = first + j;
        const std::uint8_t* v = block.data() + j * L.stride;
        for (int c3 = 0; c3 < 3; ++c3) {
            c.position[i * 3 + c3] = load_f32(v + L.x[c3]);
            c.normal[i * 3 + c3] = L.n[c3] >= 0 ? load_f32(v + L.n[c3]) : 0.0f;
            c.scale[i * 3 + c3] = static_cast<float>(std::exp(double(load_f32(v + L.scale[c3]))));
            c.color[i * 4 + c3] = static_cast<float>(0.5 + kShC0 * double(load_f32(v + L.dc[c3])));
        }
        c.color[i * 4 + 3] = static_cast<float>(sigmoid(load_f32(v + L.opacity)));
        // rot_0..3 are w x y z; the library's quaternions are x y z w.
        c.rotation[i * 4 + 3] = load_f32(v + L.rot[0]);
        for (int c3 = 0; c3 < 3; ++c3) c.rotation[i * 4 + c3] = load_f32(v + L.rot[c3 + 1]);
        for (std::size_t k = 0; k < L.rest.size(); ++k)
            c.sh[i * 3 * per + k] = load_f32(v + L.rest[k]);
    }
}

// The PLY of `size` bytes into `into`, its storage reused. `fetch(offset, length)` gives the
// `length` bytes at `offset` (all within `size`) as a span valid until the next call: the bytes
// themselves for a buffer, one reused block for a file. Every refusal comes before `into` is
// touched except a failed read of the body.
template <class Fetch>
Status read_ply_from(std::uint64_t size, Fetch&& fetch, PlyCloud& into) {
    std::span<const std::uint8_t> head;
    FOURDGS_ASSIGN(head, fetch(0, std::min<std::uint64_t>(size, kMaxHeaderBytes)));
    FOURDGS_ASSIGN(const PlyHeader header, parse_ply_header(head));
    FOURDGS_ASSIGN(const Layout L, splat_layout(header.props, header.stride));
    const std::size_t body = header.body, stride = header.stride;
    const std::uint64_t have = size - body;
    const std::uint64_t n = header.vertex_count;
    if (stride == 0 || n > have / stride)
        return make_error(ErrorKind::truncated, refusal::kPlyTruncatedBody,
                          "the header declares " + std::to_string(n) + " vertices of " +
                              std::to_string(stride) + " bytes but the body holds " +
                              std::to_string(have) + " bytes",
                          size);
    size_cloud(static_cast<std::size_t>(n), L.sh_degree, into);
    // A vertex is at most a header's worth of properties, so a block of one is bounded too.
    const std::size_t per_block = std::max<std::size_t>(1, kBlockBytes / stride);
    for (std::size_t first = 0; first < into.count; first += per_block) {
        const std::size_t count = std::min(per_block, into.count - first);
        std::span<const std::uint8_t> block;
        FOURDGS_ASSIGN(block, fetch(body + std::uint64_t(first) * stride, count * stride));
        parse_vertices(block, first, L, into);
    }
    return ok_status();
}

}  // namespace

Result<PlyCloud> read_ply(std::span<const std::uint8_t> bytes) {
    auto fetch = [&](std::uint64_t offset,
                     std::uint64_t length) -> Result<std::span<const std::uint8_t>> {
        return bytes.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
    };
    PlyCloud cloud;
    FOURDGS_TRY(read_ply_from(bytes.size(), fetch, cloud));
    return cloud;
}

Status read_ply_file_into(const std::string& path, PlyCloud& into) {
    FOURDGS_ASSIGN(FileSource file, FileSource::open(path));
    std::vector<std::uint8_t> block;  // the header, then one block of vertices at a time
    bool read_failed = false;
    auto fetch = [&](std::uint64_t offset,
                     std::uint64_t length) -> Result<std::span<const std::uint8_t>> {
        block.resize(static_cast<std::size_t>(length));
        Status read = file.read_exact(offset, block);
        if (!read.ok()) {
            read_failed = true;
            return std::move(read).error();
        }
        return std::span<const std::uint8_t>(block);
    };
    Status s = read_ply_from(file.size().value_or(0), fetch, into);
    // A read error names the path already; a refusal of the contents gets it prefixed.
    return read_failed ? s : detail::with_path(std::move(s), path);
}

Result<PlyCloud> read_ply_file(const std::string& path) {
    PlyCloud cloud;
    FOURDGS_TRY(read_ply_file_into(path, cloud));
    return cloud;
}

std::vector<std::string> ply_property_names(int sh_degree) {
    std::vector<std::string> names = {"x", "y", "z", "nx", "ny", "nz", "f_dc_0", "f_dc_1", "f_dc_2"};
    const int rest = 3 * sh_coeffs_per_component(sh_degree);
    for (int k = 0; k < rest; ++k) names.push_back("f_rest_" + std::to_string(k));
    for (const char* s : {"opacity", "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2",
                          "rot_3"})
        names.emplace_back(s);
    return names;
}

Result<std::vector<std::uint8_t>> write_ply(const PlyCloud& cloud) {
    const std::size_t n = cloud.count;
    if (cloud.sh_degree < 0 || cloud.sh_degree > 3)
        return make_error(ErrorKind::invalid_argument, refusal::kInvalidOption,
                          "sh_degree " + std::to_string(cloud.sh_degree) + " is outside 0..3");
    const std::size_t per = static_cast<std::size_t>(cloud.sh_per_gaussian());
    if (cloud.position.size() != n * 3 || cloud.scale.size() != n * 3 ||
        cloud.rotation.size() != n * 4 || cloud.color.size() != n * 4 ||
        cloud.sh.size() != n * per || (!cloud.normal.empty() && cloud.normal.size() != n * 3))
        return make_error(ErrorKind::invalid_argument, refusal::kInputSizeMismatch,
                          "a PlyCloud column does not hold " + std::to_string(n) + " gaussians");
    std::vector<std::uint8_t> out;
    std::string header = "ply\nformat binary_little_endian 1.0\ncomment written by fourdgs\n";
    header += "element vertex " + std::to_string(n) + "\n";
    for (const std::string& name : ply_property_names(cloud.sh_degree))
        header += "property float " + name + "\n";
    header += "end_header\n";
    const auto names = ply_property_names(cloud.sh_degree);
    out.reserve(header.size() + n * names.size() * 4);
    out.insert(out.end(), header.begin(), header.end());
    for (std::size_t i = 0; i < n; ++i) {
        for (int c = 0; c < 3; ++c) store_f32(out, cloud.position[i * 3 + c]);
        for (int c = 0; c < 3; ++c) store_f32(out, cloud.normal.empty() ? 0.0f : cloud.normal[i * 3 + c]);
        for (int c = 0; c < 3; ++c)
            store_f32(out, static_cast<float>((double(cloud.color[i * 4 + c]) - 0.5) / kShC0));
        for (std::size_t k = 0; k < per; ++k) store_f32(out, cloud.sh[i * per + k]);
        const double a = std::clamp(double(cloud.color[i * 4 + 3]), 1e-7, 1.0 - 1e-7);
        store_f32(out, static_cast<float>(std::log(a / (1.0 - a))));
        for (int c = 0; c < 3; ++c)
            store_f32(out, static_cast<float>(std::log(double(cloud.scale[i * 3 + c]))));
        store_f32(out, cloud.rotation[i * 4 + 3]);
        for (int c = 0; c < 3; ++c) store_f32(out, cloud.rotation[i * 4 + c]);
    }
    return out;
}

Status write_ply(const PlyCloud& cloud, ByteSink& sink) {
    FOURDGS_ASSIGN(std::vector<std::uint8_t> bytes, write_ply(cloud));
    FOURDGS_TRY(sink.write(bytes));
    return sink.flush();
}

PlyCloud ply_from_frame(const Frame& frame, int max_sh_degree) {
    PlyCloud cloud;
    const std::size_t n = frame.count;
    cloud.count = n;
    const bool have_sh = frame.sh.size() >= n * 3 * sh_coeffs_per_component(frame.sh_degree);
    cloud.sh_degree = have_sh ? std::clamp(std::min(frame.sh_degree, max_sh_degree), 0, 3) : 0;
    const int src_per = sh_coeffs_per_component(frame.sh_degree);
    const int dst_per = sh_coeffs_per_component(cloud.sh_degree);
    cloud.position.assign(frame.center.begin(), frame.center.begin() + n * 3);
    cloud.normal.assign(n * 3, 0.0f);
    cloud.scale.assign(frame.scale.begin(), frame.scale.begin() + n * 3);
    cloud.rotation.assign(frame.rotation.begin(), frame.rotation.begin() + n * 4);
    cloud.color.assign(frame.color.begin(), frame.color.begin() + n * 4);
    cloud.sh.resize(n * 3 * dst_per);
    // Bands are whole and nested (band b's coefficients follow band b-1's), so the first dst_per
    // coefficients of each component are exactly bands 1..dst degree.
    for (std::size_t i = 0; i < n; ++i)
        for (int c = 0; c < 3; ++c)
            for (int k = 0; k < dst_per; ++k)
                cloud.sh[(i * 3 + c) * dst_per + k] =
                    sh_coefficient(frame.sh[(i * 3 + c) * src_per + k]);
    return cloud;
}

}  // namespace fourdgs
