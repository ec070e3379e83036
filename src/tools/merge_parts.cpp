// The parts of a merge (merge_parts.hpp): reading each part's summary, front matter and extras,
// and the checks across parts.
#include "merge_parts.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <utility>

#include "fourdgs/front_matter.hpp"
#include "fourdgs/detail/index_check.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/portable.hpp"
#include "fourdgs/validate.hpp"

namespace fourdgs::merging {

using detail::HeldRecord;
using detail::RangeOrigin;
using detail::RecordFrame;
using detail::RecordStream;

Error bad_option(std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal::kInvalidOption, std::move(message));
}

std::optional<ShardSlice> read_shard(const Metadata& m, std::string& why) {
    ShardSlice out;
    auto find = [&](std::string_view key) -> const std::string* {
        for (const auto& [k, v] : m.entries)
            if (k == key) return &v;
        return nullptr;
    };
    auto time = [&](std::string_view key, double& t) {
        const std::string* v = find(key);
        if (v) {
            const auto res = fourdgs::from_chars(v->data(), v->data() + v->size(), t);
            if (res.ec == std::errc() && res.ptr == v->data() + v->size() && std::isfinite(t))
                return true;
        }
        why = "its 4dgs-shard Metadata has no number '" + std::string(key) + "'";
        return false;
    };
    auto whole = [&](std::string_view key, std::uint64_t& n) {
        const std::string* v = find(key);
        if (!v) return false;
        const auto res = std::from_chars(v->data(), v->data() + v->size(), n);
        if (res.ec == std::errc() && res.ptr == v->data() + v->size()) return true;
        why = "its 4dgs-shard Metadata's " + std::string(key) + " is '" + *v +
              "', not a whole number";
        return false;
    };
    if (!time("t0", out.t0) || !time("t1", out.t1)) return std::nullopt;
    const bool first = whole("first_frame", out.first_frame);
    const bool end = whole("end_frame", out.end_frame);
    const bool frames = whole("frames", out.frames);
    if (!why.empty()) return std::nullopt;
    out.frames_known = first && end && frames;
    if (out.frames_known && !(out.first_frame < out.end_frame && out.end_frame <= out.frames)) {
        why = "its 4dgs-shard Metadata names frames [" + std::to_string(out.first_frame) + ", " +
              std::to_string(out.end_frame) + ") of " + std::to_string(out.frames);
        return std::nullopt;
    }
    whole("shard_format", out.format);
    if (!why.empty()) return std::nullopt;
    return out;
}

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
// Records are framed by the core's record layer (detail/record_stream.hpp): the walk of a part by a
// RecordStream confined to its records, each indexed record by its fetcher's fetch_framed.

// [offset, offset + length) of the part into `out` (replaced): bytes of records already framed.
Status fetch(const Part& p, std::uint64_t offset, std::uint64_t length,
             std::vector<std::uint8_t>& out) {
    if (auto st = p.fetcher->fetch(offset, length, out); !st.ok())
        return invalid_part(p, st.error());
    return ok_status();
}

// The whole record an index entry frames at [offset, offset + length), which must be one
// `opcode` record (index-record-mismatch naming the entry's field otherwise), appended to `out`.
Result<RecordView> fetch_record(const Part& p, std::uint64_t offset, std::uint64_t length,
                                std::uint8_t opcode, std::vector<std::uint8_t>& out,
                                RangeOrigin origin) {
    auto r = p.fetcher->fetch_framed_append(offset, length, opcode, out, origin);
    if (!r.ok()) return invalid_part(p, r.error());
    return *r;
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

// Whether the merged file takes a part's record of this kind as it is. The merge writes its own
// Header, Quantization and Window Table (the front records a file has exactly one of), its own
// chunks and summary, and the Footer; every other record, named by the specification or not
// (private, unknown), is carried over.
bool carried_over(std::uint8_t opcode) {
    const RecordKind* row = find_record_kind(opcode);
    if (!row) return true;
    const bool ahead_of_chunks = row->role == RecordRole::front || row->role == RecordRole::payload;
    return ahead_of_chunks && row->keying != RecordKeying::once;
}

// The key of an extra record: its kind and, where records of the kind are told apart, its name or
// id ("Metadata 'title'", "Object Track 7", "Camera"). Reads at most the first kMaxKeyBytes + 4
// content bytes of the record at `frame`; the stream stays at it.
Result<std::string> extra_key(const Part& p, RecordStream& records, const RecordFrame& frame,
                              HeldRecord& held) {
    const std::string kind = opcode_name(frame.opcode);
    const RecordKind* row = find_record_kind(frame.opcode);
    if (!row || row->named_by.empty()) return kind;
    const bool by_name = row->named_by_string();
    if (frame.content_length < 4)
        return part_problem(p, refusal::kRecordTooShort,
                            kind + " record without its " + (by_name ? "name" : "id"),
                            frame.offset);
    if (auto st = records.read_prefix(frame, 4 + (by_name ? kMaxKeyBytes : 0), held); !st.ok())
        return invalid_part(p, st.error());
    const Bytes content = held.view.content;
    const std::uint64_t n = read_le32(content.data());
    if (!by_name) return kind + " " + std::to_string(n);
    if (n > frame.content_length - 4)
        return part_problem(p, refusal::kRecordTooShort, kind + " record whose name runs past it",
                            frame.offset);
    std::string name(content.begin() + 4,
                     content.begin() + 4 + static_cast<std::ptrdiff_t>(std::min(n, kMaxKeyBytes)));
    if (n > kMaxKeyBytes) name += "...(" + std::to_string(n) + " bytes)";
    return kind + " '" + name + "'";
}

// Every record of the part, by its frame, up to the Footer: the extras, and the shard's slice.
// Metadata the merge reads (the shard's slice, the keyframe writer's advisory) is read whole, up
// to kMaxMetadataBytes (limit-exceeded past it); every other record only as far as its key.
Status walk_records(Part& p) {
    RecordStream records(*p.source, kMaxMetadataBytes);
    records.confine({p.size - kMagicSize, refusal::kTruncated, "the trailing magic", ""});
    std::map<std::string, int> seen;
    HeldRecord held;
    while (true) {
        auto next = records.next_frame();
        if (!next.ok()) return invalid_part(p, next.error());
        if (!*next || (*next)->opcode == op::footer) return ok_status();
        const RecordFrame frame = **next;
        if (!carried_over(frame.opcode)) {
            records.skip(frame);
            continue;
        }
        Extra e;
        e.opcode = frame.opcode;
        e.offset = frame.offset;
        e.length = frame.total_length();
        FOURDGS_ASSIGN(e.key, extra_key(p, records, frame, held));
        if (const int n = seen[e.key]++; n > 0) e.key += " (#" + std::to_string(n + 1) + ")";
        const bool shard = e.key == "Metadata '" + std::string(kShardMetadata) + "'";
        const bool advisory = e.key == "Metadata '" + std::string(kKeyframeMetadata) + "'";
        const bool converted = e.key == "Metadata '" + std::string(kConvertMetadata) + "'";
        if (frame.opcode == op::object_track) e.role = Extra::Role::track;
        if (shard || advisory || converted) {
            if (auto st = records.read_content(frame, held); !st.ok())
                return invalid_part(p, st.error());
            auto m = parse_metadata(held.view);
            if (!m.ok()) return invalid_part(p, m.error());
            if (shard) {
                e.role = Extra::Role::shard;
                std::string why;
                const auto slice = read_shard(*m, why);
                if (!slice) return part_problem(p, refusal::kInvalidPart, why, e.offset);
                p.shard = *slice;
                p.t0 = slice->t0;
                p.t1 = slice->t1;
                p.declared_slice = true;
            } else if (advisory) {
                e.role = Extra::Role::keyframe_advisory;
                p.keyframe_advisory = std::move(*m);
            } else {
                for (const auto& [k, v] : m->entries)
                    if (k == "plan") p.plan = v;
            }
        } else {
            records.skip(frame);
        }
        p.extras.push_back(std::move(e));
    }
}

Status open_part(Part& p, const MergeOptions& options) {
    if (!p.source->random_access() || !p.source->size())
        return bad_option(p.name + " is not a random-access source of known size");
    p.size = *p.source->size();
    p.fetcher.emplace(*p.source, whole_record_size(ReaderOptions{}.max_record_bytes));
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
    p.chunks_end = s.footer && s.footer->summary_start != 0 ? s.footer->summary_start : p.size;
    p.tracks = s.object_tracks;
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
        FOURDGS_TRY(fetch(a, x.offset + done, n, ba));
        FOURDGS_TRY(fetch(b, y.offset + done, n, bb));
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

// Shards of one plan: each of this build's shard format, all converted on one plan (the one
// `options` names, when it names one), and, when every part says which frames of the plan it
// holds, covering `want` — the merged shard's slice, or every frame.
Status same_plan(std::span<const Part> parts, std::span<const std::size_t> order,
                 const MergeOptions& options, const std::optional<ShardSlice>& merged) {
    // A record that names its frames is convert's; one without shard_format, an older build's.
    for (const Part& p : parts)
        if (p.declared_slice && p.shard.frames_known && p.shard.format != kShardFormat)
            return make_error(ErrorKind::invalid_argument, refusal::kShardVersionMismatch,
                              p.name + "'s 4dgs-shard record is format " +
                                  std::to_string(p.shard.format) + " (written by " +
                                  (p.shard.format < kShardFormat ? "an older" : "a newer") +
                                  " build) where this build merges format " +
                                  std::to_string(kShardFormat) +
                                  ": encode its slice again with this build")
                .about(p.name, std::to_string(p.shard.format));
    auto plan_of = [](const Part& p) { return p.plan.empty() ? std::string("no plan") : p.plan; };
    const Part* planned = nullptr;
    for (const Part& p : parts)
        if (!p.plan.empty() && !planned) planned = &p;
    for (const Part& p : parts) {
        if (!options.plan_digest.empty() && p.plan != options.plan_digest)
            return make_error(ErrorKind::invalid_argument, refusal::kPlanMismatch,
                              p.name + " was converted on " + plan_of(p) + ", not on the plan " +
                                  options.plan_digest + " given")
                .about(p.name, plan_of(p));
        if (planned && p.plan != planned->plan)
            return make_error(ErrorKind::invalid_argument, refusal::kPlanMismatch,
                              p.name + " was converted on " + plan_of(p) + " but " +
                                  planned->name + " on " + planned->plan +
                                  ": the parts are shards of two plans (encode every shard on "
                                  "one plan)")
                .about(p.name, plan_of(p));
    }
    // Coverage: only where every part names its frames.
    for (const Part& p : parts)
        if (!p.declared_slice || !p.shard.frames_known) return ok_status();
    const std::uint64_t frames = parts[order.front()].shard.frames;
    for (const Part& p : parts)
        if (p.shard.frames != frames || (merged && merged->frames_known && merged->frames != frames))
            return make_error(ErrorKind::invalid_argument, refusal::kPlanMismatch,
                              p.name + " is a slice of " + std::to_string(p.shard.frames) +
                                  " frames but " + parts[order.front()].name + " of " +
                                  std::to_string(frames))
                .about(p.name, std::to_string(p.shard.frames));
    const std::uint64_t want_first = merged && merged->frames_known ? merged->first_frame : 0;
    const std::uint64_t want_end = merged && merged->frames_known ? merged->end_frame : frames;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> held;
    for (const Part& p : parts) held.push_back({p.shard.first_frame, p.shard.end_frame});
    std::sort(held.begin(), held.end());
    std::uint64_t at = want_first;
    auto gap = [&](std::uint64_t from, std::uint64_t to) {
        std::string list;
        for (const auto& [a, b] : held) {
            if (!list.empty()) list += ", ";
            list += '[';
            list += std::to_string(a);
            list += ", ";
            list += std::to_string(b);
            list += ')';
        }
        return make_error(ErrorKind::invalid_argument, refusal::kMissingSlice,
                          "no part holds frames [" + std::to_string(from) + ", " +
                              std::to_string(to) + ") of the " + std::to_string(frames) +
                              " the parts are slices of (they hold " + list +
                              "): encode that slice and merge again")
            .about("frames", std::to_string(from) + ":" + std::to_string(to));
    };
    for (const auto& [a, b] : held) {
        if (a > at) return gap(at, a);
        at = std::max(at, b);
    }
    if (at < want_end) return gap(at, want_end);
    return ok_status();
}

// The parts' Object Tracks joined per object, in ascending object id: the union of their samples
// in time order, one copy of a sample parts share (a shard carries its slice's samples). A
// different interpolation, or different poses at one time, is conflicting-extras.
Result<std::vector<ObjectTrack>> joined_tracks(std::span<const Part> parts,
                                               std::span<const std::size_t> order) {
    std::map<std::uint32_t, std::pair<ObjectTrack, const Part*>> by_id;
    for (std::size_t i : order) {
        const Part& p = parts[i];
        for (const ObjectTrack& t : p.tracks) {
            auto [it, fresh] = by_id.try_emplace(t.object_id, t, &p);
            if (fresh) continue;
            ObjectTrack& joined = it->second.first;
            const Part& first = *it->second.second;  // named: clang 14 cannot capture `it`
            const std::string key = "Object Track " + std::to_string(t.object_id);
            auto conflict = [&](const std::string& what) {
                return make_error(ErrorKind::invalid_argument, refusal::kConflictingExtras,
                                  key + " differs between " + p.name + " and " + first.name +
                                      ": " + what)
                    .about(key, p.name);
            };
            if (t.interpolation != joined.interpolation)
                return conflict("another interpolation");
            std::vector<TrajectorySample> samples;
            samples.reserve(joined.samples.size() + t.samples.size());
            std::size_t a = 0, b = 0;
            while (a < joined.samples.size() || b < t.samples.size()) {
                if (b == t.samples.size() ||
                    (a < joined.samples.size() && joined.samples[a].time < t.samples[b].time)) {
                    samples.push_back(joined.samples[a++]);
                } else if (a == joined.samples.size() ||
                           t.samples[b].time < joined.samples[a].time) {
                    samples.push_back(t.samples[b++]);
                } else {
                    if (!(joined.samples[a] == t.samples[b]))
                        return conflict("another pose at t = " + num(t.samples[b].time));
                    samples.push_back(joined.samples[a++]);
                    ++b;
                }
            }
            joined.samples = std::move(samples);
        }
    }
    std::vector<ObjectTrack> out;
    for (auto& [id, track] : by_id) out.push_back(std::move(track.first));
    return out;
}

}  // namespace fourdgs::merging
