//! "Show the math": a derivation rendered as formula, substituted values, result and inputs.

use crate::core::base::{has, tr, Lang};
use crate::core::base::{Derivation, Source};
use crate::ui::state::use_app;
use crate::ui::view_common::display_if;
use leptos::prelude::*;
use std::cell::RefCell;

thread_local! {
    /// Test ids of the panels the user opened: the results are re-rendered when the scenario
    /// changes, and an open panel should stay open (a teacher moving a slider keeps the math).
    static OPEN: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

fn is_open(id: &str) -> bool {
    OPEN.with(|o| {
        o.try_borrow()
            .map(|s| s.iter().any(|x| x == id))
            .unwrap_or(false)
    })
}

fn set_open(id: &str, open: bool) {
    OPEN.with(|o| {
        if let Ok(mut s) = o.try_borrow_mut() {
            // A handful of panels at most: a vector is enough, and keeps std's hashing code
            // out of the wasm.
            s.retain(|x| x != id);
            if open {
                s.push(id.to_string());
            }
        }
    });
}

/// A translation when the key exists, else the text itself (derivations from other layers
/// may carry keys not yet in the table, or plain text; a term's unit is a key such as
/// `unit_tokens` or a symbol such as `GB/s`).
fn tr_or(lang: Lang, key: &str) -> String {
    if has(key) {
        tr(lang, key).to_string()
    } else {
        key.to_string()
    }
}

/// The provenance of a value, in words.
fn source_text(lang: Lang, s: &Source) -> (String, String) {
    let (k, d) = match s {
        Source::ConfigKey(d) => ("src_config_key", d),
        Source::Default(d) => ("src_default", d),
        Source::Derived(d) => ("src_derived", d),
        Source::Catalog(d) => ("src_catalog", d),
        Source::User(d) => ("src_user", d),
    };
    (tr(lang, k).to_string(), tr_or(lang, d))
}

/// A collapsible "Show the math" panel for one derivation, in the current language.
#[component]
pub fn MathPanel(
    /// The derivation to show (`Some(value)`), or a signal of it when the panel stays while
    /// the numbers change: the panel is then not rebuilt, and an open body updates in place.
    /// Nothing is shown while it is `None`.
    #[prop(into)]
    derivation: Signal<Option<Derivation>>,
    /// `data-testid` of the panel (`math-<quantity>`).
    #[prop(into)]
    testid: String,
    /// Whether the panel starts open.
    #[prop(optional)]
    open: bool,
    /// Translation key of what the panel derives, after "Show the math" (when a view has
    /// several panels side by side).
    #[prop(optional)]
    label: Option<&'static str>,
) -> impl IntoView {
    let state = use_app();
    let d = derivation;
    let present = Memo::new(move |_| d.with(Option::is_some));
    let open = open || is_open(&testid);
    // The body is built only while the panel is open: the results are rebuilt on every
    // change, and most panels stay closed.
    let shown = RwSignal::new(open);
    let id = testid.clone();
    let on_toggle = move |ev: leptos::ev::Event| {
        let now = crate::ui::view_common::details_opened(&ev);
        set_open(&id, now);
        if now != shown.get_untracked() {
            shown.set(now);
        }
    };
    view! {
        <details
            class="math"
            data-testid=testid
            open=open
            on:toggle=on_toggle
            style:display=move || display_if(present.get())
        >
            <summary>{move || match label {
                Some(k) => format!("{}: {}", state.tr("math_show"), state.tr(k)),
                None => state.tr("math_show").to_string(),
            }}</summary>
            {move || {
                if !shown.get() {
                    return None;
                }
                let lang = state.lang.get();
                d.with(|d| d.as_ref().map(|d| {
                    let terms = d
                        .terms
                        .iter()
                        .map(|t| {
                            let (kind, detail) = source_text(lang, &t.source);
                            view! {
                                <tr>
                                    <td><code>{t.symbol.clone()}</code></td>
                                    <td>{tr_or(lang, &t.name_key)}</td>
                                    <td class="num">{format!("{} {}", t.value, tr_or(lang, &t.unit))}</td>
                                    <td><span class="tag">{kind}</span>" "{detail}</td>
                                </tr>
                            }
                        })
                        .collect_view();
                    let notes = d
                        .notes
                        .iter()
                        .map(|n| view! { <li>{tr_or(lang, n)}</li> })
                        .collect_view();
                    view! {
                        <div class="math-body">
                            <p class="math-title">{tr_or(lang, &d.title_key)}</p>
                            <dl>
                                <dt>{tr(lang, "math_formula")}</dt>
                                <dd><code>{d.formula.clone()}</code></dd>
                                <dt>{tr(lang, "math_substituted")}</dt>
                                <dd><code>{d.substituted.clone()}</code></dd>
                                <dt>{tr(lang, "math_result")}</dt>
                                <dd><strong>{d.result_text(lang)}</strong></dd>
                            </dl>
                            {(!d.terms.is_empty()).then(|| view! {
                                <div class="table-scroll" tabindex="0"><table class="terms">
                                    <caption>{tr(lang, "math_terms")}</caption>
                                    <tbody>{terms}</tbody>
                                </table></div>
                            })}
                            {(!d.notes.is_empty()).then(|| view! { <ul class="notes">{notes}</ul> })}
                        </div>
                    }
                }))
            }}
        </details>
    }
}
