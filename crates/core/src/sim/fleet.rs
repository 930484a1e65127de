//! A fleet: `N` identical replicas behind a router, fed one arrival stream at the total rate.
//!
//! The stream is the workload's own (the same requests, gaps and lengths as one replica's
//! benchmark at that rate). Each request goes, when it arrives, to one replica:
//! - **round-robin** ([`Router::RoundRobin`]): request `k` to replica `k mod N`;
//! - **least-loaded** ([`Router::LeastLoaded`]): to the replica with the fewest outstanding
//!   requests (given to it and not finished: queued or running) at that instant; ties go to
//!   the first such replica after the one chosen last, so an idle fleet is served in turn.
//!
//! Every replica is one `Engine` (`scheduler.rs`) with its own event heap. Between
//! two arrivals the replicas do not interact, so the fleet advances each one through its
//! events before the next arrival's instant (`Engine::advance`), routes the request on the
//! loads at that instant, and gives it to the chosen replica (`Engine::inject`); the
//! replicas thus move in one event time order as far as the router can see. After the last
//! arrival each replica runs to its end. A request arriving at the instant a step ends is
//! seen first, as inside one engine, so round-robin over one replica is the single-replica
//! simulation event for event (a test checks it bit for bit).
//!
//! Statistics are pooled over the replicas (every measured request's TTFT, TPOT, ITL, E2EL;
//! throughputs over the fleet's duration); the time series is the first replica's. The step
//! budget bounds the fleet's total steps; when it runs out the result is marked `partial`.
//! A fleet is fed open-loop: a `max_concurrency` cap (closed-loop clients) is refused.

use crate::base::error::{CalcError, Phrase};
use crate::sim::config::{Budget, Slo};
use crate::sim::replica::{assemble, Replica};
use crate::sim::result::{SimNote, SimResult};
use crate::sim::scheduler::{Engine, Outcome};
use crate::sim::step_time::StepModel;
use crate::sim::workload::WorkloadSpec;
use serde::{Deserialize, Serialize};

/// Most replicas one fleet simulation takes.
pub const MAX_REPLICAS: u64 = 512;

/// How arrivals are spread over the replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Router {
    /// Request `k` to replica `k mod N`.
    #[default]
    RoundRobin,
    /// The replica with the fewest outstanding requests at the arrival.
    LeastLoaded,
}

impl Router {
    /// The CLI's name (`round-robin`, `least-loaded`).
    pub fn id(self) -> &'static str {
        match self {
            Router::RoundRobin => "round-robin",
            Router::LeastLoaded => "least-loaded",
        }
    }

    /// Reads a CLI name.
    pub fn parse(s: &str) -> Result<Router, CalcError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "round-robin" | "rr" => Ok(Router::RoundRobin),
            "least-loaded" | "ll" => Ok(Router::LeastLoaded),
            _ => Err(CalcError::BadValue {
                key: "router".into(),
                found: Phrase::verbatim(s),
                expected: Phrase::tr("exp_fleet_router"),
            }),
        }
    }
}

/// The replica count is a whole number from 1 to [`MAX_REPLICAS`].
pub fn check_replicas(n: u64) -> Result<(), CalcError> {
    CalcError::whole_in(Phrase::tr("fld_fleet_replicas"), n, (1, MAX_REPLICAS)).map(|_| ())
}

/// The replica that gets the next request: `k`-th request, `last` chosen before.
pub(crate) fn route(router: Router, engines: &[Engine], k: usize, last: usize) -> usize {
    let n = engines.len().max(1);
    match router {
        Router::RoundRobin => k % n,
        Router::LeastLoaded => {
            let mut best = (u64::MAX, 0usize);
            for off in 1..=n {
                let j = (last + off) % n;
                let load = engines.get(j).map_or(u64::MAX, Engine::outstanding);
                if load < best.0 {
                    best = (load, j);
                }
            }
            best.1
        }
    }
}

/// Advances every engine through the events before `until` (all when `None`), keeping the
/// fleet's total steps within `max_steps`. Returns whether the budget stopped one.
fn advance_all(
    engines: &mut [Engine],
    until: Option<f64>,
    total_steps: &mut u64,
    max_steps: u64,
) -> Result<bool, CalcError> {
    for e in engines.iter_mut() {
        let others = total_steps.saturating_sub(e.steps);
        let stopped = e.advance(until, max_steps.saturating_sub(others))?;
        *total_steps = others + e.steps;
        if stopped {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Simulates `replicas` copies of `rep` behind `router`, fed `wl` (its rate is the fleet's
/// total).
pub fn simulate_fleet(
    rep: &Replica,
    replicas: u64,
    router: Router,
    wl: &WorkloadSpec,
    slo: Option<Slo>,
    budget: Budget,
) -> Result<SimResult, CalcError> {
    check_replicas(replicas)?;
    if let Some(c) = wl.max_concurrency {
        return Err(CalcError::BadValue {
            key: "max_concurrency".into(),
            found: Phrase::verbatim(c.to_string()),
            expected: Phrase::tr("exp_fleet_open_loop"),
        });
    }
    let generated = wl.generate()?;
    rep.check_lengths(&generated.requests)?;
    let mut notes = rep.run_notes(generated.capped_from);
    let n = usize::try_from(replicas).unwrap_or(1);
    let per = generated.requests.len() / n + 1;
    let resolved = rep.resolved().clone();
    let mut models: Vec<StepModel> = (0..n).map(|_| rep.step_model().clone()).collect();
    let mut engines: Vec<Engine> = models
        .iter_mut()
        .map(|m| Engine::empty(&resolved, m, per, None).pipelined(rep.pipelined()))
        .collect();
    let (mut total, mut stopped, mut last) = (0u64, false, n - 1);
    let mut given = 0usize;
    for (k, r) in generated.requests.iter().enumerate() {
        if advance_all(&mut engines, Some(r.ready_s), &mut total, budget.max_steps)? {
            stopped = true;
            break;
        }
        let j = route(router, &engines, k, last);
        if let Some(e) = engines.get_mut(j) {
            e.inject(r, k as u64 >= wl.warmup);
            last = j;
            given += 1;
        }
    }
    if !stopped {
        advance_all(&mut engines, None, &mut total, budget.max_steps)?;
    }
    let mut pooled: Option<Outcome> = None;
    for e in &mut engines {
        let o = e.outcome();
        match pooled.as_mut() {
            None => pooled = Some(o),
            Some(p) => p.absorb(o),
        }
    }
    let mut o = pooled.unwrap_or_default();
    // Requests never routed: not sent, and counted among the prompts when measured.
    let left = generated.requests.len().saturating_sub(given) as u64;
    let warm_left = wl.warmup.saturating_sub(given as u64).min(left);
    o.not_sent += left;
    o.generated += left;
    o.num_prompts += left - warm_left;
    o.partial |= stopped;
    if o.partial {
        notes.push(SimNote::Partial { steps: o.steps });
    }
    Ok(assemble(o, &resolved, slo, notes))
}
