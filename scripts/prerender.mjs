// The prerendered first screen (issue 18, "first answer first"): a static copy of the live app's
// first screen for the default scenario in English, checked into index.html so the answer is
// painted before the wasm arrives. The live app removes it in the task that mounts the page
// (src/ui/app.rs, `remove_prerendered`), and its first screen is the same DOM.
//
//   node scripts/prerender.mjs [--dist dist] [--index index.html]
//
// Loads the built dist's bare URL (no query, no hash) in headless Chromium (en-US, 1400 x 1000,
// service worker blocked), takes the live app root as it is in the frame that paints the first
// answer (the first animation frame after the mount, see `CAPTURE_INIT`), and writes it into
// index.html between the markers below, followed by the gate script, whose sha256 it writes into
// the page's CSP. Run it after a change to the first screen: e2e "prerender" fails while the
// copy differs from what the live app mounts. It also writes the same block into the dist's
// index.html when that has one (Trunk copies the block and the CSP unchanged), so the dist it
// captured from is current without a second build; `--dist-too no` leaves the dist alone.
//
// The static copy differs from the live root only in: form state written as attributes (an
// input's value, a checkbox, the chosen option), `data-testid` renamed `data-static-testid` (no
// test or probe reading a test id can find the copy), and `id="prerendered" hidden inert
// aria-hidden="true"` on the root: hidden until the gate says the scenario is the default one,
// never focusable, clickable or read by assistive technology.

import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MARK_START = '<!-- prerender:start -->';
export const MARK_END = '<!-- prerender:end -->';

// The gate, run by the parser right after the (hidden) copy, before any paint can show it. The
// copy is the default scenario in English with the "Auto" theme, so it is shown only when
// everything the first screen depends on says so (src/ui/state.rs): no query (`from_location`
// reads `location.search`: the scenario, the language, embed mode) and no hash (a section link);
// a browser language Rust does not read as Korean (`browser_lang`: "ko" or "ko-*"; any "ko" in
// it hides the copy, a superset); no theme remembered (`stored_theme`: the theme toggle's label);
// and WebAssembly present (else the live app never replaces it). Otherwise it is removed. When
// shown, <html data-theme> is set as public/loader.js sets it (the copy then has the right
// palette from its first frame; the stored theme is "Auto" here). The first screen's DOM does not
// depend on the window's width (e2e "prerender" compares it at 1400, 1024 and 390 px). The
// script removes its own element first: once run it has nothing to do, and the page keeps no
// inline script (e2e "xss" counts any as injected).
export const GATE_SCRIPT =
  "(function(){var s=document.currentScript;if(s)s.remove();var p=document.getElementById('prerendered');if(!p)return;var t=null;try{t=localStorage.getItem('llmcalc-theme')}catch(e){t=null}" +
  "var l=String(navigator.language||'').toLowerCase();" +
  "if(location.search===''&&location.hash===''&&t!=='light'&&t!=='dark'&&l.indexOf('ko')<0&&typeof WebAssembly==='object'){" +
  "document.documentElement.setAttribute('data-theme',matchMedia('(prefers-color-scheme: dark)').matches?'dark':'light');p.hidden=false}" +
  'else{p.remove()}})();';

/** The CSP source that allows `script` inline: 'sha256-<base64>'. */
export const cspHash = (script) => `'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`;

/** The block between the markers: the copy, then the gate. */
export const blockOf = (copyHtml) => `${MARK_START}\n    ${copyHtml}\n    <script>${GATE_SCRIPT}</script>\n    ${MARK_END}`;

/** The copy's HTML in a page's source (index.html or the built one), or null. */
export function copyIn(html) {
  const a = html.indexOf(MARK_START);
  const b = html.indexOf(MARK_END);
  if (a < 0 || b < a) return null;
  const block = html.slice(a + MARK_START.length, b);
  const end = block.indexOf('<script>');
  return (end < 0 ? block : block.slice(0, end)).trim();
}

/** The inline gate script's text in a page's source, or null. */
export function gateIn(html) {
  const a = html.indexOf(MARK_START);
  const b = html.indexOf(MARK_END);
  if (a < 0 || b < a) return null;
  const m = html.slice(a, b).match(/<script>([\s\S]*?)<\/script>/);
  return m ? m[1] : null;
}

/**
 * Installed before any script of the page (Playwright `addInitScript`). When the live app root
 * (`.app-root` without `id="prerendered"`) is attached, records whether the static copy left the
 * document in the same mutation batch (the same task: no frame between), and the live root's
 * HTML, as a static copy, in the next animation frame (the frame that paints the first answer:
 * the mount's effects, which set the inputs' values, have run) and in the task after that frame
 * (it must not have changed: the next steps come frames later). `window.__llmcalcCapture`:
 * { html, afterFrame, removedWithMount, staticAtMount, ready }.
 */
export const CAPTURE_INIT = () => {
  const out = { html: null, afterFrame: null, removedWithMount: false, staticAtMount: null, ready: false };
  window.__llmcalcCapture = out;
  const serialize = (root) => {
    const copy = root.cloneNode(true);
    const from = root.querySelectorAll('input, textarea, select');
    const to = copy.querySelectorAll('input, textarea, select');
    from.forEach((el, i) => {
      const c = to[i];
      if (el.tagName === 'INPUT') {
        if (el.type === 'checkbox' || el.type === 'radio') {
          if (el.checked) c.setAttribute('checked', '');
          else c.removeAttribute('checked');
        } else if (el.type !== 'file' && el.type !== 'password') {
          c.setAttribute('value', el.value);
        }
      } else if (el.tagName === 'TEXTAREA') {
        c.textContent = el.value;
      } else {
        [...el.options].forEach((o, j) => {
          if (o.selected) c.options[j].setAttribute('selected', '');
          else c.options[j].removeAttribute('selected');
        });
      }
    });
    for (const el of [copy, ...copy.querySelectorAll('[data-testid]')]) {
      const id = el.getAttribute('data-testid');
      if (id === null) continue;
      el.removeAttribute('data-testid');
      el.setAttribute('data-static-testid', id);
    }
    copy.id = 'prerendered';
    copy.setAttribute('hidden', '');
    copy.setAttribute('inert', '');
    copy.setAttribute('aria-hidden', 'true');
    return copy.outerHTML;
  };
  window.__llmcalcSerialize = serialize;
  const observer = new MutationObserver((records) => {
    let live = null;
    let removed = false;
    for (const r of records) {
      for (const n of r.addedNodes) {
        if (n.nodeType === 1 && n.classList.contains('app-root') && n.id !== 'prerendered') live = n;
      }
      for (const n of r.removedNodes) if (n.nodeType === 1 && n.id === 'prerendered') removed = true;
    }
    if (!live) return;
    observer.disconnect();
    out.removedWithMount = removed;
    out.staticAtMount = document.getElementById('prerendered') !== null;
    // The inputs' values are set by effects in the mount's microtasks: the frame is the moment.
    requestAnimationFrame(() => {
      out.html = serialize(live);
      const ch = new MessageChannel();
      ch.port1.onmessage = () => {
        out.afterFrame = serialize(live);
        out.ready = true;
      };
      ch.port2.postMessage(0);
    });
  });
  observer.observe(document, { childList: true, subtree: true });
};

/** Opens `url` in a new context of `browser` and returns the capture (see CAPTURE_INIT). */
export async function capture(browser, url, { width = 1400, height = 1000, locale = 'en-US' } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: 1, locale, serviceWorkers: 'block' });
  try {
    await context.addInitScript(CAPTURE_INIT);
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'load', timeout: 30000 });
    await page.waitForFunction(() => window.__llmcalcCapture && window.__llmcalcCapture.ready, null, { timeout: 45000, polling: 50 });
    return await page.evaluate(() => window.__llmcalcCapture);
  } finally {
    await context.close().catch(() => {});
  }
}

/** index.html with `copyHtml` between the markers and the gate's hash in the CSP. */
export function withCopy(indexHtml, copyHtml) {
  const a = indexHtml.indexOf(MARK_START);
  const b = indexHtml.indexOf(MARK_END);
  if (a < 0 || b < a) throw new Error(`index.html has no ${MARK_START} … ${MARK_END} block`);
  let out = indexHtml.slice(0, a) + blockOf(copyHtml) + indexHtml.slice(b + MARK_END.length);
  const csp = out.match(/script-src 'self'( 'sha256-[A-Za-z0-9+/=]+')? 'wasm-unsafe-eval'/);
  if (!csp) throw new Error("index.html's CSP has no \"script-src 'self' … 'wasm-unsafe-eval'\"");
  out = out.replace(csp[0], `script-src 'self' ${cspHash(GATE_SCRIPT)} 'wasm-unsafe-eval'`);
  return out;
}

async function main() {
  const { arg, closeBrowser, launchBrowser, repoPath, startServer } = await import('../e2e/harness.mjs');
  const dist = repoPath(arg('dist', 'dist'));
  const indexPath = repoPath(arg('index', 'index.html'));
  const server = await startServer(dist);
  const browser = await launchBrowser();
  try {
    const cap = await capture(browser, server.url);
    if (cap.html !== cap.afterFrame) {
      throw new Error('the live first screen changed in the task after its first frame; the copy would not match what stays painted');
    }
    const before = readFileSync(indexPath, 'utf8');
    const after = withCopy(before, cap.html);
    writeFileSync(indexPath, after);
    const old = copyIn(before);
    console.log(`prerender: ${old === cap.html ? 'unchanged' : 'written'}: ${cap.html.length} bytes of first screen into ${indexPath}; gate ${cspHash(GATE_SCRIPT)}`);
    const distIndex = join(dist, 'index.html');
    const built = readFileSync(distIndex, 'utf8');
    if (arg('dist-too', 'yes') !== 'no' && copyIn(built) !== null) {
      const patched = withCopy(built, cap.html);
      if (patched !== built) writeFileSync(distIndex, patched);
      console.log(`prerender: ${patched === built ? 'unchanged' : 'written'}: the same block into ${distIndex}`);
    } else {
      console.log(`prerender: ${distIndex} has no block (or --dist-too no): run trunk build`);
    }
  } finally {
    await closeBrowser(browser);
    await server.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err) => {
    console.error(`prerender: ${err.message}`);
    process.exit(1);
  });
}
