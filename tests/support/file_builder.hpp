// tests/support/file_builder.hpp — assembles .4dgs files byte by byte for the reader tests.
//
// Every byte comes from the library's own record writers (records.hpp `write()`) and stream
// encoder (stream.hpp `encode_stream`), so a test states the file it wants as data — bins per
// attribute, streams, SH bands, front-matter records, summary — and can break any one piece:
// patch a stream header, drop or duplicate a stream, append bytes to a record, lie in the index,
// corrupt the CRC. The result lists every record it wrote with its offset, so truncation tests
// know exactly which records a cut leaves whole. Nothing here decodes; it only writes.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "fourdgs/quantize.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/stream.hpp"
#include "fourdgs/wire.hpp"

namespace fourdgs::test {

using ByteVec = std::vector<std::uint8_t>;

inline ByteVec magic_bytes() { return ByteVec(kMagic.begin(), kMagic.end()); }

// The bytes of one framed record written by the library's writer for `r`.
template <class R>
ByteVec record_bytes(const R& r) {
    ByteWriter w;
    write(w, r);
    return w.buffer();
}

// A framed record with arbitrary content (unknown, private and reserved opcodes, or content a
// writer would never produce).
inline ByteVec framed(std::uint8_t opcode, const ByteVec& content) {
    ByteWriter w;
    write_record(w, opcode, content);
    return w.buffer();
}

// `record` (a whole framed record) with `extra` appended to its content and content_length
// patched to match: a record extended the way §4.2 allows.
inline ByteVec with_trailing(ByteVec record, const ByteVec& extra) {
    std::uint64_t len = 0;
    std::memcpy(&len, record.data() + 1, 8);
    len += extra.size();
    std::memcpy(record.data() + 1, &len, 8);
    record.insert(record.end(), extra.begin(), extra.end());
    return record;
}

inline void put_u32(ByteVec& b, std::size_t at, std::uint32_t v) { std::memcpy(b.data() + at, &v, 4); }
inline void put_u64(ByteVec& b, std::size_t at, std::uint64_t v) { std::memcpy(b.data() + at, &v, 8); }

// One bare attribute stream (§5.6 header + payload) through the library's encoder.
inline ByteVec stream_of(std::uint8_t id, std::uint8_t channels, std::span<const std::int32_t> values,
                         const StreamEncodeOptions& opt = {}) {
    ByteWriter w;
    const Status st = encode_stream(w, id, channels, values, opt);
    if (!st.ok()) throw std::runtime_error("encode_stream: " + st.error().describe());
    return w.buffer();
}

// Stream header field positions, for patching (attribute_id, symbol_width, mode, codec,
// channels, element_count, payload_length).
namespace stream_field {
inline constexpr std::size_t attribute_id = 0, symbol_width = 1, mode = 2, codec = 3,
                             channels = 4, element_count = 5, payload_length = 9;
}

// Integer bins of one chunk, as a writer would quantize them: one column per known attribute id
// (element-major, channel-minor), plus SH band bytes (band b at sh[b-1], count × 3 × (2b+1) bytes,
// per gaussian component-major).
struct Bins {
    std::uint32_t count = 0;
    std::array<std::vector<std::int32_t>, attr::kKnownCount> cols{};
    std::array<bool, attr::kKnownCount> present{};
    int sh_bands = 0;
    std::array<ByteVec, 3> sh{};
};

// Plausible random bins for `count` gaussians whose window indices are drawn from `windows`.
// Deterministic for a given seed (with one standard library).
inline Bins random_bins(std::uint32_t count, std::uint32_t seed, std::vector<std::int32_t> windows,
                        int sh_bands = 0, bool object_ids = false, bool source_ids = false) {
    std::mt19937 rng(seed);
    auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    Bins b;
    b.count = count;
    for (std::uint8_t id = 0; id < attr::kRequiredCount; ++id) b.present[id] = true;
    b.present[attr::object_id] = object_ids;
    b.present[attr::source_group] = b.present[attr::source_index] = source_ids;
    for (std::uint8_t id = 0; id < attr::kKnownCount; ++id)
        if (b.present[id]) b.cols[id].resize(std::size_t{count} * attr::kChannels[id]);
    for (std::uint32_t i = 0; i < count; ++i) {
        for (int c = 0; c < 3; ++c) {
            b.cols[attr::position][i * 3 + c] = uni(-3000, 3000);
            b.cols[attr::scale][i * 3 + c] = uni(-600, -150);
            b.cols[attr::rotation][i * 3 + c] = uni(-250, 250);
            b.cols[attr::motion][i * 3 + c] = uni(-60, 60);
        }
        b.cols[attr::rotation_index][i] = uni(0, 3);
        const int g = uni(0, 255);
        b.cols[attr::color][i * 3 + 0] = g;
        b.cols[attr::color][i * 3 + 1] = uni(0, 255) - g;
        b.cols[attr::color][i * 3 + 2] = uni(0, 255) - g;
        b.cols[attr::opacity][i] = uni(0, 255);
        b.cols[attr::mu_t][i] = uni(0, 400);
        b.cols[attr::sigma_t][i] = uni(-150, 50);
        b.cols[attr::flags][i] = uni(0, 3) == 0 ? kFlagNeverFades : 0;
        b.cols[attr::window_index][i] = windows[static_cast<std::size_t>(uni(0, int(windows.size()) - 1))];
        if (object_ids) {
            static constexpr std::uint32_t labels[] = {0, 3, 8, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu};
            b.cols[attr::object_id][i] = static_cast<std::int32_t>(labels[uni(0, 5)]);
        }
        if (source_ids) {
            b.cols[attr::source_group][i] = uni(0, 4);
            b.cols[attr::source_index][i] = static_cast<std::int32_t>(i) * 7;
        }
    }
    b.sh_bands = sh_bands;
    for (int band = 1; band <= sh_bands; ++band) {
        ByteVec& v = b.sh[band - 1];
        v.resize(std::size_t{count} * 3 * sh_band_width(band));
        for (auto& x : v) x = static_cast<std::uint8_t>(uni(0, 255));
    }
    return b;
}

// One SH band (§5.7): the band byte and the bare stream after it (attribute_id 7).
struct BandSpec {
    std::uint8_t band = 1;
    ByteVec stream;
};

// The bare stream of SH band `band` holding `bytes` (count × 3 × (2b+1) coefficient bytes) —
// or any symbols at all, to test out-of-range ones.
inline ByteVec band_stream(int band, std::uint32_t count, std::span<const std::int32_t> symbols,
                           const StreamEncodeOptions& opt = {}) {
    (void)count;
    return stream_of(attr::mu_t /* 7: §5.7's quirk */, static_cast<std::uint8_t>(3 * sh_band_width(band)),
                     symbols, opt);
}
inline ByteVec band_stream(int band, std::uint32_t count, const ByteVec& bytes,
                           const StreamEncodeOptions& opt = {}) {
    std::vector<std::int32_t> symbols(bytes.begin(), bytes.end());
    return band_stream(band, count, std::span<const std::int32_t>(symbols), opt);
}

struct ChunkSpec {
    double t0 = 0, t1 = 1;
    std::uint32_t level = 0;
    std::uint32_t count = 0;
    std::vector<ByteVec> streams;  // bare streams, in block order
    std::vector<BandSpec> bands;   // SH Band Stream records following the Chunk, in order
    std::string compression;       // chunk-level codec string; "" stores the block as is
    std::optional<std::uint64_t> uncompressed_size;  // override the true block size
    ByteVec trailing;              // bytes appended after the Chunk's known fields (§4.2)
};

// A chunk holding `bins` in one stream per present attribute (ids in ascending order) and one SH
// band record per band.
inline ChunkSpec chunk_from_bins(const Bins& b, double t0, double t1,
                                 const StreamEncodeOptions& opt = {}) {
    ChunkSpec c;
    c.t0 = t0;
    c.t1 = t1;
    c.count = b.count;
    for (std::uint8_t id = 0; id < attr::kKnownCount; ++id)
        if (b.present[id]) c.streams.push_back(stream_of(id, attr::kChannels[id], b.cols[id], opt));
    for (int band = 1; band <= b.sh_bands; ++band)
        c.bands.push_back({static_cast<std::uint8_t>(band), band_stream(band, b.count, b.sh[band - 1], opt)});
    return c;
}

// Index of the stream whose attribute_id is `id` in a chunk spec (throws when absent).
inline ByteVec& stream_with_id(ChunkSpec& c, std::uint8_t id) {
    for (ByteVec& s : c.streams)
        if (!s.empty() && s[0] == id) return s;
    throw std::runtime_error("no stream with attribute id " + std::to_string(id));
}

inline Quantization default_quantization() {
    Quantization q;
    q.scheme = std::string(kSchemeUniformV1);
    q.pos_origin = {0.25, -0.5, 1.0};
    q.step_pos = 0.001;
    q.step_scale_log = 0.01;
    q.step_rot = 0.002;
    q.step_rgb = 1.0 / 255.0;
    q.step_alpha = 1.0 / 255.0;
    q.step_motion = 0.001;
    q.step_time = 0.004;
    q.step_sigma_log = 0.02;
    q.step_sh = 1;
    q.bounds = {{"pos", "0.0005"}, {"scale_rel", "0.005"}, {"rot", "0.001"},
                {"rgb", "0.002"},  {"alpha", "0.002"},     {"motion", "0.0005"},
                {"time", "0.002"}, {"sigma_rel", "0.01"},  {"sh", "0"}};
    return q;
}

struct FileSpec {
    Header header;
    Quantization quantization = default_quantization();
    std::optional<WindowTable> windows;
    ByteVec before_header;        // raw records between the magic and the Header
    bool write_header = true, write_quantization = true;
    std::vector<ByteVec> front;   // raw framed records after the Window Table
    std::vector<ChunkSpec> chunks;
    std::vector<ByteVec> after_chunks;  // raw framed records between the last chunk and the summary
    bool index = true, statistics = true, summary_offset = true, crc = true;
    std::function<void(std::vector<ChunkIndex>&)> edit_index;  // lie in the index
    std::optional<std::uint32_t> crc_override;
    std::optional<std::uint64_t> summary_start_override;
};

struct BuiltRecord {
    std::uint8_t opcode = 0;
    std::uint64_t offset = 0, length = 0;  // whole record
    int chunk = -1;  // the chunk a Chunk or SH band record belongs to
    int band = 0;    // SH band number for band records
    std::uint64_t end() const { return offset + length; }
};

struct BuiltFile {
    ByteVec bytes;
    std::vector<BuiltRecord> records;  // every record in file order (magic excluded)
    std::vector<ChunkIndex> index;     // what the summary says (after edit_index)
    std::vector<std::uint32_t> chunk_counts;
    std::uint64_t summary_start = 0, footer_offset = 0;
};

inline BuiltFile build(const FileSpec& spec) {
    BuiltFile out;
    ByteWriter w;
    w.raw(Bytes(kMagic.data(), kMagic.size()));
    auto note = [&](std::uint8_t opcode, std::size_t at, int chunk = -1, int band = 0) {
        out.records.push_back({opcode, at, w.size() - at, chunk, band});
    };
    auto raw_records = [&](const ByteVec& bytes) {
        // Log each framed record of a raw run.
        std::size_t p = 0;
        while (p + kRecordHeaderSize <= bytes.size()) {
            std::uint64_t len = 0;
            std::memcpy(&len, bytes.data() + p + 1, 8);
            const std::size_t at = w.size();
            const std::size_t n = static_cast<std::size_t>(
                std::min<std::uint64_t>(kRecordHeaderSize + len, bytes.size() - p));
            w.raw(Bytes(bytes.data() + p, n));
            note(bytes[p], at);
            p += n;
        }
        if (p < bytes.size()) w.raw(Bytes(bytes.data() + p, bytes.size() - p));
    };
    raw_records(spec.before_header);
    if (spec.write_header) {
        const std::size_t at = w.size();
        write(w, spec.header);
        note(op::header, at);
    }
    if (spec.write_quantization) {
        const std::size_t at = w.size();
        write(w, spec.quantization);
        note(op::quantization, at);
    }
    if (spec.windows) {
        const std::size_t at = w.size();
        write(w, *spec.windows);
        note(op::window_table, at);
    }
    for (const ByteVec& r : spec.front) raw_records(r);

    std::vector<ChunkIndex> index;
    for (std::size_t k = 0; k < spec.chunks.size(); ++k) {
        const ChunkSpec& c = spec.chunks[k];
        ByteVec block;
        for (const ByteVec& s : c.streams) block.insert(block.end(), s.begin(), s.end());
        ByteVec stored = block;
        if (c.compression == "deflate" || c.compression == "zstd") {
            const std::uint8_t codec = c.compression == "deflate" ? codec::deflate : codec::zstd;
            const Status st = compress(codec, 6, block, stored);
            if (!st.ok()) throw std::runtime_error(st.error().describe());
        }
        const ChunkRecord rec{.t0 = c.t0,
                              .t1 = c.t1,
                              .level = c.level,
                              .count = c.count,
                              .compression = c.compression,
                              .uncompressed_size = c.uncompressed_size.value_or(block.size()),
                              .records = stored};
        ByteWriter cw;
        write(cw, rec);
        ByteVec chunk_bytes = cw.buffer();
        if (!c.trailing.empty()) chunk_bytes = with_trailing(std::move(chunk_bytes), c.trailing);
        ChunkIndex e;
        e.t0 = c.t0;
        e.t1 = c.t1;
        e.chunk_offset = w.size();
        e.chunk_length = chunk_bytes.size();
        e.gaussian_count = c.count;
        const std::size_t at = w.size();
        w.raw(chunk_bytes);
        note(op::chunk, at, static_cast<int>(k));
        for (const BandSpec& b : c.bands) {
            ShBandRecord sb;
            sb.band = b.band;
            sb.stream = b.stream;
            const std::size_t bat = w.size();
            write(w, sb);
            note(op::sh_band, bat, static_cast<int>(k), b.band);
            e.bands.push_back({b.band, bat, w.size() - bat});
        }
        index.push_back(std::move(e));
        out.chunk_counts.push_back(c.count);
    }
    if (spec.edit_index) spec.edit_index(index);
    for (const ByteVec& r : spec.after_chunks) raw_records(r);

    Footer footer;
    if (spec.index) {
        const std::size_t summary_start = w.size();
        for (const ChunkIndex& e : index) {
            const std::size_t at = w.size();
            write(w, e);
            note(op::chunk_index, at);
        }
        const std::size_t index_length = w.size() - summary_start;
        if (spec.statistics) {
            Statistics s;
            for (std::uint32_t n : out.chunk_counts) s.gaussian_count += n;
            s.chunk_count = static_cast<std::uint32_t>(spec.chunks.size());
            s.duration_sec = spec.header.duration_sec;
            s.aabb = spec.header.aabb;
            const std::size_t at = w.size();
            write(w, s);
            note(op::statistics, at);
        }
        if (spec.summary_offset) {
            const std::size_t at = w.size();
            footer.summary_offset_start = at;
            write(w, SummaryOffset{op::chunk_index, summary_start, index_length});
            note(op::summary_offset, at);
        }
        footer.summary_start = summary_start;
        if (spec.crc)
            footer.summary_crc = crc32(Bytes(w.buffer().data() + summary_start, w.size() - summary_start));
        out.summary_start = summary_start;
    }
    if (spec.crc_override) footer.summary_crc = *spec.crc_override;
    if (spec.summary_start_override) footer.summary_start = *spec.summary_start_override;
    out.footer_offset = w.size();
    {
        const std::size_t at = w.size();
        write(w, footer);
        note(op::footer, at);
    }
    w.raw(Bytes(kMagic.data(), kMagic.size()));
    out.bytes = std::move(w.buffer());
    out.index = std::move(index);
    return out;
}

// A Header for a gaussian-birth file of `gaussians` gaussians at SH degree `sh_degree`.
inline Header default_header(std::uint64_t gaussians, int sh_degree, double duration) {
    Header h;
    h.profile = "";
    h.library = "fourdgs tests/support/file_builder.hpp";
    h.duration_sec = duration;
    h.gaussian_count = gaussians;
    h.cutoff = 0.05;
    h.temporal_model = "gaussian-birth";
    h.aabb = {-3.5, -3.5, -2.5, 3.5, 3.5, 4.5};
    h.sh_degree = static_cast<std::uint8_t>(sh_degree);
    h.flags = 0;
    h.attributes = {{"title", "built in code"}};
    return h;
}

// A valid file of `chunks` chunks of `per_chunk` gaussians each (chunk k covers [k, k+1) and its
// gaussians use window k), SH degree `sh_degree`, everything through the library's writers. The
// bins of chunk k are random_bins(per_chunk, seed + k, {k}, sh_degree, object_ids).
struct BuiltScene {
    FileSpec spec;
    std::vector<Bins> bins;
};

inline BuiltScene default_scene(int chunks, std::uint32_t per_chunk, int sh_degree,
                                std::uint32_t seed = 1, bool object_ids = false,
                                const StreamEncodeOptions& opt = {}) {
    BuiltScene s;
    s.spec.header = default_header(std::uint64_t(chunks) * per_chunk, sh_degree, double(chunks));
    WindowTable t;
    for (int k = 0; k < chunks; ++k) t.windows.push_back({double(k), double(k + 1)});
    s.spec.windows = t;
    for (int k = 0; k < chunks; ++k) {
        s.bins.push_back(random_bins(per_chunk, seed + std::uint32_t(k), {k}, sh_degree, object_ids));
        s.spec.chunks.push_back(chunk_from_bins(s.bins.back(), double(k), double(k + 1), opt));
    }
    return s;
}

}  // namespace fourdgs::test
