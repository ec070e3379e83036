// What the package's tests share: where the repository, the corpus and the build are.
//
// The tests run from js/test in the checkout or from the package assembled in the WebAssembly
// build (build-wasm/js/test, the `npm-package` target). FOURDGS_SOURCE_DIR and FOURDGS_WASM_BUILD
// (set by ctest) say where the checkout and the build are; without them both are found by
// walking up from here.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

function upward(test) {
  for (let dir = here; ; dir = dirname(dir)) {
    if (test(dir)) return dir;
    if (dirname(dir) === dir) return null;
  }
}

export const sourceDir = process.env.FOURDGS_SOURCE_DIR ??
  upward((d) => existsSync(join(d, 'conformance', 'corpus', 'SHA256SUMS')));
export const wasmBuild = process.env.FOURDGS_WASM_BUILD ??
  [join(sourceDir, 'build-wasm')].concat(upward((d) => existsSync(join(d, 'wasm', 'fourdgs-canonical.js'))) ?? [])
    .find((d) => existsSync(join(d, 'wasm', 'fourdgs-canonical.js')));
export const corpus = join(sourceDir, 'conformance', 'corpus');

/** [{ name, kind: 'valid' | 'refusals', file, expected }] for every corpus file. */
export function corpusFiles() {
  const out = [];
  for (const kind of ['valid', 'refusals'])
    for (const f of readdirSync(join(corpus, kind)).sort())
      if (f.endsWith('.4dgs')) {
        const file = join(corpus, kind, f);
        out.push({ name: f.slice(0, -5), kind, file,
          expected: readFileSync(file.replace(/\.4dgs$/, '.expected.json'), 'utf8') });
      }
  return out;
}

export const dataDir = join(sourceDir, 'tests', 'data');
export function bytesOf(file) { return new Uint8Array(readFileSync(resolve(file))); }
