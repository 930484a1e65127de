//! Stored weight bytes: for the checkpoint's own format and for any chosen precision, in
//! total and per GPU under tensor parallelism, each with its derivation.
//!
//! Rules (all integer bytes):
//! * Plain formats (fp32, bf16, fp16, and any format when no quantizable split is known):
//!   `P × bits / 8`, rounded up once.
//! * Quantized formats store the decoder's linear weight matrices `P_q`
//!   ([`ParamBreakdown::linear`](crate::core::model::ParamBreakdown), or only the routed
//!   experts with `experts_only`) at `bits` per element plus, per group of `g` elements, a
//!   scale of `s` bits and (asymmetric int) a zero point of `bits` bits:
//!   `⌈P_q·bits/8⌉ + ⌈⌈P_q/g⌉·(s + z)/8⌉`. Groups are counted over the whole quantized
//!   set, which equals the per-tensor count whenever every row length is a multiple of `g`
//!   (true for real checkpoints). Everything else (embeddings, lm_head, norms, biases,
//!   routers) stays at the base precision (`torch_dtype`; bf16 if that is below 16 bits),
//!   but the routers vLLM keeps in fp32 (`ParamBreakdown::router_fp32`: MiniMax's, GLM-4.5's,
//!   ERNIE 4.5's, the correction biases) add `4 − b` bytes each, on every GPU.
//! * fp8/int8 without blocks: one scale per tensor or per output channel, below 0.01 % of the
//!   bytes, is noted and not counted.
//! * Chosen precisions ([`format_for`]): int4 = 4 bits + fp16 scale + 4-bit zero point per
//!   128 (AWQ style); fp4 = MXFP4 (4 bits + 8-bit e8m0 scale per 32); fp6 = MXFP6 (8-bit
//!   scale per 32); fp8/int8 = 1 B, per-tensor scale not counted.
//! * Tensor parallelism of degree `t` ([`per_gpu`], the one rule for every caller: the vLLM
//!   budget, the report, performance, loading, the planner and `llmcalc model --tp`): the
//!   degree is checked by [`crate::core::calc::tp::check_model`]; attention heads, MLP and
//!   expert matrices, embeddings and lm_head (vocab-parallel) are split `t` ways (rounded up);
//!   norms, routers, learned position embeddings and MLA's down-projections (`q_a_proj`,
//!   `kv_a_proj_with_mqa`, with their norms) and a latent MoE's projections are replicated
//!   on every GPU; when `t` exceeds the
//!   KV heads, each GPU also holds a whole K and V head. Each class keeps its bytes per
//!   element. A safetensors index's exact size adds its surplus over the class rule split
//!   evenly.

use crate::core::base::checked::{add, mul};
use crate::core::base::derivation::{bytes_text, group, Derivation, Source, Term};
use crate::core::base::dtype::Dtype;
use crate::core::base::error::CalcError;
use crate::core::base::units::{fmt_sig, Bytes};
use crate::core::calc::tp::{check_model, group_padding};
use crate::core::model::{Ffn, Mixer, ModelDesc, WeightFormat};

/// Weight bytes, total and per GPU, with the derivation of the total.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightBytes {
    /// Bytes of the whole model in the chosen format.
    pub total: Bytes,
    /// Bytes held by one GPU under tensor parallelism `tp` (== `total` when `tp` = 1).
    pub per_gpu: Bytes,
    /// Tensor-parallel degree used for `per_gpu`.
    pub tp: u64,
    /// Formula, substituted values and result of `total`.
    pub derivation: Derivation,
    /// How `per_gpu` follows from the parameters: what is split across the GPUs and what
    /// each holds whole ([`per_gpu`]).
    pub per_gpu_derivation: Derivation,
}

/// The storage format assumed for a chosen precision `d` (see the module docs); `base` is
/// the precision of the parts that are not quantized.
pub fn format_for(d: Dtype, base: Dtype) -> WeightFormat {
    let base16 = unquantized_dtype(base);
    let mk = |group_size, scale_bits, zero_point, method: &str| WeightFormat {
        dtype: d,
        group_size,
        scale_bits,
        zero_point,
        method: method.to_string(),
        experts_only: false,
        base: base16,
    };
    match d {
        Dtype::Fp32 | Dtype::Bf16 | Dtype::Fp16 => WeightFormat::plain(d),
        Dtype::Fp8 => mk(None, 0, false, "fp8"),
        Dtype::Int8 => mk(None, 0, false, "int8"),
        Dtype::Int4 => mk(Some(128), 16, true, "int4-g128"),
        Dtype::Fp6 => mk(Some(32), 8, false, "mxfp6"),
        Dtype::Fp4 => mk(Some(32), 8, false, "mxfp4"),
    }
}

/// NVFP4: 4 bits + an fp8 scale per 16 elements (the per-tensor fp32 scale is not counted).
pub fn nvfp4(base: Dtype) -> WeightFormat {
    WeightFormat {
        group_size: Some(16),
        method: "nvfp4".into(),
        ..format_for(Dtype::Fp4, base)
    }
}

/// Bytes of `n` elements stored plainly at `bits` per element, rounded up.
fn plain_bytes(n: u64, bits: u64) -> Result<u64, CalcError> {
    Ok(mul("ovf_weight_bits", &[n, bits])?.div_ceil(8))
}

/// Bytes of `n` quantized elements in format `f`: `⌈n·bits/8⌉ + ⌈⌈n/g⌉·(s + z)/8⌉`.
pub fn quantized_bytes(n: u64, f: &WeightFormat) -> Result<u64, CalcError> {
    let bits = f.dtype.bits();
    let data = plain_bytes(n, bits)?;
    let scales = match f.group_size {
        Some(g) if g > 0 => {
            let per = f.scale_bits + if f.zero_point { bits } else { 0 };
            mul("ovf_scale_bits", &[n.div_ceil(g), per])?.div_ceil(8)
        }
        _ => 0,
    };
    add("ovf_weight_bytes", &[data, scales])
}

/// Whether format `f` stores every weight plainly at `f.dtype` (no quantization method, an
/// unknown one, or 16 bits and more): the one test the weight bytes and the roofline's
/// precisions share.
pub fn is_plain(f: &WeightFormat) -> bool {
    f.method.is_empty() || f.method == "none" || f.method == "unknown" || f.dtype.bits() >= 16
}

/// The precision of a checkpoint's unquantized tensors when its base is `base`: `base` itself
/// at 16 bits or more, else bf16. vLLM's `kv_cache_dtype = auto` follows the same rule
/// ([`crate::core::calc::kv::auto_kv_dtype`]).
pub fn unquantized_dtype(base: Dtype) -> Dtype {
    if base.bits() >= 16 {
        base
    } else {
        Dtype::Bf16
    }
}

/// Splits the parameters into (quantized, replicated, other) for format `f`.
fn split(m: &ModelDesc, f: &WeightFormat) -> (u64, u64, u64) {
    let p = &m.loaded_params();
    let q = if is_plain(f) {
        0
    } else if f.experts_only {
        p.expert_linear
    } else {
        p.linear
    };
    let q = q.min(p.total);
    let repl = p
        .norms
        .saturating_add(p.router)
        .saturating_add(p.position_embeddings)
        .min(p.total - q);
    (q, repl, p.total - q - repl)
}

/// Bits per element of the parameters format `f` does not quantize.
fn rest_bits(f: &WeightFormat) -> u64 {
    if is_plain(f) {
        f.dtype.bits()
    } else {
        unquantized_dtype(f.base).bits()
    }
}

/// Bytes of `q` quantized and `rest` other elements in format `f`, `fp32` of the others held
/// in fp32 whatever the format ([`ParamBreakdown::router_fp32`](crate::core::model::ParamBreakdown)):
/// those add `4 − b` bytes each to the `b` of the rest.
fn bytes_of(q: u64, rest: u64, fp32: u64, f: &WeightFormat) -> Result<u64, CalcError> {
    let bits = rest_bits(f);
    let wide = plain_bytes(fp32.min(rest), 32u64.saturating_sub(bits))?;
    let data = if is_plain(f) {
        plain_bytes(rest, bits)?
    } else {
        add(
            "ovf_weight_bytes",
            &[quantized_bytes(q, f)?, plain_bytes(rest, bits)?],
        )?
    };
    add("ovf_weight_bytes", &[data, wide])
}

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
    let base_b = fmt_sig(
        if is_plain(f) {
            f.dtype.bits()
        } else {
            f.base.bits().max(16)
        } as f64
            / 8.0,
    );
    let (formula, substituted) = if is_plain(f) {
        (
            "W_gpu = (⌈S / TP⌉ + R + X) × b".to_string(),
            format!(
                "(⌈{} / {tp}⌉ + {} + {}) × {base_b} B",
                group(s.o_sharded),
                group(whole),
                group(s.repl.padded())
            ),
        )
    } else {
        (
            "W_gpu = Q(⌈S_q / TP⌉ + R_q) + (⌈S_o / TP⌉ + R_o) × b_base".to_string(),
            format!(
                "Q(⌈{} / {tp}⌉ + {}) + (⌈{} / {tp}⌉ + {}) × {base_b} B",
                group(s.q_sharded),
                group(s.q_whole),
                group(s.o_sharded),
                group(s.o_whole)
            ),
        )
    };
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
    let mut d = Derivation {
        title_key: "mem_weights_per_gpu".into(),
        formula,
        substituted,
        result: bytes_text(Bytes(bytes), false),
        terms,
        notes: vec!["note_tp_weights".into()],
        ..Default::default()
    };
    add_fp32_term(&mut d, f, fp32);
    Ok(d)
}

/// Adds the fp32 routers to a weights derivation, when there are any and the rest is
/// narrower: `+ P_32 × (4 − b)` bytes (`b_base` beside quantized weights).
fn add_fp32_term(d: &mut Derivation, f: &WeightFormat, fp32: u64) {
    let bits = rest_bits(f);
    if fp32 == 0 || bits >= 32 {
        return;
    }
    let extra = fmt_sig((32 - bits) as f64 / 8.0);
    let b = if is_plain(f) { "b" } else { "b_base" };
    d.formula.push_str(&format!(" + P_32 × (4 − {b})"));
    d.substituted
        .push_str(&format!(" + {} × {extra} B", group(fp32)));
    d.terms.push(Term::new(
        "P_32",
        "term_fp32_router_params",
        group(fp32),
        "",
        Source::Derived("ldg_router_fp32".into()),
    ));
}

/// The derivation of a plain format's bytes, `P × b`.
fn plain_derivation(f: &WeightFormat, pt: u64, total: u64, src_p: Source) -> Derivation {
    let bits = f.dtype.bits();
    Derivation {
        title_key: "weights_bytes".into(),
        formula: "P × b".into(),
        substituted: format!(
            "{} × {} B",
            group(pt),
            crate::core::base::units::fmt_sig(bits as f64 / 8.0)
        ),
        result: bytes_text(Bytes(total), false),
        terms: vec![
            Term::new("P", "term_params", group(pt), "", src_p),
            Term::new(
                "b",
                "term_bytes_per_param",
                crate::core::base::units::fmt_sig(bits as f64 / 8.0),
                "B",
                Source::Derived(f.dtype.id().into()),
            ),
        ],
        notes: vec![],
        ..Default::default()
    }
}

/// The derivation of a quantized format's bytes: quantized matrices at `bits` plus group
/// scales (and zero points), the rest at the base precision.
fn quantized_derivation(
    f: &WeightFormat,
    pt: u64,
    q: u64,
    total: u64,
    src_p: Source,
) -> Derivation {
    let mut notes = Vec::new();
    let g = f.group_size.unwrap_or(0);
    let z = if f.zero_point { f.dtype.bits() } else { 0 };
    let base_b = unquantized_dtype(f.base).bits() / 8;
    if f.group_size.is_none() {
        notes.push("note_scales_not_counted".to_string());
    }
    Derivation {
        title_key: "weights_bytes".into(),
        formula: if g > 0 {
            "⌈P_q × bits / 8⌉ + ⌈⌈P_q / g⌉ × (s + z) / 8⌉ + (P − P_q) × b_base".into()
        } else {
            "⌈P_q × bits / 8⌉ + (P − P_q) × b_base".into()
        },
        substituted: if g > 0 {
            format!(
                "⌈{} × {} / 8⌉ + ⌈⌈{} / {g}⌉ × ({} + {z}) / 8⌉ + {} × {base_b}",
                group(q),
                f.dtype.bits(),
                group(q),
                f.scale_bits,
                group(pt - q)
            )
        } else {
            format!(
                "⌈{} × {} / 8⌉ + {} × {base_b}",
                group(q),
                f.dtype.bits(),
                group(pt - q)
            )
        },
        result: bytes_text(Bytes(total), false),
        terms: vec![
            Term::new("P", "term_params", group(pt), "", src_p),
            Term::new(
                "P_q",
                "term_quantized_params",
                group(q),
                "",
                Source::Derived(if f.experts_only {
                    "ldg_routed_expert_matrices".into()
                } else {
                    "ldg_decoder_linear_matrices".into()
                }),
            ),
            Term::new(
                "bits",
                "term_bits",
                f.dtype.bits().to_string(),
                "unit_bits",
                Source::Derived(f.method.clone()),
            ),
            Term::new(
                "g",
                "term_group_size",
                g.to_string(),
                "",
                Source::Derived(f.method.clone()),
            ),
            Term::new(
                "s",
                "term_scale_bits",
                f.scale_bits.to_string(),
                "unit_bits",
                Source::Derived(f.method.clone()),
            ),
            Term::new(
                "z",
                "term_zero_point_bits",
                z.to_string(),
                "unit_bits",
                Source::Derived(f.method.clone()),
            ),
            Term::new(
                "b_base",
                "term_bytes_per_param",
                base_b.to_string(),
                "B",
                Source::Derived(f.base.id().into()),
            ),
        ],
        notes,
        ..Default::default()
    }
}

/// Weight bytes in format `f`, total and per GPU under tensor parallelism `tp` (≥ 1, checked
/// by the one TP rule; the share from [`per_gpu`]).
pub fn with_format(m: &ModelDesc, f: &WeightFormat, tp: u64) -> Result<WeightBytes, CalcError> {
    let (q, repl, other) = split(m, f);
    let lp = m.loaded_params();
    let fp32 = lp.router_fp32;
    let total = bytes_of(q, add("ovf_params", &[repl, other])?, fp32, f)?;
    let (per_gpu, per_gpu_derivation) = per_gpu(m, f, tp)?;
    let pt = lp.total;
    let src_p = Source::Derived("params_total".into());
    let mut derivation = if is_plain(f) {
        plain_derivation(f, pt, total, src_p)
    } else {
        quantized_derivation(f, pt, q, total, src_p)
    };
    add_fp32_term(&mut derivation, f, fp32);
    Ok(WeightBytes {
        total: Bytes(total),
        per_gpu,
        tp,
        derivation,
        per_gpu_derivation,
    })
}

/// Weight bytes at the precision a user chose: the checkpoint's own format (its exact size
/// when an index gave one) when none is chosen or the chosen one is the checkpoint's own,
/// else every quantizable tensor in `d` ([`with_dtype`]). The one rule for the report, the
/// performance model and loading.
pub fn chosen(m: &ModelDesc, d: Option<Dtype>, tp: u64) -> Result<WeightBytes, CalcError> {
    match d {
        Some(d) if d != m.weights.dtype => with_dtype(m, d, tp),
        _ => checkpoint(m, tp),
    }
}

/// Weight bytes with every quantizable tensor in precision `d` ([`format_for`]).
pub fn with_dtype(m: &ModelDesc, d: Dtype, tp: u64) -> Result<WeightBytes, CalcError> {
    with_format(m, &format_for(d, m.weights.base), tp)
}

/// Weight bytes of the checkpoint as published: the exact `metadata.total_size` of a
/// safetensors index when known (split evenly across `tp`, rounded up), else the model's own
/// [`WeightFormat`].
pub fn checkpoint(m: &ModelDesc, tp: u64) -> Result<WeightBytes, CalcError> {
    let class = with_format(m, &m.weights, tp)?;
    let Some(b) = m.exact_weight_bytes else {
        return Ok(class);
    };
    let d = Derivation {
        title_key: "weights_bytes".into(),
        formula: "total_size".into(),
        substituted: group(b.0),
        result: bytes_text(b, false),
        terms: vec![Term::new(
            "total_size",
            "term_index_total_size",
            group(b.0),
            "B",
            Source::ConfigKey("metadata.total_size".into()),
        )],
        notes: vec!["note_exact_index".into()],
        ..Default::default()
    };
    let (per_gpu, per_gpu_derivation) = index_share(b, &class);
    Ok(WeightBytes {
        total: b,
        per_gpu,
        tp,
        derivation: d,
        per_gpu_derivation,
    })
}

/// One GPU's share of an index's exact `total_size` `W`: the class rule's share plus the
/// bytes the index holds beyond the class rule's total (block scales, tensors the config does
/// not describe), split evenly: `W_gpu = W_class,gpu + (W − W_class) / TP` (rounded up).
fn index_share(b: Bytes, class: &WeightBytes) -> (Bytes, Derivation) {
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
    d.formula = "W_gpu = W_class,gpu + (W − W_class) / TP".into();
    d.substituted = format!(
        "{} B + ({} B − {} B) / {tp}",
        group(class.per_gpu.0),
        group(b.0),
        group(class.total.0)
    );
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
    use super::*;
    use crate::core::model::config::parse_model_text;

    fn llama2() -> Option<ModelDesc> {
        parse_model_text(
            r#"{"model_type":"llama","hidden_size":4096,"intermediate_size":11008,"num_hidden_layers":32,
            "num_attention_heads":32,"vocab_size":32000,"tie_word_embeddings":false,"torch_dtype":"float16"}"#,
        )
        .ok()
    }

    /// The two bytes-per-weight figures agree where they must: a format's bytes per element
    /// times `n` is what `quantized_bytes` stores for `n` elements (n a multiple of the group),
    /// for every precision's format (AWQ-style scales and zero points, MXFP4, NVFP4, plain).
    #[test]
    fn bytes_per_element_matches_quantized_bytes() {
        for d in Dtype::ALL {
            let f = format_for(*d, Dtype::Bf16);
            let n = 4096 * f.group_size.unwrap_or(1).max(1);
            let exact = quantized_bytes(n, &f).unwrap_or(0) as f64;
            assert_eq!(exact, n as f64 * f.bytes_per_element(), "{d:?}: {f:?}");
        }
    }

    /// A format without a method name is plain, like `none` and `unknown`: its bytes are every
    /// parameter at its dtype, and the roofline's linear layers read the same bits.
    #[test]
    fn a_format_without_a_method_is_plain_everywhere() {
        use crate::core::calc::roofline::Precisions;
        let Some(m) = llama2() else {
            panic!("llama2 parses")
        };
        let f = WeightFormat {
            method: String::new(),
            ..format_for(Dtype::Int4, Dtype::Bf16)
        };
        assert!(is_plain(&f));
        let bytes = bytes_of(0, m.params.total, 0, &f).expect("bytes");
        assert_eq!(bytes, (m.params.total * 4).div_ceil(8));
        let p = Precisions::from_format(&f, Dtype::Bf16, Dtype::Bf16);
        assert_eq!((p.linear_bits, p.base_bits), (4.0, 4.0));
        let named = format_for(Dtype::Int4, Dtype::Bf16);
        assert!(!is_plain(&named));
        let q = Precisions::from_format(&named, Dtype::Bf16, Dtype::Bf16);
        assert_eq!(q.linear_bits, named.bytes_per_element() * 8.0);
        assert_eq!(q.base_bits, 16.0);
    }

    #[test]
    fn llama2_7b_bf16() {
        // P = 6,738,415,616 (from the config); bf16 = 2 B each → 13,476,831,232 B.
        let m = llama2();
        let w = m.as_ref().and_then(|m| with_dtype(m, Dtype::Bf16, 1).ok());
        let p = m.as_ref().map_or(0, |m| m.params.total);
        assert_eq!(p, 6_738_415_616);
        assert_eq!(w.map(|w| w.total.0), Some(p * 2));
        let w32 = m.as_ref().and_then(|m| with_dtype(m, Dtype::Fp32, 1).ok());
        assert_eq!(w32.map(|w| w.total.0), Some(p * 4));
        let ck = m.as_ref().and_then(|m| checkpoint(m, 1).ok());
        assert_eq!(ck.map(|w| w.total.0), Some(p * 2));
    }

    #[test]
    fn int4_groups() {
        // 128 elements, int4 g128 + fp16 scale + 4-bit zero: 64 B + ⌈(16 + 4) / 8⌉ = 64 + 3.
        let f = format_for(Dtype::Int4, Dtype::Bf16);
        assert_eq!(
            quantized_bytes(128, &f).ok(),
            Some(128 / 2 + (16 + 4_u64).div_ceil(8))
        );
        // MXFP4: 32 elements → 16 B + 1 B scale.
        let f = format_for(Dtype::Fp4, Dtype::Bf16);
        assert_eq!(quantized_bytes(32, &f).ok(), Some(16 + 1));
        // NVFP4: 16 elements → 8 B + 1 B scale.
        assert_eq!(quantized_bytes(16, &nvfp4(Dtype::Bf16)).ok(), Some(8 + 1));
    }

    #[test]
    fn llama2_int4_keeps_embeddings_16bit() {
        let Some(m) = llama2() else {
            panic!("config did not parse")
        };
        let q = m.params.linear; // 32 × (4·4096² + 3·4096·11008)
        assert_eq!(q, 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008));
        let rest = m.params.total - q;
        let want = q / 2 + (q / 128) * 20 / 8 + rest * 2;
        assert_eq!(
            with_dtype(&m, Dtype::Int4, 1).map(|w| w.total.0).ok(),
            Some(want)
        );
    }

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
        let mqa = crate::core::model::config::parse_model_text(
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
            "../../../tests/fixtures/meta-llama__Meta-Llama-3.1-8B.json"
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
            "../../../tests/fixtures/corpus/google__gemma-3n-E4B-it.json"
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
            crate::core::calc::tp::check_model(&m, 3).err()
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
            "../../../data/presets/deepseek-ai__DeepSeek-V3.json"
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
            "../../../data/presets/openai__gpt-oss-120b.json"
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
    }
}
