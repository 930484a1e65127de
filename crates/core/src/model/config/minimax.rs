//! MiniMax-Text-01 and MiniMax-M1: transformers' `minimax` (`MiniMaxConfig`), and the
//! remote-code `minimax_text_01` / `minimax_m1` their checkpoints name.
//!
//! Every layer has two RMSNorms, a MoE (router `E·h`, `E` gated experts `3·h·I`; the remote
//! code adds a gated shared MLP `3·h·I` and its `coefficient` `h` when
//! `shared_intermediate_size` > 0) and one of two mixers:
//! * **Lightning attention** (linear): `qkv_proj` `h·3·H·d`, `output_gate` `h·H·d`, an RMSNorm
//!   `H·d`, `out_proj` `H·d·h`, no biases. Its state per sequence is one `d × d` matrix per head,
//!   `H·d·d` elements (vLLM's `linear_attention_state_shape`: `(H / TP, d, d)`), kept in the
//!   model's precision; it has no KV cache.
//! * **Softmax attention**: GQA q/k/v/o without biases (RoPE on `rotary_dim` of the head; no
//!   parameters).
//!
//! Which layer is which: `layer_types` ("linear_attention" / "full_attention", the native
//! form), else `attn_type_list` (0 = lightning, 1 = softmax: the remote code's form, which vLLM
//! also reads), else `MiniMaxConfig`'s default (softmax at even layers). The remote classes have
//! no default: their configs must list the layers.
//!
//! The lightning layers' decay and slope tables (`slope_rate`, `query_decay`, `key_decay`,
//! `diagonal_decay`) are buffers computed from the config, not parameters; the released
//! checkpoints store none of them. The released checkpoints keep the routers in fp32 (their
//! index's `total_size` is 2 bytes per parameter plus 2 more per router weight), and vLLM
//! allocates them and the shared MLP's `coefficient` in fp32 (`ParamBreakdown::router_fp32`).

use super::common::{kind_per_layer, not_one_per_layer, read_core, read_tie};
use super::kit::{finish_parts, Acc, Comp, Parts};
use super::qwen3_next::{read_shared_moe, shared_moe, SharedMoe};
use super::reader::Reader;
use super::ssm::attention;
use crate::base::checked::{add, mul};
use crate::base::error::{shorten, CalcError, Phrase};
use crate::model::desc::{Layer, Mixer};
use serde_json::Value;

/// One lightning (linear) attention mixer of `heads` heads of width `hd` in a model of width
/// `h` (`MiniMaxLightningAttention`).
fn lightning(acc: &mut Acc, h: u64, heads: u64, hd: u64) -> Result<Mixer, CalcError> {
    let w = "ovf_ssm_params";
    let inner = mul(w, &[heads, hd])?;
    acc.lin(Comp::Ssm, mul(w, &[h, 3, inner])?)?;
    acc.lin(Comp::Ssm, mul(w, &[h, inner])?)?;
    acc.lin(Comp::Ssm, mul(w, &[inner, h])?)?;
    acc.add(Comp::Ssm, inner)?;
    Ok(Mixer::Ssm {
        state_elems: mul(w, &[inner, hd])?,
        d_inner: inner,
        d_state: hd,
        groups: None,
    })
}

/// Which layers run softmax attention (`true`) rather than lightning attention.
fn softmax_layers(r: &mut Reader, native: bool, n_layers: u64) -> Result<Vec<bool>, CalcError> {
    let names = [("linear_attention", false), ("full_attention", true)];
    if let Some(kinds) = kind_per_layer(r, "layer_types", Some(n_layers), names)? {
        note_softmax(r, &kinds, "ldg_minimax_layer_types");
        return Ok(kinds);
    }
    if let Some((k, v)) = r.find("attn_type_list") {
        let kinds = attn_type_list(k, v, n_layers)?;
        note_softmax(r, &kinds, "ldg_minimax_attn_type_list");
        return Ok(kinds);
    }
    if !native {
        return Err(CalcError::MissingKey {
            key: "attn_type_list".into(),
            why: Phrase::tr("why_minimax_layer_kinds"),
        });
    }
    let kinds: Vec<bool> = (0..n_layers).map(|i| i % 2 == 0).collect();
    note_softmax(r, &kinds, "ldg_minimax_default_alternate");
    Ok(kinds)
}

/// Reads `attn_type_list`: one 0 (lightning) or 1 (softmax) per layer.
fn attn_type_list(k: &str, v: &Value, n_layers: u64) -> Result<Vec<bool>, CalcError> {
    let bad = |found: Phrase| CalcError::BadValue {
        key: k.into(),
        found,
        expected: Phrase::tr("exp_minimax_attn_type"),
    };
    let Value::Array(a) = v else {
        return Err(bad(Phrase::verbatim(shorten(&v.to_string()))));
    };
    if a.len() as u64 != n_layers {
        return Err(not_one_per_layer(k, a.len(), n_layers));
    }
    a.iter()
        .map(|x| match x.as_u64() {
            Some(0) => Ok(false),
            Some(1) => Ok(true),
            _ => Err(bad(Phrase::verbatim(shorten(&x.to_string())))),
        })
        .collect()
}

/// Records how many layers run softmax attention, and how that was read.
fn note_softmax(r: &mut Reader, kinds: &[bool], how: &'static str) {
    let n = kinds.iter().filter(|s| **s).count();
    r.derived("softmax_attention_layers", n, how);
}

/// Reads the MoE sizes: `num_local_experts` experts of `intermediate_size`, top
/// `num_experts_per_tok`; with `shared_intermediate_size` > 0 the remote code adds a shared MLP
/// of `intermediate_size` (`MiniMaxM1MLP`) and its `coefficient` `h`, as wide as the experts
/// whatever the key's value.
fn read_moe(r: &mut Reader) -> Result<SharedMoe, CalcError> {
    let mut m = read_shared_moe(r, ("intermediate_size", "shared_intermediate_size"))?;
    if m.shared > 0 {
        m.shared = m.inter;
        r.derived(
            "shared_intermediate",
            m.inter,
            "ldg_minimax_shared_mlp_width",
        );
    }
    Ok(m)
}

/// MiniMax (`minimax`, `minimax_text_01`, `minimax_m1`; `mt` as written): see the module.
pub(super) fn build(r: &mut Reader, mt: &str) -> Result<Parts, CalcError> {
    let c = read_core(r, "minimax")?;
    let h = c.h;
    let tie = read_tie(r, false, "minimax")?;
    let kinds = softmax_layers(r, mt == "minimax", c.n_layers)?;
    let m = read_moe(r)?;
    r.derived("router_dtype", "fp32", "ldg_minimax_router_fp32");
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for softmax_layer in kinds {
        acc.norms(2, h)?;
        let mixer = if softmax_layer {
            attention(&mut acc, h, (c.heads, c.kv, c.hd), false)?
        } else {
            lightning(&mut acc, h, c.heads, c.hd)?
        };
        let ffn = shared_moe(&mut acc, h, &m)?;
        // vLLM's `MiniMaxText01MoE.gate` and the shared MLP's `coefficient` are fp32
        // `ReplicatedLinear`s, stored so in the checkpoint.
        let coefficient = if m.shared > 0 { h } else { 0 };
        acc.router_fp32(add(
            "ovf_router_params",
            &[mul("ovf_router_params", &[m.experts, h])?, coefficient],
        )?)?;
        layers.push(Layer { mixer, ffn });
    }
    finish_parts(r, layers, acc, (h, c.vocab, tie), 1)
}
