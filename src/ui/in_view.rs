//! Work only for what is on screen: whether an element is on (or near) the screen, from an
//! `IntersectionObserver`, and [`LazySection`], which wraps a results section so that its
//! charts draw and its heavy memos recompute only while it can be seen.
//!
//! Off screen, a section's numbers catch up once the inputs have settled (`AppState::settled`,
//! a moment after the last change), so the page never keeps stale text for long; its charts
//! draw when they scroll in. Printing shows everything: `beforeprint` sets [`Printing`],
//! which counts as "on screen" for every section and chart.

use leptos::html::Div;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;

use crate::ui::keep_alive::keep_observer;

/// How far outside the viewport an element still counts as on screen, so a chart is drawn
/// just before it scrolls in.
const MARGIN: &str = "300px 0px";

/// True while the page is being printed (between `beforeprint` and `afterprint`).
#[derive(Clone, Copy)]
pub struct Printing(pub RwSignal<bool>);

/// Provides [`Printing`] and keeps it in step with the browser's print events. Call once, in
/// the app's root component.
pub fn provide_printing() {
    let printing = RwSignal::new(false);
    provide_context(Printing(printing));
    let before = window_event_listener(leptos::ev::beforeprint, move |_| printing.set(true));
    let after = window_event_listener(leptos::ev::afterprint, move |_| printing.set(false));
    on_cleanup(move || {
        before.remove();
        after.remove();
    });
}

/// Whether the element behind `node` is on or near the screen (or the page is printing).
/// True where `IntersectionObserver` is missing, so nothing is ever hidden for good.
pub fn in_view(node: NodeRef<Div>) -> Signal<bool> {
    observe(node, MARGIN)
}

/// Whether the element behind `node` is on the screen itself (no margin), or printing.
pub fn on_screen(node: NodeRef<Div>) -> Signal<bool> {
    observe(node, "0px")
}

/// Whether views behind `node` should follow every change: while the element is on the
/// screen, or once the inputs have settled (`AppState::settled`). Off screen, a burst of edits
/// costs them nothing, and they catch up in one go when the inputs settle.
pub fn live_when_seen(node: NodeRef<Div>) -> Signal<bool> {
    let seen = on_screen(node);
    let settled = crate::ui::state::use_app().settled;
    Memo::new(move |_| seen.get() || settled.get()).into()
}

fn observe(node: NodeRef<Div>, margin: &'static str) -> Signal<bool> {
    let seen = RwSignal::new(false);
    let printing = use_context::<Printing>().map(|p| p.0);
    node.on_load(move |el| {
        let cb = Closure::<dyn FnMut(js_sys::Array)>::new(move |entries: js_sys::Array| {
            // The last entry is the newest state of the one observed element.
            if let Some(e) = entries
                .iter()
                .last()
                .and_then(|e| e.dyn_into::<web_sys::IntersectionObserverEntry>().ok())
            {
                let now = e.is_intersecting();
                if now != seen.get_untracked() {
                    seen.set(now);
                }
            }
        });
        let init = web_sys::IntersectionObserverInit::new();
        init.set_root_margin(margin);
        match web_sys::IntersectionObserver::new_with_options(cb.as_ref().unchecked_ref(), &init) {
            Ok(obs) => {
                obs.observe(&el);
                keep_observer(obs, cb, web_sys::IntersectionObserver::disconnect);
            }
            Err(_) => seen.set(true),
        }
    });
    Signal::derive(move || seen.get() || printing.is_some_and(|p| p.get()))
}

/// Whether the enclosing [`LazySection`] is on screen (always true outside one, e.g. in an
/// embed, where the widget is the page).
#[derive(Clone, Copy)]
struct SectionInView(Signal<bool>);

/// The enclosing section's visibility; `true` outside a [`LazySection`].
pub fn section_in_view() -> Signal<bool> {
    use_context::<SectionInView>()
        .map(|s| s.0)
        .unwrap_or_else(|| Signal::derive(|| true))
}

/// A memo that recomputes `f` only while `visible`. Off screen, the first change of one of
/// `f`'s inputs makes it keep its last value and listen to `visible` instead (no longer to the
/// inputs); it catches up when the section is visible again (scrolled in, or the inputs
/// settled). A section whose inputs did not change while it was hidden is not recomputed when
/// it shows again: `visible` is listened to only while a change is pending.
pub fn gated_memo<T>(visible: Signal<bool>, f: impl Fn() -> T + Send + Sync + 'static) -> Memo<T>
where
    T: Clone + PartialEq + Send + Sync + 'static,
{
    Memo::new(move |prev: Option<&T>| match prev {
        Some(p) if !visible.get_untracked() => {
            visible.track();
            p.clone()
        }
        _ => f(),
    })
}

/// A results section that works only while it can be seen (or once the inputs have settled and
/// the sections before it have caught up):
/// provides that condition to the views inside ([`section_in_view`]).
#[component]
pub fn LazySection(children: Children) -> impl IntoView {
    let node: NodeRef<Div> = NodeRef::new();
    let visible = in_view(node);
    // Off screen, the section catches up once the inputs have settled: never on the path
    // from an input to the next frame, and never left showing stale numbers for long. The
    // sections catch up one per task (`AppState::caught_up`), so settling is never one long
    // task doing the work of every section out of sight.
    let state = crate::ui::state::use_app();
    let index = state.next_section();
    let caught_up = state.caught_up;
    // A memo, so the views inside hear only when the answer changes: an on-screen section is
    // not recomputed when the inputs merely settle.
    let live = Memo::new(move |_| visible.get() || caught_up.get() > index);
    provide_context(SectionInView(live.into()));
    view! { <div class="lazy-section" node_ref=node>{children()}</div> }
}
