// Layout work of a cold start (a diagnosis tool, not a stage of scripts/test.sh): N fresh loads
// of the release dist/ at 1400 x 1000, each recorded as a Chrome performance trace from the
// navigation until the app has mounted and the late module settled (plus --wait ms), and the
// renderer main thread's `Layout` events summed in two groups:
// - forced: a layout inside script (a `FunctionCall`, `EvaluateScript`, `v8.callFunction`,
//   `RunMicrotasks`, `TimerFire`, `FireAnimationFrame`, `EventDispatch` … around it): script read
//   a layout value (clientWidth, getBoundingClientRect …) while the layout was stale;
// - frame: the rest, the browser's own layout of a frame.
// The first answer's time is the page's own (bench/load.mjs's figure needs its own server;
// this tool only counts layouts). Wall time of a busy machine: compare A and B alternately.
//
//   node bench/layout_trace.mjs [--dist DIR] [--runs N] [--wait MS]
import { arg, closeBrowser, launchBrowser, openPage, repoPath, startServer } from '../e2e/harness.mjs';
import { lateSettled } from '../e2e/app.mjs';
import { rendererMain } from './trace_events.mjs';

const distDir = repoPath(arg('dist', 'dist'));
const runs = Math.max(1, Number(arg('runs', '3')));
const wait = Number(arg('wait', '1000'));

const SCRIPT = new Set(['FunctionCall', 'EvaluateScript', 'v8.callFunction', 'v8.run', 'v8.evaluateModule', 'RunMicrotasks', 'TimerFire', 'FireAnimationFrame', 'EventDispatch', 'v8.compileModule']);

function summarise(events) {
  const main = rendererMain(events);
  const xs = events.filter((e) => `${e.pid}:${e.tid}` === main && e.ph === 'X' && e.dur).sort((a, b) => a.ts - b.ts);
  const scripts = xs.filter((e) => SCRIPT.has(e.name));
  const out = { forced: 0, forcedN: 0, frame: 0, frameN: 0, style: 0 };
  for (const e of xs) {
    if (e.name === 'UpdateLayoutTree') out.style += e.dur / 1000;
    if (e.name !== 'Layout') continue;
    const inScript = scripts.some((s) => s.ts <= e.ts && s.ts + s.dur >= e.ts + e.dur);
    if (inScript) {
      out.forced += e.dur / 1000;
      out.forcedN += 1;
    } else {
      out.frame += e.dur / 1000;
      out.frameN += 1;
    }
  }
  return out;
}

const server = await startServer(distDir);
const browser = await launchBrowser();
const all = [];
try {
  for (let i = 1; i <= runs; i += 1) {
    const p = await openPage(browser, server, { viewport: { width: 1400, height: 1000 } });
    await browser.startTracing(p.page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.execute', 'toplevel'] });
    await p.page.goto(server.url, { waitUntil: 'load', timeout: 30000 });
    await p.page.getByTestId('app-root').waitFor({ state: 'visible', timeout: 30000 });
    await lateSettled(p.page);
    await p.page.waitForTimeout(wait);
    const buf = await browser.stopTracing();
    const t = JSON.parse(buf.toString());
    const s = summarise(t.traceEvents || t);
    all.push(s);
    console.log(`bench layout: load ${i}: forced layouts ${s.forcedN}, ${s.forced.toFixed(1)} ms; frame layouts ${s.frameN}, ${s.frame.toFixed(1)} ms; style recalculation ${s.style.toFixed(1)} ms`);
    await p.context.close();
  }
  const med = (k) => [...all.map((s) => s[k])].sort((a, b) => a - b)[Math.floor(all.length / 2)];
  console.log(`bench layout: median of ${runs}: forced ${med('forced').toFixed(1)} ms (${med('forcedN')} layouts), frame ${med('frame').toFixed(1)} ms (${med('frameN')}), style ${med('style').toFixed(1)} ms`);
} finally {
  await closeBrowser(browser);
  await server.stop();
}
