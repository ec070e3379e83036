// fourdgs/front_matter.hpp — records into the scene model.
//
// SceneBuilder takes parsed records in file order and fills a SceneInfo, enforcing the rules
// that span records: the Header comes first (§4), Header, Quantization and Window Table appear
// once each (§4, M006), the temporal model and quantization scheme are ones this reader
// implements (§5.1, M015), and an empty Window Table reads as one (0, 0) window (§5.4). Both
// readers feed it; neither interprets a record any other way.
#pragma once

#include <cstdint>

#include "fourdgs/decode.hpp"
#include "fourdgs/error.hpp"
#include "fourdgs/extras.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/wire.hpp"

namespace fourdgs {

inline constexpr std::string_view kModelGaussianBirth = "gaussian-birth";
inline constexpr std::string_view kModelKeyframeDelta = "keyframe-delta";

struct ReaderOptions {
    ChunkDecodeOptions decode;               // SH degree cap and per-chunk limits
    bool keep_payloads = false;              // keep attachment and audio payload bytes in memory
    std::uint64_t max_record_bytes = std::uint64_t{1} << 32;  // one record's content
    std::uint64_t max_summary_bytes = std::uint64_t{1} << 30;
    bool verify_summary_crc = true;
    // §5.1 gate: a keyframe-delta file passes the Header check only when this is set. Only the
    // keyframe-delta front-end (keyframe_delta.hpp) sets it; the gaussian-birth readers leave it
    // false and refuse such a file (a gaussian-birth decode of it would be a subset, M015).
    bool accept_keyframe_delta = false;
};

class SceneBuilder {
public:
    explicit SceneBuilder(const ReaderOptions& options) : options_(options) {}

    // Adds one whole record (content available). `payload_crc` lets a caller that streamed a
    // payload pass its CRC-32. Returns the refusal for any rule above or in the record's parser.
    // Chunk, SH band, Delta Chunk and Footer records are not handled here (the front-ends own
    // them); passing one is a no-op.
    Status add(const RecordView& record);

    // Adds a payload-carrying record (Attachment, Audio Data, legacy Audio) whose payload was not
    // read: `prefix` holds at least the fields before the payload. The payload's range is kept.
    Status add_unread_payload(const RecordView& header_and_prefix);

    // Called before the first chunk: the Header and Quantization must have been seen, and the
    // rules that span records hold (check_scene_references, extras.hpp). Computes the grid and
    // the effective window table. Idempotent. After it, an audio record is refused (every pair
    // comes before the first chunk, M092) and a provenance record is checked against the rest.
    Status seal(std::uint64_t at);

    bool sealed() const noexcept { return sealed_; }
    SceneInfo& scene() noexcept { return scene_; }
    const SceneInfo& scene() const noexcept { return scene_; }
    std::size_t records_seen() const noexcept { return records_seen_; }

private:
    Status add_header(const RecordView& r);
    Status check_audio_before_chunks(const RecordView& r) const;
    Status add_payload_record(const RecordView& r, std::uint8_t opcode, Bytes data,
                              std::uint64_t data_offset, std::uint64_t data_length);

    ReaderOptions options_;
    SceneInfo scene_;
    RecordOffsets offsets_;  // of each provenance and audio record, for messages
    bool sealed_ = false;
    std::size_t records_seen_ = 0;
};

// §4.5, for a reader that goes front to back: the trailing run of summary records, retained as
// it passes so summary_crc can be checked at the Footer without buffering the file. Records the
// format does not define stay inside a run (readers skip them); a defined content record or a
// chunk ends it.
class SummaryRun {
public:
    // Every whole record other than a chunk, in file order (`bytes` = header + content).
    void add(std::uint8_t opcode, std::uint64_t offset, Bytes bytes);
    // A chunk (or Delta Chunk) arrived: whatever run there was is not the summary.
    void end() noexcept { active_ = false; }
    // At the Footer: summary_start must name the run's first byte (summary-not-contiguous when a
    // content record sits inside it, summary-start-mismatch otherwise), and a non-zero
    // summary_crc must match when `verify_crc` (summary-crc-mismatch). Sets `verified` when a
    // CRC was checked. `footer_content` is the Footer's content offset, for messages.
    Status check(const Footer& footer, std::uint64_t footer_content, bool verify_crc,
                 bool& verified) const;

private:
    bool active_ = false;
    std::uint64_t start_ = 0;
    std::uint32_t crc_ = 0;
    std::uint64_t broken_by_ = 0;  // offset of the content record that last ended a run
};

// §5.1: the temporal model gate. gaussian-birth is implemented; keyframe-delta is accepted only
// when `accept_keyframe_delta` (the keyframe-delta front-end) and otherwise refused by name;
// everything else (including "") is unknown.
Status check_temporal_model(const Header& header, std::uint64_t offset,
                            bool accept_keyframe_delta = false);

}  // namespace fourdgs
