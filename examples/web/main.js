// The page: open a scene by URL (?url=... or the field; without either, DEFAULT_SCENE, the
// bundled showcase scene copied beside the page), play it with the package's Player,
// sort each frame in a worker and draw it with WebGL2 (renderer.js). The camera is the scene's
// own Camera path when it has one, or an orbit camera (drag to turn, wheel to zoom) framing the
// Header's aabb as the CPU preview frames it.
//
// For tests and embedding, window.fourdgsPage exposes: ready (a promise: the first frame drawn
// or the error shown), seek(t) (resolves when the frame at t is on the canvas), playFrames(n)
// (plays until n frames are drawn: { frames, late }), settled() (the look-ahead's fetch done),
// scene and player (the package's objects), stats, and timing (how the scene opened).
import { FourdgsError, open } from 'fourdgs';
import { SplatRenderer } from './renderer.js';
import { framedView, orbitView, usableCamera } from './view.js';

// Opened when the page's address names no scene: examples/data/showcase.4dgs, served beside it.
const DEFAULT_SCENE = 'showcase.4dgs';
const $ = (id) => document.getElementById(id);
const canvas = $('canvas');
const sorter = new Worker(new URL('./sort-worker.js', import.meta.url));
let renderer = null;
let scene = null, player = null;
let orbit = null;
const stats = { framesDrawn: 0, lateFrames: 0, lastLateReason: 'none', error: null };
// How the last scene opened (ms from open() called): opened (the scene's information read), bytes
// (the first instant's bytes held), frame (its frame drawn), and the source's counts (requests,
// round trips, bytes) when the first instant's bytes were held, before any look-ahead.
const timing = { opened: null, bytes: null, frame: null, firstFetch: null };

function showError(e) {
  const text = e instanceof FourdgsError ? `refused: ${e.refusal}\n${e.detail}` : String(e?.message ?? e);
  $('error').textContent = text;
  $('error').hidden = false;
  stats.error = e instanceof FourdgsError ? { refusal: e.refusal, message: e.detail } : { message: text };
  console.warn(`fourdgs: ${text}`);  // a refused file is the page's answer, not a page error
}

function viewAt(t) {
  if ($('camera').value === 'scene' && scene.info.hasCamera) {
    const v = scene.cameraAt(t);
    if (usableCamera(v)) return v;
  }
  return orbitView(orbit);
}

let sortId = 0;
const pendingSorts = new Map();
sorter.onmessage = ({ data: { id, order } }) => { pendingSorts.get(id)?.(order); pendingSorts.delete(id); };
function sortFrame(centers, view) {
  const cam = { eye: view.position, target: view.target };
  const f = [0, 1, 2].map((k) => cam.target[k] - cam.eye[k]);
  const n = Math.hypot(...f);
  const id = ++sortId;
  return new Promise((resolve) => {
    pendingSorts.set(id, resolve);
    sorter.postMessage({ id, centers, eye: cam.eye, forward: f.map((x) => x / n) }, [centers.buffer]);
  });
}

function updateInfo(frame, t) {
  $('time').textContent = `${t.toFixed(3)} s`;
  $('timeline').value = String(t);
  $('info-gaussians').textContent = `${frame ? frame.count : 0} visible of ${scene.info.gaussianCount}`;
  $('info-chunks').textContent = `${scene.chunksFor(t).length} for this instant, ${scene.info.chunkCount} in the file`;
  const s = scene.stats;
  $('info-bytes').textContent = s.requests
    ? `${s.bytesFetched} in ${s.requests} requests (${s.roundTrips} round trips)` : 'all (in memory)';
  $('info-frames').textContent = `${stats.framesDrawn} drawn, ${stats.lateFrames} late`;
}

// One frame: the player's (at the caller's clock, or at t when scrubbing), uploaded at once
// (its views die at the next call), sorted in the worker, drawn.
let busy = false;
async function drawFrame(produce) {
  busy = true;
  try {
    const { frame, info } = produce();
    if (info.late) { ++stats.lateFrames; stats.lastLateReason = info.reason; }
    const view = viewAt(info.shown);
    let centers = new Float32Array(0);
    if (frame) {
      renderer.upload(frame);
      centers = frame.center.slice();
    }
    updateInfo(frame, info.time);
    const order = await sortFrame(centers, view);
    renderer.draw(order, view);
    ++stats.framesDrawn;
    if (info.state === 'ended') setPlaying(false);
    return info;
  } finally { busy = false; }
}

let playing = false, frameWaiters = [];
function setPlaying(on) {
  playing = on;
  $('play').textContent = on ? 'Pause' : 'Play';
  if (on) player.play(); else player.pause();
}

function tick(nowMs) {
  if (player && playing && !busy) {
    drawFrame(() => player.frame(nowMs / 1000)).then((info) => {
      const waiters = frameWaiters;
      frameWaiters = [];
      waiters.forEach((w) => w(info));
    }, (e) => { setPlaying(false); showError(e); });
  }
  requestAnimationFrame(tick);
}

async function seek(t) {
  while (busy) await new Promise((r) => setTimeout(r, 1));
  await player.ready(t);
  return drawFrame(() => player.frameAt(t));
}

async function openScene(url) {
  $('error').hidden = true;
  stats.error = null;
  if (player) { player.close(); scene.close(); player = scene = null; }
  Object.assign(timing, { opened: null, bytes: null, frame: null, firstFetch: null });
  const t0 = performance.now();
  try {
    scene = await open(url);
    timing.opened = performance.now() - t0;
    player = scene.player({ loop: $('loop').checked });
    orbit = framedView(scene.info);
    if (!scene.info.hasCamera) $('camera').value = 'orbit';
    $('info-scene').textContent = `${url.split('/').pop()}: ${scene.info.temporalModel}, ` +
      `${scene.info.durationSec} s, SH degree ${scene.info.shDegree}`;
    $('timeline').max = String(scene.info.durationSec);
    for (const id of ['play', 'timeline']) $(id).disabled = false;
    await player.ready(0);
    timing.bytes = performance.now() - t0;
    timing.firstFetch = scene.stats;
    await seek(0);
    timing.frame = performance.now() - t0;
  } catch (e) {
    showError(e);
  }
}

async function main() {
  try {
    renderer = new SplatRenderer(canvas);
  } catch (e) {
    showError(e);
    return;
  }
  $('play').onclick = () => setPlaying(!playing);
  $('loop').onchange = () => player?.setLoop($('loop').checked);
  $('timeline').oninput = () => { setPlaying(false); seek(Number($('timeline').value)).catch(showError); };
  $('camera').onchange = () => seek(player.position).catch(showError);
  $('open-form').onsubmit = (e) => {
    e.preventDefault();
    const url = $('url').value.trim();
    history.replaceState(null, '', `?url=${encodeURIComponent(url)}`);
    openScene(url);
  };
  let drag = null;
  canvas.onpointerdown = (e) => { drag = [e.clientX, e.clientY]; canvas.setPointerCapture(e.pointerId); };
  canvas.onpointerup = () => { drag = null; };
  canvas.onpointermove = (e) => {
    if (!drag || !orbit) return;
    $('camera').value = 'orbit';
    orbit.yaw -= (e.clientX - drag[0]) * 0.01;
    orbit.pitch = Math.max(-1.5, Math.min(1.5, orbit.pitch + (e.clientY - drag[1]) * 0.01));
    drag = [e.clientX, e.clientY];
    if (!playing) seek(player.position).catch(showError);
  };
  canvas.onwheel = (e) => {
    if (!orbit) return;
    e.preventDefault();
    orbit.distance *= Math.exp(e.deltaY * 0.001);
    if (!playing) seek(player.position).catch(showError);
  };
  requestAnimationFrame(tick);
  const url = new URLSearchParams(location.search).get('url') || DEFAULT_SCENE;
  $('url').value = url;
  await openScene(url);
}

window.fourdgsPage = {
  stats,
  timing,
  ready: main(),
  get scene() { return scene; },
  get player() { return player; },
  seek: (t) => seek(t),
  // Resolves once the player's look-ahead (or catch-up) fetch is done.
  settled: async () => { while (player?.fetching) await player.fetching; },
  playFrames: (n) => new Promise((resolve) => {
    const start = { frames: stats.framesDrawn, late: stats.lateFrames };
    const wait = () => {
      if (stats.framesDrawn - start.frames >= n) {
        setPlaying(false);
        resolve({ frames: stats.framesDrawn - start.frames, late: stats.lateFrames - start.late });
      } else frameWaiters.push(wait);
    };
    setPlaying(true);
    frameWaiters.push(wait);
  }),
};
