// fourdgs/records/objects.hpp — the object layer's records: Object Table (§5.15.6) and Object Track
// (§5.15.7).
//
// Part of records.hpp (the umbrella states the conventions every parser and writer follows).
#pragma once

#include "fourdgs/export.hpp"
#include "fourdgs/records/common.hpp"
#include "fourdgs/records/provenance.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// §5.15.6 Object Table (0x24). Advisory: nothing here transforms a gaussian.
struct ObjectTable {
    struct Dynamics {
        std::array<float, 3> velocity{}, angular_velocity{}, acceleration{};
        friend bool operator==(const Dynamics&, const Dynamics&) = default;
    };
    struct Entry {
        std::uint32_t object_id = 0;
        std::string label;
        std::array<float, 3> anchor{};
        std::optional<Dynamics> dynamics;           // dynamics_present == 1
        std::optional<std::vector<float>> embedding;  // has_embedding == 1; embedding_dim floats
        friend bool operator==(const Entry&, const Entry&) = default;
    };
    std::uint16_t embedding_dim = 0;
    std::vector<Entry> entries;  // object_count entries
    friend bool operator==(const ObjectTable&, const ObjectTable&) = default;
};

// §5.15.7 Object Track (0x25).
struct ObjectTrack {
    std::uint32_t object_id = 0;  // never 0
    TrajectoryInterpolation interpolation = TrajectoryInterpolation::linear;
    std::vector<TrajectorySample> samples;
    friend bool operator==(const ObjectTrack&, const ObjectTrack&) = default;
};

// Parsers.

// §5.15.6. object_count and each embedding are checked against the remaining bytes before
// allocating (count-exceeds-record, M071/M072); dynamics_present/has_embedding other than 0/1 is
// invalid-flag-value (M070); a non-finite f32 is non-finite-value (M069); two entries with one
// id are duplicate-object-id naming it (M067/M068). A second table is the reader's (M073).
inline Result<ObjectTable> parse_object_table(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::object_table));
    constexpr std::string_view what = record_name(op::object_table);
    Cursor c(r.content, r.content_offset(), what);
    ObjectTable t;
    FOURDGS_ASSIGN(std::uint32_t count, c.u32("object_count"));
    FOURDGS_ASSIGN(t.embedding_dim, c.u16("embedding_dim"));
    // object_id + empty label + anchor + dynamics_present (+ has_embedding).
    std::uint64_t min_entry = 4 + 4 + 12 + 1 + (t.embedding_dim > 0 ? 1 : 0);
    FOURDGS_TRY(c.check_count("object_count", count, min_entry));
    t.entries.resize(count);
    std::unordered_set<std::uint32_t> seen;
    seen.reserve(count);
    for (std::uint32_t i = 0; i < count; ++i) {
        auto& e = t.entries[i];
        std::uint64_t at = c.offset();
        FOURDGS_ASSIGN(e.object_id, c.u32("object_id"));
        if (!seen.insert(e.object_id).second)
            return detail::malformed(refusal::kDuplicateObjectId, what, "object_id",
                                     std::to_string(e.object_id),
                                     "entries[" + std::to_string(i) + "] repeats object_id " +
                                         std::to_string(e.object_id) +
                                         "; entries must have distinct ids",
                                     at);
        FOURDGS_ASSIGN(e.label, c.string("label"));
        FOURDGS_TRY(detail::read_array(c, {"entries", i, "anchor"}, e.anchor.data(), 3, true));
        FOURDGS_ASSIGN(bool dyn, detail::read_flag_byte(c, "dynamics_present"));
        if (dyn) {
            ObjectTable::Dynamics d;
            FOURDGS_TRY(detail::read_array(c, {"entries", i, "velocity"}, d.velocity.data(), 3, true));
            FOURDGS_TRY(detail::read_array(c, {"entries", i, "angular_velocity"},
                                           d.angular_velocity.data(), 3, true));
            FOURDGS_TRY(detail::read_array(c, {"entries", i, "acceleration"},
                                           d.acceleration.data(), 3, true));
            e.dynamics = d;
        }
        if (t.embedding_dim > 0) {
            FOURDGS_ASSIGN(bool emb, detail::read_flag_byte(c, "has_embedding"));
            if (emb) {
                FOURDGS_TRY(c.check_count("embedding_dim", t.embedding_dim, 4));
                std::vector<float> v(t.embedding_dim);
                FOURDGS_TRY(detail::read_array(c, {"entries", i, "embedding"}, v.data(), v.size(),
                                               true));
                e.embedding = std::move(v);
            }
        }
    }
    return t;
}

// §5.15.7. Refuses object_id 0 (track-names-background, M078) and everything Rig Trajectory's
// pose rules refuse (M074-M077). One track per id is the reader's (M079).
inline Result<ObjectTrack> parse_object_track(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::object_track));
    Cursor c(r.content, r.content_offset(), record_name(op::object_track));
    ObjectTrack t;
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(t.object_id, c.u32("object_id"));
    if (t.object_id == 0)
        return detail::malformed(
            refusal::kTrackNamesBackground, record_name(op::object_track), "object_id", "0",
            "object_id is 0, which means no object; a track must name one", at);
    FOURDGS_ASSIGN(t.interpolation, detail::read_trajectory_interpolation(c));
    FOURDGS_ASSIGN(std::uint32_t count, c.u32("sample_count"));
    FOURDGS_ASSIGN(t.samples, detail::read_samples(c, count));
    return t;
}

// Writers.

inline void write(ByteWriter& out, const ObjectTable& t) {
    std::size_t at = detail::begin_record(out, op::object_table);
    out.u32(static_cast<std::uint32_t>(t.entries.size()));
    out.u16(t.embedding_dim);
    for (const auto& e : t.entries) {
        out.u32(e.object_id);
        out.string(e.label);
        detail::put_array(out, e.anchor);
        out.u8(e.dynamics ? 1 : 0);
        if (e.dynamics) {
            detail::put_array(out, e.dynamics->velocity);
            detail::put_array(out, e.dynamics->angular_velocity);
            detail::put_array(out, e.dynamics->acceleration);
        }
        if (t.embedding_dim > 0) {
            out.u8(e.embedding ? 1 : 0);
            if (e.embedding) {
                assert(e.embedding->size() == t.embedding_dim);
                for (std::size_t j = 0; j < t.embedding_dim; ++j)
                    out.f32(j < e.embedding->size() ? (*e.embedding)[j] : 0.0f);
            }
        }
    }
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const ObjectTrack& t) {
    std::size_t at = detail::begin_record(out, op::object_track);
    out.u32(t.object_id);
    out.u8(static_cast<std::uint8_t>(t.interpolation));
    detail::put_samples(out, t.samples);
    detail::end_record(out, at);
}

}  // namespace fourdgs
FOURDGS_PUBLIC_END
