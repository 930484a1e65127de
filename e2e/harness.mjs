// End-to-end harness: serves a built `dist/` under a sub-path with Python's static server,
// drives Debian's headless Chromium through playwright-core, records console errors and every
// network request, and runs tests with one line each and a final `N passed, N failed`.
//
// Nothing here downloads anything: the browser is /usr/bin/chromium (scripts/setup.sh installs
// it), and Chromium's own background traffic is switched off by flags.

import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

/** Where the app is mounted on the test server: a sub-path, as on a course's static host. */
export const SUB_PATH = '/course/chapter-3/llm-calculator/';

/** Chromium executable (Debian package `chromium`). */
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Flags that keep Chromium quiet on a machine with no internet (no background requests). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-domain-reliability',
  '--metrics-recording-only',
  '--no-default-browser-check',
];

/** Resolves after `ms` milliseconds. */
/** The serving simulator's worker files (src/ui/sim_client.rs), loaded when its section nears. */
export const LAZY_WORKER_FILE = /\/sim_worker(?:_loader)?\.js$|\/sim_worker_bg\.wasm$/;
/** A scenario link's first-answer module (crates/first/src/main.rs): asked for at the start, it may
 * finish after load. */
export const FIRST_ANSWER_FILE = /\/first(?:_bg)?\.(?:js|wasm)$/;

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Rejects with `what timed out` if `promise` has not settled within `ms` milliseconds. */
export function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Copies `distDir` to a fresh temp dir under SUB_PATH and serves the temp root with
 * `python3 -m http.server` on 127.0.0.1 (a free port picked by the OS).
 * Returns `{ origin, url, root, stop() }`; `url` is the app's address (ending in SUB_PATH).
 */
export async function startServer(distDir) {
  if (!existsSync(join(distDir, 'index.html'))) {
    throw new Error(`${distDir}/index.html not found: run \`trunk build --release\` first`);
  }
  const root = mkdtempSync(join(tmpdir(), 'llmcalc-e2e-'));
  const appDir = join(root, ...SUB_PATH.split('/').filter(Boolean));
  mkdirSync(appDir, { recursive: true });
  cpSync(distDir, appDir, { recursive: true });
  // A page at the server root that is NOT the app: a request that escapes the sub-path hits
  // a 404 instead of silently working.
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>not the app</title>');

  const proc = spawn('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', root], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const port = await withTimeout(
    new Promise((resolvePort, reject) => {
      const onData = (chunk) => {
        output += chunk.toString();
        const m = output.match(/port (\d+)/);
        if (m) resolvePort(Number(m[1]));
      };
      proc.stdout.on('data', onData);
      proc.stderr.on('data', onData);
      proc.on('exit', (code) => reject(new Error(`http.server exited (${code}): ${output}`)));
      proc.on('error', reject);
    }),
    15000,
    'starting python3 -m http.server',
  );
  // Keep draining its request log so the pipe never fills up and blocks the server.
  proc.stdout.on('data', () => {});
  proc.stderr.on('data', () => {});
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    url: origin + SUB_PATH,
    root,
    async stop() {
      await killProcess(proc);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Sends SIGTERM, then SIGKILL after 3 s if the process is still alive. */
export async function killProcess(proc) {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  const done = await Promise.race([exited.then(() => true), sleep(3000).then(() => false)]);
  if (!done) {
    proc.kill('SIGKILL');
    await Promise.race([exited, sleep(2000)]);
  }
}

/**
 * Launches headless Chromium. playwright-core gives every launch a fresh, empty
 * --user-data-dir of its own (and removes it on close).
 */
export async function launchBrowser() {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} not found: run scripts/setup.sh (apt-get install chromium chromium-driver)`);
  }
  return withTimeout(
    chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 60000 }),
    70000,
    'launching Chromium',
  );
}

/** Closes the browser, giving up (and killing it) after 10 s. */
export async function closeBrowser(browser) {
  if (!browser) return;
  try {
    await withTimeout(browser.close(), 10000, 'closing Chromium');
  } catch (err) {
    console.error(`warning: ${err.message}`);
  }
}

/**
 * Serves `distDir`, starts the browser, runs `fn(browser, server)` and closes both, however
 * `fn` ends (the opening of the diagnosis tools in bench/).
 */
export async function withServedBrowser(distDir, fn) {
  const server = await startServer(distDir);
  const browser = await launchBrowser();
  try {
    return await fn(browser, server);
  } finally {
    await closeBrowser(browser);
    await server.stop();
  }
}

/**
 * Opens a new isolated context + page with recording:
 * - `problems`: console errors, uncaught exceptions, failed requests, requests that leave the
 *   origin or the sub-path, and any request made after `markLoaded()`.
 * - `requests`: every request URL with the time it was made.
 * Returns `{ context, page, problems, requests, markLoaded }`.
 */
export async function openPage(browser, server, { viewport = { width: 1280, height: 900 } } = {}) {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1, locale: 'en-US' });
  context.setDefaultTimeout(15000);
  context.setDefaultNavigationTimeout(30000);
  const page = await context.newPage();
  const problems = [];
  const requests = [];
  let loaded = false;
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`uncaught exception: ${err.message}`));
  page.on('crash', () => problems.push('the page crashed'));
  context.on('request', (req) => {
    const url = req.url();
    if (url.startsWith('data:') || url.startsWith('blob:')) return;
    // A new document in the main frame (goto, reload) starts a new first load; the test
    // calls markLoaded() again once the app is up.
    if (req.isNavigationRequest() && req.frame() === page.mainFrame()) loaded = false;
    requests.push({ url, afterLoad: loaded });
    // Files that may arrive after load, from the sub-path only: the serving simulator's worker
    // (started when its section nears the screen) and a link's first-answer module.
    const path = url.split('?')[0];
    const mayComeLate = LAZY_WORKER_FILE.test(path) || FIRST_ANSWER_FILE.test(path);
    if (loaded && !mayComeLate) problems.push(`network request after load: ${req.method()} ${url}`);
    if (!url.startsWith(server.url)) problems.push(`request outside ${SUB_PATH}: ${url}`);
  });
  context.on('requestfailed', (req) => {
    const url = req.url();
    if (url.startsWith('data:') || url.startsWith('blob:')) return;
    problems.push(`request failed: ${url} (${req.failure()?.errorText ?? 'unknown'})`);
  });
  context.on('response', (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()} for ${res.url()}`);
  });
  return {
    context,
    page,
    problems,
    requests,
    /** From now on, any request is a failure ("no request after the first load"). */
    markLoaded() {
      loaded = true;
    },
  };
}

/**
 * Saves a PNG of the whole page (what Playwright's `fullPage` screenshot takes: the document's
 * full size from the top, captured beyond the viewport) with Chromium's encoder set for speed:
 * about half the time of Playwright's on the 16,000 px tall page, for a somewhat larger file.
 */
export async function fullPageShot(page, file, timeoutMs = 15000) {
  const size = await page.evaluate(() => {
    const b = document.body;
    const d = document.documentElement;
    return {
      width: Math.max(b?.scrollWidth ?? 0, d.scrollWidth, b?.offsetWidth ?? 0, d.offsetWidth, b?.clientWidth ?? 0, d.clientWidth),
      height: Math.max(b?.scrollHeight ?? 0, d.scrollHeight, b?.offsetHeight ?? 0, d.offsetHeight, b?.clientHeight ?? 0, d.clientHeight),
      viewport: { width: window.innerWidth, height: window.innerHeight },
    };
  });
  const cdp = await page.context().newCDPSession(page);
  try {
    const fits = size.width <= size.viewport.width && size.height <= size.viewport.height;
    const { data } = await withTimeout(
      cdp.send('Page.captureScreenshot', {
        format: 'png',
        optimizeForSpeed: true,
        captureBeyondViewport: !fits,
        clip: { x: 0, y: 0, width: size.width, height: size.height, scale: 1 },
      }),
      timeoutMs,
      'a full-page screenshot',
    );
    writeFileSync(file, Buffer.from(data, 'base64'));
  } finally {
    await cdp.detach().catch(() => {});
  }
}

/**
 * Collects tests and runs them two at a time (E2E_JOBS, default 2: one per core here), each with
 * its own pages and a timeout. A test registered from a file that exports `alone = true` (those
 * that time frames or layout shifts) runs with no other test in flight. Each test's lines are
 * printed together when it ends, numbered in registration order.
 *
 * Order: the alone tests first (nothing else is in flight yet, so none waits for lanes to
 * drain), then those registered with `long: true` (the few that take 20 s or more), then the
 * rest, so that no long test ends the run with the other lane idle.
 */
export class Runner {
  constructor({ artifactsDir, jobs = Number(process.env.E2E_JOBS || 2) }) {
    this.tests = [];
    /** When set (the app did not start at all), every test fails at once with this reason. */
    this.blocked = null;
    this.artifactsDir = artifactsDir;
    this.screenshotsDir = join(artifactsDir, 'screenshots');
    this.jobs = Math.max(1, Math.floor(jobs) || 1);
    /** Set by run.mjs while a file registers its tests: whether they must run alone. */
    this.fileAlone = false;
    mkdirSync(this.screenshotsDir, { recursive: true });
  }

  /** Registers a test: `fn(ctx)` gets `{ browser, server, screenshot, open, log }`. `long`
   * marks one that takes 20 s or more, started early (see the class comment). */
  test(name, fn, { timeoutMs = 120000, alone = this.fileAlone, long = false } = {}) {
    this.tests.push({ name, fn, timeoutMs, alone, long, index: this.tests.length + 1 });
  }

  /** Runs every test (or those whose name contains `filter`); returns `{ passed, failed }`. */
  async run({ browser, server, filter }) {
    const counts = { passed: 0, failed: 0 };
    const chosen = this.tests.filter((t) => !filter || t.name.includes(filter));
    const rank = (t) => (t.alone ? 0 : t.long ? 1 : 2);
    const selected = [...chosen].sort((a, b) => rank(a) - rank(b) || a.index - b.index);
    const running = new Set();
    for (const t of selected) {
      const limit = t.alone ? 1 : this.jobs;
      // An alone test waits for every other to end; any test waits for a free lane.
      while (running.size >= limit || (running.size > 0 && [...running].some((r) => r.alone))) {
        await Promise.race([...running].map((r) => r.done));
      }
      const entry = { alone: t.alone };
      entry.done = this.runOne(t, t.index, { browser, server }, counts).finally(() => running.delete(entry));
      running.add(entry);
    }
    await Promise.all([...running].map((r) => r.done));
    return counts;
  }

  /** Runs one test and prints its lines; adds it to `counts`. */
  async runOne(t, index, { browser, server }, counts) {
    const started = Date.now();
    const pages = [];
    const lines = [];
    let shot = 0;
    const slug = t.name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
    const ctx = {
      browser,
      server,
      log: (line) => lines.push(`    ${line}`),
      /** Opens a recorded page (closed and checked for problems when the test ends). */
      open: async (opts) => {
        const p = await openPage(browser, server, opts);
        pages.push(p);
        return p;
      },
      /** Saves a full-page screenshot as artifacts/screenshots/<test>-<n>-<step>.png
       * (`{ fullPage: false }`: what the window shows, for sticky and scrolled views). */
      screenshot: async (page, step, { fullPage = true } = {}) => {
        shot += 1;
        const file = join(
          this.screenshotsDir,
          `${String(index).padStart(2, '0')}-${slug}-${shot}-${step}.png`,
        );
        if (fullPage) await fullPageShot(page, file);
        else await page.screenshot({ path: file, fullPage, timeout: 15000 });
        return file;
      },
    };
    let error = null;
    try {
      if (this.blocked) throw new Error(this.blocked);
      await withTimeout(Promise.resolve().then(() => t.fn(ctx)), t.timeoutMs, `test "${t.name}"`);
    } catch (err) {
      error = err;
    }
    const problems = [...new Set(pages.flatMap((p) => p.problems))];
    if (problems.length > 0) {
      const list = `${problems.length} problem(s) while the page ran:\n      ${problems.slice(0, 10).join('\n      ')}`;
      error = error ? new Error(`${error.message}\n${list}`) : new Error(list);
    }
    if (error) {
      for (const p of pages) {
        try {
          await ctx.screenshot(p.page, 'failure');
        } catch {
          // the page may be gone; the failure message matters more
        }
      }
    }
    for (const p of pages) {
      try {
        await withTimeout(p.context.close(), 10000, 'closing a browser context');
      } catch {
        // closing the browser later cleans up anyway
      }
    }
    const ms = Date.now() - started;
    if (error) {
      counts.failed += 1;
      const message = String(error.message || error).split('\n').join('\n      ');
      lines.push(`not ok ${index} - ${t.name} (${ms} ms)\n      ${message}`);
    } else {
      counts.passed += 1;
      lines.push(`ok ${index} - ${t.name} (${ms} ms)`);
    }
    console.log(lines.join('\n'));
  }
}

/** Absolute path from the repository root (this file lives in e2e/). */
/** The value after `--name` on the command line (benchmarks' flags), or `fallback`. */
export function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

export function repoPath(...parts) {
  return resolve(new URL('..', import.meta.url).pathname, ...parts);
}
