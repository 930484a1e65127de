// Issue 18 parts 1-2: the late module (src/ui/late.rs). The analysis sections arrive in a second
// wasm module imported after the first answer is painted; until then each section's slot holds
// a placeholder of its height, so nothing moves when they arrive; if the module cannot load, a
// sentence says so and the first answer stays.

import { byId, check, lateSettled, readNumber, waitFor } from './app.mjs';

/** The late module's files (Trunk keeps their plain names: index.html). */
const LATE_FILE = /\/sections(?:_bg)?\.(?:js|wasm)$/;

/** Records, in the page, when the parameter count first shows a number and the next animation
 * frame after that (the frame that paints it has begun). */
function watchFirstAnswer() {
  window.__answer = { shown: null, frame: null };
  const look = () => {
    if (window.__answer.shown !== null) return;
    const el = document.querySelector('[data-testid="params-total"]');
    if (el && /\d/.test(el.textContent || '')) {
      window.__answer.shown = performance.now();
      requestAnimationFrame(() => {
        window.__answer.frame = performance.now();
      });
    }
  };
  new MutationObserver(look).observe(document, { childList: true, subtree: true, characterData: true });
}

/** Each slot's height and the footer's top, in CSS pixels. */
async function geometry(page) {
  return page.evaluate(() => ({
    slots: [...document.querySelectorAll('[data-late-slot]')].map((s) => ({
      name: s.dataset.lateSlot,
      ready: s.hasAttribute('data-late-ready'),
      height: Math.round(s.getBoundingClientRect().height),
    })),
    footer: Math.round(document.querySelector('.footer').getBoundingClientRect().top + window.scrollY),
  }));
}

export default function register(runner) {
  runner.test('late module: no request for it before the first answer is painted', async ({ open, server, log }) => {
    const p = await open({ viewport: { width: 1400, height: 1000 } });
    await p.page.addInitScript(watchFirstAnswer);
    await p.page.goto(server.url, { waitUntil: 'load', timeout: 30000 });
    await lateSettled(p.page);
    await p.page.waitForLoadState('networkidle', { timeout: 10000 }).catch(() => {});
    const t = await p.page.evaluate(() => ({
      answer: window.__answer,
      late: performance
        .getEntriesByType('resource')
        .filter((e) => /\/sections(?:_bg)?\.(?:js|wasm)$/.test(new URL(e.name).pathname))
        .map((e) => ({ name: new URL(e.name).pathname.split('/').pop(), start: e.startTime })),
    }));
    log(`first answer in the DOM at ${t.answer.shown?.toFixed(0)} ms, its frame at ${t.answer.frame?.toFixed(0)} ms; late files ${t.late.map((l) => `${l.name} at ${l.start.toFixed(0)} ms`).join(', ')}`);
    check(t.answer.shown !== null && t.answer.frame !== null, 'the parameter count never showed');
    check(t.late.length === 2, `expected the late module's two files to be fetched, saw ${JSON.stringify(t.late)}`);
    for (const l of t.late) check(l.start >= t.answer.frame, `${l.name} was requested at ${l.start.toFixed(1)} ms, before the first answer's frame (${t.answer.frame.toFixed(1)} ms)`);
    // And the sections did arrive.
    check((await p.page.locator('[data-late-slot]:not([data-late-ready])').count()) === 0, 'a section never arrived');
    check((await byId(p.page, 'chart-roofline').count()) === 1, 'no roofline chart after the late module arrived');
  });

  runner.test('late module: placeholders keep each section\'s height (no layout shift)', async ({ open, server, screenshot, log }) => {
    const p = await open({ viewport: { width: 1400, height: 1000 } });
    // Hold the late module back until the placeholders have been measured.
    let release;
    const gate = new Promise((r) => {
      release = r;
    });
    await p.context.route(LATE_FILE, async (route) => {
      await gate;
      await route.continue();
    });
    await p.page.goto(server.url, { waitUntil: 'load', timeout: 30000 });
    await waitFor(async () => (await readNumber(p.page, 'params-total')) > 0, 'the first answer');
    await byId(p.page, 'late-placeholder-roofline').waitFor({ state: 'visible' });
    const before = await geometry(p.page);
    await screenshot(p.page, 'placeholders');
    check(before.slots.length === 6 && before.slots.every((s) => !s.ready), `expected six waiting slots, got ${JSON.stringify(before.slots)}`);
    release();
    await lateSettled(p.page);
    // Let the sections draw (charts, lazy sections catching up).
    await p.page.waitForTimeout(1500);
    const after = await geometry(p.page);
    await screenshot(p.page, 'sections');
    log(`slot heights before → after: ${before.slots.map((s, i) => `${s.name} ${s.height} → ${after.slots[i]?.height}`).join(', ')}; footer ${before.footer} → ${after.footer}`);
    check(after.slots.every((s) => s.ready), `a section never arrived: ${JSON.stringify(after.slots)}`);
    for (const [i, s] of before.slots.entries()) {
      const a = after.slots[i];
      check(Math.abs(a.height - s.height) <= 1, `${s.name}: the placeholder was ${s.height} px tall, the section is ${a.height} px (the page below moves)`);
    }
    check(Math.abs(after.footer - before.footer) <= 2, `the footer moved from ${before.footer} to ${after.footer} px`);
  });

  runner.test('late module: if it cannot load, a sentence says so and the first answer stays', async ({ open, server, screenshot, log }) => {
    const p = await open({ viewport: { width: 1400, height: 1000 } });
    await p.context.route(LATE_FILE, (route) => route.fulfill({ status: 404, contentType: 'text/plain', body: 'not found' }));
    await p.page.goto(server.url, { waitUntil: 'load', timeout: 30000 });
    await byId(p.page, 'late-failed').first().waitFor({ state: 'visible', timeout: 20000 });
    const sentences = await byId(p.page, 'late-failed').count();
    const text = await byId(p.page, 'late-failed').first().innerText();
    const params = await readNumber(p.page, 'params-total');
    await screenshot(p.page, 'failed');
    log(`${sentences} failure sentences ("${text}"); parameter count ${params}`);
    check(sentences === 6, `expected the sentence in each of the six sections' places, saw ${sentences}`);
    check(/could not be loaded/.test(text), `unexpected sentence: ${text}`);
    check(params > 1e9, `the parameter count is ${params} after the failure`);
    check((await byId(p.page, 'fit-table').count()) > 0, 'the fit table is gone');
    // The 404 itself was the point of the test (the browser logs it without its address).
    const expected = (x) =>
      x === 'console error: Failed to load resource: the server responded with a status of 404 (Not Found)' ||
      LATE_FILE.test((x.split(' ').find((w) => w.startsWith('http')) ?? '').split('?')[0]);
    const others = p.problems.filter((x) => !expected(x));
    p.problems.splice(0, p.problems.length, ...others);
  });

  runner.test('late module: the section index jumps to a section before it arrives, and one id per anchor after', async ({ open, server, screenshot, log }) => {
    const p = await open({ viewport: { width: 1400, height: 1000 } });
    let release;
    const gate = new Promise((r) => {
      release = r;
    });
    await p.context.route(LATE_FILE, async (route) => {
      await gate;
      await route.continue();
    });
    await p.page.goto(server.url, { waitUntil: 'load', timeout: 30000 });
    await waitFor(async () => (await readNumber(p.page, 'params-total')) > 0, 'the first answer');
    await byId(p.page, 'late-placeholder-planner').waitFor({ state: 'visible' });
    const url = new URL(p.page.url()).search;
    // Each late section's anchor is on its placeholder while the module is held back.
    const anchors = ['roofline', 'matmul', 'perf', 'accuracy', 'planner', 'serving'];
    const where = (ids) =>
      p.page.evaluate((ids) => ids.map((name) => {
        const all = document.querySelectorAll(`[id="${name}-title"]`);
        const el = all[0];
        return {
          name,
          count: all.length,
          placeholder: !!el?.closest('.late-placeholder'),
          visible: !!el && el.getBoundingClientRect().height > 0,
        };
      }), ids);
    const waiting = await where(anchors);
    for (const a of waiting) {
      check(a.count === 1 && a.placeholder && a.visible, `before the late module, #${a.name}-title should be its placeholder's heading: ${JSON.stringify(a)}`);
    }
    await byId(p.page, 'nav-planner-title').click();
    await waitFor(
      () => p.page.evaluate(() => {
        const r = document.getElementById('planner-title').getBoundingClientRect();
        return r.top >= -1 && r.top < window.innerHeight / 2;
      }),
      'the planner placeholder at the top after the jump',
    );
    await waitFor(async () => (await byId(p.page, 'nav-planner-title').getAttribute('aria-current')) === 'true', 'the index to mark the planner while it loads');
    await screenshot(p.page, 'index-before-late', { fullPage: false });
    // Scrolling by hand to the roofline's placeholder moves the mark there.
    await p.page.evaluate(() => window.scrollTo(0, document.getElementById('roofline-title').getBoundingClientRect().top + window.scrollY - 40));
    await waitFor(async () => (await byId(p.page, 'nav-roofline-title').getAttribute('aria-current')) === 'true', 'the index to follow the scroll to the roofline placeholder');
    check(new URL(p.page.url()).search === url, 'navigating changed the URL');
    release();
    await lateSettled(p.page);
    const mounted = await where(anchors);
    log(`anchors before: ${waiting.map((a) => `${a.name} ${a.count}${a.placeholder ? ' (placeholder)' : ''}`).join(', ')}; after: ${mounted.map((a) => `${a.name} ${a.count}${a.placeholder ? ' (placeholder)' : ''}`).join(', ')}`);
    for (const a of mounted) {
      check(a.count === 1 && !a.placeholder && a.visible, `after the late module, #${a.name}-title should be the section's own heading, once: ${JSON.stringify(a)}`);
    }
    await byId(p.page, 'nav-serving-title').click();
    await waitFor(
      () => p.page.evaluate(() => {
        const r = document.getElementById('serving-title').getBoundingClientRect();
        return r.top >= -1 && r.top < window.innerHeight / 2;
      }),
      'the serving heading at the top after the jump',
    );
    await waitFor(async () => (await byId(p.page, 'nav-serving-title').getAttribute('aria-current')) === 'true', 'the index to mark the serving section');
    check(new URL(p.page.url()).search === url, 'navigating changed the URL');
  });
}
