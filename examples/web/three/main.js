// A .4dgs scene in a three.js scene with Spark: fourdgs/three keeps one SplatMesh's splats at
// Spark's time; Spark sorts and draws them beside a grid and a mesh of three.js, under three's
// OrbitControls. The controls and test hooks are ../engines.js's.
import { SparkRenderer, utils } from '@sparkjsdev/spark';
import { FourdgsSplatMesh } from 'fourdgs/three';
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { openAdapter, previewView, runPage, startPage } from '../engines.js';

async function load(url) {
  const canvas = document.getElementById('canvas');
  const renderer = new THREE.WebGLRenderer({ canvas, antialias: false });
  renderer.setPixelRatio(1);
  renderer.setSize(canvas.width, canvas.height, false);
  const scene = new THREE.Scene();
  scene.add(new SparkRenderer({ renderer }));

  // The look-ahead: the bytes of the next 3 states, about one second of the showcase scene.
  const splat = await openAdapter(() => FourdgsSplatMesh.load(url, { lookAhead: 3 }));
  scene.add(splat.mesh);
  const view = previewView(splat, 0);
  const camera = new THREE.PerspectiveCamera(view.fovYDeg, canvas.width / canvas.height, 0.01, 1000);
  const controls = new OrbitControls(camera, canvas);
  const place = (v) => {
    camera.position.set(...v.position);
    camera.fov = v.fovYDeg;
    camera.updateProjectionMatrix();
    controls.target.set(...v.target);
    camera.lookAt(...v.target);
  };
  place(view);
  controls.update();

  // three.js's own objects: a grid under the scene and a lit box beside it.
  const info = splat.scene.info, size = Math.hypot(info.aabb[3] - info.aabb[0],
    info.aabb[4] - info.aabb[1], info.aabb[5] - info.aabb[2]) || 1;
  const extras = new THREE.Group();
  const grid = new THREE.GridHelper(size * 1.5, 12, 0x888888, 0x444444);
  grid.position.set((info.aabb[0] + info.aabb[3]) / 2, info.aabb[1] - size / 10, (info.aabb[2] + info.aabb[5]) / 2);
  const box = new THREE.Mesh(new THREE.BoxGeometry(size / 6, size / 6, size / 6),
    new THREE.MeshStandardMaterial({ color: 0x3366cc }));
  box.position.set(info.aabb[3] + size / 4, (info.aabb[1] + info.aabb[4]) / 2, (info.aabb[2] + info.aabb[5]) / 2);
  const light = new THREE.DirectionalLight(0xffffff, 2);
  light.position.set(1, 2, 3);
  extras.add(grid, box, light, new THREE.AmbientLight(0xffffff, 0.4));
  scene.add(extras);

  let frameWaiters = [];
  const draw = () => {
    controls.update();
    renderer.render(scene, camera);
    const waiters = frameWaiters;
    frameWaiters = [];
    waiters.forEach((w) => w());
  };
  renderer.setAnimationLoop(draw);
  const nextFrame = () => new Promise((resolve) => frameWaiters.push(resolve));
  const hooks = startPage(splat, {
    nextFrame,
    setView: (v) => { controls.enabled = !v; place(v ?? view); controls.update(); },
    showExtras: (on) => { extras.visible = on; },
  });
  await nextFrame();
  await nextFrame();
  window.fourdgsPage.renderer = renderer;
  // The benchmark's hooks (engines.test.mjs): the engine's frame loop off or on, and one frame
  // drawn with the time it took to finish (gl.finish: the GPU's work too).
  window.fourdgsPage.engineLoop = (on) => renderer.setAnimationLoop(on ? draw : null);
  window.fourdgsPage.drawOnce = () => {
    const start = performance.now();
    draw();
    renderer.getContext().finish();
    return performance.now() - start;
  };
  window.fourdgsPage.adapter = splat;
  window.fourdgsPage.sparkWords = () => sparkWords(splat);
  return hooks;
}

// The adapter packs Spark's words itself; these are the words Spark's own encoders
// (setPackedSplat, encodeSh*Rgb) write for the shown instant's rows: { rows, words, differing }.
async function sparkWords(splat) {
  const f = await splat.scene.frameAt(splat.frameInfo.shown, { maxShDegree: splat.shDegree });
  const { center: p, scale: s, rotation: q, color: c } = f, encoding = splat.splats.splatEncoding;
  const encoders = [null, utils.encodeSh1Rgb, utils.encodeSh2Rgb, utils.encodeSh3Rgb];
  const arrays = [splat.splats.packedArray, ...[1, 2, 3].slice(0, splat.shDegree)
    .map((b) => splat.splats.extra[`sh${b}`])];
  const perComponent = f.shPerGaussian / 3, coefficients = splat.scene.shCoefficients;
  let words = 0, differing = 0;
  const compare = (own, array, i) => {
    for (let k = 0; k < own.length; ++k, ++words)
      if (own[k] !== array[i * own.length + k]) ++differing;
  };
  for (let i = 0; i < f.count; ++i) {
    const own = new Uint32Array(4);
    utils.setPackedSplat(own, 0, p[3 * i], p[3 * i + 1], p[3 * i + 2], s[3 * i], s[3 * i + 1],
      s[3 * i + 2], q[4 * i], q[4 * i + 1], q[4 * i + 2], q[4 * i + 3], c[4 * i + 3], c[4 * i],
      c[4 * i + 1], c[4 * i + 2], encoding);
    compare(own, arrays[0], i);
    for (let b = 1, first = 0; b <= splat.shDegree; first += 2 * b + 1, ++b) {
      const rgb = new Float32Array(3 * (2 * b + 1)), ownSh = new Uint32Array(b === 1 ? 2 : 4);
      for (let k = 0; k < 2 * b + 1; ++k) {
        for (let ch = 0; ch < 3; ++ch)
          rgb[3 * k + ch] = coefficients[f.sh[i * f.shPerGaussian + ch * perComponent + first + k]];
      }
      encoders[b](ownSh, 0, rgb, encoding);
      compare(ownSh, arrays[b], i);
    }
  }
  return { rows: f.count, words, differing };
}

runPage(load);
