//! "Serving under load": the job the page sends to its simulator worker and the prepared data
//! the worker sends back, as plain serde data, and the pure job runner.
//!
//! Protocol (JSON text both ways, `bin/sim_worker.rs` only moves it): the page sends a
//! [`ServingJob`] (an id, the scenario's URL query, the language, its [`JobKind`]: the
//! section's sweep, the planner's simulated sizing, a pasted benchmark with its text, or the
//! planner's search); the worker answers [`WorkerReply::Ready`] once when it has started, then
//! one [`WorkerReply::Done`] (a sweep), [`WorkerReply::Planned`] (a planner job),
//! [`WorkerReply::Benched`] (a benchmark), [`WorkerReply::Searched`] (a search) or
//! [`WorkerReply::Failed`] per job, carrying the job's id; a search also posts
//! [`WorkerReply::Progress`] while it runs (its stage and steps), before its answer. The page drops replies whose id is not the newest job's of its kind, and sends
//! at most one job at a time (the oldest of the newest waiting job of each kind when a reply
//! arrives), so a new scenario during a sweep supersedes every job of that kind in between.
//!
//! The runner ([`run_job`]) reads the scenario, and for every compared GPU: builds a replica
//! with the section's engine knobs, estimates its saturation rate analytically
//! ([`analytic_capacity`]), sweeps [`SWEEP_FRACTIONS`] of that estimate (P50/P99 TTFT, TPOT,
//! ITL, E2EL per rate, the simulated saturation rate and the highest rate meeting the
//! planner's P99 targets), runs once more at the chosen rate for the time series and
//! `vllm bench serve`'s statistics, and times one decode step for "Show the math". The page's
//! main module never calls it: only the worker links the simulator.

mod capacity;

use crate::base::derivation::{Derivation, Source, Term};
use crate::base::error::CalcError;
use crate::base::i18n::{fill, tr, Lang};
use crate::base::units::fmt_sig;
use crate::hardware::catalog::{Accelerator, Architecture, Catalog};
use crate::model::ModelDesc;
use crate::present::plan_search::{run_search_job, SearchView};
use crate::present::report::{accelerator_of, scenario_model};
use crate::present::serving_bench::{run_bench_job, BenchView};
use crate::present::serving_disagg::link_name;
use crate::present::serving_load::burstiness;
pub use crate::present::serving_load::SEED;
pub use crate::present::serving_load::{disagg_shapes, engine_config, workload};
use crate::present::serving_plan::{run_plan_job, PlanSimView};
use crate::scenario::{ArrivalKind, Scenario};
use crate::sim::config::{Budget, EngineConfig, Slo};
use crate::sim::disagg::{simulate_disagg, DisaggConfig, DisaggSummary};
use crate::sim::replica::Replica;
use crate::sim::result::SimResult;
use crate::sim::stats::Dist;
use crate::sim::sweep::{sweep_with, SweepResult};
use crate::sim::workload::{Arrival, WorkloadSpec};
pub use capacity::{analytic_capacity, analytic_capacity_disagg};
use serde::{Deserialize, Serialize};

/// The swept rates as fractions of the analytic saturation estimate (12 rates).
pub const SWEEP_FRACTIONS: [f64; 12] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2, 1.5];
/// The chosen run's rate as a fraction of the simulated saturation rate, when not given.
pub const AUTO_RATE_FRACTION: f64 = 0.8;
/// What a job asks the worker for.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// The serving section's sweep ([`run_job`], answered by [`WorkerReply::Done`]).
    #[default]
    Sweep,
    /// The planner's replicas on simulated P99s ([`run_plan_job`], answered by
    /// [`WorkerReply::Planned`]).
    Plan,
    /// A pasted `vllm bench serve` result compared and fitted ([`run_bench_job`], answered by
    /// [`WorkerReply::Benched`]).
    Bench,
    /// The planner's search over engines, shapes and layouts ([`run_search_job`], answered by
    /// [`WorkerReply::Searched`] after [`WorkerReply::Progress`] messages).
    Search,
}

/// One job for the worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServingJob {
    /// Increasing job id (one sequence for every kind); replies carry it.
    pub id: u64,
    /// The scenario as its URL query (without `?`).
    pub query: String,
    /// Language code of the messages (`en`, `ko`).
    pub lang: String,
    /// What to compute (a sweep when absent).
    #[serde(default)]
    pub kind: JobKind,
    /// The pasted benchmark of a [`JobKind::Bench`] job (empty otherwise).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
}

/// What the worker sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkerReply {
    /// The worker has started and listens.
    Ready,
    /// A job's result.
    Done {
        /// The job's id.
        id: u64,
        /// The prepared data.
        view: Box<ServingView>,
    },
    /// A planner job's result.
    Planned {
        /// The job's id.
        id: u64,
        /// The simulated sizing of the plan's best option.
        plan: Box<PlanSimView>,
    },
    /// A benchmark job's result.
    Benched {
        /// The job's id.
        id: u64,
        /// Measured against simulated, and the fit.
        bench: Box<BenchView>,
    },
    /// A search job's result.
    Searched {
        /// The job's id.
        id: u64,
        /// What the planner shows of it.
        view: Box<SearchView>,
    },
    /// Where a running job is (a search: each GPU and engine screened, each simulation).
    Progress {
        /// The job's id.
        id: u64,
        /// Steps done in this stage.
        done: u64,
        /// Steps of this stage.
        total: u64,
        /// `screen` or `simulate`.
        stage: String,
    },
    /// A job that could not run (its scenario, or an unreadable message), in one sentence.
    Failed {
        /// The job's id (0 when the message could not be read).
        id: u64,
        /// The sentence.
        message: String,
    },
}

/// P50 and P99 of one latency statistic, ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct P50P99 {
    /// Median, ms.
    pub p50: f64,
    /// 99th percentile, ms.
    pub p99: f64,
}

impl From<&Dist> for P50P99 {
    fn from(d: &Dist) -> Self {
        P50P99 {
            p50: d.median,
            p99: d.p99,
        }
    }
}

/// One swept rate of one GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatePoint {
    /// Offered rate, req/s.
    pub rate: f64,
    /// Time to first token.
    pub ttft: P50P99,
    /// Time per output token.
    pub tpot: P50P99,
    /// Inter-token latency.
    pub itl: P50P99,
    /// End-to-end latency.
    pub e2el: P50P99,
    /// Completed requests per second.
    pub throughput: f64,
    /// At or above the simulated saturation rate.
    pub saturated: bool,
}

/// One point of the chosen run's time series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// Seconds from the start.
    pub t_s: f64,
    /// Requests running.
    pub batch: u64,
    /// Requests waiting in the engine's queue.
    pub waiting: u64,
    /// Share of KV blocks in use, 0–1.
    pub kv: f64,
}

/// One compared GPU's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServingGpu {
    /// Display name.
    pub name: String,
    /// The analytic saturation estimate, req/s.
    pub analytic_rate: f64,
    /// The simulated saturation rate (all requests at once), req/s.
    pub saturation_rate: f64,
    /// The highest swept rate below saturation meeting the P99 targets.
    pub max_rate_meeting_targets: Option<f64>,
    /// One point per swept rate.
    pub points: Vec<RatePoint>,
    /// The chosen run's offered rate, req/s (infinite: all at once; `"inf"` in JSON).
    #[serde(with = "crate::base::json::f64_any")]
    pub chosen_rate: f64,
    /// The chosen run's `vllm bench serve` statistics, by vLLM's names ([`chosen_stats`]);
    /// plain pairs, so that the page's main module never decodes a whole `SimResult`
    /// (a value that is not a finite number is a string in JSON, as `f64_any` writes it).
    #[serde(with = "crate::base::json::pairs_f64_any")]
    pub chosen: Vec<(String, f64)>,
    /// Its time series.
    pub series: Vec<SeriesPoint>,
    /// Any run stopped at its step budget.
    pub partial: bool,
    /// Notes of the runs, in the job's language.
    pub notes: Vec<String>,
    /// The two pools at the chosen rate, when disaggregated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disagg: Option<DisaggSummary>,
}

/// What the section shows, for every compared GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ServingView {
    /// GPUs that could be simulated, in the scenario's order.
    pub gpus: Vec<ServingGpu>,
    /// GPUs that could not, with the reason (display name, sentence).
    pub errors: Vec<(String, String)>,
    /// P99 targets (from the planner's inputs), ms: TTFT, TPOT.
    pub targets_ms: (f64, f64),
    /// One decode step's time of the first GPU, derived.
    pub math: Option<Derivation>,
}

impl ServingView {
    /// The GPUs whose run was disaggregated, with their pools (empty when none was).
    pub fn disagg_columns(&self) -> Vec<(&str, &DisaggSummary)> {
        self.gpus
            .iter()
            .filter_map(|g| g.disagg.as_ref().map(|d| (g.name.as_str(), d)))
            .collect()
    }
}

/// Runs one job's JSON text and returns the reply's JSON text (what the worker does): a
/// sweep or a planner job, by its [`JobKind`]. Progress is dropped ([`run_job_json_with`]).
pub fn run_job_json(text: &str) -> String {
    run_job_json_with(text, &mut |_| {})
}

/// [`run_job_json`], handing `post` the JSON text of each [`WorkerReply::Progress`] while the
/// job runs (the worker posts them to the page at once).
pub fn run_job_json_with(text: &str, post: &mut dyn FnMut(&str)) -> String {
    let reply = match serde_json::from_str::<ServingJob>(text) {
        Ok(job) => {
            let lang = Lang::from_code(&job.lang).unwrap_or_default();
            match run_kind(&job, lang, post) {
                Ok(reply) => reply,
                Err(e) => WorkerReply::Failed {
                    id: job.id,
                    message: e.message(lang),
                },
            }
        }
        Err(_) => WorkerReply::Failed {
            id: 0,
            message: tr(Lang::En, "sv_bad_message").to_string(),
        },
    };
    serde_json::to_string(&reply).unwrap_or_else(|_| "{\"kind\":\"failed\",\"id\":0}".into())
}

/// Runs `job` by its kind.
fn run_kind(
    job: &ServingJob,
    lang: Lang,
    post: &mut dyn FnMut(&str),
) -> Result<WorkerReply, CalcError> {
    let id = job.id;
    let cat = Catalog::builtin();
    Ok(match job.kind {
        JobKind::Sweep => WorkerReply::Done {
            id,
            view: Box::new(run_job(&job.query, lang, cat)?),
        },
        JobKind::Plan => WorkerReply::Planned {
            id,
            plan: Box::new(run_plan_job(&job.query, lang, cat)?),
        },
        JobKind::Bench => WorkerReply::Benched {
            id,
            bench: Box::new(run_bench_job(&job.query, &job.text, lang, cat)?),
        },
        JobKind::Search => {
            let mut progress = |p: crate::sim::search::Progress| {
                let msg = WorkerReply::Progress {
                    id,
                    done: p.done,
                    total: p.total,
                    stage: p.stage.to_string(),
                };
                if let Ok(text) = serde_json::to_string(&msg) {
                    post(&text);
                }
            };
            WorkerReply::Searched {
                id,
                view: Box::new(run_search_job(&job.query, lang, cat, &mut progress)?),
            }
        }
    })
}

/// Runs a job: every compared GPU's sweep and chosen run. Errors concern the whole scenario
/// (its model, or a refusal on every GPU, such as a parallel shape that breaks a rule: the
/// page then keeps its last result beside the sentence); one GPU's failure among others is
/// listed in [`ServingView::errors`].
pub fn run_job(query: &str, lang: Lang, catalog: &Catalog) -> Result<ServingView, CalcError> {
    let (s, _) = Scenario::from_query(query);
    let model = scenario_model(&s)?;
    let mut view = ServingView {
        targets_ms: (s.views.plan.ttft_ms, s.views.plan.tpot_ms),
        ..ServingView::default()
    };
    let mut first_error = None;
    for g in &s.gpus {
        let acc = match accelerator_of(g, catalog) {
            Ok(a) => a,
            Err(e) => {
                view.errors.push((g.key(0), e.message(lang)));
                first_error.get_or_insert(e);
                continue;
            }
        };
        match run_gpu(&model, &acc, &s, lang) {
            Ok((gpu, math)) => {
                if view.math.is_none() {
                    view.math = Some(math);
                }
                view.gpus.push(gpu);
            }
            Err(e) => {
                view.errors.push((acc.name.clone(), e.message(lang)));
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) if view.gpus.is_empty() => Err(e),
        _ => Ok(view),
    }
}

fn run_gpu(
    model: &ModelDesc,
    acc: &Accelerator,
    s: &Scenario,
    lang: Lang,
) -> Result<(ServingGpu, Derivation), CalcError> {
    let engine = engine_config(s);
    let wl = workload(s);
    let slo = Slo {
        ttft_ms: s.views.plan.ttft_ms,
        tpot_ms: s.views.plan.tpot_ms,
    };
    let budget = Budget::default();
    // Disaggregated: both pools' replicas, every run of the sweep (and the chosen one) on them.
    // "Show the math" times the one engine's decode step, or the decode pool's.
    let (mut dep, (analytic, step), math_engine) = match disagg_shapes(s, acc) {
        Some((p, d, cfg)) => (
            Deployment::Pools(
                Box::new(Replica::new(model, acc, &p, &s.views.eff)?),
                Replica::new(model, acc, &d, &s.views.eff)?,
                cfg,
            ),
            analytic_capacity_disagg(model, acc, (&p, &d, &cfg), s, &wl)?,
            d,
        ),
        None => (
            Deployment::One(Replica::new(model, acc, &engine, &s.views.eff)?),
            analytic_capacity(model, acc, &engine, s, &wl)?,
            engine,
        ),
    };
    let rates: Vec<f64> = SWEEP_FRACTIONS.iter().map(|f| f * analytic).collect();
    let mut run = |w: &WorkloadSpec| dep.run(acc, w, Some(slo), budget);
    let sweep = sweep_with(&mut run, &wl, |_| rates, Some(slo))?;
    let v = &s.views.serving;
    let mut chosen_wl = wl.clone();
    let chosen_rate = match v.arrival {
        ArrivalKind::Inf => f64::INFINITY,
        ArrivalKind::MaxConcurrency if v.rate <= 0.0 => f64::INFINITY,
        _ if v.rate > 0.0 => v.rate,
        _ => (sweep.saturation_rate * AUTO_RATE_FRACTION).max(1e-3),
    };
    chosen_wl.arrival = Arrival::from_rate(chosen_rate, burstiness(v));
    let chosen = run(&chosen_wl)?;
    let points = rate_points(&sweep);
    let series = series_points(&chosen);
    let notes = run_notes(&chosen, lang);
    let disagg = chosen.disagg.clone();
    let parts = dep.stepping().step_model().kernel().map(|k| {
        let o = k.overhead().at(step.0, k.stage_layers());
        (k.linear_parts(step.0 as f64), o)
    });
    let math = step_math(acc, &math_engine, step, parts);
    let gpu = ServingGpu {
        name: acc.name.clone(),
        analytic_rate: analytic,
        saturation_rate: sweep.saturation_rate,
        max_rate_meeting_targets: sweep.max_rate_meeting_targets,
        points,
        chosen_rate,
        partial: sweep.partial || chosen.partial,
        series,
        chosen: chosen_stats(&chosen),
        notes,
        disagg,
    };
    Ok((gpu, math))
}

/// The sweep's points as the section draws them.
fn rate_points(sweep: &SweepResult) -> Vec<RatePoint> {
    sweep
        .points
        .iter()
        .map(|p| RatePoint {
            rate: p.rate,
            ttft: (&p.result.ttft_ms).into(),
            tpot: (&p.result.tpot_ms).into(),
            itl: (&p.result.itl_ms).into(),
            e2el: (&p.result.e2el_ms).into(),
            throughput: p.result.request_throughput,
            saturated: p.saturated,
        })
        .collect()
}

/// The chosen run's time series (batch, waiting, KV occupancy).
fn series_points(chosen: &SimResult) -> Vec<SeriesPoint> {
    chosen
        .series
        .points
        .iter()
        .map(|p| SeriesPoint {
            t_s: p.t_s,
            batch: p.batch,
            waiting: p.waiting,
            kv: p.kv_occupancy,
        })
        .collect()
}

/// The chosen run's notes in `lang`, once each, and the disaggregated pools' line.
fn run_notes(chosen: &SimResult, lang: Lang) -> Vec<String> {
    let mut notes: Vec<String> = chosen.notes.iter().map(|n| n.message(lang)).collect();
    notes.dedup();
    if let Some(d) = &chosen.disagg {
        notes.push(fill(
            tr(lang, "sv_pd_note"),
            &[
                ("pw", &d.prefill_workers.to_string()),
                ("pg", &d.prefill_gpus.to_string()),
                ("dw", &d.decode_workers.to_string()),
                ("dg", &d.decode_gpus.to_string()),
                ("link", link_name(d.link)),
            ],
        ));
    }
    notes
}

/// What one GPU's sweep runs on: one replica, or disaggregated pools (prefill, decode, the
/// two pools' counts and link).
enum Deployment {
    One(Replica),
    Pools(Box<Replica>, Replica, DisaggConfig),
}

impl Deployment {
    fn run(
        &mut self,
        gpu: &Accelerator,
        wl: &WorkloadSpec,
        slo: Option<Slo>,
        budget: Budget,
    ) -> Result<SimResult, CalcError> {
        match self {
            Deployment::One(rep) => rep.run(wl, slo, budget),
            Deployment::Pools(p, d, cfg) => simulate_disagg(p, d, gpu, cfg, wl, slo, budget),
        }
    }

    /// The replica whose decode step "Show the math" times: the one, or the decode pool's.
    fn stepping(&self) -> &Replica {
        match self {
            Deployment::One(rep) | Deployment::Pools(_, rep, _) => rep,
        }
    }
}

/// The statistics the section's table shows, named as `vllm bench serve` names them (with
/// their units in the name).
pub fn chosen_stats(r: &SimResult) -> Vec<(String, f64)> {
    [
        ("completed", r.completed as f64),
        ("request_throughput (req/s)", r.request_throughput),
        ("output_throughput (tok/s)", r.output_throughput),
        ("total_token_throughput (tok/s)", r.total_token_throughput),
        ("median_ttft_ms", r.ttft_ms.median),
        ("p99_ttft_ms", r.ttft_ms.p99),
        // TTFT = the server's path + the wait for the engine + the prefill (means).
        ("mean_ttft_ms", r.ttft_ms.mean),
        ("mean_frontend_ms", r.frontend_ms.mean),
        ("mean_queue_ms", r.queue_ms.mean),
        ("mean_prefill_ms", r.prefill_ms.mean),
        ("median_tpot_ms", r.tpot_ms.median),
        ("p99_tpot_ms", r.tpot_ms.p99),
        ("median_itl_ms", r.itl_ms.median),
        ("p99_itl_ms", r.itl_ms.p99),
        ("median_e2el_ms", r.e2el_ms.median),
        ("p99_e2el_ms", r.e2el_ms.p99),
        ("preemptions", r.preemptions as f64),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// One decode step's time at the analytic estimate's full batch, as a derivation.
fn step_math(
    acc: &Accelerator,
    engine: &EngineConfig,
    (batch, ctx, t): (u64, u64, f64),
    parts: Option<([f64; 4], f64)>,
) -> Derivation {
    let mut terms = vec![
        Term::num(
            "d",
            "sv_term_batch",
            batch as f64,
            "",
            Source::Derived("src_batch_seqs_or_kv".into()),
        ),
        Term::num(
            "ctx",
            "sv_term_context",
            ctx as f64,
            "unit_tokens",
            Source::Derived("src_mean_context".into()),
        ),
    ];
    if let Some((p, t0)) = parts {
        terms.extend(step_part_terms(p, t0, t));
    }
    terms.extend(parallel_terms(acc, engine));
    let ms = t * 1e3;
    let tok_s = if t > 0.0 { batch as f64 / t } else { 0.0 };
    // Which step model timed it: the measured kernels (with the parts above) or the roofline.
    let how = if parts.is_some() {
        "sv_math_note_kernels"
    } else {
        "sv_math_note"
    };
    let mut notes = vec![how.to_string()];
    if acc.architecture == Architecture::Unknown {
        notes.push("sv_math_arch_unknown".into());
    }
    Derivation {
        title_key: "sv_math_title".into(),
        formula: "t_step = t_lin(T) + t_head(S) + t_attn(Σ K) + t_ar(T) + t_0".into(),
        substituted: format!(
            "T = d = {batch}, S = {batch}, Σ K = {batch} × {ctx} (TP {})",
            engine.tp
        ),
        result: format!(
            "t_step = {} ms → d / t_step = {} tok/s ({})",
            fmt_sig(ms),
            fmt_sig(tok_s),
            acc.name
        ),
        terms,
        notes,
        ..Default::default()
    }
}

/// The step of `t` seconds by component (measured kernels: the token-proportional parts `p`
/// and the engine's time `t0`); attention and the lm_head are what those leave.
fn step_part_terms(p: [f64; 4], t0: f64, t: f64) -> Vec<Term> {
    let rest = (t - p.iter().sum::<f64>() - t0).max(0.0);
    [
        ("t_attn", "sv_term_part_attn", rest),
        ("t_gemm", "sv_term_part_gemm", p[0]),
        ("t_moe", "sv_term_part_moe", p[1]),
        ("t_elem", "sv_term_part_elem", p[2]),
        ("t_comm", "sv_term_part_comm", p[3]),
        ("t_0", "sv_term_part_overhead", t0),
    ]
    .into_iter()
    .map(|(sym, key, v)| {
        Term::num(
            sym,
            key,
            v * 1e3,
            "view_unit_ms",
            Source::Derived("src_step_parts".into()),
        )
    })
    .collect()
}

/// The shape's terms when it goes beyond tensor parallelism inside a node (none otherwise):
/// short values (the column does not wrap), the engine's own flags as the source.
fn parallel_terms(acc: &Accelerator, engine: &EngineConfig) -> Vec<Term> {
    let par = engine.parallel();
    let par = crate::sim::Parallel {
        nodes: par.nodes_for(acc),
        ..par
    };
    if !par.beyond_tp(acc) {
        return Vec::new();
    }
    vec![
        Term::new(
            "P",
            "sv_term_parallel",
            format!("{} × {} × {} = {}", par.tp, par.dp, par.pp, par.gpus()),
            "",
            Source::User(par.engine_flags(engine.engine)),
        ),
        Term::new(
            "EP",
            "sv_term_ep",
            format!("{} (MoE TP {})", par.ep, par.moe_tp()),
            "",
            Source::User("sv_par_ep".into()),
        ),
    ]
}

#[cfg(test)]
mod tests;
