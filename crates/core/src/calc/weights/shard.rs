//! One GPU's share of the weights under tensor parallelism of degree `t` ([`per_gpu`], the one
//! rule for every caller): attention heads, MLP and expert matrices, embeddings and lm_head are
//! split `t` ways (rounded up); norms, routers, learned position embeddings, MLA's
//! down-projections and a latent MoE's projections are replicated; past the KV heads each GPU also
//! holds a whole K and V head; a safetensors index's surplus over the class rule is split evenly.

use super::bytes::{bytes_of, is_plain, split, with_fp32, WeightBytes};
use crate::base::checked::{add, mul};
use crate::base::derivation::{bytes_text, group, Derivation, Source, Term};
use crate::base::error::CalcError;
use crate::base::expr::Expr;
use crate::base::units::Bytes;
use crate::calc::tp::{check_model, group_padding};
use crate::model::{Ffn, Mixer, ModelDesc, WeightFormat};

/// Parameters one GPU holds beyond an even `1/tp` share under tensor parallelism, as vLLM
/// lays the model out (see [`per_gpu`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Replicated {
    /// MLA down-projections `q_a_proj` (`h·r_q`) and `kv_a_proj_with_mqa` (`h·(r_kv + d_rope)`):
    /// linear weight matrices, replicated (`ReplicatedLinear` / fused `qkv_a_proj` with TP
    /// disabled).
    mla_linear: u64,
    /// Their layer norms `q_a_layernorm` (`r_q`) and `kv_a_layernorm` (`r_kv`).
    mla_norms: u64,
    /// A latent MoE's projections `fc1_latent_proj` (`h·L`) and `fc2_latent_proj` (`L·h`) per
    /// MoE layer: linear weight matrices, replicated (`ReplicatedLinear`, Nemotron 3 Super).
    moe_latent: u64,
    /// Extra K/V projection elements when `tp` exceeds the KV heads: per such layer
    /// `h·(d_k + d_v) − ⌈h·(d_k + d_v)·K / tp⌉` (each GPU holds one whole K and V head).
    kv_extra: u64,
    /// Mamba-2 `in_proj` rows of the groups padded to `tp` when `tp` does not divide
    /// `n_groups`: per such layer `⌈padding × 2N·h / tp⌉` (`MambaMixer2` sizes its
    /// column-parallel `in_proj` and `conv1d` for the padded groups).
    group_linear: u64,
    /// The same groups' conv1d weight and bias rows: `⌈padding × 2N·(K + biases) / tp⌉`.
    group_other: u64,
}

impl Replicated {
    /// Elements one GPU holds beyond its share because heads or groups are padded (`X`):
    /// the extra K/V heads and Mamba-2's padded groups.
    fn padded(&self) -> u64 {
        self.kv_extra
            .saturating_add(self.group_linear)
            .saturating_add(self.group_other)
    }
    /// The padded linear elements, stored like the attention matrices.
    fn padded_linear(&self) -> u64 {
        self.kv_extra.saturating_add(self.group_linear)
    }
}

/// What one GPU holds whole, beyond its share (see [`Replicated`]).
fn replicated(m: &ModelDesc, tp: u64) -> Result<Replicated, CalcError> {
    let o = "ovf_params";
    let h = m.hidden_size;
    let mut r = Replicated::default();
    // Every layer holding weights (`ModelDesc::weight_layers`: the MTP modules' layers too when
    // they are loaded, their MLA down-projections replicated like the model's; and a layer that
    // reads another layer's KV cache, which still holds its own K/V projections).
    for l in m.weight_layers() {
        match l.mixer {
            Mixer::Attention {
                kv_heads,
                head_dim,
                v_head_dim,
                ..
            } if kv_heads < tp => {
                let per_head = mul("ovf_kv_projection", &[h, add(o, &[head_dim, v_head_dim])?])?;
                let share = mul("ovf_kv_projection", &[per_head, kv_heads])?.div_ceil(tp);
                r.kv_extra = add(o, &[r.kv_extra, per_head.saturating_sub(share)])?;
            }
            Mixer::Ssm {
                groups: Some(g), ..
            } if group_padding(&g, tp) > 0 => {
                let pad = group_padding(&g, tp);
                let extra = |per: u64| mul(o, &[pad, per]).map(|e| e.div_ceil(tp));
                r.group_linear = add(o, &[r.group_linear, extra(g.linear_elems)?])?;
                r.group_other = add(o, &[r.group_other, extra(g.other_elems)?])?;
            }
            Mixer::Mla {
                kv_lora_rank,
                q_lora_rank,
                qk_rope_head_dim,
                ..
            } if tp > 1 => {
                let kv_a = mul(o, &[h, add(o, &[kv_lora_rank, qk_rope_head_dim])?])?;
                let q_a = mul(o, &[h, q_lora_rank.unwrap_or(0)])?;
                r.mla_linear = add(o, &[r.mla_linear, kv_a, q_a])?;
                r.mla_norms = add(o, &[r.mla_norms, kv_lora_rank, q_lora_rank.unwrap_or(0)])?;
            }
            _ => {}
        }
        if let Ffn::Moe {
            latent: Some(lw), ..
        } = l.ffn
        {
            if tp > 1 {
                r.moe_latent = add(o, &[r.moe_latent, mul(o, &[2, h, lw])?])?;
            }
        }
    }
    Ok(r)
}

/// One GPU's parameters by storage class: each class's sharded elements (split `tp` ways,
/// rounded up) and the elements held whole.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Share {
    /// Sharded quantized elements `S_q` (the decoder matrices at the format's bits).
    q_sharded: u64,
    /// Quantized elements held whole `R_q` (MLA down-projections, extra K/V heads and Mamba-2's
    /// padded `in_proj` rows, when attention is quantized).
    q_whole: u64,
    /// Sharded other elements `S_o` (at the base precision).
    o_sharded: u64,
    /// Other elements held whole `R_o` (norms, routers, position embeddings, MLA norms, Mamba-2's
    /// padded conv1d rows, and the MLA down-projections, extra K/V heads and padded `in_proj`
    /// rows when attention is not quantized).
    o_whole: u64,
    /// What was replicated, for the derivation's terms.
    repl: Replicated,
}

impl Share {
    /// Quantized elements on one GPU: `⌈S_q / tp⌉ + R_q`.
    fn q(&self, tp: u64) -> Result<u64, CalcError> {
        add("ovf_params", &[self.q_sharded.div_ceil(tp), self.q_whole])
    }
    /// Other elements on one GPU: `⌈S_o / tp⌉ + R_o`.
    fn rest(&self, tp: u64) -> Result<u64, CalcError> {
        add("ovf_params", &[self.o_sharded.div_ceil(tp), self.o_whole])
    }
}

/// One GPU's share of the parameters in format `f` under tensor parallelism `tp`, the
/// replicated parts kept in their own storage class: MLA down-projections are quantized with
/// the decoder matrices, their norms are not; the extra K/V heads and Mamba-2's padded
/// `in_proj` rows are quantized only when attention is, its padded conv1d rows never.
fn share(m: &ModelDesc, f: &WeightFormat, tp: u64) -> Result<Share, CalcError> {
    let o = "ovf_params";
    let (q, repl, other) = split(m, f);
    let r = replicated(m, tp)?;
    // Attention matrices are in the quantized class unless the format is plain or only the
    // routed experts are quantized.
    let attn_q = !is_plain(f) && !f.experts_only && q > 0;
    let whole_linear = add(o, &[r.mla_linear, r.moe_latent])?;
    let (q_whole, o_whole) = if attn_q {
        (whole_linear.min(q), r.mla_norms.min(other))
    } else {
        (0, add(o, &[whole_linear, r.mla_norms])?.min(other))
    };
    let (pad_q, pad_o) = if attn_q {
        (r.padded_linear(), r.group_other)
    } else {
        (0, r.padded())
    };
    Ok(Share {
        q_sharded: q - q_whole,
        q_whole: add(o, &[q_whole, pad_q])?,
        o_sharded: other - o_whole,
        o_whole: add(o, &[o_whole, repl, pad_o])?,
        repl: r,
    })
}

/// The one rule for a GPU's share of the weights, as vLLM lays a model out under tensor
/// parallelism of degree `tp` (`ColumnParallelLinear`, `RowParallelLinear`,
/// `QKVParallelLinear`, `VocabParallelEmbedding`/`ParallelLMHead`, `FusedMoE`):
///
/// * split `tp` ways (rounded up): attention heads (q/k/v/o, MLA's `q_b_proj`/`kv_b_proj`,
///   per-head sinks), dense MLPs and shared experts, every routed expert's matrices, SSM
///   projections, the token embedding and lm_head (vocab-parallel);
/// * held whole on every GPU: norms, MoE routers (`gate`, with DeepSeek's correction bias),
///   learned position embeddings, MLA's down-projections `q_a_proj` and `kv_a_proj_with_mqa`
///   (`ReplicatedLinear`, or the fused `qkv_a_proj` with TP disabled) with their layer norms,
///   and a latent MoE's `fc1_latent_proj` and `fc2_latent_proj` (`ReplicatedLinear`);
/// * when `tp` exceeds a layer's KV heads, one whole K and V head per GPU;
/// * when `tp` does not divide a Mamba-2 layer's `n_groups`, the groups padded to `tp`
///   (`MambaMixer2`'s `in_proj` and `conv1d` rows for them, split `tp` ways).
///
/// Each class keeps its own bytes per element (gpt-oss's MXFP4 experts, its bf16 attention).
/// The degree is checked first by the one TP rule ([`check_model`]). Not modelled (under
/// 0.01 % of the bytes): per-head q/k norms (Qwen3, Gemma 3) and row-parallel output biases,
/// which vLLM also replicates, and the vocabulary padding to a multiple of 64.
pub fn per_gpu(m: &ModelDesc, f: &WeightFormat, tp: u64) -> Result<(Bytes, Derivation), CalcError> {
    check_model(m, tp)?;
    let s = share(m, f, tp)?;
    // Routers are held whole on every GPU: each holds every fp32 one.
    let fp32 = m.loaded_params().router_fp32;
    let bytes = bytes_of(s.q(tp)?, s.rest(tp)?, fp32, f)?;
    Ok((Bytes(bytes), share_derivation(f, tp, &s, fp32, bytes)?))
}

/// The derivation of [`per_gpu`]: each class's share and what is replicated.
fn share_derivation(
    f: &WeightFormat,
    tp: u64,
    s: &Share,
    fp32: u64,
    bytes: u64,
) -> Result<Derivation, CalcError> {
    let whole = add("ovf_params", &[s.q_whole, s.o_whole])?.saturating_sub(s.repl.padded());
    let base_bits = if is_plain(f) {
        f.dtype.bits()
    } else {
        f.base.bits().max(16)
    };
    let e = share_expr(f, tp, s, whole, base_bits);
    let mut terms = share_terms(tp, s, whole)?;
    let e = with_fp32(e, f, fp32, &mut terms);
    Ok(Derivation {
        result: bytes_text(Bytes(bytes), false),
        terms,
        notes: vec!["note_tp_weights".into()],
        ..Derivation::of("mem_weights_per_gpu", &e)
    })
}

/// The inputs of [`share_derivation`]: `TP`, `S`, `R`, `X`, and the replicated MLA
/// down-projections and MoE latent projections where there are any.
fn share_terms(tp: u64, s: &Share, whole: u64) -> Result<Vec<Term>, CalcError> {
    let mut terms = vec![
        Term::new(
            "TP",
            "term_tp",
            tp.to_string(),
            "",
            Source::User("tp".into()),
        ),
        Term::new(
            "S",
            "term_params_sharded",
            group(add("ovf_params", &[s.q_sharded, s.o_sharded])?),
            "",
            Source::Derived("ldg_tp_sharded_parts".into()),
        ),
        Term::new(
            "R",
            "term_params_replicated",
            group(whole),
            "",
            Source::Derived("ldg_tp_replicated_parts".into()),
        ),
        Term::new(
            "X",
            "term_kv_heads_replicated",
            group(s.repl.padded()),
            "",
            Source::Derived("ldg_tp_kv_heads_replicated".into()),
        ),
    ];
    if s.repl.mla_linear > 0 {
        terms.push(Term::new(
            "R_mla",
            "term_mla_down_projections",
            group(add("ovf_params", &[s.repl.mla_linear, s.repl.mla_norms])?),
            "",
            Source::Derived("ldg_tp_mla_replicated".into()),
        ));
    }
    if s.repl.moe_latent > 0 {
        terms.push(Term::new(
            "R_latent",
            "term_moe_latent_replicated",
            group(s.repl.moe_latent),
            "",
            Source::Derived("ldg_tp_moe_latent_replicated".into()),
        ));
    }
    Ok(terms)
}

/// The formula of [`share_derivation`]: `W_gpu = (⌈S / TP⌉ + R + X) × b` for a plain format,
/// `W_gpu = Q(⌈S_q / TP⌉ + R_q) + (⌈S_o / TP⌉ + R_o) × b_base` for a quantized one (`Q`: the
/// quantized bytes of so many elements); `whole` is what every GPU holds, `base_bits` the
/// bits of one unquantized element.
fn share_expr(f: &WeightFormat, tp: u64, s: &Share, whole: u64, base_bits: u64) -> Expr {
    let n = |symbol: &str, v: u64| Expr::sym(symbol, group(v), v);
    let tp = Expr::sym("TP", tp.to_string(), tp);
    let split = |symbol: &str, v: u64| Expr::ceil(Expr::over(n(symbol, v), tp.clone()));
    let b = |symbol: &str| Expr::element_bytes(symbol, base_bits, "B");
    let e = if is_plain(f) {
        let params = [
            split("S", s.o_sharded),
            n("R", whole),
            n("X", s.repl.padded()),
        ];
        Expr::mul([Expr::add(params), b("b")])
    } else {
        let q = Expr::add([split("S_q", s.q_sharded), n("R_q", s.q_whole)]);
        let o = Expr::add([split("S_o", s.o_sharded), n("R_o", s.o_whole)]);
        Expr::add([Expr::Call("Q".into(), vec![q]), Expr::mul([o, b("b_base")])])
    };
    Expr::named("W_gpu", e)
}

/// One GPU's share of an index's exact `total_size` `W`: the class rule's share plus the
/// bytes the index holds beyond the class rule's total (block scales, tensors the config does
/// not describe), split evenly: `W_gpu = W_class,gpu + (W − W_class) / TP` (rounded up).
pub(super) fn index_share(b: Bytes, class: &WeightBytes) -> (Bytes, Derivation) {
    let tp = class.tp.max(1);
    let residual = i128::from(b.0) - i128::from(class.total.0);
    let spread = if residual >= 0 {
        residual.div_euclid(i128::from(tp)) + i128::from(residual.rem_euclid(i128::from(tp)) > 0)
    } else {
        -((-residual).div_euclid(i128::from(tp)))
    };
    let gpu = (i128::from(class.per_gpu.0) + spread).clamp(0, i128::from(b.0));
    let per_gpu = Bytes(u64::try_from(gpu).unwrap_or(b.0));
    let mut d = class.per_gpu_derivation.clone();
    let bytes = |symbol: &str, v: Bytes| Expr::sym(symbol, format!("{} B", group(v.0)), v.0);
    let spread = Expr::over(
        Expr::minus(bytes("W", b), bytes("W_class", class.total)),
        Expr::sym("TP", tp.to_string(), tp),
    );
    d.show(&Expr::named(
        "W_gpu",
        Expr::add([bytes("W_class,gpu", class.per_gpu), spread]),
    ));
    d.result = bytes_text(Bytes(per_gpu.0), false);
    d.terms.extend([
        Term::new(
            "W",
            "term_index_total_size",
            group(b.0),
            "B",
            Source::ConfigKey("metadata.total_size".into()),
        ),
        Term::new(
            "W_class",
            "term_weights_class",
            group(class.total.0),
            "B",
            Source::Derived("weights_bytes".into()),
        ),
        Term::new(
            "W_class,gpu",
            "term_weights_class_gpu",
            group(class.per_gpu.0),
            "B",
            Source::Derived("mem_weights_per_gpu".into()),
        ),
    ]);
    d.notes.push("note_tp_index_residual".into());
    (per_gpu, d)
}

#[cfg(test)]
mod tests {
    use super::super::checkpoint::{checkpoint, with_dtype, with_format};
    use super::super::test_support::llama2;
    use super::*;
    use crate::base::dtype::Dtype;
    use crate::model::config::parse_model_text;

    #[test]
    fn tp_shards_and_replicates() {
        let Some(m) = llama2() else {
            panic!("config did not parse")
        };
        let w = with_dtype(&m, Dtype::Bf16, 2).ok();
        let repl = m.params.norms; // 65 × 4096 norm weights stay whole on each GPU
        let want = ((m.params.total - repl) / 2 + repl) * 2;
        assert_eq!(w.map(|w| w.per_gpu.0), Some(want));
        assert!(with_dtype(&m, Dtype::Bf16, 0).is_err());
        // MQA (1 KV head) on 2 GPUs: each also holds the whole K and V head:
        // extra per layer h·2d − ⌈h·2d·1/2⌉ = h·d.
        let mqa = crate::model::config::parse_model_text(
            r#"{"model_type":"llama","hidden_size":64,"intermediate_size":128,"num_hidden_layers":2,
            "num_attention_heads":4,"num_key_value_heads":1,"vocab_size":10,"torch_dtype":"bfloat16"}"#,
        );
        let Ok(mqa) = mqa else {
            panic!("mqa did not parse")
        };
        let repl = mqa.params.norms;
        let want = ((mqa.params.total - repl) / 2 + repl + 2 * 64 * 16) * 2;
        assert_eq!(
            with_dtype(&mqa, Dtype::Bf16, 2).map(|w| w.per_gpu.0).ok(),
            Some(want)
        );
    }

    fn preset(text: &str) -> ModelDesc {
        parse_model_text(text).unwrap_or_else(|e| panic!("preset parses: {e}"))
    }

    /// Llama-3.1-8B at TP 16 (8 KV heads): each GPU holds 1 K and 1 V head instead of 1/2:
    /// extra per layer = 4,096 × (128 + 128) − 8 × 4,096 × 256 / 16 = 524,288 params.
    /// Per GPU = ⌈(P − norms) / 16⌉ + norms + 32 × 524,288, norms = 65 × 4,096, 2 B each.
    #[test]
    fn kv_heads_beyond_tp_are_replicated() {
        let m = preset(include_str!(
            "../../../../../tests/fixtures/meta-llama__Meta-Llama-3.1-8B.json"
        ));
        let p = m.params.total;
        assert_eq!(p, 8_030_261_248);
        let norms = 65 * 4096;
        let per_gpu = (p - norms).div_ceil(16) + norms + 32 * 524_288;
        assert_eq!(
            with_dtype(&m, Dtype::Bf16, 16).map(|w| w.per_gpu).ok(),
            Some(Bytes(2 * per_gpu))
        );
    }

    /// Weights do not depend on which layers share a KV cache: Gemma 3n E4B (15 of 35 layers
    /// read an earlier layer's cache, 2 KV heads) at TP 4 holds the same bytes per GPU as the
    /// same model with no sharing declared, since every layer keeps its K/V projections.
    #[test]
    fn kv_sharing_changes_no_weight() {
        let m = preset(include_str!(
            "../../../../../tests/fixtures/corpus/google__gemma-3n-E4B-it.json"
        ));
        assert!(!m.kv_shared.is_empty());
        let mut unshared = m.clone();
        unshared.kv_shared.clear();
        for tp in [1, 2, 4, 8] {
            let shared = with_dtype(&m, Dtype::Bf16, tp).map(|w| w.per_gpu);
            assert_eq!(
                shared,
                with_dtype(&unshared, Dtype::Bf16, tp).map(|w| w.per_gpu)
            );
        }
        assert!(with_dtype(&m, Dtype::Bf16, 4).is_ok());
    }

    /// The one TP rule refuses a degree that does not divide the heads, with its sentence.
    #[test]
    fn the_tp_rule_is_checked() {
        let Some(m) = llama2() else {
            panic!("config did not parse")
        };
        assert_eq!(
            with_dtype(&m, Dtype::Bf16, 3).err(),
            crate::calc::tp::check_model(&m, 3).err()
        );
        assert!(matches!(
            checkpoint(&m, 3),
            Err(CalcError::TpDoesNotDivide { tp: 3, heads: 32 })
        ));
        assert!(checkpoint(&m, 0).is_err());
    }

    /// DeepSeek-V3 at TP 8, bf16: every GPU holds the MLA down-projections whole, as vLLM's
    /// `ReplicatedLinear` does. From the config (h 7,168, q_lora_rank 1,536, kv_lora_rank 512,
    /// qk_rope_head_dim 64, 61 layers): per layer q_a 7,168 × 1,536, kv_a 7,168 × (512 + 64)
    /// and their norms 1,536 + 512, in all 15,140,864 params, 923,592,704 over 61 layers. With
    /// the norms and routers, R = that + norms + routers, one GPU holds ⌈(P − R) / 8⌉ + R, and
    /// 2 bytes more per fp32 correction bias (256 experts × 58 MoE layers).
    #[test]
    fn mla_down_projections_are_replicated() {
        let m = preset(include_str!(
            "../../../../../data/presets/deepseek-ai__DeepSeek-V3.json"
        ));
        let (h, rq, rkv, rope, layers) = (7168u64, 1536u64, 512u64, 64u64, 61u64);
        let mla = layers * (h * rq + h * (rkv + rope) + rq + rkv);
        assert_eq!(mla, 923_592_704);
        // What vLLM loads: the checkpoint without the MTP module (skipped unless speculative
        // decoding uses it).
        let lp = m.loaded_params();
        let r = mla + lp.norms + lp.router;
        let p = lp.total;
        assert_eq!(lp.router_fp32, 256 * (61 - 3));
        let want = 2 * ((p - r).div_ceil(8) + r) + 2 * lp.router_fp32;
        let w = with_dtype(&m, Dtype::Bf16, 8).ok();
        assert_eq!(w.as_ref().map(|w| w.per_gpu.0), Some(want));
        // Against an even split of all but norms and routers: 7/8 of the MLA bytes more.
        let even = 2 * ((p - lp.norms - lp.router).div_ceil(8) + lp.norms + lp.router)
            + 2 * lp.router_fp32;
        let extra = w.map_or(0, |w| w.per_gpu.0) - even;
        assert!(extra.abs_diff(2 * mla * 7 / 8) <= 2, "{extra}");
        // The derivation names what is replicated.
        let d = with_dtype(&m, Dtype::Bf16, 8)
            .map(|w| w.per_gpu_derivation)
            .ok();
        assert!(
            d.as_ref().is_some_and(|d| d
                .terms
                .iter()
                .any(|t| t.name_key == "term_mla_down_projections" && t.value == group(mla))),
            "{d:?}"
        );
        // At TP 1 nothing is replicated: the share is the whole.
        let w1 = with_dtype(&m, Dtype::Bf16, 1).ok();
        assert_eq!(w1.as_ref().map(|w| w.per_gpu), w1.as_ref().map(|w| w.total));
    }

    /// gpt-oss (MXFP4 routed experts, bf16 everything else): each class keeps its bytes per
    /// element, so `tp` shares overshoot the total by the replicated bf16 parts copied
    /// `tp − 1` more times (norms and routers, 2 B each), up to rounding (a few bytes per class).
    #[test]
    fn mixed_formats_keep_their_bytes_per_class() {
        let m = preset(include_str!(
            "../../../../../data/presets/openai__gpt-oss-120b.json"
        ));
        assert!(m.weights.experts_only, "{:?}", m.weights);
        for tp in [2u64, 4, 8] {
            let w = checkpoint(&m, tp).unwrap_or_else(|e| panic!("tp {tp}: {e}"));
            let repl = 2 * (m.params.norms + m.params.router);
            let over = (w.per_gpu.0 * tp).saturating_sub(w.total.0);
            let want = (tp - 1) * repl;
            assert!(
                over >= want && over - want <= 4 * tp,
                "tp {tp}: {over} vs {want}"
            );
        }
    }

    /// A safetensors index's exact size: the shares add up to it (plus the replicated parts
    /// copied once more per GPU), and at TP 1 the share is the exact size.
    #[test]
    fn index_size_is_split_with_the_class_rule() {
        let text = r#"{"metadata":{"total_size":16060522496},"weight_map":{"a":"x"}}"#;
        let m = preset(text);
        let b = m.exact_weight_bytes.map_or(0, |b| b.0);
        assert_eq!(b, 16_060_522_496);
        assert_eq!(checkpoint(&m, 1).map(|w| w.per_gpu.0).ok(), Some(b));
        let w4 = checkpoint(&m, 4).map(|w| w.per_gpu.0).ok();
        assert!(w4.is_some_and(|w| w * 4 >= b && w * 4 - b < 16), "{w4:?}");
        // The share's formula and values, as written before formulas rendered themselves.
        let class = with_format(&m, &m.weights, 4).unwrap_or_else(|e| panic!("{e}"));
        let d = checkpoint(&m, 4)
            .map(|w| w.per_gpu_derivation)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.formula, "W_gpu = W_class,gpu + (W − W_class) / TP");
        let want = format!(
            "{} B + ({} B − {} B) / 4",
            group(class.per_gpu.0),
            group(b),
            group(class.total.0)
        );
        assert_eq!(d.substituted, want);
    }
}
