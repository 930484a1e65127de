// Summary of a V8 CPU profile (CDP `Profiler.stop`), shared by the diagnosis tools
// bench/paint_trace.mjs and bench/sim_trace.mjs: inclusive and self time per function,
// divided by the number of measured actions (changes, sweeps). Rust symbol hashes
// (`::h0123…`) are dropped so one function's monomorphic copies add up.

/** Self and total time per function of `prof`, per one of `n` actions called `unit`. */
export function summariseProfile(prof, n, { unit = 'action', top = 45 } = {}) {
  const byId = new Map(prof.nodes.map((x) => [x.id, x]));
  const parent = new Map();
  for (const x of prof.nodes) for (const c of x.children || []) parent.set(c, x.id);
  const name = (id) => (byId.get(id).callFrame.functionName || '(anon)').replace(/::h[0-9a-f]{16}/g, '');
  const self = new Map();
  const total = new Map();
  const dts = prof.timeDeltas;
  for (let i = 0; i < prof.samples.length; i += 1) {
    const dt = (dts[i + 1] ?? 0) / 1000;
    let id = prof.samples[i];
    const leaf = name(id);
    self.set(leaf, (self.get(leaf) || 0) + dt);
    const seen = new Set();
    while (id !== undefined) {
      const f = name(id);
      if (!seen.has(f)) {
        total.set(f, (total.get(f) || 0) + dt);
        seen.add(f);
      }
      id = parent.get(id);
    }
  }
  const show = (m, title) => {
    console.log(title);
    for (const [f, t] of [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      if (f === '(idle)' || f === '(program)' || f === '(root)') continue;
      console.log(`${(t / n).toFixed(3).padStart(8)} ms/${unit}  ${f.slice(0, 160)}`);
    }
  };
  show(total, '--- total (inclusive) ---');
  const ours = new Map([...total.entries()].filter(([f]) => f.includes('llm_serving_calculator') || f.includes('plotters')));
  show(ours, '--- total, this crate and plotters ---');
  show(self, '--- self ---');
}
