//! Summary cards: parameters, weight memory, KV cache, max concurrency per GPU, vLLM's log.

use crate::core::present::{CardsText, GpuText, CARD_MATH};
use crate::core::scenario::BudgetRule;
use crate::ui::in_view::{gated_memo, live_when_seen};
use crate::ui::math_panel::MathPanel;
use crate::ui::state::{use_app, History};
use crate::ui::view_common::display_if;
use leptos::html::Div;
use leptos::prelude::*;

/// One text of the GPU `key`'s entry, as a reactive text ("" once that GPU is gone).
fn gpu_field(
    c: Memo<CardsText>,
    key: &str,
    f: fn(&GpuText) -> String,
) -> impl Fn() -> String + Send + Sync + 'static {
    let key = key.to_string();
    move || {
        c.with(|c| {
            c.gpus
                .iter()
                .find(|g| g.key == key)
                .map(f)
                .unwrap_or_default()
        })
    }
}

/// One GPU's maximum concurrency, updated in place.
fn gpu_requests(c: Memo<CardsText>, key: String) -> impl IntoView {
    let field = |f: fn(&GpuText) -> String| gpu_field(c, &key, f);
    let k = key.clone();
    let math = Memo::new(move |_| {
        c.with(|c| {
            c.gpus
                .iter()
                .find(|g| g.key == k)
                .and_then(|g| g.math.clone())
        })
    });
    view! {
        <div class="gpu-requests">
            <span class="gpu-label">{field(|g| g.name.clone())}</span>
            <span class="big" data-testid=format!("max-requests-{key}")>
                {field(|g| g.requests.clone())}" "<span class="card-sub">{field(|g| g.sub.clone())}</span>
            </span>
            <MathPanel derivation=math testid=format!("math-requests-{key}") />
        </div>
    }
}

/// The headline numbers of the last good report, each with its "Show the math". The cards
/// are built once; a change of the numbers rewrites only the text that changed.
#[component]
pub fn SummaryCards() -> impl IntoView {
    let state = use_app();
    let has_report = Memo::new(move |_| state.outcome.with(|o| o.report.is_some()));
    // Off screen, the cards' numbers catch up once the inputs settle.
    let node: NodeRef<Div> = NodeRef::new();
    let live = live_when_seen(node);
    let c = gated_memo(live, move || {
        let lang = state.lang.get();
        let vllm = state
            .scenario
            .with(|s| matches!(s.budget, BudgetRule::Vllm { .. }));
        state.outcome.with(|o| {
            o.report
                .as_ref()
                .map(|r| CardsText::new(lang, vllm, r))
                .unwrap_or_default()
        })
    });
    let keys =
        Memo::new(move |_| c.with(|c| c.gpus.iter().map(|g| g.key.clone()).collect::<Vec<_>>()));
    let text = move |f: fn(&CardsText) -> String| move || c.with(f);
    let t = move |k: &'static str| move || state.tr(k);
    let math = move |i: usize| Memo::new(move |_| c.with(|c| c.math[i].clone()));
    // Memos: the optional lines are built when they appear, not on every change.
    let has_eok = Memo::new(move |_| c.with(|c| !c.params_eok.is_empty()));
    let has_active = Memo::new(move |_| c.with(|c| !c.params_active.is_empty()));
    let has_mtp = Memo::new(move |_| c.with(|c| c.has_mtp));
    // A card of one number: title, the number, the line under it and its math.
    let card = move |title: &'static str,
                     testid: &'static str,
                     main: fn(&CardsText) -> String,
                     sub: fn(&CardsText) -> String,
                     i: usize| {
        view! {
            <article class="card">
                <h3>{t(title)}</h3>
                <p class="big" data-testid=testid>{text(main)}</p>
                <p class="card-sub">{text(sub)}</p>
                <MathPanel derivation=math(i) testid=CARD_MATH[i].1 />
            </article>
        }
    };
    view! {
        <div class="cards" data-testid="summary-cards" node_ref=node style:display=move || display_if(has_report.get())>
            <article class="card">
                <h3>{t("card_params")}</h3>
                <p class="big" data-testid="params-total">{text(|c| c.params_total.clone())}</p>
                {move || has_eok.get().then(|| view! {
                    <p class="card-sub" data-testid="params-eok">{text(|c| c.params_eok.clone())}</p>
                })}
                <p class="card-sub">{t("card_params_total")}</p>
                {move || has_active.get().then(|| view! {
                    <p class="card-sub">
                        <span data-testid="params-active">{text(|c| c.params_active.clone())}</span>" "{t("card_params_active")}
                    </p>
                })}
                {move || c.with(|c| c.params_parts.clone()).into_iter().map(|l| view! {
                    <p class="card-sub" data-testid="params-part">{l}</p>
                }).collect_view()}
                {move || has_mtp.get().then(|| view! {
                    <label class="card-sub">
                        <input
                            type="checkbox"
                            data-testid="include-mtp"
                            prop:checked=move || state.scenario.with(|s| s.include_mtp)
                            on:change=move |ev| {
                                let on = event_target_checked(&ev);
                                state.edit(History::Push, |s| s.include_mtp = on);
                            }
                        />
                        " "{t("card_include_mtp")}
                    </label>
                })}
                <MathPanel derivation=math(0) testid=CARD_MATH[0].1 />
            </article>
            {card("card_weights", "weights", |c| c.weights.clone(), |c| c.weight_dtype.clone(), 1)}
            {card("card_kv_token", "kv-per-token", |c| c.kv_token.clone(), |c| c.kv_dtype.clone(), 2)}
            {card("card_kv_request", "kv-per-request", |c| c.kv_request.clone(), |c| c.kv_request_sub.clone(), 3)}
            {card("card_kv_total", "kv-total", |c| c.kv_total.clone(), |c| c.kv_total_sub.clone(), 4)}
            <article class="card card-wide">
                <h3>{t("card_max_requests")}</h3>
                <p class="card-sub">
                    {move || state.tr(if c.with(|c| c.vllm) { "card_rule_vllm" } else { "card_rule_textbook" })}
                </p>
                <div class="gpu-requests-row">
                    {move || keys.get().into_iter().map(|key| gpu_requests(c, key)).collect_view()}
                </div>
            </article>
            <article class="card card-wide">
                <details data-testid="vllm-log">
                    <summary>{t("card_vllm_log")}</summary>
                    <div class="vllm-logs">
                        {move || {
                            keys.get()
                                .into_iter()
                                .map(|key| {
                                    view! {
                                        <div class="vllm-log">
                                            <span class="gpu-label">{gpu_field(c, &key, |g| g.name.clone())}</span>
                                            <pre data-testid=format!("vllm-log-{key}")>{gpu_field(c, &key, |g| g.log.clone())}</pre>
                                        </div>
                                    }
                                })
                                .collect_view()
                        }}
                    </div>
                </details>
            </article>
        </div>
    }
}
