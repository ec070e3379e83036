// The Validator's chunks (validator.hpp): each Chunk or Delta Chunk is held with its SH band
// records and decoded when the next other record arrives (one chunk in memory at a time), for
// the totals and the decoded-value advice. After the walk, the keyframe-delta states are composed
// once more (§11.3-§11.7) and the totals are held against the Header and Statistics.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "validator.hpp"

#include "fourdgs/detail/chunk_walk.hpp"
#include "fourdgs/detail/index_check.hpp"
#include "fourdgs/detail/keyframe_composition.hpp"
#include "fourdgs/detail/record_stream.hpp"
#include "format/record_keying.hpp"

namespace fourdgs::validation {

using detail::ChunkBands;
using detail::FramedChunk;
using detail::HeldRecord;
using detail::decode_state_chunk_bins;
using detail::delta_chunk_in_model;
using detail::orphan_sh_band;
using detail::parse_state_chunk;

// ---------------------------------------------------------------------------------------------
// Chunks: held with their SH band records, decoded when the next other record arrives.

void Validator::begin_chunk(HeldRecord& held) {
    (void)builder_.seal(held.view.offset);
    std::swap(chunk_, held);
    chunk_pending_ = true;
    chunk_bands_ = {};
}

void Validator::absorb_band(HeldRecord& held) {
    std::vector<ShBandRecord>& gathered = chunk_bands_.bands;
    // A chunk has three bands at most: a fourth band record follows no chunk (the streaming
    // reader stops collecting bands at three and meets it alone).
    if (!chunk_pending_ || gathered.size() == band_slots_.size()) {
        report_refusal(orphan_sh_band(held.view.offset), record_name(op::sh_band),
                       held.view.offset);
        return;
    }
    // Held in the next free slot, so the band gathered views bytes that stay until the flush.
    HeldRecord& slot = band_slots_[gathered.size()];
    std::swap(slot, held);
    const RecordView& r = slot.view;
    if (!take(chunk_bands_.add(r), r)) return;
    // Every band the chunk carries is found once among them, so each repeat is refused (the
    // decoder refuses only the ones it reads).
    const std::span<const ChunkIndex::Band> ranges(chunk_bands_.ranges);
    const std::uint64_t chunk_at = chunk_.view.offset;
    auto once = find_in_chunk<op::sh_band>(ranges, ranges.back().band, &ChunkIndex::Band::band,
                                           &ChunkIndex::Band::offset, [chunk_at] {
                                               return "the chunk at byte " +
                                                      std::to_string(chunk_at) +
                                                      " is followed by";
                                           });
    if (!take(once, r)) {
        // Not gathered: the slot is free for the next band record.
        gathered.pop_back();
        chunk_bands_.ranges.pop_back();
    }
    // add() refuses bands outside 1..3, so three distinct ones fill the slots.
}

// The held chunk and its bands, once the next other record shows no more bands follow.
void Validator::flush_chunk() {
    if (!chunk_pending_) return;
    chunk_pending_ = false;
    ++report_.chunks;
    ChunkBands bands = std::exchange(chunk_bands_, {});
    check_state_chunk(chunk_.view, bands);
}

// A Chunk or a Delta Chunk (a Delta Chunk allowed only in a keyframe-delta file), parsed and
// decoded through the readers' one dispatch (detail/keyframe_composition.hpp): its interval, its
// framing, then its gaussians decoded, for the totals and the decoded-value advice, or, in a
// keyframe-delta file, for the ids it carries.
void Validator::check_state_chunk(const RecordView& r, ChunkBands& bands) {
    const bool keyframe_delta =
        scene_.has_header && scene_.header.temporal_model == kModelKeyframeDelta;
    if (r.opcode == op::delta_chunk && scene_.has_header && !keyframe_delta)
        report_refusal(delta_chunk_in_model(scene_.header.temporal_model, r.offset),
                       record_name(op::delta_chunk), r.offset);
    auto parsed = parse_state_chunk(r);
    if (!take_chunk(parsed, r)) return;
    const std::optional<ChunkRecord>& chunk = parsed->chunk;
    if (chunk) {
        check_finite("Chunk.t0", chunk->t0, r.content_offset(),
                     "a chunk's interval is a span of time (§5.5)");
        check_finite("Chunk.t1", chunk->t1, r.content_offset() + 8,
                     "a chunk's interval is a span of time (§5.5)");
    }
    FramedChunk framed = FramedChunk::of(r, *parsed);
    framed.bands = std::move(bands.ranges);
    if (!note_chunk(r, std::move(framed),
                    chunk ? "Chunk.compression" : "Delta Chunk.compression",
                    chunk ? chunk->compression : parsed->delta->compression))
        return;
    Status st = decode_state_chunk_bins(scene_, *parsed, bands.bands, reader_.decode, bins_,
                                        delta_bins_, scratch_);
    if (!take_chunk(st, r)) return;
    if (!chunk) return note_ids(delta_bins_.births.gaussian_id);
    if (keyframe_delta) return note_ids(bins_.gaussian_id);
    gaussians_ += bins_.count;
    if (!scene_.has_quantization) {
        aabb_valid_ = false;
        return;
    }
    block_.clear();
    dequantize(scene_, bins_, block_);
    check_decoded(block_, "Chunk at byte " + std::to_string(r.offset), r.offset);
    for (std::size_t i = 0; i < block_.count; ++i)
        for (int k = 0; k < 3; ++k) {
            const double v = block_.position[i * 3 + k];
            if (!aabb_known_ || v < aabb_[k]) aabb_[k] = v;
            if (!aabb_known_ || v > aabb_[3 + k]) aabb_[3 + k] = v;
            if (k == 2) aabb_known_ = true;
        }
}

// The framing of a Chunk or Delta Chunk that parsed (checked against the index at the end), and
// its compression string. Whether to decode it.
bool Validator::note_chunk(const RecordView& r, FramedChunk framed,
                           std::string_view compression_field, const std::string& compression) {
    chunks_.push_back(std::move(framed));
    check_utf8(compression_field, compression, r.offset);
    if (!compression.empty()) compressed_chunk_seen_ = true;
    return options_.decode_chunks;
}

// Keyframe-delta gaussian ids seen, for the distinct count (up to 2^24 of them).
void Validator::note_ids(const std::vector<std::int32_t>& ids) {
    for (std::int32_t id : ids) {
        if (ids_.size() >= (std::size_t{1} << 24)) {
            ids_capped_ = true;
            return;
        }
        ids_.insert(static_cast<std::uint32_t>(id));
    }
}

// §3, §6: a decoded attribute that is not finite (a finite but huge quantization step or origin
// multiplies a bin past the range of f32, or exp of a huge log-domain value overflows). Readers
// decode it as written and a renderer cannot draw it; the specification requires the parameters
// to be finite (an error above, and then their attributes are not reported again) but says
// nothing of the decoded values, so each is a warning: per record and attribute, naming the first
// gaussian, its value and how many gaussians of the record have one. With `once`, an attribute
// named there is not checked, and one reported is added (keyframe-delta states carry the same
// gaussians from state to state: the first state that has one is named).
void Validator::check_decoded(const GaussianBlock& b, std::string_view record, std::uint64_t at,
                              std::set<std::string>* once) {
    if (!scene_.has_quantization) return;
    const Quantization& q = scene_.quantization;
    struct Attribute {
        const char* name;
        const Column<float> GaussianBlock::*column;
        std::size_t per;
        std::initializer_list<double> params;  // what it is computed from
        const char* from;
    };
    const Attribute attributes[] = {
        {"position", &GaussianBlock::position, 3,
         {q.pos_origin[0], q.pos_origin[1], q.pos_origin[2], q.step_pos},
         "pos_origin + step_pos x bin"},
        {"scale", &GaussianBlock::scale, 3, {q.step_scale_log}, "exp(step_scale_log x bin)"},
        {"rotation", &GaussianBlock::rotation, 4, {q.step_rot}, "step_rot x bin, smallest three"},
        {"color", &GaussianBlock::color, 4, {q.step_rgb, q.step_alpha},
         "step_rgb, step_alpha x bin"},
        {"motion", &GaussianBlock::motion, 3, {q.step_motion, q.step_sigma_log},
         "step_motion x 2^-class x bin"},
        {"mu_t", &GaussianBlock::mu_t, 1, {q.step_time, q.step_sigma_log},
         "step_time x 2^class x bin"},
        {"sigma_t", &GaussianBlock::sigma_t, 1, {q.step_sigma_log}, "exp(step_sigma_log x bin)"}};
    for (const Attribute& a : attributes) {
        if (once && once->count(a.name)) continue;
        if (!std::all_of(a.params.begin(), a.params.end(),
                         [](double v) { return std::isfinite(v); }))
            continue;
        const Column<float>& column = b.*a.column;
        std::size_t first = b.count, component = 0, gaussians = 0;
        for (std::size_t i = 0; i < b.count && a.per * (i + 1) <= column.size(); ++i) {
            bool bad = false;
            for (std::size_t c = 0; c < a.per; ++c) {
                const float v = column[i * a.per + c];
                // +inf sigma_t is a never-fading gaussian's (flags bit 0), not a value.
                const bool never = a.column == &GaussianBlock::sigma_t && v > 0 &&
                                   (b.flags[i] & kFlagNeverFades) != 0;
                if (std::isfinite(v) || never) continue;
                if (!bad && first == b.count) {
                    first = i;
                    component = c;
                }
                bad = true;
            }
            gaussians += bad;
        }
        if (gaussians == 0) continue;
        const float value = column[first * a.per + component];
        // "[c]" for a vector attribute; built by appending (GCC 12 misreads "[" + string&& as an
        // overlapping copy under -Wrestrict once this is inlined).
        std::string element;
        if (a.per > 1) {
            element = std::to_string(component);
            element.insert(element.begin(), '[');
            element.push_back(']');
        }
        const std::string field =
            std::string(record.substr(0, record.find(" at byte"))) + "." + a.name + element;
        warning(refusal::kNonFiniteValue, field, num(value), at,
                "gaussian " + std::to_string(first) + " of the " + std::string(record) +
                    " decodes " + a.name + element +
                    " too " + num(value) + " (" + a.from + "); " + std::to_string(gaussians) +
                    " of its " + std::to_string(b.count) + " gaussians have a non-finite " +
                    a.name + ", which a renderer cannot draw (§3, §6)");
        if (once) once->insert(a.name);
    }
}

// §11.3-§11.7: the composition rules need the population a delta composes onto, which the
// walk does not keep. A keyframe-delta file on a re-readable source is read once more by the
// streaming keyframe-delta front-end, and its first refusal reported (a §11.1/§11.8 fault the
// timeline met in the Chunk Index already is the same finding, word for word).
void Validator::check_composition() {
    if (!keyframe_delta_ || !options_.decode_chunks || !source_.random_access() || full()) return;
    KeyframeDeltaStream stream(source_, reader_);
    std::optional<Error> refused;
    if (Status st = stream.open(); !st.ok()) {
        refused = st.error();
    } else {
        ChunkBins bins;
        StateInfo info;
        std::set<std::string> reported;  // decoded attributes found non-finite in an earlier state
        while (true) {
            auto next = stream.next_state_bins(bins, &info);
            if (!next.ok()) {
                refused = next.error();
                break;
            }
            if (!*next) break;
            block_.clear();
            dequantize(stream.scene(), bins, block_);
            const std::string_view kind =
                record_name(info.chunk_kind == kChunkKindDelta ? op::delta_chunk : op::chunk);
            check_decoded(block_,
                          std::string(kind) + " at byte " + std::to_string(info.offset) +
                              " (its composed state)",
                          info.offset, &reported);
        }
    }
    if (!refused || refused->kind == ErrorKind::truncated || refused->kind == ErrorKind::io) return;
    report_refusal(*refused, record_name(op::delta_chunk), kNoOffset);
}

// §5.1 gaussian_count and §5.12 Statistics against what the chunks hold. Statistics is advisory
// (M036): a lie there is a warning; the Header's total is a field of the format: an error.
void Validator::check_statistics() {
    // The totals need every chunk decoded; the record counts and the duration do not.
    const bool complete = options_.decode_chunks && !decode_failed_ && !report_.truncated;
    std::optional<std::uint64_t> computed;
    if (complete && !keyframe_delta_) computed = gaussians_;
    else if (complete && !ids_capped_) computed = ids_.size();
    if (computed && scene_.has_header && scene_.header.gaussian_count != *computed)
        error(refusal::kGaussianCountMismatch, "", std::to_string(scene_.header.gaussian_count),
              content_offset_of(header_offset()) + 4 + scene_.header.profile.size() + 4 +
                  scene_.header.library.size() + 8,
              "Header gaussian_count is " + std::to_string(scene_.header.gaussian_count) +
                  " but the chunks hold " + std::to_string(*computed) +
                  (keyframe_delta_ ? " distinct gaussian ids" : " gaussians"));
    if (!scene_.statistics) return;
    const Statistics& s = *scene_.statistics;
    const std::uint64_t at = content_offset_of(builder_.offsets().statistics);
    if (computed && s.gaussian_count != *computed)
        warning(refusal::kStatisticsMismatch, "Statistics.gaussian_count",
                std::to_string(s.gaussian_count), at,
                "Statistics gaussian_count is " + std::to_string(s.gaussian_count) +
                    " but the chunks hold " + std::to_string(*computed));
    if (!report_.truncated && s.chunk_count != chunks_.size())
        warning(refusal::kStatisticsMismatch, "Statistics.chunk_count",
                std::to_string(s.chunk_count), at + 8,
                "Statistics chunk_count is " + std::to_string(s.chunk_count) +
                    " but the file has " + std::to_string(chunks_.size()) + " chunk record(s)");
    if (scene_.has_header && s.duration_sec != scene_.header.duration_sec)
        warning(refusal::kStatisticsMismatch, "Statistics.duration_sec", num(s.duration_sec),
                at + 12,
                "Statistics duration_sec is " + num(s.duration_sec) + " but the Header says " +
                    num(scene_.header.duration_sec));
    if (complete && !keyframe_delta_ && aabb_known_ && aabb_valid_) {
        // Decoded positions differ from the originals by at most the grid's half step.
        const double tolerance = std::fabs(scene_.quantization.step_pos) + 1e-9;
        for (int k = 0; k < 6; ++k)
            if (!(std::fabs(s.aabb[k] - aabb_[k]) <= tolerance)) {
                warning(refusal::kStatisticsMismatch, "Statistics.aabb[" + std::to_string(k) + "]",
                        num(s.aabb[k]), at + 20 + 8 * static_cast<std::uint64_t>(k),
                        "Statistics aabb[" + std::to_string(k) + "] is " + num(s.aabb[k]) +
                            " but the decoded positions give " + num(aabb_[k]));
                break;
            }
    }
}

}  // namespace fourdgs::validation
