//! The inputs of vLLM's budget, per GPU, with where each came from ([`VllmInputs`]): total
//! memory, `gpu_memory_utilization`, weights, the profiling run's activation peak, non-torch
//! memory ([`non_torch_estimate`]), block size, `max_model_len` and `max_num_batched_tokens`;
//! and the checks vLLM makes on them.

use super::defaults::{
    DEFAULT_BLOCK_SIZE, DEFAULT_GPU_MEMORY_UTILIZATION, DEFAULT_MAX_NUM_BATCHED_TOKENS,
};
use super::helpers::out_of_range;
use super::vllm_version::VllmVersion;
use crate::base::derivation::Source;
use crate::base::error::{CalcError, Phrase};
use crate::base::units::{Bytes, GIB};
use serde::{Deserialize, Serialize};

/// Inputs of vLLM's rule, per GPU, with where each came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VllmInputs {
    /// Total GPU memory (vLLM's `total_gpu_memory`).
    pub total_memory: Bytes,
    /// Where the total came from.
    pub total_source: Source,
    /// `gpu_memory_utilization`, in (0, 1].
    pub gpu_memory_utilization: f64,
    /// Weights on this GPU.
    pub weights: Bytes,
    /// Where the weights came from.
    pub weights_source: Source,
    /// Peak activation memory of the profiling run.
    pub activation_peak: Bytes,
    /// Where the activation peak came from.
    pub activation_source: Source,
    /// Memory outside PyTorch's allocator (CUDA context, NCCL, cuBLAS workspaces).
    pub non_torch: Bytes,
    /// Where the non-torch figure came from.
    pub non_torch_source: Source,
    /// When set, the available KV memory directly (bypasses the subtraction).
    pub available_kv_override: Option<Bytes>,
    /// Tokens per block (vLLM `block_size`, default 16).
    pub block_size: u64,
    /// `max_model_len`.
    pub max_model_len: u64,
    /// `max_num_batched_tokens` (sliding-window layers keep `window − 1 + this` tokens).
    pub max_num_batched_tokens: u64,
    /// The vLLM release whose start-up figures to follow (`vllm_version`'s rules; default the
    /// newest the project has a log of).
    #[serde(default)]
    pub vllm_version: VllmVersion,
}

/// vLLM's non-torch memory estimate: 0.5 GiB on one GPU, 2 GiB with tensor parallelism (NCCL
/// buffers). Coarse: vLLM logged 0.16–1.79 GiB at TP 1 and 3.58 GiB at TP 2
/// (`vllm_observations.csv`); give the figure from your own log when you have it.
pub fn non_torch_estimate(tp: u64) -> Bytes {
    if tp > 1 {
        Bytes::from_gib(2)
    } else {
        Bytes(GIB / 2)
    }
}

impl VllmInputs {
    /// vLLM's inputs with the KV memory given outright (`available_kv_override`, as a log's
    /// "Available KV cache memory" gives it), 16-token blocks, 2,048 tokens a step and
    /// `max_model_len`, the default vLLM release's rules; the rest zero (the override bypasses
    /// them).
    pub fn with_available_kv(available: Bytes, max_model_len: u64) -> VllmInputs {
        let given = |s: &str| Source::User(s.into());
        VllmInputs {
            total_memory: Bytes::ZERO,
            total_source: given("total_memory"),
            gpu_memory_utilization: DEFAULT_GPU_MEMORY_UTILIZATION,
            weights: Bytes::ZERO,
            weights_source: given("weights"),
            activation_peak: Bytes::ZERO,
            activation_source: given("activation_peak"),
            non_torch: Bytes::ZERO,
            non_torch_source: given("non_torch"),
            available_kv_override: Some(available),
            block_size: DEFAULT_BLOCK_SIZE,
            max_model_len,
            max_num_batched_tokens: DEFAULT_MAX_NUM_BATCHED_TOKENS,
            vllm_version: VllmVersion::DEFAULT,
        }
    }
}

/// Checks vLLM's inputs in order: the utilization in (0, 1], then a block size of at least 1,
/// then a `max_model_len` of at least 1.
pub(super) fn check_vllm_inputs(inp: &VllmInputs) -> Result<(), CalcError> {
    let u = inp.gpu_memory_utilization;
    if !(u.is_finite() && u > 0.0 && u <= 1.0) {
        return Err(out_of_range(
            "gpu_memory_utilization",
            u,
            Phrase::tr("rng_number_above0_at_most1"),
        ));
    }
    if inp.block_size == 0 {
        return Err(out_of_range(
            "block_size",
            0,
            Phrase::tr("rng_whole_at_least_1"),
        ));
    }
    if inp.max_model_len == 0 {
        return Err(out_of_range(
            "max_model_len",
            0,
            Phrase::tr("rng_whole_at_least_1"),
        ));
    }
    Ok(())
}

/// A value the user entered in field `field`.
pub(super) fn user(field: &str) -> Source {
    Source::User(field.to_string())
}
