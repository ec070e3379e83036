// What the web player fetches, as nginx saw it (issue 27's browser numbers; docs/web.md): a
// multi-chunk scene opened by URL through the fault proxy, every request answered `delay` ms late
// so that a round trip is long enough to count, every request logged by nginx (harness.py
// --access-log). Against the reader's own figures (fetchRanges / fetchCost / chunksFor, read
// through the package in the page):
//   - time to first frame: the first instant's bytes are held after two round trips (the head
//     and the tail at once, while the module loads; then the instant's ranges at once), not
//     three, and nginx served exactly those requests: the head, the tail and the instant's
//     ranges not already held, 2 x speculative + at most fetchCost(0) bytes;
//   - a seek: one round trip, and nginx served the seek's ranges not already held plus at most
//     the player's declared look-ahead (the ranges of the instants it fetches ahead, within its
//     byte budget): at most fetchCost(t) + that look-ahead.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

// nginx's log (harness.py's format): method, uri, status, body bytes, "Range".
function logLines(accessLog, uri, from) {
  return readFileSync(accessLog, 'utf8').slice(from).split('\n').filter(Boolean).map((line) => {
    const m = /^(\S+) (\S+) (\d+) (\d+) "(.*)"$/.exec(line);
    assert.ok(m, `an access log line: ${line}`);
    return { method: m[1], uri: m[2], status: Number(m[3]), bytes: Number(m[4]), range: m[5] };
  }).filter((l) => l.uri === uri);
}
const logSize = (accessLog) => readFileSync(accessLog).length;

// A Range header of the form the package sends → { offset, length } in a file of `size` bytes.
function rangeOf(header, size) {
  let m = /^bytes=(\d+)-(\d+)$/.exec(header);
  if (m) return { offset: Number(m[1]), length: Number(m[2]) - Number(m[1]) + 1 };
  m = /^bytes=-(\d+)$/.exec(header);
  assert.ok(m, `a Range header the package sends: ${header}`);
  const n = Math.min(Number(m[1]), size);
  return { offset: size - n, length: n };
}

// Sorted, joined ranges; `minus` the parts covered by `held`.
function coalesce(ranges) {
  const out = [];
  for (const r of [...ranges].filter((x) => x.length > 0).sort((a, b) => a.offset - b.offset)) {
    const last = out[out.length - 1];
    if (last && r.offset <= last.offset + last.length)
      last.length = Math.max(last.length, r.offset + r.length - last.offset);
    else out.push({ ...r });
  }
  return out;
}
function minus(ranges, held) {
  const out = [];
  for (const r of coalesce(ranges)) {
    let at = r.offset;
    const end = r.offset + r.length;
    for (const h of coalesce(held)) {
      if (h.offset + h.length <= at || h.offset >= end) continue;
      if (h.offset > at) out.push({ offset: at, length: h.offset - at });
      at = Math.max(at, h.offset + h.length);
    }
    if (at < end) out.push({ offset: at, length: end - at });
  }
  return coalesce(out);
}
const total = (ranges) => ranges.reduce((n, r) => n + r.length, 0);
const within = (r, set) => set.some((s) => r.offset >= s.offset && r.offset + r.length <= s.offset + s.length);
const key = (r) => `${r.offset}+${r.length}`;

// The instant t's ranges and the player's look-ahead from t, in the page: the ranges of the
// instants it fetches after the state shown at t (player.aheadOf: one in each of the next
// `lookAhead` states).
async function plan(page, t) {
  return page.evaluate(`(() => {
    const { scene, player } = window.fourdgsPage;
    const ahead = player.aheadOf(scene.stateSpan(${t})).flatMap((at) => scene.fetchRanges(at));
    return { ranges: scene.fetchRanges(${t}), cost: scene.fetchCost(${t}),
      chunks: scene.chunksFor(${t}), ahead, byteBudget: player.ahead.byteBudget };
  })()`);
}

/**
 * Opens `sceneName` (in the site folder) in the page (`pagePath` in the site folder: the web
 * player's, or an engine page's, which names the scene as ../sceneName) through the proxy with
 * `delayMs` per request and checks the first frame and a seek to `seekT` against nginx's access
 * log. Returns figures for the test's output.
 */
export async function checkNetwork({ browser, pageReady, proxy, sceneName, size, accessLog,
  delayMs, seekT, pagePath = 'index.html', timed = true }) {
  // timed false (an engine page): the requests and bytes are asserted, the wall-clock round trips
  // only printed: the engine draws on the page's thread (SwiftShader: the CPU) between a
  // response and its handling.
  const inTime = (ok, message) => {
    if (timed) assert.ok(ok, message);
    else if (!ok) console.log(`  (not asserted) ${message}`);
  };
  const uri = `/site/${sceneName}`;
  const page = await browser.newPage();
  const mark = logSize(accessLog);
  const up = '../'.repeat(pagePath.split('/').length - 1);
  await page.navigate(`${proxy}/fault/delay=${delayMs}/site/${pagePath}?url=${up}${sceneName}`);
  await pageReady(page);
  assert.equal(await page.evaluate('JSON.stringify(window.fourdgsPage.stats.error)'), 'null',
    `${sceneName} opens through the proxy`);
  await page.evaluate('window.fourdgsPage.settled()');
  const timing = await page.evaluate('window.fourdgsPage.timing');
  const chunkCount = await page.evaluate('window.fourdgsPage.scene.info.chunkCount');
  assert.ok(chunkCount > 2, `${sceneName} has several chunks (${chunkCount})`);

  // Open + first frame.
  const first = logLines(accessLog, uri, mark);
  assert.ok(first.length >= 2, 'the head and the tail were fetched');
  const [tail, head] = first.slice(0, 2).map((l) => l.range).sort();  // "bytes=-N" sorts first
  const speculative = rangeOf(tail, size).length;
  assert.deepEqual([head, tail], [`bytes=0-${speculative - 1}`, `bytes=-${speculative}`],
    'opening asks for the head and the tail (the first two requests)');
  assert.ok(speculative <= 65536, `the speculative head and tail are at most 64 KiB (${speculative})`);
  const opened = [rangeOf(head, size), rangeOf(tail, size)];
  const p0 = await plan(page, 0);
  const instant0 = minus(p0.ranges, opened);
  const instantLines = first.slice(2, 2 + instant0.length);
  assert.deepEqual(instantLines.map((l) => key(rangeOf(l.range, size))).sort(),
    instant0.map(key).sort(), 'then the first instant\'s ranges not already held, at once');
  const firstBytes = total(first.slice(0, 2 + instant0.length).map((l) => ({ length: l.bytes })));
  assert.equal(firstBytes, 2 * speculative + total(instant0), 'nginx sent those bytes');
  assert.ok(firstBytes <= 2 * speculative + p0.cost,
    `open + first frame: ${firstBytes} bytes <= 2 x ${speculative} + fetchCost(0) = ${p0.cost}`);
  assert.deepEqual({ requests: timing.firstFetch.requests, roundTrips: timing.firstFetch.roundTrips,
    bytes: timing.firstFetch.bytesFetched },
  { requests: 2 + instant0.length, roundTrips: 2, bytes: firstBytes },
  'the page held the first instant after 2 round trips, with nothing else fetched');
  // Anything after: the look-ahead from t = 0, within what it declares.
  const after0 = minus(p0.ahead, [...opened, ...p0.ranges]);
  for (const l of first.slice(2 + instant0.length))
    assert.ok(within(rangeOf(l.range, size), after0), `a look-ahead request from t = 0: ${l.range}`);
  // Two round trips of delayMs each: the first instant's bytes are held after 2 and before 3.
  inTime(timing.bytes >= 2 * delayMs && timing.bytes < 3 * delayMs,
    `the first instant's bytes held after ${timing.bytes.toFixed(0)} ms: 2 round trips of ` +
    `${delayMs} ms, not 3`);

  // A seek whose look-ahead reaches into the next chunk.
  const heldBefore = coalesce([...opened, ...first.map((l) => rangeOf(l.range, size))]);
  const ps = await plan(page, seekT);
  const seekMark = logSize(accessLog);
  const seek = await page.evaluate(`(async () => {
    const p = window.fourdgsPage;
    const s0 = p.scene.stats, t0 = performance.now();
    await p.player.ready(${seekT});
    const bytesMs = performance.now() - t0, s1 = p.scene.stats;
    await p.seek(${seekT});
    const frameMs = performance.now() - t0;
    await p.settled();
    return { s0, s1, bytesMs, frameMs };
  })()`);
  const lines = logLines(accessLog, uri, seekMark);
  const seekMissing = minus(ps.ranges, heldBefore);
  assert.ok(seekMissing.length > 0, `t = ${seekT} needs bytes not held yet`);
  assert.deepEqual(lines.slice(0, seekMissing.length).map((l) => key(rangeOf(l.range, size))).sort(),
    seekMissing.map(key).sort(), `the seek to ${seekT} asks for its ranges not held, at once`);
  assert.equal(seek.s1.roundTrips - seek.s0.roundTrips, 1, 'the seek\'s bytes in one round trip');
  const aheadDeclared = minus(ps.ahead, [...heldBefore, ...ps.ranges]);
  const aheadBound = Math.min(total(aheadDeclared), ps.byteBudget);
  assert.ok(aheadBound > 0, `the look-ahead from ${seekT} reaches a chunk not held`);
  const aheadLines = lines.slice(seekMissing.length);
  for (const l of aheadLines)
    assert.ok(within(rangeOf(l.range, size), aheadDeclared), `a look-ahead request: ${l.range}`);
  const seekBytes = total(lines.map((l) => ({ length: l.bytes })));
  assert.ok(seekBytes <= ps.cost + aheadBound,
    `the seek fetched ${seekBytes} bytes <= fetchCost(${seekT}) ${ps.cost} + the declared ` +
    `look-ahead ${aheadBound}`);
  inTime(seek.bytesMs < 2 * delayMs, `the seek's bytes held after ${seek.bytesMs.toFixed(0)} ms: ` +
    `one round trip of ${delayMs} ms`);
  assert.deepEqual(page.errors, [], 'the console has no error');
  return {
    speculative, firstRequests: 2 + instant0.length, firstBytes, cost0: p0.cost,
    chunks0: p0.chunks.length, firstBytesMs: timing.bytes, firstFrameMs: timing.frame,
    openedMs: timing.opened, seekRequests: lines.length, seekOwnRequests: seekMissing.length,
    seekBytes, seekCost: ps.cost, seekChunks: ps.chunks.length, aheadBound,
    aheadFetched: total(aheadLines.map((l) => ({ length: l.bytes }))), seekBytesMs: seek.bytesMs,
    seekFrameMs: seek.frameMs,
  };
}
