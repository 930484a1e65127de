//! Layer 4: the formulas. KV cache and recurrent state ([`kv`]), weight bytes ([`weights`]),
//! memory budgets by the textbook's and vLLM's rules ([`memory`]), the roofline ([`roofline`]),
//! the performance model ([`perf`]), loading and offloading ([`loading`]), capacity planning
//! ([`capacity`]) and the calibration against measured benchmarks ([`calibration`]).
//!
//! Invariant: imports only `base`, `model` and `hardware`; never the scenario or anything that
//! presents. Each module's doc states its formulas with their sources.

pub mod calibration;
pub mod capacity;
pub mod kv;
pub mod loading;
pub mod memory;
pub mod perf;
pub mod roofline;
pub mod tp;
pub mod weights;

// The face of this layer: what the UI, the charts and the CLI use (they name no module
// inside a layer; `tests/layers.rs` checks it).
pub use calibration::{accuracy_table, range_for, render_stats, AccuracyReport, Metric};
pub use capacity::{
    cost_curve, largest_in_family, plan, Bucket, Candidate, Family, LargestReport, LowerBound,
    PerfTiming, Plan, PlanInputs, PlanOption, Reason, Targets, Traffic, GPUS_PER_NODE_RANGE,
};
pub use kv::{default_kv_dtype, per_sequence, per_token, state_bytes, KvBytes};
pub use loading::{
    load_time, offload, LoadInputs, LoadReport, OffloadInputs, OffloadReport, Stage, StageKind,
    Storage, ENGINE_STARTUP_S, HOST_LINK_EFFICIENCY,
};
pub use memory::{
    activation_estimate, default_max_model_len, default_max_num_batched_tokens,
    default_max_num_seqs, max_model_len_warning, non_torch_estimate, vllm_activation, vllm_budget,
    vllm_loaded_weights, vllm_serve_defaults, vllm_start, vllm_total, ActivationParams, KvProfile,
    Paging, Suggestion, VllmBudget, VllmEngine, VllmInputs, VllmStart, VllmVersion,
    DEFAULT_BLOCK_SIZE, DEFAULT_GPU_MEMORY_UTILIZATION, DEFAULT_MAX_NUM_SEQS,
    MAX_MODEL_LEN_WITHOUT_CONFIG, VLLM_TOTAL_FROM_KV_LOGS, VLLM_TOTAL_LOGGED,
};
pub use perf::{
    evaluate, tp_sweep, DecodeContext, Efficiencies, Limit, PassTime, PerfNote, PerfReport, TpRow,
    Workload,
};
pub use roofline::Matmul;
pub use weights::{checkpoint, with_dtype, WeightBytes};
