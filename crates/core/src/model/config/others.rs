//! Families with their own layouts: DBRX (fine-grained MoE, sizes nested in `attn_config` /
//! `ffn_config`), MPT (ALiBi, no biases) and GPT-J (parallel block, partial rotary).
//!
//! - DBRX: per block two LayerNorms without bias `2h`, Wqkv `h·(h + 2·K·d)`, out_proj `h²`,
//!   router `E·h`, experts w1/v1/w2 `3·E·I·h`; final norm `h`; untied head.
//! - MPT: per block two LayerNorms `2h` (with `no_bias`), Wqkv `3h²`, out_proj `h²`, MLP
//!   `2·h·(r·h)`; final norm `h`; tied head; no position parameters (ALiBi).
//! - GPT-J: per block one LayerNorm `2h`, q/k/v/out `4h²` (no bias), fc_in/fc_out
//!   `2·h·I + I + h`; final LayerNorm `2h`; head `V·h + V` (with a bias). The checkpoint's
//!   `attn.bias` (the causal mask) and `attn.masked_bias` are buffers, not parameters.

use super::common::{
    check_kv, read_dims, read_intermediate, read_max_pos, read_tie, read_top_k, split_heads, Dims,
    FourH,
};
use super::defaults::nested;
use super::kit::{
    add_attention, add_dense_ffn, add_embeddings, add_routed_experts, finish_parts, full_attention,
    Acc, Comp, Parts,
};
use super::reader::Reader;
use crate::base::checked::{add, mul};
use crate::base::error::CalcError;
use crate::model::desc::Layer;
use serde_json::{Map, Value};

/// A nested part (`attn_config`) as an object (empty when absent).
fn part<'a>(
    root: &'a Map<String, Value>,
    key: &str,
    empty: &'a Map<String, Value>,
) -> &'a Map<String, Value> {
    root.get(key).and_then(Value::as_object).unwrap_or(empty)
}

/// DBRX.
pub(super) fn dbrx(r: &mut Reader) -> Result<Parts, CalcError> {
    let Dims {
        h,
        n_layers: nl,
        heads,
        vocab,
    } = read_dims(r, "dbrx")?;
    let tie = read_tie(r, false, "dbrx")?;
    let root = r.root();
    let empty = Map::new();
    let class = r.primary_class();
    let mut a = Reader::new(part(root, "attn_config", &empty), root)
        .with_classes(nested(class, "attn_config"), None);
    let kv = a.req(("kv_heads", "kv_n_heads"), "why_size_attention")?;
    check_kv(heads, kv, Some("attn_config.kv_n_heads"))?;
    let mut f = Reader::new(part(root, "ffn_config", &empty), root)
        .with_classes(nested(class, "ffn_config"), None);
    let inter = f.req(
        ("expert_intermediate", "intermediate_size"),
        "why_size_experts",
    )?;
    let experts = f.req(("experts", "num_local_experts"), "why_count_experts")?;
    let top_k = read_top_k(&mut f, experts, None)?;
    r.ledger.extend(a.ledger);
    r.ledger.extend(f.ledger);
    let hd = split_heads(h, heads)?;
    let w = "ovf_attention_params";
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for _ in 0..nl {
        acc.norms(2, h)?;
        acc.lin(
            Comp::Attn,
            mul(w, &[h, add(w, &[h, mul(w, &[2, kv, hd])?])?])?,
        )?;
        acc.lin(Comp::Attn, mul(w, &[h, h])?)?;
        layers.push(Layer {
            mixer: full_attention(heads, kv, hd),
            ffn: add_routed_experts(&mut acc, h, (experts, top_k, inter), (0, 0))?,
        });
    }
    finish_parts(r, layers, acc, (h, vocab, tie), 1)
}

/// MPT.
pub(super) fn mpt(r: &mut Reader) -> Result<Parts, CalcError> {
    let Dims {
        h,
        n_layers: nl,
        heads,
        vocab,
    } = read_dims(r, "mpt")?;
    let ratio = r.or(
        "expansion_ratio",
        4,
        "ldg_no_intermediate_size_4_x_hidden_size",
    )?;
    let no_bias = r.flag("no_bias", true, "ldg_default_no_mlp_biases")?;
    let tie = read_tie(r, true, "mpt")?;
    let hd = split_heads(h, heads)?;
    let inter = mul("ovf_intermediate", &[ratio, h])?;
    let bias = !no_bias;
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for _ in 0..nl {
        let norm = if bias { 4 } else { 2 };
        acc.norms(norm, h)?;
        add_attention(&mut acc, h, heads, heads, hd, hd, bias, bias)?;
        layers.push(Layer {
            mixer: full_attention(heads, heads, hd),
            ffn: add_dense_ffn(&mut acc, h, inter, false, bias)?,
        });
    }
    acc.add(Comp::Norms, if bias { 2 * h } else { h })?;
    add_embeddings(r, &mut acc, vocab, h, tie)?;
    r.derived(
        "position_embeddings",
        0,
        "ldg_bloom_uses_alibi_no_position_parameters",
    );
    let max_pos = read_max_pos(r)?;
    Ok(Parts::new(layers, acc, h, vocab, tie, max_pos))
}

/// GPT-J.
pub(super) fn gptj(r: &mut Reader) -> Result<Parts, CalcError> {
    let Dims {
        h,
        n_layers: nl,
        heads,
        vocab,
    } = read_dims(r, "gptj")?;
    let inter = read_intermediate(r, h, FourH::Derived, "ldg_n_inner_is_null_4_x_n")?;
    let tie = read_tie(r, false, "gptj")?;
    let hd = split_heads(h, heads)?;
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for _ in 0..nl {
        acc.norms(2, h)?;
        add_attention(&mut acc, h, heads, heads, hd, hd, false, false)?;
        layers.push(Layer {
            mixer: full_attention(heads, heads, hd),
            ffn: add_dense_ffn(&mut acc, h, inter, false, true)?,
        });
    }
    acc.add(Comp::LmHead, vocab)?; // lm_head bias
    r.derived("attention_mask_buffers", 0, "ldg_gptj_mask_buffers");
    finish_parts(r, layers, acc, (h, vocab, tie), 2)
}
