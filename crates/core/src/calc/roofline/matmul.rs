//! One matmul on the roofline: `[M,K] × [K,N]` does `2·M·N·K` FLOPs and moves
//! `b·(M·K + K·N + M·N)` bytes; intensity = FLOPs / bytes (the matmul explorer's figures, with
//! their derivation).

use super::ridge::intensity;
use crate::base::checked::bits_to_bytes_real;
use crate::base::derivation::{group, Derivation, Source, Term};
use crate::base::dtype::Dtype;
use crate::base::expr::Expr;
use crate::base::units::{fmt_sig, Bytes, Flops};
use serde::{Deserialize, Serialize};

/// FLOPs, bytes and intensity of one matmul.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MatmulCost {
    /// `2·M·N·K`.
    pub flops: Flops,
    /// `b·(M·K + K·N + M·N)`.
    pub bytes: Bytes,
    /// FLOP/B.
    pub intensity: f64,
}

/// A matmul `[M, K] × [K, N]`: the matmul explorer's shape (in half precision, 2 bytes per
/// element, for its own FLOPs, bytes and intensity) and the shape [`matmul`] costs at any
/// precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Matmul {
    /// Rows of the left operand (tokens).
    pub m: u64,
    /// Columns of the right operand.
    pub n: u64,
    /// Shared dimension.
    pub k: u64,
}

/// Bytes per element of the explorer's half-precision matmul.
pub const MATMUL_ELEM_BYTES: u64 = 2;

impl Matmul {
    /// FLOPs = 2·M·N·K (a multiply-add counts as 2).
    pub fn flops(&self) -> Flops {
        Flops(2.0 * self.m as f64 * self.n as f64 * self.k as f64)
    }

    /// Bytes = 2 · (M·K + K·N + M·N): read both operands, write the result, once each.
    pub fn bytes(&self) -> Bytes {
        let elems = (self.m as f64) * (self.k as f64)
            + (self.k as f64) * (self.n as f64)
            + (self.m as f64) * (self.n as f64);
        Bytes::saturating_from_f64(elems * MATMUL_ELEM_BYTES as f64)
    }

    /// Intensity = M·N·K / (M·K + K·N + M·N) FLOP/B (the 2s cancel), computed in f64 so
    /// large inputs do not overflow; 0 for an empty matmul.
    pub fn intensity_flop_per_byte(&self) -> f64 {
        let (m, n, k) = (self.m as f64, self.n as f64, self.k as f64);
        let den = m * k + k * n + m * n;
        if den > 0.0 {
            m * n * k / den
        } else {
            0.0
        }
    }
}

impl Default for Matmul {
    /// The explorer's first shape, M = N = K = 1,024.
    fn default() -> Self {
        Matmul {
            m: 1024,
            n: 1024,
            k: 1024,
        }
    }
}

/// Matmul `[M,K] × [K,N]` with every operand at `dtype`: FLOPs `2·M·N·K`, bytes
/// `b·(M·K + K·N + M·N)`. In half precision the intensity is `M·N·K / (M·K + K·N + M·N)`:
/// `n/3` for `M = N = K = n`.
pub fn matmul(m: u64, k: u64, n: u64, dtype: Dtype) -> MatmulCost {
    let (m, k, n) = (m as f64, k as f64, n as f64);
    let flops = Flops(2.0 * m * n * k);
    let bytes = bits_to_bytes_real(m * k + k * n + m * n, dtype.bits() as f64);
    MatmulCost {
        flops,
        bytes,
        intensity: intensity(flops, bytes),
    }
}

/// `I = 2·M·N·K / (b·(M·K + K·N + M·N))`: the textbook intensity, bytes not rounded up (the
/// result, [`matmul`]'s, rounds the bytes up to whole bytes).
fn intensity_expr(m: u64, k: u64, n: u64, dtype: Dtype) -> Expr {
    let (m, k, n) = (
        Expr::sym("M", group(m), m),
        Expr::sym("K", group(k), k),
        Expr::sym("N", group(n), n),
    );
    let flops = Expr::dot([Expr::int(2), m.clone(), n.clone(), k.clone()]);
    let elems = Expr::add([
        Expr::dot([m.clone(), k.clone()]),
        Expr::dot([k, n.clone()]),
        Expr::dot([m, n]),
    ]);
    let b = Expr::element_bytes("b", dtype.bits(), "");
    Expr::named("I", Expr::over(flops, Expr::dot([b, elems])))
}

/// Matmul with its derivation.
pub fn matmul_derivation(m: u64, k: u64, n: u64, dtype: Dtype) -> (MatmulCost, Derivation) {
    let c = matmul(m, k, n, dtype);
    let t = |s: &str, key: &str, v: u64| Term {
        symbol: s.into(),
        name_key: key.into(),
        value: group(v),
        unit: String::new(),
        source: Source::User(s.to_ascii_lowercase()),
    };
    let d = Derivation {
        result: format!("{} FLOP/B", fmt_sig(c.intensity)),
        terms: vec![
            t("M", "term_m", m),
            t("K", "term_k", k),
            t("N", "term_n", n),
        ],
        notes: vec!["note_half_precision_n_over_3".into()],
        ..Derivation::of("roof_matmul_intensity", &intensity_expr(m, k, n, dtype))
    };
    (c, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The derivation's formula computes the result where no byte is rounded up (`matmul`
    /// rounds the operands' bytes up to whole bytes, which the textbook formula does not).
    #[test]
    fn formula_agrees_with_the_intensity() {
        for (m, k, n, d) in [(1, 4096, 4096, Dtype::Bf16), (512, 8192, 1024, Dtype::Fp8)] {
            let e = intensity_expr(m, k, n, d);
            let c = matmul(m, k, n, d);
            assert!(
                (e.eval() - c.intensity).abs() <= 1e-12 * c.intensity,
                "{m} {k} {n}"
            );
        }
        let (_, d) = matmul_derivation(2, 3, 4, Dtype::Fp16);
        assert_eq!(d.formula, "I = 2·M·N·K / (b·(M·K + K·N + M·N))");
        assert_eq!(
            d.substituted,
            "2 × 2 × 4 × 3 / (2 × (2 × 3 + 3 × 4 + 2 × 4))"
        );
    }

    #[test]
    fn matmul_half_precision_is_n_over_3() {
        // 2n³ / (2 × 3n²) = n/3.
        for n in [1024u64, 4096] {
            let c = matmul(n, n, n, Dtype::Fp16);
            assert!((c.intensity - n as f64 / 3.0).abs() < 1e-9);
        }
    }
}
