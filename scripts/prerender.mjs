// The prerendered first screen (issue 18, "first answer first"): static copies of the live app's
// first screen for the default scenario, in English and in Korean (for a browser whose language
// Rust reads as Korean), checked into index.html so the answer is painted before the wasm
// arrives. The live app removes it in the task that mounts the page
// (src/ui/app.rs, `remove_prerendered`), and its first screen is the same DOM.
//
//   node scripts/prerender.mjs [--dist dist] [--index index.html]
//
// Loads the built dist's bare URL (no query, no hash) in headless Chromium (1400 x 1000, service
// worker blocked), once with the locale en-US and once with ko-KR, takes the live app root as it
// is in the frame that paints the first answer (the first animation frame after the mount, see
// `CAPTURE_INIT`), and writes both into index.html between the markers below: the English copy,
// then the Korean one inside `<template id="prerendered-ko">` (parsed inert, never styled or laid
// out: what an English visitor pays for it is its bytes), then the gate script, whose sha256 it
// writes into the page's CSP. Run it after a change to the first screen: e2e "prerender" fails while the
// copy differs from what the live app mounts. It also writes the same block into the dist's
// index.html when that has one (Trunk copies the block and the CSP unchanged), so the dist it
// captured from is current without a second build; `--dist-too no` leaves the dist alone.
//
// The static copy differs from the live root only in: form state written as attributes (an
// input's value, a checkbox, the chosen option), `data-testid` renamed `data-static-testid` (no
// test or probe reading a test id can find the copy), and `id="prerendered" hidden inert
// aria-hidden="true"` on the root (both copies): hidden until the gate says the scenario is the
// default one, never focusable, clickable or read by assistive technology.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MARK_START = '<!-- prerender:start -->';
export const MARK_END = '<!-- prerender:end -->';

// The gate, run by the parser right after the (hidden) English copy and the Korean one's
// <template> (parsed inert: never styled or laid out), before any paint can show either. Each copy
// is the default scenario with the "Auto" theme; one is shown when everything else the first
// screen depends on is known here (src/ui/state.rs): the query is empty or names the language
// only (exactly `?lang=ko` or `?lang=en`: `from_location` reads `location.search` for the
// scenario, the language and embed mode), there is no hash (a section link), and WebAssembly is
// present (else the live app never replaces it). The language is the link's, else Rust's
// `browser_lang` exactly (`Lang::from_code` of `navigator.language`: trimmed of Unicode white
// space, ASCII-lowercased, "ko" or "ko-…" is Korean, anything else the default English):
// `KO_RULE` below. For Korean the English copy is replaced by the template's content (the same
// `id="prerendered"` root, hidden, inert, aria-hidden), and <html lang> set to "ko" as the app
// sets it at mount; the template is removed in every case. When shown, <html data-theme> is set
// as public/loader.js sets it (a remembered "light" or "dark", else the system's), and a
// remembered theme's label is written into the copy's theme toggle as the app labels it
// (`THEME_LABELS`, from the translation rows), so the copy is the live first screen for that
// theme too. Otherwise the copy is removed. The first screen's DOM does not depend on the
// window's width (e2e "prerender" compares it at 1400, 1024 and 390 px). The script removes its
// own element first: once run it has nothing to do, and the page keeps no inline script (e2e
// "xss" counts any as injected).
//
// `KO_RULE`: Rust's `str::trim` strips the characters with the Unicode White_Space property
// (`char::is_whitespace`): U+0009-000D, U+0020, U+0085, U+00A0, U+1680, U+2000-200A, U+2028,
// U+2029, U+202F, U+205F, U+3000. JavaScript's `trim` and `\s` differ (no U+0085, plus U+FEFF),
// so the class is spelled out. The `i` flag without `u` folds only ASCII letters onto "k" and "o"
// (the Kelvin sign does not match), as `to_ascii_lowercase` does.
const WS = String.raw`[\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*`;
export const KO_RULE = `/^${WS}ko(-|${WS}$)/i`;
export const TEMPLATE_ID = 'prerendered-ko';

/** One translation row of data/i18n/shell/app.toml: { en, ko }. */
function shellRow(key) {
  const toml = readFileSync(fileURLToPath(new URL('../data/i18n/shell/app.toml', import.meta.url)), 'utf8');
  const block = toml.split(/^\[/m).find((b) => b.startsWith(`${key}]`));
  if (!block) throw new Error(`data/i18n/shell/app.toml has no [${key}]`);
  const field = (lang) => JSON.parse(block.match(new RegExp(`^${lang} = ("(?:[^"\\\\]|\\\\.)*")$`, 'm'))[1]);
  return { en: field('en'), ko: field('ko') };
}

/** The theme toggle's label for a remembered theme, by language: { en: {light, dark}, ko: … }
 * (src/ui/header.rs shows `Theme::key`'s row). */
export const THEME_LABELS = (() => {
  const light = shellRow('ui_theme_light');
  const dark = shellRow('ui_theme_dark');
  return { en: { light: light.en, dark: dark.en }, ko: { light: light.ko, dark: dark.ko } };
})();

/** The widgets with a copy (`<template id="prerendered-embed-<widget>">`, and `…-ko`), each in
 * its own file per language (`public/embeds-<widget>.html`, `…-ko.html`), which public/loader.js
 * fetches for an embedded widget only (the page itself stays as small for every other visit):
 * an embedded widget's first answer before the shell (crates/first/src/embed.rs). One file per
 * widget and language, not one for all six: 2.7 kB brotli before the answer instead of 5.5. */
export const EMBED_WIDGETS = ['memory', 'kv', 'batch'];
/** A widget's copy's file in `lang`, in the repository's public/ and in the dist. */
export const embedCopiesName = (widget, lang) => `embeds-${widget}${lang === 'ko' ? '-ko' : ''}.html`;
/** The id of a widget's copy's template in `lang`. */
export const embedTemplateId = (widget, lang) => `prerendered-embed-${widget}${lang === 'ko' ? '-ko' : ''}`;

/** The page's kinds of address, as both inline scripts tell them (`q` = location.search): `f`, the
 * default scenario (nothing, or only a language); `n`, a scenario link the first-answer module
 * (crates/first/src/main.rs) may answer: not the default, no section anchor, not an embed, wasm
 * there; `e`, an embedded widget whose copy the page carries (crates/first/src/embed.rs may
 * answer it), no section anchor, wasm there. */
const PAGE_KIND =
  "q=location.search,f=q===''||q==='?lang=ko'||q==='?lang=en'," +
  "n=!f&&location.hash===''&&!/[?&]embed=/.test(q)&&typeof WebAssembly==='object'," +
  `e=location.hash===''&&typeof WebAssembly==='object'&&(/[?&]embed=(${EMBED_WIDGETS.join('|')})(&|$)/.exec(q)||0)[1]`;

/** The language of an embedded widget's copy as the head's script guesses it (the link's
 * `lang=`, else the browser's), to preload that copy; public/loader.js fetches the one the
 * first-answer module names, so a wrong guess costs a request, never a wrong copy. */
const EMBED_LANG =
  `(/[?&]lang=ko(-[^&]*)?(&|$)/i.test(q)||!/[?&]lang=/.test(q)&&${KO_RULE}.test(navigator.language||'')?'-ko':'')`;

/**
 * The head's inline script (right after the shell's script tag, before the 30 kB of styles):
 * it asks for the files the page's first answer needs, as soon as the parser reaches it. On a
 * scenario link, the first-answer module's (its JS and wasm, about 185 kB brotli), and not yet
 * the shell's wasm (about 375 kB): public/loader.js fetches that once the first-answer module
 * has loaded, so on a slow link the two do not share the bandwidth. Anywhere else, the shell's
 * wasm (its name from the loader's tag, which Trunk fills).
 */
export const HEAD_SCRIPT =
  "(function(){var s=document.currentScript;if(s)s.remove();var d=document,h=d.head,t=d.querySelector('script[data-wasm]')," +
  `${PAGE_KIND},` +
  "l=function(r,u,w){var a=d.createElement('link');a.rel=r;a.href=u;if(w){a.as='fetch';if(w===1)a.type='application/wasm';a.crossOrigin='anonymous'}h.appendChild(a)};" +
  `if(n){l('modulepreload','first.js');l('preload','first_bg.wasm',1)}else if(e){l('modulepreload','first_embed.js');l('preload','first_embed_bg.wasm',1);l('preload','embeds-'+e+${EMBED_LANG}+'.html',2)}` +
  "else if(t){l('modulepreload',t.getAttribute('data-js'));l('preload',t.getAttribute('data-wasm'),1)}})();";

export const GATE_SCRIPT =
  `(function(){var s=document.currentScript;if(s)s.remove();var d=document,p=d.getElementById('prerendered'),k=d.getElementById('${TEMPLATE_ID}'),t=null;try{t=localStorage.getItem('llmcalc-theme')}catch(e){t=null}` +
  `var L=${JSON.stringify(THEME_LABELS)},m=t==='light'||t==='dark',${PAGE_KIND},` +
  "b=function(r,l){var e=r&&r.querySelector('[data-static-testid=\"theme-toggle\"]');if(m&&e&&e.firstChild)e.firstChild.data=L[l][t]};" +
  // An embedded widget with a copy (public/embeds-*.html): the page's copies stay, hidden, for
  // public/loader.js to put the widget's in their place and fill it (or to leave to the live app).
  "if(e&&p){p.setAttribute('data-pending','embed');return}" +
  // A scenario link: both copies stay, hidden, for public/loader.js to fill with the link's
  // first screen (or to leave to the live app, which removes them at mount). Its files were
  // asked for by the head's script (HEAD_SCRIPT).
  "if(n&&p){b(p,'en');if(k)b(k.content,'ko');p.setAttribute('data-pending','');return}" +
  `var ko=q==='?lang=ko'||q!=='?lang=en'&&${KO_RULE}.test(navigator.language||'');` +
  "if(ko&&p){k?p.replaceWith(k.content):p.remove();p=d.getElementById('prerendered')}if(k)k.remove();if(!p)return;" +
  "if(f&&location.hash===''&&typeof WebAssembly==='object'){" +
  "d.documentElement.setAttribute('data-theme',m?t:matchMedia('(prefers-color-scheme: dark)').matches?'dark':'light');" +
  "b(p,ko?'ko':'en');" +
  "if(ko)d.documentElement.lang='ko';p.hidden=false}" +
  'else{p.remove()}})();';

/** A root's HTML without what drawing its charts writes (a canvas's size attributes and CSS
 * height), so a widget's first frame and the one after can be compared. */
export const withoutDrawing = (html) =>
  html.replace(/<canvas[^>]*>/g, (tag) => tag.replace(/ (width|height)="\d+"/g, '').replace(/ height: \d+px;/g, ''));

/** The CSP source that allows `script` inline: 'sha256-<base64>'. */
export const cspHash = (script) => `'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`;

const TEMPLATE_OPEN = `<template id="${TEMPLATE_ID}">`;

/** The block between the markers: the English copy, the Korean one in its template, the gate. */
export const blockOf = (copyHtml, koHtml) =>
  `${MARK_START}\n    ${copyHtml}\n    ${TEMPLATE_OPEN}${koHtml}</template>\n    <script>${GATE_SCRIPT}</script>\n    ${MARK_END}`;

/** A widget's copy's file (its template `id` with `html`). */
export const embedCopiesFile = (id, html) =>
  '<!-- An embedded widget\'s prerendered copy (scripts/prerender.mjs; public/loader.js fetches this for an embed). Do not edit by hand. -->\n' +
  `<template id="${id}">${html}</template>\n`;

/** The English copy's HTML in a page's source (index.html or the built one), or null. */
export function copyIn(html) {
  const a = html.indexOf(MARK_START);
  const b = html.indexOf(MARK_END);
  if (a < 0 || b < a) return null;
  const block = html.slice(a + MARK_START.length, b);
  const ends = ['<template', '<script>'].map((m) => block.indexOf(m)).filter((i) => i >= 0);
  return (ends.length ? block.slice(0, Math.min(...ends)) : block).trim();
}

/** The Korean copy's HTML (its template's content) in a page's source, or null. */
export function koCopyIn(html) {
  const a = html.indexOf(MARK_START);
  const b = html.indexOf(MARK_END);
  if (a < 0 || b < a) return null;
  const block = html.slice(a, b);
  const t = block.indexOf(TEMPLATE_OPEN);
  const e = block.indexOf('</template>', t);
  return t < 0 || e < 0 ? null : block.slice(t + TEMPLATE_OPEN.length, e);
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
 * (it must not have changed: the next steps come frames later); `staticAtMount`: a copy or the
 * Korean copy's template still in the page once the live root is there. `window.__llmcalcCapture`:
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
    out.staticAtMount = document.getElementById('prerendered') !== null || document.getElementById('prerendered-ko') !== null;
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

/** The head's inline script tag (HEAD_SCRIPT) in a page's source: its text, or null. */
export function headScriptIn(html) {
  const m = html.match(/<script data-head-gate>([\s\S]*?)<\/script>/);
  return m ? m[1] : null;
}

/** The CSP's script sources: the page's own files and exactly the two inline scripts. */
export const SCRIPT_SRC = () => `script-src 'self' ${cspHash(HEAD_SCRIPT)} ${cspHash(GATE_SCRIPT)} 'wasm-unsafe-eval'`;

/** index.html with both copies between the markers, the head's script, and both scripts'
 * hashes in the CSP. */
export function withCopy(indexHtml, copyHtml, koHtml) {
  const a = indexHtml.indexOf(MARK_START);
  const b = indexHtml.indexOf(MARK_END);
  if (a < 0 || b < a) throw new Error(`index.html has no ${MARK_START} … ${MARK_END} block`);
  let out = indexHtml.slice(0, a) + blockOf(copyHtml, koHtml) + indexHtml.slice(b + MARK_END.length);
  if (headScriptIn(out) === null) throw new Error('index.html has no <script data-head-gate> (after the shell\'s rel="rust" link)');
  out = out.replace(/<script data-head-gate>[\s\S]*?<\/script>/, () => `<script data-head-gate>${HEAD_SCRIPT}</script>`);
  const csp = out.match(/script-src 'self'( 'sha256-[A-Za-z0-9+/=]+'){0,2} 'wasm-unsafe-eval'/);
  if (!csp) throw new Error("index.html's CSP has no \"script-src 'self' … 'wasm-unsafe-eval'\"");
  out = out.replace(csp[0], SCRIPT_SRC());
  return out;
}

async function main() {
  const { arg, closeBrowser, launchBrowser, repoPath, startServer } = await import('../e2e/harness.mjs');
  const dist = repoPath(arg('dist', 'dist'));
  const indexPath = repoPath(arg('index', 'index.html'));
  const server = await startServer(dist);
  const browser = await launchBrowser();
  try {
    const caps = {};
    for (const locale of ['en-US', 'ko-KR']) {
      const cap = await capture(browser, server.url, { locale });
      if (cap.html !== cap.afterFrame) {
        throw new Error(`the live first screen (${locale}) changed in the task after its first frame; the copy would not match what stays painted`);
      }
      if (cap.html.includes('</template>')) throw new Error(`the live first screen (${locale}) holds "</template>": it cannot go in the Korean copy's template`);
      caps[locale] = cap.html;
    }
    const en = caps['en-US'];
    const ko = caps['ko-KR'];
    if (en === ko) throw new Error('the first screen is the same for en-US and ko-KR: the Korean locale did not reach the app');
    const embeds = [];
    for (const widget of EMBED_WIDGETS) {
      for (const [locale, lang] of [['en-US', 'en'], ['ko-KR', 'ko']]) {
        const cap = await capture(browser, `${server.url}?embed=${widget}`, { locale, width: 640, height: 800 });
        // The copy's canvas is kept as it is before the chart is drawn (without the size the
        // drawing gives it): the first-answer module draws on it at the frame's width.
        if (withoutDrawing(cap.html) !== withoutDrawing(cap.afterFrame)) {
          throw new Error(`the live widget ${widget} (${locale}) changed in the task after its first frame; the copy would not match what stays painted`);
        }
        if (cap.html.includes('</template>')) throw new Error(`the live widget ${widget} (${locale}) holds "</template>"`);
        embeds.push([embedCopiesName(widget, lang), embedTemplateId(widget, lang), withoutDrawing(cap.html)]);
      }
    }
    const before = readFileSync(indexPath, 'utf8');
    const after = withCopy(before, en, ko);
    writeFileSync(indexPath, after);
    for (const [name, id, html] of embeds) {
      const copiesPath = repoPath(join('public', name));
      const copies = embedCopiesFile(id, html);
      const same = existsSync(copiesPath) && readFileSync(copiesPath, 'utf8') === copies;
      writeFileSync(copiesPath, copies);
      writeFileSync(join(dist, name), copies);
      console.log(`prerender: ${same ? 'unchanged' : 'written'}: ${id} (${html.length} characters) into ${copiesPath} and ${join(dist, name)}`);
    }
    console.log(`prerender: ${copyIn(before) === en ? 'unchanged' : 'written'}: ${en.length} characters of first screen (en-US) into ${indexPath}`);
    console.log(`prerender: ${koCopyIn(before) === ko ? 'unchanged' : 'written'}: ${ko.length} characters of first screen (ko-KR, in <template id="${TEMPLATE_ID}">) into ${indexPath}; gate ${cspHash(GATE_SCRIPT)}`);
    const distIndex = join(dist, 'index.html');
    const built = readFileSync(distIndex, 'utf8');
    if (arg('dist-too', 'yes') !== 'no' && copyIn(built) !== null) {
      const patched = withCopy(built, en, ko);
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
