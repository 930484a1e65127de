// End-to-end checks of issue 17 parts 6 and 7 in the app: the planner's replicas on simulated
// P99s (computed in the serving worker, only once the planner is on screen; N meets the
// targets and N − 1 does not; a router change recomputes and reaches the URL), and the pasted
// `vllm bench serve` summary (measured against simulated; "Fit" writes the efficiencies into
// the link; clients in lockstep get the note and a fit that leaves the TTFT alone; a bad paste
// gives a sentence and keeps the last result).

import { readFileSync } from 'node:fs';
import { LAZY_WORKER_FILE } from './harness.mjs';
import { byId, check, openApp, readText, setValue, waitFor } from './app.mjs';

// A small request count keeps the suite quick; a rate high enough that one replica does not
// suffice, so that N − 1 is simulated too.
const SMALL = 'sv_n=400&sv_warm=20';
const SUMMARY = readFileSync(new URL('../tests/fixtures/bench/vllm_bench_summary.txt', import.meta.url), 'utf8');

const workerRequests = (p) => p.requests.filter((r) => LAZY_WORKER_FILE.test(r.url.split('?')[0]));

/** The simulated row of `which` (`avg`, `peak`) once shown: its N and verdicts. */
async function simRow(page, which) {
  return page.evaluate((w) => {
    const tr = document.querySelector(`[data-testid="plan-sim-${w}"]`);
    return tr ? { n: tr.dataset.n, meets: tr.dataset.nMeets, fewer: tr.dataset.fewerMeets, text: tr.innerText } : null;
  }, which);
}

async function summaryAfter(page, before, what) {
  return waitFor(async () => {
    if ((await byId(page, 'plan-sim-summary').count()) === 0) return null;
    if ((await byId(page, 'plan-sim-running').count()) > 0) return null;
    const t = await readText(page, 'plan-sim-summary');
    return t && t !== before ? t : null;
  }, what, 120000, 200);
}

export default function register(runner) {
  runner.test('planner: simulated replicas beside the analytic ones, N meets and N − 1 misses, the router recomputes and reaches the URL', async ({ open, server, screenshot, log }) => {
    const p = await open({ viewport: { width: 1400, height: 1000 } });
    const page = await openApp(p, `${server.url}?gpu=h100-sxm&pl_rate=60&${SMALL}`);
    check(workerRequests(p).length === 0, `the worker loaded before the planner was near: ${JSON.stringify(workerRequests(p))}`);
    check(await byId(page, 'plan-sim-placeholder').count() === 1, 'no placeholder before the planner is reached');
    await page.evaluate(() => document.getElementById('planner-title')?.scrollIntoView());
    await byId(page, 'plan-sim').scrollIntoViewIfNeeded();
    const t0 = Date.now();
    const first = await summaryAfter(page, '', 'the simulated sizing');
    log(`simulated sizing shown after ${Date.now() - t0} ms: ${first}`);
    for (const which of ['avg', 'peak']) {
      const r = await simRow(page, which);
      log(`${which}: ${JSON.stringify(r)}`);
      const n = Number(r.n);
      check(Number.isInteger(n) && n >= 1, `${which}: simulated N ${r.n}`);
      check(r.meets === 'true', `${which}: N = ${n} does not meet the targets: ${r.text}`);
      check(n === 1 ? r.fewer === 'none' : r.fewer === 'false', `${which}: N − 1 verdict ${r.fewer} (N = ${n})`);
    }
    const avg = await simRow(page, 'avg');
    check(Number(avg.n) >= 2, `the rate was meant to need several replicas: N = ${avg.n}`);
    check(/round-robin/.test(first), `the summary does not name the router: ${first}`);
    await screenshot(page, 'planner-simulated', { fullPage: false });

    // Least-loaded: a new job, the summary names it, the URL carries it.
    await setValue(page, 'plan-router', 'least-loaded');
    const second = await summaryAfter(page, first, 'the sizing behind a least-loaded router');
    log(`least-loaded: ${second}`);
    check(/least-loaded/.test(second), `the summary does not follow the router: ${second}`);
    await waitFor(() => page.url().includes('sv_router=least-loaded'), 'sv_router in the URL');
    const files = workerRequests(p).map((r) => r.url.split('/').pop());
    // Once by the page, and at most once more by the service worker (as in serving.test.mjs).
    const wasm = files.filter((f) => f === 'sim_worker_bg.wasm').length;
    check(wasm >= 1 && wasm <= 2, `worker wasm fetched ${wasm} times: ${files}`);
  }, { timeoutMs: 240000 });

  runner.test('serving: a pasted vllm bench serve summary is compared with the simulator, Fit reaches the link, a bad paste keeps the result', async ({ open, server, screenshot, log }) => {
    const p = await open({ viewport: { width: 1400, height: 1000 } });
    const page = await openApp(p, `${server.url}?model=qwen3-8b&gpu=h100-sxm&sv_n=200&sv_warm=10`);
    await byId(page, 'bench').scrollIntoViewIfNeeded();
    // Empty: a sentence, no job.
    await byId(page, 'bench-compare').click();
    await byId(page, 'bench-empty').waitFor({ state: 'visible', timeout: 10000 });
    await setValue(page, 'bench-paste', SUMMARY);
    await byId(page, 'bench-compare').click();
    const row = '[data-testid="bench-row-median_tpot_ms"]';
    await page.locator(row).waitFor({ state: 'visible', timeout: 120000 });
    const cells = async () => page.evaluate((sel) => {
      const tr = document.querySelector(sel);
      const num = (id) => Number(tr?.querySelector(`[data-testid="${id}"]`)?.textContent.replace(/,/g, ''));
      return { measured: num('bench-measured'), simulated: num('bench-simulated'), fitted: num('bench-fitted') };
    }, row);
    const tpot = await cells();
    log(`median TPOT: ${JSON.stringify(tpot)}; setup: ${await readText(page, 'bench-setup')}`);
    check(tpot.measured === 70.23, `measured median TPOT read from the fixture: ${tpot.measured}`);
    check(tpot.simulated > 0 && Number.isFinite(tpot.simulated), `simulated median TPOT: ${tpot.simulated}`);
    const err = (x) => Math.abs(Math.log(x / tpot.measured));
    check(err(tpot.fitted) < 0.05 && err(tpot.fitted) <= err(tpot.simulated), `the fit does not bring TPOT to the measurement: ${JSON.stringify(tpot)}`);
    const stats = await page.locator('[data-testid="bench-table"] tbody tr').count();
    check(stats >= 6, `only ${stats} statistics compared`);
    check(/32 requests/.test(await readText(page, 'bench-setup')), 'the setup sentence lacks the request count');
    await byId(page, 'bench').scrollIntoViewIfNeeded();
    await screenshot(page, 'serving-bench', { fullPage: false });

    // Fit: the efficiencies reach the URL, and the comparison reruns with them.
    await byId(page, 'bench-fit').click();
    await waitFor(() => /[?&]e_[a-z]+=/.test(page.url()), 'fitted efficiencies (e_*) in the URL');
    log(`after Fit: ${page.url().split('?')[1]}`);
    await waitFor(async () => {
      const c = await cells();
      return err(c.simulated) < 0.05 ? c : null;
    }, 'the comparison with the fitted efficiencies', 120000, 200);

    // The same benchmark from 8 clients (4 rounds of alike requests): the simulated clients run
    // in lockstep; the box says so, and the fit leaves the TTFT alone.
    await setValue(page, 'bench-paste', SUMMARY.replace('Maximum request concurrency: 32', 'Maximum request concurrency: 8'));
    await byId(page, 'bench-compare').click();
    const lockNote = await waitFor(async () => {
      if ((await byId(page, 'bench-notes').count()) === 0) return null;
      const t = await readText(page, 'bench-notes');
      return /in step/.test(t) ? t : null;
    }, 'the lockstep note', 120000, 200);
    log(`lockstep: ${lockNote}`);
    check(/8 clients/.test(lockNote) && /2\.4/.test(lockNote), `the lockstep note lacks the clients or the factor: ${lockNote}`);
    await byId(page, 'bench-ttft-not-fitted').waitFor({ state: 'visible', timeout: 10000 });
    check(/TTFT was not fitted/.test(await readText(page, 'bench-ttft-not-fitted')), 'the fit does not say it left the TTFT alone');
    await byId(page, 'bench-notes').scrollIntoViewIfNeeded();
    await screenshot(page, 'serving-bench-lockstep', { fullPage: false });

    // A bad paste: a sentence; the last good result stays.
    const before = await readText(page, 'bench-table');
    await setValue(page, 'bench-paste', 'hello, this is not a benchmark');
    await byId(page, 'bench-compare').click();
    await byId(page, 'bench-error').waitFor({ state: 'visible', timeout: 60000 });
    const sentence = await readText(page, 'bench-error');
    log(`bad paste: ${sentence}`);
    check(/vllm bench serve/.test(sentence), `the sentence does not say what is expected: ${sentence}`);
    check((await readText(page, 'bench-table')) === before, 'the last good comparison was not kept');

    // Refusals beyond a field's range get a sentence too (and stay out of the URL).
    await setValue(page, 'sv-mns', '2.5');
    await byId(page, 'sv-refused').waitFor({ state: 'visible', timeout: 10000 });
    const whole = await readText(page, 'sv-refused');
    await setValue(page, 'sv-warm', '500');
    await waitFor(async () => /warm-up \(500\)/.test(await readText(page, 'sv-refused')), 'the warm-up sentence');
    const warm = await readText(page, 'sv-refused');
    log(`refusals: ${whole} | ${warm}`);
    check(/whole number/.test(whole), `no whole-number sentence: ${whole}`);
    check(!/sv_mns=2\.5|sv_warm=500/.test(page.url()), `a refused value reached the URL: ${page.url()}`);
  }, { timeoutMs: 300000 });
}
