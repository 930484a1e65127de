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
//!   routers) stays at the base precision (`torch_dtype`; bf16 if that is below 16 bits).
//! * fp8/int8 without blocks: one scale per tensor or per output channel, below 0.01 % of the
//!   bytes, is noted and not counted.
//! * Chosen precisions ([`format_for`]): int4 = 4 bits + fp16 scale + 4-bit zero point per
//!   128 (AWQ style); fp4 = MXFP4 (4 bits + 8-bit e8m0 scale per 32); fp6 = MXFP6 (8-bit
//!   scale per 32); fp8/int8 = 1 B, per-tensor scale not counted.
//! * Tensor parallelism of degree `t` (vLLM's layout): attention heads, MLP and expert
//!   matrices, embeddings and lm_head (vocab-parallel) are split `t` ways (rounded up); norms,
//!   routers and learned position embeddings are replicated on every GPU; when `t` exceeds
//!   the KV heads, each GPU also holds a whole K and V head (replicated, as vLLM does).

use crate::core::base::checked::{add, mul};
use crate::core::base::derivation::{group, Derivation, Source, Term};
use crate::core::base::dtype::Dtype;
use crate::core::base::error::{CalcError, Phrase};
use crate::core::base::units::Bytes;
use crate::core::model::{Mixer, ModelDesc, WeightFormat};

/// Weight bytes, total and per GPU, with the derivation of the total.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightBytes {
    /// Bytes of the whole model in the chosen format.
    pub total: Bytes,
    /// Bytes held by one GPU under tensor parallelism `tp` (== `total` when `tp` = 1).
    pub per_gpu: Bytes,
    /// Tensor-parallel degree used for `per_gpu`.
    pub tp: u64,
    /// Formula, substituted values and result.
    pub derivation: Derivation,
}

/// The storage format assumed for a chosen precision `d` (see the module docs); `base` is
/// the precision of the parts that are not quantized.
pub fn format_for(d: Dtype, base: Dtype) -> WeightFormat {
    let base16 = if base.bits() >= 16 { base } else { Dtype::Bf16 };
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
        Dtype::Fp32 | Dtype::Bf16 | Dtype::Fp16 => WeightFormat {
            dtype: d,
            group_size: None,
            scale_bits: 0,
            zero_point: false,
            method: "none".into(),
            experts_only: false,
            base: d,
        },
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

fn is_plain(f: &WeightFormat) -> bool {
    f.method == "none" || f.method == "unknown" || f.dtype.bits() >= 16
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

fn bytes_of(q: u64, rest: u64, f: &WeightFormat) -> Result<u64, CalcError> {
    if is_plain(f) {
        return plain_bytes(rest, f.dtype.bits());
    }
    let base_bits = if f.base.bits() >= 16 {
        f.base.bits()
    } else {
        16
    };
    add(
        "ovf_weight_bytes",
        &[quantized_bytes(q, f)?, plain_bytes(rest, base_bits)?],
    )
}

fn result_text(b: u64) -> String {
    format!(
        "{} B = {} = {}",
        group(b),
        Bytes(b).fmt_gb(),
        Bytes(b).fmt_gib()
    )
}

/// Extra K/V projection elements one GPU holds because KV heads are replicated when `tp`
/// exceeds them: per such layer `h·(d_k + d_v)·max(1, K/t) − ⌈h·(d_k + d_v)·K / t⌉`.
fn kv_replication_extra(m: &ModelDesc, tp: u64) -> Result<u64, CalcError> {
    let mut extra = 0u64;
    for l in &m.layers {
        if let Mixer::Attention {
            kv_heads,
            head_dim,
            v_head_dim,
            ..
        } = l.mixer
        {
            if kv_heads < tp {
                let per_head = mul(
                    "ovf_kv_projection",
                    &[
                        m.hidden_size,
                        add("ovf_kv_projection", &[head_dim, v_head_dim])?,
                    ],
                )?;
                let split = mul("ovf_kv_projection", &[per_head, kv_heads])?.div_ceil(tp);
                extra = add(
                    "ovf_kv_projection",
                    &[extra, per_head.saturating_sub(split)],
                )?;
            }
        }
    }
    Ok(extra)
}

/// Bytes one GPU holds under tensor parallelism `tp`: the quantized and other parameters
/// split `tp` ways (rounded up), the replicated ones whole, plus the replicated K/V
/// projection elements (`kv_extra`) at the quantized precision when the matrices are
/// quantized, else at the base precision. `(q, repl, other)` is [`split`]'s result.
fn per_gpu_bytes(
    f: &WeightFormat,
    tp: u64,
    (q, repl, other): (u64, u64, u64),
    kv_extra: u64,
) -> Result<u64, CalcError> {
    let (q_rank, other_rank) = if is_plain(f) || q == 0 {
        (
            q.div_ceil(tp),
            add("ovf_params", &[other.div_ceil(tp), kv_extra])?,
        )
    } else {
        (
            add("ovf_params", &[q.div_ceil(tp), kv_extra])?,
            other.div_ceil(tp),
        )
    };
    bytes_of(q_rank, add("ovf_params", &[repl, other_rank])?, f)
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
        result: result_text(total),
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
    let base_b = if f.base.bits() >= 16 {
        f.base.bits()
    } else {
        16
    } / 8;
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
        result: result_text(total),
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
                "bit",
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
                "bit",
                Source::Derived(f.method.clone()),
            ),
            Term::new(
                "z",
                "term_zero_point_bits",
                z.to_string(),
                "bit",
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
    }
}

/// Weight bytes in format `f`, total and per GPU under tensor parallelism `tp` (≥ 1).
pub fn with_format(m: &ModelDesc, f: &WeightFormat, tp: u64) -> Result<WeightBytes, CalcError> {
    if tp == 0 {
        return Err(CalcError::OutOfRange {
            field: Phrase::verbatim("tp"),
            value: "0".into(),
            range: Phrase::tr("rng_at_least_1"),
        });
    }
    let (q, repl, other) = split(m, f);
    let total = bytes_of(q, add("ovf_params", &[repl, other])?, f)?;
    // K/V projections are replicated when tp exceeds the KV heads: one GPU holds one head.
    let kv_extra = kv_replication_extra(m, tp)?;
    let per_gpu = per_gpu_bytes(f, tp, (q, repl, other), kv_extra)?;
    let pt = m.loaded_params().total;
    let src_p = Source::Derived("params_total".into());
    let mut d = if is_plain(f) {
        plain_derivation(f, pt, total, src_p)
    } else {
        quantized_derivation(f, pt, q, total, src_p)
    };
    if tp > 1 {
        d.notes.push("note_tp_weights".into());
        d.terms.push(Term::new(
            "t",
            "term_tp",
            tp.to_string(),
            "",
            Source::User("tp".into()),
        ));
    }
    Ok(WeightBytes {
        total: Bytes(total),
        per_gpu: Bytes(per_gpu),
        tp,
        derivation: d,
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
    if let Some(b) = m.exact_weight_bytes {
        if tp == 0 {
            return Err(CalcError::OutOfRange {
                field: Phrase::verbatim("tp"),
                value: "0".into(),
                range: Phrase::tr("rng_at_least_1"),
            });
        }
        let d = Derivation {
            title_key: "weights_bytes".into(),
            formula: "total_size".into(),
            substituted: group(b.0),
            result: result_text(b.0),
            terms: vec![Term::new(
                "total_size",
                "term_index_total_size",
                group(b.0),
                "B",
                Source::ConfigKey("metadata.total_size".into()),
            )],
            notes: vec!["note_exact_index".into()],
        };
        return Ok(WeightBytes {
            total: b,
            per_gpu: Bytes(b.0.div_ceil(tp)),
            tp,
            derivation: d,
        });
    }
    with_format(m, &m.weights, tp)
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
}
