// fourdgs/frame_changes.hpp — which rows of a frame changed since the previous one: the memory of
// the previous frame and the evaluation of a frame that costs what changed since it. Player
// reports it as PlayerFrame::changed (fourdgs/player.hpp); the C ABI's
// fourdgs_reader_evaluate_block_changes answers with it too, so every player built on the
// library lists the same rows.
//
// While the state shown is the one the previous frame was evaluated from, but for the rows steps
// changed, only those rows and (when the instant moved) the rows whose §3 value depends on t are
// evaluated again, and only the Frame rows they fill are listed; a row that becomes visible or
// not, a window bound the instant crosses, or anything else evaluates the whole state and lists
// every row.
//
// Thread safety: the render thread's own.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "fourdgs/export.hpp"
#include "fourdgs/reconstruct.hpp"
#include "fourdgs/scene.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// One block of the state shown and the row its first gaussian has in the state (gaussian-birth:
// the chunks one after another, as state_at concatenates them).
struct ShownBlock {
    const GaussianBlock* block = nullptr;
    std::uint32_t first = 0;
};

class FrameChanges {
public:
    // The state shown is no longer the one the previous frame was evaluated from (rows moved).
    void forget() noexcept { valid_ = false; }
    // Rows a step changed in the state shown since the previous frame. `retimed`: the step may
    // have changed whether a row's value depends on t (its motion or object id changed).
    void stepped(std::span<const std::uint32_t> rows, bool retimed = true);
    // Evaluates the state `blocks` at t into `out` and says which rows changed since the previous
    // call, as PlayerFrame does (`changed`, `all_changed`: fourdgs/player.hpp): only the stepped
    // and timed rows are evaluated when that suffices, else `evaluate_whole(t, out)` evaluates
    // every block.
    void track(std::span<const ShownBlock> blocks, double t, double cutoff,
               const EvaluateOptions& options, Frame& out, bool& all_changed,
               std::vector<std::uint32_t>& changed,
               const std::function<void(double, Frame&)>& evaluate_whole);

private:
    void remember(std::span<const ShownBlock> blocks, const Frame& out, const TrackPoses& tracked);
    // The rows of `blocks` evaluated again at t into partial_; false when the frame must be
    // whole instead (a row became visible or not, or is unrepresentable).
    bool evaluate_partial(std::span<const ShownBlock> blocks, double t, double cutoff,
                          const EvaluateOptions& options);

    bool valid_ = false;
    double t_ = 0;
    const Frame* out_ = nullptr;         // the Frame it filled, as it left it
    const float* out_center_ = nullptr;
    std::size_t count_ = 0;
    std::vector<std::uint32_t> frame_row_;  // state row -> its Frame row, kNoRow when none...
    bool every_row_ = false;                // ...unless every state row is its own Frame row
    std::uint32_t frame_row(std::uint32_t r) const { return every_row_ ? r : frame_row_[r]; }
    std::vector<std::uint8_t> is_timed_;    // state row: its §3 value depends on t
    std::vector<std::uint32_t> timed_;      // ...those rows, ascending
    std::vector<float> bounds_;             // the distinct finite window bounds, ascending...
    bool many_bounds_ = false;              // ...unless too many: then windowed rows are timed
    std::vector<std::uint32_t> stepped_;    // state rows steps changed since the previous frame,
                                            // ascending (duplicates until track)
    bool retimed_ = false;                  // ...by a step that may change their timing
    std::vector<std::uint32_t> rows_;       // scratch: the rows re-evaluated
    std::vector<std::uint32_t> local_;      // ...those of a block after the first, in the block
    std::vector<std::uint32_t> merged_;     // scratch: a step's rows, sorted
    Frame partial_;                         // ...and their evaluation
};

}  // namespace fourdgs
FOURDGS_PUBLIC_END
