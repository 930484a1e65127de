// Page helpers for the calculator's end-to-end tests and benchmarks. Every element is found by
// its `data-testid` (the contract with src/ui/; see e2e/README.md for the list).

import { sleep } from './harness.mjs';

/** Test ids of the chart canvases that must show drawn pixels. */
export const CHART_IDS = ['chart-memory', 'chart-kv', 'chart-batch', 'chart-roofline'];

/** Polls `fn` until it returns a truthy value; throws `what` after `timeoutMs`. */
export async function waitFor(fn, what, timeoutMs = 10000, everyMs = 50) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const detail = last instanceof Error ? `: ${last.message}` : last === undefined ? '' : ` (last: ${JSON.stringify(last)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await sleep(everyMs);
  }
}

/** Throws `message` unless `cond` holds. */
export function check(cond, message) {
  if (!cond) throw new Error(message);
}

/** Requests in flight per recorded page (`open()`'s `p`), counted from its first `netOf`. */
const NETWORK = new WeakMap();

/** Starts (once) counting the requests in flight in `p`'s context (every request the harness
 * records: the page's, its workers' and the offline cache's), and when the last began or ended. */
function netOf(p) {
  let n = NETWORK.get(p);
  if (!n) {
    n = { inflight: new Set(), last: Date.now() };
    const begin = (req) => {
      n.inflight.add(req);
      n.last = Date.now();
    };
    const end = (req) => {
      n.inflight.delete(req);
      n.last = Date.now();
    };
    p.context.on('request', begin);
    p.context.on('requestfinished', end);
    p.context.on('requestfailed', end);
    NETWORK.set(p, n);
  }
  return n;
}

/** How long the network must have been quiet before the first load counts as ended. */
const QUIET_MS = 250;

/**
 * Waits (bounded) until `p` has no request in flight and none has begun or ended for
 * `QUIET_MS`: the end of the first load once the app, the late module and the offline cache are
 * in (what Playwright's `networkidle` waits for, with 500 ms of quiet). Marking the page loaded
 * earlier can only make more requests count as "after load", never fewer.
 */
async function networkQuiet(p, timeoutMs = 10000) {
  const n = netOf(p);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && (n.inflight.size > 0 || Date.now() - n.last < QUIET_MS)) await sleep(25);
}

/**
 * Waits (bounded) until the offline service worker, if the page registered one, has finished
 * installing: its install step caches the app's own files, and those fetches belong to the
 * first load, not to "after load".
 */
async function serviceWorkerSettled(p) {
  const page = p.page;
  await page
    .evaluate(async () => {
      if (!('serviceWorker' in navigator)) return;
      // An embed never registers one (src/ui/offline.rs): nothing to wait for.
      if (document.querySelector('main.embed[data-testid^="embed-"]')) return;
      const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
      let reg;
      for (let i = 0; i < 20 && !reg; i++) {
        reg = await navigator.serviceWorker.getRegistration();
        if (!reg) await sleep(50);
      }
      if (!reg) return;
      await Promise.race([navigator.serviceWorker.ready, sleep(10000)]);
    })
    .catch(() => {});
  await networkQuiet(p);
}

/**
 * Waits (bounded) until the late module (src/ui/late.rs: the analysis sections, imported after
 * the first answer) has mounted into every slot of the page, or has said it failed: its files
 * belong to the first load, not to "after load".
 */
export async function lateSettled(page, timeoutMs = 20000) {
  await page
    .waitForFunction(
      () =>
        document.querySelector('[data-testid="late-failed"]') !== null ||
        document.querySelectorAll('[data-late-slot]:not([data-late-ready])').length === 0,
      null,
      { timeout: timeoutMs, polling: 50 },
    )
    .catch(() => {});
}

/**
 * Resolves once the page has painted a frame after this call (two animation frames): what a
 * person could have seen. A measurement taken in a task right after the DOM changed would see
 * the layout before the frame's ResizeObserver callbacks (a chart's canvas takes its height in
 * the first one, src/ui/chart_canvas/mod.rs), which is never painted.
 */
export async function afterPaint(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
}

/**
 * Opens every closed <details> of the page (math panels, data tables, which build their
 * contents in their `toggle` handlers) and waits until each has had its `toggle` event (at
 * most 2 s) and a frame has been painted after them.
 */
export async function openAllDetails(page) {
  await page.evaluate(async () => {
    const toggled = [...document.querySelectorAll('details:not([open])')].map((d) => {
      const seen = new Promise((r) => d.addEventListener('toggle', () => r(), { once: true }));
      d.open = true;
      return seen;
    });
    await Promise.race([Promise.all(toggled), new Promise((r) => setTimeout(r, 2000))]);
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
  });
}

/**
 * Opens `url` and waits until the app has mounted (`app-root` visible), the late module is in
 * and the network is quiet (`networkQuiet`), then for the offline cache; then marks the page
 * loaded, so any later request fails the test.
 */
export async function openApp(p, url) {
  netOf(p);
  await p.page.goto(url, { waitUntil: 'load', timeout: 30000 });
  await p.page.getByTestId('app-root').waitFor({ state: 'visible', timeout: 30000 });
  await lateSettled(p.page);
  await networkQuiet(p);
  await serviceWorkerSettled(p);
  p.markLoaded();
  return p.page;
}

/** Reloads the page and waits for the app again (a reload is a new first load). */
export async function reloadApp(p) {
  netOf(p);
  await p.page.reload({ waitUntil: 'load', timeout: 30000 });
  await p.page.getByTestId('app-root').waitFor({ state: 'visible', timeout: 30000 });
  await lateSettled(p.page);
  await networkQuiet(p);
  await serviceWorkerSettled(p);
  p.markLoaded();
  return p.page;
}

/** The element with this test id (exactly one expected). */
export function byId(page, id) {
  return page.locator(`[data-testid="${id}"]`);
}

/** True when an element with this test id exists and is visible. */
export async function isVisible(page, id) {
  const loc = byId(page, id);
  return (await loc.count()) > 0 && (await loc.first().isVisible());
}

/**
 * The number an output shows: its `data-value` attribute when present (raw, unformatted),
 * else the first number in its text ("6,738,415,616", "0.5 MiB", "4 requests").
 */
export async function readNumber(page, id) {
  const loc = byId(page, id).first();
  const raw = await loc.getAttribute('data-value', { timeout: 5000 });
  if (raw !== null && raw.trim() !== '') return Number(raw);
  const text = await loc.innerText({ timeout: 5000 });
  const m = text.replace(/\u00a0/g, ' ').match(/-?\d[\d,]*(\.\d+)?(e[+-]?\d+)?/i);
  return m ? Number(m[0].replace(/,/g, '')) : NaN;
}

/** The visible text of an element. */
export async function readText(page, id) {
  return (await byId(page, id).first().innerText({ timeout: 5000 })).trim();
}

/**
 * Scrolls to the serving section and waits for its sweep: the summary once it names a
 * saturation rate (the sweep is done), returned as text.
 */
export async function servingSweepSummary(page, what) {
  await page.evaluate(() => document.getElementById('serving-title')?.scrollIntoView());
  return waitFor(async () => {
    if ((await byId(page, 'serving-summary').count()) === 0) return null;
    const t = await readText(page, 'serving-summary');
    return /saturates at/.test(t) ? t : null;
  }, what, 120000, 200);
}

/**
 * Sets a form control by test id, as a user typing would: the element itself when it is an
 * input/select/textarea, else the first such control inside it (preferring a number or text
 * field over a slider). Fires `input` and `change`.
 */
export async function setValue(page, id, value) {
  const loc = byId(page, id).first();
  await loc.waitFor({ state: 'attached', timeout: 10000 });
  const target = await loc.evaluate((el) => (['INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName) ? 'self' : 'inner'));
  const control = target === 'self' ? loc : loc.locator('input:not([type=range]), select, textarea, input').first();
  const info = await control.evaluate((el) => ({ tag: el.tagName, type: el.type }));
  if (info.tag === 'SELECT') {
    await control.selectOption(String(value));
  } else if (info.type === 'range' || info.type === 'checkbox') {
    await control.evaluate((el, v) => {
      if (el.type === 'checkbox') el.checked = Boolean(v);
      else el.value = String(v);
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
    }, value);
  } else {
    await control.fill(String(value));
    await control.dispatchEvent('change');
  }
}

/**
 * Switches the model input to a mode (`preset`, `paste`, `quick`) by clicking
 * `model-mode-<mode>` when the page has such a switch and it is not already chosen.
 */
export async function modelMode(page, mode) {
  const button = byId(page, `model-mode-${mode}`).first();
  if ((await button.count()) === 0) return;
  const on = await button.evaluate((el) => el.getAttribute('aria-checked') === 'true' || el.getAttribute('aria-pressed') === 'true' || el.checked === true);
  if (!on) await button.click();
}

/** Pastes text into the config text area (fires input like typing would). */
export async function pasteConfig(page, text) {
  await modelMode(page, 'paste');
  await setValue(page, 'model-paste', text);
}

/** Chooses a preset by its id (the option's value). */
export async function choosePreset(page, id) {
  await modelMode(page, 'preset');
  await setValue(page, 'model-preset', id);
}

/** Ids of the GPUs the picker offers (`gpu-option-<id>` elements or `<option>` values). */
export async function gpuOptions(page) {
  const picker = byId(page, 'gpu-picker').first();
  return picker.evaluate((el) => {
    if (el.tagName === 'SELECT') return [...el.options].map((o) => o.value);
    return [...el.querySelectorAll('[data-testid^="gpu-option-"]')].map((o) => o.getAttribute('data-testid').slice('gpu-option-'.length));
  });
}

/** Ids of the GPUs currently selected: `gpu-selected-<id>` chips, else pressed options. */
export async function selectedGpus(page) {
  return page.evaluate(() => {
    const chips = [...document.querySelectorAll('[data-testid^="gpu-selected-"]')];
    if (chips.length > 0) return chips.map((c) => c.getAttribute('data-testid').slice('gpu-selected-'.length));
    const picker = document.querySelector('[data-testid="gpu-picker"]');
    if (!picker) return [];
    if (picker.tagName === 'SELECT') return [...picker.selectedOptions].map((o) => o.value);
    return [...picker.querySelectorAll('[data-testid^="gpu-option-"]')]
      .filter((el) => {
        const box = el.matches('input') ? el : el.querySelector('input[type=checkbox]');
        if (box) return box.checked;
        return ['aria-pressed', 'aria-checked', 'aria-selected'].some((a) => el.getAttribute(a) === 'true');
      })
      .map((el) => el.getAttribute('data-testid').slice('gpu-option-'.length));
  });
}

/**
 * Makes exactly `ids` the selected GPUs, as a user would: clicking `gpu-option-<id>` to add
 * (typing into the picker's search field if the option is not listed) and `gpu-remove-<id>`
 * on a selected chip to remove (or clicking a pressed option again where there are no remove
 * buttons). A `<select multiple>` picker is set directly.
 */
export async function selectGpus(page, ids) {
  const picker = byId(page, 'gpu-picker').first();
  await picker.waitFor({ state: 'attached', timeout: 10000 });
  if ((await picker.evaluate((el) => el.tagName)) === 'SELECT') {
    await picker.selectOption(ids);
    return;
  }
  const option = (id) => page.locator(`[data-testid="gpu-option-${id}"]`).first();
  const removeUnwanted = async () => {
    for (const id of await selectedGpus(page)) {
      const current = await selectedGpus(page);
      if (ids.includes(id) || current.length <= 1) continue;
      const remove = page.locator(`[data-testid="gpu-remove-${id}"]`).first();
      await ((await remove.count()) > 0 ? remove : option(id)).click();
      await waitFor(async () => !(await selectedGpus(page)).includes(id), `GPU ${id} to be removed`, 5000);
    }
  };
  await removeUnwanted();
  for (const id of ids) {
    if ((await selectedGpus(page)).includes(id)) continue;
    if ((await option(id).count()) === 0 || !(await option(id).isVisible())) {
      const search = page.locator('[data-testid="gpu-search"]').first();
      if ((await search.count()) > 0) await search.fill(id);
    }
    await option(id).click({ timeout: 5000 });
    await waitFor(async () => (await selectedGpus(page)).includes(id), `GPU ${id} to be selected`, 5000);
  }
  await removeUnwanted();
  const now = await selectedGpus(page);
  check(
    now.length === ids.length && ids.every((id) => now.includes(id)),
    `selected GPUs are ${now.join(', ')}, wanted ${ids.join(', ')}`,
  );
}

/**
 * Reads the pixels of a chart canvas (the element itself, or the canvas inside it) with
 * getImageData: size, share of non-transparent pixels and number of distinct colours.
 */
export async function canvasPixels(page, id) {
  return page.evaluate((tid) => {
    const el = document.querySelector(`[data-testid="${tid}"]`);
    if (!el) return { id: tid, error: 'missing' };
    const canvas = el.tagName === 'CANVAS' ? el : el.querySelector('canvas');
    if (!canvas) return { id: tid, error: 'no canvas element' };
    const { width, height } = canvas;
    if (!width || !height) return { id: tid, error: `canvas is ${width}x${height}` };
    const ctx = canvas.getContext('2d');
    if (!ctx) return { id: tid, error: 'no 2d context' };
    const data = ctx.getImageData(0, 0, width, height).data;
    let painted = 0;
    const colours = new Set();
    for (let i = 0; i < data.length; i += 4) {
      if (data[i + 3] > 0) {
        painted += 1;
        if (colours.size < 4096) colours.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
      }
    }
    return { id: tid, width, height, painted, share: painted / (width * height), colours: colours.size };
  }, id);
}

/**
 * Throws unless the chart shows a drawing: some opaque pixels and at least three colours
 * (a background, axes or text, and at least one series).
 */
export async function expectChartDrawn(page, id) {
  // Charts draw when they are on screen (ui::in_view), as a reader scrolls to them.
  await byId(page, id).first().scrollIntoViewIfNeeded().catch(() => {});
  const px = await waitFor(async () => {
    const r = await canvasPixels(page, id);
    return !r.error && r.painted > 0 && r.colours >= 3 ? r : null;
  }, `${id} to have drawn pixels`, 10000, 200).catch(async (err) => {
    const r = await canvasPixels(page, id);
    throw new Error(`${err.message}; last reading ${JSON.stringify(r)}`);
  });
  return px;
}

/**
 * Every input's state and every key output's text, for comparing a page before and after a
 * reload: `{ testid: value }`.
 */
export async function snapshot(page) {
  return page.evaluate(() => {
    const out = {};
    for (const el of document.querySelectorAll('[data-testid]')) {
      const id = el.getAttribute('data-testid');
      if (el.matches('input[type=checkbox], input[type=radio]')) out[id] = el.checked;
      else if (el.matches('select[multiple]')) out[id] = [...el.selectedOptions].map((o) => o.value).join(',');
      else if (el.matches('input, select, textarea')) out[id] = el.value;
      else if (/^(params-|kv-|max-requests-|weights-|model-name)/.test(id)) out[id] = el.textContent.trim();
      else if (['aria-pressed', 'aria-checked', 'aria-selected'].some((a) => el.hasAttribute(a))) {
        out[id] = ['aria-pressed', 'aria-checked', 'aria-selected'].map((a) => el.getAttribute(a)).join('/');
      }
    }
    return out;
  });
}

/** Lists the keys whose values differ between two snapshots, as readable lines. */
export function diffSnapshots(before, after) {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys
    .filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]))
    .map((k) => `${k}: ${JSON.stringify(before[k])} -> ${JSON.stringify(after[k])}`);
}

/** Number of Hangul syllables in the app's visible text. */
export async function hangulCount(page) {
  const text = await byId(page, 'app-root').first().innerText();
  return (text.match(/[\uac00-\ud7a3]/g) || []).length;
}

/**
 * Opens `url` and waits for the element `testid` (embed pages have no app-root), then for the
 * first load to end (the late module, the network idle, the offline cache's fetches) before
 * marking the page loaded, as `openApp` does.
 */
export async function openAt(p, url, testid) {
  netOf(p);
  await p.page.goto(url, { waitUntil: 'load', timeout: 30000 });
  await byId(p.page, testid).first().waitFor({ state: 'visible', timeout: 30000 });
  await lateSettled(p.page);
  await networkQuiet(p);
  await serviceWorkerSettled(p);
  p.markLoaded();
  return p.page;
}

/**
 * Sweeps synthetic mouse moves over a chart's canvas (in the page, so it is quick) every `dx` ×
 * `dy` pixels until a tooltip whose text matches the RegExp `re` shows; returns its text and
 * the point, or null.
 */
export async function hoverUntil(page, id, re, { dx = 3, dy = 3 } = {}) {
  if (!(re instanceof RegExp)) throw new Error(`hoverUntil wants a RegExp, got ${typeof re}`);
  return page.evaluate(async ({ id, source, flags, dx, dy }) => {
    const re = new RegExp(source, flags);
    const fig = document.querySelector(`[data-testid="${id}"]`);
    const canvas = fig.querySelector('canvas');
    const r = canvas.getBoundingClientRect();
    // Leptos updates the DOM from microtasks: a few hops after each move are enough.
    const settle = async () => {
      for (let i = 0; i < 4; i += 1) await new Promise((ok) => queueMicrotask(ok));
    };
    for (let y = 2; y < r.height; y += dy) {
      for (let x = 2; x < r.width; x += dx) {
        canvas.dispatchEvent(new MouseEvent('mousemove', { clientX: r.left + x, clientY: r.top + y, bubbles: true }));
        await settle();
        const t = fig.querySelector('.chart-tooltip');
        if (t && re.test(t.textContent)) return { text: t.textContent, x: r.left + x, y: r.top + y };
      }
    }
    return null;
  }, { id, source: re.source, flags: re.flags, dx, dy });
}
