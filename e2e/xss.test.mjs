// Issue 7's XSS checks: untrusted text (a pasted config.json or safetensors index, a custom
// accelerator's name from the form or from a link, URL parameters, the quick-mode field) is
// rendered as text, never as HTML, and nothing injected runs.
//
// Each payload × field is one case. After each case:
// - `window.__xss` is still undefined (each payload would set it to its own number);
// - no injected markup exists in the DOM: no `img[src=x]`, no element with an `onerror` /
//   `onload` attribute, no inline `<script>`, no `javascript:` link (the page's CSP would also
//   block an inline handler, so `__xss` alone could miss an injection: the DOM check cannot);
// - the payload is shown verbatim as text where the field is displayed;
// - no request was made after load (an `<img src=x>` would fetch `x`); the harness also fails
//   the test on any console error (a CSP violation report is one).
// The total is printed as `xss cases tried: N`.

import { byId, check, modelMode, openApp, setValue, waitFor } from './app.mjs';

/** The payloads; each would set window.__xss if it ever ran. All lower-case on purpose: the
 * config reader lower-cases `model_type` and `quant_method`, so they must survive that. */
const PAYLOADS = [
  '<img src=x onerror="window.__xss=1">',
  '<script>window.__xss=2</script>',
  '"><svg onload=window.__xss=3>',
  'javascript:window.__xss=4',
  '{{7*7}}',
];

/** Elements that can only come from injected markup. */
const INJECTED = [
  'img[src="x"]',
  '[onerror]',
  '[onload]',
  'script:not([src])',
  'a[href^="javascript:" i]',
  'iframe[src^="javascript:" i]',
].join(', ');

/** A small valid Llama-style config with `over` merged in. */
function config(over = {}) {
  return JSON.stringify(
    {
      _name_or_path: 'xss-base',
      architectures: ['LlamaForCausalLM'],
      model_type: 'llama',
      hidden_size: 256,
      intermediate_size: 688,
      num_attention_heads: 8,
      num_key_value_heads: 8,
      num_hidden_layers: 2,
      vocab_size: 1000,
      max_position_embeddings: 2048,
      torch_dtype: 'float16',
      ...over,
    },
    null,
    2,
  );
}

/** Percent-encodes like core::scenario::pct_encode (only RFC 3986 unreserved left as is). */
function pctEncode(s) {
  return [...new TextEncoder().encode(s)]
    .map((b) => {
      const c = String.fromCharCode(b);
      return /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
}

/** base64url without padding, as core::scenario::encode_config writes `cfg=`. */
function base64url(text) {
  return Buffer.from(text, 'utf8').toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The `gpu=` value for a custom accelerator named `name`, encoded as scenario.rs does. */
function customGpuParam(name) {
  const inner = `custom:name=${pctEncode(name)};memory_gib=24;bandwidth_gbps=600;bf16_tflops=125`;
  return pctEncode(inner);
}

/** Opens the app; `openApp` also waits for the offline cache's own fetches (after paint). */
const open = openApp;

/** Text content of every element with this test id, joined. */
async function textOf(page, id) {
  return page.evaluate((tid) => [...document.querySelectorAll(`[data-testid="${tid}"]`)].map((e) => e.textContent).join('\n'), id);
}

/** Text of the whole document (including closed <details>). */
async function allText(page) {
  return page.evaluate(() => document.body.textContent);
}

export default function register(runner) {
  runner.test('xss: untrusted text is shown as text and nothing injected runs', async ({ open: openPage, server, screenshot, log }) => {
    let cases = 0;
    const failures = [];

    /** Runs the checks after one case; `shown` returns the text where the payload must appear
     * verbatim (or null when the field is not displayed back). */
    async function verify(p, page, label, payload, shown) {
      cases += 1;
      const before = p.requests.length;
      const problemsBefore = p.problems.length;
      if (shown) {
        try {
          await waitFor(async () => (await shown()).includes(payload), `"${payload}" shown as text`, 8000);
        } catch (err) {
          failures.push(`${label} ${JSON.stringify(payload)}: not shown verbatim (${err.message.slice(0, 160)})`);
        }
      }
      // Give an injected onerror/onload a chance to fire.
      await page.waitForTimeout(150);
      const r = await page.evaluate((sel) => ({
        xss: window.__xss,
        injected: [...document.querySelectorAll(sel)].map((e) => e.outerHTML.slice(0, 120)),
      }), INJECTED);
      if (r.xss !== undefined) failures.push(`${label} ${JSON.stringify(payload)}: window.__xss = ${r.xss} (it ran)`);
      if (r.injected.length) failures.push(`${label} ${JSON.stringify(payload)}: injected elements ${r.injected.join(' | ')}`);
      const late = p.requests.slice(before).filter((q) => q.afterLoad);
      if (late.length) failures.push(`${label} ${JSON.stringify(payload)}: request after load ${late.map((q) => q.url).join(', ')}`);
      const problems = p.problems.slice(problemsBefore);
      if (problems.length) failures.push(`${label} ${JSON.stringify(payload)}: ${problems.join('; ')}`);
    }

    // 1. Pasted config.json: every string the app reads and shows.
    const p = await openPage();
    const page = await open(p, server.url);
    const baseline = await page.evaluate((sel) => document.querySelectorAll(sel).length, INJECTED);
    check(baseline === 0, `the page has ${baseline} element(s) matching ${INJECTED} before any input`);
    let k = 0;
    const pasteCase = async (label, over, shown) => {
      for (const payload of PAYLOADS) {
        k += 1;
        const marker = `xss-case-${k}`;
        const o = over(payload);
        const cfg = config({ _name_or_path: marker, ...o });
        await modelMode(page, 'paste');
        await setValue(page, 'model-paste', cfg);
        await verify(p, page, label, payload, shown && (() => shown(page)));
      }
    };
    // _name_or_path → the model name element.
    for (const payload of PAYLOADS) {
      await modelMode(page, 'paste');
      await setValue(page, 'model-paste', config({ _name_or_path: payload }));
      await verify(p, page, 'config _name_or_path (model-name)', payload, () => textOf(page, 'model-name'));
      const exact = await textOf(page, 'model-name');
      if (exact !== payload) failures.push(`model-name is ${JSON.stringify(exact)}, expected exactly ${JSON.stringify(payload)}`);
    }
    await screenshot(page, 'name-payload');
    // model_type (unknown architecture) → model-arch, the warning and the ledger. No
    // `architectures` entry names a known type here: one that did would be read instead, and
    // model-arch would show that type (the given one stays in the warning and the ledger).
    const unknownType = (x) => ({ model_type: x, architectures: [] });
    await pasteCase('config model_type (model-arch)', unknownType, (pg) => textOf(pg, 'model-arch'));
    await pasteCase('config model_type (warning)', (x) => ({ model_type: x }), (pg) => pg.evaluate(() => [...document.querySelectorAll('.model-warnings li')].map((e) => e.textContent).join('\n')));
    // The ledger's table is built when it is first opened.
    const ledgerText = async (pg) => {
      await pg.evaluate(() => { const d = document.querySelector('[data-testid="model-ledger"]'); if (d) d.open = true; });
      return textOf(pg, 'model-ledger');
    };
    await pasteCase('config model_type (ledger)', (x) => ({ model_type: x }), ledgerText);
    await screenshot(page, 'model-type-payload');
    // architectures[0]: shown only when it names a known type (so only letters, digits, '_'
    // and '-' around a known prefix); a hostile one is never read and must still do nothing.
    await pasteCase('config architectures[0]', (x) => ({ architectures: [x] }), null);
    // quantization_config.quant_method (unknown method) → a warning.
    await pasteCase('config quant_method (warning)', (x) => ({ quantization_config: { quant_method: x } }), (pg) => allText(pg));
    // layer_types entries (unknown type) → a warning.
    await pasteCase('config layer_types[0] (warning)', (x) => ({ layer_types: [x, 'full_attention'] }), (pg) => allText(pg));
    // torch_dtype that is not a precision → a warning quotes it.
    const warnings = (pg) => pg.evaluate(() => [...document.querySelectorAll('.model-warnings li')].map((e) => e.textContent).join('\n'));
    await pasteCase('config torch_dtype (warning)', (x) => ({ torch_dtype: x }), warnings);
    // A number field holding text → the model-error message quotes it.
    await pasteCase('config num_hidden_layers as text (model-error)', (x) => ({ num_hidden_layers: x }), (pg) => textOf(pg, 'model-error'));
    await screenshot(page, 'dtype-error-payload');
    // model.safetensors.index.json with payloads in metadata and weight_map.
    for (const payload of PAYLOADS) {
      const index = JSON.stringify({
        metadata: { total_size: 13476839424 + cases, format: payload, [payload]: payload },
        weight_map: { [payload]: `${payload}.safetensors`, 'model.embed_tokens.weight': 'model-00001-of-00002.safetensors' },
      });
      await setValue(page, 'model-paste', index);
      await verify(p, page, 'safetensors index metadata/weight_map', payload, null);
    }
    // ... and a metadata.total_size that is a string: the model-error message quotes it.
    for (const payload of PAYLOADS) {
      await setValue(page, 'model-paste', JSON.stringify({ metadata: { total_size: payload }, weight_map: {} }));
      await verify(p, page, 'safetensors index metadata.total_size (model-error)', payload, () => textOf(page, 'model-error'));
    }
    // Quick mode: the parameter-count field (not echoed; its error must appear, nothing runs).
    await modelMode(page, 'quick');
    for (const payload of PAYLOADS) {
      await setValue(page, 'quick-params', payload);
      await verify(p, page, 'quick-params field', payload, null);
      const value = await byId(page, 'quick-params').inputValue();
      if (value !== payload) failures.push(`quick-params holds ${JSON.stringify(value)} after typing ${JSON.stringify(payload)}`);
      if ((await byId(page, 'quick-params-error').count()) === 0) failures.push(`quick-params shows no error for ${JSON.stringify(payload)}`);
    }
    // GPU search field (not echoed).
    for (const payload of PAYLOADS) {
      await setValue(page, 'gpu-search', payload);
      await verify(p, page, 'gpu-search field', payload, null);
    }
    await setValue(page, 'gpu-search', '');

    // 2. Custom accelerator name through the form (the default page loaded anew each time: at
    // most 4 GPUs), then the link the app wrote, loaded in the same page; one page for all of
    // them and for the crafted URLs below.
    const u = await openPage();
    for (const payload of PAYLOADS) {
      const pg = await open(u, server.url);
      const form = byId(pg, 'custom-gpu-form').first();
      await form.evaluate((d) => {
        d.open = true;
      });
      await setValue(pg, 'custom-name', payload);
      await byId(pg, 'custom-add').first().click();
      const errText = (await byId(pg, 'custom-error').count()) ? await textOf(pg, 'custom-error') : '';
      if (errText) failures.push(`custom form rejected ${JSON.stringify(payload)}: ${errText}`);
      await verify(u, pg, 'custom GPU name via form (chip)', payload, () => pg.evaluate(() => [...document.querySelectorAll('[data-testid^="gpu-selected-custom"]')].map((e) => e.textContent).join('\n')));
      await verify(u, pg, 'custom GPU name via form (results)', payload, () => pg.evaluate(() => document.querySelector('.results')?.textContent ?? ''));
      if (payload === PAYLOADS[0]) await screenshot(pg, 'custom-gpu-form-payload');
      // The link the app wrote for it must read back to the same name.
      const url = pg.url();
      const pg2 = await open(u, url);
      await verify(u, pg2, 'custom GPU name via the app-written link', payload, () => pg2.evaluate(() => [...document.querySelectorAll('[data-testid^="gpu-selected-custom"]')].map((e) => e.textContent).join('\n')));
    }

    // 3. Crafted URLs: a custom GPU name, a pasted config (cfg=), unknown parameter names.
    for (const payload of PAYLOADS) {
      let pg = await open(u, `${server.url}?gpu=a10g&gpu=${customGpuParam(payload)}`);
      await verify(u, pg, 'custom GPU name via crafted gpu=custom: URL', payload, () => pg.evaluate(() => [...document.querySelectorAll('[data-testid^="gpu-selected-custom"]')].map((e) => e.textContent).join('\n')));
      pg = await open(u, `${server.url}?cfg=${base64url(config({ _name_or_path: payload, model_type: payload, architectures: [] }))}`);
      await verify(u, pg, 'cfg= URL _name_or_path (model-name)', payload, () => textOf(pg, 'model-name'));
      await verify(u, pg, 'cfg= URL model_type (model-arch)', payload, () => textOf(pg, 'model-arch'));
      pg = await open(u, `${server.url}?${pctEncode(payload)}=1&ctx=${pctEncode(payload)}&model=${pctEncode(payload)}&embed=${pctEncode(payload)}`);
      await verify(u, pg, 'garbage URL parameter name (notice)', payload, () => textOf(pg, 'notices'));
      if (payload === PAYLOADS[2]) await screenshot(pg, 'notice-payload');
    }
    // The same in an embed page (no page chrome; notices still show).
    for (const payload of PAYLOADS) {
      const pg = await open(u, `${server.url}?embed=memory&${pctEncode(payload)}=1&gpu=${customGpuParam(payload)}`);
      await verify(u, pg, 'garbage URL parameter name in embed=memory (notice)', payload, () => textOf(pg, 'notices'));
      await verify(u, pg, 'custom GPU name in embed=memory (fit table)', payload, () => pg.evaluate(() => document.body.textContent));
    }

    log(`xss cases tried: ${cases} (${PAYLOADS.length} payloads)`);
    check(failures.length === 0, `${failures.length} XSS check(s) failed:\n${failures.slice(0, 25).join('\n')}`);
  }, { timeoutMs: 300000, long: true });
}
