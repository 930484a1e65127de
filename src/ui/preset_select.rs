//! The preset-model select: a label and a `<select>` over the built-in presets, shared by the
//! model panel and the embeds' input strip.

use crate::core::model::{all_presets, preset};
use crate::core::scenario::ModelSource;
use crate::ui::state::{use_app, History};
use leptos::prelude::*;

/// Label and select of the preset models; choosing one sets the scenario's model (a history
/// entry, so Back undoes it). Shows no choice while the model is not a preset.
#[component]
pub fn PresetSelect(
    /// Element id and `data-testid` of the `<select>`.
    id: &'static str,
    /// Called after a preset was chosen (e.g. to clear an error shown beside it).
    #[prop(optional, into)]
    on_pick: Option<Callback<()>>,
) -> impl IntoView {
    let state = use_app();
    // A selector: an edit of anything but the model (a keystroke in the context length) wakes
    // its one effect, not each option's (29 of them, each reading the scenario); an option
    // hears only when it becomes or stops being the choice.
    let preset_value = Memo::new(move |_| {
        state.scenario.with(|s| match &s.model {
            ModelSource::Preset(id) => id.clone(),
            _ => String::new(),
        })
    });
    let chosen = Selector::new(move || preset_value.get());
    let on_change = move |ev: leptos::ev::Event| {
        let id = event_target_value(&ev);
        if let Some(p) = preset(&id) {
            if let Some(cb) = on_pick {
                cb.run(());
            }
            state.edit(History::Push, |s| {
                s.model = ModelSource::Preset(p.id.clone())
            });
        }
    };
    view! {
        <label for=id>{move || state.tr("model_preset_label")}</label>
        <select id=id data-testid=id prop:value=move || preset_value.get() on:change=on_change>
            {all_presets()
                .iter()
                .map(|p| {
                    let id = p.id.clone();
                    let chosen = chosen.clone();
                    let id2 = id.clone();
                    view! {
                        <option value=id selected=move || chosen.selected(&id2)>
                            {p.label()}
                        </option>
                    }
                })
                .collect_view()}
        </select>
    }
}
