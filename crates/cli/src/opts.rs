//! What each command accepts, as typed `clap` (derive) structs: every flag with its help line,
//! its unit and, where it has one, its default. Parsing refuses an unknown or misspelled flag
//! with the nearest known one (`llmcalc simulate --max-num-seq 8` does not run with vLLM's
//! default) and `llmcalc <command> --help` lists every flag. Numbers are checked while parsing,
//! with the same one-sentence messages the handlers gave ([`sentence`] turns any clap error into
//! one); values whose meaning depends on other flags (the core's ids, files, rates) stay text
//! here and are read by their command.

use super::args::short;
pub use super::engine_opts::OtherEngineFlags;
use crate::core::calc::{DecodeContext, ENGINE_STARTUP_S, HOST_LINK_EFFICIENCY};
use crate::core::model::HUB_TIMEOUT_S;
use crate::core::sim::{
    DEFAULT_FRONTEND_PER_TOKEN_US, MAX_FRONTEND_OVERHEAD_MS, MAX_FRONTEND_PER_TOKEN_US,
};
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{ArgAction, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

/// Largest memory figure accepted, in GiB (a petabyte-class accelerator).
pub(super) const MAX_GIB: f64 = 1.0e6;

/// Default sequence length of `model`'s `kv_cache_bytes`.
pub const DEFAULT_CONTEXT: u64 = 4096;

/// `llmcalc`: the calculator's command line.
#[derive(Debug, Parser)]
#[command(name = "llmcalc", version, disable_help_subcommand = true)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Cmd,
}

/// The commands (their one-line descriptions are [`super::COMMANDS`]').
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// parameters, weight bytes, KV cache of one sequence, state bytes and the ledger
    Model(ModelArgs),
    /// vLLM's KV-cache budget: available GiB, GPU KV cache tokens, blocks, max concurrency
    Vllm(VllmArgs),
    /// the accelerator catalog
    Gpus(GpusArgs),
    /// TTFT, time per output token, throughput and end-to-end latency
    Perf(PerfArgs),
    /// GPUs and replicas for a request rate and its peak
    Plan(PlanArgs),
    /// model load time from storage to GPU memory
    Load(LoadArgs),
    /// one vLLM replica under load: TTFT, TPOT, ITL, E2EL percentiles, throughput, saturation
    Simulate(SimulateArgs),
    /// a vllm bench serve result beside the simulator's prediction for the same setup (--fit: also fit the efficiencies to it and print the link parameters)
    Calibrate(CalibrateArgs),
    /// a completion script for a shell: bash, zsh, fish, powershell or elvish
    Completions(CompletionsArgs),
}

// ----- Value parsers: the handlers' former checks, with their messages -----------------------

/// `--max-cudagraph-capture-size` / `--enforce-eager` as the engine's capture size (0: no
/// graphs; `None`: vLLM's default).
pub fn capture_size(size: Option<u64>, enforce_eager: bool) -> Option<u64> {
    if enforce_eager {
        Some(0)
    } else {
        size
    }
}

/// A whole number of at least 1 (`_` separators allowed).
pub(super) fn whole(s: &str) -> Result<u64, String> {
    match s.trim().replace('_', "").parse::<u64>() {
        Ok(v) if v >= 1 => Ok(v),
        _ => Err(format!(
            "must be a whole number of at least 1, not \"{}\"",
            short(s)
        )),
    }
}

/// Any whole number (0 included).
fn any_whole(s: &str) -> Result<u64, String> {
    s.trim()
        .parse::<u64>()
        .map_err(|_| format!("must be a whole number, not \"{}\"", short(s)))
}

/// A finite number within `[min, max]`.
fn number(s: &str, min: f64, max: f64) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= min && v <= max => Ok(v),
        _ => Err(format!(
            "must be a number from {min} to {max}, not \"{}\"",
            short(s)
        )),
    }
}

/// A parser of finite numbers within `[min, max]`.
fn range(
    min: f64,
    max: f64,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |s| number(s, min, max)
}

/// A share of GPU memory: above 0, at most 1.
pub(super) fn utilization(s: &str) -> Result<f64, String> {
    match number(s, 0.0, 1.0)? {
        u if u > 0.0 => Ok(u),
        _ => Err("must be above 0 and at most 1".into()),
    }
}

/// A prefix-cache hit share: from 0 up to (not including) 1.
fn prefix_share(s: &str) -> Result<f64, String> {
    match number(s, 0.0, 1.0)? {
        p if p < 1.0 => Ok(p),
        _ => Err("must be a share from 0 up to (not including) 1".into()),
    }
}

/// A gamma shape: above 0.
fn burstiness(s: &str) -> Result<f64, String> {
    match number(s, 0.0, 1.0e6)? {
        b if b > 0.0 => Ok(b),
        _ => Err("must be above 0".into()),
    }
}

/// `true` or `false` (also `1`/`0`, `yes`/`no`).
fn yes_no(s: &str) -> Result<bool, String> {
    match s {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        o => Err(format!("takes true or false, not \"{}\"", short(o))),
    }
}

/// `mean` or `end`.
fn decode_context(s: &str) -> Result<DecodeContext, String> {
    match s {
        "mean" => Ok(DecodeContext::Mean),
        "end" => Ok(DecodeContext::End),
        o => Err(format!("must be \"mean\" or \"end\", not \"{}\"", short(o))),
    }
}

// ----- Groups of flags shared by several commands -------------------------------------------

/// The weights' and the KV cache's precision.
#[derive(Debug, Clone, Args)]
pub struct Dtypes {
    /// The weights' precision (bf16, fp8, int4, …); default the checkpoint's
    #[arg(long, value_name = "D")]
    pub weights_dtype: Option<String>,
    /// The KV cache's precision (auto, fp8, …); default as vLLM picks it
    #[arg(long, value_name = "D")]
    pub kv_dtype: Option<String>,
}

/// `--eff`: the performance model's efficiencies.
#[derive(Debug, Clone, Args)]
pub struct Eff {
    /// The performance model's efficiencies as calibrate --fit prints them (its url_params), e.g. --eff e_bw=0.6,e_cp=0.4; keys e_cp, e_cd, e_bw, e_ic (fractions), e_so, e_po, e_ar (ms); keys not given keep the calibrated defaults; selects the roofline step model; repeatable
    #[arg(long, value_name = "KEYS")]
    pub eff: Vec<String>,
}

/// A model on one GPU type: the first flags of `perf` and `load`.
#[derive(Debug, Clone, Args)]
pub struct Target {
    /// The model's config.json (or model.safetensors.index.json); required
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,
    /// A GPU id of the catalog (llmcalc gpus lists them); required
    #[arg(long, value_name = "ID")]
    pub gpu: Option<String>,
    /// Tensor-parallel GPUs per replica
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = whole)]
    pub tp: u64,
    #[command(flatten)]
    pub dtypes: Dtypes,
}

/// The engine (`vllm serve`) flags of `simulate`, `plan --simulate` and `calibrate`.
#[derive(Debug, Clone, Args)]
pub struct Engine {
    #[command(flatten)]
    pub dtypes: Dtypes,
    /// vLLM's --max-num-seqs; default vLLM's (256 below 70 GiB and on A100, else 1,024)
    #[arg(long, value_name = "S", value_parser = whole)]
    pub max_num_seqs: Option<u64>,
    /// vLLM's --max-num-batched-tokens; default vLLM's (2,048 below 70 GiB and on A100, else 8,192)
    #[arg(long, value_name = "T", value_parser = whole)]
    pub max_num_batched_tokens: Option<u64>,
    /// vLLM's --max-model-len, tokens; default the config's as vLLM derives it
    #[arg(long, value_name = "L", value_parser = whole)]
    pub max_model_len: Option<u64>,
    /// vLLM's KV block size, tokens [default: 16]
    #[arg(long, value_name = "N", value_parser = whole)]
    pub block_size: Option<u64>,
    /// Share of GPU memory vLLM may use, above 0 and at most 1 [default: 0.9]
    #[arg(long, value_name = "F", value_parser = utilization)]
    pub gpu_memory_utilization: Option<f64>,
    /// The serving engine: vllm (0.19), sglang (0.5.9) or trtllm (TensorRT-LLM 1.2, trtllm-serve); each takes its own flags below
    #[arg(long, value_name = "vllm|sglang|trtllm")]
    pub engine: Option<String>,
    #[command(flatten)]
    pub others: OtherEngineFlags,
    /// Share of prompt tokens found in the prefix cache, 0 up to 1
    #[arg(long, value_name = "F", default_value_t = 0.0, value_parser = prefix_share)]
    pub prefix_hit: f64,
    /// The fixed part of the server's path per request beyond the engine (HTTP, hand-off, streaming), added once to TTFT and E2EL, 0 to 10,000 ms; 0 for the engine alone [default: fitted per engine on measured runs: vLLM 15, SGLang 140, TensorRT-LLM 28.75]
    #[arg(long, value_name = "MS", value_parser = range(0.0, MAX_FRONTEND_OVERHEAD_MS))]
    pub frontend_overhead_ms: Option<f64>,
    /// The server's serial work per prompt token (tokenization, one worker in arrival order), µs
    #[arg(long, value_name = "US", default_value_t = DEFAULT_FRONTEND_PER_TOKEN_US, value_parser = range(0.0, MAX_FRONTEND_PER_TOKEN_US))]
    pub frontend_per_token_us: f64,
    /// Split the routed experts by expert across the TP ranks (vLLM's flag; the same as --ep tp × dp)
    #[arg(long)]
    pub enable_expert_parallel: bool,
    #[command(flatten)]
    pub parallel: ParallelFlags,
    /// vLLM without asynchronous scheduling (before 0.14): 1.5 ms of engine time per step instead of 1.25
    #[arg(long)]
    pub no_async_scheduling: bool,
    /// vLLM's largest CUDA-graph step, tokens (its compilation config's max_cudagraph_capture_size): a larger step runs without a graph, 0.4 ms per layer slower [default: min(2 × max-num-seqs, 512)]
    #[arg(long, value_name = "T", value_parser = whole)]
    pub max_cudagraph_capture_size: Option<u64>,
    /// vLLM's --enforce-eager: no CUDA graphs, every step 0.4 ms per layer slower
    #[arg(long, conflicts_with = "max_cudagraph_capture_size")]
    pub enforce_eager: bool,
    /// Speculative decoding: mtp (the checkpoint's own multi-token-prediction module), eagle3 (an EAGLE-3 head) or ngram (prompt lookup on the CPU); vLLM's --speculative-config method, SGLang's --speculative-algorithm [default: off]
    #[arg(long, value_name = "mtp|eagle3|ngram")]
    pub spec_method: Option<String>,
    /// Draft tokens proposed per step, 1 to 16 (vLLM's num_speculative_tokens, SGLang's --speculative-num-steps) [default: 3 with --spec-method]
    #[arg(long, value_name = "K", value_parser = whole)]
    pub spec_k: Option<u64>,
    /// Probability that each draft position is accepted given the ones before it were, one rate for every position, above 0 and below 1 [default: the method's, falling with the position for mtp: mtp 0.87 then ×0.72 a position, eagle3 0.743, ngram 0.4]
    #[arg(long, value_name = "A", conflicts_with_all = ["spec_accepted_length", "spec_acceptance_per_position"])]
    pub spec_acceptance: Option<f64>,
    /// Mean accepted length (tokens per verifying step, as benchmarks print it), above 1 and below 1 + K: scales the method's default rates to it
    #[arg(
        long,
        value_name = "L",
        conflicts_with = "spec_acceptance_per_position"
    )]
    pub spec_accepted_length: Option<f64>,
    /// vLLM's printed per-position acceptance (acceptance at token 0, 1, …: shares of drafts accepted up to that position), falling, comma-separated; their count is K
    #[arg(long, value_name = "P1,P2,…", value_delimiter = ',')]
    pub spec_acceptance_per_position: Vec<f64>,
    /// Step times from vLLM's measured kernels (kernels: the default, where the GPU or its architecture has tables) or the fitted roofline (roofline: implied by --eff)
    #[arg(long, value_name = "kernels|roofline")]
    pub step_model: Option<String>,
}

/// The instance's parallelism beyond `--tp`, one spelling for every engine
/// (`core::sim::parallel`), for `simulate`, `plan`, `calibrate` and `vllm`.
#[derive(Debug, Clone, Args)]
pub struct ParallelFlags {
    /// Attention data-parallel ranks of --tp GPUs each (vLLM --data-parallel-size, SGLang --dp with --enable-dp-attention, TensorRT-LLM enable_attention_dp) [default: 1]
    #[arg(long, value_name = "N", value_parser = whole)]
    pub dp: Option<u64>,
    /// MoE expert-parallel size, dividing tp × dp (SGLang --ep-size, TensorRT-LLM moe_expert_parallel_size; vLLM's is tp × dp or 1) [default: 1]
    #[arg(long, value_name = "N", value_parser = whole)]
    pub ep: Option<u64>,
    /// Pipeline stages (vLLM --pipeline-parallel-size, SGLang --pp-size, TensorRT-LLM pipeline_parallel_size) [default: 1]
    #[arg(long, value_name = "N", value_parser = whole)]
    pub pp: Option<u64>,
    /// Nodes the tp × dp × pp GPUs are spread over; communication between nodes goes over InfiniBand/RoCE at 50 GB/s per GPU [default: the fewest that hold them: 8 GPUs per HGX node, 72 per NVL72 rack]
    #[arg(long, value_name = "N", value_parser = whole)]
    pub nodes: Option<u64>,
}

/// The offered load (`vllm bench serve`) flags of `simulate`, `plan --simulate` and
/// `calibrate`.
#[derive(Debug, Clone, Args)]
pub struct Load {
    /// Prompt tokens per request; default 1,024 (vLLM bench's random dataset)
    #[arg(long, value_name = "I", value_parser = whole)]
    pub input_len: Option<u64>,
    /// Output tokens per request; default 128 (vLLM bench's random dataset)
    #[arg(long, value_name = "O", value_parser = whole)]
    pub output_len: Option<u64>,
    /// One `input output` pair per line (commas or spaces, # comments)
    #[arg(long, value_name = "FILE")]
    pub lengths: Option<String>,
    /// sharegpt (vLLM bench's ShareGPT sampler) instead of the random dataset
    #[arg(long, value_name = "NAME")]
    pub dataset: Option<String>,
    /// At most C requests in flight (vLLM bench's --max-concurrency)
    #[arg(long, value_name = "C", value_parser = whole)]
    pub max_concurrency: Option<u64>,
    /// Requests simulated per rate (vLLM bench's --num-prompts)
    #[arg(long, visible_alias = "num-prompts", value_name = "N", default_value_t = 1000, value_parser = whole)]
    pub num_requests: u64,
    /// Gamma shape of the gaps between arrivals (1 = Poisson, below 1 burstier)
    #[arg(long, value_name = "B", default_value_t = 1.0, value_parser = burstiness)]
    pub burstiness: f64,
    /// The random seed
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = any_whole)]
    pub seed: u64,
}

/// The serving-load flags of `simulate` and `plan`.
#[derive(Debug, Clone, Args)]
pub struct Serving {
    /// Requests per second (inf: all at once), vLLM bench's --request-rate; required (simulate: unless --sweep)
    #[arg(long, value_name = "R")]
    pub rate: Option<String>,
    /// Simulate each rate, requests per second, and find where the replica saturates
    #[arg(long, value_name = "R1,R2,…")]
    pub sweep: Option<String>,
    /// Targets of goodput (the share of requests meeting them), ms
    #[arg(long, value_name = "ttft:MS,tpot:MS")]
    pub goodput: Option<String>,
    #[command(flatten)]
    pub eff: Eff,
}

// ----- The commands --------------------------------------------------------------------------

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
    /// vLLM's --max-num-seqs; default vLLM's (256 below 70 GiB and on A100, else 1,024)
    #[arg(long, value_name = "S", value_parser = whole)]
    pub max_num_seqs: Option<u64>,
    /// vLLM's --max-num-batched-tokens; default vLLM's (2,048 below 70 GiB and on A100, else 8,192)
    #[arg(long, value_name = "T", value_parser = whole)]
    pub max_num_batched_tokens: Option<u64>,
    /// vLLM's --max-model-len, tokens; default the config's as vLLM derives it
    #[arg(long, value_name = "L", value_parser = whole)]
    pub max_model_len: Option<u64>,
    /// vLLM's KV block size, tokens [default: 16]
    #[arg(long, value_name = "N", value_parser = whole)]
    pub block_size: Option<u64>,
    /// Share of GPU memory vLLM may use, above 0 and at most 1 [default: 0.9]
    #[arg(long, value_name = "F", value_parser = utilization)]
    pub gpu_memory_utilization: Option<f64>,
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

// ----- Parsing -------------------------------------------------------------------------------

/// The whole command line as clap sees it: every command refuses what it does not know, a
/// repeated flag keeps its last value, and a value may start with `-` (`--rate -1` reaches the
/// check that explains why it is refused).
pub fn command() -> clap::Command {
    Cli::command().mut_subcommands(|c| {
        c.args_override_self(true).mut_args(|a| {
            if a.get_action().takes_values() && !a.is_positional() {
                a.allow_hyphen_values(true)
            } else {
                a
            }
        })
    })
}

/// What the command line asks for.
pub enum Parsed {
    /// Run a command (boxed: the flags of the largest command are many).
    Run(Box<Cmd>),
    /// Print this text and stop (`--help`).
    Print(String),
}

/// Parses `llmcalc <cmd> <rest>`; `Err` is one sentence. A switch given as `--json=true` is the
/// switch, `--json=false` its absence.
pub fn parse(cmd: &str, rest: &[String]) -> Result<Parsed, String> {
    let c = command();
    let Some(sub) = c.find_subcommand(cmd) else {
        return Err(unknown_command(cmd));
    };
    let switches: Vec<String> = sub
        .get_arguments()
        .filter(|a| matches!(a.get_action(), ArgAction::SetTrue))
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect();
    let mut argv = vec!["llmcalc".to_string(), cmd.to_string()];
    for a in rest {
        let switch = a
            .strip_prefix("--")
            .and_then(|s| s.split_once('='))
            .filter(|(k, _)| switches.iter().any(|s| s == k));
        match switch {
            Some((k, "true")) => argv.push(format!("--{k}")),
            Some((_, "false")) => {}
            _ => argv.push(a.clone()),
        }
    }
    match c.try_get_matches_from(argv) {
        Ok(m) => Cli::from_arg_matches(&m)
            .map(|cli| Parsed::Run(Box::new(cli.command)))
            .map_err(|e| sentence(cmd, &e)),
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            Ok(Parsed::Print(e.render().to_string()))
        }
        Err(e) => Err(sentence(cmd, &e)),
    }
}

/// The sentence for a command that does not exist.
fn unknown_command(cmd: &str) -> String {
    format!(
        "unknown command \"{}\"; commands: {}",
        short(cmd),
        super::COMMANDS
            .iter()
            .map(|(c, _)| *c)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// A clap error as one sentence.
pub(super) fn sentence(cmd: &str, e: &clap::Error) -> String {
    let text = |k: ContextKind| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => v.first().cloned(),
        _ => None,
    };
    // `--flag <VALUE>` as clap names it → `--flag`.
    let flag = text(ContextKind::InvalidArg).map(|a| {
        let name = a.split([' ', '=']).next().unwrap_or(&a).to_string();
        short(&name).to_string()
    });
    let value = text(ContextKind::InvalidValue).unwrap_or_default();
    match (e.kind(), flag) {
        (ErrorKind::UnknownArgument, Some(f)) if f.starts_with("--") => {
            let hint = text(ContextKind::SuggestedArg)
                .map(|s| format!("; did you mean {s}?"))
                .unwrap_or_default();
            format!("unknown option {f}{hint} (llmcalc {cmd} --help lists every option)")
        }
        (ErrorKind::UnknownArgument, Some(f)) => {
            format!("unexpected argument \"{f}\"; options start with --")
        }
        (ErrorKind::InvalidValue, Some(f)) if value.is_empty() => format!("{f} needs a value"),
        (ErrorKind::InvalidValue, Some(f)) => match e.get(ContextKind::ValidValue) {
            Some(ContextValue::Strings(v)) => format!(
                "{} must be one of {}, not \"{}\"",
                f.trim_matches(['<', '>']),
                v.join(", "),
                short(&value)
            ),
            _ => format!("{f} does not take \"{}\"", short(&value)),
        },
        (ErrorKind::MissingRequiredArgument, Some(f)) => {
            format!("{} is required", f.trim_matches(['<', '>']))
        }
        (ErrorKind::ValueValidation, Some(f)) => match std::error::Error::source(e) {
            Some(why) => format!("{f} {why}"),
            None => format!("{f} does not take \"{}\"", short(&value)),
        },
        _ => {
            let first = e.render().to_string();
            let line = first.lines().next().unwrap_or("").trim();
            line.strip_prefix("error: ").unwrap_or(line).to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{command, parse, Cmd, Parsed};
    use crate::COMMANDS;

    fn owned(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn the_flags_are_consistent() {
        command().debug_assert();
    }

    #[test]
    fn every_command_has_help_with_its_description() {
        let c = command();
        for (name, about) in COMMANDS {
            let sub = c.find_subcommand(name).expect("a subcommand");
            assert_eq!(
                sub.get_about().map(ToString::to_string).as_deref(),
                Some(*about)
            );
            match parse(name, &owned(&["--help"])) {
                // Every calculation prints JSON; the shell's completion script is text.
                Ok(Parsed::Print(h)) => {
                    assert!(
                        *name == "completions" || h.contains("--json"),
                        "{name}: {h}"
                    );
                }
                _ => panic!("{name}: no help"),
            }
        }
    }

    #[test]
    fn a_misspelled_flag_is_refused_with_the_nearest() {
        let e = parse(
            "simulate",
            &owned(&["--config", "x.json", "--max-num-seq", "8"]),
        )
        .err()
        .unwrap_or_default();
        assert_eq!(
            e,
            "unknown option --max-num-seq; did you mean --max-num-seqs? \
             (llmcalc simulate --help lists every option)"
        );
        match run(
            "simulate",
            &["--json=true", "--rate", "-1", "--enable-expert-parallel"],
        ) {
            Cmd::Simulate(s) => {
                assert!(s.json && s.engine.enable_expert_parallel);
                assert_eq!(s.serving.rate.as_deref(), Some("-1"));
            }
            other => panic!("{other:?}"),
        }
        match run("gpus", &["--json=false"]) {
            Cmd::Gpus(g) => assert!(!g.json),
            other => panic!("{other:?}"),
        }
    }

    /// The command `args` parse to (panics when refused).
    fn run(cmd: &str, args: &[&str]) -> Cmd {
        match parse(cmd, &owned(args)) {
            Ok(Parsed::Run(c)) => *c,
            Ok(Parsed::Print(t)) => panic!("printed {t}"),
            Err(e) => panic!("refused: {e}"),
        }
    }

    #[test]
    fn a_repeated_flag_keeps_its_last_value() {
        match run("gpus", &["--gpu", "a", "--gpu", "b"]) {
            Cmd::Gpus(g) => assert_eq!(g.gpu.as_deref(), Some("b")),
            other => panic!("{other:?}"),
        }
        // A repeatable flag keeps every value, in order.
        match run("plan", &["--gpu", "a", "--gpu", "b", "--eff", "e_bw=0.5"]) {
            Cmd::Plan(p) => {
                assert_eq!(p.gpu, ["a", "b"]);
                assert_eq!(p.serving.eff.eff, ["e_bw=0.5"]);
            }
            other => panic!("{other:?}"),
        }
    }
}
