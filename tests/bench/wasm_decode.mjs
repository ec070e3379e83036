// The WebAssembly build against the native one on the same file, in one run (issue 27, docs/web.md):
// the package's full decode (readAll) and a seek (stateAt(t)) in node, single thread, best of
// REPEATS warm calls and the first call, then the native `bench_decode FILE REPEATS 1 t` in the
// same run for its warm one-thread full decode and seek. Not a test: it prints a table.
//
//   node --no-experimental-fetch tests/bench/wasm_decode.mjs PACKAGE_DIR FILE BENCH_DECODE [repeats=5] [t=5]
//
// PACKAGE_DIR is an unpacked package (a wasm build tree's js/, or an installed node_modules/fourdgs).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [packageDir, file, benchDecode, repeatsArg = '5', tArg = '5'] = process.argv.slice(2);
if (!packageDir || !file || !benchDecode) {
  console.error('usage: wasm_decode.mjs PACKAGE_DIR FILE BENCH_DECODE [repeats] [t]');
  process.exit(2);
}
const repeats = Number(repeatsArg), t = Number(tArg);
const { open } = await import(pathToFileURL(resolve(join(packageDir, 'src', 'fourdgs.js'))).href);

const now = () => Number(process.hrtime.bigint()) / 1e6;  // ms
async function timed(fn) {
  const t0 = now();
  await fn();
  return now() - t0;
}
async function best(fn) {
  let b = Infinity;
  for (let i = 0; i < repeats; ++i) b = Math.min(b, await timed(fn));
  return b;
}

const loadBefore = loadavg()[0];
const bytes = new Uint8Array(readFileSync(file));
const scene = await open(bytes, { decodeThreads: 1 });
const firstAll = await timed(() => scene.readAll());
const warmAll = await best(() => scene.readAll());
const firstSeek = await timed(() => scene.stateAt(t));
const warmSeek = await best(() => scene.stateAt(t));
scene.close();

// The native figures of the same run: bench_decode's "indexed, 1 thread, warm" and
// "seek, 1 thread, warm" rows (wall ms).
const native = execFileSync(benchDecode, [file, String(repeats), '1', String(t)], { encoding: 'utf8' });
const nativeRow = (label) => {
  const line = native.split('\n').find((l) => l.trim().startsWith(label));
  if (!line) throw new Error(`bench_decode printed no "${label}" row:\n${native}`);
  return Number(line.trim().slice(label.length).trim().split(/\s+/)[0]);
};
const nativeAll = nativeRow('indexed, 1 thread, warm');
const nativeSeek = nativeRow('seek, 1 thread, warm');

const row = (what, ms, against) => console.log(`| ${what} | ${ms.toFixed(1)} ms | ${against} |`);
console.log(`${file}: ${bytes.length} bytes; node ${process.version}; best of ${repeats}; ` +
  `load average ${loadBefore.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after\n`);
console.log('| | wall | ratio |');
console.log('|---|---|---|');
row('native full decode, 1 thread, warm', nativeAll, '');
row('wasm full decode (readAll), warm', warmAll, `**${(warmAll / nativeAll).toFixed(2)}×** native`);
row('wasm full decode, first call', firstAll, `${(firstAll / warmAll).toFixed(2)}× warm`);
row(`native seek t = ${t}, 1 thread, warm`, nativeSeek, '');
row(`wasm seek (stateAt(${t})), warm`, warmSeek, `**${(warmSeek / nativeSeek).toFixed(2)}×** native`);
row('wasm seek, first call', firstSeek, `${(firstSeek / warmSeek).toFixed(2)}× warm`);
