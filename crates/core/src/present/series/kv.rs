//! KV cache against tokens: KV memory per batch size as tokens per request grow, each GPU's
//! KV budget, and where each batch runs out of it.

use crate::base::units::{Bytes, Tokens};
use crate::calc::memory::TextbookInputs;
use serde::{Deserialize, Serialize};

/// One line of the KV chart: KV memory as tokens per request grow, for a fixed batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KvLine {
    /// Concurrent requests.
    pub batch: u64,
    /// (tokens per request, KV memory for the whole batch) in increasing token order.
    pub points: Vec<(Tokens, Bytes)>,
}

/// A GPU's limit line on the KV chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityLine {
    /// GPU display name.
    pub gpu: String,
    /// The GPU's usable capacity.
    pub capacity: Bytes,
    /// Memory left for the KV cache: capacity − weights − activations − overhead.
    pub kv_budget: Bytes,
}

/// KV memory against tokens: one line per batch size, one budget line per GPU.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct KvSeries {
    /// KV cache per token (all layers, K and V).
    pub kv_per_token: Bytes,
    /// One line per batch size, increasing batch.
    pub lines: Vec<KvLine>,
    /// One line per GPU.
    pub capacities: Vec<CapacityLine>,
    /// The current context length per request (marked on the chart).
    pub current_tokens: Tokens,
    /// Where each batch's line crosses each GPU's KV budget (out of memory beyond).
    pub oom: Vec<OomPoint>,
}

/// The token count at which a batch runs out of a GPU's KV budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OomPoint {
    /// Index into [`KvSeries::capacities`].
    pub gpu: usize,
    /// Batch size.
    pub batch: u64,
    /// The smallest tokens per request whose KV for the batch exceeds the budget.
    pub tokens: Tokens,
}

/// Input for one GPU in the KV and batch series: its capacity and what is not KV.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuBudget {
    /// GPU display name.
    pub gpu: String,
    /// Capacity for the textbook's theoretical count (the marketed figure read as GiB).
    pub theoretical_capacity: Bytes,
    /// Usable capacity (what the driver reports): the practical count and the capacity lines.
    pub capacity: Bytes,
    /// Weights held by this GPU.
    pub weights: Bytes,
    /// Activations and runtime overhead reserved besides the KV cache (the textbook's
    /// "in practice" margin).
    pub reserved: Bytes,
}

impl GpuBudget {
    /// From the textbook rule's inputs (`core::memory::textbook_for`).
    pub fn from_textbook(gpu: impl Into<String>, t: &TextbookInputs) -> GpuBudget {
        GpuBudget {
            gpu: gpu.into(),
            theoretical_capacity: t.marketed_capacity,
            capacity: t.usable_capacity,
            weights: t.weights,
            reserved: t.activation_reserve,
        }
    }

    /// The textbook's theoretical KV budget: theoretical capacity − weights.
    pub fn theoretical(&self) -> Bytes {
        self.theoretical_capacity.saturating_sub(self.weights)
    }

    /// The practical KV budget: capacity − weights − reserved.
    pub fn practical(&self) -> Bytes {
        self.capacity
            .saturating_sub(self.weights)
            .saturating_sub(self.reserved)
    }
}

/// Number of samples along the token axis of the KV chart.
const KV_SAMPLES: u64 = 32;

/// KV memory for `batch` requests of `tokens` tokens each: kv_per_token × tokens × batch
/// (saturating; textbook §2: 0.5 MiB × 4,096 × 16 = 32 GiB).
pub fn kv_bytes(kv_per_token: Bytes, tokens: u64, batch: u64) -> Bytes {
    kv_per_token * tokens * batch
}

/// KV memory against tokens for each batch size in `batches` (zeros dropped, sorted,
/// deduplicated), from 0 to `max_tokens` tokens, with each GPU's KV budget and the points
/// where each batch runs out of it. `per_request(tokens)` is the KV of one request of that
/// many tokens, non-decreasing (uniform attention: KV per token × tokens; sliding-window
/// layers stop growing at their window; `core::memory::KvProfile::per_request`).
pub fn kv_series(
    per_request: impl Fn(u64) -> Bytes,
    max_tokens: Tokens,
    current_tokens: Tokens,
    batches: &[u64],
    gpus: &[GpuBudget],
) -> KvSeries {
    let mut bs: Vec<u64> = batches.iter().copied().filter(|b| *b > 0).collect();
    crate::base::order::sort_dedup(&mut bs);
    let max_t = max_tokens.0.max(1);
    let lines: Vec<KvLine> = bs
        .iter()
        .map(|&batch| KvLine {
            batch,
            points: (0..=KV_SAMPLES)
                .map(|i| {
                    let t = max_t.saturating_mul(i) / KV_SAMPLES;
                    (Tokens(t), per_request(t) * batch)
                })
                .collect(),
        })
        .collect();
    let mut oom = Vec::new();
    for (gi, g) in gpus.iter().enumerate() {
        let budget = g.practical();
        for &batch in &bs {
            if per_request(max_t) * batch <= budget {
                continue;
            }
            // Smallest t with per_request(t) × batch > budget (monotone: binary search).
            let (mut lo, mut hi) = (0u64, max_t);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if per_request(mid) * batch > budget {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            oom.push(OomPoint {
                gpu: gi,
                batch,
                tokens: Tokens(lo),
            });
        }
    }
    KvSeries {
        kv_per_token: per_request(1),
        lines,
        capacities: gpus
            .iter()
            .map(|g| CapacityLine {
                gpu: g.gpu.clone(),
                capacity: g.capacity,
                kv_budget: g.practical(),
            })
            .collect(),
        current_tokens,
        oom,
    }
}

impl KvSeries {
    /// Top of the value axis: the largest KV value or capacity.
    pub fn max_bytes(&self) -> Bytes {
        let lines = self
            .lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1))
            .max()
            .unwrap_or(Bytes::ZERO);
        let caps = self
            .capacities
            .iter()
            .map(|c| c.capacity)
            .max()
            .unwrap_or(Bytes::ZERO);
        lines.max(caps)
    }

    /// Largest token count on the x axis.
    pub fn max_tokens(&self) -> Tokens {
        self.lines
            .iter()
            .filter_map(|l| l.points.last().map(|p| p.0))
            .max()
            .unwrap_or(Tokens(0))
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::base::units::GIB;

    // Llama-2-7b fp16: KV per token = 2 × 32 layers × 32 heads × 128 × 2 B = 524,288 B.
    pub(crate) const KV_TOKEN: Bytes = Bytes(2 * 32 * 32 * 128 * 2);
    // 6,738,415,616 parameters × 2 B.
    const WEIGHTS: Bytes = Bytes(6_738_415_616 * 2);

    pub(crate) fn gpus() -> Vec<GpuBudget> {
        vec![
            GpuBudget {
                gpu: "A10G".into(),
                theoretical_capacity: Bytes::from_gib(24),
                capacity: Bytes(24 * 1_000_000_000),
                weights: WEIGHTS,
                reserved: Bytes::from_gib(1),
            },
            GpuBudget {
                gpu: "L40S".into(),
                theoretical_capacity: Bytes::from_gib(48),
                capacity: Bytes(48 * 1_000_000_000),
                weights: WEIGHTS,
                reserved: Bytes::from_gib(1),
            },
        ]
    }

    #[test]
    fn kv_grows_monotonically_and_hits_textbook_value() {
        let s = kv_series(
            |t| KV_TOKEN * t,
            Tokens(4096),
            Tokens(4096),
            &[16, 1, 4, 4, 0],
            &gpus(),
        );
        assert_eq!(
            s.lines.iter().map(|l| l.batch).collect::<Vec<_>>(),
            vec![1, 4, 16]
        );
        for l in &s.lines {
            for w in l.points.windows(2) {
                assert!(w[0].0 < w[1].0 && w[0].1 <= w[1].1, "{w:?}");
            }
        }
        // 0.5 MiB × 4,096 × 16 = 32 GiB (textbook §2).
        let last = s
            .lines
            .iter()
            .find(|l| l.batch == 16)
            .and_then(|l| l.points.last());
        assert_eq!(last, Some(&(Tokens(4096), Bytes(32 * GIB))));
        // Larger batches lie above smaller ones at every token count.
        for (a, b) in s.lines.iter().zip(s.lines.iter().skip(1)) {
            for (p, q) in a.points.iter().zip(&b.points) {
                assert!(p.1 <= q.1);
            }
        }
    }

    #[test]
    fn capacity_lines_sit_at_each_gpus_capacity() {
        let g = gpus();
        let s = kv_series(|t| KV_TOKEN * t, Tokens(8192), Tokens(4096), &[1, 16], &g);
        assert_eq!(s.capacities.len(), g.len());
        for (c, g) in s.capacities.iter().zip(&g) {
            assert_eq!(c.capacity, g.capacity);
            assert_eq!(
                c.kv_budget,
                Bytes(g.capacity.0 - g.weights.0 - g.reserved.0)
            );
        }
        assert_eq!(
            s.max_bytes(),
            kv_bytes(KV_TOKEN, 8192, 16).max(g[1].capacity)
        );
        // Out of memory just past floor(budget / (KV per token × batch)) tokens.
        for o in &s.oom {
            let budget = s.capacities[o.gpu].kv_budget.0;
            assert_eq!(o.tokens.0, budget / (KV_TOKEN.0 * o.batch) + 1, "{o:?}");
        }
        // Batch 16 overflows both GPUs before 8,192 tokens; batch 1 neither.
        assert_eq!(s.oom.iter().filter(|o| o.batch == 16).count(), 2);
        assert!(s.oom.iter().all(|o| o.batch != 1));
    }

    #[test]
    fn sliding_window_kv_stops_growing() {
        // Half the layers windowed at 1,024 tokens.
        let half = Bytes(KV_TOKEN.0 / 2);
        let per_req = |t: u64| half * t + half * t.min(1024);
        let s = kv_series(per_req, Tokens(8192), Tokens(4096), &[4], &gpus());
        let pts = &s.lines[0].points;
        for w in pts.windows(2) {
            assert!(w[0].1 <= w[1].1);
        }
        assert_eq!(pts.last().map(|p| p.1), Some(per_req(8192) * 4));
    }
}
