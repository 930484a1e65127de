// Accessibility in the browser: axe-core (from e2e/node_modules, injected through the
// DevTools protocol so the page's CSP stays untouched) finds no serious or critical violation
// on the full page in both languages and in every embed mode; every control is reachable with
// Tab and shows a focus ring; every chart canvas has a label and a data-table alternative.

import { readFileSync } from 'node:fs';
import { repoPath } from './harness.mjs';
import { afterPaint, byId, openAllDetails, check, openApp, waitFor } from './app.mjs';

/** The embed widgets (`?embed=<id>`), as in core::scenario::EmbedWidget. */
export const EMBEDS = ['memory', 'kv', 'batch', 'cost', 'roofline', 'latency', 'matmul', 'planner'];

const AXE_SOURCE = readFileSync(repoPath('e2e/node_modules/axe-core/axe.min.js'), 'utf8');

/** Runs axe-core on the page; returns the serious/critical violations, one line each. */
export async function axeViolations(page) {
  const loaded = await page.evaluate(`(() => { ${AXE_SOURCE}\n; return typeof axe; })()`);
  check(loaded === 'object', `axe-core did not load (typeof axe = ${loaded})`);
  const violations = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const res = await axe.run(document, { resultTypes: ['violations'] });
    return res.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')),
      count: v.nodes.length,
    }));
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id} (${v.count}×): ${v.help} — ${v.nodes.join(' | ')}`);
}

/** Waits until the app shows a result (the first number rendered). */
async function settled(page) {
  await waitFor(
    () => page.evaluate(() => document.body.innerText.replace(/\s/g, '').length > 40),
    'the app to render text',
  );
  await afterPaint(page);
}

export default function register(runner) {
  for (const lang of ['en', 'ko']) {
    runner.test(`a11y: axe finds no serious violation on the full page (${lang})`, async ({ open, server, screenshot, log }) => {
      const p = await open();
      const page = await openApp(p, `${server.url}?lang=${lang}`);
      await settled(page);
      // Open every disclosure (math panels, data tables) so their contents are checked too.
      await openAllDetails(page);
      const bad = await axeViolations(page);
      await screenshot(page, `axe-full-${lang}`);
      log(`${bad.length} serious/critical violation(s)`);
      check(bad.length === 0, `axe (${lang}):\n      ${bad.join('\n      ')}`);
    });
  }

  runner.test('a11y: axe finds no serious violation in any embed mode', async ({ open, server, screenshot, log }) => {
    const failures = [];
    // One page for all of them: each embed link is a new document.
    const p = await open({ viewport: { width: 720, height: 600 } });
    for (const embed of EMBEDS) {
      const page = await openApp(p, `${server.url}?embed=${embed}`);
      await settled(page);
      const bad = await axeViolations(page);
      await screenshot(page, `axe-embed-${embed}`);
      if (bad.length) failures.push(`embed=${embed}:\n        ${bad.join('\n        ')}`);
    }
    log(`${EMBEDS.length} embed modes checked`);
    check(failures.length === 0, failures.join('\n      '));
  }, { long: true });

  runner.test('a11y: every control is reachable with Tab and shows a focus ring', async ({ open, server, log }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    await settled(page);
    // Controls a keyboard user must reach (radios: one per group is enough).
    const expected = await page.evaluate(() => {
      const visible = (el) => {
        const r = el.getBoundingClientRect();
        const s = getComputedStyle(el);
        // checkVisibility: false inside a closed <details> (content-visibility: hidden).
        const shown = el.checkVisibility ? el.checkVisibility({ visibilityProperty: true }) : true;
        return shown && r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
      };
      const els = [...document.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex]')]
        .filter((el) => !el.disabled && el.tabIndex >= 0 && visible(el) && !(el.type === 'radio'));
      els.forEach((el, i) => el.setAttribute('data-a11y-id', String(i)));
      const groups = new Set([...document.querySelectorAll('input[type=radio]')].filter(visible).map((r) => r.name));
      return { count: els.length, radioGroups: groups.size };
    });
    const seen = new Set();
    const radioGroups = new Set();
    const noRing = [];
    const limit = expected.count + expected.radioGroups + 20;
    for (let i = 0; i < limit; i += 1) {
      await page.keyboard.press('Tab');
      const info = await page.evaluate(() => {
        const el = document.activeElement;
        if (!el || el === document.body) return null;
        const s = getComputedStyle(el);
        const ring = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || (s.boxShadow && s.boxShadow !== 'none');
        return {
          id: el.getAttribute('data-a11y-id'),
          radio: el.type === 'radio' ? el.name : null,
          ring,
          what: `${el.tagName.toLowerCase()}${el.getAttribute('data-testid') ? `[data-testid=${el.getAttribute('data-testid')}]` : ''}`,
        };
      });
      if (!info) continue;
      if (info.id !== null) seen.add(info.id);
      if (info.radio) radioGroups.add(info.radio);
      if (!info.ring) noRing.push(info.what);
    }
    const missed = await page.evaluate((ids) => {
      return [...document.querySelectorAll('[data-a11y-id]')]
        .filter((el) => !ids.includes(el.getAttribute('data-a11y-id')))
        .slice(0, 10)
        .map((el) => `${el.tagName.toLowerCase()} ${el.getAttribute('data-testid') || el.textContent.trim().slice(0, 30)}`);
    }, [...seen]);
    log(`${seen.size}/${expected.count} controls and ${radioGroups.size}/${expected.radioGroups} radio groups reached with Tab`);
    check(missed.length === 0, `not reachable with Tab: ${missed.join('; ')}`);
    check(radioGroups.size >= expected.radioGroups, `radio groups reached ${radioGroups.size}/${expected.radioGroups}`);
    check(noRing.length === 0, `no visible focus ring on: ${[...new Set(noRing)].slice(0, 10).join(', ')}`);
  });

  runner.test('a11y: inputs have labels, charts have a label and a data table', async ({ open, server, log }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    await settled(page);
    const report = await page.evaluate(() => {
      const unlabelled = [...document.querySelectorAll('input, select, textarea')]
        .filter((el) => el.type !== 'hidden')
        .filter((el) => {
          const byFor = el.id && document.querySelector(`label[for="${CSS.escape(el.id)}"]`);
          return !(el.labels?.length || byFor || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby') || el.title);
        })
        .map((el) => el.getAttribute('data-testid') || el.name || el.outerHTML.slice(0, 60));
      const charts = [...document.querySelectorAll('canvas')].map((c) => {
        const figure = c.closest('figure, .chart-box, section');
        return {
          label: c.getAttribute('aria-label') || c.getAttribute('aria-labelledby') || '',
          table: Boolean(figure && figure.querySelector('table')),
          id: figure?.getAttribute('data-testid') || '',
        };
      });
      return { unlabelled, charts };
    });
    log(`${report.charts.length} chart canvases`);
    check(report.unlabelled.length === 0, `form controls without a label: ${report.unlabelled.join(', ')}`);
    check(report.charts.length > 0, 'no chart canvas on the page');
    const noLabel = report.charts.filter((c) => !c.label.trim()).map((c) => c.id);
    const noTable = report.charts.filter((c) => !c.table).map((c) => c.id);
    check(noLabel.length === 0, `charts without aria-label: ${noLabel.join(', ')}`);
    check(noTable.length === 0, `charts without a data table: ${noTable.join(', ')}`);
    check((await byId(page, 'export-csv').count()) === 1, 'the export bar is missing');
  });
}
