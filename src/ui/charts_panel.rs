//! The charts section: the memory, KV, batch and cost charts, each drawn by
//! [`ChartCanvas`] from series prepared in core (`Report::memory_bars`, …), with a short
//! explanation beside it.

use crate::core::present::Report;
use crate::core::present::Section;
use crate::core::present::{BatchSeries, CostBars, CostMetric, KvSeries, MemoryBars};
use crate::ui::chart_canvas::ChartCanvas;
use crate::ui::explanation::Explanation;
use crate::ui::in_view::{gated_memo, section_in_view};
use crate::ui::state::{use_app, AppState};
use crate::ui::view_common::is_dark;
use leptos::prelude::*;

/// Which charts a [`ChartsPanel`] shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartSet {
    /// All of them (the full page).
    All,
    /// The memory bars only.
    Memory,
    /// The KV chart only.
    Kv,
    /// The batch chart only.
    Batch,
    /// The cost chart only.
    Cost,
}

/// A memo of one series from the last good report (the chart redraws only when it changes).
fn series<T>(state: AppState, f: fn(&Report) -> T, empty: fn() -> T) -> Memo<T>
where
    T: Clone + PartialEq + Send + Sync + 'static,
{
    gated_memo(section_in_view(), move || {
        state
            .outcome
            .with(|o| o.report.as_ref().map(f).unwrap_or_else(empty))
    })
}

/// The charts of the results.
#[component]
pub fn ChartsPanel(
    /// Which charts to show.
    #[prop(optional)]
    only: Option<ChartSet>,
) -> impl IntoView {
    let state = use_app();
    let set = only.unwrap_or(ChartSet::All);
    // One chart alone is an embedded widget's: drawn from the first frame.
    let eager = only.is_some();
    let show = move |c: ChartSet| set == ChartSet::All || set == c;
    let dark = is_dark(state);
    let lang = state.lang;
    let title = move |k: &'static str| Signal::derive(move || state.tr(k).to_string());
    let memory = show(ChartSet::Memory).then(|| {
        let data: Signal<MemoryBars> = Signal::from(series(state, Report::memory_bars, MemoryBars::default));
        view! {
            <div class="chart-box">
                <ChartCanvas<MemoryBars> data=data lang=lang dark=dark eager=eager title=title("ui_chart_memory") test_id="chart-memory" />
                <Explanation section=Section::Fit />
            </div>
        }
    });
    let kv = show(ChartSet::Kv).then(|| {
        let data: Signal<KvSeries> = Signal::from(series(state, Report::kv_series, KvSeries::default));
        view! {
            <div class="chart-box">
                <ChartCanvas<KvSeries> data=data lang=lang dark=dark eager=eager title=title("ui_chart_kv") test_id="chart-kv" />
                <Explanation section=Section::Kv />
            </div>
        }
    });
    let batch = show(ChartSet::Batch).then(|| {
        let data: Signal<BatchSeries> = Signal::from(series(state, Report::batch_series, BatchSeries::default));
        view! {
            <div class="chart-box">
                <ChartCanvas<BatchSeries> data=data lang=lang dark=dark eager=eager title=title("ui_chart_batch") test_id="chart-batch" />
                <Explanation section=Section::Batch />
            </div>
        }
    });
    let cost = show(ChartSet::Cost).then(|| {
        let data: Signal<CostBars> = Signal::from(series(state, Report::cost_bars, || CostBars {
            bars: Vec::new(),
            metric: CostMetric::PerRequestHour,
        }));
        view! {
            <div class="chart-box">
                <ChartCanvas<CostBars> data=data lang=lang dark=dark eager=eager title=title("ui_chart_cost") test_id="chart-cost" />
                <Explanation section=Section::Cost />
            </div>
        }
    });
    view! {
        <section class="panel charts" aria-labelledby="charts-title" data-testid="charts">
            <h2 id="charts-title">{move || state.tr("ui_section_charts")}</h2>
            <div class="chart-grid">{memory}{kv}{batch}{cost}</div>
        </section>
    }
}
