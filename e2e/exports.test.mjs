// Exports and offline use: the CSV and JSON downloads are valid and hold the page's numbers;
// copy-link either copies or shows the link to copy by hand; the print stylesheet hides every
// control and keeps the numbers and charts; once loaded, the app reloads with the network off
// (service worker).

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoPath } from './harness.mjs';
import { byId, check, lateSettled, openApp, readNumber, waitFor } from './app.mjs';

/** A small RFC 4180 reader: quoted fields, doubled quotes, CRLF line ends. */
function parseCsv(text) {
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i += 1; } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; }
    else if (c === '\r' && text[i + 1] === '\n') { /* skip */ }
    else if (c === '\n') { row.push(field); rows.push(row); row = []; field = ''; }
    else field += c;
  }
  return rows;
}

/** Clicks a button and returns the downloaded file's name and text. */
async function download(page, testId) {
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 10000 }), byId(page, testId).first().click()]);
  const stream = await dl.createReadStream();
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  return { name: dl.suggestedFilename(), text: Buffer.concat(chunks).toString('utf8') };
}

export default function register(runner) {
  runner.test('exports: CSV and JSON downloads hold the page numbers', async ({ open, server, log }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    await waitFor(async () => (await readNumber(page, 'params-total')) > 0, 'the parameter count');
    const params = await readNumber(page, 'params-total');
    const outDir = repoPath('artifacts', 'exports');
    mkdirSync(outDir, { recursive: true });

    const csv = await download(page, 'export-csv');
    writeFileSync(join(outDir, csv.name), csv.text);
    check(csv.name.endsWith('.csv'), `CSV file name ${csv.name}`);
    const rows = parseCsv(csv.text);
    check(rows.length >= 2, `CSV has ${rows.length} rows`);
    check(rows.every((r) => r.length === rows[0].length), 'CSV rows differ in length');
    const col = (name) => rows[0].indexOf(name);
    check(col('params_total') >= 0 && col('requests_practical (requests)') >= 0, `CSV header: ${rows[0].join(',')}`);
    check(Number(rows[1][col('params_total')]) === params, `CSV params ${rows[1][col('params_total')]} vs page ${params}`);
    const gpuIds = rows.slice(1).map((r) => r[col('gpu_id')]);
    for (const id of gpuIds) {
      const onPage = await readNumber(page, `max-requests-${id}`).catch(() => NaN);
      const inCsv = Number(rows[1 + gpuIds.indexOf(id)][col('requests_rule (requests)')]);
      check(Number.isNaN(onPage) || onPage === inCsv, `${id}: page says ${onPage} requests, CSV ${inCsv}`);
    }

    const json = await download(page, 'export-json');
    writeFileSync(join(outDir, json.name), json.text);
    const doc = JSON.parse(json.text);
    check(doc.format && doc.params_total === params, `JSON params ${doc.params_total} vs page ${params}`);
    check(Array.isArray(doc.gpus) && doc.gpus.length === gpuIds.length, 'JSON and CSV list different GPUs');
    log(`${csv.name} (${rows.length - 1} GPUs), ${json.name}`);
  });

  runner.test('exports: copy-link copies or shows the link', async ({ open, server }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    await byId(page, 'copy-link').first().click();
    const status = await waitFor(async () => (await byId(page, 'export-status').first().innerText()).trim(), 'the copy-link status');
    const field = byId(page, 'export-status').locator('input');
    if ((await field.count()) > 0) {
      const value = await field.first().inputValue();
      check(value.startsWith(server.url), `the link shown is ${value}`);
    } else {
      check(status.length > 0, 'no status after copying');
    }
  });

  runner.test('exports: the print stylesheet hides controls and keeps numbers and charts', async ({ open, server, screenshot }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    await waitFor(async () => (await readNumber(page, 'params-total')) > 0, 'the parameter count');
    await page.emulateMedia({ media: 'print' });
    const seen = await page.evaluate(() => {
      const shown = (el) => el && getComputedStyle(el).display !== 'none' && el.getBoundingClientRect().width > 0;
      return {
        buttons: [...document.querySelectorAll('button')].filter(shown).length,
        exportBar: shown(document.querySelector('[data-testid="export-bar"]')),
        params: shown(document.querySelector('[data-testid="params-total"]')),
        canvases: [...document.querySelectorAll('canvas')].filter(shown).length,
      };
    });
    await screenshot(page, 'print');
    await page.emulateMedia({ media: 'screen' });
    check(seen.buttons === 0, `${seen.buttons} buttons visible in print`);
    check(!seen.exportBar, 'the export bar is visible in print');
    check(seen.params, 'the parameter count is hidden in print');
    check(seen.canvases > 0, 'no chart in print');
  });

  runner.test('offline: once loaded, the app reloads with the network off', async ({ open, server, screenshot, log }) => {
    const p = await open();
    // Not openApp: this test reloads on purpose, so it never marks the page loaded.
    await p.page.goto(server.url, { waitUntil: 'load' });
    await p.page.getByTestId('app-root').waitFor({ state: 'visible', timeout: 30000 });
    // The late module is fetched after the first answer: a reload while it is still arriving
    // aborts that request (ERR_ABORTED), which is this test's timing, not the app's problem.
    await lateSettled(p.page);
    const ready = await p.page.evaluate(async () => {
      if (!('serviceWorker' in navigator)) return 'no serviceWorker API';
      const reg = await Promise.race([
        navigator.serviceWorker.ready,
        new Promise((r) => setTimeout(() => r(null), 15000)),
      ]);
      if (!reg) return 'the service worker did not become ready';
      if (!navigator.serviceWorker.controller) {
        await new Promise((r) => {
          navigator.serviceWorker.addEventListener('controllerchange', r, { once: true });
          setTimeout(r, 5000);
        });
      }
      return `ready, scope ${reg.scope}`;
    });
    log(ready);
    check(ready.startsWith('ready'), ready);
    await p.context.setOffline(true);
    await p.page.reload({ waitUntil: 'load' });
    await p.page.getByTestId('app-root').waitFor({ state: 'visible', timeout: 30000 });
    await waitFor(async () => (await readNumber(p.page, 'params-total')) > 0, 'numbers while offline');
    // The late module (the analysis sections, src/ui/late.rs) comes from the cache too.
    await waitFor(
      async () => (await p.page.locator('[data-late-slot="roofline"][data-late-ready] [data-testid="chart-roofline"]').count()) > 0,
      'the roofline section (late module) while offline',
      20000,
    );
    await screenshot(p.page, 'offline');
    await p.context.setOffline(false);
    // A request the browser tried while offline fails by design; anything else still counts.
    const offlineOnly = p.problems.filter((x) => !x.includes('ERR_INTERNET_DISCONNECTED'));
    p.problems.splice(0, p.problems.length, ...offlineOnly);
  });
}
