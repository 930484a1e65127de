//! "Serving under load": latency percentiles against request rate for the
//! compared GPUs, one run's batch, queue and KV occupancy over time, `vllm bench serve`'s
//! statistics at the chosen rate, and the math of one step.
//!
//! The simulation runs in a Web Worker (`ui::sim_client`), started when the section first
//! comes near the screen: never on the first answer's path, and typing never waits for it.
//! This module only prepares the charts from the worker's reply (`core::present`'s
//! `serving_charts`); the main module never calls the simulator. Until the first reply a
//! placeholder of the section's height says what is loading; if the worker cannot load, a
//! sentence says so and the rest of the page keeps working. At its end, a box for a pasted
//! `vllm bench serve` result (`ui::serving_bench_view`).

use crate::core::base::fill;
use crate::core::base::Lang;
use crate::core::present::{
    latency_rate_chart, stats_table, time_series_chart, LatencyMetric, LatencyRateChart,
    LatencyRateSeries, ServingView as ViewData, TimeSeriesChart,
};
use crate::ui::chart_canvas::{rehearse, ChartCanvas};
use crate::ui::in_view::in_view;
use crate::ui::math_panel::MathPanel;
use crate::ui::serving_bench_view::BenchPaste;
use crate::ui::serving_controls::ServingControls;
use crate::ui::serving_disagg_table::DisaggTable;
use crate::ui::sim_client::{self, SimSignals};
use crate::ui::sim_status::{rebuild_once, SimPlaceholder, SimStatusLine};
use crate::ui::state::{use_app, AppState};
use crate::ui::view_common::is_dark;
use leptos::html::Div;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// The section.
#[component]
pub fn ServingView() -> impl IntoView {
    let state = use_app();
    let sig: SimSignals = SimSignals::new();
    let node: NodeRef<Div> = NodeRef::new();
    let near = in_view(node);
    let query = Memo::new(move |_| state.scenario.with(sim_client::sim_query));
    // Start on first approach; then every new (query, language) is a job.
    // Scrolling in and out again sends nothing: only a new (query, language) is a new job.
    let last: StoredValue<Option<(String, &'static str)>> = StoredValue::new(None);
    let rehearsed = StoredValue::new(false);
    Effect::new(move |_| {
        let q = query.get();
        let lang = state.lang.get().code();
        if !(near.get() || sim_client::started()) {
            return;
        }
        let key = Some((q.clone(), lang));
        if last.with_value(|l| *l == key) {
            return;
        }
        last.set_value(key);
        sim_client::submit(sig, q, lang);
        if !rehearsed.get_value() && sig.view.with_untracked(Option::is_none) {
            rehearsed.set_value(true);
            rehearse_charts(sig, untrack(|| state.is_dark()), state.lang.get_untracked());
        }
    });
    let metric = RwSignal::new(LatencyMetric::Ttft);
    // Only the first result mounts the results (a memo: each later reply updates them in
    // place instead of building both charts, the table and the math again).
    let has_view = Memo::new(move |_| sig.view.with(Option::is_some));
    let t = move |k: &'static str| move || state.tr(k);
    view! {
        <section class="panel view serving-view" aria-labelledby="serving-title" data-testid="serving-view">
            <div node_ref=node>
                <h2 id="serving-title">{t("sv_title")}</h2>
            </div>
            <p class="explain">{t("sv_explain")}</p>
            <ServingControls />
            <p class="muted">{t("sv_defaults")}</p>
            <SimStatusLine sig=sig prefix="serving" />
            {move || if has_view.get() {
                view! { <Results sig=sig metric=metric state=state /> }.into_any()
            } else {
                view! {
                    <SimPlaceholder sig=sig class="serving-placeholder"
                        testid="serving-placeholder" running_key="sv_running" />
                }.into_any()
            }}
            <BenchPaste />
        </section>
    }
}

/// Summary sentences, both charts, the statistics table and the math.
#[component]
fn Results(sig: SimSignals, metric: RwSignal<LatencyMetric>, state: AppState) -> impl IntoView {
    let dark = is_dark(state);
    let gpu = RwSignal::new(0_usize);
    // A new result updates the sentences and the table in the reply's task (laid out in the
    // next frame), the rate chart in the frame after and the time series in the one after
    // that: no frame both lays out the new sentences and table and draws a chart (a trace
    // showed 6 ms of layout and 3 ms of drawing in one frame when the rate chart came with
    // the layout; bench/sim_trace.mjs, docs/history/PERF_UI.md).
    let rate_tick = frames_after(sig, 2);
    let series_tick = frames_after(sig, 3);
    // Once after the mount, the lists below rebuild with the same result, so that the first
    // later reply does not also compile the rebuild code (`rebuild_once`).
    let warm = rebuild_once();
    // The first drawing of both charts (with the lazy compile of their drawing code) came in
    // one task, the one that reports them on screen: 10-12 ms CPU, 28 ms wall in a trace
    // (bench/sim_worker.mjs). The time series waits for a task of its own after that one.
    let hold_series = RwSignal::new(true);
    crate::ui::late::after_frames(SERIES_FIRST_FRAMES, move || {
        hold_series.try_set(false);
    });
    let rate_chart: Memo<LatencyRateChart> = Memo::new(move |_| {
        rate_tick.track();
        let (m, lang) = (metric.get(), state.lang.get());
        sig.view
            .with_untracked(|v| v.as_ref().map(|v| latency_rate_chart(v, m, lang)))
            .unwrap_or_default()
    });
    let series_chart: Memo<TimeSeriesChart> = Memo::new(move |_| {
        series_tick.track();
        let (g, lang) = (gpu.get(), state.lang.get());
        sig.view
            .with_untracked(|v| v.as_ref().map(|v| time_series_chart(v, g, lang)))
            .unwrap_or_default()
    });
    let math = Signal::derive(move || {
        warm.track();
        sig.view.with(|v| v.as_ref().and_then(|v| v.math.clone()))
    });
    let names = move || -> Vec<String> {
        warm.track();
        sig.view.with(|v| {
            v.as_ref()
                .map(|v| v.gpus.iter().map(|g| g.name.clone()).collect())
                .unwrap_or_default()
        })
    };
    let on_metric = move |ev: leptos::ev::Event| {
        let id = event_target_value(&ev);
        if let Some(m) = LatencyMetric::ALL.iter().find(|m| m.id() == id) {
            metric.set(*m);
        }
    };
    let on_gpu = move |ev: leptos::ev::Event| {
        gpu.set(event_target_value(&ev).parse().unwrap_or(0));
    };
    // The statistics table and the math mount one frame after the rest, in a task of their
    // own: the frame that laid out all of the first result at once (style of 156 elements,
    // layout of 201 objects) was the section's longest task, 20-22 ms CPU
    // (bench/sim_worker.mjs; docs/history/PERF_UI.md). The box keeps the placeholder's height
    // meanwhile (`.serving-results-partial`), so what is below moves once, as before.
    let rest = RwSignal::new(false);
    crate::ui::late::after_frames(REST_FRAMES, move || {
        rest.try_set(true);
    });
    let t = move |k: &'static str| move || state.tr(k);
    view! {
        <div class="serving-results" class:serving-results-partial=move || !rest.get()>
        <Summary sig=sig warm=warm />
        <div class="field">
            <label for="sv-metric">{t("sv_metric")}</label>
            <select id="sv-metric" on:change=on_metric>
                {LatencyMetric::ALL.iter().map(|m| {
                    let m = *m;
                    view! { <option value=m.id() selected=move || metric.get() == m>{move || state.tr(m.label_key())}</option> }
                }).collect_view()}
            </select>
        </div>
        <div class="chart-box">
            <ChartCanvas<LatencyRateChart>
                data=Signal::from(rate_chart)
                lang=state.lang
                dark=dark
                title=Signal::derive(move || state.tr("sv_chart_rate_title").to_string())
                test_id="chart-serving-rate"
            />
        </div>
        <div class="field">
            <label for="sv-gpu">{t("sv_series_gpu")}</label>
            <select id="sv-gpu" on:change=on_gpu>
                {move || names().into_iter().enumerate().map(|(i, n)| view! {
                    <option value=i.to_string() selected=move || gpu.get() == i>{n}</option>
                }).collect_view()}
            </select>
        </div>
        <div class="chart-box">
            <ChartCanvas<TimeSeriesChart>
                data=Signal::from(series_chart)
                lang=state.lang
                dark=dark
                title=Signal::derive(move || state.tr("sv_chart_series_title").to_string())
                test_id="chart-serving-series"
                hold=hold_series
            />
        </div>
        {move || rest.get().then(|| view! {
            <StatsTable sig=sig warm=warm />
            <DisaggTable sig=sig warm=warm />
            <MathPanel derivation=math testid="math-sv-step" />
        })}
        </div>
    }
}

/// Frames after the results mount before the statistics table and the math mount (in a task
/// queued from that frame): after the frame that lays out the summary, the selects and the
/// chart boxes.
const REST_FRAMES: u32 = 1;

/// Frames after the results mount before the time series is first drawn, in a task queued
/// from that frame: after the frame that lays the results out (1) and the task that draws the
/// rate chart once the charts are reported on screen (an `IntersectionObserver` task before
/// frame 2).
const SERIES_FIRST_FRAMES: u32 = 2;

/// Frames between the steps of [`rehearse_charts`]: the first step comes after the frame that
/// shows the job running.
const REHEARSE_FRAMES: u32 = 2;

/// While the worker runs the section's first job (the main thread idles for 0.3-3 s), the
/// charts are drawn on a small canvas that is never shown, in three tasks: an empty chart (the
/// canvas, the backend, the labels), the rate chart, the time series. Their drawing code (in
/// the late module, which V8 compiles lazily, a function at its first call) is compiled then,
/// not in the tasks that draw the first result: the rate chart's first drawing compiled 129
/// functions in a task of 15-27 ms CPU (docs/history/PERF_UI.md). Stops once a result is there.
fn rehearse_charts(sig: SimSignals, dark: bool, lang: Lang) {
    use crate::ui::late::after_frames as then;
    const SIZE: (u32, u32) = (320, 200);
    let Some(canvas) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.create_element("canvas").ok())
        .and_then(|c| c.dyn_into::<web_sys::HtmlCanvasElement>().ok())
    else {
        return;
    };
    let waiting = move || sig.view.try_with_untracked(Option::is_none) == Some(true);
    then(REHEARSE_FRAMES, move || {
        if !waiting() {
            return;
        }
        let empty = LatencyRateChart {
            empty_label: "…".to_string(),
            ..LatencyRateChart::default()
        };
        rehearse(&canvas, &empty, SIZE, dark, lang);
        then(REHEARSE_FRAMES, move || {
            if !waiting() {
                return;
            }
            rehearse(&canvas, &sample_rate_chart(), SIZE, dark, lang);
            then(REHEARSE_FRAMES, move || {
                if waiting() {
                    rehearse(&canvas, &sample_series_chart(), SIZE, dark, lang);
                }
            });
        });
    });
}

/// A rate chart of the usual shape (two GPUs, 12 rates, a knee, a target), never shown.
fn sample_rate_chart() -> LatencyRateChart {
    let series = (0..2)
        .map(|g| LatencyRateSeries {
            name: format!("GPU {g}"),
            points: (1..=12)
                .map(|i| {
                    let p50 = 40.0 * f64::from(1 + i * i);
                    (f64::from(i) * 0.5, p50, p50 * 2.0)
                })
                .collect(),
            knee: 5.0,
        })
        .collect();
    LatencyRateChart {
        series,
        target_ms: Some(500.0),
        x_title: "req/s".to_string(),
        y_title: "ms".to_string(),
        knee_label: "knee".to_string(),
        target_label: "target".to_string(),
        p50_label: "P50".to_string(),
        p99_label: "P99".to_string(),
        empty_label: String::new(),
    }
}

/// A time series of the usual shape (batch, queue, KV occupancy over 100 s), never shown.
fn sample_series_chart() -> TimeSeriesChart {
    TimeSeriesChart {
        points: (0..100)
            .map(|i| {
                let t = f64::from(i);
                (
                    t,
                    20.0 + (t * 0.3).sin() * 10.0,
                    (t - 50.0).max(0.0),
                    t / 200.0,
                )
            })
            .collect(),
        x_title: "s".to_string(),
        y_title: "requests".to_string(),
        y2_title: "%".to_string(),
        names: ["batch".to_string(), "queue".to_string(), "KV".to_string()],
        empty_label: String::new(),
    }
}

/// A counter that changes `frames` animation frames after each new result of `sig`: a chart
/// whose data reads the result untracked and this counter tracked is recomputed and drawn in
/// that later frame, not in the reply's task.
fn frames_after(sig: SimSignals, frames: u32) -> ReadSignal<u64> {
    let (tick, set_tick) = signal(0_u64);
    Effect::new(move |_| {
        sig.view.track();
        crate::ui::late::in_frame(frames, move || {
            set_tick.try_update(|n| *n = n.wrapping_add(1));
        });
    });
    tick
}

/// One sentence per GPU: saturation, the analytic estimate, the highest rate meeting the
/// targets; the GPUs that could not be simulated; a partial-run note.
#[component]
fn Summary(sig: SimSignals, warm: Trigger) -> impl IntoView {
    let state = use_app();
    let lines = move || -> Vec<String> {
        warm.track();
        let lang = state.lang.get();
        sig.view.with(|v| {
            let Some(v) = v else { return Vec::new() };
            let mut out: Vec<String> = v
                .gpus
                .iter()
                .map(|g| {
                    let key = if g.max_rate_meeting_targets.is_some() {
                        "sv_summary"
                    } else {
                        "sv_summary_none"
                    };
                    fill(
                        crate::core::base::tr(lang, key),
                        &[
                            ("gpu", &g.name),
                            ("sat", &crate::core::base::fmt_sig(g.saturation_rate)),
                            ("est", &crate::core::base::fmt_sig(g.analytic_rate)),
                            (
                                "ok",
                                &g.max_rate_meeting_targets
                                    .map(crate::core::base::fmt_sig)
                                    .unwrap_or_default(),
                            ),
                        ],
                    )
                })
                .collect();
            out.extend(v.errors.iter().map(|(g, e)| format!("{g}: {e}")));
            if v.gpus.iter().any(|g| g.partial) {
                out.push(crate::core::base::tr(lang, "sv_partial").to_string());
            }
            out.extend(v.gpus.iter().flat_map(|g| g.notes.iter().cloned()));
            // A note every GPU carries (the engine's) is said once.
            let mut seen = std::collections::HashSet::new();
            out.retain(|l| seen.insert(l.clone()));
            out
        })
    };
    view! {
        <ul class="serving-summary" data-testid="serving-summary">
            {move || lines().into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}
        </ul>
    }
}

/// `vllm bench serve`'s statistics at the chosen rate, one column per GPU.
#[component]
fn StatsTable(sig: SimSignals, warm: Trigger) -> impl IntoView {
    let state = use_app();
    let table = move || {
        warm.track();
        let lang = state.lang.get();
        sig.view
            .with(|v| v.as_ref().map(|v: &ViewData| stats_table(v, lang)))
    };
    view! {
        <div class="table-scroll" tabindex="0">
            <table class="serving-stats" data-testid="serving-stats">
                <caption>{move || state.tr("sv_stats_title")}</caption>
                {move || table().map(|(head, rows)| view! {
                    <thead><tr>{head.into_iter().map(|h| view! { <th scope="col">{h}</th> }).collect_view()}</tr></thead>
                    <tbody>
                        {rows.into_iter().map(|r| {
                            let mut cells = r.into_iter();
                            let name = cells.next().unwrap_or_default();
                            view! {
                                <tr>
                                    <th scope="row"><code>{name}</code></th>
                                    {cells.map(|c| view! { <td class="num">{c}</td> }).collect_view()}
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                })}
            </table>
        </div>
    }
}
