// Where the time of a change goes (a diagnosis tool, not a stage of scripts/test.sh): N changes
// of one input made as bench/paint.mjs makes them, recorded as
// - a Chrome performance trace, summarised per event name on the renderer's main thread with
//   wall time and thread CPU time (`tdur`: not inflated when the machine is busy and the
//   renderer waits for a core), the first line giving the CPU per change of scripting,
//   style, layout, paint and commit; or
// - with --profile, a V8 CPU profile (100 us sampling), summarised per function, inclusive and
//   self. Function names need a wasm with its name section: build one with wasm-bindgen on
//   target/wasm32-unknown-unknown/release/app.wasm and `wasm-opt -Oz -g`, in a copy of dist/
//   (the hashed file names kept, the index's integrity attributes removed).
//
//   node bench/paint_trace.mjs [--dist DIR] [--changes N] [--at charts|top|Y] [--out FILE]
//       [--id TEST_ID --values A,B,C] [--profile] [--brief] [--top N]
import { writeFileSync } from 'node:fs';
import { arg, openPage, repoPath, withServedBrowser } from '../e2e/harness.mjs';
import { openApp } from '../e2e/app.mjs';
import { summariseProfile } from './profile.mjs';
import { rendererMain } from './trace_events.mjs';

const distDir = repoPath(arg('dist', 'dist'));
const changes = Number(arg('changes', '40'));
const at = arg('at', 'charts');
const out = arg('out', '');
const id = arg('id', 'context-len');
const values = (arg('values', '2048,3072,4096,6144,8192,5120')).split(',');

await withServedBrowser(distDir, run);

async function run(browser, server) {
  const p = await openPage(browser, server);
  const page = await openApp(p, server.url);
  await page.evaluate((at) => {
    if (at === 'charts') document.querySelector('[data-testid^="chart-"]')?.scrollIntoView({ block: 'start' });
    else if (at !== 'top') window.scrollTo(0, Number(at));
  }, at);
  await page.waitForTimeout(800);
  const cats = ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing', 'v8.execute'];
  const profile = process.argv.includes('--profile');
  const cdp = profile ? await page.context().newCDPSession(page) : null;
  if (cdp) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
    await cdp.send('Profiler.start');
  } else {
    await browser.startTracing(page, { categories: cats });
  }
  const times = await page.evaluate(async ({ id, values, n }) => {
    const host = document.querySelector(`[data-testid="${id}"]`);
    const el = host.matches('input, select, textarea') ? host : host.querySelector('input:not([type=range]), select, input');
    const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
    const task = () => new Promise((r) => setTimeout(r, 0));
    const ts = [];
    for (let i = 0; i < n; i += 1) {
      await frame();
      await task();
      const v = values[i % values.length];
      ts.push(await new Promise((resolve) => requestAnimationFrame(() => {
        const t0 = performance.now();
        performance.mark('change-start');
        el.value = v;
        el.dispatchEvent(new Event('input', { bubbles: true }));
        el.dispatchEvent(new Event('change', { bubbles: true }));
        performance.mark('change-sync-end');
        const ch = new MessageChannel();
        ch.port1.onmessage = () => resolve(performance.now() - t0);
        ch.port2.postMessage(0);
      })));
    }
    return ts;
  }, { id, values, n: changes });
  if (cdp) {
    const { profile: prof } = await cdp.send('Profiler.stop');
    if (out) writeFileSync(out, JSON.stringify(prof));
    summariseProfile(prof, changes, { unit: 'change', top: Number(arg('top', '45')) });
    return;
  }
  const buf = await browser.stopTracing();
  const trace = JSON.parse(buf.toString());
  if (out) writeFileSync(out, buf);
  const events = trace.traceEvents || trace;
  const main = rendererMain(events);
  const sums = new Map();
  for (const e of events) {
    if (`${e.pid}:${e.tid}` !== main || e.ph !== 'X' || !e.dur) continue;
    const s = sums.get(e.name) || { total: 0, cpu: 0, n: 0, max: 0 };
    s.total += e.dur / 1000; s.cpu += (e.tdur ?? e.dur) / 1000; s.n += 1; s.max = Math.max(s.max, e.dur / 1000);
    sums.set(e.name, s);
  }
  const sorted = [...times].sort((a, b) => a - b);
  console.log(`changes ${changes} at ${at}: median ${sorted[Math.floor(n2(sorted))].toFixed(2)} ms, max ${sorted[sorted.length - 1].toFixed(2)} ms`);
  function n2(s) { return (s.length - 1) / 2; }
  const cpu = (n) => (sums.get(n)?.cpu ?? 0) / changes;
  const keys = ['RunTask', 'FireAnimationFrame', 'EventDispatch', 'TimerFire', 'UpdateLayoutTree', 'Layout', 'PrePaint', 'Paint', 'Layerize', 'Commit'];
  console.log(`cpu ms/change: ${keys.map((k) => `${k} ${cpu(k).toFixed(2)}`).join('  ')}`);
  if (process.argv.includes('--brief')) return;
  for (const [name, s] of [...sums.entries()].sort((a, b) => b[1].total - a[1].total).slice(0, 30)) {
    console.log(`${(s.total / changes).toFixed(3).padStart(8)} ms/change  cpu ${(s.cpu / changes).toFixed(3).padStart(8)}  n/change ${(s.n / changes).toFixed(1).padStart(6)}  max ${s.max.toFixed(2).padStart(7)}  ${name}`);
  }
}
