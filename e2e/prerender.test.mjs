// The prerendered first screen (issue 18, "first answer first"; scripts/prerender.mjs).
//
// index.html carries static copies of the default scenario's first screen, in English and (in
// `<template id="prerendered-ko">`) in Korean, hidden until an inline gate shows the one for the
// browser's language as Rust reads it (or the link's `?lang=`; the default scenario), and the app
// removes it in the task that mounts the live page (src/ui/app.rs). Checked here, for an English
// and a Korean browser alike:
// - staleness: the live first screen, captured as the generator captures it, equals that
//   language's copy in the built index.html (else "run node scripts/prerender.mjs"), at 1400,
//   1024 and 390 px; the gate in the page is the generator's and the CSP allows exactly it;
// - the copy shown is exactly that language's copy (unhidden, nothing else changed), with
//   <html lang> already the app's, and the template is gone by then;
// - the hand-over: the copy was shown before the mount, left the page in the same task as the
//   live root arrived, every element of the live root is laid out where the copy's was (no
//   layout shift, also asked of a layout-shift PerformanceObserver), and the page is not
//   scrolled back;
// - the gate's language is the app's: for browser languages at the rule's edges ("KO", " ko",
//   "kok-IN", "en-GB", "fr") the copy shown is in the language the live page then has;
// - a section link, an embed and a garbled link never show a copy (checked at every mutation
//   and every frame from the start), and the copy is gone; a remembered theme and a language link
//   (`?lang=ko`, `?lang=en`) show the copy the gate made of it, equal to the live first screen;
// - after the hand-over the live app answers edits, and no copy or template is left.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CAPTURE_INIT, GATE_SCRIPT, HEAD_SCRIPT, SCRIPT_SRC, TEMPLATE_ID, copyIn, cspHash, gateIn, headScriptIn, koCopyIn } from '../scripts/prerender.mjs';
import { SUB_PATH } from './harness.mjs';
import { byId, check, openApp, readNumber, setValue, waitFor } from './app.mjs';

/** These tests time frames and layout shifts: the runner gives them the machine alone. */
export const alone = true;

const REGENERATE = 'run `node scripts/prerender.mjs` to regenerate it (it rewrites index.html and the built dist\'s index.html)';

/** The built index.html the server serves. */
const servedIndex = (server) => readFileSync(join(server.root, ...SUB_PATH.split('/').filter(Boolean), 'index.html'), 'utf8');

/** The browsers of the checks: English (the harness's en-US) and Korean (`navigator.language`
 * "ko-KR", read by the gate and by the app's `browser_lang`; scripts/prerender.mjs captures the
 * Korean copy with a real ko-KR locale, so a first screen that depended on more than that
 * would fail the staleness check here). */
const LANGS = [
  { lang: 'en', name: 'English browser', code: null },
  { lang: 'ko', name: 'Korean browser', code: 'ko-KR' },
];
/** Makes the context's `navigator.language` read `code` (an init script, before any other). */
const setLanguage = (p, code) => p.context.addInitScript((c) => Object.defineProperty(Navigator.prototype, 'language', { get: () => c }), code);

/** The copies in a built index.html: { en, ko } (null where missing). */
const copiesIn = (html) => ({ en: copyIn(html), ko: koCopyIn(html) });

/**
 * Installed before any script: records whether `#prerendered` was ever shown (checked on every
 * mutation and in every animation frame), the copy's element boxes when it was shown, the live
 * root's boxes in the frame after it mounted, the scroll position at both moments, and the
 * layout shifts.
 */
const WATCH = () => {
  const w = { shownHtml: null, langAtShow: null, templateAtShow: null, scrollStatic: null, shownEver: false, shownAtFrame: 0, frames: 0, staticBoxes: null, liveBoxes: null, shifts: [], scrollBefore: null, scrollAfter: null, liveAt: null };
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
      w.shownHtml = p.outerHTML;
      w.langAtShow = document.documentElement.lang;
      w.templateAtShow = document.getElementById('prerendered-ko') !== null;
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

/** The copy as the gate shows it: the root unhidden, nothing else changed. */
const shownAs = (copy) => copy.replace(' hidden=""', '');

export default function register(runner) {
  runner.test('prerender: the checked-in first screens (English, Korean) are what the live app mounts, handed over in one task without a layout shift (1400, 1024, 390 px)', async ({ open, server, log }) => {
    const html = servedIndex(server);
    const copies = copiesIn(html);
    check(copies.en !== null, `the built index.html has no prerendered first screen: ${REGENERATE}`);
    check(copies.ko !== null, `the built index.html has no Korean prerendered first screen (<template id="${TEMPLATE_ID}">): ${REGENERATE}`);
    check(copies.en !== copies.ko, 'the English and the Korean copies are the same');
    const gate = gateIn(html);
    check(gate === GATE_SCRIPT, `the built index.html's gate script is not scripts/prerender.mjs's: ${REGENERATE}`);
    check(headScriptIn(html) === HEAD_SCRIPT, `the built index.html's head script is not scripts/prerender.mjs's: ${REGENERATE}`);
    const csp = html.match(/http-equiv="Content-Security-Policy" content="([^"]*)"/);
    check(csp && csp[1].includes(SCRIPT_SRC()), `the CSP does not allow exactly the two inline scripts (${cspHash(HEAD_SCRIPT)}, ${cspHash(gate)}): ${REGENERATE}`);
    for (const { lang, name, code } of LANGS) {
      const copy = copies[lang];
      for (const width of [1400, 1024, 390]) {
        const at = `${name}, ${width} px`;
        const p = await open({ viewport: { width, height: 1000 } });
        if (code) await setLanguage(p, code);
        await p.context.addInitScript(CAPTURE_INIT);
        await p.context.addInitScript(WATCH);
        // Scrolled while only the copy is there (where the window is taller than the page, 0).
        await p.context.addInitScript(() => {
          window.__prerenderScrollTo = 120;
        });
        await p.page.goto(server.url, { waitUntil: 'load', timeout: 30000 });
        await waitFor(() => p.page.evaluate(() => window.__llmcalcCapture?.ready && window.__prerenderWatch?.liveBoxes !== null), `the live first screen (${at})`, 45000);
        await p.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        const cap = await p.page.evaluate(() => window.__llmcalcCapture);
        const w = await p.page.evaluate(() => window.__prerenderWatch);
        check(cap.html === copy, `${at}: the live first screen differs from the prerendered copy in the built index.html ${firstDifference(cap.html, copy)}: ${REGENERATE}`);
        check(cap.afterFrame === cap.html, `${at}: the live first screen changed in the task after its first frame`);
        check(w.shownEver, `${at}: the default page never showed the prerendered copy`);
        check(w.shownHtml === shownAs(copy), `${at}: the copy shown is not the ${lang} copy of index.html ${firstDifference(w.shownHtml, shownAs(copy))}`);
        check(w.langAtShow === lang, `${at}: <html lang> was "${w.langAtShow}" when the copy was shown`);
        check(w.templateAtShow === false, `${at}: the Korean copy's template was still in the page when the copy was shown`);
        check(cap.removedWithMount && !cap.staticAtMount, `${at}: the copy did not leave the page in the task that mounted the live root (removed with the mount: ${cap.removedWithMount}, a copy or the template still there: ${cap.staticAtMount})`);
        check(w.staticBoxes.length === w.liveBoxes.length, `${at}: the copy has ${w.staticBoxes.length} elements, the live root ${w.liveBoxes.length}`);
        // Both read in the window's coordinates at the same scroll position (checked below).
        const moved = w.staticBoxes.map((b, i) => [b, w.liveBoxes[i]]).filter(([a, b]) => a !== b);
        check(moved.length === 0, `${at}: ${moved.length} element(s) of the live root are not where the copy's were, e.g. ${moved.slice(0, 3).map(([a, b]) => `${a} -> ${b}`).join('; ')}`);
        const cls = w.shifts.reduce((s, e) => s + e.value, 0);
        check(cls === 0, `${at}: layout shifts: ${JSON.stringify(w.shifts)}`);
        check(w.scrollAfter === w.scrollStatic && w.scrollBefore === w.scrollStatic, `${at}: the scroll position went ${w.scrollStatic} (copy shown) -> ${w.scrollBefore} (mount) -> ${w.scrollAfter} (live frame)`);
        check((await p.page.evaluate(() => document.documentElement.lang)) === lang, `${at}: the live page is not in ${lang}`);
        log(`${at}: copy shown at frame ${w.shownAtFrame}, live root mounted at ${w.liveAt.toFixed(0)} ms, ${w.liveBoxes.length} elements in place, CLS 0, scrollY ${w.scrollAfter}`);
        await p.context.close();
      }
    }
  }, { timeoutMs: 480000 });

  runner.test('prerender: the copy shown is in the language the app reads from the browser ("KO", " ko", "kok-IN", "en-GB", "fr")', async ({ open, server, log }) => {
    const copies = copiesIn(servedIndex(server));
    // Rust's `Lang::from_code`: trimmed, ASCII-lowercased, "ko" or "ko-…"; anything else English.
    for (const code of ['KO', ' ko', 'kok-IN', 'en-GB', 'fr']) {
      const p = await open({ viewport: { width: 1400, height: 1000 } });
      await setLanguage(p, code);
      await p.context.addInitScript(WATCH);
      await openApp(p, server.url);
      const w = await p.page.evaluate(() => window.__prerenderWatch);
      const live = await p.page.evaluate(() => document.documentElement.lang);
      check(live === 'en' || live === 'ko', `"${code}": the live page's lang is "${live}"`);
      check(w.shownEver, `"${code}": no copy was shown (the live page is in ${live})`);
      const shown = w.shownHtml === shownAs(copies.ko) ? 'ko' : w.shownHtml === shownAs(copies.en) ? 'en' : 'neither copy';
      check(shown === live, `"${code}": the copy shown is ${shown}, the live page is in ${live}`);
      check(w.langAtShow === live, `"${code}": <html lang> was "${w.langAtShow}" when the copy was shown, the live page's is "${live}"`);
      check(await p.page.evaluate(() => document.getElementById('prerendered') === null && document.getElementById('prerendered-ko') === null), `"${code}": a copy or the template is still in the page`);
      log(`"${code}": the ${shown} copy shown, live page in ${live}`);
      await p.context.close();
    }
  }, { timeoutMs: 180000 });

  runner.test('prerender: a section link, an embed and a garbled link never show a static copy (English and Korean browsers)', async ({ open, server, log }) => {
    // A scenario link's copy is filled by the fast path before it shows (e2e "fast path").
    const cases = [
      { name: 'section link', path: '#planner-title' },
      { name: 'scenario link with a section', path: '?ctx=8192#planner-title' },
      // An embed whose copy the page has is filled by the fast path (e2e "fast path"); this one's is not.
      { name: 'embed', path: '?embed=roofline&ctx=8192' },
      { name: 'garbled link', path: '?ctx=8192&zzz=1' },
    ];
    for (const { name: browserName, code } of LANGS) {
      for (const c of cases) {
        const at = `${browserName}, ${c.name}`;
        const p = await open({ viewport: { width: 1400, height: 1000 } });
        if (code) await setLanguage(p, code);
        await p.context.addInitScript(WATCH);
        await openApp(p, server.url + c.path);
        const w = await p.page.evaluate(() => window.__prerenderWatch);
        check(!w.shownEver, `${at}: the static copy was shown`);
        check(await p.page.evaluate(() => document.getElementById('prerendered') === null && document.getElementById('prerendered-ko') === null && document.querySelector('[data-static-testid], template[id^="prerendered"]') === null), `${at}: the static copy (or the Korean copy's template) is still in the page`);
        check(w.frames > 0 && w.liveBoxes !== null, `${at}: the live app did not mount (${w.frames} frames)`);
        if (c.path.includes('ctx=') && !c.path.includes('embed=')) check(await p.page.evaluate(() => document.querySelector('[data-testid="context-len"]')?.value) === '8192', `${at}: the live app does not show the link's context length`);
        log(`${at}: never shown in ${w.frames} frames; live app mounted`);
        await p.context.close();
      }
    }
  }, { timeoutMs: 240000 });

  runner.test('prerender: a remembered theme and a language link (?lang=ko, ?lang=en) show the copy of exactly that first screen (English and Korean browsers)', async ({ open, server, log }) => {
    const cases = [
      { name: 'remembered dark theme', path: '', theme: 'dark' },
      { name: 'remembered light theme', path: '', theme: 'light' },
      { name: 'Korean link', path: '?lang=ko', lang: 'ko' },
      { name: 'English link', path: '?lang=en', lang: 'en' },
      { name: 'Korean link, remembered dark theme', path: '?lang=ko', lang: 'ko', theme: 'dark' },
    ];
    for (const { lang: browserLang, name: browserName, code } of LANGS) {
      for (const c of cases) {
        const at = `${browserName}, ${c.name}`;
        const lang = c.lang ?? browserLang;
        const p = await open({ viewport: { width: 1400, height: 1000 } });
        if (code) await setLanguage(p, code);
        if (c.theme) await p.context.addInitScript((t) => localStorage.setItem('llmcalc-theme', t), c.theme);
        await p.context.addInitScript(CAPTURE_INIT);
        await p.context.addInitScript(WATCH);
        await p.page.goto(server.url + c.path, { waitUntil: 'load', timeout: 30000 });
        await waitFor(() => p.page.evaluate(() => window.__llmcalcCapture?.ready && window.__prerenderWatch?.liveBoxes !== null), `the live first screen (${at})`, 45000);
        const cap = await p.page.evaluate(() => window.__llmcalcCapture);
        const w = await p.page.evaluate(() => window.__prerenderWatch);
        check(w.shownEver, `${at}: no static copy was shown`);
        check(w.shownHtml === shownAs(cap.html), `${at}: the copy shown is not the live first screen ${firstDifference(shownAs(cap.html), w.shownHtml)}`);
        check(w.langAtShow === lang, `${at}: <html lang> was "${w.langAtShow}" when the copy was shown`);
        check(cap.removedWithMount && !cap.staticAtMount, `${at}: the copy did not leave the page in the task that mounted the live root`);
        const moved = w.staticBoxes.map((b, i) => [b, w.liveBoxes[i]]).filter(([a, b]) => a !== b);
        check(w.staticBoxes.length === w.liveBoxes.length && moved.length === 0, `${at}: ${moved.length} element(s) moved at the hand-over (${w.staticBoxes.length} vs ${w.liveBoxes.length} elements)`);
        const cls = w.shifts.reduce((s, e) => s + e.value, 0);
        check(cls === 0, `${at}: layout shifts: ${JSON.stringify(w.shifts)}`);
        const theme = await p.page.evaluate(() => document.documentElement.getAttribute('data-theme'));
        if (c.theme) check(theme === c.theme, `${at}: <html data-theme> is "${theme}"`);
        check((await p.page.evaluate(() => document.documentElement.lang)) === lang, `${at}: the live page is not in ${lang}`);
        log(`${at}: the ${lang} copy shown at frame ${w.shownAtFrame} equals the live first screen; theme ${theme}; CLS 0`);
        await p.context.close();
      }
    }
  }, { timeoutMs: 300000 });

  runner.test('prerender: after the hand-over the static copy is gone and the live app answers an edit (English and Korean browsers)', async ({ open, server, log }) => {
    for (const { lang, name, code } of LANGS) {
      const p = await open({ viewport: { width: 1400, height: 1000 } });
      if (code) await setLanguage(p, code);
      await p.context.addInitScript(WATCH);
      const page = await openApp(p, server.url);
      check((await page.evaluate(() => window.__prerenderWatch.shownEver)) === true, `${name}: the default page did not show the static copy`);
      check((await page.evaluate(() => document.documentElement.lang)) === lang, `${name}: the live page is not in ${lang}`);
      check(await page.evaluate(() => document.getElementById('prerendered') === null && document.getElementById('prerendered-ko') === null && document.querySelectorAll('template, [data-static-testid], [inert]').length === 0), `${name}: the static copy (or an inert part of it, or the Korean copy's template) is still in the page`);
      const gpu = await page.evaluate(() => document.querySelector('[data-testid^="max-requests-"]')?.getAttribute('data-testid'));
      check(gpu, `${name}: no max-requests output on the default page`);
      const before = await readNumber(page, gpu);
      const ctx = Number(await byId(page, 'context-len').inputValue());
      check(ctx > 0, `${name}: the context length field reads ${ctx}`);
      await setValue(page, 'context-len', ctx * 4);
      await waitFor(async () => (await readNumber(page, gpu)) !== before, `${name}: ${gpu} to change after the context length went ${ctx} -> ${ctx * 4}`);
      check(await byId(page, 'params-total').isVisible(), `${name}: params-total is not visible`);
      log(`${name}: ${gpu} ${before} -> ${await readNumber(page, gpu)} after context ${ctx} -> ${ctx * 4}`);
      await p.context.close();
    }
  }, { timeoutMs: 120000 });
}
