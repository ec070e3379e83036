// fourdgs/validate.hpp — every problem in a file, not just the first.
//
// The readers stop at the first refusal; validate() walks the whole file and keeps going: each
// record is framed and parsed on its own (a record that fails to parse is one finding, and the
// walk steps over it by content_length), the rules that span records run over what parsed, and
// every chunk's streams are decoded so a bad codec byte inside a chunk is found too. It stands on
// the readers' layers — the record stream, the SceneBuilder in its collect-every-finding mode,
// the chunk decode, the index check — so a rule a reader refuses by is written once, and a
// finding's field and value are the ones the refusing layer named (error.hpp). Errors are
// the rules a reader refuses (their refusal identifier is the finding's `rule`); warnings are
// the SHOULD-level reports (§5.3 bounds a writer should declare, §5.15.2 frame advice, the
// length_unit / metres_per_unit disagreement which is an error, M044).
//
// Rules of the validator's own, beside every reader refusal (each finding's `section` says
// where the rule is written):
//   errors    length-unit-mismatch (M044), coordinate-system-mismatch (M047), non-finite-value on
//             a Quantization parameter (M026/M027), a Window Table bound (§5.4) or a Chunk's
//             t0/t1 (§5.5), gaussian-count-mismatch (§5.1), summary-offset-mismatch (§5.14),
//             footer-not-last (§4), missing-footer (§5.2), summary-crc-mismatch (§4.5: the
//             readers read past it), bytes-after-magic (§4: the readers count them),
//             reserved-opcode (0x00, 0x0E: §4.3, §5.13), invalid-utf8 (§2: a string of any
//             record that is not UTF-8, naming the field; its value is the text.hpp spelling)
// With random access, a walk cut short (a length past the end) still checks the index the tail
// names, as an indexed reader would when fetching each chunk by its entry: every refusal of
// either reader is an error here with the same identifier.
//   warnings  bound-not-a-number (M020), bound-disagrees-with-record (M023/M025),
//             malformed-sh-depths (M024/M025), sh-depths-not-decreasing (§6.5),
//             statistics-mismatch (M036), empty-rig-trajectory (M062),
//             rig-trajectory-off-scene-clock (M058: every sample before 0 or after the
//             duration), no-coordinate-system (M002), no-visibility-profile /
//             unknown-visibility-profile (M004),
//             private-records-without-application (M012), undeclared-unseekable-content (M106),
//             coordinate-system-key-beside-record (M047), legacy-audio-record (M035),
//             summary-offset-overlong (§5.14, wire-notes), compressed-flag-mismatch (§5.1),
//             non-finite-value / non-increasing-keyframe-times on the Camera (§5.10: advisory,
//             so readers keep it)
// A keyframe-delta file on a random-access source is also composed once (the keyframe-delta
// streaming front-end) so the §11.3-§11.7 composition rules are reported too.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/front_matter.hpp"
#include "fourdgs/io.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

enum class Severity : std::uint8_t { error = 1, warning = 2 };
constexpr std::string_view to_string(Severity s) noexcept {
    return s == Severity::error ? "error" : "warning";
}

struct Finding {
    Severity severity = Severity::error;
    std::string rule;     // stable kebab-case id: the refusal identifier for errors
    std::string field;    // "Record.field", e.g. "Coordinate Frame.length_unit"
    std::string value;    // the offending value as text ("" when the rule is about absence)
    std::uint64_t offset = kNoOffset;  // byte offset of the record (or field) in the file
    std::string section;  // the spec section, e.g. "§5.15.2"
    std::string message;  // one sentence naming the value
};

struct ValidationReport {
    std::vector<Finding> findings;  // in file order, then the cross-record findings
    std::uint64_t file_size = 0;
    std::uint64_t records = 0;      // records framed
    std::uint64_t chunks = 0;       // Chunk and Delta Chunk records decoded
    bool truncated = false;         // the walk ended inside a record
    bool findings_capped = false;   // max_findings was reached

    std::size_t errors() const;
    std::size_t warnings() const;
    bool valid() const { return errors() == 0; }
};

struct ValidateOptions {
    ReaderOptions reader;          // limits, SH cap; accept_keyframe_delta is set by validate()
    std::size_t max_findings = 10000;
    bool decode_chunks = true;     // decode every chunk's streams
    // Called now and then with (bytes walked, file size); for progress bars.
    std::function<void(std::uint64_t, std::uint64_t)> progress;
};

// Walks `source` front to back. The Result is an error only when the validator could not run
// (the source failed to read: kind io); everything wrong with the file is a Finding.
Result<ValidationReport> validate(ByteSource& source, const ValidateOptions& options = {});

}  // namespace fourdgs
FOURDGS_PUBLIC_END
