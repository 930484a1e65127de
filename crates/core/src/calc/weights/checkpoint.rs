//! A model's weight bytes, in total and per GPU: for the checkpoint's own format
//! ([`checkpoint`], with a safetensors index's exact size when known) or a chosen precision
//! ([`with_dtype`], [`with_format`]), and the one the user chose ([`chosen`]).

use super::bytes::{
    bytes_of, format_for, is_plain, plain_derivation, quantized_derivation, split, WeightBytes,
};
use super::shard::{index_share, per_gpu};
use crate::base::checked::add;
use crate::base::derivation::{bytes_text, group, Derivation, Source, Term};
use crate::base::dtype::Dtype;
use crate::base::error::CalcError;
use crate::base::expr::Expr;
use crate::base::units::Bytes;
use crate::model::{ModelDesc, WeightFormat};

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
    let derivation = if is_plain(f) {
        plain_derivation(f, (pt, fp32), total, src_p)
    } else {
        quantized_derivation(f, (pt, q, fp32), total, src_p)
    };
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
    let e = Expr::sym("total_size", group(b.0), b.0);
    let d = Derivation {
        result: bytes_text(b, false),
        terms: vec![Term::new(
            "total_size",
            "term_index_total_size",
            group(b.0),
            "B",
            Source::ConfigKey("metadata.total_size".into()),
        )],
        notes: vec!["note_exact_index".into()],
        ..Derivation::of("weights_bytes", &e)
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

#[cfg(test)]
mod tests {
    use super::super::test_support::llama2;
    use super::*;

    /// A format without a method name is plain, like `none` and `unknown`: its bytes are every
    /// parameter at its dtype, and the roofline's linear layers read the same bits.
    #[test]
    fn a_format_without_a_method_is_plain_everywhere() {
        use crate::calc::roofline::Precisions;
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

    /// An index's exact total is its own derivation: the key, then its value.
    #[test]
    fn an_index_total_is_shown_as_read() {
        let Some(m) = llama2() else {
            panic!("llama2 parses")
        };
        let m = ModelDesc {
            exact_weight_bytes: Some(Bytes(13_476_839_424)),
            ..m
        };
        let w = checkpoint(&m, 2).expect("bytes");
        assert_eq!(w.total, Bytes(13_476_839_424));
        assert_eq!(w.derivation.formula, "total_size");
        assert_eq!(w.derivation.substituted, "13,476,839,424");
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
}
