// Starts the page (not inline: the CSP forbids inline scripts); docs/SIZE_AND_SPEED.md says
// what each part waits for. Its bytes come before every first answer: comments stay short.
// The performance marks line bench/start_trace.mjs's phases up.
performance.mark('llmcalc:loader');
// The theme first, so a dark system never sees a light page (storage may be unavailable).
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
// A link's or a widget's copy kept pending by the gate is filled by the first-answer module
// (crates/first); declined or failed, it stays hidden until the live app removes it.
let firstAnswer = null;
{
  const copy = document.getElementById('prerendered');
  const pending = copy && copy.getAttribute('data-pending');
  if (pending !== null && pending !== undefined) {
    const name = pending === 'embed' ? 'first_embed' : 'first';
    const firstModule = (async () => {
      const first = await import(new URL(`${name}.js`, document.baseURI).href);
      await first.default({ module_or_path: new URL(`${name}_bg.wasm`, document.baseURI).href });
      return first;
    })();
    firstAnswer = firstModule.then(async (first) => {
      performance.mark('llmcalc:first');
      const lang = navigator.language || '';
      const json = pending === 'embed' ? first.embed_screen(location.pathname, location.search, lang) : first.first_screen(location.search, lang);
      const f = json && JSON.parse(json);
      // The widget's copy in its language (the head's script preloaded its guess of it).
      const html = f && pending === 'embed' && (await fetch(new URL(`embeds-${f.widget}${f.lang === 'ko' ? '-ko' : ''}.html`, document.baseURI).href).then((r) => (r.ok ? r.text() : '')));
      if (!f || !(pending === 'embed' ? fillEmbed(f, first, html) : fillCopy(f))) return undefined;
      // The shell waits for the frame that paints the filled copy.
      return new Promise((ok) => requestAnimationFrame(() => setTimeout(ok, 0)));
    }).catch(() => {});
  }
}

/** Fills the pending copy with a link's `FirstScreen`; false when the live app came first. */
function fillCopy(f) {
  let root = document.getElementById('prerendered');
  const ko = document.getElementById('prerendered-ko');
  if (!root || !root.hasAttribute('data-pending')) return false;
  if (f.lang === 'ko') {
    if (!ko) return false;
    root.replaceWith(ko.content);
    root = document.getElementById('prerendered');
  }
  if (ko) ko.remove();
  fillScreen(root, f);
  show(root, f);
  return true;
}

/** Puts the widget's copy (from embeds-<widget>[-ko].html) in place, fills it with `EmbedScreen`, draws its
 * chart; false when the live app came first or the copy is missing. */
function fillEmbed(f, module, html) {
  let root = document.getElementById('prerendered');
  const box = document.createElement('template');
  box.innerHTML = html;
  const template = box.content.getElementById(`prerendered-embed-${f.widget}${f.lang === 'ko' ? '-ko' : ''}`);
  if (!root || root.getAttribute('data-pending') !== 'embed' || !template) return false;
  root.replaceWith(template.content);
  root = document.getElementById('prerendered');
  const ko = document.getElementById('prerendered-ko');
  if (ko) ko.remove();
  fillScreen(root, f);
  const note = root.querySelector('.explanation > div');
  // The explanation's paragraphs, before the list's end markers.
  const paragraphs = [...note.children].filter((e) => e.tagName === 'P');
  const after = paragraphs.length ? paragraphs[paragraphs.length - 1].nextSibling : note.querySelector('h3').nextSibling;
  for (const e of paragraphs) e.remove();
  for (const x of f.explain) {
    const para = document.createElement('p');
    para.append(x, document.createComment(''));
    note.insertBefore(para, after);
  }
  root.querySelector('.embed-link > a').setAttribute('href', f.href);
  show(root, f);
  // The chart at the width the live widget reads (its wrapper's content box).
  const wrap = root.querySelector('.chart-canvas-wrap');
  const width = Math.max(0, Math.round(wrap.getBoundingClientRect().width));
  if (width > 0) module.draw_embed_chart(wrap.querySelector('canvas'), width, document.documentElement.getAttribute('data-theme') === 'dark');
  // The framing page sizes its frame on this (the live widget sends it too).
  if (parent !== window) parent.postMessage({ type: 'llmcalc:height', height: document.documentElement.scrollHeight }, '*');
  return true;
}

/** Shows a filled copy: ready, in its language. */
function show(root, f) {
  root.removeAttribute('data-pending');
  if (f.lang === 'ko') document.documentElement.lang = 'ko';
  root.hidden = false;
  performance.mark('llmcalc:first-filled');
}

/** Writes a `FirstScreen`'s texts into whichever inputs, cards and fit table the copy has. */
function fillScreen(root, f) {
  const q = (id) => root.querySelector(`[data-static-testid="${id}"]`);
  // An element's own text node (the copy keeps the live markup's comments).
  const text = (el, value) => {
    const node = [...el.childNodes].find((c) => c.nodeType === 3);
    if (node) node.data = value;
    else el.insertBefore(document.createTextNode(value), el.firstChild);
  };
  const choose = (select, value) => {
    for (const o of select.options) {
      if (o.value === value) o.setAttribute('selected', '');
      else o.removeAttribute('selected');
    }
  };
  // Per-GPU items: clones of the first, their test ids' GPU key replaced.
  const list = (parent, selector, idPrefix, items, fill) => {
    const old = [...parent.children].filter((e) => e.matches(selector));
    const pattern = old[0];
    if (!pattern) return;
    const tagged = pattern.matches(`[data-static-testid^="${idPrefix}"]`) ? pattern : pattern.querySelector(`[data-static-testid^="${idPrefix}"]`);
    const from = `-${tagged.getAttribute('data-static-testid').slice(idPrefix.length)}`;
    const after = old[old.length - 1].nextSibling;
    for (const e of old) e.remove();
    for (const item of items) {
      const c = pattern.cloneNode(true);
      for (const e of [c, ...c.querySelectorAll('[data-static-testid]')]) {
        const id = e.getAttribute('data-static-testid');
        if (id && id.endsWith(from)) e.setAttribute('data-static-testid', `${id.slice(0, -from.length)}-${item.key}`);
      }
      fill(c, item);
      parent.insertBefore(c, after);
    }
  };
  const c = f.cards;
  if (q('strip-model')) {
    choose(q('strip-model'), f.preset);
    choose(q('strip-gpu'), f.gpu);
    for (const [id, value, pretty] of [['strip-ctx', f.ctx, f.ctx_pretty], ['strip-n', f.n, f.n_pretty]]) {
      if (!q(id)) continue;
      q(id).setAttribute('value', value);
      text(q(id).parentElement.querySelector('.pretty'), pretty);
    }
    if (q('strip-weight-dtype')) choose(q('strip-weight-dtype'), f.wd);
    if (q('strip-kv-dtype')) choose(q('strip-kv-dtype'), f.kvd);
  }
  const cards = q('params-total') !== null;
  const fit = q('fit-table') !== null;
  if (q('model-preset')) fillInputs();
  if (cards) fillCards();
  if (fit) fillFit();
  fillMath();

  /** The full page's inputs. */
  function fillInputs() {
    choose(q('model-preset'), f.preset);
    text(q('model-name'), f.name);
    text(q('model-arch'), f.arch);
    text(q('model-layers'), f.layers);
    const ledger = q('model-ledger').querySelector('summary');
    text(ledger, ledger.textContent.replace(/\(\d+\)$/, `(${f.ledger})`));
    // The model's warnings, after its facts in place of the empty list's marker.
    if (f.warnings.length) {
      const facts = root.querySelector('dl.model-facts');
      const ul = document.createElement('ul');
      ul.className = 'model-warnings';
      ul.setAttribute('aria-label', f.warnings_label);
      for (const w of f.warnings) {
        const li = document.createElement('li');
        li.append(w, document.createComment(''));
        ul.append(li);
      }
      ul.append(document.createComment(''), document.createComment(''));
      const mark = facts.nextSibling;
      if (mark && mark.nodeType === Node.COMMENT_NODE) mark.replaceWith(ul);
      else facts.after(ul);
    }
    // A lone GPU's remove button is disabled (the attribute after `type`, as the live page).
    list(q('gpu-selected'), 'li', 'gpu-selected-', c.gpus, (li, g) => {
      text(li.querySelector('span'), g.name);
      const button = li.querySelector('button');
      if (c.gpus.length === 1 && !button.hasAttribute('disabled')) {
        const later = [...button.attributes].slice([...button.attributes].findIndex((a) => a.name === 'type') + 1).map((a) => [a.name, a.value]);
        for (const [k] of later) button.removeAttribute(k);
        button.setAttribute('disabled', '');
        for (const [k, v] of later) button.setAttribute(k, v);
      }
    });
    choose(q('tp'), f.tp);
    for (const [id, value, pretty, slider] of [['context-len', f.ctx, f.ctx_pretty, f.ctx_slider], ['concurrency', f.n, f.n_pretty, f.n_slider]]) {
      q(id).setAttribute('value', value);
      text(q(id).parentElement.querySelector('.pretty'), pretty);
      q(`${id}-slider`).setAttribute('value', slider);
    }
    choose(q('weight-dtype'), f.wd);
    choose(q('kv-dtype'), f.kvd);
  }

  function comment() {
    return document.createComment('');
  }
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    e.append(...kids);
    return e;
  }

  /** The cards; the parameters card's optional lines replace the live page's empty markers. */
  function fillCards() {
    text(q('params-total'), c.params_total);
    if (q('params-eok')) text(q('params-eok'), c.params_eok);
    const total = [...q('params-total').parentElement.children].find((e) => e.matches('p.card-sub:not([data-static-testid])'));
    const [activeSlot, partsEnd, mtpSlot] = [total.nextSibling, total.nextSibling.nextSibling, total.nextSibling.nextSibling.nextSibling];
    if (c.params_active) {
      activeSlot.replaceWith(el('p', { class: 'card-sub' }, el('span', { 'data-static-testid': 'params-active' }, c.params_active, comment()), ` ${f.active_label}`, comment(), comment()));
    }
    for (const part of c.params_parts) partsEnd.before(el('p', { class: 'card-sub', 'data-static-testid': 'params-part' }, part, comment()));
    if (c.has_mtp) {
      mtpSlot.replaceWith(el('label', { class: 'card-sub' }, el('input', { type: 'checkbox', 'data-static-testid': 'include-mtp' }), ` ${f.mtp_label}`, comment(), comment()));
    }
    for (const [id, big, sub] of [['weights', c.weights, c.weight_dtype], ['kv-per-token', c.kv_token, c.kv_dtype], ['kv-per-request', c.kv_request, c.kv_request_sub], ['kv-total', c.kv_total, c.kv_total_sub]]) {
      text(q(id), big);
      text(q(id).nextElementSibling, sub);
    }
    list(root.querySelector('.gpu-requests-row'), '.gpu-requests', 'max-requests-', c.gpus, (e, g) => {
      text(e.querySelector('.gpu-label'), g.name);
      const big = e.querySelector('.big');
      text(big, `${g.requests} `);
      text(big.querySelector('.card-sub'), g.sub);
    });
    list(root.querySelector('.vllm-logs'), '.vllm-log', 'vllm-log-', c.gpus, (e, g) => {
      text(e.querySelector('.gpu-label'), g.name);
      text(e.querySelector('pre'), g.log);
    });
  }

  /** The fit table's rows, in the cards' order, and the comparisons. */
  function fillFit() {
    const rows = f.rows.map((r, i) => ({ ...r, key: c.gpus[i].key }));
    list(q('fit-table').querySelector('tbody'), 'tr', 'fit-row-', rows, (tr, r) => {
      text(tr.querySelector('th'), r.name);
      const verdict = tr.querySelector('.verdict');
      verdict.className = r.verdict_class;
      text(verdict, r.verdict);
      if (r.suggestions.length) {
        const items = r.suggestions.map((x) => el('li', {}, x, comment()));
        verdict.nextSibling.replaceWith(el('div', { class: 'suggestions', 'data-static-testid': `suggestions-${r.key}` }, el('p', {}, f.suggest_title, comment()), el('ul', {}, ...items, comment(), comment()), comment(), comment()));
      }
      tr.querySelector('.minibar').setAttribute('aria-label', r.bar_label);
      // Through the style object, as the live page (the browser normalizes "27.90%").
      const bar = (seg, width) => {
        seg.removeAttribute('style');
        if (width) seg.style.width = width;
        else seg.style.display = 'none';
      };
      const segs = tr.querySelectorAll('.minibar > .seg');
      r.segs.forEach(([width, title], i) => {
        bar(segs[i], width);
        segs[i].setAttribute('title', title);
      });
      bar(segs[5], r.over);
      text(tr.querySelector('.mem-cell > .num'), r.used);
      tr.querySelectorAll('.legend > li').forEach((li, i) => text(li, r.legend[i]));
      const requests = tr.querySelector(`[data-static-testid="fit-requests-${r.key}"]`);
      text(requests, r.requests);
      text(requests.nextElementSibling, r.price);
      const cost = tr.querySelector(`[data-static-testid="cost-per-request-${r.key}"]`);
      text(cost, r.per_request);
      const tag = cost.querySelector('.tag');
      tag.removeAttribute('style');
      if (!r.cheapest) tag.style.display = 'none';
    });
    list(root.querySelector('.compare'), 'p', 'cost-compare', f.compare.map((s) => ({ key: '', s })), (p, x) => text(p, x.s));
  }

  /** Hides the math panels without a derivation (style before test id, as the live page). */
  function fillMath() {
    for (const d of root.querySelectorAll('details.math[data-static-testid]')) {
      const id = d.getAttribute('data-static-testid');
      d.removeAttribute('style');
      if (f.math_hidden.includes(id)) {
        d.removeAttribute('data-static-testid');
        d.style.display = 'none';
        d.getAttribute('style'); // makes the browser write the style attribute now, before the id
        d.setAttribute('data-static-testid', id);
      }
    }
  }
}
// The late module (src/ui/late.rs), once, when the shell asks; a failure is told to the shell.
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
  const wasm = new URL(tag.getAttribute('data-wasm'), document.baseURI).href;
  // After a first answer (or 300 ms; a widget also waits for an idle thread, at most 1 s) the
  // shell is fetched and compiled; a failed compile hands the bindings the URL.
  const answered = firstAnswer && Promise.race([firstAnswer, new Promise((ok) => setTimeout(ok, 300))]);
  const idle = () => new Promise((ok) => (window.requestIdleCallback ? requestIdleCallback(ok, { timeout: 1000 }) : setTimeout(ok, 0)));
  const firstDone = answered && (/[?&]embed=/.test(location.search) ? answered.then(idle) : answered);
  const source = firstDone ? firstDone.then(() => WebAssembly.compileStreaming(fetch(wasm))).catch(() => wasm) : wasm;
  if (firstDone) await firstDone;
  const bindings = await import(new URL(js, document.baseURI).href);
  performance.mark('llmcalc:js');
  const module = await source;
  const instance = await bindings.default({ module_or_path: module });
  performance.mark('llmcalc:started');
  dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm: instance } }));
}
