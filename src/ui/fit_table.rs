//! "Does it fit?": per GPU, the memory split and verdict, what would fit, and the cost per
//! request across the compared GPUs.

use crate::core::base::Bytes;
use crate::core::base::Derivation;
use crate::core::base::{fill, tr, Lang};
use crate::core::calc::Suggestion;
use crate::core::present::MemoryBar;
use crate::core::present::{GpuReport, Report, Verdict};
use crate::ui::in_view::{gated_memo, live_when_seen};
use crate::ui::math_panel::MathPanel;
use crate::ui::state::use_app;
use crate::ui::view_common::display_if;
use leptos::html::Div;
use leptos::prelude::*;

/// The parts of a memory bar: (translation key, CSS class).
const PARTS: [(&str, &str); 5] = [
    ("fit_weights", "seg-weights"),
    ("fit_kv", "seg-kv"),
    ("fit_activations", "seg-act"),
    ("fit_overhead", "seg-overhead"),
    ("fit_free", "seg-free"),
];

/// The parts of a memory bar: (translation key, CSS class, bytes).
fn parts(b: &MemoryBar) -> [(&'static str, &'static str, Bytes); 5] {
    let bytes = [b.weights, b.kv, b.activations, b.overhead, b.free];
    std::array::from_fn(|i| (PARTS[i].0, PARTS[i].1, bytes[i]))
}

fn suggestion_text(lang: Lang, s: &Suggestion) -> String {
    match s {
        Suggestion::TensorParallel { gpus, requests } => fill(
            tr(lang, "suggest_tp"),
            &[
                ("gpus", &gpus.to_string()),
                ("requests", &lang.number_symbols().group(*requests)),
            ],
        ),
        Suggestion::LowerPrecision {
            dtype,
            weights,
            requests,
        } => fill(
            tr(lang, "suggest_precision"),
            &[
                ("dtype", dtype.id()),
                ("weights", &lang.number_symbols().gib(*weights)),
                ("requests", &lang.number_symbols().group(*requests)),
            ],
        ),
        Suggestion::ShorterContext { max_tokens } => fill(
            tr(lang, "suggest_context"),
            &[("tokens", &lang.number_symbols().group(*max_tokens))],
        ),
    }
}

/// The text of one GPU's row, recomputed on every change; the row's markup stays and only
/// the text that changed is written.
#[derive(Clone, PartialEq, Default)]
struct RowText {
    name: String,
    verdict_class: &'static str,
    verdict: String,
    suggestions: Vec<String>,
    /// Per part of the memory bar: width (CSS %, empty when the part is zero), label.
    segs: [(String, String); 5],
    /// Width of the part over capacity, empty when nothing is over.
    over: String,
    bar_label: String,
    used: String,
    legend: [String; 5],
    requests: String,
    price: String,
    per_request: String,
    cheapest: bool,
    cost_math: Option<Derivation>,
}

impl RowText {
    fn new(lang: Lang, g: &GpuReport, cheapest: bool) -> Self {
        let nf = lang.number_symbols();
        let b = &g.bar;
        let total = b.used().max(b.capacity).0.max(1) as f64;
        let pct = |v: Bytes| format!("{:.2}%", v.0 as f64 / total * 100.0);
        let label = |k: &str, v: Bytes| format!("{}: {}", tr(lang, k), nf.gib(v));
        let p = parts(b);
        let summary = p
            .iter()
            .filter(|(_, _, v)| v.0 > 0)
            .map(|(k, _, v)| label(k, *v))
            .collect::<Vec<_>>()
            .join(", ");
        RowText {
            name: g.accelerator.name.clone(),
            verdict_class: match g.verdict {
                Verdict::Fits => "verdict ok",
                Verdict::Partial => "verdict warn",
                Verdict::DoesNotFit => "verdict bad",
            },
            verdict: tr(lang, g.verdict.key()).to_string(),
            suggestions: g
                .suggestions
                .iter()
                .map(|s| suggestion_text(lang, s))
                .collect(),
            segs: p.map(|(k, _, v)| {
                if v.0 > 0 {
                    (pct(v), label(k, v))
                } else {
                    Default::default()
                }
            }),
            over: if b.over.0 > 0 {
                pct(b.over)
            } else {
                String::new()
            },
            bar_label: format!("{} {summary}", tr(lang, "ui_section_fit")),
            used: format!("{} / {}", nf.gib(b.used()), nf.gib(b.capacity)),
            legend: p.map(|(k, _, v)| format!("{} {}", tr(lang, k), nf.gib(v))),
            requests: nf.group(g.requests),
            price: g
                .usd_per_hour
                .map(|p| format!("${}", nf.sig(p)))
                .unwrap_or_else(|| tr(lang, "gpu_price_unknown").to_string()),
            per_request: g
                .usd_per_request_hour
                .map(|c| format!("${}", nf.sig(c)))
                .unwrap_or_else(|| "—".to_string()),
            cheapest,
            cost_math: g
                .derivations
                .iter()
                .find(|d| d.title_key == "cost_per_request")
                .cloned(),
        }
    }
}

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
                    let cheapest = r.cheapest == Some(i) && r.gpus.len() > 1;
                    Some(RowText::new(lang, &r.gpus[i], cheapest))
                })
                .unwrap_or_default()
        })
    });
    let text = move |f: fn(&RowText) -> String| move || d.with(f);
    let suggestions = Memo::new(move |_| d.with(|d| d.suggestions.clone()));
    let cost_math = Memo::new(move |_| d.with(|d| d.cost_math.clone()));
    let sugg_id = format!("suggestions-{key}");
    let math_id = format!("math-cost-{key}");
    let segs = PARTS
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
    let legend = PARTS
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
            Some(fill(
                tr(lang, "fit_compare"),
                &[
                    ("a", &g.accelerator.name),
                    ("b", &first.accelerator.name),
                    ("price", &lang.number_symbols().sig(p / p0)),
                    ("req", &lang.number_symbols().sig(req)),
                    ("cost", &lang.number_symbols().sig(c / c0)),
                ],
            ))
        })
        .collect()
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
                .map(|r| comparisons(lang, r))
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
