// Issue 18's checks of a page people can move around in: a garbled link gives short notices
// (one line per parameter name with its count, at most five before "show all") and the answer
// stays on the first screen.

import { byId, check, openApp, readNumber, waitFor } from './app.mjs';

/** These tests time frames and layout shifts: the runner gives them the machine alone. */
export const alone = true;

/** A garbled link: 80 copies of one bad parameter, then seven other unknown names. */
function garbledQuery() {
  const parts = [];
  for (let i = 0; i < 80; i += 1) parts.push(`ctx=bad${i}`);
  for (const name of ['aa', 'bb', 'cc', 'dd', 'ee', 'ff', 'gg']) parts.push(`${name}=1`);
  return parts.join('&');
}

/** Widths a person uses: a wide laptop, a small laptop or tablet, a phone. */
const WIDTHS = [1400, 1024, 390];

/** Tables (or their scroll containers) sticking out of their panel, and the page's own
 * horizontal overflow, as sentences (empty when everything fits). */
async function overflowProblems(page) {
  return page.evaluate(() => {
    const out = [];
    const doc = document.documentElement;
    if (doc.scrollWidth > window.innerWidth + 1) out.push(`page scrolls sideways: ${doc.scrollWidth} > ${window.innerWidth}`);
    for (const t of document.querySelectorAll('main table')) {
      if (!t.offsetParent) continue; // hidden (closed details, inactive tab)
      const box = t.closest('.table-scroll, .table-wrap') || t;
      const panel = t.closest('.panel') || document.querySelector('main');
      const b = box.getBoundingClientRect();
      const p = panel.getBoundingClientRect();
      if (b.right > p.right + 1 || b.left < p.left - 1) {
        out.push(`${t.dataset.testid || t.className || 'table'} spans ${Math.round(b.left)}–${Math.round(b.right)} outside its panel ${Math.round(p.left)}–${Math.round(p.right)}`);
      }
    }
    return out;
  });
}

/** True when the element with test id (or id) is at least partly inside the viewport. */
async function inViewport(page, selector) {
  return page.evaluate((sel) => {
    const el = document.querySelector(sel);
    if (!el) return false;
    const r = el.getBoundingClientRect();
    return r.bottom > 0 && r.top < window.innerHeight && r.width > 0;
  }, selector);
}

/** Registers the tests with the runner. */
export default function register(runner) {
  for (const width of WIDTHS) {
    runner.test(`at ${width} px the inputs stay reachable, the index jumps, tables fit`, async ({ open, server, screenshot, log }) => {
      const p = await open({ viewport: { width, height: width < 600 ? 800 : 1000 } });
      const page = await openApp(p, server.url);
      await waitFor(async () => (await readNumber(page, 'params-total')) > 0, 'params-total');
      const before = new URL(page.url()).search;
      await screenshot(page, `layout-${width}-top`);
      // Jump to the planner from the index, as a reader would.
      await byId(page, 'nav-planner-title').click();
      await waitFor(() => inViewport(page, '#planner-title'), 'the planner heading in view after the jump');
      await waitFor(async () => (await byId(page, 'nav-planner-title').getAttribute('aria-current')) === 'true', 'the index to mark the planner');
      const after = new URL(page.url()).search;
      check(after === before, `navigation changed the URL's scenario: ${before} -> ${after}`);
      // The inputs: visible beside the planner on a wide screen, one click away on a narrow one.
      if (width > 960) {
        check(await inViewport(page, '#model-title'), 'the model input is off screen while reading the planner');
      } else {
        check(await inViewport(page, '[data-testid="section-index"]'), 'the section index is off screen while reading the planner');
        await byId(page, 'nav-model-title').click();
        await waitFor(() => inViewport(page, '#model-title'), 'the model input after "Inputs"');
      }
      await screenshot(page, `layout-${width}-planner`, { fullPage: false });
      // Every table inside its panel, and no sideways page scroll, all the way down.
      await byId(page, 'nav-perf-title').click();
      await waitFor(() => inViewport(page, '#perf-title'), 'the performance heading in view');
      await screenshot(page, `layout-${width}-perf`, { fullPage: false });
      const problems = await overflowProblems(page);
      check(problems.length === 0, `at ${width} px: ${problems.join('; ')}`);
      log(`${width} px: index jumps, inputs reachable, tables fit, no sideways scroll`);
    });
  }

  runner.test('a garbled link gives one short notice per parameter and keeps the answer on screen', async ({ open, server, screenshot, log }) => {
    const p = await open({ viewport: { width: 1400, height: 1000 } });
    const page = await openApp(p, `${server.url}?${garbledQuery()}`);
    const params = await waitFor(async () => {
      const n = await readNumber(page, 'params-total');
      return Number.isFinite(n) && n > 0 ? n : null;
    }, 'params-total to show a number');
    const lines = await byId(page, 'notice').allInnerTexts();
    check(lines.length === 5, `expected 5 notice lines before "show all", got ${lines.length}: ${lines.join(' | ')}`);
    const ctx = lines.filter((l) => l.includes('"ctx"'));
    check(ctx.length === 1 && ctx[0].includes('80'), `one "ctx" line with its count 80 expected: ${ctx.join(' | ')}`);
    // The answer is on the first screen: the parameter count's box starts above the fold.
    const box = await byId(page, 'params-total').first().boundingBox();
    check(box && box.y + box.height <= 1000, `params-total below the first screen: ${JSON.stringify(box)}`);
    await screenshot(page, 'notices-garbled-link', { fullPage: false });
    // "Show all" lists the eight parameter names, once each.
    await byId(page, 'notice-more').click();
    const all = await waitFor(async () => {
      const l = await byId(page, 'notice').allInnerTexts();
      return l.length > 5 ? l : null;
    }, 'all notices after "show all"');
    check(all.length === 8, `expected 8 notice lines after "show all", got ${all.length}`);
    log(`garbled link: ${lines.length} lines shown of ${all.length}; params-total ${params} at y=${Math.round(box.y)}`);
  });
}
