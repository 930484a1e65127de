//! Tencent Hunyuan MoE (transformers' `hunyuan_v1_moe`, and the remote-code `hunyuan` that
//! Hunyuan-A13B's and Hunyuan-Large's checkpoints name, `HunYuanMoEV1ForCausalLM`), as vLLM's
//! `hunyuan_v1.py` builds them:
//!
//! - per layer `input_layernorm` and `post_attention_layernorm` (`2h`); attention q, k, v, o
//!   (`h·H·d + 2·h·K·d + H·d·h`, biases on all four with `attention_bias`), with
//!   `query_layernorm` and `key_layernorm` of `d` each (`use_qk_norm`; always in transformers'
//!   `HunYuanMoEV1Attention`); d is `head_dim`, else `attention_head_dim`, else h / H;
//! - cross-layer attention (`use_cla`, every `cla_share_factor`-th layer keeps its own K and V):
//!   the other layers have only q and o (`HunYuanCrossAttention`) and read the K and V of the
//!   layer before them;
//! - with `num_experts` > 1 a MoE: the router `wg` `E·h`, `E` gated experts of
//!   `moe_intermediate_size` (`intermediate_size` when absent), `moe_topk` of them per token,
//!   and with `use_mixed_mlp_moe` a gated shared MLP of `intermediate_size × num_shared_expert`
//!   (transformers' own class always builds one of `intermediate_size`); each of these keys is a
//!   number or one value per layer. Otherwise a gated MLP of `intermediate_size`;
//! - the final norm `h`, the embeddings, and the head unless tied.
//!
//! The router is held in the model's precision by vLLM (a `ReplicatedLinear` without
//! `params_dtype`), so nothing is counted as fp32.

use super::common::{check_kv, not_one_per_layer, read_dims, read_tie, split_heads, Dims};
use super::kit::{
    add_attention, add_dense_ffn, add_mlp, add_routed_experts, finish_parts, full_attention, Acc,
    Comp, Parts,
};
use super::reader::Reader;
use crate::base::checked::mul;
use crate::base::error::{CalcError, Phrase};
use crate::model::desc::{Ffn, Layer, LedgerSource};
use serde_json::Value;

/// A value the config gives once for every layer or as a list of one per layer (`moe_topk`,
/// `num_shared_expert`, `moe_intermediate_size`, `num_experts`); `None` when absent.
fn per_layer(
    r: &mut Reader,
    key: &'static str,
    n_layers: u64,
) -> Result<Option<Vec<u64>>, CalcError> {
    let Some((k, v)) = r.find(key) else {
        return Ok(None);
    };
    let values = match v {
        Value::Array(_) => {
            let list = r.u64_list(key)?;
            if list.len() as u64 != n_layers {
                return Err(not_one_per_layer(k, list.len(), n_layers));
            }
            list
        }
        _ => {
            let n = Reader::to_u64(k, v, 0)?;
            r.note(key, n, LedgerSource::Key(k.to_string()));
            (0..n_layers).map(|_| n).collect()
        }
    };
    Ok(Some(values))
}

/// The value of layer `i` of a list [`per_layer`] read (lists have one entry per layer).
fn at(list: &[u64], i: usize) -> u64 {
    list.get(i).copied().unwrap_or(0)
}

/// The MoE settings per layer.
struct Moe {
    experts: Vec<u64>,
    top_k: Vec<u64>,
    inter: Vec<u64>,
    /// The shared MLP's width per layer (0: none).
    shared: Vec<u64>,
}

/// Reads the MoE settings, or `None` for a dense model (`num_experts` absent or at most 1 in
/// every layer, vLLM's `_is_moe`).
fn read_moe(r: &mut Reader, native: bool, n: u64, inter: u64) -> Result<Option<Moe>, CalcError> {
    let experts = match per_layer(r, "num_experts", n)? {
        Some(e) if e.iter().any(|x| *x > 1) => e,
        _ => {
            r.default_note("num_experts", 1, "ldg_no_n_routed_experts_dense_model");
            return Ok(None);
        }
    };
    let Some(top_k) = per_layer(r, "moe_topk", n)? else {
        return Err(CalcError::MissingKey {
            key: "moe_topk".into(),
            why: Phrase::tr("why_count_active_experts"),
        });
    };
    for (e, k) in experts.iter().zip(&top_k) {
        if k > e {
            return Err(CalcError::BadValue {
                key: "moe_topk".into(),
                found: Phrase::verbatim(k.to_string()),
                expected: Phrase::tr("exp_at_most_experts").val("experts", e),
            });
        }
    }
    let expert_inter = per_layer(r, "moe_intermediate_size", n)?
        .unwrap_or_else(|| (0..n).map(|_| inter).collect());
    // transformers' `HunYuanMoEV1Moe` always builds one shared MLP; vLLM (and the remote code)
    // build `num_shared_expert` of them, stacked into one, with `use_mixed_mlp_moe`.
    let mixed = native || r.flag("use_mixed_mlp_moe", false, "ldg_no_shared_expert")?;
    let shared = if mixed {
        let counts = match per_layer(r, "num_shared_expert", n)? {
            Some(c) => c,
            None if native => (0..n).map(|_| 1).collect(),
            None => {
                return Err(CalcError::MissingKey {
                    key: "num_shared_expert".into(),
                    why: Phrase::tr("why_size_experts"),
                })
            }
        };
        counts
            .iter()
            .map(|c| mul("ovf_shared_expert", &[*c, inter]))
            .collect::<Result<Vec<_>, _>>()?
    } else {
        (0..n).map(|_| 0).collect()
    };
    Ok(Some(Moe {
        experts,
        top_k,
        inter: expert_inter,
        shared,
    }))
}

/// The attention sizes: heads, KV heads, head width.
struct Attn {
    heads: u64,
    kv: u64,
    hd: u64,
    bias: bool,
    qk_norm: bool,
    /// Every how many layers one keeps its own K and V (1: every layer).
    cla: u64,
}

/// Reads the attention: the head width (`head_dim`, `attention_head_dim`, h / H), the KV
/// heads, the biases, the q/k norms and the cross-layer sharing.
fn read_attn(r: &mut Reader, native: bool, h: u64, heads: u64) -> Result<Attn, CalcError> {
    let hd = match r.opt("head_dim")? {
        Some(d) => d,
        None => match r.opt(("head_dim", "attention_head_dim"))? {
            Some(d) => d,
            None => {
                let d = split_heads(h, heads)?;
                r.derived("head_dim", d, "ldg_hidden_size_num_attention_heads_no_head");
                d
            }
        },
    };
    let kv = r.or(
        ("kv_heads", "num_key_value_heads"),
        heads,
        "ldg_no_num_key_value_heads_multi_head",
    )?;
    check_kv(heads, kv, r.key_of("kv_heads"))?;
    let bias = r.flag("attention_bias", false, "ldg_default_no_attention_biases")?;
    let qk_norm = if native {
        r.derived("qk_norm", 2 * hd, "ldg_q_norm_and_k_norm_rmsnorm_weights");
        true
    } else {
        r.flag("use_qk_norm", false, "ldg_default_no_qk_norm")?
    };
    // vLLM's `_get_cla_factor`: `cla_share_factor` only with `use_cla`.
    let cla_on = !native && r.find("use_cla").and_then(|(_, v)| v.as_bool()) == Some(true);
    let cla = if cla_on {
        r.req("cla_share_factor", "why_layer_kinds")?
    } else {
        1
    };
    Ok(Attn {
        heads,
        kv,
        hd,
        bias,
        qk_norm,
        cla,
    })
}

/// One layer's attention: full q, k, v, o, or q and o only where the layer reads the K and V
/// of the layer before it.
fn attention(acc: &mut Acc, h: u64, a: &Attn, own_kv: bool) -> Result<(), CalcError> {
    if own_kv {
        add_attention(acc, h, a.heads, a.kv, a.hd, a.hd, a.bias, a.bias)?;
    } else {
        let w = "ovf_attention_params";
        let q = mul(w, &[a.heads, a.hd])?;
        acc.lin(Comp::Attn, mul(w, &[h, q])?)?;
        acc.lin(Comp::Attn, mul(w, &[q, h])?)?;
        if a.bias {
            acc.add(Comp::Attn, q)?;
            acc.add(Comp::Attn, h)?;
        }
    }
    if a.qk_norm {
        acc.add(Comp::Attn, mul("ovf_attention_params", &[2, a.hd])?)?;
    }
    acc.norms(2, h)
}

/// One layer's feed-forward: the MoE of layer `i`, or the dense MLP.
fn ffn(
    acc: &mut Acc,
    h: u64,
    moe: Option<&Moe>,
    i: usize,
    dense: (u64, bool),
) -> Result<Ffn, CalcError> {
    let Some(m) = moe else {
        return add_dense_ffn(acc, h, dense.0, true, dense.1);
    };
    let shared = at(&m.shared, i);
    let routed = (at(&m.experts, i), at(&m.top_k, i), at(&m.inter, i));
    let ffn = add_routed_experts(acc, h, routed, (u64::from(shared > 0), shared))?;
    if shared > 0 {
        add_mlp(acc, Comp::Mlp, h, shared, true, false)?;
    }
    Ok(ffn)
}

/// Hunyuan MoE (`hunyuan_v1_moe`, or the remote-code `hunyuan` when `native` is false): see
/// the module.
pub(super) fn build(r: &mut Reader, native: bool) -> Result<Parts, CalcError> {
    let Dims {
        h,
        n_layers,
        heads,
        vocab,
    } = read_dims(r, "hunyuan_v1_moe")?;
    let a = read_attn(r, native, h, heads)?;
    let inter = r.req("intermediate_size", "why_size_mlp")?;
    let tie = read_tie(r, false, "hunyuan_v1_moe")?;
    let moe = read_moe(r, native, n_layers, inter)?;
    let mlp_bias = moe.is_none() && r.flag("mlp_bias", false, "ldg_default_no_mlp_biases")?;
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    let mut kv_shared = Vec::new();
    for i in 0..n_layers {
        let own_kv = i.is_multiple_of(a.cla);
        attention(&mut acc, h, &a, own_kv)?;
        if !own_kv {
            kv_shared.push(i as usize);
        }
        let ffn = ffn(&mut acc, h, moe.as_ref(), i as usize, (inter, mlp_bias))?;
        layers.push(Layer {
            mixer: full_attention(a.heads, a.kv, a.hd),
            ffn,
        });
    }
    if !kv_shared.is_empty() {
        let own = n_layers - kv_shared.len() as u64;
        r.derived("kv_layers", own, "ldg_layers_with_kv");
    }
    let mut parts = finish_parts(r, layers, acc, (h, vocab, tie), 1)?;
    parts.kv_shared = kv_shared;
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::super::parse_model_text;

    /// A small remote-code config: h 64, 4 layers, 4 heads of 16 with 2 KV heads, 4 experts of
    /// 32 (top 2), one shared MLP of `intermediate_size` 48, V 100, untied.
    const SMALL: &str = r#"{"model_type":"hunyuan","architectures":["HunYuanMoEV1ForCausalLM"],
        "hidden_size":64,"num_hidden_layers":4,"num_attention_heads":4,"num_key_value_heads":2,
        "attention_head_dim":16,"intermediate_size":48,"moe_intermediate_size":32,
        "num_experts":4,"moe_topk":2,"use_mixed_mlp_moe":true,"num_shared_expert":1,
        "use_qk_norm":true,"vocab_size":100,"tie_word_embeddings":false}"#;

    /// Per layer: norms 2·64 = 128; q 64·64, k and v 2·64·32, o 64·64 = 12,288; q/k norms 32;
    /// router 4·64 = 256; experts 4·3·64·32 = 24,576; shared 3·64·48 = 9,216.
    const LAYER: u64 = 128 + 12_288 + 32 + 256 + 24_576 + 9_216;

    fn total(cfg: &str) -> Option<u64> {
        parse_model_text(cfg).ok().map(|m| m.params.total)
    }

    #[test]
    fn a_small_hunyuan_by_hand() {
        // 4 layers, the final norm 64, the embedding and the head 2·100·64.
        assert_eq!(total(SMALL), Some(4 * LAYER + 64 + 12_800));
        // Per-layer lists read layer by layer: two experts per token in layers 0 and 1, one in
        // 2 and 3, and two shared MLPs in layer 3 (3·64·96 instead of 3·64·48).
        let lists = SMALL
            .replace("\"moe_topk\":2", "\"moe_topk\":[2,2,1,1]")
            .replace("\"num_shared_expert\":1", "\"num_shared_expert\":[1,1,1,2]");
        let m = parse_model_text(&lists).ok();
        assert_eq!(
            m.as_ref().map(|m| m.params.total),
            Some(4 * LAYER + 9_216 + 64 + 12_800)
        );
        // Active: every layer's inactive experts are (E − k)·3·64·32 = 6,144 each.
        let inactive = 2 * (2 * 6_144) + 2 * (3 * 6_144);
        assert_eq!(
            m.map(|m| m.params.active),
            Some(4 * LAYER + 9_216 + 64 + 12_800 - inactive)
        );
        // A list of the wrong length is refused with its key.
        let short = SMALL.replace("\"moe_topk\":2", "\"moe_topk\":[2,2]");
        let err = parse_model_text(&short).err().map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("moe_topk")));
    }

    #[test]
    fn cross_layer_attention_shares_k_and_v() {
        // use_cla with cla_share_factor 2: layers 1 and 3 keep no k and v (2·64·32 each) and
        // read the cache of the layer before.
        let cla = SMALL.replace(
            "\"use_qk_norm\":true",
            "\"use_qk_norm\":true,\"use_cla\":true,\"cla_share_factor\":2",
        );
        let m = parse_model_text(&cla).ok();
        assert_eq!(
            m.as_ref().map(|m| m.params.total),
            Some(4 * LAYER - 2 * 4_096 + 64 + 12_800)
        );
        assert_eq!(m.map(|m| m.kv_shared), Some(vec![1, 3]));
    }

    #[test]
    fn the_native_type_always_has_qk_norms_and_a_shared_mlp() {
        // transformers' HunYuanMoEV1: q/k norms and one shared MLP of intermediate_size whatever
        // the flags say; use_cla is not read.
        let native = SMALL
            .replace("\"hunyuan\"", "\"hunyuan_v1_moe\"")
            .replace("\"use_mixed_mlp_moe\":true,\"num_shared_expert\":1,", "")
            .replace(
                "\"use_qk_norm\":true",
                "\"use_cla\":true,\"cla_share_factor\":2",
            );
        assert_eq!(total(&native), Some(4 * LAYER + 64 + 12_800));
        // A dense config (num_experts absent): a gated MLP of intermediate_size, 3·64·48.
        let dense = SMALL.replace("\"num_experts\":4,", "");
        let per = 128 + 12_288 + 32 + 9_216;
        assert_eq!(total(&dense), Some(4 * per + 64 + 12_800));
    }
}
