//! The planner on simulated tails: beside the analytic replica counts
//! (Little's law on a static batch, the plan's table), the best option's replicas for the
//! average and the peak rate sized so that a fleet behind the chosen router meets the P99
//! TTFT and TPOT targets, with the simulated P99s at N (meeting them) and at N − 1 (missing
//! them). The same as `llmcalc plan … --simulate --router R`.
//!
//! It runs in the serving simulator's Web Worker (`ui::sim_client`, a planner job), only while
//! this block is on or near the screen, and only for a new (scenario, language): a
//! placeholder of the result's height stands until the first answer, a failure is one
//! sentence, and a reply to an older scenario is dropped. The router is a scenario input
//! (`sv_router` in the URL).

use crate::core::base::{fill, fmt_sig, tr, Lang};
use crate::core::present::PlanSimView;
use crate::core::scenario::Scenario;
use crate::core::sim::{FleetSizing, FleetTails, Router};
use crate::ui::in_view::in_view;
use crate::ui::math_panel::MathPanel;
use crate::ui::sim_client::{self, SimSignals};
use crate::ui::sim_status::{rebuild_once, SimPlaceholder, SimStatusLine};
use crate::ui::state::{use_app, History};
use leptos::html::Div;
use leptos::prelude::*;

/// The routers offered, in display order.
const ROUTERS: [Router; 2] = [Router::RoundRobin, Router::LeastLoaded];

/// Translation key of a router's label.
fn router_key(r: Router) -> &'static str {
    match r {
        Router::RoundRobin => "psim_router_rr",
        Router::LeastLoaded => "psim_router_ll",
    }
}

/// The scenario reduced to what the planner's simulation reads (model, GPUs, precisions,
/// lengths, the planner's and the serving section's inputs, efficiencies, prices): other
/// edits send no job.
fn plan_query(s: &Scenario) -> String {
    let d = Scenario::default();
    let mut views = s.views.clone();
    views.matmul = d.views.matmul;
    sim_client::reduced_query(s, views, false)
}

/// The planner's simulated sizing: the router, then the result (or its placeholder).
#[component]
pub fn PlannerSim() -> impl IntoView {
    let state = use_app();
    let sig: SimSignals<PlanSimView> = SimSignals::new();
    let node: NodeRef<Div> = NodeRef::new();
    let near = in_view(node);
    let query = Memo::new(move |_| state.scenario.with(plan_query));
    // Only while on (or near) the screen, and only for a new (query, language).
    let last: StoredValue<Option<(String, &'static str)>> = StoredValue::new(None);
    Effect::new(move |_| {
        let q = query.get();
        let lang = state.lang.get().code();
        if !near.get() {
            return;
        }
        let key = Some((q.clone(), lang));
        if last.with_value(|l| *l == key) {
            return;
        }
        last.set_value(key);
        sim_client::submit(sig, q, lang);
    });
    let router = Signal::derive(move || state.scenario.with(|s| s.views.serving.router));
    let on_router = move |ev: leptos::ev::Event| {
        if let Ok(r) = Router::parse(&event_target_value(&ev)) {
            state.edit(History::Push, |s| s.views.serving.router = r);
        }
    };
    // Only the first result mounts the result block; later replies update it in place.
    let has_view = Memo::new(move |_| sig.view.with(Option::is_some));
    let t = move |k: &'static str| move || state.tr(k);
    view! {
        <div class="plan-sim" data-testid="plan-sim" node_ref=node>
            <h3>{t("psim_title")}</h3>
            <p class="explain">{t("psim_explain")}</p>
            <div class="view-controls">
                <div class="field">
                    <label for="plan-router">{t("psim_router")}</label>
                    <select id="plan-router" data-testid="plan-router" on:change=on_router>
                        {ROUTERS.iter().map(|r| {
                            let r = *r;
                            view! { <option value=r.id() selected=move || router.get() == r>{move || state.tr(router_key(r))}</option> }
                        }).collect_view()}
                    </select>
                </div>
            </div>
            <SimStatusLine sig=sig prefix="plan-sim" error_key="psim_failed" />
            {move || if has_view.get() {
                view! { <SimResult sig=sig /> }.into_any()
            } else {
                view! {
                    <SimPlaceholder sig=sig class="plan-sim-body plan-sim-placeholder"
                        testid="plan-sim-placeholder" running_key="psim_running" />
                }.into_any()
            }}
        </div>
    }
}

/// The summary sentence of a result.
fn summary(v: &PlanSimView, lang: Lang) -> String {
    let p = &v.plan;
    let n = |s: &FleetSizing| {
        s.replicas
            .map_or_else(|| "—".to_string(), |n| n.to_string())
    };
    fill(
        tr(lang, "psim_summary"),
        &[
            ("gpu", &p.gpu_name),
            ("tp", &p.tp.to_string()),
            ("router", tr(lang, router_key(p.router))),
            ("avg", &n(&p.average)),
            ("peak", &n(&p.peak)),
            ("a_avg", &p.analytic_replicas_avg.to_string()),
            ("a_peak", &p.analytic_replicas_peak.to_string()),
            (
                "requests",
                &format!("{} / {}", p.requests_avg, p.requests_peak),
            ),
        ],
    )
}

/// `312 ms / 31 ms ✓` for one count's P99 TTFT and TPOT and its verdict, or "—".
fn tails_cell(t: Option<&FleetTails>, lang: Lang) -> String {
    t.map_or_else(
        || "—".to_string(),
        |t| {
            format!(
                "N = {}: {} ms / {} ms {}",
                t.replicas,
                fmt_sig(t.p99_ttft_ms),
                fmt_sig(t.p99_tpot_ms),
                tr(
                    lang,
                    if t.meets_targets {
                        "psim_meets"
                    } else {
                        "psim_misses"
                    }
                )
            )
        },
    )
}

/// One row: the rate, Little's law's count, the simulated count, and the P99s at N and N − 1.
fn sizing_row(
    which: &'static str,
    label: &'static str,
    s: &FleetSizing,
    analytic: u64,
    lang: Lang,
) -> impl IntoView {
    let meets =
        |t: Option<&FleetTails>| t.map_or("none".to_string(), |t| t.meets_targets.to_string());
    view! {
        <tr
            data-testid=format!("plan-sim-{which}")
            data-n=s.replicas.map_or(String::new(), |n| n.to_string())
            data-n-meets=meets(s.at_count.as_ref())
            data-fewer-meets=meets(s.one_fewer.as_ref())
        >
            <th scope="row">{tr(lang, label)}</th>
            <td class="num">{fmt_sig(s.rate_rps)}</td>
            <td class="num">{analytic.to_string()}</td>
            <td class="num"><strong>{s.replicas.map_or_else(|| "—".to_string(), |n| n.to_string())}</strong></td>
            <td class="num">{tails_cell(s.at_count.as_ref(), lang)}</td>
            <td class="num">{tails_cell(s.one_fewer.as_ref(), lang)}</td>
        </tr>
    }
}

/// The result: a sentence, the table (average and peak), the notes and the math.
#[component]
fn SimResult(sig: SimSignals<PlanSimView>) -> impl IntoView {
    let state = use_app();
    let t = move |k: &'static str| move || state.tr(k);
    // Once after the mount, the result rebuilds with the same reply, so that the first later
    // reply does not also compile the rebuild code (`rebuild_once`).
    let warm = rebuild_once();
    let derivation = move |i: usize| {
        Signal::derive(move || {
            warm.track();
            sig.view
                .with(|v| v.as_ref().and_then(|v| v.plan.derivations.get(i).cloned()))
        })
    };
    let body = move || {
        warm.track();
        let lang = state.lang.get();
        sig.view.with(|v| {
            v.as_ref().map(|v| {
                let p = &v.plan;
                let notes = v.notes.clone();
                view! {
                    <p data-testid="plan-sim-summary">{summary(v, lang)}</p>
                    <table class="plan-table" data-testid="plan-sim-table">
                        <caption>{fill(
                            tr(lang, "psim_table_caption"),
                            &[
                                ("ttft", &fmt_sig(p.targets.ttft_ms)),
                                ("tpot", &fmt_sig(p.targets.tpot_ms)),
                            ],
                        )}</caption>
                        <thead><tr>
                            <th scope="col">{tr(lang, "psim_col_which")}</th>
                            <th scope="col">{tr(lang, "psim_col_rate")}</th>
                            <th scope="col">{tr(lang, "psim_col_analytic")}</th>
                            <th scope="col">{tr(lang, "psim_col_simulated")}</th>
                            <th scope="col">{tr(lang, "psim_col_at_n")}</th>
                            <th scope="col">{tr(lang, "psim_col_fewer")}</th>
                        </tr></thead>
                        <tbody>
                            {sizing_row("avg", "psim_average", &p.average, p.analytic_replicas_avg, lang)}
                            {sizing_row("peak", "psim_peak", &p.peak, p.analytic_replicas_peak, lang)}
                        </tbody>
                    </table>
                    {(!notes.is_empty()).then(|| view! {
                        <ul class="plan-notes muted" data-testid="plan-sim-notes">
                            {notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}
                        </ul>
                    })}
                }
            })
        })
    };
    view! {
        <div class="plan-sim-body" data-testid="plan-sim-result">
            <div class="table-wrap" tabindex="0" role="region" aria-label=t("psim_title")>{body}</div>
            <MathPanel derivation=derivation(0) testid="math-plan-sim-avg" label="plan_sim_average" />
            <MathPanel derivation=derivation(1) testid="math-plan-sim-peak" label="plan_sim_peak" />
        </div>
    }
}
