// The whole conformance corpus through WebAssembly (docs/conformance.md, docs/web.md):
//   - the canonical form, computed by the conformance tool's own code compiled to wasm
//     (wasm/canonical_module.cpp), equals the native runner's output byte for byte on both paths,
//     the audio poses included: against the committed expectations (which the native runner
//     reproduces: ctest conformance.*) and, when FOURDGS_NATIVE_CONFORMANCE names the native
//     runner, against what it prints now;
//   - the package's own API (open, frameAt, readAll, stateAt, audioStateAt) gives the values of
//     those documents: the visible state at the six instants, every decoded gaussian, the audio
//     states; and every refusal file is refused with the identifier its expectation names.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import test from 'node:test';

// By name: in the checkout, the package itself (self-reference through package.json's exports);
// in a copy beside an `npm install` of the packed tarball (tests/web/wasm_node_test.sh), the
// installed package.
import { FourdgsError, open } from 'fourdgs';
import { corpusFiles, wasmBuild } from './support.js';

const files = corpusFiles();
// FOURDGS_DECODE_THREADS: the threaded build decodes on that many workers (default 1).
const openOptions = { decodeThreads: Number(process.env.FOURDGS_DECODE_THREADS ?? 1) };

async function canonicalModule() {
  const js = join(wasmBuild, 'wasm', 'fourdgs-canonical.js');
  const { default: create } = await import(pathToFileURL(js));
  const m = await create({ wasmBinary: readFileSync(js.replace(/\.js$/, '.wasm')) });
  // The threaded build's idle pthread pool must not keep this test's process alive (as abi.js).
  for (const w of m.PThread?.unusedWorkers ?? []) w.unref?.();
  return (bytes, indexed) => {
    const data = m._malloc(bytes.length), len = m._malloc(4);
    m.HEAPU8.set(bytes, data);
    const out = m._fourdgs_canonical_json(data, bytes.length, indexed ? 1 : 0, len);
    const text = new TextDecoder().decode(m.HEAPU8.subarray(out, out + m.HEAPU32[len >> 2]));
    m._free(out); m._free(data); m._free(len);
    return text;
  };
}

test('wasm canonical output equals the native runner byte for byte, every file, both paths', async () => {
  const canonical = await canonicalModule();
  const native = process.env.FOURDGS_NATIVE_CONFORMANCE;
  let compared = 0, nativeCompared = 0;
  for (const f of files) {
    const bytes = new Uint8Array(readFileSync(f.file));
    for (const path of ['streamed', 'indexed']) {
      const got = canonical(bytes, path === 'indexed');
      assert.equal(got, f.expected, `${f.kind}/${f.name} --path ${path}`);
      ++compared;
      if (native) {
        const run = spawnSync(native, [f.file, '--path', path], { encoding: 'utf8' });
        assert.equal(run.status, 0, `${native} ${f.file}: ${run.stderr}`);
        assert.equal(got, run.stdout, `${f.kind}/${f.name} --path ${path}: native differs`);
        ++nativeCompared;
      }
    }
  }
  assert.equal(compared, files.length * 2);
  assert.ok(files.length >= 120, `the corpus has ${files.length} files`);
  if (native) assert.equal(nativeCompared, compared);
});

// A canonical number (f32 spelling) or word as the f32 it stands for, as text: "0" for -0.
const f32 = (v) => String(Math.fround(v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v));
const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

// The visible set of an instant as sorted keys, from the document and from a FrameView.
// A visible gaussian whose centre or rotation is beyond float32 (spelled as its f64 in the
// document) has no row in a frame: it is counted in frame.unrepresentable instead.
const representable = (g) => [...g.center, ...g.rotation]
  .every((v) => typeof v === 'number' && Number.isFinite(Math.fround(v)));  // 'nan', 'inf' are strings
function expectedVisible(visible) {
  return visible.filter(representable).map((g) => [g.center, g.scale, g.rotation, g.color].flat().map(f32)
    .concat([g.object_id, g.sh]).join(' ')).sort();
}
function frameVisible(f) {
  const keys = [];
  for (let i = 0; i < f.count; ++i) {
    const v = [...f.center.subarray(3 * i, 3 * i + 3), ...f.scale.subarray(3 * i, 3 * i + 3),
      ...f.rotation.subarray(4 * i, 4 * i + 4), ...f.color.subarray(4 * i, 4 * i + 4)].map(String);
    keys.push(v.concat([f.objectId[i], hex(f.sh.subarray(i * f.shPerGaussian, (i + 1) * f.shPerGaussian))]).join(' '));
  }
  return keys.sort();
}

function expectedState(gaussians) {
  return gaussians.map((g) => [g.position, g.scale, g.rotation, g.color, g.motion].flat().map(f32)
    .concat([g.sigma_t === null ? 'Infinity' : f32(g.sigma_t), g.window_index, g.flags, g.object_id, g.sh])
    .join(' ')).sort();
}
function blockState(b) {
  const keys = [];
  for (let i = 0; i < b.count; ++i) {
    const v = [...b.position.subarray(3 * i, 3 * i + 3), ...b.scale.subarray(3 * i, 3 * i + 3),
      ...b.rotation.subarray(4 * i, 4 * i + 4), ...b.color.subarray(4 * i, 4 * i + 4),
      ...b.motion.subarray(3 * i, 3 * i + 3)].map(String);
    keys.push(v.concat([String(b.sigmaT[i]), b.windowIndex[i], b.flags[i],
      b.objectId ? b.objectId[i] : 0, hex(b.sh.subarray(i * b.shPerGaussian, (i + 1) * b.shPerGaussian))]).join(' '));
  }
  return keys.sort();
}

test('the package API decodes every valid file to its document: instants, gaussians, audio', async () => {
  for (const f of files.filter((x) => x.kind === 'valid')) {
    const doc = JSON.parse(f.expected);
    const scene = await open(new Uint8Array(readFileSync(f.file)), openOptions);
    try {
      assert.equal(scene.info.temporalModel, doc.model, f.name);
      assert.equal(scene.info.gaussianCount, Number(doc.header.gaussian_count), f.name);
      for (const instant of doc.instants) {
        const frame = await scene.frameAt(instant.t);
        assert.deepEqual(frameVisible(frame), expectedVisible(instant.visible), `${f.name} at t=${instant.t}`);
        assert.equal(frame.unrepresentable, instant.visible.filter((g) => !representable(g)).length,
          `${f.name} at t=${instant.t}: unrepresentable`);
      }
      if (doc.model === 'gaussian-birth') {
        assert.deepEqual(blockState(await scene.readAll()), expectedState(doc.gaussians), `${f.name}: readAll`);
      } else {
        for (const s of doc.states) {
          const state = await scene.stateAt(s.chunk.t0);
          assert.deepEqual(blockState(state), expectedState(s.gaussians), `${f.name}: state at ${s.chunk.t0}`);
        }
      }
      for (const a of doc.audio) {
        const index = scene.extras.audioSources.findIndex((s) => s.sourceId === a.source_id);
        assert.ok(index >= 0, `${f.name}: audio source ${a.source_id}`);
        for (const st of a.states) {
          const got = scene.audioStateAt(index, st.t);
          // f64 values: the same numbers exactly (the slerp's acos and sin included).
          assert.deepEqual({ active: got.active, localTime: got.localTime, gain: got.gain,
            position: got.position, rotation: got.rotation },
          { active: st.active, localTime: st.local_time, gain: st.gain,
            position: st.position, rotation: st.rotation }, `${f.name}: audio ${a.source_id} at ${st.t}`);
        }
      }
    } finally { scene.close(); }
  }
});

test('every refusal file is refused through the package with its identifier', async () => {
  let refused = 0;
  for (const f of files.filter((x) => x.kind === 'refusals')) {
    const want = JSON.parse(f.expected).refused;
    let got = null;
    try {
      const scene = await open(new Uint8Array(readFileSync(f.file)), openOptions);
      try {
        if (scene.info.temporalModel === 'gaussian-birth') await scene.readAll();
        else for (const c of scene.extras.chunks) await scene.stateAt(c.t0);
        for (const k of [0, 0.125, 0.25, 0.5, 0.75, 0.999]) await scene.frameAt(k * scene.info.durationSec);
      } finally { scene.close(); }
    } catch (e) {
      assert.ok(e instanceof FourdgsError, `${f.name}: ${e}`);
      got = e.refusal;
    }
    assert.equal(got, want, f.name);
    ++refused;
  }
  assert.ok(refused > 0 && refused === files.filter((x) => x.kind === 'refusals').length,
    `${refused} refusal files`);
});
