// What the trace tools (bench/paint_trace.mjs, bench/layout_trace.mjs, bench/sim_trace.mjs,
// bench/sim_worker.mjs) read from a Chrome performance trace in common.

// The renderer main thread's key (`pid:tid`): of the threads named CrRendererMain (one per
// renderer process the trace saw), the one with the most events.
export function rendererMain(events) {
  const names = new Set(events.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((n) => `${n.pid}:${n.tid}`));
  const counts = new Map();
  for (const e of events) {
    const k = `${e.pid}:${e.tid}`;
    if (names.has(k)) counts.set(k, (counts.get(k) || 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
}

/** The categories a main-thread task trace needs: tasks, what runs in them, the page's marks. */
export const TASK_CATEGORIES = ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing'];

/** The trace categories of a cold start (bench/start_trace.mjs, bench/load_cdp.mjs): the
 * main thread's tasks, user timing, loading, and V8's compile and wasm events
 * (V8.DeserializeContext is in `v8`). */
export const START_CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'blink.user_timing',
  'loading',
  'toplevel',
  'v8',
  'v8.execute',
  'v8.wasm',
  'disabled-by-default-v8.wasm.detailed',
  'disabled-by-default-v8.compile',
];

const isTask = (e) => e.name === 'RunTask' || e.name === 'ThreadControllerImpl::RunTask';

/**
 * The renderer main thread of a trace: `onMain`, its complete events sorted by start, and
 * `tasks`, its top-level tasks (`RunTask` / `ThreadControllerImpl::RunTask`; a task nested in
 * another, as one of those holds the other, is left out), sorted by start. A task's `dur` is
 * its wall time (waiting for a core included), `tdur` its thread CPU time.
 */
export function mainThread(events) {
  const main = rendererMain(events);
  const onMain = events.filter((e) => `${e.pid}:${e.tid}` === main && e.ph === 'X' && e.dur !== undefined).sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  return { onMain, tasks: topTasks(onMain) };
}

/** The top-level tasks among a thread's complete events `onMain` (sorted by start), as
 * [`mainThread`] finds them. */
export function topTasks(onMain) {
  const tasks = [];
  let end = -Infinity;
  for (const e of onMain) {
    if (!isTask(e) || e.ts + e.dur <= end) continue;
    tasks.push(e);
    end = e.ts + e.dur;
  }
  return tasks;
}

/**
 * A task's thread CPU time in ms (its wall time when the trace has no CPU time). A few tasks
 * in a trace have a `tdur` above their `dur` (a 1 ms task with 8 ms of thread time, every
 * ~0.5 s in one trace): a thread cannot run longer than the task lasts, so the wall time
 * bounds it.
 */
export const cpuMs = (t) => Math.min(t.tdur ?? t.dur, t.dur) / 1000;

/**
 * Whether task `t` ran only JS functions whose names start with `prefix` (a bench's own probe,
 * not the page's work): it holds at least one FunctionCall and no other.
 */
export function onlyCalls(onMain, t, prefix) {
  let n = 0;
  for (const e of within(onMain, t)) {
    if (e.name !== 'FunctionCall') continue;
    if (!(e.args?.data?.functionName || '').startsWith(prefix)) return false;
    n += 1;
  }
  return n > 0;
}

/** The events of the sorted `onMain` inside task `t` (not `t` itself, nor nested tasks). */
function* within(onMain, t) {
  let lo = 0;
  let hi = onMain.length;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (onMain[m].ts < t.ts) lo = m + 1;
    else hi = m;
  }
  for (let i = lo; i < onMain.length && onMain[i].ts <= t.ts + t.dur; i += 1) {
    const e = onMain[i];
    if (e !== t && !isTask(e) && e.ts + e.dur <= t.ts + t.dur) yield e;
  }
}

/** The page's marks (`marks`) and where its measures end (`ends`), each `{ name, ts }`. */
export function userTiming(events) {
  const marks = events.filter((e) => e.cat?.includes('blink.user_timing') && (e.ph === 'I' || e.ph === 'R' || e.ph === 'i')).map((e) => ({ name: e.name, ts: e.ts }));
  const ends = events.filter((e) => e.cat?.includes('blink.user_timing') && e.ph === 'e').map((e) => ({ name: e.name, ts: e.ts }));
  return { marks, ends };
}

/** The first of the sorted `tasks` that holds the time `ts`. */
export function taskAt(tasks, ts) {
  let lo = 0;
  let hi = tasks.length;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (tasks[m].ts + tasks[m].dur < ts) lo = m + 1;
    else hi = m;
  }
  return lo < tasks.length && tasks[lo].ts <= ts ? tasks[lo] : undefined;
}

/**
 * What ran inside task `t`: the event names with the most wall time in it (nested ones
 * counted too; a function call's name when the trace has it, an event's type), as
 * "TimerFire 3.1, FunctionCall 3.0, Layout 1.2" (ms).
 */
export function taskWhat(onMain, t, top = 4) {
  const sums = new Map();
  for (const e of within(onMain, t)) {
    const detail = e.args?.data?.functionName || e.args?.data?.type || '';
    const k = detail ? `${e.name}(${detail})` : e.name;
    sums.set(k, (sums.get(k) || 0) + e.dur / 1000);
  }
  const parts = [...sums.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  return parts.length ? parts.map(([k, ms]) => `${k} ${ms.toFixed(1)}`).join(', ') : 'no traced work inside';
}
