//! The roofline's two limits (Williams, Waterman & Patterson, "Roofline", CACM 2009; course
//! chapter, section 5 of `WORKED_EXAMPLES.md`): ridge point = peak FLOP/s / bandwidth, attainable
//! FLOP/s = min(peak, intensity × bandwidth), and which roof ([`Bound`]) limits a workload, each
//! with its derivation.

use crate::base::derivation::{Derivation, Source, Term};
use crate::base::expr::Expr;
use crate::base::units::{fmt_sig, Bytes, BytesPerSecond, Flops, FlopsPerSecond};
use serde::{Deserialize, Serialize};

/// Which roof limits a workload: the one definition for the roofline and its chart (the
/// performance model's timed passes can also be overhead-bound: `calc::perf::Limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Below the ridge point: limited by memory bandwidth.
    Memory,
    /// At or above the ridge point: limited by peak compute.
    Compute,
}

impl Bound {
    /// The roof that limits a workload of `intensity` FLOP/B on a GPU whose ridge point is
    /// `ridge` FLOP/B: compute at or above the ridge, memory below it (and when either is NaN).
    pub fn at(intensity: f64, ridge: f64) -> Bound {
        if intensity >= ridge {
            Bound::Compute
        } else {
            Bound::Memory
        }
    }
}

/// Arithmetic intensity, `flops / bytes` in FLOP/B: 0 when no bytes move or the FLOPs are not
/// finite (so the figure is always a finite number; a roofline leaves 0 off its log axis).
pub fn intensity(flops: Flops, bytes: Bytes) -> f64 {
    if bytes.0 == 0 || !flops.0.is_finite() {
        0.0
    } else {
        flops.0 / bytes.0 as f64
    }
}

pub use crate::hardware::catalog::ridge_point;

/// Ridge point with its derivation.
pub fn ridge_derivation(
    peak: FlopsPerSecond,
    bw: BytesPerSecond,
    peak_source: Source,
) -> (f64, Derivation) {
    let r = ridge_point(peak, bw);
    let e = Expr::named(
        "I*",
        Expr::over(
            Expr::sym(
                "P",
                format!("{} × 10^12 FLOP/s", fmt_sig(peak.tflops())),
                peak.0,
            ),
            Expr::sym("β", format!("{} × 10^9 B/s", fmt_sig(bw.gbps())), bw.0),
        ),
    );
    let d = Derivation {
        result: format!("{} FLOP/B", fmt_sig(r)),
        terms: vec![
            Term::num(
                "P",
                "term_peak_flops",
                peak.tflops(),
                "TFLOP/s",
                peak_source,
            ),
            Term::num(
                "β",
                "term_bandwidth",
                bw.gbps(),
                "GB/s",
                Source::Catalog("bandwidth".into()),
            ),
        ],
        ..Derivation::of("roof_ridge_point", &e)
    };
    (r, d)
}

/// A point on the roofline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Attainable {
    /// `min(peak, intensity × bandwidth)`.
    pub flops_per_s: FlopsPerSecond,
    /// Which roof applies.
    pub bound: Bound,
}

/// Attainable FLOP/s at `intensity` FLOP/B: `min(peak, intensity × bandwidth)`; memory-bound
/// below the ridge point, compute-bound at or above it. Non-finite or negative inputs count
/// as 0.
pub fn attainable(peak: FlopsPerSecond, bw: BytesPerSecond, intensity: f64) -> Attainable {
    let clean = |x: f64| if x.is_finite() && x > 0.0 { x } else { 0.0 };
    let (p, b, i) = (clean(peak.0), clean(bw.0), clean(intensity));
    let mem = i * b;
    if mem < p {
        Attainable {
            flops_per_s: FlopsPerSecond(if mem.is_finite() { mem } else { p }),
            bound: Bound::Memory,
        }
    } else {
        Attainable {
            flops_per_s: FlopsPerSecond(p),
            bound: Bound::Compute,
        }
    }
}

/// Attainable FLOP/s with its derivation: `min(P, I × β)`.
pub fn attainable_derivation(
    peak: FlopsPerSecond,
    bw: BytesPerSecond,
    intensity: f64,
) -> (Attainable, Derivation) {
    let a = attainable(peak, bw, intensity);
    let e = Expr::named(
        "P_att",
        Expr::Min(vec![
            Expr::sym("P", format!("{} TFLOP/s", fmt_sig(peak.tflops())), peak.0),
            Expr::mul([
                Expr::sym("I", format!("{} FLOP/B", fmt_sig(intensity)), intensity),
                Expr::sym("β", format!("{} GB/s", fmt_sig(bw.gbps())), bw.0),
            ]),
        ]),
    );
    let d = Derivation {
        result: format!(
            "{} TFLOP/s ({})",
            fmt_sig(a.flops_per_s.tflops()),
            match a.bound {
                Bound::Memory => "I × β < P",
                Bound::Compute => "P ≤ I × β",
            }
        ),
        notes: vec![match a.bound {
            Bound::Memory => "note_bound_memory".into(),
            Bound::Compute => "note_bound_compute".into(),
        }],
        ..Derivation::of("roof_attainable", &e)
    };
    (a, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ridge_and_bounds() {
        // L40S: 362e12 / 864e9 = 418.98 FLOP/B.
        let peak = FlopsPerSecond::from_tflops(362.0);
        let bw = BytesPerSecond::from_gbps(864.0);
        assert!((ridge_point(peak, bw) - 362e12 / 864e9).abs() < 1e-9);
        let a = attainable(peak, bw, 210.0);
        assert_eq!(a.bound, Bound::Memory);
        assert!((a.flops_per_s.0 - 210.0 * 864e9).abs() < 1.0);
        let c = attainable(peak, bw, 1000.0);
        assert_eq!(c.bound, Bound::Compute);
        assert_eq!(c.flops_per_s.0, 362e12);
        assert_eq!(attainable(peak, bw, f64::NAN).flops_per_s.0, 0.0);
        let r = ridge_point(peak, bw);
        assert_eq!(Bound::at(210.0, r), Bound::Memory);
        assert_eq!(Bound::at(r, r), Bound::Compute);
        assert_eq!(Bound::at(f64::NAN, r), Bound::Memory);
        assert_eq!(intensity(Flops(f64::INFINITY), Bytes(1)), 0.0);
        assert_eq!(intensity(Flops(6.0), Bytes::ZERO), 0.0);
        let (_, d) = ridge_derivation(peak, bw, Source::Catalog("peak".into()));
        assert_eq!(d.formula, "I* = P / β");
        assert_eq!(d.substituted, "362 × 10^12 FLOP/s / 864 × 10^9 B/s");
        assert_eq!(ridge_point(peak, BytesPerSecond(0.0)), 0.0);
    }

    mod props {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn attainable_is_bounded(p in any::<f64>(), bw in any::<f64>(), i in any::<f64>()) {
                let a = attainable(FlopsPerSecond(p), BytesPerSecond(bw), i);
                prop_assert!(a.flops_per_s.0.is_finite() && a.flops_per_s.0 >= 0.0);
                if p.is_finite() && p > 0.0 { prop_assert!(a.flops_per_s.0 <= p); }
            }
        }
    }
}
