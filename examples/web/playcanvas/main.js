// A .4dgs scene in a PlayCanvas app: fourdgs/playcanvas keeps one gsplat entity's splats at the
// app's time; the engine sorts and draws them beside a box and a floor of its own, under the
// engine's orbit camera (CameraControls). The controls and test hooks are ../engines.js's.
import { FourdgsGSplat } from 'fourdgs/playcanvas';
import * as pc from 'playcanvas';
import { CameraControls } from 'playcanvas/scripts/esm/camera-controls.mjs';
import { openAdapter, previewView, runPage, startPage } from '../engines.js';

async function load(url) {
  const canvas = document.getElementById('canvas');
  const device = await pc.createGraphicsDevice(canvas, { deviceTypes: ['webgl2'], antialias: false });
  const app = new pc.AppBase(canvas);
  const options = new pc.AppOptions();
  options.graphicsDevice = device;
  options.componentSystems = [pc.RenderComponentSystem, pc.CameraComponentSystem,
    pc.LightComponentSystem, pc.ScriptComponentSystem, pc.GSplatComponentSystem];
  options.resourceHandlers = [];
  app.init(options);
  app.setCanvasFillMode(pc.FILLMODE_NONE);
  app.setCanvasResolution(pc.RESOLUTION_FIXED, canvas.width, canvas.height);
  app.start();

  // The look-ahead: the bytes of the next 3 states, about one second of the showcase scene.
  const splat = await openAdapter(() => FourdgsGSplat.load(app, url, { lookAhead: 3 }));
  const view = previewView(splat, 0);
  const camera = new pc.Entity('camera');
  camera.addComponent('camera', { clearColor: new pc.Color(0, 0, 0), fov: view.fovYDeg,
    nearClip: 0.01, farClip: 1000, toneMapping: pc.TONEMAP_NONE, gammaCorrection: pc.GAMMA_SRGB });
  camera.addComponent('script');
  app.root.addChild(camera);
  const controls = camera.script.create(CameraControls, { properties: { enableFly: false } });
  const place = (v) => {
    camera.setPosition(...v.position);
    camera.lookAt(...v.target);
    camera.camera.fov = v.fovYDeg;
  };
  const orbit = () => { controls.enabled = true; controls.reset(new pc.Vec3(...view.target), new pc.Vec3(...view.position)); };
  orbit();

  // The engine's own objects: a lit box beside the scene and a floor under it.
  const light = new pc.Entity('light');
  light.addComponent('light', { type: 'directional', intensity: 1.2 });
  light.setEulerAngles(45, 30, 0);
  const info = splat.scene.info, size = Math.hypot(info.aabb[3] - info.aabb[0],
    info.aabb[4] - info.aabb[1], info.aabb[5] - info.aabb[2]) || 1;
  const extras = new pc.Entity('extras');
  const material = (r, g, b) => {
    const m = new pc.StandardMaterial();
    m.diffuse = new pc.Color(r, g, b);
    m.update();
    return m;
  };
  const box = new pc.Entity('box');
  box.addComponent('render', { type: 'box', material: material(0.2, 0.4, 0.8) });
  box.setLocalScale(size / 6, size / 6, size / 6);
  box.setPosition(info.aabb[3] + size / 4, (info.aabb[1] + info.aabb[4]) / 2, (info.aabb[2] + info.aabb[5]) / 2);
  const floor = new pc.Entity('floor');
  floor.addComponent('render', { type: 'plane', material: material(0.15, 0.15, 0.15) });
  floor.setLocalScale(size * 1.5, 1, size * 1.5);
  floor.setPosition((info.aabb[0] + info.aabb[3]) / 2, info.aabb[1] - size / 10, (info.aabb[2] + info.aabb[5]) / 2);
  extras.addChild(box);
  extras.addChild(floor);
  extras.addChild(light);
  app.root.addChild(extras);

  const nextFrame = () => new Promise((resolve) => app.once('frameend', resolve));
  const hooks = startPage(splat, {
    nextFrame,
    setView: (v) => { if (v) { controls.enabled = false; place(v); } else orbit(); },
    showExtras: (on) => { extras.enabled = on; },
  });
  await nextFrame();
  await nextFrame();
  window.fourdgsPage.app = app;
  // The benchmark's hooks (engines.test.mjs): the app's frame loop on or off (the app's own
  // requestAnimationFrame: off, nothing of the engine runs between the benchmark's frames), and
  // one frame drawn with the time it took to finish (gl.finish).
  window.fourdgsPage.engineLoop = (on) => {
    if (on) {
      if (!app.frameRequestId) app.requestAnimationFrame();
    } else {
      cancelAnimationFrame(app.frameRequestId);
      app.frameRequestId = null;
    }
  };
  window.fourdgsPage.drawOnce = () => {
    const start = performance.now();
    app.render();
    app.graphicsDevice.gl.finish();
    return performance.now() - start;
  };
  window.fourdgsPage.adapter = splat;
  return hooks;
}

runPage(load);
