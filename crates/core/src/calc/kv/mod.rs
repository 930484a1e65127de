//! KV cache and recurrent state bytes, per token, per sequence and per batch, by layer type.
//!
//! Per layer and token (elements, per GPU under tensor parallelism `t`):
//! * full or sliding attention: `(d_k + d_v) × H_kv'` with `H_kv' = max(1, H_kv / t)`
//!   (K and V; `d_k = d_v` = head_dim for most models, so `2 × H_kv × d_head`);
//! * MLA (DeepSeek-V2/V3): one latent `r_kv + d_rope` per token, no ×2 for K and V, replicated
//!   on every GPU;
//! * DeepSeek Sparse Attention's indexer (DeepSeek-V3.2, GLM-5), in every MLA layer that runs
//!   one: its key, `d_idx = d_i + ⌊d_i / 128⌋ × 4` bytes per token whatever the KV precision
//!   (fp8 values and an fp32 scale per 128 of them, [`crate::model::MlaIndexer`]), replicated
//!   on every GPU. vLLM gives each indexer its own cache layer (`DeepseekV32IndexerCache`, an
//!   `MLAAttentionSpec` of one head of `d_idx` uint8) and, as all these layers keep every
//!   token, puts them and the MLA layers in one KV cache group whose page is the sum of every
//!   layer's page (`UniformTypeKVCacheSpecs`, `vllm/v1/core/kv_cache_utils.py`
//!   `get_kv_cache_config_from_groups`: `num_blocks = available_memory // page_size_bytes`), so
//!   a block costs `block_size × (Σ latent bytes + Σ indexer bytes)`, as it is summed here;
//! * SSM / linear layers: nothing per token; a constant state per sequence instead
//!   ([`state_bytes`]).
//!
//! A sequence of `T` tokens caches `min(T, W)` tokens in a sliding-window layer of window `W`
//! (vLLM's sliding-window manager frees blocks outside the window; block rounding is left to
//! the memory planner). Bytes are `⌈Σ elements × tokens × bits / 8⌉`; fp8/int8/fp4 KV scales
//! are not counted.
//!
//! These figures are the model's, on no particular GPU. With an fp8 KV cache, vLLM stores a
//! sparse-attention MLA model's latents on Hopper in FlashMLA's `fp8_ds_mla` layout (656 B per
//! layer and token for 512 + 64 instead of 576) and on Blackwell in the plain fp8 counted here
//! ([`uses_fp8_ds_mla`]); the per-GPU profile that pages vLLM's blocks applies it
//! (`memory::KvProfile::from_model`, which takes the GPU's architecture).
//!
//! With the MTP modules loaded for speculative decoding ([`ModelDesc::load_mtp`]) their decoder
//! layers are cached too ([`ModelDesc::kv_layers`]): vLLM's drafter registers its attention
//! layers beside the target's and the KV cache config gives them blocks like any other layer
//! (`vllm/v1/spec_decode/eagle.py`, `EagleProposer.load_model`: `draft_attn_layer_names`, and
//! `validate_same_kv_cache_group`; `DeepSeekMTP` and `Qwen3NextMTP` build
//! `num_nextn_predict_layers` layers, each with its own attention).
//!
//! The recurrent state is kept in the model's own precision (`torch_dtype`), as vLLM
//! (`mamba_ssm_cache_dtype = auto`) and Hugging Face do by default; pass `Dtype::Fp32` to
//! [`state_bytes`] for engines that keep it in fp32. Where the config names the SSM state's
//! precision ([`ModelDesc::ssm_state_dtype`]: Qwen3.5's `mamba_ssm_dtype`, Nemotron-H's
//! `mamba_ssm_cache_dtype`, both `float32` in the published configs), that part is kept in it
//! and the conv state in the model's, as vLLM does for those families.
//!
//! [`ModelDesc::load_mtp`]: crate::model::ModelDesc::load_mtp
//! [`ModelDesc::kv_layers`]: crate::model::ModelDesc::kv_layers
//! [`ModelDesc::ssm_state_dtype`]: crate::model::ModelDesc::ssm_state_dtype

mod cache;
mod layer;
mod state;

pub use cache::{per_batch, per_sequence, per_token, KvBytes};
pub use layer::{
    auto_kv_dtype, default_kv_dtype, fp8_ds_mla_bytes_per_token, is_sparse_mla, kv_heads_per_rank,
    layer_ds_mla_extra_bytes, layer_elems_per_token, layer_fixed_bytes_per_token, uses_fp8_ds_mla,
    FP8_DS_MLA_SCALE_BLOCK,
};
pub use state::{state_bytes, state_bytes_in, state_bytes_per_layer};

#[cfg(test)]
mod tests;
