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
#[cfg(test)]
use crate::scenario::DatasetKind;
use crate::scenario::{ArrivalKind, Scenario};
use crate::sim::config::{Budget, EngineConfig, Slo};
use crate::sim::disagg::{simulate_disagg, DisaggConfig, DisaggSummary};
use crate::sim::replica::Replica;
use crate::sim::result::SimResult;
use crate::sim::stats::Dist;
use crate::sim::step_time::StepModel;
use crate::sim::sweep::sweep_with;
use crate::sim::workload::{Arrival, Lengths, WorkloadSpec};
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

/// Mean prompt and output lengths of a length distribution, tokens.
fn mean_lengths(l: &Lengths) -> (f64, f64) {
    match l {
        Lengths::Fixed { input, output } => (*input as f64, *output as f64),
        Lengths::Uniform { input, output } => (
            (input.0 + input.1) as f64 / 2.0,
            (output.0 + output.1) as f64 / 2.0,
        ),
        Lengths::ShareGpt => (217.0, 202.0),
        Lengths::List { pairs } => {
            let n = pairs.len().max(1) as f64;
            (
                pairs.iter().map(|p| p.0 as f64).sum::<f64>() / n,
                pairs.iter().map(|p| p.1 as f64).sum::<f64>() / n,
            )
        }
    }
}

/// The analytic estimate's parts for one engine: a full batch (one unit's), the units with
/// clients, the mean decode context, the mean output length, one decode step's time at that
/// batch and one prompt's prefill time (seconds).
struct CapacityParts {
    batch: u64,
    units: u64,
    ctx: u64,
    o: f64,
    t_decode: f64,
    t_prefill: f64,
}

fn capacity_parts(
    model: &ModelDesc,
    gpu: &Accelerator,
    engine: &EngineConfig,
    s: &Scenario,
    wl: &WorkloadSpec,
) -> Result<CapacityParts, CalcError> {
    let r = engine.resolve(model, gpu)?;
    let (i, o) = mean_lengths(&wl.lengths);
    let tokens = (i + o).ceil().max(1.0) as u64;
    let per_request: u64 = r
        .groups
        .iter()
        .map(|g| {
            g.count.saturating_mul(g.blocks(
                tokens,
                tokens.min(r.max_num_batched_tokens),
                r.block_size,
            ))
        })
        .fold(0, u64::saturating_add)
        .max(1);
    let par = engine.parallel();
    // The units that have clients, and the attention-DP ranks whose tokens meet in each MoE
    // layer, as the simulator counts them (`sim::replica`).
    let units = wl
        .max_concurrency
        .map_or(par.units(), |c| par.busy_units(c));
    let mut batch = r.max_num_seqs.min(r.usable_blocks() / per_request).max(1);
    if let Some(c) = wl.max_concurrency {
        batch = batch.min(c.div_ceil(units).max(1));
    }
    let mut steps = StepModel::new(
        model,
        gpu,
        &engine.perf_workload(),
        &s.views.eff,
        r.max_model_len,
    )?
    .with_parallel(par, gpu)
    .with_step_overhead(crate::sim::step_overhead(engine, &r));
    steps.set_active_ranks(par.busy_ranks(wl.max_concurrency));
    let ctx = (i + o / 2.0).ceil().max(1.0) as u64;
    steps.begin();
    for _ in 0..batch {
        steps.add_decode(ctx);
    }
    let t_decode = steps.finish(batch, batch);
    let prompt = (i * (1.0 - engine.prefix_hit)).ceil().max(1.0) as u64;
    steps.begin();
    steps.add_prefill(0, prompt);
    let t_prefill = steps.finish(prompt, 1) - s.views.eff.prefill_overhead_s;
    Ok(CapacityParts {
        batch,
        units,
        ctx,
        o,
        t_decode,
        t_prefill: t_prefill.max(0.0),
    })
}

/// The analytic saturation estimate, req/s: a full batch of `B` requests (the fewest of
/// `max_num_seqs`, the requests whose KV blocks fit, and the clients) each needs `O` decode
/// steps at the mean context and its prompt's prefill: `B / (O·t_decode(B) + B·t_prefill(I))`.
/// Also returns the decode step's batch, context and time (seconds) for "Show the math".
/// Under attention DP or pipeline stages the batch is one unit's (`core::sim::parallel`) and
/// the rate the instance's (the units' with clients together).
pub fn analytic_capacity(
    model: &ModelDesc,
    gpu: &Accelerator,
    engine: &EngineConfig,
    s: &Scenario,
    wl: &WorkloadSpec,
) -> Result<(f64, (u64, u64, f64)), CalcError> {
    let CapacityParts {
        batch,
        units,
        ctx,
        o,
        t_decode,
        t_prefill,
    } = capacity_parts(model, gpu, engine, s, wl)?;
    let per_round = o * t_decode + batch as f64 * t_prefill;
    let rate = if per_round > 0.0 {
        (batch * units) as f64 / per_round
    } else {
        1.0
    };
    Ok((rate.max(1e-3), (batch, ctx, t_decode)))
}

/// The analytic saturation estimate of disaggregated pools, req/s: the slower of the prefill
/// pool (`P` workers of `u_p` units, one prompt each at a time: `P·u_p / t_prefill(I)`) and
/// the decode pool (`D` workers of `u_d` units, a full batch `B` each for `O` steps:
/// `D·u_d·B / (O·t_decode(B))`), the clients shared out over each pool's workers. Also the
/// decode pool's step as [`analytic_capacity`] returns it.
pub fn analytic_capacity_disagg(
    model: &ModelDesc,
    gpu: &Accelerator,
    (prefill, decode, cfg): (&EngineConfig, &EngineConfig, &DisaggConfig),
    s: &Scenario,
    wl: &WorkloadSpec,
) -> Result<(f64, (u64, u64, f64)), CalcError> {
    let share = |workers: u64| WorkloadSpec {
        max_concurrency: wl.max_concurrency.map(|c| c.div_ceil(workers.max(1))),
        ..wl.clone()
    };
    let p = capacity_parts(model, gpu, prefill, s, &share(cfg.prefill_workers))?;
    let d = capacity_parts(model, gpu, decode, s, &share(cfg.decode_workers))?;
    let rate_p = if p.t_prefill > 0.0 {
        cfg.prefill_workers as f64 * p.units as f64 / p.t_prefill
    } else {
        f64::INFINITY
    };
    let per_round = d.o * d.t_decode;
    let rate_d = if per_round > 0.0 {
        cfg.decode_workers as f64 * (d.units * d.batch) as f64 / per_round
    } else {
        f64::INFINITY
    };
    let rate = rate_p.min(rate_d);
    let rate = if rate.is_finite() { rate } else { 1.0 };
    Ok((rate.max(1e-3), (d.batch, d.ctx, d.t_decode)))
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
    let points = sweep
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
        .collect();
    let series = chosen
        .series
        .points
        .iter()
        .map(|p| SeriesPoint {
            t_s: p.t_s,
            batch: p.batch,
            waiting: p.waiting,
            kv: p.kv_occupancy,
        })
        .collect();
    let mut notes: Vec<String> = chosen.notes.iter().map(|n| n.message(lang)).collect();
    notes.dedup();
    let disagg = chosen.disagg.clone();
    if let Some(d) = &disagg {
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
    let par = engine.parallel();
    let par = crate::sim::Parallel {
        nodes: par.nodes_for(acc),
        ..par
    };
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
        // The step by component (measured kernels): attention and the lm_head are what the
        // token-proportional parts and the engine's time leave.
        let rest = (t - p.iter().sum::<f64>() - t0).max(0.0);
        for (sym, key, v) in [
            ("t_attn", "sv_term_part_attn", rest),
            ("t_gemm", "sv_term_part_gemm", p[0]),
            ("t_moe", "sv_term_part_moe", p[1]),
            ("t_elem", "sv_term_part_elem", p[2]),
            ("t_comm", "sv_term_part_comm", p[3]),
            ("t_0", "sv_term_part_overhead", t0),
        ] {
            terms.push(Term::num(
                sym,
                key,
                v * 1e3,
                "view_unit_ms",
                Source::Derived("src_step_parts".into()),
            ));
        }
    }
    if par.beyond_tp(acc) {
        // Short values (the column does not wrap); the engine's own flags as the source.
        terms.push(Term::new(
            "P",
            "sv_term_parallel",
            format!("{} × {} × {} = {}", par.tp, par.dp, par.pp, par.gpus()),
            "",
            Source::User(par.engine_flags(engine.engine)),
        ));
        terms.push(Term::new(
            "EP",
            "sv_term_ep",
            format!("{} (MoE TP {})", par.ep, par.moe_tp()),
            "",
            Source::User("sv_par_ep".into()),
        ));
    }
    let ms = t * 1e3;
    let tok_s = if t > 0.0 { batch as f64 / t } else { 0.0 };
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
        notes: {
            // Which step model timed it: the measured kernels (with the parts above) or the
            // roofline.
            let how = if parts.is_some() {
                "sv_math_note_kernels"
            } else {
                "sv_math_note"
            };
            if acc.architecture == Architecture::Unknown {
                vec![how.into(), "sv_math_arch_unknown".into()]
            } else {
                vec![how.into()]
            }
        },
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::GpuChoice;

    fn small_query(gpus: &[&str]) -> String {
        let mut s = Scenario {
            gpus: gpus
                .iter()
                .map(|g| GpuChoice::Catalog((*g).into()))
                .collect(),
            ..Scenario::default()
        };
        s.views.serving.num_requests = 300;
        s.views.serving.warmup = 20;
        s.to_query()
    }

    #[test]
    fn an_all_at_once_run_survives_the_trip_through_json() {
        // JSON has no infinity: the chosen run's rate (and any statistic that is not a
        // finite number) must still decode on the page's side.
        let mut s = Scenario::from_query(&small_query(&["h100-sxm"])).0;
        s.views.serving.arrival = crate::scenario::ArrivalKind::Inf;
        let job = ServingJob {
            id: 3,
            query: s.to_query(),
            lang: "en".into(),
            kind: JobKind::Sweep,
            text: String::new(),
        };
        let text = serde_json::to_string(&job).unwrap_or_default();
        let reply: WorkerReply =
            serde_json::from_str(&run_job_json(&text)).unwrap_or_else(|e| panic!("{e}"));
        match reply {
            WorkerReply::Done { view, .. } => {
                let g = &view.gpus[0];
                assert!(g.chosen_rate.is_infinite(), "{}", g.chosen_rate);
                assert!(!g.chosen.is_empty());
            }
            other => panic!("expected a result, got {other:?}"),
        }
    }

    #[test]
    fn job_round_trips_through_json_and_answers_its_id() {
        let job = ServingJob {
            id: 7,
            query: small_query(&["h100-sxm"]),
            lang: "en".into(),
            kind: JobKind::Sweep,
            text: String::new(),
        };
        let text = serde_json::to_string(&job).unwrap_or_default();
        let back: ServingJob = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, job);
        let reply: WorkerReply =
            serde_json::from_str(&run_job_json(&text)).unwrap_or_else(|e| panic!("{e}"));
        match reply {
            WorkerReply::Done { id, view } => {
                assert_eq!(id, 7);
                assert_eq!(view.gpus.len(), 1);
            }
            other => panic!("expected a result, got {other:?}"),
        }
    }

    #[test]
    fn garbage_gets_a_failure_with_id_zero() {
        let reply: WorkerReply =
            serde_json::from_str(&run_job_json("{nope")).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(reply, WorkerReply::Failed { id: 0, .. }));
    }

    #[test]
    fn sweep_brackets_the_knee_and_latency_rises_past_it() {
        let v = run_job(
            &small_query(&["h100-sxm", "l40s"]),
            Lang::En,
            Catalog::builtin(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(v.gpus.len(), 2, "{:?}", v.errors);
        for g in &v.gpus {
            assert_eq!(g.points.len(), SWEEP_FRACTIONS.len());
            // The analytic estimate is within a factor of two of the simulated capacity,
            // so the swept rates (0.1–1.5 × the estimate) reach the knee.
            let ratio = g.saturation_rate / g.analytic_rate;
            assert!((0.5..2.0).contains(&ratio), "{}: {ratio}", g.name);
            let first = &g.points[0];
            let last = &g.points[g.points.len() - 1];
            assert!(last.rate > first.rate);
            assert!(last.ttft.p99 >= first.ttft.p99, "{}", g.name);
            assert!(g.points.iter().all(|p| p.ttft.p99 >= p.ttft.p50));
            assert!(!g.series.is_empty());
            // The chosen run is automatic: 80% of the simulated saturation rate.
            let want = g.saturation_rate * AUTO_RATE_FRACTION;
            assert!((g.chosen_rate - want).abs() <= 1e-9 * want.max(1.0));
        }
        // A faster GPU saturates later.
        assert!(v.gpus[0].saturation_rate > v.gpus[1].saturation_rate);
        assert!(v.math.is_some());
    }

    /// With the toggle on every run is disaggregated: the chosen run carries both pools (the
    /// link NVLink, three GPUs fitting one H100 node), the sweep still brackets its knee, and
    /// the view's table has a column for the GPU.
    #[test]
    fn a_disaggregated_sweep_shows_both_pools() {
        let mut s = Scenario::from_query(&small_query(&["h100-sxm"])).0;
        s.views.serving.disagg = true;
        s.views.serving.decode_workers = 2;
        let v =
            run_job(&s.to_query(), Lang::En, Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
        let g = &v.gpus[0];
        let d = g.disagg.as_ref().unwrap_or_else(|| panic!("no pools"));
        assert_eq!(
            (
                d.prefill_workers,
                d.prefill_gpus,
                d.decode_workers,
                d.decode_gpus
            ),
            (1, 1, 2, 1)
        );
        assert_eq!(d.link, crate::sim::disagg::KvLink::Nvlink);
        assert!(d.prefill_busy > 0.0 && d.decode_busy > 0.0, "{d:?}");
        assert!(
            d.transfer_ms.mean > 0.0 && d.kv_bytes_per_gpu > 0.0,
            "{d:?}"
        );
        let ratio = g.saturation_rate / g.analytic_rate;
        assert!((0.5..2.0).contains(&ratio), "{ratio}");
        assert!(
            g.notes.iter().any(|n| n.starts_with("Disaggregated")),
            "{:?}",
            g.notes
        );
        assert_eq!(v.disagg_columns().len(), 1);
        // Off: one replica, no pools.
        s.views.serving.disagg = false;
        let v =
            run_job(&s.to_query(), Lang::En, Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
        assert!(v.disagg_columns().is_empty());
    }

    #[test]
    fn step_math_equals_the_step_model_at_batch_one() {
        let s = Scenario::default();
        let model = scenario_model(&s).unwrap_or_else(|e| panic!("{e}"));
        let gpu = Catalog::builtin()
            .get("h100-sxm")
            .cloned()
            .unwrap_or_else(|e| panic!("{e}"));
        let mut s1 = s.clone();
        s1.views.serving.max_num_seqs = 1;
        let engine = engine_config(&s1);
        let (_, (b, ctx, t)) = analytic_capacity(&model, &gpu, &engine, &s1, &workload(&s1))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b, 1);
        let mut steps = StepModel::new(
            &model,
            &gpu,
            &engine.perf_workload(),
            &s1.views.eff,
            engine
                .resolve(&model, &gpu)
                .map(|r| r.max_model_len)
                .unwrap_or(1),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        steps.begin();
        steps.add_decode(ctx);
        assert_eq!(steps.finish(1, 1), t);
    }

    #[test]
    fn idle_data_parallel_ranks_add_no_capacity() {
        // Two clients over attention-DP 2 and 4 of a dense model: two ranks serve one client
        // each either way, so the estimate is the same. Without a client cap every rank fills
        // its batch, and DP 4 serves about twice what DP 2 does.
        let model = scenario_model(&Scenario::default()).unwrap_or_else(|e| panic!("{e}"));
        let gpu = Catalog::builtin()
            .get("h100-sxm")
            .cloned()
            .unwrap_or_else(|e| panic!("{e}"));
        let rate = |dp: u64, clients: Option<u64>| {
            let mut s = Scenario::default();
            s.views.serving.dp = dp;
            let engine = engine_config(&s);
            let mut wl = workload(&s);
            wl.max_concurrency = clients;
            analytic_capacity(&model, &gpu, &engine, &s, &wl)
                .unwrap_or_else(|e| panic!("{e}"))
                .0
        };
        assert_eq!(rate(2, Some(2)), rate(4, Some(2)));
        let (two, four) = (rate(2, None), rate(4, None));
        assert!((four / two - 2.0).abs() < 0.01, "{four} {two}");
    }

    #[test]
    fn inputs_map_to_vllm_flags() {
        let mut s = Scenario::default();
        s.views.serving.max_num_seqs = 64;
        s.views.serving.arrival = ArrivalKind::Bursty;
        s.views.serving.burstiness_cv = 2.0;
        s.views.serving.dataset = DatasetKind::Uniform;
        let e = engine_config(&s);
        assert_eq!(e.max_num_seqs, Some(64));
        assert_eq!(e.max_num_batched_tokens, None);
        // 0 is vLLM's own CUDA-graph rule; a size set in the section is the launch's.
        assert_eq!(e.max_cudagraph_capture_size, None);
        s.views.serving.cudagraph_capture = 2048;
        assert_eq!(engine_config(&s).max_cudagraph_capture_size, Some(2048));
        let w = workload(&s);
        assert_eq!(
            w.arrival,
            Arrival::Gamma {
                rate: 1.0,
                burstiness: 0.25
            }
        );
        let Lengths::Uniform { input, .. } = w.lengths else {
            panic!("uniform expected")
        };
        assert!(input.0 < s.perf.input_len && input.1 > s.perf.input_len);
    }
}
