//! Embed mode (`?embed=…`): one widget without page chrome, its height sent to the parent
//! page so an iframe can grow, and a link back to the full calculator. Above the widget, a
//! strip of the inputs that drive it ([`EmbedInputs`]) unless the link says `embed_inputs=0`.

use crate::core::scenario::EmbedWidget;
use crate::ui::charts_panel::{ChartSet, ChartsPanel};
use crate::ui::embed_inputs::EmbedInputs;
use crate::ui::fit_table::FitTable;
use crate::ui::late::LateSlot;
use crate::ui::notice::NoticeBar;
use crate::ui::state::use_app;
use crate::ui::summary_cards::SummaryCards;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;

/// Sends `{type: "llmcalc:height", height}` to the parent window (when framed).
fn post_height() {
    let Some(w) = web_sys::window() else {
        return;
    };
    let Some(parent) = w.parent().ok().flatten() else {
        return;
    };
    if parent == w {
        return;
    }
    let height = w
        .document()
        .and_then(|d| d.document_element())
        .map(|e| e.scroll_height())
        .unwrap_or(0);
    let msg = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&msg, &"type".into(), &"llmcalc:height".into());
    let _ = js_sys::Reflect::set(&msg, &"height".into(), &height.into());
    let _ = parent.post_message(&msg, "*");
}

/// One widget alone, for course pages.
#[component]
pub fn EmbedView(
    /// Which widget to show.
    widget: EmbedWidget,
) -> impl IntoView {
    let state = use_app();
    // Talking to the outside world: after each re-render, tell the parent our height.
    Effect::new(move |_| {
        state.outcome.track();
        state.lang.track();
        request_animation_frame(post_height);
    });
    let body = match widget {
        EmbedWidget::Memory => view! {
            <ChartsPanel only=ChartSet::Memory />
            <FitTable />
        }
        .into_any(),
        EmbedWidget::Cost => view! {
            <ChartsPanel only=ChartSet::Cost />
            <LateSlot name="perf-cost" eager=true />
            <FitTable />
        }
        .into_any(),
        EmbedWidget::Kv => view! {
            <ChartsPanel only=ChartSet::Kv />
            <SummaryCards />
        }
        .into_any(),
        EmbedWidget::Batch => view! {
            <ChartsPanel only=ChartSet::Batch />
            <SummaryCards />
        }
        .into_any(),
        // These live in the late module (ui::late): loaded at once.
        EmbedWidget::Roofline => view! { <LateSlot name="roofline" eager=true /> }.into_any(),
        EmbedWidget::Matmul => view! { <LateSlot name="matmul" eager=true /> }.into_any(),
        EmbedWidget::Latency => view! { <LateSlot name="perf-latency" eager=true /> }.into_any(),
        EmbedWidget::Planner => view! { <LateSlot name="planner" eager=true /> }.into_any(),
    };
    let href = move || state.full_link(true);
    let show_inputs = Memo::new(move |_| state.scenario.with(|s| s.embed_inputs));
    // And whenever the widget itself changes height (a <details> opened, a panel grew, the
    // layout settled at a new width), not only when the results change.
    let root_ref = NodeRef::<leptos::html::Main>::new();
    root_ref.on_load(move |el| {
        let cb = Closure::<dyn FnMut()>::new(post_height);
        if let Ok(obs) = web_sys::ResizeObserver::new(cb.as_ref().unchecked_ref()) {
            obs.observe(&el);
            crate::ui::keep_alive::keep_observer(obs, cb, web_sys::ResizeObserver::disconnect);
        }
    });
    view! {
        <main class="embed" node_ref=root_ref data-testid=format!("embed-{}", widget.id())>
            <NoticeBar />
            {move || show_inputs.get().then(|| view! {
                <EmbedInputs widget=widget />
            })}
            {body}
            <p class="embed-link">
                <a href=href target="_blank" rel="noopener">{move || state.tr("ui_open_full")}</a>
            </p>
        </main>
    }
}
