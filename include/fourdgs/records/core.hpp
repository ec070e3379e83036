// fourdgs/records/core.hpp — the records the rest of the file is interpreted against: Header
// (§5.1), Footer (§5.2), Quantization (§5.3) and Window Table (§5.4). Struct, parser and writer
// each.
//
// Part of records.hpp (the umbrella states the conventions every parser and writer follows).
#pragma once

#include "fourdgs/export.hpp"
#include "fourdgs/quantize.hpp"
#include "fourdgs/records/bounds.hpp"
#include "fourdgs/records/common.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// §5.1 Header (0x01).
struct Header {
    std::string profile;
    std::string library;
    double duration_sec = 0;
    std::uint64_t gaussian_count = 0;
    double cutoff = 0.05;
    std::string temporal_model;
    std::array<double, 6> aabb{};  // min xyz, max xyz
    std::uint8_t sh_degree = 0;
    std::uint8_t flags = 0;
    StringMap attributes;

    bool has_audio() const noexcept { return (flags & kHeaderFlagAudio) != 0; }
    bool chunks_compressed() const noexcept { return (flags & kHeaderFlagCompressed) != 0; }
    friend bool operator==(const Header&, const Header&) = default;
};

// §5.2 Footer (0x02).
struct Footer {
    std::uint64_t summary_start = 0;
    std::uint64_t summary_offset_start = 0;
    std::uint32_t summary_crc = 0;
    friend bool operator==(const Footer&, const Footer&) = default;
};

// §5.3 Quantization (0x03), including the appended per-band SH bit depths.
// The origin and steps are the GridSteps base, the part a decoder's Grid shares.
struct Quantization : GridSteps {
    std::string scheme;
    std::uint8_t step_sh = 0;
    StringMap bounds;  // values as stored; see is_bound_spelling / compare_bounds
    // Appended: band b's depth at sh_depths[b-1]. Empty when the record declares none — the field
    // is absent, its count is 0, or it was malformed (then sh_depths_malformed is set, M024).
    std::vector<std::uint8_t> sh_depths;
    bool sh_depths_malformed = false;

    // The bound declared for `key`, or nullptr.
    const std::string* bound(std::string_view key) const {
        for (const auto& [k, v] : bounds)
            if (k == key) return &v;
        return nullptr;
    }
    friend bool operator==(const Quantization&, const Quantization&) = default;
};

// §5.4 Window Table (0x04).
struct WindowTable {
    struct Window {
        double lo = 0, hi = 0;
        friend bool operator==(const Window&, const Window&) = default;
    };
    std::vector<Window> windows;
    friend bool operator==(const WindowTable&, const WindowTable&) = default;
};

// Parsers.

// §5.1. Refuses flags bits 2-7 (reserved-flags-set, M014), sh_degree > 3 (invalid-sh-degree),
// a cutoff not finite or outside (0, 1) (invalid-cutoff) and a duration_sec not finite or
// negative (invalid-duration). temporal_model and profile are checked by the reader.
inline Result<Header> parse_header(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::header));
    Cursor c(r.content, r.content_offset(), record_name(op::header));
    Header h;
    FOURDGS_ASSIGN(h.profile, c.string("profile"));
    FOURDGS_ASSIGN(h.library, c.string("library"));
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(h.duration_sec, c.f64("duration_sec"));
    if (!std::isfinite(h.duration_sec) || h.duration_sec < 0)
        return detail::malformed(
            refusal::kInvalidDuration, record_name(op::header), "duration_sec",
            detail::fmt(h.duration_sec),
            "duration_sec is " + detail::fmt(h.duration_sec) + ", must be finite and not negative",
            at);
    FOURDGS_ASSIGN(h.gaussian_count, c.u64("gaussian_count"));
    at = c.offset();
    FOURDGS_ASSIGN(h.cutoff, c.f64("cutoff"));
    if (!(h.cutoff > 0 && h.cutoff < 1))  // NaN fails too
        return detail::malformed(
            refusal::kInvalidCutoff, record_name(op::header), "cutoff", detail::fmt(h.cutoff),
            "cutoff is " + detail::fmt(h.cutoff) + ", must be a finite value in (0, 1)", at);
    FOURDGS_ASSIGN(h.temporal_model, c.string("temporal_model"));
    FOURDGS_TRY(detail::read_array(c, {"aabb"}, h.aabb.data(), 6, false));
    at = c.offset();
    FOURDGS_ASSIGN(h.sh_degree, c.u8("sh_degree"));
    if (h.sh_degree > 3)
        return detail::malformed(refusal::kInvalidShDegree, record_name(op::header), "sh_degree",
                                 std::to_string(h.sh_degree),
                                 "sh_degree is " + std::to_string(h.sh_degree) + ", must be 0..3",
                                 at);
    at = c.offset();
    FOURDGS_ASSIGN(h.flags, c.u8("flags"));
    if (h.flags & kReservedFlagBits) {
        static const char* hex = "0123456789ABCDEF";
        const std::string v = {'0', 'x', hex[h.flags >> 4], hex[h.flags & 15]};
        return detail::malformed(refusal::kReservedFlagsSet, record_name(op::header), "flags", v,
                                 "flags is " + v + ": bits 2-7 are reserved and must be 0", at);
    }
    FOURDGS_ASSIGN(h.attributes, c.map("attributes"));
    return h;
}

// §5.2. Fixed 20 bytes; checks nothing about the offsets (the seeking reader does).
inline Result<Footer> parse_footer(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::footer));
    Cursor c(r.content, r.content_offset(), record_name(op::footer));
    Footer f;
    FOURDGS_ASSIGN(f.summary_start, c.u64("summary_start"));
    FOURDGS_ASSIGN(f.summary_offset_start, c.u64("summary_offset_start"));
    FOURDGS_ASSIGN(f.summary_crc, c.u32("summary_crc"));
    return f;
}

// §5.3. Refuses a bounds key "object_id" (invalid-object-id-bound, M018). Reads the appended SH
// bit depths; a count the record is too short for, more than three bands, or a depth outside 3..8
// reads as declaring none with sh_depths_malformed set, never a refusal (M024). Neither the scheme
// (the reader refuses it) nor non-finite steps (validators report them, §5.3) are refused here.
inline Result<Quantization> parse_quantization(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::quantization));
    Cursor c(r.content, r.content_offset(), record_name(op::quantization));
    Quantization q;
    FOURDGS_ASSIGN(q.scheme, c.string("scheme"));
    FOURDGS_TRY(detail::read_array(c, {"pos_origin"}, q.pos_origin.data(), 3, false));
    double* steps[] = {&q.step_pos,   &q.step_scale_log, &q.step_rot,  &q.step_rgb,
                       &q.step_alpha, &q.step_motion,    &q.step_time, &q.step_sigma_log};
    static constexpr std::string_view names[] = {"step_pos",   "step_scale_log", "step_rot",
                                                 "step_rgb",   "step_alpha",     "step_motion",
                                                 "step_time",  "step_sigma_log"};
    for (std::size_t i = 0; i < 8; ++i)
        FOURDGS_TRY(detail::read_array(c, {names[i]}, steps[i], 1, false));
    FOURDGS_ASSIGN(q.step_sh, c.u8("step_sh"));
    std::uint64_t at = c.offset();
    FOURDGS_ASSIGN(q.bounds, c.map("bounds"));
    for (const auto& [k, v] : q.bounds)
        if (k == "object_id")
            return detail::malformed(refusal::kInvalidObjectIdBound, record_name(op::quantization),
                                     "bounds", v,
                                     "bounds declares object_id = " + detail::quoted(v) +
                                         "; object_id is an exact label and has no error bound",
                                     at);
    if (!c.at_end()) {
        std::uint8_t count = *c.u8("sh_depth_count");
        bool bad = count > 3 || count > c.remaining();
        if (!bad) {
            for (std::uint8_t i = 0; i < count; ++i) {
                std::uint8_t d = *c.u8("sh_depths");
                if (d < 3 || d > 8) bad = true;
                q.sh_depths.push_back(d);
            }
        }
        if (bad) {
            q.sh_depths.clear();
            q.sh_depths_malformed = true;
        }
    }
    return q;
}

// §5.4. count × {lo, hi}, the count checked before allocating. Values are not judged here.
inline Result<WindowTable> parse_window_table(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::window_table));
    Cursor c(r.content, r.content_offset(), record_name(op::window_table));
    WindowTable t;
    FOURDGS_ASSIGN(std::uint32_t count, c.u32("count"));
    FOURDGS_TRY(c.check_count("count", count, kWindowSize));
    t.windows.resize(count);
    for (auto& w : t.windows) {
        FOURDGS_ASSIGN(w.lo, c.f64("lo"));
        FOURDGS_ASSIGN(w.hi, c.f64("hi"));
    }
    return t;
}

// Writers.

inline void write(ByteWriter& out, const Header& h) {
    std::size_t at = detail::begin_record(out, op::header);
    out.string(h.profile);
    out.string(h.library);
    out.f64(h.duration_sec);
    out.u64(h.gaussian_count);
    out.f64(h.cutoff);
    out.string(h.temporal_model);
    detail::put_array(out, h.aabb);
    out.u8(h.sh_degree);
    out.u8(h.flags);
    out.map(h.attributes);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const Footer& f) {
    std::size_t at = detail::begin_record(out, op::footer);
    out.u64(f.summary_start);
    out.u64(f.summary_offset_start);
    out.u32(f.summary_crc);
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const Quantization& q) {
    std::size_t at = detail::begin_record(out, op::quantization);
    out.string(q.scheme);
    detail::put_array(out, q.pos_origin);
    for (double s : {q.step_pos, q.step_scale_log, q.step_rot, q.step_rgb, q.step_alpha,
                     q.step_motion, q.step_time, q.step_sigma_log})
        out.f64(s);
    out.u8(q.step_sh);
    out.map(q.bounds);
    if (!q.sh_depths.empty()) {
        out.u8(static_cast<std::uint8_t>(q.sh_depths.size()));
        for (std::uint8_t d : q.sh_depths) out.u8(d);
    }
    detail::end_record(out, at);
}

inline void write(ByteWriter& out, const WindowTable& t) {
    std::size_t at = detail::begin_record(out, op::window_table);
    out.u32(static_cast<std::uint32_t>(t.windows.size()));
    for (const auto& w : t.windows) {
        out.f64(w.lo);
        out.f64(w.hi);
    }
    detail::end_record(out, at);
}

}  // namespace fourdgs
FOURDGS_PUBLIC_END
