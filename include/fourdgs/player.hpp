// fourdgs/player.hpp — real-time playback: a frame for every display tick, on time, while the
// scene streams from a file, memory, a URL or a pipe.
//
// A Player owns one worker thread. The worker decodes, ahead of the playhead, the states the next
// instants need, through SceneReader's front-end, the one interface every model answers (the
// state spans, fetch_ranges and state_at; a gaussian-birth chunk's decode, a keyframe-delta
// step forward (KeyframeDeltaReader::step_forward underneath); a stream's next block; and a
// PlaybackPrefetcher on the source planned with fetch_ranges). The render thread
// asks for the frame at a time and gets evaluate() (reconstruct.hpp) of resident data: it never
// waits on the source or on inflate when the data arrived in time. When it did not, the frame is
// late: it says so and why, and shows the best state at hand instead of blocking (unless the call
// asked to wait).
//
// What a state is, and what stays resident:
//   gaussian-birth   the chunks covering t (chunks_for), decoded chunk by chunk and kept per
//                    chunk: an instant's chunks plus those of the next `look_ahead` instants
//                    whose chunk sets differ (a chunk several instants share is decoded once).
//   keyframe-delta   the state chunk's composed state. Playing forward through a GOP, each step
//                    applies one chained delta to the state already composed
//                    (KeyframeDeltaReader::step_forward) and the render thread copies only the
//                    rows it changed into the state it shows; a keyframe, a keyframe-referenced
//                    delta, a seek and reverse play compose the state from its keyframe
//                    (state_at). Resident: the state shown, the worker's composed population (in
//                    bins), and the next `look_ahead` steps (their changed rows; whole states for
//                    composed ones).
// Either way the frame equals state_at(t) then evaluate(t) bit for bit (same rows, same order).
//
// Sources: whatever open_scene takes. Random access (a file, memory, callbacks, HttpSource) plays
// both ways and seeks anywhere. A stream (a pipe) plays a keyframe-delta file forward only: a seek
// forward composes the states in between, one backwards is refused (not-seekable) at the frame
// that needs it, and a negative rate is refused. A gaussian-birth file read as a stream has no
// index — any chunk may cover any instant — so it cannot be played (open refuses it,
// not-seekable). Over HttpSource the worker keeps a PlaybackPrefetcher aimed at the playhead.
//
// The clock. play / pause / seek / set_rate / set_loop change the playhead as of the last frame
// shown; frame(now) then reads the clock at the caller's own time `now` (seconds, any origin, the
// render loop's vsync or audio clock), so the first frame after play() shows where playback
// paused and motion starts from that frame's `now`. Without loop, playback stops (ended) at the
// last instant before the duration going forward, at 0 going backward; play() when ended starts
// over. frame_at(t) shows scene time t instead of the clock's, and moves the playhead there. The
// clock is a PlaybackClock (playback_clock.hpp), which the C ABI exports for other players.
//
// Errors while playing are the readers' own refusals (a damaged chunk, a truncated or replaced
// file: truncated, source-changed, corrupt-compressed-data, ...), returned by the frame that
// needs the state they concern; frames of other states go on. A refusal is kept for its state
// until seek() (which retries). A source that stalls gives late frames; once one state has been
// late for PlayerOptions::stall_timeout_sec the frame fails with playback-stalled (kind io). A
// fetch the playhead no longer needs is abandoned (the source's prefetch polls for it), but a
// read in flight is not interrupted: destroying the player waits for it to return
// (HttpSource's timeouts bound that; a custom source must return eventually).
//
// Thread safety: frame / frame_at are called by one thread at a time (the render thread). The
// control calls and the accessors may be called from any thread. The reader and the source must
// outlive the player; while it plays, a stream reader is the player's alone, and a random-access
// reader may still be used by others with their own workspaces.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/extras.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/open_scene.hpp"
#include "fourdgs/playback_clock.hpp"
#include "fourdgs/prefetch.hpp"
#include "fourdgs/reconstruct.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// Why a frame is late: the state its instant needs was not resident when it was asked for.
enum class LateReason : std::uint8_t {
    none = 0,      // on time
    starting = 1,  // no state is resident yet: the frame is empty
    queued = 2,    // the worker has not started on it (it is preparing states before it: after
                   // a seek, or behind the playhead at a high rate)
    fetching = 3,  // the worker is reading it from the source (the network, the disk)
    decoding = 4,  // the worker is decoding or composing it
};

// "none", "starting", "queued", "fetching", "decoding".
std::string_view to_string(LateReason reason) noexcept;
std::string_view to_string(PlaybackState state) noexcept;

struct PlayerOptions {
    // States prepared ahead of the one shown, in the direction of play (at least 1): with the
    // state shown, what stays resident (see the header comment). Playing a keyframe-delta file
    // forward the worker also prepares, with the steps before it, a state composed whole (its
    // next keyframe) that the playhead would reach while composing it (a forward step holds
    // only the rows it changed); performance.md has figures.
    std::uint32_t look_ahead = 2;
    // Where the playhead starts, and the clock's starting rate and loop (set_rate, set_loop).
    double start = 0;
    double rate = 1;
    bool loop = false;
    // Start playing at once (else paused until play()).
    bool playing = false;
    // What evaluate() puts in each Frame: SH up to this degree (0: none), and the scene's Object
    // Tracks composed (§3).
    int max_sh_degree = 3;
    bool object_tracks = true;
    // Threads a gaussian-birth chunk is decoded on (0: hardware concurrency). The worker itself
    // is one thread.
    unsigned decode_threads = 1;
    // Keep a PlaybackPrefetcher (prefetch.hpp) on the source, aimed at the playhead; over a
    // local source prefetching does nothing. `prefetch.step_sec` is the spacing of the instants
    // it plans for, `horizon` how many, `byte_budget` the bytes held ahead.
    bool prefetch = true;
    PrefetchOptions prefetch_options;
    // A frame whose state has been late this long fails with playback-stalled (0: never).
    double stall_timeout_sec = 10;
};

// What a frame call says beside the Frame it fills.
struct PlayerFrame {
    double time = 0;     // the instant asked for: the clock's at `now`, or frame_at's t
    double shown = 0;    // the instant the Frame was evaluated at: `time`, or, when late, the
                         // nearest instant the state shown covers (the picture holds)
    bool late = false;
    LateReason reason = LateReason::none;
    PlaybackState state = PlaybackState::paused;
    // The interval over which the state shown is the one state_at gives (its chunks' common
    // interval, or its state chunk's [t0, t1)); empty (0, 0) when nothing is shown.
    double state_t0 = 0, state_t1 = 0;
    // §7: the state of each audio source (scene().audio, in order) at `time`.
    std::vector<AudioState> audio;
    // Which rows of the Frame may differ from the frame this player filled before (its previous
    // successful frame or frame_at call, into whatever Frame), so an engine re-uploads only
    // those. `all_changed`: rows may have come, gone or moved — the first frame, a state
    // composed whole (a keyframe, a seek, reverse play, a step with births or deaths, a new
    // gaussian-birth chunk set), a gaussian that became visible or invisible, a frame with
    // unrepresentable rows, an empty late frame: take the whole frame (`changed` is empty).
    // Otherwise the Frame has the previous frame's rows (same count, same `source` in the same
    // order) and `changed` lists, ascending, the Frame rows that may differ: every row not
    // listed is bit-identical to the previous frame's. A row is listed when a forward step
    // changed its gaussian, or when the instant changed and its §3 value depends on time (it
    // moves, fades, or has an Object Track); a paused frame lists none. A listed row may still
    // hold the same bits. When `out` is the Frame the previous call filled, untouched since, only
    // the listed rows are written into it; another Frame is filled whole.
    bool all_changed = true;
    std::vector<std::uint32_t> changed;
};

struct PlayerStats {
    std::uint64_t frames = 0, late_frames = 0;
    std::uint64_t chunks_decoded = 0;  // gaussian-birth chunks decoded by the worker
    std::uint64_t states_composed = 0; // keyframe-delta states composed from their keyframe
    std::uint64_t steps = 0;           // keyframe-delta forward steps (one delta each)
    std::uint64_t discarded = 0;       // prepared states dropped unseen (a seek, a turn)
    std::uint64_t resident_bytes = 0;  // the decoded states held now (shown + look-ahead)
};

class Player {
public:
    // Plays `reader` (opened by open_scene on `source`; both must outlive the player). Starts
    // the worker, which begins on options.start at once. Refusals: not-seekable (a
    // gaussian-birth stream, which has no index), invalid-option (look_ahead 0, a non-finite
    // start or rate, a negative rate on a stream, max_sh_degree outside 0..3).
    static Result<Player> open(SceneReader& reader, ByteSource& source,
                               const PlayerOptions& options = {});
    // The same over a source the player takes, opened here with open_scene (the player owns
    // both): open_source(path_or_url) gives one.
    static Result<Player> open(std::unique_ptr<ByteSource> source,
                               const PlayerOptions& options = {},
                               const OpenSceneOptions& open = {});

    Player(Player&&) noexcept;
    Player& operator=(Player&&) noexcept;
    // Stops the worker and waits for a read in flight to return.
    ~Player();

    const SceneInfo& scene() const noexcept;
    double duration() const noexcept;

    // The render thread's call: fills `out` with the frame at the clock's time for `now` (see
    // the header comment) and `info` with what it shows. On time, `out` is exactly
    // evaluate(state_at(info.time), info.time). Late (info.late), `out` is the state shown
    // before evaluated at info.shown (or empty, starting); with `wait` the call instead blocks
    // until the state is resident (or fails). Refusals: the reader's, for the state this frame
    // needs (out and info untouched); playback-stalled. Allocates nothing once `out` and `info`
    // have grown to the scene's size (apart from a keyframe-delta state the worker hands over).
    Status frame(double now, Frame& out, PlayerFrame& info, bool wait = false);
    // The same at scene time t (scrubbing, offline rendering), which becomes the playhead. Any
    // finite t: outside the scene it answers as state_at does (gaussian-birth: an empty frame;
    // keyframe-delta: time-out-of-range). A non-finite t is invalid-argument.
    Status frame_at(double t, Frame& out, PlayerFrame& info, bool wait = false);

    // Control, from any thread; each takes effect from the last frame shown.
    void play();
    void pause();
    // Moves the playhead to t (clamped to [0, duration), or wrapped when looping) and forgets
    // the refusals kept for states, so they are tried again.
    void seek(double t);
    // Playback speed; negative plays backward. Refusals: invalid-option (not finite), and
    // not-seekable for a negative rate on a stream.
    Status set_rate(double rate);
    void set_loop(bool loop);

    PlaybackState state() const;
    double rate() const;
    bool loop() const;
    // The instant the last frame showed (or the start, before any frame).
    double position() const;
    PlayerStats stats() const;

private:
    struct Impl;
    explicit Player(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace fourdgs
FOURDGS_PUBLIC_END
