// The package's Player (js/src/player.js): each frame's `changed` rows are exact — every row not
// listed is the previous frame's, bit for bit — over play, pause, seek, reverse and loop, for
// both temporal models; each frame is the scene's own frameAt at the instant it shows; lookAhead
// counts the library's states (and the earlier `step` is refused).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { open, play } from 'fourdgs';
import { corpus } from './support.js';

const COLUMNS = ['center', 'scale', 'rotation', 'color', 'objectId', 'source', 'flags', 'sh'];

function copy(frame) {
  const out = { count: frame.count, shPerGaussian: frame.shPerGaussian };
  for (const c of COLUMNS) out[c] = frame[c].slice();
  return out;
}

function rowOf(f, c, k) {
  const per = f[c].length / Math.max(1, f.count);
  return Buffer.from(f[c].buffer, f[c].byteOffset + k * per * f[c].BYTES_PER_ELEMENT,
    per * f[c].BYTES_PER_ELEMENT);
}

for (const name of ['many-chunks', 'kd-chained', 'kd-churn']) {
  test(`player: changed rows are exact over play, pause, seek, reverse and loop (${name})`, async () => {
    const bytes = new Uint8Array(readFileSync(join(corpus, 'valid', `${name}.4dgs`)));
    const scene = await open(bytes);
    const reference = await open(bytes);
    const player = scene.player({ playing: true });
    let now = 10, previous = null, partial = 0, fewer = 0;
    for (let step = 0; step < 120; ++step) {
      if (step === 20) player.pause();
      if (step === 30) { player.play(); player.setRate(2); }
      if (step === 50) player.seek(player.duration * 0.4);
      if (step === 70) player.setRate(-1);
      if (step === 90) { player.setLoop(true); player.setRate(3); }
      const { frame, info } = player.frame(now);
      const got = copy(frame);
      const want = await reference.frameAt(info.shown);
      assert.equal(got.count, want.count);
      for (const c of COLUMNS)
        assert.deepEqual(Buffer.from(got[c].buffer), Buffer.from(want[c].slice().buffer), `${c} at ${info.shown}`);
      assert.ok(info.changed instanceof Uint32Array);
      for (let i = 1; i < info.changed.length; ++i) assert.ok(info.changed[i - 1] < info.changed[i]);
      if (info.allChanged) {
        assert.equal(info.changed.length, 0);
      } else {
        assert.ok(previous && previous.count === got.count);
        assert.deepEqual(Buffer.from(got.source.buffer), Buffer.from(previous.source.buffer));
        const listed = new Set(info.changed);
        for (let k = 0; k < got.count; ++k) {
          if (listed.has(k)) continue;
          for (const c of COLUMNS)
            assert.ok(rowOf(got, c, k).equals(rowOf(previous, c, k)), `row ${k} ${c} not listed`);
        }
        ++partial;
        if (info.changed.length < got.count) ++fewer;
      }
      previous = got;
      now += 1 / 60;
    }
    assert.ok(partial >= 9, `${partial} frames with a changed-row list`);  // the paused ones at least
    assert.ok(fewer >= 9);
    player.close();
    scene.close();
    reference.close();
  });
}

// The library's states in time order (fourdgs_reader_state_span, walked span to span).
function statesOf(scene) {
  const states = [];
  for (let s = scene.stateSpan(0); s.key !== null; s = scene.stateSpan(s.t1)) {
    states.push(s);
    if (!(s.t1 < scene.info.durationSec)) break;
  }
  return states;
}

for (const name of ['many-chunks', 'kd-chained']) {
  test(`player: lookAhead counts states, as the C++ player's look_ahead does (${name})`, async () => {
    const bytes = new Uint8Array(readFileSync(join(corpus, 'valid', `${name}.4dgs`)));
    const scene = await open(new Blob([bytes]));  // read by ranges: the look-ahead fetches
    const states = statesOf(scene), n = states.length;
    assert.ok(n >= 4, `${name} has ${n} states`);
    const keysAt = (instants) => instants.map((at) => scene.stateSpan(at).key);
    const keys = (indices) => indices.map((i) => states[i].key);
    for (const lookAhead of [1, 2, 3, n + 5]) {
      const player = scene.player({ lookAhead });
      for (const i of [0, 1, n - 2, n - 1]) {
        const count = (m) => Math.min(lookAhead, m);
        // Forward, stopping at the end; forward looping, wrapping to the first state; backward.
        assert.deepEqual(keysAt(player.aheadOf(states[i])),
          keys(Array.from({ length: count(n - 1 - i) }, (_, j) => i + 1 + j)),
          `forward from state ${i}, lookAhead ${lookAhead}`);
        player.setLoop(true);
        assert.deepEqual(keysAt(player.aheadOf(states[i])),
          keys(Array.from({ length: count(n - 1) }, (_, j) => (i + 1 + j) % n)),
          `forward looping from state ${i}, lookAhead ${lookAhead}`);
        player.setLoop(false);
        player.setRate(-1);
        assert.deepEqual(keysAt(player.aheadOf(states[i])),
          keys(Array.from({ length: count(i) }, (_, j) => i - 1 - j)),
          `backward from state ${i}, lookAhead ${lookAhead}`);
        player.setRate(1);
      }
      player.close();
    }
    // What a frame sets on its way: the bytes of the states aheadOf names.
    const player = scene.player({ lookAhead: 2 });
    await player.ready(0);
    player.frameAt(0);
    const ahead = player.aheadOf(states[0]);
    assert.equal(ahead.length, 2);
    assert.ok(player.fetching, 'the frame started the look-ahead');
    await player.fetching;
    for (const at of ahead) assert.ok(scene.isReady(at), `the bytes of ${at} are held`);
    player.close();
    scene.close();
  });
}

test('player: the earlier option `step` is refused by name, not read as states', async () => {
  const bytes = new Uint8Array(readFileSync(join(corpus, 'valid', 'many-chunks.4dgs')));
  const scene = await open(bytes);
  const refused = (e) => e instanceof TypeError && e.refusal === 'invalid-option' &&
    /\bstep\b/.test(e.message) && /lookAhead counts states/.test(e.message);
  assert.throws(() => scene.player({ step: 1 / 60, lookAhead: 60 }), refused);
  assert.throws(() => scene.player({ step: 1 / 30 }), refused);
  await assert.rejects(play(bytes, { step: 1 / 60 }), refused);
  scene.player({ lookAhead: 60 }).close();  // lookAhead alone is states, taken as such
  scene.close();
});
