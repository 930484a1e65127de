//! The custom-accelerator form: name, memory, bandwidth, peak, price.
//!
//! Its fields come with the late module (`ui::late::LatePart` "custom-gpu"): the
//! shell holds only the collapsed `<details>` ([`CustomGpuForm`]); opened before the late module
//! is there, it says the form is loading.

use crate::core::hardware::{CustomAccelerator, CustomFigure, NAME_MAX_CHARS};
use crate::core::scenario::{GpuChoice, MAX_GPUS};
use crate::ui::state::{use_app, History};
use leptos::prelude::*;

/// One text field of the form: (the figure it sets, test id and input id, label key, unit key).
const FIELDS: [(CustomFigure, &str, &str, &str); 4] = [
    (
        CustomFigure::MemoryGib,
        "custom-memory",
        "gpu_custom_memory",
        "unit_gib",
    ),
    (
        CustomFigure::BandwidthGbps,
        "custom-bandwidth",
        "gpu_custom_bandwidth",
        "unit_gbps",
    ),
    (
        CustomFigure::Bf16Tflops,
        "custom-tflops",
        "gpu_custom_tflops",
        "unit_tflops",
    ),
    (
        CustomFigure::PriceUsdPerHour,
        "custom-price",
        "gpu_custom_price",
        "unit_usd_h",
    ),
];

/// The collapsible form in the GPU panel: its summary, and the fields ([`CustomGpuFields`]) when
/// the late module brings them.
#[component]
pub fn CustomGpuForm() -> impl IntoView {
    let state = use_app();
    view! {
        <details class="custom-gpu" data-testid="custom-gpu-form">
            <summary>{move || state.tr("gpu_custom_title")}</summary>
            <crate::ui::late::LatePart name=crate::core::present::LatePiece::CustomGpu>
                <p class="muted">{move || state.tr("late_part_loading")}</p>
            </crate::ui::late::LatePart>
        </details>
    }
}

/// The form that adds a user-described accelerator (in the late module). Values are checked by
/// [`CustomAccelerator::validate`]; its one-sentence error names the field.
#[component]
pub fn CustomGpuFields() -> impl IntoView {
    let state = use_app();
    let name = RwSignal::new(String::from("My GPU"));
    let values: [RwSignal<String>; 4] = [
        RwSignal::new(String::from("24")),
        RwSignal::new(String::from("600")),
        RwSignal::new(String::from("125")),
        RwSignal::new(String::new()),
    ];
    let error: RwSignal<Option<String>> = RwSignal::new(None);

    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let lang = state.lang.get_untracked();
        let num = |sig: RwSignal<String>, f: CustomFigure| -> Result<Option<f64>, String> {
            let t = sig.get_untracked();
            let t = t.trim();
            if t.is_empty() {
                return Ok(None);
            }
            t.parse::<f64>().map(Some).map_err(|_| {
                crate::core::base::CalcError::BadValue {
                    key: f.key().to_string(),
                    found: crate::core::base::Phrase::verbatim(format!(
                        "\"{}\"",
                        t.chars().take(20).collect::<String>()
                    )),
                    expected: crate::core::base::Phrase::tr("exp_a_number"),
                }
                .message(lang)
            })
        };
        let built = (|| -> Result<CustomAccelerator, String> {
            // A required figure left empty is refused by validate, naming it.
            let mut c = CustomAccelerator::named(name.get_untracked());
            for ((f, ..), sig) in FIELDS.iter().zip(values) {
                if let Some(v) = num(sig, *f)? {
                    c.set_figure(*f, v);
                }
            }
            c.validate().map_err(|e| e.message(lang))?;
            Ok(c)
        })();
        match built {
            Ok(c) => {
                error.set(None);
                state.edit(History::Push, |s| {
                    if s.gpus.len() < MAX_GPUS {
                        s.gpus.push(GpuChoice::Custom(c));
                    }
                });
            }
            Err(m) => error.set(Some(m)),
        }
    };

    view! {
            <form on:submit=submit novalidate=true>
                <div class="field">
                    <label for="custom-name">{move || state.tr("gpu_custom_name")}</label>
                    <input
                        id="custom-name"
                        data-testid="custom-name"
                        type="text"
                        maxlength=NAME_MAX_CHARS.to_string()
                        prop:value=move || name.get()
                        on:input=move |ev| name.set(event_target_value(&ev))
                    />
                </div>
                {FIELDS
                    .iter()
                    .zip(values)
                    .map(|((_, id, label, unit), sig)| {
                        view! {
                            <div class="field">
                                <label for=*id>{move || state.tr(label)}</label>
                                <div class="with-unit">
                                    <input
                                        id=*id
                                        data-testid=*id
                                        type="text"
                                        inputmode="decimal"
                                        prop:value=move || sig.get()
                                        on:input=move |ev| sig.set(event_target_value(&ev))
                                    />
                                    <span class="unit">{move || state.tr(unit)}</span>
                                </div>
                            </div>
                        }
                    })
                    .collect_view()}
                {move || error.get().map(|m| view! {
                    <p class="field-error" role="alert" data-testid="custom-error">{m}</p>
                })}
                <button
                    type="submit"
                    class="btn"
                    data-testid="custom-add"
                    disabled=move || state.scenario.with(|s| s.gpus.len() >= MAX_GPUS)
                >
                    {move || state.tr("gpu_custom_add")}
                </button>
            </form>
    }
}
