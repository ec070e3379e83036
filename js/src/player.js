// Real-time playback in a browser's (or node's) event loop: a frame for every display tick.
//
// The clock is the caller's: frame(now) maps `now` (seconds, any origin: requestAnimationFrame's
// timestamp / 1000, an AudioContext's currentTime) to scene time by the library's clock
// (fourdgs_playback_clock, the one fourdgs::Player runs): t = anchor + rate × (now − anchorNow),
// wrapped when looping, clamped at the ends otherwise (playback then ends). The controls act
// from the last frame shown.
//
// What a frame costs. The library says which state covers t and over which span of instants it
// stays the same (fourdgs_reader_state_span, the C++ player's own answer) and decodes it once —
// the chunks covering t (gaussian-birth) or the state chunk's composed state (keyframe-delta) —
// into a block the player keeps; each frame evaluates §3 on it (fourdgs_reader_evaluate_block):
// decoding happens on the frame that enters a new state, evaluation on every frame. The bytes
// come first: the player keeps the bytes of the next `lookAhead` states on their way (as the C++
// player prepares look_ahead states; nearest first, within `byteBudget`), so a frame never waits
// on the network. When a frame's bytes have not arrived it is late: the
// previous state is shown at the nearest instant it covers (the picture holds), `late` is true
// and `reason` says why ("starting": nothing shown yet, "fetching": its bytes are on their way).
//
// Errors are the library's refusals for the state a frame needs (a damaged chunk,
// `source-changed`, ...): frame() throws them as FourdgsError; frames of other states go on.
//
// Changed rows. Each frame's info says which rows differ from the player's previous frame, so
// an engine re-uploads only those (fourdgs::PlayerFrame's contract): `allChanged` true when rows
// came, went or moved (the first frame, another state, a row that became visible or not: take
// the whole frame; `changed` is then empty), else `changed` (a Uint32Array, ascending, valid
// until the next frame) lists the rows that differ and every other row is bit for bit the
// previous frame's. The library says which (fourdgs_reader_evaluate_block_changes, the C++
// player's own answer): within a state it evaluates again only the rows whose value depends on
// t, so a frame of the same state at the same instant evaluates nothing.
const NO_ROWS = new Uint32Array(0);

// The largest instant before x (std::nextafter(x, -inf), as the C++ player takes it): where a
// state whose span ends at x is last shown.
const bits = new BigInt64Array(1), asDouble = new Float64Array(bits.buffer);
function before(x) {
  if (x === 0) return -Number.MIN_VALUE;
  asDouble[0] = x;
  bits[0] += x > 0 ? -1n : 1n;  // the next representable double toward -inf
  return asDouble[0];
}

// The library's playback clock (fourdgs_playback_clock: fourdgs::PlaybackClock, the one the C++
// Player runs): `now` to scene time, wrap, clamp, ended, and the controls.
class Clock {
  constructor(core, duration, { start, rate, loop, playing }) {
    this.core = core;
    const p = core.alloc(4);
    try {
      core.check(core.m._fourdgs_playback_clock_create(0, duration, start, rate, loop ? 1 : 0,
        playing ? 1 : 0, p));
      this.handle = core.u32(p);
    } finally { core.free(p); }
    this.out = core.alloc(8);
    this.infoStruct = core.newStruct('fourdgs_playback_clock_info');
  }
  frame(now) {
    this.core.check(this.core.m._fourdgs_playback_clock_frame(this.handle, now, this.out));
    return this.core.dataView().getFloat64(this.out, true);
  }
  control(name, ...args) { this.core.check(this.core.m[`_fourdgs_playback_clock_${name}`](this.handle, ...args)); }
  info() {
    this.core.check(this.core.m._fourdgs_playback_clock_info_get(this.handle, this.infoStruct));
    return this.core.read('fourdgs_playback_clock_info', this.infoStruct);
  }
  free() {
    this.core.m._fourdgs_playback_clock_free(this.handle);
    this.core.free(this.out);
    this.core.free(this.infoStruct);
  }
}

// The package's earlier look-ahead by time: with `step`, `lookAhead` counted the instants
// t + step, t + 2 step, ... (30 by default). lookAhead now counts states, as
// fourdgs::PlayerOptions::look_ahead does; read that way an old { step: 1 / 60, lookAhead: 60 }
// would quietly fetch 60 states ahead, so `step` is refused by name, with what to pass instead
// (a TypeError carrying the library's identifier for a bad option, as FourdgsError carries one).
function refuseStep(step) {
  const error = new TypeError(`invalid-option: the Player option step (${step}) is no longer ` +
    'taken: lookAhead counts states ahead of the one shown (2 by default), as the C++ ' +
    'player\'s look_ahead does, not instants of step; drop step and give lookAhead in states');
  error.refusal = 'invalid-option';
  throw error;
}

export class Player {
  /**
   * Plays an open Scene. Options: start (0), rate (1), loop (false), playing (false),
   * maxShDegree (3), applyObjectTracks (true), lookAhead (2: states ahead of the one shown whose
   * bytes are kept on their way, as fourdgs::PlayerOptions::look_ahead counts states),
   * byteBudget (16 MiB fetched ahead, at most). The earlier option `step` is refused (a TypeError,
   * refusal 'invalid-option': see refuseStep).
   */
  constructor(scene, { start = 0, rate = 1, loop = false, playing = false, maxShDegree = 3,
    applyObjectTracks = true, step, lookAhead = 2, byteBudget = 16 << 20 } = {}) {
    if (step !== undefined) refuseStep(step);
    this.scene = scene;
    this.duration = scene.info.durationSec;
    this.clock = new Clock(scene.core, this.duration, { start, rate, loop, playing });
    this.position = this.clock.info().anchor;  // the instant the last frame showed
    this.evaluate = { maxShDegree, applyObjectTracks };
    this.ahead = { states: lookAhead, byteBudget };
    this.block = scene.newBlock();   // the resident state, decoded
    this.out = scene.newFrame();     // the frame the views show
    this.resident = null;     // the state span in this.block: { key, t0, t1 }
    this.fetching = null;     // the look-ahead or catch-up fetch in flight
    this.stats = { frames: 0, lateFrames: 0, statesDecoded: 0 };
    this.changedRows = {};    // the array the frames' `changed` views
  }

  /** "paused", "playing" or "ended" (the library's spelling). */
  get state() { return this.scene.core.names.playbackState[this.clock.info().state]; }
  get rate() { return this.clock.info().rate; }
  get loop() { return this.clock.info().loop !== 0; }

  play() { this.clock.control('play'); }
  pause() { this.clock.control('pause'); }
  seek(t) {
    this.clock.control('seek', t);
    this.position = this.clock.info().anchor;
  }
  setRate(rate) {
    if (!Number.isFinite(rate)) throw new RangeError(`rate ${rate} is not finite`);
    this.clock.control('set_rate', rate);
  }
  setLoop(loop) { this.clock.control('set_loop', loop ? 1 : 0); }

  /** The instants the look-ahead fetches after the state `span` (scene.stateSpan of the state
   * shown): one in each of the next `lookAhead` states in the direction of play (the library's
   * spans, wrapping when looping), nearest first. */
  aheadOf(span) {
    const backward = this.rate < 0, { states } = this.ahead;
    const out = [], loop = this.loop;
    for (let s = span; out.length < states && s.key !== null;) {
      let at = backward ? before(s.t0) : s.t1;
      if (at >= this.duration || at < 0) {
        if (!loop) break;
        at = backward ? before(this.duration) : 0;
      }
      s = this.scene.stateSpan(at);
      if (s.key === null || s.key === span.key) break;
      out.push(at);
    }
    return out;
  }

  // Keeps the bytes of the next states (in the direction of play) on their way.
  lookAhead(span) {
    if (this.fetching || !this.scene.source.remote) return;
    this.fetching = this.scene.prefetchInstants(this.aheadOf(span), this.ahead.byteBudget)
      .catch(() => {})  // a hint: the frame that needs the bytes reports the failure
      .finally(() => { this.fetching = null; });
  }

  /** The frame at the caller's time `now` (see the header). */
  frame(now) { return this.show(this.clock.frame(now)); }

  /** The frame at scene time t, which becomes the playhead (scrubbing). */
  frameAt(t) {
    this.seek(t);
    return this.show(this.position);
  }

  /** Resolves once the bytes of instant t are held (a seek that should not show late frames). */
  async ready(t) { await this.scene.fetch(t); }

  /** Frees the player's state, frame and clock (the scene stays open). */
  close() {
    if (!this.block) return;
    this.clock.free();
    this.scene.freeBlock(this.block);
    this.scene.freeFrame(this.out);
    this.block = this.out = 0;
  }

  // Evaluates the state for t, decoding it first when it is not the resident one. Returns
  // { frame, info } with frame a FrameView (views valid until the next call into the package).
  show(t) {
    const s = this.scene.stateSpan(t);
    let late = false, reason = 'none', shown = t;
    if (!this.resident || this.resident.key !== s.key) {
      if (this.scene.isReady(t)) {
        this.scene.decodeState(t, this.block);
        this.resident = s;
        ++this.stats.statesDecoded;
      } else {
        late = true;
        reason = this.resident ? 'fetching' : 'starting';
        if (!this.fetching && this.scene.source.remote)  // catch up: this instant first
          this.fetching = this.ready(t).catch(() => {}).finally(() => { this.fetching = null; });
        if (this.resident)  // the C++ player's rule: clamp(t, t0, before(t1))
          shown = Math.min(Math.max(t, this.resident.t0), before(this.resident.t1));
      }
    }
    const { frame, allChanged, changed } = this.resident
      ? this.scene.evaluateBlockChanges(this.block, shown, this.evaluate, this.out, this.changedRows)
      : { frame: null, allChanged: true, changed: NO_ROWS };
    this.position = t;
    ++this.stats.frames;
    if (late) ++this.stats.lateFrames;
    this.lookAhead(this.resident ?? s);
    const audio = this.scene.extras.audioSources.map((_, i) => this.scene.audioStateAt(i, t));
    return {
      frame,
      info: { time: t, shown, late, reason, state: this.state, stateT0: this.resident?.t0 ?? 0,
        stateT1: this.resident?.t1 ?? 0, audio, allChanged, changed },
    };
  }
}

