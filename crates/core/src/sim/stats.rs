//! The statistics of a run, named as `vllm bench serve` names them, and the time series only a
//! simulator can show.
//!
//! Definitions (vLLM `benchmarks/serve.py`, `calculate_metrics`): TTFT is from sending a
//! request to its first token; TPOT of a request is `(e2el − ttft) / (output − 1)` (requests
//! of one output token have none); ITL is every gap between consecutive tokens of a request
//! (all requests pooled); E2EL is from sending to the last token. Percentiles are numpy's
//! default ([`weighted_quantile`]); "median" is P50. Throughputs divide by the benchmark's
//! duration (first send to last completion of the measured requests). Goodput counts requests
//! meeting every target (vLLM `--goodput`); here both the share (`goodput`) and the rate
//! (`request_goodput`, req/s, vLLM's figure) are given.
//!
//! Queueing delay (send → first scheduled), preemptions, batch size and KV-block occupancy
//! over time are the simulator's own. The series keeps at most [`MAX_POINTS`] points: every
//! step while there is room, then every second, fourth, … (the stride doubles and the kept
//! points are thinned), so it covers the whole run in bounded memory.

use crate::base::quantile::weighted_quantile;
use serde::{Deserialize, Serialize};

/// Most points kept in the time series.
pub const MAX_POINTS: usize = 512;

/// Mean, median, standard deviation, P90 and P99 of one statistic, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Dist {
    /// Mean.
    pub mean: f64,
    /// Median (P50).
    pub median: f64,
    /// Standard deviation (population, as numpy's `std`).
    pub std: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
}

/// The [`Dist`] of weighted samples, in the samples' unit.
pub fn dist_weighted(samples: &mut [(f64, u64)]) -> Dist {
    samples.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n: u64 = samples.iter().map(|(_, w)| *w).sum();
    if n == 0 {
        return Dist {
            mean: f64::NAN,
            median: f64::NAN,
            std: f64::NAN,
            p90: f64::NAN,
            p99: f64::NAN,
        };
    }
    let nf = n as f64;
    let mean = samples.iter().map(|(v, w)| v * *w as f64).sum::<f64>() / nf;
    let var = samples
        .iter()
        .map(|(v, w)| (v - mean) * (v - mean) * *w as f64)
        .sum::<f64>()
        / nf;
    Dist {
        mean,
        median: weighted_quantile(samples, 0.5),
        std: var.sqrt(),
        p90: weighted_quantile(samples, 0.9),
        p99: weighted_quantile(samples, 0.99),
    }
}

/// The [`Dist`] of plain samples.
pub fn dist(values: &[f64]) -> Dist {
    let mut w: Vec<(f64, u64)> = values.iter().map(|v| (*v, 1)).collect();
    dist_weighted(&mut w)
}

/// One point of the time series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Seconds from the start.
    pub t_s: f64,
    /// Requests running (the batch).
    pub batch: u64,
    /// Requests waiting in the engine's queue.
    pub waiting: u64,
    /// Share of the KV blocks in use, 0–1.
    pub kv_occupancy: f64,
}

/// The downsampled time series.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Series {
    /// Points in time order.
    pub points: Vec<Point>,
    /// Steps between kept points.
    pub stride: u64,
    #[serde(skip)]
    counter: u64,
}

impl Series {
    /// An empty series keeping every step.
    pub fn new() -> Series {
        Series {
            points: Vec::with_capacity(MAX_POINTS),
            stride: 1,
            counter: 0,
        }
    }

    /// Offers one step's state; kept every `stride` steps.
    pub fn record(&mut self, t_s: f64, batch: u64, waiting: u64, kv_occupancy: f64) {
        let keep = self.counter.is_multiple_of(self.stride.max(1));
        self.counter += 1;
        if !keep {
            return;
        }
        if self.points.len() >= MAX_POINTS {
            let mut i = 0;
            self.points.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.stride = self.stride.saturating_mul(2);
        }
        self.points.push(Point {
            t_s,
            batch,
            waiting,
            kv_occupancy,
        });
    }
}

/// A finished request's figures (times in seconds from the start).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finished {
    /// Prompt tokens.
    pub input: u64,
    /// Output tokens asked for.
    pub output: u64,
    /// Output tokens produced.
    pub generated: u64,
    /// Sent.
    pub send_s: f64,
    /// First token.
    pub first_s: f64,
    /// Last token.
    pub done_s: f64,
    /// First scheduled.
    pub scheduled_s: f64,
    /// The server's frontend path before the engine queued it, seconds (not queueing).
    pub frontend_s: f64,
}

/// Per-request and per-step figures gathered during a run (measured requests only: the
/// caller says which, so that a fleet can measure by the request's place in the whole stream).
#[derive(Debug, Clone, Default)]
pub struct Collector {
    pub ttft_ms: Vec<f64>,
    pub tpot_ms: Vec<f64>,
    pub e2el_ms: Vec<f64>,
    pub queue_ms: Vec<f64>,
    /// The server's path of each request (its serial work and fixed latency), ms.
    pub frontend_ms: Vec<f64>,
    /// From first scheduled to the first token (the prefill, chunks and steps shared with
    /// others), ms.
    pub prefill_ms: Vec<f64>,
    /// (gap in ms, count): one entry per step for the tokens right after the previous step,
    /// one per other gap.
    pub itl_ms: Vec<(f64, u64)>,
    contiguous: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub first_send_s: f64,
    pub last_done_s: f64,
    /// (ttft ms, tpot ms) per completed measured request, for goodput.
    pub per_request: Vec<(f64, f64)>,
    pub batch_sum: f64,
    pub steps: u64,
    pub max_batch: u64,
    pub max_blocks_used: u64,
}

impl Collector {
    /// A collector for `n` requests.
    pub fn new(n: usize) -> Collector {
        Collector {
            ttft_ms: Vec::with_capacity(n),
            tpot_ms: Vec::with_capacity(n),
            e2el_ms: Vec::with_capacity(n),
            queue_ms: Vec::with_capacity(n),
            frontend_ms: Vec::with_capacity(n),
            prefill_ms: Vec::with_capacity(n),
            per_request: Vec::with_capacity(n),
            first_send_s: f64::INFINITY,
            last_done_s: 0.0,
            ..Collector::default()
        }
    }

    /// One step of `dt` seconds with `batch` running and `blocks` in use.
    pub fn step(&mut self, _dt: f64, batch: u64, blocks: u64) {
        self.steps += 1;
        self.batch_sum += batch as f64;
        self.max_batch = self.max_batch.max(batch);
        self.max_blocks_used = self.max_blocks_used.max(blocks);
    }

    /// A token of a request (`measured`: not a warm-up one), `gap` seconds after its previous
    /// one; `contiguous` when the previous token came at the end of the step before (the gap
    /// is then this step's time).
    #[inline(always)]
    pub fn itl(&mut self, measured: bool, gap: f64, contiguous: bool) {
        if !measured {
            return;
        }
        if contiguous {
            self.contiguous += 1;
        } else {
            self.itl_ms.push((gap * 1e3, 1));
        }
    }

    /// Ends a step of `dt` seconds: its contiguous tokens become one weighted ITL entry.
    pub fn flush_step(&mut self, dt: f64) {
        if self.contiguous > 0 {
            self.itl_ms.push((dt * 1e3, self.contiguous));
            self.contiguous = 0;
        }
    }

    /// A request finished (`measured`: not a warm-up one).
    pub fn finish(&mut self, measured: bool, r: &Finished) {
        if !measured {
            return;
        }
        let ttft = (r.first_s - r.send_s) * 1e3;
        let e2el = (r.done_s - r.send_s) * 1e3;
        self.ttft_ms.push(ttft);
        self.e2el_ms.push(e2el);
        let tpot = if r.output > 1 {
            let t = (e2el - ttft) / (r.output - 1) as f64;
            self.tpot_ms.push(t);
            t
        } else {
            0.0
        };
        self.per_request.push((ttft, tpot));
        // The entry time as the scheduler computed it (send + frontend), so that a request
        // scheduled on entry has a queueing delay of exactly 0.
        let entered_s = r.send_s + r.frontend_s;
        self.queue_ms
            .push(((r.scheduled_s - entered_s) * 1e3).max(0.0));
        self.frontend_ms.push(r.frontend_s * 1e3);
        self.prefill_ms
            .push(((r.first_s - r.scheduled_s.max(entered_s)) * 1e3).max(0.0));
        self.input_tokens += r.input;
        self.output_tokens += r.generated;
        self.first_send_s = self.first_send_s.min(r.send_s);
        self.last_done_s = self.last_done_s.max(r.done_s);
    }

    /// Adds another replica's figures to these (a fleet's pooled statistics: samples
    /// concatenated, counts summed, extremes kept).
    pub fn absorb(&mut self, o: Collector) {
        self.ttft_ms.extend(o.ttft_ms);
        self.tpot_ms.extend(o.tpot_ms);
        self.e2el_ms.extend(o.e2el_ms);
        self.queue_ms.extend(o.queue_ms);
        self.frontend_ms.extend(o.frontend_ms);
        self.prefill_ms.extend(o.prefill_ms);
        self.itl_ms.extend(o.itl_ms);
        self.per_request.extend(o.per_request);
        self.contiguous += o.contiguous;
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.first_send_s = self.first_send_s.min(o.first_send_s);
        self.last_done_s = self.last_done_s.max(o.last_done_s);
        self.batch_sum += o.batch_sum;
        self.steps += o.steps;
        self.max_batch = self.max_batch.max(o.max_batch);
        self.max_blocks_used = self.max_blocks_used.max(o.max_blocks_used);
    }
}
