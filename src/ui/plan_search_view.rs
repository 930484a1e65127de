//! The planner's search over every configuration (`llmcalc plan --search` in the page): the
//! engines, layouts, speculation and largest deployment to try (URL `ps_eng`, `ps_lay`,
//! `ps_spec`, `ps_max`), a button that turns the search on (`ps=1`), its progress (stage and
//! steps) while it runs, then the Pareto front of cost per million output tokens against
//! tokens/s per user, the best configuration with its nodes and launch commands (or, when
//! none meets the P99 targets, the sentence and the nearest), and the front's and the short
//! list's tables.
//!
//! It runs in the serving simulator's Web Worker (`ui::sim_client`, a search job) while the
//! search is on and this block is on or near the screen, for each new (inputs, language); a
//! failure is one sentence and the last result stays, and a reply to older inputs is dropped.

use crate::core::base::{fill, fmt_sig, tr, Lang};
use crate::core::present::{ParetoChart, SearchView};
use crate::core::scenario::{
    PlannerInputs, Scenario, SearchInputs, SearchLayouts, ViewInputs, SEARCH_MAX_GPUS_RANGE,
};
use crate::core::sim::EngineKind;
use crate::ui::chart_canvas::ChartCanvas;
use crate::ui::in_view::in_view;
use crate::ui::number_field::NumberField;
use crate::ui::sim_client::{self, SimSignals, Status};
use crate::ui::sim_status::{SimPlaceholder, SimStatusLine};
use crate::ui::state::{use_app, History};
use crate::ui::view_common::{fmt_usd, is_dark};
use leptos::html::Div;
use leptos::prelude::*;

/// The scenario reduced to what the search reads (model, GPUs, precisions, lengths, the
/// planner's rate and targets, prices, efficiencies, the search's inputs but its switch):
/// other edits send no job.
fn search_query(s: &Scenario) -> String {
    let d = Scenario::default();
    let p = &s.views.plan;
    let views = ViewInputs {
        eff: s.views.eff,
        plan: PlannerInputs {
            rate_rps: p.rate_rps,
            ttft_ms: p.ttft_ms,
            tpot_ms: p.tpot_ms,
            ..d.views.plan
        },
        prices: s.views.prices.clone(),
        search: SearchInputs {
            on: false,
            ..s.views.search
        },
        ..d.views
    };
    sim_client::reduced_query(s, views, false)
}

/// The search block: its inputs and button, the progress, then the result.
#[component]
pub fn PlanSearch() -> impl IntoView {
    let state = use_app();
    let sig: SimSignals<SearchView> = SimSignals::new();
    let node: NodeRef<Div> = NodeRef::new();
    let near = in_view(node);
    let query = Memo::new(move |_| state.scenario.with(search_query));
    let on = Memo::new(move |_| state.scenario.with(|s| s.views.search.on));
    // Only while on, on (or near) the screen, and only for a new (query, language).
    let last: StoredValue<Option<(String, &'static str)>> = StoredValue::new(None);
    Effect::new(move |_| {
        let q = query.get();
        let lang = state.lang.get().code();
        if !on.get() || !near.get() {
            return;
        }
        let key = Some((q.clone(), lang));
        if last.with_value(|l| *l == key) {
            return;
        }
        last.set_value(key);
        sim_client::submit(sig, q, lang);
    });
    let running = Memo::new(move |_| matches!(sig.status.get(), Status::Running | Status::Loading));
    let run = move |_| {
        if on.get_untracked() {
            // Already on (a failed worker, say): the same inputs once more.
            let (q, lang) = (query.get_untracked(), state.lang.get_untracked().code());
            last.set_value(Some((q.clone(), lang)));
            sim_client::submit(sig, q, lang);
        } else {
            state.edit(History::Push, |s| s.views.search.on = true);
        }
    };
    let has_view = Memo::new(move |_| sig.view.with(Option::is_some));
    let t = move |k: &'static str| move || state.tr(k);
    view! {
        <div class="plan-search" data-testid="plan-search" node_ref=node>
            <h3>{t("ps_title")}</h3>
            <p class="explain">{t("ps_explain")}</p>
            <SearchControls />
            <p>
                <button type="button" class="btn" data-testid="ps-run" on:click=run
                    disabled=move || running.get() && on.get()>{t("ps_run")}</button>
            </p>
            <SimStatusLine sig=sig prefix="ps" error_key="ps_failed" />
            <SearchProgress sig=sig />
            {move || if has_view.get() {
                Some(view! { <SearchResult sig=sig /> }.into_any())
            } else {
                on.get().then(|| view! {
                    <SimPlaceholder sig=sig class="plan-sim-body plan-sim-placeholder"
                        testid="ps-placeholder" running_key="ps_running" />
                }.into_any())
            }}
        </div>
    }
}

/// The search's inputs: engines (at least one), layouts, speculation, the largest deployment.
#[component]
fn SearchControls() -> impl IntoView {
    let state = use_app();
    let search = Memo::new(move |_| state.scenario.with(|s| s.views.search));
    let on_layouts = move |ev: leptos::ev::Event| {
        if let Some(l) = SearchLayouts::parse(&event_target_value(&ev)) {
            state.edit(History::Push, |s| s.views.search.layouts = l);
        }
    };
    let on_spec = move |ev: leptos::ev::Event| {
        let on = event_target_value(&ev) == "1";
        state.edit(History::Push, |s| s.views.search.speculative = on);
    };
    let engines = EngineKind::ALL
        .into_iter()
        .map(|e| {
            let on_change = move |ev: leptos::ev::Event| {
                let want = event_target_checked(&ev);
                let mut next = state.scenario.with_untracked(|s| s.views.search);
                if next.set_engine(e, want) {
                    state.edit(History::Push, |s| s.views.search = next);
                } else if let Some(i) = ev.target().and_then(|t| {
                    wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(t).ok()
                }) {
                    // The last engine stays on.
                    i.set_checked(true);
                }
            };
            view! {
                <label class="check">
                    <input type="checkbox" data-testid=format!("ps-eng-{}", e.id())
                        prop:checked=move || search.get().has_engine(e) on:change=on_change />
                    {format!(" {} {}", e.name(), e.version())}
                </label>
            }
        })
        .collect_view();
    let max = Signal::derive(move || search.get().max_gpus);
    view! {
        <div class="view-controls plan-search-controls">
            <fieldset class="field">
                <legend>{move || state.tr("ps_engines")}</legend>
                {engines}
            </fieldset>
            <div class="field">
                <label for="ps-lay">{move || state.tr("ps_layouts")}</label>
                <select id="ps-lay" data-testid="ps-lay" on:change=on_layouts>
                    {SearchLayouts::ALL.into_iter().map(|l| view! {
                        <option value=l.id() selected=move || search.get().layouts == l>{move || state.tr(l.label_key())}</option>
                    }).collect_view()}
                </select>
            </div>
            <div class="field">
                <label for="ps-spec">{move || state.tr("ps_spec_label")}</label>
                <select id="ps-spec" data-testid="ps-spec" on:change=on_spec>
                    <option value="1" selected=move || search.get().speculative>{move || state.tr("ps_spec_on")}</option>
                    <option value="0" selected=move || !search.get().speculative>{move || state.tr("ps_spec_off")}</option>
                </select>
            </div>
            <NumberField
                id="ps-max"
                label_key="ps_max_label"
                unit_key="view_unit_gpus"
                value=max
                range=SEARCH_MAX_GPUS_RANGE
                on_commit=move |v: u64| state.edit(History::Replace, |s| s.views.search.max_gpus = v)
            />
        </div>
    }
}

/// The running search's stage and steps, with a progress bar; nothing when idle.
#[component]
fn SearchProgress(sig: SimSignals<SearchView>) -> impl IntoView {
    let state = use_app();
    let shown = move || {
        if !matches!(sig.status.get(), Status::Running | Status::Loading) {
            return None;
        }
        let p = sig.progress.get();
        let lang = state.lang.get();
        let text = match &p {
            Some(p) => {
                let stage = match p.stage.as_str() {
                    "simulate" => "ps_stage_simulate",
                    _ => "ps_stage_screen",
                };
                fill(
                    tr(lang, "ps_progress"),
                    &[
                        ("stage", tr(lang, stage)),
                        ("done", &p.done.to_string()),
                        ("total", &p.total.to_string()),
                    ],
                )
            }
            None => tr(lang, "ps_stage_start").to_string(),
        };
        let (stage, done, total) = p.map_or((String::new(), 0, 0), |p| (p.stage, p.done, p.total));
        Some(view! {
            <p class="ps-progress muted" data-testid="ps-progress" data-stage=stage
                data-done=done.to_string() data-total=total.to_string()>
                <progress max=total.max(1).to_string() value=done.to_string() aria-label=text.clone()></progress>
                " "{text}
            </p>
        })
    };
    view! { <div role="status" class="ps-progress-line">{shown}</div> }
}

/// The result: the summary, the chart, the best (or the sentence and the nearest), the
/// front's and the short list's tables, the refusals.
#[component]
fn SearchResult(sig: SimSignals<SearchView>) -> impl IntoView {
    let state = use_app();
    let chart: Memo<ParetoChart> = Memo::new(move |_| {
        let lang = state.lang.get();
        sig.view
            .with(|v| v.as_ref().map(|v| v.chart(lang)))
            .unwrap_or_else(|| SearchView::default().chart(lang))
    });
    let body = move || {
        let lang = state.lang.get();
        sig.view.with(|v| {
            v.as_ref().map(|v| {
                view! {
                    {best_block(v, lang)}
                    {v.none_meets.clone().map(|m| view! {
                        <p class="calc-error" data-testid="ps-none">{m}</p>
                        {points_table(v, &v.nearest, "ps-nearest-table", tr(lang, "ps_nearest_title"), lang)}
                    })}
                    {points_table(v, &v.front, "ps-front-table", tr(lang, "ps_front_title"), lang)}
                    {points_table(v, &v.shortlist, "ps-short-table", tr(lang, "ps_short_title"), lang)}
                    {(!v.refused.is_empty()).then(|| view! {
                        <details class="muted" data-testid="ps-refused">
                            <summary>{tr(lang, "ps_refused_title")}</summary>
                            <ul>{v.refused.iter().map(|r| view! { <li>{r.clone()}</li> }).collect_view()}</ul>
                        </details>
                    })}
                }
            })
        })
    };
    let summary = move || {
        sig.view.with(|v| {
            v.as_ref()
                .map(|v| (v.summary.clone(), v.notes.clone()))
                .unwrap_or_default()
        })
    };
    view! {
        <div class="plan-search-body" data-testid="ps-result">
            <p data-testid="ps-summary">{move || summary().0}</p>
            {move || {
                let notes = summary().1;
                (!notes.is_empty()).then(|| view! {
                    <ul class="plan-notes muted" data-testid="ps-notes">
                        {notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}
                    </ul>
                })
            }}
            <div class="chart-box">
                <ChartCanvas<ParetoChart>
                    data=Signal::from(chart)
                    lang=state.lang
                    dark=is_dark(state)
                    title=Signal::derive(move || state.tr("ps_chart_title").to_string())
                    test_id="chart-pareto"
                />
                <p class="explain">{move || state.tr("ps_chart_explain")}</p>
            </div>
            {body}
        </div>
    }
}

/// The best configuration: its line, deployments, GPUs, nodes, cost, simulated P99s and
/// launch commands (nothing when none meets the targets).
fn best_block(v: &SearchView, lang: Lang) -> Option<impl IntoView> {
    let (r, desc) = v.best_row()?;
    let (ttft, tpot) = r.p99_ms.unwrap_or((f64::NAN, f64::NAN));
    let commands = v.commands.join("\n");
    Some(view! {
        <div class="plan-search-best" data-testid="ps-best">
            <h4>{tr(lang, "ps_best_title")}</h4>
            <p data-testid="ps-best-desc"><strong>{desc.to_string()}</strong></p>
            <dl class="ps-best-figures">
                <dt>{tr(lang, "ps_best_deployments")}</dt>
                <dd>{format!("{} × {} GPU", r.replicas, r.gpus_per_deployment)}</dd>
                <dt>{tr(lang, "ps_best_gpus")}</dt>
                <dd data-testid="ps-best-gpus" data-value=r.gpus.to_string()>{r.gpus.to_string()}</dd>
                <dt>{tr(lang, "ps_best_nodes")}</dt>
                <dd data-testid="ps-best-nodes" data-value=r.nodes.to_string()>{r.nodes.to_string()}</dd>
                <dt>{tr(lang, "ps_best_cost")}</dt>
                <dd data-testid="ps-best-cost">{format!(
                    "{}/h · {}/M",
                    fmt_usd(Some(r.usd_per_hour)),
                    fmt_usd(Some(r.usd_per_m_output))
                )}</dd>
                <dt>{tr(lang, "ps_best_tails")}</dt>
                <dd>{format!("{} ms / {} ms", fmt_sig(ttft), fmt_sig(tpot))}</dd>
            </dl>
            <p>{tr(lang, "ps_commands")}</p>
            <pre class="ps-commands" data-testid="ps-commands"><code>{commands}</code></pre>
        </div>
    })
}

/// The rows `which` of the view as a table captioned `caption`.
fn points_table(
    v: &SearchView,
    which: &[usize],
    testid: &'static str,
    caption: &'static str,
    lang: Lang,
) -> impl IntoView {
    let rows = which
        .iter()
        .filter_map(|&i| v.rows.get(i).map(|r| (i, r)))
        .map(|(i, r)| {
            let desc = v.descriptions.get(r.candidate).cloned().unwrap_or_default();
            // Simulated P99s, or the screen's means (smaller: not what the targets bound).
            let tails = match r.p99_ms {
                Some((a, b)) => view! { {format!("{} / {}", fmt_sig(a), fmt_sig(b))} }.into_any(),
                None => view! {
                    <small class="muted">{fill(
                        tr(lang, "ps_estimated"),
                        &[("ttft", &fmt_sig(r.mean_ms.0)), ("tpot", &fmt_sig(r.mean_ms.1))],
                    )}</small>
                }
                .into_any(),
            };
            let verdict = tr(lang, if r.meets { "ps_meets" } else { "ps_misses" });
            view! {
                <tr class:best=v.best == Some(i) data-meets=r.meets.to_string()>
                    <th scope="row">{desc}</th>
                    <td class="num">{format!("{} × {} = {}", r.replicas, r.gpus_per_deployment, r.gpus)}</td>
                    <td class="num">{r.nodes.to_string()}</td>
                    <td class="num">{fmt_usd(Some(r.usd_per_hour))}</td>
                    <td class="num">{fmt_usd(Some(r.usd_per_m_output))}</td>
                    <td class="num">{fmt_sig(r.tokens_per_s_user)}</td>
                    <td class="num tails">{tails}</td>
                    <td class=if r.meets { "good" } else { "bad" }>{verdict}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-wrap" tabindex="0" role="region" aria-label=caption>
            <table class="plan-table" data-testid=testid>
                <caption>{caption}</caption>
                <thead><tr>
                    <th scope="col">{tr(lang, "ps_col_config")}</th>
                    <th scope="col">{tr(lang, "ps_col_gpus")}</th>
                    <th scope="col">{tr(lang, "ps_col_nodes")}</th>
                    <th scope="col">{tr(lang, "ps_col_usd_h")}</th>
                    <th scope="col">{tr(lang, "ps_col_usd_m")}</th>
                    <th scope="col">{tr(lang, "ps_col_tps")}</th>
                    <th scope="col">{tr(lang, "ps_col_p99")}</th>
                    <th scope="col">{tr(lang, "ps_col_targets")}</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}
