// "Serving under load" in the page: how long a sweep takes in the simulator's Web Worker and
// how long the longest main-thread task runs meanwhile, in headless Chromium against the
// release dist/. Reports only (issue 17's targets: a 12-rate x 2,000-request sweep under 1 s,
// no main-thread task over 16 ms during it); it fails only if it cannot measure at all.
//
//   node bench/sim_worker.mjs [--dist DIR] [--runs N]
//
// The page is the default scenario (its compared GPUs, each swept at 12 rates of 2,000
// requests plus one all-at-once run and the chosen-rate run). Figures, from the page's own
// performance entries (src/ui/sim_client.rs):
// - worker start: the section neared -> the worker said it is ready (module fetched, compiled);
// - sweep: job sent -> reply received, parsed and handed to the page, per GPU and in all;
// - longest main-thread task during the sweep: from the end of the task that sent the job to
//   1 s after the reply (PerformanceObserver 'longtask' reports tasks over 50 ms; shorter ones
//   are timed by a task probe that posts a message after every task (setTimeout 0) and records
//   the gaps between them). The task that sends the job is the user's edit (its input event,
//   the page's re-render and the job's serialisation run in it, then the job is posted): it is
//   reported on its own ("the edit's task"), not as part of the sweep. The window starts where
//   the probe next runs after the "sent" mark, so a frame the edit leaves to render after its
//   task still counts as the sweep's. Each job's line says where its longest gap began, in
//   ms from the moment the result was handed over ("shown", the job's measure's end;
//   negative: while the worker ran);
// - the planner's simulated job (the capacity planner's replicas on simulated P99s, its router
//   switched between round-robin and least-loaded for each new job): sent -> shown, and the
//   longest main-thread task meanwhile, the same way.

import { arg, closeBrowser, launchBrowser, openPage, repoPath, startServer, withTimeout } from '../e2e/harness.mjs';
import { openApp } from '../e2e/app.mjs';

const distDir = repoPath(arg('dist', 'dist'));
const runs = Number(arg('runs', '3'));

// Before the app starts: long tasks, and gaps between probe messages (a gap is a task that
// kept the main thread busy).
const INSTRUMENT = () => {
  window.__long = [];
  window.__gaps = [];
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__long.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  } catch {
    // no longtask support: the probe still measures
  }
  const ch = new MessageChannel();
  let last = performance.now();
  ch.port1.onmessage = () => {
    const now = performance.now();
    window.__gaps.push({ start: last, duration: now - last });
    last = now;
    if (window.__gaps.length > 200000) window.__gaps.splice(0, 100000);
    setTimeout(() => ch.port2.postMessage(0), 0);
  };
  ch.port2.postMessage(0);
};

const mid = (xs) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : 0);

const jobs = (page, name = 'llmcalc-sim-job') => page.evaluate((n) => performance.getEntriesByName(n).map((e) => ({ start: e.startTime, duration: e.duration })), name);

async function waitForJobs(page, n, what, name) {
  const deadline = Date.now() + 180000;
  for (;;) {
    const j = await jobs(page, name);
    if (j.length >= n) return j;
    const failed = await page.evaluate(() => document.querySelector('[data-testid="serving-failed"]')?.textContent);
    if (failed) throw new Error(`the worker failed: ${failed}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The longest main-thread task of a job sent at `sent` and shown at `to - 1000`: `edit`, the
 * probe gap holding the "sent" mark (the task of the edit that sent the job); `gap` and
 * `longtask`, the longest gap and long task from the end of that one to `to` (the sweep's).
 */
const longestIn = (page, sent, to) =>
  page.evaluate(({ sent, to }) => {
    const holds = window.__gaps.find((e) => e.start <= sent && e.start + e.duration >= sent);
    const from = holds ? holds.start + holds.duration : sent;
    const overlap = (e) => e.start < to && e.start + e.duration > from;
    const inEdit = (e) => e.start <= sent && e.start + e.duration >= sent;
    const l = window.__long.filter((e) => overlap(e) && !inEdit(e)).map((e) => e.duration);
    // A probe gap includes the timer's own clamping (~4 ms); subtract nothing, report as is.
    const gaps = window.__gaps.filter((e) => e.start >= from && e.start < to);
    const g = gaps.map((e) => e.duration);
    const worst = gaps.find((e) => e.duration === Math.max(...g));
    return {
      edit: holds ? holds.duration : 0,
      longtask: l.length ? Math.max(...l) : 0,
      gap: g.length ? Math.max(...g) : 0,
      // Where the longest gap began, from the job's "shown" (negative: before the reply).
      at: worst ? worst.start - (to - 1000) : 0,
    };
  }, { sent, to });

/** The planner's simulated job: the first on reaching it, then one per router switch. */
async function planner(page) {
  const name = 'llmcalc-sim-job-plan';
  await page.evaluate(() => document.querySelector('[data-testid="plan-sim"]')?.scrollIntoView());
  const first = await waitForJobs(page, 1, 'the first planner job', name);
  let done = first.length;
  const times = [];
  const edits = [];
  let worst = 0;
  for (let i = 1; i <= runs; i += 1) {
    await page.waitForTimeout(1000);
    const router = await page.evaluate(() => {
      const el = document.querySelector('[data-testid="plan-router"]');
      el.value = el.value === 'least-loaded' ? 'round-robin' : 'least-loaded';
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return el.value;
    });
    const all = await waitForJobs(page, done + 1, `planner job ${i}`, name);
    done = all.length;
    const j = all[all.length - 1];
    await page.waitForTimeout(1000);
    const lt = await longestIn(page, j.start, j.start + j.duration + 1000);
    times.push(j.duration);
    worst = Math.max(worst, lt.gap);
    edits.push(lt.edit);
    console.log(`bench sim-worker: planner job ${i} (${router}): ${j.duration.toFixed(0)} ms; longest main-thread task ${lt.gap.toFixed(1)} ms (probe, at ${lt.at >= 0 ? '+' : ''}${lt.at.toFixed(0)} ms from shown), long tasks over 50 ms: ${lt.longtask ? `${lt.longtask.toFixed(1)} ms` : 'none'}; the edit's task (not counted) ${lt.edit.toFixed(1)} ms`);
  }
  const sorted = [...times].sort((a, b) => a - b);
  console.log(`bench sim-worker: median planner job ${sorted[Math.floor(sorted.length / 2)].toFixed(0)} ms; longest main-thread task during them ${worst.toFixed(1)} ms; target <= 16 ms: ${worst <= 16 ? 'met' : 'NOT met'}; the edits' tasks: median ${mid(edits).toFixed(1)} ms, longest ${Math.max(0, ...edits).toFixed(1)} ms (reported, not asserted)`);
}

let server;
let browser;
let code = 0;
try {
  server = await startServer(distDir);
  browser = await launchBrowser();
  const p = await openPage(browser, server, { viewport: { width: 1400, height: 1000 } });
  await p.page.addInitScript(INSTRUMENT);
  const page = await openApp(p, server.url);
  const gpus = await page.evaluate(() => [...document.querySelectorAll('[data-testid^="gpu-selected-"]')].map((e) => e.getAttribute('data-testid').slice(13)));
  await page.evaluate(() => document.getElementById('serving-title')?.scrollIntoView());
  await waitForJobs(page, 1, 'the first sweep');
  const ready = await page.evaluate(() => performance.getEntriesByName('llmcalc-sim-ready').map((e) => e.duration)[0]);
  console.log(`bench sim-worker: ${gpus.length} GPU(s) (${gpus.join(', ')}), 12 rates x 2,000 requests each (+ an all-at-once run and the chosen-rate run per GPU)`);
  console.log(`bench sim-worker: worker start (fetch, compile, ready): ${ready?.toFixed(0)} ms`);
  const times = [];
  const edits = [];
  let worst = { longtask: 0, gap: 0 };
  // Each run changes the warm-up by one request: a new job with the same cost.
  for (let i = 1; i <= runs; i += 1) {
    await page.waitForTimeout(1000);
    await page.evaluate((w) => {
      const el = document.querySelector('[data-testid="sv-warm"]');
      el.value = String(w);
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
    }, 100 + i);
    const all = await waitForJobs(page, 1 + i, `sweep ${i}`);
    const j = all[all.length - 1];
    await page.waitForTimeout(1000);
    const lt = await longestIn(page, j.start, j.start + j.duration + 1000);
    times.push(j.duration);
    edits.push(lt.edit);
    worst = { longtask: Math.max(worst.longtask, lt.longtask), gap: Math.max(worst.gap, lt.gap) };
    console.log(`bench sim-worker: sweep ${i}: ${j.duration.toFixed(0)} ms (${(j.duration / Math.max(gpus.length, 1)).toFixed(0)} ms per GPU); longest main-thread task ${lt.gap.toFixed(1)} ms (probe, at ${lt.at >= 0 ? '+' : ''}${lt.at.toFixed(0)} ms from shown), long tasks over 50 ms: ${lt.longtask ? `${lt.longtask.toFixed(1)} ms` : 'none'}; the edit's task (not counted) ${lt.edit.toFixed(1)} ms`);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  const perGpu = median / Math.max(gpus.length, 1);
  console.log(`bench sim-worker: median sweep ${median.toFixed(0)} ms for ${gpus.length} GPU(s), ${perGpu.toFixed(0)} ms per GPU's 12 x 2,000 sweep; target < 1000 ms per sweep: ${perGpu < 1000 ? 'met' : 'NOT met'} (reported, not asserted)`);
  console.log(`bench sim-worker: longest main-thread task during the sweeps ${worst.gap.toFixed(1)} ms; target <= 16 ms: ${worst.gap <= 16 ? 'met' : 'NOT met'}; the edits' tasks: median ${mid(edits).toFixed(1)} ms, longest ${Math.max(0, ...edits).toFixed(1)} ms (reported, not asserted)`);
  await planner(page);
} catch (err) {
  console.log(`bench sim-worker: could not measure: ${err.message}`);
  code = 1;
} finally {
  if (browser) await withTimeout(closeBrowser(browser), 20000, 'closing the browser').catch(() => {});
  if (server) await server.stop();
}
process.exit(code);
