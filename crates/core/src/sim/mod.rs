//! The serving simulator: one vLLM engine replica under load, as a discrete-event simulation
//! (pure Rust, deterministic for a seed). Plain data in ([`SimConfig`]: the engine's flags,
//! the offered load, the efficiencies, goodput targets, a step budget), plain data out
//! ([`SimResult`]: `vllm bench serve`'s statistics, the simulator's own, a time series, and
//! `partial` when the budget stopped it).
//!
//! The parts, in the order the data flows: the offered load ([`workload`], with its own
//! generator [`rng`]), the engine's knobs resolved on a GPU ([`config`]: defaults and the KV
//! blocks of `core::memory::vllm_budget`), the time of one step from the existing performance
//! model ([`step_time`]), vLLM V1's scheduler ([`scheduler`]), the statistics ([`stats`],
//! [`result`]), rate sweeps ([`sweep`]), a fleet of replicas behind a router ([`fleet`]),
//! the smallest fleet meeting P99 targets ([`sizing`]), reading a `vllm bench serve` result
//! to compare a run with ([`bench`]) and fitting the efficiencies to it ([`fit`]).
//! `docs/SERVING_SIMULATOR.md` states the method and
//! its measured error.
//!
//! ```
//! use llmcalc_core::hardware::Catalog;
//! use llmcalc_core::model::{parse_model_text, preset};
//! use llmcalc_core::sim::{simulate, Arrival, Lengths, SimConfig};
//!
//! let model = parse_model_text(preset("Qwen__Qwen3-8B").unwrap().json()).unwrap();
//! let gpu = Catalog::builtin().get("h100-sxm").unwrap();
//! let mut cfg = SimConfig::default();
//! cfg.workload.arrival = Arrival::Poisson { rate: 4.0 };
//! cfg.workload.lengths = Lengths::Fixed { input: 512, output: 128 };
//! cfg.workload.num_requests = 200;
//! let r = simulate(&model, gpu, &cfg).unwrap();
//! assert_eq!(r.completed, 200);
//! assert!(r.request_throughput <= 4.0 * 1.5 && r.ttft_ms.p99 >= r.ttft_ms.median);
//! ```
//!
//! Layer 5 of the core (between `calc` and `scenario`): imports `base`, `model`, `hardware`
//! and `calc`; never the scenario or anything that presents.

pub mod bench;
pub mod config;
pub mod disagg;
pub mod engines;
pub mod fit;
pub mod fleet;
mod free_queue;
pub mod kernel_step;
mod kv_link;
pub mod parallel;
pub mod replica;
pub mod resolved;
pub mod result;
pub mod rng;
pub mod scheduler;
pub mod search;
pub mod sizing;
pub mod spec;
pub mod stats;
pub mod step_time;
pub mod sweep;
pub mod workload;

pub use bench::{parse_bench, BenchRun, Comparison};
pub use config::{
    engine_frontend_overhead_ms, Budget, EngineConfig, SimConfig, Slo, StepModelKind,
    DEFAULT_FRONTEND_OVERHEAD_MS, DEFAULT_FRONTEND_PER_TOKEN_US, DEFAULT_MAX_STEPS,
    DYNAMO_FRONTEND_OVERHEAD_MS, MAX_FRONTEND_OVERHEAD_MS, MAX_FRONTEND_PER_TOKEN_US,
    SGLANG_FRONTEND_OVERHEAD_MS, TRTLLM_FRONTEND_OVERHEAD_MS,
};
pub use disagg::{
    simulate_disagg, DisaggConfig, DisaggSummary, KvLink, DEFAULT_KV_TRANSFER_LATENCY_MS,
};
pub use engines::{EngineKind, EnginePool, Policy, SglangStateFlags};
pub use fit::{fit_bench, fit_bench_from, roofline, FitResult, FittedKnob, Knob};
pub use fleet::{simulate_fleet, Router, MAX_REPLICAS};
pub use kernel_step::{
    vllm_graph_tokens, StepOverhead, FIT_EAGER_LAYER_S, FIT_STEP_ASYNC_S, FIT_STEP_SYNC_S,
};
pub use parallel::Parallel;
pub use replica::{engine_step_model, simulate, Replica};
pub use resolved::{BlockGroup, Resolved};
pub use result::{EngineUsed, SimNote, SimResult, LOCKSTEP_TTFT_RATIO};
pub use search::{
    pareto_front, search_configurations, Candidate, Checked, Key, Layout, PlanPoint, Progress,
    Refusal, SearchGpu, SearchResult, SearchSpec, Statistic, DEFAULT_MAX_GPUS, DEFAULT_SHORTLIST,
};
pub use sizing::{size_fleet, FleetSizing, FleetTails, SearchCap};
pub use spec::{SpecConfig, SpecMethod};
pub use stats::{Dist, Point, Series};
pub use sweep::{sweep_rates, sweep_with, SweepPoint, SweepResult};
pub use workload::{Arrival, Lengths, WorkloadSpec, MAX_REQUESTS, SHAREGPT};
