// Loads the wasm app. A separate file (not inline) so the page's CSP can forbid inline scripts.
// Trunk fills data-js / data-wasm with the hashed, relative file names.
const tag = document.querySelector('script[data-js][data-wasm]');
if (tag) {
  const js = tag.getAttribute('data-js');
  const wasm = tag.getAttribute('data-wasm');
  const bindings = await import(new URL(js, document.baseURI).href);
  const instance = await bindings.default({ module_or_path: new URL(wasm, document.baseURI).href });
  dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm: instance } }));
}
