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
const tag = document.querySelector('script[data-js][data-wasm]');
if (tag) {
  const js = tag.getAttribute('data-js');
  const wasm = tag.getAttribute('data-wasm');
  const bindings = await import(new URL(js, document.baseURI).href);
  const instance = await bindings.default({ module_or_path: new URL(wasm, document.baseURI).href });
  dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm: instance } }));
}
