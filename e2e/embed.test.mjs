// Issue 6's embed checks: each embed mode, framed by a course page at a fixed size, renders its
// widget alone (no page chrome, no full-page inputs), reports its height to the parent with
// postMessage `{type: "llmcalc:height", height}`, and links back to the full calculator with the
// same scenario (the query without `embed=`). The host then grows the frame to the reported
// height, the whole widget must fit, and a screenshot of the host page per mode is kept.
//
// The host page is a file written at test time into the served temp folder, next to the app
// (inside the sub-path, so its requests count as the app's own), with no CSP of its own.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SUB_PATH } from './harness.mjs';
import { byId, check, openApp, readNumber, setValue, waitFor } from './app.mjs';

/** The embed widgets, as in core::scenario::EmbedWidget. */
const EMBEDS = ['memory', 'kv', 'batch', 'latency', 'cost', 'roofline', 'matmul', 'planner'];

/** A scenario that differs from the defaults (A10G + L40S, 4,096 tokens, 1 request), so the
 * back-link must carry every part of it. */
const SCENARIO = [['gpu', 'h100-sxm'], ['gpu', 'a10g'], ['ctx', '8192'], ['n', '3']];

/** Test ids of the full page's chrome and inputs, none of which an embed may show. */
const CHROME = ['lang-toggle', 'theme-toggle', 'model-preset', 'model-paste', 'model-mode-preset', 'gpu-picker', 'gpu-search', 'custom-gpu-form', 'context-len', 'concurrency', 'export-bar'];

/** Writes the host page for one mode into the served folder; returns its URL. */
function writeHost(server, mode) {
  const dir = join(server.root, ...SUB_PATH.split('/').filter(Boolean));
  const query = new URLSearchParams([...SCENARIO, ['embed', mode]]).toString();
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Course page: ${mode}</title>
<style>body{font-family:sans-serif;margin:16px;background:#f4f1ea}iframe{border:1px solid #888;display:block}</style>
<script>
  window.__heights = [];
  window.addEventListener('message', (e) => {
    const f = document.getElementById('calc');
    if (f && e.source === f.contentWindow && e.data && e.data.type === 'llmcalc:height') {
      window.__heights.push({ height: e.data.height, origin: e.origin });
    }
  });
</script></head>
<body><h1>Chapter 3: ${mode}</h1><p>Text of the course around the widget.</p>
<iframe id="calc" title="LLM calculator: ${mode}" src="./index.html?${query}" width="640" height="200"></iframe>
<p>After the widget.</p></body></html>`;
  const file = `embed-host-${mode}.html`;
  writeFileSync(join(dir, file), html);
  return { url: `${server.url}${file}`, query };
}

/**
 * Loads every mode in its host page and checks it, keeps a screenshot of it, then opens a
 * closed <details> in the widget and expects a new, larger height message.
 */
async function checkModes({ open, server, screenshot, log }) {
    const failures = [];
    const lines = [];
    const p = await open({ viewport: { width: 800, height: 700 } });
    const page = p.page;
    for (const mode of EMBEDS) {
      const { url, query } = writeHost(server, mode);
      const fail = (m) => failures.push(`embed=${mode}: ${m}`);
      await page.goto(url, { waitUntil: 'load', timeout: 30000 });
      const frame = page.frameLocator('#calc');
      try {
        await frame.locator(`[data-testid="embed-${mode}"]`).waitFor({ state: 'visible', timeout: 30000 });
      } catch (err) {
        fail(`[data-testid="embed-${mode}"] never showed (${err.message.split('\n')[0]})`);
        continue;
      }
      // A widget from the late module (src/ui/late.rs) loads it at once: wait until it is in.
      try {
        await waitFor(async () => (await frame.locator('[data-late-slot]:not([data-late-ready])').count()) === 0, 'the late module in the widget', 20000);
      } catch (err) {
        fail(err.message);
      }
      // The height message.
      let heights = [];
      try {
        heights = await waitFor(async () => {
          const h = await page.evaluate(() => window.__heights);
          return h.length > 0 ? h : null;
        }, 'a llmcalc:height message from the frame', 10000);
      } catch (err) {
        fail(err.message);
      }
      // The widget may still grow after its first message (a chart or a late part taking its
      // height in a later frame), and each growth sends a new one: read the messages once the
      // frame's document has kept its height for 500 ms, so the checks below see the settled
      // widget and its last report (not a report the widget has since replaced).
      if (heights.length) {
        let seen = { h: -1, since: Date.now() };
        await waitFor(async () => {
          const h = await page.frames().find((f) => f.url().includes(`embed=${mode}`))?.evaluate(() => document.documentElement.scrollHeight);
          if (h !== seen.h) seen = { h, since: Date.now() };
          return Date.now() - seen.since >= 500;
        }, 'the widget to keep its height for 500 ms', 10000).catch((err) => fail(err.message));
        heights = await page.evaluate(() => window.__heights);
      }
      // From here on the framed app must not fetch anything (its own files are loaded once).
      await page.waitForLoadState('networkidle', { timeout: 10000 }).catch(() => {});
      p.markLoaded();
      // No transient height: a course page that sizes its frame on every message would jump
      // (the widget sends a height once it has held for a frame: src/ui/embed.rs).
      const hs = heights.map((h) => h.height);
      const dip = hs.findIndex((h, i) => i > 0 && i + 1 < hs.length && h < hs[i - 1] && hs.slice(i + 1).some((x) => x > h));
      if (dip > 0) fail(`the reported height went down and up again (${hs.join(' → ')}): a frame sized on each message would jump`);
      const last = heights.at(-1);
      if (last) {
        if (!(typeof last.height === 'number' && Number.isFinite(last.height) && last.height > 0)) fail(`height ${JSON.stringify(last.height)} is not a positive number`);
        if (last.origin !== server.origin) fail(`message origin ${last.origin}, expected ${server.origin}`);
        // The reported height is the frame document's own height (what the parent should size to).
        const own = await page.frames().find((f) => f.url().includes(`embed=${mode}`))?.evaluate(() => document.documentElement.scrollHeight);
        if (own !== undefined && Math.abs(own - last.height) > 2 && heights.every((h) => Math.abs(own - h.height) > 2)) {
          fail(`reported heights ${heights.map((h) => h.height).join(', ')} but the frame's document is ${own} px tall`);
        }
      }
      // Alone: the widget, not the page.
      const inFrame = await page.frames().find((f) => f.url().includes(`embed=${mode}`));
      if (!inFrame) {
        fail('frame not found');
        continue;
      }
      const info = await inFrame.evaluate((chrome) => ({
        present: chrome.filter((id) => document.querySelector(`[data-testid="${id}"]`)),
        header: !!document.querySelector('header, .layout, footer'),
        embeds: [...document.querySelectorAll('[data-testid^="embed-"]')].map((e) => e.getAttribute('data-testid')),
        links: [...document.querySelectorAll('.embed-link a, a')].map((a) => ({ href: a.href, target: a.target, text: a.textContent.trim() })),
        text: document.body.innerText.length,
      }), CHROME);
      if (info.present.length) fail(`page chrome/inputs inside the frame: ${info.present.join(', ')}`);
      if (info.header) fail('the full page header/layout/footer is inside the frame');
      if (info.embeds.length !== 1) fail(`expected one embed root, found ${info.embeds.join(', ') || 'none'}`);
      if (info.text < 20) fail(`the widget shows only ${info.text} characters of text`);
      // The back-link: same path, same scenario, no embed=.
      const want = new URLSearchParams(SCENARIO);
      const back = info.links.find((l) => {
        try {
          const u = new URL(l.href);
          return u.origin === server.origin && u.pathname.startsWith(SUB_PATH) && !u.searchParams.has('embed');
        } catch {
          return false;
        }
      });
      if (!back) {
        fail(`no link back to the full calculator without embed= (links: ${JSON.stringify(info.links)})`);
      } else {
        const got = new URL(back.href).searchParams;
        const norm = (sp) => [...sp.entries()].map(([k, v]) => `${k}=${v}`).sort().join('&');
        if (norm(got) !== norm(want)) fail(`back-link query "${new URL(back.href).search}" should carry the scenario "${want.toString()}" (from ?${query})`);
        if (back.target !== '_blank') fail(`back-link target is "${back.target}", expected _blank (the course page stays)`);
      }
      // Grow the frame to the reported height, as a course page's listener would: the whole
      // widget must then fit (no vertical overflow left inside the frame).
      if (last && last.height > 0) {
        await page.evaluate((h) => {
          document.getElementById('calc').style.height = `${h}px`;
        }, last.height);
        // Until the frame's window has the new height, then a frame painted in it (charts take
        // their size in their first frame).
        await waitFor(async () => Math.abs((await inFrame.evaluate(() => window.innerHeight)) - last.height) <= 1, 'the frame to take the reported height', 3000).catch(() => {});
        await inFrame.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
        const fit = await inFrame.evaluate(() => ({ scroll: document.documentElement.scrollHeight, inner: window.innerHeight }));
        if (fit.scroll > fit.inner + 2) fail(`after growing the frame to the reported ${last.height} px its content is still ${fit.scroll} px tall (frame ${fit.inner} px)`);
      }
      // Nothing may spill out sideways at the course page's 640 px.
      const wide = await inFrame.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: document.documentElement.clientWidth }));
      if (wide.scroll > wide.inner + 1) fail(`the widget is ${wide.scroll} px wide in a 640 px frame (${wide.inner} px of room): it scrolls sideways`);
      // Keep a picture of the course page with the frame.
      await screenshot(page, `host-${mode}`);
      lines.push(`${mode}: height ${heights.map((h) => h.height).join('→') || 'none'} (${heights.length} message(s)), back-link ${back ? new URL(back.href).search : 'missing'}`);
      // When the widget grows inside the frame (a reader opens "show the data as a table"),
      // a new, larger height must be sent so the frame can grow with it.
      // (Read now: the screenshot above must not count as growth.)
      const count = (await page.evaluate(() => window.__heights)).length;
      const opened = await inFrame.evaluate(() => {
        const d = document.querySelector('details:not([open])');
        if (!d) return null;
        const before = document.documentElement.scrollHeight;
        d.open = true;
        return { before, after: document.documentElement.scrollHeight, what: d.querySelector('summary')?.textContent.trim() };
      });
      if (opened && opened.after > opened.before + 2) {
        const grown = await waitFor(async () => {
          const h = await page.evaluate(() => window.__heights);
          return h.length > count ? h.at(-1) : null;
        }, 'a new height message', 3000).catch(() => null);
        if (!grown) fail(`opening "${opened.what}" grew the widget from ${opened.before} to ${opened.after} px but no new llmcalc:height message came`);
        else if (grown.height < opened.after - 2) fail(`opening "${opened.what}": new height ${grown.height} < content ${opened.after}`);
        else lines.push(`${mode}: opening "${opened.what}" sent ${grown.height} px`);
      } else {
        fail('no closed <details> that grows the widget was found to open');
      }
    }
    for (const l of lines) log(l);
    check(failures.length === 0, `${failures.length} embed check(s) failed:\n${failures.join('\n')}`);
}

export default function register(runner) {
  // One load of each mode for both: its checks and screenshot, then the growth (which changes it).
  runner.test('embed: every mode renders alone in an iframe, reports its height (again when it grows inside the frame) and links back', (ctx) => checkModes(ctx), { timeoutMs: 240000, long: true });

  // Each embed shows the inputs that drive it (a strip above the widget), and they work as on
  // the full page: they change the result and the URL. `embed_inputs=0` hides the strip.
  runner.test('embed: each widget has its own inputs, and they drive it', async ({ open, server, screenshot, log }) => {
    const failures = [];
    /** Inputs every strip must have, and those that depend on the widget. */
    const needs = { memory: ['strip-ctx', 'strip-n', 'strip-gpu'], kv: ['strip-ctx', 'strip-n'], batch: ['strip-ctx'], cost: ['strip-gpu'], latency: ['strip-batch', 'strip-in', 'strip-out'], roofline: ['strip-gpu'], matmul: [], planner: [] };
    // One page for every link below: each is a new document.
    const p = await open({ viewport: { width: 640, height: 700 } });
    for (const mode of EMBEDS) {
      const page = await openApp(p, `${server.url}?embed=${mode}`);
      const want = ['strip-model', ...needs[mode]];
      const missing = [];
      for (const id of want) if ((await byId(page, id).count()) !== 1) missing.push(id);
      if (missing.length) failures.push(`embed=${mode}: missing ${missing.join(', ')} in the input strip`);
      // Every control of the strip has a label (its accessible name is not empty).
      const unnamed = await page.evaluate(() => [...document.querySelectorAll('[data-testid="input-strip"] input, [data-testid="input-strip"] select')]
        .filter((el) => !(el.labels && el.labels.length && el.labels[0].textContent.trim()) && !el.getAttribute('aria-label'))
        .map((el) => el.id));
      if (unnamed.length) failures.push(`embed=${mode}: unlabelled inputs ${unnamed.join(', ')}`);
      const wide = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      if (wide > 1) failures.push(`embed=${mode}: ${wide} px wider than a 640 px frame`);
    }
    // The KV cache of one request is proportional to its length: doubling the context in the
    // strip doubles it, and the URL carries the new length.
    {
      const page = await openApp(p, `${server.url}?embed=kv&ctx=4096`);
      const bytesOf = async () => {
        const t = await page.evaluate(() => document.querySelector('[data-testid="kv-per-request"]')?.textContent ?? '');
        const m = t.match(/([\d.,]+) GB/);
        return m ? Number(m[1].replace(/,/g, '')) : NaN;
      };
      const before = await bytesOf();
      await setValue(page, 'strip-ctx', '8192');
      const after = await waitFor(async () => {
        const v = await bytesOf();
        return Math.abs(v - 2 * before) <= 0.011 * 2 ? v : null;
      }, `kv-per-request to double from ${before} GB`, 5000).catch((e) => { failures.push(`embed=kv: ${e.message}`); return NaN; });
      // Typing is written to the URL once the edit settles (ui::state::URL_SETTLE_MS).
      const urlOk = () => {
        const u = new URL(page.url());
        return u.searchParams.get('ctx') === '8192' && u.searchParams.get('embed') === 'kv';
      };
      await waitFor(urlOk, 'ctx=8192 in the URL', 3000).catch(() => failures.push(`embed=kv: URL after editing is ${new URL(page.url()).search}`));
      await screenshot(page, 'embed-kv-inputs');
      log(`kv: ${before} GB → ${after} GB at twice the context; URL ${new URL(page.url()).search}`);
      // The GPU select swaps the first compared GPU (a new history entry), and the fit follows.
      const gpuIds = await page.evaluate(() => [...document.querySelectorAll('[data-testid="strip-gpu"] option')].map((o) => o.value).filter(Boolean));
      const current = await page.evaluate(() => document.querySelector('[data-testid="strip-gpu"]').value);
      const other = gpuIds.find((g) => g !== current);
      await setValue(page, 'strip-gpu', other);
      await waitFor(async () => new URL(page.url()).searchParams.getAll('gpu')[0] === other, `the URL's first gpu to become ${other}`, 5000)
        .catch((e) => failures.push(`embed=kv: ${e.message} (URL ${page.url()})`));
      const requests = await readNumber(page, `max-requests-${other}`).catch(() => NaN);
      if (!Number.isFinite(requests)) failures.push(`embed=kv: no max-requests-${other} after choosing it`);
    }
    // A fixed figure: no strip, and the back-link does not carry the option.
    {
      const page = await openApp(p, `${server.url}?embed=memory&embed_inputs=0`);
      await byId(page, 'embed-memory').waitFor({ state: 'visible' });
      if ((await byId(page, 'input-strip').count()) !== 0) failures.push('embed_inputs=0 still shows the input strip');
      const notices = await page.evaluate(() => document.querySelectorAll('[data-testid="notice"]').length);
      if (notices) failures.push(`embed_inputs=0 shows ${notices} notice(s)`);
      const back = await page.evaluate(() => document.querySelector('.embed-link a')?.href ?? '');
      if (!back || new URL(back).searchParams.has('embed_inputs') || new URL(back).searchParams.has('embed')) failures.push(`back-link ${back} should drop embed and embed_inputs`);
    }
    check(failures.length === 0, failures.join('\n      '));
  }, { timeoutMs: 240000, long: true });
}
