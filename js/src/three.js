// fourdgs/three: a .4dgs scene as a Spark (2.x) SplatMesh for three.js, whose splats follow the
// scene's time. docs/engines.md is the guide.
//
// The engine object is one PackedSplats (Spark's own encoding: 16 bytes a splat, centre in half
// floats, colour and opacity in 8 bits, log scale in 8 bits, rotation octahedral 8+8+8; SH bands
// 1–3 in Spark's packed SH arrays) inside one SplatMesh, which Spark sorts and draws. It is
// created once for the largest instant (adapter.js) and grown only if a frame outgrows it.
//
// Each frame's rows are packed straight into Spark's words by SparkPacker below: the same words
// Spark's setPackedSplat / encodeSh*Rgb write (the tests compare them word for word), at a
// fraction of their cost, because the per-row steps that cost most there are tables here (the
// log scale, the SH bytes) or one bulk conversion (the centres' half floats).
//
// The frame loop is Spark's: the mesh's onFrame callback runs in SparkRenderer's frame update,
// before Spark gathers the meshes' splats for the frame, so the rows written there are the ones
// drawn in that frame. The clock is the page's (performance.now(), what three's Timer reads):
// the time Spark hands onFrame stays 0 unless the app gives SparkRenderer a timer it updates
// itself (Spark 2.2 updates only a timer it was given: `ownsTimer = !!options.timer`).
import { PackedSplats, SplatMesh, utils } from '@sparkjsdev/spark';
import { EngineScene } from './adapter.js';

// SH band b: its coefficients per colour component start at BAND_FIRST[b] and number 2b + 1;
// Spark packs each of its 3(2b + 1) values (coefficient-major, r g b interleaved) in SH_BITS[b]
// bits, into SH_WORDS[b] 32-bit words a splat, with its encoder SH_ENCODERS[b].
const BAND_FIRST = [0, 0, 3, 8];
const SH_BITS = [0, 7, 8, 6];
const SH_WORDS = [0, 2, 4, 4];
const SH_ENCODERS = [null, utils.encodeSh1Rgb, utils.encodeSh2Rgb, utils.encodeSh3Rgb];

/** Spark's splat words for a frame's rows, under one splatEncoding (undefined: Spark's
 * default). Every value goes through Spark's own formula; the two that are functions of one
 * number (a scale's 8-bit code, an SH byte's code) are tabulated once from Spark's own encoder. */
export class SparkPacker {
  constructor(encoding) {
    this.encoding = encoding;
    this.rgbMin = encoding?.rgbMin ?? 0;
    this.rgbRange = (encoding?.rgbMax ?? 1) - this.rgbMin;
    this.opacityScale = encoding?.lodOpacity ? 0.5 : 1;
    this.scaleTable = scaleCodeTable(encoding);
    this.shCodes = [null, 1, 2, 3].map((b) => b && shCodeTable(b, encoding));
    this.halves = null;   // the centres as half floats (scratch, grown as needed)
    // The octahedral code is a function of the rotation's four floats alone, and a gaussian's
    // rotation stays the same while its state is resident (only its centre and opacity move, bar
    // object tracks), so each frame row's code is kept under its source index with the bits it
    // was made from, and made again only when those bits differ.
    this.rotationBits = new Uint32Array(0);
    this.rotationCode = new Uint32Array(0);
  }

  /** Rows [0, frame.count) into `packed` (PackedSplats.packedArray). */
  pack(frame, packed) {
    const n = frame.count, { center: p, scale: sc, rotation: q, color: c } = frame;
    const half = this.centreHalves(p, 3 * n);
    const scaleBits = new Uint32Array(sc.buffer, sc.byteOffset, 3 * n);
    const { codes, thresholds, shift } = this.scaleTable;
    const rgbMin = this.rgbMin, rgbRange = this.rgbRange, opacityScale = this.opacityScale;
    const scaleCode = (bits) => codes[bits >>> shift] + (bits >= thresholds[bits >>> shift] ? 1 : 0);
    const rotation = new Uint32Array(q.buffer, q.byteOffset, 4 * n), source = frame.source;
    let sources = 0;
    for (let i = 0; i < n; ++i) if (source[i] >= sources) sources = source[i] + 1;
    this.holdRotations(sources);
    const keptBits = this.rotationBits, keptCode = this.rotationCode;
    for (let i = 0; i < n; ++i) {
      const i3 = 3 * i, i4 = 4 * i, k4 = 4 * source[i];
      const r = byte((c[i4] - rgbMin) / rgbRange), g = byte((c[i4 + 1] - rgbMin) / rgbRange),
        b = byte((c[i4 + 2] - rgbMin) / rgbRange), a = byte(opacityScale * c[i4 + 3]);
      if (keptBits[k4] !== rotation[i4] || keptBits[k4 + 1] !== rotation[i4 + 1] ||
          keptBits[k4 + 2] !== rotation[i4 + 2] || keptBits[k4 + 3] !== rotation[i4 + 3]) {
        keptBits.set(rotation.subarray(i4, i4 + 4), k4);
        keptCode[k4 >> 2] = octahedralQuaternion(q[i4], q[i4 + 1], q[i4 + 2], q[i4 + 3]);
      }
      const oct = keptCode[k4 >> 2];
      packed[i4] = r | g << 8 | b << 16 | a << 24;
      packed[i4 + 1] = half[i3] | half[i3 + 1] << 16;
      packed[i4 + 2] = half[i3 + 2] | (oct & 255) << 16 | (oct >>> 8 & 255) << 24;
      packed[i4 + 3] = scaleCode(scaleBits[i3]) | scaleCode(scaleBits[i3 + 1]) << 8 |
        scaleCode(scaleBits[i3 + 2]) << 16 | (oct >>> 16 & 255) << 24;
    }
  }

  // Room for the rotation codes of source indices [0, count): new entries hold the code of the
  // all-zero bits they start with.
  holdRotations(count) {
    if (count <= this.rotationCode.length) return;
    const size = Math.max(count, Math.ceil(this.rotationCode.length * 1.5));
    const bits = new Uint32Array(4 * size), code = new Uint32Array(size);
    bits.set(this.rotationBits);
    code.set(this.rotationCode);
    code.fill(octahedralQuaternion(0, 0, 0, 0), this.rotationCode.length);
    this.rotationBits = bits;
    this.rotationCode = code;
  }

  /** SH band b of rows [0, frame.count) into Spark's packed array for that band. */
  packShBand(frame, b, words) {
    const n = frame.count, per = frame.shPerGaussian, perComponent = per / 3, sh = frame.sh;
    const codes = this.shCodes[b], bits = SH_BITS[b], w = SH_WORDS[b], coeffs = 2 * b + 1;
    words.fill(0, 0, n * w);
    for (let i = 0; i < n; ++i) {
      const row = i * per + BAND_FIRST[b], base = i * w;
      for (let k = 0; k < coeffs; ++k) {
        for (let ch = 0; ch < 3; ++ch) {
          const v = codes[sh[row + ch * perComponent + k]], at = (3 * k + ch) * bits;
          const word = base + (at >>> 5), offset = at & 31;
          words[word] |= v << offset;
          if (offset + bits > 32) words[word + 1] |= v >>> (32 - offset);
        }
      }
    }
  }

  // The centres' half-float bits: one bulk conversion where the browser has Float16Array (Spark's
  // toHalf is that same conversion there), else Spark's own toHalf per value.
  centreHalves(p, count) {
    if (typeof Float16Array === 'undefined') {
      const bits = new Uint16Array(count);
      for (let k = 0; k < count; ++k) bits[k] = utils.toHalf(p[k]);
      return bits;
    }
    if (!this.halves || this.halves.length < count) this.halves = new Float16Array(count);
    this.halves.set(p.subarray(0, count));
    return new Uint16Array(this.halves.buffer, 0, count);
  }
}

// Spark's floatToUint8 (round, then clamp to 0..255).
const byte = (v) => Math.max(0, Math.min(255, Math.round(v * 255)));

// Spark's encodeQuatOctXy88R8 step for step (its THREE.Quaternion normalize, divideScalar),
// without the objects: angle << 16 | v << 8 | u.
function octahedralQuaternion(x, y, z, w) {
  let l = Math.sqrt(x * x + y * y + z * z + w * w);
  if (l === 0) { x = 0; y = 0; z = 0; w = 1; } else { l = 1 / l; x *= l; y *= l; z *= l; w *= l; }
  if (w < 0) { x = -x; y = -y; z = -z; w = -w; }
  const theta = 2 * Math.acos(w);
  const norm = Math.sqrt(x * x + y * y + z * z);
  let ax = 1, ay = 0, az = 0;
  if (norm >= 1e-6) { const r = 1 / norm; ax = x * r; ay = y * r; az = z * r; }
  const sum = Math.abs(ax) + Math.abs(ay) + Math.abs(az);
  let px = ax / sum, py = ay / sum;
  if (az < 0) {
    const t = px;
    px = (1 - Math.abs(py)) * (px >= 0 ? 1 : -1);
    py = (1 - Math.abs(t)) * (py >= 0 ? 1 : -1);
  }
  return Math.round(theta * (255 / Math.PI)) << 16 | Math.round((py * 0.5 + 0.5) * 255) << 8 |
    Math.round((px * 0.5 + 0.5) * 255);
}

// A scale's 8-bit code as a table over its f32 bits: bin (bits >>> shift) holds the code of its
// lowest value, and the first bits (if any) from which the code is one more. Spark's code is
// monotonic in the scale with steps a factor e^((lnMax - lnMin)/254) apart, so a bin narrower
// than one step holds at most one; the table is made finer until that holds. Each code comes
// from Spark's setPackedSplatScales. Negative scales and -0 code 0 (below Spark's SCALE_ZERO).
const INFINITY_BITS = 0x7f800000, SIGN_BIT = 0x80000000;
function scaleCodeTable(encoding) {
  const word = new Uint32Array(4), f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
  const code = (bits) => {
    u32[0] = bits;
    utils.setPackedSplatScales(word, 0, f32[0], 0, 0, encoding);
    return word[3] & 255;
  };
  for (let shift = 19; shift >= 13; shift -= 3) {
    const bins = 2 ** (32 - shift), codes = new Uint8Array(bins), thresholds = new Uint32Array(bins);
    let fine = true;
    for (let bin = 0; bin < bins && fine; ++bin) {
      const lo = bin * 2 ** shift, hi = lo + 2 ** shift - 1, first = code(lo), last = code(hi);
      codes[bin] = first;
      thresholds[bin] = 0xffffffff;
      if (first === last || (lo >= INFINITY_BITS && lo < SIGN_BIT)) continue;   // frames are finite
      if (last !== first + 1) { fine = false; break; }
      let below = lo, above = hi;   // code(below) = first, code(above) = first + 1
      while (above - below > 1) {
        const mid = below + Math.floor((above - below) / 2);
        if (code(mid) === first) below = mid; else above = mid;
      }
      thresholds[bin] = above;
    }
    if (fine) return { codes, thresholds, shift };
  }
  throw new Error('fourdgs/three: this splatEncoding\'s scale steps are finer than 2^-10 of an octave');
}

// Band b's code of each SH byte (coefficient -4 + byte·8/255), from Spark's encoder of the band.
function shCodeTable(b, encoding) {
  const codes = new Uint32Array(256), words = new Uint32Array(SH_WORDS[b]);
  const values = new Float32Array(3 * (2 * b + 1));
  for (let byteValue = 0; byteValue < 256; ++byteValue) {
    values[0] = -4 + byteValue * (8 / 255);
    words.fill(0);
    SH_ENCODERS[b](words, 0, values, encoding);
    codes[byteValue] = words[0] & (2 ** SH_BITS[b] - 1);
  }
  return codes;
}

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
    this.packer = new SparkPacker(this.splats.splatEncoding);
    this.resize(this.capacity);
    this.mesh = new SplatMesh({
      packedSplats: this.splats,
      onFrame: () => this.update(performance.now() / 1000),
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
    const s = this.splats, n = frame.count;
    this.packer.pack(frame, s.packedArray);
    const bands = Math.min(this.shDegree, frame.shDegree);
    for (let b = 1; b <= bands; ++b) {
      this.packer.packShBand(frame, b, s.extra[`sh${b}`]);
      const texture = s.extra[`sh${b}Texture`];
      if (texture) texture.value.needsUpdate = true;
    }
    s.numSplats = n;
    s.needsUpdate = true;
    this.mesh.numSplats = n;
    this.mesh.updateVersion();
  }

  /** Rows [0, count) as Spark holds them, decoded by Spark's own unpackSplat: { count, center,
   * scale, rotation (x, y, z, w), color (r, g, b, opacity), shDegree, sh (per row, band by band,
   * coefficient-major r g b as Spark's shaders read them) } (what the tests compare with the
   * package's frame). */
  engineRows() {
    const n = this.count;
    const shPerRow = 3 * ((this.shDegree + 1) ** 2 - 1);
    const out = { count: n, center: new Float32Array(3 * n), scale: new Float32Array(3 * n),
      rotation: new Float32Array(4 * n), color: new Float32Array(4 * n), shDegree: this.shDegree,
      sh: new Float32Array(shPerRow * n) };
    for (let i = 0; i < n; ++i) {
      const u = utils.unpackSplat(this.splats.packedArray, i, this.splats.splatEncoding);
      out.center.set([u.center.x, u.center.y, u.center.z], 3 * i);
      out.scale.set([u.scales.x, u.scales.y, u.scales.z], 3 * i);
      out.rotation.set([u.quaternion.x, u.quaternion.y, u.quaternion.z, u.quaternion.w], 4 * i);
      out.color.set([u.color.r, u.color.g, u.color.b, u.opacity], 4 * i);
    }
    for (let b = 1, first = 0; b <= this.shDegree; first += 3 * (2 * b + 1), ++b) {
      const array = this.splats.extra[`sh${b}`], bits = SH_BITS[b], w = SH_WORDS[b];
      const step = (this.splats.splatEncoding?.[`sh${b}Max`] ?? 1) / (2 ** (bits - 1) - 1);
      for (let i = 0; i < n; ++i) {
        for (let j = 0; j < 3 * (2 * b + 1); ++j) {
          // Spark's shaders' read (evaluatePackedSH*): a signed field of `bits` at bit j·bits.
          const at = j * bits, word = i * w + (at >>> 5), offset = at & 31;
          const field = array[word] >>> offset | (offset + bits > 32 ? array[word + 1] << (32 - offset) : 0);
          out.sh[i * shPerRow + first + j] = (field << (32 - bits) >> (32 - bits)) * step;
        }
      }
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
