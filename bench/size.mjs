// Shipped bytes of a built dist/: raw, gzip (level 9) and brotli (quality 11), per file and
// per kind (wasm, js, html, css, other); the styles are inlined in index.html (Trunk.toml says why),
// so they count under html. Reports only; never fails on the numbers. What actually arrives
// before the first answer, over the wire and when, is measured by bench/load.mjs.
//
//   node bench/size.mjs [DIST_DIR]      (default: dist)

import { readdirSync, readFileSync, statSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { extname, join, relative, resolve } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const root = resolve(new URL('..', import.meta.url).pathname);
const dist = resolve(root, process.argv[2] || 'dist');
// Issue 18's target for the bytes that must arrive before the first answer, brotli-compressed
// (issue 4's 300 kB for everything shipped is retired: what may arrive later is not counted).
const FIRST_ANSWER_BROTLI_BYTES = 250 * 1000;

if (!existsSync(join(dist, 'index.html'))) {
  console.log(`bench size: ${dist}/index.html not found (build with trunk build --release first)`);
  process.exit(1);
}

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else yield path;
  }
}

const kindOf = (path) => ({ '.wasm': 'wasm', '.js': 'js', '.mjs': 'js', '.css': 'css', '.html': 'html' })[extname(path)] || 'other';
const kB = (n) => `${(n / 1000).toFixed(1).padStart(8)} kB`;

const rows = [];
for (const path of files(dist)) {
  const data = readFileSync(path);
  rows.push({
    file: relative(dist, path),
    kind: kindOf(path),
    raw: data.length,
    gzip: gzipSync(data, { level: 9 }).length,
    brotli: brotliCompressSync(data, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: data.length },
    }).length,
  });
}
rows.sort((a, b) => b.raw - a.raw);

console.log(`bench size: ${dist} (kB = 1000 bytes)`);
console.log(`  ${'file'.padEnd(48)} ${'raw'.padStart(11)} ${'gzip'.padStart(11)} ${'brotli'.padStart(11)}`);
for (const r of rows) console.log(`  ${r.file.padEnd(48)} ${kB(r.raw)} ${kB(r.gzip)} ${kB(r.brotli)}`);
const totals = {};
for (const kind of ['wasm', 'js', 'html', 'css', 'other', 'all']) {
  const sel = rows.filter((r) => kind === 'all' || r.kind === kind);
  totals[kind] = {
    files: sel.length,
    raw: sel.reduce((s, r) => s + r.raw, 0),
    gzip: sel.reduce((s, r) => s + r.gzip, 0),
    brotli: sel.reduce((s, r) => s + r.brotli, 0),
  };
  const t = totals[kind];
  console.log(`  ${`total ${kind} (${t.files} files)`.padEnd(48)} ${kB(t.raw)} ${kB(t.gzip)} ${kB(t.brotli)}`);
}
// What the first answer waits for is the shell only (index.html with its inlined styles,
// loader.js, the shell's hashed JS and wasm, sw.js). Two modules come after it: the late module
// (sections.js, sections_bg.wasm: the analysis sections, imported once the first answer is
// painted, src/ui/late.rs) and the serving simulator's Web Worker (sim_worker_loader.js,
// sim_worker.js, sim_worker_bg.wasm: loaded when its section nears the screen). A scenario
// link's first answer needs the page, loader.js and the first-answer module (first.js,
// first_bg.wasm, crates/first/src/main.rs), loaded beside the shell only for a link; an embedded
// widget's, the page, loader.js, the embeds' module (first_embed.js, first_embed_bg.wasm,
// crates/first/src/embed.rs) and the widget's copy in its language (one file per widget and
// language: embeds-memory.html, the one counted, embeds-memory-ko.html, embeds-kv.html, …).
const base = (r) => r.file.split('/').pop();
const isWorker = (r) => /^sim_worker/.test(base(r));
const isLate = (r) => /^sections(?:_bg)?\.(?:js|wasm)$/.test(base(r));
const isFirst = (r) => /^first(?:_bg)?\.(?:js|wasm)$/.test(base(r));
const isEmbedCopy = (r) => /^embeds-[a-z]+(?:-ko)?\.html$/.test(base(r));
const isFirstEmbed = (r) => /^first_embed(?:_bg)?\.(?:js|wasm)$/.test(base(r)) || base(r) === 'embeds-memory.html';
const isPage = (r) => base(r) === 'index.html' || base(r) === 'loader.js';
const sum = (sel) => ({
  files: sel.length,
  raw: sel.reduce((s, r) => s + r.raw, 0),
  gzip: sel.reduce((s, r) => s + r.gzip, 0),
  brotli: sel.reduce((s, r) => s + r.brotli, 0),
});
for (const [name, sel] of [
  ['late module (after the first answer)', rows.filter(isLate)],
  ['worker (on demand)', rows.filter(isWorker)],
  ['shell (before the first answer)', rows.filter((r) => !isWorker(r) && !isLate(r) && !isFirst(r) && !isFirstEmbed(r) && !isEmbedCopy(r))],
  ['a link\'s first answer (page, loader, first-answer module)', rows.filter((r) => isFirst(r) || isPage(r))],
  ['an embed\'s first answer (page, loader, the embeds\' module, the widget\'s copy)', rows.filter((r) => isFirstEmbed(r) || isPage(r))],
]) {
  const t = sum(sel);
  totals[name] = t;
  console.log(`  ${`total ${name} (${t.files} files)`.padEnd(48)} ${kB(t.raw)} ${kB(t.gzip)} ${kB(t.brotli)}`);
}
const all = totals.all;
const first = totals['shell (before the first answer)'];
const k = (n) => (n / 1000).toFixed(1);
const link = totals['a link\'s first answer (page, loader, first-answer module)'];
console.log(`bench size: before a scenario link's first answer ${k(link.brotli)} kB brotli / ${k(link.gzip)} kB gzip / ${k(link.raw)} kB raw; target <= 120 kB brotli: ${link.brotli <= 120000 ? 'met' : 'NOT met'} (reported, not asserted)`);
const embed = totals['an embed\'s first answer (page, loader, the embeds\' module, the widget\'s copy)'];
console.log(`bench size: before an embedded widget's first answer ${k(embed.brotli)} kB brotli / ${k(embed.gzip)} kB gzip / ${k(embed.raw)} kB raw; target <= 120 kB brotli: ${embed.brotli <= 120000 ? 'met' : 'NOT met'} (reported, not asserted)`);
console.log(
  `bench size: before the first answer ${k(first.brotli)} kB brotli / ${k(first.gzip)} kB gzip / ${k(first.raw)} kB raw (the shell: the late module and the worker come after); issue 18 target <= ${FIRST_ANSWER_BROTLI_BYTES / 1000} kB brotli: ${first.brotli <= FIRST_ANSWER_BROTLI_BYTES ? 'met' : 'NOT met'} (reported, not asserted); everything shipped ${k(all.brotli)} kB brotli / ${k(all.gzip)} kB gzip / ${k(all.raw)} kB raw`,
);
mkdirSync(join(root, 'artifacts'), { recursive: true });
writeFileSync(join(root, 'artifacts', 'bench-size.json'), JSON.stringify({ dist, files: rows, totals }, null, 2));
