// Sorts a frame's gaussians back to front for the renderer, off the main thread: view depth
// z = (centre − eye) · forward, farthest first, equal depths in input order (a stable sort, as
// render_preview's), by two 16-bit passes of a least-significant-digit radix sort on the f32
// depth's bits. Message in: { id, centers: Float32Array (3 per gaussian), eye, forward };
// message out: { id, order: Uint32Array }, both buffers transferred.
let counts = new Uint32Array(65536);

self.onmessage = ({ data: { id, centers, eye, forward } }) => {
  const n = centers.length / 3;
  const depth = new Float32Array(n);
  const bits = new Uint32Array(depth.buffer);
  for (let i = 0; i < n; ++i)
    depth[i] = (centers[3 * i] - eye[0]) * forward[0] + (centers[3 * i + 1] - eye[1]) * forward[1] +
      (centers[3 * i + 2] - eye[2]) * forward[2];
  // Descending depth as ascending unsigned keys: the float's order made unsigned, then inverted.
  const keys = new Uint32Array(n);
  for (let i = 0; i < n; ++i) {
    const b = bits[i];
    keys[i] = ~(b & 0x80000000 ? ~b : b | 0x80000000) >>> 0;
  }
  let order = new Uint32Array(n), scratch = new Uint32Array(n);
  for (let i = 0; i < n; ++i) order[i] = i;
  for (const shift of [0, 16]) {
    counts.fill(0);
    for (let i = 0; i < n; ++i) ++counts[(keys[order[i]] >>> shift) & 0xffff];
    let sum = 0;
    for (let k = 0; k < 65536; ++k) { const c = counts[k]; counts[k] = sum; sum += c; }
    for (let i = 0; i < n; ++i) scratch[counts[(keys[order[i]] >>> shift) & 0xffff]++] = order[i];
    [order, scratch] = [scratch, order];
  }
  self.postMessage({ id, order }, [order.buffer]);
};
