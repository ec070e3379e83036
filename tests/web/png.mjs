// PNG in and out for the web tests, on node's zlib: 8-bit greyscale, RGB and RGBA,
// non-interlaced (what stb_image_write and Chromium's screenshots write), decoded to RGBA.
import { deflateSync, inflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]);

export function decodePng(bytes) {
  const buf = Buffer.from(bytes);
  if (!buf.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG');
  let at = 8, width = 0, height = 0, depth = 0, type = 0, interlace = 0;
  const idat = [];
  while (at < buf.length) {
    const length = buf.readUInt32BE(at), kind = buf.toString('latin1', at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + length);
    if (kind === 'IHDR') {
      width = data.readUInt32BE(0); height = data.readUInt32BE(4);
      depth = data[8]; type = data[9]; interlace = data[12];
    } else if (kind === 'IDAT') idat.push(data);
    else if (kind === 'IEND') break;
    at += 12 + length;
  }
  const channels = { 0: 1, 2: 3, 6: 4 }[type];
  if (depth !== 8 || !channels || interlace) throw new Error(`PNG type ${type}/${depth}/${interlace} not read here`);
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = new Uint8Array(stride * height);
  for (let y = 0; y < height; ++y) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = pixels.subarray(y * stride, (y + 1) * stride);
    const prev = y ? pixels.subarray((y - 1) * stride, y * stride) : new Uint8Array(stride);
    for (let x = 0; x < stride; ++x) {
      const a = x >= channels ? out[x - channels] : 0, b = prev[x], c = x >= channels ? prev[x - channels] : 0;
      let v = line[x];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      out[x] = v & 255;
    }
  }
  const rgba = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; ++i)
    for (let k = 0; k < 4; ++k)
      rgba[4 * i + k] = k === 3 && channels !== 4 ? 255 : pixels[i * channels + (channels === 1 ? 0 : k)];
  return { width, height, rgba };
}

function crc32(bytes) {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; ++k) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

export function encodePng({ width, height, rgba }) {
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; ++y)
    Buffer.from(rgba.buffer, rgba.byteOffset + y * width * 4, width * 4).copy(raw, y * (width * 4 + 1) + 1);
  const chunk = (kind, data) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(kind, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0); ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; ihdr[9] = 6;
  return Buffer.concat([SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

/** Per-pixel RGB differences of two same-size images: { mean, p99, max, over, litA, litB,
 * litOff } (over: the share of pixels with a channel off by more than `limit`; litOff: of the
 * pixels lit in either image, the share off by more than LIT — what tells a sparse scene's
 * splats in the right places from the same splats moved), and an image of them (×4). */
// A pixel is lit when a channel is over LIT: a blank canvas has none, so a comparison of a sparse
// scene (mostly background) can still tell a drawn canvas from an empty one.
const LIT = 16;

export function compareImages(a, b, limit = 24) {
  if (a.width !== b.width || a.height !== b.height)
    throw new Error(`sizes differ: ${a.width}x${a.height} vs ${b.width}x${b.height}`);
  const n = a.width * a.height, worst = new Uint8Array(n);
  const diff = new Uint8Array(n * 4);
  let sum = 0, over = 0, litA = 0, litB = 0, litEither = 0, litOff = 0;
  const lit = (img, i) => Math.max(img.rgba[4 * i], img.rgba[4 * i + 1], img.rgba[4 * i + 2]) > LIT;
  for (let i = 0; i < n; ++i) {
    const la = lit(a, i), lb = lit(b, i);
    litA += la;
    litB += lb;
    let m = 0;
    for (let k = 0; k < 3; ++k) {
      const d = Math.abs(a.rgba[4 * i + k] - b.rgba[4 * i + k]);
      sum += d;
      m = Math.max(m, d);
      diff[4 * i + k] = Math.min(255, 4 * d);
    }
    diff[4 * i + 3] = 255;
    worst[i] = m;
    if (m > limit) ++over;
    if (la || lb) { ++litEither; if (m > LIT) ++litOff; }
  }
  const sorted = Array.from(worst).sort((x, y) => x - y);
  return { mean: sum / (3 * n), p99: sorted[Math.floor(0.99 * (n - 1))], max: sorted[n - 1],
    over: over / n, litA, litB, litOff: litEither ? litOff / litEither : 0, diff: { width: a.width, height: a.height, rgba: diff } };
}
