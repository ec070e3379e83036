// The keyframe-delta writer's quantized states (keyframe_writer.cpp, "Passes"): each step's
// gaussians quantized and given their file ids, sorted by them, and the rows a delta between two
// states carries. Internal to src/write.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "encoding.hpp"
#include "fourdgs/writer_types.hpp"
#include "fourdgs/scene.hpp"

namespace fourdgs::keyframe_states {

inline std::string who(std::size_t step, std::size_t gaussian) {
    return "step " + std::to_string(step) + " gaussian " + std::to_string(gaussian);
}

inline std::uint32_t uid(std::int32_t v) { return static_cast<std::uint32_t>(v); }

inline bool optional_column(std::uint8_t id) {
    return id == attr::source_group || id == attr::source_index || id == attr::object_id;
}

struct Ctx {
    encoding::Encoding enc;  // options, grid, the decoder's view of the scene
    bool has_group = false, has_index = false, has_object = false;
    std::uint32_t window_full = 0;  // the [0, duration) window's index, when used
};

// A step as build_state reads it: KeyframeStep's fields (fourdgs/keyframe_writer.hpp), the
// gaussians' spans copied.
struct Step {
    double t0 = 0;
    std::span<const std::uint32_t> ids;
    GaussianBatch gaussians;
};

// w values from x and y, equal. An element at a time: the rows compared are 1 to 15 values
// wide, where std::equal's call to memcmp costs more than the comparison (memcmp alone was 6 %
// of a tracked convert's CPU).
template <class T>
bool same_values(const T* x, const T* y, std::size_t w) {
    for (std::size_t c = 0; c < w; ++c)
        if (x[c] != y[c]) return false;
    return true;
}

// The rows `order` of `src`, in that order, with gaussian ids.
void gather_rows(const ChunkBins& src, std::span<const std::uint32_t> order, ChunkBins& dst);

// The inputs of the step whose state build_state last built (GaussianBatch's columns, float
// columns as their bits, and each gaussian's window), row for row: a gaussian whose inputs are
// these bits again has the bins it has in that state, and is not quantized again (the still
// gaussians of a tracked sequence). `valid` once a state was built from them.
struct LastInputs {
    bool valid = false;
    std::size_t count = 0;
    std::vector<std::uint32_t> position, scale, rotation, color, motion, mu_t, sigma_t, sh;
    std::vector<std::uint32_t> window, object_id;
    std::vector<std::int32_t> source_group, source_index;
};

// What build_state carries from one step to the next: which caller ids have had an incarnation
// and which file id each live one has.
struct Identity {
    std::unordered_map<std::uint32_t, std::uint32_t> live;  // caller id → file id
    std::unordered_set<std::uint32_t> used;                 // caller ids that had an incarnation
    std::uint64_t next_fresh = 0;
    std::vector<std::uint32_t> incarnation_of;  // per fresh id given: its caller id
    std::uint64_t distinct = 0;
    // A tracked sequence hands every step the same ids (one span): then row i of a step is row
    // prev_row[i] of the previous state, found without a lookup, and the rows sort as before
    // (`order`) unless an incarnation changed. The ids of the previous step, its sort order and
    // its inverse.
    std::span<const std::uint32_t> last_ids;
    std::vector<std::uint32_t> order, prev_row;
    // §6.3's steps per sigma bin and window, for the file's one Encoding: an exp and two log2
    // per gaussian otherwise.
    encoding::StepCache steps;
    // After build_state, where changed_known: changed[k] is whether row k of the state differs
    // from row k of the previous one on a column that may change inside a GOP (the same gaussian
    // in both rows), for match_rows.
    std::vector<std::uint8_t> changed;
    bool changed_known = false;
    LastInputs inputs;
    std::vector<std::uint8_t> moved;  // scratch: the rows whose inputs differ from `inputs`
};

// Step s's quantized state into `out`, sorted by file id, from the previous state `prev` (`raw`
// is scratch); `window_of`: each gaussian's window when the step has windows. A gaussian keeps its
// file id while its invariants (sigma_t, flags, window, SH) hold; a derived mu_t stays the
// previous state's while its variable columns do, outside keyframes.
Status build_state(const Ctx& ctx, const Step& st, std::size_t s, bool keyframe,
                   std::span<const std::uint32_t> window_of, const ChunkBins& prev,
                   Identity& ident, ChunkBins& raw, ChunkBins& out);

// Rows `rows` (ascending) of `state`, which build_state just built from a step with the ids
// ident.last_ids, given fresh file ids — in a delta each is a death and a birth
// (KeyframeWriterOptions::rebirth_turned) — and `state` sorted by file id again (`scratch`: its
// rows before). ident follows: the rows' caller ids live under the new file ids, and the row order
// is the new one; changed_known is cleared (the rows moved). limit-exceeded where no id is left.
Status reincarnate_rows(std::span<const std::uint32_t> rows, std::size_t s, Identity& ident,
                        ChunkBins& state, ChunkBins& scratch);

// The rows of a delta between `ref` and `cur` (both sorted by gaussian_id): the gaussians in both
// whose bins changed (their rows in each), those born (rows of cur) and those that died (rows of
// ref).
struct DeltaRows {
    std::vector<std::uint32_t> upd_ref, upd_cur, born, died;
    std::vector<std::uint8_t> changed;  // scratch
};

// `changed`, where the caller knows it (Identity::changed, for the state build_state built on
// `ref`; KeyframeChanges::changed for its keyframe): each row's variable columns against ref's
// same row, not compared again.
void match_rows(const ChunkBins& ref, const ChunkBins& cur, DeltaRows& rows,
                const std::vector<std::uint8_t>* changed = nullptr);

// Which rows of each state since the last keyframe differ from the keyframe's same row on a
// column that may change inside a GOP (mu_t excluded), kept from step to step: a row that did not
// change from the previous state (Identity::changed) differs from the keyframe as that state's
// row did, so only the changed rows are compared again. Known while every state since the
// keyframe kept every gaussian's row (build_state's changed_known).
struct KeyframeChanges {
    std::vector<std::uint8_t> changed;
    bool known = false;

    // After keyframe state `key`: no row differs.
    void keyframe(const ChunkBins& key);
    // After the delta state `cur`, built on the previous state with `from_prev` its
    // Identity::changed where known (else nullptr: unknown until the next keyframe).
    void step(const ChunkBins& key, const ChunkBins& cur,
              const std::vector<std::uint8_t>* from_prev);
    const std::vector<std::uint8_t>* get() const { return known ? &changed : nullptr; }
};

}  // namespace fourdgs::keyframe_states
