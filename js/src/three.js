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
// fraction of their cost: the 16-byte words by a small WebAssembly module of the adapter's own
// (spark-pack.js; the core module does not grow), whose per-row steps that cost most in Spark's
// encoder are tables (the log scale, colour and opacity bytes, the rotation's angle) or one bulk
// conversion (the centres' half floats), written where Spark reads them (the PackedSplats' array
// is a view on the module's memory); the SH bands from tables of Spark's SH encoders. Only the
// rows the Player's frame lists as changed are packed, and a row's rotation, scale and colour are
// encoded again only when their bits are new (the module finds a row's bits in the previous frame
// even where the rows shifted): within a state, a row costs its centre's halves and one lookup.
//
// SH range. Spark stores band b's coefficients in [-sh<b>Max, sh<b>Max] (its splatEncoding; 1
// by default) and clips beyond; a .4dgs coefficient can be anywhere in [-4, 4] (§6.5), and no
// file declares a narrower range. The mesh's encoding (its own object) starts at Spark's ±1,
// the finest step, and a band widens to the largest coefficient a frame shows (rounded up to a
// quarter, at most 4) when one exceeds it: that frame's band is then packed again, every row,
// and Spark's shaders read the new range from the encoding. It never narrows, so rows written
// before stay right.
//
// The frame loop is Spark's: the mesh's onFrame callback runs in SparkRenderer's frame update,
// before Spark gathers the meshes' splats for the frame, so the rows written there are the ones
// drawn in that frame. The clock is the page's (performance.now(), what three's Timer reads):
// the time Spark hands onFrame stays 0 unless the app gives SparkRenderer a timer it updates
// itself (Spark 2.2 updates only a timer it was given: `ownsTimer = !!options.timer`).
import { PackedSplats, SplatMesh, defines, utils } from '@sparkjsdev/spark';
import { EngineScene } from './adapter.js';
import { SparkPackModule, codeTable, loadSparkPack } from './spark-pack.js';

export { loadSparkPack };

// SH band b: its coefficients per colour component start at BAND_FIRST[b] and number 2b + 1;
// Spark packs each of its 3(2b + 1) values (coefficient-major, r g b interleaved) in SH_BITS[b]
// bits, into SH_WORDS[b] 32-bit words a splat, with its encoder SH_ENCODERS[b].
const BAND_FIRST = [0, 0, 3, 8];
const SH_BITS = [0, 7, 8, 6];
const SH_WORDS = [0, 2, 4, 4];
const SH_ENCODERS = [null, utils.encodeSh1Rgb, utils.encodeSh2Rgb, utils.encodeSh3Rgb];

/** Spark's splat words for a frame's rows, under one splatEncoding (undefined: Spark's
 * default): the 16-byte words through the packing module (spark-pack.js) with tables made from
 * Spark's own encoders, the SH bands here with tables of Spark's SH encoders. */
export class SparkPacker {
  /** `wasm`: loadSparkPack()'s module; `shCoefficients`: the library's SH byte map (a scene's
   * shCoefficients). */
  constructor(encoding, wasm, shCoefficients) {
    this.encoding = encoding;
    this.shValues = shCoefficients;
    const word = new Uint32Array(4);
    const rgba = (r, a) => { utils.setPackedSplatRgba(word, 0, r, 0, 0, a, encoding); return word[0]; };
    this.module = new SparkPackModule(wasm, {
      scale: codeTable((v) => {
        utils.setPackedSplatScales(word, 0, v, 0, 0, encoding);
        return word[3] & 255;
      }, 'scale'),
      colour: codeTable((v) => rgba(v, 0) & 255, 'colour'),
      opacity: codeTable((v) => rgba(0, v) >>> 24, 'opacity'),
    });
    this.shCodes = [null, 1, 2, 3].map((b) => b && shCodeTable(b, encoding, shCoefficients));
  }

  /** Spark's words for `capacity` rows (PackedSplats.packedArray, as large as Spark's texture
   * for that many): a view on the packing module's memory, which pack() writes. A new view
   * only when it grew. */
  words(capacity) {
    this.module.hold(utils.getTextureSize(capacity).maxSplats);
    return this.module.words();
  }

  /** Rows of `frame` into words(): all of [0, frame.count) when `rows` is null, else the rows
   * it lists (the Player's `changed`: every other row already holds the frame's words). */
  pack(frame, rows = null) {
    this.module.pack(frame, rows, centreHalves);
  }

  /** SH band b of `frame`'s rows (all, or those `rows` lists) into Spark's packed array for
   * that band; when a coefficient exceeds the band's range, the range widens (see the header)
   * and every row is packed again under it. */
  packShBand(frame, b, words, rows = null) {
    if (this.packShRows(frame, b, words, rows)) this.packShRows(frame, b, words, null);
  }

  // The rows' SH band b under the band's range; true when a coefficient exceeded it (the range
  // is then wider and the rows must be packed again).
  packShRows(frame, b, words, rows) {
    const n = frame.count, per = frame.shPerGaussian, perComponent = per / 3, sh = frame.sh;
    const codes = this.shCodes[b], bits = SH_BITS[b], w = SH_WORDS[b], coeffs = 2 * b + 1;
    let lo = 255, hi = 0;
    const packRow = (i) => {
      const row = i * per + BAND_FIRST[b], base = i * w;
      words.fill(0, base, base + w);
      for (let k = 0; k < coeffs; ++k) {
        for (let ch = 0; ch < 3; ++ch) {
          const byte = sh[row + ch * perComponent + k], v = codes[byte], at = (3 * k + ch) * bits;
          const word = base + (at >>> 5), offset = at & 31;
          words[word] |= v << offset;
          if (offset + bits > 32) words[word + 1] |= v >>> (32 - offset);
          lo = byte < lo ? byte : lo;
          hi = byte > hi ? byte : hi;
        }
      }
    };
    if (rows === null) for (let i = 0; i < n; ++i) packRow(i);
    else for (let k = 0; k < rows.length; ++k) packRow(rows[k]);
    return this.widenSh(b, lo, hi);
  }

  // Band b's range made wide enough for the bytes lo..hi (their coefficients, the library's), its
  // codes made again; true when it changed.
  widenSh(b, lo, hi) {
    const key = `sh${b}Max`, need = Math.max(-this.shValues[lo], this.shValues[hi]);
    if (need <= (this.encoding[key] ?? 1)) return false;
    this.encoding[key] = Math.min(4, Math.ceil(need * 4) / 4);
    this.shCodes[b] = shCodeTable(b, this.encoding, this.shValues);
    return true;
  }
}

// The centres' half-float bits into `bits` (a Uint16Array) where the browser has no
// Float16Array: Spark's own toHalf per value (where it has one, the module converts with one
// Float16Array.set, which is Spark's toHalf there).
function centreHalves(bits, values, count) {
  for (let k = 0; k < count; ++k) bits[k] = utils.toHalf(values[k]);
}

// Band b's code of each SH byte (its coefficient `shValues[byte]`, the library's §6.5 map), from
// Spark's encoder of the band.
function shCodeTable(b, encoding, shValues) {
  const codes = new Uint32Array(256), words = new Uint32Array(SH_WORDS[b]);
  const values = new Float32Array(3 * (2 * b + 1));
  for (let byteValue = 0; byteValue < 256; ++byteValue) {
    values[0] = shValues[byteValue];
    words.fill(0);
    SH_ENCODERS[b](words, 0, values, encoding);
    codes[byteValue] = words[0] & (2 ** SH_BITS[b] - 1);
  }
  return codes;
}

export class FourdgsSplatMesh extends EngineScene {
  /** Opens `input` (a URL, or any source the package's open() reads) and makes its SplatMesh
   * (`.mesh`, to add to a three.js scene). Options: open()'s and the Player's (playing, rate,
   * loop, start, maxShDegree (3): the SH bands shown, ...), and `sparkPackWasm` (the packing
   * module's bytes or URL, default: dist/fourdgs-spark-pack.wasm beside the package's core). */
  static async load(input, options = {}) {
    const [{ scene, player }, wasm] = await Promise.all([EngineScene.openPlayer(input, options),
      loadSparkPack(options.sparkPackWasm)]);
    return new FourdgsSplatMesh(scene, player, wasm, options);
  }

  constructor(scene, player, wasm, { maxShDegree = 3 } = {}) {
    super(scene, player);
    this.shDegree = Math.min(maxShDegree, scene.info.shDegree);
    // The mesh's own encoding (the SH ranges widen per scene: see the header).
    this.packer = new SparkPacker({ ...defines.DEFAULT_SPLAT_ENCODING }, wasm,
      scene.shCoefficients);
    this.splats = new PackedSplats({ packedArray: this.packer.words(this.capacity), numSplats: 0,
      splatEncoding: this.packer.encoding });
    this.resize(this.capacity);
    this.mesh = new SplatMesh({
      packedSplats: this.splats,
      splatEncoding: this.packer.encoding,   // (SplatMesh sets the PackedSplats' encoding)
      onFrame: () => this.update(performance.now() / 1000),
    });
  }

  resize(capacity) {
    const words = this.packer.words(capacity), s = this.splats;
    if (words !== s.packedArray) {   // grown: Spark makes its texture again at the new size
      s.packedArray = words;
      s.maxSplats = words.length / 4;
    }
    for (let b = 1; b <= this.shDegree; ++b) {
      const texture = this.splats.extra[`sh${b}Texture`];
      texture?.value.dispose();
      delete this.splats.extra[`sh${b}Texture`];   // remade from the larger array
      this.splats.ensureSplatsSh(b, capacity);
    }
    this.mesh?.updateGenerator();
  }

  write(frame, rows) {
    const s = this.splats;
    this.packer.pack(frame, rows);
    for (let b = 1; b <= Math.min(this.shDegree, frame.shDegree); ++b)
      this.packer.packShBand(frame, b, s.extra[`sh${b}`], rows);
  }

  // Spark uploads what changed in its next frame: the counts and versions say what.
  submit(frame) {
    const s = this.splats, n = frame.count;
    for (let b = 1; b <= Math.min(this.shDegree, frame.shDegree); ++b) {
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
   * coefficient-major r g b as Spark's shaders read them), shMax (bands 1..3: the ranges
   * they are read in) } (what the tests compare with the package's frame). */
  engineRows() {
    const n = this.count;
    const shPerRow = 3 * ((this.shDegree + 1) ** 2 - 1);
    const out = { count: n, center: new Float32Array(3 * n), scale: new Float32Array(3 * n),
      rotation: new Float32Array(4 * n), color: new Float32Array(4 * n), shDegree: this.shDegree,
      sh: new Float32Array(shPerRow * n),
      shMax: [1, 2, 3].map((b) => this.splats.splatEncoding?.[`sh${b}Max`] ?? 1) };
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
