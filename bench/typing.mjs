// Long tasks while typing, wherever the page is scrolled: real key presses (Playwright's
// keyboard, one task per key) into the context-length and concurrency fields of the sticky
// input column, with the page scrolled to the top, to each section of the index and to the
// bottom, in headless Chromium against the release dist/. A pause after each burst lets the
// off-screen sections catch up (ui::state::SETTLE_MS), which belongs to typing too.
//
//   node bench/typing.mjs [--dist DIR] [--delay MS]
//
// Reported per position (report only; it fails only if it cannot measure at all):
// - long tasks: PerformanceObserver 'longtask' (every main-thread task over 50 ms), their
//   count and the longest;
// - the longest key press from input to the next paint: PerformanceObserver 'event'
//   (the field is scrolled into view inside the sticky input column first, as a person typing
//   would see it: see fieldInView)
//   (Event Timing, entries of 16 ms or more; "< 16 ms" when none).
// The target (issue 18 part 5): no long task over 50 ms anywhere.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { arg, closeBrowser, launchBrowser, openPage, repoPath, startServer, withTimeout } from '../e2e/harness.mjs';
import { openApp } from '../e2e/app.mjs';
import { BURSTS, fieldInView } from './typing_fields.mjs';

const distDir = repoPath(arg('dist', 'dist'));
const delay = Number(arg('delay', '60'));

// Where the page is scrolled while typing: the top, each heading of the section index
// (src/ui/section_index.rs), and the bottom.
const POSITIONS = ['top', 'fit-title', 'charts-title', 'roofline-title', 'matmul-title', 'perf-title', 'accuracy-title', 'planner-title', 'bottom'];


// Installed before the app starts: long tasks and slow key presses, from the page's start.
const OBSERVE = () => {
  window.__long = [];
  window.__events = [];
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__long.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  } catch {
    window.__long = null;
  }
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (e.name === 'keydown' || e.name === 'keyup' || e.name === 'keypress' || e.name === 'input') {
          window.__events.push({ name: e.name, duration: e.duration, processing: e.processingEnd - e.processingStart });
        }
      }
    }).observe({ type: 'event', durationThreshold: 16, buffered: true });
  } catch {
    window.__events = null;
  }
};

/** Scrolls to `where` (top, bottom or a heading id) and returns the scroll position. */
async function scrollTo(page, where) {
  return page.evaluate((where) => {
    if (where === 'top') window.scrollTo(0, 0);
    else if (where === 'bottom') window.scrollTo(0, document.documentElement.scrollHeight);
    else document.getElementById(where)?.scrollIntoView({ block: 'start' });
    return Math.round(window.scrollY);
  }, where);
}

/** Types every burst with the page at its position; returns what the observers saw. */
async function typeHere(page) {
  await page.evaluate(() => {
    if (window.__long) window.__long.length = 0;
    if (window.__events) window.__events.length = 0;
  });
  for (const [id, text] of BURSTS) {
    const input = page.locator(`[data-testid="${id}"]`).first();
    // In view inside the sticky column (the page does not move), focused, its text selected.
    await input.evaluate(fieldInView);
    await page.keyboard.type(text, { delay });
    // The off-screen sections catch up once the inputs settle (250 ms): part of typing.
    await page.waitForTimeout(600);
  }
  return page.evaluate(() => ({ long: window.__long, events: window.__events, y: Math.round(window.scrollY) }));
}


const ms = (x) => `${x.toFixed(0)} ms`;

let server;
let browser;
let code = 0;
try {
  server = await startServer(distDir);
  browser = await launchBrowser();
  const p = await openPage(browser, server);
  await p.page.addInitScript(OBSERVE);
  const page = await openApp(p, server.url);
  await page.waitForTimeout(500);
  const viewport = await page.evaluate(() => `${window.innerWidth}x${window.innerHeight}`);
  const keys = BURSTS.reduce((n, [, t]) => n + t.length, 0);
  console.log(`bench typing: viewport ${viewport}; at each position ${keys} key presses (${delay} ms apart) in ${BURSTS.length} bursts, each followed by a 600 ms pause`);
  const rows = [];
  for (const where of POSITIONS) {
    const y = await scrollTo(page, where);
    await page.waitForTimeout(400);
    const seen = await withTimeout(typeHere(page), 120000, `typing at ${where}`);
    if (seen.long === null) throw new Error("this Chromium has no 'longtask' entries");
    const longest = seen.long.reduce((m, e) => Math.max(m, e.duration), 0);
    const slowKey = (seen.events || []).reduce((m, e) => Math.max(m, e.duration), 0);
    rows.push({ where, y, longTasks: seen.long.length, longestTask: longest, longestKey: slowKey, scrolledTo: seen.y });
    const long = seen.long.length ? `${seen.long.length} long task(s), the longest ${ms(longest)}` : 'no long task (none over 50 ms)';
    const key = slowKey > 0 ? ms(slowKey) : '< 16 ms';
    console.log(`bench typing: at ${where.padEnd(14)} (y ${String(y).padStart(5)}): ${long}; slowest key press input -> next paint ${key}`);
  }
  const worst = rows.reduce((m, r) => Math.max(m, r.longestTask), 0);
  const total = rows.reduce((n, r) => n + r.longTasks, 0);
  console.log(`bench typing: in all ${total} long task(s) over 50 ms${total ? `, the longest ${ms(worst)}` : ''} (target: none; reported, not asserted)`);
  const problems = [...new Set(p.problems)];
  if (problems.length) console.log(`bench typing: page problems during the run: ${problems.slice(0, 5).join(' | ')}`);
  mkdirSync(repoPath('artifacts'), { recursive: true });
  writeFileSync(join(repoPath('artifacts'), 'bench-typing.json'), JSON.stringify({ delay, bursts: BURSTS, rows, problems }, null, 2));
} catch (err) {
  console.log(`bench typing: could not measure: ${err.message}`);
  code = 1;
} finally {
  await closeBrowser(browser);
  if (server) await server.stop();
}
process.exit(code);
