//! Latency against throughput: per-user and total tokens/s as the batch grows.

use crate::base::units::Seconds;
use serde::{Deserialize, Serialize};

/// One batch size on the latency–throughput curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LtPoint {
    /// Concurrent requests.
    pub batch: u64,
    /// Time per output token at this batch.
    pub tpot: Seconds,
    /// Output tokens/s seen by one user: 1 / TPOT.
    pub per_user_tokens_per_s: f64,
    /// Output tokens/s of the whole GPU (replica): batch / TPOT.
    pub total_tokens_per_s: f64,
}

impl LtPoint {
    /// From a batch and its time per output token; `None` when TPOT is not positive/finite.
    pub fn new(batch: u64, tpot: Seconds) -> Option<LtPoint> {
        (tpot.0.is_finite() && tpot.0 > 0.0 && batch > 0).then(|| LtPoint {
            batch,
            tpot,
            per_user_tokens_per_s: 1.0 / tpot.0,
            total_tokens_per_s: batch as f64 / tpot.0,
        })
    }
}

/// One GPU's curve: batch grows from 1 until memory runs out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LtCurve {
    /// GPU display name.
    pub gpu: String,
    /// Points in increasing batch order.
    pub points: Vec<LtPoint>,
    /// The chosen operating point (current batch), when it fits.
    pub operating: Option<LtPoint>,
}

/// The latency–throughput chart: one curve per GPU.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LatencyThroughput {
    /// One curve per GPU.
    pub curves: Vec<LtCurve>,
}

/// Batch sizes sampled for a curve: 1, 2, 4, … and every batch in between when there are
/// few, always ending at `max_batch`.
pub fn batch_grid(max_batch: u64) -> Vec<u64> {
    if max_batch <= 32 {
        return (1..=max_batch).collect();
    }
    let mut v: Vec<u64> = (1..=16).collect();
    let mut b = 16f64;
    while (b as u64) < max_batch {
        b *= 2f64.powf(0.25);
        v.push((b.round() as u64).min(max_batch));
    }
    v.push(max_batch);
    crate::base::order::sort_dedup(&mut v);
    v
}

/// A curve for one GPU from a TPOT model: `tpot(batch)` for batch = 1 … `max_batch` (the
/// largest batch memory allows); batches whose TPOT is `None` are skipped.
pub fn lt_curve(
    gpu: impl Into<String>,
    max_batch: u64,
    operating_batch: u64,
    tpot: impl Fn(u64) -> Option<Seconds>,
) -> LtCurve {
    let points: Vec<LtPoint> = batch_grid(max_batch)
        .into_iter()
        .filter_map(|b| tpot(b).and_then(|t| LtPoint::new(b, t)))
        .collect();
    let operating = if operating_batch >= 1 && operating_batch <= max_batch {
        tpot(operating_batch).and_then(|t| LtPoint::new(operating_batch, t))
    } else {
        None
    };
    LtCurve {
        gpu: gpu.into(),
        points,
        operating,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_throughput_trades_latency_for_throughput() {
        // A bandwidth-bound toy model: TPOT = 10 ms + 0.1 ms per request.
        let c = lt_curve("g", 100, 8, |b| Some(Seconds(0.010 + 0.0001 * b as f64)));
        assert_eq!(c.points.first().map(|p| p.batch), Some(1));
        assert_eq!(c.points.last().map(|p| p.batch), Some(100));
        for w in c.points.windows(2) {
            assert!(w[1].total_tokens_per_s > w[0].total_tokens_per_s);
            assert!(w[1].per_user_tokens_per_s < w[0].per_user_tokens_per_s);
        }
        assert_eq!(c.operating.map(|p| p.batch), Some(8));
        assert!(lt_curve("g", 4, 9, |_| Some(Seconds(0.01)))
            .operating
            .is_none());
        assert!(LtPoint::new(1, Seconds(0.0)).is_none());
    }
}
