//! The embeds' input strip: the few inputs that drive one widget (model, first GPU, lengths,
//! precisions), compact enough for a 640 px course frame. Edits write the scenario and the URL
//! as on the full page. Hidden with `embed_inputs=0`.

use crate::core::scenario::{limits, EmbedWidget, Scenario};
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
/// A count field of the strip: where it reads and writes the scenario, its limits and labels.
struct CountField {
    id: &'static str,
    label_key: &'static str,
    unit_key: &'static str,
    range: (u64, u64),
    get: fn(&Scenario) -> u64,
    set: fn(&mut Scenario, u64),
}

impl CountField {
    fn view(self) -> AnyView {
        let state = use_app();
        let (get, set) = (self.get, self.set);
        view! {
            <NumberField
                id=self.id
                label_key=self.label_key
                unit_key=self.unit_key
                value=Signal::derive(move || state.scenario.with(get))
                range=self.range
                on_commit=move |n| state.edit(History::Replace, |s| set(s, n))
            />
        }
        .into_any()
    }
}

fn one(i: StripInput) -> AnyView {
    let field = |id, label_key, unit_key, range, get, set| {
        CountField {
            id,
            label_key,
            unit_key,
            range,
            get,
            set,
        }
        .view()
    };
    match i {
        StripInput::Model => {
            view! { <div class="field"><PresetSelect id="strip-model" /></div> }.into_any()
        }
        StripInput::Gpu => view! { <GpuSelect id="strip-gpu" /> }.into_any(),
        StripInput::Context => field("strip-ctx", "wl_context", "unit_tokens", limits::CONTEXT_LEN, |s| s.context_len, |s, n| s.context_len = n),
        StripInput::Concurrency => field("strip-n", "wl_concurrency", "unit_requests", limits::CONCURRENCY, |s| s.concurrency, |s, n| s.concurrency = n),
        StripInput::WeightDtype => view! {
            <DtypeSelect id="strip-weight-dtype" label_key="wl_weight_dtype" none_key="wl_checkpoint" target=DtypeTarget::Weights />
        }
        .into_any(),
        StripInput::KvDtype => view! {
            <DtypeSelect id="strip-kv-dtype" label_key="wl_kv_dtype" none_key="wl_model_default" target=DtypeTarget::Kv />
        }
        .into_any(),
        StripInput::InputLen => field("strip-in", "view_plan_input_len", "view_unit_tokens", limits::PERF_LEN, |s| s.perf.input_len, |s, n| s.perf.input_len = n),
        StripInput::OutputLen => field("strip-out", "view_plan_output_len", "view_unit_tokens", limits::PERF_LEN, |s| s.perf.output_len, |s, n| s.perf.output_len = n),
        StripInput::Batch => field("strip-batch", "embed_batch", "unit_requests", limits::BATCH, |s| s.perf.batch, |s, n| s.perf.batch = n),
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
