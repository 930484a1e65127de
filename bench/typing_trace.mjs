// Where a slow key press's time goes (a diagnosis tool, not a stage of scripts/test.sh): types
// bench/typing.mjs's bursts with the page scrolled to one position and prints every Event
// Timing entry of 16 ms or more with its phases (input delay, processing, input to paint) and
// what the main thread did meanwhile: the animation frames that ran (requestAnimationFrame
// timestamps), the tasks over 16 ms (timed by a task probe) and the long tasks.
//
//   node bench/typing_trace.mjs [--dist DIR] [--at HEADING_ID|top|bottom] [--delay MS] [--trace]
//
// --hold-late: experiment: after the page has started, the shell's scenario events to the
// late module are dropped (its sections stay as they were), to see whether a slow key press
// comes from the late sections following the change.
// --trace: also a Chrome trace of the typing; for the slowest key press, the busiest threads
// of every process (top-level events' wall and CPU time within its input-to-paint window).
import { arg, openPage, repoPath, withServedBrowser } from '../e2e/harness.mjs';
import { openApp } from '../e2e/app.mjs';
import { BURSTS, fieldInView } from './typing_fields.mjs';

const distDir = repoPath(arg('dist', 'dist'));
const at = arg('at', 'roofline-title');
const delay = Number(arg('delay', '60'));

const OBSERVE = () => {
  window.__ev = [];
  window.__long = [];
  window.__frames = [];
  window.__gaps = [];
  new PerformanceObserver((l) => {
    for (const e of l.getEntries()) {
      window.__ev.push({ name: e.name, start: e.startTime, pStart: e.processingStart, pEnd: e.processingEnd, duration: e.duration, target: e.target?.id || e.target?.tagName || '' });
    }
  }).observe({ type: 'event', durationThreshold: 16, buffered: true });
  new PerformanceObserver((l) => {
    for (const e of l.getEntries()) window.__long.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: 'longtask', buffered: true });
  const frame = (t) => {
    window.__frames.push(t);
    if (window.__frames.length > 100000) window.__frames.splice(0, 50000);
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  const ch = new MessageChannel();
  let last = performance.now();
  ch.port1.onmessage = () => {
    const now = performance.now();
    if (now - last > 16) window.__gaps.push({ start: last, duration: now - last });
    last = now;
    setTimeout(() => ch.port2.postMessage(0), 0);
  };
  ch.port2.postMessage(0);
};


await withServedBrowser(distDir, async (browser, server) => {
  const p = await openPage(browser, server);
  await p.page.addInitScript(OBSERVE);
  const page = await openApp(p, server.url);
  await page.waitForTimeout(500);
  await page.evaluate((where) => {
    if (where === 'top') window.scrollTo(0, 0);
    else if (where === 'bottom') window.scrollTo(0, document.documentElement.scrollHeight);
    else document.getElementById(where)?.scrollIntoView({ block: 'start' });
  }, at);
  await page.waitForTimeout(1500);
  if (process.argv.includes('--hold-late')) {
    await page.evaluate(() => {
      const orig = window.dispatchEvent.bind(window);
      window.dispatchEvent = (ev) => (ev.type === 'llmcalc:scenario' ? true : orig(ev));
    });
  }
  const trace = process.argv.includes('--trace');
  if (trace) {
    await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline.frame', 'cc', 'viz', 'gpu', 'benchmark', 'blink.user_timing', 'renderer.scheduler'] });
  }
  // A mark whose page time is known: it ties the trace's clock to the page's.
  const syncAt = await page.evaluate(() => {
    const t = performance.now();
    performance.mark('typing-trace-sync', { startTime: t });
    return t;
  });
  await page.evaluate(() => {
    window.__ev.length = 0;
    window.__long.length = 0;
    window.__gaps.length = 0;
  });
  for (const [id, text] of BURSTS) {
    const input = page.locator(`[data-testid="${id}"]`).first();
    await input.evaluate(fieldInView);
    await page.keyboard.type(text, { delay });
    await page.waitForTimeout(600);
  }
  const seen = await page.evaluate(() => ({ ev: window.__ev, long: window.__long, frames: window.__frames, gaps: window.__gaps }));
  const f = (x) => x.toFixed(1);
  if (trace) {
    const buf = await browser.stopTracing();
    const events = JSON.parse(buf.toString()).traceEvents;
    const slow = [...seen.ev].sort((a, b) => b.duration - a.duration)[0];
    const sync = events.find((e) => e.name === 'typing-trace-sync');
    if (slow && sync) busiest(events, sync.ts / 1000 - syncAt, slow, f);
    else console.log('no sync mark in the trace');
  }
  console.log(`typing trace at ${at}: ${seen.ev.length} event entries of 16 ms or more, ${seen.long.length} long tasks`);
  for (const e of seen.ev.sort((a, b) => b.duration - a.duration).slice(0, 12)) {
    const end = e.start + e.duration;
    const frames = seen.frames.filter((t) => t >= e.start - 1 && t <= end + 1).map((t) => f(t - e.start));
    const gaps = seen.gaps.filter((g) => g.start + g.duration >= e.start && g.start <= end).map((g) => `${f(g.start - e.start)}+${f(g.duration)}`);
    console.log(`  ${e.name.padEnd(8)} ${e.target.padEnd(10)} at ${f(e.start)}: duration ${f(e.duration)} = input delay ${f(e.pStart - e.start)}, processing ${f(e.pEnd - e.pStart)}, to paint ${f(end - e.pEnd)}; frames at +[${frames.join(', ')}]; busy tasks at +[${gaps.join(', ')}]`);
  }
});

/** Prints the threads busiest during `slow` (an Event Timing entry) from a Chrome trace. */
function busiest(events, origin, slow, f) {
  const names = new Map();
  for (const e of events) if (e.name === 'thread_name') names.set(`${e.pid}:${e.tid}`, e.args?.name);
  // Trace timestamps are in microseconds; page time t is trace time (origin + t) * 1000, with
  // `origin` taken from the sync mark.
  const from = (origin + slow.start) * 1000;
  const to = from + slow.duration * 1000;
  const per = new Map();
  const open = new Map();
  for (const e of events) {
    if (e.ph !== 'X' || !e.dur) continue;
    const k = `${e.pid}:${e.tid}`;
    const end = e.ts + e.dur;
    if (end < from || e.ts > to) continue;
    // Top-level only: skip an event inside the last one kept on its thread.
    const last = open.get(k);
    if (last && e.ts < last) continue;
    open.set(k, end);
    const wall = (Math.min(end, to) - Math.max(e.ts, from)) / 1000;
    const s = per.get(k) || { thread: names.get(k) || k, wall: 0, cpu: 0, top: new Map() };
    s.wall += wall;
    s.cpu += (e.tdur ?? e.dur) / 1000;
    s.top.set(e.name, (s.top.get(e.name) || 0) + wall);
    per.set(k, s);
  }
  console.log(`slowest: ${slow.name} ${f(slow.duration)} ms; threads busiest in its window:`);
  for (const s of [...per.values()].sort((a, b) => b.wall - a.wall).slice(0, 10)) {
    const top = [...s.top].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([n, w]) => `${n} ${f(w)}`).join(', ');
    console.log(`  ${s.thread.padEnd(28)} wall ${f(s.wall)} ms, cpu ${f(s.cpu)} ms: ${top}`);
  }
  const frameEvents = events.filter((e) => e.ts >= from && e.ts <= to && /DrawFrame|PipelineReporter|Commit|ActivateLayerTree|BeginFrame|NeedsBeginFrameChanged|DroppedFrame/.test(e.name));
  const counts = new Map();
  for (const e of frameEvents) counts.set(e.name, (counts.get(e.name) || 0) + 1);
  console.log(`  frame events in the window: ${[...counts].map(([n, c]) => `${n} ×${c}`).join(', ')}`);
}
