//! A labelled decimal input (efficiencies, prices, rates, targets) with its unit.

use crate::core::base::fill;
use crate::core::base::fmt_sig;
use crate::core::base::tr;
use crate::core::scenario::parse_f64_range;
use crate::core::scenario::NoticeKind;
use crate::ui::state::use_app;
use leptos::prelude::*;

/// A number as typed back into the field: "0" for zero, whole numbers grouped, else
/// significant digits (never an exponent for the ranges the views use).
fn show(v: f64) -> String {
    if v == 0.0 {
        "0".to_string()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() < 0.01 {
        format!("{v}")
    } else {
        fmt_sig(v)
    }
}

/// A labelled decimal field. A valid number in `range` is committed at once; anything else
/// shows a message beside the field and commits nothing, so the last good result stays.
#[component]
pub fn FloatField(
    /// Element id and `data-testid` of the input.
    #[prop(into)]
    id: String,
    /// Translation key of the label.
    label_key: &'static str,
    /// Translation key of the unit shown after the input.
    unit_key: &'static str,
    /// The current value.
    #[prop(into)]
    value: Signal<f64>,
    /// Accepted range, inclusive.
    range: (f64, f64),
    /// Called with each valid value.
    #[prop(into)]
    on_commit: Callback<f64>,
) -> impl IntoView {
    let state = use_app();
    let raw: RwSignal<Option<String>> = RwSignal::new(None);
    let error: RwSignal<Option<NoticeKind>> = RwSignal::new(None);
    let on_input = move |ev: leptos::ev::Event| {
        let t = event_target_value(&ev);
        match parse_f64_range(&t, range) {
            Ok(v) => {
                error.set(None);
                on_commit.run(v);
            }
            Err(k) => error.set(Some(k)),
        }
        raw.set(Some(t));
    };
    let on_change = move |_| {
        if error.get_untracked().is_none() {
            raw.set(None);
        }
    };
    let message = move || {
        let lang = state.lang.get();
        error.get().map(|e| match e {
            NoticeKind::OutOfRange => fill(
                tr(lang, "err_range"),
                &[("min", &show(range.0)), ("max", &show(range.1))],
            ),
            _ => tr(lang, "view_err_decimal").to_string(),
        })
    };
    let err_id = format!("{id}-error");
    let err_id2 = err_id.clone();
    let err_testid = err_id.clone();
    let (id_for, id_input, id_test) = (id.clone(), id.clone(), id);
    view! {
        <div class="field float-field">
            <label for=id_for>{move || state.tr(label_key)}</label>
            <div class="with-unit">
                <input
                    id=id_input
                    data-testid=id_test
                    type="text"
                    inputmode="decimal"
                    autocomplete="off"
                    aria-invalid=move || error.with(|e| e.is_some()).to_string()
                    aria-describedby=err_id
                    prop:value=move || raw.get().unwrap_or_else(|| show(value.get()))
                    on:input=on_input
                    on:change=on_change
                />
                <span class="unit">{move || state.tr(unit_key)}</span>
            </div>
            {move || message().map(|m| view! {
                <p class="field-error" role="alert" id=err_id2.clone() data-testid=err_testid.clone()>
                    {m}
                </p>
            })}
        </div>
    }
}
