// Issue 16, part 5: "Fetch from Hugging Face", against a stub of the Hub on loopback (no test
// touches the internet).
//
// The stub (node:http on 127.0.0.1, a free port) serves the Hub's URL layout with CORS:
//   /acme/llama/resolve/main/config.json   200, Llama-2-7b's config (e2e/fixtures)
//   /api/models/acme/llama                 200, safetensors count = ours + a 303M "tower"
//   /acme/gated/resolve/main/config.json   401 (a gated model)
//   /acme/slow/…                           answers after 4 s (the page's timeout is 1.5 s)
//   /acme/malformed/resolve/main/config.json  200, an HTML page
//   anything else                          404
// The app fetches from https://huggingface.co unless its page has
// `<meta name="hf-endpoint" content="http://127.0.0.1:PORT">` (loopback only; see
// src/ui/hub_fetch.rs). The shipped index.html has none, so this test serves a copy of the built
// page, `hub.html`, beside it, with that tag and a `connect-src` that allows the stub instead of
// huggingface.co.
//
// Checked: no request reaches the stub before the button is pressed (typing the id sends
// nothing); the press asks for config.json then the model API, carrying no cookie, token or
// referrer; the page shows our count (computed here from the config by the Llama formula) and
// the Hub's, side by side with the difference explained, and the config becomes the model;
// gated, missing, slow and malformed answers each show their sentence while the last good
// result stays; the gated sentence follows the language. The harness's own rule (no request
// after load) is kept for every request except the stub's, which this test accounts for.

import { createServer } from 'node:http';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SUB_PATH, repoPath } from './harness.mjs';
import { byId, check, modelMode, openApp, readNumber, setValue, waitFor } from './app.mjs';

const CONFIG = readFileSync(repoPath('e2e/fixtures/llama-2-7b-hf.config.json'), 'utf8');
const TOWER = 303000000;
const SLOW_MS = 4000;
const TIMEOUT_MS = 1500;

/** Llama's parameter count from its config (embeddings, untied head, per layer q/k/v/o, the
 * gated MLP and two RMSNorms, the final norm): an independent check of the app's figure. */
function llamaParams(c) {
  const h = c.hidden_size;
  const kv = (c.num_key_value_heads ?? c.num_attention_heads) * (h / c.num_attention_heads);
  const perLayer = 2 * h * h + 2 * h * kv + 3 * h * c.intermediate_size + 2 * h;
  const heads = c.tie_word_embeddings ? 1 : 2;
  return heads * c.vocab_size * h + c.num_hidden_layers * perLayer + h;
}
const OURS = llamaParams(JSON.parse(CONFIG));

/** The stub Hub; records every request (path, headers, time). */
async function startStub() {
  const seen = [];
  const server = createServer((req, res) => {
    const entry = { path: req.url, headers: req.headers, at: Date.now(), status: 0 };
    seen.push(entry);
    const send = (status, body) => {
      entry.status = status;
      if (res.destroyed) return;
      res.writeHead(status, { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': '*' });
      res.end(body);
    };
    const path = req.url;
    if (path.startsWith('/acme/slow/')) {
      setTimeout(() => send(200, CONFIG), SLOW_MS);
      return;
    }
    switch (path) {
      case '/acme/llama/resolve/main/config.json':
        return send(200, CONFIG);
      case '/api/models/acme/llama':
        return send(200, JSON.stringify({ id: 'acme/llama', safetensors: { parameters: { F16: OURS + TOWER }, total: OURS + TOWER } }));
      case '/acme/gated/resolve/main/config.json':
        return send(401, 'Access to model acme/gated is restricted.');
      case '/acme/malformed/resolve/main/config.json':
        return send(200, '<!doctype html><title>not a config</title>');
      default:
        return send(404, 'Entry not found');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    seen,
    /** Statuses ≥ 400 the stub has answered (each makes Chromium log one console error). */
    errors: () => seen.filter((s) => s.status >= 400).length,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

/** The built page with the stub as its Hub: a meta tag and a connect-src naming the stub. */
function writeStubPage(server, stub) {
  const dir = join(server.root, ...SUB_PATH.split('/').filter(Boolean));
  const page = readFileSync(join(dir, 'index.html'), 'utf8');
  const csp = page.replace(/connect-src 'self' https:\/\/huggingface\.co;/, `connect-src 'self' ${stub.origin};`);
  check(csp !== page, 'the built page has no connect-src naming https://huggingface.co');
  const out = csp.replace(
    '<meta name="color-scheme"',
    `<meta name="hf-endpoint" content="${stub.origin}" data-timeout-ms="${TIMEOUT_MS}" />\n    <meta name="color-scheme"`,
  );
  check(out.includes('name="hf-endpoint"'), 'could not add the hf-endpoint meta tag');
  const file = join(dir, 'hub.html');
  writeFileSync(file, out);
  return file;
}

/** Removes the problems the stub's own requests cause (the harness forbids any request after
 * load and any HTTP error): those naming the stub's URL, and one "Failed to load resource"
 * console error per error status the stub answered. Everything else stays a failure. */
function forgiveStub(p, stub) {
  let allowance = stub.errors();
  const kept = p.problems.filter((msg) => {
    if (msg.includes(`${stub.origin}/`)) return false;
    if (allowance > 0 && /^console error: Failed to load resource: the server responded with a status of 4\d\d/.test(msg)) {
      allowance -= 1;
      return false;
    }
    return true;
  });
  p.problems.splice(0, p.problems.length, ...kept);
}

/** Types an id and presses the button; waits until the button is enabled again. */
async function fetchModel(page, id) {
  await setValue(page, 'hub-id', id);
  await byId(page, 'hub-fetch').click();
  await waitFor(async () => (await byId(page, 'hub-fetch').isEnabled()), `the fetch of ${id} to end`, 15000);
}

/** The model panel alone (the full page is 12,000 px tall): artifacts/screenshots/hub-panel-<step>.png. */
async function panelShot(page, step) {
  await page.locator('.model-panel').screenshot({ path: repoPath('artifacts', 'screenshots', `hub-panel-${step}.png`), timeout: 15000 });
}

async function errorOf(page) {
  const e = byId(page, 'hub-error');
  await e.waitFor({ state: 'visible', timeout: 5000 });
  return { kind: await e.getAttribute('data-kind'), text: await e.innerText() };
}

export default function register(runner) {
  runner.test('hub: fetch from Hugging Face (stub), both counts, gated/missing/slow/malformed sentences', async (ctx) => {
    const stub = await startStub();
    const file = writeStubPage(ctx.server, stub);
    const p = await ctx.open();
    try {
      const page = await openApp(p, `${ctx.server.url}hub.html`);
      await modelMode(page, 'paste');
      const privacy = await byId(page, 'hub-privacy').innerText();
      check(/model id to huggingface\.co/.test(privacy) && /nothing else/.test(privacy), `the page does not say what is sent: ${privacy}`);
      await setValue(page, 'hub-id', 'acme/llama');
      await page.waitForTimeout(300);
      check(stub.seen.length === 0, `requests before the button was pressed: ${stub.seen.map((s) => s.path)}`);

      // The good fetch: both counts, side by side, and the config becomes the model.
      await fetchModel(page, 'acme/llama');
      await byId(page, 'hub-result').waitFor({ state: 'visible', timeout: 5000 });
      const ours = Number(await byId(page, 'hub-ours').getAttribute('data-value'));
      const hub = Number(await byId(page, 'hub-count').getAttribute('data-value'));
      check(ours === OURS, `our count ${ours}, expected ${OURS} from the config`);
      check(hub === OURS + TOWER, `the Hub's count ${hub}, expected ${OURS + TOWER}`);
      const shown = await byId(page, 'hub-count').innerText();
      check(shown.includes((OURS + TOWER).toLocaleString('en-US')), `the Hub's count is not shown grouped: ${shown}`);
      const why = await byId(page, 'hub-explanation').innerText();
      check(why.includes(TOWER.toLocaleString('en-US')) && /more parameters/.test(why), `the difference is not explained: ${why}`);
      await waitFor(async () => (await readNumber(page, 'params-total')) === OURS, 'params-total to become the fetched model');
      const pasted = await byId(page, 'model-paste').inputValue();
      check(JSON.parse(pasted).hidden_size === 4096, 'the fetched config is not in the text box');
      check(
        JSON.stringify(stub.seen.map((s) => s.path)) === JSON.stringify(['/acme/llama/resolve/main/config.json', '/api/models/acme/llama']),
        `unexpected requests: ${stub.seen.map((s) => s.path)}`,
      );
      for (const s of stub.seen) {
        for (const h of ['cookie', 'authorization', 'referer']) check(!(h in s.headers), `${s.path} carried a ${h} header`);
      }
      await ctx.screenshot(page, 'fetched');
      await panelShot(page, 'fetched');

      // Failures: one sentence each; the last good result stays.
      const cases = [
        ['acme/gated', 'gated', /Accept the licence on the model page/],
        ['acme/nope', 'missing', /has no config\.json for acme\/nope/],
        ['acme/malformed', 'malformed', /not valid JSON/],
        ['https://evil.example/acme/llama', 'bad_id', /only huggingface\.co is fetched/],
      ];
      for (const [id, kind, says] of cases) {
        const before = stub.seen.length;
        await fetchModel(page, id);
        const e = await errorOf(page);
        check(e.kind === kind && says.test(e.text), `${id}: ${e.kind}: ${e.text}`);
        check(Number(await byId(page, 'hub-count').getAttribute('data-value')) === OURS + TOWER, `${id}: the last good result was not kept`);
        if (kind === 'bad_id') check(stub.seen.length === before, 'a refused id was sent');
        if (kind === 'gated') {
          check(!stub.seen.some((s) => s.path === '/api/models/acme/gated'), 'asked the API after a gated config');
          await ctx.screenshot(page, 'gated');
          await panelShot(page, 'gated');
        }
      }
      const started = Date.now();
      await fetchModel(page, 'acme/slow');
      const slow = await errorOf(page);
      const took = Date.now() - started;
      check(slow.kind === 'timeout' && /did not answer within 2 s/.test(slow.text), `slow: ${slow.kind}: ${slow.text}`);
      check(took < SLOW_MS, `the slow answer was waited for (${took} ms)`);

      // The gated sentence in Korean.
      await fetchModel(page, 'acme/gated');
      await byId(page, 'lang-toggle').click();
      await waitFor(async () => /라이선스/.test((await errorOf(page)).text), 'the gated sentence in Korean');
      await ctx.screenshot(page, 'gated-ko');
      await panelShot(page, 'gated-ko');
      check(await readNumber(page, 'params-total') === OURS, 'the model changed after failures');
    } finally {
      await stub.stop();
      rmSync(file, { force: true });
      forgiveStub(p, stub);
    }
  });
}
