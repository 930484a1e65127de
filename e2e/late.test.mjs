// Issue 18 parts 1-2 (and the sync behind part 5): the late module (src/ui/late.rs). The analysis sections arrive in a second
// wasm module imported after the first answer is painted; until then each section's slot holds
// a placeholder of its height, so nothing moves when they arrive; if the module cannot load, a
// sentence says so and the first answer stays.

import { afterPaint, byId, check, lateSettled, readNumber, readText, waitFor } from './app.mjs';

/** These tests time frames and layout shifts: the runner gives them the machine alone. */
export const alone = true;

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

/**
 * Opens the page at `width` × 1000 (1400 unless given) with the late module's files held back:
 * returns once the first answer and the `slot` section's placeholder show; `release()` lets
 * the files through.
 */
async function openHeldBack(open, server, slot, width = 1400) {
  const p = await open({ viewport: { width, height: 1000 } });
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
  await byId(p.page, `late-placeholder-${slot}`).waitFor({ state: 'visible' });
  // The placeholders as painted (the charts above them take their height in the frame).
  await afterPaint(p.page);
  return { p, release };
}

/** Each slot's height and the footer's top, in CSS pixels. */
async function geometry(page) {
  return page.evaluate(() => ({
    slots: [...document.querySelectorAll('.late-slot[data-late-slot]')].map((s) => ({
      name: s.dataset.lateSlot,
      ready: s.hasAttribute('data-late-ready'),
      height: Math.round(s.getBoundingClientRect().height),
    })),
    // The export bar above the summary cards comes with the late module too (ui::late::LatePart):
    // its placeholder is a disabled copy of the bar.
    exportBar: Math.round(document.querySelector('.late-part[data-late-slot="export"]')?.getBoundingClientRect().height ?? -1),
    footer: Math.round(document.querySelector('.footer').getBoundingClientRect().top + window.scrollY),
  }));
}

/** Holds the late module back at `width`, measures the placeholders, lets it in, measures the
 * sections: each within the margin of its placeholder, and the footer where it was. */
async function placeholdersKeepHeights({ open, server, screenshot, log }, width) {
  const margin = (h) => (width === 1400 ? 1 : Math.max(4, h * 0.01));
  const { p, release } = await openHeldBack(open, server, 'roofline', width);
  const before = await geometry(p.page);
  await screenshot(p.page, `placeholders-${width}`);
  const footerMargin = width === 1400 ? 2 : before.slots.reduce((n, s) => n + margin(s.height), 0);
  check(before.slots.length === 6 && before.slots.every((s) => !s.ready), `expected six waiting slots, got ${JSON.stringify(before.slots)}`);
  release();
  await lateSettled(p.page);
  // Let the sections draw (charts, lazy sections catching up).
  await p.page.waitForTimeout(1500);
  const after = await geometry(p.page);
  await screenshot(p.page, `sections-${width}`);
  log(`slot heights before → after: ${before.slots.map((s, i) => `${s.name} ${s.height} → ${after.slots[i]?.height}`).join(', ')}; footer ${before.footer} → ${after.footer}`);
  check(after.slots.every((s) => s.ready), `a section never arrived: ${JSON.stringify(after.slots)}`);
  for (const [i, s] of before.slots.entries()) {
    const a = after.slots[i];
    const m = margin(a.height);
    check(Math.abs(a.height - s.height) <= m, `${s.name} at ${width} px: the placeholder was ${s.height} px tall, the section is ${a.height} px (margin ${m.toFixed(0)} px; the page below moves: PageSection::reserved_heights in crates/core/src/present/sections.rs, then REGENERATE_LATE_CSS=1 cargo test -p llmcalc-core --lib sections)`);
  }
  check(before.exportBar > 0 && before.exportBar === after.exportBar, `the export bar was ${before.exportBar} px tall before the late module, ${after.exportBar} px after (its placeholder must match)`);
  check(Math.abs(after.footer - before.footer) <= footerMargin, `the footer moved from ${before.footer} to ${after.footer} px (margin ${footerMargin} px)`);
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

  // The placeholders' heights are constants per band of widths (PageSection::reserved_heights in
  // crates/core/src/present/sections.rs, written into style/late.css), measured at these widths: each is
  // checked where it was measured. The margin: 1 px at 1400 (the widest band's own width), else
  // 1% of the section's height (at least 4 px), for text that wraps a line differently when the
  // fonts render a little differently.
  for (const width of [1400, 1280, 1024, 800, 600, 390]) {
    runner.test(`late module: placeholders keep each section's height at ${width} px (no layout shift)`, async ({ open, server, screenshot, log }) => {
      await placeholdersKeepHeights({ open, server, screenshot, log }, width);
    });
  }


  runner.test('late module: if it cannot load, a sentence says so and the first answer stays', async ({ open, server, screenshot, log }) => {
    const p = await open({ viewport: { width: 1400, height: 1000 } });
    await p.context.route(LATE_FILE, (route) => route.fulfill({ status: 404, contentType: 'text/plain', body: 'not found' }));
    await p.page.goto(server.url, { waitUntil: 'load', timeout: 30000 });
    await byId(p.page, 'late-failed').first().waitFor({ state: 'visible', timeout: 20000 });
    const sentences = await byId(p.page, 'late-failed').count();
    const text = await byId(p.page, 'late-failed').first().innerText();
    const params = await readNumber(p.page, 'params-total');
    await screenshot(p.page, 'failed');
    log(`${sentences} failure sentences ("${text}"), ${await byId(p.page, 'late-part-failed').count()} under parts; parameter count ${params}`);
    check(sentences === 6, `expected the sentence in each of the six sections' places, saw ${sentences}`);
    check(/could not be loaded/.test(text), `unexpected sentence: ${text}`);
    check(params > 1e9, `the parameter count is ${params} after the failure`);
    // The parts of the input panels and the export bar that come with it (ui::late::LatePart:
    // hub, export, custom-gpu) say so too, each under its disabled placeholder.
    const parts = await byId(p.page, 'late-part-failed').count();
    check(parts === 3, `expected the part sentence under the Hub fetch, the export bar and the custom GPU form, saw ${parts}`);
    check(await byId(p.page, 'late-part-export').locator('button').first().isDisabled(), "the export bar's placeholder buttons are not disabled");
    check((await byId(p.page, 'fit-table').count()) > 0, 'the fit table is gone');
    // The 404 itself was the point of the test (the browser logs it without its address).
    const expected = (x) =>
      x === 'console error: Failed to load resource: the server responded with a status of 404 (Not Found)' ||
      LATE_FILE.test((x.split(' ').find((w) => w.startsWith('http')) ?? '').split('?')[0]);
    const others = p.problems.filter((x) => !expected(x));
    p.problems.splice(0, p.problems.length, ...others);
  });

  runner.test('late module: the section index jumps to a section before it arrives, and one id per anchor after', async ({ open, server, screenshot, log }) => {
    const { p, release } = await openHeldBack(open, server, 'planner');
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
  runner.test('late module: the scenario reaches it after the frame, coalesced, and its edits come back once', async ({ open, server, log }) => {
    const p = await open({ viewport: { width: 1400, height: 1000 } });
    await p.page.goto(server.url, { waitUntil: 'load', timeout: 30000 });
    await lateSettled(p.page);
    await p.page.waitForTimeout(600);
    await p.page.evaluate(() => {
      window.__pub = [];
      addEventListener('llmcalc:scenario', (e) => window.__pub.push(String(e.detail?.query ?? '')));
    });
    const ctxOf = (q) => Number(new URLSearchParams(q).get('ctx'));
    // Changes the shell's context length as typing does, one task per value; returns how many
    // scenario events were sent in the input's own task (effects included: a microtask).
    const type = (values) => p.page.evaluate(async (values) => {
      const host = document.querySelector('[data-testid="context-len"]');
      const el = host.matches('input') ? host : host.querySelector('input:not([type=range])');
      let inTask = 0;
      for (const v of values) {
        const before = window.__pub.length;
        el.value = v;
        el.dispatchEvent(new Event('input', { bubbles: true }));
        el.dispatchEvent(new Event('change', { bubbles: true }));
        await Promise.resolve();
        await Promise.resolve();
        inTask += window.__pub.length - before;
        await new Promise((r) => setTimeout(r, 40));
      }
      return inTask;
    }, values);
    // 0. An off-screen late section (the performance section's cost) does not recompute with the change, only
    //    once the inputs settle: the change is handed over at once (a press on a slot does
    //    that), then its cost per million tokens is read after every microtask has run, before any timer.
    const cost = () => readText(p.page, 'usd-per-mtok');
    const before0 = await cost();
    const sameTask = await p.page.evaluate(async () => {
      const host = document.querySelector('[data-testid="context-len"]');
      const el = host.matches('input') ? host : host.querySelector('input:not([type=range])');
      el.value = '16384';
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      await Promise.resolve();
      document.querySelector('[data-late-slot="perf"]').dispatchEvent(new PointerEvent('pointerdown', { bubbles: true }));
      await new Promise((r) => setTimeout(r, 0));
      return {
        text: document.querySelector('[data-testid="usd-per-mtok"]').innerText.trim(),
        sent: window.__pub.length,
        onScreen: document.querySelector('[data-late-slot="perf"]').getBoundingClientRect().top < window.innerHeight + 300,
      };
    });
    const settled0 = await waitFor(async () => {
      const t = await cost();
      return t !== before0 ? t : null;
    }, 'the off-screen cost to catch up once the inputs settle', 5000);
    log(`off-screen cost per million tokens: ${before0} before, ${sameTask.text} right after the change reached the late module (${sameTask.sent} event), ${settled0} once settled`);
    check(!sameTask.onScreen, 'the performance section should be off screen at the top');
    check(sameTask.sent === 1, `the press on a slot should hand the change over at once, ${sameTask.sent} event(s) sent`);
    check(sameTask.text === before0, `the off-screen performance section recomputed in the change's task (${before0} -> ${sameTask.text})`);
    await p.page.waitForTimeout(600);
    await p.page.evaluate(() => {
      window.__pub.length = 0;
    });
    // 1. At the top no late section is near the screen: one publish once the inputs settle.
    const inTaskTop = await type(['8192', '12288', '6144']);
    await waitFor(() => p.page.evaluate(() => window.__pub.length > 0), 'the scenario to reach the late module after the inputs settle', 5000);
    await p.page.waitForTimeout(600);
    const top = await p.page.evaluate(() => window.__pub.slice());
    log(`at the top: ${top.length} scenario event(s) for 3 changes, ${inTaskTop} in the input's task; ctx ${top.map(ctxOf).join(', ')}`);
    check(inTaskTop === 0, `${inTaskTop} scenario event(s) were sent in the input's own task`);
    check(top.length === 1, `expected one coalesced scenario event off screen, saw ${top.length}: ${top.join(' | ')}`);
    check(ctxOf(top[0]) === 6144, `the late module was sent ctx ${ctxOf(top[0])}, not the last value 6144`);
    await waitFor(async () => (await readNumber(p.page, 'roofline-context-value')) === 6144, 'the roofline section to show the context 6,144');
    // 2. With a late section on screen: after the next frame, each change.
    await byId(p.page, 'roofline-view').scrollIntoViewIfNeeded();
    await p.page.waitForTimeout(400);
    await p.page.evaluate(() => {
      window.__pub.length = 0;
    });
    const inTaskNear = await type(['3072', '5120']);
    await waitFor(() => p.page.evaluate(() => window.__pub.length >= 2), 'a scenario event per change with the roofline on screen', 3000);
    const near = await p.page.evaluate(() => window.__pub.slice());
    log(`roofline on screen: ${near.length} scenario event(s) for 2 changes, ${inTaskNear} in the input's task; ctx ${near.map(ctxOf).join(', ')}`);
    check(inTaskNear === 0, `${inTaskNear} scenario event(s) were sent in the input's own task`);
    check(ctxOf(near[near.length - 1]) === 5120, `the last event carries ctx ${ctxOf(near[near.length - 1])}, not 5120`);
    await waitFor(async () => (await readNumber(p.page, 'roofline-context-value')) === 5120, 'the roofline section to show 5,120');
    // 3. An edit in the late section reaches the shell (its field and the URL) and is not sent
    //    back (the shell knows the late module holds it).
    await p.page.evaluate(() => {
      window.__pub.length = 0;
    });
    await p.page.evaluate(() => {
      const el = document.querySelector('[data-testid="roofline-context"]');
      el.value = '14';
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
    });
    const shellCtx = () => p.page.evaluate(() => {
      const host = document.querySelector('[data-testid="context-len"]');
      const el = host.matches('input') ? host : host.querySelector('input:not([type=range])');
      return Number(String(el.value).replace(/[^\d.]/g, ''));
    });
    await waitFor(async () => (await shellCtx()) === 16384, 'the shell\'s context field to show 16,384 from the roofline slider');
    await waitFor(async () => new URL(p.page.url()).searchParams.get('ctx') === '16384', 'the URL to record ctx=16384', 3000);
    await p.page.waitForTimeout(800);
    const echoed = await p.page.evaluate(() => window.__pub.slice());
    const shown = await readText(p.page, 'roofline-context-value');
    log(`slider edit: shell field 16384, URL ${new URL(p.page.url()).search}; ${echoed.length} scenario event(s) sent back; roofline shows ${shown}`);
    check(echoed.length === 0, `the late module's own edit was sent back to it ${echoed.length} time(s): ${echoed.join(' | ')}`);
    check(/16,?384/.test(shown), `the roofline section shows ${shown} after its own edit`);
  });
}
