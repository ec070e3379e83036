// What the two engine pages (playcanvas/, three/) share: the scene's URL, the controls, the
// error panel and the test hooks. Each page makes its engine's app, camera and second object
// and hands this module its adapter (fourdgs/playcanvas or fourdgs/three) and three callbacks.
//
// window.fourdgsPage, for tests and embedding: ready (the first frame drawn or the error
// shown), stats ({ error, frames, lateFrames, ... }), seek(t) (resolves once the engine has drawn
// instant t), playFrames(n) (plays n engine frames at 1×: { frames, late, moved (frames that
// showed a new instant) }), usePreviewView()
// (the camera `4dgs preview` uses at each instant, the orbit controls off), showExtras(on) (the page's own
// object), rows() (the engine object's rows, decoded by the engine, and the package's frame
// of the same instant, SH bands included where the engine holds them), timing, settled() (the
// look-ahead's fetch done), scene and player (the package's objects the adapter plays).
import { FourdgsError } from 'fourdgs';
import { framedView, usableCamera } from './view.js';

/** The scene a page opens without ?url=: one constant, relative to the page. */
export const DEFAULT_SCENE = '../../data/showcase.4dgs';

const $ = (id) => document.getElementById(id);

export function sceneUrl() {
  return new URLSearchParams(location.search).get('url') || DEFAULT_SCENE;
}

const stats = { error: null, frames: 0, lateFrames: 0 };
// How the scene opened, in ms from the adapter's load: opened (the scene's header read), bytes
// (instant 0's bytes held), frame (its first frame drawn), firstFetch (the scene's source stats
// when instant 0's bytes were held): what tests/web/network.mjs checks against nginx's log.
const timing = { opened: null, bytes: null, frame: null, firstFetch: null };

let loadStart = null;

/** Runs `load()` (the page's adapter factory: FourdgsGSplat.load, FourdgsSplatMesh.load) and
 * waits for instant 0's bytes, timing both (the first frame: when the page's load resolves). */
export async function openAdapter(load) {
  loadStart = performance.now();
  const adapter = await load();
  timing.opened = performance.now() - loadStart;
  await adapter.ready(0);
  timing.bytes = performance.now() - loadStart;
  timing.firstFetch = adapter.scene.stats;
  return adapter;
}

export function showError(e) {
  const text = e instanceof FourdgsError ? `refused: ${e.refusal}\n${e.detail}` : String(e?.message ?? e);
  $('error').textContent = text;
  $('error').hidden = false;
  stats.error = e instanceof FourdgsError ? { refusal: e.refusal, message: e.detail } : { message: text };
  console.warn(`fourdgs: ${text}`);  // a refused file is the page's answer, not a page error
}

/** The view `4dgs preview` renders at t: the scene's Camera path when usable, else its framing
 * of the aabb (view.js). */
export function previewView(adapter, t) {
  const v = adapter.camera(t);
  if (v && usableCamera(v)) return v;
  const f = framedView(adapter.scene.info);
  return { position: [f.target[0], f.target[1], f.target[2] + f.distance], target: f.target,
    fovYDeg: f.fovYDeg };
}

/**
 * Wires the controls and the test hooks to `adapter`. `page`: { nextFrame() (resolves after the
 * engine's next drawn frame), setView(view | null) (null: the engine's orbit controls drive the
 * camera), showExtras(on) }.
 */
export function startPage(adapter, page) {
  const timeline = $('timeline');
  timeline.max = String(adapter.duration);
  $('info-scene').textContent = `${sceneUrl().split('/').pop()}: ${adapter.scene.info.temporalModel}, ` +
    `${adapter.duration} s, ${adapter.scene.info.gaussianCount} gaussians, SH degree ` +
    `${adapter.scene.info.shDegree}`;
  const sync = () => { $('play').textContent = adapter.state === 'playing' ? 'Pause' : 'Play'; };
  adapter.addEventListener('frame', ({ detail }) => {
    ++stats.frames;
    if (detail.late) ++stats.lateFrames;
    $('time').textContent = `${detail.time.toFixed(3)} s`;
    if (document.activeElement !== timeline) timeline.value = String(detail.time);
    $('info-frames').textContent = `${stats.frames} frames, ${stats.lateFrames} late, ` +
      `${adapter.count} splats (room for ${adapter.capacity}), upload ` +
      `${adapter.stats.lastUploadMs.toFixed(2)} ms`;
    if (detail.state !== 'playing') sync();
    if ($('camera').value === 'preview') page.setView(previewView(adapter, detail.shown));
  });
  $('play').onclick = () => { if (adapter.state === 'playing') adapter.pause(); else adapter.play(); sync(); };
  $('loop').onchange = () => adapter.setLoop($('loop').checked);
  $('rate').onchange = () => adapter.setRate(Number($('rate').value));
  timeline.oninput = () => { adapter.pause(); sync(); adapter.seek(Number(timeline.value)); };
  $('camera').onchange = () => page.setView($('camera').value === 'preview'
    ? previewView(adapter, adapter.time) : null);
  for (const id of ['play', 'timeline', 'rate', 'loop', 'camera']) $(id).disabled = false;
  adapter.setLoop($('loop').checked);

  const frames = async (n) => { for (let i = 0; i < n; ++i) await page.nextFrame(); };
  return {
    adapter,
    // Engine frames until instant t is drawn: the bytes first, then a few frames for the
    // engine's sort (Spark's and PlayCanvas's run on workers) to land.
    seek: async (t) => {
      adapter.pause();
      sync();
      await adapter.ready(t);
      adapter.seek(t);
      await frames(16);
      return adapter.time;
    },
    playFrames: (n) => new Promise((resolve) => {
      const start = { frames: stats.frames, late: stats.lateFrames };
      let moved = 0, last = adapter.time;   // frames whose instant differs from the one before
      const onFrame = ({ detail }) => {
        if (detail.time !== last) ++moved;
        last = detail.time;
        if (stats.frames - start.frames < n) return;
        adapter.removeEventListener('frame', onFrame);
        adapter.pause();
        sync();
        resolve({ frames: stats.frames - start.frames, late: stats.lateFrames - start.late, moved });
      };
      adapter.addEventListener('frame', onFrame);
      adapter.setRate(1);
      adapter.play();
      sync();
    }),
    usePreviewView: async () => {
      $('camera').value = 'preview';
      page.setView(previewView(adapter, adapter.time));
      await frames(4);
    },
    showExtras: async (on) => { page.showExtras(on); await frames(2); },
    rows: async () => {
      const engine = adapter.engineRows();
      const shown = adapter.frameInfo.shown, shDegree = engine.shDegree ?? 0;
      const f = await adapter.scene.frameAt(shown, { maxShDegree: shDegree });
      const copy = (a) => Array.from(a);
      return {
        time: shown,
        engine: { count: engine.count, center: copy(engine.center), scale: copy(engine.scale),
          rotation: copy(engine.rotation), color: copy(engine.color), shDegree,
          sh: copy(engine.sh ?? []), shMax: engine.shMax },
        frame: { count: f.count, center: copy(f.center), scale: copy(f.scale),
          rotation: copy(f.rotation), color: copy(f.color),
          sh: shBands(f, shDegree, adapter.scene.shCoefficients) },
      };
    },
  };
}

// A frame's SH bands 1..degree as coefficients, per row band by band, coefficient-major with
// r g b interleaved (the order the engines' SH arrays hold; SH byte b is `coefficients[b]`, the
// library's §6.5 map).
function shBands(f, degree, coefficients) {
  const out = [], perComponent = f.shPerGaussian / 3;
  for (let i = 0; i < f.count; ++i) {
    for (let b = 1, first = 0; b <= degree; first += 2 * b + 1, ++b) {
      for (let k = 0; k < 2 * b + 1; ++k) {
        for (let c = 0; c < 3; ++c)
          out.push(coefficients[f.sh[i * f.shPerGaussian + c * perComponent + first + k]]);
      }
    }
  }
  return out;
}

/** Opens the scene with `load(url)` (the page's adapter factory) and publishes the hooks. */
export function runPage(load) {
  let hooks = null;
  const ready = (async () => {
    try {
      hooks = await load(sceneUrl());
      timing.frame = performance.now() - loadStart;
    } catch (e) {
      showError(e);
    }
  })();
  window.fourdgsPage = {
    stats, ready, timing,
    settled: async () => { while (hooks?.adapter.player.fetching) await hooks.adapter.player.fetching; },
    get scene() { return hooks?.adapter.scene; },
    get player() { return hooks?.adapter.player; },
    seek: (t) => hooks.seek(t),
    playFrames: (n) => hooks.playFrames(n),
    usePreviewView: () => hooks.usePreviewView(),
    showExtras: (on) => hooks.showExtras(on),
    rows: () => hooks.rows(),
  };
}
