// A course page with three embedded widgets (different scenarios), cold: how long until all
// three answers are on screen, and how many bytes the page fetched for them. Reports only; it
// fails only if it cannot measure at all.
//
//   node bench/embeds.mjs [--dist DIR] [--runs N] [--profiles loopback,10mbit,cpu4x]
//
// The course page (written here, served beside the app under the e2e sub-path) holds three
// iframes of `?embed=memory` with different models and GPUs. The static server sends brotli and
// `Cache-Control: max-age=3600`, as a static host does for an app's files, so the three frames
// may share what one of them fetched. Each frame gets bench/load_common.mjs's first-answer probe
// (the fit table's verdicts are an embed's answer, from the filled copy or the live widget,
// whichever is on screen first); a frame's answer time is put on the course
// page's clock (performance.timeOrigin). Printed per profile: the median over the runs of the
// time to all three answers, the bytes (encoded bodies) the page fetched before the last answer
// and in all, and the files fetched from the network more than once (the frames' own pages
// differ by their query, so each is fetched).

import { cpus } from 'node:os';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { arg, closeBrowser, launchBrowser, repoPath, withTimeout } from '../e2e/harness.mjs';
import { FIRST_ANSWER_PROBE, PROFILES, VIEWPORT, kB, load, loadDist, median, msText, startStaticServer } from './load_common.mjs';

const distDir = repoPath(arg('dist', 'dist'));
const runs = Math.max(1, Number(arg('runs', '7')));
const profileNames = arg('profiles', 'loopback,10mbit,cpu4x').split(',').filter(Boolean);
const TARGET_MS = 300;

/** The three widgets: different models, GPUs and lengths. */
const WIDGETS = [
  '?embed=memory&model=llama-2-7b&gpu=a10g&gpu=l40s',
  '?embed=memory&model=qwen3-8b&gpu=h100-sxm&ctx=8192&n=8',
  '?embed=memory&model=mixtral-8x7b&gpu=h100-sxm&tp=2&ctx=2048',
];

const COURSE_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Chapter 3: serving</title></head><body>
<h1>Chapter 3: serving an LLM</h1>
${WIDGETS.map((w, i) => `<p>Widget ${i + 1}</p><iframe title="widget ${i + 1}" src="./${w}" width="900" height="700" style="border:0"></iframe>`).join('\n')}
</body></html>`;

/** One cold load of the course page: the time to all three answers and the bytes fetched. */
async function coldLoad(browser, server, profile) {
  const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1, serviceWorkers: 'block' });
  try {
    await context.addInitScript(FIRST_ANSWER_PROBE);
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    if (profile.conditions) await cdp.send('Network.emulateNetworkConditions', profile.conditions);
    if (profile.cpuRate) await cdp.send('Emulation.setCPUThrottlingRate', { rate: profile.cpuRate });
    const fetched = [];
    context.on('requestfinished', async (req) => {
      const sizes = await req.sizes().catch(() => null);
      fetched.push({ file: req.url().split('/').pop().split('?')[0] || '(index)', body: sizes?.responseBodySize ?? 0, at: Date.now() });
    });
    const start = Date.now();
    await page.goto(`${server.url}course-page.html`, { waitUntil: 'commit', timeout: 90000 });
    const origin = await page.evaluate(() => performance.timeOrigin);
    const answers = await withTimeout((async () => {
      for (;;) {
        const frames = page.frames().filter((f) => f !== page.mainFrame());
        // The answer first on screen: the filled copy's (the embeds' first-answer module) or the live widget's.
        const got = await Promise.all(frames.map((f) => f.evaluate(() => {
          const a = window.__firstAnswer;
          const t = [a?.painted, a?.staticPainted].filter((x) => x != null);
          return t.length ? performance.timeOrigin + Math.min(...t) : null;
        }).catch(() => null)));
        if (frames.length === WIDGETS.length && got.every((t) => t !== null)) return got.map((t) => t - origin);
        await new Promise((r) => setTimeout(r, 20));
      }
    })(), 90000, 'three answers');
    await page.waitForTimeout(500);
    const last = Math.max(...answers);
    const before = fetched.filter((f) => f.at - start <= last + 50).reduce((n, f) => n + f.body, 0);
    const counts = new Map();
    // From the network (a body), not from the cache another frame filled.
    for (const f of fetched.filter((x) => x.body > 0)) counts.set(f.file, (counts.get(f.file) || 0) + 1);
    return { answers, last, before, total: fetched.reduce((n, f) => n + f.body, 0), repeated: [...counts].filter(([, n]) => n > 1) };
  } finally {
    await context.close();
  }
}

let server;
let browser;
let code = 0;
try {
  const files = loadDist(distDir);
  const raw = Buffer.from(COURSE_PAGE);
  files.set('course-page.html', { raw, type: 'text/html; charset=utf-8', compressible: true, gzip: gzipSync(raw), br: brotliCompressSync(raw) });
  server = await startStaticServer(files);
  server.encoding = 'br';
  server.cacheControl = 'max-age=3600';
  browser = await launchBrowser();
  console.log(`bench embeds: machine load average ${load()} on ${cpus().length} CPU(s); a course page with ${WIDGETS.length} embeds: ${WIDGETS.join(' | ')}`);
  for (const name of profileNames) {
    const profile = PROFILES[name];
    if (!profile) throw new Error(`unknown profile ${name} (${Object.keys(PROFILES).join(', ')})`);
    const results = [];
    for (let i = 0; i < runs; i += 1) results.push(await coldLoad(browser, server, profile));
    const lasts = results.map((r) => r.last);
    console.log(`bench embeds: ${name} (${profile.label}): all ${WIDGETS.length} answers on screen median ${msText(median(lasts))} (${lasts.map((t) => t.toFixed(0)).join(', ')}); target <= ${TARGET_MS} ms on loopback: ${name === 'loopback' ? (median(lasts) <= TARGET_MS ? 'met' : 'NOT met') : '-'} (reported, not asserted)`);
    console.log(`bench embeds: ${name}: bytes fetched before the last answer median ${kB(median(results.map((r) => r.before)))}, in all ${kB(median(results.map((r) => r.total)))}; fetched from the network more than once (first run): ${results[0].repeated.map(([f, n]) => `${f} ×${n}`).join(', ') || 'none'}`);
  }
} catch (err) {
  console.log(`bench embeds: could not measure: ${err.message}`);
  code = 1;
} finally {
  await closeBrowser(browser);
  if (server) await server.stop();
}
process.exit(code);
