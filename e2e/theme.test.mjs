// Dark theme and locale number formatting (issue 6).
//
// Dark: with the system in dark mode ("Auto", the default) and with the explicit toggle, the
// full page and every embed resolve <html data-theme> to "dark" and stay readable: text
// colour against its effective background has a WCAG contrast ratio of at least 4.5 (3 for
// large text), every visible chart canvas is dark with light pixels on it (axis labels), and
// axe-core finds no serious colour-contrast violation. "Auto" follows a change of the system
// setting without a reload. Screenshots are kept (dark-*).
//
// Numbers: in each language the displayed numbers are written as Intl.NumberFormat writes
// them for that locale (en-US, ko-KR), and Korean adds the parameter count in 억 as the
// course does ("70억 개"), checked against Intl's compact notation for ko-KR.

import { axeViolations, EMBEDS } from './a11y.test.mjs';
import { afterPaint, byId, check, openApp, readText, waitFor } from './app.mjs';

/** WCAG relative luminance and contrast, computed in the page (see `inPage` below). */
const READABILITY = `(() => {
  const parse = (c) => {
    const m = c.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const [r, g, b, a = 1] = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return { r, g, b, a };
  };
  const lum = ({ r, g, b }) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  /** The first opaque background behind an element (the canvas of the page when none). */
  const bgOf = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0.5) return c;
    }
    return parse(getComputedStyle(document.documentElement).backgroundColor) || { r: 255, g: 255, b: 255, a: 1 };
  };
  const failures = [];
  let checked = 0;
  for (const el of document.querySelectorAll('body *')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim().length > 0);
    if (!own) continue;
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    if (r.width === 0 || r.height === 0 || s.visibility === 'hidden' || s.display === 'none') continue;
    if (el.closest('.visually-hidden, [aria-hidden="true"], option, select')) continue;
    const fg = parse(s.color);
    if (!fg) continue;
    const bg = bgOf(el);
    const px = parseFloat(s.fontSize);
    const large = px >= 24 || (px >= 18.66 && Number(s.fontWeight) >= 700);
    const need = large ? 3 : 4.5;
    const got = ratio(fg, bg);
    checked++;
    if (got < need) failures.push(\`\${el.tagName.toLowerCase()}.\${[...el.classList].join('.')} "\${el.textContent.trim().slice(0, 30)}": \${got.toFixed(2)} < \${need}\`);
  }
  const body = ratio(parse(getComputedStyle(document.body).color), bgOf(document.body));
  const pageBg = lum(bgOf(document.body));
  return { failures, checked, body, pageBg, theme: document.documentElement.getAttribute('data-theme') };
})()`;

/** For each visible chart canvas: share of dark pixels and count of light ones. */
const CANVAS_PIXELS = `(() => [...document.querySelectorAll('canvas')].filter((c) => c.width > 0 && c.height > 0 && c.getBoundingClientRect().width > 0).map((c) => {
  const ctx = c.getContext('2d');
  const d = ctx.getImageData(0, 0, c.width, c.height).data;
  let dark = 0, light = 0, n = 0;
  for (let i = 0; i < d.length; i += 4) {
    n++;
    const l = (0.2126 * d[i] + 0.7152 * d[i + 1] + 0.0722 * d[i + 2]) / 255;
    if (d[i + 3] < 128 || l < 0.25) dark++;
    else if (l > 0.7) light++;
  }
  return { id: c.closest('[data-testid]')?.getAttribute('data-testid') || c.getAttribute('aria-label') || '?', darkShare: dark / n, light };
}))()`;

/** Waits until the app shows text and a frame has been painted with it (after `openApp`, which
 * has waited for the first load to end). */
async function settled(page) {
  await waitFor(() => page.evaluate(() => document.body.innerText.replace(/\s/g, '').length > 40), 'the app to render text');
  await afterPaint(page);
}

/** Scrolls through the page so lazily drawn charts are drawn, then back to the top and a frame
 * painted there. Each chart is waited for (up to 1 s, at least a frame on screen) until it
 * reads as drawn in dark, as CANVAS_PIXELS counts: the checks then read it. */
async function scrollThrough(page) {
  await page.evaluate(async () => {
    const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
    const drawnDark = (c) => {
      if (!c.width || !c.height) return false;
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let dark = 0, light = 0, n = 0;
      for (let i = 0; i < d.length; i += 4) {
        n++;
        const l = (0.2126 * d[i] + 0.7152 * d[i + 1] + 0.0722 * d[i + 2]) / 255;
        if (d[i + 3] < 128 || l < 0.25) dark++;
        else if (l > 0.7) light++;
      }
      return dark / n >= 0.5 && light >= 50;
    };
    for (const c of document.querySelectorAll('canvas')) {
      c.scrollIntoView({ block: 'center' });
      // Only the charts CANVAS_PIXELS reads (drawn in a box on the page) are waited for.
      const read = c.width > 0 && c.height > 0 && c.getBoundingClientRect().width > 0;
      const until = performance.now() + 1000;
      do await frame(); while (read && !drawnDark(c) && performance.now() < until);
    }
    window.scrollTo(0, 0);
    await frame();
  });
}

/** All the dark-theme checks on a loaded page; returns failure lines. */
async function darkChecks(page, what) {
  const fails = [];
  const r = await page.evaluate(READABILITY);
  if (r.theme !== 'dark') fails.push(`${what}: <html data-theme="${r.theme}">, expected "dark"`);
  if (!(r.pageBg < 0.05)) fails.push(`${what}: page background luminance ${r.pageBg.toFixed(3)} is not dark`);
  if (!(r.body >= 4.5)) fails.push(`${what}: body text contrast ${r.body.toFixed(2)} < 4.5`);
  if (r.checked < 5) fails.push(`${what}: only ${r.checked} text elements checked`);
  for (const f of r.failures.slice(0, 8)) fails.push(`${what}: low contrast ${f}`);
  await scrollThrough(page);
  const canvases = await page.evaluate(CANVAS_PIXELS);
  for (const c of canvases) {
    if (c.darkShare < 0.5) fails.push(`${what}: chart ${c.id} is mostly light (${(c.darkShare * 100).toFixed(0)} % dark pixels)`);
    if (c.light < 50) fails.push(`${what}: chart ${c.id} has only ${c.light} light pixels (axis labels invisible?)`);
  }
  const axe = (await axeViolations(page)).filter((v) => v.includes('color-contrast'));
  for (const v of axe) fails.push(`${what}: axe ${v}`);
  return { fails, canvases: canvases.length, texts: r.checked, body: r.body };
}

/** Opens a page for dark: `system` = the system prefers dark (theme Auto); else the toggle's
 * choice remembered (set before every load of the page). Load it with `openApp`. */
async function openDark(open, system, viewport) {
  const p = await open(viewport ? { viewport } : undefined);
  await p.page.emulateMedia({ colorScheme: system ? 'dark' : 'light' });
  if (!system) await p.page.addInitScript(() => localStorage.setItem('llmcalc-theme', 'dark'));
  return p;
}

export default function register(runner) {
  for (const system of [true, false]) {
    const how = system ? 'system dark (Auto)' : 'dark toggle';
    runner.test(`theme: the full page is readable in dark (${how})`, async ({ open, server, screenshot, log }) => {
      const p = await open();
      await p.page.emulateMedia({ colorScheme: system ? 'dark' : 'light' });
      const page = await openApp(p, `${server.url}`);
      await settled(page);
      if (!system) {
        // The toggle cycles Auto → Light → Dark.
        await byId(page, 'theme-toggle').click();
        await byId(page, 'theme-toggle').click();
        await waitFor(() => page.evaluate(() => document.documentElement.getAttribute('data-theme') === 'dark'), 'data-theme="dark" after the toggle');
        await page.waitForTimeout(300);
      }
      const r = await darkChecks(page, 'full page');
      await screenshot(page, `dark-full-${system ? 'system' : 'toggle'}`, { fullPage: true });
      log(`${r.texts} text elements (body contrast ${r.body.toFixed(1)}), ${r.canvases} charts`);
      check(r.fails.length === 0, r.fails.join('\n      '));
    }, { timeoutMs: 120000 });

    runner.test(`theme: every embed is readable in dark (${how})`, async ({ open, server, screenshot, log }) => {
      const fails = [];
      // One page for all of them: each embed link is a new document in the same dark setting.
      const p = await openDark(open, system, { width: 640, height: 700 });
      for (const embed of EMBEDS) {
        const page = await openApp(p, `${server.url}?embed=${embed}`);
        await settled(page);
        const r = await darkChecks(page, `embed=${embed}`);
        fails.push(...r.fails);
        await screenshot(page, `dark-embed-${embed}-${system ? 'system' : 'toggle'}`, { fullPage: true });
        log(`${embed}: ${r.texts} texts, ${r.canvases} charts`);
      }
      check(fails.length === 0, fails.join('\n      '));
    }, { timeoutMs: 240000, long: true });
  }

  runner.test('theme: Auto follows the system setting live, charts included', async ({ open, server }) => {
    const p = await open();
    await p.page.emulateMedia({ colorScheme: 'light' });
    const page = await openApp(p, `${server.url}?embed=memory`);
    await settled(page);
    const theme = () => page.evaluate(() => document.documentElement.getAttribute('data-theme'));
    check((await theme()) === 'light', `light system: data-theme "${await theme()}", expected "light"`);
    const before = await page.evaluate(CANVAS_PIXELS);
    check(before.length > 0 && before.every((c) => c.darkShare < 0.5), `light system: charts should be light (${JSON.stringify(before)})`);
    await page.emulateMedia({ colorScheme: 'dark' });
    await waitFor(async () => (await theme()) === 'dark', 'data-theme to follow the system to "dark"');
    await waitFor(async () => (await page.evaluate(CANVAS_PIXELS)).every((c) => c.darkShare >= 0.5), 'the chart to be redrawn dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await waitFor(async () => (await theme()) === 'light', 'data-theme back to "light"');
  });

  for (const [lang, locale] of [['en', 'en-US'], ['ko', 'ko-KR']]) {
    runner.test(`numbers: displayed numbers follow Intl.NumberFormat(${locale})`, async ({ open, server, log }) => {
      const p = await open();
      const page = await openApp(p, `${server.url}?lang=${lang}&ctx=131072&n=1000`);
      await settled(page);
      /** The number at the start of an element's text, and how Intl writes that value. */
      const compare = async (id, opts = {}) => {
        const text = await readText(page, id);
        const shown = text.match(/^-?[\d.,]+/)?.[0] ?? '';
        // The value, read with the separators of the English convention (the app's raw form).
        const value = Number(shown.replace(/,/g, ''));
        const intl = await page.evaluate(([l, v, o]) => new Intl.NumberFormat(l, o).format(v), [locale, value, opts]);
        return { id, shown, intl, ok: shown === intl && Number.isFinite(value) };
      };
      const rows = [
        await compare('params-total'),
        await compare('weights', { maximumFractionDigits: 2 }),
        await compare('kv-per-request', { maximumFractionDigits: 2 }),
      ];
      // The exact byte count in "0.5 MiB (524,288 B)".
      const kvTok = await readText(page, 'kv-per-token');
      const bytes = kvTok.match(/\(([\d.,]+) B\)/)?.[1] ?? '';
      const bytesIntl = await page.evaluate(([l, v]) => new Intl.NumberFormat(l).format(v), [locale, Number(bytes.replace(/,/g, ''))]);
      rows.push({ id: 'kv-per-token bytes', shown: bytes, intl: bytesIntl, ok: bytes === bytesIntl && bytes.length > 3 });
      const fails = rows.filter((r) => !r.ok).map((r) => `${r.id}: shown "${r.shown}", Intl.NumberFormat("${locale}") writes "${r.intl}"`);
      // At least one of them has a group separator, so grouping itself is compared.
      const grouped = await page.evaluate((l) => new Intl.NumberFormat(l).format(1234567), locale);
      if (!rows.some((r) => r.shown.length > 4 && /\D/.test(r.shown.replace(/^\d+\.\d+$/, '')))) fails.push(`no grouped number compared (Intl writes 1234567 as "${grouped}")`);
      // Korean only: the parameter count in 억, as Intl's compact notation writes it for ko-KR.
      const eok = byId(page, 'params-eok');
      if (lang === 'ko') {
        const total = Number((await readText(page, 'params-total')).replace(/\D/g, ''));
        const want = await page.evaluate((v) => new Intl.NumberFormat('ko-KR', { notation: 'compact', maximumFractionDigits: 2 }).format(v), total);
        const got = (await eok.count()) ? await readText(page, 'params-eok') : 'missing';
        if (got !== want) fails.push(`params-eok: shown "${got}", Intl ko-KR compact writes "${want}"`);
        rows.push({ id: 'params-eok', shown: got, intl: want });
      } else if ((await eok.count()) > 0) {
        fails.push('params-eok (억) is shown in English');
      }
      log(rows.map((r) => `${r.id} "${r.shown}"`).join(', '));
      check(fails.length === 0, fails.join('\n      '));
    });
  }
}
