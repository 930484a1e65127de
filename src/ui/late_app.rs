//! The late module's side (`src/bin/sections.rs`): a second Leptos app that renders the
//! analysis sections into the shell's slots (`ui::late`, which describes the protocol).
//!
//! It builds its own [`AppState`] (the same code as the shell's) from the shell's newest
//! scenario, follows the shell's scenario events, and sends its own edits back to the shell
//! (`state::set_url_sink`): the shell owns the URL and the notices.

use crate::core::present::{LatePiece, PageSection};
use crate::ui::in_view::LazySection;
use crate::ui::late::{
    detail_field, dispatch, EVT_EDIT, EVT_HUB_CONFIG, EVT_READY, EVT_SCENARIO, EVT_SLOT,
    EVT_UNSLOT, SHARED_KEY,
};
use crate::ui::state::{AppState, History, Theme};
use leptos::prelude::*;
use std::any::Any;
use std::cell::RefCell;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

thread_local! {
    /// The mounted sections by slot id; dropping one unmounts it.
    static MOUNTED: RefCell<Vec<(String, Box<dyn Any>)>> = const { RefCell::new(Vec::new()) };
    /// The query this module's scenario was last set from or sent as: a query from the shell
    /// equal to it (the echo of an edit made here, or a repeat) is dropped before it is read.
    static APPLIED: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Records `query` as the one this module's scenario now follows; false if it already was.
fn note_applied(query: &str) -> bool {
    APPLIED.with(|a| {
        let Ok(mut a) = a.try_borrow_mut() else {
            return true;
        };
        if *a == query {
            return false;
        }
        query.clone_into(&mut a);
        true
    })
}

fn theme_of(attr: Option<String>) -> Option<Theme> {
    match attr.as_deref() {
        Some("light") => Some(Theme::Light),
        Some("dark") => Some(Theme::Dark),
        Some("") => Some(Theme::Auto),
        _ => None,
    }
}

/// The shell's newest `{query, theme}` (the page's URL when there is none).
fn shared() -> (String, Option<Theme>) {
    let Some(w) = web_sys::window() else {
        return (String::new(), None);
    };
    let detail = js_sys::Reflect::get(&w, &SHARED_KEY.into()).unwrap_or(JsValue::UNDEFINED);
    let field = |k: &str| {
        js_sys::Reflect::get(&detail, &k.into())
            .ok()
            .and_then(|v| v.as_string())
    };
    match field("query") {
        Some(q) => (q, theme_of(field("theme"))),
        None => (w.location().search().unwrap_or_default(), None),
    }
}

/// Sends an edit made here to the shell, which records it in the URL.
fn send_edit(state: AppState, history: History) {
    let query = state.scenario.with_untracked(|s| s.to_query());
    note_applied(&query);
    let detail = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&detail, &"query".into(), &query.into());
    let _ = js_sys::Reflect::set(
        &detail,
        &"push".into(),
        &JsValue::from_bool(history == History::Push),
    );
    dispatch(EVT_EDIT, &detail);
}

fn listen(name: &str, f: impl FnMut(web_sys::Event) + 'static) {
    let cb = Closure::<dyn FnMut(web_sys::Event)>::new(f);
    if let Some(w) = web_sys::window() {
        let _ = w.add_event_listener_with_callback(name, cb.as_ref().unchecked_ref());
    }
    // The late module lives as long as the page.
    cb.forget();
}

/// One section's or part's view. The one place that names a late section's component: the
/// shell names none, or the linker brings that section's code back into the first load.
fn section_body(piece: LatePiece) -> Option<AnyView> {
    use crate::ui::perf_view::{PerfParts, PerfView};
    Some(match piece {
        LatePiece::Section(s) => match s {
            PageSection::Roofline => {
                view! { <crate::ui::roofline_view::RooflineView /> }.into_any()
            }
            PageSection::Matmul => {
                view! { <crate::ui::matmul_explorer::MatmulExplorer /> }.into_any()
            }
            PageSection::Perf => view! { <PerfView /> }.into_any(),
            PageSection::Accuracy => {
                view! { <crate::ui::accuracy_view::AccuracyView /> }.into_any()
            }
            PageSection::Planner => view! { <crate::ui::planner_view::PlannerView /> }.into_any(),
            PageSection::Serving => view! { <crate::ui::serving_view::ServingView /> }.into_any(),
            // The shell draws these.
            PageSection::Inputs | PageSection::Fit | PageSection::Charts => return None,
        },
        LatePiece::PerfCost => view! { <PerfView parts=PerfParts::Cost /> }.into_any(),
        LatePiece::PerfLatency => view! { <PerfView parts=PerfParts::Latency /> }.into_any(),
        // Parts of the shell's input panels and results (`ui::late::LatePart`).
        LatePiece::Hub => {
            let to_shell = Callback::new(|text: String| {
                dispatch(EVT_HUB_CONFIG, &JsValue::from_str(&text));
            });
            view! { <crate::ui::hub_fetch::HubFetch on_config=to_shell /> }.into_any()
        }
        LatePiece::Export => view! { <crate::ui::export_bar::ExportBar /> }.into_any(),
        LatePiece::CustomGpu => {
            view! { <crate::ui::custom_gpu_form::CustomGpuFields /> }.into_any()
        }
    })
}

/// One section by its slot's piece (`None`: a name the page does not use, nothing is drawn);
/// `lazy` (the full page) wraps a section that is lazy (`LatePiece::lazy`) so it works only
/// while it can be seen.
///
/// The section's component is made inside the [`LazySection`]'s children, not before: a
/// component runs when its view is made, and one made outside the wrapper does not find the
/// wrapper's visibility (`in_view::section_in_view` then answers "always visible"), so every
/// section, on screen or not, would recompute on every change of the scenario.
fn section(piece: Option<LatePiece>, lazy: bool) -> AnyView {
    let Some(piece) = piece else {
        return ().into_any();
    };
    if !lazy || !piece.lazy() {
        return section_body(piece).into_any();
    }
    view! { <LazySection>{section_body(piece)}</LazySection> }.into_any()
}

/// Mounts a section into every slot not mounted yet, in page order.
fn mount_slots(state: AppState) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(list) = doc.query_selector_all("[data-late-slot]:not([data-late-mounted])") else {
        return;
    };
    let full = state
        .scenario
        .with_untracked(|s| s.view == crate::core::scenario::ViewMode::Full);
    for i in 0..list.length() {
        let Some(slot) = list
            .item(i)
            .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
        else {
            continue;
        };
        let piece = LatePiece::from_name(&slot.get_attribute("data-late-slot").unwrap_or_default());
        let id = slot.get_attribute("data-late-id").unwrap_or_default();
        let Some(body) = slot
            .query_selector(".late-body")
            .ok()
            .flatten()
            .and_then(|b| b.dyn_into::<web_sys::HtmlElement>().ok())
        else {
            continue;
        };
        let _ = slot.set_attribute("data-late-mounted", "");
        let handle = leptos::mount::mount_to(body, move || {
            provide_context(state);
            crate::ui::in_view::provide_printing();
            section(piece, full)
        });
        // Mounted in this task: the placeholder goes in the same frame the section comes, and
        // gives its anchor id to the section's own heading (no two elements with one id).
        if let Ok(Some(title)) = slot.query_selector(".late-placeholder-title") {
            let _ = title.remove_attribute("id");
        }
        let _ = slot.set_attribute("data-late-ready", "");
        MOUNTED.with(|m| {
            if let Ok(mut m) = m.try_borrow_mut() {
                m.push((id, Box::new(handle)));
            }
        });
    }
}

/// Starts the late module: its state from the shell's scenario, the event listeners, the
/// sections mounted into the slots present; then tells the shell it is ready.
pub fn mount_late() {
    console_error_panic_hook::set_once();
    // Every shell translation row and configuration class, and the rows the shell does not
    // carry (the sections' texts).
    crate::core::present::link_page();
    crate::core::base::link_late();
    // Effects run on the browser's microtasks (what `mount_to_body` sets up in the shell).
    let _ = any_spawner::Executor::init_wasm_bindgen();
    // The state lives as long as the page: its owner is never dropped.
    let owner = Owner::new();
    owner.set();
    let (query, theme) = shared();
    note_applied(&query);
    let state = AppState::from_query(&query);
    if let Some(t) = theme {
        state.theme.set(t);
    }
    crate::ui::state::set_url_sink(send_edit);
    listen(EVT_SCENARIO, move |ev| {
        if let Some(q) = detail_field(&ev, "query").as_string() {
            if note_applied(&q) {
                state.apply_query(&q, None);
            }
        }
        if let Some(t) = theme_of(detail_field(&ev, "theme").as_string()) {
            if state.theme.get_untracked() != t {
                state.theme.set(t);
            }
        }
    });
    listen(EVT_SLOT, move |_| mount_slots(state));
    listen(EVT_UNSLOT, |ev| {
        let id = ev
            .dyn_ref::<web_sys::CustomEvent>()
            .and_then(|c| c.detail().as_string())
            .unwrap_or_default();
        // Dropped outside the borrow: unmounting may run cleanups.
        let gone = MOUNTED.with(|m| {
            m.try_borrow_mut().ok().and_then(|mut m| {
                m.iter()
                    .position(|(i, _)| *i == id)
                    .map(|at| m.swap_remove(at))
            })
        });
        drop(gone);
    });
    mount_slots(state);
    std::mem::forget(owner);
    dispatch(EVT_READY, &JsValue::UNDEFINED);
}
