//! "Largest model that meets the target": every size of a model family, chosen by a
//! select, planned on the planner's candidate GPUs, traffic and targets
//! (`core::views::largest_view`): which sizes fit, meet TTFT and TPOT, their throughput per
//! replica and cost per million tokens, the largest that meets the targets highlighted, and one
//! sentence from the live numbers (the chapter: a well-served 32B or 70B can replace an 8B).

use crate::core::base::group;
use crate::core::base::NumberSymbols;
use crate::core::calc::Family;
use crate::core::hardware::Catalog;
use crate::core::present::{largest_view, LargestRow, LargestView};
use crate::core::scenario::Scenario;
use crate::ui::in_view::{gated_memo, section_in_view};
use crate::ui::state::{use_app, History};
use crate::ui::view_common::{fmt_ms, fmt_num, fmt_usd, num_symbols};
use leptos::prelude::*;

/// "1.2B", "70.6B", "405B": a parameter count in billions.
fn billions(nf: NumberSymbols, n: u64) -> String {
    format!("{}B", fmt_num(nf, n as f64 / 1e9))
}

/// The section under the planner's options.
#[component]
pub fn LargestModel(
    /// The scenario reduced to what the planner reads (its candidates, lengths, precisions
    /// and view inputs), so unrelated edits don't rerun the plans.
    #[prop(into)]
    scenario: Signal<Scenario>,
) -> impl IntoView {
    let state = use_app();
    // Computed only while the section is on screen or the inputs have settled (ui::in_view).
    let computed: Memo<LargestView> = gated_memo(section_in_view(), move || {
        let lang = state.lang.get();
        scenario.with(|s| largest_view(s, Catalog::builtin(), lang))
    });
    let family = Signal::derive(move || state.scenario.with(|s| s.views.plan.family));
    let on_family = move |ev: leptos::ev::Event| {
        if let Ok(f) = Family::parse(&event_target_value(&ev)) {
            state.edit(History::Push, |s| s.views.plan.family = f);
        }
    };
    let t = move |k: &'static str| move || state.tr(k);
    let rows = move || -> Vec<LargestRow> { computed.with(|v| v.rows.clone()) };
    let conclusion = move || computed.with(|v| v.conclusion.clone());
    let error = move || computed.with(|v| v.error.as_ref().map(|e| e.message(state.lang.get())));
    let yes_no = move |b: bool| {
        if b {
            state.tr("plan_largest_yes")
        } else {
            state.tr("plan_largest_no")
        }
    };
    view! {
        <section class="largest-model" aria-labelledby="plan-largest-title" data-testid="plan-largest">
            <h3 id="plan-largest-title">{t("plan_largest_title")}</h3>
            <p class="explain">{t("plan_largest_explain")}</p>
            <div class="view-controls">
                <div class="field">
                    <label for="plan-family">{t("plan_largest_family")}</label>
                    <select id="plan-family" data-testid="plan-family" on:change=on_family>
                        {Family::ALL
                            .iter()
                            .map(|f| {
                                let f = *f;
                                view! {
                                    <option value=f.id() selected=move || family.get() == f>
                                        {f.name()}
                                    </option>
                                }
                            })
                            .collect_view()}
                    </select>
                </div>
            </div>
            {move || error().map(|m| view! { <p class="calc-error" role="alert" data-testid="plan-largest-error">{m}</p> })}
            {move || conclusion().map(|c| view! { <p class="conclusion" data-testid="plan-largest-conclusion">{c}</p> })}
            <div class="table-wrap" tabindex="0" role="region" aria-label={t("plan_largest_title")}>
                <table class="plan-table" data-testid="plan-largest-table">
                    <thead>
                        <tr>
                            <th scope="col">{t("plan_largest_model")}</th>
                            <th scope="col">{t("plan_largest_params")}</th>
                            <th scope="col">{t("plan_largest_fits")}</th>
                            <th scope="col">{t("plan_largest_meets")}</th>
                            <th scope="col">{t("plan_largest_option")}</th>
                            <th scope="col">{t("view_plan_batch")}</th>
                            <th scope="col">{t("perf_ttft")}</th>
                            <th scope="col">{t("perf_tpot")}</th>
                            <th scope="col">{t("plan_requests_per_replica")}</th>
                            <th scope="col">{t("plan_largest_tokens")}</th>
                            <th scope="col">{t("plan_largest_cost_mtok")}</th>
                            <th scope="col">{t("plan_largest_why")}</th>
                        </tr>
                    </thead>
                    <tbody>
                        {move || {
                            rows()
                                .into_iter()
                                .map(|r| {
                                    let b = r.best.as_ref();
                                    let nf = num_symbols(state);
                                    let option = b.map_or("—".to_string(), |o| format!("{} × {}", o.gpu_name, o.tp));
                                    let batch = b.map_or("—".to_string(), |o| group(o.batch));
                                    let ttft = b.map_or("—".to_string(), |o| fmt_ms(nf, o.ttft.ms()));
                                    let tpot = b.map_or("—".to_string(), |o| fmt_ms(nf, o.tpot.ms()));
                                    let rps = b.map_or("—".to_string(), |o| fmt_num(nf, o.requests_per_s_per_replica));
                                    let tps = b.map_or("—".to_string(), |o| fmt_num(nf, o.output_tokens_per_s_per_replica));
                                    let cost = fmt_usd(b.and_then(|o| o.usd_per_million_tokens_avg));
                                    let (fits, meets, largest) = (r.fits, r.meets, r.largest);
                                    let params = if r.params_active == r.params_total {
                                        billions(nf, r.params_total)
                                    } else {
                                        format!("{} / {}", billions(nf, r.params_total), billions(nf, r.params_active))
                                    };
                                    view! {
                                        <tr data-testid="plan-largest-row" class:best=largest data-meets=meets.to_string()>
                                            <th scope="row">
                                                {r.name.clone()}
                                                {largest.then(|| view! { " " <strong class="good" data-testid="plan-largest-pick">{move || state.tr("plan_largest_pick")}</strong> })}
                                            </th>
                                            <td class="num">{params}</td>
                                            <td>{move || yes_no(fits)}</td>
                                            <td>{move || yes_no(meets)}</td>
                                            <td>{option}</td>
                                            <td class="num">{batch}</td>
                                            <td class="num">{ttft}</td>
                                            <td class="num">{tpot}</td>
                                            <td class="num">{rps}</td>
                                            <td class="num">{tps}</td>
                                            <td class="num">{cost}</td>
                                            <td class="why">{r.why_not.clone().unwrap_or_default()}</td>
                                        </tr>
                                    }
                                })
                                .collect_view()
                        }}
                    </tbody>
                </table>
            </div>
        </section>
    }
}
