// The web viewers' splat formats (splat_formats.hpp): .splat in and out, .splatv in, frames.json.
#include "fourdgs/tools/splat_formats.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string_view>

#include "fourdgs/io.hpp"
#include "fourdgs/refusals.hpp"
#include "json_text.hpp"
#include "path_in_error.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace fourdgs {
namespace {

Error format_error(std::string_view refusal, std::string message,
                   std::uint64_t offset = kNoOffset) {
    return make_error(ErrorKind::malformed, refusal, std::move(message), offset);
}

float load_f32(const std::uint8_t* p) {
    float v;
    std::memcpy(&v, p, 4);  // little-endian hosts, as the rest of the library
    return v;
}

std::uint32_t load_u32(const std::uint8_t* p) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// IEEE 754 binary16 to float (what the player's unpackHalf2x16 does), infinities and NaN kept.
float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu, frac = h & 0x3ffu;
    if (exp == 0) {  // zero or subnormal: frac × 2^-24
        const float v = std::ldexp(static_cast<float>(frac), -24);
        return sign ? -v : v;
    }
    const std::uint32_t bits = exp == 31 ? sign | 0x7f800000u | (frac << 13)
                                         : sign | ((exp + 112) << 23) | (frac << 13);
    return std::bit_cast<float>(bits);
}

// The two halves of packHalf2x16(a, b): a in the low 16 bits.
void halves(const std::uint8_t* p, float* out) {
    const std::uint32_t v = load_u32(p);
    out[0] = half_to_float(static_cast<std::uint16_t>(v & 0xffffu));
    out[1] = half_to_float(static_cast<std::uint16_t>(v >> 16));
}

// A .splat of `size` bytes must hold whole splats.
Status check_splat_size(std::uint64_t size) {
    if (size % kSplatBytes == 0) return ok_status();
    return format_error(refusal::kSplatTruncated,
                        std::to_string(size) + " bytes is not a whole number of " +
                            std::to_string(kSplatBytes) + "-byte splats",
                        size - size % kSplatBytes);
}

// `c` sized for `count` splats, its storage reused (what a column held before is overwritten);
// `motion`: its count, positions and rotations alone, the other columns left as they are.
void size_cloud(std::size_t count, PlyCloud& c, bool motion = false) {
    c.count = count;
    c.position.resize(3 * count);
    c.rotation.resize(4 * count);
    if (motion) return;
    c.sh_degree = 0;
    c.normal.assign(3 * count, 0.0f);
    c.scale.resize(3 * count);
    c.color.resize(4 * count);
    c.sh.clear();
}

// The first splat of `bytes` (whole splats, the first of them splat `first`) that is no gaussian:
// a position or scale not finite, a negative scale, or the zero quaternion.
Status check_splats(std::span<const std::uint8_t> bytes, std::size_t first) {
    for (std::size_t j = 0; j < bytes.size() / kSplatBytes; ++j) {
        const std::size_t i = first + j;
        const std::uint8_t* p = bytes.data() + j * kSplatBytes;
        for (int k = 0; k < 3; ++k) {
            const float pos = load_f32(p + 4 * k), s = load_f32(p + 12 + 4 * k);
            if (!std::isfinite(pos) || !std::isfinite(s) || s < 0)
                return format_error(refusal::kSplatBadValue,
                                    "splat " + std::to_string(i) + ": " +
                                        (std::isfinite(pos) ? "scale " + std::to_string(s)
                                                            : "position " + std::to_string(pos)),
                                    i * kSplatBytes);
        }
        if (p[28] == 128 && p[29] == 128 && p[30] == 128 && p[31] == 128)
            return format_error(refusal::kSplatBadValue,
                                "splat " + std::to_string(i) + ": rotation bytes 128 128 128 128 "
                                                               "(a zero quaternion)",
                                i * kSplatBytes + 28);
    }
    return ok_status();
}

// Whether every splat of `bytes` (whole splats) is a gaussian, as check_splats decides it, in a
// loop without a branch: its bits tested, a position or scale not finite where the exponent is
// all ones, a negative scale where the sign is set on a nonzero magnitude (-0 passes `s < 0`).
bool splats_sound(std::span<const std::uint8_t> bytes) {
    std::uint32_t bad = 0;
    for (std::size_t j = 0; j < bytes.size() / kSplatBytes; ++j) {
        const std::uint8_t* p = bytes.data() + j * kSplatBytes;
        for (int k = 0; k < 3; ++k) {
            const std::uint32_t pos = load_u32(p + 4 * k), s = load_u32(p + 12 + 4 * k);
            bad |= static_cast<std::uint32_t>((pos & 0x7f800000u) == 0x7f800000u);
            bad |= static_cast<std::uint32_t>((s & 0x7f800000u) == 0x7f800000u);
            bad |= static_cast<std::uint32_t>(s > 0x80000000u);
        }
        bad |= static_cast<std::uint32_t>(load_u32(p + 28) == 0x80808080u);
    }
    return bad == 0;
}

// Splats `first`.. of `bytes` (whole splats) into the sized cloud `c`: checked first (the first
// splat that is no gaussian looked for only where one is not), then converted in a loop without
// a branch.
// What parse_splats makes of each byte of a splat's colour (b / 255) and rotation ((b - 128) /
// 128): looked up, not divided, at every read (the same floats: each entry is that division).
struct ByteValues {
    std::array<float, 256> colour, rotation;
};
const ByteValues& byte_values() {
    static const ByteValues values = [] {
        ByteValues v;
        for (int b = 0; b < 256; ++b) {
            v.colour[b] = static_cast<float>(b) / 255.0f;
            v.rotation[b] = (static_cast<float>(b) - 128.0f) / 128.0f;
        }
        return v;
    }();
    return values;
}

// Splat j of `bytes` into its rows of the columns (their splat 0 at `first`), by the table;
// `motion`: its position and rotation alone (the other columns may be absent).
struct SplatColumns {
    float* __restrict position;
    float* __restrict scale;
    float* __restrict color;
    float* __restrict rotation;
};
void parse_splat(const std::uint8_t* p, std::size_t j, const ByteValues& values,
                 const SplatColumns& to, bool motion) {
    for (int k = 0; k < 3; ++k) to.position[3 * j + k] = load_f32(p + 4 * k);
    if (!motion) {
        for (int k = 0; k < 3; ++k) to.scale[3 * j + k] = load_f32(p + 12 + 4 * k);
        for (int k = 0; k < 4; ++k) to.color[4 * j + k] = values.colour[p[24 + k]];
    }
    // Bytes w x y z; the cloud holds x y z w.
    to.rotation[4 * j + 3] = values.rotation[p[28]];
    for (int k = 0; k < 3; ++k) to.rotation[4 * j + k] = values.rotation[p[29 + k]];
}

#if defined(__SSE2__)
// Splats 0 .. n - 1 of `bytes` as parse_splat makes them, four lanes at a time, but for the last:
// a splat's three positions (and scales) are stored as four floats, the fourth the next splat's
// first, written again by it. The colour and rotation bytes are divided in the lanes as the table
// divides them one at a time (IEEE division is exact to the same float either way); the
// positions and scales are moved as bits.
void parse_splats_sse2(const std::uint8_t* bytes, std::size_t n, const SplatColumns& to,
                       bool motion) {
    const __m128 by255 = _mm_set1_ps(255.0f), by128 = _mm_set1_ps(128.0f);
    const __m128i zero = _mm_setzero_si128();
    auto lanes = [&](std::uint32_t four) {  // four bytes as four floats
        const __m128i b = _mm_cvtsi32_si128(static_cast<int>(four));
        return _mm_cvtepi32_ps(_mm_unpacklo_epi16(_mm_unpacklo_epi8(b, zero), zero));
    };
    for (std::size_t j = 0; j + 1 < n; ++j) {
        const std::uint8_t* p = bytes + j * kSplatBytes;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(to.position + 3 * j),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        if (!motion) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(to.scale + 3 * j),
                             _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 12)));
            _mm_storeu_ps(to.color + 4 * j, _mm_div_ps(lanes(load_u32(p + 24)), by255));
        }
        const __m128 wxyz = _mm_div_ps(_mm_sub_ps(lanes(load_u32(p + 28)), by128), by128);
        _mm_storeu_ps(to.rotation + 4 * j, _mm_shuffle_ps(wxyz, wxyz, _MM_SHUFFLE(0, 3, 2, 1)));
    }
}
#endif

// `motion`: positions and rotations alone (size_cloud's `motion`).
Status parse_splats(std::span<const std::uint8_t> bytes, std::size_t first, PlyCloud& c,
                    bool motion = false) {
    if (!splats_sound(bytes)) FOURDGS_TRY(check_splats(bytes, first));
    const ByteValues& values = byte_values();
    const std::size_t n = bytes.size() / kSplatBytes;
    const SplatColumns to{c.position.data() + 3 * first,
                          motion ? nullptr : c.scale.data() + 3 * first,
                          motion ? nullptr : c.color.data() + 4 * first,
                          c.rotation.data() + 4 * first};
    std::size_t j = 0;
#if defined(__SSE2__)
    if (n > 1) {
        parse_splats_sse2(bytes.data(), n, to, motion);
        j = n - 1;
    }
#endif
    for (; j < n; ++j) parse_splat(bytes.data() + j * kSplatBytes, j, values, to, motion);
    return ok_status();
}

// The file's splats into `c`, read a block at a time: no copy of the whole file is held;
// `motion`: their positions and rotations alone.
Status read_splat_blocks(const std::string& path, PlyCloud& c, bool motion = false) {
    FOURDGS_ASSIGN(FileSource file, FileSource::open(path));
    const std::uint64_t size = file.size().value_or(0);
    FOURDGS_TRY(detail::with_path(check_splat_size(size), path));
    size_cloud(static_cast<std::size_t>(size / kSplatBytes), c, motion);
    std::array<std::uint8_t, 1024 * kSplatBytes> block;
    for (std::uint64_t at = 0; at < size; at += block.size()) {
        const std::span<std::uint8_t> part(block.data(),
                                           std::min<std::uint64_t>(block.size(), size - at));
        FOURDGS_TRY(file.read_exact(at, part));
        FOURDGS_TRY(detail::with_path(
            parse_splats(part, static_cast<std::size_t>(at / kSplatBytes), c, motion), path));
    }
    return ok_status();
}

}  // namespace

Result<PlyCloud> read_splat(std::span<const std::uint8_t> bytes) {
    FOURDGS_TRY(check_splat_size(bytes.size()));
    PlyCloud c;
    size_cloud(bytes.size() / kSplatBytes, c);
    FOURDGS_TRY(parse_splats(bytes, 0, c));
    return c;
}

Result<PlyCloud> read_splat_file(const std::string& path) {
    PlyCloud c;
    FOURDGS_TRY(read_splat_file_into(path, c));
    return c;
}

Status read_splat_file_into(const std::string& path, PlyCloud& into) {
    return read_splat_blocks(path, into);
}

std::vector<std::uint8_t> write_splat(const PlyCloud& cloud) {
    const std::size_t n = cloud.count;
    // Upstream's key: exp(scale_0 + scale_1 + scale_2) / (1 + exp(-opacity)) = the product of
    // the linear scales × the opacity.
    std::vector<double> key(n);
    for (std::size_t i = 0; i < n; ++i)
        key[i] = double(cloud.scale[3 * i]) * cloud.scale[3 * i + 1] * cloud.scale[3 * i + 2] *
                 cloud.color[4 * i + 3];
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return key[a] > key[b]; });
    // numpy's (v * 255).clip(0, 255).astype(uint8) and (q * 128 + 128).clip(0, 255): truncation.
    auto byte = [](double v) {
        if (!(v > 0)) return std::uint8_t{0};
        return static_cast<std::uint8_t>(std::min(v, 255.0));
    };
    std::vector<std::uint8_t> out(n * kSplatBytes);
    for (std::size_t j = 0; j < n; ++j) {
        const std::size_t i = order[j];
        std::uint8_t* p = out.data() + j * kSplatBytes;
        std::memcpy(p, &cloud.position[3 * i], 12);
        std::memcpy(p + 12, &cloud.scale[3 * i], 12);
        for (int k = 0; k < 4; ++k) p[24 + k] = byte(double(cloud.color[4 * i + k]) * 255.0);
        const float* q = &cloud.rotation[4 * i];  // x y z w
        const double norm = std::sqrt(double(q[0]) * q[0] + double(q[1]) * q[1] +
                                      double(q[2]) * q[2] + double(q[3]) * q[3]);
        const double wxyz[4] = {q[3], q[0], q[1], q[2]};
        for (int k = 0; k < 4; ++k)
            p[28 + k] = byte((norm > 0 ? wxyz[k] / norm : (k == 0 ? 1.0 : 0.0)) * 128.0 + 128.0);
    }
    return out;
}

namespace {

bool is_splat_path(const std::string& path) {
    std::string ext = path.size() >= 6 ? path.substr(path.size() - 6) : std::string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    return ext == ".splat";
}

}  // namespace

Result<PlyCloud> read_frame_file(const std::string& path) {
    if (is_splat_path(path)) return read_splat_file(path);
    return read_ply_file(path);
}

Status read_frame_file_into(const std::string& path, PlyCloud& into) {
    if (is_splat_path(path)) return read_splat_file_into(path, into);
    return read_ply_file_into(path, into);
}

Status read_frame_motion_into(const std::string& path, PlyCloud& into) {
    if (is_splat_path(path)) return read_splat_blocks(path, into, true);
    return read_ply_file_into(path, into);
}

namespace {

constexpr std::size_t kSplatvEntryBytes = 64;  // 16 u32: four RGBA32UI texels

Error header_error(std::string message) {
    return format_error(refusal::kSplatvBadHeader, std::move(message));
}

// A chunk's whole-number member `key`, or a refusal naming it.
Result<std::uint64_t> whole_member(const json_text::Json& chunk, std::string_view key,
                                   std::size_t index) {
    for (const auto& [name, v] : chunk.members)
        if (name == key) {
            if (v.kind != json_text::Json::Kind::number || !v.integral || v.number < 0 ||
                v.number > 9.0e15)
                return header_error("chunk " + std::to_string(index) + ": \"" + std::string(key) +
                                    "\" is not a whole number");
            return static_cast<std::uint64_t>(v.number);
        }
    return header_error("chunk " + std::to_string(index) + " has no \"" + std::string(key) + "\"");
}

// Decodes one 64-byte entry into the scene's columns; false for a non-finite value.
bool decode_entry(const std::uint8_t* p, SplatvScene& s) {
    float v[2];
    for (int k = 0; k < 3; ++k) s.position.push_back(load_f32(p + 4 * k));
    for (int w = 3; w <= 4; ++w) {
        halves(p + 4 * w, v);
        s.rotation.insert(s.rotation.end(), v, v + 2);
    }
    halves(p + 20, v);
    s.scale.insert(s.scale.end(), v, v + 2);
    halves(p + 24, v);
    s.scale.push_back(v[0]);
    for (int k = 0; k < 4; ++k) s.color.push_back(static_cast<float>(p[28 + k]) / 255.0f);
    for (int w = 8; w <= 12; ++w) {
        halves(p + 4 * w, v);
        s.motion.insert(s.motion.end(), v, v + (w == 12 ? 1 : 2));
    }
    for (int w = 13; w <= 14; ++w) {
        halves(p + 4 * w, v);
        s.omega.insert(s.omega.end(), v, v + 2);
    }
    halves(p + 60, v);
    s.trbf.insert(s.trbf.end(), v, v + 2);
    const std::size_t i = s.count;
    auto finite = [](const std::vector<float>& col, std::size_t from) {
        return std::all_of(col.begin() + static_cast<std::ptrdiff_t>(from), col.end(),
                           [](float x) { return std::isfinite(x); });
    };
    return finite(s.position, 3 * i) && finite(s.rotation, 4 * i) && finite(s.scale, 3 * i) &&
           finite(s.motion, 9 * i) && finite(s.omega, 4 * i) && finite(s.trbf, 2 * i);
}

}  // namespace

Result<SplatvScene> read_splatv(std::span<const std::uint8_t> bytes) {
    if (bytes.size() < 8 || load_u32(bytes.data()) != kSplatvMagic)
        return format_error(refusal::kSplatvNotSplatv,
                            bytes.size() < 8 ? "fewer than 8 bytes"
                                             : "magic " + std::to_string(load_u32(bytes.data())) +
                                                   ", not 0x674b",
                            0);
    const std::uint64_t json_length = load_u32(bytes.data() + 4);
    if (json_length > bytes.size() - 8)
        return header_error("the JSON's length " + std::to_string(json_length) +
                            " runs past the file's " + std::to_string(bytes.size()) + " bytes");
    const std::string_view text(reinterpret_cast<const char*>(bytes.data() + 8), json_length);
    FOURDGS_ASSIGN(const json_text::Json doc,
                   json_text::Parser(text, ".splatv header", refusal::kSplatvBadHeader, "splatv")
                       .document());
    if (doc.kind != json_text::Json::Kind::array)
        return header_error("the header is not a JSON array of chunks");
    // Each chunk's bytes follow the JSON in order; they must add up to exactly what is there.
    const std::uint64_t data_bytes = bytes.size() - 8 - json_length;
    std::uint64_t at = 0, splat_at = 0, splat_size = 0;
    bool found = false;
    for (std::size_t c = 0; c < doc.items.size(); ++c) {
        const json_text::Json& chunk = doc.items[c];
        if (chunk.kind != json_text::Json::Kind::object)
            return header_error("chunk " + std::to_string(c) + " is not an object");
        FOURDGS_ASSIGN(const std::uint64_t size, whole_member(chunk, "size", c));
        if (size > data_bytes - at)
            return header_error("chunk " + std::to_string(c) + "'s size " + std::to_string(size) +
                                " runs past the file (" + std::to_string(data_bytes - at) +
                                " bytes left)");
        const auto type = std::find_if(chunk.members.begin(), chunk.members.end(),
                                       [](const auto& m) { return m.first == "type"; });
        if (type == chunk.members.end() || type->second.kind != json_text::Json::Kind::string)
            return header_error("chunk " + std::to_string(c) + " has no \"type\" string");
        if (type->second.text == "splat" && !found) {
            FOURDGS_ASSIGN(const std::uint64_t w, whole_member(chunk, "texwidth", c));
            FOURDGS_ASSIGN(const std::uint64_t h, whole_member(chunk, "texheight", c));
            constexpr std::uint64_t kMaxSide = std::uint64_t{1} << 20;
            if (w > kMaxSide || h > kMaxSide || w * h * 16 != size || size % kSplatvEntryBytes != 0)
                return header_error("the splat chunk's size " + std::to_string(size) +
                                    " is not texwidth " + std::to_string(w) + " x texheight " +
                                    std::to_string(h) + " x 16 in whole 64-byte gaussians");
            found = true;
            splat_at = at;
            splat_size = size;
        }
        at += size;
    }
    if (at != data_bytes)
        return header_error("the chunks hold " + std::to_string(at) + " bytes, but " +
                            std::to_string(data_bytes) + " follow the JSON");
    if (!found) return header_error("no chunk of type \"splat\"");

    const std::uint8_t* data = bytes.data() + 8 + json_length + splat_at;
    const std::size_t entries = static_cast<std::size_t>(splat_size / kSplatvEntryBytes);
    static constexpr std::uint8_t kZero[kSplatvEntryBytes] = {};
    SplatvScene s;
    for (std::size_t i = 0; i < entries; ++i) {
        const std::uint8_t* p = data + i * kSplatvEntryBytes;
        if (std::memcmp(p, kZero, kSplatvEntryBytes) == 0) continue;  // texture padding
        const std::uint64_t offset = 8 + json_length + splat_at + i * kSplatvEntryBytes;
        if (!decode_entry(p, s))
            return format_error(refusal::kSplatvBadValue,
                                "gaussian " + std::to_string(i) + " holds a value not finite",
                                offset);
        if (!(s.trbf[2 * s.count + 1] > 0))
            return format_error(refusal::kSplatvBadValue,
                                "gaussian " + std::to_string(i) + ": trbf_scale " +
                                    std::to_string(s.trbf[2 * s.count + 1]) + " is not > 0",
                                offset + 62);
        ++s.count;
    }
    return s;
}

Result<SplatvScene> read_splatv_file(const std::string& path) {
    FOURDGS_ASSIGN(std::vector<std::uint8_t> bytes, read_file(path));
    return detail::with_path(read_splatv(bytes), path);
}

PlyCloud splatv_state_at(const SplatvScene& s, double tau) {
    PlyCloud c;
    c.count = s.count;
    c.position.resize(3 * s.count);
    c.normal.assign(3 * s.count, 0.0f);
    c.scale = s.scale;
    c.rotation.resize(4 * s.count);
    c.color = s.color;
    for (std::size_t i = 0; i < s.count; ++i) {
        const double dt = tau - s.trbf[2 * i];
        const float* m = &s.motion[9 * i];
        for (int k = 0; k < 3; ++k)
            c.position[3 * i + k] = static_cast<float>(
                s.position[3 * i + k] + m[k] * dt + m[3 + k] * dt * dt + m[6 + k] * dt * dt * dt);
        // rot_0 is w: the cloud holds x y z w.
        for (int k = 0; k < 4; ++k)
            c.rotation[4 * i + (k + 3) % 4] =
                static_cast<float>(s.rotation[4 * i + k] + s.omega[4 * i + k] * dt);
        const double falloff = dt / s.trbf[2 * i + 1];
        c.color[4 * i + 3] = static_cast<float>(s.color[4 * i + 3] * std::exp(-falloff * falloff));
    }
    return c;
}

FrameSource splatv_frames(const SplatvScene& scene, std::uint64_t frames,
                          std::uint64_t file_bytes) {
    FrameSource source;
    source.frames = frames;
    source.read = [&scene, frames](std::uint64_t k) -> Result<PlyCloud> {
        return splatv_state_at(scene, frames < 2 ? 0.0 : double(k) / double(frames - 1));
    };
    source.input_bytes = [file_bytes](std::uint64_t k) -> std::uint64_t {
        return k == 0 ? file_bytes : 0;
    };
    return source;
}

Result<double> read_frames_json(std::string_view text, std::size_t frames, std::string_view name,
                                std::span<const std::string> frame_files) {
    using json_text::Json;
    auto bad = [&](std::string what) {
        return make_error(ErrorKind::invalid_argument, refusal::kBadFramesJson,
                          std::string(name) + ": " + what);
    };
    json_text::Parser parser(text, name, refusal::kBadFramesJson, "frames.json");
    FOURDGS_ASSIGN(const Json doc, parser.document());
    if (doc.kind != Json::Kind::object) return bad("is not a JSON object");
    // The frames' times, from "timestamps" or from the splat4d manifest's "frames" list: one
    // number per frame, evenly spaced since the scene's clock is uniform. Returns the spacing.
    auto spacing_of = [&](const std::vector<double>& times, std::string_view key) -> Result<double> {
        const std::string k(key);
        if (times.size() != frames || frames < 2)
            return bad("\"" + k + "\" does not hold one time per frame (" + std::to_string(frames) +
                       " frames, at least 2)");
        const double step = (times.back() - times.front()) / static_cast<double>(frames - 1);
        if (!(step > 0)) return bad("\"" + k + "\" times do not increase");
        for (std::size_t i = 0; i < frames; ++i) {
            const double want = times.front() + step * static_cast<double>(i);
            if (std::abs(times[i] - want) > 1e-6 * step)
                return bad("timestamp " + std::to_string(i) + " is " + std::to_string(times[i]) +
                           " s, not " + std::to_string(want) +
                           " s: convert's frames are evenly spaced");
        }
        return step;
    };
    std::optional<double> fps, spacing;
    for (const auto& [key, v] : doc.members) {
        if (key == "fps") {
            if (v.kind != Json::Kind::number || !(v.number > 0))
                return bad("\"fps\" is not a number > 0");
            fps = v.number;
        } else if (key == "timestamps") {
            if (v.kind != Json::Kind::array) return bad("\"timestamps\" is not an array");
            std::vector<double> times;
            for (const Json& t : v.items) {
                if (t.kind != Json::Kind::number) return bad("\"timestamps\" holds a non-number");
                times.push_back(t.number);
            }
            FOURDGS_ASSIGN(spacing, spacing_of(times, key));
        } else if (key == "count") {  // splat4d's manifest: the number of frames
            if (v.kind != Json::Kind::number || v.number != static_cast<double>(frames))
                return bad("\"count\" is not " + std::to_string(frames) + ", the frames given");
        } else if (key == "num_splats") {  // splat4d's manifest: each frame's size says it again
            if (v.kind != Json::Kind::number || !v.integral || v.number < 0)
                return bad("\"num_splats\" is not a whole number");
        } else if (key == "frames") {
            // splat4d's manifest: [{"file": NAME, "timestamp": T}, ...] in the frames' order,
            // which must be the order convert takes them in.
            if (v.kind != Json::Kind::array || v.items.size() != frames)
                return bad("\"frames\" is not an array of one entry per frame (" +
                           std::to_string(frames) + " frames)");
            std::vector<double> times;
            for (std::size_t i = 0; i < frames; ++i) {
                const std::string at = "\"frames\"[" + std::to_string(i) + "]";
                if (v.items[i].kind != Json::Kind::object) return bad(at + " is not an object");
                for (const auto& [field, f] : v.items[i].members) {
                    if (field == "timestamp") {
                        if (f.kind != Json::Kind::number) return bad(at + ".timestamp is not a number");
                        times.push_back(f.number);
                    } else if (field == "file") {
                        if (f.kind != Json::Kind::string) return bad(at + ".file is not a string");
                        if (i < frame_files.size() && f.text != frame_files[i])
                            return bad(at + ".file is \"" + f.text + "\" but frame " +
                                       std::to_string(i) + " is \"" + frame_files[i] +
                                       "\" (frames are taken in natural order)");
                    } else {
                        return bad(at + " has an unknown key \"" + field + "\" (file, timestamp)");
                    }
                }
            }
            if (!times.empty()) {
                FOURDGS_ASSIGN(spacing, spacing_of(times, key));
            }
        } else {
            return bad("unknown key \"" + key + "\" (fps, timestamps, count, num_splats, frames)");
        }
    }
    if (!fps && !spacing) return bad("neither \"fps\" nor timestamps");
    if (fps && spacing && std::abs(*fps * *spacing - 1.0) > 1e-6)
        return bad("\"fps\" " + std::to_string(*fps) + " disagrees with the timestamps' " +
                   std::to_string(1.0 / *spacing));
    return fps ? *fps : 1.0 / *spacing;
}

}  // namespace fourdgs
