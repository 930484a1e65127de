// What the main thread does during a serving sweep (a diagnosis tool, not a stage of
// scripts/test.sh): the page scrolled to "Serving under load", N sweeps started as
// bench/sim_worker.mjs starts them (the warm-up count changed by one), recorded as
// - a Chrome performance trace: every main-thread task over --over ms (default 16) from the
//   change to 1.5 s after the reply, with what ran inside it (event names, wall time); or
// - with --profile, a V8 CPU profile (100 us sampling) of the same window, summarised per
//   function (inclusive and self). Function names need a wasm with its name section (see
//   bench/paint_trace.mjs for how to build one).
//
// With --planner, the jobs are the capacity planner's simulated sizing instead (the router
// switched per job, as bench/sim_worker.mjs does). With --wasm, the trace also records V8's
// wasm events, and each job's line counts the lazy compiles (a function's first call) in the
// edit's task and in the job's tasks.
//
//   node bench/sim_trace.mjs [--dist DIR] [--sweeps N] [--over MS] [--profile] [--planner] [--wasm] [--out FILE]
import { writeFileSync } from 'node:fs';
import { arg, openPage, repoPath, withServedBrowser } from '../e2e/harness.mjs';
import { openApp } from '../e2e/app.mjs';
import { summariseProfile } from './profile.mjs';
import { cpuMs, mainThread } from './trace_events.mjs';

const distDir = repoPath(arg('dist', 'dist'));
const sweeps = Number(arg('sweeps', '3'));
const over = Number(arg('over', '16'));
const out = arg('out', '');
const profile = process.argv.includes('--profile');
const planner = process.argv.includes('--planner');
const wasm = process.argv.includes('--wasm');
const JOB = planner ? 'llmcalc-sim-job-plan' : 'llmcalc-sim-job-sweep';

await withServedBrowser(distDir, run);

function jobCount(page) {
  return page.evaluate((n) => performance.getEntriesByName(n).length, JOB);
}

async function waitJobs(page, n) {
  const deadline = Date.now() + 120000;
  while ((await jobCount(page)) < n) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a sweep');
    await page.waitForTimeout(100);
  }
}

async function run(browser, server) {
  const p = await openPage(browser, server, { viewport: { width: 1400, height: 1000 } });
  const page = await openApp(p, server.url);
  await page.evaluate((p) => (p ? document.querySelector('[data-testid="plan-sim"]') : document.getElementById('serving-title'))?.scrollIntoView(), planner);
  await waitJobs(page, 1);
  await page.waitForTimeout(1500);
  const cdp = profile ? await page.context().newCDPSession(page) : null;
  if (cdp) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
    await cdp.send('Profiler.start');
  } else {
    await browser.startTracing(page, {
      categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing', 'v8.execute', 'toplevel', ...(wasm ? ['v8.wasm', 'disabled-by-default-v8.wasm.detailed'] : [])],
    });
  }
  for (let i = 1; i <= sweeps; i += 1) {
    await page.evaluate(({ w, p }) => {
      performance.mark('sweep-change');
      if (p) {
        const el = document.querySelector('[data-testid="plan-router"]');
        el.value = el.value === 'least-loaded' ? 'round-robin' : 'least-loaded';
        el.dispatchEvent(new Event('change', { bubbles: true }));
        return;
      }
      const el = document.querySelector('[data-testid="sv-warm"]');
      el.value = String(w);
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
    }, { w: 200 + i, p: planner });
    await waitJobs(page, 1 + i);
    await page.waitForTimeout(1500);
  }
  if (cdp) {
    const { profile: prof } = await cdp.send('Profiler.stop');
    if (out) writeFileSync(out, JSON.stringify(prof));
    summariseProfile(prof, sweeps, { unit: 'sweep', top: Number(arg('top', '50')) });
    return;
  }
  const buf = await browser.stopTracing();
  if (out) writeFileSync(out, buf);
  const trace = JSON.parse(buf.toString());
  const events = trace.traceEvents || trace;
  // The renderer main thread's top-level tasks (bench/trace_events.mjs, as bench/sim_worker.mjs
  // reads them).
  const { onMain, tasks: all } = mainThread(events);
  const outer = all.filter((t) => t.dur / 1000 > over);
  // Instant marks only (a measure's 'b' event sits at its start mark and would repeat it).
  const marks = events.filter((e) => e.cat?.includes('blink.user_timing') && (e.ph === 'I' || e.ph === 'R')).map((e) => ({ name: e.name, ts: e.ts }));
  // Thread CPU time (tdur) is what the task cost; wall time (dur) also counts waiting for a
  // core, which on a busy machine can be most of it.
  const kind = (t) => onMain.find((e) => e !== t && e.ts >= t.ts && e.ts + e.dur <= t.ts + t.dur && !/RunTask/.test(e.name))?.name || '?';
  const cpu = cpuMs;
  const top = [...all].sort((a, b) => cpu(b) - cpu(a)).slice(0, 5).map((e) => `${cpu(e).toFixed(1)} (wall ${(e.dur / 1000).toFixed(1)}, ${kind(e)})`);
  console.log(`sim trace: ${sweeps} sweep(s): longest main-thread tasks by CPU time, ms: ${top.join(', ')}`);
  // Per job, as bench/sim_worker.mjs splits it: the edit's task (the one holding the job's
  // "sent" mark: the input, the page's re-render, the job posted) and the sweep's tasks (from
  // the end of that one to 1.5 s after the job was shown).
  const kindName = planner ? 'plan' : 'sweep';
  const sents = events.filter((e) => e.name === `llmcalc-sim-sent-${kindName}` && e.ph === 'I').map((e) => e.ts);
  const ends = events.filter((e) => e.name === `llmcalc-sim-job-${kindName}` && e.ph === 'e').map((e) => e.ts);
  const fmt = (t) => (t ? `${(t.dur / 1000).toFixed(1)} ms wall / ${cpu(t).toFixed(1)} ms CPU (${kind(t)})` : 'none');
  for (const sent of sents) {
    const end = ends.find((e) => e >= sent);
    if (end === undefined) continue;
    const edit = all.find((t) => t.ts <= sent && t.ts + t.dur >= sent);
    const from = edit ? edit.ts + edit.dur : sent;
    const during = all.filter((t) => t.ts >= from && t.ts <= end + 1.5e6);
    const byWall = [...during].sort((a, b) => b.dur - a.dur)[0];
    const byCpu = [...during].sort((a, b) => cpu(b) - cpu(a))[0];
    // The task that hands the reply to the page (sim_client::hand_over) ends the job's measure.
    const hand = all.find((t) => t.ts <= end && t.ts + t.dur >= end);
    console.log(`job (${kindName}) ${((end - sent) / 1000).toFixed(0)} ms: the edit's task ${fmt(edit)}; during the job: longest by wall ${fmt(byWall)}, by CPU ${fmt(byCpu)}; the hand-over's task ${fmt(hand)}`);
    if (wasm) {
      // V8 compiles a wasm function on its first call: a task's lazy compiles are a one-time
      // cost (a first rebuild, say), not what the same task costs on later jobs.
      const compiles = (t) => onMain.filter((e) => e.name === 'wasm.CompileLazy' && e.ts >= t.ts && e.ts + e.dur <= t.ts + t.dur);
      const ms = (es) => es.reduce((a, e) => a + e.dur, 0) / 1000;
      const per = during.map((t) => ({ t, c: compiles(t) })).filter((x) => x.c.length);
      const worst = [...per].sort((a, b) => b.c.length - a.c.length)[0];
      const inEdit = edit ? compiles(edit) : [];
      const inHand = hand ? compiles(hand) : [];
      console.log(`    wasm lazy compiles: the edit's task ${inEdit.length} (${ms(inEdit).toFixed(1)} ms); the hand-over's ${inHand.length} (${ms(inHand).toFixed(1)} ms); during the job ${per.reduce((a, x) => a + x.c.length, 0)} in ${per.length} task(s)${worst ? `, most in one task ${worst.c.length} (${ms(worst.c).toFixed(1)} ms, in ${fmt(worst.t)})` : ''}`);
    }
  }
  console.log(`${outer.length} main-thread task(s) over ${over} ms wall during ${sweeps} sweep(s):`);
  for (const t of outer.sort((a, b) => a.ts - b.ts)) {
    const near = marks.filter((m) => m.ts >= t.ts - 2e6 && m.ts <= t.ts + t.dur).map((m) => `${m.name}@${((m.ts - t.ts) / 1000).toFixed(0)}`).slice(-4);
    console.log(`- ${(t.dur / 1000).toFixed(1)} ms (cpu ${cpu(t).toFixed(1)})  marks: ${near.join(' ')}`);
    const inside = new Map();
    for (const e of onMain) {
      if (e === t || e.ts < t.ts || e.ts + e.dur > t.ts + t.dur) continue;
      const k = e.name === 'FunctionCall' ? `FunctionCall ${e.args?.data?.functionName || ''}` : e.name;
      const s = inside.get(k) || { ms: 0, n: 0 };
      s.ms += e.dur / 1000;
      s.n += 1;
      inside.set(k, s);
    }
    for (const [k, s] of [...inside.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 14)) {
      console.log(`    ${s.ms.toFixed(1).padStart(7)} ms  x${s.n}  ${k}`);
    }
  }
}
