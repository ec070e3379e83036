// fourdgs/three's packing helper: Spark's splat words for a frame's rows computed by a small
// WebAssembly module of its own (dist/fourdgs-spark-pack.wasm, from wasm/spark_pack.c), which
// only the three.js adapter loads (the core module does not grow). Per row it does what
// Spark's setPackedSplat does, bit for bit, at a fraction of JavaScript's cost for the
// rotation's octahedral code (square roots and divisions in double precision, as
// JavaScript's); what Spark computes through a function of one number is a table built here
// once from Spark's own encoder, which the caller hands in (three.js).
//
// The module has its own memory: each frame's columns are copied in (50 bytes a row, one
// TypedArray.set a column into views made once) and the rows packed there, into the words Spark
// draws from: PackedSplats.packedArray is a view on that region (words()), so nothing is copied
// out. The regions are allocated for the largest instant up front (the memory then never grows
// while playing, and the views stay valid); a frame that outgrows them reallocates them and the
// adapter hands Spark the new view. The module keeps the previous frame's columns and every
// row's rotation, scale and colour codes, and makes them again only for rows whose bits it has
// not seen: within a state only a gaussian's centre and opacity move, but gaussians crossing the
// cut-off shift the rows, so it finds each row's bits in the previous frame by a merge of the
// two frames (spark_pack.c) rather than at the same row.

/** The module's bytes or URL: beside the package's core module. */
export const SPARK_PACK_WASM = new URL('../dist/fourdgs-spark-pack.wasm', import.meta.url);

/** Instantiates the module from `source` (its bytes, a Response, or a URL to fetch). */
export async function loadSparkPack(source = SPARK_PACK_WASM) {
  const imports = { env: { emscripten_notify_memory_growth: () => {} } };
  let bytes = source;
  if (source instanceof URL || typeof source === 'string') bytes = await fetch(source);
  if (typeof Response !== 'undefined' && bytes instanceof Response) {
    if (!bytes.ok) throw new Error(`fourdgs/three: ${bytes.url}: HTTP ${bytes.status}`);
    bytes = await bytes.arrayBuffer();
  }
  const { instance } = await WebAssembly.instantiate(bytes, imports);
  instance.exports._initialize();
  return instance.exports;
}

// An 8-bit code that is a monotonic function of one f32 (a scale's, a colour channel's, an
// opacity's) as a table over the f32's bits, one 32-bit entry a bin (bits >>> shift): the code of
// the bin's lowest bits (bits 0-7), the step within the bin plus one (bits 8-9: 0 down, 1 none,
// 2 up)
// and from which offset in the bin it applies (bits 10-29: the step's first bits less the bin's
// first). Spark's codes step evenly (colour: 1/255 of the range; scale: a factor
// e^((lnMax - lnMin)/254)), so a bin narrower than one step holds at most one step; the table
// is made finer until that holds. Frames are finite, so the bins of infinities and NaNs are not
// split. Each code comes from Spark's own encoder, `code(f32)`.
const INFINITY_BITS = 0x7f800000, SIGN_BIT = 0x80000000, NEGATIVE_INFINITY_BITS = 0xff800000;
export function codeTable(code, what) {
  const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
  const of = (bits) => { u32[0] = bits; return code(f32[0]); };
  for (let shift = 19; shift >= 13; shift -= 3) {
    const bins = 2 ** (32 - shift), entries = new Uint32Array(bins);
    let fine = true;
    for (let bin = 0; bin < bins && fine; ++bin) {
      const lo = bin * 2 ** shift, hi = lo + 2 ** shift - 1, first = of(lo), last = of(hi);
      entries[bin] = first | 1 << 8;
      if (first === last || (lo >= INFINITY_BITS && lo < SIGN_BIT) || lo >= NEGATIVE_INFINITY_BITS) continue;
      if (Math.abs(last - first) !== 1) { fine = false; break; }
      let below = lo, above = hi;   // of(below) = first, of(above) = last
      while (above - below > 1) {
        const mid = below + Math.floor((above - below) / 2);
        if (of(mid) === first) below = mid; else above = mid;
      }
      entries[bin] = (first | (last - first + 1) << 8 | (above - lo) << 10) >>> 0;
    }
    if (fine) return { entries, shift };
  }
  throw new Error(`fourdgs/three: this splatEncoding's ${what} steps are finer than 2^-10 of an octave`);
}

// Spark's angle code, Math.round(2 acos(w) 255/π), as a table over the normalized w in [0, 1]
// (acos is the costliest step of a row): bin floor(w·2^16) holds the code at its low end and the
// first w (if any) from which the code is one less, found by bisection on Spark's formula.
// Between two codes w moves by 1.9e-5 at least (near w = 1), more than a bin's 1.5e-5, so a bin
// holds one step at most (checked while building). A w an ulp over 1 lands in the last bin
// (code 0, as Spark's NaN from acos shifts to 0).
const ANGLE_BINS = 1 << 16;
function angleCodeTable() {
  const angle = (w) => Math.round(2 * Math.acos(w) * (255 / Math.PI));
  const low = new Uint8Array(ANGLE_BINS + 1), drop = new Float64Array(ANGLE_BINS + 1).fill(Infinity);
  const below = (v) => v - v * 2 ** -53;   // the largest double under v (v in (0, 1])
  for (let bin = 0; bin <= ANGLE_BINS; ++bin) {
    const lo = bin / ANGLE_BINS, hi = bin === ANGLE_BINS ? lo : below((bin + 1) / ANGLE_BINS);
    low[bin] = angle(lo);
    const last = angle(hi);
    if (last === low[bin]) continue;
    if (last !== low[bin] - 1) throw new Error('fourdgs/three: an angle bin holds two steps');
    let same = lo, next = hi;   // angle(same) = low[bin], angle(next) = low[bin] - 1
    for (let mid = (same + next) / 2; mid !== same && mid !== next; mid = (same + next) / 2) {
      if (angle(mid) === low[bin]) same = mid; else next = mid;
    }
    drop[bin] = next;
  }
  return { low, drop };
}

// The per-row regions in the module's memory: [name, element type, elements a row]. The frame's
// columns go into one of two sets (0 and 1, a frame each in turn), so that the previous frame's
// stay beside them: a row's codes (3 words: rgb, the rotation's u and v, the scales and the
// rotation's angle) are kept with the bits they were made from, also in two sets (the previous
// frame's, read by row, and this frame's). The column regions are typed as the frame's columns
// (one set() each, no conversion); the module reads their bits. `rows`: the rows to pack;
// `missing`, `gathered` and `oct`: the module's scratch for the rows whose codes it makes.
const ROW_REGIONS = [['halves', Uint16Array, 3], ['out', Uint32Array, 4], ['rows', Uint32Array, 1],
  ['missing', Uint32Array, 1], ['gathered', Float32Array, 4], ['oct', Uint32Array, 1]];
for (const side of [0, 1]) {
  ROW_REGIONS.push([`scale${side}`, Float32Array, 3], [`colour${side}`, Float32Array, 4],
    [`rotation${side}`, Float32Array, 4], [`codes${side}`, Uint32Array, 3]);
}

/** Spark's splat words through the module: `tables` ({ scale, colour, opacity }: codeTable's)
 * placed in its memory once; hold() for the rows, words() Spark's array, pack() per frame. */
export class SparkPackModule {
  constructor(exports, tables) {
    this.wasm = exports;
    const angle = angleCodeTable();
    this.angleLow = this.place(angle.low);
    this.angleDrop = this.place(angle.drop);
    this.tables = ['scale', 'colour', 'opacity'].map((name) => {
      const t = tables[name], fields = [this.place(t.entries), t.shift], at = this.alloc(8);
      new Uint32Array(this.wasm.memory.buffer, at, 2).set(fields);
      return at;
    });
    this.capacity = 0;
    this.at = {};      // each row region's address
    this.views = {};   // ...and a view on the whole of it
    this.side = 0;     // the set of columns the next frame goes into (the other holds the last's)
    this.codeSide = 0; // the set of codes the last frame's rows hold
    this.previous = 0; // the last frame's rows (0: none kept)
    this.made = 0;     // of the rows the last pack() packed, those whose codes it made anew
  }

  alloc(bytes) {
    const at = this.wasm.malloc(Math.max(bytes, 4));
    if (!at) throw new Error(`fourdgs/three: the packing module cannot hold ${bytes} more bytes`);
    return at;
  }

  place(array) {
    const at = this.alloc(array.byteLength);
    new Uint8Array(this.wasm.memory.buffer, at, array.byteLength)
      .set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
    return at;
  }

  /** Room for `count` rows (exactly, when it must grow). When it grew, the views, words()
   * included, are new and no previous frame is kept (the next pack() packs every row). */
  hold(count) {
    if (count <= this.capacity) return;
    for (const name of Object.keys(this.at)) this.wasm.free(this.at[name]);
    const capacity = count, at = {};
    for (const [name, Type, per] of ROW_REGIONS) at[name] = this.alloc(Type.BYTES_PER_ELEMENT * per * capacity);
    const memory = this.wasm.memory.buffer, views = {};
    for (const [name, Type, per] of ROW_REGIONS) views[name] = new Type(memory, at[name], per * capacity);
    views.out.fill(0);
    if (typeof Float16Array !== 'undefined')
      views.halfFloats = new Float16Array(memory, at.halves, 3 * capacity);
    this.at = at;
    this.views = views;
    this.capacity = capacity;
    this.previous = 0;
  }

  /** The rows' words (4 a row, hold()'s capacity): what pack() writes, for Spark to draw from. */
  words() { return this.views.out; }

  /** Rows of `frame` (all when `rows` is null, else those listed: then the frame has the last
   * frame's rows in the same order, and the others are as it left them) into words();
   * `halves(into, values, count)` converts the centres to half-float bits where the browser
   * has no Float16Array. */
  pack(frame, rows, halves) {
    const n = frame.count, v = this.views, at = this.at;
    if (n > this.capacity) throw new Error(`fourdgs/three: ${n} rows, room for ${this.capacity}`);
    // Most rows listed, or not the rows of the last frame: every row (the same words).
    if (rows && (rows.length > n >> 1 || n !== this.previous)) rows = null;
    if (v.halfFloats) v.halfFloats.set(frame.center);
    else halves(v.halves, frame.center, 3 * n);
    const now = this.side, before = 1 - now;
    v[`scale${now}`].set(frame.scale);
    v[`colour${now}`].set(frame.color);
    v[`rotation${now}`].set(frame.rotation);
    if (rows) v.rows.set(rows);
    // Every row: this frame's codes into the other set; some rows: updated where they are.
    const oldCodes = at[`codes${this.codeSide}`];
    const codeSide = rows ? this.codeSide : 1 - this.codeSide;
    const [scale, colour, opacity] = this.tables;
    this.made = this.wasm.spark_pack(n, rows ? at.rows : 0, rows ? rows.length : 0, at.halves,
      at[`scale${now}`], at[`colour${now}`], at[`rotation${now}`], this.previous,
      at[`scale${before}`], at[`colour${before}`], at[`rotation${before}`], oldCodes,
      at[`codes${codeSide}`], at.missing, at.gathered, at.oct, at.out, scale, colour, opacity,
      this.angleLow, this.angleDrop);
    this.side = before;
    this.codeSide = codeSide;
    this.previous = n;
  }
}
