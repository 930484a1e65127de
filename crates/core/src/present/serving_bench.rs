//! "Bring your own benchmark" for the serving worker ([`JobKind::Bench`](super::serving::JobKind)):
//! the pasted `vllm bench serve` output (its text summary or its JSON result
//! file, read by `core::sim::parse_bench`) is simulated on the same setup (rate, concurrency
//! cap, burstiness, request count, lengths) with the scenario's model, its first compared GPU,
//! the serving section's engine flags and the scenario's efficiencies; every measured
//! statistic the simulator also reports is shown beside the simulated one, and the
//! efficiencies are fitted to it (`core::sim::fit_bench_from`, as `llmcalc calibrate --fit`), so
//! the page's "Fit" button only writes them into the scenario (`e_*` in the URL).
//!
//! Plain data out: rates and errors that are not finite are `None` (JSON has no infinity).

use crate::base::error::{CalcError, Phrase};
use crate::base::i18n::Lang;
use crate::calc::perf::Efficiencies;
use crate::hardware::catalog::Catalog;
use crate::present::report::{accelerator_of, scenario_model};
use crate::present::serving_load::{engine_config, SEED};
use crate::scenario::{Scenario, ServingInputs};
use crate::sim::bench::parse_bench;
use crate::sim::config::Budget;
use crate::sim::fit::{fit_bench_from, roofline};
use crate::sim::replica::Replica;
use crate::sim::workload::Lengths;
use serde::{Deserialize, Serialize};

/// One statistic: measured, simulated with the scenario's efficiencies, and with the fitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRow {
    /// vLLM's key (`median_ttft_ms`, `request_throughput`, …).
    pub key: String,
    /// The benchmark's value.
    pub measured: f64,
    /// The simulator's, with the scenario's efficiencies.
    pub simulated: Option<f64>,
    /// The simulator's, with the fitted efficiencies.
    pub fitted: Option<f64>,
}

/// One fitted efficiency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchKnob {
    /// The efficiency's field name (`bandwidth`, `compute_prefill`, …).
    pub name: String,
    /// The statistic it was fitted to.
    pub statistic: String,
    /// Before the fit.
    pub before: f64,
    /// After the fit.
    pub after: f64,
    /// The search stopped at the knob's bound.
    pub at_bound: bool,
}

/// What the paste box shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchView {
    /// The GPU simulated (the scenario's first).
    pub gpu_name: String,
    /// The benchmark's request rate, req/s (`None`: all at once, `inf`).
    pub request_rate: Option<f64>,
    /// Its `--max-concurrency`.
    pub max_concurrency: Option<u64>,
    /// Requests sent.
    pub num_prompts: u64,
    /// Mean prompt and output lengths, tokens.
    pub mean_lengths: (f64, f64),
    /// The model the benchmark names, if it does.
    pub model: Option<String>,
    /// Measured against simulated, per statistic.
    pub rows: Vec<BenchRow>,
    /// The fitted efficiencies (`None` when the fit was refused).
    pub fitted: Option<Efficiencies>,
    /// The knobs the fit moved.
    pub knobs: Vec<BenchKnob>,
    /// Why the fit was refused, in one sentence.
    pub fit_error: Option<String>,
    /// Simulations the fit ran.
    pub simulations: u32,
    /// The fit left the TTFT alone (the simulated clients run in lockstep).
    pub ttft_not_fitted: bool,
    /// The notes of the unfitted simulation (the lockstep of alike clients, say), in the
    /// page's language.
    pub notes: Vec<String>,
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

fn mean_lengths(l: &Lengths) -> (f64, f64) {
    match l {
        Lengths::Fixed { input, output } => (*input as f64, *output as f64),
        Lengths::List { pairs } => {
            let n = pairs.len().max(1) as f64;
            (
                pairs.iter().map(|p| p.0 as f64).sum::<f64>() / n,
                pairs.iter().map(|p| p.1 as f64).sum::<f64>() / n,
            )
        }
        Lengths::Uniform { input, output } => (
            (input.0 + input.1) as f64 / 2.0,
            (output.0 + output.1) as f64 / 2.0,
        ),
        Lengths::ShareGpt => (f64::NAN, f64::NAN),
    }
}

/// The scenario reduced to what [`run_bench_job`] reads: the model and its MTP choice, the
/// first compared GPU, TP, the precisions, the serving section's engine flags (and the
/// frontend path) and the efficiencies; everything else at its default. The page sends a new benchmark job (up to
/// 40 simulations) only when this changes, not when the sweep's rate, arrivals or lengths, the
/// planner's targets or a second GPU change.
pub fn bench_scenario(s: &Scenario) -> Scenario {
    let d = Scenario::default();
    let v = &s.views.serving;
    let mut views = d.views.clone();
    views.eff = s.views.eff;
    // The section's load (the benchmark states its own) goes back to its defaults; every other
    // serving input is an engine flag the job reads, kept (a new one is kept by default).
    let dv = &d.views.serving;
    views.serving = ServingInputs {
        arrival: dv.arrival,
        burstiness_cv: dv.burstiness_cv,
        max_concurrency: dv.max_concurrency,
        dataset: dv.dataset,
        num_requests: dv.num_requests,
        warmup: dv.warmup,
        rate: dv.rate,
        router: dv.router,
        ..*v
    };
    Scenario {
        model: s.model.clone(),
        gpus: s.gpus.iter().take(1).cloned().collect(),
        tp: s.tp,
        weight_dtype: s.weight_dtype,
        kv_dtype: s.kv_dtype,
        include_mtp: s.include_mtp,
        views,
        ..d
    }
}

/// Runs a benchmark job: reads `text`, simulates its setup on the scenario of `query`,
/// compares, fits. An unreadable paste is an error with the parser's sentence; a benchmark
/// the fit cannot use still gets its comparison, with the fit's sentence.
pub fn run_bench_job(
    query: &str,
    text: &str,
    lang: Lang,
    catalog: &Catalog,
) -> Result<BenchView, CalcError> {
    let bench = parse_bench(text)?;
    let (s, _) = Scenario::from_query(query);
    let model = scenario_model(&s)?;
    let g = s.gpus.first().ok_or_else(|| CalcError::BadValue {
        key: "gpu".into(),
        found: Phrase::verbatim(""),
        expected: Phrase::tr("bb_need_gpu"),
    })?;
    let acc = accelerator_of(g, catalog)?;
    // The comparison and the fit are the roofline's: its efficiencies are what the fit adjusts
    // and what the link it gives carries (`calibrate --fit` does the same).
    let engine = roofline(&engine_config(&s));
    let mut rep = Replica::new(&model, &acc, &engine, &s.views.eff)?;
    let r = rep.run(&bench.workload(SEED), None, Budget::default())?;
    let before = bench.compare(&r);
    let fit = fit_bench_from(&model, &acc, &engine, &bench, &s.views.eff, SEED, &r);
    let rows = before
        .iter()
        .map(|c| BenchRow {
            key: c.key.clone(),
            measured: c.measured,
            simulated: finite(c.predicted),
            fitted: fit.as_ref().ok().and_then(|f| {
                f.after
                    .iter()
                    .find(|a| a.key == c.key)
                    .and_then(|a| finite(a.predicted))
            }),
        })
        .collect();
    let (fitted, knobs, fit_error, simulations) = match &fit {
        Ok(f) => (
            Some(f.efficiencies),
            f.knobs
                .iter()
                .map(|k| BenchKnob {
                    name: k.knob.field().to_string(),
                    statistic: k.statistic.clone(),
                    before: k.before,
                    after: k.after,
                    at_bound: k.at_bound,
                })
                .collect(),
            None,
            f.simulations,
        ),
        Err(e) => (None, Vec::new(), Some(e.message(lang)), 0),
    };
    Ok(BenchView {
        gpu_name: acc.name.clone(),
        request_rate: finite(bench.request_rate),
        max_concurrency: bench.max_concurrency,
        num_prompts: bench.num_prompts,
        mean_lengths: mean_lengths(&bench.lengths),
        model: bench.model.clone(),
        rows,
        fitted,
        knobs,
        fit_error,
        simulations,
        ttft_not_fitted: fit.as_ref().is_ok_and(|f| f.ttft_not_fitted),
        notes: r.notes.iter().map(|n| n.message(lang)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::present::serving::{run_job_json, JobKind, ServingJob, WorkerReply};
    use crate::scenario::GpuChoice;
    use crate::scenario::ModelSource;

    const SUMMARY: &str = include_str!("../../../../tests/fixtures/bench/vllm_bench_summary.txt");

    fn query() -> String {
        Scenario {
            gpus: vec![GpuChoice::Catalog("h100-sxm".into())],
            model: ModelSource::Preset("qwen3-8b".into()),
            ..Scenario::default()
        }
        .to_query()
    }

    fn reply(text: &str) -> WorkerReply {
        let job = ServingJob {
            id: 5,
            query: query(),
            lang: "en".into(),
            kind: JobKind::Bench,
            text: text.into(),
        };
        let json = serde_json::to_string(&job).unwrap_or_default();
        serde_json::from_str(&run_job_json(&json)).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_reduced_scenario_keeps_everything_the_job_reads() {
        let (mut s, _) = Scenario::from_query(&query());
        // Edits the job does not read: they leave the reduced query as it was.
        let base = bench_scenario(&s).to_query();
        let mut other = s.clone();
        other.gpus.push(GpuChoice::Catalog("a100-sxm-80gb".into()));
        other.perf.input_len = 777;
        other.views.serving.rate = 3.5;
        other.views.serving.num_requests = 123;
        other.views.plan.ttft_ms = 99.0;
        assert_eq!(bench_scenario(&other).to_query(), base);
        // Edits it reads change it.
        let mut e = s.clone();
        e.views.eff.bandwidth *= 0.9;
        assert_ne!(bench_scenario(&e).to_query(), base);
        let mut m = s.clone();
        m.views.serving.max_num_seqs = 8;
        assert_ne!(bench_scenario(&m).to_query(), base);
        let mut f = s.clone();
        f.views.serving.frontend_overhead_ms = 5.0;
        assert_ne!(bench_scenario(&f).to_query(), base);
        // And the job answers the same on the reduced scenario as on the whole one.
        s.views.serving.max_num_seqs = 16;
        s.views.serving.frontend_overhead_ms = 5.0;
        s.views.serving.rate = 2.0;
        s.perf.input_len = 300;
        let whole = run_bench_job(&s.to_query(), SUMMARY, Lang::En, Catalog::builtin());
        let reduced = run_bench_job(
            &bench_scenario(&s).to_query(),
            SUMMARY,
            Lang::En,
            Catalog::builtin(),
        );
        assert_eq!(
            whole.map_err(|e| e.to_string()),
            reduced.map_err(|e| e.to_string())
        );
    }

    #[test]
    fn a_pasted_summary_is_compared_and_the_fit_moves_toward_it() {
        let WorkerReply::Benched { id, bench } = reply(SUMMARY) else {
            panic!("expected a comparison")
        };
        assert_eq!(id, 5);
        assert_eq!(bench.request_rate, None);
        assert_eq!(bench.max_concurrency, Some(32));
        assert_eq!(bench.num_prompts, 32);
        assert_eq!(bench.mean_lengths, (2048.0, 2048.0));
        let row = |k: &str| {
            bench
                .rows
                .iter()
                .find(|r| r.key == k)
                .cloned()
                .unwrap_or_else(|| panic!("no {k}"))
        };
        for k in ["median_ttft_ms", "median_tpot_ms", "request_throughput"] {
            let r = row(k);
            assert!(
                r.measured > 0.0 && r.simulated.is_some_and(|x| x > 0.0),
                "{r:?}"
            );
        }
        // The fit brings the fitted statistic closer to the measured one than before.
        let tpot = row("median_tpot_ms");
        let err = |x: Option<f64>| (x.unwrap_or(f64::NAN) / tpot.measured).ln().abs();
        assert!(err(tpot.fitted) <= err(tpot.simulated), "{tpot:?}");
        assert!(err(tpot.fitted) < 0.05, "{tpot:?}");
        let fitted = bench
            .fitted
            .unwrap_or_else(|| panic!("no fit: {:?}", bench.fit_error));
        assert!(!bench.knobs.is_empty());
        assert_ne!(fitted, Scenario::default().views.eff);
        assert!(bench.simulations > 1);
    }

    #[test]
    fn a_bad_paste_fails_with_a_sentence() {
        let WorkerReply::Failed { id, message } = reply("hello, this is not a benchmark") else {
            panic!("expected a failure")
        };
        assert_eq!(id, 5);
        assert!(
            message.contains("vllm") || message.contains("benchmark"),
            "{message}"
        );
    }
}
