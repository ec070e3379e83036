// fourdgs/playcanvas: a .4dgs scene as a PlayCanvas (2.x) gsplat entity whose splats follow the
// scene's time. docs/engines.md is the guide.
//
// The engine object is one GSplatContainer in the engine's default format (centre RGBA32F,
// colour, scale and rotation RGBA16F: the engine's own encoding, half floats), drawn by the
// unified gsplat renderer, which sorts it. The container is created once for the largest
// instant (adapter.js) and recreated larger only if a frame outgrows it (a container cannot be
// resized); each frame the adapter writes the rows, the centres the sorter reads, the bounds,
// and tells the component that its data changed (WORKBUFFER_UPDATE_ONCE).
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

  write(frame) {
    const half = FloatPacking.float2Half;
    const c = this.container, n = frame.count;
    const [center, color, scale, rotation] = STREAMS.map((s) => c.getTexture(s).lock());
    const centers = c.centers;
    const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    for (let i = 0; i < n; ++i) {
      const i3 = 3 * i, i4 = 4 * i;
      for (let k = 0; k < 3; ++k) {
        const v = frame.center[i3 + k];
        center[i4 + k] = centers[i3 + k] = v;
        if (v < lo[k]) lo[k] = v;
        if (v > hi[k]) hi[k] = v;
        scale[i4 + k] = half(frame.scale[i3 + k]);
      }
      for (let k = 0; k < 4; ++k) color[i4 + k] = half(frame.color[i4 + k]);
      rotation[i4] = half(frame.rotation[i4 + 3]);  // the engine's order is w, x, y, z
      rotation[i4 + 1] = half(frame.rotation[i4]);
      rotation[i4 + 2] = half(frame.rotation[i4 + 1]);
      rotation[i4 + 3] = half(frame.rotation[i4 + 2]);
    }
    for (const s of STREAMS) c.getTexture(s).unlock();
    if (n === 0) { lo.fill(0); hi.fill(0); }
    c.aabb.setMinMax(this.lo.set(...lo), this.hi.set(...hi));
    c.update(n, true);
    this.entity.gsplat.workBufferUpdate = WORKBUFFER_UPDATE_ONCE;
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
