//! Prepared chart data: plain series computed from core results, ready to lay out.
//!
//! Every chart in the app draws one of these types and nothing else, so the drawing code
//! only lays out and the numbers are tested here, natively. Quantities keep their units
//! (`Bytes`, `FlopsPerSecond`, …); bare `f64`s carry the unit in their name.
//!
//! Sources: the textbook chapter (`WORKED_EXAMPLES.md` §2–§5): KV cache = KV per token ×
//! tokens × requests; max concurrent requests = floor(budget / KV per request); the roofline
//! attainable = min(peak, intensity × bandwidth); matmul intensity = MNK / (MK + KN + MN)
//! at 2 bytes per element.

use crate::core::base::dtype::Dtype;
use crate::core::base::units::{Bytes, BytesPerSecond, Flops, FlopsPerSecond, Seconds, Tokens};
use crate::core::calc::memory::TextbookInputs;
use crate::core::calc::roofline::{attainable, ridge_point};
pub use crate::core::calc::roofline::{Bound, Matmul};
use crate::core::hardware::catalog::{Accelerator, Peak};
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------------------------
// Memory bars
// ---------------------------------------------------------------------------------------------

/// One GPU's memory, split into what occupies it (all in bytes, per GPU).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryBar {
    /// GPU display name (untrusted text: render as text only).
    pub gpu: String,
    /// Model weights held by this GPU.
    pub weights: Bytes,
    /// KV cache for the chosen requests.
    pub kv: Bytes,
    /// Activations (intermediate tensors) at peak.
    pub activations: Bytes,
    /// Runtime overhead (CUDA context, allocator, graphs).
    pub overhead: Bytes,
    /// Free memory left: capacity − used, zero when it does not fit.
    pub free: Bytes,
    /// Memory needed beyond capacity: used − capacity, zero when it fits.
    pub over: Bytes,
    /// Usable capacity of the GPU.
    pub capacity: Bytes,
}

impl MemoryBar {
    /// Builds a bar; `free` and `over` are derived so that
    /// weights + kv + activations + overhead + free − over = capacity.
    pub fn new(
        gpu: impl Into<String>,
        capacity: Bytes,
        weights: Bytes,
        kv: Bytes,
        activations: Bytes,
        overhead: Bytes,
    ) -> MemoryBar {
        let used = weights + kv + activations + overhead;
        MemoryBar {
            gpu: gpu.into(),
            weights,
            kv,
            activations,
            overhead,
            free: capacity.saturating_sub(used),
            over: used.saturating_sub(capacity),
            capacity,
        }
    }

    /// Weights + KV + activations + overhead.
    pub fn used(&self) -> Bytes {
        self.weights + self.kv + self.activations + self.overhead
    }

    /// Whether everything fits in the capacity.
    pub fn fits(&self) -> bool {
        self.used() <= self.capacity
    }
}

/// The "does it fit?" chart: one stacked bar per GPU.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MemoryBars {
    /// One bar per selected GPU, in selection order.
    pub bars: Vec<MemoryBar>,
}

impl MemoryBars {
    /// The largest of capacities and used totals: the top of the value axis.
    pub fn max_bytes(&self) -> Bytes {
        self.bars
            .iter()
            .map(|b| b.capacity.max(b.used()))
            .max()
            .unwrap_or(Bytes::ZERO)
    }
}

// ---------------------------------------------------------------------------------------------
// KV cache against tokens
// ---------------------------------------------------------------------------------------------

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
    crate::core::base::order::sort_dedup(&mut bs);
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

// ---------------------------------------------------------------------------------------------
// Max concurrent requests against context length
// ---------------------------------------------------------------------------------------------

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
    crate::core::base::order::sort_dedup(&mut v);
    v.into_iter().map(Tokens).collect()
}

/// Batch series for each GPU over `contexts`, with the point at `current`;
/// `per_request(tokens)` is the KV of one request (see [`kv_series`]).
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

// ---------------------------------------------------------------------------------------------
// Roofline
// ---------------------------------------------------------------------------------------------

/// A compute ceiling of one GPU at one precision.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ceiling {
    /// Precision of the ceiling.
    pub dtype: Dtype,
    /// Dense peak.
    pub peak: FlopsPerSecond,
    /// Ridge point in FLOP per byte: peak / bandwidth.
    pub ridge_flop_per_byte: f64,
}

/// One GPU on the roofline: its bandwidth slope and one ceiling per supported precision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RooflineGpu {
    /// GPU display name.
    pub gpu: String,
    /// Peak DRAM bandwidth (the slope).
    pub bandwidth: BytesPerSecond,
    /// Ceilings, lowest peak first (bf16 before fp8 before fp4).
    pub ceilings: Vec<Ceiling>,
}

/// Precisions drawn as roofline ceilings (16-bit first; fp16 is drawn only when it differs
/// from bf16).
pub const CEILING_DTYPES: &[Dtype] = &[
    Dtype::Bf16,
    Dtype::Fp16,
    Dtype::Fp8,
    Dtype::Int8,
    Dtype::Fp4,
];

impl RooflineGpu {
    /// Bandwidth and the dense ceilings the catalog publishes for this accelerator.
    pub fn from_accelerator(a: &Accelerator) -> RooflineGpu {
        let mut ceilings: Vec<Ceiling> = Vec::new();
        for d in CEILING_DTYPES {
            if let Peak::Dense(p) = a.peak(*d) {
                if p.0 > 0.0 && a.bandwidth.0 > 0.0 && !ceilings.iter().any(|c| c.peak == p) {
                    ceilings.push(Ceiling {
                        dtype: *d,
                        peak: p,
                        ridge_flop_per_byte: ridge_point(p, a.bandwidth),
                    });
                }
            }
        }
        crate::core::base::order::sort_by(&mut ceilings, &|x, y| x.peak.0.total_cmp(&y.peak.0));
        RooflineGpu {
            gpu: a.name.clone(),
            bandwidth: a.bandwidth,
            ceilings,
        }
    }

    /// The ceiling for a precision, if published.
    pub fn ceiling(&self, d: Dtype) -> Option<&Ceiling> {
        self.ceilings.iter().find(|c| c.dtype == d).or_else(|| {
            // bf16 and fp16 share a ceiling when their peaks are equal (only one is kept).
            let twin = match d {
                Dtype::Fp16 => Dtype::Bf16,
                Dtype::Bf16 => Dtype::Fp16,
                _ => return None,
            };
            self.ceilings.iter().find(|c| c.dtype == twin)
        })
    }

    /// Attainable FLOP/s at `intensity_flop_per_byte` under the ceiling `peak`:
    /// min(peak, intensity × bandwidth).
    pub fn attainable(&self, intensity_flop_per_byte: f64, peak: FlopsPerSecond) -> FlopsPerSecond {
        attainable(peak, self.bandwidth, intensity_flop_per_byte).flops_per_s
    }
}

/// What a workload point stands for, for colour and legend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PointKind {
    /// Prompt processing: many tokens at once.
    Prefill,
    /// One new token per request per step.
    Decode,
    /// A matmul from the explorer.
    Matmul,
    /// A reference workload given by its intensity only (the textbook's 210 and 1,000 FLOP/B).
    Reference,
}

impl PointKind {
    /// Translation key of the phase name.
    pub const fn label_key(self) -> &'static str {
        match self {
            PointKind::Prefill => "chart_phase_prefill",
            PointKind::Decode => "chart_phase_decode",
            PointKind::Matmul => "chart_phase_matmul",
            PointKind::Reference => "chart_phase_reference",
        }
    }
}

/// A workload on the roofline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkPoint {
    /// Operator or workload name as shown (`q_proj`, `decode`, `210 FLOP/B`).
    pub name: String,
    /// PointKind, for colour.
    pub phase: PointKind,
    /// FLOPs of the operator, when known (reference points have none).
    pub flops: Option<Flops>,
    /// Bytes moved, when known.
    pub bytes: Option<Bytes>,
    /// FLOPs / bytes.
    pub intensity_flop_per_byte: f64,
    /// min(peak, intensity × bandwidth) on the point's GPU.
    pub attainable: FlopsPerSecond,
    /// Which roof limits it.
    pub bound: Bound,
    /// Index into [`RooflineData::gpus`] of the GPU the point is placed against.
    pub gpu: usize,
    /// Where the same operator was at batch 1 (intensity FLOP/B, attainable), for the trail.
    pub batch1: Option<(f64, FlopsPerSecond)>,
    /// Whether the chart names this point even among many (totals, reference points).
    pub named: bool,
}

/// Everything the roofline chart draws.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RooflineData {
    /// GPUs, each with its slope and ceilings.
    pub gpus: Vec<RooflineGpu>,
    /// PointSpec points.
    pub points: Vec<WorkPoint>,
    /// Precision of the ceiling the points are placed under.
    pub compute_dtype: Option<Dtype>,
}

/// A workload before it is placed: name, phase, FLOPs and bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointSpec {
    /// Name as shown.
    pub name: String,
    /// PointKind.
    pub phase: PointKind,
    /// FLOPs and bytes moved; `None` for a reference point given by intensity.
    pub cost: Option<(Flops, Bytes)>,
    /// Intensity in FLOP/B (FLOPs / bytes when `cost` is given).
    pub intensity_flop_per_byte: f64,
    /// FLOPs and bytes of the same operator at batch 1, for the trail.
    pub batch1: Option<(Flops, Bytes)>,
    /// Whether the chart names this point even among many (totals, reference points).
    pub named: bool,
}

impl PointSpec {
    /// From FLOPs and bytes; intensity = FLOPs / bytes (0 when bytes is 0).
    pub fn measured(
        name: impl Into<String>,
        phase: PointKind,
        flops: Flops,
        bytes: Bytes,
    ) -> PointSpec {
        PointSpec {
            name: name.into(),
            phase,
            cost: Some((flops, bytes)),
            intensity_flop_per_byte: intensity(flops, bytes),
            batch1: None,
            named: false,
        }
    }

    /// A reference workload known only by its intensity.
    pub fn at_intensity(name: impl Into<String>, intensity_flop_per_byte: f64) -> PointSpec {
        PointSpec {
            name: name.into(),
            phase: PointKind::Reference,
            cost: None,
            intensity_flop_per_byte,
            batch1: None,
            named: true,
        }
    }

    /// Marks the point to be named on the chart even among many.
    pub fn named(mut self) -> PointSpec {
        self.named = true;
        self
    }

    /// Adds the batch-1 position of the same operator (the trail's start).
    pub fn with_batch1(mut self, flops: Flops, bytes: Bytes) -> PointSpec {
        self.batch1 = Some((flops, bytes));
        self
    }
}

/// FLOPs / bytes in FLOP per byte; 0 when no bytes move.
pub fn intensity(flops: Flops, bytes: Bytes) -> f64 {
    if bytes.0 == 0 {
        0.0
    } else {
        flops.0 / bytes.0 as f64
    }
}

/// Places workloads on the roofline of `gpus[0]` under the `dtype` ceiling (falling back to
/// that GPU's lowest ceiling when `dtype` has none). Points with a non-finite or non-positive
/// intensity are left out (they cannot sit on a log axis).
pub fn roofline(gpus: Vec<RooflineGpu>, dtype: Dtype, workloads: &[PointSpec]) -> RooflineData {
    let mut points = Vec::new();
    if let Some(g) = gpus.first() {
        let ceiling = g.ceiling(dtype).or_else(|| g.ceilings.first());
        if let Some(c) = ceiling {
            for w in workloads {
                let i = w.intensity_flop_per_byte;
                if !(i.is_finite() && i > 0.0) {
                    continue;
                }
                let batch1 = w.batch1.and_then(|(f, b)| {
                    let i1 = intensity(f, b);
                    (i1.is_finite() && i1 > 0.0).then(|| (i1, g.attainable(i1, c.peak)))
                });
                points.push(WorkPoint {
                    name: w.name.clone(),
                    phase: w.phase,
                    flops: w.cost.map(|p| p.0),
                    bytes: w.cost.map(|p| p.1),
                    intensity_flop_per_byte: i,
                    attainable: g.attainable(i, c.peak),
                    bound: if i < c.ridge_flop_per_byte {
                        Bound::Memory
                    } else {
                        Bound::Compute
                    },
                    gpu: 0,
                    batch1,
                    named: w.named,
                });
            }
        }
    }
    RooflineData {
        gpus,
        points,
        compute_dtype: Some(dtype),
    }
}

/// Which points a model roofline shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RooflineDetail {
    /// Prefill and decode as a whole (two points).
    Totals,
    /// The totals plus every operator (q/k/v/o, attention, MLP or experts, lm_head, …).
    Operators,
}

/// Roofline data for a model step on the selected GPUs: prefill (`prompt` tokens per
/// sequence) and decode (`context` tokens of context) at `batch` sequences, each point with its
/// trail from batch 1. FLOPs and bytes come from `core::roofline::model_ops` (per GPU under
/// tensor parallelism `tp`); points are placed under `compute`'s ceiling of the first GPU.
/// `name(key)` turns an operator key (`op_attn_q`, `op_decode_total`, …) into the shown name.
#[allow(clippy::too_many_arguments)] // reason: one step of a scenario needs all of these
pub fn model_roofline(
    model: &crate::core::model::ModelDesc,
    gpus: &[&Accelerator],
    precisions: &crate::core::calc::roofline::Precisions,
    (batch, prompt, context): (u64, u64, u64),
    tp: u64,
    compute: Dtype,
    detail: RooflineDetail,
    name: impl Fn(&str) -> String,
) -> Result<RooflineData, crate::core::base::error::CalcError> {
    use crate::core::calc::roofline::{model_ops, total, Pass, Phase as RPhase};
    let mut workloads = Vec::new();
    for (phase, seq) in [(RPhase::Prefill, prompt), (RPhase::Decode, context)] {
        let at = |b: u64| {
            model_ops(
                model,
                &Pass {
                    phase,
                    batch: b,
                    seq,
                },
                precisions,
                tp,
            )
        };
        let (ops, ops1) = (at(batch)?, at(1)?);
        let ph = match phase {
            RPhase::Prefill => PointKind::Prefill,
            RPhase::Decode => PointKind::Decode,
        };
        let (t, t1) = (total(&ops, phase), total(&ops1, phase));
        workloads.push(
            PointSpec::measured(name(&t.name_key), ph, t.flops, t.bytes)
                .with_batch1(t1.flops, t1.bytes)
                .named(),
        );
        if detail == RooflineDetail::Operators {
            for o in &ops {
                let shown = match o.window {
                    Some(w) => format!("{} ({} {w})", name(&o.name_key), name(&t.name_key)),
                    None => name(&o.name_key),
                };
                let mut wl = PointSpec::measured(shown, ph, o.flops, o.bytes);
                if let Some(o1) = ops1.iter().find(|x| {
                    x.name_key == o.name_key && x.window == o.window && x.layers == o.layers
                }) {
                    wl = wl.with_batch1(o1.flops, o1.bytes);
                }
                workloads.push(wl);
            }
        }
    }
    let rgpus = gpus
        .iter()
        .map(|a| RooflineGpu::from_accelerator(a))
        .collect();
    Ok(roofline(rgpus, compute, &workloads))
}

impl RooflineData {
    /// X range in FLOP/B as whole decades (10^a, 10^b) covering every ridge and point, at
    /// least 0.1 … 10,000.
    pub fn x_decades(&self) -> (i32, i32) {
        let mut lo: f64 = 0.1;
        let mut hi: f64 = 1e4;
        let xs = self
            .gpus
            .iter()
            .flat_map(|g| g.ceilings.iter().map(|c| c.ridge_flop_per_byte))
            .chain(self.points.iter().map(|p| p.intensity_flop_per_byte))
            .chain(self.points.iter().filter_map(|p| p.batch1.map(|b| b.0)));
        for x in xs.filter(|x| x.is_finite() && *x > 0.0) {
            lo = lo.min(x / 2.0);
            hi = hi.max(x * 4.0);
        }
        (decade_floor(lo), decade_ceil(hi))
    }

    /// Y range in FLOP/s as whole decades covering all ceilings and the slope at the left edge.
    pub fn y_decades(&self) -> (i32, i32) {
        let (xlo, _) = self.x_decades();
        let mut lo = f64::INFINITY;
        let mut hi: f64 = 1e12;
        for g in &self.gpus {
            lo = lo.min(10f64.powi(xlo) * g.bandwidth.0);
            for c in &g.ceilings {
                hi = hi.max(c.peak.0 * 2.0);
            }
        }
        for p in &self.points {
            lo = lo.min(p.attainable.0);
        }
        if !lo.is_finite() || lo <= 0.0 {
            lo = 1e9;
        }
        (decade_floor(lo), decade_ceil(hi))
    }
}

fn decade_floor(v: f64) -> i32 {
    v.log10().floor().clamp(-300.0, 300.0) as i32
}

fn decade_ceil(v: f64) -> i32 {
    v.log10().ceil().clamp(-300.0, 300.0) as i32
}

// ---------------------------------------------------------------------------------------------
// Matmul explorer
// ---------------------------------------------------------------------------------------------

impl PointSpec {
    /// A matmul as a roofline point (half precision, as [`Matmul::bytes`] counts).
    pub fn matmul(mm: &Matmul, name: impl Into<String>) -> PointSpec {
        PointSpec {
            name: name.into(),
            phase: PointKind::Matmul,
            cost: Some((mm.flops(), mm.bytes())),
            intensity_flop_per_byte: mm.intensity_flop_per_byte(),
            batch1: None,
            named: true,
        }
    }
}

/// A one-click example of the matmul explorer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatmulPreset {
    /// Translation key of the preset's name.
    pub label_key: &'static str,
    /// The matmul.
    pub matmul: Matmul,
}

/// The textbook's examples (§5): M = N = K = 1,024 and 4,096; one projection s × h × h at
/// h = 4,096 for prefill (s = 1,024) and decode (s = 1).
pub const MATMUL_PRESETS: &[MatmulPreset] = &[
    MatmulPreset {
        label_key: "matmul_square_1024",
        matmul: Matmul {
            m: 1024,
            n: 1024,
            k: 1024,
        },
    },
    MatmulPreset {
        label_key: "matmul_square_4096",
        matmul: Matmul {
            m: 4096,
            n: 4096,
            k: 4096,
        },
    },
    MatmulPreset {
        label_key: "matmul_prefill_projection",
        matmul: Matmul {
            m: 1024,
            n: 4096,
            k: 4096,
        },
    },
    MatmulPreset {
        label_key: "matmul_decode_projection",
        matmul: Matmul {
            m: 1,
            n: 4096,
            k: 4096,
        },
    },
];

// ---------------------------------------------------------------------------------------------
// Latency against throughput
// ---------------------------------------------------------------------------------------------

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
    crate::core::base::order::sort_dedup(&mut v);
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

// ---------------------------------------------------------------------------------------------
// Cost
// ---------------------------------------------------------------------------------------------

/// One GPU's cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostBar {
    /// GPU display name.
    pub gpu: String,
    /// Price of the replica (all its GPUs), US dollars per hour.
    pub usd_per_hour: f64,
    /// Concurrent requests the replica serves.
    pub concurrent_requests: u64,
    /// Dollars per hour per concurrent request: usd_per_hour / concurrent_requests
    /// (`None` when no request fits).
    pub usd_per_request_hour: Option<f64>,
    /// Dollars per million output tokens, from the performance model when known:
    /// usd_per_hour / (3600 × total tokens/s) × 10^6.
    pub usd_per_million_tokens: Option<f64>,
}

/// Which cost the bar chart shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CostMetric {
    /// $ per hour per concurrent request (the chapter's comparison).
    #[default]
    PerRequestHour,
    /// $ per million output tokens.
    PerMillionTokens,
}

/// The cost chart: one bar per GPU with a public price.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CostBars {
    /// One bar per GPU.
    pub bars: Vec<CostBar>,
    /// What the bars measure.
    pub metric: CostMetric,
}

impl CostBar {
    /// From a price, a concurrency and optionally a total throughput (output tokens/s).
    pub fn new(
        gpu: impl Into<String>,
        usd_per_hour: f64,
        concurrent_requests: u64,
        total_tokens_per_s: Option<f64>,
    ) -> CostBar {
        let price_ok = usd_per_hour.is_finite() && usd_per_hour >= 0.0;
        CostBar {
            gpu: gpu.into(),
            usd_per_hour,
            concurrent_requests,
            usd_per_request_hour: (price_ok && concurrent_requests > 0)
                .then(|| usd_per_hour / concurrent_requests as f64),
            usd_per_million_tokens: total_tokens_per_s
                .filter(|t| price_ok && t.is_finite() && *t > 0.0)
                .map(|t| usd_per_hour / (3600.0 * t) * 1e6),
        }
    }

    /// The value the chart shows for `metric`.
    pub fn value(&self, metric: CostMetric) -> Option<f64> {
        match metric {
            CostMetric::PerRequestHour => self.usd_per_request_hour,
            CostMetric::PerMillionTokens => self.usd_per_million_tokens,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::base::units::GIB;

    // Llama-2-7b fp16: KV per token = 2 × 32 layers × 32 heads × 128 × 2 B = 524,288 B.
    const KV_TOKEN: Bytes = Bytes(2 * 32 * 32 * 128 * 2);
    // 6,738,415,616 parameters × 2 B.
    const WEIGHTS: Bytes = Bytes(6_738_415_616 * 2);

    fn gpus() -> Vec<GpuBudget> {
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
    fn memory_bar_parts_add_up() {
        let b = MemoryBar::new("x", Bytes(100), Bytes(50), Bytes(20), Bytes(5), Bytes(5));
        assert_eq!(b.free, Bytes(20));
        assert_eq!(b.over, Bytes(0));
        assert!(b.fits());
        let o = MemoryBar::new("x", Bytes(100), Bytes(80), Bytes(40), Bytes(0), Bytes(0));
        assert_eq!(o.free, Bytes(0));
        assert_eq!(o.over, Bytes(20));
        assert!(!o.fits());
        assert_eq!(o.used().0 - o.over.0, o.capacity.0);
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

    fn l40s() -> RooflineGpu {
        RooflineGpu {
            gpu: "L40S".into(),
            bandwidth: BytesPerSecond::from_gbps(864.0),
            ceilings: vec![
                Ceiling {
                    dtype: Dtype::Bf16,
                    peak: FlopsPerSecond::from_tflops(362.05),
                    ridge_flop_per_byte: 362.05e12 / 864e9,
                },
                Ceiling {
                    dtype: Dtype::Fp8,
                    peak: FlopsPerSecond::from_tflops(733.0),
                    ridge_flop_per_byte: 733e12 / 864e9,
                },
            ],
        }
    }

    #[test]
    fn roofline_points_are_bounded_by_the_right_roof() {
        let w = [
            PointSpec::at_intensity("210", 210.0),
            PointSpec::at_intensity("1000", 1000.0),
            PointSpec::at_intensity("bad", f64::NAN),
        ];
        let r = roofline(vec![l40s()], Dtype::Bf16, &w);
        assert_eq!(r.points.len(), 2);
        // 210 FLOP/B × 864 GB/s = 181.44 TFLOP/s, below the ridge (419 FLOP/B).
        assert_eq!(r.points[0].bound, Bound::Memory);
        assert!((r.points[0].attainable.0 - 210.0 * 864e9).abs() < 1.0);
        assert_eq!(r.points[1].bound, Bound::Compute);
        assert_eq!(r.points[1].attainable, FlopsPerSecond::from_tflops(362.05));
        let (a, b) = r.x_decades();
        assert!(a <= -1 && b >= 4);
        let (ylo, yhi) = r.y_decades();
        assert!(10f64.powi(yhi) >= 733e12 && 10f64.powi(ylo) <= 0.1 * 864e9);
    }

    #[test]
    fn model_roofline_moves_decode_right_with_batch() {
        let model = crate::core::model::config::parse_model_text(include_str!(
            "../../../data/presets/meta-llama__Llama-2-7b-hf.json"
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        let Ok(l40s) = crate::core::hardware::catalog::Catalog::builtin().get("l40s") else {
            panic!("no l40s")
        };
        let p =
            crate::core::calc::roofline::Precisions::uniform(Dtype::Bf16, Dtype::Bf16, Dtype::Bf16);
        let run = |b: u64, d: RooflineDetail| {
            model_roofline(
                &model,
                &[l40s],
                &p,
                (b, 1024, 4096),
                1,
                Dtype::Bf16,
                d,
                |k| k.to_string(),
            )
            .unwrap_or_else(|e| panic!("{e}"))
        };
        let decode = |r: &RooflineData| {
            r.points
                .iter()
                .find(|x| x.name == "op_decode_total")
                .map(|x| (x.intensity_flop_per_byte, x.bound, x.batch1.map(|b| b.0)))
        };
        let (Some((i16, b16, trail)), Some((i64, _, _))) = (
            decode(&run(16, RooflineDetail::Totals)),
            decode(&run(64, RooflineDetail::Totals)),
        ) else {
            panic!("no decode point")
        };
        // Decode stays bandwidth-bound on L40S and climbs towards the ridge with the batch.
        assert_eq!(b16, Bound::Memory);
        assert!(i64 > i16, "{i64} vs {i16}");
        let Some(i1) = trail else {
            panic!("no batch-1 trail")
        };
        assert!(
            i1 < i16 && i1 > 0.5 && i1 < 2.0,
            "batch-1 decode ≈ 1 FLOP/B, got {i1}"
        );
        // Prefill of 1,024 tokens is compute-bound.
        let t = run(16, RooflineDetail::Totals);
        let pre = t
            .points
            .iter()
            .find(|x| x.name == "op_prefill_total")
            .map(|x| x.bound);
        assert_eq!(pre, Some(Bound::Compute));
        assert_eq!(t.points.len(), 2);
        // Operators: more points, each with its trail.
        let ops = run(16, RooflineDetail::Operators);
        assert!(ops.points.len() > 6);
        assert!(ops.points.iter().all(|x| x.batch1.is_some()));
    }

    #[test]
    fn matmul_intensity_matches_textbook() {
        // n³ / 3n² = n / 3.
        for n in [1024u64, 4096] {
            let m = Matmul { m: n, n, k: n };
            assert!((m.intensity_flop_per_byte() - n as f64 / 3.0).abs() < 1e-9);
            assert!((intensity(m.flops(), m.bytes()) - n as f64 / 3.0).abs() < 1e-9);
        }
        let h = 4096.0;
        let prefill = MATMUL_PRESETS[2].matmul.intensity_flop_per_byte();
        assert!((prefill - 1024.0 * h * h / (2.0 * 1024.0 * h + h * h)).abs() < 1e-9);
        let decode = MATMUL_PRESETS[3].matmul.intensity_flop_per_byte();
        assert!((decode - h * h / (2.0 * h + h * h)).abs() < 1e-12 && decode < 1.0);
        assert_eq!(Matmul { m: 0, n: 0, k: 0 }.intensity_flop_per_byte(), 0.0);
    }

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

    #[test]
    fn cost_per_request_follows_the_chapter() {
        // A10G $1.006/h serving 4, L40S $1.861/h serving 16.
        let a = CostBar::new("A10G", 1.006, 4, None);
        let l = CostBar::new("L40S", 1.861, 16, Some(1000.0));
        let (Some(ca), Some(cl)) = (a.usd_per_request_hour, l.usd_per_request_hour) else {
            panic!("costs missing");
        };
        assert!((ca - 1.006 / 4.0).abs() < 1e-12 && cl < ca);
        assert!((l.usd_per_million_tokens.unwrap_or(0.0) - 1.861 / 3.6).abs() < 1e-9);
        assert!(CostBar::new("x", 1.0, 0, None)
            .usd_per_request_hour
            .is_none());
    }
}
