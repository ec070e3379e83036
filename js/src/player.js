// Real-time playback in a browser's (or node's) event loop: a frame for every display tick.
//
// The clock is the caller's: frame(now) maps `now` (seconds, any origin: requestAnimationFrame's
// timestamp / 1000, an AudioContext's currentTime) to scene time,
// t = anchor + rate × (now − anchorNow), wrapped when looping, clamped at the ends otherwise
// (playback then ends). The controls act from the last frame shown, as fourdgs::Player's do.
//
// What a frame costs. The library decodes a state once — the chunks covering t (gaussian-birth)
// or the state chunk's composed state (keyframe-delta) — into a block the player keeps, and each
// frame evaluates §3 on it (fourdgs_reader_evaluate_block): decoding happens on the frame that
// enters a new state, evaluation on every frame. The bytes come first: the player keeps the next
// `lookAhead` instants' ranges on their way (Scene.prefetch, nearest first, within `byteBudget`),
// so a frame never waits on the network. When a frame's bytes have not arrived it is late: the
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
const STATES = ['paused', 'playing', 'ended'];
const NO_ROWS = new Uint32Array(0);

export class Player {
  /**
   * Plays an open Scene. Options: start (0), rate (1), loop (false), playing (false),
   * maxShDegree (3), applyObjectTracks (true), step (1/30: the spacing of the instants fetched
   * ahead), lookAhead (30 instants), byteBudget (16 MiB fetched ahead, at most).
   */
  constructor(scene, { start = 0, rate = 1, loop = false, playing = false, maxShDegree = 3,
    applyObjectTracks = true, step = 1 / 30, lookAhead = 30, byteBudget = 16 << 20 } = {}) {
    this.scene = scene;
    this.duration = scene.info.durationSec;
    this.rate = rate;
    this.loop = loop;
    this.state = playing ? 'playing' : 'paused';
    this.anchor = start;      // scene time at anchorNow
    this.anchorNow = null;    // the caller's time the anchor was taken at (null: the next frame)
    this.position = start;    // the instant the last frame showed
    this.evaluate = { maxShDegree, applyObjectTracks };
    this.ahead = { step, horizon: lookAhead, byteBudget };
    this.block = scene.newBlock();   // the resident state, decoded
    this.out = scene.newFrame();     // the frame the views show
    this.resident = null;     // { key, t0, t1 } of the state in this.block
    this.fetching = null;     // the look-ahead or catch-up fetch in flight
    this.stats = { frames: 0, lateFrames: 0, statesDecoded: 0 };
    this.changedRows = {};    // the array the frames' `changed` views
  }

  play() {
    if (this.state === 'ended') this.anchor = this.rate < 0 ? this.duration : 0;
    else this.anchor = this.position;
    this.anchorNow = null;
    this.state = 'playing';
  }
  pause() { this.anchor = this.position; this.state = this.state === 'ended' ? 'ended' : 'paused'; }
  seek(t) {
    this.anchor = this.wrap(t);
    this.anchorNow = null;
    this.position = this.anchor;
    if (this.state === 'ended') this.state = 'paused';
  }
  setRate(rate) {
    if (!Number.isFinite(rate)) throw new RangeError(`rate ${rate} is not finite`);
    this.anchor = this.position;
    this.anchorNow = null;
    this.rate = rate;
  }
  setLoop(loop) { this.loop = !!loop; }

  wrap(t) {
    const d = this.duration;
    if (this.loop && d > 0) return ((t % d) + d) % d;
    return Math.min(Math.max(t, 0), Math.max(0, d - 1e-9 * Math.max(1, d)));
  }

  // The scene time for the caller's `now`, and whether playback ends there.
  clock(now) {
    if (this.state !== 'playing') return this.position;
    if (this.anchorNow === null) this.anchorNow = now;
    const t = this.anchor + this.rate * (now - this.anchorNow);
    if (!this.loop && (t >= this.duration || t < 0)) {
      this.state = 'ended';
      return this.wrap(t);
    }
    return this.wrap(t);
  }

  // The state's key and interval at t (the chunks it is decoded from).
  stateOf(t) {
    const entries = this.scene.chunksFor(t);
    const chunks = this.scene.extras.chunks;
    if (!entries.length) return { key: '', t0: 0, t1: 0 };
    if (this.scene.info.temporalModel === 'keyframe-delta') {
      const c = chunks[entries[entries.length - 1]];
      return { key: entries.join(','), t0: c.t0, t1: c.t1 };
    }
    let t0 = -Infinity, t1 = Infinity;
    for (const e of entries) { t0 = Math.max(t0, chunks[e].t0); t1 = Math.min(t1, chunks[e].t1); }
    return { key: entries.join(','), t0, t1 };
  }

  // Keeps the bytes of the next instants (in the direction of play) on their way.
  lookAhead(t) {
    if (this.fetching || !this.scene.source.remote) return;
    const step = this.ahead.step * (this.rate < 0 ? -1 : 1);
    this.fetching = this.scene.prefetch(t, { ...this.ahead, step })
      .catch(() => {})  // a hint: the frame that needs the bytes reports the failure
      .finally(() => { this.fetching = null; });
  }

  /** The frame at the caller's time `now` (see the header). */
  frame(now) { return this.show(this.clock(now)); }

  /** The frame at scene time t, which becomes the playhead (scrubbing). */
  frameAt(t) {
    this.seek(t);
    return this.show(this.position);
  }

  /** Resolves once the bytes of instant t are held (a seek that should not show late frames). */
  async ready(t) { await this.scene.fetch(t); }

  /** Frees the player's state and frame (the scene stays open). */
  close() {
    if (!this.block) return;
    this.scene.freeBlock(this.block);
    this.scene.freeFrame(this.out);
    this.block = this.out = 0;
  }

  // Evaluates the state for t, decoding it first when it is not the resident one. Returns
  // { frame, info } with frame a FrameView (views valid until the next call into the package).
  show(t) {
    const s = this.stateOf(t);
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
        if (this.resident) shown = Math.min(Math.max(t, this.resident.t0),
          this.resident.t1 - 1e-9 * Math.max(1, Math.abs(this.resident.t1)));
      }
    }
    const { frame, allChanged, changed } = this.resident
      ? this.scene.evaluateBlockChanges(this.block, shown, this.evaluate, this.out, this.changedRows)
      : { frame: null, allChanged: true, changed: NO_ROWS };
    this.position = t;
    ++this.stats.frames;
    if (late) ++this.stats.lateFrames;
    this.lookAhead(t);
    const audio = this.scene.extras.audioSources.map((_, i) => this.scene.audioStateAt(i, t));
    return {
      frame,
      info: { time: t, shown, late, reason, state: this.state, stateT0: this.resident?.t0 ?? 0,
        stateT1: this.resident?.t1 ?? 0, audio, allChanged, changed },
    };
  }
}

export { STATES as PLAYBACK_STATES };
