// End-to-end checks of the analysis views (issues 5 and 8): the interactive roofline, the
// matmul explorer, the performance and cost view, "How accurate is this?" and the planner.

import { byId, check, expectChartDrawn, hoverUntil, openAt, readNumber, readText, setValue, waitFor } from './app.mjs';

/** Opens `query` on the app and waits for the element `testid` (embed pages have no app-root). */
function openView(p, server, query, testid) {
  return openAt(p, `${server.url}${query}`, testid);
}

/**
 * Chromium fetches the page icon again after a same-document URL change (the scenario is
 * synced into the URL with history.replaceState), which the harness counts as a request after
 * load. Drops exactly those entries, nothing else.
 */
function allowFaviconRefetch(p) {
  const keep = p.problems.filter((m) => !/^network request after load: GET \S+\/favicon[-\w]*\.svg$/.test(m));
  p.problems.splice(0, p.problems.length, ...keep);
}

export default function register(runner) {
  runner.test('roofline: draws, the batch slider moves decode to higher intensity, hover and click explain', async ({ open, server, screenshot, log }) => {
    const p = await open();
    const page = await openView(p, server, '?embed=roofline', 'roofline-view');
    await expectChartDrawn(page, 'chart-roofline');
    const before = await waitFor(async () => {
      const n = await readNumber(page, 'roofline-decode-intensity');
      return Number.isFinite(n) && n > 0 ? n : null;
    }, 'a decode intensity');
    await setValue(page, 'roofline-batch', 5); // 2^5 = 32 sequences
    const after = await waitFor(async () => {
      const n = await readNumber(page, 'roofline-decode-intensity');
      return n > before ? n : null;
    }, 'the decode intensity to rise with the batch');
    await waitFor(() => page.url().includes('batch=32'), 'the URL to carry the batch (written once the edit settles)');
    log(`decode intensity ${before} → ${after} FLOP/B at batch 32`);
    const name = await byId(page, 'roofline-point').locator('option').nth(2).innerText();
    const hit = await hoverUntil(page, 'chart-roofline', /FLOP\/B/);
    check(hit, 'no tooltip with an intensity found over the roofline');
    log(`tooltip: ${hit.text.replace(/\s+/g, ' ')}`);
    // Clicking a point shows its derivation; so does choosing it in the list.
    await page.mouse.click(hit.x, hit.y);
    await setValue(page, 'roofline-point', name);
    await byId(page, 'roofline-math').waitFor({ state: 'visible', timeout: 5000 });
    await screenshot(page, 'roofline-batch-32');
    allowFaviconRefetch(p);
  });

  runner.test('matmul explorer: M = N = K = 4,096 gives 4,096 / 3 FLOP/B; nonsense shows a message', async ({ open, server, screenshot }) => {
    const p = await open();
    const page = await openView(p, server, '?embed=matmul', 'matmul-view');
    await byId(page, 'matmul-preset-square_4096').click();
    const i = await waitFor(async () => {
      const n = await readNumber(page, 'matmul-intensity');
      return Math.abs(n - 4096 / 3) < 1 ? n : null;
    }, 'intensity 1365.3');
    check(Math.abs(i - 4096 / 3) < 1, `intensity ${i}`);
    await setValue(page, 'matmul-m', 'abc');
    await byId(page, 'matmul-m-error').waitFor({ state: 'visible', timeout: 5000 });
    await expectChartDrawn(page, 'chart-matmul');
    await screenshot(page, 'matmul');
    allowFaviconRefetch(p);
  });

  runner.test('cost: the L40S is cheaper per million tokens than the A10G (the chapter\'s conclusion)', async ({ open, server, screenshot, log }) => {
    const p = await open();
    const page = await openView(p, server, '?embed=cost', 'cost-table');
    const read = async (gpu) => {
      const t = await page.locator(`[data-testid="cost-row-${gpu}"] [data-testid="usd-per-mtok"]`).innerText();
      return Number(t.replace(/[$,]/g, ''));
    };
    const [a, l] = [await read('a10g'), await read('l40s')];
    log(`$ per million output tokens: A10G ${a}, L40S ${l}`);
    check(Number.isFinite(a) && Number.isFinite(l) && l < a, `L40S ${l} should be below A10G ${a}`);
    await expectChartDrawn(page, 'chart-cost-tokens');
    // A price override changes the cost and travels in the URL.
    await setValue(page, 'price-l40s', '100');
    await waitFor(async () => (await read('l40s')) > a, 'the L40S cost to follow its price');
    await waitFor(() => page.url().includes('price='), 'the price in the URL (written once the edit settles)');
    await screenshot(page, 'cost');
    allowFaviconRefetch(p);
  });

  runner.test('latency: table, ranges and the latency–throughput chart', async ({ open, server, screenshot }) => {
    const p = await open();
    const page = await openView(p, server, '?embed=latency&batch=4', 'perf-table');
    for (const gpu of ['a10g', 'l40s']) {
      const t = await page.locator(`[data-testid="perf-row-${gpu}"] [data-testid="tpot"]`).innerText();
      check(/\d.*ms/.test(t), `${gpu} TPOT: ${t}`);
    }
    await expectChartDrawn(page, 'chart-latency');
    await byId(page, 'perf-efficiencies').locator('summary').click();
    await setValue(page, 'eff-bw', '2');
    await byId(page, 'eff-bw-error').waitFor({ state: 'attached', timeout: 5000 });
    await screenshot(page, 'latency');
  });

  runner.test('accuracy: held-out errors per metric and the scatter', async ({ open, server, screenshot }) => {
    const p = await open();
    const page = await openView(p, server, '', 'accuracy-table');
    const med = await readText(page, 'acc-row-tpot_ms');
    check(/%/.test(med), `TPOT row: ${med}`);
    await byId(page, 'accuracy-view').scrollIntoViewIfNeeded();
    await expectChartDrawn(page, 'chart-accuracy');
    await screenshot(page, 'accuracy');
  });

  runner.test('planner: options ranked with a reason each; an impossible TPOT says why', async ({ open, server, screenshot, log }) => {
    const p = await open();
    const page = await openView(p, server, '?embed=planner', 'plan-table');
    const rows = page.locator('[data-testid="plan-table"] tbody tr');
    const n = await waitFor(async () => (await rows.count()) || null, 'plan rows');
    const reasons = await page.locator('[data-testid="plan-reason"]').allInnerTexts();
    check(reasons.length === n && reasons.every((r) => r.trim().length > 0), `reasons: ${reasons}`);
    await expectChartDrawn(page, 'chart-plan-cost');
    log(`${n} options; first: ${reasons[0]}`);
    // The plan's notes, as the CLI prints them: the cold start of one more best replica.
    const notes = await byId(page, 'plan-notes').innerText();
    const cold = notes.match(/One more replica of the best option takes about ([\d.,]+) s/);
    check(cold && Number(cold[1].replace(/,/g, '')) > 0, `plan notes: ${notes}`);
    await screenshot(page, 'planner');
    // The same notes in the Korean page, in Korean.
    const ko = await openView(await open(), server, '?embed=planner&lang=ko', 'plan-table');
    const notesKo = await waitFor(async () => {
      const t = await byId(ko, 'plan-notes').innerText().catch(() => '');
      return /약 [\d.,]+초/.test(t) ? t : null;
    }, 'the Korean cold-start note');
    check(!/replica|skipped|target|the best/i.test(notesKo), `Korean plan notes carry English: ${notesKo}`);
    log(`notes: ${notes.trim()} | ${notesKo.trim()}`);
    await setValue(page, 'plan-tpot', '0.5');
    await byId(page, 'plan-error').waitFor({ state: 'visible', timeout: 10000 });
    await waitFor(() => page.url().includes('pl_tpot=0.5'), 'the TPOT target in the URL (written once the edit settles)');
    allowFaviconRefetch(p);
  });

  runner.test('planner: a GPU whose latency is only a lower bound is flagged in the verdict', async ({ open, server, screenshot, log }) => {
    const p = await open();
    for (const lang of ['en', 'ko']) {
      const page = await openView(p, server, `?embed=planner&gpu=m4-max&lang=${lang}`, 'plan-table');
      const row = page.locator('[data-testid="plan-table"] tbody tr[data-lower-bound="true"]').first();
      await row.waitFor({ state: 'visible', timeout: 30000 });
      check((await row.locator('[data-testid="plan-lower-bound"]').count()) > 0, `${lang}: the lower-bound mark beside the times`);
      await page.locator('[data-testid="plan-best-lower-bound"]').waitFor({ state: 'visible', timeout: 5000 });
      const notes = await byId(page, 'plan-notes').innerText();
      if (lang === 'en') check(/lower-bound times/.test(notes) && notes.includes('Apple M4 Max'), `en plan notes: ${notes}`);
      if (lang === 'ko') check(notes.includes('하한값') && notes.includes('Apple M4 Max'), `ko plan notes: ${notes}`);
      log(`${lang}: ${notes.trim().split('\n')[0]}`);
      await screenshot(page, `planner-lower-bound-${lang}`);
    }
  });

  runner.test('planner: largest model of a family and GPUs per node', async ({ open, server, screenshot, log }) => {
    const p = await open();
    const page = await openView(p, server, '?embed=planner&gpu=h100-sxm&gpu=l40s', 'plan-largest-table');
    const rows = page.locator('[data-testid="plan-largest-table"] tbody tr');
    const readRows = async () =>
      page.locator('[data-testid="plan-largest-table"] tbody tr').evaluateAll((trs) =>
        trs.map((tr) => ({
          name: tr.querySelector('th').innerText,
          meets: tr.dataset.meets === 'true',
          pick: tr.classList.contains('best'),
          cells: [...tr.querySelectorAll('td')].map((td) => td.innerText.trim()),
        })),
      );
    // A larger family: Llama 3.x has five sizes (1B … 405B), largest first.
    await setValue(page, 'plan-family', 'llama3');
    await waitFor(async () => ((await rows.count()) === 5 ? true : null), 'five Llama 3.x rows');
    await waitFor(() => page.url().includes('pl_fam=llama3'), 'the family in the URL');
    const list = await readRows();
    const picks = list.filter((r) => r.pick);
    check(picks.length === 1, `one highlighted size: ${JSON.stringify(list.map((r) => [r.name, r.meets, r.pick]))}`);
    const at = list.findIndex((r) => r.pick);
    check(list[at].meets && list.slice(0, at).every((r) => !r.meets), `the pick is the first size that meets: ${at}`);
    check(list.slice(0, at).every((r) => r.cells[r.cells.length - 1].length > 10), 'every larger size says why not');
    const conclusion = await readText(page, 'plan-largest-conclusion');
    const pickName = list[at].name.replace(/\s*largest that meets the targets\s*$/, '').trim();
    check(conclusion.includes(pickName), `conclusion names ${pickName}: ${conclusion}`);
    const next = list.slice(at + 1).find((r) => r.meets);
    check(!next || conclusion.includes(next.name), `conclusion compares with the next smaller size ${next?.name}: ${conclusion}`);
    log(`Llama 3.x: ${pickName} is the largest that meets; ${conclusion}`);
    // GPUs per node: 1 leaves only TP 1 inside the node.
    await setValue(page, 'plan-node', '1');
    await waitFor(async () => (page.url().includes('pl_node=1') ? true : null), 'pl_node=1 in the URL');
    const tps = async () =>
      page.locator('[data-testid="plan-table"] tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.testid));
    const one = await waitFor(async () => {
      const ids = await tps();
      return ids.length > 0 && ids.every((id) => id.endsWith('-tp1')) ? ids : null;
    }, 'only TP 1 rows with one GPU per node');
    // Nonsense: a message beside the field, the last good plan kept.
    await setValue(page, 'plan-node', '0');
    await byId(page, 'plan-node-error').waitFor({ state: 'visible', timeout: 10000 });
    check(page.url().includes('pl_node=1'), `bad value reached the URL: ${page.url()}`);
    check(JSON.stringify(await tps()) === JSON.stringify(one), 'plan changed on a bad value');
    await setValue(page, 'plan-node', '2');
    await waitFor(async () => ((await tps()).some((id) => id.endsWith('-tp2')) ? true : null), 'TP 2 rows with two GPUs per node');
    await byId(page, 'plan-largest').scrollIntoViewIfNeeded();
    await screenshot(page, 'planner-largest');
    allowFaviconRefetch(p);
  });
}
