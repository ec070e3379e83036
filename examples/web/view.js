// The views the pages share with `4dgs preview`: its framing of a scene without a usable Camera,
// an orbit camera around it, and whether a Camera sample can be used (main.js, and the engine
// pages in playcanvas/ and three/).

// The preview's framing when the scene has no usable Camera: from +z, the aabb's bounding sphere
// filling a 50° vertical field of view.
export function framedView(info) {
  const b = info.aabb;
  const usable = b.some((v) => v !== 0) && [0, 1, 2].every((k) => Number.isFinite(b[k]) &&
    Number.isFinite(b[k + 3]) && b[k + 3] >= b[k]);
  const lo = usable ? b.slice(0, 3) : [0, 0, 0], hi = usable ? b.slice(3) : [0, 0, 0];
  const centre = [0, 1, 2].map((k) => (lo[k] + hi[k]) / 2);
  let radius = Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]) / 2;
  if (!(radius > 0)) radius = 1;
  const distance = radius / Math.sin(50 * Math.PI / 360);
  return { target: centre, distance, yaw: 0, pitch: 0, fovYDeg: 50 };
}

export function orbitView(o) {
  const cp = Math.cos(o.pitch);
  const dir = [Math.sin(o.yaw) * cp, Math.sin(o.pitch), Math.cos(o.yaw) * cp];
  return { position: o.target.map((c, k) => c + o.distance * dir[k]), target: o.target, fovYDeg: o.fovYDeg };
}

export function usableCamera(v) {
  const finite = (p) => p.every(Number.isFinite);
  return finite(v.position) && finite(v.target) && v.position.some((c, k) => c !== v.target[k]) &&
    v.fovYDeg > 0 && v.fovYDeg < 180;
}
