//! The commands' flags, one struct per command.

use super::groups::{Dtypes, Eff, Engine, Load, ParallelFlags, Serving, Target, VllmKnobs};
use super::values::{decode_context, range, vllm_version, whole, yes_no, MAX_GIB};
use crate::core::calc::{DecodeContext, VllmVersion, ENGINE_STARTUP_S, HOST_LINK_EFFICIENCY};
use crate::core::model::HUB_TIMEOUT_S;
use clap::{ArgAction, Args};

/// Default sequence length of `model`'s `kv_cache_bytes`.
pub const DEFAULT_CONTEXT: u64 = 4096;

/// `llmcalc model`.
#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    /// The model's config.json (or model.safetensors.index.json)
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,
    /// Fetch the config from the Hugging Face Hub
    #[arg(long, value_name = "ORG/NAME")]
    pub hf: Option<String>,
    /// The Hub fetch's time limit, seconds
    #[arg(long, value_name = "SECONDS", default_value_t = HUB_TIMEOUT_S, value_parser = whole)]
    pub hf_timeout: u64,
    /// A bare parameter count (7B, 1.5e9, …), quick mode
    #[arg(long, value_name = "COUNT")]
    pub params: Option<String>,
    /// Tokens of the one sequence whose KV cache is counted
    #[arg(long, value_name = "L", default_value_t = DEFAULT_CONTEXT, value_parser = whole)]
    pub context: u64,
    /// Tensor-parallel GPUs per replica
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = whole)]
    pub tp: u64,
    #[command(flatten)]
    pub dtypes: Dtypes,
    /// Count the checkpoint's MTP (speculative-decoding) modules as vLLM loads them
    #[arg(long)]
    pub include_mtp: bool,
    /// Print JSON (stable keys) instead of text
    #[arg(long)]
    pub json: bool,
}

/// `llmcalc vllm`.
#[derive(Debug, Clone, Args)]
pub struct VllmArgs {
    /// The model's config.json; required
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,
    /// A GPU id of the catalog (llmcalc gpus lists them)
    #[arg(long, value_name = "ID")]
    pub gpu: Option<String>,
    /// GPU memory as vLLM sees it, GiB (instead of --gpu)
    #[arg(long, value_name = "G", value_parser = range(0.0, MAX_GIB))]
    pub gpu_memory_gib: Option<f64>,
    /// Weights per GPU, GiB (as vLLM logs them)
    #[arg(long, value_name = "W", value_parser = range(0.0, MAX_GIB))]
    pub weights_gib: Option<f64>,
    /// Activation peak, GiB (as vLLM logs it)
    #[arg(long, value_name = "A", value_parser = range(0.0, MAX_GIB))]
    pub activation_gib: Option<f64>,
    /// Non-torch memory, GiB (as vLLM logs it)
    #[arg(long, value_name = "T", value_parser = range(0.0, MAX_GIB))]
    pub non_torch_gib: Option<f64>,
    /// KV-cache memory, GiB (skips the subtraction)
    #[arg(long, value_name = "K", value_parser = range(0.0, MAX_GIB))]
    pub available_kv_gib: Option<f64>,
    /// Tensor-parallel GPUs per replica
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = whole)]
    pub tp: u64,
    #[command(flatten)]
    pub dtypes: Dtypes,
    /// Count the checkpoint's MTP modules as vLLM loads them for speculative decoding (weights and KV layers)
    #[arg(long)]
    pub include_mtp: bool,
    #[command(flatten)]
    pub vllm: VllmKnobs,
    /// The vLLM release whose start-up lines and figures to print, X.Y or X.Y.Z: the cache tokens are ⌊blocks / groups⌋ × block_size up to 0.20 and ⌊concurrency × max_model_len⌋ from 0.21, on one line with the concurrency from 0.27, and recurrent layers hold two blocks per request from 0.28; older than 0.6.4 follows 0.6.4 [default: 0.28.0, the newest release with a start-up log the calculator reproduces]
    #[arg(long, value_name = "X.Y[.Z]", value_parser = vllm_version)]
    pub vllm_version: Option<VllmVersion>,
    /// Another engine's KV pool under its defaults instead: sglang (0.5.9) or trtllm (TensorRT-LLM 1.2); needs --gpu and takes none of vLLM's own flags
    #[arg(long, value_name = "sglang|trtllm")]
    pub engine: Option<String>,
    #[command(flatten)]
    pub parallel: ParallelFlags,
    /// Print JSON (stable keys) instead of text
    #[arg(long)]
    pub json: bool,
}

/// `llmcalc gpus`.
#[derive(Debug, Clone, Args)]
pub struct GpusArgs {
    /// One GPU of the catalog, every field (an id or an alias)
    #[arg(long, value_name = "ID")]
    pub gpu: Option<String>,
    /// Print JSON (stable keys) instead of text
    #[arg(long)]
    pub json: bool,
}

/// `llmcalc perf`.
#[derive(Debug, Clone, Args)]
pub struct PerfArgs {
    #[command(flatten)]
    pub target: Target,
    /// Requests decoded together (static batch); required
    #[arg(long, value_name = "B", value_parser = whole)]
    pub batch: Option<u64>,
    /// Prompt tokens per request; required
    #[arg(long, value_name = "I", value_parser = whole)]
    pub input_len: Option<u64>,
    /// Output tokens per request; required
    #[arg(long, value_name = "O", value_parser = whole)]
    pub output_len: Option<u64>,
    /// The KV context of the decode step: mean or end
    #[arg(long, value_name = "mean|end", default_value = "mean", value_parser = decode_context)]
    pub context: DecodeContext,
    /// GPU price, $ per GPU-hour; default the catalog's
    #[arg(long, value_name = "USD", value_parser = range(0.0, 1e6))]
    pub price: Option<f64>,
    #[command(flatten)]
    pub eff: Eff,
    /// The compute efficiency, a fraction
    #[arg(long, value_name = "F", value_parser = range(0.01, 1.0))]
    pub compute_eff: Option<f64>,
    /// The memory-bandwidth efficiency, a fraction
    #[arg(long, value_name = "F", value_parser = range(0.01, 1.0))]
    pub bandwidth_eff: Option<f64>,
    /// One row per tensor-parallel degree
    #[arg(long)]
    pub tp_sweep: bool,
    /// The calibration report instead (no other flag needed)
    #[arg(long)]
    pub accuracy: bool,
    /// Print JSON (stable keys) instead of text
    #[arg(long)]
    pub json: bool,
}

/// `llmcalc load`.
#[derive(Debug, Clone, Args)]
pub struct LoadArgs {
    #[command(flatten)]
    pub target: Target,
    /// Requests decoded together in the offload estimate
    #[arg(long, value_name = "B", default_value_t = 1, value_parser = whole)]
    pub batch: u64,
    /// Prompt tokens per request in the offload estimate
    #[arg(long, value_name = "I", default_value_t = 1024, value_parser = whole)]
    pub input_len: u64,
    /// Output tokens per request in the offload estimate
    #[arg(long, value_name = "O", default_value_t = 256, value_parser = whole)]
    pub output_len: u64,
    /// nvme, network, network-baseline or object
    #[arg(long, value_name = "KIND", default_value = "nvme")]
    pub storage: String,
    /// The storage's read bandwidth, GB/s (instead of --storage)
    #[arg(long, value_name = "S", value_parser = range(0.001, 10_000.0))]
    pub storage_gbps: Option<f64>,
    /// Parallel readers
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = whole)]
    pub readers: u64,
    /// The stages one after the other (true or false)
    #[arg(long, value_name = "true|false", default_value_t = false, action = ArgAction::Set, value_parser = yes_no)]
    pub sequential: bool,
    /// The engine's start-up time, s
    #[arg(long, value_name = "S", default_value_t = ENGINE_STARTUP_S, value_parser = range(0.0, 3600.0))]
    pub startup_s: f64,
    /// Host-to-GPU link bandwidth, GB/s; default the GPU's PCIe generation
    #[arg(long, value_name = "L", value_parser = range(0.001, 10_000.0))]
    pub link_gbps: Option<f64>,
    /// The link's efficiency, a fraction
    #[arg(long, value_name = "F", default_value_t = HOST_LINK_EFFICIENCY, value_parser = range(0.01, 1.0))]
    pub link_eff: f64,
    /// Print JSON (stable keys) instead of text
    #[arg(long)]
    pub json: bool,
}

/// `llmcalc plan`.
#[derive(Debug, Clone, Args)]
pub struct PlanArgs {
    /// The model's config.json; required (not with --largest)
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,
    /// A GPU id of the catalog; required, repeat it to compare GPUs
    #[arg(long, value_name = "ID")]
    pub gpu: Vec<String>,
    /// GPUs per node; default 8
    #[arg(long, value_name = "N", value_parser = whole)]
    pub gpus_per_node: Option<u64>,
    /// GPU price, $ per GPU-hour (or ID=USD, repeatable); default the catalog's
    #[arg(long, value_name = "USD")]
    pub price: Vec<String>,
    /// The peak rate as a multiple of --rate
    #[arg(long, value_name = "M", default_value_t = 1.0, value_parser = range(1.0, 1000.0))]
    pub peak_multiplier: f64,
    /// A traffic mix instead of one length pair (tokens in, tokens out, share)
    #[arg(long, value_name = "I:O:SHARE,…")]
    pub buckets: Option<String>,
    /// The TTFT target, ms; required
    #[arg(long, value_name = "T", value_parser = range(1e-6, 3.6e6))]
    pub ttft_ms: Option<f64>,
    /// The time-per-output-token target, ms; required
    #[arg(long, value_name = "P", value_parser = range(1e-6, 3.6e6))]
    pub tpot_ms: Option<f64>,
    /// The cost-against-load series at N rates instead
    #[arg(long, value_name = "N", value_parser = whole)]
    pub curve: Option<u64>,
    /// Not used: the planner chooses each option's batch
    #[arg(long, value_name = "B", hide = true)]
    pub batch: Option<String>,
    /// Re-size the best option's replicas on simulated P99s
    #[arg(long)]
    pub simulate: bool,
    /// The fleet's router: round-robin or least-loaded; default round-robin
    #[arg(long, value_name = "round-robin|least-loaded")]
    pub router: Option<String>,
    /// The largest model of --family that meets the targets
    #[arg(long)]
    pub largest: bool,
    /// qwen3, llama3, qwen2.5, llama2, qwen3-moe, mixtral, gpt-oss
    #[arg(long, value_name = "F")]
    pub family: Option<String>,
    /// Refused with --simulate, which takes TP from the plan
    #[arg(long, value_name = "N", value_parser = whole)]
    pub tp: Option<u64>,
    /// Search engines, shapes, layouts and speculation for the cheapest configuration meeting P99 targets
    #[arg(long)]
    pub search: bool,
    /// The search's P99 targets, ms
    #[arg(long, value_name = "ttft_p99:MS,tpot_p99:MS")]
    pub targets: Option<String>,
    /// Engines the search tries; default all three
    #[arg(long, value_name = "vllm,sglang,trtllm")]
    pub engines: Option<String>,
    /// The largest deployment the search tries, GPUs; default 64
    #[arg(long, value_name = "N", value_parser = whole)]
    pub max_gpus: Option<u64>,
    /// Layouts the search tries; default both
    #[arg(long, value_name = "agg|disagg|both")]
    pub layouts: Option<String>,
    /// Leave speculative decoding out of the search
    #[arg(long)]
    pub no_spec: bool,
    /// Configurations the search simulates; default 12
    #[arg(long, value_name = "N", value_parser = whole)]
    pub shortlist: Option<u64>,
    #[command(flatten)]
    pub serving: Serving,
    #[command(flatten)]
    pub engine: Engine,
    #[command(flatten)]
    pub load: Load,
    /// Print JSON (stable keys) instead of text
    #[arg(long)]
    pub json: bool,
}

/// `llmcalc simulate`.
#[derive(Debug, Clone, Args)]
pub struct SimulateArgs {
    /// The model's config.json; required
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,
    /// A GPU id of the catalog (llmcalc gpus lists them); required
    #[arg(long, value_name = "ID")]
    pub gpu: Option<String>,
    /// Tensor-parallel GPUs per replica
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = whole)]
    pub tp: u64,
    #[command(flatten)]
    pub serving: Serving,
    #[command(flatten)]
    pub engine: Engine,
    #[command(flatten)]
    pub load: Load,
    #[command(flatten)]
    pub disagg: DisaggFlags,
    /// Print JSON (vLLM's result keys) instead of text
    #[arg(long)]
    pub json: bool,
}

/// Disaggregated prefill and decode (`simulate --disagg`): each pool's workers and shape, the
/// link the KV crosses.
#[derive(Debug, Clone, Args)]
pub struct DisaggFlags {
    /// Disaggregated prefill and decode: prefill workers and decode workers, each request's KV moved from one to the other (the engine flags apply to both pools)
    #[arg(long)]
    pub disagg: bool,
    /// Prefill workers [default: 1]
    #[arg(long, value_name = "N", value_parser = whole)]
    pub prefill_workers: Option<u64>,
    /// Tensor-parallel GPUs per prefill worker (per attention-DP rank) [default: --tp]
    #[arg(long, value_name = "N", value_parser = whole)]
    pub prefill_tp: Option<u64>,
    /// Attention data-parallel ranks per prefill worker [default: --dp]
    #[arg(long, value_name = "N", value_parser = whole)]
    pub prefill_dp: Option<u64>,
    /// MoE expert-parallel size per prefill worker [default: --ep]
    #[arg(long, value_name = "N", value_parser = whole)]
    pub prefill_ep: Option<u64>,
    /// Decode workers [default: 1]
    #[arg(long, value_name = "N", value_parser = whole)]
    pub decode_workers: Option<u64>,
    /// Tensor-parallel GPUs per decode worker (per attention-DP rank) [default: --tp]
    #[arg(long, value_name = "N", value_parser = whole)]
    pub decode_tp: Option<u64>,
    /// Attention data-parallel ranks per decode worker [default: --dp]
    #[arg(long, value_name = "N", value_parser = whole)]
    pub decode_dp: Option<u64>,
    /// MoE expert-parallel size per decode worker [default: --ep]
    #[arg(long, value_name = "N", value_parser = whole)]
    pub decode_ep: Option<u64>,
    /// The link the KV crosses: nvlink (both pools in one NVLink domain), ib (InfiniBand, 50 GB/s per GPU) or roce [default: nvlink when every GPU of both pools fits in one NVLink domain, else ib]
    #[arg(long, value_name = "nvlink|ib|roce")]
    pub kv_link: Option<String>,
    /// Fixed cost of one hand-off from prefill to decode beside the KV's bytes (routing, the connector's handshake), 0 to 10,000 ms [default: 200, fitted on measured disaggregated runs]
    #[arg(long, value_name = "MS", value_parser = range(0.0, 10_000.0))]
    pub kv_transfer_latency_ms: Option<f64>,
}

/// `llmcalc calibrate`.
#[derive(Debug, Clone, Args)]
pub struct CalibrateArgs {
    /// The model's config.json; required
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,
    /// A GPU id of the catalog (llmcalc gpus lists them); required
    #[arg(long, value_name = "ID")]
    pub gpu: Option<String>,
    /// A vllm bench serve result (its JSON or its text summary); required
    #[arg(long, value_name = "FILE")]
    pub bench: Option<String>,
    /// Also fit the efficiencies to it and print the link parameters
    #[arg(long)]
    pub fit: bool,
    #[command(flatten)]
    pub eff: Eff,
    /// Tensor-parallel GPUs per replica
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = whole)]
    pub tp: u64,
    #[command(flatten)]
    pub engine: Engine,
    #[command(flatten)]
    pub load: Load,
    /// Print JSON (stable keys) instead of text
    #[arg(long)]
    pub json: bool,
}

/// `llmcalc completions`.
#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}
