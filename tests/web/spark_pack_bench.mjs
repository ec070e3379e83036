// Spark's packing module on its own (not in ctest; docs/engines.md, "Per-frame cost"): thread CPU
// time per 100,000 random rows in node for a new state, an instant within one (a row gone every
// 300, one born every 250: the rows shift), and a state sharing half its rows, and the words
// against Spark's own setPackedSplat after each kind of write (every row, and a tenth listed).
//
//   node tests/web/spark_pack_bench.mjs BUILD/wasm-single_thread/wasm/fourdgs-spark-pack.wasm \
//       BUILD/web-engines      (where engines.test.mjs installed Spark)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const [wasmPath, npmDir] = process.argv.slice(2);
const { utils, defines } = await import(pathToFileURL(resolve(npmDir, 'node_modules/@sparkjsdev/spark/dist/spark.module.js')).href);
const { SparkPackModule, codeTable, loadSparkPack } = await import('../../js/src/spark-pack.js');
const wasm = await loadSparkPack(readFileSync(wasmPath));
const enc = { ...defines.DEFAULT_SPLAT_ENCODING };
const word = new Uint32Array(4);
const rgba = (r, a) => { utils.setPackedSplatRgba(word, 0, r, 0, 0, a, enc); return word[0]; };
const tables = {
  scale: codeTable((v) => { utils.setPackedSplatScales(word, 0, v, 0, 0, enc); return word[3] & 255; }, 'scale'),
  colour: codeTable((v) => rgba(v, 0) & 255, 'colour'),
  opacity: codeTable((v) => rgba(0, v) >>> 24, 'opacity'),
};
const m = new SparkPackModule(wasm, tables);
const N = 100000;
let seed = 7; const rnd = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
function frameOf(n) {
  const f = { count: n, center: new Float32Array(3 * n), scale: new Float32Array(3 * n),
    rotation: new Float32Array(4 * n), color: new Float32Array(4 * n) };
  for (let i = 0; i < 3 * n; ++i) { f.center[i] = rnd() * 20 - 10; f.scale[i] = Math.exp(-6 + 5 * rnd()); }
  for (let i = 0; i < n; ++i) {
    let q = [rnd() - .5, rnd() - .5, rnd() - .5, rnd() - .5]; const l = Math.hypot(...q);
    f.rotation.set(q.map((v) => v / l), 4 * i);
    f.color.set([rnd(), rnd(), rnd(), rnd()], 4 * i);
  }
  return f;
}
// the next instant: centres and opacities move, every 300th row dies, a row born every 250
function nextOf(f) {
  const keep = []; for (let i = 0; i < f.count; ++i) if (i % 300 !== 7) keep.push(i);
  const born = frameOf(Math.ceil(keep.length / 250));
  const n = keep.length + born.count, g = { count: n, center: new Float32Array(3 * n), scale: new Float32Array(3 * n),
    rotation: new Float32Array(4 * n), color: new Float32Array(4 * n) };
  let r = 0, b = 0;
  for (let k = 0; k < keep.length; ++k) {
    if (k % 250 === 3) { const s = b++; g.center.set(born.center.subarray(3*s, 3*s+3), 3*r); g.scale.set(born.scale.subarray(3*s, 3*s+3), 3*r); g.rotation.set(born.rotation.subarray(4*s, 4*s+4), 4*r); g.color.set(born.color.subarray(4*s, 4*s+4), 4*r); ++r; }
    const i = keep[k];
    g.center.set(f.center.subarray(3*i, 3*i+3).map((v) => v + 0.01), 3*r); g.scale.set(f.scale.subarray(3*i, 3*i+3), 3*r);
    g.rotation.set(f.rotation.subarray(4*i, 4*i+4), 4*r); g.color.set(f.color.subarray(4*i, 4*i+4), 4*r); g.color[4*r+3] *= 0.99; ++r;
  }
  g.count = r; for (const k of ['center','scale','rotation','color']) g[k] = g[k].subarray(0, (k === 'center' || k === 'scale' ? 3 : 4) * r);
  return g;
}
m.hold(2 * N);
const halves = (bits, values, count) => { for (let k = 0; k < count; ++k) bits[k] = utils.toHalf(values[k]); };
const frames = [frameOf(N)]; for (let k = 1; k < 8; ++k) frames.push(nextOf(frames[k - 1]));
const fresh = frameOf(N);
const time = (fn) => { const t = process.cpuUsage(); fn(); const u = process.cpuUsage(t); return (u.user + u.system) / 1000; };
const res = { newState: [], withinState: [], halfShared: [], halvesJs: [] };
// half the rows of frames[0] (every other), then as many new ones: a state sharing chunks
const half = (() => { const f = frames[0], g = frameOf(N), n = N; for (let i = 0; i < n; i += 2) { g.scale.set(f.scale.subarray(3*i, 3*i+3), 3*i); g.rotation.set(f.rotation.subarray(4*i, 4*i+4), 4*i); g.color.set(f.color.subarray(4*i, 4*i+3), 4*i); } return g; })();
for (let rep = 0; rep < 5; ++rep) {
  res.newState.push(time(() => m.pack(rep % 2 ? fresh : frames[0], null, halves)));
  m.pack(frames[0], null, halves);
  for (let k = 1; k < 8; ++k) res.withinState.push(time(() => m.pack(frames[k], null, halves)));
  m.pack(frames[0], null, halves); res.halfShared.push(time(() => m.pack(half, null, halves)));
  res.halvesJs.push(time(() => halves(m.views.halves, frames[1].center, 3 * frames[1].count)));
}
const med = (x) => [...x].sort((a, b) => a - b)[x.length >> 1].toFixed(2);
console.log(`per ${N} rows (thread CPU ms, median): new state ${med(res.newState)}, within a state ${med(res.withinState)}, half the rows shared ${med(res.halfShared)}, of which JS halves ${med(res.halvesJs)}`);
function check(f, what) {
  let diff = 0; const own = new Uint32Array(4), out = m.words();
  for (let i = 0; i < f.count; ++i) {
    const p = f.center, s = f.scale, q = f.rotation, c = f.color;
    utils.setPackedSplat(own, 0, p[3*i], p[3*i+1], p[3*i+2], s[3*i], s[3*i+1], s[3*i+2], q[4*i], q[4*i+1], q[4*i+2], q[4*i+3], c[4*i+3], c[4*i], c[4*i+1], c[4*i+2], enc);
    for (let k = 0; k < 4; ++k) if (own[k] !== out[4*i+k]) ++diff;
  }
  console.log(`${what}: codes made for ${m.made} of ${f.count} rows, ${diff} words differ from setPackedSplat`);
  assert.equal(diff, 0);
}
m.pack(frames[6], null, halves); m.pack(frames[7], null, halves); check(frames[7], 'within a state');
m.pack(frames[0], null, halves); m.pack(half, null, halves); check(half, 'half the rows shared');
// rows mode: a tenth of the rows get a new rotation, scale, colour and centre
const moved = { count: half.count }; for (const k of ['center','scale','rotation','color']) moved[k] = half[k].slice();
const listed = []; for (let i = 3; i < half.count; i += 10) { listed.push(i); moved.center[3*i] += 1; moved.scale[3*i] *= 2; moved.rotation[4*i] = -moved.rotation[4*i]; moved.color[4*i+1] = 0.25; moved.color[4*i+3] = 0.5; }
m.pack(moved, new Uint32Array(listed), halves); check(moved, 'rows mode, a tenth listed');
