// Drops the comments and the indentation of a built script (dist/loader.js): about 0.8 kB brotli
// before every link's and embed's first answer. Written here because a minifier would add a
// build tool to the serve command's set-up for one file; it only removes whole comment lines
// and `/** … */` blocks that start a line, and leading spaces, and refuses a file with a
// template literal that spans lines (whose spaces are text) or that no longer parses.
//
//   node scripts/strip_comments.mjs FILE
import { readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

const file = process.argv[2];
const src = readFileSync(file, 'utf8');
const out = [];
let inBlock = false;
for (const line of src.split('\n')) {
  const t = line.trim();
  if (inBlock) {
    if (t.includes('*/')) inBlock = false;
    continue;
  }
  if (t.startsWith('/*')) {
    if (!t.includes('*/')) inBlock = true;
    continue;
  }
  if (t.startsWith('//') || t === '') continue;
  if ((t.match(/`/g) || []).length % 2 !== 0) {
    console.error(`strip_comments: ${file}: a template literal spans lines; left as it is`);
    process.exit(0);
  }
  out.push(t);
}
const stripped = out.join('\n') + '\n';
const tmp = `${file}.stripped.mjs`;
writeFileSync(tmp, stripped);
try {
  execFileSync(process.execPath, ['--check', tmp], { stdio: 'pipe' });
} catch (e) {
  console.error(`strip_comments: ${file}: the stripped script does not parse; left as it is`);
  execFileSync('rm', ['-f', tmp]);
  process.exit(0);
}
execFileSync('rm', ['-f', tmp]);
writeFileSync(file, stripped);
console.log(`strip_comments: ${file}: ${src.length} -> ${stripped.length} bytes`);
