//! A precision select (weights or KV cache), shared by the workload panel and the embeds'
//! input strip.

use crate::core::base::Dtype;
use crate::ui::state::{use_app, History};
use leptos::prelude::*;

/// Which precision of the scenario a [`DtypeSelect`] edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DtypeTarget {
    /// The weights (`None` = the checkpoint's own).
    Weights,
    /// The KV cache (`None` = the model's compute precision).
    Kv,
}

/// A labelled `<select>` of the precisions, with a first "default" choice.
#[component]
pub fn DtypeSelect(
    /// Element id and `data-testid` of the `<select>`.
    id: &'static str,
    /// Translation key of the label.
    label_key: &'static str,
    /// Translation key of the "default" choice.
    none_key: &'static str,
    /// Which precision it edits.
    target: DtypeTarget,
) -> impl IntoView {
    let state = use_app();
    // A selector: an edit of anything but this precision (a keystroke in the context length)
    // wakes its one effect, not each option's; an option hears only when it becomes or stops
    // being the choice.
    let current = Selector::new(move || {
        state.scenario.with(|s| match target {
            DtypeTarget::Weights => s.weight_dtype,
            DtypeTarget::Kv => s.kv_dtype,
        })
    });
    let on_change = move |ev: leptos::ev::Event| {
        let d = Dtype::parse(&event_target_value(&ev)).ok();
        state.edit(History::Replace, |s| match target {
            DtypeTarget::Weights => s.weight_dtype = d,
            DtypeTarget::Kv => s.kv_dtype = d,
        });
    };
    view! {
        <div class="field">
            <label for=id>{move || state.tr(label_key)}</label>
            <select id=id data-testid=id on:change=on_change>
                <option value="" selected={
                    let current = current.clone();
                    move || current.selected(&None)
                }>
                    {move || state.tr(none_key)}
                </option>
                {Dtype::ALL
                    .iter()
                    .map(|d| {
                        let d = *d;
                        let current = current.clone();
                        view! {
                            <option value=d.id() selected=move || current.selected(&Some(d))>
                                {d.id()}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
        </div>
    }
}
