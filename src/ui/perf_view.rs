//! The performance model per compared GPU at the scenario's tensor-parallel degree: TTFT,
//! TPOT, tokens/s per user and in total, end-to-end latency (each with the calibration range),
//! what bounds each phase; the editable efficiencies; the latency–throughput chart with the
//! operating point; cost per million output tokens and per request (table and bar chart,
//! prices editable) and tokens per joule at TDP (an upper-bound estimate).

use crate::core::base::fmt_sig;
use crate::core::base::{fill, has, tr, Lang};
use crate::core::calc::{Efficiencies, Limit};
use crate::core::present::Section;
use crate::core::present::{
    cost_bars, cost_rows, custom_efficiencies_note, latency_curves, perf_rows, tp_tables, PerfRow,
    TpTable,
};
use crate::core::present::{CostBars, LatencyThroughput, LtPoint};
use crate::core::scenario::{EffField, Scenario, ViewMode, PRICE_RANGE};
use crate::ui::chart_canvas::ChartCanvas;
use crate::ui::explanation::Explanation;
use crate::ui::float_field::FloatField;
use crate::ui::in_view::{gated_memo, section_in_view};
use crate::ui::math_panel::MathPanel;
use crate::ui::perf_notes::PerfNotes;
use crate::ui::state::{use_app, AppState, History};
use crate::ui::tp_sweep::TpSweep;
use crate::ui::view_common::{
    fmt_ms, fmt_ms_range, fmt_num, fmt_usd, gpus_memo, is_dark, model_memo, num_symbols,
};
use leptos::prelude::*;

/// Which parts of the view to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PerfParts {
    /// Everything (the full page).
    #[default]
    All,
    /// Latency table, efficiencies and the latency–throughput chart (`?embed=latency`).
    Latency,
    /// The cost table and chart (`?embed=cost`).
    Cost,
}

/// A derivation's title in `lang` (the key itself when it is not a translation key).
fn title_of(lang: Lang, key: &str) -> String {
    if has(key) {
        tr(lang, key).to_string()
    } else {
        key.to_string()
    }
}

fn bound_key(b: Limit) -> &'static str {
    match b {
        Limit::Compute => "chart_bound_compute",
        Limit::Memory => "chart_bound_memory",
        Limit::Overhead => "view_perf_bound_overhead",
    }
}

/// The performance view.
/// A copy of `src` with `reset` applied to it: the inputs a computation does not read set to
/// fixed values, so that editing them wakes nothing that reads the copy.
fn scenario_without(src: Memo<Scenario>, reset: fn(&mut Scenario)) -> Memo<Scenario> {
    Memo::new(move |_| {
        src.with(|s| {
            let mut c = s.clone();
            reset(&mut c);
            c
        })
    })
}

#[component]
pub fn PerfView(
    /// Which parts to show (all by default).
    #[prop(optional)]
    parts: PerfParts,
) -> impl IntoView {
    let state = use_app();
    let model = model_memo(state);
    let gpus = gpus_memo(state);
    // Computed only while the section is on screen (ui::in_view).
    let visible = section_in_view();
    // The performance model reads neither the serving section's inputs (`state.reported` has
    // none) nor the matmul explorer's (kept at their defaults here): editing them reruns
    // nothing of this view (a serving input did, in the task that sends the worker its job:
    // bench/sim_trace.mjs).
    let perf_scenario = scenario_without(state.reported, |c| {
        c.views.matmul = Default::default();
    });
    let rows: Memo<Vec<PerfRow>> = gated_memo(visible, move || {
        model.with(|m| {
            m.as_ref()
                .map(|m| perf_scenario.with(|s| gpus.with(|g| perf_rows(m, s, g))))
                .unwrap_or_default()
        })
    });
    // The curves do not depend on the operating batch (only its marker does): compute them
    // at batch 1 and place the marker from the rows, so dragging the batch stays cheap.
    let curve_scenario = scenario_without(perf_scenario, |c| {
        c.view = ViewMode::Full;
        c.lang = None;
        c.perf.batch = 1;
    });
    let base_curves: Memo<LatencyThroughput> = gated_memo(visible, move || {
        model.with(|m| {
            m.as_ref()
                .map(|m| curve_scenario.with(|s| gpus.with(|g| latency_curves(m, s, g))))
                .unwrap_or_default()
        })
    });
    let curves: Memo<LatencyThroughput> = Memo::new(move |_| {
        let mut lt = base_curves.get();
        rows.with(|rows| {
            for (c, r) in lt.curves.iter_mut().zip(rows) {
                c.operating = r
                    .result
                    .as_ref()
                    .ok()
                    .filter(|rep| rep.fits)
                    .and_then(|rep| LtPoint::new(rep.batch, rep.tpot));
            }
        });
        lt
    });
    let crows: Memo<Vec<PerfRow>> = gated_memo(visible, move || {
        model.with(|m| {
            m.as_ref()
                .map(|m| perf_scenario.with(|s| gpus.with(|g| cost_rows(m, s, g))))
                .unwrap_or_default()
        })
    });
    let bars: Memo<CostBars> = Memo::new(move |_| crows.with(|r| cost_bars(r)));
    let tps: Memo<Vec<TpTable>> = gated_memo(visible, move || {
        if parts == PerfParts::Cost {
            return Vec::new();
        }
        model.with(|m| {
            m.as_ref()
                .map(|m| perf_scenario.with(|s| gpus.with(|g| tp_tables(m, s, g))))
                .unwrap_or_default()
        })
    });
    let show_latency = parts != PerfParts::Cost;
    let show_cost = parts != PerfParts::Latency;
    let dark = is_dark(state);
    let t = move |k: &'static str| move || state.tr(k);

    view! {
        <section class="panel view perf-view" aria-labelledby="perf-title" data-testid="perf-view">
            <h2 id="perf-title">{t("view_perf_title")}</h2>
            <p class="explain">{move || {
                state.scenario.with(|s| {
                    fill(
                        state.tr("view_perf_workload"),
                        &[
                            ("batch", &s.perf.batch.to_string()),
                            ("input", &s.perf.input_len.to_string()),
                            ("output", &s.perf.output_len.to_string()),
                            ("tp", &s.tp.to_string()),
                        ],
                    )
                })
            }}</p>
            {move || {
                state
                    .scenario
                    .with(|s| custom_efficiencies_note(s, state.lang.get()))
                    .map(|n| view! { <p class="notice" data-testid="perf-eff-custom">{n}</p> })
            }}
            {show_latency.then(|| view! { <EffFields /> })}
            {show_latency.then(|| view! { <LatencySection rows=rows tps=tps curves=curves dark=dark /> })}
            {show_cost.then(|| view! { <CostSection crows=crows bars=bars dark=dark /> })}
        </section>
    }
}

/// The editable efficiencies of the performance model, with a reset to the defaults.
#[component]
fn EffFields() -> impl IntoView {
    let state = use_app();
    let t = move |k: &'static str| move || state.tr(k);
    let fields = EffField::ALL
        .iter()
        .map(|f| {
            let f = *f;
            view! {
                <FloatField
                    id=format!("eff-{}", f.query_key().trim_start_matches("e_"))
                    label_key=f.label_key()
                    unit_key=f.unit_key()
                    value=Signal::derive(move || state.scenario.with(|s| f.get(&s.views.eff)))
                    range=f.range()
                    on_commit=move |v: f64| state.edit(History::Replace, |s| f.set(&mut s.views.eff, v))
                />
            }
        })
        .collect_view();
    let reset = move |_| state.edit(History::Push, |s| s.views.eff = Efficiencies::default());
    view! {
        <details class="eff-fields" data-testid="perf-efficiencies">
            <summary>{t("view_perf_eff_title")}</summary>
            <p class="explain">{t("view_perf_eff_explain")}</p>
            <div class="view-controls">{fields}</div>
            <button type="button" data-testid="perf-eff-reset" on:click=reset>{t("view_perf_eff_reset")}</button>
        </details>
    }
}

/// The latency table (with each row's notes and math), the TP sweep and the
/// latency–throughput chart.
#[component]
fn LatencySection(
    /// One row per compared GPU.
    rows: Memo<Vec<PerfRow>>,
    /// The TP sweep's tables.
    tps: Memo<Vec<TpTable>>,
    /// The latency–throughput curves with the operating points.
    curves: Memo<LatencyThroughput>,
    /// Whether the dark theme is in effect.
    dark: Signal<bool>,
) -> impl IntoView {
    let state = use_app();
    let t = move |k: &'static str| move || state.tr(k);
    view! {
        <div class="table-wrap" tabindex="0" role="region" aria-label={t("view_perf_title")}>
            <table class="perf-table" data-testid="perf-table">
                <thead>
                    <tr>
                        <th scope="col">{t("chart_gpu")}</th>
                        <th scope="col">{t("perf_ttft")}</th>
                        <th scope="col">{t("perf_tpot")}</th>
                        <th scope="col">{t("perf_tokens_per_s_per_user")}</th>
                        <th scope="col">{t("perf_output_tokens_per_s")}</th>
                        <th scope="col">{t("perf_e2e_latency")}</th>
                        <th scope="col">{t("view_perf_bound")}</th>
                        <th scope="col">{t("view_perf_max_batch")}</th>
                    </tr>
                </thead>
                <tbody>
                    {move || rows.get().into_iter().map(|r| perf_row(state, r)).collect_view()}
                </tbody>
            </table>
        </div>
        <p class="explain">{t("view_perf_range_note")}</p>
        <TpSweep tables=tps />
        <div class="chart-box">
            <ChartCanvas<LatencyThroughput>
                data=Signal::from(curves)
                lang=state.lang
                dark=dark
                title=Signal::derive(move || state.tr("view_perf_latency_title").to_string())
                test_id="chart-latency"
            />
            <p class="explain">{t("view_perf_latency_explain")}</p>
            <Explanation section=Section::Latency />
        </div>
    }
}

/// One GPU's latency row and the row of its notes and math below it (or its error).
fn perf_row(state: AppState, r: PerfRow) -> AnyView {
    let t = move |k: &'static str| move || state.tr(k);
    let testid = format!("perf-row-{}", r.key);
    let name = format!("{} × {}", r.name, r.tp);
    match r.result {
        Ok(rep) => {
            let (ttft_r, tpot_r, e2e_r) = (r.ttft_range_ms, r.tpot_range_ms, r.e2e_range_ms);
            let pre = bound_key(rep.prefill.bound);
            let dec = bound_key(rep.decode.bound);
            let fits = rep.fits;
            let lower = rep.compute_untimed();
            let notes = rep.notes.clone();
            let notes_id = format!("perf-notes-{}", r.key);
            view! {
                <tr data-testid=testid class:no-fit=!fits>
                    <th scope="row">{name}</th>
                    <td class="num">
                        <span data-testid="ttft">{fmt_ms(num_symbols(state), rep.ttft.ms())}</span>
                        {lower.then(|| view! { <br /><small class="bad" data-testid="ttft-lower-bound">{t("view_perf_lower_bound")}</small> })}
                        <br /><small class="muted">{fmt_ms_range(num_symbols(state), ttft_r)}</small>
                    </td>
                    <td class="num">
                        <span data-testid="tpot">{fmt_ms(num_symbols(state), rep.tpot.ms())}</span>
                        <br /><small class="muted">{fmt_ms_range(num_symbols(state), tpot_r)}</small>
                    </td>
                    <td class="num">{fmt_num(num_symbols(state), rep.output_tokens_per_s_per_user)}</td>
                    <td class="num" data-testid="tps">{fmt_num(num_symbols(state), rep.output_tokens_per_s)}</td>
                    <td class="num">
                        {fmt_ms(num_symbols(state), rep.e2e.ms())}
                        <br /><small class="muted">{fmt_ms_range(num_symbols(state), e2e_r)}</small>
                    </td>
                    <td class="bound">
                        {t("chart_phase_prefill")}": "{t(pre)}<br />
                        {t("chart_phase_decode")}": "{t(dec)}
                    </td>
                    <td class="num">
                        {rep.max_batch.to_string()}
                        {(!fits).then(|| view! { <br /><small class="bad">{t("view_perf_batch_no_fit")}</small> })}
                    </td>
                </tr>
                <tr class="math-row">
                    <td colspan="8">
                        <PerfNotes notes=notes testid=notes_id />
                        {rep
                            .derivations
                            .into_iter()
                            .map(|d| {
                                let key = d.title_key.clone();
                                let testid = format!("math-perf-{}-{}", r.key, key.trim_start_matches("perf_"));
                                view! {
                                    <div class="math-item">
                                        <small class="muted">{move || title_of(state.lang.get(), &key)}</small>
                                        <MathPanel derivation=Some(d) testid=testid />
                                    </div>
                                }
                            })
                            .collect_view()}
                    </td>
                </tr>
            }
                .into_any()
        }
        Err(e) => view! {
            <tr data-testid=testid>
                <th scope="row">{name}</th>
                <td colspan="7" class="calc-error">{move || e.message(state.lang.get())}</td>
            </tr>
        }
        .into_any(),
    }
}

/// The cost table (prices editable) and the cost chart.
#[component]
fn CostSection(
    /// One row per compared GPU, at the batch that costs least.
    crows: Memo<Vec<PerfRow>>,
    /// The cost chart's bars.
    bars: Memo<CostBars>,
    /// Whether the dark theme is in effect.
    dark: Signal<bool>,
) -> impl IntoView {
    let state = use_app();
    let t = move |k: &'static str| move || state.tr(k);
    view! {
        <div class="table-wrap" tabindex="0" role="region" aria-label={t("view_cost_chart_title")}>
            <table class="cost-table" data-testid="cost-table">
                <thead>
                    <tr>
                        <th scope="col">{t("chart_gpu")}</th>
                        <th scope="col">{t("view_cost_batch")}</th>
                        <th scope="col">{t("view_cost_price")}</th>
                        <th scope="col">{t("perf_usd_per_million_tokens")}</th>
                        <th scope="col">{t("view_cost_per_request")}</th>
                        <th scope="col">{t("view_cost_tokens_per_joule")}</th>
                    </tr>
                </thead>
                <tbody>
                    {move || crows.get().into_iter().map(|r| cost_row(state, r)).collect_view()}
                </tbody>
            </table>
        </div>
        <div class="chart-box">
            <ChartCanvas<CostBars>
                data=Signal::from(bars)
                lang=state.lang
                dark=dark
                title=Signal::derive(move || state.tr("view_cost_chart_title").to_string())
                test_id="chart-cost-tokens"
            />
            <p class="explain">{t("view_cost_explain")}</p>
        </div>
    }
}

/// One GPU's cost row: batch, editable price (with a reset when overridden), cost per million
/// tokens and per request, tokens per joule.
fn cost_row(state: AppState, r: PerfRow) -> impl IntoView {
    let t = move |k: &'static str| move || state.tr(k);
    let key = r.key.clone();
    let key2 = r.key.clone();
    let testid = format!("cost-row-{}", r.key);
    let name = format!("{} × {}", r.name, r.tp);
    let price = r.price_usd_per_gpu_hour;
    let overridden = r.price_overridden;
    let (mtok, req, tpj) = match &r.result {
        Ok(rep) if rep.fits && r.batch > 0 => (
            rep.usd_per_million_tokens,
            rep.usd_per_request,
            rep.tokens_per_joule_at_tdp,
        ),
        _ => (None, None, None),
    };
    let batch = if r.batch > 0 {
        r.batch.to_string()
    } else {
        "—".to_string()
    };
    view! {
        <tr data-testid=testid>
            <th scope="row">{name}</th>
            <td class="num" data-testid="cost-batch">{batch}</td>
            <td>
                <FloatField
                    id=format!("price-{key}")
                    label_key="view_cost_price_label"
                    unit_key="view_unit_usd_per_gpu_hour"
                    value=Signal::derive(move || price.unwrap_or(0.0))
                    range=PRICE_RANGE
                    on_commit=move |v: f64| {
                        let k = key.clone();
                        state.edit(History::Replace, move |s| s.views.set_price(&k, Some(v)))
                    }
                />
                {overridden.then(|| {
                    let k = key2.clone();
                    view! {
                        <button type="button" class="link" on:click=move |_| {
                            let k = k.clone();
                            state.edit(History::Push, move |s| s.views.set_price(&k, None))
                        }>{t("view_cost_price_reset")}</button>
                    }
                })}
                {price.is_none().then(|| view! { <small class="muted">{t("chart_no_price")}</small> })}
            </td>
            <td class="num" data-testid="usd-per-mtok">{fmt_usd(mtok)}</td>
            <td class="num" data-testid="usd-per-request">{fmt_usd(req)}</td>
            <td class="num">
                {tpj.map(fmt_sig).unwrap_or_else(|| "—".into())}
                {tpj.is_some().then(|| view! { <br /><small class="muted">{t("view_cost_upper_bound")}</small> })}
            </td>
        </tr>
    }
}
