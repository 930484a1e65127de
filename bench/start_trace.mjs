// Where the time to the first answer goes on a cold load (a diagnosis tool, not a stage of
// scripts/test.sh): N cold loads as bench/load.mjs makes them (new context, HTTP cache disabled,
// service worker blocked, 1400 x 1000, dist/ served with gzip or brotli by the same server), each
// recorded as a Chrome performance trace until the first answer is painted, and split into
// phases on the page's clock (ms from navigation start):
// - network: when index.html, loader.js, the app's JS and its wasm finished arriving (Resource
//   Timing);
// - the named marks of the start (those a dist older than them lacks are left out):
//   `llmcalc:loader` (loader.js runs), `llmcalc:js` (the app's JS
//   imported), `llmcalc:main` (the wasm compiled and instantiated, Rust's main starts),
//   `llmcalc:report` (the first report computed), `llmcalc:mounted` (the whole first screen
//   built), `llmcalc:started`, then the probe's `probe:answer-frame` / `probe:answer-painted`;
// - the wasm compilation events of the trace (V8's `wasm.*` / `v8.wasm.*`, any thread), summed by
//   name with the thread they ran on;
// - the renderer main thread's work between consecutive marks, by kind: script, style, layout,
//   paint (pre-paint, paint, layerize, commit), HTML parsing, GC, other; the rest is idle (waiting
//   for bytes, for a background compile or for a frame).
// Prints each load and the median of each figure over the loads, with the load average.
//
//   node bench/start_trace.mjs [--dist DIR] [--runs N] [--encoding gzip|br|identity]
//                              [--profile loopback|10mbit] [--out FILE] [--names yes]
//                              [--dump FILE (the first load's raw trace and page timings)]
//                              [--tasks yes (the main thread's tasks between the answer's frame
//                              and the probe's painted mark)]
//                              [--cpu-profile yes]
// With --cpu-profile, each load is recorded as a V8 CPU profile (100 µs sampling) instead, from
// the navigation to the painted answer, summarised per function (bench/profile.mjs). Function
// names need a wasm with its name section: `wasm-bindgen --target web` of
// target/wasm32-unknown-unknown/release/app.wasm, then `wasm-opt -Oz -g`, in a copy of dist/
// (hashed name kept, the index's integrity attributes removed).
import { writeFileSync } from 'node:fs';
import { arg, closeBrowser, launchBrowser, repoPath, withTimeout } from '../e2e/harness.mjs';
import { FIRST_ANSWER_PROBE, load, loadDist, median, startStaticServer } from './load_common.mjs';
import { summariseProfile } from './profile.mjs';
import { START_CATEGORIES, rendererMain } from './trace_events.mjs';

const distDir = repoPath(arg('dist', 'dist'));
const runs = Math.max(1, Number(arg('runs', '3')));
const encoding = arg('encoding', 'gzip');
const profileName = arg('profile', 'loopback');
const out = arg('out', '');
const printNames = arg('names', 'no') === 'yes';
const listTasks = arg('tasks', 'no') === 'yes';
const dump = arg('dump', '');
const cpuProfile = arg('cpu-profile', 'no') === 'yes';
const CONDITIONS = {
  loopback: null,
  '10mbit': { offline: false, latency: 40, downloadThroughput: 10e6 / 8, uploadThroughput: 5e6 / 8 },
};

const MARKS = ['llmcalc:loader', 'llmcalc:js', 'llmcalc:main', 'llmcalc:report', 'llmcalc:mounted', 'llmcalc:started', 'probe:answer-frame', 'probe:answer-painted'];
const KIND = [
  ['style', /^(UpdateLayoutTree|RecalculateStyles|ParseAuthorStyleSheet)$/],
  ['layout', /^(Layout|UpdateLayout)$/],
  ['paint', /^(PrePaint|Paint|Layerize|UpdateLayer|Commit|CompositeLayers|PaintImage|Rasterize)$/],
  ['parse HTML', /^ParseHTML$/],
  ['GC', /GC|^V8\.GC|^MinorGC|^MajorGC|BlinkGC/],
  ['wasm compile', /^(v8\.wasm|wasm\.)/],
  ['script', /^(FunctionCall|EvaluateScript|v8\.evaluateModule|v8\.compileModule|v8\.run|v8\.callFunction|RunMicrotasks|TimerFire|FireAnimationFrame|EventDispatch|v8\.compile|V8\.CompileCode)$/],
];
const kindOf = (name) => KIND.find(([, re]) => re.test(name))?.[0] ?? null;

/**
 * The main thread's time between `from` and `to` (trace µs) by kind: each event of a known kind
 * counts its own time, less the known-kind events nested in it (a layout forced from script is
 * layout, not script).
 */
function mainThreadWork(events, main, from, to) {
  const xs = events
    .filter((e) => `${e.pid}:${e.tid}` === main && e.ph === 'X' && e.dur && kindOf(e.name) && e.ts < to && e.ts + e.dur > from)
    .sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const sums = {};
  const stack = [];
  for (const e of xs) {
    while (stack.length && stack[stack.length - 1].ts + stack[stack.length - 1].dur <= e.ts) stack.pop();
    const clip = Math.max(0, Math.min(to, e.ts + e.dur) - Math.max(from, e.ts));
    const k = kindOf(e.name);
    sums[k] = (sums[k] || 0) + clip / 1000;
    const parent = stack[stack.length - 1];
    if (parent) {
      const pk = kindOf(parent.name);
      sums[pk] -= clip / 1000;
    }
    stack.push(e);
  }
  const busy = Object.values(sums).reduce((a, b) => a + b, 0);
  sums.idle = (to - from) / 1000 - busy;
  return sums;
}

async function coldLoad(browser, server) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, deviceScaleFactor: 1, locale: 'en-US', serviceWorkers: 'block' });
  try {
    await context.addInitScript(FIRST_ANSWER_PROBE);
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    if (CONDITIONS[profileName]) await cdp.send('Network.emulateNetworkConditions', CONDITIONS[profileName]);
    if (cpuProfile) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
      await cdp.send('Profiler.start');
    } else {
      await browser.startTracing(page, { categories: START_CATEGORIES });
    }
    await page.goto(server.url, { waitUntil: 'commit', timeout: 60000 });
    await page.waitForFunction(() => window.__firstAnswer && window.__firstAnswer.painted !== null, null, { timeout: 60000, polling: 50 });
    if (cpuProfile) {
      const { profile } = await cdp.send('Profiler.stop');
      return { profile };
    }
    await page.waitForTimeout(300);
    const buf = await browser.stopTracing();
    const page_ = await page.evaluate(() => ({
      marks: Object.fromEntries(performance.getEntriesByType('mark').map((m) => [m.name, m.startTime])),
      files: performance.getEntriesByType('resource').map((e) => ({ name: e.name.split('/').pop(), start: e.startTime, end: e.responseEnd, bytes: e.encodedBodySize })),
      html: performance.getEntriesByType('navigation')[0]?.responseEnd ?? null,
      fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null,
    }));
    const trace = JSON.parse(buf.toString());
    return { page: page_, events: trace.traceEvents || trace };
  } finally {
    await withTimeout(context.close(), 10000, 'closing a browser context').catch(() => {});
  }
}

function analyse({ page, events }) {
  const main = rendererMain(events);
  // The trace clock of the page's clock's zero: from a mark seen on both.
  const anchor = events.find((e) => e.name === 'probe:installed' && e.cat?.includes('blink.user_timing'));
  if (!anchor || page.marks['probe:installed'] === undefined) throw new Error('no probe:installed mark in the trace');
  const zero = anchor.ts - page.marks['probe:installed'] * 1000;
  const ms = (ts) => (ts - zero) / 1000;
  const net = { 'index.html': page.html };
  for (const f of page.files) {
    if (f.name === 'loader.js') net['loader.js'] = f.end;
    else if (/\.js$/.test(f.name) && f.name.startsWith('app')) net['app JS'] = f.end;
    else if (/_bg\.wasm$/.test(f.name) && f.name.startsWith('app')) {
      net['app wasm'] = f.end;
      net['app wasm start'] = f.start;
    }
  }
  const wasm = {};
  for (const e of events) {
    if (!/^(v8\.wasm|wasm\.)/.test(e.name) || e.ph !== 'X' || !e.dur) continue;
    const t = ms(e.ts);
    if (t > (page.marks['probe:answer-painted'] ?? Infinity)) continue;
    const where = `${e.pid}:${e.tid}` === main ? 'main' : 'other';
    const k = `${e.name} (${where})`;
    const w = (wasm[k] ||= { n: 0, ms: 0, first: t, last: t + e.dur / 1000 });
    w.n += 1;
    w.ms += e.dur / 1000;
    w.first = Math.min(w.first, t);
    w.last = Math.max(w.last, t + e.dur / 1000);
  }
  const seen = MARKS.filter((m) => page.marks[m] !== undefined);
  const bounds = [['navigation', 0], ...seen.map((m) => [m, page.marks[m]])];
  const phases = [];
  for (let i = 1; i < bounds.length; i += 1) {
    const [a, ta] = bounds[i - 1];
    const [b, tb] = bounds[i];
    phases.push({ phase: `${a} -> ${b}`, ms: tb - ta, work: mainThreadWork(events, main, zero + ta * 1000, zero + tb * 1000) });
  }
  // With --tasks yes: the main thread's tasks (over 1 ms) between the answer's frame and the
  // probe's painted mark, with what ran in each (the timers, frame callbacks, messages and
  // script evaluations inside it): what the probe's figure may count besides the paint.
  let tasks = null;
  if (listTasks && page.marks['probe:answer-frame'] !== undefined) {
    const from = zero + page.marks['probe:answer-frame'] * 1000;
    const to = zero + (page.marks['probe:answer-painted'] ?? Infinity) * 1000;
    const onMain = events.filter((e) => `${e.pid}:${e.tid}` === main && e.ph === 'X' && e.dur);
    tasks = onMain
      .filter((e) => e.name === 'RunTask' && e.ts + e.dur > from && e.ts < to && e.dur >= 1000)
      .map((t) => {
        const inner = onMain.filter((e) => e !== t && e.ts >= t.ts && e.ts + e.dur <= t.ts + t.dur && /^(TimerFire|FireAnimationFrame|HandlePostMessage|EventDispatch|EvaluateScript|v8\.compileModule|v8\.evaluateModule|FunctionCall|Layout|UpdateLayoutTree|Paint|PrePaint|Layerize|Commit|ResourceReceivedData|ResourceFinish)$/.test(e.name));
        const what = inner.map((e) => `${e.name}${e.args?.data?.type ? `(${e.args.data.type})` : ''}${e.args?.data?.url ? `(${e.args.data.url.split('/').pop()})` : ''} ${f1(e.dur / 1000)}`).slice(0, 12).join(', ');
        return { at: ms(t.ts), ms: t.dur / 1000, what };
      });
  }
  let names = null;
  if (printNames) {
    names = {};
    for (const e of events) if (e.ph === 'X' && e.dur && `${e.pid}:${e.tid}` === main) names[e.name] = (names[e.name] || 0) + e.dur / 1000;
  }
  return { marks: page.marks, net, fcp: page.fcp, wasm, phases, names, tasks };
}

// The page's own marks other than MARKS (e.g. the steps built after the answer: `llmcalc:fill`,
// `llmcalc:below`), by time: whether they ran before the probe's painted mark.
function laterMarks(marks) {
  return Object.entries(marks)
    .filter(([m]) => m.startsWith('llmcalc:') && !MARKS.includes(m))
    .sort((x, y) => x[1] - y[1]);
}

const f1 = (x) => (x === null || x === undefined ? '-' : x.toFixed(1));

function printLoad(i, a) {
  console.log(`bench start: load ${i}: network ends ${Object.entries(a.net).map(([k, v]) => `${k} ${f1(v)}`).join(', ')} ms; FCP ${f1(a.fcp)} ms`);
  console.log(`  marks: ${MARKS.filter((m) => a.marks[m] !== undefined).map((m) => `${m} ${f1(a.marks[m])}`).join(', ')}`);
  const later = laterMarks(a.marks);
  if (later.length) console.log(`  other marks: ${later.map(([m, t]) => `${m} ${f1(t)}`).join(', ')}`);
  if (a.tasks) {
    for (const t of a.tasks) console.log(`  task in the answer's frame..painted: ${f1(t.at)} ms, ${f1(t.ms)} ms: ${t.what}`);
  }
  for (const p of a.phases) {
    const w = Object.entries(p.work).filter(([, v]) => Math.abs(v) >= 0.05).sort((x, y) => y[1] - x[1]).map(([k, v]) => `${k} ${f1(v)}`).join(', ');
    console.log(`  ${p.phase.padEnd(44)} ${f1(p.ms).padStart(7)} ms: ${w}`);
  }
  for (const [k, w] of Object.entries(a.wasm).sort((x, y) => y[1].ms - x[1].ms).slice(0, 12)) {
    console.log(`  wasm: ${k.padEnd(52)} ${String(w.n).padStart(5)}x ${f1(w.ms).padStart(7)} ms, from ${f1(w.first)} to ${f1(w.last)} ms`);
  }
  if (a.names) {
    for (const [k, v] of Object.entries(a.names).sort((x, y) => y[1] - x[1]).slice(0, 40)) console.log(`  name: ${k} ${f1(v)} ms`);
  }
}

let server;
let browser;
try {
  const startLoad = load();
  console.log(`bench start: ${runs} cold loads of ${distDir}, ${encoding}, ${profileName}; load average ${startLoad}`);
  server = await startStaticServer(loadDist(distDir));
  server.encoding = encoding;
  browser = await launchBrowser();
  const all = [];
  for (let i = 1; i <= runs; i += 1) {
    const raw = await withTimeout(coldLoad(browser, server), 180000, `cold load ${i}`);
    if (raw.profile) {
      console.log(`bench start: load ${i}: CPU profile from the navigation to the painted answer`);
      summariseProfile(raw.profile, 1, { unit: 'load', top: 60 });
      continue;
    }
    if (dump && i === 1) writeFileSync(dump, JSON.stringify(raw));
    const a = analyse(raw);
    all.push(a);
    printLoad(i, a);
  }
  if (all.length) {
    console.log(`bench start: medians over ${runs} loads (ms from navigation start):`);
    console.log(`  network ends: ${Object.keys(all[0].net).map((k) => `${k} ${f1(median(all.map((a) => a.net[k])))}`).join(', ')}`);
    console.log(`  marks: ${MARKS.map((m) => `${m} ${f1(median(all.map((a) => a.marks[m])))}`).join(', ')}`);
    for (let p = 0; p < all[0].phases.length; p += 1) {
      const name = all[0].phases[p].phase;
      const same = all.map((a) => a.phases.find((x) => x.phase === name)).filter(Boolean);
      const kinds = [...new Set(same.flatMap((x) => Object.keys(x.work)))];
      const w = kinds.map((k) => [k, median(same.map((x) => x.work[k] ?? 0))]).filter(([, v]) => Math.abs(v) >= 0.05).sort((x, y) => y[1] - x[1]).map(([k, v]) => `${k} ${f1(v)}`).join(', ');
      console.log(`  ${name.padEnd(44)} ${f1(median(same.map((x) => x.ms))).padStart(7)} ms: ${w}`);
    }
  }
  console.log(`bench start: load average ${load()} at the end (${startLoad} at start)`);
  if (out) writeFileSync(out, JSON.stringify(all.map(({ names, ...a }) => a), null, 2));
} finally {
  await closeBrowser(browser);
  if (server) await server.stop();
}
