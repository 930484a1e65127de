//! Cohere2 MoE (`cohere2_moe`: Cohere Labs North-Mini-Code-1.0, Command A+), as transformers'
//! `modeling_cohere2_moe.py` and vLLM's `cohere2_moe.py` build it. Each layer is a parallel
//! block: one norm (`input_layernorm`, an RMSNorm when `rms_norm_eps` is set, else Cohere's
//! LayerNorm; a weight of `h` either way) feeds both the attention and the feed-forward.
//!
//! - Attention: q, k, v, o (`h·H·d + 2·h·K·d + H·d·h`, biases with `attention_bias`), no q/k
//!   norms. The layers `layer_types` calls "sliding_attention" attend over a window, which vLLM
//!   sets to `sliding_window + 1` tokens (the inclusive bound of its Cohere v2 layers; vLLM's
//!   dense Cohere 2, `commandr.py`, keeps `sliding_window`: `windows`' docs); without
//!   `layer_types`, transformers' rule: the first `first_k_dense_replace` layers follow
//!   `prefix_dense_sliding_window_pattern` (1: every one full), the rest
//!   `sliding_window_pattern` (4: every 4th full).
//! - Feed-forward, as `mlp_layer_types` says ("dense" / "sparse"; else the first
//!   `first_k_dense_replace` layers dense, 0 when absent): a gated MLP of
//!   `prefix_dense_intermediate_size` (`intermediate_size` when absent), or a MoE: the router
//!   `E·h` (no bias, no correction bias), `E` gated experts of `intermediate_size`, and with
//!   `num_shared_experts` a gated shared MLP of `num_shared_experts × intermediate_size`.
//! - The final norm `h`, the embeddings, and the head unless tied (tied by default).

use super::common::{kind_per_layer, read_core, read_tie, read_top_k, MLP_LAYER_KINDS};
use super::kit::{
    add_attention, add_dense_ffn, add_mlp, add_routed_experts, finish_parts, windowed_attention,
    Acc, Comp, Parts,
};
use super::reader::Reader;
use crate::base::checked::mul;
use crate::base::error::{CalcError, Phrase};
use crate::model::desc::Layer;

/// Which layers run a MoE (`true`): `mlp_layer_types`, else all but the first `first_dense`.
fn sparse_layers(r: &mut Reader, n: u64, first_dense: u64) -> Result<Vec<bool>, CalcError> {
    Ok(
        kind_per_layer(r, "mlp_layer_types", Some(n), MLP_LAYER_KINDS)?
            .unwrap_or_else(|| (0..n).map(|i| i >= first_dense).collect()),
    )
}

/// Whether each layer slides: `layer_types`, else transformers' two patterns.
fn sliding_layers(r: &mut Reader, n: u64, first_dense: u64) -> Result<Vec<bool>, CalcError> {
    let kinds = [("sliding_attention", true), ("full_attention", false)];
    if let Some(sliding) = kind_per_layer(r, "layer_types", Some(n), kinds)? {
        return Ok(sliding);
    }
    let prefix = r.or(
        "prefix_dense_sliding_window_pattern",
        1,
        "ldg_cohere2_moe_default_prefix_pattern",
    )?;
    let every = r.or(
        "sliding_window_pattern",
        4,
        "ldg_cohere2_moe_default_pattern_4",
    )?;
    Ok((0..n)
        .map(|i| {
            if i < first_dense {
                !(i + 1).is_multiple_of(prefix)
            } else {
                !(i - first_dense + 1).is_multiple_of(every)
            }
        })
        .collect())
}

/// Cohere2 MoE (`cohere2_moe`): see the module.
pub(super) fn build(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = read_core(r, "cohere2_moe")?;
    let h = c.h;
    let tie = read_tie(r, true, "cohere2_moe")?;
    let bias = r.flag("attention_bias", false, "ldg_default_no_attention_biases")?;
    let inter = r.req("intermediate_size", "why_size_experts")?;
    let dense_inter = match r.opt("prefix_dense_intermediate_size")? {
        Some(i) => i,
        None => {
            r.derived(
                "prefix_dense_intermediate_size",
                inter,
                "ldg_cohere2_moe_dense_width",
            );
            inter
        }
    };
    let experts = r.req(("experts", "num_local_experts"), "why_count_experts")?;
    let top_k = read_top_k(r, experts, None)?;
    let shared = r.or0(
        ("shared_experts", "num_shared_experts"),
        0,
        "ldg_no_n_shared_experts_none",
    )?;
    let first_dense = r.or0(
        "first_k_dense_replace",
        0,
        "ldg_no_first_k_dense_replace_every_layer",
    )?;
    let sparse = sparse_layers(r, c.n_layers, first_dense)?;
    let sliding = sliding_layers(r, c.n_layers, first_dense)?;
    let window = match r.limit("sliding_window")? {
        Some(w) => {
            let w = w.saturating_add(1);
            r.derived(
                "sliding_window_tokens",
                w,
                "ldg_cohere2_moe_window_plus_one",
            );
            Some(w)
        }
        None => None,
    };
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for (moe, slides) in sparse.into_iter().zip(sliding) {
        acc.norms(1, h)?;
        add_attention(&mut acc, h, c.heads, c.kv, c.hd, c.hd, bias, bias)?;
        let ffn = if moe {
            let ffn = add_routed_experts(&mut acc, h, (experts, top_k, inter), (shared, inter))?;
            if shared > 0 {
                let width = mul("ovf_shared_expert", &[shared, inter])?;
                add_mlp(&mut acc, Comp::Mlp, h, width, true, false)?;
            }
            ffn
        } else {
            add_dense_ffn(&mut acc, h, dense_inter, true, false)?
        };
        let w = if slides {
            if window.is_none() {
                r.warnings.push(Phrase::tr("wrn_sliding_without_window"));
            }
            window
        } else {
            None
        };
        layers.push(Layer {
            mixer: windowed_attention(c.heads, c.kv, c.hd, w),
            ffn,
        });
    }
    finish_parts(r, layers, acc, (h, c.vocab, tie), 1)
}

#[cfg(test)]
mod tests {
    use super::super::parse_model_text;
    use crate::model::desc::{Ffn, Mixer};

    /// A small Cohere2 MoE: h 64, 5 layers (the first dense, of 96), 4 heads of 16 with 2 KV
    /// heads, 4 experts of 16 (top 2), no shared expert, a window of 7, V 100, tied.
    const SMALL: &str = r#"{"model_type":"cohere2_moe","hidden_size":64,"num_hidden_layers":5,
        "num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"intermediate_size":16,
        "prefix_dense_intermediate_size":96,"num_experts":4,"num_experts_per_tok":2,
        "num_shared_experts":0,"first_k_dense_replace":1,"sliding_window":7,
        "vocab_size":100,"tie_word_embeddings":null,"rms_norm_eps":1e-06}"#;

    /// Per layer: one norm 64, q and o 2·64·64, k and v 2·64·32 = 12,352.
    const ATTN: u64 = 64 + 8_192 + 4_096;

    #[test]
    fn a_small_cohere2_moe_by_hand() {
        let m = parse_model_text(SMALL).ok();
        // The dense MLP 3·64·96; the MoE router 4·64 and experts 4·3·64·16; final norm; tied.
        let total = 5 * ATTN + 3 * 64 * 96 + 4 * (256 + 12_288) + 64 + 6_400;
        assert_eq!(m.as_ref().map(|m| m.params.total), Some(total));
        let kinds: Vec<(bool, Option<u64>)> = m
            .iter()
            .flat_map(|m| &m.layers)
            .map(|l| match l.mixer {
                Mixer::Attention { window, .. } => (matches!(l.ffn, Ffn::Moe { .. }), window),
                _ => (false, None),
            })
            .collect();
        // transformers' rule: layer 0 (dense prefix, pattern 1) full, then every 4th of the
        // rest full; vLLM's window is sliding_window + 1.
        assert_eq!(
            kinds,
            vec![
                (false, None),
                (true, Some(8)),
                (true, Some(8)),
                (true, Some(8)),
                (true, None)
            ]
        );
        // A shared expert adds 3·64·16 per MoE layer.
        let shared = SMALL.replace("\"num_shared_experts\":0", "\"num_shared_experts\":1");
        let t = parse_model_text(&shared).map(|m| m.params.total).ok();
        assert_eq!(t, Some(total + 4 * 3 * 64 * 16));
        let bad = SMALL.replace(
            "\"first_k_dense_replace\":1",
            r#""mlp_layer_types":["dense","moe","sparse","sparse","sparse"]"#,
        );
        assert!(matches!(
            parse_model_text(&bad),
            Err(crate::base::error::CalcError::BadValue { key, .. }) if key == "mlp_layer_types"
        ));
    }

    /// The windows of a model, layer by layer (`None`: full attention).
    fn windows(text: &str) -> Vec<Option<u64>> {
        let m = parse_model_text(text).expect("parses");
        m.layers
            .iter()
            .map(|l| match l.mixer {
                Mixer::Attention { window, .. } => window,
                _ => None,
            })
            .collect()
    }

    /// vLLM adds 1 to the window of Cohere 2 MoE's sliding layers (`cohere2_moe.py`) but not to
    /// dense Cohere 2's (`commandr.py`: `per_layer_sliding_window = config.sliding_window`), so
    /// the same `layer_types` and `sliding_window` give `W + 1` here and `W` there. Dense Cohere
    /// 2 without `layer_types` (Command R7B) has full attention on every 4th layer
    /// (`sliding_window_pattern`, as `Cohere2Config` builds its `layer_types`), not a window on
    /// every layer.
    #[test]
    fn dense_cohere2_keeps_the_window_the_moe_adds_one() {
        let types = r#""layer_types":["sliding_attention","sliding_attention","sliding_attention","full_attention","sliding_attention"]"#;
        let moe = SMALL.replace(
            "\"sliding_window\":7",
            &format!("\"sliding_window\":7,{types}"),
        );
        let dense = r#"{"model_type":"cohere2","hidden_size":64,"num_hidden_layers":5,
            "num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":96,
            "sliding_window":7,"vocab_size":100,TYPES}"#
            .replace("TYPES", types);
        let want = |w: u64| vec![Some(w), Some(w), Some(w), None, Some(w)];
        assert_eq!(windows(&moe), want(8));
        assert_eq!(windows(&dense), want(7));

        let r7b = include_str!(
            "../../../../../tests/fixtures/corpus/CohereForAI__c4ai-command-r7b-12-2024.json"
        );
        let cfg: serde_json::Value = serde_json::from_str(r7b).expect("json");
        let w = cfg["sliding_window"].as_u64().expect("sliding_window");
        let n = cfg["num_hidden_layers"].as_u64().expect("layers");
        let every = cfg["sliding_window_pattern"].as_u64().unwrap_or(4);
        let want: Vec<Option<u64>> = (0..n)
            .map(|i| ((i + 1) % every != 0).then_some(w))
            .collect();
        assert_eq!(windows(r7b), want);
    }
}
