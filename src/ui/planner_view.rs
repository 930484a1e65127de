//! The capacity planner: traffic (rate, peak multiplier; prompt and output lengths
//! from the workload) and latency targets in, the options per compared GPU and TP degree
//! ranked by cost at the peak with the reason each one loses, cost against load, and what
//! loading a replica and offloading weights or the KV cache cost; beside the analytic replica
//! counts, the best option's counts on simulated P99s (`ui::planner_sim_view`, computed in the
//! serving simulator's worker), and the search over every engine, shape and layout
//! (`ui::plan_search_view`, in the worker too). Inputs live in the URL.

use crate::core::base::CalcError;
use crate::core::base::Lang;
use crate::core::calc::PlanOption;
use crate::core::hardware::Catalog;
use crate::core::present::Section;
use crate::core::present::{
    planner_gpus_per_node, planner_view, PlanCostChart, PlanLoad, PlannerView as ViewData,
};
use crate::core::scenario::limits;
use crate::core::scenario::PlanField;
use crate::ui::chart_canvas::ChartCanvas;
use crate::ui::explanation::Explanation;
use crate::ui::float_field::FloatField;
use crate::ui::in_view::{gated_memo, section_in_view};
use crate::ui::largest_model::LargestModel;
use crate::ui::number_field::NumberField;
use crate::ui::plan_search_view::PlanSearch;
use crate::ui::planner_sim_view::PlannerSim;
use crate::ui::state::{use_app, AppState, History};
use crate::ui::view_common::{fmt_ms, fmt_num, fmt_usd, is_dark, model_memo, num_symbols};
use leptos::prelude::*;

/// The planner view.
#[component]
pub fn PlannerView() -> impl IntoView {
    let state = use_app();
    let model = model_memo(state);
    // The planner reads only these fields of the scenario (`core::views::planner_view`:
    // views but the serving section's and the matmul explorer's inputs, gpus, prompt/output
    // lengths, precisions); keeping the rest at their defaults means a context, concurrency or
    // serving-input change doesn't rerun its binary searches over the batch (a serving input
    // reran them in the task that sends the worker its job: ~50 ms, bench/sim_trace.mjs).
    let plan_scenario = Memo::new(move |_| {
        state.reported.with(|s| {
            let d = crate::core::scenario::Scenario::default();
            crate::core::scenario::Scenario {
                gpus: s.gpus.clone(),
                weight_dtype: s.weight_dtype,
                kv_dtype: s.kv_dtype,
                perf: crate::core::scenario::PerfInputs {
                    input_len: s.perf.input_len,
                    output_len: s.perf.output_len,
                    ..d.perf
                },
                views: crate::core::scenario::ViewInputs {
                    eff: s.views.eff,
                    plan: s.views.plan,
                    prices: s.views.prices.clone(),
                    ..d.views
                },
                ..d
            }
        })
    });
    // Computed only while the section is on screen (ui::in_view).
    let visible = section_in_view();
    let computed: Memo<Option<ViewData>> = gated_memo(visible, move || {
        let lang = state.lang.get();
        model.with(|m| {
            m.as_ref()
                .map(|m| plan_scenario.with(|s| planner_view(m, s, Catalog::builtin(), lang)))
        })
    });
    let chart: Memo<PlanCostChart> = Memo::new(move |_| {
        computed.with(|c| {
            c.as_ref()
                .map(|v| v.chart.clone())
                .unwrap_or_else(|| PlanCostChart {
                    series: Vec::new(),
                    avg_rate: 0.0,
                    peak_rate: 0.0,
                    x_title: String::new(),
                    y_title: String::new(),
                    avg_label: String::new(),
                    peak_label: String::new(),
                    empty_label: state.tr("chart_no_data").to_string(),
                })
        })
    });
    let error = move || -> Option<String> {
        computed.with(|c| {
            c.as_ref()
                .and_then(|v| v.error.as_ref())
                .map(|e: &CalcError| e.message(state.lang.get()))
        })
    };
    let left_out = move || {
        computed.with(|c| {
            c.as_ref()
                .map(|v| v.left_out.join(", "))
                .unwrap_or_default()
        })
    };
    let t = move |k: &'static str| move || state.tr(k);
    let dark = is_dark(state);
    view! {
        <section class="panel view planner-view" aria-labelledby="planner-title" data-testid="planner-view">
            <h2 id="planner-title">{t("view_plan_title")}</h2>
            <p class="explain">{t("view_plan_explain")}</p>
            <p class="explain" data-testid="plan-ttft-model">{t("view_plan_ttft_model")}</p>
            <Explanation section=Section::Planner />
            <PlanControls />
            <p class="muted">{t("view_plan_candidates")}" "{t("view_plan_node_note")}</p>
            {move || {
                let lo = left_out();
                (!lo.is_empty()).then(|| view! { <p class="muted">{state.tr("view_plan_left_out")}" "{lo}</p> })
            }}
            {move || error().map(|m| view! { <p class="calc-error" role="alert" data-testid="plan-error">{m}</p> })}
            <PlanTable computed=computed />
            <PlanNotes computed=computed />
            <PlannerSim />
            <PlanSearch />
            <div class="chart-box">
                <ChartCanvas<PlanCostChart>
                    data=Signal::from(chart)
                    lang=state.lang
                    dark=dark
                    title=Signal::derive(move || state.tr("view_plan_chart_title").to_string())
                    test_id="chart-plan-cost"
                />
                <p class="explain">{t("view_plan_chart_explain")}</p>
            </div>
            <LargestModel scenario=plan_scenario />
            <h3>{t("view_plan_load_title")}</h3>
            <LoadTable computed=computed />
            <p class="explain">{t("view_plan_load_explain")}</p>
        </section>
    }
}

/// The planner's inputs: traffic and targets, the prompt and output lengths, and the GPUs per
/// node (the catalog's, or overridden, with a reset).
#[component]
fn PlanControls() -> impl IntoView {
    let state = use_app();
    let t = move |k: &'static str| move || state.tr(k);
    let fields = PlanField::ALL
        .iter()
        .map(|f| {
            let f = *f;
            view! {
                <FloatField
                    id=format!("plan-{}", f.query_key().trim_start_matches("pl_"))
                    label_key=f.label_key()
                    unit_key=f.unit_key()
                    value=Signal::derive(move || state.scenario.with(|s| f.get(&s.views.plan)))
                    range=f.range()
                    on_commit=move |v: f64| state.edit(History::Replace, |s| f.set(&mut s.views.plan, v))
                />
            }
        })
        .collect_view();
    let node = Signal::derive(move || {
        state
            .scenario
            .with(|s| u64::from(planner_gpus_per_node(s, Catalog::builtin())))
    });
    let node_overridden = Signal::derive(move || {
        state
            .scenario
            .with(|s| s.views.plan.gpus_per_node.is_some())
    });
    let (node_lo, node_hi) = crate::core::calc::GPUS_PER_NODE_RANGE;
    let input_len = Signal::derive(move || state.scenario.with(|s| s.perf.input_len));
    let output_len = Signal::derive(move || state.scenario.with(|s| s.perf.output_len));
    view! {
        <div class="view-controls">
            {fields}
            <NumberField
                id="plan-in"
                label_key="view_plan_input_len"
                unit_key="view_unit_tokens"
                value=input_len
                range=limits::PERF_LEN
                on_commit=move |v: u64| state.edit(History::Replace, |s| s.perf.input_len = v)
            />
            <NumberField
                id="plan-out"
                label_key="view_plan_output_len"
                unit_key="view_unit_tokens"
                value=output_len
                range=limits::PERF_LEN
                on_commit=move |v: u64| state.edit(History::Replace, |s| s.perf.output_len = v)
            />
            <div class="node-field">
                <NumberField
                    id="plan-node"
                    label_key="view_plan_node"
                    unit_key="view_unit_gpus"
                    value=node
                    range=(u64::from(node_lo), u64::from(node_hi))
                    on_commit=move |v: u64| {
                        let n = u32::try_from(v).ok();
                        state.edit(History::Replace, |s| s.views.plan.gpus_per_node = n);
                    }
                />
                {move || node_overridden.get().then(|| view! {
                    <button type="button" class="link" data-testid="plan-node-reset" on:click=move |_| {
                        state.edit(History::Push, |s| s.views.plan.gpus_per_node = None)
                    }>{t("view_plan_node_reset")}</button>
                })}
            </div>
        </div>
    }
}

/// The plan's options ranked by cost at the peak, the best marked, each other with the reason
/// it loses.
#[component]
fn PlanTable(
    /// The planner's results (`None` without a model).
    computed: Memo<Option<ViewData>>,
) -> impl IntoView {
    let state = use_app();
    let t = move |k: &'static str| move || state.tr(k);
    let options = move || -> Vec<(usize, bool, PlanOption)> {
        computed.with(|c| {
            c.as_ref()
                .and_then(|v| v.plan.as_ref())
                .map(|p| {
                    p.options
                        .iter()
                        .enumerate()
                        .map(|(i, o)| (i, p.best == Some(i), o.clone()))
                        .collect()
                })
                .unwrap_or_default()
        })
    };
    view! {
        <div class="table-wrap" tabindex="0" role="region" aria-label={t("view_plan_title")}>
            <table class="plan-table" data-testid="plan-table">
                <thead>
                    <tr>
                        <th scope="col">{t("chart_gpu")}</th>
                        <th scope="col">{t("view_plan_batch")}</th>
                        <th scope="col">{t("perf_ttft")}</th>
                        <th scope="col">{t("perf_tpot")}</th>
                        <th scope="col">{t("plan_requests_per_replica")}</th>
                        <th scope="col">{t("view_plan_replicas")}</th>
                        <th scope="col">{t("view_plan_gpus_peak")}</th>
                        <th scope="col">{t("plan_cost_peak")}</th>
                        <th scope="col">{t("view_plan_cost_month")}</th>
                        <th scope="col">{t("view_plan_reason")}</th>
                    </tr>
                </thead>
                <tbody>
                    {move || {
                        options()
                            .into_iter()
                            .map(|(i, best, o)| plan_row(state, i, best, o))
                            .collect_view()
                    }}
                </tbody>
            </table>
        </div>
    }
}

/// One option of the plan as a table row: `i` is its rank, `best` whether it is chosen.
fn plan_row(state: AppState, i: usize, best: bool, o: PlanOption) -> impl IntoView {
    let reason = o.reason.map(|r| r.label_key());
    // Times that are only lower bounds (no published compute peak) carry "≥" with the reason.
    let lower = o.latency_lower_bound.is_some();
    let bound = move || {
        lower.then(|| view! { <abbr class="bad" data-testid="plan-lower-bound" title=move || state.tr("view_plan_lower_bound")>"≥ "</abbr> })
    };
    view! {
        <tr data-testid=format!("plan-row-{}-tp{}", o.gpu, o.tp) class:best=best data-rank=i.to_string() data-lower-bound=lower.to_string()>
            <th scope="row">{format!("{} × {}", o.gpu_name, o.tp)}</th>
            <td class="num">{num_symbols(state).group(o.batch)}" / "{num_symbols(state).group(o.max_batch_memory)}</td>
            <td class="num">{bound()}{fmt_ms(num_symbols(state), o.ttft.ms())}</td>
            <td class="num">{bound()}{fmt_ms(num_symbols(state), o.tpot.ms())}</td>
            <td class="num">{fmt_num(num_symbols(state), o.requests_per_s_per_replica)}</td>
            <td class="num">{o.replicas_avg.to_string()}" → "{o.replicas_peak.to_string()}</td>
            <td class="num">{num_symbols(state).group(o.gpus_peak)}</td>
            <td class="num">{fmt_usd(o.cost_per_hour_peak)}</td>
            <td class="num">{fmt_usd(o.cost_per_month_peak)}</td>
            <td data-testid="plan-reason">
                {match reason {
                    Some(k) => view! { <span>{move || state.tr(k)}</span> }.into_any(),
                    None if lower => view! {
                        <strong class="good">{move || state.tr("view_plan_best")}</strong>
                        " "<small class="bad" data-testid="plan-best-lower-bound">{move || state.tr("view_plan_lower_bound")}</small>
                    }.into_any(),
                    None => view! { <strong class="good">{move || state.tr("view_plan_best")}</strong> }.into_any(),
                }}
            </td>
        </tr>
    }
}

/// The plan's notes (skipped TP degrees, the cold start of one more replica), as the CLI
/// prints them, in the page's language; nothing when there are none.
#[component]
fn PlanNotes(
    /// The planner's results (`None` without a model).
    computed: Memo<Option<ViewData>>,
) -> impl IntoView {
    let state = use_app();
    let notes = move || -> Vec<String> {
        let lang = state.lang.get();
        computed.with(|c| {
            c.as_ref()
                .and_then(|v| v.plan.as_ref())
                .map(|p| p.notes.iter().map(|n| n.text(lang)).collect())
                .unwrap_or_default()
        })
    };
    view! {
        {move || {
            let notes = notes();
            (!notes.is_empty()).then(|| view! {
                <ul class="plan-notes muted" data-testid="plan-notes">
                    {notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}
                </ul>
            })
        }}
    }
}

/// Loading a replica and offloading weights or the KV cache, per candidate GPU.
#[component]
fn LoadTable(
    /// The planner's results (`None` without a model).
    computed: Memo<Option<ViewData>>,
) -> impl IntoView {
    let state = use_app();
    let t = move |k: &'static str| move || state.tr(k);
    let loads = move || {
        let lang = state.lang.get();
        computed.with(|c| {
            c.as_ref().map(|v| {
                v.loads
                    .iter()
                    .map(|l| load_row(state, lang, l))
                    .collect_view()
            })
        })
    };
    view! {
        <div class="table-wrap" tabindex="0" role="region" aria-label={t("view_plan_load_title")}>
            <table data-testid="plan-load-table">
                <thead>
                    <tr>
                        <th scope="col">{t("chart_gpu")}</th>
                        <th scope="col">{t("view_plan_load_s")}</th>
                        <th scope="col">{t("view_plan_slowest")}</th>
                        <th scope="col">{t("view_plan_cold_s")}</th>
                        <th scope="col">{t("view_plan_tpot_gpu")}</th>
                        <th scope="col">{t("offload_weights_tpot")}</th>
                        <th scope="col">{t("offload_kv_tpot")}</th>
                    </tr>
                </thead>
                <tbody>{loads}</tbody>
            </table>
        </div>
    }
}

/// One candidate's load time, slowest stage, cold start and decode with offloading, as a
/// table row (an error in the first cell of its half when a figure cannot be computed).
fn load_row(state: AppState, lang: Lang, l: &PlanLoad) -> impl IntoView {
    let (load, cold, slow) = match &l.load {
        Ok(r) => (
            fmt_num(num_symbols(state), r.load.0),
            fmt_num(num_symbols(state), r.cold_start.0),
            match r.slowest {
                crate::core::calc::StageKind::Storage => state.tr("load_storage_time"),
                crate::core::calc::StageKind::HostToGpu => state.tr("load_host_to_gpu_time"),
            }
            .to_string(),
        ),
        Err(e) => (e.message(lang), String::new(), String::new()),
    };
    let (on_gpu, w_off, kv_off) = match &l.offload {
        Ok(o) => (
            fmt_ms(num_symbols(state), o.tpot_on_gpu.ms()),
            format!(
                "{} (×{})",
                fmt_ms(num_symbols(state), o.tpot_weights_offloaded.ms()),
                fmt_num(num_symbols(state), o.slowdown_weights)
            ),
            format!(
                "{} (×{})",
                fmt_ms(num_symbols(state), o.tpot_kv_offloaded.ms()),
                fmt_num(num_symbols(state), o.slowdown_kv)
            ),
        ),
        Err(e) => (e.message(lang), String::new(), String::new()),
    };
    view! {
        <tr>
            <th scope="row">{l.name.clone()}</th>
            <td class="num">{load}</td>
            <td>{slow}</td>
            <td class="num">{cold}</td>
            <td class="num">{on_gpu}</td>
            <td class="num">{w_off}</td>
            <td class="num">{kv_off}</td>
        </tr>
    }
}
