// fourdgs — .4dgs scenes in browsers and node, through the fourdgs C++ SDK compiled to
// WebAssembly (docs/web.md). Every format rule, decode and reconstruction is the library's; this
// file turns its C ABI into promises, objects and typed-array views.
//
//   const scene = await open('https://example.com/dance.4dgs');   // one round trip
//   const frame = await scene.frameAt(2.5);                          // one more
//   frame.center, frame.color ...                                    // views on wasm memory
//
// Views. stateAt, frameAt and readAll return typed arrays that look straight into the module's
// memory (no copy). They stay valid until the next call into this package (any call may grow
// the memory, which detaches every view, or reuse the buffer the view shows): use them at once,
// or copy (`frame.center.slice()`).
import { FourdgsError, loadCore } from './abi.js';
import { BlobFetcher, RemoteSource, UrlFetcher, readStream } from './sources.js';
import { Player } from './player.js';

export { FourdgsError } from './abi.js';
export { RangeCache, RemoteSource, UrlFetcher, BlobFetcher, coalesce } from './sources.js';
export { Player } from './player.js';

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';

// The bytes of an input that is not read by ranges, or null.
async function wholeBytes(input, options) {
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  if (typeof ReadableStream !== 'undefined' && input instanceof ReadableStream)
    return readStream(input, options.onProgress);
  if (isNode && (input instanceof URL ? input.protocol === 'file:' :
    typeof input === 'string' && !/^[a-z][a-z0-9+.-]*:/i.test(input))) {
    const { readFile } = await import('node:fs/promises');
    return new Uint8Array(await readFile(input));
  }
  return null;
}

// A fetcher for inputs read by ranges: a URL (string or URL) or a Blob / File.
function fetcherFor(input, options) {
  if (typeof Blob !== 'undefined' && input instanceof Blob) return new BlobFetcher(input, options);
  if (typeof input === 'string' || input instanceof URL) {
    const base = typeof location === 'object' ? location.href : undefined;
    return new UrlFetcher(new URL(input, base), options);
  }
  throw new FourdgsError('invalid-argument', 'invalid-argument',
    'open() takes a URL, an ArrayBuffer or typed array, a Blob or File, or a ReadableStream');
}

// An opened input: either bytes in wasm memory, or a remote source behind the read callbacks.
// Opening it needs no module (the bytes, or a remote file's head and tail in one round trip), so
// open() loads the module meanwhile and attaches it after.
class Input {
  static async of(input, options) {
    const self = new Input();
    const bytes = await wholeBytes(input, options);
    if (bytes) {
      self.bytes = bytes;
      self.size = bytes.length;
    } else {
      self.remote = new RemoteSource(fetcherFor(input, options), options);
      await self.remote.open();
      self.size = self.remote.size;
    }
    return self;
  }

  /** Puts whole bytes into the module's memory, or registers the remote source's callbacks. */
  attach(core) {
    this.core = core;
    if (this.bytes) {
      this.ptr = core.alloc(this.bytes.length);
      core.heap.set(this.bytes, this.ptr);
      this.bytes = null;
    } else {
      this.registered = core.registerSource(this.remote);
    }
    return this;
  }

  // The module and the input together: neither waits for the other.
  static async load(input, options) {
    const [core, source] = await Promise.all([loadCore(options), Input.of(input, options)]);
    return source.attach(core);
  }

  // Calls `call()` (a C ABI call returning a status) until it no longer misses bytes: a read of
  // bytes not yet fetched fails and names its range; fetch it and call again. `plan` names what
  // the call will read, fetched first (one round trip); the loop is a safety net.
  async run(call, plan) {
    if (this.remote && plan) await this.remote.ensure(plan());
    for (let attempt = 0; ; ++attempt) {
      if (this.remote) this.remote.misses = [];
      const status = call();
      if (status === 0) return;
      if (this.remote?.misses.length && attempt < 16) {
        await this.remote.ensure(this.remote.misses);
        continue;
      }
      throw this.core.lastError();
    }
  }

  release() {
    if (this.ptr) this.core.free(this.ptr);
    if (this.registered) {
      this.core.free(this.registered.callbacks);
      this.core.unregisterSource(this.registered.id);
    }
    this.ptr = this.registered = null;
  }
}

// open options → fourdgs_open_options in memory (freed by the caller).
// A fourdgs_evaluate_options in wasm memory (the caller frees it): maxShDegree (default 3),
// applyObjectTracks (default true).
function evaluateOptions(core, { maxShDegree, applyObjectTracks }) {
  const opts = core.newStruct('fourdgs_evaluate_options');
  core.m._fourdgs_evaluate_options_init(opts);
  if (maxShDegree !== undefined) core.setField('fourdgs_evaluate_options', opts, 'max_sh_degree', maxShDegree);
  if (applyObjectTracks === false) core.setField('fourdgs_evaluate_options', opts, 'apply_object_tracks', 0);
  return opts;
}

function openOptions(core, options) {
  const p = core.newStruct('fourdgs_open_options');
  core.m._fourdgs_open_options_init(p);
  if (options.maxShDegree !== undefined)
    core.setField('fourdgs_open_options', p, 'max_sh_degree', options.maxShDegree);
  if (options.decodeThreads !== undefined)
    core.setField('fourdgs_open_options', p, 'decode_threads', options.decodeThreads);
  return p;
}

/**
 * Opens a scene for random access. `input`: a URL (read by HTTP range requests), an ArrayBuffer
 * or typed array, a Blob or File (read by slices), a ReadableStream (read to its end first), or
 * in node a file path. Options: maxShDegree, cacheBytes, speculativeBytes, fetchInit, wasmUrl.
 * Refusals are FourdgsError with the library's identifier.
 */
export async function open(input, options = {}) {
  const source = await Input.load(input, options);
  const core = source.core;
  const opts = openOptions(core, options);
  const out = core.alloc(4);
  try {
    await source.run(() => source.ptr
      ? core.m._fourdgs_reader_open_memory(source.ptr, source.size, opts, out)
      : core.m._fourdgs_reader_open_callbacks(source.registered.callbacks, opts, out));
    return new Scene(core, source, core.u32(out));
  } catch (e) {
    source.release();
    throw e;
  } finally {
    core.free(out);
    core.free(opts);
  }
}

/**
 * Opens `input` and plays it: a Player (player.js) over the Scene (player.scene), ready once
 * the first instant's bytes are held. Options: open()'s and the Player's.
 */
export async function play(input, options = {}) {
  const scene = await open(input, options);
  let player = null;
  try {  // the Player refuses a bad option (`step`): the scene is closed either way
    player = scene.player(options);
    await scene.fetch(player.position);
  } catch (e) {
    player?.close();
    scene.close();
    throw e;
  }
  return player;
}

/**
 * Validates a whole file (every finding, not just the first): { valid, errors, warnings,
 * truncated, findingsCapped, fileSize, records, chunks, findings: [{ severity, rule, field,
 * value, section, message, offset }] }. A remote file is fetched whole.
 */
export async function validate(input, options = {}) {
  const source = await Input.load(input, options);
  const core = source.core;
  const out = core.alloc(4);
  try {
    if (source.remote) await source.remote.ensure([{ offset: 0, length: source.size }]);
    await source.run(() => source.ptr
      ? core.m._fourdgs_validate_memory(source.ptr, source.size, 0, out)
      : core.m._fourdgs_validate_callbacks(source.registered.callbacks, 0, out));
    const validation = core.u32(out);
    try {
      const s = core.newStruct('fourdgs_validation_summary');
      core.check(core.m._fourdgs_validation_summary_get(validation, s));
      const summary = core.read('fourdgs_validation_summary', s);
      core.free(s);
      const f = core.newStruct('fourdgs_finding');
      const findings = [];
      for (let i = 0; i < summary.findingCount; ++i) {
        core.check(core.m._fourdgs_validation_finding(validation, i, f));
        const x = core.read('fourdgs_finding', f);
        findings.push({ ...x, severity: core.names.severity[x.severity] });
      }
      core.free(f);
      return { valid: summary.valid !== 0, errors: summary.errors, warnings: summary.warnings,
        truncated: summary.truncated !== 0, findingsCapped: summary.findingsCapped !== 0,
        fileSize: summary.fileSize, records: summary.records, chunks: summary.chunks, findings };
    } finally {
      core.m._fourdgs_validation_free(validation);
    }
  } finally {
    core.free(out);
    source.release();
  }
}

/** An opened scene: its information and extras, and the state at any instant. */
export class Scene {
  constructor(core, source, reader) {
    this.core = core;
    this.source = source;
    this.reader = reader;
    const m = core.m;
    this.frame = this.handle((p) => m._fourdgs_frame_create(0, p));
    this.block = this.handle((p) => m._fourdgs_block_create(0, p));
    const info = core.newStruct('fourdgs_scene_info');
    core.check(m._fourdgs_reader_scene_info(reader, info));
    const i = core.read('fourdgs_scene_info', info);
    core.free(info);
    /** The Header, the Quantization record and the counts (fourdgs_scene_info). */
    this.info = { ...i, temporalModel: i.temporalModelName };  // the library's spelling
    this.extras = this.readExtras(i);
  }

  /** The SH coefficient each byte of a frame's `sh` stands for (§6.5), by byte: the library's
   * map (a Float32Array of 256). */
  get shCoefficients() { return this.core.shCoefficients; }

  handle(create) {
    const p = this.core.alloc(4);
    try {
      this.core.check(create(p));
      return this.core.u32(p);
    } finally { this.core.free(p); }
  }

  // fn(i, ...outs) for i < count, each out a struct `name` (or a fourdgs_string pair): rows.
  list(count, structs, fn) {
    const c = this.core;
    const ptrs = structs.map((s) => c.newStruct(s));
    try {
      return Array.from({ length: count }, (_, i) => {
        c.check(fn(i, ...ptrs));
        return ptrs.map((p, k) => c.read(structs[k], p));
      });
    } finally { ptrs.forEach((p) => c.free(p)); }
  }

  readExtras(info) {
    const c = this.core, m = c.m, r = this.reader;
    const u32out = c.alloc(16);
    const extras = {
      headerAttributes: this.stringPairs(info.headerAttributeCount, m._fourdgs_reader_header_attribute),
      quantizationBounds: this.stringPairs(info.quantizationBoundCount, m._fourdgs_reader_quantization_bound),
      windows: [],
      metadata: [],
      attachments: this.list(info.attachmentCount, ['fourdgs_attachment_info'],
        (i, p) => m._fourdgs_reader_attachment(r, i, p)).map(([a]) => a),
      camera: null,
      audioSources: [],
      coordinateFrames: this.list(info.coordinateFrameCount, ['fourdgs_coordinate_frame'],
        (i, p) => m._fourdgs_reader_coordinate_frame(r, i, p)).map(([x]) => x),
      sensors: [],
      rigTrajectories: [],
      geodeticAnchors: this.list(info.geodeticAnchorCount, ['fourdgs_geodetic_anchor'],
        (i, p) => m._fourdgs_reader_geodetic_anchor(r, i, p)).map(([x]) => x),
      objects: [],
      objectTracks: [],
      chunks: this.list(info.chunkCount, ['fourdgs_chunk_info'],
        (i, p) => m._fourdgs_reader_chunk_info(r, i, p)).map(([x]) => x),
    };
    try {
      const lo = u32out, hi = u32out + 8;
      for (let i = 0; i < info.windowCount; ++i) {
        c.check(m._fourdgs_reader_window(r, i, lo, hi));
        const v = c.dataView();
        extras.windows.push([v.getFloat64(lo, true), v.getFloat64(hi, true)]);
      }
      const name = c.newStruct('fourdgs_string');
      for (let i = 0; i < info.metadataCount; ++i) {
        c.check(m._fourdgs_reader_metadata(r, i, name, u32out));
        const entries = this.stringPairs(c.u32(u32out),
          (reader, e, k, v) => m._fourdgs_reader_metadata_entry(reader, i, e, k, v));
        extras.metadata.push({ name: c.read('fourdgs_string', name).data, entries });
      }
      if (info.hasCamera) {
        const cam = c.newStruct('fourdgs_camera_info');
        c.check(m._fourdgs_reader_camera(r, cam));
        const camera = c.read('fourdgs_camera_info', cam);
        c.free(cam);
        camera.keyframes = this.list(camera.keyframeCount, ['fourdgs_camera_keyframe'],
          (i, p) => m._fourdgs_reader_camera_keyframe(r, i, p)).map(([k]) => k);
        extras.camera = camera;
      }
      for (const [a] of this.list(info.audioSourceCount, ['fourdgs_audio_source_info'],
        (i, p) => m._fourdgs_reader_audio_source(r, i, p))) {
        const index = extras.audioSources.length;
        a.keyframes = this.list(a.keyframeCount, ['fourdgs_audio_keyframe'],
          (k, p) => m._fourdgs_reader_audio_keyframe(r, index, k, p)).map(([k]) => k);
        extras.audioSources.push(a);
      }
      for (const [s] of this.list(info.sensorCount, ['fourdgs_sensor'],
        (i, p) => m._fourdgs_reader_sensor(r, i, p))) {
        s.distortion = Array.from(c.view(Float64Array, s.distortion, s.distortionCount));
        extras.sensors.push(s);
      }
      for (let i = 0; i < info.rigTrajectoryCount; ++i) {
        const interp = u32out + 4, count = u32out + 8;
        c.check(m._fourdgs_reader_rig_trajectory(r, i, name, interp, count));
        extras.rigTrajectories.push({
          name: c.read('fourdgs_string', name).data,
          interpolation: c.names.interpolation[c.u32(interp)],
          samples: this.list(c.u32(count), ['fourdgs_pose_sample'],
            (k, p) => m._fourdgs_reader_rig_trajectory_sample(r, i, k, p)).map(([x]) => x),
        });
      }
      c.free(name);
      for (const [o] of this.list(info.objectCount, ['fourdgs_object_info'],
        (i, p) => m._fourdgs_reader_object(r, i, p))) {
        o.embedding = o.hasEmbedding
          ? Array.from(c.view(Float32Array, o.embedding, info.objectEmbeddingDim)) : null;
        extras.objects.push(o);
      }
      for (let i = 0; i < info.objectTrackCount; ++i) {
        const id = u32out, interp = u32out + 4, count = u32out + 8;
        c.check(m._fourdgs_reader_object_track(r, i, id, interp, count));
        extras.objectTracks.push({
          objectId: c.u32(id),
          interpolation: c.names.interpolation[c.u32(interp)],
          samples: this.list(c.u32(count), ['fourdgs_pose_sample'],
            (k, p) => m._fourdgs_reader_object_track_sample(r, i, k, p)).map(([x]) => x),
        });
      }
    } finally { c.free(u32out); }
    return extras;
  }

  // [key, value] pairs from a (reader, index, key*, value*) accessor.
  stringPairs(count, fn) {
    return this.list(count, ['fourdgs_string', 'fourdgs_string'],
      (i, k, v) => fn(this.reader, i, k, v)).map(([k, v]) => [k.data, v.data]);
  }

  /** The byte ranges the state at t reads: [{ offset, length }] (fetched before it decodes). */
  fetchRanges(t) {
    const c = this.core, count = c.alloc(4);
    try {
      c.check(c.m._fourdgs_reader_fetch_ranges(this.reader, t, 0, 0, count));
      const n = c.u32(count);
      const size = c.sizeOf('fourdgs_byte_range');
      const ranges = c.alloc(Math.max(1, n) * size);
      try {
        c.check(c.m._fourdgs_reader_fetch_ranges(this.reader, t, ranges, n, count));
        return Array.from({ length: n }, (_, i) => c.read('fourdgs_byte_range', ranges + i * size));
      } finally { c.free(ranges); }
    } finally { c.free(count); }
  }

  /** The bytes the state at t fetches (the sum of fetchRanges(t)). */
  fetchCost(t) { return this.fetchRanges(t).reduce((n, r) => n + r.length, 0); }

  /** The index entries the state at t reads (gaussian-birth: the chunks covering t;
   * keyframe-delta: the chain). */
  chunksFor(t) {
    const c = this.core, count = c.alloc(4);
    try {
      c.check(c.m._fourdgs_reader_chunks_for(this.reader, t, 0, 0, count));
      const n = c.u32(count), list = c.alloc(4 * Math.max(1, n));
      try {
        c.check(c.m._fourdgs_reader_chunks_for(this.reader, t, list, n, count));
        return Array.from(c.view(Uint32Array, list, n));
      } finally { c.free(list); }
    } finally { c.free(count); }
  }

  /** Which state covers t — the library's answer (fourdgs_reader_state_span), the C++ player's
   * own: { key, t0, t1 }. The state is the same for every instant of [t0, t1) (decode it once;
   * chunksFor(t) names the index entries it is decoded from); key is null when no state covers
   * t. */
  stateSpan(t) {
    const c = this.core, out = c.newStruct('fourdgs_state_span');
    try {
      c.check(c.m._fourdgs_reader_state_span(this.reader, t, out));
      const { key, t0, t1 } = c.read('fourdgs_state_span', out);
      return { key, t0, t1 };
    } finally { c.free(out); }
  }

  /** Fetches the bytes instant t needs (nothing to do for bytes given whole). */
  async fetch(t) {
    if (this.source.remote) await this.source.remote.ensure(this.fetchRanges(t));
  }

  // The player's calls (player.js): a block and a frame of its own, filled synchronously from
  // bytes already held.
  newBlock() { return this.handle((p) => this.core.m._fourdgs_block_create(0, p)); }
  newFrame() { return this.handle((p) => this.core.m._fourdgs_frame_create(0, p)); }
  freeBlock(b) { this.core.m._fourdgs_block_free(b); }
  freeFrame(f) { this.core.m._fourdgs_frame_free(f); }
  decodeState(t, block) {
    this.core.check(this.core.m._fourdgs_reader_state_at(this.reader, t, block));
  }
  evaluateBlock(block, t, { maxShDegree, applyObjectTracks } = {}, frame = this.frame) {
    const c = this.core, m = c.m;
    const opts = evaluateOptions(c, { maxShDegree, applyObjectTracks });
    try {
      c.check(m._fourdgs_reader_evaluate_block(this.reader, block, t, opts, frame));
    } finally { c.free(opts); }
    return this.frameView(frame);
  }

  /** evaluateBlock that also says which rows differ from what the previous such call left in
   * `frame` (fourdgs_reader_evaluate_block_changes: only the rows that can have changed are
   * evaluated again): { frame, allChanged, changed }, `changed` a Uint32Array (ascending; empty
   * when allChanged) valid until the next call with the same `rows` holder. `rows` ({}: this
   * call keeps its array there, grown as needed) spares a frame its allocation. */
  evaluateBlockChanges(block, t, { maxShDegree, applyObjectTracks } = {}, frame = this.frame, rows = {}) {
    const c = this.core, m = c.m;
    const opts = evaluateOptions(c, { maxShDegree, applyObjectTracks });
    const out = c.newStruct('fourdgs_frame_changes');
    try {
      c.check(m._fourdgs_reader_evaluate_block_changes(this.reader, block, t, opts, frame, out));
      const k = c.read('fourdgs_frame_changes', out), n = k.changedCount;
      if (!rows.array || rows.array.length < n) rows.array = new Uint32Array(Math.max(n, 2 * (rows.array?.length ?? 0)));
      if (n) rows.array.set(c.view(Uint32Array, k.changedRows, n));
      return { frame: this.frameView(frame), allChanged: k.allChanged !== 0, changed: rows.array.subarray(0, n) };
    } finally { c.free(out); c.free(opts); }
  }

  /** A player over this scene (player.js); close it before the scene. */
  player(options) { return new Player(this, options); }

  /** True when the bytes instant t needs are held (frameAt(t) then fetches nothing). */
  isReady(t) {
    if (!this.source.remote) return true;
    return this.source.remote.cache.missing(this.fetchRanges(t)).length === 0;
  }

  blockView() {
    const c = this.core, p = c.newStruct('fourdgs_block_columns'), q = c.newStruct('fourdgs_block_info');
    try {
      c.check(c.m._fourdgs_block_columns_get(this.block, p));
      c.check(c.m._fourdgs_block_info_get(this.block, q));
      const k = c.read('fourdgs_block_columns', p);
      const n = k.count;
      return {
        count: n,
        position: c.view(Float32Array, k.position, 3 * n),
        scale: c.view(Float32Array, k.scale, 3 * n),
        rotation: c.view(Float32Array, k.rotation, 4 * n),
        color: c.view(Float32Array, k.color, 4 * n),
        motion: c.view(Float32Array, k.motion, 3 * n),
        muT: c.view(Float32Array, k.muT, n),
        sigmaT: c.view(Float32Array, k.sigmaT, n),
        winLo: c.view(Float32Array, k.winLo, n),
        winHi: c.view(Float32Array, k.winHi, n),
        flags: c.view(Uint8Array, k.flags, n),
        windowIndex: c.view(Uint32Array, k.windowIndex, n),
        objectId: k.objectId ? c.view(Uint32Array, k.objectId, n) : null,
        sourceGroup: k.sourceGroup ? c.view(Int32Array, k.sourceGroup, n) : null,
        sourceIndex: k.sourceIndex ? c.view(Int32Array, k.sourceIndex, n) : null,
        gaussianId: k.gaussianId ? c.view(Uint32Array, k.gaussianId, n) : null,
        shDegree: k.shDegree,
        shPerGaussian: k.shPerGaussian,
        sh: c.view(Uint8Array, k.sh, k.shPerGaussian * n),
        info: c.read('fourdgs_block_info', q),
      };
    } finally { c.free(p); c.free(q); }
  }

  /**
   * The decoded §3 state instant t needs, before evaluation (gaussian-birth: every gaussian of
   * the chunks covering t; keyframe-delta: the composed state of current(t)), as views.
   */
  async stateAt(t) {
    await this.source.run(() => this.core.m._fourdgs_reader_state_at(this.reader, t, this.block),
      () => this.fetchRanges(t));
    return this.blockView();
  }

  /** Every gaussian of a gaussian-birth file, as views (a remote file is fetched whole). */
  async readAll() {
    await this.source.run(() => this.core.m._fourdgs_reader_read_all(this.reader, this.block),
      () => [{ offset: 0, length: this.source.size }]);
    return this.blockView();
  }

  /**
   * The visible gaussians at t (§3 with the Header's cutoff and the Object Tracks), packed, as
   * views: center, scale, rotation (xyzw), color (r, g, b, opacity at t), objectId, source, sh.
   * Options: maxShDegree (3), applyObjectTracks (true).
   */
  async frameAt(t, { maxShDegree, applyObjectTracks } = {}) {
    const c = this.core, m = c.m;
    const opts = evaluateOptions(c, { maxShDegree, applyObjectTracks });
    try {
      await this.source.run(() => m._fourdgs_reader_evaluate(this.reader, t, opts, this.frame),
        () => this.fetchRanges(t));
    } finally { c.free(opts); }
    return this.frameView();
  }

  frameView(frame = this.frame) {
    const c = this.core, p = c.newStruct('fourdgs_frame_columns');
    try {
      c.check(c.m._fourdgs_frame_columns_get(frame, p));
      const k = c.read('fourdgs_frame_columns', p), n = k.count;
      return {
        time: k.time,
        count: n,
        center: c.view(Float32Array, k.center, 3 * n),
        scale: c.view(Float32Array, k.scale, 3 * n),
        rotation: c.view(Float32Array, k.rotation, 4 * n),
        color: c.view(Float32Array, k.color, 4 * n),
        objectId: c.view(Uint32Array, k.objectId, n),
        source: c.view(Uint32Array, k.source, n),
        shDegree: k.shDegree,
        shPerGaussian: k.shPerGaussian,
        sh: c.view(Uint8Array, k.sh, k.shPerGaussian * n),
        flags: c.view(Uint8Array, k.flags, n),
        // Visible gaussians with no row: a value of theirs is not a finite f32 at this instant.
        unrepresentable: k.unrepresentable,
      };
    } finally { c.free(p); }
  }

  /** §7: what audio source `index` plays at scene time t: { active, localTime, gain, position,
   * rotation }. */
  audioStateAt(index, t) {
    const c = this.core, p = c.newStruct('fourdgs_audio_state');
    try {
      c.check(c.m._fourdgs_reader_audio_state_at(this.reader, index, t, p));
      const s = c.read('fourdgs_audio_state', p);
      return { ...s, active: s.active !== 0 };
    } finally { c.free(p); }
  }

  /** The camera at t (the file's keyed path, or the default view): { position, target, fovYDeg }. */
  cameraAt(t) {
    const c = this.core, p = c.alloc(56);
    try {
      c.check(c.m._fourdgs_reader_camera_at(this.reader, t, p, p + 24, p + 48));
      const v = c.dataView();
      const vec = (at) => [0, 1, 2].map((i) => v.getFloat64(at + 8 * i, true));
      return { position: vec(p), target: vec(p + 24), fovYDeg: v.getFloat64(p + 48, true) };
    } finally { c.free(p); }
  }

  /** The bytes of a payload (an attachment's or an audio source's `payload`), copied. */
  async readPayload(payload) {
    const c = this.core, desc = c.newStruct('fourdgs_payload'), size = c.alloc(4);
    c.setField('fourdgs_payload', desc, 'offset', payload.offset);
    c.setField('fourdgs_payload', desc, 'size', payload.size);
    const buffer = c.alloc(payload.size);
    try {
      await this.source.run(() => c.m._fourdgs_reader_read_payload(this.reader, desc, buffer,
        payload.size, size), () => [{ offset: payload.offset, length: payload.size }]);
      return c.heap.slice(buffer, buffer + c.u32(size));
    } finally { c.free(desc); c.free(size); c.free(buffer); }
  }

  /** Fetches the ranges of `instants` (in that order) that are not held yet, stopping before
   * `byteBudget` bytes; resolves to the bytes fetched. A remote source only (else 0). The
   * Player's look-ahead is this over player.aheadOf's instants (one per state ahead). */
  async prefetchInstants(instants, byteBudget = 16 << 20) {
    const remote = this.source.remote;
    if (!remote) return 0;
    let fetched = 0;
    for (const at of instants) {
      const wanted = remote.cache.missing(this.fetchRanges(at));
      const bytes = wanted.reduce((n, r) => n + r.length, 0);
      if (fetched + bytes > byteBudget) break;
      if (bytes) fetched += await remote.ensure(wanted);
    }
    return fetched;
  }

  /** What the source has fetched: { requests, roundTrips, bytesFetched, retries, cachedBytes };
   * zeros for bytes given whole. */
  get stats() {
    return this.source.remote ? this.source.remote.stats
      : { requests: 0, roundTrips: 0, bytesFetched: 0, retries: 0, cachedBytes: 0 };
  }

  /** The library version ("0.1.0"). */
  get libraryVersion() { return this.core.version; }

  /** Frees the scene's memory; the views it lent die with it. */
  close() {
    if (!this.reader) return;
    const m = this.core.m;
    m._fourdgs_frame_free(this.frame);
    m._fourdgs_block_free(this.block);
    m._fourdgs_reader_free(this.reader);
    this.source.release();
    this.reader = 0;
  }
}
