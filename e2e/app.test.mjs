// Issue 4's end-to-end checks, acting like a user of the calculator.

import { readFileSync } from 'node:fs';
import {
  CHART_IDS,
  byId,
  canvasPixels,
  check,
  choosePreset,
  diffSnapshots,
  expectChartDrawn,
  gpuOptions,
  hangulCount,
  isVisible,
  openApp,
  pasteConfig,
  readNumber,
  readText,
  reloadApp,
  selectGpus,
  selectedGpus,
  servingSweepSummary,
  setValue,
  snapshot,
  waitFor,
} from './app.mjs';

const LLAMA2_TEXT = readFileSync(new URL('./fixtures/llama-2-7b-hf.config.json', import.meta.url), 'utf8');
const LLAMA2 = JSON.parse(LLAMA2_TEXT);

// Expected Llama-2-7b figures, computed from its config (not typed in):
// params = embeddings V·h + lm_head V·h (untied) + final norm h
//        + layers × (q,k,v,o 4·h·h [32 KV heads = MHA] + gate/up/down 3·h·I + two norms 2·h)
//        = 32000·4096·2 + 4096 + 32·(4·4096² + 3·4096·11008 + 2·4096) = 6,738,415,616
// KV/token = 2 (K,V) × layers × kv_heads × head_dim (h / heads) × 2 B (float16) = 524,288 B
const h = LLAMA2.hidden_size;
const L = LLAMA2.num_hidden_layers;
const kvHeads = LLAMA2.num_key_value_heads;
const headDim = h / LLAMA2.num_attention_heads;
const EXPECTED_PARAMS =
  2 * LLAMA2.vocab_size * h + h + L * (4 * h * h + 3 * h * LLAMA2.intermediate_size + 2 * h);
const EXPECTED_KV_BYTES = 2 * L * kvHeads * headDim * 2;
// The textbook's practical batch sizes at 4,096 tokens (WORKED_EXAMPLES.md §3, issue 4):
// A10G (24 GB) 5 in theory → 4 in practice; L40S (48 GB) 17 → 16.
const CONTEXT = 4096;
const EXPECTED_REQUESTS = { a10g: 4, l40s: 16 };

/** Reads params-total once it is a positive number. */
async function paramsTotal(page) {
  return waitFor(async () => {
    const n = await readNumber(page, 'params-total');
    return Number.isFinite(n) && n > 0 ? n : null;
  }, 'params-total to show a number');
}

/** Pastes the Llama-2-7b config and waits for its exact parameter count. */
async function pasteLlama2(page) {
  await pasteConfig(page, LLAMA2_TEXT);
  await waitFor(async () => (await readNumber(page, 'params-total')) === EXPECTED_PARAMS, `params-total = ${EXPECTED_PARAMS}`);
}

/** The model error is absent, hidden or empty. */
async function noModelError(page) {
  return !(await isVisible(page, 'model-error')) || (await readText(page, 'model-error')) === '';
}

/** Throws `what` plus the message if a model error is shown. */
async function expectNoModelError(page, what) {
  if (!(await noModelError(page))) throw new Error(`${what}${await readText(page, 'model-error')}`);
}

/**
 * Opens the app and pastes a config of the corpus (`tests/fixtures/corpus/<file>`), waiting
 * until it reads as a model of more than `minParams` parameters with no error; returns the
 * page and the config's text.
 */
async function pasteCorpusConfig(open, server, file, minParams, name) {
  const text = readFileSync(new URL(`../tests/fixtures/corpus/${file}`, import.meta.url), 'utf8');
  const page = await openApp(await open(), server.url);
  await pasteConfig(page, text);
  await waitFor(async () => (await readNumber(page, 'params-total')) > minParams, `params-total of ${name}`);
  await expectNoModelError(page, `model-error after pasting ${name}: `);
  return { page, text };
}

/** The published parameter count of a corpus config: its row's `published_params` in
 * tests/fixtures/corpus/corpus.csv. */
function publishedCount(file) {
  const row = readFileSync(new URL('../tests/fixtures/corpus/corpus.csv', import.meta.url), 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`tests/fixtures/corpus/${file},`));
  return Number(row.split(',')[3]);
}

/** Opens the "vLLM would log" box and waits until the logs of every GPU, joined, hold `marker`;
 * returns that text. */
async function openVllmLog(page, marker, what) {
  await byId(page, 'vllm-log').first().evaluate((d) => { d.open = true; });
  return waitFor(async () => {
    const t = await page.evaluate(() =>
      [...document.querySelectorAll('[data-testid^="vllm-log-"]')].map((e) => e.textContent).join('\n'));
    return t.includes(marker) ? t : null;
  }, what);
}

/** Registers the tests with the runner. */
export default function register(runner) {
  runner.test('default page shows a result from a sub-path', async ({ open, server, screenshot, log }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    const params = await paramsTotal(page);
    const kv = await readNumber(page, 'kv-per-token');
    check(Number.isFinite(kv) && kv > 0, `kv-per-token should be a positive number, got ${kv}`);
    await expectNoModelError(page, 'model-error shown on the default page: ');
    for (const r of p.requests) check(r.url.startsWith(server.url), `request outside the sub-path: ${r.url}`);
    log(`default: params-total ${params}, kv-per-token ${kv}; ${p.requests.length} requests to load`);
    await screenshot(page, 'default');
  });

  runner.test('index.html path and query string also load', async ({ open, server }) => {
    const p = await open();
    const page = await openApp(p, `${server.url}index.html?nonsense=%%&lang=`);
    await paramsTotal(page);
  });

  runner.test('preset list offers at least 25 models', async ({ open, server }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    const n = await byId(page, 'model-preset').locator('option').count();
    check(n >= 25, `model-preset has ${n} options, issue 4 asks for at least 25`);
  });

  runner.test('choosing a preset changes the result', async ({ open, server, screenshot, log }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    const before = await paramsTotal(page);
    const options = await byId(page, 'model-preset').evaluate((el) =>
      [...el.options].map((o) => ({ value: o.value, label: o.textContent.trim(), selected: o.selected })),
    );
    check(options.length >= 2, `model-preset has ${options.length} options`);
    // Prefer a model clearly different in size from the default (a MoE or a big dense model).
    const pick =
      options.find((o) => !o.selected && /30B-A3B|Mixtral|70B/i.test(o.label + o.value)) ||
      options.filter((o) => !o.selected && o.value).at(-1);
    await choosePreset(page, pick.value);
    const after = await waitFor(async () => {
      const n = await readNumber(page, 'params-total');
      return n !== before && n > 0 ? n : null;
    }, `params-total to change after choosing ${pick.label}`);
    await expectNoModelError(page, 'model-error after choosing a preset: ');
    log(`preset "${pick.label}": params-total ${before} -> ${after}`);
    await screenshot(page, 'preset');
  });

  runner.test('pasting the Llama-2-7b config gives 6,738,415,616 params and 0.5 MiB/token', async ({ open, server, screenshot }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    await pasteLlama2(page);
    const text = await readText(page, 'params-total');
    check(text.includes(EXPECTED_PARAMS.toLocaleString('en-US')), `params-total text "${text}" should show ${EXPECTED_PARAMS.toLocaleString('en-US')}`);
    await waitFor(async () => {
      const kvText = await readText(page, 'kv-per-token');
      const kv = await readNumber(page, 'kv-per-token');
      return kv === EXPECTED_KV_BYTES || /0\.5\s*MiB/.test(kvText) || /512\s*KiB/.test(kvText);
    }, `kv-per-token = ${EXPECTED_KV_BYTES} B (0.5 MiB)`);
    await expectNoModelError(page, 'model-error after a valid paste: ');
    await screenshot(page, 'llama-2-7b');
  });

  runner.test('pasting a hybrid (Bamba-9B) config: its published count and vLLM\'s block-size lines for its Mamba layers', async ({ open, server, screenshot, log }) => {
    // The count is the corpus row's published figure; the block size is vLLM's rule computed
    // from the config's own keys: 16 × ⌈S / (16 × a)⌉, S one Mamba-2 layer's state and a one
    // attention layer's K and V bytes per token (bf16, TP 1).
    const corpus = new URL('../tests/fixtures/corpus/', import.meta.url);
    const text = readFileSync(new URL('ibm-ai-platform__Bamba-9B.json', corpus), 'utf8');
    const published = publishedCount('ibm-ai-platform__Bamba-9B.json');
    const c = JSON.parse(text);
    const convDim = c.mamba_expand * c.hidden_size + 2 * c.mamba_n_groups * c.mamba_d_state;
    const state = 2 * ((c.mamba_d_conv - 1) * convDim + c.mamba_n_heads * c.mamba_d_head * c.mamba_d_state);
    const perToken = 2 * c.num_key_value_heads * (c.hidden_size / c.num_attention_heads) * 2;
    const block = 16 * Math.ceil(state / (16 * perToken));
    const p = await open();
    const page = await openApp(p, server.url);
    await pasteConfig(page, text);
    await waitFor(async () => (await readNumber(page, 'params-total')) === published, `params-total = ${published}`);
    await expectNoModelError(page, 'model-error after pasting Bamba-9B: ');
    const logText = await openVllmLog(page, 'Setting attention block size', 'the vLLM log to show the block-size line');
    check(logText.includes(`Setting attention block size to ${block} tokens`), `vLLM log should set the block to ${block}: ${logText}`);
    check(logText.includes('Padding mamba page size by'), `vLLM log should pad the Mamba page: ${logText}`);
    log(`Bamba-9B: ${published} parameters, attention block ${block} tokens`);
    await byId(page, 'vllm-log').first().scrollIntoViewIfNeeded().catch(() => {});
    await screenshot(page, 'bamba-vllm-log');
  });

  runner.test('pasting a Mamba-only (Mamba-Codestral) config: vLLM\'s log holds one block per request, so its concurrency is its block count; serving runs at vLLM\'s assumed 2,048 tokens', async ({ open, server, screenshot, log }) => {
    // vLLM V1 gives an attention-free model one block of max_model_len tokens per request:
    // "Maximum concurrency ... N.00x" with N the "# GPU blocks" of the same log, and no
    // block-size line. Before, this model showed 0 blocks and 0.00x.
    const { page } = await pasteCorpusConfig(open, server, 'mistralai__Mamba-Codestral-7B-v0.1.json', 7e9, 'Mamba-Codestral');
    const kvToken = await readText(page, 'kv-per-token');
    check(/\b0 MiB \(0 B\)/.test(kvToken) && !/e0\b/.test(kvToken), `no attention: the KV per token should read "0 MiB (0 B)", not "${kvToken}"`);
    const logText = await openVllmLog(page, '# GPU blocks', 'the vLLM log to show its block count');
    const blocks = [...logText.matchAll(/# GPU blocks: (\d+)/g)].map((m) => Number(m[1]));
    const conc = [...logText.matchAll(/Maximum concurrency for [\d,]+ tokens per request: ([\d.]+)x/g)].map((m) => Number(m[1]));
    check(blocks.length > 0 && blocks.length === conc.length, `one block count and one concurrency per GPU: ${logText}`);
    blocks.forEach((b, i) => {
      check(b > 0, `GPU ${i}: vLLM should page the Mamba state in blocks (got ${b}): ${logText}`);
      check(conc[i] === b, `GPU ${i}: concurrency ${conc[i]} should equal the ${b} blocks (one per request)`);
    });
    check(!logText.includes('Setting attention block size'), `no attention block to set: ${logText}`);
    log(`Mamba-Codestral: blocks ${blocks.join(', ')}`);
    await byId(page, 'vllm-log').first().scrollIntoViewIfNeeded().catch(() => {});
    await screenshot(page, 'mamba-codestral-vllm-log');
    // Its config states no maximum length: the serving section runs at the 2,048 tokens vLLM
    // assumes then, and says so (it used to refuse, asking for max_position_embeddings).
    const summary = await servingSweepSummary(page, 'the serving sweep of Mamba-Codestral');
    check(summary.includes('max_model_len is 2048'), `the serving summary should say max_model_len is vLLM's 2048: ${summary}`);
    log(`Mamba-Codestral serving: ${summary.split('\n').join(' | ')}`);
    await byId(page, 'serving-view').scrollIntoViewIfNeeded();
    await screenshot(page, 'mamba-codestral-serving', { fullPage: false });
  }, { timeoutMs: 240000 });

  runner.test('pasting a latent-MoE config with an MTP layer (Nemotron 3 Super): its published count, the MTP modules apart, and their weights only when included', async ({ open, server, screenshot, log }) => {
    // The count is the corpus row's published figure (every stored tensor, the MTP module too);
    // the weights grow by the MTP parameters the card names, at 2 B each (bf16), when they are
    // included, and vLLM's log still sizes the attention block against the Mamba state.
    const file = 'nvidia__NVIDIA-Nemotron-3-Super-120B-A12B-BF16.json';
    const corpus = new URL('../tests/fixtures/corpus/', import.meta.url);
    const published = publishedCount(file);
    const { page } = await pasteCorpusConfig(open, server, file, 1e11, 'Nemotron 3 Super');
    await waitFor(async () => (await readNumber(page, 'params-total')) === published, `params-total = ${published}`);
    // Layers as the config states them (88 blocks), not the 48 mixer layers they are described as.
    const blocks = JSON.parse(readFileSync(new URL(file, corpus), 'utf8')).hybrid_override_pattern.length;
    check((await readNumber(page, 'model-layers')) === blocks, `Layers should read ${blocks}: ${await readText(page, 'model-layers')}`);
    const parts = await page.evaluate(() => [...document.querySelectorAll('[data-testid="params-part"]')].map((e) => e.textContent).join(' | '));
    const mtp = Number((/MTP\)[^\d]*([\d,]+)/.exec(parts)?.[1] ?? '').replace(/,/g, ''));
    check(mtp > 0 && mtp < published / 10, `the card should name the MTP modules' parameters: ${parts}`);
    const before = await readNumber(page, 'weights');
    // The card's first figure is in the unit it names first (GB, 10^9 B, or GiB, 2^30 B).
    const unit = /^[\d.,\s]+(GiB|GB)/.exec(await readText(page, 'weights'))?.[1];
    check(unit, `the weights card should name GB or GiB: ${await readText(page, 'weights')}`);
    await byId(page, 'include-mtp').check();
    const added = 2 * mtp / (unit === 'GiB' ? 2 ** 30 : 1e9);
    const after = await waitFor(async () => {
      const w = await readNumber(page, 'weights');
      return w > before ? w : null;
    }, 'the weights to grow when the MTP modules are included');
    check(Math.abs(after - before - added) < 0.15, `including MTP should add ${added.toFixed(2)} ${unit}: ${before} -> ${after}`);
    await byId(page, 'include-mtp').uncheck();
    await waitFor(async () => (await readNumber(page, 'weights')) === before, 'the weights back without MTP');
    const logText = await openVllmLog(page, 'Setting attention block size', 'the vLLM log to size the attention block');
    log(`Nemotron 3 Super: ${published} parameters, MTP ${mtp}; weights ${before} ${unit}, ${after} ${unit} with MTP; ${logText.split('\n').find((l) => l.includes('block size'))}`);
    await byId(page, 'summary-cards').scrollIntoViewIfNeeded();
    await screenshot(page, 'nemotron-super', { fullPage: false });
  }, { timeoutMs: 240000 });

  runner.test('pasting a Qwen3.5-family config (Qwen3.6-27B): its published count, 64 layers, and vLLM sizing the attention block against an fp32 recurrent state', async ({ open, server, screenshot, log }) => {
    // The count is the corpus row's published figure (language model, vision tower and MTP
    // module). The block size is computed here from the config's keys, as vLLM sizes it: the
    // smallest multiple of 16 tokens whose attention page (2 × KV heads × head_dim × 2 B per
    // token) holds one Gated DeltaNet state page, the conv state (k − 1) × conv channels in
    // bf16 and the recurrent state V_h × d_k × d_v in the precision mamba_ssm_dtype names.
    const file = 'Qwen__Qwen3.6-27B.json';
    const published = publishedCount(file);
    const { page, text } = await pasteCorpusConfig(open, server, file, 1e10, 'Qwen3.6-27B');
    await waitFor(async () => (await readNumber(page, 'params-total')) === published, `params-total = ${published}`);
    const t = JSON.parse(text).text_config;
    check((await readNumber(page, 'model-layers')) === t.num_hidden_layers, `Layers should read ${t.num_hidden_layers}: ${await readText(page, 'model-layers')}`);
    check(t.mamba_ssm_dtype === 'float32', `the case needs an fp32 recurrent state: ${t.mamba_ssm_dtype}`);
    const attnPerToken = 2 * t.num_key_value_heads * t.head_dim * 2;
    const conv = (t.linear_conv_kernel_dim - 1) * (2 * t.linear_num_key_heads * t.linear_key_head_dim + t.linear_num_value_heads * t.linear_value_head_dim);
    const mamba = conv * 2 + t.linear_num_value_heads * t.linear_key_head_dim * t.linear_value_head_dim * 4;
    const block = 16 * Math.ceil(mamba / (16 * attnPerToken));
    const pad = ((block * attnPerToken - mamba) / mamba * 100).toFixed(2);
    const logText = await openVllmLog(page, 'Setting attention block size', 'the vLLM log to size the attention block');
    const line = logText.split('\n').find((l) => l.includes('attention block size'));
    check(line.includes(`to ${block} tokens`), `vLLM should set the attention block to ${block} tokens: ${line}`);
    check(logText.includes(`Padding mamba page size by ${pad}%`), `vLLM should pad the mamba page by ${pad}%: ${logText}`);
    log(`Qwen3.6-27B: ${published} parameters, ${t.num_hidden_layers} layers; ${line}`);
    await byId(page, 'summary-cards').scrollIntoViewIfNeeded();
    await screenshot(page, 'qwen3-6-27b', { fullPage: false });
  }, { timeoutMs: 240000 });

  runner.test('pasting a YaRN config (AFM-4.5B): serving starts at the max_model_len vLLM derives, original_max_position_embeddings × factor, and says why', async ({ open, server, screenshot, log }) => {
    // vLLM's _get_and_verify_max_len scales YaRN's original length by its factor (4,096 × 20),
    // where max_position_embeddings says 65,536.
    const { page, text } = await pasteCorpusConfig(open, server, 'arcee-ai__AFM-4.5B-Base.json', 4e9, 'AFM-4.5B');
    const c = JSON.parse(text);
    const derived = c.rope_scaling.original_max_position_embeddings * c.rope_scaling.factor;
    check(derived !== c.max_position_embeddings, 'the case must tell the two lengths apart');
    const summary = await servingSweepSummary(page, 'the serving sweep of AFM-4.5B');
    check(summary.includes(`max_model_len is ${derived}`), `the serving summary should say max_model_len is ${derived}: ${summary}`);
    check(summary.includes(`max_position_embeddings (${c.max_position_embeddings})`), `the summary should name max_position_embeddings ${c.max_position_embeddings}: ${summary}`);
    check(summary.includes('YaRN'), `the summary should say the rule (YaRN): ${summary}`);
    log(`AFM-4.5B serving: ${summary.split('\n').join(' | ')}`);
    await byId(page, 'serving-view').scrollIntoViewIfNeeded();
    await screenshot(page, 'afm-yarn-serving', { fullPage: false });
  }, { timeoutMs: 240000 });

  runner.test('model details: the assumption ledger is built when opened and lists the config keys read', async ({ open, server, screenshot, log }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    await pasteLlama2(page);
    const ledger = byId(page, 'model-ledger');
    // Closed, the ledger is its summary alone (its table is built on the first open).
    const closed = await ledger.evaluate((d) => ({ open: d.open, rows: d.querySelectorAll('tbody tr').length, summary: d.querySelector('summary')?.textContent ?? '' }));
    check(!closed.open, 'the ledger starts open');
    check(closed.rows === 0, `the closed ledger already holds ${closed.rows} row(s)`);
    const count = Number(/\((\d+)\)\s*$/.exec(closed.summary.trim())?.[1]);
    check(count > 0, `the ledger's summary "${closed.summary}" gives no entry count`);
    await ledger.locator('summary').click();
    const rows = await waitFor(async () => {
      const r = await ledger.evaluate((d) => [...d.querySelectorAll('tbody tr')].map((tr) => [...tr.cells].map((c) => c.textContent.trim())));
      return r.length > 0 ? r : null;
    }, 'the ledger rows after opening it');
    check(rows.length === count, `the ledger shows ${rows.length} rows, its summary says ${count}`);
    // Each integer key of the pasted config that the ledger names is shown with the config's value.
    const keys = ['hidden_size', 'num_hidden_layers', 'num_attention_heads', 'vocab_size'];
    for (const key of keys) {
      const row = rows.find((r) => r[0] === key);
      check(row, `the ledger has no row for ${key}: ${rows.map((r) => r[0]).join(', ')}`);
      check(row[1] === String(LLAMA2[key]), `ledger ${key} = "${row[1]}", the config says ${LLAMA2[key]}`);
    }
    // Closing and opening again keeps the table (built once per model).
    await ledger.locator('summary').click();
    await ledger.locator('summary').click();
    const again = await waitFor(async () => (await ledger.evaluate((d) => d.open && d.querySelectorAll('tbody tr').length)) || null, 'the ledger reopened');
    check(again === count, `reopened, the ledger shows ${again} rows (expected ${count})`);
    // Another model while it is open: the ledger stays open and lists the new model's entries.
    await choosePreset(page, 'mixtral-8x7b');
    const mixtral = await waitFor(async () => {
      const r = await ledger.evaluate((d) => ({
        open: d.open,
        summary: d.querySelector('summary')?.textContent ?? '',
        rows: [...d.querySelectorAll('tbody tr')].map((tr) => tr.cells[0]?.textContent.trim()),
      }));
      return r.rows.includes('experts') ? r : null;
    }, 'the open ledger to list the new model (a row for experts)');
    const n2 = Number(/\((\d+)\)\s*$/.exec(mixtral.summary.trim())?.[1]);
    check(mixtral.open, 'the ledger closed when the model changed');
    check(mixtral.rows.length === n2, `after the model changed the ledger shows ${mixtral.rows.length} rows, its summary says ${n2}`);
    log(`ledger: ${count} entries, ${n2} after choosing Mixtral`);
    await screenshot(page, 'ledger-open');
  });

  runner.test('A10G and L40S at 4,096 tokens serve 4 and 16 requests', async ({ open, server, screenshot, log }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    await pasteLlama2(page);
    // The textbook's budget rule (the default; chosen explicitly in case it changes).
    if ((await byId(page, 'rule-textbook').count()) > 0) await byId(page, 'rule-textbook').first().check();
    else if ((await byId(page, 'budget-rule').count()) > 0) await setValue(page, 'budget-rule', 'textbook');
    await setValue(page, 'context-len', CONTEXT);
    const offered = await gpuOptions(page);
    for (const id of Object.keys(EXPECTED_REQUESTS)) check(offered.includes(id), `gpu-picker does not offer "${id}" (offers ${offered.slice(0, 12).join(', ')}…)`);
    await selectGpus(page, Object.keys(EXPECTED_REQUESTS));
    for (const [gpu, want] of Object.entries(EXPECTED_REQUESTS)) {
      const got = await waitFor(async () => {
        const n = await readNumber(page, `max-requests-${gpu}`);
        return n === want ? n : null;
      }, `max-requests-${gpu} = ${want}`).catch(async (err) => {
        const shown = (await byId(page, `max-requests-${gpu}`).count()) ? await readText(page, `max-requests-${gpu}`) : 'missing';
        throw new Error(`${err.message}; shows "${shown}"`);
      });
      log(`${gpu}: ${got} requests`);
    }
    await screenshot(page, 'a10g-l40s');
  });

  runner.test('broken JSON shows a message and keeps the last result', async ({ open, server, screenshot, log }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    await pasteLlama2(page);
    // Cut the config off in the middle, as a bad copy would.
    await pasteConfig(page, LLAMA2_TEXT.slice(0, Math.floor(LLAMA2_TEXT.length / 2)));
    const message = await waitFor(async () => (await isVisible(page, 'model-error')) && (await readText(page, 'model-error')), 'model-error to show a message');
    check(message.length > 5, `model-error text too short: "${message}"`);
    check((await readNumber(page, 'params-total')) === EXPECTED_PARAMS, 'the previous result (Llama-2-7b) should stay on screen');
    log(`message: ${message.slice(0, 160)}`);
    await screenshot(page, 'broken-json');
    await pasteConfig(page, '{ "hidden_size": 4096, ');
    await waitFor(() => isVisible(page, 'model-error'), 'model-error for a second broken paste');
    check((await readNumber(page, 'params-total')) === EXPECTED_PARAMS, 'the previous result should still stay');
    await pasteLlama2(page);
    await waitFor(() => noModelError(page), 'model-error to clear after a valid paste');
  });

  runner.test('a config without model_type is read as its architecture, with a warning', async ({ open, server, screenshot, log }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    // Llama-2-7b's sizes under Qwen2's architecture and no model_type: Qwen2 adds the q, k and
    // v projections' biases, h + 2 × kv_heads × head_dim per layer, to the Llama count; a
    // generic (Llama-style) reading would give the Llama count itself.
    const cfg = { ...LLAMA2, architectures: ['Qwen2ForCausalLM'] };
    delete cfg.model_type;
    const want = EXPECTED_PARAMS + L * (h + 2 * kvHeads * headDim);
    await pasteConfig(page, JSON.stringify(cfg, null, 2));
    await waitFor(async () => (await readNumber(page, 'params-total')) === want, `params-total = ${want} (Qwen2's biases counted)`);
    await expectNoModelError(page, 'model-error for a config without model_type: ');
    check((await readText(page, 'model-arch')) === 'qwen2', `model-arch should say qwen2, says "${await readText(page, 'model-arch')}"`);
    const warning = await waitFor(async () => {
      const items = await page.locator('.model-warnings li').allTextContents();
      return items.find((t) => t.includes('Qwen2ForCausalLM')) || null;
    }, 'a warning naming the architecture');
    check(/no model_type/.test(warning), `the warning should say the config has no model_type: "${warning}"`);
    log(`params-total ${want}; warning: ${warning}`);
    await screenshot(page, 'type-from-architecture');
  });

  runner.test('changed inputs survive a reload of the URL', async ({ open, server, screenshot, log }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    const startUrl = page.url();
    const presets = await byId(page, 'model-preset').evaluate((el) => [...el.options].filter((o) => !o.selected && o.value).map((o) => o.value));
    if (presets.length > 0) await choosePreset(page, presets[0]);
    await setValue(page, 'context-len', 8192);
    await setValue(page, 'concurrency', 3);
    const gpus = (await gpuOptions(page)).filter((id) => ['l40s', 'h100-sxm'].includes(id));
    if (gpus.length > 0) await selectGpus(page, gpus);
    await waitFor(() => page.url() !== startUrl, 'the URL to change with the inputs');
    await page.waitForTimeout(500); // let a debounced URL update settle
    // The cost section's price fields follow the GPUs once it catches up (out of sight, after
    // the inputs settle): on a busy machine that can take longer than the wait above.
    const pricesFollow = (pg) =>
      waitFor(async () => {
        const chosen = await selectedGpus(pg);
        const priced = await pg.evaluate(() => [...document.querySelectorAll('[data-testid^="price-"]')].map((e) => e.getAttribute('data-testid').slice('price-'.length)));
        return priced.length === chosen.length && chosen.every((g) => priced.includes(g));
      }, 'the price fields to follow the chosen GPUs', 15000);
    await pricesFollow(page);
    const before = await snapshot(page);
    const url = page.url();
    log(`URL: ${url.slice(server.origin.length)}`);
    await screenshot(page, 'changed');

    await reloadApp(p);
    await paramsTotal(page);
    await pricesFollow(page);
    const afterReload = await snapshot(page);
    const diff1 = diffSnapshots(before, afterReload);
    check(diff1.length === 0, `after reload the page differs:\n${diff1.join('\n')}`);

    // The URL alone (a fresh context, no storage) must carry the scenario.
    const q = await open();
    const fresh = await openApp(q, url);
    await paramsTotal(fresh);
    await pricesFollow(fresh);
    const afterFresh = await snapshot(fresh);
    const diff2 = diffSnapshots(before, afterFresh);
    check(diff2.length === 0, `the shared link opens a different page:\n${diff2.join('\n')}`);
    await screenshot(fresh, 'restored');
  });

  runner.test('a pasted config survives a reload of the URL', async ({ open, server }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    await pasteLlama2(page);
    await page.waitForTimeout(500);
    const q = await open();
    const fresh = await openApp(q, page.url());
    await waitFor(async () => (await readNumber(fresh, 'params-total')) === EXPECTED_PARAMS, 'the pasted model to come back from the URL');
  });

  runner.test('every chart canvas has drawn pixels', async ({ open, server, screenshot, log }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    await paramsTotal(page);
    const missing = [];
    for (const id of CHART_IDS) {
      if ((await byId(page, id).count()) === 0) {
        missing.push(id);
        continue;
      }
      await byId(page, id).first().scrollIntoViewIfNeeded();
      const px = await expectChartDrawn(page, id);
      log(`${id}: ${px.width}x${px.height}, ${(px.share * 100).toFixed(1)}% painted, ${px.colours} colours`);
    }
    check(missing.length === 0, `chart canvases missing: ${missing.join(', ')}`);
    await screenshot(page, 'charts');
  });

  runner.test('charts redraw when an input changes', async ({ open, server }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    await paramsTotal(page);
    const fingerprint = (id) =>
      page.evaluate((tid) => {
        const el = document.querySelector(`[data-testid="${tid}"]`);
        const c = el && (el.tagName === 'CANVAS' ? el : el.querySelector('canvas'));
        return c ? c.toDataURL().length + ':' + c.toDataURL().slice(-64) : null;
      }, id);
    // The chart in sight (charts draw only on screen; the sticky input column scrolls on its
    // own, so typing in it no longer scrolls the page down to the charts).
    await byId(page, 'chart-memory').scrollIntoViewIfNeeded();
    const before = await waitFor(async () => {
      const f = await fingerprint('chart-memory');
      await new Promise((r) => setTimeout(r, 300));
      return f && f === (await fingerprint('chart-memory')) ? f : null;
    }, 'chart-memory drawn and settled');
    await setValue(page, 'context-len', 16384);
    await waitFor(async () => (await fingerprint('chart-memory')) !== before, 'chart-memory to redraw after changing context-len');
  });

  runner.test('results out of sight catch up once the inputs settle', async ({ open, server, screenshot, log }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    await paramsTotal(page);
    // The KV-per-request card, in GiB (the exact binary figure in parentheses).
    const kvGib = async () => {
      const t = await page.evaluate(() => document.querySelector('[data-testid="kv-per-request"]').textContent);
      const m = t.replace(/,/g, '').match(/\(([\d.]+) GiB\)/);
      return m ? Number(m[1]) : NaN;
    };
    const before = await kvGib();
    check(before > 0, `KV per request should be shown in GiB, got ${before}`);
    // Scroll the cards out of sight and change the context without scrolling back (a typed
    // value would bring the field, and the cards, into view).
    await page.evaluate(() => document.querySelector('[data-testid="chart-kv"]').scrollIntoView({ block: 'start' }));
    const above = () => page.evaluate(() => document.querySelector('[data-testid="kv-per-request"]').getBoundingClientRect().bottom < 0);
    check(await above(), 'the KV card should be above the viewport once the charts are scrolled in');
    const ctx = await page.evaluate(() => {
      const el = document.querySelector('[data-testid="context-len"]');
      const input = el.matches('input') ? el : el.querySelector('input:not([type=range])');
      const v = Number(input.value);
      input.value = String(v * 2);
      input.dispatchEvent(new Event('input', { bubbles: true }));
      input.dispatchEvent(new Event('change', { bubbles: true }));
      return v;
    });
    check(ctx > 0, `context length should be a number, got ${ctx}`);
    // KV per request is proportional to the context: twice the context, twice the bytes.
    const after = await waitFor(async () => {
      const v = await kvGib();
      return Math.abs(v - 2 * before) < 1e-9 ? v : null;
    }, `the off-screen KV card to show ${2 * before} GiB`);
    check(await above(), 'the KV card should still be out of sight when it caught up');
    log(`KV per request ${before} GiB -> ${after} GiB at context ${ctx} -> ${2 * ctx}, card out of sight`);
    await screenshot(page, 'scrolled-to-charts');
  });

  runner.test('language toggle switches to Korean and back', async ({ open, server, screenshot }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    await paramsTotal(page);
    const toggle = byId(page, 'lang-toggle').first();
    const english = await hangulCount(page);
    const flip = async (to) => {
      if ((await toggle.evaluate((el) => el.tagName)) === 'SELECT') await toggle.selectOption(to);
      else await toggle.click();
    };
    await flip('ko');
    const korean = await waitFor(async () => {
      const n = await hangulCount(page);
      return n > english + 20 ? n : null;
    }, 'Korean text after the language toggle');
    const lang = await page.evaluate(() => document.documentElement.lang);
    check(lang.startsWith('ko'), `<html lang> should be "ko" in Korean, is "${lang}"`);
    await screenshot(page, 'korean');
    await flip('en');
    await waitFor(async () => (await hangulCount(page)) < korean - 20, 'English text after toggling back');
  });

  runner.test('no network request after load while using the controls', async ({ open, server, log }) => {
    const p = await open();
    const page = await openApp(p, server.url);
    await paramsTotal(page);
    // Set every select to a few of its options and every number field to a few values,
    // through DOM events (as typing would), then check p.problems (the runner does).
    const touched = await page.evaluate(async () => {
      const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      const fire = (el) => {
        el.dispatchEvent(new Event('input', { bubbles: true }));
        el.dispatchEvent(new Event('change', { bubbles: true }));
      };
      let n = 0;
      for (const el of document.querySelectorAll('[data-testid] select, select[data-testid]')) {
        if (el.multiple || el.disabled) continue;
        const original = el.value;
        for (const o of [...el.options].slice(0, 4)) {
          el.value = o.value;
          fire(el);
          await frame();
          n += 1;
        }
        el.value = original;
        fire(el);
        await frame();
      }
      for (const el of document.querySelectorAll('input[type=number], input[type=range], input[inputmode=numeric], input[inputmode=decimal]')) {
        if (el.disabled) continue;
        const original = el.value;
        for (const v of ['1', '2048', '32768', '-5', '']) {
          el.value = v;
          fire(el);
          await frame();
          n += 1;
        }
        el.value = original;
        fire(el);
        await frame();
      }
      return n;
    });
    await page.waitForTimeout(1000);
    log(`${touched} control changes, ${p.requests.filter((r) => r.afterLoad).length} requests after load`);
    check(touched > 0, 'found no controls to change');
    for (const id of CHART_IDS) {
      if ((await byId(page, id).count()) > 0) {
        const px = await canvasPixels(page, id);
        check(!px.error, `${id} after the tour: ${px.error}`);
      }
    }
  });
}
