//! What vLLM starts its KV budget from on one GPU, from the model, the GPU and the engine's
//! knobs: the one place the serving simulator (`sim::config`), the report's memory section
//! and `llmcalc vllm` take the inputs of [`vllm_budget`](super::vllm::vllm_budget) from.
//!
//! * `M`: the total memory as vLLM sees it ([`vllm_total`]: the logged `total_gpu_memory`
//!   where a vLLM log gives it for the part, e.g. 79.22 GiB on an H100 80 GB against
//!   nvidia-smi's 79.65; else the catalog's capacity).
//! * `W`: the weights as vLLM loads them ([`vllm_loaded_weights`]: the chosen precision per
//!   GPU, plus MXFP4 MoE experts padded for Marlin where vLLM picks that kernel).
//! * `A`: the activation peak of vLLM V1's profiling run, the larger of one forward pass of
//!   `max_num_batched_tokens` tokens and the sampler's top-k/top-p pass over `max_num_seqs`
//!   rows of logits, in the checkpoint's 16-bit precision (bf16 for other checkpoints)
//!   ([`vllm_activation`], [`v1_profile_peak`](super::activation::v1_profile_peak)).
//! * `N`: the non-torch estimate ([`non_torch_estimate`]).
//!
//! The defaults of `max_num_batched_tokens` and `max_num_seqs` follow `M`
//! ([`default_max_num_batched_tokens`], [`default_max_num_seqs`]), except on an A100
//! ([`vllm_serve_defaults`]).

use super::activation::{v1_profile_peak, ActivationParams, ProfileSampler};
use super::defaults::{
    default_max_num_batched_tokens, default_max_num_seqs, DEFAULT_BLOCK_SIZE,
    DEFAULT_GPU_MEMORY_UTILIZATION,
};
use super::vllm_inputs::{non_torch_estimate, VllmInputs};
use super::vllm_loaded::{vllm_loaded_weights, vllm_total, LoadedWeights, VllmTotal};
use super::vllm_version::VllmVersion;
use crate::base::derivation::{Derivation, Source};
use crate::base::dtype::Dtype;
use crate::base::error::CalcError;
use crate::base::units::Bytes;
use crate::hardware::catalog::Accelerator;
use crate::model::ModelDesc;

/// vLLM's engine knobs that decide the KV budget on one GPU, named as vLLM names them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VllmEngine {
    /// Tensor-parallel size.
    pub tp: u64,
    /// The weights' precision (`None` = the checkpoint's own format).
    pub weights_dtype: Option<Dtype>,
    /// `gpu_memory_utilization`.
    pub gpu_memory_utilization: f64,
    /// Tokens per KV block.
    pub block_size: u64,
    /// `max_model_len`, tokens.
    pub max_model_len: u64,
    /// `max_num_batched_tokens` (the profiling run's chunk).
    pub max_num_batched_tokens: u64,
    /// `max_num_seqs` (rows of logits the profiling run samples).
    pub max_num_seqs: u64,
}

impl VllmEngine {
    /// vLLM's defaults on `gpu`: utilization 0.9, blocks of 16, and `max_num_batched_tokens`
    /// and `max_num_seqs` as [`vllm_serve_defaults`] finds them.
    pub fn defaults(
        gpu: &Accelerator,
        tp: u64,
        weights_dtype: Option<Dtype>,
        max_model_len: u64,
    ) -> VllmEngine {
        let (max_num_seqs, max_num_batched_tokens) = vllm_serve_defaults(gpu);
        VllmEngine {
            tp,
            weights_dtype,
            gpu_memory_utilization: DEFAULT_GPU_MEMORY_UTILIZATION,
            block_size: DEFAULT_BLOCK_SIZE,
            max_model_len,
            max_num_batched_tokens,
            max_num_seqs,
        }
    }
}

/// vLLM's defaults for `vllm serve` (V1) on `gpu`: (`max_num_seqs`, `max_num_batched_tokens`).
///
/// The memory rule ([`default_max_num_seqs`], [`default_max_num_batched_tokens`]: 1,024 / 8,192
/// from 70 GiB, 256 / 2,048 below), except
/// that vLLM keeps every A100 on the small figures whatever its memory: `_set_default_args`
/// tests `device_memory >= 70 GiB and "a100" not in device_name` (vLLM PR #17885, "Use small
/// max_num_batched_tokens for A100", merged 2025-05-09, in every release from 0.9.0; vLLM's
/// own `test_defaults_with_usage_context` asserts the same rule). An A100 80 GB log confirms
/// it: vLLM 0.10.1.1 with defaults ran `max_num_batched_tokens=2048` and 256 running
/// sequences (`serving_observations.csv` lines 61-79, dennislee).
pub fn vllm_serve_defaults(gpu: &Accelerator) -> (u64, u64) {
    // The figures below 70 GiB.
    let total = if is_a100(gpu) {
        Bytes(0)
    } else {
        vllm_total(gpu).bytes
    };
    (
        default_max_num_seqs(total),
        default_max_num_batched_tokens(total),
    )
}

/// Whether vLLM's device name of `gpu` contains "a100" (it reads the CUDA device name, e.g.
/// "NVIDIA A100-SXM4-80GB", lower-cased).
fn is_a100(gpu: &Accelerator) -> bool {
    gpu.name.to_ascii_lowercase().contains("a100")
}

/// The inputs of vLLM's budget on one GPU, and how each was found.
#[derive(Debug, Clone, PartialEq)]
pub struct VllmStart {
    /// The budget's inputs (`M`, `u`, `W`, `A`, `N`, block size, lengths).
    pub inputs: VllmInputs,
    /// `M` with its source.
    pub total: VllmTotal,
    /// `W` with the checkpoint's bytes and the padding.
    pub weights: LoadedWeights,
    /// `A`'s derivation (title `vllm_activation_peak`).
    pub activation: Derivation,
    /// The knobs it was found under.
    pub engine: VllmEngine,
}

impl VllmStart {
    /// The budget's inputs under `e`, which may differ from [`VllmStart::engine`] only in
    /// the knobs that none of `M`, `W`, `A` and `N` depends on (`gpu_memory_utilization`,
    /// `block_size`, `max_model_len`): equal to [`vllm_start`]`(model, gpu, e)`'s inputs, so a
    /// start found once per GPU serves every edit of those.
    pub fn inputs_under(&self, e: &VllmEngine) -> VllmInputs {
        debug_assert_eq!(
            (
                e.tp,
                e.weights_dtype,
                e.max_num_batched_tokens,
                e.max_num_seqs
            ),
            (
                self.engine.tp,
                self.engine.weights_dtype,
                self.engine.max_num_batched_tokens,
                self.engine.max_num_seqs
            ),
            "a start is reused only under the knobs it was found with"
        );
        debug_assert!(self.inputs.available_kv_override.is_none());
        VllmInputs {
            gpu_memory_utilization: e.gpu_memory_utilization,
            // A start finds every figure (`vllm_start`); a given KV memory is `llmcalc vllm
            // --available-kv-gib`'s. Stated, not copied: the page's shell then leaves that
            // branch of the budget's derivation out (its key is a late one, in `data/i18n/late`).
            available_kv_override: None,
            block_size: e.block_size,
            max_model_len: e.max_model_len,
            ..self.inputs.clone()
        }
    }

    /// The derivations of `M`, `W` (when padded) and `A`, in that order.
    pub fn derivations(&self) -> Vec<Derivation> {
        let mut v = vec![self.total.derivation.clone()];
        v.extend(self.weights.derivation.iter().cloned());
        v.push(self.activation.clone());
        v
    }
}

/// The precision of the profiling run's activations: the checkpoint's base precision when
/// it is 16-bit, else bf16.
pub fn activation_dtype(model: &ModelDesc) -> Dtype {
    let base = model.weights.base;
    if base.bits() >= 16 && base != Dtype::Fp32 {
        base
    } else {
        Dtype::Bf16
    }
}

/// `A`: the activation peak of vLLM V1's profiling run under `e` with the FlashInfer sampler
/// ([`vllm_activation_with`]), with its derivation titled `vllm_activation_peak`.
///
/// FlashInfer is the default because the deployments the validation rows come from had it
/// (vLLM's docker image ships it): GPUStack's vLLM 0.10.2 imported FlashInfer's attention
/// backend (its H100 page reports that backend's own error for attention sinks), and with the
/// PyTorch-native sampler gpt-oss-120b could not have started on one H100 at all (its peak
/// alone is 7.3 GiB: vllm-project/vllm#23278 logged −2.14 GiB of KV memory); dennislee's
/// vLLM 0.10.1.1 logs leave 0.62 GiB for activation and non-torch memory on an A100, where
/// the native sampler alone would take 1.38 GiB (`tests/vllm_observations.rs`).
pub fn vllm_activation(
    model: &ModelDesc,
    e: &VllmEngine,
) -> Result<(Bytes, Derivation), CalcError> {
    vllm_activation_with(model, e, ProfileSampler::FlashInfer)
}

/// `A` under `e` with the profiling run's sampler `sampler`
/// ([`v1_profile_peak`](super::activation::v1_profile_peak)): one chunk of
/// `max_num_batched_tokens` tokens, then `max_num_seqs` rows sampled, in the checkpoint's
/// 16-bit precision (bf16 for other checkpoints).
pub fn vllm_activation_with(
    model: &ModelDesc,
    e: &VllmEngine,
    sampler: ProfileSampler,
) -> Result<(Bytes, Derivation), CalcError> {
    v1_profile_peak(
        model,
        &ActivationParams {
            chunk_tokens: e.max_num_batched_tokens,
            logit_rows: e.max_num_seqs,
            act: activation_dtype(model),
            tp: e.tp,
        },
        sampler,
    )
}

/// The inputs of vLLM's budget for `model` on `gpu` under `e` (module docs).
pub fn vllm_start(
    model: &ModelDesc,
    gpu: &Accelerator,
    e: &VllmEngine,
) -> Result<VllmStart, CalcError> {
    let total = vllm_total(gpu);
    let weights = vllm_loaded_weights(model, e.weights_dtype, e.tp, Some(gpu))?;
    let (activation_peak, activation) = vllm_activation(model, e)?;
    let inputs = VllmInputs {
        total_memory: total.bytes,
        total_source: total.source.clone(),
        gpu_memory_utilization: e.gpu_memory_utilization,
        weights: weights.bytes,
        weights_source: weights.source.clone(),
        activation_peak,
        activation_source: Source::Derived("vllm_activation_peak".into()),
        non_torch: non_torch_estimate(e.tp),
        non_torch_source: Source::Default("non_torch_estimate".into()),
        available_kv_override: None,
        block_size: e.block_size,
        max_model_len: e.max_model_len,
        max_num_batched_tokens: e.max_num_batched_tokens,
        vllm_version: VllmVersion::DEFAULT,
    };
    Ok(VllmStart {
        inputs,
        total,
        weights,
        activation,
        engine: *e,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::units::GIB;
    use crate::calc::memory::vllm_loaded::mxfp4_moe_padding;
    use crate::calc::memory::vllm_loaded::Mxfp4MoeLayout;
    use crate::calc::weights::checkpoint;
    use crate::hardware::Catalog;
    use crate::model::{parse_model_text, preset};

    fn model(id: &str) -> ModelDesc {
        parse_model_text(preset(id).expect("preset").json()).expect("model")
    }

    #[test]
    fn h100_start_is_the_logged_total_and_the_padded_weights() {
        let m = model("openai__gpt-oss-120b");
        let h = Catalog::builtin().get("h100-sxm").expect("gpu");
        let e = VllmEngine::defaults(h, 1, None, 8192);
        // 79.22 GiB ≥ 70 GiB: vLLM's large-GPU defaults, 8,192 tokens and 1,024 sequences.
        assert_eq!((e.max_num_batched_tokens, e.max_num_seqs), (8192, 1024));
        let s = vllm_start(&m, h, &e).expect("start");
        assert!((s.inputs.total_memory.0 as f64 / GIB as f64 - 79.22).abs() < 1e-9);
        assert!(s.inputs.total_memory < h.capacity());
        // W = checkpoint per GPU + Marlin padding (36 layers × 128 experts × 3 ×
        // (2,944 × 3,072 − 2,880 × 2,880) × 17/32 B).
        let ckpt = checkpoint(&m, 1).expect("w").per_gpu;
        let pad = Bytes(36 * 128 * 3 * (2944 * 3072 - 2880 * 2880) * 17 / 32);
        assert_eq!(mxfp4_moe_padding(&m, 1, Mxfp4MoeLayout::Marlin), pad);
        assert_eq!(s.inputs.weights, ckpt + pad);
        let ds = s.derivations();
        let titles: Vec<&str> = ds.iter().map(|d| d.title_key.as_str()).collect();
        assert_eq!(
            titles,
            [
                "vllm_total_memory",
                "vllm_loaded_weights",
                "vllm_activation_peak"
            ]
        );
        // A chosen precision is modelled unpadded.
        let s8 = vllm_start(
            &m,
            h,
            &VllmEngine {
                weights_dtype: Some(Dtype::Fp8),
                ..e
            },
        )
        .expect("start");
        assert!(s8.weights.derivation.is_none());
        assert_eq!(s8.weights.padding, Bytes::ZERO);
    }

    /// A start found once serves other utilizations, block sizes and lengths: its inputs
    /// under them are those of a start found under them.
    #[test]
    fn a_kept_start_gives_the_inputs_of_a_fresh_one() {
        let m = model("openai__gpt-oss-120b");
        for id in ["h100-sxm", "a10g", "a100-sxm-80gb"] {
            let g = Catalog::builtin().get(id).expect("gpu");
            let kept = vllm_start(&m, g, &VllmEngine::defaults(g, 2, None, 4096)).expect("start");
            for (u, block, len) in [(0.8, 32, 131_072), (0.95, 16, 1), (0.5, 64, 8192)] {
                let e = VllmEngine {
                    gpu_memory_utilization: u,
                    block_size: block,
                    ..VllmEngine::defaults(g, 2, None, len)
                };
                let fresh = vllm_start(&m, g, &e).expect("start");
                assert_eq!(kept.inputs_under(&e), fresh.inputs, "{id}");
                assert_eq!(kept.derivations(), fresh.derivations(), "{id}");
            }
        }
    }

    #[test]
    fn a_gpu_without_a_logged_total_uses_the_catalog() {
        let m = model("Qwen__Qwen3-8B");
        let a = Catalog::builtin().get("a10g").expect("gpu");
        let e = VllmEngine::defaults(a, 1, None, 4096);
        assert_eq!((e.max_num_batched_tokens, e.max_num_seqs), (2048, 256));
        let s = vllm_start(&m, a, &e).expect("start");
        assert_eq!(s.inputs.total_memory, a.capacity());
        assert_eq!(s.total.derivation.notes, ["note_vllm_total_catalog"]);
        assert!(matches!(s.inputs.total_source, Source::Catalog(_)));
        // The activation peak is V1's profiling run of one 2,048-token chunk with 256 rows
        // sampled by FlashInfer: Qwen3-8B's sampler (2,048 + 512) × 4,096 × 2 B + 256 ×
        // 151,936 × 14 B = 565,526,528 B is above its forward pass, 2,048 × (2 × 4,096 +
        // 3 × 12,288) × 2 B = 184,549,376 B.
        let (want, _) = v1_profile_peak(
            &m,
            &ActivationParams {
                chunk_tokens: 2048,
                logit_rows: 256,
                act: Dtype::Bf16,
                tp: 1,
            },
            ProfileSampler::FlashInfer,
        )
        .expect("estimate");
        assert_eq!(s.inputs.activation_peak, want);
        assert_eq!(want, Bytes((2048 + 512) * 4096 * 2 + 256 * 151_936 * 14));
        assert_eq!(
            s.inputs.weights,
            checkpoint(&m, 1).expect("w").per_gpu,
            "no MXFP4 experts: no padding"
        );
    }
}
