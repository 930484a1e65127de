//! "How accurate is this?": the performance model's predictions against measured benchmarks
//! (`core::calibration::accuracy_table`): a predicted-vs-measured scatter per metric, and the
//! median and 90th-percentile error per metric on the training and held-out rows.

use crate::core::base::fill;
use crate::core::calc::{accuracy_table, AccuracyReport, Metric};
use crate::core::present::{
    accuracy_scatter, accuracy_stats, metric_key, AccStatRow, AccuracyScatter,
};
use crate::ui::chart_canvas::ChartCanvas;
use crate::ui::state::use_app;
use crate::ui::view_common::is_dark;
use leptos::prelude::*;

/// "12.3 %", "—" for an empty subset.
fn pct(n: usize, v: f64) -> String {
    if n == 0 || !v.is_finite() {
        "—".to_string()
    } else {
        format!("{:.1} %", v * 100.0)
    }
}

fn metric_from_id(s: &str) -> Option<Metric> {
    Metric::ALL.iter().copied().find(|m| m.id() == s)
}

/// The accuracy view.
#[component]
pub fn AccuracyView() -> impl IntoView {
    let state = use_app();
    // The calibration set is fixed: compute the report once per mount.
    let report: StoredValue<AccuracyReport> = StoredValue::new(accuracy_table());
    let metric = RwSignal::new(Metric::Tpot);
    let scatter: Memo<AccuracyScatter> = Memo::new(move |_| {
        let lang = state.lang.get();
        let m = metric.get();
        report.with_value(|r| accuracy_scatter(r, m, lang))
    });
    let stats: Vec<AccStatRow> = report.with_value(accuracy_stats);
    let (total, skipped) = report.with_value(|r| (r.total_rows, r.skipped.len()));
    let on_metric = move |ev: leptos::ev::Event| {
        if let Some(m) = metric_from_id(&event_target_value(&ev)) {
            metric.set(m);
        }
    };
    let t = move |k: &'static str| move || state.tr(k);
    let rows = stats
        .into_iter()
        .map(|s| {
            let target = s
                .target
                .map(|t| format!("≤ {:.0} %", t * 100.0))
                .unwrap_or_else(|| "—".into());
            let verdict = s.meets.map(|ok| if ok { "view_acc_meets" } else { "view_acc_misses" });
            view! {
                <tr data-testid=format!("acc-row-{}", s.metric.id())>
                    <th scope="row">{t(metric_key(s.metric))}</th>
                    <td class="num">{s.train.n.to_string()}</td>
                    <td class="num">{pct(s.train.n, s.train.median)}</td>
                    <td class="num">{pct(s.train.n, s.train.p90)}</td>
                    <td class="num">{s.test.n.to_string()}</td>
                    <td class="num" data-testid="acc-test-median">{pct(s.test.n, s.test.median)}</td>
                    <td class="num">{pct(s.test.n, s.test.p90)}</td>
                    <td class="num">{target}" "{verdict.map(|k| view! { <span class="tag">{t(k)}</span> })}</td>
                </tr>
            }
        })
        .collect_view();
    let dark = is_dark(state);
    view! {
        <section class="panel view accuracy-view" aria-labelledby="accuracy-title" data-testid="accuracy-view">
            <h2 id="accuracy-title">{t("view_acc_title")}</h2>
            <p class="explain">{t("view_acc_explain")}</p>
            <div class="table-wrap" tabindex="0" role="region" aria-label={t("view_acc_title")}>
                <table data-testid="accuracy-table">
                    <thead>
                        <tr>
                            <th scope="col">{t("view_acc_metric")}</th>
                            <th scope="col">{t("view_acc_train_n")}</th>
                            <th scope="col">{t("view_acc_median")}</th>
                            <th scope="col">{t("view_acc_p90")}</th>
                            <th scope="col">{t("view_acc_test_n")}</th>
                            <th scope="col">{t("view_acc_median")}</th>
                            <th scope="col">{t("view_acc_p90")}</th>
                            <th scope="col">{t("view_acc_target")}</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
            <p class="muted">
                {move || {
                    fill(
                        state.tr("view_acc_rows"),
                        &[("total", &total.to_string()), ("skipped", &skipped.to_string())],
                    )
                }}
            </p>
            <div class="field">
                <label for="accuracy-metric">{t("view_acc_metric")}</label>
                <select id="accuracy-metric" data-testid="accuracy-metric" on:change=on_metric>
                    {Metric::ALL
                        .iter()
                        .map(|m| {
                            let m = *m;
                            view! {
                                <option value=m.id() selected=move || metric.get() == m>
                                    {move || state.tr(metric_key(m))}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
            </div>
            <div class="chart-box">
                <ChartCanvas<AccuracyScatter>
                    data=Signal::from(scatter)
                    lang=state.lang
                    dark=dark
                    title=Signal::derive(move || state.tr("view_acc_chart_title").to_string())
                    test_id="chart-accuracy"
                />
            </div>
        </section>
    }
}
