//! Sizing a fleet on simulated tails: the smallest replica count whose fleet
//! ([`simulate_fleet`]) meets P99 TTFT and P99 TPOT targets at a total rate.
//!
//! The search starts from a first guess (the planner's Little's-law count). If the guess
//! meets the targets, it steps down by 1, 2, 4, … replicas until a count misses them (or 1
//! is reached); if it misses, it steps up by 1, 2, 4, … until a count meets them (or
//! [`MAX_SEARCH_REPLICAS`] is reached: capped, said so). Between the last miss and the first
//! meet it halves the gap. The answer `N` is a count that was simulated and meets the
//! targets, and `N − 1` was simulated and misses them (unless `N = 1`): both are returned
//! with their P99s, so the reader sees why fewer does not suffice. The halving assumes that
//! more replicas never raise the P99s at a fixed total rate, which holds on the cases
//! tested (`tests/serving_fleet.rs`) but is not a theorem for a finite random run; the
//! returned pair is checked whatever. A run stopped by its step budget (`partial`) does not
//! count as meeting the targets. At most [`MAX_SEARCH_RUNS`] simulations per search.

use crate::base::error::{CalcError, Phrase};
use crate::sim::config::{Budget, Slo};
use crate::sim::fleet::{simulate_fleet, Router};
use crate::sim::replica::Replica;
use crate::sim::workload::{Arrival, WorkloadSpec};
use serde::{Deserialize, Serialize};

/// Most replicas a search tries.
pub const MAX_SEARCH_REPLICAS: u64 = 256;
/// Most simulations one search runs.
pub const MAX_SEARCH_RUNS: usize = 24;
/// Highest total rate accepted, requests per second.
pub const MAX_FLEET_RATE: f64 = 1.0e6;
/// Largest latency target accepted, milliseconds (one hour).
pub const MAX_TARGET_MS: f64 = 3_600_000.0;

/// One simulated replica count: its P99s and whether they meet the targets.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FleetTails {
    /// Replicas.
    pub replicas: u64,
    /// P99 time to first token, milliseconds (NaN when nothing completed).
    pub p99_ttft_ms: f64,
    /// P99 time per output token, milliseconds.
    pub p99_tpot_ms: f64,
    /// Share of requests meeting both targets.
    pub goodput: f64,
    /// Requests completed (measured).
    pub completed: u64,
    /// The step budget stopped the run.
    pub partial: bool,
    /// Both P99s within the targets, every measured request completed, not partial.
    pub meets_targets: bool,
}

/// Why a search stopped short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum SearchCap {
    /// No count up to `max` replicas met the targets.
    Replicas {
        /// The largest count tried.
        max: u64,
    },
    /// The search ran `max` simulations.
    Runs {
        /// Simulations run.
        max: u64,
    },
}

/// The outcome of one search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetSizing {
    /// Total rate, requests per second.
    pub rate_rps: f64,
    /// The first guess (clamped to 1 ..= [`MAX_SEARCH_REPLICAS`]).
    pub first_guess: u64,
    /// The smallest count found meeting the targets (`None` when none did).
    pub replicas: Option<u64>,
    /// The P99s at `replicas`.
    pub at_count: Option<FleetTails>,
    /// The P99s at `replicas − 1` (`None` when `replicas` is 1 or unknown).
    pub one_fewer: Option<FleetTails>,
    /// Every count simulated, in the order tried.
    pub tried: Vec<FleetTails>,
    /// Set when the search stopped short.
    pub capped: Option<SearchCap>,
    /// Some run stopped at its step budget.
    pub partial: bool,
}

/// Checks P99 targets: finite, above 0, at most an hour.
pub fn check_targets(slo: &Slo) -> Result<(), CalcError> {
    for (field, v) in [
        ("fld_ttft_target", slo.ttft_ms),
        ("fld_tpot_target", slo.tpot_ms),
    ] {
        if !(v.is_finite() && v > 0.0 && v <= MAX_TARGET_MS) {
            return Err(CalcError::out_of_range(
                Phrase::tr(field),
                v,
                Phrase::tr("rng_fleet_target").val("max", "3,600,000"),
            ));
        }
    }
    Ok(())
}

/// Checks a total rate: finite, above 0, at most [`MAX_FLEET_RATE`].
pub fn check_rate(rate: f64) -> Result<(), CalcError> {
    if !(rate.is_finite() && rate > 0.0 && rate <= MAX_FLEET_RATE) {
        return Err(CalcError::out_of_range(
            Phrase::verbatim("request_rate"),
            rate,
            Phrase::tr("rng_fleet_rate").val("max", "1,000,000"),
        ));
    }
    Ok(())
}

/// The search's state: the runs so far.
struct Search<'a> {
    rep: &'a Replica,
    router: Router,
    wl: WorkloadSpec,
    slo: Slo,
    budget: Budget,
    tried: Vec<FleetTails>,
}

impl Search<'_> {
    /// The tails at `n` replicas (simulated once; `None` past the run cap).
    fn at(&mut self, n: u64) -> Result<Option<FleetTails>, CalcError> {
        if let Some(t) = self.tried.iter().find(|t| t.replicas == n) {
            return Ok(Some(*t));
        }
        if self.tried.len() >= MAX_SEARCH_RUNS {
            return Ok(None);
        }
        let r = simulate_fleet(
            self.rep,
            n,
            self.router,
            &self.wl,
            Some(self.slo),
            self.budget,
        )?;
        let (ttft, tpot) = (r.ttft_ms.p99, r.tpot_ms.p99);
        let t = FleetTails {
            replicas: n,
            p99_ttft_ms: ttft,
            p99_tpot_ms: tpot,
            goodput: r.goodput.unwrap_or(0.0),
            completed: r.completed,
            partial: r.partial,
            meets_targets: !r.partial
                && r.completed > 0
                && r.completed == r.num_prompts
                && ttft <= self.slo.ttft_ms
                && (tpot.is_nan() || tpot <= self.slo.tpot_ms),
        };
        self.tried.push(t);
        Ok(Some(t))
    }

    /// Whether `n` meets the targets (`None` past the run cap).
    fn meets(&mut self, n: u64) -> Result<Option<bool>, CalcError> {
        Ok(self.at(n)?.map(|t| t.meets_targets))
    }
}

/// The smallest replica count meeting `slo` at P99 for `base`'s workload at `rate` req/s in
/// total (its burstiness kept), searched from `first_guess`.
pub fn size_fleet(
    rep: &Replica,
    router: Router,
    base: &WorkloadSpec,
    rate: f64,
    slo: Slo,
    first_guess: u64,
    budget: Budget,
) -> Result<FleetSizing, CalcError> {
    check_rate(rate)?;
    check_targets(&slo)?;
    let burstiness = match base.arrival {
        Arrival::Gamma { burstiness, .. } => burstiness,
        _ => 1.0,
    };
    let mut wl = base.clone();
    wl.arrival = Arrival::from_rate(rate, burstiness);
    let mut s = Search {
        rep,
        router,
        wl,
        slo,
        budget,
        tried: Vec::new(),
    };
    let guess = first_guess.clamp(1, MAX_SEARCH_REPLICAS);
    let (lo, hi, capped) = bracket(&mut s, guess)?;
    let (hi, capped) = match (hi, capped) {
        (Some(hi), None) => halve(&mut s, lo, hi)?,
        other => other,
    };
    let at_count = match hi {
        Some(n) => s.at(n)?,
        None => None,
    };
    let one_fewer = match hi {
        Some(n) if n > 1 => s.at(n - 1)?,
        _ => None,
    };
    Ok(FleetSizing {
        rate_rps: rate,
        first_guess: guess,
        replicas: hi,
        at_count,
        one_fewer,
        partial: s.tried.iter().any(|t| t.partial),
        tried: s.tried,
        capped,
    })
}

type Bracket = (u64, Option<u64>, Option<SearchCap>);

/// A count `lo` that misses (0: none known) and a count `hi` that meets, by steps doubling
/// from the guess; `hi` is `None` when capped.
fn bracket(s: &mut Search, guess: u64) -> Result<Bracket, CalcError> {
    let runs_cap = || {
        Some(SearchCap::Runs {
            max: MAX_SEARCH_RUNS as u64,
        })
    };
    match s.meets(guess)? {
        None => Ok((0, None, runs_cap())),
        Some(true) => {
            let (mut hi, mut step) = (guess, 1u64);
            while hi > 1 {
                let m = hi.saturating_sub(step).max(1);
                match s.meets(m)? {
                    Some(true) => hi = m,
                    Some(false) => return Ok((m, Some(hi), None)),
                    None => return Ok((0, Some(hi), runs_cap())),
                }
                step = step.saturating_mul(2);
            }
            Ok((0, Some(1), None))
        }
        Some(false) => {
            let (mut lo, mut step) = (guess, 1u64);
            while lo < MAX_SEARCH_REPLICAS {
                let m = lo.saturating_add(step).min(MAX_SEARCH_REPLICAS);
                match s.meets(m)? {
                    Some(true) => return Ok((lo, Some(m), None)),
                    Some(false) => lo = m,
                    None => return Ok((lo, None, runs_cap())),
                }
                step = step.saturating_mul(2);
            }
            Ok((
                lo,
                None,
                Some(SearchCap::Replicas {
                    max: MAX_SEARCH_REPLICAS,
                }),
            ))
        }
    }
}

/// Halves the gap between a miss `lo` and a meet `hi` until they are neighbours.
fn halve(
    s: &mut Search,
    mut lo: u64,
    mut hi: u64,
) -> Result<(Option<u64>, Option<SearchCap>), CalcError> {
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match s.meets(mid)? {
            Some(true) => hi = mid,
            Some(false) => lo = mid,
            None => {
                return Ok((
                    Some(hi),
                    Some(SearchCap::Runs {
                        max: MAX_SEARCH_RUNS as u64,
                    }),
                ))
            }
        }
    }
    Ok((Some(hi), None))
}
