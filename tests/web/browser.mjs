// Headless Debian Chromium for the web tests, driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: JSON messages separated by NUL on fds 3 and 4), so the tests need no
// npm package and no WebSocket. The browser runs in its own temporary profile, WebGL2 through
// SwiftShader, with nothing reaching out to the network; close() stops it by its process id.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM = process.env.FOURDGS_CHROMIUM ?? '/usr/bin/chromium';

export async function launch({ width = 800, height = 900 } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'fourdgs-chromium-'));
  const args = ['--headless', '--no-sandbox', '--remote-debugging-pipe',
    '--enable-unsafe-swiftshader', '--use-angle=swiftshader', '--ignore-gpu-blocklist',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--disable-default-apps', '--disable-extensions', '--disable-quic', '--no-first-run',
    '--no-default-browser-check', '--mute-audio', '--disable-features=Translate,MediaRouter',
    '--disable-background-timer-throttling', '--disable-renderer-backgrounding',
    `--window-size=${width},${height}`, `--user-data-dir=${profile}`, 'about:blank'];
  const proc = spawn(CHROMIUM, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr = (stderr + d).slice(-20000); });
  const browser = new Browser(proc, profile, () => stderr);
  await browser.send('Target.setDiscoverTargets', { discover: true });
  return browser;
}

/** The web tests' end: runs `body`, closes `browser`, and exits 0, or 1 after printing what
 * `body` threw. */
export async function runThenExit(browser, body) {
  let failed = false;
  try {
    await body();
  } catch (e) {
    failed = true;
    console.error(e);
  } finally {
    await browser.close();
  }
  process.exit(failed ? 1 : 0);
}

class Browser {
  constructor(proc, profile, stderr) {
    this.proc = proc;
    this.profile = profile;
    this.stderr = stderr;
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = [];
    let buffered = '';
    proc.stdio[4].on('data', (chunk) => {
      buffered += chunk.toString('utf8');
      let end;
      while ((end = buffered.indexOf('\0')) >= 0) {
        const message = JSON.parse(buffered.slice(0, end));
        buffered = buffered.slice(end + 1);
        if (message.id !== undefined && this.pending.has(message.id)) {
          const { resolve, reject, method } = this.pending.get(message.id);
          this.pending.delete(message.id);
          if (message.error) reject(new Error(`${method}: ${message.error.message}`));
          else resolve(message.result);
        } else for (const l of this.listeners) l(message);
      }
    });
    this.exited = new Promise((resolve) => proc.on('exit', resolve));
    this.exited.then(() => {
      for (const { reject, method } of this.pending.values())
        reject(new Error(`${method}: chromium exited\n${this.stderr()}`));
      this.pending.clear();
    });
  }

  send(method, params = {}, sessionId = undefined) {
    const id = this.nextId++;
    const message = { id, method, params };
    if (sessionId) message.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      this.proc.stdio[3].write(JSON.stringify(message) + '\0');
    });
  }

  on(listener) { this.listeners.push(listener); }

  /** A new tab, attached: { session, send(method, params), events } with its console collected. */
  async newPage({ width = 640, height = 480 } = {}) {
    const { targetId } = await this.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.send('Target.attachToTarget', { targetId, flatten: true });
    const page = {
      session: sessionId,
      console: [],   // { level, text }
      errors: [],    // uncaught exceptions and console.error, as text
      send: (method, params) => this.send(method, params, sessionId),
    };
    this.on((m) => {
      if (m.sessionId !== sessionId) return;
      if (m.method === 'Runtime.consoleAPICalled') {
        const text = m.params.args.map((a) => a.value ?? a.description ?? '').join(' ');
        page.console.push({ level: m.params.type, text });
        if (m.params.type === 'error' || m.params.type === 'assert') page.errors.push(text);
      } else if (m.method === 'Runtime.exceptionThrown') {
        const d = m.params.exceptionDetails;
        page.errors.push(d.exception?.description ?? d.text);
      } else if (m.method === 'Log.entryAdded' && m.params.entry.level === 'error') {
        page.errors.push(`${m.params.entry.source}: ${m.params.entry.text} ${m.params.entry.url ?? ''}`);
      }
    });
    await page.send('Runtime.enable');
    await page.send('Log.enable');
    await page.send('Page.enable');
    await page.send('Emulation.setDeviceMetricsOverride', { width: 800, height: 900,
      deviceScaleFactor: 1, mobile: false });
    void width; void height;
    page.evaluate = async (expression) => {
      const r = await page.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
      if (r.exceptionDetails)
        throw new Error(`${expression}: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
      return r.result.value;
    };
    page.navigate = async (url) => {
      const loaded = new Promise((resolve) => this.on((m) => {
        if (m.sessionId === sessionId && m.method === 'Page.loadEventFired') resolve();
      }));
      await page.send('Page.navigate', { url });
      // A page whose load event never comes (a hung subresource) is answered by the caller's
      // own readiness check, not by waiting here for ever.
      await Promise.race([loaded, new Promise((r) => setTimeout(r, 20000))]);
    };
    return page;
  }

  async close() {
    try {
      await Promise.race([this.send('Browser.close'), new Promise((r) => setTimeout(r, 5000))]);
    } catch { /* it may already be gone */ }
    const timer = setTimeout(() => { try { process.kill(this.proc.pid, 'SIGKILL'); } catch {} }, 5000);
    if (this.proc.exitCode === null) await this.exited;
    clearTimeout(timer);
    // The browser's helper processes may still be writing the profile for a moment after the
    // main one exits (ENOTEMPTY): retried.
    rmSync(this.profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  }
}
