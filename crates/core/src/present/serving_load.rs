//! The "Serving under load" inputs of a scenario as the simulator's: the engine's flags and the
//! offered load, shared by the worker's jobs (the section's sweep, `serving`; the planner's
//! sizing, `serving_plan`; a pasted benchmark, `serving_bench`).

use crate::calc::perf::Efficiencies;
use crate::hardware::catalog::Accelerator;
use crate::scenario::{ArrivalKind, DatasetKind, Scenario, ServingInputs, UNIFORM_RANGE_RATIO};
use crate::sim::config::{EngineConfig, StepModelKind};
use crate::sim::disagg::{DisaggConfig, KvLink, DEFAULT_KV_TRANSFER_LATENCY_MS};
use crate::sim::spec::{SpecConfig, SpecMethod};
use crate::sim::workload::{Arrival, Lengths, WorkloadSpec};

/// Seed of every run (the page's results are reproducible).
pub const SEED: u64 = 0;

/// The engine flags of the section's inputs on the scenario's TP and precisions (under SGLang
/// and TensorRT-LLM, `block_size` and `gpu_memory_utilization` are not read: their own page
/// size and memory share keep their defaults).
pub fn engine_config(s: &Scenario) -> EngineConfig {
    let v = &s.views.serving;
    let opt = |n: u64| (n > 0).then_some(n);
    EngineConfig {
        engine: v.engine,
        tp: u64::from(s.tp.max(1)),
        max_num_seqs: opt(v.max_num_seqs),
        max_num_batched_tokens: opt(v.max_num_batched_tokens),
        block_size: v.block_size,
        gpu_memory_utilization: v.gpu_memory_utilization,
        weights_dtype: s.weight_dtype,
        kv_dtype: s.kv_dtype,
        prefix_hit: v.prefix_hit,
        frontend_overhead_ms: v.frontend_overhead_ms,
        max_cudagraph_capture_size: opt(v.cudagraph_capture),
        dp: v.dp,
        ep: v.ep,
        pp: v.pp,
        nodes: v.nodes,
        spec: spec_config(v),
        // Efficiencies the user set are the roofline's: they select it (as `--eff` does).
        step_model: if s.views.eff == Efficiencies::default() {
            StepModelKind::Kernels
        } else {
            StepModelKind::Roofline
        },
        ..EngineConfig::default()
    }
}

/// The two pools of a disaggregated run (`None` when the section's toggle is off): the prefill
/// and the decode worker's engines (the section's engine at each pool's TP, the scenario's
/// when 0; DP and EP the section's, as `llmcalc simulate --disagg` defaults them) and the
/// link on `gpu`: the one chosen, or [`KvLink::auto`] (the CLI's default).
pub fn disagg_shapes(
    s: &Scenario,
    gpu: &Accelerator,
) -> Option<(EngineConfig, EngineConfig, DisaggConfig)> {
    let v = &s.views.serving;
    if !v.disagg {
        return None;
    }
    let base = engine_config(s);
    let pool = |tp: u64| EngineConfig {
        tp: if tp > 0 { tp } else { base.tp },
        ..base.clone()
    };
    let (prefill, decode) = (pool(v.prefill_tp), pool(v.decode_tp));
    let gpus = v
        .prefill_workers
        .saturating_mul(prefill.parallel().gpus())
        .saturating_add(v.decode_workers.saturating_mul(decode.parallel().gpus()));
    let link = v.kv_link.unwrap_or(KvLink::auto(gpus, gpu));
    let cfg = DisaggConfig {
        prefill_workers: v.prefill_workers,
        decode_workers: v.decode_workers,
        link,
        transfer_latency_ms: DEFAULT_KV_TRANSFER_LATENCY_MS,
    };
    Some((prefill, decode, cfg))
}

/// Speculative decoding of the section's inputs: the method with its draft count, at the mean
/// accepted length given (the method's default rates when 0, or when the length does not fit
/// the count: the field refuses such a length before it is used).
pub fn spec_config(v: &ServingInputs) -> Option<SpecConfig> {
    let m = v.spec?;
    let k = v.spec_k.clamp(1, SpecMethod::MAX_K);
    Some(if v.spec_length > 0.0 {
        SpecConfig::from_accepted_length(m, k, v.spec_length).unwrap_or(SpecConfig::new(m, k))
    } else {
        SpecConfig::new(m, k)
    })
}

/// The offered load of the sweep (its arrival's rate is replaced per swept rate).
pub fn workload(s: &Scenario) -> WorkloadSpec {
    let v = &s.views.serving;
    let (i, o) = (s.perf.input_len.max(1), s.perf.output_len.max(1));
    let spread = |x: u64| {
        let lo = ((x as f64) * (1.0 - UNIFORM_RANGE_RATIO)).ceil().max(1.0) as u64;
        let hi = ((x as f64) * (1.0 + UNIFORM_RANGE_RATIO))
            .floor()
            .max(lo as f64) as u64;
        (lo, hi)
    };
    let lengths = match v.dataset {
        DatasetKind::Fixed => Lengths::Fixed {
            input: i,
            output: o,
        },
        DatasetKind::Uniform => Lengths::Uniform {
            input: spread(i),
            output: spread(o),
        },
        DatasetKind::ShareGpt => Lengths::ShareGpt,
    };
    WorkloadSpec {
        arrival: Arrival::from_rate(1.0, burstiness(v)),
        max_concurrency: (v.arrival == ArrivalKind::MaxConcurrency).then_some(v.max_concurrency),
        lengths,
        num_requests: v.num_requests,
        warmup: v.warmup.min(v.num_requests.saturating_sub(1)),
        // As vLLM bench runs `--num-warmups`: to the end, before the measured requests.
        warmup_drained: true,
        seed: SEED,
    }
}

/// vLLM bench's `--burstiness` (the gamma shape) of the inputs: `1/CV²` when bursty, else 1.
pub fn burstiness(v: &ServingInputs) -> f64 {
    if v.arrival == ArrivalKind::Bursty && v.burstiness_cv > 0.0 {
        1.0 / (v.burstiness_cv * v.burstiness_cv)
    } else {
        1.0
    }
}
