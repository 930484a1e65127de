//! "How accurate is this?": the calibration rows against the model's predictions, per
//! metric, and the error table.

use crate::base::i18n::{tr, Lang};
use crate::base::units::fmt_sig;
use crate::calc::calibration::{AccuracyReport, ErrorStats, Metric};
use serde::{Deserialize, Serialize};

/// One calibration row on the accuracy scatter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccPoint {
    /// Measured value (ms, or tok/s for throughput).
    pub measured: f64,
    /// Predicted value, same unit.
    pub predicted: f64,
    /// Held out of the fit.
    pub test: bool,
    /// Hover text: model, GPU, TP, batch, lengths, engine.
    pub label: String,
}

/// The accuracy scatter of one metric, with its translated strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccuracyScatter {
    /// The metric.
    pub metric: Metric,
    /// Points.
    pub points: Vec<AccPoint>,
    /// X axis title ("Measured (ms)").
    pub x_title: String,
    /// Y axis title ("Predicted (ms)").
    pub y_title: String,
    /// Legend: training rows.
    pub train_label: String,
    /// Legend: held-out rows.
    pub test_label: String,
    /// Legend: the y = x line.
    pub exact_label: String,
    /// Legend: the ±25 % band.
    pub band_label: String,
    /// "No data".
    pub empty_label: String,
}

/// Translation key of a metric's name.
pub const fn metric_key(m: Metric) -> &'static str {
    match m {
        Metric::Ttft => "perf_ttft",
        Metric::Tpot => "perf_tpot",
        Metric::E2e => "perf_e2e_latency",
        Metric::Throughput => "perf_output_tokens_per_s",
    }
}

/// Unit of a metric.
pub const fn metric_unit(m: Metric) -> &'static str {
    match m {
        Metric::Throughput => "tok/s",
        _ => "ms",
    }
}

/// The scatter for one metric from the accuracy report.
pub fn accuracy_scatter(r: &AccuracyReport, metric: Metric, lang: Lang) -> AccuracyScatter {
    let unit = metric_unit(metric);
    let points = r
        .rows
        .iter()
        .filter(|a| a.row.metric == metric)
        .filter(|a| a.row.measured.is_finite() && a.predicted.is_finite())
        .filter(|a| a.row.measured > 0.0 && a.predicted > 0.0)
        .map(|a| AccPoint {
            measured: a.row.measured,
            predicted: a.predicted,
            test: a.row.test,
            label: format!(
                "{} · {} × {} · B {} · {}/{} · {} · {} {} → {} {} ({:+.0}%)",
                a.row.model,
                a.row.gpu,
                a.row.tp,
                a.row.batch,
                a.row.input_len,
                a.row.output_len,
                a.row.engine,
                fmt_sig(a.row.measured),
                unit,
                fmt_sig(a.predicted),
                unit,
                a.rel_error * 100.0
            ),
        })
        .collect();
    AccuracyScatter {
        metric,
        points,
        x_title: format!("{} ({unit})", tr(lang, "view_acc_measured")),
        y_title: format!("{} ({unit})", tr(lang, "view_acc_predicted")),
        train_label: tr(lang, "view_acc_train").to_string(),
        test_label: tr(lang, "view_acc_test").to_string(),
        exact_label: tr(lang, "view_acc_exact").to_string(),
        band_label: tr(lang, "view_acc_band").to_string(),
        empty_label: tr(lang, "chart_no_data").to_string(),
    }
}

/// One row of the error table: a metric with its training and held-out statistics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AccStatRow {
    /// The metric.
    pub metric: Metric,
    /// Training rows.
    pub train: ErrorStats,
    /// Held-out rows.
    pub test: ErrorStats,
    /// The stated target for the held-out median, when there is one (fraction).
    pub target: Option<f64>,
    /// Whether the held-out median meets the target (`None` without a target or rows).
    pub meets: Option<bool>,
}

/// The error table.
pub fn accuracy_stats(r: &AccuracyReport) -> Vec<AccStatRow> {
    r.stats
        .iter()
        .map(|(m, tr, te)| AccStatRow {
            metric: *m,
            train: *tr,
            test: *te,
            target: m.target(),
            meets: m
                .target()
                .filter(|_| te.n > 0 && te.median.is_finite())
                .map(|t| te.median <= t),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::calibration;

    #[test]
    fn accuracy_scatter_and_stats() {
        let r = calibration::accuracy_table();
        let stats = accuracy_stats(&r);
        assert!(!stats.is_empty());
        for m in Metric::ALL {
            let sc = accuracy_scatter(&r, *m, Lang::Ko);
            let n = r.rows.iter().filter(|a| a.row.metric == *m).count();
            assert!(sc.points.len() <= n);
            assert!(sc
                .points
                .iter()
                .all(|p| p.measured > 0.0 && p.predicted > 0.0));
        }
    }
}
