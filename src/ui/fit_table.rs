//! "Does it fit?": per GPU, the memory split and verdict, what would fit, and the cost per
//! request across the compared GPUs.

use crate::core::present::{fit_comparisons, FitRowText, FIT_PARTS};
use crate::ui::in_view::{gated_memo, live_when_seen};
use crate::ui::math_panel::MathPanel;
use crate::ui::state::use_app;
use crate::ui::view_common::display_if;
use leptos::html::Div;
use leptos::prelude::*;

/// One GPU's row. Its markup is built once; the numbers update in place.
#[component]
fn FitRow(
    key: String,
    /// Whether the table follows every change (`in_view::live_when_seen`).
    live: Signal<bool>,
) -> impl IntoView {
    let state = use_app();
    let k = key.clone();
    let d = gated_memo(live, move || {
        let lang = state.lang.get();
        state.outcome.with(|o| {
            o.report
                .as_ref()
                .and_then(|r| {
                    let i = r.gpus.iter().position(|g| g.key == k)?;
                    Some(FitRowText::of(lang, r, i))
                })
                .unwrap_or_default()
        })
    });
    let text = move |f: fn(&FitRowText) -> String| move || d.with(f);
    let suggestions = Memo::new(move |_| d.with(|d| d.suggestions.clone()));
    let cost_math = Memo::new(move |_| d.with(|d| d.cost_math.clone()));
    let sugg_id = format!("suggestions-{key}");
    let math_id = format!("math-cost-{key}");
    let segs = FIT_PARTS
        .into_iter()
        .enumerate()
        .map(|(i, (_, class))| {
            view! {
                <span
                    class=format!("seg {class}")
                    style:width=move || d.with(|d| d.segs[i].0.clone())
                    style:display=move || display_if(d.with(|d| !d.segs[i].0.is_empty()))
                    title=move || d.with(|d| d.segs[i].1.clone())
                ></span>
            }
        })
        .collect_view();
    let legend = FIT_PARTS
        .into_iter()
        .enumerate()
        .map(|(i, (_, class))| {
            view! { <li><span class=format!("swatch {class}")></span>{move || d.with(|d| d.legend[i].clone())}</li> }
        })
        .collect_view();
    view! {
        <tr data-testid=format!("fit-row-{key}")>
            <th scope="row">{text(|d| d.name.clone())}</th>
            <td>
                <span class=move || d.with(|d| d.verdict_class) data-testid=format!("verdict-{key}")>{text(|d| d.verdict.clone())}</span>
                {move || {
                    let list = suggestions.get();
                    (!list.is_empty()).then(|| view! {
                        <div class="suggestions" data-testid=sugg_id.clone()>
                            <p>{move || state.tr("suggest_title")}</p>
                            <ul>{list.into_iter().map(|s| view! { <li>{s}</li> }).collect_view()}</ul>
                        </div>
                    })
                }}
            </td>
            <td class="mem-cell">
                // role="img" makes the segments presentational: the bar's own label names them all.
                <div class="minibar" role="img" aria-label=text(|d| d.bar_label.clone())>
                    {segs}
                    <span
                        class="seg seg-over"
                        style:width=text(|d| d.over.clone())
                        style:display=move || display_if(d.with(|d| !d.over.is_empty()))
                        title=move || state.tr("fit_over")
                    ></span>
                </div>
                <span class="num">{text(|d| d.used.clone())}</span>
                <ul class="legend">{legend}</ul>
            </td>
            <td class="num" data-testid=format!("fit-requests-{key}")>{text(|d| d.requests.clone())}</td>
            <td class="num">{text(|d| d.price.clone())}</td>
            <td class="num" data-testid=format!("cost-per-request-{key}")>
                {text(|d| d.per_request.clone())}
                <span class="tag ok" style:display=move || display_if(d.with(|d| d.cheapest))>
                    {move || state.tr("fit_cheapest")}
                </span>
                <MathPanel derivation=cost_math testid=math_id />
            </td>
        </tr>
    }
}

/// The per-GPU fit table with cost per request. The table and its rows are built once per
/// set of GPUs; a change of the numbers only rewrites the text that changed.
#[component]
pub fn FitTable() -> impl IntoView {
    let state = use_app();
    let has_report = Memo::new(move |_| state.outcome.with(|o| o.report.is_some()));
    // Off screen, the rows' numbers catch up once the inputs settle.
    let node: NodeRef<Div> = NodeRef::new();
    let live = live_when_seen(node);
    let keys = Memo::new(move |_| {
        state.outcome.with(|o| {
            o.report
                .as_ref()
                .map(|r| r.gpus.iter().map(|g| g.key.clone()).collect::<Vec<_>>())
                .unwrap_or_default()
        })
    });
    let errors = gated_memo(live, move || {
        let lang = state.lang.get();
        state.outcome.with(|o| {
            o.report
                .as_ref()
                .map(|r| {
                    r.gpu_errors
                        .iter()
                        .map(|(k, e)| format!("{k}: {}", e.message(lang)))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
    });
    let compare = gated_memo(live, move || {
        let lang = state.lang.get();
        state.outcome.with(|o| {
            o.report
                .as_ref()
                .map(|r| fit_comparisons(lang, r))
                .unwrap_or_default()
        })
    });
    let t = move |k: &'static str| move || state.tr(k);
    view! {
        <section class="panel fit" aria-labelledby="fit-title" style:display=move || display_if(has_report.get())>
                <h2 id="fit-title">{t("ui_section_fit")}</h2>
                <div class="table-scroll" node_ref=node>
                    <table class="fit-table" data-testid="fit-table">
                        <thead>
                            <tr>
                                <th scope="col">{t("fit_gpu")}</th>
                                <th scope="col">{t("fit_verdict")}</th>
                                <th scope="col">{t("fit_used")}</th>
                                <th scope="col">{t("fit_requests")}</th>
                                <th scope="col">{t("fit_cost")}</th>
                                <th scope="col">{t("fit_cost_per_request")}</th>
                            </tr>
                        </thead>
                        <tbody>
                            {move || keys.get().into_iter().map(|key| view! { <FitRow key=key live=live /> }).collect_view()}
                        </tbody>
                    </table>
                </div>
                {move || {
                    let list = errors.get();
                    (!list.is_empty()).then(|| view! {
                        <div class="calc-error" role="alert">
                            <p>{t("gpu_error")}</p>
                            <ul>{list.into_iter().map(|e| view! { <li>{e}</li> }).collect_view()}</ul>
                        </div>
                    })
                }}
                <div class="compare">
                    {move || {
                        compare
                            .get()
                            .into_iter()
                            .map(|s| view! { <p data-testid="cost-compare">{s}</p> })
                            .collect_view()
                    }}
                </div>
        </section>
    }
}
