//! Summary cards: parameters, weight memory, KV cache, max concurrency per GPU, vLLM's log.

use crate::core::derivation::Derivation;
use crate::core::i18n::tr;
use crate::core::i18n::Lang;
use crate::core::report::Report;
use crate::core::scenario::BudgetRule;
use crate::core::units::{fmt_eok, Bytes, NumberSymbols};
use crate::ui::math_panel::MathPanel;
use crate::ui::state::{fmt_bytes_both, use_app};
use leptos::prelude::*;

/// "0.5 MiB (524,288 B)": the textbook's unit for small per-token sizes, with exact bytes,
/// in the language's number symbols.
pub fn fmt_mib_exact(nf: NumberSymbols, b: Bytes) -> String {
    format!("{} MiB ({} B)", nf.sig(b.mib()), nf.group(b.0))
}

fn math(d: Option<&Derivation>, testid: &str) -> Option<impl IntoView> {
    d.cloned()
        .map(|d| view! { <MathPanel derivation=d testid=testid.to_string() /> })
}

/// The headline numbers of the last good report, each with its "Show the math".
#[component]
pub fn SummaryCards() -> impl IntoView {
    let state = use_app();
    // The cards are rebuilt when the report changes; the log panel keeps its open state.
    let log_open = RwSignal::new(false);
    let on_log_toggle = move |ev: leptos::ev::Event| {
        let now = ev
            .target()
            .and_then(|t| js_sys::Reflect::get(&t, &"open".into()).ok())
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        let _ = log_open.try_set(now);
    };
    move || {
        let lang = state.lang.get();
        let t = move |k: &str| tr(lang, k);
        let nf = lang.number_symbols();
        let vllm = state
            .scenario
            .with(|s| matches!(s.budget, BudgetRule::Vllm { .. }));
        state.outcome.with(|o| {
            o.report.as_ref().map(|r: &Report| {
                let p = &r.model.params;
                let active = (p.active != p.total).then(|| {
                    view! {
                        <p class="card-sub">
                            <span data-testid="params-active">{nf.group(p.active)}</span>" "{t("card_params_active")}
                        </p>
                    }
                });
                // Korean readers count parameters in 억 (10^8), as the course does ("70억 개").
                let eok = (lang == Lang::Ko)
                    .then(|| fmt_eok(p.total, nf))
                    .flatten()
                    .map(|e| view! { <p class="card-sub" data-testid="params-eok">{e}</p> });
                let gpus = r
                    .gpus
                    .iter()
                    .map(|g| {
                        let key = g.key.clone();
                        let main = nf.group(g.requests);
                        let sub = if vllm {
                            format!("vLLM {:.2}×", g.vllm_concurrency)
                        } else {
                            format!("({} {})", nf.group(g.requests_theoretical), t("card_theoretical"))
                        };
                        let d = g
                            .derivations
                            .iter()
                            .find(|d| {
                                d.title_key
                                    == if vllm { "vllm_max_concurrency" } else { "mem_requests_practical" }
                            })
                            .or_else(|| g.derivations.iter().find(|d| d.title_key == "mem_requests_practical"));
                        view! {
                            <div class="gpu-requests">
                                <span class="gpu-label">{g.accelerator.name.clone()}</span>
                                <span class="big" data-testid=format!("max-requests-{key}")>
                                    {main}" "<span class="card-sub">{sub}</span>
                                </span>
                                {math(d, &format!("math-requests-{key}"))}
                            </div>
                        }
                    })
                    .collect_view();
                let logs = r
                    .gpus
                    .iter()
                    .map(|g| {
                        view! {
                            <div class="vllm-log">
                                <span class="gpu-label">{g.accelerator.name.clone()}</span>
                                <pre data-testid=format!("vllm-log-{}", g.key)>{g.vllm_log.join("\n")}</pre>
                            </div>
                        }
                    })
                    .collect_view();
                view! {
                    <div class="cards" data-testid="summary-cards">
                        <article class="card">
                            <h3>{t("card_params")}</h3>
                            <p class="big" data-testid="params-total">{nf.group(p.total)}</p>
                            {eok}
                            <p class="card-sub">{t("card_params_total")}</p>
                            {active}
                            {math(r.derivation("params_total"), "math-params")}
                        </article>
                        <article class="card">
                            <h3>{t("card_weights")}</h3>
                            <p class="big" data-testid="weights">{fmt_bytes_both(nf, r.weights)}</p>
                            <p class="card-sub">{r.weight_dtype.id()}</p>
                            {math(r.derivation("weights_bytes"), "math-weights")}
                        </article>
                        <article class="card">
                            <h3>{t("card_kv_token")}</h3>
                            <p class="big" data-testid="kv-per-token">{fmt_mib_exact(nf, r.kv_per_token)}</p>
                            <p class="card-sub">{r.kv_dtype.id()}</p>
                            {math(r.derivation("kv_per_token"), "math-kv-token")}
                        </article>
                        <article class="card">
                            <h3>{t("card_kv_request")}</h3>
                            <p class="big" data-testid="kv-per-request">{fmt_bytes_both(nf, r.kv_per_request)}</p>
                            <p class="card-sub">{format!("{} {}", nf.group(r.context_len), t("unit_tokens"))}</p>
                            {math(r.derivation("kv_per_request"), "math-kv-request")}
                        </article>
                        <article class="card">
                            <h3>{t("card_kv_total")}</h3>
                            <p class="big" data-testid="kv-total">{fmt_bytes_both(nf, r.kv_total)}</p>
                            <p class="card-sub">{format!("× {} {}", nf.group(r.concurrency), t("unit_requests"))}</p>
                            {math(r.derivation("kv_total"), "math-kv-total")}
                        </article>
                        <article class="card card-wide">
                            <h3>{t("card_max_requests")}</h3>
                            <p class="card-sub">{t(if vllm { "card_rule_vllm" } else { "card_rule_textbook" })}</p>
                            <div class="gpu-requests-row">{gpus}</div>
                        </article>
                        <article class="card card-wide">
                            <details
                                data-testid="vllm-log"
                                open=log_open.get_untracked()
                                on:toggle=on_log_toggle
                            >
                                <summary>{t("card_vllm_log")}</summary>
                                <div class="vllm-logs">{logs}</div>
                            </details>
                        </article>
                    </div>
                }
            })
        })
    }
}
