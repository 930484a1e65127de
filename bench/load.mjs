// Cold load to the first answer (issue 18 part 1): how long until the default model's parameter
// count and every default GPU's fit verdict are painted, and how many bytes arrive before that,
// in headless Chromium against the release dist/. Reports only; it fails only if it cannot
// measure at all.
//
//   node bench/load.mjs [--dist DIR] [--runs N] [--encodings gzip,br,identity]
//                       [--profiles loopback,10mbit,cpu4x] [--offline-runs N] [--scroll yes|no]
//                       [--held-runs N] [--locales en-US,ko-KR]
//                       [--paths default,link,ko,theme,embed]
//
// `--paths`: how people arrive (bench/load_common.mjs ENTRY_PATHS): the default page (in every
// `--locales` language), a scenario link, the Korean page by link, a returning visitor with a
// remembered theme, an embedded widget (the other paths in the first language only). Every
// series prints "ANSWER FIRST ON SCREEN": the first frame with the answer, from the static copy
// or the live app, whichever came first, with the bytes that arrived before it, and for the
// paths other than the default one their targets (LINK_TARGETS). `cpu4x` is loopback with
// Chromium's CPU throttling at 4×.
//
// The dist/ is served under the e2e sub-path by a small static server in this script that
// compresses as static hosts do: `Content-Encoding: gzip` (level 9) or `br` (quality 11) for
// text and wasm files when the browser accepts it, `application/wasm` for .wasm. Files are
// compressed once at start, so the server's compression time is not part of a load.
//
// Each cold load: a new browser context (empty cache), HTTP cache disabled (CDP
// Network.setCacheDisabled), service worker blocked, viewport 1400 x 1000, browser language
// (`--locales`, default en-US then ko-KR: index.html carries a prerendered copy per language;
// the page is scrolled through in the first only). Profiles:
// - loopback: no throttling;
// - 10mbit: Chromium's network emulation (CDP Network.emulateNetworkConditions) at 10 Mbit/s
//   down, 5 Mbit/s up, 40 ms latency. It throttles the page's own requests; requests a Web
//   Worker makes itself are not throttled (they come after the first answer in any case).
//
// Two first answers are reported (bench/load_common.mjs's probe): "first answer painted
// (prerendered static copy)", the copy of the default first screen that index.html carries and
// shows before the wasm arrives (scripts/prerender.mjs; null when a page showed none), with the
// bytes that had arrived before it; and "first answer live (computed by the app in the page)",
// the figure of every earlier measurement, with its bytes. Both have the targets beside them.
//
// "First answer": params-total shows a number > 0 and every selected GPU (gpu-selected-<id>)
// has a non-empty, visible verdict-<id> in the fit table. Timed in the page from navigation
// start (performance.now(), whose origin is the navigation's start): an animation-frame loop
// installed before the app starts checks the page every frame; the figure is the task after
// the first frame whose callback saw the answer, i.e. after that frame's layout and paint.
// Also kept: when the DOM first held it (MutationObserver) and that frame's callback time, and
// printed beside it the browser's first contentful paint (its presentation time, raster and
// compositing included; while the page shows nothing before the app mounts, that is the
// answer's own frame reaching the screen, so it can come after the figure above).
//
// Bytes: every response of the load (page and workers), its encoded body bytes (what came over
// the wire, without headers) and when it finished, split into those that finished before the
// first answer and those after: while the page idles (a module loaded after the first paint)
// and, in the first run of each profile, while the page is scrolled through to the bottom (a
// module loaded when its section nears). Files are classified by when they arrived, not by name.
// A file's end is taken from the page's Resource Timing when the page fetched it once (same
// clock as the first answer), else from the request record (a worker's own fetches; that clock
// was seen to differ from the page's by up to ~100 ms on a busy machine: clockDiffMs in the JSON).
//
// What the static copy needs (`--held-runs`, default 3 per encoding, on loopback): on loopback
// every file of the load can end before the copy's frame, so the bytes that "arrived before" it
// count the wasm too. A held load answers what the copy needs: every request but the page itself
// is held at the browser until the copy's answer is painted (10 s at most), so the copy paints
// with the page alone or not at all; the page's encoded bytes are then the bytes it needs. The
// held requests are released afterwards and the live app must still answer.
//
// Offline second visit: service worker allowed, one load, wait until it is active and controls
// the page (its install caches the app), network off, reload: does the first answer appear, how
// fast, and which files the service worker answered.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { SUB_PATH, arg, closeBrowser, launchBrowser, repoPath, sleep, withTimeout } from '../e2e/harness.mjs';
import { ENTRY_PATHS, FIRST_ANSWER_PROBE, LINK_TARGETS, PROFILES, TARGET_BYTES_BROTLI, VIEWPORT, kB, load, loadDist, median, met, msText, printStatic, startStaticServer, staticFigures } from './load_common.mjs';

const distDir = repoPath(arg('dist', 'dist'));
const runs = Math.max(1, Number(arg('runs', '7')));
const encodings = arg('encodings', 'gzip,br').split(',').filter(Boolean);
const profileNames = arg('profiles', 'loopback,10mbit').split(',').filter(Boolean);
const offlineRuns = Math.max(0, Number(arg('offline-runs', '3')));
const scrollThrough = arg('scroll', 'yes') !== 'no';
// Cold loads per encoding with every request but the page held (what the static copy needs).
const heldRuns = Math.max(0, Number(arg('held-runs', '3')));
// Browser languages (navigator.language): the page shows a prerendered copy per language.
const locales = arg('locales', 'en-US,ko-KR').split(',').filter(Boolean);
const localeTag = (locale) => (locale === locales[0] ? '' : `, ${locale}`);
// How people arrive (load_common.mjs ENTRY_PATHS): the default page in every locale above, the
// other paths in the first locale only.
const pathNames = arg('paths', 'default').split(',').filter(Boolean);
const pathTag = (path) => (path === 'default' ? '' : `, ${path}`);


/** Records every request of a context: start, end (epoch ms), encoded body bytes, encoding. */
function recordRequests(context) {
  const list = [];
  const byRequest = new Map();
  let lastActivity = Date.now();
  context.on('request', (req) => {
    const url = req.url();
    if (url.startsWith('data:') || url.startsWith('blob:')) return;
    // `bySw`: the service worker's own request (its network-first attempt), not the page's.
    let bySw = false;
    try {
      bySw = Boolean(req.serviceWorker());
    } catch {
      bySw = false;
    }
    const r = { url, done: false, failed: null, bySw };
    byRequest.set(req, r);
    list.push(r);
    lastActivity = Date.now();
  });
  const finish = async (req, failure) => {
    const r = byRequest.get(req);
    if (!r) return;
    const seenAt = Date.now();
    lastActivity = seenAt;
    try {
      const res = await req.response();
      const t = req.timing();
      r.end = t.responseEnd >= 0 ? t.startTime + t.responseEnd : seenAt;
      if (res) {
        r.status = res.status();
        r.encoding = res.headers()['content-encoding'] || 'identity';
        r.fromServiceWorker = res.fromServiceWorker();
      }
      if (!failure) {
        const s = await req.sizes();
        r.body = s.responseBodySize;
        r.transferred = s.responseBodySize + s.responseHeadersSize;
      }
    } catch (err) {
      r.error = err.message;
    }
    r.failed = failure;
    r.done = true;
  };
  context.on('requestfinished', (req) => finish(req, null));
  context.on('requestfailed', (req) => finish(req, req.failure()?.errorText ?? 'failed'));
  return {
    list,
    /** Waits until nothing has been requested or finished for `quietMs` (at most `maxMs`). */
    async idle(quietMs, maxMs) {
      const deadline = Date.now() + maxMs;
      while (Date.now() < deadline) {
        if (list.every((r) => r.done) && Date.now() - lastActivity >= quietMs) return true;
        await sleep(50);
      }
      return false;
    },
  };
}

/** Waits for the first answer in the page; returns its times (ms from navigation start). */
async function firstAnswer(page, timeoutMs) {
  try {
    await page.waitForFunction(() => window.__firstAnswer && window.__firstAnswer.painted !== null, null, { timeout: timeoutMs, polling: 50 });
  } catch (err) {
    // Say what the page showed instead, so a renamed test id or a broken start is told apart.
    const seen = await page
      .evaluate(() => ({
        params: document.querySelector('[data-testid="params-total"]')?.textContent ?? '(no params-total)',
        verdicts: [...document.querySelectorAll('[data-testid^="verdict-"]')].map((e) => `${e.getAttribute('data-testid')}="${e.textContent.trim()}"`),
        gpus: document.querySelectorAll('[data-testid^="gpu-selected-"]').length,
      }))
      .catch(() => null);
    throw new Error(`no first answer within ${timeoutMs} ms (${err.message.split('\n')[0]}); the page showed ${JSON.stringify(seen)}`);
  }
  return page.evaluate(() => ({
    ...window.__firstAnswer,
    timeOrigin: performance.timeOrigin,
    domContentLoaded: performance.getEntriesByType('navigation')[0]?.domContentLoadedEventEnd ?? null,
  }));
}

/** Scrolls the page to the bottom in screen-sized steps, so sections load as they near. */
async function scrollToBottom(page) {
  await page.evaluate(async () => {
    const step = Math.max(200, window.innerHeight * 0.8);
    for (let y = 0; y < document.documentElement.scrollHeight; y += step) {
      window.scrollTo(0, y);
      await new Promise((r) => setTimeout(r, 150));
    }
    window.scrollTo(0, document.documentElement.scrollHeight);
  });
}

const fileName = (url) => {
  const path = url.split('?')[0];
  return path.includes(SUB_PATH) ? path.slice(path.indexOf(SUB_PATH) + SUB_PATH.length) || '(index)' : path;
};

/** One cold load: new context, cache disabled, service worker blocked. */
async function coldLoad(browser, server, profile, { scroll, locale, path = ENTRY_PATHS.default }) {
  const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1, locale, serviceWorkers: 'block' });
  try {
    if (path.theme) await context.addInitScript((t) => localStorage.setItem('llmcalc-theme', t), path.theme);
    await context.addInitScript(FIRST_ANSWER_PROBE);
    const page = await context.newPage();
    const problems = [];
    page.on('pageerror', (err) => problems.push(`uncaught exception: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
    });
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    if (profile.conditions) await cdp.send('Network.emulateNetworkConditions', profile.conditions);
    if (profile.cpuRate) await cdp.send('Emulation.setCPUThrottlingRate', { rate: profile.cpuRate });
    const rec = recordRequests(context);
    const slow = profile.conditions || profile.cpuRate ? 3 : 1;
    await page.goto(server.url + path.suffix, { waitUntil: 'commit', timeout: 30000 * slow });
    const fa = await firstAnswer(page, 30000 * slow);
    const idleOk = await rec.idle(1500, 15000 * slow);
    const idleCount = rec.list.length;
    // Read after the idle wait: the paint entry is added once the frame was presented.
    const fcp = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null);
    let scrolledOk = null;
    if (scroll) {
      await scrollToBottom(page);
      scrolledOk = await rec.idle(1500, 30000 * slow);
    }
    // When the page itself fetched a file once, its Resource Timing entry gives the end on the
    // page's own clock; other requests (a worker's, a repeated URL) keep the request record's.
    const pageEnds = await page.evaluate(() =>
      [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')].map((e) => [e.name, e.responseEnd]),
    );
    const endOnPage = (url) => {
      const hits = pageEnds.filter(([name]) => name === url);
      return hits.length === 1 && rec.list.filter((r) => r.url === url).length === 1 ? hits[0][1] : null;
    };
    const files = rec.list.map((r, i) => {
      const onPage = endOnPage(r.url);
      const endMs = onPage ?? (r.end !== undefined ? r.end - fa.timeOrigin : null);
      return {
        file: fileName(r.url),
        status: r.status ?? null,
        encoding: r.encoding ?? null,
        body: r.body ?? 0,
        transferred: r.transferred ?? 0,
        endMs,
        clock: onPage !== null ? 'page' : 'request',
        // Request-record clock minus page clock, where both exist.
        clockDiffMs: onPage !== null && r.end !== undefined ? r.end - fa.timeOrigin - onPage : null,
        failed: r.failed,
        phase: endMs !== null && endMs <= fa.painted ? 'before' : i < idleCount ? 'after, idle' : 'after, scrolled',
      };
    });
    const diffs = files.map((f) => f.clockDiffMs).filter((d) => d !== null);
    const beforeEnds = files.filter((f) => f.phase === 'before').map((f) => f.endMs);
    return {
      ...staticFigures(fa, files),
      firstAnswerMs: fa.painted,
      frameMs: fa.frame,
      domMs: fa.dom,
      fcpMs: fcp,
      domContentLoadedMs: fa.domContentLoaded,
      // The last byte the answer waited for; what follows is compiling, starting and rendering.
      lastByteMs: beforeEnds.length ? Math.max(...beforeEnds) : null,
      detail: fa.detail,
      clockCheckMs: diffs.length ? Math.max(...diffs.map(Math.abs)) : null,
      idleReached: idleOk,
      scrolledIdleReached: scrolledOk,
      files,
      problems: [...new Set(problems)],
    };
  } finally {
    await withTimeout(context.close(), 10000, 'closing a browser context').catch(() => {});
  }
}

/**
 * What the static copy needs (on loopback every file can end before the copy's frame, so "bytes
 * arrived before" is what came, not what was needed): a cold load in which every request but the
 * page itself is held at the browser (Playwright route) until the copy's answer is painted, or
 * until `holdMs`. Answers whether the copy paints with the page alone, when, and the page's
 * encoded bytes; then releases the held requests and checks the live app still answers.
 */
async function heldLoad(browser, server, profile, holdMs, locale) {
  const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1, locale, serviceWorkers: 'block' });
  let release;
  const released = new Promise((r) => {
    release = r;
  });
  const held = [];
  try {
    await context.addInitScript(FIRST_ANSWER_PROBE);
    await context.route('**/*', async (route) => {
      const req = route.request();
      if (req.isNavigationRequest() && req.resourceType() === 'document') return route.continue();
      held.push(fileName(req.url()));
      await released;
      return route.continue().catch(() => {});
    });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    if (profile.conditions) await cdp.send('Network.emulateNetworkConditions', profile.conditions);
    const rec = recordRequests(context);
    await page.goto(server.url, { waitUntil: 'commit', timeout: 30000 });
    let staticMs = null;
    try {
      await page.waitForFunction(() => window.__firstAnswer && window.__firstAnswer.staticPainted !== null, null, { timeout: holdMs, polling: 50 });
      staticMs = await page.evaluate(() => window.__firstAnswer.staticPainted);
    } catch {
      staticMs = null;
    }
    // What had been delivered while the rest was held: the page's own response(s).
    const delivered = rec.list.filter((r) => r.done && !r.failed).map((r) => ({ file: fileName(r.url), body: r.body ?? 0, encoding: r.encoding ?? null }));
    const heldBefore = [...new Set(held)];
    release();
    let liveMs = null;
    try {
      liveMs = (await firstAnswer(page, 30000)).painted;
    } catch {
      liveMs = null;
    }
    return { staticMs, delivered, held: heldBefore, liveMs };
  } finally {
    release();
    await withTimeout(context.close(), 10000, 'closing a browser context').catch(() => {});
  }
}

/** Offline second visit: load with the service worker, network off, reload. */
async function offlineVisit(browser, server) {
  const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1, locale: 'en-US', serviceWorkers: 'allow' });
  try {
    await context.addInitScript(FIRST_ANSWER_PROBE);
    const page = await context.newPage();
    server.resetGets();
    await page.goto(server.url, { waitUntil: 'commit', timeout: 30000 });
    const online = await firstAnswer(page, 30000);
    const sw = await withTimeout(
      page.evaluate(async () => {
        if (!('serviceWorker' in navigator)) return { registered: false, controlled: false };
        const reg = await Promise.race([navigator.serviceWorker.ready, new Promise((r) => setTimeout(() => r(null), 15000))]);
        if (!reg) return { registered: false, controlled: false };
        if (!navigator.serviceWorker.controller) {
          await Promise.race([
            new Promise((r) => navigator.serviceWorker.addEventListener('controllerchange', r, { once: true })),
            new Promise((r) => setTimeout(r, 10000)),
          ]);
        }
        let cached = 0;
        for (const name of await caches.keys()) cached += (await (await caches.open(name)).keys()).length;
        return { registered: true, controlled: Boolean(navigator.serviceWorker.controller), cached };
      }),
      30000,
      'the service worker to be ready',
    );
    // The first visit's files the server sent more than once (the page's fetch and the
    // service worker's install each going to the network).
    const repeated = server.repeatedGets();
    const rec = recordRequests(context);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    // The HTTP cache is off: whatever answers offline is the service worker.
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    await context.setOffline(true);
    let offline;
    try {
      await page.reload({ waitUntil: 'commit', timeout: 20000 });
      const fa = await firstAnswer(page, 20000);
      await rec.idle(1000, 10000);
      offline = { answered: true, firstAnswerMs: fa.painted, detail: fa.detail };
    } catch (err) {
      offline = { answered: false, error: err.message.split('\n')[0] };
    }
    await context.setOffline(false);
    const files = rec.list.map((r) => ({ file: fileName(r.url), fromServiceWorker: Boolean(r.fromServiceWorker), bySw: r.bySw, failed: r.failed }));
    return { onlineFirstAnswerMs: online.painted, sw, ...offline, files, repeated };
  } finally {
    await withTimeout(context.close(), 10000, 'closing a browser context').catch(() => {});
  }
}


/** Bytes of a run's files by phase. */
function byPhase(files) {
  const out = {};
  for (const f of files) {
    const p = (out[f.phase] ||= { files: 0, body: 0, transferred: 0 });
    p.files += 1;
    p.body += f.body;
    p.transferred += f.transferred;
  }
  return out;
}

function printFiles(files) {
  for (const f of files) {
    const state = f.failed ? `FAILED ${f.failed}` : `${f.status} ${f.encoding}`;
    console.log(`    ${f.phase.padEnd(16)} ${msText(f.endMs).padStart(8)}  ${kB(f.body).padStart(9)}  ${f.file}  (${state})`);
  }
}

function summarize(encoding, profileName, results, locale, path = 'default') {
  const profile = PROFILES[profileName];
  const times = results.map((r) => r.firstAnswerMs);
  const med = median(times);
  const worst = Math.max(...times);
  const phases = results.map((r) => byPhase(r.files));
  const before = median(phases.map((p) => p.before?.body ?? 0));
  const beforeTransferred = median(phases.map((p) => p.before?.transferred ?? 0));
  const beforeFiles = phases[0].before?.files ?? 0;
  const tag = `bench load: ${encoding}, ${profileName}${localeTag(locale)}${pathTag(path)}:`;
  const staticSummary = printStatic(tag, encoding, profile, results);
  // What a user feels: the first frame with the answer on screen, the static copy's or the live app's.
  const first = results.map((r) => Math.min(r.staticAnswerMs ?? Infinity, r.firstAnswerMs));
  const firstBytes = results.map((r) => (r.staticAnswerMs !== null && r.staticAnswerMs < r.firstAnswerMs ? r.staticBytes : byPhase(r.files).before?.body ?? 0));
  const linkTarget = LINK_TARGETS[profileName];
  // Bytes: only a throttled network tells what the answer waited for; unthrottled, every file
  // that happened to finish before the answer's frame counts (the static copy needs the page alone).
  const bytesMeaningful = Boolean(profile.conditions);
  const bytesNote = bytesMeaningful ? '' : ' (unthrottled network: every file that finished first, not what the answer needed)';
  const targetNote = path === 'default' ? '' : `; link target <= ${linkTarget} ms: ${met(median(first) <= linkTarget)}${encoding === 'br' && bytesMeaningful ? `, bytes <= ${kB(LINK_TARGETS.bytesBrotli)}: ${met(median(firstBytes) <= LINK_TARGETS.bytesBrotli)}` : ''}`;
  console.log(`${tag} ANSWER FIRST ON SCREEN (static copy or live, whichever first) median ${msText(median(first))} (${first.map((t) => t.toFixed(0)).join(', ')}), bytes before it median ${kB(median(firstBytes))}${bytesNote}${targetNote} (reported, not asserted)`);
  console.log(`${tag} first answer live (computed by the app in the page) median ${msText(med)}, worst ${msText(worst)} over ${times.length} cold loads (${times.map((t) => t.toFixed(0)).join(', ')}); target <= ${profile.targetMs} ms: ${met(med <= profile.targetMs)} (reported, not asserted)`);
  console.log(`${tag} first contentful paint median ${msText(median(results.map((r) => r.fcpMs ?? NaN)))}; answer in the DOM median ${msText(median(results.map((r) => r.domMs ?? NaN)))}, in a frame's callback median ${msText(median(results.map((r) => r.frameMs)))}`);
  const lastByte = median(results.map((r) => r.lastByteMs));
  const cpuPart = median(results.map((r) => (r.lastByteMs === null ? null : r.firstAnswerMs - r.lastByteMs)));
  console.log(`${tag} last byte before the answer median ${msText(lastByte)}; from it to the answer median ${msText(cpuPart)} (compile, start, first render: the part a busy CPU inflates)`);
  const brNote = encoding === 'br' ? `; target <= ${kB(TARGET_BYTES_BROTLI)} brotli: ${met(before <= TARGET_BYTES_BROTLI)} (reported, not asserted)` : ' (the 250 kB target is for brotli)';
  console.log(`${tag} bytes before the live first answer ${kB(before)} encoded bodies in ${beforeFiles} file(s), ${kB(beforeTransferred)} with headers${brNote}`);
  for (const phase of ['after, idle', 'after, scrolled']) {
    const p = phases[0][phase];
    if (p) console.log(`${tag} arrived ${phase}: ${kB(p.body)} in ${p.files} file(s) (first run)`);
  }
  const varied = new Set(phases.map((p) => p.before?.body ?? 0)).size > 1;
  if (varied) console.log(`${tag} note: the bytes before the first answer differed between runs (${phases.map((p) => kB(p.before?.body ?? 0)).join(', ')})`);
  return { encoding, locale, path, profile: profileName, label: profile.label, targetMs: profile.targetMs, firstOnScreenMs: median(first), bytesBeforeFirstOnScreen: median(firstBytes), staticAnswer: staticSummary, firstAnswerMs: { median: med, worst, runs: times }, bytesBefore: before, bytesBeforeWithHeaders: beforeTransferred, runs: results };
}

/** Runs `heldRuns` held loads for `encoding` on loopback and prints what the copy needed. */
async function neededByCopy(browser, server, encoding, locale) {
  const tag = `bench load: ${encoding}, loopback${localeTag(locale)}, every request but the page held:`;
  const runsHeld = [];
  for (let i = 0; i < heldRuns; i += 1) runsHeld.push(await withTimeout(heldLoad(browser, server, PROFILES.loopback, 10000, locale), 120000, `held load ${i + 1}`));
  const shown = runsHeld.filter((r) => r.staticMs !== null);
  const bytes = median(shown.map((r) => r.delivered.reduce((n, f) => n + f.body, 0)));
  const first = shown[0] ?? runsHeld[0];
  const brNote = encoding === 'br' ? `; target <= ${kB(TARGET_BYTES_BROTLI)} brotli: ${met(shown.length === runsHeld.length && bytes <= TARGET_BYTES_BROTLI)}` : ' (the 250 kB target is for brotli)';
  if (shown.length === 0) {
    console.log(`${tag} the static copy did NOT paint in ${runsHeld.length} load(s) within 10 s (held: ${first.held.join(', ')})`);
  } else {
    console.log(`${tag} the static copy's answer painted in ${shown.length}/${runsHeld.length} loads, median ${msText(median(shown.map((r) => r.staticMs)))}, with only ${first.delivered.map((f) => `${f.file} (${kB(f.body)} ${f.encoding})`).join(', ')} delivered: the bytes it needs ${kB(bytes)}${brNote} (reported, not asserted)`);
  }
  const live = runsHeld.filter((r) => r.liveMs !== null).length;
  console.log(`${tag} held until then: ${first.held.join(', ') || 'nothing'}; after their release the live app answered in ${live}/${runsHeld.length}`);
  return { encoding, locale, runs: runsHeld.map(({ staticMs, delivered, held, liveMs }) => ({ staticMs, delivered, held, liveMs })), medianStaticMs: median(shown.map((r) => r.staticMs)), bytesNeeded: bytes };
}

let server;
let browser;
let code = 0;
try {
  if (!existsSync(join(distDir, 'index.html'))) throw new Error(`${distDir}/index.html not found: run \`trunk build --release\` first`);
  for (const e of encodings) if (!['gzip', 'br', 'identity'].includes(e)) throw new Error(`unknown encoding ${e} (gzip, br, identity)`);
  for (const p of profileNames) if (!PROFILES[p]) throw new Error(`unknown profile ${p} (${Object.keys(PROFILES).join(', ')})`);
  const loadAtStart = load();
  console.log(`bench load: machine load average ${loadAtStart} on ${cpus().length} CPU(s) at start; timings are noisy on a shared machine (kB = 1000 bytes)`);
  const files = loadDist(distDir);
  const shipped = { files: files.size, raw: 0, gzip: 0, br: 0 };
  for (const f of files.values()) {
    shipped.raw += f.raw.length;
    shipped.gzip += (f.gzip || f.raw).length;
    shipped.br += (f.br || f.raw).length;
  }
  console.log(`bench load: everything shipped in ${distDir}: ${shipped.files} files, ${kB(shipped.raw)} raw, ${kB(shipped.gzip)} gzip, ${kB(shipped.br)} brotli`);
  server = await startStaticServer(files);
  browser = await launchBrowser();
  const summaries = [];
  const needed = [];
  // The default page in every locale (with the held loads), then each other path in the first.
  const series = [
    ...(pathNames.includes('default') ? locales.flatMap((l) => encodings.map((e) => ({ locale: l, encoding: e, path: 'default' }))) : []),
    ...pathNames.filter((p) => p !== 'default').flatMap((p) => encodings.map((e) => ({ locale: locales[0], encoding: e, path: p }))),
  ];
  for (const p of pathNames) if (!ENTRY_PATHS[p]) throw new Error(`unknown path ${p} (${Object.keys(ENTRY_PATHS).join(', ')})`);
  for (const { locale, encoding, path } of series) {
    server.encoding = encoding;
    const entry = ENTRY_PATHS[path];
    for (const profileName of profileNames) {
      const profile = PROFILES[profileName];
      console.log(`bench load: ${encoding}, ${profileName}${localeTag(locale)}${pathTag(path)} (${entry.label}; ${profile.label}, browser language ${locale}): ${runs} cold loads, cache disabled, service worker blocked`);
      const results = [];
      for (let i = 0; i < runs; i += 1) {
        // The page is scrolled through once per encoding and profile, on the default page in the first language.
        const scroll = scrollThrough && i === 0 && locale === locales[0] && path === 'default';
        const r = await withTimeout(coldLoad(browser, server, profile, { scroll, locale, path: entry }), 240000, `cold load ${i + 1}`);
        results.push(r);
        if (i === 0) {
          if (r.staticDetail) console.log(`  static copy's answer: params-total "${r.staticDetail.params}", ${r.staticDetail.verdicts.join('; ')}`);
          console.log(`  live first answer: params-total "${r.detail.params}", ${r.detail.verdicts.join('; ')}`);
          printFiles(r.files);
          if (r.problems.length) console.log(`  page problems: ${r.problems.slice(0, 5).join(' | ')}`);
        }
      }
      summaries.push(summarize(encoding, profileName, results, locale, path));
    }
    if (heldRuns > 0 && path === 'default') needed.push(await neededByCopy(browser, server, encoding, locale));
  }
  const offline = [];
  if (offlineRuns > 0) {
    server.encoding = encodings[0];
    for (let i = 0; i < offlineRuns; i += 1) offline.push(await withTimeout(offlineVisit(browser, server), 120000, `offline visit ${i + 1}`));
    const ok = offline.filter((o) => o.answered);
    const o = offline[0];
    console.log(`bench load: offline second visit (service worker ${o.sw.registered ? 'active' : 'NOT registered'}, controls the page: ${o.sw.controlled}, ${o.sw.cached ?? 0} cached entries): first answer ${ok.length ? `appeared in ${ok.length}/${offline.length} reloads, median ${msText(median(ok.map((x) => x.firstAnswerMs)))}` : `did NOT appear (${o.error})`} (reported, not asserted)`);
    const served = o.files.filter((f) => f.fromServiceWorker).map((f) => f.file);
    // The service worker fetches the unhashed worker and late-module files network-first
    // (public/sw.js): offline that attempt fails by design and the file comes from its cache.
    const attempt = (f) => f.failed && f.bySw && served.includes(f.file);
    const tried = o.files.filter(attempt).map((f) => f.file);
    const failed = o.files.filter((f) => f.failed && !attempt(f)).map((f) => `${f.file} (${f.failed})`);
    console.log(`bench load: offline reload: ${served.length} file(s) from the service worker (${served.join(', ')})${tried.length ? `; its network-first attempts, answered from its cache: ${tried.join(', ')}` : ''}${failed.length ? `; failed: ${failed.join(', ')}` : ''}`);
    // Per visit; index.html is fetched again on purpose (the worker reads the newest page at
    // install), the late module's files when the install runs before the page asked for them.
    const repeats = offline.map((v, i) => `visit ${i + 1}: ${(v.repeated ?? []).length ? (v.repeated ?? []).map(([f, n]) => `${f} ×${n}`).join(', ') : 'every file once'}`);
    console.log(`bench load: first visits with the service worker, files the server sent more than once: ${repeats.join('; ')}`);
  }
  console.log(`bench load: machine load average ${load()} at the end (${loadAtStart} at start)`);
  mkdirSync(repoPath('artifacts'), { recursive: true });
  writeFileSync(
    repoPath('artifacts', 'bench-load.json'),
    JSON.stringify({ dist: distDir, viewport: VIEWPORT, loadavgStart: loadAtStart, loadavgEnd: load(), shipped, targets: { loopbackMs: 300, tenMbitMs: 800, bytesBeforeBrotli: TARGET_BYTES_BROTLI }, results: summaries, neededByStaticCopy: needed, offline }, null, 2),
  );
} catch (err) {
  console.log(`bench load: could not measure: ${err.message}`);
  code = 1;
} finally {
  await closeBrowser(browser);
  if (server) await server.stop();
}
process.exit(code);
