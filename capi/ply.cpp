// fourdgs_binding_support.h's PLY: the tools library's 3DGS PLY reader and writer
// (fourdgs/tools/ply.hpp), for the Python package. Linked into libfourdgs-c with the tools
// library; the WebAssembly core does not export it, so its objects stay out of the module.
#include <fourdgs/tools/ply.hpp>

#include "fourdgs_c_internal.hpp"

using namespace fourdgs;
using namespace fourdgs::capi;

struct fourdgs_ply_cloud {
    explicit fourdgs_ply_cloud(const Allocator& a) : alloc(a) {}
    Allocator alloc;
    PlyCloud cloud;
};

namespace fourdgs::capi {
template <> inline constexpr const char* kParameterName<fourdgs_ply_cloud> = "cloud";
template <> inline constexpr const char* kStructName<fourdgs_ply_columns> = "fourdgs_ply_columns";
}  // namespace fourdgs::capi

namespace {

// A parsed cloud into a new handle.
fourdgs_status cloud_out(const fourdgs_allocator* allocator, Result<PlyCloud> parsed,
                         fourdgs_ply_cloud** out) {
    if (!parsed.ok()) return fail(parsed.error());
    fourdgs_ply_cloud* handle = nullptr;
    if (auto s = create_handle(allocator, &handle); s != FOURDGS_OK) return s;
    handle->cloud = std::move(*parsed);
    *out = handle;
    return FOURDGS_OK;
}

fourdgs_ply_columns columns_out(const fourdgs_ply_cloud& h) noexcept {
    const PlyCloud& c = h.cloud;
    fourdgs_ply_columns o{};
    o.count = c.count;
    o.sh_degree = static_cast<uint32_t>(c.sh_degree);
    o.sh_per_gaussian = static_cast<uint32_t>(c.sh_per_gaussian());
    o.position = c.position.data();
    o.normal = c.normal.data();
    o.scale = c.scale.data();
    o.rotation = c.rotation.data();
    o.color = c.color.data();
    o.sh = c.sh.empty() ? nullptr : c.sh.data();
    return o;
}

// The caller's columns as a cloud (copied: the writer takes vectors).
fourdgs_status cloud_in(const fourdgs_ply_columns& in, PlyCloud& c) {
    if (in.sh_degree > 3)
        return invalid(refusal::kInvalidArgument,
                       "sh_degree " + std::to_string(in.sh_degree) + " is over 3");
    c.count = static_cast<std::size_t>(in.count);
    c.sh_degree = static_cast<int>(in.sh_degree);
    const std::size_t n = c.count, k = static_cast<std::size_t>(c.sh_per_gaussian());
    const struct {
        const float* from;
        std::size_t per;
        std::vector<float>& to;
        const char* name;
    } columns[] = {{in.position, 3, c.position, "position"}, {in.normal, 3, c.normal, "normal"},
                   {in.scale, 3, c.scale, "scale"},          {in.rotation, 4, c.rotation, "rotation"},
                   {in.color, 4, c.color, "color"},          {in.sh, k, c.sh, "sh"}};
    for (const auto& col : columns) {
        if (col.from == nullptr) {
            if (col.per * n != 0 && &col.to != &c.normal)
                return invalid(refusal::kNullArgument,
                               std::string("columns->") + col.name + " is NULL with rows");
            continue;  // no normals: the writer writes zeros
        }
        col.to.assign(col.from, col.from + col.per * n);
    }
    return FOURDGS_OK;
}

}  // namespace

fourdgs_status fourdgs_ply_read_memory(const fourdgs_allocator* allocator, const void* data,
                                       size_t size, fourdgs_ply_cloud** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(out);
        *out = nullptr;
        if (!array_ok(data, size)) return null_argument("data");
        const auto* bytes = static_cast<const std::uint8_t*>(data);
        return cloud_out(allocator, read_ply(std::span<const std::uint8_t>(bytes, size)), out);
    });
}

fourdgs_status fourdgs_ply_read_file(const fourdgs_allocator* allocator, const char* path,
                                     size_t path_size, fourdgs_ply_cloud** out) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(out);
        *out = nullptr;
        std::string p;
        if (auto s = text_in(path, path_size, "path", p); s != FOURDGS_OK) return s;
        return cloud_out(allocator, read_ply_file(p), out);
    });
}

fourdgs_status fourdgs_ply_columns_get(const fourdgs_ply_cloud* cloud, fourdgs_ply_columns* out) {
    return get_from(cloud, the_handle, columns_out, out);
}

void fourdgs_ply_free(fourdgs_ply_cloud* cloud) { destroy_handle(cloud); }

fourdgs_status fourdgs_ply_write(const fourdgs_ply_columns* columns, void* buffer,
                                 size_t capacity, size_t* size) {
    return guarded([&] {
        FOURDGS_C_REQUIRE(columns);
        FOURDGS_C_REQUIRE(size);
        fourdgs_ply_columns in{};
        if (auto s = read_in(columns, in); s != FOURDGS_OK) return s;
        PlyCloud cloud;
        if (auto s = cloud_in(in, cloud); s != FOURDGS_OK) return s;
        const Result<std::vector<std::uint8_t>> bytes = write_ply(cloud);
        FOURDGS_C_TRY(bytes);
        *size = bytes->size();
        if (buffer == nullptr) return FOURDGS_OK;
        if (capacity < bytes->size())
            return fail(FOURDGS_BUFFER_TOO_SMALL, refusal::kBufferTooSmall,
                        "the PLY takes " + std::to_string(bytes->size()) + " bytes; capacity is " +
                            std::to_string(capacity));
        std::memcpy(buffer, bytes->data(), bytes->size());
        return FOURDGS_OK;
    });
}
