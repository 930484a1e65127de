//! A compact GPU select for the embeds' input strip: it swaps the first compared GPU for
//! another catalog accelerator (the full page's picker searches and compares up to four).

use crate::core::hardware::Catalog;
use crate::core::scenario::GpuChoice;
use crate::ui::state::{use_app, History};
use leptos::prelude::*;

/// Label and `<select>` of the catalog's accelerators, showing the first compared GPU.
#[component]
pub fn GpuSelect(
    /// Element id and `data-testid` of the `<select>`.
    id: &'static str,
) -> impl IntoView {
    let state = use_app();
    let first = move || state.scenario.with(|s| s.gpus.first().cloned());
    let current_id = move || match first() {
        Some(GpuChoice::Catalog(id)) => id,
        _ => String::new(),
    };
    let on_change = move |ev: leptos::ev::Event| {
        let id = event_target_value(&ev);
        if Catalog::builtin().get(&id).is_ok() {
            state.edit(History::Push, |s| s.set_first_gpu(&id));
        }
    };
    // A custom first GPU is not in the catalog: shown as a choice of its own.
    let custom = move || match first() {
        Some(GpuChoice::Custom(c)) => {
            Some(view! { <option value="" selected=true>{c.name}</option> })
        }
        _ => None,
    };
    view! {
        <div class="field">
            <label for=id>{move || state.tr("embed_gpu")}</label>
            <select id=id data-testid=id prop:value=current_id on:change=on_change>
                {custom}
                {Catalog::builtin()
                    .accelerators
                    .iter()
                    .map(|a| {
                        let aid = a.id.clone();
                        let aid2 = aid.clone();
                        view! {
                            <option value=aid selected=move || current_id() == aid2>
                                {a.name.clone()}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
        </div>
    }
}
