// Named marks of the start (bench/start_trace.mjs lines a trace's phases up with them).
performance.mark('llmcalc:loader');
// Loads the wasm app. A separate file (not inline) so the page's CSP can forbid inline scripts.
// Trunk fills data-js / data-wasm with the hashed, relative file names.
// The theme first, so a dark system does not see a light page while the app loads (the app then
// keeps <html data-theme> resolved and in step: src/ui/state.rs). Storage may be unavailable in
// a sandboxed frame.
{
  let t = null;
  try {
    t = localStorage.getItem('llmcalc-theme');
  } catch {
    t = null;
  }
  if (t !== 'light' && t !== 'dark') t = matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
  document.documentElement.setAttribute('data-theme', t);
}
// The late module (src/ui/late.rs): the analysis sections, imported when the shell asks (after
// the first answer is painted, or at once for an embedded widget that lives in it). Trunk builds
// it without injecting anything and under its plain name (index.html). Once only; a failure is
// told to the shell, which says so in the sections' places and keeps the first answer. Listening
// starts before the shell is started: an embedded widget asks while the shell starts.
{
  let asked = false;
  addEventListener('llmcalc:load-late', () => {
    if (asked) return;
    asked = true;
    (async () => {
      const late = await import(new URL('sections.js', document.baseURI).href);
      await late.default({ module_or_path: new URL('sections_bg.wasm', document.baseURI).href });
    })().catch((err) => {
      dispatchEvent(new CustomEvent('llmcalc:late-failed', { detail: String(err) }));
    });
  });
}
const tag = document.querySelector('script[data-js][data-wasm]');
if (tag) {
  const js = tag.getAttribute('data-js');
  const wasm = tag.getAttribute('data-wasm');
  const bindings = await import(new URL(js, document.baseURI).href);
  performance.mark('llmcalc:js');
  const instance = await bindings.default({ module_or_path: new URL(wasm, document.baseURI).href });
  performance.mark('llmcalc:started');
  dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm: instance } }));
}
