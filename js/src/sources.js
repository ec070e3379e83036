// Byte sources for the WebAssembly library. Its reads are synchronous (read_at), a browser's are
// not: a source holds the bytes it has fetched (RangeCache), serves the library's reads from them,
// and is told beforehand — by the library's own plan (fourdgs_reader_fetch_ranges) — which ranges
// a decode will read, so it fetches them first, together, in one round trip. A read of bytes it
// does not hold fails and names the range (`misses`): the caller fetches it and calls again.
//
// RemoteSource over a URL follows the plan of the native HttpSource (docs/remote.md): opening is
// one round trip (the head and a suffix request at once), a seek one more (the instant's ranges,
// adjacent ones coalesced, the groups concurrent), every later request carries If-Range with the
// pinned validator, and a file that changed is refused as `source-changed`.
import { FourdgsError } from './abi.js';

/** Bytes fetched from a source, by offset: disjoint sorted segments, bounded, least recently
 * used dropped first (the pinned head and tail excepted). */
export class RangeCache {
  constructor(limitBytes = 64 << 20) {
    this.limit = limitBytes;
    this.segments = []; // { start, bytes: Uint8Array, used, pinned }
    this.bytes = 0;
    this.clock = 0;
  }

  find(offset) {  // the segment holding `offset`, or -1
    let lo = 0, hi = this.segments.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1, s = this.segments[mid];
      if (offset < s.start) hi = mid - 1;
      else if (offset >= s.start + s.bytes.length) lo = mid + 1;
      else return mid;
    }
    return -1;
  }

  covers(offset, length) {
    if (length <= 0) return true;
    const i = this.find(offset);
    return i >= 0 && offset + length <= this.segments[i].start + this.segments[i].bytes.length;
  }

  /** Copies [offset, offset + length) into `dest` at `at`; false when not wholly held. */
  read(offset, length, dest, at) {
    const i = this.find(offset);
    if (i < 0) return length <= 0;
    const s = this.segments[i];
    if (offset + length > s.start + s.bytes.length) return false;
    s.used = ++this.clock;
    dest.set(s.bytes.subarray(offset - s.start, offset - s.start + length), at);
    return true;
  }

  add(offset, bytes, pinned = false) {
    if (bytes.length === 0) return;
    let start = offset, end = offset + bytes.length;
    // Merge with every segment that overlaps or touches [start, end).
    const keep = [], merge = [];
    for (const s of this.segments) {
      if (s.start + s.bytes.length < start || s.start > end) keep.push(s);
      else merge.push(s);
    }
    for (const s of merge) {
      start = Math.min(start, s.start);
      end = Math.max(end, s.start + s.bytes.length);
      pinned ||= s.pinned;
    }
    let joined = bytes;
    if (merge.length) {
      joined = new Uint8Array(end - start);
      for (const s of merge) joined.set(s.bytes, s.start - start);
      joined.set(bytes, offset - start);
      for (const s of merge) this.bytes -= s.bytes.length;
    }
    keep.push({ start, bytes: joined, used: ++this.clock, pinned });
    keep.sort((a, b) => a.start - b.start);
    this.segments = keep;
    this.bytes += joined.length;
    this.evict();
  }

  evict() {
    while (this.bytes > this.limit) {
      let victim = -1;
      this.segments.forEach((s, i) => {
        if (!s.pinned && (victim < 0 || s.used < this.segments[victim].used)) victim = i;
      });
      if (victim < 0) return;
      this.bytes -= this.segments[victim].bytes.length;
      this.segments.splice(victim, 1);
    }
  }

  /** The parts of `ranges` not held, sorted, with overlapping and adjacent parts joined. */
  missing(ranges) {
    const out = [];
    for (const { offset, length } of ranges) {
      let at = offset;
      const end = offset + length;
      while (at < end) {
        const i = this.find(at);
        if (i >= 0) { at = this.segments[i].start + this.segments[i].bytes.length; continue; }
        const next = this.segments.find((s) => s.start > at);
        const stop = Math.min(end, next ? next.start : end);
        out.push({ offset: at, length: stop - at });
        at = stop;
      }
    }
    return coalesce(out);
  }

  clear() { this.segments = this.segments.filter((s) => s.pinned); this.bytes = this.segments.reduce((n, s) => n + s.bytes.length, 0); }
}

/** Ranges sorted by offset, overlapping and adjacent ones joined (one request per group). */
export function coalesce(ranges) {
  const sorted = ranges.filter((r) => r.length > 0).sort((a, b) => a.offset - b.offset);
  const out = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.offset <= last.offset + last.length)
      last.length = Math.max(last.length, r.offset + r.length - last.offset);
    else out.push({ offset: r.offset, length: r.length });
  }
  return out;
}

/**
 * A random-access source the library reads through callbacks, fed by a fetcher (a URL, a Blob).
 * `size` is known after open(); `stats` counts what the fetcher did.
 */
export class RemoteSource {
  constructor(fetcher, { cacheBytes = 64 << 20 } = {}) {
    this.fetcher = fetcher;
    this.cache = new RangeCache(cacheBytes);
    this.size = 0;
    this.misses = [];
  }

  get stats() { return { ...this.fetcher.stats, cachedBytes: this.cache.bytes }; }
  get description() { return this.fetcher.description; }

  async open() {
    const { size, pieces } = await this.fetcher.open();
    this.size = size;
    for (const p of pieces) this.cache.add(p.offset, p.bytes, true);
  }

  /** The library's read_at: from the cache, or -1 and the range noted as missed. */
  readInto(offset, length, buffer, heap) {
    const n = Math.max(0, Math.min(length, this.size - offset));
    if (this.cache.read(offset, n, heap, buffer)) return n;
    this.misses.push({ offset, length: n });
    return -1;
  }

  /** Fetches the parts of `ranges` not held: one round trip, one request per contiguous group. */
  async ensure(ranges) {
    const wanted = this.cache.missing(ranges.map((r) => ({
      offset: r.offset, length: Math.max(0, Math.min(r.length, this.size - r.offset)),
    })));
    if (!wanted.length) return 0;
    const pieces = await this.fetcher.fetchRanges(wanted);
    for (const p of pieces) this.cache.add(p.offset, p.bytes);
    return wanted.reduce((n, r) => n + r.length, 0);
  }
}

function httpError(refusal, message) { return new FourdgsError('io', refusal, message); }

// "bytes a-b/size" → { first, last, size }
function contentRange(response) {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(response.headers.get('content-range') ?? '');
  return m ? { first: Number(m[1]), last: Number(m[2]), size: m[3] === '*' ? null : Number(m[3]) } : null;
}

/**
 * A file on a web server by HTTP range requests (fetch()). Options: speculativeBytes (65536: the
 * head and tail fetched by open), wholeBodyLimit (64 MiB: a server that ignores ranges is
 * served from one whole body up to this), maxAttempts (4), backoffMs (50, doubling),
 * fetchInit (extra fetch() options; cache 'no-store' by default, so the counts are the server's).
 */
export class UrlFetcher {
  constructor(url, { speculativeBytes = 65536, wholeBodyLimit = 64 << 20, maxAttempts = 4,
    backoffMs = 50, fetchInit = {} } = {}) {
    this.url = String(url);
    this.speculative = speculativeBytes;
    this.wholeBodyLimit = wholeBodyLimit;
    this.maxAttempts = maxAttempts;
    this.backoffMs = backoffMs;
    this.init = { cache: 'no-store', ...fetchInit };
    this.validator = null;  // ['etag' | 'last-modified', value]
    this.size = null;
    this.stats = { requests: 0, roundTrips: 0, bytesFetched: 0, retries: 0 };
  }

  get description() { return this.url; }

  // One GET with `range` (and If-Range once pinned), retried as HttpSource retries: connection
  // failures, 5xx, 429, 408; never a timeout. Returns { response, body }.
  async request(range) {
    let delay = this.backoffMs;
    for (let attempt = 1; ; ++attempt) {
      const headers = { Range: `bytes=${range}` };
      if (this.validator) headers['If-Range'] = this.validator[1];
      let response, body, failure;
      try {
        ++this.stats.requests;
        response = await fetch(this.url, { ...this.init, headers: { ...this.init.headers, ...headers } });
        if (response.status >= 500 || response.status === 429 || response.status === 408)
          failure = httpError('http-status', `GET ${this.url} (bytes ${range}): HTTP ${response.status}`);
        else body = new Uint8Array(await response.arrayBuffer());
      } catch (e) {
        failure = httpError('http-connection', `GET ${this.url} (bytes ${range}): ${e.message ?? e}`);
      }
      if (!failure) {
        this.stats.bytesFetched += body.length;
        return { response, body };
      }
      if (attempt >= this.maxAttempts) throw failure;
      ++this.stats.retries;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 2000);
    }
  }

  // The pinned validator and size against a response (source-changed on any difference).
  checkSame(response, size) {
    const etag = response.headers.get('etag'), modified = response.headers.get('last-modified');
    const changed = (this.validator?.[0] === 'etag' && etag !== null && etag !== this.validator[1]) ||
      (this.validator?.[0] === 'last-modified' && modified !== null && modified !== this.validator[1]) ||
      (this.size !== null && size !== null && size !== this.size);
    if (changed)
      throw httpError('source-changed', `${this.url} changed since it was opened (ETag ${etag}, ` +
        `Last-Modified ${modified}, size ${size}; opened as ${this.validator?.[1]}, ${this.size} bytes)`);
  }

  /** The head and the tail in one round trip: { size, pieces }. */
  async open() {
    ++this.stats.roundTrips;
    const [head, tail] = await Promise.all([
      this.request(`0-${this.speculative - 1}`), this.request(`-${this.speculative}`)]);
    const pieces = [];
    for (const [i, { response, body }] of [head, tail].entries()) {
      if (response.status === 200) {  // the server ignores ranges: the body is the file
        if (body.length > this.wholeBodyLimit)
          throw httpError('range-not-supported', `${this.url} ignores ranges and is ${body.length} ` +
            `bytes, over the whole-body limit of ${this.wholeBodyLimit}`);
        this.size = body.length;
        this.whole = true;
        return { size: body.length, pieces: [{ offset: 0, bytes: body }] };
      }
      if (response.status !== 206)
        throw httpError('http-status', `GET ${this.url} (bytes ${i ? '-' : '0-'}${this.speculative}` +
          `${i ? '' : ''}): HTTP ${response.status}`);
      const cr = contentRange(response);
      if (!cr) throw httpError('http-bad-response', `${this.url}: a 206 without a Content-Range`);
      if (cr.size === null) throw httpError('unknown-size', `${this.url}: the server names no total size`);
      if (body.length !== cr.last - cr.first + 1)
        throw httpError(body.length < cr.last - cr.first + 1 ? 'http-short-body' : 'http-bad-response',
          `${this.url}: ${body.length} bytes for the range ${cr.first}-${cr.last}`);
      if (!this.validator) {
        const etag = response.headers.get('etag'), modified = response.headers.get('last-modified');
        if (etag && !etag.startsWith('W/')) this.validator = ['etag', etag];
        else if (modified) this.validator = ['last-modified', modified];
        this.size = cr.size;
      } else this.checkSame(response, cr.size);
      pieces.push({ offset: cr.first, bytes: body });
    }
    return { size: this.size, pieces };
  }

  /** Disjoint ranges, fetched concurrently (one round trip). */
  async fetchRanges(ranges) {
    if (this.whole) return [];
    ++this.stats.roundTrips;
    return Promise.all(ranges.map(async ({ offset, length }) => {
      const last = offset + length - 1;
      const { response, body } = await this.request(`${offset}-${last}`);
      if (response.status === 200 || response.status === 412)
        throw httpError('source-changed', `${this.url} changed since it was opened (HTTP ` +
          `${response.status} to If-Range ${this.validator?.[1]})`);
      if (response.status !== 206)
        throw httpError('http-status', `GET ${this.url} (bytes ${offset}-${last}): HTTP ${response.status}`);
      const cr = contentRange(response);
      this.checkSame(response, cr?.size ?? null);
      if (!cr || cr.first !== offset || cr.last !== last)
        throw httpError('http-bad-response', `${this.url}: asked for ${offset}-${last}, got ` +
          `${response.headers.get('content-range')}`);
      if (body.length !== length)
        throw httpError(body.length < length ? 'http-short-body' : 'http-bad-response',
          `${this.url}: ${body.length} bytes for the range ${offset}-${last}`);
      return { offset, bytes: body };
    }));
  }
}

/** A File or Blob, read by slices. */
export class BlobFetcher {
  constructor(blob, { speculativeBytes = 65536 } = {}) {
    this.blob = blob;
    this.speculative = speculativeBytes;
    this.stats = { requests: 0, roundTrips: 0, bytesFetched: 0, retries: 0 };
  }
  get description() { return this.blob.name ?? 'Blob'; }
  async slice(offset, length) {
    ++this.stats.requests;
    const bytes = new Uint8Array(await this.blob.slice(offset, offset + length).arrayBuffer());
    this.stats.bytesFetched += bytes.length;
    return { offset, bytes };
  }
  async open() {
    const size = this.blob.size;
    ++this.stats.roundTrips;
    const head = Math.min(size, this.speculative), tail = Math.max(head, size - this.speculative);
    return { size, pieces: await Promise.all([this.slice(0, head), this.slice(tail, size - tail)]) };
  }
  async fetchRanges(ranges) {
    ++this.stats.roundTrips;
    return Promise.all(ranges.map(({ offset, length }) => this.slice(offset, length)));
  }
}

/** Every chunk of a ReadableStream, joined (the library reads random access once it has them). */
export async function readStream(stream, onProgress) {
  const reader = stream.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.length;
    onProgress?.(total);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.length; }
  return out;
}
