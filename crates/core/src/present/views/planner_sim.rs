//! The capacity planner on simulated tails: for the plan's best option (GPU and TP), the
//! replicas for the average and the peak rate sized so that a fleet behind the chosen router
//! meets the P99 TTFT and P99 TPOT targets (`core::sim::sizing`), beside the analytic count
//! (Little's law on the static batch, `core::capacity`) that serves as the search's first
//! guess. Both counts are kept, with the simulated P99s at the chosen count and at one fewer
//! replica (why fewer does not suffice), and a derivation per rate in the planner's manner.
//!
//! The workload is the plan's traffic: its rate (total over the fleet), its lengths (one
//! bucket: fixed lengths; several: a list of 100 requests with each bucket's share, spread
//! evenly), and the simulation's request count, seed and burstiness. Each fleet run starts
//! empty, as `vllm bench serve` does; more requests weigh the steady state more.

use crate::base::derivation::{Derivation, Source, Term};
use crate::base::error::{CalcError, Phrase};
use crate::base::units::fmt_sig;
use crate::calc::capacity::{Bucket, Plan, PlanInputs};
use crate::calc::perf::Efficiencies;
use crate::hardware::catalog::Catalog;
use crate::model::ModelDesc;
use crate::sim::config::{Budget, EngineConfig, Slo};
use crate::sim::fleet::Router;
use crate::sim::replica::Replica;
use crate::sim::sizing::{check_targets, size_fleet, FleetSizing, FleetTails, SearchCap};
use crate::sim::workload::{Lengths, WorkloadSpec};
use serde::{Deserialize, Serialize};

/// Requests in the length list that stands for several buckets.
const LIST_LEN: usize = 100;

/// Seconds of arrivals a fleet run spans at least. Each run starts empty, so a short one ends
/// before the batches and queues reach their steady state and understates the tail: Qwen3-8B
/// on H100 at 240 req/s (1,024 in, 256 out), 400 requests (1.7 s of arrivals) gave 6 replicas
/// where 4,000 gave 12 and 16,000 gave 14 (Little's law: 13).
pub const MIN_SPAN_S: f64 = 60.0;

/// Most requests in one fleet run; above `MAX_RUN_REQUESTS / MIN_SPAN_S` req/s the span is
/// shorter (said in a note).
pub const MAX_RUN_REQUESTS: u64 = 50_000;

/// Requests of one fleet run at `rate`: the user's count, raised so that the arrivals span
/// [`MIN_SPAN_S`], at most [`MAX_RUN_REQUESTS`].
pub fn run_requests(asked: u64, rate: f64) -> u64 {
    let want = (rate * MIN_SPAN_S).ceil();
    if !(want.is_finite() && want > 0.0) {
        return asked;
    }
    // In range: 0 < want ≤ MAX_RUN_REQUESTS, a whole number.
    let want = want.min(MAX_RUN_REQUESTS as f64) as u64;
    asked.max(want)
}

/// How the planner simulates: the router, the engine's flags (its TP is the option's), the
/// load's request count, seed and burstiness (its lengths and rate are the plan's), the
/// efficiencies and the step budget of each run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SimPlanSettings {
    /// Round-robin or least-loaded.
    pub router: Router,
    /// vLLM's engine flags (`tp` is replaced by the option's).
    pub engine: EngineConfig,
    /// Request count, warm-up, seed and arrival burstiness (rate and lengths replaced).
    pub workload: WorkloadSpec,
    /// The performance model's efficiencies.
    pub efficiencies: Efficiencies,
    /// Step budget of each fleet run.
    pub budget: Budget,
}

/// The simulated sizing of the best option.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimulatedPlan {
    /// Accelerator id.
    pub gpu: String,
    /// Display name.
    pub gpu_name: String,
    /// GPUs per replica.
    pub tp: u64,
    /// The router.
    pub router: Router,
    /// P99 targets (the plan's TTFT and TPOT targets), milliseconds.
    pub targets: Slo,
    /// Requests per fleet run asked for (`--num-requests`, `sv_n`); each rate's run may use
    /// more ([`run_requests`]).
    pub num_requests: u64,
    /// Requests per fleet run at the average rate.
    pub requests_avg: u64,
    /// Requests per fleet run at the peak rate.
    pub requests_peak: u64,
    /// Seed of the arrivals and lengths.
    pub seed: u64,
    /// Replicas for the average rate by Little's law (the plan's count).
    pub analytic_replicas_avg: u64,
    /// Replicas for the peak rate by Little's law.
    pub analytic_replicas_peak: u64,
    /// The search at the average rate.
    pub average: FleetSizing,
    /// The search at the peak rate.
    pub peak: FleetSizing,
    /// One derivation per rate.
    pub derivations: Vec<Derivation>,
    /// Capped searches, partial runs.
    pub notes: Vec<Phrase>,
}

/// The plan's lengths as the simulator's: fixed for one bucket, else [`LIST_LEN`] pairs in
/// which each bucket holds its share, spread evenly (each slot goes to the bucket furthest
/// behind its share).
pub fn plan_lengths(buckets: &[Bucket]) -> Lengths {
    if let [b] = buckets {
        return Lengths::Fixed {
            input: b.input_len,
            output: b.output_len,
        };
    }
    let mut given = vec![0usize; buckets.len()];
    let mut pairs = Vec::with_capacity(LIST_LEN);
    for slot in 1..=LIST_LEN {
        let behind = |i: usize, b: &Bucket| {
            b.share * slot as f64 - given.get(i).copied().unwrap_or(0) as f64
        };
        let pick = buckets
            .iter()
            .enumerate()
            .max_by(|(i, a), (j, b)| behind(*i, a).total_cmp(&behind(*j, b)).then(j.cmp(i)));
        if let Some((i, b)) = pick {
            if let Some(g) = given.get_mut(i) {
                *g += 1;
            }
            pairs.push((b.input_len, b.output_len));
        }
    }
    Lengths::List { pairs }
}

/// Sizes the best option of `plan` (made from `inp`) on simulated P99s.
pub fn simulated_plan(
    model: &ModelDesc,
    plan: &Plan,
    inp: &PlanInputs,
    catalog: &Catalog,
    set: &SimPlanSettings,
) -> Result<SimulatedPlan, CalcError> {
    let targets = Slo {
        ttft_ms: inp.targets.ttft.ms(),
        tpot_ms: inp.targets.tpot.ms(),
    };
    check_targets(&targets)?;
    let best = plan.best_option().ok_or_else(|| CalcError::BadValue {
        key: "plan".into(),
        found: Phrase::verbatim(plan.model.clone()),
        expected: Phrase::tr("exp_plan_sim_option"),
    })?;
    let gpu = catalog.get(&best.gpu)?;
    let engine = EngineConfig {
        tp: best.tp,
        ..set.engine.clone()
    };
    let rep = Replica::new(model, gpu, &engine, &set.efficiencies)?;
    let mut wl = set.workload.clone();
    wl.lengths = plan_lengths(&inp.traffic.buckets);
    wl.max_concurrency = None;
    let search = |rate: f64, guess: u64| {
        let mut w = wl.clone();
        w.num_requests = run_requests(wl.num_requests, rate);
        size_fleet(&rep, set.router, &w, rate, targets, guess, set.budget)
    };
    let average = search(plan.avg_rate_rps, best.replicas_avg)?;
    let peak = if plan.peak_rate_rps == plan.avg_rate_rps && best.replicas_peak == best.replicas_avg
    {
        average.clone()
    } else {
        search(plan.peak_rate_rps, best.replicas_peak)?
    };
    let requests_avg = run_requests(wl.num_requests, plan.avg_rate_rps);
    let requests_peak = run_requests(wl.num_requests, plan.peak_rate_rps);
    let mut notes = Vec::new();
    for (which, s, n, rate) in [
        (
            "plan_sim_average",
            &average,
            requests_avg,
            plan.avg_rate_rps,
        ),
        ("plan_sim_peak", &peak, requests_peak, plan.peak_rate_rps),
    ] {
        if n > wl.num_requests {
            notes.push(
                Phrase::tr("plan_sim_requests_raised")
                    .sub("which", Phrase::tr(which))
                    .val("n", n)
                    .val("asked", wl.num_requests)
                    .val("span", fmt_sig(n as f64 / rate)),
            );
        }
        notes.extend(sizing_notes(which, s));
    }
    let derivations = vec![
        derivation(
            "plan_sim_replicas_avg",
            &average,
            best.replicas_avg,
            targets,
        ),
        derivation("plan_sim_replicas_peak", &peak, best.replicas_peak, targets),
    ];
    Ok(SimulatedPlan {
        gpu: best.gpu.clone(),
        gpu_name: best.gpu_name.clone(),
        tp: best.tp,
        router: set.router,
        targets,
        num_requests: wl.num_requests,
        requests_avg,
        requests_peak,
        seed: wl.seed,
        analytic_replicas_avg: best.replicas_avg,
        analytic_replicas_peak: best.replicas_peak,
        average,
        peak,
        derivations,
        notes,
    })
}

/// The notes of one search: capped, partial runs.
fn sizing_notes(which: &'static str, s: &FleetSizing) -> Vec<Phrase> {
    let mut v = Vec::new();
    match s.capped {
        Some(SearchCap::Replicas { max }) => v.push(
            Phrase::tr("plan_sim_capped_replicas")
                .sub("which", Phrase::tr(which))
                .val("max", max),
        ),
        Some(SearchCap::Runs { max }) => v.push(
            Phrase::tr("plan_sim_capped_runs")
                .sub("which", Phrase::tr(which))
                .val("max", max)
                .val("n", s.replicas.map_or("—".into(), |n| n.to_string())),
        ),
        None => {}
    }
    if s.partial {
        v.push(Phrase::tr("plan_sim_partial").sub("which", Phrase::tr(which)));
    }
    v
}

/// `N = 5: P99 TTFT 312 ms ≤ 500 ms, P99 TPOT 31 ms ≤ 50 ms`.
fn tails_text(t: &FleetTails, slo: Slo) -> String {
    let cmp = |v: f64, target: f64| if v <= target { "≤" } else { ">" };
    format!(
        "N = {}: P99 TTFT {} ms {} {} ms, P99 TPOT {} ms {} {} ms{}",
        t.replicas,
        fmt_sig(t.p99_ttft_ms),
        cmp(t.p99_ttft_ms, slo.ttft_ms),
        fmt_sig(slo.ttft_ms),
        fmt_sig(t.p99_tpot_ms),
        cmp(t.p99_tpot_ms, slo.tpot_ms),
        fmt_sig(slo.tpot_ms),
        if t.partial { " (…)" } else { "" }
    )
}

fn derivation(title: &str, s: &FleetSizing, analytic: u64, slo: Slo) -> Derivation {
    let substituted = [s.at_count, s.one_fewer]
        .iter()
        .flatten()
        .map(|t| tails_text(t, slo))
        .collect::<Vec<_>>()
        .join("; ");
    // No count met the targets: N is above every count tried (N₀, Little's law's count, is
    // a term).
    let (result, result_key) = match s.replicas {
        Some(n) => (n.to_string(), "drv_n_replicas"),
        None => (
            format!(
                "N > {}",
                s.tried.iter().map(|t| t.replicas).max().unwrap_or(0)
            ),
            "",
        ),
    };
    Derivation {
        result_key: result_key.into(),
        title_key: title.into(),
        formula: "min N: P99 TTFT(N) ≤ T_ttft ∧ P99 TPOT(N) ≤ T_tpot".into(),
        substituted,
        result,
        terms: vec![
            Term::num(
                "λ",
                "term_plan_sim_rate",
                s.rate_rps,
                "view_unit_rps",
                Source::User("rate".into()),
            ),
            Term::num(
                "N₀",
                "term_plan_sim_guess",
                analytic as f64,
                "",
                Source::Derived("src_littles_law".into()),
            ),
            Term::num(
                "T_ttft",
                "term_plan_sim_ttft",
                slo.ttft_ms,
                "ms",
                Source::User("ttft_ms".into()),
            ),
            Term::num(
                "T_tpot",
                "term_plan_sim_tpot",
                slo.tpot_ms,
                "ms",
                Source::User("tpot_ms".into()),
            ),
        ],
        notes: vec!["note_plan_sim_method".into()],
    }
}
