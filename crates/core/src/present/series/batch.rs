//! Max concurrent requests against context length: floor(KV budget / KV per request), one
//! line per GPU.

use super::kv::GpuBudget;
use crate::base::units::{Bytes, Tokens};
use serde::{Deserialize, Serialize};

/// Maximum concurrent requests at one context length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchPoint {
    /// Tokens per request (prompt + output).
    pub context: Tokens,
    /// floor(theoretical budget / KV per request).
    pub theoretical: u64,
    /// floor(practical budget / KV per request).
    pub practical: u64,
}

/// One GPU's line on the batch chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchLine {
    /// GPU display name.
    pub gpu: String,
    /// Points in increasing context order.
    pub points: Vec<BatchPoint>,
    /// The point at the current context length.
    pub current: BatchPoint,
}

/// Maximum concurrent requests against context length, one line per GPU.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct BatchSeries {
    /// KV cache per token.
    pub kv_per_token: Bytes,
    /// One line per GPU.
    pub lines: Vec<BatchLine>,
}

/// floor(budget / KV per request); 0 when a request needs 0 bytes (nothing to size) or the
/// budget is smaller than one request (textbook §3: 10 GiB / 2 GiB → 5).
pub fn max_requests(budget: Bytes, per_request: Bytes) -> u64 {
    budget.0.checked_div(per_request.0).unwrap_or(0)
}

/// Context lengths from `min` to `max` (powers of two between, plus both ends and the
/// current context), sorted and deduplicated.
pub fn context_grid(min: Tokens, max: Tokens, current: Tokens) -> Vec<Tokens> {
    let lo = min.0.max(1);
    let hi = max.0.max(lo);
    let mut v = vec![lo, hi];
    if current.0 >= lo && current.0 <= hi {
        v.push(current.0);
    }
    // Quarter-octave steps give a smooth staircase on a log axis.
    let mut t = lo as f64;
    while t < hi as f64 {
        v.push(t.round() as u64);
        t *= 2f64.powf(0.25);
    }
    crate::base::order::sort_dedup(&mut v);
    v.into_iter().map(Tokens).collect()
}

/// Batch series for each GPU over `contexts`, with the point at `current`;
/// `per_request(tokens)` is the KV of one request (see [`kv_series`](super::kv::kv_series)).
pub fn batch_series(
    per_request: impl Fn(u64) -> Bytes,
    contexts: &[Tokens],
    current: Tokens,
    gpus: &[GpuBudget],
) -> BatchSeries {
    let point = |g: &GpuBudget, c: Tokens| {
        let r = per_request(c.0);
        BatchPoint {
            context: c,
            theoretical: max_requests(g.theoretical(), r),
            practical: max_requests(g.practical(), r),
        }
    };
    BatchSeries {
        kv_per_token: per_request(1),
        lines: gpus
            .iter()
            .map(|g| BatchLine {
                gpu: g.gpu.clone(),
                points: contexts.iter().map(|c| point(g, *c)).collect(),
                current: point(g, current),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::kv::tests::{gpus, KV_TOKEN};
    use super::*;

    #[test]
    fn batch_is_floor_of_budget_over_kv_per_request() {
        let g = gpus();
        let ctx = context_grid(Tokens(1024), Tokens(32768), Tokens(4096));
        assert!(ctx.contains(&Tokens(4096)));
        let s = batch_series(|t| KV_TOKEN * t, &ctx, Tokens(4096), &g);
        assert_eq!(s.lines.len(), 2);
        for (line, g) in s.lines.iter().zip(&g) {
            for p in &line.points {
                let per_req = KV_TOKEN.0 * p.context.0;
                assert_eq!(
                    p.theoretical,
                    (g.theoretical_capacity.0 - g.weights.0) / per_req
                );
                assert_eq!(
                    p.practical,
                    (g.capacity.0 - g.weights.0 - g.reserved.0) / per_req
                );
                assert!(p.practical <= p.theoretical);
            }
            // Fewer requests fit as the context grows.
            for w in line.points.windows(2) {
                assert!(w[0].practical >= w[1].practical);
            }
        }
        // Textbook §3 in consistent units: 10 GiB / (0.5 MiB × 4,096) = 5, 34 GiB / 2 GiB = 17.
        assert_eq!(max_requests(Bytes::from_gib(10), KV_TOKEN * 4096), 5);
        assert_eq!(max_requests(Bytes::from_gib(34), KV_TOKEN * 4096), 17);
        assert_eq!(
            s.lines[0].current,
            s.lines[0].points[ctx.iter().position(|c| *c == Tokens(4096)).unwrap_or(0)]
        );
        assert_eq!(max_requests(Bytes(10), Bytes(0)), 0);
    }
}
