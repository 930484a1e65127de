//! "Bring your own benchmark": a box for what `vllm bench serve` printed
//! (its text summary or its JSON result file). The serving simulator's worker reads it with
//! the core's parser, runs the same setup on the scenario's model, first GPU, engine flags and
//! efficiencies, and fits the efficiencies to it (`core::present::serving_bench`); this block
//! shows measured against simulated and, with "Fit", writes the fitted efficiencies into the
//! scenario (the `e_*` link parameters), after which the comparison is run again with them.
//!
//! A paste that cannot be read gives the parser's sentence and keeps the last good result.

use crate::core::base::{fill, fmt_sig, tr, Lang};
use crate::core::present::{bench_scenario, BenchView};
use crate::core::scenario::EffField;
use crate::ui::sim_client::{self, SimSignals, Status};
use crate::ui::state::{use_app, History};
use leptos::prelude::*;

/// Fitted efficiencies this close (relative) to the scenario's count as already applied.
const FIT_APPLIED_REL: f64 = 0.01;

/// Most characters read from the box (a `--save-detailed` JSON file of 20,000 requests fits).
const MAX_PASTE_CHARS: usize = 4_000_000;

/// The paste box, its status and its result.
#[component]
pub fn BenchPaste() -> impl IntoView {
    let state = use_app();
    let sig: SimSignals<BenchView> = SimSignals::new();
    let text = RwSignal::new(String::new());
    // The text last compared; with the scenario, what the job runs.
    let compared: RwSignal<Option<String>> = RwSignal::new(None);
    let empty = RwSignal::new(false);
    // Only what the job reads: an edit of the sweep's rate or lengths sends no refit.
    let query = Memo::new(move |_| state.scenario.with(|s| bench_scenario(s).to_query()));
    let last: StoredValue<Option<(String, String, &'static str)>> = StoredValue::new(None);
    Effect::new(move |_| {
        let (q, lang) = (query.get(), state.lang.get().code());
        let Some(t) = compared.get() else { return };
        let key = Some((q.clone(), t.clone(), lang));
        if last.with_value(|l| *l == key) {
            return;
        }
        last.set_value(key);
        sim_client::submit_text(sig, q, t, lang);
    });
    let on_compare = move |_| {
        let t = text.get_untracked();
        let blank = t.trim().is_empty();
        empty.set(blank);
        if !blank {
            compared.set(Some(t.chars().take(MAX_PASTE_CHARS).collect()));
        }
    };
    let t = move |k: &'static str| move || state.tr(k);
    view! {
        <div class="bench-paste" data-testid="bench">
            <h3>{t("bb_title")}</h3>
            <p class="explain">{t("bb_explain")}</p>
            <div class="field">
                <label for="bench-text">{t("bb_label")}</label>
                <textarea
                    id="bench-text"
                    data-testid="bench-paste"
                    rows="8"
                    spellcheck="false"
                    prop:value=move || text.get()
                    on:input=move |ev| text.set(event_target_value(&ev))
                ></textarea>
            </div>
            <button type="button" class="btn" data-testid="bench-compare" on:click=on_compare>{t("bb_compare")}</button>
            <div role="status" data-testid="bench-status">
                {move || empty.get().then(|| view! { <p class="calc-error" data-testid="bench-empty">{state.tr("bb_empty")}</p> })}
                {move || match sig.status.get() {
                    Status::Failed(why) => Some(view! {
                        <p class="calc-error">{fill(state.tr("sv_worker_failed"), &[("why", &why)])}</p>
                    }.into_any()),
                    Status::Running | Status::Loading if compared.with(Option::is_some) => Some(view! {
                        <p class="muted" data-testid="bench-running">{state.tr("bb_running")}</p>
                    }.into_any()),
                    _ => None,
                }}
                {move || sig.job_error.get().map(|m| view! {
                    <p class="calc-error" data-testid="bench-error">{fill(state.tr("bb_failed"), &[("why", &m)])}</p>
                })}
            </div>
            {move || sig.view.with(Option::is_some).then(|| view! { <BenchResult sig=sig /> })}
        </div>
    }
}

/// The setup read, in one sentence.
fn setup(v: &BenchView, lang: Lang) -> String {
    let rate = v.request_rate.map_or_else(
        || tr(lang, "bb_rate_inf").to_string(),
        |r| format!("{} req/s", fmt_sig(r)),
    );
    let mut s = fill(
        tr(lang, "bb_setup"),
        &[
            ("gpu", &v.gpu_name),
            ("n", &v.num_prompts.to_string()),
            ("rate", &rate),
            ("in", &fmt_sig(v.mean_lengths.0)),
            ("out", &fmt_sig(v.mean_lengths.1)),
        ],
    );
    if let Some(c) = v.max_concurrency {
        s.push(' ');
        s.push_str(&fill(tr(lang, "bb_setup_conc"), &[("c", &c.to_string())]));
    }
    if let Some(m) = &v.model {
        s.push(' ');
        s.push_str(&fill(tr(lang, "bb_setup_model"), &[("model", m)]));
    }
    s
}

/// `+12%`, or "—".
fn rel(sim: Option<f64>, measured: f64) -> String {
    match sim {
        Some(x) if measured != 0.0 => format!("{:+.0}%", (x - measured) / measured * 100.0),
        _ => "—".to_string(),
    }
}

/// One statistic as a table row.
fn row(r: &crate::core::present::BenchRow) -> impl IntoView {
    let cell = |x: Option<f64>| x.map_or_else(|| "—".to_string(), fmt_sig);
    view! {
        <tr data-testid=format!("bench-row-{}", r.key)>
            <th scope="row"><code>{r.key.clone()}</code></th>
            <td class="num" data-testid="bench-measured">{fmt_sig(r.measured)}</td>
            <td class="num" data-testid="bench-simulated">{cell(r.simulated)}</td>
            <td class="num">{rel(r.simulated, r.measured)}</td>
            <td class="num" data-testid="bench-fitted">{cell(r.fitted)}</td>
            <td class="num">{rel(r.fitted, r.measured)}</td>
        </tr>
    }
}

/// Measured against simulated, the fitted knobs and the "Fit" button.
#[component]
fn BenchResult(sig: SimSignals<BenchView>) -> impl IntoView {
    let state = use_app();
    let fitted = move || sig.view.with(|v| v.as_ref().and_then(|v| v.fitted));
    let on_fit = move |_| {
        if let Some(e) = fitted() {
            state.edit(History::Push, |s| s.views.eff = e);
        }
    };
    // A refit from the efficiencies "Fit" wrote (rounded by the URL) lands within the fit's
    // stopping tolerance of them, not on them: within 1% they count as applied.
    let applied = move || {
        let now = state.scenario.with(|s| s.views.eff);
        fitted().is_some_and(|f| EffField::all_close(&f, &now, FIT_APPLIED_REL))
    };
    let body = move || {
        let lang = state.lang.get();
        sig.view.with(|v| {
            v.as_ref().map(|v| {
                let knobs = v
                    .knobs
                    .iter()
                    .map(|k| {
                        fill(
                            tr(lang, "bb_knob"),
                            &[
                                ("name", &k.name),
                                ("before", &fmt_sig(k.before)),
                                ("after", &fmt_sig(k.after)),
                                ("stat", &k.statistic),
                            ],
                        )
                    })
                    .collect::<Vec<_>>();
                view! {
                    <p data-testid="bench-setup">{setup(v, lang)}</p>
                    <div class="table-wrap" tabindex="0" role="region" aria-label=tr(lang, "bb_title")>
                        <table class="serving-stats" data-testid="bench-table">
                            <thead><tr>
                                <th scope="col">{tr(lang, "bb_col_stat")}</th>
                                <th scope="col">{tr(lang, "bb_col_measured")}</th>
                                <th scope="col">{tr(lang, "bb_col_simulated")}</th>
                                <th scope="col">{tr(lang, "bb_col_error")}</th>
                                <th scope="col">{tr(lang, "bb_col_fitted")}</th>
                                <th scope="col">{tr(lang, "bb_col_error")}</th>
                            </tr></thead>
                            <tbody>{v.rows.iter().map(row).collect_view()}</tbody>
                        </table>
                    </div>
                    <ul class="plan-notes muted" data-testid="bench-knobs">
                        {knobs.into_iter().map(|k| view! { <li>{k}</li> }).collect_view()}
                    </ul>
                    {v.ttft_not_fitted.then(|| view! {
                        <p class="muted" data-testid="bench-ttft-not-fitted">{tr(lang, "bb_ttft_not_fitted")}</p>
                    })}
                    {(!v.notes.is_empty()).then(|| view! {
                        <ul class="plan-notes muted" data-testid="bench-notes">
                            {v.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}
                        </ul>
                    })}
                    {v.fit_error.clone().map(|m| view! { <p class="calc-error" data-testid="bench-fit-error">{m}</p> })}
                }
            })
        })
    };
    view! {
        <div data-testid="bench-result">
            {body}
            <button
                type="button"
                class="btn"
                data-testid="bench-fit"
                disabled=move || fitted().is_none() || applied()
                on:click=on_fit
            >{move || state.tr(if applied() { "bb_fit_applied" } else { "bb_fit" })}</button>
        </div>
    }
}
