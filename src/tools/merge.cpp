// Joining slices of one scene (merge.hpp): read each part's summary and front matter, check that
// the parts are one scene on one grid, then copy records — rewriting only window indices that
// moved and the offsets a Delta Chunk names — and write the merged summary.
#include "fourdgs/tools/merge.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "fourdgs/decode.hpp"
#include "fourdgs/detail/chunk_bands.hpp"
#include "fourdgs/detail/file_assembler.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/detail/index_check.hpp"
#include "fourdgs/detail/keyframe_rules.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/portable.hpp"
#include "fourdgs/detail/record_stream.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/stream.hpp"
#include "fourdgs/validate.hpp"
#include "fourdgs/writer.hpp"
#include "merge_parts.hpp"

namespace fourdgs {

using detail::ChunkBands;
using detail::ChunkRecords;
using detail::FileAssembler;
using detail::FramedChunk;
using detail::IndexCheckOptions;
using detail::StateLink;
using detail::SummaryOptions;
using detail::check_entry_in_file;
using detail::check_index_entry;
using detail::index_record_mismatch;
using detail::parse_state_chunk;

namespace {

using namespace merging;

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
    // The part's stream was readable, so its codec is in the table: re-compressed at its default.
    so.level = find_codec(so.codec)->default_level;
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

// The chunk record `framed` against the index entry it was fetched by (count, interval, and a
// keyframe-delta entry's six fields); fetch_framed has checked the range.
Status check_entry(const Part& p, const ChunkIndex& e, const FramedChunk& framed) {
    IndexCheckOptions o;
    o.ranges = false;
    o.keyframe = IndexCheckOptions::KeyframeFields::when_present;
    if (auto st = check_index_entry(e, framed, e.chunk_offset, o); !st.ok())
        return invalid_part(p, st.error());
    return ok_status();
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
        // Every range inside the part before anything is reserved for it.
        std::uint64_t bands = 0;
        if (e.bands.size() > 3)
            return part_problem(p, refusal::kIndexRecordMismatch,
                                "a Chunk Index entry lists " + std::to_string(e.bands.size()) +
                                    " SH bands",
                                e.chunk_offset);
        if (Status in_file = check_entry_in_file(e, p.chunks_end, e.chunk_offset); !in_file.ok())
            return invalid_part(p, in_file.error());
        for (const ChunkIndex::Band& b : e.bands) bands += b.length;
        const bool delta = e.keyframe && e.keyframe->chunk_kind == kChunkKindDelta;
        buf.clear();
        reserve_exact(buf, e.chunk_length + bands);
        FOURDGS_ASSIGN(const RecordView record,
                       fetch_record(p, e.chunk_offset, e.chunk_length,
                                    delta ? op::delta_chunk : op::chunk, buf));
        auto state = parse_state_chunk(record);
        if (!state.ok()) return invalid_part(p, state.error());
        FOURDGS_TRY(check_entry(p, e, FramedChunk::of(record, *state)));
        if (state->delta)
            FOURDGS_TRY(delta_chunk(p, e, std::move(*state->delta), moved_to, buf));
        else
            FOURDGS_TRY(keyframe_chunk(p, e, *state->chunk, bands, buf));
        reserve_exact(buf, buf.size() + bands);
        out.chunk_length = buf.size();
        out.bands = 0;
        ChunkBands gathered;
        for (std::size_t b = 0; b < e.bands.size(); ++b) {
            const ChunkIndex::Band& entry = e.bands[b];
            const auto number = static_cast<std::uint8_t>(b + 1);
            FOURDGS_ASSIGN(const RecordView rv,
                           fetch_record(p, entry.offset, entry.length, op::sh_band, buf,
                                        {"bands", "bands"}));
            if (Status added = gathered.add(rv); !added.ok())
                return invalid_part(p, added.error());
            const ShBandRecord& parsed = gathered.bands.back();
            if (entry.band != number || parsed.band != number)
                return invalid_part(
                    p, index_record_mismatch("bands",
                                             "the index lists band " + std::to_string(entry.band) +
                                                 " holding band " +
                                                 std::to_string(parsed.band) + " where band " +
                                                 std::to_string(number) + " belongs",
                                             entry.offset));
            out.band_length[b] = entry.length;
            out.bands = static_cast<int>(number);
            report.bytes_verbatim += entry.length;
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

    void count_verbatim(const ChunkIndex& e) {
        ++report.chunks_verbatim;
        report.bytes_verbatim += e.chunk_length;
    }

    // A Chunk record (in `buf`, fetched): as it is, or with its window_index stream renumbered —
    // spliced into the record when its block is stored as is, inflated and compressed again
    // otherwise.
    Status keyframe_chunk(const Part& p, const ChunkIndex& e, const ChunkRecord& chunk,
                          std::uint64_t bands, std::vector<std::uint8_t>& buf) {
        if (!p.windows_move) {
            count_verbatim(e);
            return ok_status();
        }
        if (!chunk.compression.empty()) return compressed_chunk(p, e, chunk, buf);
        auto streams = split_streams(chunk.records, chunk.records_offset);
        if (!streams.ok()) return invalid_part(p, streams.error());
        for (const StreamView& s : *streams) {
            if (s.header.attribute_id != attr::window_index) continue;
            const std::size_t at = static_cast<std::size_t>(s.offset - e.chunk_offset);
            const std::size_t whole =
                kStreamHeaderSize + static_cast<std::size_t>(s.header.payload_length);
            ByteWriter fresh;
            bool moved = false;
            FOURDGS_TRY(renumber_windows(p, Bytes(buf).subspan(at, whole), s.offset, chunk.count,
                                         fresh, moved, scratch));
            // This chunk's windows keep their indices: the record is copied as it is.
            if (!moved) {
                count_verbatim(e);
                return ok_status();
            }
            const auto block_at = static_cast<std::size_t>(chunk.records_offset - e.chunk_offset);
            FOURDGS_TRY(splice(p, e, buf, at, whole, fresh.buffer(), bands));
            patch_stored_chunk_lengths(buf, block_at);
            ++report.window_streams_rewritten;
            report.bytes_verbatim += e.chunk_length - whole;
            return ok_status();
        }
        return part_problem(
            p, refusal::kMissingAttributeStream,
            "the Chunk at byte " + std::to_string(e.chunk_offset) + " has no window_index stream",
            e.chunk_offset);
    }

    // Replaces buf[at, at + n) — `buf` holding the record entry `e` frames — by `with`. In place
    // when buf's capacity holds the result and the bands to come; otherwise buf is released and
    // the record read again from the part around the replaced bytes into a buffer of exactly the
    // new size, so that two copies of a chunk are never held at once.
    Status splice(const Part& p, const ChunkIndex& e, std::vector<std::uint8_t>& buf,
                  std::size_t at, std::size_t n, Bytes with, std::uint64_t bands) {
        const std::size_t size = buf.size() - n + with.size();
        const auto from = buf.begin() + static_cast<std::ptrdiff_t>(at);
        if (size + bands <= buf.capacity()) {
            buf.erase(from, from + static_cast<std::ptrdiff_t>(n));
            buf.insert(buf.begin() + static_cast<std::ptrdiff_t>(at), with.begin(), with.end());
            return ok_status();
        }
        std::vector<std::uint8_t>().swap(buf);
        buf.reserve(static_cast<std::size_t>(size + bands));
        buf.resize(size);
        const std::span<std::uint8_t> out(buf);
        FOURDGS_TRY(read_into(p, e.chunk_offset, out.first(at)));
        std::copy(with.begin(), with.end(), out.begin() + static_cast<std::ptrdiff_t>(at));
        return read_into(p, e.chunk_offset + at + n, out.subspan(at + with.size()));
    }

    // Bytes of a record already framed and fetched once, read again into `out`.
    static Status read_into(const Part& p, std::uint64_t offset, std::span<std::uint8_t> out) {
        if (auto st = p.source->read_exact(offset, out); !st.ok())
            return invalid_part(p, st.error());
        p.fetcher->count(out.size());
        return ok_status();
    }

    // A chunk-level-compressed Chunk whose part's windows move: its block inflated, renumbered,
    // and compressed again when an index moved.
    Status compressed_chunk(const Part& p, const ChunkIndex& e, ChunkRecord c,
                            std::vector<std::uint8_t>& buf) {
        bool changed = false;
        ByteWriter block;
        FOURDGS_ASSIGN(const Bytes inflated_block,
                       inflate(p, c.compression, c.records, c.uncompressed_size, c.records_offset));
        FOURDGS_TRY(renumber_block(p, inflated_block, c.records_offset, c.count, block, changed,
                                   scratch));
        if (!changed) {
            count_verbatim(e);
            return ok_status();
        }
        FOURDGS_TRY(seal(p, c.compression, block, e.chunk_offset));
        c.uncompressed_size = block.size();
        c.records = work;
        ByteWriter record;
        write(record, c);
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
        if (auto st = compress(*codec_byte, find_codec(*codec_byte)->default_level,
                               block.buffer(), work);
            !st.ok())
            return invalid_part(p, st.error());
        return ok_status();
    }

    // A Delta Chunk record (in `buf`, fetched): its reference and keyframe offsets renamed; its
    // births' window_index stream renumbered when the part's windows move.
    Status delta_chunk(const Part& p, const ChunkIndex& e, DeltaChunk delta,
                       const std::map<std::uint64_t, std::uint64_t>& moved_to,
                       std::vector<std::uint8_t>& buf) {
        const auto ref = moved_to.find(delta.reference_offset);
        const auto key = moved_to.find(delta.keyframe_offset);
        if (ref == moved_to.end() || key == moved_to.end())
            return part_problem(
                p, refusal::kBrokenReference,
                "the Delta Chunk at byte " + std::to_string(e.chunk_offset) + " references byte " +
                    std::to_string(ref == moved_to.end() ? delta.reference_offset
                                                         : delta.keyframe_offset) +
                    ", no chunk of its slice",
                e.chunk_offset);
        if (p.windows_move) {
            ByteWriter whole;
            bool changed = false;
            FOURDGS_TRY(inflate_and_renumber_delta(p, delta, whole, changed));
            if (changed) {
                FOURDGS_TRY(seal(p, delta.compression, whole, delta.records_offset));
                delta.uncompressed_size = whole.size();
                delta.records = work;
                delta.reference_offset = ref->second;
                delta.keyframe_offset = key->second;
                ByteWriter rewritten;
                write(rewritten, delta);
                buf = std::move(rewritten.buffer());
                ++report.window_streams_rewritten;
                ++report.references_rewritten;
                return ok_status();
            }
        }
        patch_delta_references(buf, ref->second, key->second);
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

// ---- merge_scenes, a pass at a time --------------------------------------------------------
// Each pass below is one step of merge_scenes, in the order it takes them; that order is the
// order of the refusals.

// The options that make no sense whatever the parts hold.
Status check_merge_options(std::span<ByteSource* const> sources, const MergeOptions& options) {
    if (sources.empty()) return bad_option("there are no parts to merge");
    if (options.block_bytes < 4096) return bad_option("block_bytes is below 4096");
    if (options.base && *options.base >= sources.size())
        return bad_option("the base part " + std::to_string(*options.base) + " is not one of the " +
                          std::to_string(sources.size()) + " parts");
    return ok_status();
}

// Each part opened and summarized (open_part), in the order given.
Status open_parts(std::span<ByteSource* const> sources, const MergeOptions& options,
                  std::vector<Part>& parts) {
    parts.resize(sources.size());
    for (std::size_t i = 0; i < sources.size(); ++i) {
        parts[i].source = sources[i];
        parts[i].name = i < options.names.size() ? options.names[i] : "part " + std::to_string(i);
        FOURDGS_TRY(open_part(parts[i], options));
    }
    return ok_status();
}

// The parts in the order of their slices on the clock (by t0, then t1; ties keep their order).
std::vector<std::size_t> time_order(const std::vector<Part>& parts) {
    std::vector<std::size_t> order(parts.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return parts[a].t0 != parts[b].t0 ? parts[a].t0 < parts[b].t0 : parts[a].t1 < parts[b].t1;
    });
    return order;
}

// The slice the merged file declares, when the caller asks for a 4dgs-shard record.
Result<std::optional<ShardSlice>> merged_shard(const MergeOptions& options) {
    std::optional<ShardSlice> merged_slice;
    if (options.shard) {
        std::string why;
        merged_slice = read_shard(*options.shard, why);
        if (!merged_slice || options.shard->name != kShardMetadata)
            return bad_option("the shard record asked for is not a 4dgs-shard record: " + why);
    }
    return merged_slice;
}

// One scene, one grid, one timeline, one front matter: every part against the base, and the
// slices against each other.
Status check_parts_agree(const std::vector<Part>& parts, std::span<const std::size_t> order,
                         const Part& base, bool keyframed, const MergeOptions& options) {
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
    return ok_status();
}

// The Window Table's union, and where each part's windows land in it (Part::window_map).
// A part without chunks adds none: its table is the placeholder an empty file must carry.
std::vector<WindowTable::Window> union_windows(std::vector<Part>& parts, const Part& base) {
    std::vector<WindowTable::Window> windows;
    for (const Part& p : parts)
        if (!p.index.empty()) windows.insert(windows.end(), p.windows.begin(), p.windows.end());
    if (windows.empty()) windows = base.windows;
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
    return windows;
}

// Whether a part's chunk goes into the merged file: every chunk does, but a keyframe-delta
// shard's empty keyframes outside its slice; a chunk its declared slice does not hold is refused.
Result<bool> keep_chunk(const Part& p, const ChunkIndex& e, bool keyframed,
                        const std::optional<ShardSlice>& merged_slice) {
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
        // A merged shard keeps the fillers outside its own slice (§11.1's tiling).
        const bool outside_merged =
            merged_slice && (e.t1 <= merged_slice->t0 || e.t0 >= merged_slice->t1);
        return outside_merged;
    }
    if (!keyframed && p.declared_slice && !(e.t0 >= p.t0 && e.t0 < p.t1)) {
        // A record may outlast its shard's slice (a planned part's, convert.hpp), but it
        // starts inside it.
        return part_problem(p, refusal::kInvalidPart,
                            "its chunk [" + num(e.t0) + ", " + num(e.t1) +
                                ") starts outside its declared slice [" + num(p.t0) + ", " +
                                num(p.t1) + ")",
                            e.chunk_offset);
    }
    return true;
}

// What the merged file's Header, Statistics and keyframe advisory say, summed over the chunks
// kept.
struct MergedTotals {
    std::uint64_t gaussians = 0, chunk_total = 0;
    std::uint32_t keyframes = 0;
    std::uint16_t depth = 0;
    std::array<double, 6> aabb{};
    bool any_aabb = false, compressed = false;
    // The kept state chunks, each with the part it comes from (its offset is that part's).
    struct Tile {
        StateLink state;
        const Part* part = nullptr;
    };
    std::vector<Tile> tiles;
};

// Which chunks each part contributes (Part::keep), and the totals over them.
Status choose_chunks(std::vector<Part>& parts, std::span<const std::size_t> order,
                     bool keyframed, const std::optional<ShardSlice>& merged_slice,
                     MergeReport& report, MergedTotals& t) {
    for (std::size_t i : order) {
        Part& p = parts[i];
        p.keep.assign(p.index.size(), true);
        bool kept_any = false;
        for (std::size_t k = 0; k < p.index.size(); ++k) {
            const ChunkIndex& e = p.index[k];
            FOURDGS_ASSIGN(const bool keep, keep_chunk(p, e, keyframed, merged_slice));
            if (!keep) {
                p.keep[k] = false;
                ++report.chunks_dropped;
                continue;
            }
            kept_any = true;
            ++t.chunk_total;
            if (!keyframed) t.gaussians += e.gaussian_count;
            if (e.keyframe) {
                t.keyframes += e.keyframe->chunk_kind == kChunkKindKeyframe;
                t.depth = std::max(t.depth, e.keyframe->depth);
            }
            StateLink state;
            state.offset = e.chunk_offset;
            state.t0 = e.t0;
            state.t1 = e.t1;
            t.tiles.push_back({state, &p});
        }
        if (keyframed) t.gaussians += p.header.gaussian_count;
        if (kept_any) t.compressed |= p.header.chunks_compressed();
        if (p.header.gaussian_count > 0) {
            for (int c = 0; c < 3; ++c) {
                t.aabb[c] = t.any_aabb ? std::min(t.aabb[c], p.header.aabb[c]) : p.header.aabb[c];
                t.aabb[3 + c] = t.any_aabb ? std::max(t.aabb[3 + c], p.header.aabb[3 + c])
                                           : p.header.aabb[3 + c];
            }
            t.any_aabb = true;
        }
    }
    return ok_status();
}

// The totals fit the Statistics record, and a keyframe-delta file's kept state chunks tile its
// clock (§11.1), by the readers' own rule (TimelineTiling): a gap is timeline-gap, an overlap or
// an overrun non-tiling-chunks. The bytes it names are in the part named.
Status check_merged_chunks(MergedTotals& t, bool keyframed, double duration) {
    if (t.chunk_total > 0xFFFFFFFFull)
        return make_error(ErrorKind::limit, refusal::kLimitExceeded,
                          std::to_string(t.chunk_total) +
                              " chunks exceed the Statistics' u32 count");
    if (!keyframed) return ok_status();
    std::sort(t.tiles.begin(), t.tiles.end(),
              [](const MergedTotals::Tile& a, const MergedTotals::Tile& b) {
                  return std::pair(a.state.t0, a.state.t1) < std::pair(b.state.t0, b.state.t1);
              });
    // The refusal, with the parts whose bytes it names (`first` may be null or `second`).
    auto untiled = [](Error e, const Part* first, const Part* second) {
        e.message = "the merged file's state chunks must tile its clock: " + e.message;
        if (first && first != second)
            e.message += "; the first chunk is in " + first->name + ", the second in ";
        else if (second)
            e.message += "; the bytes are in ";
        if (second) e.message += second->name;
        return e;
    };
    detail::TimelineTiling tiling;
    const Part* before = nullptr;
    for (const MergedTotals::Tile& tile : t.tiles) {
        if (Status st = tiling.next(tile.state); !st.ok())
            return untiled(st.error(), before, tile.part);
        before = tile.part;
    }
    if (Status st = tiling.end(duration); !st.ok()) return untiled(st.error(), nullptr, before);
    return ok_status();
}

// What the copy needs of a part other than the base is its index and window map: the rest
// goes, so that what stays in proportion to the parts is about the size of the summary.
void keep_only_indexes(std::vector<Part>& parts, const Part& base) {
    for (Part& p : parts)
        if (&p != &base) {
            p.quantization = {};
            p.header = {};
            p.extras = {};
            p.keyframe_advisory.reset();
            p.windows = {};
            p.tracks = {};
        }
}

// The base's records between the Window Table and the first chunk, in its order: copied
// verbatim a block at a time, but the object tracks joined across the parts, the shard record
// asked for, and the keyframe advisory with the merged figures.
Status write_base_records(FileAssembler& as, const Part& base, const Header& header,
                          const std::vector<ObjectTrack>& tracks, const MergedTotals& t,
                          const MergeOptions& options, MergeReport& report) {
    std::vector<std::uint8_t> block;
    bool tracks_written = false, shard_written = false;
    auto put_record = [&](const auto& record) {
        ByteWriter w;
        write(w, record);
        return as.put(w);
    };
    for (const Extra& e : base.extras) {
        if (options.shard && !shard_written && e.opcode != op::metadata) {
            FOURDGS_TRY(put_record(*options.shard));
            shard_written = true;
        }
        if (e.role == Extra::Role::track) {
            if (!tracks_written)
                for (const ObjectTrack& track : tracks) FOURDGS_TRY(put_record(track));
            tracks_written = true;
            continue;
        }
        if (e.role == Extra::Role::shard) {
            if (options.shard && !shard_written) FOURDGS_TRY(put_record(*options.shard));
            shard_written = true;
            continue;
        }
        if (e.role == Extra::Role::keyframe_advisory && base.keyframe_advisory) {
            ByteWriter w;
            write(w, keyframe_advisory(*base.keyframe_advisory, header.duration_sec, t.keyframes,
                                       t.depth));
            FOURDGS_TRY(as.put(w));
            continue;
        }
        for (std::uint64_t done = 0; done < e.length;) {
            const std::uint64_t n = std::min<std::uint64_t>(options.block_bytes, e.length - done);
            FOURDGS_TRY(fetch(base, e.offset + done, n, block));
            FOURDGS_TRY(as.put(Bytes(block)));
            done += n;
        }
        report.bytes_verbatim += e.length;
    }
    if (options.shard && !shard_written) FOURDGS_TRY(put_record(*options.shard));
    if (!tracks_written)
        for (const ObjectTrack& track : tracks) FOURDGS_TRY(put_record(track));
    return ok_status();
}

// The kept chunks, part by part in time order, each renumbered or patched as its part needs
// (Copier) and indexed at its new offset.
Status copy_chunks(FileAssembler& as, const std::vector<Part>& parts,
                   std::span<const std::size_t> order, const MergeOptions& options,
                   MergeReport& report) {
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
    return ok_status();
}

}  // namespace

Status merge_scenes(std::span<ByteSource* const> sources, const MergeOptions& options,
                    ByteSink& sink, MergeReport* report_out) {
    FOURDGS_TRY(check_merge_options(sources, options));
    MergeReport local;
    MergeReport& report = report_out ? *report_out : local;
    report = MergeReport{};

    std::vector<Part> parts;
    FOURDGS_TRY(open_parts(sources, options, parts));
    const std::vector<std::size_t> order = time_order(parts);
    const std::size_t base_index = options.base ? *options.base : order.front();
    const Part& base = parts[base_index];
    const bool keyframed = base.header.temporal_model == kModelKeyframeDelta;
    FOURDGS_ASSIGN(const std::optional<ShardSlice> merged_slice, merged_shard(options));
    FOURDGS_TRY(same_plan(parts, order, options, merged_slice));
    FOURDGS_TRY(check_parts_agree(parts, order, base, keyframed, options));
    FOURDGS_ASSIGN(const std::vector<ObjectTrack> tracks, joined_tracks(parts, order));
    const std::vector<WindowTable::Window> windows = union_windows(parts, base);
    MergedTotals totals;
    totals.aabb = base.header.aabb;
    FOURDGS_TRY(choose_chunks(parts, order, keyframed, merged_slice, report, totals));
    FOURDGS_TRY(check_merged_chunks(totals, keyframed, base.header.duration_sec));
    keep_only_indexes(parts, base);

    // The file: front, the base's records, the chunks part by part, the summary.
    Header header = base.header;
    header.gaussian_count = totals.gaussians;
    if (totals.any_aabb) header.aabb = totals.aabb;
    header.flags = static_cast<std::uint8_t>((header.flags & ~kHeaderFlagCompressed) |
                                             (totals.compressed ? kHeaderFlagCompressed : 0));
    FileAssembler as(sink);
    FOURDGS_TRY(as.begin(header, base.quantization, WindowTable{windows}));
    FOURDGS_TRY(write_base_records(as, base, header, tracks, totals, options, report));
    FOURDGS_TRY(copy_chunks(as, parts, order, options, report));
    const std::uint64_t summary_start = as.position();
    const Statistics stats{totals.gaussians, static_cast<std::uint32_t>(as.chunk_count()),
                           header.duration_sec, header.aabb};
    FOURDGS_TRY(as.finish(SummaryOptions{}, stats));
    report.base = base_index;
    report.chunks = static_cast<std::uint32_t>(as.chunk_count());
    report.bytes_written = as.position();
    report.summary_bytes = as.position() - summary_start - kTailSize;  // less the Footer and magic
    return ok_status();
}

Status merge_files(std::span<const std::string> paths, const std::string& output,
                   const MergeOptions& options, MergeReport* report) {
    std::vector<FileSource> files;
    files.reserve(paths.size());
    for (const std::string& path : paths) {
        FOURDGS_ASSIGN(FileSource file, FileSource::open(path));
        files.push_back(std::move(file));
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
