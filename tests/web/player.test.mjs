// The web player (examples/web) in headless Debian Chromium, served by nginx on loopback
// (tests/http/harness.py runs this with FOURDGS_HTTP_BASE / _ROOT set):
//   - the page and the installed npm package are copied into nginx's document root; the example
//     scene is opened by URL, seeked to t = 2.5, and the canvas matches `4dgs preview` of the same
//     view (the scene's framing) within the tolerance below;
//   - the page opened with no ?url shows its default, the showcase scene (copied from beside
//     EXAMPLE_SCENE), matching `4dgs preview` at t = 2.5 within the same tolerance;
//   - 60 frames play with no late frame; the console has no error;
//   - a damaged file shows its refusal identifier in the page, not a blank canvas;
//   - with MAKE_BENCH_SCENE (tests/bench/make_bench_scene) and harness.py --access-log: what the
//     page fetches for a multi-chunk scene's first frame and for a seek, counted in nginx's
//     access log against the reader's own figures (network.mjs).
// Screenshots, the preview and the difference image are left in FOURDGS_WEB_ARTIFACTS (when set)
// for looking at.
//
//   harness.py --access-log run -- node player.test.mjs PACKAGE_DIR CLI EXAMPLE_SCENE
//       DAMAGED_SCENE REFUSAL_ID [MAKE_BENCH_SCENE]
//
// PACKAGE_DIR holds the packed npm package (fourdgs-*.tgz). Exit 77 (ctest's SKIP) only where
// Chromium or emscripten is not installed (Debian: apt-get install chromium; FOURDGS_CHROMIUM names another).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { CHROMIUM, launch, runThenExit } from './browser.mjs';
import { checkNetwork } from './network.mjs';
import { compareImages, decodePng, encodePng } from './png.mjs';

const [packageDir, cli, example, damaged, expectedRefusal, makeBenchScene] = process.argv.slice(2);
if (!existsSync(CHROMIUM)) {
  console.log(`SKIP: ${CHROMIUM} is not installed (Debian: apt-get install chromium)`);
  process.exit(77);
}
const tarballs = existsSync(packageDir)
  ? readdirSync(packageDir).filter((f) => /^fourdgs-.*\.tgz$/.test(f)) : [];
if (tarballs.length === 0 && spawnSync('sh', ['-c', 'command -v emcc']).status !== 0) {
  console.log('SKIP: emscripten is not installed, so there is no package (apt-get install emscripten)');
  process.exit(77);
}
assert.equal(tarballs.length, 1, `one packed package in ${packageDir}`);
const tarball = join(packageDir, tarballs[0]);
const here = dirname(fileURLToPath(import.meta.url));
const base = process.env.FOURDGS_HTTP_BASE, root = process.env.FOURDGS_HTTP_ROOT;
const artifacts = process.env.FOURDGS_WEB_ARTIFACTS;
const WIDTH = 640, HEIGHT = 480;
// The WebGL renderer and the CPU preview splat the same gaussians from the same view with
// different rasterizers (GPU blending in 8 bits vs the preview's float accumulation): the mean
// channel difference must stay under 6 of 255 and at most 3 % of the pixels may differ by more
// than 48 in a channel (splat edges).
const MEAN_LIMIT = 6, PIXEL_LIMIT = 48, OVER_LIMIT = 0.03;

// The site: the page, the installed package beside it as ./fourdgs/, the scenes.
const site = join(root, 'site');
cpSync(join(here, '..', '..', 'examples', 'web'), site, { recursive: true });
mkdirSync(join(site, 'fourdgs'));
execFileSync('tar', ['-xzf', tarball, '-C', join(site, 'fourdgs'), '--strip-components=1']);
cpSync(example, join(site, 'example.4dgs'));
cpSync(damaged, join(site, 'damaged.4dgs'));
// The multi-chunk scene for the network checks: 200,000 gaussians, 10 one-second chunks of about
// 370 KB each (3.7 MB), written by the benchmarks' generator.
const accessLog = process.env.FOURDGS_HTTP_ACCESS_LOG, proxy = process.env.FOURDGS_HTTP_PROXY;
const network = makeBenchScene && accessLog && proxy;
if (network) {
  execFileSync(makeBenchScene, [join(site, 'multi.4dgs'), '200000'], { stdio: 'ignore' });
} else {
  console.log('the network checks need make_bench_scene (FOURDGS_BUILD_BENCH) and harness.py ' +
    '--access-log: not run');
}
// Each request to the proxy is answered this late: a round trip is long enough to count.
const DELAY_MS = 400;

// The page opens this when its address names no scene (examples/web/main.js: DEFAULT_SCENE).
const showcase = join(dirname(example), 'showcase.4dgs');
cpSync(showcase, join(site, 'showcase.4dgs'));

// The page's module (and the package's top-level await) may still be loading at the load event;
// then the page is ready when its first frame is drawn or its error shown.
async function pageReady(page) {
  for (let i = 0; i < 300 && !(await page.evaluate('!!window.fourdgsPage')); ++i)
    await new Promise((r) => setTimeout(r, 100));
  if (!(await page.evaluate('!!window.fourdgsPage')))
    throw new Error(`the page did not start: ${page.errors.join('\n')}`);
  await page.evaluate('window.fourdgsPage.ready.then(() => true)');  // first frame or error shown
}

// Seeks the page to t = 2.5 and compares its canvas with `4dgs preview` of `scene` at 2.5 (the
// same view: the scene's camera or framing); the pictures go to FOURDGS_WEB_ARTIFACTS as
// NAME-canvas-2.5.png, NAME-preview-2.5.png, NAME-diff-2.5.png.
async function canvasAgainstPreview(page, scene, name) {
  const previewPng = join(root, `${name}-preview-2.5.png`);
  execFileSync(cli, ['preview', scene, '--at', '2.5', '-o', previewPng, '--width', String(WIDTH),
    '--height', String(HEIGHT)], { stdio: 'ignore' });
  const reference = decodePng(readFileSync(previewPng));
  await page.evaluate('window.fourdgsPage.seek(2.5)');
  const rect = await page.evaluate(`(() => { const r = document.getElementById('canvas')
    .getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })()`);
  const shot = await page.send('Page.captureScreenshot', { format: 'png',
    clip: { x: rect[0], y: rect[1], width: rect[2], height: rect[3], scale: 1 } });
  const canvas = decodePng(Buffer.from(shot.data, 'base64'));
  const cmp = compareImages(canvas, reference, PIXEL_LIMIT);
  if (artifacts) {
    mkdirSync(artifacts, { recursive: true });
    writeFileSync(join(artifacts, `${name}-canvas-2.5.png`), Buffer.from(shot.data, 'base64'));
    writeFileSync(join(artifacts, `${name}-preview-2.5.png`), encodePng(reference));
    writeFileSync(join(artifacts, `${name}-diff-2.5.png`), encodePng(cmp.diff));
  }
  console.log(`${name}: t=2.5 canvas vs 4dgs preview: mean ${cmp.mean.toFixed(2)}, p99 ` +
    `${cmp.p99}, max ${cmp.max}, over ${PIXEL_LIMIT}: ${(100 * cmp.over).toFixed(2)} %, lit ` +
    `pixels ${cmp.litA} (canvas) vs ${cmp.litB} (preview)`);
  return cmp;
}

console.log('starting chromium');
const browser = await launch();
console.log('chromium is up');
await runThenExit(browser, async () => {
  const page = await browser.newPage();
  await page.navigate(`${base}/site/index.html?url=example.4dgs`);
  await pageReady(page);
  console.log('the page is up');
  assert.equal(await page.evaluate('JSON.stringify(window.fourdgsPage.stats.error)'), 'null',
    'the example scene opens');
  const cmp = await canvasAgainstPreview(page, example, 'example');
  assert.ok(cmp.mean < MEAN_LIMIT && cmp.over < OVER_LIMIT, 'the canvas matches the preview');
  // The example scene is sparse: a blank canvas would pass the mean above, so the splats drawn
  // must light about as many pixels as the preview's.
  assert.ok(cmp.litB > 0 && cmp.litA >= 0.5 * cmp.litB && cmp.litA <= 2 * cmp.litB,
    'the canvas shows the splats the preview shows');

  const played = await page.evaluate('window.fourdgsPage.playFrames(60)');
  console.log(`played ${played.frames} frames, ${played.late} late`);
  assert.ok(played.frames >= 60);
  assert.equal(played.late, 0, 'no late frame');
  assert.deepEqual(page.errors, [], 'the console has no error');

  // A damaged file: the refusal is in the page.
  const refusedPage = await browser.newPage();
  await refusedPage.navigate(`${base}/site/index.html?url=damaged.4dgs`);
  await pageReady(refusedPage);
  const shown = await refusedPage.evaluate(`(() => { const e = document.getElementById('error');
    return e.hidden ? '' : e.textContent; })()`);
  console.log(`damaged file: ${JSON.stringify(shown)}`);
  assert.ok(shown.includes(expectedRefusal), `the page shows ${expectedRefusal}`);
  if (artifacts) {
    const s = await refusedPage.send('Page.captureScreenshot', { format: 'png' });
    writeFileSync(join(artifacts, 'refused.png'), Buffer.from(s.data, 'base64'));
  }
  assert.deepEqual(refusedPage.errors, [], 'a refusal is not a page error');

  // An address that names no scene opens the default, the showcase scene beside the page.
  const defaultPage = await browser.newPage();
  await defaultPage.navigate(`${base}/site/index.html`);
  await pageReady(defaultPage);
  assert.equal(await defaultPage.evaluate('JSON.stringify(window.fourdgsPage.stats.error)'),
    'null', 'the default scene opens');
  const opened = await defaultPage.evaluate(`document.getElementById('info-scene').textContent`);
  console.log(`no ?url: ${JSON.stringify(opened)}`);
  assert.ok(opened.startsWith('showcase.4dgs: '), 'the page opens the showcase scene by default');
  const pictured = await canvasAgainstPreview(defaultPage, showcase, 'showcase');
  assert.ok(pictured.mean < MEAN_LIMIT && pictured.over < OVER_LIMIT,
    'the canvas matches the preview');
  assert.ok(pictured.litA >= 0.5 * pictured.litB, 'the canvas shows what the preview shows');
  assert.deepEqual(defaultPage.errors, [], 'the console has no error');

  if (network) {
    const size = statSync(join(site, 'multi.4dgs')).size;
    const n = await checkNetwork({ browser, pageReady, proxy, sceneName: 'multi.4dgs', size,
      accessLog, delayMs: DELAY_MS, seekT: 4.7 });
    console.log(`multi.4dgs (${size} bytes), every request ${DELAY_MS} ms late:\n` +
      `  open + first frame: ${n.firstRequests} requests, ${n.firstBytes} bytes (2 x ` +
      `${n.speculative} + the first instant's ${n.firstBytes - 2 * n.speculative} of fetchCost(0) ` +
      `${n.cost0}, ${n.chunks0} chunk), bytes held after ${n.firstBytesMs.toFixed(0)} ms ` +
      `(opened after ${n.openedMs.toFixed(0)} ms), first frame drawn after ` +
      `${n.firstFrameMs.toFixed(0)} ms\n` +
      `  seek to 4.7: ${n.seekRequests} requests, ${n.seekBytes} bytes: its own ` +
      `${n.seekOwnRequests} request(s) (fetchCost ${n.seekCost}, ${n.seekChunks} chunk) held after ` +
      `${n.seekBytesMs.toFixed(0)} ms, frame after ${n.seekFrameMs.toFixed(0)} ms, and ` +
      `${n.aheadFetched} bytes of look-ahead (declared: ${n.aheadBound})`);
  }
});
