// Both languages render completely: no `⟨missing translation⟩` marker (what i18n::tr returns
// for an unknown key) in the text or the accessible names of the full page or of any embed
// mode, in English and in Korean; the explanations carry live numbers and follow the
// language. Screenshots of every language × page/embed are kept in artifacts/screenshots/.

import { afterPaint, openAllDetails, check, openApp, waitFor, byId, pasteConfig, isVisible, readText } from './app.mjs';
import { EMBEDS } from './a11y.test.mjs';
import { readFileSync, readdirSync } from 'node:fs';
import { repoPath } from './harness.mjs';

/** The keys of `data/i18n/late/*.toml` (a `[key]` line per row): the translation rows the shell's wasm leaves out. */
function lateKeys() {
  const dir = repoPath('data', 'i18n', 'late');
  return readdirSync(dir).filter((f) => f.endsWith('.toml')).flatMap((f) =>
    [...readFileSync(`${dir}/${f}`, 'utf8').matchAll(/^\[([a-z0-9_]+)\]\s*$/gm)].map((m) => m[1]));
}

/** The served file `name` (relative to the app's URL) as bytes. */
async function served(server, name) {
  const res = await fetch(new URL(name, server.url));
  check(res.ok, `${name}: HTTP ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

const MARKER = '⟨missing translation⟩';
const HANGUL = /[\uac00-\ud7a3]/g;
const HAS_HANGUL = /[\uac00-\ud7a3]/;

/** Every place a user (or a screen reader) can read text: visible text and labelling attributes. */
async function pageText(page) {
  // Disclosures (math panels, data tables) build their contents when opened: open them all.
  await openAllDetails(page);
  return page.evaluate(() => {
    const attrs = ['aria-label', 'title', 'placeholder', 'alt', 'aria-description'];
    const parts = [document.body.innerText, document.title];
    for (const el of document.querySelectorAll('*')) {
      for (const a of attrs) {
        const v = el.getAttribute(a);
        if (v) parts.push(v);
      }
    }
    // Text inside any <details> still closed is read too.
    for (const d of document.querySelectorAll('details')) parts.push(d.textContent);
    return parts.join('\n');
  });
}

async function settled(page) {
  await waitFor(
    () => page.evaluate(() => document.body.innerText.replace(/\s/g, '').length > 40),
    'the app to render text',
  );
  await afterPaint(page);
}

export default function register(runner) {
  for (const lang of ['en', 'ko']) {
    runner.test(`i18n: the full page has no missing translation (${lang})`, async ({ open, server, screenshot, log }) => {
      const p = await open();
      const page = await openApp(p, `${server.url}?lang=${lang}`);
      await settled(page);
      const htmlLang = await page.evaluate(() => document.documentElement.lang);
      check(htmlLang === lang, `<html lang> is "${htmlLang}", expected "${lang}"`);
      const text = await pageText(page);
      check(!text.includes(MARKER), `"${MARKER}" appears on the ${lang} page`);
      const hangul = (text.match(HANGUL) || []).length;
      log(`${hangul} Hangul characters`);
      if (lang === 'ko') check(hangul > 300, `only ${hangul} Hangul characters on the Korean page`);
      // Explanations: present, with numbers from the current scenario.
      const explain = await page.locator('[data-testid^="explain-"]').allInnerTexts();
      check(explain.length >= 4, `only ${explain.length} explanations on the page`);
      check(explain.every((t) => /\d/.test(t)), 'an explanation without any number');
      if (lang === 'ko') check(HAS_HANGUL.test(explain.join(' ')), 'explanations are not in Korean');
      else check(!HAS_HANGUL.test(explain.join(' ')), 'English explanations contain Hangul');
      await screenshot(page, `full-${lang}`);
      // Phone width too.
      await page.setViewportSize({ width: 390, height: 844 });
      await page.waitForTimeout(300);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      await screenshot(page, `phone-${lang}`);
      check(overflow <= 1, `the ${lang} page is ${overflow} px wider than a 390 px phone screen`);
    });
  }

  runner.test('i18n: every embed mode has no missing translation in either language', async ({ open, server, screenshot, log }) => {
    const problems = [];
    // One page for all of them: each link is a new document (the language comes from the link).
    const p = await open({ viewport: { width: 720, height: 600 } });
    for (const lang of ['en', 'ko']) {
      for (const embed of EMBEDS) {
        const page = await openApp(p, `${server.url}?embed=${embed}&lang=${lang}`);
        await settled(page);
        const text = await pageText(page);
        if (text.includes(MARKER)) problems.push(`${embed} (${lang}) shows "${MARKER}"`);
        const hangul = (text.match(HANGUL) || []).length;
        if (lang === 'ko' && hangul < 10) problems.push(`${embed} (ko) has only ${hangul} Hangul characters`);
        await screenshot(page, `embed-${embed}-${lang}`);
      }
    }
    log(`${EMBEDS.length * 2} embed pages checked`);
    check(problems.length === 0, problems.join('\n      '));
  }, { long: true });

  runner.test('i18n: explanations follow the language toggle', async ({ open, server }) => {
    const p = await open();
    const page = await openApp(p, `${server.url}?lang=en`);
    await settled(page);
    const first = byId(page, 'explain-kv').first();
    const en = await first.innerText();
    await byId(page, 'lang-toggle').first().click();
    const ko = await waitFor(async () => {
      const t = await first.innerText();
      return t !== en && HAS_HANGUL.test(t) ? t : null;
    }, 'the KV explanation in Korean');
    // The same live numbers in both languages.
    const nums = (t) => (t.match(/\d[\d,.]*/g) || []).sort().join(' ');
    check(nums(en) === nums(ko), `numbers differ between languages:\n      en: ${nums(en)}\n      ko: ${nums(ko)}`);
  });

  runner.test('i18n: error sentences read wholly in Korean', async ({ open, server, screenshot, log }) => {
    const p = await open();
    const page = await openApp(p, `${server.url}?lang=ko`);
    // Each paste is wrong in a different way; the Korean sentence must carry the Korean words
    // for what is wrong (no English phrase from the parser or the core inside it).
    const cases = [
      // Cut off: serde_json's "EOF while parsing an object".
      ['{ "hidden_size": 4096, "num_hidden_layers": 32', /입력이 끝났습니다/, /EOF|while parsing|expected/],
      // A negative size: the range in words.
      ['{"model_type":"llama","hidden_size":-4,"num_hidden_layers":2,"num_attention_heads":32,"intermediate_size":11008,"vocab_size":32000}', /이상 .* 이하의 정수/, /whole number|out of range/],
      // A text where a number belongs: what was found and what is allowed.
      ['{"model_type":"llama","hidden_size":"wide","num_hidden_layers":2,"num_attention_heads":32,"intermediate_size":11008,"vocab_size":32000}', /텍스트 "wide"/, /the text|whole number/],
      // No vocab_size: why the key is needed.
      ['{"model_type":"my_custom_lm","hidden_size":4096,"num_hidden_layers":2,"num_attention_heads":32,"intermediate_size":11008}', /임베딩 크기를 정하는 데 필요합니다/, /size the embeddings/],
    ];
    for (const [i, [text, want, english]] of cases.entries()) {
      await pasteConfig(page, text);
      const message = await waitFor(async () => {
        if (!(await isVisible(page, 'model-error'))) return null;
        const t = await readText(page, 'model-error');
        return want.test(t) ? t : null;
      }, `a Korean message matching ${want} for paste ${i + 1}`);
      check(HAS_HANGUL.test(message) && !english.test(message), `paste ${i + 1}: English inside the Korean message: "${message}"`);
      log(`paste ${i + 1}: ${message.slice(0, 140)}`);
    }
    await screenshot(page, 'korean-error');
  });

  // The shell's wasm carries only the translation rows it names (the rows of data/i18n/late go
  // to the late module and the worker, which call i18n::link_late). A key the shell names and
  // does not carry would show the missing marker: so no late key may occur in the shell's wasm
  // at all (a key its code names is stored there as text).
  runner.test('i18n split: the shell names no key of the late part, the late module carries them', async ({ server, log }) => {
    const keys = lateKeys();
    check(keys.length > 50, `only ${keys.length} keys read from data/i18n/late: is the parse broken?`);
    const html = (await served(server, 'index.html')).toString('utf8');
    const shellWasm = html.match(/data-wasm="\.\/([^"]+\.wasm)"/)?.[1];
    check(shellWasm, 'no data-wasm in index.html');
    const shell = await served(server, shellWasm);
    const late = await served(server, 'sections_bg.wasm');
    // The check can fail: keys the shell shows are in its wasm.
    for (const k of ['app_title', 'ui_section_fit', 'late_loading']) check(shell.includes(k), `"${k}" not found in the shell's wasm: is the scan broken?`);
    const inShell = keys.filter((k) => shell.includes(k));
    check(inShell.length === 0, `the shell's wasm names ${inShell.length} key(s) of data/i18n/late (move their rows to data/i18n/shell): ${inShell.join(', ')}`);
    const absentLate = keys.filter((k) => !late.includes(k));
    check(absentLate.length === 0, `the late module lacks ${absentLate.length} late row(s): ${absentLate.slice(0, 10).join(', ')}`);
    log(`${keys.length} late keys; the shell's wasm (${shellWasm}, ${shell.length} bytes) names none, the late module carries all`);
  });
}
