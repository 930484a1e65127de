// What bench/load.mjs, bench/load_cdp.mjs and bench/start_trace.mjs share: a static server for
// dist/ that compresses as static hosts do, and the in-page probe that times the first answer.
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { SUB_PATH } from '../e2e/harness.mjs';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.json', '.wasm', '.svg', '.txt', '.webmanifest']);

/** Every file of `dir`, keyed by its path under it, with its raw, gzip and brotli bodies. */
export function loadDist(dir) {
  const files = new Map();
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) {
        walk(path);
        continue;
      }
      const raw = readFileSync(path);
      const ext = extname(path);
      const entry = { raw, type: MIME[ext] || 'application/octet-stream', compressible: COMPRESSIBLE.has(ext) };
      if (entry.compressible) {
        entry.gzip = gzipSync(raw, { level: 9 });
        entry.br = brotliCompressSync(raw, {
          params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length },
        });
      }
      files.set(relative(dir, path).split('\\').join('/'), entry);
    }
  };
  walk(dir);
  return files;
}

/**
 * A static server for `files` under SUB_PATH on 127.0.0.1; `server.encoding` (gzip, br or
 * identity) is what it prefers for compressible files when the request accepts it;
 * `server.cacheControl` the Cache-Control header it sends (`no-cache` unless set).
 */
export async function startStaticServer(files) {
  // `gets`: GET requests per file since the last `resetGets()` (a file the page and its
  // service worker fetch twice shows as 2).
  const state = { encoding: 'gzip', gets: new Map(), cacheControl: 'no-cache' };
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    let rel = path.startsWith(SUB_PATH) ? path.slice(SUB_PATH.length) : null;
    if (rel !== null && (rel === '' || rel.endsWith('/'))) rel += 'index.html';
    const file = rel === null ? undefined : files.get(rel);
    if (!file || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-cache' });
      res.end('not found');
      return;
    }
    if (req.method === 'GET') state.gets.set(rel, (state.gets.get(rel) || 0) + 1);
    const accepts = String(req.headers['accept-encoding'] || '').split(',').map((s) => s.trim().split(';')[0]);
    const enc = file.compressible && state.encoding !== 'identity' && accepts.includes(state.encoding) ? state.encoding : 'identity';
    const body = enc === 'identity' ? file.raw : file[enc];
    const headers = { 'Content-Type': file.type, 'Content-Length': body.length, 'Cache-Control': state.cacheControl, Vary: 'Accept-Encoding' };
    if (enc !== 'identity') headers['Content-Encoding'] = enc;
    res.writeHead(200, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    url: origin + SUB_PATH,
    set encoding(e) {
      state.encoding = e;
    },
    /** The Cache-Control header of every response (`no-cache` unless set). */
    set cacheControl(c) {
      state.cacheControl = c;
    },
    /** Files GET more than once since the last reset, with their counts. */
    repeatedGets: () => [...state.gets].filter(([, n]) => n > 1),
    resetGets: () => state.gets.clear(),
    stop: () => new Promise((resolve) => {
      server.close(resolve);
      server.closeAllConnections();
    }),
  };
}

// Installed before the app starts, in every document of the context. Two answers are timed:
// the live one (`dom`, `frame`, `painted`, `detail`: the app's own elements, `data-testid`,
// computed by the wasm in the page) and the prerendered static copy's (`static*`: index.html's
// `#prerendered`, shown before the wasm arrives for the default scenario in English or Korean, its test ids
// renamed `data-static-testid`; scripts/prerender.mjs). `staticPainted` stays null when the page
// showed no static copy.
export const FIRST_ANSWER_PROBE = () => {
  const state = { dom: null, frame: null, painted: null, detail: null, staticDom: null, staticFrame: null, staticPainted: null, staticDetail: null };
  window.__firstAnswer = state;
  // The anchor of a trace's clock (bench/start_trace.mjs): the probe runs before any script.
  performance.mark('probe:installed');
  // `visible`: also require a layout box (forces a layout: only done in the frame callback).
  // `copy`: read the static copy (inside a shown #prerendered) instead of the live app.
  const read = (visible, copy) => {
    const attr = copy ? 'data-static-testid' : 'data-testid';
    const scope = copy ? document.querySelector('#prerendered:not([hidden])') : document;
    if (!scope) return null;
    const shown = (el) => el && (!visible || el.getClientRects().length > 0);
    // An embedded widget (`?embed=memory`) shows the fit table alone: its verdicts are its answer.
    const embed = /[?&]embed=/.test(location.search);
    const p = scope.querySelector(`[${attr}="params-total"]`);
    if (!embed && !shown(p)) return null;
    const m = embed ? ['1'] : (p.textContent || '').replace(/\u00a0/g, ' ').match(/\d[\d,]*(\.\d+)?/);
    if (!m || !(Number(m[0].replace(/,/g, '')) > 0)) return null;
    const verdicts = new Map(
      [...scope.querySelectorAll(`[${attr}^="verdict-"]`)]
        .filter((e) => shown(e) && (e.textContent || '').trim() !== '')
        .map((e) => [e.getAttribute(attr).slice('verdict-'.length), e.textContent.trim()]),
    );
    const chips = [...scope.querySelectorAll(`[${attr}^="gpu-selected-"]`)].map((e) => e.getAttribute(attr).slice('gpu-selected-'.length));
    const gpus = chips.length ? chips : [...verdicts.keys()];
    if (gpus.length === 0 || gpus.some((g) => !verdicts.has(g))) return null;
    return { params: embed ? '(embed)' : p.textContent.trim(), verdicts: gpus.map((g) => `${g}: ${verdicts.get(g)}`) };
  };
  const observer = new MutationObserver(() => {
    if (state.staticDom === null && read(false, true)) state.staticDom = performance.now();
    if (state.dom === null && read(false, false)) {
      state.dom = performance.now();
      observer.disconnect();
    }
  });
  observer.observe(document, { childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ['hidden'] });
  // A task posted from the frame's callback runs after that frame was rendered.
  const afterFrame = (key, mark) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => {
      state[key] = performance.now();
      performance.mark(mark);
    };
    ch.port2.postMessage(0);
  };
  const tick = () => {
    if (state.staticFrame === null && state.frame === null) {
      const copy = read(true, true);
      if (copy) {
        state.staticFrame = performance.now();
        state.staticDetail = copy;
        performance.mark('probe:static-answer-frame');
        afterFrame('staticPainted', 'probe:static-answer-painted');
      }
    }
    const found = read(true, false);
    if (!found) {
      requestAnimationFrame(tick);
      return;
    }
    state.frame = performance.now();
    state.detail = found;
    // Named in a performance trace (bench/start_trace.mjs lines the phases up with these).
    performance.mark('probe:answer-frame');
    afterFrame('painted', 'probe:answer-painted');
  };
  requestAnimationFrame(tick);
};

/** The median of the numbers in `xs` (null and NaN left out; null when none). */
export const median = (xs) => {
  const s = xs.filter((x) => typeof x === 'number' && !Number.isNaN(x)).sort((a, b) => a - b);
  if (s.length === 0) return null;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
export const kB = (n) => `${(n / 1000).toFixed(1)} kB`;
export const msText = (x) => (x === null || x === undefined ? '-' : `${x.toFixed(0)} ms`);
export const met = (ok) => (ok ? 'met' : 'NOT met');
/** The machine's load averages (1, 5, 15 min), as printed beside every figure. */
export const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

/** The cold loads' window, and issue 18's targets (reported beside the figures, not asserted). */
export const VIEWPORT = { width: 1400, height: 1000 };
export const TARGET_BYTES_BROTLI = 250 * 1000;
/** The network profiles of a cold load: none, or Chromium's emulation (CDP
 * Network.emulateNetworkConditions), each with its first-answer target. */
export const PROFILES = {
  loopback: { label: 'loopback, no throttling', conditions: null, targetMs: 300 },
  '10mbit': {
    label: '10 Mbit/s down, 5 Mbit/s up, 40 ms latency (Chromium network emulation)',
    conditions: { offline: false, latency: 40, downloadThroughput: 10e6 / 8, uploadThroughput: 5e6 / 8 },
    targetMs: 800,
  },
  cpu4x: {
    label: 'loopback, CPU 4× slower (CDP Emulation.setCPUThrottlingRate 4)',
    conditions: null,
    cpuRate: 4,
    targetMs: 600,
  },
};

/**
 * The ways people arrive (`bench/load.mjs --paths`): the URL after the app's address, what the
 * browser remembers (an init script run before the page's), and the first-answer targets of
 * the paths that are not the default page (medians of cold loads: loopback, 10 Mbit/s, 4× CPU;
 * bytes before the answer, brotli).
 */
export const ENTRY_PATHS = {
  default: { label: 'the default page', suffix: '', theme: null },
  link: { label: 'a scenario link (?ctx=8192&n=8)', suffix: '?ctx=8192&n=8', theme: null },
  ko: { label: 'the Korean page by link (?lang=ko)', suffix: '?lang=ko', theme: null },
  theme: { label: 'a returning visitor with the dark theme remembered', suffix: '', theme: 'dark' },
  embed: { label: 'an embedded widget (?embed=memory)', suffix: '?embed=memory', theme: null },
};
export const LINK_TARGETS = { loopback: 150, '10mbit': 350, cpu4x: 600, bytesBrotli: 120 * 1000 };

/**
 * The static copy's figures of one load, from the probe's record and the load's files (each
 * with `endMs` and `body`): the answer painted from index.html's prerendered copy, and what had
 * arrived whole before it. All null when the page showed no static copy.
 */
export function staticFigures(fa, files) {
  if (fa.staticPainted === null || fa.staticPainted === undefined) {
    return { staticAnswerMs: null, staticFrameMs: null, staticDetail: null, staticBytes: null, staticFiles: 0, staticLastByteMs: null };
  }
  const before = files.filter((f) => f.endMs !== null && f.endMs <= fa.staticPainted);
  return {
    staticAnswerMs: fa.staticPainted,
    staticFrameMs: fa.staticFrame,
    staticDetail: fa.staticDetail,
    staticBytes: before.reduce((n, f) => n + f.body, 0),
    staticFiles: before.length,
    staticLastByteMs: before.length ? Math.max(...before.map((f) => f.endMs)) : null,
  };
}

/** Prints the static copy's line of a profile's summary (`results`: staticFigures' fields). */
export function printStatic(tag, encoding, profile, results) {
  const statics = results.map((r) => r.staticAnswerMs);
  const shown = results.filter((r) => r.staticAnswerMs !== null);
  if (shown.length === 0) {
    console.log(`${tag} first answer painted (prerendered static copy): none shown in ${results.length} cold loads`);
    return { median: null, shown: 0, runs: statics, bytesBefore: null };
  }
  const med = median(shown.map((r) => r.staticAnswerMs));
  const bytes = median(shown.map((r) => r.staticBytes));
  // On loopback every file can end before the copy's frame, the wasm too: what arrived is not
  // what was needed, so no verdict here (bench/load.mjs's held loads give what the copy needs).
  const brNote = !profile.conditions
    ? ': on loopback this counts every file that happened to finish first, not what the copy needs (bench/load.mjs "every request but the page held" gives that)'
    : encoding === 'br'
      ? `; target <= ${kB(TARGET_BYTES_BROTLI)} brotli: ${met(bytes <= TARGET_BYTES_BROTLI)}`
      : ' (the 250 kB target is for brotli)';
  console.log(`${tag} first answer painted (prerendered static copy) median ${msText(med)}, worst ${msText(Math.max(...shown.map((r) => r.staticAnswerMs)))} in ${shown.length}/${results.length} cold loads (${statics.map((t) => (t === null ? '-' : t.toFixed(0))).join(', ')}); target <= ${profile.targetMs} ms: ${met(med <= profile.targetMs)} (reported, not asserted)`);
  console.log(`${tag} bytes arrived before the static copy's answer ${kB(bytes)} encoded bodies in ${shown[0].staticFiles} file(s), last of them median ${msText(median(shown.map((r) => r.staticLastByteMs)))}${brNote} (reported, not asserted)`);
  return { median: med, shown: shown.length, runs: statics, bytesBefore: bytes };
}
