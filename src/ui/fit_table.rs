//! "Does it fit?": per GPU, the memory split and verdict, what would fit, and the cost per
//! request across the compared GPUs.

use crate::core::i18n::{tr, Lang};
use crate::core::memory::Suggestion;
use crate::core::report::{GpuReport, Report, Verdict};
use crate::core::series::MemoryBar;
use crate::core::units::Bytes;
use crate::ui::math_panel::MathPanel;
use crate::ui::state::use_app;
use leptos::prelude::*;

/// The parts of a memory bar: (translation key, CSS class, bytes).
fn parts(b: &MemoryBar) -> [(&'static str, &'static str, Bytes); 5] {
    [
        ("fit_weights", "seg-weights", b.weights),
        ("fit_kv", "seg-kv", b.kv),
        ("fit_activations", "seg-act", b.activations),
        ("fit_overhead", "seg-overhead", b.overhead),
        ("fit_free", "seg-free", b.free),
    ]
}

fn suggestion_text(lang: Lang, s: &Suggestion) -> String {
    match s {
        Suggestion::TensorParallel { gpus, requests } => tr(lang, "suggest_tp")
            .replace("{gpus}", &gpus.to_string())
            .replace("{requests}", &lang.number_symbols().group(*requests)),
        Suggestion::LowerPrecision {
            dtype,
            weights,
            requests,
        } => tr(lang, "suggest_precision")
            .replace("{dtype}", dtype.id())
            .replace("{weights}", &lang.number_symbols().gib(*weights))
            .replace("{requests}", &lang.number_symbols().group(*requests)),
        Suggestion::ShorterContext { max_tokens } => tr(lang, "suggest_context")
            .replace("{tokens}", &lang.number_symbols().group(*max_tokens)),
    }
}

/// A compact CSS stacked bar of one GPU's memory (the canvas chart has the details).
fn mini_bar(lang: Lang, b: &MemoryBar) -> impl IntoView {
    let total = b.used().max(b.capacity).0.max(1) as f64;
    let segs = parts(b)
        .into_iter()
        .filter(|(_, _, v)| v.0 > 0)
        .map(|(k, class, v)| {
            let pct = format!("{:.2}%", v.0 as f64 / total * 100.0);
            let label = format!("{}: {}", tr(lang, k), lang.number_symbols().gib(v));
            view! { <span class=format!("seg {class}") style:width=pct title=label></span> }
        })
        .collect_view();
    let over = (b.over.0 > 0).then(|| {
        let pct = format!("{:.2}%", b.over.0 as f64 / total * 100.0);
        view! { <span class="seg seg-over" style:width=pct title=tr(lang, "fit_over")></span> }
    });
    // role="img" makes the segments presentational: the bar's own label names them all.
    let summary = parts(b)
        .into_iter()
        .filter(|(_, _, v)| v.0 > 0)
        .map(|(k, _, v)| format!("{}: {}", tr(lang, k), lang.number_symbols().gib(v)))
        .collect::<Vec<_>>()
        .join(", ");
    let label = format!("{} {summary}", tr(lang, "ui_section_fit"));
    view! { <div class="minibar" role="img" aria-label=label>{segs}{over}</div> }
}

fn row(lang: Lang, g: &GpuReport, cheapest: bool) -> impl IntoView {
    let key = g.key.clone();
    let b = &g.bar;
    let verdict_class = match g.verdict {
        Verdict::Fits => "verdict ok",
        Verdict::Partial => "verdict warn",
        Verdict::DoesNotFit => "verdict bad",
    };
    let price = g
        .usd_per_hour
        .map(|p| format!("${}", lang.number_symbols().sig(p)))
        .unwrap_or_else(|| tr(lang, "gpu_price_unknown").to_string());
    let per_req = g
        .usd_per_request_hour
        .map(|c| format!("${}", lang.number_symbols().sig(c)))
        .unwrap_or_else(|| "—".to_string());
    let suggestions = g
        .suggestions
        .iter()
        .map(|s| view! { <li>{suggestion_text(lang, s)}</li> })
        .collect_view();
    let legend = parts(b)
        .into_iter()
        .map(|(k, class, v)| {
            view! { <li><span class=format!("swatch {class}")></span>{format!("{} {}", tr(lang, k), lang.number_symbols().gib(v))}</li> }
        })
        .collect_view();
    let cost_math = g
        .derivations
        .iter()
        .find(|d| d.title_key == "cost_per_request")
        .cloned()
        .map(|d| view! { <MathPanel derivation=d testid=format!("math-cost-{key}") /> });
    view! {
        <tr data-testid=format!("fit-row-{key}")>
            <th scope="row">{g.accelerator.name.clone()}</th>
            <td>
                <span class=verdict_class data-testid=format!("verdict-{key}")>{tr(lang, g.verdict.key())}</span>
                {(!g.suggestions.is_empty()).then(|| view! {
                    <div class="suggestions" data-testid=format!("suggestions-{key}")>
                        <p>{tr(lang, "suggest_title")}</p>
                        <ul>{suggestions}</ul>
                    </div>
                })}
            </td>
            <td class="mem-cell">
                {mini_bar(lang, b)}
                <span class="num">{format!("{} / {}", lang.number_symbols().gib(b.used()), lang.number_symbols().gib(b.capacity))}</span>
                <ul class="legend">{legend}</ul>
            </td>
            <td class="num" data-testid=format!("fit-requests-{key}")>{lang.number_symbols().group(g.requests)}</td>
            <td class="num">{price}</td>
            <td class="num" data-testid=format!("cost-per-request-{key}")>
                {per_req}
                {cheapest.then(|| view! { <span class="tag ok">{tr(lang, "fit_cheapest")}</span> })}
                {cost_math}
            </td>
        </tr>
    }
}

/// Sentences comparing each GPU with the first one: price ratio, request ratio, cost ratio.
fn comparisons(lang: Lang, r: &Report) -> Vec<String> {
    let Some(first) = r.gpus.first() else {
        return Vec::new();
    };
    let (Some(p0), Some(c0)) = (first.usd_per_hour, first.usd_per_request_hour) else {
        return Vec::new();
    };
    r.gpus
        .iter()
        .skip(1)
        .filter_map(|g| {
            let (p, c) = (g.usd_per_hour?, g.usd_per_request_hour?);
            let req = g.requests as f64 / first.requests.max(1) as f64;
            Some(
                tr(lang, "fit_compare")
                    .replace("{a}", &g.accelerator.name)
                    .replace("{b}", &first.accelerator.name)
                    .replace("{price}", &lang.number_symbols().sig(p / p0))
                    .replace("{req}", &lang.number_symbols().sig(req))
                    .replace("{cost}", &lang.number_symbols().sig(c / c0)),
            )
        })
        .collect()
}

/// The per-GPU fit table with cost per request.
#[component]
pub fn FitTable() -> impl IntoView {
    let state = use_app();
    move || {
        let lang = state.lang.get();
        let t = move |k: &str| tr(lang, k);
        state.outcome.with(|o| {
            o.report.as_ref().map(|r| {
                let rows = r
                    .gpus
                    .iter()
                    .enumerate()
                    .map(|(i, g)| row(lang, g, r.cheapest == Some(i) && r.gpus.len() > 1))
                    .collect_view();
                let errors = r
                    .gpu_errors
                    .iter()
                    .map(|(k, e)| view! { <li>{format!("{k}: ")}{e.message(lang)}</li> })
                    .collect_view();
                let compare = comparisons(lang, r)
                    .into_iter()
                    .map(|s| view! { <p data-testid="cost-compare">{s}</p> })
                    .collect_view();
                view! {
                    <section class="panel fit" aria-labelledby="fit-title">
                        <h2 id="fit-title">{t("ui_section_fit")}</h2>
                        <div class="table-scroll">
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
                                <tbody>{rows}</tbody>
                            </table>
                        </div>
                        {(!r.gpu_errors.is_empty()).then(|| view! {
                            <div class="calc-error" role="alert">
                                <p>{t("gpu_error")}</p>
                                <ul>{errors}</ul>
                            </div>
                        })}
                        <div class="compare">{compare}</div>
                    </section>
                }
            })
        })
    }
}
