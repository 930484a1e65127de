//! A rate sweep: the same workload at several request rates, the replica's saturation rate,
//! and the highest swept rate whose P99 latencies meet the targets.
//!
//! Saturation: a queue fed faster than it is served grows without bound, so the saturation
//! rate is the replica's service capacity for this workload: the request throughput it
//! sustains with its queue never empty, measured by sending the same requests all at once
//! (`--request-rate inf`). A swept rate at or above it is marked `saturated`: its latencies
//! there depend on how long the benchmark runs, not on the rate.

use crate::base::error::CalcError;
use crate::sim::config::{Budget, Slo};
use crate::sim::replica::Replica;
use crate::sim::result::SimResult;
use crate::sim::workload::{Arrival, WorkloadSpec};
use serde::{Deserialize, Serialize};

/// Most rates in one sweep.
pub const MAX_RATES: usize = 64;

/// One swept rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// Offered rate, requests per second.
    pub rate: f64,
    /// The run at this rate.
    pub result: SimResult,
    /// The rate is at or above the saturation rate.
    pub saturated: bool,
    /// P99 TTFT and P99 TPOT meet the targets (with targets).
    pub meets_targets: Option<bool>,
}

/// A sweep's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepResult {
    /// One point per rate, in the order given.
    pub points: Vec<SweepPoint>,
    /// The replica's capacity for this workload, requests per second.
    pub saturation_rate: f64,
    /// The highest swept rate below saturation meeting the targets at P99 (with targets).
    pub max_rate_meeting_targets: Option<f64>,
    /// Any run stopped at its step budget.
    pub partial: bool,
}

/// Runs `base` at every rate (its arrival's burstiness kept; all at once for an infinite
/// rate), and once all at once for the saturation rate.
pub fn sweep_rates(
    rep: &mut Replica,
    base: &WorkloadSpec,
    rates: &[f64],
    slo: Option<Slo>,
    budget: Budget,
) -> Result<SweepResult, CalcError> {
    sweep_with(|w| rep.run(w, slo, budget), base, |_| rates.to_vec(), slo)
}

/// A sweep of any deployment `run` simulates (one replica, disaggregated pools): `base` all
/// at once for the saturation rate, then at each of the rates `rates` gives for that
/// saturation rate (requests per second).
pub fn sweep_with(
    mut run: impl FnMut(&WorkloadSpec) -> Result<SimResult, CalcError>,
    base: &WorkloadSpec,
    rates: impl FnOnce(f64) -> Vec<f64>,
    slo: Option<Slo>,
) -> Result<SweepResult, CalcError> {
    let burstiness = match base.arrival {
        Arrival::Gamma { burstiness, .. } => burstiness,
        _ => 1.0,
    };
    let mut all = base.clone();
    all.arrival = Arrival::AllAtOnce;
    all.max_concurrency = None;
    let cap = run(&all)?;
    let saturation_rate = cap.request_throughput;
    let mut partial = cap.partial;
    let rates = rates(saturation_rate);
    let mut points = Vec::with_capacity(rates.len().min(MAX_RATES));
    for &rate in rates.iter().take(MAX_RATES) {
        let mut w = base.clone();
        w.arrival = Arrival::from_rate(rate, burstiness);
        let result = run(&w)?;
        partial |= result.partial;
        let meets_targets = slo.map(|s| {
            result.completed > 0
                && result.ttft_ms.p99 <= s.ttft_ms
                && result.tpot_ms.p99 <= s.tpot_ms
        });
        points.push(SweepPoint {
            rate,
            saturated: rate >= saturation_rate,
            meets_targets,
            result,
        });
    }
    let max_rate_meeting_targets = slo.and_then(|_| {
        points
            .iter()
            .filter(|p| !p.saturated && p.meets_targets == Some(true))
            .map(|p| p.rate)
            .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))))
    });
    Ok(SweepResult {
        points,
        saturation_rate,
        max_rate_meeting_targets,
        partial,
    })
}
