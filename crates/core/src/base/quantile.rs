//! Quantiles, in one convention: numpy's default `percentile` (linear interpolation between
//! order statistics), the one `vllm bench serve` reports. The `q` quantile of `N` values is the
//! order statistic at rank `q × (N − 1)` (0-based), interpolated linearly to the next when the
//! rank is fractional; `q` is a fraction (0.5 is the median, 0.99 is P99). An integral rank
//! gives that order statistic itself, so an infinite value stays infinite rather than turning
//! into NaN. Empty input gives NaN.

use crate::base::order::sort_by;

/// The `q` quantile of `n` order statistics, read by rank (0-based) through `at`.
fn interpolate(n: u64, q: f64, at: &dyn Fn(u64) -> f64) -> f64 {
    if n == 0 {
        return f64::NAN;
    }
    let pos = q * (n - 1) as f64;
    let lo = pos.floor() as u64;
    let frac = pos - lo as f64;
    let a = at(lo);
    if frac == 0.0 {
        a
    } else {
        a + (at(lo + 1) - a) * frac
    }
}

/// The `q` quantile (0–1) of `v`, which it sorts ascending in place.
pub fn quantile(v: &mut [f64], q: f64) -> f64 {
    sort_by(v, &|a, b| a.total_cmp(b));
    let sorted: &[f64] = v;
    interpolate(sorted.len() as u64, q, &|rank| {
        usize::try_from(rank)
            .ok()
            .and_then(|i| sorted.get(i))
            .copied()
            .unwrap_or(f64::NAN)
    })
}

/// The `q` quantile (0–1) of values sorted ascending, each with a weight (the number of times
/// it occurs): the same as [`quantile`] of the values each repeated its weight times.
pub fn weighted_quantile(sorted: &[(f64, u64)], q: f64) -> f64 {
    let n: u64 = sorted.iter().map(|(_, w)| *w).sum();
    interpolate(n, q, &|rank| {
        let mut seen = 0u64;
        for (v, w) in sorted {
            seen += w;
            if rank < seen {
                return *v;
            }
        }
        sorted.last().map_or(f64::NAN, |(v, _)| *v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_linear_interpolation() {
        // numpy.percentile([1, 2, 3, 4], [0, 50, 90, 100]) = [1, 2.5, 3.7, 4].
        let mut v = vec![4.0, 1.0, 3.0, 2.0];
        assert_eq!(quantile(&mut v, 0.0), 1.0);
        assert_eq!(quantile(&mut v, 0.5), 2.5);
        assert!((quantile(&mut v, 0.9) - 3.7).abs() < 1e-12);
        assert_eq!(quantile(&mut v, 1.0), 4.0);
        assert!(quantile(&mut [], 0.5).is_nan());
    }

    #[test]
    fn an_exact_rank_keeps_an_infinite_value() {
        assert_eq!(
            quantile(&mut [1.0, f64::INFINITY, f64::INFINITY], 0.5),
            f64::INFINITY
        );
    }

    #[test]
    fn weights_count_as_repeats() {
        let w = [(1.0, 2), (5.0, 1), (7.0, 3)];
        let mut flat = vec![1.0, 1.0, 5.0, 7.0, 7.0, 7.0];
        for q in [0.0, 0.1, 0.25, 0.5, 0.9, 0.99, 1.0] {
            assert_eq!(weighted_quantile(&w, q), quantile(&mut flat, q), "q {q}");
        }
        assert!(weighted_quantile(&[], 0.5).is_nan());
    }
}
