//! DeepSeek-V2/V3 (and Kimi-K2, A.X K1): multi-head latent attention plus DeepSeekMoE.
//!
//! Attention per layer: q (`h·H·(d_nope + d_rope)`, or with `q_lora_rank` r_q:
//! `h·r_q + r_q + r_q·H·(d_nope + d_rope)`), kv_a_proj_with_mqa `h·(r_kv + d_rope)`,
//! kv_a_layernorm `r_kv`, kv_b_proj `r_kv·H·(d_nope + d_v)`, o_proj `H·d_v·h`.
//! Layers before `first_k_dense_replace` (and off `moe_layer_freq`) are dense (`3·h·I`); the
//! others have a router `E·h` (+ `E` correction bias with `topk_method = noaux_tc`), routed
//! experts `E·3·h·I_e` and shared experts `3·h·(n_shared·I_e)`. Multi-token-prediction modules
//! (`num_nextn_predict_layers`) are counted in `other` and `mtp` as the checkpoint stores them:
//! one MoE decoder layer + enorm + hnorm + eh_proj `2h·h` + shared_head.norm each, plus their
//! own copies of the embedding and head `2·V·h` (the model card's 671B is the main model; the
//! Hub's 684,489,830,400 is the checkpoint). A.X K1 (`axk1`) is DeepSeek-V3's layout with an
//! RMSNorm `h` after every layer's MLP.

use super::common::{read_max_pos, read_tie, read_top_k};
use super::kit::{
    add_dense_ffn, add_embeddings, add_mlp, add_mtp_modules, add_routed_experts, Acc, Comp,
    MtpHeads, Parts,
};
use super::reader::Reader;
use crate::base::checked::{add, mul};
use crate::base::error::{CalcError, Phrase};
use crate::model::desc::{Ffn, Layer, Mixer};

/// The sizes read from the config.
struct Dims {
    h: u64,
    n_layers: u64,
    vocab: u64,
    heads: u64,
    q_lora: Option<u64>,
    kv_lora: u64,
    nope: u64,
    rope: u64,
    v: u64,
    inter: u64,
    moe_inter: u64,
    experts: u64,
    shared: u64,
    top_k: u64,
    first_dense: u64,
    freq: u64,
    corr_bias: bool,
}

fn layer(acc: &mut Acc, d: &Dims, moe: bool) -> Result<Ffn, CalcError> {
    let w = "ovf_attention_params";
    let qk = add(w, &[d.nope, d.rope])?;
    match d.q_lora {
        Some(rq) => {
            acc.lin(Comp::Attn, mul(w, &[d.h, rq])?)?;
            acc.add(Comp::Attn, rq)?;
            acc.lin(Comp::Attn, mul(w, &[rq, d.heads, qk])?)?;
        }
        None => acc.lin(Comp::Attn, mul(w, &[d.h, d.heads, qk])?)?,
    }
    acc.lin(Comp::Attn, mul(w, &[d.h, add(w, &[d.kv_lora, d.rope])?])?)?;
    acc.add(Comp::Attn, d.kv_lora)?;
    acc.lin(
        Comp::Attn,
        mul(w, &[d.kv_lora, d.heads, add(w, &[d.nope, d.v])?])?,
    )?;
    acc.lin(Comp::Attn, mul(w, &[d.heads, d.v, d.h])?)?;
    acc.norms(2, d.h)?;
    if moe {
        let routed = (d.experts, d.top_k, d.moe_inter);
        let ffn = add_routed_experts(acc, d.h, routed, (d.shared, d.moe_inter))?;
        if d.corr_bias {
            // vLLM's `DeepseekV2MoE` allocates `e_score_correction_bias` in fp32.
            acc.add(Comp::Router, d.experts)?;
            acc.router_fp32(d.experts)?;
        }
        let shared_inter = mul("ovf_shared_expert", &[d.shared, d.moe_inter])?;
        if shared_inter > 0 {
            add_mlp(acc, Comp::Mlp, d.h, shared_inter, true, false)?;
        }
        Ok(ffn)
    } else {
        add_dense_ffn(acc, d.h, d.inter, true, false)
    }
}

/// The routed-expert settings of a DeepSeekMoE model (all zero for a dense one).
struct Routing {
    moe_inter: u64,
    shared: u64,
    top_k: u64,
    first_dense: u64,
    freq: u64,
    corr_bias: bool,
}

/// Reads the MoE settings when `experts > 0`: expert width, shared experts, top-k, the dense
/// prefix, the MoE layer frequency, and whether the router has a correction bias.
fn read_routing(r: &mut Reader, fam: &str, experts: u64) -> Result<Routing, CalcError> {
    if experts == 0 {
        return Ok(Routing {
            moe_inter: 0,
            shared: 0,
            top_k: 0,
            first_dense: 0,
            freq: 1,
            corr_bias: false,
        });
    }
    let moe_inter = r.req(
        ("expert_intermediate", "moe_intermediate_size"),
        "why_size_experts",
    )?;
    let shared = r.or0(
        ("shared_experts", "n_shared_experts"),
        0,
        "ldg_no_n_shared_experts_none",
    )?;
    let top_k = read_top_k(r, experts, None)?;
    let first = r.or0(
        "first_k_dense_replace",
        0,
        "ldg_no_first_k_dense_replace_every_layer",
    )?;
    let freq = r.or(
        "moe_layer_freq",
        1,
        "ldg_no_moe_layer_freq_every_layer_after",
    )?;
    let method = r.string("topk_method").map(|(_, s)| s.to_string());
    let v3_router = matches!(fam, "deepseek_v3" | "axk1");
    let corr = method.as_deref() == Some("noaux_tc") || (v3_router && method.is_none());
    if corr {
        r.derived(
            "e_score_correction_bias",
            experts,
            "ldg_topk_method_noaux_tc_one_routing_bias",
        );
    }
    Ok(Routing {
        moe_inter,
        shared,
        top_k,
        first_dense: first,
        freq,
        corr_bias: corr,
    })
}

/// Reads the MLA and model sizes, then the routing (through [`read_routing`]).
fn read_dims(r: &mut Reader, fam: &str) -> Result<Dims, CalcError> {
    let super::common::Dims {
        h,
        n_layers: n,
        heads,
        vocab,
    } = super::common::read_dims(r, fam)?;
    let kv_lora = r.req("kv_lora_rank", "why_size_mla_latent")?;
    let q_lora = r.opt("q_lora_rank")?;
    if q_lora.is_none() {
        r.default_note("q_lora_rank", "none", "ldg_q_lora_rank_is_null_queries_are");
    }
    let nope = r.req("qk_nope_head_dim", "why_size_mla_heads")?;
    let rope = r.req("qk_rope_head_dim", "why_size_mla_heads")?;
    let v = r.req("v_head_dim", "why_size_mla_value_heads")?;
    let inter = r.req("intermediate_size", "why_size_dense")?;
    let experts = r.or0(
        ("experts", "num_local_experts"),
        0,
        "ldg_no_n_routed_experts_dense_model",
    )?;
    let rt = read_routing(r, fam, experts)?;
    Ok(Dims {
        h,
        n_layers: n,
        vocab,
        heads,
        q_lora,
        kv_lora,
        nope,
        rope,
        v,
        inter,
        moe_inter: rt.moe_inter,
        experts,
        shared: rt.shared,
        top_k: rt.top_k,
        first_dense: rt.first_dense,
        freq: rt.freq,
        corr_bias: rt.corr_bias,
    })
}

/// Adds the multi-token-prediction modules (one MLA + MoE decoder layer each, see
/// [`add_mtp_modules`]).
fn add_mtp(
    r: &mut Reader,
    acc: &mut Acc,
    d: &Dims,
    mtp: u64,
    mixer: &Mixer,
) -> Result<(), CalcError> {
    let mut m = Acc::default();
    for _ in 0..mtp {
        let ffn = layer(&mut m, d, d.experts > 0)?;
        m.mtp_layers.push(Layer {
            mixer: mixer.clone(),
            ffn,
        });
    }
    add_mtp_modules(r, acc, m, mtp, (d.vocab, d.h), MtpHeads::OwnCopies)
}

/// Builds a DeepSeek-V2/V3 model.
pub(super) fn build(r: &mut Reader, fam: &str) -> Result<Parts, CalcError> {
    let d = read_dims(r, fam)?;
    let (h, vocab) = (d.h, d.vocab);
    if r.flag(
        "attention_bias",
        false,
        "ldg_deepseek_default_no_attention_biases",
    )? {
        r.warnings.push(Phrase::tr("wrn_mla_bias"));
    }
    let mtp = r.or0(
        ("mtp_layers", "num_nextn_predict_layers"),
        0,
        "ldg_no_num_nextn_predict_layers_no_multi",
    )?;
    let tie = read_tie(r, false, fam)?;

    let mut acc = Acc::default();
    let mixer = Mixer::Mla {
        num_heads: d.heads,
        kv_lora_rank: d.kv_lora,
        q_lora_rank: d.q_lora,
        qk_nope_head_dim: d.nope,
        qk_rope_head_dim: d.rope,
        v_head_dim: d.v,
    };
    let mut layers = Vec::new();
    // A.X K1: a post_mlp_layernorm after every layer's MLP, stored for the dense layer too
    // (AXK1PreTrainedModel ignores that one on load; the checkpoint keeps it).
    let post_mlp = fam == "axk1";
    if post_mlp {
        r.derived("post_mlp_layernorm", d.n_layers, "ldg_axk1_post_mlp_norm");
    }
    for i in 0..d.n_layers {
        let moe = d.experts > 0 && i >= d.first_dense && i.is_multiple_of(d.freq);
        let ffn = layer(&mut acc, &d, moe)?;
        if post_mlp {
            acc.norms(1, h)?;
        }
        layers.push(Layer {
            mixer: mixer.clone(),
            ffn,
        });
    }
    acc.add(Comp::Norms, h)?;
    add_embeddings(r, &mut acc, vocab, h, tie)?;
    if mtp > 0 {
        add_mtp(r, &mut acc, &d, mtp, &mixer)?;
    }
    let max_pos = read_max_pos(r)?;
    Ok(Parts::new(layers, acc, h, vocab, tie, max_pos))
}
