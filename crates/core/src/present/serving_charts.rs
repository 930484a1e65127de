//! The serving section's two charts and its statistics table, prepared from a
//! [`ServingView`] with translated strings. Pure and cheap: the page calls these on the main
//! thread (never the simulator itself, which runs in the worker).

use crate::base::i18n::{tr, Lang};
use crate::base::units::fmt_sig;
use crate::present::serving::{RatePoint, ServingView, P50P99};
use serde::{Deserialize, Serialize};

/// Which latency the rate chart shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum LatencyMetric {
    /// Time to first token.
    #[default]
    Ttft,
    /// Time per output token.
    Tpot,
    /// Inter-token latency.
    Itl,
    /// End-to-end latency.
    E2el,
}

impl LatencyMetric {
    /// Every metric, in display order.
    pub const ALL: &'static [LatencyMetric] = &[
        LatencyMetric::Ttft,
        LatencyMetric::Tpot,
        LatencyMetric::Itl,
        LatencyMetric::E2el,
    ];

    /// vLLM's name (`ttft`, `tpot`, `itl`, `e2el`).
    pub const fn id(self) -> &'static str {
        match self {
            LatencyMetric::Ttft => "ttft",
            LatencyMetric::Tpot => "tpot",
            LatencyMetric::Itl => "itl",
            LatencyMetric::E2el => "e2el",
        }
    }

    /// Translation key of its name.
    pub const fn label_key(self) -> &'static str {
        match self {
            LatencyMetric::Ttft => "sv_metric_ttft",
            LatencyMetric::Tpot => "sv_metric_tpot",
            LatencyMetric::Itl => "sv_metric_itl",
            LatencyMetric::E2el => "sv_metric_e2el",
        }
    }

    /// The statistic of a point.
    pub fn of(self, p: &RatePoint) -> P50P99 {
        match self {
            LatencyMetric::Ttft => p.ttft,
            LatencyMetric::Tpot => p.tpot,
            LatencyMetric::Itl => p.itl,
            LatencyMetric::E2el => p.e2el,
        }
    }
}

/// One GPU's line on the rate chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyRateSeries {
    /// GPU name.
    pub name: String,
    /// (rate req/s, P50 ms, P99 ms) per swept rate.
    pub points: Vec<(f64, f64, f64)>,
    /// The simulated saturation rate, req/s (the knee).
    pub knee: f64,
}

/// Latency percentiles against request rate, with its translated strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct LatencyRateChart {
    /// One series per GPU.
    pub series: Vec<LatencyRateSeries>,
    /// The P99 target of this metric, ms (TTFT and TPOT only).
    pub target_ms: Option<f64>,
    /// X axis title.
    pub x_title: String,
    /// Y axis title.
    pub y_title: String,
    /// Label of the knee marker ("saturation").
    pub knee_label: String,
    /// Label of the target line.
    pub target_label: String,
    /// Legend words: P50 line, P99 band.
    pub p50_label: String,
    /// P99.
    pub p99_label: String,
    /// "No data".
    pub empty_label: String,
}

/// The time series of one run, with its translated strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TimeSeriesChart {
    /// (t seconds, batch, waiting, KV occupancy 0–1).
    pub points: Vec<(f64, f64, f64, f64)>,
    /// X axis title.
    pub x_title: String,
    /// Left axis title (requests).
    pub y_title: String,
    /// Right axis title (KV occupancy, %).
    pub y2_title: String,
    /// Legend: batch, queue, KV.
    pub names: [String; 3],
    /// "No data".
    pub empty_label: String,
}

/// The rate chart of one metric.
pub fn latency_rate_chart(v: &ServingView, metric: LatencyMetric, lang: Lang) -> LatencyRateChart {
    let series = v
        .gpus
        .iter()
        .map(|g| LatencyRateSeries {
            name: g.name.clone(),
            points: g
                .points
                .iter()
                .map(|p| {
                    let d = metric.of(p);
                    (p.rate, d.p50, d.p99)
                })
                .collect(),
            knee: g.saturation_rate,
        })
        .collect();
    let target_ms = match metric {
        LatencyMetric::Ttft => Some(v.targets_ms.0),
        LatencyMetric::Tpot => Some(v.targets_ms.1),
        _ => None,
    };
    LatencyRateChart {
        series,
        target_ms,
        x_title: tr(lang, "sv_axis_rate").to_string(),
        y_title: format!("{} (ms)", tr(lang, metric.label_key())),
        knee_label: tr(lang, "sv_knee").to_string(),
        target_label: tr(lang, "sv_target").to_string(),
        p50_label: "P50".into(),
        p99_label: "P99".into(),
        empty_label: tr(lang, "chart_no_data").to_string(),
    }
}

/// The time series of the GPU at `index`.
pub fn time_series_chart(v: &ServingView, index: usize, lang: Lang) -> TimeSeriesChart {
    let points = v
        .gpus
        .get(index)
        .map(|g| {
            g.series
                .iter()
                .map(|p| (p.t_s, p.batch as f64, p.waiting as f64, p.kv))
                .collect()
        })
        .unwrap_or_default();
    TimeSeriesChart {
        points,
        x_title: tr(lang, "sv_axis_time").to_string(),
        y_title: tr(lang, "sv_axis_requests").to_string(),
        y2_title: tr(lang, "sv_axis_kv").to_string(),
        names: [
            tr(lang, "sv_series_batch").to_string(),
            tr(lang, "sv_series_queue").to_string(),
            tr(lang, "sv_series_kv").to_string(),
        ],
        empty_label: tr(lang, "chart_no_data").to_string(),
    }
}

/// The statistics table at the chosen rate: a header row (the GPUs) and one row per
/// statistic, named as `vllm bench serve` prints them.
pub fn stats_table(v: &ServingView, lang: Lang) -> (Vec<String>, Vec<Vec<String>>) {
    let mut head = vec![tr(lang, "sv_stat").to_string()];
    head.extend(v.gpus.iter().map(|g| g.name.clone()));
    // fmt_sig writes zero in scientific form; a count of none reads "0".
    let f = |x: f64| {
        if x == 0.0 {
            "0".to_string()
        } else {
            fmt_sig(x)
        }
    };
    let mut out = vec![{
        let mut r = vec![tr(lang, "sv_stat_rate").to_string()];
        r.extend(v.gpus.iter().map(|g| {
            if g.chosen_rate.is_finite() {
                f(g.chosen_rate)
            } else {
                "inf".to_string()
            }
        }));
        r
    }];
    let names: Vec<&str> = v
        .gpus
        .first()
        .map(|g| g.chosen.iter().map(|(k, _)| k.as_str()).collect())
        .unwrap_or_default();
    for name in names {
        let mut r = vec![name.to_string()];
        r.extend(v.gpus.iter().map(|g| {
            g.chosen
                .iter()
                .find(|(k, _)| k == name)
                .map_or_else(String::new, |(_, x)| f(*x))
        }));
        out.push(r);
    }
    (head, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::catalog::Catalog;
    use crate::present::serving::run_job;
    use crate::scenario::Scenario;

    #[test]
    fn charts_and_table_follow_the_view() {
        let mut s = Scenario::default();
        s.views.serving.num_requests = 200;
        s.views.serving.warmup = 10;
        let v =
            run_job(&s.to_query(), Lang::En, Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
        let c = latency_rate_chart(&v, LatencyMetric::Tpot, Lang::Ko);
        assert_eq!(c.series.len(), v.gpus.len());
        assert_eq!(c.target_ms, Some(s.views.plan.tpot_ms));
        let first = &v.gpus[0];
        assert_eq!(c.series[0].points[0].1, first.points[0].tpot.p50);
        assert_eq!(c.series[0].knee, first.saturation_rate);
        assert!(latency_rate_chart(&v, LatencyMetric::Itl, Lang::En)
            .target_ms
            .is_none());
        let t = time_series_chart(&v, 0, Lang::En);
        assert_eq!(t.points.len(), first.series.len());
        assert!(time_series_chart(&v, 99, Lang::En).points.is_empty());
        let (head, rows) = stats_table(&v, Lang::En);
        assert_eq!(head.len(), v.gpus.len() + 1);
        assert!(rows.iter().all(|r| r.len() == head.len()));
        let completed = rows
            .iter()
            .find(|r| r[0] == "completed")
            .cloned()
            .unwrap_or_default();
        let done = first
            .chosen
            .iter()
            .find(|(k, _)| k == "completed")
            .map(|p| p.1);
        assert_eq!(Some(completed[1].clone()), done.map(fmt_sig));
        assert!(done.is_some_and(|d| d > 0.0));
        assert!(rows.iter().flatten().all(|c| !c.contains("e0")), "{rows:?}");
    }
}
