//! What one layer caches per token: its elements and bytes by mixer (attention, MLA with
//! DeepSeek Sparse Attention's indexer, SSM), KV heads per GPU, the default KV precision and
//! vLLM's `fp8_ds_mla` layout (the formulas are in the docs of `calc::kv`).

use crate::base::checked::{add, mul};
use crate::base::dtype::Dtype;
use crate::base::error::CalcError;
use crate::hardware::Architecture;
use crate::model::{Mixer, ModelDesc};

/// KV heads held by one GPU under tensor parallelism `tp`: `max(1, kv_heads / tp)` (heads
/// are replicated when `tp` exceeds them).
pub fn kv_heads_per_rank(kv_heads: u64, tp: u64) -> u64 {
    (kv_heads / tp.max(1)).max(1)
}

/// The KV precision used when the user chooses none: the checkpoint's `torch_dtype`
/// (vLLM's `kv_cache_dtype = auto`); bf16 when the weights are stored below 16 bits.
pub fn default_kv_dtype(m: &ModelDesc) -> Dtype {
    auto_kv_dtype(m.weights.base)
}

/// vLLM's `kv_cache_dtype = auto` for a checkpoint whose unquantized tensors are `base`: the
/// base precision itself, bf16 when it is below 16 bits (the precision of the unquantized
/// tensors, [`crate::calc::weights::unquantized_dtype`]). The one rule behind every
/// default KV precision.
pub fn auto_kv_dtype(base: Dtype) -> Dtype {
    crate::calc::weights::unquantized_dtype(base)
}

/// Bytes one layer caches per token beside its elements, whatever the KV precision and on every
/// GPU: the sparse-attention indexer's key of an MLA layer that runs one
/// ([`crate::model::MlaIndexer::cache_bytes_per_token`]); 0 for every other layer.
pub fn layer_fixed_bytes_per_token(mixer: &Mixer) -> u64 {
    match mixer {
        Mixer::Mla {
            indexer: Some(ix), ..
        } => ix.cache_bytes_per_token(),
        _ => 0,
    }
}

/// Elements of the NoPE latent that share one fp32 scale in vLLM's `fp8_ds_mla` cache.
pub const FP8_DS_MLA_SCALE_BLOCK: u64 = 128;

/// Whether the model attends sparsely through MLA: one of its cached layers is an MLA layer
/// running a sparse-attention indexer (DeepSeek-V3.2, GLM-5; vLLM's `index_topk`), so vLLM
/// serves it with a sparse MLA backend only.
pub fn is_sparse_mla(m: &ModelDesc) -> bool {
    m.kv_layers().any(|l| {
        matches!(
            l.mixer,
            Mixer::Mla {
                indexer: Some(_),
                ..
            }
        )
    })
}

/// Whether vLLM stores this model's MLA latents in its `fp8_ds_mla` format at KV precision
/// `kv` on a GPU of architecture `arch`: a sparse-attention MLA model ([`is_sparse_mla`]) with
/// an fp8 KV cache on Hopper. There vLLM's sparse MLA backend is FlashMLA's
/// (`FLASHMLA_SPARSE`, `vllm/v1/attention/backends/mla/flashmla_sparse.py`), and
/// `MLAAttention.__init__` (`vllm/model_executor/layers/attention/mla_attention.py`) turns a
/// quantized `kv_cache_dtype` into `fp8_ds_mla` for the engine, so every MLA layer uses it,
/// whether or not it runs its own indexer. On Blackwell vLLM prefers FlashInfer's sparse MLA
/// backend with an fp8 cache (vLLM PR #37252, in 0.19), which keeps the plain latent at one
/// byte per element; no other architecture runs a sparse MLA backend, and an unknown one
/// ([`Architecture::Unknown`], the model-level figure) keeps the plain latent too.
pub fn uses_fp8_ds_mla(m: &ModelDesc, kv: Dtype, arch: Architecture) -> bool {
    kv == Dtype::Fp8 && arch == Architecture::Hopper && is_sparse_mla(m)
}

/// Bytes one MLA latent of `kv_lora_rank + qk_rope_head_dim` takes in vLLM's `fp8_ds_mla`
/// layout: the NoPE latent in fp8 (1 B each), one fp32 scale per [`FP8_DS_MLA_SCALE_BLOCK`]
/// of it, the RoPE part kept in bf16 (2 B each): `r_kv + ⌈r_kv / 128⌉ × 4 + d_rope × 2`, 656 B
/// for DeepSeek-V3.2's and GLM-5's 512 + 64 (`flashmla_sparse.py` module notes;
/// `MLAAttentionSpec.real_page_size_bytes`, `vllm/v1/kv_cache_interface.py`).
pub fn fp8_ds_mla_bytes_per_token(kv_lora_rank: u64, qk_rope_head_dim: u64) -> u64 {
    let scales = kv_lora_rank
        .div_ceil(FP8_DS_MLA_SCALE_BLOCK)
        .saturating_mul(4);
    kv_lora_rank
        .saturating_add(scales)
        .saturating_add(qk_rope_head_dim.saturating_mul(2))
}

/// Bytes the `fp8_ds_mla` layout adds per token to one layer beyond its latent's elements at
/// one fp8 byte each (its scales and the RoPE part's second byte), when the model uses the
/// layout (`ds_mla`: [`uses_fp8_ds_mla`], decided once per model); 0 otherwise and for every
/// non-MLA layer.
pub fn layer_ds_mla_extra_bytes(mixer: &Mixer, ds_mla: bool) -> u64 {
    match *mixer {
        Mixer::Mla {
            kv_lora_rank,
            qk_rope_head_dim,
            ..
        } if ds_mla => fp8_ds_mla_bytes_per_token(kv_lora_rank, qk_rope_head_dim)
            .saturating_sub(kv_lora_rank.saturating_add(qk_rope_head_dim)),
        _ => 0,
    }
}

/// Elements cached per token by one layer on one GPU (0 for SSM layers).
pub fn layer_elems_per_token(mixer: &Mixer, tp: u64) -> Result<u64, CalcError> {
    Ok(match mixer {
        Mixer::Attention {
            kv_heads,
            head_dim,
            v_head_dim,
            ..
        } => mul(
            "ovf_kv_elements",
            &[
                add("ovf_kv_elements", &[*head_dim, *v_head_dim])?,
                kv_heads_per_rank(*kv_heads, tp),
            ],
        )?,
        Mixer::Mla {
            kv_lora_rank,
            qk_rope_head_dim,
            ..
        } => add("ovf_kv_elements", &[*kv_lora_rank, *qk_rope_head_dim])?,
        Mixer::Ssm { .. } => 0,
    })
}
