//! vLLM's defaults that the budgets start from.

use crate::base::units::{Bytes, GIB};
use crate::model::config::max_len::POSSIBLE_KEYS;

/// vLLM's default `block_size` (tokens per KV-cache block) on CUDA.
pub const DEFAULT_BLOCK_SIZE: u64 = 16;
/// vLLM's default `gpu_memory_utilization`.
pub const DEFAULT_GPU_MEMORY_UTILIZATION: f64 = 0.9;
/// vLLM's default `max_num_seqs` for `vllm serve` on GPUs below 70 GiB (rows of logits the
/// profiling run samples).
pub const DEFAULT_MAX_NUM_SEQS: u64 = 256;
/// vLLM's default `max_num_batched_tokens` for `vllm serve` on GPUs below 70 GiB (the prefill
/// chunk its profiling run uses).
pub const DEFAULT_MAX_NUM_BATCHED_TOKENS: u64 = 2048;
/// The device memory from which vLLM's larger serving defaults apply.
pub const LARGE_GPU_MEMORY: Bytes = Bytes(70 * GIB);
/// vLLM's default `max_num_seqs` for `vllm serve` on GPUs of at least [`LARGE_GPU_MEMORY`].
pub const LARGE_GPU_MAX_NUM_SEQS: u64 = 1024;
/// vLLM's default `max_num_batched_tokens` for `vllm serve` on GPUs of at least
/// [`LARGE_GPU_MEMORY`].
pub const LARGE_GPU_MAX_NUM_BATCHED_TOKENS: u64 = 8192;

/// The `max_model_len` vLLM assumes when the config states no maximum length
/// (`_get_and_verify_max_len`: none of `max_position_embeddings`, `n_positions`,
/// `max_seq_len`, `seq_length`, … is set, so `default_max_len` = 2,048, with a warning).
pub const MAX_MODEL_LEN_WITHOUT_CONFIG: u64 = 2048;

/// The warning vLLM logs when it assumes [`MAX_MODEL_LEN_WITHOUT_CONFIG`], as it prints it
/// (its key list is [`POSSIBLE_KEYS`], as Python prints a list).
pub fn max_model_len_warning() -> String {
    let keys: Vec<String> = POSSIBLE_KEYS.iter().map(|k| format!("'{k}'")).collect();
    format!(
        "The model's config.json does not contain any of the following keys to determine the \
         original maximum length of the model: [{}]. Assuming the model's maximum length is \
         {MAX_MODEL_LEN_WITHOUT_CONFIG}.",
        keys.join(", ")
    )
}

/// vLLM's `max_model_len` when the flag is not given: the config's maximum length `limit`, or
/// [`MAX_MODEL_LEN_WITHOUT_CONFIG`] when it states none; `true` when it was assumed.
pub fn default_max_model_len(limit: Option<u64>) -> (u64, bool) {
    match limit {
        Some(l) => (l, false),
        None => (MAX_MODEL_LEN_WITHOUT_CONFIG, true),
    }
}

/// vLLM's default `max_num_batched_tokens` (the prefill chunk its profiling run uses) for
/// `vllm serve` with chunked prefill: 8,192 on GPUs with at least 70 GiB, 2,048 below
/// (vLLM `EngineArgs._set_default_args`, V1 engine).
pub fn default_max_num_batched_tokens(total_memory: Bytes) -> u64 {
    if total_memory >= LARGE_GPU_MEMORY {
        LARGE_GPU_MAX_NUM_BATCHED_TOKENS
    } else {
        DEFAULT_MAX_NUM_BATCHED_TOKENS
    }
}

/// vLLM's default `max_num_seqs` for `vllm serve` (V1 engine): 1,024 on GPUs with at least
/// 70 GiB, 256 below (vLLM `EngineArgs._set_default_args`, the same rule and threshold as
/// [`default_max_num_batched_tokens`]). [`DEFAULT_MAX_NUM_SEQS`] is the smaller figure.
pub fn default_max_num_seqs(total_memory: Bytes) -> u64 {
    if total_memory >= LARGE_GPU_MEMORY {
        LARGE_GPU_MAX_NUM_SEQS
    } else {
        DEFAULT_MAX_NUM_SEQS
    }
}
