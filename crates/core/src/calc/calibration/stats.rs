//! Error statistics of a set of predictions: quantiles and the median, mean and worst absolute
//! relative error ([`ErrorStats`]).

use crate::base::quantile::quantile;
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
