//! Step 3 of the search (the module docs): each short-listed point simulated, its count of
//! deployments adjusted to the targets ([`check_point`]).

use super::candidates::{priced, Built};
use super::types::{
    Checked, Layout, PlanPoint, SearchSpec, Statistic, MAX_SIM_REQUESTS, MAX_TRIES,
    MIN_SIM_REQUESTS, SIM_SPAN_S,
};
use crate::base::error::CalcError;
use crate::sim::config::Budget;
use crate::sim::disagg::{simulate_disagg, DisaggConfig, DEFAULT_KV_TRANSFER_LATENCY_MS};
use crate::sim::parallel::Parallel;
use crate::sim::result::SimResult;
use crate::sim::workload::{Arrival, Lengths, WorkloadSpec};

/// Simulates candidate `ci` with `replicas` deployments sharing `spec.rate_rps` (each engine
/// with its own defaults, as the launch commands leave them: the batch it reaches is the
/// load's, not a cap).
fn simulate_point(
    b: &mut Built,
    ci: usize,
    replicas: u64,
    spec: &SearchSpec,
) -> Result<SimResult, CalcError> {
    let rate = spec.rate_rps / replicas as f64;
    let n = ((rate * SIM_SPAN_S).ceil() as u64).clamp(MIN_SIM_REQUESTS, MAX_SIM_REQUESTS);
    let wl = WorkloadSpec {
        arrival: Arrival::Poisson { rate },
        max_concurrency: None,
        lengths: Lengths::Fixed {
            input: spec.input_len,
            output: spec.output_len,
        },
        num_requests: n,
        warmup: n / 10,
        warmup_drained: false,
        seed: spec.seed,
    };
    let (gi, pi, di) = b.which[ci];
    let slo = Some(spec.targets);
    let gpu = &spec.gpus[gi].gpu;
    match (&b.candidates[ci].layout, di) {
        (
            Layout::Disaggregated {
                prefill_workers,
                decode_workers,
                link,
                ..
            },
            Some(di),
        ) => {
            let cfg = DisaggConfig {
                prefill_workers: *prefill_workers,
                decode_workers: *decode_workers,
                link: *link,
                transfer_latency_ms: DEFAULT_KV_TRANSFER_LATENCY_MS,
            };
            simulate_disagg(
                &b.profiles[pi].replica,
                &b.profiles[di].replica,
                gpu,
                &cfg,
                &wl,
                slo,
                Budget::default(),
            )
        }
        _ => b.profiles[pi].replica.run(&wl, slo, Budget::default()),
    }
}

/// Simulates short-listed point `p` (module docs, step 3): its replicas up while the P99s
/// miss; from a first count that meets, down while they still do (the screen's capacity is a
/// full batch's, and a lighter load often needs fewer deployments). Returns the point with
/// its simulation (`None` when a run failed) and the runs made.
pub(super) fn check_point(b: &mut Built, mut p: PlanPoint, spec: &SearchSpec) -> (PlanPoint, u64) {
    let ci = p.candidate;
    let mut replicas = p.replicas;
    let mut last: Option<Checked> = None;
    let mut down = None;
    let mut runs = 0;
    for t in 1..=MAX_TRIES {
        runs += 1;
        let Ok(r) = simulate_point(b, ci, replicas, spec) else {
            break;
        };
        let (ttft, tpot) = match spec.statistic {
            Statistic::P99 => (r.ttft_ms.p99, r.tpot_ms.p99),
            Statistic::Mean => (r.ttft_ms.mean, r.tpot_ms.mean),
        };
        let meets = r.completed > 0
            && !r.partial
            && ttft <= spec.targets.ttft_ms
            && tpot <= spec.targets.tpot_ms;
        let going_down = *down.get_or_insert(meets);
        if going_down && !meets {
            // One fewer misses: keep the last count that met.
            if let Some(l) = last.as_mut() {
                l.tries = t;
            }
            break;
        }
        last = Some(Checked {
            replicas,
            rate_per_replica: spec.rate_rps / replicas as f64,
            p99_ttft_ms: r.ttft_ms.p99,
            p99_tpot_ms: r.tpot_ms.p99,
            mean_ttft_ms: r.ttft_ms.mean,
            mean_tpot_ms: r.tpot_ms.mean,
            completed: r.completed,
            partial: r.partial,
            meets,
            tries: t,
        });
        if going_down {
            if replicas <= 1 {
                break;
            }
            replicas -= 1;
        } else if meets {
            break;
        } else {
            replicas = replicas.saturating_add((replicas / 4).max(1));
        }
    }
    if let Some(c) = last {
        p.replicas = c.replicas;
        p.simulated = Some(c);
        p.meets = c.meets;
        if c.mean_tpot_ms.is_finite() && c.mean_tpot_ms > 0.0 {
            p.tokens_per_s_user = 1e3 / c.mean_tpot_ms;
        }
        let node = Parallel::node_size(&spec.gpus[b.which[ci].0].gpu);
        p = priced(p, &b.candidates[ci], node, spec.rate_rps, spec.output_len);
    }
    (p, runs)
}
