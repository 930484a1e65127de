//! Tensor parallelism: one GPU's share of the weights.

use super::helpers::bytes_result;
use crate::core::base::derivation::{group, Derivation, Source, Term};
use crate::core::base::error::CalcError;
use crate::core::base::units::Bytes;
use crate::core::calc::tp::check_heads as check_tp;
use crate::core::model::{Mixer, ModelDesc};

/// One GPU's share of the weights under tensor parallelism, with its derivation.
///
/// Sharded (divided by `tp`): embeddings and lm_head (vLLM's vocab-parallel layers), query and
/// output projections, K/V projections while `kv_heads ≥ tp`, MLA up-projections, MLP, experts
/// and SSM projections. Replicated on every GPU: norms, routers, learned position embeddings,
/// MLA down-projections (`q_a`, `kv_a`), and one K/V head per GPU when `tp > kv_heads`.
/// The stored bytes `total_bytes` (any precision, with scales) are split in proportion to the
/// parameter counts. Source: vLLM `ColumnParallelLinear`/`RowParallelLinear`/
/// `QKVParallelLinear`/`VocabParallelEmbedding`.
pub fn weights_per_gpu(
    model: &ModelDesc,
    total_bytes: Bytes,
    tp: u64,
) -> Result<(Bytes, Derivation), CalcError> {
    let tp = tp.max(1);
    let p = &model.params;
    let mut replicated: u64 = p
        .norms
        .saturating_add(p.router)
        .saturating_add(p.position_embeddings);
    let mut kv_extra: u64 = 0; // K/V parameters per rank beyond the ideal 1/tp share
    let h = model.hidden_size;
    for l in &model.layers {
        match &l.mixer {
            Mixer::Attention {
                num_heads,
                kv_heads,
                head_dim,
                v_head_dim,
                ..
            } => {
                check_tp(*num_heads, *kv_heads, tp)?;
                if *kv_heads < tp && *kv_heads > 0 {
                    // Per rank: one whole head instead of kv_heads / tp heads.
                    let per_head = h.saturating_mul(head_dim.saturating_add(*v_head_dim));
                    let held = per_head;
                    let ideal = per_head.saturating_mul(*kv_heads) / tp;
                    kv_extra = kv_extra.saturating_add(held.saturating_sub(ideal));
                }
            }
            Mixer::Mla {
                num_heads,
                kv_lora_rank,
                q_lora_rank,
                qk_rope_head_dim,
                ..
            } => {
                check_tp(*num_heads, 0, tp)?;
                let kv_a = h.saturating_mul(kv_lora_rank.saturating_add(*qk_rope_head_dim));
                let q_a = q_lora_rank.map_or(0, |r| h.saturating_mul(r));
                replicated = replicated.saturating_add(kv_a).saturating_add(q_a);
            }
            Mixer::Ssm { .. } => {}
        }
    }
    let total = p.total.max(1);
    let replicated = replicated.min(total);
    let sharded = total - replicated;
    let per_rank_params = (sharded / tp)
        .saturating_add(replicated)
        .saturating_add(kv_extra)
        .min(total);
    let bytes = if p.total == 0 {
        Bytes(total_bytes.0 / tp)
    } else {
        let b = u128::from(total_bytes.0) * u128::from(per_rank_params) / u128::from(total);
        Bytes(u64::try_from(b).unwrap_or(u64::MAX))
    };
    let d = Derivation {
        title_key: "mem_weights_per_gpu".into(),
        formula: "W_gpu = W × (P_sharded / TP + P_replicated) / P".into(),
        substituted: format!(
            "{} B × ({} / {} + {}) / {}",
            group(total_bytes.0),
            group(sharded),
            tp,
            group(replicated.saturating_add(kv_extra)),
            group(p.total)
        ),
        result: bytes_result(bytes),
        terms: vec![
            Term::new("W", "term_weights", group(total_bytes.0), "B", Source::Derived("weights_bytes".into())),
            Term::new("TP", "term_tp", tp.to_string(), "", Source::User("tp".into())),
            Term::new("P", "term_params", group(p.total), "", Source::Derived("params_total".into())),
            Term::new(
                "P_replicated",
                "term_params_replicated",
                group(replicated.saturating_add(kv_extra)),
                "",
                Source::Derived("norms + routers + position embeddings + MLA down-projections + replicated K/V heads".into()),
            ),
        ],
        notes: vec!["note_tp_weights_proportional".into()],
    };
    Ok((bytes, d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::calc::kv::kv_heads_per_rank;

    #[test]
    fn tp_checks_and_replication() {
        assert_eq!(kv_heads_per_rank(8, 2), 4);
        assert_eq!(kv_heads_per_rank(8, 16), 1);
        assert!(check_tp(32, 8, 3).is_err());
        assert!(check_tp(32, 8, 16).is_ok());
        assert!(check_tp(32, 6, 4).is_err());
        assert!(matches!(
            check_tp(32, 8, 0),
            Err(CalcError::OutOfRange { .. })
        ));
    }

    #[test]
    fn weights_per_gpu_replicates_kv_heads_beyond_tp() {
        // Llama-3.1-8B at TP 16 (8 KV heads): each GPU holds 1 K and 1 V head instead of 1/2:
        // extra per layer = 4,096 × (128 + 128) − 8 × 4,096 × 256 / 16 = 524,288 params.
        // Per GPU = (P − norms) / 16 + norms + 32 × 524,288, norms = 65 × 4,096.
        let m = crate::core::model::config::parse_model_text(include_str!(
            "../../../../tests/fixtures/meta-llama__Meta-Llama-3.1-8B.json"
        ))
        .expect("config");
        let p = 8_030_261_248u64;
        let norms = 65 * 4096;
        let per_gpu = (p - norms) / 16 + norms + 32 * 524_288;
        let (w, _) = weights_per_gpu(&m, Bytes(2 * p), 16).expect("tp 16");
        assert_eq!(w, Bytes(2 * per_gpu));
        assert!(weights_per_gpu(&m, Bytes(2 * p), 3).is_err());
    }
}
