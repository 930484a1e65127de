//! Memory budgets: how many requests fit beside the weights.
//!
//! Two rules, both explained as [`Derivation`](crate::base::derivation::Derivation)s:
//!
//! * **The textbook's** (course chapter, section 3 of `WORKED_EXAMPLES.md`):
//!   `budget = capacity − weights`, `max requests = ⌊budget / KV per request⌋`. The theoretical
//!   figure reads the marketed capacity as GiB (the vendors' convention: "24 GB" → 24 GiB); the
//!   practical figure starts from the capacity the driver reports (A10G 23,028 MiB, L40S
//!   46,068 MiB) and also keeps an activation reserve ([`activation_estimate`]). This turns the
//!   chapter's 5 into 4 (A10G) and 17 into 16 (L40S) for Llama-2-7b fp16 at 4,096 tokens.
//! * **vLLM's** ([`vllm_budget`]): `available KV = total × gpu_memory_utilization − weights −
//!   activation peak − non-torch memory`, paged in blocks of `block_size` tokens, reporting the
//!   same lines vLLM logs ("GPU KV cache size: N tokens", "Maximum concurrency for L tokens per
//!   request: X×"). Source: vLLM `vllm/worker/worker.py` (`determine_num_available_blocks`),
//!   `vllm/executor/executor_base.py` (`initialize_cache`) and `vllm/v1/core/kv_cache_utils.py`
//!   (hybrid allocator, `get_max_concurrency_for_kv_cache_config`).
//!
//! Sliding-window layers follow vLLM V1's hybrid KV-cache allocator (`Paging::Hybrid`): layers
//! are bucketed by kind (full, or each window), grouped into equal-size groups (group size = the
//! smallest bucket, or the largest when it is under 1.5× the smallest; short buckets padded),
//! and every group draws block ids from one shared pool, so one block id costs
//! `block_size × group_size × per-layer bytes per token`. A request of `max_model_len` tokens
//! needs `⌈L / block_size⌉` blocks per full group and `⌈min(W − 1 + max_num_batched_tokens, L) /
//! block_size⌉ + 1` per sliding group; concurrency = blocks / that sum. When layer page sizes differ (Gemma 4's
//! sliding and full layers), vLLM first unifies them: the layers of the smaller page get a
//! block `largest page / their page` times longer, the layers are bucketed by kind and block,
//! a block id costs `block_size × group_size × the largest per-layer bytes per token`, each
//! group counts its blocks with its own block size (`vllm_paging`'s module docs). Where the larger page is not
//! a whole multiple of the smaller (vLLM refuses) or recurrent layers sit beside them, sliding
//! layers are paged as full attention (vLLM's rule with its hybrid manager disabled, with a
//! note). All-full-attention models form one group: tokens = blocks × block_size.
//!
//! **Which release's lines.** How the blocks become the logged cache tokens and concurrency
//! changed across vLLM releases, and [`VllmInputs::vllm_version`] picks the release
//! ([`VllmVersion`]: each rule with the PR and release that changed it): the concurrency of one
//! full-attention group is `tokens / L` to 0.9.0 and `blocks / ⌈L / block_size⌉` from 0.9.1
//! (they differ only when `block_size` does not divide `L`: 0.82× either way for row 2 of the
//! observations, 1,478 blocks at 29,000 tokens, but 23,648 against 23,641 tokens from 0.21);
//! the cache tokens are `⌊blocks / groups⌋ × the smallest block_size` to 0.20 and
//! `⌊concurrency × L⌋` from 0.21, for every layout; from 0.27 both figures share one line; from
//! 0.28 a request holds two blocks in each recurrent group (prefix caching on by default). The
//! default is the newest release the project has a start-up log of ([`VllmVersion::DEFAULT`]),
//! which the report and the simulator follow too; `llmcalc vllm --vllm-version` picks another.
//!
//! Recurrent layers (Mamba, short convolution, linear attention) beside full attention follow
//! vLLM V1's `HybridAttentionMambaModelConfig` and the same allocator (`Paging::Mamba`): the
//! block size becomes `max(block_size, 16 × ⌈S / (16 × a)⌉)` (`S` one recurrent layer's state,
//! `a` one attention layer's bytes per token, both per GPU), every state is padded to the page
//! `block × a`, the layers form groups of the smaller count (the larger when under 1.25× it),
//! a request holds `⌈L / block⌉` blocks in each attention group and one in each recurrent
//! group (two from vLLM 0.28), and up to 0.20 the token figure is `⌊blocks / groups⌋ × min(block,
//! L)`. `tests/vllm_observations.rs::hybrid_logs_are_reproduced` checks public logs (Qwen3-Next
//! on two GPUs at 0.10.2 and 0.13.0, Granite-4.0-H-Small, Qwen3.5 at 0.28.0). A model of recurrent layers only (Mamba,
//! Mamba-2) is paged the same way with no attention group: one group of every layer, a block
//! of `max_model_len` tokens holding one request's whole unpadded state, one block per
//! request (`recurrent_only_models_hold_one_block_per_request`).
//!
//! All byte arithmetic is integer and saturating or checked: no input can panic, overflow or
//! produce NaN.
//!
//! The parts: vLLM's defaults (`defaults`), small shared helpers (`helpers`), the per-GPU KV
//! profile (`kv_profile`), the activation reserve (`activation`), the textbook's budget
//! (`textbook`), vLLM's budget (`vllm`; its inputs in `vllm_inputs`, its paging in blocks in
//! `vllm_paging`), what a vLLM process sees beyond the catalog and the checkpoint
//! (`vllm_loaded`: the total memory PyTorch reports, MXFP4 MoE experts padded for Marlin),
//! the budget's inputs from a model, a GPU and the engine's knobs (`vllm_start`: the one
//! place the simulator, the report and `llmcalc vllm` take them from) and the memory of
//! serving a batch (`serving`).

mod activation;
mod defaults;
mod helpers;
mod kv_profile;
mod serving;
mod textbook;
mod vllm;
mod vllm_inputs;
mod vllm_loaded;
mod vllm_paging;
mod vllm_start;
mod vllm_version;

pub use crate::calc::kv::kv_heads_per_rank;
pub use activation::{activation_estimate, v1_profile_peak, ActivationParams, ProfileSampler};
pub use defaults::{
    default_max_model_len, default_max_num_batched_tokens, default_max_num_seqs,
    max_model_len_warning, DEFAULT_BLOCK_SIZE, DEFAULT_GPU_MEMORY_UTILIZATION,
    DEFAULT_MAX_NUM_BATCHED_TOKENS, DEFAULT_MAX_NUM_SEQS, LARGE_GPU_MAX_NUM_BATCHED_TOKENS,
    LARGE_GPU_MAX_NUM_SEQS, LARGE_GPU_MEMORY, MAX_MODEL_LEN_WITHOUT_CONFIG,
};
pub use kv_profile::{KvLayer, KvLayerKind, KvProfile};
pub use serving::serving_memory;
pub use textbook::{
    textbook_budget, textbook_for, what_would_fit, Suggestion, TextbookBudget, TextbookGpu,
    TextbookInputs,
};
pub use vllm::{vllm_budget, VllmBudget, VllmStartup};
pub use vllm_inputs::{non_torch_estimate, VllmInputs};
pub use vllm_loaded::{
    k_as_v_elems, mxfp4_moe_expert_bytes, mxfp4_moe_layout, mxfp4_moe_padding, vllm_loaded_weights,
    vllm_total, vllm_total_memory, LoadedWeights, Mxfp4MoeLayout, VllmTotal,
    A100_80GB_VLLM_TOTAL_GIB, H100_80GB_VLLM_TOTAL_GIB, VLLM_TOTAL_FROM_KV_LOGS, VLLM_TOTAL_LOGGED,
};
pub use vllm_paging::{Paging, UnifiedKind};
pub use vllm_start::{
    activation_dtype, vllm_activation, vllm_activation_with, vllm_serve_defaults, vllm_start,
    VllmEngine, VllmStart,
};
pub use vllm_version::{CacheTokensRule, ConcurrencyRule, VllmLogRules, VllmVersion};

#[cfg(test)]
mod tests {
    mod props {
        use super::super::*;
        use crate::base::derivation::Source;
        use crate::base::dtype::Dtype;
        use crate::base::units::Bytes;
        use crate::model::quick::quick_model;
        use crate::model::{Ffn, Layer, Mixer};
        use proptest::prelude::*;

        fn profile() -> impl Strategy<Value = KvProfile> {
            (
                proptest::collection::vec((any::<u64>(), proptest::option::of(any::<u64>())), 0..6),
                any::<u64>(),
            )
                .prop_map(|(ls, st)| KvProfile {
                    layers: ls
                        .into_iter()
                        .map(|(b, w)| KvLayer {
                            kind: w
                                .map_or(KvLayerKind::Full, |w| KvLayerKind::Sliding { window: w }),
                            bytes_per_token: Bytes(b),
                        })
                        .collect(),
                    state_per_seq: Bytes(st),
                    state_layers: Vec::new(),
                })
        }

        proptest! {
            #[test]
            fn memory_grows_with_batch_and_context(p in profile(), b in 0u64..1_000_000, l in 0u64..u64::MAX - 1, w in any::<u64>()) {
                prop_assert!(p.per_batch(b + 1, l) >= p.per_batch(b, l));
                prop_assert!(p.per_request(l + 1) >= p.per_request(l));
                prop_assert!(serving_memory(Bytes(w), Bytes(0), &p, b + 1, l) >= serving_memory(Bytes(w), Bytes(0), &p, b, l));
            }

            #[test]
            fn vllm_never_panics(p in profile(), t in any::<u64>(), w in any::<u64>(), a in any::<u64>(), n in any::<u64>(),
                                 u in any::<f64>(), bs in any::<u64>(), l in any::<u64>(), m in any::<u64>(), k in proptest::option::of(any::<u64>()),
                                 oldest in any::<bool>()) {
                let inp = VllmInputs {
                    total_memory: Bytes(t), total_source: Source::User("t".into()), gpu_memory_utilization: u,
                    weights: Bytes(w), weights_source: Source::User("w".into()),
                    activation_peak: Bytes(a), activation_source: Source::User("a".into()),
                    non_torch: Bytes(n), non_torch_source: Source::User("n".into()),
                    available_kv_override: k.map(Bytes), block_size: bs, max_model_len: l, max_num_batched_tokens: m,
                    vllm_version: if oldest { VllmVersion::OLDEST } else { VllmVersion::DEFAULT },
                };
                if let Ok(b) = vllm_budget(&inp, &p) {
                    prop_assert!(b.max_concurrency.is_finite() && b.max_concurrency >= 0.0);
                    prop_assert!(b.available_kv <= b.requested_memory || k.is_some());
                }
            }

            #[test]
            fn textbook_never_panics(a in any::<u64>(), b in any::<u64>(), c in any::<u64>(), d in any::<u64>(), e in any::<u64>()) {
                let t = textbook_budget(&TextbookInputs {
                    marketed_capacity: Bytes(a), usable_capacity: Bytes(b), weights: Bytes(c),
                    kv_per_request: Bytes(d), activation_reserve: Bytes(e),
                });
                prop_assert!(t.practical <= t.theoretical || b > a);
            }

            #[test]
            fn estimates_never_panic(h in any::<u64>(), v in any::<u64>(), heads in 1u64..1_000, kvh in 0u64..1_000,
                                     d in any::<u64>(), i in any::<u64>(), tp in 0u64..64, chunk in any::<u64>(), params in any::<u64>()) {
                let mut m = quick_model(params.max(1), Dtype::Bf16);
                m.hidden_size = h;
                m.vocab_size = v;
                m.layers = vec![Layer {
                    mixer: Mixer::Attention { num_heads: heads, kv_heads: kvh, head_dim: d, v_head_dim: d, window: None },
                    ffn: Ffn::Dense { intermediate: i, gated: true },
                }];
                let ap = ActivationParams { chunk_tokens: chunk, logit_rows: 256, act: Dtype::Bf16, tp };
                let _ = activation_estimate(&m, &ap);
                let _ = KvProfile::from_model(&m, Dtype::Fp8, tp, crate::hardware::Architecture::Hopper);
                let _ = crate::calc::weights::checkpoint(&m, tp);
            }
        }
    }
}
