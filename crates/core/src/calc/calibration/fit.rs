//! The fit: the efficiencies that minimise the mean over metrics of the median absolute
//! relative error on the training rows (coordinate descent over fixed grids, deterministic, no
//! external crates). The constants `calc::perf::FIT_*` are that optimum; a test re-runs the fit.

use super::predict::{predict, ready, Ready};
use super::rows::Metric;
use crate::base::quantile::quantile;
use crate::calc::perf::{self, Efficiencies};
use crate::hardware::catalog::Catalog;
use serde::{Deserialize, Serialize};

/// The fit objective on the training rows: mean over metrics of the median absolute relative
/// error, plus 0.1 × the mean over metrics of the mean absolute relative error (a tie-breaker
/// that keeps the search off flat stretches of the median).
fn objective(rd: &Ready, eff: &Efficiencies) -> f64 {
    let mut per_metric: Vec<(Metric, Vec<f64>)> = Vec::new();
    for (r, p) in rd.rows.iter().zip(&rd.prepared) {
        if r.test || r.derived {
            continue;
        }
        let e = (predict(p, r.metric, eff) / r.measured - 1.0).abs();
        match per_metric.iter_mut().find(|(m, _)| *m == r.metric) {
            Some((_, v)) => v.push(e),
            None => per_metric.push((r.metric, vec![e])),
        }
    }
    if per_metric.is_empty() {
        return f64::INFINITY;
    }
    let n = per_metric.len() as f64;
    let mut med = 0.0;
    let mut mean = 0.0;
    for (_, v) in &mut per_metric {
        mean += v.iter().sum::<f64>() / v.len() as f64;
        med += quantile(v, 0.5);
    }
    (med + 0.1 * mean) / n
}

/// The fitted parameters and the objective reached.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FitResult {
    /// The optimum.
    pub efficiencies: Efficiencies,
    /// Objective at the optimum.
    pub objective: f64,
    /// Coordinate-descent rounds run.
    pub rounds: usize,
}

fn grid(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let n = ((hi - lo) / step).round() as usize;
    (0..=n).map(|i| lo + step * i as f64).collect()
}

/// Fits the efficiencies on the training rows: coordinate descent over fixed grids (compute
/// 0.20–1.00 by 0.01, bandwidth 0.40–0.95 by 0.01, step overhead 0–20 ms by 0.1 ms, all-reduce
/// latency 0–200 µs by 5 µs, prefill overhead 0–20 ms by 0.1 ms), from a fixed start, until a round changes nothing (≤ 30 rounds).
/// The interconnect efficiency stays at its documented default.
pub fn fit(catalog: &Catalog) -> FitResult {
    let (rd, _) = ready(catalog);
    let mut e = Efficiencies {
        compute_prefill: 0.5,
        compute_decode: 0.5,
        bandwidth: 0.7,
        step_overhead_s: 0.001,
        allreduce_latency_s: 0.000_01,
        prefill_overhead_s: 0.001,
        interconnect: perf::DEFAULT_INTERCONNECT,
    };
    let grids = [
        grid(0.2, 1.0, 0.01),
        grid(0.2, 1.0, 0.01),
        grid(0.4, 0.95, 0.01),
        grid(0.0, 0.02, 0.0001),
        grid(0.0, 0.0002, 0.000_005),
        grid(0.0, 0.02, 0.0001),
    ];
    let mut best = objective(&rd, &e);
    let mut rounds = 0;
    for _ in 0..30 {
        rounds += 1;
        let mut changed = false;
        for (k, g) in grids.iter().enumerate() {
            for &x in g {
                let mut c = e;
                match k {
                    0 => c.compute_prefill = x,
                    1 => c.compute_decode = x,
                    2 => c.bandwidth = x,
                    3 => c.step_overhead_s = x,
                    4 => c.allreduce_latency_s = x,
                    _ => c.prefill_overhead_s = x,
                }
                let o = objective(&rd, &c);
                if o < best - 1e-12 {
                    best = o;
                    e = c;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    FitResult {
        efficiencies: e,
        objective: best,
        rounds,
    }
}

/// The fit objective at given efficiencies (for tests comparing constants to the optimum).
pub fn objective_at(catalog: &Catalog, eff: &Efficiencies) -> f64 {
    let (rd, _) = ready(catalog);
    objective(&rd, eff)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::perf::{
        FIT_ALLREDUCE_LATENCY_S, FIT_BANDWIDTH, FIT_COMPUTE_DECODE, FIT_COMPUTE_PREFILL,
        FIT_PREFILL_OVERHEAD_S, FIT_STEP_OVERHEAD_S,
    };
    use crate::hardware::catalog::Catalog;

    fn cat() -> &'static Catalog {
        Catalog::builtin()
    }

    #[test]
    fn baked_constants_are_the_fit_optimum() {
        let f = fit(cat());
        println!("fit: {f:?}");
        let d = Efficiencies::default();
        let e = f.efficiencies;
        for (name, got, want, tol) in [
            (
                "compute_prefill",
                FIT_COMPUTE_PREFILL,
                e.compute_prefill,
                0.015,
            ),
            (
                "compute_decode",
                FIT_COMPUTE_DECODE,
                e.compute_decode,
                0.015,
            ),
            ("bandwidth", FIT_BANDWIDTH, e.bandwidth, 0.015),
            (
                "step_overhead_s",
                FIT_STEP_OVERHEAD_S,
                e.step_overhead_s,
                0.000_15,
            ),
            (
                "prefill_overhead_s",
                FIT_PREFILL_OVERHEAD_S,
                e.prefill_overhead_s,
                0.000_15,
            ),
            (
                "allreduce_latency_s",
                FIT_ALLREDUCE_LATENCY_S,
                e.allreduce_latency_s,
                0.000_006,
            ),
        ] {
            assert!(
                (got - want).abs() <= tol,
                "{name}: constant {got}, fit {want}"
            );
        }
        let at_defaults = objective_at(cat(), &d);
        assert!(
            at_defaults <= f.objective + 0.002,
            "{at_defaults} vs {}",
            f.objective
        );
    }
}
