//! The embeds' input strip: the few inputs that drive one widget (model, first GPU, lengths,
//! precisions), compact enough for a 640 px course frame. Edits write the scenario and the URL
//! as on the full page. Hidden with `embed_inputs=0`.

use crate::core::scenario::{limits, EmbedWidget};
use crate::ui::dtype_select::{DtypeSelect, DtypeTarget};
use crate::ui::gpu_select::GpuSelect;
use crate::ui::number_field::NumberField;
use crate::ui::preset_select::PresetSelect;
use crate::ui::state::{use_app, History};
use leptos::prelude::*;

/// One input of the strip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StripInput {
    /// The preset model.
    Model,
    /// The first compared GPU.
    Gpu,
    /// Tokens per request.
    Context,
    /// Concurrent requests.
    Concurrency,
    /// Weight precision.
    WeightDtype,
    /// KV-cache precision.
    KvDtype,
    /// Prompt tokens (latency).
    InputLen,
    /// Output tokens (latency).
    OutputLen,
    /// Sequences decoded together (latency).
    Batch,
}

/// The inputs that drive each widget, in the order shown. The roofline, matmul and planner
/// widgets carry their own controls; the strip adds only what they do not have.
pub fn inputs_of(w: EmbedWidget) -> &'static [StripInput] {
    use StripInput as I;
    match w {
        EmbedWidget::Memory => &[
            I::Model,
            I::Gpu,
            I::Context,
            I::Concurrency,
            I::WeightDtype,
            I::KvDtype,
        ],
        EmbedWidget::Kv => &[I::Model, I::Gpu, I::Context, I::Concurrency, I::KvDtype],
        EmbedWidget::Batch => &[I::Model, I::Gpu, I::Context, I::WeightDtype, I::KvDtype],
        EmbedWidget::Cost => &[I::Model, I::Gpu, I::Context, I::Concurrency],
        EmbedWidget::Latency => &[I::Model, I::Gpu, I::Batch, I::InputLen, I::OutputLen],
        EmbedWidget::Roofline | EmbedWidget::Matmul => &[I::Model, I::Gpu],
        EmbedWidget::Planner => &[I::Model],
    }
}

/// One input, built from the shared input components (ids prefixed `embed-`, so they never
/// clash with the full page's).
fn one(i: StripInput) -> AnyView {
    let state = use_app();
    let count = |f: fn(&crate::core::scenario::Scenario) -> u64| {
        Signal::derive(move || state.scenario.with(f))
    };
    match i {
        StripInput::Model => {
            view! { <div class="field"><PresetSelect id="strip-model" /></div> }.into_any()
        }
        StripInput::Gpu => view! { <GpuSelect id="strip-gpu" /> }.into_any(),
        StripInput::Context => view! {
            <NumberField
                id="strip-ctx"
                label_key="wl_context"
                unit_key="unit_tokens"
                value=count(|s| s.context_len)
                range=limits::CONTEXT_LEN
                on_commit=move |n| state.edit(History::Replace, |s| s.context_len = n)
            />
        }
        .into_any(),
        StripInput::Concurrency => view! {
            <NumberField
                id="strip-n"
                label_key="wl_concurrency"
                unit_key="unit_requests"
                value=count(|s| s.concurrency)
                range=limits::CONCURRENCY
                on_commit=move |n| state.edit(History::Replace, |s| s.concurrency = n)
            />
        }
        .into_any(),
        StripInput::WeightDtype => view! {
            <DtypeSelect id="strip-weight-dtype" label_key="wl_weight_dtype" none_key="wl_checkpoint" target=DtypeTarget::Weights />
        }
        .into_any(),
        StripInput::KvDtype => view! {
            <DtypeSelect id="strip-kv-dtype" label_key="wl_kv_dtype" none_key="wl_model_default" target=DtypeTarget::Kv />
        }
        .into_any(),
        StripInput::InputLen => view! {
            <NumberField
                id="strip-in"
                label_key="view_plan_input_len"
                unit_key="view_unit_tokens"
                value=count(|s| s.perf.input_len)
                range=limits::PERF_LEN
                on_commit=move |n| state.edit(History::Replace, |s| s.perf.input_len = n)
            />
        }
        .into_any(),
        StripInput::OutputLen => view! {
            <NumberField
                id="strip-out"
                label_key="view_plan_output_len"
                unit_key="view_unit_tokens"
                value=count(|s| s.perf.output_len)
                range=limits::PERF_LEN
                on_commit=move |n| state.edit(History::Replace, |s| s.perf.output_len = n)
            />
        }
        .into_any(),
        StripInput::Batch => view! {
            <NumberField
                id="strip-batch"
                label_key="embed_batch"
                unit_key="unit_requests"
                value=count(|s| s.perf.batch)
                range=limits::BATCH
                on_commit=move |n| state.edit(History::Replace, |s| s.perf.batch = n)
            />
        }
        .into_any(),
    }
}

/// The input strip of one embedded widget.
#[component]
pub fn EmbedInputs(
    /// The widget whose inputs are shown.
    widget: EmbedWidget,
) -> impl IntoView {
    let state = use_app();
    view! {
        <section
            class="input-strip"
            data-testid="input-strip"
            aria-label=move || state.tr("embed_inputs_label")
        >
            {inputs_of(widget).iter().map(|i| one(*i)).collect_view()}
        </section>
    }
}
