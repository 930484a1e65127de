//! LG EXAONE-MoE (`exaone_moe`: K-EXAONE-236B-A23B, `ExaoneMoEForCausalLM`), as transformers'
//! `modeling_exaone_moe.py` and vLLM's `exaone_moe.py` build it:
//!
//! - per layer two RMSNorms (`2h`: `input_layernorm`, `post_attention_layernorm`, pre-norm);
//!   GQA q, k, v, o (`h·H·d + 2·h·K·d + H·d·h`, biases with `attention_bias`) and `q_norm`,
//!   `k_norm` over the head (`2d`); the layers `layer_types` calls "sliding_attention" attend over
//!   the last `sliding_window` tokens (without `layer_types`, `sliding_window_pattern`: see
//!   `windows.rs`);
//! - the feed-forward that `mlp_layer_types` names ("dense" / "sparse"; else `is_moe_layer`, one
//!   boolean per layer; else the first `first_k_dense_replace` layers dense, 1 when absent): a
//!   gated MLP of `intermediate_size` (`3·h·I`, biases with `mlp_bias`), or a MoE: the router
//!   `gate` `E·h` and its `e_score_correction_bias` `E` (float32 in vLLM), `E` gated experts of
//!   `moe_intermediate_size` (`3·h·I_e`, `num_experts_per_tok` per token) and a gated shared MLP
//!   of `num_shared_experts × I_e` (1 when absent);
//! - the final norm `h`, the embeddings, and the head unless tied;
//! - `num_nextn_predict_layers` multi-token-prediction modules, as the checkpoint stores them
//!   (vLLM's `ExaoneMoeMTP`): `enorm`, `hnorm` and a final norm `3h`, `eh_proj` `2h·h`, and one
//!   decoder layer whose feed-forward is the dense MLP; they reuse the main embedding and head.
//!
//! K-EXAONE-236B-A23B's Hub total, 237,099,669,632, is the main model's 236,571,156,352 plus
//! its MTP module's 528,513,280.

use super::common::{
    kind_per_layer, not_one_per_layer, read_core, read_max_pos, read_tie, read_top_k, Core,
    MLP_LAYER_KINDS,
};
use super::kit::{
    add_attention, add_biased_moe, add_dense_ffn, add_embeddings, add_mtp_modules,
    windowed_attention, Acc, Comp, MtpHeads, Parts, RoutedMoe,
};
use super::reader::Reader;
use super::windows::read_windows;
use crate::base::checked::mul;
use crate::base::error::{shorten, CalcError, Phrase};
use crate::model::desc::{Layer, LedgerSource};
use serde_json::Value;

/// Which layers run a MoE (`true`) rather than the dense MLP.
fn sparse_layers(r: &mut Reader, n: u64) -> Result<Vec<bool>, CalcError> {
    if let Some(sparse) = kind_per_layer(r, "mlp_layer_types", Some(n), MLP_LAYER_KINDS)? {
        return Ok(sparse);
    }
    if let Some((k, v)) = r.find("is_moe_layer") {
        let bad = |found: Phrase| CalcError::BadValue {
            key: k.into(),
            found,
            expected: Phrase::tr("exp_list_booleans"),
        };
        let Value::Array(a) = v else {
            return Err(bad(Phrase::verbatim(shorten(&v.to_string()))));
        };
        if a.len() as u64 != n {
            return Err(not_one_per_layer(k, a.len(), n));
        }
        let kinds = a
            .iter()
            .map(|x| {
                x.as_bool()
                    .ok_or_else(|| bad(Phrase::verbatim(shorten(&x.to_string()))))
            })
            .collect::<Result<Vec<_>, _>>()?;
        r.note(
            "moe_layers",
            kinds.iter().filter(|s| **s).count(),
            LedgerSource::Key(k.to_string()),
        );
        return Ok(kinds);
    }
    let first = r.or0(
        "first_k_dense_replace",
        1,
        "ldg_exaone_moe_default_first_dense",
    )?;
    Ok((0..n).map(|i| i >= first).collect())
}

/// One layer's attention (q, k, v, o and the q/k norms) and its two norms.
fn attention(acc: &mut Acc, c: &Core, bias: bool) -> Result<(), CalcError> {
    acc.norms(2, c.h)?;
    add_attention(acc, c.h, c.heads, c.kv, c.hd, c.hd, bias, bias)?;
    acc.add(Comp::Attn, mul("ovf_attention_params", &[2, c.hd])?)
}

/// The windows of the MTP modules' layers: `mtp_layer_types` when given (vLLM's), else full
/// attention.
fn mtp_windows(
    r: &mut Reader,
    mtp: u64,
    window: Option<u64>,
) -> Result<Vec<Option<u64>>, CalcError> {
    let types = r.str_list("mtp_layer_types")?;
    Ok((0..mtp)
        .map(|i| {
            let t = types.as_ref().and_then(|t| t.get(i as usize));
            if t.is_some_and(|t| t == "sliding_attention") {
                window
            } else {
                None
            }
        })
        .collect())
}

/// EXAONE-MoE (`exaone_moe`): see the module.
pub(super) fn build(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = read_core(r, "exaone_moe")?;
    let h = c.h;
    let tie = read_tie(r, false, "exaone_moe")?;
    let bias = r.flag("attention_bias", false, "ldg_default_no_attention_biases")?;
    let inter = r.req("intermediate_size", "why_size_dense")?;
    let mlp_bias = r.flag("mlp_bias", false, "ldg_default_no_mlp_biases")?;
    let experts = r.req(("experts", "num_local_experts"), "why_count_experts")?;
    let moe = RoutedMoe {
        experts,
        top_k: read_top_k(r, experts, None)?,
        inter: r.req(
            ("expert_intermediate", "moe_intermediate_size"),
            "why_size_experts",
        )?,
        shared: r.or0(
            ("shared_experts", "num_shared_experts"),
            1,
            "ldg_exaone_moe_default_shared",
        )?,
    };
    let sparse = sparse_layers(r, c.n_layers)?;
    let windows = read_windows(r, "exaone_moe", c.n_layers)?;
    r.derived("router_dtype", "fp32", "ldg_exaone_moe_router_fp32");
    let mtp = r.or0(
        ("mtp_layers", "num_nextn_predict_layers"),
        0,
        "ldg_no_num_nextn_predict_layers_no_multi",
    )?;

    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for (moe_layer, window) in sparse.into_iter().zip(windows.iter().copied()) {
        attention(&mut acc, &c, bias)?;
        let ffn = if moe_layer {
            add_biased_moe(&mut acc, h, &moe, moe.experts)?
        } else {
            add_dense_ffn(&mut acc, h, inter, true, mlp_bias)?
        };
        layers.push(Layer {
            mixer: windowed_attention(c.heads, c.kv, c.hd, window),
            ffn,
        });
    }
    acc.add(Comp::Norms, h)?;
    add_embeddings(r, &mut acc, c.vocab, h, tie)?;
    if mtp > 0 {
        let window = windows.iter().flatten().next().copied();
        let mut m = Acc::default();
        for w in mtp_windows(r, mtp, window)? {
            attention(&mut m, &c, bias)?;
            let ffn = add_dense_ffn(&mut m, h, inter, true, mlp_bias)?;
            m.mtp_layers.push(Layer {
                mixer: windowed_attention(c.heads, c.kv, c.hd, w),
                ffn,
            });
        }
        add_mtp_modules(r, &mut acc, m, mtp, (c.vocab, h), MtpHeads::Shared)?;
    }
    let max_pos = read_max_pos(r)?;
    Ok(Parts::new(layers, acc, h, c.vocab, tie, max_pos))
}

#[cfg(test)]
mod tests {
    use super::super::parse_model_text;
    use crate::base::error::CalcError;
    use crate::model::desc::Mixer;

    /// A small EXAONE-MoE: h 64, 4 layers (the first dense), 4 heads of 16 with 2 KV heads, a
    /// dense MLP of 96, 4 experts of 16 (top 2) and one shared, a window of 8 on layers 0–2,
    /// V 100, untied, one MTP module.
    const SMALL: &str = r#"{"model_type":"exaone_moe","hidden_size":64,"num_hidden_layers":4,
        "num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"intermediate_size":96,
        "moe_intermediate_size":16,"num_experts":4,"num_experts_per_tok":2,
        "num_shared_experts":1,"first_k_dense_replace":1,"sliding_window":8,
        "layer_types":["sliding_attention","sliding_attention","sliding_attention","full_attention"],
        "vocab_size":100,"tie_word_embeddings":false,"num_nextn_predict_layers":1}"#;

    /// Attention: 2 norms 128, q and o 2·64·64, k and v 2·64·32, q/k norms 32 = 12,448.
    const ATTN: u64 = 128 + 8_192 + 4_096 + 32;
    const DENSE: u64 = 3 * 64 * 96;
    /// MoE: router 4·64, bias 4, experts 4·3·64·16, shared 3·64·16.
    const MOE: u64 = 260 + 12_288 + 3_072;

    #[test]
    fn a_small_exaone_moe_by_hand() {
        let m = parse_model_text(SMALL).ok();
        let main = 4 * ATTN + DENSE + 3 * MOE + 64 + 12_800;
        // enorm, hnorm, final norm 3·64, eh_proj 2·64·64, one layer with the dense MLP.
        let mtp = 3 * 64 + 2 * 64 * 64 + ATTN + DENSE;
        assert_eq!(m.as_ref().map(|m| m.params.language_model), Some(main));
        assert_eq!(m.as_ref().map(|m| m.params.mtp), Some(mtp));
        assert_eq!(m.as_ref().map(|m| m.params.router_fp32), Some(3 * 4));
        let windows: Vec<Option<u64>> = m
            .iter()
            .flat_map(|m| &m.layers)
            .filter_map(|l| match l.mixer {
                Mixer::Attention { window, .. } => Some(window),
                _ => None,
            })
            .collect();
        assert_eq!(windows, vec![Some(8), Some(8), Some(8), None]);
    }

    #[test]
    fn the_moe_layers_from_each_spelling() {
        let total = |cfg: &str| parse_model_text(cfg).map(|m| m.params.total).ok();
        let want = total(SMALL);
        let listed = SMALL.replace(
            "\"first_k_dense_replace\":1",
            r#""mlp_layer_types":["dense","sparse","sparse","sparse"]"#,
        );
        assert_eq!(total(&listed), want);
        let flags = SMALL.replace(
            "\"first_k_dense_replace\":1",
            r#""is_moe_layer":[false,true,true,true]"#,
        );
        assert_eq!(total(&flags), want);
        // Without any of them, ExaoneMoeConfig's first_k_dense_replace 1.
        assert_eq!(
            total(&SMALL.replace("\"first_k_dense_replace\":1,", "")),
            want
        );
        let key = |cfg: &str| match parse_model_text(cfg) {
            Err(CalcError::BadValue { key, .. }) => key,
            other => panic!("{:?}", other.map(|m| m.params.total)),
        };
        assert_eq!(
            key(&listed.replacen("\"sparse\"", "\"moe\"", 1)),
            "mlp_layer_types"
        );
        assert_eq!(
            key(&flags.replace("[false,true,true,true]", "[false,true]")),
            "is_moe_layer"
        );
        assert_eq!(
            key(&flags.replace("[false,true,true,true]", "[0,1,1,1]")),
            "is_moe_layer"
        );
    }

    #[test]
    fn the_window_pattern_without_layer_types() {
        let windows = |cfg: &str| -> Vec<bool> {
            parse_model_text(cfg)
                .map(|m| {
                    m.layers
                        .iter()
                        .map(|l| {
                            matches!(
                                l.mixer,
                                Mixer::Attention {
                                    window: Some(_),
                                    ..
                                }
                            )
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let types = r#""layer_types":["sliding_attention","sliding_attention","sliding_attention","full_attention"],"#;
        let pattern = SMALL.replace(types, r#""sliding_window_pattern":"LG","#);
        // L G L G, the last layer global whatever the pattern says.
        assert_eq!(windows(&pattern), vec![true, false, true, false]);
        let every = SMALL.replace(types, r#""sliding_window_pattern":2,"#);
        assert_eq!(windows(&every), vec![true, false, true, false]);
        let bad = SMALL.replace(types, r#""sliding_window_pattern":"LXG","#);
        assert!(matches!(
            parse_model_text(&bad),
            Err(CalcError::BadValue { key, .. }) if key == "sliding_window_pattern"
        ));
    }
}
