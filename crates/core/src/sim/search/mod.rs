//! The planner's search: for a request rate, prompt and answer lengths and P99 targets, every
//! configuration over the chosen GPUs, engines, parallel shapes ([`space`]), aggregated or
//! disaggregated with a prefill:decode ratio, with or without speculative decoding; each
//! timed in closed form ([`screen`]), a short list simulated; the Pareto front of cost per
//! million output tokens against tokens per second per user, the cheapest configuration that
//! meets the targets in simulation, and its launch commands ([`launch`]).
//!
//! 1. **Screen.** Every candidate at each decode batch (powers of two up to what its KV and
//!    seats hold) gives a capacity, a mean TTFT and a mean TPOT. A deployment is loaded to at
//!    most [`HEADROOM`] of its capacity: `N = ⌈rate / (HEADROOM · capacity)⌉` deployments,
//!    cost `N × GPUs × price`. The screen takes a point to meet the targets when
//!    [`SCREEN_P99_TTFT`] × its mean TTFT and [`SCREEN_P99_TPOT`] × its mean TPOT do (the
//!    ratios of P99 to mean the simulator gives for Poisson arrivals at that load).
//! 2. **Short list.** The cheapest screened point of each (GPU, engine, aggregated or not,
//!    speculation or not), then the next cheapest, one point per candidate, up to
//!    [`SearchSpec::shortlist`].
//! 3. **Simulation.** Each short-listed point is simulated at `rate / N` per deployment
//!    (Poisson arrivals, [`SIM_SPAN_S`] of them); when its P99s miss, `N` grows by a quarter
//!    (at least one) and it runs again, at most [`MAX_TRIES`] times. Its simulated P99s, mean
//!    TPOT and `N` replace the screen's figures.
//! 4. **Answer.** The front over every point (simulated figures where there are any), the
//!    cheapest simulated point meeting both P99 targets, or, when none does, the points
//!    nearest to them (the largest ratio of a P99 to its target, smallest first).

pub mod launch;
pub mod screen;
pub mod space;

mod candidates;
mod select;
mod simulate;
mod types;

pub use select::{pareto_front, Key};
pub use types::{
    Candidate, Checked, Layout, PlanPoint, Progress, Refusal, SearchGpu, SearchResult, SearchSpec,
    Statistic, DEFAULT_MAX_GPUS, DEFAULT_SHORTLIST, HEADROOM, MAX_CLOUD, MAX_SEARCH_GPUS,
    MAX_SEARCH_RATE, MAX_SHORTLIST, MAX_SIM_REQUESTS, MAX_TRIES, MIN_SIM_REQUESTS, SCREEN_P99_TPOT,
    SCREEN_P99_TTFT, SIM_SPAN_S, SPEC_DEPTHS,
};

use crate::base::error::{CalcError, Phrase};
use crate::base::i18n::Lang;
use crate::model::ModelDesc;
use candidates::build;
use select::{returned, shortlist};
use simulate::check_point;

fn validate(spec: &SearchSpec) -> Result<(), CalcError> {
    if !(spec.rate_rps.is_finite() && spec.rate_rps > 0.0 && spec.rate_rps <= MAX_SEARCH_RATE) {
        return Err(CalcError::out_of_range(
            Phrase::verbatim("rate"),
            spec.rate_rps,
            Phrase::tr("rng_search_rate"),
        ));
    }
    let names = match spec.statistic {
        Statistic::P99 => ["ttft_p99", "tpot_p99"],
        Statistic::Mean => ["ttft_mean", "tpot_mean"],
    };
    for (k, v) in names
        .into_iter()
        .zip([spec.targets.ttft_ms, spec.targets.tpot_ms])
    {
        if !(v.is_finite() && v > 0.0 && v <= crate::sim::sizing::MAX_TARGET_MS) {
            return Err(CalcError::out_of_range(
                Phrase::verbatim(k),
                v,
                Phrase::tr("rng_search_target"),
            ));
        }
    }
    CalcError::whole_in(
        Phrase::verbatim("input_len"),
        spec.input_len,
        (1, 10_000_000),
    )?;
    CalcError::whole_in(
        Phrase::verbatim("output_len"),
        spec.output_len,
        (1, 10_000_000),
    )?;
    CalcError::whole_in(
        Phrase::verbatim("max_gpus"),
        spec.max_gpus,
        (1, MAX_SEARCH_GPUS),
    )?;
    CalcError::whole_in(
        Phrase::verbatim("shortlist"),
        spec.shortlist as u64,
        (1, MAX_SHORTLIST as u64),
    )?;
    if spec.gpus.is_empty() || spec.engines.is_empty() || !(spec.aggregated || spec.disaggregated) {
        return Err(CalcError::BadValue {
            key: "search".into(),
            found: Phrase::verbatim("0"),
            expected: Phrase::tr("exp_search_space"),
        });
    }
    Ok(())
}

/// Searches the space of `spec` for `model` (module docs), its launch commands naming it
/// `served` (a Hugging Face id or a path); `progress` hears of each GPU and engine screened
/// and each simulation.
pub fn search_configurations(
    model: &ModelDesc,
    served: &str,
    spec: &SearchSpec,
    progress: &mut dyn FnMut(Progress),
) -> Result<SearchResult, CalcError> {
    validate(spec)?;
    let mut b = build(model, spec, progress);
    let mut keys: Vec<Key> = (0..b.raws.len())
        .map(|i| Key::of(&b.point(i, spec), spec))
        .collect();
    if keys.is_empty() {
        return Err(match b.refused.first() {
            Some((e, _)) => e.clone(),
            None => CalcError::BadValue {
                key: "search".into(),
                found: Phrase::verbatim("0"),
                expected: Phrase::tr("exp_search_space"),
            },
        });
    }

    // Step 3: simulate the short list.
    let short = shortlist(&keys, &b.raws, &b.candidates, spec.shortlist);
    let mut simulations = 0;
    let mut simulated: Vec<(usize, PlanPoint)> = Vec::new();
    for (k, &i) in short.iter().enumerate() {
        let first = b.point(i, spec);
        let (p, runs) = check_point(&mut b, first, spec);
        simulations += runs;
        if p.simulated.is_some() {
            keys[i] = Key::of(&p, spec);
            simulated.push((i, p));
        }
        progress(Progress {
            stage: "simulate",
            done: k as u64 + 1,
            total: short.len() as u64,
        });
    }
    let full = |i: usize| {
        simulated
            .iter()
            .find(|(j, _)| *j == i)
            .map_or_else(|| b.point(i, spec), |(_, p)| *p)
    };

    // Step 4: the answer.
    let best = simulated
        .iter()
        .filter(|(_, p)| p.simulated.is_some_and(|s| s.meets))
        .min_by(|(_, a), (_, b)| {
            a.usd_per_m_output
                .total_cmp(&b.usd_per_m_output)
                .then(a.gpus.cmp(&b.gpus))
        })
        .map(|(i, _)| *i);
    let nearest: Vec<usize> = if best.is_none() {
        let mut o: Vec<usize> = (0..keys.len()).collect();
        o.sort_by(|&a, &b| keys[a].miss.total_cmp(&keys[b].miss));
        o.truncate(3);
        o
    } else {
        Vec::new()
    };
    let front_all = pareto_front(&keys);
    let keep = returned(
        &keys,
        &b.raws,
        b.candidates.len(),
        &[&front_all, &short, &nearest],
    );
    let mut cand_map: Vec<Option<usize>> = vec![None; b.candidates.len()];
    let mut candidates = Vec::new();
    let mut points = Vec::with_capacity(keep.len());
    for &i in &keep {
        let mut p = full(i);
        let ci = p.candidate;
        p.candidate = *cand_map[ci].get_or_insert_with(|| {
            candidates.push(b.candidates[ci].clone());
            candidates.len() - 1
        });
        points.push(p);
    }
    let at = |i: usize| keep.iter().position(|&k| k == i).unwrap_or(0);
    let mut shortlist_idx: Vec<usize> = short.iter().map(|&i| at(i)).collect();
    shortlist_idx.sort_by(|&x, &y| {
        points[x]
            .usd_per_m_output
            .total_cmp(&points[y].usd_per_m_output)
    });
    let commands = best.map_or_else(Vec::new, |i| {
        let c = &b.candidates[full(i).candidate];
        launch::commands(c.engine, served, &c.layout, c.spec.as_ref())
    });
    Ok(SearchResult {
        rate_rps: spec.rate_rps,
        input_len: spec.input_len,
        output_len: spec.output_len,
        targets: spec.targets,
        statistic: spec.statistic,
        considered: b.considered,
        screened: b.candidates.len() as u64,
        screened_points: b.raws.len() as u64,
        simulations,
        refused: b
            .refused
            .iter()
            .map(|(e, n)| Refusal {
                en: e.message(Lang::En),
                ko: e.message(Lang::Ko),
                count: *n,
            })
            .collect(),
        candidates,
        points,
        front: front_all.iter().map(|&i| at(i)).collect(),
        shortlist: shortlist_idx,
        best: best.map(at),
        commands,
        nearest: nearest.iter().map(|&i| at(i)).collect(),
    })
}
