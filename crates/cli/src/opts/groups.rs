//! Groups of flags shared by several commands.

use super::values::{any_whole, burstiness, prefix_share, range, utilization, whole};
use crate::core::sim::{
    DEFAULT_FRONTEND_PER_TOKEN_US, MAX_FRONTEND_OVERHEAD_MS, MAX_FRONTEND_PER_TOKEN_US,
};
use crate::engine_opts::OtherEngineFlags;
use clap::Args;

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

/// vLLM's own engine knobs, shared by `llmcalc vllm` and the engine flags of `simulate`,
/// `plan --simulate` and `calibrate`.
#[derive(Debug, Clone, Args)]
pub struct VllmKnobs {
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
    #[command(flatten)]
    pub vllm: VllmKnobs,
    /// The serving engine: vllm (0.19), sglang (0.5.9) or trtllm (TensorRT-LLM 1.2, trtllm-serve); each takes its own flags below
    #[arg(long, value_name = "vllm|sglang|trtllm")]
    pub engine: Option<String>,
    #[command(flatten)]
    pub others: OtherEngineFlags,
    /// Share of prompt tokens found in the prefix cache, 0 up to 1
    #[arg(long, value_name = "F", default_value_t = 0.0, value_parser = prefix_share)]
    pub prefix_hit: f64,
    /// The fixed part of the server's path per request beyond the engine (HTTP, hand-off, streaming), added once to TTFT and E2EL, 0 to 10,000 ms; 0 for the engine alone [default: fitted per engine on measured runs: vLLM 15, SGLang 140, TensorRT-LLM 28]
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
