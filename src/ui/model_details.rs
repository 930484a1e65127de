//! The model as the calculator read it: name, architecture, layer count, assumption ledger.

use crate::core::base::Lang;
use crate::core::model::preset;
use crate::core::model::{LedgerSource, ModelDesc};
use crate::core::scenario::ModelSource;
use crate::ui::state::use_app;
use crate::ui::view_common::model_memo;
use leptos::prelude::*;

/// Name, architecture and the assumption ledger of the last good model. All of it comes from
/// untrusted input and is rendered as text only.
#[component]
pub fn ModelDetails() -> impl IntoView {
    let state = use_app();
    // A preset's display name is nicer than the config's (often missing) `_name_or_path`.
    // Memos: the details are rebuilt when the model (or language) changes, not when a
    // workload number does.
    let preset_name = Memo::new(move |_| {
        state.scenario.with(|s| match &s.model {
            ModelSource::Preset(id) => preset(id).map(|p| p.label()),
            _ => None,
        })
    });
    let model = model_memo(state);
    // The ledger's table is built when the reader first opens it (it starts closed, and its
    // rows are not part of the first answer). A new model or language rebuilds the view below
    // in place: an open ledger stays open and shows the new model's rows.
    let opened = RwSignal::new(false);
    let on_toggle = move |ev: leptos::ev::Event| {
        if crate::ui::view_common::details_opened(&ev) && !opened.get_untracked() {
            opened.set(true);
        }
    };
    move || {
        let lang = state.lang.get();
        let preset = preset_name.get();
        let t = move |k: &str| crate::core::base::tr(lang, k);
        model.with(|m| {
            m.as_ref().map(|m| {
                let warnings = m.warnings.clone();
                view! {
                    <dl class="model-facts">
                        <div>
                            <dt>{t("model_name")}</dt>
                            <dd data-testid="model-name">{preset.clone().unwrap_or_else(|| m.name.clone())}</dd>
                        </div>
                        <div>
                            <dt>{t("model_arch")}</dt>
                            <dd data-testid="model-arch">{m.model_type.clone()}</dd>
                        </div>
                        <div>
                            <dt>{t("model_layers")}</dt>
                            <dd data-testid="model-layers">{m.stated_layers()}</dd>
                        </div>
                    </dl>
                    {(!warnings.is_empty()).then(|| view! {
                        <ul class="model-warnings" aria-label=t("model_warnings")>
                            {warnings.into_iter().map(|w| view! { <li>{w.text(lang)}</li> }).collect_view()}
                        </ul>
                    })}
                    <details class="ledger" data-testid="model-ledger" on:toggle=on_toggle>
                        <summary>{t("model_ledger")}" ("{m.ledger.len()}")"</summary>
                        {move || opened.get().then(|| ledger_table(model, lang))}
                    </details>
                }
            })
        })
    }
}

/// The assumption ledger's table: each field the model was read with, its value and where it
/// came from (a config key, a default, derived). Read once: the enclosing view is rebuilt when
/// the model or the language changes.
fn ledger_table(model: Memo<Option<ModelDesc>>, lang: Lang) -> impl IntoView {
    let t = move |k: &str| crate::core::base::tr(lang, k);
    let rows = model.with_untracked(|m| {
        m.as_ref().map_or_else(Vec::new, |m| {
            m.ledger
                .iter()
                .map(|e| {
                    let (kind, detail) = match &e.source {
                        LedgerSource::Key(k) => (t("ledger_key"), k.clone()),
                        LedgerSource::Default(w) => (t("ledger_default"), w.text(lang)),
                        LedgerSource::Derived(h) => (t("ledger_derived"), h.text(lang)),
                        LedgerSource::ClassDefault(c) => (t("ledger_class_default"), c.text(lang)),
                    };
                    view! {
                        <tr>
                            <td><code>{e.field.clone()}</code></td>
                            <td>{e.value.clone()}</td>
                            <td><span class="tag">{kind}</span>" "{detail}</td>
                        </tr>
                    }
                })
                .collect::<Vec<_>>()
        })
    });
    view! {
        <div class="table-scroll" tabindex="0"><table>
            <thead>
                <tr>
                    <th scope="col">{t("model_ledger_field")}</th>
                    <th scope="col">{t("model_ledger_value")}</th>
                    <th scope="col">{t("model_ledger_source")}</th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table></div>
    }
}
