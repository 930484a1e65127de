//! The cost chart's data: each viable option's cost per hour as the request rate goes from 0 to
//! twice the peak (`ceil(rate / per-replica rate) × tp × price`), and the cheapest at each rate.

use super::answer::Plan;
use super::planner::{replicas_for, viable};
use serde::{Deserialize, Serialize};

/// One option's cost as the load varies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostSeries {
    /// Accelerator id.
    pub gpu: String,
    /// TP degree.
    pub tp: u64,
    /// US dollars per hour at each rate of [`CostCurve::rates_rps`].
    pub cost_per_hour: Vec<f64>,
}

/// Cost per hour against the request rate, for a chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostCurve {
    /// Request rates from 0 to 2 × the peak, req/s.
    pub rates_rps: Vec<f64>,
    /// One series per viable priced option.
    pub series: Vec<CostSeries>,
    /// The cheapest option's cost at each rate.
    pub cheapest: Vec<f64>,
}

/// Cost per hour of every viable priced option at `points` rates from 0 to 2 × the peak:
/// `max(1, ceil(rate / per replica)) × tp × price` (one replica stays up at zero load).
pub fn cost_curve(p: &Plan, points: usize) -> CostCurve {
    let n = points.clamp(2, 1000);
    let top = 2.0 * p.peak_rate_rps;
    let rates: Vec<f64> = (0..n).map(|i| top * i as f64 / (n - 1) as f64).collect();
    let series: Vec<CostSeries> = p
        .options
        .iter()
        .filter(|o| viable(o))
        .filter_map(|o| {
            let price = o.price_usd_per_gpu_hour?;
            Some(CostSeries {
                gpu: o.gpu.clone(),
                tp: o.tp,
                cost_per_hour: rates
                    .iter()
                    .map(|r| {
                        replicas_for(*r, o.requests_per_s_per_replica).max(1) as f64
                            * o.tp as f64
                            * price
                    })
                    .collect(),
            })
        })
        .collect();
    let cheapest = (0..n)
        .map(|i| {
            series
                .iter()
                .filter_map(|s| s.cost_per_hour.get(i).copied())
                .fold(f64::INFINITY, f64::min)
        })
        .map(|c| if c.is_finite() { c } else { f64::NAN })
        .collect();
    CostCurve {
        rates_rps: rates,
        series,
        cheapest,
    }
}
