// An engine page (examples/web/playcanvas or examples/web/three) in headless Debian Chromium,
// served by nginx on loopback (tests/http/harness.py runs this with FOURDGS_HTTP_BASE / _ROOT):
//   - the engines come from the npm registry (the versions js/package.json's peerDependencies
//     name), installed by this test into NPM_DIR (a build folder) when not there yet;
//   - the example scene at t = 2.5, in the preview's view with the page's own object hidden,
//     matches `4dgs preview` within the tolerance below; a flipped and a blank canvas fail it;
//   - the engine object's rows, decoded by the engine's own decoder, equal the package's
//     frameAt (evaluate) of the same instant row for row within the engine's encoding;
//   - a seek to 0.5 shows that instant (preview and rows again); 120 frames at 1× with no late
//     frame; a damaged file shows its refusal identifier; the console has no error;
//   - for Spark, the words the adapter packs equal the words Spark's own encoders write;
//   - a scene where a tenth of the rows move (made by `4dgs convert`): after writes of only the
//     rows the Player lists as changed, the engine's rows equal the frame's;
//   - with MAKE_BENCH_SCENE: a 2,000-gaussian scene with SH degree 3, its rows (Spark: SH too,
//     band 1 past Spark's default ±1, unclipped);
//   - with MAKE_BENCH_SCENE: a 200,000-gaussian multi-chunk scene opens, seeks and shows the
//     package's rows, the adapter's per-frame cost is printed beside the Player's, and
//     (harness.py --access-log) its first frame's and a seek's requests through the fault proxy
//     are those the web player's test asserts (network.mjs).
// Screenshots, previews and difference images go to FOURDGS_WEB_ARTIFACTS when set.
//
//   harness.py --access-log run -- node engines.test.mjs ENGINE PACKAGE_DIR CLI EXAMPLE_SCENE DAMAGED_SCENE
//       REFUSAL_ID NPM_DIR [MAKE_BENCH_SCENE]
//
// Exit 77 (ctest's SKIP) only where Chromium, emscripten or npm is not installed.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { CHROMIUM, launch, runThenExit } from './browser.mjs';
import { checkNetwork } from './network.mjs';
import { compareImages, decodePng, encodePng } from './png.mjs';

const [engine, packageDir, cli, example, damaged, expectedRefusal, npmDir, makeBenchScene] =
  process.argv.slice(2);
const skip = (why) => { console.log(`SKIP: ${why}`); process.exit(77); };
if (!existsSync(CHROMIUM)) skip(`${CHROMIUM} is not installed (Debian: apt-get install chromium)`);
if (spawnSync('sh', ['-c', 'command -v npm']).status !== 0) skip('npm is not installed');
const tarballs = existsSync(packageDir)
  ? readdirSync(packageDir).filter((f) => /^fourdgs-.*\.tgz$/.test(f)) : [];
if (tarballs.length === 0 && spawnSync('sh', ['-c', 'command -v emcc']).status !== 0)
  skip('emscripten is not installed, so there is no package (apt-get install emscripten)');
assert.equal(tarballs.length, 1, `one packed package in ${packageDir}`);
const here = dirname(fileURLToPath(import.meta.url));
const source = join(here, '..', '..');
const base = process.env.FOURDGS_HTTP_BASE, root = process.env.FOURDGS_HTTP_ROOT;
const proxy = process.env.FOURDGS_HTTP_PROXY, accessLog = process.env.FOURDGS_HTTP_ACCESS_LOG;
// Each request to the proxy is answered this late (as in player.test.mjs): a round trip counts.
const DELAY_MS = 400;
const artifacts = process.env.FOURDGS_WEB_ARTIFACTS;
if (artifacts) mkdirSync(artifacts, { recursive: true });
const WIDTH = 640, HEIGHT = 480;

// The picture. The engines splat with their own shaders (Spark: 8-bit colour and its own
// footprint; PlayCanvas: its own footprint and cut-off) where the preview accumulates in float:
// per pixel, the largest channel difference; the mean channel difference must stay under
// MEAN_LIMIT of 255, at most OVER_LIMIT of the pixels may differ by more than PIXEL_LIMIT (splat
// edges), and the canvas must light between half and twice the preview's pixels (the example
// scene is sparse: a blank canvas alone would pass the mean).
const MEAN_LIMIT = 6, PIXEL_LIMIT = 48, OVER_LIMIT = 0.04, LIT_OFF_LIMIT = 0.5;
const matches = (c) => c.mean < MEAN_LIMIT && c.over < OVER_LIMIT && c.litB > 0 &&
  c.litA >= 0.5 * c.litB && c.litA <= 2 * c.litB && c.litOff < LIT_OFF_LIMIT;
const describe = (c) => `mean ${c.mean.toFixed(2)}, p99 ${c.p99}, max ${c.max}, over ` +
  `${PIXEL_LIMIT}: ${(100 * c.over).toFixed(2)} %, lit ${c.litA} (canvas) vs ${c.litB} (preview), ` +
  `lit pixels off: ${(100 * c.litOff).toFixed(1)} %`;

// The rows, after the engine's own encoding (absolute / relative error per value):
//   PlayCanvas: centre f32 (exact), colour, opacity, scale, rotation as half floats (relative
//     2^-11, and a half's absolute 2^-24 near zero);
//   Spark: centre in half floats, colour and opacity in 8 bits of [0, 1] (the frame's values
//     clamped there), log scale in 8 bits over [LN_SCALE_MIN, LN_SCALE_MAX] = [-12, 9] (a
//     step of 21/254 in ln: relative e^(21/508) - 1 = 4.2 % at most), rotation octahedral 8+8 bits + 8-bit angle (compared as
//     the angle between the two rotations, |dot| of unit quaternions).
const ROW_TOLERANCE = {
  playcanvas: { center: [0, 1e-6], scale: [2 ** -11, 2 ** -24], color: [2 ** -11, 2 ** -24],
    rotationDot: 1 - 1e-5 },
  three: { center: [2 ** -11, 2 ** -14], scale: [Math.expm1(21 / 508) + 1e-6, 0], color: [0, 0.5 / 255 + 1e-6],
    rotationDot: Math.cos(3 * Math.PI / 180),
    // SH band b in signed fields of 7, 8, 6 bits over [-shMax, shMax] (the mesh's sh1Max..sh3Max,
    // which widen from Spark's ±1 to the scene's largest coefficient, so nothing is clipped),
    // within half a step, 0.5 / (2^(bits-1) - 1) of shMax.
    shHalfStep: [0, 0.5 / 63, 0.5 / 127, 0.5 / 31] },
}[engine];
assert.ok(ROW_TOLERANCE, `an engine page: playcanvas or three, not ${engine}`);

function compareRows({ engine: e, frame: f, time }, clampColor) {
  assert.equal(e.count, f.count, `t=${time}: the engine holds the frame's ${f.count} rows`);
  const worst = { center: 0, scale: 0, color: 0, rotationDot: 1 };
  const check = (name, a, b, [rel, abs]) => {
    for (let i = 0; i < a.length; ++i) {
      const want = name === 'color' && clampColor ? Math.min(1, Math.max(0, b[i])) : b[i];
      const err = Math.abs(a[i] - want), allowed = rel * Math.abs(want) + abs;
      worst[name] = Math.max(worst[name], err / Math.max(allowed, 1e-30));
      assert.ok(err <= allowed, `t=${time} row ${Math.floor(i / (a.length / e.count))} ${name}: ` +
        `${a[i]} (engine) vs ${b[i]} (frame)`);
    }
  };
  check('center', e.center, f.center, ROW_TOLERANCE.center);
  check('scale', e.scale, f.scale, ROW_TOLERANCE.scale);
  check('color', e.color, f.color, ROW_TOLERANCE.color);
  for (let i = 0; i < e.count; ++i) {
    const q = e.rotation.slice(4 * i, 4 * i + 4), r = f.rotation.slice(4 * i, 4 * i + 4);
    const dot = Math.abs(q.reduce((s, v, k) => s + v * r[k], 0)) / (Math.hypot(...q) * Math.hypot(...r));
    worst.rotationDot = Math.min(worst.rotationDot, dot);
    assert.ok(dot >= ROW_TOLERANCE.rotationDot, `t=${time} row ${i} rotation: ${q} (engine) vs ${r} (frame)`);
  }
  worst.sh = 0;
  worst.shLargest = [0, 0, 0];   // per band, the frame's largest |coefficient|
  const perRow = 3 * (((e.shDegree ?? 0) + 1) ** 2 - 1);
  assert.equal(e.sh.length, perRow * e.count, `t=${time}: the engine holds SH degree ${e.shDegree}`);
  assert.equal(f.sh.length, e.sh.length, `t=${time}: the frame's SH bands`);
  for (let j = 0; j < e.sh.length; ++j) {
    const at = j % perRow, band = at < 9 ? 1 : at < 24 ? 2 : 3, shMax = e.shMax?.[band - 1] ?? 1;
    const allowed = ROW_TOLERANCE.shHalfStep[band] * shMax + 1e-6, err = Math.abs(e.sh[j] - f.sh[j]);
    worst.sh = Math.max(worst.sh, err / allowed);
    worst.shLargest[band - 1] = Math.max(worst.shLargest[band - 1], Math.abs(f.sh[j]));
    assert.ok(err <= allowed, `t=${time} row ${Math.floor(j / perRow)} SH ${at}: ${e.sh[j]} ` +
      `(engine) vs ${f.sh[j]} (frame)`);
  }
  return worst;
}

// Spark only: the adapter writes Spark's words itself; they must be the words Spark's own
// encoders write for the same rows, every one.
async function checkSparkWords(page, what) {
  if (engine !== 'three') return;
  const w = await page.evaluate('window.fourdgsPage.sparkWords()');
  console.log(`  ${what}: ${w.words} words of ${w.rows} rows packed by the adapter, ${w.differing} ` +
    `differ from Spark's own setPackedSplat / encodeSh*Rgb`);
  assert.ok(w.rows > 0);
  assert.equal(w.differing, 0, 'the adapter writes the words Spark\'s encoders write');
}

// The engines, from the registry, at the versions the package declares.
const peers = JSON.parse(readFileSync(join(source, 'js', 'package.json'), 'utf8')).peerDependencies;
const wanted = engine === 'playcanvas' ? ['playcanvas'] : ['three', '@sparkjsdev/spark'];
if (!wanted.every((p) => existsSync(join(npmDir, 'node_modules', p, 'package.json')))) {
  mkdirSync(npmDir, { recursive: true });
  if (!existsSync(join(npmDir, 'package.json'))) writeFileSync(join(npmDir, 'package.json'), '{"private": true}\n');
  console.log(`npm install ${wanted.map((p) => `${p}@${peers[p]}`).join(' ')}`);
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--silent', '--prefix', npmDir,
    ...wanted.map((p) => `${p}@${peers[p]}`)], { stdio: 'inherit' });
}
for (const p of wanted) {
  const v = JSON.parse(readFileSync(join(npmDir, 'node_modules', p, 'package.json'), 'utf8')).version;
  console.log(`${p} ${v}`);
}

// The site: examples/web, the installed package as ./fourdgs/, the engines as ./node_modules/.
const site = join(root, 'site');
cpSync(join(source, 'examples', 'web'), site, { recursive: true });
mkdirSync(join(site, 'fourdgs'));
execFileSync('tar', ['-xzf', join(packageDir, tarballs[0]), '-C', join(site, 'fourdgs'), '--strip-components=1']);
// (copied: nginx's workers may not follow a link into the build tree; source maps left out)
for (const p of wanted)
  cpSync(join(npmDir, 'node_modules', p), join(site, 'node_modules', p), { recursive: true,
    filter: (f) => !f.endsWith('.map') });
cpSync(example, join(site, 'example.4dgs'));
cpSync(damaged, join(site, 'damaged.4dgs'));

function preview(scene, t) {
  const png = join(root, `preview-${t}.png`);
  execFileSync(cli, ['preview', scene, '--at', String(t), '-o', png, '--width', String(WIDTH),
    '--height', String(HEIGHT)], { stdio: 'ignore' });
  return decodePng(readFileSync(png));
}

async function pageReady(page) {
  for (let i = 0; i < 300 && !(await page.evaluate('!!window.fourdgsPage')); ++i)
    await new Promise((r) => setTimeout(r, 100));
  if (!(await page.evaluate('!!window.fourdgsPage')))
    throw new Error(`the page did not start: ${page.errors.join('\n')}`);
  const started = await page.evaluate(`Promise.race([window.fourdgsPage.ready.then(() => true),
    new Promise((r) => setTimeout(() => r(false), 60000))])`);
  if (!started) throw new Error(`the page's first frame did not come in 60 s: ` +
    `${page.errors.join('\n')}\n${page.console.map((c) => c.text).join('\n')}`);
}

async function canvasShot(page, name) {
  const rect = await page.evaluate(`(() => { const r = document.getElementById('canvas')
    .getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })()`);
  const shot = await page.send('Page.captureScreenshot', { format: 'png',
    clip: { x: rect[0], y: rect[1], width: rect[2], height: rect[3], scale: 1 } });
  const bytes = Buffer.from(shot.data, 'base64');
  if (artifacts) writeFileSync(join(artifacts, `${engine}-${name}.png`), bytes);
  return decodePng(bytes);
}

// The page at instant t: the engine's rows against the package's frame (and for Spark, its
// words against Spark's own encoders').
async function checkRows(page, t, name) {
  const at = await page.evaluate(`window.fourdgsPage.seek(${t})`);
  assert.ok(Math.abs(at - t) < 1e-9, `the page is at ${t}, not ${at}`);
  const rows = await page.evaluate('window.fourdgsPage.rows()');
  const worst = compareRows(rows, engine === 'three');
  console.log(`${name} t=${t}: ${rows.engine.count} rows equal the package's frame at ${rows.time} ` +
    `within the encoding (worst error / allowed: center ${worst.center.toFixed(3)}, scale ` +
    `${worst.scale.toFixed(3)}, color ${worst.color.toFixed(3)}, SH degree ${rows.engine.shDegree} ` +
    `${worst.sh.toFixed(3)}; rotation |dot| >= ${worst.rotationDot.toFixed(6)})` +
    (rows.engine.shDegree ? `; SH bands' largest |coefficient| ${worst.shLargest.map((v) =>
      v.toFixed(3)).join(', ')}, read in ±${rows.engine.shMax.join(', ±')}` : ''));
  await checkSparkWords(page, `${name} at ${t}`);
  return worst;
}

// The example at t: its rows, then the canvas against the preview at t; a flipped and a blank
// canvas must fail the same test.
async function checkInstant(page, t) {
  await checkRows(page, t, 'example');
  const canvas = await canvasShot(page, `canvas-${t}`);
  const reference = preview(example, t);
  const cmp = compareImages(canvas, reference, PIXEL_LIMIT);
  if (artifacts) {
    writeFileSync(join(artifacts, `${engine}-preview-${t}.png`), encodePng(reference));
    writeFileSync(join(artifacts, `${engine}-diff-${t}.png`), encodePng(cmp.diff));
  }
  console.log(`  the canvas vs 4dgs preview: ${describe(cmp)}`);
  assert.ok(matches(cmp), `t=${t}: the canvas matches the preview`);
  const flipped = { ...canvas, rgba: new Uint8Array(canvas.rgba.length) };
  const row = 4 * WIDTH;
  for (let y = 0; y < HEIGHT; ++y)
    flipped.rgba.set(canvas.rgba.subarray(y * row, (y + 1) * row), (HEIGHT - 1 - y) * row);
  const blank = { ...canvas, rgba: new Uint8Array(canvas.rgba.length).fill(0) };
  for (const [name, img] of [['flipped', flipped], ['blank', blank]]) {
    const c = compareImages(img, reference, PIXEL_LIMIT);
    console.log(`  a ${name} canvas: ${describe(c)}`);
    assert.ok(!matches(c), `a ${name} canvas fails the comparison`);
  }
  return canvas;
}

// FEW_ROWS gaussians in FEW_FRAMES PLY frames at 2 fps, every tenth moving along x and the others
// standing still, converted (`4dgs convert --tracked`, gaussian-birth) to `out`: one state in
// which only the moving tenth's rows depend on t.
const FEW_ROWS = 1000, FEW_FRAMES = 4;
function writeFewRowsScene(out) {
  const names = ['x', 'y', 'z', 'f_dc_0', 'f_dc_1', 'f_dc_2', 'opacity', 'scale_0', 'scale_1',
    'scale_2', 'rot_0', 'rot_1', 'rot_2', 'rot_3'];
  const header = `ply\nformat binary_little_endian 1.0\nelement vertex ${FEW_ROWS}\n` +
    names.map((n) => `property float ${n}\n`).join('') + 'end_header\n';
  let seed = 1;
  const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647) * 2 - 1;
  const base = Array.from({ length: 3 * FEW_ROWS }, random);
  const frames = [];
  for (let f = 0; f < FEW_FRAMES; ++f) {
    const v = new Float32Array(names.length * FEW_ROWS);
    for (let i = 0; i < FEW_ROWS; ++i) {
      const row = v.subarray(i * names.length, (i + 1) * names.length);
      row.set([base[3 * i] + (i % 10 === 0 ? 0.1 * f : 0), base[3 * i + 1], base[3 * i + 2],
        0.5 * base[3 * i], 0.2, -0.3, 2, -4, -4.2, -3.8, 1, 0, 0, 0]);
    }
    const file = join(root, `few-${f}.ply`);
    writeFileSync(file, Buffer.concat([Buffer.from(header), Buffer.from(v.buffer)]));
    frames.push(file);
  }
  execFileSync(cli, ['-q', 'convert', ...frames, '--fps', '2', '--tracked', '--model',
    'gaussian-birth', '--no-rigid-parts', '-o', out], { stdio: 'ignore' });
}

const pageUrl = (scene) => `${base}/site/${engine}/index.html?url=../${scene}`;
console.log('starting chromium');
const browser = await launch();
await runThenExit(browser, () => (process.env.FOURDGS_ENGINE_BENCH
  ? bench(Number(process.env.FOURDGS_ENGINE_BENCH)) : checks()));

async function checks() {
  const page = await browser.newPage();
  await page.navigate(pageUrl('example.4dgs'));
  await pageReady(page);
  assert.equal(await page.evaluate('JSON.stringify(window.fourdgsPage.stats.error)'), 'null',
    'the example scene opens');
  await page.evaluate('window.fourdgsPage.usePreviewView()');
  await page.evaluate('window.fourdgsPage.showExtras(false)');
  await checkInstant(page, 2.5);
  await checkInstant(page, 0.5);   // a seek shows the new instant

  const played = await page.evaluate('window.fourdgsPage.playFrames(120)');
  console.log(`played ${played.frames} engine frames at 1x, ${played.late} late, ` +
    `${played.moved} showing a new instant`);
  assert.ok(played.frames >= 120);
  assert.ok(played.moved >= played.frames / 2, 'playing moves the scene\'s time');
  assert.equal(played.late, 0, 'no late frame');
  await page.evaluate('window.fourdgsPage.showExtras(true)');
  await page.evaluate('window.fourdgsPage.seek(2.5)');
  await canvasShot(page, 'with-extras-2.5');
  assert.deepEqual(page.errors, [], 'the console has no error');
  await page.navigate('about:blank');   // each page done stops drawing (SwiftShader is the CPU)

  if (makeBenchScene) {
    // SH: a small scene of the benchmarks' generator with every band (degree 3). Spark holds
    // them; PlayCanvas's container holds none (its rows are compared at degree 0).
    execFileSync(makeBenchScene, [join(site, 'sh.4dgs'), '2000', 'deflate', '0', 'default', '3'],
      { stdio: 'ignore' });
    const shPage = await browser.newPage();
    await shPage.navigate(pageUrl('sh.4dgs'));
    await pageReady(shPage);
    assert.equal(await shPage.evaluate('JSON.stringify(window.fourdgsPage.stats.error)'), 'null',
      'the SH scene opens');
    const sh = await checkRows(shPage, 2.5, 'sh (degree 3)');
    if (engine === 'three') {
      assert.equal(await shPage.evaluate('window.fourdgsPage.adapter.shDegree'), 3, 'Spark holds 3 bands');
      // The scene's band 1 goes past Spark's default ±1: the rows above hold it unclipped.
      assert.ok(sh.shLargest[0] > 1, `band 1's largest coefficient ${sh.shLargest[0]} exceeds 1`);
    }
    await canvasShot(shPage, 'sh-2.5');
    assert.deepEqual(shPage.errors, [], 'the console has no error');
    await shPage.navigate('about:blank');
  }

  // The few-rows paths (in the benchmark every row changes every frame): a scene where only some
  // rows change between two instants of a state; the Player lists them, the adapter writes only
  // those (PlayCanvas's writeRows, under an eighth of the rows; Spark's row list), and the
  // engine's rows equal the package's frame after each such write.
  writeFewRowsScene(join(site, 'few.4dgs'));
  const fewPage = await browser.newPage();
  await fewPage.navigate(pageUrl('few.4dgs'));
  await pageReady(fewPage);
  assert.equal(await fewPage.evaluate('JSON.stringify(window.fourdgsPage.stats.error)'), 'null',
    'the few-rows scene opens');
  for (const t of [0.5, 0.52, 1.25]) {
    await checkRows(fewPage, t, 'few rows');
    const { lastRows, count } = await fewPage.evaluate(`(() => { const a = window.fourdgsPage.adapter;
      return { lastRows: a.stats.lastRows, count: a.count }; })()`);
    console.log(`  the adapter wrote ${lastRows} of the ${count} rows`);
    assert.ok(lastRows > 0 && lastRows <= count / 8, `t=${t}: ${lastRows} of ${count} rows written`);
  }
  assert.deepEqual(fewPage.errors, [], 'the console has no error');
  await fewPage.navigate('about:blank');

  const refusedPage = await browser.newPage();
  await refusedPage.navigate(pageUrl('damaged.4dgs'));
  await pageReady(refusedPage);
  const shown = await refusedPage.evaluate(`(() => { const e = document.getElementById('error');
    return e.hidden ? '' : e.textContent; })()`);
  console.log(`damaged file: ${JSON.stringify(shown)}`);
  assert.ok(shown.includes(expectedRefusal), `the page shows ${expectedRefusal}`);
  assert.deepEqual(refusedPage.errors, [], 'a refusal is not a page error');

  if (makeBenchScene) {
    execFileSync(makeBenchScene, [join(site, 'multi.4dgs'), '200000'], { stdio: 'ignore' });
    const bench = await browser.newPage();
    await bench.navigate(pageUrl('multi.4dgs'));
    await pageReady(bench);
    assert.equal(await bench.evaluate('JSON.stringify(window.fourdgsPage.stats.error)'), 'null');
    await bench.evaluate('window.fourdgsPage.seek(4.7)');
    const rows = await bench.evaluate('window.fourdgsPage.rows()');
    compareRows(rows, engine === 'three');
    await checkSparkWords(bench, 'multi at 4.7');
    const cost = await bench.evaluate(`(async () => {
      const a = window.fourdgsPage.adapter, frame = [], upload = [];
      for (let i = 0; i < 12; ++i) {
        a.seek(4.7 + (i % 2) * 0.01);   // a new instant of the same state: evaluate + write
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        frame.push(a.stats.lastFrameMs); upload.push(a.stats.lastUploadMs);
      }
      const med = (x) => x.sort((p, q) => p - q)[x.length >> 1];
      return { rows: a.count, frameMs: med(frame), uploadMs: med(upload) };
    })()`);
    console.log(`multi.4dgs (200,000 gaussians) at 4.7: ${rows.engine.count} rows equal the ` +
      `package's frame; per frame (median of 12): the Player's decode + evaluate ` +
      `${cost.frameMs.toFixed(2)} ms, the adapter's write into the engine object ` +
      `${cost.uploadMs.toFixed(2)} ms (${(cost.uploadMs / cost.frameMs).toFixed(2)}x)`);
    // Another instant of the state just shown (gaussians crossed the cut-off, so the rows
    // shifted): Spark's packing keeps the codes of the rows it finds again, and the words are
    // still Spark's own.
    await checkRows(bench, 4.73, 'multi, after 4.71');
    if (engine === 'three') {
      const { made, count } = await bench.evaluate(`(() => { const a = window.fourdgsPage.adapter;
        return { made: a.packer.module.made, count: a.count }; })()`);
      console.log(`  Spark's packing made the codes of ${made} of the ${count} rows anew`);
      assert.ok(made <= count / 8, 'the rows shown at 4.71 keep their codes at 4.73');
    }
    assert.deepEqual(bench.errors, [], 'the console has no error');
    await bench.navigate('about:blank');

    // The requests, as the web player's test counts them (network.mjs), through the engine page.
    const n = await checkNetwork({ browser, pageReady, proxy, sceneName: 'multi.4dgs',
      size: statSync(join(site, 'multi.4dgs')).size, accessLog, delayMs: DELAY_MS, seekT: 4.7,
      pagePath: `${engine}/index.html`, timed: false });
    console.log(`multi.4dgs through the ${engine} page, every request ${DELAY_MS} ms late: open + ` +
      `first frame ${n.firstRequests} requests, ${n.firstBytes} bytes (fetchCost(0) ${n.cost0}), ` +
      `held after ${n.firstBytesMs.toFixed(0)} ms; seek to 4.7: ${n.seekRequests} requests, ` +
      `${n.seekBytes} bytes (its own ${n.seekOwnRequests}, fetchCost ${n.seekCost}; look-ahead ` +
      `${n.aheadFetched} of ${n.aheadBound} declared), held after ${n.seekBytesMs.toFixed(0)} ms`);
  }
}

// The benchmark (not in ctest; docs/engines.md, "Per-frame cost"): with FOURDGS_ENGINE_BENCH=N
// the bench scene (1,000,000 gaussians, about 100,000 visible at an instant), in two parts:
//   1. the adapter's frames: the engine's own frame loop off (SwiftShader draws a frame in
//      seconds, which would move the clock by seconds a frame), the adapter's update(now) called
//      from requestAnimationFrame with the page clock (performance.now()), N frames at 1×
//      (looping). Per frame: the Player's frame (decode when it enters a state, evaluate, the
//      changed rows), the adapter's write into the engine object (from the Player's frame to the
//      engine's data ready for upload), the engine's own upload call after it (PlayCanvas
//      uploads its textures there), the package's evaluate of the same instant (the
//      Player's resident state evaluated again right after, into a frame of its own), whether it
//      entered a new state,
//      late frames;
//   2. the engine's render: paused, at each of DRAWN instants the adapter's frame, then DRAWS
//      engine frames 100 ms apart, each drawn with gl.finish and timed (the first draws the new
//      rows; the engines sort on workers, so the later ones draw the sorted order): the engine's
//      upload, sort and draw, theirs, not ours; then LOOPED frames played with the engine's own
//      loop on, their mean interval (its render and all else, as a user sees it).
async function bench(frames) {
  const DRAWN = [0.5, 2.5, 4.5, 6.5, 8.5], DRAWS = 4, LOOPED = 5;
  assert.ok(makeBenchScene, 'the benchmark needs MAKE_BENCH_SCENE');
  execFileSync(makeBenchScene, [join(site, 'bench.4dgs'), '1000000'], { stdio: 'ignore' });
  const load = readFileSync('/proc/loadavg', 'utf8').trim();
  const page = await browser.newPage();
  await page.navigate(pageUrl('bench.4dgs'));
  await pageReady(page);
  assert.equal(await page.evaluate('JSON.stringify(window.fourdgsPage.stats.error)'), 'null');
  const r = await page.evaluate(`(async () => {
    const fp = window.fourdgsPage, a = fp.adapter, p = a.player, scene = a.scene;
    const rows = [];   // per frame: [write ms, evaluate ms, Player frame ms, entered a state]
    let late = 0, states = p.stats.statesDecoded;
    const scratch = scene.newFrame();   // evaluate's own frame: the Player's stays its own
    fp.engineLoop(false);
    a.pause();
    await a.ready(0);
    a.seek(0);
    a.setLoop(true);
    a.setRate(1);
    a.play();
    await new Promise((done) => {
      const step = () => {
        const uploads = a.stats.uploads, info = a.update(performance.now() / 1000);
        if (info.late) ++late;
        if (a.stats.uploads !== uploads) {
          const t0 = performance.now();
          scene.evaluateBlock(p.block, info.shown, p.evaluate, scratch);
          rows.push([a.stats.lastUploadMs, performance.now() - t0, a.stats.lastFrameMs,
            p.stats.statesDecoded !== states ? 1 : 0, a.count,
            info.allChanged ? a.count : info.changed.length, a.stats.lastSubmitMs]);
          states = p.stats.statesDecoded;
        }
        if (rows.length + late < ${frames}) requestAnimationFrame(step); else done();
      };
      requestAnimationFrame(step);
    });
    a.pause();
    scene.freeFrame(scratch);
    const drawn = [];   // per instant: DRAWS frames, 100 ms apart (the engines sort on workers)
    for (const t of ${JSON.stringify(DRAWN)}) {
      await a.ready(t);
      a.seek(t);
      a.update(performance.now() / 1000);
      const times = [];
      for (let k = 0; k < ${DRAWS}; ++k) {
        times.push(fp.drawOnce());
        await new Promise((r) => setTimeout(r, 100));
      }
      drawn.push(times);
    }
    fp.engineLoop(true);
    const loopStart = performance.now(), looped = await fp.playFrames(${LOOPED});
    const loopMs = (performance.now() - loopStart) / looped.frames;
    a.pause();
    const gl = fp.renderer?.getContext() ?? fp.app.graphicsDevice.gl;
    const info = gl.getExtension('WEBGL_debug_renderer_info');
    return { rows, late, count: a.count, drawn, loopMs, renderer:
      info ? gl.getParameter(info.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER) };
  })()`);
  const pct = (x, q) => [...x].sort((u, v) => u - v)[Math.min(x.length - 1, Math.floor(q * x.length))];
  const fmt = (x) => (x.length ? `p50 ${pct(x, 0.5).toFixed(2)} ms, p99 ${pct(x, 0.99).toFixed(2)} ms`
    : 'no sample');
  const col = (k, which = () => true) => r.rows.filter(which).map((row) => row[k]);
  const entering = (row) => row[3] === 1, within = (row) => row[3] === 0;
  const ratio = r.rows.map(([w, e]) => w / e);
  const version = execFileSync(CHROMIUM, ['--version']).toString().trim();
  console.log(`${engine}: bench.4dgs (1,000,000 gaussians), ${r.rows.length + r.late} adapter ` +
    `frames at 1x on the page clock, ${r.late} late; ${r.rows.length} wrote a new instant ` +
    `(${col(3).filter(Boolean).length} entered a new state; ${pct(col(4), 0.5)} rows p50, ` +
    `${pct(col(5), 0.5)} changed p50)\n` +
    `  adapter write:         ${fmt(col(0))}\n` +
    `  package evaluate:      ${fmt(col(1))}\n` +
    `  write / evaluate:      ${(pct(col(0), 0.99) / pct(col(1), 0.99)).toFixed(2)}x at p99, ` +
    `${(pct(col(0), 0.5) / pct(col(1), 0.5)).toFixed(2)}x at p50; per frame p50 ` +
    `${pct(ratio, 0.5).toFixed(2)}x, p99 ${pct(ratio, 0.99).toFixed(2)}x\n` +
    `  frames within a state: write ${fmt(col(0, within))}; evaluate ${fmt(col(1, within))}\n` +
    `  frames entering one:   write ${fmt(col(0, entering))}; evaluate ${fmt(col(1, entering))}\n` +
    `  the Player's frame:    ${fmt(col(2))} (decode on entering a state, evaluate, changed rows)\n` +
    `  the engine's upload call: ${fmt(col(6))} (${engine === 'playcanvas' ? 'Texture.unlock ' +
      'uploads the four textures at once' : 'versions bumped; Spark uploads in its frame'})\n` +
    `  engine render (gl.finish), ${DRAWS} frames at each of ${DRAWN.join(', ')} s: ` +
    `${fmt(r.drawn.flat())}; ${r.drawn.map((d) => d.map((x) => x.toFixed(0)).join('/')).join(', ')} ms\n` +
    `  engine frame interval, its own loop on (${LOOPED} frames played): ${r.loopMs.toFixed(0)} ms\n` +
    `  ${version}; WebGL: ${r.renderer}; load average before: ${load}, after: ` +
    `${readFileSync('/proc/loadavg', 'utf8').trim()}`);
  if (artifacts) writeFileSync(join(artifacts, `${engine}-bench.json`), JSON.stringify(r));
  assert.deepEqual(page.errors, [], 'the console has no error');
}
