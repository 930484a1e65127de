//! Error statistics of a set of predictions: quantiles and the median, mean and worst absolute
//! relative error ([`ErrorStats`]).

use serde::{Deserialize, Serialize};

/// Error statistics of one metric on one subset.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ErrorStats {
    /// Rows.
    pub n: usize,
    /// Median absolute relative error (0.1 = 10%).
    pub median: f64,
    /// 90th percentile absolute relative error.
    pub p90: f64,
    /// Median signed relative error (predicted / measured − 1).
    pub bias: f64,
}

pub(super) fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    crate::base::order::sort_by(v, &|a, b| a.total_cmp(b));
    let pos = q * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    let (a, b) = (
        v.get(lo).copied().unwrap_or(f64::NAN),
        v.get(hi).copied().unwrap_or(f64::NAN),
    );
    a + (b - a) * (pos - lo as f64)
}

pub(super) fn stats(errs: &[f64]) -> ErrorStats {
    let mut abs: Vec<f64> = errs.iter().map(|e| e.abs()).collect();
    let mut signed = errs.to_vec();
    ErrorStats {
        n: errs.len(),
        median: quantile(&mut abs.clone(), 0.5),
        p90: quantile(&mut abs, 0.9),
        bias: quantile(&mut signed, 0.5),
    }
}
