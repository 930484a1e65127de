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

use crate::base::error::{CalcError, Phrase};
use crate::base::i18n::Lang;
use crate::calc::perf::Efficiencies;
use crate::hardware::Accelerator;
use crate::model::ModelDesc;
use crate::sim::config::{engine_frontend_overhead_ms, Budget, EngineConfig, Slo};
use crate::sim::disagg::{simulate_disagg, DisaggConfig, DEFAULT_KV_TRANSFER_LATENCY_MS};
use crate::sim::engines::EngineKind;
use crate::sim::kv_link::KvLink;
use crate::sim::parallel::Parallel;
use crate::sim::result::SimResult;
use crate::sim::spec::{SpecConfig, SpecMethod};
use crate::sim::workload::{Arrival, Lengths, WorkloadSpec};
use screen::{Estimate, Profile};
use serde::{Deserialize, Serialize};

/// The largest deployment (one aggregated instance, or one set of prefill and decode
/// workers) the search tries by default, GPUs.
pub const DEFAULT_MAX_GPUS: u64 = 64;
/// The largest accepted.
pub const MAX_SEARCH_GPUS: u64 = 1024;
/// Points simulated by default.
pub const DEFAULT_SHORTLIST: usize = 12;
/// Most points simulated.
pub const MAX_SHORTLIST: usize = 64;
/// The share of its closed-form capacity a deployment is loaded to.
pub const HEADROOM: f64 = 0.8;
/// The screen's P99 TTFT as a multiple of its mean (the simulator's ratio for Poisson
/// arrivals at [`HEADROOM`]: about 1.5 on the configurations of the tests).
pub const SCREEN_P99_TTFT: f64 = 1.5;
/// The screen's P99 TPOT as a multiple of its mean (about 1.15 there).
pub const SCREEN_P99_TPOT: f64 = 1.15;
/// Simulations of one short-listed point at most (each with another replica count).
pub const MAX_TRIES: u64 = 4;
/// The arrivals of one simulation span this long, seconds (between [`MIN_SIM_REQUESTS`] and
/// [`MAX_SIM_REQUESTS`] requests).
pub const SIM_SPAN_S: f64 = 60.0;
/// Fewest requests of one simulation.
pub const MIN_SIM_REQUESTS: u64 = 200;
/// Most requests of one simulation.
pub const MAX_SIM_REQUESTS: u64 = 1500;
/// Speculative depths tried with the checkpoint's MTP module.
pub const SPEC_DEPTHS: [u64; 3] = [1, 2, 3];
/// Points of the cloud returned beside the front and the short list.
pub const MAX_CLOUD: usize = 400;
/// The highest rate accepted, requests per second.
pub const MAX_SEARCH_RATE: f64 = 1.0e6;

/// A GPU to search and its price.
#[derive(Debug, Clone)]
pub struct SearchGpu {
    /// The catalog row.
    pub gpu: Accelerator,
    /// US dollars per GPU-hour.
    pub usd_per_gpu_hour: f64,
}

/// What to search.
#[derive(Debug, Clone)]
pub struct SearchSpec {
    /// Requests per second of the whole service.
    pub rate_rps: f64,
    /// Prompt tokens.
    pub input_len: u64,
    /// Output tokens.
    pub output_len: u64,
    /// TTFT and TPOT targets, ms, on `statistic`.
    pub targets: Slo,
    /// The statistic the targets bound: the P99 (the default) or the mean.
    pub statistic: Statistic,
    /// GPUs with their prices.
    pub gpus: Vec<SearchGpu>,
    /// Engines.
    pub engines: Vec<EngineKind>,
    /// The largest deployment, GPUs.
    pub max_gpus: u64,
    /// Try aggregated instances.
    pub aggregated: bool,
    /// Try disaggregated prefill and decode pools.
    pub disaggregated: bool,
    /// Try speculative decoding with the checkpoint's MTP module (when it has one).
    pub speculative: bool,
    /// The engine flags every candidate shares (precisions, the prefix cache…); its shape,
    /// engine, batch cap and speculation are the search's.
    pub base: EngineConfig,
    /// The server's path per request, ms (`None`: each engine's fitted one,
    /// `sim::config::engine_frontend_overhead_ms`).
    pub frontend_overhead_ms: Option<f64>,
    /// The step model's efficiencies.
    pub eff: Efficiencies,
    /// Points simulated.
    pub shortlist: usize,
    /// Seed of the simulations.
    pub seed: u64,
}

/// The statistic of TTFT and TPOT the targets bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Statistic {
    /// The 99th percentile over the requests.
    #[default]
    P99,
    /// The mean (as tools that size on predicted means, AIConfigurator among them, state
    /// their targets).
    Mean,
}

impl Statistic {
    /// The screen's factors from its mean TTFT and TPOT to this statistic.
    fn screen_factors(self) -> (f64, f64) {
        match self {
            Statistic::P99 => (SCREEN_P99_TTFT, SCREEN_P99_TPOT),
            Statistic::Mean => (1.0, 1.0),
        }
    }

    /// This statistic of a simulation's TTFT and TPOT, ms.
    fn of(self, c: &Checked) -> (f64, f64) {
        match self {
            Statistic::P99 => (c.p99_ttft_ms, c.p99_tpot_ms),
            Statistic::Mean => (c.mean_ttft_ms, c.mean_tpot_ms),
        }
    }
}

/// How a candidate lays out its GPUs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Layout {
    /// One engine instance doing prefill and decode.
    Aggregated {
        /// Its shape.
        par: Parallel,
    },
    /// Prefill workers and decode workers, the KV moved between them.
    Disaggregated {
        /// One prefill worker's shape.
        prefill: Parallel,
        /// One decode worker's shape.
        decode: Parallel,
        /// Prefill workers.
        prefill_workers: u64,
        /// Decode workers.
        decode_workers: u64,
        /// The link the KV crosses.
        link: KvLink,
    },
}

/// One configuration of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// Catalog id of the GPU.
    pub gpu: String,
    /// Its name.
    pub gpu_name: String,
    /// US dollars per GPU-hour.
    pub usd_per_gpu_hour: f64,
    /// The engine.
    pub engine: EngineKind,
    /// Its layout.
    pub layout: Layout,
    /// Speculative decoding (`None`: off).
    pub spec: Option<SpecConfig>,
    /// GPUs of one deployment.
    pub gpus: u64,
}

/// A short-listed point as simulated.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Checked {
    /// Deployments.
    pub replicas: u64,
    /// Requests per second sent to each.
    pub rate_per_replica: f64,
    /// P99 time to first token, ms.
    pub p99_ttft_ms: f64,
    /// P99 time per output token, ms.
    pub p99_tpot_ms: f64,
    /// Mean time to first token, ms.
    pub mean_ttft_ms: f64,
    /// Mean time per output token, ms.
    pub mean_tpot_ms: f64,
    /// Requests measured.
    pub completed: u64,
    /// The run stopped at its step budget.
    pub partial: bool,
    /// Both targets met on the search's statistic (and the run is whole).
    pub meets: bool,
    /// Simulations run for this point.
    pub tries: u64,
}

/// One configuration at one decode batch.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PlanPoint {
    /// Index in [`SearchResult::candidates`].
    pub candidate: usize,
    /// Decode batch per unit at full load (the screen's operating point; the engines keep
    /// their own caps).
    pub batch: u64,
    /// Requests per second one deployment sustains (closed form).
    pub capacity_rps: f64,
    /// Deployments for the rate.
    pub replicas: u64,
    /// GPUs in all.
    pub gpus: u64,
    /// Nodes in all (GPUs packed into the GPU's nodes).
    pub nodes: u64,
    /// Mean TTFT, ms (closed form).
    pub ttft_ms: f64,
    /// Mean TPOT, ms (closed form).
    pub tpot_ms: f64,
    /// Output tokens per second each user sees (1,000 / mean TPOT; simulated when simulated).
    pub tokens_per_s_user: f64,
    /// US dollars per hour of the whole service.
    pub usd_per_hour: f64,
    /// US dollars per million output tokens at the rate.
    pub usd_per_m_output: f64,
    /// Meets both targets: simulated when simulated, else the screen's estimate.
    pub meets: bool,
    /// The simulation, when the point was short-listed.
    pub simulated: Option<Checked>,
}

/// A rule that stopped candidates, and how many.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Refusal {
    /// The first candidate's sentence, English.
    pub en: String,
    /// The same, Korean.
    pub ko: String,
    /// Candidates it stopped.
    pub count: u64,
}

/// Where a search is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// `screen` or `simulate`.
    pub stage: &'static str,
    /// Steps done.
    pub done: u64,
    /// Steps in all.
    pub total: u64,
}

/// The search's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    /// Requests per second.
    pub rate_rps: f64,
    /// Prompt tokens.
    pub input_len: u64,
    /// Output tokens.
    pub output_len: u64,
    /// Targets, ms.
    pub targets: Slo,
    /// The statistic they bound.
    pub statistic: Statistic,
    /// Configurations considered (refused ones included).
    pub considered: u64,
    /// Configurations timed by the screen.
    pub screened: u64,
    /// Points (configuration × batch) the screen timed.
    pub screened_points: u64,
    /// Simulations run.
    pub simulations: u64,
    /// Why the others were not timed.
    pub refused: Vec<Refusal>,
    /// The configurations the points below refer to.
    pub candidates: Vec<Candidate>,
    /// The front, the short list, the nearest points and a sample of the rest.
    pub points: Vec<PlanPoint>,
    /// The Pareto front (indices in `points`, fastest per user first): no other point is both
    /// cheaper per million tokens and faster per user.
    pub front: Vec<usize>,
    /// The simulated points (indices in `points`), cheapest first.
    pub shortlist: Vec<usize>,
    /// The cheapest simulated point meeting both targets (index in `points`).
    pub best: Option<usize>,
    /// Its launch commands.
    pub commands: Vec<String>,
    /// When no simulated point meets the targets: the nearest (indices in `points`).
    pub nearest: Vec<usize>,
}

/// A point before it is chosen to be returned.
#[derive(Debug, Clone, Copy)]
struct Raw {
    candidate: u32,
    est: Estimate,
}

/// What the front, the short list and the nearest points read of a point (the points
/// themselves are made only for those returned).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Key {
    /// US dollars per million output tokens.
    pub cost: f64,
    /// Tokens per second per user.
    pub tps: f64,
    /// GPUs in all.
    pub gpus: u64,
    /// Meets the targets (simulated, or the screen's estimate).
    pub meets: bool,
    /// The larger ratio of a P99 to its target ([`miss`]).
    pub miss: f64,
}

impl Key {
    fn of(p: &PlanPoint, spec: &SearchSpec) -> Key {
        Key {
            cost: p.usd_per_m_output,
            tps: p.tokens_per_s_user,
            gpus: p.gpus,
            meets: p.meets,
            miss: miss(p, spec),
        }
    }
}

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

/// Deployments for `rate` at `capacity` each, loaded to [`HEADROOM`].
fn replicas_for(rate: f64, capacity: f64) -> u64 {
    let n = (rate / (HEADROOM * capacity).max(1e-12)).ceil();
    if n.is_finite() {
        (n as u64).max(1)
    } else {
        u64::MAX
    }
}

/// Fills a point's cost from its deployments.
fn priced(mut p: PlanPoint, c: &Candidate, node: u64, rate: f64, output: u64) -> PlanPoint {
    p.gpus = p.replicas.saturating_mul(c.gpus);
    p.nodes = p.gpus.div_ceil(node.max(1));
    p.usd_per_hour = p.gpus as f64 * c.usd_per_gpu_hour;
    p.usd_per_m_output = p.usd_per_hour / (rate * output as f64 * 3600.0) * 1e6;
    p
}

fn point(raw: Raw, c: &Candidate, node: u64, spec: &SearchSpec) -> PlanPoint {
    let e = raw.est;
    let p = PlanPoint {
        candidate: raw.candidate as usize,
        batch: e.batch,
        capacity_rps: e.capacity,
        replicas: replicas_for(spec.rate_rps, e.capacity),
        gpus: 0,
        nodes: 0,
        ttft_ms: e.ttft_s * 1e3,
        tpot_ms: e.tpot_s * 1e3,
        tokens_per_s_user: 1.0 / e.tpot_s.max(1e-12),
        usd_per_hour: 0.0,
        usd_per_m_output: 0.0,
        meets: screen_meets(&e, spec),
        simulated: None,
    };
    priced(p, c, node, spec.rate_rps, spec.output_len)
}

fn screen_meets(e: &Estimate, spec: &SearchSpec) -> bool {
    let (f_ttft, f_tpot) = spec.statistic.screen_factors();
    let t = spec.targets;
    e.ttft_s * 1e3 * f_ttft <= t.ttft_ms && e.tpot_s * 1e3 * f_tpot <= t.tpot_ms
}

/// How far a point is from the targets: the larger ratio of the statistic (simulated, or the
/// screen's) to its target.
fn miss(p: &PlanPoint, spec: &SearchSpec) -> f64 {
    let t = spec.targets;
    let (ttft, tpot) = match &p.simulated {
        Some(s) => spec.statistic.of(s),
        None => {
            let (a, b) = spec.statistic.screen_factors();
            (p.ttft_ms * a, p.tpot_ms * b)
        }
    };
    let r = (ttft / t.ttft_ms).max(tpot / t.tpot_ms);
    if r.is_finite() {
        r
    } else {
        f64::INFINITY
    }
}

/// The non-dominated points of `keys` (indices), fastest per user first: no other point is
/// both cheaper and faster per user.
pub fn pareto_front(keys: &[Key]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..keys.len())
        .filter(|&i| keys[i].cost.is_finite() && keys[i].tps.is_finite())
        .collect();
    idx.sort_by(|&a, &b| {
        keys[b]
            .tps
            .total_cmp(&keys[a].tps)
            .then(keys[a].cost.total_cmp(&keys[b].cost))
    });
    let mut front = Vec::new();
    let mut cheapest = f64::INFINITY;
    for i in idx {
        if keys[i].cost < cheapest {
            cheapest = keys[i].cost;
            front.push(i);
        }
    }
    front
}

struct Built {
    candidates: Vec<Candidate>,
    /// Per candidate: the GPU's index in the spec, the profile(s) it uses.
    which: Vec<(usize, usize, Option<usize>)>,
    profiles: Vec<Profile>,
    raws: Vec<Raw>,
    considered: u64,
    refused: Vec<(CalcError, u64)>,
}

fn refuse(refused: &mut Vec<(CalcError, u64)>, e: CalcError, n: u64) {
    match refused
        .iter_mut()
        .find(|(x, _)| x.message(Lang::En) == e.message(Lang::En))
    {
        Some((_, c)) => *c += n,
        None => refused.push((e, n)),
    }
}

/// The speculative variants tried: none, and the checkpoint's MTP at each depth when asked
/// and it has the module.
fn spec_variants(model: &ModelDesc, spec: &SearchSpec) -> Vec<Option<SpecConfig>> {
    std::iter::once(None)
        .chain(
            SPEC_DEPTHS
                .iter()
                .filter(|_| spec.speculative && !model.mtp_layers.is_empty())
                .map(|&k| Some(SpecConfig::new(SpecMethod::Mtp, k))),
        )
        .collect()
}

/// Every shape of `engine` on GPU `gi` that starts, as profiles (their indices in `b`); the
/// others counted with their reasons.
fn profiles(
    b: &mut Built,
    model: &ModelDesc,
    spec: &SearchSpec,
    (gi, engine): (usize, EngineKind),
    specs: &[Option<SpecConfig>],
) -> Vec<usize> {
    let g = &spec.gpus[gi].gpu;
    let mut local = Vec::new();
    for par in space::shapes(model, Parallel::node_size(g), spec.max_gpus) {
        let n = specs.len() as u64;
        if let Err(e) = par.check(model, g, engine) {
            b.considered += n;
            refuse(&mut b.refused, e, n);
            continue;
        }
        for s in specs {
            let cfg = EngineConfig {
                engine,
                tp: par.tp,
                dp: par.dp,
                ep: par.ep,
                pp: par.pp,
                nodes: 0,
                spec: *s,
                frontend_overhead_ms: spec
                    .frontend_overhead_ms
                    .unwrap_or(engine_frontend_overhead_ms(engine)),
                ..spec.base.clone()
            };
            let lengths = (spec.input_len, spec.output_len);
            match Profile::new(model, g, &cfg, &spec.eff, lengths) {
                Ok(p) if p.max_batch > 0 => {
                    b.profiles.push(p);
                    local.push(b.profiles.len() - 1);
                }
                Ok(_) => {
                    b.considered += 1;
                    let e = CalcError::BadValue {
                        key: "num_gpu_blocks".into(),
                        found: Phrase::verbatim("0"),
                        expected: Phrase::tr("exp_sim_kv_blocks"),
                    };
                    refuse(&mut b.refused, e, 1);
                }
                Err(e) => {
                    b.considered += 1;
                    refuse(&mut b.refused, e, 1);
                }
            }
        }
    }
    local
}

impl Built {
    /// Adds a candidate and its screened points.
    fn add(&mut self, c: Candidate, which: (usize, usize, Option<usize>), ests: Vec<Estimate>) {
        self.candidates.push(c);
        self.which.push(which);
        let ci = (self.candidates.len() - 1) as u32;
        self.raws
            .extend(ests.into_iter().map(|est| Raw { candidate: ci, est }));
    }
}

fn candidate(
    g: &SearchGpu,
    engine: EngineKind,
    layout: Layout,
    p: &Profile,
    gpus: u64,
) -> Candidate {
    Candidate {
        gpu: g.gpu.id.clone(),
        gpu_name: g.gpu.name.clone(),
        usd_per_gpu_hour: g.usd_per_gpu_hour,
        engine,
        layout,
        spec: specs_of(p),
        gpus,
    }
}

/// Each profile as an aggregated instance.
fn add_aggregated(
    b: &mut Built,
    spec: &SearchSpec,
    (gi, engine): (usize, EngineKind),
    local: &[usize],
) {
    for &pi in local {
        b.considered += 1;
        let p = &b.profiles[pi];
        let layout = Layout::Aggregated {
            par: p.replica.parallel(),
        };
        let c = candidate(&spec.gpus[gi], engine, layout, p, p.gpus());
        let ests = screen::aggregated(p, spec.output_len);
        b.add(c, (gi, pi, None), ests);
    }
}

/// Each pair of a prefill profile (without speculation, within one node) and a decode
/// profile, at each worker ratio.
fn add_disaggregated(
    b: &mut Built,
    spec: &SearchSpec,
    (gi, engine): (usize, EngineKind),
    local: &[usize],
) {
    let g = &spec.gpus[gi];
    let node = Parallel::node_size(&g.gpu);
    let prefills: Vec<usize> = local
        .iter()
        .copied()
        .filter(|&i| {
            let p = &b.profiles[i];
            specs_of(p).is_none() && p.gpus() <= node
        })
        .collect();
    let handoff_s = DEFAULT_KV_TRANSFER_LATENCY_MS / 1e3;
    for &pi in &prefills {
        for &di in local {
            let (gp, gd) = (b.profiles[pi].gpus(), b.profiles[di].gpus());
            for (x, y) in space::ratios(gp, gd, spec.max_gpus) {
                b.considered += 1;
                let gpus = x * gp + y * gd;
                let link = KvLink::auto(gpus, &g.gpu);
                let (pre, dec) = (&b.profiles[pi], &b.profiles[di]);
                let ests = screen::disaggregated(
                    pre,
                    dec,
                    (x, y),
                    (link.bytes_per_s(&g.gpu), handoff_s),
                    spec.output_len,
                );
                let layout = Layout::Disaggregated {
                    prefill: pre.replica.parallel(),
                    decode: dec.replica.parallel(),
                    prefill_workers: x,
                    decode_workers: y,
                    link,
                };
                let c = candidate(g, engine, layout, dec, gpus);
                b.add(c, (gi, pi, Some(di)), ests);
            }
        }
    }
}

/// The screen over every configuration (module docs, step 1).
fn build(model: &ModelDesc, spec: &SearchSpec, progress: &mut dyn FnMut(Progress)) -> Built {
    let mut b = Built {
        candidates: Vec::new(),
        which: Vec::new(),
        profiles: Vec::new(),
        raws: Vec::new(),
        considered: 0,
        refused: Vec::new(),
    };
    let specs = spec_variants(model, spec);
    let total = (spec.gpus.len() * spec.engines.len()) as u64;
    let mut done = 0;
    for gi in 0..spec.gpus.len() {
        for &engine in &spec.engines {
            let local = profiles(&mut b, model, spec, (gi, engine), &specs);
            if spec.aggregated {
                add_aggregated(&mut b, spec, (gi, engine), &local);
            }
            if spec.disaggregated {
                add_disaggregated(&mut b, spec, (gi, engine), &local);
            }
            done += 1;
            progress(Progress {
                stage: "screen",
                done,
                total,
            });
        }
    }
    b
}

fn specs_of(p: &Profile) -> Option<SpecConfig> {
    p.replica.resolved().spec
}

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

/// The short list (module docs, step 2): indices in `keys`.
fn shortlist(keys: &[Key], raws: &[Raw], cands: &[Candidate], size: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).filter(|&i| keys[i].meets).collect();
    order.sort_by(|&a, &b| {
        keys[a]
            .cost
            .total_cmp(&keys[b].cost)
            .then(keys[a].gpus.cmp(&keys[b].gpus))
    });
    let cand = |i: usize| raws[i].candidate as usize;
    let group = |i: usize| {
        let c = &cands[cand(i)];
        (
            c.gpu.clone(),
            c.engine,
            matches!(c.layout, Layout::Aggregated { .. }),
            c.spec.is_some(),
        )
    };
    let mut chosen: Vec<usize> = Vec::new();
    let mut seen_groups = Vec::new();
    let mut seen_cands = Vec::new();
    for &i in &order {
        let g = group(i);
        if chosen.len() < size && !seen_groups.contains(&g) {
            seen_groups.push(g);
            seen_cands.push(cand(i));
            chosen.push(i);
        }
    }
    for &i in &order {
        if chosen.len() >= size {
            break;
        }
        if !seen_cands.contains(&cand(i)) {
            seen_cands.push(cand(i));
            chosen.push(i);
        }
    }
    chosen
}

impl Built {
    /// Screened point `i` as a plan point.
    fn point(&self, i: usize, spec: &SearchSpec) -> PlanPoint {
        let r = self.raws[i];
        let ci = r.candidate as usize;
        let node = Parallel::node_size(&spec.gpus[self.which[ci].0].gpu);
        point(r, &self.candidates[ci], node, spec)
    }
}

/// Simulates short-listed point `p` (module docs, step 3): its replicas up while the P99s
/// miss; from a first count that meets, down while they still do (the screen's capacity is a
/// full batch's, and a lighter load often needs fewer deployments). Returns the point with
/// its simulation (`None` when a run failed) and the runs made.
fn check_point(b: &mut Built, mut p: PlanPoint, spec: &SearchSpec) -> (PlanPoint, u64) {
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

/// The points returned (module docs, step 4): the front, the short list, the nearest, and a
/// sample of the rest (each candidate's cheapest point), as indices of the screened points.
fn returned(keys: &[Key], raws: &[Raw], candidates: usize, first: &[&[usize]]) -> Vec<usize> {
    let mut keep: Vec<usize> = Vec::new();
    let mut push = |i: usize| {
        if !keep.contains(&i) {
            keep.push(i);
        }
    };
    for &i in first.iter().flat_map(|l| l.iter()) {
        push(i);
    }
    let mut cheapest: Vec<Option<usize>> = vec![None; candidates];
    for (i, r) in raws.iter().enumerate() {
        let slot = &mut cheapest[r.candidate as usize];
        if slot.is_none_or(|j| keys[i].cost < keys[j].cost) {
            *slot = Some(i);
        }
    }
    let rest: Vec<usize> = cheapest.into_iter().flatten().collect();
    let stride = rest.len().div_ceil(MAX_CLOUD).max(1);
    for &i in rest.iter().step_by(stride) {
        push(i);
    }
    keep
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
