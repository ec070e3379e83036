// ChunkWalk (fourdgs/detail/chunk_walk.hpp): the records of a file front to back, each state chunk
// with its SH band records.
#include "fourdgs/detail/chunk_walk.hpp"

#include <algorithm>
#include <string>

namespace fourdgs::detail {

Result<bool> declares_keyframe_delta(RecordStream& stream, ReaderOptions options) {
    auto answer = [](const Error& e) -> Result<bool> {
        if (e.kind == ErrorKind::io) return e;
        return false;
    };
    auto frame = stream.next_frame();
    if (!frame.ok()) return answer(frame.error());
    if (!*frame || (*frame)->opcode != op::header) return false;
    HeldRecord held;
    if (Status content = stream.read_content(**frame, held); !content.ok())
        return answer(content.error());
    options.accept_keyframe_delta = true;
    // The one place a Header record becomes a SceneInfo.
    SceneBuilder builder(options);
    return builder.add(held.view).ok() &&
           builder.scene().header.temporal_model == kModelKeyframeDelta;
}

bool ChunkWalk::is_state_chunk(std::uint8_t opcode) const noexcept {
    return opcode == op::chunk || (model_ == Model::keyframe_delta && opcode == op::delta_chunk);
}

Status ChunkWalk::open() {
    if (opened_) return ok_status();
    FOURDGS_TRY(stream_.read_magic());
    opened_ = true;
    FOURDGS_ASSIGN(bool have, advance());  // the front matter: everything before the first chunk
    (void)have;
    return ok_status();
}

Result<bool> ChunkWalk::advance() {
    chunk_.valid = false;
    while (!finished_) {
        if (!lookahead_.valid) {
            auto r = stream_.next(lookahead_.held);
            if (!r.ok()) {
                truncation_ = r.error();
                return std::move(r).error();
            }
            if (!*r) {
                truncation_ = stream_.ended_without_footer();
                return *truncation_;
            }
            lookahead_.valid = true;
        }
        const RecordView& r = lookahead_.held.view;
        if (is_state_chunk(r.opcode)) {
            FOURDGS_TRY(builder_.seal(r.offset));
            std::swap(chunk_, lookahead_);
            lookahead_.valid = false;
            return true;
        }
        lookahead_.valid = false;
        FOURDGS_TRY(absorb(r));
    }
    return false;
}

Status ChunkWalk::absorb(const RecordView& r) {
    if (r.opcode == op::footer) {
        // A file without chunks reaches its Footer unsealed: the same rules hold for it (§5.4's
        // effective window table, the cross-record checks), as they do in the indexed reader.
        FOURDGS_TRY(builder_.seal(r.offset));
        SceneInfo& scene = builder_.scene();
        FOURDGS_ASSIGN(scene.footer, parse_footer(r));
        FOURDGS_TRY(every_chunk_indexed());
        SummaryCrc crc = SummaryCrc::not_stated;
        FOURDGS_TRY(stream_.finish(r, *scene.footer, options_.verify_summary_crc, crc));
        // §4.5: a summary that fails its CRC is unverified, and the content is still read.
        scene.summary_crc_verified = crc == SummaryCrc::verified;
        scene.trailing_bytes = stream_.trailing_bytes();
        finished_ = true;
        return ok_status();
    }
    if (r.opcode == op::delta_chunk)  // the walk reads the file as gaussian-birth
        return delta_chunk_in_model(kModelGaussianBirth, r.offset);
    if (r.opcode == op::sh_band) return orphan_sh_band(r.offset);
    FOURDGS_TRY(builder_.add(r));
    if (r.opcode == op::header && model_ == Model::keyframe_delta)
        FOURDGS_TRY(require_keyframe_delta(builder_.scene().header, r.content_offset()));
    if (r.opcode == op::chunk_index) {
        // §5.8: every chunk has passed by the time the index does.
        IndexCheckOptions check;
        if (model_ == Model::keyframe_delta)
            check.keyframe = IndexCheckOptions::KeyframeFields::required;
        Findings first;
        FOURDGS_TRY(named_.check(chunks_, builder_.scene().index.back(), r.offset, check, first));
    }
    return ok_status();
}

// §5.8: a file with an index names every chunk in it (one entry per chunk), so a chunk no entry
// names is the index's fault, refused at the Footer as the indexed reader's walk of the gaps
// between indexed ranges refuses it.
Status ChunkWalk::every_chunk_indexed() const {
    if (builder_.scene().index.empty()) return ok_status();
    Findings first;
    return named_.every_chunk_named(chunks_, first);
}

Result<bool> ChunkWalk::next_chunk(RecordView& record) {
    if (!opened_) FOURDGS_TRY(open());
    if (truncation_ && !chunk_.valid) return *truncation_;
    if (!chunk_.valid) {
        FOURDGS_ASSIGN(bool have, advance());
        if (!have) return false;
    }
    chunk_.valid = false;
    record = chunk_.held.view;
    return true;
}

Result<ChunkBands> ChunkWalk::read_bands() {
    // The SH band records follow their chunk directly (§5.7, wire-notes).
    ChunkBands out;
    std::optional<Error> cut;
    for (std::size_t i = 0; i < band_slots_.size(); ++i) {
        auto r = stream_.next(lookahead_.held);
        if (!r.ok()) {
            if (r.error().kind != ErrorKind::truncated) return std::move(r).error();
            cut = r.error();
            break;
        }
        if (!*r) {
            // The data ends right after this chunk (or after one of its bands): that is a cut
            // like any other, and the bands still to come are missing, not absent.
            cut = stream_.ended_without_footer();
            break;
        }
        lookahead_.valid = true;
        if (lookahead_.held.view.opcode != op::sh_band) break;
        std::swap(band_slots_[i], lookahead_.held);
        lookahead_.valid = false;
        FOURDGS_TRY(out.add(band_slots_[i].view));
    }
    if (cut) {
        // Trailing-band recovery: the whole bands that arrived, in order (M100).
        out.whole = 0;
        while (out.whole < static_cast<int>(out.bands.size()) &&
               out.bands[out.whole].band == out.whole + 1)
            ++out.whole;
        truncation_ = *cut;
    }
    return out;
}

}  // namespace fourdgs::detail
