//! A whole-number input with its unit, a typed value and an optional slider.

use crate::core::base::fill;
use crate::core::base::tr;
use crate::core::present::log2_pos;
use crate::core::scenario::parse_count;
use crate::ui::state::use_app;
use crate::ui::view_common::num_symbols;
use leptos::prelude::*;

/// The value a slider position sets: `2^e` for the exponent typed in `text`, `e` clamped to
/// `exp` and the value to `range`; `None` for a position that is not a number or overflows.
pub fn log2_value(text: &str, exp: (u32, u32), range: (u64, u64)) -> Option<u64> {
    let e = text.parse::<u32>().ok()?;
    let n = 1u64.checked_shl(e.clamp(exp.0, exp.1))?;
    Some(n.clamp(range.0, range.1))
}

/// What is wrong with the typed text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldError {
    NotANumber,
    OutOfRange,
}

/// A labelled whole-number field. Typing a valid number commits it at once; nonsense shows a
/// message beside the field and commits nothing, so the last good result stays on screen.
/// The slider (when given) moves in powers of two.
#[component]
pub fn NumberField(
    /// Element id and `data-testid` of the text input.
    id: &'static str,
    /// Translation key of the label.
    label_key: &'static str,
    /// Translation key of the unit shown after the input.
    unit_key: &'static str,
    /// The current value.
    #[prop(into)]
    value: Signal<u64>,
    /// Accepted range, inclusive.
    range: (u64, u64),
    /// Slider bounds as powers of two (exponents), if a slider is wanted.
    #[prop(optional)]
    slider_log2: Option<(u32, u32)>,
    /// Called with each valid value.
    #[prop(into)]
    on_commit: Callback<u64>,
) -> impl IntoView {
    let state = use_app();
    // The text as typed, while it differs from the committed value's text.
    let raw: RwSignal<Option<String>> = RwSignal::new(None);
    let error: RwSignal<Option<FieldError>> = RwSignal::new(None);
    let on_input = move |ev: leptos::ev::Event| {
        let t = event_target_value(&ev);
        match parse_count(&t) {
            Some(n) if n >= range.0 && n <= range.1 => {
                error.set(None);
                on_commit.run(n);
            }
            Some(_) => error.set(Some(FieldError::OutOfRange)),
            None => {
                let numeric = t.trim().chars().any(|c| c.is_ascii_digit())
                    && t.trim()
                        .chars()
                        .all(|c| c.is_ascii_digit() || c == '-' || c == ',');
                error.set(Some(if numeric {
                    FieldError::OutOfRange
                } else {
                    FieldError::NotANumber
                }));
            }
        }
        raw.set(Some(t));
    };
    // `change` also fires when a focused input is removed; by then the signals may be gone.
    let on_change = move |_| {
        if error.try_get_untracked() == Some(None) {
            let _ = raw.try_set(None);
        }
    };
    let slider = slider_log2.map(|(lo, hi)| {
        // A memo: a value that keeps the slider's position (3,072 after 2,048) does not write
        // the same position again.
        let pos = Memo::new(move |_| log2_pos(value.get(), (lo, hi)));
        let on_slide = move |ev: leptos::ev::Event| {
            if let Some(n) = log2_value(&event_target_value(&ev), (lo, hi), range) {
                error.set(None);
                raw.set(None);
                on_commit.run(n);
            }
        };
        view! {
            <input
                type="range"
                class="slider"
                data-testid=format!("{id}-slider")
                min=lo.to_string()
                max=hi.to_string()
                step="1"
                aria-label=move || state.tr(label_key)
                prop:value=move || pos.get().to_string()
                on:input=on_slide
            />
        }
    });
    let message = move || {
        let lang = state.lang.get();
        error.get().map(|e| match e {
            FieldError::NotANumber => tr(lang, "err_not_a_number").to_string(),
            FieldError::OutOfRange => fill(
                tr(lang, "err_range"),
                &[
                    ("min", &num_symbols(state).group(range.0)),
                    ("max", &num_symbols(state).group(range.1)),
                ],
            ),
        })
    };
    // The text shown: what was typed, else the committed value. Written only when the input
    // does not already hold it, so typing a valid number does not write the typed text back
    // (`prop:value` would, on every keystroke: the browser then restyles the field).
    let input_ref = NodeRef::<leptos::html::Input>::new();
    Effect::new(move |_| {
        let text = raw.get().unwrap_or_else(|| value.get().to_string());
        if let Some(el) = input_ref.get() {
            if el.value() != text {
                el.set_value(&text);
            }
        }
    });
    let err_id = format!("{id}-error");
    let err_id2 = err_id.clone();
    view! {
        <div class="field number-field">
            <label for=id>{move || state.tr(label_key)}</label>
            <div class="with-unit">
                <input
                    id=id
                    data-testid=id
                    type="text"
                    inputmode="numeric"
                    autocomplete="off"
                    aria-invalid=move || error.with(|e| e.is_some()).to_string()
                    aria-describedby=err_id
                    node_ref=input_ref
                    on:input=on_input
                    on:change=on_change
                />
                <span class="unit">{move || state.tr(unit_key)}</span>
                <span class="pretty muted">{move || num_symbols(state).group(value.get())}</span>
            </div>
            {slider}
            {move || message().map(|m| view! {
                <p class="field-error" role="alert" id=err_id2.clone() data-testid=format!("{id}-error")>
                    {m}
                </p>
            })}
        </div>
    }
}
