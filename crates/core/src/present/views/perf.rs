//! The performance model per compared GPU: latency, throughput, cost and energy at the
//! operating point, the tensor-parallel sweep, cost bars and latency–throughput curves.

use super::common::{perf_workload, ViewGpu};
use crate::base::error::CalcError;
use crate::base::i18n::{fill, tr, Lang};
use crate::base::units::fmt_sig;
use crate::base::units::Seconds;
use crate::calc::calibration::{self, Metric};
use crate::calc::perf::{self, PerfReport};
use crate::model::ModelDesc;
use crate::present::series::{self, CostBar, CostBars, CostMetric, LatencyThroughput};
use crate::scenario::{EffField, Scenario};

/// The performance model for one compared GPU at the scenario's TP degree.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfRow {
    /// Stable GPU key.
    pub key: String,
    /// Display name.
    pub name: String,
    /// GPUs per replica.
    pub tp: u64,
    /// Sequences served together (0 = none fits; the model then runs at 1 and the cost is
    /// not shown).
    pub batch: u64,
    /// Price per GPU-hour used (override, else catalog), US dollars.
    pub price_usd_per_gpu_hour: Option<f64>,
    /// Whether the price is the user's override.
    pub price_overridden: bool,
    /// The report, or why it could not be computed.
    pub result: Result<PerfReport, CalcError>,
    /// TTFT range from the calibration residuals (p10–p90), ms.
    pub ttft_range_ms: (f64, f64),
    /// TPOT range, ms.
    pub tpot_range_ms: (f64, f64),
    /// End-to-end latency range, ms.
    pub e2e_range_ms: (f64, f64),
}

/// The sentence the performance section shows when its efficiencies are not the calibration
/// defaults (a link carrying a benchmark fit, or an edit): every changed efficiency with its
/// value and its default. `None` at the defaults.
pub fn custom_efficiencies_note(s: &Scenario, lang: Lang) -> Option<String> {
    let d = crate::calc::perf::Efficiencies::default();
    let items: Vec<String> = EffField::ALL
        .iter()
        .filter(|f| f.get(&s.views.eff).to_bits() != f.get(&d).to_bits())
        .map(|f| {
            let unit = if f.unit_key() == "view_unit_ms" {
                format!(" {}", tr(lang, "view_unit_ms"))
            } else {
                String::new()
            };
            fill(
                tr(lang, "view_perf_eff_custom_item"),
                &[
                    ("label", tr(lang, f.label_key())),
                    ("value", &format!("{}{unit}", fmt_sig(f.get(&s.views.eff)))),
                    ("default", &format!("{}{unit}", fmt_sig(f.get(&d)))),
                ],
            )
        })
        .collect();
    (!items.is_empty()).then(|| {
        fill(
            tr(lang, "view_perf_eff_custom"),
            &[("list", &items.join("; "))],
        )
    })
}

/// The performance model for every compared GPU at the scenario's batch (the operating point).
pub fn perf_rows(m: &ModelDesc, s: &Scenario, gpus: &[ViewGpu]) -> Vec<PerfRow> {
    rows_at(m, s, gpus, |_| s.perf.batch)
}

/// The performance model for every compared GPU serving as many requests at once as its
/// memory allows ([`ViewGpu::concurrent_requests`], at least 1): the batch the cost of a
/// token depends on (the chapter: memory budget and compute bottleneck are one loop).
pub fn cost_rows(m: &ModelDesc, s: &Scenario, gpus: &[ViewGpu]) -> Vec<PerfRow> {
    rows_at(m, s, gpus, |g| g.concurrent_requests)
}

fn rows_at(
    m: &ModelDesc,
    s: &Scenario,
    gpus: &[ViewGpu],
    batch: impl Fn(&ViewGpu) -> u64,
) -> Vec<PerfRow> {
    gpus.iter()
        .map(|g| {
            let requested = batch(g);
            let wl = perf_workload(s, requested.max(1));
            let over = s.views.price(&g.key);
            let price = over.or(g.accelerator.price.as_ref().map(|p| p.usd_per_hour));
            let result = perf::evaluate(m, &g.accelerator, &wl, &s.views.eff, price);
            let range = |metric: Metric, v: Option<f64>| {
                v.map_or((f64::NAN, f64::NAN), |v| calibration::range_for(metric, v))
            };
            let ok = result.as_ref().ok();
            PerfRow {
                key: g.key.clone(),
                name: g.accelerator.name.clone(),
                tp: wl.tp,
                batch: requested,
                price_usd_per_gpu_hour: price,
                price_overridden: over.is_some(),
                ttft_range_ms: range(Metric::Ttft, ok.map(|r| r.ttft.ms())),
                tpot_range_ms: range(Metric::Tpot, ok.map(|r| r.tpot.ms())),
                e2e_range_ms: range(Metric::E2e, ok.map(|r| r.e2e.ms())),
                result,
            }
        })
        .collect()
}

/// The tensor-parallel sweep of one compared GPU ([`perf::tp_sweep`] at the scenario's batch,
/// lengths and precisions; the scenario's TP is the chosen row).
#[derive(Debug, Clone, PartialEq)]
pub struct TpTable {
    /// Stable GPU key.
    pub key: String,
    /// Display name.
    pub name: String,
    /// One row per TP degree, ascending.
    pub rows: Vec<perf::TpRow>,
    /// The rows' notes, each once, in order of first appearance, without the per-row "batch
    /// does not fit" (the table marks it in the row).
    pub notes: Vec<perf::PerfNote>,
}

/// The tensor-parallel sweep for every compared GPU.
pub fn tp_tables(m: &ModelDesc, s: &Scenario, gpus: &[ViewGpu]) -> Vec<TpTable> {
    let wl = perf_workload(s, s.perf.batch.max(1));
    gpus.iter()
        .map(|g| {
            let price =
                s.views
                    .price(&g.key)
                    .or(g.accelerator.price.as_ref().map(|p| p.usd_per_hour));
            let rows = perf::tp_sweep(m, &g.accelerator, &wl, &s.views.eff, price);
            let mut notes: Vec<perf::PerfNote> = Vec::new();
            for n in rows
                .iter()
                .filter_map(|r| r.result.as_ref().ok())
                .flat_map(|r| &r.notes)
            {
                if !matches!(n, perf::PerfNote::BatchDoesNotFit { .. }) && !notes.contains(n) {
                    notes.push(n.clone());
                }
            }
            TpTable {
                key: g.key.clone(),
                name: g.accelerator.name.clone(),
                rows,
                notes,
            }
        })
        .collect()
}

/// Cost bars ($ per million output tokens) from the performance rows.
pub fn cost_bars(rows: &[PerfRow]) -> CostBars {
    CostBars {
        bars: rows
            .iter()
            .filter_map(|r| {
                let rep = r.result.as_ref().ok()?;
                let price = r.price_usd_per_gpu_hour.unwrap_or(f64::NAN) * r.tp as f64;
                let serves = rep.fits && r.batch > 0;
                Some(CostBar::new(
                    format!("{} × {}", r.name, r.tp),
                    price,
                    if serves { rep.batch } else { 0 },
                    serves.then_some(rep.output_tokens_per_s),
                ))
            })
            .collect(),
        metric: CostMetric::PerMillionTokens,
    }
}

/// Largest batch the latency–throughput curve is sampled to.
pub const CURVE_MAX_BATCH: u64 = 4096;

/// The latency–throughput curves: per GPU, tokens/s per user (1 / TPOT) against total
/// tokens/s (batch / TPOT) for batch 1 … the largest batch memory allows (at most
/// [`CURVE_MAX_BATCH`]), with the scenario's batch as the operating point.
pub fn latency_curves(m: &ModelDesc, s: &Scenario, gpus: &[ViewGpu]) -> LatencyThroughput {
    let base = perf_workload(s, 1);
    let curves = gpus
        .iter()
        .map(|g| {
            let max_b = perf::max_batch_for(m, &g.accelerator, &base).min(CURVE_MAX_BATCH);
            series::lt_curve(
                format!("{} × {}", g.accelerator.name, base.tp),
                max_b,
                s.perf.batch,
                |b| {
                    perf::evaluate(m, &g.accelerator, &perf_workload(s, b), &s.views.eff, None)
                        .ok()
                        .map(|r| r.tpot)
                        .filter(|t: &Seconds| t.0.is_finite() && t.0 > 0.0)
                },
            )
        })
        .collect();
    LatencyThroughput { curves }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::i18n::Lang;
    use crate::hardware::catalog::Catalog;
    use crate::present::views::common::test_util::{gpus, model};

    #[test]
    fn perf_rows_cost_and_curves() {
        let mut s = Scenario::default();
        s.perf.batch = 4;
        let m = model(&s);
        let g = gpus(&["a10g", "l40s"]);
        let rows = perf_rows(&m, &s, &g);
        assert_eq!(rows.len(), 2);
        for r in &rows {
            let rep = r.result.as_ref().unwrap_or_else(|e| panic!("{e}"));
            assert!(r.tpot_range_ms.0 <= rep.tpot.ms() && rep.tpot.ms() <= r.tpot_range_ms.1);
            // $/M tokens = price × tp / 3600 / tokens/s × 10^6.
            if let (Some(p), Some(c)) = (r.price_usd_per_gpu_hour, rep.usd_per_million_tokens) {
                let want = p / 3600.0 / rep.output_tokens_per_s * 1e6;
                assert!((c - want).abs() < 1e-9 * want.max(1.0));
            }
        }
        // The chapter's conclusion (WORKED_EXAMPLES §3): the L40S costs more per hour but holds
        // 16 requests to the A10G's 4, so each token is cheaper on it.
        let r = crate::present::report::evaluate(&s, Catalog::builtin())
            .unwrap_or_else(|e| panic!("{e}"));
        let vg = ViewGpu::from_report(&r);
        assert_eq!(
            vg.iter().map(|g| g.concurrent_requests).collect::<Vec<_>>(),
            vec![4, 16]
        );
        let cr = cost_rows(&m, &s, &vg);
        let mtok = |i: usize| {
            cr[i]
                .result
                .as_ref()
                .ok()
                .and_then(|r| r.usd_per_million_tokens)
                .unwrap_or(f64::NAN)
        };
        assert!(mtok(1) < mtok(0), "L40S {} vs A10G {}", mtok(1), mtok(0));
        // A price override flows into the cost.
        s.views.set_price("l40s", Some(10.0));
        let over = perf_rows(&m, &s, &g);
        assert_eq!(over[1].price_usd_per_gpu_hour, Some(10.0));
        assert!(over[1].price_overridden);
        let bars = cost_bars(&over);
        assert_eq!(bars.bars.len(), 2);
        // Curves: throughput rises with batch, per-user speed falls.
        let lt = latency_curves(&m, &s, &g);
        assert_eq!(lt.curves.len(), 2);
        for c in &lt.curves {
            assert!(c.points.len() > 1);
            for w in c.points.windows(2) {
                assert!(w[1].total_tokens_per_s >= w[0].total_tokens_per_s);
                assert!(w[1].per_user_tokens_per_s <= w[0].per_user_tokens_per_s);
            }
            assert_eq!(c.operating.map(|o| o.batch), Some(4));
        }
    }

    #[test]
    fn tp_tables_per_gpu_with_notes() {
        // Default scenario (its TP), on an A10G without a compute peak and the L40S: one table
        // each, the scenario's degree marked once, and the "no published peak" note under the
        // A10G's table only.
        let mut s = Scenario::default();
        s.perf.batch = 2;
        let m = model(&s);
        let g =
            crate::present::views::common::test_util::without_16bit_peak(gpus(&["a10g", "l40s"]));
        let t = tp_tables(&m, &s, &g);
        assert_eq!(
            t.iter().map(|x| x.key.as_str()).collect::<Vec<_>>(),
            ["a10g", "l40s"]
        );
        for tb in &t {
            let chosen: Vec<u64> = tb.rows.iter().filter(|r| r.chosen).map(|r| r.tp).collect();
            assert_eq!(chosen, [u64::from(s.tp.max(1))], "{}", tb.key);
            assert!(tb.rows.windows(2).all(|w| w[0].tp < w[1].tp));
            assert!(tb.rows.len() > 1, "{}", tb.key);
            assert!(!tb
                .notes
                .iter()
                .any(|n| matches!(n, perf::PerfNote::BatchDoesNotFit { .. })));
        }
        let no_peak = |tb: &TpTable| {
            tb.notes
                .iter()
                .any(|n| matches!(n, perf::PerfNote::NoPeak { .. }))
        };
        assert!(no_peak(&t[0]));
        assert!(!no_peak(&t[1]));
        // The per-GPU rows carry the same note, in both languages.
        let rows = perf_rows(&m, &s, &g);
        let rep = rows[0].result.as_ref().unwrap_or_else(|e| panic!("{e}"));
        assert!(rep.compute_untimed());
        for n in &rep.notes {
            assert_ne!(n.message(Lang::En), n.message(Lang::Ko));
        }
    }
}
