//! The workload panel: context length, concurrency, precisions and the budget rule.

use crate::core::base::fill;
use crate::core::calc::{DEFAULT_BLOCK_SIZE, DEFAULT_GPU_MEMORY_UTILIZATION};
use crate::core::present::{CONCURRENCY_SLIDER_LOG2, CONTEXT_SLIDER_LOG2};
use crate::core::scenario::{limits, BudgetRule};
use crate::ui::dtype_select::{DtypeSelect, DtypeTarget};
use crate::ui::number_field::NumberField;
use crate::ui::state::{use_app, AppState, History};
use leptos::prelude::*;

/// vLLM block sizes offered.
const BLOCK_SIZES: &[u32] = &[1, 8, 16, 32, 64, 128];

/// The GPU memory utilization of the scenario's budget rule (vLLM's default under the textbook
/// rule).
fn budget_gmu(state: AppState) -> f64 {
    state.scenario.with(|s| match s.budget {
        BudgetRule::Vllm {
            gpu_memory_utilization,
            ..
        } => gpu_memory_utilization,
        BudgetRule::Textbook => DEFAULT_GPU_MEMORY_UTILIZATION,
    })
}

/// The KV block size of the scenario's budget rule (vLLM's default under the textbook rule).
fn budget_block_size(state: AppState) -> u32 {
    state.scenario.with(|s| match s.budget {
        BudgetRule::Vllm { block_size, .. } => block_size,
        BudgetRule::Textbook => DEFAULT_BLOCK_SIZE as u32,
    })
}

/// The workload panel.
#[component]
pub fn Workload() -> impl IntoView {
    let state = use_app();
    // Memos: an edit of one field does not wake the other field's text, slider and value
    // (a derived signal would rerun all of them on every change of the scenario).
    let ctx = Memo::new(move |_| state.scenario.with(|s| s.context_len));
    let conc = Memo::new(move |_| state.scenario.with(|s| s.concurrency));
    // A memo: the vLLM fields are built when the rule changes, not on every scenario change
    // (which would rebuild the fields being typed in).
    let is_vllm = Memo::new(move |_| {
        state
            .scenario
            .with(|s| matches!(s.budget, BudgetRule::Vllm { .. }))
    });
    // Kept here, not in the vLLM fields: what was typed outlives switching the rule.
    let gmu_error = RwSignal::new(false);
    let gmu_raw: RwSignal<Option<String>> = RwSignal::new(None);
    view! {
        <section class="panel workload-panel" aria-labelledby="workload-title">
            <h2 id="workload-title">{move || state.tr("ui_section_workload")}</h2>
            <NumberField
                id="context-len"
                label_key="wl_context"
                unit_key="unit_tokens"
                value=ctx
                range=limits::CONTEXT_LEN
                slider_log2=CONTEXT_SLIDER_LOG2
                on_commit=move |n| state.edit(History::Replace, |s| s.context_len = n)
            />
            <NumberField
                id="concurrency"
                label_key="wl_concurrency"
                unit_key="unit_requests"
                value=conc
                range=limits::CONCURRENCY
                slider_log2=CONCURRENCY_SLIDER_LOG2
                on_commit=move |n| state.edit(History::Replace, |s| s.concurrency = n)
            />
            <div class="field-row">
                <DtypeSelect id="weight-dtype" label_key="wl_weight_dtype" none_key="wl_checkpoint" target=DtypeTarget::Weights />
                <DtypeSelect id="kv-dtype" label_key="wl_kv_dtype" none_key="wl_model_default" target=DtypeTarget::Kv />
            </div>
            <RuleChoice is_vllm=is_vllm />
            {move || is_vllm.get().then(|| view! {
                <div class="field-row">
                    <GmuField error=gmu_error raw=gmu_raw />
                    <BlockSizeField />
                </div>
            })}
        </section>
    }
}

/// The budget rule: the textbook rule or vLLM's.
#[component]
fn RuleChoice(
    /// Whether the scenario's rule is vLLM's.
    is_vllm: Memo<bool>,
) -> impl IntoView {
    let state = use_app();
    let set_rule = move |vllm: bool| {
        state.edit(History::Push, |s| {
            s.budget = if vllm {
                BudgetRule::Vllm {
                    gpu_memory_utilization: DEFAULT_GPU_MEMORY_UTILIZATION,
                    block_size: DEFAULT_BLOCK_SIZE as u32,
                }
            } else {
                BudgetRule::Textbook
            }
        });
    };
    view! {
        <fieldset class="field rule">
            <legend>{move || state.tr("wl_rule")}</legend>
            <label class="radio">
                <input
                    type="radio"
                    name="rule"
                    value="textbook"
                    data-testid="rule-textbook"
                    prop:checked=move || !is_vllm.get()
                    on:change=move |_| set_rule(false)
                />
                {move || state.tr("wl_rule_textbook")}
            </label>
            <label class="radio">
                <input
                    type="radio"
                    name="rule"
                    value="vllm"
                    data-testid="rule-vllm"
                    prop:checked=move || is_vllm.get()
                    on:change=move |_| set_rule(true)
                />
                {move || state.tr("wl_rule_vllm")}
            </label>
        </fieldset>
    }
}

/// vLLM's GPU memory utilization, typed as a decimal, with its range error.
#[component]
fn GmuField(
    /// Whether the text typed is out of range or not a number.
    error: RwSignal<bool>,
    /// The text as typed (`None`: show the scenario's value).
    raw: RwSignal<Option<String>>,
) -> impl IntoView {
    let state = use_app();
    // A memo: the message is rebuilt (and announced) when the field turns bad, not on every
    // keystroke that keeps it bad.
    let bad = Memo::new(move |_| error.get());
    let on_gmu = move |ev: leptos::ev::Event| {
        let t = event_target_value(&ev);
        match crate::core::scenario::parse_f64_in(&t, limits::GMU) {
            Some(u) => {
                error.set(false);
                let block_size = budget_block_size(state);
                state.edit(History::Replace, |s| {
                    s.budget = BudgetRule::Vllm {
                        gpu_memory_utilization: u,
                        block_size,
                    }
                });
            }
            None => error.set(true),
        }
        raw.set(Some(t));
    };
    view! {
        <div class="field">
            <label for="gmu">{move || state.tr("wl_gmu")}</label>
            <input
                id="gmu"
                data-testid="gmu"
                type="text"
                inputmode="decimal"
                aria-invalid=move || error.get().to_string()
                prop:value=move || raw.get().unwrap_or_else(|| budget_gmu(state).to_string())
                on:input=on_gmu
                on:change=move |_| {
                    if error.try_get_untracked() == Some(false) {
                        let _ = raw.try_set(None);
                    }
                }
            />
            {move || bad.get().then(|| view! {
                <p class="field-error" role="alert" data-testid="gmu-error">
                    {move || {
                        fill(
                            state.tr("err_decimal"),
                            &[
                                ("min", &limits::GMU.0.to_string()),
                                ("max", &limits::GMU.1.to_string()),
                            ],
                        )
                    }}
                </p>
            })}
        </div>
    }
}

/// vLLM's KV block size, one of [`BLOCK_SIZES`].
#[component]
fn BlockSizeField() -> impl IntoView {
    let state = use_app();
    let bs = move || budget_block_size(state);
    let on_bs = move |ev: leptos::ev::Event| {
        if let Ok(n) = event_target_value(&ev).parse::<u32>() {
            if BLOCK_SIZES.contains(&n) {
                let u = budget_gmu(state);
                state.edit(History::Replace, |s| {
                    s.budget = BudgetRule::Vllm {
                        gpu_memory_utilization: u,
                        block_size: n,
                    }
                });
            }
        }
    };
    view! {
        <div class="field">
            <label for="block-size">{move || state.tr("wl_block_size")}</label>
            <select id="block-size" data-testid="block-size" on:change=on_bs>
                {BLOCK_SIZES
                    .iter()
                    .map(|n| {
                        let n = *n;
                        view! {
                            <option value=n.to_string() selected=move || bs() == n>
                                {n.to_string()}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
        </div>
    }
}
