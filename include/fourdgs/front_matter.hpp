// fourdgs/front_matter.hpp — records into the scene model.
//
// SceneBuilder is the one place that turns records into a SceneInfo. It takes parsed records in
// file order and enforces the rules that span records: the Header comes first (§4), Header,
// Quantization and Window Table appear once each (§4, M006), the temporal model and quantization
// scheme are ones this reader implements (§5.1, M015), audio records pair up and precede the
// chunks (§5.16, §5.17, §7), the Window Table precedes them (§4, §5.4), a file has one Object
// Table and one track per object (§5.15.6, §5.15.7), the cross-record references of extras.hpp
// hold, and an empty Window Table reads as one (0, 0) window (§5.4). Every reader and the
// validator feed it; none interprets a record any other way.
//
// It runs in one of two modes, the two of the read steps' one findings sink (detail/findings.hpp,
// held behind a pointer). First-error (the readers): the first rule broken is returned and the
// builder stops. Collect (the validator): every rule broken goes to a ReportFn and the builder
// keeps going, keeping what it would have kept had the rule held — a second Header,
// Quantization or Window Table, a late Window Table or audio record (the readers never use
// them) and a record that fails its parser are dropped; an unknown scheme or an Audio Data of
// the wrong length is kept — so one file yields every finding a reader would refuse.
//
// Thread safety: a SceneBuilder is used by one thread at a time.
#pragma once

#include <bitset>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/extras.hpp"
#include "fourdgs/reader_options.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/wire.hpp"

// Where the builder's rules report (detail/findings.hpp, not API).
namespace fourdgs::detail {
class Findings;
}  // namespace fourdgs::detail

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

inline constexpr std::string_view kModelGaussianBirth = "gaussian-birth";
inline constexpr std::string_view kModelKeyframeDelta = "keyframe-delta";

class SceneBuilder {
public:
    // First-error mode.
    explicit SceneBuilder(const ReaderOptions& options);
    // Collect mode: each broken rule is passed to `report`, which returns false to stop (the
    // builder then returns that Error from then on, as in first-error mode).
    SceneBuilder(const ReaderOptions& options, ReportFn report);

    // Adds one whole record (content available), a content or summary record in file order.
    // Chunk, SH band, Delta Chunk and Footer records are the front-ends' (passing one is a
    // no-op). Returns the refusal for any rule above or in the record's parser (collect mode: ok
    // unless `report` said stop).
    Status add(const RecordView& record);

    // Adds a payload-carrying record (Attachment, Audio Data, legacy Audio) whose payload was not
    // read: `header_and_prefix.content` holds a prefix of the content, content_length is the
    // whole length. The payload's range is kept. Returns false, adding nothing, when the prefix
    // ends before the fields in front of the payload do: pass the whole record to add() instead.
    Result<bool> add_unread_payload(const RecordView& header_and_prefix);

    // Adds one record of a summary read on its own, ahead of the content it describes (a seeking
    // reader reads the summary first, §8): Chunk Index, Statistics and Summary Offset are kept as
    // add() keeps them, records the format does not define are skipped, and any other defined
    // record is refused as summary-not-contiguous (§4.5). The Header-first rule does not apply.
    Status add_summary(const RecordView& record);
    // Takes the summary `summary` (fed with add_summary) read, in place of any summary records
    // the content walk met: the summary is the run before the Footer (§4.5). `summary` is spent.
    void take_summary(SceneBuilder&& summary);

    // Called before the first chunk: the Header and Quantization must have been seen, and the
    // rules that span records hold (check_scene_references, extras.hpp). Computes the grid and
    // the effective window table. Idempotent. After it, an audio record is refused (every pair
    // comes before the first chunk, M092) and a provenance record is checked against the rest.
    // In collect mode every rule broken here is reported, as the readers meet it (a sensor whose
    // rig comes only after the first chunk has none when the chunks begin).
    Status seal(std::uint64_t at);

    // Collect mode, after the last record: the rules that span records, checked once more over
    // the whole file, reporting what seal() and the records after it did not (a file without a
    // Header has nothing to check them against).
    Status finish();

    bool sealed() const noexcept { return sealed_; }
    SceneInfo& scene() noexcept { return scene_; }
    const SceneInfo& scene() const noexcept { return scene_; }
    // Where the records the scene holds came from, in the order the scene holds them.
    const RecordOffsets& offsets() const noexcept { return offsets_; }
    std::size_t records_seen() const noexcept { return records_seen_; }
    // The builder's findings (detail/findings.hpp, not API), for a step that feeds the builder
    // and checks rules of its own (the summary walk, read_summary_by_tail): it reports them here,
    // so one read has one sink and stops or collects as the builder does.
    detail::Findings& findings() noexcept { return *findings_.operator->(); }

private:
    // A rule broken, taken by the findings: remembered (first-error mode) or reported (collect
    // mode). Returns whether to go on with the record.
    bool broken(Error e);
    template <class T>
    bool parsed(Result<T>& r) {
        if (r.ok()) return true;
        broken(std::move(r).error());
        return false;
    }
    // A record that parsed joins `list`, its offset `offsets`; one that did not is broken.
    template <class T>
    void keep(Result<T> r, std::vector<T>& list, std::vector<std::uint64_t>& offsets,
              std::uint64_t at) {
        if (!parsed(r)) return;
        list.push_back(std::move(r).value());
        offsets.push_back(at);
    }
    // A record a file holds once that parsed fills `slot`. Whether it parsed.
    template <class T>
    bool keep(Result<T> r, T& slot) {
        if (!parsed(r)) return false;
        slot = std::move(r).value();
        return true;
    }
    template <class T>
    void keep(Result<T> r, std::optional<T>& slot) {
        if (parsed(r)) slot = std::move(r).value();
    }
    Status outcome() const;

    void absorb(const RecordView& r);
    bool header_first(const RecordView& r);
    bool audio_before_chunks(const RecordView& r);
    bool first_of_its_kind(const RecordView& r);
    void absorb_header(const RecordView& r);
    void absorb_quantization(const RecordView& r);
    void absorb_window_table(const RecordView& r);
    void absorb_audio_source(const RecordView& r);
    struct PayloadRecord;
    static Result<bool> read_payload_head(const RecordView& r, PayloadRecord& p);
    void absorb_payload(const RecordView& r, PayloadRecord p);
    void absorb_summary(const RecordView& r);
    void check_references();

    // The builder's findings, held behind a pointer (a public header includes no detail one) and
    // copied with the builder.
    class Sink {
    public:
        explicit Sink(ReportFn report);
        Sink(const Sink& other);
        Sink(Sink&&) noexcept;
        Sink& operator=(const Sink& other);
        Sink& operator=(Sink&&) noexcept;
        ~Sink();
        detail::Findings* operator->() const noexcept { return findings_.get(); }

    private:
        std::unique_ptr<detail::Findings> findings_;
    };

    ReaderOptions options_;
    Sink findings_;  // collecting in collect mode
    SceneInfo scene_;
    RecordOffsets offsets_;
    bool sealed_ = false;
    bool header_seen_ = false, quantization_seen_ = false, window_table_seen_ = false;
    std::bitset<256> singles_seen_;  // the once / at-most-once kinds met so far, by opcode
    bool header_first_reported_ = false;
    std::size_t records_seen_ = 0;
    // Collect mode: the rules that span records reported so far (their messages), so each is
    // reported once, where check_references() first met it.
    std::vector<std::string> references_reported_;
};

// §5.1: the temporal model gate. gaussian-birth is implemented; keyframe-delta is accepted only
// when `accept_keyframe_delta` (the keyframe-delta front-end) and otherwise refused by name;
// everything else (including "") is unknown.
Status check_temporal_model(const Header& header, std::uint64_t offset,
                            bool accept_keyframe_delta = false);
// §5.1 for the keyframe-delta front-ends: a file of any other model is unknown-temporal-model,
// naming it (the gaussian-birth readers read those).
Status require_keyframe_delta(const Header& header, std::uint64_t offset);

}  // namespace fourdgs
FOURDGS_PUBLIC_END
