// What the engine adapters (playcanvas.js, three.js) share: a scene opened with the package's
// Player, stepped by the host engine's frame loop with the engine's own clock, and the engine
// object's capacity. Nothing here knows an engine; each adapter writes the frame into its
// engine's splat data (its `write(frame, rows)`: every row, or only the rows the Player's frame
// lists as changed) and says what it can show (SH or not).
//
// The Player keeps the clock, the look-ahead and the late-frame rule (player.js): an adapter
// hands it the engine's time every frame and shows what it returns, nothing more.
import { open } from './fourdgs.js';
import { Player } from './player.js';

/** The most gaussians any instant can show: for each chunk's start, the gaussians of every
 * chunk read at that instant (a bound: the visible ones are a subset). The engine object is
 * created this large, so that playing never reallocates it; `grow` covers a scene whose chunk
 * table undercounts (a keyframe-delta state keeps gaussians born in earlier chunks). */
export function largestInstant(scene) {
  const chunks = scene.extras.chunks;
  let most = 0;
  for (const c of chunks) {
    let n = 0;
    for (const e of scene.chunksFor(c.t0)) n += chunks[e].gaussianCount;
    most = Math.max(most, n);
  }
  return Math.max(1, most || scene.info.gaussianCount);
}

/** The capacity to reallocate to when `count` rows do not fit in `capacity`. */
export const grown = (capacity, count) => Math.max(count, Math.ceil(capacity * 1.5));

export class EngineScene extends EventTarget {
  /** Opens `input` (a URL or any source open() reads) and makes its Player; resolves once the
   * bytes of the first instant shown (`start`) are held, so that the engine's first frame shows
   * it rather than a late one. Options are open()'s and the Player's (rate, loop, playing,
   * start, lookAhead, ...). */
  static async openPlayer(input, options = {}) {
    const scene = await open(input, options);
    let player = null;
    try {  // the Player refuses a bad option (`step`): the scene is closed either way
      player = new Player(scene, options);
      await player.ready(options.start ?? 0);
    } catch (e) {
      player?.close();
      scene.close();
      throw e;
    }
    return { scene, player };
  }

  constructor(scene, player) {
    super();
    this.scene = scene;
    this.player = player;
    this.capacity = largestInstant(scene);
    /** The last frame's information (the Player's: time, shown, late, reason, state, audio). */
    this.frameInfo = null;
    /** Rows written into the engine object by the last update. */
    this.count = 0;
    // lastUploadMs: the adapter's write (from the Player's frame to the engine's data ready for
    // upload); lastSubmitMs: the engine's own call that takes it (PlayCanvas uploads its
    // textures there at once; Spark uploads in its next frame).
    // lastRows: the rows the last write was given (all of the frame's, or those it listed).
    this.stats = { frames: 0, lateFrames: 0, uploads: 0, grows: 0, lastFrameMs: 0,
      lastUploadMs: 0, lastSubmitMs: 0, lastRows: 0 };
    this.shown = null;  // the instant and state the engine object holds (skip repeated uploads)
    // Whether the engine object holds the Player's previous frame, so that only the rows the
    // Player lists as changed need writing (false until the first write and after a resize).
    this.holdsPrevious = false;
  }

  get duration() { return this.player.duration; }
  get time() { return this.player.position; }
  get state() { return this.player.state; }
  get late() { return !!this.frameInfo?.late; }
  play() { this.player.play(); }
  pause() { this.player.pause(); }
  seek(t) { this.player.seek(t); }
  setRate(rate) { this.player.setRate(rate); }
  setLoop(loop) { this.player.setLoop(loop); }
  /** Resolves once instant t's bytes are held (a seek without late frames). */
  ready(t) { return this.player.ready(t); }

  /** The scene's Camera path at t (default: now): { position, target, fovYDeg }, or null when
   * the scene has none. */
  camera(t = this.time) {
    return this.scene.info.hasCamera ? this.scene.cameraAt(t) : null;
  }

  /** Each audio source's state at the last frame ({ active, localTime, gain, position,
   * rotation }, in extras.audioSources' order), for the app's own audio. */
  get audio() { return this.frameInfo?.audio ?? []; }

  /** One engine frame at the engine's clock `nowSec`: the Player's frame, written into the
   * engine object when it shows a new instant. Dispatches 'late' (detail: the frame's
   * information) when the frame's bytes have not arrived, and 'frame' after every update. */
  update(nowSec) {
    const evaluated = performance.now();
    const { frame, info } = this.player.frame(nowSec);
    this.stats.lastFrameMs = performance.now() - evaluated;  // the Player's decode + evaluate
    this.frameInfo = info;
    ++this.stats.frames;
    if (info.late) {
      ++this.stats.lateFrames;
      this.dispatchEvent(new CustomEvent('late', { detail: info }));
    }
    const key = frame ? `${this.player.resident?.key}@${frame.time}` : null;
    if (frame && key !== this.shown) {
      const start = performance.now();
      if (frame.count > this.capacity) {
        this.capacity = grown(this.capacity, frame.count);
        ++this.stats.grows;
        this.resize(this.capacity);
        this.holdsPrevious = false;
      }
      const rows = this.holdsPrevious && !info.allChanged ? info.changed : null;
      this.write(frame, rows);
      this.stats.lastUploadMs = performance.now() - start;
      this.stats.lastRows = rows ? rows.length : frame.count;
      const submitted = performance.now();
      this.submit(frame);
      this.stats.lastSubmitMs = performance.now() - submitted;
      this.holdsPrevious = true;
      this.count = frame.count;
      this.shown = key;
      ++this.stats.uploads;
    }
    this.dispatchEvent(new CustomEvent('frame', { detail: info }));
    return info;
  }

  /** Frees the player and closes the scene (the engine object is the adapter's to destroy). */
  close() {
    this.player.close();
    this.scene.close();
  }

  // Per adapter: resize(capacity) reallocates the engine object; write(frame, rows) fills its
  // data: every row when rows is null, else the rows listed (the others hold the frame's
  // values); submit(frame) hands it to the engine for upload.
  resize() { throw new Error('an adapter implements resize'); }
  write() { throw new Error('an adapter implements write'); }
  submit() { throw new Error('an adapter implements submit'); }
}
