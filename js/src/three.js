// fourdgs/three: a .4dgs scene as a Spark (2.x) SplatMesh for three.js, whose splats follow the
// scene's time. docs/engines.md is the guide.
//
// The engine object is one PackedSplats (Spark's own encoding: 16 bytes a splat, centre in half
// floats, colour and opacity in 8 bits, log scale in 8 bits, rotation octahedral 8+8+8; SH bands
// 1–3 in Spark's packed SH arrays) inside one SplatMesh, which Spark sorts and draws. It is
// created once for the largest instant (adapter.js) and grown only if a frame outgrows it.
//
// The clock is Spark's: the mesh's onFrame callback runs in SparkRenderer's frame update with
// Spark's elapsed time, before Spark gathers the meshes' splats for the frame, so the rows
// written there are the ones drawn in that frame.
import { PackedSplats, SplatMesh, utils } from '@sparkjsdev/spark';
import { EngineScene, shCoefficient } from './adapter.js';

// SH band b: its coefficients per colour component start at BAND_FIRST[b] and number 2b + 1.
const BAND_FIRST = [0, 0, 3, 8];
const SH_ENCODERS = [null, utils.encodeSh1Rgb, utils.encodeSh2Rgb, utils.encodeSh3Rgb];
const SH_WORDS = [0, 2, 4, 4];

export class FourdgsSplatMesh extends EngineScene {
  /** Opens `input` (a URL, or any source the package's open() reads) and makes its SplatMesh
   * (`.mesh`, to add to a three.js scene). Options: open()'s and the Player's (playing, rate,
   * loop, start, maxShDegree (3): the SH bands shown, ...). */
  static async load(input, options = {}) {
    const { scene, player } = await EngineScene.openPlayer(input, options);
    return new FourdgsSplatMesh(scene, player, options);
  }

  constructor(scene, player, { maxShDegree = 3 } = {}) {
    super(scene, player);
    this.shDegree = Math.min(maxShDegree, scene.info.shDegree);
    this.splats = new PackedSplats({ maxSplats: this.capacity });
    this.resize(this.capacity);
    this.mesh = new SplatMesh({
      packedSplats: this.splats,
      onFrame: ({ time }) => this.update(time),
    });
  }

  resize(capacity) {
    this.splats.ensureSplats(capacity);
    for (let b = 1; b <= this.shDegree; ++b) {
      const texture = this.splats.extra[`sh${b}Texture`];
      texture?.value.dispose();
      delete this.splats.extra[`sh${b}Texture`];   // remade from the larger array
      this.splats.ensureSplatsSh(b, capacity);
    }
    this.mesh?.updateGenerator();
  }

  write(frame) {
    const s = this.splats, packed = s.packedArray, n = frame.count;
    const { center: p, scale: sc, rotation: q, color: c } = frame;
    for (let i = 0; i < n; ++i) {
      const i3 = 3 * i, i4 = 4 * i;
      utils.setPackedSplat(packed, i, p[i3], p[i3 + 1], p[i3 + 2], sc[i3], sc[i3 + 1], sc[i3 + 2],
        q[i4], q[i4 + 1], q[i4 + 2], q[i4 + 3], c[i4 + 3], c[i4], c[i4 + 1], c[i4 + 2],
        s.splatEncoding);
    }
    const bands = Math.min(this.shDegree, frame.shDegree);
    for (let b = 1; b <= bands; ++b) this.writeShBand(frame, b);
    s.numSplats = n;
    s.needsUpdate = true;
    this.mesh.numSplats = n;
    this.mesh.updateVersion();
  }

  // Band b of every row into Spark's packed SH array (coefficient-major, r g b interleaved).
  writeShBand(frame, b) {
    const array = this.splats.extra[`sh${b}`], words = SH_WORDS[b], coeffs = 2 * b + 1;
    const rgb = new Float32Array(3 * coeffs);
    array.fill(0, 0, frame.count * words);   // the encoders OR their bits in
    for (let i = 0; i < frame.count; ++i) {
      for (let k = 0; k < coeffs; ++k)
        for (let ch = 0; ch < 3; ++ch) rgb[3 * k + ch] = shCoefficient(frame, i, ch, BAND_FIRST[b] + k);
      SH_ENCODERS[b](array, i, rgb, this.splats.splatEncoding);
    }
    const texture = this.splats.extra[`sh${b}Texture`];
    if (texture) texture.value.needsUpdate = true;
  }

  /** Rows [0, count) as Spark holds them, decoded by Spark's own unpackSplat: { count, center,
   * scale, rotation (x, y, z, w), color (r, g, b, opacity) } (what the tests compare with the
   * package's frame). */
  engineRows() {
    const n = this.count;
    const out = { count: n, center: new Float32Array(3 * n), scale: new Float32Array(3 * n),
      rotation: new Float32Array(4 * n), color: new Float32Array(4 * n) };
    for (let i = 0; i < n; ++i) {
      const u = utils.unpackSplat(this.splats.packedArray, i, this.splats.splatEncoding);
      out.center.set([u.center.x, u.center.y, u.center.z], 3 * i);
      out.scale.set([u.scales.x, u.scales.y, u.scales.z], 3 * i);
      out.rotation.set([u.quaternion.x, u.quaternion.y, u.quaternion.z, u.quaternion.w], 4 * i);
      out.color.set([u.color.r, u.color.g, u.color.b, u.opacity], 4 * i);
    }
    return out;
  }

  /** Removes the mesh from its parent, frees Spark's data and closes the scene. */
  destroy() {
    this.mesh.removeFromParent();
    this.mesh.dispose?.();
    this.close();
  }
}
