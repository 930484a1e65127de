//! The accuracy table: every mapped row's prediction and error, the statistics on the training
//! and test sets per metric, the range factors a prediction carries, and their rendering.

use super::predict::{predict, ready};
use super::rows::{CalRow, Metric, Skipped};
use super::stats::{stats, ErrorStats};
use crate::base::quantile::quantile;
use crate::calc::perf::Efficiencies;
use crate::hardware::catalog::Catalog;
use serde::{Deserialize, Serialize};

/// One row of the accuracy table: predicted against measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccuracyRow {
    /// The mapped row.
    pub row: CalRow,
    /// Predicted value (same unit as measured).
    pub predicted: f64,
    /// Low end of the prediction range (p10 of the training residuals).
    pub predicted_low: f64,
    /// High end of the prediction range (p90 of the training residuals).
    pub predicted_high: f64,
    /// predicted / measured − 1.
    pub rel_error: f64,
}

/// Range factors per metric: measured / predicted at the 10th and 90th percentile of the
/// training rows, applied to a point estimate to show a range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RangeFactor {
    /// Metric.
    pub metric: Metric,
    /// 10th percentile of measured / predicted.
    pub low: f64,
    /// 90th percentile of measured / predicted.
    pub high: f64,
}

/// The full accuracy report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccuracyReport {
    /// Efficiencies used.
    pub efficiencies: Efficiencies,
    /// Per-row predicted vs measured.
    pub rows: Vec<AccuracyRow>,
    /// Per metric: (metric, train stats, test stats).
    pub stats: Vec<(Metric, ErrorStats, ErrorStats)>,
    /// Prediction range factors.
    pub ranges: Vec<RangeFactor>,
    /// Skipped rows with reasons.
    pub skipped: Vec<Skipped>,
    /// Data rows in the file.
    pub total_rows: usize,
}

/// Predicted against measured for every mapped row, error statistics per metric on the training
/// and test rows, and prediction-range factors, at the given efficiencies.
pub fn accuracy_table_with(catalog: &Catalog, eff: &Efficiencies) -> AccuracyReport {
    let (rd, set) = ready(catalog);
    let preds: Vec<f64> = rd
        .rows
        .iter()
        .zip(&rd.prepared)
        .map(|(r, p)| predict(p, r.metric, eff))
        .collect();
    let mut ranges = Vec::new();
    let mut stats_v = Vec::new();
    for &m in Metric::ALL {
        let sel = |test: bool| -> Vec<f64> {
            rd.rows
                .iter()
                .zip(&preds)
                .filter(|(r, _)| {
                    r.metric == m && r.test == test && (test || !r.derived || m == Metric::E2e)
                })
                .map(|(r, p)| p / r.measured - 1.0)
                .collect()
        };
        let (tr, te) = (sel(false), sel(true));
        if tr.is_empty() && te.is_empty() {
            continue;
        }
        stats_v.push((m, stats(&tr), stats(&te)));
        let mut ratio: Vec<f64> = rd
            .rows
            .iter()
            .zip(&preds)
            .filter(|(r, _)| r.metric == m && !r.test)
            .map(|(r, p)| r.measured / p)
            .collect();
        if !ratio.is_empty() {
            ranges.push(RangeFactor {
                metric: m,
                low: quantile(&mut ratio, 0.1),
                high: quantile(&mut ratio, 0.9),
            });
        }
    }
    let rows = rd
        .rows
        .into_iter()
        .zip(preds)
        .map(|(row, p)| {
            let f = ranges.iter().find(|f| f.metric == row.metric);
            AccuracyRow {
                predicted_low: f.map_or(p, |f| p * f.low.min(1.0)),
                predicted_high: f.map_or(p, |f| p * f.high.max(1.0)),
                rel_error: p / row.measured - 1.0,
                predicted: p,
                row,
            }
        })
        .collect();
    AccuracyReport {
        efficiencies: *eff,
        rows,
        stats: stats_v,
        ranges,
        skipped: set.skipped,
        total_rows: set.total_rows,
    }
}

/// [`accuracy_table_with`] on the built-in catalog at the default (fitted) efficiencies: the
/// data behind the app's "How accurate is this?" view.
pub fn accuracy_table() -> AccuracyReport {
    accuracy_table_with(Catalog::builtin(), &Efficiencies::default())
}

/// Prediction-range factors per metric at the default efficiencies (measured / predicted at
/// the 10th and 90th percentile of the training rows), computed once.
pub fn ranges() -> &'static [RangeFactor] {
    static R: std::sync::OnceLock<Vec<RangeFactor>> = std::sync::OnceLock::new();
    R.get_or_init(|| accuracy_table().ranges)
}

/// The range `[low, high]` around a point prediction of a metric (the point itself when the
/// metric has no calibration rows).
pub fn range_for(metric: Metric, point: f64) -> (f64, f64) {
    match ranges().iter().find(|f| f.metric == metric) {
        Some(f) => (point * f.low.min(1.0), point * f.high.max(1.0)),
        None => (point, point),
    }
}

/// Renders the accuracy statistics as a plain-text table.
pub fn render_stats(r: &AccuracyReport) -> String {
    let mut s = String::from("metric                 train n  median    p90   bias | test n  median    p90   bias | target\n");
    for (m, tr, te) in &r.stats {
        s.push_str(&format!(
            "{:<22} {:>7} {:>6.1}% {:>5.1}% {:>+5.1}% | {:>6} {:>6.1}% {:>5.1}% {:>+5.1}% | {}\n",
            m.id(),
            tr.n,
            tr.median * 100.0,
            tr.p90 * 100.0,
            tr.bias * 100.0,
            te.n,
            te.median * 100.0,
            te.p90 * 100.0,
            te.bias * 100.0,
            m.target()
                .map_or("-".into(), |t| format!("≤ {:.0}%", t * 100.0))
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::quantile::quantile;
    use crate::hardware::catalog::Catalog;

    fn cat() -> &'static Catalog {
        Catalog::builtin()
    }

    #[test]
    fn accuracy_table_report() {
        let r = accuracy_table_with(cat(), &Efficiencies::default());
        let mapped = r.rows.iter().filter(|a| !a.row.derived).count();
        println!(
            "calibration rows: {} in file, {} mapped, {} skipped\n{}",
            r.total_rows,
            mapped,
            r.skipped.len(),
            render_stats(&r)
        );
        for f in &r.ranges {
            println!("range {}: × {:.2} – × {:.2}", f.metric.id(), f.low, f.high);
        }
        assert!(r
            .rows
            .iter()
            .all(|a| a.predicted.is_finite() && a.predicted > 0.0));
        assert!(r
            .rows
            .iter()
            .all(|a| a.predicted_low <= a.predicted && a.predicted <= a.predicted_high));
        // Each metric's target on the held-out rows; reached by the fit (see docs/calibration.md).
        for (m, _, test) in &r.stats {
            if let Some(t) = m.target() {
                assert!(
                    test.median <= t,
                    "{}: held-out median {:.3} > {t}",
                    m.id(),
                    test.median
                );
            }
        }
    }

    #[test]
    fn no_drift_with_batch_against_tensorrt_llm() {
        // The serving simulator's vLLM steps were found 18-39% fast at 256-1,000 running
        // requests (the notebook docs/history/SERVING_SIMULATOR.md tells how). This checks that the fitted roofline itself
        // does not drift at large batches for the engine most large-batch rows come from, so that
        // gap is an engine (or model) difference. Median signed error, measured rows only.
        let r = accuracy_table_with(cat(), &Efficiencies::default());
        let mut signed: Vec<f64> = r
            .rows
            .iter()
            .filter(|a| {
                a.row.engine == "TensorRT-LLM"
                    && a.row.metric == Metric::Throughput
                    && !a.row.derived
                    && a.row.batch >= 32
            })
            .map(|a| a.rel_error)
            .collect();
        let n = signed.len();
        let median = quantile(&mut signed, 0.5);
        println!(
            "TensorRT-LLM throughput rows at batch >= 32: {n}, median signed error {median:+.4}"
        );
        assert!(n >= 20, "too few large-batch rows to say anything: {n}");
        assert!(median.abs() <= 0.05, "median signed error {median:+.3}");
    }
}
