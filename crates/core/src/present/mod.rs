//! Layer 6: what is shown. The one entry point [`report::evaluate`] (a scenario and a catalog
//! in, a [`report::Report`] out), the chart series ([`series`]), the analysis views' data
//! ([`views`]), the teaching texts ([`explain`]), the CSV/JSON exports ([`export`]), the
//! first screen's text ([`first_screen`]) and the page's list of sections ([`sections`]).
//!
//! Invariant: the top of the core; imports any layer below, and nothing in the core imports it.
//! A new chart gets its prepared data here and its drawing in `crate::charts`.

pub mod explain;
pub mod export;
pub mod first_embed;
pub mod first_screen;
pub mod page;
pub mod plan_search;

/// Links, in a wasm binary, every translation row of the shell (`i18n::link_shell`) and the
/// whole table of configuration defaults (`model::config::defaults::link_full`): the page's
/// shell, the late module and the simulator worker call it before anything else (the
/// first-answer module calls [`link_first`] instead). Natively everything is always there.
pub fn link_page() {
    crate::base::i18n::link_shell();
    crate::model::config::defaults::link_full();
}

/// Links only what the first-answer module (`crates/first/src/main.rs`) carries: the first screen's
/// translation rows (it reads no config: the presets' models are stored,
/// `model::presets_first`). A row it lacks makes [`FirstScreen::json`] decline the link.
pub fn link_first() {
    crate::base::i18n::link_first();
}

/// Links what the embeds' first-answer module (`crates/first/src/embed.rs`) carries: an
/// embedded widget's translation rows, its chart's labels included (it reads no config either).
/// A row it lacks makes [`EmbedScreen::json`] decline the link.
pub fn link_embed() {
    crate::base::i18n::link_embed();
}
pub mod report;
pub mod sections;
pub mod series;
pub mod serving;
pub mod serving_bench;
pub mod serving_charts;
pub mod serving_disagg;
pub mod serving_load;
pub mod serving_plan;
pub mod views;

// The face of this layer: what the UI, the charts and the CLI use (they name no module
// inside a layer; `tests/layers.rs` checks it).
pub use explain::{explain as explain_section, Section};
pub use export::{to_csv, to_json};
pub use first_embed::{EmbedChart, EmbedScreen};
pub use first_screen::{
    fit_comparisons, fmt_mib_exact, log2_pos, read_query, CardsText, FirstScreen, FitRowText,
    GpuText, CARD_MATH, CONCURRENCY_SLIDER_LOG2, CONTEXT_SLIDER_LOG2, FIT_PARTS,
};
pub use page::{
    fmt_ms, fmt_ms_range, fmt_num, link_query, page_url, replace_link_notice, same_scenario,
    History, Outcome, Theme,
};
pub use plan_search::{
    describe_candidate, run_search_job, search_spec, search_view, ParetoChart, ParetoPoint,
    SearchRow, SearchView,
};
pub use report::{
    evaluate, evaluate_with, evaluate_with_gpus, gpu_parts, model_of, GpuPart, GpuReport,
    ModelChoices, ModelPart, Report, Verdict,
};
pub use sections::{HeightBand, LatePiece, Module, PageSection, HEIGHT_BANDS};
pub use series::{
    BatchLine, BatchPoint, BatchSeries, Bound, CostBar, CostBars, CostMetric, KvSeries,
    LatencyThroughput, LtCurve, LtPoint, MemoryBar, MemoryBars, PointKind, RooflineData, WorkPoint,
    MATMUL_PRESETS,
};
pub use serving::{
    run_job, run_job_json, run_job_json_with, JobKind, RatePoint, ServingGpu, ServingJob,
    ServingView, WorkerReply,
};
pub use serving_bench::{bench_scenario, run_bench_job, BenchKnob, BenchRow, BenchView};
pub use serving_charts::{
    latency_rate_chart, stats_table, time_series_chart, LatencyMetric, LatencyRateChart,
    LatencyRateSeries, TimeSeriesChart,
};
pub use serving_disagg::{disagg_table, link_label_key, DISAGG_ROWS};
pub use serving_plan::{plan_sim_settings, run_plan_job, PlanSimView};
pub use views::{
    accuracy_scatter, accuracy_stats, cost_bars, cost_rows, custom_efficiencies_note, largest_view,
    latency_curves, matmul_view, metric_key, perf_rows, planner_gpus_per_node, planner_view,
    roofline_view, tp_tables, AccStatRow, AccuracyScatter, LargestRow, LargestView, MatmulView,
    OpsShown, PerfRow, PlanCostChart, PlanLoad, PlannerView, PointDetail, RooflineView, TpTable,
    ViewGpu,
};
pub use views::{
    plan_lengths, run_requests, simulated_plan, SimPlanSettings, SimulatedPlan, MAX_RUN_REQUESTS,
    MIN_SPAN_S,
};
