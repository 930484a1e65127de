//! Helpers shared by the analysis views (roofline, matmul, performance, accuracy, planner):
//! memos of the model and the compared GPUs from the last good report, the resolved theme,
//! and number formatting (the analysis views' numbers are `core::present::page`'s, tested
//! natively). No components here.

use crate::core::base::NumberSymbols;
use crate::core::model::ModelDesc;
use crate::core::present::ViewGpu;
pub use crate::core::present::{fmt_ms, fmt_ms_range, fmt_num};
use crate::ui::in_view::{gated_memo, section_in_view};
use crate::ui::state::AppState;
use leptos::prelude::*;

/// Whether the dark palette is in effect: the toggle, or the system when it follows it.
pub fn is_dark(state: AppState) -> Signal<bool> {
    Signal::derive(move || state.is_dark())
}

/// The model of the last good report (`None` before the first one); followed only while the
/// enclosing section is on screen (ui::in_view).
pub fn model_memo(state: AppState) -> Memo<Option<ModelDesc>> {
    gated_memo(section_in_view(), move || {
        state
            .outcome
            .with(|o| o.report.as_ref().map(|r| r.model.clone()))
    })
}

/// The compared GPUs of the last good report, with their keys; followed only while the
/// enclosing section is on screen.
pub fn gpus_memo(state: AppState) -> Memo<Vec<ViewGpu>> {
    gated_memo(section_in_view(), move || {
        state.outcome.with(|o| {
            o.report
                .as_ref()
                .map(ViewGpu::from_report)
                .unwrap_or_default()
        })
    })
}

/// The CSS `display` that shows an element (`""`, its own) or hides it (`"none"`): for
/// elements that stay in the page and are only hidden, so they are not rebuilt.
pub fn display_if(shown: bool) -> &'static str {
    if shown {
        ""
    } else {
        "none"
    }
}

/// Whether the `<details>` a `toggle` event came from is now open (`false` for any other
/// target, so a stray event cannot panic).
pub fn details_opened(ev: &leptos::ev::Event) -> bool {
    use wasm_bindgen::JsCast;
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlDetailsElement>().ok())
        .is_some_and(|d| d.open())
}

/// The number symbols of the UI language (reactive).
pub fn num_symbols(state: AppState) -> NumberSymbols {
    state.lang.get().number_symbols()
}

/// "$0.2515" / "—".
pub fn fmt_usd(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => crate::charts::fmt::usd(v),
        _ => "—".to_string(),
    }
}
