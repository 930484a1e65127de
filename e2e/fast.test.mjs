// A scenario link's first answer before the shell (crates/first/src/main.rs, public/loader.js
// `fillCopy`): the gate keeps the prerendered copies for a link, the first-answer module
// computes the link's first screen with the live page's text builders, and the copy is filled
// and shown; the live app replaces it in the task that mounts. Checked here, for every preset
// at a link's settings (three GPUs, 8,192 tokens, 8 requests), in English and Korean, and with
// other precisions and tensor parallelism:
// - when the copy was shown, it is exactly the live first screen (captured as
//   scripts/prerender.mjs captures it), in the live page's language, handed over in the mount's
//   task without a layout shift;
// - when the fast path declined (a shape the copy has no place for), no copy was ever shown;
// - a garbled link never shows a copy (its notices come with the live app).
// The served and declined presets are printed.
//
// An embedded widget (`?embed=memory`, `kv`, `batch`; crates/first/src/embed.rs, loader.js
// `fillEmbed`) is checked the same way at a course frame's size, and its chart, drawn on the
// copy's canvas by the first-answer module, must be pixel for pixel the chart the live widget
// then draws.

import { CAPTURE_INIT, withoutDrawing } from '../scripts/prerender.mjs';
import { check, waitFor } from './app.mjs';

/** This file times the hand-over (layout shifts): the runner gives it the machine alone. */
export const alone = true;

/** Records the first shown copy's HTML and language, and the layout shifts. */
const WATCH = () => {
  const w = { shownHtml: null, langAtShow: null, shifts: [] };
  window.__fastWatch = w;
  const look = () => {
    const p = document.querySelector('#prerendered:not([hidden])');
    if (p && w.shownHtml === null) {
      w.shownHtml = p.outerHTML;
      w.langAtShow = document.documentElement.lang;
      // An embedded widget's chart, as drawn on the copy (in the task that showed it).
      const canvas = p.querySelector('canvas');
      if (canvas) requestAnimationFrame(() => {
        w.copyChart = canvas.width > 0 && canvas.hasAttribute('width') ? canvas.toDataURL() : null;
      });
    }
  };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) w.shifts.push(e.value);
  }).observe({ type: 'layout-shift', buffered: true });
  new MutationObserver(look).observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ['hidden'] });
};

/** Where two strings first differ, with some context of each. */
function firstDifference(a, b) {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i += 1;
  return `at character ${i}: live "…${a.slice(Math.max(0, i - 80), i + 80)}…" vs copy "…${b.slice(Math.max(0, i - 80), i + 80)}…"`;
}

/** Opens `path` and returns { served, lang } after checking the hand-over; with `shoot`, a
 * screenshot of the page while the filled copy is on screen, before the shell may start. */
async function visit(open, server, path, code, shoot, viewport = { width: 1400, height: 1000 }) {
  const p = await open({ viewport });
  if (code) await p.context.addInitScript((c) => Object.defineProperty(Navigator.prototype, 'language', { get: () => c }), code);
  await p.context.addInitScript(CAPTURE_INIT);
  await p.context.addInitScript(WATCH);
  // The shell's wasm is held until the fast path has answered (the copy shown, or the module
  // ran and declined), so the live app cannot win the race on a busy machine; then released.
  let release;
  const gate = new Promise((r) => {
    release = r;
  });
  await p.context.route(/\/app-[^/]*_bg\.wasm$/, async (route) => {
    await gate;
    await route.continue();
  });
  await p.page.goto(server.url + path, { waitUntil: 'commit', timeout: 30000 });
  await waitFor(() => p.page.evaluate(() => window.__fastWatch?.shownHtml !== null || performance.getEntriesByName('llmcalc:first').length > 0 || document.getElementById('prerendered') === null), `the fast path's answer to ${path}`, 20000).catch(() => {});
  await p.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  if (shoot) await shoot(p.page);
  release();
  await waitFor(() => p.page.evaluate(() => window.__llmcalcCapture?.ready), `the live first screen of ${path}`, 45000);
  const cap = await p.page.evaluate(() => window.__llmcalcCapture);
  const w = await p.page.evaluate(() => window.__fastWatch);
  const lang = await p.page.evaluate(() => document.documentElement.lang);
  const served = w.shownHtml !== null;
  if (served) {
    const live = withoutDrawing(cap.html.replace(' hidden=""', ''));
    const shown = withoutDrawing(w.shownHtml);
    check(shown === live, `${path}: the filled copy is not the live first screen ${firstDifference(live, shown)} (after a change to the first screen or a widget, run \`node scripts/prerender.mjs\`)`);
    if (path.includes('embed=')) {
      // The live widget's chart, once drawn (its first frame's ResizeObserver), against the copy's.
      const liveChart = await p.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => {
        const c = document.querySelector('.app-root:not(#prerendered) canvas');
        r(c && c.hasAttribute('width') ? c.toDataURL() : null);
      }))));
      check(w.copyChart && liveChart && w.copyChart === liveChart, `${path}: the copy's chart (${w.copyChart ? `${w.copyChart.length} characters` : 'not drawn'}) is not the live widget's (${liveChart ? `${liveChart.length} characters` : 'not drawn'})`);
    }
    check(w.langAtShow === lang, `${path}: <html lang> was "${w.langAtShow}" when the copy was shown, the live page's is "${lang}"`);
    check(cap.removedWithMount && !cap.staticAtMount, `${path}: the copy did not leave the page in the task that mounted the live root`);
    check(w.shifts.reduce((s, v) => s + v, 0) === 0, `${path}: layout shifts ${JSON.stringify(w.shifts)}`);
  }
  await p.context.close();
  return { served, lang };
}

export default function register(runner) {
  runner.test('fast path: a scenario link\'s copy, filled before the shell, is exactly the live first screen (every preset, English and Korean)', async ({ open, server, log, screenshot }) => {
    // The presets, from the page's own list.
    const first = await open();
    await first.page.goto(server.url, { waitUntil: 'load' });
    await waitFor(() => first.page.evaluate(() => document.querySelectorAll('[data-testid="model-preset"] option').length > 0), 'the preset list');
    const presets = await first.page.evaluate(() => [...document.querySelectorAll('[data-testid="model-preset"] option')].map((o) => o.value));
    await first.context.close();
    const link = '&ctx=8192&n=8&gpu=h100-sxm&gpu=l40s&gpu=a10g';
    const served = [];
    const declined = [];
    for (const id of presets) {
      const r = await visit(open, server, `?model=${id}${link}`, null);
      (r.served ? served : declined).push(id);
    }
    log(`served ${served.length}/${presets.length}: ${served.join(', ')}`);
    log(`declined (the live app answers): ${declined.join(', ') || 'none'}`);
    // Every preset at a plain link (the models' warnings included, where the live page lists them).
    check(served.length === presets.length, `the fast path declined ${declined.join(', ')}`);
    // Korean (by link and by browser), other precisions, TP, one GPU, and a garbled link.
    const cases = [
      { path: `?model=qwen3-8b&lang=ko${link}`, code: null, want: { served: true, lang: 'ko' } },
      { path: '?model=llama-3.1-8b&ctx=2048', code: 'ko-KR', want: { served: true, lang: 'ko' } },
      { path: '?model=llama-3.1-70b&tp=4&wd=fp8&kvd=fp8&gpu=h100-sxm', code: null, want: { served: true, lang: 'en' } },
      { path: '?model=gpt2&n=1&gpu=l4', code: 'ko-KR', want: { served: true, lang: 'ko' } },
      { path: '?ctx=abc&zzz=1', code: null, want: { served: false, lang: 'en' } },
      { path: '?model=deepseek-r1&ctx=8192&n=8&gpu=h200-sxm&tp=8', code: 'ko-KR', want: { served: true, lang: 'ko' }, shot: 'deepseek-r1-ko' },
    ];
    for (const c of cases) {
      const r = await visit(open, server, c.path, c.code, c.shot && ((page) => screenshot(page, c.shot, { fullPage: false })));
      check(r.served === c.want.served && r.lang === c.want.lang, `${c.path} (${c.code ?? 'en-US'}): served ${r.served} in ${r.lang}, expected served ${c.want.served} in ${c.want.lang}`);
      log(`${c.path} (${c.code ?? 'en-US'}): ${r.served ? 'the filled copy shown' : 'no copy'}, page in ${r.lang}`);
    }
  }, { timeoutMs: 420000 });

  runner.test('fast path: an embedded widget\'s copy, filled before the shell, is exactly the live widget, its chart pixel for pixel (memory, KV, batch; English and Korean)', async ({ log, open, server, screenshot }) => {
    const frame = { width: 640, height: 900 };
    const cases = [
      { path: '?embed=memory', code: null, want: { served: true, lang: 'en' } },
      { path: '?embed=memory&model=qwen3-8b&gpu=h100-sxm&ctx=8192&n=8', code: null, want: { served: true, lang: 'en' }, shot: 'embed-memory-fast' },
      { path: '?embed=memory&model=mixtral-8x7b&gpu=h100-sxm&tp=2&ctx=2048', code: 'ko-KR', want: { served: true, lang: 'ko' } },
      { path: '?embed=memory&model=llama-2-7b&gpu=a10g&gpu=l40s', code: null, want: { served: true, lang: 'en' } },
      { path: '?embed=kv&model=llama-3.1-8b&ctx=32768&n=4&kvd=fp8', code: null, want: { served: true, lang: 'en' } },
      { path: '?embed=kv&lang=ko&model=deepseek-r1&gpu=h200-sxm&tp=8', code: null, want: { served: true, lang: 'ko' }, shot: 'embed-kv-fast-ko' },
      { path: '?embed=batch&model=gpt2&gpu=l4', code: null, want: { served: true, lang: 'en' } },
      { path: '?embed=batch&model=llama-3.1-70b&tp=4&wd=fp8&gpu=h100-sxm', code: 'ko-KR', want: { served: true, lang: 'ko' } },
      // The same GPU twice, and the sliders' far ends.
      { path: '?embed=memory&gpu=h100-sxm&gpu=h100-sxm&gpu=a10g', code: null, want: { served: true, lang: 'en' } },
      { path: '?embed=batch&model=gpt2&ctx=1048576&n=1024&gpu=b200', code: null, want: { served: true, lang: 'en' } },
      // What the copies have no place for: the live widget answers, no copy is ever shown.
      { path: '?embed=roofline&model=qwen3-8b', code: null, want: { served: false, lang: 'en' } },
      { path: '?embed=memory&embed_inputs=0', code: null, want: { served: false, lang: 'en' } },
      { path: '?embed=memory&ctx=abc&zzz=1', code: null, want: { served: false, lang: 'en' } },
      { path: '?embed=kv&params=7e9', code: null, want: { served: false, lang: 'en' } },
    ];
    for (const c of cases) {
      const r = await visit(open, server, c.path, c.code, c.shot && ((page) => screenshot(page, c.shot, { fullPage: false })), frame);
      check(r.served === c.want.served && r.lang === c.want.lang, `${c.path} (${c.code ?? 'en-US'}): served ${r.served} in ${r.lang}, expected served ${c.want.served} in ${c.want.lang}`);
      log(`${c.path} (${c.code ?? 'en-US'}): ${r.served ? 'the filled copy shown, its chart the live one' : 'no copy'}, page in ${r.lang}`);
    }
  }, { timeoutMs: 300000 });
}
