//! Weight bytes of one format, in total: plain formats `P × bits / 8` rounded up once;
//! quantized formats store the linear weights `P_q` at `bits` per element plus, per group of `g`,
//! a scale of `s` bits and (asymmetric int) a zero point: `⌈P_q·bits/8⌉ + ⌈⌈P_q/g⌉·(s + z)/8⌉`,
//! the rest at the base precision and the routers vLLM keeps in fp32 at 4 bytes; the formats of a
//! chosen precision ([`format_for`]); each with its derivation.

use crate::base::checked::{add, bits_to_bytes};
use crate::base::derivation::{bytes_text, group, Derivation, Source, Term};
use crate::base::dtype::Dtype;
use crate::base::error::CalcError;
use crate::base::expr::Expr;
use crate::base::units::{fmt_sig, Bytes};
use crate::model::{ModelDesc, WeightFormat};

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
    /// each holds whole ([`per_gpu`](super::per_gpu)).
    pub per_gpu_derivation: Derivation,
}

/// The storage format assumed for a chosen precision `d` (the weights module's docs); `base`
/// is the precision of the parts that are not quantized.
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
    bits_to_bytes("ovf_weight_bits", n, bits)
}

/// Bytes of `n` quantized elements in format `f`: `⌈n·bits/8⌉ + ⌈⌈n/g⌉·(s + z)/8⌉`.
pub fn quantized_bytes(n: u64, f: &WeightFormat) -> Result<u64, CalcError> {
    let bits = f.dtype.bits();
    let data = plain_bytes(n, bits)?;
    let scales = match f.group_size {
        Some(g) if g > 0 => {
            let per = f.scale_bits + if f.zero_point { bits } else { 0 };
            bits_to_bytes("ovf_scale_bits", n.div_ceil(g), per)?
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
/// ([`crate::calc::kv::auto_kv_dtype`]).
pub fn unquantized_dtype(base: Dtype) -> Dtype {
    if base.bits() >= 16 {
        base
    } else {
        Dtype::Bf16
    }
}

/// Splits the parameters into (quantized, replicated, other) for format `f`.
pub(super) fn split(m: &ModelDesc, f: &WeightFormat) -> (u64, u64, u64) {
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
/// in fp32 whatever the format ([`ParamBreakdown::router_fp32`](crate::model::ParamBreakdown)):
/// those add `4 − b` bytes each to the `b` of the rest.
pub(super) fn bytes_of(q: u64, rest: u64, fp32: u64, f: &WeightFormat) -> Result<u64, CalcError> {
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

/// `e` with the fp32 routers added, when there are any and the rest is narrower:
/// `+ P_32 × (4 − b)` bytes (`b_base` beside quantized weights), their term pushed on `terms`.
/// Inside a named formula (`W_gpu = …`), added to its right side.
pub(super) fn with_fp32(e: Expr, f: &WeightFormat, fp32: u64, terms: &mut Vec<Term>) -> Expr {
    let bits = rest_bits(f);
    if fp32 == 0 || bits >= 32 {
        return e;
    }
    if let Expr::Named(lhs, rhs) = e {
        return Expr::Named(lhs, Box::new(with_fp32(*rhs, f, fp32, terms)));
    }
    let extra = fmt_sig((32 - bits) as f64 / 8.0);
    let b = if is_plain(f) { "b" } else { "b_base" };
    let b = Expr::element_bytes(b, bits, "");
    let p32 = Expr::sym("P_32", group(fp32), fp32);
    let wider = Expr::shown(Expr::minus(Expr::int(4), b), format!("{extra} B"));
    terms.push(Term::new(
        "P_32",
        "term_fp32_router_params",
        group(fp32),
        "",
        Source::Derived("ldg_router_fp32".into()),
    ));
    Expr::add([e, Expr::mul([p32, wider])])
}

/// The derivation of a plain format's bytes, `P × b`, with `fp32` routers ([`with_fp32`]).
pub(super) fn plain_derivation(
    f: &WeightFormat,
    (pt, fp32): (u64, u64),
    total: u64,
    src_p: Source,
) -> Derivation {
    let bits = f.dtype.bits();
    let mut terms = vec![
        Term::new("P", "term_params", group(pt), "", src_p),
        Term::new(
            "b",
            "term_bytes_per_param",
            fmt_sig(f.dtype.bytes()),
            "B",
            Source::Derived(f.dtype.id().into()),
        ),
    ];
    let e = Expr::mul([
        Expr::sym("P", group(pt), pt),
        Expr::element_bytes("b", bits, "B"),
    ]);
    let e = with_fp32(e, f, fp32, &mut terms);
    Derivation {
        result: bytes_text(Bytes(total), false),
        terms,
        ..Derivation::of("weights_bytes", &e)
    }
}

/// The formula of a quantized format's bytes: `⌈P_q × bits / 8⌉` for the quantized matrices,
/// `⌈⌈P_q / g⌉ × (s + z) / 8⌉` for their group scales (and zero points) when grouped,
/// `(P − P_q) × b_base` for the rest.
fn quantized_expr(f: &WeightFormat, pt: u64, q: u64) -> Expr {
    let g = f.group_size.unwrap_or(0);
    let z = if f.zero_point { f.dtype.bits() } else { 0 };
    let int = |symbol: &str, n: u64| Expr::sym(symbol, n.to_string(), n);
    let p_q = Expr::sym("P_q", group(q), q);
    let eighths = |x: Expr| Expr::ceil(Expr::over(x, Expr::int(8)));
    let mut parts = vec![eighths(Expr::mul([
        p_q.clone(),
        int("bits", f.dtype.bits()),
    ]))];
    if g > 0 {
        let groups = Expr::ceil(Expr::over(p_q.clone(), int("g", g)));
        let per_group = Expr::add([int("s", f.scale_bits), int("z", z)]);
        parts.push(eighths(Expr::mul([groups, per_group])));
    }
    let rest = Expr::minus(Expr::sym("P", group(pt), pt), p_q);
    let rest = Expr::shown(rest, group(pt.saturating_sub(q)));
    let base_b = Expr::element_bytes("b_base", unquantized_dtype(f.base).bits(), "");
    parts.push(Expr::mul([rest, base_b]));
    Expr::add(parts)
}

/// The derivation of a quantized format's bytes ([`quantized_expr`]), with `fp32` routers
/// ([`with_fp32`]).
pub(super) fn quantized_derivation(
    f: &WeightFormat,
    (pt, q, fp32): (u64, u64, u64),
    total: u64,
    src_p: Source,
) -> Derivation {
    let mut notes = Vec::new();
    if f.group_size.is_none() {
        notes.push("note_scales_not_counted".to_string());
    }
    let mut terms = quantized_terms(f, pt, q, src_p);
    let e = with_fp32(quantized_expr(f, pt, q), f, fp32, &mut terms);
    Derivation {
        result: bytes_text(Bytes(total), false),
        terms,
        notes,
        ..Derivation::of("weights_bytes", &e)
    }
}

/// The inputs of [`quantized_expr`].
fn quantized_terms(f: &WeightFormat, pt: u64, q: u64, src_p: Source) -> Vec<Term> {
    let g = f.group_size.unwrap_or(0);
    let z = if f.zero_point { f.dtype.bits() } else { 0 };
    let base_b = fmt_sig(unquantized_dtype(f.base).bytes());
    let by_method = || Source::Derived(f.method.clone());
    vec![
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
            by_method(),
        ),
        Term::new("g", "term_group_size", g.to_string(), "", by_method()),
        Term::new(
            "s",
            "term_scale_bits",
            f.scale_bits.to_string(),
            "unit_bits",
            by_method(),
        ),
        Term::new(
            "z",
            "term_zero_point_bits",
            z.to_string(),
            "unit_bits",
            by_method(),
        ),
        Term::new(
            "b_base",
            "term_bytes_per_param",
            base_b,
            "B",
            Source::Derived(f.base.id().into()),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
