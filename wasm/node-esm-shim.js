// Put before the generated ES module (--extern-pre-js, wasm/CMakeLists.txt): emscripten 3.1.6's
// EXPORT_ES6 output still reads CommonJS's __dirname (and require for fs/path) when it runs under
// node, where an ES module has neither. In a browser or worker both stay unused.
const fourdgsOnNode = typeof process === 'object' && typeof process.versions?.node === 'string';
var require = fourdgsOnNode ? (await import('node:module')).createRequire(import.meta.url) : undefined;
var __dirname = fourdgsOnNode ? decodeURIComponent(new URL('.', import.meta.url).pathname) : '';
