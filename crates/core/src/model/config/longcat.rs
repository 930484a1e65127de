//! Meituan LongCat-Flash (`longcat_flash`; the published checkpoints' configs give no
//! `model_type` and are read by their architecture `LongcatFlashForCausalLM`), as vLLM's
//! `longcat_flash.py` and `longcat_flash_mtp.py` build it.
//!
//! Each of the `num_layers` blocks holds two sublayers and one shortcut MoE:
//! - two MLA attentions (DeepSeek-V2's: `q_a_proj` `h·r_q`, `q_a_layernorm` `r_q`, `q_b_proj`
//!   `r_q·H·(d_nope + d_rope)`, `kv_a_proj_with_mqa` `h·(r_kv + d_rope)`, `kv_a_layernorm`
//!   `r_kv`, `kv_b_proj` `r_kv·H·(d_nope + d_v)`, `o_proj` `H·d_v·h`), each caching its latent;
//! - two dense gated MLPs of `ffn_hidden_size` (`3·h·I` each) and four RMSNorms (`4h`:
//!   `input_layernorm` and `post_attention_layernorm`, two of each);
//! - the MoE: a router `classifier` over `n_routed_experts + zero_expert_num` outputs
//!   (`(E + Z)·h`, plus `E + Z` with `router_bias`) and its `e_score_correction_bias`
//!   (`E + Z`), and `E` gated experts of `expert_ffn_hidden_size` (`3·h·I_e` each). The `Z`
//!   zero-computation experts are identities: the router scores them, no weight is stored.
//!   vLLM holds the classifier and the bias in `router_dtype` (float32 unless the config says
//!   otherwise).
//!
//! Then the final norm `h`, the embeddings and the untied head `2·V·h`, and the
//! multi-token-prediction module the checkpoint stores (`model.mtp.*`, one; vLLM's
//! `LongCatFlashMTP` builds exactly one): `enorm`, `hnorm` and a final norm `3h`, `eh_proj`
//! `2h·h`, one MLA layer with a dense MLP of `ffn_hidden_size` and its two norms (no MoE), and
//! its own embedding `V·h` (it shares the main output head).
//!
//! LongCat-Flash-Chat's Hub total, 561,862,880,256, is the main model's 560,664,980,480 plus
//! this module's 1,197,899,776.

use super::common::{read_max_pos, read_tie, read_top_k};
use super::deepseek::{add_mla, MlaShape};
use super::kit::{add_dense_ffn, add_embeddings, add_mtp_modules, Acc, Comp, MtpHeads, Parts};
use super::reader::{layer_count, Reader};
use crate::base::checked::{add, mul};
use crate::base::error::{CalcError, Phrase};
use crate::model::desc::{Ffn, Layer, LedgerSource};

/// The blocks (`num_layers`, each of two sublayers). `num_hidden_layers`, which transformers'
/// `LongcatFlashConfig` sets to twice `num_layers` (the sublayers) and vLLM would read as the
/// blocks, is accepted only when it agrees with one of the two readings.
fn read_blocks(r: &mut Reader) -> Result<u64, CalcError> {
    let blocks = layer_count("num_layers", r.req("num_layers", "why_count_layers")?)?;
    if let Some(v) = r.root().get("num_hidden_layers").filter(|v| !v.is_null()) {
        let n = Reader::to_u64("num_hidden_layers", v, 1)?;
        if n != blocks && Some(n) != blocks.checked_mul(2) {
            return Err(CalcError::BadValue {
                key: "num_hidden_layers".into(),
                found: Phrase::verbatim(n.to_string()),
                expected: Phrase::tr("exp_longcat_layers")
                    .val("n", blocks)
                    .val("twice", blocks.saturating_mul(2)),
            });
        }
    }
    r.derived("attention_layers", 2 * blocks, "ldg_longcat_sublayers");
    Ok(blocks)
}

/// A width two keys may give: `first` (the one vLLM reads first) or `second`; `Ok(None)` when
/// neither is present, an error naming `second` when the two disagree.
fn one_of_two(
    r: &mut Reader,
    field: &str,
    (first, second): (&'static str, &'static str),
) -> Result<Option<u64>, CalcError> {
    let Some(x) = r.opt((field, first))? else {
        return r.opt((field, second));
    };
    if let Some(v) = r.root().get(second).filter(|v| !v.is_null()) {
        let y = Reader::to_u64(second, v, 1)?;
        if y != x {
            return Err(CalcError::BadValue {
                key: second.into(),
                found: Phrase::verbatim(y.to_string()),
                expected: Phrase::tr("exp_same_as_key")
                    .val("other", first)
                    .val("value", x),
            });
        }
    }
    Ok(Some(x))
}

/// The MLA sizes (`kv_lora_rank`, `q_lora_rank` when the queries are compressed, the head
/// widths) of `heads` heads.
fn read_mla(r: &mut Reader, heads: u64) -> Result<MlaShape, CalcError> {
    let kv_lora = r.req("kv_lora_rank", "why_size_mla_latent")?;
    let q_lora = r.opt("q_lora_rank")?;
    if q_lora.is_none() {
        r.default_note("q_lora_rank", "none", "ldg_q_lora_rank_is_null_queries_are");
    }
    Ok(MlaShape {
        heads,
        q_lora,
        kv_lora,
        nope: r.req("qk_nope_head_dim", "why_size_mla_heads")?,
        rope: r.req("qk_rope_head_dim", "why_size_mla_heads")?,
        v: r.req("v_head_dim", "why_size_mla_value_heads")?,
    })
}

/// The shortcut MoE's sizes.
struct Moe {
    experts: u64,
    zero: u64,
    top_k: u64,
    inter: u64,
    router_bias: bool,
    router_fp32: bool,
}

/// Reads the MoE: `n_routed_experts`, `zero_expert_num`, `moe_topk` (among both kinds),
/// `expert_ffn_hidden_size` (vLLM reads `moe_intermediate_size` first), `router_bias` and
/// `router_dtype`.
fn read_moe(r: &mut Reader) -> Result<Moe, CalcError> {
    let experts = r.req(("routed_experts", "num_local_experts"), "why_count_experts")?;
    let zero = r.or0("zero_expert_num", 0, "ldg_longcat_no_zero_experts")?;
    let scored = add("ovf_expert_params", &[experts, zero])?;
    r.derived("experts", scored, "ldg_longcat_zero_experts");
    let top_k = read_top_k(r, scored, None)?;
    let inter = one_of_two(
        r,
        "expert_intermediate",
        ("moe_intermediate_size", "expert_ffn_hidden_size"),
    )?
    .ok_or_else(|| CalcError::MissingKey {
        key: "expert_ffn_hidden_size".into(),
        why: Phrase::tr("why_size_experts"),
    })?;
    let router_bias = r.flag("router_bias", false, "ldg_longcat_default_no_router_bias")?;
    let router_fp32 = match r.string("router_dtype") {
        Some((k, s)) => {
            let fp32 = matches!(s, "float32" | "fp32");
            r.note("router_dtype", s, LedgerSource::Key(k.to_string()));
            fp32
        }
        None => {
            r.default_note("router_dtype", "float32", "ldg_longcat_router_fp32");
            true
        }
    };
    Ok(Moe {
        experts,
        zero,
        top_k,
        inter,
        router_bias,
        router_fp32,
    })
}

/// One block's MoE: the router over the `E + Z` experts and its correction bias, the `E` gated
/// experts; a token uses at most `top_k` of them (every pick counted as a real expert, the
/// upper bound), the rest are inactive.
fn add_moe(acc: &mut Acc, h: u64, m: &Moe, dense: u64) -> Result<Ffn, CalcError> {
    let w = "ovf_router_params";
    let scored = add(w, &[m.experts, m.zero])?;
    let mut router = add(w, &[mul(w, &[scored, h])?, scored])?;
    if m.router_bias {
        router = add(w, &[router, scored])?;
    }
    acc.add(Comp::Router, router)?;
    if m.router_fp32 {
        acc.router_fp32(router)?;
    }
    let per = mul("ovf_expert_params", &[3, h, m.inter])?;
    acc.lin(Comp::Experts, mul("ovf_expert_params", &[m.experts, per])?)?;
    let used = m.top_k.min(m.experts);
    acc.skip(mul("ovf_expert_params", &[m.experts - used, per])?)?;
    // The block's first dense MLP runs on every token beside the experts: described as the
    // MoE's shared expert, the second MLP as the other sublayer's dense feed-forward.
    Ok(Ffn::Moe {
        experts: m.experts,
        top_k: used,
        expert_intermediate: m.inter,
        shared_experts: 1,
        shared_intermediate: dense,
        gated: true,
        latent: None,
    })
}

/// One MLA sublayer with its two norms and a dense MLP of `inter` (the MLP's description).
fn sublayer(acc: &mut Acc, h: u64, mla: &MlaShape, inter: u64) -> Result<Ffn, CalcError> {
    acc.norms(2, h)?;
    add_mla(acc, h, mla)?;
    add_dense_ffn(acc, h, inter, true, false)
}

/// LongCat-Flash: see the module.
pub(super) fn build(r: &mut Reader) -> Result<Parts, CalcError> {
    let h = r.req("hidden_size", "why_size_model")?;
    let blocks = read_blocks(r)?;
    let heads = r.req("num_attention_heads", "why_size_attention")?;
    let vocab = r.req("vocab_size", "why_size_embeddings")?;
    let mla = read_mla(r, heads)?;
    let dense = one_of_two(
        r,
        "intermediate_size",
        ("ffn_hidden_size", "intermediate_size"),
    )?
    .ok_or_else(|| CalcError::MissingKey {
        key: "ffn_hidden_size".into(),
        why: Phrase::tr("why_size_mlp"),
    })?;
    let moe = read_moe(r)?;
    let tie = read_tie(r, false, "longcat_flash")?;
    let mtp = r.or0(
        ("mtp_layers", "num_nextn_predict_layers"),
        1,
        "ldg_longcat_mtp_default",
    )?;

    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for _ in 0..blocks {
        sublayer(&mut acc, h, &mla, dense)?;
        let ffn = add_moe(&mut acc, h, &moe, dense)?;
        layers.push(Layer {
            mixer: mla.mixer(),
            ffn,
        });
        let ffn = sublayer(&mut acc, h, &mla, dense)?;
        layers.push(Layer {
            mixer: mla.mixer(),
            ffn,
        });
    }
    acc.add(Comp::Norms, h)?;
    add_embeddings(r, &mut acc, vocab, h, tie)?;
    if mtp > 0 {
        let mut m = Acc::default();
        for _ in 0..mtp {
            let ffn = sublayer(&mut m, h, &mla, dense)?;
            m.mtp_layers.push(Layer {
                mixer: mla.mixer(),
                ffn,
            });
        }
        add_mtp_modules(r, &mut acc, m, mtp, (vocab, h), MtpHeads::OwnEmbedding)?;
    }
    let max_pos = read_max_pos(r)?;
    Ok(Parts::new(layers, acc, h, vocab, tie, max_pos))
}

#[cfg(test)]
mod tests {
    use super::super::parse_model_text;
    use crate::base::error::CalcError;

    /// A small LongCat: h 64, 2 blocks, 2 heads, q_lora 32, kv_lora 16, nope 8, rope 8, v 8,
    /// dense MLPs of 96, 4 experts of 16 and 2 zero experts (top 2), V 100, untied, no MTP.
    const SMALL: &str = r#"{"architectures":["LongcatFlashForCausalLM"],"hidden_size":64,
        "num_layers":2,"num_attention_heads":2,"q_lora_rank":32,"kv_lora_rank":16,
        "qk_nope_head_dim":8,"qk_rope_head_dim":8,"v_head_dim":8,"ffn_hidden_size":96,
        "expert_ffn_hidden_size":16,"n_routed_experts":4,"zero_expert_num":2,"moe_topk":2,
        "vocab_size":100,"num_nextn_predict_layers":0}"#;

    /// One MLA: q_a 64·32 + 32, q_b 32·2·16, kv_a 64·24 + 16, kv_b 16·2·16, o 2·8·64 = 6,192.
    const MLA: u64 = 2_048 + 32 + 1_024 + 1_536 + 16 + 512 + 1_024;
    /// A sublayer: two norms 128, the MLA, a dense MLP 3·64·96 = 18,432.
    const SUB: u64 = 128 + MLA + 18_432;
    /// The MoE: router (4 + 2)·64 + 6 bias = 390, experts 4·3·64·16 = 12,288.
    const MOE: u64 = 390 + 12_288;

    #[test]
    fn a_small_longcat_by_hand() {
        let m = parse_model_text(SMALL).ok();
        // 2 blocks of two sublayers and a MoE, the final norm 64, embedding and head 2·100·64.
        let total = 2 * (2 * SUB + MOE) + 64 + 12_800;
        assert_eq!(m.as_ref().map(|m| m.params.total), Some(total));
        // Two of the four experts (3·64·16 = 3,072 each) idle per block.
        assert_eq!(
            m.as_ref().map(|m| m.params.active),
            Some(total - 2 * 2 * 3_072)
        );
        // Four MLA caches: (16 + 8) elements each.
        assert_eq!(m.as_ref().map(|m| m.layers.len()), Some(4));
        // The router and its bias in fp32: 390 per block.
        assert_eq!(m.map(|m| m.params.router_fp32), Some(2 * 390));
    }

    #[test]
    fn the_mtp_module_has_its_own_embedding() {
        let with = SMALL.replace(
            "\"num_nextn_predict_layers\":0",
            "\"num_nextn_predict_layers\":1",
        );
        let m = parse_model_text(&with).ok();
        // enorm, hnorm, final norm 3·64, eh_proj 2·64·64, one sublayer, embedding 100·64.
        let mtp = 3 * 64 + 2 * 64 * 64 + SUB + 100 * 64;
        assert_eq!(m.as_ref().map(|m| m.params.mtp), Some(mtp));
        assert_eq!(m.map(|m| m.mtp_layers.len()), Some(1));
        // Without the key, one module, as the published checkpoints store.
        let absent = SMALL.replace(",\"num_nextn_predict_layers\":0", "");
        assert_eq!(
            parse_model_text(&absent).ok().map(|m| m.params.mtp),
            Some(mtp)
        );
    }

    #[test]
    fn bad_layer_and_width_keys_are_named() {
        let key = |cfg: &str| match parse_model_text(cfg) {
            Err(CalcError::BadValue { key, .. } | CalcError::MissingKey { key, .. }) => key,
            other => panic!("{:?}", other.map(|m| m.params.total)),
        };
        // transformers' num_hidden_layers is the sublayers: 4 agrees, 3 does not.
        let sub = SMALL.replace(
            "\"num_layers\":2",
            "\"num_layers\":2,\"num_hidden_layers\":4",
        );
        assert!(parse_model_text(&sub).is_ok());
        let bad = SMALL.replace(
            "\"num_layers\":2",
            "\"num_layers\":2,\"num_hidden_layers\":3",
        );
        assert_eq!(key(&bad), "num_hidden_layers");
        assert_eq!(key(&SMALL.replace("\"num_layers\":2,", "")), "num_layers");
        let two = SMALL.replace(
            "\"ffn_hidden_size\":96",
            "\"ffn_hidden_size\":96,\"intermediate_size\":80",
        );
        assert_eq!(key(&two), "intermediate_size");
        let none = SMALL.replace("\"expert_ffn_hidden_size\":16,", "");
        assert_eq!(key(&none), "expert_ffn_hidden_size");
        // Top-k counts the zero experts too: 6 is allowed, 7 is not.
        assert!(parse_model_text(&SMALL.replace("\"moe_topk\":2", "\"moe_topk\":6")).is_ok());
        assert_eq!(
            key(&SMALL.replace("\"moe_topk\":2", "\"moe_topk\":7")),
            "moe_topk"
        );
    }
}
