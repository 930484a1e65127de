//! Activation reserve estimate: the peak activation memory of one forward pass, per GPU.

use super::defaults::{default_max_num_batched_tokens, DEFAULT_MAX_NUM_SEQS};
use super::helpers::{bytes_result, ceil_div, elems_to_bytes};
use crate::core::base::derivation::{group, Derivation, Source, Term};
use crate::core::base::dtype::Dtype;
use crate::core::base::error::CalcError;
use crate::core::base::units::{fmt_sig, Bytes};
use crate::core::calc::kv::kv_heads_per_rank;
use crate::core::model::{Ffn, Mixer, ModelDesc};
use serde::{Deserialize, Serialize};

/// Settings of the activation estimate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ActivationParams {
    /// Tokens in one forward pass (vLLM `max_num_batched_tokens`, the prefill chunk).
    pub chunk_tokens: u64,
    /// Sequences whose logits are computed at fp32 (vLLM `max_num_seqs`).
    pub logit_rows: u64,
    /// Activation precision.
    pub act: Dtype,
    /// Tensor-parallel degree (per-GPU widths).
    pub tp: u64,
}

impl ActivationParams {
    /// The textbook/vLLM defaults for a GPU of `total_memory`: chunk from
    /// [`default_max_num_batched_tokens`], 256 logit rows, 16-bit activations, TP 1.
    pub fn defaults(total_memory: Bytes) -> ActivationParams {
        ActivationParams {
            chunk_tokens: default_max_num_batched_tokens(total_memory),
            logit_rows: DEFAULT_MAX_NUM_SEQS,
            act: Dtype::Bf16,
            tp: 1,
        }
    }
}

/// The widest intermediate of any layer per GPU, `w_max`, in elements per token: attention
/// `q + k + v + out` widths, MLA's naive prefill widths, SSM `4·d_inner`, gated MLP `3·I`,
/// plain MLP `2·I`, MoE `top_k × 3·I_e` (+ shared experts), each divided by `tp`.
fn widest_intermediate(model: &ModelDesc, tp: u64) -> u64 {
    let mut w_max: u64 = 0;
    for l in &model.layers {
        let mix = match &l.mixer {
            Mixer::Attention {
                num_heads,
                kv_heads,
                head_dim,
                v_head_dim,
                ..
            } => {
                let hq = num_heads / tp;
                let hkv = kv_heads_per_rank(*kv_heads, tp);
                hq.saturating_mul(head_dim.saturating_add(*v_head_dim))
                    .saturating_add(hkv.saturating_mul(head_dim.saturating_add(*v_head_dim)))
            }
            Mixer::Mla {
                num_heads,
                kv_lora_rank,
                qk_nope_head_dim,
                qk_rope_head_dim,
                v_head_dim,
                ..
            } => {
                let hq = num_heads / tp;
                let qk = qk_nope_head_dim.saturating_add(*qk_rope_head_dim);
                // Naive MLA prefill: q and k of qk dims, v and out of v dims, per head.
                hq.saturating_mul(qk.saturating_add(*v_head_dim).saturating_mul(2))
                    .saturating_add(kv_lora_rank.saturating_add(*qk_rope_head_dim))
            }
            Mixer::Ssm { d_inner, .. } => d_inner.saturating_mul(4) / tp,
        };
        let ffn = match &l.ffn {
            Ffn::Dense {
                intermediate,
                gated,
            } => ceil_div(*intermediate, tp).saturating_mul(if *gated { 3 } else { 2 }),
            Ffn::Moe {
                top_k,
                expert_intermediate,
                shared_experts,
                shared_intermediate,
                gated,
                ..
            } => {
                let m = if *gated { 3 } else { 2 };
                top_k
                    .saturating_mul(ceil_div(*expert_intermediate, tp))
                    .saturating_mul(m)
                    .saturating_add(
                        shared_experts
                            .saturating_mul(ceil_div(*shared_intermediate, tp))
                            .saturating_mul(m),
                    )
            }
            Ffn::None => 0,
        };
        w_max = w_max.max(mix).max(ffn);
    }
    w_max
}

/// Estimated peak activation memory of one forward pass, per GPU, with its derivation.
///
/// `A = T × (2h + w_max) × b_act + R × V × 4`: over a chunk of `T = chunk_tokens` tokens, two
/// hidden-size tensors live across the layer (the residual stream and its normed copy) plus the
/// widest intermediate of any layer, `w_max`: gated MLP `3·I` (gate/up output `2·I` and the
/// activated `I`), plain MLP `2·I`, attention `q + k + v + out` widths, MoE `top_k × 3·I_e` (+
/// shared experts), SSM `4·d_inner`; widths per GPU (÷ TP). Then `R = min(logit_rows, T)` rows
/// of logits at fp32 over the full vocabulary `V` (vLLM gathers them on every rank). The KV
/// cache and weights are excluded (counted elsewhere). Checked against vLLM's logged activation
/// peaks: Llama-3.1-8B profiled at 20,000 / 29,000 tokens estimates 2.03 / 2.89 GiB against
/// logged 2.07 / 2.99 GiB (`tests/vllm_observations.rs`). For a model without layer data
/// (quick mode) the estimate is 0 and a note says so.
pub fn activation_estimate(
    model: &ModelDesc,
    ap: &ActivationParams,
) -> Result<(Bytes, Derivation), CalcError> {
    let tp = ap.tp.max(1);
    let h = model.hidden_size;
    let w_max = widest_intermediate(model, tp);
    let width = h.saturating_mul(2).saturating_add(w_max);
    let per_tok = elems_to_bytes(width, ap.act.bits());
    let rows = ap.logit_rows.min(ap.chunk_tokens);
    let hidden_part = per_tok * ap.chunk_tokens;
    let logits = Bytes(rows.saturating_mul(model.vocab_size).saturating_mul(4));
    let total = if model.layers.is_empty() {
        Bytes::ZERO
    } else {
        hidden_part + logits
    };
    let b_act = ap.act.bits() as f64 / 8.0;
    let d = Derivation {
        title_key: "mem_activation_estimate".into(),
        formula: "A = T × (2h + w_max) × b_act + R × V × 4".into(),
        substituted: format!(
            "{} × (2 × {} + {}) × {} + {} × {} × 4",
            group(ap.chunk_tokens),
            group(h),
            group(w_max),
            fmt_sig(b_act),
            group(rows),
            group(model.vocab_size)
        ),
        result: bytes_result(total),
        terms: vec![
            Term::new(
                "T",
                "term_chunk_tokens",
                group(ap.chunk_tokens),
                "tokens",
                Source::Default("default_max_num_batched_tokens".into()),
            ),
            Term::new(
                "h",
                "term_hidden",
                group(h),
                "",
                Source::ConfigKey("hidden_size".into()),
            ),
            Term::new(
                "w_max",
                "term_widest_intermediate",
                group(w_max),
                "",
                Source::Derived("widest per-layer intermediate per GPU".into()),
            ),
            Term::new(
                "b_act",
                "term_act_bytes",
                fmt_sig(b_act),
                "B",
                Source::Default(ap.act.id().into()),
            ),
            Term::new(
                "R",
                "term_logit_rows",
                group(rows),
                "",
                Source::Default("max_num_seqs".into()),
            ),
            Term::new(
                "V",
                "term_vocab",
                group(model.vocab_size),
                "",
                Source::ConfigKey("vocab_size".into()),
            ),
        ],
        notes: if model.layers.is_empty() {
            vec!["note_activation_unknown_arch".into()]
        } else {
            vec!["note_activation_estimate".into()]
        },
    };
    Ok((total, d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activation_estimate_llama2() {
        // Llama-2-7b, chunk 2,048, 256 rows, fp16: the widest intermediate is the gated MLP,
        // 3 × 11,008 = 33,024 (attention: (32 + 32) × 256 = 16,384). Two residual copies of
        // 4,096. A = 2,048 × (8,192 + 33,024) × 2 + 256 × 32,000 × 4 = 201,588,736 B.
        let m = crate::core::model::config::parse_model_text(include_str!(
            "../../../../tests/fixtures/meta-llama__Llama-2-7b-hf.json"
        ))
        .expect("config");
        let ap = ActivationParams {
            chunk_tokens: 2048,
            logit_rows: 256,
            act: Dtype::Fp16,
            tp: 1,
        };
        let (a, d) = activation_estimate(&m, &ap).expect("estimate");
        assert_eq!(
            a,
            Bytes(2048 * (2 * 4096 + 3 * 11_008) * 2 + 256 * 32_000 * 4)
        );
        assert!(d.substituted.contains("33,024"));
        // TP 2 halves the MLP width: 3 × 5,504.
        let (a2, _) = activation_estimate(&m, &ActivationParams { tp: 2, ..ap }).expect("estimate");
        assert_eq!(
            a2,
            Bytes(2048 * (2 * 4096 + 3 * 5504) * 2 + 256 * 32_000 * 4)
        );
    }
}
