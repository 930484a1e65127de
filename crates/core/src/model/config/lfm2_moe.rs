//! LFM2-MoE (`lfm2_moe`: LiquidAI LFM2-8B-A1B, LFM2-24B-A2B), as transformers'
//! `modeling_lfm2_moe.py` and vLLM's `lfm2_moe.py` build it: LFM2's layers (`lfm2.rs`: per layer
//! two RMSNorms and a gated short convolution or, where `layer_types` says "full_attention",
//! GQA attention with q/k layernorms over the head), whose feed-forward is
//!
//! - in the first `num_dense_layers` layers (2 when absent, `Lfm2MoeConfig`'s default) a gated
//!   MLP of `intermediate_size` as given (`3·h·I`; no `block_auto_adjust_ff_dim` here);
//! - in the others a MoE: the router `gate` `E·h`, with `use_expert_bias` (true when absent)
//!   its `expert_bias` `E` (float32 in the checkpoint, and in vLLM, which loads it as the gate's
//!   `e_score_correction_bias`), and `E` gated experts of `moe_intermediate_size` (`3·h·I_e`),
//!   `num_experts_per_tok` of them per token; no shared expert.
//!
//! Then the final `embedding_norm` `h` and the embeddings, the head tied unless the config
//! unties it. The attention layers cache K and V of every token; each convolution layer keeps
//! `(L − 1)·h` of state per sequence (vLLM's `short_conv_state_shape`), no KV cache.

use super::common::{read_core, read_tie, read_top_k};
use super::kit::{add_dense_ffn, add_routed_experts, finish_parts, Acc, Comp, Parts};
use super::lfm2::{lfm2_attention, lfm2_attention_layers, short_conv};
use super::reader::Reader;
use crate::base::error::{CalcError, Phrase};
use crate::model::desc::{Ffn, Layer};

/// The MoE sizes of an LFM2-MoE layer.
struct Moe {
    experts: u64,
    top_k: u64,
    inter: u64,
    bias: bool,
}

/// One MoE feed-forward: the routed experts, and the fp32 expert bias when there is one.
fn add_moe(acc: &mut Acc, h: u64, m: &Moe) -> Result<Ffn, CalcError> {
    let ffn = add_routed_experts(acc, h, (m.experts, m.top_k, m.inter), (0, 0))?;
    if m.bias {
        acc.add(Comp::Router, m.experts)?;
        acc.router_fp32(m.experts)?;
    }
    Ok(ffn)
}

/// LFM2-MoE (`lfm2_moe`): see the module.
pub(super) fn build(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = read_core(r, "lfm2_moe")?;
    let h = c.h;
    let tie = read_tie(r, true, "lfm2_moe")?;
    let attends = lfm2_attention_layers(r, c.n_layers)?;
    let l = r.or("conv_L_cache", 3, "ldg_lfm2_default_conv_l_cache_3")?;
    let conv_bias = r.flag("conv_bias", false, "ldg_no_conv_bias")?;
    let inter = r.req("intermediate_size", "why_size_dense")?;
    let experts = r.req(("experts", "num_local_experts"), "why_count_experts")?;
    let moe = Moe {
        experts,
        top_k: read_top_k(r, experts, None)?,
        inter: r.req(
            ("expert_intermediate", "moe_intermediate_size"),
            "why_size_experts",
        )?,
        bias: r.flag("use_expert_bias", true, "ldg_lfm2_moe_default_expert_bias")?,
    };
    let dense = r.or0("num_dense_layers", 2, "ldg_lfm2_moe_default_dense")?;
    if dense > c.n_layers {
        return Err(CalcError::BadValue {
            key: "num_dense_layers".into(),
            found: Phrase::verbatim(dense.to_string()),
            expected: Phrase::tr("exp_at_most_layers").val("n", c.n_layers),
        });
    }
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for (i, a) in attends.into_iter().enumerate() {
        acc.norms(2, h)?;
        let mixer = if a {
            lfm2_attention(&mut acc, &c)?
        } else {
            short_conv(&mut acc, h, l, conv_bias)?
        };
        let ffn = if (i as u64) < dense {
            add_dense_ffn(&mut acc, h, inter, true, false)?
        } else {
            add_moe(&mut acc, h, &moe)?
        };
        layers.push(Layer { mixer, ffn });
    }
    finish_parts(r, layers, acc, (h, c.vocab, tie), 1)
}

#[cfg(test)]
mod tests {
    use super::super::parse_model_text;
    use crate::base::dtype::Dtype;
    use crate::calc::kv::{per_token, state_bytes};

    /// A small LFM2-MoE: h 64, 4 layers (attention at 1 and 3), 4 heads of 16 with 2 KV heads,
    /// the first two layers dense (96), 4 experts of 16 (top 2) with the expert bias, V 100,
    /// tied.
    const SMALL: &str = r#"{"model_type":"lfm2_moe","hidden_size":64,"num_hidden_layers":4,
        "num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":96,
        "moe_intermediate_size":16,"num_experts":4,"num_experts_per_tok":2,
        "num_dense_layers":2,"use_expert_bias":true,"conv_L_cache":3,
        "layer_types":["conv","full_attention","conv","full_attention"],"vocab_size":100}"#;

    /// Conv: in_proj 3·64·64, conv 64·3, out_proj 64·64 = 16,576. Attention: q, o 2·64·64, k,
    /// v 2·64·32, q/k norms 32 = 12,320.
    const CONV: u64 = 12_288 + 192 + 4_096;
    const ATTN: u64 = 8_192 + 4_096 + 32;
    /// MoE: router 4·64, bias 4, experts 4·3·64·16.
    const MOE: u64 = 256 + 4 + 12_288;

    #[test]
    fn a_small_lfm2_moe_by_hand() {
        let m = parse_model_text(SMALL).ok();
        // 4 layers of 2 norms, 2 conv and 2 attention mixers, 2 dense MLPs 3·64·96, 2 MoEs,
        // the final norm 64 and the tied embedding 100·64.
        let total = 4 * 128 + 2 * CONV + 2 * ATTN + 2 * 18_432 + 2 * MOE + 64 + 6_400;
        assert_eq!(m.as_ref().map(|m| m.params.total), Some(total));
        assert_eq!(m.as_ref().map(|m| m.params.router_fp32), Some(2 * 4));
        assert!(m.as_ref().is_some_and(|m| m.warnings.is_empty()));
        // KV: 2 attention layers of 2 KV heads of 16, K and V, 2 bytes; state: 2 conv layers
        // of (3 − 1)·64 elements, 2 bytes.
        let kv = m.as_ref().and_then(|m| per_token(m, Dtype::Bf16, 1).ok());
        assert_eq!(kv.map(|k| k.bytes.0), Some(2 * 2 * 2 * 16 * 2));
        let st = m.and_then(|m| state_bytes(&m, Dtype::Bf16, 1).ok());
        assert_eq!(st.map(|k| k.bytes.0), Some(2 * 2 * 64 * 2));
        // Without the expert bias: 4 fewer per MoE layer.
        let off = SMALL.replace("\"use_expert_bias\":true", "\"use_expert_bias\":false");
        let t = parse_model_text(&off).map(|m| m.params.total).ok();
        assert_eq!(t, Some(total - 2 * 4));
        let bad = SMALL.replace("\"num_dense_layers\":2", "\"num_dense_layers\":9");
        assert!(matches!(
            parse_model_text(&bad),
            Err(crate::base::error::CalcError::BadValue { key, .. }) if key == "num_dense_layers"
        ));
    }
}
