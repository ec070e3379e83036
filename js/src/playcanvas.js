// fourdgs/playcanvas: a .4dgs scene as a PlayCanvas (2.x) gsplat entity whose splats follow the
// scene's time. docs/engines.md is the guide.
//
// The engine object is one GSplatContainer in the engine's default format (centre RGBA32F,
// colour, scale and rotation RGBA16F: the engine's own encoding, half floats), drawn by the
// unified gsplat renderer, which sorts it. The container is created once for the largest
// instant (adapter.js) and recreated larger only if a frame outgrows it (a container cannot be
// resized); each frame the adapter writes the rows (all, or those the Player's frame lists as
// changed) straight into the textures' words (half floats converted in bulk, see write), the
// centres the sorter reads, the bounds, and tells the component that its data changed
// (WORKBUFFER_UPDATE_ONCE).
//
// The clock is the app's: the adapter listens to the app's 'update' event and hands the Player
// the sum of its dt (app.timeScale applies). SH: the default format has none (the engine shades
// the base colour only), so the frame is evaluated without SH bands.
import { BoundingBox, Entity, FloatPacking, GSplatContainer, GSplatFormat, TEXTURELOCK_READ, Vec3,
  WORKBUFFER_UPDATE_ONCE } from 'playcanvas';
import { EngineScene } from './adapter.js';

const STREAMS = ['dataCenter', 'dataColor', 'dataScale', 'dataRotation'];

export class FourdgsGSplat extends EngineScene {
  /** Opens `input` (a URL, or any source the package's open() reads) and adds its entity to
   * `parent` (default app.root). Options: open()'s and the Player's (playing, rate, loop,
   * start, ...), and `entity` (an Entity to use). */
  static async load(app, input, options = {}) {
    const { scene, player } = await EngineScene.openPlayer(input, { ...options, maxShDegree: 0 });
    const splat = new FourdgsGSplat(app, scene, player, options);
    (options.parent ?? app.root).addChild(splat.entity);
    return splat;
  }

  constructor(app, scene, player, { entity = new Entity('fourdgs') } = {}) {
    super(scene, player);
    this.app = app;
    this.entity = entity;
    this.format = GSplatFormat.createDefaultFormat(app.graphicsDevice);
    this.container = null;
    this.lo = new Vec3();
    this.hi = new Vec3();
    this.halves = new HalfFloats();
    this.resize(this.capacity);
    this.clock = 0;   // the app's time, seconds (sum of its dt)
    this.onAppUpdate = (dt) => this.update(this.clock += dt);
    app.on('update', this.onAppUpdate);
  }

  resize(capacity) {
    const old = this.container;
    this.container = new GSplatContainer(this.app.graphicsDevice, capacity, this.format);
    this.container.aabb = new BoundingBox();   // the engine reads it from the start
    this.container.update(0, true);
    if (this.entity.gsplat) this.entity.gsplat.resource = this.container;
    else this.entity.addComponent('gsplat', { resource: this.container, unified: true });
    old?.destroy();
  }

  // Every row (rows null) or the rows listed. Many rows: each stream in one pass over the
  // frame's arrays: the centres (f32) copied four-wide, with the bounds; colour (four halves a
  // row, as the frame's) one bulk conversion; scale and rotation converted in bulk to halves and
  // their 16-bit words copied four-wide. A few rows: row by row, the bounds grown to hold them.
  write(frame, rows) {
    const c = this.container, n = frame.count;
    const textures = STREAMS.map((s) => c.getTexture(s).lock());
    if (rows === null || rows.length > n >> 3) this.writeAll(frame, textures);
    else this.writeRows(frame, rows, textures);
  }

  // The textures unlocked (the engine uploads them there, at once), the container told.
  submit(frame) {
    const c = this.container;
    for (const name of STREAMS) c.getTexture(name).unlock();
    c.update(frame.count, true);
    this.entity.gsplat.workBufferUpdate = WORKBUFFER_UPDATE_ONCE;
  }

  writeAll(frame, [center, color, scale, rotation]) {
    const c = this.container, n = frame.count;
    const centers = c.centers, p = frame.center;
    centers.set(p.subarray(0, 3 * n));
    let x0 = Infinity, y0 = Infinity, z0 = Infinity, x1 = -Infinity, y1 = -Infinity, z1 = -Infinity;
    for (let i = 0; i < n; ++i) {
      const x = p[3 * i], y = p[3 * i + 1], z = p[3 * i + 2];
      center[4 * i] = x; center[4 * i + 1] = y; center[4 * i + 2] = z;
      if (x < x0) x0 = x; if (x > x1) x1 = x;
      if (y < y0) y0 = y; if (y > y1) y1 = y;
      if (z < z0) z0 = z; if (z > z1) z1 = z;
    }
    this.halves.into(color, frame.color, 4 * n);
    const s = this.halves.of(frame.scale, 3 * n);
    for (let i = 0; i < n; ++i) {
      scale[4 * i] = s[3 * i]; scale[4 * i + 1] = s[3 * i + 1]; scale[4 * i + 2] = s[3 * i + 2];
    }
    const q = this.halves.of(frame.rotation, 4 * n);
    for (let i = 0; i < 4 * n; i += 4) {   // the engine's order is w, x, y, z
      rotation[i] = q[i + 3]; rotation[i + 1] = q[i]; rotation[i + 2] = q[i + 1]; rotation[i + 3] = q[i + 2];
    }
    if (n === 0) x0 = y0 = z0 = x1 = y1 = z1 = 0;
    c.aabb.setMinMax(this.lo.set(x0, y0, z0), this.hi.set(x1, y1, z1));
  }

  writeRows(frame, rows, [center, color, scale, rotation]) {
    const c = this.container, centers = c.centers, p = frame.center;
    const half = (values, at, count) => this.halves.of(values.subarray(at, at + count), count);
    const lo = this.lo.copy(c.aabb.getMin()), hi = this.hi.copy(c.aabb.getMax());
    for (let k = 0; k < rows.length; ++k) {
      const i = rows[k], i3 = 3 * i, i4 = 4 * i;
      for (let j = 0; j < 3; ++j) centers[i3 + j] = center[i4 + j] = p[i3 + j];
      lo.set(Math.min(lo.x, p[i3]), Math.min(lo.y, p[i3 + 1]), Math.min(lo.z, p[i3 + 2]));
      hi.set(Math.max(hi.x, p[i3]), Math.max(hi.y, p[i3 + 1]), Math.max(hi.z, p[i3 + 2]));
      color.set(half(frame.color, i4, 4), i4);
      scale.set(half(frame.scale, i3, 3), i4);
      const q = half(frame.rotation, i4, 4);
      rotation[i4] = q[3]; rotation[i4 + 1] = q[0]; rotation[i4 + 2] = q[1]; rotation[i4 + 3] = q[2];
    }
    c.aabb.setMinMax(lo, hi);
  }

  /** Rows [0, count) as the engine holds them, decoded from its textures: { count, center,
   * scale, rotation (x, y, z, w), color } (what the tests compare with the package's frame). */
  engineRows() {
    const c = this.container, n = this.count;
    const [center, color, scale, rotation] = STREAMS.map((s) =>
      c.getTexture(s).lock({ mode: TEXTURELOCK_READ }));
    for (const s of STREAMS) c.getTexture(s).unlock();
    const f = halfToFloat;
    const out = { count: n, center: new Float32Array(3 * n), scale: new Float32Array(3 * n),
      rotation: new Float32Array(4 * n), color: new Float32Array(4 * n) };
    for (let i = 0; i < n; ++i) {
      for (let k = 0; k < 3; ++k) {
        out.center[3 * i + k] = center[4 * i + k];
        out.scale[3 * i + k] = f(scale[4 * i + k]);
      }
      for (let k = 0; k < 4; ++k) {
        out.color[4 * i + k] = f(color[4 * i + k]);
        out.rotation[4 * i + k] = f(rotation[4 * i + (k + 1) % 4]);
      }
    }
    return out;
  }

  /** Stops following the app's frames, destroys the entity and closes the scene. */
  destroy() {
    this.app.off('update', this.onAppUpdate);
    this.entity.destroy();
    this.container.destroy();
    this.close();
  }
}

// An IEEE half's bits as a number (the engine gives only the other direction).
function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

// f32 values as IEEE half-float bits (the engine's RGBA16F texels): one bulk conversion through
// a Float16Array where the browser has one (round to nearest even), else the engine's
// FloatPacking.float2Half per value.
class HalfFloats {
  constructor() { this.scratch = null; }

  /** `values[0, count)` as half bits, in a scratch array valid until the next call. */
  of(values, count) {
    if (!this.scratch || this.scratch.length < count) {
      this.scratch = typeof Float16Array === 'undefined' ? new Uint16Array(count) : new Float16Array(count);
    }
    this.convert(this.scratch, values, count);
    return new Uint16Array(this.scratch.buffer, 0, count);
  }

  /** `values[0, count)` as half bits into `bits` (a Uint16Array). */
  into(bits, values, count) {
    if (typeof Float16Array === 'undefined') this.convert(bits, values, count);
    else this.convert(new Float16Array(bits.buffer, bits.byteOffset, bits.length), values, count);
  }

  convert(target, values, count) {
    if (target instanceof Uint16Array) {
      for (let k = 0; k < count; ++k) target[k] = FloatPacking.float2Half(values[k]);
    } else {
      target.set(values.subarray(0, count));
    }
  }
}
