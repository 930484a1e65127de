//! The flags of `simulate`, `plan` and `calibrate` that belong to SGLang and TensorRT-LLM
//! (`--engine sglang|trtllm`), under their own names (`core::sim::engines` gives each default
//! and its source). Beside `opts/`, whose `Engine` (`opts/groups.rs`) flattens them after
//! vLLM's flags.

use super::opts::{any_whole, share, utilization, whole};
use clap::Args;

/// SGLang's and TensorRT-LLM's own flags.
#[derive(Debug, Clone, Args)]
pub struct OtherEngineFlags {
    /// SGLang's --max-running-requests; default SGLang's (half the KV pool's tokens, at most 2,048 to 4,096)
    #[arg(long, value_name = "S", value_parser = whole)]
    pub max_running_requests: Option<u64>,
    /// SGLang's --chunked-prefill-size, tokens; default SGLang's (8,192 below 160 GiB, else 16,384)
    #[arg(long, value_name = "T", value_parser = whole)]
    pub chunked_prefill_size: Option<u64>,
    /// SGLang's --page-size, tokens; default SGLang's (1; 64 on Blackwell, except for hybrid models)
    #[arg(long, value_name = "N", value_parser = whole)]
    pub page_size: Option<u64>,
    /// SGLang's --mem-fraction-static, above 0 and at most 1; default SGLang's (from the GPU's memory, the chunk and TP: 0.835 on one H100)
    #[arg(long, value_name = "F", value_parser = utilization)]
    pub mem_fraction_static: Option<f64>,
    /// SGLang's --enable-mixed-chunk: the running decodes ride in the prompt batches
    #[arg(long)]
    pub enable_mixed_chunk: bool,
    /// SGLang's --max-prefill-tokens: new prompt tokens of one prompt batch [default: 16384]
    #[arg(long, value_name = "T", value_parser = whole)]
    pub max_prefill_tokens: Option<u64>,
    /// SGLang's --scheduler-recv-interval: while decoding, new requests are taken every this many decode steps [default: 1]
    #[arg(long, value_name = "N", value_parser = whole)]
    pub scheduler_recv_interval: Option<u64>,
    /// SGLang's --disable-radix-cache: for a hybrid model (recurrent layers), one state slot per running request instead of three, and the overlap scheduler kept on
    #[arg(long)]
    pub disable_radix_cache: bool,
    /// SGLang's --max-mamba-cache-size: a hybrid model's recurrent-state slots, requests; default SGLang's (the share --mamba-full-memory-ratio gives, or --max-running-requests with --disable-radix-cache)
    #[arg(long, value_name = "N", value_parser = whole)]
    pub max_mamba_cache_size: Option<u64>,
    /// SGLang's --mamba-full-memory-ratio: a hybrid model's state memory over its attention KV memory, above 0 and at most 100 [default: 0.9]
    #[arg(long, value_name = "R")]
    pub mamba_full_memory_ratio: Option<f64>,
    /// SGLang's --mamba-ssm-dtype: float32, bfloat16 or float16; default the config's mamba_ssm_dtype, else float32
    #[arg(long, value_name = "DTYPE")]
    pub mamba_ssm_dtype: Option<String>,
    /// TensorRT-LLM's max_batch_size [default: 2048]
    #[arg(long, value_name = "S", value_parser = whole)]
    pub max_batch_size: Option<u64>,
    /// TensorRT-LLM's max_num_tokens, tokens per step [default: 8192]
    #[arg(long, value_name = "T", value_parser = whole)]
    pub max_num_tokens: Option<u64>,
    /// TensorRT-LLM's tokens_per_block [default: 32]
    #[arg(long, value_name = "N", value_parser = whole)]
    pub tokens_per_block: Option<u64>,
    /// TensorRT-LLM's free_gpu_memory_fraction: the share of what its warm-up leaves free that the KV cache takes, above 0 and at most 1 [default: 0.9]
    #[arg(long, value_name = "F", value_parser = utilization)]
    pub free_gpu_memory_fraction: Option<f64>,
    /// TensorRT-LLM's enable_chunked_prefill (off by default: a prompt runs whole in one step)
    #[arg(long)]
    pub enable_chunked_prefill: bool,
    /// TensorRT-LLM's attention_dp_config with enable_balance and this timeout_iters, under attention DP (--dp): while requests decode, prompts wait until every rank has one or this many steps [default: balancing off]
    #[arg(long, value_name = "N", value_parser = whole)]
    pub attention_dp_timeout_iters: Option<u64>,
    /// TensorRT-LLM's batch_wait_timeout_iters, without attention DP: while requests decode, new prompts wait up to this many steps for a fuller batch [default: 0, off]
    #[arg(long, value_name = "N", value_parser = any_whole)]
    pub batch_wait_timeout_iters: Option<u64>,
    /// TensorRT-LLM's batch_wait_max_tokens_ratio: waiting prompts go in once they and the decodes reach this share of max_num_tokens, 0 to 1 [default: 0]
    #[arg(long, value_name = "R", value_parser = share)]
    pub batch_wait_max_tokens_ratio: Option<f64>,
}
