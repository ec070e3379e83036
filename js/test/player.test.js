// The package's Player (js/src/player.js): each frame's `changed` rows are exact — every row not
// listed is the previous frame's, bit for bit — over play, pause, seek, reverse and loop, for
// both temporal models; and each frame is the scene's own frameAt at the instant it shows.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { open } from 'fourdgs';
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
