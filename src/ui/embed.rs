//! Embed mode (`?embed=…`): one widget without page chrome, its height sent to the parent
//! page so an iframe can grow, and a link back to the full calculator. Above the widget, a
//! strip of the inputs that drive it ([`EmbedInputs`]) unless the link says `embed_inputs=0`.

use crate::core::present::{LatePiece, PageSection};
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

/// The frame document's height, or `None` when the page is not framed (no parent to tell).
fn framed_height() -> Option<(web_sys::Window, i32)> {
    let w = web_sys::window()?;
    let parent = w.parent().ok().flatten()?;
    if parent == w {
        return None;
    }
    let height = w
        .document()
        .and_then(|d| d.document_element())
        .map(|e| e.scroll_height())
        .unwrap_or(0);
    Some((parent, height))
}

thread_local! {
    /// The height report: the height read at the last check (-1: none yet), the height last
    /// sent (-1: none), and whether a check is scheduled.
    static REPORT: std::cell::Cell<(i32, i32, bool)> = const { std::cell::Cell::new((-1, -1, false)) };
}

/// Asks for a height report to the parent window: `{type: "llmcalc:height", height}`, sent
/// once the height has held for one animation frame and only when it differs from the last
/// one sent. A part that takes its height a frame after it mounts (a late part's chart: the
/// matmul widget read 1,051 → 978 → 1,051 px in three frames) then sends no transient height,
/// so a course page that sizes its frame on every message does not jump.
fn report_height() {
    REPORT.with(|r| {
        let (seen, sent, pending) = r.get();
        if !pending {
            r.set((seen, sent, true));
            request_animation_frame(check_height);
        }
    });
}

/// One check of [`report_height`]: reads the height, and sends it if it equals the previous
/// frame's reading, else looks again in the next frame.
fn check_height() {
    let Some((parent, height)) = framed_height() else {
        REPORT.with(|r| r.set((-1, -1, false)));
        return;
    };
    let (seen, sent, _) = REPORT.with(std::cell::Cell::get);
    if height != seen {
        REPORT.with(|r| r.set((height, sent, true)));
        request_animation_frame(check_height);
        return;
    }
    REPORT.with(|r| r.set((height, height, false)));
    if height != sent {
        let msg = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&msg, &"type".into(), &"llmcalc:height".into());
        let _ = js_sys::Reflect::set(&msg, &"height".into(), &height.into());
        let _ = parent.post_message(&msg, "*");
    }
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
        report_height();
    });
    let body = match widget {
        EmbedWidget::Memory => view! {
            <ChartsPanel only=ChartSet::Memory />
            <FitTable />
        }
        .into_any(),
        EmbedWidget::Cost => view! {
            <ChartsPanel only=ChartSet::Cost />
            <LateSlot name=LatePiece::PerfCost eager=true />
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
        EmbedWidget::Roofline => {
            view! { <LateSlot name=PageSection::Roofline eager=true /> }.into_any()
        }
        EmbedWidget::Matmul => {
            view! { <LateSlot name=PageSection::Matmul eager=true /> }.into_any()
        }
        EmbedWidget::Latency => {
            view! { <LateSlot name=LatePiece::PerfLatency eager=true /> }.into_any()
        }
        EmbedWidget::Planner => {
            view! { <LateSlot name=PageSection::Planner eager=true /> }.into_any()
        }
    };
    let href = move || state.full_link(true);
    let show_inputs = Memo::new(move |_| state.scenario.with(|s| s.embed_inputs));
    // And whenever the widget itself changes height (a <details> opened, a panel grew, the
    // layout settled at a new width), not only when the results change.
    let root_ref = NodeRef::<leptos::html::Main>::new();
    root_ref.on_load(move |el| {
        let cb = Closure::<dyn FnMut()>::new(report_height);
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
