//! The notes of a performance result ([`PerfNote`]), said in the current language.

use crate::core::calc::PerfNote;
use crate::ui::state::use_app;
use leptos::prelude::*;

/// A list of performance notes (nothing when there are none); each item carries its stable
/// code in `data-note`.
#[component]
pub fn PerfNotes(
    /// The notes, in order.
    notes: Vec<PerfNote>,
    /// `data-testid` of the list.
    #[prop(into)]
    testid: String,
) -> impl IntoView {
    let state = use_app();
    (!notes.is_empty()).then(|| {
        let items = notes
            .into_iter()
            .map(|n| {
                let code = n.code();
                view! { <li data-note=code>{move || n.message(state.lang.get())}</li> }
            })
            .collect_view();
        view! { <ul class="perf-notes" data-testid=testid>{items}</ul> }
    })
}
