// The prerendered first screen (issue 18, "first answer first"; scripts/prerender.mjs).
//
// index.html carries a static copy of the default scenario's first screen, hidden until an
// inline gate shows it (default scenario, English, no remembered theme), and the app removes it
// in the task that mounts the live page (src/ui/app.rs). Checked here:
// - staleness: the live first screen, captured as the generator captures it, equals the copy
//   in the built index.html (else "run node scripts/prerender.mjs"), at 1400, 1024 and 390 px;
//   the gate in the page is the generator's and the CSP allows exactly it;
// - the hand-over: the copy was shown before the mount, left the page in the same task as the
//   live root arrived, every element of the live root is laid out where the copy's was (no
//   layout shift, also asked of a layout-shift PerformanceObserver), and the page is not
//   scrolled back;
// - a scenario link, a section link, a Korean browser and a remembered theme never show the
//   copy (checked at every mutation and every frame from the start), and the copy is gone;
// - after the hand-over the live app answers edits, and no copy is left.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CAPTURE_INIT, GATE_SCRIPT, copyIn, cspHash, gateIn } from '../scripts/prerender.mjs';
import { SUB_PATH } from './harness.mjs';
import { byId, check, openApp, readNumber, setValue, waitFor } from './app.mjs';

const REGENERATE = 'run `node scripts/prerender.mjs` to regenerate it (it rewrites index.html and the built dist\'s index.html)';

/** The built index.html the server serves. */
const servedIndex = (server) => readFileSync(join(server.root, ...SUB_PATH.split('/').filter(Boolean), 'index.html'), 'utf8');

/**
 * Installed before any script: records whether `#prerendered` was ever shown (checked on every
 * mutation and in every animation frame), the copy's element boxes when it was shown, the live
 * root's boxes in the frame after it mounted, the scroll position at both moments, and the
 * layout shifts.
 */
const WATCH = () => {
  const w = { scrollStatic: null, shownEver: false, shownAtFrame: 0, frames: 0, staticBoxes: null, liveBoxes: null, shifts: [], scrollBefore: null, scrollAfter: null, liveAt: null };
  window.__prerenderWatch = w;
  const boxes = (root) => [root, ...root.querySelectorAll('*')].map((e) => {
    const r = e.getBoundingClientRect();
    return `${e.tagName} ${r.x.toFixed(2)},${r.y.toFixed(2)} ${r.width.toFixed(2)}x${r.height.toFixed(2)}`;
  });
  const shown = () => document.querySelector('#prerendered:not([hidden])');
  const look = () => {
    const p = shown();
    if (p && !w.shownEver) {
      w.shownEver = true;
      w.shownAtFrame = w.frames;
      if (window.__prerenderScrollTo) window.scrollTo(0, window.__prerenderScrollTo);
      w.scrollStatic = window.scrollY;
      w.staticBoxes = boxes(p);
    }
  };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) w.shifts.push({ value: e.value, at: e.startTime });
  }).observe({ type: 'layout-shift', buffered: true });
  const mo = new MutationObserver((records) => {
    look();
    for (const r of records) {
      for (const n of r.addedNodes) {
        if (n.nodeType === 1 && n.classList.contains('app-root') && n.id !== 'prerendered' && !w.liveAt) {
          w.liveAt = performance.now();
          w.scrollBefore = window.scrollY;
          requestAnimationFrame(() => {
            w.liveBoxes = boxes(n);
            w.scrollAfter = window.scrollY;
          });
        }
      }
    }
  });
  mo.observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ['hidden'] });
  const frame = () => {
    w.frames += 1;
    look();
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
};

/** Where two strings first differ, with some context of each. */
function firstDifference(a, b) {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i += 1;
  return `at character ${i}: live "…${a.slice(Math.max(0, i - 60), i + 60)}…" vs copy "…${b.slice(Math.max(0, i - 60), i + 60)}…"`;
}

export default function register(runner) {
  runner.test('prerender: the checked-in first screen is what the live app mounts, handed over in one task without a layout shift (1400, 1024, 390 px)', async ({ open, server, log }) => {
    const html = servedIndex(server);
    const copy = copyIn(html);
    check(copy !== null, `the built index.html has no prerendered first screen: ${REGENERATE}`);
    const gate = gateIn(html);
    check(gate === GATE_SCRIPT, `the built index.html's gate script is not scripts/prerender.mjs's: ${REGENERATE}`);
    const csp = html.match(/http-equiv="Content-Security-Policy" content="([^"]*)"/);
    check(csp && csp[1].includes(`script-src 'self' ${cspHash(gate)} 'wasm-unsafe-eval'`), `the CSP does not allow exactly the gate's hash ${cspHash(gate)}: ${REGENERATE}`);
    for (const width of [1400, 1024, 390]) {
      const p = await open({ viewport: { width, height: 1000 } });
      await p.context.addInitScript(CAPTURE_INIT);
      await p.context.addInitScript(WATCH);
      // Scrolled while only the copy is there (where the window is taller than the page, 0).
      await p.context.addInitScript(() => {
        window.__prerenderScrollTo = 120;
      });
      await p.page.goto(server.url, { waitUntil: 'load', timeout: 30000 });
      await waitFor(() => p.page.evaluate(() => window.__llmcalcCapture?.ready && window.__prerenderWatch?.liveBoxes !== null), `the live first screen at ${width} px`, 45000);
      await p.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const cap = await p.page.evaluate(() => window.__llmcalcCapture);
      const w = await p.page.evaluate(() => window.__prerenderWatch);
      check(cap.html === copy, `at ${width} px the live first screen differs from the prerendered copy in the built index.html ${firstDifference(cap.html, copy)}: ${REGENERATE}`);
      check(cap.afterFrame === cap.html, `at ${width} px the live first screen changed in the task after its first frame`);
      check(w.shownEver, `at ${width} px the default page never showed the prerendered copy`);
      check(cap.removedWithMount && !cap.staticAtMount, `at ${width} px the copy did not leave the page in the task that mounted the live root (removed with the mount: ${cap.removedWithMount}, still there: ${cap.staticAtMount})`);
      check(w.staticBoxes.length === w.liveBoxes.length, `at ${width} px the copy has ${w.staticBoxes.length} elements, the live root ${w.liveBoxes.length}`);
      // Both read in the window's coordinates at the same scroll position (checked below).
      const moved = w.staticBoxes.map((b, i) => [b, w.liveBoxes[i]]).filter(([a, b]) => a !== b);
      check(moved.length === 0, `at ${width} px ${moved.length} element(s) of the live root are not where the copy's were, e.g. ${moved.slice(0, 3).map(([a, b]) => `${a} -> ${b}`).join('; ')}`);
      const cls = w.shifts.reduce((s, e) => s + e.value, 0);
      check(cls === 0, `at ${width} px layout shifts: ${JSON.stringify(w.shifts)}`);
      check(w.scrollAfter === w.scrollStatic && w.scrollBefore === w.scrollStatic, `at ${width} px the scroll position went ${w.scrollStatic} (copy shown) -> ${w.scrollBefore} (mount) -> ${w.scrollAfter} (live frame)`);
      log(`${width} px: copy shown at frame ${w.shownAtFrame}, live root mounted at ${w.liveAt.toFixed(0)} ms, ${w.liveBoxes.length} elements in place, CLS 0, scrollY ${w.scrollAfter}`);
      await p.context.close();
    }
  }, { timeoutMs: 240000 });

  runner.test('prerender: a scenario link, a section link, a Korean browser and a remembered theme never show the static copy', async ({ open, server, log }) => {
    const cases = [
      { name: 'scenario link', path: '?ctx=8192' },
      { name: 'section link', path: '#planner-title' },
      { name: 'Korean browser', path: '', init: () => Object.defineProperty(Navigator.prototype, 'language', { get: () => 'ko-KR' }) },
      { name: 'remembered dark theme', path: '', init: () => localStorage.setItem('llmcalc-theme', 'dark') },
    ];
    for (const c of cases) {
      const p = await open({ viewport: { width: 1400, height: 1000 } });
      if (c.init) await p.context.addInitScript(c.init);
      await p.context.addInitScript(WATCH);
      await openApp(p, server.url + c.path);
      const w = await p.page.evaluate(() => window.__prerenderWatch);
      check(!w.shownEver, `${c.name}: the static copy was shown`);
      check(await p.page.evaluate(() => document.getElementById('prerendered') === null && document.querySelector('[data-static-testid]') === null), `${c.name}: the static copy is still in the page`);
      check(w.frames > 0 && w.liveBoxes !== null, `${c.name}: the live app did not mount (${w.frames} frames)`);
      if (c.name === 'Korean browser') check(await p.page.evaluate(() => document.documentElement.lang) === 'ko', 'Korean browser: the page is not in Korean');
      if (c.name === 'scenario link') check(await p.page.evaluate(() => document.querySelector('[data-testid="context-len"]')?.value) === '8192', 'scenario link: the live app does not show the link\'s context length');
      log(`${c.name}: never shown in ${w.frames} frames; live app mounted`);
      await p.context.close();
    }
  }, { timeoutMs: 180000 });

  runner.test('prerender: after the hand-over the static copy is gone and the live app answers an edit', async ({ open, server }) => {
    const p = await open({ viewport: { width: 1400, height: 1000 } });
    await p.context.addInitScript(WATCH);
    const page = await openApp(p, server.url);
    check((await page.evaluate(() => window.__prerenderWatch.shownEver)) === true, 'the default page did not show the static copy');
    check(await page.evaluate(() => document.getElementById('prerendered') === null && document.querySelectorAll('[data-static-testid], [inert]').length === 0), 'the static copy (or an inert part of it) is still in the page');
    const gpu = await page.evaluate(() => document.querySelector('[data-testid^="max-requests-"]')?.getAttribute('data-testid'));
    check(gpu, 'no max-requests output on the default page');
    const before = await readNumber(page, gpu);
    const ctx = Number(await byId(page, 'context-len').inputValue());
    check(ctx > 0, `the context length field reads ${ctx}`);
    await setValue(page, 'context-len', ctx * 4);
    await waitFor(async () => (await readNumber(page, gpu)) !== before, `${gpu} to change after the context length went ${ctx} -> ${ctx * 4}`);
    check(await byId(page, 'params-total').isVisible(), 'params-total is not visible');
  });
}
