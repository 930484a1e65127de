// Runs every e2e/*.test.mjs against a built dist/ in headless Chromium.
//
//   node e2e/run.mjs [--dist DIR] [--artifacts DIR] [--filter TEXT]
//
// Prints one line per test and ends with `N passed, N failed`; exits 1 if any test failed or
// the run could not start. The whole run is capped (E2E_TIMEOUT_MS, default 10 minutes); the
// browser and the HTTP server are shut down whatever happens.

import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Runner, closeBrowser, launchBrowser, openPage, repoPath, startServer } from './harness.mjs';

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const distDir = repoPath(arg('dist', 'dist'));
const artifactsDir = repoPath(arg('artifacts', 'artifacts'));
const filter = arg('filter', process.env.E2E_FILTER || '');
const totalTimeoutMs = Number(process.env.E2E_TIMEOUT_MS || 600000);

let server = null;
let browser = null;
let cleaning = null;

async function cleanup() {
  cleaning ??= (async () => {
    await closeBrowser(browser);
    if (server) await server.stop();
  })();
  return cleaning;
}

async function abort(reason, code) {
  console.log(`e2e: ${reason}`);
  await cleanup();
  console.log('0 passed, 1 failed');
  process.exit(code);
}

process.on('SIGINT', () => abort('interrupted', 130));
process.on('SIGTERM', () => abort('terminated', 143));
const watchdog = setTimeout(() => abort(`the whole run took longer than ${totalTimeoutMs} ms`, 1), totalTimeoutMs);

async function main() {
  // A full run replaces the screenshots of earlier runs (a filtered run adds to them).
  if (!filter) rmSync(join(artifactsDir, 'screenshots'), { recursive: true, force: true });
  const runner = new Runner({ artifactsDir });
  const files = readdirSync(repoPath('e2e')).filter((f) => f.endsWith('.test.mjs')).sort();
  for (const f of files) {
    const mod = await import(new URL(`./${f}`, import.meta.url));
    runner.fileAlone = mod.alone === true;
    mod.default(runner);
  }
  server = await startServer(distDir);
  browser = await launchBrowser();
  console.log(`e2e: ${runner.tests.length} tests from ${files.join(', ')}; app at ${server.url}; ${browser.version ? `Chromium ${browser.version()}` : ''}`);
  // Preflight: if the app never mounts, fail every test at once instead of waiting for each.
  const probe = await openPage(browser, server);
  try {
    await probe.page.goto(server.url, { waitUntil: 'load', timeout: 30000 });
    await probe.page.locator('[data-testid="app-root"]').waitFor({ state: 'visible', timeout: 45000 });
  } catch (err) {
    const why = [err.message.split('\n')[0], ...new Set(probe.problems)].slice(0, 8).join('; ');
    runner.blocked = `the app did not start (no visible [data-testid="app-root"]): ${why}`;
    console.log(`e2e: ${runner.blocked}`);
    await probe.page.screenshot({ path: `${runner.screenshotsDir}/00-app-did-not-start.png`, fullPage: true }).catch(() => {});
  } finally {
    await probe.context.close().catch(() => {});
  }
  const { passed, failed } = await runner.run({ browser, server, filter });
  console.log(`e2e: screenshots in ${runner.screenshotsDir}`);
  return { passed, failed };
}

let result = { passed: 0, failed: 1 };
try {
  result = await main();
} catch (err) {
  console.log(`e2e: could not run: ${err.stack || err}`);
} finally {
  clearTimeout(watchdog);
  await cleanup();
}
console.log(`${result.passed} passed, ${result.failed} failed`);
process.exit(result.failed > 0 ? 1 : 0);
