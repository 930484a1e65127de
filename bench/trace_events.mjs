// What the trace tools (bench/paint_trace.mjs, bench/layout_trace.mjs) read from a Chrome
// performance trace in common.

// The renderer main thread's key (`pid:tid`): of the threads named CrRendererMain (one per
// renderer process the trace saw), the one with the most events.
export function rendererMain(events) {
  const names = events.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
  const counts = new Map();
  for (const e of events) {
    const k = `${e.pid}:${e.tid}`;
    if (names.some((n) => `${n.pid}:${n.tid}` === k)) counts.set(k, (counts.get(k) || 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
}
