// Service worker: the calculator works offline once it has been loaded.
//
// - On install it caches the app's own files: index.html (the directory URL) and every
//   same-origin file it names (hashed JS, wasm, CSS, loader.js, the icon).
// - Same-origin GET requests are answered cache-first (a miss goes to the network and is
//   cached); page navigations go to the network first so a new build shows up, and fall back
//   to the cached page when offline (any query string: the scenario lives in it).
// - Requests to any other origin are never touched (and the page's CSP forbids them anyway).
//
// Scope: the directory that holds this file, so it works under any sub-path of a static host
// and from `python3 -m http.server`.

const CACHE = 'llmcalc-v1';
const SCOPE = new URL('./', self.location).href;

// The serving simulator's worker files: Trunk names a worker after its binary and never hashes
// it (src/ui/sim_client.rs), so these are fetched network-first (a new build brings its own
// worker) and cached when first used (not at install: they load only when their section is
// reached), so the section works offline once it has been seen.
// The late module's files (src/ui/late.rs) are unhashed too and fetched the same way; they come
// right after the first answer on every visit, so they are also cached at install (a second
// visit then works offline even if the first one fetched them before this worker took over).
const LATE_FILES = ['sections.js', 'sections_bg.wasm'];
// The first-answer modules of a scenario link and of an embedded widget (crates/first/src/main.rs,
// embed.rs) and the widgets' copies, unhashed too: network-first, cached when first used.
const FIRST_FILES = ['first.js', 'first_bg.wasm', 'first_embed.js', 'first_embed_bg.wasm', ...['memory', 'kv', 'batch'].flatMap((w) => [`embeds-${w}.html`, `embeds-${w}-ko.html`])];
const WORKER_FILES = ['sim_worker_loader.js', 'sim_worker.js', 'sim_worker_bg.wasm', ...LATE_FILES, ...FIRST_FILES];

function isWorkerFile(url) {
  const path = new URL(url, self.location).pathname;
  return WORKER_FILES.some((f) => path.endsWith('/' + f));
}

function sameOrigin(url) {
  return new URL(url, self.location).origin === self.location.origin;
}

/** Same-origin URLs named in index.html (href, src, data-js, data-wasm attributes). */
function assetsOf(html) {
  const urls = new Set([SCOPE]);
  const re = /\b(?:href|src|data-js|data-wasm)\s*=\s*"([^"]+)"/g;
  let m;
  while ((m = re.exec(html)) !== null) {
    const raw = m[1];
    if (raw.startsWith('data:') || raw.startsWith('#')) continue;
    const url = new URL(raw, SCOPE);
    if (url.origin === self.location.origin && url.href.startsWith(SCOPE)) urls.add(url.href);
  }
  return [...urls];
}

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      const page = await fetch(SCOPE, { cache: 'no-cache' });
      if (!page.ok) return;
      const html = await page.clone().text();
      await cache.put(SCOPE, page);
      // One failed file must not abort the install: cache what can be fetched. The page
      // registers this worker only once its late module has loaded (src/ui/offline.rs), so on
      // a first visit it has just fetched every file named here (loader.js, the hashed app
      // files) and the late module's: take them from the HTTP cache ('force-cache', this
      // build's copies) instead of downloading them a second time; the network only when the
      // HTTP cache has no copy. The page itself (above) is asked for again, revalidated: the
      // page's own URL carries the scenario's query, so the HTTP cache may hold no copy of the
      // bare directory URL, or an old one.
      const late = LATE_FILES.map((f) => new URL(f, SCOPE).href);
      await Promise.all(
        [...assetsOf(html).filter((u) => u !== SCOPE), ...late]
          .map((u) =>
            fetch(u, { cache: 'force-cache' })
              .then((res) => (res.ok ? cache.put(u, res) : undefined))
              .catch(() => undefined),
          ),
      );
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      const names = await caches.keys();
      await Promise.all(names.filter((n) => n.startsWith('llmcalc-') && n !== CACHE).map((n) => caches.delete(n)));
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET' || !sameOrigin(req.url)) return;
  if (req.mode === 'navigate') {
    event.respondWith(
      (async () => {
        const cache = await caches.open(CACHE);
        const cached = async () =>
          (await cache.match(req, { ignoreSearch: true })) || (await cache.match(SCOPE));
        if (self.navigator && self.navigator.onLine === false) {
          const hit = await cached();
          if (hit) return hit;
        }
        try {
          const res = await fetch(req);
          if (res.ok) await cache.put(SCOPE, res.clone());
          return res;
        } catch (err) {
          const hit = await cached();
          if (hit) return hit;
          throw err;
        }
      })(),
    );
    return;
  }
  if (isWorkerFile(req.url)) {
    event.respondWith(
      (async () => {
        const cache = await caches.open(CACHE);
        try {
          const res = await fetch(req, { cache: 'no-cache' });
          if (res.ok && res.type === 'basic') await cache.put(req, res.clone());
          return res;
        } catch (err) {
          const hit = await cache.match(req, { ignoreSearch: true });
          if (hit) return hit;
          throw err;
        }
      })(),
    );
    return;
  }
  event.respondWith(
    (async () => {
      const cache = await caches.open(CACHE);
      const hit = await cache.match(req, { ignoreSearch: true });
      if (hit) return hit;
      const res = await fetch(req);
      if (res.ok && res.type === 'basic') await cache.put(req, res.clone());
      return res;
    })(),
  );
});
