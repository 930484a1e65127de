// End-to-end checks of the performance view's tensor-parallel table and notes (issue 5): per
// compared GPU, one row per valid TP degree with the scenario's degree marked, and the A10G's
// "no published compute peak" note beside its numbers, in both languages.

import { byId, check, openAt, waitFor } from './app.mjs';

const HANGUL = /[\uac00-\ud7a3]/;


export default function register(runner) {
  runner.test('perf: TP table per GPU, chosen degree marked, memory-allowed batch rises with TP', async ({ open, server, screenshot, log }) => {
    const p = await open();
    const page = await openAt(p, `${server.url}?embed=latency&batch=4&tp=2&lang=en`, 'tp-sweep');
    for (const gpu of ['a10g', 'l40s']) {
      const table = byId(page, `tp-table-${gpu}`);
      await table.waitFor({ state: 'visible', timeout: 10000 });
      const rows = table.locator('tbody tr');
      const n = await waitFor(async () => (await rows.count()) || null, `${gpu} TP rows`);
      const tps = [];
      const batches = [];
      for (let i = 0; i < n; i += 1) {
        const id = await rows.nth(i).getAttribute('data-testid');
        tps.push(Number(id.replace('tp-row-', '')));
        const mb = rows.nth(i).locator('[data-testid="tp-max-batch"]');
        batches.push((await mb.count()) ? Number((await mb.innerText()).split('\n')[0].replace(/,/g, '')) : 0);
      }
      log(`${gpu}: TP ${tps.join(', ')}; max batch ${batches.join(', ')}`);
      check(tps[0] === 1 && tps.includes(2) && tps.every((t, i) => i === 0 || t > tps[i - 1]), `${gpu} TP degrees: ${tps}`);
      check(batches.every((b, i) => i === 0 || b > batches[i - 1]), `${gpu}: the memory-allowed batch should rise with TP: ${batches}`);
      const chosen = table.locator('tr.chosen');
      check((await chosen.count()) === 1, `${gpu}: exactly one chosen row`);
      check((await chosen.getAttribute('data-testid')) === 'tp-row-2', `${gpu}: TP 2 should be the chosen row`);
      check((await chosen.locator('[data-testid="tp-chosen"]').innerText()).trim().length > 0, `${gpu}: the chosen row should say so`);
      const tpot = await rows.first().locator('[data-testid="tp-tpot"]').innerText();
      check(/\d.*ms/.test(tpot), `${gpu} TP 1 TPOT: ${tpot}`);
    }
    await byId(page, 'tp-sweep').scrollIntoViewIfNeeded();
    await screenshot(page, 'tp-table');
  });

  runner.test('perf: a GPU without a published peak (Apple M4 Max) says its TTFT is a lower bound, in English and Korean', async ({ open, server, screenshot, log }) => {
    const p = await open();
    const seen = {};
    for (const lang of ['en', 'ko']) {
      const page = await openAt(p, `${server.url}?embed=latency&gpu=m4-max&gpu=l40s&batch=4&lang=${lang}`, 'perf-table');
      const note = page.locator('[data-testid="perf-notes-m4-max"] [data-note="no_peak"]');
      await note.waitFor({ state: 'visible', timeout: 30000 });
      const text = await note.innerText();
      seen[lang] = text;
      check(text.includes('Apple M4 Max'), `${lang} note: ${text}`);
      if (lang === 'en') check(/lower bound/.test(text), `en note: ${text}`);
      if (lang === 'ko') check(HANGUL.test(text) && text.includes('하한'), `ko note: ${text}`);
      // Beside the M4 Max's TTFT, and not the L40S's (which publishes its peak).
      await byId(page, 'perf-row-m4-max').locator('[data-testid="ttft-lower-bound"]').waitFor({ state: 'visible', timeout: 5000 });
      check((await page.locator('[data-testid="perf-row-l40s"] [data-testid="ttft-lower-bound"]').count()) === 0, 'the L40S TTFT is not a lower bound');
      check((await page.locator('[data-testid="perf-notes-l40s"]').count()) === 0, 'the L40S has no notes here');
      // The TP table shows it too.
      await page.locator('[data-testid="tp-notes-m4-max"] [data-note="no_peak"]').waitFor({ state: 'visible', timeout: 5000 });
      check((await page.locator('[data-testid="tp-table-m4-max"] [data-testid="tp-lower-bound"]').count()) > 0, 'TP table: M4 Max TTFT lower bound');
      // The calibration range stays visible under each time.
      const ttftCell = await byId(page, 'perf-row-m4-max').locator('td').first().innerText();
      check(/–/.test(ttftCell), `${lang}: no p10–p90 range under the M4 Max TTFT: ${ttftCell}`);
      await byId(page, 'perf-notes-m4-max').scrollIntoViewIfNeeded();
      await screenshot(page, `no-peak-note-${lang}`);
    }
    check(seen.en !== seen.ko, 'the note should change with the language');
    log(`en: ${seen.en}`);
    log(`ko: ${seen.ko}`);
  });
}
