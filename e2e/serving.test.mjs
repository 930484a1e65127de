// End-to-end checks of "Serving under load" (issue 17 part 5): the simulator runs in a Web
// Worker loaded only when the section nears the screen; a sweep is drawn, the table shows
// numbers, the knee is marked; an input change recomputes; a link restores the inputs; a bad
// value gives a sentence and keeps the last good result.

import { LAZY_WORKER_FILE } from './harness.mjs';
import { byId, check, expectChartDrawn, hoverUntil, openApp, readText, setValue, waitFor } from './app.mjs';

// Fewer requests than the default 2,000 keep the suite quick; the bench (bench/sim_worker.mjs)
// times the default.
const SMALL = 'sv_n=600&sv_warm=50';

const workerRequests = (p) => p.requests.filter((r) => LAZY_WORKER_FILE.test(r.url.split('?')[0]));

/** Scrolls the section's heading into view. */
async function scrollToServing(page) {
  await page.evaluate(() => document.getElementById('serving-title')?.scrollIntoView());
}

/** The statistics table's numeric cells, as numbers. */
async function statNumbers(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('[data-testid="serving-stats"] td.num')].map((td) =>
      Number(td.textContent.replace(/,/g, '')),
    ),
  );
}

/** Waits until the summary is shown and differs from `before`; returns it. */
async function summaryAfter(page, before, what) {
  return waitFor(async () => {
    if ((await byId(page, 'serving-summary').count()) === 0) return null;
    const t = await readText(page, 'serving-summary');
    return t && t !== before && /\d/.test(t) ? t : null;
  }, what, 60000, 200);
}

export default function register(runner) {
  runner.test('serving: the worker loads near the section, draws a sweep with the knee, recomputes on input, keeps the last result on a bad value', async ({ open, server, screenshot, log }) => {
    const p = await open({ viewport: { width: 1400, height: 1000 } });
    const page = await openApp(p, `${server.url}?gpu=h100-sxm&gpu=l40s&${SMALL}`);
    check(workerRequests(p).length === 0, `the worker loaded before its section was near: ${JSON.stringify(workerRequests(p))}`);
    check(await byId(page, 'serving-placeholder').count() === 1, 'no placeholder before the section is reached');
    // The first result mounts in two frames (the summary and the charts, then the table and
    // the math): what is below the results (the bench box) stands where it stood beside the
    // placeholder until the whole result is there, then moves once.
    await page.evaluate(() => {
      window.__benchTops = [];
      const tick = () => {
        const bench = document.querySelector('[data-testid="bench"]');
        if (bench) {
          const top = Math.round((bench.getBoundingClientRect().top + window.scrollY) * 2) / 2;
          const table = !!document.querySelector('[data-testid="serving-stats"] td');
          const last = window.__benchTops[window.__benchTops.length - 1];
          if (!last || last.top !== top || last.table !== table) window.__benchTops.push({ top, table });
          // 30 frames after the table came, the charts have long been drawn.
          if (table) window.__benchFrames = (window.__benchFrames || 0) + 1;
          if (window.__benchFrames > 30) return;
        }
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    await scrollToServing(page);
    // The arrivals and lengths selects show their longest option whole at 1400 px (not shrunk
    // below their own width by a grid column) and stay inside the section.
    const clipped = await page.evaluate(() => {
      const section = document.querySelector('[data-testid="serving-view"]').getBoundingClientRect();
      return ['sv-arr', 'sv-ds'].flatMap((id) => {
        const sel = document.querySelector(`[data-testid="${id}"]`);
        const shown = sel.getBoundingClientRect();
        const keep = sel.style.cssText;
        sel.style.maxWidth = 'none';
        sel.style.width = 'auto';
        const own = sel.getBoundingClientRect().width;
        sel.style.cssText = keep;
        const out = [];
        if (shown.width + 1 < own) out.push(`${id} shown ${shown.width.toFixed(0)} px of its ${own.toFixed(0)} px`);
        if (shown.right > section.right + 1) out.push(`${id} ends at ${shown.right.toFixed(0)} px, past the section's ${section.right.toFixed(0)} px`);
        return out;
      });
    });
    check(clipped.length === 0, `serving selects clipped: ${clipped.join('; ')}`);
    const t0 = Date.now();
    const first = await summaryAfter(page, '', 'the first sweep');
    log(`first sweep shown after ${Date.now() - t0} ms: ${first.split('\n').join(' | ')}`);
    check(/saturates at [\d.,]+ req\/s/.test(first), `summary without a saturation rate: ${first}`);
    const nums = await waitFor(async () => {
      const n = await statNumbers(page);
      return n.length > 0 ? n : null;
    }, 'the statistics table');
    const benchTops = await waitFor(() => page.evaluate(() => (window.__benchFrames > 30 ? window.__benchTops : null)), 'the bench box\'s positions');
    const placeholderTop = benchTops[0].top;
    const moved = benchTops.filter((t) => t.top !== placeholderTop);
    check(
      moved.every((t) => t.table) && new Set(moved.map((t) => t.top)).size <= 1,
      `the bench box moved before the whole result was there, or more than once: ${JSON.stringify(benchTops)}`,
    );
    check(nums.length >= 2 * 15 && nums.every(Number.isFinite) && nums.some((n) => n > 0), `table numbers: ${nums}`);
    await expectChartDrawn(page, 'chart-serving-rate');
    await expectChartDrawn(page, 'chart-serving-series');
    const knee = await hoverUntil(page, 'chart-serving-rate', /saturation [\d.,]+ req\/s/, { dx: 2, dy: 6 });
    check(knee, 'no knee (saturation) marker found on the rate chart');
    log(`knee tooltip: ${knee.text}`);
    await byId(page, 'serving-view').scrollIntoViewIfNeeded();
    await screenshot(page, 'serving-sweep', { fullPage: false });
    await page.evaluate(() => document.querySelector('[data-testid="chart-serving-series"]')?.scrollIntoView());
    await screenshot(page, 'serving-series', { fullPage: false });

    // A smaller max_num_seqs lowers the capacity: the summary changes. "Recomputing" comes and
    // goes in the status line's reserved height: the results below it do not move.
    await scrollToServing(page);
    await page.evaluate(() => {
      const status = document.querySelector('[data-testid="serving-status"]');
      const below = () => document.querySelector('[data-testid="serving-summary"]').getBoundingClientRect().top + window.scrollY;
      window.__tops = [{ running: false, top: below() }];
      new MutationObserver(() => window.__tops.push({ running: !!status.querySelector('[data-testid="serving-running"]'), top: below() }))
        .observe(status, { childList: true, subtree: true });
    });
    await setValue(page, 'sv-mns', 8);
    const second = await summaryAfter(page, first, 'a recomputed sweep after max_num_seqs = 8');
    log(`after max_num_seqs 8: ${second.split('\n').join(' | ')}`);
    const tops = await page.evaluate(() => window.__tops);
    check(tops.some((t) => t.running), `"recomputing" was never shown: ${JSON.stringify(tops)}`);
    check(tops.every((t) => Math.abs(t.top - tops[0].top) < 0.5), `the results moved as the status line changed: ${JSON.stringify(tops)}`);
    check(page.url().includes('sv_mns=8'), `the URL does not carry sv_mns: ${page.url()}`);

    // A bad value: a sentence beside the field, the result kept.
    await setValue(page, 'sv-gmu', '1.7');
    await waitFor(async () => (await byId(page, 'sv-gmu-error').count()) > 0 && (await readText(page, 'sv-gmu-error')).length > 0, 'the gpu_memory_utilization error');
    await page.waitForTimeout(500);
    check((await readText(page, 'serving-summary')) === second, 'the result changed after a bad value');
    check(!page.url().includes('sv_gmu'), `a bad value reached the URL: ${page.url()}`);
    const files = workerRequests(p).map((r) => r.url.split('/').pop());
    log(`worker files: ${files.join(', ')}`);
    for (const f of ['sim_worker_loader.js', 'sim_worker.js', 'sim_worker_bg.wasm']) {
      const n = files.filter((x) => x === f).length;
      check(n >= 1 && n <= 2, `${f} fetched ${n} times`);
    }
  }, { timeoutMs: 240000 });

  runner.test('serving: choosing SGLang or TensorRT-LLM names their knobs, reaches the link and the result; a link restores the engine, a bad one gives a notice', async ({ open, server, screenshot }) => {
    const p = await open({ viewport: { width: 1400, height: 1000 } });
    const page = await openApp(p, `${server.url}?${SMALL}`);
    await scrollToServing(page);
    const before = await summaryAfter(page, '', 'the vLLM sweep');
    const label = (id) => page.evaluate((i) => document.querySelector(`label[for="${i}"]`)?.textContent ?? null, id);
    check((await label('sv-mns')) === 'max_num_seqs', `vLLM's label: ${await label('sv-mns')}`);
    await byId(page, 'sv-engine').selectOption('sglang');
    await waitFor(async () => (await label('sv-mns')) === '--max-running-requests', "SGLang's --max-running-requests label", 10000);
    check((await label('sv-mbt')) === '--chunked-prefill-size', `SGLang's chunk label: ${await label('sv-mbt')}`);
    check((await byId(page, 'sv-bs').count()) === 0 && (await byId(page, 'sv-gmu').count()) === 0, 'block_size and gpu_memory_utilization are vLLM-only');
    // The default is the one the server path's label quotes for SGLang (a core test holds the
    // label to the constant).
    const quoted = ((await label('sv-fo')) ?? '').match(/([\d.]+) on SGLang/)?.[1];
    check(quoted !== undefined && (await byId(page, 'sv-fo').inputValue()) === quoted, `SGLang's server path: ${await byId(page, 'sv-fo').inputValue()}, label quotes ${quoted}`);
    await waitFor(async () => new URL(page.url()).searchParams.get('sv_engine') === 'sglang', 'sv_engine=sglang in the URL', 10000);
    const after = await summaryAfter(page, before, 'the SGLang sweep');
    check(/SGLang 0\.5\.9/.test(after), `the result names SGLang: ${after}`);
    await screenshot(page, 'serving-sglang', { fullPage: false });
    // A link restores the engine and its knobs' names.
    const q = await open({ viewport: { width: 1400, height: 1000 } });
    const linked = await openApp(q, `${server.url}?${SMALL}&sv_engine=trtllm&sv_mns=64`);
    check((await byId(linked, 'sv-engine').inputValue()) === 'trtllm', 'the linked engine');
    check((await linked.evaluate(() => document.querySelector('label[for="sv-mns"]')?.textContent)) === 'max_batch_size', "TensorRT-LLM's max_batch_size label");
    check((await byId(linked, 'sv-mns').inputValue()) === '64', 'the linked max_batch_size');
    // A bad engine: a notice, and vLLM kept.
    const r = await open({ viewport: { width: 1400, height: 1000 } });
    const bad = await openApp(r, `${server.url}?sv_engine=tgi`);
    const notices = await readText(bad, 'notices');
    check(/sv_engine/.test(notices), `no notice names sv_engine: ${notices}`);
    check((await byId(bad, 'sv-engine').inputValue()) === 'vllm', 'vLLM kept');
  }, { timeoutMs: 180000 });

  runner.test('serving: speculative decoding from a link, turned off and on with its fields; a mean accepted length that cannot fit is refused', async ({ open, server, screenshot, log }) => {
    const p = await open({ viewport: { width: 1400, height: 1000 } });
    const page = await openApp(p, `${server.url}?${SMALL}&sv_arr=conc&sv_conc=4&sv_spec=eagle3&sv_spec_k=2`);
    check((await byId(page, 'sv-spec').inputValue()) === 'eagle3', 'the linked method');
    check((await byId(page, 'sv-spec_k').inputValue()) === '2', 'the linked draft count');
    await scrollToServing(page);
    const spec = await summaryAfter(page, '', 'the EAGLE-3 sweep');
    log(`summary: ${spec.split('\n').join(' | ')}`);
    check(/Speculative decoding \(eagle3, 2 drafts per step\)/.test(spec), `the result names the speculation: ${spec}`);
    await screenshot(page, 'serving-spec', { fullPage: false });
    // Off: its fields go, the URL forgets it, the result is recomputed without it.
    await byId(page, 'sv-spec').selectOption('off');
    await waitFor(async () => (await byId(page, 'sv-spec_k').count()) === 0, 'the draft field hidden when off', 10000);
    await waitFor(async () => !new URL(page.url()).searchParams.has('sv_spec'), 'sv_spec gone from the URL', 10000);
    const off = await summaryAfter(page, spec, 'the sweep without speculation');
    check(!/Speculative decoding/.test(off), `no speculation note when off: ${off}`);
    // A mean accepted length above 1 + k: a sentence, the value not used.
    const q = await open({ viewport: { width: 1400, height: 1000 } });
    const bad = await openApp(q, `${server.url}?sv_spec=ngram&sv_spec_k=2&sv_spec_al=4`);
    const notices = await readText(bad, 'notices');
    check(/sv_spec_al/.test(notices), `no notice names sv_spec_al: ${notices}`);
    check((await byId(bad, 'sv-spec_al').inputValue()) === '0', `the bad length was used: ${await byId(bad, 'sv-spec_al').inputValue()}`);
  }, { timeoutMs: 180000 });

  runner.test('serving: disaggregated prefill/decode from a link shows both pools and the stages of TTFT, turned off and on; a bad worker count is refused', async ({ open, server, screenshot, log }) => {
    const p = await open({ viewport: { width: 1400, height: 1000 } });
    const page = await openApp(p, `${server.url}?${SMALL}&sv_arr=conc&sv_conc=8&sv_disagg=1&sv_pw=1&sv_dw=2`);
    check((await byId(page, 'sv-disagg').inputValue()) === 'on', 'the linked toggle');
    check((await byId(page, 'sv-dw').inputValue()) === '2', 'the linked decode workers');
    check((await byId(page, 'sv-kvl').inputValue()) === 'auto', 'the link left automatic');
    await scrollToServing(page);
    const on = await summaryAfter(page, '', 'the disaggregated sweep');
    log(`summary: ${on.split('\n').join(' | ')}`);
    check(/Disaggregated: 1 prefill worker\(s\) of 1 GPU\(s\) and 2 decode worker\(s\)/.test(on), `the summary names the pools: ${on}`);
    // The pools' table: both busy shares, the link, and TTFT's three stages (mean / P99).
    const table = await waitFor(async () => ((await byId(page, 'serving-disagg').count()) ? readText(page, 'serving-disagg') : null), 'the pools table', 30000);
    log(`pools: ${table.split('\n').join(' | ')}`);
    for (const row of [/prefill pool busy \(% of the run\)\s+\d/, /decode pool busy \(% of the run\)\s+\d/, /decode pool \(workers × GPUs each\)\s+2 × 1/,
      // A10G and L40S are PCIe-only cards: the automatic link is the NIC's (InfiniBand).
      /KV link \(fixed latency per transfer, ms\)\s+InfiniBand \(\d+ ms\)/, /send → prefill done \(ms, mean \/ P99\)\s+[\d.]+ \/ [\d.]+/,
      /KV transfer \(ms, mean \/ P99\)\s+[\d.]+ \/ [\d.]+/, /KV landed → first token \(ms, mean \/ P99\)\s+[\d.]+ \/ [\d.]+/]) {
      check(row.test(table), `no row ${row} in ${table}`);
    }
    await byId(page, 'serving-disagg').scrollIntoViewIfNeeded();
    await screenshot(page, 'serving-disagg', { fullPage: false });
    // Off: its fields and the link go, the URL forgets it, the table goes with the new result.
    await byId(page, 'sv-disagg').selectOption('off');
    await waitFor(async () => (await byId(page, 'sv-dw').count()) === 0 && (await byId(page, 'sv-kvl').count()) === 0, 'the pools fields hidden when off', 10000);
    await waitFor(async () => !new URL(page.url()).searchParams.has('sv_disagg'), 'sv_disagg gone from the URL', 10000);
    const off = await summaryAfter(page, on, 'the sweep on one engine');
    check(!/Disaggregated/.test(off), `no pools note when off: ${off}`);
    check((await byId(page, 'serving-disagg').count()) === 0, 'the pools table stays when off');
    // On again, over RoCE: the fields come back with their values, the table names the link.
    await byId(page, 'sv-disagg').selectOption('on');
    await byId(page, 'sv-kvl').selectOption('roce');
    check((await byId(page, 'sv-dw').inputValue()) === '2', 'the decode workers kept');
    await waitFor(async () => new URL(page.url()).searchParams.get('sv_kvl') === 'roce', 'sv_kvl=roce in the URL', 10000);
    await waitFor(async () => ((await byId(page, 'serving-disagg').count()) && /RoCE/.test(await readText(page, 'serving-disagg'))) || null, 'the table over RoCE', 60000);
    // No decode workers: one sentence beside the field, the last result kept.
    const before = await readText(page, 'serving-disagg');
    await setValue(page, 'sv-dw', '0');
    const err = await waitFor(async () => ((await byId(page, 'sv-dw-error').count()) ? readText(page, 'sv-dw-error') : null), 'the refusal of 0 workers', 10000);
    log(`refusal: ${err}`);
    check(/1/.test(err) && /256/.test(err), `the sentence names the range: ${err}`);
    check(new URL(page.url()).searchParams.get('sv_dw') === '2', 'the refused count reached the URL');
    check((await readText(page, 'serving-disagg')) === before, 'the last result did not stay');
    // Korean: the table's labels follow the language.
    const ko = await open({ viewport: { width: 1400, height: 1000 } });
    const kpage = await openApp(ko, `${server.url}?lang=ko&${SMALL}&sv_arr=conc&sv_conc=8&sv_disagg=1&sv_dw=2&sv_kvl=ib`);
    await scrollToServing(kpage);
    const kt = await waitFor(async () => ((await byId(kpage, 'serving-disagg').count()) ? readText(kpage, 'serving-disagg') : null), 'the Korean pools table', 60000);
    check(/프리필 풀 사용률/.test(kt) && /TTFT 2단계/.test(kt) && /InfiniBand/.test(kt), `Korean labels: ${kt}`);
    await byId(kpage, 'serving-disagg').scrollIntoViewIfNeeded();
    await screenshot(kpage, 'serving-disagg-ko', { fullPage: false });
    // Garbage in the URL: a notice each, the inputs at their defaults.
    const q = await open({ viewport: { width: 1400, height: 1000 } });
    const bad = await openApp(q, `${server.url}?sv_disagg=yes&sv_pw=0&sv_kvl=ethernet`);
    const notices = await readText(bad, 'notices');
    for (const k of ['sv_disagg', 'sv_pw', 'sv_kvl']) check(new RegExp(k).test(notices), `no notice names ${k}: ${notices}`);
    check((await byId(bad, 'sv-disagg').inputValue()) === 'off', 'the bad toggle was used');
  }, { timeoutMs: 240000 });

  runner.test('serving: a link restores the serving inputs, and a bad serving parameter gives a notice', async ({ open, server, screenshot }) => {
    const p = await open({ viewport: { width: 1400, height: 1000 } });
    const page = await openApp(p, `${server.url}?sv_mns=32&sv_arr=bursty&sv_cv=2&sv_ds=sharegpt&sv_n=400&sv_warm=10&sv_gmu=7&sv_cg=2048`);
    const values = await page.evaluate(() =>
      Object.fromEntries(['sv-mns', 'sv-arr', 'sv-cv', 'sv-ds', 'sv-n', 'sv-warm', 'sv-gmu', 'sv-cg'].map((id) => [id, document.querySelector(`[data-testid="${id}"]`)?.value])),
    );
    check(values['sv-cg'] === '2048', `the CUDA graph size was not restored: ${values['sv-cg']}`);
    check(values['sv-mns'] === '32' && values['sv-arr'] === 'bursty' && values['sv-cv'] === '2', `restored: ${JSON.stringify(values)}`);
    check(values['sv-ds'] === 'sharegpt' && values['sv-n'] === '400' && values['sv-warm'] === '10', `restored: ${JSON.stringify(values)}`);
    check(values['sv-gmu'] === '0.9', `the bad sv_gmu was not left at its default: ${values['sv-gmu']}`);
    const notices = await readText(page, 'notices');
    check(/sv_gmu/.test(notices), `no notice names sv_gmu: ${notices}`);
    await scrollToServing(page);
    const linked = await summaryAfter(page, '', 'a sweep for the linked inputs');
    // vLLM's own rule would capture graphs up to min(2 × 32, 512) = 64 tokens and note the
    // eager steps beyond; with the linked 2,048 no step of these GPUs (at most 2,048 tokens,
    // their default max_num_batched_tokens) runs without a graph, so no such note.
    check(!/largest CUDA graph/.test(linked), `the linked CUDA graph size was not used: ${linked}`);
    await screenshot(page, 'serving-link', { fullPage: false });
  }, { timeoutMs: 180000 });

  runner.test('serving: DeepSeek-R1 with attention DP 2 and EP 16 over two H200 nodes is simulated and explained; a shape that breaks a rule is refused in a sentence', async ({ open, server, screenshot, log }) => {
    const p = await open({ viewport: { width: 1400, height: 1000 } });
    const page = await openApp(p, `${server.url}?model=deepseek-r1&gpu=h200-sxm&tp=8&sv_dp=2&sv_ep=16&${SMALL}`);
    check((await byId(page, 'sv-dp').inputValue()) === '2' && (await byId(page, 'sv-ep').inputValue()) === '16', 'the linked shape');
    await scrollToServing(page);
    const first = await summaryAfter(page, '', 'the DeepSeek-R1 DP 2 EP 16 sweep');
    log(`summary: ${first.split('\n').join(' | ')}`);
    check(/2 attention-DP ranks/.test(first), `the result says how DP was simulated: ${first}`);
    const math = byId(page, 'math-sv-step');
    await math.locator('summary').first().click();
    const text = await waitFor(async () => {
      const t = await math.textContent();
      return /communication/.test(t) && /8 × 2 × 1 = 16/.test(t) ? t : null;
    }, 'the step by component and the shape in the math', 10000);
    check(/--data-parallel-size 2 --enable-expert-parallel/.test(text), `vLLM's own flags: ${text}`);
    check(/16 \(MoE TP 1\)/.test(text), `the shape: ${text}`);
    check(/\(2 nodes\)/.test(text), `two nodes: ${text}`);
    await page.evaluate(() => document.querySelector('[data-testid="math-sv-step"] .terms')?.scrollIntoView({ block: 'center' }));
    await screenshot(page, 'serving-deepseek-dp-ep', { fullPage: false });
    // EP 3 divides neither the 16 GPUs nor the 256 experts: one sentence naming the rule,
    // and the last result stays.
    await setValue(page, 'sv-ep', 3);
    await waitFor(async () => (await byId(page, 'serving-error').count()) > 0 && /ep = 3 is out of range/.test(await readText(page, 'serving-error')), 'the EP rule beside the results', 60000);
    check((await readText(page, 'serving-summary')) === first, 'the last result did not stay');
  }, { timeoutMs: 240000 });
}
