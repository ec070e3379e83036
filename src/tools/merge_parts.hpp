// The parts of a merge (merge.cpp): what each part holds once read (its front matter, summary
// and the records merge carries over), how it is read, and the checks that the parts are slices
// of one scene on one grid. Internal to the tools library; merge_parts.cpp implements it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fourdgs/detail/record_stream.hpp"
#include "fourdgs/error.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/tools/merge.hpp"

namespace fourdgs::merging {

constexpr std::string_view kShardMetadata = "4dgs-shard";
constexpr std::string_view kKeyframeMetadata = "keyframe-delta";
constexpr std::string_view kConvertMetadata = "4dgs-convert";
// A record's key (its name) is read up to this many bytes; longer names still match by content.
constexpr std::uint64_t kMaxKeyBytes = 4096;
// Metadata records are parsed whole (the shard's slice, the keyframe writer's advisory).
constexpr std::uint64_t kMaxMetadataBytes = 1 << 20;

// A number as the messages write it.
inline std::string num(double v) { return detail::fmt(v); }

Error bad_option(std::string message);

// One record of a part that is neither front (Header, Quantization, Window Table), chunk, band,
// summary nor Footer: the base part's are copied, the others compared with them.
struct Extra {
    enum class Role : std::uint8_t { copy, shard, keyframe_advisory, track };
    std::uint8_t opcode = 0;
    std::string key;  // names the record in messages and matches it across parts
    std::uint64_t offset = 0, length = 0;  // the whole record
    Role role = Role::copy;
};

// A "4dgs-shard" record (convert.hpp): the slice [first_frame, end_frame) of a plan's `frames`
// (when given: records of the first builds had only t0 and t1) and its format version.
struct ShardSlice {
    double t0 = 0, t1 = 0;
    bool frames_known = false;
    std::uint64_t first_frame = 0, end_frame = 0, frames = 0;
    std::uint64_t format = 1;  // shard_format; 1 where absent
};

// Reads a 4dgs-shard record; `why` says what is wrong when it returns nullopt.
std::optional<ShardSlice> read_shard(const Metadata& m, std::string& why);

struct Part {
    ByteSource* source = nullptr;
    std::optional<detail::RangeFetcher> fetcher;  // the source's indexed records and ranges
    std::string name;
    std::uint64_t size = 0;
    std::uint64_t chunks_end = 0;  // where its chunks end: its summary, else the end of the file
    Header header;
    Quantization quantization;
    std::vector<WindowTable::Window> windows;
    std::vector<ChunkIndex> index;  // in file order
    std::vector<Extra> extras;
    std::optional<Metadata> keyframe_advisory;
    std::vector<ObjectTrack> tracks;  // joined across parts, not compared
    std::string plan;                 // the plan it was converted on ("4dgs-convert"), or ""
    double t0 = 0, t1 = 0;  // the slice
    bool declared_slice = false;
    ShardSlice shard;  // what its 4dgs-shard record says (declared_slice)
    std::vector<std::uint32_t> window_map;  // local window index → merged
    bool windows_move = false;
    std::vector<bool> keep;  // per index entry
};

Error invalid_part(const Part& p, const Error& e);

Error part_problem(const Part& p, std::string_view refusal, std::string message,
                   std::uint64_t offset);

// [offset, offset + length) of the part into `out` (replaced): bytes of records already framed.
Status fetch(const Part& p, std::uint64_t offset, std::uint64_t length,
             std::vector<std::uint8_t>& out);

// The whole record an index entry frames at [offset, offset + length), which must be one
// `opcode` record (index-record-mismatch naming the entry's field otherwise), appended to `out`.
Result<RecordView> fetch_record(const Part& p, std::uint64_t offset, std::uint64_t length,
                                std::uint8_t opcode, std::vector<std::uint8_t>& out,
                                detail::RangeOrigin origin = {});

// Makes room for `need` bytes in `buf`, keeping its (small) contents, without the doubling growth
// of a vector, which would hold up to twice the largest chunk for the rest of the merge.
void reserve_exact(std::vector<std::uint8_t>& buf, std::uint64_t need);

// Reads part `p` (its source set): its summary, front matter and the records merge carries over.
Status open_part(Part& p, const MergeOptions& options);

// `p` is a slice of `base`'s scene (scene-mismatch), on its grid (grid-mismatch), with the same
// extras (conflicting-extras; ba and bb are scratch blocks of `block` bytes).
Status same_scene(const Part& base, const Part& p);
Status same_grid(const Part& base, const Part& p);
Status same_extras(const Part& base, const Part& p, std::vector<std::uint8_t>& ba,
                   std::vector<std::uint8_t>& bb, std::size_t block);

// Shards of one plan: each of this build's shard format, all converted on one plan (the one
// `options` names, when it names one), and, when every part says which frames of the plan it
// holds, covering `want` — the merged shard's slice, or every frame.
Status same_plan(std::span<const Part> parts, std::span<const std::size_t> order,
                 const MergeOptions& options, const std::optional<ShardSlice>& merged);

// The parts' Object Tracks joined per object, in ascending object id: the union of their samples
// in time order, one copy of a sample parts share (a shard carries its slice's samples). A
// different interpolation, or different poses at one time, is conflicting-extras.
Result<std::vector<ObjectTrack>> joined_tracks(std::span<const Part> parts,
                                               std::span<const std::size_t> order);

}  // namespace fourdgs::merging
