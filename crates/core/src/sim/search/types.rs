//! The search's vocabulary: its limits and defaults, what to search ([`SearchSpec`]) and
//! what it answers ([`SearchResult`]: the configurations and their points).

use crate::calc::perf::Efficiencies;
use crate::hardware::Accelerator;
use crate::sim::config::{EngineConfig, Slo};
use crate::sim::engines::EngineKind;
use crate::sim::kv_link::KvLink;
use crate::sim::parallel::Parallel;
use crate::sim::spec::SpecConfig;
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
    pub(super) fn screen_factors(self) -> (f64, f64) {
        match self {
            Statistic::P99 => (SCREEN_P99_TTFT, SCREEN_P99_TPOT),
            Statistic::Mean => (1.0, 1.0),
        }
    }

    /// This statistic of a simulation's TTFT and TPOT, ms.
    pub(super) fn of(self, c: &Checked) -> (f64, f64) {
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
