// Joining slices of one scene (merge.hpp): read each part's summary and front matter, check that
// the parts are one scene on one grid, then copy records — rewriting only window indices that
// moved and the offsets a Delta Chunk names — and write the merged summary.
#include "fourdgs/tools/merge.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <utility>

#include "fourdgs/decode.hpp"
#include "fourdgs/file_assembler.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/stream.hpp"
#include "fourdgs/validate.hpp"
#include "fourdgs/writer.hpp"

namespace fourdgs {
namespace {

constexpr std::string_view kShardMetadata = "4dgs-shard";
constexpr std::string_view kKeyframeMetadata = "keyframe-delta";
// A record's key (its name) is read up to this many bytes; longer names still match by content.
constexpr std::uint64_t kMaxKeyBytes = 4096;
// Metadata records are parsed whole (the shard's slice, the keyframe writer's advisory).
constexpr std::uint64_t kMaxMetadataBytes = 1 << 20;
// A Chunk record's fixed fields and its compression string, read before the rest.
constexpr std::uint64_t kChunkPrefixBytes = 8 + 8 + 4 + 4 + 4;
// Where a Delta Chunk's reference_offset sits in its content (§5.18): t0, t1, level, delta_mode.
constexpr std::uint64_t kDeltaReferenceAt = 8 + 8 + 4 + 1;
// ... and the whole fixed head up to the compression string's length.
constexpr std::uint64_t kDeltaPrefixBytes = kDeltaReferenceAt + 8 + 8 + 2 + 4 + 4 + 4 + 4;

std::string num(double v) { return detail::fmt(v); }

Error bad_option(std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal::kInvalidOption, std::move(message));
}

// One record of a part that is neither front (Header, Quantization, Window Table), chunk, band,
// summary nor Footer: the base part's are copied, the others compared with them.
struct Extra {
    enum class Role : std::uint8_t { copy, shard, keyframe_advisory };
    std::uint8_t opcode = 0;
    std::string key;  // names the record in messages and matches it across parts
    std::uint64_t offset = 0, length = 0;  // the whole record
    Role role = Role::copy;
};

struct Part {
    ByteSource* source = nullptr;
    std::string name;
    std::uint64_t size = 0;
    Header header;
    Quantization quantization;
    std::vector<WindowTable::Window> windows;
    std::vector<ChunkIndex> index;  // in file order
    std::vector<Extra> extras;
    std::optional<Metadata> keyframe_advisory;
    double t0 = 0, t1 = 0;  // the slice
    bool declared_slice = false;
    std::vector<std::uint32_t> window_map;  // local window index → merged
    bool windows_move = false;
    std::vector<bool> keep;  // per index entry
};

Error invalid_part(const Part& p, const Error& e) {
    if (e.kind == ErrorKind::io) return e;
    const ErrorKind kind = e.kind == ErrorKind::invalid_argument || e.kind == ErrorKind::limit
                               ? ErrorKind::malformed
                               : e.kind;
    return make_error(kind, refusal::kInvalidPart,
                      p.name + " is not a valid .4dgs part: " + e.refusal + ": " + e.message,
                      e.offset)
        .about(p.name, e.refusal);
}

Error part_problem(const Part& p, std::string_view refusal, std::string message,
                   std::uint64_t offset) {
    return invalid_part(p, make_error(ErrorKind::malformed, refusal, std::move(message), offset));
}

// ---- reading ----------------------------------------------------------------------------------

// Appends [offset, offset + length) of the part to `out`; the range is checked against the part.
Status append_range(const Part& p, std::uint64_t offset, std::uint64_t length,
                    std::vector<std::uint8_t>& out) {
    if (offset > p.size || length > p.size - offset)
        return part_problem(p, refusal::kIndexOutOfRange,
                            "range [" + std::to_string(offset) + ", +" + std::to_string(length) +
                                ") lies outside the " + std::to_string(p.size) + "-byte file",
                            offset);
    const std::size_t at = out.size();
    out.resize(at + static_cast<std::size_t>(length));
    return p.source->read_exact(offset,
                                std::span(out.data() + at, static_cast<std::size_t>(length)));
}

Result<std::vector<std::uint8_t>> read_range_of(const Part& p, std::uint64_t offset,
                                                std::uint64_t length) {
    std::vector<std::uint8_t> out;
    FOURDGS_TRY(append_range(p, offset, length, out));
    return out;
}

// Makes room for `need` bytes in `buf`, keeping its (small) contents, without the doubling growth
// of a vector, which would hold up to twice the largest chunk for the rest of the merge.
void reserve_exact(std::vector<std::uint8_t>& buf, std::uint64_t need) {
    if (buf.capacity() >= need) return;
    const std::vector<std::uint8_t> keep(buf.begin(), buf.end());
    std::vector<std::uint8_t>().swap(buf);
    buf.reserve(static_cast<std::size_t>(need));
    buf.assign(keep.begin(), keep.end());
}

std::uint64_t le64(const std::uint8_t* b) {
    std::uint64_t v = 0;
    std::memcpy(&v, b, 8);
    return v;
}
std::uint32_t le32(const std::uint8_t* b) {
    std::uint32_t v = 0;
    std::memcpy(&v, b, 4);
    return v;
}
void put64(std::uint8_t* b, std::uint64_t v) { std::memcpy(b, &v, 8); }

// The key of an extra record: its kind and, where records of the kind are told apart, its name or
// id ("Metadata 'title'", "Object Track 7", "Camera").
Result<std::string> extra_key(const Part& p, std::uint8_t opcode, std::uint64_t offset,
                              std::uint64_t content_length) {
    const std::uint64_t content = offset + kRecordHeaderSize;
    auto name = [&]() -> Result<std::string> {
        if (content_length < 4)
            return part_problem(p, refusal::kRecordTooShort,
                                opcode_name(opcode) + " record without its name", offset);
        FOURDGS_ASSIGN(auto len_bytes, read_range_of(p, content, 4));
        const std::uint64_t len = le32(len_bytes.data());
        if (len > content_length - 4)
            return part_problem(p, refusal::kRecordTooShort,
                                opcode_name(opcode) + " record whose name runs past it", offset);
        FOURDGS_ASSIGN(auto text, read_range_of(p, content + 4, std::min(len, kMaxKeyBytes)));
        std::string s(text.begin(), text.end());
        if (len > kMaxKeyBytes) s += "...(" + std::to_string(len) + " bytes)";
        return opcode_name(opcode) + " '" + s + "'";
    };
    auto id = [&]() -> Result<std::string> {
        if (content_length < 4)
            return part_problem(p, refusal::kRecordTooShort,
                                opcode_name(opcode) + " record without its id", offset);
        FOURDGS_ASSIGN(auto b, read_range_of(p, content, 4));
        return opcode_name(opcode) + " " + std::to_string(le32(b.data()));
    };
    switch (opcode) {
        case op::metadata:
        case op::attachment:
        case op::coordinate_frame:
        case op::sensor_calibration:
        case op::rig_trajectory:
        case op::geodetic_anchor: return name();
        case op::audio_source:
        case op::audio_data:
        case op::object_track: return id();
        default: return opcode_name(opcode);
    }
}

Result<Metadata> read_metadata(const Part& p, const Extra& e) {
    if (e.length > kMaxMetadataBytes)
        return part_problem(
            p, refusal::kLimitExceeded,
            e.key + " is " + std::to_string(e.length) + " bytes; at most 1 MiB is read", e.offset);
    FOURDGS_ASSIGN(const auto bytes, read_range_of(p, e.offset, e.length));
    auto rv = parse_record(bytes, e.offset);
    if (!rv.ok()) return invalid_part(p, rv.error());
    auto m = parse_metadata(*rv);
    if (!m.ok()) return invalid_part(p, m.error());
    return std::move(*m);
}

Result<double> shard_time(const Part& p, const Metadata& m, std::string_view key,
                          std::uint64_t at) {
    for (const auto& [k, v] : m.entries)
        if (k == key) {
            double t = 0;
            const auto res = std::from_chars(v.data(), v.data() + v.size(), t);
            if (res.ec == std::errc() && res.ptr == v.data() + v.size() && std::isfinite(t))
                return t;
        }
    return part_problem(p, refusal::kInvalidPart,
                        "its 4dgs-shard Metadata has no number '" + std::string(key) + "'", at);
}

// Every record of the part, by its 9-byte header: the extras, and the shard's slice.
Status walk_records(Part& p) {
    std::uint64_t at = kMagicSize;
    const std::uint64_t end = p.size - kMagicSize;
    std::map<std::string, int> seen;
    std::array<std::uint8_t, kRecordHeaderSize> head{};
    while (at < end) {
        if (end - at < kRecordHeaderSize)
            return part_problem(p, refusal::kTruncated, "a record header is cut off", at);
        if (auto st = p.source->read_exact(at, head); !st.ok()) return invalid_part(p, st.error());
        const std::uint8_t opcode = head[0];
        const std::uint64_t length = le64(head.data() + 1);
        if (length > end - at - kRecordHeaderSize)
            return part_problem(p, refusal::kTruncated,
                                opcode_name(opcode) + " record declares " + std::to_string(length) +
                                    " bytes, past the end of the file",
                                at);
        if (opcode == op::footer) break;
        switch (opcode) {
            case op::header:
            case op::quantization:
            case op::window_table:
            case op::chunk:
            case op::delta_chunk:
            case op::sh_band:
            case op::chunk_index:
            case op::statistics:
            case op::summary_offset:
            case op::attachment_index: break;  // reserved, no body: nothing to carry over
            default: {
                Extra e;
                e.opcode = opcode;
                e.offset = at;
                e.length = kRecordHeaderSize + length;
                FOURDGS_ASSIGN(e.key, extra_key(p, opcode, at, length));
                if (const int n = seen[e.key]++; n > 0)
                    e.key += " (#" + std::to_string(n + 1) + ")";
                if (opcode == op::metadata) {
                    if (e.key == "Metadata '" + std::string(kShardMetadata) + "'") {
                        e.role = Extra::Role::shard;
                        FOURDGS_ASSIGN(const Metadata m, read_metadata(p, e));
                        FOURDGS_ASSIGN(p.t0, shard_time(p, m, "t0", at));
                        FOURDGS_ASSIGN(p.t1, shard_time(p, m, "t1", at));
                        p.declared_slice = true;
                    } else if (e.key == "Metadata '" + std::string(kKeyframeMetadata) + "'") {
                        e.role = Extra::Role::keyframe_advisory;
                        FOURDGS_ASSIGN(p.keyframe_advisory, read_metadata(p, e));
                    }
                }
                p.extras.push_back(std::move(e));
            }
        }
        at += kRecordHeaderSize + length;
    }
    return ok_status();
}

Status open_part(Part& p, const MergeOptions& options) {
    if (!p.source->random_access() || !p.source->size())
        return bad_option(p.name + " is not a random-access source of known size");
    p.size = *p.source->size();
    if (options.validate_parts) {
        ValidateOptions vo;
        FOURDGS_ASSIGN(const ValidationReport report, validate(*p.source, vo));
        for (const Finding& f : report.findings)
            if (f.severity == Severity::error) {
                Error e = make_error(ErrorKind::malformed, f.rule, f.message, f.offset);
                return invalid_part(p, e);
            }
    }
    ReaderOptions ro;
    ro.accept_keyframe_delta = true;
    auto reader = IndexedReader::open(*p.source, ro);
    if (!reader.ok()) return invalid_part(p, reader.error());
    const SceneInfo& s = reader->scene();
    p.header = s.header;
    p.quantization = s.quantization;
    p.windows = s.windows;
    p.index = s.index;
    std::stable_sort(p.index.begin(), p.index.end(), [](const ChunkIndex& a, const ChunkIndex& b) {
        return a.chunk_offset < b.chunk_offset;
    });
    FOURDGS_TRY(walk_records(p));
    if (!p.declared_slice) {
        p.t0 = p.t1 = 0;
        for (std::size_t i = 0; i < p.index.size(); ++i) {
            p.t0 = i ? std::min(p.t0, p.index[i].t0) : p.index[i].t0;
            p.t1 = i ? std::max(p.t1, p.index[i].t1) : p.index[i].t1;
        }
    }
    if (!(p.t0 <= p.t1))
        return part_problem(p, refusal::kInvalidPart,
                            "its slice [" + num(p.t0) + ", " + num(p.t1) + ") is empty backwards",
                            0);
    return ok_status();
}

// ---- the checks across parts -------------------------------------------------------------------

// A refusal for parts that disagree on `field`: `mine` in `base`, `theirs` in `p`.
Error disagree(std::string_view refusal, const std::string& field, const Part& base,
               const std::string& mine, const Part& p, const std::string& theirs,
               const std::string& why) {
    return make_error(ErrorKind::invalid_argument, refusal,
                      field + " is " + theirs + " in " + p.name + " but " + mine + " in " +
                          base.name + ": " + why)
        .about(field, theirs);
}

Status same_scene(const Part& base, const Part& p) {
    auto differ = [&](std::string field, const std::string& a, const std::string& b) {
        return disagree(refusal::kSceneMismatch, field, base, a, p, b,
                        "the parts are not slices of one scene");
    };
    if (p.header.temporal_model != base.header.temporal_model)
        return differ("Header.temporal_model", base.header.temporal_model, p.header.temporal_model);
    if (p.header.duration_sec != base.header.duration_sec)
        return differ("Header.duration_sec", num(base.header.duration_sec),
                      num(p.header.duration_sec));
    if (p.header.cutoff != base.header.cutoff)
        return differ("Header.cutoff", num(base.header.cutoff), num(p.header.cutoff));
    return ok_status();
}

Status same_grid(const Part& base, const Part& p) {
    auto differ = [&](std::string field, const std::string& a, const std::string& b) {
        return disagree(refusal::kGridMismatch, field, base, a, p, b,
                        "the parts are on different grids (encode them with one grid plan)");
    };
    const Quantization& a = base.quantization;
    const Quantization& b = p.quantization;
    if (p.header.sh_degree != base.header.sh_degree)
        return differ("Header.sh_degree", std::to_string(base.header.sh_degree),
                      std::to_string(p.header.sh_degree));
    if (a.scheme != b.scheme) return differ("Quantization.scheme", a.scheme, b.scheme);
    for (int c = 0; c < 3; ++c)
        if (a.pos_origin[c] != b.pos_origin[c])
            return differ("Quantization.pos_origin[" + std::to_string(c) + "]",
                          num(a.pos_origin[c]), num(b.pos_origin[c]));
    const std::pair<const char*, double Quantization::*> steps[] = {
        {"step_pos", &Quantization::step_pos},
        {"step_scale_log", &Quantization::step_scale_log},
        {"step_rot", &Quantization::step_rot},
        {"step_rgb", &Quantization::step_rgb},
        {"step_alpha", &Quantization::step_alpha},
        {"step_motion", &Quantization::step_motion},
        {"step_time", &Quantization::step_time},
        {"step_sigma_log", &Quantization::step_sigma_log}};
    for (const auto& [key, field] : steps)
        if (a.*field != b.*field)
            return differ(std::string("Quantization.") + key, num(a.*field), num(b.*field));
    if (a.step_sh != b.step_sh)
        return differ("Quantization.step_sh", std::to_string(a.step_sh), std::to_string(b.step_sh));
    if (a.sh_depths != b.sh_depths || a.sh_depths_malformed != b.sh_depths_malformed) {
        auto list = [](const Quantization& q) {
            std::string s = "[";
            for (std::size_t i = 0; i < q.sh_depths.size(); ++i) {
                if (i) s += ',';
                s += std::to_string(q.sh_depths[i]);
            }
            return s + "]";
        };
        return differ("Quantization.sh_depths", list(a), list(b));
    }
    // Bounds are compared as numbers (§5.3), key by key, in either order.
    for (const auto& [key, value] : a.bounds) {
        const std::string* other = b.bound(key);
        if (!other || compare_bounds(value, *other) != 0)
            return differ("Quantization.bounds." + key, value, other ? *other : "(absent)");
    }
    for (const auto& [key, value] : b.bounds)
        if (!a.bound(key)) return differ("Quantization.bounds." + key, "(absent)", value);
    return ok_status();
}

// Whether two records' bytes are equal, compared block by block.
Result<bool> same_bytes(const Part& a, const Extra& x, const Part& b, const Extra& y,
                        std::vector<std::uint8_t>& ba, std::vector<std::uint8_t>& bb,
                        std::size_t block) {
    if (x.length != y.length) return false;
    for (std::uint64_t done = 0; done < x.length;) {
        const std::uint64_t n = std::min<std::uint64_t>(block, x.length - done);
        ba.clear();
        bb.clear();
        FOURDGS_TRY(append_range(a, x.offset + done, n, ba));
        FOURDGS_TRY(append_range(b, y.offset + done, n, bb));
        if (ba != bb) return false;
        done += n;
    }
    return true;
}

Status same_extras(const Part& base, const Part& p, std::vector<std::uint8_t>& ba,
                   std::vector<std::uint8_t>& bb, std::size_t block) {
    for (const Extra& e : p.extras) {
        if (e.role != Extra::Role::copy) continue;
        const Extra* mine = nullptr;
        for (const Extra& x : base.extras)
            if (x.role == Extra::Role::copy && x.key == e.key) mine = &x;
        if (!mine)
            return make_error(ErrorKind::invalid_argument, refusal::kConflictingExtras,
                              p.name + " carries " + e.key + ", which " + base.name +
                                  " (whose front matter the merged file takes) does not")
                .about(e.key, p.name);
        FOURDGS_ASSIGN(const bool same, same_bytes(base, *mine, p, e, ba, bb, block));
        if (!same)
            return make_error(ErrorKind::invalid_argument, refusal::kConflictingExtras,
                              e.key + " differs between " + p.name + " and " + base.name +
                                  " (whose front matter the merged file takes)")
                .about(e.key, p.name);
    }
    return ok_status();
}

// ---- the chunks -------------------------------------------------------------------------------

// Renumbers a window_index stream (its whole bytes, header first, at `offset` in the part) of
// `count` elements into `out`; `changed` says whether any index moved. The count is the record's,
// checked against the stream and the readers' per-chunk limit before anything is decoded.
Status renumber_windows(const Part& p, Bytes stream, std::uint64_t offset, std::uint32_t count,
                        ByteWriter& out, bool& changed, StreamScratch& scratch) {
    Cursor c(stream, offset, "window_index stream");
    auto view = read_stream(c);
    if (!view.ok()) return invalid_part(p, view.error());
    const DecodeLimits limits;
    if (view->header.element_count != count || view->header.channels != 1 ||
        count > limits.max_gaussians_per_chunk)
        return part_problem(
            p, refusal::kStreamElementCountMismatch,
            "a window_index stream of " + std::to_string(view->header.element_count) +
                " elements in " + std::to_string(view->header.channels) +
                " channels where its record holds " + std::to_string(count) +
                " gaussians (at most " + std::to_string(limits.max_gaussians_per_chunk) + ")",
            offset);
    auto values = decode_stream(*view, scratch, limits.max_decompressed_bytes);
    if (!values.ok()) return invalid_part(p, values.error());
    changed = false;
    for (std::int32_t& v : *values) {
        if (v < 0 || static_cast<std::uint64_t>(v) >= p.window_map.size())
            return part_problem(p, refusal::kWindowIndexOutOfRange,
                                "window index " + std::to_string(v) + " is not in its " +
                                    std::to_string(p.window_map.size()) + "-window table",
                                offset);
        const std::int32_t moved =
            static_cast<std::int32_t>(p.window_map[static_cast<std::size_t>(v)]);
        changed |= moved != v;
        v = moved;
    }
    if (!changed) return ok_status();
    StreamEncodeOptions so;
    so.codec = view->header.codec;
    so.level = view->header.codec == codec::zstd ? 3 : view->header.codec == codec::lz4 ? 0 : 6;
    auto st = encode_stream(out, attr::window_index, view->header.channels, *values, so);
    if (!st.ok()) return invalid_part(p, st.error());
    return ok_status();
}

// A run of bare streams (a records block, or a Delta Chunk's births) of `count` gaussians with its
// window_index stream renumbered, into `out`. `changed` says whether anything moved.
Status renumber_block(const Part& p, Bytes block, std::uint64_t offset, std::uint32_t count,
                      ByteWriter& out, bool& changed, StreamScratch& scratch) {
    auto streams = split_streams(block, offset);
    if (!streams.ok()) return invalid_part(p, streams.error());
    changed = false;
    for (const StreamView& s : *streams) {
        const std::size_t from = static_cast<std::size_t>(s.offset - offset);
        const Bytes whole = block.subspan(
            from, kStreamHeaderSize + static_cast<std::size_t>(s.header.payload_length));
        if (s.header.attribute_id == attr::window_index) {
            bool moved = false;
            const std::size_t before = out.size();
            FOURDGS_TRY(renumber_windows(p, whole, s.offset, count, out, moved, scratch));
            if (moved) {
                changed = true;
                continue;
            }
            out.buffer().resize(before);
        }
        out.raw(whole);
    }
    return ok_status();
}

Result<std::string> read_string_at(const Part& p, const std::vector<std::uint8_t>& buf,
                                   std::size_t at, std::uint64_t offset) {
    if (buf.size() < at + 4)
        return part_problem(p, refusal::kRecordTooShort, "a chunk's head is cut off", offset);
    const std::uint32_t len = le32(buf.data() + at);
    if (buf.size() < at + 4 + len)
        return part_problem(p, refusal::kRecordTooShort, "a chunk's head is cut off", offset);
    return std::string(buf.begin() + static_cast<std::ptrdiff_t>(at + 4),
                       buf.begin() + static_cast<std::ptrdiff_t>(at + 4 + len));
}

struct Copier {
    const MergeOptions& options;
    MergeReport& report;
    StreamScratch scratch;
    std::vector<std::uint8_t> inflated, work;

    // The records a chunk needs in the merged file, in `buf` (replaced): its Chunk or Delta Chunk
    // record (window indices renumbered, references renamed through `moved_to`), then its SH Band
    // records. Fills the framing of `out`.
    Status chunk(const Part& p, const ChunkIndex& e,
                 const std::map<std::uint64_t, std::uint64_t>& moved_to,
                 std::vector<std::uint8_t>& buf, ChunkRecords& out) {
        buf.clear();
        std::array<std::uint8_t, kRecordHeaderSize> head{};
        if (e.chunk_length < kRecordHeaderSize || e.chunk_offset > p.size ||
            e.chunk_length > p.size - e.chunk_offset)
            return part_problem(p, refusal::kIndexOutOfRange,
                                "a Chunk Index entry frames no record", e.chunk_offset);
        if (auto st = p.source->read_exact(e.chunk_offset, head); !st.ok())
            return invalid_part(p, st.error());
        const std::uint8_t opcode = head[0];
        const bool delta = e.keyframe && e.keyframe->chunk_kind == kChunkKindDelta;
        if (opcode != (delta ? op::delta_chunk : op::chunk) ||
            kRecordHeaderSize + le64(head.data() + 1) != e.chunk_length)
            return part_problem(p, refusal::kIndexRecordMismatch,
                                "the Chunk Index entry at [" + num(e.t0) + ", " + num(e.t1) +
                                    ") frames a " + opcode_name(opcode) + " record of " +
                                    std::to_string(kRecordHeaderSize + le64(head.data() + 1)) +
                                    " bytes, not its " + std::to_string(e.chunk_length),
                                e.chunk_offset);
        std::uint64_t bands = 0;
        for (const ChunkIndex::Band& band : e.bands) bands += band.length;
        if (delta)
            FOURDGS_TRY(delta_chunk(p, e, moved_to, bands, buf));
        else
            FOURDGS_TRY(keyframe_chunk(p, e, bands, buf));
        reserve_exact(buf, buf.size() + bands);
        out.chunk_length = buf.size();
        out.bands = 0;
        for (std::size_t b = 0; b < e.bands.size(); ++b) {
            const ChunkIndex::Band& band = e.bands[b];
            if (band.band != b + 1 || b >= 3)
                return part_problem(p, refusal::kIndexRecordMismatch,
                                    "a Chunk Index entry lists SH band " +
                                        std::to_string(band.band) + " where band " +
                                        std::to_string(b + 1) + " belongs",
                                    e.chunk_offset);
            const std::size_t at = buf.size();
            FOURDGS_TRY(append_range(p, band.offset, band.length, buf));
            if (band.length < kRecordHeaderSize || buf[at] != op::sh_band ||
                kRecordHeaderSize + le64(buf.data() + at + 1) != band.length)
                return part_problem(
                    p, refusal::kIndexRecordMismatch,
                    "SH band " + std::to_string(band.band) + "'s range is not its record",
                    band.offset);
            out.band_length[b] = band.length;
            out.bands = static_cast<int>(b + 1);
            report.bytes_verbatim += band.length;
        }
        out.bytes = buf;
        out.t0 = e.t0;
        out.t1 = e.t1;
        out.gaussian_count = e.gaussian_count;
        out.keyframe.reset();
        if (e.keyframe) {
            KeyframeIndexFields k = *e.keyframe;
            if (delta) {
                k.reference_offset = moved_to.at(e.keyframe->reference_offset);
                k.keyframe_offset = moved_to.at(e.keyframe->keyframe_offset);
            }
            out.keyframe = k;
        }
        report.largest_chunk = std::max<std::uint64_t>(report.largest_chunk, buf.size());
        return ok_status();
    }

    // A Chunk record: verbatim, or with its window_index stream renumbered — streamed from the
    // part around that stream when the block is stored as is, inflated and compressed again
    // otherwise.
    Status keyframe_chunk(const Part& p, const ChunkIndex& e, std::uint64_t bands,
                          std::vector<std::uint8_t>& buf) {
        const std::uint64_t off = e.chunk_offset;
        const std::uint64_t content = off + kRecordHeaderSize;
        const std::uint64_t content_length = e.chunk_length - kRecordHeaderSize;
        if (content_length < kChunkPrefixBytes)
            return part_problem(p, refusal::kRecordTooShort, "a Chunk record is cut off", off);
        FOURDGS_TRY(append_range(p, off, kRecordHeaderSize + kChunkPrefixBytes, buf));
        const std::uint8_t* c = buf.data() + kRecordHeaderSize;
        double t0 = 0, t1 = 0;
        std::memcpy(&t0, c, 8);
        std::memcpy(&t1, c + 8, 8);
        const std::uint32_t count = le32(c + 20);
        if (t0 != e.t0 || t1 != e.t1 || count != e.gaussian_count)
            return part_problem(p, refusal::kIndexRecordMismatch,
                                "the Chunk at byte " + std::to_string(off) + " holds [" + num(t0) +
                                    ", " + num(t1) + ") with " + std::to_string(count) +
                                    " gaussians, not its index entry's [" + num(e.t0) + ", " +
                                    num(e.t1) + ") with " + std::to_string(e.gaussian_count),
                                off);
        const std::uint64_t compression_length = le32(c + 24);
        const std::uint64_t block_at = kChunkPrefixBytes + compression_length + 8 + 8;
        if (block_at > content_length)
            return part_problem(p, refusal::kRecordTooShort, "a Chunk's head runs past its record",
                                off);
        if (!p.windows_move) return verbatim(p, e, bands, buf);
        FOURDGS_TRY(append_range(p, content + kChunkPrefixBytes, compression_length + 16, buf));
        FOURDGS_ASSIGN(const std::string compression,
                       read_string_at(p, buf, kRecordHeaderSize + 24, off));
        const std::uint64_t block_length = le64(buf.data() + kRecordHeaderSize + block_at - 8);
        if (block_length != content_length - block_at)
            return part_problem(p, refusal::kRecordTooShort,
                                "a Chunk's records block is not its record's rest", off);
        const std::uint64_t block_offset = content + block_at;
        if (!compression.empty()) return compressed_chunk(p, e, bands, buf);

        // Stored as is: walk the stream headers in the part, and copy around the one that moves.
        std::uint64_t at = block_offset;
        const std::uint64_t block_end = block_offset + block_length;
        std::array<std::uint8_t, kStreamHeaderSize> sh{};
        while (at < block_end) {
            if (block_end - at < kStreamHeaderSize)
                return part_problem(p, refusal::kRecordTooShort, "a stream header is cut off", at);
            if (auto st = p.source->read_exact(at, sh); !st.ok())
                return invalid_part(p, st.error());
            const std::uint64_t payload = le64(sh.data() + 9);
            if (payload > block_end - at - kStreamHeaderSize)
                return part_problem(p, refusal::kRecordTooShort, "a stream runs past its chunk",
                                    at);
            const std::uint64_t whole = kStreamHeaderSize + payload;
            if (sh[0] == attr::window_index) {
                FOURDGS_ASSIGN(const auto stream, read_range_of(p, at, whole));
                ByteWriter fresh;
                bool moved = false;
                FOURDGS_TRY(
                    renumber_windows(p, stream, at, e.gaussian_count, fresh, moved, scratch));
                // This chunk's windows keep their indices: the record is copied as it is.
                if (!moved) return verbatim(p, e, bands, buf);
                const std::size_t head = kRecordHeaderSize + static_cast<std::size_t>(block_at);
                reserve_exact(buf, e.chunk_length - whole + fresh.size() + bands);
                FOURDGS_TRY(append_range(p, block_offset, at - block_offset, buf));
                buf.insert(buf.end(), fresh.buffer().begin(), fresh.buffer().end());
                FOURDGS_TRY(append_range(p, at + whole, block_end - at - whole, buf));
                const std::uint64_t new_block = buf.size() - head;
                put64(buf.data() + 1, buf.size() - kRecordHeaderSize);  // content_length
                put64(buf.data() + head - 16, new_block);               // uncompressed_size
                put64(buf.data() + head - 8, new_block);                // the records' length
                ++report.window_streams_rewritten;
                report.bytes_verbatim += block_length - whole + head;
                return ok_status();
            }
            at += whole;
        }
        return part_problem(
            p, refusal::kMissingAttributeStream,
            "the Chunk at byte " + std::to_string(off) + " has no window_index stream", off);
    }

    // The chunk's record as it is in the part, in `buf` (replaced), with room for its bands.
    static Status read_whole(const Part& p, const ChunkIndex& e, std::uint64_t bands,
                             std::vector<std::uint8_t>& buf) {
        buf.clear();
        reserve_exact(buf, e.chunk_length + bands);
        return append_range(p, e.chunk_offset, e.chunk_length, buf);
    }

    // The same, for a record the merged file takes as it is.
    Status verbatim(const Part& p, const ChunkIndex& e, std::uint64_t bands,
                    std::vector<std::uint8_t>& buf) {
        FOURDGS_TRY(read_whole(p, e, bands, buf));
        ++report.chunks_verbatim;
        report.bytes_verbatim += e.chunk_length;
        return ok_status();
    }

    Status compressed_chunk(const Part& p, const ChunkIndex& e, std::uint64_t bands,
                            std::vector<std::uint8_t>& buf) {
        FOURDGS_TRY(read_whole(p, e, bands, buf));
        auto rv = parse_record(buf, e.chunk_offset);
        if (!rv.ok()) return invalid_part(p, rv.error());
        auto rec = parse_chunk(*rv);
        if (!rec.ok()) return invalid_part(p, rec.error());
        bool changed = false;
        ByteWriter block;
        FOURDGS_ASSIGN(const Bytes inflated_block,
                       inflate(p, rec->compression, rec->records, rec->uncompressed_size,
                               rec->records_offset));
        FOURDGS_TRY(renumber_block(p, inflated_block, rec->records_offset, rec->count, block,
                                   changed, scratch));
        if (!changed) {
            ++report.chunks_verbatim;
            report.bytes_verbatim += e.chunk_length;
            return ok_status();
        }
        FOURDGS_TRY(seal(p, rec->compression, block, e.chunk_offset));
        rec->uncompressed_size = block.size();
        rec->records = work;
        ByteWriter record;
        write(record, *rec);
        buf = std::move(record.buffer());
        ++report.window_streams_rewritten;
        return ok_status();
    }

    // A block stored under `compression` ("" = as is), inflated into `inflated` when compressed
    // (its declared size checked against the readers' limit and what the bytes can hold first).
    Result<Bytes> inflate(const Part& p, const std::string& compression, Bytes stored,
                          std::uint64_t uncompressed, std::uint64_t offset) {
        if (compression.empty()) return stored;
        auto codec_byte = chunk_compression_codec(compression, offset);
        if (!codec_byte.ok()) return invalid_part(p, codec_byte.error());
        if (uncompressed > DecodeLimits{}.max_decompressed_bytes)
            return part_problem(p, refusal::kLimitExceeded,
                                "a records block declares " + std::to_string(uncompressed) +
                                    " inflated bytes, past the readers' limit",
                                offset);
        if (auto st = check_decompressed_size(*codec_byte, stored, uncompressed, offset); !st.ok())
            return invalid_part(p, st.error());
        inflated.resize(static_cast<std::size_t>(uncompressed));
        if (auto st = decompress(*codec_byte, stored, inflated, offset); !st.ok())
            return invalid_part(p, st.error());
        return Bytes(inflated);
    }

    // Compresses `block` under `compression` into `work` (or copies it when "").
    Status seal(const Part& p, const std::string& compression, const ByteWriter& block,
                std::uint64_t offset) {
        if (compression.empty()) {
            work = block.buffer();
            return ok_status();
        }
        auto codec_byte = chunk_compression_codec(compression, offset);
        if (!codec_byte.ok()) return invalid_part(p, codec_byte.error());
        if (auto st =
                compress(*codec_byte, *codec_byte == codec::zstd ? 3 : 6, block.buffer(), work);
            !st.ok())
            return invalid_part(p, st.error());
        return ok_status();
    }

    // A Delta Chunk record: its reference and keyframe offsets renamed; its births' window_index
    // stream renumbered when the part's windows move.
    Status delta_chunk(const Part& p, const ChunkIndex& e,
                       const std::map<std::uint64_t, std::uint64_t>& moved_to, std::uint64_t bands,
                       std::vector<std::uint8_t>& buf) {
        const std::uint64_t off = e.chunk_offset;
        if (e.chunk_length < kRecordHeaderSize + kDeltaPrefixBytes)
            return part_problem(p, refusal::kRecordTooShort, "a Delta Chunk record is cut off",
                                off);
        const KeyframeIndexFields& k = *e.keyframe;
        const auto ref = moved_to.find(k.reference_offset);
        const auto key = moved_to.find(k.keyframe_offset);
        if (ref == moved_to.end() || key == moved_to.end())
            return part_problem(
                p, refusal::kBrokenReference,
                "the Delta Chunk at byte " + std::to_string(off) + " references byte " +
                    std::to_string(ref == moved_to.end() ? k.reference_offset : k.keyframe_offset) +
                    ", no chunk of its slice",
                off);
        reserve_exact(buf, e.chunk_length + bands);
        FOURDGS_TRY(append_range(p, off, e.chunk_length, buf));
        std::uint8_t* c = buf.data() + kRecordHeaderSize;
        if (le64(c + kDeltaReferenceAt) != k.reference_offset ||
            le64(c + kDeltaReferenceAt + 8) != k.keyframe_offset)
            return part_problem(p, refusal::kIndexRecordMismatch,
                                "the Delta Chunk at byte " + std::to_string(off) +
                                    " names other references than its index entry",
                                off);
        if (p.windows_move) {
            auto rv = parse_record(buf, off);
            if (!rv.ok()) return invalid_part(p, rv.error());
            auto d = parse_delta_chunk(*rv);
            if (!d.ok()) return invalid_part(p, d.error());
            ByteWriter whole;
            bool changed = false;
            FOURDGS_TRY(inflate_and_renumber_delta(p, *d, whole, changed));
            if (changed) {
                FOURDGS_TRY(seal(p, d->compression, whole, d->records_offset));
                d->uncompressed_size = whole.size();
                d->records = work;
                d->reference_offset = ref->second;
                d->keyframe_offset = key->second;
                ByteWriter record;
                write(record, *d);
                buf = std::move(record.buffer());
                ++report.window_streams_rewritten;
                ++report.references_rewritten;
                return ok_status();
            }
        }
        c = buf.data() + kRecordHeaderSize;
        put64(c + kDeltaReferenceAt, ref->second);
        put64(c + kDeltaReferenceAt + 8, key->second);
        ++report.references_rewritten;
        report.bytes_verbatim += e.chunk_length - 16;
        return ok_status();
    }

    Status inflate_and_renumber_delta(const Part& p, const DeltaChunk& d, ByteWriter& out,
                                      bool& changed) {
        FOURDGS_ASSIGN(const Bytes block,
                       inflate(p, d.compression, d.records, d.uncompressed_size, d.records_offset));
        auto groups = split_delta_groups(block, d.records_offset);
        if (!groups.ok()) return invalid_part(p, groups.error());
        ByteWriter births;
        FOURDGS_TRY(renumber_block(p, groups->births, groups->births_offset, d.birth_count, births,
                                   changed, scratch));
        write_delta_groups(out, groups->updates, births.buffer(), groups->deaths);
        return ok_status();
    }
};

Metadata keyframe_advisory(const Metadata& base, double duration, std::uint32_t keyframes,
                           std::uint16_t depth) {
    Metadata m = base;
    for (auto& [k, v] : m.entries) {
        if (k == "keyframe_interval_sec")
            v = bound_string(keyframes ? duration / keyframes : duration);
        if (k == "gop_max_depth") v = std::to_string(depth);
    }
    return m;
}

}  // namespace

Status merge_scenes(std::span<ByteSource* const> sources, const MergeOptions& options,
                    ByteSink& sink, MergeReport* report_out) {
    if (sources.empty()) return bad_option("there are no parts to merge");
    if (options.block_bytes < 4096) return bad_option("block_bytes is below 4096");
    if (options.base && *options.base >= sources.size())
        return bad_option("the base part " + std::to_string(*options.base) + " is not one of the " +
                          std::to_string(sources.size()) + " parts");
    MergeReport local;
    MergeReport& report = report_out ? *report_out : local;
    report = MergeReport{};

    std::vector<Part> parts(sources.size());
    for (std::size_t i = 0; i < sources.size(); ++i) {
        parts[i].source = sources[i];
        parts[i].name = i < options.names.size() ? options.names[i] : "part " + std::to_string(i);
        FOURDGS_TRY(open_part(parts[i], options));
    }
    std::vector<std::size_t> order(parts.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return parts[a].t0 != parts[b].t0 ? parts[a].t0 < parts[b].t0 : parts[a].t1 < parts[b].t1;
    });
    const std::size_t base_index = options.base ? *options.base : order.front();
    const Part& base = parts[base_index];
    const bool keyframed = base.header.temporal_model == kModelKeyframeDelta;

    // One scene, one grid, one timeline, one front matter.
    std::vector<std::uint8_t> block_a, block_b;
    for (const Part& p : parts) {
        FOURDGS_TRY(same_scene(base, p));
        FOURDGS_TRY(same_grid(base, p));
    }
    double reach = -1;
    const Part* reacher = nullptr;
    for (std::size_t i : order) {
        const Part& p = parts[i];
        if (p.t1 <= p.t0) continue;  // an empty slice overlaps nothing
        if (reacher && p.t0 < reach && (keyframed || !options.allow_overlap))
            return make_error(
                       ErrorKind::invalid_argument, refusal::kOverlappingParts,
                       p.name + "'s slice [" + num(p.t0) + ", " + num(p.t1) + ") overlaps " +
                           reacher->name + "'s, which reaches " + num(reach) +
                           (keyframed ? " (keyframe-delta state chunks must tile the clock, §11.1)"
                                      : " (allow_overlap makes the union)"))
                .about(p.name, reacher->name);
        if (p.t1 > reach) reach = p.t1, reacher = &p;
    }
    for (const Part& p : parts)
        if (&p != &base) FOURDGS_TRY(same_extras(base, p, block_a, block_b, options.block_bytes));
    std::vector<std::uint8_t>().swap(block_a);
    std::vector<std::uint8_t>().swap(block_b);

    // The Window Table's union, and where each part's windows land in it.
    std::vector<WindowTable::Window> windows;
    for (const Part& p : parts) windows.insert(windows.end(), p.windows.begin(), p.windows.end());
    auto before = [](const WindowTable::Window& a, const WindowTable::Window& b) {
        return a.lo != b.lo ? a.lo < b.lo : a.hi < b.hi;
    };
    std::sort(windows.begin(), windows.end(), before);
    windows.erase(std::unique(windows.begin(), windows.end()), windows.end());
    for (Part& p : parts) {
        p.window_map.resize(p.windows.size());
        for (std::size_t w = 0; w < p.windows.size(); ++w) {
            p.window_map[w] = static_cast<std::uint32_t>(
                std::lower_bound(windows.begin(), windows.end(), p.windows[w], before) -
                windows.begin());
            p.windows_move |= p.window_map[w] != w;
        }
    }

    // Which chunks each part contributes: all of them, but a keyframe-delta shard's empty
    // keyframes outside its slice.
    std::uint64_t gaussians = 0, chunk_total = 0;
    std::uint32_t keyframes = 0;
    std::uint16_t depth = 0;
    std::array<double, 6> aabb = base.header.aabb;
    bool any_aabb = false, compressed = false;
    std::vector<std::pair<double, double>> tiles;
    for (std::size_t i : order) {
        Part& p = parts[i];
        p.keep.assign(p.index.size(), true);
        bool kept_any = false;
        for (std::size_t k = 0; k < p.index.size(); ++k) {
            const ChunkIndex& e = p.index[k];
            if (keyframed && p.declared_slice && !(e.t0 >= p.t0 && e.t1 <= p.t1)) {
                const bool filler = e.keyframe && e.keyframe->chunk_kind == kChunkKindKeyframe &&
                                    e.gaussian_count == 0 && e.keyframe->live_count == 0 &&
                                    (e.t1 <= p.t0 || e.t0 >= p.t1);
                if (!filler)
                    return part_problem(p, refusal::kInvalidPart,
                                        "its chunk [" + num(e.t0) + ", " + num(e.t1) +
                                            ") lies outside its slice [" + num(p.t0) + ", " +
                                            num(p.t1) + ") and is not an empty keyframe",
                                        e.chunk_offset);
                p.keep[k] = false;
                ++report.chunks_dropped;
                continue;
            }
            if (!keyframed && p.declared_slice && !(e.t0 >= p.t0 && e.t1 <= p.t1))
                return part_problem(p, refusal::kInvalidPart,
                                    "its chunk [" + num(e.t0) + ", " + num(e.t1) +
                                        ") lies outside its declared slice [" + num(p.t0) + ", " +
                                        num(p.t1) + ")",
                                    e.chunk_offset);
            kept_any = true;
            ++chunk_total;
            if (!keyframed) gaussians += e.gaussian_count;
            if (e.keyframe) {
                keyframes += e.keyframe->chunk_kind == kChunkKindKeyframe;
                depth = std::max(depth, e.keyframe->depth);
            }
            tiles.push_back({e.t0, e.t1});
        }
        if (keyframed) gaussians += p.header.gaussian_count;
        if (kept_any) compressed |= p.header.chunks_compressed();
        if (p.header.gaussian_count > 0) {
            for (int c = 0; c < 3; ++c) {
                aabb[c] = any_aabb ? std::min(aabb[c], p.header.aabb[c]) : p.header.aabb[c];
                aabb[3 + c] =
                    any_aabb ? std::max(aabb[3 + c], p.header.aabb[3 + c]) : p.header.aabb[3 + c];
            }
            any_aabb = true;
        }
    }
    if (chunk_total > 0xFFFFFFFFull)
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          std::to_string(chunk_total) + " chunks exceed the Statistics' u32 count");
    if (keyframed) {
        std::sort(tiles.begin(), tiles.end());
        double at = 0;
        for (const auto& [t0, t1] : tiles) {
            if (t0 != at)
                return make_error(
                    ErrorKind::malformed, refusal::kTimelineGap,
                    "no part covers [" + num(at) + ", " + num(t0) +
                        "): the merged state chunks would not tile the clock (§11.1)");
            at = t1;
        }
        if (at != base.header.duration_sec)
            return make_error(ErrorKind::malformed, refusal::kTimelineGap,
                              "no part covers [" + num(at) + ", " + num(base.header.duration_sec) +
                                  "): the merged state chunks would not tile the clock (§11.1)");
    }

    // What the copy needs of a part other than the base is its index and window map: the rest
    // goes, so that what stays in proportion to the parts is about the size of the summary.
    for (Part& p : parts)
        if (&p != &base) {
            p.quantization = {};
            p.header = {};
            p.extras = {};
            p.keyframe_advisory.reset();
            p.windows = {};
        }

    // The file: front, the base's records, the chunks part by part, the summary.
    Header header = base.header;
    header.gaussian_count = gaussians;
    if (any_aabb) header.aabb = aabb;
    header.flags = static_cast<std::uint8_t>((header.flags & ~kHeaderFlagCompressed) |
                                             (compressed ? kHeaderFlagCompressed : 0));
    FileAssembler as(sink);
    FOURDGS_TRY(as.begin(header, base.quantization, WindowTable{windows}));
    std::vector<std::uint8_t> block;
    for (const Extra& e : base.extras) {
        if (e.role == Extra::Role::shard) continue;
        if (e.role == Extra::Role::keyframe_advisory && base.keyframe_advisory) {
            ByteWriter w;
            write(w, keyframe_advisory(*base.keyframe_advisory, header.duration_sec, keyframes,
                                       depth));
            FOURDGS_TRY(as.put(w));
            continue;
        }
        for (std::uint64_t done = 0; done < e.length;) {
            const std::uint64_t n = std::min<std::uint64_t>(options.block_bytes, e.length - done);
            block.clear();
            FOURDGS_TRY(append_range(base, e.offset + done, n, block));
            FOURDGS_TRY(as.put(Bytes(block)));
            done += n;
        }
        report.bytes_verbatim += e.length;
    }

    Copier copier{options, report, {}, {}, {}};
    std::vector<std::uint8_t> buf;
    for (std::size_t i : order) {
        const Part& p = parts[i];
        std::map<std::uint64_t, std::uint64_t> moved_to;  // a part's chunk offsets → the file's
        for (std::size_t k = 0; k < p.index.size(); ++k) {
            if (!p.keep[k]) continue;
            const ChunkIndex& e = p.index[k];
            ChunkRecords records;
            FOURDGS_TRY(copier.chunk(p, e, moved_to, buf, records));
            moved_to[e.chunk_offset] = as.position();
            FOURDGS_TRY(as.add_chunk(records));
        }
        report.order.push_back(i);
    }
    const std::uint64_t summary_start = as.position();
    const Statistics stats{gaussians, static_cast<std::uint32_t>(as.chunk_count()),
                           header.duration_sec, header.aabb};
    FOURDGS_TRY(as.finish(SummaryOptions{}, stats));
    report.base = base_index;
    report.chunks = static_cast<std::uint32_t>(as.chunk_count());
    report.bytes_written = as.position();
    report.summary_bytes =
        as.position() - summary_start - kRecordHeaderSize - kFooterContentSize - kMagicSize;
    return ok_status();
}

Status merge_files(std::span<const std::string> paths, const std::string& output,
                   const MergeOptions& options, MergeReport* report) {
    std::vector<FileSource> files;
    files.reserve(paths.size());
    for (const std::string& path : paths) {
        auto f = FileSource::open(path);
        if (!f.ok()) return std::move(f).error();
        files.push_back(std::move(*f));
    }
    std::vector<ByteSource*> sources;
    for (FileSource& f : files) sources.push_back(&f);
    MergeOptions o = options;
    if (o.names.empty()) o.names.assign(paths.begin(), paths.end());
    // Write beside the output and rename at the end, so a refusal never leaves a partial file.
    const std::string temp = output + ".partial-" + std::to_string(::getpid());
    Status st;
    {
        auto sink = FileSink::create(temp);
        if (!sink.ok()) return std::move(sink).error();
        st = merge_scenes(sources, o, *sink, report);
        if (st.ok()) st = sink->close();
    }
    if (st.ok() && std::rename(temp.c_str(), output.c_str()) != 0)
        st =
            make_error(ErrorKind::io, refusal::kIoError, "cannot rename " + temp + " to " + output);
    if (!st.ok()) std::remove(temp.c_str());
    return st;
}

}  // namespace fourdgs
