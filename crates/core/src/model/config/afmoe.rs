//! Arcee AFMoE (`afmoe`, Trinity Nano / Mini / Large), as transformers' `modeling_afmoe.py`
//! and vLLM's `afmoe.py` build it:
//!
//! - per layer four RMSNorms (`4h`: `input_layernorm`, `post_attention_layernorm`,
//!   `pre_mlp_layernorm`, `post_mlp_layernorm`);
//! - gated attention: q, k, v, o without biases (`h·H·d + 2·h·K·d + H·d·h`), an output gate
//!   `gate_proj` `h·H·d` (the attention output times its sigmoid), and `q_norm`, `k_norm` over
//!   the head (`2d`). The layers `layer_types` calls "sliding_attention" attend over the last
//!   `sliding_window` tokens (vLLM's `per_layer_sliding_window`), the others over every token;
//!   without `layer_types`, every `global_attn_every_n_layers`-th layer is full (4 when absent,
//!   `AfmoeConfig`'s default);
//! - the first `num_dense_layers` layers a gated MLP of `intermediate_size` (`3·h·I`); the
//!   others a MoE: the router `gate` `E·h` and its `expert_bias` `E` (both held in float32 by
//!   vLLM), `E` gated experts of `moe_intermediate_size` (`3·h·I_e`), of which a token uses
//!   `num_experts_per_tok`, and a gated shared MLP of `num_shared_experts × I_e`;
//! - the final norm `h`, the embeddings, and the head unless tied.
//!
//! `mup_enabled` scales the embeddings' output by `√h` and stores nothing.

use super::common::{read_core, read_tie, read_top_k};
use super::kit::Parts;
use super::kit::{
    add_attention, add_biased_moe, add_dense_ffn, finish_parts, windowed_attention, Acc, Comp,
    RoutedMoe,
};
use super::reader::Reader;
use super::windows::read_windows;
use crate::base::checked::{add, mul};
use crate::base::error::{CalcError, Phrase};
use crate::model::desc::{Ffn, Layer};

/// Reads the MoE sizes: `num_experts`, `num_experts_per_tok`, `moe_intermediate_size` and
/// `num_shared_experts` (2 when absent, `AfmoeConfig`'s default).
fn read_moe(r: &mut Reader) -> Result<RoutedMoe, CalcError> {
    let experts = r.req(("experts", "num_local_experts"), "why_count_experts")?;
    let top_k = read_top_k(r, experts, None)?;
    let inter = r.req(
        ("expert_intermediate", "moe_intermediate_size"),
        "why_size_experts",
    )?;
    let shared = r.or0(
        ("shared_experts", "num_shared_experts"),
        2,
        "ldg_afmoe_default_shared",
    )?;
    Ok(RoutedMoe {
        experts,
        top_k,
        inter,
        shared,
    })
}

/// One MoE layer: the routed experts with their router and its bias, both kept in fp32, and
/// the shared MLP.
fn add_moe(acc: &mut Acc, h: u64, m: &RoutedMoe) -> Result<Ffn, CalcError> {
    let w = "ovf_router_params";
    let fp32 = add(w, &[mul(w, &[m.experts, h])?, m.experts])?;
    add_biased_moe(acc, h, m, fp32)
}

/// AFMoE (`afmoe`): see the module.
pub(super) fn build(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = read_core(r, "afmoe")?;
    let h = c.h;
    let tie = read_tie(r, false, "afmoe")?;
    let inter = r.req("intermediate_size", "why_size_dense")?;
    let moe = read_moe(r)?;
    let dense = r.or0("num_dense_layers", 1, "ldg_afmoe_default_dense")?;
    if dense > c.n_layers {
        return Err(CalcError::BadValue {
            key: "num_dense_layers".into(),
            found: Phrase::verbatim(dense.to_string()),
            expected: Phrase::tr("exp_at_most_layers").val("n", c.n_layers),
        });
    }
    let windows = read_windows(r, "afmoe", c.n_layers)?;
    r.derived("router_dtype", "fp32", "ldg_afmoe_router_fp32");
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for (i, window) in windows.into_iter().enumerate() {
        acc.norms(4, h)?;
        add_attention(&mut acc, h, c.heads, c.kv, c.hd, c.hd, false, false)?;
        let w = "ovf_attention_params";
        acc.lin(Comp::Attn, mul(w, &[h, c.heads, c.hd])?)?;
        acc.add(Comp::Attn, mul(w, &[2, c.hd])?)?;
        let ffn = if (i as u64) < dense {
            add_dense_ffn(&mut acc, h, inter, true, false)?
        } else {
            add_moe(&mut acc, h, &moe)?
        };
        layers.push(Layer {
            mixer: windowed_attention(c.heads, c.kv, c.hd, window),
            ffn,
        });
    }
    finish_parts(r, layers, acc, (h, c.vocab, tie), 1)
}

#[cfg(test)]
mod tests {
    use super::super::parse_model_text;
    use crate::base::dtype::Dtype;
    use crate::calc::kv::{per_sequence, per_token};

    /// A small AFMoE: h 64, 4 layers (the first dense), 4 heads of 16 with 2 KV heads, a dense
    /// MLP of 96, 4 experts of 16 (top 2) and one shared, a window of 8 on all but every 2nd
    /// layer, V 100, untied.
    const SMALL: &str = r#"{"model_type":"afmoe","hidden_size":64,"num_hidden_layers":4,
        "num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"intermediate_size":96,
        "moe_intermediate_size":16,"num_experts":4,"num_experts_per_tok":2,
        "num_shared_experts":1,"num_dense_layers":1,"global_attn_every_n_layers":2,
        "sliding_window":8,"vocab_size":100,"tie_word_embeddings":false}"#;

    /// Per layer: 4 norms 256; q 64·64, k and v 2·64·32, o 64·64, gate 64·64 = 16,384; q/k
    /// norms 32.
    const ATTN: u64 = 256 + 16_384 + 32;
    /// The MoE: router 4·64 and bias 4, experts 4·3·64·16 = 12,288, shared 3·64·16 = 3,072.
    const MOE: u64 = 260 + 12_288 + 3_072;

    #[test]
    fn a_small_afmoe_by_hand() {
        let m = parse_model_text(SMALL).ok();
        let total = 4 * ATTN + 3 * 64 * 96 + 3 * MOE + 64 + 12_800;
        assert_eq!(m.as_ref().map(|m| m.params.total), Some(total));
        assert_eq!(
            m.as_ref().map(|m| m.params.active),
            Some(total - 3 * 2 * 3 * 64 * 16)
        );
        assert_eq!(m.as_ref().map(|m| m.params.router_fp32), Some(3 * 260));
        assert!(m.as_ref().is_some_and(|m| m.warnings.is_empty()));
        // Per token and layer: 2 KV heads of 16, K and V, 2 bytes = 128.
        let kv = m.as_ref().and_then(|m| per_token(m, Dtype::Bf16, 1).ok());
        assert_eq!(kv.map(|k| k.bytes.0), Some(4 * 128));
        // Layers 0 and 2 slide over 8 tokens, 1 and 3 attend to all: at 100 tokens vLLM holds
        // 8 + 100 + 8 + 100 tokens.
        let seq = m.and_then(|m| per_sequence(&m, Dtype::Bf16, 1, 100).ok());
        assert_eq!(seq.map(|k| k.bytes.0), Some((8 + 100 + 8 + 100) * 128));
    }

    #[test]
    fn layer_types_and_defaults() {
        let listed = SMALL.replace(
            "\"global_attn_every_n_layers\":2",
            r#""layer_types":["full_attention","full_attention","full_attention","sliding_attention"]"#,
        );
        let m = parse_model_text(&listed).ok();
        let windows: Vec<bool> = m
            .iter()
            .flat_map(|m| &m.layers)
            .map(|l| {
                matches!(
                    l.mixer,
                    crate::model::desc::Mixer::Attention {
                        window: Some(8),
                        ..
                    }
                )
            })
            .collect();
        assert_eq!(windows, vec![false, false, false, true]);
        // Without num_shared_experts, AfmoeConfig's 2 shared experts: 3·64·32 per MoE layer.
        let two = SMALL.replace("\"num_shared_experts\":1,", "");
        let base = parse_model_text(SMALL).map(|m| m.params.total).ok();
        let more = parse_model_text(&two).map(|m| m.params.total).ok();
        assert_eq!(more.zip(base).map(|(a, b)| a - b), Some(3 * 3 * 64 * 16));
        let bad = SMALL.replace("\"num_dense_layers\":1", "\"num_dense_layers\":5");
        assert!(matches!(
            parse_model_text(&bad),
            Err(crate::base::error::CalcError::BadValue { key, .. }) if key == "num_dense_layers"
        ));
    }
}
