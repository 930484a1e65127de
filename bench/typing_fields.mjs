// What bench/typing.mjs and bench/typing_trace.mjs type, and how they bring a field into view.

// What is typed: [field test id, text] in turn, each field's text selected first.
export const BURSTS = [
  ['context-len', '8192'],
  ['concurrency', '24'],
  ['context-len', '32768'],
  ['concurrency', '8'],
  ['context-len', '4096'],
];

/**
 * Runs in the page: the field as a person typing sees it: scrolled into view inside the sticky
 * input column (which scrolls on its own; the page does not move), focused and its text
 * selected. A field left out of sight makes no visible change as it is typed into, and Event
 * Timing then reports each key press up to the next frame that draws anything (the sections
 * catching up 250 ms later): a wait no one sees.
 */
export function fieldInView(el) {
  const i = el.matches('input') ? el : el.querySelector('input:not([type=range])');
  const col = i.closest('.inputs');
  if (col) {
    const r = i.getBoundingClientRect();
    const c = col.getBoundingClientRect();
    const top = Math.max(c.top, 0);
    const bottom = Math.min(c.bottom, window.innerHeight);
    if (r.top < top || r.bottom > bottom) col.scrollTop += r.top - (top + bottom - r.height) / 2;
  }
  i.focus({ preventScroll: true });
  i.select();
}
