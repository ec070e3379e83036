// src/validate/validator.hpp (internal) — the Validator behind validate() (fourdgs/validate.hpp),
// one class whose passes are spread over the files that hold them, in the order run() takes them:
// validate.cpp          the findings, run() (the passes in order), the walk, the Footer and tail
// validate_records.cpp  the walk's records other than chunks: the SceneBuilder's rules and the
// validator's own advice on each record as it arrives   validate_chunks.cpp   the walk's chunks and
// their bands; after it, the composition of                         keyframe-delta states and the
// totals (Header, Statistics)   validate_index.cpp    the Chunk Index against the chunks, its seek
// structure, the summaries   validate_advice.cpp   the coordinate_system key, and the SHOULD-level
// advice last
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fourdgs/decode.hpp"
#include "fourdgs/extras.hpp"
#include "fourdgs/detail/chunk_bands.hpp"
#include "fourdgs/detail/chunk_walk.hpp"
#include "fourdgs/detail/findings.hpp"
#include "fourdgs/detail/index_check.hpp"
#include "fourdgs/detail/keyframe_composition.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/detail/record_stream.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/text.hpp"
#include "fourdgs/validate.hpp"
#include "fourdgs/wire.hpp"

namespace fourdgs::validation {

// An opcode or flag byte as the findings spell it: 0x0E.
inline std::string hex_byte(std::uint8_t v) {
    static const char* hex = "0123456789ABCDEF";
    return std::string{'0', 'x', hex[v >> 4], hex[v & 15]};
}

// A number as the findings spell it (text.hpp).
inline std::string num(double v) { return detail::fmt(v); }

// Where a metadata key was found: its value and the offset of the record carrying it.
struct KeySeen {
    std::string value;
    std::uint64_t offset = 0;
};

class Validator {
public:
    Validator(ByteSource& source, const ValidateOptions& options)
        : source_(source), options_(options), reader_(collect_options(options.reader)),
          // Each rule a record breaks is a finding about the record the builder is given.
          builder_(reader_, [this](Error e) { return collected(e, current_record_); }),
          stream_(source, reader_.max_record_bytes) {}

    Result<ValidationReport> run();

private:
    static ReaderOptions collect_options(ReaderOptions o) {
        o.accept_keyframe_delta = true;
        return o;
    }

    // ---- findings
    bool full() const { return report_.findings_capped; }
    void add(Severity severity, std::string_view rule, std::string field, std::string value,
             std::uint64_t offset, std::string message);
    void error(std::string_view rule, std::string field, std::string value, std::uint64_t offset,
               std::string message) {
        add(Severity::error, rule, std::move(field), std::move(value), offset, std::move(message));
    }
    void warning(std::string_view rule, std::string field, std::string value,
                 std::uint64_t offset, std::string message) {
        add(Severity::warning, rule, std::move(field), std::move(value), offset,
            std::move(message));
    }
    // A refusal from a parser, a decoder or a cross-record check, as the layer that refused named
    // it: its field and value are the Error's own (error.hpp), else the field its identifier
    // names (refusals.hpp), else `record`, the record it is about ("" when unknown).
    void report_refusal(const Error& e, std::string_view record, std::uint64_t record_offset) {
        const RefusalInfo* info = find_refusal(e.refusal);
        std::string field = e.field;
        if (field.empty() && !(info && !info->field.empty())) field = std::string(record);
        add(Severity::error, e.refusal, std::move(field), e.value,
            e.has_offset() ? e.offset : record_offset, e.message);
    }
    // Where a reader's step run in collect mode (detail/findings.hpp) sends each refusal: a
    // finding about `record`, at the refusal's own offset. Goes on until the report is full.
    bool collected(const Error& e, std::string_view record) {
        report_refusal(e, record, kNoOffset);
        return !full();
    }
    ReportFn about(std::string_view record) {
        return [this, record](Error e) { return collected(e, record); };
    }
    template <class T>
    bool take(Result<T>& r, const RecordView& v) {
        if (r.ok()) return true;
        report_refusal(r.error(), opcode_name(v.opcode), v.offset);
        return false;
    }
    bool take(const Status& s, const RecordView& v) {
        if (s.ok()) return true;
        report_refusal(s.error(), opcode_name(v.opcode), v.offset);
        return false;
    }

    // take(), for a chunk: one that does not parse or decode leaves the computed totals partial.
    template <class R>
    bool take_chunk(R& r, const RecordView& v) {
        if (take(r, v)) return true;
        decode_failed_ = true;
        return false;
    }

    // ---- the walk
    void walk(Status& io);
    void end_at_cut(const Error& e, Status& io);
    void absorb(const RecordView& r);
    void absorb_band(detail::HeldRecord& held);
    void begin_chunk(detail::HeldRecord& held);
    void flush_chunk();
    void check_state_chunk(const RecordView& r, detail::ChunkBands& bands);
    bool note_chunk(const RecordView& r, detail::FramedChunk framed,
                    std::string_view compression_field, const std::string& compression);
    void note_ids(const std::vector<std::int32_t>& ids);
    bool after_footer(const RecordView& r, Status& io);  // true: keep walking
    void check_footer(const RecordView& r);
    bool check_tail(const RecordView& r, Status& io);  // true: keep walking
    void progress(std::uint64_t at) {
        if (options_.progress && at >= next_progress_) {
            options_.progress(at, report_.file_size);
            next_progress_ = at + kProgressStep;
        }
    }

    // ---- rules that span records
    void check_quantization_values(const Quantization& q, std::uint64_t at);
    void check_camera(const RecordView& r);
    void check_rig_clock(const RigTrajectory& rig, const RecordView& r);
    // §2: a string that is not UTF-8 (readers keep its bytes; text.hpp spells them for JSON).
    void check_utf8(std::string_view field, std::string_view value, std::uint64_t record_at);
    void check_windows(const RecordView& table);
    void check_finite(std::string field, double v, std::uint64_t at, std::string_view why);
    void check_header_aabb(const RecordView& header);
    void check_decoded(const GaussianBlock& b, std::string_view record, std::uint64_t at,
                       std::set<std::string>* once = nullptr);
    void check_index();
    void check_index_entries();
    void check_keyframe_timeline();
    void check_summary_groups();
    void check_index_by_tail();
    void check_composition();
    void check_statistics();
    void check_advice();
    void check_coordinate_system();
    std::uint64_t header_offset() const { return builder_.offsets().header; }
    // The first Metadata entry named `key`, in file order.
    std::optional<KeySeen> metadata_key(std::string_view key) const;

    static constexpr std::uint64_t kProgressStep = std::uint64_t{4} << 20;

    ByteSource& source_;
    const ValidateOptions& options_;
    ReaderOptions reader_;
    ValidationReport report_;
    std::set<std::tuple<std::string, std::uint64_t, std::string>> stated_;  // rule, offset, message
    std::uint64_t next_progress_ = 0;
    std::optional<std::uint64_t> size_;

    SceneBuilder builder_;                    // collect mode: every rule broken is a finding
    SceneInfo& scene_ = builder_.scene();     // the scene it assembles
    detail::RecordStream stream_;
    std::string current_record_;              // the record the builder is given, for findings
    bool keyframe_delta_ = false;
    std::vector<RecordEntry> private_records_;

    // Chunks and their bands, the tail.
    detail::HeldRecord chunk_;    // the pending Chunk or Delta Chunk, decoded when its bands are in
    bool chunk_pending_ = false;
    detail::ChunkBands chunk_bands_;  // its SH band records, gathered as they arrive
    std::array<detail::HeldRecord, 3> band_slots_;  // the bytes chunk_bands_ views
    std::vector<detail::FramedChunk> chunks_;  // what each said of itself, file order
    std::optional<Footer> footer_;
    std::uint64_t footer_offset_ = 0;
    bool compressed_chunk_seen_ = false;

    // What the chunks computed, for Header and Statistics.
    std::uint64_t gaussians_ = 0;
    bool aabb_known_ = false, aabb_valid_ = true;
    std::array<double, 6> aabb_{};
    std::unordered_set<std::uint32_t> ids_;  // keyframe-delta: distinct gaussian ids
    bool ids_capped_ = false;
    bool decode_failed_ = false;  // some chunk did not decode: computed totals are partial

    ChunkBins bins_;
    detail::DeltaBins delta_bins_;
    DecodeScratch scratch_;
    GaussianBlock block_;
    detail::HeldRecord held_;
};

}  // namespace fourdgs::validation
